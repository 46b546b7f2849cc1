"""Pictures of what an agent observes, beside what a viewer sees::

    python -m traction.train.show_observations [--out docs/frames] [--steps 60] [--seed 1]

Per task: the scripted controller drives ``--steps`` steps from ``--seed``; then one figure,
``OUT/<task>_observations.png``, shows the chase camera's frame (480 x 360, the task's markers
drawn), the ``pixels`` observation (84 x 84 from the ``overhead`` camera, fixed to the
vehicle, as the agent gets it, enlarged) and the ``lidar``
scan (the default 2 x 32 beams, seen from above: each hit where the beam met something, the
beams reaching their range in grey). Needs matplotlib (the ``plot`` extra) and offscreen
rendering (``MUJOCO_GL=egl``, set for you without a display).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gymnasium as gym

import traction.envs
from traction.train.checks import require, writable_dir


def observations(env_id: str, steps: int, seed: int) -> dict:
    """The chase frame, the pixels and the lidar readings (with the beams' directions in the
    chassis frame) after ``steps`` scripted steps from ``seed``."""
    from traction.envs.sensors import beam_directions
    from traction.train.controllers import for_env

    env = gym.make(env_id, render_mode="rgb_array", width=480, height=360,
                   obs_mode="state+pixels")
    lidar = gym.make(env_id, obs_mode="state+lidar")
    ctrl = for_env(env_id)
    obs, _ = env.reset(seed=seed)
    scan, _ = lidar.reset(seed=seed)
    for _ in range(steps):
        action = ctrl(obs["state"])
        obs, _, terminated, truncated, _ = env.step(action)
        scan, *_ = lidar.step(action)
        if terminated or truncated:
            break
    o = lidar.unwrapped.obs_options
    out = {"frame": env.render(), "pixels": obs["pixels"], "lidar": scan["lidar"],
           "range": o["range"], "beams": beam_directions(o["beams"], o["fov_deg"],
                                                         o["vertical_deg"]),
           "planes": o["vertical_deg"]}
    env.close()
    lidar.close()
    return out


def figure(env_id: str, shown: dict, path: Path) -> None:
    """Write the three panels of ``shown`` (:func:`observations`) to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), width_ratios=[4, 3, 3])
    axes[0].imshow(shown["frame"])
    axes[0].set_title("chase camera (render)")
    axes[1].imshow(shown["pixels"], interpolation="nearest")
    axes[1].set_title(f"obs_mode='pixels' ({shown['pixels'].shape[1]} x "
                      f"{shown['pixels'].shape[0]}, overhead camera)")
    for ax in axes[:2]:
        ax.set_axis_off()
    ax = axes[2]
    dist, beams, reach = shown["lidar"], shown["beams"], shown["range"]
    per_plane = len(dist) // len(shown["planes"])
    for k, (angle, colour) in enumerate(zip(shown["planes"], ("tab:blue", "tab:orange",
                                                               "tab:green", "tab:red"),
                                            strict=False)):
        d, b = dist[k * per_plane:(k + 1) * per_plane], beams[k * per_plane:(k + 1) * per_plane]
        hit = d < reach
        xy = b[:, :2] * d[:, None]
        ax.scatter(-xy[hit, 1], xy[hit, 0], s=12, color=colour, label=f"{angle:+.0f} deg")
        ax.scatter(-xy[~hit, 1], xy[~hit, 0], s=6, color="0.75")
    ax.scatter([0], [0], marker="^", color="k", s=40)
    ax.set_xlim(-reach, reach)
    ax.set_ylim(-reach, reach)
    ax.set_aspect("equal")
    ax.set_xlabel("right (m)")
    ax.set_ylabel("ahead (m)")
    ax.set_title("obs_mode='state+lidar': hits from above")
    ax.legend(loc="lower right", fontsize=7)
    fig.suptitle(env_id)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main(argv=None) -> list[Path]:
    ap = argparse.ArgumentParser(description="Pictures of each task's observations (pixels, "
                                             "lidar) beside its chase frame.")
    ap.add_argument("--out", type=Path, default=Path("docs/frames"))
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--envs", nargs="+", default=list(traction.envs.ENV_IDS))
    args = ap.parse_args(argv)
    require("show_observations", "matplotlib")
    try:
        writable_dir(args.out)
    except ValueError as e:
        ap.error(str(e))
    written = []
    for env_id in args.envs:
        name = env_id.split("/")[-1].split("-")[0].lower()
        path = args.out / f"{name}_observations.png"
        figure(env_id, observations(env_id, args.steps, args.seed), path)
        print(f"wrote {path}")
        written.append(path)
    return written


if __name__ == "__main__":
    main()
