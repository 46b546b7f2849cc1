"""The agent shipped with the package runs without training: ``evaluate --pretrained``."""

import json

import pytest

from traction.train import evaluate, pretrained

pytest.importorskip("stable_baselines3")


def test_the_shipped_tankturn_agent_succeeds_with_its_statistics(tmp_path):
    shipped = json.loads((pretrained.folder("Traction/TankTurn-v0") / "evaluation.json")
                         .read_text())
    assert shipped["episodes"] >= 100 and shipped["success_rate"] >= 0.95
    out = tmp_path / "eval"
    result = evaluate.main(["--pretrained", "Traction/TankTurn-v0", "--episodes", "3",
                            "--out", str(out)])
    # the first 3 of the episodes it was shipped with (same seeds): it succeeds in each
    assert result["success_rate"] == 1.0 and result["episodes"] == 3
    assert json.loads((out / "evaluation.json").read_text()) == result
    assert not (pretrained.folder("Traction/TankTurn-v0") / "evaluation.mp4").exists()


def test_the_video_goes_to_the_output_folder(tmp_path):
    pytest.importorskip("imageio")
    result = evaluate.main(["--pretrained", "Traction/TankTurn-v0", "--episodes", "1",
                            "--video", "--out", str(tmp_path)])
    assert result["video"] == str(tmp_path / "evaluation.mp4")
    assert (tmp_path / "evaluation.mp4").stat().st_size > 10_000


def test_unknown_or_missing_agents_and_both_sources_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        evaluate.main(["--pretrained", "Traction/Drift-v0", "--out", str(tmp_path)])
    assert "no trained agent ships for it; available: Traction/TankTurn-v0" in \
        capsys.readouterr().err
    with pytest.raises(SystemExit):
        evaluate.main([str(tmp_path), "--pretrained", "Traction/TankTurn-v0"])
    assert "a run folder or --pretrained ID (one of them)" in capsys.readouterr().err
