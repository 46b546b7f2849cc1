"""The native vector env (one compiled physics loop for all worlds) against the single env, its
Gymnasium autoreset semantics, and the Stable-Baselines3 adapter."""

import gymnasium as gym
import numpy as np
import pytest

import traction.envs
from traction.envs import TractionVectorEnv
from traction.envs.tank_turn_v1 import TankTurnEnv


def _rollout_single(env_id, n, seed, actions, **kw):
    envs = [gym.make(env_id, **kw) for _ in range(n)]
    obs = np.stack([e.reset(seed=seed + i)[0] for i, e in enumerate(envs)])
    out, ended = [obs], np.zeros(n, bool)
    for a in actions:
        step = []
        for i, e in enumerate(envs):
            if ended[i]:                           # NEXT_STEP autoreset, by hand
                o, _ = e.reset()
                step.append((o, 0.0, False, False))
            else:
                o, r, te, tr, _ = e.step(a[i])
                step.append((o, r, te, tr))
        obs, rew, term, trunc = (np.array(x) for x in zip(*step, strict=True))
        ended = term | trunc
        out.append((obs, rew, term, trunc))
    return out


@pytest.mark.parametrize("env_id", traction.envs.ENV_IDS)
def test_vector_env_gives_the_single_env_trajectories_bit_for_bit(env_id):
    n, steps = 3, 30
    venv = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point",
                        max_episode_steps=12)
    assert isinstance(venv.unwrapped, TractionVectorEnv)
    rng = np.random.default_rng(5)
    actions = rng.uniform(-1, 1, (steps, *venv.action_space.shape)).astype(np.float32)
    expected = _rollout_single(env_id, n, 7, actions, max_episode_steps=12)
    obs, _ = venv.reset(seed=7)
    assert np.array_equal(obs, expected[0])
    ends = 0
    for t, a in enumerate(actions):
        got = venv.step(a)[:4]
        for g, e in zip(got, expected[t + 1], strict=True):
            assert np.array_equal(g, e), f"step {t}"
        ends += int(np.sum(got[2] | got[3]))
    assert ends >= n                                   # the comparison crossed autoresets
    venv.close()


def test_next_step_autoreset_semantics_and_bad_actions():
    venv = gym.make_vec("Traction/TankTurn-v1", num_envs=2,
                        vectorization_mode="vector_entry_point", max_episode_steps=3)
    assert venv.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    venv.reset(seed=0)
    a = np.zeros((2, 2), np.float32)
    for _ in range(2):
        venv.step(a)
    _, _, term, trunc, info = venv.step(a)
    assert np.all(trunc) and not np.any(term) and info["_is_success"].all()
    obs, rew, term, trunc, _ = venv.step(a)              # the reset step
    assert np.all(rew == 0.0) and not np.any(term | trunc)
    assert np.all(np.abs(obs[:, 7:9]) < 1e-3)
    with pytest.raises(ValueError, match=r"actions shape \(2,\); expected \(2, 2\)"):
        venv.step(np.zeros(2))
    with pytest.raises(ValueError, match=r"sub-environment 1: action\[0\] \(left\) = nan"):
        venv.step(np.array([[0, 0], [np.nan, 0]]))
    with pytest.raises(ValueError, match="cannot be read as real numbers"):
        venv.step(np.array([["a", 0], [0, 0]]))


def test_get_set_attr_and_call_reach_every_world_as_in_sync_vector_env():
    venv = gym.make_vec("Traction/Drift-v1", num_envs=3, vectorization_mode="vector_entry_point")
    sync = gym.make_vec("Traction/Drift-v1", num_envs=3, vectorization_mode="sync")
    for v in (venv, sync):
        v.set_attr("hold_seconds", 4.0)
        assert v.get_attr("hold_seconds") == (4.0, 4.0, 4.0)
        v.set_attr("hold_seconds", [1.0, 2.0, 3.0])
        assert v.get_attr("hold_seconds") == (1.0, 2.0, 3.0)
    with pytest.raises(ValueError, match=r"set_attr\('hold_seconds', values\): 2 values; "
                       r"expected one per world \(3\)"):
        venv.set_attr("hold_seconds", [1.0, 2.0])
    with pytest.raises(ValueError, match="hold_seconds = -1.0"):        # all worlds or none:
        venv.set_attr("hold_seconds", [5.0, 6.0, -1.0])                # the first two had
    assert venv.get_attr("hold_seconds") == (1.0, 2.0, 3.0)            # changed
    with pytest.raises(ValueError, match="camera_name = 'nope'"):
        venv.set_attr("camera_name", ["top", "nope", "top"])
    assert venv.get_attr("camera_name") == ("chase", "chase", "chase")
    venv.set_attr("note", ["a", "b", "c"])                              # new attributes: as
    assert venv.get_attr("note") == ("a", "b", "c")                    # Gymnasium's envs take
    venv.close()
    sync.close()


