"""Where the compiled update is kept on disk, under which key, and for how long.

Three things numba's own cache does not do for a package like this one:

1. **Callees in other files.** Numba checks a cached function against its own source file only,
   but a compiled caller contains its inlined callees from other files (``envs/physics.py``'s
   loop contains the whole vehicle update). So the cache lives in a folder named after a hash of
   every traction source file and of the versions whose values compiled code bakes in (Python,
   numba, llvmlite, numpy, MuJoCo: the physics loop holds MuJoCo's warning numbers). Any edit or
   upgrade starts a fresh folder: ``~/.cache/traction/numba-<hash>`` (below
   ``$NUMBA_CACHE_DIR`` or ``$XDG_CACHE_HOME`` when set).
2. **One cache per content, not per path.** Numba files a function's cache under a hash of its
   source folder's path, so a second checkout, a CI clone or a second virtual environment with
   the same sources compiled everything again (up to a minute per entry point). :class:`Locator`
   files traction's functions under their package folder's name in the hashed folder, so the
   same sources with the same versions load what any of them compiled.
3. **Old folders.** Each edit or upgrade leaves one folder behind (about 4 MB). Every import
   marks its folder used and :func:`prune` removes the others beyond the
   :data:`KEEP` most recently used once they have not been used for :data:`IDLE_DAYS`.

Only traction's own functions are affected: other libraries' numba functions keep numba's
locators and settings. If this numba has no locator list to extend (its internals changed),
:func:`install` falls back to numba's ``CACHE_DIR`` setting with the same folder (then each
checkout compiles once for itself, as before).
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
from numba.core import caching

logger = logging.getLogger(__name__)

#: traction's package folders (their ``.py`` files are hashed and their functions cached here)
PACKAGES = ("vehicle_model", "envs", "scenes", "train")
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


def digest() -> str:
    """16 hex digits of the hash of every traction source file and the versions baked into
    compiled code."""
    root = source_root()
    h = hashlib.sha256()
    for part in (sys.version, numba.__version__, llvmlite.__version__, np.__version__,
                 _version("mujoco")):
        h.update(part.encode() + b"\0")
    for folder in PACKAGES:
        for path in sorted((root / folder).glob("*.py")):
            h.update(f"{folder}/{path.name}\0".encode())
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


#: numba's locator of a cache folder given by the user (absent if numba's internals change)
_BASE = getattr(caching, "UserProvidedCacheLocator", None)


class Locator(_BASE or object):
    """Numba's cache locator for traction's own source files: ``<folder>/<package folder name>``,
    whatever the path of the checkout or environment, with the folder's hash as the source stamp
    (it covers the file and every callee it may inline)."""

    folder = ""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(self.folder, Path(py_file).parent.name)

    def get_source_stamp(self):
        return os.path.basename(self.folder)

    @classmethod
    def from_function(cls, py_func, py_file):
        path = Path(py_file).resolve()
        if not cls.folder or path.parent.parent != source_root() or path.parent.name not in PACKAGES:
            return None
        self = cls(py_func, py_file)
        try:
            self.ensure_cache_path()
        except OSError:
            return None
        return self


def install(path: Path) -> bool:
    """Cache traction's compiled functions in ``path``: through :class:`Locator` when this numba
    has a locator list to extend (returns True), else through numba's ``CACHE_DIR``."""
    Locator.folder = str(path)
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    classes = getattr(impl, "_locator_classes", None)
    if _BASE is None or not isinstance(classes, list):
        numba.config.CACHE_DIR = str(path)
        return False
    if Locator not in classes:
        classes.insert(0, Locator)
    return True
