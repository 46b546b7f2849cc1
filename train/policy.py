"""What drives the vehicle in a benchmark: the controller protocol and the ways to name one.

A **controller** is any callable ``controller(observation) -> action`` (numpy arrays of the
task's observation and action spaces); if it has a ``reset()`` method the harness calls it
before every episode. A **factory** makes the controller of one task variant from a
:class:`TaskSpec` (env id, variant, environment arguments, spaces, control period); it may
raise :class:`Unsupported` for a task it does not drive.

``--controller`` names one of:

- ``scripted``: the project's scripted controllers (``controllers.py``);
- ``MODULE:FACTORY``: a factory in an importable module (``my_pkg.pid:make``) or in a Python
  file (``path/to/pid.py:make``);
- a training run folder (``config.yml``, ``model.zip``, ``vecnormalize.pkl``, as ``train``
  writes it): its Stable-Baselines3 policy, deterministic, observations normalised with the
  run's statistics (never updated); it drives the variants of the env id it was trained on.

``--pretrained ID`` names a published trained agent (an environment id): the run folder
shipped as package data (:mod:`traction.train.pretrained`).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np

EXPECTED = ("'scripted', MODULE:FACTORY (an importable module or a .py file, and a function in "
            "it that makes a controller from a TaskSpec), or a training run folder (holding "
            "config.yml)")


@runtime_checkable
class Controller(Protocol):
    """Maps an observation to an action; ``reset()``, if present, is called before every
    episode (see :class:`Resettable`)."""

    def __call__(self, observation: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class Resettable(Protocol):
    """A controller with state between steps (integrators, filters, phases): ``reset()``
    clears it."""

    def __call__(self, observation: np.ndarray) -> np.ndarray: ...

    def reset(self) -> None: ...


@dataclass(frozen=True)
class TaskSpec:
    """What a factory is told about the task variant its controller will drive.

    Attributes:
        env_id: the registered environment id (``Traction/TankTurn-v1``).
        variant: the suite's variant name (``tank_turn_standard``).
        env_kwargs: the environment arguments of the variant (``{"drive_mode": "standard"}``).
        observation_space, action_space: the environment's spaces (``Box``).
        control_dt: seconds between two calls of the controller.
        max_episode_steps: the episode's step limit.
    """

    env_id: str
    variant: str
    env_kwargs: Mapping[str, Any]
    observation_space: gym.spaces.Box
    action_space: gym.spaces.Box
    control_dt: float
    max_episode_steps: int


#: a factory: the controller of one task variant
ControllerFactory = Callable[[TaskSpec], Controller]


class ControllerError(ValueError):
    """A controller source cannot drive a variant: the message says why and what to do."""


class Unsupported(ControllerError):
    """Raised by a factory for a task variant its controller does not drive."""


@dataclass(frozen=True)
class ControllerSource:
    """A named factory: what ``--controller`` / ``--pretrained`` resolved to."""

    spec: str                        # as given
    kind: str                        # "scripted", "factory", "sb3"
    description: str
    factory: ControllerFactory

    def make(self, task: TaskSpec) -> Controller:
        """The controller of ``task``, checked to be callable.

        Raises:
            Unsupported: the factory does not drive this variant (naming it and ``--tasks``).
            ControllerError: the factory returned something that is not callable.
        """
        try:
            controller = self.factory(task)
        except Unsupported as e:
            raise Unsupported(f"controller {self.spec} does not drive {task.variant} "
                              f"({task.env_id}): {e}; choose the variants it drives with "
                              "--tasks") from None
        if not callable(controller):
            raise ControllerError(f"controller {self.spec}: the factory returned {controller!r} "
                            f"({type(controller).__name__}) for {task.variant}, which is not "
                            "callable; expected a controller: observation -> action, "
                            "optionally with reset() (traction.train.policy.Controller)")
        return controller

    def as_dict(self) -> dict:
        return {"spec": self.spec, "kind": self.kind, "description": self.description}


# --- scripted -------------------------------------------------------------------------------
def _scripted(task: TaskSpec) -> Controller:
    from traction.train.controllers import for_env

    try:
        return for_env(task.env_id)
    except ValueError as e:
        raise Unsupported(str(e)) from None


SCRIPTED = ControllerSource("scripted", "scripted", "the scripted controllers of "
                            "traction.train.controllers (pure pursuit, drift phases, heading PD)",
                            _scripted)


# --- MODULE:FACTORY ------------------------------------------------------------------------
def _where(e: BaseException) -> str:
    """``file:line`` of the innermost frame of an exception's traceback."""
    frames = traceback.extract_tb(e.__traceback__)
    return f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""


def _import(text: str, module: str):
    """The module ``module`` (a dotted name, or a path ending in ``.py``)."""
    if module.endswith(".py") or "/" in module:
        path = Path(module)
        if not path.is_file():
            raise ValueError(f"--controller {text}: no file {path}; expected {EXPECTED}")
        name = "traction_controller_" + "".join(c if c.isalnum() else "_" for c in path.stem)
        spec = importlib.util.spec_from_file_location(name, path)
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[name] = loaded                     # (dataclasses and pickle look it up)
        try:
            spec.loader.exec_module(loaded)
        except Exception as e:
            del sys.modules[name]
            raise ValueError(f"--controller {text}: importing {path} raised "
                             f"{type(e).__name__}: {e}{_where(e)}") from e
        return loaded
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is not None and module.startswith(e.name):
            raise ValueError(f"--controller {text}: no module {module!r} on the Python path "
                             "(a file: give its path, ending in .py); expected "
                             f"{EXPECTED}") from None
        raise ValueError(f"--controller {text}: importing {module} raised "
                         f"{type(e).__name__}: {e}{_where(e)}") from e
    except Exception as e:
        raise ValueError(f"--controller {text}: importing {module} raised "
                         f"{type(e).__name__}: {e}{_where(e)}") from e


