"""Vehicle scenarios in MuJoCo with analytic expectations."""

import dataclasses

import numpy as np
import pytest

from traction.envs import VehicleSim
from traction.scenes import build_scene

G = 9.81


def _sim(params, terrain="flat", **kw):
    return VehicleSim(build_scene(params, terrain, **kw))


def test_static_loads_equal_sprung_mass_times_g(sedan):
    sim = _sim(sedan)
    sim.step(1000)
    load = sim.outputs.spring_force[0]
    np.testing.assert_allclose(load, sedan.suspension.sprung_mass * G, rtol=0.01)
    assert load.sum() == pytest.approx(sedan.chassis.mass * G, rel=0.01)
    assert np.all(np.abs(sim.outputs.jounce) < 1e-3)


def test_undamped_drop_oscillates_at_natural_frequency(sedan):
    f0 = 1.5
    sus = sedan.suspension
    k = sus.sprung_mass * (2 * np.pi * f0) ** 2          # same frequency at every corner
    params = dataclasses.replace(sedan, suspension=dataclasses.replace(
        sus, spring_strength=k, damper_rate=np.zeros(4)))
    assert np.allclose(params.suspension.natural_frequency(), f0)
    sim = _sim(params)
    sim.reset(pos=sim.scene.spawn_pos + [0, 0, 0.05])     # dropped from 5 cm above rest
    z = []
    for _ in range(2000):                                 # 4 s
        sim.substep()
        z.append(sim.com_position()[2])
    z = np.array(z) - sim.scene.spawn_pos[2] - sedan.chassis.com[2]
    up = np.flatnonzero((z[:-1] < 0) & (z[1:] >= 0))      # upward zero crossings
    freq = (len(up) - 1) / ((up[-1] - up[0]) * sim.dt)
    assert freq == pytest.approx(f0, rel=0.10)
    assert np.ptp(z[-500:]) > 0.05                        # undamped: amplitude kept


def test_wheel_beyond_droop_gives_no_force_and_free_spin_up(sedan):
    sim = _sim(sedan)
    sim.reset(pos=sim.scene.spawn_pos + [0, 0, 1.0])
    sim.set_commands(wheel_torque=100.0)
    sim.substep()
    out = sim.outputs
    assert not out.in_contact.any()
    assert np.all(out.susp_force == 0) and np.all(out.tire_force == 0)
    # d(omega)/dt = T/I from rest (bearing damping c*omega is still ~0)
    np.testing.assert_allclose(sim.state.omega[0], sim.dt * 100.0 / sedan.wheels.moi, rtol=1e-3)
    sim.step(49)
    c, inertia = sedan.wheels.damping_rate, sedan.wheels.moi    # omega(t) = T/c (1 - e^(-ct/I))
    np.testing.assert_allclose(sim.state.omega[0], 100.0 / c * (1 - np.exp(-c * 0.1 / inertia)),
                               rtol=1e-3)


@pytest.mark.parametrize("surface,mu", [("tarmac", 1.0), ("wet_tarmac", 0.7)])
def test_braking_distance(sedan, surface, mu, braking_distance):
    v0 = 20.0
    sim = _sim(sedan, surface=surface)
    dist = braking_distance(sim, v0, seconds=8.0)
    assert dist == pytest.approx(v0**2 / (2 * mu * G), rel=0.15)
    sim.step(500)
    assert abs(sim.forward_speed()) < 0.01                # comes to rest and stays


def test_parked_on_10_degree_slope_does_not_creep_or_jitter(sedan):
    sim = _sim(sedan, "slope", angle_deg=10.0)
    sim.set_commands(brake=1.0)
    sim.step(1000)                                         # settle 2 s
    p0 = sim.com_position()
    speeds = []
    for _ in range(100):                                   # 10 s
        sim.step(50)
        speeds.append(np.linalg.norm(sim.com_velocity()))
    assert np.linalg.norm(sim.com_position() - p0) < 0.01
    assert max(speeds) < 1e-3                              # no jitter either
    assert np.all(sim.state.omega == 0)


def test_drives_straight(sedan):
    sim = _sim(sedan)
    sim.set_commands(wheel_torque=[0, 0, 500, 500])
    sim.step(2000)                                         # 4 s
    pos = sim.com_position()
    v = sim.forward_speed()
    assert v > 6.0
    # 1000 N m at the rear axle: a <= T / (r m); nothing lost upward of that
    assert v < 4.0 * 1000 / (sedan.wheels.radius[0] * sedan.chassis.mass)
    assert abs(pos[1]) < 0.01
    yaw = np.arctan2(sim.data.xmat[sim.body][3], sim.data.xmat[sim.body][0])
    assert abs(yaw) < 1e-3


def test_low_speed_turn_matches_kinematic_yaw_rate(sedan):
    sim = _sim(sedan)
    sim.reset(velocity=[5.0, 0, 0])
    sim.state.omega[:] = 5.0 / sedan.wheels.radius
    steer = 0.1
    wheelbase = 2.7
    for _ in range(1500):                                  # 3 s, hold ~5 m/s
        err = 5.0 - sim.forward_speed()
        sim.set_commands(wheel_torque=[0, 0, 400 * err, 400 * err], wheel_steer=[steer, steer, 0, 0])
        sim.substep()
    yaw_rate = sim.data.qvel[5]                            # body frame z; chassis is level
    expected = 5.0 * np.tan(steer) / wheelbase
    assert yaw_rate == pytest.approx(expected, rel=0.2)


def test_same_inputs_same_trajectory_bit_for_bit(sedan):
    def run():
        sim = _sim(sedan)
        rng = np.random.default_rng(3)
        for _ in range(40):
            sim.set_commands(wheel_torque=rng.uniform(-300, 800, 4), brake=rng.uniform(0, 0.2),
                           steer=rng.uniform(-1, 1))
            sim.step(10)
        return sim.data.qpos.copy(), sim.state.omega.copy()

    (q1, w1), (q2, w2) = run(), run()
    assert q1.tobytes() == q2.tobytes() and w1.tobytes() == w2.tobytes()


def test_non_finite_inputs_are_rejected(sedan):
    sim = _sim(sedan)
    with pytest.raises(ValueError, match="wheel_torque"):
        sim.set_commands(wheel_torque=np.nan)
