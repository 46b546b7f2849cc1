"""What an agent observes besides the task's state vector: camera pixels and a lidar scan.

Every task takes ``obs_mode`` (and ``obs_options``, checked by name):

===================  ===========================================================================
``obs_mode``         observation
===================  ===========================================================================
``"state"``          the task's state vector (a ``Box``; the default, as before)
``"pixels"``         a camera image, ``Box(0, 255, (height, width, 3), uint8)``
``"state+pixels"``   ``Dict(state=..., pixels=...)``
``"state+lidar"``    ``Dict(state=..., lidar=Box(0, range, (beams * planes,), float32))``, with
                     ``lidar_heights`` also ``heights``: each hit's height relative to the sensor
===================  ===========================================================================

``obs_options`` (defaults in :data:`OPTIONS`): ``width``, ``height`` (px) and ``camera`` (a
scene camera: ``overhead``, fixed to the vehicle, which points up the image, or ``chase``,
``top`` or ``driver``) of the image; ``beams`` per plane, ``fov_deg``
(the fan's horizontal width, centred ahead; 360: all round), ``vertical_deg`` (one plane per
angle above the horizontal of the chassis, negative down), ``range`` (m) and ``lidar_heights``
of the scan. Frame stacking is Gymnasium's (``gymnasium.wrappers.FrameStackObservation``).

The camera draws with :class:`~traction.scenes.render.ObservationCamera` (no shadows, a coarse
terrain mesh, the task's markers: a software OpenGL draws an 84 x 84 frame in 0.5-1 ms). The
scan casts its beams (fixed to the chassis) from the sensor mount (on the roof, above the
chassis centre) with ``mj_multiRay`` (MuJoCo's batched ray query, in C), excluding the
vehicle's own body (every vehicle geom, tyres included, is on it); on a heightfield ground the
beams meet the terrain grid in compiled code instead (:class:`Lidar` says why). A beam that
meets nothing within ``range`` reads ``range`` (and, in ``heights``, the height of its end).

Both are read from MuJoCo's state after the step (or the reset), so a restored snapshot gives
the same pixels and distances, and the native vector env's equal the single env's. A diverged
step repeats the episode's last sensor readings, as it repeats the last state vector. The
Gaussian ``observation_noise`` of domain randomisation perturbs the state vector only.
"""

from __future__ import annotations

import math

import gymnasium as gym
import mujoco
import numpy as np

from traction.scenes import names
from traction.scenes.heightfield import rays_grid
from traction.scenes.terrain import TERRAIN_GROUP
from traction.vehicle_model.params import check_number

#: ``obs_mode`` values, and the parts each observation holds
MODES = {"state": ("state",), "pixels": ("pixels",), "state+pixels": ("state", "pixels"),
         "state+lidar": ("state", "lidar")}
#: ``obs_options`` keys and defaults
OPTIONS = {"width": 84, "height": 84, "camera": names.CAMERA_OVERHEAD,
           "beams": 32, "fov_deg": 360.0, "vertical_deg": (-10.0, 0.0), "range": 30.0,
           "lidar_heights": False}
PIXEL_OPTIONS = ("width", "height", "camera")
LIDAR_OPTIONS = ("beams", "fov_deg", "vertical_deg", "range", "lidar_heights")
#: the lidar's mount above the chassis body's top (m)
MOUNT_CLEARANCE = 0.1


def check_options(mode: str, options: dict | None) -> dict:
    """The options ``mode`` uses, ``options`` completed with the defaults (``{}`` for
    ``"state"``); ValueError naming an unknown mode, an unknown key, a key the mode does not
    use, or a value out of range."""
    if mode not in MODES:
        raise ValueError(f"obs_mode = {mode!r}; allowed: {', '.join(MODES)}")
    options = dict(options or {})
    unknown = sorted(set(options) - set(OPTIONS), key=str)
    if unknown:
        raise ValueError(f"obs_options {unknown} unknown; allowed: {', '.join(OPTIONS)}")
    used = (PIXEL_OPTIONS if "pixels" in MODES[mode] else ()) + (
        LIDAR_OPTIONS if "lidar" in MODES[mode] else ())
    unused = sorted(set(options) - set(used))
    if unused:
        raise ValueError(f"obs_options {unused} are not used by obs_mode = {mode!r} (it uses "
                         f"{', '.join(used) or 'none'})")
    out = {**OPTIONS, **options}
    check_number("obs_options width", out["width"], 8, 1280, integer=True, unit="px")
    check_number("obs_options height", out["height"], 8, 720, integer=True, unit="px")
    if out["camera"] not in names.CAMERAS:
        raise ValueError(f"obs_options camera = {out['camera']!r}; allowed: "
                         f"{', '.join(names.CAMERAS)}")
    check_number("obs_options beams", out["beams"], 1, 4096, integer=True)
    check_number("obs_options fov_deg", out["fov_deg"], 1.0, 360.0, unit="deg")
    vertical = out["vertical_deg"]
    if np.ndim(vertical) == 0:
        vertical = (vertical,)
    if len(vertical) == 0:
        raise ValueError("obs_options vertical_deg: give at least one angle")
    out["vertical_deg"] = tuple(check_number("obs_options vertical_deg", v, -89.0, 89.0,
                                             unit="deg") for v in vertical)
    check_number("obs_options range", out["range"], 0.1, 1000.0, unit="m")
    if not isinstance(out["lidar_heights"], bool):
        raise ValueError(f"obs_options lidar_heights = {out['lidar_heights']!r}; allowed: "
                         "True or False")
    return {key: out[key] for key in used}


