"""Engine + clutch + differential + wheels: the coupled spin update.

Unknowns per vehicle: engine spin ``w_e`` and the spin ``w_g`` of each wheel group. The clutch
passes ``T_c = K (w_e - G sum(beta_g w_g))`` (K = clutch strength, G = gear x final ratio,
``beta`` the differential's torque shares) and group ``g`` receives ``G beta_g T_c``. The shares
that hand out the torque also weight the spins in the clutch's output speed (see
``differential``): the wheels receive ``sum(G beta_g T_c w_g) = T_c G sum(beta_g w_g)``, exactly
the power the clutch passes, so the differential creates no energy in any mode, and the clutch
dissipates ``T_c (w_e - G sum(beta_g w_g)) = K slip^2 >= 0``. With backward-Euler integration of
the clutch and damping terms over a step ``h``::

    (I_e/h + D_e) w_e' + K (v . x') = I_e w_e / h + T_engine
    (I_g/h + D_g) w_g' - G beta_g K (v . x') = I_g w_g / h + T_road_g - B_g   for every group

with ``x = [w_e, w_g...]`` and ``v = [1, -G beta_g...]``: a diagonal matrix plus the symmetric
rank-one ``K v v^T``, and ``B_g`` the brake torque as Coulomb friction inside the same solve
(``|B_g| <= brake_g``: against the group's new spin while it turns, whatever holds it at 0 once
it stops). ``best_possible`` solves it exactly: given the clutch torque ``K (v . x')`` each
group's row stands alone, so the system reduces to one strictly increasing, piecewise-linear
equation in that torque (:func:`_clutch_torque`; without brakes, Sherman-Morrison's solution),
unconditionally stable for any clutch strength and step. Multiplying each row by its new spin
gives the step's energy balance::

    sum(I/2 (x'^2 - x^2)) = h (T_engine w_e' + sum(T_road_g w_g'))
                            - sum(I/2 (x' - x)^2) - h sum(D x'^2) - h K (v . x')^2
                            - h sum(brake_g |w_g'|)

every term after the engine's and the road's work removes energy (backward Euler's own
dissipation, damping, clutch slip, brakes), so the coupling never gains energy whatever the
step, the shares or the brakes. (Braking after the coupled solve instead, the clutch would
have passed power at spins the wheels never reached: under engine braking a wheel the brake
stopped fed the engine.) Where the solved engine spin passes the rev limit (or 0), the limiter holds it there
and the wheels are solved again against the held spin, so the balance holds with the held
spin and the limiter's cut in the engine torque. ``estimate`` runs projected Gauss-Seidel sweeps
of the same symmetric, positive definite system instead (the brake projected in each group's
row) (they converge for any strength; the number
of sweeps sets how close they get: short of convergence the engine's equation balances only to
the sweeps' residual, so ``best_possible`` is the mode for exact energy). Engine torque is explicit; the
tyre (road) torque is ``road - road_damp x omega`` (the scratch's) at the new spin (``tire_models``), its
second part joining ``D_g`` on the diagonal, so the stiff tyre is implicit too.
"""

from __future__ import annotations

import numpy as np

from . import differential, engine, wheel
from . import layout as L
from .jit import jit
from .layout import (
    Packed,
)


