"""MuJoCo scenes: vehicles and terrains built with ``mujoco.MjSpec``; owns every MJCF name.

Importing this package before ``mujoco`` selects EGL offscreen rendering when there is no display
and ``MUJOCO_GL`` is unset (MuJoCo reads the variable when it is first imported).
"""

import os

if not os.environ.get("MUJOCO_GL") and not os.environ.get("DISPLAY"):
    os.environ["MUJOCO_GL"] = "egl"

# (render: its fork hook is registered before anything renders)
from . import names, render  # noqa: E402, F401
from .build import TERRAINS, Scene, build_scene, build_spec  # noqa: E402

__all__ = ["TERRAINS", "Scene", "build_scene", "build_spec", "names"]
