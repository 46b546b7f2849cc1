"""Benchmark harness: any controller over a fixed scenario suite, with confidence intervals, a
comparison with a baseline and a CI gate::

    python -m traction.train.benchmark --controller CTL [--suite standard|quick] [--tasks ...]
        [--episodes N] [--compare BASELINE.json [--fail-if-worse METRIC[:TOLERANCE]]]
        [--video [VARIANT ...]]
        --out DIR

``CTL``: ``scripted`` (the default), ``MODULE:FACTORY`` (a module or ``.py`` file and a
function in it that makes a controller from a :class:`~traction.train.policy.TaskSpec`) or a
training run folder (``--model final|best``); ``--pretrained ID`` a published agent (see
``policy.py``). Suites, variants and scenarios: ``suites.py``; metrics: ``task_metrics.py``;
intervals: ``stats.py`` (rliable). ``make demo`` is the scripted controllers on the
``standard`` suite with a video per task.

Writes to ``--out``: ``benchmark.json`` (every episode's scenario and metrics, every
aggregate with its 95 % interval, the comparison; schema :data:`SCHEMA_VERSION`, documented in
docs/evaluating.md and checked by :func:`validate`), ``benchmark.md`` (tables and the plots:
``trajectories.png``, ``telemetry.png``, ``intervals.png``), ``junit.xml`` (a test case per
variant, failed where the gate finds it worse) and, with ``--video``, ``<variant>.mp4`` (its
first episode; of every variant, or of the variants named: rendering costs far more than the
physics). Exit status: 0; 1 when ``--fail-if-worse`` finds a metric worse than the
baseline beyond its interval; 2 for bad arguments (before any episode runs).
"""

from __future__ import annotations

import argparse
import copy
import importlib.metadata
import json
import shlex
import sys
import time
import zlib
from datetime import UTC, datetime
from pathlib import Path

import gymnasium as gym
import numpy as np

import traction.envs  # noqa: F401  (registers the ids)
from traction.train import stats
from traction.train.checks import MissingExtra, positive_int_arg, require, writable_dir
from traction.train.policy import ControllerError, ControllerSource, TaskSpec, resolve
from traction.train.suites import SUITES, Suite, Variant, get_suite, select
from traction.train.task_metrics import EpisodeRecorder, metrics_of, telemetry_capacity

#: version of benchmark.json's layout (docs/evaluating.md, "benchmark.json")
SCHEMA_VERSION = 1
#: optional dependencies: plots (the plot extra), intervals (stats); videos (render) with --video
NEEDS = ("matplotlib", "rliable")
#: the videos hold every FRAME_EVERY-th control step's frame
FRAME_EVERY = 2
VIDEO_SIZE = (480, 360)


# --- running ---------------------------------------------------------------------------------
def _build(variant: Variant, render: bool, engine_work: bool):
    """The variant's env; with ``engine_work``, keeping the telemetry of a whole episode."""
    extra = {"render_mode": "rgb_array", "width": VIDEO_SIZE[0], "height": VIDEO_SIZE[1]} \
        if render else {}
    env = gym.make(variant.env_id, **variant.kwargs, **extra)
    if not engine_work:
        return env
    capacity = telemetry_capacity(env)
    env.close()
    return gym.make(variant.env_id, telemetry=capacity, **variant.kwargs, **extra)


def task_spec(env, variant: Variant) -> TaskSpec:
    """What a controller factory is told about ``variant`` (built as ``env``)."""
    return TaskSpec(env_id=variant.env_id, variant=variant.name,
                    env_kwargs=dict(variant.kwargs), observation_space=env.observation_space,
                    action_space=env.action_space, control_dt=env.unwrapped.control_dt,
                    max_episode_steps=env.spec.max_episode_steps)