def beam_directions(beams: int, fov_deg: float, vertical_deg) -> np.ndarray:
    """Unit beam directions in the chassis frame (x forward, y left, z up), ``(planes * beams,
    3)``: plane by plane (in ``vertical_deg`` order), each fan from right to left. A full circle
    starts straight behind (so beam ``beams // 2`` points ahead); a narrower fan spans
    ``fov_deg`` centred ahead, its ends included."""
    if fov_deg >= 360.0:
        azimuth = -math.pi + 2 * math.pi * np.arange(beams) / beams
    elif beams == 1:
        azimuth = np.zeros(1)
    else:
        half = math.radians(fov_deg) / 2
        azimuth = np.linspace(-half, half, beams)
    out = []
    for elevation in np.radians(vertical_deg):
        c = math.cos(elevation)
        out.append(np.stack([c * np.cos(azimuth), c * np.sin(azimuth),
                             np.full(beams, math.sin(elevation))], axis=1))
    return np.concatenate(out)


class Lidar:
    """A scan of ``beams`` x planes ranges from a mount on the chassis (see the module
    docstring). :meth:`read` returns float32 distances (m), and hit heights with ``heights``.

    ``scene``: the scene, when its ground is a heightfield (its terrain's ``grid`` is read at
    every scan: a reset regenerates it, ``set_state`` restores another). The beams then meet
    the heightfield on the grid in compiled code (``heightfield.ray_grid``: the cells a ray
    crosses) and everything else through ``mj_multiRay`` over every geom group but the
    terrain's. MuJoCo's own query tests every cell of the rectangle a ray spans: on Climb6x6's
    0.25 m grid, 2 x 32 beams of 30 m cost 6 ms a step, 20 times the state env's whole step.
    """

    def __init__(self, model: mujoco.MjModel, mount: np.ndarray, beams: int, fov_deg: float,
                 vertical_deg, range_m: float, heights: bool = False, scene=None):
        self.model = model
        ground = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, names.GROUND)
        on_grid = (scene is not None and scene.terrain.grid is not None and ground >= 0
                   and model.geom_type[ground] == mujoco.mjtGeom.mjGEOM_HFIELD)
        self.scene = scene if on_grid else None
        self._groups = None
        if on_grid:
            if list(np.flatnonzero(model.geom_group == TERRAIN_GROUP)) != [ground]:
                raise ValueError(f"lidar: geom group {TERRAIN_GROUP} must hold the heightfield "
                                 "ground alone (its rays are cast on the terrain grid)")
            self._groups = np.ones(mujoco.mjNGROUP, np.uint8)
            self._groups[TERRAIN_GROUP] = 0
        self._grid, self._top = None, 0.0
        self._grid_dist = np.zeros(0)
        self.body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, names.CHASSIS_BODY)
        self.mount = np.asarray(mount, float)
        self.local = beam_directions(beams, fov_deg, vertical_deg)
        self.n = len(self.local)
        self.range = float(range_m)
        self.heights = heights
        self._vec = np.zeros(3 * self.n)
        self._geom = np.zeros(self.n, np.int32)
        self._dist = np.zeros(self.n)

    def read(self, data: mujoco.MjData) -> dict[str, np.ndarray]:
        rot = data.xmat[self.body].reshape(3, 3)
        origin = data.xpos[self.body] + rot @ self.mount
        directions = self.local @ rot.T                          # (world)
        self._vec[:] = directions.ravel()
        mujoco.mj_multiRay(self.model, data, origin, self._vec, self._groups, 1, self.body,
                           self._geom, self._dist, None, self.n, self.range)
        dist = self._dist
        dist[(self._geom < 0) | (dist > self.range)] = self.range
        if self.scene is not None:
            grid = self.scene.terrain.grid
            if self._grid is not grid:                  # a new terrain: its highest point
                self._grid, self._top = grid, float(grid.heights.max())
                self._grid_dist = np.zeros(self.n)
            rays_grid(grid.heights, grid.x0, grid.y0, grid.cell, self._top, origin, directions,
                      self.range, self._grid_dist)
            hit = self._grid_dist >= 0.0
            dist[hit] = np.minimum(dist[hit], self._grid_dist[hit])
        out = {"lidar": dist.astype(np.float32)}
        if self.heights:                 # (a beam that meets nothing: its end, at range)
            out["heights"] = (dist * directions[:, 2]).astype(np.float32)
        return out


