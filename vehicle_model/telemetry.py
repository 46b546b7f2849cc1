"""Telemetry: ring buffers of the PhysX telemetry channels, as arrays, with a CSV writer.

Per wheel: jounce, suspension force, tyre load, normalised load, wheel omega, friction,
longitudinal slip, normalised longitudinal force, lateral slip, normalised lateral force,
normalised aligning moment. Per vehicle: engine revs, engine drive torque, clutch slip, throttle,
brake, handbrake and steer commands, gear ratio. Recording is optional and costs one copy per
sample; nothing is recorded unless :meth:`Telemetry.record` is called.

A sample holds the outputs of one update as :class:`~traction.vehicle_model.vehicle.VehicleOutputs`
defines them: forces, moments, engine drive torque and clutch slip are means over the update's
wheel substeps, slips and friction the last substep's, the rest end-of-update values. Clutch slip
is engine spin minus gear ratio x wheel spin (PhysX's graph plots the opposite sign). A sample's
time is the start of the step the update advanced (its spins are those at the step's end).
Samples stay in time order between resets; MuJoCo's own reset of a diverged world restarts its
time at 0 without one, and the samples before it are kept (they show the divergence).

Units (:data:`UNITS`): jounce m (positive compressed); suspension force N (the whole force along
the ground normal, sprung weight share plus spring, damper and anti-roll bars: m_s g at rest);
tyre load N (after the load filter, which caps it at a multiple of the rest load: what the tyre
model used); normalised tyre load - (suspension force / rest load, unfiltered, so it can exceed
``tire_load`` / rest load); wheel omega rad/s; friction - ; long slip - ; lat slip rad; the
normalised forces - (force / tyre load); normalised aligning moment m (moment / tyre load);
engine revs rad/s (not rev/min); engine drive torque N m; clutch slip rad/s; the controls -
(throttle, brake, handbrake in [0, 1], steer in [-1, 1]); gear ratio - (0 in neutral).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from .params import check_number
from .vehicle import Commands, VehicleOutputs, VehicleState

WHEEL_CHANNELS = ("jounce", "suspension_force", "tire_load", "normalised_tire_load", "wheel_omega",
                  "tire_friction", "long_slip", "norm_long_force", "lat_slip", "norm_lat_force",
                  "norm_aligning_moment")
VEHICLE_CHANNELS = ("engine_revs", "engine_drive_torque", "clutch_slip", "accel_control",
                    "brake_control", "handbrake_control", "steer_control", "gear_ratio")
#: unit of every channel (and of ``time``); ``-`` = dimensionless
UNITS = {"time": "s", "jounce": "m", "suspension_force": "N", "tire_load": "N",
         "normalised_tire_load": "-", "wheel_omega": "rad/s", "tire_friction": "-",
         "long_slip": "-", "norm_long_force": "-", "lat_slip": "rad", "norm_lat_force": "-",
         "norm_aligning_moment": "m", "engine_revs": "rad/s", "engine_drive_torque": "N m",
         "clutch_slip": "rad/s", "accel_control": "-", "brake_control": "-",
         "handbrake_control": "-", "steer_control": "-", "gear_ratio": "-"}


class Telemetry:
    """Last ``capacity`` samples of every channel for a batch of vehicles.

    Args:
        n_vehicles, n_wheels: the batch's shape.
        capacity: samples kept (the oldest are overwritten).
        wheel_names: the CSV's wheel column suffixes (``w0``, ``w1``, ... if None);
            ``VehicleSim`` gives its vehicle's wheel names.

    Attributes:
        time: ``(capacity,)`` sample times (s).
        wheel: ``(capacity, n_vehicles, n_wheels, 11)`` wheel channels.
        vehicle: ``(capacity, n_vehicles, 8)`` vehicle channels.
    """

    def __init__(self, n_vehicles: int, n_wheels: int, capacity: int = 256,
                 wheel_names: tuple[str, ...] | None = None):
        check_number("n_vehicles", n_vehicles, 1, integer=True)
        check_number("n_wheels", n_wheels, 1, integer=True)
        self.capacity = check_number("telemetry capacity", capacity, 1, integer=True)
        self.wheel_names = _wheel_names(wheel_names, n_wheels)
        per_sample = 1 + n_vehicles * (n_wheels * len(WHEEL_CHANNELS) + len(VEHICLE_CHANNELS))
        try:
            self.time = np.zeros(capacity)
            self.wheel = np.zeros((capacity, n_vehicles, n_wheels, len(WHEEL_CHANNELS)))
            self.vehicle = np.zeros((capacity, n_vehicles, len(VEHICLE_CHANNELS)))
        except (MemoryError, ValueError):                  # ValueError: past numpy's sizes
            raise MemoryError(
                f"telemetry capacity = {capacity} samples of {n_vehicles} vehicle(s) x "
                f"{n_wheels} wheels needs {capacity * per_sample * 8 / 2**30:.3g} GiB "
                f"({per_sample * 8} bytes a sample), which could not be allocated; allowed: a "
                "capacity that fits in memory") from None
        self.count = 0

    def clear(self) -> None:
        """Forget every sample (a simulator's reset calls this, so samples stay in time order)."""
        self.count = 0

    def record(self, t: float, out: VehicleOutputs, state: VehicleState, cmd: Commands) -> None:
        """Store one sample (overwrites the oldest when full)."""
        i = self.count % self.capacity
        load = np.where(out.load > 0, out.load, 1.0)
        norm = np.where(out.load > 0, 1.0 / load, 0.0)
        self.time[i] = t
        self.wheel[i] = np.stack([
            out.jounce, out.spring_force, out.load, out.normalised_load, state.omega,
            out.friction, out.long_slip, out.long_force * norm, out.lat_slip,
            out.lat_force * norm, out.aligning_moment * norm], axis=-1)
        self.vehicle[i] = np.stack([
            out.engine_omega, out.engine_torque, out.clutch_slip, out.throttle,
            np.clip(cmd.brake, 0, 1), np.clip(cmd.handbrake, 0, 1), np.clip(cmd.steer, -1, 1),
            out.gear_ratio], axis=-1)
        self.count += 1

    def arrays(self) -> dict[str, np.ndarray]:
        """Samples in time order: ``{"time": (k,), "<wheel channel>": (k, n, w), "<vehicle
        channel>": (k, n)}`` for the ``k = min(count, capacity)`` stored samples."""
        k = min(self.count, self.capacity)
        order = (np.arange(k) + (self.count - k)) % self.capacity
        out = {"time": self.time[order]}
        for j, name in enumerate(WHEEL_CHANNELS):
            out[name] = self.wheel[order, :, :, j]
        for j, name in enumerate(VEHICLE_CHANNELS):
            out[name] = self.vehicle[order, :, j]
        return out

    def write_csv(self, path: str | Path, vehicle: int = 0,
                  wheel_names: tuple[str, ...] | None = None) -> Path:
        """Write one vehicle's samples as CSV (a column per channel and wheel, named by
        ``wheel_names`` or else :attr:`wheel_names`; units in :data:`UNITS`); time with 12
        significant digits, the channels with 6.

        Raises:
            ValueError: ``vehicle`` is not one of the batch, or ``wheel_names`` does not name
            every wheel once.
        """
        data = self.arrays()
        n_vehicles, n_wheels = self.wheel.shape[1:3]
        check_number("vehicle", vehicle, 0, n_vehicles - 1, integer=True)
        names = self.wheel_names if wheel_names is None else _wheel_names(wheel_names, n_wheels)
        header = ["time", *VEHICLE_CHANNELS]
        header += [f"{c}_{w}" for c in WHEEL_CHANNELS for w in names]
        path = Path(path)
        with path.open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(header)
            for s in range(len(data["time"])):
                row = [data["time"][s], *(data[c][s, vehicle] for c in VEHICLE_CHANNELS)]
                row += [data[c][s, vehicle, j] for c in WHEEL_CHANNELS for j in range(n_wheels)]
                writer.writerow([f"{row[0]:.12g}", *(f"{x:.6g}" for x in row[1:])])
        return path


def _wheel_names(names, n_wheels: int) -> tuple[str, ...]:
    """``names`` as a tuple of ``n_wheels`` distinct names (``w0``, ``w1``, ... if None)."""
    names = tuple(f"w{j}" for j in range(n_wheels)) if names is None else tuple(names)
    if len(names) != n_wheels or len(set(names)) != n_wheels:
        raise ValueError(f"wheel_names = {names}; need {n_wheels} distinct names, one per wheel")
    return names
