"""A vehicle: the parameters of all parts, its batched state, commands and outputs.

Everything is batched: arrays lead with ``(n_vehicles, n_wheels)`` (or ``(n_vehicles,)`` for
per-vehicle quantities) and one :func:`traction.vehicle_model.step` advances every vehicle of a
batch (all of the same :class:`VehicleParams`), like PhysX's ``PxVehicleUpdates``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from . import differential, suspension, tire, wheel
from . import layout as L
from .antiroll import AntiRollParams
from .chassis import ChassisParams
from .clutch import ClutchParams
from .engine import EngineParams
from .errors import VehicleConfigError
from .footprint import ContactParams
from .gearbox import GearboxParams, GearboxState, check_gear
from .layout import Packed, field_view
from .params import check_shapes, param, read_only, validate_fields
from .steering import SteeringParams
from .tire_curve import DEFAULT as DEFAULT_CURVES
from .tire_curve import CurveSet


@dataclass(frozen=True)
class SimulationParams:
    """Numerical settings of the vehicle update (scalars)."""

    substep_speed_threshold: float = param(5.0, unit="m/s", lo=0.0, hi=100.0, shape="scalar",
                                           doc="below this forward speed use substeps_low", packed=True)
    substeps_low: int = param(3, unit="-", lo=1, hi=64, shape="scalar", integer=True,
                              doc="wheel substeps per update at low speed", packed=True)
    substeps_high: int = param(1, unit="-", lo=1, hi=64, shape="scalar", integer=True,
                               doc="wheel substeps per update at high speed", packed=True)

    def validate(self, prefix: str = "simulation.", where: str = "") -> None:
        """Raise VehicleConfigError naming the first field out of range."""
        validate_fields(self, prefix, where)


@dataclass(frozen=True)
class TireForceScaling:
    """Scale the pitch and roll parts of the tyre forces' moment about the CoM (the talk's trick
    for high grip without wallowing): 1 = physical, 0 = no pitch/roll moment from tyre forces.
    With the tyre forces at the contact patch (``suspension.tire_force_height`` 0) a share
    ``s`` keeps ``s`` of a rigid car's load transfer (``s m a h / L`` braking, ``s m a_y h / t``
    cornering); the weight's shift as the body pitches or rolls on its springs is not scaled."""

    pitch: float = param(1.0, lo=0.0, hi=1.0, shape="scalar",
                         doc="share of the pitch moment (and of the braking and acceleration "
                             "load transfer) kept", packed="keep_pitch")
    roll: float = param(1.0, lo=0.0, hi=1.0, shape="scalar",
                        doc="share of the roll moment (and of the cornering load transfer) kept",
                        packed="keep_roll")

    def validate(self, prefix: str = "tire_force_scaling.", where: str = "") -> None:
        validate_fields(self, prefix, where)


#: How far (m) a wheel centre may lie outside the chassis box before the vehicle is rejected.
WHEEL_OUTSIDE_MARGIN = 1.0


#: :class:`VehicleParams`' cached derived properties
CACHED = ("groups", "packed", "base_split")


