"""The transfer report: tiny sweeps trained nominal and randomised, each final model evaluated
in other settings (randomisation, another tyre model), the matrix's IQMs and CIs, and reuse of
the evaluations already made."""

import json

import numpy as np
import pytest
import yaml

from traction.train import stats, sweep, transfer

pytest.importorskip("rliable")
pytest.importorskip("stable_baselines3")

TINY_HP = {"n_envs": 8, "n_steps": 64, "batch_size": 256, "eval_freq": 512, "eval_episodes": 1}


def _tiny_sweep(out, env_kwargs: dict, seeds=(0, 1)):
    """A sweep folder as ``python -m traction.train.sweep`` writes it, its trials run here
    (without Ray): 1024 steps of TankTurn, 20-step episodes."""
    settings = {"algo": "ppo", "timesteps": 1024, "hp": dict(TINY_HP),
                "env_kwargs": {"max_episode_steps": 20, **env_kwargs}, "eval_episodes": 2,
                "eval_seed": sweep.EVAL_SEED}
    out.mkdir(parents=True)
    (out / "sweep.yml").write_text(yaml.safe_dump(settings))
    for seed in seeds:
        sweep.run_trial({**settings, "env_id": "Traction/TankTurn-v1", "seed": seed,
                         "out": str(out), "cpus": 1})
    return out


def test_transfer_matrix_of_tiny_sweeps(tmp_path):
    nominal = _tiny_sweep(tmp_path / "nominal", {})
    mild = _tiny_sweep(tmp_path / "mild", {"randomize": "mild"})
    docs = tmp_path / "results.md"
    docs.write_text("# Results\n\nkept text\n")
    argv = [str(nominal), str(mild), "--eval", "nominal", "tire_model=arcade,randomize=wide",
            "--episodes", "2", "--docs", str(docs)]
    report = transfer.main(argv)
    rows = report["tasks"]["Traction/TankTurn-v1"]
    trained_nominal = "max_episode_steps=20"
    trained_mild = "max_episode_steps=20,randomize=mild"
    assert set(rows) == {trained_nominal, trained_mild}
    assert report["evaluated_in"] == ["nominal", "randomize=wide,tire_model=arcade"]
    for trained, folder in ((trained_nominal, nominal), (trained_mild, mild)):
        assert rows[trained]["seeds"] == [0, 1]
        for setting in report["evaluated_in"]:
            cell = rows[trained][setting]["success"]
            kept = [json.loads((sweep.trial_dir(folder, "Traction/TankTurn-v1", s)
                                / "evaluations" / setting / "evaluation.json").read_text())
                    for s in (0, 1)]
            assert cell["per_seed"] == [k["success_rate"] for k in kept]
            i = stats.interval(np.array(cell["per_seed"])[:, None], "iqm")
            assert (cell["iqm"], cell["ci_low"], cell["ci_high"]) == (i.value, i.lo, i.hi)
        other = json.loads((sweep.trial_dir(folder, "Traction/TankTurn-v1", 0) / "evaluations"
                            / "randomize=wide,tire_model=arcade" / "evaluation.json").read_text())
        assert other["env_overrides"] == {"tire_model": "arcade", "randomize": "wide"}
        nominal_eval = json.loads((sweep.trial_dir(folder, "Traction/TankTurn-v1", 0)
                                   / "evaluations" / "nominal" / "evaluation.json").read_text())
        # the nominal column is nominal whatever the row trained with
        assert nominal_eval["env_overrides"] == {"randomize": None, "tire_model": None}
    text = docs.read_text()
    assert text.startswith("# Results\n\nkept text\n") and transfer.BEGIN in text
    assert "| max_episode_steps=20,randomize=mild (2) |" in text
    # a second report reuses every evaluation it finds (same episodes, same seeds)
    kept = sweep.trial_dir(nominal, "Traction/TankTurn-v1", 1) / "evaluations" / "nominal" / \
        "evaluation.json"
    stamp = kept.stat().st_mtime_ns
    assert transfer.main(argv) == report
    assert kept.stat().st_mtime_ns == stamp


def test_settings_read_as_nominal_or_assignments():
    assert transfer.setting_arg("nominal") == {}
    assert transfer.setting_arg("tire_model=curve,randomize=mild") == {
        "tire_model": "curve", "randomize": "mild"}
    assert transfer.setting_name({"tire_model": "curve", "randomize": "mild"}) == \
        "randomize=mild,tire_model=curve"
    with pytest.raises(SystemExit):
        transfer.main(["/nonexistent-folder", "--episodes", "1"])
