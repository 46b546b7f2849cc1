"""Shared fixtures."""

import numpy as np
import pytest

from traction.vehicle_model import load_vehicle


@pytest.fixture(scope="session")
def sedan():
    return load_vehicle("sedan")


@pytest.fixture
def rng():
    return np.random.default_rng(0)
