"""Suspension: sprung masses, spring law, travel limits, camber."""

import numpy as np
import pytest

from traction.vehicle_model import VehicleConfigError, compute_sprung_masses
from traction.vehicle_model import suspension as sus


@pytest.mark.parametrize("n_axles", [2, 3, 6])
def test_sprung_masses_match_mass_and_com(n_axles, rng):
    xs = np.linspace(2.0, -2.0, n_axles)
    pos = np.array([[x, s * 0.9, 0.0] for x in xs for s in (1, -1)])
    com = np.array([0.3, -0.05, 0.5])
    m = compute_sprung_masses(pos, com, 6000.0)
    assert m.sum() == pytest.approx(6000.0)
    np.testing.assert_allclose(m @ pos[:, :2] / m.sum(), com[:2], atol=1e-9)
    assert np.all(m > 0)


def test_sprung_masses_lever_rule_for_a_car():
    pos = np.array([[1.35, 0.8, 0], [1.35, -0.8, 0], [-1.35, 0.8, 0], [-1.35, -0.8, 0]])
    m = compute_sprung_masses(pos, np.array([0.1, 0, 0.3]), 1500.0)
    front = 1500.0 * (1.35 + 0.1) / 2.7 / 2
    np.testing.assert_allclose(m, [front, front, 750 - front, 750 - front])


def test_three_wheels_is_exact_and_two_is_an_error():
    pos = np.array([[1.0, 0, 0], [-1, 0.7, 0], [-1, -0.7, 0]])
    m = compute_sprung_masses(pos, np.array([0.0, 0.0, 0.4]), 300.0)
    assert m.sum() == pytest.approx(300.0)
    np.testing.assert_allclose(m @ pos[:, 0], 0.0, atol=1e-9)
    with pytest.raises(VehicleConfigError, match="at least 3"):
        compute_sprung_masses(pos[:2], np.zeros(3), 300.0)


def test_com_outside_support_polygon_is_an_error():
    pos = np.array([[1.0, 0.8, 0], [1, -0.8, 0], [-1, 0.8, 0], [-1, -0.8, 0]])
    with pytest.raises(VehicleConfigError, match="support polygon"):
        compute_sprung_masses(pos, np.array([3.0, 0.0, 0.0]), 1000.0)


def _hit(p, r, dist):
    """``jounce_from_hit`` of every wheel on flat ground: ``(jounce, in_contact, overtravel)``."""
    out = [sus.jounce_from_hit(p.max_compression[j], p.max_droop[j], r[j], dist[j], 1.0)
           for j in range(len(r))]
    return tuple(np.array(a) for a in zip(*out, strict=True))


def _spring(p, jounce, rate, overtravel, contact, g):
    """Suspension force of every wheel on flat ground under an upright chassis (normal = up,
    strut straight down): ``normal_force`` of ``strut_force`` (per-wheel arrays)."""
    return np.array([sus.normal_force(p.sprung_mass[j] * g, 1.0, 1.0, sus.strut_force(
        p.spring_strength[j], p.damper_rate[j], p.bump_stop_stiffness[j], jounce[j], rate[j],
        overtravel[j])) if contact[j] else 0.0 for j in range(len(jounce))])


