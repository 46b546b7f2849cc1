"""Train a Stable-Baselines3 agent on a Traction environment::

    python -m traction.train.train --env Traction/TankTurn-v0 --algo ppo --timesteps 300000 \\
        --seed 0 --out runs/tank_ppo [--hp learning_rate=1e-4] [--env-kwarg drive_mode=standard]

Hyperparameters come from ``train/hyperparams/<algo>.yml`` (``default`` entry, then the env id's
entry if there is one, then ``--hp`` overrides; values are read as in the YAML files, so
``--hp normalize=false`` is False). The run folder is self-describing: ``model.zip``,
``vecnormalize.pkl`` (observation/reward statistics), ``config.yml`` (everything resolved),
``command.txt``, ``evaluations.npz`` (EvalCallback: returns and success rates), ``best/`` (the
model the evaluations scored best, ``best_model.zip``, with the statistics it was scored with,
``vecnormalize.pkl``; ``evaluate --model best`` reads them), ``checkpoints/`` and ``tb/``
(TensorBoard, including every ``reward_<term>`` as ``reward_terms/<term>``).

Everything is checked, and the environments and the model are built, before the run folder is
written: a bad environment id, argument or hyperparameter ends with a usage error naming it.

Training switches MuJoCo's stage timers off in its process (:func:`traction.envs.mujoco_timers`:
nothing reads them, and their clock reads cost 4-17 % of an env step).
"""

from __future__ import annotations

import argparse
import inspect
import math
import shlex
import sys
from importlib import resources
from pathlib import Path

import gymnasium as gym
import yaml

import traction.envs  # registers the ids
from traction.envs.base import display_available
from traction.scenes.export import parse_assignment
from traction.train.checks import MissingExtra, int_at_least, new_run_dir, positive_int_arg, require, seed_arg
from traction.vehicle_model.params import check_number

ALGOS = ("ppo", "sac")
#: Run settings in the hyperparameter files (not algorithm arguments) -> smallest allowed value;
#: ``normalize`` is a bool.
RUN_MINIMUM = {"n_envs": 1, "sim_threads": 1, "eval_freq": 1, "eval_episodes": 1,
               "checkpoint_freq": 1}
RUN_KEYS = {*RUN_MINIMUM, "normalize"}
#: Numeric algorithm arguments -> (lowest, highest or None, kind: True an integer, False a real
#: number, OPEN a real number above the lowest), checked before SB3 sees them: out of range, SB3
#: crashes after the first rollout (``n_epochs = 0``: no update ran) or trains on nonsense
#: without a word (``gamma = 2``). None passes where SB3's default is None; other keys go to
#: SB3 unchecked (text where SB3's default is a number is refused).
OPEN = "open"
ALGO_RANGES = {
    "ppo": {"n_steps": (1, None, True), "batch_size": (1, None, True), "n_epochs": (1, None, True),
            "gamma": (0, 1, False), "gae_lambda": (0, 1, False), "ent_coef": (0, None, False),
            "vf_coef": (0, None, False), "clip_range": (0, None, OPEN),
            "clip_range_vf": (0, None, OPEN), "target_kl": (0, None, OPEN),
            "max_grad_norm": (0, None, OPEN)},
    "sac": {"buffer_size": (1, None, True), "batch_size": (1, None, True),
            "learning_starts": (0, None, True), "gamma": (0, 1, False), "tau": (0, 1, False),
            "target_update_interval": (1, None, True)},
}
#: Algorithm constructor arguments that take a Python object, which neither a YAML file nor
#: ``--hp`` can give (None, their default, passes).
OBJECT_ARGS = {"action_noise": "an ActionNoise", "replay_buffer_class": "a ReplayBuffer class",
               "rollout_buffer_class": "a RolloutBuffer class"}
#: Algorithm constructor arguments that training sets itself.
SET_BY_TRAIN = {"self", "env", "seed", "verbose", "tensorboard_log", "_init_setup_model"}


def hyperparameters(algo: str, env_id: str, overrides: dict) -> dict:
    """Resolved hyperparameters: YAML ``default``, then ``env_id``'s entry, then overrides."""
    text = (resources.files("traction.train") / "hyperparams" / f"{algo}.yml").read_text()
    table = yaml.safe_load(text)
    hp = {**table.get("default", {}), **table.get(env_id, {}), **overrides}
    return hp


def assignment(text: str) -> tuple[str, object]:
    """argparse type of ``--hp`` and ``--env-kwarg``: ``NAME=VALUE`` read as
    :func:`~traction.scenes.export.parse_assignment` reads it (numbers such as ``1e-4``, which
    YAML 1.1 reads as text, Python literals, YAML's true/false/null), and a YAML flow list or
    mapping (``[1, episode]``) as YAML reads it."""
    key, value = parse_assignment(text)
    if isinstance(value, str) and value[:1] in "[{":
        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError:
            pass
    return key, value


