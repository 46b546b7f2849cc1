"""The tyre in MuJoCo: parked on 15 degrees at 30 Hz and 250 Hz with every model, locked-wheel
braking at the Coulomb distance, stops at partial pedal, the slip a launch needs at every speed,
30 Hz with triple grip, custom tyres, editing the friction table between steps."""

import dataclasses
import warnings

import numpy as np
import pytest
from vehicle_variants import with_model

from traction import vehicle_model as vm
from traction.envs import VehicleSim
from traction.scenes import build_scene

G = 9.81
MODELS = ("physx", "arcade", "curve", "magic_formula")


def _flips_per_second(samples, seconds, deadband=0.02):
    s = np.sign(np.where(np.abs(samples) < deadband, 0.0, samples))
    return np.count_nonzero(s[1:] * s[:-1] < 0) / samples.shape[1] / seconds


def _tyre_warnings(p, dt):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [m for m in vm.check_timestep(p, dt) if "tyres:" in m]


def _parked(p, dt, angle_deg=15.0, seconds=10.0):
    """Braked on a slope for ``seconds``: the distance moved after the first 3 s (m) and the
    largest speed after them (m/s)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                      # springs stiff for 30 Hz: known
        sim = VehicleSim(build_scene(p, "slope", angle_deg=angle_deg, physics_dt=dt))
    sim.set_commands(brake=1.0)
    settle = int(round(3.0 / dt))
    positions, speeds = [], []
    for _ in range(int(round(seconds / dt))):
        sim.step(1)
        positions.append(sim.com_position().copy())
        speeds.append(np.linalg.norm(sim.com_velocity()))
    return np.linalg.norm(positions[-1] - positions[settle]), max(speeds[settle:])


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("dt", [1 / 30, 0.004])
def test_parked_on_15_degrees_neither_creeps_nor_jitters(model, dt):
    """Each tyre's tread holds the braked sedan: under 1 cm in the 7 s after the first 3 s
    and under 1 mm/s after them, at 30 Hz as at 250 Hz, for every model (the sticky tyre it
    replaces jittered at 30 Hz, a sign flip nearly every step, and the explicit slip laws
    crept); check_timestep, which warns about a parked vehicle's tyres exactly when a mode
    would flip, is silent. Measured: 1e-7 to 2e-6 m, 1e-8 to 7e-6 m/s."""
    p = with_model("sedan", model)
    creep, speed = _parked(p, dt)
    assert creep < 0.01 and speed < 1e-3
    assert _tyre_warnings(p, dt) == []


def test_a_parked_vehicle_check_timestep_warns_about_jitters_at_30_hz():
    """The other side of the rule: a sedan whose chassis (mass and inertia) is a third of what
    its sprung masses carry (a vehicle changed in code) overstates its useful masses; at 30 Hz
    check_timestep warns, and parked it does not settle (its worst mode flips sign every step,
    the speed stays far above 1 mm/s); at 250 Hz it is silent and settles."""
    p = vm.load_vehicle("sedan")
    light = dataclasses.replace(p, chassis=dataclasses.replace(
        p.chassis, mass=p.chassis.mass / 3, inertia=p.chassis.inertia / 3))
    assert _tyre_warnings(light, 1 / 30)
    _, speed = _parked(light, 1 / 30, seconds=5.0)
    assert speed > 1e-2
    assert _tyre_warnings(light, 0.004) == []
    creep, speed = _parked(light, 0.004, seconds=5.0)
    assert creep < 0.01 and speed < 1e-3


def _locked_stop(p, dt, v0=20.0):
    """Full brakes from ``v0`` with the wheels locked from the start: (distance, time) to the
    first step below 1 cm/s, and whether every wheel stayed locked."""
    sim = VehicleSim(build_scene(p, "flat", physics_dt=dt))
    sim.reset(velocity=[v0, 0, 0])
    sim.set_commands(brake=1.0)
    x0, locked = sim.com_position()[0], True
    for k in range(int(10.0 / dt)):
        sim.step(1)
        locked = locked and bool(np.all(sim.state.omega == 0.0))
        if sim.forward_speed() < 0.01:
            return sim.com_position()[0] - x0, (k + 1) * dt, locked
    raise AssertionError("did not stop")


@pytest.mark.parametrize("model, dt, mu_lock", [("curve", 1 / 30, 0.75), ("physx", 0.004, 1.0)])
def test_locked_wheel_braking_stops_at_the_coulomb_distance_and_time(model, dt, mu_lock):
    """From 20 m/s on tarmac with locked wheels (5000 N m brakes: the sedan's 1500 N m just
    fail to hold the front wheels against the dive), curve tyres (0.75 locked) at 30 Hz and
    PhysX tyres (1.0) at 250 Hz: within 5 % of v^2 / (2 mu g) and 10 % of v / (mu g) (the friction
    clamps of the earlier tyre made 30 Hz viscous: 32.6 m against 27.2 m). Measured:
    +0.8 % / +4.2 % (curve, 30 Hz), +1.8 % / +2.2 % (PhysX, 250 Hz): the brake dive, and the
    first step's build-up of the tread."""
    p = with_model("sedan", model)
    p = dataclasses.replace(p, wheels=dataclasses.replace(      # locked under the brake dive
        p.wheels, max_brake_torque=np.full(4, 5000.0)))
    distance, time, locked = _locked_stop(p, dt)
    assert locked
    assert distance == pytest.approx(20.0**2 / (2 * mu_lock * G), rel=0.05)
    assert time == pytest.approx(20.0 / (mu_lock * G), rel=0.10)


