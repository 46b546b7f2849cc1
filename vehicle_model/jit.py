"""The one compiler setting of the vehicle update: numba ``njit`` with an on-disk cache.

Compiled functions are cached next to their modules (``__pycache__``) so only the first import
after an install compiles; ``error_model="numpy"`` gives inf/NaN instead of raising on division
by zero (the update guards its denominators).
"""

from __future__ import annotations

import numba

jit = numba.njit(cache=True, error_model="numpy")
#: for small helpers on the per-wheel hot path: inlined into the caller by numba (no call, no
#: array reference counting), at some compile-time cost
jit_inline = numba.njit(cache=True, error_model="numpy", inline="always")


@jit
def interp(x: float, points) -> float:
    """Piecewise-linear ``y(x)`` through ``(k, 2)`` points with increasing x, flat beyond the
    ends (``np.interp`` on one scalar, without its array checks)."""
    n = points.shape[0]
    if x <= points[0, 0]:
        return points[0, 1]
    if x >= points[n - 1, 0]:
        return points[n - 1, 1]
    j = 1
    while points[j, 0] < x:
        j += 1
    x0, y0, x1, y1 = points[j - 1, 0], points[j - 1, 1], points[j, 0], points[j, 1]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