def check_env(env_id: str, env_kwargs: dict) -> None:
    """``env_id`` is a registered Traction environment (the SB3 adapter runs Traction's native
    vector environment) and every key of ``env_kwargs`` is one of its arguments.

    Raises:
        ValueError: naming the id or argument and what is allowed.
    """
    allowed_ids = ", ".join(traction.envs.ENV_IDS)
    if env_id not in gym.registry:
        raise ValueError(f"--env {env_id!r}: not a registered environment; allowed: {allowed_ids}")
    spec = gym.spec(env_id)
    if not str(spec.entry_point).startswith("traction.envs"):
        raise ValueError(f"--env {env_id!r}: not a Traction environment (training runs Traction's "
                         f"native vector environment); allowed: {allowed_ids}")
    if env_kwargs.get("render_mode") == "human" and not display_available():
        raise ValueError("--env-kwarg render_mode=human: needs a display (DISPLAY and "
                         "WAYLAND_DISPLAY are unset); allowed here: rgb_array, or leave it out")
    from gymnasium.envs.registration import load_env_creator

    params = inspect.signature(load_env_creator(spec.entry_point)).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    allowed = sorted({*params, "max_episode_steps"} - {"self"})
    for key in env_kwargs:
        if key not in allowed:
            raise ValueError(f"--env-kwarg {key}: not an argument of {env_id}; allowed: "
                             f"{', '.join(allowed)}")


def split_hyperparameters(algo: str, hp: dict) -> tuple[dict, dict]:
    """Check resolved hyperparameters and split them into run settings and the algorithm's
    constructor arguments (``policy_kwargs`` text evaluated).

    Raises:
        ValueError: an unknown key (with the allowed ones), a run setting or algorithm argument
            out of range, or text where the algorithm wants a number.
    """
    import stable_baselines3 as sb3

    params = inspect.signature(getattr(sb3, algo.upper()).__init__).parameters
    allowed = sorted(({*params} - SET_BY_TRAIN) | RUN_KEYS)
    for key in hp:
        if key not in allowed:
            raise ValueError(f"--hp {key}: not a {algo.upper()} hyperparameter; allowed: "
                             f"{', '.join(allowed)}")
    run = {k: hp[k] for k in hp if k in RUN_KEYS}
    algo_hp = {k: v for k, v in hp.items() if k not in RUN_KEYS}
    for key, lo in RUN_MINIMUM.items():
        int_at_least(f"--hp {key}", run.setdefault(key, 1 if key == "sim_threads" else None), lo)
    if not isinstance(run.get("normalize"), bool):
        raise ValueError(f"--hp normalize = {run.get('normalize')!r}; allowed: true, false")
    for key, what in OBJECT_ARGS.items():
        if algo_hp.get(key) is not None:
            raise ValueError(f"--hp {key} = {algo_hp[key]!r}: takes {what} object, which a "
                             "hyperparameter file or --hp cannot give; allowed: null (set it in "
                             "code on the model prepare() returns)")
    _check_algo_values(algo, params, algo_hp, run["n_envs"])
    if isinstance(algo_hp.get("train_freq"), list):     # YAML's [n, unit]; SB3 wants a tuple
        algo_hp["train_freq"] = tuple(algo_hp["train_freq"])
    if isinstance(algo_hp.get("policy_kwargs"), str):
        try:
            algo_hp["policy_kwargs"] = eval(algo_hp["policy_kwargs"], {"dict": dict})  # noqa: S307
        except Exception as e:  # noqa: BLE001 - any bad expression
            raise ValueError(f"--hp policy_kwargs = {algo_hp['policy_kwargs']!r}: {e}; allowed: "
                             "a dict, e.g. dict(net_arch=[64, 64])") from None
    return run, algo_hp


def _check_algo_values(algo: str, params, algo_hp: dict, n_envs: int) -> None:
    """ValueError unless the algorithm's numeric arguments are numbers in their ranges."""
    for key, (lo, hi, kind) in ALGO_RANGES[algo].items():
        if key in algo_hp and not (algo_hp[key] is None and params[key].default is None):
            check_number(f"--hp {key}", algo_hp[key], lo, math.inf if hi is None else hi,
                         integer=kind is True, lo_open=kind == OPEN)
    if algo == "sac":
        _check_sac_values(algo_hp, n_envs)
    for key, value in algo_hp.items():                 # a number's default wants a number
        default = params[key].default if key in params else None
        if isinstance(default, int | float) and not isinstance(default, bool) \
                and isinstance(value, str) and key != "policy_kwargs":
            raise ValueError(f"--hp {key} = {value!r}; allowed: a number (default {default!r})")
    if isinstance(algo_hp.get("learning_rate"), int | float):     # (a schedule is a callable)
        check_number("--hp learning_rate", algo_hp["learning_rate"], 0, lo_open=True)
    if "device" in algo_hp:
        import torch

        try:
            if algo_hp["device"] != "auto":
                torch.device(algo_hp["device"])
        except (RuntimeError, TypeError):
            raise ValueError(f"--hp device = {algo_hp['device']!r}; allowed: auto, cpu, cuda, "
                             "cuda:N") from None


