"""Differentials, steering geometry, anti-roll bars, input smoothing, telemetry."""

import dataclasses
import re

import numpy as np
import pytest

from traction import vehicle_model as vm
from traction.vehicle_model import antiroll, controls, differential, steering


def _diff(preset, **kw):
    p = vm.load_vehicle(preset)
    return dataclasses.replace(p, differential=dataclasses.replace(p.differential, **kw))


def _ratios(p, omega, contact, force, thrust):
    """``differential.ratios`` of vehicle type ``p`` for each row of ``(n, n_wheels)`` wheel
    arrays and ``(n, 2)`` tank thrusts; returns the shares ``beta`` ``(n, n_groups)``."""
    n, n_groups = len(omega), p.groups.shape[1]
    beta = np.full((n, n_groups), np.nan)
    base = p.packed.wheel["base_split"]
    for i in range(n):
        differential.ratios(p.packed.vehicle[0], base, p.packed.wheel["group"],
                            np.asarray(omega[i], float), np.asarray(contact[i], float),
                            np.asarray(force[i], float),
                            thrust[i, 0], thrust[i, 1], beta[i])
    return beta


def _steer_angles(p, steer):
    """``steering.steer_angle`` of every wheel of ``p`` for one steer command."""
    return np.array([steering.steer_angle(p.packed.vehicle[0], p.packed.wheel, w, steer)
                     for w in range(p.n_wheels)])


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
    beta = _ratios(p, omega, contact, force, np.zeros((n, 2)))
    np.testing.assert_allclose(beta.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(beta >= 0) and np.all(beta[:, p.base_split == 0] == 0)


@pytest.mark.parametrize("drive, groups, shares", [
    ("rwd", [0, 1, 2, 2], [0.0, 0.0, 1.0]),
    ("fwd", [0, 0, 1, 2], [1.0, 0.0, 0.0]),
    ("4wd", [0, 0, 1, 1], [0.45, 0.55]),
])
def test_locked_axles_are_one_group_with_the_axles_share_whatever_the_spins(drive, groups,
                                                                            shares, rng):
    """A locked four_wheel differential makes each driven axle one spinning group (a spool,
    as a tank's track); an undriven wheel stays its own group with share 0. The shares are the
    axles' (4wd: front_rear_split through the open centre) at any wheel spins."""
    p = _diff("sedan_rwd", kind="locked", drive=drive)
    np.testing.assert_array_equal(np.argmax(p.groups, axis=1), groups)
    np.testing.assert_array_equal(p.packed.wheel["group"], groups)
    assert int(p.packed.vehicle[0]["n_groups"]) == len(shares)
    omega = rng.normal(0, 50, (50, 4))
    beta = _ratios(p, omega, np.ones((50, 4), bool), np.ones((50, 4)), np.zeros((50, 2)))
    np.testing.assert_allclose(beta, np.tile(shares, (50, 1)), atol=1e-15)


def test_tank_ratios_are_signed_thrust_shares(rng):
    p = vm.load_vehicle("tank")
    thrust = rng.uniform(-1, 1, (200, 2))
    beta = _ratios(p, np.zeros((200, 12)), np.ones((200, 12), bool), np.ones((200, 12)), thrust)
    np.testing.assert_allclose(np.abs(beta).sum(axis=1), 1.0)
    assert np.all(np.sign(beta) == np.sign(thrust))
    assert p.groups.shape == (12, 2) and np.all(p.groups.sum(axis=0) == 6)
    std = _diff("tank", tank_mode="standard")
    beta = _ratios(std, np.zeros((1, 12)), np.ones((1, 12), bool), np.ones((1, 12)),
                   np.array([[-1.0, 1.0]]))
    np.testing.assert_allclose(beta[0], [0.0, 1.0])


def test_limited_slip_moves_torque_to_the_slower_wheel():
    p = _diff("sedan_rwd", kind="limited_slip", rear_bias=1.3)   # PhysX's default bias
    np.testing.assert_array_equal(p.packed.wheel["base_split"],
                                  differential.base_split(p.differential, 4))
    omega = np.array([[10.0, 10.0, 60.0, 10.0],     # rear left spinning: 6x > bias
                      [10.0, 10.0, 12.0, 10.0]])    # within bias 1.3: default split
    beta = _ratios(p, omega, np.ones((2, 4), bool), np.ones((2, 4)), np.zeros((2, 2)))
    # PhysX: the faster wheel's share x (1 - d), the slower's x (1 + d), d = (60 - 1.3 x 10) / 60
    np.testing.assert_allclose(beta[0], [0, 0, 0.108333333, 0.891666667], rtol=1e-8)
    np.testing.assert_allclose(beta[1], [0, 0, 0.5, 0.5])


def test_four_wheel_drive_centre_differential_moves_torque_to_the_slower_axle():
    """4WD, front wheels spinning at 60 rad/s and rear ones at 10: the centre differential
    (front share 0.45, bias 1.3) takes d = (120 - 1.3 x 20) / 120 from the front's share and
    gives it to the rear's, 0.45 (1 - d) : 0.55 (1 + d), normalised = 0.0904 : 0.9096, each
    axle split equally (its wheels alike); with the axles alike, the 0.45 : 0.55 split."""
    p = _diff("sedan_rwd", kind="limited_slip", drive="4wd")
    omega = np.array([[60.0, 60.0, 10.0, 10.0], [10.0, 10.0, 10.0, 10.0]])
    beta = _ratios(p, omega, np.ones((2, 4), bool), np.ones((2, 4)), np.zeros((2, 2)))
    np.testing.assert_allclose(beta[0], [0.0452086553, 0.0452086553, 0.4547913447, 0.4547913447],
                               rtol=1e-8)
    np.testing.assert_allclose(beta[1], [0.225, 0.225, 0.275, 0.275])


def test_torque_vectoring_follows_suspension_force():
    q = _diff("truck_6x6", type="torque_vectoring")
    p = q.differential
    np.testing.assert_array_equal(q.packed.wheel["base_split"], differential.base_split(p, 6))
    contact = np.array([[1, 1, 0, 0, 1, 1], [1, 0, 0, 0, 0, 1]], bool)
    force = np.array([[3e4, 1e4, 0, 0, 2e4, 2e4], [3e4, 0, 0, 0, 0, 3e4]])
    beta = _ratios(q, np.zeros((2, 6)), contact, force, np.zeros((2, 2)))
    ground = 1 - 2 * p.air_share
    np.testing.assert_allclose(beta[0], [0.375 * ground, 0.125 * ground, p.air_share, p.air_share,
                                         0.25 * ground, 0.25 * ground])
    np.testing.assert_allclose(beta[1], np.full(6, 1 / 6))    # 2 on the ground < 3: equal split


def test_ackermann_inner_and_outer_angles():
    p = vm.load_vehicle("sedan_rwd")
    pos = p.suspension.position
    length, width = pos[0, 0] - pos[2, 0], pos[0, 1] - pos[1, 1]
    for s in (0.2, 0.5, 1.0, -0.7):
        a = _steer_angles(p, s)
        inner = abs(s) * p.steering.max_angle
        radius = length / np.tan(inner) + width / 2            # turn radius at the axle centre
        left, right = (a[0], a[1]) if s > 0 else (a[1], a[0])
        assert abs(left) == pytest.approx(np.arctan(length / (radius - width / 2)), rel=0.01)
        assert abs(right) == pytest.approx(np.arctan(length / (radius + width / 2)), rel=0.01)
        assert np.sign(a[0]) == np.sign(a[1]) == np.sign(s) and a[2] == a[3] == 0
    zero = dataclasses.replace(p, steering=dataclasses.replace(p.steering, ackermann_accuracy=0.0))
    a = _steer_angles(zero, 0.5)
    assert a[0] == a[1] == pytest.approx(0.5 * p.steering.max_angle)


def test_six_by_six_steers_front_four_wheels():
    p = vm.load_vehicle("truck_6x6")
    a = _steer_angles(p, 1.0)
    assert np.all(a[:4] > 0) and np.all(a[4:] == 0) and a[0] > a[2]


def _bar_forces(bars, jounce, in_contact, spring=5000.0):
    """Bar force per wheel: what ``antiroll.add_forces`` adds to struts at ``spring`` N."""
    f = np.full(len(jounce), spring)
    antiroll.add_forces(bars, np.asarray(jounce, float), np.asarray(in_contact, float), f)
    return f - spring


def test_anti_roll_bar_resists_roll_only(sedan):
    p = vm.AntiRollParams(pairs=((0, 1),), stiffness=(8000.0,))
    bars = dataclasses.replace(sedan, anti_roll=p).packed.bars
    f = _bar_forces(bars, [0.05, -0.05, 0.02, 0.02], np.ones(4, bool))
    np.testing.assert_allclose(f, [800.0, -800.0, 0.0, 0.0])
    assert np.all(_bar_forces(bars, np.full(4, 0.05), np.ones(4, bool)) == 0)


def test_input_smoothing_rates_and_steer_limit():
    """PhysX's analog smoothing: 0.1 s of full inputs moves each channel by its rise rate x
    0.1 s; the steer limit follows |forward speed| (0.75 to 5 m/s, 0.125 at 30, linear between:
    0.4375 at 17.5), the same reversing; a steer moving toward the other side falls toward 0
    at the steer fall rate (5/s), not its rise rate (2.5/s)."""
    sp = controls.SmoothingParams()
    cur = np.zeros((1, 4))
    for _ in range(10):                                         # 0.1 s of full inputs
        cur = controls.smooth(sp, cur, np.array([[1.0, 0.0, 1.0, 1.0]]), np.zeros(1), 0.01)
    np.testing.assert_allclose(cur[0], [0.6, 0.0, 1.0, 0.25])
    fast = controls.smooth(sp, np.array([[0, 0, 0, 0.75]]), np.array([[0, 0, 0, 1.0]]),
                           np.array([30.0]), 0.01)
    assert fast[0, 3] == pytest.approx(0.125)                   # steer limited at 30 m/s
    back = controls.smooth(sp, np.array([[0, 0, 0, -0.75]]), np.array([[0, 0, 0, -1.0]]),
                           np.array([-30.0]), 0.01)
    assert back[0, 3] == pytest.approx(-0.125)                  # reversing as fast: the same
    assert controls.steer_limit(sp, np.array([-17.5]))[0] == pytest.approx(0.4375)
    turn = controls.smooth(sp, np.array([[0, 0, 0, 0.5]]), np.array([[0, 0, 0, -1.0]]),
                           np.zeros(1), 0.01)
    assert turn[0, 3] == pytest.approx(0.5 - 5.0 * 0.01)        # toward the other side: falls


def _shifted(preset, dy):
    """Preset ``preset`` with every y (wheels, CoM, body) moved by ``dy`` m: the same vehicle
    with its chassis origin off its centre line."""
    import tomllib
    from importlib import resources

    from traction.vehicle_model.config import parse_vehicle

    text = (resources.files("traction.vehicle_model") / "presets" / f"{preset}.toml").read_text()

    def move(m):
        return f"{m.group(1)}[{m.group(2)}, {float(m.group(3)) + dy!r}, {m.group(4)}]"

    text = re.sub(r"^((?:position|com|body_centre) = )\[([^,]+), ([^,]+), ([^\]]+)\]", move,
                  text, flags=re.M)
    return parse_vehicle(tomllib.loads(text), f"{preset}_shifted.toml")


def test_tank_tracks_are_the_sides_of_the_centre_line_not_of_the_origin():
    """All wheels at y > 0 (origin beside the right track): the tracks are still 6 + 6 wheels
    and a full-throttle step spins engine and wheels exactly as the centred tank's."""
    tank, moved = vm.load_vehicle("tank"), _shifted("tank", 1.5)
    assert np.all(moved.suspension.position[:, 1] > 0)
    np.testing.assert_array_equal(moved.groups, tank.groups)
    assert moved.groups.sum(axis=0).tolist() == [6, 6]
    omega = []
    for p in (tank, moved):
        kin = vm.ChassisKinematics(np.zeros((1, 3)), np.eye(3)[None], p.chassis.com[None],
                                   np.zeros((1, 3)), np.zeros((1, 3)))
        rest = p.suspension.max_compression + 2 * p.wheels.radius
        hits = vm.GroundHits(rest[None], np.array([0.0, 0.0, 1.0]), np.zeros((1, 12), int))
        s, c = vm.VehicleState.zeros(p), vm.Commands.zeros(p)
        c.throttle, c.thrust = 1.0, [1.0, 1.0]
        vm.step(p, s, kin, hits, c, vm.FrictionTable.default(), 0.004)
        omega.append(np.concatenate([s.omega[0], s.engine_omega]))
    assert np.all(np.isfinite(omega[1])) and omega[0][-1] > 0
    np.testing.assert_allclose(omega[1], omega[0], rtol=1e-9, atol=1e-12)


def test_tank_wheel_on_the_centre_line_is_an_error():
    tank = vm.load_vehicle("tank")
    pos = tank.suspension.position.copy()
    pos[0, 1] = 0.0                                  # between the tracks
    sus = dataclasses.replace(tank.suspension, position=pos)
    with pytest.raises(vm.VehicleConfigError, match=r"t.toml: differential.type = 'tank': "
                                                    r"wheel 0 lies on the centre line"):
        dataclasses.replace(tank, suspension=sus).validate("t.toml")


def test_ackermann_partners_do_not_depend_on_the_chassis_origin():
    """Origin at the right wheels (y = 0.1 and 1.7): same partners, same Ackermann angles."""
    p, moved = vm.load_vehicle("sedan_rwd"), _shifted("sedan_rwd", 0.9)
    assert moved.steering.partner == p.steering.partner == (1, 0, 3, 2)
    for s in (0.5, -1.0):
        np.testing.assert_allclose(_steer_angles(moved, s), _steer_angles(p, s), rtol=1e-12)
    a = _steer_angles(moved, 0.5)
    assert abs(a[0]) > abs(a[1]) > 0                 # left turn: the left wheel is the inner one


def test_torque_vectoring_keeps_most_torque_on_the_ground():
    """Airborne wheels get air_share each; at most n_driven - min_wheels_on_ground of them may
    be in the air, and together they must get less than half the torque."""
    truck = vm.load_vehicle("truck_6x6")
    with pytest.raises(vm.VehicleConfigError, match=re.escape(
            "t.toml: differential.air_share = 0.2: with 5 driven wheels in the air")):
        _diff("truck_6x6", air_share=0.2, min_wheels_on_ground=1).validate("t.toml")
    q = _diff("truck_6x6", air_share=0.15, min_wheels_on_ground=3)     # 3 x 0.15 = 0.45 < 0.5
    q.validate("t.toml")
    contact = np.array([[1, 0, 0, 1, 0, 1]], bool)
    force = np.array([[2e4, 0, 0, 1e4, 0, 1e4]])
    beta = _ratios(q, np.zeros((1, 6)), contact, force, np.zeros((1, 2)))
    ground = 1 - 3 * 0.15
    np.testing.assert_allclose(beta[0], [0.5 * ground, 0.15, 0.15, 0.25 * ground, 0.15,
                                         0.25 * ground])
    assert beta[0, contact[0]].sum() > beta[0, ~contact[0]].sum()
    assert truck.differential.air_share * 3 < 0.5     # the preset is well inside


# The rear LSD's own bias; Ackermann partners of several candidates.
def _lsd_ratios(p, omega):
    beta = np.full(4, np.nan)
    differential.ratios(p.packed.vehicle[0], p.packed.wheel["base_split"], p.packed.wheel["group"],
                        np.asarray(omega, float), np.ones(4), np.ones(4), 0.0, 0.0, beta)
    return beta


def test_rear_limited_slip_uses_the_rear_bias_not_the_front_one():
    """Rear wheels at 15 and 10 rad/s (ratio 1.5): within a rear bias of 2 the split stays
    equal, whatever the front bias (1.3, which 1.5 would exceed)."""
    p = vm.load_vehicle("sedan_rwd")
    d = dataclasses.replace(p.differential, kind="limited_slip", rear_bias=2.0, front_bias=1.3)
    p = dataclasses.replace(p, differential=d)
    np.testing.assert_allclose(_lsd_ratios(p, [10.0, 10.0, 15.0, 10.0]), [0, 0, 0.5, 0.5])
    beta = _lsd_ratios(p, [10.0, 10.0, 30.0, 10.0])       # ratio 3 > 2: d = (30 - 20) / 30
    np.testing.assert_allclose(beta[2:], np.array([1 - 1 / 3, 1 + 1 / 3]) / 2, rtol=1e-12)


def test_ackermann_partner_is_the_mirror_image_not_the_nearest_wheel():
    """Of two wheels across the centre line at the same x, the partner is the one most nearly
    the mirror image (y = -0.6 for a wheel at +0.5), not the nearest (y = -0.1)."""
    pos = np.array([[0.0, 0.5, 0.0], [0.0, -0.1, 0.0], [0.0, -0.6, 0.0],
                    [2.0, 0.8, 0.0], [2.0, -0.8, 0.0]])
    partners = steering.find_partners(pos)
    assert partners[0] == 2 and partners[3] == 4 and partners[4] == 3


def test_anti_roll_bar_of_one_wheel_in_the_air_pushes_only_the_wheel_on_the_ground(sedan):
    """A wheel in the air takes no bar force; its partner on the ground still does (the bar
    twists against the hanging wheel's droop)."""
    from traction.vehicle_model import antiroll

    bars = dataclasses.replace(sedan, anti_roll=vm.AntiRollParams(
        pairs=((0, 1),), stiffness=(8000.0,))).packed.bars
    jounce = np.array([0.05, -0.15, 0.0, 0.0])
    for contact, want in (([1, 0, 1, 1], [1600.0, 0.0, 0.0, 0.0]),
                          ([0, 1, 1, 1], [0.0, -1600.0, 0.0, 0.0])):
        f = np.full(4, 5000.0)
        antiroll.add_forces(bars, jounce, np.asarray(contact, float), f)
        np.testing.assert_allclose(f - 5000.0, want)
