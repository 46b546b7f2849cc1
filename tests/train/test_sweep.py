"""The sweep: seeds, refusals, the report's statistics (rliable's, on made-up trials), the
results page it writes, and a tiny sweep through local Ray that is interrupted and resumed."""

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import yaml

from traction.train import sweep

pytest.importorskip("rliable")


@pytest.fixture(autouse=True)
def fewer_replications(monkeypatch):
    """200 bootstrap replications instead of 2,000: the same code, a tenth of the time."""
    from traction.train import stats

    monkeypatch.setattr(stats, "REPS", 200)


def test_seeds_read_as_ranges_and_lists():
    assert sweep.parse_seeds("0-3") == [0, 1, 2, 3]
    assert sweep.parse_seeds("0-2,5,1") == [0, 1, 2, 5]
    for bad in ("3-1", "a", "-1", "0-x", ""):
        with pytest.raises(ValueError, match="is not a seed or a range of seeds"):
            sweep.parse_seeds(bad)


TASKS = {"Traction/TankTurn-v1": [0.9, 1.0, 1.0, 0.2, 1.0], "Traction/Drift-v1": [0.0, 1.0, 0.6,
                                                                                   0.8, 1.0]}


def _fake_sweep(out, tasks=TASKS, timesteps=3000):
    """A sweep folder with finished trials (trial.json, evaluations.npz) of made-up scores."""
    out.mkdir()
    (out / "sweep.yml").write_text(yaml.safe_dump({"algo": "ppo", "timesteps": timesteps, "hp": {},
                                                   "env_kwargs": {}, "eval_episodes": 10,
                                                   "eval_seed": sweep.EVAL_SEED}))
    for env_id, finals in tasks.items():
        for seed, final in enumerate(finals):
            run = sweep.trial_dir(out, env_id, seed)
            run.mkdir(parents=True)
            success = np.array([[0, 0, 0], [0, 1, 0], [1, 1, 1]]) * (seed != 0)   # seed 0: never
            np.savez(run / "evaluations.npz", timesteps=np.array([1000, 2000, 3000]),
                     results=np.arange(9.0).reshape(3, 3) + seed, successes=success,
                     ep_lengths=np.ones((3, 3)))
            (run / "trial.json").write_text(json.dumps({
                "env_id": env_id, "seed": seed, "algo": "ppo", "timesteps": timesteps,
                "train_seconds": 10.0, "wall_seconds": 12.0, "train_steps_per_s": 300.0,
                "final": {"success_rate": final, "mean_return": 10 * final},
                "best": {"success_rate": 1.0, "mean_return": 11.0}, "host": "here"}))
    (out / "commands.txt").write_text("/some/venv/bin/python -m traction.train.sweep --seeds 0-4\n")
    return out


def test_report_is_rliables_iqm_with_bootstrap_cis(tmp_path):
    from rliable import metrics

    from traction.train import sweep_report

    out = _fake_sweep(tmp_path / "sweep")
    report = sweep_report.summarize(out)
    for env_id, finals in TASKS.items():
        r = report["tasks"][env_id]
        s = r["final"]["success"]
        assert s["iqm"] == pytest.approx(metrics.aggregate_iqm(np.array(finals)[:, None]))
        assert s["ci_low"] <= s["iqm"] <= s["ci_high"] and s["runs"] == 5
        assert r["best"]["success"] == {"iqm": 1.0, "ci_low": 1.0, "ci_high": 1.0, "mean": 1.0,
                                        "runs": 5}
        # seeds 1-4 reach 80 % at their third evaluation; seed 0 never
        assert [t["steps_to_80"] for t in r["trials"]] == [None, 3000, 3000, 3000, 3000]
        assert r["seeds_reaching"] == 4
        assert r["curve"]["timesteps"] == [1000, 2000, 3000]
        assert r["curve"]["success"]["iqm"][2] == pytest.approx(1.0)     # IQM drops seed 0
    both = np.array([TASKS[k] for k in TASKS]).T                        # (runs, tasks)
    assert report["all_tasks"]["final"]["iqm"] == pytest.approx(metrics.aggregate_iqm(both))
    profile = report["profiles"]["final model"]
    assert profile["fraction"][0] == pytest.approx(np.mean(both > 0.0))  # tau = 0
    assert sweep_report.summarize(out) == report                        # seeded bootstrap

    text = sweep_report.write_report(out)
    assert "| Traction/TankTurn-v1 | 5 | 3,000 | 97 % [" in text   # IQM of 0.2, 0.9, 1, 1, 1
    assert "4 of 5 |" in text and "python -m traction.train.sweep --seeds 0-4" in text
    assert "/some/venv" not in text                    # the command as a reader types it
    for name in ("report.md", "report.json", "curves.png", "profile.png"):
        assert (out / "report" / name).stat().st_size > 100, name