def _check_sac_values(hp: dict, n_envs: int) -> None:
    """SAC's arguments of more than one form: ``train_freq`` (steps, or ``[n, "step"|"episode"]``;
    episodes only with one env, as SB3 asserts), ``gradient_steps`` (>= 1, or -1: as many as
    steps collected), ``ent_coef`` (a number >= 0, or ``"auto"``/``"auto_<start>"`` to learn
    it)."""
    freq = hp.get("train_freq", 1)
    n, unit = (freq, "step") if not isinstance(freq, list | tuple) else (list(freq) + [None])[:2]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1 or unit not in ("step", "episode") \
            or isinstance(freq, list | tuple) and len(freq) != 2:
        raise ValueError(f"--hp train_freq = {freq!r}; allowed: an integer >= 1 or [n, step] / "
                         "[n, episode]")
    if unit == "episode" and n_envs != 1:
        raise ValueError(f"--hp train_freq = {freq!r} with n_envs = {n_envs}: SB3 trains per "
                         "episode with one env only; allowed: n_envs=1, or [n, step]")
    steps = hp.get("gradient_steps", 1)
    if isinstance(steps, bool) or not isinstance(steps, int) or not (steps >= 1 or steps == -1):
        raise ValueError(f"--hp gradient_steps = {steps!r}; allowed: an integer >= 1, or -1")
    coef = hp.get("ent_coef", "auto")
    if not (isinstance(coef, str) and coef.startswith("auto")):
        check_number("--hp ent_coef", coef, 0.0, unit="(or auto, auto_<start>)")


def make_vec(env_id: str, env_kwargs: dict, n_envs: int, seed: int, normalize: bool,
             training: bool = True, stats: Path | None = None, sim_threads: int = 1):
    """The native vector env of ``n_envs`` worlds as an SB3 VecEnv (one compiled physics call
    per step for all of them, or one per thread with ``sim_threads`` > 1), with episode
    statistics (VecMonitor), wrapped in VecNormalize when asked."""
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    from .sb3_vec import TractionSB3VecEnv

    venv = VecMonitor(TractionSB3VecEnv(env_id, n_envs, num_threads=sim_threads, **env_kwargs))
    venv.seed(seed)
    if stats is not None:
        venv = VecNormalize.load(str(stats), venv)
        venv.training, venv.norm_reward = training, training and venv.norm_reward
    elif normalize:
        venv = VecNormalize(venv, norm_obs=True, norm_reward=training, training=training)
    return venv


def _reward_terms_callback():
    from stable_baselines3.common.callbacks import BaseCallback

    class RewardTerms(BaseCallback):
        """Logs the mean of every ``info["reward_<term>"]`` to TensorBoard."""

        def _on_step(self) -> bool:
            for info in self.locals.get("infos", []):
                for key, value in info.items():
                    if key.startswith("reward_"):
                        self.logger.record_mean(f"reward_terms/{key[7:]}", float(value))
            return True

    return RewardTerms()


def _save_stats_callback(path: Path):
    """Saves the training env's VecNormalize statistics to ``path`` each time the evaluation
    keeps a new best model: the statistics it was evaluated with (the evaluation env copies
    them from the training env before each evaluation), which a later checkpoint's differ from."""
    from stable_baselines3.common.callbacks import BaseCallback

    class SaveStats(BaseCallback):
        def _on_step(self) -> bool:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.model.get_vec_normalize_env().save(str(path))
            return True

    return SaveStats()


