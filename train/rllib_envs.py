"""Traction's environments in RLlib (Ray's RL library).

RLlib does not read Gymnasium's registry: its workers build an environment from a name that
``ray.tune.registry.register_env`` gave a creator. :func:`register_rllib_envs` registers every
Traction id, so::

    from ray.rllib.algorithms.ppo import PPOConfig

    from traction.train.rllib_envs import register_rllib_envs

    register_rllib_envs()
    config = (PPOConfig()
              .environment("Traction/TankTurn-v1", env_config={"drive_mode": "standard"})
              .env_runners(num_envs_per_env_runner=16, gym_env_vectorize_mode="vector_entry_point"))
    algo = config.build_algo()
    print(algo.train()["env_runners"]["episode_return_mean"])

``env_config`` holds the task's arguments (as ``gym.make`` takes them). With
``gym_env_vectorize_mode="vector_entry_point"`` each env runner steps its
``num_envs_per_env_runner`` worlds in Traction's native vector env (one compiled physics call
per step for all of them, Gymnasium's next-step autoreset, as RLlib expects); with RLlib's
default (``"sync"``) it steps that many single envs one by one, as Gymnasium's
``SyncVectorEnv`` does. The two give the same trajectories.

**Which environment.** ``ray[rllib]`` 2.60 pins ``gymnasium==1.2.2``; Traction runs on
Gymnasium 1.2.2 and later (its env tests pass on both: ``make test-rllib`` builds
``.venv-rllib`` with RLlib and Gymnasium 1.2.2 and runs them there with the RLlib test).
"""

from __future__ import annotations

from functools import partial

import gymnasium as gym

import traction.envs


def make_env(env_id: str, env_config: dict | None = None):
    """The creator RLlib calls: a single env of ``env_id`` (``gym.make``), or, when RLlib asks
    for a vector env (``env_config["num_envs"]``, its ``vector_entry_point`` mode), Traction's
    native vector env of that many worlds. The other ``env_config`` entries are the task's
    arguments (RLlib's ``worker_index`` and the like are not in them)."""
    kwargs = dict(env_config or {})
    num_envs = kwargs.pop("num_envs", None)
    if num_envs is None:
        return gym.make(env_id, **kwargs)
    return traction.envs.make_vector(env_id, int(num_envs), **kwargs)


def register_rllib_envs(env_ids=None) -> list[str]:
    """Register ``env_ids`` (default: every shipped Traction id) with RLlib's registry
    (``ray.tune.registry.register_env``), so ``AlgorithmConfig.environment(id)`` finds them.
    Returns the ids registered. Call it in the process that builds the algorithm (after
    ``ray.init`` when you call that yourself); RLlib ships the creators to its workers.

    Raises:
        ImportError: Ray is not installed.
    """
    from ray.tune.registry import register_env

    ids = list(traction.envs.ENV_IDS if env_ids is None else env_ids)
    for env_id in ids:
        register_env(env_id, partial(make_env, env_id))
    return ids