def test_sb3_adapter_matches_dummy_vec_env_and_passes_nan_checks():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecCheckNan

    from traction.train.sb3_vec import TractionSB3VecEnv

    ours = VecCheckNan(TractionSB3VecEnv("Traction/TankTurn-v1", 2, max_episode_steps=5),
                       raise_exception=True)
    ref = make_vec_env(lambda: gym.make("Traction/TankTurn-v1", max_episode_steps=5), n_envs=2)
    ours.seed(3)
    ref.seed(3)
    assert np.array_equal(ours.reset(), ref.reset())
    rng = np.random.default_rng(0)
    for _ in range(12):
        a = rng.uniform(-1, 1, (2, 2)).astype(np.float32)
        o1, r1, d1, i1 = ours.step(a)
        o2, r2, d2, i2 = ref.step(a)
        assert np.array_equal(o1, o2) and np.allclose(r1, r2) and np.array_equal(d1, d2)
        for x, y in zip(i1, i2, strict=True):               # every key, same Python types
            _assert_same_dict(x, {k: v for k, v in y.items() if k != "episode"})
        for x, y in zip(ours.venv.reset_infos, ref.reset_infos, strict=True):
            _assert_same_dict(x, y)
    assert ours.get_attr("n_substeps") == [10, 10]
    ours.close()


def test_same_step_autoreset_puts_the_last_step_in_final_obs_and_final_info():
    venv = gym.make_vec("Traction/TankTurn-v1", num_envs=2, vectorization_mode="vector_entry_point",
                        max_episode_steps=3, autoreset_mode="SameStep")
    single = gym.make("Traction/TankTurn-v1", max_episode_steps=3)
    venv.reset(seed=[4, 5])
    single.reset(seed=4)
    a = np.full((2, 2), 0.5, np.float32)
    for _ in range(2):
        venv.step(a)
        single.step(a[0])
    obs, rew, term, trunc, info = venv.step(a)
    last, r, _, _, last_info = single.step(a[0])
    assert np.all(trunc) and info["_final_obs"].all()
    assert np.array_equal(info["final_obs"][0], last) and rew[0] == r
    assert info["final_info"]["reward_heading"][0] == last_info["reward_heading"]
    reset_obs, _ = single.reset()                     # the env's own RNG continues
    assert np.array_equal(obs[0], reset_obs)


def test_sb3_adapter_reports_success_of_the_ended_episode():
    pytest.importorskip("stable_baselines3")
    from traction.train.sb3_vec import TractionSB3VecEnv

    venv = TractionSB3VecEnv("Traction/TankTurn-v1", 2, max_episode_steps=60)
    venv.seed(0)
    venv.set_options({"target_offset": 0.0, "yaw": 0.0})    # already on target: hold 1 s = success
    venv.reset()
    for _ in range(60):
        _, reward, done, infos = venv.step(np.zeros((2, 2), np.float32))
        if done.any():
            break
    assert done.all()
    for info in infos:
        assert info["is_success"] and info["reward_hold"] > 0 and not info["TimeLimit.truncated"]
        assert info["terminal_observation"].shape == (9,)
    assert all(r["is_success"] is False for r in venv.reset_infos)   # the new episode's reset info
    venv.close()


def test_float32_and_float64_actions_step_the_vector_env_alike():
    """float32 actions (the action space's dtype) are copied to the action rows in the compiled
    call, others by numpy first: the same trajectories and the same errors either way."""
    venvs = [gym.make_vec("Traction/Drift-v1", num_envs=2, vectorization_mode="vector_entry_point")
             for _ in range(2)]
    for v in venvs:
        v.reset(seed=3)
    rng = np.random.default_rng(1)
    for _ in range(5):
        a = rng.uniform(-1.5, 1.5, (2, 4)).astype(np.float32)        # beyond [-1, 1]: clipped
        got32, got64 = venvs[0].step(a), venvs[1].step(a.astype(np.float64))
        for g, e in zip(got32[:4], got64[:4], strict=True):
            assert np.array_equal(g, e)
    assert np.array_equal(venvs[0].unwrapped.world.arrays.action, venvs[1].unwrapped.world.arrays.action)
    bad = np.zeros((2, 4), np.float32)
    bad[1, 2] = np.nan
    for v, b in zip(venvs, (bad, bad.astype(np.float64)), strict=True):
        with pytest.raises(ValueError, match=r"sub-environment 1: action\[2\] \(\w+\) = nan"):
            v.step(b)
    with pytest.raises(ValueError, match=r"action: float32 \(3, 4\); expected float32 \(2, 4\)"):
        venvs[0].unwrapped.world.step(1, action=np.zeros((3, 4), np.float32))


