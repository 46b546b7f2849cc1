"""Adds a vehicle (chassis rigid body, ray sites and sensors, visual wheels) to an MjSpec."""

from __future__ import annotations

import mujoco
import numpy as np

from traction.vehicle_model import VehicleParams
from traction.vehicle_model.chassis import hull_vertices

from . import names

#: Bit mask of rangefinder data fields (see mjtRayDataField): dist | point | normal.
_RAY_FIELDS = (1 << int(mujoco.mjtRayDataField.mjRAYDATA_DIST)) | (
    1 << int(mujoco.mjtRayDataField.mjRAYDATA_POINT)) | (
    1 << int(mujoco.mjtRayDataField.mjRAYDATA_NORMAL))


def _quat_z_to(v: np.ndarray) -> np.ndarray:
    """Unit quaternion (w, x, y, z) rotating +z onto unit vector ``v``."""
    quat = np.zeros(4)
    mujoco.mju_quatZ2Vec(quat, np.asarray(v, dtype=float))
    return quat


#: Geom group of collision shapes (hidden by default in MuJoCo's viewer and renderer).
COLLISION_GROUP = 3


def _add_body_visuals(body, p: VehicleParams) -> None:
    """Contact-free body panels: a narrow lower body between the wheels, a full-width upper body
    above the tyres, and a cabin; all on the chassis body, so the wheel rays ignore them."""
    ch, wh, sus = p.chassis, p.wheels, p.suspension
    length, width, height = ch.body_size
    bottom = ch.body_centre[2] - height / 2
    top = ch.body_centre[2] + height / 2
    tyre_top = float(np.max(sus.position[:, 2] + wh.radius))
    inner = float(np.min(np.abs(sus.position[:, 1]) - wh.width / 2)) - 0.03
    lower_top = min(tyre_top, top - 0.05)
    panels = [
        (names.CHASSIS_VISUAL + "_lower", [length, 2 * max(inner, 0.1), lower_top - bottom],
         [ch.body_centre[0], ch.body_centre[1], (bottom + lower_top) / 2], [0.15, 0.35, 0.7, 1]),
        (names.CHASSIS_VISUAL + "_upper", [length, width, top - lower_top],
         [ch.body_centre[0], ch.body_centre[1], (lower_top + top) / 2], [0.15, 0.35, 0.7, 1]),
        (names.CHASSIS_CABIN, [0.45 * length, 0.9 * width, 0.6 * height],
         [ch.body_centre[0] - 0.1 * length, ch.body_centre[1], top + 0.3 * height],
         [0.6, 0.75, 0.9, 1]),
    ]
    for name, size, pos, rgba in panels:
        body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_BOX, size=(np.array(size) / 2).tolist(),
                      pos=[float(x) for x in pos], density=0, contype=0, conaffinity=0, rgba=rgba)


def add_vehicle(spec: mujoco.MjSpec, p: VehicleParams, pos, quat=(1.0, 0.0, 0.0, 0.0)) -> None:
    """Add the vehicle ``p`` to ``spec`` with its chassis frame at ``pos``/``quat`` (world).

    The chassis is one free body with the vehicle's mass, CoM and inertia and a box collision
    geom. Wheels are not bodies: MuJoCo's rangefinder ignores only geoms of the body that carries
    its site, so the visual tyres are contact-free geoms of the chassis body, posed at render time.
    """
    ch = p.chassis
    body = spec.worldbody.add_body(name=names.CHASSIS_BODY, pos=list(pos), quat=list(quat))
    body.add_freejoint(name=names.CHASSIS_JOINT)
    body.explicitinertial = True
    body.mass = float(ch.mass)
    body.ipos = ch.com.tolist()
    body.inertia = ch.inertia.tolist()
    if ch.body_shape == "hull":
        mesh = spec.add_mesh(name=names.CHASSIS_HULL_MESH)
        mesh.uservert = hull_vertices(ch).ravel().tolist()
        body.add_geom(name=names.CHASSIS_COLLISION, type=mujoco.mjtGeom.mjGEOM_MESH,
                      meshname=names.CHASSIS_HULL_MESH, density=0, group=COLLISION_GROUP,
                      rgba=[0.8, 0.2, 0.2, 0.5])
    else:
        body.add_geom(name=names.CHASSIS_COLLISION, type=mujoco.mjtGeom.mjGEOM_BOX,
                      size=(ch.body_size / 2).tolist(), pos=ch.body_centre.tolist(), density=0,
                      group=COLLISION_GROUP, rgba=[0.8, 0.2, 0.2, 0.5])
    _add_body_visuals(body, p)
    sus, wh = p.suspension, p.wheels
    starts = sus.ray_start(wh.radius)
    axle = _quat_z_to([0.0, 1.0, 0.0])
    for i in range(p.n_wheels):
        body.add_site(name=names.wheel_ray_site(i), pos=starts[i].tolist(),
                      quat=_quat_z_to(sus.travel_direction[i]).tolist(), size=[0.02, 0, 0])
        spec.add_sensor(name=names.wheel_ray_sensor(i), type=mujoco.mjtSensor.mjSENS_RANGEFINDER,
                        objtype=mujoco.mjtObj.mjOBJ_SITE, objname=names.wheel_ray_site(i),
                        intprm=[_RAY_FIELDS, 0, 0])
        body.add_geom(name=names.wheel_visual(i), type=mujoco.mjtGeom.mjGEOM_CYLINDER,
                      size=[float(wh.radius[i]), float(wh.width[i]) / 2, 0],
                      pos=sus.position[i].tolist(), quat=axle.tolist(), density=0, contype=0,
                      conaffinity=0, rgba=[0.1, 0.1, 0.1, 1.0])
    length, _, height = ch.body_size
    body.add_camera(name=names.CAMERA_CHASE, mode=mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM,
                    pos=[-1.2 * length - 4.0, 0.0, 0.6 * length + 1.5],
                    xyaxes=[0, -1, 0, 0.45, 0, 0.9])
    body.add_camera(name=names.CAMERA_TOP, mode=mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM,
                    pos=[0.0, 0.0, 4.0 * length + 10.0], xyaxes=[1, 0, 0, 0, 1, 0])
    body.add_camera(name=names.CAMERA_DRIVER, pos=[0.1 * length, 0.25 * ch.body_size[1],
                                                    ch.body_centre[2] + 0.6 * height],
                    xyaxes=[0, -1, 0, 0.1, 0, 1], fovy=75)