def test_suspension_force_is_physx_projection_of_the_strut_push_on_the_ground_normal(rng):
    """PhysX (PxVehicleUpdate, processSuspTireWheels): the strut pushes along -w with
    ``F_w = m_s alpha + k x + c xdot`` (``alpha = g . w``, the weight's share on the strut
    line), the weight's part across the line ``T beta = g - w alpha`` is not the strut's, and
    the chassis gets ``n . (-w F_w - T beta m_s)`` along the ground normal n. Random strut
    lines within 60 deg of down, normals within 60 deg of up, jounce, rates and bump stops."""
    g = np.array([0.0, 0.0, -9.81])
    for _ in range(200):
        w = rng.normal(size=3) * [0.5, 0.5, 0.0] + [0, 0, -1]
        n = rng.normal(size=3) * [0.5, 0.5, 0.0] + [0, 0, 1]
        w, n = w / np.linalg.norm(w), n / np.linalg.norm(n)
        m, k, c, b = rng.uniform(100, 900), rng.uniform(1e4, 1e5), rng.uniform(0, 8e3), 1e5
        x, xdot, over = rng.uniform(-0.1, 0.1), rng.uniform(-0.5, 0.5), rng.uniform(0, 0.02)
        alpha = g @ w
        f_w = m * alpha + k * x + c * xdot + b * over
        physx = n @ (-w * f_w - (g - w * alpha) * m)
        ours = sus.normal_force(m * 9.81, n[2], -w @ n, sus.strut_force(k, c, b, x, xdot, over))
        assert ours == pytest.approx(max(physx, 0.0), rel=1e-9, abs=1e-6)
    # upright on flat ground it is the familiar m_s g + k x + c xdot, never pulling
    assert sus.normal_force(500 * 9.81, 1.0, 1.0, sus.strut_force(2e4, 1e3, 0, 0.01, 0.1, 0)) \
        == pytest.approx(500 * 9.81 + 200 + 100)
    assert sus.normal_force(500 * 9.81, 1.0, 1.0, -1e5) == 0.0


def test_spring_force_law_and_limits(sedan):
    p, r = sedan.suspension, sedan.wheels.radius
    g = 9.81
    rest_dist = p.max_compression + 2 * r       # ray length to the ground at zero jounce
    for dj in (-0.05, 0.0, 0.07):
        jounce, contact, over = _hit(p, r, rest_dist - dj)
        np.testing.assert_allclose(jounce, np.full(4, dj), atol=1e-12)
        f = _spring(p, jounce, np.full(4, 0.2), over, contact, g)
        np.testing.assert_allclose(f, p.sprung_mass * g + p.spring_strength * dj
                                   + p.damper_rate * 0.2)
    # beyond max droop: no contact, no force; no hit at all likewise
    far = rest_dist + p.max_droop + 0.01
    for dist in (far, np.full(4, -1.0)):
        jounce, contact, over = _hit(p, r, dist)
        assert not contact.any()
        assert np.all(_spring(p, jounce, np.zeros(4), over, contact, g) == 0)
    # never pulls: fast extension gives zero, not negative
    jounce, contact, over = _hit(p, r, rest_dist)
    assert np.all(_spring(p, jounce, np.full(4, -100.0), over, contact, g) == 0)


def test_camber_interpolates_linearly(sedan):
    p = sedan.suspension
    j = np.array([-p.max_droop[0], -p.max_droop[0] / 2, 0.0, p.max_compression[0]])
    c = [sus.camber(p.camber_at_rest[i], p.camber_at_max_compression[i], p.camber_at_max_droop[i],
                    p.max_compression[i], p.max_droop[i], j[i]) for i in range(4)]
    np.testing.assert_allclose(c, [p.camber_at_max_droop[0], p.camber_at_max_droop[1] / 2,
                                   p.camber_at_rest[2], p.camber_at_max_compression[3]])


def test_long_vehicle_gets_a_positive_split_when_one_exists():
    """6 wheels at x = 2, 0, -2, CoM at x = 1.5: the equal-springs split would make the rear
    wheels pull (-125 kg); the rear ones are held at the bound (5 % of the mean, 50 kg) and the
    lever rule over the rest gives front 2300 and middle 650 kg per wheel."""
    pos = np.array([[x, y, 0.0] for x in (2.0, 0.0, -2.0) for y in (1.0, -1.0)])
    m = compute_sprung_masses(pos, np.array([1.5, 0.0, 0.5]), 6000.0)
    np.testing.assert_allclose(m, [2300, 2300, 650, 650, 50, 50], rtol=1e-9)
    assert m.sum() == pytest.approx(6000.0)
    np.testing.assert_allclose(m @ pos[:, :2] / m.sum(), [1.5, 0.0], atol=1e-9)
    off = compute_sprung_masses(pos, np.array([1.8, 0.3, 0.5]), 6000.0)   # off-centre too
    np.testing.assert_allclose(off @ pos[:, :2] / off.sum(), [1.8, 0.3], atol=1e-9)
    assert off.min() >= sus.MIN_SPRUNG_SHARE * 1000.0 * (1 - 1e-9)
    with pytest.raises(VehicleConfigError, match="support polygon"):
        compute_sprung_masses(pos, np.array([2.5, 0.0, 0.5]), 6000.0)


