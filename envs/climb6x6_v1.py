"""Traction/Climb6x6-v1: drive a six-wheel-drive truck up rough terrain to the summit."""

from __future__ import annotations

import dataclasses
import math

import gymnasium as gym
import numpy as np

from traction.vehicle_model import VehicleParams, vehicle_params
from traction.vehicle_model.params import check_number

from . import actions
from .base import OBS_LIMIT, TractionEnv, finite_weights, positive, positive_setting
from .reading import ChassisReading
from .vector import make_vector

HEIGHTMAP_AHEAD = np.arange(8) * 1.5            # m ahead of the chassis origin
HEIGHTMAP_SIDE = np.arange(-2, 3) * 1.0         # m to the left
_AHEAD, _SIDE = (g.ravel() for g in np.meshgrid(HEIGHTMAP_AHEAD, HEIGHTMAP_SIDE, indexing="ij"))
_WHEEL_OBS = ("in_contact", "long_slip", "lat_slip", "normalised_load")
_ROLLED_OVER = math.radians(70.0)
#: Height-map points beyond the terrain's edge read this far below its lowest point (m): no
#: ground there, a drop deeper than any on the course.
EDGE_DROP = 10.0
TERRAINS = {"rough_hill": {}, "crest": {"incline_deg": 5.0}, "slope": {"angle_deg": 12.0,
                                                                      "roughness": 0.03}}


