"""Builds complete MuJoCo models (vehicle + terrain) and the surface lookup data."""

from __future__ import annotations

import copy
import inspect
import math
from dataclasses import dataclass

import mujoco
import numpy as np

from traction.vehicle_model import FrictionTable, VehicleParams, vehicle_params
from traction.vehicle_model.params import check_number
from traction.vehicle_model.surface import checked_table

from . import heightfield, names, terrain
from .vehicle import HFIELD_SLABS, add_vehicle

TERRAINS = tuple(terrain.BUILDERS)
#: the offscreen frame buffer every scene gets (px): the largest frame it renders
OFFSCREEN = (1280, 720)


@dataclass
class Scene:
    """A compiled scene.

    Attributes:
        model: the compiled MjModel.
        vehicle: vehicle parameters the chassis was built from.
        terrain: what the terrain builder made (grid, goal, knobs); see :mod:`.terrain`.
        spawn_pos, spawn_quat: chassis frame pose at spawn (world).
        geom_surface: surface type per geom (``-1`` = not a drivable surface), ``(ngeom,)``.
        grid_surface: friction-table surface type of each of the terrain grid's surface names.
        friction_table: the table surface names were resolved in.
        surface: the one surface of the whole ground (``build_scene(surface=...)``), or None
            for the terrain's own.
        spec: the MjSpec the model was compiled from (a render twin with a coarser heightfield
            is compiled from a copy: :class:`~traction.scenes.render.ObservationCamera`).
    """

    model: mujoco.MjModel
    vehicle: VehicleParams
    terrain: terrain.Terrain
    geom_surface: np.ndarray
    grid_surface: np.ndarray
    friction_table: FrictionTable
    spec: mujoco.MjSpec | None = None
    surface: str | None = None

    @property
    def spawn_pos(self) -> np.ndarray:
        return self.terrain.spawn_pos

    @property
    def spawn_quat(self) -> np.ndarray:
        return self.terrain.spawn_quat

    def ground_limits(self) -> tuple[float, float, float, float]:
        """``(x_lo, x_hi, y_lo, y_hi)`` (m, world): where :meth:`pose_on_ground` puts the vehicle,
        every wheel on the ground at any yaw (its reach, the farthest wheel edge from the chassis
        origin, inside the heightfield's grid, or inside the 5 km plane). The same for every
        seed."""
        t, reach = self.terrain, terrain.reach(self.vehicle)
        if self.model.nhfield:                      # a heightfield: the ground ends with its grid
            (length, width), x0, y0 = t.grid.extent, t.grid.x0, t.grid.y0
        else:                                       # a plane (tilted on the smooth slope)
            half = terrain.PLANE_SIZE
            length = 2 * half * math.cos(math.radians(t.knobs.get("angle_deg", 0.0)))
            (x0, y0), width = (-length / 2, -half), 2 * half
        return x0 + reach, x0 + length - reach, y0 + reach, y0 + width - reach

    def pose_on_ground(self, x: float, y: float, yaw: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """The chassis pose ``(pos, quat)`` resting on this terrain at world ``(x, y)`` (m)
        facing ``yaw`` (rad, from +x toward +y), aligned with the ground under the wheels, for
        ``VehicleSim.reset(pos=..., quat=...)`` (a task's ``_reset_task``): a pose below the
        ground would be pushed out by the contacts, launching the vehicle.

        Raises:
            ValueError: ``x``, ``y`` or ``yaw`` not a finite number, or ``(x, y)`` outside
                :meth:`ground_limits` (a wheel could hang off the ground).
        """
        x_lo, x_hi, y_lo, y_hi = self.ground_limits()
        unit = f"m (every wheel on the {self.terrain.name} terrain at any yaw)"
        x, y = check_number("x", x, x_lo, x_hi, unit=unit), check_number("y", y, y_lo, y_hi, unit=unit)
        yaw = check_number("yaw", yaw, unit="rad")
        return terrain.spawn_on_ground(self.terrain, self.vehicle, x, y, yaw)

    def regenerate(self, seed: int) -> None:
        """New terrain from ``seed`` with the same knobs, written into the model in place (no
        recompilation); spawn pose and goal follow. Terrains without a seeded heightfield keep
        their shape. A :class:`~traction.scenes.render.SceneRenderer` refreshes its GPU copy at
        its next frame; a ``mujoco.Renderer`` of your own needs ``mjr_uploadHField`` with its
        GL context current."""
        check_number("seed", seed, 0, integer=True)
        t = self.terrain
        if t.grid is None or t.name in ("crest", "skidpad"):
            return
        fresh = terrain.BUILDERS[t.name](mujoco.MjSpec(), self.vehicle, seed, **t.knobs)
        terrain.regenerate(self.model, t, fresh.grid, self.surface)
        t.spawn_pos, t.spawn_quat, t.goal = fresh.spawn_pos, fresh.spawn_quat, fresh.goal
        if t.goal is not None:
            sid = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_SITE, names.GOAL_MARKER)
            if sid >= 0:
                self.model.site_pos[sid] = t.goal + [0, 0, 1.0]


    def save_terrain(self) -> tuple:
        """A copy of everything :meth:`regenerate` rewrites (for :meth:`restore_terrain`)."""
        m = self.model
        return copy.deepcopy((self.terrain, m.hfield_data, m.hfield_size, m.geom_pos, m.site_pos))

    def check_saved_terrain(self, saved) -> None:
        """ValueError unless ``saved`` is a :meth:`save_terrain` copy of this scene's kind."""
        m = self.model
        arrays = (m.hfield_data, m.hfield_size, m.geom_pos, m.site_pos)
        ok = isinstance(saved, tuple) and len(saved) == 5 and \
            getattr(saved[0], "name", None) == self.terrain.name and all(
                np.shape(a) == b.shape for a, b in zip(saved[1:], arrays, strict=True))
        if not ok:
            kind = getattr(saved[0], "name", "?") if isinstance(saved, tuple) and saved else "?"
            raise ValueError(f"saved terrain of kind {kind!r} does not fit this scene "
                             f"({self.terrain.name!r}, {m.nhfield} height field(s))")

    def restore_terrain(self, saved: tuple) -> None:
        """Put back a :meth:`save_terrain` copy (renderers: as for :meth:`regenerate`)."""
        self.check_saved_terrain(saved)
        t, hfield, hsize, gpos, spos = copy.deepcopy(saved)
        m = self.model
        m.hfield_data[:], m.hfield_size[:], m.geom_pos[:], m.site_pos[:] = hfield, hsize, gpos, spos
        terrain.refresh_bounds(m)
        terrain.paint_ground(m, t, self.surface)
        self.terrain = t


