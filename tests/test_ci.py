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
