"""Evaluate a trained run folder (model + normalisation statistics, never updated)::

    python -m traction.train.evaluate runs/tank_ppo --episodes 20 [--video] [--model best]
    python -m traction.train.evaluate --pretrained Traction/TankTurn-v0 --episodes 10 [--video]

``--model final`` (the default) evaluates ``model.zip`` with ``vecnormalize.pkl`` and writes
``evaluation.json``; ``--model best`` evaluates the model training's evaluations kept,
``best/best_model.zip``, with the statistics it was scored with, ``best/vecnormalize.pkl``, and
writes ``best/evaluation.json``. ``--video`` writes the first episode as ``evaluation.mp4`` (in the
same folder; ``.gif`` without ffmpeg): the frame
after reset, then one per step up to the step before the episode ended. The frame of the last
step is dropped: the vector environment resets an ended episode within that step (SB3's
same-step autoreset), so what it would render is already the next episode's first state.

``--pretrained ID`` evaluates the agent shipped with the package for that task
(:mod:`traction.train.pretrained`) and writes its results to ``--out`` (default
``runs/pretrained/<task name>/``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import yaml

from traction.envs.base import display_available
from traction.scenes.names import CAMERAS
from traction.train.checks import MissingExtra, int_at_least, positive_int_arg, require, writable_dir
from traction.train.train import make_vec

#: ``--model`` -> (folder in the run, model file) of the model to evaluate
MODELS = {"final": (".", "model.zip"), "best": ("best", "best_model.zip")}


def load_config(run: Path) -> dict:
    """The run folder's ``config.yml``.

    Raises:
        ValueError: the folder or its ``config.yml`` is missing, or a key of it.
    """
    if not run.is_dir():
        raise ValueError(f"run folder {run}: not found")
    if not (run / "config.yml").is_file():
        raise ValueError(f"run folder {run}: no config.yml (not a training run; train writes it "
                         "before it starts learning)")
    config = yaml.safe_load((run / "config.yml").read_text())
    missing = [k for k in ("env_id", "algo", "env_kwargs", "run") if k not in (config or {})]
    if not missing and "normalize" not in (config["run"] or {}):
        missing = ["run: normalize"]
    if missing:
        raise ValueError(f"run folder {run}: config.yml has no {', '.join(missing)} (train "
                         "writes every key of it)")
    return config


def model_files(run: Path, config: dict, which: str = "final") -> tuple[Path, Path | None]:
    """The model file of ``which`` (``final`` or ``best``) and its normalisation statistics
    (None when the run did not normalise; read only when its ``config.yml`` says so).

    Raises:
        ValueError: ``which`` is unknown, or a file it needs is missing, naming it.
    """
    if which not in MODELS:
        raise ValueError(f"--model {which!r}; allowed: {', '.join(MODELS)}")
    folder, name = MODELS[which]
    model = run / folder / name
    if not model.is_file():
        why = ("training's evaluations keep it from the first one on" if which == "best" else
               "not a finished training run: train writes it when it ends; an interrupted "
               "run's best model: --model best")
        raise ValueError(f"run folder {run}: no {model.relative_to(run)} ({why})")
    if not config["run"]["normalize"]:
        return model, None
    stats = run / folder / "vecnormalize.pkl"
    if not stats.is_file():
        raise ValueError(f"run folder {run}: no {stats.relative_to(run)}, but its config.yml says "
                         "the policy was trained on normalised observations (run: normalize: "
                         "true)" + (" (runs trained before the statistics were saved with the "
                                    "best model have none there: use --model final)"
                                    if which == "best" else ""))
    return model, stats


def check_run(run: Path, which: str = "final", video: bool = False) -> tuple[dict, Path,
                                                                              Path | None]:
    """Everything an evaluation needs, checked before any work: the run's config, the model
    and statistics files (:func:`model_files`), a display if the run renders to a window.
    Returns the config, the model file and the statistics file (or None).

    Raises:
        ValueError: naming what is missing.
    """
    config = load_config(run)
    files = model_files(run, config, which)
    if not video and config["env_kwargs"].get("render_mode") == "human" \
            and not display_available():
        raise ValueError(f"run folder {run}: its env_kwargs render to a window (render_mode: "
                         "human) and there is no display (DISPLAY and WAYLAND_DISPLAY are "
                         "unset); allowed here: --video, or a display")
    return config, *files


def _render(venv) -> np.ndarray:
    return venv.envs[0].render()        # (VecNormalize passes ``envs`` on from the adapter)


def _episodes(venv, model, episodes: int, video: bool) -> tuple[list, list, list]:
    """Returns, successes and (first episode) frames of ``episodes`` deterministic episodes."""
    returns, successes = [], []
    obs = venv.reset()
    frames = [_render(venv)] if video else []
    total = 0.0
    while len(returns) < episodes:
        action, _ = model.predict(obs, deterministic=True)
        obs, reward, done, infos = venv.step(action)
        total += float(venv.get_original_reward()[0]) if hasattr(venv, "get_original_reward") \
            else float(reward[0])
        if done[0]:                 # the env has already reset: its render is the next episode
            returns.append(total)
            successes.append(bool(infos[0].get("is_success", False)))
            total = 0.0
        elif video and not returns:
            frames.append(_render(venv))
    return returns, successes, frames


def evaluate(run: Path, episodes: int, video: bool = False, seed: int = 123,
             model: str = "final", camera: str = "chase", out: Path | None = None) -> dict:
    """Deterministic episodes of the ``final`` or ``best`` model; returns success rate and
    return statistics (also written to ``evaluation.json`` in ``out``, by default beside the
    model). ``camera``: the video's (``chase``, ``top`` or ``driver``; the env's
    ``camera_name``).

    Raises:
        ValueError: ``episodes`` < 1, an unknown ``camera``, or what :func:`check_run` refuses.
        MissingExtra: ``video`` without imageio (the ``render`` extra).
    """
    int_at_least("--episodes", episodes, 1)
    if camera not in CAMERAS:
        raise ValueError(f"camera = {camera!r}; allowed: {', '.join(CAMERAS)}")
    config, model_path, stats = check_run(run, model, video)
    if video:
        require("evaluate --video", "imageio")
    import stable_baselines3 as sb3

    kwargs = dict(config["env_kwargs"])
    if video:
        kwargs.update(render_mode="rgb_array", width=480, height=360)
    venv = make_vec(config["env_id"], kwargs, 1, seed, False, training=False, stats=stats)
    if video:
        venv.envs[0].camera_name = camera
    agent = getattr(sb3, config["algo"].upper()).load(model_path, device="cpu")
    returns, successes, frames = _episodes(venv, agent, episodes, video)
    fps = venv.get_attr("metadata")[0]["render_fps"]   # one frame per control step, real time
    venv.close()
    result = {"env_id": config["env_id"], "model": model, "episodes": episodes,
              "success_rate": float(np.mean(successes)), "mean_return": float(np.mean(returns)),
              "std_return": float(np.std(returns))}
    out = model_path.parent if out is None else Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if video and frames:
        from traction.scenes.video import VideoWriter

        with VideoWriter(out / "evaluation.mp4", fps=fps) as writer:
            for f in frames:
                writer.append(f)
        result["video"] = str(writer.path)
    (out / "evaluation.json").write_text(json.dumps(result, indent=2))
    return result


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description="Evaluate a Traction training run.")
    ap.add_argument("run", type=Path, nargs="?", help="training run folder")
    ap.add_argument("--pretrained", metavar="ID", default=None,
                    help="instead of a run: the agent shipped for this task, e.g. "
                         "Traction/TankTurn-v0")
    ap.add_argument("--out", type=Path, default=None,
                    help="where evaluation.json (and the video) go (default: beside the model; "
                         "with --pretrained: runs/pretrained/<task name>)")
    ap.add_argument("--episodes", type=positive_int_arg, default=10, help="episodes (>= 1)")
    ap.add_argument("--video", action="store_true", help="write evaluation.mp4 (first episode)")
    ap.add_argument("--model", choices=tuple(MODELS), default="final",
                    help="final: model.zip (default); best: best/best_model.zip")
    ap.add_argument("--camera", choices=CAMERAS,
                    help="with --video: the video's camera (default: chase)")
    args = ap.parse_args(argv)
    if args.camera is not None and not args.video:
        ap.error("--camera goes with --video (the video's camera)")
    if (args.run is None) == (args.pretrained is None):
        ap.error("give a run folder or --pretrained ID (one of them)")
    out = args.out
    try:
        require("evaluate", "stable_baselines3", *(("imageio",) if args.video else ()))
        run = args.run
        if args.pretrained is not None:
            from traction.train import pretrained

            run = pretrained.folder(args.pretrained)
            out = out or Path("runs") / "pretrained" / pretrained.name_of(args.pretrained)
        check_run(run, args.model, args.video)
        if out is not None:
            writable_dir(out)
    except (ValueError, MissingExtra) as e:
        ap.error(str(e))
    result = evaluate(run, args.episodes, args.video, model=args.model,
                      camera=args.camera or "chase", out=out)
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