def test_substep_count_must_be_a_non_negative_integer():
    from traction.envs import VehicleSim
    from traction.scenes import build_scene

    sim = VehicleSim(build_scene("sedan", "flat"))
    with pytest.raises(TypeError):
        sim.step(2.5)
    with pytest.raises(ValueError, match="n_substeps = -1"):
        sim.step(-1)
    t = sim.data.time
    sim.step(np.int64(3))
    assert sim.data.time == pytest.approx(t + 3 * sim.dt)


def _reference_step(venv, envs, ended, a, same_step):
    """One vector step done by hand on single envs (with Gymnasium's autoreset semantics), its
    infos batched by Gymnasium's own ``_add_info``."""
    out, info = [], {}
    for i, e in enumerate(envs):
        if ended[i] and not same_step:
            o, inf = e.reset()
            r, te, tr = 0.0, False, False
        else:
            o, r, te, tr, inf = e.step(a[i])
            if same_step and (te or tr):
                last_obs, last_info = o, inf
                o, inf = e.reset()
                inf = {**inf, "final_obs": last_obs, "final_info": last_info}
        info = venv._add_info(info, inf, i)
        out.append((o, r, te, tr))
    obs, rew, term, trunc = (np.array(x) for x in zip(*out, strict=True))
    return obs, rew, term, trunc, info


@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
@pytest.mark.parametrize("env_id", ["Traction/Drift-v1", "Traction/TankTurn-v1"])
def test_vector_step_equals_single_envs_batched_by_gymnasium(env_id, mode):
    """``step`` (the tasks' code per world, clipping, sums, time limit, resets and the info
    built for all worlds at once) gives what the single envs give, batched by Gymnasium's
    ``_add_info``: same observations, rewards, flags, and info keys, dtypes, values and masks,
    through episode ends (``final_obs``/``final_info`` in ``SAME_STEP``)."""
    n = 3
    venv = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point",
                        max_episode_steps=4, autoreset_mode=mode).unwrapped
    envs = [gym.make(env_id, max_episode_steps=4) for _ in range(n)]
    obs, info = venv.reset(seed=3)
    ref: dict = {}
    for i, e in enumerate(envs):
        o, inf = e.reset(seed=3 + i)
        assert np.array_equal(obs[i], o)
        ref = venv._add_info(ref, inf, i)
    _assert_same_info(info, ref)
    actions = np.random.default_rng(0).uniform(-1, 1, (9, *venv.action_space.shape))
    ended, ends = np.zeros(n, bool), 0
    for a in actions.astype(np.float32):
        got = venv.step(a)
        expected = _reference_step(venv, envs, ended, a, mode == "SameStep")
        for g, e in zip(got[:4], expected[:4], strict=True):
            assert np.array_equal(g, e)
        _assert_same_info(got[4], expected[4])
        ended = got[2] | got[3]
        ends += int(ended.sum())
    assert ends >= n                                   # crossed autoresets


def _assert_same_dict(x: dict, y: dict) -> None:
    assert x.keys() == y.keys()
    for k, v in y.items():
        assert type(x[k]) is type(v) and np.array_equal(x[k], v), k


def _assert_same_info(fast: dict, slow: dict) -> None:
    assert fast.keys() == slow.keys()
    for k in slow:
        if isinstance(slow[k], dict):
            _assert_same_info(fast[k], slow[k])
        elif slow[k].dtype == object:
            assert fast[k].dtype == object, k
            assert all(np.array_equal(a, b) for a, b in zip(fast[k], slow[k], strict=True)), k
        else:
            assert fast[k].dtype == slow[k].dtype and np.array_equal(fast[k], slow[k]), k