def test_sweeps_run_apart_report_together_with_their_own_steps(tmp_path):
    """One report of two sweep folders (a task each, its own steps per run): the tasks' figures
    are each folder's alone, the steps are given per task, both commands are listed; a trial in
    both folders is refused."""
    from traction.train import sweep_report

    tank = {"Traction/TankTurn-v1": TASKS["Traction/TankTurn-v1"]}
    drift = {"Traction/Drift-v1": TASKS["Traction/Drift-v1"]}
    a = _fake_sweep(tmp_path / "a", tank)
    b = _fake_sweep(tmp_path / "b", drift, timesteps=6000)
    both = sweep_report.summarize([a, b])
    assert both["tasks"]["Traction/TankTurn-v1"] == sweep_report.summarize(a)["tasks"][
        "Traction/TankTurn-v1"]
    assert both["tasks"]["Traction/Drift-v1"] == sweep_report.summarize(b)["tasks"][
        "Traction/Drift-v1"]
    assert both["settings"]["timesteps"] is None and both["settings"]["algo"] == "ppo"
    assert len(both["commands"]) == 2 and "all_tasks" in both
    text = sweep_report.main([str(a), str(b)])
    assert "the environment steps per run in the table" in text
    assert "| Traction/TankTurn-v1 | 5 | 3,000 |" in text and "| Traction/Drift-v1 | 5 | 6,000 |" in text
    assert (a / "report" / "curves.png").is_file()
    with pytest.raises(ValueError, match="the same trial twice"):
        sweep_report.summarize([a, _fake_sweep(tmp_path / "c", tank)])


def test_results_page_keeps_its_text_and_replaces_only_the_block(tmp_path):
    from traction.train import sweep_report

    out = _fake_sweep(tmp_path / "sweep")
    docs = tmp_path / "docs" / "results.md"
    docs.parent.mkdir()
    docs.write_text("# Results\n\nNotes written by hand.\n")
    sweep_report.main([str(out), "--docs", str(docs)])
    text = docs.read_text()
    assert text.startswith("# Results\n\n" + sweep_report.BEGIN)
    assert text.endswith("Notes written by hand.\n")
    assert "![learning curves](results/sweep_curves.png)" in text
    assert (docs.parent / "results" / "sweep_curves.png").is_file()
    docs.write_text(text.replace("Notes written by hand.", "Notes, edited."))
    sweep_report.write_docs(out, docs)                                 # again: one block
    again = docs.read_text()
    assert again.count(sweep_report.BEGIN) == 1 and again.endswith("Notes, edited.\n")


def test_sensor_sweeps_report_as_tasks_of_their_own_in_a_section_of_their_own(tmp_path):
    """A sweep with environment arguments (obs_mode=pixels) is another task for the agent: its
    rows are named with them, beside the same task's plain sweep, not pooled with it; --section
    writes the page's block of that name and leaves the main block as it was."""
    from traction.train import sweep_report

    tank = {"Traction/TankTurn-v1": TASKS["Traction/TankTurn-v1"]}
    plain = _fake_sweep(tmp_path / "plain", tank)
    pixels = _fake_sweep(tmp_path / "pixels", {"Traction/TankTurn-v1": [0.0, 0.5, 1.0]})
    settings = yaml.safe_load((pixels / "sweep.yml").read_text())
    settings["env_kwargs"] = {"obs_mode": "pixels", "obs_options": {"width": 64}}
    (pixels / "sweep.yml").write_text(yaml.safe_dump(settings))
    both = sweep_report.summarize([plain, pixels])
    label = "Traction/TankTurn-v1 (obs_mode=pixels, obs_options={'width': 64})"
    assert list(both["tasks"]) == ["Traction/TankTurn-v1", label]
    assert len(both["tasks"][label]["seeds"]) == 3 and len(both["tasks"]["Traction/TankTurn-v1"]
                                                            ["seeds"]) == 5
    docs = tmp_path / "docs" / "results.md"
    docs.parent.mkdir()
    docs.write_text("# Results\n\nHand text.\n")
    sweep_report.main([str(plain), "--docs", str(docs)])
    main_block = docs.read_text()
    sweep_report.main([str(plain), str(pixels), "--docs", str(docs), "--section", "sensors"])
    text = docs.read_text()
    begin, end = sweep_report.markers("sensors")
    assert text.startswith(main_block.rstrip("\n")) and text.rstrip().endswith(end)
    section = text.split(begin, 1)[1]
    assert f"| {label} | 3 | 3,000 |" in section
    assert "results/sweep_sensors_curves.png" in section
    assert (docs.parent / "results" / "sweep_sensors_curves.png").is_file()
    sweep_report.write_docs([pixels], docs, "sensors")                 # again: replaced
    again = docs.read_text()
    assert again.count(begin) == 1 and again.startswith(main_block.rstrip("\n"))
    assert "| Traction/TankTurn-v1 | 5 |" not in again.split(begin, 1)[1]
    for bad in (["--docs", str(docs), "--section", "a b"], ["--section", "sensors"]):
        with pytest.raises(SystemExit):
            sweep_report.main([str(plain), *bad])


