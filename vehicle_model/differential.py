"""Differentials: how the clutch torque is shared over the driven wheels.

A differential gives, per vehicle and wheel group, the *torque shares* ``beta``: group ``g``
receives ``beta_g`` of the torque on the differential's input shaft (``(n_vehicles, n_groups)``).
The same shares weight the wheel spins in the input shaft's speed, ``sum(beta * omega)`` (the
clutch's output speed, before the gear ratio). That is the kinematics of an ideal, lossless
differential: a mechanism that hands out torques ``beta_g T`` passes power ``T sum(beta_g
omega_g)`` to its outputs, so by virtual work its input must turn at ``sum(beta_g omega_g)`` for
it to take exactly that power; a planetary centre differential with a 45 : 55 torque split turns
its carrier at ``0.45 omega_front + 0.55 omega_rear``. Any other speed weights ``alpha`` make
the differential a source or sink of ``T sum((beta - alpha) omega)``: PhysX (and the 6x6 post's
fork of it) keeps the base split as ``alpha`` while biasing or vectoring ``beta``, which creates
energy wherever ``beta`` favours the faster wheels under drive, or the slower wheels under engine
braking (see ``docs/architecture.md``). Here every type, the commanded ``torque_split`` and the
tank's thrusts included, uses one set of shares for both, so the differential never creates
or destroys energy and all drivetrain losses are the clutch's (``strength x slip^2``), the
engine's and bearings' damping and the brakes.

Wheel groups are single wheels, except for the tank, whose left wheels form one group and right
wheels another (the track constraint: every wheel of a side spins at the same speed), and the
locked ``four_wheel`` differential, each of whose driven axles is one group (a spool).

Types:

* ``four_wheel`` - PhysX 4W: open or limited slip; ``4wd``/``fwd``/``rwd``; front/rear and left/right
  splits; a limited-slip pair moves torque from the faster to the slower wheel once their speed
  ratio exceeds the bias (PhysX's rule). Being lossless, it is a torque-biasing differential
  whose input follows the wheel that takes the torque, not a friction pack that heats up.
  Wheels beyond the four are undriven.
  ``kind = "locked"``: a spool (a welded or locked differential, as drift and off-road cars
  use): the two wheels of each driven axle are one shaft, one spinning group whose inertia,
  tyre, bearing and brake torques are summed, so they turn at one speed whatever their grip
  (the torque each wheel takes is whatever its tyre asks of the shaft; reported as half the
  axle's each). ``4wd``: the two spools share the torque by ``front_rear_split`` through an
  open centre differential. Exact and lossless like the others: the constraint is kinematic,
  not a torque rule that chases the wheel speeds (a limited slip at bias 1 hands the torque
  to whichever wheel is slower, discontinuously).
* ``multi_wheel`` - PhysX NW: equal split over the driven wheels.
* ``torque_vectoring`` - grounded driven wheels share torque in proportion to their suspension
  force, airborne ones get ``air_share`` each; with fewer than ``min_wheels_on_ground`` wheels on
  the ground it falls back to the equal split. The airborne wheels' shares must leave the
  grounded ones most of the torque (the 6x6 post's "extremely small" amount in the air), so at
  most ``n_driven - min_wheels_on_ground`` wheels in the air times ``air_share`` must stay
  below :data:`MAX_AIR_TOTAL`. An airborne wheel, with a small share, also counts little in the
  engine's speed: it can spin up freely without dragging the engine along.
* ``tank`` - two groups (left, right of the wheels' centre line), signed shares
  ``thrust_side / (|thrust_l| + |thrust_r|)``;
  ``standard`` mode clips thrust to [0, 1] (a negative stick brakes that side), ``special`` lets a
  side be driven backwards so the tank can pivot about its centre.
* ``direct`` - no engine: per-wheel torques from the commands (PhysX NoDrive).

Except for the tank (whose signed shares have ``sum(|beta|) = 1``) every ``beta`` sums to 1 over
the driven wheels.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import VehicleConfigError
from .jit import jit
from .layout import (
    FOUR_WHEEL,
    TANK,
    TORQUE_VECTORING,
)
from .params import param, validate_fields
from .suspension import centre_line_y

FOUR_WD, FWD, RWD = range(3)   # layout.DRIVES
#: Largest total torque ratio torque vectoring may give the airborne wheels (the rest goes to
#: the grounded ones).
MAX_AIR_TOTAL = 0.5


#: The ``[differential]`` keys each type reads besides ``type`` (a vehicle file giving a key its
#: type does not read is refused: ``driven`` on a four_wheel differential drove all four wheels).
KEYS_READ = {
    "direct": (),
    "four_wheel": ("kind", "drive", "front_rear_split", "front_left_right_split",
                   "rear_left_right_split", "front_bias", "rear_bias", "centre_bias", "wheels"),
    "multi_wheel": ("driven",),
    "torque_vectoring": ("driven", "air_share", "min_wheels_on_ground"),
    "tank": ("tank_mode",),
}


@dataclass(frozen=True)
class DifferentialParams:
    """Differential settings. Wheel references are indices (the TOML file names wheels)."""

    type: str = param("direct", shape="choice",
                      choices=("direct", "four_wheel", "multi_wheel", "torque_vectoring", "tank"),
                      doc="differential model", packed="diff_type")
    kind: str = param("limited_slip", shape="choice", choices=("open", "limited_slip", "locked"),
                      doc="four_wheel: open, limited slip or locked (each driven axle a spool: "
                          "its wheels turn at one speed)")
    drive: str = param("rwd", shape="choice", choices=("4wd", "fwd", "rwd"),
                       doc="four_wheel: driven axles", packed=True)
    front_rear_split: float = param(0.45, lo=0.0, hi=1.0, shape="scalar",
                                    doc="four_wheel 4wd: front share of the torque", packed=True)
    front_left_right_split: float = param(0.5, lo=0.0, hi=1.0, shape="scalar",
                                          doc="four_wheel: front-left share of the front torque", packed=True)
    rear_left_right_split: float = param(0.5, lo=0.0, hi=1.0, shape="scalar",
                                         doc="four_wheel: rear-left share of the rear torque", packed=True)
    front_bias: float = param(1.3, lo=1.0, hi=100.0, shape="scalar",
                              doc="limited slip: allowed front wheel speed ratio", packed=True)
    rear_bias: float = param(1.3, lo=1.0, hi=100.0, shape="scalar",
                             doc="limited slip: allowed rear wheel speed ratio", packed=True)
    centre_bias: float = param(1.3, lo=1.0, hi=100.0, shape="scalar",
                               doc="limited slip 4wd: allowed front/rear axle speed ratio", packed=True)
    air_share: float = param(0.01, lo=0.0, hi=0.2, shape="scalar",
                             doc="torque_vectoring: ratio given to each airborne wheel; "
                                 "(n_driven - min_wheels_on_ground) x air_share < 0.5", packed=True)
    min_wheels_on_ground: int = param(3, lo=1, hi=64, shape="scalar", integer=True,
                                      doc="torque_vectoring: below this, split equally", packed=True)
    tank_mode: str = param("special", shape="choice", choices=("standard", "special"),
                           doc="tank: standard (brake a side) or special (reverse a side)")
    four_wheels: tuple[int, ...] = field(default=(0, 1, 2, 3))   # FL, FR, RL, RR indices
    driven: tuple[int, ...] = ()                                 # multi_wheel / torque_vectoring

    def validate(self, prefix: str = "differential.", where: str = "") -> None:
        """Raise VehicleConfigError naming the first field out of range or a wheel referred to
        twice (see :meth:`validate_wheels` for the checks that need the wheels)."""
        validate_fields(self, prefix, where)
        pre = f"{where}: " if where else ""
        if len(self.four_wheels) != 4:
            raise VehicleConfigError(f"{pre}{prefix}four_wheels = {self.four_wheels}; needs 4 "
                                     "wheels (front_left, front_right, rear_left, rear_right)")
        for name in ("four_wheels", "driven"):
            refs = list(getattr(self, name))
            twice = [w for w in refs if refs.count(w) > 1]
            if twice:
                raise VehicleConfigError(f"{pre}{prefix}{name} = {tuple(refs)} refers to wheel "
                                         f"{twice[0]} twice; each wheel may appear once")

    def validate_wheels(self, positions: np.ndarray, prefix: str = "differential.",
                        where: str = "") -> None:
        """Checks against the vehicle's wheels (``positions`` ``(n_wheels, 3)``, m): wheel
        indices in range, torque vectoring's airborne shares, a tank with wheels on both sides."""
        pre = f"{where}: {prefix}" if where else prefix
        n = len(positions)
        for name in ("four_wheels", "driven"):
            refs = getattr(self, name)
            if (name == "driven" or self.type == "four_wheel") and any(
                    not 0 <= w < n for w in refs):
                raise VehicleConfigError(f"{pre}{name} = {tuple(refs)} refers to a wheel outside "
                                         f"0..{n - 1} ({n} wheels)")
        if self.type == "torque_vectoring":
            n_air = (len(self.driven) or n) - self.min_wheels_on_ground
            if n_air * self.air_share >= MAX_AIR_TOTAL:
                raise VehicleConfigError(
                    f"{pre}air_share = {self.air_share:g}: with {n_air} driven wheels in the air "
                    f"(driven wheels - min_wheels_on_ground) they would get {n_air} x "
                    f"{self.air_share:g} = {n_air * self.air_share:g} of the torque; allowed < "
                    f"{MAX_AIR_TOTAL:g} (lower air_share or raise min_wheels_on_ground)")
        if self.type == "tank":
            centre = centre_line_y(positions)
            on_line = np.flatnonzero(np.abs(positions[:, 1] - centre) < 1e-6)
            if len(on_line):
                raise VehicleConfigError(
                    f"{pre}type = 'tank': wheel {on_line[0]} lies on the centre line y = "
                    f"{centre:g} m between the tracks; every wheel must be on the left or right")

    @property
    def has_engine(self) -> bool:
        return self.type != "direct"


