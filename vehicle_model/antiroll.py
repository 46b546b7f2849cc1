"""Anti-roll bars: a torsion spring between two wheels' suspensions.

A bar with stiffness ``k`` (N/m) between wheels ``a`` and ``b`` adds ``k * (jounce_a - jounce_b)``
to ``a``'s strut force and takes it from ``b``'s, so it resists the difference in compression
(body roll) without stiffening the suspension in heave. A wheel in the air takes no bar force.

Unlike PhysX, whose bars put only a torque on the chassis and leave the tyre loads to the
springs, the bar force here is part of the strut force and so of the tyre load, as a real bar
transfers load: a stiffer bar on an axle moves more of the lateral load transfer to that axle's
tyres (in PhysX it takes roll, and with it spring load transfer, away from them), so a balance
tuned with bars does not carry over between the two.
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

    def validate(self, prefix: str = "anti_roll_bars", where: str = "",
                 n_wheels: int | None = None) -> None:
        """Raise VehicleConfigError for a stiffness out of range, pairs and stiffness of
        different lengths, a bar from a wheel to itself or (given ``n_wheels``) to a wheel
        index outside ``0..n_wheels-1`` (the compiled update would read another row)."""
        pre = f"{where}: " if where else ""
        if len(self.pairs) != len(self.stiffness):
            raise VehicleConfigError(f"{pre}{prefix}: {len(self.pairs)} wheel pairs but "
                                     f"{len(self.stiffness)} stiffness values; need one per bar")
        for i, (k, pair) in enumerate(zip(self.stiffness, self.pairs, strict=True)):
            if not (np.isfinite(k) and 0.0 <= k <= 1e7):
                raise VehicleConfigError(f"{pre}{prefix}[{i}].stiffness = {k}; allowed [0, 1e+07] N/m")
            if len(pair) != 2:
                raise VehicleConfigError(f"{pre}{prefix}[{i}].wheels = {pair}; a bar joins two wheels")
            a, b = pair
            if a == b:
                raise VehicleConfigError(f"{pre}{prefix}[{i}] connects a wheel to itself")
            top = np.inf if n_wheels is None else n_wheels
            if any(int(w) != w or not 0 <= w < top for w in pair):
                raise VehicleConfigError(f"{pre}{prefix}[{i}].wheels = {pair} refers to a wheel "
                                         f"outside 0..{top - 1} ({n_wheels} wheels)")


@jit
def add_forces(bars: np.ndarray, jounce: np.ndarray, in_contact: np.ndarray,
               spring_force: np.ndarray) -> None:
    """Add every bar's force to the strut forces of its wheels (N), in place (the force on the
    chassis is then that strut force's part along the ground normal, never pulling: see
    :func:`~traction.vehicle_model.suspension.normal_force`).

    Args:
        bars: ``(n_bars, 3)`` rows of (wheel a, wheel b, stiffness N/m).
        jounce, in_contact, spring_force: per-wheel arrays of one vehicle.
    """
    for i in range(len(bars)):
        a, b, k = int(bars[i, 0]), int(bars[i, 1]), bars[i, 2]
        f = k * (jounce[a] - jounce[b])
        if in_contact[a] > 0.5:
            spring_force[a] += f
        if in_contact[b] > 0.5:
            spring_force[b] -= f
