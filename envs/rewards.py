"""Reward shaping helpers (one tested function, dm_control's ``tolerance`` idea)."""

from __future__ import annotations

import numpy as np


def tolerance(x, bounds: tuple[float, float] = (0.0, 0.0), margin: float = 1.0) -> np.ndarray:
    """1 inside ``bounds``, falling off as a Gaussian with width ``margin`` outside (0.1 at
    ``margin`` from the nearest bound)."""
    lo, hi = bounds
    x = np.asarray(x, dtype=float)
    d = np.where(x < lo, lo - x, np.where(x > hi, x - hi, 0.0)) / margin
    return np.exp(-np.log(10.0) * d * d)
