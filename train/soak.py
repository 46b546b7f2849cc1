"""Soak test: random actions over every task, with resets, for N steps in total::

    python -m traction.train.soak --steps 20000 [--seed 0] [--out runs/soak.json]

Reports steps, resets, diverged episodes, non-finite observations or rewards, and resident
memory (peak, and growth after the first 10% of the run, which includes one-time allocations).
"""

from __future__ import annotations

import argparse
import json
import resource
from pathlib import Path

import gymnasium as gym
import numpy as np

import traction.envs
from traction.train.checks import int_at_least, positive_int_arg, seed_arg, writable_file


def _rss_mb() -> float:
    """Current resident set size (MB) from /proc (Linux)."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def soak(steps: int, seed: int = 0, episode_steps: int | None = None) -> dict:
    """Run the soak; ``episode_steps`` shortens the time limits (more resets per step).

    Raises:
        ValueError: ``steps`` < 1 or ``episode_steps`` < 1 (None keeps the registered limits).
    """
    int_at_least("--steps", steps, 1)
    if episode_steps is not None:
        int_at_least("--episode-steps", episode_steps, 1)
    limit = {"max_episode_steps": episode_steps} if episode_steps else {}
    envs = [gym.make(env_id, **limit) for env_id in traction.envs.ENV_IDS]
    rng = np.random.default_rng(seed)
    for i, env in enumerate(envs):
        env.reset(seed=seed + i)
    counts = {"steps": 0, "resets": 0, "diverged": 0, "non_finite": 0}
    warm = None
    for k in range(steps):
        env = envs[k % len(envs)]
        obs, r, term, trunc, info = env.step(rng.uniform(-1.2, 1.2, env.action_space.shape))
        counts["steps"] += 1
        counts["non_finite"] += int(not (np.all(np.isfinite(obs)) and np.isfinite(r)))
        counts["diverged"] += int(info["diverged"])
        if term or trunc:
            env.reset(seed=int(rng.integers(2**31 - 1)))
            counts["resets"] += 1
        if k == steps // 10:
            warm = _rss_mb()
    for env in envs:
        env.close()
    end = _rss_mb()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024    # the kernel's high-water
    return {**counts, "rss_peak_mb": max(peak, end),   # mark lags the current RSS by a few pages
            "rss_end_mb": end, "rss_growth_after_warmup_mb": end - (warm or end)}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description="Soak test of every Traction environment.")
    ap.add_argument("--steps", type=positive_int_arg, default=20_000, help="steps in all (>= 1)")
    ap.add_argument("--seed", type=seed_arg, default=0)
    ap.add_argument("--episode-steps", type=positive_int_arg, default=None,
                    help="shorter time limit than the registered one (>= 1; more resets)")
    ap.add_argument("--out", type=Path, default=None, help="also write the report as JSON")
    args = ap.parse_args(argv)
    if args.out:
        try:
            writable_file(args.out)             # before the run, not after
        except ValueError as e:
            ap.error(str(e))
    report = soak(args.steps, args.seed, args.episode_steps)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text)
    return report


if __name__ == "__main__":
    main()
