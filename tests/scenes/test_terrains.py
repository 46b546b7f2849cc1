"""Terrains: deterministic from a seed, rays find the generator's height, every vehicle spawns
at rest on every terrain, regeneration rewrites the heightfield in place."""

import dataclasses
import math

import mujoco
import numpy as np
import pytest

import traction.vehicle_model as vm
from traction.envs import VehicleSim
from traction.scenes import TERRAINS, build_scene, heightfield, names
from traction.scenes.heightfield import rough_hill

VEHICLES = ("sedan", "sedan_rwd", "truck_6x6", "tank")
#: terrains whose spawn point is level ground
LEVEL_SPAWN = ("flat", "rough_hill", "skidpad")


@pytest.mark.parametrize("make", [
    lambda s: heightfield.rough_hill(s, 0.7)[0],
    lambda s: heightfield.bumpy_plane(s, 0.1),
])
def test_same_seed_same_bytes_other_seed_differs(make):
    a, b, c = make(3), make(3), make(4)
    assert a.heights.tobytes() == b.heights.tobytes()
    assert a.surface.tobytes() == b.surface.tobytes()
    assert a.heights.tobytes() != c.heights.tobytes()


def test_difficulty_maps_to_knobs_monotonically():
    easy, hard = heightfield.hill_knobs(0.0), heightfield.hill_knobs(1.0)
    assert all(hard[k] > easy[k] for k in easy)
    with pytest.raises(ValueError, match="difficulty"):
        heightfield.hill_knobs(1.5)
    g_easy, _ = heightfield.rough_hill(1, 0.0)
    g_hard, _ = heightfield.rough_hill(1, 1.0)
    assert np.ptp(g_hard.heights) > np.ptp(g_easy.heights)


def _ray_heights(model, data, xs, ys):
    out = []
    geomid = np.zeros(1, dtype=np.int32)
    for x, y in zip(xs, ys, strict=True):
        d = mujoco.mj_ray(model, data, np.array([x, y, 100.0]), np.array([0, 0, -1.0]), None, 1,
                          -1, geomid)
        out.append(100.0 - d)
    return np.array(out)


@pytest.mark.parametrize("terrain,kw", [("rough_hill", {"difficulty": 1.0}), ("arena", {}),
                                        ("slope", {"roughness": 0.1}), ("crest", {})])
def test_ray_finds_the_generator_height(terrain, kw, rng):
    scene = build_scene("sedan", terrain, seed=5, **kw)
    data = mujoco.MjData(scene.model)
    mujoco.mj_forward(scene.model, data)
    g = scene.terrain.grid
    length, width = g.extent
    xs = g.x0 + rng.uniform(0.05, 0.95, 300) * length
    ys = g.y0 + rng.uniform(0.05, 0.95, 300) * width
    far = np.hypot(xs - data.xipos[1, 0], ys - data.xipos[1, 1]) > 6.0   # not under the car
    got = _ray_heights(scene.model, data, xs[far], ys[far])
    # same triangulation: exact up to MuJoCo's float32 heightfield storage
    np.testing.assert_allclose(got, g.height_at(xs[far], ys[far]),
                               atol=2e-6 * np.ptp(g.heights) + 1e-6)


@pytest.mark.parametrize("vehicle", VEHICLES)
@pytest.mark.parametrize("terrain", TERRAINS)
def test_every_vehicle_spawns_at_rest_on_every_terrain(vehicle, terrain):
    sim = VehicleSim(build_scene(vehicle, terrain))
    sim.substep()
    out = sim.outputs
    assert sim.data.ncon == 0                                   # no chassis contact
    if terrain == "crest":                                      # by design: middle axle hangs
        assert out.in_contact[0].sum() >= 4
    else:
        assert out.in_contact.all()
    sus = sim.params.suspension
    assert np.all(out.jounce[0] < sus.max_compression)
    touching = out.in_contact[0]
    assert np.all(out.jounce[0][touching] > -sus.max_droop[touching])
    # braked, it settles and stays: on level spawns where it was put; elsewhere within the sag
    # of the tyres' static compliance on the incline (slope) or into the ditch (crest)
    p0 = sim.com_position()
    sim.set_commands(brake=1.0)
    sim.step(round(2.0 / sim.dt))                               # settled (crest: ~2 s)
    p1 = sim.com_position()
    assert np.linalg.norm(sim.com_velocity()) < 1e-3           # m/s
    sim.step(round(0.5 / sim.dt))
    assert np.linalg.norm(sim.com_position() - p1) < 1e-3      # m: no creep after
    level = terrain in LEVEL_SPAWN
    assert np.linalg.norm(sim.com_position() - p0) < (0.01 if level else 0.1)
    if level:                                                   # the struts carry the weight
        g = -sim.model.opt.gravity[2]
        assert out.spring_force[0].sum() == pytest.approx(sim.params.chassis.mass * g, rel=0.01)


