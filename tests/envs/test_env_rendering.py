"""Rendering of every environment: frames, the camera shown, terrains drawn anew, frames of the
step's end (the scene renderer itself: tests/scenes/test_rendering.py)."""

import copy

import gymnasium as gym
import numpy as np
import pytest

import traction.envs  # noqa: F401  (registers the ids)
from traction.envs import ENV_IDS
from traction.scenes.render import SceneRenderer


@pytest.fixture(params=ENV_IDS)
def env_id(request):
    return request.param


def test_rgb_array_rendering_returns_a_frame(env_id):
    env = gym.make(env_id, render_mode="rgb_array", width=160, height=120)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    frame = env.render()
    assert frame.shape == (120, 160, 3) and frame.dtype == np.uint8 and frame.std() > 5
    env.close()


def test_render_shows_the_camera_named_and_a_bad_name_is_refused(env_id):
    """camera_name picks render()'s view (it was fixed to the chase camera): a frame from each
    camera equals that camera's frame of the scene renderer and the views differ; the name is
    settable between steps (set_wrapper_attr, and set_attr per world in the vector env), is kept
    by copies, and an unknown name is refused naming the cameras."""
    env = gym.make(env_id, render_mode="rgb_array", width=96, height=72, camera_name="top")
    env.reset(seed=0)
    env.step(env.action_space.sample())
    u = env.unwrapped
    u.sim.pose_for_render()
    own = SceneRenderer(u.model, 96, 72)
    frames = {}
    for camera in ("top", "chase", "driver"):
        env.set_wrapper_attr("camera_name", camera)
        frames[camera] = env.render()
        assert np.array_equal(frames[camera], own.frame(u.data, camera=camera))
    own.close()
    assert not np.array_equal(frames["top"], frames["chase"])
    assert not np.array_equal(frames["chase"], frames["driver"])
    env.set_wrapper_attr("camera_name", "top")
    assert copy.deepcopy(u).camera_name == "top"
    with pytest.raises(ValueError, match=r"camera_name = 'front'; allowed: .*chase.*top"):
        env.set_wrapper_attr("camera_name", "front")
    with pytest.raises(ValueError, match=r"camera_name = 'side'; allowed:"):
        gym.make(env_id, camera_name="side")
    assert u.camera_name == "top"
    env.close()
    venv = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point",
                        render_mode="rgb_array", width=48, height=36)
    venv.reset(seed=0)
    venv.set_attr("camera_name", ["top", "driver"])
    assert [w.camera_name for w in venv.unwrapped.envs] == ["top", "driver"]
    venv.close()


@pytest.mark.parametrize("env_id", ["Traction/Climb6x6-v0", "Traction/TankTurn-v0"])
def test_each_renderer_draws_its_own_new_terrain(env_id):
    """Two rendering envs in one process: after a reset to a new terrain each frame equals a
    fresh env's. The heightfield upload went to whichever GL context had rendered last, so the
    reset env drew its old terrain and the other env the new one."""
    def frame(env, seed=None):
        if seed is not None:
            env.reset(seed=seed)
        return env.render()

    make = [gym.make(env_id, render_mode="rgb_array", width=96, height=72) for _ in range(3)]
    a, b, fresh = make
    frame(a, 1)
    b_before = frame(b, 7)                                # b rendered last: its context current
    a.reset(seed=0)
    assert np.array_equal(frame(a), frame(fresh, 0))
    assert np.array_equal(frame(b), b_before)
    for env in make:
        env.close()


def test_frames_show_the_step_end_and_rendering_leaves_the_rollout_unchanged(env_id):
    """A frame drawn after a step equals the frame of that state restored with set_state (it
    was one physics substep behind, 0.04 m at 10 m/s); stepping with rendering gives the
    rollout stepping without it gives, bit for bit."""
    env = gym.make(env_id, render_mode="rgb_array", width=96, height=72)
    plain = gym.make(env_id)
    env.reset(seed=1)
    plain.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(15):
        a = rng.uniform(-1, 1, env.action_space.shape).astype(np.float32)
        obs, r, *_ = env.step(a)
        frame = env.render()
        obs_plain, r_plain, *_ = plain.step(a)
        assert np.array_equal(obs, obs_plain) and r == r_plain
    u = env.unwrapped
    u.set_state(u.get_state())
    assert np.array_equal(env.render(), frame)
    env.close()
    plain.close()