def terrain_knobs(terrain_name: str) -> list[str]:
    """The knobs a terrain builder takes (its arguments after spec, vehicle and seed; for
    ``rough_hill``, those of :func:`.heightfield.rough_hill` it passes on)."""
    builder = terrain.BUILDERS[terrain_name]
    params = list(inspect.signature(builder).parameters.values())[3:]
    if terrain_name == "rough_hill":
        params += list(inspect.signature(heightfield.rough_hill).parameters.values())[2:]
    return [p.name for p in params if p.kind is not p.VAR_KEYWORD]


def build_spec(vehicle: VehicleParams, terrain_name: str, seed: int, physics_dt: float,
               **terrain_kwargs) -> tuple[mujoco.MjSpec, terrain.Terrain]:
    """The uncompiled MjSpec of a scene and its terrain record (the vehicle, the terrain, its
    seed, knobs and the timestep checked first: ValueError / VehicleConfigError naming them)."""
    if terrain_name not in terrain.BUILDERS:
        raise ValueError(f"terrain_name = {terrain_name!r}; allowed: {', '.join(TERRAINS)}")
    check_number("physics_dt", physics_dt, 1e-4, 0.05, unit="s")
    check_number("seed", seed, 0, integer=True)
    knobs = terrain_knobs(terrain_name)
    for key in terrain_kwargs:
        if key not in knobs:
            raise ValueError(f"{terrain_name} knob {key!r} is unknown; allowed: "
                             f"{', '.join(knobs) or 'none'}")
    vehicle.validate(vehicle.name)
    spec = mujoco.MjSpec()
    spec.modelname = f"{vehicle.name}_{terrain_name}"
    spec.option.timestep = physics_dt
    spec.visual.global_.offwidth, spec.visual.global_.offheight = OFFSCREEN
    spec.visual.rgba.rangefinder = [1.0, 1.0, 0.1, 0.0]  # rays hidden unless a viewer turns them on
    spec.visual.headlight.ambient = [0.35, 0.35, 0.35]
    # The 5 km ground plane would set the model extent, and MuJoCo scales the clip planes with
    # it (near = 0.01 extent): pin it to vehicle scale so nearby ground is drawn.
    spec.stat.extent = 20.0
    spec.visual.map.zfar = 30.0
    # The sun's shadow map spans shadowclip x extent around the light; at 1 (20 m) the top
    # camera's view ran past its edge, where the depth test speckled the ground (0.7-1.4 % of
    # its pixels on flat, arena and crest); at 2 its texels are still 2 cm.
    spec.visual.map.shadowclip = 2.0
    spec.add_texture(name="sky", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
                     builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT, rgb1=[0.55, 0.7, 0.9],
                     rgb2=[0.15, 0.2, 0.3], width=256, height=256)
    t = terrain.BUILDERS[terrain_name](spec, vehicle, seed, **terrain_kwargs)
    # A footprint's rays cost a rangefinder each (a heightfield's ~0.6 us): on a heightfield
    # they are cast on its grid in compiled code instead, and on planes one ray is exact.
    planes = all(g.type == mujoco.mjtGeom.mjGEOM_PLANE for g in spec.worldbody.geoms)
    t.footprint = ("plane" if planes else "grid" if t.grid is not None and len(spec.hfields)
                   else "sensors")
    add_vehicle(spec, vehicle, t.spawn_pos, t.spawn_quat,
                n_slabs=HFIELD_SLABS if len(spec.hfields) else 1,
                footprint_sensors=t.footprint == "sensors")
    # The sun follows the vehicle, about 10 m up (a directional light's shadow map covers shadowclip x extent
    # around the light): fixed at the origin it left a vehicle 40 m away without a shadow, and
    # 50 m up the shadow depth test speckled every surface ("shadow acne").
    # (Given in the chassis frame at the spawn pose: the world's up and sun direction rotated
    # back by the spawn orientation, so a tilted spawn does not tilt the sun.)
    back = np.zeros(4)
    mujoco.mju_negQuat(back, np.asarray(t.spawn_quat, float))
    pos, sun = np.zeros(3), np.zeros(3)
    mujoco.mju_rotVecQuat(pos, np.array([0.0, 0.0, 10.0]), back)
    mujoco.mju_rotVecQuat(sun, np.array([0.3, 0.2, -1.0]), back)
    spec.body(names.CHASSIS_BODY).add_light(
        pos=pos.tolist(), dir=sun.tolist(), type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL,
        mode=mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM)
    return spec, t


