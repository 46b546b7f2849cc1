"""The tyre in the update: the tread between wheel and road, integrated with the wheel and
the chassis, around each wheel's tyre model; array drivers for sweeps, plots and tests.

**The tread.** Each model (``tire.py``) is a steady-state law: force from slip. Between the
wheel and the road sits the tread, a spring-damper per direction (``c`` = ``tread_stiffness``
x rest load, ``d`` = 2 ``tread_damping`` sqrt(c m_s)), deflected by ``u`` (state
``DEFLECTION``), in series with the model's law at the contact patch, as in TMeasy (Rill) and
Pacejka's transient tyre: the force ``F = c u + d u'`` is the model's force at the slip of the
contact patch, the wheel's slip less the tread's deflection rate ``u'``. Linearised about the
slip ``s0`` at the substep's start (force ``F0``) with the secant ``G = F0 / s0`` (force per
m/s of slip, >= 0, at most the model's slope at zero slip):

    F = F0 + G (s_end - s0 - u'),     F = c u_end + d u',   u_end = u + h u'

so, rolling, ``u'`` dies out and ``F`` is the model's own force at every speed (the relaxation
length is the model's slip stiffness over ``c``: centimetres for PhysX's default tyre, 0.1-0.3 m
for a magic-formula one), and at rest (``s0`` -> 0, ``G`` -> inf) the patch sticks and the
tread is a damped spring: static friction, up to friction x load (the force and the spring's
stretch are capped there: beyond it the patch slides). A locked wheel sliding to a stop keeps
its sliding force (the secant of a flat law over a sliding slip is small), and the tread,
stretched ``F / c`` by it (7 mm for the sedan's PhysX tyres), springs back once the car stops,
as a real tyre's does; a wheel spinning on a stopped car pushes it at the model's value for
the spin.

**Implicit in the wheel and the chassis.** ``s_end = omega_end r - v_end`` is taken at the
substep's end: the wheel's new spin (the drivetrain's implicit solve: the tyre's torque on the
wheel, ``-(A + B omega_end r) r``, adds ``B r^2`` to its diagonal, ``road_damp``) and the
patch velocity the chassis reaches (held by the simulator for the physics step): the one at the
step's start, plus the patch's acceleration over the last step carried on, plus this force's
change from the last step's over the *useful mass* (``contact.inverse_useful_mass``), so that a steady
force is neither counted twice nor missed (the steady state stays the model's) and a changed
one meets the inertia it moves. The useful masses are the wheel's shares of the chassis mass
and inertia, their rotational parts counted for both directions (longitudinal and lateral
forces both turn the chassis), so that per wheel they never exceed what the chassis presents
to all the tyres at once: then the implicit step cannot overshoot (a stiff parked tyre at
30 Hz settles without a sign flip) and no wheel substep rule applies to the tyre.

**No friction clamps.** The step never carries a slip past zero, which is what the tyre talk's
friction clamps (of the references) enforce: with the secant ``G = F0 / s0`` and a rigid tread,
``F = G s0 / (1 + G h (r^2 / I + 1 / m))`` and the slip at the end is ``s0 / (1 + G h (...))``,
of the start's sign whatever the grip and the step; the wheel's inertia, the engine's behind it
and the brake (Coulomb friction against the same implicit diagonal: a locked wheel turns only
when the road's torque exceeds the brake's) only lower the wheel's part. A flat (sliding) law
keeps its force (its secant is small) until the slip is small enough to stop within the step,
where the secant has grown past ``1 / (h / m)``: the clamp, by construction. (With the tread
the wheel's slip may pass zero once where a slide ends, by the tread springing back: not a
chatter.) The clamps this
replaces bounded the force without the brake (a locked wheel's slide was stopped as if the
force also spun it up: locked-wheel braking at 30 Hz slid 32.6 m from 20 m/s, the Coulomb
distance being 27.2 m) and once per wheel substep with the chassis held for the whole step
(with ``n`` substeps, ``n`` times too loose).

**Reported slips.** The outputs ``long_slip``/``lat_slip`` are the contact patch's slips (the wheel's
less the tread's deflection rate: the slip the force corresponds to, Pacejka's transient slip),
over denominators no smaller than :data:`REPORT_SPEED`: at rest they are 0 where the wheel's
own slip, a ratio of velocities near zero, is noise.
"""

