"""The vehicle update: one commented sequence, reading top to bottom like the physics.

commands -> gears -> steering -> suspension (+ anti-roll bars) -> tyre loads -> contact frame ->
sticky tyre -> [substeps: slips -> tyre forces -> drivetrain and wheel spin] -> forces out.

Compiled with numba over the packed arrays of ``layout.py``: :func:`step_batch` advances every
vehicle of a batch in one call (the simulator coupling in ``traction.envs`` calls it between
``mj_step1`` and ``mj_step2``); :func:`step` is the same update for numpy users, on the
dataclasses of ``vehicle.py``.
"""

from __future__ import annotations

import numpy as np
from numba import objmode

from . import (
    antiroll,
    differential,
    drivetrain,
    gearbox,
    steering,
    sticky,
    suspension,
    tire,
    tire_custom,
    tire_models,
    wheel,
)
from . import layout as L
from .jit import jit, jit_inline
from .layout import Packed
from .surface import FrictionTable
from .vehicle import ChassisKinematics, Commands, GroundHits, VehicleOutputs, VehicleParams, VehicleState

NO_GEAR_REQUEST = -2


@jit_inline
def _rot(k: np.ndarray, i: int, j: int) -> float:
    """World-from-chassis rotation entry (row-major in the kinematics row)."""
    return k[L.K_ROTATION + 3 * i + j]


@jit_inline
def _to_world(k: np.ndarray, x: float, y: float, z: float) -> tuple[float, float, float]:
    return (_rot(k, 0, 0) * x + _rot(k, 0, 1) * y + _rot(k, 0, 2) * z,
            _rot(k, 1, 0) * x + _rot(k, 1, 1) * y + _rot(k, 1, 2) * z,
            _rot(k, 2, 0) * x + _rot(k, 2, 1) * y + _rot(k, 2, 2) * z)


@jit_inline
def _to_body(k: np.ndarray, x: float, y: float, z: float) -> tuple[float, float, float]:
    return (_rot(k, 0, 0) * x + _rot(k, 1, 0) * y + _rot(k, 2, 0) * z,
            _rot(k, 0, 1) * x + _rot(k, 1, 1) * y + _rot(k, 2, 1) * z,
            _rot(k, 0, 2) * x + _rot(k, 1, 2) * y + _rot(k, 2, 2) * z)


@jit_inline
def _cross(a0, a1, a2, b0, b1, b2) -> tuple[float, float, float]:
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@jit
def _commands(pk: Packed, gears, vs, cv, cw, dt, s, out) -> tuple[float, float]:
    """1. Brake torque and steer angle per wheel; gears; returns ``(throttle, ratio)``."""
    vp, wp = pk.vehicle, pk.wheel
    brake = min(max(cv[L.BRAKE], 0.0), 1.0)
    handbrake = min(max(cv[L.HANDBRAKE], 0.0), 1.0)
    steer = min(max(cv[L.STEER], -1.0), 1.0)
    tank_standard = int(vp[L.DIFF_TYPE]) == L.TANK and vp[L.TANK_SPECIAL] < 0.5
    for w in range(wp.shape[0]):
        b = max(brake, min(max(cw[w, L.WHEEL_BRAKE], 0.0), 1.0))
        if tank_standard:                        # pulling a track's stick back brakes that side
            b = max(b, min(max(-cv[L.THRUST + int(wp[w, L.GROUP])], 0.0), 1.0))
        s[w, L.S_BRAKE] = b * wp[w, L.MAX_BRAKE] + handbrake * wp[w, L.MAX_HANDBRAKE]
        angle = steering.steer_angle(vp, wp, w, steer) + cw[w, L.WHEEL_STEER]
        limit = wp[w, L.MAX_STEER]
        out[w, L.O_STEER] = min(max(angle, -limit), limit) + wp[w, L.TOE]
    throttle = min(max(cv[L.THROTTLE], 0.0), 1.0)
    if int(vp[L.DIFF_TYPE]) == L.DIRECT:
        return throttle, 0.0
    want = int(cv[L.TARGET_GEAR])
    if want == NO_GEAR_REQUEST:
        want = gears[L.GEAR] + int(cv[L.GEAR_UP] > 0.5) - int(cv[L.GEAR_DOWN] > 0.5)
    gearbox.shift(vp, pk.shift_up, pk.shift_down, gears, vs, want,
                  vs[L.ENGINE_OMEGA] / vp[L.MAX_OMEGA], dt)
    if gears[L.AUTO_SHIFT]:
        throttle = 0.0                           # autobox shifts cut the throttle
    return throttle, gearbox.effective_ratio(vp, pk.gear_ratios, gears, vs)


