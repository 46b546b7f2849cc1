"""Engine + clutch + differential + wheels: the coupled spin update.

Unknowns per vehicle: engine spin ``w_e`` and the spin ``w_g`` of each wheel group. With clutch
torque ``T_c = K (w_e - G sum(alpha_g w_g))`` (K = clutch strength, G = gear x final ratio) and
backward-Euler integration of the clutch and damping terms over a step ``h``::

    (I_e/h + D_e) w_e' + K (v . x') = I_e w_e / h + T_engine
    (I_g/h + D_g) w_g' - G beta_g K (v . x') = I_g w_g / h + T_road_g        for every group

with ``x = [w_e, w_g...]`` and ``v = [1, -G alpha_g...]``. The matrix is diagonal plus the rank-one
``K u v^T`` (``u = [1, -G beta_g...]``), so ``best_possible`` solves it exactly in O(n) with the
Sherman-Morrison formula: unconditionally stable for any clutch strength and step. ``estimate``
runs Gauss-Seidel sweeps instead. Engine torque is explicit; the tyre (road) torque is
``S_ROAD - S_ROAD_DAMP x omega`` at the new spin (``tire_models``), its second part joining
``D_g`` on the diagonal, so the stiff tyre is implicit too; brakes are applied afterwards as
Coulomb friction against that diagonal: they stop a group but never reverse it.
"""

from __future__ import annotations

import numpy as np

from . import differential, engine, wheel
from . import layout as L
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
    Packed,
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
        ``(w_e, clutch_torque, engine_torque, clutch_slip)``: the new engine spin (rad/s), the
        torque the clutch passed over ``h`` (N m, ``strength x clutch_slip`` when engaged, else
        0), the engine's own torque (N m) and the clutch slip ``w_e - ratio sum(alpha_g w_g)``
        at the new spins, before the brakes (rad/s; with ``ratio`` 0 it is the engine spin).
        Where the solved engine spin passes the maximum (or 0) it is held there, as PhysX's
        limiter does; the engine torque returned is then net of the limiter's cut and the slip
        is the solve's, so the engine's and the wheels' equations both balance.
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
        inv_h, inv_m_e = 1.0 / h, 1.0 / m_e
        v_y, v_z = b_e * inv_m_e, inv_m_e
        for g in range(n):                        # out_g holds b_g / m_g until the update
            inv_m_g = 1.0 / (inertia_g[g] * inv_h + damping_g[g])
            out_g[g] = (inertia_g[g] * w_g[g] * inv_h + road_g[g]) * inv_m_g
            v_g = -ratio * alpha[g]
            v_y += v_g * out_g[g]
            v_z += v_g * (-ratio * beta[g]) * inv_m_g
        coef = k * v_y / (1.0 + k * v_z)
        x_e = (b_e - coef) * inv_m_e
        for g in range(n):
            out_g[g] += ratio * beta[g] * coef / (inertia_g[g] * inv_h + damping_g[g])
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
    slip = x_e                                     # what the clutch passed to the wheels
    for g in range(n):
        slip += -ratio * alpha[g] * out_g[g]
    held = min(max(x_e, 0.0), vp[MAX_OMEGA])       # the rev limiter (and no backward spin)
    t_eng -= m_e * (x_e - held)                    # its cut: the engine's net torque balances
    x_e = held
    if not engaged:                                # nothing passed: the slip is the engine's spin
        slip = held
    for g in range(n):                             # Coulomb brakes against the implicit diagonal
        out_g[g] = apply_brake(out_g[g], brake_g[g] / (inertia_g[g] / h + damping_g[g]))
    return x_e, k * slip, t_eng, slip


@jit
def spin(pk: Packed, ws, vs, cw, thrust_l, thrust_r, throttle, ratio, h, s, g, out):
    """6b. Wheel (and engine) spin over ``h``; returns ``(engine_torque, clutch_slip)`` (N m,
    rad/s; zeros for direct drive), see :func:`solve`."""
    vp, wp = pk.vehicle, pk.wheel
    n = wp.shape[0]
    if int(vp[L.DIFF_TYPE]) == L.DIRECT:
        for w in range(n):
            ws[w, L.OMEGA] = wheel.integrate_spin(ws[w, L.OMEGA], cw[w, L.WHEEL_TORQUE],
                                                  s[w, L.S_ROAD], s[w, L.S_BRAKE], wp[w, L.MOI],
                                                  wp[w, L.DAMPING] + s[w, L.S_ROAD_DAMP], h)
            ws[w, L.DRIVE_TORQUE] = cw[w, L.WHEEL_TORQUE]
        return 0.0, 0.0
    n_g = int(vp[L.N_GROUPS])
    g[:n_g] = 0.0
    for w in range(n):                                   # wheel groups (a tank track = a group)
        j = int(wp[w, L.GROUP])
        g[j, L.G_SPIN] += ws[w, L.OMEGA]
        g[j, L.G_INERTIA] += wp[w, L.MOI]
        g[j, L.G_DAMPING] += wp[w, L.DAMPING] + s[w, L.S_ROAD_DAMP]   # + the tyre's, implicit
        g[j, L.G_ROAD] += s[w, L.S_ROAD]
        g[j, L.G_BRAKE] += s[w, L.S_BRAKE]
        g[j, L.G_COUNT] += 1.0
    for j in range(n_g):
        g[j, L.G_SPIN] /= g[j, L.G_COUNT]
    differential.ratios(vp, wp[:, L.BASE_SPLIT], ws[:, L.OMEGA], out[:, L.O_CONTACT],
                        out[:, L.O_SPRING_FORCE], thrust_l, thrust_r, g[:n_g, L.G_BETA],
                        g[:n_g, L.G_ALPHA])
    _split_override(pk, cw, g)
    w_e, clutch, t_eng, slip = solve(
        vp, pk.torque_curve, vs[L.ENGINE_OMEGA], g[:n_g, L.G_SPIN], g[:n_g, L.G_INERTIA],
        g[:n_g, L.G_DAMPING], g[:n_g, L.G_ROAD], g[:n_g, L.G_BRAKE], throttle, ratio,
        g[:n_g, L.G_BETA], g[:n_g, L.G_ALPHA], h, g[:n_g, L.G_NEW])
    vs[L.ENGINE_OMEGA] = w_e
    for w in range(n):
        j = int(wp[w, L.GROUP])
        ws[w, L.OMEGA] = g[j, L.G_NEW]
        ws[w, L.DRIVE_TORQUE] = g[j, L.G_BETA] * ratio * clutch / g[j, L.G_COUNT]
    return t_eng, slip


@jit
def _split_override(pk: Packed, cw, g) -> None:
    """Per-wheel torque ratios from the commands (not NaN) replace the differential's; with no
    positive share on a driven wheel, its base split (``alpha``: no slip or load bias)."""
    wp = pk.wheel
    if int(pk.vehicle[L.DIFF_TYPE]) == L.TANK:
        return
    given = False
    for w in range(wp.shape[0]):
        given = given or not np.isnan(cw[w, L.TORQUE_SPLIT])
    if not given:
        return
    total = 0.0
    for w in range(wp.shape[0]):
        v = cw[w, L.TORQUE_SPLIT]
        if not np.isnan(v) and v > 0.0 and wp[w, L.BASE_SPLIT] > 0.0:
            total += v
    for w in range(wp.shape[0]):
        v = cw[w, L.TORQUE_SPLIT]
        share = v if (not np.isnan(v) and v > 0.0 and wp[w, L.BASE_SPLIT] > 0.0) else 0.0
        g[w, L.G_BETA] = share / total if total > 0.0 else g[w, L.G_ALPHA]
