"""Tyre models in MuJoCo: the 30 Hz jitter test, parking on 15 degrees, custom tyres, editing
the friction table between steps, and the low-speed wheel substeps."""

import dataclasses
import warnings

import numpy as np
import pytest
from vehicle_variants import with_model, with_substeps_for

from traction import vehicle_model as vm
from traction.envs import VehicleSim
from traction.scenes import build_scene


def _flips_per_second(samples, seconds, deadband=0.02):
    s = np.sign(np.where(np.abs(samples) < deadband, 0.0, samples))
    return np.count_nonzero(s[1:] * s[:-1] < 0) / samples.shape[1] / seconds


def _launch_and_turn(clamps):
    """Curve tyres with grip x3, vehicle update at 30 Hz: full throttle from rest, then a turn."""
    p = with_model("sedan_rwd", "curve", grip=3.0, clamps=float(clamps))
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
            sim.set_commands(throttle=0.6, steer=0.5)
        sim.substep()
        slide.append(sim.outputs.patch_slide[0].copy())
    return np.array(slide), sim


def test_friction_clamps_remove_jitter_at_30_hz_with_triple_grip():
    with pytest.warns(RuntimeWarning, match="sticky tyre: .* unstable"):   # as check_timestep says
        slide, sim = _launch_and_turn(clamps=True)
    assert _flips_per_second(slide[..., 0], 6.0) < 2.0          # longitudinal slide
    assert _flips_per_second(slide[..., 1], 6.0) < 2.0          # lateral contact velocity
    assert sim.forward_speed() > 5.0 and sim.data.qvel[5] > 0.3   # it launched and turned
    with pytest.warns(RuntimeWarning) as caught:
        slide_off, _ = _launch_and_turn(clamps=False)
    assert _flips_per_second(slide_off[..., 0], 6.0) > 10.0     # the same run jitters unclamped
    assert any("sticky tyre" in str(w.message) for w in caught)
    assert any("(curve tyres): tyre/wheel rate" in str(w.message) for w in caught)   # foretold


@pytest.mark.parametrize("model", ["physx", "arcade", "curve", "magic_formula"])
def test_parked_on_15_degrees_does_not_creep(model):
    p = with_substeps_for(with_model("sedan", model), 0.005)
    sim = VehicleSim(build_scene(p, "slope", angle_deg=15.0, physics_dt=0.005))
    sim.set_commands(brake=1.0)
    sim.step(400)                                                 # settle 2 s
    p0 = sim.com_position()
    sim.step(2000)                                                # 10 s
    assert np.linalg.norm(sim.com_position() - p0) < 0.01


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


def _rear_slips(substeps_low, v0, dt=0.01, torque=150.0):
    """The sedan's rear-left longitudinal slip over 40 updates of ``dt`` with ``torque`` (N m)
    on each rear wheel from ``v0`` (m/s, rolling), and the ``check_timestep`` warnings."""
    p = vm.load_vehicle("sedan")
    p = dataclasses.replace(p, simulation=dataclasses.replace(p.simulation,
                                                              substeps_low=substeps_low))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sim = VehicleSim(build_scene(p, "flat", physics_dt=dt))
    sim.reset(velocity=[v0, 0, 0])
    sim.state.omega[:] = v0 / p.wheels.radius
    sim.set_commands(wheel_torque=[0, 0, torque, torque])
    slips = []
    for _ in range(40):
        sim.substep()
        slips.append(sim.outputs.long_slip[0, 2])
    return np.array(slips), [str(w.message) for w in caught if "tyre/wheel rate" in str(w.message)]


