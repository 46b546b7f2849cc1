"""The drawn-curve tyre (``model = "curve"``), after the Just Cause 4 talk in the references.

Inputs: slip ratio ``(omega*r - v) / max(|v|, min_slip_speed)``, kept at or above -1 when the
wheel spins against the direction of travel (and mirrored when reversing), slip angle
``atan2(v_lat, max(|v_long|, min_slip_speed))`` shifted by camber, and load.

Friction curves are normalised piecewise-linear curves (zero, peak, saturation; any number of
points) in two families: longitudinal force vs slip ratio, one curve per slip angle; lateral force
vs |slip angle|, one curve per slip ratio. Between family members the curves are interpolated, so
sliding sideways can shrink the traction curve (doughnuts) and wheelspin or a locked wheel can
collapse lateral grip (drifts). Forces are ``curve x grip x surface friction x load``, limited to
the grip circle, then passed through the friction clamps (``friction_clamps.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import friction_clamps
from .errors import VehicleConfigError

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
            if np.any(np.diff(idx) <= 0):
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


def _family(curves, index, key, family_value):
    """Evaluate a curve family at ``key`` (per wheel), interpolating across ``family_value``."""
    ys = np.stack([np.interp(key, c[:, 0], c[:, 1]) for c in curves])
    if len(curves) == 1:
        return ys[0]
    pos = np.interp(family_value, index, np.arange(len(index)))
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, len(index) - 1)
    w = pos - lo
    pick = np.indices(key.shape)
    return ys[(lo, *pick)] * (1 - w) + ys[(hi, *pick)] * w


def slip_ratio(v_long, wheel_speed, min_speed):
    """Slip ratio with the sign edge cases handled: never below -1 going forward (never above
    +1 going backward), even when the wheel spins against the direction of travel."""
    sr = (wheel_speed - v_long) / np.maximum(np.abs(v_long), min_speed)
    return np.where(v_long >= 0.0, np.maximum(sr, -1.0), np.minimum(sr, 1.0))


def forces(p, x, sets: tuple[CurveSet, ...], mask):
    """``(f_long, f_lat, aligning_moment, wheel_torque)`` for every wheel (see ``TireInputs``)."""
    sr = slip_ratio(x.v_long, x.omega * x.radius, p.min_slip_speed)
    alpha = np.arctan2(x.v_lat, np.maximum(np.abs(x.v_long), p.min_slip_speed))
    alpha = alpha - CAMBER_FACTOR * x.camber
    f_long = np.zeros_like(sr)
    f_lat = np.zeros_like(sr)
    for k, cs in enumerate(sets):
        use = mask & (p.curve_set == k)
        if not use.any():
            continue
        lon = _family(cs.long, cs.long_slip_angles, sr, np.abs(alpha))
        lat = _family(cs.lat, cs.lat_slip_ratios, np.abs(alpha), sr)
        f_long = np.where(use, lon, f_long)
        f_lat = np.where(use, -np.sign(alpha) * lat, f_lat)
    limit = p.grip * x.surface_friction * x.load
    f_long, f_lat = f_long * limit, f_lat * limit
    scale = np.minimum(1.0, limit / np.maximum(np.hypot(f_long, f_lat), 1e-12))
    f_long, f_lat = f_long * scale, f_lat * scale
    f_long, f_lat = friction_clamps.apply(f_long, f_lat, x, p.clamps > 0.5)
    return f_long, f_lat, -p.trail * f_lat, -f_long * x.radius
