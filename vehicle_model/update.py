"""The vehicle update: one commented sequence, reading top to bottom like the physics.

commands -> gears -> steering -> suspension (+ anti-roll bars) -> tyre loads -> contact frame ->
sticky tyre -> [substeps: slips -> tyre forces -> drivetrain and wheel spin] -> forces out.
"""

from __future__ import annotations

import numpy as np

from . import (
    antiroll,
    differential,
    drivetrain,
    gearbox,
    steering,
    sticky,
    suspension,
    tire,
    wheel,
)
from .surface import FrictionTable
from .tire_models import evaluate as tire_forces
from .vec import cross, dot
from .vehicle import ChassisKinematics, Commands, GroundHits, VehicleOutputs, VehicleParams, VehicleState


def _world(rotation: np.ndarray, vec_body: np.ndarray) -> np.ndarray:
    """Rotate per-wheel body vectors (n_wheels, 3) by per-vehicle rotations (n, 3, 3)."""
    return np.einsum("vij,...wj->vwi", rotation, vec_body)


def _wheel_commands(p: VehicleParams, s: VehicleState, cmd: Commands, dt: float):
    """Brake torque and steer angle per wheel; throttle and gear ratio per vehicle."""
    wh = p.wheels
    brake = np.maximum(np.clip(cmd.brake, 0.0, 1.0)[:, None], np.clip(cmd.wheel_brake, 0.0, 1.0))
    if p.differential.type == "tank" and p.differential.tank_mode == "standard":
        side_brake = np.clip(-cmd.thrust, 0.0, 1.0)           # pulling a stick back brakes that side
        brake = np.maximum(brake, side_brake @ p.groups.T)
    handbrake = np.clip(cmd.handbrake, 0.0, 1.0)[:, None]
    brake_torque = wheel.brake_torque(wh, brake, handbrake)
    steer = steering.steer_angles(p.steering, p.suspension.position, np.clip(cmd.steer, -1.0, 1.0))
    steer = np.clip(steer + cmd.wheel_steer, -wh.max_steer, wh.max_steer) + wh.toe
    throttle = np.clip(cmd.throttle, 0.0, 1.0)
    ratio = np.zeros(len(throttle))
    if p.has_engine:
        gb, gs = p.gearbox, s.gearbox
        want = np.where(cmd.target_gear != Commands.NO_GEAR_REQUEST, cmd.target_gear,
                        gs.gear + cmd.gear_up.astype(int) - cmd.gear_down.astype(int))
        gearbox.request(gb, gs, want, want != gs.gear)
        gearbox.update(gb, gs, s.engine_omega / p.engine.max_omega, dt)
        throttle = np.where(gs.auto_shift, 0.0, throttle)     # autobox shifts cut the throttle
        ratio = gearbox.effective_ratio(gb, gs)
    return brake_torque, steer, throttle, ratio


def _torque_ratios(p: VehicleParams, s: VehicleState, cmd: Commands, contact, f_spring):
    beta, alpha = differential.ratios(p.differential, p.base_split, s.omega, contact, f_spring,
                                      np.clip(cmd.thrust, -1.0, 1.0))
    override = ~np.isnan(cmd.torque_split).all(axis=1) & (p.differential.type != "tank")
    if override.any():
        split = np.clip(np.nan_to_num(cmd.torque_split), 0.0, None) * (p.base_split > 0)
        total = split.sum(axis=1, keepdims=True)
        split = np.where(total > 0, split / np.where(total > 0, total, 1.0), alpha)
        beta = np.where(override[:, None], split, beta)
    return beta, alpha


