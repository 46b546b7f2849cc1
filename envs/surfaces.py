"""Which surface is under each wheel.

MuJoCo's rangefinder reports the hit point but not the geom, so the surface is resolved from the
point: the terrain's per-cell surface map (or the ground geom's single surface), overridden by the
smallest static surface patch whose world bounding box (1 cm margin) contains the point.
"""

from __future__ import annotations

import mujoco
import numpy as np

from traction.scenes import Scene, names

_MARGIN = 0.01


class SurfaceLookup:
    """Surface type (friction-table row) at world points."""

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, scene: Scene):
        ground = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, names.GROUND)
        self.ground_type = int(scene.geom_surface[ground])
        self.scene = scene
        ids = [g for g in np.flatnonzero(scene.geom_surface >= 0)
               if model.geom_bodyid[g] == 0 and g != ground]
        lo, hi, vol = [], [], []
        for g in ids:
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
        self.patch_type = scene.geom_surface[np.array(ids, dtype=int)[order]]

    def lookup(self, points: np.ndarray) -> np.ndarray:
        """Surface types ``(...)`` for world points ``(..., 3)``."""
        grid = self.scene.terrain.grid
        if grid is not None:
            out = self.scene.grid_surface[grid.surface_at(points[..., 0], points[..., 1])]
        else:
            out = np.full(points.shape[:-1], self.ground_type, dtype=np.int64)
        if len(self.patch_type):
            p = points[..., None, :]
            inside = np.all((p >= self.lo) & (p <= self.hi), axis=-1)
            first = np.argmax(inside, axis=-1)
            out = np.where(inside.any(axis=-1), self.patch_type[first], out)
        return out