def wheel_groups(p: DifferentialParams, positions: np.ndarray) -> np.ndarray:
    """One-hot ``(n_wheels, n_groups)`` map of wheels to spinning groups (tank: left, right;
    locked ``four_wheel``: each driven axle's pair one group, numbered at its first wheel)."""
    n = len(positions)
    if p.type == "tank":                         # sides of the centre line, not of the origin
        left = positions[:, 1] > centre_line_y(positions)
        return np.stack([left, ~left], axis=1).astype(float)
    label = np.arange(n)
    if p.type == "four_wheel" and p.kind == "locked":
        fl, fr, rl, rr = p.four_wheels
        if p.drive != "rwd":
            label[fr] = label[fl]
        if p.drive != "fwd":
            label[rr] = label[rl]
    _, group = np.unique(label, return_inverse=True)   # groups in the order of first wheels
    return np.eye(group.max() + 1)[group]


def base_split(p: DifferentialParams, n_wheels: int) -> np.ndarray:
    """Static shares ``(n_wheels,)``: the open differential's, from which the limited-slip and
    torque-vectoring rules start (0 for every wheel of a tank and a direct drive)."""
    out = np.zeros(n_wheels)
    if p.type == "four_wheel":
        fl, fr, rl, rr = p.four_wheels
        front = {"4wd": p.front_rear_split, "fwd": 1.0, "rwd": 0.0}[p.drive]
        out[[fl, fr]] = front * np.array([p.front_left_right_split, 1 - p.front_left_right_split])
        out[[rl, rr]] = (1 - front) * np.array([p.rear_left_right_split,
                                                1 - p.rear_left_right_split])
    elif p.type in ("multi_wheel", "torque_vectoring"):
        driven = list(p.driven) or list(range(n_wheels))
        out[driven] = 1.0 / len(driven)
    return out


