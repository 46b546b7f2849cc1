"""What a run folder keeps so that it evaluates anywhere, as trained.

Training reads two things from outside the run folder that evaluation needs again:

- the vehicle: a preset name or a TOML path (relative to where training ran), read when the
  environment is built. The run keeps the file's text as ``vehicle.toml``; evaluation builds
  the vehicle from that copy, so it works from any folder, after the file is moved, edited or
  deleted (and after a preset changes in a later version of traction);
- your own task's module (``--env my_tasks:MyTasks/Stop-v0``): the run keeps a copy of its
  source in ``task/`` (the module's file, or its top-level package's ``.py`` files), which
  evaluation imports ahead of anything else of that name. Modules installed in the Python
  environment (site-packages) and traction's own are not copied: they are imported by name.

``config.yml`` lists them under ``kept`` (a run without that key, from before, is evaluated with
its ``env_kwargs`` as they are).
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import shutil
import sys
import sysconfig
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from traction.vehicle_model import VehicleParams
from traction.vehicle_model.config import parse_vehicle, preset_names
from traction.vehicle_model.errors import VehicleConfigError

VEHICLE_FILE = "vehicle.toml"
TASK_FOLDER = "task"


@dataclass
class Kept:
    """The files a run keeps (:func:`collect`), written by :meth:`write`."""

    vehicle_text: str | None = None        # the vehicle file's text
    vehicle_source: str | None = None      # the vehicle argument it was read from
    vehicle_name: str | None = None
    task_files: dict[str, Path] = field(default_factory=dict)   # path in the run -> source
    task_module: str | None = None

    def config(self) -> dict:
        """The ``kept`` entry of ``config.yml``."""
        out = {}
        if self.vehicle_text is not None:
            out.update(vehicle=VEHICLE_FILE, vehicle_source=self.vehicle_source,
                       vehicle_name=self.vehicle_name)
        if self.task_files:
            out.update(task_module=self.task_module, task_files=sorted(self.task_files))
        return out

    def write(self, run: Path) -> None:
        if self.vehicle_text is not None:
            (run / VEHICLE_FILE).write_text(self.vehicle_text, encoding="utf-8")
        for relative, source in self.task_files.items():
            target = run / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


def collect(env_id: str, env_kwargs: dict, creator) -> Kept:
    """What a run of ``env_id`` (``module:id`` or an id; ``creator``: its environment class)
    with ``env_kwargs`` keeps: the vehicle file's text if the task takes a ``vehicle`` argument
    given (or defaulting to) a preset name or a TOML path, and a copy of a user's task module.

    Raises:
        VehicleConfigError: the vehicle file cannot be read.
    """
    kept = Kept()
    vehicle = env_kwargs.get("vehicle", _default_vehicle(creator))
    if isinstance(vehicle, str | os.PathLike):
        kept.vehicle_text, kept.vehicle_name = _vehicle_text(vehicle)
        kept.vehicle_source = str(vehicle)
    module = env_id.rpartition(":")[0]
    if module:
        kept.task_module = module
        kept.task_files = _module_files(module)
    return kept


def _default_vehicle(creator):
    try:
        param = inspect.signature(creator).parameters.get("vehicle")
    except (TypeError, ValueError):
        return None
    return None if param is None or param.default is inspect.Parameter.empty else param.default


def _vehicle_text(vehicle: str | os.PathLike) -> tuple[str, str]:
    """The TOML text of a preset name or a ``.toml`` path, and the vehicle's name."""
    path = Path(vehicle)
    if path.suffix != ".toml":
        if str(vehicle) not in preset_names():
            raise VehicleConfigError(f"unknown vehicle preset {str(vehicle)!r}; presets: "
                                     f"{', '.join(preset_names())} (or give a path to a .toml "
                                     "file)")
        text = (resources.files("traction.vehicle_model") / "presets" /
                f"{vehicle}.toml").read_text(encoding="utf-8")
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise VehicleConfigError(f"{path}: cannot read vehicle file "
                                     f"({getattr(e, 'strerror', None) or e})") from None
    try:
        name = tomllib.loads(text).get("name", path.stem)
    except tomllib.TOMLDecodeError as e:
        raise VehicleConfigError(f"{path}: TOML syntax error: {e}") from None
    return text, str(name)


def _installed(path: Path) -> bool:
    """Whether ``path`` lies in the Python installation (standard library, site-packages):
    importable by name wherever the run is evaluated."""
    roots = {sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "platlib")}
    path = path.resolve()
    return any(path.is_relative_to(Path(r).resolve()) for r in roots if r) or \
        "site-packages" in path.parts or "dist-packages" in path.parts


def _module_files(module: str) -> dict[str, Path]:
    """``task/<file>`` -> source for the user's module ``module`` (its top-level package's
    ``.py`` files, or its own file); none for an installed module or traction's."""
    top = module.split(".")[0]
    if top == "traction":
        return {}
    spec = importlib.util.find_spec(top)
    if spec is None or spec.origin in (None, "built-in", "frozen"):
        return {}
    origin = Path(spec.origin)
    if _installed(origin):
        return {}
    if spec.submodule_search_locations:                         # a package: its .py files
        root = origin.parent
        return {f"{TASK_FOLDER}/{top}/{p.relative_to(root).as_posix()}": p
                for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts}
    return {f"{TASK_FOLDER}/{origin.name}": origin}


def use_task(run: Path, config: dict) -> None:
    """Put the run's copy of its task module first on the import path (before the module is
    imported by the environment id)."""
    if config.get("kept", {}).get("task_files"):
        folder = str((run / TASK_FOLDER).resolve())
        if folder not in sys.path:
            sys.path.insert(0, folder)


def vehicle(run: Path, config: dict) -> VehicleParams | None:
    """The vehicle the run was trained with, from its ``vehicle.toml`` (None: the run kept
    none, use ``env_kwargs``).

    Raises:
        ValueError: the file is missing or does not load, naming it.
    """
    kept = config.get("kept", {})
    if not kept.get("vehicle"):
        return None
    path = run / kept["vehicle"]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ValueError(f"run folder {run}: no {kept['vehicle']} ({e.strerror}), but its "
                         "config.yml says the run kept its vehicle there") from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"run folder {run}: {kept['vehicle']}: TOML syntax error: {e}") from None
    if kept.get("vehicle_name"):
        data.setdefault("name", kept["vehicle_name"])
    return parse_vehicle(data, str(path))
