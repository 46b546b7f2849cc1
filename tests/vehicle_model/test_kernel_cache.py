"""The on-disk cache of compiled code: one per content of the sources, old folders pruned."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numba

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


def _checkout(where: Path) -> Path:
    """A copy of traction's package folders importable as ``traction`` from ``where``."""
    for package in kernel_cache.PACKAGES:
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


def test_a_second_checkout_loads_what_the_first_compiled_and_an_edit_compiles_anew(tmp_path):
    first, second = _checkout(tmp_path / "a"), _checkout(tmp_path / "b")
    cache = tmp_path / "cache"
    a = _probe(first, cache)
    assert a["file"].startswith(str(first)) and a["value"] == 1.0
    assert (a["hits"], a["misses"]) == (0, 1)                  # compiled and saved
    b = _probe(second, cache)
    assert b["file"].startswith(str(second)) and b["folder"] == a["folder"]
    assert (b["hits"], b["misses"]) == (1, 0)                  # loaded: same sources elsewhere
    with open(second / "traction" / "scenes" / "__init__.py", "a") as f:
        f.write("\n# an edit in another package than the function's\n")
    edited = _probe(second, cache)
    assert edited["folder"] != a["folder"]
    assert (edited["hits"], edited["misses"]) == (0, 1)        # a callee may have changed
    line, (major, minor) = jit.interp.py_func.__code__.co_firstlineno, sys.version_info[:2]
    base = f"jit.interp-{line}.py{major}{minor}"
    assert sorted(p.name for p in (Path(a["folder"]) / "vehicle_model").iterdir()) == [
        f"{base}.1.nbc", f"{base}.nbi"]                        # no per-path subfolder


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


def test_only_traction_files_get_the_content_keyed_locator():
    def outside():
        return 1

    assert kernel_cache.Locator.from_function(outside, __file__) is None
    inside = kernel_cache.Locator.from_function(jit.interp.py_func, jit.__file__)
    assert inside.get_cache_path() == str(jit.CACHE_FOLDER / "vehicle_model")
    assert inside.get_source_stamp() == jit.CACHE_FOLDER.name


def test_a_numba_without_a_locator_list_gets_the_folder_as_its_cache_dir(monkeypatch, tmp_path):
    for owner, name in ((kernel_cache, "_BASE"), (numba.config, "CACHE_DIR"),
                        (kernel_cache.Locator, "folder")):
        monkeypatch.setattr(owner, name, getattr(owner, name))       # restored after the test
    monkeypatch.setattr(kernel_cache, "_BASE", None)
    path = tmp_path / "numba-0123456789abcdef"
    assert kernel_cache.install(path) is False
    assert numba.config.CACHE_DIR == str(path)


# The cache key covers which file holds which source.
def test_the_key_changes_when_source_moves_between_files(tmp_path, monkeypatch):
    """Compiled callers inline callees from other files: the same text under another file name
    (a module renamed, a function moved into another module) is other code, so another key."""
    for package in kernel_cache.PACKAGES:
        (tmp_path / package).mkdir()
    monkeypatch.setattr(kernel_cache, "source_root", lambda: tmp_path)
    a = tmp_path / "vehicle_model" / "a.py"
    a.write_text("X = 1\n")
    first = kernel_cache.digest()
    assert kernel_cache.digest() == first                       # a pure function of the tree
    a.rename(tmp_path / "vehicle_model" / "b.py")
    second = kernel_cache.digest()
    (tmp_path / "vehicle_model" / "b.py").rename(tmp_path / "envs" / "a.py")
    assert len({first, second, kernel_cache.digest()}) == 3


def test_prune_keeps_exactly_the_keep_most_recent_folders_with_the_current_one(tmp_path):
    """KEEP folders are kept whatever their age, the current one among them: with KEEP - 1
    other folders all idle for days nothing goes; one more and the oldest goes."""
    import os
    import time

    now = time.time()

    def folder(i, idle_days):
        path = tmp_path / f"numba-{i:016x}"
        path.mkdir()
        os.utime(path, (now - idle_days * 86400.0,) * 2)
        return path

    current = folder(0, 0.0)
    others = [folder(1 + i, 3.0 + i) for i in range(kernel_cache.KEEP - 1)]
    assert kernel_cache.prune(tmp_path, current, now) == []
    oldest = folder(99, 50.0)
    assert kernel_cache.prune(tmp_path, current, now) == [oldest]
    assert all(p.exists() for p in [current, *others])
