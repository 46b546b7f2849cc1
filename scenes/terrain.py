"""Terrains: ``flat``, ``slope``, ``rough_hill``, ``crest``, ``skidpad``, ``arena``.

Each builder adds ground geoms (and marker sites, which rays and contacts ignore) to an MjSpec
and returns a :class:`Terrain`: the spawn pose of the vehicle's chassis frame (wheels at rest on
the ground), surface names of extra geoms, an optional :class:`~.heightfield.TerrainGrid` (heights
and per-cell surfaces) and a goal point. Heightfield terrains can be regenerated with a new seed
at reset by rewriting the model's ``hfield_data`` (:func:`regenerate`), without recompiling.
Every builder checks its knobs (a ValueError names the terrain, the knob, its value and the
allowed range) and records all of them in :attr:`Terrain.knobs`, from which
``Scene.regenerate`` rebuilds the terrain with a new seed.

Planes are finite for MuJoCo ray casts (their size bounds the hit test), hence the 5 km size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import mujoco
import numpy as np

from traction.vehicle_model import VehicleParams
from traction.vehicle_model.params import check_number

from . import heightfield, names
from .heightfield import check_knob

PATCH_HEIGHT = 0.01  # m, thickness of surface patches lying on flat ground
PLANE_SIZE = 5000.0


@dataclass
class Terrain:
    """What a terrain builder made (see the module docstring)."""

    name: str
    spawn_pos: np.ndarray
    spawn_quat: np.ndarray
    surfaces: dict[str, str] = field(default_factory=dict)
    grid: heightfield.TerrainGrid | None = None
    goal: np.ndarray | None = None
    knobs: dict = field(default_factory=dict)
    #: where a footprint contact's rays come from on this terrain (``build.build_spec`` sets
    #: it): ``"grid"`` (a heightfield: cast on its grid in compiled code, the centre ray a
    #: rangefinder), ``"plane"`` (planes only: one ray is the footprint's result exactly) or
    #: ``"sensors"`` (a rangefinder per ray)
    footprint: str = "sensors"

    def height_at(self, x, y) -> np.ndarray:
        """Ground height (m) at world ``x, y``: the grid's where there is one (clamped to its
        edge), else the plane's (``flat``: 0, and ``PATCH_HEIGHT`` on its patches; a smooth
        ``slope`` rises toward +x)."""
        if self.grid is not None:
            return self.grid.height_at(x, y)
        x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
        h = x * math.tan(math.radians(self.knobs.get("angle_deg", 0.0)))
        if self.name == "obstacle":
            start, size = self.knobs["distance"], self.knobs["size"]
            if self.knobs["kind"] == "step":
                h = h + size * (x >= start)
            elif self.knobs["kind"] == "ditch":
                h = h - DITCH_DEPTH * ((x > start) & (x < start + size))
            else:
                h = h + WALL_HEIGHT * ((x >= start) & (x <= start + 0.5))
        for _, (px, py), (length, width) in self.knobs.get("patches", ()):
            h = h + PATCH_HEIGHT * ((np.abs(x - px) <= length / 2) & (np.abs(y - py) <= width / 2))
        return h


def _quat_yaw_pitch(yaw: float, pitch: float) -> np.ndarray:
    """(w, x, y, z) for yaw about z, then pitch about y (nose up positive)."""
    q = np.zeros(4)
    mat = np.zeros(9)
    cy, sy, cp, sp = math.cos(yaw), math.sin(yaw), math.cos(-pitch), math.sin(-pitch)
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    mat[:] = (rz @ ry).ravel()
    mujoco.mju_mat2Quat(q, mat)
    return q


def reach(vehicle: VehicleParams) -> float:
    """The farthest wheel edge from the chassis origin in the ground plane (m): a pose at
    ``(x, y)`` keeps every wheel within this of it, at any yaw."""
    p = vehicle.suspension.position
    return float(np.max(np.hypot(p[:, 0], p[:, 1]) + vehicle.wheels.radius))


def spawn_on_ground(ground, vehicle: VehicleParams, x: float, y: float, yaw: float = 0.0):
    """Chassis pose resting on ``ground`` (a :class:`Terrain` or a grid: anything with
    ``height_at(x, y)``) at ``(x, y)`` facing ``yaw``: the body is aligned with the plane fitted
    through the ground under the wheels (its z axis the plane's normal, its x axis the plane's
    direction over the heading ``yaw``) and raised until no wheel is compressed past rest.
    Returns ``(pos, quat)``."""
    c, s = math.cos(yaw), math.sin(yaw)
    wp = vehicle.suspension.position
    wx = x + c * wp[:, 0] - s * wp[:, 1]
    wy = y + s * wp[:, 0] + c * wp[:, 1]
    h = ground.height_at(wx, wy)
    a = np.column_stack([np.ones_like(wx), wx - x, wy - y])
    coef, *_ = np.linalg.lstsq(a, h, rcond=None)
    gx, gy = coef[1], coef[2]                                  # dz/dx, dz/dy in world
    up = np.array([-gx, -gy, 1.0])                             # the plane's normal
    forward = np.array([c, s, gx * c + gy * s])                # in the plane, over the heading
    up, forward = up / np.linalg.norm(up), forward / np.linalg.norm(forward)
    rot = np.column_stack([forward, np.cross(up, forward), up])
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, rot.ravel())
    lift = float(np.max(h - (coef[0] + a[:, 1] * gx + a[:, 2] * gy)))
    wheel_height = float(np.max(vehicle.wheels.radius - wp[:, 2]))
    pos = np.array([x, y, coef[0] + lift]) + rot[:, 2] * wheel_height
    return pos, quat


spawn_on_grid = spawn_on_ground     # (its name until 2026-11-28, when it took any ground)


#: side of a heightfield's checker squares (m)
GROUND_CHECKER = 2.0
#: Geom group of a heightfield ground (drawn by default, as groups 0-2 are): a lidar casts its
#: rays at the terrain grid itself (``heightfield.ray_grid``) and at every other group with
#: MuJoCo's ray query (``envs/sensors.py``).
TERRAIN_GROUP = 2


#: Each heightfield terrain's ground colour (RGBA), for a surface not in SURFACE_RGB.
GROUND_RGBA = {"slope": (0.45, 0.42, 0.38, 1.0), "rough_hill": (0.42, 0.5, 0.33, 1.0),
               "crest": (0.5, 0.45, 0.35, 1.0), "arena": (0.4, 0.42, 0.4, 1.0)}
#: What each surface of the friction table looks like on a heightfield (RGB in [0, 1]).
SURFACE_RGB = {"tarmac": (0.42, 0.42, 0.44), "wet_tarmac": (0.2, 0.23, 0.3),
               "gravel": (0.62, 0.58, 0.5), "grass": (0.42, 0.5, 0.33),
               "mud": (0.36, 0.25, 0.15), "rock": (0.5, 0.5, 0.52), "ice": (0.78, 0.88, 0.96)}


def ground_texture(grid: heightfield.TerrainGrid, rgba) -> np.ndarray:
    """The heightfield's texture: a texel per grid point, ``(nrow, ncol, 3)`` uint8 (rows from
    the grid's last, as MuJoCo maps a texture onto a heightfield), the point's surface colour
    (``rgba`` for a surface :data:`SURFACE_RGB` lacks) darkened on every other
    :data:`GROUND_CHECKER` m square."""
    nrow, ncol = grid.heights.shape
    light = np.array([SURFACE_RGB.get(name, tuple(rgba[:3])) for name in grid.surfaces])
    shades = np.round(255 * np.clip(np.stack([light, 0.8 * light]), 0, 1)).astype(np.uint8)
    x = np.floor((np.arange(ncol) * grid.cell + grid.x0) / GROUND_CHECKER).astype(np.int64)
    y = np.floor((np.arange(nrow) * grid.cell + grid.y0) / GROUND_CHECKER).astype(np.int64)
    odd = (x[None, :] + y[:, None]) & 1
    texels = shades[odd, np.asarray(grid.surface)]                   # (nrow, ncol, 3)
    return texels[::-1]              # (a texture's first row is drawn at the grid's far y edge)


def add_heightfield(spec: mujoco.MjSpec, grid: heightfield.TerrainGrid, rgba) -> None:
    """The grid as the ``ground`` heightfield geom (data normalised to [0, 1]); ValueError for a
    grid MuJoCo cannot take (under 2 x 2 points)."""
    if np.ndim(grid.heights) != 2 or min(np.shape(grid.heights)) < 2:
        raise ValueError(f"heightfield heights of shape {np.shape(grid.heights)}; allowed: "
                         "(nrow, ncol) with nrow, ncol >= 2")
    lo, span = _normalise(grid)
    length, width = grid.extent
    nrow, ncol = grid.heights.shape
    field = spec.add_hfield(name=names.TERRAIN_HFIELD, size=[length / 2, width / 2, span, 0.5],
                            nrow=nrow, ncol=ncol)
    field.userdata = ((grid.heights - lo) / span).ravel().tolist()
    # The ground's colours: each surface's (SURFACE_RGB; the terrain's own where it has none)
    # in a checker of GROUND_CHECKER m squares, draped over the relief once (texrepeat 1). A
    # uniform colour shows no slope from behind the vehicle (the lighting barely changes); the
    # bent squares do, give the scale and the motion, and the patches show where the grip
    # changes. regenerate() repaints it for each new grid.
    texture = spec.add_texture(name=names.TERRAIN_TEXTURE, type=mujoco.mjtTexture.mjTEXTURE_2D,
                               width=ncol, height=nrow, nchannel=3)
    texture.data = ground_texture(grid, rgba).tobytes()     # (bytes: a list costs 6 ms)
    material = spec.add_material(name=names.TERRAIN_TEXTURE)
    material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = names.TERRAIN_TEXTURE
    material.texrepeat = [1.0, 1.0]
    spec.worldbody.add_geom(name=names.GROUND, type=mujoco.mjtGeom.mjGEOM_HFIELD,
                            hfieldname=names.TERRAIN_HFIELD, material=names.TERRAIN_TEXTURE,
                            group=TERRAIN_GROUP,
                            rgba=[1.0, 1.0, 1.0, 1.0],
                            pos=[grid.x0 + length / 2, grid.y0 + width / 2, lo])


def _normalise(grid):
    lo, hi = float(grid.heights.min()), float(grid.heights.max())
    return lo, max(hi - lo, 1e-3)


def _plane(spec, rgba, quat=(1.0, 0.0, 0.0, 0.0), pos=(0.0, 0.0, 0.0), map_grid=None):
    """The ground plane, with a 2 m checker so motion is visible; with ``map_grid`` (a surface
    map centred on the origin), painted by its surfaces instead (:func:`_painted_plane`)."""
    size = PLANE_SIZE
    if map_grid is None:
        spec.add_texture(name=PAINTED_TEXTURE, type=mujoco.mjtTexture.mjTEXTURE_2D,
                         builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, rgb1=rgba[:3],
                         rgb2=[0.9 * c for c in rgba[:3]], width=64, height=64)
        repeat = PLANE_SIZE
    else:
        size, repeat = _painted_plane(spec, map_grid, rgba)
    material = spec.add_material(name="ground")
    material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = PAINTED_TEXTURE
    material.texrepeat = [repeat, repeat]
    spec.worldbody.add_geom(name=names.GROUND, type=mujoco.mjtGeom.mjGEOM_PLANE,
                            size=[size, size, 0.1], quat=list(quat),
                            pos=list(pos), material="ground")


#: A painted plane's tile: this many times its surface map's side, the map in the middle and
#: its edge's surface around it (MuJoCo repeats a plane's texture over the plane: a tile as
#: small as the map would show its middle again one map away, where the physics reads the
#: edge's surface)
PAINTED_TILE = 5
#: A painted plane's texel (m): the skidpad's 700 m tile is 700 x 700 texels, 1.5 MB
PAINTED_TEXEL = 1.0
#: the ground plane's texture (a painted plane's, or the checker)
PAINTED_TEXTURE = "grid"
#: the painted skidpad's colour for a surface SURFACE_RGB lacks
SKIDPAD_RGBA = (0.3, 0.3, 0.32, 1.0)


def _painted_tile(grid: heightfield.TerrainGrid, rgba) -> tuple[np.ndarray, float]:
    """A painted plane's texture (see :func:`_painted_plane`) and its tile's side (m)."""
    side = grid.extent[0]
    tile = PAINTED_TILE * side
    n = max(int(round(side / PAINTED_TEXEL)), 2) * PAINTED_TILE
    xs = (np.arange(n) + 0.5) * tile / n - tile / 2
    surface = grid.surface_at(xs[None, :], xs[:, None])                # (edge: clamped)
    painted = heightfield.TerrainGrid(np.zeros(surface.shape), surface, grid.surfaces,
                                      -tile / 2, -tile / 2, tile / n)
    return ground_texture(painted, rgba), tile


def _painted_plane(spec, grid: heightfield.TerrainGrid, rgba) -> tuple[float, float]:
    """Add the texture ``grid`` of a plane painted by ``grid``'s surface map (square, centred
    on the origin; a texel per :data:`PAINTED_TEXEL` m), the map's edge surface continued to
    a tile of :data:`PAINTED_TILE` maps; returns the plane's half-size and texture repeat.
    MuJoCo maps a plane's texture from its corner, tile after tile: the half-size is
    PLANE_SIZE rounded to half a tile more a whole number of tiles, so that a tile is centred
    on the origin."""
    texels, tile = _painted_tile(grid, rgba)
    texture = spec.add_texture(name=PAINTED_TEXTURE, type=mujoco.mjtTexture.mjTEXTURE_2D,
                               width=texels.shape[1], height=texels.shape[0], nchannel=3)
    texture.data = texels.tobytes()
    size = tile / 2 + tile * round((PLANE_SIZE - tile / 2) / tile)
    return size, 2 * size / tile


def _marker(spec, name, pos, size, rgba, kind=mujoco.mjtGeom.mjGEOM_CYLINDER):
    spec.worldbody.add_site(name=name, type=kind, pos=list(pos), size=list(size), rgba=rgba)


def _wheel_height(v: VehicleParams) -> float:
    return float(np.max(v.wheels.radius - v.suspension.position[:, 2]))


def _check_patch(i: int, patch) -> None:
    """A ``flat`` patch ``(surface name, (x, y), (length, width))`` with finite numbers, its
    centre on the plane and its sides in [0.01, plane size] m (ValueError naming it)."""
    try:
        surface, (x, y), size = patch
        length, width = size
    except (TypeError, ValueError):
        raise ValueError(f"flat patches[{i}] = {patch!r}; allowed: (surface name, (x m, y m), "
                         "(length m, width m))") from None
    if not isinstance(surface, str):
        raise ValueError(f"flat patches[{i}] surface = {surface!r}; allowed: a surface name")
    for name, value in (("x", x), ("y", y)):
        check_knob("flat", f"patches[{i}] {name}", value, -PLANE_SIZE / 2, PLANE_SIZE / 2, "m")
    for name, value in (("length", length), ("width", width)):
        check_knob("flat", f"patches[{i}] {name}", value, 0.01, PLANE_SIZE, "m")


# --- builders: (spec, vehicle, seed, **knobs) -> Terrain -------------------------------------

def flat(spec, vehicle, seed=0, patches: tuple = ()):
    """Flat plane at z = 0 with optional ``(surface, (x, y), (length, width))`` patches (thin
    boxes lying on the ground with their own surface)."""
    if isinstance(patches, (str, bytes)) or not hasattr(patches, "__iter__"):
        raise ValueError(f"flat patches = {patches!r}; allowed: a sequence of (surface name, "
                         "(x m, y m), (length m, width m))")
    for i, patch in enumerate(patches):
        _check_patch(i, patch)
    _plane(spec, [0.45, 0.45, 0.42, 1.0])
    surfaces = {}
    for i, (surface, (x, y), (length, width)) in enumerate(patches):
        name = names.ground_patch(i)
        spec.worldbody.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_BOX,
                                size=[length / 2, width / 2, PATCH_HEIGHT / 2],
                                pos=[x, y, PATCH_HEIGHT / 2], rgba=[0.75, 0.85, 0.95, 1.0])
        surfaces[name] = surface
    return Terrain("flat", np.array([0.0, 0.0, _wheel_height(vehicle)]),
                   np.array([1.0, 0, 0, 0]), surfaces, knobs={"patches": patches})


def slope(spec, vehicle, seed=0, angle_deg: float = 10.0, roughness: float = 0.0):
    """Incline rising toward +x at ``angle_deg``; with ``roughness`` > 0 (m) a bumpy heightfield."""
    check_number("slope angle_deg", angle_deg, 0.0, 60.0, hi_open=True, unit="deg")
    check_knob("slope", "roughness", roughness, 0.0, 1.0, "m")
    knobs = {"angle_deg": angle_deg, "roughness": roughness}
    if roughness == 0.0:
        a = math.radians(angle_deg)
        quat = _quat_yaw_pitch(0.0, a)
        _plane(spec, [0.45, 0.42, 0.38, 1.0], quat)
        pos = np.array([-math.sin(a), 0.0, math.cos(a)]) * _wheel_height(vehicle)
        return Terrain("slope", pos, quat, knobs=knobs)
    grid = heightfield.bumpy_plane(seed, roughness, length=120.0, width=40.0,
                                   incline_deg=angle_deg)
    add_heightfield(spec, grid, GROUND_RGBA["slope"])
    pos, quat = spawn_on_ground(grid, vehicle, -40.0, 0.0)
    return Terrain("slope", pos, quat, grid=grid, knobs=knobs)


def rough_hill(spec, vehicle, seed=0, difficulty: float = 0.5, **knobs):
    """Rough hill climb toward a summit (see :func:`.heightfield.rough_hill` for the knobs)."""
    grid, summit = heightfield.rough_hill(seed, difficulty, **knobs)
    add_heightfield(spec, grid, GROUND_RGBA["rough_hill"])
    _marker(spec, names.GOAL_MARKER, summit + [0, 0, 1.0], [1.5, 1.0, 0], [0.9, 0.2, 0.2, 0.5])
    pos, quat = spawn_on_ground(grid, vehicle, grid.x0 + 8.0, 0.0)
    return Terrain("rough_hill", pos, quat, grid=grid, goal=summit,
                   knobs={"difficulty": difficulty, **knobs})


def crest(spec, vehicle, seed=0, spacing: float = 8.0, depth: float = 0.6, width: float = 3.0,
          count: int = 5, incline_deg: float = 0.0, resolution: float = 0.1):
    """A course of crests and ditches along +x (the 6x6 scenario): ditch ``k`` centred at
    ``x = k * spacing`` with a raised-cosine section (``depth``, ``width``) on an incline. The
    vehicle spawns with its wheel-set centre over the first ditch, so a 6x6 rests on the crests
    with its middle wheels hanging when ``depth`` exceeds their droop."""
    check_knob("crest", "spacing", spacing, 1.0, 100.0, "m")
    for name, value, lo, hi, unit in (("depth", depth, 0.0, 5.0, "m"),
                                      ("width", width, 0.2, spacing, "m"),
                                      ("incline_deg", incline_deg, 0.0, 30.0, "deg"),
                                      ("resolution", resolution, 0.02, 0.5, "m")):
        check_knob("crest", name, value, lo, hi, unit)
    check_knob("crest", "count", count, 1, 50, integer=True)
    length = (count - 1) * spacing + 40.0
    heightfield.check_cells("crest", length, 20.0, resolution)
    xs, _ = heightfield._grid(length, 20.0, resolution, -20.0)
    h = crest_profile(xs, spacing, depth, width, count, incline_deg)
    grid = heightfield.TerrainGrid(h, np.zeros(h.shape, dtype=np.int64), ("gravel",), -20.0,
                                   -10.0, resolution)
    add_heightfield(spec, grid, GROUND_RGBA["crest"])
    a = math.radians(incline_deg)
    quat = _quat_yaw_pitch(0.0, a)
    centre = float(np.mean(vehicle.suspension.position[:, 0]))
    pos = np.array([-centre * math.cos(a), 0.0, -centre * math.sin(a)])
    pos += np.array([-math.sin(a), 0.0, math.cos(a)]) * _wheel_height(vehicle)
    return Terrain("crest", pos, quat, grid=grid,
                   knobs={"spacing": spacing, "depth": depth, "width": width, "count": count,
                          "incline_deg": incline_deg, "resolution": resolution})


def crest_profile(x, spacing, depth, width, count, incline_deg):
    """Height (m) along x of the crest course: an incline minus ``count`` raised-cosine ditches."""
    h = x * math.tan(math.radians(incline_deg))
    for k in range(count):
        u = (x - k * spacing) / (width / 2)
        h = h - np.where(np.abs(u) < 1.0, depth * 0.5 * (1.0 + np.cos(np.pi * u)), 0.0)
    return h


def skidpad(spec, vehicle, seed=0, radius: float = 20.0, resolution: float = 0.5):
    """A 140 m tarmac pad with a marked circle of ``radius`` (m) around the origin; a quarter of
    the ring is wet tarmac and the run-off beyond ``radius + 15`` m is gravel (surface map)."""
    check_knob("skidpad", "radius", radius, 5.0, 60.0, "m")
    check_knob("skidpad", "resolution", resolution, 0.1, 2.0, "m")
    size = 140.0
    xs, ys = heightfield._grid(size, size, resolution, -size / 2)
    r = np.hypot(xs, ys)
    surface = np.zeros(xs.shape, dtype=np.int64)
    surface[(np.abs(r - radius) < 4.0) & (xs > 0) & (ys > 0)] = 1
    surface[r > radius + 15.0] = 2
    grid = heightfield.TerrainGrid(np.zeros(xs.shape), surface, ("tarmac", "wet_tarmac", "gravel"),
                                   -size / 2, -size / 2, resolution)
    _plane(spec, SKIDPAD_RGBA, map_grid=grid)
    for i in range(48):
        t = 2 * math.pi * i / 48
        _marker(spec, names.marker(i), [radius * math.cos(t), radius * math.sin(t), 0.01],
                [0.25, 0.01, 0], [0.95, 0.95, 0.95, 1.0])
    pos = np.array([0.0, -radius, _wheel_height(vehicle)])   # on the circle, heading +x (CCW)
    return Terrain("skidpad", pos, np.array([1.0, 0, 0, 0]), grid=grid,
                   knobs={"radius": radius, "resolution": resolution})


def arena(spec, vehicle, seed=0, bump_amplitude: float = 0.04, size: float = 60.0):
    """Flat ground with mild bumps (``bump_amplitude`` m) and heading markers every 45 degrees
    (the +x marker is red) on a ``size`` x ``size`` m square."""
    check_knob("arena", "bump_amplitude", bump_amplitude, 0.0, 0.5, "m")
    check_knob("arena", "size", size, 20.0, 500.0, "m")
    grid = heightfield.bumpy_plane(seed, bump_amplitude, length=size, width=size)
    add_heightfield(spec, grid, GROUND_RGBA["arena"])
    for i in range(8):
        t = 2 * math.pi * i / 8
        rgba = [0.9, 0.15, 0.15, 1] if i == 0 else [0.9, 0.9, 0.2, 1]
        _marker(spec, names.marker(i), [15 * math.cos(t), 15 * math.sin(t), 1.0], [0.2, 1.0, 0],
                rgba)
    pos, quat = spawn_on_ground(grid, vehicle, 0.0, 0.0)
    return Terrain("arena", pos, quat, grid=grid, knobs={"bump_amplitude": bump_amplitude, "size": size})


#: ``obstacle`` kinds; a ditch's depth and a wall's height (m)
OBSTACLES = ("step", "ditch", "wall")
DITCH_DEPTH, WALL_HEIGHT = 0.5, 2.0


def obstacle(spec, vehicle, seed=0, kind: str = "step", size: float = 0.15,
             distance: float | None = None):
    """Flat ground with one obstacle across the path, ``distance`` (m) ahead of the spawn (+x;
    default 2 m beyond the vehicle's nose):
    a ``step`` up of height ``size`` (m), a ``ditch`` ``size`` wide (:data:`DITCH_DEPTH` deep),
    or a ``wall`` (:data:`WALL_HEIGHT` high). For the wheel-contact scenarios: kerbs, gaps and
    walls are what one ray per wheel gets wrong (``vehicle_model.footprint``)."""
    if kind not in OBSTACLES:
        raise ValueError(f"obstacle kind = {kind!r}; allowed: {', '.join(OBSTACLES)}")
    check_knob("obstacle", "size", size, 0.01, 2.0, "m")
    nose = float(vehicle.chassis.body_centre[0] + vehicle.chassis.body_size[0] / 2)
    if distance is None:
        distance = round(nose + 2.0, 3)
    check_knob("obstacle", "distance", distance, nose + 0.1, 100.0, "m (beyond the vehicle's "
               "nose)")
    rgba, far = [0.6, 0.55, 0.5, 1.0], 60.0
    if kind == "ditch":                 # the ground is the ditch's floor; slabs either side
        _plane(spec, [0.45, 0.45, 0.42, 1.0], pos=(0.0, 0.0, -DITCH_DEPTH))
        for i, (lo, hi) in enumerate(((-far, distance), (distance + size, far))):
            spec.worldbody.add_geom(name=names.obstacle(i), type=mujoco.mjtGeom.mjGEOM_BOX,
                                    size=[(hi - lo) / 2, far, DITCH_DEPTH / 2],
                                    pos=[(hi + lo) / 2, 0.0, -DITCH_DEPTH / 2], rgba=rgba)
    else:
        _plane(spec, [0.45, 0.45, 0.42, 1.0])
        length, height = (far, size) if kind == "step" else (0.5, WALL_HEIGHT)
        spec.worldbody.add_geom(name=names.obstacle(0), type=mujoco.mjtGeom.mjGEOM_BOX,
                                size=[length / 2, far, height / 2],
                                pos=[distance + length / 2, 0.0, height / 2], rgba=rgba)
    surfaces = {names.obstacle(i): "tarmac" for i in range(2 if kind == "ditch" else 1)}
    return Terrain("obstacle", np.array([0.0, 0.0, _wheel_height(vehicle)]),
                   np.array([1.0, 0, 0, 0]), surfaces,
                   knobs={"kind": kind, "size": size, "distance": distance})


BUILDERS = {"flat": flat, "slope": slope, "rough_hill": rough_hill, "crest": crest,
            "skidpad": skidpad, "arena": arena, "obstacle": obstacle}


def regenerate(model: mujoco.MjModel, terrain: Terrain, grid: heightfield.TerrainGrid,
               surface: str | None = None) -> None:
    """Write a new grid of the same shape into the model's heightfield and the bounds derived
    from it (renderers refresh their GPU copies themselves, see ``SceneRenderer``)."""
    hid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_HFIELD, names.TERRAIN_HFIELD)
    gid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, names.GROUND)
    if hid < 0 or grid.heights.shape != (model.hfield_nrow[hid], model.hfield_ncol[hid]):
        raise ValueError("regenerate: the terrain has no heightfield of this shape")
    lo, span = _normalise(grid)
    adr = model.hfield_adr[hid]
    model.hfield_data[adr:adr + grid.heights.size] = ((grid.heights - lo) / span).ravel()
    model.hfield_size[hid, 2] = span
    model.geom_pos[gid, 2] = lo
    refresh_bounds(model)
    terrain.grid = grid
    paint_ground(model, terrain, surface)


def paint_ground(model: mujoco.MjModel, terrain: Terrain, surface: str | None = None) -> None:
    """Write the colours of ``terrain``'s grid into the model's ground texture (a heightfield's,
    :func:`ground_texture`, or a painted plane's, :func:`_painted_plane`): for a new or restored
    grid, or with ``surface`` (the scene's one surface for the whole ground, which the physics
    reads instead of the grid's) in that surface's colour. Renderers upload it when it
    changes."""
    grid = terrain.grid
    if grid is None:
        return
    if surface is not None:
        grid = heightfield.TerrainGrid(grid.heights, np.zeros_like(grid.surface), (surface,),
                                       grid.x0, grid.y0, grid.cell)
    tid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_TEXTURE, names.TERRAIN_TEXTURE)
    if tid >= 0:
        texels = ground_texture(grid, GROUND_RGBA.get(terrain.name, (0.5, 0.5, 0.5, 1)))
    elif terrain.name == "skidpad" and surface is not None:      # (its map is fixed)
        tid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_TEXTURE, PAINTED_TEXTURE)
        texels, _ = _painted_tile(grid, SKIDPAD_RGBA)
    else:
        return
    adr = model.tex_adr[tid]
    model.tex_data[adr:adr + texels.size] = texels.ravel()


def refresh_bounds(model: mujoco.MjModel) -> None:
    """Recompute what MuJoCo's compiler derives from each heightfield's size and geom pose: the
    geom's size, bounding box and radius, and the bounding volumes of its body. The collision
    broadphase reads them, so a heightfield rewritten taller without them lets bodies sink
    through its top. Matches a fresh compile (tested)."""
    for gid in np.flatnonzero(model.geom_type == mujoco.mjtGeom.mjGEOM_HFIELD):
        sx, sy, top, base = model.hfield_size[model.geom_dataid[gid]]
        model.geom_size[gid, 2] = 0.25 * top + 0.5 * base
        model.geom_aabb[gid] = [0.0, 0.0, 0.5 * (top - base), sx, sy, 0.5 * (top + base)]
        model.geom_rbound[gid] = np.sqrt(sx * sx + sy * sy + max(top, base) ** 2)
    for body in np.unique(model.geom_bodyid[model.geom_type == mujoco.mjtGeom.mjGEOM_HFIELD]):
        _refresh_body_bvh(model, body)


def _refresh_body_bvh(model: mujoco.MjModel, body: int) -> None:
    """Leaves from their geoms' boxes in the body frame, inner nodes as their children's union
    (children come after their parent, so one backward pass suffices)."""
    adr, count = model.body_bvhadr[body], model.body_bvhnum[body]
    rot = np.empty(9)
    for node in range(adr + count - 1, adr - 1, -1):
        if model.bvh_nodeid[node] >= 0:
            gid = model.body_geomadr[body] + model.bvh_nodeid[node]
            mujoco.mju_quat2Mat(rot, model.geom_quat[gid])
            r = rot.reshape(3, 3)
            centre = model.geom_pos[gid] + r @ model.geom_aabb[gid, :3]
            half = np.abs(r) @ model.geom_aabb[gid, 3:]
        else:
            kids = model.bvh_aabb[adr + model.bvh_child[node][model.bvh_child[node] >= 0]]
            lo = np.min(kids[:, :3] - kids[:, 3:], axis=0)
            hi = np.max(kids[:, :3] + kids[:, 3:], axis=0)
            centre, half = 0.5 * (hi + lo), 0.5 * (hi - lo)
        model.bvh_aabb[node] = np.concatenate([centre, half])
