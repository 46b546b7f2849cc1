"""Scripted baseline controllers, written against the public environment API only (the
documented observation indices and action channels).

Each controller is a callable ``controller(obs) -> action`` with ``reset()``; make one with
:func:`for_env`.
"""

from __future__ import annotations

import numpy as np


class ClimbController:
    """Climb6x6 (pedals): pure pursuit on the goal bearing; throttle holds a target speed, adds
    throttle with pitch (uphill) and backs off when the wheels slip."""

    def __init__(self, target_speed: float = 4.0, steer_gain: float = 1.5):
        self.target_speed, self.steer_gain = target_speed, steer_gain

    def reset(self) -> None:
        pass

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        speed = obs[0]                                 # body-frame forward velocity
        goal = obs[9:12]                               # goal vector, body frame
        sin_pitch = -obs[6]                            # gravity direction x component
        bearing = np.arctan2(goal[1], goal[0])
        steer = np.clip(self.steer_gain * bearing, -1.0, 1.0)
        throttle = 0.4 + 0.5 * (self.target_speed - speed) + 2.0 * sin_pitch
        contact = obs[24:30] > 0.5
        slip = np.abs(obs[30:36][contact]).mean() if contact.any() else 0.0
        if slip > 0.3:
            throttle *= 0.6
        return np.array([np.clip(throttle, -1.0, 1.0), steer], dtype=np.float32)


class DriftController:
    """Drift: follow the circle with grip up to speed, kick the tail out with the handbrake,
    then hold it - the throttle regulates the sideslip (PI on the sideslip error: more power,
    more slide) and the steering holds the path (counter-steer against the sideslip, plus
    cross-track and heading corrections)."""

    def __init__(self, target_sideslip: float = np.radians(30.0), dt: float = 0.04,
                 radius: float = 20.0, kick_speed: float = 11.0):
        self.target, self.dt, self.radius, self.kick_speed = target_sideslip, dt, radius, kick_speed
        self.reset()

    def reset(self) -> None:
        self.phase, self.timer, self.i_beta, self.prev_beta = "grip", 0.0, 0.0, 0.0

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        speed, beta, cross = obs[0], obs[1], obs[5]
        course_err = np.arctan2(obs[6], obs[7]) - beta   # velocity direction vs the tangent
        d_beta = (beta - self.prev_beta) / self.dt
        self.prev_beta = beta
        self.timer += self.dt
        path = -0.08 * cross - 0.8 * course_err           # back onto the circle, along it
        if self.phase == "grip":
            steer = 2.7 / self.radius / 0.6 * 1.0 + path     # kinematic steer for the circle
            throttle = np.clip(0.3 + 0.4 * (self.kick_speed - speed), 0.0, 1.0)
            if speed >= self.kick_speed - 0.3 and self.timer > 1.0:
                self.phase, self.timer = "kick", 0.0
            return np.array([np.clip(steer, -1, 1), 2 * throttle - 1, -1.0, -1.0], np.float32)
        if self.phase == "kick":
            if beta > 0.5 * self.target or self.timer > 0.6:
                self.phase = "hold"
            return np.array([1.0, 1.0, -1.0, 1.0], np.float32)
        err = self.target - beta
        self.i_beta = np.clip(self.i_beta + err * self.dt, -0.5, 0.5)
        throttle = np.clip(0.6 + 1.5 * err + 1.0 * self.i_beta - 0.25 * d_beta, 0.0, 1.0)
        steer = np.clip(-beta / 0.6 + 0.35 + path - 0.1 * d_beta, -1.0, 1.0)  # counter-steer
        return np.array([steer, 2 * throttle - 1, -1.0, -1.0], np.float32)


class TankTurnController:
    """TankTurn: PD on the heading error mapped to opposite track commands, with a minimum
    command (the tracks' static scrub needs it) and a small forward/backward trim against
    drift of the centre."""

    def __init__(self, kp: float = 3.0, kd: float = 0.8, minimum: float = 0.55):
        self.kp, self.kd, self.minimum = kp, kd, minimum

    def reset(self) -> None:
        pass

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        err = np.arctan2(obs[0], obs[1])
        u = np.clip(self.kp * err - self.kd * obs[2], -1.0, 1.0)
        u = np.sign(u) * max(abs(u), self.minimum) if abs(err) > np.radians(1.5) else 0.0
        trim = np.clip(-0.5 * obs[7], -0.2, 0.2) if u != 0.0 else 0.0   # displacement x (body)
        return np.array([np.clip(-u + trim, -1, 1), np.clip(u + trim, -1, 1)], dtype=np.float32)


def for_env(env_id: str):
    """The scripted controller of an environment id."""
    if env_id.startswith("Traction/Climb6x6"):
        return ClimbController()
    if env_id.startswith("Traction/Drift"):
        return DriftController()
    if env_id.startswith("Traction/TankTurn"):
        return TankTurnController()
    raise ValueError(f"no scripted controller for {env_id!r}")
