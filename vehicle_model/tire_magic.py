"""Pacejka's Magic Formula (``model = "magic_formula"``), the simulation end of the spectrum.

Pure slip: ``F = D * mu * load * sin(C * atan(B*s - E*(B*s - atan(B*s))))`` with ``s`` the
shared slip ratio ``(omega r - v) / max(|v|, |omega r|)`` (longitudinal) or slip angle in rad
(lateral), ``tire.py``. Combined slip uses the normalised slip
vector: with ``sx = kappa / kappa_peak`` and ``sy = alpha / alpha_peak``, ``rho = |(sx, sy)|``,
each direction gets its pure-slip force at ``rho`` times its share ``sx / rho`` (``sy / rho``),
so the forces trace a friction ellipse whose axes are the pure-slip peaks. Aligning moment:
``-trail * F_lat``.
"""

from __future__ import annotations

import numpy as np

from .jit import jit
from .vec import norm2


@jit
def pure(b: float, c: float, d: float, e: float, s: float) -> float:
    """Normalised pure-slip curve ``D sin(C atan(Bs - E(Bs - atan(Bs))))``."""
    bs = b * s
    return d * np.sin(c * np.arctan(bs - e * (bs - np.arctan(bs))))


#: Largest ``B s`` :func:`peak_slip` searches (a peak beyond it is reported there).
PEAK_SEARCH = 1e3


def peak_slip(coef: np.ndarray) -> np.ndarray:
    """Slip where the pure curve peaks (``C atan(...) = pi/2``), found by bisection on ``Bs``
    in ``[0, PEAK_SEARCH]``."""
    b, c, e = coef[..., 0], coef[..., 1], coef[..., 3]
    target = np.tan(np.pi / (2.0 * np.maximum(c, 1.0 + 1e-9)))
    lo, hi = np.zeros_like(b), np.full_like(b, PEAK_SEARCH)
    for _ in range(60):                      # phi(u) = u - e(u - atan u) is increasing for e < 1
        mid = 0.5 * (lo + hi)
        phi = mid - e * (mid - np.arctan(mid))
        lo, hi = np.where(phi < target, mid, lo), np.where(phi < target, hi, mid)
    return 0.5 * (lo + hi) / b


@jit
def forces(w: np.ndarray, x: np.ndarray) -> tuple[float, float, float, float]:
    """``(f_long, f_lat, aligning_moment, wheel_torque)`` of one wheel (see ``tire_physx.forces``);
    the pure-slip peaks are packed per wheel (``mf_peak_long``, ``mf_peak_lat``)."""
    r = w.radius
    kappa, alpha = x.long_slip, x.lat_slip                         # -, rad
    peak_long, peak_lat = w.mf_peak_long, w.mf_peak_lat
    sx, sy = kappa / peak_long, alpha / peak_lat
    rho = norm2(sx, sy)
    if rho <= 1e-12:
        return 0.0, 0.0, 0.0, 0.0
    limit = x.surface_friction * x.load
    b, c, d, e = w.mf_long[0], w.mf_long[1], w.mf_long[2], w.mf_long[3]
    f_long = limit * pure(b, c, d, e, rho * peak_long) * sx / rho
    b, c, d, e = w.mf_lat[0], w.mf_lat[1], w.mf_lat[2], w.mf_lat[3]
    f_lat = -limit * pure(b, c, d, e, rho * peak_lat) * sy / rho
    return f_long, f_lat, -w.trail * f_lat, -f_long * r
