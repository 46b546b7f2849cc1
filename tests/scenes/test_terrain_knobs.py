"""Terrain knobs: out-of-range values are refused naming terrain, knob and allowed range; every
knob is recorded, so regenerate(seed) gives what a fresh build with that seed gives."""

import mujoco
import numpy as np
import pytest

from traction.scenes import build_scene, heightfield, terrain

BAD = [
    ("truck_6x6", "rough_hill", {"slope_deg": 95.0}, r"rough_hill slope_deg = 95.0; allowed: \[0, 45\] deg"),
    ("truck_6x6", "rough_hill", {"ditches": -3}, r"rough_hill ditches = -3; allowed: an integer in \[0, 20"),
    ("truck_6x6", "rough_hill", {"ditches": 2.5}, r"rough_hill ditches = 2.5; allowed: an integer"),
    ("truck_6x6", "rough_hill", {"roughness": -1.0}, r"rough_hill roughness = -1.0; allowed: \[0, 1\] m"),
    ("truck_6x6", "rough_hill", {"bump_scale": -1.0}, r"rough_hill bump_scale = -1.0; allowed: \[0, 2\] m"),
    ("truck_6x6", "rough_hill", {"resolution": 0.0}, r"rough_hill resolution = 0.0; allowed: \[0.05, 1\] m"),
    ("truck_6x6", "rough_hill", {"resolution": 5.0}, r"rough_hill resolution = 5.0; allowed"),
    ("truck_6x6", "rough_hill", {"length": 20.0}, r"rough_hill length = 20.0; allowed: \[50, 1000\] m"),
    ("truck_6x6", "rough_hill", {"width": 4.0}, r"rough_hill width = 4.0; allowed: \[10, 400\] m"),
    ("truck_6x6", "rough_hill", {"slope_deg": float("nan")}, r"rough_hill slope_deg = nan; allowed"),
    ("truck_6x6", "rough_hill", {"difficulty": float("nan")}, r"rough_hill difficulty = nan"),
    ("truck_6x6", "rough_hill", {"length": 1000.0, "width": 400.0, "resolution": 0.05},
     r"rough_hill: 1000 x 400 m at resolution 0.05 m is \d+ cells; allowed: at most 4000000"),
    ("truck_6x6", "crest", {"resolution": 0.0}, r"crest resolution = 0.0; allowed: \[0.02, 0.5\] m"),
    ("truck_6x6", "crest", {"resolution": 50.0}, r"crest resolution = 50.0; allowed"),
    ("truck_6x6", "crest", {"count": 2.5}, r"crest count = 2.5; allowed: an integer in \[1, 50\]"),
    ("sedan_rwd", "skidpad", {"resolution": -1.0}, r"skidpad resolution = -1.0; allowed: \[0.1, 2\] m"),
    ("tank", "arena", {"size": 0.0}, r"arena size = 0.0; allowed: \[20, 500\] m"),
    ("tank", "arena", {"bump_amplitude": -1.0}, r"arena bump_amplitude = -1.0; allowed: \[0, 0.5\] m"),
    ("sedan", "slope", {"roughness": float("nan")}, r"slope roughness = nan; allowed: \[0, 1\] m"),
    ("sedan", "flat", {"patches": (("ice", (5, 0), (-4, 2)),)}, r"flat patches\[0\] length = -4"),
    ("sedan", "flat", {"patches": (("ice", (float("nan"), 0), (50, 50)),)},
     r"flat patches\[0\] x = nan; allowed: \[-2500, 2500\] m"),
    ("sedan", "flat", {"patches": (("ice", (0, 0)),)}, r"flat patches\[0\] = \('ice', \(0, 0\)\); "
     r"allowed: \(surface name, \(x m, y m\), \(length m, width m\)\)"),
    ("sedan", "flat", {"patches": ((3, (0, 0), (1, 1)),)}, r"flat patches\[0\] surface = 3"),
    ("sedan", "flat", {"patches": None}, r"flat patches = None; allowed: a sequence of"),
    ("sedan", "flat", {"friction_table": "x"}, r"friction_table = 'x'; allowed: a FrictionTable"),
    ("sedan", "flat", {"bogus": 1}, r"flat knob 'bogus' is unknown; allowed: patches"),
    ("sedan", "slope", {"angel_deg": 3}, r"slope knob 'angel_deg' is unknown; allowed: angle_deg, "
     r"roughness"),
    ("truck_6x6", "rough_hill", {"slope": 3}, r"rough_hill knob 'slope' is unknown; allowed: "
     r"difficulty, slope_deg, roughness"),
]


