"""Traction/Climb6x6-v0: drive a six-wheel-drive truck up rough terrain to the summit."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np

from traction.scenes.terrain import spawn_on_grid
from traction.vehicle_model import Commands, VehicleParams, load_vehicle

from .base import OBS_LIMIT, TractionEnv

HEIGHTMAP_AHEAD = np.arange(8) * 1.5            # m ahead of the chassis origin
HEIGHTMAP_SIDE = np.arange(-2, 3) * 1.0         # m to the left
_AHEAD, _SIDE = np.meshgrid(HEIGHTMAP_AHEAD, HEIGHTMAP_SIDE, indexing="ij")
TERRAINS = {"rough_hill": {}, "crest": {"incline_deg": 5.0}, "slope": {"angle_deg": 12.0,
                                                                      "roughness": 0.03}}


class Climb6x6Env(TractionEnv):
    r"""
    ## Description
    A 6 t six-wheel-drive truck (`truck_6x6`: engine, 5-speed autobox, front four wheels steer)
    must climb a procedurally generated rough hill - fractal roughness, rocks, ditches, mud and
    gravel patches - to the summit plateau. Terrain and start pose are regenerated from the
    environment's RNG at every reset. The torque-vectoring differential (default) sends torque to
    the wheels that carry load; `differential="equal"` splits it equally, which strands the truck
    when a wheel hangs in the air (see the `crest` terrain).

    ## Action Space
    `Box(-1, 1, (2,), float32)` with `action_mode="pedals"`; `(8,)` with `"wheel_torques"`.
    Out-of-range values are clipped; NaN/inf raise `ValueError` naming the channel.

    | index | name | meaning | min | max | unit |
    |---|---|---|---|---|---|
    | 0 | drive | > 0 throttle; < 0 brake, or reverse throttle once below 0.5 m/s | -1 | 1 | - |
    | 1 | steer | steering command, positive turns left (max angle 0.55 rad) | -1 | 1 | - |
    | 2-7 | wheel_share | `wheel_torques` only: share of drive torque per wheel FL, FR, ML, MR, RL, RR, mapped to `(a + 1) / 2` and normalised | -1 | 1 | - |

    ## Observation Space
    `Box(-1000, 1000, (90,), float64)` (values clipped to it); frames: *body* = chassis frame (x forward, y left, z up).

    | index | observation | unit | frame |
    |---|---|---|---|
    | 0-2 | CoM linear velocity | m/s | body |
    | 3-5 | angular velocity | rad/s | body |
    | 6-8 | gravity direction (unit vector) | - | body |
    | 9-11 | vector from CoM to the goal | m | body |
    | 12-17 | suspension jounce per wheel | m | - |
    | 18-23 | wheel spin per wheel | rad/s | - |
    | 24-29 | wheel contact flag | 0/1 | - |
    | 30-35 | longitudinal slip | - | - |
    | 36-41 | lateral slip angle | rad | - |
    | 42-47 | normalised tyre load (load / rest load) | - | - |
    | 48 | engine speed / max engine speed | - | - |
    | 49 | gear (-1 reverse, 0 neutral, 1-5) | - | - |
    | 50-89 | terrain height minus chassis-origin height on a 8 x 5 grid ahead (0-10.5 m ahead, -2..2 m left), row-major by distance ahead | m | heading frame (yaw only) |

    ## Rewards
    `reward = progress + energy + slip + success + rollover`, each in `info["reward_<term>"]`:

    | term | value | weight argument (default) |
    |---|---|---|
    | progress | decrease of horizontal distance to the goal this step (m) | `progress_weight` (1.0) |
    | energy | -(drive command)^2 x control_dt | `energy_weight` (0.05) |
    | slip | -mean \|longitudinal slip\| of wheels in contact x control_dt | `slip_weight` (0.5) |
    | success | +1 on reaching the goal | `success_bonus` (10.0) |
    | rollover | -1 when the truck rolls over | `rollover_penalty` (10.0) |

    ## Starting State
    At rest near the foot of the course, heading +x with yaw uniform in +-15 deg and lateral
    offset uniform in +-3 m (rough_hill, slope); on `crest`, straddling the first ditch. Options:
    `reset(options={"terrain_seed": int, "spawn": (x, y, yaw)})` fix the terrain and pose.

    ## Episode End
    - Termination: success (horizontal distance to the goal < `goal_radius`) or rollover (up
      axis tilted more than 70 deg).
    - Truncation: the time limit (`max_episode_steps=1500`, 60 s) or a diverged simulation
      (`info["diverged"] = True`).

    ## Arguments
    | argument | default | meaning |
    |---|---|---|
    | `terrain` | `"rough_hill"` | `"rough_hill"`, `"crest"` or `"slope"` |
    | `difficulty` | 0.5 | rough_hill difficulty in [0, 1] (slope, roughness, rocks, ditches) |
    | `differential` | `"torque_vectoring"` | or `"equal"` (equal split over the six wheels) |
    | `action_mode` | `"pedals"` | or `"wheel_torques"` |
    | `control_dt` | 0.04 | s per `step` (25 Hz) |
    | `physics_dt` | 0.004 | s per physics substep: spring alpha = sqrt(m/k)/dt ~ 31 (> 5), tyre/wheel coupling rate x dt ~ 0.4 (< 2) |
    | `goal_radius` | 6.0 | m |
    | `vehicle` | `"truck_6x6"` | preset name, TOML path or `VehicleParams` (six wheels for `wheel_torques`) |
    | weights | see Rewards | |
    | `render_mode`, `width`, `height` | None, 640, 480 | `"rgb_array"` or `"human"` |

    ## Version History
    - v0: initial release.
    """

    reward_names = ("progress", "energy", "slip", "success", "rollover")
    task_state = ("_drive", "_prev_dist")

    def __init__(self, terrain: str = "rough_hill", difficulty: float = 0.5,
                 differential: str = "torque_vectoring", action_mode: str = "pedals",
                 control_dt: float = 0.04, physics_dt: float = 0.004, goal_radius: float = 6.0,
                 progress_weight: float = 1.0, energy_weight: float = 0.05,
                 slip_weight: float = 0.5, success_bonus: float = 10.0,
                 rollover_penalty: float = 10.0, vehicle: str | VehicleParams = "truck_6x6",
                 render_mode: str | None = None, width: int = 640, height: int = 480):
        if terrain not in TERRAINS:
            raise ValueError(f"terrain = {terrain!r}; allowed: {', '.join(TERRAINS)}")
        if differential not in ("torque_vectoring", "equal"):
            raise ValueError(f"differential = {differential!r}; allowed: torque_vectoring, equal")
        if action_mode not in ("pedals", "wheel_torques"):
            raise ValueError(f"action_mode = {action_mode!r}; allowed: pedals, wheel_torques")
        p = vehicle if isinstance(vehicle, VehicleParams) else load_vehicle(vehicle)
        kind = "torque_vectoring" if differential == "torque_vectoring" else "multi_wheel"
        p = dataclasses.replace(p, differential=dataclasses.replace(p.differential, type=kind))
        self.action_names = ("drive", "steer") + (
            tuple(f"wheel_share_{n}" for n in p.wheel_names) if action_mode == "wheel_torques"
            else ())
        kwargs = dict(TERRAINS[terrain])
        if terrain == "rough_hill":
            kwargs["difficulty"] = difficulty
        super().__init__(p, terrain, kwargs, control_dt, physics_dt, render_mode, width, height)
        self.terrain_name, self.action_mode = terrain, action_mode
        self.goal_radius = goal_radius
        self.weights = {"progress": progress_weight, "energy": energy_weight,
                        "slip": slip_weight, "success": success_bonus,
                        "rollover": rollover_penalty}
        self.observation_space = gym.spaces.Box(-OBS_LIMIT, OBS_LIMIT, (90,), np.float64)
        self._drive = 0.0

    # --- task --------------------------------------------------------------------------------
    def _goal(self) -> np.ndarray:
        t = self.scene.terrain
        if t.goal is not None:
            return t.goal
        if self.terrain_name == "crest":
            x = t.knobs["count"] * t.knobs["spacing"]
        else:
            x = 40.0
        return np.array([x, 0.0, float(t.grid.height_at(x, 0.0))])

    def _reset_task(self, options: dict) -> None:
        t = self.scene.terrain
        if "spawn" in options:
            x, y, yaw = options["spawn"]
            pos, quat = spawn_on_grid(t.grid, self.vehicle, x, y, yaw)
        elif self.terrain_name == "crest":
            pos, quat = t.spawn_pos, t.spawn_quat
        else:
            x = float(t.spawn_pos[0])
            y = float(self.np_random.uniform(-3.0, 3.0))
            yaw = float(self.np_random.uniform(-0.26, 0.26))
            pos, quat = spawn_on_grid(t.grid, self.vehicle, x, y, yaw)
        self.sim.reset(pos=pos, quat=quat)
        self._drive = 0.0
        self._prev_dist = self._goal_distance()

    def _goal_distance(self) -> float:
        return float(np.linalg.norm((self._goal() - self.sim.com_position())[:2]))

    def _apply_action(self, a: np.ndarray) -> None:
        self._drive = float(a[0])
        cmd = {"steer": a[1], "throttle": max(a[0], 0.0), "brake": max(-a[0], 0.0),
               "target_gear": Commands.NO_GEAR_REQUEST}
        gear = int(self.sim.state.gearbox.target[0])
        speed = self.sim.forward_speed()
        if gear < 0:                                      # reversing: pedal roles swap
            cmd.update(throttle=max(-a[0], 0.0), brake=max(a[0], 0.0))
            if a[0] > 0 and speed > -0.5:
                cmd.update(target_gear=1, brake=0.0, throttle=a[0])
        elif a[0] < 0 and speed < 0.5:                    # stopped and braking: reverse
            cmd.update(throttle=-a[0], brake=0.0, target_gear=-1)
        if self.action_mode == "wheel_torques":
            cmd["torque_split"] = [(a[2:] + 1.0) / 2.0]
        self.sim.set_commands(**cmd)

    def _heightmap(self) -> np.ndarray:
        yaw = self.heading()
        c, s = np.cos(yaw), np.sin(yaw)
        ahead, side = _AHEAD, _SIDE
        origin = self.sim.chassis_position()
        x = origin[0] + c * ahead - s * side
        y = origin[1] + s * ahead + c * side
        return (self.scene.terrain.grid.height_at(x, y) - origin[2]).ravel()

    def _observation(self) -> np.ndarray:
        rot = self.body_rotation()
        lin, ang = self.body_velocity()
        out = self.sim.outputs
        return np.concatenate([
            lin, ang, rot.T @ np.array([0.0, 0.0, -1.0]),
            rot.T @ (self._goal() - self.sim.com_position()),
            out.jounce[0], self.sim.state.omega[0], out.in_contact[0].astype(float),
            out.long_slip[0], out.lat_slip[0], out.normalised_load[0],
            [out.engine_omega[0] / self.vehicle.engine.max_omega, float(out.gear[0])],
            self._heightmap()]).astype(np.float64)

    # reward terms: unweighted values, weights applied in _reward_terms
    def _progress(self) -> float:
        d = self._goal_distance()
        gain, self._prev_dist = self._prev_dist - d, d
        return gain

    def _energy(self) -> float:
        return -(self._drive**2) * self.control_dt

    def _slip(self) -> float:
        out = self.sim.outputs
        touching = out.in_contact[0]
        return -float(np.abs(out.long_slip[0][touching]).mean() if touching.any() else 0.0) \
            * self.control_dt

    def _reward_terms(self) -> dict[str, float]:
        terminated, success = self._termination()
        values = {"progress": self._progress(), "energy": self._energy(), "slip": self._slip(),
                  "success": float(success), "rollover": -float(self._rolled_over())}
        return {k: self.weights[k] * v for k, v in values.items()}

    def _rolled_over(self) -> bool:
        return self.tilt() > np.radians(70.0)

    def _termination(self) -> tuple[bool, bool]:
        success = self._goal_distance() < self.goal_radius
        return bool(success or self._rolled_over()), bool(success)
