"""Running the tyre models: per-wheel dispatch, and sweeps over slip for plots and tests."""

from __future__ import annotations

import numpy as np

from . import tire, tire_arcade, tire_curve, tire_custom, tire_magic, tire_physx


def evaluate(p, x: tire.TireInputs, contact: np.ndarray):
    """Run each tyre model on its wheels; ``(f_long, f_lat, moment, road_torque)``."""
    ti = p.tires
    out = [np.zeros_like(x.load) for _ in range(4)]
    for name, fn in (("physx", None), ("arcade", tire_arcade.forces),
                     ("curve", None), ("magic_formula", tire_magic.forces), ("custom", None)):
        mask = ti.uses(name)
        if not mask.any():
            continue
        if name == "physx":
            fl, fy, mz = tire_physx.forces(ti, x.long_slip, x.lat_slip, x.camber, x.friction,
                                           x.load, x.rest_load, x.normalised_load, x.gravity)
            res = (fl, fy, mz, -fl * x.radius)
        elif name == "curve":
            res = tire_curve.forces(ti, x, p.curve_sets, mask)
        elif name == "custom":
            res = tire_custom.forces(p.custom_tire, ti, x, mask)
        else:
            res = fn(ti, x)
        for o, r in zip(out, res, strict=True):
            o[...] = np.where(mask & contact, r, o)
    return tuple(out)


def sweep(p, wheel: int, slip_ratio: np.ndarray, slip_angle: np.ndarray, load: float,
          speed: float = 15.0, friction: float = 1.0, dt: float = 0.002):
    """Steady-state forces of wheel ``wheel``'s tyre over a grid of slips.

    The wheel rolls at ``speed`` (m/s) with spin ``speed (1 + slip_ratio) / r`` and lateral
    velocity ``speed tan(slip_angle)``; no drive torque, clamps see a large useful mass.

    Args:
        p: vehicle parameters.
        wheel: wheel index.
        slip_ratio, slip_angle: arrays of the same shape (slip angle in rad).
        load: tyre load (N).

    Returns:
        ``(f_long, f_lat)`` arrays of the grid's shape (N).
    """
    sr, alpha = np.broadcast_arrays(np.asarray(slip_ratio, float), np.asarray(slip_angle, float))
    flat_sr, flat_a = sr.ravel()[:, None], alpha.ravel()[:, None]
    n = flat_sr.shape[0]
    r = p.wheels.radius[wheel:wheel + 1]
    sub = tire.TireParams(**{f: getattr(p.tires, f)[wheel:wheel + 1]
                             for f in tire.TireParams.__dataclass_fields__})
    v_long = np.full((n, 1), speed)
    v_lat = speed * np.tan(flat_a)
    omega = speed * (1.0 + flat_sr) / r
    ls, la = tire.slips(v_long, v_lat, omega * r, p.simulation.min_long_slip_denominator,
                        p.simulation.min_lat_slip_denominator)
    rest = p.suspension.sprung_mass[wheel:wheel + 1] * 9.81
    full = np.full((n, 1), 1.0)
    mu = friction * np.where(sub.uses("physx"), tire.friction_multiplier(sub, ls), 1.0)
    x = tire.TireInputs(v_long, v_lat, omega, r, p.wheels.moi[wheel:wheel + 1], ls, la, 0 * full,
                        mu, friction * full, load * full, rest, load / rest * full, 9.81,
                        np.full((n, 1), dt), 0 * full, 1e9 * full, 1e9 * full)

    class _One:
        tires = sub
        curve_sets = p.curve_sets
        custom_tire = p.custom_tire

    f_long, f_lat, _, _ = evaluate(_One, x, np.ones((n, 1), bool))
    return f_long.reshape(sr.shape), f_lat.reshape(sr.shape)
