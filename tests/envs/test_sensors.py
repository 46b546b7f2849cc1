"""Observation modes (``obs_mode``): camera pixels and the lidar scan (``envs/sensors.py``)."""

import math

import gymnasium as gym
import mujoco
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import traction.envs
import traction.scenes.terrain
from traction.envs import make_vector, sensors
from traction.scenes import build_scene, names

MODES = ("state", "pixels", "state+pixels", "state+lidar")


def rollout(env, actions, seed=3):
    out = [env.reset(seed=seed)[0]]
    for a in actions:
        obs, _, terminated, truncated, _ = env.step(a)
        out.append(obs)
        if terminated or truncated:
            break
    return out


def same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    return np.array_equal(a, b)


def row(batch, i):
    return {k: v[i] for k, v in batch.items()} if isinstance(batch, dict) else batch[i]


@pytest.mark.parametrize("env_id", traction.envs.ENV_IDS)
@pytest.mark.parametrize("mode", MODES)
def test_check_env_passes_in_every_mode(env_id, mode):
    env = gym.make(env_id, obs_mode=mode)
    check_env(env.unwrapped, skip_render_check=True)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    if mode == "pixels":
        assert obs.shape == (84, 84, 3) and obs.dtype == np.uint8
    elif mode != "state":
        assert set(obs) == set(mode.split("+"))
        assert same(obs["state"], gym.make(env_id).reset(seed=0)[0])   # the state is the same
    env.close()


def test_modes_and_options_are_checked_by_name():
    with pytest.raises(ValueError, match="obs_mode = 'rgb'"):
        gym.make("Traction/TankTurn-v1", obs_mode="rgb")
    with pytest.raises(ValueError, match=r"\['colour'\] unknown"):
        gym.make("Traction/TankTurn-v1", obs_mode="pixels", obs_options={"colour": 1})
    with pytest.raises(ValueError, match=r"\['beams'\] are not used by obs_mode = 'pixels'"):
        gym.make("Traction/TankTurn-v1", obs_mode="pixels", obs_options={"beams": 8})
    with pytest.raises(ValueError, match="camera = 'roof'"):
        gym.make("Traction/TankTurn-v1", obs_mode="pixels", obs_options={"camera": "roof"})
    with pytest.raises(ValueError, match="range"):
        gym.make("Traction/TankTurn-v1", obs_mode="state+lidar", obs_options={"range": -1})
    env = gym.make("Traction/TankTurn-v1", obs_mode="state+lidar")
    with pytest.raises(AttributeError):
        env.unwrapped.obs_mode = "pixels"


def test_options_shape_the_spaces():
    env = gym.make("Traction/Drift-v1", obs_mode="state+lidar", obs_options={
        "beams": 8, "vertical_deg": (-20.0, -5.0, 0.0), "range": 12.0, "lidar_heights": True})
    space = env.observation_space
    assert space["lidar"].shape == space["heights"].shape == (24,)
    assert space["lidar"].high.max() == 12.0
    obs, _ = env.reset(seed=0)
    assert space.contains(obs)
    env = gym.make("Traction/Drift-v1", obs_mode="pixels",
                   obs_options={"width": 64, "height": 48, "camera": "driver"})
    assert env.reset(seed=0)[0].shape == (48, 64, 3)


def test_beam_directions():
    d = sensors.beam_directions(4, 360.0, (0.0,))
    np.testing.assert_allclose(d, [[-1, 0, 0], [0, -1, 0], [1, 0, 0], [0, 1, 0]], atol=1e-12)
    fan = sensors.beam_directions(3, 90.0, (-30.0, 0.0))
    assert fan.shape == (6, 3)
    np.testing.assert_allclose(np.linalg.norm(fan, axis=1), 1.0)
    np.testing.assert_allclose(np.degrees(np.arctan2(fan[:3, 1], fan[:3, 0])), [-45, 0, 45])
    np.testing.assert_allclose(fan[:3, 2], -0.5)


def _posed(scene):
    data = mujoco.MjData(scene.model)
    mujoco.mj_forward(scene.model, data)
    body = mujoco.mj_name2id(scene.model, mujoco.mjtObj.mjOBJ_BODY, names.CHASSIS_BODY)
    rot = data.xmat[body].reshape(3, 3)
    return data, data.xpos[body] + rot @ sensors.mount_point(scene.vehicle), rot


