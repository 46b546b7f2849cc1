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
    """``spring_force`` of every wheel (per-wheel arrays)."""
    return np.array([sus.spring_force(p.sprung_mass[j], p.spring_strength[j], p.damper_rate[j],
                                      p.bump_stop_stiffness[j], jounce[j], rate[j], overtravel[j],
                                      contact[j], g) for j in range(len(jounce))])


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
