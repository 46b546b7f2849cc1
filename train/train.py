"""Train a Stable-Baselines3 agent on a Traction environment::

    python -m traction.train.train --env Traction/TankTurn-v1 --algo ppo --timesteps 300000 \\
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
import importlib
import inspect
import logging
import shlex
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import yaml

import traction.envs  # registers the ids
from traction.envs.base import TractionEnv, display_available
from traction.train import run_folder
from traction.train.checks import MissingExtra, int_at_least, new_run_dir, positive_int_arg, require, seed_arg
from traction.train.curriculum import curriculum_arg
from traction.train.hparams import (
    ALGOS,
    assignment,
    hyperparameters,
    split_hyperparameters,
)

logger = logging.getLogger(__name__)


def check_env(env_id: str, env_kwargs: dict) -> None:
    """``env_id`` is a registered Traction task (:func:`traction_spec`) and every key of
    ``env_kwargs`` is one of its arguments.

    Raises:
        ValueError: naming the id or argument and what is allowed.
    """
    spec = traction_spec(env_id)
    if env_kwargs.get("telemetry", 0) != 0:
        raise ValueError("--env-kwarg telemetry: training steps a native vector env, which records "
                         "no telemetry; record it with a single env (gym.make(id, telemetry=n))")
    if env_kwargs.get("render_mode") == "human" and not display_available():
        raise ValueError("--env-kwarg render_mode=human: needs a display (DISPLAY and "
                         "WAYLAND_DISPLAY are unset); allowed here: rgb_array, or leave it out")
    params = inspect.signature(_creator(spec)).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    allowed = sorted({*params, "max_episode_steps"} - {"self"})
    for key in env_kwargs:
        if key not in allowed:
            raise ValueError(f"--env-kwarg {key}: not an argument of {env_id}; allowed: "
                             f"{', '.join(allowed)}")


def traction_spec(env_id: str) -> gym.envs.registration.EnvSpec:
    """The spec of ``env_id``, a registered Traction task: a shipped one or your own subclass
    of ``TractionEnv`` (the SB3 adapter runs Traction's native vector environment).
    ``"module:Namespace/Name-v0"`` imports ``module`` first, which registers the id, as
    ``gym.make`` does.

    Raises:
        ValueError: naming the id and what is allowed.
    """
    allowed = (f"{', '.join(traction.envs.ENV_IDS)}, or your own TractionEnv subclass's id "
               "(module:Namespace/Name-v0)")
    module, _, name = env_id.rpartition(":")
    if module:
        try:
            importlib.import_module(module)
        except ImportError as e:
            raise ValueError(f"--env {env_id!r}: cannot import {module!r} ({e})") from None
    if name not in gym.registry:
        raise ValueError(f"--env {env_id!r}: not a registered environment; allowed: {allowed}")
    spec = gym.spec(name)
    creator = _creator(spec)
    if not (isinstance(creator, type) and issubclass(creator, TractionEnv)):
        raise ValueError(f"--env {env_id!r}: not a Traction environment (training runs Traction's "
                         f"native vector environment); allowed: {allowed}")
    return spec


def _creator(spec: gym.envs.registration.EnvSpec):
    """What ``spec``'s entry point names (a ``"module:attr"`` string is imported)."""
    from gymnasium.envs.registration import load_env_creator

    point = spec.entry_point
    return load_env_creator(point) if isinstance(point, str) else point


def make_vec(env_id: str, env_kwargs: dict, n_envs: int, seed: int, normalize: bool,
             training: bool = True, stats: Path | None = None, sim_threads: int = 1,
             gamma: float = 0.99):
    """The native vector env of ``n_envs`` worlds as an SB3 VecEnv (one compiled physics call
    per step for all of them, or one per thread with ``sim_threads`` > 1), with episode
    statistics (VecMonitor), wrapped in VecNormalize when asked. ``gamma``: the algorithm's
    discount, which VecNormalize's reward scale (the running return's spread) must share, as
    RL Zoo passes it; SB3's default 0.99 otherwise."""
    from stable_baselines3.common.preprocessing import is_image_space
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize, VecTransposeImage

    from .sb3_vec import TractionSB3VecEnv

    venv = VecMonitor(TractionSB3VecEnv(traction_spec(env_id).id, n_envs, num_threads=sim_threads,
                                        **env_kwargs))
    venv.seed(seed)
    if is_image_space(venv.observation_space) or (
            isinstance(venv.observation_space, gym.spaces.Dict)
            and any(is_image_space(s) for s in venv.observation_space.spaces.values())):
        # camera images channels first (SB3's CNN layout) here, under VecNormalize: SB3 would
        # put its own transpose on top, and an off-policy algorithm's replay buffer (which
        # stores VecNormalize's original observations) would get them channels last
        venv = VecTransposeImage(venv)
    if stats is not None:
        venv = VecNormalize.load(str(stats), venv)
        venv.training, venv.norm_reward = training, training and venv.norm_reward
    elif normalize:
        # camera images are not normalised (the CNN scales them to [0, 1]); with a Dict
        # observation, its other parts are
        space = venv.observation_space
        keys = [k for k in space.spaces if k != "pixels"] if isinstance(space, gym.spaces.Dict) \
            else None
        images = is_image_space(space)
        venv = VecNormalize(venv, norm_obs=not images, norm_reward=training, training=training,
                            gamma=gamma, norm_obs_keys=keys)
    return venv


def _reward_terms_callback():
    from stable_baselines3.common.callbacks import BaseCallback

    class RewardTerms(BaseCallback):
        """Logs the mean of every ``info["reward_<term>"]`` to TensorBoard: each step's mean
        over the worlds, from the adapter's array of them (``TractionSB3VecEnv.reward_terms``;
        reading 64 worlds' infos key by key cost several us per world and step); another
        VecEnv's infos are read one by one."""

        def _on_step(self) -> bool:
            adapter = self.training_env.unwrapped
            terms = getattr(adapter, "reward_terms", None)
            if terms is not None:
                for key, column in zip(adapter.reward_keys, terms.mean(axis=0).tolist(),
                                       strict=True):
                    self.logger.record_mean(f"reward_terms/{key[7:]}", column)
                return True
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
            env_kwargs: dict, threads: int = 1,
            curriculum: tuple[str, float, float] | None = None) -> dict:
    """Check every argument, then build the environments and the model; writes no file.
    ``curriculum``: ``(name, start, end)``, an environment argument ramped over the run
    (:mod:`traction.train.curriculum`; the evaluations and ``config.yml`` use ``end``).

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
    check_env(env_id, env_kwargs)                 # (hyperparameters by the id, not module:id)
    run, hp = split_hyperparameters(algo, hyperparameters(algo, traction_spec(env_id).id,
                                                          overrides, env_kwargs.get("obs_mode")))
    if curriculum is None and run["curriculum"] is not None:   # the hyperparameters' own
        from traction.train.curriculum import parse

        curriculum = parse(run["curriculum"])
    if curriculum is not None:
        from traction.train import curriculum as ramp

        ramp.check(env_id, env_kwargs, *curriculum)
        env_kwargs = {**env_kwargs, curriculum[0]: curriculum[2]}     # evaluations: the end
    import stable_baselines3 as sb3
    import torch

    torch.set_num_threads(threads)
    # No argument checks in torch.distributions: the policy builds a Gaussian per forward pass
    # and its checks cost a quarter of the pass (they test values the network computed).
    torch.distributions.Distribution.set_default_validate_args(False)
    kept = run_folder.collect(env_id, env_kwargs, _creator(traction_spec(env_id)))
    config = {"env_id": env_id, "algo": algo, "timesteps": timesteps, "seed": seed,
              "env_kwargs": env_kwargs, "run": run,
              **({"curriculum": {curriculum[0]: list(curriculum[1:])}} if curriculum else {}),
              "hyperparameters": {k: (repr(v) if k == "policy_kwargs" else v)
                                  for k, v in hp.items()}, "kept": kept.config()}
    _warn_if_never_evaluated(timesteps, run)
    gamma = hp.get("gamma", 0.99)                       # (SB3's PPO and SAC default)
    venv = make_vec(env_id, env_kwargs, run["n_envs"], seed, run["normalize"],
                    sim_threads=run["sim_threads"], gamma=gamma)
    eval_env = make_vec(env_id, env_kwargs, 1, seed + 10_000, run["normalize"], training=False,
                        gamma=gamma)
    if curriculum is not None:
        venv.set_attr(curriculum[0], curriculum[1])     # before the first reset
    policy = hp.pop("policy")
    try:
        model = getattr(sb3, algo.upper())(policy, venv, seed=seed, verbose=0,
                                           tensorboard_log=str(out / "tb"), **hp)
    except (AssertionError, TypeError) as e:            # SB3's asserts; a wrong-typed or
        raise ValueError(f"--hp: {e}") from None        # unknown (policy) argument
    return {"model": model, "venv": venv, "eval_env": eval_env, "run": run, "config": config,
            "curriculum": curriculum,
            "kept": kept}


def _warn_if_never_evaluated(timesteps: int, run: dict) -> None:
    """A run shorter than ``eval_freq`` is never evaluated: no success rate, no ``best/``."""
    if timesteps < run["eval_freq"]:
        logger.warning("--timesteps %d is below eval_freq %d: the run will not be evaluated "
                       "while it trains (no success rate, best/ stays empty); evaluate it "
                       "afterwards, or pass --hp eval_freq=%d or less", timesteps,
                       run["eval_freq"], timesteps)


def train(env_id: str, algo: str, timesteps: int, seed: int, out: Path, overrides: dict,
          env_kwargs: dict, progress_bar: bool = True, argv: list[str] | None = None,
          threads: int = 1, curriculum: tuple[str, float, float] | None = None) -> Path:
    """Train and write the run folder; returns its path. ``threads``: torch CPU threads (the
    policies are small MLPs; one thread per run avoids oversubscribing the cores when several
    runs share a machine). Raises what :func:`prepare` raises, before writing anything."""
    return run_prepared(prepare(env_id, algo, timesteps, seed, out, overrides, env_kwargs,
                                threads, curriculum), out, progress_bar, argv)


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
    if "kept" in p:
        p["kept"].write(out)
    every = max(run["eval_freq"] // run["n_envs"], 1)
    on_best = _save_stats_callback(out / "best" / "vecnormalize.pkl") if run["normalize"] else None
    callbacks = CallbackList([
        EvalCallback(eval_env, n_eval_episodes=run["eval_episodes"], eval_freq=every,
                     log_path=str(out), best_model_save_path=str(out / "best"),
                     callback_on_new_best=on_best, verbose=0),
        CheckpointCallback(max(run["checkpoint_freq"] // run["n_envs"], 1), str(out / "checkpoints"),
                           save_vecnormalize=True),
        _reward_terms_callback()])
    if p.get("curriculum"):
        from traction.train import curriculum

        callbacks.callbacks.append(curriculum.callback(*p["curriculum"],
                                                       p["config"]["timesteps"]))
    model.learn(p["config"]["timesteps"], callback=callbacks, progress_bar=progress_bar)
    model.save(out / "model.zip")
    if run["normalize"]:
        venv.save(str(out / "vecnormalize.pkl"))
    venv.close()
    eval_env.close()
    return out


def main(argv=None) -> Path:
    ap = argparse.ArgumentParser(description="Train an SB3 agent on a Traction environment.")
    ap.add_argument("--env", required=True, help="environment id, e.g. Traction/TankTurn-v1; "
                    "your own task: module:Namespace/Name-v0 (importing module registers it)")
    ap.add_argument("--algo", default="ppo", choices=ALGOS)
    ap.add_argument("--timesteps", type=positive_int_arg, default=200_000,
                    help="environment steps in total (>= 1)")
    ap.add_argument("--seed", type=seed_arg, default=0)
    ap.add_argument("--out", type=Path, default=None,
                    help="run folder (default: runs/<env name>_<algo>_<seed>, e.g. "
                    "runs/TankTurn-v1_ppo_0; it must be new or empty)")
    ap.add_argument("--hp", type=assignment, action="append", default=[],
                    help="hyperparameter override NAME=VALUE (repeatable; YAML-style values)")
    ap.add_argument("--env-kwarg", type=assignment, action="append", default=[],
                    help="environment argument NAME=VALUE (repeatable)")
    ap.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    ap.add_argument("--threads", type=positive_int_arg, default=1,
                    help="torch CPU threads (>= 1, default 1)")
    ap.add_argument("--curriculum", type=curriculum_arg, default=None, metavar="NAME=START:END",
                    help="ramp an environment argument over the run, e.g. difficulty=0.3:0.8 "
                         "(evaluations at END; see traction.train.curriculum)")
    args = ap.parse_args(argv)
    out = args.out or Path("runs") / f"{args.env.split('/')[-1]}_{args.algo}_{args.seed}"
    try:
        prepared = prepare(args.env, args.algo, args.timesteps, args.seed, out, dict(args.hp),
                           dict(args.env_kwarg), threads=args.threads,
                           curriculum=args.curriculum)
    except (ValueError, MissingExtra) as e:
        ap.error(str(e))
    path = run_prepared(prepared, out, progress_bar=not args.no_progress, argv=argv)
    print(summary(path))
    return path


def _command(*words: str) -> str:
    """A shell command line; the interpreter's folder relative to here when it is below it
    (``.venv/bin/python``)."""
    exe = Path(sys.executable)
    try:
        exe = exe.relative_to(Path.cwd())
    except ValueError:
        pass
    return shlex.join([str(exe.parent / words[0]) if words[0] != "python" else str(exe),
                       *words[1:]])


def summary(run: Path) -> str:
    """What a finished run says: its folder, the last evaluation's success rate and return,
    the best model and the commands to evaluate it and to see its curves."""
    lines = [f"run folder: {run}"]
    evals = run / "evaluations.npz"
    if evals.is_file():
        e = np.load(evals)
        last, returns = int(e["timesteps"][-1]), e["results"][-1]
        success = (f"success {100 * float(np.mean(e['successes'][-1])):.0f} %, "
                   if "successes" in e and len(e["successes"]) else "")
        lines.append(f"last evaluation (step {last:,}, {len(returns)} episodes): {success}"
                     f"return {np.mean(returns):.2f} +- {np.std(returns):.2f}")
        means = e["results"].mean(axis=1)
        best = int(np.argmax(means))
        lines.append(f"best model: {run / 'best' / 'best_model.zip'} (step "
                     f"{int(e['timesteps'][best]):,}, return {means[best]:.2f})")
    else:
        lines.append("no evaluation ran (the run was shorter than eval_freq): no success rate "
                     "and no best model yet")
    evaluate = _command("python", "-m", "traction.train.evaluate", str(run), "--episodes", "20",
                        "--video")
    lines += ["next:", f"  {evaluate}", f"  {_command('tensorboard', '--logdir', str(run / 'tb'))}"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
