"""The once-per-step chassis reading and the divergence flag the compiled loop writes."""

import gymnasium as gym
import mujoco
import numpy as np
import pytest

import traction.envs  # noqa: F401
from traction.envs.reading import ChassisReading

ENV_IDS = ["Traction/Climb6x6-v1", "Traction/Drift-v1", "Traction/TankTurn-v1"]


def _driven(env_id, steps=40):
    env = gym.make(env_id)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32))
    return env.unwrapped


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_reading_matches_mujoco(env_id):
    """The row the step wrote is the state at the step's end, at one instant: pose, CoM
    velocity and angular velocity (world and chassis frame), speed, yaw and tilt agree with
    MuJoCo's own kinematics of the current qpos and qvel (``mj_forward``, then
    ``mj_objectVelocity`` at the CoM). (MjData's poses after a step are the step's start.)"""
    u = _driven(env_id)
    after_step = u.sim.now.copy()
    u.sim.refresh()                              # the loop's row is what a fresh read gives
    assert np.array_equal(after_step, u.sim.now)
    stale = u.data.xpos[u.sim.body].copy()
    mujoco.mj_forward(u.model, u.data)           # MuJoCo's kinematics of qpos and qvel now
    assert not np.allclose(stale, u.data.xpos[u.sim.body], rtol=0, atol=1e-9)   # it moved
    c = ChassisReading(after_step)
    d, b = u.data, u.sim.body
    rot = d.xmat[b].reshape(3, 3)
    vel = np.zeros(6)
    mujoco.mj_objectVelocity(u.model, d, mujoco.mjtObj.mjOBJ_BODY, b, vel, 0)   # [ang, lin]
    assert np.allclose(c.origin, d.xpos[b]) and np.allclose(c.com, d.xipos[b])
    assert np.allclose(np.reshape(c.rot, (3, 3)), rot)
    assert np.allclose(c.velocity, vel[3:], atol=1e-9) and np.allclose(c.angular, vel[:3], atol=1e-9)
    assert np.allclose(c.velocity_body, rot.T @ vel[3:], atol=1e-9)
    assert np.allclose(c.angular_body, rot.T @ vel[:3], atol=1e-9)
    assert c.speed == pytest.approx(np.linalg.norm(vel[3:]), abs=1e-9)
    assert c.yaw == pytest.approx(np.arctan2(rot[1, 0], rot[0, 0]))
    assert c.tilt == pytest.approx(np.arccos(np.clip(rot[2, 2], -1, 1)))
    assert np.allclose(c.to_body((1.0, 2.0, 3.0)), rot.T @ [1.0, 2.0, 3.0])


def test_divergence_flag_for_a_non_finite_state():
    """A NaN velocity (MuJoCo raised no warning yet) is flagged by ``refresh``; a reset clears it."""
    u = _driven("Traction/Drift-v1", 2)
    assert not u.sim.diverged()
    u.data.qvel[2] = np.nan
    u.sim.refresh()
    assert u.sim.diverged()
    u.sim.reset()
    assert not u.sim.diverged()
    u.sim.state.omega[0, 1] = np.inf             # a wheel spin counts too
    u.sim.refresh()
    assert u.sim.diverged()


def test_heights_in_frame_match_height_at():
    u = _driven("Traction/Climb6x6-v1", 1)
    grid = u.scene.terrain.grid
    ahead, side = np.array([0.0, 1.5, 9.0, 3.0]), np.array([0.0, -2.0, 2.0, 1.0])
    x, y, yaw = 3.2, -1.1, 0.7
    out = np.empty(4)
    grid.heights_in_frame(x, y, yaw, ahead, side, out)
    px = x + np.cos(yaw) * ahead - np.sin(yaw) * side
    py = y + np.sin(yaw) * ahead + np.cos(yaw) * side
    assert np.allclose(out, grid.height_at(px, py), atol=1e-12)
    far = np.array([0.0, 1.0, 2000.0, 3.0])            # the third point lies off the grid
    grid.heights_in_frame(x, y, yaw, far, side, out, off_grid=-99.0)
    px = x + np.cos(yaw) * far - np.sin(yaw) * side
    py = y + np.sin(yaw) * far + np.cos(yaw) * side
    assert out[2] == -99.0 and not grid.contains(px[2], py[2])
    assert np.allclose(out[[0, 1, 3]], grid.height_at(px[[0, 1, 3]], py[[0, 1, 3]]), atol=1e-12)


# The info's per-wheel contact flags and loads follow the wheels on and off the ground.
def test_info_wheel_contact_is_false_in_the_air_and_true_on_the_ground():
    """A car dropped from 3 m above its spawn pose: in its first step no tyre touches the ground
    (contact False, load 0); at rest a second later all four do (contact True, load > 0)."""
    env = gym.make("Traction/Drift-v1")
    env.reset(seed=0)
    sim = env.unwrapped.sim
    sim.reset(pos=sim.scene.spawn_pos + np.array([0.0, 0.0, 3.0]))
    a = np.array([0.0, -1.0, 0.0, 0.0], np.float32)           # no throttle
    info = env.step(a)[-1]
    assert info["wheel_contact"].dtype == bool
    assert not info["wheel_contact"].any() and np.all(info["tire_load"] == 0)
    for _ in range(150):
        info = env.step(a)[-1]
    assert info["wheel_contact"].all() and np.all(info["tire_load"] > 0)


def test_the_chassis_record_copies_are_snapshots():
    """``sim.now`` and ``chassis_row()`` are 0-d arrays viewing a record: ``np.copy`` and
    ``np.array(..., copy=True)`` keep a snapshot (of numpy's void scalars they still shared the
    live memory), and the next step changes the view, not the copies."""
    u = _driven("Traction/Drift-v1")
    copies = [np.copy(u.sim.now), np.array(u.sim.now, copy=True), np.copy(u.sim.chassis_row())]
    before = [c["velocity"].copy() for c in copies]
    u.step(u.action_space.sample())
    assert not np.array_equal(u.sim.now["velocity"], before[0])
    for c, b in zip(copies, before, strict=True):
        assert np.array_equal(c["velocity"], b)
