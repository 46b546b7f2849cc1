"""The arcade tyre (``model = "arcade"``): the simplest model that still drives.

The velocity difference between the contact patch and the road is projected on the wheel's
forward and side axes; each component is opposed by ``stiffness x load`` per m/s, and the result
is limited to ``friction x load`` (the friction circle). No slip ratios, no curves.
"""

from __future__ import annotations

import numpy as np


def forces(p, x):
    """``(f_long, f_lat, aligning_moment, wheel_torque)`` for every wheel (see ``TireInputs``)."""
    slide_long = x.v_long - x.omega * x.radius            # patch sliding forward over the road
    f_long = -p.arcade_long_stiffness * x.load * slide_long
    f_lat = -p.arcade_lat_stiffness * x.load * x.v_lat
    limit = x.surface_friction * x.load
    scale = np.minimum(1.0, limit / np.maximum(np.hypot(f_long, f_lat), 1e-12))
    f_long, f_lat = f_long * scale, f_lat * scale
    return f_long, f_lat, np.zeros_like(f_long), -f_long * x.radius
