"""Contact frame: the useful mass a tyre force meets (sprung mass plus its share of the chassis
inertia, the rotation counted twice), against the rigid-body formula; its shares bound what the
chassis presents to all the tyres at once."""

import dataclasses

import numpy as np
import pytest

from traction.vehicle_model import contact
from traction.vehicle_model import layout as L


def _kinematics(yaw: float) -> np.ndarray:
    """A chassis kinematics record at the origin, yawed by ``yaw`` (rad)."""
    k = np.zeros(1, L.KINEMATICS)[0]
    c, s = np.cos(yaw), np.sin(yaw)
    k["rotation"] = [c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0]
    return k


def _mass(p, wheel, k, arm, direction) -> float:
    return 1.0 / contact.inverse_useful_mass(p.packed, k, wheel, *arm, *direction)


@pytest.mark.parametrize("wheel", [0, 3])
def test_force_through_the_centre_of_mass_meets_the_sprung_mass(sedan, wheel):
    m_s = sedan.suspension.sprung_mass[wheel]
    k = _kinematics(0.3)
    assert _mass(sedan, wheel, k, (0.8, -0.2, 0.1), (0.8, -0.2, 0.1)) == pytest.approx(m_s, rel=1e-12)


@pytest.mark.parametrize("yaw", [0.0, 0.7, -2.0])
def test_lever_arm_adds_the_inertia_share(sedan, yaw):
    """A longitudinal force 0.8 m to the side of the CoM turns the chassis about z: the sprung
    mass m_s meets its share J_z m_s / M of the yaw inertia, counted twice (longitudinal and
    lateral forces both turn the chassis), 1/m = 1/m_s + 2 d^2 M / (m_s J_z), in any chassis
    heading (arm and direction are given in the world)."""
    wheel = 1
    m_s, total = sedan.suspension.sprung_mass[wheel], sedan.chassis.mass
    j_z = sedan.chassis.inertia[2]
    assert contact.ROTATION_SHARE == 2.0
    expected = 1.0 / (1.0 / m_s + 2 * 0.8**2 * total / (m_s * j_z))
    k = _kinematics(yaw)
    c, s = np.cos(yaw), np.sin(yaw)
    arm = (-0.8 * s, 0.8 * c, 0.0)           # chassis +y (left) in the world
    forward = (c, s, 0.0)                    # chassis +x in the world
    assert _mass(sedan, wheel, k, arm, forward) == pytest.approx(expected, rel=1e-12)
    assert _mass(sedan, wheel, k, arm, forward) < m_s


def _domination(p, rotation_share):
    """The smallest eigenvalue of ``D - G`` at rest, level, forces at the patches: ``G`` the
    chassis's mobility matrix (patch velocities per patch forces, every wheel and direction at
    once), ``D`` the diagonal of the inverse useful masses with the rotation counted
    ``rotation_share`` times."""
    ch, sp = p.chassis, p.suspension
    arms = sp.position - np.array([0.0, 0.0, 1.0]) * p.wheels.radius[:, None] - ch.com
    dirs = np.array([[1.0, 0.0, 0.0]] * p.n_wheels + [[0.0, 1.0, 0.0]] * p.n_wheels)
    arms = np.tile(arms, (2, 1))
    jac = np.hstack([dirs, np.cross(arms, dirs)])
    inv_inertia = 1.0 / np.asarray(ch.inertia)
    g = jac @ (np.concatenate([np.full(3, 1.0 / ch.mass), inv_inertia])[:, None] * jac.T)
    share = np.tile(sp.sprung_mass / ch.mass, 2)
    turn = np.einsum("ij,j,ij->i", jac[:, 3:], inv_inertia, jac[:, 3:]) / share
    d = 1.0 / np.tile(sp.sprung_mass, 2) + rotation_share * turn
    if rotation_share == contact.ROTATION_SHARE:      # what the update computes
        k = np.zeros(1, L.KINEMATICS)[0]
        k["rotation"] = np.eye(3).ravel()
        packed = [contact.inverse_useful_mass(p.packed, k, i % p.n_wheels, *arms[i], *dirs[i])
                  for i in range(len(dirs))]
        np.testing.assert_allclose(packed, d, rtol=1e-12)
    return np.linalg.eigvalsh(np.diag(d) - g).min() / d.max()


@pytest.mark.parametrize("name", ["sedan", "truck_6x6", "tank"])
def test_the_useful_masses_bound_the_chassis_response_to_every_tyre_at_once(name):
    """The tyre predicts each patch's response to its own force with its useful mass, wheel by
    wheel and direction by direction; that is stable when the diagonal ``D`` of those
    predictions dominates the chassis's mobility matrix ``G``: ``D - G`` positive
    semi-definite. With the rotation counted twice it is, for any chassis (see
    ``contact.inverse_useful_mass``); counted once it holds for the presets, but not for a
    chassis of a fifth of the sedan's yaw inertia (longitudinal and lateral forces both turn
    it)."""
    from traction.vehicle_model import load_vehicle
    p = load_vehicle(name)
    assert _domination(p, 2.0) >= -1e-12
    light_yaw = dataclasses.replace(p, chassis=dataclasses.replace(
        p.chassis, inertia=p.chassis.inertia * np.array([1.0, 1.0, 0.2])))
    assert _domination(light_yaw, 2.0) >= -1e-12
    if name == "sedan":
        assert _domination(light_yaw, 1.0) < -0.05
