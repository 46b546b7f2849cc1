"""Rays cast on a heightfield's grid in compiled code (``heightfield.ray_hit``, the footprint's
rays on a heightfield) meet MuJoCo's own triangles where ``mj_ray`` does."""

import mujoco
import numpy as np

from traction.scenes import build_scene, names
from traction.scenes.heightfield import ray_hit


def test_grid_rays_hit_where_mujoco_rays_do():
    """2,000 rays, tilted up to 0.46 rad, from 0.3-2 m above the rough hill at difficulty 0.8:
    the distance agrees with ``mj_ray``'s to 2e-6 m (MuJoCo stores the heights in float32) and
    the normal is the hit triangle's; a ray from beyond the grid's edge finds nothing."""
    scene = build_scene("truck_6x6", "rough_hill", difficulty=0.8)
    m = scene.model
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    g = scene.terrain.grid
    rng = np.random.default_rng(0)
    chassis = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, names.CHASSIS_BODY)
    geom = np.zeros(1, np.int32)
    length, width = g.extent
    for _ in range(2000):
        x, y = rng.uniform(g.x0 + 1, g.x0 + length - 1), rng.uniform(g.y0 + 1, g.y0 + width - 1)
        o = np.array([x, y, float(g.height_at(x, y)) + rng.uniform(0.3, 2.0)])
        direction = np.array([*rng.uniform(-0.5, 0.5, 2), -1.0])
        direction /= np.linalg.norm(direction)
        t, *normal = ray_hit(g.heights, g.x0, g.y0, g.cell, *o, *direction)
        expected = mujoco.mj_ray(m, d, o, direction, None, 1, chassis, geom)
        assert m.geom_type[geom[0]] == mujoco.mjtGeom.mjGEOM_HFIELD
        assert abs(t - expected) < 2e-6
        p = o + t * direction
        below = p - 0.01 * np.array(normal)                    # the normal faces up, out
        assert normal[2] > 0 and float(g.height_at(*below[:2])) >= below[2] - 1e-9
    beyond = np.array([g.x0 - 1.0, 0.0, 5.0])
    assert ray_hit(g.heights, g.x0, g.y0, g.cell, *beyond, 0.0, 0.0, -1.0)[0] == -1.0