class Climb6x6Env(TractionEnv):
    r"""
    ## Description
    A 6 t six-wheel-drive truck (`truck_6x6`: engine, 5-speed autobox, front four wheels steer)
    must climb a procedurally generated rough hill - fractal roughness, rocks, ditches, mud and
    gravel patches - to the summit plateau. Terrain and start pose are regenerated from the
    environment's RNG at every reset (`rough_hill`, `slope`; `crest` is one fixed course with a
    fixed start). The torque-vectoring differential (default) sends torque to
    the wheels that carry load; `differential="equal"` splits it equally, which strands the truck
    when a wheel hangs in the air (see the `crest` terrain).

    ## Action Space
    `Box(-1, 1, (2,), float32)` with `action_mode="pedals"`; `(8,)` with `"wheel_torques"`.
    Out-of-range values are clipped; NaN/inf raise `ValueError` naming the channel.

    | index | name | meaning | min | max | unit |
    |---|---|---|---|---|---|
    | 0 | drive | > 0 throttle; < 0 brake, or reverse throttle once below 0.5 m/s; while reversing the roles swap (> 0 brakes until below 0.5 m/s, then first gear). A change into or out of reverse spends the gearbox's switch time (0.4 s) in neutral with the brake released: on a slope the truck rolls meanwhile | -1 | 1 | - |
    | 1 | steer | steering command, positive turns left (max angle 0.55 rad) | -1 | 1 | - |
    | 2-7 | wheel_share | `wheel_torques` only: share of drive torque per wheel FL, FR, ML, MR, RL, RR, mapped to `(a + 1) / 2` and normalised (all 0: an equal split) | -1 | 1 | - |

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
    | 42-47 | normalised tyre load: suspension force / rest load (1 at rest; unfiltered, so at the bump stops it exceeds the load the tyre model uses, `info["tire_load"]`, which the load filter caps at `max_normalised_load` x rest load, 3 by default) | - | - |
    | 48 | engine speed / max engine speed | - | - |
    | 49 | engaged gear (-1 reverse, 0 neutral, 1-5); 0 while a change is in progress (the gearbox's switch time, 0.4 s, in neutral) | - | - |
    | 50-89 | terrain height minus chassis-origin height on a 8 x 5 grid ahead (0-10.5 m ahead, -2..2 m left), row-major by distance ahead; points beyond the terrain's edge read 10 m below its lowest point | m | heading frame (yaw only) |

    With `obs_mode` other than `"state"` the observation also (or instead) holds sensor readings
    (`traction.envs.sensors`): `"pixels"` is `Box(0, 255, (84, 84, 3), uint8)`, the `overhead`
    camera's image (straight down on the vehicle, turning with it; `obs_options` `width`,
    `height`, `camera`); `"state+pixels"` is `Dict(state=<the Box above>, pixels=<the image>)`;
    `"state+lidar"` is `Dict(state=..., lidar=Box(0, 30, (64,), float32))`, the distances (m)
    along 32 beams all round in two planes, 10 deg down and level, from the roof (`obs_options`
    `beams`, `fov_deg`, `vertical_deg`, `range`; `lidar_heights=True` adds `heights`, each hit's
    height relative to the sensor).

    ## Rewards
    `reward = progress + energy + slip + success + rollover + off_terrain`, each in
    `info["reward_<term>"]` (the weight arguments are attributes too, settable between steps:
    `set_attr` on a vector env, `set_wrapper_attr` on one env):

    | term | value | weight argument (default) |
    |---|---|---|
    | progress | decrease of the CoM's horizontal distance to the goal this step (m) | `progress_weight` (1.0) |
    | energy | -(drive command)^2 x control_dt | `energy_weight` (0.05) |
    | slip | -mean \|longitudinal slip\| of wheels in contact x control_dt | `slip_weight` (0.5) |
    | success | +1 on reaching the goal | `success_bonus` (10.0) |
    | rollover | -1 when the truck rolls over | `rollover_penalty` (10.0) |
    | off_terrain | -1 when the CoM leaves the terrain's area (it would fall off the edge) | `off_terrain_penalty` (10.0) |

    ## Starting State
    At rest near the foot of the course, heading +x with yaw uniform in +-15 deg and lateral
    offset uniform in +-3 m (rough_hill, slope); on `crest`, straddling the first ditch. Options:
    `reset(options={"terrain_seed": int, "spawn": (x, y, yaw)})` fix the terrain and pose
    (x, y in m on the terrain, at least the truck's reach, 2.61 m, from its edges; yaw in rad in
    [-2 pi, 2 pi]).

    ## Episode End
    - Termination: success (the CoM's horizontal distance to the goal < `goal_radius`), rollover (up
      axis tilted more than 70 deg) or leaving the terrain (the CoM's horizontal position
      beyond the height field's edge).
    - Truncation: the time limit (`max_episode_steps=1500`: 60 s at the default `control_dt`) or
      a diverged simulation (`info["diverged"] = True`, reward 0, the last observation repeated).

    ## Arguments
    | argument | default | meaning |
    |---|---|---|
    | `terrain` | `"rough_hill"` | `"rough_hill"`, `"crest"` or `"slope"` |
    | `difficulty` | 0.5 | rough_hill difficulty in [0, 1] (slope, roughness, rocks, ditches); other terrains ignore it. Also an attribute: set between episodes (`set_attr` / `set_wrapper_attr`), the next reset's terrain has it (a curriculum) |
    | `differential` | `"torque_vectoring"` | or `"equal"` (equal split over the six wheels) |
    | `action_mode` | `"pedals"` | or `"wheel_torques"` |
    | `control_dt` | 0.04 | s per `step` (25 Hz) |
    | `physics_dt` | 0.004 | s per physics substep: spring alpha = sqrt(m/k)/dt ~ 31 (> 5); the tyre is implicit in the wheel spin, stable at any step |
    | `goal_radius` | 6.0 | m (> 0) |
    | `vehicle` | `"truck_6x6"` | preset name, TOML path or `VehicleParams` (six wheels) |
    | weights | see Rewards | |
    | `render_mode`, `width`, `height` | None, 640, 480 | `"rgb_array"` or `"human"` |
    | `camera_name` | `"chase"` | the camera `render()` shows: `chase` (behind, following the vehicle), `top` (high above it, looking down), `driver` (in the cabin) or `overhead` (above it, turning with it); settable between steps (`set_attr` / `set_wrapper_attr`) |
    | `telemetry` | 0 | physics substeps of PhysX telemetry to keep (ring buffer; 0: none): `env.unwrapped.sim.telemetry` (`arrays()`, `write_csv(path)`), cleared by `reset` and `set_state`; single envs only (a native vector env refuses it) |
    | `randomize` | None | domain randomisation drawn at every reset from the env's seeded RNG: a preset (`"none"`, `"mild"`, `"wide"`) or a dict of ranges `{key: (lo, hi)}` over friction, mass, centre of mass, inertia, tyre stiffness, engine and brake torque, springs and dampers, action and observation noise and action latency (`traction.envs.randomize`: keys, units, presets, checks; draws and noise come from their own stream, so a seed gives the same terrain and task start with and without them); the draw is `info["randomization"]` at reset and `env.unwrapped.randomization`, saved by `get_state`; `vehicle` stays the nominal vehicle, `env.unwrapped.sim.params` is the drawn one |
    | `tire_model` | None | the fidelity ladder: `"arcade"`, `"physx"`, `"curve"` or `"magic_formula"` on every wheel (the vehicle's own parameters for that model, its own tyres if None), to train on one tyre model and evaluate on another (`evaluate RUN --env-kwarg tire_model=...`) |
    | `obs_mode` | `"state"` | what the agent observes: `"state"`, `"pixels"`, `"state+pixels"` or `"state+lidar"` (see Observation Space) |
    | `obs_options` | None | the camera's `width`, `height` (84, 84 px), `camera` (`"overhead"`; `"chase"`, `"top"`, `"driver"`); the lidar's `beams` (32 per plane), `fov_deg` (360), `vertical_deg` ((-10, 0)), `range` (30 m), `lidar_heights` (False) |

    `terrain`, `differential`, `action_mode`, `vehicle`, `control_dt`, `physics_dt`,
    `telemetry`, `randomize`, `tire_model`, `obs_mode` and `obs_options` shape the built env: setting one afterwards raises AttributeError (build
    another env); `difficulty`, `goal_radius` and the weights are attributes settable between
    steps.

    ## Version History
    - v0: initial release.
    - v0 (2026-11-25): the observation is the state at the step's end at one instant (the pose
      had been one 4 ms physics substep older than the velocities).
    - v0 (2026-11-25): leaving the terrain ends the episode (`off_terrain` term); the height map
      shows a drop beyond the edge (it showed the edge's height, as if the ground went on).
    - v0 (2026-11-25): the first step's progress is measured from the reset's observed state
      (it counted up to 3e-5 m the reset's settling substep moved); spawns on a cross slope
      (the `spawn` option on the hill) roll with the ground (they rolled against it).
    - v0 (2026-11-25): a diverged step repeats the episode's last observation (it returned
      zeros, which a truncation's value bootstrap then read).
    - v0 (2026-11-25): the `telemetry` argument (PhysX telemetry of every physics substep).
    - v0 (2026-11-25): observation 49 and `info["gear"]` show the engaged gear, 0 while a change
      is in progress (they showed the gear being left until the next one engaged).
    - v0 (2026-11-28): the `camera_name` argument (`render()` showed the chase camera only).
    - v0 (2026-11-29): `rgb_array` frames draw the goal (a red beacon, the `goal_radius` disc)
      and a green arrow toward it, and the truck's front; `readout()`; `dt`. What the agent sees
      and earns is unchanged.
    - v1: the drivetrain creates no energy. The differential's torque shares (torque
      vectoring's, or the `wheel_share` actions') also weight the wheel spins in the clutch's
      output speed, so the wheels get exactly the power the clutch passes; in v0 the clutch
      saw the six wheels equally while the torque went by the shares, and the wheels got more
      than the engine supplied with all torque on the fastest wheel (+150-170 % of its work),
      ~7-16 % more with random shares on `crest`. At the rev limit the clutch acts at the held
      engine speed.
    - v1: the tyre forces act at the contact patches (they acted at the wheel centres, PhysX's
      starting point, which gave the truck 56 % of a rigid vehicle's load transfer): the truck
      pitches and rolls with a rigid vehicle's load transfer and tips sideways at 36 deg (it held
      to 54 deg).
    - v1: the tyre (every model) sits behind a tread between wheel and road: static friction at
      rest, the model's own force at every speed, integrated implicitly with the wheel spin and
      the chassis; it replaces the minimum slip denominators (the force was viscous below 4
      m/s), the locked-wheel slip rule, the sticky tyre and the friction clamps. The slips are
      the physical ones at every speed, both over max(|v|, |omega r|); observations 30-41 and
      the `slip` term read the contact patch's slips (0 at rest, where the wheel's own is
      noise).
    - v1: the tyres' longitudinal stiffness is a road tyre's, 18 x a wheel's rest load per unit
      slip (18000 x g; it was 2500 x g, a seventh): half the friction limit takes a slip ratio
      of 0.014-0.050, and a tyre whose force saturates within a wheel substep turns its wheel
      under the force the road applies (the wheel had turned under the unsaturated force).
    - v1: the brakes act inside the drivetrain's solve (Coulomb friction against the new spin),
      and a tyre force that passes friction x load within a wheel substep is held at the limit
      for the wheel as for the chassis: in v0 the brakes clamped the spins after the engine had
      been coupled to the unclamped ones, and the wheel could feel a road torque the chassis
      did not, so energy could appear (under engine braking on a braked wheel) or vanish.
    - v1: the chassis's collisions are as soft as a bumper's crush (`chassis.collision_time`
      0.1 s, the time constant of MuJoCo's contact, the chassis's over the other geom's; it was
      MuJoCo's default 0.02 s, a 21 g spike driving a car into a wall at 2 m/s, now 4 g): it
      matters where the chassis touches the ground or a wall (a rollover, bellying on a crest).
    - v1: the truck's wheels meet the ground over their footprint (`contact.model =
      "footprint"`, 17 rays along each tyre's circumference: the tyre's profile against the
      heightfield's facets), not with one ray down each suspension line, which fed the wheel
      the one facet under its centre, up to 25 deg steeper than the hill: the scripted
      controller climbs rough_hill at difficulty 0.7 in 8 of 10 seeds, 5 with one ray.
    - v1: only the v1 ids are registered; asking for a v0 id raises Gymnasium's DeprecatedEnv.
    - v1: the `randomize` (domain randomisation) and `tire_model` (the fidelity ladder)
      arguments; without them (the defaults) the task is unchanged, bit for bit.
    - v1 (2026-11-29): the `obs_mode` and `obs_options` arguments (camera pixels, lidar); the
      default `"state"` observation is unchanged; pixels come from the new `overhead` camera
      (fixed to the vehicle: a PPO agent learned TankTurn from it, not from the chase view).
      Frames: the chase camera looks from 30 deg to the right of straight behind (the wheels
      show), and heightfields are painted by surface (mud, gravel, rock, grass, tarmac) in a
      2 m checker.
    """

    reward_names = ("progress", "energy", "slip", "success", "rollover", "off_terrain")
    fixed_arguments = ("terrain", "differential", "action_mode")
    goal_radius = positive_setting("goal_radius", "m")
    weight_arguments = {"progress_weight": "progress", "energy_weight": "energy",
                        "slip_weight": "slip", "success_bonus": "success",
                        "rollover_penalty": "rollover", "off_terrain_penalty": "off_terrain"}
    task_state = ("_prev_dist", "_goal_xyz", "_no_ground")
    reset_options = {"spawn": None}
    action_map = actions.DRIVE_LEVER

    def __init__(self, terrain: str = "rough_hill", difficulty: float = 0.5,
                 differential: str = "torque_vectoring", action_mode: str = "pedals",
                 control_dt: float = 0.04, physics_dt: float = 0.004, goal_radius: float = 6.0,
                 progress_weight: float = 1.0, energy_weight: float = 0.05,
                 slip_weight: float = 0.5, success_bonus: float = 10.0,
                 rollover_penalty: float = 10.0, off_terrain_penalty: float = 10.0,
                 vehicle: str | VehicleParams = "truck_6x6",
                 render_mode: str | None = None, width: int = 640, height: int = 480,
                 telemetry: int = 0, camera_name: str = "chase",
                 randomize=None,
                 tire_model: str | None = None, obs_mode: str = "state",
                 obs_options: dict | None = None):
        if terrain not in TERRAINS:
            raise ValueError(f"terrain = {terrain!r}; allowed: {', '.join(TERRAINS)}")
        if differential not in ("torque_vectoring", "equal"):
            raise ValueError(f"differential = {differential!r}; allowed: torque_vectoring, equal")
        if action_mode not in ("pedals", "wheel_torques"):
            raise ValueError(f"action_mode = {action_mode!r}; allowed: pedals, wheel_torques")
        goal_radius = positive("goal_radius", goal_radius)
        weights = finite_weights({"progress": progress_weight, "energy": energy_weight,
                                  "slip": slip_weight, "success": success_bonus,
                                  "rollover": rollover_penalty, "off_terrain": off_terrain_penalty})
        p = vehicle_params(vehicle)
        if p.n_wheels != 6:
            raise ValueError(f"vehicle {p.name!r} has {p.n_wheels} wheels; Climb6x6-v1's "
                             "observation has six-wheel channels (a 6x6: 6 wheels)")
        kind = "torque_vectoring" if differential == "torque_vectoring" else "multi_wheel"
        p = dataclasses.replace(p, differential=dataclasses.replace(p.differential, type=kind))
        self.action_names = ("drive", "steer") + (
            tuple(f"wheel_share_{n}" for n in p.wheel_names) if action_mode == "wheel_torques"
            else ())
        kwargs = dict(TERRAINS[terrain])
        difficulty = check_number("difficulty", difficulty, 0.0, 1.0)   # checked on any terrain
        if terrain == "rough_hill":
            kwargs["difficulty"] = difficulty
        super().__init__(p, terrain, kwargs, control_dt, physics_dt, render_mode, width, height,
                         telemetry, camera_name, randomize,
                         tire_model, obs_mode, obs_options)
        self.terrain, self.action_mode, self.differential = terrain, action_mode, differential
        self._difficulty = difficulty
        self.goal_radius = goal_radius
        self.weights = weights
        self.observation_space = gym.spaces.Box(-OBS_LIMIT, OBS_LIMIT, (90,), np.float64)

    @property
    def difficulty(self) -> float:
        """The rough_hill difficulty in [0, 1]. Set it between episodes for a curriculum
        (``venv.set_attr("difficulty", d)`` on a vector env, ``env.set_wrapper_attr(...)`` on
        one env): the next reset's terrain has it, without recompiling. Other terrains ignore
        it."""
        return self.scene.terrain.knobs.get("difficulty", self._difficulty)

    @difficulty.setter
    def difficulty(self, value: float) -> None:
        self._difficulty = check_number("difficulty", value, 0.0, 1.0)
        if self.terrain == "rough_hill":
            self.scene.terrain.knobs["difficulty"] = self._difficulty

    # --- task --------------------------------------------------------------------------------
    def _goal(self) -> np.ndarray:
        t = self.scene.terrain
        if t.goal is not None:
            return t.goal
        if self.terrain == "crest":
            x = t.knobs["count"] * t.knobs["spacing"]
        else:
            x = 40.0
        return np.array([x, 0.0, float(t.grid.height_at(x, 0.0))])

    def reset_task(self, options: dict) -> None:
        t = self.scene.terrain
        if "spawn" in options:
            pos, quat = self.scene.pose_on_ground(*options["spawn"])
        elif self.terrain == "crest":
            pos, quat = t.spawn_pos, t.spawn_quat
        else:
            x = float(t.spawn_pos[0])
            y = float(self.np_random.uniform(-3.0, 3.0))
            yaw = float(self.np_random.uniform(-0.26, 0.26))
            pos, quat = self.scene.pose_on_ground(x, y, yaw)
        self.sim.reset(pos=pos, quat=quat)
        self._goal_xyz = tuple(self._goal().tolist())       # fixed for the episode
        self._no_ground = float(t.grid.heights.min()) - EDGE_DROP

    def start_task(self, c: ChassisReading) -> None:
        self._prev_dist = self._goal_distance(c)

    def check_option(self, name: str, spawn) -> tuple[float, float, float]:
        """The ``spawn`` reset option as ``(x, y, yaw)``; ValueError unless three finite
        numbers with (x, y) on the terrain (the grid's extent, the same for every seed) at least
        the vehicle's reach from its edges, so every wheel is on it at any yaw."""
        try:
            x, y, yaw = (float(v) for v in np.asarray(spawn, dtype=np.float64).reshape(3))
        except (TypeError, ValueError):
            raise ValueError(f"reset option spawn = {spawn!r}; allowed: (x m, y m, yaw "
                             "rad)") from None
        x_lo, x_hi, y_lo, y_hi = self.scene.ground_limits()  # every wheel on it, at any yaw
        return (check_number("reset option spawn x", x, x_lo, x_hi, unit="m"),
                check_number("reset option spawn y", y, y_lo, y_hi, unit="m"),
                check_number("reset option spawn yaw", yaw, -math.tau, math.tau, unit="rad"))

    def _goal_distance(self, c: ChassisReading) -> float:
        """Horizontal distance from the CoM to the goal (m)."""
        return math.hypot(self._goal_xyz[0] - c.com[0], self._goal_xyz[1] - c.com[1])

    def observation(self, c: ChassisReading) -> np.ndarray:
        w, v = self.sim.outputs.wheel[0], self.sim.outputs.vehicle[0]
        g = self._goal_xyz
        obs = np.empty(90)
        obs[:12] = (*c.velocity_body, *c.angular_body, -c.rot[6], -c.rot[7], -c.rot[8],
                    *c.to_body((g[0] - c.com[0], g[1] - c.com[1], g[2] - c.com[2])))
        obs[12:18] = w["jounce"]
        obs[18:24] = self.sim.state.wheel["omega"][0]
        for j, name in enumerate(_WHEEL_OBS):
            obs[24 + 6 * j:30 + 6 * j] = w[name]
        obs[48:50] = v["engine_omega"] / self.vehicle.engine.max_omega, v["gear"]
        x, y, z = c.origin                               # height map, heading frame
        grid = self.scene.terrain.grid
        grid.heights_in_frame(x, y, c.yaw, _AHEAD, _SIDE, obs[50:], self._no_ground)
        obs[50:] -= z
        return obs

    # reward terms: unweighted values, weights applied in reward_terms
    def _progress(self, c: ChassisReading) -> float:
        d = self._goal_distance(c)
        gain, self._prev_dist = self._prev_dist - d, d
        return gain

    def _energy(self) -> float:
        drive = float(self.sim.action[0, 0])          # this step's, clipped by the action map
        return -(drive**2) * self._control_dt

    def _slip(self) -> float:
        w = self.sim.outputs.wheel[0]
        slips = [abs(s) for s, on in zip(w["long_slip"].tolist(), w["in_contact"].tolist(),
                                         strict=True) if on > 0.5]
        return -(sum(slips) / len(slips) if slips else 0.0) * self._control_dt

    def reward_terms(self, c: ChassisReading) -> dict[str, float]:
        terminated, success = self.termination(c)
        values = {"progress": self._progress(c), "energy": self._energy(), "slip": self._slip(),
                  "success": float(success), "rollover": -float(self._rolled_over(c)),
                  "off_terrain": -float(self._off_terrain(c))}
        return {k: self.weights[k] * v for k, v in values.items()}

    def _rolled_over(self, c: ChassisReading) -> bool:
        return c.tilt > _ROLLED_OVER

    def _off_terrain(self, c: ChassisReading) -> bool:
        return not self.scene.terrain.grid.contains(c.com[0], c.com[1])

    def termination(self, c: ChassisReading) -> tuple[bool, bool]:
        success = self._goal_distance(c) < self._goal_radius
        return success or self._rolled_over(c) or self._off_terrain(c), success

    # --- display -----------------------------------------------------------------------------
    def markers(self) -> list:
        """The goal: a tall red beacon and its `goal_radius` disc; a green arrow over the truck
        pointing toward it."""
        from traction.scenes.render import Marker

        c = self.read_chassis()
        g = self._goal_xyz
        out = [Marker.pole(g, 25.0, 0.4, (0.9, 0.15, 0.1, 0.85)),
               Marker.disc((g[0], g[1], g[2] + 0.1), self._goal_radius, 0.1, (0.9, 0.2, 0.1, 0.35))]
        dx, dy = g[0] - c.com[0], g[1] - c.com[1]
        d = math.hypot(dx, dy)
        if d > 1e-3:
            x, y, z = c.com[0], c.com[1], self._above_roof(c)
            length = 0.5 * float(self.vehicle.chassis.body_size[0]) + 3.0
            out.append(Marker.arrow((x, y, z), (x + length * dx / d, y + length * dy / d, z),
                                    0.16, (0.1, 0.85, 0.2, 0.9)))
        return out

    def readout(self) -> dict[str, str]:
        c = self.read_chassis()
        gear = int(self.sim.outputs.vehicle[0]["gear"])
        g = self._goal_xyz
        bearing = math.degrees(math.remainder(math.atan2(g[1] - c.com[1], g[0] - c.com[0])
                                              - c.yaw, math.tau))
        side = "ahead" if abs(bearing) < 0.5 else f"{abs(bearing):.0f} deg " + (
            "left" if bearing > 0 else "right")
        return {"to goal": f"{self._goal_distance(c):.1f} m, {side} (within "
                           f"{self._goal_radius:g} m)",
                "speed": f"{c.speed:.1f} m/s", "gear": "N" if gear == 0 else
                "R" if gear < 0 else str(gear), "tilt": f"{math.degrees(c.tilt):.0f} deg"}


def vector_env(num_envs: int = 1, **kwargs):
    """``Traction/Climb6x6-v1``'s registered ``vector_entry_point``: its native vector env
    (:func:`~traction.envs.vector.make_vector`)."""
    return make_vector("Traction/Climb6x6-v1", num_envs, **kwargs)
