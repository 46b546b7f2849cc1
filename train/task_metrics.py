"""Per-episode metrics of each task, in the task's own terms and units, and what the plots show.

An :class:`EpisodeRecorder` watches one episode step by step (the observation, the info, the
simulator's chassis position) and returns the episode's metrics and its track (positions and
time series for the plots). Every task has the common metrics (success, return, time to
success, energy, tyre slip, divergence) and its own:

- Climb6x6: distance left to the goal, distance driven, rollovers, leaving the terrain;
- Drift: sideslip and circle tracking errors, time in a sustained drift, spin-outs, leaving
  the pad;
- TankTurn: the heading error left, how far the centre moved, leaving the arena.

Sources: the documented observation channels and ``info`` keys (the vehicle diagnostics, each
``reward_<term>``: a penalty term is negative in the step its event ends the episode, with the
environments' default weights, which the suites use), the chassis position
(``sim.com_position()``), the vehicle's outputs (the applied throttle) and, for the engine
work, the environment's telemetry (``telemetry=`` argument: engine torque and speed of every
physics substep; the engine's power changes within a control step, at the rev limiter by 12 %
of its mean, so one sample per step would not do). Recording it costs about as much as the
physics (a Python call per substep), so the engine work is optional: an env built without
telemetry has every metric but ``engine_work``. Slips and the throttle are sampled once per
control step (the throttle command holds through the step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from traction.envs.climb6x6_v1 import Climb6x6Env
from traction.envs.drift_v1 import DriftEnv
from traction.envs.tank_turn_v1 import TankTurnEnv


@dataclass(frozen=True)
class Metric:
    """One episode-level quantity: its unit, which way is better, what it is."""

    name: str
    unit: str
    better: str                       # "higher" or "lower"
    description: str
    successes_only: bool = False      # defined for successful episodes only

    def as_dict(self) -> dict:
        return {"unit": self.unit, "better": self.better, "description": self.description,
                "successes_only": self.successes_only}


COMMON = (
    Metric("success", "-", "higher", "1 if the episode ended in success (the task's "
           "info['is_success'] at its last step), else 0; the mean is the success rate"),
    Metric("return", "-", "higher", "sum of the rewards"),
    Metric("time_to_success", "s", "lower", "time from the reset to the step from which success "
           "held to the episode's end", successes_only=True),
    Metric("engine_work", "kJ", "lower", "engine work: integral of max(engine torque x engine "
           "speed, 0) over every physics substep (energy spent; engine braking earns nothing "
           "back)"),
    Metric("throttle_time", "s", "lower", "integral of the applied throttle (0-1) over the "
           "episode, from its value at each control step's end: the drive command spent"),
    Metric("mean_slip", "-", "lower", "mean |longitudinal slip| of the wheels on the ground"),
    Metric("peak_slip", "-", "lower", "largest |longitudinal slip| of a wheel on the ground"),
    Metric("diverged", "-", "lower", "1 if the simulation diverged (the episode was truncated)"),
)

CLIMB = COMMON + (
    Metric("goal_distance", "m", "lower", "horizontal distance from the CoM to the goal at the "
           "episode's end"),
    Metric("distance_driven", "m", "lower", "horizontal path length of the CoM"),
    Metric("rollover", "-", "lower", "1 if the truck rolled over (tilt > 70 deg)"),
    Metric("off_terrain", "-", "lower", "1 if the CoM left the terrain"),
)
DRIFT = COMMON + (
    Metric("sideslip_error", "deg", "lower", "mean |sideslip - target| over the last three "
           "quarters of the episode (after the run-up)"),
    Metric("cross_track_error", "m", "lower", "mean |distance from the marked circle| over the "
           "last three quarters of the episode"),
    Metric("drift_time", "s", "higher", "time in a sustained drift (sideslip within 10 deg of "
           "the target, within 3 m of the circle, moving)"),
    Metric("spin_out", "-", "lower", "1 if the sideslip passed 80 deg"),
    Metric("off_pad", "-", "lower", "1 if the CoM left the pad (15 m off the circle)"),
)
TANK = COMMON + (
    Metric("heading_error", "deg", "lower", "|target heading - heading| at the episode's end"),
    Metric("centre_drift", "m", "lower", "horizontal distance the CoM moved from its start"),
    Metric("off_arena", "-", "lower", "1 if the CoM left the arena"),
)


#: the reward terms (penalties) whose event ends an episode and is counted as a metric
PENALTIES = ("rollover", "off_terrain", "spin_out", "off_pad", "off_arena")


def metrics_of(env) -> tuple[Metric, ...]:
    """The metrics of ``env``'s task (a Traction task env, wrapped or not); ``engine_work``
    only if it keeps telemetry."""
    return tuple(m for m in _task(env)[0]
                 if m.name != "engine_work" or env.unwrapped.sim.telemetry is not None)


def _task(env):
    u = env.unwrapped
    for cls, metrics, signal in ((Climb6x6Env, CLIMB, ("goal distance", "m")),
                                 (DriftEnv, DRIFT, ("sideslip", "deg")),
                                 (TankTurnEnv, TANK, ("heading error", "deg"))):
        if isinstance(u, cls):
            return metrics, signal, cls
    raise ValueError(f"{type(u).__name__}: not a task the benchmark measures (Climb6x6, Drift, "
                     "TankTurn or a subclass)")


def telemetry_capacity(env) -> int:
    """Physics substeps an episode of ``env`` can last (its step limit x substeps, and the
    reset's settling substep): the ``telemetry=`` argument that keeps every one."""
    limit = env.spec.max_episode_steps if env.spec is not None else None
    if limit is None:
        raise ValueError("the benchmark needs a step limit (max_episode_steps) to size the "
                         "telemetry")
    return limit * env.unwrapped.n_substeps + 1


class EpisodeRecorder:
    """Samples one episode of ``env`` (built with ``telemetry=telemetry_capacity(env)`` for
    the engine work).

    Call :meth:`start` after ``reset``, :meth:`step` after every ``step``, then :meth:`finish`.
    """

    def __init__(self, env):
        self.env, self.u = env, env.unwrapped
        _, self.signal, self.cls = _task(env)
        self.metrics = metrics_of(env)
        self.telemetry = self.u.sim.telemetry
        if self.telemetry is not None and self.telemetry.capacity < telemetry_capacity(env):
            raise ValueError(f"EpisodeRecorder: the env keeps {self.telemetry.capacity} "
                             "substeps of telemetry, fewer than an episode can last "
                             f"({telemetry_capacity(env)}): build it with "
                             "telemetry=telemetry_capacity(env), or without telemetry")

    def start(self, obs: np.ndarray, info: dict) -> None:
        self.dt = self.u.control_dt
        self.steps, self.total, self.success_step = 0, 0.0, None
        self.start_pos = self.u.sim.com_position()
        self.xy = [self.start_pos[:2].tolist()]
        self.speed, self.task_signal = [info["speed"]], [self._signal(obs)]
        self.slips, self.peak, self.throttle = [], 0.0, 0.0
        self.flags = {}
        self.drift_steps, self.cross_track = 0, []
        self.last_obs, self.last_info = obs, info

    def step(self, obs: np.ndarray, reward: float, info: dict) -> None:
        self.steps += 1
        self.total += reward
        if not info["is_success"]:             # the step from which success held to the end
            self.success_step = None           # (Drift's success is sticky and its episode
        elif self.success_step is None:        # goes on after it)
            self.success_step = self.steps
        self.xy.append(self.u.sim.com_position()[:2].tolist())
        self.throttle += float(self.u.sim.outputs.throttle[0]) * self.dt
        self.speed.append(info["speed"])
        self.task_signal.append(self._signal(obs))
        on = info["wheel_contact"]
        if on.any():
            slip = np.abs(info["long_slip"][on])
            self.slips.append(float(slip.mean()))
            self.peak = max(self.peak, float(slip.max()))
        for term in PENALTIES:                 # a penalty term fired: its event happened
            if info.get(f"reward_{term}", 0.0) < 0.0:
                self.flags[term] = 1.0
        if self.cls is DriftEnv:
            self.cross_track.append(float(obs[5]))
            self.drift_steps += info["reward_hold"] > 0.0      # (> 0 exactly while drifting)
        self.last_obs, self.last_info = obs, info

    def _signal(self, obs: np.ndarray) -> float:
        """The task's telemetry line: distance to the goal (m), sideslip (deg), heading error
        (deg)."""
        if self.cls is Climb6x6Env:
            return _horizontal_goal_distance(obs)
        if self.cls is DriftEnv:
            return math.degrees(obs[1])
        return math.degrees(math.atan2(obs[0], obs[1]))

    def finish(self) -> tuple[dict, dict]:
        """The episode's metrics (name -> float, None where undefined) and its track."""
        info, obs = self.last_info, self.last_obs
        success = bool(info["is_success"])
        m = {"success": float(success), "return": float(self.total),
             "time_to_success": self.success_step * self.dt if success else None,
             "throttle_time": self.throttle,
             "mean_slip": float(np.mean(self.slips)) if self.slips else 0.0,
             "peak_slip": self.peak, "diverged": float(info["diverged"])}
        if self.telemetry is not None:
            tel = self.telemetry.arrays()
            power = tel["engine_drive_torque"][:, 0] * tel["engine_revs"][:, 0]
            m["engine_work"] = float(np.clip(power, 0.0, None).sum() * self.u.physics_dt / 1e3)
        if self.cls is Climb6x6Env:
            xy = np.array(self.xy)
            m.update(goal_distance=_horizontal_goal_distance(obs),
                     distance_driven=float(np.hypot(*np.diff(xy, axis=0).T).sum()),
                     rollover=self.flags.get("rollover", 0.0),
                     off_terrain=self.flags.get("off_terrain", 0.0))
        elif self.cls is DriftEnv:
            after = self.steps // 4                              # the last three quarters
            beta = np.radians(self.task_signal[1:])[after:]
            m.update(sideslip_error=float(np.degrees(np.abs(beta - self.u.target).mean())),
                     cross_track_error=float(np.abs(self.cross_track[after:]).mean()),
                     drift_time=self.drift_steps * self.dt,
                     spin_out=self.flags.get("spin_out", 0.0),
                     off_pad=self.flags.get("off_pad", 0.0))
        else:
            m.update(heading_error=abs(math.degrees(math.atan2(obs[0], obs[1]))),
                     centre_drift=float(np.hypot(*(self.u.sim.com_position()
                                                   - self.start_pos)[:2])),
                     off_arena=self.flags.get("off_arena", 0.0))
        track = {"dt": self.dt, "xy": self.xy, "speed": self.speed, "signal": self.task_signal,
                 "signal_label": f"{self.signal[0]} ({self.signal[1]})", "success": success}
        if self.cls is DriftEnv:
            track["circle"] = self.u.radius                 # the marked circle (m), for plots
        # the signal's target line: the goal radius (success inside), the target sideslip, 0
        track["signal_target"] = (self.u.goal_radius if self.cls is Climb6x6Env else
                                  math.degrees(self.u.target) if self.cls is DriftEnv else 0.0)
        return m, track


def _horizontal_goal_distance(obs: np.ndarray) -> float:
    """Climb6x6: the horizontal distance to the goal from the observation: the goal vector
    (body frame, obs 9-11) less its component along gravity (the unit vector of obs 6-8)."""
    goal, down = obs[9:12], obs[6:9]
    along = float(goal @ down)
    return math.sqrt(max(float(goal @ goal) - along * along, 0.0))