from __future__ import annotations

import numpy as np
from numba import objmode

from . import layout as L
from . import tire, tire_arcade, tire_curve, tire_custom, tire_magic, tire_physx
from .jit import jit, jit_call
from .layout import Packed
from .vec import to_body, to_world

PHYSX, ARCADE, CURVE, MAGIC_FORMULA, CUSTOM = range(5)
#: Smallest slip denominator (m/s) of the *reported* slips (see the module docstring).
REPORT_SPEED = 0.1
#: The largest linearisation stiffness (N per m/s of slip) of a custom tyre, whose slope at
#: zero slip is unknown: at it, its patch sticks.
CUSTOM_GAIN = 1e12


@jit
def forces(w: np.ndarray, x: np.ndarray, families: np.ndarray, family_index: np.ndarray,
           points: np.ndarray) -> tuple[float, float, float, float]:
    """``(f_long, f_lat, moment, road_torque)`` of one wheel by its model at the slips of its
    input row (custom wheels are run separately, see ``tire_custom.call``, and give zeros
    here)."""
    model = int(w.tire_model)
    if model == PHYSX:
        return tire_physx.forces(w, x)
    if model == ARCADE:
        return tire_arcade.forces(w, x)
    if model == CURVE:
        return tire_curve.forces(w, x, families, family_index, points)
    if model == MAGIC_FORMULA:
        return tire_magic.forces(w, x)
    return 0.0, 0.0, 0.0, 0.0


@jit
def zero_slip_stiffness(p: np.ndarray, load: float, mu: float, normalised_load: float,
                        rest_load: float, gravity: float) -> tuple[float, float]:
    """Each model's stiffness at zero slip (N per unit slip, longitudinal and lateral) at a
    tyre load (N), surface friction and normalised load; over the slip denominator it is the
    force per m/s of slip the tread's step may not exceed (see :func:`tread_step`). The arcade
    tyre's is its gain at ``tire_arcade.REFERENCE_SPEED``, and a custom tyre, whose slope is
    unknown, counts as :data:`CUSTOM_GAIN` per m/s (``gain_floor``)."""
    model = int(p.tire_model)
    if model == PHYSX:
        lat = rest_load * p.lat_stiff_y * tire_physx._smooth_force(
            normalised_load * 3.0 / p.lat_stiff_x)
        return p.long_stiff_per_unit_gravity * gravity, lat
    if model == ARCADE:
        speed = tire_arcade.REFERENCE_SPEED
        return p.arcade_long_stiffness * load * speed, p.arcade_lat_stiffness * load * speed
    if model == CUSTOM:
        gain = CUSTOM_GAIN * tire_arcade.REFERENCE_SPEED
        return gain, gain
    grip_load = mu * load
    if model == CURVE:
        grip_load *= p.grip
        return p.curve_slope[0] * grip_load, p.curve_slope[1] * grip_load
    b_long, c_long, d_long = p.mf_long[0], p.mf_long[1], p.mf_long[2]
    b_lat, c_lat, d_lat = p.mf_lat[0], p.mf_lat[1], p.mf_lat[2]
    return b_long * c_long * d_long * grip_load, b_lat * c_lat * d_lat * grip_load


@jit
def secant(force: float, slip: float, limit: float) -> float:
    """``force / slip`` (N s/m) within ``[0, limit]`` (``limit`` at zero slip, 0 where the force
    does not oppose the slip: a camber thrust)."""
    if slip == 0.0:
        return limit
    return min(max(force / slip, 0.0), limit)


