"""The PhysX default tyre model (``model = "physx"``).

Linear longitudinal, lateral and camber stiffnesses, then a smoothing polynomial normalises the
combined force so that ``|F| <= friction * load`` always holds. Lateral stiffness grows with
normalised load up to ``lat_stiff_x`` rest loads (``lat_stiff_y`` per rest load at saturation).
"""

from __future__ import annotations

import numpy as np


def _smooth_force(k: np.ndarray) -> np.ndarray:
    """PhysX smoothing for force: K - K^2/3 + K^3/27, reaching 1 with zero slope at K = 3."""
    k = np.minimum(k, 3.0)
    return k - k * k / 3.0 + k * k * k / 27.0


def _smooth_moment(k: np.ndarray) -> np.ndarray:
    """PhysX smoothing for aligning moment: K - K^2 + K^3/3 - K^4/27, zero from K = 3."""
    k = np.minimum(k, 3.0)
    return k - k * k + k**3 / 3.0 - k**4 / 27.0


def forces(p, long_slip, lat_slip, camber, friction, load, rest_load,
                 filtered_normalised_load, gravity: float):
    """The PhysX default tyre model, vectorised.

    Args:
        p: tyre parameters.
        long_slip: longitudinal slip (-).
        lat_slip: lateral slip angle (rad).
        camber: camber angle (rad).
        friction: surface-tyre friction times the friction-vs-slip graph (-).
        load: tyre load used by the model (N) (filtered normalised load x rest load).
        rest_load: load at rest (N).
        filtered_normalised_load: filtered load / rest load (-).
        gravity: |g| (m/s^2).

    Returns:
        ``(f_long, f_lat, aligning_moment)`` in N, N, N m; zero where ``load`` or ``friction`` is 0.
    """
    lat_stiff = rest_load * p.lat_stiff_y * _smooth_force(
        filtered_normalised_load * 3.0 / p.lat_stiff_x)
    long_stiff = p.long_stiff_per_unit_gravity * gravity
    camber_stiff = p.camber_stiff_per_unit_gravity * gravity
    safe_lat = np.maximum(lat_stiff, 1e-9)
    t_eff = np.tan(lat_slip - camber * camber_stiff / safe_lat)
    limit = friction * load
    ok = limit > 1e-9
    safe_limit = np.where(ok, limit, 1.0)
    k = np.hypot(lat_stiff * t_eff, long_stiff * long_slip) / safe_limit
    f_bar = _smooth_force(k)
    m_bar = _smooth_moment(k)
    ratio = lat_stiff / long_stiff
    nu = np.where(k <= 2.0 * np.pi, 0.5 * (1.0 + ratio - (1.0 - ratio) * np.cos(k * 0.5)), 1.0)
    mag = np.hypot(long_slip, nu * t_eff)
    ok &= mag > 1e-12
    f_zero = np.where(ok, safe_limit / np.where(ok, mag, 1.0), 0.0)
    f_long = long_slip * f_bar * f_zero
    f_lat = -nu * t_eff * f_bar * f_zero
    moment = nu * t_eff * m_bar * f_zero
    return f_long, f_lat, moment
