"""Vehicle definitions as TOML data files.

A file has top-level ``name``/``description``; the tables ``[chassis]``, ``[steering]``,
``[differential]``, ``[engine]``, ``[gearbox]``, ``[clutch]``, ``[simulation]``,
``[tire_load_filter]``; ``[[anti_roll_bars]]`` entries (``wheels = [a, b]``, ``stiffness``);
per-wheel defaults in ``[defaults.wheel]``, ``[defaults.suspension]``, ``[defaults.tire]``; and
one ``[[wheels]]`` entry per wheel with a ``name``, a ``position`` (wheel centre at rest, chassis
frame, m), an optional ``steer_multiplier`` and optional ``wheel``, ``suspension`` and ``tire``
sub-tables overriding the defaults. Wheels are referred to by name elsewhere. Every key is a field of the
corresponding params dataclass (see ``docs/vehicle_parameters.md``); unknown keys are errors.
Files are parsed with the standard library's ``tomllib`` (data only, no code execution).
Keys that earlier versions read and this one does not (:data:`REMOVED`) are refused with the
reason and what replaces them.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from .antiroll import AntiRollParams
from .chassis import ChassisParams, box_inertia
from .clutch import ClutchParams
from .differential import KEYS_READ, DifferentialParams
from .engine import EngineParams
from .errors import VehicleConfigError
from .footprint import ContactParams
from .gearbox import GearboxParams
from .params import check_value, range_text
from .steering import SteeringParams, find_partners
from .surface import DEFAULT_TIRES
from .suspension import SuspensionParams, compute_sprung_masses
from .tire import MODELS, TireLoadFilter, TireParams
from .tire_curve import DEFAULT as DEFAULT_CURVES
from .tire_curve import CurveSet
from .tire_custom import lookup as lookup_tire_model
from .vehicle import SimulationParams, TireForceScaling, VehicleParams
from .wheel import WheelParams

#: Built-in per-wheel defaults (PhysX defaults / Tuning Guide starting values).
WHEEL_DEFAULTS = {"width": 0.25, "mass": 20.0, "damping_rate": 0.25, "max_brake_torque": 1500.0,
                  "max_handbrake_torque": 0.0, "max_steer": 0.0, "toe": 0.0}
SUSPENSION_DEFAULTS = {"travel_direction": [0.0, 0.0, -1.0], "max_compression": 0.3,
                       "max_droop": 0.1, "spring_strength": 35000.0, "damper_rate": 4500.0,
                       "bump_stop_stiffness": 0.0, "tire_force_height": 0.0,
                       "camber_at_rest": 0.0, "camber_at_max_compression": 0.0,
                       "camber_at_max_droop": 0.0}
TIRE_DEFAULTS = {"model": "physx", "tire_type": "road", "lat_stiff_x": 2.0,
                 "lat_stiff_y": 0.3125 * 180.0 / math.pi, "long_stiff_per_unit_gravity": 1000.0,
                 "camber_stiff_per_unit_gravity": 0.1 * 180.0 / math.pi,
                 "friction_vs_slip": [[0.0, 1.0], [0.5, 1.0], [1.0, 1.0]],
                 "arcade_long_stiffness": 1.0, "arcade_lat_stiffness": 2.0, "grip": 1.0,
                 "curve_set": "default",
                 "mf_long": [12.0, 1.65, 1.0, 0.2], "mf_lat": [10.0, 1.9, 1.0, 0.1],
                 "trail": 0.03, "tread_stiffness_long": 150.0, "tread_stiffness_lat": 50.0,
                 "tread_damping": 0.7}
#: Tyre fields given by name in the file: field -> allowed names (index = stored code).
TIRE_NAMED = {"model": MODELS, "tire_type": DEFAULT_TIRES}
#: Differential keys only a limited-slip ``four_wheel`` differential reads.
LIMITED_SLIP_KEYS = ("front_bias", "rear_bias", "centre_bias")
#: ``four_wheel`` keys a locked one (each driven axle a spool) does not read: an axle's wheels
#: turn as one, so there is no bias and no left/right split.
NOT_READ_LOCKED = LIMITED_SLIP_KEYS + ("front_left_right_split", "rear_left_right_split")
#: Suspension fields derived from others when not given.
DERIVED = {"position", "sprung_mass", "force_point", "moi"}
TOP_KEYS = {"name", "description", "chassis", "simulation", "tire_load_filter",
            "defaults", "wheels", "steering", "differential", "engine", "gearbox", "clutch",
            "anti_roll_bars", "tire_curves", "tire_force_scaling", "contact"}
WHEEL_KEYS = {"name", "position", "steer_multiplier", "wheel", "suspension", "tire"}
#: Simple sections: TOML table -> params class.
SECTIONS = {"engine": EngineParams, "gearbox": GearboxParams, "clutch": ClutchParams,
            "tire_load_filter": TireLoadFilter,
            "simulation": SimulationParams, "tire_force_scaling": TireForceScaling,
            "contact": ContactParams}


_SLIPS_NOW = ("removed: the slips are the physical ones at every speed, over max(|v|, |omega r|), "
              "and at rest the tyre's tread holds the patch (docs/vehicle_parameters.md); "
              "delete the key")
#: Keys of earlier versions, by table (``""``: top level): why each is refused.
REMOVED = {
    "": {"sticky": "removed: every tyre's tread spring holds a parked vehicle up to friction x "
                   "load (tune it with tire.tread_stiffness_long, tread_stiffness_lat, "
                   "tread_damping); delete the table"},
    "simulation": {"min_long_slip_denominator": _SLIPS_NOW, "min_lat_slip_denominator": _SLIPS_NOW},
    "tire": {"min_slip_speed": _SLIPS_NOW,
             "clamps": "removed: the tyre's step is implicit in the slips and never carries a "
                       "slip past zero (the friction clamps' job) for any tyre model "
                       "(vehicle_model/tire_models.py); delete the key"},
}
_SECTION_OF = {TireParams: "tire", SimulationParams: "simulation"}


def _refuse_removed(table: dict, section: str, path: str, where: str) -> None:
    """VehicleConfigError for the first key of ``table`` in :data:`REMOVED` under ``section``
    (``path``: the table's name in the message; top level when empty)."""
    for key, why in REMOVED.get(section, {}).items():
        if key in table:
            raise VehicleConfigError(f"{where}: {f'{path}.{key}' if path else f'[{key}]'}: {why}")


def _fields(cls) -> dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(cls) if "lo" in f.metadata}


