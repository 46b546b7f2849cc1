"""Tyre: slips, load filter and the PhysX default tyre model.

Contact frame: ``long`` is the wheel's heading projected on the ground plane, ``lat`` points to the
wheel's left in that plane. Forces act on the chassis.

Slips (PhysX conventions):

* longitudinal slip ``(omega*r - v_long) / max(|v_long|, |omega*r|, min_long_slip_denominator)``,
  positive when the wheel spins faster than the ground passes (traction);
* lateral slip ``atan(v_lat / max(|v_long|, min_lat_slip_denominator))`` (rad), positive when the
  contact patch slides left; the lateral force opposes it.

The PhysX model computes linear longitudinal, lateral and camber stiffnesses, then normalises the
combined force with smoothing polynomials so that ``|F| <= friction * load`` always holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import VehicleConfigError
from .params import freeze_arrays, param, validate_fields


@dataclass(frozen=True)
class TireParams:
    """Per-wheel PhysX tyre data; arrays of shape ``(n_wheels,)`` (graph: ``(n_wheels, 3, 2)``)."""

    lat_stiff_x: np.ndarray = param(unit="-", lo=0.0, hi=100.0, lo_open=True,
                                    doc="normalised load at which lateral stiffness saturates")
    lat_stiff_y: np.ndarray = param(unit="1/rad", lo=0.0, hi=1000.0, lo_open=True,
                                    doc="max lateral stiffness per unit rest load")
    long_stiff_per_unit_gravity: np.ndarray = param(
        unit="kg/unit slip", lo=0.0, hi=1e6, lo_open=True,
        doc="longitudinal stiffness divided by g")
    camber_stiff_per_unit_gravity: np.ndarray = param(
        unit="kg/rad", lo=0.0, hi=1e6, doc="camber thrust stiffness divided by g")
    friction_vs_slip: np.ndarray = param(
        unit="-", lo=0.0, hi=10.0, shape="table",
        doc="3 (long slip, friction multiplier) points: zero, peak, plateau")
    tire_type: np.ndarray = param(unit="-", lo=0, hi=255, doc="row index in the friction table")

    def __post_init__(self):
        freeze_arrays(self)

    def validate(self, prefix: str = "tire.", where: str = "") -> None:
        """Range checks plus a friction graph with increasing slips starting at 0."""
        validate_fields(self, prefix, where)
        pre = f"{where}: " if where else ""
        g = self.friction_vs_slip
        for i in range(len(g)):
            xs = g[i, :, 0]
            if xs[0] != 0.0 or not (xs[0] < xs[1] < xs[2]):
                raise VehicleConfigError(
                    f"{pre}{prefix}friction_vs_slip[{i}] slips {xs.tolist()} must be 0 < peak < "
                    "plateau")


@dataclass(frozen=True)
class TireLoadFilter:
    """Maps normalised tyre load (load / rest load) to the filtered value the tyre model uses."""

    min_normalised_load: float = param(0.0, lo=0.0, hi=100.0, shape="scalar",
                                       doc="below this the filtered load is the minimum")
    min_filtered_normalised_load: float = param(0.0, lo=0.0, hi=100.0, shape="scalar",
                                                doc="filtered load at or below the minimum")
    max_normalised_load: float = param(3.0, lo=0.0, hi=1000.0, lo_open=True, shape="scalar",
                                       doc="above this the filtered load is the maximum")
    max_filtered_normalised_load: float = param(3.0, lo=0.0, hi=1000.0, lo_open=True,
                                                shape="scalar", doc="largest filtered load")

    def validate(self, prefix: str = "tire_load_filter.", where: str = "") -> None:
        """Range checks plus min < max."""
        validate_fields(self, prefix, where)
        if self.max_normalised_load <= self.min_normalised_load:
            pre = f"{where}: " if where else ""
            raise VehicleConfigError(
                f"{pre}{prefix}max_normalised_load = {self.max_normalised_load:g} must exceed "
                f"min_normalised_load = {self.min_normalised_load:g}")

    def apply(self, normalised_load: np.ndarray) -> np.ndarray:
        """Filtered normalised load (piecewise linear, clamped at both ends)."""
        return np.interp(normalised_load,
                         [self.min_normalised_load, self.max_normalised_load],
                         [self.min_filtered_normalised_load, self.max_filtered_normalised_load])


def slips(v_long: np.ndarray, v_lat: np.ndarray, wheel_speed: np.ndarray,
          min_long_denominator: float, min_lat_denominator: float) -> tuple[np.ndarray, np.ndarray]:
    """Longitudinal slip (-) and lateral slip angle (rad); see the module docstring.

    Args:
        v_long: contact-patch velocity along the wheel heading (m/s).
        v_lat: contact-patch velocity to the wheel's left (m/s).
        wheel_speed: ``omega * radius`` (m/s).
        min_long_denominator: ``minLongSlipDenominator`` (m/s), PhysX default 4.
        min_lat_denominator: smallest lateral-slip denominator (m/s), PhysX 5 default 1.
    """
    denom = np.maximum(np.maximum(np.abs(v_long), np.abs(wheel_speed)), min_long_denominator)
    long_slip = (wheel_speed - v_long) / denom
    lat_slip = np.arctan(v_lat / np.maximum(np.abs(v_long), min_lat_denominator))
    return long_slip, lat_slip


def friction_multiplier(p: TireParams, long_slip: np.ndarray) -> np.ndarray:
    """Friction-vs-longitudinal-slip graph value at ``|long_slip|`` (flat beyond the plateau)."""
    g = p.friction_vs_slip
    s = np.abs(long_slip)
    x0, x1, x2 = g[:, 0, 0], g[:, 1, 0], g[:, 2, 0]
    y0, y1, y2 = g[:, 0, 1], g[:, 1, 1], g[:, 2, 1]
    rise = y0 + (y1 - y0) * np.clip((s - x0) / (x1 - x0), 0.0, 1.0)
    fall = y1 + (y2 - y1) * np.clip((s - x1) / (x2 - x1), 0.0, 1.0)
    return np.where(s < x1, rise, fall)


def _smooth_force(k: np.ndarray) -> np.ndarray:
    """PhysX smoothing for force: K - K^2/3 + K^3/27, reaching 1 with zero slope at K = 3."""
    k = np.minimum(k, 3.0)
    return k - k * k / 3.0 + k * k * k / 27.0


def _smooth_moment(k: np.ndarray) -> np.ndarray:
    """PhysX smoothing for aligning moment: K - K^2 + K^3/3 - K^4/27, zero from K = 3."""
    k = np.minimum(k, 3.0)
    return k - k * k + k**3 / 3.0 - k**4 / 27.0


def physx_forces(p: TireParams, long_slip, lat_slip, camber, friction, load, rest_load,
                 filtered_normalised_load, gravity: float):
    """The PhysX default tyre model, vectorised.

    Args:
        p: tyre parameters.
        long_slip: longitudinal slip (-).
        lat_slip: lateral slip angle (rad).
        camber: camber angle (rad).
        friction: surface-tyre friction times the friction-vs-slip graph (-).
        load: tyre load used by the model (N) (filtered normalised load x rest load).
        rest_load: load at rest (N).
        filtered_normalised_load: filtered load / rest load (-).
        gravity: |g| (m/s^2).

    Returns:
        ``(f_long, f_lat, aligning_moment)`` in N, N, N m; zero where ``load`` or ``friction`` is 0.
    """
    lat_stiff = rest_load * p.lat_stiff_y * _smooth_force(
        filtered_normalised_load * 3.0 / p.lat_stiff_x)
    long_stiff = p.long_stiff_per_unit_gravity * gravity
    camber_stiff = p.camber_stiff_per_unit_gravity * gravity
    safe_lat = np.maximum(lat_stiff, 1e-9)
    t_eff = np.tan(lat_slip - camber * camber_stiff / safe_lat)
    limit = friction * load
    ok = limit > 1e-9
    safe_limit = np.where(ok, limit, 1.0)
    k = np.hypot(lat_stiff * t_eff, long_stiff * long_slip) / safe_limit
    f_bar = _smooth_force(k)
    m_bar = _smooth_moment(k)
    ratio = lat_stiff / long_stiff
    nu = np.where(k <= 2.0 * np.pi, 0.5 * (1.0 + ratio - (1.0 - ratio) * np.cos(k * 0.5)), 1.0)
    mag = np.hypot(long_slip, nu * t_eff)
    ok &= mag > 1e-12
    f_zero = np.where(ok, safe_limit / np.where(ok, mag, 1.0), 0.0)
    f_long = long_slip * f_bar * f_zero
    f_lat = -nu * t_eff * f_bar * f_zero
    moment = nu * t_eff * m_bar * f_zero
    return f_long, f_lat, moment
