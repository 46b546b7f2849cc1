"""Train every (task, seed) as a Ray Tune trial and report them with confidence intervals::

    python -m traction.train.sweep --envs Traction/TankTurn-v1 Traction/Climb6x6-v1 \\
        --algo ppo --seeds 0-9 --timesteps 1000000 --out runs/sweep [--address ray://head:10001]

Each trial is one ``train`` run (the shipped hyperparameters, ``--hp`` and ``--env-kwarg`` on
top, as ``python -m traction.train.train`` takes them) in ``OUT/runs/<task>_s<seed>/``, a normal
run folder (``evaluate``, ``results`` and TensorBoard read it), followed by deterministic
evaluations of its final model and of its best checkpoint on ``--eval-episodes`` held-out
episodes (seeds from :data:`EVAL_SEED`, which no training or training evaluation env starts
from), written to ``trial.json`` beside them. Then ``OUT/report/`` gets the aggregate report
(:mod:`traction.train.sweep_report`: per task IQM success rate and return with 95 %
stratified-bootstrap CIs, rliable's; learning curves with CI bands across seeds; a performance
profile; wall time and steps/s per trial; ``report.md``, ``report.json``, PNGs).
``python -m traction.train.sweep_report OUT --docs docs/results.md`` writes the results page
from it.

**Ray.** Without ``--address`` a local Ray instance is started for the sweep (nothing to set
up) and told this machine's cores; each trial asks for ``--cpus-per-trial`` CPUs (default 1),
and runs its torch and physics in that many threads at most, so trials never oversubscribe the
cores (on 2 cores: two trials at a time). ``--address`` joins an existing cluster (``ray start
--head`` on one machine, ``ray start --address=...`` on the others; every node needs this
package installed, and ``--out`` must be a folder every node can write, such as an NFS mount,
as Ray's own storage requires). ``--max-concurrent`` caps the trials running at once.

**Resuming.** A trial is finished when its ``trial.json`` exists. Running the same command
again (after Ctrl-C, a crash or a lost node) trains only the trials without one; a trial that
was interrupted starts again from scratch in a fresh folder. More seeds or tasks can be added
to a sweep the same way; its other settings (algorithm, timesteps, ``--hp``, ``--env-kwarg``,
evaluation episodes) are kept in ``OUT/sweep.yml`` and a rerun that changes one is refused,
since its trials would not be comparable.

Needs the ``scale`` extra (``pip install -e ".[scale]"``: Ray Tune, rliable) besides
``train`` and ``plot``; the tool says so before it starts.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import socket
import sys
import time
from pathlib import Path

import yaml

import traction.envs
from traction.train.checks import MissingExtra, creatable_dir, int_at_least, positive_int_arg, require
from traction.train.hparams import ALGOS, assignment, hyperparameters, split_hyperparameters

#: evaluation episodes of every trial start from this seed (training envs start from the
#: trial's seed, its evaluation callback's from seed + 10,000)
EVAL_SEED = 1_000_000
#: settings every trial of a sweep shares (``OUT/sweep.yml``)
SHARED = ("algo", "timesteps", "hp", "env_kwargs", "eval_episodes", "eval_seed")
TRIAL_FILE = "trial.json"


def parse_seeds(text: str) -> list[int]:
    """``"0-9"``, ``"0,3,5"`` or ``"0-4,10"`` -> the seeds, in order, without repeats.

    Raises:
        ValueError: naming the part that is not a seed or a range of seeds.
    """
    from traction.train.checks import MAX_SEED

    seeds: list[int] = []
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        try:
            first, last = int(lo), int(hi) if sep else int(lo)
        except ValueError:
            first = last = -1
        if not (0 <= first <= last <= MAX_SEED):
            raise ValueError(f"--seeds {text!r}: {part.strip()!r} is not a seed or a range of "
                             f"seeds; allowed: integers in [0, {MAX_SEED}] as 0-9, 0,3,5 or "
                             "0-4,10")
        seeds += [s for s in range(first, last + 1) if s not in seeds]
    return seeds


def seeds_arg(text: str) -> list[int]:
    try:
        return parse_seeds(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--seeds ")) from None


def trial_name(env_id: str, seed: int) -> str:
    """The trial's run folder name: the id's name part and the seed (``TankTurn-v1_s3``)."""
    return f"{env_id.rpartition(':')[2].split('/')[-1]}_s{seed}"


def trial_dir(out: Path, env_id: str, seed: int) -> Path:
    return Path(out) / "runs" / trial_name(env_id, seed)


def finished(out: Path, env_id: str, seed: int) -> bool:
    return (trial_dir(out, env_id, seed) / TRIAL_FILE).is_file()


def check(envs: list[str], algo: str, seeds: list[int], timesteps: int, out: Path,
          overrides: dict, env_kwargs: dict, eval_episodes: int,
          cpus_per_trial: int) -> dict:
    """Check everything before any trial starts; returns the shared settings.

    Raises:
        ValueError: a bad argument (named), a sim_threads above ``cpus_per_trial``, or an
            ``out`` folder that holds something other than a sweep, or a sweep with other
            settings (naming them).
        MissingExtra: Ray, rliable, Stable-Baselines3 or matplotlib is not installed.
    """
    from traction.train import train

    if algo not in ALGOS:
        raise ValueError(f"--algo {algo!r}; allowed: {', '.join(ALGOS)}")
    if not envs:
        raise ValueError("--envs: none given; allowed: " + ", ".join(traction.envs.ENV_IDS))
    if not seeds:
        raise ValueError("--seeds: none given")
    int_at_least("--timesteps", timesteps, 1)
    int_at_least("--eval-episodes", eval_episodes, 1)
    int_at_least("--cpus-per-trial", cpus_per_trial, 1)
    require("sweep", "ray.tune", "rliable", "stable_baselines3", "matplotlib")
    names = {}
    for env_id in envs:
        train.check_env(env_id, env_kwargs)
        run, _ = split_hyperparameters(algo, hyperparameters(algo, train.traction_spec(env_id).id,
                                                             overrides, env_kwargs.get("obs_mode")))
        if run["sim_threads"] > cpus_per_trial:
            raise ValueError(f"--hp sim_threads = {run['sim_threads']} for {env_id}: more "
                             f"physics threads than the trial's CPUs (--cpus-per-trial "
                             f"{cpus_per_trial}) oversubscribe the cores; allowed: "
                             f"sim_threads <= --cpus-per-trial")
        name = trial_name(env_id, 0)
        if name in names and names[name] != env_id:
            raise ValueError(f"--envs: {names[name]} and {env_id} would share run folders "
                             f"({name}); allowed: ids with different names")
        names[name] = env_id
    settings = {"algo": algo, "timesteps": timesteps, "hp": dict(overrides),
                "env_kwargs": dict(env_kwargs), "eval_episodes": eval_episodes,
                "eval_seed": EVAL_SEED}
    creatable_dir(out)
    saved = read_settings(out)
    if saved is None and out.is_dir() and any(out.iterdir()):
        raise ValueError(f"--out {out}: not empty and not a sweep (no sweep.yml); allowed: a "
                         "new or empty folder, or a sweep's folder to resume it")
    if saved is not None:
        changed = [k for k in SHARED if saved.get(k) != settings[k]]
        if changed:
            raise ValueError(f"--out {out}: a sweep with other settings ("
                             + "; ".join(f"{k}: {saved.get(k)!r} there, {settings[k]!r} now"
                                         for k in changed)
                             + "); its trials would not compare with these; allowed: the same "
                             "settings (to resume or add seeds or tasks), or a new --out")
    return settings


def read_settings(out: Path) -> dict | None:
    path = Path(out) / "sweep.yml"
    return yaml.safe_load(path.read_text()) if path.is_file() else None


def run_trial(config: dict) -> dict:
    """One trial: train, evaluate the final model and the best checkpoint, write
    ``trial.json`` last (it marks the trial finished); returns the figures Tune shows.
    ``config``: ``env_id``, ``seed``, ``out``, ``cpus`` and the shared settings
    (:data:`SHARED`)."""
    from traction.train import evaluate, train

    c = {**config, **config.get("trial", {})}           # (Tune's grid gives env_id, seed)
    env_id, seed = c["env_id"], c["seed"]
    run = trial_dir(Path(c["out"]), env_id, seed)
    if run.exists():                        # an interrupted try: start again from scratch
        shutil.rmtree(run)
    argv = ["--env", env_id, "--algo", c["algo"], "--timesteps", str(c["timesteps"]),
            "--seed", str(seed), "--out", str(run), "--no-progress",
            "--threads", str(c["cpus"])]
    for flag, pairs in (("--hp", c["hp"]), ("--env-kwarg", c["env_kwargs"])):
        for key, value in pairs.items():
            argv += [flag, f"{key}={yaml.safe_dump(value, default_flow_style=True).strip()}"
                     .removesuffix("\n...")]
    started = time.time()
    train.train(env_id, c["algo"], c["timesteps"], seed, run, c["hp"], c["env_kwargs"],
                progress_bar=False, argv=argv, threads=c["cpus"])
    trained = time.time()
    final = evaluate.evaluate(run, c["eval_episodes"], seed=c["eval_seed"], model="final")
    best = evaluate.evaluate(run, c["eval_episodes"], seed=c["eval_seed"], model="best")
    result = {"env_id": env_id, "seed": seed, "algo": c["algo"], "timesteps": c["timesteps"],
              "train_seconds": trained - started, "wall_seconds": time.time() - started,
              "train_steps_per_s": c["timesteps"] / (trained - started),
              "final": final, "best": best, "host": socket.gethostname(),
              "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started))}
    tmp = run / (TRIAL_FILE + ".tmp")
    tmp.write_text(json.dumps(result, indent=2))
    tmp.replace(run / TRIAL_FILE)           # whole or not at all: it marks the trial finished
    return {"final_success": final["success_rate"], "final_return": final["mean_return"],
            "best_success": best["success_rate"], "best_return": best["mean_return"],
            "train_steps_per_s": result["train_steps_per_s"]}


def tune_trial(config: dict) -> None:
    """Ray Tune's function trainable: :func:`run_trial`, its figures reported to Tune."""
    from ray import tune

    tune.report(run_trial(config))


