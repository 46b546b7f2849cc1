"""Wheel: rim + tyre as one rotating mass, and the integration of its spin.

Frames: the wheel rolls about its axle (the chassis y axis before steering); positive spin
``omega`` rolls the vehicle forward (+x).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .jit import jit
from .params import freeze_arrays, param, validate_fields


@dataclass(frozen=True)
class WheelParams:
    """Per-wheel rim/tyre data; every field is an array of shape ``(n_wheels,)``."""

    radius: np.ndarray = param(unit="m", lo=0.05, hi=3.0, doc="centre to tread", packed=True)
    width: np.ndarray = param(unit="m", lo=0.01, hi=2.0, doc="full tyre width (drawing only)")
    mass: np.ndarray = param(unit="kg", lo=0.0, hi=5000.0, lo_open=True,
                             doc="wheel + tyre mass: sets moi's default; the weight is "
                                 "chassis.mass")
    moi: np.ndarray = param(unit="kg m^2", lo=0.0, hi=1e5, lo_open=True,   # >= 5000 x 3^2 x 2
                            doc="inertia about the axle (default 0.5*mass*radius^2)", packed=True)
    damping_rate: np.ndarray = param(unit="N m s/rad", lo=0.0, hi=1e3, lo_open=True,
                                     doc="bearing damping torque per rad/s (0.25..2 typical)", packed=True)
    max_brake_torque: np.ndarray = param(unit="N m", lo=0.0, hi=1e6,
                                         doc="brake torque at full pedal", packed=True)
    max_handbrake_torque: np.ndarray = param(unit="N m", lo=0.0, hi=1e6,
                                             doc="handbrake torque at full lever (0: no handbrake)",
                                             packed=True)
    max_steer: np.ndarray = param(unit="rad", lo=0.0, hi=1.6,
                                  doc="largest steer angle magnitude at this wheel (> 0 "
                                      "with a steer_multiplier)", packed=True)
    toe: np.ndarray = param(unit="rad", lo=-0.2, hi=0.2, doc="steer angle with no steer input", packed=True)

    def __post_init__(self):
        freeze_arrays(self)

    def validate(self, prefix: str = "wheel.", where: str = "") -> None:
        """Raise VehicleConfigError naming the first field out of range."""
        validate_fields(self, prefix, where)


@jit
def integrate_spin(omega: float, drive_torque: float, road_torque: float, brake: float,
                   moi: float, damping: float, dt: float) -> float:
    """Advance one wheel's spin (rad/s) by one (sub)step.

    Drive and road torque (N m) are integrated explicitly, the damping (N m s/rad: the
    bearing's, plus the tyre's ``road_damp`` of the update's scratch that makes the road torque
    implicit in the new spin, see ``tire_models``) implicitly (unconditionally stable), and the brake torque
    magnitude (N m) as Coulomb friction: the wheel stops and stays stopped while the other
    torques' pull ``I omega / dt + drive + road`` is within the brake, else the brake takes
    its torque off that pull (it removes at most ``brake / (I / dt + damping)`` of spin, and
    never spins the wheel backwards).
    """
    free = (omega + dt * (drive_torque + road_torque) / moi) / (1.0 + dt * damping / moi)
    return apply_brake(free, dt * brake / (moi + dt * damping))


@jit
def apply_brake(omega: float, max_change: float) -> float:
    """Reduce ``|omega|`` by at most ``max_change`` (rad/s) without crossing zero."""
    if abs(omega) <= max_change:
        return 0.0
    return omega - max_change if omega > 0.0 else omega + max_change
