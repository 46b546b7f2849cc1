"""Contract tests over every registered environment id."""

import warnings

import gymnasium as gym
import mujoco
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import traction.envs
from traction.envs import ENV_IDS, TractionVectorEnv, actions
from traction.envs.drift_v1 import DriftEnv

#: Observation channels a random policy may never change within a short rollout: contact flags
#: (wheels rarely leave the ground), the gear (no autobox shift), and the drift-hold progress.
EVENT_CHANNELS = {"Traction/Climb6x6-v1": range(24, 30), "Traction/Drift-v1": (17, 18),
                  "Traction/TankTurn-v1": ()}


@pytest.fixture(scope="module", params=ENV_IDS)
def env_id(request):
    return request.param


def test_registered_and_made_by_id(env_id):
    env = gym.make(env_id)
    assert env.spec.max_episode_steps > 0
    assert env.unwrapped.model is env.unwrapped.sim.model and env.unwrapped.data is not None
    env.close()


def test_the_v0_ids_are_deprecated_in_favour_of_v1(env_id):
    """The physics changed (Version History), so the tasks went to v1 and only v1 is
    registered: asking for v0 gets Gymnasium's own DeprecatedEnv naming the v1 id."""
    old = env_id.replace("-v1", "-v0")
    assert env_id.endswith("-v1") and old not in gym.registry
    with pytest.raises(gym.error.DeprecatedEnv, match=f"Please use `{env_id}`"):
        gym.make(old)


def test_gymnasium_checker_passes_without_warnings(env_id):
    env = gym.make(env_id).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=True)


def test_gymnasium_checker_with_its_render_check_passes_headless(env_id, monkeypatch):
    """check_env's render check builds an env in every mode its metadata lists, and "human"
    needs a display: headless, an environment lists the modes it can render in (rgb_array), so
    check_env passes without flags (it failed on 'human' unless told to skip the render check);
    the class still lists 'human' for gym.make where there is a display."""
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    for render_mode in (None, "rgb_array"):
        env = gym.make(env_id, render_mode=render_mode, width=64, height=48)
        assert env.unwrapped.metadata["render_modes"] == ["rgb_array"]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)
        with pytest.warns(UserWarning, match="different from the unwrapped version"):
            check_env(env)                # (wrapped: Gymnasium warns about the wrappers only)
    assert "human" in type(env.unwrapped).metadata["render_modes"]
    monkeypatch.setenv("DISPLAY", ":0")
    assert type(env.unwrapped).available_render_modes() == ["rgb_array", "human"]


def test_dt_is_the_control_step_as_in_gymnasiums_mujoco_envs(env_id):
    """``env.unwrapped.dt`` (Gymnasium's MuJoCo envs: timestep x frame_skip) is the simulated
    time of one step, reachable through the wrappers (get_wrapper_attr raised)."""
    env = gym.make(env_id, control_dt=0.02)
    assert env.unwrapped.dt == env.get_wrapper_attr("dt") == 0.02
    env.reset(seed=0)
    env.step(env.action_space.sample())
    assert env.unwrapped.data.time == pytest.approx(0.02 + env.unwrapped.physics_dt)  # (+ reset's)
    venv = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point")
    assert venv.get_attr("dt") == (0.04, 0.04)
    venv.close()


def test_render_without_a_render_mode_warns(env_id):
    env = gym.make(env_id)
    env.reset(seed=0)
    with pytest.warns(UserWarning, match=r"render\(\) without a render mode returns None; make "
                      r"the environment with render_mode='rgb_array'"):
        assert env.unwrapped.render() is None


def test_stable_baselines3_checker_passes_without_warnings(env_id):
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_checker import check_env as sb3_check

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check(gym.make(env_id).unwrapped, warn=True)


def _rollout(env_id, seed, steps=300):
    env = gym.make(env_id)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out, rewards = [obs], []
    for _ in range(steps):
        obs, r, term, trunc, info = env.step(rng.uniform(-1, 1, env.action_space.shape))
        terms = [v for k, v in info.items() if k.startswith("reward_")]
        assert r == sum(terms)                                  # exactly the sum of its terms
        assert set(k[7:] for k in info if k.startswith("reward_")) == \
            set(env.unwrapped.reward_names)
        out.append(obs)
        rewards.append(r)
        if term or trunc:
            obs, info = env.reset()
            out.append(obs)
    env.close()
    return np.array(out), np.array(rewards)


