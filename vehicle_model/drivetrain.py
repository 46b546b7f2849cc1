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

from . import engine
from .jit import jit
from .layout import (
    CLUTCH_IMPLICIT,
    CLUTCH_ITERATIONS,
    CLUTCH_STRENGTH,
    DAMP_DISENGAGED,
    DAMP_ENGAGED,
    DAMP_FULL,
    ENGINE_MOI,
    MAX_OMEGA,
    PEAK_TORQUE,
)
from .wheel import apply_brake


@jit
def solve(vp: np.ndarray, curve: np.ndarray, w_e: float, w_g: np.ndarray, inertia_g: np.ndarray,
          damping_g: np.ndarray, road_g: np.ndarray, brake_g: np.ndarray, throttle: float,
          ratio: float, beta: np.ndarray, alpha: np.ndarray, h: float,
          out_g: np.ndarray) -> tuple[float, float, float]:
    """Advance one vehicle's engine and wheel-group spins by ``h``.

    Args:
        vp: packed vehicle parameters (engine and clutch columns); curve: engine torque curve.
        w_e: engine spin (rad/s).
        w_g: group spins (rad/s), one per group.
        inertia_g, damping_g: group inertia (kg m^2) and bearing damping (N m s/rad).
        road_g: tyre torque on each group (N m).
        brake_g: brake torque magnitude per group (N m).
        throttle: in [0, 1].
        ratio: gear x final ratio (0 = disengaged).
        beta, alpha: torque ratios and speed contributions per group.
        h: step (s).
        out_g: receives the new group spins.

    Returns:
        ``(w_e, clutch_torque, engine_torque)``.
    """
    n = len(w_g)
    engaged = ratio != 0.0
    moi = vp[ENGINE_MOI]
    t_eng = engine.torque(vp[PEAK_TORQUE], vp[MAX_OMEGA], curve, throttle, w_e)
    k = vp[CLUTCH_STRENGTH] if engaged else 0.0
    m_e = moi / h + engine.damping(vp[DAMP_FULL], vp[DAMP_ENGAGED], vp[DAMP_DISENGAGED],
                                   throttle, engaged)
    b_e = moi * w_e / h + t_eng
    if vp[CLUTCH_IMPLICIT] > 0.5:                 # Sherman-Morrison: exact, O(n)
        v_y, v_z = b_e / m_e, 1.0 / m_e
        for g in range(n):
            m_g = inertia_g[g] / h + damping_g[g]
            v_g = -ratio * alpha[g]
            v_y += v_g * (inertia_g[g] * w_g[g] / h + road_g[g]) / m_g
            v_z += v_g * (-ratio * beta[g]) / m_g
        coef = k * v_y / (1.0 + k * v_z)
        x_e = (b_e - coef) / m_e
        for g in range(n):
            m_g = inertia_g[g] / h + damping_g[g]
            out_g[g] = (inertia_g[g] * w_g[g] / h + road_g[g] + ratio * beta[g] * coef) / m_g
    else:                                          # Gauss-Seidel sweeps
        x_e = w_e
        out_g[:] = w_g
        for _ in range(int(vp[CLUTCH_ITERATIONS])):
            vx = 0.0
            for g in range(n):
                vx += -ratio * alpha[g] * out_g[g]
            x_e = (b_e - k * vx) / (m_e + k)
            for g in range(n):
                v_g, u_g = -ratio * alpha[g], -ratio * beta[g]
                rest = x_e + vx - v_g * out_g[g]
                b_g = inertia_g[g] * w_g[g] / h + road_g[g]
                m_g = inertia_g[g] / h + damping_g[g]
                new = (b_g - k * u_g * rest) / (m_g + k * u_g * v_g)
                vx += v_g * (new - out_g[g])
                out_g[g] = new
    x_e = min(max(x_e, 0.0), vp[MAX_OMEGA])
    slip = x_e
    for g in range(n):
        slip += -ratio * alpha[g] * out_g[g]
    for g in range(n):
        out_g[g] = apply_brake(out_g[g], h * brake_g[g] / inertia_g[g])
    return x_e, k * slip, t_eng
