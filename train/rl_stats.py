"""Learning results across seeds, as rliable computes them (Agarwal et al. 2021, *Deep RL at
the Edge of the Statistical Precipice*): interquartile mean (IQM) with 95 % stratified-bootstrap
confidence intervals, the same over evaluation curves, and performance profiles.

Every statistic here is rliable's (``rliable.metrics``, ``rliable.library``); this module only
arranges the score matrices, fixes the bootstrap's random state (a report made twice from the
same runs reads the same) and turns the results into plain floats for JSON. Scores are
``(runs, tasks)`` matrices: one row per seed, one column per task (a task's own figures use one
column; the stratified bootstrap resamples runs within each task).
"""

from __future__ import annotations

import warnings

import numpy as np

#: bootstrap replications (rliable's default is 50,000; 2,000 moves the CI bounds by well
#: under a percentage point of success for 10 seeds and keeps a report of three tasks to tens of
#: seconds: each replication calls scipy's trim_mean, ~0.1-0.5 ms)
REPS = 2000
#: thresholds of the performance profiles of success rates
TAUS = np.linspace(0.0, 1.0, 21)


def _rliable():
    from rliable import library, metrics

    return library, metrics


def _estimates(scores: np.ndarray, func, reps: int) -> tuple[np.ndarray, np.ndarray]:
    """rliable's point estimate and 95 % stratified-bootstrap interval of ``func(scores)``,
    the bootstrap seeded: rliable's ``StratifiedBootstrap`` draws its resamples from numpy's
    global generator (not from the ``random_state`` it is given), so that is seeded for the
    call and put back as it was after it. (The ``random_state`` rliable hands arch, which arch
    warns is deprecated, is silenced.)"""
    library, _ = _rliable()
    reps = REPS if reps is None else reps
    saved = np.random.get_state()
    np.random.seed(0)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="random_state", category=FutureWarning)
            point, interval = library.get_interval_estimates(
                {"x": scores}, func, reps=reps, random_state=np.random.RandomState(0))
    finally:
        np.random.set_state(saved)
    return np.asarray(point["x"]), np.asarray(interval["x"])


def _check(scores) -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim < 2 or scores.shape[0] < 1 or scores.shape[1] < 1:
        raise ValueError(f"scores of shape {scores.shape}; expected (runs, tasks[, points])")
    return scores


def iqm(scores, reps: int | None = None) -> dict:
    """IQM of ``scores`` (``(runs, tasks)``) over all runs and tasks, with its 95 % stratified
    bootstrap CI: ``{"iqm", "ci_low", "ci_high", "mean", "runs"}`` (mean: the plain mean,
    for reference)."""
    _, metrics = _rliable()
    scores = _check(scores)
    point, interval = _estimates(scores, lambda s: np.array([metrics.aggregate_iqm(s)]), reps)
    low, high = (float(v) for v in interval.reshape(2))
    return {"iqm": float(point[0]), "ci_low": low, "ci_high": high,
            "mean": float(scores.mean()), "runs": int(scores.shape[0])}


def iqm_curve(scores, reps: int | None = None) -> dict:
    """IQM over runs (and tasks) at every evaluation point of ``scores`` (``(runs, tasks,
    points)``), with 95 % stratified-bootstrap CIs: ``{"iqm", "ci_low", "ci_high"}``, a list
    per point."""
    from scipy import stats

    scores = _check(scores)

    def per_point(s):        # rliable's aggregate_iqm (scipy's 25 % trimmed mean of all the
        return stats.trim_mean(s.reshape(-1, s.shape[-1]), 0.25, axis=0)   # values), per point

    point, interval = _estimates(scores, per_point, reps)
    return {"iqm": point.tolist(), "ci_low": interval[0].tolist(),
            "ci_high": interval[1].tolist()}


def performance_profiles(score_dict: dict, taus=TAUS, reps: int | None = None) -> dict:
    """rliable's performance profiles (score distributions: the fraction of runs, over all
    tasks, with a score above tau) of each entry of ``score_dict`` (name -> ``(runs,
    tasks)``), with 95 % CIs: ``{name: {"fraction", "ci_low", "ci_high"}}``, lists over
    ``taus``. (``library.create_performance_profile`` computes the same with an unseeded
    bootstrap.)"""
    library, _ = _rliable()
    taus = np.asarray(taus, dtype=np.float64)
    out = {}
    for name, s in score_dict.items():
        point, interval = _estimates(_check(s), lambda x: library.score_distributions(x, taus),
                                     reps)
        out[name] = {"fraction": point.tolist(), "ci_low": interval[0].tolist(),
                     "ci_high": interval[1].tolist()}
    return out
