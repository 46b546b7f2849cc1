"""Gearbox and autobox.

Gears are numbered for people: ``-1`` reverse, ``0`` neutral, ``1..N`` forward. A gear change
spends ``switch_time`` in neutral before the target gear engages. The autobox shifts one gear at a
time when ``engine omega / max_omega`` leaves ``[down_ratio, up_ratio]`` of the current forward
gear, only after ``latency`` has passed since its last decision and never while a change is in
progress; it never shifts below first gear (so it cannot cycle neutral <-> first), and the
throttle is disconnected while an automatic change is in progress.

An up-shift from gear ``g`` at the threshold leaves the engine at ``up[g] * r[g+1] / r[g]`` of
``max_omega`` (the wheels' speed does not change); unless that stays clearly above ``down[g+1]``
the autobox shifts straight back down, and so on (gear hunting), so ``validate`` requires
``up[g] * r[g+1] / r[g] >= (1 + SHIFT_MARGIN) * down[g+1]``.

With the autobox on, ``validate`` also requires ``latency > switch_time`` (PhysX Tuning Guide and
Troubleshooting, "the vehicle never goes beyond first gear"): the throttle is cut during the
change, so the engine slows in neutral; with a latency no longer than the switch time the autobox
decides the instant the change completes, before the clutch has brought the engine back up to
the new gear, sees it below the down threshold and shifts straight back (1 -> 2 -> 1 -> ..., half
the time in neutral). PhysX advises a latency *significantly* above the switch time (the clutch
needs a moment to re-couple the engine): the presets use 3-4x.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import VehicleConfigError
from .jit import jit
from .layout import field_view
from .params import freeze_arrays, param, validate_fields

#: Relative margin by which the engine speed right after an automatic up-shift must exceed the
#: next gear's down-shift threshold (the vehicle may slow down during the change in neutral).
SHIFT_MARGIN = 0.1


@dataclass(frozen=True)
class GearboxParams:
    """Gear ratios and shifting (``forward_ratios``, ``up_ratios``, ``down_ratios``: one per gear)."""

    reverse_ratio: float = param(-4.0, unit="-", lo=-100.0, hi=0.0, hi_open=True, shape="scalar",
                                 doc="reverse gear ratio (negative)")
    forward_ratios: np.ndarray = param((4.0, 2.0, 1.5, 1.1, 1.0), unit="-", lo=0.0, hi=100.0,
                                       lo_open=True, shape="list", doc="ratio of gears 1..N")
    final_ratio: float = param(4.0, unit="-", lo=0.0, hi=100.0, lo_open=True, shape="scalar",
                               doc="final drive ratio multiplying every gear", packed=True)
    switch_time: float = param(0.5, unit="s", lo=0.0, hi=10.0, shape="scalar",
                               doc="time spent in neutral during a change", packed=True)
    autobox: float = param(1.0, unit="-", lo=0.0, hi=1.0, shape="scalar", integer=True,
                           doc="1 = automatic gearbox on, 0 = manual only", packed=True)
    up_ratios: np.ndarray = param((0.8, 0.8, 0.8, 0.8, 0.8), unit="-", lo=0.0, hi=1.0,
                                  shape="list", doc="shift up above this omega/max_omega, per gear; "
                                  "up[g] r[g+1] / r[g] >= 1.1 down[g+1] (no hunting)")
    down_ratios: np.ndarray = param((0.35, 0.35, 0.35, 0.35, 0.35), unit="-", lo=0.0, hi=1.0,
                                    shape="list", doc="shift down below this omega/max_omega")
    latency: float = param(2.0, unit="s", lo=0.0, hi=60.0, shape="scalar",
                           doc="minimum time between autobox decisions; must exceed switch_time "
                           "when autobox = 1 (use several times it)", packed=True)

    def __post_init__(self):
        freeze_arrays(self)

    @property
    def n_forward(self) -> int:
        return len(self.forward_ratios)

    def validate(self, prefix: str = "gearbox.", where: str = "") -> None:
        """Range checks plus one up/down ratio per forward gear with down < up; with the autobox
        on, no gear hunting and ``latency > switch_time`` (see the module docstring)."""
        validate_fields(self, prefix, where)
        pre = f"{where}: " if where else ""
        n = self.n_forward
        for name in ("up_ratios", "down_ratios"):
            if len(getattr(self, name)) != n:
                raise VehicleConfigError(f"{pre}{prefix}{name} has {len(getattr(self, name))} "
                                         f"values; need one per forward gear ({n})")
        if n == 0:
            raise VehicleConfigError(f"{pre}{prefix}forward_ratios is empty; need at least one "
                                     "forward gear")
        if np.any(self.down_ratios >= self.up_ratios):
            i = int(np.argmax(self.down_ratios >= self.up_ratios))
            raise VehicleConfigError(f"{pre}{prefix}down_ratios[{i}] = {self.down_ratios[i]:g} must "
                                     f"be below up_ratios[{i}] = {self.up_ratios[i]:g}")
        if self.autobox > 0.0:
            self._check_no_hunting(pre + prefix)
            if self.latency <= self.switch_time:
                raise VehicleConfigError(
                    f"{pre}{prefix}latency = {self.latency:g} s must exceed {prefix}switch_time = "
                    f"{self.switch_time:g} s while the autobox is on: otherwise it shifts back "
                    "down the moment a change completes, the engine still slowed by the neutral "
                    "phase (neutral <-> first cycling); use several times the switch time, or "
                    "autobox = 0")

    def _check_no_hunting(self, prefix: str) -> None:
        """After an automatic up-shift the engine must stay above the next gear's down threshold."""
        r, up, down = self.forward_ratios, self.up_ratios, self.down_ratios
        after = up[:-1] * r[1:] / r[:-1]               # omega/max_omega right after g -> g+1
        low = after < (1.0 + SHIFT_MARGIN) * down[1:]
        if np.any(low):
            g = int(np.argmax(low))
            raise VehicleConfigError(
                f"{prefix}up_ratios[{g}] = {up[g]:g}: an up-shift from gear {g + 1} leaves the "
                f"engine at up_ratios[{g}] * forward_ratios[{g + 1}] / forward_ratios[{g}] = "
                f"{after[g]:.3g} of max_omega, not above (1 + {SHIFT_MARGIN:g}) * "
                f"down_ratios[{g + 1}] = {(1.0 + SHIFT_MARGIN) * down[g + 1]:.3g}: the autobox "
                "would shift straight back down; raise up_ratios or lower down_ratios")

    def ratios(self) -> np.ndarray:
        """Ratio table indexed by ``gear + 1``: [reverse, neutral, 1st, ...]."""
        return np.concatenate([[self.reverse_ratio, 0.0], self.forward_ratios])


