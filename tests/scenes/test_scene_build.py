"""Scenes compile; wheel rays see the ground (not the visual tyres); kinematics match MuJoCo."""

import dataclasses

import mujoco
import numpy as np
import pytest

from traction.envs import VehicleSim
from traction.scenes import TERRAINS, build_scene, names
from traction.scenes.vehicle import HFIELD_SLABS, slabs
from traction.vehicle_model import VehicleConfigError, load_vehicle
from traction.vehicle_model.chassis import hull_vertices


@pytest.mark.parametrize("terrain", TERRAINS)
def test_scene_compiles_with_one_ray_per_wheel(sedan, terrain):
    """One rangefinder per wheel, or per footprint ray where the scene casts them with
    rangefinders (not on planes, where one ray is exact, nor on a heightfield, whose grid
    they are cast on in compiled code)."""
    kwargs = {"angle_deg": 10.0} if terrain == "slope" else {}
    scene = build_scene(sedan, terrain, **kwargs)
    m = scene.model
    rays = sedan.contact.n_rays if scene.terrain.footprint == "sensors" else 1
    assert scene.terrain.footprint == {"obstacle": "sensors", "flat": "plane", "slope": "plane",
                                       "skidpad": "plane"}.get(terrain, "grid")
    assert m.nsensordata == names.RAY_DATA_SIZE * sedan.n_wheels * rays
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


@pytest.mark.parametrize("kwargs, match", [
    ({"seed": -1}, r"seed = -1; allowed: an integer >= 0"),
    ({"seed": 1.5}, r"seed = 1.5; allowed: an integer >= 0"),
    ({"physics_dt": "0.002"}, r"physics_dt = '0.002'; allowed: \[0.0001, 0.05\] s"),
])
def test_seed_and_timestep_are_checked(sedan, kwargs, match):
    with pytest.raises(ValueError, match=match):
        build_scene(sedan, "rough_hill", **kwargs)
    scene = build_scene("truck_6x6", "rough_hill")
    with pytest.raises(ValueError, match=r"seed = -3; allowed: an integer >= 0"):
        scene.regenerate(-3)


def test_a_vehicle_built_in_python_is_validated_before_the_model(sedan):
    """MuJoCo's own message would name neither the vehicle nor the field."""
    bad = dataclasses.replace(sedan, chassis=dataclasses.replace(sedan.chassis, mass=-5.0))
    with pytest.raises(VehicleConfigError, match=r"sedan: chassis.mass = -5 is out of range"):
        build_scene(bad, "flat")


@pytest.mark.parametrize("size, centre, panels", [
    ([4.5, 1.8, 0.75], [0.0, 0.0, 0.225], ["lower", "upper"]),   # the sedan: both panels
    ([4.5, 1.8, 0.04], [0.0, 0.0, 0.225], ["upper"]),            # a 4 cm slab
    ([4.5, 1.8, 0.75], [0.0, 0.0, 0.8], ["upper"]),              # a body above the tyres
])
def test_body_panels_fit_any_valid_body(sedan, size, centre, panels):
    """The visual panels split the body at the tyre tops; a body the split misses gets one
    panel (MuJoCo refused a panel of zero or negative height)."""
    ch = dataclasses.replace(sedan.chassis, body_size=size, body_centre=centre)
    model = build_scene(dataclasses.replace(sedan, chassis=ch), "flat").model
    got = [n for n in ("lower", "upper") if mujoco.mj_name2id(
        model, mujoco.mjtObj.mjOBJ_GEOM, f"{names.CHASSIS_VISUAL}_{n}") >= 0]
    assert got == panels
    heights = [2 * model.geom(f"{names.CHASSIS_VISUAL}_{n}").size[2] for n in got]
    assert sum(heights) == pytest.approx(size[2])


def test_bad_scene_arguments_raise(sedan):
    with pytest.raises(ValueError, match="terrain_name"):
        build_scene(sedan, "moon")
    with pytest.raises(ValueError, match="angle_deg"):
        build_scene(sedan, "slope", angle_deg=75)
    with pytest.raises(ValueError, match="unknown surface"):
        build_scene(sedan, "flat", surface="lava")


