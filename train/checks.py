"""Argument checks shared by the command-line tools.

Every check runs before any work or file writing. The ``*_arg`` functions are argparse ``type``
callables (a bad value ends the program with argparse's usage error naming the argument); the
others raise :class:`ValueError` (or :class:`MissingExtra`) naming the argument and what is
allowed, which the tools' ``main`` turn into ``parser.error``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import tempfile
from pathlib import Path

from traction.vehicle_model.params import check_number

#: Optional dependency (import name) -> the extra of ``pyproject.toml`` that installs it.
EXTRAS = {"matplotlib": "plot", "imageio": "render", "stable_baselines3": "train",
          "ray": "scale", "rliable": "stats"}


class MissingExtra(ImportError):
    """An optional dependency a tool needs is not installed."""


def int_at_least(name: str, value, lo: int) -> int:
    """``value`` if it is an integer >= ``lo``, else ValueError naming ``name``."""
    return check_number(name, value, lo, integer=True)


def positive_int_arg(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        return int_at_least("value", int(text), 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}; allowed: an integer >= 1") from None


#: Largest seed: SB3 seeds numpy's legacy generator, which takes 32 bits.
MAX_SEED = 2**32 - 1


def seed_arg(text: str) -> int:
    """argparse type: a seed, an integer in [0, 2**32 - 1]."""
    try:
        return check_number("value", int(text), 0, MAX_SEED, integer=True)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}; allowed: an integer in [0, {MAX_SEED}]") \
            from None


def require(tool: str, *modules: str) -> None:
    """Import ``modules`` now (not after the work); MissingExtra says which extra installs them.

    Raises:
        MissingExtra: a module is not installed.
    """
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as e:
            extra = EXTRAS.get(module.split(".")[0], "dev")
            raise MissingExtra(f"{tool} needs {module}, which is not installed: "
                               f"pip install -e \".[{extra}]\" (or \".[dev]\")") from e


def writable_dir(path: Path, arg: str = "--out") -> Path:
    """Create folder ``path`` if needed and check that a file can be written in it.

    Raises:
        ValueError: it cannot be created or written, naming ``arg``.
    """
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as e:
        raise ValueError(f"{arg} {path}: not a writable folder ({e.strerror or e})") from None
    return path


def creatable_dir(path: Path, arg: str = "--out") -> Path:
    """Check, without creating anything, that folder ``path`` exists and is writable or could
    be created (its nearest existing ancestor is a writable folder).

    Raises:
        ValueError: it is a file, or it could not be created or written, naming ``arg``.
    """
    path = Path(path)
    existing = next(p for p in (path, *path.parents) if p.exists() or p == p.parent)
    if not existing.is_dir():
        what = "is not a folder" if existing == path else f"{existing} is not a folder"
        raise ValueError(f"{arg} {path}: {what}; allowed: a writable folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"{arg} {path}: {existing} is not writable; allowed: a writable folder")
    return path


def new_run_dir(path: Path, arg: str = "--out") -> Path:
    """:func:`creatable_dir`, and new or empty: a run folder's files are read together
    (``config.yml``, ``model.zip``, ``vecnormalize.pkl``, ``evaluations.npz``), so another run's
    left in it would be taken for this one's.

    Raises:
        ValueError: as :func:`creatable_dir`, or the folder holds files, naming ``arg``.
    """
    path = creatable_dir(path, arg)
    if path.is_dir() and any(path.iterdir()):
        raise ValueError(f"{arg} {path}: not empty (an earlier run's files would mix with this "
                         "run's); allowed: a new or empty folder")
    return path


def writable_file(path: Path, arg: str = "--out") -> Path:
    """Check that file ``path`` can be written (its folder is created if needed; the file is
    not created).

    Raises:
        ValueError: it is a folder, or its folder cannot be created or written, naming ``arg``.
    """
    if path.is_dir():
        raise ValueError(f"{arg} {path}: is a folder; allowed: a file path")
    writable_dir(path.parent, arg=f"{arg} {path}: folder")
    return path
