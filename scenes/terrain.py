"""Terrains: flat ground (with optional surface patches), a plane slope, and a crest course.

Each function adds ground geoms to the world body of an MjSpec and returns ``(pos, quat,
surfaces)``: the spawn pose of the vehicle's chassis frame origin (its height above ground is the
wheel-centre height, so the suspension starts at rest) and ``{geom name: surface name}`` for geoms
whose surface differs from the scene's ground surface.

Planes are finite for MuJoCo ray casts (their size bounds the hit test), hence the 5 km default.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from . import names

PATCH_HEIGHT = 0.01  # m, thickness of surface patches lying on flat ground


def flat(spec: mujoco.MjSpec, wheel_height: float, size: float = 5000.0,
         patches: tuple = ()):
    """Flat plane at z = 0, with optional surface patches.

    Args:
        patches: ``(surface, (x, y), (length, width))`` entries: thin boxes lying on the ground
            with their own surface (e.g. an ice patch under the left wheels).
    """
    spec.worldbody.add_geom(name=names.GROUND, type=mujoco.mjtGeom.mjGEOM_PLANE,
                            size=[size, size, 0.1], rgba=[0.45, 0.45, 0.42, 1.0])
    surfaces = {}
    for i, (surface, (x, y), (length, width)) in enumerate(patches):
        name = names.ground_patch(i)
        spec.worldbody.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_BOX,
                                size=[length / 2, width / 2, PATCH_HEIGHT / 2],
                                pos=[x, y, PATCH_HEIGHT / 2], rgba=[0.75, 0.85, 0.95, 1.0])
        surfaces[name] = surface
    return np.array([0.0, 0.0, wheel_height]), np.array([1.0, 0.0, 0.0, 0.0]), surfaces


def _incline(angle_deg: float, wheel_height: float):
    a = math.radians(angle_deg)
    quat = np.array([math.cos(-a / 2), 0.0, math.sin(-a / 2), 0.0])  # pitch nose up
    normal = np.array([-math.sin(a), 0.0, math.cos(a)])
    return a, quat, normal * wheel_height


def slope(spec: mujoco.MjSpec, wheel_height: float, angle_deg: float, size: float = 5000.0):
    """Plane through the origin rising toward +x at ``angle_deg``; the vehicle faces uphill.

    Raises:
        ValueError: angle outside [0, 60) degrees.
    """
    if not 0.0 <= angle_deg < 60.0:
        raise ValueError(f"slope angle_deg = {angle_deg}; allowed [0, 60)")
    _, quat, pos = _incline(angle_deg, wheel_height)
    spec.worldbody.add_geom(name=names.GROUND, type=mujoco.mjtGeom.mjGEOM_PLANE,
                            size=[size, size, 0.1], quat=quat.tolist(),
                            rgba=[0.45, 0.42, 0.38, 1.0])
    return pos, quat, {}


def crest_profile(x: np.ndarray, spacing: float, depth: float, width: float, count: int,
                  incline_deg: float) -> np.ndarray:
    """Height (m) of the crest course along x: an incline with ``count`` smooth ditches.

    Ditch ``k`` is centred at ``x = k * spacing`` with a raised-cosine cross-section of the given
    depth and width; between ditches the ground is the plain incline (the crests).
    """
    h = x * math.tan(math.radians(incline_deg))
    for k in range(count):
        u = (x - k * spacing) / (width / 2)
        h = h - np.where(np.abs(u) < 1.0, depth * 0.5 * (1.0 + np.cos(np.pi * u)), 0.0)
    return h


def crest(spec: mujoco.MjSpec, wheel_height: float, spacing: float = 8.0, depth: float = 0.6,
          width: float = 3.0, count: int = 5, incline_deg: float = 0.0,
          resolution: float = 0.1, half_width: float = 10.0):
    """A heightfield course of crests and ditches along +x (the 6x6 scenario).

    The vehicle spawns facing +x with its wheel-set centre over the first ditch, so a 6x6 whose
    outer axles are more than ``width / 2`` from its middle axle rests on the crests with its
    middle wheels hanging (when ``depth`` exceeds their droop).

    Args:
        spacing: distance between ditch centres (m).
        depth: ditch depth (m).
        width: ditch width (m).
        count: number of ditches.
        incline_deg: overall climb of the course toward +x (deg).
        resolution: heightfield cell size (m).
        half_width: course half-width in y (m).

    Raises:
        ValueError: a knob out of range.
    """
    for name, value, lo, hi in (("spacing", spacing, 1.0, 100.0), ("depth", depth, 0.0, 5.0),
                                ("width", width, 0.2, spacing), ("count", count, 1, 50),
                                ("incline_deg", incline_deg, 0.0, 30.0)):
        if not lo <= value <= hi:
            raise ValueError(f"crest {name} = {value}; allowed [{lo}, {hi}]")
    x0, x1 = -20.0, (count - 1) * spacing + 20.0
    ncol = int(round((x1 - x0) / resolution)) + 1
    nrow = int(round(2 * half_width / resolution)) + 1
    xs = np.linspace(x0, x1, ncol)
    h = crest_profile(xs, spacing, depth, width, count, incline_deg)
    lo, hi = float(h.min()), float(h.max())
    span = max(hi - lo, 1e-3)
    field = spec.add_hfield(name=names.TERRAIN_HFIELD, size=[(x1 - x0) / 2, half_width, span, 0.5],
                            nrow=nrow, ncol=ncol)
    field.userdata = np.tile((h - lo) / span, (nrow, 1)).ravel().tolist()
    spec.worldbody.add_geom(name=names.GROUND, type=mujoco.mjtGeom.mjGEOM_HFIELD,
                            hfieldname=names.TERRAIN_HFIELD, pos=[(x0 + x1) / 2, 0.0, lo],
                            rgba=[0.5, 0.45, 0.35, 1.0])
    _, quat, pos = _incline(incline_deg, wheel_height)
    return pos, quat, {}
