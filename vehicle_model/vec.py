"""Small vector helpers on stacked 3-vectors (last axis), cheaper than np.cross/np.einsum calls
for the short arrays of the vehicle update."""

from __future__ import annotations

import numpy as np


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross product over the last axis with broadcasting."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Dot product over the last axis with broadcasting."""
    return (a * b).sum(axis=-1)