def _convert(value: Any, meta: dict, path: str, where: str) -> Any:
    """Type-check one TOML value against its field shape and range."""
    shape = meta["shape"]
    if shape == "choice":
        check_value(path, value, meta, where)
        return value
    want = {"wheel3": (3,), "vec3": (3,), "table": (3, 2), "wheel4": (4,)}.get(shape, ())
    try:
        if isinstance(value, bool) or isinstance(value, str):
            raise TypeError
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        arr = None
    if arr is not None and shape in ("list", "curve"):
        n = len(arr) if arr.ndim else -1                # a scalar is not a list
        want = (n,) if shape == "list" else (n, 2)
    if arr is None or arr.shape != want or (shape in ("list", "curve") and not len(arr)):
        kind = {"list": "a list of numbers", "curve": "a list of [x, y] pairs"}.get(
            shape, "a number" if not want else f"an array of shape {want}")
        raise VehicleConfigError(f"{where}: {path} = {value!r} must be {kind}; allowed "
                                 f"{range_text(meta)} {meta['unit']}".rstrip())
    check_value(path, arr, meta, where)                 # ranges; whole numbers for integer fields
    return arr if want else float(arr)


def _read(table: Any, cls, path: str, where: str, skip=()) -> dict[str, Any]:
    """Read a TOML table into checked values for the params fields of ``cls``."""
    if not isinstance(table, dict):
        raise VehicleConfigError(f"{where}: {path} must be a table")
    fields = _fields(cls)
    if cls in _SECTION_OF:
        _refuse_removed(table, _SECTION_OF[cls], path, where)
    out = {}
    for key, value in table.items():
        if key not in fields or key in skip:
            allowed = ", ".join(k for k in fields if k not in skip)
            raise VehicleConfigError(f"{where}: unknown key {path}.{key}; allowed: {allowed}")
        out[key] = _convert(value, fields[key].metadata, f"{path}.{key}", where)
        if fields[key].type == "int":                  # counts (checked whole numbers above)
            out[key] = int(out[key])
    return out