@jit
def _suspension(pk: Packed, k, hits, gravity, s, out) -> None:
    """2. Suspension line in the world, where it meets the ground, strut force; 3. tyre loads."""
    vp, wp = pk.vehicle, pk.wheel
    for w in range(wp.shape[0]):
        p = wp[w]
        r, max_c = p[L.RADIUS], p[L.MAX_COMPRESSION]
        d0, d1, d2 = _to_world(k, p[L.TRAVEL], p[L.TRAVEL + 1], p[L.TRAVEL + 2])
        n0, n1, n2 = hits[w, L.H_NORMAL], hits[w, L.H_NORMAL + 1], hits[w, L.H_NORMAL + 2]
        cos_inc = -(d0 * n0 + d1 * n1 + d2 * n2)
        jounce, contact, over = suspension.jounce_from_hit(max_c, p[L.MAX_DROOP], r,
                                                           hits[w, L.H_DIST], cos_inc)
        s0, s1, s2 = _to_world(k, p[L.RAY_START], p[L.RAY_START + 1], p[L.RAY_START + 2])
        along = max_c + r - jounce                   # ray start -> wheel centre
        a0 = k[L.K_POSITION] + s0 + d0 * along - n0 * r - k[L.K_COM]       # patch - CoM
        a1 = k[L.K_POSITION + 1] + s1 + d1 * along - n1 * r - k[L.K_COM + 1]
        a2 = k[L.K_POSITION + 2] + s2 + d2 * along - n2 * r - k[L.K_COM + 2]
        c0, c1, c2 = _cross(k[L.K_ANGULAR], k[L.K_ANGULAR + 1], k[L.K_ANGULAR + 2], a0, a1, a2)
        v0, v1, v2 = k[L.K_VELOCITY] + c0, k[L.K_VELOCITY + 1] + c1, k[L.K_VELOCITY + 2] + c2
        rate = -(v0 * n0 + v1 * n1 + v2 * n2) / max(cos_inc, 0.1) if contact else 0.0
        out[w, L.O_SPRING_FORCE] = suspension.spring_force(
            p[L.SPRUNG_MASS], p[L.SPRING], p[L.DAMPER], p[L.BUMP_STOP], jounce, rate, over,
            contact, gravity)
        out[w, L.O_JOUNCE], out[w, L.O_CONTACT] = jounce, 1.0 if contact else 0.0
        s[w, L.S_DOWN], s[w, L.S_DOWN + 1], s[w, L.S_DOWN + 2] = d0, d1, d2
        s[w, L.S_ARM], s[w, L.S_ARM + 1], s[w, L.S_ARM + 2] = a0, a1, a2
        s[w, L.S_V_PATCH], s[w, L.S_V_PATCH + 1], s[w, L.S_V_PATCH + 2] = v0, v1, v2
    antiroll.add_forces(pk.bars, out[:, L.O_JOUNCE], out[:, L.O_CONTACT], out[:, L.O_SPRING_FORCE])
    for w in range(wp.shape[0]):
        rest = wp[w, L.SPRUNG_MASS] * gravity
        normalised = out[w, L.O_SPRING_FORCE] / rest
        filtered = 0.0
        if out[w, L.O_CONTACT] > 0.5:
            filtered = tire.filtered_load(vp[L.LOAD_MIN], vp[L.LOAD_MIN_FILTERED], vp[L.LOAD_MAX],
                                          vp[L.LOAD_MAX_FILTERED], normalised)
        out[w, L.O_NORMALISED_LOAD], out[w, L.O_LOAD] = normalised, filtered * rest