@jit
def _limited_slip(w1: float, w2: float, bias: float, share1: float) -> tuple[float, float]:
    """PhysX-style torque split of a pair: ``share1`` by default; past ``bias`` the faster wheel's
    share shrinks by ``delta = (w_max - bias*w_min)/w_max`` and the slower's grows by it."""
    a1, a2 = abs(w1), abs(w2)
    wmax, wmin = max(a1, a2), min(a1, a2)
    delta = max(wmax - bias * wmin, 0.0) / wmax if (w1 * w2 >= 0.0 and wmax > 1e-6) else 0.0
    if a1 > a2:
        f1, f2 = share1 * (1.0 - delta), (1.0 - share1) * (1.0 + delta)
    else:
        f1, f2 = share1 * (1.0 + delta), (1.0 - share1) * (1.0 - delta)
    total = f1 + f2
    return (f1 / total, f2 / total) if total > 0.0 else (share1, 1.0 - share1)


@jit
def _four_wheel_lsd(vp: np.ndarray, omega: np.ndarray, base: np.ndarray, beta: np.ndarray) -> None:
    fl, fr = int(vp.four_wheels[0]), int(vp.four_wheels[1])
    rl, rr = int(vp.four_wheels[2]), int(vp.four_wheels[3])
    front_total, rear_total = base[fl] + base[fr], base[rl] + base[rr]
    drive = int(vp.drive)
    if drive == FOUR_WD:
        front_total, rear_total = _limited_slip(omega[fl] + omega[fr], omega[rl] + omega[rr],
                                                vp.centre_bias, vp.front_rear_split)
    if drive != RWD:
        a, b = _limited_slip(omega[fl], omega[fr], vp.front_bias, vp.front_left_right_split)
        beta[fl], beta[fr] = front_total * a, front_total * b
    if drive != FWD:
        a, b = _limited_slip(omega[rl], omega[rr], vp.rear_bias, vp.rear_left_right_split)
        beta[rl], beta[rr] = rear_total * a, rear_total * b


