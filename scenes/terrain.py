"""Terrains for the foundation scenes: flat ground and a plane slope.

Each function adds ground geoms to the world body of an MjSpec and returns the spawn pose of a
vehicle's chassis frame origin (its height above ground is the wheel-centre height, so the
suspension starts at rest) together with the ground's surface type.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from . import names


def flat(spec: mujoco.MjSpec, wheel_height: float, size: float = 200.0):
    """Flat plane at z = 0. Returns ``(pos, quat)`` for the chassis frame origin."""
    spec.worldbody.add_geom(name=names.GROUND, type=mujoco.mjtGeom.mjGEOM_PLANE,
                            size=[size, size, 0.1], rgba=[0.45, 0.45, 0.42, 1.0])
    return np.array([0.0, 0.0, wheel_height]), np.array([1.0, 0.0, 0.0, 0.0])


def slope(spec: mujoco.MjSpec, wheel_height: float, angle_deg: float, size: float = 200.0):
    """Plane through the origin rising toward +x at ``angle_deg``; the vehicle faces uphill.

    Raises:
        ValueError: angle outside [0, 60) degrees.
    """
    if not 0.0 <= angle_deg < 60.0:
        raise ValueError(f"slope angle_deg = {angle_deg}; allowed [0, 60)")
    a = math.radians(angle_deg)
    quat = np.array([math.cos(-a / 2), 0.0, math.sin(-a / 2), 0.0])  # pitch nose up
    spec.worldbody.add_geom(name=names.GROUND, type=mujoco.mjtGeom.mjGEOM_PLANE,
                            size=[size, size, 0.1], quat=quat.tolist(),
                            rgba=[0.45, 0.42, 0.38, 1.0])
    normal = np.array([-math.sin(a), 0.0, math.cos(a)])
    return normal * wheel_height, quat
