"""The benchmark's human- and CI-readable outputs, from a report (benchmark.json's content):
``benchmark.md`` (tables, the expected failures, the comparison, the plots embedded),
``trajectories.png``, ``telemetry.png``, ``intervals.png`` and ``junit.xml``."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

#: the summary's columns after success and return: the first metric of these a variant has
TASK_METRICS = ("goal_distance", "sideslip_error", "heading_error")
PLOTS = (("trajectories.png", "Trajectories: every episode's path of the centre of mass "
          "(green: success, red: failure; the dot: the start)"),
         ("telemetry.png", "Telemetry: speed and the task's own signal over time, every episode "
          "(dashed: the goal radius, the target sideslip, zero heading error)"),
         ("intervals.png", "Success rate and time to success with their 95 % intervals"))


def _num(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    a = abs(x)
    return f"{x:.0f}" if a >= 100 else f"{x:.1f}" if a >= 10 else f"{x:.2f}" if a >= 1 \
        else f"{x:.3f}"


def fmt(interval: dict, percent: bool = False) -> str:
    """``value [lo, hi]`` (``-`` without samples); ``percent``: a rate as percentages."""
    if interval["n"] == 0:
        return "-"
    scale, unit = (100.0, " %") if percent else (1.0, "")
    v, (lo, hi) = interval["value"], interval["ci"]
    f = (lambda x: f"{scale * x:.0f}") if percent else _num
    return f"{f(v)}{unit} [{f(lo)}, {f(hi)}]"


def _rate(name: str) -> bool:
    return name in ("success", "diverged", "rollover", "off_terrain", "spin_out", "off_pad",
                    "off_arena")


def summary_table(report: dict) -> list[str]:
    lines = ["| variant | episodes | success | return | time to success (s) | engine work (kJ) "
             "| task metric |", "|---|---|---|---|---|---|---|"]
    for name, v in report["variants"].items():
        a = v["aggregates"]
        key = next((k for k in TASK_METRICS if k in a), None)
        task = f"{key.replace('_', ' ')} ({v['metrics'][key]['unit']}) {fmt(a[key])}" if key else ""
        mark = " (expected to fail)" if v["expected_to_fail"] else ""
        energy = fmt(a["engine_work"]) if "engine_work" in a else "-"
        lines.append(f"| {name}{mark} | {len(v['episodes'])} | {fmt(a['success'], True)} | "
                     f"{fmt(a['return'])} | {fmt(a['time_to_success'])} | {energy} | {task} |")
    return lines


def comparison_lines(report: dict) -> list[str]:
    c = report["comparison"]
    if not c:
        return []
    b = c["baseline"]
    lines = [f"Baseline: `{b['path']}`: controller `{b['controller']['spec']}`, suite "
             f"{b['suite']['name']} v{b['suite']['version']} ({b['suite']['episodes']} episodes "
             f"per variant), made {b['created']}. *Paired*: the same scenarios, episode by "
             "episode (the baseline over this run's scenarios); otherwise independent samples. "
             "Difference: this - baseline, 95 % interval; *worse* / *better*: the whole interval "
             "on that side of zero.", ""]
    for g in c["gates"]:
        state = (f"**FAILED** on {', '.join(g['failed'])}" if g["failed"] else
                 f"passed on {len(g['checked'])} variants")
        lines.append(f"- Gate `--fail-if-worse {g['metric']}:{g['tolerance']:g}`: {state}.")
    lines += ["", "| variant | metric | this | baseline | difference | pairing | verdict |",
              "|---|---|---|---|---|---|---|"]
    for r in c["rows"]:
        pct = r["metric"] == "success"
        verdict = f"**{r['verdict']}**" if r["verdict"] != "same" else "same"
        lines.append(f"| {r['variant']} | {r['metric']} | {fmt(r['this'], pct)} | "
                     f"{fmt(r['baseline'], pct)} | {fmt(r['difference'], pct)} | "
                     f"{'paired' if r['paired'] else 'independent'} ({r['difference']['n']}) | "
                     f"{verdict} |")
    return lines


def markdown(report: dict) -> str:
    s, st, ctl = report["suite"], report["statistics"], report["controller"]
    lines = [f"# Benchmark: `{ctl['spec']}` on the {s['name']} suite (v{s['version']})", "",
             f"Controller: {ctl['description'].rstrip('.')}. {s['episodes']} episodes per "
             "variant, the "
             f"scenarios suite {s['name']} v{s['version']} fixes (reset seeds, terrain seeds, "
             "spawn poses, targets: `traction/train/suites.py`). Each aggregate is the mean over "
             f"the episodes with its {100 * st['confidence']:.0f} % interval [lo, hi] "
             f"({st['method']}, {st['reps']} resamples, {st['library']}). Made by "
             f"`{report['command'] or 'traction.train.benchmark.run'}` on {report['created']} "
             f"(traction {report['traction_version']}).", "", "## Summary", "",
             *summary_table(report), ""]
    expected = [(n, v["expected_to_fail"]) for n, v in report["variants"].items()
                if v["expected_to_fail"]]
    if expected:
        lines += ["Expected to fail (by design of the variant, whatever the controller):", ""]
        lines += [f"- **{n}**: {why}." for n, why in expected] + [""]
    if report["comparison"]:
        lines += ["## Comparison with the baseline", "", *comparison_lines(report), ""]
    lines += ["## Plots", ""]
    for name, caption in PLOTS:
        lines += [f"![{caption}]({name})", "", f"*{caption}.*", ""]
    lines += ["## Variants", ""]
    for name, v in report["variants"].items():
        kwargs = ", ".join(f"{k}={val!r}" for k, val in v["kwargs"].items()) or "defaults"
        lines += [f"### {name}", "", f"{v['description']}: `{v['env_id']}` ({kwargs}); "
                  f"{len(v['episodes'])} episodes in {v['wall_time']:.0f} s.", "",
                  "| metric | unit | better | mean [95 % interval] | episodes |",
                  "|---|---|---|---|---|"]
        for metric, info in v["metrics"].items():
            a = v["aggregates"][metric]
            lines.append(f"| {metric} | {info['unit']} | {info['better']} | {fmt(a)} | "
                         f"{a['n']} |")
        lines.append("")
    lines += ["## Metrics", "", "| metric | unit | definition |", "|---|---|---|"]
    seen = {}
    for v in report["variants"].values():
        for metric, info in v["metrics"].items():
            seen.setdefault(metric, info)
    for metric, info in seen.items():
        rate = " (per episode 0 or 1; the mean is a rate)" if _rate(metric) and \
            metric != "success" else ""
        only = " Successful episodes only." if info["successes_only"] else ""
        lines.append(f"| {metric} | {info['unit']} | {info['description']}{rate}.{only} |")
    return "\n".join(lines) + "\n"


def console_summary(report: dict, out: Path) -> str:
    lines = summary_table(report)
    c = report["comparison"]
    if c:
        lines += [""] + [f"{r['variant']}: {r['metric']} {r['verdict']} than the baseline "
                         f"(difference {fmt(r['difference'], r['metric'] == 'success')})"
                         for r in c["rows"] if r["verdict"] != "same"]
        for g in c["gates"]:
            lines.append(f"gate {g['metric']}:{g['tolerance']:g}: "
                         + (f"FAILED on {', '.join(g['failed'])}" if g["failed"] else "passed"))
    lines.append(f"\nreport: {out / 'benchmark.md'}")
    return "\n".join(lines)


# --- plots -----------------------------------------------------------------------------------
def plots(report: dict, tracks: dict, out: Path) -> None:
    """trajectories.png, telemetry.png and intervals.png."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(tracks)
    cols = min(4, len(names))
    rows = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.4 * rows), squeeze=False)
    for ax in axes.flat[len(names):]:
        ax.axis("off")
    for ax, name in zip(axes.flat, names, strict=False):
        for t in tracks[name]:
            xy = np.array(t["xy"])
            ax.plot(xy[:, 0], xy[:, 1], color="tab:green" if t["success"] else "tab:red",
                    lw=0.7, alpha=0.7)
            ax.plot(*xy[0], "k.", ms=3)
        if "circle" in tracks[name][0]:                    # Drift: the marked circle
            angle, r = np.linspace(0.0, 2 * np.pi, 181), tracks[name][0]["circle"]
            ax.plot(r * np.cos(angle), r * np.sin(angle), "k--", lw=0.6)
        ax.set(title=name, xlabel="x (m)", ylabel="y (m)")
        ax.title.set_fontsize(8)
        ax.set_aspect("equal", adjustable="datalim")
    fig.tight_layout()
    fig.savefig(out / "trajectories.png", dpi=60)
    plt.close(fig)

    fig, axes = plt.subplots(len(names), 2, figsize=(10, 1.9 * len(names)), squeeze=False)
    for (a_speed, a_signal), name in zip(axes, names, strict=True):
        for t in tracks[name]:
            time = np.arange(len(t["speed"])) * t["dt"]
            color = "tab:green" if t["success"] else "tab:red"
            a_speed.plot(time, t["speed"], color=color, lw=0.5, alpha=0.6)
            a_signal.plot(time, t["signal"], color=color, lw=0.5, alpha=0.6)
        a_signal.axhline(tracks[name][0]["signal_target"], color="k", ls="--", lw=0.6)
        a_speed.set_ylabel("speed (m/s)", fontsize=7)
        a_signal.set_ylabel(tracks[name][0]["signal_label"], fontsize=7)
        a_speed.set_title(name, fontsize=8, loc="left")
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    fig.tight_layout()
    fig.savefig(out / "telemetry.png", dpi=60)
    plt.close(fig)

    fig, (a_succ, a_time) = plt.subplots(1, 2, figsize=(10, 0.45 * len(names) + 1.2))
    y = np.arange(len(names))[::-1]
    rows = {(r["variant"], r["metric"]): r for r in (report["comparison"] or {}).get("rows", [])}
    for ax, metric, scale in ((a_succ, "success", 100.0), (a_time, "time_to_success", 1.0)):
        for yi, name in zip(y, names, strict=True):
            for offset, interval, color in (
                    (0.15, report["variants"][name]["aggregates"][metric], "tab:blue"),
                    (-0.15, rows.get((name, metric), {}).get("baseline"), "tab:gray")):
                if interval is None or interval["n"] == 0:
                    continue
                v, (lo, hi) = interval["value"], interval["ci"]
                ax.errorbar(scale * v, yi + offset, xerr=[[scale * (v - lo)], [scale * (hi - v)]],
                            fmt="o", color=color, ms=4, capsize=3)
        ax.set_yticks(y, names, fontsize=7)
    a_succ.set(xlabel="success (%)", xlim=(-5, 105))
    a_time.set(xlabel="time to success (s)")
    if rows:
        a_succ.plot([], [], "o", color="tab:blue", label="this run")
        a_succ.plot([], [], "o", color="tab:gray", label="baseline")
        a_succ.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(out / "intervals.png", dpi=72)
    plt.close(fig)


