"""Evaluate a trained run folder (model + normalisation statistics, never updated)::

    python -m traction.train.evaluate runs/tank_ppo --episodes 20 [--video] [--model best]
    python -m traction.train.evaluate --pretrained Traction/TankTurn-v1 --episodes 10 [--video]
    python -m traction.train.evaluate runs/tank_ppo --env-kwarg tire_model=magic_formula

``--model final`` (the default) evaluates ``model.zip`` with ``vecnormalize.pkl`` and writes
``evaluation.json``; ``--model best`` evaluates the model training's evaluations kept,
``best/best_model.zip``, with the statistics it was scored with, ``best/vecnormalize.pkl``, and
writes ``best/evaluation.json``. ``--video`` writes the first episode as ``evaluation.mp4`` (in the
same folder; ``.gif`` without ffmpeg): the frame
after reset, then one per step up to the step before the episode ended. The frame of the last
step is dropped: the vector environment resets an ended episode within that step (SB3's
same-step autoreset), so what it would render is already the next episode's first state;
instead the video ends on the last frame held for a second with the episode's outcome. Each
frame shows the task's target (its markers) and an overlay: time, the step's reward and the
return so far, the task's key quantities (its ``readout``) and success. ``--size`` and
``--quality`` set the frames' size and render quality (``auto``: ``low`` on a software OpenGL,
several times faster there; see :mod:`traction.scenes.render`).

The run folder is read wherever it is: the vehicle and your own task's module come from the
copies training kept in it (:mod:`traction.train.run_folder`).

``--pretrained ID`` evaluates the agent shipped with the package for that task
(:mod:`traction.train.pretrained`) and writes its results to ``--out`` (default
``runs/pretrained/<task name>/``).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np
import yaml

from traction.envs.base import display_available
from traction.scenes.names import CAMERAS
from traction.scenes.render import QUALITIES
from traction.train import run_folder
from traction.train.checks import MissingExtra, int_at_least, positive_int_arg, require, writable_dir
from traction.train.hparams import assignment
from traction.train.train import check_env, make_vec, traction_spec

#: the video's frame size (px) unless ``--size`` says otherwise
VIDEO_SIZE = (480, 360)

#: ``--model`` -> (folder in the run, model file) of the model to evaluate
MODELS = {"final": (".", "model.zip"), "best": ("best", "best_model.zip")}

#: a checkpoint training saved (``checkpoint_freq``): its steps are the number
CHECKPOINT = re.compile(r"rl_model_(\d+)_steps\.zip")


def at_steps(steps: int) -> str:
    """The ``model`` name of the checkpoint saved at or before ``steps`` environment steps
    (:func:`evaluate`, ``--at-steps``): an equal budget for runs that trained longer."""
    return f"steps<={int(steps)}"


def checkpoint(run: Path, model: str) -> tuple[int, Path, Path]:
    """The steps, model file and statistics file of an :func:`at_steps` ``model`` of ``run``:
    the last checkpoint saved at or before the steps.

    Raises:
        ValueError: no checkpoint that early (naming the ones there are).
    """
    steps = int(model.removeprefix("steps<="))
    saved = sorted(int(m.group(1)) for f in (run / "checkpoints").glob("rl_model_*_steps.zip")
                   if (m := CHECKPOINT.fullmatch(f.name)))
    early = [k for k in saved if k <= steps]
    if not early:
        raise ValueError(f"run folder {run}: no checkpoint at or before {steps:,} steps (saved: "
                         f"{', '.join(f'{k:,}' for k in saved) or 'none'}; train saves one every "
                         "checkpoint_freq steps)")
    k = early[-1]
    folder = run / "checkpoints"
    return k, folder / f"rl_model_{k}_steps.zip", folder / f"rl_model_vecnormalize_{k}_steps.pkl"


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
    if which.startswith("steps<="):
        _, model, stats = checkpoint(run, which)
        if config["run"]["normalize"] and not stats.is_file():
            raise ValueError(f"run folder {run}: no {stats.relative_to(run)} beside "
                             f"{model.name}, but the policy was trained on normalised "
                             "observations (run: normalize: true)")
        return model, stats if config["run"]["normalize"] else None
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


def _episodes(venv, model, episodes: int, video=None, progress: bool = False) -> tuple[list,
                                                                                     list]:
    """Returns and successes of ``episodes`` deterministic episodes; with ``video`` (a
    :class:`_Video`), the first episode's frames go to it."""
    from tqdm import tqdm

    returns, successes = [], []
    obs = venv.reset()
    bar = tqdm(total=episodes, unit="episode", desc="evaluating", disable=not progress)
    if video is not None:
        video.start(progress)
    total = 0.0
    while len(returns) < episodes:
        action, _ = model.predict(obs, deterministic=True)
        obs, reward, done, infos = venv.step(action)
        r = float(venv.get_original_reward()[0]) if hasattr(venv, "get_original_reward") \
            else float(reward[0])
        total += r
        if done[0]:                 # the env has already reset: its render is the next episode
            returns.append(total)
            successes.append(bool(infos[0].get("is_success", False)))
            if video is not None and len(returns) == 1:
                video.end(r, total, infos[0])
            total = 0.0
            bar.update()
        elif video is not None and not returns:
            video.frame(r, total, infos[0])
    bar.close()
    return returns, successes