def _names_to_codes(table: Any, named: dict, path: str, where: str) -> Any:
    """Replace names (e.g. ``model = "curve"``) by their index; numbers pass through (a curve
    set's must index one: a tyre type's may index a friction table's own types)."""
    if not isinstance(table, dict):
        return table
    out = dict(table)
    for key, allowed in named.items():
        value = out.get(key)
        if isinstance(value, str):
            if value not in allowed:
                raise VehicleConfigError(f"{where}: {path}.{key} = {value!r}; allowed: "
                                         f"{', '.join(allowed)}")
            out[key] = allowed.index(value)
        elif key == "curve_set" and isinstance(value, int) and not 0 <= value < len(allowed):
            raise VehicleConfigError(f"{where}: {path}.{key} = {value!r} is not a curve set; "
                                     "allowed: " + ", ".join(f"{n!r} ({i})"
                                                             for i, n in enumerate(allowed)))
    out.pop("custom", None)
    return out


def _per_wheel(wheels: list, defaults: dict, builtin: dict, part: str, cls, where: str,
               named: dict | None = None):
    """Merge built-in defaults, [defaults.<part>] and each wheel's <part> table into columns."""
    named = named or {}
    builtin = _names_to_codes(builtin, named, f"defaults.{part}", where)
    base = {k: _convert(v, _fields(cls)[k].metadata, f"defaults.{part}.{k}", where)
            for k, v in builtin.items()}
    table = _names_to_codes(defaults.get(part, {}), named, f"defaults.{part}", where)
    base.update(_read(table, cls, f"defaults.{part}", where))
    rows = []
    for i, w in enumerate(wheels):
        row = dict(base)
        table = _names_to_codes(w.get(part, {}), named, f"wheels[{i}].{part}", where)
        row.update(_read(table, cls, f"wheels[{i}].{part}", where))
        rows.append(row)
    return rows


def _curve_sets(tables: Any, where: str) -> tuple[CurveSet, ...]:
    """``[tire_curves.NAME]`` tables: long_slip_angles, long, lat_slip_ratios, lat."""
    if not isinstance(tables, dict):
        raise VehicleConfigError(f"{where}: tire_curves must hold [tire_curves.NAME] tables")
    sets = [DEFAULT_CURVES]
    keys = {"long_slip_angles", "long", "lat_slip_ratios", "lat"}
    for name, t in tables.items():
        if name == DEFAULT_CURVES.name:
            raise VehicleConfigError(f"{where}: tire_curves.{name}: the name of the shipped set; "
                                     "give yours another name")
        if not isinstance(t, dict) or set(t) != keys:
            raise VehicleConfigError(f"{where}: tire_curves.{name} needs exactly the keys "
                                     f"{', '.join(sorted(keys))}")
        try:
            cs = CurveSet(name, tuple(float(v) for v in t["long_slip_angles"]),
                          tuple(np.array(c, dtype=float) for c in t["long"]),
                          tuple(float(v) for v in t["lat_slip_ratios"]),
                          tuple(np.array(c, dtype=float) for c in t["lat"]))
        except (TypeError, ValueError):
            raise VehicleConfigError(f"{where}: tire_curves.{name}: curves are lists of "
                                     "[x, y] number pairs") from None
        cs.validate(where)
        sets.append(cs)
    return tuple(sets)


