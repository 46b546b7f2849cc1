"""Bad command-line input ends with an argparse error (exit 2) naming the argument and what is
allowed, before any work or file writing; missing optional extras are named up front."""

import argparse
import importlib.util
import json
import sys

import gymnasium as gym
import numpy as np
import pytest
import yaml

from traction.scenes.export import parse_assignment
from traction.train import benchmark, demo, evaluate, perf, plot_tires, results, soak, train

#: tests that build Stable-Baselines3 models or need it installed (the train extra, which `make
#: test-pythons` leaves out on the Pythons it adds)
needs_sb3 = pytest.mark.skipif(importlib.util.find_spec("stable_baselines3") is None,
                               reason="needs stable-baselines3 (the train extra)")

TANK = ["--env", "Traction/TankTurn-v1", "--no-progress"]
TRAIN_BAD = [
    (["--env", "Traction/Nope-v0"], "--env 'Traction/Nope-v0': not a registered environment; "
     "allowed: Traction/Climb6x6-v1"),
    (["--env", "CartPole-v1"], "--env 'CartPole-v1': not a Traction environment"),
    (TANK + ["--hp", "bogus=1"], "--hp bogus: not a PPO hyperparameter; allowed: batch_size"),
    (TANK + ["--algo", "sac", "--hp", "clip_range=0.1"], "--hp clip_range: not a SAC hyperparameter"),
    (TANK + ["--hp", "n_envs=0"], "--hp n_envs = 0; allowed: an integer >= 1"),
    (TANK + ["--hp", "n_envs=-2"], "--hp n_envs = -2; allowed: an integer >= 1"),
    (TANK + ["--hp", "normalize=maybe"], "--hp normalize = 'maybe'; allowed: true, false"),
    (TANK + ["--hp", "policy_kwargs=dict(net_arch="], "--hp policy_kwargs"),
    (TANK + ["--hp", "policy_kwargs=dict(net_arc=[64])"], "--hp: ActorCriticPolicy.__init__() "
     "got an unexpected keyword argument 'net_arc'"),
    (TANK + ["--hp", "n_steps=abc"], "--hp n_steps = 'abc'; allowed: an integer >= 1"),
    (TANK + ["--hp", "n_epochs=0"], "--hp n_epochs = 0; allowed: an integer >= 1"),
    (TANK + ["--hp", "batch_size=64.5"], "--hp batch_size = 64.5; allowed: an integer >= 1"),
    (TANK + ["--hp", "gamma=2"], "--hp gamma = 2; allowed: [0, 1]"),
    (TANK + ["--hp", "gae_lambda=1.5"], "--hp gae_lambda = 1.5; allowed: [0, 1]"),
    (TANK + ["--env-kwarg", "telemetry=5"], "--env-kwarg telemetry: training steps a native "
     "vector env, which records no telemetry"),
    (TANK + ["--hp", "max_grad_norm=0"], "--hp max_grad_norm = 0; allowed: > 0"),
    (TANK + ["--hp", "learning_rate=0"], "--hp learning_rate = 0; allowed: > 0"),
    (TANK + ["--algo", "sac", "--hp", "buffer_size=0"], "--hp buffer_size = 0; allowed: an integer >= 1"),
    (TANK + ["--algo", "sac", "--hp", "tau=1.5"], "--hp tau = 1.5; allowed: [0, 1]"),
    (TANK + ["--algo", "sac", "--hp", "train_freq=0"], "--hp train_freq = 0; allowed: an integer "
     ">= 1 or [n, step] / [n, episode]"),
    (TANK + ["--algo", "sac", "--hp", "train_freq=[1, 'hour']"], "--hp train_freq = [1, 'hour']"),
    (TANK + ["--algo", "sac", "--hp", "gradient_steps=0"], "--hp gradient_steps = 0; allowed: an "
     "integer >= 1, or -1"),
    (TANK + ["--algo", "sac", "--hp", "ent_coef=-1.0"], "--hp ent_coef = -1.0; allowed: >= 0 (or "
     "auto, auto_<start>)"),
    (TANK + ["--algo", "sac", "--hp", "target_update_interval=0"], "--hp target_update_interval = 0"),
    (TANK + ["--hp", "ent_coef=abc"], "--hp ent_coef = 'abc'; allowed: >= 0"),
    (TANK + ["--hp", "stats_window_size=abc"], "--hp stats_window_size = 'abc'; allowed: a number "
     "(default 100)"),
    (TANK + ["--hp", "ent_coef=-0.1"], "--hp ent_coef = -0.1; allowed: >= 0"),
    (TANK + ["--hp", "target_kl=abc"], "--hp target_kl = 'abc'; allowed: > 0"),
    (TANK + ["--hp", "clip_range=-1"], "--hp clip_range = -1; allowed: > 0"),
    (TANK + ["--hp", "device=foo"], "--hp device = 'foo'; allowed: auto, cpu, cuda, cuda:N"),
    (TANK + ["--env-kwarg", "bogus=1"], "--env-kwarg bogus: not an argument of Traction/TankTurn-v1"),
    (TANK + ["--env-kwarg", "drive_mode=bogus"], "drive_mode = 'bogus'; allowed: special, standard"),
    (TANK + ["--algo", "sac", "--hp", "action_noise=normal"], "--hp action_noise = 'normal': takes "
     "an ActionNoise object, which a hyperparameter file or --hp cannot give; allowed: null"),
    (TANK + ["--hp", "rollout_buffer_class=DictRolloutBuffer"], "--hp rollout_buffer_class"),
    (TANK + ["--algo", "sac", "--hp", "train_freq=[1, episode]"], "--hp train_freq = [1, 'episode'] "
     "with n_envs = 2: SB3 trains per episode with one env only; allowed: n_envs=1, or [n, step]"),
    (TANK + ["--seed", "-1"], "argument --seed: '-1'; allowed: an integer in [0, 4294967295]"),
    (TANK + ["--seed", "4294967296"], "argument --seed: '4294967296'; allowed: an integer in"),
    (TANK + ["--threads", "0"], "argument --threads: '0'; allowed: an integer >= 1"),
    (TANK + ["--timesteps", "-5"], "argument --timesteps: '-5'; allowed: an integer >= 1"),
    (TANK + ["--timesteps", "0"], "argument --timesteps: '0'; allowed: an integer >= 1"),
]


