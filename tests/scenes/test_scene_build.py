"""Scenes compile; wheel rays see the ground (not the visual tyres); kinematics match MuJoCo."""

import mujoco
import numpy as np
import pytest

from traction.envs import VehicleSim
from traction.scenes import TERRAINS, build_scene, names


@pytest.mark.parametrize("terrain", TERRAINS)
def test_scene_compiles_with_one_ray_per_wheel(sedan, terrain):
    kwargs = {"angle_deg": 10.0} if terrain == "slope" else {}
    scene = build_scene(sedan, terrain, **kwargs)
    m = scene.model
    assert m.nsensordata == names.RAY_DATA_SIZE * sedan.n_wheels
    for i in range(sedan.n_wheels):
        g = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, names.wheel_visual(i))
        assert m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 0
    assert m.body_mass[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, names.CHASSIS_BODY)] == \
        pytest.approx(sedan.chassis.mass)


@pytest.mark.parametrize("angle", [0.0, 10.0])
def test_rays_hit_ground_at_rest_distance(sedan, angle):
    terrain = "slope" if angle else "flat"
    sim = VehicleSim(build_scene(sedan, terrain, **({"angle_deg": angle} if angle else {})))
    kin, hits = sim.gather()
    expected = sedan.suspension.max_compression + 2 * sedan.wheels.radius
    np.testing.assert_allclose(hits.dist[0], expected, atol=1e-9)
    a = np.radians(angle)
    np.testing.assert_allclose(hits.normal[0], np.tile([-np.sin(a), 0, np.cos(a)], (4, 1)),
                               atol=1e-9)


def test_chassis_velocity_matches_mujoco(sedan, rng):
    sim = VehicleSim(build_scene(sedan, "flat"))
    q = rng.normal(size=4)
    sim.data.qpos[3:7] = q / np.linalg.norm(q)
    sim.data.qvel[:6] = rng.normal(size=6)
    mujoco.mj_forward(sim.model, sim.data)
    kin, _ = sim.gather()
    res = np.zeros(6)
    mujoco.mj_objectVelocity(sim.model, sim.data, mujoco.mjtObj.mjOBJ_BODY, sim.body, res, 0)
    np.testing.assert_allclose(kin.angular_velocity[0], res[:3], atol=1e-12)
    np.testing.assert_allclose(kin.velocity[0], res[3:], atol=1e-12)


def test_bad_scene_arguments_raise(sedan):
    with pytest.raises(ValueError, match="terrain_name"):
        build_scene(sedan, "moon")
    with pytest.raises(ValueError, match="angle_deg"):
        build_scene(sedan, "slope", angle_deg=75)
    with pytest.raises(ValueError, match="unknown surface"):
        build_scene(sedan, "flat", surface="lava")
