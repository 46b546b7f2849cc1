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


def limits(x):
    """``(longitudinal, angular, lateral)`` force bounds (N) for every wheel."""
    dt = x.dt
    lin = x.mass_long * np.abs(x.v_long) / dt + np.abs(x.drive_torque) / x.radius
    slide = x.v_long - x.omega * x.radius - x.drive_torque * x.radius * dt / x.moi
    ang = np.abs(slide) / (dt * (1.0 / x.mass_long + x.radius**2 / x.moi))
    lat = x.mass_lat * np.abs(x.v_lat) / dt
    return lin, ang, lat


def apply(f_long, f_lat, x, enabled):
    """Clamp forces where ``enabled``; returns ``(f_long, f_lat)``."""
    lin, ang, lat = limits(x)
    long_cap = np.minimum(lin, ang)
    f_long = np.where(enabled, np.clip(f_long, -long_cap, long_cap), f_long)
    f_lat = np.where(enabled, np.clip(f_lat, -lat, lat), f_lat)
    return f_long, f_lat
