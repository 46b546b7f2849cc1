"""Packing :class:`VehicleParams` into the arrays of the compiled update (see ``layout.py``)."""

from __future__ import annotations

import numpy as np

from . import layout as L
from . import tire, tire_custom
from .contact import ROTATION_SHARE
from .layout import Packed
from .tire import MODELS
from .tire_arcade import REFERENCE_SPEED
from .tire_curve import zero_slopes


def _wheel_columns(p) -> np.ndarray:
    """``(n_wheels, N_WHEEL_PARAMS)`` from the per-wheel parameter arrays."""
    n = p.n_wheels
    wh, sus, ti, st = p.wheels, p.suspension, p.tires, p.steering
    out = np.zeros((n, L.N_WHEEL_PARAMS))

    def put(col, values, width=1):
        out[:, col:col + width] = np.asarray(values, dtype=float).reshape(n, width)

    for col, v in ((L.RADIUS, wh.radius), (L.MOI, wh.moi), (L.DAMPING, wh.damping_rate),
                   (L.MAX_BRAKE, wh.max_brake_torque), (L.MAX_HANDBRAKE, wh.max_handbrake_torque),
                   (L.MAX_STEER, wh.max_steer), (L.TOE, wh.toe),
                   (L.MAX_COMPRESSION, sus.max_compression), (L.MAX_DROOP, sus.max_droop),
                   (L.SPRING, sus.spring_strength), (L.DAMPER, sus.damper_rate),
                   (L.SPRUNG_MASS, sus.sprung_mass), (L.BUMP_STOP, sus.bump_stop_stiffness),
                   (L.CAMBER_REST, sus.camber_at_rest),
                   (L.CAMBER_COMPRESSION, sus.camber_at_max_compression),
                   (L.CAMBER_DROOP, sus.camber_at_max_droop),
                   (L.TIRE_MODEL, ti.model), (L.TIRE_TYPE, ti.tire_type),
                   (L.LAT_STIFF_X, ti.lat_stiff_x), (L.LAT_STIFF_Y, ti.lat_stiff_y),
                   (L.LONG_STIFF_G, ti.long_stiff_per_unit_gravity),
                   (L.CAMBER_STIFF_G, ti.camber_stiff_per_unit_gravity),
                   (L.ARCADE_LONG, ti.arcade_long_stiffness), (L.ARCADE_LAT, ti.arcade_lat_stiffness),
                   (L.GRIP, ti.grip), (L.CURVE_SET, ti.curve_set),
                   (L.TRAIL, ti.trail),
                   (L.TIRE_FORCE_HEIGHT, sus.tire_force_height)):
        put(col, v)
    for col, v in ((L.POSITION, sus.position), (L.TRAVEL, sus.travel_direction),
                   (L.RAY_START, sus.ray_start(wh.radius)), (L.FORCE_POINT, sus.force_point)):
        put(col, v, 3)
    put(L.FRICTION_VS_SLIP, ti.friction_vs_slip.reshape(n, 6), 6)
    put(L.MF_LONG, ti.mf_long, 4)
    put(L.MF_LAT, ti.mf_lat, 4)
    peak_long, peak_lat = ti.mf_peak_slips
    put(L.MF_PEAK_LONG, peak_long)
    put(L.MF_PEAK_LAT, peak_lat)
    put(L.STEER_MULT, st.multiplier)
    put(L.PARTNER, st.partner if st.partner else np.full(n, -1))
    put(L.GROUP, np.argmax(p.groups, axis=1))
    put(L.BASE_SPLIT, p.base_split)
    peak = tire.peak_coefficient(ti)
    put(L.CAP_COEF, np.where(ti.uses("physx"), 1.0, peak))
    static = np.where(ti.uses("physx"), ti.friction_vs_slip[:, 0, 1],
                      np.where(ti.uses("custom"), 1.0, peak))
    put(L.STATIC_COEF, static)
    custom = tire_custom.index_of(p.custom_tire) if p.custom_tire is not None else -1
    put(L.CUSTOM_INDEX, np.full(n, custom))
    put(L.INV_SPRUNG_MASS, 1.0 / sus.sprung_mass)        # for contact.inverse_useful_mass
    share = sus.sprung_mass / p.chassis.mass
    put(L.TURN_COEF, ROTATION_SHARE / (share[:, None] * np.asarray(p.chassis.inertia)[None, :]), 3)
    # the tread (tire_models.prepare): c = TREAD_STIFF m_s g, d = 2 zeta sqrt(c m_s) =
    # TREAD_DAMP sqrt(g), TREAD_DAMP = 2 zeta m_s sqrt(tread_stiffness), per direction
    stiff = np.column_stack([ti.tread_stiffness_long, ti.tread_stiffness_lat])
    put(L.TREAD_STIFF, stiff * sus.sprung_mass[:, None], 2)
    put(L.TREAD_DAMP, 2.0 * ti.tread_damping[:, None] * sus.sprung_mass[:, None] * np.sqrt(stiff), 2)
    slopes = np.array([zero_slopes(c) for c in p.curve_sets])       # curve tyres' stiffness
    put(L.CURVE_SLOPE, slopes[ti.curve_set.astype(int)], 2)
    put(L.GAIN_FLOOR, np.where(ti.uses("arcade") | ti.uses("custom"),   # tire_models.prepare
                               1.0 / REFERENCE_SPEED, 0.0))
    return out


