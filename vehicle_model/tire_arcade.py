"""The arcade tyre (``model = "arcade"``): the simplest model that still drives.

The velocity difference between the contact patch and the road is projected on the wheel's
forward and side axes; each component is opposed by ``stiffness x load`` per m/s, and the result
is limited to ``friction x load`` (the friction circle). No slip ratios, no curves.
"""

from __future__ import annotations

import numpy as np

from .jit import jit
from .layout import ARCADE_LAT, ARCADE_LONG, RADIUS, X_LOAD, X_OMEGA, X_SURFACE_FRICTION, X_V_LAT, X_V_LONG
from .vec import norm2


@jit
def forces(w: np.ndarray, x: np.ndarray) -> tuple[float, float, float, float]:
    """``(f_long, f_lat, aligning_moment, wheel_torque)`` of one wheel (see ``tire_physx.forces``)."""
    slide_long = x[X_V_LONG] - x[X_OMEGA] * w[RADIUS]     # patch sliding forward over the road
    f_long = -w[ARCADE_LONG] * x[X_LOAD] * slide_long
    f_lat = -w[ARCADE_LAT] * x[X_LOAD] * x[X_V_LAT]
    limit = x[X_SURFACE_FRICTION] * x[X_LOAD]
    scale = min(1.0, limit / max(norm2(f_long, f_lat), 1e-12))
    return f_long * scale, f_lat * scale, 0.0, -f_long * scale * w[RADIUS]
