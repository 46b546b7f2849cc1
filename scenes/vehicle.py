"""Adds a vehicle (chassis rigid body, ray sites and sensors, visual wheels) to an MjSpec."""

from __future__ import annotations

import mujoco
import numpy as np

from traction.vehicle_model import VehicleParams, footprint
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


#: The chase camera's bearing from straight behind, toward the vehicle's right (deg)
CHASE_SIDE_DEG = 30.0


def _look_at(eye: np.ndarray, target: np.ndarray) -> np.ndarray:
    """A camera's ``xyaxes`` (its right and up directions) looking from ``eye`` at ``target``
    with the world's z up (MuJoCo's cameras look along their -z)."""
    forward = (np.asarray(target, float) - eye) / np.linalg.norm(np.asarray(target, float) - eye)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    return np.concatenate([right, np.cross(right, forward)])


#: Geom group of collision shapes (hidden by default in MuJoCo's viewer and renderer).
COLLISION_GROUP = 3

#: Convex slabs the chassis collision solid is cut into, along its length, on height-field ground.
#: MuJoCo tests a convex geom against every triangle prism under the geom's bounding box whose
#: top reaches the box's lowest point; on a slope that is most of them for one long chassis and
#: far fewer for three short slabs of the same solid. Climb truck, bare MuJoCo substeps/s along
#: the scripted drive: 1 slab 23,000; 2 slabs 43,000; 3 slabs 45,000-49,000; 4-6 slabs 44,000-49,000.
HFIELD_SLABS = 3


def slabs(vertices: np.ndarray, n: int) -> list[np.ndarray]:
    """The convex solid spanned by ``vertices`` (k x 3) cut by ``n - 1`` planes ``x = const``
    into ``n`` slabs of equal length: each slab's points (its corners, and maybe a few interior
    points, which a convex hull drops). A slab is the hull of the solid's points inside it and
    of every segment between two points crossing one of its cut planes, so together the slabs
    are the same solid."""
    vertices = np.asarray(vertices, dtype=float)
    cuts = np.linspace(vertices[:, 0].min(), vertices[:, 0].max(), n + 1)
    points = [vertices]
    for x in cuts[1:-1]:
        for i, a in enumerate(vertices):
            for b in vertices[i + 1:]:
                if (a[0] - x) * (b[0] - x) < 0.0:
                    points.append(a + (x - a[0]) / (b[0] - a[0]) * (b - a))
    points = np.vstack(points)
    tol = 1e-9 * (cuts[-1] - cuts[0])
    return [points[(points[:, 0] >= lo - tol) & (points[:, 0] <= hi + tol)]
            for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)]


def _add_collision(spec: mujoco.MjSpec, body, p: VehicleParams, n_slabs: int) -> None:
    """The chassis collision solid (box or hull) as ``n_slabs`` convex geoms: boxes for the box,
    meshes for the hull."""
    ch = p.chassis
    corners = (hull_vertices(ch) if ch.body_shape == "hull" else
               ch.body_centre + ch.body_size / 2 * np.array(
                   [(sx, sy, sz) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]))
    # priority: the contact takes the chassis's solref, not a mix with the other geom's
    common = dict(density=0, group=COLLISION_GROUP, rgba=[0.8, 0.2, 0.2, 0.5], priority=1,
                  solref=[float(ch.collision_time), 1.0])
    for i, points in enumerate(slabs(corners, n_slabs)):
        if ch.body_shape == "hull":
            mesh = spec.add_mesh(name=names.chassis_hull_mesh(i))
            mesh.uservert = points.ravel().tolist()
            body.add_geom(name=names.chassis_collision(i), type=mujoco.mjtGeom.mjGEOM_MESH,
                          meshname=names.chassis_hull_mesh(i), **common)
        else:
            lo, hi = points.min(axis=0), points.max(axis=0)
            body.add_geom(name=names.chassis_collision(i), type=mujoco.mjtGeom.mjGEOM_BOX,
                          size=((hi - lo) / 2).tolist(), pos=((hi + lo) / 2).tolist(), **common)


def _add_body_visuals(body, p: VehicleParams) -> None:
    """Contact-free body panels: a narrow lower body between the wheels, a full-width upper body
    above the tyres, and a cabin; all on the chassis body, so the wheel rays ignore them."""
    ch, wh, sus = p.chassis, p.wheels, p.suspension
    length, width, height = ch.body_size
    bottom = ch.body_centre[2] - height / 2
    top = ch.body_centre[2] + height / 2
    tyre_top = float(np.max(sus.position[:, 2] + wh.radius))
    inner = float(np.min(np.abs(sus.position[:, 1]) - wh.width / 2)) - 0.03
    lower_top = min(max(min(tyre_top, top - 0.05), bottom), top)   # the split, within the body
    panels = [
        (names.CHASSIS_VISUAL + "_lower", [length, 2 * max(inner, 0.1), lower_top - bottom],
         [ch.body_centre[0], ch.body_centre[1], (bottom + lower_top) / 2], [0.15, 0.35, 0.7, 1]),
        (names.CHASSIS_VISUAL + "_upper", [length, width, top - lower_top],
         [ch.body_centre[0], ch.body_centre[1], (lower_top + top) / 2], [0.15, 0.35, 0.7, 1]),
        (names.CHASSIS_CABIN, [0.45 * length, 0.9 * width, 0.6 * height],
         [ch.body_centre[0] - 0.1 * length, ch.body_centre[1], top + 0.3 * height],
         [0.6, 0.75, 0.9, 1]),
    ]
    # Which end is the front, from any camera: a yellow band across the front of the top
    # (from above a box looks the same both ways), headlights and tail lights on the end faces.
    front, back = ch.body_centre[0] + length / 2, ch.body_centre[0] - length / 2
    band = min(0.12 * length, 0.6)
    panels.append((names.CHASSIS_FRONT, [band, 0.9 * width, 0.02],
                   [front - band / 2 - 0.02 * length, ch.body_centre[1], top + 0.01],
                   [1.0, 0.8, 0.1, 1]))
    lamp = [0.02, 0.18 * width, max(0.06, 0.12 * height)]
    for i, side in enumerate((-1, 1)):
        y = ch.body_centre[1] + side * 0.3 * width
        z = top - lamp[2] / 2 - 0.03
        panels.append((names.headlight(i), lamp, [front + 0.01, y, z], [1.0, 1.0, 0.75, 1]))
        panels.append((names.taillight(i), lamp, [back - 0.01, y, z], [0.85, 0.05, 0.05, 1]))
    for name, size, pos, rgba in panels:
        if size[2] < 1e-3:                             # a body entirely above the tyres (or
            continue                                   # under 5 cm tall) has one panel
        body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_BOX, size=(np.array(size) / 2).tolist(),
                      pos=[float(x) for x in pos], density=0, contype=0, conaffinity=0, rgba=rgba)