def run_episode(env, controller, scenario, frames: list | None = None) -> tuple[dict, dict]:
    """One episode of ``scenario``; returns its metrics and track (``task_metrics``; the
    track's ``speed`` has the reset's value and one per step). With ``frames``, appends every
    FRAME_EVERY-th step's frame."""
    recorder = EpisodeRecorder(env)
    if hasattr(controller, "reset"):
        controller.reset()
    obs, info = env.reset(seed=scenario.seed, options=copy.deepcopy(scenario.options))
    recorder.start(obs, info)
    while True:
        obs, reward, terminated, truncated, info = env.step(controller(obs))
        recorder.step(obs, reward, info)
        if frames is not None and recorder.steps % FRAME_EVERY == 0:
            frames.append(env.render())
        if terminated or truncated:
            return recorder.finish()


def run(source: ControllerSource, suite: Suite, variants: list[Variant], out: Path,
        episodes: int | None = None, videos: tuple[str, ...] = (), reps: int = stats.REPS,
        progress: bool = True, command: str = "",
        engine_work: bool = True) -> tuple[dict, dict]:
    """Run ``episodes`` (the suite's count by default) of every variant with the controller of
    ``source``; returns the report (benchmark.json's content, not yet written) and the tracks
    (variant -> the episodes' tracks, for the plots). Every env and controller is built before
    the first episode, so a controller that refuses a variant stops the run at once.
    ``engine_work``: record every physics substep's engine torque and speed for the
    ``engine_work`` metric (about half the run's time; without, that metric is left out).

    Raises:
        MissingExtra: matplotlib, rliable (or, with ``videos``, imageio) is not installed.
        ControllerError: the factory refuses a variant (Unsupported) or makes no callable.
        Exception: a controller's own error in an episode, with a note naming the episode.
    """
    require("benchmark", *NEEDS, *(("imageio",) if videos else ()))
    n = episodes or suite.episodes
    built = []
    for variant in variants:
        env = _build(variant, variant.name in videos, engine_work)
        built.append((variant, env, source.make(task_spec(env, variant))))
    total, done, t0 = n * len(built), 0, time.time()
    report = {"schema_version": SCHEMA_VERSION, "tool": "traction.train.benchmark",
              "created": datetime.now(UTC).isoformat(timespec="seconds"), "command": command,
              "traction_version": importlib.metadata.version("traction-gym"),
              "controller": source.as_dict(),
              "suite": {"name": suite.name, "version": suite.version, "episodes": n},
              "statistics": {"library": f"rliable {importlib.metadata.version('rliable')}",
                             "method": f"stratified bootstrap, {stats.METHOD} interval",
                             "confidence": stats.CONFIDENCE, "reps": reps},
              "variants": {}, "comparison": None}
    tracks = {}
    for variant, env, controller in built:
        metrics, results, t_variant = metrics_of(env), [], time.time()
        tracks[variant.name] = []
        for k, scenario in enumerate(variant.scenarios(n)):
            frames = [] if variant.name in videos and k == 0 else None
            try:
                values, track = run_episode(env, controller, scenario, frames)
            except Exception as e:
                e.add_note(f"in benchmark episode {scenario.id} (seed {scenario.seed}, options "
                           f"{scenario.options}) with controller {source.spec}")
                raise
            results.append({"scenario": scenario.as_dict(), "steps": len(track["speed"]) - 1,
                            "metrics": values})
            tracks[variant.name].append(track)
            if frames:
                _write_video(out / f"{variant.name}.mp4", frames, env)
            done += 1
            if progress:
                rate = (time.time() - t0) / done
                print(f"\r[{'#' * int(30 * done / total):<30}] {done}/{total} episodes "
                      f"({variant.name}) eta {rate * (total - done):4.0f} s", end="",
                      file=sys.stderr)
        env.close()
        report["variants"][variant.name] = {
            "env_id": variant.env_id, "kwargs": dict(variant.kwargs),
            "description": variant.description, "expected_to_fail": variant.expected_to_fail,
            "wall_time": round(time.time() - t_variant, 3),
            "metrics": {m.name: m.as_dict() for m in metrics},
            "aggregates": {m.name: aggregate(results, m.name, reps).as_dict()
                           for m in metrics},
            "episodes": results}
    if progress:
        print(file=sys.stderr)
    return report, tracks