class _Video:
    """The first episode's frames with their overlay, streamed to a video file, a progress bar
    meanwhile; the last frame held for a second with the episode's outcome."""

    def __init__(self, venv, path: Path, fps: int):
        from traction.scenes.video import VideoWriter

        self.env = venv.envs[0]         # (VecNormalize passes ``envs`` on from the adapter)
        self.writer = VideoWriter(path, fps=fps)
        self.fps, self.steps, self.bar, self.last = fps, 0, None, None
        self.name = self.env.spec.id.split("/")[-1] if self.env.spec else type(self.env).__name__

    def start(self, progress: bool) -> None:
        from tqdm import tqdm

        limit = self.env.spec.max_episode_steps if self.env.spec else None
        self.bar = tqdm(total=limit, unit="frame", desc="video (episode 1)", leave=False,
                        disable=not progress)
        self._add(self._text(0.0, 0.0, "not yet"))

    def _text(self, reward: float, total: float, success: str, fresh: bool = True) -> str:
        """The overlay: time, reward and return, the task's readout of the frame's state (not
        ``fresh``: the last frame's, the env having reset since) and ``success``."""
        if fresh:
            self.readout = [f"{k}: {v}" for k, v in self.env.readout().items()]
        lines = [f"{self.name}   t {self.steps * self.env.dt:5.2f} s",
                 f"reward {reward:+.3f}   return {total:+.2f}", *self.readout,
                 f"success: {success}"]
        return "\n".join(lines)

    def _add(self, text: str) -> None:
        from traction.scenes.render import draw_text

        self.last = self.env.render()
        self.writer.append(draw_text(self.last, text))
        self.bar.update()

    def frame(self, reward: float, total: float, info: dict) -> None:
        self.steps += 1
        self._add(self._text(reward, total, "YES" if info.get("is_success") else "not yet"))

    def end(self, reward: float, total: float, info: dict) -> None:
        """The last frame again for a second, with the step that ended the episode: its
        reward, the return, and how it ended (the readout is the last frame's)."""
        from traction.scenes.render import draw_text

        self.steps += 1
        why = ("diverged" if info.get("diverged") else "time limit"
               if info.get("TimeLimit.truncated") else "terminated")
        outcome = "YES" if info.get("is_success") else f"no ({why})"
        text = self._text(reward, total, f"{outcome}   (episode over)", fresh=False)
        card = draw_text(self.last, text)
        for _ in range(self.fps):
            self.writer.append(card)
        self.bar.close()

    def close(self) -> Path | None:
        if self.bar is not None:
            self.bar.close()
        return self.writer.close()