@jit
def solve(vp: np.ndarray, curve: np.ndarray, w_e: float, w_g: np.ndarray, inertia_g: np.ndarray,
          damping_g: np.ndarray, road_g: np.ndarray, brake_g: np.ndarray, throttle: float,
          ratio: float, shares: np.ndarray, h: float,
          out_g: np.ndarray) -> tuple[float, float, float, float]:
    """Advance one vehicle's engine and wheel-group spins by ``h``.

    Args:
        vp: the packed vehicle record (``pk.vehicle[0]``); curve: engine torque curve.
        w_e: engine spin (rad/s).
        w_g: group spins (rad/s), one per group.
        inertia_g, damping_g: group inertia (kg m^2) and bearing damping (N m s/rad).
        road_g: tyre torque on each group (N m).
        brake_g: brake torque magnitude per group (N m).
        throttle: in [0, 1].
        ratio: gear x final ratio (0 = disengaged).
        shares: the differential's torque shares per group (also the weights of the group
            spins in the clutch's output speed).
        h: step (s).
        out_g: receives the new group spins.

    Returns:
        ``(w_e, clutch_torque, engine_torque, clutch_slip)``: the new engine spin (rad/s), the
        torque the clutch passed over ``h`` (N m, ``strength x clutch_slip`` when engaged, else
        0), the engine's own torque (N m) and the clutch slip ``w_e - ratio sum(shares_g w_g)``
        at the new spins (rad/s; with ``ratio`` 0 it is the engine spin).
        Where the solved engine spin passes the maximum (or 0) it is held there, as PhysX's
        limiter does, and the wheels are solved again against the clutch turning at the held
        spin (:func:`_clutch_torque` with the engine known): the slip and the clutch torque are then the held
        engine's, so the clutch still only dissipates (``strength x slip^2``; with the slip of
        the unheld spin, wheels overrunning a held engine under throttle were driven by a
        clutch turning slower than they did), and the engine torque returned is net of the
        limiter's cut, so the engine's and the wheels' equations both balance.
    """
    n = len(w_g)
    engaged = ratio != 0.0
    moi = vp.engine_moi
    t_eng = engine.torque(vp.peak_torque, vp.max_omega, curve, throttle, w_e)
    k = vp.clutch_strength if engaged else 0.0
    m_e = moi / h + engine.damping(vp.damping_full_throttle,
                                   vp.damping_zero_throttle_clutch_engaged,
                                   vp.damping_zero_throttle_clutch_disengaged, throttle, engaged)
    b_e = moi * w_e / h + t_eng
    if vp.clutch_implicit > 0.5:                 # exact: one scalar equation in the clutch torque
        coupling = _clutch_torque(1.0 + k / m_e, k * b_e / m_e, k, w_g, inertia_g, damping_g,
                                  road_g, brake_g, ratio, shares, h)
        x_e = (b_e - coupling) / m_e
        _group_spins(coupling, w_g, inertia_g, damping_g, road_g, brake_g, ratio, shares, h, out_g)
    else:                                          # projected Gauss-Seidel sweeps
        x_e = w_e
        out_g[:] = w_g
        for _ in range(int(vp.clutch_iterations)):
            vx = 0.0
            for g in range(n):
                vx += -ratio * shares[g] * out_g[g]
            x_e = (b_e - k * vx) / (m_e + k)
            for g in range(n):
                v_g = -ratio * shares[g]
                rest = x_e + vx - v_g * out_g[g]
                b_g = inertia_g[g] * w_g[g] / h + road_g[g]
                m_g = inertia_g[g] / h + damping_g[g]
                new = _braked(b_g - k * v_g * rest, m_g + k * v_g * v_g, brake_g[g])
                vx += v_g * (new - out_g[g])
                out_g[g] = new
    held = min(max(x_e, 0.0), vp.max_omega)       # the rev limiter (and no backward spin)
    if held != x_e:                                # the wheels meet an engine held there
        coupling = _clutch_torque(1.0, k * held, k, w_g, inertia_g, damping_g, road_g, brake_g,
                                  ratio, shares, h)
        _group_spins(coupling, w_g, inertia_g, damping_g, road_g, brake_g, ratio, shares, h, out_g)
    slip = held                                    # what the clutch passed to the wheels
    for g in range(n):
        slip += -ratio * shares[g] * out_g[g]
    if held != x_e:                                # the limiter's cut: the engine's equation
        t_eng += m_e * held + k * slip - b_e       # balances at the held spin
    return held, k * slip, t_eng, slip