def mount_point(vehicle) -> np.ndarray:
    """The lidar mount in the chassis frame: above the body's centre, :data:`MOUNT_CLEARANCE`
    over its top (m)."""
    ch = vehicle.chassis
    return np.array([ch.body_centre[0], ch.body_centre[1],
                     ch.body_centre[2] + ch.body_size[2] / 2 + MOUNT_CLEARANCE])


class Sensors:
    """An environment's observation beyond its state vector (``obs_mode``; the module
    docstring): the observation space, the sensors, and the composition of an observation from
    the state vector and the sensors' readings.

    Args:
        scene: the environment's scene (model, spec, vehicle).
        mode, options: ``obs_mode`` and the checked ``obs_options`` (:func:`check_options`).
    """

    def __init__(self, scene, mode: str, options: dict):
        self.mode, self.options = mode, options
        self.parts = MODES[mode]
        self.scene = scene
        self.camera = None                     # made at the first frame (a GL context)
        self.lidar = None
        if "lidar" in self.parts:
            o = options
            self.lidar = Lidar(scene.model, mount_point(scene.vehicle), o["beams"], o["fov_deg"],
                               o["vertical_deg"], o["range"], o["lidar_heights"], scene)
        self.last: dict[str, np.ndarray] | None = None

    @property
    def state_only(self) -> bool:
        return self.parts == ("state",)

    @property
    def camera_on(self) -> bool:
        return "pixels" in self.parts

    def space(self, state_space: gym.spaces.Box) -> gym.spaces.Space:
        """The observation space, given the task's state space."""
        if self.state_only:
            return state_space
        o, spaces = self.options, {}
        for part in self.parts:
            if part == "state":
                spaces["state"] = state_space
            elif part == "pixels":
                spaces["pixels"] = gym.spaces.Box(0, 255, (o["height"], o["width"], 3), np.uint8)
            else:
                n = self.lidar.n
                spaces["lidar"] = gym.spaces.Box(0.0, o["range"], (n,), np.float32)
                if o["lidar_heights"]:
                    spaces["heights"] = gym.spaces.Box(-o["range"], o["range"], (n,), np.float32)
        if self.parts == ("pixels",):
            return spaces["pixels"]
        return gym.spaces.Dict(spaces)

    def read(self, data: mujoco.MjData, diverged: bool = False,
             markers=None) -> dict[str, np.ndarray]:
        """The sensors' readings now (a diverged state: the last readings again, zeros before
        any); ``markers``: a callable giving the task's markers (its target, goal or pad: what
        an agent seeing only pixels must see), drawn into the image."""
        if diverged:
            if self.last is None:
                return self.zeros()
            return {k: v.copy() for k, v in self.last.items()}
        out = {}
        if "pixels" in self.parts:
            if self.camera is None:
                from traction.scenes.render import ObservationCamera

                o = self.options
                self.camera = ObservationCamera(self.scene.model, self.scene.spec, o["width"],
                                                o["height"], o["camera"])
            out["pixels"] = self.camera.frame(data, markers=markers() if markers else ())
        if self.lidar is not None:
            out.update(self.lidar.read(data))
        self.last = out
        return {k: v.copy() for k, v in out.items()}

    def zeros(self) -> dict[str, np.ndarray]:
        o = self.options
        out = {}
        if "pixels" in self.parts:
            out["pixels"] = np.zeros((o["height"], o["width"], 3), np.uint8)
        if self.lidar is not None:
            out["lidar"] = np.zeros(self.lidar.n, np.float32)
            if self.lidar.heights:
                out["heights"] = np.zeros(self.lidar.n, np.float32)
        return out

    def compose(self, state: np.ndarray, readings: dict[str, np.ndarray]):
        """The observation of ``state`` (the clipped state vector) and sensor ``readings``."""
        if self.parts == ("pixels",):
            return readings["pixels"]
        return {"state": state, **readings} if "state" in self.parts else dict(readings)

    def close(self) -> None:
        if self.camera is not None:
            self.camera.close()
            self.camera = None


def write_row(buffer, i: int, obs) -> None:
    """Put one world's observation ``obs`` into row ``i`` of a batched ``buffer`` (an array, or
    a dict of arrays as ``gymnasium.vector.utils.create_empty_array`` makes for a ``Dict``)."""
    if isinstance(buffer, dict):
        for key, value in obs.items():
            buffer[key][i] = value
    else:
        buffer[i] = obs


def read_row(buffer, i: int):
    """A copy of row ``i`` of a batched ``buffer`` (see :func:`write_row`)."""
    if isinstance(buffer, dict):
        return {key: value[i].copy() for key, value in buffer.items()}
    return buffer[i].copy()


def copy_buffer(buffer):
    """A copy of a batched ``buffer``."""
    if isinstance(buffer, dict):
        return {key: value.copy() for key, value in buffer.items()}
    return buffer.copy()
