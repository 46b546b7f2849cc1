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
    sideslip passes ``kick_sideslip``. *Hold*: two loops, each on a measured quantity.

    - **Steering holds the sideslip** (the fast loop): the circle's kinematic angle,
      counter-steer by the sideslip (the front wheels along the velocity), and a PID on the
      sideslip error (``sideslip_gain`` per rad, ``sideslip_integral`` per rad s,
      ``sideslip_damping`` per rad/s of its rate; steering units). The sideslip reference is
      the target less ``course_gain`` x the course error (the velocity's angle inside the
      circle's tangent), which damps the path's swing about the circle.
    - **Throttle holds the engine speed** (the rear tyres' spin): a PI (``revs_gain``,
      ``revs_integral`` per unit of engine speed / max) toward ``revs`` (for the 20 m circle;
      scaled by sqrt(radius / 20 m), as the slide's speed sqrt(a R) is), less ``radial_gain`` x
      the speed away from the circle's centre (m/s) and an integral of the cross-track error
      (``centre_integral`` per m s): the slide's radius and the circle's centre. The PI's
      integral starts at 0.87 throttle and is kept within 0.5-1.

    Why these pairings: with its rear tyres sliding, a car held at a sideslip by the steering
    has a speed the throttle's torque barely fixes (the rear tyres make their friction limit,
    split between drive and side force by the direction of their slide), so a fixed throttle
    let the slide's circle grow or shrink without end (0.85 settled on a 13 m circle, 0.87 on
    20 m, 0.9 left the pad). A held wheel spin sets the slide's speed through the tyres
    themselves (faster over the ground: less slip, less drive), and the engine speed is an
    observation (16). Steering the path with the throttle instead gave the rear tyres their
    grip back and the slide straightened.

    With the defaults, over the standard suite's 20 drift scenarios (seeds 1000-1019): the
    slide begins 2.1 s in and the sustained drift (within 10 deg and 3 m for 3 s) is reached
    5.1 s in, in every episode; after the slide's first 3 s the sideslip stays within 22-37 deg,
    29.2 deg on average, at 12.8 m/s, the car 1.7 m (RMS, 3.3 m at most) from the marked
    circle, to the end of the 30 s episode; in a 120 s episode it stays on the circle (3.5 m at
    most). The same 20 episodes all succeed and run their 30 s with ``revs`` 0.65 or 0.75, the
    car 10 % lighter or heavier or its engine 10 % weaker or stronger, a target of 25 or 35 deg,
    or a 15 m or 30 m circle (``radius``, the env's and the controller's).
    """

    def __init__(self, target_sideslip: float = np.radians(30.0), dt: float = 0.04,
                 radius: float = 20.0, kick_speed: float = 10.0,
                 kick_sideslip: float = np.radians(18.0), sideslip_gain: float = 2.0,
                 sideslip_integral: float = 0.5, sideslip_damping: float = 0.5,
                 course_gain: float = 0.4, revs: float = 0.7, revs_gain: float = 10.0,
                 revs_integral: float = 2.0, radial_gain: float = 0.07,
                 centre_integral: float = 0.005):
        self.target, self.dt, self.radius = target_sideslip, dt, radius
        self.kick_speed, self.kick_sideslip = kick_speed, kick_sideslip
        self.sideslip_gain, self.sideslip_integral = sideslip_gain, sideslip_integral
        self.sideslip_damping, self.course_gain = sideslip_damping, course_gain
        self.revs, self.revs_gain, self.revs_integral = revs, revs_gain, revs_integral
        self.radial_gain, self.centre_integral = radial_gain, centre_integral
        self.reset()

    def reset(self) -> None:
        self.phase, self.timer, self.prev_beta = "grip", 0.0, 0.0
        self.steer_i, self.throttle_i, self.revs_i = 0.0, 0.87, 0.0

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        speed, beta, cross, revs = obs[0], obs[1], obs[5], obs[16]
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
            error = self.target - self.course_gain * course - beta
            self.steer_i = np.clip(self.steer_i + self.sideslip_integral * error * self.dt,
                                   -0.5, 0.5)
            steer = ((wheelbase / self.radius - beta) / max_angle
                     + self.sideslip_gain * error + self.steer_i
                     - self.sideslip_damping * d_beta)
            outward = -speed * np.sin(course)                # m/s away from the centre
            self.revs_i = np.clip(self.revs_i + self.centre_integral * cross * self.dt,
                                  -0.1, 0.1)
            revs_ref = (self.revs * np.sqrt(self.radius / 20.0)
                        - self.radial_gain * outward - self.revs_i)
            revs_error = revs_ref - revs
            self.throttle_i = np.clip(self.throttle_i + self.revs_integral * revs_error * self.dt,
                                      0.5, 1.0)
            throttle = self.throttle_i + self.revs_gain * revs_error
        return np.array([np.clip(steer, -1, 1), 2 * np.clip(throttle, 0, 1) - 1, -1.0, -1.0],
                        np.float32)


class TankTurnController:
    """TankTurn: PD on the heading error mapped to opposite track commands, with a minimum
    command (the tracks' static scrub needs it: in first gear the tank breaks away into a pivot
    from about 0.6) and a small forward/backward trim against drift of the centre."""

    def __init__(self, kp: float = 3.0, kd: float = 0.8, minimum: float = 0.7):
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