def local_cpus() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _run_ray(pending: list[dict], settings: dict, out: Path, address: str | None,
             cpus_per_trial: int, max_concurrent: int | None) -> list[str]:
    """Run the ``pending`` trials (``{"env_id", "seed"}``) with Ray Tune; returns the errors
    of trials that failed."""
    import ray
    from ray import tune

    started = not ray.is_initialized()
    if started and address:
        ray.init(address=address)
    elif started:                      # a new local instance (not one `ray start` left running)
        ray.init(address="local", num_cpus=local_cpus(), include_dashboard=False,
                 object_store_memory=200 * 1024**2)
    try:
        trainable = tune.with_resources(tune_trial, {"cpu": cpus_per_trial})
        space = {**settings, "out": str(out.resolve()), "cpus": cpus_per_trial,
                 "trial": tune.grid_search(pending)}
        tuner = tune.Tuner(
            trainable,
            param_space=space,
            tune_config=tune.TuneConfig(max_concurrent_trials=max_concurrent),
            run_config=tune.RunConfig(name=time.strftime("tune-%Y%m%d-%H%M%S"),
                                      storage_path=str((out / "ray").resolve()),
                                      failure_config=tune.FailureConfig(max_failures=0),
                                      verbose=1))
        grid = tuner.fit()
        return [str(e) for e in grid.errors]
    finally:
        if started:
            ray.shutdown()