@pytest.mark.parametrize("name", ["sedan", "sedan_rwd", "truck_6x6", "tank"])
def test_preset_sprung_masses_are_the_equal_springs_split(name):
    """Presets keep the rigid-chassis-on-equal-springs split: a rigid body on equal springs
    settles into a plane, so the masses are affine in the wheel position (m = a + b x + c y),
    and they carry the chassis (sum = mass) with its centre of mass (sum m x = mass com_x, sum
    m y = mass com_y); with three or more wheels not on a line these fix the split. The preset
    file's masses are that split."""
    from traction.vehicle_model import load_vehicle

    p = load_vehicle(name)
    pos, com, mass = p.suspension.position, p.chassis.com, p.chassis.mass
    m = compute_sprung_masses(pos, com, mass)
    np.testing.assert_allclose([m.sum(), m @ pos[:, 0], m @ pos[:, 1]],
                               [mass, mass * com[0], mass * com[1]], rtol=1e-12, atol=1e-9)
    plane = np.column_stack([np.ones(len(pos)), pos[:, 0], pos[:, 1]])
    fit = np.linalg.lstsq(plane, m, rcond=None)[0]
    np.testing.assert_allclose(plane @ fit, m, rtol=1e-12)
    np.testing.assert_allclose(p.suspension.sprung_mass, m, rtol=1e-12)


def test_a_missed_ray_hangs_the_wheel_like_a_far_hit(sedan):
    """No hit (dist < 0) is airborne: full droop and no contact, as a hit beyond the travel."""
    p, r = sedan.suspension, sedan.wheels.radius
    far = p.max_compression + 2 * r + p.max_droop + 5.0
    for dist in (np.full(4, -1.0), far):
        jounce, contact, over = _hit(p, r, dist)
        np.testing.assert_array_equal(jounce, -p.max_droop)
        assert not contact.any() and np.all(over == 0)


def test_anti_roll_bar_force_is_the_same_for_a_miss_and_a_far_hit():
    """sedan_rwd (front bar 8000 N/m): front-left in the air at full droop, front-right at
    rest; the bar adds k x (0 - (-max_droop)) to the right strut whether the left ray misses
    or hits far."""
    from traction import vehicle_model as vm

    p = vm.load_vehicle("sedan_rwd")
    rest = p.suspension.max_compression + 2 * p.wheels.radius
    forces = []
    for dist in (-1.0, 10.0):
        d = rest[None].copy()
        d[0, 0] = dist
        kin = vm.ChassisKinematics(np.zeros((1, 3)), np.eye(3)[None], p.chassis.com[None],
                                   np.zeros((1, 3)), np.zeros((1, 3)))
        hits = vm.GroundHits(d, np.array([0.0, 0.0, 1.0]), np.zeros((1, 4), int))
        out = vm.step(p, vm.VehicleState.zeros(p), kin, hits, vm.Commands.zeros(p),
                      vm.FrictionTable.default(), 0.004)
        assert out.jounce[0, 0] == -p.suspension.max_droop[0] and not out.in_contact[0, 0]
        forces.append(out.spring_force[0, 1])
    expected = p.suspension.sprung_mass[1] * 9.81 + 8000.0 * p.suspension.max_droop[0]
    np.testing.assert_allclose(forces, [expected, expected], rtol=1e-9)
