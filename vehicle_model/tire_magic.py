"""Pacejka's Magic Formula (``model = "magic_formula"``), the simulation end of the spectrum.

Pure slip: ``F = D * mu * load * sin(C * atan(B*s - E*(B*s - atan(B*s))))`` with ``s`` the slip
ratio ``(omega r - v) / max(|v|, min_slip_speed)`` (longitudinal, with the curve model's sign
edge cases) or the slip angle in rad (lateral). Combined slip uses the normalised slip
vector: with ``sx = kappa / kappa_peak`` and ``sy = alpha / alpha_peak``, ``rho = |(sx, sy)|``,
each direction gets its pure-slip force at ``rho`` times its share ``sx / rho`` (``sy / rho``),
so the forces trace a friction ellipse whose axes are the pure-slip peaks. Aligning moment:
``-trail * F_lat``.
"""

from __future__ import annotations

import numpy as np

from .tire_curve import slip_ratio


def pure(coef: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Normalised pure-slip curve ``D sin(C atan(Bs - E(Bs - atan(Bs))))``; coef ``(..., 4)``."""
    b, c, d, e = coef[..., 0], coef[..., 1], coef[..., 2], coef[..., 3]
    bs = b * s
    return d * np.sin(c * np.arctan(bs - e * (bs - np.arctan(bs))))


def peak_slip(coef: np.ndarray) -> np.ndarray:
    """Slip where the pure curve peaks (``C atan(...) = pi/2``), found by bisection on ``Bs``."""
    b, c, e = coef[..., 0], coef[..., 1], coef[..., 3]
    target = np.tan(np.pi / (2.0 * np.maximum(c, 1.0 + 1e-9)))
    lo, hi = np.zeros_like(b), np.full_like(b, 1e3)
    for _ in range(60):                      # phi(u) = u - e(u - atan u) is increasing for e < 1
        mid = 0.5 * (lo + hi)
        phi = mid - e * (mid - np.arctan(mid))
        lo, hi = np.where(phi < target, mid, lo), np.where(phi < target, hi, mid)
    return 0.5 * (lo + hi) / b


def forces(p, x):
    """``(f_long, f_lat, aligning_moment, wheel_torque)`` for every wheel (see ``TireInputs``)."""
    kappa = slip_ratio(x.v_long, x.omega * x.radius, p.min_slip_speed)
    tan_alpha = x.v_lat / np.maximum(np.abs(x.v_long), p.min_slip_speed)
    peak_long, peak_lat = p.mf_peak_slips
    sx = kappa / peak_long
    sy = tan_alpha / np.tan(peak_lat)
    rho = np.hypot(sx, sy)
    safe = np.where(rho > 1e-12, rho, 1.0)
    limit = x.surface_friction * x.load
    f_long = limit * pure(p.mf_long, rho * peak_long) * np.where(rho > 1e-12, sx / safe, 0)
    f_lat = -limit * pure(p.mf_lat, rho * peak_lat) * np.where(rho > 1e-12, sy / safe, 0)
    return f_long, f_lat, -p.trail * f_lat, -f_long * x.radius
