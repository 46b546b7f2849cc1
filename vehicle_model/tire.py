"""Tyres: parameters, slips, load filter, and the dispatcher over the tyre models.

Contact frame: ``long`` is the wheel's heading projected on the ground plane, ``lat`` points to the
wheel's left in that plane. Forces act on the chassis. Every model takes the same
:class:`TireInputs` and returns the same four arrays (longitudinal force, lateral force, aligning
moment, wheel reaction torque), so the rest of the update does not care which one runs; a vehicle
picks its model per wheel (``tire.model`` in its TOML file):

=================  ============================================================================
``physx``          PhysX default model (``tire_physx.py``)
``arcade``         velocity difference at the contact patch x stiffness, limited by friction x
                   load (``tire_arcade.py``)
``curve``          drawn normalised friction curves with combined-slip families, grip, friction
                   clamps (``tire_curve.py``, ``friction_clamps.py``)
``magic_formula``  Pacejka B, C, D, E per direction, combined slip by normalised slip vector
                   (``tire_magic.py``)
``custom``         a registered Python callable with the PhysX tyre-shader signature
                   (``tire_custom.py``)
=================  ============================================================================

Slips: longitudinal ``(omega*r - v_long) / max(|v_long|, |omega*r|, min_long_denominator)``
(positive = traction) and lateral ``atan(v_lat / max(|v_long|, min_lat_denominator))`` (rad,
positive when the patch slides left; the lateral force opposes it). Where they depart from the
PhysX SDK's code (PxVehicleUpdate.cpp, 4.x):

* longitudinal: the guide's minimum denominator ("never falls below a specified value"), for
  every wheel but a locked one. The SDK applies it only to a wheel neither driven nor braked; a
  driven or braked wheel there divides by ``max(|v_long|, |omega*r|) + 0.1 m/s``, a stiffness
  its solver's sticky-tyre velocity constraints hold at low speed and our explicit spin update
  could not. A wheel its brake holds locked (spin exactly 0) has no spin to update: its
  denominator is at most ``|v_long| + 0.5 m/s`` (``tire_models.LOCKED_SLIP_SPEED``), so it
  slides at friction x load down to about 1 m/s and comes to rest for the sticky tyre (at
  0.5 m/s: slip -0.5; with the minimum denominator alone it was -0.125, a viscous force under
  which a braked car sliding down a 17-45 degree slope never stopped);
* lateral: the SDK divides by ``|v_long| + 1 m/s``; the max here is the same at rest and gives
  10 % more slip (so cornering force) at 10 m/s, 3 % at 30 m/s.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .errors import VehicleConfigError
from .jit import jit
from .layout import FRICTION_VS_SLIP
from .params import check_value, freeze_arrays, param, param_meta, validate_fields
from .tire_magic import PEAK_SEARCH as MF_PEAK_SEARCH

#: Tyre model names; the index is the per-wheel ``model`` code.
MODELS = ("physx", "arcade", "curve", "magic_formula", "custom")

#: Magic Formula coefficient ranges: B > 0 (stiffness factor), 1 < C <= 2 (shape: a peak at
#: ``C atan = pi/2`` exists for C > 1, and C <= 2 keeps ``sin(C atan(..))`` >= 0, the force never
#: turning against the slip), D > 0 (peak factor), E < 1 (curvature; Pacejka's constraint, which
#: keeps the curve's argument increasing in the slip).
MF_RANGES = {
    "B": param_meta(lo=0.0, hi=100.0, lo_open=True),
    "C": param_meta(lo=1.0, hi=2.0, lo_open=True),
    "D": param_meta(lo=0.0, hi=10.0, lo_open=True),
    "E": param_meta(lo=-10.0, hi=1.0, hi_open=True),
}


@dataclass(frozen=True)
class TireParams:
    """Per-wheel tyre data, arrays of shape ``(n_wheels,)`` (vectors ``(n_wheels, k)``)."""

    model: np.ndarray = param(unit="-", lo=0, hi=len(MODELS) - 1, integer=True,
                              doc="physx | arcade | curve | magic_formula | custom")
    tire_type: np.ndarray = param(unit="-", lo=0, hi=255, integer=True,
                                  doc="friction table column: road | offroad | track (or index, "
                                      "below the table's tyre type count)")
    friction_vs_slip: np.ndarray = param(
        unit="-", lo=0.0, hi=10.0, shape="table",
        doc="physx: 3 (long slip, friction multiplier) points: zero, peak, plateau")
    lat_stiff_x: np.ndarray = param(unit="-", lo=0.0, hi=100.0, lo_open=True,
                                    doc="physx: normalised load at which lateral stiffness saturates")
    lat_stiff_y: np.ndarray = param(unit="1/rad", lo=0.0, hi=1000.0, lo_open=True,
                                    doc="physx: max lateral stiffness per unit rest load")
    long_stiff_per_unit_gravity: np.ndarray = param(
        unit="kg/unit slip", lo=0.0, hi=1e6, lo_open=True,
        doc="physx: longitudinal stiffness divided by g")
    camber_stiff_per_unit_gravity: np.ndarray = param(
        unit="kg/rad", lo=0.0, hi=1e6, doc="physx: camber thrust stiffness divided by g")
    arcade_long_stiffness: np.ndarray = param(unit="s/m", lo=0.0, hi=1e3, lo_open=True,
                                              doc="arcade: force per load per m/s of long slip speed")
    arcade_lat_stiffness: np.ndarray = param(unit="s/m", lo=0.0, hi=1e3, lo_open=True,
                                             doc="arcade: force per load per m/s of lateral speed")
    grip: np.ndarray = param(unit="-", lo=0.0, hi=20.0, lo_open=True,
                             doc="curve: grip multiplier (curve x grip x friction x load)")
    curve_set: np.ndarray = param(unit="-", lo=0, hi=255, integer=True,
                                  doc="curve: name of a [tire_curves.NAME] set (or 'default')")
    min_slip_speed: np.ndarray = param(unit="m/s", lo=0.0, hi=100.0, lo_open=True,
                                        doc="curve, magic_formula: smallest slip denominator")
    clamps: np.ndarray = param(unit="-", lo=0.0, hi=1.0, integer=True,
                               doc="curve: 1 = friction clamps on, 0 = off")
    mf_long: np.ndarray = param(unit="-", lo=-10.0, hi=100.0, shape="wheel4",
                                doc="magic_formula: B, C, D, E vs slip ratio; B (0, 100], "
                                    "C (1, 2], D (0, 10], E [-10, 1)")
    mf_lat: np.ndarray = param(unit="-", lo=-10.0, hi=100.0, shape="wheel4",
                               doc="magic_formula: B (1/rad), C, D, E vs slip angle; ranges as "
                                   "mf_long, peak slip angle < pi/2")
    trail: np.ndarray = param(unit="m", lo=0.0, hi=1.0,
                              doc="curve, magic_formula: pneumatic trail for the aligning moment")

    def __post_init__(self):
        freeze_arrays(self)

    def validate(self, prefix: str = "tire.", where: str = "") -> None:
        """Range checks plus a PhysX friction graph with increasing slips starting at 0."""
        validate_fields(self, prefix, where)
        pre = f"{where}: " if where else ""
        g = self.friction_vs_slip
        for i in range(len(g)):
            xs = g[i, :, 0]
            if xs[0] != 0.0 or not (xs[0] < xs[1] < xs[2]):
                raise VehicleConfigError(
                    f"{pre}{prefix}friction_vs_slip[{i}] slips {xs.tolist()} must be 0 < peak < "
                    "plateau")
        self._validate_magic_formula(prefix, where)

    def _validate_magic_formula(self, prefix: str, where: str) -> None:
        """Pacejka's coefficients in their meaningful ranges (:data:`MF_RANGES`: a force that
        rises from zero slip to one peak and never turns against the slip) and a peak the model
        can normalise by (lateral: below pi/2 rad, where its tangent is used)."""
        for name in ("mf_long", "mf_lat"):
            coef = getattr(self, name)
            for i in range(len(coef)):
                for k, (letter, meta) in enumerate(MF_RANGES.items()):
                    check_value(f"{prefix}{name}[{i}] {letter}", coef[i, k], meta, where)
        pre = f"{where}: " if where else ""
        for name, peak in zip(("mf_long", "mf_lat"), self.mf_peak_slips, strict=True):
            coef = getattr(self, name)
            for i in range(len(coef)):
                if peak[i] * coef[i, 0] > 0.999 * MF_PEAK_SEARCH:
                    raise VehicleConfigError(
                        f"{pre}{prefix}{name}[{i}] = {coef[i].tolist()} has no peak below B s = "
                        f"{MF_PEAK_SEARCH:g}; move C or E away from 1")
        lat_peak = self.mf_peak_slips[1]
        for i in np.flatnonzero(lat_peak >= 0.5 * np.pi):
            raise VehicleConfigError(
                f"{pre}{prefix}mf_lat[{i}] = {self.mf_lat[i].tolist()} peaks at a slip angle of "
                f"{lat_peak[i]:.3g} rad; allowed below pi/2 (raise B)")

    @cached_property
    def mf_peak_slips(self) -> tuple[np.ndarray, np.ndarray]:
        """Magic formula pure-slip peak positions (slip ratio, slip angle rad), per wheel."""
        from .tire_magic import peak_slip
        return peak_slip(self.mf_long), peak_slip(self.mf_lat)

    def uses(self, name: str) -> np.ndarray:
        """Mask ``(n_wheels,)`` of wheels using tyre model ``name``."""
        return self.model == MODELS.index(name)


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
                                                shape="scalar",
                                                doc="largest filtered load (>= the minimum's)")

    def validate(self, prefix: str = "tire_load_filter.", where: str = "") -> None:
        """Range checks plus min < max and a non-decreasing map (min filtered <= max filtered:
        a filter that gives a more loaded tyre less load would take grip away from the wheels
        that carry the car, reversing the load transfer in a turn or under braking)."""
        validate_fields(self, prefix, where)
        pre = f"{where}: " if where else ""
        if self.max_normalised_load <= self.min_normalised_load:
            raise VehicleConfigError(
                f"{pre}{prefix}max_normalised_load = {self.max_normalised_load:g} must exceed "
                f"min_normalised_load = {self.min_normalised_load:g}")
        if self.min_filtered_normalised_load > self.max_filtered_normalised_load:
            raise VehicleConfigError(
                f"{pre}{prefix}min_filtered_normalised_load = "
                f"{self.min_filtered_normalised_load:g} must not exceed "
                f"max_filtered_normalised_load = {self.max_filtered_normalised_load:g}: the filter "
                "must not give a more loaded tyre less load")


@dataclass
class TireInputs:
    """Everything a tyre model may use, as ``(n, n_wheels)`` arrays (SI units); the compiled
    update keeps the same quantities as one row per wheel (``layout`` ``X_`` columns, same
    order). Radius and inertia come from the wheel parameters."""

    v_long: np.ndarray        # contact-patch velocity along the wheel heading (m/s)
    v_lat: np.ndarray         # contact-patch velocity to the wheel's left (m/s)
    omega: np.ndarray         # wheel spin (rad/s)
    long_slip: np.ndarray     # PhysX longitudinal slip (-)
    lat_slip: np.ndarray      # PhysX lateral slip (rad)
    camber: np.ndarray        # rad
    friction: np.ndarray      # surface friction x PhysX graph (-)
    surface_friction: np.ndarray  # surface friction alone (-)
    load: np.ndarray          # N, filtered load used by the model
    rest_load: np.ndarray     # N
    normalised_load: np.ndarray   # filtered load / rest load (-)
    gravity: float            # m/s^2
    dt: np.ndarray            # s, step the forces act over
    drive_torque: np.ndarray  # N m on the wheel from the drivetrain (last substep)
    mass_long: np.ndarray     # kg, useful mass along the heading (incl. rotation)
    mass_lat: np.ndarray      # kg, useful mass sideways (incl. rotation); read only by
                              # curve tyres with clamps on, the update fills them for those

    def rows(self) -> np.ndarray:
        """``(n, n_wheels, N_TIRE_INPUTS)`` float rows for the compiled models (the fields,
        then the derived ``tan(lat_slip)``)."""
        values = [np.asarray(getattr(self, f), dtype=float) for f in self.__dataclass_fields__]
        values.append(np.tan(values[4]))                                  # X_TAN_LAT_SLIP
        shape = np.broadcast_shapes(*(v.shape for v in values))
        return np.ascontiguousarray(np.stack([np.broadcast_to(v, shape) for v in values], axis=-1))


@jit
def filtered_load(lo: float, lo_filtered: float, hi: float, hi_filtered: float,
                  normalised_load: float) -> float:
    """Filtered normalised load: :class:`TireLoadFilter` as a piecewise-linear map clamped at
    both ends."""
    if normalised_load <= lo:
        return lo_filtered
    if normalised_load >= hi:
        return hi_filtered
    return lo_filtered + (hi_filtered - lo_filtered) * (normalised_load - lo) / (hi - lo)


@jit
def slips(v_long: float, v_lat: float, wheel_speed: float, min_long_denominator: float,
          min_lat_denominator: float) -> tuple[float, float]:
    """Longitudinal slip (-) and lateral slip angle (rad); see the module docstring."""
    return (long_slip(v_long, wheel_speed, min_long_denominator),
            np.arctan(lat_slip_tangent(v_long, v_lat, min_lat_denominator)))


@jit
def long_slip(v_long: float, wheel_speed: float, min_long_denominator: float) -> float:
    """Longitudinal slip ``(wheel_speed - v_long) / max(|v_long|, |wheel_speed|, min)`` (the
    guide's minimum denominator for every wheel; see the module docstring)."""
    return (wheel_speed - v_long) / max(abs(v_long), abs(wheel_speed), min_long_denominator)


@jit
def lat_slip_tangent(v_long: float, v_lat: float, min_lat_denominator: float) -> float:
    """``tan`` of the lateral slip: ``v_lat / max(|v_long|, min_lat_denominator)`` (the PhysX
    SDK adds 1 m/s to ``|v_long|`` instead; see the module docstring)."""
    return v_lat / max(abs(v_long), min_lat_denominator)


@jit
def friction_multiplier(wheel_params: np.ndarray, long_slip: float) -> float:
    """PhysX friction-vs-longitudinal-slip graph value at ``|long_slip|`` (flat past the plateau);
    ``wheel_params`` is the wheel's row of packed parameters (``FRICTION_VS_SLIP`` columns)."""
    x0, y0, x1, y1, x2, y2 = wheel_params[FRICTION_VS_SLIP:FRICTION_VS_SLIP + 6]
    s = abs(long_slip)
    if s < x1:
        return y0 + (y1 - y0) * min(max((s - x0) / (x1 - x0), 0.0), 1.0)
    return y1 + (y2 - y1) * min(max((s - x1) / (x2 - x1), 0.0), 1.0)


def peak_coefficient(p: TireParams) -> np.ndarray:
    """Largest ``|F| / (friction x load)`` each wheel's model can produce (inf for custom)."""
    coef = np.ones(len(p.model))
    coef = np.where(p.uses("curve"), p.grip, coef)
    coef = np.where(p.uses("magic_formula"), np.maximum(np.abs(p.mf_long[:, 2]),
                                                        np.abs(p.mf_lat[:, 2])), coef)
    return np.where(p.uses("custom"), np.inf, coef)
