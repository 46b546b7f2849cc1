"""Chassis: the rigid body that MuJoCo simulates (mass, centre of mass, inertia, body shape)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .params import freeze_arrays, param, validate_fields


@dataclass(frozen=True)
class ChassisParams:
    """Chassis rigid-body data, chassis frame (x forward, y left, z up; origin at ground level
    below the body centre in the presets)."""

    mass: float = param(unit="kg", lo=0.0, hi=1e6, lo_open=True, shape="scalar",
                        doc="rigid-body mass (= sum of sprung masses)")
    com: np.ndarray = param(unit="m", lo=-50, hi=50, shape="vec3", doc="centre of mass")
    inertia: np.ndarray = param(unit="kg m^2", lo=0.0, hi=1e9, lo_open=True, shape="vec3",
                                doc="principal moments about x, y, z through the CoM")
    body_size: np.ndarray = param(unit="m", lo=0.0, hi=100, lo_open=True, shape="vec3",
                                  doc="collision box full length, width, height")
    body_centre: np.ndarray = param(unit="m", lo=-50, hi=50, shape="vec3",
                                    doc="collision box centre")
    body_shape: str = param("box", shape="choice", choices=("box", "hull"),
                            doc="collision shape: the box, or a convex hull tapered inside it")

    def __post_init__(self):
        freeze_arrays(self)

    def validate(self, prefix: str = "chassis.", where: str = "") -> None:
        """Raise VehicleConfigError naming the first field out of range."""
        validate_fields(self, prefix, where)


def hull_vertices(p: ChassisParams) -> np.ndarray:
    """Eight corners (chassis frame, m) of the ``hull`` shape: the box's full footprint at the
    bottom, 85% of its width and 70% of its length at the top (a cab-over silhouette, so a
    rolled vehicle rests on a sloped roof line instead of a box edge)."""
    length, width, height = p.body_size
    bottom = [(sx * length / 2, sy * width / 2, -height / 2) for sx in (-1, 1) for sy in (-1, 1)]
    top = [(sx * 0.35 * length - 0.1 * length, sy * 0.425 * width, height / 2)
           for sx in (-1, 1) for sy in (-1, 1)]
    return np.array(bottom + top) + p.body_centre


def box_inertia(mass: float, size) -> np.ndarray:
    """Principal inertia of a solid box of full dimensions (L, W, H) (kg m^2), the PhysX
    starting guess ``((W^2+H^2), (L^2+H^2), (L^2+W^2)) * M / 12`` in x-forward/z-up axes."""
    length, width, height = size
    return mass / 12.0 * np.array([width**2 + height**2, length**2 + height**2,
                                   length**2 + width**2])
