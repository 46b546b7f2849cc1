"""Builds complete MuJoCo models (vehicle + terrain) and the per-geom surface map."""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from traction.vehicle_model import FrictionTable, VehicleParams, load_vehicle

from . import names, terrain
from .vehicle import add_vehicle

TERRAINS = ("flat", "slope", "crest")


@dataclass
class Scene:
    """A compiled scene.

    Attributes:
        model: the compiled MjModel.
        vehicle: vehicle parameters the chassis was built from.
        spawn_pos: chassis frame origin at spawn (world, m).
        spawn_quat: chassis orientation at spawn (w, x, y, z).
        geom_surface: surface type per geom (``-1`` = not a drivable surface), ``(ngeom,)``.
    """

    model: mujoco.MjModel
    vehicle: VehicleParams
    spawn_pos: np.ndarray
    spawn_quat: np.ndarray
    geom_surface: np.ndarray


def build_scene(vehicle: str | VehicleParams = "sedan", terrain_name: str = "flat", *,
                physics_dt: float = 0.002, surface: str = "tarmac",
                friction_table: FrictionTable | None = None, **terrain_kwargs) -> Scene:
    """Build ``vehicle`` on ``terrain_name`` with MjSpec and compile it.

    Args:
        vehicle: preset name, TOML path or loaded params.
        terrain_name: ``"flat"`` (``patches=...``), ``"slope"`` (``angle_deg=...``) or
            ``"crest"`` (``spacing, depth, width, count, incline_deg``).
        physics_dt: MuJoCo timestep (s).
        surface: surface name of the ground (row of the friction table).
        friction_table: table the surface name is looked up in (default table if None).
        **terrain_kwargs: passed to the terrain function.
    """
    params = vehicle if isinstance(vehicle, VehicleParams) else load_vehicle(vehicle)
    if terrain_name not in TERRAINS:
        raise ValueError(f"terrain_name = {terrain_name!r}; allowed: {', '.join(TERRAINS)}")
    if not 1e-4 <= physics_dt <= 0.05:
        raise ValueError(f"physics_dt = {physics_dt}; allowed [0.0001, 0.05] s")
    table = friction_table or FrictionTable.default()
    surface_type = table.surface_index(surface)
    spec = mujoco.MjSpec()
    spec.modelname = f"{params.name}_{terrain_name}"
    spec.option.timestep = physics_dt
    spec.visual.global_.offwidth = 1280
    spec.visual.global_.offheight = 720
    spec.visual.rgba.rangefinder = [1.0, 1.0, 0.1, 0.0]  # rays hidden unless a viewer turns them on
    spec.worldbody.add_light(pos=[0, 0, 30], dir=[0, 0, -1],
                            type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL)
    wheel_height = float(np.max(params.wheels.radius - params.suspension.position[:, 2]))
    fn = getattr(terrain, terrain_name)
    pos, quat, surfaces = fn(spec, wheel_height, **terrain_kwargs)
    add_vehicle(spec, params, pos, quat)
    model = spec.compile()
    geom_surface = np.full(model.ngeom, -1, dtype=np.int64)
    geom_surface[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, names.GROUND)] = surface_type
    for geom, name in surfaces.items():
        geom_surface[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, geom)] = \
            table.surface_index(name)
    return Scene(model, params, pos, quat, geom_surface)
