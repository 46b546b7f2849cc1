"""Traction/TankTurn-v1: turn a tank on the spot to a target heading."""

from __future__ import annotations

import dataclasses
import math

import gymnasium as gym
import numpy as np

from traction.vehicle_model import VehicleParams, vehicle_params

from . import actions
from .base import OBS_LIMIT, TractionEnv, finite_weights
from .reading import ChassisReading
from .vector import make_vector


def _wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


def _aim(err: float) -> float:
    """Potential of the aim term: 1 on target, 0.37 at 3 deg, ~0 beyond 8 deg."""
    return math.exp(-(err / _AIM_WIDTH) ** 2)


_AIM_WIDTH = math.radians(3.0)


class TankTurnEnv(TractionEnv):
    r"""
    ## Description
    A 15 t tank (`tank`: 12 road wheels, every wheel of a side spinning with its track) stands on
    a bumpy arena. A target heading within +-180 deg of its start heading is drawn at reset; the
    task is to pivot to it and hold it, without letting the centre wander. In the default
    `"special"` drive mode a track can be driven backwards, so opposite commands pivot the tank
    about its centre; in `"standard"` mode a negative command brakes that track instead.

    ## Action Space
    `Box(-1, 1, (2,), float32)`; clipped; NaN/inf raise `ValueError` naming the channel.

    | index | name | meaning | min | max | unit |
    |---|---|---|---|---|---|
    | 0 | left | left track command (standard mode: < 0 brakes the left track) | -1 | 1 | - |
    | 1 | right | right track command | -1 | 1 | - |

    The throttle is `max(|left|, |right|)`; the tank stays in first gear.

    ## Observation Space
    `Box(-1000, 1000, (9,), float64)` (values clipped to it); body = chassis frame.

    | index | observation | unit | frame |
    |---|---|---|---|
    | 0-1 | sin, cos of the heading error (target - heading) | - | - |
    | 2 | yaw rate | rad/s | world z |
    | 3-4 | CoM velocity x, y | m/s | body |
    | 5-6 | track surface speed left, right (spin x radius) | m/s | - |
    | 7-8 | displacement of the CoM from where reset left it | m | body |

    With `obs_mode` other than `"state"` the observation also (or instead) holds sensor readings
    (`traction.envs.sensors`): `"pixels"` is `Box(0, 255, (84, 84, 3), uint8)`, the `overhead`
    camera's image (straight down on the vehicle, turning with it; `obs_options` `width`,
    `height`, `camera`); `"state+pixels"` is `Dict(state=<the Box above>, pixels=<the image>)`;
    `"state+lidar"` is `Dict(state=..., lidar=Box(0, 30, (64,), float32))`, the distances (m)
    along 32 beams all round in two planes, 10 deg down and level, from the roof (`obs_options`
    `beams`, `fov_deg`, `vertical_deg`, `range`; `lidar_heights=True` adds `heights`, each hit's
    height relative to the sensor).

    ## Rewards
    `reward = heading + aim + translation + hold + off_arena`, each in `info["reward_<term>"]`
    (the weight arguments are attributes too, settable between steps: `set_attr` on a vector
    env, `set_wrapper_attr` on one env):

    | term | value | weight argument (default) |
    |---|---|---|
    | heading | decrease of \|heading error\| this step (rad) | `heading_weight` (1.0) |
    | aim | increase of `exp(-(heading error / 3 deg)^2)` this step | `aim_weight` (2.0) |
    | translation | -horizontal distance the CoM moved this step (m) | `translation_weight` (2.0) |
    | hold | +1 once the heading has been within 2 deg for 1 s (success) | `hold_bonus` (5.0) |
    | off_arena | -1 when the CoM leaves the arena (60 x 60 m; beyond it the tank falls) | `off_arena_penalty` (10.0) |

    `heading` and `aim` are differences of potentials (they sum to the change over the episode, so
    they cannot be farmed); `aim` sharpens the signal in the last degrees, where the tracks' static
    scrub makes small commands do nothing.

    ## Starting State
    At rest at the arena centre with a uniformly random heading; target heading = start heading
    + uniform(-180, 180) deg. Options: `reset(options={"target_offset": rad, "yaw": rad})`,
    each in [-2 pi, 2 pi].

    ## Episode End
    - Termination: success (held within 2 deg for 1 s) or leaving the arena (the CoM's
      horizontal position beyond the height field's edge, 30 m from the centre each way).
    - Truncation: time limit (`max_episode_steps=400`: 16 s at the default `control_dt`) or
      diverged simulation (`info["diverged"] = True`, reward 0, the last observation repeated).

    ## Arguments
    | argument | default | meaning |
    |---|---|---|
    | `drive_mode` | `"special"` | or `"standard"` |
    | `vehicle` | `"tank"` | preset name, TOML path or `VehicleParams` with a tank differential |
    | `control_dt` / `physics_dt` | 0.04 / 0.004 | s (spring alpha ~ 27; the tyre is implicit in the wheel spin) |
    | weights | see Rewards | |
    | `render_mode`, `width`, `height` | None, 640, 480 | |
    | `camera_name` | `"chase"` | the camera `render()` shows: `chase` (behind, following the vehicle), `top` (high above it, looking down), `driver` (in the cabin) or `overhead` (above it, turning with it); settable between steps (`set_attr` / `set_wrapper_attr`) |
    | `telemetry` | 0 | physics substeps of PhysX telemetry to keep (ring buffer; 0: none): `env.unwrapped.sim.telemetry` (`arrays()`, `write_csv(path)`), cleared by `reset` and `set_state`; single envs only (a native vector env refuses it) |
    | `randomize` | None | domain randomisation drawn at every reset from the env's seeded RNG: a preset (`"none"`, `"mild"`, `"wide"`) or a dict of ranges `{key: (lo, hi)}` over friction, mass, centre of mass, inertia, tyre stiffness, engine and brake torque, springs and dampers, action and observation noise and action latency (`traction.envs.randomize`: keys, units, presets, checks; draws and noise come from their own stream, so a seed gives the same terrain and task start with and without them); the draw is `info["randomization"]` at reset and `env.unwrapped.randomization`, saved by `get_state`; `vehicle` stays the nominal vehicle, `env.unwrapped.sim.params` is the drawn one |
    | `tire_model` | None | the fidelity ladder: `"arcade"`, `"physx"`, `"curve"` or `"magic_formula"` on every wheel (the vehicle's own parameters for that model, its own tyres if None), to train on one tyre model and evaluate on another (`evaluate RUN --env-kwarg tire_model=...`) |
    | `obs_mode` | `"state"` | what the agent observes: `"state"`, `"pixels"`, `"state+pixels"` or `"state+lidar"` (see Observation Space) |
    | `obs_options` | None | the camera's `width`, `height` (84, 84 px), `camera` (`"overhead"`; `"chase"`, `"top"`, `"driver"`); the lidar's `beams` (32 per plane), `fov_deg` (360), `vertical_deg` ((-10, 0)), `range` (30 m), `lidar_heights` (False) |

    `drive_mode`, `vehicle`, `control_dt`, `physics_dt`, `telemetry`, `randomize`, `tire_model`, `obs_mode` and `obs_options` shape the built env:
    setting one afterwards raises AttributeError (build another env); the weights are
    attributes settable between steps.

    ## Version History
    - v0: initial release.
    - v0 (2026-11-25): the observation is the state at the step's end at one instant (the pose
      had been one 4 ms physics substep older than the velocities).
    - v0 (2026-11-25): the first step's heading and translation terms and observations 7-8
      measure from the reset's observed state (not the spawn pose before its settling
      substep); spawns on the arena's bumps roll with the ground (up to 0.85 deg against it).
    - v0 (2026-11-25): a diverged step repeats the episode's last observation (it returned
      zeros, which a truncation's value bootstrap then read).
    - v0 (2026-11-25): the `telemetry` argument (PhysX telemetry of every physics substep).
    - v0 (2026-11-25): leaving the arena ends the episode (`off_arena` term); the tank had
      fallen off its edge and gone on falling until the time limit.
    - v0 (2026-11-28): the `camera_name` argument (`render()` showed the chase camera only).
    - v0 (2026-11-29): `rgb_array` frames draw the target heading (a green arrow; the heading now:
      a white one) and the tank's front (a yellow band, headlights); `readout()`; `dt`. What the
      agent sees and earns is unchanged.
    - v1: at the engine's rev limit the clutch acts at the held engine speed (the wheels are
      solved against it; in v0 the clutch torque came from the engine speed before the
      limiter held it).
    - v1: the tyre forces act at the contact patches (they acted at the road wheels' centres):
      the tank's load transfer is a rigid vehicle's.
    - v1: the tyre (every model) sits behind a tread between wheel and road: static friction at
      rest, the model's own force at every speed, integrated implicitly with the wheel spin and
      the chassis; it replaces the minimum slip denominators (the force was viscous below 4
      m/s), the locked-wheel slip rule, the sticky tyre and the friction clamps. The slips are
      the physical ones at every speed, both over max(|v|, |omega r|). The tracks scrub sideways
      with static friction (the lateral force had been viscous below 4 m/s): the tank breaks
      away into a pivot from about 0.6 command and pivots at 36 deg/s at full command (27
      before).
    - v1: the tyres' longitudinal stiffness is a road tyre's (or a rubber-padded track's), 18 x
      a road wheel's rest load per unit slip (22500 x g; it was 3000 x g, a seventh): half the
      friction limit takes a slip ratio of 0.017-0.047, and a tyre whose force saturates within
      a wheel substep turns its wheel under the force the road applies. The tank still breaks
      away into a pivot from about 0.6 command; it pivots at 50 deg/s at full command.
    - v1: the brakes act inside the drivetrain's solve (Coulomb friction against the new spin),
      and a tyre force that passes friction x load within a wheel substep is held at the limit
      for the wheel as for the chassis: in v0 the brakes clamped the spins after the engine had
      been coupled to the unclamped ones, and the wheel could feel a road torque the chassis
      did not, so energy could appear (under engine braking on a braked wheel) or vanish.
    - v1: the chassis's collisions are as soft as a bumper's crush (`chassis.collision_time`
      0.1 s, the time constant of MuJoCo's contact, the chassis's over the other geom's; it was
      MuJoCo's default 0.02 s, a 21 g spike driving a car into a wall at 2 m/s, now 4 g): it
      matters where the chassis touches the ground or a wall (a rollover, bellying on a crest).
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

    action_names = ("left", "right")
    reward_names = ("heading", "aim", "translation", "hold", "off_arena")
    fixed_arguments = ("drive_mode",)
    weight_arguments = {"heading_weight": "heading", "aim_weight": "aim",
                        "translation_weight": "translation", "hold_bonus": "hold",
                        "off_arena_penalty": "off_arena"}
    task_state = ("target", "start", "_prev_pos", "_prev_err", "_held")
    reset_options = {"target_offset": (-math.tau, math.tau, "rad"),
                     "yaw": (-math.tau, math.tau, "rad")}
    action_map = actions.TRACK_STICKS
    TOLERANCE = math.radians(2.0)
    HOLD_SECONDS = 1.0

    def __init__(self, drive_mode: str = "special", control_dt: float = 0.04,
                 physics_dt: float = 0.004, heading_weight: float = 1.0, aim_weight: float = 2.0,
                 translation_weight: float = 2.0, hold_bonus: float = 5.0,
                 off_arena_penalty: float = 10.0,
                 vehicle: str | VehicleParams = "tank", render_mode: str | None = None,
                 width: int = 640, height: int = 480, telemetry: int = 0,
                 camera_name: str = "chase", randomize=None,
                 tire_model: str | None = None, obs_mode: str = "state",
                 obs_options: dict | None = None):
        if drive_mode not in ("special", "standard"):
            raise ValueError(f"drive_mode = {drive_mode!r}; allowed: special, standard")
        p = vehicle_params(vehicle)
        if p.differential.type != "tank":
            raise ValueError(f"vehicle {p.name!r} has a {p.differential.type!r} differential; "
                             "TankTurn needs a tank")
        p = dataclasses.replace(p, differential=dataclasses.replace(p.differential,
                                                                    tank_mode=drive_mode))
        super().__init__(p, "arena", {}, control_dt, physics_dt, render_mode, width, height,
                         telemetry, camera_name, randomize,
                         tire_model, obs_mode, obs_options)
        self.drive_mode = drive_mode
        self.weights = finite_weights({"heading": heading_weight, "aim": aim_weight,
                                       "translation": translation_weight, "hold": hold_bonus,
                                       "off_arena": off_arena_penalty})
        self.observation_space = gym.spaces.Box(-OBS_LIMIT, OBS_LIMIT, (9,), np.float64)
        groups = self.vehicle.groups               # track speed = mean wheel spin x radius
        self._track_speed = groups / groups.sum(axis=0) * self.vehicle.wheels.radius[0]

    def reset_task(self, options: dict) -> None:
        yaw = float(options.get("yaw", self.np_random.uniform(-np.pi, np.pi)))
        offset = float(options.get("target_offset", self.np_random.uniform(-np.pi, np.pi)))
        pos, quat = self.scene.pose_on_ground(0.0, 0.0, yaw)
        self.sim.reset(pos=pos, quat=quat)
        self.target = _wrap(yaw + offset)
        self._held = 0.0

    def start_task(self, c: ChassisReading) -> None:
        self.start = self._prev_pos = c.com
        self._prev_err = abs(self.heading_error(c))

    def heading_error(self, c: ChassisReading | None = None) -> float:
        """Target heading minus heading (rad), wrapped to [-pi, pi)."""
        return _wrap(self.target - (c or self.read_chassis()).yaw)

    def observation(self, c: ChassisReading) -> np.ndarray:
        e = self.heading_error(c)
        track = self.sim.state.wheel["omega"][0] @ self._track_speed
        dx, dy, _ = c.to_body((c.com[0] - self.start[0], c.com[1] - self.start[1],
                               c.com[2] - self.start[2]))
        obs = np.empty(9)
        obs[:5] = (math.sin(e), math.cos(e), c.angular[2], c.velocity_body[0], c.velocity_body[1])
        obs[5:7] = track
        obs[7:] = dx, dy
        return obs

    def reward_terms(self, c: ChassisReading) -> dict[str, float]:
        err = abs(self.heading_error(c))
        pos, prev = c.com, self._prev_pos
        values = {"heading": self._prev_err - err, "aim": _aim(err) - _aim(self._prev_err),
                  "translation": -math.hypot(pos[0] - prev[0], pos[1] - prev[1])}
        self._prev_err, self._prev_pos = err, pos
        self._held = self._held + self._control_dt if err < self.TOLERANCE else 0.0
        values["hold"] = float(self._held >= self.HOLD_SECONDS - 1e-9)
        values["off_arena"] = -float(self._off_arena(c))
        return {k: self.weights[k] * v for k, v in values.items()}

    def _off_arena(self, c: ChassisReading) -> bool:
        return not self.scene.terrain.grid.contains(c.com[0], c.com[1])

    def termination(self, c: ChassisReading) -> tuple[bool, bool]:
        success = self._held >= self.HOLD_SECONDS - 1e-9
        return success or self._off_arena(c), success

    # --- display -----------------------------------------------------------------------------
    def markers(self) -> list:
        """The target heading (green arrow) and the heading now (white arrow) from above the
        CoM, over the cabin, reaching past the hull."""
        from traction.scenes.render import Marker

        c = self.read_chassis()
        x, y, z = c.com[0], c.com[1], self._above_roof(c)
        reach = 0.5 * float(self.vehicle.chassis.body_size[0]) + 3.0
        out = []
        for yaw, rgba, width, length in ((self.target, (0.1, 0.85, 0.2, 0.9), 0.16, reach),
                                         (c.yaw, (1.0, 1.0, 1.0, 0.8), 0.1, 0.8 * reach)):
            tip = (x + length * math.cos(yaw), y + length * math.sin(yaw), z)
            out.append(Marker.arrow((x, y, z), tip, width, rgba))
        return out

    def readout(self) -> dict[str, str]:
        c = self.read_chassis()
        moved = math.hypot(c.com[0] - self.start[0], c.com[1] - self.start[1])
        return {"heading error": f"{math.degrees(self.heading_error(c)):+.1f} deg "
                                 f"(within {math.degrees(self.TOLERANCE):.0f})",
                "held": f"{self._held:.1f} / {self.HOLD_SECONDS:.1f} s",
                "moved": f"{moved:.2f} m"}


def vector_env(num_envs: int = 1, **kwargs):
    """``Traction/TankTurn-v1``'s registered ``vector_entry_point``: its native vector env
    (:func:`~traction.envs.vector.make_vector`)."""
    return make_vector("Traction/TankTurn-v1", num_envs, **kwargs)