@jit
def shift(vp: np.ndarray, shift_up: np.ndarray, shift_down: np.ndarray, gears: np.ndarray,
          timers: np.ndarray, want: int, engine_ratio: float, dt: float) -> None:
    """One vehicle's gearbox over ``dt``: a manual request, running changes, the autobox.

    Args:
        vp: the packed vehicle record (``pk.vehicle[0]``).
        shift_up, shift_down: autobox thresholds per forward gear (omega / max_omega).
        gears: the vehicle's gear record (``layout.GEAR_STATE``), updated in place.
        timers: the vehicle's state record (its ``switch_timer``, ``autobox_timer``), updated in
            place.
        want: requested gear (a change starts if it differs from the current one and no change
            is running; clipped to reverse..top).
        engine_ratio: engine omega / max_omega.
        dt: step (s).
    """
    n_forward = int(vp.n_forward)
    if want != gears.gear and timers.switch_timer <= 0.0:            # manual request
        target = min(max(want, -1), n_forward)
        if target != gears.gear:
            gears.target, gears.auto_shift = target, 0
            timers.switch_timer = vp.switch_time
            if timers.switch_timer <= 0.0:
                gears.gear = target
    if timers.switch_timer > 0.0:                                     # change in progress
        timers.switch_timer = max(timers.switch_timer - dt, 0.0)
        if timers.switch_timer <= 0.0:
            gears.gear = gears.target
    else:
        timers.switch_timer = 0.0
    if timers.switch_timer <= 0.0:
        gears.auto_shift = 0
    timers.autobox_timer += dt
    if vp.autobox <= 0.0:
        return
    gear = gears.gear
    if timers.switch_timer > 0.0 or timers.autobox_timer < vp.latency or gear < 1:
        return
    idx = min(max(gear - 1, 0), n_forward - 1)
    step = 0
    if engine_ratio > shift_up[idx] and gear < n_forward:
        step = 1
    elif engine_ratio < shift_down[idx] and gear > 1:
        step = -1
    if step != 0:
        gears.target, gears.auto_shift = gear + step, 1
        timers.switch_timer = vp.switch_time
        timers.autobox_timer = 0.0
        if timers.switch_timer <= 0.0:
            gears.gear = gears.target


@jit
def effective_ratio(vp: np.ndarray, ratios: np.ndarray, gears: np.ndarray, timers: np.ndarray) -> float:
    """Gear x final ratio seen by the clutch (0 while a change is in progress or in neutral)."""
    if timers.switch_timer > 0.0:
        return 0.0
    return ratios[gears.gear + 1] * vp.final_ratio


@jit
def engaged_gear(gears: np.ndarray, timers: np.ndarray) -> int:
    """The gear that is engaged: the current gear, or 0 (neutral) while a change is in
    progress (as in PhysX, a change passes through neutral for the whole switch time)."""
    if timers.switch_timer > 0.0:
        return 0
    return gears.gear


def check_gear(gear, n_forward: int | None, name: str = "gear") -> None:
    """Raise ValueError unless every ``gear`` is a whole number in ``[-1, n_forward]`` (reverse,
    neutral, forward gears; the compiled update indexes the ratio table with it)."""
    arr = np.asarray(gear)
    top = np.inf if n_forward is None else n_forward
    bad = (arr != np.round(arr)) | (arr < -1) | (arr > top)
    if np.any(bad):
        shown = float(arr[bad].ravel()[0] if arr.ndim else arr)
        allowed = "-1 (reverse), 0 (neutral)" + ("" if n_forward is None
                                                 else f" or 1..{n_forward} (forward)")
        raise ValueError(f"{name} = {shown:g} is out of range; allowed {allowed}")


class GearboxState:
    """Per-vehicle gearbox state: named views of a vehicle state's gear and timer arrays (the
    views are not checked: put a vehicle in a gear with ``VehicleState.set_gear``, which is)."""

    def __init__(self, gears: np.ndarray, timers: np.ndarray):
        self._gears, self._timers = gears, timers

    gear = field_view("_gears", "gear", doc="current gear, -1 reverse, 0 neutral, 1.. forward; "
                       "during a change the gear being left (``outputs.gear`` is the engaged "
                       "gear: 0 then)")
    target = field_view("_gears", "target", doc="gear being changed to (== gear when idle)")
    auto_shift = field_view("_gears", "auto_shift", dtype=bool,
                             doc="the change in progress was started by the autobox")
    switch_timer = field_view("_timers", "switch_timer", doc="s left in the current change")
    autobox_timer = field_view("_timers", "autobox_timer", doc="s since the autobox last decided")