def _write_video(path: Path, frames: list, env) -> None:
    from traction.scenes.video import VideoWriter

    fps = env.metadata["render_fps"] / FRAME_EVERY                 # plays in real time
    with VideoWriter(path, fps=fps) as writer:
        for f in frames:
            writer.append(f)


def values_of(episodes: list[dict], metric: str) -> list[float]:
    """The metric's episode values, leaving out the episodes it is undefined for (None)."""
    return [e["metrics"][metric] for e in episodes if e["metrics"].get(metric) is not None]


def seed_of(metric: str) -> int:
    """The bootstrap seed of a metric's intervals: from its name, so that a metric's interval
    does not depend on which other metrics a run has."""
    return zlib.crc32(metric.encode())


def aggregate(episodes: list[dict], metric: str, reps: int = stats.REPS) -> stats.Interval:
    """The metric's mean over the episodes with its 95 % bootstrap interval."""
    return stats.interval(values_of(episodes, metric), reps=reps, seed=seed_of(metric))


# --- comparing with a baseline ----------------------------------------------------------------
def _improvement(diff: stats.Interval, better: str) -> tuple[float, float]:
    """The difference's interval turned so that positive is better."""
    return (diff.lo, diff.hi) if better == "higher" else (-diff.hi, -diff.lo)


def verdict(diff: stats.Interval, better: str, tolerance: float = 0.0) -> str:
    """``worse`` when the whole interval of the difference lies beyond ``tolerance`` on the
    worse side, ``better`` when it lies wholly on the better side, else ``same`` (within the
    interval; also when no episodes compare)."""
    if diff.n == 0:
        return "same"
    lo, hi = _improvement(diff, better)
    if hi < -tolerance:
        return "worse"
    return "better" if lo > 0.0 else "same"


def _paired(this: dict, base: dict) -> list[tuple[dict, dict]] | None:
    """Episode pairs of the same scenario when every episode of ``this`` has one in ``base``
    (the same env id, arguments and reset), else None."""
    if (this["env_id"], this["kwargs"]) != (base["env_id"], base["kwargs"]):
        return None
    by_id = {e["scenario"]["id"]: e for e in base["episodes"]}
    pairs = []
    for e in this["episodes"]:
        b = by_id.get(e["scenario"]["id"])
        if b is None or b["scenario"] != e["scenario"]:
            return None
        pairs.append((e, b))
    return pairs