@pytest.fixture(scope="module")
def rollouts(env_id):
    return _rollout(env_id, 7), _rollout(env_id, 7)


def test_same_seed_same_actions_bit_identical(rollouts):
    (o1, r1), (o2, r2) = rollouts
    assert o1.tobytes() == o2.tobytes() and r1.tobytes() == r2.tobytes()


def test_observations_finite_and_not_constant(env_id, rollouts):
    (obs, _), _ = rollouts
    assert np.all(np.isfinite(obs))
    varying = np.ptp(obs, axis=0) > 0
    allowed = set(EVENT_CHANNELS[env_id])
    constant = [i for i in np.flatnonzero(~varying) if i not in allowed]
    assert not constant, f"constant observation elements {constant}"


def test_observations_do_not_share_memory(env_id):
    env = gym.make(env_id)
    o1, _ = env.reset(seed=1)
    o2, *_ = env.step(env.action_space.sample())
    assert not np.shares_memory(o1, o2)
    env.close()


def test_bad_actions_raise_clearly(env_id):
    env = gym.make(env_id)
    env.reset(seed=0)
    a = np.zeros(env.action_space.shape, np.float32)
    a[-1] = np.nan
    name = env.unwrapped.action_names[-1]
    with pytest.raises(ValueError, match=rf"action\[{a.size - 1}\] \({name}\)"):
        env.step(a)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(a.size + 1))
    obs, *_ = env.step(np.full(a.shape, 7.0))                    # out of range: clipped
    assert np.all(np.isfinite(obs))
    with pytest.raises(TypeError):
        gym.make(env_id, no_such_argument=1)
    env.close()


def test_actions_are_checked_and_clipped_channel_by_channel():
    u = gym.make("Traction/Drift-v1").unwrapped
    assert u.check_action(np.array([0.5, -3.0, 7.0, -1.0], np.float32)) == [0.5, -1.0, 1.0, -1.0]
    assert u.check_action([1, 0, 2, -2]) == [1.0, 0.0, 1.0, -1.0]        # ints, a list
    big = np.array([1e308, 1e308, -0.25, 0.0])                           # the sum overflows
    assert u.check_action(big) == [1.0, 1.0, -0.25, 0.0]
    with pytest.raises(ValueError, match=r"action\[2\] \(brake\) = -inf"):
        u.check_action(np.array([0.0, 0.0, -np.inf, 0.0]))
    with pytest.raises(ValueError, match="cannot be read as real numbers"):
        u.check_action(["a", 0, 0, 0])


def _commands(u) -> dict:
    c = u.sim.commands.vehicle[0]
    return {"steer": c["steer"], "throttle": c["throttle"], "brake": c["brake"],
            "handbrake": c["handbrake"]}


@pytest.mark.parametrize("action", [
    np.array([0.5, -3.0, 7.0, -1.0], np.float32),                        # the action space's
    np.array([0.5, -3.0, 7.0, -1.0, 9.0], np.float32)[:4],               # a float32 view
    np.array([0.5, -3.0, 7.0, -1.0, 9.0], np.float32)[::-1][1:],         # negative strides
    np.array([0.5, -1e308, 1e308, -1.0]),                                # float64
    [0.5, -3, 7, -1]])                                                   # a list, ints
def test_compiled_action_map_clips_each_channel_and_maps_the_pedals(action):
    """Drift's compiled map: steer as is, pedals (a + 1) / 2, after clipping to [-1, 1]."""
    u = gym.make("Traction/Drift-v1").unwrapped
    u.reset(seed=0)
    if isinstance(action, np.ndarray) and action.strides[0] < 0:
        action = action[::-1]
    u.step(action)
    assert _commands(u) == {"steer": 0.5, "throttle": 0.0, "brake": 1.0, "handbrake": 0.0}
    assert u.sim.action[0].tolist() == [0.5, -1.0, 1.0, -1.0]


