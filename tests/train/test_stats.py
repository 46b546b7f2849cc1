"""Interval estimates (train/stats.py, on rliable): what they cover, that they repeat exactly,
and that pairing cancels what two samples share."""

import numpy as np
import pytest

from traction.train import stats


def test_the_interval_of_the_mean_covers_the_true_mean_about_95_percent_of_the_time():
    """100 samples of 20 normal draws: the percentile bootstrap's 95 % interval holds the true
    mean in 85-100 of them (it under-covers a little for small samples)."""
    rng = np.random.default_rng(0)
    hits = 0
    for k in range(100):
        x = rng.normal(3.0, 2.0, 20)
        i = stats.interval(x, reps=500, seed=k)
        assert i.lo <= i.value <= i.hi and i.n == 20
        assert i.value == pytest.approx(x.mean())
        hits += i.lo <= 3.0 <= i.hi
    assert 85 <= hits <= 100


def test_the_same_scores_give_the_same_interval_and_the_callers_generator_is_untouched():
    x = np.random.default_rng(1).random(12)
    np.random.seed(5)
    expected_next = np.random.random()
    np.random.seed(5)
    a, b = stats.interval(x), stats.interval(x)
    c = stats.difference(x, x[:7] + 0.1)
    assert a == b and c == stats.difference(x, x[:7] + 0.1)
    assert np.random.random() == expected_next           # (rliable draws from the global one)
    assert stats.interval(x, seed=1) != a                 # the seed is the draw's


def test_aggregates_and_degenerate_samples():
    x = np.arange(10.0)
    assert stats.interval(x, "iqm").value == pytest.approx(4.5)         # mean of 2.5..7.5 ranks
    assert stats.interval(x, "median").value == pytest.approx(4.5)
    assert stats.interval([0.7] * 5) == stats.Interval(0.7, 0.7, 0.7, 5)
    assert stats.interval([]).n == 0 and np.isnan(stats.interval([]).value)
    assert stats.Interval.from_dict(stats.interval([]).as_dict()).n == 0
    with pytest.raises(ValueError, match="not finite"):
        stats.interval([1.0, np.nan])
    with pytest.raises(ValueError, match="aggregate 'max'; allowed: mean, iqm, median"):
        stats.interval([1.0], "max")
    with pytest.raises(ValueError, match=r"paired scores of shapes \(3, 1\) and \(2, 1\)"):
        stats.paired_difference([1, 2, 3], [1, 2])


def test_pairing_cancels_what_the_scenarios_share():
    """Scenario difficulty spread over 0-100 and a controller better by 1 in each: paired, the
    difference is exactly 1 [1, 1]; as independent samples its interval spans the spread."""
    rng = np.random.default_rng(2)
    difficulty = rng.uniform(0.0, 100.0, 20)
    paired = stats.paired_difference(difficulty + 1.0, difficulty)
    independent = stats.difference(difficulty + 1.0, difficulty)
    assert (paired.lo, paired.value, paired.hi) == pytest.approx((1.0, 1.0, 1.0))
    assert independent.value == pytest.approx(1.0)
    assert independent.lo < -10.0 and independent.hi > 10.0
