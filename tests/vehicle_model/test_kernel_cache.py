"""The on-disk cache of compiled code: one folder per content of the compiled sources (numba's
own cache-folder setting pointed at it), old folders pruned."""

import importlib
import inspect
import json
import os
import pkgutil
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path

import numba
from numba.core.registry import CPUDispatcher

from traction.vehicle_model import jit, kernel_cache

_PROBE = """
import json
import numpy as np
from traction.vehicle_model import jit
value = jit.interp(0.5, np.array([[0.0, 0.0], [1.0, 2.0]]))
print(json.dumps({"file": jit.__file__, "folder": str(jit.CACHE_FOLDER), "value": value,
                  "hits": sum(jit.interp.stats.cache_hits.values()),
                  "misses": sum(jit.interp.stats.cache_misses.values())}))
"""
PACKAGES = ("vehicle_model", "envs", "scenes", "train")


def _checkout(where: Path) -> Path:
    """A copy of traction's package folders importable as ``traction`` from ``where``."""
    for package in PACKAGES:
        target = where / "traction" / package
        target.mkdir(parents=True)
        for source in (kernel_cache.source_root() / package).glob("*.py"):
            shutil.copy(source, target)
    return where


def _probe(checkout: Path, cache: Path) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(checkout))
    run = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(run.stdout.splitlines()[-1])


def _append(path: Path) -> None:
    with open(path, "a") as f:
        f.write("\n# an edit\n")


def test_an_edit_of_compiled_code_compiles_anew_and_an_edit_elsewhere_does_not(tmp_path):
    checkout, cache = _checkout(tmp_path / "a"), tmp_path / "cache"
    a = _probe(checkout, cache)
    assert a["file"].startswith(str(checkout)) and a["value"] == 1.0
    assert Path(a["folder"]).parent == cache                   # below the user's NUMBA_CACHE_DIR
    assert (a["hits"], a["misses"]) == (0, 1)                  # compiled and saved
    assert (_probe(checkout, cache)["hits"], a["folder"]) == (1, a["folder"])     # loaded
    for elsewhere in ("scenes/__init__.py", "envs/base.py", "train/perf.py"):
        _append(checkout / "traction" / elsewhere)             # not compiled into anything
        again = _probe(checkout, cache)
        assert (again["folder"], again["hits"], again["misses"]) == (a["folder"], 1, 0)
    folders = {a["folder"]}
    for compiled in ("vehicle_model/layout.py", "envs/actions.py", "envs/physics.py"):
        _append(checkout / "traction" / compiled)              # a callee may have changed
        edited = _probe(checkout, cache)
        assert edited["folder"] not in folders and (edited["hits"], edited["misses"]) == (0, 1)
        folders.add(edited["folder"])


def test_numba_caches_in_the_folder():
    assert numba.config.CACHE_DIR == str(jit.CACHE_FOLDER)
    assert jit.CACHE_FOLDER.name == f"numba-{kernel_cache.digest()}"


def _folder(base: Path, i: int, idle_days: float, now: float) -> Path:
    path = base / f"numba-{i:016x}"
    path.mkdir()
    (path / "kernel.nbc").write_bytes(b"x")
    os.utime(path, (now - idle_days * 86400.0,) * 2)
    return path


def test_prune_keeps_the_most_recently_used_and_any_used_within_a_day(tmp_path):
    now = time.time()
    current = _folder(tmp_path, 0, 30.0, now)                          # never pruned
    recent = [_folder(tmp_path, 1 + i, 0.1 + 0.01 * i, now) for i in range(9)]
    old = [_folder(tmp_path, 20 + i, 2.0 + i, now) for i in range(4)]
    other = tmp_path / "numba-not-ours"
    other.mkdir()
    removed = kernel_cache.prune(tmp_path, current, now)
    assert sorted(removed) == sorted(old)                              # idle beyond the KEEP newest
    assert all(p.exists() for p in [current, *recent, other])          # used within a day
    kept_old = _folder(tmp_path, 40, 5.0, now)
    shutil.rmtree(recent[-1])
    for path in recent[:-2]:
        shutil.rmtree(path)
    assert kernel_cache.prune(tmp_path, current, now) == []            # few folders: all kept
    assert kept_old.exists()


