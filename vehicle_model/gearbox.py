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
from .jit import jit
from .layout import (
    AUTO_SHIFT,
    AUTOBOX,
    AUTOBOX_TIMER,
    FINAL_RATIO,
    GEAR,
    LATENCY,
    N_FORWARD,
    SWITCH_TIME,
    SWITCH_TIMER,
    TARGET,
    column_view,
)
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


@jit
def shift(vp: np.ndarray, shift_up: np.ndarray, shift_down: np.ndarray, gears: np.ndarray,
          timers: np.ndarray, want: int, engine_ratio: float, dt: float) -> None:
    """One vehicle's gearbox over ``dt``: a manual request, running changes, the autobox.

    Args:
        vp: packed vehicle parameters (gearbox columns).
        shift_up, shift_down: autobox thresholds per forward gear (omega / max_omega).
        gears: the vehicle's ``(GEAR, TARGET, AUTO_SHIFT)`` state (int), updated in place.
        timers: the vehicle's state row (``SWITCH_TIMER``, ``AUTOBOX_TIMER``), updated in place.
        want: requested gear (a change starts if it differs from the current one and no change
            is running; clipped to reverse..top).
        engine_ratio: engine omega / max_omega.
        dt: step (s).
    """
    n_forward = int(vp[N_FORWARD])
    if want != gears[GEAR] and timers[SWITCH_TIMER] <= 0.0:            # manual request
        target = min(max(want, -1), n_forward)
        if target != gears[GEAR]:
            gears[TARGET], gears[AUTO_SHIFT] = target, 0
            timers[SWITCH_TIMER] = vp[SWITCH_TIME]
            if timers[SWITCH_TIMER] <= 0.0:
                gears[GEAR] = target
    if timers[SWITCH_TIMER] > 0.0:                                     # change in progress
        timers[SWITCH_TIMER] = max(timers[SWITCH_TIMER] - dt, 0.0)
        if timers[SWITCH_TIMER] <= 0.0:
            gears[GEAR] = gears[TARGET]
    else:
        timers[SWITCH_TIMER] = 0.0
    if timers[SWITCH_TIMER] <= 0.0:
        gears[AUTO_SHIFT] = 0
    timers[AUTOBOX_TIMER] += dt
    if vp[AUTOBOX] <= 0.0:
        return
    gear = gears[GEAR]
    if timers[SWITCH_TIMER] > 0.0 or timers[AUTOBOX_TIMER] < vp[LATENCY] or gear < 1:
        return
    idx = min(max(gear - 1, 0), n_forward - 1)
    step = 0
    if engine_ratio > shift_up[idx] and gear < n_forward:
        step = 1
    elif engine_ratio < shift_down[idx] and gear > 1:
        step = -1
    if step != 0:
        gears[TARGET], gears[AUTO_SHIFT] = gear + step, 1
        timers[SWITCH_TIMER] = vp[SWITCH_TIME]
        timers[AUTOBOX_TIMER] = 0.0
        if timers[SWITCH_TIMER] <= 0.0:
            gears[GEAR] = gears[TARGET]


@jit
def effective_ratio(vp: np.ndarray, ratios: np.ndarray, gears: np.ndarray, timers: np.ndarray) -> float:
    """Gear x final ratio seen by the clutch (0 while a change is in progress or in neutral)."""
    if timers[SWITCH_TIMER] > 0.0:
        return 0.0
    return ratios[gears[GEAR] + 1] * vp[FINAL_RATIO]


class GearboxState:
    """Per-vehicle gearbox state: named views of a vehicle state's gear and timer arrays."""

    def __init__(self, gears: np.ndarray, timers: np.ndarray):
        self._gears, self._timers = gears, timers

    gear = column_view("_gears", GEAR, doc="current gear, -1 reverse, 0 neutral, 1.. forward")
    target = column_view("_gears", TARGET, doc="gear being changed to (== gear when idle)")
    auto_shift = column_view("_gears", AUTO_SHIFT, dtype=bool,
                             doc="the change in progress was started by the autobox")
    switch_timer = column_view("_timers", SWITCH_TIMER, doc="s left in the current change")
    autobox_timer = column_view("_timers", AUTOBOX_TIMER, doc="s since the autobox last decided")
