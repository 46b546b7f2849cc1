"""Engine: a flywheel driven by a torque curve, with throttle-dependent damping.

Engine torque is ``throttle * peak_torque * curve(omega / max_omega)``; the damping rate is
interpolated by throttle between ``damping_full_throttle`` and one of the two zero-throttle rates
(clutch engaged when a gear is in, disengaged in neutral). Spin is kept in ``[0, max_omega]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import VehicleConfigError
from .jit import interp, jit
from .params import freeze_arrays, param, validate_fields


@dataclass(frozen=True)
class EngineParams:
    """Engine data (scalars; the curve is an ``(n, 2)`` table)."""

    moi: float = param(1.0, unit="kg m^2", lo=0.0, hi=1e3, lo_open=True, shape="scalar",
                       doc="flywheel inertia", packed="engine_moi")
    peak_torque: float = param(500.0, unit="N m", lo=0.0, hi=1e6, lo_open=True, shape="scalar",
                               doc="largest torque the curve is scaled by", packed=True)
    max_omega: float = param(600.0, unit="rad/s", lo=0.0, hi=5e3, lo_open=True, shape="scalar",
                             doc="rev limit", packed=True)
    torque_curve: np.ndarray = param(
        ((0.0, 0.8), (0.125, 0.88), (0.25, 0.95), (0.375, 1.0), (0.5, 1.0), (0.625, 0.98),
         (0.75, 0.93), (0.875, 0.85), (1.0, 0.7)),
        unit="-", lo=0.0, hi=1.0, shape="curve",
        doc="(omega/max_omega, torque/peak_torque) points, >= 2 (no upper limit; PhysX's table "
            "holds 8), increasing x from 0 to 1")
    damping_full_throttle: float = param(0.15, unit="N m s/rad", lo=0.0, hi=100.0, lo_open=True,
                                         shape="scalar", doc="damping at full throttle", packed=True)
    damping_zero_throttle_clutch_engaged: float = param(
        2.0, unit="N m s/rad", lo=0.0, hi=100.0, lo_open=True, shape="scalar",
        doc="damping at zero throttle in gear", packed=True)
    damping_zero_throttle_clutch_disengaged: float = param(
        0.35, unit="N m s/rad", lo=0.0, hi=100.0, lo_open=True, shape="scalar",
        doc="damping at zero throttle in neutral", packed=True)

    def __post_init__(self):
        freeze_arrays(self)

    def validate(self, prefix: str = "engine.", where: str = "") -> None:
        """Range checks plus a curve of >= 2 points with x rising from 0 to 1 (a flat two-point
        curve is the guide's first troubleshooting step; any number of points is allowed)."""
        validate_fields(self, prefix, where)
        c = self.torque_curve
        pre = f"{where}: " if where else ""
        if c.ndim != 2 or c.shape[1] != 2 or len(c) < 2:
            raise VehicleConfigError(f"{pre}{prefix}torque_curve needs >= 2 (x, y) points, "
                                     f"got shape {c.shape}")
        if c[0, 0] != 0.0 or c[-1, 0] != 1.0 or np.any(np.diff(c[:, 0]) <= 0):
            raise VehicleConfigError(f"{pre}{prefix}torque_curve x values {c[:, 0].tolist()} must "
                                     "increase from 0 to 1")


@jit
def torque(peak_torque: float, max_omega: float, curve: np.ndarray, throttle: float,
           omega: float) -> float:
    """Engine torque (N m) at ``throttle`` in [0, 1] and spin ``omega`` (rad/s); 0 past the limit.
    ``curve`` is the ``(k, 2)`` torque curve."""
    x = omega / max_omega
    if x >= 1.0:
        return 0.0
    return throttle * peak_torque * interp(x, curve)


@jit
def damping(full_throttle: float, zero_engaged: float, zero_disengaged: float, throttle: float,
            engaged: bool) -> float:
    """Damping rate (N m s/rad) interpolated by throttle; ``engaged`` = a gear is in."""
    zero = zero_engaged if engaged else zero_disengaged
    return full_throttle + (zero - full_throttle) * (1.0 - throttle)
