"""Which surface is under each wheel: the arrays the compiled loop looks surfaces up in.

MuJoCo's rangefinder reports the hit point but not the geom, so the surface is resolved from the
point (``physics.surface_at``): the smallest static surface patch whose world bounding box (1 cm
margin) contains it, else the terrain's per-cell surface map, else the ground geom's surface.
"""

from __future__ import annotations

import mujoco
import numpy as np

from traction.scenes import Scene, names

from . import physics

_MARGIN = 0.01
#: dtype of the per-cell surface map the compiled loop reads (a quarter of int64's cache
#: footprint; surface types are friction-table rows)
SURFACE_DTYPE = np.int16


class SurfaceLookup:
    """Surface patches of a scene (static, found once) and its current terrain surface map."""

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, scene: Scene):
        ground = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, names.GROUND)
        self.ground_type = int(scene.geom_surface[ground])
        self.scene = scene
        ids = [g for g in np.flatnonzero(scene.geom_surface >= 0)
               if model.geom_bodyid[g] == 0 and g != ground]
        rows = []
        for g in ids:
            centre_local, half = model.geom_aabb[g, :3], model.geom_aabb[g, 3:]
            rot = data.geom_xmat[g].reshape(3, 3)
            centre = data.geom_xpos[g] + rot @ centre_local
            ext = np.abs(rot) @ half + _MARGIN
            rows.append((float(np.prod(2 * ext)), *(centre - ext), *(centre + ext),
                         scene.geom_surface[g]))
        rows.sort(key=lambda r: r[0])                 # smallest patch first (stable)
        self.patches = np.array([r[1:] for r in rows], dtype=float).reshape(-1, 7)

    @property
    def n_patches(self) -> int:
        return len(self.patches)

    def grid_shape(self) -> tuple[int, int]:
        grid = self.scene.terrain.grid
        return grid.surface.shape if grid is not None else (1, 1)

    def ray_source(self) -> int:
        """Where the vehicle's footprint rays come from in this scene (``physics.RAYS_*``)."""
        if self.scene.vehicle.contact.model != "footprint":
            return physics.RAYS_ONE
        return {"plane": physics.RAYS_ONE, "sensors": physics.RAYS_SENSORS,
                "grid": physics.RAYS_GRID}[self.scene.terrain.footprint]

    def write(self, grid: np.ndarray, grid_info: np.ndarray, patches: np.ndarray,
              heights: np.ndarray | None = None) -> None:
        """Fill the compiled loop's arrays with the current terrain (call after regenerating):
        the surface map, its placement and the rays' source, the patches and (if given) the
        heights footprint rays are cast on."""
        t = self.scene.terrain.grid
        patches[...] = self.patches
        if t is None:
            grid[...] = self.ground_type
            grid_info[...] = (0.0, 0.0, 0.0, 1.0, self.ray_source())
            if heights is not None:
                heights[...] = 0.0
            return
        if heights is not None:
            heights[...] = t.heights
        types = self.scene.grid_surface[t.surface]
        if types.size and types.max() > np.iinfo(SURFACE_DTYPE).max:
            raise ValueError(f"terrain surface type {types.max()} (a friction-table row) exceeds "
                             f"the surface map's limit {np.iinfo(SURFACE_DTYPE).max}")
        grid[...] = types
        grid_info[...] = (1.0, t.x0, t.y0, t.cell, self.ray_source())

    def lookup(self, points: np.ndarray) -> np.ndarray:
        """Surface types ``(...)`` for world points ``(..., 3)`` (the compiled lookup, looped)."""
        shape = self.grid_shape()
        grid, info = np.zeros(shape, SURFACE_DTYPE), np.zeros(physics.N_GRID_INFO)
        patches = np.zeros_like(self.patches)
        self.write(grid, info, patches)
        flat = np.asarray(points, dtype=float).reshape(-1, 3)
        out = [physics.surface_at(grid, info, self.ground_type, patches, *p) for p in flat]
        return np.array(out, dtype=np.int64).reshape(np.shape(points)[:-1])
