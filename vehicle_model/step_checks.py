"""Checks of what a numpy user hands :func:`traction.vehicle_model.update.step`.

The compiled update reads rows at fixed column offsets and trusts shapes, dtypes and values, so
the standalone step checks them first and names what is wrong (a wrong dtype otherwise compiled
the whole update again, or failed inside numba; a NaN command stayed in the vehicle's spins for
good). The environments' loop does not come through here: its arrays are its own, and its
actions are checked where they enter (``envs/actions.py``).
"""

from __future__ import annotations

import numpy as np

from . import layout as L
from .surface import FrictionTable
from .vehicle import ChassisKinematics, Commands, GroundHits, VehicleParams, VehicleState

#: per-vehicle command columns by name (``Commands``' views)
VEHICLE_COMMANDS = {L.THROTTLE: "throttle", L.BRAKE: "brake", L.HANDBRAKE: "handbrake",
                    L.STEER: "steer", L.THRUST: "thrust[0]", L.THRUST + 1: "thrust[1]",
                    L.GEAR_UP: "gear_up", L.GEAR_DOWN: "gear_down", L.TARGET_GEAR: "target_gear"}
#: per-wheel command columns by name
WHEEL_COMMANDS = {L.WHEEL_TORQUE: "wheel_torque", L.WHEEL_BRAKE: "wheel_brake",
                  L.WHEEL_STEER: "wheel_steer", L.TORQUE_SPLIT: "torque_split"}
#: kinematics fields and their shapes after the vehicle axis
KINEMATICS = (("position", (3,)), ("rotation", (3, 3)), ("com", (3,)), ("velocity", (3,)),
              ("angular_velocity", (3,)))
#: how far from unit length a ground normal may be
NORMAL_TOLERANCE = 1e-6


def kinematics_rows(ck: ChassisKinematics) -> np.ndarray:
    """``ck.rows()`` after checking each field's shape ``(n_vehicles, ...)`` (ValueError naming
    the field: fields whose sizes merely added up to the row width were read shifted)."""
    arrays = [np.asarray(getattr(ck, name)) for name, _ in KINEMATICS]
    n = arrays[0].shape[0] if arrays[0].ndim else -1
    for (name, tail), a in zip(KINEMATICS, arrays, strict=True):
        if a.shape != (n, *tail):
            raise ValueError(f"vehicle update: kinematics.{name} has shape {a.shape}; expected "
                             f"(n_vehicles, {', '.join(map(str, tail))})")
    return ck.rows()


def hit_rows(hits: GroundHits, n_wheels: int) -> np.ndarray:
    """``hits.rows()`` after checking ``dist (n, n_wheels)``, normals broadcastable to
    ``(n, n_wheels, 3)`` and of unit length where a ray hit, surfaces to ``(n, n_wheels)``."""
    dist = np.asarray(hits.dist)
    if dist.ndim != 2 or dist.shape[1] != n_wheels:
        raise ValueError(f"vehicle update: hits.dist has shape {dist.shape}; expected "
                         f"(n_vehicles, {n_wheels})")
    full = {}
    for name, tail in (("normal", (3,)), ("surface", ())):
        try:
            full[name] = np.broadcast_to(getattr(hits, name), dist.shape + tail)
        except ValueError:
            raise ValueError(f"vehicle update: hits.{name} has shape "
                             f"{np.shape(getattr(hits, name))}; expected one broadcastable to "
                             f"{dist.shape + tail}") from None
    length = np.linalg.norm(full["normal"], axis=-1)
    off = (dist >= 0) & ~(np.abs(length - 1.0) <= NORMAL_TOLERANCE)
    if off.any():
        v, w = np.argwhere(off)[0]
        raise ValueError(f"vehicle update: hits.normal of vehicle {v}, wheel {w} has length "
                         f"{length[v, w]:.9g}; allowed: unit length (normalise it)")
    return hits.rows()