def compare(report: dict, baseline: dict, gates: list[tuple[str, float]], baseline_path: str = "",
            reps: int = stats.REPS) -> dict:
    """Every metric of every variant both hold: this run, the baseline and their difference,
    each with its interval. Paired (the same scenarios, episode by episode) when every episode
    of this run is one of the baseline's, else independent samples. ``gates``: (metric,
    tolerance in its unit) pairs; a gate fails on the variants whose verdict at that
    tolerance is ``worse``."""
    rows = []
    for name, this in report["variants"].items():
        base = baseline["variants"].get(name)
        if base is None:
            continue
        pairs = _paired(this, base)
        for metric, info in this["metrics"].items():
            if metric not in base["metrics"]:
                continue
            seed = seed_of(metric)
            if pairs is not None:
                both = [(e["metrics"][metric], b["metrics"][metric]) for e, b in pairs
                        if e["metrics"].get(metric) is not None
                        and b["metrics"].get(metric) is not None]
                x, y = [p[0] for p in both], [p[1] for p in both]
                mine = stats.Interval.from_dict(this["aggregates"][metric]) \
                    if x == values_of(this["episodes"], metric) else \
                    stats.interval(x, reps=reps, seed=seed)       # (the same when all pair)
                theirs = stats.interval(y, reps=reps, seed=seed)
                diff = stats.paired_difference(x, y, reps=reps, seed=seed)
            else:
                x, y = values_of(this["episodes"], metric), values_of(base["episodes"], metric)
                mine = stats.Interval.from_dict(this["aggregates"][metric])
                theirs = stats.Interval.from_dict(base["aggregates"][metric])
                diff = stats.difference(x, y, reps=reps, seed=seed)
            rows.append({"variant": name, "metric": metric, "paired": pairs is not None,
                         "this": mine.as_dict(), "baseline": theirs.as_dict(),
                         "difference": diff.as_dict(), "verdict": verdict(diff, info["better"])})
    results = []
    for metric, tolerance in gates:
        checked = [r for r in rows if r["metric"] == metric]
        better = {n: v["metrics"][metric]["better"] for n, v in report["variants"].items()
                  if metric in v["metrics"]}
        failed = [r["variant"] for r in checked
                  if verdict(stats.Interval.from_dict(r["difference"]), better[r["variant"]],
                             tolerance) == "worse"]
        results.append({"metric": metric, "tolerance": tolerance,
                        "checked": [r["variant"] for r in checked], "failed": failed})
    return {"baseline": {"path": baseline_path, "controller": baseline["controller"],
                         "suite": baseline["suite"], "created": baseline["created"]},
            "rows": rows, "gates": results, "failed": any(g["failed"] for g in results)}


# --- benchmark.json's schema -----------------------------------------------------------------
_NUMBER = (int, float)
_INTERVAL = {"value": (*_NUMBER, None), "ci": [(*_NUMBER, None)], "n": int}
_SCHEMA = {
    "schema_version": int, "tool": str, "created": str, "command": str,
    "traction_version": str,
    "controller": {"spec": str, "kind": str, "description": str},
    "suite": {"name": str, "version": int, "episodes": int},
    "statistics": {"library": str, "method": str, "confidence": float, "reps": int},
    "variants": {"*": {
        "env_id": str, "kwargs": dict, "description": str, "expected_to_fail": (str, None),
        "wall_time": _NUMBER,
        "metrics": {"*": {"unit": str, "better": str, "description": str,
                          "successes_only": bool}},
        "aggregates": {"*": _INTERVAL},
        "episodes": [{"scenario": {"id": str, "seed": int, "options": dict}, "steps": int,
                      "metrics": {"*": (*_NUMBER, None)}}]}},
    "comparison": (None, {
        "baseline": {"path": str, "controller": dict, "suite": dict, "created": str},
        "rows": [{"variant": str, "metric": str, "paired": bool, "this": _INTERVAL,
                  "baseline": _INTERVAL, "difference": _INTERVAL, "verdict": str}],
        "gates": [{"metric": str, "tolerance": _NUMBER, "checked": [str], "failed": [str]}],
        "failed": bool}),
}


def _check(value, schema, where: str) -> None:
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            raise ValueError(f"{where}: a {type(value).__name__}; expected an object")
        if "*" in schema:
            for key, item in value.items():
                _check(item, schema["*"], f"{where}.{key}")
            return
        missing = [k for k in schema if k not in value]
        if missing:
            raise ValueError(f"{where}: no {', '.join(missing)}")
        for key, sub in schema.items():
            _check(value[key], sub, f"{where}.{key}")
    elif isinstance(schema, list):
        if not isinstance(value, list):
            raise ValueError(f"{where}: a {type(value).__name__}; expected a list")
        for i, item in enumerate(value):
            _check(item, schema[0], f"{where}[{i}]")
    elif isinstance(schema, tuple):                     # any of
        errors = []
        for option in schema:
            try:
                _check(value, option, where)
                return
            except ValueError as e:
                errors.append(str(e))
        raise ValueError(errors[-1] if len(errors) == 1 else
                         f"{where}: {value!r:.60} matches none of the allowed forms")
    elif schema is None:
        if value is not None:
            raise ValueError(f"{where}: {value!r:.60}; expected null")
    elif schema is float:
        if isinstance(value, bool) or not isinstance(value, _NUMBER):
            raise ValueError(f"{where}: {value!r:.60}; expected a number")
    elif isinstance(value, bool) != (schema is bool) or not isinstance(value, schema):
        raise ValueError(f"{where}: {value!r:.60}; expected {schema.__name__}")


