"""Packing :class:`VehicleParams` into the records the compiled update reads by name.

A parameter is declared once, as a dataclass field of its part (``wheel.py``, ``suspension.py``,
``tire.py``, ...) with :func:`~traction.vehicle_model.params.param`; ``packed=`` there puts it into
the packed records, which the compiled code reads as ``pk.wheel[w].spring_strength`` or
``pk.vehicle[0].peak_torque``. The records' numpy dtypes (:func:`wheel_dtype`,
:func:`vehicle_dtype`) are generated from those declarations, so adding a parameter the update
reads is one line: the field.

What the update reads but no one declares (quantities derived from several parameters once per
vehicle type, so that the update does not recompute them every substep) is listed in
:data:`DERIVED_WHEEL` and :data:`DERIVED_VEHICLE`, each with the physics it serves.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from . import tire, tire_custom
from .clutch import ClutchParams
from .contact import ROTATION_SHARE
from .differential import DifferentialParams
from .engine import EngineParams
from .footprint import ContactParams
from .gearbox import GearboxParams
from .layout import DIFF_TYPES, DRIVES, Packed
from .steering import SteeringParams
from .suspension import SuspensionParams
from .tire import MODELS, TireLoadFilter, TireParams
from .tire_arcade import REFERENCE_SPEED
from .tire_curve import zero_slopes
from .wheel import WheelParams

#: values per wheel of each per-wheel shape (``param(shape=...)``)
_WHEEL_WIDTHS = {"wheel": 1, "wheel3": 3, "wheel4": 4, "table": 6}


class _Entry(NamedTuple):
    name: str               # the record field's name
    width: int              # values (1: a scalar field, else a subarray)
    value: Callable         # VehicleParams -> (n_wheels,) / (n_wheels, width), or a number


def _declared(parts, per_wheel: bool) -> list[_Entry]:
    """The ``packed`` fields of the parts' dataclasses (``(attribute of VehicleParams, class)``)."""
    entries = []
    for attribute, cls in parts:
        for f in dataclasses.fields(cls):
            packed = f.metadata.get("packed")
            if not packed or (f.metadata["shape"] in _WHEEL_WIDTHS) != per_wheel:
                continue
            meta, name = f.metadata, (f.name if packed is True else packed)

            def value(p, attribute=attribute, field=f.name, meta=meta):
                v = getattr(getattr(p, attribute), field)
                return meta["choices"].index(v) if meta["shape"] == "choice" else v

            width = _WHEEL_WIDTHS[meta["shape"]] if per_wheel else 1
            entries.append(_Entry(name, width, value))
    return entries


def _steering_partner(p):
    return p.steering.partner if p.steering.partner else np.full(p.n_wheels, -1)


def _static_coefficient(p):
    ti = p.tires
    return np.where(ti.uses("physx"), ti.friction_vs_slip[:, 0, 1],
                    np.where(ti.uses("custom"), 1.0, tire.peak_coefficient(ti)))


def _tread_stiffness(p):
    ti = p.tires
    return np.column_stack([ti.tread_stiffness_long, ti.tread_stiffness_lat])


