"""Which surface is under each wheel.

MuJoCo's rangefinder reports the hit point but not the geom, so the surface of a hit is resolved
from the point: the smallest static surface geom whose world bounding box (1 cm margin) contains
it wins; planes are unbounded. A point on no surface geom gets surface type 0.
"""

from __future__ import annotations

import mujoco
import numpy as np

_MARGIN = 0.01


class SurfaceLookup:
    """Surface type at world points, for the static geoms that carry one."""

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, geom_surface: np.ndarray):
        ids = [g for g in np.flatnonzero(geom_surface >= 0) if model.geom_bodyid[g] == 0]
        lo, hi, vol = [], [], []
        for g in ids:
            if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_PLANE:
                lo.append(np.full(3, -np.inf))
                hi.append(np.full(3, np.inf))
                vol.append(np.inf)
                continue
            centre_local, half = model.geom_aabb[g, :3], model.geom_aabb[g, 3:]
            rot = data.geom_xmat[g].reshape(3, 3)
            centre = data.geom_xpos[g] + rot @ centre_local
            ext = np.abs(rot) @ half + _MARGIN
            lo.append(centre - ext)
            hi.append(centre + ext)
            vol.append(float(np.prod(2 * ext)))
        order = np.argsort(vol, kind="stable")
        self.lo = np.array(lo).reshape(-1, 3)[order]
        self.hi = np.array(hi).reshape(-1, 3)[order]
        self.surface = np.asarray(geom_surface)[np.array(ids, dtype=int)[order]]
        self.single = len(self.surface) == 1 and np.isinf(vol[0])

    def lookup(self, points: np.ndarray) -> np.ndarray:
        """Surface types ``(...)`` for world points ``(..., 3)``."""
        if self.single:
            return np.full(points.shape[:-1], self.surface[0], dtype=np.int64)
        if len(self.surface) == 0:
            return np.zeros(points.shape[:-1], dtype=np.int64)
        p = points[..., None, :]
        inside = np.all((p >= self.lo) & (p <= self.hi), axis=-1)
        first = np.argmax(inside, axis=-1)
        return np.where(inside.any(axis=-1), self.surface[first], 0)
