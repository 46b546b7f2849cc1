"""Running the tyre models: per-wheel dispatch, and array drivers for sweeps, plots and tests."""

from __future__ import annotations

import numpy as np

from . import layout as L
from . import tire, tire_arcade, tire_curve, tire_custom, tire_magic, tire_physx
from .jit import jit

PHYSX, ARCADE, CURVE, MAGIC_FORMULA, CUSTOM = range(5)


@jit
def forces(w: np.ndarray, x: np.ndarray, families: np.ndarray, family_index: np.ndarray,
           points: np.ndarray) -> tuple[float, float, float, float]:
    """``(f_long, f_lat, moment, road_torque)`` of one wheel by its model (custom wheels are run
    separately, see ``tire_custom.call``, and give zeros here)."""
    model = int(w[L.TIRE_MODEL])
    if model == PHYSX:
        return tire_physx.forces(w, x)
    if model == ARCADE:
        return tire_arcade.forces(w, x)
    if model == CURVE:
        return tire_curve.forces(w, x, families, family_index, points)
    if model == MAGIC_FORMULA:
        return tire_magic.forces(w, x)
    return 0.0, 0.0, 0.0, 0.0


@jit
def _evaluate_rows(wheel: np.ndarray, x: np.ndarray, families: np.ndarray,
                   family_index: np.ndarray, points: np.ndarray, out: np.ndarray) -> None:
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[i, j, 0], out[i, j, 1], out[i, j, 2], out[i, j, 3] = forces(
                wheel[j], x[i, j], families, family_index, points)


def evaluate(packed: L.Packed, x: tire.TireInputs, contact: np.ndarray | None = None):
    """Run each wheel's model over arrays (the compiled per-wheel :func:`forces`, looped).

    Args:
        packed: the vehicle's :func:`~traction.vehicle_model.pack.pack` arrays.
        x: tyre inputs, ``(n, n_wheels)`` arrays.
        contact: wheels on the ground (others give zeros); all if None.

    Returns:
        ``(f_long, f_lat, moment, road_torque)``, ``(n, n_wheels)`` each (N, N, N m, N m).
    """
    rows = x.rows()
    out = np.zeros(rows.shape[:2] + (4,))
    _evaluate_rows(packed.wheel, rows, packed.families, packed.family_index, packed.points, out)
    custom = packed.wheel[:, L.TIRE_MODEL] == CUSTOM
    if custom.any():
        index = int(packed.wheel[custom][0, L.CUSTOM_INDEX])
        for i in range(len(rows)):
            out[i, custom] = tire_custom.call(index, rows[i, custom],
                                              packed.wheel[custom, L.RADIUS])
    if contact is not None:
        out = np.where(np.asarray(contact)[..., None], out, 0.0)
    return tuple(out[..., k] for k in range(4))


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
    packed = p.packed
    w = packed.wheel[wheel]
    r = w[L.RADIUS]
    n = sr.size
    v_long = np.full(n, speed)
    v_lat = speed * np.tan(alpha.ravel())
    omega = speed * (1.0 + sr.ravel()) / r
    slips = np.array([tire.slips(a, b, c * r, p.simulation.min_long_slip_denominator,
                                 p.simulation.min_lat_slip_denominator)
                      for a, b, c in zip(v_long, v_lat, omega, strict=True)]).reshape(n, 2)
    physx = w[L.TIRE_MODEL] == PHYSX
    mu = friction * np.array([tire.friction_multiplier(w, s) if physx else 1.0 for s in slips[:, 0]])
    rest = w[L.SPRUNG_MASS] * 9.81

    def col(v):
        return np.broadcast_to(np.asarray(v, float), (n,))[:, None]

    x = tire.TireInputs(col(v_long), col(v_lat), col(omega), col(slips[:, 0]), col(slips[:, 1]),
                        col(0.0), col(mu), col(friction), col(load), col(rest), col(load / rest),
                        9.81, col(dt), col(0.0), col(1e9), col(1e9))
    one = packed._replace(wheel=packed.wheel[wheel:wheel + 1])
    f_long, f_lat, _, _ = evaluate(one, x)
    return f_long.reshape(sr.shape), f_lat.reshape(sr.shape)