def test_surface_map_is_used_under_the_wheels():
    sim = VehicleSim(build_scene("sedan_rwd", "skidpad"))
    table = sim.scene.friction_table
    _, hits = sim.gather()
    assert np.all(hits.surface == table.surface_index("tarmac"))
    pts = np.array([[[20 * np.cos(0.7), 20 * np.sin(0.7), 0.0], [60.0, 0.0, 0.0]]])
    np.testing.assert_array_equal(sim.surfaces.lookup(pts),
                                  [[table.surface_index("wet_tarmac"),
                                    table.surface_index("gravel")]])


def test_the_compiled_surface_lookup_reads_the_map_rows_along_y():
    """rough_hill's surface map (161 rows along y x 401 columns along x, four surfaces): the
    compiled lookup the wheels use gives, at 2000 random points over and beyond the grid, the
    nearest cell's surface (``TerrainGrid.surface_at``: row from y, column from x; edge cells
    beyond), resolved to friction-table rows; a lookup with rows and columns swapped matched
    on a square map and passed the skidpad test above."""
    sim = VehicleSim(build_scene("truck_6x6", "rough_hill", seed=1))
    grid = sim.scene.terrain.grid
    assert grid.surface.shape[0] != grid.surface.shape[1] and len(np.unique(grid.surface)) == 4
    rng = np.random.default_rng(0)
    length, width = grid.extent
    x = rng.uniform(grid.x0 - 5, grid.x0 + length + 5, 2000)
    y = rng.uniform(grid.y0 - 5, grid.y0 + width + 5, 2000)
    pts = np.stack([x, y, np.full_like(x, 100.0)], axis=-1)    # above any patch box
    expected = sim.scene.grid_surface[grid.surface_at(x, y)]
    assert len(np.unique(expected)) == 4
    np.testing.assert_array_equal(sim.surfaces.lookup(pts), expected)


def test_a_custom_friction_table_given_to_build_scene_reaches_the_tyres():
    """The scene's surface numbers index the table they were resolved in, so the sim reads that
    table; one with other surfaces is refused (it used to read the default table: ice -> 1.0)."""
    custom = vm.FrictionTable(["ice", "tarmac"], ["road", "offroad", "track"],
                              [[0.1, 0.1, 0.1], [1.0, 1.0, 1.0]])
    scene = build_scene("sedan", "flat", surface="ice", friction_table=custom)
    sim = VehicleSim(scene)
    assert sim.friction_table is custom
    sim.substep()
    np.testing.assert_array_equal(sim.outputs.wheel[0]["friction"], 0.1)
    with pytest.raises(vm.VehicleConfigError, match="friction_table: surfaces"):
        VehicleSim(scene, friction_table=vm.FrictionTable.default())
    p = vm.load_vehicle("sedan")                                # track tyres (column 2)
    tracked = dataclasses.replace(p, tires=dataclasses.replace(p.tires, tire_type=np.full(4, 2.0)))
    sim = VehicleSim(build_scene(tracked, "flat"))
    road_only = vm.FrictionTable(list(sim.friction_table.surfaces), ["road"],
                                 np.ones((len(sim.friction_table.surfaces), 1)))
    with pytest.raises(vm.VehicleConfigError, match=r"tire_type\[0\] = 2 is not a tyre type"):
        sim.friction_table = road_only                          # as the constructor refuses it


