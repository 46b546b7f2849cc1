"""MuJoCo scenes: vehicles and terrains built with ``mujoco.MjSpec``; owns every MJCF name."""

from . import names
from .build import TERRAINS, Scene, build_scene

__all__ = ["TERRAINS", "Scene", "build_scene", "names"]