def test_compiled_action_map_rejects_a_non_finite_channel_before_anything_moves():
    u = gym.make("Traction/Drift-v1").unwrapped
    u.reset(seed=0)
    u.step(np.array([0.2, 0.4, -1.0, -1.0], np.float32))
    before = (_commands(u), u.data.time, u.data.qpos.copy(), u.sim.state.wheel.copy())
    for bad, channel, name in ((np.array([0.0, 0.0, -np.inf, 0.0], np.float32), 2, "brake"),
                               (np.array([np.nan, 9.0, 0.0, 0.0]), 0, "steer")):
        with pytest.raises(ValueError, match=rf"action\[{channel}\] \({name}\) = (-inf|nan)"):
            u.step(bad)
        after = (_commands(u), u.data.time, u.data.qpos.copy(), u.sim.state.wheel.copy())
        assert after[0] == before[0] and after[1] == before[1]
        assert np.array_equal(after[2], before[2]) and np.array_equal(after[3], before[3])
    with pytest.raises(ValueError, match="cannot be read as real numbers"):
        u.step(["a", 0, 0, 0])


def test_tank_and_truck_maps():
    """TankTurn: stick per track, engine throttle the larger stick's magnitude (both back
    reverses the tank); Climb: drive forward is
    throttle, drive back from a stop selects reverse with the pedal roles swapped."""
    u = gym.make("Traction/TankTurn-v1").unwrapped
    u.reset(seed=0)
    u.step(np.array([-0.25, 2.0], np.float32))
    c = u.sim.commands.vehicle[0]
    assert (c["thrust"][0], c["thrust"][1], c["throttle"]) == (-0.25, 1.0, 1.0)
    for _ in range(25):                                 # both sticks back: 1 s in reverse
        u.step(np.array([-0.5, -0.75], np.float32))
    assert (c["thrust"][0], c["thrust"][1], c["throttle"]) == (-0.5, -0.75, 0.75)
    assert u.read_chassis().velocity_body[0] < -0.5                     # m/s, backing up
    u = gym.make("Traction/Climb6x6-v1", action_mode="wheel_torques").unwrapped
    u.reset(seed=0)
    u.step(np.array([0.5, -0.25, *np.linspace(-1.0, 1.0, 6)], np.float32))
    c = u.sim.commands.vehicle[0]
    assert (c["throttle"], c["brake"], c["steer"], c["target_gear"]) == (0.5, 0.0, -0.25, -2.0)
    assert np.allclose(u.sim.commands.wheel["torque_split"][0, :], np.linspace(0.0, 1.0, 6))
    u.step(np.array([-0.75, 0.0, *np.zeros(6)], np.float32))            # at rest: reverse
    assert (c["throttle"], c["brake"], c["target_gear"]) == (0.75, 0.0, -1.0)


def test_climb_lever_back_brakes_a_truck_driving_forward_at_any_heading():
    """The drive lever's forward speed is along the chassis x axis in the world (a column of
    the rotation): facing +y at over 1 m/s, lever back brakes and keeps the forward gear (a
    row of the rotation reads ~0 there and selected reverse at full throttle)."""
    env = gym.make("Traction/Climb6x6-v1")
    u = env.unwrapped
    env.reset(seed=0, options={"spawn": (-38.0, 0.0, np.pi / 2)})     # facing +y, level start
    for _ in range(50):                                               # 2 s forward
        env.step(np.array([1.0, 0.0], np.float32))
    assert u.read_chassis().velocity_body[0] > 1.0
    env.step(np.array([-1.0, 0.0], np.float32))
    c = u.sim.commands.vehicle[0]
    assert (c["throttle"], c["brake"], c["target_gear"]) == (0.0, 1.0, -2.0)
    assert u.sim.state.gearbox.target[0] > 0


class _PythonMappedDrift(DriftEnv):
    """A task without a compiled map (as a user's own task): actions mapped in Python."""

    action_map = actions.NONE

    def apply_action(self, a: list[float]) -> None:
        cmd = self.sim.commands.vehicle[0]
        cmd["steer"], cmd["throttle"] = a[0], (a[1] + 1.0) / 2.0
        cmd["brake"], cmd["handbrake"] = (a[2] + 1.0) / 2.0, (a[3] + 1.0) / 2.0