#: Per-wheel quantities derived from several parameters (order: as they are first needed).
DERIVED_WHEEL = (
    # where the suspension ray starts: the top of the travel plus the radius (suspension.py)
    _Entry("ray_start", 3, lambda p: p.suspension.ray_start(p.wheels.radius)),
    # the other wheel of the axle for Ackermann steering, -1 if none
    _Entry("steer_partner", 1, _steering_partner),
    # the wheel's drivetrain group (its column of ``groups``) and its base torque share
    _Entry("group", 1, lambda p: np.argmax(p.groups, axis=1)),
    _Entry("base_split", 1, lambda p: p.base_split),
    # the Magic Formula's peak slips (long, lat), found once per vehicle type
    _Entry("mf_peak_long", 1, lambda p: p.tires.mf_peak_slips[0]),
    _Entry("mf_peak_lat", 1, lambda p: p.tires.mf_peak_slips[1]),
    # the friction the tyre force is capped at, per unit of the slip-dependent friction (PhysX:
    # the table is the friction already), and its static value (tire_models.hold_at_cap)
    _Entry("static_coef", 1, _static_coefficient),
    _Entry("cap_coef", 1, lambda p: np.where(p.tires.uses("physx"), 1.0,
                                             tire.peak_coefficient(p.tires))),
    # the registered custom tyre's index in this process's registry, -1 if none
    _Entry("custom_index", 1, lambda p: np.full(p.n_wheels, tire_custom.index_of(p.custom_tire)
                                                if p.custom_tire is not None else -1)),
    # the useful mass at the contact patch (contact.inverse_useful_mass): 1 / m_s plus the
    # chassis rotation's share, ROTATION_SHARE / (m_s / m x I) per axis
    _Entry("inv_sprung_mass", 1, lambda p: 1.0 / p.suspension.sprung_mass),
    _Entry("turn_coef", 3, lambda p: ROTATION_SHARE / (
        (p.suspension.sprung_mass / p.chassis.mass)[:, None]
        * np.asarray(p.chassis.inertia)[None, :])),
    # the tread (tire_models.prepare): spring c = tread_stiff g, damper d = tread_damp sqrt(g)
    # with tread_stiff = k m_s and tread_damp = 2 zeta m_s sqrt(k) (long, lat)
    _Entry("tread_stiff", 2, lambda p: _tread_stiffness(p) * p.suspension.sprung_mass[:, None]),
    _Entry("tread_damp", 2, lambda p: 2.0 * p.tires.tread_damping[:, None]
           * p.suspension.sprung_mass[:, None] * np.sqrt(_tread_stiffness(p))),
    # the curve tyres' slope at zero slip (long, lat)
    _Entry("curve_slope", 2, lambda p: np.array([zero_slopes(c) for c in p.curve_sets])[
        p.tires.curve_set.astype(int)]),
    # the arcade and custom tyres' smallest gain per unit speed (tire_models.prepare)
    _Entry("gain_floor", 1, lambda p: np.where(p.tires.uses("arcade") | p.tires.uses("custom"),
                                               1.0 / REFERENCE_SPEED, 0.0)),
)

#: Per-vehicle quantities derived from the parameters (codes and counts).
DERIVED_VEHICLE = (
    _Entry("n_groups", 1, lambda p: p.groups.shape[1]),
    _Entry("limited_slip", 1, lambda p: p.differential.kind == "limited_slip"),
    _Entry("tank_special", 1, lambda p: p.differential.tank_mode == "special"),
    _Entry("four_wheels", 4, lambda p: p.differential.four_wheels),   # FL, FR, RL, RR
    _Entry("n_forward", 1, lambda p: p.gearbox.n_forward),
    _Entry("clutch_implicit", 1, lambda p: p.clutch.accuracy == "best_possible"),
    _Entry("has_custom", 1, lambda p: bool(p.tires.uses("custom").any())),
    _Entry("contact_rays", 1, lambda p: p.contact.n_rays),     # 1: one ray per wheel
)


def _vehicle_parts():
    from .vehicle import SimulationParams, TireForceScaling  # vehicle.py imports this module
    return (("differential", DifferentialParams), ("engine", EngineParams),
            ("gearbox", GearboxParams), ("clutch", ClutchParams), ("steering", SteeringParams),
            ("tire_load_filter", TireLoadFilter), ("simulation", SimulationParams),
            ("tire_force_scaling", TireForceScaling), ("contact", ContactParams))


_WHEEL_PARTS = (("wheels", WheelParams), ("suspension", SuspensionParams), ("tires", TireParams),
                ("steering", SteeringParams))


def _dtype(entries) -> np.dtype:
    names = [e.name for e in entries]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise TypeError(f"packed parameter names declared twice: {twice}")
    return np.dtype([(e.name, "f8") if e.width == 1 else (e.name, "f8", (e.width,))
                     for e in entries])


@functools.cache
def _wheel_entries() -> tuple[_Entry, ...]:
    return tuple(_declared(_WHEEL_PARTS, True)) + tuple(DERIVED_WHEEL)


@functools.cache
def _vehicle_entries() -> tuple[_Entry, ...]:
    return tuple(_declared(_vehicle_parts(), False)) + tuple(DERIVED_VEHICLE)


@functools.cache
def wheel_dtype() -> np.dtype:
    """The per-wheel parameter record: one float (or float subarray) field per packed field."""
    return _dtype(_wheel_entries())


@functools.cache
def vehicle_dtype() -> np.dtype:
    """The per-vehicle parameter record."""
    return _dtype(_vehicle_entries())