def _usage_error(capsys, main, argv) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("argv, message", TRAIN_BAD, ids=[" ".join(a[-2:]) for a, _ in TRAIN_BAD])
@needs_sb3
def test_train_refuses_bad_input_before_writing(tmp_path, capsys, argv, message):
    out = tmp_path / "run"
    assert message in _usage_error(capsys, train.main, argv + ["--out", str(out)])
    assert not out.exists()


def test_train_refuses_a_folder_holding_an_earlier_run(tmp_path, capsys):
    """Only the files a new run writes would be replaced: evaluate and results would read the
    earlier run's statistics and curves as this one's."""
    out = tmp_path / "run"
    out.mkdir()
    (out / "evaluations.npz").write_bytes(b"old")
    err = _usage_error(capsys, train.main, TANK + ["--out", str(out)])
    assert f"--out {out}: not empty (an earlier run's files would mix with this run's)" in err
    assert [p.name for p in out.iterdir()] == ["evaluations.npz"]


@pytest.mark.parametrize("override", [{}, {"train_freq": [1, "episode"], "n_envs": 1},
                                      {"train_freq": [4, "step"]}, {"gradient_steps": -1},
                                      {"ent_coef": "auto_0.1"}, {"ent_coef": 0.05}])
@needs_sb3
def test_train_sac_forms_of_its_arguments_are_accepted(override):
    hp = train.hyperparameters("sac", "Traction/TankTurn-v1", override)
    run, algo_hp = train.split_hyperparameters("sac", hp)
    expected = {k: tuple(v) if k == "train_freq" else v for k, v in override.items()
                if k != "n_envs"}                       # SB3 takes train_freq as a tuple only
    assert algo_hp.items() >= expected.items()


