"""Scripted-controller benchmark over every task and the variants that matter::

    python -m traction.train.benchmark --out runs/benchmark [--quick]

Writes ``benchmark.json`` (per env/variant: episodes, success rate, mean/std return, mean time to
success, task metrics), ``benchmark.md`` (a table), ``trajectories.png`` and ``telemetry.png``,
and one MP4 per task (the first episode of its first variant).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import traction.envs  # noqa: F401  (registers the ids)
from traction.train.checks import MissingExtra, require, writable_dir
from traction.train.controllers import for_env

#: (name, env id, env kwargs, episodes, quick episodes, quick step limit)
VARIANTS = (
    ("climb_rough_hill", "Traction/Climb6x6-v0", {}, 3, 1, 600),
    ("climb_crest_torque_vectoring", "Traction/Climb6x6-v0",
     {"terrain": "crest", "differential": "torque_vectoring"}, 1, 1, 300),
    ("climb_crest_equal", "Traction/Climb6x6-v0", {"terrain": "crest", "differential": "equal"},
     1, 1, 300),
    ("drift", "Traction/Drift-v0", {}, 3, 1, 300),
    ("tank_turn_special", "Traction/TankTurn-v0", {"drive_mode": "special"}, 20, 10, 400),
    ("tank_turn_standard", "Traction/TankTurn-v0", {"drive_mode": "standard"}, 6, 3, 400),
)
SEED0 = 1000
NEEDS = ("matplotlib", "imageio")   # plots (the plot extra), videos (the render extra)


#: the videos hold every FRAME_EVERY-th control step's frame
FRAME_EVERY = 2


def _episode(env, controller, seed, record):
    controller.reset()
    obs, info = env.reset(seed=seed)
    u = env.unwrapped
    total, steps, success_step = 0.0, 0, None
    track = {"dt": u.control_dt, "xy": [], "speed": [], "reward": [], "sideslip": []}
    if hasattr(u, "cross_track"):                      # Drift: the marked circle, for the plot
        track["circle"] = u.radius
    frames = []
    start = u.sim.com_position()
    while True:
        obs, r, term, trunc, info = env.step(controller(obs))
        total += r
        steps += 1
        if not info["is_success"]:                     # the step from which success held
            success_step = None                        # to the end (Drift's episode goes on
        elif success_step is None:                     # after it)
            success_step = steps
        track["xy"].append(u.sim.com_position()[:2].tolist())
        track["speed"].append(info["speed"])
        track["reward"].append(r)
        if hasattr(u, "sideslip"):
            track["sideslip"].append(float(np.degrees(u.sideslip())))
        if record and steps % FRAME_EVERY == 0:
            frames.append(env.render())
        if term or trunc:
            break
    metrics = {"return": total, "steps": steps, "success": bool(info["is_success"]),
               "time_to_success": success_step * u.control_dt if info["is_success"] else None,
               "diverged": bool(info["diverged"])}
    if hasattr(u, "sideslip"):
        beta = np.radians(np.array(track["sideslip"][len(track["sideslip"]) // 4:]))
        metrics["mean_abs_sideslip_error_deg"] = float(np.degrees(np.abs(beta - u.target).mean()))
    if hasattr(u, "TOLERANCE"):                        # TankTurn: how far the centre moved
        metrics["centre_drift_m"] = float(np.linalg.norm((u.sim.com_position() - start)[:2]))
    return metrics, track, frames


def run(out: Path, quick: bool = False, progress=True) -> dict:
    """Run every variant; write the outputs; return the summary dict.

    Raises:
        MissingExtra: matplotlib (plots, the ``plot`` extra) or imageio (videos, the ``render``
            extra) is not installed; checked before any episode runs.
        ValueError: ``out`` is not a writable folder.
    """
    require("benchmark", *NEEDS)
    writable_dir(out)
    from traction.scenes.video import VideoWriter

    summary, tracks, videos_done = {}, {}, set()
    jobs = [(n, e, kw, (qe if quick else ep), (qs if quick else None))
            for n, e, kw, ep, qe, qs in VARIANTS]
    total = sum(j[3] for j in jobs)
    done, t0 = 0, time.time()
    for name, env_id, kwargs, episodes, limit in jobs:
        video = env_id not in videos_done
        env = gym.make(env_id, render_mode="rgb_array" if video else None, width=480, height=360,
                       **({"max_episode_steps": limit} if limit else {}), **kwargs)
        controller = for_env(env_id)
        results = []
        for k in range(episodes):
            metrics, track, frames = _episode(env, controller, SEED0 + k, video and k == 0)
            results.append(metrics)
            if k == 0:
                tracks[name] = track
            if frames:
                fps = env.metadata["render_fps"] / FRAME_EVERY         # plays in real time
                with VideoWriter(out / f"{name}.mp4", fps=fps) as writer:
                    for f in frames:
                        writer.append(f)
                videos_done.add(env_id)
            done += 1
            if progress:
                rate = (time.time() - t0) / done
                print(f"\r[{'#' * int(30 * done / total):<30}] {done}/{total} episodes "
                      f"({name}) eta {rate * (total - done):4.0f} s", end="", file=sys.stderr)
        env.close()
        returns = np.array([m["return"] for m in results])
        succ = [m["time_to_success"] for m in results if m["success"]]
        entry = {"env_id": env_id, "kwargs": kwargs, "episodes": episodes,
                 "success_rate": float(np.mean([m["success"] for m in results])),
                 "mean_return": float(returns.mean()), "std_return": float(returns.std()),
                 "mean_time_to_success_s": float(np.mean(succ)) if succ else None,
                 "diverged": int(sum(m["diverged"] for m in results))}
        for key in ("mean_abs_sideslip_error_deg", "centre_drift_m"):
            vals = [m[key] for m in results if key in m]
            if vals:
                entry[key] = float(np.mean(vals))
        summary[name] = entry
    if progress:
        print(file=sys.stderr)
    (out / "benchmark.json").write_text(json.dumps(summary, indent=2))
    (out / "benchmark.md").write_text(_table(summary, quick))
    _plots(tracks, out)
    return summary


def _table(summary: dict, quick: bool) -> str:
    lines = [f"# Scripted benchmark{' (quick)' if quick else ''}", "",
             "| variant | episodes | success | return (mean +- std) | time to success (s) | "
             "task metric |", "|---|---|---|---|---|---|"]
    for name, e in summary.items():
        metric = ""
        if "mean_abs_sideslip_error_deg" in e:
            metric = f"mean abs sideslip error {e['mean_abs_sideslip_error_deg']:.1f} deg"
        if "centre_drift_m" in e:
            metric = f"centre drift {e['centre_drift_m']:.2f} m"
        tts = f"{e['mean_time_to_success_s']:.1f}" if e["mean_time_to_success_s"] else "-"
        lines.append(f"| {name} | {e['episodes']} | {100 * e['success_rate']:.0f}% | "
                     f"{e['mean_return']:.1f} +- {e['std_return']:.1f} | {tts} | {metric} |")
    return "\n".join(lines) + "\n"


def _plots(tracks: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(tracks), figsize=(4 * len(tracks), 4))
    for ax, (name, t) in zip(np.atleast_1d(axes), tracks.items(), strict=True):
        xy = np.array(t["xy"])
        if "circle" in t:
            angle = np.linspace(0.0, 2 * np.pi, 181)
            ax.plot(t["circle"] * np.cos(angle), t["circle"] * np.sin(angle), "k--", lw=0.8)
        ax.plot(xy[:, 0], xy[:, 1])
        ax.plot(*xy[0], "go")
        ax.set(title=name, xlabel="x (m)", ylabel="y (m)")
        ax.set_aspect("equal", adjustable="datalim")
    fig.tight_layout()
    fig.savefig(out / "trajectories.png", dpi=80)
    plt.close(fig)
    fig, axes = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    for name, t in tracks.items():
        axes[0].plot(np.arange(len(t["speed"])) * t["dt"], t["speed"], label=name)
        axes[1].plot(np.arange(len(t["reward"])) * t["dt"], np.cumsum(t["reward"]), label=name)
    axes[0].set(ylabel="speed (m/s)")
    axes[1].set(ylabel="cumulative reward", xlabel="time (s)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "telemetry.png", dpi=80)
    plt.close(fig)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description="Scripted-controller benchmark of every task.")
    ap.add_argument("--out", type=Path, default=Path("runs/benchmark"))
    ap.add_argument("--quick", action="store_true", help="few episodes, short limits (CI)")
    args = ap.parse_args(argv)
    try:
        require("benchmark", *NEEDS)
        writable_dir(args.out)
    except (MissingExtra, ValueError) as e:
        ap.error(str(e))
    summary = run(args.out, args.quick)
    print((args.out / "benchmark.md").read_text())
    return summary


if __name__ == "__main__":
    main()
