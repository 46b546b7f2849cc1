"""The PhysX default tyre model (``model = "physx"``).

Linear longitudinal, lateral and camber stiffnesses, then a smoothing polynomial normalises the
combined force so that ``|F| <= friction * load`` always holds. Lateral stiffness grows with
normalised load up to ``lat_stiff_x`` rest loads (``lat_stiff_y`` per rest load at saturation).
"""

from __future__ import annotations

import numpy as np

from .jit import jit
from .vec import norm2

_THIRD, _27TH = 1.0 / 3.0, 1.0 / 27.0


@jit
def _smooth_force(k: float) -> float:
    """PhysX smoothing for force: K - K^2/3 + K^3/27, reaching 1 with zero slope at K = 3
    (Horner form, multiplications only)."""
    k = min(k, 3.0)
    return k * (1.0 - k * (_THIRD - k * _27TH))


@jit
def _smooth_moment(k: float) -> float:
    """PhysX smoothing for aligning moment: K - K^2 + K^3/3 - K^4/27 (Horner form), held at its
    K = 3 value, zero, beyond (PhysX's polynomial goes negative there; PhysX, like this module,
    only reports the moment and applies no torque from it)."""
    k = min(k, 3.0)
    return k * (1.0 - k * (1.0 - k * (_THIRD - k * _27TH)))


@jit
def stiffness(w: np.ndarray, x: np.ndarray) -> tuple[float, float]:
    """Longitudinal (N per unit slip) and lateral (N per unit ``tan`` of the slip angle)
    stiffness: ``long_stiff_per_unit_gravity g``, and ``lat_stiff_y`` rest loads smoothed
    toward saturation at ``lat_stiff_x`` normalised loads."""
    lat = x.rest_load * w.lat_stiff_y * _smooth_force(
        x.normalised_load * 3.0 / w.lat_stiff_x)
    return w.long_stiff_per_unit_gravity * x.gravity, lat


@jit
def forces(w: np.ndarray, x: np.ndarray) -> tuple[float, float, float, float]:
    """``(f_long, f_lat, aligning_moment, wheel_torque)`` of one wheel.

    Args:
        w: the wheel's packed record (``pk.wheel[w]``).
        x: its tyre inputs (``layout`` ``X_`` columns): slips and ``tan(lat_slip)`` (used
            as is when the camber term is zero), camber, friction (surface x
            friction-vs-slip graph), load (filtered normalised load x rest load), gravity.
    """
    load = x.load
    long_slip, lat_slip, camber = x.long_slip, x.lat_slip, x.camber
    long_stiff, lat_stiff = stiffness(w, x)
    camber_stiff = w.camber_stiff_per_unit_gravity * x.gravity
    camber_slip = camber * camber_stiff / max(lat_stiff, 1e-9)
    t_eff = x.tan_lat_slip if camber_slip == 0.0 else np.tan(lat_slip - camber_slip)
    limit = x.friction * load
    if limit <= 1e-9:
        return 0.0, 0.0, 0.0, 0.0
    k = norm2(lat_stiff * t_eff, long_stiff * long_slip) / limit
    f_bar = _smooth_force(k)
    m_bar = _smooth_moment(k)
    ratio = lat_stiff / long_stiff
    nu = 0.5 * (1.0 + ratio - (1.0 - ratio) * np.cos(k * 0.5)) if k <= 2.0 * np.pi else 1.0
    mag = norm2(long_slip, nu * t_eff)
    if mag <= 1e-12:
        return 0.0, 0.0, 0.0, 0.0
    f_zero = limit / mag
    f_long = long_slip * f_bar * f_zero
    return f_long, -nu * t_eff * f_bar * f_zero, nu * t_eff * m_bar * f_zero, -f_long * w.radius