@dataclass(frozen=True)
class VehicleParams:
    """Everything that defines one vehicle type. Built by :func:`traction.vehicle_model.load_vehicle`."""

    name: str
    wheel_names: tuple[str, ...]
    chassis: ChassisParams
    wheels: wheel.WheelParams
    suspension: suspension.SuspensionParams
    tires: tire.TireParams
    steering: SteeringParams
    differential: differential.DifferentialParams = field(
        default_factory=differential.DifferentialParams)
    engine: EngineParams = field(default_factory=EngineParams)
    gearbox: GearboxParams = field(default_factory=GearboxParams)
    clutch: ClutchParams = field(default_factory=ClutchParams)
    anti_roll: AntiRollParams = field(default_factory=AntiRollParams)
    tire_load_filter: tire.TireLoadFilter = field(default_factory=tire.TireLoadFilter)
    simulation: SimulationParams = field(default_factory=SimulationParams)
    tire_force_scaling: TireForceScaling = field(default_factory=TireForceScaling)
    contact: ContactParams = field(default_factory=ContactParams)
    curve_sets: tuple[CurveSet, ...] = (DEFAULT_CURVES,)
    custom_tire: Callable | None = None

    @property
    def n_wheels(self) -> int:
        return len(self.wheel_names)

    @property
    def has_engine(self) -> bool:
        return self.differential.has_engine

    def __getstate__(self) -> dict:
        """What a pickle or deep copy holds: the fields, not the :data:`CACHED` arrays, rebuilt
        on use (``packed`` holds a custom tyre's index in this process's registry)."""
        return {k: v for k, v in self.__dict__.items() if k not in CACHED}

    @cached_property
    def groups(self) -> np.ndarray:
        """One-hot ``(n_wheels, n_groups)`` wheel -> spinning group map (tank sides)."""
        return read_only(differential.wheel_groups(self.differential,
                                                    self.suspension.position))

    @cached_property
    def packed(self) -> Packed:
        """The arrays of the compiled update (:func:`~traction.vehicle_model.pack.pack`), of
        validated parameters (:meth:`validate`: also those built in code)."""
        from .pack import pack
        self.validate(self.name)
        return pack(self)

    @cached_property
    def base_split(self) -> np.ndarray:
        """Static differential split ``(n_wheels,)``."""
        return read_only(differential.base_split(self.differential, self.n_wheels))

    def validate(self, where: str = "") -> None:
        """Validate every part (raises VehicleConfigError naming file and field): one value per
        wheel in every per-wheel array, distinct wheel names, ranges, the wheel references
        of the differential and the anti-roll bars, and steered wheels that can steer."""
        pre = f"{where}: " if where else ""
        names = list(self.wheel_names)
        twice = [w for w in names if names.count(w) > 1]
        if twice:
            raise VehicleConfigError(f"{pre}wheel name {twice[0]!r} is used by wheels "
                                     f"{[i for i, w in enumerate(names) if w == twice[0]]}; "
                                     "each wheel needs its own name")
        for prefix, part in (("wheel.", self.wheels), ("suspension.", self.suspension),
                             ("tire.", self.tires), ("steering.", self.steering)):
            check_shapes(part, self.n_wheels, prefix, where)
        for part in (self.chassis, self.wheels, self.suspension, self.tires, self.steering,
                     self.differential, self.engine, self.gearbox, self.clutch,
                     self.tire_load_filter, self.simulation, self.tire_force_scaling,
                     self.contact, *self.curve_sets):
            part.validate(where=where)
        self.anti_roll.validate(where=where, n_wheels=self.n_wheels)
        self.differential.validate_wheels(self.suspension.position, where=where)
        if self.tires.uses("custom").any() and self.custom_tire is None:
            raise VehicleConfigError(f"{pre}a wheel uses tire.model = 'custom' but no "
                                     "custom tyre function is set")
        for i in np.flatnonzero(self.tires.curve_set >= len(self.curve_sets)):
            raise VehicleConfigError(
                f"{pre}tire.curve_set[{i}] = {self.tires.curve_set[i]:g} refers to a missing "
                f"curve set; allowed 0..{len(self.curve_sets) - 1} "
                f"({', '.join(c.name for c in self.curve_sets)})")
        self._check_steering(pre)
        self._check_geometry(pre)

    def _check_geometry(self, pre: str) -> None:
        """Wheels must sit at (or near) the chassis: a wheel centre more than
        :data:`WHEEL_OUTSIDE_MARGIN` outside the collision box in x or y is a typo (a sign or
        unit slip), not a vehicle. The collision solid's bottom must clear the ground at rest
        (above the lowest tyre's contact point): below it, the body starts inside the ground
        and the contact solver throws the vehicle out."""
        ch = self.chassis
        bottom = ch.body_centre[2] - ch.body_size[2] / 2
        contact = float(np.min(self.suspension.position[:, 2] - self.wheels.radius))
        if not bottom > contact:
            raise VehicleConfigError(
                f"{pre}chassis: the body's bottom (body_centre z - body_size z / 2 = {bottom:g} m) "
                f"lies {contact - bottom:.3g} m below the tyres' contact points at rest (wheel "
                f"centre z - radius = {contact:g} m), inside the ground; allowed: above them "
                "(raise body_centre z or lower body_size z)")
        offset = np.abs(self.suspension.position[:, :2] - ch.body_centre[:2]) - ch.body_size[:2] / 2
        for i, (dx, dy) in enumerate(offset):
            if max(dx, dy) > WHEEL_OUTSIDE_MARGIN:
                raise VehicleConfigError(
                    f"{pre}wheels[{i}].position = {self.suspension.position[i].tolist()} lies "
                    f"{max(dx, dy):.2f} m outside the chassis box (body_size "
                    f"{ch.body_size.tolist()}, body_centre {ch.body_centre.tolist()}); allowed "
                    f"up to {WHEEL_OUTSIDE_MARGIN} m")

    def _check_steering(self, pre: str) -> None:
        """A wheel with a steer multiplier must be able to steer: its angle is limited to
        ``wheel.max_steer`` and scaled by ``steering.max_angle``, so either at 0 silently keeps
        it straight."""
        mult = self.steering.multiplier
        for i in np.flatnonzero((mult != 0.0) & (self.wheels.max_steer == 0.0)):
            raise VehicleConfigError(
                f"{pre}wheels[{i}] ({self.wheel_names[i]!r}): steering.multiplier = {mult[i]:g} "
                f"(wheels[{i}].steer_multiplier) but wheel.max_steer = 0 rad limits its steer "
                "angle to 0: it never steers; set wheel.max_steer > 0 (e.g. 0.6) or the "
                "multiplier to 0")
        if np.any(mult != 0.0) and self.steering.max_angle == 0.0:
            steered = ", ".join(self.wheel_names[i] for i in np.flatnonzero(mult != 0.0))
            raise VehicleConfigError(
                f"{pre}steering.max_angle = 0 rad but wheels {steered} have a "
                "steering.multiplier (steer_multiplier): the steer command turns no wheel; set "
                "steering.max_angle > 0 (e.g. 0.6) or the multipliers to 0")