def test_regenerate_rewrites_heightfield_without_recompiling():
    scene = build_scene("truck_6x6", "rough_hill", seed=1)
    model = scene.model
    before = model.hfield_data.copy()
    scene.regenerate(seed=2)
    assert model.hfield_data.tobytes() != before.tobytes()
    expected, summit = heightfield.rough_hill(2, 0.5)
    assert scene.terrain.grid.heights.tobytes() == expected.heights.tobytes()
    np.testing.assert_allclose(scene.terrain.goal, summit)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    got = _ray_heights(model, data, [0.0, 20.0], [5.0, -8.0])
    np.testing.assert_allclose(got, expected.height_at(np.array([0.0, 20.0]),
                                                       np.array([5.0, -8.0])), atol=1e-4)
    sim = VehicleSim(scene)                                     # spawn follows the new terrain
    sim.substep()
    assert sim.outputs.in_contact.all() and sim.data.ncon == 0
    assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, names.GOAL_MARKER) >= 0


BOUNDS = ("hfield_size", "geom_pos", "geom_size", "geom_aabb", "geom_rbound", "bvh_aabb")


def _summit_contacts(scene) -> int:
    """Contacts of the chassis placed with its body's bottom 0.2 m into the highest vertex."""
    grid, chassis = scene.terrain.grid, scene.vehicle.chassis
    row, col = np.unravel_index(np.argmax(grid.heights), grid.heights.shape)
    bottom = chassis.body_centre[2] - chassis.body_size[2] / 2
    data = mujoco.MjData(scene.model)
    data.qpos[:7] = [grid.x0 + col * grid.cell, grid.y0 + row * grid.cell,
                     grid.heights.max() - 0.2 - bottom, 1.0, 0.0, 0.0, 0.0]
    mujoco.mj_forward(scene.model, data)
    return int(data.ncon)


@pytest.mark.parametrize(("terrain", "knobs"), [("rough_hill", {"difficulty": 1.0}),
                                                  ("slope", {"roughness": 0.3}), ("arena", {})])
def test_regenerate_and_restore_match_a_fresh_compile(terrain, knobs):
    """The broadphase's bounds follow the rewritten heightfield: after regenerate (and after
    restoring a saved terrain) every bound equals a fresh compile's, so a body pressed into the
    new highest point collides (it sank through when the bounds kept the old, lower top)."""
    scene = build_scene("truck_6x6", terrain, seed=10, **knobs)
    saved = scene.save_terrain()
    scene.regenerate(seed=3)
    fresh = build_scene("truck_6x6", terrain, seed=3, **knobs).model
    for name in BOUNDS:
        np.testing.assert_allclose(getattr(scene.model, name), getattr(fresh, name),
                                   rtol=1e-12, atol=1e-12, err_msg=name)
    scene.restore_terrain(saved)
    again = build_scene("truck_6x6", terrain, seed=10, **knobs).model
    for name in BOUNDS:
        np.testing.assert_allclose(getattr(scene.model, name), getattr(again, name),
                                   rtol=1e-12, atol=1e-12, err_msg=name)


def test_the_chassis_collides_with_a_regenerated_taller_summit():
    scene = build_scene("truck_6x6", "rough_hill", seed=10, difficulty=1.0)   # 22.84 m tall
    scene.regenerate(seed=3)                                                   # 23.84 m tall
    fresh = build_scene("truck_6x6", "rough_hill", seed=3, difficulty=1.0)
    assert _summit_contacts(scene) == _summit_contacts(fresh) > 0


def test_bad_terrain_knobs_raise():
    with pytest.raises(ValueError, match="terrain_name"):
        build_scene("sedan", "moon")
    with pytest.raises(ValueError, match="radius"):
        build_scene("sedan", "skidpad", radius=500)
    with pytest.raises(ValueError, match="arena knob 'spacing' is unknown; allowed: "
                                         "bump_amplitude, size"):
        build_scene("sedan", "arena", spacing=3)


@pytest.mark.parametrize("terrain, knobs", [("flat", {}), ("arena", {"bump_amplitude": 0.0})])
def test_hull_chassis_is_a_convex_mesh_and_catches_a_rollover(terrain, knobs):
    sim = VehicleSim(build_scene("truck_6x6", terrain, **knobs))   # one hull; three slabs of it
    g = mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_GEOM, names.chassis_collision(0))
    assert sim.model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH
    sim.reset(pos=[0.0, 0.0, 3.0], quat=[0.0, 1.0, 0.0, 0.0])       # dropped upside down
    sim.step(1500)
    top = sim.params.chassis.body_centre[2] + sim.params.chassis.body_size[2] / 2
    assert sim.chassis_position()[2] == pytest.approx(top, abs=0.02)  # resting on its roof


