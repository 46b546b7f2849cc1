"""The one reward-shaping helper: 1 inside the bounds, 0.1 at one margin outside, Gaussian."""

import math

import numpy as np
import pytest

from traction.envs.rewards import tolerance


@pytest.mark.parametrize("x, expected", [(0.0, 1.0), (1.0, 1.0), (-1.0, 1.0), (6.0, 0.1),
                                         (-6.0, 0.1), (11.0, 1e-4)])
def test_tolerance_values(x, expected):
    """Bounds +-1, margin 5: distance d margins outside gives 10^(-d^2)."""
    assert tolerance(x, (-1.0, 1.0), 5.0) == pytest.approx(expected, rel=1e-12)


def test_tolerance_of_nan_is_nan_not_a_full_reward():
    assert math.isnan(tolerance(float("nan"), (-1.0, 1.0), 5.0))
    out = tolerance(np.array([0.0, np.nan, 6.0]), (-1.0, 1.0), 5.0)
    assert out[0] == 1.0 and np.isnan(out[1]) and out[2] == pytest.approx(0.1)


def test_scalar_and_array_paths_agree():
    xs = np.linspace(-20.0, 20.0, 81)
    arr = tolerance(xs, (-1.0, 2.0), 3.0)
    assert arr.shape == xs.shape
    for x, a in zip(xs, arr, strict=True):
        assert tolerance(float(x), (-1.0, 2.0), 3.0) == pytest.approx(a, rel=1e-14)
        assert np.all((0.0 < a) & (a <= 1.0))
