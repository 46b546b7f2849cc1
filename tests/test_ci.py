"""The CI helper .ci/gl-backend refuses a missing interpreter clearly and installs nothing."""

import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / ".ci" / "gl-backend"


@pytest.fixture
def fake_tools(tmp_path):
    """PATH with apt-get and id stubs: apt-get leaves a marker if called, id says root."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    marker = tmp_path / "apt-get-called"
    for name, body in (("apt-get", f"touch {marker}"), ("id", "echo 0")):
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    env.pop("MUJOCO_GL", None)
    return env, marker


@pytest.mark.parametrize("args, message", [
    (["/nonexistent/python3.11"], "python interpreter '/nonexistent/python3.11' not found"),
    ([], "usage: gl-backend PYTHON"),
])
def test_missing_interpreter_fails_without_installing(fake_tools, args, message):
    env, marker = fake_tools
    done = subprocess.run(["sh", str(SCRIPT), *args], capture_output=True, text=True, env=env)
    assert done.returncode == 2 and message in done.stderr
    assert done.stdout == "" and not marker.exists()


def test_interpreter_without_mujoco_fails_without_installing(fake_tools, tmp_path):
    env, marker = fake_tools
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\nexit 1\n")
    python.chmod(0o755)
    done = subprocess.run(["sh", str(SCRIPT), str(python)], capture_output=True, text=True,
                          env=env)
    assert done.returncode == 2 and "cannot import mujoco" in done.stderr
    assert done.stdout == "" and not marker.exists()


PYTHONS = Path(__file__).resolve().parents[1] / ".ci" / "pythons"


def test_pythons_finds_each_version_on_path_or_in_pyenv(tmp_path):
    """`make test-pythons` runs the suite on what .ci/pythons finds: pythonX.Y on PATH if it
    runs (a pyenv shim of a version not selected exits non-zero), else pyenv's installed X.Y;
    a version with neither is named on stderr and left out."""
    bin_dir, root = tmp_path / "bin", tmp_path / "pyenv"
    bin_dir.mkdir()
    for name, code in (("python3.12", 0), ("python3.13", 127)):       # 3.13: a dead shim
        (bin_dir / name).write_text(f"#!/bin/sh\nexit {code}\n")
        (bin_dir / name).chmod(0o755)
    pyenv_python = root / "versions" / "3.13.0" / "bin" / "python"
    pyenv_python.parent.mkdir(parents=True)
    pyenv_python.write_text("#!/bin/sh\nexit 0\n")
    pyenv_python.chmod(0o755)
    env = {"PATH": str(bin_dir), "PYENV_ROOT": str(root), "HOME": str(tmp_path)}
    done = subprocess.run(["/bin/sh", str(PYTHONS), "3.11", "3.12", "3.13"], capture_output=True,
                          text=True, env=env)
    assert done.returncode == 0
    assert done.stdout.splitlines() == [f"3.12 {bin_dir / 'python3.12'}", f"3.13 {pyenv_python}"]
    assert "no Python 3.11 on this machine (skipped)" in done.stderr


def test_the_supported_pythons_are_the_ones_declared():
    import sys
    import tomllib

    from packaging.specifiers import SpecifierSet

    project = tomllib.loads((SCRIPT.parents[1] / "pyproject.toml").read_text())["project"]
    spec = SpecifierSet(project["requires-python"])
    assert [v for v in ("3.10", "3.11", "3.12", "3.13", "3.14") if v in spec] == \
        ["3.11", "3.12", "3.13"]
    assert f"{sys.version_info[0]}.{sys.version_info[1]}" in spec
    assert [c.rsplit(" ", 1)[1] for c in project["classifiers"]] == ["3.11", "3.12", "3.13"]