def _partial_stop(pedal, model="physx", v0=3.0):
    """The sedan from ``v0`` rolling with the brake pedal at ``pedal``: stopping distance (m,
    the first step below 1 cm/s), and per step after the first (5 s) whether each wheel is
    locked, its tyre load (N) and the forward speed (m/s)."""
    sim = VehicleSim(build_scene(with_model("sedan", model), "flat"))
    sim.reset(velocity=[v0, 0, 0])
    sim.state.omega[:] = v0 / sim.params.wheels.radius
    sim.set_commands(brake=pedal)
    x0, distance = sim.com_position()[0], None
    locked, loads, speeds = [sim.state.omega[0] == 0.0], [], []
    for _ in range(int(5.0 / sim.dt)):
        sim.step(1)
        locked.append(sim.state.omega[0] == 0.0)
        loads.append(sim.outputs.load[0].copy())
        speeds.append(sim.forward_speed())
        if distance is None and sim.forward_speed() < 0.01:
            distance = sim.com_position()[0] - x0
    return distance, np.array(locked), np.array(loads), np.array(speeds)


@pytest.mark.parametrize("model", MODELS)
def test_stops_at_partial_pedal_neither_chatter_nor_unlock_below_the_brake(model):
    """From 3 m/s at pedal 0.3, 0.5 and 0.7: each wheel changes lock state at most three times
    (the locked-wheel slip rule of the earlier tyre flipped lock and unlock 130-230 times per
    wheel here, with 100 N force ripple), and a locked wheel of a moving car rolls again only
    once its tyre's peak torque (friction 1 x load x radius) exceeds its brake's. At 0.3 no
    wheel locks before the stop, and the car stops where the brakes' work has taken its and
    its wheels' kinetic energy (3 %; measured 0.949 m against 0.953 m). A harder pedal stops
    sooner with PhysX and arcade tyres, whose locked friction is their peak (measured, PhysX:
    0.95, 0.58, 0.48 m).

    With the car's real load transfer the front brakes' 1750 N m at 0.7 exceed the front tyres'
    peak torque at the start (4.3 kN: 1430 N m) but not under the full brake dive (5.4 kN:
    1780 N m): the front wheels lock at once; PhysX and arcade wheels roll again at 0.21 s as
    the dive loads them (the preset's PhysX tyre then carries 98 % of its limit at a slip of
    0.19, which PhysX's default fifth of that stiffness could not reach before locking) and
    lock at the stop (three changes); curve and magic-formula tyres, whose locked friction is
    below their peak (0.75, 0.65), stay locked and stop 1 % and 6 % later than at 0.5, as a car
    without anti-lock brakes does (the magic-formula fronts lock at 0.5 too: the brake's step
    outruns the tread's build-up past the curve's peak)."""
    p = with_model("sedan", model)
    distances = []
    for pedal in (0.3, 0.5, 0.7):
        distance, locked, loads, speeds = _partial_stop(pedal, model)
        changes = locked[1:] != locked[:-1]
        assert np.all(changes.sum(axis=0) <= 3), changes.sum(axis=0)
        brake = pedal * p.wheels.max_brake_torque
        unlocks = (speeds > 0.2)[:, None] & changes & ~locked[1:]
        assert np.all((loads * p.wheels.radius)[unlocks] > np.broadcast_to(brake, loads.shape)[unlocks])
        distances.append(distance)
    energy = 0.5 * p.chassis.mass * 3.0**2 + 0.5 * np.sum(p.wheels.moi * (3.0 / p.wheels.radius)**2)
    assert distances[0] == pytest.approx(energy / np.sum(0.3 * p.wheels.max_brake_torque
                                                         / p.wheels.radius), rel=0.03)
    assert distances[0] > distances[1]
    if model in ("physx", "arcade"):
        assert distances[1] > distances[2]