class VehicleState:
    """Dynamic state of a batch: records ``wheel (n, n_wheels)`` (``layout.WHEEL_STATE``),
    ``vehicle (n,)`` (``VEHICLE_STATE``) and ``gears (n,)`` (``GEAR_STATE``), with named views."""

    def __init__(self, wheel: np.ndarray, vehicle: np.ndarray, gears: np.ndarray):
        self.wheel, self.vehicle, self.gears = wheel, vehicle, gears

    omega = field_view("wheel", "omega", doc="wheel spin (rad/s)")
    drive_torque = field_view("wheel", "drive_torque", doc="drive torque in the last substep (N m)")
    tread_deflection = field_view("wheel", "tread_deflection",
                                   doc="tread deflection (m), (..., 2): along the wheel, sideways; "
                                       "the tyre force there is the spring's (tire_models)")
    engine_omega = field_view("vehicle", "engine_omega", doc="engine spin (rad/s), (n,)")

    @property
    def gearbox(self) -> GearboxState:
        """Named gear views (unchecked; :meth:`set_gear` puts the vehicles in a gear, checked
        against the vehicle's gears: the compiled update indexes the ratio table with it)."""
        return GearboxState(self.gears, self.vehicle)

    def set_gear(self, params: VehicleParams, gear) -> None:
        """Put every vehicle (or each, given ``(n,)`` gears) in ``gear`` at once, no change
        running.

        Raises:
            ValueError: a gear outside -1 (reverse) .. the vehicle's top gear.
        """
        check_gear(gear, params.gearbox.n_forward)
        self.gears["gear"] = self.gears["target"] = gear
        self.gears["auto_shift"] = 0
        self.vehicle["switch_timer"] = 0.0

    @classmethod
    def zeros(cls, params: VehicleParams, n_vehicles: int = 1, gear: int = 1) -> VehicleState:
        """All at rest, engine idle at 0, in ``gear`` (first by default).

        Raises:
            ValueError: ``gear`` outside -1 (reverse) .. the vehicle's top gear.
        """
        state = cls(np.zeros((n_vehicles, params.n_wheels), L.WHEEL_STATE),
                    np.zeros(n_vehicles, L.VEHICLE_STATE), np.zeros(n_vehicles, L.GEAR_STATE))
        state.set_gear(params, gear)
        return state

    def copy(self) -> VehicleState:
        return VehicleState(self.wheel.copy(), self.vehicle.copy(), self.gears.copy())