def test_lidar_measures_a_wall_and_the_ground():
    """A level beam ahead meets the wall's face at its known distance; a beam pitched down by
    theta meets flat ground after h / sin(theta); the vehicle's own geoms are not seen."""
    scene = build_scene("sedan", "obstacle", kind="wall", distance=9.0)
    data, origin, rot = _posed(scene)
    np.testing.assert_allclose(rot, np.eye(3), atol=1e-9)           # (spawned level, facing +x)
    lidar = sensors.Lidar(scene.model, sensors.mount_point(scene.vehicle), beams=4, fov_deg=360,
                          vertical_deg=(0.0, -20.0), range_m=30.0, heights=True)
    out = lidar.read(data)
    ahead, behind = 2, 0                                            # (beam order: from behind)
    assert abs(out["lidar"][ahead] - (9.0 - origin[0])) < 0.01
    drop = origin[2] / math.sin(math.radians(20.0))                 # ground plane z = 0
    for beam in range(4, 8):
        if beam != 4 + ahead:                                       # (ahead: the wall first)
            assert abs(out["lidar"][beam] - drop) < 0.01, beam
            assert abs(out["heights"][beam] + origin[2]) < 0.01
    assert out["lidar"][behind] == 30.0                             # nothing within range


def test_lidar_on_heightfield_agrees_with_single_rays():
    env = gym.make("Traction/Climb6x6-v1", obs_mode="state+lidar",
                   obs_options={"beams": 16, "vertical_deg": (-8.0,)}).unwrapped
    obs, _ = env.reset(seed=4)
    m, d = env.model, env.data
    body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, names.CHASSIS_BODY)
    rot = d.xmat[body].reshape(3, 3)
    origin = d.xpos[body] + rot @ sensors.mount_point(env.scene.vehicle)
    geom = np.zeros(1, np.int32)
    for k, local in enumerate(sensors.beam_directions(16, 360.0, (-8.0,))):
        dist = mujoco.mj_ray(m, d, origin, rot @ local, None, 1, body, geom)
        expected = 30.0 if geom[0] < 0 or dist > 30.0 else dist
        assert abs(obs["lidar"][k] - expected) < 1e-4, k
    assert (obs["lidar"] < 30.0).sum() >= 4                         # (it sees the hill)


def test_pixels_change_when_the_vehicle_moves_and_not_otherwise():
    env = gym.make("Traction/Climb6x6-v1", obs_mode="pixels").unwrapped
    first, _ = env.reset(seed=2)
    again = env.sensed()["pixels"]
    assert np.array_equal(first, again)                             # same state, same pixels
    assert first.std() > 5                                          # (not a blank frame)
    state = env.get_state()
    qpos = env.data.qpos.copy()
    env.data.qpos[2] += 0.5                                         # lift the truck 0.5 m
    mujoco.mj_forward(env.model, env.data)
    lifted = env.sensed()["pixels"]
    assert np.mean(np.any(lifted != first, axis=2)) > 0.02
    env.data.qpos[:] = qpos
    env.set_state(state)
    assert np.array_equal(env.sensed()["pixels"], first)


def test_the_overhead_camera_turns_with_the_vehicle():
    """The pixels' default camera is fixed to the vehicle: whatever its heading, its front (the
    yellow band across the body's top) is up the image and centred, and the ground turns."""
    env = gym.make("Traction/TankTurn-v1", obs_mode="pixels").unwrapped
    env.reset(seed=0)
    a, frames = env.sim.qpos_adr, []
    for yaw in (0.0, 1.0, 2.5):
        env.data.qpos[a + 3:a + 7] = [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]
        mujoco.mj_forward(env.model, env.data)
        frame = env.sensed()["pixels"].astype(int)
        yellow = (frame[..., 0] > 200) & (frame[..., 1] > 200) & (frame[..., 2] < 150)
        rows, cols = np.nonzero(yellow)
        assert rows.size > 10, yaw
        assert rows.mean() < 0.4 * frame.shape[0], yaw                 # up the image
        assert abs(cols.mean() - (frame.shape[1] - 1) / 2) < 2, yaw   # centred
        frames.append(frame)
    for other in frames[1:]:
        assert np.mean(np.any(other != frames[0], axis=2)) > 0.1       # the ground turned


@pytest.mark.parametrize("mode", ["state+pixels", "state+lidar"])
def test_same_seed_and_actions_same_observations_and_restore(mode):
    actions = np.random.default_rng(1).uniform(-1, 1, (25, 2)).astype(np.float32)
    a, b = (gym.make("Traction/TankTurn-v1", obs_mode=mode) for _ in range(2))
    ra, rb = rollout(a, actions), rollout(b, actions)
    assert all(same(x, y) for x, y in zip(ra, rb, strict=True))
    # restore the state after 10 steps and replay: the same observations, pixels re-rendered
    a.reset(seed=3)
    for act in actions[:10]:
        a.step(act)
    snap = a.unwrapped.get_state()
    tail = [a.step(act)[0] for act in actions[10:]]
    a.unwrapped.set_state(snap)
    assert all(same(x, a.step(act)[0]) for x, act in zip(tail, actions[10:], strict=True))