def _vehicle_columns(p) -> np.ndarray:
    """``(N_VEHICLE_PARAMS,)`` from the per-vehicle parameter dataclasses."""
    d, e, gb, c, st = p.differential, p.engine, p.gearbox, p.clutch, p.steering
    lf, sim, sc = p.tire_load_filter, p.simulation, p.tire_force_scaling
    out = np.zeros(L.N_VEHICLE_PARAMS)
    values = {
        L.N_GROUPS: p.groups.shape[1], L.DIFF_TYPE: L.DIFF_TYPES.index(d.type),
        L.LIMITED_SLIP: d.kind == "limited_slip", L.DRIVE: L.DRIVES.index(d.drive),
        L.FRONT_REAR_SPLIT: d.front_rear_split, L.FRONT_LR_SPLIT: d.front_left_right_split,
        L.REAR_LR_SPLIT: d.rear_left_right_split, L.FRONT_BIAS: d.front_bias,
        L.REAR_BIAS: d.rear_bias, L.CENTRE_BIAS: d.centre_bias, L.AIR_SHARE: d.air_share,
        L.MIN_ON_GROUND: d.min_wheels_on_ground, L.TANK_SPECIAL: d.tank_mode == "special",
        L.ENGINE_MOI: e.moi, L.PEAK_TORQUE: e.peak_torque, L.MAX_OMEGA: e.max_omega,
        L.DAMP_FULL: e.damping_full_throttle,
        L.DAMP_ENGAGED: e.damping_zero_throttle_clutch_engaged,
        L.DAMP_DISENGAGED: e.damping_zero_throttle_clutch_disengaged,
        L.FINAL_RATIO: gb.final_ratio, L.SWITCH_TIME: gb.switch_time, L.AUTOBOX: gb.autobox,
        L.LATENCY: gb.latency, L.N_FORWARD: gb.n_forward,
        L.CLUTCH_STRENGTH: c.strength, L.CLUTCH_IMPLICIT: c.accuracy == "best_possible",
        L.CLUTCH_ITERATIONS: c.estimate_iterations,
        L.MAX_ANGLE: st.max_angle, L.ACKERMANN: st.ackermann_accuracy,
        L.REFERENCE_X: st.reference_x,
        L.LOAD_MIN: lf.min_normalised_load, L.LOAD_MIN_FILTERED: lf.min_filtered_normalised_load,
        L.LOAD_MAX: lf.max_normalised_load, L.LOAD_MAX_FILTERED: lf.max_filtered_normalised_load,
        L.SUBSTEP_SPEED: sim.substep_speed_threshold,
        L.SUBSTEPS_LOW: sim.substeps_low, L.SUBSTEPS_HIGH: sim.substeps_high,
        L.KEEP_PITCH: sc.pitch, L.KEEP_ROLL: sc.roll,
        L.HAS_CUSTOM: bool(p.tires.uses("custom").any()),
        L.CONTACT_RAYS: p.contact.n_rays, L.CONTACT_HALF_ARC: p.contact.half_arc,
    }
    for col, v in values.items():
        out[col] = float(v)
    out[L.FOUR_WHEELS:L.FOUR_WHEELS + 4] = d.four_wheels
    return out


def _curves(sets) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    families, index, points = [], np.zeros((len(sets), 2, 2), dtype=np.int64), []
    n_points = 0
    for k, cs in enumerate(sets):
        for j, (values, curves) in enumerate(((cs.long_slip_angles, cs.long),
                                              (cs.lat_slip_ratios, cs.lat))):
            index[k, j] = (len(families), len(curves))
            for value, curve in zip(values, curves, strict=True):
                families.append((value, n_points, len(curve)))
                points.append(np.asarray(curve, dtype=float))
                n_points += len(curve)
    return (np.array(families, dtype=float).reshape(-1, 3), index,
            np.concatenate(points).reshape(-1, 2))


def pack(p) -> Packed:
    """The :class:`~traction.vehicle_model.layout.Packed` arrays of a vehicle type."""
    families, index, points = _curves(p.curve_sets)
    bars = np.array([(a, b, k) for (a, b), k in zip(p.anti_roll.pairs, p.anti_roll.stiffness,
                                                    strict=True)], dtype=float).reshape(-1, 3)
    gb = p.gearbox
    packed = Packed(_wheel_columns(p), _vehicle_columns(p), np.array(p.engine.torque_curve, float),
                    gb.ratios().astype(float), np.array(gb.up_ratios, float),
                    np.array(gb.down_ratios, float), bars, families, index, points)
    for arr in packed:
        arr.setflags(write=False)
    return packed


assert MODELS == ("physx", "arcade", "curve", "magic_formula", "custom")   # codes used by update