def evaluate(run: Path, episodes: int, video: bool = False, seed: int = 123,
             model: str = "final", camera: str = "chase", size: tuple[int, int] = VIDEO_SIZE,
             quality: str = "auto", progress: bool = False, out: Path | None = None,
             env_overrides: dict | None = None) -> dict:
    """Deterministic episodes of the ``final`` or ``best`` model; returns success rate and
    return statistics (also written to ``evaluation.json`` in ``out``, by default beside the
    model). ``camera``: the video's (``chase``, ``top``, ``driver`` or ``overhead``; the env's
    ``camera_name``); ``size``: its frames' ``(width, height)`` (px); ``quality``: their render
    quality (``auto``, ``high``, ``low``); ``progress``: progress bars (stderr);
    ``env_overrides``: environment arguments that replace the run's, to evaluate the agent in
    another setting than it trained in (``{"tire_model": "magic_formula"}``, ``{"randomize":
    "wide"}``); the result then goes to ``evaluations/<NAME=VALUE,...>/evaluation.json``
    beside the model (unless ``out``) and names them (``env_overrides``).

    Raises:
        ValueError: ``episodes`` < 1, an unknown ``camera`` or ``quality``, a kept file that does
            not load, or what :func:`check_run` refuses.
        MissingExtra: ``video`` without imageio (the ``render`` extra).
    """
    int_at_least("--episodes", episodes, 1)
    if camera not in CAMERAS:
        raise ValueError(f"camera = {camera!r}; allowed: {', '.join(CAMERAS)}")
    if quality not in QUALITIES:
        raise ValueError(f"quality = {quality!r}; allowed: {', '.join(QUALITIES)}")
    config, model_path, stats = check_run(run, model, video)
    overrides = dict(env_overrides or {})
    kwargs = {**env_kwargs(run, config), **overrides}    # (imports a run's own task first)
    check_env(config["env_id"], overrides)
    if video:
        require("evaluate --video", "imageio")
    if out is None:
        out = model_path.parent
        if model.startswith("steps<="):         # (the checkpoints' folder holds them all)
            out = run / "evaluations" / f"checkpoint_{checkpoint(run, model)[0]}"
        if overrides:
            out = out / "evaluations" / override_name(overrides)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    import stable_baselines3 as sb3

    if video:
        kwargs.update(render_mode="rgb_array", width=size[0], height=size[1])
    venv = make_vec(config["env_id"], kwargs, 1, seed, False, training=False, stats=stats)
    agent = getattr(sb3, config["algo"].upper()).load(model_path, device="cpu")
    recorder = None
    if video:
        venv.envs[0].camera_name = camera
        venv.envs[0].render_quality = quality
        fps = venv.get_attr("metadata")[0]["render_fps"]   # one frame per control step
        recorder = _Video(venv, out / "evaluation.mp4", fps)
    try:
        returns, successes = _episodes(venv, agent, episodes, recorder, progress)
    finally:
        written = recorder.close() if recorder is not None else None
        venv.close()
    if model.startswith("steps<="):
        model = f"checkpoint at {checkpoint(run, model)[0]} steps"
    result = {"env_id": config["env_id"], "model": model, "episodes": episodes, "seed": seed,
              "success_rate": float(np.mean(successes)), "mean_return": float(np.mean(returns)),
              "std_return": float(np.std(returns))}
    if overrides:
        result["env_overrides"] = overrides
    if written is not None:
        result["video"] = str(written)
    (out / "evaluation.json").write_text(json.dumps(result, indent=2))
    return result


def override_name(overrides: dict) -> str:
    """A folder name for environment arguments: ``randomize=wide,tire_model=arcade``."""
    return ",".join(f"{k}={v}" for k, v in sorted(overrides.items())).replace("/", "_")


def env_kwargs(run: Path, config: dict) -> dict:
    """The run's environment arguments, with the vehicle it kept (its ``vehicle.toml``) and its
    task's module first on the import path (:mod:`traction.train.run_folder`).

    Raises:
        ValueError: a kept file is missing or does not load.
    """
    kwargs = dict(config["env_kwargs"])
    run_folder.use_task(run, config)
    try:
        traction_spec(config["env_id"])             # (imports the task's module: its id)
    except ValueError as e:
        if not config.get("kept", {}).get("task_files"):
            kept = "the run kept no copy of its module"
        elif not (run / run_folder.TASK_FOLDER).is_dir():
            kept = f"its copy, {run_folder.TASK_FOLDER}/, is missing"
        else:
            kept = f"its copy in {run_folder.TASK_FOLDER}/ does not import either"
        raise ValueError(f"run folder {run}: {e}; {kept}") from None
    vehicle = run_folder.vehicle(run, config)
    if vehicle is not None:
        kwargs["vehicle"] = vehicle
    return kwargs