def _direct(preset, model=None):
    """Preset ``preset`` (with tyre model ``model`` on every wheel, or its own tyres) driven
    wheel by wheel (``differential.type = "direct"``: the test sets each wheel's torque)."""
    p = vm.load_vehicle(preset) if model is None else with_model(preset, model)
    return dataclasses.replace(p, differential=vm.DifferentialParams(type="direct"))


def _climb_slip(p, speed, half=0.5):
    """Vehicle ``p`` driving up a slope of tan = ``half`` at a steady ``speed``, each tyre
    pushing ``half`` its own load, the load it measured the step before (on tarmac, friction 1:
    half its friction limit; the truck's front tyres, unloaded by the slope and its 1.25 m high
    centre of mass, would pass their limit pushing half their rest load), plus a speed trim
    (the push doubles per m/s short; at the steady speed it is nil). Returns each wheel's mean
    slip ratio (omega r - v) / v and load (N) over the last second of four."""
    angle = np.arctan(half)
    sim = VehicleSim(build_scene(p, "slope", angle_deg=np.degrees(angle)))
    up = np.array([np.cos(angle), 0.0, np.sin(angle)])
    sim.reset(velocity=(speed * up).tolist())
    r = p.wheels.radius
    sim.state.omega[:] = speed / r
    load = p.suspension.sprung_mass * G * np.cos(angle)
    slips, loads = [], []
    for k in range(int(4.0 / sim.dt)):
        v = sim.com_velocity() @ up
        push = half * load * (1.0 + 2.0 * (speed - v))
        sim.set_commands(wheel_torque=push * r + p.wheels.damping_rate * sim.state.omega[0])
        sim.step(1)
        load = sim.outputs.load[0].copy()
        if k * sim.dt > 3.0:
            slips.append((sim.state.omega[0] * r - v) / v)
            loads.append(load)
    return np.mean(slips, axis=0), np.mean(loads, axis=0)


def _physx_half_limit_slip(p, load):
    """The PhysX tyre's slip ratio at half the friction limit (friction 1): its force is
    ``limit (k - k^2/3 + k^3/27)`` with ``k = C s / limit`` (``C`` = long_stiff_per_unit_gravity
    x g), so ``s = k* x load / C`` with k* = 0.619 the root of ``k - k^2/3 + k^3/27 = 1/2``;
    ``s`` is over ``omega r`` (driving), the ratio ``s / (1 - s)``."""
    roots = np.roots([1 / 27, -1 / 3, 1.0, -0.5])
    k = roots[np.isreal(roots)].real.min()
    s = k * load / (p.tires.long_stiff_per_unit_gravity * G)
    return s / (1.0 - s)


