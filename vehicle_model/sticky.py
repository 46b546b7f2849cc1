"""Sticky tyre: static friction at rest.

Slip-based tyre models give a force proportional to the sliding speed at low speed (the slip
denominators make them viscous), so a braked car on a slope creeps downhill. PhysX adds
"sticky tyre" constraints for that case; we cannot add solver constraints to MuJoCo from here, so
the same idea is an explicit spring-damper anchored where the contact patch came to rest:

* a direction becomes sticky after its contact-patch speed stayed below ``speed`` for ``time``
  seconds (longitudinally only while the wheel is locked by the brake, laterally only while the
  wheel neither rolls nor spins on the spot);
* while sticky, the patch displacement from its anchor is integrated and the force is
  ``-k * displacement - c * velocity`` with ``k = m_s (2 pi f)^2`` and ``c = 2 zeta sqrt(k m_s)``
  from the wheel's sprung mass, so the patch behaves like a critically damped ``f`` Hz mode;
* the force is limited by friction x load, and longitudinally also to what the brake holds
  against the drive torque (``|drive - F r| <= brake``, :func:`brake_window`: a larger force
  would turn the locked wheel, unlock it and drop the sticky state); when the spring part alone
  leaves the range, the anchor slides (it is moved so the spring force sits on the bound) - the
  tyre breaks loose or the brake slips.

The triggers differ from PhysX's too: there a direction sticks at once when the patch is below
0.2 m/s with the wheel not turning and no intent to accelerate, or after 1 s below 0.2 m/s
(rolling or not), and the sticky direction's slip is zeroed for the tyre model; here the
defaults are 0.5 m/s for 0.1 s with the gates above, and the other direction keeps its force.

State per wheel: anchor displacement and timer, for (longitudinal, lateral).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .jit import jit
from .params import param, validate_fields


@dataclass(frozen=True)
class StickyParams:
    """Low-speed static friction settings (scalars)."""

    speed: float = param(0.5, unit="m/s", lo=0.0, hi=5.0, shape="scalar",
                         doc="patch speed below which a direction may stick")
    time: float = param(0.1, unit="s", lo=0.0, hi=10.0, shape="scalar",
                        doc="time below that speed before it sticks")
    frequency: float = param(5.0, unit="Hz", lo=0.1, hi=50.0, shape="scalar",
                             doc="natural frequency of the anchored patch with its sprung mass")
    damping_ratio: float = param(1.0, unit="-", lo=0.0, hi=5.0, shape="scalar",
                                 doc="damping ratio of the anchored patch")

    def validate(self, prefix: str = "sticky.", where: str = "") -> None:
        """Raise VehicleConfigError naming the first field out of range."""
        validate_fields(self, prefix, where)


@jit
def update(speed: float, time: float, frequency: float, damping_ratio: float, anchor: float,
           timer: float, velocity: float, eligible: bool, sprung_mass: float, lo: float,
           hi: float, dt: float) -> tuple[float, float, bool, float]:
    """Advance the sticky state of one wheel in one direction and return its force.

    Args:
        speed, time, frequency, damping_ratio: the :class:`StickyParams` values.
        anchor: patch displacement from the anchor (m).
        timer: time spent eligible and slow (s).
        velocity: contact-patch velocity in this direction (m/s).
        eligible: whether the wheel may stick in this direction.
        sprung_mass: the wheel's sprung mass (kg).
        lo, hi: the force's range (N): -+ friction x load, narrowed (longitudinally) to
            what the locked wheel's brake holds against its drive torque (:func:`brake_window`).
        dt: step (s).

    Returns:
        ``(anchor, timer, active, force)``: new state, whether the direction sticks, and its
        force on the chassis (N).
    """
    slow = eligible and abs(velocity) < speed
    timer = timer + dt if slow else 0.0
    active = slow and timer >= time
    if not active:
        return 0.0, timer, False, 0.0
    anchor = anchor + velocity * dt
    w = 2.0 * np.pi * frequency
    k = sprung_mass * w * w
    c = 2.0 * damping_ratio * sprung_mass * w
    if -k * anchor > hi:                              # breaks loose: the anchor slides along
        anchor = -hi / k
    elif -k * anchor < lo:
        anchor = -lo / k
    force = min(max(-k * anchor - c * velocity, lo), hi)
    return anchor, timer, True, force


@jit
def brake_window(limit: float, brake: float, drive: float, radius: float) -> tuple[float, float]:
    """The longitudinal force range ``(lo, hi)`` (N) a braked, locked wheel can take from the
    road and stay locked: within friction x load ``limit``, and with the road's torque
    ``-F radius`` and the ``drive`` torque (N m) together within the ``brake`` torque,
    ``|drive - F radius| <= brake``. The drive torque only narrows the brake's own range
    ``+-brake / radius`` (it is the last update's; a range widened by it was left, and the
    wheel turned, when the drive eased). Where no force keeps the wheel locked, one bounded
    point (the wheel turns and the sticky state ends)."""
    lo = max(-limit, (max(drive, 0.0) - brake) / radius)
    hi = min(limit, (min(drive, 0.0) + brake) / radius)
    if lo > hi:
        if drive > 0.0:
            lo = hi
        else:
            hi = lo
    return lo, hi