def test_sb3_adapter_marks_a_termination_on_the_time_limit_step_as_no_time_limit():
    """A Drift episode driven straight off the pad at full throttle (seed 3) ends at step 56;
    with a 56-step limit it is terminated and truncated at once. SB3 must not bootstrap it:
    TimeLimit.truncated is False there, and True for a world only cut by the limit, as SB3's
    DummyVecEnv over Gymnasium's TimeLimit has it."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_util import make_vec_env

    from traction.train.sb3_vec import TractionSB3VecEnv

    ours = TractionSB3VecEnv("Traction/Drift-v1", 2, max_episode_steps=56)
    ref = make_vec_env(lambda: gym.make("Traction/Drift-v1", max_episode_steps=56), n_envs=2)
    ours.seed(3)
    ref.seed(3)
    assert np.array_equal(ours.reset(), ref.reset())
    a = np.array([[0.0, 1.0, -1.0, -1.0], [0.0, -1.0, -1.0, -1.0]], np.float32)  # off / coast
    for _ in range(56):
        _, _, d1, i1 = ours.step(a)
        _, _, d2, i2 = ref.step(a)
        assert np.array_equal(d1, d2)
    assert d1.all()
    assert [i["TimeLimit.truncated"] for i in i1] == [False, True]
    assert [i["TimeLimit.truncated"] for i in i2] == [False, True]
    ours.close()


# Set_attr with a tuple; bad-action errors naming the world when the
# world count differs from the action channel count.
def test_set_attr_reads_a_tuple_as_one_value_per_world_as_sync_vector_env():
    venv = gym.make_vec("Traction/Drift-v1", num_envs=3, vectorization_mode="vector_entry_point")
    sync = gym.make_vec("Traction/Drift-v1", num_envs=3, vectorization_mode="sync")
    for v in (venv, sync):
        v.set_attr("hold_seconds", (1.5, 2.5, 3.5))
        assert v.get_attr("hold_seconds") == (1.5, 2.5, 3.5)
    venv.close()
    sync.close()


@pytest.mark.parametrize("world,channel", [(1, 0), (2, 3), (0, 2)])
def test_a_bad_action_names_its_world_and_channel_with_three_worlds_of_four_channels(world,
                                                                                       channel):
    venv = gym.make_vec("Traction/Drift-v1", num_envs=3, vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    names = venv.unwrapped.envs[0].action_names
    a = np.zeros((3, 4), np.float32)
    a[world, channel] = np.nan
    with pytest.raises(ValueError, match=rf"sub-environment {world}: action\[{channel}\] "
                                         rf"\({names[channel]}\) = nan"):
        venv.step(a)
    venv.close()


def test_worlds_whose_episodes_end_at_different_steps_match_single_envs_bit_for_bit():
    """World 1 is reset alone mid-episode, so world 0 reaches the time limit first and sits out
    one step (NEXT_STEP autoreset) while world 1 drives on: each world still follows its single
    env's trajectory (the batched update skips exactly the worlds that sit out)."""
    env_id, n, limit = "Traction/TankTurn-v1", 2, 8
    venv = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point",
                        max_episode_steps=limit)
    singles = [gym.make(env_id, max_episode_steps=limit) for _ in range(n)]
    venv.reset(seed=7)
    for i, e in enumerate(singles):
        e.reset(seed=7 + i)
    rng = np.random.default_rng(3)
    ended = np.zeros(n, bool)
    sat_out_alone = False
    for t in range(20):
        if t == 3:
            venv.reset(options={"reset_mask": np.array([False, True])})
            singles[1].reset()
            ended[1] = False
        a = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
        obs, rew, term, trunc, _ = venv.step(a)
        sat_out_alone |= bool(ended[0] and not ended[1])
        for i, e in enumerate(singles):
            if ended[i]:
                o, r, te, tr = e.reset()[0], 0.0, False, False
            else:
                o, r, te, tr, _ = e.step(a[i])
            assert np.array_equal(obs[i], o) and rew[i] == r, (t, i)
            assert (term[i], trunc[i]) == (te, tr), (t, i)
            ended[i] = te or tr
    assert sat_out_alone                       # (the schedule did stagger the episodes)
    venv.close()


class _NarrowTank(TankTurnEnv):
    """A task with its own observation space, [-1, 1], and a channel reading 3 and -2."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.observation_space = gym.spaces.Box(-1.0, 1.0, (9,), np.float64)

    def observation(self, c):
        obs = super().observation(c)
        obs[7:] = 3.0, -2.0
        return obs


class _WideTank(_NarrowTank):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.observation_space = gym.spaces.Box(-5000.0, 5000.0, (9,), np.float64)

    def observation(self, c):
        obs = super().observation(c)
        obs[7] = 2500.0                              # m, say, on a large terrain
        return obs


def test_observations_are_clipped_to_the_tasks_own_space():
    """They were clipped to the shipped tasks' +-1000 whatever the space: a narrower space was
    left (3.0 in [-1, 1]), a wider one cut (2500 m came back as 1000)."""
    for cls, expected in ((_NarrowTank, (1.0, -1.0)), (_WideTank, (2500.0, -2.0))):
        env = cls()
        obs = [env.reset(seed=0)[0], env.step(np.zeros(2, np.float32))[0]]
        venv = TractionVectorEnv(cls, 2)
        obs += [*venv.reset(seed=0)[0], *venv.step(np.zeros((2, 2), np.float32))[0]]
        for o in obs:
            assert env.observation_space.contains(o) and tuple(o[7:]) == expected