@jit
def _useful_mass(pk: Packed, k, w, a0, a1, a2, d0, d1, d2) -> float:
    """Effective mass (kg) a tyre force along ``d`` at the patch (arm ``a`` from the CoM) meets:
    the wheel's sprung mass with its share of the chassis inertia, ``1/m = 1/m_s + (r x d) .
    J_s^-1 (r x d)`` in body axes."""
    vp = pk.vehicle
    m_s = pk.wheel[w, L.SPRUNG_MASS]
    share = m_s / vp[L.CHASSIS_MASS]
    x0, x1, x2 = _cross(a0, a1, a2, d0, d1, d2)
    b0, b1, b2 = _to_body(k, x0, x1, x2)
    inv = (1.0 / m_s + b0 * b0 / (vp[L.CHASSIS_INERTIA] * share)
           + b1 * b1 / (vp[L.CHASSIS_INERTIA + 1] * share) + b2 * b2 / (vp[L.CHASSIS_INERTIA + 2] * share))
    return 1.0 / inv


@jit
def _contact_frame(pk: Packed, k, hits, friction, ws, s, out) -> None:
    """4. Wheel heading projected on the ground plane, lateral to its left; patch velocity in
    that frame, surface friction, camber, useful masses."""
    wp = pk.wheel
    for w in range(wp.shape[0]):
        p = wp[w]
        n0, n1, n2 = hits[w, L.H_NORMAL], hits[w, L.H_NORMAL + 1], hits[w, L.H_NORMAL + 2]
        h0, h1, h2 = _to_world(k, np.cos(out[w, L.O_STEER]), np.sin(out[w, L.O_STEER]), 0.0)
        along = h0 * n0 + h1 * n1 + h2 * n2
        f0, f1, f2 = h0 - n0 * along, h1 - n1 * along, h2 - n2 * along
        norm = max(np.sqrt(f0 * f0 + f1 * f1 + f2 * f2), 1e-9)
        f0, f1, f2 = f0 / norm, f1 / norm, f2 / norm
        l0, l1, l2 = _cross(n0, n1, n2, f0, f1, f2)
        v0, v1, v2 = s[w, L.S_V_PATCH], s[w, L.S_V_PATCH + 1], s[w, L.S_V_PATCH + 2]
        s[w, L.S_V_LONG] = v0 * f0 + v1 * f1 + v2 * f2
        s[w, L.S_V_LAT] = v0 * l0 + v1 * l1 + v2 * l2
        surface = int(hits[w, L.H_SURFACE])
        if surface < 0 or surface >= friction.shape[0]:
            surface = 0                                   # unknown surfaces use type 0
        tire_type = min(max(int(p[L.TIRE_TYPE]), 0), friction.shape[1] - 1)
        s[w, L.S_MU_SURFACE] = friction[surface, tire_type]
        out[w, L.O_CAMBER] = suspension.camber(
            p[L.CAMBER_REST], p[L.CAMBER_COMPRESSION], p[L.CAMBER_DROOP], p[L.MAX_COMPRESSION],
            p[L.MAX_DROOP], out[w, L.O_JOUNCE])
        a0, a1, a2 = s[w, L.S_ARM], s[w, L.S_ARM + 1], s[w, L.S_ARM + 2]
        s[w, L.S_MASS_LONG] = _useful_mass(pk, k, w, a0, a1, a2, f0, f1, f2)
        s[w, L.S_MASS_LAT] = _useful_mass(pk, k, w, a0, a1, a2, l0, l1, l2)
        s[w, L.S_FWD], s[w, L.S_FWD + 1], s[w, L.S_FWD + 2] = f0, f1, f2
        s[w, L.S_LEFT], s[w, L.S_LEFT + 1], s[w, L.S_LEFT + 2] = l0, l1, l2


@jit
def _sticky(pk: Packed, ws, dt, s, out) -> None:
    """5. Sticky tyre (static friction at rest), once per update."""
    vp, wp = pk.vehicle, pk.wheel
    speed, time = vp[L.STICKY_SPEED], vp[L.STICKY_TIME]
    freq, zeta = vp[L.STICKY_FREQUENCY], vp[L.STICKY_DAMPING]
    for w in range(wp.shape[0]):
        contact = out[w, L.O_CONTACT] > 0.5
        omega, v_long = ws[w, L.OMEGA], s[w, L.S_V_LONG]
        mu_limit = s[w, L.S_MU_SURFACE] * wp[w, L.STATIC_COEF] * out[w, L.O_LOAD]
        locked = omega == 0.0 and s[w, L.S_BRAKE] > 0.0
        still = abs(v_long) < speed and abs(v_long - omega * wp[w, L.RADIUS]) < speed
        m_s = wp[w, L.SPRUNG_MASS]
        ws[w, L.ANCHOR], ws[w, L.TIMER], active, f = sticky.update(
            speed, time, freq, zeta, ws[w, L.ANCHOR], ws[w, L.TIMER], v_long, contact and locked,
            m_s, mu_limit, dt)
        s[w, L.S_STICK_LONG], s[w, L.S_F_STICK_LONG] = 1.0 if active else 0.0, f
        ws[w, L.ANCHOR + 1], ws[w, L.TIMER + 1], active, f = sticky.update(
            speed, time, freq, zeta, ws[w, L.ANCHOR + 1], ws[w, L.TIMER + 1], s[w, L.S_V_LAT],
            contact and still, m_s, mu_limit, dt)
        s[w, L.S_STICK_LAT], s[w, L.S_F_STICK_LAT] = 1.0 if active else 0.0, f


