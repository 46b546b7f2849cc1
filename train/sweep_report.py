"""The report of a sweep (``python -m traction.train.sweep``), and the results page from it::

    python -m traction.train.sweep_report runs/sweep [runs/sweep2 ...] [--docs docs/results.md]

Reads every finished trial of the sweep folders (``runs/*/trial.json``, each run's
``evaluations.npz``; several folders: sweeps run apart, e.g. one per task with its own number
of steps) and writes ``OUT/report/`` (``OUT``: the first folder):

- ``report.json``: per task, the IQM over seeds of the success rate and of the mean return of
  the final model and of the best checkpoint (held-out episodes), each with its 95 %
  stratified-bootstrap CI (:mod:`traction.train.stats`, rliable); the IQM learning curves
  (training's evaluations) with CI bands; each seed's first evaluation at >= 80 % success;
  every trial's figures (wall time, training steps/s); over all tasks, the success IQM and
  the performance profiles (fraction of runs above each success rate);
- ``report.md`` (the tables), ``curves.png`` (success and return vs steps per task: IQM, CI
  band, each seed faint) and ``profile.png`` (performance profiles with CI bands).

``--docs FILE`` also writes the report's tables into ``FILE`` between the lines
``<!-- sweep-report:begin -->`` and ``<!-- sweep-report:end -->`` (added after the file's title
when it has none; the rest of the file is kept as it is) and copies the PNGs to
``FILE``'s folder under ``results/``; ``--section NAME`` writes a block of its own instead
(between ``<!-- sweep-report:NAME:begin -->`` and ``...:end -->``, added at the file's end
the first time; PNGs ``sweep_NAME_*.png``), e.g. the sensor-trained agents beside the main
table. A sweep with environment arguments (``--env-kwarg obs_mode=pixels``) reports its task
as ``Traction/TankTurn-v1 (obs_mode=pixels)``: another task for the agent. The sweep command
writes the report itself; this command writes it again (after adding trials by hand, or to
write the docs).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
from pathlib import Path

import numpy as np

from traction.train import stats
from traction.train.checks import MissingExtra, positive_int_arg, require, writable_file

#: a seed "reaches" a task at its first training evaluation with at least this success rate
REACHED = 0.8
BEGIN, END = "<!-- sweep-report:begin -->", "<!-- sweep-report:end -->"
MODELS = ("final", "best")


def _folders(out) -> list[Path]:
    """``out`` as a list of sweep folders (one folder, or several)."""
    return [Path(out)] if isinstance(out, str | Path) else [Path(o) for o in out]


def load_trials(out) -> list[dict]:
    """The finished trials of the sweep folder ``out`` (or of each folder of a list), sorted by
    task and seed, each with its evaluation curve (``curve``: ``timesteps``, ``success``,
    ``return``)."""
    trials = []
    paths = [(p, label) for folder in _folders(out) for label in [_label(folder)]
             for p in sorted(folder.glob("runs/*/trial.json"))]
    for path, label in paths:
        trial = json.loads(path.read_text())
        trial["task"], trial["run"] = trial["env_id"] + label, str(path.parent)
        evals = np.load(path.parent / "evaluations.npz")
        success = evals["successes"].mean(axis=1) if evals["successes"].size else \
            np.full(len(evals["timesteps"]), np.nan)
        trial["curve"] = {"timesteps": evals["timesteps"].astype(int),
                          "success": success, "return": evals["results"].mean(axis=1)}
        trials.append(trial)
    return sorted(trials, key=lambda t: (t["task"], t["seed"]))


def _label(folder: Path) -> str:
    """What the report adds to the task's id for a sweep with environment arguments
    (``obs_mode=pixels``: another task for the agent, reported apart)."""
    import yaml

    path = folder / "sweep.yml"
    kwargs = (yaml.safe_load(path.read_text()) or {}).get("env_kwargs") if path.is_file() else None
    if not kwargs:
        return ""
    return " (" + ", ".join(f"{k}={v}" for k, v in kwargs.items()) + ")"


def at_budget(out, steps: int) -> dict:
    """Each task's success at an equal budget of ``steps`` environment steps: every trial's
    checkpoint saved at or before them (a trial that ran no longer: its final model, as
    evaluated), on the sweep's held-out episodes (``eval_episodes`` from ``eval_seed``; the
    result is kept in the run's ``evaluations/checkpoint_<steps>/`` and read again); IQM over
    seeds with its CI. Runs that trained for different budgets compare here."""
    import yaml

    from traction.train import evaluate

    rows: dict[str, list] = {}
    for t in load_trials(out):
        run = Path(t["run"])
        if t["timesteps"] <= steps:
            k, success = t["timesteps"], t["final"]["success_rate"]
        else:
            sweep = yaml.safe_load((run.parent.parent / "sweep.yml").read_text())
            episodes, seed = sweep["eval_episodes"], sweep["eval_seed"]
            k = evaluate.checkpoint(run, evaluate.at_steps(steps))[0]
            kept = run / "evaluations" / f"checkpoint_{k}" / "evaluation.json"
            result = json.loads(kept.read_text()) if kept.is_file() else {}
            if result.get("episodes") != episodes or result.get("seed") != seed:
                result = evaluate.evaluate(run, episodes, seed=seed, model=evaluate.at_steps(steps))
            success = result["success_rate"]
        rows.setdefault(t["task"], []).append((t["seed"], k, success))
    return {task: {"steps": steps, "seeds": [r[0] for r in rs], "model_steps": [r[1] for r in rs],
                   "success": _iqm(np.array([[r[2]] for r in rs]))} for task, rs in rows.items()}


def first_reached(curve: dict, level: float = REACHED) -> int | None:
    """Environment steps of the first evaluation with success >= ``level`` (None: never)."""
    hits = np.flatnonzero(np.nan_to_num(curve["success"]) >= level)
    return int(curve["timesteps"][hits[0]]) if hits.size else None


def _iqm(scores) -> dict:
    """IQM of ``(runs, tasks)`` scores with its CI, as the report's JSON holds it (the plain
    mean beside it, for reference)."""
    i = stats.interval(scores, "iqm", reps=stats.REPS)
    return {"iqm": i.value, "ci_low": i.lo, "ci_high": i.hi,
            "mean": float(np.mean(scores)), "runs": i.n}


def _lists(intervals) -> dict:
    return {"ci_low": [i.lo for i in intervals], "ci_high": [i.hi for i in intervals]}


def _task_report(trials: list[dict]) -> dict:
    scores = {(m, k): np.array([[t[m][key]] for t in trials])
              for m in MODELS for k, key in (("success", "success_rate"),
                                             ("return", "mean_return"))}
    n = min(len(t["curve"]["timesteps"]) for t in trials)     # (equal unless settings differ)
    curve = {"timesteps": trials[0]["curve"]["timesteps"][:n].tolist()}
    for k in ("success", "return"):
        points = stats.iqm_curve(np.stack([t["curve"][k][:n] for t in trials])[:, None],
                                 reps=stats.REPS)
        curve[k] = {"iqm": [i.value for i in points], **_lists(points)}
    reached = [first_reached(t["curve"]) for t in trials]
    return {
        "seeds": [t["seed"] for t in trials],
        "timesteps": max(t.get("timesteps", 0) for t in trials),
        **{m: {k: _iqm(scores[m, k]) for k in ("success", "return")} for m in MODELS},
        "curve": curve,
        "seeds_reaching": sum(r is not None for r in reached),
        "trials": [{"seed": t["seed"], "steps_to_80": r,
                    **{f"{m}_{k}": t[m][key] for m in MODELS
                       for k, key in (("success", "success_rate"), ("return", "mean_return"))},
                    "wall_seconds": t["wall_seconds"], "train_steps_per_s": t["train_steps_per_s"],
                    "host": t.get("host")}
                   for t, r in zip(trials, reached, strict=True)]}


def _settings(folders: list[Path]) -> dict:
    """The sweeps' settings (``sweep.yml``): a setting the folders disagree on is None (the
    steps per run are then given per task)."""
    import yaml

    each = [yaml.safe_load((f / "sweep.yml").read_text()) if (f / "sweep.yml").is_file() else {}
            for f in folders]
    keys = dict.fromkeys(k for s in each for k in s)
    return {k: each[0].get(k) if all(s.get(k) == each[0].get(k) for s in each) else None
            for k in keys}


def summarize(out, steps: int | None = None) -> dict:
    """The report of the sweep folder ``out`` (or of a list of folders; see the module
    docstring), as JSON-ready data; with ``steps``, also every task's success at that equal
    budget (:func:`at_budget`).

    Raises:
        ValueError: no folder holds a finished trial, or two hold the same task and seed.
    """
    folders = _folders(out)
    trials = load_trials(folders)
    if not trials:
        raise ValueError(f"{', '.join(map(str, folders))}: no finished trial "
                         "(runs/*/trial.json); run python -m traction.train.sweep first")
    keys = [(t["task"], t["seed"]) for t in trials]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ValueError(f"the sweep folders hold the same trial twice: {twice}")
    settings = _settings(folders)
    tasks = {}
    for task in dict.fromkeys(t["task"] for t in trials):
        tasks[task] = _task_report([t for t in trials if t["task"] == task])
    report = {"settings": settings, "tasks": tasks, "reached_level": REACHED,
              "bootstrap_reps": stats.REPS}
    runs = {len(r["seeds"]) for r in tasks.values()}
    if len(runs) == 1:                      # rliable's matrices need as many runs per task
        success = {m: np.array([[t[f"{m}_success"] for t in r["trials"]]
                                for r in tasks.values()]).T for m in MODELS}
        report["all_tasks"] = {m: _iqm(success[m]) for m in MODELS}
        report["profiles"] = {"taus": stats.TAUS.tolist()}
        for m, s in success.items():
            profile = stats.performance_profile(s, reps=stats.REPS)
            report["profiles"]["final model" if m == "final" else "best checkpoint"] = {
                "fraction": [i.value for i in profile], **_lists(profile)}
    report["commands"] = [line for f in folders if (f / "commands.txt").is_file()
                          for line in (f / "commands.txt").read_text().splitlines()]
    if steps is not None:
        report["at_steps"] = at_budget(folders, steps)
    return report


def _portable(command: str) -> str:
    """A recorded command as a reader types it: ``python -m ...``, not this machine's
    interpreter path (``commands.txt`` keeps the path, which says which install ran it)."""
    words = shlex.split(command)
    if len(words) > 2 and words[1] == "-m":
        words[0] = "python"
    return shlex.join(words)


def _ci(e: dict, percent: bool) -> str:
    if percent:
        return f"{100 * e['iqm']:.0f} % [{100 * e['ci_low']:.0f}, {100 * e['ci_high']:.0f}]"
    return f"{e['iqm']:.1f} [{e['ci_low']:.1f}, {e['ci_high']:.1f}]"


def _steps(n: int | None) -> str:
    return "never" if n is None else f"{n:,}"


def markdown(report: dict, images: str = ".") -> str:
    """The report's tables and figures as markdown (``images``: the PNGs' folder, relative to
    where the text goes)."""
    s = report["settings"]
    steps = (f"{s['timesteps']:,} environment steps per run" if s.get("timesteps")
             else "the environment steps per run in the table")
    lines = [f"{(s.get('algo') or '?').upper()}, {steps}; success rates and returns over "
             f"{s.get('eval_episodes', '?')} held-out "
             f"deterministic episodes per model (seeds from {s.get('eval_seed', '?')}); IQM over "
             f"seeds with 95 % stratified-bootstrap CIs (rliable, {report['bootstrap_reps']} "
             "replications). Hyperparameters: `train/hyperparams/"
             f"{s.get('algo', 'ppo')}.yml`" + (f", overrides {s['hp']}" if s.get("hp") else "")
             + (f"; environment arguments {s['env_kwargs']}" if s.get("env_kwargs") else "")
             + ".", ""]
    if report["commands"]:
        lines += ["```sh", *map(_portable, report["commands"]), "```", ""]
    lines += ["| task | seeds | steps per run | success, final model | success, best checkpoint "
              "| return, final model | return, best checkpoint | seeds at >= 80 % in training's "
              "evaluations |", "|---|---|---|---|---|---|---|---|"]
    for env_id, r in report["tasks"].items():
        lines.append(f"| {env_id} | {len(r['seeds'])} | {r['timesteps']:,} | "
                     f"{_ci(r['final']['success'], True)} | "
                     f"{_ci(r['best']['success'], True)} | {_ci(r['final']['return'], False)} | "
                     f"{_ci(r['best']['return'], False)} | {r['seeds_reaching']} of "
                     f"{len(r['seeds'])} |")
    if "all_tasks" in report:
        a = report["all_tasks"]
        lines += ["", f"All tasks together (IQM of success over every run of every task): final "
                      f"model {_ci(a['final'], True)}, best checkpoint {_ci(a['best'], True)}."]
    if report.get("at_steps"):
        budget = next(iter(report["at_steps"].values()))["steps"]
        lines += ["", f"At an equal budget of {budget:,} environment steps (each run's checkpoint "
                      "saved at or before them, or the final model of a run that trained no "
                      "longer; the same held-out episodes):", "",
                  "| task | seeds | model at (steps) | success |", "|---|---|---|---|"]
        for task, r in report["at_steps"].items():
            at = sorted(set(r["model_steps"]))
            lines.append(f"| {task} | {len(r['seeds'])} | "
                         f"{', '.join(f'{k:,}' for k in at)} | {_ci(r['success'], True)} |")
    lines += ["", f"![learning curves]({images}/curves.png)"]
    if "profiles" in report:
        lines += ["", f"![performance profile]({images}/profile.png)"]
    lines += ["", "| task | seed | success, final | return, final | success, best | return, best "
                  "| steps to 80 % | wall time | training steps/s |", "|---|---|---|---|---|---|---|---|---|"]
    for env_id, r in report["tasks"].items():
        for t in r["trials"]:
            lines.append(f"| {env_id} | {t['seed']} | {100 * t['final_success']:.0f} % | "
                         f"{t['final_return']:.1f} | {100 * t['best_success']:.0f} % | "
                         f"{t['best_return']:.1f} | {_steps(t['steps_to_80'])} | "
                         f"{t['wall_seconds'] / 60:.1f} min | {t['train_steps_per_s']:.0f} |")
    return "\n".join(lines) + "\n"


def plot(report: dict, trials: list[dict], folder: Path) -> list[Path]:
    """``curves.png`` and (with equal runs per task) ``profile.png`` in ``folder``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = report["tasks"]
    fig, axes = plt.subplots(len(tasks), 2, figsize=(10, 3.2 * len(tasks)), squeeze=False)
    for row, (task, r) in zip(axes, tasks.items(), strict=True):
        steps = np.array(r["curve"]["timesteps"])
        for ax, key, scale, label in ((row[0], "success", 100, "evaluation success (%)"),
                                      (row[1], "return", 1, "evaluation return")):
            for t in trials:
                if t["task"] == task:
                    ax.plot(t["curve"]["timesteps"], scale * t["curve"][key], color="0.6",
                            lw=0.6, alpha=0.5)
            c = r["curve"][key]
            ax.plot(steps, scale * np.array(c["iqm"]), color="C0", label="IQM over seeds")
            ax.fill_between(steps, scale * np.array(c["ci_low"]), scale * np.array(c["ci_high"]),
                            color="C0", alpha=0.25, label="95 % CI")
            ax.set(xlabel="environment steps", ylabel=label)
            # (a sweep's environment arguments on a line of their own)
            ax.set_title(task.replace(" (", "\n(", 1) + f" ({len(r['seeds'])} seeds)",
                         fontsize="small")
            ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
        row[0].set_ylim(-5, 105)
        row[0].legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / "curves.png"]
    fig.savefig(paths[0], dpi=90)
    plt.close(fig)
    if "profiles" in report:
        taus = 100 * np.array(report["profiles"]["taus"])
        fig, ax = plt.subplots(figsize=(6, 4))
        for i, (name, p) in enumerate((k, v) for k, v in report["profiles"].items()
                                      if k != "taus"):
            ax.plot(taus, p["fraction"], color=f"C{i}", label=name)
            ax.fill_between(taus, p["ci_low"], p["ci_high"], color=f"C{i}", alpha=0.2)
        ax.set(xlabel="success rate tau (%)", ylabel="fraction of runs with success > tau",
               title="performance profile, all tasks", ylim=(-0.02, 1.02))
        ax.legend()
        fig.tight_layout()
        paths.append(folder / "profile.png")
        fig.savefig(paths[1], dpi=90)
        plt.close(fig)
    return paths


