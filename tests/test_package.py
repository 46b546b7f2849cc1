"""Package layout: namespaced install, and vehicle_model stays free of simulator imports."""

import subprocess
import sys

import pytest


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/",
                         check=True)
    return out.stdout.strip()


def test_vehicle_model_does_not_import_mujoco_or_gymnasium():
    code = ("import sys, traction.vehicle_model as v; v.load_vehicle('sedan');"
            "print(sorted(m for m in ('mujoco', 'gymnasium', 'traction.envs', 'traction.scenes',"
            " 'traction.train') if m in sys.modules))")
    assert _run(code) == "[]"


@pytest.mark.parametrize("name", ["envs", "train", "scenes", "vehicle_model"])
def test_generic_names_are_not_installed_top_level(name):
    code = f"import importlib.util; print(importlib.util.find_spec({name!r}) is None)"
    assert _run(code) == "True"


@pytest.mark.parametrize("name", ["envs", "train", "scenes", "vehicle_model"])
def test_traction_subpackages_import(name):
    assert _run(f"import traction.{name}; print('ok')") == "ok"


def test_parameter_reference_is_up_to_date():
    from pathlib import Path

    from traction.train.param_docs import render

    doc = Path(__file__).resolve().parents[1] / "docs" / "vehicle_parameters.md"
    assert doc.read_text() == render(), "regenerate: python -m traction.train.param_docs"
