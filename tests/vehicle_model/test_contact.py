"""Contact frame: the useful mass a tyre force meets (sprung mass plus its share of the chassis
inertia), against the rigid-body formula."""

import numpy as np
import pytest

from traction.vehicle_model import contact
from traction.vehicle_model import layout as L


def _kinematics(yaw: float) -> np.ndarray:
    """A chassis kinematics row at the origin, yawed by ``yaw`` (rad)."""
    k = np.zeros(L.N_KINEMATICS)
    c, s = np.cos(yaw), np.sin(yaw)
    k[L.K_ROTATION:L.K_ROTATION + 9] = [c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0]
    return k


def _mass(p, wheel, k, arm, direction) -> float:
    return contact.useful_mass(p.packed, k, wheel, *arm, *direction)


@pytest.mark.parametrize("wheel", [0, 3])
def test_force_through_the_centre_of_mass_meets_the_sprung_mass(sedan, wheel):
    m_s = sedan.suspension.sprung_mass[wheel]
    k = _kinematics(0.3)
    assert _mass(sedan, wheel, k, (0.8, -0.2, 0.1), (0.8, -0.2, 0.1)) == pytest.approx(m_s, rel=1e-12)


@pytest.mark.parametrize("yaw", [0.0, 0.7, -2.0])
def test_lever_arm_adds_the_inertia_share(sedan, yaw):
    """A longitudinal force 0.8 m to the side of the CoM turns the chassis about z: the sprung
    mass m_s meets its share J_z m_s / M of the yaw inertia, 1/m = 1/m_s + d^2 M / (m_s J_z),
    in any chassis heading (arm and direction are given in the world)."""
    wheel = 1
    m_s, total = sedan.suspension.sprung_mass[wheel], sedan.chassis.mass
    j_z = sedan.chassis.inertia[2]
    expected = 1.0 / (1.0 / m_s + 0.8**2 * total / (m_s * j_z))
    k = _kinematics(yaw)
    c, s = np.cos(yaw), np.sin(yaw)
    arm = (-0.8 * s, 0.8 * c, 0.0)           # chassis +y (left) in the world
    forward = (c, s, 0.0)                    # chassis +x in the world
    assert _mass(sedan, wheel, k, arm, forward) == pytest.approx(expected, rel=1e-12)
    assert _mass(sedan, wheel, k, arm, forward) < m_s
