"""Checks of what a numpy user hands :func:`traction.vehicle_model.update.step`.

The compiled update reads records at fixed offsets and trusts shapes, dtypes and values, so
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


def column_names(record: np.dtype) -> list[str]:
    """The name of each column under a record: ``"steer"``, ``"thrust[0]"``, ``"thrust[1]"``..."""
    names = []
    for name in record.names:
        shape = record.fields[name][0].shape
        names += [f"{name}[{i}]" for i in range(shape[0])] if shape else [name]
    return names


#: kinematics fields and their shapes after the vehicle axis
KINEMATICS = (("position", (3,)), ("rotation", (3, 3)), ("com", (3,)), ("velocity", (3,)),
              ("angular_velocity", (3,)))
#: how far from unit length a ground normal may be
NORMAL_TOLERANCE = 1e-6


def kinematics_rows(ck: ChassisKinematics) -> np.ndarray:
    """``ck.records()`` after checking each field's shape ``(n_vehicles, ...)`` (ValueError naming
    the field: fields whose sizes merely added up to the row width were read shifted)."""
    arrays = [np.asarray(getattr(ck, name)) for name, _ in KINEMATICS]
    n = arrays[0].shape[0] if arrays[0].ndim else -1
    for (name, tail), a in zip(KINEMATICS, arrays, strict=True):
        if a.shape != (n, *tail):
            raise ValueError(f"vehicle update: kinematics.{name} has shape {a.shape}; expected "
                             f"(n_vehicles, {', '.join(map(str, tail))})")
    return ck.records()


def hit_rows(hits: GroundHits, n_wheels: int) -> np.ndarray:
    """``hits.records()`` after checking ``dist (n, n_wheels)``, normals broadcastable to
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
    return hits.records()


def check_rows(p: VehicleParams, s: VehicleState, cmd: Commands, kin: np.ndarray,
               hit: np.ndarray) -> None:
    """The arrays :func:`~traction.vehicle_model.update.step` passes to the compiled update:
    one number of vehicles, C-contiguous arrays of the layout's records, ``p.n_wheels`` wheels
    (ValueError naming the first that is not)."""
    arrays = (("state.wheel", s.wheel, (p.n_wheels,), "WHEEL_STATE"),
              ("state.vehicle", s.vehicle, (), "VEHICLE_STATE"),
              ("state.gears", s.gears, (), "GEAR_STATE"),
              ("commands.vehicle", cmd.vehicle, (), "VEHICLE_COMMANDS"),
              ("commands.wheel", cmd.wheel, (p.n_wheels,), "WHEEL_COMMANDS"),
              ("chassis kinematics", kin, (), "KINEMATICS"),
              ("ground hits", hit, (p.n_wheels,), "HIT"))
    counts = {name: (a.shape[0] if a.ndim else None) for name, a, _, _ in arrays}
    if len(set(counts.values())) > 1:
        raise ValueError("vehicle update: the arrays disagree on the number of vehicles: "
                         + ", ".join(f"{k} {v}" for k, v in counts.items()))
    n = len(s.wheel)
    for name, a, tail, record in arrays:
        shape = (n, *tail)
        if a.shape != shape or not a.flags.c_contiguous or a.dtype != getattr(L, record):
            got = f"records ({', '.join(a.dtype.names)})" if a.dtype.names else a.dtype
            raise ValueError(f"vehicle update: {name} must be a C-contiguous array of shape "
                             f"{shape} of layout.{record} records; got {got} {a.shape}"
                             + ("" if a.flags.c_contiguous else ", not C-contiguous"))


def check_commands(cmd: Commands) -> None:
    """ValueError naming the first non-finite command (vehicle, command); ``torque_split`` may
    be NaN (= the differential's ratios). A NaN spun the vehicle's wheels and engine to NaN
    for good, and a NaN ``target_gear`` selected reverse."""
    wheel = cmd.wheel.copy()
    split = wheel["torque_split"]                   # NaN: the differential's own (not inf)
    wheel["torque_split"] = np.where(np.isnan(split), 0.0, split)
    for where, names, given, checked in (
            ("", column_names(L.VEHICLE_COMMANDS), cmd.vehicle, cmd.vehicle),
            ("wheel ", column_names(L.WHEEL_COMMANDS), cmd.wheel, wheel)):
        bad = ~np.isfinite(L.floats(checked))
        if bad.any():
            index = tuple(np.argwhere(bad)[0])
            value = L.floats(given)[index]
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
