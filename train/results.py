"""Learning curves of training runs (evaluation return and success rate vs steps)::

    python -m traction.train.results runs/train/tank_ppo [more runs...] --out docs/results

Reads each run folder's ``evaluations.npz`` (written by ``train.py``'s evaluation callback) and
``evaluation.json`` (``evaluate.py``), writes one PNG per run (named after the run folder, with
as much of its path as tells it from the others) and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import yaml

from traction.train.checks import MissingExtra, require, writable_dir


def curves(run: Path) -> dict:
    """Evaluation timesteps, mean return and success rate of a run folder."""
    d = np.load(run / "evaluations.npz")
    success = d["successes"].mean(axis=1) if "successes" in d and d["successes"].size else None
    return {"timesteps": d["timesteps"], "return": d["results"].mean(axis=1),
            "return_std": d["results"].std(axis=1), "success": success}


def png_names(runs: list[Path]) -> dict[Path, str]:
    """Each run folder's PNG name: the folder's name, or as many of its path's last parts as
    tell it from the other runs' (``a/ppo`` and ``b/ppo`` give ``a_ppo.png`` and ``b_ppo.png``;
    with the names alone the second PNG overwrote the first); a name that still clashes (``a_b``
    and ``a/b``) gets ``-2``, ``-3``."""
    paths = list(dict.fromkeys(run.resolve() for run in runs))

    def shortest(p: Path) -> str:                      # fewest last parts no other run shares
        parts = p.parts[1:] or ("run",)                # (not the root)
        k = next((k for k in range(1, len(parts) + 1)
                  if all(q.parts[-k:] != p.parts[-k:] for q in paths if q != p)), len(parts))
        return "_".join(parts[-k:])

    names, used = {}, set()
    for p in paths:
        name, i = shortest(p), 2
        while name in used:
            name, i = f"{shortest(p)}-{i}", i + 1
        names[p] = name
        used.add(name)
    return {run: names[run.resolve()] + ".png" for run in runs}


def plot(run: Path, out: Path, name: str | None = None) -> Path:
    """PNG of the run's learning curves, ``out/name`` (``<run folder's name>.png`` by default)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    config = yaml.safe_load((run / "config.yml").read_text())
    c = curves(run)
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.2))
    ax[0].plot(c["timesteps"], c["return"])
    ax[0].fill_between(c["timesteps"], c["return"] - c["return_std"],
                       c["return"] + c["return_std"], alpha=0.25)
    ax[0].set(xlabel="environment steps", ylabel="evaluation return")
    if c["success"] is not None:
        ax[1].plot(c["timesteps"], 100 * c["success"])
    ax[1].set(xlabel="environment steps", ylabel="evaluation success (%)", ylim=(-5, 105))
    fig.suptitle(f"{config['env_id']} - {config['algo'].upper()} (seed {config.get('seed', '?')})")
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    path = out / (name or f"{run.name}.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def row(run: Path) -> str:
    config = yaml.safe_load((run / "config.yml").read_text())
    c = curves(run)
    final = json.loads((run / "evaluation.json").read_text()) if (run / "evaluation.json").exists() \
        else {}
    best = float(np.max(c["success"])) if c["success"] is not None else float("nan")
    return (f"| {config['env_id']} | {config['algo'].upper()} | {int(c['timesteps'][-1])} | "
            f"{100 * best:.0f} % | {100 * final.get('success_rate', float('nan')):.0f} % | "
            f"{final.get('mean_return', float('nan')):.1f} |")


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description="Learning curves of Traction training runs.")
    ap.add_argument("runs", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, default=Path("docs/results"))
    args = ap.parse_args(argv)
    try:
        require("results", "matplotlib")
    except MissingExtra as e:
        ap.error(str(e))
    for run in args.runs:                              # all checked before any output
        for name in ("config.yml", "evaluations.npz"):
            if not (run / name).is_file():
                ap.error(f"{run}: no {name} (not a training run folder, or it ended before "
                         "its first evaluation)")
    try:
        writable_dir(args.out)
    except ValueError as e:
        ap.error(str(e))
    lines = ["| task | algo | steps | best eval success | final eval success | final mean return |",
             "|---|---|---|---|---|---|"]
    names = png_names(args.runs)
    for run in args.runs:
        plot(run, args.out, names[run])
        lines.append(row(run))
    text = "\n".join(lines)
    print(text)
    return text


if __name__ == "__main__":
    main()
