"""Differentials: how the clutch torque is split over the driven wheels.

A differential gives, per vehicle, *torque ratios* ``beta`` (share of the clutch torque each wheel
group receives) and *speed contributions* ``alpha`` (weights of the wheel spins in the clutch's
output speed ``sum(alpha * omega)``), both ``(n_vehicles, n_groups)``. Wheel groups are single
wheels, except for the tank, whose left wheels form one group and right wheels another (the track
constraint: every wheel of a side spins at the same speed).

Types:

* ``four_wheel`` - PhysX 4W: open or limited slip; ``4wd``/``fwd``/``rwd``; front/rear and left/right
  splits; a limited-slip pair moves torque from the faster to the slower wheel once their speed
  ratio exceeds the bias. Wheels beyond the four are undriven.
* ``multi_wheel`` - PhysX NW: equal split over the driven wheels.
* ``torque_vectoring`` - grounded driven wheels share torque in proportion to their suspension
  force, airborne ones get ``air_share`` each; with fewer than ``min_wheels_on_ground`` wheels on
  the ground it falls back to the equal split.
* ``tank`` - two groups (left, right), signed ratios ``thrust_side / (|thrust_l| + |thrust_r|)``;
  ``standard`` mode clips thrust to [0, 1] (a negative stick brakes that side), ``special`` lets a
  side be driven backwards so the tank can pivot about its centre.
* ``direct`` - no engine: per-wheel torques from the commands (PhysX NoDrive).

Except for the tank (whose signed ratios have ``sum(|beta|) = 1``) every ``beta`` and ``alpha`` sums to
1 over the driven wheels.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .params import param, validate_fields


@dataclass(frozen=True)
class DifferentialParams:
    """Differential settings. Wheel references are indices (the TOML file names wheels)."""

    type: str = param("direct", shape="choice",
                      choices=("direct", "four_wheel", "multi_wheel", "torque_vectoring", "tank"),
                      doc="differential model")
    kind: str = param("limited_slip", shape="choice", choices=("open", "limited_slip"),
                      doc="four_wheel: open or limited slip")
    drive: str = param("rwd", shape="choice", choices=("4wd", "fwd", "rwd"),
                       doc="four_wheel: driven axles")
    front_rear_split: float = param(0.45, lo=0.0, hi=1.0, shape="scalar",
                                    doc="four_wheel 4wd: front share of the torque")
    front_left_right_split: float = param(0.5, lo=0.0, hi=1.0, shape="scalar",
                                          doc="four_wheel: front-left share of the front torque")
    rear_left_right_split: float = param(0.5, lo=0.0, hi=1.0, shape="scalar",
                                         doc="four_wheel: rear-left share of the rear torque")
    front_bias: float = param(1.3, lo=1.0, hi=100.0, shape="scalar",
                              doc="limited slip: allowed front wheel speed ratio")
    rear_bias: float = param(1.3, lo=1.0, hi=100.0, shape="scalar",
                             doc="limited slip: allowed rear wheel speed ratio")
    centre_bias: float = param(1.3, lo=1.0, hi=100.0, shape="scalar",
                               doc="limited slip 4wd: allowed front/rear axle speed ratio")
    air_share: float = param(0.01, lo=0.0, hi=0.2, shape="scalar",
                             doc="torque_vectoring: ratio given to each airborne wheel")
    min_wheels_on_ground: int = param(3, lo=1, hi=64, shape="scalar",
                                      doc="torque_vectoring: below this, split equally")
    tank_mode: str = param("special", shape="choice", choices=("standard", "special"),
                           doc="tank: standard (brake a side) or special (reverse a side)")
    four_wheels: tuple[int, ...] = field(default=(0, 1, 2, 3))   # FL, FR, RL, RR indices
    driven: tuple[int, ...] = ()                                 # multi_wheel / torque_vectoring

    def validate(self, prefix: str = "differential.", where: str = "") -> None:
        """Raise VehicleConfigError naming the first field out of range."""
        validate_fields(self, prefix, where)

    @property
    def has_engine(self) -> bool:
        return self.type != "direct"


def wheel_groups(p: DifferentialParams, positions: np.ndarray) -> np.ndarray:
    """One-hot ``(n_wheels, n_groups)`` map of wheels to spinning groups (tank: left, right)."""
    n = len(positions)
    if p.type == "tank":
        left = positions[:, 1] > 0.0
        return np.stack([left, ~left], axis=1).astype(float)
    return np.eye(n)


def base_split(p: DifferentialParams, n_wheels: int) -> np.ndarray:
    """Static ratios ``(n_wheels,)`` (speed contributions for all types but tank)."""
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


def _limited_slip(w1, w2, bias, share1):
    """PhysX-style torque split of a pair: ``share1`` by default; past ``bias`` the faster wheel's
    share shrinks by ``delta = (w_max - bias*w_min)/w_max`` and the slower's grows by it."""
    a1, a2 = np.abs(w1), np.abs(w2)
    wmax, wmin = np.maximum(a1, a2), np.minimum(a1, a2)
    same = (w1 * w2 >= 0.0) & (wmax > 1e-6)
    delta = np.where(same, np.maximum(wmax - bias * wmin, 0.0) / np.where(same, wmax, 1.0), 0.0)
    first_faster = a1 > a2
    f1 = share1 * np.where(first_faster, 1.0 - delta, 1.0 + delta)
    f2 = (1.0 - share1) * np.where(first_faster, 1.0 + delta, 1.0 - delta)
    total = f1 + f2
    safe = np.where(total > 0, total, 1.0)
    return np.where(total > 0, f1 / safe, share1), np.where(total > 0, f2 / safe, 1.0 - share1)


