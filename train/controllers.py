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
    """Drift in three phases. *Grip*: follow the circle up to ``kick_speed`` (kinematic steer plus
    cross-track and course corrections). *Power-over*: full lock and full throttle until the
    sideslip passes ``kick_sideslip``. *Hold*: the throttle regulates the sideslip (P on the
    error, damped by its rate) and the steering counter-steers by the sideslip, asks for the yaw
    rate of the circle (``speed / radius``) and corrects the path. In the slide the cross-track
    correction acts with the opposite sign to the grip phase (pointing the nose further in
    tightens the slide and the car runs wide) - found by experiment on this car.

    Holds a continuous slide for the whole episode with the sideslip at 27.6-27.9 deg (mean
    error 2.5-2.8 deg over seeds 1000-1003), but on a circle about 8.5 m inside the marked one:
    the cross-track correction does not hold the radius in the slide, so the success condition
    (within 3 m of the line) is not met. The hold-phase gains (throttle 0.95 + 0.4 x sideslip
    error - 1.5 x its rate) come from a sweep over seeds 1000-1011 (made when the suspension
    force moved to the ground normal; the earlier 0.85 + 1.0 - 0.2 then held 23-27 deg, and one
    seed swung to 14 deg of mean error).
    """

    def __init__(self, target_sideslip: float = np.radians(30.0), dt: float = 0.04,
                 radius: float = 20.0, kick_speed: float = 10.0,
                 kick_sideslip: float = np.radians(18.0)):
        self.target, self.dt, self.radius = target_sideslip, dt, radius
        self.kick_speed, self.kick_sideslip = kick_speed, kick_sideslip
        self.reset()

    def reset(self) -> None:
        self.phase, self.timer, self.prev_beta = "grip", 0.0, 0.0

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        speed, beta, yaw_rate, cross = obs[0], obs[1], obs[2], obs[5]
        course = np.arctan2(obs[6], obs[7]) - beta       # velocity direction vs the tangent
        d_beta = (beta - self.prev_beta) / self.dt
        self.prev_beta = beta
        self.timer += self.dt
        wheelbase, max_angle = 2.7, 0.6
        if self.phase == "grip":
            steer = wheelbase / self.radius / max_angle + 0.06 * cross - 0.6 * course
            throttle = 0.3 + 0.4 * (self.kick_speed + 1.0 - speed)
            if speed > self.kick_speed and self.timer > 1.0:
                self.phase = "power"
        elif self.phase == "power":
            steer, throttle = 1.0, 1.0
            if beta > self.kick_sideslip:
                self.phase = "hold"
        else:
            throttle = 0.95 + 0.4 * (self.target - beta) - 1.5 * d_beta
            steer = ((-beta + wheelbase / self.radius) / max_angle
                     + 1.0 * (speed / self.radius - yaw_rate) - 0.06 * cross - 0.6 * course)
        return np.array([np.clip(steer, -1, 1), 2 * np.clip(throttle, 0, 1) - 1, -1.0, -1.0],
                        np.float32)


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
