"""Action maps: a task's action (channels in [-1, 1]) to the vehicle's command rows, compiled.

The built-in tasks name their map in ``TractionEnv.action_map``; the compiled physics loop
(``physics.advance``) then checks, clips and maps the actions of every world at the start of a
control step, in the same call that runs its substeps, so an env step spends no Python on them
(in Python they cost a sizeable share of a light task's step). A task
without a map (``action_map = NONE``) maps in Python (``TractionEnv.apply_action``).

=================  ========================================================================
map                channels -> commands
=================  ========================================================================
``STEER_PEDALS``   steer -> steer; throttle, brake, handbrake: ``(a + 1) / 2`` -> pedal
``TRACK_STICKS``   left, right -> track thrusts; engine throttle ``max(|left|, |right|)``
``DRIVE_LEVER``    drive in [-1, 1]: forward throttle / brake, and from a stop, reverse gear
                   and reverse throttle (the pedal roles swap while reversing; drive forward
                   from a crawl shifts back to first); steer -> steer; optional wheel torque
                   shares (channels 2..): ``(a + 1) / 2`` -> ``torque_split``
=================  ========================================================================
"""

from __future__ import annotations

import numpy as np

from traction.vehicle_model.controls import NO_GEAR_REQUEST
from traction.vehicle_model.jit import jit

NONE, STEER_PEDALS, TRACK_STICKS, DRIVE_LEVER = -1, 0, 1, 2
NAMES = {NONE: "NONE", STEER_PEDALS: "STEER_PEDALS", TRACK_STICKS: "TRACK_STICKS",
         DRIVE_LEVER: "DRIVE_LEVER"}
#: DRIVE_LEVER: below this speed (m/s) a held brake engages reverse, a held drive first gear
REVERSE_SPEED = 0.5


def validate(action_map, n_channels: int, n_wheels: int) -> None:
    """ValueError unless ``action_map`` is one of the maps above and reads exactly the
    ``n_channels`` channels of an action row (the compiled maps do not check bounds): 4 for
    ``STEER_PEDALS``, 2 for ``TRACK_STICKS``, 2 plus at most one per wheel for ``DRIVE_LEVER``."""
    if type(action_map) is not int or action_map not in NAMES:
        raise ValueError(f"action_map = {action_map!r}; allowed: "
                         + ", ".join(f"actions.{n} ({c})" for c, n in NAMES.items()))
    fewest, most = {NONE: (0, n_channels), STEER_PEDALS: (4, 4), TRACK_STICKS: (2, 2),
                    DRIVE_LEVER: (2, 2 + n_wheels)}[action_map]
    if not fewest <= n_channels <= most:
        raise ValueError(f"action_map = actions.{NAMES[action_map]} reads {fewest}..{most} "
                         f"action channels; the action has {n_channels}")


def not_finite(names, channel: int, value: float) -> ValueError:
    """The error for an action whose channel ``channel`` (named ``names[channel]``) holds
    ``value``, which is not finite."""
    return ValueError(f"action[{channel}] ({names[channel]}) = {value} is not finite")


@jit
def check(action, active) -> int:
    """The first non-finite channel of an active world, as ``world * n_channels + channel``,
    or -1; when all are finite, every active row is clipped to [-1, 1] in place."""
    n = action.shape[1]
    for i in range(action.shape[0]):
        if active[i]:
            for j in range(n):
                if not np.isfinite(action[i, j]):
                    return i * n + j
    for i in range(action.shape[0]):
        if active[i]:
            for j in range(n):
                action[i, j] = min(max(action[i, j], -1.0), 1.0)
    return -1


@jit
def drive_lever(a, cmd_v, cmd_w, gears, now) -> None:
    """``DRIVE_LEVER`` for one world (``now``: its chassis row after the last step)."""
    drive = a[0]
    throttle, brake, target = max(drive, 0.0), max(-drive, 0.0), NO_GEAR_REQUEST
    speed = (now.velocity[0] * now.rotation[0] + now.velocity[1] * now.rotation[3]
             + now.velocity[2] * now.rotation[6])           # forward, m/s
    if gears.target < 0:                           # reversing: pedal roles swap
        throttle, brake = brake, throttle
        if drive > 0.0 and speed > -REVERSE_SPEED:
            target, brake, throttle = 1, 0.0, drive
    elif drive < 0.0 and speed < REVERSE_SPEED:       # stopped and braking: reverse
        throttle, brake, target = -drive, 0.0, -1
    cmd_v.steer, cmd_v.throttle, cmd_v.brake = a[1], throttle, brake
    cmd_v.target_gear = target
    for w in range(a.shape[0] - 2):
        cmd_w[w].torque_split = (a[2 + w] + 1.0) / 2.0


@jit
def apply(action_map, a, cmd_v, cmd_w, gears, now) -> None:
    """Write one world's checked action row ``a`` to its command rows by ``action_map``."""
    if action_map == STEER_PEDALS:
        cmd_v.steer, cmd_v.throttle = a[0], (a[1] + 1.0) / 2.0
        cmd_v.brake, cmd_v.handbrake = (a[2] + 1.0) / 2.0, (a[3] + 1.0) / 2.0
    elif action_map == TRACK_STICKS:
        cmd_v.thrust[0], cmd_v.thrust[1] = a[0], a[1]
        cmd_v.throttle = max(abs(a[0]), abs(a[1]))
    elif action_map == DRIVE_LEVER:
        drive_lever(a, cmd_v, cmd_w, gears, now)


@jit
def load_rows(action, rows, active) -> bool:
    """Copy the flat float32 ``action`` (one row per world, row-major) into the active worlds'
    float64 ``rows``; False (nothing copied) unless it has exactly that many values."""
    n = rows.shape[1]
    if action.shape[0] != rows.shape[0] * n:
        return False
    for i in range(rows.shape[0]):
        if active[i]:
            for j in range(n):
                rows[i, j] = action[i * n + j]
    return True
