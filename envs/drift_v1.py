"""Traction/Drift-v1: hold a sustained drift around a skidpad circle."""

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
from .rewards import tolerance
from .vector import make_vector

_BAND = math.radians(10)                         # sustained drift: sideslip within the band
_SIDESLIP_BOUNDS, _SIDESLIP_MARGIN = (-math.radians(5), math.radians(5)), math.radians(15)
_SPIN_OUT = math.radians(80)


def _wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


class DriftEnv(TractionEnv):
    r"""
    ## Description
    The rear-wheel-drive sedan (`sedan_rwd`: 500 N m engine, welded (spool) rear differential,
    handbrake on the rear wheels) circles a skidpad counter-clockwise. Its gearbox is held in second gear
    (drifting is done in a low gear; an autobox would shift up on wheelspin and kill the slide). The task is a
    sustained drift: keep the sideslip angle (between heading and velocity) near
    `target_sideslip_deg` while staying on the marked circle of radius `radius`, at speed. A
    quarter of the ring is wet tarmac.

    ## Action Space
    `Box(-1, 1, (4,), float32)`; clipped; NaN/inf raise `ValueError` naming the channel.

    | index | name | meaning | min | max | unit |
    |---|---|---|---|---|---|
    | 0 | steer | steering, positive turns left (max 0.6 rad) | -1 | 1 | - |
    | 1 | throttle | `(a + 1) / 2` of full throttle | -1 | 1 | - |
    | 2 | brake | `(a + 1) / 2` of full brake | -1 | 1 | - |
    | 3 | handbrake | `(a + 1) / 2` of full handbrake (rear wheels) | -1 | 1 | - |

    ## Observation Space
    `Box(-1000, 1000, (19,), float64)` (values clipped to it); body = chassis frame.

    | index | observation | unit | frame |
    |---|---|---|---|
    | 0 | speed of the CoM | m/s | - |
    | 1 | sideslip angle, positive when drifting the right way (nose inside the circle); 0 below 0.5 m/s; in (-90, 90) deg, measured from the forward speed's magnitude (a car moving backwards reads as moving forwards; a spin-out ends the episode at 80 deg first) | rad | - |
    | 2 | yaw rate | rad/s | world z |
    | 3-4 | CoM velocity x, y | m/s | body |
    | 5 | cross-track error: distance from the circle, positive outside | m | - |
    | 6-7 | sin, cos of the heading error to the circle's tangent | - | - |
    | 8-11 | longitudinal slip FL, FR, RL, RR | - | - |
    | 12-15 | lateral slip angle FL, FR, RL, RR | rad | - |
    | 16 | engine speed / max engine speed | - | - |
    | 17 | engaged gear (always 2: the gearbox is held in second) | - | - |
    | 18 | time in the current sustained drift / `hold_seconds` (capped at 1) | - | - |

    With `obs_mode` other than `"state"` the observation also (or instead) holds sensor readings
    (`traction.envs.sensors`): `"pixels"` is `Box(0, 255, (84, 84, 3), uint8)`, the `overhead`
    camera's image (straight down on the vehicle, turning with it; `obs_options` `width`,
    `height`, `camera`); `"state+pixels"` is `Dict(state=<the Box above>, pixels=<the image>)`;
    `"state+lidar"` is `Dict(state=..., lidar=Box(0, 30, (64,), float32))`, the distances (m)
    along 32 beams all round in two planes, 10 deg down and level, from the roof (`obs_options`
    `beams`, `fov_deg`, `vertical_deg`, `range`; `lidar_heights=True` adds `heights`, each hit's
    height relative to the sensor).

    ## Rewards
    `reward = sideslip + circle + hold + spin_out + off_pad`, each in `info["reward_<term>"]`
    (the weight arguments are attributes too, settable between steps: `set_attr` on a vector
    env, `set_wrapper_attr` on one env):

    | term | value | weight argument (default) |
    |---|---|---|
    | sideslip | `tolerance(sideslip - target, +-5 deg, margin 15 deg) x moving` per step | `sideslip_weight` (1.0) |
    | circle | `tolerance(cross-track error, +-1 m, margin 5 m) x moving` per step | `circle_weight` (0.5) |
    | hold | time in the current sustained drift / `hold_seconds`, capped at 1, per step | `hold_weight` (1.0) |
    | spin_out | -1 when \|sideslip\| exceeds 80 deg | `spin_out_penalty` (20.0) |
    | off_pad | -1 when the CoM is more than 15 m off the circle, either side (\|cross-track error\| > 15 m: off the pad outside, or near its centre when `radius` > 15 m) | `off_pad_penalty` (20.0) |

    `moving = min(1, horizontal speed / 8 m/s)` so standing still earns nothing. A sustained drift: sideslip
    within 10 deg of the target, cross-track error within 3 m, `moving > 0.5`; `hold` pays for
    keeping it going rather than swinging through the target band.

    ## Starting State
    On the circle at (0, -radius), heading +x (tangent, counter-clockwise), speed uniform in
    8-10 m/s, second gear, with heading noise +-0.05 rad (2.9 deg). Options: `reset(options={"speed": m/s})`
    (0-40) fixes the start speed. With `start_sideslip_deg` > 0 (a training aid, 0 by default)
    the car starts already sliding: its nose turned into the circle by a sideslip uniform in
    [0, `start_sideslip_deg`], moving along the tangent and yawing at speed / radius.

    ## Episode End
    - Termination: spin-out (\|sideslip\| > 80 deg) or the CoM more than 15 m off the circle
      (either side).
    - Truncation: time limit (`max_episode_steps=750`: 30 s at the default `control_dt`) or
      diverged simulation (`info["diverged"] = True`, reward 0, the last observation repeated).
    - `info["is_success"]`: a sustained drift has been held for `hold_seconds` at some point of
      the episode (stays True once reached; the episode goes on).

    ## Arguments
    | argument | default | meaning |
    |---|---|---|
    | `target_sideslip_deg` | 30.0 | deg, in [0, 80) (80: spin-out); also an attribute, settable between steps (`set_attr` / `set_wrapper_attr`) |
    | `radius` | 20.0 | circle radius, 5-60 m |
    | `hold_seconds` | 3.0 | s of drift for success (> 0) |
    | `start_sideslip_deg` | 0.0 | deg, in [0, 80): the largest sideslip an episode starts with (see Starting State); an attribute settable between episodes, for a curriculum (`train --curriculum start_sideslip_deg=30:0`; docs/results.md says what it did) |
    | `vehicle` | `"sedan_rwd"` | preset name, TOML path or `VehicleParams` (4 wheels, engine) |
    | `control_dt` / `physics_dt` | 0.04 / 0.004 | s (spring alpha ~ 26; the tyre is implicit in the wheel spin) |
    | weights | see Rewards | |
    | `render_mode`, `width`, `height` | None, 640, 480 | |
    | `camera_name` | `"chase"` | the camera `render()` shows: `chase` (behind, following the vehicle), `top` (high above it, looking down), `driver` (in the cabin) or `overhead` (above it, turning with it); settable between steps (`set_attr` / `set_wrapper_attr`) |
    | `telemetry` | 0 | physics substeps of PhysX telemetry to keep (ring buffer; 0: none): `env.unwrapped.sim.telemetry` (`arrays()`, `write_csv(path)`), cleared by `reset` and `set_state`; single envs only (a native vector env refuses it) |
    | `randomize` | None | domain randomisation drawn at every reset from the env's seeded RNG: a preset (`"none"`, `"mild"`, `"wide"`) or a dict of ranges `{key: (lo, hi)}` over friction, mass, centre of mass, inertia, tyre stiffness, engine and brake torque, springs and dampers, action and observation noise and action latency (`traction.envs.randomize`: keys, units, presets, checks; draws and noise come from their own stream, so a seed gives the same terrain and task start with and without them); the draw is `info["randomization"]` at reset and `env.unwrapped.randomization`, saved by `get_state`; `vehicle` stays the nominal vehicle, `env.unwrapped.sim.params` is the drawn one |
    | `tire_model` | None | the fidelity ladder: `"arcade"`, `"physx"`, `"curve"` or `"magic_formula"` on every wheel (the vehicle's own parameters for that model, its own tyres if None), to train on one tyre model and evaluate on another (`evaluate RUN --env-kwarg tire_model=...`) |
    | `obs_mode` | `"state"` | what the agent observes: `"state"`, `"pixels"`, `"state+pixels"` or `"state+lidar"` (see Observation Space) |
    | `obs_options` | None | the camera's `width`, `height` (84, 84 px), `camera` (`"overhead"`; `"chase"`, `"top"`, `"driver"`); the lidar's `beams` (32 per plane), `fov_deg` (360), `vertical_deg` ((-10, 0)), `range` (30 m), `lidar_heights` (False) |

    `radius` (the painted pad), `vehicle`, `control_dt`, `physics_dt`, `telemetry`, `randomize`, `tire_model`, `obs_mode` and `obs_options` shape the
    built env: setting one afterwards raises AttributeError (build another env);
    `target_sideslip_deg`, `hold_seconds` and the weights are attributes settable between
    steps.

    ## Version History
    - v0: initial release (the `hold` term and the sticky success were added before the first
      published results). Observation 18 showed the previous step's drift time until
      2026-11-25; it now shows the step's own, the one the `hold` term pays.
    - v0 (2026-11-25): the observation is the state at the step's end at one instant (the pose
      had been one 4 ms physics substep older than the velocities).
    - v0 (2026-11-25): a diverged step repeats the episode's last observation (it returned
      zeros, which a truncation's value bootstrap then read).
    - v0 (2026-11-25): the `telemetry` argument (PhysX telemetry of every physics substep).
    - v0 (2026-11-28): the `camera_name` argument (`render()` showed the chase camera only).
    - v0 (2026-11-29): `rgb_array` frames draw the circle, the velocity's direction (cyan) and
      the heading at the target sideslip (green), and the car's front; `readout()`; `dt`. What
      the agent sees and earns is unchanged.
    - v1: the limited-slip differential creates no energy: its biased torque shares also weight
      the rear wheels' spins in the clutch's output speed (in v0 the clutch saw them equally,
      and under engine braking with the wheels' speeds apart the wheels got more power than the
      clutch passed: 1.1 % of the engine's work in power-on / lift-off donuts). At the rev limit
      the clutch acts at the held engine speed.
    - v1: the tyre forces act at the contact patches (they acted at the wheel centres, which
      gave 43 % of a rigid car's load transfer), and the car changed with it: it understeers a
      little (front tyres' lateral stiffness 14, rear 22 per rad: 1.9 deg/g; it steered
      neutrally), its brakes are biased forward (2500 / 1500 N m; 1500 each), its limited slip
      is the tightest (`rear_bias` 1.0; 1.3) and second gear longer (1.9; 2.3): with the real
      load transfer the unloaded inner rear wheel spun up and the car could not hold a slide.
    - v1: the tyre (every model) sits behind a tread between wheel and road: static friction at
      rest, the model's own force at every speed, integrated implicitly with the wheel spin and
      the chassis; it replaces the minimum slip denominators (the force was viscous below 4
      m/s), the locked-wheel slip rule, the sticky tyre and the friction clamps. The slips are
      the physical ones at every speed, both over max(|v|, |omega r|); observations 8-15 are the
      contact patch's slips.
    - v1: the tyres' longitudinal stiffness is a road tyre's, 18 x a wheel's rest load per unit
      slip (6750 x g; PhysX's default 1000 x g, a seventh of it, needed a slip ratio of 0.26 to
      push half the friction limit, now 0.03), and a tyre whose force saturates within a wheel
      substep turns its wheel under the force the road applies (the wheel had turned under the
      unsaturated force).
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
    - v1: the car's rear differential is a spool (`kind = "locked"`: the rear wheels one
      spinning group, at one speed) in place of the limited slip at `rear_bias` 1.0, whose
      discontinuous split let the car, braked on a slope against its own drive, creep.
    - v1: the `start_sideslip_deg` argument (starts in a slide, for training; 0 by default: the
      task's start is unchanged).
    - v1: the `randomize` (domain randomisation) and `tire_model` (the fidelity ladder)
      arguments; without them (the defaults) the task is unchanged, bit for bit.
    - v1 (2026-11-29): the `obs_mode` and `obs_options` arguments (camera pixels, lidar); the
      default `"state"` observation is unchanged; pixels come from the new `overhead` camera
      (fixed to the vehicle: a PPO agent learned TankTurn from it, not from the chase view).
      Frames: the chase camera looks from 30 deg to the right of straight behind (the wheels
      show), and heightfields are painted by surface (mud, gravel, rock, grass, tarmac) in a
      2 m checker.
    """

    action_names = ("steer", "throttle", "brake", "handbrake")
    reward_names = ("sideslip", "circle", "hold", "spin_out", "off_pad")
    fixed_arguments = ("radius",)
    hold_seconds = positive_setting("hold_seconds", "s")
    weight_arguments = {"sideslip_weight": "sideslip", "circle_weight": "circle",
                        "hold_weight": "hold", "spin_out_penalty": "spin_out",
                        "off_pad_penalty": "off_pad"}
    task_state = ("_held", "_succeeded")
    task_cache = ("_slide_of",)                 # (c, sideslip, cross-track) of a reading
    reset_options = {"speed": (0.0, 40.0, "m/s")}
    action_map = actions.STEER_PEDALS

    def __init__(self, target_sideslip_deg: float = 30.0, radius: float = 20.0,
                 hold_seconds: float = 3.0, control_dt: float = 0.04, physics_dt: float = 0.004,
                 sideslip_weight: float = 1.0, circle_weight: float = 0.5,
                 hold_weight: float = 1.0, spin_out_penalty: float = 20.0, off_pad_penalty: float = 20.0,
                 vehicle: str | VehicleParams = "sedan_rwd", render_mode: str | None = None,
                 width: int = 640, height: int = 480, telemetry: int = 0,
                 camera_name: str = "chase", start_sideslip_deg: float = 0.0,
                 randomize=None,
                 tire_model: str | None = None, obs_mode: str = "state",
                 obs_options: dict | None = None):
        check_number("target_sideslip_deg", target_sideslip_deg, 0.0, 80.0, hi_open=True,
                     unit="deg")
        hold_seconds = positive("hold_seconds", hold_seconds)
        weights = finite_weights({"sideslip": sideslip_weight, "circle": circle_weight,
                                  "hold": hold_weight, "spin_out": spin_out_penalty,
                                  "off_pad": off_pad_penalty})
        p = vehicle_params(vehicle)
        if p.n_wheels != 4:
            raise ValueError(f"vehicle {p.name!r} has {p.n_wheels} wheels; Drift-v1's "
                             "observation has four-wheel slip channels (a car: 4 wheels)")
        if not p.differential.has_engine:
            raise ValueError(f"vehicle {p.name!r} has no engine (differential type 'direct'); "
                             "Drift-v1's throttle drives an engine through a gearbox")
        if len(p.gearbox.forward_ratios) < 2:
            raise ValueError(f"vehicle {p.name!r} has {len(p.gearbox.forward_ratios)} forward "
                             "gear(s); Drift-v1 starts each episode in second gear (allowed: "
                             "a gearbox of 2 or more forward gears)")
        p = dataclasses.replace(p, gearbox=dataclasses.replace(p.gearbox, autobox=0.0))
        super().__init__(p, "skidpad", {"radius": radius}, control_dt, physics_dt, render_mode,
                         width, height, telemetry, camera_name, randomize,
                         tire_model, obs_mode, obs_options)
        self.target = math.radians(target_sideslip_deg)
        self.start_sideslip_deg = start_sideslip_deg
        self.radius, self.hold_seconds = radius, hold_seconds
        self.weights = weights
        self.observation_space = gym.spaces.Box(-OBS_LIMIT, OBS_LIMIT, (19,), np.float64)
        self._held, self._succeeded = 0.0, False
        self._slide_of: tuple = (None, 0.0, 0.0)

    @property
    def target_sideslip_deg(self) -> float:
        """The target sideslip (deg, in [0, 80)); settable between steps (``set_attr``), read
        by the next step's reward and success (as ``target``, rad)."""
        return math.degrees(self.target)

    @target_sideslip_deg.setter
    def target_sideslip_deg(self, value: float) -> None:
        check_number("target_sideslip_deg", value, 0.0, 80.0, hi_open=True, unit="deg")
        self.target = math.radians(value)

    @property
    def start_sideslip_deg(self) -> float:
        """The largest sideslip (deg, in [0, 80)) an episode starts with; settable between
        episodes (``set_attr``), read by the next reset."""
        return self._start_sideslip_deg

    @start_sideslip_deg.setter
    def start_sideslip_deg(self, value: float) -> None:
        check_number("start_sideslip_deg", value, 0.0, 80.0, hi_open=True, unit="deg")
        self._start_sideslip_deg = float(value)

    def reset_task(self, options: dict) -> None:
        speed = float(options.get("speed", self.np_random.uniform(8.0, 10.0)))
        yaw = float(self.np_random.uniform(-0.05, 0.05))
        slide, yaw_rate = 0.0, 0.0
        if self._start_sideslip_deg > 0.0:     # (no draw without it: the default start's draws)
            slide = math.radians(float(self.np_random.uniform(0.0, self._start_sideslip_deg)))
            yaw_rate = speed / self._radius
        t = self.scene.terrain
        heading = yaw + slide                  # the nose turned into the circle
        quat = np.array([np.cos(heading / 2), 0.0, 0.0, np.sin(heading / 2)])
        self.sim.reset(pos=t.spawn_pos, quat=quat,
                       velocity=[speed * np.cos(yaw), speed * np.sin(yaw), 0.0],
                       yaw_rate=yaw_rate)
        self.sim.state.omega[:] = speed / self.vehicle.wheels.radius
        self.sim.state.set_gear(self.vehicle, 2)
        self.sim.state.engine_omega[:] = speed / self.vehicle.wheels.radius[2] * (
            self.vehicle.gearbox.forward_ratios[1] * self.vehicle.gearbox.final_ratio)
        self._held, self._succeeded = 0.0, False

    # measurements (from a reading of the chassis; read now if none is given)
    def sideslip(self, c: ChassisReading | None = None) -> float:
        """Sideslip (rad), positive for a counter-clockwise drift (velocity right of the nose);
        0 below 0.5 m/s."""
        vx, vy, _ = (c or self.read_chassis()).velocity_body
        return -math.atan2(vy, abs(vx) + 1e-6) if math.hypot(vx, vy) > 0.5 else 0.0

    def cross_track(self, c: ChassisReading | None = None) -> float:
        """Distance of the CoM from the circle (m), positive outside."""
        x, y, _ = (c or self.read_chassis()).com
        return math.hypot(x, y) - self._radius

    def heading_error(self, c: ChassisReading | None = None) -> float:
        """Heading minus the circle's counter-clockwise tangent direction at the CoM (rad)."""
        c = c or self.read_chassis()
        return _wrap(c.yaw - (math.atan2(c.com[1], c.com[0]) + math.pi / 2))

    def _slide(self, c: ChassisReading) -> tuple[float, float]:
        """``(sideslip, cross-track error)`` of the step's reading, computed once per reading
        (the observation, reward terms and termination all use them)."""
        if self._slide_of[0] is not c:
            self._slide_of = (c, self.sideslip(c), self.cross_track(c))
        return self._slide_of[1], self._slide_of[2]

    def _moving(self, c: ChassisReading) -> float:
        return min(1.0, math.hypot(c.velocity[0], c.velocity[1]) / 8.0)

    def observation(self, c: ChassisReading) -> np.ndarray:
        w, v = self.sim.outputs.wheel[0], self.sim.outputs.vehicle[0]
        e = self.heading_error(c)
        beta, off = self._slide(c)
        return np.array([c.speed, beta, c.angular[2], c.velocity_body[0],
                         c.velocity_body[1], off, math.sin(e), math.cos(e),
                         *w["long_slip"].tolist(), *w["lat_slip"].tolist(),
                         v["engine_omega"] / self.vehicle.engine.max_omega, v["gear"],
                         min(self._held / self._hold_seconds, 1.0)])

    def reward_terms(self, c: ChassisReading) -> dict[str, float]:
        (beta, e), moving = self._slide(c), self._moving(c)
        drifting = abs(beta - self.target) < _BAND and abs(e) < 3.0 and moving > 0.5
        self._held = self._held + self._control_dt if drifting else 0.0
        self._succeeded = self._succeeded or self._held >= self._hold_seconds - 1e-9
        w = self.weights
        return {
            "sideslip": w["sideslip"] * (tolerance(beta - self.target, _SIDESLIP_BOUNDS,
                                                   _SIDESLIP_MARGIN) * moving),
            "circle": w["circle"] * (tolerance(e, (-1.0, 1.0), 5.0) * moving),
            "hold": w["hold"] * min(self._held / self._hold_seconds, 1.0),
            "spin_out": w["spin_out"] * -float(abs(beta) > _SPIN_OUT),
            "off_pad": w["off_pad"] * -float(abs(e) > 15.0)}

    def termination(self, c: ChassisReading) -> tuple[bool, bool]:
        beta, e = self._slide(c)
        done = abs(beta) > _SPIN_OUT or abs(e) > 15.0
        return done, self._succeeded

    # --- display -----------------------------------------------------------------------------
    def markers(self) -> list:
        """The circle to drive (a white line); above the car, the velocity's direction (cyan
        arrow) and the heading that has the target sideslip to it (green arrow): a drift on
        target points the car's nose along the green arrow."""
        from traction.scenes.render import Marker, ring

        c = self.read_chassis()
        out = ring((0.0, 0.0, 0.012), self._radius, 0.25, (1.0, 1.0, 1.0, 0.9))
        vx, vy = c.velocity[0], c.velocity[1]
        if math.hypot(vx, vy) > 0.5:
            x, y, z = c.com[0], c.com[1], self._above_roof(c)
            course = math.atan2(vy, vx)
            for yaw, rgba in ((course, (0.1, 0.8, 1.0, 0.9)),
                              (course + self.target, (0.1, 0.85, 0.2, 0.9))):
                tip = (x + 6.0 * math.cos(yaw), y + 6.0 * math.sin(yaw), z)
                out.append(Marker.arrow((x, y, z), tip, 0.12, rgba))
        return out

    def readout(self) -> dict[str, str]:
        c = self.read_chassis()
        return {"sideslip": f"{math.degrees(self.sideslip(c)):+.0f} deg "
                            f"(target {self.target_sideslip_deg:.0f})",
                "off circle": f"{self.cross_track(c):+.1f} m",
                "drift held": f"{self._held:.1f} / {self._hold_seconds:.1f} s",
                "speed": f"{c.speed:.1f} m/s"}


def vector_env(num_envs: int = 1, **kwargs):
    """``Traction/Drift-v1``'s registered ``vector_entry_point``: its native vector env
    (:func:`~traction.envs.vector.make_vector`)."""
    return make_vector("Traction/Drift-v1", num_envs, **kwargs)