# Every task's preset with its own (PhysX) tyres - Drift: sedan_rwd, Climb6x6: truck_6x6,
# TankTurn: tank - the sedan, and the sedan with the other built-in models.
HALF_LIMIT_CASES = [("sedan_rwd", None), ("truck_6x6", None), ("tank", None), ("sedan", None),
                    ("sedan", "curve"), ("sedan", "magic_formula")]


@pytest.mark.parametrize("preset, model", HALF_LIMIT_CASES)
def test_the_slip_half_the_friction_limit_needs_is_the_same_at_every_speed(preset, model):
    """Half the friction limit at a steady 0.5, 1, 2, 4 and 10 m/s (issue 50's launch
    criterion): every wheel's slip ratio is within 10 % of its value at 10 m/s (measured: the
    same to 1e-4) and under 0.1, for each task's preset and every built-in model. The 4 m/s
    minimum slip denominator of the earlier tyre needed a 0.9 m/s slide at any speed under
    4 m/s (a slip ratio of 1.8 at 0.5 m/s), and PhysX's default stiffness (1000 x g per unit
    slip: a seventh of a road tyre's for the sedan's 3.7 kN) needed 0.26. The presets' PhysX
    tyres, at 18 x the rest load per unit slip, need the closed form's slip at each wheel's
    load (within 1 %): 0.026-0.038 on the Drift sedan (front-rear: the slope moves load onto
    the rear tyres, and PhysX's stiffness does not grow with load), 0.014-0.050 on the truck,
    0.017-0.047 on the tank. Curve and magic-formula tyres need 0.053 and 0.028, as their
    curves say."""
    p = _direct(preset, model)
    got = {v: _climb_slip(p, v) for v in (0.5, 1.0, 2.0, 4.0, 10.0)}
    slip_10, load_10 = got[10.0]
    for slip, _ in got.values():
        np.testing.assert_allclose(slip, slip_10, rtol=0.1)
        assert np.all((slip > 0) & (slip < 0.1)), slip
    if model is None:
        np.testing.assert_allclose(slip_10, _physx_half_limit_slip(p, load_10), rtol=0.01)


def test_a_launch_at_half_the_friction_limit_makes_its_force_at_the_same_slip_from_walking_pace():
    """Launched from rest with half the friction limit's torque on every wheel (magic-formula
    tyres): the tyres' own slip (``long_slip``: the contact patch's, the tread's deflection
    rate taken off) is within 10 % of its value at 10 m/s from 0.5 m/s on, and under 0.1.
    (The wheel's slip ratio (omega r - v) / v is higher in the first metres: the tread deflects
    to the force over its relaxation length, 13 cm here, as a real tyre's does.) The presets'
    PhysX tyres, launched so, are within 2 % of their 10 m/s slip from 1 m/s on; at 0.5 m/s,
    0.1 s after the start, the tread against the sprung mass (6 Hz, damping ratio 0.7) is at its
    first overshoot and the sedans' slip 11 % over: the steady climb above measures the slip
    each speed needs."""
    p = with_model("sedan", "magic_formula")
    sim = VehicleSim(build_scene(p, "flat"))
    r = p.wheels.radius
    sim.set_commands(wheel_torque=0.5 * p.suspension.sprung_mass * G * r
                     + p.wheels.moi * 0.5 * G / r)
    slips, targets = {}, [0.5, 1.0, 2.0, 4.0, 7.0, 10.0]
    while targets:
        sim.step(1)
        if sim.forward_speed() >= targets[0]:
            k = sim.outputs.long_slip[0].mean()                     # PhysX definition
            slips[targets.pop(0)] = k / (1.0 - k)                   # slip ratio
    ratios = np.array(list(slips.values())) / slips[10.0]
    assert np.all(np.abs(ratios - 1.0) < 0.1) and max(slips.values()) < 0.1


