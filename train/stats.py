"""Interval estimates for evaluation and learning results: aggregates (mean, interquartile mean,
median) with stratified-bootstrap confidence intervals, differences between two sets of scores,
paired or independent, aggregate curves over evaluation points and performance profiles. The
statistics are rliable's (Agarwal et al. 2021, *Deep RL at the Edge of the Statistical
Precipice*); this module only fixes the conventions the tools share:

- scores are arrays of shape ``(runs,)`` or ``(runs, tasks)``: rows are independent samples
  (benchmark episodes, training seeds), columns tasks; the bootstrap resamples rows within each
  column (stratified);
- 95 % percentile intervals from :data:`REPS` resamples, drawn from a seeded generator, so the
  same scores give the same interval on every machine and in every run;
- an :class:`Interval` holds the point estimate, the bounds and the number of samples.

The benchmark harness (``benchmark.py``: the episodes of one controller per task variant) and
agent sweeps (``sweep_report.py``: many seeds per task) both use it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: bootstrap resamples per interval: for 20 samples, the 95 % bounds of 2000 resamples lie
#: within 1 % of the samples' range of those of 50,000 (rliable's default), in ~60 ms, not 1.5 s
REPS = 2000
#: coverage of the intervals
CONFIDENCE = 0.95
#: rliable's interval method (bootstrap percentiles)
METHOD = "percentile"
#: thresholds of the performance profiles of success rates
TAUS = np.linspace(0.0, 1.0, 21)


@dataclass(frozen=True)
class Interval:
    """A point estimate with its confidence interval and sample count (NaN when n = 0)."""

    value: float
    lo: float
    hi: float
    n: int

    def as_dict(self) -> dict:
        """``{"value", "ci": [lo, hi], "n"}`` (NaN as None, for JSON)."""
        def plain(x):
            return None if x is None or not np.isfinite(x) else float(x)
        return {"value": plain(self.value), "ci": [plain(self.lo), plain(self.hi)], "n": self.n}

    @classmethod
    def from_dict(cls, d: dict) -> Interval:
        """The inverse of :meth:`as_dict`."""
        def num(x):
            return float("nan") if x is None else float(x)
        return cls(num(d["value"]), num(d["ci"][0]), num(d["ci"][1]), int(d["n"]))


EMPTY = Interval(float("nan"), float("nan"), float("nan"), 0)


def _aggregates() -> dict[str, Callable[[np.ndarray], float]]:
    from rliable import metrics

    return {"mean": metrics.aggregate_mean, "iqm": metrics.aggregate_iqm,
            "median": metrics.aggregate_median}


#: the aggregate names :func:`interval` and the difference functions take
AGGREGATES = ("mean", "iqm", "median")


def _matrix(scores, name: str) -> np.ndarray:
    """Scores as a float ``(runs, tasks)`` matrix; ValueError naming ``name`` if not finite."""
    a = np.asarray(scores, dtype=np.float64)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2:
        raise ValueError(f"{name}: shape {a.shape}; allowed: (runs,) or (runs, tasks)")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: holds values that are not finite (NaN or inf); pass the "
                         "samples the aggregate is over")
    return a


def _aggregate(name: str) -> Callable[[np.ndarray], float]:
    if name not in AGGREGATES:
        raise ValueError(f"aggregate {name!r}; allowed: {', '.join(AGGREGATES)}")
    return _aggregates()[name]


def _bootstrap(kind: str, data: tuple, func, reps: int, confidence: float, seed: int):
    """rliable's stratified bootstrap (``kind``: ``"paired"``, one matrix; ``"independent"``,
    two, resampled each on its own) of the vector-valued ``func``; returns (point estimates,
    ``(2, k)`` bounds).

    rliable's bootstraps draw their resamples from NumPy's global generator (``np.random
    .choice``), whatever ``random_state`` they are given: the global generator is seeded with
    ``seed`` for the call and the caller's state put back after it."""
    from rliable import library

    scores = {"x": data[0] if kind == "paired" else list(data)}
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)     # (arch's, about RandomState)
            point, ci = library.get_interval_estimates(
                scores, func, method=METHOD, reps=reps, confidence_interval_size=confidence)
    finally:
        np.random.set_state(state)
    return np.asarray(point["x"], dtype=np.float64), np.asarray(ci["x"], dtype=np.float64)


def _scalar(kind: str, data: tuple, func, reps: int, confidence: float, seed: int):
    point, ci = _bootstrap(kind, data, func, reps, confidence, seed)
    return float(point[0]), float(ci[0, 0]), float(ci[1, 0])