class Commands:
    """What the driver (or agent) asks for: records ``vehicle (n,)`` (``layout.VEHICLE_COMMANDS``)
    and ``wheel (n, n_wheels)`` (``WHEEL_COMMANDS``) with named views.

    Engine vehicles use throttle/brake/handbrake/steer (+ thrust for tanks, + gear requests);
    ``direct`` vehicles (no engine) use ``wheel_torque``. ``wheel_brake`` and ``wheel_steer`` add
    per-wheel brake and steer angle for any vehicle; ``torque_split`` (if not NaN) overrides the
    differential's torque ratios (rows are normalised to sum to 1).
    """

    NO_GEAR_REQUEST = -2

    def __init__(self, vehicle: np.ndarray, wheel: np.ndarray):
        self.vehicle, self.wheel = vehicle, wheel

    throttle = field_view("vehicle", "throttle", doc="0..1")
    brake = field_view("vehicle", "brake", doc="0..1 (all wheels)")
    handbrake = field_view("vehicle", "handbrake", doc="0..1")
    steer = field_view("vehicle", "steer", doc="-1..1, positive turns left")
    thrust = field_view("vehicle", "thrust", doc="(n, 2) tank tracks left, right, -1..1")
    gear_up = field_view("vehicle", "gear_up", dtype=bool, doc="request the next gear up")
    gear_down = field_view("vehicle", "gear_down", dtype=bool, doc="request the next gear down")
    target_gear = field_view("vehicle", "target_gear", dtype=np.int64, doc="gear wanted; -2 = none")
    wheel_torque = field_view("wheel", "wheel_torque", doc="N m, direct drive")
    wheel_brake = field_view("wheel", "wheel_brake", doc="0..1 per wheel")
    wheel_steer = field_view("wheel", "wheel_steer", doc="rad per wheel, added to the steering")
    torque_split = field_view("wheel", "torque_split",
                               doc="torque ratio override, NaN = differential; shares of wheels "
                               "the differential does not drive (and <= 0) are dropped and the "
                               "rest renormalised (none left: its base split, with no slip or "
                               "load bias)")

    FIELDS = ("throttle", "brake", "handbrake", "steer", "thrust", "gear_up", "gear_down",
              "target_gear", "wheel_torque", "wheel_brake", "wheel_steer", "torque_split")

    @classmethod
    def zeros(cls, params: VehicleParams, n_vehicles: int = 1) -> Commands:
        cmd = cls(np.zeros(n_vehicles, L.VEHICLE_COMMANDS),
                  np.zeros((n_vehicles, params.n_wheels), L.WHEEL_COMMANDS))
        cmd.target_gear = cls.NO_GEAR_REQUEST
        cmd.torque_split = np.nan
        return cmd

    def copy(self) -> Commands:
        return Commands(self.vehicle.copy(), self.wheel.copy())


@dataclass
class ChassisKinematics:
    """Chassis pose and velocity from the simulator, world frame, ``(n_vehicles, ...)``."""

    position: np.ndarray          # chassis frame origin (m), (n, 3)
    rotation: np.ndarray          # world-from-chassis rotation, (n, 3, 3)
    com: np.ndarray               # centre of mass (m), (n, 3)
    velocity: np.ndarray          # CoM linear velocity (m/s), (n, 3)
    angular_velocity: np.ndarray  # (rad/s), (n, 3)

    def records(self) -> np.ndarray:
        """``(n,)`` records (``layout.KINEMATICS``) for the compiled update."""
        n = len(self.position)
        out = np.zeros(n, L.KINEMATICS)
        for name in L.KINEMATICS.names:
            out[name] = np.reshape(getattr(self, name), (n, -1))
        return out


@dataclass
class GroundHits:
    """What is under each wheel: the suspension ray's hit, ``(n_vehicles, n_wheels, ...)``."""

    dist: np.ndarray     # distance along the ray (m); negative = no hit
    normal: np.ndarray   # unit ground normal, world frame, (..., 3)
    surface: np.ndarray  # surface type (int), row of the friction table

    def records(self) -> np.ndarray:
        """``(n, n_wheels)`` records (``layout.HIT``) for the compiled update."""
        dist = np.asarray(self.dist, dtype=float)
        out = np.zeros(dist.shape, L.HIT)
        out["dist"], out["normal"], out["surface"] = dist, self.normal, self.surface
        return out


