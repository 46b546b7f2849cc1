"""RLlib finds Traction's ids once registered, and PPO trains an iteration on one, with single
envs and with the native vector env. RLlib pins its own Gymnasium (1.2.2 for Ray 2.60), so
these run where ``make test-rllib`` installs it (``.venv-rllib``); elsewhere they skip."""

import numpy as np
import pytest

try:
    from ray.rllib.algorithms.ppo import PPOConfig
except Exception as e:  # noqa: BLE001 - not installed, or its dependencies are not
    pytest.skip(f"RLlib is not installed here ({e}); make test-rllib runs this",
                allow_module_level=True)

import ray  # noqa: E402

from traction.train.rllib_envs import make_env, register_rllib_envs  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False,
             object_store_memory=200 * 1024**2)
    yield
    ray.shutdown()


def test_the_creator_builds_single_and_native_vector_envs():
    from traction.envs import TractionVectorEnv

    env = make_env("Traction/TankTurn-v1", {"drive_mode": "standard"})
    assert env.spec.kwargs["drive_mode"] == "standard"
    venv = make_env("Traction/TankTurn-v1", {"num_envs": 3})
    assert isinstance(venv, TractionVectorEnv) and venv.reset(seed=0)[0].shape == (3, 9)


@pytest.mark.parametrize("mode, n", [("sync", 1), ("vector_entry_point", 4)])
def test_ppo_trains_one_iteration_on_a_registered_id(local_ray, mode, n):
    assert "Traction/TankTurn-v1" in register_rllib_envs()
    config = (PPOConfig()
              .environment("Traction/TankTurn-v1", env_config={"max_episode_steps": 50})
              .env_runners(num_env_runners=0, num_envs_per_env_runner=n,
                           gym_env_vectorize_mode=mode)
              .training(train_batch_size_per_learner=200, minibatch_size=100, num_epochs=1)
              .debugging(seed=0))
    algo = config.build_algo()
    try:
        from traction.envs import TractionVectorEnv

        native = isinstance(algo.env_runner.env.unwrapped, TractionVectorEnv)
        assert native == (mode == "vector_entry_point")     # else n single envs in a loop
        result = algo.train()
    finally:
        algo.stop()
    assert result["num_env_steps_sampled_lifetime"] >= 200
    assert np.isfinite(result["env_runners"]["episode_return_mean"])
