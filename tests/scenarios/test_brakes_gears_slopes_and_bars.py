"""More scenarios with analytic expectations: handbrake, reverse gear, braking on gravel and ice,
parking across a slope, anti-roll bars in a steady turn, braking with the other tyre models."""

import dataclasses

import mujoco
import numpy as np
import pytest
from body_measures import (
    axles,
    body_roll,
    roll_lever,
    spring_roll_stiffness,
    steady_turn,
    weight_lever,
)
from vehicle_variants import variant, with_model

from traction import vehicle_model as vm
from traction.envs import VehicleSim
from traction.scenes import build_scene
from traction.vehicle_model.tire_curve import DEFAULT as DEFAULT_CURVES
from traction.vehicle_model.tire_magic import pure

G = 9.81


def _table_mu(sim, surface):
    """Friction of ``surface`` for the vehicle's tyre type (the same on every wheel)."""
    table = sim.friction_table
    mu = table.values[table.surface_index(surface), sim.params.tires.tire_type.astype(int)]
    assert np.all(mu == mu[0])
    return float(mu[0])


def _physx_peak(params) -> float:
    """The physx tyres' peak friction-vs-slip multiplier (the same on all wheels)."""
    peak = params.tires.friction_vs_slip[:, :, 1].max(axis=1)
    assert np.all(peak == peak[0])
    return float(peak[0])


def _bar_roll_stiffness(params):
    """Roll stiffness of the anti-roll bars (N m/rad): a bar k_b between wheels a track t apart
    adds k_b t phi to one strut and takes it from the other, a moment k_b t^2 phi."""
    y = params.suspension.position[:, 1]
    ar = params.anti_roll
    return sum(k * (y[a] - y[b]) ** 2 for (a, b), k in zip(ar.pairs, ar.stiffness, strict=True))


# --- 1. handbrake ----------------------------------------------------------------------------


def _decel_from(sim, v0, commands, seconds=0.8):
    """Mean deceleration (m/s^2) over ``seconds`` after a 0.2 s lock-up, rolling from ``v0``."""
    sim.reset(velocity=[v0, 0, 0])
    sim.state.omega[:] = v0 / sim.params.wheels.radius
    sim.set_commands(**commands)
    sim.step(int(0.2 / sim.dt))
    v1 = sim.forward_speed()
    sim.step(int(seconds / sim.dt))
    return (v1 - sim.forward_speed()) / seconds


def test_handbrake_locks_the_rear_wheels_only_and_brakes_on_the_rear_axle_load():
    p = vm.load_vehicle("sedan_rwd")
    assert np.all(p.wheels.max_handbrake_torque[:2] == 0) and np.all(p.wheels.max_handbrake_torque[2:] > 0)
    sim = VehicleSim(build_scene(p, "flat"))
    mu = _table_mu(sim, "tarmac") * _physx_peak(p)
    r = p.wheels.radius
    decel = _decel_from(sim, 10.0, {"handbrake": 1.0})
    v = sim.forward_speed()
    assert v > 5.0                                               # still rolling
    assert np.all(sim.state.omega[0, 2:] == 0)                   # rear wheels locked
    # free fronts: only bearing drag, so the tyres roll at ~0 slip (1 %)
    np.testing.assert_allclose(sim.state.omega[0, :2], v / r[:2], rtol=0.01)
    # Only the rear axle brakes: its static share a_front / L of the weight, less the load
    # transfer to the front of a rigid car, the tyre forces acting at the ground (lever H = CoM
    # height above ground): a (1 + mu H / L) = mu g a_front / L; the dive moves the CoM forward
    # over the wheels and takes a little more (1.4 % here, 3 % allowed)
    x = p.suspension.position[:, 0]
    wheelbase = x[:2].mean() - x[2:].mean()
    a_front = x[:2].mean() - p.chassis.com[0]                    # CoM behind the front axle
    h_ground = p.chassis.com[2] + r.max()
    rigid = mu * G * a_front / wheelbase / (1 + mu * h_ground / wheelbase)
    assert 0.97 * rigid <= decel <= rigid
    # clearly less than the four-wheel brakes (which stop at ~mu g)
    full = _decel_from(sim, 10.0, {"brake": 1.0}, seconds=0.5)
    assert full > 0.9 * mu * G
    assert decel < 0.55 * full


# --- 2. reverse gear --------------------------------------------------------------------------