def _launch_and_turn():
    """Curve tyres with grip x3, vehicle update at 30 Hz: full throttle from rest, then a turn."""
    p = with_model("sedan_rwd", "curve", grip=3.0)
    soft = {"spring_strength": np.full(4, 9000.0), "damper_rate": np.full(4, 3700.0)}
    # grip 3 with a rigid car's load transfer would roll the car over in the turn (its static
    # stability factor t / 2h is 1.4 g): as the talk does for its high-grip tyres, keep a third
    # of the tyre forces' pitch and roll moments, a grip-1 car's transfer
    p = dataclasses.replace(p, suspension=dataclasses.replace(p.suspension, **soft),
                            gearbox=dataclasses.replace(p.gearbox, autobox=0.0),
                            tire_force_scaling=vm.TireForceScaling(pitch=1 / 3, roll=1 / 3))
    sim = VehicleSim(build_scene(p, "flat", physics_dt=1 / 30))  # alpha 6 with the soft springs
    sim.set_commands(throttle=1.0)
    slide = []
    for k in range(6 * 30):
        if k == 3 * 30:
            sim.set_commands(throttle=0.6, steer=0.2)
        sim.substep()
        slide.append(sim.outputs.patch_slide[0].copy())
    return np.array(slide), sim


def test_no_jitter_at_30_hz_with_triple_grip():
    """The tyre talk's test: grip 3 at 30 Hz, a launch and a turn. The patch slides (along and
    across each wheel) flip sign under twice a second, as with the friction clamps that the
    implicit step replaces (without them this run flipped more than 10 times a second), and
    check_timestep has nothing to say. (The turn is at steer 0.2: at 0.5, from 15 m/s, the
    grip-3 tyres now pull 2.4 g sideways and roll the car over, as they would.)"""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        slide, sim = _launch_and_turn()
    assert _flips_per_second(slide[..., 0], 6.0) < 2.0          # longitudinal slide
    assert _flips_per_second(slide[..., 1], 6.0) < 2.0          # lateral contact velocity
    assert sim.forward_speed() > 5.0 and sim.data.qvel[5] > 0.3   # it launched and turned


def test_custom_constant_force_tyre_accelerates_the_car_as_expected():
    def push(friction, long_slip, lat_slip, camber, wheel_omega, wheel_radius, rest_load,
             normalised_load, load, gravity):
        zero = np.zeros_like(load)
        return zero, np.where(load > 0, 500.0, 0.0), zero, zero

    vm.register_tire_model("push_500", push)
    p = dataclasses.replace(with_model("sedan", "custom"), custom_tire=push)
    sim = VehicleSim(build_scene(p, "flat"))
    sim.step(1000)                                                # 2 s
    expected = 4 * 500.0 / p.chassis.mass * 2.0
    assert sim.forward_speed() == pytest.approx(expected, rel=0.03)


def test_editing_the_friction_table_between_steps_changes_braking_distance(braking_distance):
    sim = VehicleSim(build_scene("sedan", "flat"))
    p = sim.params
    peak = p.tires.friction_vs_slip[:, :, 1].max(axis=1)      # physx tyres' peak multiplier
    assert np.all(peak == peak[0])
    tire = int(p.tires.tire_type[0])
    table = sim.friction_table
    g = -sim.model.opt.gravity[2]

    def check(dist, mu_table):
        # no tyre decelerates faster than mu_eff g (1 % for the stop criterion and the
        # substeps); the friction ramp-up, brake dive and final crawl lose at most another 10 %
        ideal = 20.0**2 / (2 * mu_table * peak[0] * g)
        assert 0.99 * ideal <= dist <= 1.10 * ideal

    check(braking_distance(sim), table.values[table.surface_index("tarmac"), tire])
    sim.friction_table.set("tarmac", 0.5)
    check(braking_distance(sim), 0.5)
    table = vm.FrictionTable.default()                       # a new table object: re-read
    table.set("tarmac", 0.25)
    sim.friction_table = table
    check(braking_distance(sim), 0.25)


