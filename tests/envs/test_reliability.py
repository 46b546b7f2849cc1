"""Save/restore replays bit for bit; rollouts hash the same in separate processes; a diverging
simulation truncates with a flag and resets cleanly; a human-mode window follows resets and
restored states."""

import copy
import dataclasses
import hashlib
import logging
import os
import subprocess
import sys
import warnings

import gymnasium as gym
import mujoco
import numpy as np
import pytest

import traction.envs
from traction.envs.base import OBS_LIMIT
from traction.vehicle_model import layout as L
from traction.vehicle_model import load_vehicle

ROLLOUT = """
import hashlib, numpy as np, gymnasium as gym, traction.envs
env = gym.make({env_id!r}); obs, _ = env.reset(seed=11); rng = np.random.default_rng(5)
h = hashlib.sha256(obs.tobytes())
for _ in range(60):
    obs, r, term, trunc, _ = env.step(rng.uniform(-1, 1, env.action_space.shape))
    h.update(obs.tobytes()); h.update(np.float64(r).tobytes())
    if term or trunc:
        obs, _ = env.reset(); h.update(obs.tobytes())
print(h.hexdigest())
"""


@pytest.mark.parametrize("env_id", traction.envs.ENV_IDS)
def test_same_seed_same_hash_in_separate_processes(env_id):
    code = ROLLOUT.format(env_id=env_id)
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    hashes = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, env=env).stdout.strip() for _ in range(2)}
    local = {}
    exec(code.replace("print(h.hexdigest())", "out = h.hexdigest()"), local)
    assert len(hashes) == 1 and local["out"] in hashes


@pytest.mark.parametrize("env_id", traction.envs.ENV_IDS)
def test_get_state_set_state_replays_bit_for_bit(env_id):
    env = gym.make(env_id).unwrapped
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, (60,) + env.action_space.shape)
    for a in actions[:20]:
        env.step(a)
    snapshot = env.get_state()

    def tail():
        h = hashlib.sha256()
        for a in actions[20:]:
            obs, r, *_ = env.step(a)
            h.update(obs.tobytes())
            h.update(np.float64(r).tobytes())
        return h.hexdigest()

    first = tail()
    env.set_state(snapshot)
    assert tail() == first
    env.reset(seed=99)                              # other terrain and pose, then restore
    env.set_state(snapshot)
    assert tail() == first


def test_a_snapshot_of_another_environment_is_refused_before_anything_changes():
    tank, drift = gym.make("Traction/TankTurn-v1").unwrapped, gym.make("Traction/Drift-v1").unwrapped
    with pytest.raises(gym.error.ResetNeeded, match="get_state before the first reset"):
        tank.get_state()
    tank.reset(seed=2)
    drift.reset(seed=2)
    before = tank.get_state()
    with pytest.raises(ValueError, match=r"set_state: wheel_angle has shape \(1, 4\); this "
                       r"environment's has \(1, 12\) \(a snapshot of another environment\?\)"):
        tank.set_state(drift.get_state())
    bad = dict(before, terrain=drift.get_state()["terrain"])
    with pytest.raises(ValueError, match=r"saved terrain of kind 'skidpad' does not fit"):
        tank.set_state(bad)
    with pytest.raises(ValueError, match=r"not a get_state snapshot \(missing \['diverged'"):
        tank.set_state({k: v for k, v in before.items() if k != "diverged"})
    columns = copy.deepcopy(before)                  # the float columns of an older version
    columns["state"].wheel = L.floats(columns["state"].wheel).copy()
    with pytest.raises(ValueError, match=r"state.wheel has shape \(1, 12, 10\), float columns: a "
                       r"snapshot of a traction version before the vehicle arrays became records"):
        tank.set_state(columns)
    heavy = load_vehicle("tank")
    heavy = dataclasses.replace(heavy, chassis=dataclasses.replace(heavy.chassis, mass=20000.0))

    def snapshot_of(**kwargs):
        other = gym.make("Traction/TankTurn-v1", **kwargs).unwrapped
        other.reset(seed=2)
        return other.get_state()

    with pytest.raises(ValueError, match="set_state: a snapshot of an environment with other "
                       "vehicle parameters or time steps"):
        tank.set_state(snapshot_of(vehicle=heavy))
    with pytest.raises(ValueError, match="other vehicle parameters or time steps"):
        tank.set_state(snapshot_of(control_dt=0.02))
    for part, field, scale in (("gearbox", "forward_ratios", 1.1), ("engine", "torque_curve",
                                                                       [1.0, 0.9])):
        other = load_vehicle("tank")                 # the drivetrain's tables count too
        table = getattr(getattr(other, part), field) * scale
        other = dataclasses.replace(other, **{part: dataclasses.replace(
            getattr(other, part), **{field: table})})
        with pytest.raises(ValueError, match="other vehicle parameters or time steps"):
            tank.set_state(snapshot_of(vehicle=other))
    tank.set_state(snapshot_of())                          # the same configuration: accepted
    tank.set_state(before)
    a = np.array([1.0, -1.0])
    obs = tank.step(a)[0]
    tank.set_state(before)                               # it was never touched: same step
    assert np.array_equal(tank.step(a)[0], obs)


