"""Custom tyre models (``model = "custom"``): user callables with the PhysX tyre-shader signature.

Register a function, then name it in the vehicle file (``tire.custom = "my_tyre"``) before
loading the vehicle::

    def my_tyre(friction, long_slip, lat_slip, camber, wheel_omega, wheel_radius, rest_load,
                normalised_load, load, gravity):
        ...                                   # arrays over the wheels that use it
        return wheel_torque, long_force, lat_force, aligning_moment

    traction.vehicle_model.register_tire_model("my_tyre", my_tyre)

The function receives ``(1, k)`` arrays over the k wheels of one vehicle that use it, except
``wheel_radius`` and ``rest_load`` (per-wheel constants), which are ``(k,)`` and broadcast
against the others; ``gravity`` is a float. It must return four ``(1, k)`` arrays (or values
that broadcast to that shape). It runs in Python, called from the compiled update once per
vehicle and wheel substep; non-finite outputs raise ``ValueError`` naming the function.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .errors import VehicleConfigError

_REGISTRY: dict[str, Callable] = {}
_BY_INDEX: list[Callable] = []


def register_tire_model(name: str, fn: Callable) -> None:
    """Make ``fn`` available to vehicle files as ``tire.custom = name``."""
    if not callable(fn):
        raise TypeError(f"register_tire_model({name!r}, ...): {fn!r} is not callable")
    _REGISTRY[name] = fn


def lookup(name: str, where: str = "") -> Callable:
    """The registered function ``name`` (VehicleConfigError listing the registered names)."""
    if name not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY)) or "none registered"
        raise VehicleConfigError(f"{where}: tire.custom = {name!r} is not a registered tyre model "
                                 f"({known}); call traction.vehicle_model.register_tire_model first")
    return _REGISTRY[name]


def name_of(fn: Callable) -> str | None:
    """The name ``fn`` was registered under (the first, if several), or None."""
    return next((name for name, known in _REGISTRY.items() if known is fn), None)


def index_of(fn: Callable) -> int:
    """A stable index for ``fn`` that the compiled update passes back to :func:`call`."""
    for i, known in enumerate(_BY_INDEX):
        if known is fn:
            return i
    _BY_INDEX.append(fn)
    return len(_BY_INDEX) - 1


def call(index: int, x: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """Run custom tyre function ``index`` on tyre-input records ``x`` ``(k,)`` (the
    wheels of one vehicle that use it; wheel radii ``(k,)``); returns ``(k, 4)`` rows of
    ``(long_force, lat_force, aligning_moment, wheel_torque)``. Called from the compiled update
    (numba object mode), so only vehicles with custom tyres pay for the Python call."""
    fn = _BY_INDEX[index]

    def row(name):
        return x[name][None, :]

    out = fn(friction=row("friction"), long_slip=row("long_slip"), lat_slip=row("lat_slip"),
             camber=row("camber"), wheel_omega=row("omega"), wheel_radius=radius,
             rest_load=x["rest_load"], normalised_load=row("normalised_load"),
             load=row("load"), gravity=float(x["gravity"][0]))
    name = getattr(fn, "__name__", repr(fn))
    if not isinstance(out, tuple) or len(out) != 4:
        raise ValueError(f"custom tyre {name} must return (wheel_torque, long_force, lat_force, "
                         "aligning_moment)")
    result = np.empty((len(x), 4))
    for col, label, arr in zip((3, 0, 1, 2), ("wheel_torque", "long_force", "lat_force",
                                              "aligning_moment"), out, strict=True):
        try:
            arr = np.broadcast_to(np.asarray(arr, dtype=float), (1, len(x)))
        except (TypeError, ValueError):
            raise ValueError(f"custom tyre {name} returned {label} of shape {np.shape(arr)}; "
                             f"allowed: a number or one per wheel, shape (1, {len(x)}) or "
                             f"({len(x)},)") from None
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"custom tyre {name} returned a non-finite {label}")
        result[:, col] = arr[0]
    return result