def sweep(envs: list[str], algo: str, seeds: list[int], timesteps: int, out: Path,
          overrides: dict | None = None, env_kwargs: dict | None = None,
          eval_episodes: int = 20, address: str | None = None, cpus_per_trial: int = 1,
          max_concurrent: int | None = None, argv: list[str] | None = None) -> dict:
    """Run the trials of ``envs`` x ``seeds`` not yet finished in ``out``, then write the
    report (:func:`traction.train.sweep_report.write_report`); returns
    ``{"trials", "finished_before", "ran", "finished", "errors", "report"}``.

    Raises:
        ValueError, MissingExtra: what :func:`check` raises, before anything is written.
    """
    from traction.train import sweep_report

    out = Path(out)
    settings = check(envs, algo, seeds, timesteps, out, overrides or {}, env_kwargs or {},
                     eval_episodes, cpus_per_trial)
    out.mkdir(parents=True, exist_ok=True)
    if read_settings(out) is None:
        (out / "sweep.yml").write_text(yaml.safe_dump(settings, sort_keys=False))
    args = sys.argv[1:] if argv is None else argv
    with open(out / "commands.txt", "a") as f:          # every invocation, resumes included
        f.write(shlex.join([sys.executable, "-m", "traction.train.sweep", *args]) + "\n")
    trials = [{"env_id": e, "seed": s} for e in envs for s in seeds]
    before = [t for t in trials if finished(out, **t)]
    pending = [t for t in trials if t not in before]
    print(f"sweep {out}: {len(trials)} trials, {len(before)} finished before, "
          f"running {len(pending)}", flush=True)
    errors: list[str] = []
    if pending:
        try:
            errors = _run_ray(pending, settings, out, address, cpus_per_trial, max_concurrent)
        except KeyboardInterrupt:
            errors = ["interrupted"]
    done = [t for t in trials if finished(out, **t)]
    report = sweep_report.write_report(out) if done else None
    if len(done) < len(trials):
        print(f"sweep {out}: {len(done)} of {len(trials)} trials finished; run the same "
              "command again to train the others (finished trials are kept)", flush=True)
    return {"trials": len(trials), "finished_before": len(before), "ran": len(pending),
            "finished": len(done), "errors": errors, "report": report}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(
        description="Train every (task, seed) as a Ray Tune trial (resumable) and report IQM "
                    "success and return with 95 % bootstrap CIs.")
    ap.add_argument("--envs", nargs="+", default=list(traction.envs.ENV_IDS),
                    help="environment ids (default: every shipped task)")
    ap.add_argument("--algo", default="ppo", choices=ALGOS)
    ap.add_argument("--seeds", type=seeds_arg, default=parse_seeds("0-9"),
                    help="seeds: 0-9, 0,3,5 or 0-4,10 (default 0-9)")
    ap.add_argument("--timesteps", type=positive_int_arg, required=True,
                    help="environment steps per trial (>= 1)")
    ap.add_argument("--out", type=Path, required=True,
                    help="sweep folder (run the same command again to resume)")
    ap.add_argument("--hp", type=assignment, action="append", default=[],
                    help="hyperparameter override NAME=VALUE for every trial (repeatable)")
    ap.add_argument("--env-kwarg", type=assignment, action="append", default=[],
                    help="environment argument NAME=VALUE for every trial (repeatable)")
    ap.add_argument("--eval-episodes", type=positive_int_arg, default=20,
                    help="held-out evaluation episodes per model (default 20)")
    ap.add_argument("--address", default=None,
                    help="Ray cluster to join (ray://host:10001 or host:6379); default: a "
                         "local Ray instance on this machine's cores")
    ap.add_argument("--cpus-per-trial", type=positive_int_arg, default=1,
                    help="CPUs each trial asks Ray for and its torch threads (default 1)")
    ap.add_argument("--max-concurrent", type=positive_int_arg, default=None,
                    help="trials running at once at most (default: as many as the CPUs allow)")
    args = ap.parse_args(argv)
    try:
        check(args.envs, args.algo, args.seeds, args.timesteps, args.out, dict(args.hp),
              dict(args.env_kwarg), args.eval_episodes, args.cpus_per_trial)
    except (ValueError, MissingExtra) as e:
        ap.error(str(e))
    result = sweep(args.envs, args.algo, args.seeds, args.timesteps, args.out, dict(args.hp),
                   dict(args.env_kwarg), args.eval_episodes, args.address,
                   args.cpus_per_trial, args.max_concurrent, argv=argv)
    if result["report"] is not None:
        print(result["report"])
    if result["errors"]:
        print(f"{len(result['errors'])} trial(s) failed or were interrupted:", *result["errors"],
              sep="\n", file=sys.stderr)
    if result["finished"] < result["trials"]:
        raise SystemExit(1)
    return result


if __name__ == "__main__":
    main()