@pytest.mark.parametrize("env_id,mode", [("Traction/TankTurn-v1", "pixels"),
                                         ("Traction/Drift-v1", "state+pixels"),
                                         ("Traction/Climb6x6-v1", "state+lidar")])
def test_vector_env_observations_equal_the_single_envs(env_id, mode):
    n, steps = 3, 12
    venv = make_vector(env_id, n, obs_mode=mode)
    singles = [gym.make(env_id, obs_mode=mode) for _ in range(n)]
    assert venv.single_observation_space == singles[0].observation_space
    obs, _ = venv.reset(seed=7)
    assert venv.observation_space.contains(obs)
    for i, env in enumerate(singles):
        assert same(env.reset(seed=7 + i)[0], row(obs, i))
    rng = np.random.default_rng(0)
    for _ in range(steps):
        act = rng.uniform(-1, 1, venv.action_space.shape).astype(np.float32)
        obs, _, terminated, truncated, _ = venv.step(act)
        assert not (terminated.any() or truncated.any())
        for i, env in enumerate(singles):
            assert same(env.step(act[i])[0], row(obs, i)), i


def test_sb3_adapter_trains_on_dict_and_image_observations():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO

    from traction.train.sb3_vec import TractionSB3VecEnv

    for mode, policy in (("state+lidar", "MultiInputPolicy"), ("pixels", "CnnPolicy")):
        venv = TractionSB3VecEnv("Traction/TankTurn-v1", 2, obs_mode=mode,
                                 max_episode_steps=20)
        obs = venv.reset()
        if mode == "pixels":
            assert obs.shape == (2, 84, 84, 3) and obs.dtype == np.uint8
        else:
            assert obs["lidar"].shape == (2, 64) and obs["state"].shape == (2, 9)
        model = PPO(policy, venv, n_steps=16, batch_size=16, n_epochs=1, seed=0, device="cpu")
        model.learn(48)
        assert model.num_timesteps >= 48
        venv.close()


def test_grid_rays_agree_with_mujoco_in_every_direction():
    """The terrain-grid ray (heightfield.ray_grid) against mj_ray on the heightfield alone, for
    rays level, down and up, from points above the Climb hill and the arena's bumps."""
    from traction.scenes.heightfield import ray_grid

    rng = np.random.default_rng(0)
    for env_id in ("Traction/Climb6x6-v1", "Traction/TankTurn-v1"):
        env = gym.make(env_id).unwrapped
        env.reset(seed=1)
        m, d, grid = env.model, env.data, env.scene.terrain.grid
        only_terrain = np.zeros(mujoco.mjNGROUP, np.uint8)
        only_terrain[traction.scenes.terrain.TERRAIN_GROUP] = 1
        geom, top = np.zeros(1, np.int32), float(grid.heights.max())
        (length, width), hits = grid.extent, 0
        for _ in range(300):
            x, y = grid.x0 + rng.uniform(0, length), grid.y0 + rng.uniform(0, width)
            origin = np.array([x, y, grid.height_at(x, y) + rng.uniform(0.2, 3.0)])
            elevation, azimuth = np.radians(rng.uniform(-40, 10)), rng.uniform(-np.pi, np.pi)
            v = np.array([np.cos(elevation) * np.cos(azimuth),
                          np.cos(elevation) * np.sin(azimuth), np.sin(elevation)])
            ours = ray_grid(grid.heights, grid.x0, grid.y0, grid.cell, top, *origin, *v, 40.0)
            theirs = mujoco.mj_ray(m, d, origin, v, only_terrain, 1, -1, geom)
            theirs = -1.0 if theirs < 0 or theirs > 40.0 else theirs
            assert (ours < 0) == (theirs < 0), (origin, v, ours, theirs)
            if ours >= 0:
                hits += 1
                assert abs(ours - theirs) < 1e-4, (origin, v, ours, theirs)
        assert hits > 100