@needs_sb3
def test_train_sac_episodic_train_freq_builds_and_learns(tmp_path):
    """The list form a YAML file gives reaches SB3 as the tuple it asserts on."""
    overrides = dict([train.assignment("train_freq=[1, episode]"), train.assignment("n_envs=1"),
                      train.assignment("learning_starts=0"), train.assignment("batch_size=8")])
    p = train.prepare("Traction/TankTurn-v1", "sac", 16, 0, tmp_path / "run", overrides,
                      {"max_episode_steps": 5})
    p["model"].learn(12)
    assert p["model"].train_freq.unit.value == "episode" and p["model"].num_timesteps >= 12


def test_hp_and_env_kwarg_values_read_as_in_the_yaml_files():
    read = dict(train.assignment(t) for t in ("a=1e-4", "b=[1, episode]", "c=false", "d=null",
                                              "e={x: 1}", "f=[64, 64]", "g=[oops", "h=text",
                                              "i={eps: 1e-5, n: [2E3, .5, 7]}"))
    assert read == {"a": 1e-4, "b": [1, "episode"], "c": False, "d": None, "e": {"x": 1},
                    "f": [64, 64], "g": "[oops", "h": "text", "i": {"eps": 1e-5, "n": [2e3, 0.5, 7]}}
    assert train.hyperparameters("ppo", "Traction/Drift-v1", {})["learning_rate"] == 3e-4


@pytest.mark.parametrize("text", ["policy_kwargs=dict(net_arch=[32], activation_fn=nn.Tanh)",
                                  "policy_kwargs={net_arch: [32], activation_fn: nn.Tanh, "
                                  "optimizer_kwargs: {eps: 1e-5}}"])
@needs_sb3
def test_policy_kwargs_as_python_or_a_yaml_mapping_build_the_policy(tmp_path, text):
    import torch

    p = train.prepare("Traction/TankTurn-v1", "ppo", 64, 0, tmp_path / "run",
                      dict([train.assignment(text), train.assignment("n_envs=1")]), {})
    policy = p["model"].policy
    assert policy.activation_fn is torch.nn.Tanh and policy.net_arch == [32]


@pytest.mark.parametrize("text, message", [
    ("policy_kwargs=[64, 64]", "--hp policy_kwargs = [64, 64]; allowed: a dict"),
    ("policy_kwargs={activation_fn: nn.Nope}", "--hp policy_kwargs activation_fn = 'nn.Nope': "
     "module 'torch.nn' has no attribute 'Nope'")])
@needs_sb3
def test_policy_kwargs_that_are_no_dict_are_refused_by_name(tmp_path, capsys, text, message):
    err = _usage_error(capsys, train.main, TANK + ["--hp", text, "--out", str(tmp_path / "r")])
    assert message in err


