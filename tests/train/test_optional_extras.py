"""The command-line tools on a base install: with none of the optional extras importable, each
tool still starts and ends with a usage error naming the extra to install, not a traceback
from an import at the top of a module (as ``import yaml`` gave when PyYAML was in an extra)."""

import subprocess
import sys

import pytest

#: Import names of everything the extras install (train, plot, render).
EXTRA_MODULES = ("matplotlib", "imageio", "imageio_ffmpeg", "PIL", "stable_baselines3", "torch",
                 "tensorboard", "tqdm", "rich", "ray", "rliable")

_RUN = """
import runpy, sys
class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}")
sys.meta_path.insert(0, _NotInstalled())
sys.argv = {argv!r}
runpy.run_module({module!r}, run_name="__main__")
"""


@pytest.mark.parametrize("tool, args, extra", [
    ("train", ["--env", "Traction/TankTurn-v1", "--out", "{tmp}/run"], "train"),
    ("evaluate", ["{tmp}/run"], "train"),
    ("results", ["{tmp}/run", "--out", "{tmp}/results"], "plot"),
    ("plot_tires", ["sedan", "--out", "{tmp}/tyres"], "plot"),
    ("benchmark", ["--suite", "quick", "--out", "{tmp}/bench"], "plot"),
    ("sweep", ["--envs", "Traction/TankTurn-v1", "--timesteps", "100", "--out", "{tmp}/sweep"],
     "scale"),
    ("sweep_report", ["{tmp}/sweep"], "stats"),
])
def test_a_tool_without_its_extra_names_the_extra(tmp_path, tool, args, extra):
    module = f"traction.train.{tool}"
    argv = [tool] + [a.format(tmp=tmp_path) for a in args]
    code = _RUN.format(blocked=EXTRA_MODULES, argv=argv, module=module)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert f'".[{extra}]"' in done.stderr, done.stderr
    assert not any(tmp_path.iterdir())                  # refused before writing anything
