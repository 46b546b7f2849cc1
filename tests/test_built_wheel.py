"""The built wheel: every package file and data file is in it under ``traction/``, nothing is
installed top-level, and the environments, presets and hyperparameters work from it alone.

An editable install reads the checkout, so a file left out of the package data (a new preset
folder, a YAML file) would pass every other test and fail only for ``pip install``.
"""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("envs", "vehicle_model", "scenes", "train")


def _expected() -> set[str]:
    """Every file of the package folders (a module, a preset, a hyperparameter file, in any
    subfolder), as the wheel names it: what an installed traction needs."""
    names = set()
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                names.add(f"traction/{folder}/{path.relative_to(ROOT / folder).as_posix()}")
    return names


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of the sources (the build writes ``build/`` and egg-info)."""
    src = tmp_path_factory.mktemp("src")
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, src / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--disable-pip-version-check", "-q", str(src), "-w", str(out)],
                   check=True, capture_output=True, text=True)
    (path,) = out.glob("traction_gym-*.whl")
    return path


def test_wheel_holds_every_package_and_data_file_under_traction(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = _expected() - names
    assert not missing, f"left out of the wheel: {sorted(missing)}"
    top = {name.split("/")[0] for name in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"traction"}, top
    assert len(_expected()) > 60


def test_environments_presets_and_hyperparameters_work_from_the_wheel_alone(wheel, tmp_path):
    zipfile.ZipFile(wheel).extractall(tmp_path)
    code = """
import gymnasium as gym, numpy as np
import traction.envs, traction.train.train as train
from traction.vehicle_model import load_vehicle
assert traction.envs.__file__.startswith(ROOT), traction.envs.__file__
for name in ("sedan", "sedan_rwd", "tank", "truck_6x6"):
    load_vehicle(name)
assert train.hyperparameters("ppo", "Traction/Drift-v1", {})["n_steps"] > 0
assert train.hyperparameters("sac", "Traction/Drift-v1", {})["batch_size"] > 0
from traction.train import pretrained
assert pretrained.available() == ["Traction/Climb6x6-v1", "Traction/Drift-v1", "Traction/TankTurn-v1"]
for eid in pretrained.available():
    assert (pretrained.folder(eid) / "vecnormalize.pkl").is_file()
for eid in ("Traction/Climb6x6-v1", "Traction/Drift-v1", "Traction/TankTurn-v1"):
    env = gym.make(eid)
    obs, _ = env.reset(seed=0)
    for _ in range(3):
        obs, r, *_ = env.step(np.zeros(env.action_space.shape, env.action_space.dtype))
    assert np.isfinite(obs).all() and np.isfinite(r)
    env.close()
print("ok")
""".replace("ROOT", repr(str(tmp_path)))
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], cwd="/", env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]