def validate(report: dict, name: str = "benchmark.json") -> dict:
    """``report`` if it has benchmark.json's layout of :data:`SCHEMA_VERSION`.

    Raises:
        ValueError: naming the first key that is missing or of the wrong type.
    """
    if not isinstance(report, dict) or report.get("tool") != "traction.train.benchmark":
        raise ValueError(f"{name}: not a benchmark report (no \"tool\": "
                         "\"traction.train.benchmark\")")
    if report.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"{name}: schema version {report.get('schema_version')}; this tool "
                         f"reads {SCHEMA_VERSION}: make the report again with this version "
                         "(make baseline, for the committed one)")
    _check(report, _SCHEMA, name)
    return report


def load_report(path: Path, arg: str = "--compare") -> dict:
    """A benchmark.json, validated.

    Raises:
        ValueError: naming ``arg``, the file and what is wrong with it.
    """
    try:
        data = json.loads(Path(path).read_text())
    except OSError as e:
        raise ValueError(f"{arg} {path}: cannot be read ({e.strerror or e})") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{arg} {path}: not JSON ({e})") from None
    return validate(data, f"{arg} {path}")


# --- command line ----------------------------------------------------------------------------
def gate_arg(text: str) -> tuple[str, float]:
    """argparse type of ``--fail-if-worse``: ``METRIC`` or ``METRIC:TOLERANCE`` (>= 0, in the
    metric's unit)."""
    metric, _, tol = text.partition(":")
    try:
        tolerance = float(tol) if tol else 0.0
        if not metric or not np.isfinite(tolerance) or tolerance < 0:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}; allowed: METRIC or METRIC:TOLERANCE, a number >= 0 in the metric's "
            "unit (success:0.1 allows 10 points less success)") from None
    return metric, tolerance


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m traction.train.benchmark",
        description="Benchmark a controller over a fixed scenario suite of every task variant.")
    ap.add_argument("--controller", default=None, metavar="CTL",
                    help="scripted (default), MODULE:FACTORY (a module or .py file and a "
                         "function in it that makes a controller from a TaskSpec), or a "
                         "training run folder")
    ap.add_argument("--pretrained", metavar="ID", help="a published trained agent's id")
    ap.add_argument("--model", choices=("final", "best"), default="final",
                    help="run folders: final (model.zip, default) or best (best/best_model.zip)")
    ap.add_argument("--suite", choices=tuple(SUITES), default="standard",
                    help="standard (20 episodes per variant, default) or quick (8: CI)")
    ap.add_argument("--tasks", nargs="+", metavar="NAME",
                    help="variants, tasks (Climb6x6, Drift, TankTurn) or env ids (default: all)")
    ap.add_argument("--episodes", type=positive_int_arg,
                    help="the first N scenarios of each variant (default: the suite's)")
    ap.add_argument("--out", type=Path, default=Path("runs/benchmark"), help="output folder")
    ap.add_argument("--video", nargs="*", metavar="VARIANT",
                    help="write <variant>.mp4 of the first episode of each variant named "
                         "(variants or tasks, as --tasks), of every variant without names")
    ap.add_argument("--compare", type=Path, metavar="BASELINE.json",
                    help="a benchmark.json to compare with, metric by metric")
    ap.add_argument("--fail-if-worse", type=gate_arg, action="append", default=[],
                    metavar="METRIC[:TOLERANCE]",
                    help="with --compare: exit 1 if the metric is worse than the baseline's "
                         "beyond its interval (and TOLERANCE, in its unit) on any variant; "
                         "repeatable")
    ap.add_argument("--engine-work", action=argparse.BooleanOptionalAction, default=True,
                    help="measure the engine work (default; it records every physics "
                         "substep's engine torque and speed, about half the run's time)")
    ap.add_argument("--reps", type=positive_int_arg, default=stats.REPS,
                    help=f"bootstrap resamples per interval (default {stats.REPS})")
    ap.add_argument("--no-progress", action="store_true", help="no progress line")
    return ap