class VehicleOutputs:
    """Forces for the simulator and telemetry: records ``wheel (n, n_wheels)``
    (``layout.WHEEL_OUTPUTS``) and ``vehicle (n,)`` (``VEHICLE_OUTPUTS``) with named views.

    In an update of ``dt`` (``n`` wheel substeps, see ``simulation.substeps_low``):

    * **means over the substeps** (what acts over ``dt``): ``long_force``, ``lat_force``,
      ``tire_force``, ``aligning_moment``, ``drive_torque``, ``engine_torque``, ``clutch_slip``,
      ``wrench``, ``extra_torque`` - so they reconcile: with the clutch engaged the whole update
      ``clutch.strength x clutch_slip`` is the mean clutch torque, ``drive_torque`` sums to
      ``gear_ratio`` times it (a differential's shares sum to 1) and ``engine_moi x (change of
      engine_omega) / dt = engine_torque - engine damping - clutch torque``;
    * **the last substep's**: ``friction`` (a tyre input) and the contact patch's slips
      ``long_slip``, ``lat_slip`` (the wheel's slips less the tread's deflection rate: what the
      tyre force corresponds to; 0 at rest, see ``tire_models``);
    * **end of the update** (or constant within it): the rest - ``engine_omega``,
      ``patch_slide`` (with the spins after the last substep), suspension, loads, contact, steer,
      gear, ``gear_ratio``, ``throttle``.
    """

    def __init__(self, wheel: np.ndarray, vehicle: np.ndarray):
        self.wheel, self.vehicle = wheel, vehicle

    @classmethod
    def zeros(cls, params: VehicleParams, n_vehicles: int = 1) -> VehicleOutputs:
        return cls(np.zeros((n_vehicles, params.n_wheels), L.WHEEL_OUTPUTS),
                   np.zeros(n_vehicles, L.VEHICLE_OUTPUTS))

    def copy(self) -> VehicleOutputs:
        return VehicleOutputs(self.wheel.copy(), self.vehicle.copy())

    susp_force = field_view("wheel", "susp_force", doc="N, world, (..., 3)")
    susp_point = field_view("wheel", "susp_point", doc="m, world, (..., 3)")
    tire_force = field_view("wheel", "tire_force", doc="N, world, (..., 3) (mean)")
    tire_point = field_view("wheel", "tire_point",
                             doc="m, world, (..., 3): the contact patch, where the tyre touches "
                                 "its ray's hit plane (+ tire_force_height along the normal)")
    in_contact = field_view("wheel", "in_contact", dtype=bool, doc="wheel on the ground")
    jounce = field_view("wheel", "jounce", doc="m, positive compressed")
    spring_force = field_view("wheel", "spring_force",
                               doc="N, suspension force along the ground normal (the tyre "
                               "load before the filter; see suspension.py)")
    load = field_view("wheel", "load", doc="N, tyre load used by the tyre model")
    normalised_load = field_view("wheel", "normalised_load", doc="-, load / rest load (unfiltered)")
    friction = field_view("wheel", "friction", doc="-, surface x graph (last substep)")
    long_slip = field_view("wheel", "long_slip",
                            doc="-, the contact patch's (omega r - v) / max(|v|, |omega r|) "
                                "(last substep)")
    lat_slip = field_view("wheel", "lat_slip", doc="rad, the contact patch's (last substep)")
    long_force = field_view("wheel", "long_force", doc="N (mean)")
    lat_force = field_view("wheel", "lat_force", doc="N (mean)")
    aligning_moment = field_view("wheel", "aligning_moment", doc="N m (mean)")
    patch_slide = field_view("wheel", "patch_slide",
                        doc="m/s, contact patch over the road: (v_long - omega r, v_lat)")
    steer = field_view("wheel", "steer", doc="rad")
    heading = field_view("wheel", "heading",
                          doc="-, the steered wheel's forward axis in the chassis x-y plane: "
                              "(cos, sin) of the steer, (..., 2)")
    camber = field_view("wheel", "camber", doc="rad")
    drive_torque = field_view("wheel", "drive_torque", doc="N m delivered to each wheel (mean)")
    engine_omega = field_view("vehicle", "engine_omega", doc="rad/s, (n,)")
    engine_torque = field_view("vehicle", "engine_torque",
                                doc="N m, (n,), the engine's own torque (mean)")
    clutch_slip = field_view("vehicle", "clutch_slip",
                              doc="rad/s, (n,), engine spin - gear_ratio x the differential's "
                                  "wheel spin (mean); in neutral or while shifting the ratio is 0 "
                                  "and it is the engine spin (no torque passes)")
    gear = field_view("vehicle", "gear", dtype=np.int64,
                       doc="(n,) int, the engaged gear: 0 (neutral) while a change is in progress")
    gear_ratio = field_view("vehicle", "gear_ratio", doc="gear x final, 0 in neutral or shifting")
    throttle = field_view("vehicle", "throttle", doc="applied (0 during automatic shifts)")
    extra_torque = field_view("vehicle", "extra_torque",
                         doc="(n, 3) world torque about the CoM (tyre pitch/roll scaling)")
    wrench = field_view("vehicle", "wrench",
                   doc="(n, 6) total force and torque about the CoM on the chassis, world")