def _custom_tire(wheels: list, defaults: dict, where: str):
    """The registered custom tyre function named by ``tire.custom`` (one per vehicle)."""
    given = [t["custom"] for t in [defaults.get("tire", {})] + [w.get("tire", {}) for w in wheels]
             if isinstance(t, dict) and "custom" in t]
    for name in given:
        if not isinstance(name, str):
            raise VehicleConfigError(f"{where}: tire.custom = {name!r}; allowed: the name of a "
                                     "registered tyre function (a string)")
    names = set(given)
    if len(names) > 1:
        raise VehicleConfigError(f"{where}: tire.custom names {sorted(names)}; a vehicle uses one "
                                 "custom tyre function")
    return lookup_tire_model(names.pop(), where) if names else None


def _column(rows: list[dict], key: str, part: str, where: str) -> np.ndarray:
    for i, row in enumerate(rows):
        if key not in row:
            raise VehicleConfigError(f"{where}: wheels[{i}].{part}.{key} is required")
    return np.array([row[key] for row in rows])


def parse_vehicle(data: dict, where: str = "<dict>") -> VehicleParams:
    """Build and validate :class:`VehicleParams` from a parsed TOML document."""
    _refuse_removed(data, "", "", where)
    unknown = set(data) - TOP_KEYS
    if unknown:
        raise VehicleConfigError(f"{where}: unknown top-level key(s) {sorted(unknown)}; "
                                 f"allowed: {', '.join(sorted(TOP_KEYS))}")
    wheels = data.get("wheels")
    if not isinstance(wheels, list) or len(wheels) < 3:
        n = len(wheels) if isinstance(wheels, list) else 0
        raise VehicleConfigError(f"{where}: wheels: a vehicle needs at least 3 [[wheels]], got {n}")
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise VehicleConfigError(f"{where}: defaults must be a table ([defaults.wheel], "
                                 "[defaults.suspension], [defaults.tire])")
    unknown = sorted(set(defaults) - {"wheel", "suspension", "tire"})
    if unknown:
        raise VehicleConfigError(f"{where}: unknown key(s) {', '.join(f'defaults.{k}' for k in unknown)}"
                                 "; [defaults] may only hold wheel, suspension, tire")
    names, positions = [], []
    for i, w in enumerate(wheels):
        if not isinstance(w, dict):
            raise VehicleConfigError(f"{where}: wheels[{i}] must be a table")
        extra = set(w) - WHEEL_KEYS
        if extra:
            raise VehicleConfigError(f"{where}: unknown key(s) wheels[{i}].{sorted(extra)}; "
                                     f"allowed: {', '.join(sorted(WHEEL_KEYS))}")
        name = str(w.get("name", f"wheel{i}"))
        if name in names:
            raise VehicleConfigError(f"{where}: wheels[{i}].name = {name!r} is already the name of "
                                     f"wheels[{names.index(name)}]; wheels are referred to by name")
        names.append(name)
        meta = _fields(SuspensionParams)["position"].metadata
        positions.append(_convert(w.get("position"), meta, f"wheels[{i}].position", where))
    positions = np.array(positions)

    ch = _read(data.get("chassis", {}), ChassisParams, "chassis", where)
    for key in ("mass", "com", "body_size", "body_centre"):
        if key not in ch:
            raise VehicleConfigError(f"{where}: chassis.{key} is required")
    ch.setdefault("inertia", box_inertia(ch["mass"], ch["body_size"]))
    chassis = ChassisParams(**ch)

    wrows = _per_wheel(wheels, defaults, WHEEL_DEFAULTS, "wheel", WheelParams, where)
    wcols = {k: _column(wrows, k, "wheel", where) for k in _fields(WheelParams) if k != "moi"}
    moi = [row.get("moi", 0.5 * row["mass"] * row["radius"] ** 2) for row in wrows]
    wheel_params = WheelParams(moi=np.array(moi), **wcols)

    srows = _per_wheel(wheels, defaults, SUSPENSION_DEFAULTS, "suspension", SuspensionParams,
                       where)
    for i, row in enumerate(srows):
        if "position" in wheels[i].get("suspension", {}):
            raise VehicleConfigError(f"{where}: wheels[{i}].suspension.position: give the "
                                     f"wheel centre as wheels[{i}].position")
        row["position"] = positions[i]
        row.setdefault("force_point", positions[i])
    if any("sprung_mass" not in row for row in srows):
        try:
            masses = compute_sprung_masses(positions, chassis.com, chassis.mass)
        except VehicleConfigError as e:
            raise VehicleConfigError(f"{where}: {e}") from None
        for row, m in zip(srows, masses, strict=True):
            row.setdefault("sprung_mass", m)
    scols = {k: _column(srows, k, "suspension", where) for k in _fields(SuspensionParams)}
    curve_sets = _curve_sets(data.get("tire_curves", {}), where)
    custom = _custom_tire(wheels, defaults, where)
    named = {**TIRE_NAMED, "curve_set": tuple(c.name for c in curve_sets)}
    trows = _per_wheel(wheels, defaults, TIRE_DEFAULTS, "tire", TireParams, where, named)
    tcols = {k: _column(trows, k, "tire", where) for k in _fields(TireParams)}

    sections = {key: cls(**_read(data.get(key, {}), cls, key, where))
                for key, cls in SECTIONS.items()}
    params = VehicleParams(
        name=str(data.get("name", Path(where).stem)), wheel_names=tuple(names), chassis=chassis,
        wheels=wheel_params, suspension=SuspensionParams(**scols), tires=TireParams(**tcols),
        steering=_steering(data, wheels, positions, where),
        differential=_differential(data.get("differential", {}), names, where),
        anti_roll=_anti_roll(data.get("anti_roll_bars", []), names, where),
        curve_sets=curve_sets, custom_tire=custom, **sections)
    params.validate(where)
    _check_mass_balance(params, where)
    _check_mass_plausible(params, where)
    return params