def test_prune_keeps_exactly_the_keep_most_recent_folders_with_the_current_one(tmp_path):
    """KEEP folders are kept whatever their age, the current one among them: with KEEP - 1
    other folders all idle for days nothing goes; one more and the oldest goes."""
    now = time.time()
    current = _folder(tmp_path, 0, 0.0, now)
    others = [_folder(tmp_path, 1 + i, 3.0 + i, now) for i in range(kernel_cache.KEEP - 1)]
    assert kernel_cache.prune(tmp_path, current, now) == []
    oldest = _folder(tmp_path, 99, 50.0, now)
    assert kernel_cache.prune(tmp_path, current, now) == [oldest]
    assert all(p.exists() for p in [current, *others])


def test_the_key_changes_when_source_moves_between_files(tmp_path, monkeypatch):
    """Compiled callers hold callees from other files: the same text under another file name
    (a module renamed, a function moved into another module) is other code, so another key."""
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    for name in ("physics.py", "actions.py"):
        (tmp_path / "envs" / name).write_text("")
    (tmp_path / "scenes" / "heightfield.py").write_text("")
    monkeypatch.setattr(kernel_cache, "source_root", lambda: tmp_path)
    a = tmp_path / "vehicle_model" / "a.py"
    a.write_text("X = 1\n")
    first = kernel_cache.digest()
    assert kernel_cache.digest() == first                       # a pure function of the tree
    a.rename(tmp_path / "vehicle_model" / "b.py")
    second = kernel_cache.digest()
    (tmp_path / "vehicle_model" / "b.py").rename(tmp_path / "envs" / "a.py")    # not compiled
    assert len({first, second, kernel_cache.digest()}) == 3


def _modules():
    """Every traction module (importing the training tools' optional dependencies is not
    needed: a module that cannot be imported here has no compiled code the tests run)."""
    for package in PACKAGES:
        pkg = importlib.import_module(f"traction.{package}")
        yield pkg
        for info in pkgutil.iter_modules(pkg.__path__):
            try:
                yield importlib.import_module(f"traction.{package}.{info.name}")
            except ImportError:
                continue


def _callees(func) -> set:
    """The compiled functions ``func`` names: globals, and attributes of modules it names."""
    names, out = func.__code__.co_names, set()
    for name in names:
        value = func.__globals__.get(name)
        if isinstance(value, CPUDispatcher):
            out.add(value)
        elif isinstance(value, types.ModuleType):
            out.update(v for n in names if isinstance(v := getattr(value, n, None), CPUDispatcher))
    return out


def test_compiled_code_calls_compiled_code_of_its_own_file_or_the_hashed_sources():
    """Numba checks a cached function against its own file; what it holds of other files must
    be in the hashed :data:`kernel_cache.SOURCES`, or an edit there would leave it stale."""
    hashed = {p.resolve() for p in kernel_cache.source_files()}
    compiled = {v for m in _modules() for v in vars(m).values() if isinstance(v, CPUDispatcher)
                and v.py_func.__module__.startswith("traction.")}
    assert len(compiled) > 50
    for caller in compiled:
        own = Path(inspect.getfile(caller.py_func)).resolve()
        for callee in _callees(caller.py_func):
            where = Path(inspect.getfile(callee.py_func)).resolve()
            assert where == own or where in hashed, (
                f"{caller.py_func.__qualname__} ({own.name}) calls {callee.py_func.__qualname__} "
                f"of {where}: add that file to kernel_cache.SOURCES")


def test_only_the_update_is_called_rather_than_pasted():
    """The cost model's exceptions name real functions (a rename would paste the update into
    every caller again, and each would compile it for minutes)."""
    for name in jit.CALLED:
        module, _, qualname = name.rpartition(".")
        assert isinstance(getattr(importlib.import_module(module), qualname), CPUDispatcher)
