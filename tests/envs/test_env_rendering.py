"""Rendering of every environment: frames, the camera shown, terrains drawn anew, frames of the
step's end (the scene renderer itself: tests/scenes/test_rendering.py)."""

import copy
import subprocess
import sys

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
        assert np.array_equal(frames[camera], own.frame(u.data, camera=camera,
                                                        markers=u.markers()))
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


@pytest.mark.parametrize("env_id", ["Traction/Climb6x6-v1", "Traction/TankTurn-v1"])
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


# Frames show the task (issue 57: TankTurn's target heading was drawn nowhere).
def _arrows(markers):
    import mujoco

    return [m for m in markers if m.type == mujoco.mjtGeom.mjGEOM_ARROW]


def _heading(marker):
    return np.arctan2(marker.pos[1] - marker.start[1], marker.pos[0] - marker.start[0])


def _wrapped(a):
    return (a + np.pi) % (2 * np.pi) - np.pi


def test_each_task_draws_its_target_into_its_frames(env_id):
    """TankTurn: an arrow along the target heading (and one along the heading now); Drift: the
    circle, and arrows along the velocity and the heading at the target sideslip to it;
    Climb6x6: a beacon and the goal_radius disc at the goal, an arrow toward it. The frame with
    them differs from the scene's alone."""
    env = gym.make(env_id, render_mode="rgb_array", width=160, height=120)
    env.reset(seed=3)
    for _ in range(5):
        env.step(np.zeros(env.action_space.shape, np.float32))
    u = env.unwrapped
    markers = u.markers()
    c = u.read_chassis()
    arrows = _arrows(markers)
    if env_id == "Traction/TankTurn-v1":
        assert _wrapped(_heading(arrows[0]) - u.target) == pytest.approx(0, abs=1e-9)
        assert _wrapped(_heading(arrows[1]) - c.yaw) == pytest.approx(0, abs=1e-9)
    elif env_id == "Traction/Drift-v1":
        ring = [m for m in markers if m not in arrows]
        assert len(ring) >= 48 and all(np.hypot(*m.pos[:2]) == pytest.approx(u.radius)
                                       for m in ring)
        course = np.arctan2(c.velocity[1], c.velocity[0])
        assert _wrapped(_heading(arrows[0]) - course) == pytest.approx(0, abs=1e-9)
        assert _wrapped(_heading(arrows[1]) - course - u.target) == pytest.approx(0, abs=1e-9)
    else:
        goal = u._goal_xyz
        pole, disc = markers[:2]
        assert pole.pos[:2] == pytest.approx(goal[:2]) and disc.size[0] == u.goal_radius
        to_goal = np.arctan2(goal[1] - c.com[1], goal[0] - c.com[0])
        assert _wrapped(_heading(arrows[0]) - to_goal) == pytest.approx(0, abs=1e-9)
    u.sim.pose_for_render()
    bare = SceneRenderer(u.model, 160, 120).frame(u.data)
    assert not np.array_equal(env.render(), bare)
    env.close()


def test_the_readout_gives_the_task_quantities_with_units(env_id):
    env = gym.make(env_id)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    readout = env.unwrapped.readout()
    expected = {"Traction/TankTurn-v1": {"heading error": "deg", "held": "s", "moved": "m"},
                "Traction/Drift-v1": {"sideslip": "deg", "off circle": "m", "drift held": "s",
                                      "speed": "m/s"},
                "Traction/Climb6x6-v1": {"to goal": "m", "speed": "m/s", "gear": "",
                                         "tilt": "deg"}}[env_id]
    assert list(readout) == list(expected)
    assert all(unit in readout[k] for k, unit in expected.items())


def test_render_quality_is_checked_and_settable_between_frames(env_id):
    env = gym.make(env_id, render_mode="rgb_array", width=64, height=48)
    env.reset(seed=0)
    u = env.unwrapped
    assert u.render_quality == "auto"
    env.render()
    env.set_wrapper_attr("render_quality", "high")
    env.render()
    assert u._renderer.quality == "high"
    env.set_wrapper_attr("render_quality", "low")
    env.render()
    assert u._renderer.quality == "low"
    with pytest.raises(ValueError, match=r"render_quality = 'best'; allowed: auto, high, low"):
        env.set_wrapper_attr("render_quality", "best")
    env.close()


ASYNC_FORK = """
import gymnasium as gym
import traction.envs

env = gym.make("Traction/TankTurn-v1", render_mode="rgb_array", width=32, height=24)
env.reset(seed=0)
env.render()
envs = gym.make_vec("Traction/TankTurn-v1", num_envs=2, vectorization_mode="async",
                    render_mode="rgb_array", width=32, height=24)     # forks on Linux
envs.reset(seed=0)
try:
    envs.render()
except RuntimeError as e:
    print(e)
envs.close()
"""


def test_an_async_vector_env_forked_after_rendering_says_so_instead_of_hanging(tmp_path):
    """Gymnasium's async vector env forks its workers (Linux's default): after the parent had
    rendered, their render() hung without a message; now it raises, naming the fix."""
    script = tmp_path / "fork.py"
    script.write_text(ASYNC_FORK)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert "forked from one that had rendered" in run.stdout
    assert "vector_kwargs={'context': 'spawn'}" in run.stdout