def test_a_restored_snapshot_draws_the_same_next_terrain_seed():
    """The RNG is part of a snapshot: an unseeded reset after set_state draws the terrain the
    original's unseeded reset drew."""
    env = gym.make("Traction/Climb6x6-v1").unwrapped
    env.reset(seed=0)
    env.step(np.float32([1.0, 0.0]))
    snapshot = env.get_state()
    first = env.reset()[0]
    env.set_state(snapshot)
    assert np.array_equal(env.reset()[0], first)


def test_mujoco_timers_switch_off_and_on_without_changing_the_rollout():
    code = ROLLOUT.format(env_id="Traction/Drift-v1").replace("print(h.hexdigest())",
                                                              "out = h.hexdigest()")
    rollouts, timed = [], []
    try:
        for enabled in (True, False, True):
            traction.envs.mujoco_timers(enabled)
            local = {}
            exec(code, local)
            rollouts.append(local["out"])
            timed.append(local["env"].unwrapped.data.timer[0].duration)   # mj_step's, s
    finally:
        traction.envs.mujoco_timers(True)
    assert len(set(rollouts)) == 1
    assert timed[0] > 0 and timed[1] == 0 and timed[2] > 0


def test_absurd_strut_diverges_with_a_flag_and_resets_cleanly(caplog):
    """Spring 1e8 N/m and damper 1e7 N s/m on ~400 kg corners at 4 ms: the explicit damper
    alone overshoots by c dt / m ~ 100x per step (the spring alone only bounces the car metres
    high), so the run blows up; the env must end the episode with the flag. The car starts at
    rest: launched at the task's 8-10 m/s, its first bounces pitch it over onto its roof before
    the struts blow up (with road tyres' longitudinal stiffness), and it lies there."""
    p = load_vehicle("sedan_rwd")
    p = dataclasses.replace(p, suspension=dataclasses.replace(
        p.suspension, spring_strength=np.full(4, 1e8), damper_rate=np.full(4, 1e7)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)       # the spring-alpha warning
        env = gym.make("Traction/Drift-v1", vehicle=p)
    env.reset(seed=0, options={"speed": 0.0})
    with caplog.at_level(logging.WARNING, logger="traction.envs.base"):
        for _ in range(200):
            obs, r, term, trunc, info = env.step(np.zeros(4))
            if trunc:
                break
        assert trunc and info["diverged"] and np.all(np.isfinite(obs)) and np.isfinite(r)
        env.reset(seed=1, options={"speed": 0.0})
        for _ in range(200):
            *_, trunc, info = env.step(np.zeros(4))
            if trunc:
                break
    assert sum("diverged" in rec.message for rec in caplog.records) == 1   # logged once
    obs, info = env.reset(seed=2)
    assert np.all(np.isfinite(obs)) and not info["diverged"]


def test_set_state_after_a_reset_restores_surfaces_poses_and_the_rendered_terrain():
    env = gym.make("Traction/Climb6x6-v1", render_mode="rgb_array", width=96, height=72).unwrapped
    env.reset(seed=4)
    for _ in range(40):
        env.step(np.float32([1.0, 0.0]))
    snapshot = env.get_state()
    mujoco.mj_forward(env.model, env.data)     # poses of the snapshot's state (as set_state's)
    heading, frame = env.heading(), env.render().copy()

    def tail():                 # full throttle over terrain whose surface map differs by seed
        h = hashlib.sha256()
        for _ in range(300):
            obs, r, term, trunc, _ = env.step(np.float32([1.0, 0.0]))
            h.update(obs.tobytes())
            h.update(np.float64(r).tobytes())
            if term or trunc:
                break
        return h.hexdigest()

    first = tail()
    env.reset(seed=99)
    env.render()
    env.set_state(snapshot)
    assert env.heading() == heading
    assert np.array_equal(env.render(), frame)
    assert tail() == first


def test_a_finite_blow_up_is_flagged_as_divergence(caplog):
    """A chassis inertia 1/1000 of the sedan's (validates: any positive inertia does) blows up
    under full throttle and steer without reaching MuJoCo's 1e10 or inf: the speed bound flags
    it, and the episode truncates with the flag. check_timestep foretells it: the dampers slow
    the light body's roll at 321 x 1 / dt. (At 1/500, with the tyre forces at the contact
    patches, the body tumbled and the task ended the episode before the speed bound.)"""
    p = load_vehicle("sedan_rwd")
    p = dataclasses.replace(p, chassis=dataclasses.replace(p.chassis, inertia=[0.5, 0.5, 0.5]))
    with pytest.warns(RuntimeWarning, match=r"dampers: dt x the chassis's fastest damping rate "
                                            r".* = 321.20 > 1"):
        env = gym.make("Traction/Drift-v1", vehicle=p)
    env.reset(seed=0)
    u = env.unwrapped
    speeds = []
    with caplog.at_level(logging.WARNING):
        for _ in range(200):
            _, _, _, trunc, info = env.step(np.float32([1.0, 1.0, 0.0, 0.0]))
            speeds.append(info["speed"])
            if trunc:
                break
    assert trunc and info["diverged"] and "diverged" in caplog.text
    assert u.data.warning.number[int(mujoco.mjtWarning.mjWARN_BADQVEL)] == 0   # not MuJoCo's
    assert np.all(np.isfinite(speeds))
    env.reset(seed=0)                                     # and a healthy world after reset
    assert not u.sim.diverged()
    with pytest.raises(ValueError, match=r"reset velocity = \[200.0, 0.0, 0.0\]; allowed: a "
                       r"speed up to 150 m/s"):
        u.sim.reset(velocity=[200.0, 0.0, 0.0])
    u.data.qvel[u.sim.qvel_adr + 3:u.sim.qvel_adr + 6] = [0.0, 0.0, 60.0]   # 60 rad/s of yaw
    u.sim.refresh()
    assert u.sim.diverged()


def _blow_up(u) -> None:
    """A velocity MuJoCo resets the world for (finite, above its 1e10): the next step diverges."""
    u.data.qvel[u.sim.qvel_adr + 2] = 2e10
    u.sim.refresh()


def test_a_velocity_mujoco_resets_the_world_for_is_flagged_as_divergence():
    """The diverged step repeats the episode's last observation (the world has no valid state
    to show), so a value bootstrap on the truncation reads a state the agent has seen; the
    returned array is the caller's: changing it in place does not change what is repeated."""
    env = gym.make("Traction/Drift-v1")
    u = env.unwrapped
    env.reset(seed=0)
    for _ in range(5):
        last = env.step(np.zeros(4, np.float32))[0]
    seen = last.copy()
    last[:] = 123.0                               # the caller's array, changed in place
    _blow_up(u)
    obs, r, term, trunc, info = env.step(np.zeros(4, np.float32))
    assert trunc and info["diverged"] and not term and r == 0.0
    assert np.array_equal(obs, seen) and obs is not last and seen[0] > 1.0   # (moving)
    obs, info = env.reset(seed=1)
    assert not info["diverged"] and np.all(np.isfinite(obs))


@pytest.mark.parametrize("env_id", traction.envs.ENV_IDS)
def test_a_divergence_right_after_reset_or_a_restore_repeats_that_observation(env_id):
    """The last observation is the reset's, or a snapshot's (get_state saves it), and it comes
    back clipped to the space as it was returned."""
    env = gym.make(env_id)
    u = env.unwrapped
    first, _ = env.reset(seed=3)
    seen, first[:] = first.copy(), 123.0                 # the caller's array, changed in place
    _blow_up(u)
    obs, _, term, trunc, info = env.step(np.zeros(env.action_space.shape, np.float32))
    assert trunc and info["diverged"] and np.array_equal(obs, seen)
    env.reset(seed=4)
    for _ in range(3):
        seen = env.step(env.action_space.sample())[0]
    snapshot = u.get_state()
    env.reset(seed=5)
    env.step(env.action_space.sample())
    u.set_state(snapshot)
    _blow_up(u)
    obs, _, term, trunc, info = env.step(np.zeros(env.action_space.shape, np.float32))
    assert trunc and info["diverged"] and np.array_equal(obs, seen)
    env.reset(seed=6)
    u._last_obs[0] = 1e6                                 # beyond the space: clipped as returned
    _blow_up(u)
    obs = env.step(np.zeros(env.action_space.shape, np.float32))[0]
    assert obs[0] == OBS_LIMIT and env.observation_space.contains(
        obs.astype(env.observation_space.dtype))


def test_a_native_vector_env_ends_a_diverged_world_with_its_last_observation():
    """Same-step autoreset puts the diverged world's last observation in final_obs; the other
    world steps on."""
    envs = gym.make_vec("Traction/Drift-v1", num_envs=2, vectorization_mode="vector_entry_point",
                        autoreset_mode="SameStep")
    envs.reset(seed=0)
    a = np.zeros((2, 4), np.float32)
    for _ in range(3):
        seen = envs.step(a)[0]
    _blow_up(envs.unwrapped.envs[1])
    obs, r, term, trunc, info = envs.step(a)
    assert list(trunc) == [False, True] and list(info["_final_obs"]) == [False, True]
    assert info["final_info"]["diverged"][1] and r[1] == 0.0
    assert np.array_equal(info["final_obs"][1], seen[1])
    assert not np.array_equal(obs[1], seen[1])                  # the new episode's start
    envs.close()


def test_a_snapshot_taken_before_a_divergence_restores_a_healthy_world():
    env = gym.make("Traction/Drift-v1")
    u = env.unwrapped
    env.reset(seed=0)
    snapshot = u.get_state()
    _blow_up(u)
    assert env.step(np.zeros(4, np.float32))[4]["diverged"]
    u.set_state(snapshot)                           # MuJoCo's warning counts come back too
    assert not env.step(np.zeros(4, np.float32))[4]["diverged"]


def test_a_human_mode_window_gets_each_new_terrain_and_episode():
    """The passive viewer's sync() does not re-upload height fields or textures: reset (a new
    terrain) and set_state (a saved one) push every height field and the ground's colours to
    the window, and reset shows the new episode, as step does (a stand-in viewer here, with
    mujoco.viewer.Handle's methods; the real one needs a display)."""
    import mujoco.viewer

    from traction.scenes import names

    class Viewer:
        def __init__(self):
            self.uploaded, self.synced, self.textures = [], 0, []

        def update_hfield(self, hid):
            self.uploaded.append(hid)

        def update_texture(self, tid):
            self.textures.append(tid)

        def sync(self):
            self.synced += 1

        def close(self):
            pass

    env = gym.make("Traction/Climb6x6-v1")
    u = env.unwrapped
    env.reset(seed=0)
    saved = u.get_state()
    u._viewer, u.render_mode = Viewer(), "human"
    viewer = u._viewer
    env.reset(seed=1)
    assert viewer.uploaded == list(range(u.model.nhfield)) and u.model.nhfield >= 1
    assert viewer.synced == 1
    u.set_state(saved)
    assert viewer.uploaded == 2 * list(range(u.model.nhfield))
    ground = mujoco.mj_name2id(u.model, mujoco.mjtObj.mjOBJ_TEXTURE, names.TERRAIN_TEXTURE)
    assert viewer.textures == [ground, ground] and ground >= 0
    assert all(hasattr(mujoco.viewer.Handle, m) for m in ("update_hfield", "update_texture"))
    env.step(env.action_space.sample())
    assert viewer.synced == 2
    env.close()


@pytest.mark.parametrize("speed, spin, diverged", [
    (100.0, 0.0, False), (160.0, 0.0, True),        # the limits: 150 m/s, 50 rad/s
    (0.0, 20.0, False), (0.0, 45.0, False), (0.0, 55.0, True),
])
def test_divergence_is_a_chassis_past_the_speed_or_spin_limit(speed, spin, diverged):
    """A chassis moving or spinning past MAX_CHASSIS_SPEED (150 m/s) or MAX_CHASSIS_SPIN
    (50 rad/s) counts as diverged, and one below does not (a rolling truck spins at a few
    rad/s: a limit compared with the squared spin, 7 rad/s, truncated such episodes)."""
    from traction.envs import VehicleSim, physics
    from traction.scenes import build_scene

    assert (physics.MAX_CHASSIS_SPEED, physics.MAX_CHASSIS_SPIN) == (150.0, 50.0)
    sim = VehicleSim(build_scene("sedan", "flat"))
    a = sim.qvel_adr
    sim.data.qvel[a:a + 6] = [speed, 0.0, 0.0, 0.0, 0.0, spin]
    sim.refresh()
    assert sim.diverged() is diverged


# The divergence warning counts the steps of its own episode.
def test_the_divergence_warning_names_the_step_of_the_episode_it_happened_in(
        diverging_step_warning):
    """Five steps of one episode, a reset, two steps, then a blow-up: the warning says step 3
    of the episode (t = 3 control steps), not the 8th step since the env was made."""
    env = gym.make("Traction/TankTurn-v1")
    u = env.unwrapped
    env.reset(seed=0)
    a = np.zeros(2, np.float32)
    for _ in range(5):
        env.step(a)
    env.reset(seed=1)
    for _ in range(2):
        env.step(a)
    t = 3 * u.control_dt
    assert f"diverged in step 3 of the episode (t = {t:.3f} s)" in diverging_step_warning(env)
    env.close()


def test_the_human_mode_window_is_aimed_at_the_camera_named():
    """camera_name aims the window's camera too, under the viewer's lock (a stand-in viewer:
    the real one needs a display): the fixed camera of that name, now and when set later."""
    import contextlib
    from types import SimpleNamespace

    class Viewer:
        def __init__(self):
            self.cam, self.locked = SimpleNamespace(type=None, fixedcamid=None), 0

        @contextlib.contextmanager
        def lock(self):
            self.locked += 1
            yield

    env = gym.make("Traction/Drift-v1", camera_name="top")
    u = env.unwrapped
    u._viewer = Viewer()
    u._aim_viewer()                                       # as render() does at launch
    assert u._viewer.cam.type == mujoco.mjtCamera.mjCAMERA_FIXED
    assert u._viewer.cam.fixedcamid == u.model.camera("top").id
    env.set_wrapper_attr("camera_name", "driver")
    assert u._viewer.cam.fixedcamid == u.model.camera("driver").id and u._viewer.locked == 2
    u._viewer = None
    env.close()