@jit
def prepare(pk: Packed, k, ws, dt, h, gravity, s, out) -> None:
    """5. The tread springs of this update and the patch velocity each tyre predicts (see the
    module docstring): ``tread``, ``tread_inv_k`` (``1 / (c h + d)``), ``stiff`` (the
    model's stiffness at zero slip at this update's load), ``pred`` (the patch velocity now,
    long and lat) and ``ext`` (its change per substep from the patch's acceleration over the
    last update, less what the last mean force gave it through the useful mass). A wheel off
    the ground loses its deflection."""
    wp = pk.wheel
    inv_dt, root_g = 1.0 / dt, np.sqrt(gravity)
    for w in range(wp.shape[0]):
        p = wp[w]
        c_long, c_lat = p.tread_stiff[0] * gravity, p.tread_stiff[1] * gravity
        s[w].tread[0], s[w].tread[1] = c_long, c_lat       # c h + d: d = 2 zeta sqrt(c m)
        s[w].tread_inv_k[0] = 1.0 / (c_long * h + p.tread_damp[0] * root_g)
        s[w].tread_inv_k[1] = 1.0 / (c_lat * h + p.tread_damp[1] * root_g)
        s[w].stiff[0], s[w].stiff[1] = zero_slip_stiffness(
            p, out[w].load, s[w].mu_surface, s[w].load_filtered,
            p.sprung_mass * gravity, gravity)
        s[w].pred[0], s[w].pred[1] = s[w].v_long, s[w].v_lat
        if out[w].in_contact < 0.5:
            ws[w].tread_deflection[0], ws[w].tread_deflection[1] = 0.0, 0.0
        a_long, a_lat, f_long, f_lat = 0.0, 0.0, 0.0, 0.0
        if ws[w].history > 0.5:             # the patch's acceleration over the last update
            b0, b1, b2 = to_body(k, s[w].v_patch[0], s[w].v_patch[1], s[w].v_patch[2])
            a0, a1, a2 = to_world(k, (b0 - ws[w].patch_velocity[0]) * inv_dt,
                                  (b1 - ws[w].patch_velocity[1]) * inv_dt,
                                  (b2 - ws[w].patch_velocity[2]) * inv_dt)
            a_long = a0 * s[w].fwd[0] + a1 * s[w].fwd[1] + a2 * s[w].fwd[2]
            a_lat = a0 * s[w].left[0] + a1 * s[w].left[1] + a2 * s[w].left[2]
            f_long, f_lat = ws[w].patch_force[0], ws[w].patch_force[1]
        s[w].ext[0] = h * (a_long - f_long * s[w].inv_mass[0])
        s[w].ext[1] = h * (a_lat - f_lat * s[w].inv_mass[1])


@jit
def remember(k, ws, s, out) -> None:
    """After the update: what the next one's prediction reads (``PATCH_VELOCITY`` in chassis
    axes, so that a steering change is not taken for an acceleration; ``PATCH_FORCE``, the mean
    forces just applied)."""
    for w in range(ws.shape[0]):
        b0, b1, b2 = to_body(k, s[w].v_patch[0], s[w].v_patch[1], s[w].v_patch[2])
        ws[w].patch_velocity[0], ws[w].patch_velocity[1], ws[w].patch_velocity[2] = b0, b1, b2
        ws[w].patch_force[0], ws[w].patch_force[1] = out[w].long_force, out[w].lat_force
        ws[w].history = 1.0


@jit
def substep_forces(pk: Packed, ws, gravity, h, s, x, out, report=True) -> None:
    """6a. Slips, each wheel's model and the tread's implicit step up to the wheel's new spin:
    the lateral force, and the longitudinal force as ``A + B omega_end r`` (``affine``) with
    the torque it puts on the wheel (``road``, ``road_damp``) for the drivetrain; see the
    module docstring. :func:`substep_finish` completes the substep after the spin update.

    The inputs of every wheel first, then the forces of every wheel, then the tread (short
    loops, see ``suspension.struts_and_loads``). The PhysX tyre reads the slip angle's tangent,
    and the angle itself only to subtract a camber term; with ``report=False`` a PhysX wheel
    without camber skips the angle's ``arctan`` (its tyre input ``lat_slip`` is NaN). That ``arctan`` was a
    tenth of the Drift car's update in the physics loop."""
    vp, wp = pk.vehicle[0], pk.wheel
    for w in range(wp.shape[0]):                          # slips, friction: tyre inputs
        p = wp[w]
        contact = out[w].in_contact > 0.5
        v_long, v_lat, omega = s[w].pred[0], s[w].pred[1], ws[w].omega
        physx = int(p.tire_model) == PHYSX
        angle = report or not physx or out[w].camber != 0.0   # slip angle needed
        long_slip, lat_slip, tan_lat_slip = 0.0, 0.0 if angle else np.nan, 0.0
        if contact:                                       # tire.slips, keeping the tangent
            long_slip = tire.long_slip(v_long, omega * p.radius)
            tan_lat_slip = tire.lat_slip_tangent(v_long, v_lat, omega * p.radius)
            if angle:
                lat_slip = np.arctan(tan_lat_slip)
        mu = s[w].mu_surface * (tire.friction_multiplier(p, long_slip) if physx else 1.0)
        xr = x[w]
        xr.v_long, xr.v_lat, xr.omega = v_long, v_lat, omega
        xr.long_slip, xr.lat_slip, xr.camber = long_slip, lat_slip, out[w].camber
        xr.friction, xr.surface_friction, xr.load = mu, s[w].mu_surface, out[w].load
        xr.rest_load = p.sprung_mass * gravity
        xr.normalised_load = s[w].load_filtered           # = load / rest load
        xr.gravity = gravity
        xr.tan_lat_slip = tan_lat_slip
        out[w].friction = mu
    for w in range(wp.shape[0]):                          # the models' forces at those slips
        f_long, f_lat, moment, road = 0.0, 0.0, 0.0, 0.0
        if out[w].in_contact > 0.5:
            f_long, f_lat, moment, road = forces(wp[w], x[w], pk.families, pk.family_index,
                                                 pk.points)
        s[w].force0[0], s[w].force0[1], s[w].moment = f_long, f_lat, moment
        s[w].road_ratio = -wp[w].radius
    if vp.has_custom > 0.5:
        _custom_tires(pk, x, s, out)
    for w in range(wp.shape[0]):                          # the tread's implicit step
        tread_step(wp[w], ws[w], x[w], s[w], out[w], h)


