"""Wheel: rim + tyre as one rotating mass, and the integration of its spin.

Frames: the wheel rolls about its axle (the chassis y axis before steering); positive spin
``omega`` rolls the vehicle forward (+x).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .params import freeze_arrays, param, validate_fields


@dataclass(frozen=True)
class WheelParams:
    """Per-wheel rim/tyre data; every field is an array of shape ``(n_wheels,)``."""

    radius: np.ndarray = param(unit="m", lo=0.05, hi=3.0, doc="centre to tread")
    width: np.ndarray = param(unit="m", lo=0.01, hi=2.0, doc="full tyre width (drawing only)")
    mass: np.ndarray = param(unit="kg", lo=0.0, hi=5000.0, lo_open=True,
                             doc="wheel + tyre mass")
    moi: np.ndarray = param(unit="kg m^2", lo=0.0, hi=1e4, lo_open=True,
                            doc="inertia about the axle (default 0.5*mass*radius^2)")
    damping_rate: np.ndarray = param(unit="N m s/rad", lo=0.0, hi=1e3, lo_open=True,
                                     doc="bearing damping torque per rad/s (0.25..2 typical)")
    max_brake_torque: np.ndarray = param(unit="N m", lo=0.0, hi=1e6,
                                         doc="brake torque at full pedal")
    max_handbrake_torque: np.ndarray = param(unit="N m", lo=0.0, hi=1e6,
                                             doc="handbrake torque at full lever (0: no handbrake)")
    max_steer: np.ndarray = param(unit="rad", lo=0.0, hi=1.6,
                                  doc="largest steer angle magnitude at this wheel")
    toe: np.ndarray = param(unit="rad", lo=-0.2, hi=0.2, doc="steer angle with no steer input")

    def __post_init__(self):
        freeze_arrays(self)

    def validate(self, prefix: str = "wheel.", where: str = "") -> None:
        """Raise VehicleConfigError naming the first field out of range."""
        validate_fields(self, prefix, where)


def brake_torque(p: WheelParams, brake: np.ndarray, handbrake: np.ndarray) -> np.ndarray:
    """Brake torque magnitude (N m) from pedal and lever in [0, 1]; shape ``(n_vehicles, n_wheels)``."""
    return brake * p.max_brake_torque + handbrake * p.max_handbrake_torque


def integrate_spin(p: WheelParams, omega: np.ndarray, drive_torque: np.ndarray,
                   road_torque: np.ndarray, brake: np.ndarray, dt: float) -> np.ndarray:
    """Advance wheel spin by one (sub)step.

    Drive and road torque are integrated explicitly, bearing damping implicitly (unconditionally
    stable), and the brake last as a clamp: it removes at most ``dt * brake / moi`` of spin and
    stops the wheel, but never spins it backwards.

    Args:
        p: wheel parameters.
        omega: spin (rad/s), ``(n_vehicles, n_wheels)``.
        drive_torque: torque from the drivetrain (N m).
        road_torque: torque of the tyre force about the axle (N m), i.e. ``-F_long * radius``.
        brake: brake torque magnitude (N m), >= 0.
        dt: step (s).

    Returns:
        New spin (rad/s).
    """
    free = (omega + dt * (drive_torque + road_torque) / p.moi) / (1.0 + dt * p.damping_rate / p.moi)
    return apply_brake(free, dt * brake / p.moi)


def apply_brake(omega: np.ndarray, max_change: np.ndarray) -> np.ndarray:
    """Reduce ``|omega|`` by at most ``max_change`` (rad/s) without crossing zero."""
    return np.where(np.abs(omega) <= max_change, 0.0, omega - np.sign(omega) * max_change)
