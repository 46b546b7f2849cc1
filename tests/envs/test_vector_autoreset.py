"""Gymnasium 1.x vector envs over Traction envs: next-step autoreset, no leaks between copies."""

import gymnasium as gym
import numpy as np

import traction.envs  # noqa: F401


def test_sync_vector_env_next_step_autoreset_and_independent_copies():
    envs = gym.make_vec("Traction/TankTurn-v1", num_envs=2, vectorization_mode="sync",
                        max_episode_steps=5)
    obs, infos = envs.reset(seed=[1, 2])
    assert obs.shape == (2, 9) and not np.array_equal(obs[0], obs[1])
    a = np.zeros((2, 2), np.float32)
    for _ in range(4):
        obs, r, term, trunc, infos = envs.step(a)
    obs5, r5, term5, trunc5, _ = envs.step(a)                 # 5th step: time limit
    assert np.all(trunc5)
    obs6, r6, term6, trunc6, _ = envs.step(a)                 # next step: the reset step
    assert np.all(r6 == 0.0) and not np.any(term6 | trunc6)
    # each copy was reset from its own RNG stream; its first observation is a fresh start
    assert np.all(np.abs(obs6[:, 7:9]) < 1e-3)                 # no displacement carried over
    assert not np.array_equal(obs6[0], obs6[1])
    envs.close()