def test_an_action_map_must_be_known_and_fit_the_actions():
    class Unknown(DriftEnv):
        action_map = 7

    class TooWide(DriftEnv):
        action_map = actions.TRACK_STICKS                 # reads 2 channels; Drift has 4

    with pytest.raises(ValueError, match=r"action_map = 7; allowed: actions.NONE"):
        Unknown()
    with pytest.raises(ValueError, match=r"TRACK_STICKS reads 2..2 action channels; the "
                                         r"action has 4"):
        TooWide()
    u = DriftEnv()
    u.reset(seed=0)
    with pytest.raises(ValueError, match=r"TRACK_STICKS reads 2..2"):
        u.sim.step_mapped(1, actions.TRACK_STICKS)
    assert u.sim.step_mapped(1, actions.STEER_PEDALS) == -1
    with pytest.raises(ValueError, match="action_map = 2.0"):
        u.sim.step_mapped(1, 2.0)


def test_a_task_mapping_actions_in_python_gives_the_compiled_maps_rollout():
    rng = np.random.default_rng(0)
    acts = rng.uniform(-1.5, 1.5, (40, 4)).astype(np.float32)
    out = []
    for env in (DriftEnv(), _PythonMappedDrift()):
        env.reset(seed=3)
        out.append([np.concatenate([env.step(a)[0], env.data.qpos, env.sim.action[0]])
                    for a in acts])
        with pytest.raises(ValueError, match=r"action\[1\] \(throttle\)"):
            env.step(np.array([0.0, np.inf, 0.0, 0.0], np.float32))
    assert np.array_equal(np.array(out[0]), np.array(out[1]))


def test_the_vector_env_runs_a_python_mapped_task_like_the_compiled_map():
    acts = np.random.default_rng(1).uniform(-1.5, 1.5, (10, 2, 4)).astype(np.float32)
    out = []
    for cls in (DriftEnv, _PythonMappedDrift):
        venv = TractionVectorEnv(cls, 2)
        venv.reset(seed=5)
        out.append([np.concatenate([venv.step(a)[0].ravel(), venv.world.arrays.action.ravel()])
                    for a in acts])
        bad = acts[0].copy()
        bad[1, 2] = np.nan
        with pytest.raises(ValueError, match=r"sub-environment 1: action\[2\] \(brake\)"):
            venv.step(bad)
        commands = venv.envs[0].sim.commands.vehicle.copy()
        venv.close()
        with pytest.raises(RuntimeError, match=r"step\(\) after close\(\): the vector "):
            venv.step(acts[0])                    # refused before any command is written
        assert np.array_equal(venv.envs[0].sim.commands.vehicle, commands)
        with pytest.raises(RuntimeError, match=r"reset\(\) after close\(\)"):
            venv.reset(seed=5)
    assert np.array_equal(np.array(out[0]), np.array(out[1]))


#: reset options fixing a start: the terrain and the task's pose options
FIXED_START = {"Traction/Climb6x6-v1": {"terrain_seed": 4, "spawn": (-30.0, 1.0, 0.1)},
               "Traction/Drift-v1": {"terrain_seed": 4, "speed": 9.0},
               "Traction/TankTurn-v1": {"terrain_seed": 4, "yaw": 0.3, "target_offset": 1.0}}
#: Drift still draws its start yaw (+-0.05 rad) from the RNG: these channels do not depend on
#: it on the flat pad (speed, forward velocity, long slips, engine, gear, hold timer)
DRIFT_YAW_FREE = [0, 3, 8, 9, 10, 11, 16, 17, 18]


def test_reset_randomises_and_options_fix(env_id):
    env = gym.make(env_id)
    a, _ = env.reset(seed=1)
    b, _ = env.reset(seed=2)
    assert a.tobytes() != b.tobytes()
    options = FIXED_START[env_id]
    a, _ = env.reset(seed=1, options=options)
    yaw_a = env.unwrapped.read_chassis().yaw
    b, _ = env.reset(seed=2, options=options)
    yaw_b = env.unwrapped.read_chassis().yaw
    if env_id != "Traction/Drift-v1":
        assert a.tobytes() == b.tobytes()                      # the options fix everything
    else:
        assert a[DRIFT_YAW_FREE].tobytes() == b[DRIFT_YAW_FREE].tobytes()
        assert a[0] == pytest.approx(options["speed"], abs=1e-3)  # one 4 ms substep later
        assert yaw_a != yaw_b and abs(yaw_a) <= 0.05 and abs(yaw_b) <= 0.05
        # the heading error to the circle's tangent differs by the drawn yaws' difference (the
        # tangent itself moves with the CoM, 0.25 m ahead of the origin: by < 1e-3 rad here)
        err = [np.arctan2(o[6], o[7]) for o in (a, b)]
        assert err[0] - err[1] == pytest.approx(yaw_a - yaw_b, abs=1e-4)
    env.close()