@jit
def _tire_forces(pk: Packed, ws, gravity, h, s, x, out) -> None:
    """6a. Slips and tyre forces of every wheel for one wheel substep (sticky tyres override)."""
    vp, wp = pk.vehicle, pk.wheel
    for w in range(wp.shape[0]):
        p = wp[w]
        contact = out[w, L.O_CONTACT] > 0.5
        v_long, v_lat, omega = s[w, L.S_V_LONG], s[w, L.S_V_LAT], ws[w, L.OMEGA]
        long_slip, lat_slip = 0.0, 0.0
        if contact:
            long_slip, lat_slip = tire.slips(v_long, v_lat, omega * p[L.RADIUS],
                                             vp[L.MIN_LONG_DENOM], vp[L.MIN_LAT_DENOM])
        physx = int(p[L.TIRE_MODEL]) == tire_models.PHYSX
        mu = s[w, L.S_MU_SURFACE] * (tire.friction_multiplier(p, long_slip) if physx else 1.0)
        xr = x[w]
        xr[L.X_V_LONG], xr[L.X_V_LAT], xr[L.X_OMEGA] = v_long, v_lat, omega
        xr[L.X_LONG_SLIP], xr[L.X_LAT_SLIP], xr[L.X_CAMBER] = long_slip, lat_slip, out[w, L.O_CAMBER]
        xr[L.X_FRICTION], xr[L.X_SURFACE_FRICTION], xr[L.X_LOAD] = mu, s[w, L.S_MU_SURFACE], out[w, L.O_LOAD]
        xr[L.X_REST_LOAD] = p[L.SPRUNG_MASS] * gravity
        xr[L.X_NORMALISED_LOAD] = out[w, L.O_LOAD] / xr[L.X_REST_LOAD]
        xr[L.X_GRAVITY], xr[L.X_DT], xr[L.X_DRIVE_TORQUE] = gravity, h, ws[w, L.DRIVE_TORQUE]
        xr[L.X_MASS_LONG], xr[L.X_MASS_LAT] = s[w, L.S_MASS_LONG], s[w, L.S_MASS_LAT]
        f_long, f_lat, moment, road = 0.0, 0.0, 0.0, 0.0
        if contact:
            f_long, f_lat, moment, road = tire_models.forces(p, xr, pk.families, pk.family_index,
                                                             pk.points)
        out[w, L.O_LONG_SLIP], out[w, L.O_LAT_SLIP], out[w, L.O_FRICTION] = long_slip, lat_slip, mu
        out[w, L.O_LONG_FORCE], out[w, L.O_LAT_FORCE] = f_long, f_lat
        out[w, L.O_MOMENT], s[w, L.S_ROAD] = moment, road
    if vp[L.HAS_CUSTOM] > 0.5:
        _custom_tires(pk, x, s, out)
    for w in range(wp.shape[0]):
        stick_long, stick_lat = s[w, L.S_STICK_LONG] > 0.5, s[w, L.S_STICK_LAT] > 0.5
        if not (stick_long or stick_lat):
            continue
        f_long = s[w, L.S_F_STICK_LONG] if stick_long else out[w, L.O_LONG_FORCE]
        f_lat = s[w, L.S_F_STICK_LAT] if stick_lat else out[w, L.O_LAT_FORCE]
        cap = out[w, L.O_FRICTION] * out[w, L.O_LOAD] * wp[w, L.CAP_COEF]
        scale = min(1.0, cap / max(np.hypot(f_long, f_lat), 1e-9))
        out[w, L.O_LONG_FORCE], out[w, L.O_LAT_FORCE] = f_long * scale, f_lat * scale
        if stick_long:
            s[w, L.S_ROAD] = -f_long * scale * wp[w, L.RADIUS]