def _factory_source(text: str) -> ControllerSource:
    module_name, _, attr = text.rpartition(":")
    if not module_name or not attr:
        raise ValueError(f"--controller {text!r}: expected {EXPECTED}")
    module = _import(text, module_name)
    factory = getattr(module, attr, None)
    if factory is None:
        names = sorted(n for n, v in vars(module).items()
                       if callable(v) and not n.startswith("_")
                       and getattr(v, "__module__", None) == module.__name__)
        raise ValueError(f"--controller {text}: {module_name} has no {attr!r}; its functions "
                         f"and classes: {', '.join(names) or 'none'}")
    if not callable(factory):
        raise ValueError(f"--controller {text}: {attr} is a {type(factory).__name__}, not a "
                         "factory; expected a function (or class) taking a TaskSpec and "
                         "returning a controller")
    try:
        inspect.signature(factory).bind(None)
    except TypeError:
        raise ValueError(f"--controller {text}: {attr}{inspect.signature(factory)} cannot be "
                         "called with one argument; a factory takes a TaskSpec (env id, "
                         "variant, env_kwargs, spaces, control_dt) and returns a "
                         "controller") from None
    except ValueError:                                  # (no signature: a builtin) - try it
        pass
    doc = (inspect.getdoc(factory) or "").split("\n")[0].rstrip(".")
    return ControllerSource(text, "factory", f"{attr} in {module_name}" + (f": {doc}" if doc
                                                                          else ""), factory)


# --- trained agents ------------------------------------------------------------------------
class SB3Policy:
    """A Stable-Baselines3 model as a controller: the observation normalised with the run's
    statistics (never updated), then the model's deterministic action."""

    def __init__(self, model, normalizer=None):
        self.model, self.normalizer = model, normalizer

    def __call__(self, observation: np.ndarray) -> np.ndarray:
        obs = observation if self.normalizer is None else self.normalizer.normalize_obs(observation)
        action, _ = self.model.predict(obs, deterministic=True)
        return np.asarray(action, dtype=np.float32)


def _run_source(run: Path, which: str, spec: str) -> ControllerSource:
    """A training run folder's policy (``which``: ``final`` or ``best``), checked now by
    :func:`traction.train.evaluate.check_run`; the model loads at the first variant."""
    from traction.train.checks import require
    from traction.train.evaluate import check_run

    config, model_path, stats = check_run(run, which)
    require("benchmark --controller RUN_FOLDER", "stable_baselines3")
    trained_on, loaded = config["env_id"], {}

    mode = config["env_kwargs"].get("obs_mode", "state")

    def factory(task: TaskSpec) -> Controller:
        if task.env_id != trained_on:
            raise Unsupported(f"its policy was trained on {trained_on}")
        if mode != "state":                 # (the benchmark's variants observe the state)
            raise Unsupported(f"its policy observes obs_mode={mode!r}; the benchmark's "
                              "controllers get the state vector (evaluate the run with "
                              "python -m traction.train.evaluate)")
        if not loaded:
            import stable_baselines3 as sb3

            from traction.train.train import make_vec

            # The statistics load into the run's own vector env, as evaluate loads them.
            normalizer = None if stats is None else make_vec(
                trained_on, config["env_kwargs"], 1, 0, False, training=False, stats=stats)
            model = getattr(sb3, config["algo"].upper()).load(model_path, device="cpu")
            loaded["policy"] = SB3Policy(model, normalizer)
        return loaded["policy"]

    return ControllerSource(spec, "sb3", f"{config['algo'].upper()} policy of {run} "
                            f"({which} model, trained on {trained_on})", factory)


def pretrained_run(model_id: str) -> Path:
    """The run folder of the pretrained agent ``model_id`` (:func:`traction.train.pretrained.folder`).

    Raises:
        ValueError: no agent ships for that id, naming those that do.
    """
    from traction.train import pretrained

    return pretrained.folder(model_id)


def resolve(controller: str | None = None, pretrained: str | None = None,
            model: str = "final") -> ControllerSource:
    """What ``--controller`` (or ``--pretrained``) names, checked before any episode runs.

    Raises:
        ValueError: naming the value and what was expected.
    """
    if pretrained is not None:
        if controller is not None:
            raise ValueError(f"--pretrained {pretrained} and --controller {controller}: "
                             "allowed: one of them")
        return _run_source(pretrained_run(pretrained), model, f"pretrained:{pretrained}")
    text = controller or "scripted"
    if text == "scripted":
        return SCRIPTED
    path = Path(text)
    if path.is_dir():
        if not (path / "config.yml").is_file():
            raise ValueError(f"--controller {text}: a folder without config.yml, so not a "
                             f"training run; expected {EXPECTED}")
        return _run_source(path, model, text)
    if ":" in text:
        return _factory_source(text)
    raise ValueError(f"--controller {text!r}: not 'scripted', not a folder, and no ':'; "
                     f"expected {EXPECTED}")
