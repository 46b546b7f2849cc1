"""Train a Stable-Baselines3 agent on a Traction environment::

    python -m traction.train.train --env Traction/TankTurn-v0 --algo ppo --timesteps 300000 \\
        --seed 0 --out runs/tank_ppo [--hp learning_rate=1e-4] [--env-kwarg drive_mode=standard]

Hyperparameters come from ``train/hyperparams/<algo>.yml`` (``default`` entry, then the env id's
entry, then ``--hp`` overrides). The run folder is self-describing: ``model.zip``,
``vecnormalize.pkl`` (observation/reward statistics), ``config.yml`` (everything resolved),
``command.txt``, ``evaluations.npz`` (EvalCallback: returns and success rates), ``checkpoints/``
and ``tb/`` (TensorBoard, including every ``reward_<term>`` as ``reward_terms/<term>``).

Training switches MuJoCo's stage timers off in its process (:func:`traction.envs.mujoco_timers`:
nothing reads them, and their clock reads cost 4-17 % of an env step).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from importlib import resources
from pathlib import Path

import yaml

import traction.envs  # registers the ids
from traction.scenes.export import parse_assignment

ALGOS = ("ppo", "sac")
RUN_KEYS = {"n_envs", "sim_threads", "normalize", "eval_freq", "eval_episodes", "checkpoint_freq"}


def hyperparameters(algo: str, env_id: str, overrides: dict) -> dict:
    """Resolved hyperparameters: YAML ``default``, then ``env_id``'s entry, then overrides."""
    text = (resources.files("traction.train") / "hyperparams" / f"{algo}.yml").read_text()
    table = yaml.safe_load(text)
    hp = {**table.get("default", {}), **table.get(env_id, {}), **overrides}
    return hp


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


def train(env_id: str, algo: str, timesteps: int, seed: int, out: Path, overrides: dict,
          env_kwargs: dict, progress_bar: bool = True, argv: list[str] | None = None,
          threads: int = 1) -> Path:
    """Train and write the run folder; returns its path. ``threads``: torch CPU threads (the
    policies are small MLPs; one thread per run avoids oversubscribing the cores when several
    runs share a machine)."""
    import stable_baselines3 as sb3
    import torch
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback, EvalCallback

    if algo not in ALGOS:
        raise ValueError(f"--algo {algo!r}; allowed: {', '.join(ALGOS)}")
    torch.set_num_threads(threads)
    traction.envs.mujoco_timers(False)
    hp = hyperparameters(algo, env_id, overrides)
    run = {k: hp.pop(k) for k in list(hp) if k in RUN_KEYS}
    if isinstance(hp.get("policy_kwargs"), str):
        hp["policy_kwargs"] = eval(hp["policy_kwargs"], {"dict": dict})  # noqa: S307 (YAML of ours)
    out.mkdir(parents=True, exist_ok=True)
    args = sys.argv[1:] if argv is None else argv
    (out / "command.txt").write_text(shlex.join([sys.executable, "-m", "traction.train.train",
                                                 *args]) + "\n")
    config = {"env_id": env_id, "algo": algo, "timesteps": timesteps, "seed": seed,
              "env_kwargs": env_kwargs, "run": run,
              "hyperparameters": {k: (repr(v) if k == "policy_kwargs" else v)
                                  for k, v in hp.items()}}
    (out / "config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    venv = make_vec(env_id, env_kwargs, run["n_envs"], seed, run["normalize"],
                    sim_threads=run.get("sim_threads", 1))
    eval_env = make_vec(env_id, env_kwargs, 1, seed + 10_000, run["normalize"], training=False)
    policy = hp.pop("policy")
    model = getattr(sb3, algo.upper())(policy, venv, seed=seed, verbose=0,
                                       tensorboard_log=str(out / "tb"), **hp)
    every = max(run["eval_freq"] // run["n_envs"], 1)
    callbacks = CallbackList([
        EvalCallback(eval_env, n_eval_episodes=run["eval_episodes"], eval_freq=every,
                     log_path=str(out), best_model_save_path=str(out / "best"), verbose=0),
        CheckpointCallback(max(run["checkpoint_freq"] // run["n_envs"], 1), str(out / "checkpoints"),
                           save_vecnormalize=True),
        _reward_terms_callback()])
    model.learn(timesteps, callback=callbacks, progress_bar=progress_bar)
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
    ap.add_argument("--timesteps", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="run folder")
    ap.add_argument("--hp", type=parse_assignment, action="append", default=[],
                    help="hyperparameter override NAME=VALUE (repeatable)")
    ap.add_argument("--env-kwarg", type=parse_assignment, action="append", default=[],
                    help="environment argument NAME=VALUE (repeatable)")
    ap.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    args = ap.parse_args(argv)
    out = args.out or Path("runs") / f"{args.env.split('/')[-1]}_{args.algo}_{args.seed}"
    path = train(args.env, args.algo, args.timesteps, args.seed, out, dict(args.hp),
                 dict(args.env_kwarg), progress_bar=not args.no_progress, argv=argv,
                 threads=args.threads)
    print(path)
    return path


if __name__ == "__main__":
    main()