@jit
def _custom_tires(pk: Packed, x, s, out) -> None:
    """Custom (Python) tyre functions for the wheels that use them, in one object-mode call."""
    wp = pk.wheel
    cols = np.nonzero(wp[:, L.TIRE_MODEL] == tire_models.CUSTOM)[0]
    rows = np.ascontiguousarray(x[cols])
    radius = np.ascontiguousarray(wp[cols, L.RADIUS])
    index = int(wp[cols[0], L.CUSTOM_INDEX])
    with objmode(res="float64[:, :]"):
        res = tire_custom.call(index, rows, radius)
    for i in range(len(cols)):
        w = cols[i]
        if out[w, L.O_CONTACT] > 0.5:
            out[w, L.O_LONG_FORCE], out[w, L.O_LAT_FORCE] = res[i, 0], res[i, 1]
            out[w, L.O_MOMENT], s[w, L.S_ROAD] = res[i, 2], res[i, 3]


@jit
def _spin(pk: Packed, ws, vs, cw, thrust_l, thrust_r, throttle, ratio, h, s, g, out):
    """6b. Wheel (and engine) spin over ``h``; returns ``(engine_torque, clutch_torque)``."""
    vp, wp = pk.vehicle, pk.wheel
    n = wp.shape[0]
    if int(vp[L.DIFF_TYPE]) == L.DIRECT:
        for w in range(n):
            ws[w, L.OMEGA] = wheel.integrate_spin(ws[w, L.OMEGA], cw[w, L.WHEEL_TORQUE],
                                                  s[w, L.S_ROAD], s[w, L.S_BRAKE], wp[w, L.MOI],
                                                  wp[w, L.DAMPING], h)
            ws[w, L.DRIVE_TORQUE] = cw[w, L.WHEEL_TORQUE]
        return 0.0, 0.0
    n_g = int(vp[L.N_GROUPS])
    g[:n_g] = 0.0
    for w in range(n):                                   # wheel groups (a tank track = a group)
        j = int(wp[w, L.GROUP])
        g[j, L.G_SPIN] += ws[w, L.OMEGA]
        g[j, L.G_INERTIA] += wp[w, L.MOI]
        g[j, L.G_DAMPING] += wp[w, L.DAMPING]
        g[j, L.G_ROAD] += s[w, L.S_ROAD]
        g[j, L.G_BRAKE] += s[w, L.S_BRAKE]
        g[j, L.G_COUNT] += 1.0
    for j in range(n_g):
        g[j, L.G_SPIN] /= g[j, L.G_COUNT]
    differential.ratios(vp, wp[:, L.BASE_SPLIT], ws[:, L.OMEGA], out[:, L.O_CONTACT],
                        out[:, L.O_SPRING_FORCE], thrust_l, thrust_r, g[:n_g, L.G_BETA],
                        g[:n_g, L.G_ALPHA])
    _split_override(pk, cw, g)
    w_e, clutch, t_eng = drivetrain.solve(
        vp, pk.torque_curve, vs[L.ENGINE_OMEGA], g[:n_g, L.G_SPIN], g[:n_g, L.G_INERTIA],
        g[:n_g, L.G_DAMPING], g[:n_g, L.G_ROAD], g[:n_g, L.G_BRAKE], throttle, ratio,
        g[:n_g, L.G_BETA], g[:n_g, L.G_ALPHA], h, g[:n_g, L.G_NEW])
    vs[L.ENGINE_OMEGA] = w_e
    for w in range(n):
        j = int(wp[w, L.GROUP])
        ws[w, L.OMEGA] = g[j, L.G_NEW]
        ws[w, L.DRIVE_TORQUE] = g[j, L.G_BETA] * ratio * clutch / g[j, L.G_COUNT]
    return t_eng, clutch


@jit
def _split_override(pk: Packed, cw, g) -> None:
    """Per-wheel torque ratios from the commands (not NaN) replace the differential's."""
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