@jit
def _braked(pull: float, diagonal: float, brake: float) -> float:
    """Spin solving ``diagonal x = pull - brake sign(x)``, the brake as Coulomb friction: 0
    where the brake holds the pull (``|pull| <= brake``), else the pull less the brake."""
    if pull > brake:
        return (pull - brake) / diagonal
    if pull < -brake:
        return (pull + brake) / diagonal
    return 0.0


@jit
def _residual(c: float, a: float, d: float, k: float, w_g, inertia_g, damping_g, road_g,
              brake_g, ratio: float, shares, h: float) -> tuple[float, float]:
    """``f(c) = a c - d + K sum(u_g x_g(c))`` and its slope at clutch torque ``c`` (see
    :func:`_clutch_torque`)."""
    f, slope = a * c - d, a
    for g in range(len(w_g)):
        u = ratio * shares[g]
        m_g = inertia_g[g] / h + damping_g[g]
        pull = inertia_g[g] * w_g[g] / h + road_g[g] + u * c
        f += k * u * _braked(pull, m_g, brake_g[g])
        if abs(pull) > brake_g[g] or brake_g[g] <= 0.0:   # unbraked: linear, even at pull 0
            slope += k * u * u / m_g
    return f, slope


@jit
def _clutch_torque(a: float, d: float, k: float, w_g, inertia_g, damping_g, road_g, brake_g,
                   ratio: float, shares, h: float) -> float:
    """The clutch torque ``c = K slip`` at the new spins, the brakes inside the solve.

    Given ``c``, each group's row is its own: ``(I_g/h + D_g) x_g = I_g w_g/h + T_road_g + u_g c
    - brake`` (``u_g = G beta_g``), the brake Coulomb friction (:func:`_braked`), and the engine's
    is ``m_e x_e = b_e - c``. The clutch's own equation ``c = K (x_e - sum(u_g x_g))`` is then
    one scalar equation ``f(c) = a c - d + K sum(u_g x_g(c)) = 0`` with ``a = 1 + K/m_e``,
    ``d = K b_e/m_e`` (an engine the limiter holds at ``w``: ``a = 1``, ``d = K w``). Each ``u_g
    x_g(c)`` is non-decreasing and piecewise linear in ``c`` (flat while the brake holds the
    group), so ``f`` rises strictly and is linear between the groups' breakpoints ``(+-brake -
    I_g w_g/h - T_road_g) / u_g``: the root is found exactly by locating the breakpoints either
    side of it and one linear step. With no brakes this is the Sherman-Morrison solution of the
    diagonal-plus-rank-one system; with them the step stays an implicit Coulomb step, whose
    brakes only take energy (``brake |x_g|``) and never reverse a group."""
    lo, hi = -np.inf, np.inf
    for g in range(len(w_g)):
        u = ratio * shares[g]
        if u == 0.0 or k == 0.0 or brake_g[g] <= 0.0:     # unbraked: no kink, f is linear there
            continue
        base = inertia_g[g] * w_g[g] / h + road_g[g]
        for edge in (brake_g[g], -brake_g[g]):
            c = (edge - base) / u
            f, _ = _residual(c, a, d, k, w_g, inertia_g, damping_g, road_g, brake_g, ratio,
                             shares, h)
            if f <= 0.0:
                lo = max(lo, c)
            else:
                hi = min(hi, c)
    if np.isfinite(lo) and np.isfinite(hi):
        p = 0.5 * (lo + hi)
    elif np.isfinite(lo):
        p = lo + 1.0
    elif np.isfinite(hi):
        p = hi - 1.0
    else:
        p = 0.0
    f, slope = _residual(p, a, d, k, w_g, inertia_g, damping_g, road_g, brake_g, ratio, shares,
                         h)
    return p - f / slope