@pytest.mark.parametrize("yaw, gx, gy", [(0.0, 0.0, 0.2), (0.0, 0.0, -0.3), (np.pi / 2, 0.25, 0.0),
                                         (0.7, 0.15, -0.2), (-2.5, -0.3, 0.1)])
def test_spawn_on_a_cross_slope_aligns_the_body_with_the_ground(yaw, gx, gy):
    """On a plane z = gx x + gy y rising across the vehicle's heading (or across and along), the
    spawn's body z axis is the plane's normal (-gx, -gy, 1) / |.|, its x axis lies over the
    heading, and every strut top sits the same height above the plane. The roll once had the
    wrong sign: on a 0.2 cross slope the truck spawned tilted 22 deg against the ground, its
    uphill struts 0.13 m above it and its downhill ones 0.91 m."""
    from traction.scenes.terrain import spawn_on_ground

    n = 81
    xs = ys = np.linspace(-20.0, 20.0, n)
    heights = gx * xs[None, :] + gy * ys[:, None]
    grid = heightfield.TerrainGrid(heights, np.zeros((n, n), np.int64), ("tarmac",), -20.0,
                                   -20.0, 0.5)
    p = vm.load_vehicle("truck_6x6")
    pos, quat = spawn_on_ground(grid, p, 1.0, -2.0, yaw)
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, quat)
    rot = rot.reshape(3, 3)
    normal = np.array([-gx, -gy, 1.0]) / np.linalg.norm([-gx, -gy, 1.0])
    np.testing.assert_allclose(rot[:, 2], normal, atol=1e-12)
    heading = np.array([np.cos(yaw), np.sin(yaw)])
    np.testing.assert_allclose(rot[:2, 0] / np.linalg.norm(rot[:2, 0]), heading, atol=1e-12)
    wheels = pos + p.suspension.position @ rot.T               # the strut tops, level in the body
    above = wheels[:, 2] - grid.height_at(wheels[:, 0], wheels[:, 1])
    assert np.ptp(above) < 1e-9                                 # the same for every wheel


# ``build_scene(surface=...)`` names the surface of the whole ground,
# so on a terrain with a per-cell surface map (skidpad: tarmac, a wet quarter ring, gravel
# run-off) every cell takes it too; only the ground geom taking it went unseen.
@pytest.mark.parametrize("terrain", ["skidpad", "rough_hill"])
def test_a_surface_given_to_build_scene_covers_the_whole_surface_map(terrain):
    own = build_scene("sedan", terrain)
    scene = build_scene("sedan", terrain, surface="ice")
    ice = scene.friction_table.surface_index("ice")
    assert len(scene.grid_surface) == len(own.grid_surface) >= 1
    assert np.all(scene.grid_surface == ice) and np.all(own.grid_surface != ice)
    assert scene.geom_surface[scene.geom_surface >= 0].tolist() == [ice]


def test_the_smallest_patch_under_a_point_gives_its_surface():
    """``flat`` patches may overlap: the smallest one containing a point wins, whatever the
    order they were given in (envs/surfaces.py: 'the smallest static surface patch whose
    world bounding box (1 cm margin) contains it'); outside every patch, the ground's."""
    from traction.envs import VehicleSim

    big, small = ("gravel", (5.0, 0.0), (10.0, 10.0)), ("ice", (6.0, 1.0), (2.0, 2.0))
    pts = np.array([[6.0, 1.0, 0.01], [2.0, -3.0, 0.01], [30.0, 0.0, 0.0]])
    for patches in ((big, small), (small, big)):
        sim = VehicleSim(build_scene("sedan", "flat", patches=patches))
        t = sim.scene.friction_table
        np.testing.assert_array_equal(sim.surfaces.lookup(pts),
                                      [t.surface_index("ice"), t.surface_index("gravel"),
                                       t.surface_index("tarmac")])