def test_low_speed_wheel_substeps_stop_the_slip_chattering():
    """Below 5 m/s the slip denominator is min_long_slip_denominator (4 m/s) and the tyre pulls
    the spin toward rolling at lambda = C r^2 / (I v_min) = 245 /s for the sedan; one explicit
    spin update of 10 ms (lambda h = 2.45) overshoots by 1.45x and the slip flips sign at
    every update. ``check_timestep`` says so and asks for 3 substeps; with them (lambda h =
    0.82) the slip settles at T / (r C), less the smoothing. Above 5 m/s the denominator is
    the speed itself, lambda falls to 98 /s at 10 m/s, and one substep (``substeps_high``) is
    enough there (check_timestep rates the 5 m/s threshold, 196 /s, and asks for 2)."""
    p = vm.load_vehicle("sedan")
    c = p.tires.long_stiff_per_unit_gravity[2] * 9.81
    r, inertia = p.wheels.radius[2], p.wheels.moi[2]
    assert c * r**2 / (inertia * p.simulation.min_long_slip_denominator) * 0.01 > 2.0
    slips, warned = _rear_slips(1, 2.0)
    assert np.all(np.sign(slips[-20:-1]) != np.sign(slips[-19:]))     # chatter
    assert warned and "substeps_low >= 3" in warned[0]
    slips, warned = _rear_slips(3, 2.0)
    assert len(warned) == 1 and "196 /s at high speed" in warned[0]   # none at low speed
    assert np.ptp(slips[-20:]) < 1e-3
    assert slips[-1] == pytest.approx(150.0 / (r * c), rel=0.05)
    assert p.simulation.substeps_high == 1
    slips, _ = _rear_slips(1, 10.0)                                    # above the threshold
    assert np.ptp(slips[-20:]) < 1e-3 and slips[-1] > 0


def _front_magic_formula(substeps_low=3, substeps_high=1):
    """The sedan with magic-formula front tyres (defaults: B C D 19.8 per unit slip) and brakes
    of 280 N m, 1.24x the heaviest wheel's share on 10 degrees (m_s g sin 10 r = 226 N m)."""
    p = vm.load_vehicle("sedan")
    model = p.tires.model.copy()
    model[:2] = vm.TIRE_MODELS.index("magic_formula")
    return dataclasses.replace(
        p, tires=dataclasses.replace(p.tires, model=model),
        wheels=dataclasses.replace(p.wheels, max_brake_torque=np.full(4, 280.0)),
        simulation=dataclasses.replace(p.simulation, substeps_low=substeps_low,
                                       substeps_high=substeps_high))


def test_magic_formula_wheels_warned_and_held_with_the_substeps_asked(holds_still):
    """At 2 ms with PhysX's 3 low-speed substeps the stiff magic-formula front tyres flip their
    wheels' spin every step (lambda h ~ 5): the braked wheels never rest, the sticky tyre never
    engages, and the car creeps down 10 degrees at a steady ~0.15 m/s. check_timestep names the
    front wheels and asks for 16 low-speed substeps (4 at high speed); with them, it holds."""
    with pytest.warns(RuntimeWarning) as caught:
        sim = VehicleSim(build_scene(_front_magic_formula(), "slope", angle_deg=10.0))
    msgs = [str(w.message) for w in caught]
    assert len(msgs) == 2
    assert all(m.startswith("sedan: wheels front_left, front_right (magic_formula tyres)")
               for m in msgs)
    assert msgs[0].endswith("substeps_low >= 16") and msgs[1].endswith("substeps_high >= 4")
    sim.set_commands(brake=1.0)
    sim.step(1000)                                              # 2 s to settle
    x0 = sim.com_position()
    sim.step(500)
    assert np.linalg.norm(sim.com_position() - x0) > 0.1        # m in 1 s: creeping
    spins = []
    for _ in range(10):
        sim.step(1)
        spins.append(sim.state.omega[0, 0])
    assert np.ptp(spins) > 0.1                                  # rad/s from step to step
    with warnings.catch_warnings():
        warnings.simplefilter("error")                          # no warning left
        sim = VehicleSim(build_scene(_front_magic_formula(16, 4), "slope", angle_deg=10.0))
    sim.set_commands(brake=1.0)
    sim.step(1000)
    holds_still(sim)
