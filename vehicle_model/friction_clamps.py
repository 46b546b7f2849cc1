"""Friction clamps: a tyre force may not reverse the motion it opposes within one step.

With high grip and a large step an explicit tyre force overshoots: the sliding velocity it opposes
changes sign, the force flips, and the tyre jitters or diverges. The clamps bound the force by
what would just stop the motion in one step, using the *useful mass* - the wheel's share of the
static load times the vehicle mass (its sprung mass) - including the rotational inertia the
force also has to turn (``TireInputs.mass_long`` / ``mass_lat``):

* longitudinal, for a force that opposes the patch's forward velocity (``F v_long < 0``):
  ``|F| <= m_long |v_long| / dt + |T_drive| / r`` - the force cannot reverse that velocity,
  except for what the drive torque itself pushes. A force along ``v_long`` (or on a stopped
  patch) cannot reverse it, so this bound does not apply to it: a wheel spinning on a stopped
  car gets the road force that pushes the car and spins the wheel down (bounded by the angular
  clamp), as a real tyre does;
* angular: ``|F| <= |v_slide| / (dt (1/m_long + r^2/I))`` with ``v_slide = v_long - omega r``
  after the drive torque has acted - the force that brings the patch's slide over the road to
  rest in one step, the chassis share and the wheel moving together: it cannot reverse the
  wheel's spin relative to the road;
* lateral: ``|F| <= m_lat |v_lat| / dt`` for a force opposing ``v_lat``; a force along it (a
  camber thrust, also on a patch not sliding sideways) cannot reverse it and is not bound.
"""

from __future__ import annotations

import numpy as np

from .jit import jit
from .layout import MOI, RADIUS, X_DRIVE_TORQUE, X_DT, X_MASS_LAT, X_MASS_LONG, X_OMEGA, X_V_LAT, X_V_LONG


@jit
def apply(f_long: float, f_lat: float, w: np.ndarray, x: np.ndarray) -> tuple[float, float]:
    """Clamp one wheel's forces (N) by the longitudinal (only a force opposing ``v_long``),
    angular and lateral (only a force opposing ``v_lat``) bounds above."""
    dt, r, moi = x[X_DT], w[RADIUS], w[MOI]
    drive, v_long = x[X_DRIVE_TORQUE], x[X_V_LONG]
    slide = v_long - x[X_OMEGA] * r - drive * r * dt / moi
    long_cap = abs(slide) / (dt * (1.0 / x[X_MASS_LONG] + r * r / moi))        # angular
    if f_long * v_long < 0.0:                                                  # opposes v_long
        long_cap = min(long_cap, x[X_MASS_LONG] * abs(v_long) / dt + abs(drive) / r)
    f_long = min(max(f_long, -long_cap), long_cap)
    if f_lat * x[X_V_LAT] < 0.0:                                               # opposes v_lat
        lat_cap = x[X_MASS_LAT] * abs(x[X_V_LAT]) / dt
        f_lat = min(max(f_lat, -lat_cap), lat_cap)
    return f_long, f_lat