def test_pixels_are_a_function_of_the_state_not_of_the_envs_history():
    """An env that drew other terrains first (its camera's twin made on another), restored to
    a state, sees what the env that made the state saw; render() changes nothing it sees."""
    actions = np.random.default_rng(2).uniform(-1, 1, (8, 2)).astype(np.float32)
    a = gym.make("Traction/TankTurn-v1", obs_mode="pixels", render_mode="rgb_array",
                 width=64, height=48).unwrapped
    b = gym.make("Traction/TankTurn-v1", obs_mode="pixels").unwrapped
    first, _ = a.reset(seed=1)
    b.reset(seed=5)
    b.step(actions[0])
    b.set_state(a.get_state())
    assert np.array_equal(b.sensed()["pixels"], first)
    for act in actions:                     # a renders frames between steps, b does not
        a.render()
        assert np.array_equal(a.step(act)[0], b.step(act)[0])
    snap = a.get_state()
    seen = a.sensed()["pixels"]
    a.reset(seed=9)                          # another terrain, then back
    a.set_state(snap)
    assert np.array_equal(a.sensed()["pixels"], seen)


def test_a_diverged_step_after_a_restore_repeats_the_restored_readings():
    env = gym.make("Traction/Climb6x6-v1", obs_mode="state+lidar").unwrapped
    obs, _ = env.reset(seed=3)
    snap = env.get_state()
    env.reset(seed=4)
    env.set_state(snap)
    repeated = env.sensed(diverged=True)
    assert np.array_equal(repeated["lidar"], obs["lidar"])


def test_coarse_heightfield_keeps_the_extent_and_the_point_budget():
    from traction.scenes.render import coarse_heightfield

    h = np.random.default_rng(0).uniform(0, 1, (161, 401))
    data, rows, cols = coarse_heightfield(h.ravel(), 161, 401, 1024)
    assert rows * cols <= 1024 and data.size == rows * cols
    grid = data.reshape(rows, cols)
    for corner in ((0, 0), (0, -1), (-1, 0), (-1, -1)):          # corners stay put
        assert grid[corner] == pytest.approx(h[corner], abs=1e-6)
    small = np.arange(12.0)
    assert np.array_equal(coarse_heightfield(small, 3, 4, 1024)[0], small)


def test_surface_patches_show_where_the_grid_has_them():
    """Seen from above, a point inside a mud patch of the Climb hill is drawn in mud's colour
    and a grass point in grass's (the texture is the grid's surface map, right way round),
    after a new terrain and after a restore."""
    from traction.scenes.render import SceneRenderer
    from traction.scenes.terrain import SURFACE_RGB

    env = gym.make("Traction/Climb6x6-v1").unwrapped
    renderer = SceneRenderer(env.model, 240, 240, camera="top", quality="low")

    def colour_at(x, y):
        env.sim.pose_for_render()
        frame = renderer.frame(env.data)
        cam = mujoco.mj_name2id(env.model, mujoco.mjtObj.mjOBJ_CAMERA, names.CAMERA_TOP)
        rot, eye = env.data.cam_xmat[cam].reshape(3, 3), env.data.cam_xpos[cam]
        local = rot.T @ (np.array([x, y, float(env.scene.terrain.grid.height_at(x, y))]) - eye)
        f = 120 / math.tan(math.radians(env.model.cam_fovy[cam]) / 2)
        col, r = 120 + f * local[0] / -local[2], 120 - f * local[1] / -local[2]
        return frame[int(round(r)) - 1:int(round(r)) + 2, int(round(col)) - 1:int(round(col)) + 2]

    def inside(grid, name, reach=4):
        """A point of surface ``name`` with every grid point within ``reach`` cells the same,
        near the vehicle."""
        s = grid.surface == grid.surfaces.index(name)
        ok = np.zeros_like(s)
        ok[reach:-reach, reach:-reach] = True
        for dr in range(-reach, reach + 1):
            for dc in range(-reach, reach + 1):
                ok &= np.roll(np.roll(s, dr, 0), dc, 1)
        rows, cols = np.nonzero(ok)
        x, y = grid.x0 + cols * grid.cell, grid.y0 + rows * grid.cell
        car = env.data.xpos[1][:2]
        k = np.argmin(np.hypot(x - car[0], y - car[1]))
        return x[k], y[k]

    for seed in (0, 5):
        env.reset(seed=seed)
        grid = env.scene.terrain.grid
        for name in ("mud", "grass"):
            x, y = inside(grid, name)
            seen = colour_at(x, y).reshape(-1, 3).astype(float)
            rgb = np.array(SURFACE_RGB[name]) * 255
            # lit and on either checker square: the hue is the surface's (mud red > green,
            # grass green > red), not the other's
            assert (seen[:, 0] > seen[:, 1]).all() == (rgb[0] > rgb[1]), (seed, name, seen)
    snap = env.get_state()
    env.reset(seed=0)
    env.set_state(snap)                       # seed 5's terrain and its colours back
    x, y = inside(env.scene.terrain.grid, "mud")
    assert (colour_at(x, y).reshape(-1, 3)[:, 0] > colour_at(x, y).reshape(-1, 3)[:, 1]).all()
