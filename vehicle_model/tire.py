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
``curve``          drawn normalised friction curves with combined-slip families and grip
                   (``tire_curve.py``)
``magic_formula``  Pacejka B, C, D, E per direction, combined slip by normalised slip vector
                   (``tire_magic.py``)
``custom``         a registered Python callable with the PhysX tyre-shader signature
                   (``tire_custom.py``)
=================  ============================================================================

The models are steady-state laws: force as a function of the slips. Every model is given the
same slips, the physical ones at every speed: longitudinal ``(omega r - v_long) / max(|v_long|,
|omega r|)`` (PhysX's definition: positive = traction, within [-2, 2]) and the lateral slip
angle ``atan(v_lat / max(|v_long|, |omega r|))`` (positive when the patch slides left; the
lateral force opposes it), the denominator no smaller than :data:`SLIP_FLOOR` (1 um/s, a guard
against 0/0: below it the tread holds the patch, see below). There is no minimum slip
denominator (PhysX's 4 m/s made the longitudinal force viscous below it: a launch at half the
friction limit needed a 0.9 m/s slide at any speed under 4 m/s) and no special case for a
locked wheel.

Both slips share the denominator, as Pacejka's theoretical slips (over the wheel's rolling
speed) and TMeasy's (over its transport speed) do: the slip vector is then the patch's sliding
velocity over one speed, so a sliding patch's friction opposes its sliding velocity. For a
rolling or locked wheel it is the usual ``atan(v_lat / |v_long|)``; it differs for a wheel
spinning faster than the ground under it, where ``v_lat / |v_long|`` grows without bound as
``v_long`` falls (the reason for PhysX's minimum lateral denominator): a tank's tracks pivoting
it on the spot spin at metres per second while their patches barely move forward, and with
the lateral slip over ``|v_long|`` the scrub took the whole friction budget (3 deg/s at full
command, against 27 with the earlier 4 m/s lateral denominator).

What makes the models usable at rest and at large steps is the tread between the wheel and the
road (``tire_models.py``): a spring-damper per direction (``tread_stiffness_long``/``_lat`` x
rest load, damping ratio ``tread_damping`` with the sprung mass) in series with the model's
slip law, as in TMeasy (Rill) and Pacejka's relaxation-length models. Rolling, the tread
deflection settles where its spring force equals the model's force at the slip, so the
steady state is the model's own at every speed (the relaxation length is the model's slip
stiffness over the tread's); at rest it is a damped spring that holds the vehicle (static
friction) up to friction x load, beyond which the patch slides.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from . import layout as L
from .errors import VehicleConfigError
from .jit import jit
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
                              doc="physx | arcade | curve | magic_formula | custom", packed="tire_model")
    tire_type: np.ndarray = param(unit="-", lo=0, hi=255, integer=True,
                                  doc="friction table column: road | offroad | track (or index, "
                                      "below the table's tyre type count)", packed=True)
    friction_vs_slip: np.ndarray = param(
        unit="-", lo=0.0, hi=10.0, shape="table",
        doc="physx: 3 (long slip, friction multiplier) points: zero, peak, plateau", packed=True)
    lat_stiff_x: np.ndarray = param(unit="-", lo=0.0, hi=100.0, lo_open=True,
                                    doc="physx: normalised load at which lateral stiffness saturates",
                                    packed=True)
    lat_stiff_y: np.ndarray = param(unit="1/rad", lo=0.0, hi=1000.0, lo_open=True,
                                    doc="physx: max lateral stiffness per unit rest load", packed=True)
    long_stiff_per_unit_gravity: np.ndarray = param(
        unit="kg/unit slip", lo=0.0, hi=1e6, lo_open=True,
        doc="physx: longitudinal stiffness (N per unit slip) divided by g; a road tyre's is "
            "15-20 x its load, so 15-20 x the wheel's sprung mass (the default, PhysX's, suits "
            "55 kg; the presets: 18 x theirs)", packed=True)
    camber_stiff_per_unit_gravity: np.ndarray = param(
        unit="kg/rad", lo=0.0, hi=1e6, doc="physx: camber thrust stiffness divided by g", packed=True)
    arcade_long_stiffness: np.ndarray = param(unit="s/m", lo=0.0, hi=1e3, lo_open=True,
                                              doc="arcade: force per load per m/s of long slip speed",
                                              packed=True)
    arcade_lat_stiffness: np.ndarray = param(unit="s/m", lo=0.0, hi=1e3, lo_open=True,
                                             doc="arcade: force per load per m/s of lateral speed",
                                             packed=True)
    grip: np.ndarray = param(unit="-", lo=0.0, hi=20.0, lo_open=True,
                             doc="curve: grip multiplier (curve x grip x friction x load)", packed=True)
    curve_set: np.ndarray = param(unit="-", lo=0, hi=255, integer=True,
                                  doc="curve: name of a [tire_curves.NAME] set (or 'default')", packed=True)
    mf_long: np.ndarray = param(unit="-", lo=-10.0, hi=100.0, shape="wheel4",
                                doc="magic_formula: B, C, D, E vs slip ratio; B (0, 100], "
                                    "C (1, 2], D (0, 10], E [-10, 1)", packed=True)
    mf_lat: np.ndarray = param(unit="-", lo=-10.0, hi=100.0, shape="wheel4",
                               doc="magic_formula: B (1/rad), C, D, E vs slip angle; ranges as "
                                   "mf_long, peak slip angle < pi/2", packed=True)
    trail: np.ndarray = param(unit="m", lo=0.0, hi=1.0,
                              doc="curve, magic_formula: pneumatic trail for the aligning moment",
                              packed=True)
    tread_stiffness_long: np.ndarray = param(
        unit="1/m", lo=1.0, hi=1e4,
        doc="tread spring along the wheel per N of rest load: N/m = this x sprung mass x g "
            "(a car tyre: 50-150); relaxation length = slip stiffness / spring")
    tread_stiffness_lat: np.ndarray = param(
        unit="1/m", lo=1.0, hi=1e4,
        doc="tread spring sideways per N of rest load (a car tyre: 30-80)")
    tread_damping: np.ndarray = param(
        unit="-", lo=0.0, hi=10.0,
        doc="damping ratio of each tread spring with the wheel's sprung mass")

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
                                       doc="below this the filtered load is the minimum", packed=True)
    min_filtered_normalised_load: float = param(0.0, lo=0.0, hi=100.0, shape="scalar",
                                                doc="filtered load at or below the minimum", packed=True)
    max_normalised_load: float = param(3.0, lo=0.0, hi=1000.0, lo_open=True, shape="scalar",
                                       doc="above this the filtered load is the maximum", packed=True)
    max_filtered_normalised_load: float = param(3.0, lo=0.0, hi=1000.0, lo_open=True,
                                                shape="scalar",
                                                doc="largest filtered load (>= the minimum's)", packed=True)

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

    def records(self) -> np.ndarray:
        """``(n, n_wheels)`` records (``layout.TIRE_INPUTS``) for the compiled models: the
        fields, and the derived ``tan_lat_slip``."""
        values = {f: np.asarray(getattr(self, f), dtype=float) for f in self.__dataclass_fields__}
        values["tan_lat_slip"] = np.tan(values["lat_slip"])
        out = np.zeros(np.broadcast_shapes(*(v.shape for v in values.values())), L.TIRE_INPUTS)
        for name, v in values.items():
            out[name] = v
        return out


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


