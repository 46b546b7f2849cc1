"""Shared fixtures."""

import os

os.environ.setdefault("MUJOCO_GL", "egl")  # before anything imports mujoco (no display here)

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from traction.vehicle_model import load_vehicle  # noqa: E402


@pytest.fixture(scope="session")
def sedan():
    return load_vehicle("sedan")


@pytest.fixture
def rng():
    return np.random.default_rng(0)