def step(p: VehicleParams, s: VehicleState, ck: ChassisKinematics, hits: GroundHits,
         cmd: Commands, friction_table: FrictionTable, dt: float,
         gravity: float = 9.81) -> VehicleOutputs:
    """Advance all vehicles by ``dt`` (state updated in place) and return forces and telemetry.

    The chassis velocity is held during the wheel substeps and the tyre forces are averaged over
    them; forces are for the simulator to apply for the next ``dt``.
    """
    sus, wh, ti, sim = p.suspension, p.wheels, p.tires, p.simulation
    # 1. commands and gears
    brake_torque, steer, throttle, ratio = _wheel_commands(p, s, cmd, dt)
    # 2. suspension line in the world, where it meets the ground, strut force (+ anti-roll bars)
    down = _world(ck.rotation, sus.travel_direction)
    cos_inc = -dot(down, hits.normal)
    jounce, contact, overtravel = suspension.jounce_from_hit(sus, wh.radius, hits.dist, cos_inc)
    start = ck.position[:, None, :] + _world(ck.rotation, sus.ray_start(wh.radius))
    centre = start + down * (sus.max_compression + wh.radius - jounce)[..., None]
    patch = centre - hits.normal * wh.radius[:, None]
    v_patch = ck.velocity[:, None, :] + cross(ck.angular_velocity[:, None, :],
                                              patch - ck.com[:, None, :])
    jounce_rate = np.where(contact, -dot(v_patch, hits.normal) / np.maximum(cos_inc, 0.1), 0.0)
    f_spring = suspension.spring_force(sus, jounce, jounce_rate, contact, gravity, overtravel)
    if p.anti_roll.pairs:
        f_spring = np.maximum(f_spring + antiroll.forces(p.anti_roll, jounce, contact), 0.0)
    # 3. tyre loads
    rest_load = sus.sprung_mass * gravity
    normalised = f_spring / rest_load
    filtered = np.where(contact, p.tire_load_filter.apply(normalised), 0.0)
    model_load = filtered * rest_load
    # 4. contact frame: wheel heading projected on the ground plane, lateral to its left
    heading = np.einsum("vij,vwj->vwi", ck.rotation,
                        np.stack([np.cos(steer), np.sin(steer), np.zeros_like(steer)], axis=-1))
    fwd = heading - hits.normal * dot(heading, hits.normal)[..., None]
    fwd /= np.maximum(np.linalg.norm(fwd, axis=-1, keepdims=True), 1e-9)
    left = cross(hits.normal, fwd)
    v_long, v_lat = dot(v_patch, fwd), dot(v_patch, left)
    mu_surface = friction_table.lookup(hits.surface, ti.tire_type)
    camber = suspension.camber(sus, jounce)
    mass_long, mass_lat = _useful_masses(p, ck, patch, fwd, left)
    # 5. sticky tyre (static friction at rest), once per update
    static = np.where(ti.uses("physx"), ti.friction_vs_slip[:, 0, 1],
                      np.where(ti.uses("custom"), 1.0, tire.peak_coefficient(ti)))
    mu_limit = mu_surface * static * model_load
    locked = (s.omega == 0.0) & (brake_torque > 0.0)
    stick_long, f_stick_long = sticky.update(p.sticky, s.sticky_anchor[..., 0], s.sticky_timer[..., 0],
                                             v_long, contact & locked, sus.sprung_mass, mu_limit, dt)
    patch_still = (np.abs(v_long) < p.sticky.speed) & (
        np.abs(v_long - s.omega * wh.radius) < p.sticky.speed)   # not rolling, not spinning
    stick_lat, f_stick_lat = sticky.update(p.sticky, s.sticky_anchor[..., 1], s.sticky_timer[..., 1],
                                           v_lat, contact & patch_still, sus.sprung_mass, mu_limit, dt)
    # 6. wheel substeps: slips -> tyre forces -> drivetrain and wheel spin (chassis held)
    fwd_speed = np.abs(dot(ck.velocity, ck.rotation[:, :, 0]))
    n_sub = np.where(fwd_speed < sim.substep_speed_threshold, sim.substeps_low, sim.substeps_high)
    acc = {k: np.zeros_like(jounce) for k in ("long", "lat", "drive")}
    acc_engine = np.zeros_like(throttle)
    clutch = np.zeros_like(throttle)
    for k in range(int(n_sub.max())):
        run = n_sub > k
        h = dt / n_sub
        long_slip, lat_slip = tire.slips(v_long, v_lat, s.omega * wh.radius,
                                         sim.min_long_slip_denominator, sim.min_lat_slip_denominator)
        long_slip, lat_slip = np.where(contact, long_slip, 0.0), np.where(contact, lat_slip, 0.0)
        mu = mu_surface * np.where(ti.uses("physx"), tire.friction_multiplier(ti, long_slip), 1.0)
        x = tire.TireInputs(v_long, v_lat, s.omega, wh.radius, wh.moi, long_slip, lat_slip, camber,
                            mu, mu_surface, model_load, rest_load, filtered, gravity,
                            h[:, None], s.drive_torque, mass_long, mass_lat)
        f_long, f_lat, moment, road = tire_forces(p, x, contact)
        f_long = np.where(stick_long, f_stick_long, f_long)
        f_lat = np.where(stick_lat, f_stick_lat, f_lat)
        cap = mu * model_load * np.where(ti.uses("physx"), 1.0, tire.peak_coefficient(ti))
        scale = np.minimum(1.0, cap / np.maximum(np.hypot(f_long, f_lat), 1e-9))
        scale = np.where(stick_long | stick_lat, scale, 1.0)
        f_long, f_lat = f_long * scale, f_lat * scale
        road = np.where(stick_long, -f_long * wh.radius, road)
        omega, drive, engine_omega, engine_torque, clutch_k = _spin(
            p, s, cmd, contact, f_spring, road, brake_torque, throttle, ratio, h)
        s.omega = np.where(run[:, None], omega, s.omega)
        s.drive_torque = np.where(run[:, None], drive, s.drive_torque)
        s.engine_omega = np.where(run, engine_omega, s.engine_omega)
        w = np.where(run, h, 0.0)
        for key, val in (("long", f_long), ("lat", f_lat), ("drive", drive)):
            acc[key] += val * w[:, None]
        acc_engine += engine_torque * w
        clutch = np.where(run, clutch_k, clutch)
    f_long, f_lat = acc["long"] / dt, acc["lat"] / dt
    # 7. forces out, world frame, with their application points
    origin = ck.position[:, None, :]
    tire_force = fwd * f_long[..., None] + left * f_lat[..., None]
    tire_point = origin + _world(ck.rotation, sus.tire_force_point)
    return VehicleOutputs(
        susp_force=-down * f_spring[..., None],
        susp_point=origin + _world(ck.rotation, sus.force_point),
        tire_force=tire_force, tire_point=tire_point,
        extra_torque=_pitch_roll_scaling(p, ck, tire_force, tire_point),
        in_contact=contact, jounce=jounce, spring_force=f_spring, load=model_load,
        normalised_load=normalised, friction=mu, long_slip=long_slip, lat_slip=lat_slip,
        long_force=f_long, lat_force=f_lat, aligning_moment=moment, steer=steer, camber=camber,
        patch_slide=np.stack([v_long - s.omega * wh.radius, v_lat], axis=-1),
        drive_torque=acc["drive"] / dt, engine_omega=s.engine_omega.copy(),
        engine_torque=acc_engine / dt, clutch_slip=clutch / max(p.clutch.strength, 1e-9),
        gear=s.gearbox.gear.copy(), gear_ratio=ratio, throttle=throttle)