def size_arg(text: str) -> tuple[int, int]:
    """argparse type: ``WIDTHxHEIGHT`` in pixels (each 16-1280 wide, 16-720 high)."""
    try:
        width, height = (int(v) for v in text.lower().split("x"))
        if 16 <= width <= 1280 and 16 <= height <= 720:
            return width, height
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"{text!r}; allowed: WIDTHxHEIGHT, e.g. 480x360 (width "
                                     "16-1280, height 16-720)")


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description="Evaluate a Traction training run.")
    ap.add_argument("run", type=Path, nargs="?", help="training run folder")
    ap.add_argument("--pretrained", metavar="ID", default=None,
                    help="instead of a run: the agent shipped for this task, e.g. "
                         "Traction/TankTurn-v1")
    ap.add_argument("--out", type=Path, default=None,
                    help="where evaluation.json (and the video) go (default: beside the model; "
                         "with --pretrained: runs/pretrained/<task name>)")
    ap.add_argument("--episodes", type=positive_int_arg, default=10, help="episodes (>= 1)")
    ap.add_argument("--video", action="store_true", help="write evaluation.mp4 (first episode)")
    ap.add_argument("--model", choices=tuple(MODELS), default="final",
                    help="final: model.zip (default); best: best/best_model.zip")
    ap.add_argument("--at-steps", type=positive_int_arg, default=None, metavar="N",
                    help="instead of --model: the checkpoint saved at or before N environment "
                         "steps (results in evaluations/checkpoint_<steps>/)")
    ap.add_argument("--camera", choices=CAMERAS,
                    help="with --video: the video's camera (default: chase)")
    ap.add_argument("--size", type=size_arg, default=None,
                    help=f"with --video: frame size WIDTHxHEIGHT (default: {VIDEO_SIZE[0]}x"
                    f"{VIDEO_SIZE[1]})")
    ap.add_argument("--quality", choices=QUALITIES, default=None,
                    help="with --video: render quality (default: auto, which is low, several "
                    "times faster, on a software OpenGL, and high on a GPU)")
    ap.add_argument("--env-kwarg", type=assignment, action="append", default=[],
                    metavar="NAME=VALUE",
                    help="evaluate with this environment argument instead of the run's, e.g. "
                         "tire_model=magic_formula or randomize=wide (repeatable); results go "
                         "to evaluations/NAME=VALUE/ beside the model unless --out")
    ap.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    args = ap.parse_args(argv)
    for name in ("camera", "size", "quality"):
        if getattr(args, name) is not None and not args.video:
            ap.error(f"--{name} goes with --video (the video's {name})")
    if (args.run is None) == (args.pretrained is None):
        ap.error("give a run folder or --pretrained ID (one of them)")
    model = args.model if args.at_steps is None else at_steps(args.at_steps)
    if args.at_steps is not None and args.model != "final":
        ap.error("--at-steps names the model itself: give it or --model, not both")
    out = args.out
    try:
        require("evaluate", "stable_baselines3", *(("imageio",) if args.video else ()))
        run = args.run
        if args.pretrained is not None:
            from traction.train import pretrained

            run = pretrained.folder(args.pretrained)
            if out is None:
                out = Path("runs") / "pretrained" / pretrained.name_of(args.pretrained)
                if args.env_kwarg:                  # beside the shipped agent's own results
                    out = out / "evaluations" / override_name(dict(args.env_kwarg))
        check_run(run, model, args.video)
        if out is not None:
            writable_dir(out)
        result = evaluate(run, args.episodes, args.video, model=model,
                          camera=args.camera or "chase", size=args.size or VIDEO_SIZE,
                          quality=args.quality or "auto", progress=not args.no_progress, out=out,
                          env_overrides=dict(args.env_kwarg))
    except (ValueError, MissingExtra) as e:
        ap.error(str(e))
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
