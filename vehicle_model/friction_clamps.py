"""Friction clamps: a tyre force may not reverse the motion it opposes within one step.

With high grip and a large step an explicit tyre force overshoots: the sliding velocity it opposes
changes sign, the force flips, and the tyre jitters or diverges. The clamps bound the force by
what would just stop the motion in one step, using the *useful mass* - the wheel's share of the
static load times the vehicle mass (its sprung mass) - including the rotational inertia the
force also has to turn (``TireInputs.mass_long`` / ``mass_lat``):

* longitudinal: ``|F| <= m_long |v_long| / dt + |T_drive| / r`` - the force cannot reverse the
  contact patch's forward velocity, except for what the drive torque itself pushes;
* angular: ``|F| <= |v_slide| / (dt (1/m_long + r^2/I))`` with ``v_slide = v_long - omega r``
  after the drive torque has acted - the reaction torque cannot reverse the wheel's spin relative
  to the road;
* lateral: ``|F| <= m_lat |v_lat| / dt``.
"""

from __future__ import annotations

import numpy as np

from .jit import jit
from .layout import MOI, RADIUS, X_DRIVE_TORQUE, X_DT, X_MASS_LAT, X_MASS_LONG, X_OMEGA, X_V_LAT, X_V_LONG


@jit
def apply(f_long: float, f_lat: float, w: np.ndarray, x: np.ndarray) -> tuple[float, float]:
    """Clamp one wheel's forces (N) by the longitudinal, angular and lateral bounds above."""
    dt, r, moi = x[X_DT], w[RADIUS], w[MOI]
    drive, v_long = x[X_DRIVE_TORQUE], x[X_V_LONG]
    linear = x[X_MASS_LONG] * abs(v_long) / dt + abs(drive) / r
    slide = v_long - x[X_OMEGA] * r - drive * r * dt / moi
    angular = abs(slide) / (dt * (1.0 / x[X_MASS_LONG] + r * r / moi))
    long_cap = min(linear, angular)
    lat_cap = x[X_MASS_LAT] * abs(x[X_V_LAT]) / dt
    return min(max(f_long, -long_cap), long_cap), min(max(f_lat, -lat_cap), lat_cap)
