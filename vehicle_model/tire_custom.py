"""Custom tyre models (``model = "custom"``): user callables with the PhysX tyre-shader signature.

Register a function, then name it in the vehicle file (``tire.custom = "my_tyre"``) before
loading the vehicle::

    def my_tyre(friction, long_slip, lat_slip, camber, wheel_omega, wheel_radius, rest_load,
                normalised_load, load, gravity):
        ...                                   # arrays, (n_vehicles, n_custom_wheels)
        return wheel_torque, long_force, lat_force, aligning_moment

    traction.vehicle_model.register_tire_model("my_tyre", my_tyre)

The function receives arrays over the wheels that use it and must return four arrays of the same
shape; non-finite outputs raise ``ValueError`` naming the function.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .errors import VehicleConfigError

_REGISTRY: dict[str, Callable] = {}


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


def forces(fn: Callable, p, x, mask: np.ndarray):
    """Call ``fn`` on the wheels in ``mask``; return full-size force arrays (0 elsewhere)."""
    cols = np.flatnonzero(mask)
    sel = (slice(None), cols)
    out = fn(friction=x.friction[sel], long_slip=x.long_slip[sel], lat_slip=x.lat_slip[sel],
             camber=x.camber[sel], wheel_omega=x.omega[sel], wheel_radius=x.radius[cols],
             rest_load=x.rest_load[cols], normalised_load=x.normalised_load[sel], load=x.load[sel],
             gravity=x.gravity)
    name = getattr(fn, "__name__", repr(fn))
    if not isinstance(out, tuple) or len(out) != 4:
        raise ValueError(f"custom tyre {name} must return (wheel_torque, long_force, lat_force, "
                         "aligning_moment)")
    full = []
    for label, arr in zip(("wheel_torque", "long_force", "lat_force", "aligning_moment"), out,
                          strict=True):
        arr = np.broadcast_to(np.asarray(arr, dtype=float), x.load[sel].shape)
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"custom tyre {name} returned a non-finite {label}")
        whole = np.zeros_like(x.load)
        whole[sel] = arr
        full.append(whole)
    torque, f_long, f_lat, moment = full
    return f_long, f_lat, moment, torque
