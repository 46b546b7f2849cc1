"""Vector helpers on a chassis kinematics record (``layout.KINEMATICS``), for compiled code:
scalar 3-vectors as tuples, so nothing is allocated on the per-wheel hot path."""

from __future__ import annotations

import numpy as np

from .jit import jit


@jit
def rot(k, i: int, j: int) -> float:
    """World-from-chassis rotation entry (row-major in the kinematics record)."""
    return k.rotation[3 * i + j]


@jit
def to_world(k: np.ndarray, x: float, y: float, z: float) -> tuple[float, float, float]:
    return (rot(k, 0, 0) * x + rot(k, 0, 1) * y + rot(k, 0, 2) * z,
            rot(k, 1, 0) * x + rot(k, 1, 1) * y + rot(k, 1, 2) * z,
            rot(k, 2, 0) * x + rot(k, 2, 1) * y + rot(k, 2, 2) * z)


@jit
def to_body(k: np.ndarray, x: float, y: float, z: float) -> tuple[float, float, float]:
    return (rot(k, 0, 0) * x + rot(k, 1, 0) * y + rot(k, 2, 0) * z,
            rot(k, 0, 1) * x + rot(k, 1, 1) * y + rot(k, 2, 1) * z,
            rot(k, 0, 2) * x + rot(k, 1, 2) * y + rot(k, 2, 2) * z)


@jit
def cross(a0, a1, a2, b0, b1, b2) -> tuple[float, float, float]:
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@jit
def norm2(a: float, b: float) -> float:
    """Length of the 2-vector ``(a, b)``: ``sqrt(a*a + b*b)``. (libm's ``hypot`` also guards the
    squares against overflow, which forces and slips never approach, at several times the cost:
    it was a tenth of the vehicle update's time.)"""
    return np.sqrt(a * a + b * b)