def interval(scores, aggregate: str = "mean", *, reps: int = REPS,
             confidence: float = CONFIDENCE, seed: int = 0) -> Interval:
    """``aggregate`` of ``scores`` (``(runs,)`` or ``(runs, tasks)``; across tasks, the
    aggregate of the pooled normalised scores as rliable defines it) with its stratified-bootstrap
    confidence interval. No samples: :data:`EMPTY`.

    Raises:
        ValueError: an unknown aggregate, a bad shape, or scores that are not finite.
    """
    a = _matrix(scores, "scores")
    func = _aggregate(aggregate)
    if a.shape[0] == 0:
        return EMPTY
    if np.all(a == a[0]):                   # every resample is the sample: no need to draw them
        value = float(func(a))
        return Interval(value, value, value, a.shape[0])
    value, lo, hi = _scalar("paired", (a,), lambda x: np.array([func(x)]), reps, confidence,
                            seed)
    return Interval(value, lo, hi, a.shape[0])


def paired_difference(a, b, aggregate: str = "mean", *, reps: int = REPS,
                      confidence: float = CONFIDENCE, seed: int = 0) -> Interval:
    """``aggregate`` of the per-pair differences ``a - b`` (row ``i`` of ``a`` and of ``b`` are
    the same scenario or seed) with its interval: pairs are resampled together, so what the two
    share (the scenario) cancels. For the mean this is the difference of the means.

    Raises:
        ValueError: as :func:`interval`, or ``a`` and ``b`` of different shapes.
    """
    a, b = _matrix(a, "a"), _matrix(b, "b")
    if a.shape != b.shape:
        raise ValueError(f"paired scores of shapes {a.shape} and {b.shape}; allowed: the same")
    return interval(a - b, aggregate, reps=reps, confidence=confidence, seed=seed)


def difference(a, b, aggregate: str = "mean", *, reps: int = REPS,
               confidence: float = CONFIDENCE, seed: int = 0) -> Interval:
    """``aggregate(a) - aggregate(b)`` for independent samples (other scenarios or seeds, any
    numbers of runs), each resampled on its own. ``n`` is the smaller sample count.

    Raises:
        ValueError: as :func:`interval`, or ``a`` and ``b`` with different task counts.
    """
    a, b = _matrix(a, "a"), _matrix(b, "b")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"scores with {a.shape[1]} and {b.shape[1]} tasks; allowed: the same")
    func = _aggregate(aggregate)
    if a.shape[0] == 0 or b.shape[0] == 0:
        return EMPTY
    if np.all(a == a[0]) and np.all(b == b[0]):
        value = float(func(a) - func(b))
        return Interval(value, value, value, min(a.shape[0], b.shape[0]))
    value, lo, hi = _scalar("independent", (a, b), lambda x, y: np.array([func(x) - func(y)]),
                            reps, confidence, seed)
    return Interval(value, lo, hi, min(a.shape[0], b.shape[0]))


def _curves(scores) -> np.ndarray:
    a = np.asarray(scores, dtype=np.float64)
    if a.ndim != 3 or 0 in a.shape:
        raise ValueError(f"scores: shape {a.shape}; allowed: (runs, tasks, points)")
    if not np.all(np.isfinite(a)):
        raise ValueError("scores: holds values that are not finite (NaN or inf)")
    return a


def iqm_curve(scores, *, reps: int = REPS, confidence: float = CONFIDENCE,
              seed: int = 0) -> list[Interval]:
    """IQM over runs (and tasks) at every evaluation point of ``scores`` (``(runs, tasks,
    points)``: learning curves), with stratified-bootstrap intervals: one :class:`Interval` per
    point. (rliable's ``aggregate_iqm``, scipy's 25 % trimmed mean of all the values, taken per
    point in one call.)"""
    from scipy import stats as scipy_stats

    a = _curves(scores)

    def per_point(x):
        return scipy_stats.trim_mean(x.reshape(-1, x.shape[-1]), 0.25, axis=0)

    point, ci = _bootstrap("paired", (a,), per_point, reps, confidence, seed)
    return [Interval(float(v), float(lo), float(hi), a.shape[0])
            for v, lo, hi in zip(point, ci[0], ci[1], strict=True)]


def performance_profile(scores, taus=TAUS, *, reps: int = REPS, confidence: float = CONFIDENCE,
                        seed: int = 0) -> list[Interval]:
    """rliable's performance profile (score distribution: the fraction of runs, over all
    tasks, scoring above tau) of ``scores`` (``(runs,)`` or ``(runs, tasks)``) at each of
    ``taus``, with stratified-bootstrap intervals: one :class:`Interval` per tau.
    (``library.create_performance_profile`` computes the same with an unseeded bootstrap.)"""
    from rliable import library

    a = _matrix(scores, "scores")
    taus = np.asarray(taus, dtype=np.float64)
    point, ci = _bootstrap("paired", (a,), lambda x: library.score_distributions(x, taus), reps,
                           confidence, seed)
    return [Interval(float(v), float(lo), float(hi), a.shape[0])
            for v, lo, hi in zip(point, ci[0], ci[1], strict=True)]
