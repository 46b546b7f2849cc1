"""How the wheel contact model changes the rough-hill climb: the scripted controller's success on
``Traction/Climb6x6-v1`` (rough_hill) over seeds and difficulties, with one ray per wheel and
with the footprint (``vehicle_model/footprint.py``), in one run::

    python -m traction.train.contact_study [--seeds 10] [--difficulties 0.5 0.6 0.7 0.8]
                                           [--docs docs/results.md]

A heightfield facet under one ray can be far steeper than the hill (a ray feels the facet under
the wheel centre; a tyre bridges facets smaller than its footprint), so the hill should get no
harder than its geometry with the footprint. Prints a markdown table; with ``--docs`` it also
replaces the table between this tool's markers in that page.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from pathlib import Path

import gymnasium as gym

import traction.envs  # noqa: F401  (registers the environments)
from traction import vehicle_model as vm
from traction.train.controllers import for_env
from traction.vehicle_model.footprint import MODELS, ContactParams

ENV_ID = "Traction/Climb6x6-v1"
BEGIN, END = "<!-- contact-study:begin -->", "<!-- contact-study:end -->"


def successes(model: str, difficulty: float, seeds: range) -> int:
    """Episodes (one per seed) the scripted controller climbs with wheel contact ``model``."""
    vehicle = dataclasses.replace(vm.load_vehicle("truck_6x6"), contact=ContactParams(model=model))
    env = gym.make(ENV_ID, vehicle=vehicle, difficulty=difficulty)
    won = 0
    for seed in seeds:
        controller = for_env(ENV_ID)
        obs, _ = env.reset(seed=seed)
        done, info = False, {}
        while not done:
            obs, _, terminated, truncated, info = env.step(controller(obs))
            done = terminated or truncated
        won += bool(info.get("is_success", False))
    env.close()
    return won


def table(results: dict, n_seeds: int, command: str) -> str:
    difficulties = sorted({d for _, d in results})
    rows = [f"Scripted controller on `{ENV_ID}` (rough_hill), seeds 0-{n_seeds - 1}: episodes "
            "climbed, by wheel contact model and difficulty.", "", "```sh", command, "```", "",
            "| contact | " + " | ".join(f"difficulty {d:g}" for d in difficulties) + " |",
            "|---|" + "---|" * len(difficulties)]
    for model in MODELS:
        rows.append(f"| {model} | " + " | ".join(f"{results[model, d]} / {n_seeds}"
                                                 for d in difficulties) + " |")
    return "\n".join(rows)


def write_docs(page: Path, text: str) -> None:
    """Replace the block between this tool's markers in ``page`` (appended if absent)."""
    block = f"{BEGIN}\n<!-- written by python -m traction.train.contact_study -->\n\n{text}\n\n{END}"
    old = page.read_text() if page.exists() else ""
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    new = pattern.sub(lambda _: block, old) if pattern.search(old) else \
        old.rstrip("\n") + "\n\n## Wheel contact on the rough hill\n\n" + block + "\n"
    page.write_text(new)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description="Scripted Climb6x6 success by wheel contact model.")
    ap.add_argument("--seeds", type=int, default=10, help="episodes per cell: seeds 0..N-1")
    ap.add_argument("--difficulties", type=float, nargs="+", default=[0.5, 0.6, 0.7, 0.8])
    ap.add_argument("--docs", type=Path, help="also write the table into this markdown page")
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error(f"--seeds {args.seeds}: allowed: 1 or more")
    for d in args.difficulties:
        if not 0.0 <= d <= 1.0:
            ap.error(f"--difficulties {d:g}: allowed: 0..1")
    results = {(model, d): successes(model, d, range(args.seeds))
               for model in MODELS for d in args.difficulties}
    command = "python -m traction.train.contact_study " + " ".join(
        argv if argv is not None else sys.argv[1:])
    text = table(results, args.seeds, command.strip())
    print(text)
    if args.docs is not None:
        write_docs(args.docs, text)
    return results


if __name__ == "__main__":
    main()