@needs_sb3
def test_train_refuses_human_rendering_without_a_display(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(train, "display_available", lambda: False)
    err = _usage_error(capsys, train.main, TANK + ["--env-kwarg", "render_mode=human", "--out",
                                                   str(tmp_path / "run")])
    assert "--env-kwarg render_mode=human: needs a display" in err
    assert not (tmp_path / "run").exists()


@needs_sb3
def test_train_hp_none_is_allowed_where_sb3_defaults_to_none():
    hp = train.hyperparameters("ppo", "Traction/TankTurn-v1", {"target_kl": None,
                                                              "device": "auto"})
    run, algo_hp = train.split_hyperparameters("ppo", hp)
    assert algo_hp["target_kl"] is None and algo_hp["device"] == "auto"


def test_train_function_refuses_non_positive_timesteps(tmp_path):
    with pytest.raises(ValueError, match="--timesteps = 0; allowed: an integer >= 1"):
        train.train("Traction/TankTurn-v1", "ppo", 0, 0, tmp_path / "run", {}, {})
    assert not (tmp_path / "run").exists()


@needs_sb3
def test_hp_normalize_false_switches_normalisation_off():
    overrides = dict([parse_assignment("normalize=false"), parse_assignment("gamma=0.9")])
    hp = train.hyperparameters("ppo", "Traction/TankTurn-v1", overrides)
    run, algo_hp = train.split_hyperparameters("ppo", hp)
    assert run["normalize"] is False and algo_hp["gamma"] == 0.9
    assert "normalize" not in algo_hp and isinstance(algo_hp["policy_kwargs"], dict)


@needs_sb3
def test_evaluate_refuses_a_config_without_its_keys_and_a_missing_best_model(tmp_path, capsys):
    (tmp_path / "model.zip").write_bytes(b"")
    (tmp_path / "config.yml").write_text("env_id: Traction/TankTurn-v1\nalgo: ppo\n")
    err = _usage_error(capsys, evaluate.main, [str(tmp_path)])
    assert f"run folder {tmp_path}: config.yml has no env_kwargs, run" in err
    (tmp_path / "config.yml").write_text("env_id: Traction/TankTurn-v1\nalgo: ppo\nenv_kwargs: {}\n"
                                         "run: {normalize: true}\n")
    err = _usage_error(capsys, evaluate.main, [str(tmp_path), "--model", "best"])
    assert f"run folder {tmp_path}: no best/best_model.zip" in err
    err = _usage_error(capsys, evaluate.main, [str(tmp_path)])
    assert "no vecnormalize.pkl, but its config.yml says" in err
    (tmp_path / "model.zip").unlink()             # an interrupted run: its best model only
    (tmp_path / "best").mkdir()
    (tmp_path / "best" / "best_model.zip").write_bytes(b"")
    err = _usage_error(capsys, evaluate.main, [str(tmp_path)])
    assert "no model.zip (not a finished training run" in err and "--model best" in err
    err = _usage_error(capsys, evaluate.main, [str(tmp_path), "--model", "best"])
    assert "no best/vecnormalize.pkl" in err and "use --model final" in err


@needs_sb3
def test_evaluate_refuses_a_run_rendering_to_a_window_without_a_display(tmp_path, capsys,
                                                                        monkeypatch):
    monkeypatch.setattr(evaluate, "display_available", lambda: False)
    (tmp_path / "model.zip").write_bytes(b"")
    (tmp_path / "config.yml").write_text("env_id: Traction/TankTurn-v1\nalgo: ppo\n"
                                         "env_kwargs: {render_mode: human}\n"
                                         "run: {normalize: false}\n")
    err = _usage_error(capsys, evaluate.main, [str(tmp_path)])
    assert "render to a window (render_mode: human) and there is no display" in err


@needs_sb3
def test_evaluate_refuses_a_missing_run_folder(tmp_path, capsys):
    err = _usage_error(capsys, evaluate.main, [str(tmp_path / "nope")])
    assert f"run folder {tmp_path / 'nope'}: not found" in err
    err = _usage_error(capsys, evaluate.main, [str(tmp_path)])
    assert "no config.yml" in err


@pytest.mark.parametrize("episodes", ["0", "-3"])
def test_evaluate_refuses_non_positive_episodes(tmp_path, capsys, episodes):
    err = _usage_error(capsys, evaluate.main, [str(tmp_path), "--episodes", episodes])
    assert f"argument --episodes: '{episodes}'; allowed: an integer >= 1" in err
    with pytest.raises(ValueError, match="--episodes = 0; allowed"):
        evaluate.evaluate(tmp_path, 0)
    assert not (tmp_path / "evaluation.json").exists()


@needs_sb3
def test_evaluate_video_without_imageio_fails_before_the_episodes(tmp_path, capsys, monkeypatch):
    (tmp_path / "config.yml").write_text("env_id: Traction/TankTurn-v1\nalgo: ppo\nenv_kwargs: {}\n"
                                         "run: {normalize: false}\n")
    (tmp_path / "model.zip").write_bytes(b"")
    monkeypatch.setitem(sys.modules, "imageio", None)
    err = _usage_error(capsys, evaluate.main, [str(tmp_path), "--video"])
    assert "evaluate needs imageio" in err and '".[render]"' in err


def test_evaluate_camera_goes_with_video_and_is_checked_first(tmp_path, capsys):
    """--camera without --video was ignored without a word; an unknown camera given to
    evaluate() ran its episodes when there was no video, and raised after building the env
    when there was."""
    (tmp_path / "config.yml").write_text("env_id: Traction/TankTurn-v1\nalgo: ppo\nenv_kwargs: {}\n"
                                         "run: {normalize: false}\n")
    (tmp_path / "model.zip").write_bytes(b"")
    err = _usage_error(capsys, evaluate.main, [str(tmp_path), "--camera", "top"])
    assert "--camera goes with --video" in err
    for video in (False, True):
        with pytest.raises(ValueError, match=r"camera = 'front'; allowed: chase, top, driver, overhead"):
            evaluate.evaluate(tmp_path, 1, video=video, camera="front")


class _AutoresetVenv:
    """An SB3-style vector env of one world with same-step autoreset: episodes of 3 steps; a
    rendered frame is filled with (episode, step)."""

    def __init__(self):
        self.episode, self.t = 0, 0
        self.envs = [self]

    def reset(self):
        return np.zeros((1, 2))

    def render(self):
        return np.array([self.episode, self.t])

    def step(self, action):
        self.t += 1
        done = self.t == 3
        if done:                                        # reset within the step
            self.episode, self.t = self.episode + 1, 0
        return np.zeros((1, 2)), np.ones(1), np.array([done]), [{"is_success": done}]


class _Model:
    def predict(self, obs, deterministic):
        return np.zeros((1, 2)), None


class _Recorder:
    """Records what the evaluation hands a video: a frame at the start and after each step of
    the first episode, then its end (with the step's reward, the return and the info)."""

    def __init__(self, venv):
        self.venv, self.frames, self.ended = venv, [], None

    def start(self, progress):
        self.frames.append(tuple(self.venv.render()))

    def frame(self, reward, total, info):
        self.frames.append(tuple(self.venv.render()))

    def end(self, reward, total, info):
        self.ended = (reward, total, info["is_success"])


def test_evaluation_video_holds_only_the_first_episode():
    venv = _AutoresetVenv()
    video = _Recorder(venv)
    returns, successes = evaluate._episodes(venv, _Model(), 2, video)
    assert returns == [3.0, 3.0] and successes == [True, True]
    assert video.frames == [(0, 0), (0, 1), (0, 2)] and video.ended == (1.0, 3.0, True)


def test_benchmark_without_matplotlib_fails_before_the_episodes(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    err = _usage_error(capsys, benchmark.main, ["--out", str(tmp_path / "bench")])
    assert "benchmark needs matplotlib" in err and '".[plot]"' in err
    from traction.train import policy, suites

    with pytest.raises(ImportError, match="benchmark needs matplotlib"):
        benchmark.run(policy.SCRIPTED, suites.SUITES["quick"], list(suites.VARIANTS),
                      tmp_path / "bench", progress=False)
    assert not (tmp_path / "bench").exists()


@pytest.mark.parametrize("main, argv", [(plot_tires.main, ["sedan"]), (results.main, ["run"])])
def test_plot_tools_without_matplotlib_name_the_plot_extra(tmp_path, capsys, monkeypatch,
                                                           main, argv):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert '".[plot]"' in _usage_error(capsys, main, argv + ["--out", str(tmp_path / "o")])
    assert not (tmp_path / "o").exists()


def test_perf_checks_out_before_measuring(capsys):
    err = _usage_error(capsys, perf.main, ["--quick", "--out", "/dev/null/perf"])
    assert "--out /dev/null/perf: not a writable folder" in err


@pytest.mark.parametrize("argv, message", [
    (["--steps", "0"], "argument --steps: '0'; allowed: an integer >= 1"),
    (["--steps", "-5"], "argument --steps: '-5'; allowed: an integer >= 1"),
    (["--episode-steps", "0"], "argument --episode-steps: '0'; allowed: an integer >= 1"),
    (["--out", "/dev/null/soak.json"], "--out /dev/null/soak.json: folder /dev/null: not a "
                                       "writable folder"),
])
def test_soak_refuses_bad_input_before_running(capsys, argv, message):
    assert message in _usage_error(capsys, soak.main, argv)


def test_soak_refuses_a_folder_as_out_and_bad_counts(tmp_path, capsys):
    assert f"--out {tmp_path}: is a folder" in _usage_error(capsys, soak.main,
                                                             ["--out", str(tmp_path)])
    with pytest.raises(ValueError, match="--steps = 0; allowed: an integer >= 1"):
        soak.soak(0)
    with pytest.raises(ValueError, match="--episode-steps = 0; allowed: an integer >= 1"):
        soak.soak(10, episode_steps=0)


@needs_sb3
def test_prepare_builds_envs_and_model_but_writes_nothing(tmp_path):
    from stable_baselines3.common.vec_env import VecNormalize

    overrides = dict([parse_assignment("normalize=false"), parse_assignment("n_envs=1")])
    p = train.prepare("Traction/TankTurn-v1", "ppo", 64, 0, tmp_path / "run", overrides, {})
    try:
        assert p["run"]["normalize"] is False and not isinstance(p["venv"], VecNormalize)
        assert list(tmp_path.iterdir()) == []
    finally:
        p["venv"].close()
        p["eval_env"].close()


@pytest.mark.parametrize("algo, overrides, gamma", [
    ("ppo", {}, 0.98),                                   # TankTurn's entry in ppo.yml
    ("ppo", {"gamma": 0.9}, 0.9),                        # --hp gamma=0.9
    ("sac", {}, 0.99)])                                  # sac.yml's default
@needs_sb3
def test_vec_normalize_discounts_rewards_with_the_algorithms_gamma(tmp_path, algo, overrides,
                                                                   gamma):
    """VecNormalize scales rewards by the spread of a running discounted return: its discount
    must be the one the algorithm learns with (RL Zoo passes it), in training and evaluation."""
    overrides = {"n_envs": 1, **overrides}
    p = train.prepare("Traction/TankTurn-v1", algo, 64, 0, tmp_path / "run", overrides, {})
    try:
        assert p["model"].gamma == gamma
        assert p["venv"].gamma == gamma and p["eval_env"].gamma == gamma
    finally:
        p["venv"].close()
        p["eval_env"].close()


def test_train_refuses_an_out_it_cannot_create_before_building_anything(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    err = _usage_error(capsys, train.main, TANK + ["--out", str(blocker / "run")])
    assert f"--out {blocker / 'run'}: {blocker} is not a folder; allowed: a writable folder" in err
    err = _usage_error(capsys, train.main, TANK + ["--out", str(blocker)])
    assert f"--out {blocker}: is not a folder" in err
    assert list(tmp_path.iterdir()) == [blocker]


def test_results_refuses_a_run_without_evaluations_before_any_output(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yml").write_text("env_id: Traction/TankTurn-v1\nalgo: ppo\n")
    err = _usage_error(capsys, results.main, [str(run), "--out", str(tmp_path / "curves")])
    assert f"{run}: no evaluations.npz" in err and not (tmp_path / "curves").exists()


@pytest.mark.parametrize("main, argv", [(plot_tires.main, ["sedan"]), (demo.main, [])])
def test_an_out_that_is_a_file_is_a_usage_error(tmp_path, capsys, main, argv):
    f = tmp_path / "afile"
    f.write_text("x")
    err = _usage_error(capsys, main, argv + ["--out", str(f)])
    assert f"--out {f}: not a writable folder" in err


def test_results_names_each_run_png_apart_when_run_folders_share_a_name(tmp_path):
    runs = [tmp_path / "a" / "ppo", tmp_path / "b" / "ppo", tmp_path / "c" / "sac"]
    names = results.png_names(runs + [runs[0]])
    assert [names[r] for r in runs] == ["a_ppo.png", "b_ppo.png", "sac.png"]
    assert results.png_names([tmp_path / "x" / "run" / "ppo", tmp_path / "y" / "run" / "ppo"]) \
        == {tmp_path / "x" / "run" / "ppo": "x_run_ppo.png", tmp_path / "y" / "run" / "ppo": "y_run_ppo.png"}
    clash = [tmp_path / "r" / "a_b", tmp_path / "r" / "a" / "b", tmp_path / "r" / "b"]
    names = results.png_names(clash)
    assert len(set(names.values())) == 3 and names[clash[0]] == "a_b.png"
    assert names[clash[1]] == "a_b-2.png" and names[clash[2]] == "r_b.png"


class _ThreeSteps(gym.Env):
    """Episodes of 3 steps, reward 1 each, success at the end."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        return np.zeros(2, np.float32), 1.0, self.t == 3, False, {"is_success": self.t == 3}


@needs_sb3
def test_evaluation_returns_are_the_task_rewards_not_the_normalised_ones():
    """Under a VecNormalize that scales rewards (here by 1 / sqrt(100)), the evaluation sums the
    rewards the task gave (3 per episode), as the results and the scripted baselines do."""
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    venv = VecNormalize(DummyVecEnv([_ThreeSteps]), norm_obs=False, norm_reward=True,
                        training=False)
    venv.ret_rms.var = np.array(100.0)
    returns, successes = evaluate._episodes(venv, _Model(), 2)
    assert returns == [3.0, 3.0] and successes == [True, True]


# In the command-line helpers: NAME= with no value, and the results
# table's best-evaluation column.
@pytest.mark.parametrize("text", ["lr=", "=1", "lr", ""])
def test_an_assignment_without_a_name_or_a_value_is_refused(text):
    """``NAME=VALUE`` needs both sides: ``--hp learning_rate=`` is a usage error, not the
    empty text (which the hyperparameter or knob checks would then report as a bad value, or
    not at all for a text-valued argument)."""
    with pytest.raises(argparse.ArgumentTypeError, match="use NAME=VALUE"):
        parse_assignment(text)


def test_results_row_reports_the_best_and_the_final_evaluation(tmp_path):
    """The table's 'best eval success' is the highest success rate over training's evaluations
    (not the last one), 'final eval success' and 'final mean return' come from
    evaluation.json."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yml").write_text(yaml.safe_dump({"env_id": "Traction/TankTurn-v1",
                                                    "algo": "ppo"}))
    np.savez(run / "evaluations.npz", timesteps=np.array([1000, 2000, 3000]),
             results=np.array([[1.0, 2.0], [3.0, 5.0], [0.0, 1.0]]),
             successes=np.array([[0.0, 1.0], [1.0, 1.0], [0.0, 0.0]]))
    (run / "evaluation.json").write_text(json.dumps({"success_rate": 0.25, "mean_return": 1.5}))
    assert results.row(run) == "| Traction/TankTurn-v1 | PPO | 3000 | 100 % | 25 % | 1.5 |"
    c = results.curves(run)
    np.testing.assert_allclose(c["return"], [1.5, 4.0, 0.5])
    np.testing.assert_allclose(c["success"], [0.5, 1.0, 0.0])
