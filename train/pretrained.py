"""Trained agents shipped with the package, run without training::

    python -m traction.train.evaluate --pretrained Traction/TankTurn-v1 --episodes 10 [--video]

Each lives in ``train/pretrained/<task name>/`` (package data) as a trimmed run folder: the
model (``model.zip``), its observation statistics (``vecnormalize.pkl``), the run's
``config.yml`` and ``command.txt`` (how it was trained), and ``evaluation.json`` (how it scored
when it was shipped). ``evaluate --pretrained`` reads it as it reads a run folder and writes
its own results elsewhere (``--out``, default ``runs/pretrained/<task name>/``): an installed
package's folder may not be writable.

To ship a new one (after training it; a few hundred KB)::

    python -m traction.train.pretrained runs/tank_ppo [--model best]

copies the run's final model (or its best checkpoint) with its statistics into the package,
replacing the task's earlier one, and evaluates it there (100 held-out episodes).
"""

from __future__ import annotations

import argparse
import json
import shutil
from importlib import resources
from pathlib import Path

#: the files of a shipped agent (``evaluation.json`` written when it is shipped; with them the
#: vehicle file and task source the run kept, ``run_folder``)
FILES = ("model.zip", "vecnormalize.pkl", "config.yml", "command.txt")


def package_folder() -> Path:
    """``train/pretrained`` of the installed package (or checkout)."""
    return Path(str(resources.files("traction.train") / "pretrained"))


def name_of(env_id: str) -> str:
    """The folder name of ``env_id``'s agent: the id's name part (``TankTurn-v1``)."""
    return env_id.rpartition(":")[2].split("/")[-1]


def available() -> list[str]:
    """The environment ids with a shipped agent."""
    import yaml

    root = package_folder()
    return sorted(yaml.safe_load((p / "config.yml").read_text())["env_id"]
                  for p in root.iterdir() if (p / "model.zip").is_file()) if root.is_dir() else []


def folder(env_id: str) -> Path:
    """The shipped agent's folder for ``env_id``.

    Raises:
        ValueError: no agent is shipped for it, naming those that are.
    """
    path = package_folder() / name_of(env_id)
    if not (path / "model.zip").is_file():
        have = available()
        raise ValueError(f"--pretrained {env_id!r}: no trained agent ships for it; available: "
                         f"{', '.join(have) or 'none'}")
    return path


def ship(run: Path, which: str = "final", episodes: int = 100) -> Path:
    """Copy run folder ``run``'s ``which`` model (``final`` or ``best``) with its statistics,
    config and command into the package (replacing the task's agent), evaluate it there on
    ``episodes`` held-out episodes and write ``evaluation.json``; returns the folder."""
    import yaml

    from traction.train import evaluate

    config, model, stats = evaluate.check_run(run, which)
    dest = package_folder() / name_of(config["env_id"])
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copyfile(model, dest / "model.zip")
    if stats is not None:
        shutil.copyfile(stats, dest / "vecnormalize.pkl")
    config = {**config, "shipped_from": {"run": str(run), "model": which}}
    (dest / "config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    if (run / "command.txt").is_file():
        shutil.copyfile(run / "command.txt", dest / "command.txt")
    kept = config.get("kept", {})                 # the vehicle file and task source the run kept
    for relative in ([kept["vehicle"]] if kept.get("vehicle") else []) + kept.get("task_files", []):
        (dest / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(run / relative, dest / relative)
    result = evaluate.evaluate(dest, episodes, out=dest)
    (dest / "evaluation.json").write_text(json.dumps(result, indent=2))
    return dest


def main(argv=None) -> Path:
    ap = argparse.ArgumentParser(description="Ship a trained run's model with the package.")
    ap.add_argument("run", type=Path, help="training run folder")
    ap.add_argument("--model", choices=("final", "best"), default="final")
    ap.add_argument("--episodes", type=int, default=100, help="evaluation episodes (>= 1)")
    args = ap.parse_args(argv)
    try:
        from traction.train import evaluate

        evaluate.check_run(args.run, args.model)
    except ValueError as e:
        ap.error(str(e))
    path = ship(args.run, args.model, args.episodes)
    print(path, (path / "evaluation.json").read_text(), sep="\n")
    return path


if __name__ == "__main__":
    main()
