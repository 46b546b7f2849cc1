"""Differentials, steering geometry, anti-roll bars, input smoothing, telemetry."""

import dataclasses

import numpy as np
import pytest

from traction import vehicle_model as vm
from traction.vehicle_model import antiroll, controls, differential, steering
from traction.vehicle_model.telemetry import WHEEL_CHANNELS, Telemetry


def _diff(preset, **kw):
    p = vm.load_vehicle(preset)
    return dataclasses.replace(p, differential=dataclasses.replace(p.differential, **kw))


CASES = [("sedan_rwd", {"kind": "open"}), ("sedan_rwd", {"kind": "limited_slip"}),
         ("sedan_rwd", {"kind": "limited_slip", "drive": "4wd"}),
         ("sedan_rwd", {"kind": "limited_slip", "drive": "fwd"}),
         ("truck_6x6", {"type": "multi_wheel"}), ("truck_6x6", {"type": "torque_vectoring"})]


@pytest.mark.parametrize("preset,kw", CASES)
def test_ratios_sum_to_one_over_random_states(preset, kw, rng):
    p = _diff(preset, **kw)
    n, w = 500, p.n_wheels
    omega = rng.normal(0, 50, (n, w)) * (rng.uniform(size=(n, w)) < 0.9)
    contact = rng.uniform(size=(n, w)) < 0.7
    force = rng.uniform(0, 2e4, (n, w)) * contact
    beta, alpha = differential.ratios(p.differential, p.base_split, omega, contact, force,
                                      np.zeros((n, 2)))
    np.testing.assert_allclose(beta.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(alpha.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(beta >= 0) and np.all(beta[:, p.base_split == 0] == 0)


def test_tank_ratios_are_signed_thrust_shares(rng):
    p = vm.load_vehicle("tank")
    thrust = rng.uniform(-1, 1, (200, 2))
    beta, alpha = differential.ratios(p.differential, p.base_split, np.zeros((200, 12)),
                                      np.ones((200, 12), bool), np.ones((200, 12)), thrust)
    np.testing.assert_allclose(np.abs(beta).sum(axis=1), 1.0)
    assert np.all(np.sign(beta) == np.sign(thrust)) and np.all(alpha == beta)
    assert p.groups.shape == (12, 2) and np.all(p.groups.sum(axis=0) == 6)
    std = dataclasses.replace(p.differential, tank_mode="standard")
    beta, _ = differential.ratios(std, p.base_split, np.zeros((1, 12)), np.ones((1, 12), bool),
                                  np.ones((1, 12)), np.array([[-1.0, 1.0]]))
    np.testing.assert_allclose(beta[0], [0.0, 1.0])


def test_limited_slip_moves_torque_to_the_slower_wheel():
    p = _diff("sedan_rwd", kind="limited_slip").differential
    base = differential.base_split(p, 4)
    omega = np.array([[10.0, 10.0, 60.0, 10.0],     # rear left spinning: 6x > bias
                      [10.0, 10.0, 12.0, 10.0]])    # within bias 1.3: default split
    beta, _ = differential.ratios(p, base, omega, np.ones((2, 4), bool), np.ones((2, 4)),
                                  np.zeros((2, 2)))
    assert beta[0, 3] > 0.8 and beta[0, 2] < 0.2
    np.testing.assert_allclose(beta[1], [0, 0, 0.5, 0.5])


def test_torque_vectoring_follows_suspension_force():
    p = _diff("truck_6x6", type="torque_vectoring").differential
    base = differential.base_split(p, 6)
    contact = np.array([[1, 1, 0, 0, 1, 1], [1, 0, 0, 0, 0, 1]], bool)
    force = np.array([[3e4, 1e4, 0, 0, 2e4, 2e4], [3e4, 0, 0, 0, 0, 3e4]])
    beta, alpha = differential.ratios(p, base, np.zeros((2, 6)), contact, force, np.zeros((2, 2)))
    ground = 1 - 2 * p.air_share
    np.testing.assert_allclose(beta[0], [0.375 * ground, 0.125 * ground, p.air_share, p.air_share,
                                         0.25 * ground, 0.25 * ground])
    np.testing.assert_allclose(beta[1], np.full(6, 1 / 6))    # 2 on the ground < 3: equal split
    np.testing.assert_allclose(alpha, 1 / 6)


def test_ackermann_inner_and_outer_angles():
    p = vm.load_vehicle("sedan_rwd")
    pos = p.suspension.position
    length, width = pos[0, 0] - pos[2, 0], pos[0, 1] - pos[1, 1]
    for s in (0.2, 0.5, 1.0, -0.7):
        a = steering.steer_angles(p.steering, pos, np.array([s]))[0]
        inner = abs(s) * p.steering.max_angle
        radius = length / np.tan(inner) + width / 2            # turn radius at the axle centre
        left, right = (a[0], a[1]) if s > 0 else (a[1], a[0])
        assert abs(left) == pytest.approx(np.arctan(length / (radius - width / 2)), rel=0.01)
        assert abs(right) == pytest.approx(np.arctan(length / (radius + width / 2)), rel=0.01)
        assert np.sign(a[0]) == np.sign(a[1]) == np.sign(s) and a[2] == a[3] == 0
    zero = dataclasses.replace(p.steering, ackermann_accuracy=0.0)
    a = steering.steer_angles(zero, pos, np.array([0.5]))[0]
    assert a[0] == a[1] == pytest.approx(0.5 * p.steering.max_angle)


def test_six_by_six_steers_front_four_wheels():
    p = vm.load_vehicle("truck_6x6")
    a = steering.steer_angles(p.steering, p.suspension.position, np.array([1.0]))[0]
    assert np.all(a[:4] > 0) and np.all(a[4:] == 0) and a[0] > a[2]


def test_anti_roll_bar_resists_roll_only():
    p = vm.AntiRollParams(pairs=((0, 1),), stiffness=(8000.0,))
    f = antiroll.forces(p, np.array([[0.05, -0.05, 0.02, 0.02]]), np.ones((1, 4), bool))
    np.testing.assert_allclose(f[0], [800.0, -800.0, 0.0, 0.0])
    assert np.all(antiroll.forces(p, np.full((1, 4), 0.05), np.ones((1, 4), bool)) == 0)


def test_input_smoothing_rates_and_steer_limit():
    sp = controls.SmoothingParams()
    cur = np.zeros((1, 4))
    for _ in range(10):                                         # 0.1 s of full inputs
        cur = controls.smooth(sp, cur, np.array([[1.0, 0.0, 1.0, 1.0]]), np.zeros(1), 0.01)
    np.testing.assert_allclose(cur[0], [0.6, 0.0, 1.0, 0.25])
    fast = controls.smooth(sp, np.array([[0, 0, 0, 0.75]]), np.array([[0, 0, 0, 1.0]]),
                           np.array([30.0]), 0.01)
    assert fast[0, 3] == pytest.approx(0.125)                   # steer limited at 30 m/s


def test_telemetry_ring_buffer_and_csv(tmp_path, sedan):
    tel = Telemetry(n_vehicles=2, n_wheels=4, capacity=5)
    p = vm.load_vehicle("sedan_rwd")
    state, cmd = vm.VehicleState.zeros(p, 2), vm.Commands.zeros(p, 2)
    fields = {f.name: np.zeros((2, 4)) for f in dataclasses.fields(vm.VehicleOutputs)}
    for k in range(8):
        fields.update(jounce=np.full((2, 4), float(k)), load=np.full((2, 4), 1000.0),
                      long_force=np.full((2, 4), 500.0), engine_omega=np.full(2, 10.0 * k),
                      **{n: np.zeros(2) for n in ("engine_torque", "clutch_slip", "gear",
                                                  "gear_ratio", "throttle")})
        tel.record(0.1 * k, vm.VehicleOutputs(**fields), state, cmd)
    data = tel.arrays()
    np.testing.assert_allclose(data["time"], [0.3, 0.4, 0.5, 0.6, 0.7])
    np.testing.assert_allclose(data["jounce"][:, 0, 0], [3, 4, 5, 6, 7])
    np.testing.assert_allclose(data["norm_long_force"], 0.5)
    np.testing.assert_allclose(data["engine_revs"][:, 1], [30, 40, 50, 60, 70])
    path = tel.write_csv(tmp_path / "t.csv", wheel_names=p.wheel_names)
    lines = path.read_text().splitlines()
    assert len(lines) == 6 and f"{WHEEL_CHANNELS[0]}_front_left" in lines[0]
