"""Evaluate a trained run folder (model + normalisation statistics, never updated)::

    python -m traction.train.evaluate runs/tank_ppo --episodes 20 [--video]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import yaml

from traction.train.train import make_vec


def evaluate(run: Path, episodes: int, video: bool = False, seed: int = 123) -> dict:
    """Deterministic episodes; returns success rate and return statistics."""
    import stable_baselines3 as sb3

    config = yaml.safe_load((run / "config.yml").read_text())
    stats = run / "vecnormalize.pkl"
    kwargs = dict(config["env_kwargs"])
    if video:
        kwargs.update(render_mode="rgb_array", width=480, height=360)
    venv = make_vec(config["env_id"], kwargs, 1, seed, False, training=False,
                    stats=stats if stats.exists() else None)
    model = getattr(sb3, config["algo"].upper()).load(run / "model.zip", device="cpu")
    returns, successes, frames = [], [], []
    obs = venv.reset()
    total = 0.0
    while len(returns) < episodes:
        action, _ = model.predict(obs, deterministic=True)
        obs, reward, done, infos = venv.step(action)
        total += float(venv.get_original_reward()[0]) if hasattr(venv, "get_original_reward") \
            else float(reward[0])
        if video and not returns:
            frames.append(venv.envs[0].render() if hasattr(venv, "envs") else
                          venv.venv.envs[0].render())
        if done[0]:
            returns.append(total)
            successes.append(bool(infos[0].get("is_success", False)))
            total = 0.0
    venv.close()
    result = {"env_id": config["env_id"], "episodes": episodes,
              "success_rate": float(np.mean(successes)), "mean_return": float(np.mean(returns)),
              "std_return": float(np.std(returns))}
    if video and frames:
        from traction.scenes.video import VideoWriter

        with VideoWriter(run / "evaluation.mp4", fps=25) as writer:
            for f in frames:
                writer.append(f)
        result["video"] = str(writer.path)
    (run / "evaluation.json").write_text(json.dumps(result, indent=2))
    return result


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description="Evaluate a Traction training run.")
    ap.add_argument("run", type=Path)
    ap.add_argument("--episodes", type=int, default=10)
    ap.add_argument("--video", action="store_true", help="write evaluation.mp4 (first episode)")
    args = ap.parse_args(argv)
    result = evaluate(args.run, args.episodes, args.video)
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
