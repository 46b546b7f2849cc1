"""Driver input smoothing (PhysX's key/pad smoothing and steer-vs-speed table).

Raw inputs from a keyboard (digital, on/off) or a gamepad/agent (analog, 0..1 or -1..1) are
smoothed with per-channel rise and fall rates (units per second) before they reach the vehicle:
a digital input ramps toward 1 while pressed and toward 0 when released; an analog value moves
toward the raw value no faster than the rates allow. The steer is further limited by a table of
the largest steer command against forward speed, so full lock is impossible at speed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import gearbox, steering
from . import layout as L
from .jit import jit
from .layout import Packed

#: Channels smoothed, in order.
CHANNELS = ("throttle", "brake", "handbrake", "steer")


@dataclass(frozen=True)
class SmoothingParams:
    """Rise and fall rates (1/s) per channel (throttle, brake, handbrake, steer) and the steer
    limit table ``(speed m/s, largest |steer| command)``. Defaults: PhysX snippet values."""

    rise: tuple[float, ...] = (6.0, 6.0, 12.0, 2.5)
    fall: tuple[float, ...] = (10.0, 10.0, 12.0, 5.0)
    steer_vs_speed: tuple[tuple[float, float], ...] = field(
        default=((0.0, 0.75), (5.0, 0.75), (30.0, 0.125), (120.0, 0.1)))

    @classmethod
    def keyboard(cls) -> SmoothingParams:
        """PhysX's digital (key) smoothing rates."""
        return cls(rise=(3.0, 3.0, 10.0, 2.5), fall=(5.0, 5.0, 10.0, 5.0))


def steer_limit(p: SmoothingParams, forward_speed: np.ndarray) -> np.ndarray:
    """Largest steer command magnitude at ``|forward_speed|`` (m/s)."""
    table = np.array(p.steer_vs_speed)
    return np.interp(np.abs(forward_speed), table[:, 0], table[:, 1])


def smooth(p: SmoothingParams, current: np.ndarray, raw: np.ndarray, forward_speed: np.ndarray,
           dt: float) -> np.ndarray:
    """Move ``current`` toward ``raw`` at the channel rates and apply the steer limit.

    A value whose magnitude grows (moves away from 0) uses the rise rate, otherwise the fall rate;
    a steer that changes sign first falls to 0 at the fall rate.

    Args:
        p: smoothing parameters.
        current: smoothed values ``(n_vehicles, 4)`` (throttle, brake, handbrake, steer).
        raw: raw values, same shape; digital inputs are 0/1 (steer -1/0/1).
        forward_speed: ``(n_vehicles,)`` m/s.
        dt: step (s).

    Returns:
        New smoothed values, same shape.
    """
    rise = np.asarray(p.rise) * dt
    fall = np.asarray(p.fall) * dt
    grows = (np.abs(raw) > np.abs(current)) & (raw * current >= 0)
    step = np.where(grows, rise, fall)
    out = current + np.clip(raw - current, -step, step)
    crossing = (current != 0) & (np.sign(out) != np.sign(current)) & ~grows
    out = np.where(crossing & (np.abs(raw - current) > step), current - np.sign(current) * step, out)
    out[:, 3] = np.clip(out[:, 3], -steer_limit(p, forward_speed), steer_limit(p, forward_speed))
    return out


NO_GEAR_REQUEST = -2


@jit
def wheel_headings(pk: Packed, cv, cw, out) -> None:
    """Steer angle per wheel and the wheel's heading in the chassis plane, ``(cos, sin)``.

    Wheels that cannot steer (no steer limit, no toe) skip the sine and cosine. The test is on
    those parameters, not on a zero steer: LLVM proves ``cos(0) = 1`` and ``sin(0) = 0`` and
    folds a ``steer == 0`` branch into calling both for every wheel (a ``perf`` profile of the
    tank's update, no wheel steered, spent 5 % of it in ``sincos``)."""
    vp, wp = pk.vehicle[0], pk.wheel
    steer = min(max(cv.steer, -1.0), 1.0)
    for w in range(wp.shape[0]):
        angle = steering.steer_angle(vp, wp, w, steer) + cw[w].wheel_steer
        limit = wp[w].max_steer
        angle = min(max(angle, -limit), limit) + wp[w].toe
        c, sn = 1.0, 0.0
        if limit != 0.0 or wp[w].toe != 0.0:                  # else the angle is exactly 0
            c, sn = np.cos(angle), np.sin(angle)
        out[w].steer, out[w].heading[0], out[w].heading[1] = angle, c, sn


@jit
def commands(pk: Packed, gears, vs, cv, cw, dt, s, out, new_commands=True) -> tuple[float, float]:
    """1. Brake torque and steer angle per wheel; gears; returns ``(throttle, ratio)``.

    The steer angles and headings depend on the commands and parameters only: with
    ``new_commands=False`` (the commands are those of this vehicle's previous update) those of
    the previous update are kept in ``out``."""
    vp, wp = pk.vehicle[0], pk.wheel
    brake = min(max(cv.brake, 0.0), 1.0)
    handbrake = min(max(cv.handbrake, 0.0), 1.0)
    tank_standard = int(vp.diff_type) == L.TANK and vp.tank_special < 0.5
    for w in range(wp.shape[0]):
        b = max(brake, min(max(cw[w].wheel_brake, 0.0), 1.0))
        if tank_standard:                        # pulling a track's stick back brakes that side
            b = max(b, min(max(-cv.thrust[int(wp[w].group)], 0.0), 1.0))
        s[w].brake = b * wp[w].max_brake_torque + handbrake * wp[w].max_handbrake_torque
    if new_commands:
        wheel_headings(pk, cv, cw, out)
    throttle = min(max(cv.throttle, 0.0), 1.0)
    if int(vp.diff_type) == L.DIRECT:
        return throttle, 0.0
    want = int(cv.target_gear)
    if want == NO_GEAR_REQUEST:
        want = gears.gear + int(cv.gear_up > 0.5) - int(cv.gear_down > 0.5)
    gearbox.shift(vp, pk.shift_up, pk.shift_down, gears, vs, want,
                  vs.engine_omega / vp.max_omega, dt)
    if gears.auto_shift:
        throttle = 0.0                           # autobox shifts cut the throttle
    return throttle, gearbox.effective_ratio(vp, pk.gear_ratios, gears, vs)
