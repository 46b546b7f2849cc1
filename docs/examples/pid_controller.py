"""A user's controller for the Traction benchmark: PID loops on the documented observations.

Benchmark it (docs/evaluating.md)::

    python -m traction.train.benchmark --controller docs/examples/pid_controller.py:make \\
        --suite quick --out runs/pid

The harness calls ``make(task)`` once per task variant with a
:class:`~traction.train.policy.TaskSpec` (env id, variant, environment arguments, spaces,
control period) and then the returned controller once per step with the observation;
``reset()`` before every episode.
"""

from __future__ import annotations

import math

import numpy as np

from traction.train.policy import TaskSpec, Unsupported


class PID:
    """``kp e + ki integral(e dt) + kd de/dt``, the integral clamped to +-``windup``."""

    def __init__(self, kp: float, ki: float = 0.0, kd: float = 0.0, dt: float = 0.04,
                 windup: float = 1.0):
        self.kp, self.ki, self.kd, self.dt, self.windup = kp, ki, kd, dt, windup
        self.reset()

    def reset(self) -> None:
        self.integral, self.previous = 0.0, None

    def __call__(self, error: float) -> float:
        self.integral = float(np.clip(self.integral + error * self.dt, -self.windup, self.windup))
        rate = 0.0 if self.previous is None else (error - self.previous) / self.dt
        self.previous = error
        return self.kp * error + self.ki * self.integral + self.kd * rate


class ClimbPID:
    """Climb6x6: drive holds 4 m/s (PI), steer points at the goal (PD on its bearing).
    Observations: 0 forward speed (m/s), 9-11 the goal vector (m, body frame)."""

    def __init__(self, dt: float):
        self.speed, self.steer = PID(0.5, 0.3, dt=dt), PID(1.5, kd=0.1, dt=dt)

    def reset(self) -> None:
        self.speed.reset()
        self.steer.reset()

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        bearing = math.atan2(obs[10], obs[9])
        drive = 0.4 + self.speed(4.0 - obs[0])
        return np.clip([drive, self.steer(bearing)], -1.0, 1.0).astype(np.float32)


class CirclePID:
    """Drift, without drifting: grip driving around the circle at 9 m/s. Steer: the circle's
    kinematic angle plus PD on the cross-track error and P on the heading error; throttle: PI on
    the speed. Observations: 0 speed (m/s), 5 cross-track error (m, + outside), 6-7 sin, cos
    of the heading error."""

    def __init__(self, dt: float, radius: float = 20.0):
        self.radius, self.cross, self.speed = radius, PID(0.08, kd=0.05, dt=dt), PID(0.3, 0.1, dt=dt)

    def reset(self) -> None:
        self.cross.reset()
        self.speed.reset()

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        heading_error = math.atan2(obs[6], obs[7])
        steer = 2.7 / self.radius / 0.6 + self.cross(obs[5]) - 0.5 * heading_error
        throttle = float(np.clip(0.2 + self.speed(9.0 - obs[0]), 0.0, 1.0))
        return np.array([np.clip(steer, -1, 1), 2 * throttle - 1, -1.0, -1.0], np.float32)


class HeadingPID:
    """TankTurn: PD on the heading error, opposite commands on the two tracks. The tracks'
    static scrub ignores small commands, so outside a 1.5 deg dead band the command is at least
    ``minimum``. Observations: 0-1 sin, cos of the heading error."""

    def __init__(self, dt: float, minimum: float = 0.5):
        self.heading, self.minimum = PID(2.5, kd=0.6, dt=dt), minimum

    def reset(self) -> None:
        self.heading.reset()

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        error = math.atan2(obs[0], obs[1])
        u = float(np.clip(self.heading(error), -1.0, 1.0))
        if abs(error) < math.radians(1.5):
            u = 0.0
        elif abs(u) < self.minimum:
            u = math.copysign(self.minimum, u)
        return np.array([-u, u], np.float32)


def make(task: TaskSpec):
    """The PID controller of ``task``'s environment."""
    task_name = task.env_id.removeprefix("Traction/").split("-")[0]
    if task_name == "Climb6x6":
        return ClimbPID(task.control_dt)
    if task_name == "Drift":
        return CirclePID(task.control_dt, task.env_kwargs.get("radius", 20.0))
    if task_name == "TankTurn":
        return HeadingPID(task.control_dt)
    raise Unsupported(f"no PID loop for {task.env_id}")