def prepare(env_id: str, algo: str, timesteps: int, seed: int, out: Path, overrides: dict,
            env_kwargs: dict, threads: int = 1) -> dict:
    """Check every argument, then build the environments and the model; writes no file.

    Returns:
        ``model``, ``venv``, ``eval_env``, ``run`` (run settings) and ``config`` (for
        ``config.yml``).

    Raises:
        ValueError: a bad argument, named (also what SB3 or the environment raise for bad
            values while they are built).
        MissingExtra: Stable-Baselines3 is not installed.
    """
    if algo not in ALGOS:
        raise ValueError(f"--algo {algo!r}; allowed: {', '.join(ALGOS)}")
    int_at_least("--timesteps", timesteps, 1)
    int_at_least("--threads", threads, 1)
    new_run_dir(out)
    require("training", "stable_baselines3")
    check_env(env_id, env_kwargs)
    run, hp = split_hyperparameters(algo, hyperparameters(algo, env_id, overrides))
    import stable_baselines3 as sb3
    import torch

    torch.set_num_threads(threads)
    config = {"env_id": env_id, "algo": algo, "timesteps": timesteps, "seed": seed,
              "env_kwargs": env_kwargs, "run": run,
              "hyperparameters": {k: (repr(v) if k == "policy_kwargs" else v)
                                  for k, v in hp.items()}}
    venv = make_vec(env_id, env_kwargs, run["n_envs"], seed, run["normalize"],
                    sim_threads=run["sim_threads"])
    eval_env = make_vec(env_id, env_kwargs, 1, seed + 10_000, run["normalize"], training=False)
    policy = hp.pop("policy")
    try:
        model = getattr(sb3, algo.upper())(policy, venv, seed=seed, verbose=0,
                                           tensorboard_log=str(out / "tb"), **hp)
    except (AssertionError, TypeError) as e:            # SB3's asserts; a wrong-typed or
        raise ValueError(f"--hp: {e}") from None        # unknown (policy) argument
    return {"model": model, "venv": venv, "eval_env": eval_env, "run": run, "config": config}


def train(env_id: str, algo: str, timesteps: int, seed: int, out: Path, overrides: dict,
          env_kwargs: dict, progress_bar: bool = True, argv: list[str] | None = None,
          threads: int = 1) -> Path:
    """Train and write the run folder; returns its path. ``threads``: torch CPU threads (the
    policies are small MLPs; one thread per run avoids oversubscribing the cores when several
    runs share a machine). Raises what :func:`prepare` raises, before writing anything."""
    return run_prepared(prepare(env_id, algo, timesteps, seed, out, overrides, env_kwargs,
                                threads), out, progress_bar, argv)


def run_prepared(p: dict, out: Path, progress_bar: bool = True,
                 argv: list[str] | None = None) -> Path:
    """Write the run folder's description, learn, save (``p`` from :func:`prepare`)."""
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback, EvalCallback

    traction.envs.mujoco_timers(False)
    model, venv, eval_env, run = p["model"], p["venv"], p["eval_env"], p["run"]
    out.mkdir(parents=True, exist_ok=True)
    args = sys.argv[1:] if argv is None else argv
    (out / "command.txt").write_text(shlex.join([sys.executable, "-m", "traction.train.train",
                                                 *args]) + "\n")
    (out / "config.yml").write_text(yaml.safe_dump(p["config"], sort_keys=False))
    every = max(run["eval_freq"] // run["n_envs"], 1)
    on_best = _save_stats_callback(out / "best" / "vecnormalize.pkl") if run["normalize"] else None
    callbacks = CallbackList([
        EvalCallback(eval_env, n_eval_episodes=run["eval_episodes"], eval_freq=every,
                     log_path=str(out), best_model_save_path=str(out / "best"),
                     callback_on_new_best=on_best, verbose=0),
        CheckpointCallback(max(run["checkpoint_freq"] // run["n_envs"], 1), str(out / "checkpoints"),
                           save_vecnormalize=True),
        _reward_terms_callback()])
    model.learn(p["config"]["timesteps"], callback=callbacks, progress_bar=progress_bar)
    model.save(out / "model.zip")
    if run["normalize"]:
        venv.save(str(out / "vecnormalize.pkl"))
    venv.close()
    eval_env.close()
    return out


def main(argv=None) -> Path:
    ap = argparse.ArgumentParser(description="Train an SB3 agent on a Traction environment.")
    ap.add_argument("--env", required=True, help="environment id, e.g. Traction/TankTurn-v0")
    ap.add_argument("--algo", default="ppo", choices=ALGOS)
    ap.add_argument("--timesteps", type=positive_int_arg, default=200_000,
                    help="environment steps in total (>= 1)")
    ap.add_argument("--seed", type=seed_arg, default=0)
    ap.add_argument("--out", type=Path, default=None, help="run folder")
    ap.add_argument("--hp", type=assignment, action="append", default=[],
                    help="hyperparameter override NAME=VALUE (repeatable; YAML-style values)")
    ap.add_argument("--env-kwarg", type=assignment, action="append", default=[],
                    help="environment argument NAME=VALUE (repeatable)")
    ap.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    ap.add_argument("--threads", type=positive_int_arg, default=1,
                    help="torch CPU threads (>= 1, default 1)")
    args = ap.parse_args(argv)
    out = args.out or Path("runs") / f"{args.env.split('/')[-1]}_{args.algo}_{args.seed}"
    try:
        prepared = prepare(args.env, args.algo, args.timesteps, args.seed, out, dict(args.hp),
                           dict(args.env_kwarg), threads=args.threads)
    except (ValueError, MissingExtra) as e:
        ap.error(str(e))
    path = run_prepared(prepared, out, progress_bar=not args.no_progress, argv=argv)
    print(path)
    return path


if __name__ == "__main__":
    main()