def _four_wheel_lsd(p: DifferentialParams, omega: np.ndarray, base: np.ndarray) -> np.ndarray:
    fl, fr, rl, rr = p.four_wheels
    beta = np.broadcast_to(base, omega.shape).copy()
    front_total, rear_total = base[fl] + base[fr], base[rl] + base[rr]
    if p.drive == "4wd":
        front_speed = omega[:, fl] + omega[:, fr]
        rear_speed = omega[:, rl] + omega[:, rr]
        front_total, rear_total = _limited_slip(front_speed, rear_speed, p.centre_bias,
                                                p.front_rear_split)
    if p.drive in ("4wd", "fwd"):
        a, b = _limited_slip(omega[:, fl], omega[:, fr], p.front_bias, p.front_left_right_split)
        beta[:, fl], beta[:, fr] = front_total * a, front_total * b
    if p.drive in ("4wd", "rwd"):
        a, b = _limited_slip(omega[:, rl], omega[:, rr], p.rear_bias, p.rear_left_right_split)
        beta[:, rl], beta[:, rr] = rear_total * a, rear_total * b
    return beta


def _torque_vectoring(p: DifferentialParams, base, in_contact, spring_force):
    driven = base > 0
    air = driven & ~in_contact
    ground = driven & in_contact
    n_air = air.sum(axis=1, keepdims=True)
    force = np.where(ground, np.abs(spring_force), 0.0)
    total = force.sum(axis=1, keepdims=True)
    share = (1.0 - n_air * p.air_share) * force / np.where(total > 0, total, 1.0)
    beta = np.where(air, p.air_share, share)
    enough = (ground.sum(axis=1, keepdims=True) >= p.min_wheels_on_ground) & (total > 0)
    return np.where(enough, beta, base)


def ratios(p: DifferentialParams, base: np.ndarray, omega: np.ndarray, in_contact: np.ndarray,
           spring_force: np.ndarray, thrust: np.ndarray):
    """Torque ratios and speed contributions for this substep.

    Args:
        p: differential settings.
        base: :func:`base_split` for the vehicle's wheels.
        omega: wheel spins (rad/s), ``(n_vehicles, n_wheels)``.
        in_contact: wheel contact mask.
        spring_force: suspension forces (N).
        thrust: tank track commands ``(n_vehicles, 2)`` in [-1, 1] (left, right).

    Returns:
        ``(beta, alpha)``, ``(n_vehicles, n_groups)`` each.
    """
    n = omega.shape[0]
    if p.type == "tank":
        t = thrust if p.tank_mode == "special" else np.clip(thrust, 0.0, 1.0)
        total = np.abs(t).sum(axis=1, keepdims=True)
        beta = t / np.where(total > 0, total, 1.0)
        return beta, beta
    alpha = np.broadcast_to(base, (n, base.size))
    if p.type == "four_wheel" and p.kind == "limited_slip":
        return _four_wheel_lsd(p, omega, base), alpha
    if p.type == "torque_vectoring":
        return _torque_vectoring(p, base, in_contact, spring_force), alpha
    return alpha, alpha
