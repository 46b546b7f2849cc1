"""The drawn-curve tyre (``model = "curve"``), after the Just Cause 4 talk in the references.

Inputs: the shared slips (``tire.py``): slip ratio ``(omega r - v) / max(|v|, |omega r|)``
(within [-2, 2]; the curves are flat beyond their ends) and slip angle, shifted by camber, and
load.

Friction curves are normalised piecewise-linear curves (zero, peak, saturation; any number of
points) in two families: longitudinal force vs slip ratio, one curve per slip angle; lateral force
vs |slip angle|, one curve per slip ratio. Between family members the curves are interpolated, so
sliding sideways can shrink the traction curve (doughnuts) and wheelspin or a locked wheel can
collapse lateral grip (drifts). Forces are ``curve x grip x surface friction x load``, limited to
the grip circle. (What keeps high grip stable at large steps, the friction clamps of the talk,
is the tyre's implicit step for every model: ``tire_models.py``.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import VehicleConfigError
from .jit import interp, jit
from .vec import norm2

#: Camber shifts the slip angle by this fraction of the camber angle (camber thrust).
CAMBER_FACTOR = 0.1


@dataclass(frozen=True)
class CurveSet:
    """One set of curve families. Curves are ``(n_points, 2)`` arrays of (x, y)."""

    name: str
    long_slip_angles: tuple[float, ...]           # rad, one per longitudinal curve, increasing
    long: tuple[np.ndarray, ...]                  # y (-1..1) vs slip ratio (-1..)
    lat_slip_ratios: tuple[float, ...]            # one per lateral curve, increasing
    lat: tuple[np.ndarray, ...]                   # y (0..1) vs |slip angle| (rad)

    def validate(self, where: str = "") -> None:
        """Raise VehicleConfigError for malformed families."""
        pre = f"{where}: tire_curves.{self.name}"
        for key, idx, curves in (("long", self.long_slip_angles, self.long),
                                 ("lat", self.lat_slip_ratios, self.lat)):
            if len(idx) != len(curves) or not curves:
                raise VehicleConfigError(f"{pre}.{key}: need one curve per family index "
                                         f"({len(idx)} indices, {len(curves)} curves)")
            if not np.all(np.isfinite(idx)) or np.any(np.diff(idx) <= 0):
                raise VehicleConfigError(f"{pre}: family indices {list(idx)} must increase")
            for i, c in enumerate(curves):
                if c.ndim != 2 or c.shape[1] != 2 or len(c) < 2 or np.any(np.diff(c[:, 0]) <= 0):
                    raise VehicleConfigError(f"{pre}.{key}[{i}]: need >= 2 [x, y] points with "
                                             "increasing x")
                if np.any(np.abs(c[:, 1]) > 1.0) or not np.all(np.isfinite(c)):
                    raise VehicleConfigError(f"{pre}.{key}[{i}]: y values are normalised, within "
                                             "[-1, 1]")


def _c(*pts):
    return np.array(pts, dtype=float)


#: The shipped set: traction peaks at 10% slip; sliding sideways or spinning/locking the wheel
#: shrinks the other direction's curve.
DEFAULT = CurveSet(
    name="default",
    long_slip_angles=(0.0, 0.25, 0.6, 1.2),
    long=(_c((-1, -0.75), (-0.1, -1.0), (0, 0), (0.1, 1.0), (1.0, 0.75), (10, 0.7)),
          _c((-1, -0.6), (-0.15, -0.8), (0, 0), (0.15, 0.8), (1.0, 0.6), (10, 0.55)),
          _c((-1, -0.45), (-0.2, -0.55), (0, 0), (0.2, 0.55), (1.0, 0.45), (10, 0.4)),
          _c((-1, -0.3), (-0.2, -0.35), (0, 0), (0.2, 0.35), (1.0, 0.3), (10, 0.3))),
    lat_slip_ratios=(-1.0, -0.3, 0.0, 0.3, 1.0),
    lat=(_c((0, 0), (0.2, 0.35), (1.6, 0.3)),
         _c((0, 0), (0.15, 0.7), (0.6, 0.6), (1.6, 0.55)),
         _c((0, 0), (0.12, 1.0), (0.5, 0.85), (1.6, 0.8)),
         _c((0, 0), (0.15, 0.7), (0.6, 0.6), (1.6, 0.55)),
         _c((0, 0), (0.2, 0.4), (1.6, 0.35))),
)


def zero_slopes(curve_set: CurveSet) -> tuple[float, float]:
    """The steepest zero-slip slope of the set's longitudinal curves (per unit slip ratio) and
    of its lateral curves (per rad): the stiffness near rolling per unit of ``grip x friction x
    load``."""
    eps = 1e-6
    out = []
    for curves in (curve_set.long, curve_set.lat):
        steepest = 0.0
        for c in curves:
            y = np.interp([-eps, 0.0, eps], c[:, 0], c[:, 1])
            steepest = max(steepest, abs(y[1] - y[0]) / eps, abs(y[2] - y[1]) / eps)
        out.append(steepest)
    return out[0], out[1]


@jit
def _curve(points: np.ndarray, member: np.ndarray, key: float) -> float:
    """One curve (a family member: value, first point, count) at ``key`` (flat beyond its ends)."""
    start, count = int(member[1]), int(member[2])
    return interp(key, points[start:start + count])


@jit
def _family(families: np.ndarray, points: np.ndarray, first: int, count: int, key: float,
            family_value: float) -> float:
    """A curve family at ``key``, interpolated between the members around ``family_value``."""
    members = families[first:first + count]
    if count == 1 or family_value <= members[0, 0]:
        return _curve(points, members[0], key)
    if family_value >= members[count - 1, 0]:
        return _curve(points, members[count - 1], key)
    j = 0
    while members[j + 1, 0] <= family_value:
        j += 1
    t = (family_value - members[j, 0]) / (members[j + 1, 0] - members[j, 0])
    return (1.0 - t) * _curve(points, members[j], key) + t * _curve(points, members[j + 1], key)


@jit
def forces(w: np.ndarray, x: np.ndarray, families: np.ndarray, family_index: np.ndarray,
           points: np.ndarray) -> tuple[float, float, float, float]:
    """``(f_long, f_lat, aligning_moment, wheel_torque)`` of one wheel; the curve sets are the
    packed ``families``/``family_index``/``points`` (see ``layout.Packed``)."""
    sr = x.long_slip
    alpha = x.lat_slip - CAMBER_FACTOR * x.camber
    k = int(w.curve_set)
    lon = _family(families, points, family_index[k, 0, 0], family_index[k, 0, 1], sr, abs(alpha))
    lat = _family(families, points, family_index[k, 1, 0], family_index[k, 1, 1], abs(alpha), sr)
    limit = w.grip * x.surface_friction * x.load
    f_long, f_lat = lon * limit, -np.sign(alpha) * lat * limit
    scale = min(1.0, limit / max(norm2(f_long, f_lat), 1e-12))
    f_long, f_lat = f_long * scale, f_lat * scale
    return f_long, f_lat, -w.trail * f_lat, -f_long * w.radius