# Grid lookups on a terrain that is not square about the origin.
def test_surface_at_reads_the_cell_under_the_point_on_a_long_narrow_grid():
    """rough_hill's grid starts at x0 = -length/2, y0 = -width/2 (different): the surface at a
    cell's centre point is that cell's, with rows along y and columns along x."""
    grid, _ = rough_hill(3, 0.8, length=100.0, width=40.0, resolution=0.5)
    assert grid.x0 != grid.y0
    rng = np.random.default_rng(0)
    nrow, ncol = grid.surface.shape
    r, c = rng.integers(0, nrow, 200), rng.integers(0, ncol, 200)
    x, y = grid.x0 + c * grid.cell, grid.y0 + r * grid.cell
    np.testing.assert_array_equal(grid.surface_at(x, y), grid.surface[r, c])
    assert len(np.unique(grid.surface)) > 1                  # (the check can tell cells apart)


def test_contains_spans_the_length_in_x_and_the_width_in_y():
    grid, _ = rough_hill(3, 0.5, length=100.0, width=40.0)
    assert grid.extent == (100.0, 40.0)
    assert grid.contains(40.0, 0.0) and grid.contains(-50.0, -20.0) and grid.contains(50.0, 20.0)
    assert not grid.contains(0.0, 30.0) and not grid.contains(51.0, 0.0)


def test_the_difficulty_dial_rounds_to_the_nearest_ditch_count():
    """ditches = 1 + 4 x difficulty, to the nearest whole ditch: 0.9 -> 5 (4.6), 0.4 -> 3
    (2.6), 0.1 -> 1 (1.4); the dial's top is 5, its bottom 1."""
    from traction.scenes.heightfield import hill_knobs

    assert [hill_knobs(d)["ditches"] for d in (0.0, 0.1, 0.4, 0.6, 0.9, 1.0)] == [1, 1, 3, 3, 5, 5]


# Terrain geometry against its documentation: a flat patch covers exactly its length x width,
# and a spawn on a bump rests every wheel on (not in) the ground.
def test_a_flat_patch_covers_exactly_its_length_and_width():
    """A 10 m x 4 m ice patch centred at (5, 0): ice 4.9 m ahead of and 1.9 m beside its centre,
    tarmac 5.5 m ahead and 2.5 m beside."""
    sim = VehicleSim(build_scene("sedan", "flat", patches=(("ice", (5.0, 0.0), (10.0, 4.0)),)))
    t = sim.scene.friction_table
    inside = np.array([[9.9, 0.0, 0.01], [5.0, 1.9, 0.01], [0.1, -1.9, 0.01]])
    outside = np.array([[10.5, 0.0, 0.01], [5.0, 2.5, 0.01], [-0.5, 0.0, 0.01]])
    assert np.all(sim.surfaces.lookup(inside) == t.surface_index("ice"))
    assert np.all(sim.surfaces.lookup(outside) == t.surface_index("tarmac"))
    g = mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_GEOM, names.ground_patch(0))
    np.testing.assert_allclose(sim.model.geom_size[g][:2], [5.0, 2.0])


def test_a_spawn_with_one_wheel_on_a_bump_rests_every_wheel_on_the_ground():
    """Flat ground with a 0.25 m block under where the front-left wheel lands at a 0.6 rad
    heading: the spawn is raised so that no wheel starts below the ground (within the tilt's
    few mm), and no more than needed (one wheel touches)."""
    from traction.scenes.terrain import spawn_on_ground

    p = vm.load_vehicle("sedan")
    n = 81
    xs = ys = np.linspace(-20.0, 20.0, n)
    yaw = 0.6
    c, s = math.cos(yaw), math.sin(yaw)
    wp = p.suspension.position
    w0 = (c * wp[0, 0] - s * wp[0, 1], s * wp[0, 0] + c * wp[0, 1])
    x, y = np.meshgrid(xs, ys)
    heights = np.where((np.abs(x - w0[0]) < 0.6) & (np.abs(y - w0[1]) < 0.6), 0.25, 0.0)
    grid = heightfield.TerrainGrid(heights, np.zeros((n, n), np.int64), ("tarmac",), -20.0,
                                   -20.0, 0.5)
    pos, quat = spawn_on_ground(grid, p, 0.0, 0.0, yaw)
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, quat)
    rot = rot.reshape(3, 3)
    wheel_height = float(np.max(p.wheels.radius - wp[:, 2]))
    bottoms = pos + wp @ rot.T - rot[:, 2] * wheel_height
    gap = bottoms[:, 2] - grid.height_at(bottoms[:, 0], bottoms[:, 1])
    assert gap.min() > -0.01 and gap.min() < 0.01
