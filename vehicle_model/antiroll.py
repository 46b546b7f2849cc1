"""Anti-roll bars: a torsion spring between two wheels' suspensions.

A bar with stiffness ``k`` (N/m) between wheels ``a`` and ``b`` adds ``k * (jounce_a - jounce_b)``
to ``a``'s strut force and takes it from ``b``'s, so it resists the difference in compression
(body roll) without stiffening the suspension in heave. A wheel in the air takes no bar force.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import VehicleConfigError


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


def forces(p: AntiRollParams, jounce: np.ndarray, in_contact: np.ndarray) -> np.ndarray:
    """Extra strut force per wheel (N), ``(n_vehicles, n_wheels)``."""
    extra = np.zeros_like(jounce)
    for (a, b), k in zip(p.pairs, p.stiffness, strict=True):
        f = k * (jounce[:, a] - jounce[:, b])
        extra[:, a] += np.where(in_contact[:, a], f, 0.0)
        extra[:, b] -= np.where(in_contact[:, b], f, 0.0)
    return extra