#: Smallest slip denominator (m/s): a guard against 0/0 only. Below it the tread spring carries
#: the force (``tire_models``), so it sets no physics: a parked car held by a slip law whose
#: denominator were ``v`` would creep at about ``slip x v``, 0.1 um/s here.
SLIP_FLOOR = 1e-6


@jit
def slips(v_long: float, v_lat: float, wheel_speed: float) -> tuple[float, float]:
    """Longitudinal slip (-) and lateral slip angle (rad); see the module docstring."""
    return long_slip(v_long, wheel_speed), np.arctan(lat_slip_tangent(v_long, v_lat, wheel_speed))


@jit
def long_denominator(v_long: float, wheel_speed: float) -> float:
    """``max(|v_long|, |wheel_speed|, SLIP_FLOOR)`` (m/s)."""
    return max(abs(v_long), abs(wheel_speed), SLIP_FLOOR)


@jit
def long_slip(v_long: float, wheel_speed: float) -> float:
    """Longitudinal slip ``(wheel_speed - v_long) / max(|v_long|, |wheel_speed|)`` (PhysX's
    definition, within [-2, 2])."""
    return (wheel_speed - v_long) / long_denominator(v_long, wheel_speed)


@jit
def lat_slip_tangent(v_long: float, v_lat: float, wheel_speed: float) -> float:
    """``tan`` of the lateral slip angle: ``v_lat / max(|v_long|, |wheel_speed|)`` (the
    longitudinal slip's denominator; see the module docstring)."""
    return v_lat / long_denominator(v_long, wheel_speed)


@jit
def friction_multiplier(wheel_params: np.ndarray, long_slip: float) -> float:
    """PhysX friction-vs-longitudinal-slip graph value at ``|long_slip|`` (flat past the plateau);
    ``wheel_params`` is the wheel's row of packed parameters (its ``friction_vs_slip``)."""
    x0, y0, x1, y1, x2, y2 = wheel_params.friction_vs_slip
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
