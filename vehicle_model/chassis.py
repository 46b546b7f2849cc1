"""Chassis: the rigid body that MuJoCo simulates (mass, centre of mass, inertia, body shape)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .jit import jit
from .layout import Packed
from .params import freeze_arrays, param, validate_fields
from .vec import cross, to_body, to_world


@dataclass(frozen=True)
class ChassisParams:
    """Chassis rigid-body data, chassis frame (x forward, y left, z up; origin at ground level
    below the body centre in the presets)."""

    mass: float = param(unit="kg", lo=0.0, hi=1e6, lo_open=True, shape="scalar",
                        doc="the whole vehicle's mass, wheels included (= sum of sprung masses)")
    com: np.ndarray = param(unit="m", lo=-50, hi=50, shape="vec3", doc="centre of mass")
    inertia: np.ndarray = param(unit="kg m^2", lo=0.0, hi=1e9, lo_open=True, shape="vec3",
                                doc="principal moments about x, y, z through the CoM")
    body_size: np.ndarray = param(unit="m", lo=0.0, hi=100, lo_open=True, shape="vec3",
                                  doc="collision box full length, width, height")
    body_centre: np.ndarray = param(unit="m", lo=-50, hi=50, shape="vec3",
                                    doc="collision box centre")
    body_shape: str = param("box", shape="choice", choices=("box", "hull"),
                            doc="collision shape: the box, or a convex hull tapered inside it")
    collision_time: float = param(0.1, unit="s", lo=0.004, hi=1.0, shape="scalar",
                                  doc="how soft the chassis's collisions are: the time constant "
                                      "of MuJoCo's critically damped contact (solref), the "
                                      "chassis's over the other geom's; 0.1 s stops a car "
                                      "driven into a wall at 2 m/s under 5 g, as a bumper's "
                                      "crush does (MuJoCo's default 0.02 s: 21 g)")

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


@jit
def forces_out(pk: Packed, k, ws, hits, dt, s, out, out_v) -> None:
    """7. Forces out, world frame, with their application points, and the chassis wrench: the
    suspension force along the ground normal at its chassis-frame ``force_point``, the tyre
    forces in the ground plane (as PhysX) at the contact patch, where the tyre touches the hit
    plane (the scratch's ``arm``, step 2's, which moves with jounce and follows the ground), raised by
    ``tire_force_height`` along the normal: at the patch the load transfer is a rigid car's
    (see ``suspension.SuspensionParams.tire_force_height``)."""
    wp = pk.wheel
    wrench = out_v.wrench
    wrench[:] = 0.0
    inv_dt = 1.0 / dt                                 # impulses over the step -> mean forces
    for w in range(wp.shape[0]):
        p = wp[w]
        f_long = s[w].acc_long * inv_dt
        f_lat = s[w].acc_lat * inv_dt
        out[w].long_force, out[w].lat_force = f_long, f_lat
        out[w].drive_torque = s[w].acc_drive * inv_dt
        out[w].aligning_moment = s[w].acc_moment * inv_dt
        out[w].patch_slide[0] = s[w].v_long - ws[w].omega * p.radius
        out[w].patch_slide[1] = s[w].v_lat
        spring = out[w].spring_force            # 0 in the air (whatever the ray's normal)
        for i in range(3):
            out[w].tire_force[i] = s[w].fwd[i] * f_long + s[w].left[i] * f_lat
            out[w].susp_force[i] = hits[w].normal[i] * spring if spring > 0.0 else 0.0
        point = p.force_point
        q0, q1, q2 = to_world(k, point[0], point[1], point[2])
        out[w].susp_point[0] = k.position[0] + q0
        out[w].susp_point[1] = k.position[1] + q1
        out[w].susp_point[2] = k.position[2] + q2
        height = p.tire_force_height            # over the patch (where the tyre meets the hit
        for i in range(3):                         # plane), along its normal
            out[w].tire_point[i] = k.com[i] + s[w].arm[i] + hits[w].normal[i] * height
        for force, point in ((out[w].susp_force, out[w].susp_point),
                             (out[w].tire_force, out[w].tire_point)):
            t = cross(point[0] - k.com[0], point[1] - k.com[1], point[2] - k.com[2],
                      force[0], force[1], force[2])
            for i in range(3):
                wrench[i] += force[i]
                wrench[3 + i] += t[i]
    _pitch_roll_scaling(pk, k, out, out_v)
    for i in range(3):
        wrench[3 + i] += out_v.extra_torque[i]


@jit
def _pitch_roll_scaling(pk: Packed, k, out, out_v) -> None:
    """World torque removing the unwanted share of the tyre forces' pitch and roll moments."""
    vp = pk.vehicle[0]
    out_v.extra_torque[:] = 0.0
    if vp.keep_pitch == 1.0 and vp.keep_roll == 1.0:
        return
    m0, m1, m2 = 0.0, 0.0, 0.0                       # tyre moment about the CoM, world
    for w in range(out.shape[0]):
        t = cross(out[w].tire_point[0] - k.com[0], out[w].tire_point[1] - k.com[1],
                   out[w].tire_point[2] - k.com[2], out[w].tire_force[0],
                   out[w].tire_force[1], out[w].tire_force[2])
        m0, m1, m2 = m0 + t[0], m1 + t[1], m2 + t[2]
    b0, b1, _ = to_body(k, m0, m1, m2)
    e = to_world(k, -(1.0 - vp.keep_roll) * b0, -(1.0 - vp.keep_pitch) * b1, 0.0)
    out_v.extra_torque[0], out_v.extra_torque[1], out_v.extra_torque[2] = e
