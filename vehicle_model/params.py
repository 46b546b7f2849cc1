"""Declaring and validating parameters.

Every parameter of every subsystem is declared with :func:`param`, which records its unit, its
allowed range and a one-line description in the dataclass field metadata. The same metadata drives
``validate()`` on the frozen dataclasses, the TOML loader (unknown keys, types, ranges) and the
generated documentation, so the three can never disagree.

Per-wheel parameters are stored as numpy arrays of shape ``(n_wheels,)`` (or ``(n_wheels, 3)`` for
vectors) so that the update functions broadcast them against state arrays shaped
``(n_vehicles, n_wheels)``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np

from .errors import VehicleConfigError


def param(default: Any = dataclasses.MISSING, *, unit: str = "-", lo: float = -math.inf,
          hi: float = math.inf, lo_open: bool = False, doc: str = "", shape: str = "wheel",
          choices: tuple[str, ...] = (), hi_open: bool = False, integer: bool = False,
          packed: bool | str = False):
    """A dataclass field with unit, range and description metadata.

    Args:
        default: default value (a scalar; per-wheel fields broadcast it over the wheels).
        unit: SI unit shown in docs and error messages.
        lo: smallest allowed value.
        hi: largest allowed value.
        lo_open: if True the lower bound itself is not allowed (``lo < x``).
        hi_open: if True the upper bound itself is not allowed (``x < hi``).
        doc: one-line description.
        shape: ``"wheel"`` (one value per wheel), ``"wheel3"`` (a 3-vector per wheel),
            ``"scalar"``, ``"vec3"``, ``"table"`` (an array validated elementwise), ``"list"`` (a
            1-D array of any length), ``"curve"`` (``(n, 2)`` points) or ``"choice"``.
        choices: allowed strings of a ``"choice"`` field.
        integer: only whole numbers (codes, flags and counts stored as numbers).
        packed: the compiled update reads this parameter: it becomes a field of the packed
            records (``pack.py``), named as the field (``True``) or as given (a name that is
            clearer beside the other parts' fields, e.g. ``"engine_moi"``). A choice is packed
            as the index of its value in ``choices``.
    """
    meta = param_meta(unit=unit, lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open, doc=doc,
                      shape=shape, choices=choices, integer=integer)
    if packed:
        meta["packed"] = packed
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def param_meta(*, unit: str = "-", lo: float = -math.inf, hi: float = math.inf,
               lo_open: bool = False, hi_open: bool = False, doc: str = "",
               shape: str = "scalar", choices: tuple[str, ...] = (),
               integer: bool = False) -> dict:
    """The metadata :func:`param` records (also for checking values that are not fields)."""
    return {"unit": unit, "lo": lo, "hi": hi, "lo_open": lo_open, "hi_open": hi_open, "doc": doc,
            "shape": shape, "choices": choices, "integer": integer}


def range_text(meta: dict) -> str:
    """Human readable allowed range, e.g. ``(0, inf)`` or ``[0, 1]``."""
    if meta["shape"] == "choice":
        return " \\| ".join(meta["choices"])
    left = "(" if meta["lo_open"] or meta["lo"] == -math.inf else "["
    right = ")" if meta.get("hi_open") or meta["hi"] == math.inf else "]"
    whole = "integer in " if meta.get("integer") else ""
    return f"{whole}{left}{meta['lo']:g}, {meta['hi']:g}{right}"


def check_number(name: str, value: Any, lo: float = -math.inf, hi: float = math.inf, *,
                 lo_open: bool = False, hi_open: bool = False, integer: bool = False,
                 unit: str = "") -> float | int:
    """One argument that must be a real number (not a bool, string or complex), finite, an
    ``int`` with ``integer``, in ``lo``..``hi`` (ends excluded with ``lo_open``/``hi_open``):
    the value as a float (int with ``integer``), else ValueError naming ``name``, the value and
    what is allowed (``speed = nan; allowed: [0, 40] m/s``, ``capacity = 0; allowed: an
    integer >= 1``). The check every module's arguments use (envs, scenes, train too)."""
    kinds = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    ok = isinstance(value, kinds) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        ok = (value > lo if lo_open else value >= lo) and (value < hi if hi_open else value <= hi)
    if ok:
        return int(value) if integer else float(value)
    if lo > -math.inf and hi < math.inf:
        span = f"{'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
        span = f"an integer in {span}" if integer else span
    elif lo > -math.inf:
        span = f"{'an integer ' if integer else ''}{'>' if lo_open else '>='} {lo:g}"
    elif hi < math.inf:
        span = f"{'an integer ' if integer else ''}{'<' if hi_open else '<='} {hi:g}"
    else:
        span = "an integer" if integer else "a finite number"
    raise ValueError(f"{name} = {value!r}; allowed: {span}" + (f" {unit}" if unit else ""))


def check_value(name: str, value: Any, meta: dict, where: str = "") -> None:
    """Raise :class:`VehicleConfigError` unless every element of ``value`` is finite and in range.

    Args:
        name: dotted field name used in the message.
        value: scalar or array.
        meta: the field's metadata from :func:`param`.
        where: prefix for the message (usually the file name).
    """
    prefix = f"{where}: " if where else ""
    if meta["shape"] == "choice":
        if value not in meta["choices"]:
            raise VehicleConfigError(f"{prefix}{name} = {value!r}; allowed: {', '.join(meta['choices'])}")
        return
    arr = np.asarray(value, dtype=float)
    bad = ~np.isfinite(arr)
    bad |= arr < meta["lo"]
    bad |= arr > meta["hi"]
    if meta["lo_open"]:
        bad |= arr <= meta["lo"]
    if meta.get("hi_open"):
        bad |= arr >= meta["hi"]
    fraction = arr != np.round(arr) if meta.get("integer") else np.zeros(arr.shape, bool)
    for wrong, what in ((bad, "is out of range"), (fraction, "is not a whole number")):
        if np.any(wrong):
            idx = np.argwhere(wrong)[0] if arr.ndim else ()
            shown = arr[tuple(idx)] if arr.ndim else float(arr)
            label = name + "".join(f"[{i}]" for i in idx[:1]) if arr.ndim else name
            raise VehicleConfigError(f"{prefix}{label} = {shown:g} {what}; allowed "
                                     f"{range_text(meta)} {meta['unit']}")


def validate_fields(obj: Any, prefix: str = "", where: str = "") -> None:
    """Check the shape (see :func:`check_shapes`) and range (see :func:`check_value`) of every
    :func:`param` field of a dataclass instance."""
    check_shapes(obj, None, prefix, where)
    for f in dataclasses.fields(obj):
        if "lo" in f.metadata:
            check_value(f"{prefix}{f.name}", getattr(obj, f.name), f.metadata, where)


#: Array shape of each field shape kind; ``n`` stands for the number of wheels.
SHAPES = {"scalar": (), "choice": (), "vec3": (3,), "wheel": ("n",), "wheel3": ("n", 3),
          "wheel4": ("n", 4), "table": ("n", 3, 2)}


def check_shapes(obj: Any, n_wheels: int | None, prefix: str = "", where: str = "") -> None:
    """Raise :class:`VehicleConfigError` naming the first :func:`param` field of ``obj`` whose
    array shape is not that of its kind (:data:`SHAPES`; ``list``: 1-D, ``curve``: ``(k, 2)``).
    Per-wheel kinds are checked only when ``n_wheels`` is given."""
    pre = f"{where}: " if where else ""
    for f in dataclasses.fields(obj):
        kind = f.metadata.get("shape")
        if kind is None or kind == "choice":
            continue
        want = SHAPES.get(kind)
        if want is not None and "n" in want:
            if n_wheels is None:
                continue
            want = tuple(n_wheels if d == "n" else d for d in want)
        got = np.shape(getattr(obj, f.name))
        ok = (got == want if want is not None
              else len(got) == 1 if kind == "list" else len(got) == 2 and got[1] == 2)
        if not ok:
            need = {"list": "a 1-D list", "curve": "(k, 2) points"}.get(kind, f"shape {want}")
            per_wheel = f" (one per wheel, {n_wheels} wheels)" if kind.startswith(("wheel", "table")) else ""
            raise VehicleConfigError(f"{pre}{prefix}{f.name} has shape {got}; expected {need}"
                                     f"{per_wheel}")


def freeze_arrays(obj: Any) -> None:
    """Convert numeric fields of a frozen dataclass to read-only float arrays in place."""
    for f in dataclasses.fields(obj):
        shape = f.metadata.get("shape")
        if shape in (None, "scalar", "choice"):
            continue
        arr = np.array(getattr(obj, f.name), dtype=float)
        arr.setflags(write=False)
        object.__setattr__(obj, f.name, arr)


def evolve(obj: Any, **changes) -> Any:
    """``dataclasses.replace`` for a frozen parameter dataclass, without copying what stays:
    the unchanged fields keep their (read-only) arrays, the changed numeric ones become
    read-only float arrays as :func:`freeze_arrays` makes them. Not validated, as ``replace``
    is not (``validate`` checks); cached properties are computed anew. A randomised draw
    changes a few fields per reset, and ``replace`` copied every array of the part."""
    fields = _array_fields(type(obj))
    unknown = changes.keys() - fields.keys()
    if unknown:
        raise TypeError(f"evolve: {type(obj).__name__} has no field(s) {sorted(unknown)}")
    new = object.__new__(type(obj))
    values = new.__dict__                  # (a frozen dataclass's fields live in its __dict__)
    for name in fields:
        values[name] = obj.__dict__[name]
    for name, value in changes.items():
        if fields[name]:
            value = np.array(value, dtype=float)
            value.setflags(write=False)
        values[name] = value
    return new


@functools.cache
def _array_fields(cls: type) -> dict[str, bool]:
    """A dataclass's field names, each with whether :func:`freeze_arrays` makes it an array."""
    return {f.name: f.metadata.get("shape") not in (None, "scalar", "choice")
            for f in dataclasses.fields(cls)}


def describe(cls: type) -> list[tuple[str, str, str, str]]:
    """(name, unit, allowed range, description) rows for a params dataclass, for docs."""
    return [(f.name, f.metadata["unit"], range_text(f.metadata), f.metadata["doc"])
            for f in dataclasses.fields(cls) if "lo" in f.metadata]


def read_only(a: np.ndarray) -> np.ndarray:
    """``a``, made read-only (a frozen vehicle's arrays: an in-place edit changed the vehicle)."""
    a.flags.writeable = False
    return a


def check_step_inputs(dt: float, gravity: float) -> None:
    """Raise ValueError unless the step ``dt`` (s) and ``gravity`` (m/s^2) are positive finite
    numbers (the update divides by both: 1/dt for mean forces, m g for rest loads)."""
    for name, value, unit in (("dt", dt, "s"), ("gravity", gravity, "m/s^2")):
        check_number(f"vehicle update: {name}", value, 0.0, lo_open=True, unit=unit)
