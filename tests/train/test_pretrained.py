"""The agents shipped with the package run without training: ``evaluate --pretrained``."""

import json

import pytest

from traction.train import evaluate, pretrained

pytest.importorskip("stable_baselines3")


def test_every_task_has_a_shipped_agent():
    assert set(pretrained.available()) == {"Traction/TankTurn-v1", "Traction/Climb6x6-v1",
                                          "Traction/Drift-v1"}


@pytest.mark.parametrize("env_id", pretrained.available())
def test_a_shipped_agent_succeeds_with_its_statistics(tmp_path, env_id):
    shipped = json.loads((pretrained.folder(env_id) / "evaluation.json").read_text())
    assert shipped["episodes"] >= 100 and shipped["success_rate"] >= 0.95
    out = tmp_path / "eval"
    result = evaluate.main(["--pretrained", env_id, "--episodes", "2", "--out", str(out)])
    # the first 2 of the episodes it was shipped with (same seeds): it succeeds in each
    assert result["success_rate"] == 1.0 and result["episodes"] == 2
    assert json.loads((out / "evaluation.json").read_text()) == result
    assert not (pretrained.folder(env_id) / "evaluation.mp4").exists()


def test_the_video_goes_to_the_output_folder(tmp_path):
    """(On a copy of the shipped folder with 10-step episodes: a video of a whole episode
    renders for a minute on a software renderer.)"""
    pytest.importorskip("imageio")
    import shutil

    import yaml

    run = tmp_path / "agent"
    shutil.copytree(pretrained.folder("Traction/TankTurn-v1"), run)
    config = yaml.safe_load((run / "config.yml").read_text())
    config["env_kwargs"]["max_episode_steps"] = 10
    (run / "config.yml").write_text(yaml.safe_dump(config))
    shipped = (run / "evaluation.json").read_text()
    result = evaluate.main([str(run), "--episodes", "1", "--video", "--out", str(tmp_path / "v")])
    assert result["video"] == str(tmp_path / "v" / "evaluation.mp4")
    assert (tmp_path / "v" / "evaluation.mp4").stat().st_size > 1000
    assert not (run / "evaluation.mp4").exists() and (run / "evaluation.json").read_text() == shipped


def test_unknown_or_missing_agents_and_both_sources_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        evaluate.main(["--pretrained", "Traction/Drift-v9", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert "no trained agent ships for it; available: " in err and "Traction/TankTurn-v1" in err
    with pytest.raises(SystemExit):
        evaluate.main([str(tmp_path), "--pretrained", "Traction/TankTurn-v1"])
    assert "a run folder or --pretrained ID (one of them)" in capsys.readouterr().err