@jit
def _forces_out(pk: Packed, k, ws, dt, s, out, out_v) -> None:
    """7. Forces out, world frame, with their application points, and the chassis wrench."""
    wp = pk.wheel
    wrench = out_v[L.O_WRENCH:L.O_WRENCH + 6]
    wrench[:] = 0.0
    for w in range(wp.shape[0]):
        p = wp[w]
        f_long = s[w, L.S_ACC_LONG] / dt
        f_lat = s[w, L.S_ACC_LAT] / dt
        out[w, L.O_LONG_FORCE], out[w, L.O_LAT_FORCE] = f_long, f_lat
        out[w, L.O_DRIVE_TORQUE] = s[w, L.S_ACC_DRIVE] / dt
        out[w, L.O_PATCH_SLIDE] = s[w, L.S_V_LONG] - ws[w, L.OMEGA] * p[L.RADIUS]
        out[w, L.O_PATCH_SLIDE + 1] = s[w, L.S_V_LAT]
        spring = out[w, L.O_SPRING_FORCE]
        for i in range(3):
            out[w, L.O_TIRE_FORCE + i] = s[w, L.S_FWD + i] * f_long + s[w, L.S_LEFT + i] * f_lat
            out[w, L.O_SUSP_FORCE + i] = -s[w, L.S_DOWN + i] * spring
        for col, point in ((L.O_SUSP_POINT, L.FORCE_POINT), (L.O_TIRE_POINT, L.TIRE_FORCE_POINT)):
            q0, q1, q2 = _to_world(k, p[point], p[point + 1], p[point + 2])
            out[w, col] = k[L.K_POSITION] + q0
            out[w, col + 1] = k[L.K_POSITION + 1] + q1
            out[w, col + 2] = k[L.K_POSITION + 2] + q2
        for force, point in ((L.O_SUSP_FORCE, L.O_SUSP_POINT), (L.O_TIRE_FORCE, L.O_TIRE_POINT)):
            t = _cross(out[w, point] - k[L.K_COM], out[w, point + 1] - k[L.K_COM + 1],
                       out[w, point + 2] - k[L.K_COM + 2], out[w, force], out[w, force + 1],
                       out[w, force + 2])
            for i in range(3):
                wrench[i] += out[w, force + i]
                wrench[3 + i] += t[i]
    _pitch_roll_scaling(pk, k, out, out_v)
    for i in range(3):
        wrench[3 + i] += out_v[L.O_EXTRA_TORQUE + i]


@jit
def _pitch_roll_scaling(pk: Packed, k, out, out_v) -> None:
    """World torque removing the unwanted share of the tyre forces' pitch and roll moments."""
    vp = pk.vehicle
    out_v[L.O_EXTRA_TORQUE:L.O_EXTRA_TORQUE + 3] = 0.0
    if vp[L.KEEP_PITCH] == 1.0 and vp[L.KEEP_ROLL] == 1.0:
        return
    m0, m1, m2 = 0.0, 0.0, 0.0                       # tyre moment about the CoM, world
    for w in range(out.shape[0]):
        t = _cross(out[w, L.O_TIRE_POINT] - k[L.K_COM], out[w, L.O_TIRE_POINT + 1] - k[L.K_COM + 1],
                   out[w, L.O_TIRE_POINT + 2] - k[L.K_COM + 2], out[w, L.O_TIRE_FORCE],
                   out[w, L.O_TIRE_FORCE + 1], out[w, L.O_TIRE_FORCE + 2])
        m0, m1, m2 = m0 + t[0], m1 + t[1], m2 + t[2]
    b0, b1, _ = _to_body(k, m0, m1, m2)
    e = _to_world(k, -(1.0 - vp[L.KEEP_ROLL]) * b0, -(1.0 - vp[L.KEEP_PITCH]) * b1, 0.0)
    out_v[L.O_EXTRA_TORQUE], out_v[L.O_EXTRA_TORQUE + 1], out_v[L.O_EXTRA_TORQUE + 2] = e


