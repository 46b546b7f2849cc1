"""Gearbox and autobox.

Gears are numbered for people: ``-1`` reverse, ``0`` neutral, ``1..N`` forward. A gear change
spends ``switch_time`` in neutral before the target gear engages. The autobox shifts one gear at a
time when ``engine omega / max_omega`` leaves ``[down_ratio, up_ratio]`` of the current forward
gear, only after ``latency`` has passed since its last decision and never while a change is in
progress; it never shifts below first gear (so it cannot cycle neutral <-> first), and the
throttle is disconnected while an automatic change is in progress.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import VehicleConfigError
from .params import freeze_arrays, param, validate_fields


@dataclass(frozen=True)
class GearboxParams:
    """Gear ratios and shifting (``forward_ratios``, ``up_ratios``, ``down_ratios``: one per gear)."""

    reverse_ratio: float = param(-4.0, unit="-", lo=-100.0, hi=0.0, shape="scalar",
                                 doc="reverse gear ratio (negative)")
    forward_ratios: np.ndarray = param((4.0, 2.0, 1.5, 1.1, 1.0), unit="-", lo=0.0, hi=100.0,
                                       lo_open=True, shape="list", doc="ratio of gears 1..N")
    final_ratio: float = param(4.0, unit="-", lo=0.0, hi=100.0, lo_open=True, shape="scalar",
                               doc="final drive ratio multiplying every gear")
    switch_time: float = param(0.5, unit="s", lo=0.0, hi=10.0, shape="scalar",
                               doc="time spent in neutral during a change")
    autobox: float = param(1.0, unit="-", lo=0.0, hi=1.0, shape="scalar",
                           doc="1 = automatic gearbox on, 0 = manual only")
    up_ratios: np.ndarray = param((0.65, 0.65, 0.65, 0.65, 0.65), unit="-", lo=0.0, hi=1.0,
                                  shape="list", doc="shift up above this omega/max_omega, per gear")
    down_ratios: np.ndarray = param((0.5, 0.5, 0.5, 0.5, 0.5), unit="-", lo=0.0, hi=1.0,
                                    shape="list", doc="shift down below this omega/max_omega")
    latency: float = param(2.0, unit="s", lo=0.0, hi=60.0, shape="scalar",
                           doc="minimum time between autobox decisions (> switch_time)")

    def __post_init__(self):
        freeze_arrays(self)

    @property
    def n_forward(self) -> int:
        return len(self.forward_ratios)

    def validate(self, prefix: str = "gearbox.", where: str = "") -> None:
        """Range checks plus one up/down ratio per forward gear with down < up."""
        validate_fields(self, prefix, where)
        pre = f"{where}: " if where else ""
        n = self.n_forward
        for name in ("up_ratios", "down_ratios"):
            if len(getattr(self, name)) != n:
                raise VehicleConfigError(f"{pre}{prefix}{name} has {len(getattr(self, name))} "
                                         f"values; need one per forward gear ({n})")
        if np.any(self.down_ratios >= self.up_ratios):
            i = int(np.argmax(self.down_ratios >= self.up_ratios))
            raise VehicleConfigError(f"{pre}{prefix}down_ratios[{i}] = {self.down_ratios[i]:g} must "
                                     f"be below up_ratios[{i}] = {self.up_ratios[i]:g}")

    def ratios(self) -> np.ndarray:
        """Ratio table indexed by ``gear + 1``: [reverse, neutral, 1st, ...]."""
        return np.concatenate([[self.reverse_ratio, 0.0], self.forward_ratios])


@dataclass
class GearboxState:
    """Per-vehicle gearbox state, arrays of shape ``(n_vehicles,)``."""

    gear: np.ndarray           # current gear (int), -1 reverse, 0 neutral, 1.. forward
    target: np.ndarray         # gear being changed to (== gear when idle)
    switch_timer: np.ndarray   # s left in the current change (0 when idle)
    autobox_timer: np.ndarray  # s since the autobox last decided
    auto_shift: np.ndarray     # bool: the change in progress was started by the autobox

    @classmethod
    def initial(cls, n: int, gear: int = 1) -> GearboxState:
        g = np.full(n, gear, dtype=np.int64)
        return cls(g, g.copy(), np.zeros(n), np.zeros(n), np.zeros(n, dtype=bool))


def request(p: GearboxParams, s: GearboxState, target: np.ndarray, mask: np.ndarray) -> None:
    """Start manual changes to ``target`` where ``mask`` (ignored while a change is running)."""
    idle = s.switch_timer <= 0.0
    target = np.clip(target, -1, p.n_forward)
    start = mask & idle & (target != s.gear)
    s.target = np.where(start, target, s.target)
    s.switch_timer = np.where(start, p.switch_time, s.switch_timer)
    s.auto_shift = np.where(start, False, s.auto_shift)
    _finish_instant(s)


def _finish_instant(s: GearboxState) -> None:
    done = s.switch_timer <= 0.0
    s.gear = np.where(done, s.target, s.gear)


def update(p: GearboxParams, s: GearboxState, engine_ratio: np.ndarray, dt: float) -> None:
    """Advance gear changes and run the autobox.

    Args:
        engine_ratio: engine omega / max_omega, ``(n_vehicles,)``.
        dt: step (s).
    """
    running = s.switch_timer > 0.0
    s.switch_timer = np.where(running, np.maximum(s.switch_timer - dt, 0.0), 0.0)
    s.gear = np.where(running & (s.switch_timer <= 0.0), s.target, s.gear)
    s.auto_shift &= s.switch_timer > 0.0
    s.autobox_timer = s.autobox_timer + dt
    if p.autobox <= 0.0:
        return
    idle = s.switch_timer <= 0.0
    ready = idle & (s.autobox_timer >= p.latency) & (s.gear >= 1)
    idx = np.clip(s.gear - 1, 0, p.n_forward - 1)
    up = ready & (engine_ratio > p.up_ratios[idx]) & (s.gear < p.n_forward)
    down = ready & (engine_ratio < p.down_ratios[idx]) & (s.gear > 1)
    shift = up | down
    s.target = np.where(up, s.gear + 1, np.where(down, s.gear - 1, s.target))
    s.switch_timer = np.where(shift, p.switch_time, s.switch_timer)
    s.auto_shift = s.auto_shift | shift
    s.autobox_timer = np.where(shift, 0.0, s.autobox_timer)
    _finish_instant(s)


def effective_ratio(p: GearboxParams, s: GearboxState) -> np.ndarray:
    """Gear x final ratio seen by the clutch (0 while a change is in progress or in neutral)."""
    ratio = p.ratios()[s.gear + 1] * p.final_ratio
    return np.where(s.switch_timer > 0.0, 0.0, ratio)