# --- JUnit -----------------------------------------------------------------------------------
def junit(report: dict, path: Path) -> None:
    """A JUnit XML test case per variant, with the aggregates as properties; a variant fails
    where a ``--fail-if-worse`` gate finds it worse, and is an error where an episode
    diverged."""
    s = report["suite"]
    suite_name = f"traction.benchmark.{s['name']}_v{s['version']}"
    gates = (report["comparison"] or {}).get("gates", [])
    root = ET.Element("testsuites", name="traction-benchmark")
    ts = ET.SubElement(root, "testsuite", name=suite_name, timestamp=report["created"])
    failures = errors = 0
    for name, v in report["variants"].items():
        case = ET.SubElement(ts, "testcase", classname=suite_name, name=name,
                             time=f"{v['wall_time']:.3f}")
        props = ET.SubElement(case, "properties")
        for metric, a in v["aggregates"].items():
            ET.SubElement(props, "property", name=metric, value=fmt(a, metric == "success"))
        failed = [g for g in gates if name in g["failed"]]
        if failed:
            failures += 1
            rows = {r["metric"]: r for r in report["comparison"]["rows"] if r["variant"] == name}
            text = "; ".join(f"{g['metric']} {fmt(rows[g['metric']]['this'])} against the "
                             f"baseline's {fmt(rows[g['metric']]['baseline'])}: difference "
                             f"{fmt(rows[g['metric']]['difference'])} (tolerance "
                             f"{g['tolerance']:g})" for g in failed)
            ET.SubElement(case, "failure", message=f"worse than the baseline: {text}",
                          type="BenchmarkRegression").text = text
        diverged = sum(e["metrics"]["diverged"] for e in v["episodes"])
        if diverged:
            errors += 1
            ET.SubElement(case, "error", message=f"{diverged:.0f} episode(s) diverged",
                          type="Divergence")
        out = ET.SubElement(case, "system-out")
        out.text = (f"{v['description']}; success {fmt(v['aggregates']['success'], True)}, "
                    f"return {fmt(v['aggregates']['return'])}"
                    + (f"; expected to fail: {v['expected_to_fail']}" if v["expected_to_fail"]
                       else ""))
    ts.set("tests", str(len(report["variants"])))
    ts.set("failures", str(failures))
    ts.set("errors", str(errors))
    ts.set("time", f"{sum(v['wall_time'] for v in report['variants'].values()):.3f}")
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
