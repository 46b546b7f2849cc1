"""Training and evaluating agents that observe pixels or a lidar scan (``obs_mode``)."""

import json

import pytest

pytest.importorskip("stable_baselines3")

from traction.train import evaluate, train  # noqa: E402


def test_obs_mode_entries_pick_the_policy_on_top_of_the_tasks():
    hp = train.hyperparameters("ppo", "Traction/Climb6x6-v1", {}, "state+lidar")
    assert hp["policy"] == "MultiInputPolicy" and hp["gamma"] == 0.995   # (the task's)
    hp = train.hyperparameters("ppo", "Traction/TankTurn-v1", {}, "pixels")
    assert (hp["policy"], hp["n_envs"]) == ("CnnPolicy", 16)
    assert train.hyperparameters("ppo", "Traction/TankTurn-v1", {"n_envs": 2},
                                 "pixels")["n_envs"] == 2                # overrides last
    assert train.hyperparameters("ppo", "Traction/TankTurn-v1", {}, "state")["policy"] == \
        "MlpPolicy"
    assert train.hyperparameters("sac", "Traction/TankTurn-v1", {}, "pixels")["policy"] == \
        "CnnPolicy"


@pytest.mark.parametrize("mode", ["pixels", "state+lidar"])
def test_train_and_evaluate_from_sensors(tmp_path, mode):
    """A short PPO run from pixels (CnnPolicy, images not normalised) and from the state and
    lidar (MultiInputPolicy, both normalised), then its evaluation."""
    out = tmp_path / "run"
    train.main(["--env", "Traction/TankTurn-v1", "--timesteps", "128", "--seed", "0",
                "--out", str(out), "--env-kwarg", f"obs_mode={mode}", "--hp", "n_envs=2",
                "--hp", "n_steps=32", "--hp", "batch_size=32", "--hp", "n_epochs=1",
                "--hp", "eval_freq=100000", "--no-progress"])
    import pickle

    with open(out / "vecnormalize.pkl", "rb") as f:
        norm = pickle.load(f)
    if mode == "pixels":
        assert norm.norm_obs is False                              # images stay uint8
    else:
        assert sorted(norm.norm_obs_keys) == ["lidar", "state"]
    evaluate.main([str(out), "--episodes", "1", "--no-progress"])
    result = json.loads((out / "evaluation.json").read_text())
    assert result["episodes"] == 1


def test_sac_trains_from_pixels(tmp_path):
    """Images go channels first under VecNormalize, so SAC's replay buffer (which stores
    VecNormalize's original observations) gets the layout its CNN reads."""
    out = tmp_path / "sac"
    train.main(["--env", "Traction/TankTurn-v1", "--algo", "sac", "--timesteps", "64",
                "--seed", "0", "--out", str(out), "--env-kwarg", "obs_mode=pixels",
                "--hp", "n_envs=2", "--hp", "learning_starts=16", "--hp", "batch_size=16",
                "--hp", "buffer_size=200", "--hp", "eval_freq=100000", "--no-progress"])
    assert (out / "model.zip").exists()


def test_the_benchmark_refuses_a_policy_that_observes_sensors(tmp_path):
    from traction.train.policy import Unsupported, _run_source

    out = tmp_path / "run"
    train.main(["--env", "Traction/TankTurn-v1", "--timesteps", "64", "--seed", "0",
                "--out", str(out), "--env-kwarg", "obs_mode=state+lidar", "--hp", "n_envs=2",
                "--hp", "n_steps=32", "--hp", "batch_size=32", "--hp", "n_epochs=1",
                "--hp", "eval_freq=100000", "--no-progress"])
    source = _run_source(out, "final", str(out))
    task = type("Task", (), {"env_id": "Traction/TankTurn-v1", "variant": "tank_turn"})()
    with pytest.raises(Unsupported, match="obs_mode='state\\+lidar'"):
        source.make(task)