@jit
def _torque_vectoring(vp: np.ndarray, base: np.ndarray, in_contact: np.ndarray,
                      spring_force: np.ndarray, beta: np.ndarray) -> None:
    n_air, n_ground, total = 0, 0, 0.0
    for i in range(len(base)):
        if base[i] > 0.0:
            if in_contact[i] > 0.5:
                n_ground += 1
                total += abs(spring_force[i])
            else:
                n_air += 1
    if n_ground < vp.min_wheels_on_ground or total <= 0.0:
        return                                            # too few on the ground: equal split
    for i in range(len(base)):
        if base[i] <= 0.0:
            beta[i] = 0.0
        elif in_contact[i] > 0.5:
            beta[i] = (1.0 - n_air * vp.air_share) * abs(spring_force[i]) / total
        else:
            beta[i] = vp.air_share


@jit
def ratios(vp: np.ndarray, base: np.ndarray, group: np.ndarray, omega: np.ndarray,
           in_contact: np.ndarray, spring_force: np.ndarray, thrust_left: float,
           thrust_right: float, shares: np.ndarray) -> None:
    """Torque shares ``beta`` (per wheel group) of one vehicle: the torque ratios and the speed
    weights of the differential's input (see the module docstring).

    Args:
        vp: the packed vehicle record (``pk.vehicle[0]``).
        base: static split per wheel (:func:`base_split`).
        group: each wheel's group index (:func:`wheel_groups`); a group's static share is its
            wheels' sum (a spool takes its axle's). The limited-slip and torque-vectoring rules
            have a group per wheel.
        omega: wheel spins (rad/s); in_contact: wheel contact (bool or 0/1); spring_force: N.
        thrust_left, thrust_right: tank track commands in [-1, 1].
        shares: output array, one entry per group.
    """
    if int(vp.diff_type) == TANK:
        left, right = thrust_left, thrust_right
        if vp.tank_special < 0.5:
            left, right = min(max(left, 0.0), 1.0), min(max(right, 0.0), 1.0)
        total = abs(left) + abs(right)
        shares[0], shares[1] = (left / total, right / total) if total > 0.0 else (0.0, 0.0)
        return
    shares[:] = 0.0
    for w in range(len(base)):
        shares[int(group[w])] += base[w]
    if int(vp.diff_type) == FOUR_WHEEL and vp.limited_slip > 0.5:
        _four_wheel_lsd(vp, omega, base, shares)
    elif int(vp.diff_type) == TORQUE_VECTORING:
        _torque_vectoring(vp, base, in_contact, spring_force, shares)
