"""Steering: per-wheel steer multipliers and Ackermann correction.

The steer command ``s`` in [-1, 1] gives each wheel the nominal angle
``s * max_angle * multiplier`` (multiplier 1 for a front axle, a fraction for a second steered axle,
negative for a rear axle that steers the other way). With Ackermann correction (``accuracy`` in
[0, 1]) the inner wheel of each steered pair keeps its nominal angle and the outer wheel turns
less, towards the ideal ``atan(L / (L / tan(inner) + w))`` for axle distance ``L`` from the
reference axle (``reference_x``, by default the mean position of the unsteered wheels) and pair
width ``w``; so inner and outer match ``atan(L / (R -+ w/2))`` for a turn radius ``R`` at the axle
centre. Angles are finally limited by each wheel's ``max_steer`` and offset by its toe.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import VehicleConfigError
from .jit import jit
from .params import freeze_arrays, param, validate_fields
from .suspension import centre_line_y


@dataclass(frozen=True)
class SteeringParams:
    """Steering linkage (``multiplier`` per wheel)."""

    max_angle: float = param(0.0, unit="rad", lo=0.0, hi=1.6, shape="scalar",
                             doc="nominal angle at full steer for multiplier 1", packed="max_steer_angle")
    multiplier: np.ndarray = param(0.0, unit="-", lo=-1.0, hi=1.0,
                                   doc="per-wheel share of the steer angle (sign = direction); "
                                       "non-zero needs max_angle and the wheel's max_steer > 0",
                                       packed="steer_multiplier")
    ackermann_accuracy: float = param(1.0, unit="-", lo=0.0, hi=1.0, shape="scalar",
                                      doc="0 = parallel steer, 1 = ideal Ackermann", packed=True)
    reference_x: float = param(0.0, unit="m", lo=-50.0, hi=50.0, shape="scalar",
                               doc="x of the unsteered axle the turn centre lies on", packed=True)
    partner: tuple[int, ...] = field(default=())   # other wheel of the same axle, -1 if none

    def __post_init__(self):
        freeze_arrays(self)

    def validate(self, prefix: str = "steering.", where: str = "") -> None:
        """Raise VehicleConfigError naming the first field out of range or a partner that is
        not another wheel."""
        validate_fields(self, prefix, where)
        n = len(self.multiplier)
        bad = [i for i, j in enumerate(self.partner) if not (j == -1 or (0 <= j < n and j != i))]
        if (self.partner and len(self.partner) != n) or bad:
            pre = f"{where}: " if where else ""
            raise VehicleConfigError(f"{pre}{prefix}partner = {self.partner}; needs one entry per "
                                     f"wheel ({n}), each another wheel's index or -1")


def find_partners(positions: np.ndarray, tol: float = 0.02) -> tuple[int, ...]:
    """For each wheel, the wheel on the other side of the centre line
    (:func:`~traction.vehicle_model.suspension.centre_line_y`) at the same x (-1 if none); of
    several, the one most nearly its mirror image."""
    c = centre_line_y(positions)
    out = []
    for i, (x, y, _) in enumerate(positions):
        cands = [j for j, (xj, yj, _) in enumerate(positions)
                 if j != i and abs(xj - x) < tol and (yj - c) * (y - c) < 0]
        out.append(min(cands, key=lambda j: abs(positions[j, 1] - c + y - c)) if cands else -1)
    return tuple(out)


@jit
def steer_angle(vp: np.ndarray, wheels: np.ndarray, w: int, steer: float) -> float:
    """Angle (rad) of wheel ``w`` from the normalised steer command, before limits and toe.

    Args:
        vp: the packed vehicle parameters' record (``max_steer_angle``, ``ackermann_accuracy``,
            ``reference_x``).
        wheels: the packed wheel parameters (``steer_multiplier``, ``steer_partner``,
            ``position``).
        w: wheel index.
        steer: command in [-1, 1], positive turns left.
    """
    nominal = steer * vp.max_steer_angle * wheels[w].steer_multiplier
    partner = int(wheels[w].steer_partner)
    mag = abs(nominal)
    if vp.ackermann_accuracy <= 0.0 or partner < 0 or mag <= 1e-9:
        return nominal
    length = abs(wheels[w].position[0] - vp.reference_x)
    side = wheels[w].position[1] - wheels[partner].position[1]    # > 0: left of its partner
    width = abs(side)
    outer = length > 1e-6 and side * steer < 0.0          # the right wheel in a left turn
    if not outer:
        return nominal
    ideal = np.arctan(length / (width + length / np.tan(mag)))
    return np.sign(nominal) * (mag + vp.ackermann_accuracy * (ideal - mag))