def test_reverse_gear_drives_backwards_with_engine_at_reverse_times_final_ratio():
    p = variant("sedan_rwd", gearbox={"autobox": 0.0})
    sim = VehicleSim(build_scene(p, "flat"))
    sim.state.set_gear(sim.params, -1)
    sim.set_commands(throttle=1.0)
    x0 = sim.com_position()[0]
    sim.step(int(7.0 / sim.dt))
    out = sim.outputs
    assert int(sim.state.gearbox.gear[0]) == -1                  # no autobox: stays in reverse
    ratio = p.gearbox.reverse_ratio * p.gearbox.final_ratio
    assert out.gear_ratio[0] == pytest.approx(ratio)
    wheel = sim.state.omega[0] @ p.base_split                    # driven (rear) wheels, rad/s
    assert wheel < 0 and sim.forward_speed() < -10.0             # wheels and car go backwards
    assert sim.com_position()[0] - x0 < -30.0
    assert out.engine_omega[0] > 0.97 * p.engine.max_omega       # engine forwards, on the limiter
    # on the limiter the clutch passes only the drag: sum(c) omega / |G| = 40 N m / 14.8 at
    # strength 10 N m s/rad is 0.3 rad/s of slip in 600, so the gears fix the speed ratio (1 %)
    assert out.engine_omega[0] == pytest.approx(abs(ratio) * abs(wheel), rel=0.01)
    # and the car rolls backwards at the free front wheels' speed (1 %: rolling slip only)
    np.testing.assert_allclose(sim.state.omega[0, :2] * p.wheels.radius[:2], sim.forward_speed(),
                               rtol=0.01)


# --- 3. braking distance on gravel and ice ---------------------------------------------------


@pytest.mark.parametrize("surface,v0,seconds", [("gravel", 20.0, 8.0), ("ice", 5.0, 15.0)])
def test_braking_distance_on_gravel_and_ice(surface, v0, seconds, braking_distance):
    p = vm.load_vehicle("sedan")
    sim = VehicleSim(build_scene(p, "flat", surface=surface))
    mu = _table_mu(sim, surface) * _physx_peak(p)
    assert mu == {"gravel": 0.6, "ice": 0.05}[surface]           # road tyres in the default table
    dist = braking_distance(sim, v0, seconds=seconds)
    # no tyre decelerates faster than mu g (1 % for the stop criterion and the substeps); the
    # friction ramp-up, brake dive and the crawl to the stop lose at most another 10 %
    ideal = v0**2 / (2 * mu * G)
    assert 0.99 * ideal <= dist <= 1.10 * ideal
    sim.step(500)
    assert abs(sim.forward_speed()) < 0.01


# --- 4. parked across a slope ----------------------------------------------------------------


def test_parked_across_15_degree_slope_does_not_creep(holds_still):
    p = vm.load_vehicle("sedan")
    angle = np.radians(15.0)
    sim = VehicleSim(build_scene(p, "slope", angle_deg=15.0))
    quat = np.zeros(4)                                           # the spawn pose turned 90 deg
    mujoco.mju_mulQuat(quat, sim.scene.spawn_quat, np.array([np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)]))
    sim.reset(quat=quat)
    sim.set_commands(brake=1.0)
    sim.step(1000)                                               # settle 2 s
    assert sim.outputs.in_contact.all()
    axes = sim.data.xmat[sim.body].reshape(3, 3)
    assert abs(axes[2, 0]) < 1e-3                                # x axis level: across the slope
    # the body rolls with the slope plus the springs' give under the lateral load transfer:
    # m g sin(a) h over the roll stiffness (h: CoM over the contact patches, where the tyre
    # forces act) less m g cos(a) h_w (rolled by phi, the suspension force points, the wheel
    # centres h_w below the CoM, swing h_w phi across the slope under it, so the normal forces'
    # moment arms shift); 10 % for the bump in the lateral load transfer and the in-plane tyre
    # deflection
    m, h, h_w = p.chassis.mass, roll_lever(p), weight_lever(p)
    give = m * G * np.sin(angle) * h / (spring_roll_stiffness(p) - m * G * np.cos(angle) * h_w)
    assert -body_roll(sim) - angle == pytest.approx(give, rel=0.10)   # downhill is the body's -y
    # the sprung masses carry the weight's normal part m g cos(a), so the springs' mean jounce
    # stays at zero on the slope; roll compresses the downhill side as much as it extends the
    # uphill side
    jounce = sim.outputs.jounce[0]
    assert abs(jounce.mean()) < 1e-4 * abs(jounce).max()
    holds_still(sim)


# --- 5. anti-roll bars -----------------------------------------------------------------------


def _with_bars(bars):
    """The direct-drive sedan with ``bars`` (an AntiRollParams)."""
    return dataclasses.replace(vm.load_vehicle("sedan"), anti_roll=bars)