def add_vehicle(spec: mujoco.MjSpec, p: VehicleParams, pos, quat=(1.0, 0.0, 0.0, 0.0),
                n_slabs: int = 1, footprint_sensors: bool = True) -> None:
    """Add the vehicle ``p`` to ``spec`` with its chassis frame at ``pos``/``quat`` (world).

    The chassis is one free body with the vehicle's mass, CoM and inertia and its collision
    solid (``body_shape``) as ``n_slabs`` convex geoms (:func:`slabs`). Wheels are not bodies:
    MuJoCo's rangefinder ignores only geoms of the body that carries its site, so the visual
    tyres are contact-free geoms of the chassis body, posed at render time.

    Each wheel gets one rangefinder down its suspension line, or with ``contact.model =
    "footprint"`` and ``footprint_sensors`` one per footprint ray (``vehicle_model.footprint``;
    without ``footprint_sensors`` the scene casts the others itself: ``Terrain.footprint``).
    """
    ch = p.chassis
    body = spec.worldbody.add_body(name=names.CHASSIS_BODY, pos=list(pos), quat=list(quat))
    body.add_freejoint(name=names.CHASSIS_JOINT)
    body.explicitinertial = True
    body.mass = float(ch.mass)
    body.ipos = ch.com.tolist()
    body.inertia = ch.inertia.tolist()
    _add_collision(spec, body, p, n_slabs)
    _add_body_visuals(body, p)
    sus, wh = p.suspension, p.wheels
    starts = sus.ray_start(wh.radius)
    axle = _quat_z_to([0.0, 1.0, 0.0])
    for i in range(p.n_wheels):
        rays = [(None, starts[i])]                   # one ray, or the footprint's (in order)
        if p.contact.model == "footprint" and footprint_sensors:
            forward = footprint.forward_axis(sus.travel_direction[i])
            rays = [(j, starts[i] + x * forward) for j, x in enumerate(footprint.ray_offsets(
                p.contact.rays, p.contact.half_arc, float(wh.radius[i])))]
        for j, start in rays:
            body.add_site(name=names.wheel_ray_site(i, j), pos=start.tolist(),
                          quat=_quat_z_to(sus.travel_direction[i]).tolist(), size=[0.02, 0, 0])
            spec.add_sensor(name=names.wheel_ray_sensor(i, j),
                            type=mujoco.mjtSensor.mjSENS_RANGEFINDER,
                            objtype=mujoco.mjtObj.mjOBJ_SITE, objname=names.wheel_ray_site(i, j),
                            intprm=[_RAY_FIELDS, 0, 0])
        body.add_geom(name=names.wheel_visual(i), type=mujoco.mjtGeom.mjGEOM_CYLINDER,
                      size=[float(wh.radius[i]), float(wh.width[i]) / 2, 0],
                      pos=sus.position[i].tolist(), quat=axle.tolist(), density=0, contype=0,
                      conaffinity=0, rgba=[0.1, 0.1, 0.1, 1.0])
    length, _, height = ch.body_size
    # Behind and to the right (CHASE_SIDE_DEG off the axis), looking at the body: straight
    # from behind, a body as wide as its track hides the wheels (the 6x6 truck's).
    back, side = 1.2 * length + 4.0, np.radians(CHASE_SIDE_DEG)
    chase = np.array([-back * np.cos(side), -back * np.sin(side), 0.6 * length + 1.5])
    body.add_camera(name=names.CAMERA_CHASE, mode=mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM,
                    pos=chase.tolist(), xyaxes=_look_at(chase, ch.body_centre).tolist())
    body.add_camera(name=names.CAMERA_TOP, mode=mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM,
                    pos=[0.0, 0.0, 4.0 * length + 10.0], xyaxes=[1, 0, 0, 0, 1, 0])
    body.add_camera(name=names.CAMERA_DRIVER, pos=[0.1 * length, 0.25 * ch.body_size[1],
                                                    ch.body_centre[2] + 0.6 * height],
                    xyaxes=[0, -1, 0, 0.1, 0, 1], fovy=75)
    # Straight down from above the body, fixed to it: the vehicle always points up the image
    # and the world turns under it (the egocentric map view of CarRacing; an agent reads a
    # direction relative to the vehicle off it directly). 2 x length + 8 m up: the default
    # 45 deg field spans ~1.7 x length + 7 m of ground, the vehicle and the ground around it.
    body.add_camera(name=names.CAMERA_OVERHEAD, pos=[float(ch.body_centre[0]), 0.0,
                                                     2.0 * length + 8.0],
                    xyaxes=[0, -1, 0, 1, 0, 0])