#: Mean density of the chassis box (chassis.mass / body volume, kg/m^3) a vehicle may have: the
#: presets' are 250-650; below 5 the mass is likely in tonnes (a 1.5 t car given as 1.5 kg:
#: 0.25 kg/m^3, lighter than air), above 20 000 in grams (denser than lead).
DENSITY_RANGE = (5.0, 20_000.0)


def _check_mass_plausible(p: VehicleParams, where: str) -> None:
    """A mass that cannot belong to the body (a unit slip) is an error naming the fields: the
    box's mean density outside :data:`DENSITY_RANGE`, or a moment of inertia whose radius of
    gyration ``sqrt(I / m)`` exceeds the farthest point of the body and wheels from the CoM (no
    distribution of the mass inside the vehicle gives it: an inertia for another mass)."""
    ch = p.chassis
    density = ch.mass / float(np.prod(ch.body_size))
    lo, hi = DENSITY_RANGE
    if not lo <= density <= hi:
        hint = "a mass in tonnes? give kg" if density < lo else "a mass in grams? give kg"
        raise VehicleConfigError(
            f"{where}: chassis.mass = {ch.mass:g} kg in a body of {ch.body_size[0]:g} x "
            f"{ch.body_size[1]:g} x {ch.body_size[2]:g} m (chassis.body_size) is {density:.3g} "
            f"kg/m^3 on average; allowed {lo:g} to {hi:g} kg/m^3 ({hint})")
    corners = ch.body_centre + ch.body_size / 2 * np.array(
        [(sx, sy, sz) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    reach = float(np.max(np.linalg.norm(np.vstack([corners, p.suspension.position]) - ch.com,
                                        axis=1))) + float(np.max(p.wheels.radius))
    gyration = np.sqrt(ch.inertia / ch.mass)
    for axis, k, inertia in zip("xyz", gyration, ch.inertia, strict=True):
        if k > reach:
            raise VehicleConfigError(
                f"{where}: chassis.inertia {axis} = {inertia:g} kg m^2 with chassis.mass = "
                f"{ch.mass:g} kg puts the mass {k:.3g} m from the CoM on average (sqrt(I / m)), "
                f"beyond the vehicle's farthest point, {reach:.3g} m away: one of them is in "
                "other units (omit inertia to take the box's)")


def _check_mass_balance(p: VehicleParams, where: str) -> None:
    """In a file, sprung masses must add up to the chassis mass (PhysX's requirement; a
    mismatch there is a typo). A vehicle changed in Python may differ on purpose: a chassis
    heavier than its sprung masses carries a payload its struts' preload was not tuned for."""
    total = float(np.sum(p.suspension.sprung_mass))
    if abs(total - p.chassis.mass) > 1e-3 * p.chassis.mass:
        raise VehicleConfigError(
            f"{where}: suspension.sprung_mass sums to {total:g} kg but chassis.mass = "
            f"{p.chassis.mass:g} kg; they must match (omit sprung_mass to compute it)")


def _wheel_index(name: Any, names: list[str], path: str, where: str) -> int:
    if name not in names:
        raise VehicleConfigError(f"{where}: {path} = {name!r} is not a wheel; wheels: "
                                 f"{', '.join(names)}")
    return names.index(name)


def _steering(data: dict, wheels: list, positions: np.ndarray, where: str) -> SteeringParams:
    meta = _fields(SteeringParams)["multiplier"].metadata
    mult = np.array([_convert(w.get("steer_multiplier", 0.0), meta,
                              f"wheels[{i}].steer_multiplier", where) for i, w in enumerate(wheels)])
    values = _read(data.get("steering", {}), SteeringParams, "steering", where, skip=("multiplier",))
    if "reference_x" not in values:
        fixed = positions[mult == 0.0, 0]
        values["reference_x"] = float(fixed.mean()) if fixed.size else 0.0
    return SteeringParams(multiplier=mult, partner=find_partners(positions), **values)


def _differential(table: Any, names: list[str], where: str) -> DifferentialParams:
    if not isinstance(table, dict):
        raise VehicleConfigError(f"{where}: differential must be a table")
    refs = {k: table[k] for k in ("wheels", "driven") if k in table}
    values = _read({k: v for k, v in table.items() if k not in refs}, DifferentialParams,
                   "differential", where)
    kind = values.get("type", DifferentialParams.type)
    for key in table:
        if key != "type" and key not in KEYS_READ[kind]:
            readers = " and ".join(t for t, keys in KEYS_READ.items() if key in keys)
            raise VehicleConfigError(f"{where}: differential.{key} is not read by type = "
                                     f"{kind!r}, only by {readers}; remove it or change the type")
    four_kind = values.get("kind", DifferentialParams.kind)
    unread = [k for k in LIMITED_SLIP_KEYS if k in table]
    if kind == "four_wheel" and four_kind == "open" and unread:
        raise VehicleConfigError(f"{where}: {', '.join(f'differential.{k}' for k in unread)}: "
                                 "read by a limited-slip differential only, and kind = 'open'; "
                                 "remove them or set kind = 'limited_slip'")
    unread = [k for k in NOT_READ_LOCKED if k in table]
    if kind == "four_wheel" and four_kind == "locked" and unread:
        raise VehicleConfigError(f"{where}: {', '.join(f'differential.{k}' for k in unread)}: "
                                 "not read by kind = 'locked' (each driven axle is a spool, its "
                                 "two wheels turning as one: no bias, no left/right split); "
                                 "remove them or set kind = 'limited_slip'")
    extra = {}
    for key, value in refs.items():
        if not isinstance(value, list) or not value:
            raise VehicleConfigError(f"{where}: differential.{key} must be a list of wheel names")
        idx = tuple(_wheel_index(v, names, f"differential.{key}", where) for v in value)
        twice = [v for v in value if value.count(v) > 1]
        if twice:
            raise VehicleConfigError(f"{where}: differential.{key} names {twice[0]!r} twice; "
                                     "each wheel may appear once")
        if key == "wheels":
            if len(idx) != 4:
                raise VehicleConfigError(f"{where}: differential.wheels = {value!r} has "
                                         f"{len(idx)} names; needs 4 (front_left, front_right, "
                                         "rear_left, rear_right)")
            extra["four_wheels"] = idx
        else:
            extra["driven"] = idx
    if values.get("type") == "four_wheel" and len(names) < 4:
        raise VehicleConfigError(f"{where}: differential.type = 'four_wheel' needs 4 wheels")
    return DifferentialParams(**values, **extra)


def _anti_roll(bars: Any, names: list[str], where: str) -> AntiRollParams:
    if not isinstance(bars, list):
        raise VehicleConfigError(f"{where}: anti_roll_bars must be [[anti_roll_bars]] entries")
    pairs, stiffness = [], []
    for i, bar in enumerate(bars):
        if not isinstance(bar, dict) or set(bar) != {"wheels", "stiffness"}:
            raise VehicleConfigError(f"{where}: anti_roll_bars[{i}] needs exactly 'wheels' "
                                     "(two names) and 'stiffness' (N/m)")
        w = bar["wheels"]
        if not isinstance(w, list) or len(w) != 2:
            raise VehicleConfigError(f"{where}: anti_roll_bars[{i}].wheels must name two wheels")
        pairs.append(tuple(_wheel_index(n, names, f"anti_roll_bars[{i}].wheels", where) for n in w))
        if isinstance(bar["stiffness"], bool) or not isinstance(bar["stiffness"], (int, float)):
            raise VehicleConfigError(f"{where}: anti_roll_bars[{i}].stiffness must be a number")
        stiffness.append(float(bar["stiffness"]))
    return AntiRollParams(tuple(pairs), tuple(stiffness))


def preset_names() -> list[str]:
    """Names of the vehicle presets shipped with the package."""
    folder = resources.files(__package__) / "presets"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def load_vehicle(name_or_path: str | Path) -> VehicleParams:
    """Load a shipped preset by name (e.g. ``"sedan"``) or a TOML file by path.

    Raises:
        VehicleConfigError: unknown preset, unreadable file, TOML syntax error, unknown key,
            wrong type, value out of range or inconsistent geometry; the message names the file
            and the field.
    """
    path = Path(name_or_path)
    if path.suffix != ".toml":
        if str(name_or_path) not in preset_names():
            raise VehicleConfigError(f"unknown vehicle preset {str(name_or_path)!r}; presets: "
                                     f"{', '.join(preset_names())} (or give a path to a .toml file)")
        text = (resources.files(__package__) / "presets" / f"{name_or_path}.toml").read_text()
        where = f"{name_or_path}.toml"
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise VehicleConfigError(f"{path}: cannot read vehicle file ({e.strerror})") from None
        except UnicodeDecodeError as e:
            raise VehicleConfigError(f"{path}: not a UTF-8 text file ({e.reason} at byte "
                                     f"{e.start})") from None
        where = str(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise VehicleConfigError(f"{where}: TOML syntax error: {e}") from None
    return parse_vehicle(data, where)


def vehicle_params(vehicle: str | os.PathLike | VehicleParams) -> VehicleParams:
    """A ``vehicle`` argument (preset name, TOML path or :class:`VehicleParams`) as parameters.

    Raises:
        VehicleConfigError: it is none of those (naming ``vehicle`` and the presets), or it
            does not load (see :func:`load_vehicle`).
    """
    if isinstance(vehicle, VehicleParams):
        return vehicle
    if not isinstance(vehicle, str | os.PathLike):
        raise VehicleConfigError(f"vehicle = {vehicle!r}; allowed: a preset name "
                                 f"({', '.join(preset_names())}), a .toml path or VehicleParams")
    return load_vehicle(vehicle)