def test_info_diagnostics(env_id):
    env = gym.make(env_id)
    u = env.unwrapped
    _, info = env.reset(seed=0)
    for key in ("is_success", "speed", "gear", "engine_rpm", "long_slip", "lat_slip", "tire_load",
                "wheel_contact", "diverged"):
        assert key in info
    n = u.vehicle.n_wheels
    assert info["long_slip"].shape == (n,)
    assert traction.envs.VehicleSim is type(u.sim)
    rng = np.random.default_rng(0)
    for _ in range(30):
        _, _, term, trunc, info = env.step(rng.uniform(-1, 1, env.action_space.shape))
        assert not (term or trunc)
        out, sim = u.sim.outputs, u.sim
        assert info["engine_rpm"] == out.engine_omega[0] * 60 / (2 * np.pi)
        box = sim.state.gearbox                                     # engaged: 0 while changing
        assert info["gear"] == out.gear[0] == (box.gear[0] if box.switch_timer[0] <= 0 else 0)
        assert np.array_equal(info["tire_load"], out.load[0])
        assert np.array_equal(info["long_slip"], out.long_slip[0])
        assert np.array_equal(info["lat_slip"], out.lat_slip[0])
        assert not np.array_equal(out.lat_slip[0], out.long_slip[0])   # (two columns)
        assert np.array_equal(info["wheel_contact"], out.in_contact[0])
        # CoM speed from MuJoCo at the state after the step (pose and velocity of one instant)
        d = mujoco.MjData(u.model)
        d.qpos[:], d.qvel[:] = u.data.qpos, u.data.qvel
        mujoco.mj_forward(u.model, d)
        vel = np.zeros(6)                                       # (angular, linear) at the CoM
        mujoco.mj_objectVelocity(u.model, d, mujoco.mjtObj.mjOBJ_BODY, sim.body, vel, 0)
        assert info["speed"] == pytest.approx(np.linalg.norm(vel[3:]), rel=1e-9, abs=1e-12)
    env.close()


def test_info_tire_loads_carry_the_weight_at_rest_on_level_ground():
    """Drift's skidpad is flat: braked from a standing start, the tyre loads sum to M g."""
    env = gym.make("Traction/Drift-v1")
    env.reset(seed=0, options={"speed": 0.0})
    for _ in range(50):                                         # 2 s, full brake, no throttle
        _, _, _, _, info = env.step(np.array([0.0, -1.0, 1.0, 1.0], np.float32))
    p = env.unwrapped.vehicle
    assert info["speed"] < 1e-6 and info["wheel_contact"].all()
    g = -env.unwrapped.model.opt.gravity[2]
    assert info["tire_load"].sum() == pytest.approx(p.chassis.mass * g, rel=1e-3)
    np.testing.assert_allclose(info["tire_load"], p.suspension.sprung_mass * g, rtol=1e-3)
    env.close()


# A step's info keeps its values after later steps.
@pytest.mark.parametrize("env_id", traction.envs.ENV_IDS)
def test_an_info_keeps_its_per_wheel_values_after_the_next_steps(env_id):
    """The per-wheel diagnostics are the step's own arrays, not views of the simulator's
    outputs that the next step overwrites (a caller keeping infos, e.g. a logger, would see
    every stored step change)."""
    env = gym.make(env_id)
    env.reset(seed=0)
    rng = np.random.default_rng(1)
    kept = []
    for _ in range(5):
        _, _, _, _, info = env.step(rng.uniform(-1, 1, env.action_space.shape))
        kept.append((info, {k: np.array(info[k]) for k in ("long_slip", "lat_slip", "tire_load",
                                                           "wheel_contact")}))
    for info, frozen in kept:
        for k, v in frozen.items():
            assert np.array_equal(info[k], v), k
    assert not np.array_equal(kept[0][1]["tire_load"], kept[-1][1]["tire_load"])
    env.close()
