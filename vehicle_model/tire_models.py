"""Running the tyre models: per-wheel dispatch, and array drivers for sweeps, plots and tests."""

from __future__ import annotations

import numpy as np
from numba import objmode

from . import layout as L
from . import tire, tire_arcade, tire_curve, tire_custom, tire_magic, tire_physx
from .jit import jit, jit_call
from .layout import Packed
from .vec import norm2

PHYSX, ARCADE, CURVE, MAGIC_FORMULA, CUSTOM = range(5)
#: A wheel its brake holds locked slides: its slip denominator is at most ``|v_long|`` plus
#: this (m/s) (see the ``tire`` module docstring; the PhysX SDK adds 0.1 m/s to a braked
#: wheel's, and 0.1 left a brake held against its own drive torque creeping: the stiffer force
#: near rest turned the locked wheel before the sticky tyre could take over).
LOCKED_SLIP_SPEED = 0.5


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
def substep_forces(pk: Packed, ws, gravity, h, s, x, out, report=True) -> None:
    """6a. Slips and tyre forces of every wheel for one wheel substep (sticky tyres override).

    The inputs of every wheel first, then the forces of every wheel (short loops, see
    ``contact.suspension_forces``). The PhysX tyre reads the slip angle's tangent, and the angle
    itself only to subtract a camber term; with ``report=False`` a PhysX wheel without camber
    skips the angle's ``arctan`` (``O_LAT_SLIP`` keeps its last value, ``X_LAT_SLIP`` is NaN).
    That ``arctan`` was a tenth of the Drift car's update in the physics loop."""
    vp, wp = pk.vehicle, pk.wheel
    for w in range(wp.shape[0]):                          # slips, friction: tyre inputs
        p = wp[w]
        contact = out[w, L.O_CONTACT] > 0.5
        v_long, v_lat, omega = s[w, L.S_V_LONG], s[w, L.S_V_LAT], ws[w, L.OMEGA]
        physx = int(p[L.TIRE_MODEL]) == PHYSX
        angle = report or not physx or out[w, L.O_CAMBER] != 0.0   # slip angle needed
        long_slip, lat_slip, tan_lat_slip = 0.0, 0.0 if angle else np.nan, 0.0
        if contact:                                       # tire.slips, keeping the tangent
            denominator = vp[L.MIN_LONG_DENOM]
            if omega == 0.0 and s[w, L.S_BRAKE] > 0.0:   # locked: it slides (not viscous)
                denominator = min(denominator, abs(v_long) + LOCKED_SLIP_SPEED)
            long_slip = tire.long_slip(v_long, omega * p[L.RADIUS], denominator)
            tan_lat_slip = tire.lat_slip_tangent(v_long, v_lat, vp[L.MIN_LAT_DENOM])
            if angle:
                lat_slip = np.arctan(tan_lat_slip)
        mu = s[w, L.S_MU_SURFACE] * (tire.friction_multiplier(p, long_slip) if physx else 1.0)
        xr = x[w]
        xr[L.X_V_LONG], xr[L.X_V_LAT], xr[L.X_OMEGA] = v_long, v_lat, omega
        xr[L.X_LONG_SLIP], xr[L.X_LAT_SLIP], xr[L.X_CAMBER] = long_slip, lat_slip, out[w, L.O_CAMBER]
        xr[L.X_FRICTION], xr[L.X_SURFACE_FRICTION], xr[L.X_LOAD] = mu, s[w, L.S_MU_SURFACE], out[w, L.O_LOAD]
        xr[L.X_REST_LOAD] = p[L.SPRUNG_MASS] * gravity
        xr[L.X_NORMALISED_LOAD] = s[w, L.S_LOAD_FILTERED]           # = load / rest load
        xr[L.X_GRAVITY], xr[L.X_DT], xr[L.X_DRIVE_TORQUE] = gravity, h, ws[w, L.DRIVE_TORQUE]
        xr[L.X_MASS_LONG], xr[L.X_MASS_LAT] = s[w, L.S_MASS_LONG], s[w, L.S_MASS_LAT]
        xr[L.X_TAN_LAT_SLIP] = tan_lat_slip
        out[w, L.O_LONG_SLIP], out[w, L.O_FRICTION] = long_slip, mu
        if angle:
            out[w, L.O_LAT_SLIP] = lat_slip
    for w in range(wp.shape[0]):                          # forces by each wheel's model
        f_long, f_lat, moment, road = 0.0, 0.0, 0.0, 0.0
        if out[w, L.O_CONTACT] > 0.5:
            f_long, f_lat, moment, road = forces(wp[w], x[w], pk.families, pk.family_index,
                                                 pk.points)
        out[w, L.O_LONG_FORCE], out[w, L.O_LAT_FORCE] = f_long, f_lat
        out[w, L.O_MOMENT], s[w, L.S_ROAD] = moment, road
    if vp[L.HAS_CUSTOM] > 0.5:
        _custom_tires(pk, x, s, out)
    for w in range(wp.shape[0]):
        stick_long, stick_lat = s[w, L.S_STICK_LONG] > 0.5, s[w, L.S_STICK_LAT] > 0.5
        if not (stick_long or stick_lat):
            continue
        f_long = s[w, L.S_F_STICK_LONG] if stick_long else out[w, L.O_LONG_FORCE]
        f_lat = s[w, L.S_F_STICK_LAT] if stick_lat else out[w, L.O_LAT_FORCE]
        cap = out[w, L.O_FRICTION] * out[w, L.O_LOAD] * wp[w, L.CAP_COEF]
        scale = min(1.0, cap / max(norm2(f_long, f_lat), 1e-9))
        out[w, L.O_LONG_FORCE], out[w, L.O_LAT_FORCE] = f_long * scale, f_lat * scale
        if stick_long:
            s[w, L.S_ROAD] = -f_long * scale * wp[w, L.RADIUS]


@jit_call
def _custom_tires(pk: Packed, x, s, out) -> None:
    """Custom (Python) tyre functions for the wheels that use them, in one object-mode call."""
    wp = pk.wheel
    cols = np.nonzero(wp[:, L.TIRE_MODEL] == CUSTOM)[0]
    rows = np.ascontiguousarray(x[cols])
    radius = np.ascontiguousarray(wp[cols, L.RADIUS])
    index = int(wp[cols[0], L.CUSTOM_INDEX])
    with objmode(res="float64[:, :]"):
        res = tire_custom.call(index, rows, radius)
    for i in range(len(cols)):
        w = cols[i]
        if out[w, L.O_CONTACT] > 0.5:
            out[w, L.O_LONG_FORCE], out[w, L.O_LAT_FORCE] = res[i, 0], res[i, 1]
            out[w, L.O_MOMENT], s[w, L.S_ROAD] = res[i, 2], res[i, 3]


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