def write_report(out, steps: int | None = None) -> str:
    """Write ``out/report/`` (``report.json``, ``report.md``, PNGs; ``out`` a folder, or a list
    whose first folder gets the report; ``steps``: :func:`at_budget` too); returns the
    markdown."""
    report = summarize(out, steps)
    folder = _folders(out)[0] / "report"
    plot(report, load_trials(out), folder)
    text = markdown(report)
    (folder / "report.md").write_text("# Sweep report\n\n" + text)
    (folder / "report.json").write_text(json.dumps(report, indent=2))
    return text


def markers(section: str | None = None) -> tuple[str, str]:
    """The lines a report's block sits between in the results page (``section``: a block of its
    own, e.g. ``sensors``)."""
    if section is None:
        return BEGIN, END
    return f"<!-- sweep-report:{section}:begin -->", f"<!-- sweep-report:{section}:end -->"


def write_docs(out, docs: Path, section: str | None = None, steps: int | None = None) -> Path:
    """Write the sweep's report (``out``: a folder or a list of them) into the results page
    ``docs`` (between the markers; see the module docstring; with ``section``, a block of that
    name, added at the page's end the first time) and its PNGs into ``docs``' folder under
    ``results/`` (``steps``: :func:`at_budget` too)."""
    docs = Path(docs)
    report = summarize(out, steps)
    images = docs.parent / "results"
    prefix = "sweep_" if section is None else f"sweep_{section}_"
    for path in plot(report, load_trials(out), _folders(out)[0] / "report"):
        images.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, images / f"{prefix}{path.name}")
    begin, end = markers(section)
    block = (f"{begin}\n<!-- written by python -m traction.train.sweep_report; edits here are "
             f"overwritten -->\n\n" + markdown(report, "results").replace(
                 "results/curves.png", f"results/{prefix}curves.png").replace(
                 "results/profile.png", f"results/{prefix}profile.png") + f"\n{end}")
    text = docs.read_text() if docs.is_file() else "# Results\n"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + block + rest.split(end, 1)[1]
    elif section is not None:
        text = text.rstrip("\n") + f"\n\n{block}\n"
    else:
        first, _, rest = text.partition("\n")
        text = f"{first}\n\n{block}\n{rest}"
    docs.write_text(text)
    return docs


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description="Report of a Traction sweep (IQM with 95 % CIs).")
    ap.add_argument("sweep", type=Path, nargs="+",
                    help="the sweep's --out folder (several: one report of their trials)")
    ap.add_argument("--docs", type=Path, default=None,
                    help="also write the tables into this markdown page (docs/results.md)")
    ap.add_argument("--at-steps", type=positive_int_arg, default=None, metavar="N",
                    help="also each task's success at N environment steps (every run's "
                         "checkpoint at or before them, evaluated on the held-out episodes): "
                         "an equal budget for sweeps of different lengths")
    ap.add_argument("--section", default=None,
                    help="with --docs: the page's block of this name (e.g. sensors) instead "
                         "of the main one")
    args = ap.parse_args(argv)
    try:
        require("sweep_report", "rliable", "matplotlib")
        missing = [str(f) for f in args.sweep if not f.is_dir()]
        if missing:
            raise ValueError(f"{', '.join(missing)}: not found")
        if args.docs is not None:
            writable_file(args.docs, "--docs")
        if args.section is not None and args.docs is None:
            raise ValueError("--section goes with --docs (the page whose block it names)")
        if args.section is not None and not re.fullmatch(r"[a-z0-9_-]+", args.section):
            raise ValueError(f"--section {args.section!r}: lower-case letters, digits, - and _")
        text = write_report(args.sweep, args.at_steps)
    except (ValueError, MissingExtra) as e:
        ap.error(str(e))
    if args.docs is not None:
        write_docs(args.sweep, args.docs, args.section, args.at_steps)
    print(text)
    return text


if __name__ == "__main__":
    main()