def _brake_dive_deg(scale):
    # The direct-drive sedan at 0.3 brake: its wheels keep rolling, so the brakes set the
    # deceleration whatever the load transfer (a locked PhysX tyre's force depends on its load,
    # and sedan_rwd's engine braking locks its unloaded rear wheels)
    p = dataclasses.replace(vm.load_vehicle("sedan"),
                            tire_force_scaling=vm.TireForceScaling(pitch=scale, roll=scale))
    sim = VehicleSim(build_scene(p, "flat"))
    sim.reset(velocity=[20.0, 0, 0])
    sim.state.omega[:] = 20.0 / p.wheels.radius
    sim.set_commands(brake=0.3)
    sim.step(300)
    x_axis = sim.data.xmat[sim.body].reshape(3, 3)[:, 0]
    return np.degrees(np.arcsin(-x_axis[2]))                        # nose down positive


def test_scaling_tyre_pitch_moment_reduces_brake_dive():
    full, half, none = _brake_dive_deg(1.0), _brake_dive_deg(0.5), _brake_dive_deg(0.0)
    assert full > 0.5                                                # the nose dives
    assert half == pytest.approx(0.5 * full, rel=0.02)               # linear in the scale
    assert abs(none) < 1e-3                                          # deg: no pitch moment


def _rear_slips(v0, dt=0.01, torque=150.0):
    """The sedan's rear-left slip over 40 updates of ``dt`` with ``torque`` (N m) on each rear
    wheel from ``v0`` (m/s, rolling), one wheel substep."""
    p = vm.load_vehicle("sedan")
    p = dataclasses.replace(p, simulation=dataclasses.replace(p.simulation, substeps_low=1))
    sim = VehicleSim(build_scene(p, "flat", physics_dt=dt))
    sim.reset(velocity=[v0, 0, 0])
    sim.state.omega[:] = v0 / p.wheels.radius
    sim.set_commands(wheel_torque=[0, 0, torque, torque])
    slips = []
    for _ in range(40):
        sim.substep()
        slips.append(sim.outputs.long_slip[0, 2])
    return np.array(slips)


@pytest.mark.parametrize("v0", [2.0, 10.0])
def test_one_wheel_substep_of_10_ms_settles_the_slip(v0):
    """The sedan's PhysX tyre pulls its wheel toward rolling at C r^2 / (I v) = 3300 /s at 2 m/s
    (C = 6750 x g per unit slip): an explicit spin update of 10 ms would overshoot rolling 33x
    (with PhysX's default stiffness, a seventh of it, 4.9x: the slip flipped sign every update;
    the earlier tyre needed 3 substeps even with its 4 m/s slip floor). The tyre's
    torque is implicit in the spin update now: with one substep the slip settles, smoothly, to
    T / (r C) (the linear region)."""
    p = vm.load_vehicle("sedan")
    c, r = p.tires.long_stiff_per_unit_gravity[2] * G, p.wheels.radius[2]
    slips = _rear_slips(v0)
    assert np.all(np.sign(slips[5:]) == 1.0)
    assert np.ptp(slips[-20:]) < 1e-3
    assert slips[-1] == pytest.approx(150.0 / (r * c), rel=0.05)


def test_magic_formula_front_tyres_hold_a_slope_with_one_substep(holds_still):
    """The sedan with magic-formula front tyres (19.8 x load per unit slip: 16 low-speed
    substeps at 2 ms were needed for the explicit spin update, which with 3 crept down 10
    degrees at 0.15 m/s) and brakes of 280 N m, 1.24x the heaviest wheel's share on 10 degrees:
    with one substep, no warning, and it holds."""
    p = vm.load_vehicle("sedan")
    model = p.tires.model.copy()
    model[:2] = vm.TIRE_MODELS.index("magic_formula")
    p = dataclasses.replace(
        p, tires=dataclasses.replace(p.tires, model=model),
        wheels=dataclasses.replace(p.wheels, max_brake_torque=np.full(4, 280.0)),
        simulation=dataclasses.replace(p.simulation, substeps_low=1, substeps_high=1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim = VehicleSim(build_scene(p, "slope", angle_deg=10.0))
    sim.set_commands(brake=1.0)
    sim.step(1000)                                              # 2 s to settle
    holds_still(sim)