def build_scene(vehicle: str | VehicleParams = "sedan", terrain_name: str = "flat", *,
                seed: int = 0, physics_dt: float = 0.002, surface: str | None = None,
                friction_table: FrictionTable | None = None, **terrain_kwargs) -> Scene:
    """Build ``vehicle`` on a terrain with MjSpec and compile it.

    Args:
        vehicle: preset name, TOML path or loaded params.
        terrain_name: one of :data:`TERRAINS`; knobs go in ``terrain_kwargs`` (see the builders
            in :mod:`traction.scenes.terrain`, e.g. ``angle_deg`` for ``slope``, ``difficulty``
            for ``rough_hill``, ``patches`` for ``flat``).
        seed: terrain seed (procedural terrains).
        physics_dt: MuJoCo timestep (s).
        surface: surface name of the whole ground geom (default: the terrain's own surfaces, or
            tarmac).
        friction_table: table the surface names are looked up in (default table if None).

    Raises:
        ValueError: unknown terrain, unknown knob, knob out of range, bad seed, timestep or
            friction table.
        VehicleConfigError: unknown vehicle or surface name, or invalid vehicle parameters.
    """
    params = vehicle_params(vehicle)
    table = checked_table(friction_table) or FrictionTable.default()
    spec, t = build_spec(params, terrain_name, seed, physics_dt, **terrain_kwargs)
    model = spec.compile()
    geom_surface = np.full(model.ngeom, -1, dtype=np.int64)
    ground = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, names.GROUND)
    geom_surface[ground] = table.surface_index(surface or "tarmac")
    for geom, name in t.surfaces.items():
        geom_surface[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, geom)] = \
            table.surface_index(name)
    grid_surface = np.array([table.surface_index(surface or n) for n in t.grid.surfaces]
                            if t.grid is not None else [], dtype=np.int64)
    if surface is not None:
        terrain.paint_ground(model, t, surface)     # (the ground looks as the physics reads it)
    return Scene(model, params, t, geom_surface, grid_surface, table, spec, surface)