def _check_gates(gates, variants: list[Variant], baseline: dict | None,
                 engine_work: bool = True) -> None:
    if gates and baseline is None:
        raise ValueError("--fail-if-worse needs --compare BASELINE.json (the metric is worse "
                         "than what?)")
    from traction.train.task_metrics import CLIMB, DRIFT, TANK

    by_task = {"Climb6x6": CLIMB, "Drift": DRIFT, "TankTurn": TANK}
    known = list(dict.fromkeys(m.name for v in variants for m in by_task[v.task]
                               if engine_work or m.name != "engine_work"))
    for metric, _ in gates:
        if metric not in known:
            raise ValueError(f"--fail-if-worse {metric}: not a metric of the chosen variants; "
                             f"allowed: {', '.join(known)}")


def _videos(names: list[str] | None, suite: Suite, variants: list[Variant]) -> tuple[str, ...]:
    """The variants ``--video`` names (all the chosen ones for ``[]``, none for None)."""
    if names is None:
        return ()
    filmed = select(suite, names) if names else variants
    missing = [v.name for v in filmed if v not in variants]
    if missing:
        raise ValueError(f"--video {' '.join(missing)}: not among the variants run; allowed: "
                         f"{', '.join(v.name for v in variants)}")
    return tuple(v.name for v in filmed)


def main(argv=None) -> dict:
    """The command line; returns the report (exits with status 1 when a gate fails)."""
    ap = parser()
    args = ap.parse_args(argv)
    try:
        require("benchmark", *NEEDS, *(("imageio",) if args.video is not None else ()))
        suite = get_suite(args.suite)
        variants = select(suite, args.tasks)
        videos = _videos(args.video, suite, variants)
        source = resolve(args.controller, args.pretrained, args.model)
        baseline = load_report(args.compare) if args.compare else None
        _check_gates(args.fail_if_worse, variants, baseline, args.engine_work)
        writable_dir(args.out)
    except (MissingExtra, ValueError) as e:
        ap.error(str(e))
    command = "python -m traction.train.benchmark " + shlex.join(
        sys.argv[1:] if argv is None else argv)
    try:
        report, tracks = run(source, suite, variants, args.out, args.episodes, videos,
                             args.reps, not args.no_progress, command, args.engine_work)
    except ControllerError as e:
        ap.error(str(e))
    if baseline is not None:
        report["comparison"] = compare(report, baseline, args.fail_if_worse, str(args.compare),
                                       args.reps)
    write(report, tracks, args.out)
    from traction.train.benchmark_report import console_summary

    print(console_summary(report, args.out))
    if report["comparison"] and report["comparison"]["failed"]:
        for gate in report["comparison"]["gates"]:
            if gate["failed"]:
                print(f"benchmark: {gate['metric']} is worse than the baseline's beyond its "
                      f"95 % interval (tolerance {gate['tolerance']:g}) on "
                      f"{', '.join(gate['failed'])}", file=sys.stderr)
        raise SystemExit(1)
    return report


def write(report: dict, tracks: dict, out: Path) -> None:
    """benchmark.json, benchmark.md with its plots, junit.xml."""
    from traction.train import benchmark_report

    validate(report)
    (out / "benchmark.json").write_text(json.dumps(report, indent=1) + "\n")
    benchmark_report.plots(report, tracks, out)
    (out / "benchmark.md").write_text(benchmark_report.markdown(report))
    benchmark_report.junit(report, out / "junit.xml")


if __name__ == "__main__":
    main()