@jit
def tread_step(p, wsr, xr, sr, outr, h) -> None:
    """One wheel's part of :func:`substep_forces` after its model ran (rows of the wheel's
    parameters, state, tyre inputs, scratch and outputs)."""
    if outr.in_contact < 0.5:
        sr.affine[0], sr.affine[1], sr.road, sr.road_damp = 0.0, 0.0, 0.0, 0.0
        outr.lat_force, outr.aligning_moment = 0.0, 0.0
        return
    r, omega = p.radius, wsr.omega
    v_long, v_lat = sr.pred[0], sr.pred[1]
    ext_long, ext_lat = sr.ext[0], sr.ext[1]
    inv_long, inv_lat = sr.inv_mass[0], sr.inv_mass[1]
    inv_k_long, inv_k_lat = sr.tread_inv_k[0], sr.tread_inv_k[1]
    f0_long, f0_lat = sr.force0[0], sr.force0[1]
    wheel_speed = omega * r
    per_speed = max(1.0 / tire.long_denominator(v_long, wheel_speed), p.gain_floor)
    g_long = secant(f0_long, wheel_speed - v_long, sr.stiff[0] * per_speed)
    g_lat = secant(f0_lat, -v_lat, sr.stiff[1] * per_speed)
    # F (1 + G (h / m + 1 / k)) = F0 + G (r (omega_end - omega) - ext + c u / k), per direction
    f_lat = (f0_lat + g_lat * (-ext_lat + sr.tread[1] * wsr.tread_deflection[1] * inv_k_lat)) \
        / (1.0 + g_lat * (h * inv_lat + inv_k_lat))
    den = 1.0 + g_long * (h * inv_long + inv_k_long)
    a = (f0_long + g_long * (-wheel_speed - ext_long
                             + sr.tread[0] * wsr.tread_deflection[0] * inv_k_long)) / den
    b = g_long / den
    cap = force_cap(p, xr, sr, outr)                      # friction x load: the patch slides
    f_long = a + b * wheel_speed                          # (at the spin so far)
    total2 = f_long * f_long + f_lat * f_lat
    if total2 > cap * cap:                                # a fixed force for the spin update
        scale = cap / np.sqrt(total2)
        f_long, f_lat = f_long * scale, f_lat * scale
        a, b = f_long, 0.0
    sr.affine[0], sr.affine[1] = a, b
    ratio = sr.road_ratio                            # wheel torque per N of f_long
    sr.road, sr.road_damp = ratio * a, -ratio * r * b
    outr.lat_force = f_lat
    outr.aligning_moment = sr.moment * f_lat / f0_lat if abs(f0_lat) > 1e-9 else 0.0


