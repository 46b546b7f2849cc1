"""The arcade tyre (``model = "arcade"``): the simplest model that still drives.

The velocity difference between the contact patch and the road is projected on the wheel's
forward and side axes; each component is opposed by ``stiffness x load`` per m/s, and the result
is limited to ``friction x load`` (the friction circle). No curves.

Below :data:`REFERENCE_SPEED` a force per m/s of slide would be viscous (a parked car would
slide at ``weight share / (stiffness x load)``: 0.26 m/s on 15 degrees), so there the slide is
measured against the patch's own speed, ``slide x REFERENCE_SPEED / max(|v_long|, |omega r|)``
(sideways too): a slip times the stiffness at the reference speed, continuous at it, and the
same slips the other models read.
"""

from __future__ import annotations

import numpy as np

from .jit import jit
from .tire import long_denominator
from .vec import norm2

#: Speed (m/s) below which the slide is read as a slip (see the module docstring).
REFERENCE_SPEED = 1.0


@jit
def slide_gains(v_long: float, wheel_speed: float) -> tuple[float, float]:
    """The factors ``max(1, REFERENCE_SPEED / max(|v_long|, |wheel_speed|))`` on the longitudinal
    and lateral slide (one value: both slips share the denominator)."""
    gain = max(1.0, REFERENCE_SPEED / long_denominator(v_long, wheel_speed))
    return gain, gain


@jit
def forces(w: np.ndarray, x: np.ndarray) -> tuple[float, float, float, float]:
    """``(f_long, f_lat, aligning_moment, wheel_torque)`` of one wheel (see ``tire_physx.forces``)."""
    wheel_speed = x.omega * w.radius
    gain_long, gain_lat = slide_gains(x.v_long, wheel_speed)
    slide_long = x.v_long - wheel_speed              # patch sliding forward over the road
    f_long = -w.arcade_long_stiffness * x.load * slide_long * gain_long
    f_lat = -w.arcade_lat_stiffness * x.load * x.v_lat * gain_lat
    limit = x.surface_friction * x.load
    scale = min(1.0, limit / max(norm2(f_long, f_lat), 1e-12))
    return f_long * scale, f_lat * scale, 0.0, -f_long * scale * w.radius
