"""Reward shaping helpers (one tested function, dm_control's ``tolerance`` idea)."""

from __future__ import annotations

import math

import numpy as np

_LN10 = math.log(10.0)


def tolerance(x, bounds: tuple[float, float] = (0.0, 0.0), margin: float = 1.0) -> float | np.ndarray:
    """1 inside ``bounds``, falling off as a Gaussian with width ``margin`` outside (0.1 at
    ``margin`` from the nearest bound). NaN in gives NaN out (not a full reward). ``margin``
    must be > 0 (the tasks pass constants; it is not checked on this per-step path)."""
    lo, hi = bounds
    if isinstance(x, float | int):                     # one value per step: no array round trip
        d = (lo - x if x < lo else x - hi if x > hi else 0.0 if x == x else x) / margin
        return math.exp(-_LN10 * d * d)
    x = np.asarray(x, dtype=float)
    d = np.where(x < lo, lo - x, np.where(x > hi, x - hi, np.where(np.isnan(x), x, 0.0))) / margin
    return np.exp(-np.log(10.0) * d * d)
