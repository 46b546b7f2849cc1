"""Where compiled code is kept on disk: one folder per content of the compiled sources.

Numba's on-disk cache (``cache=True``) checks a cached function against its own source file
only. But a compiled function holds the machine code of every compiled function it calls, from
whichever file: the physics loop in ``envs/physics.py`` holds the whole vehicle update and the
action maps. So the cache folder numba writes to (its ``CACHE_DIR`` setting, which the
environment variable ``NUMBA_CACHE_DIR`` gives) is pointed at a folder named after a hash of
those sources (:data:`SOURCES`) and of the versions whose values compiled code bakes in (Python,
numba, llvmlite, numpy, and MuJoCo: the physics loop holds MuJoCo's warning numbers):
``<base>/numba-<hash>``, with ``<base>`` the user's ``NUMBA_CACHE_DIR`` if set, else
``~/.cache/traction`` (``$XDG_CACHE_HOME/traction``). An edit of a compiled source or an upgrade
starts a fresh folder; an edit elsewhere (a task, a tool, a scene) does not.

The setting is the process's: numba functions of other libraries defined after traction is
imported are cached in the same folder (each still checked against its own file). Each edit or
upgrade leaves a folder behind (a few MB): every import marks its folder used, and
:func:`prune` removes the others beyond the :data:`KEEP` most recently used once they have not
been used for :data:`IDLE_DAYS`.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import llvmlite
import numba
import numpy as np

logger = logging.getLogger(__name__)

#: The sources whose compiled code other files' compiled functions contain (folders: every
#: ``.py`` in them), relative to the folder holding traction's packages. Numba checks each cached
#: function against its own file; these are the rest. ``tests/vehicle_model/test_kernel_cache.py``
#: checks that every compiled function calls compiled code from its own file or these only.
SOURCES = ("vehicle_model", "envs/physics.py", "envs/actions.py", "scenes/heightfield.py")
#: folders kept whatever their age: the most recently used ones
KEEP = 8
#: days a folder beyond the :data:`KEEP` newest is kept after its last use
IDLE_DAYS = 1.0
_NAME = re.compile(r"numba-[0-9a-f]{16}")


def source_root() -> Path:
    """The folder that holds traction's package folders (a checkout, or ``site-packages/traction``)."""
    return Path(__file__).resolve().parent.parent


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def source_files() -> list[Path]:
    """The files of :data:`SOURCES`, in a fixed order."""
    root = source_root()
    files = []
    for source in SOURCES:
        path = root / source
        files += sorted(path.glob("*.py")) if path.is_dir() else [path]
    return files


def digest() -> str:
    """16 hex digits of the hash of the :data:`SOURCES` (each file's path and text) and the
    versions baked into compiled code."""
    root = source_root()
    h = hashlib.sha256()
    for part in (sys.version, numba.__version__, llvmlite.__version__, np.__version__,
                 _version("mujoco")):
        h.update(part.encode() + b"\0")
    for path in source_files():
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def base_folder() -> Path:
    """The folder holding the ``numba-<hash>`` folders."""
    return Path(os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "traction"))


def prune(base: Path, current: Path, now: float | None = None) -> list[Path]:
    """Remove the ``numba-<hash>`` folders in ``base`` other than ``current`` that are not among
    the :data:`KEEP` most recently used and have not been used for :data:`IDLE_DAYS` (a folder's
    modification time is its last use: :func:`folder` sets it at every import). Returns the
    folders removed. A process still using a removed folder loses nothing but the cache: numba
    makes the folder again when it next saves."""
    now = time.time() if now is None else now
    try:
        found = [p for p in base.iterdir() if _NAME.fullmatch(p.name) and p != current]
        used = sorted(((p.stat().st_mtime, p) for p in found), reverse=True)
    except OSError:
        return []
    removed = []
    for mtime, path in used[max(KEEP - 1, 0):]:          # ``current`` is one of the KEEP
        if now - mtime > IDLE_DAYS * 86400.0:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def folder() -> Path:
    """This source tree's cache folder, made if missing and marked used; old ones pruned."""
    base = base_folder()
    path = base / f"numba-{digest()}"
    try:
        path.mkdir(parents=True, exist_ok=True)
        os.utime(path)
    except OSError:                                       # read-only home: a temporary cache
        base = Path(tempfile.gettempdir()) / "traction-numba"
        path = base / path.name
        path.mkdir(parents=True, exist_ok=True)
    for old in prune(base, path):
        logger.info("removed the unused compiled-code cache %s", old)
    return path


def install(path: Path) -> None:
    """Point numba's cache folder setting at ``path`` (before traction's compiled functions are
    defined: numba reads it when a ``cache=True`` function is decorated)."""
    numba.config.CACHE_DIR = str(path)
