"""The curriculum: ``--curriculum NAME=START:END`` ramps an environment argument of every
training world over the run; evaluations and the run's config use END."""

import pytest
import yaml

from traction.train import curriculum, train

pytest.importorskip("stable_baselines3")


def test_values_ramp_over_the_first_80_percent_then_hold():
    assert curriculum.parse("difficulty=0.3:0.8") == ("difficulty", 0.3, 0.8)
    assert curriculum.value_at(0.3, 0.8, 0.0) == 0.3
    assert curriculum.value_at(0.3, 0.8, 0.4) == pytest.approx(0.55)
    assert curriculum.value_at(0.3, 0.8, 0.8) == pytest.approx(0.8)
    assert curriculum.value_at(0.3, 0.8, 1.0) == pytest.approx(0.8)
    for bad in ("difficulty", "difficulty=0.3", "difficulty=a:b", "=0:1"):
        with pytest.raises(ValueError, match="allowed: NAME=START:END"):
            curriculum.parse(bad)


def test_bad_curricula_are_refused_naming_what_is_wrong(tmp_path):
    with pytest.raises(ValueError, match="not an argument of Traction/TankTurn-v1"):
        curriculum.check("Traction/TankTurn-v1", {}, "difficulty", 0.3, 0.8)
    with pytest.raises(ValueError, match=r"difficulty=0.3:1.5: .*difficulty"):
        curriculum.check("Traction/Climb6x6-v1", {}, "difficulty", 0.3, 1.5)
    with pytest.raises(SystemExit):
        train.main(["--env", "Traction/Climb6x6-v1", "--out", str(tmp_path / "run"),
                    "--curriculum", "difficulty=0.3"])
    assert not (tmp_path / "run").exists()


def test_training_worlds_follow_the_ramp_and_evaluations_run_at_the_end(tmp_path):
    p = train.prepare("Traction/Climb6x6-v1", "ppo", 512, 0, tmp_path / "run",
                      {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1},
                      {"max_episode_steps": 30}, curriculum=("difficulty", 0.2, 0.6))
    assert p["venv"].get_attr("difficulty") == [0.2, 0.2]
    assert p["eval_env"].get_attr("difficulty") == [0.6]
    assert p["config"]["env_kwargs"]["difficulty"] == 0.6
    assert p["config"]["curriculum"] == {"difficulty": [0.2, 0.6]}
    seen = []
    ramp = curriculum.callback("difficulty", 0.2, 0.6, 512)
    original = ramp._on_rollout_start

    def spy():
        original()
        seen.append(p["venv"].get_attr("difficulty"))
    ramp._on_rollout_start = spy
    p["model"].learn(512, callback=ramp)
    # rollouts start at 0, 128, 256 and 384 steps: 0.2 + 0.4 * min(steps / 512 / 0.8, 1)
    assert [w[0] for w in seen] == pytest.approx([0.2, 0.325, 0.45, 0.575])
    assert all(w[0] == w[1] for w in seen)
    p["venv"].close()


def test_the_cli_records_the_curriculum_in_the_run_folder(tmp_path):
    out = tmp_path / "run"
    train.main(["--env", "Traction/Climb6x6-v1", "--timesteps", "128", "--out", str(out),
                "--hp", "n_envs=2", "--hp", "n_steps=32", "--hp", "batch_size=64",
                "--hp", "eval_freq=64", "--hp", "eval_episodes=1",
                "--env-kwarg", "max_episode_steps=10", "--curriculum", "difficulty=0.3:0.8",
                "--no-progress"])
    config = yaml.safe_load((out / "config.yml").read_text())
    assert config["env_kwargs"] == {"max_episode_steps": 10, "difficulty": 0.8}
    assert config["curriculum"] == {"difficulty": [0.3, 0.8]}
    assert "--curriculum difficulty=0.3:0.8" in (out / "command.txt").read_text()


def test_a_hyperparameter_file_can_carry_a_curriculum_and_the_cli_replaces_it(tmp_path):
    """``curriculum: NAME=START:END`` in the hyperparameters (here given as an override, as a
    file's entry or ``--hp curriculum=...`` give it): training worlds start at START,
    evaluations at END. ``--curriculum`` (``prepare(curriculum=...)``) replaces it, null drops
    it, and a curriculum that is not text is refused by name. Drift-v1's slide start."""
    small = {"n_envs": 2, "n_steps": 32, "batch_size": 64, "n_epochs": 1}
    ramp = {**small, "curriculum": "start_sideslip_deg=30:0"}
    p = train.prepare("Traction/Drift-v1", "ppo", 256, 0, tmp_path / "a", ramp, {})
    assert p["curriculum"] == ("start_sideslip_deg", 30.0, 0.0)
    assert p["venv"].get_attr("start_sideslip_deg") == [30.0, 30.0]
    assert p["eval_env"].get_attr("start_sideslip_deg") == [0.0]
    assert p["config"]["run"]["curriculum"] == "start_sideslip_deg=30:0"
    p["venv"].close()
    p = train.prepare("Traction/Drift-v1", "ppo", 256, 0, tmp_path / "b", ramp, {},
                      curriculum=("target_sideslip_deg", 10.0, 30.0))
    assert p["curriculum"] == ("target_sideslip_deg", 10.0, 30.0)
    assert p["venv"].get_attr("start_sideslip_deg") == [0.0, 0.0]
    p["venv"].close()
    p = train.prepare("Traction/Drift-v1", "ppo", 256, 0, tmp_path / "c",
                      {**small, "curriculum": None}, {})
    assert p["curriculum"] is None and "curriculum" not in p["config"]
    p["venv"].close()
    with pytest.raises(ValueError, match=r"--hp curriculum = 3; allowed: null or NAME=START:END"):
        train.prepare("Traction/Drift-v1", "ppo", 256, 0, tmp_path / "d",
                      {**small, "curriculum": 3}, {})
