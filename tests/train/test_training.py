"""PPO smoke run through the CLI: writes a self-describing run folder, reloads and evaluates."""

import json

import gymnasium as gym
import numpy as np
import pytest
import yaml

import traction.envs  # noqa: F401  (registers the ids)
from traction.train import evaluate, train

pytest.importorskip("stable_baselines3")          # (the train extra)


def test_ppo_smoke_run_writes_folder_reloads_and_evaluates(tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    train.main(["--env", "Traction/TankTurn-v1", "--algo", "ppo", "--timesteps", "512",
                "--seed", "3", "--out", str(out), "--hp", "n_envs=2", "--hp", "sim_threads=2",
                "--hp", "n_steps=128", "--hp", "batch_size=64", "--hp", "eval_freq=256",
                "--hp", "eval_episodes=1",
                "--env-kwarg", "max_episode_steps=40", "--no-progress"])
    said = capsys.readouterr().out          # the summary: it ended with the folder's name only
    assert f"run folder: {out}" in said
    assert "last evaluation (step 512, 1 episodes): success 0 %, return " in said \
        or "last evaluation (step 512, 1 episodes): success 100 %, return " in said
    assert f"best model: {out / 'best' / 'best_model.zip'} (step " in said
    assert f"-m traction.train.evaluate {out} --episodes 20 --video" in said
    assert f"tensorboard --logdir {out / 'tb'}" in said
    for name in ("model.zip", "vecnormalize.pkl", "config.yml", "command.txt",
                 "evaluations.npz"):
        assert (out / name).exists(), name
    config = yaml.safe_load((out / "config.yml").read_text())
    assert config["env_id"] == "Traction/TankTurn-v1" and config["hyperparameters"]["gamma"] == 0.98
    assert config["run"]["n_envs"] == 2 and config["run"]["sim_threads"] == 2
    assert "--timesteps 512" in (out / "command.txt").read_text()
    result = evaluate.main([str(out), "--episodes", "2"])
    assert result["episodes"] == 2 and 0.0 <= result["success_rate"] <= 1.0
    assert json.loads((out / "evaluation.json").read_text()) == result

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(next((out / "tb").iterdir())))
    events.Reload()
    tags = events.Tags()["scalars"]
    assert {"reward_terms/heading", "reward_terms/translation", "reward_terms/hold"} <= set(tags)

    from traction.train import results

    table = results.main([str(out), "--out", str(tmp_path / "curves")])
    assert (tmp_path / "curves" / "run.png").stat().st_size > 1000
    assert "| Traction/TankTurn-v1 | PPO | 512 |" in table

    # the evaluation video plays in real time: one frame per control step of the run's env
    config["env_kwargs"]["control_dt"] = 0.02
    (out / "config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    result = evaluate.evaluate(out, 1, video=True)
    import imageio.v3 as iio

    assert iio.immeta(result["video"])["fps"] == 50.0
    chase = iio.imread(result["video"], index=0)
    capsys.readouterr()
    result = evaluate.main([str(out), "--episodes", "1", "--video", "--camera", "top"])
    top = iio.imread(result["video"], index=0)          # the same first state, seen from above
    assert top.shape == chase.shape and np.abs(top.astype(float) - chase).mean() > 10
    assert "video (episode 1)" in capsys.readouterr().err          # a progress bar meanwhile
    # each frame has the overlay (white text on a dark box in the top-left corner); the last
    # frame is held a second (50 frames at 50 fps) with the episode's outcome
    frames = iio.imread(result["video"])
    corner = frames[0, 5:60, 5:150].astype(float).mean(axis=2)
    assert np.mean(corner > 200) > 0.03 and np.median(corner) < 90
    assert len(frames) == 40 + 50                      # the reset's, 39 steps', the held one
    assert np.abs(frames[-1].astype(float) - frames[-50]).max() < 40   # (codec noise)
    # the outcome line ("success: no (time limit)  (episode over)") at the overlay's foot
    changed = np.abs(frames[-51].astype(float) - frames[-50])[:120, :320].max(axis=2) > 60
    assert np.count_nonzero(changed) > 1000                # new text (measured ~3000 pixels)

    # the observation statistics are read when the run says it normalised, not when a file is there
    seen = []

    def spy(*args, **kwargs):
        seen.append(kwargs["stats"])
        return make_vec(*args, **kwargs)

    make_vec = evaluate.make_vec
    monkeypatch.setattr(evaluate, "make_vec", spy)
    config["run"]["normalize"] = False
    (out / "config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    evaluate.evaluate(out, 1)
    config["run"]["normalize"] = True
    (out / "config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    evaluate.evaluate(out, 1)
    (out / "vecnormalize.pkl").unlink()
    with pytest.raises(ValueError, match="no vecnormalize.pkl, but its config.yml says"):
        evaluate.evaluate(out, 1)
    assert seen == [None, out / "vecnormalize.pkl"]


def test_best_model_is_kept_with_the_statistics_it_was_scored_with(tmp_path):
    """The evaluation callback keeps the best model and the training env's statistics of that
    moment (a later checkpoint's differ); ``evaluate --model best`` reads the two together."""
    import numpy as np
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    out = tmp_path / "run"
    train.main(["--env", "Traction/TankTurn-v1", "--timesteps", "512", "--out", str(out),
                "--hp", "n_envs=2", "--hp", "n_steps=128", "--hp", "batch_size=64",
                "--hp", "eval_freq=128", "--hp", "eval_episodes=1",
                "--env-kwarg", "max_episode_steps=20", "--no-progress"])
    evals = np.load(out / "evaluations.npz")
    best_step = int(evals["timesteps"][np.argmax(evals["results"].mean(axis=1))])  # first max

    def count(path):
        return VecNormalize.load(str(path), DummyVecEnv([lambda: gym.make(
            "Traction/TankTurn-v1")])).obs_rms.count

    # every reset and step observation of the 2 worlds updates the statistics
    assert count(out / "best" / "vecnormalize.pkl") == pytest.approx(2 + best_step, abs=1e-3)
    assert count(out / "vecnormalize.pkl") == pytest.approx(2 + 512, abs=1e-3)
    result = evaluate.main([str(out), "--episodes", "1", "--model", "best"])
    assert result["model"] == "best"
    assert json.loads((out / "best" / "evaluation.json").read_text()) == result
    (out / "best" / "vecnormalize.pkl").unlink()
    with pytest.raises(ValueError, match=r"no best/vecnormalize.pkl, but its config.yml says"):
        evaluate.evaluate(out, 1, model="best")


def test_a_checkpoint_is_evaluated_at_an_equal_budget(tmp_path):
    """``evaluate --at-steps N``: the checkpoint saved at or before N steps, with the statistics
    saved beside it; its result in ``evaluations/checkpoint_<steps>/``; none that early or a
    second model named: refused."""
    out = tmp_path / "run"
    train.main(["--env", "Traction/TankTurn-v1", "--timesteps", "512", "--out", str(out),
                "--hp", "n_envs=2", "--hp", "n_steps=128", "--hp", "batch_size=64",
                "--hp", "checkpoint_freq=256", "--hp", "eval_freq=100000",
                "--env-kwarg", "max_episode_steps=20", "--no-progress"])
    assert sorted(p.name for p in (out / "checkpoints").glob("*.zip")) == [
        "rl_model_256_steps.zip", "rl_model_512_steps.zip"]
    seen = []
    real = evaluate.make_vec

    def spy(*args, stats=None, **kwargs):
        seen.append(stats)
        return real(*args, stats=stats, **kwargs)

    evaluate.make_vec = spy
    try:
        result = evaluate.main([str(out), "--at-steps", "511", "--episodes", "1",
                                "--no-progress"])
    finally:
        evaluate.make_vec = real
    assert result["model"] == "checkpoint at 256 steps" and result["seed"] == 123
    assert seen == [out / "checkpoints" / "rl_model_vecnormalize_256_steps.pkl"]
    kept = out / "evaluations" / "checkpoint_256" / "evaluation.json"
    assert json.loads(kept.read_text()) == result
    with pytest.raises(ValueError, match=r"no checkpoint at or before 100 steps \(saved: 256, 512"):
        evaluate.evaluate(out, 1, model=evaluate.at_steps(100))
    with pytest.raises(SystemExit):
        evaluate.main([str(out), "--at-steps", "512", "--model", "best"])


def test_adapter_time_limit_follows_gym_make():
    """``max_episode_steps``: a number overrides the registered limit; None keeps it, as
    ``gym.make`` does (it once meant no limit at all)."""
    from traction.train.sb3_vec import TractionSB3VecEnv

    for given, expected in ((None, 400), (7, 7)):
        venv = TractionSB3VecEnv("Traction/TankTurn-v1", 1, max_episode_steps=given)
        assert venv.venv.max_episode_steps == expected
        assert gym.make("Traction/TankTurn-v1", max_episode_steps=given).spec.max_episode_steps \
            == expected
        venv.close()


def test_training_uses_the_native_vector_env():
    from stable_baselines3.common.vec_env import VecMonitor

    from traction.train.sb3_vec import TractionSB3VecEnv

    venv = train.make_vec("Traction/TankTurn-v1", {}, 3, 0, normalize=False)
    assert isinstance(venv, VecMonitor) and isinstance(venv.venv, TractionSB3VecEnv)
    assert venv.reset().shape == (3, 9)
    venv.close()


def test_hyperparameters_resolve_default_then_env_then_overrides():
    hp = train.hyperparameters("ppo", "Traction/Climb6x6-v1", {"gamma": 0.9})
    assert hp["n_steps"] == 64 and hp["gamma"] == 0.9 and hp["batch_size"] == 1024


def test_a_shipped_task_named_by_module_and_id_keeps_its_hyperparameters(tmp_path):
    """The file's per-task entry is looked up by the id (by 'module:id' it fell back to the
    default: TankTurn's gamma 0.98 became 0.99)."""
    run = train.prepare("traction.envs:Traction/TankTurn-v1", "ppo", 64, 0, tmp_path / "run",
                        {"n_envs": 1}, {})
    assert run["config"]["hyperparameters"]["gamma"] == 0.98
    assert run["config"]["env_id"] == "traction.envs:Traction/TankTurn-v1"


# ``eval_freq`` counts environment steps over all worlds (train.py divides
# it by ``n_envs`` for SB3's EvalCallback, which counts calls); an evaluation every
# ``eval_freq`` calls (n_envs times rarer) went unseen: no test read the evaluation steps.
def test_evaluations_come_every_eval_freq_environment_steps(tmp_path):
    out = tmp_path / "run"
    train.main(["--env", "Traction/TankTurn-v1", "--algo", "ppo", "--timesteps", "256",
                "--out", str(out), "--hp", "n_envs=4", "--hp", "n_steps=32",
                "--hp", "batch_size=64", "--hp", "n_epochs=1", "--hp", "eval_freq=64",
                "--hp", "eval_episodes=1", "--hp", "checkpoint_freq=1000000",
                "--env-kwarg", "max_episode_steps=10", "--no-progress"])
    evals = np.load(out / "evaluations.npz")
    assert evals["timesteps"].tolist() == [64, 128, 192, 256]


USER_TASK = '''
import gymnasium as gym
from traction.envs.tank_turn_v1 import TankTurnEnv


class UserTank(TankTurnEnv):
    """A user's own task (the shipped one under another name will do here)."""


gym.register("UserTasks/Tank-v0", entry_point=__name__ + ":UserTank", max_episode_steps=400)
'''


def test_your_own_task_trains_and_evaluates_by_module_and_id(tmp_path, monkeypatch):
    """``--env module:Namespace/Name-v0`` imports the module, which registers the id, as
    gym.make does; a registered TractionEnv subclass of your own was refused as 'not a Traction
    environment' (the check read the entry point's module name)."""
    (tmp_path / "user_tasks_for_test.py").write_text(USER_TASK)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "run"
    train.main(["--env", "user_tasks_for_test:UserTasks/Tank-v0", "--timesteps", "128",
                "--out", str(out), "--hp", "n_envs=2", "--hp", "n_steps=64",
                "--hp", "batch_size=64", "--hp", "eval_freq=64", "--hp", "eval_episodes=1",
                "--env-kwarg", "max_episode_steps=20", "--no-progress"])
    assert evaluate.main([str(out), "--episodes", "1"])["episodes"] == 1
    with pytest.raises(ValueError, match="cannot import 'no_such_module'"):
        train.check_env("no_such_module:UserTasks/Tank-v0", {})


def test_a_run_folder_evaluates_anywhere_after_its_vehicle_file_is_deleted(tmp_path,
                                                                          monkeypatch, capsys):
    """A run trained with --env-kwarg vehicle=<relative path> kept the path: from another
    folder its evaluation failed (cannot read vehicle file), and editing the file after training
    changed what was evaluated. The run keeps the file's text and evaluates from that."""
    import shutil
    from importlib import resources

    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    text = (resources.files("traction.vehicle_model") / "presets" / "tank.toml").read_text()
    (work / "my_tank.toml").write_text(text.replace('name = "tank"', 'name = "my_tank"'))
    monkeypatch.chdir(work)
    train.main(["--env", "Traction/TankTurn-v1", "--timesteps", "128", "--out", "run",
                "--hp", "n_envs=2", "--hp", "n_steps=64", "--hp", "batch_size=64",
                "--hp", "eval_freq=64", "--hp", "eval_episodes=1",
                "--env-kwarg", "vehicle=my_tank.toml", "--env-kwarg", "max_episode_steps=20",
                "--no-progress"])
    config = yaml.safe_load((work / "run" / "config.yml").read_text())
    assert config["kept"] == {"vehicle": "vehicle.toml", "vehicle_source": "my_tank.toml",
                              "vehicle_name": "my_tank"}
    assert (work / "run" / "vehicle.toml").read_text() == (work / "my_tank.toml").read_text()
    shutil.move(work / "run", elsewhere / "moved")
    (work / "my_tank.toml").unlink()
    monkeypatch.chdir(tmp_path)
    seen = []
    make_vec = evaluate.make_vec
    monkeypatch.setattr(evaluate, "make_vec", lambda *a, **k: seen.append(a[1]) or
                        make_vec(*a, **k))
    result = evaluate.main([str(elsewhere / "moved"), "--episodes", "1", "--no-progress"])
    assert result["episodes"] == 1 and seen[0]["vehicle"].name == "my_tank"
    (elsewhere / "moved" / "vehicle.toml").unlink()           # a short error, no traceback
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        evaluate.main([str(elsewhere / "moved"), "--episodes", "1"])
    assert exit_info.value.code == 2
    assert "no vehicle.toml (No such file or directory), but its config.yml says the run kept " \
           "its vehicle there" in capsys.readouterr().err


def test_a_run_of_your_own_task_evaluates_from_another_folder(tmp_path, monkeypatch):
    """--env my_module:Id ran from the module's folder: evaluating from anywhere else ended in a
    traceback (cannot import 'my_module'). The run keeps a copy of the module and imports it."""
    import shutil
    import subprocess
    import sys

    work = tmp_path / "work"
    work.mkdir()
    (work / "user_tasks_elsewhere.py").write_text(USER_TASK.replace("UserTasks/Tank-v0",
                                                                    "UserTasks/TankAway-v0"))
    monkeypatch.syspath_prepend(str(work))
    train.main(["--env", "user_tasks_elsewhere:UserTasks/TankAway-v0", "--timesteps", "64",
                "--out", str(work / "run"), "--hp", "n_envs=1", "--hp", "n_steps=64",
                "--hp", "batch_size=64", "--hp", "eval_freq=64", "--hp", "eval_episodes=1",
                "--env-kwarg", "max_episode_steps=10", "--no-progress"])
    assert (work / "run" / "task" / "user_tasks_elsewhere.py").read_text() == \
        (work / "user_tasks_elsewhere.py").read_text()
    shutil.move(work / "run", tmp_path / "moved")
    shutil.rmtree(work)
    run = subprocess.run([sys.executable, "-m", "traction.train.evaluate", str(tmp_path / "moved"),
                          "--episodes", "1", "--no-progress"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["episodes"] == 1
    shutil.rmtree(tmp_path / "moved" / "task")                    # a short error, no traceback
    run = subprocess.run([sys.executable, "-m", "traction.train.evaluate", str(tmp_path / "moved"),
                          "--episodes", "1"], capture_output=True, text=True, cwd=tmp_path,
                         timeout=600)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "cannot import 'user_tasks_elsewhere'" in run.stderr
    assert "its copy, task/, is missing" in run.stderr


def test_training_says_its_out_default_and_warns_when_it_will_not_evaluate(tmp_path, capsys,
                                                                          caplog):
    with pytest.raises(SystemExit):
        train.main(["--help"])
    assert "runs/<env name>_<algo>_<seed>" in " ".join(capsys.readouterr().out.split())
    train.prepare("Traction/TankTurn-v1", "ppo", 500, 0, tmp_path / "run", {"n_envs": 1}, {})
    assert "--timesteps 500 is below eval_freq 20000: the run will not be evaluated" in caplog.text
    caplog.clear()
    train.prepare("Traction/TankTurn-v1", "ppo", 500, 0, tmp_path / "run2",
                  {"n_envs": 1, "eval_freq": 500}, {})
    assert "eval_freq" not in caplog.text
    assert "no evaluation ran" in train.summary(tmp_path)