@jit
def hold_at_cap(pk: Packed, ws, s, x, out) -> bool:
    """6b'. After a spin update: wheels whose longitudinal force at the new spin, ``A + B omega
    r``, passes friction x load with the lateral force get that force fixed at the cap (``B =
    0``: the patch slides) for the spin update to be done again; returns whether any did. The
    spin update and the chassis then see one force: a force clipped for the chassis only would
    have given the wheel a torque the road never took (energy from nowhere when the road spins
    a braked wheel up)."""
    wp = pk.wheel
    held = False
    for w in range(wp.shape[0]):
        if out[w].in_contact < 0.5 or s[w].affine[1] == 0.0:
            continue
        p = wp[w]
        f_long = s[w].affine[0] + s[w].affine[1] * p.radius * ws[w].omega
        f_lat = out[w].lat_force
        cap = force_cap(p, x[w], s[w], out[w])
        if f_long * f_long + f_lat * f_lat > cap * cap:
            f_long = np.copysign(np.sqrt(max(cap * cap - f_lat * f_lat, 0.0)), f_long)
            s[w].affine[0], s[w].affine[1] = f_long, 0.0
            s[w].road, s[w].road_damp = s[w].road_ratio * f_long, 0.0
            held = True
    return held


@jit
def force_cap(p, xr, sr, outr) -> float:
    """The largest tyre force (N): static friction x load, or the model's friction x load where
    higher (a PhysX friction graph rising with the slip, a curve tyre's grip)."""
    return max(sr.mu_surface * p.static_coef, xr.friction * p.cap_coef) \
        * outr.load


@jit
def substep_finish(pk: Packed, ws, h, s, x, out, report=True) -> None:
    """6c. After the spin update: the longitudinal force at the new spin (the one the spin
    update used), the tread deflections (the spring's force within static friction x load: beyond,
    the patch slides), the patch velocities the tyres predict for the next substep, and with
    ``report`` the contact patch's slips (see the module docstring)."""
    wp = pk.wheel
    for w in range(wp.shape[0]):
        p = wp[w]
        if out[w].in_contact < 0.5:
            out[w].long_force, out[w].long_slip = 0.0, 0.0
            if report:
                out[w].lat_slip = 0.0
            continue
        r, omega = p.radius, ws[w].omega
        # within friction x load (hold_at_cap): the force the wheel's spin update used
        f_long, f_lat = s[w].affine[0] + s[w].affine[1] * r * omega, out[w].lat_force
        c_long, c_lat = s[w].tread[0], s[w].tread[1]
        rate_long = (f_long - c_long * ws[w].tread_deflection[0]) * s[w].tread_inv_k[0]
        rate_lat = (f_lat - c_lat * ws[w].tread_deflection[1]) * s[w].tread_inv_k[1]
        u_long = ws[w].tread_deflection[0] + h * rate_long
        u_lat = ws[w].tread_deflection[1] + h * rate_lat
        static = s[w].mu_surface * p.static_coef * out[w].load
        f0, f1 = c_long * u_long, c_lat * u_lat
        spring2 = f0 * f0 + f1 * f1
        if spring2 > static * static:                     # the patch slides: the anchor follows
            scale = static / np.sqrt(spring2)
            u_long, u_lat = u_long * scale, u_lat * scale
        ws[w].tread_deflection[0], ws[w].tread_deflection[1] = u_long, u_lat
        v_long = s[w].pred[0] + s[w].ext[0] + h * f_long * s[w].inv_mass[0]
        v_lat = s[w].pred[1] + s[w].ext[1] + h * f_lat * s[w].inv_mass[1]
        s[w].pred[0], s[w].pred[1] = v_long, v_lat
        out[w].long_force = f_long
        if report:                                        # the contact patch's slips
            wheel_speed = omega * r
            out[w].long_slip = (wheel_speed - v_long - rate_long) / max(
                abs(v_long), abs(wheel_speed), REPORT_SPEED)
            out[w].lat_slip = np.arctan((v_lat + rate_lat) / max(
                abs(v_long), abs(wheel_speed), REPORT_SPEED))