@jit
def step_vehicle(pk: Packed, ws, vs, gears, cv, cw, k, hits, friction, dt, gravity, out, out_v,
                 s, x, g) -> None:
    """Advance one vehicle by ``dt``: state rows updated in place, outputs written.

    The chassis velocity is held during the wheel substeps and the tyre forces are averaged over
    them; forces are for the simulator to apply for the next ``dt``. ``s``, ``x`` and ``g`` are
    scratch (``N_SCRATCH``, ``N_TIRE_INPUTS`` and ``N_GROUP_SCRATCH`` columns per wheel).
    """
    vp = pk.vehicle
    throttle, ratio = _commands(pk, gears, vs, cv, cw, dt, s, out)     # 1. commands, gears
    _suspension(pk, k, hits, gravity, s, out)                              # 2.-3. struts, loads
    _contact_frame(pk, k, hits, friction, ws, s, out)                      # 4. contact frame
    _sticky(pk, ws, dt, s, out)                                            # 5. static friction
    fwd_speed = abs(k[L.K_VELOCITY] * _rot(k, 0, 0) + k[L.K_VELOCITY + 1] * _rot(k, 1, 0)
                    + k[L.K_VELOCITY + 2] * _rot(k, 2, 0))
    n_sub = int(vp[L.SUBSTEPS_LOW] if fwd_speed < vp[L.SUBSTEP_SPEED] else vp[L.SUBSTEPS_HIGH])
    h = dt / n_sub
    thrust_l = min(max(cv[L.THRUST], -1.0), 1.0)        # tank tracks
    thrust_r = min(max(cv[L.THRUST + 1], -1.0), 1.0)
    s[:, L.S_ACC_LONG:L.S_ACC_DRIVE + 1] = 0.0
    engine_torque, clutch = 0.0, 0.0
    for _ in range(n_sub):                         # 6. wheel substeps, chassis velocity held
        _tire_forces(pk, ws, gravity, h, s, x, out)
        t_eng, clutch = _spin(pk, ws, vs, cw, thrust_l, thrust_r, throttle, ratio, h, s, g, out)
        engine_torque += t_eng * h
        for w in range(out.shape[0]):
            s[w, L.S_ACC_LONG] += out[w, L.O_LONG_FORCE] * h
            s[w, L.S_ACC_LAT] += out[w, L.O_LAT_FORCE] * h
            s[w, L.S_ACC_DRIVE] += ws[w, L.DRIVE_TORQUE] * h
    _forces_out(pk, k, ws, dt, s, out, out_v)                              # 7. forces out
    out_v[L.O_ENGINE_OMEGA], out_v[L.O_ENGINE_TORQUE] = vs[L.ENGINE_OMEGA], engine_torque / dt
    out_v[L.O_CLUTCH_SLIP] = clutch / max(vp[L.CLUTCH_STRENGTH], 1e-9)
    out_v[L.O_GEAR], out_v[L.O_GEAR_RATIO], out_v[L.O_THROTTLE] = gears[L.GEAR], ratio, throttle


@jit
def step_batch(pk: Packed, wheel_state, vehicle_state, gears, cmd_v, cmd_w, kin, hits, friction,
               dt, gravity, out_w, out_v, active) -> None:
    """Advance every vehicle of a batch (rows of the state, command, input and output arrays)
    whose ``active`` flag is set."""
    n_w = pk.wheel.shape[0]
    s = np.zeros((n_w, L.N_SCRATCH))
    x = np.zeros((n_w, L.N_TIRE_INPUTS))
    g = np.zeros((n_w, L.N_GROUP_SCRATCH))
    for v in range(kin.shape[0]):
        if not active[v]:
            continue
        step_vehicle(pk, wheel_state[v], vehicle_state[v], gears[v], cmd_v[v], cmd_w[v], kin[v],
                     hits[v], friction, dt, gravity, out_w[v], out_v[v], s, x, g)


def step(p: VehicleParams, s: VehicleState, ck: ChassisKinematics, hits: GroundHits,
         cmd: Commands, friction_table: FrictionTable, dt: float,
         gravity: float = 9.81) -> VehicleOutputs:
    """Advance all vehicles by ``dt`` (state updated in place) and return forces and telemetry.

    The array interface of :func:`step_batch` for numpy users: dataclasses in, a fresh
    :class:`VehicleOutputs` out.
    """
    out = VehicleOutputs.zeros(p, len(ck.position))
    step_batch(p.packed, s.wheel, s.vehicle, s.gears, cmd.vehicle, cmd.wheel, ck.rows(),
               hits.rows(), np.ascontiguousarray(friction_table.values, dtype=float), float(dt),
               float(gravity), out.wheel, out.vehicle, np.ones(len(ck.position), dtype=np.bool_))
    return out