def _useful_masses(p: VehicleParams, ck: ChassisKinematics, patch, fwd, left):
    """Effective masses (kg) a tyre force meets along the heading and sideways: the wheel's sprung
    mass (its share of the static load) with its share of the chassis inertia, so a force at the
    patch also has to turn the body: ``1/m = 1/m_s + (r x d) . J_s^-1 (r x d)`` (body axes)."""
    m_s = p.suspension.sprung_mass
    share_inertia = p.chassis.inertia[None, :] * (m_s / p.chassis.mass)[:, None]   # (w, 3)
    r = patch - ck.com[:, None, :]
    out = []
    for d in (fwd, left):
        arm = np.einsum("vji,vwj->vwi", ck.rotation, cross(r, d))   # to body axes
        out.append(1.0 / (1.0 / m_s + (arm**2 / share_inertia).sum(axis=-1)))
    return out


def _pitch_roll_scaling(p: VehicleParams, ck: ChassisKinematics, force, point):
    """World torque removing the unwanted share of the tyre forces' pitch and roll moments."""
    sc = p.tire_force_scaling
    if sc.pitch == 1.0 and sc.roll == 1.0:
        return np.zeros((force.shape[0], 3))
    moment = cross(point - ck.com[:, None, :], force).sum(axis=1)          # world, about CoM
    body = np.einsum("vji,vj->vi", ck.rotation, moment)
    cut = body * np.array([1.0 - sc.roll, 1.0 - sc.pitch, 0.0])
    return -np.einsum("vij,vj->vi", ck.rotation, cut)


def _spin(p, s, cmd, contact, f_spring, road, brake_torque, throttle, ratio, h):
    """Wheel (and engine) spin over ``h``; returns per-wheel drive torque for telemetry."""
    wh = p.wheels
    if not p.has_engine:
        omega = wheel.integrate_spin(wh, s.omega, cmd.wheel_torque, road, brake_torque, h[:, None])
        zero = np.zeros_like(throttle)
        return omega, cmd.wheel_torque, zero, zero, zero
    beta, alpha = _torque_ratios(p, s, cmd, contact, f_spring)
    tank = p.differential.type == "tank"
    groups = p.groups
    to_group = (lambda x: x @ groups) if tank else (lambda x: x)       # sums over a track
    spin = s.omega @ groups / groups.sum(axis=0) if tank else s.omega  # shared track spin
    w_e, w_g, clutch, t_eng = drivetrain.solve(
        p.engine, p.clutch, s.engine_omega, spin, to_group(wh.moi),
        to_group(wh.damping_rate), to_group(road), to_group(brake_torque), throttle, ratio,
        beta, alpha, h)
    drive_g = beta * ratio[:, None] * clutch[:, None]
    if tank:
        share = groups / groups.sum(axis=0)
        return w_g @ groups.T, drive_g @ share.T, w_e, t_eng, clutch
    return w_g, drive_g, w_e, t_eng, clutch