def _fill(entries, out: np.ndarray, p, n: int | None) -> None:
    for e in entries:
        v = np.asarray(e.value(p), dtype=float)
        out[e.name] = v.reshape(n, e.width) if n is not None and e.width > 1 else v


def _curves(sets) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    families, index, points = [], np.zeros((len(sets), 2, 2), dtype=np.int64), []
    n_points = 0
    for k, cs in enumerate(sets):
        for j, (values, curves) in enumerate(((cs.long_slip_angles, cs.long),
                                              (cs.lat_slip_ratios, cs.lat))):
            index[k, j] = (len(families), len(curves))
            for value, curve in zip(values, curves, strict=True):
                families.append((value, n_points, len(curve)))
                points.append(np.asarray(curve, dtype=float))
                n_points += len(curve)
    return (np.array(families, dtype=float).reshape(-1, 3), index,
            np.concatenate(points).reshape(-1, 2))


def records(p) -> tuple[np.ndarray, np.ndarray]:
    """A vehicle type's parameter records: ``(n_wheels,)`` per wheel, ``(1,)`` per vehicle (what
    :func:`pack` packs beside the arrays they index; alone, for a vehicle that differs from
    another in values only, e.g. a randomised draw: ``pk._replace(wheel=..., vehicle=...)``)."""
    wheels = np.zeros(p.n_wheels, dtype=wheel_dtype())
    _fill(_wheel_entries(), wheels, p, p.n_wheels)
    vehicle = np.zeros(1, dtype=vehicle_dtype())
    _fill(_vehicle_entries(), vehicle, p, None)
    return wheels, vehicle


def pack(p) -> Packed:
    """The :class:`~traction.vehicle_model.layout.Packed` arrays of a vehicle type."""
    wheels, vehicle = records(p)
    families, index, points = _curves(p.curve_sets)
    bars = np.array([(a, b, k) for (a, b), k in zip(p.anti_roll.pairs, p.anti_roll.stiffness,
                                                    strict=True)], dtype=float).reshape(-1, 3)
    gb = p.gearbox
    packed = Packed(wheels, vehicle, np.array(p.engine.torque_curve, float),
                    gb.ratios().astype(float), np.array(gb.up_ratios, float),
                    np.array(gb.down_ratios, float), bars, families, index, points)
    for arr in packed:
        arr.setflags(write=False)
    return packed


#: what vehicles updated in one batch share (:func:`stack`): everything but the records
SHARED = Packed._fields[2:]


def stack(packs) -> Packed:
    """The parameters of a batch's vehicles for
    :func:`~traction.vehicle_model.update.step_batch_with`: the records of each (``wheel``
    ``(len(packs), n_wheels)``, ``vehicle`` ``(len(packs),)``: writable copies, one row per
    vehicle) and the arrays they share (the engine's torque curve, the gear ratios, the
    anti-roll bars and the tyre curves), which must be equal: vehicles of one batch may differ
    in their records' values only (e.g. randomised masses, stiffnesses and torques).

    Raises:
        ValueError: no packs, records of another dtype or wheel count, or shared arrays that
            differ (naming them).
    """
    packs = list(packs)
    if not packs:
        raise ValueError("stack: no vehicles")
    first = packs[0]
    for k, pk in enumerate(packs[1:], 1):
        if pk.wheel.dtype != first.wheel.dtype or pk.wheel.shape != first.wheel.shape:
            raise ValueError(f"stack: vehicle {k} has {pk.wheel.shape[0]} wheels of other "
                             f"records than vehicle 0's {first.wheel.shape[0]}")
        differ = [name for name in SHARED if getattr(pk, name) is not getattr(first, name)
                  and not np.array_equal(getattr(pk, name), getattr(first, name))]
        if differ:
            raise ValueError(f"stack: vehicle {k}'s {', '.join(differ)} differ from vehicle "
                             "0's; vehicles of one batch may differ in their records only")
    return Packed(np.stack([pk.wheel for pk in packs]),
                  np.concatenate([pk.vehicle for pk in packs]),
                  *(getattr(first, name) for name in SHARED))


# the codes the compiled update compares with
assert MODELS == ("physx", "arcade", "curve", "magic_formula", "custom")
assert DifferentialParams.__dataclass_fields__["type"].metadata["choices"] == DIFF_TYPES
assert DifferentialParams.__dataclass_fields__["drive"].metadata["choices"] == DRIVES