@pytest.mark.parametrize("vehicle, terrain, knobs, message", BAD,
                         ids=[f"{t}-{'-'.join(k)}" for _, t, k, _ in BAD])
def test_bad_knob_names_terrain_knob_and_range(vehicle, terrain, knobs, message):
    with pytest.raises(ValueError, match=message):
        build_scene(vehicle, terrain, **knobs)


def test_bumpy_plane_checks_its_arguments():
    with pytest.raises(ValueError, match=r"bumpy_plane resolution = 0; allowed: \[0.05, 1\] m"):
        heightfield.bumpy_plane(0, resolution=0)


@pytest.mark.parametrize("generator", [heightfield.rough_hill, heightfield.bumpy_plane])
@pytest.mark.parametrize("seed", [-1, 1.5, "3", None])
def test_generators_name_a_bad_seed(generator, seed):
    with pytest.raises(ValueError, match=r"seed = .*; allowed: an integer >= 0"):
        generator(seed)


def test_a_grid_under_two_by_two_points_is_refused_before_mujoco():
    grid = heightfield.TerrainGrid(np.zeros((1, 5)), np.zeros((1, 5), dtype=np.int64),
                                   ("tarmac",), 0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match=r"heights of shape \(1, 5\); allowed: \(nrow, ncol\)"):
        terrain.add_heightfield(mujoco.MjSpec(), grid, [1, 1, 1, 1])


def test_rough_hill_without_rocks_is_finite():
    grid, summit = heightfield.rough_hill(0, bump_scale=0.0, ditches=0)
    assert np.isfinite(grid.heights).all() and np.isfinite(summit).all()


@pytest.mark.parametrize("vehicle, terrain, knobs", [
    ("tank", "arena", {"size": 40.0, "bump_amplitude": 0.08}),
    ("truck_6x6", "rough_hill", {"difficulty": 0.3, "length": 80.0, "resolution": 0.5,
                                 "ditches": 2}),
    ("truck_6x6", "slope", {"angle_deg": 8.0, "roughness": 0.05}),
])
def test_regenerate_equals_a_fresh_build_for_non_default_knobs(vehicle, terrain, knobs):
    scene = build_scene(vehicle, terrain, seed=1, **knobs)
    scene.regenerate(7)
    fresh = build_scene(vehicle, terrain, seed=7, **knobs)
    a, b = scene.model, fresh.model
    assert np.array_equal(a.hfield_data, b.hfield_data)
    assert np.array_equal(a.hfield_size, b.hfield_size)
    assert np.array_equal(a.geom_pos, b.geom_pos) and np.array_equal(a.site_pos, b.site_pos)
    assert np.array_equal(scene.spawn_pos, fresh.spawn_pos)
    assert np.array_equal(scene.spawn_quat, fresh.spawn_quat)
    assert scene.terrain.knobs == fresh.terrain.knobs


@pytest.mark.parametrize("terrain, knobs", [
    ("flat", {"patches": (("ice", (5.0, 0.0), (4.0, 2.0)),)}), ("slope", {"angle_deg": 5.0}),
    ("crest", {"resolution": 0.2, "count": 3}), ("skidpad", {"radius": 15.0, "resolution": 1.0}),
    ("arena", {"size": 30.0}), ("rough_hill", {"width": 30.0, "slope_deg": 10.0}),
])
def test_every_given_knob_is_recorded(terrain, knobs):
    recorded = build_scene("truck_6x6", terrain, **knobs).terrain.knobs
    assert {k: recorded[k] for k in knobs} == knobs
