"""Anti-roll bars: a torsion spring between two wheels' suspensions.

A bar with stiffness ``k`` (N/m) between wheels ``a`` and ``b`` adds ``k * (jounce_a - jounce_b)``
to ``a``'s strut force and takes it from ``b``'s, so it resists the difference in compression
(body roll) without stiffening the suspension in heave. A wheel in the air takes no bar force.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import VehicleConfigError
from .jit import jit


@dataclass(frozen=True)
class AntiRollParams:
    """All bars of a vehicle: wheel index pairs ``(n_bars, 2)`` and stiffness ``(n_bars,)``."""

    pairs: tuple[tuple[int, int], ...] = ()
    stiffness: tuple[float, ...] = ()

    def validate(self, prefix: str = "anti_roll_bars", where: str = "") -> None:
        pre = f"{where}: " if where else ""
        for i, (k, (a, b)) in enumerate(zip(self.stiffness, self.pairs, strict=True)):
            if not (np.isfinite(k) and 0.0 <= k <= 1e7):
                raise VehicleConfigError(f"{pre}{prefix}[{i}].stiffness = {k}; allowed [0, 1e+07] N/m")
            if a == b:
                raise VehicleConfigError(f"{pre}{prefix}[{i}] connects a wheel to itself")


@jit
def add_forces(bars: np.ndarray, jounce: np.ndarray, in_contact: np.ndarray,
               spring_force: np.ndarray) -> None:
    """Add every bar's force to the strut forces of its wheels (N), in place, never below 0.

    Args:
        bars: ``(n_bars, 3)`` rows of (wheel a, wheel b, stiffness N/m).
        jounce, in_contact, spring_force: per-wheel arrays of one vehicle.
    """
    if len(bars) == 0:
        return
    for i in range(len(bars)):
        a, b, k = int(bars[i, 0]), int(bars[i, 1]), bars[i, 2]
        f = k * (jounce[a] - jounce[b])
        if in_contact[a] > 0.5:
            spring_force[a] += f
        if in_contact[b] > 0.5:
            spring_force[b] -= f
    for w in range(len(spring_force)):
        spring_force[w] = max(spring_force[w], 0.0)
