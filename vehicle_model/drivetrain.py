"""Engine + clutch + differential + wheels: the coupled spin update.

Unknowns per vehicle: engine spin ``w_e`` and the spin ``w_g`` of each wheel group. With clutch
torque ``T_c = K (w_e - G sum(alpha_g w_g))`` (K = clutch strength, G = gear x final ratio) and
backward-Euler integration of the clutch and damping terms over a step ``h``::

    (I_e/h + D_e) w_e' + K (v . x') = I_e w_e / h + T_engine
    (I_g/h + D_g) w_g' - G beta_g K (v . x') = I_g w_g / h + T_road_g        for every group

with ``x = [w_e, w_g...]`` and ``v = [1, -G alpha_g...]``. The matrix is diagonal plus the rank-one
``K u v^T`` (``u = [1, -G beta_g...]``), so ``best_possible`` solves it exactly in O(n) with the
Sherman-Morrison formula: unconditionally stable for any clutch strength and step. ``estimate``
runs Gauss-Seidel sweeps instead. Engine torque and tyre (road) torques are explicit; brakes are
applied afterwards as a clamp that can stop a group but never reverse it.
"""

from __future__ import annotations

import numpy as np

from . import engine as eng
from .clutch import ClutchParams
from .engine import EngineParams
from .wheel import apply_brake


def solve(ep: EngineParams, cp: ClutchParams, w_e, w_g, inertia_g, damping_g, road_g, brake_g,
          throttle, ratio, beta, alpha, h):
    """Advance engine and wheel-group spins by ``h``.

    Args:
        ep, cp: engine and clutch parameters.
        w_e: engine spin (rad/s), ``(n,)``.
        w_g: group spins (rad/s), ``(n, n_groups)``.
        inertia_g, damping_g: group inertia (kg m^2) and bearing damping (N m s/rad), ``(n_groups,)``.
        road_g: tyre torque on each group (N m), ``(n, n_groups)``.
        brake_g: brake torque magnitude per group (N m).
        throttle: ``(n,)`` in [0, 1].
        ratio: gear x final ratio ``(n,)`` (0 = disengaged).
        beta, alpha: torque ratios and speed contributions ``(n, n_groups)``.
        h: step (s), ``(n,)``.

    Returns:
        ``(w_e, w_g, clutch_torque, engine_torque)``.
    """
    engaged = ratio != 0.0
    t_eng = eng.torque(ep, throttle, w_e)
    k = np.where(engaged, cp.strength, 0.0)
    m_e = ep.moi / h + eng.damping(ep, throttle, engaged)
    hg = h[:, None]
    m_g = inertia_g / hg + damping_g
    b_e = ep.moi * w_e / h + t_eng
    b_g = inertia_g * w_g / hg + road_g
    v_g = -ratio[:, None] * alpha
    u_g = -ratio[:, None] * beta
    if cp.accuracy == "best_possible":
        y_e, y_g = b_e / m_e, b_g / m_g
        z_e, z_g = 1.0 / m_e, u_g / m_g
        v_y = y_e + (v_g * y_g).sum(axis=1)
        v_z = z_e + (v_g * z_g).sum(axis=1)
        coef = k * v_y / (1.0 + k * v_z)
        x_e = y_e - z_e * coef
        x_g = y_g - z_g * coef[:, None]
    else:
        x_e, x_g = w_e.copy(), w_g.copy()
        for _ in range(cp.estimate_iterations):
            x_e = (b_e - k * (v_g * x_g).sum(axis=1)) / (m_e + k)
            for g in range(x_g.shape[1]):
                rest = x_e + (v_g * x_g).sum(axis=1) - v_g[:, g] * x_g[:, g]
                x_g[:, g] = (b_g[:, g] - k * u_g[:, g] * rest) / (m_g[:, g] + k * u_g[:, g] * v_g[:, g])
    x_e = np.clip(x_e, 0.0, ep.max_omega)
    clutch = k * (x_e + (v_g * x_g).sum(axis=1))
    x_g = apply_brake(x_g, hg * brake_g / inertia_g)
    return x_e, x_g, clutch, t_eng