@jit_call
def _custom_tires(pk: Packed, x, s, out) -> None:
    """Custom (Python) tyre functions for the wheels that use them, in one object-mode call:
    their forces at the slips (``force0``) and the wheel torque they return per N of longitudinal
    force (``road_ratio``)."""
    wp = pk.wheel
    cols = np.nonzero(wp["tire_model"] == CUSTOM)[0]
    rows = np.ascontiguousarray(x[cols])
    radius = np.ascontiguousarray(wp["radius"][cols])
    index = int(wp[cols[0]].custom_index)
    with objmode(res="float64[:, :]"):
        res = tire_custom.call(index, rows, radius)
    for i in range(len(cols)):
        w = cols[i]
        if out[w].in_contact > 0.5:
            s[w].force0[0], s[w].force0[1], s[w].moment = res[i, 0], res[i, 1], res[i, 2]
            if abs(res[i, 0]) > 1e-9:    # its wheel torque per N, within [-r, 0] (see tire_custom)
                s[w].road_ratio = min(max(res[i, 3] / res[i, 0], -wp[w].radius), 0.0)


@jit
def _evaluate_rows(wheel: np.ndarray, x: np.ndarray, families: np.ndarray,
                   family_index: np.ndarray, points: np.ndarray, out: np.ndarray) -> None:
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[i, j, 0], out[i, j, 1], out[i, j, 2], out[i, j, 3] = forces(
                wheel[j], x[i, j], families, family_index, points)


def evaluate(packed: L.Packed, x: tire.TireInputs, contact: np.ndarray | None = None):
    """Run each wheel's model over arrays (the compiled per-wheel :func:`forces`, looped).

    Args:
        packed: the vehicle's :func:`~traction.vehicle_model.pack.pack` arrays.
        x: tyre inputs, ``(n, n_wheels)`` arrays.
        contact: wheels on the ground (others give zeros); all if None.

    Returns:
        ``(f_long, f_lat, moment, road_torque)``, ``(n, n_wheels)`` each (N, N, N m, N m).
    """
    rows = x.records()
    out = np.zeros(rows.shape[:2] + (4,))
    _evaluate_rows(packed.wheel, rows, packed.families, packed.family_index, packed.points, out)
    custom = packed.wheel["tire_model"] == CUSTOM
    if custom.any():
        index = int(packed.wheel["custom_index"][custom][0])
        for i in range(len(rows)):
            out[i, custom] = tire_custom.call(index, rows[i, custom],
                                              packed.wheel["radius"][custom])
    if contact is not None:
        out = np.where(np.asarray(contact)[..., None], out, 0.0)
    return tuple(out[..., k] for k in range(4))


def sweep(p, wheel: int, slip_ratio: np.ndarray, slip_angle: np.ndarray, load: float,
          speed: float = 15.0, friction: float = 1.0):
    """Steady-state forces of wheel ``wheel``'s tyre over a grid of slips.

    The wheel rolls at ``speed`` (m/s) with spin ``speed (1 + slip_ratio) / r`` and lateral
    velocity ``speed tan(slip_angle)``: the model's steady-state forces (what the tread settles
    to).

    Args:
        p: vehicle parameters.
        wheel: wheel index.
        slip_ratio, slip_angle: arrays of the same shape (slip angle in rad).
        load: tyre load (N).

    Returns:
        ``(f_long, f_lat)`` arrays of the grid's shape (N).
    """
    sr, alpha = np.broadcast_arrays(np.asarray(slip_ratio, float), np.asarray(slip_angle, float))
    packed = p.packed
    w = packed.wheel[wheel]
    r = w["radius"]
    n = sr.size
    v_long = np.full(n, speed)
    v_lat = speed * np.tan(alpha.ravel())
    omega = speed * (1.0 + sr.ravel()) / r
    slips = np.array([tire.slips(a, b, c * r)
                      for a, b, c in zip(v_long, v_lat, omega, strict=True)]).reshape(n, 2)
    physx = w["tire_model"] == PHYSX
    mu = friction * np.array([tire.friction_multiplier(w, s) if physx else 1.0 for s in slips[:, 0]])
    rest = w["sprung_mass"] * 9.81

    def col(v):
        return np.broadcast_to(np.asarray(v, float), (n,))[:, None]

    x = tire.TireInputs(col(v_long), col(v_lat), col(omega), col(slips[:, 0]), col(slips[:, 1]),
                        col(0.0), col(mu), col(friction), col(load), col(rest), col(load / rest),
                        9.81)
    one = packed._replace(wheel=packed.wheel[wheel:wheel + 1])
    f_long, f_lat, _, _ = evaluate(one, x)
    return f_long.reshape(sr.shape), f_lat.reshape(sr.shape)