def test_sweeps_of_other_lengths_compare_at_an_equal_budget(tmp_path):
    """``--at-steps``: a run longer than the budget counts with its checkpoint at or before it
    (evaluated on the sweep's held-out episodes; a kept result of those is read again), a run
    no longer with its final model; IQM over seeds per task, in the report's markdown."""
    from rliable import metrics

    from traction.train import sweep_report

    long = _fake_sweep(tmp_path / "long", {"Traction/TankTurn-v1": [1.0, 1.0, 1.0]},
                       timesteps=9000)
    short = _fake_sweep(tmp_path / "short", {"Traction/Drift-v1": [0.2, 0.5, 1.0]},
                        timesteps=3000)
    kept = [0.0, 0.5, 0.75]
    for seed, success in enumerate(kept):
        run = sweep.trial_dir(long, "Traction/TankTurn-v1", seed)
        (run / "checkpoints").mkdir()
        for k in (2000, 4000):
            (run / "checkpoints" / f"rl_model_{k}_steps.zip").write_text("")
        folder = run / "evaluations" / "checkpoint_2000"
        folder.mkdir(parents=True)
        (folder / "evaluation.json").write_text(json.dumps(
            {"episodes": 10, "seed": sweep.EVAL_SEED, "success_rate": success}))
    report = sweep_report.summarize([long, short], steps=3000)
    tank, drift = report["at_steps"]["Traction/TankTurn-v1"], report["at_steps"]["Traction/Drift-v1"]
    assert tank["model_steps"] == [2000] * 3 and drift["model_steps"] == [3000] * 3
    assert tank["success"]["iqm"] == pytest.approx(metrics.aggregate_iqm(np.array(kept)[:, None]))
    assert drift["success"]["iqm"] == pytest.approx(
        metrics.aggregate_iqm(np.array([0.2, 0.5, 1.0])[:, None]))
    text = sweep_report.markdown(report)
    assert "At an equal budget of 3,000 environment steps" in text
    assert "| Traction/TankTurn-v1 | 3 | 2,000 |" in text and "| Traction/Drift-v1 | 3 | 3,000 |" in text


def test_a_sweep_with_other_settings_is_refused(tmp_path):
    out = _fake_sweep(tmp_path / "sweep")
    with pytest.raises(ValueError, match=r"timesteps: 3000 there, 5000 now"):
        sweep.check(["Traction/TankTurn-v1"], "ppo", [0], 5000, out, {}, {}, 10, 1)
    with pytest.raises(ValueError, match="not empty and not a sweep"):
        (tmp_path / "other").mkdir()
        (tmp_path / "other" / "x").write_text("")
        sweep.check(["Traction/TankTurn-v1"], "ppo", [0], 3000, tmp_path / "other", {}, {}, 10, 1)
    with pytest.raises(ValueError, match="sim_threads = 2 .* oversubscribe"):
        sweep.check(["Traction/TankTurn-v1"], "ppo", [0], 3000, out, {"sim_threads": 2}, {},
                    10, 1)
    sweep.check(["Traction/TankTurn-v1"], "ppo", [0, 7], 3000, out, {}, {}, 10, 1)   # resumes


#: a trial of a few seconds: 8 worlds, 1024 steps, two training evaluations of 1 short episode
TINY = ["--envs", "Traction/TankTurn-v1", "--seeds", "0-1", "--timesteps", "1024",
        "--eval-episodes", "2", "--max-concurrent", "1", "--hp", "n_envs=8", "--hp", "n_steps=64",
        "--hp", "batch_size=256", "--hp", "eval_freq=512", "--hp", "eval_episodes=1",
        "--env-kwarg", "max_episode_steps=20"]


@pytest.mark.scale
def test_tiny_sweep_through_local_ray_resumes_after_ctrl_c(tmp_path):
    """Two seeds, one at a time: Ctrl-C once the first has finished; the same command again
    trains the second only, keeps the first as it was, and reports both."""
    pytest.importorskip("ray")
    out = tmp_path / "sweep"
    command = [sys.executable, "-m", "traction.train.sweep", *TINY, "--out", str(out)]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True)
    done = sweep.trial_dir(out, "Traction/TankTurn-v1", 0) / "trial.json"
    deadline = time.monotonic() + 600                # (a first compilation of the physics)
    while not done.is_file() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert done.is_file(), first.communicate(timeout=60)[0][-3000:]
    first.send_signal(signal.SIGINT)                     # Ctrl-C
    log = first.communicate(timeout=120)[0]
    second = sweep.trial_dir(out, "Traction/TankTurn-v1", 1)
    assert not (second / "trial.json").is_file(), log[-3000:]
    kept = done.read_text(), (done.parent / "model.zip").stat().st_mtime_ns

    resumed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert "2 trials, 1 finished before, running 1" in resumed.stdout
    assert (done.read_text(), (done.parent / "model.zip").stat().st_mtime_ns) == kept
    trial = json.loads((second / "trial.json").read_text())
    assert trial["seed"] == 1 and trial["best"]["episodes"] == 2
    report = json.loads((out / "report" / "report.json").read_text())
    assert report["tasks"]["Traction/TankTurn-v1"]["seeds"] == [0, 1]
    assert len(report["commands"]) == 2
    config = yaml.safe_load((second / "config.yml").read_text())
    assert config["run"]["n_envs"] == 8 and config["env_kwargs"] == {"max_episode_steps": 20}
    assert "--hp n_envs=8" in (second / "command.txt").read_text()
