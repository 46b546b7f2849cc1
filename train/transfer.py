"""Transfer: agents trained in one setting, evaluated in others (domain randomisation and the
tyre-model fidelity ladder)::

    python -m traction.train.transfer runs/tank_nominal runs/tank_mild [--eval nominal
        randomize=wide tire_model=arcade ...] [--episodes 20] [--docs docs/results.md]

Each folder is a sweep (``python -m traction.train.sweep``, e.g. one with ``--env-kwarg
randomize=mild``): its training setting is its ``sweep.yml``'s ``env_kwargs`` (``nominal``
when empty). Every trial's final model is evaluated on held-out episodes (seeds from
1,000,000, as the sweep's) in every evaluation setting (``--eval``: ``nominal``, or
``NAME=VALUE[,NAME=VALUE]``; by default nominal, ``randomize=wide`` and every rung of the tyre
ladder), each evaluation kept beside its model (``evaluations/<setting>/evaluation.json``,
reused while the model file and the setting are the same, so an interrupted report resumes).
A setting names ``randomize`` and ``tire_model`` in full: one it leaves out is evaluated at the
task's default, whatever the row trained with. Per task, the matrix trained-on x evaluated-on
holds the IQM over seeds of the success rate with its 95 % stratified-bootstrap CI (rliable,
:mod:`traction.train.stats`) and the return's. Writes ``OUT/transfer/transfer.json`` and
``transfer.md`` (``OUT``: the first folder); ``--docs FILE`` also writes the tables into
``FILE`` between ``<!-- transfer:begin -->`` and ``<!-- transfer:end -->``.
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

import numpy as np

from traction.envs.base import TIRE_LADDER
from traction.train import stats
from traction.train.checks import MissingExtra, positive_int_arg, require, writable_file
from traction.train.hparams import assignment
from traction.train.sweep import EVAL_SEED

BEGIN, END = "<!-- transfer:begin -->", "<!-- transfer:end -->"
NOMINAL = "nominal"


def setting_arg(text: str) -> dict:
    """argparse type of ``--eval``: ``nominal`` -> ``{}``; ``a=1,b=x`` -> ``{"a": 1, "b": "x"}``
    (values read as ``--env-kwarg`` reads them)."""
    if text == NOMINAL:
        return {}
    try:
        return dict(assignment(part) for part in text.split(","))
    except (ValueError, argparse.ArgumentTypeError) as e:
        raise argparse.ArgumentTypeError(f"{text!r}: {e}; expected 'nominal' or "
                                         "NAME=VALUE[,NAME=VALUE]") from None


def setting_name(kwargs: dict) -> str:
    """How a setting is shown and kept: ``nominal``, or ``NAME=VALUE,...`` sorted by name."""
    from traction.train.evaluate import override_name

    return override_name(kwargs) if kwargs else NOMINAL


def default_settings() -> list[dict]:
    """Nominal, the wide randomisation, and every tyre model of the ladder."""
    return [{}, {"randomize": "wide"}, *({"tire_model": m} for m in TIRE_LADDER)]


def _sweep_setting(folder: Path) -> dict:
    import yaml

    path = folder / "sweep.yml"
    if not path.is_file():
        raise ValueError(f"{folder}: no sweep.yml (not a folder of python -m "
                         "traction.train.sweep)")
    return dict(yaml.safe_load(path.read_text()).get("env_kwargs") or {})


#: the arguments a setting stands for in full: one it leaves out is the task's default (a
#: ``nominal`` column of a row trained with ``randomize=mild`` is evaluated without it)
SETTING_KEYS = ("randomize", "tire_model")


def evaluate_trial(run: Path, setting: dict, episodes: int) -> dict:
    """The final model of ``run`` in ``setting`` (the run's other environment arguments kept,
    :data:`SETTING_KEYS` replaced; kept in ``evaluations/<setting>/``, read back when it is of
    this model file, setting, episode count and seeds)."""
    from traction.train.evaluate import evaluate

    overrides = {**dict.fromkeys(SETTING_KEYS), **setting}
    out = run / "evaluations" / setting_name(setting)
    kept = out / "evaluation.json"
    model = (run / "model.zip").stat()
    stamp = {"seed": EVAL_SEED, "model_mtime_ns": model.st_mtime_ns, "model_size": model.st_size}
    if kept.is_file():
        result = json.loads(kept.read_text())
        if (result.get("episodes") == episodes and result.get("env_overrides") == overrides
                and all(result.get(k) == v for k, v in stamp.items())):
            return result
    result = {**evaluate(run, episodes, seed=EVAL_SEED, out=out, env_overrides=overrides),
              **stamp}
    kept.write_text(json.dumps(result, indent=2))
    return result


def summarize(folders: list[Path], settings: list[dict], episodes: int) -> dict:
    """Per task, every (training setting, evaluation setting) cell: each seed's success rate and
    mean return, their IQM with 95 % CIs.

    Raises:
        ValueError: a folder that is not a sweep or holds no finished trial, or a task's seed
            trained in one setting in two folders (folders of one setting with other seeds are
            pooled).
    """
    cells: dict[str, dict[str, dict[str, dict]]] = {}
    for folder in folders:
        trained = setting_name(_sweep_setting(folder))
        runs = sorted(p.parent for p in folder.glob("runs/*/trial.json"))
        if not runs:
            raise ValueError(f"{folder}: no finished trial (runs/*/trial.json)")
        for run in runs:
            trial = json.loads((run / "trial.json").read_text())
            task = cells.setdefault(trial["env_id"], {})
            if trial["seed"] in task.get(trained, {}).get("_seeds", ()):
                raise ValueError(f"{trial['env_id']}, trained {trained}, seed {trial['seed']}: "
                                 "in two folders")
            row = task.setdefault(trained, {"_seeds": []})
            row["_seeds"].append(trial["seed"])
            for setting in settings:
                r = evaluate_trial(run, setting, episodes)
                cell = row.setdefault(setting_name(setting), {"success": [], "return": []})
                cell["success"].append(r["success_rate"])
                cell["return"].append(r["mean_return"])
    report = {"episodes": episodes, "eval_seed": EVAL_SEED,
              "evaluated_in": [setting_name(s) for s in settings], "tasks": {}}
    for env_id, rows in cells.items():
        out = report["tasks"][env_id] = {}
        for trained, row in rows.items():
            seeds = row.pop("_seeds")
            out[trained] = {"seeds": seeds}
            for evaluated, cell in row.items():
                out[trained][evaluated] = {k: {**_iqm(v), "per_seed": v} for k, v in cell.items()}
    return report


def _iqm(values) -> dict:
    i = stats.interval(np.asarray(values, float)[:, None], "iqm")
    return {"iqm": i.value, "ci_low": i.lo, "ci_high": i.hi, "runs": i.n}


def markdown(report: dict, commands: list[str]) -> str:
    """The matrices as markdown tables, one per task: success IQM [95 % CI], return IQM."""
    lines = [f"Final models, {report['episodes']} held-out deterministic episodes per seed and "
             f"setting (seeds from {report['eval_seed']:,}); IQM over seeds of the success rate "
             "[95 % stratified-bootstrap CI] and of the return (rliable). Rows: the setting "
             "trained in; columns: the setting evaluated in.", "", "```sh", *commands, "```"]
    for env_id, rows in report["tasks"].items():
        cols = report["evaluated_in"]
        lines += ["", f"**{env_id}**", "",
                  "| trained in (seeds) | " + " | ".join(cols) + " |",
                  "|---|" + "---|" * len(cols)]
        for trained, row in rows.items():
            cells = []
            for c in cols:
                s, r = row[c]["success"], row[c]["return"]
                cells.append(f"{100 * s['iqm']:.0f} % [{100 * s['ci_low']:.0f}, "
                             f"{100 * s['ci_high']:.0f}], {r['iqm']:.1f}")
            lines.append(f"| {trained} ({len(row['seeds'])}) | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_docs(text: str, docs: Path) -> None:
    """``text`` into ``docs`` between :data:`BEGIN` and :data:`END` (appended if absent)."""
    old = docs.read_text() if docs.is_file() else ""
    block = f"{BEGIN}\n<!-- written by python -m traction.train.transfer; edits here are " \
            f"overwritten -->\n\n{text}\n{END}"
    if BEGIN in old and END in old:
        new = old[:old.index(BEGIN)] + block + old[old.index(END) + len(END):]
    else:
        new = old.rstrip("\n") + "\n\n" + block + "\n"
    docs.write_text(new)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description="Agents evaluated in other settings than they "
                                             "trained in: the trained-on x evaluated-on matrix.")
    ap.add_argument("folders", type=Path, nargs="+", help="sweep folders (one per training "
                    "setting and task)")
    ap.add_argument("--eval", type=setting_arg, nargs="+", default=None, metavar="SETTING",
                    help="settings to evaluate in: nominal, or NAME=VALUE[,NAME=VALUE] "
                         "(default: nominal, randomize=wide and every tyre model)")
    ap.add_argument("--episodes", type=positive_int_arg, default=20,
                    help="held-out episodes per model and setting (default 20)")
    ap.add_argument("--docs", type=Path, default=None, help="also write the tables into this "
                    "markdown file (between the transfer markers)")
    args = ap.parse_args(argv)
    try:
        require("transfer", "stable_baselines3", "rliable")
        for folder in args.folders:
            _sweep_setting(folder)                     # refuse a wrong folder before evaluating
        if args.docs is not None:
            writable_file(args.docs)
        settings = args.eval if args.eval is not None else default_settings()
        report = summarize(args.folders, settings, args.episodes)
    except (ValueError, MissingExtra) as e:
        ap.error(str(e))
    command = "python -m traction.train.transfer " + " ".join(
        shlex.quote(str(a)) for a in (argv if argv is not None else __import__("sys").argv[1:]))
    out = args.folders[0] / "transfer"
    out.mkdir(parents=True, exist_ok=True)
    (out / "transfer.json").write_text(json.dumps(report, indent=2))
    text = markdown(report, [command])
    (out / "transfer.md").write_text(text)
    if args.docs is not None:
        write_docs(text, args.docs)
    print(text)
    return report


if __name__ == "__main__":
    main()