def test_anti_roll_bars_reduce_body_roll_in_a_steady_turn_by_the_stiffness_ratio():
    bars = vm.load_vehicle("sedan_rwd").anti_roll                # front 8000, rear 5000 N/m
    assert vm.load_vehicle("sedan").anti_roll.pairs == () and len(bars.pairs) == 2
    plain, barred = _with_bars(vm.AntiRollParams()), _with_bars(bars)
    m, h, h_w = plain.chassis.mass, roll_lever(plain), weight_lever(plain)
    k_springs, k_bars = spring_roll_stiffness(plain), _bar_roll_stiffness(barred)
    assert k_bars > 0.3 * k_springs
    per_ay = []                                                  # roll per lateral acceleration
    for params, k in ((plain, k_springs), (barred, k_springs + k_bars)):
        roll, ay = steady_turn(params)
        assert ay > 2.0                                          # a real turn (m/s^2)
        # steady roll: m a_y h = (K - m g h_w) phi (h: CoM over the contact patches, h_w over
        # the wheel centres, see test_body_motion); 3 % for the CoM's sideslip in v * yaw rate
        # and the small-angle geometry
        assert roll == pytest.approx(m * ay * h / (k - m * G * h_w), rel=0.03)
        per_ay.append(roll / ay)
    # the same lateral acceleration rolls the body less by (K_s - m g h_w) / (K_s + K_b - m g
    # h_w) (about 0.73); both runs share every other error, so 1 %
    ratio = per_ay[1] / per_ay[0]
    assert ratio == pytest.approx((k_springs - m * G * h_w) / (k_springs + k_bars - m * G * h_w),
                                  rel=0.01)


def test_anti_roll_bars_add_no_force_at_rest_on_flat_ground():
    loads = []
    for bars in (vm.AntiRollParams(), vm.load_vehicle("sedan_rwd").anti_roll):
        p = _with_bars(bars)
        sim = VehicleSim(build_scene(p, "flat"))
        sim.step(1000)                                           # settle 2 s
        jounce = sim.outputs.jounce[0]
        pairs, _ = axles(p)
        for a, b in pairs:                                       # symmetric: no roll to resist
            assert abs(jounce[a] - jounce[b]) < 1e-6
        loads.append(sim.outputs.spring_force[0].copy())
    np.testing.assert_allclose(loads[1], loads[0], atol=0.5)     # N, of ~3700 per wheel


# --- 6. braking with the other tyre models --------------------------------------------------


def _sliding_and_peak(params, model):
    """(locked-wheel, peak) force per unit load and surface friction of a tyre model."""
    t = params.tires
    if model == "arcade":                                        # friction circle, no curve
        return 1.0, 1.0
    if model == "curve":                                         # default set, slip angle 0
        assert np.all(t.curve_set == 0)
        long0 = DEFAULT_CURVES.long[0]
        locked = -float(np.interp(-1.0, long0[:, 0], long0[:, 1]))
        return t.grip[0] * locked, t.grip[0] * np.abs(long0[:, 1]).max()
    b, c, d, e = t.mf_long[0]
    assert np.all(t.mf_long == t.mf_long[0])
    return float(pure(b, c, d, e, 1.0)), abs(d)                  # |slip ratio| = 1 when locked


@pytest.mark.parametrize("model", ["arcade", "curve", "magic_formula"])
def test_braking_distance_with_other_tyre_models(model, braking_distance):
    p = with_model("sedan", model)
    sim = VehicleSim(build_scene(p, "flat"))
    mu = _table_mu(sim, "tarmac")
    locked, peak = _sliding_and_peak(p, model)
    v0 = 20.0
    dist = braking_distance(sim, v0, seconds=8.0)
    assert np.all(sim.state.omega == 0)                          # locked by 1500 N m brakes
    # no tyre decelerates faster than its peak (1 % for the stop criterion and the substeps);
    # locked it slides at the locked value, and the brief spin-down through the peak only
    # shortens that stop; the friction ramp-up, brake dive and final crawl lose at most 10 %
    # as in the physx tests
    assert 0.99 * v0**2 / (2 * mu * peak * G) <= dist <= 1.10 * v0**2 / (2 * mu * locked * G)
    if locked < 0.9 * peak:                                      # curve, magic formula
        # it is the sliding value that stops the car, well beyond the peak-grip distance
        assert dist > 1.10 * v0**2 / (2 * mu * peak * G)
    sim.step(500)
    assert abs(sim.forward_speed()) < 0.01


# A parked tyre's force (its tread's) is capped at friction x load x the model's static
# coefficient (``static_coef``: the PhysX graph at zero slip, ``grip`` for the curve tyre);
# capping it at friction x load alone once went unseen. A curve-tyre sedan of grip 2 parked
# nose-up a 50 degree slope (tan 50 = 1.19 > 1) holds.
def test_a_grippy_curve_tyre_car_parks_on_a_slope_steeper_than_friction_one():
    p = vm.load_vehicle("sedan")
    n = p.n_wheels
    p = dataclasses.replace(p, tires=dataclasses.replace(
        p.tires, model=np.full(n, float(vm.TIRE_MODELS.index("curve"))), grip=np.full(n, 2.0)))
    sim = VehicleSim(build_scene(p, "slope", angle_deg=50.0))
    sim.set_commands(brake=1.0, handbrake=1.0)
    sim.step(500)                                                # settle 1 s
    x0 = sim.com_position().copy()
    sim.step(1000)                                               # 2 s more
    assert sim.outputs.in_contact.all()
    assert np.linalg.norm(sim.com_position() - x0) < 0.01       # m: it holds