@jit
def _group_spins(c: float, w_g, inertia_g, damping_g, road_g, brake_g, ratio: float, shares,
                 h: float, out_g) -> None:
    """The group spins (into ``out_g``) the clutch torque ``c`` gives, braked."""
    for g in range(len(w_g)):
        out_g[g] = _braked(inertia_g[g] * w_g[g] / h + road_g[g] + ratio * shares[g] * c,
                           inertia_g[g] / h + damping_g[g], brake_g[g])


@jit
def spin(pk: Packed, ws, vs, cw, thrust_l, thrust_r, throttle, ratio, h, s, g, out):
    """6b. Wheel (and engine) spin over ``h``; returns ``(engine_torque, clutch_slip)`` (N m,
    rad/s; zeros for direct drive), see :func:`solve`."""
    vp, wp = pk.vehicle[0], pk.wheel
    n = wp.shape[0]
    if int(vp.diff_type) == L.DIRECT:
        for w in range(n):
            ws[w].omega = wheel.integrate_spin(ws[w].omega, cw[w].wheel_torque,
                                                  s[w].road, s[w].brake, wp[w].moi,
                                                  wp[w].damping_rate + s[w].road_damp, h)
            ws[w].drive_torque = cw[w].wheel_torque
        return 0.0, 0.0
    n_g = int(vp.n_groups)
    for j in range(n_g):                          # the groups' sums start from zero
        r = g[j]
        r.spin, r.inertia, r.damping, r.road, r.brake = 0.0, 0.0, 0.0, 0.0, 0.0
        r.share, r.new_spin, r.count = 0.0, 0.0, 0.0
    for w in range(n):                                   # wheel groups (a tank track = a group)
        j = int(wp[w].group)
        g[j].spin += ws[w].omega
        g[j].inertia += wp[w].moi
        g[j].damping += wp[w].damping_rate + s[w].road_damp   # + the tyre's, implicit
        g[j].road += s[w].road
        g[j].brake += s[w].brake
        g[j].count += 1.0
    for j in range(n_g):
        g[j].spin /= g[j].count
    differential.ratios(vp, wp["base_split"], wp["group"], ws["omega"],
                        out["in_contact"], out["spring_force"], thrust_l, thrust_r,
                        g["share"][:n_g])
    _split_override(pk, cw, g)
    w_e, clutch, t_eng, slip = solve(
        vp, pk.torque_curve, vs.engine_omega, g["spin"][:n_g], g["inertia"][:n_g],
        g["damping"][:n_g], g["road"][:n_g], g["brake"][:n_g], throttle, ratio,
        g["share"][:n_g], h, g["new_spin"][:n_g])
    vs.engine_omega = w_e
    for w in range(n):
        j = int(wp[w].group)
        ws[w].omega = g[j].new_spin
        ws[w].drive_torque = g[j].share * ratio * clutch / g[j].count
    return t_eng, slip


@jit
def _split_override(pk: Packed, cw, g) -> None:
    """Per-wheel torque shares from the commands (not NaN) replace the differential's; with no
    positive share on a driven wheel, its base split (no slip or load bias). The commanded
    shares weight the clutch's output speed too (see the module docstring): all the torque on
    the fastest wheel passes the power that wheel takes, not more. A spool's group takes the
    sum of its wheels' shares (its wheels turn as one)."""
    wp = pk.wheel
    if int(pk.vehicle[0].diff_type) == L.TANK:
        return
    given = False
    for w in range(wp.shape[0]):
        given = given or not np.isnan(cw[w].torque_split)
    if not given:
        return
    total = 0.0
    for w in range(wp.shape[0]):
        v = cw[w].torque_split
        if not np.isnan(v) and v > 0.0 and wp[w].base_split > 0.0:
            total += v
    g["share"][:int(pk.vehicle[0].n_groups)] = 0.0
    for w in range(wp.shape[0]):
        v = cw[w].torque_split
        share = v if (not np.isnan(v) and v > 0.0 and wp[w].base_split > 0.0) else 0.0
        g[int(wp[w].group)].share += share / total if total > 0.0 else wp[w].base_split