def check_rows(p: VehicleParams, s: VehicleState, cmd: Commands, kin: np.ndarray,
               hit: np.ndarray) -> None:
    """The arrays :func:`~traction.vehicle_model.update.step` passes to the compiled update:
    one number of vehicles, C-contiguous, float64 (the gear state int64), ``p.n_wheels`` wheels,
    the layout's columns (ValueError naming the first that is not)."""
    arrays = (("state.wheel", s.wheel, (p.n_wheels, L.N_WHEEL_STATE), np.float64),
              ("state.vehicle", s.vehicle, (L.N_VEHICLE_STATE,), np.float64),
              ("state.gears", s.gears, (L.N_GEAR_STATE,), np.int64),
              ("commands.vehicle", cmd.vehicle, (L.N_VEHICLE_COMMANDS,), np.float64),
              ("commands.wheel", cmd.wheel, (p.n_wheels, L.N_WHEEL_COMMANDS), np.float64),
              ("chassis kinematics rows", kin, (L.N_KINEMATICS,), np.float64),
              ("ground hit rows", hit, (p.n_wheels, L.N_HIT), np.float64))
    counts = {name: (a.shape[0] if a.ndim else None) for name, a, _, _ in arrays}
    if len(set(counts.values())) > 1:
        raise ValueError("vehicle update: the arrays disagree on the number of vehicles: "
                         + ", ".join(f"{k} {v}" for k, v in counts.items()))
    n = len(s.wheel)
    for name, a, tail, dtype in arrays:
        shape = (n, *tail)
        if a.shape != shape or not a.flags.c_contiguous or a.dtype != dtype:
            raise ValueError(f"vehicle update: {name} must be a C-contiguous {np.dtype(dtype)} "
                             f"array of shape {shape}; got {a.dtype} {a.shape}"
                             + ("" if a.flags.c_contiguous else ", not C-contiguous"))


def check_commands(cmd: Commands) -> None:
    """ValueError naming the first non-finite command (vehicle, command); ``torque_split`` may
    be NaN (= the differential's ratios). A NaN spun the vehicle's wheels and engine to NaN
    for good, and a NaN ``target_gear`` selected reverse."""
    wheel = cmd.wheel.copy()
    wheel[..., L.TORQUE_SPLIT] = np.nan_to_num(wheel[..., L.TORQUE_SPLIT], nan=0.0)
    for where, names, bad in (("", VEHICLE_COMMANDS, ~np.isfinite(cmd.vehicle)),
                              ("wheel ", WHEEL_COMMANDS, ~np.isfinite(wheel))):
        if bad.any():
            index = tuple(np.argwhere(bad)[0])
            value = (cmd.vehicle if not where else cmd.wheel)[index]
            wheel_of = f", wheel {index[1]}" if where else ""
            raise ValueError(f"vehicle update: commands.{names[index[-1]]} = {value} for "
                             f"vehicle {index[0]}{wheel_of}; allowed: finite numbers")


def friction_stack(tables, p: VehicleParams, n_vehicles: int) -> np.ndarray:
    """The compiled update's ``friction`` ``(1 or n_vehicles, n_surfaces, n_tires)`` from one
    :class:`FrictionTable` or a sequence of one per vehicle, each checked (values finite and
    >= 0, a column for every wheel's tyre type); ValueError naming the table otherwise."""
    one = isinstance(tables, FrictionTable)
    tables = [tables] if one else list(tables) if isinstance(tables, (list, tuple)) else None
    if tables is None or not all(isinstance(t, FrictionTable) for t in tables) \
            or len(tables) != (1 if one else n_vehicles):
        raise ValueError(f"vehicle update: friction_table must be a FrictionTable or a list of "
                         f"{n_vehicles} (one per vehicle)")
    for i, t in enumerate(tables):
        t.check_tire_types(p.tires.tire_type, p.name if one else f"{p.name}, vehicle {i}")
    values = [t.checked_values() for t in tables]
    if len({v.shape for v in values}) > 1:
        raise ValueError("vehicle update: the friction tables have shapes "
                         f"{[v.shape for v in values]}; allowed: one shape (surfaces x tyre types)")
    return np.ascontiguousarray(np.stack(values))
