"""The native vector env with its physics stepped by several threads: the same trajectories,
bit for bit, as one thread, and the same errors with nothing changed."""

import gymnasium as gym
import numpy as np
import pytest

from traction.envs import World


def _make(env_id, n, threads, **kw):
    return gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point",
                        num_threads=threads, **kw)


def _state(venv):
    a = venv.unwrapped.world.arrays
    return [a.state.wheel.copy(), a.state.vehicle.copy(), a.outputs.wheel.copy(),
            a.outputs.vehicle.copy(), a.now.copy(), a.wheel_angle.copy()]


@pytest.mark.parametrize(("env_id", "n", "threads"), [
    ("Traction/Drift-v1", 5, 2),          # shares of 2 and 3 worlds
    ("Traction/TankTurn-v1", 4, 3),       # shares of 1, 2 and 1
    ("Traction/Climb6x6-v1", 2, 4),       # more threads than worlds: one per world
])
def test_threads_give_the_one_thread_trajectories_bit_for_bit(env_id, n, threads):
    one, many = _make(env_id, n, 1, max_episode_steps=6), _make(env_id, n, threads,
                                                                max_episode_steps=6)
    assert many.unwrapped.world.threads == min(threads, n)
    rng = np.random.default_rng(2)
    actions = rng.uniform(-1, 1, (16, *one.action_space.shape)).astype(np.float32)
    for v in (one, many):
        v.reset(seed=11)
    ends = 0
    for t, a in enumerate(actions):
        a = a if t % 2 else a.astype(np.float64)          # both action paths
        got, want = many.step(a), one.step(a)
        for g, e in zip(got[:4], want[:4], strict=True):
            assert np.array_equal(g, e), f"step {t}"
        for k in want[4]:
            assert np.array_equal(got[4][k], want[4][k]), f"step {t}, info {k}"
        for g, e in zip(_state(many), _state(one), strict=True):
            assert np.array_equal(g, e), f"step {t}"
        ends += int(np.sum(got[2] | got[3]))
    assert ends >= n                                     # through autoresets
    one.close()
    many.close()


def test_a_bad_action_in_any_share_stops_every_world():
    venv = _make("Traction/Drift-v1", 4, 2)
    venv.reset(seed=0)
    venv.step(np.zeros((4, 4), np.float32))
    before = _state(venv)
    bad = np.zeros((4, 4), np.float32)
    bad[3, 1] = np.inf                                   # in the second share
    with pytest.raises(ValueError, match=r"sub-environment 3: action\[1\] \(\w+\) = inf"):
        venv.step(bad)
    for g, e in zip(_state(venv), before, strict=True):
        assert np.array_equal(g, e)
    rows = venv.unwrapped.world.arrays.action.copy()
    with pytest.raises(ValueError, match="n_substeps = -2"):
        venv.unwrapped.world.step(-2, action=np.ones((4, 4), np.float32))
    assert np.array_equal(venv.unwrapped.world.arrays.action, rows)   # rejected before they load
    venv.close()
    with pytest.raises(RuntimeError):                   # the threads are stopped
        venv.unwrapped.world.step(1)


@pytest.mark.parametrize("threads", [0, -1, 1.5, "2"])
def test_thread_count_must_be_a_positive_integer(threads):
    with pytest.raises(ValueError, match=r"num_threads = .*; allowed: an integer >= 1"):
        _make("Traction/Drift-v1", 2, threads)
    with pytest.raises(ValueError, match=r"threads = .*; allowed: an integer >= 1"):
        World(2, threads)


def test_sb3_adapter_with_threads_steps_as_with_one():
    pytest.importorskip("stable_baselines3")
    from traction.train.sb3_vec import TractionSB3VecEnv

    one, many = (TractionSB3VecEnv("Traction/TankTurn-v1", 3, max_episode_steps=4, num_threads=t)
                 for t in (1, 2))
    for v in (one, many):
        v.seed(5)
    assert np.array_equal(one.reset(), many.reset())
    rng = np.random.default_rng(3)
    for _ in range(10):
        a = rng.uniform(-1, 1, (3, 2)).astype(np.float32)
        got, want = many.step(a), one.step(a)
        for g, e in zip(got[:3], want[:3], strict=True):
            assert np.array_equal(g, e)
        assert [i.get("terminal_observation") is None for i in got[3]] == \
               [i.get("terminal_observation") is None for i in want[3]]
    one.close()
    many.close()