def test_slabs_of_a_box_are_boxes_of_a_third_of_its_length():
    corners = np.array([(x, y, z) for x in (-3, 3) for y in (-1, 1) for z in (0, 2)], float)
    parts = slabs(corners, 3)
    for i, points in enumerate(parts):
        np.testing.assert_allclose(points.min(axis=0), [-3 + 2 * i, -1, 0])
        np.testing.assert_allclose(points.max(axis=0), [-1 + 2 * i, 1, 2])


def test_hull_slabs_tile_the_hull():
    hull = hull_vertices(load_vehicle("truck_6x6").chassis)
    parts = slabs(hull, 3)
    assert parts[0][:, 0].min() == hull[:, 0].min() and parts[-1][:, 0].max() == hull[:, 0].max()
    for a, b in zip(parts[:-1], parts[1:], strict=True):                 # neighbours meet in one section
        cut = a[:, 0].max()
        assert cut == pytest.approx(b[:, 0].min())
        face_a = a[np.isclose(a[:, 0], cut)]
        face_b = b[np.isclose(b[:, 0], cut)]
        np.testing.assert_allclose(np.unique(face_a.round(12), axis=0),
                                   np.unique(face_b.round(12), axis=0))
    for v in hull:                                          # every corner is kept
        assert any(np.isclose(p, v).all(axis=1).any() for p in parts)


@pytest.mark.parametrize("terrain, n_slabs", [("flat", 1), ("rough_hill", HFIELD_SLABS)])
def test_chassis_is_cut_into_slabs_only_on_heightfields(terrain, n_slabs):
    m = build_scene("truck_6x6", terrain).model
    ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, names.chassis_collision(i))
           for i in range(n_slabs + 1)]
    assert min(ids[:n_slabs]) >= 0 and ids[n_slabs] == -1
    assert all(m.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH for g in ids[:n_slabs])


# The visual tyres are cylinders of the wheel's radius and width
# (MuJoCo's cylinder size is radius, half-length), centred on the wheel at rest, axle along y.
# A tyre drawn twice as wide went unseen.
@pytest.mark.parametrize("vehicle", ["sedan", "truck_6x6"])
def test_visual_tyres_have_the_wheels_radius_and_width(vehicle):
    p = load_vehicle(vehicle)
    m = build_scene(p, "flat").model
    for i in range(p.n_wheels):
        g = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, names.wheel_visual(i))
        assert m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CYLINDER
        np.testing.assert_allclose(m.geom_size[g, :2], [p.wheels.radius[i], p.wheels.width[i] / 2],
                                   rtol=1e-12)
        np.testing.assert_allclose(m.geom_pos[g], p.suspension.position[i], atol=1e-12)
        mat = np.zeros(9)
        mujoco.mju_quat2Mat(mat, m.geom_quat[g])
        np.testing.assert_allclose(mat.reshape(3, 3)[:, 2], [0.0, 1.0, 0.0], atol=1e-12)


# The hull collision shape's documented proportions.
def test_hull_top_is_85_percent_wide_and_70_percent_long_over_the_full_footprint():
    """``hull_vertices``: the box's full footprint at the bottom, 85 % of its width and 70 % of
    its length at the top (about the box centre in y)."""
    ch = load_vehicle("truck_6x6").chassis
    length, width, height = ch.body_size
    v = hull_vertices(ch) - ch.body_centre
    bottom, top = v[v[:, 2] < 0], v[v[:, 2] > 0]
    assert len(bottom) == 4 and len(top) == 4
    np.testing.assert_allclose(bottom[:, 2], -height / 2)
    np.testing.assert_allclose(top[:, 2], height / 2)
    assert np.ptp(bottom[:, 0]) == pytest.approx(length)
    assert np.ptp(bottom[:, 1]) == pytest.approx(width)
    assert np.ptp(top[:, 0]) == pytest.approx(0.7 * length)
    assert np.ptp(top[:, 1]) == pytest.approx(0.85 * width)
    np.testing.assert_allclose(np.sort(top[:, 1]), [-0.425 * width] * 2 + [0.425 * width] * 2)
