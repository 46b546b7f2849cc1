"""A vehicle: the parameters of all parts, its batched state, commands and outputs.

Everything is batched: arrays lead with ``(n_vehicles, n_wheels)`` (or ``(n_vehicles,)`` for
per-vehicle quantities) and one :func:`traction.vehicle_model.step` advances every vehicle of a
batch (all of the same :class:`VehicleParams`), like PhysX's ``PxVehicleUpdates``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from . import differential, sticky, suspension, tire, wheel
from .antiroll import AntiRollParams
from .chassis import ChassisParams
from .clutch import ClutchParams
from .engine import EngineParams
from .errors import VehicleConfigError
from .gearbox import GearboxParams, GearboxState
from .params import param, validate_fields
from .steering import SteeringParams
from .tire_curve import DEFAULT as DEFAULT_CURVES
from .tire_curve import CurveSet


@dataclass(frozen=True)
class SimulationParams:
    """Numerical settings of the vehicle update (scalars)."""

    min_long_slip_denominator: float = param(4.0, unit="m/s", lo=0.0, hi=100.0, lo_open=True,
                                             shape="scalar", doc="PhysX minLongSlipDenominator")
    min_lat_slip_denominator: float = param(1.0, unit="m/s", lo=0.0, hi=100.0, lo_open=True,
                                            shape="scalar", doc="smallest lateral slip denominator")
    substep_speed_threshold: float = param(5.0, unit="m/s", lo=0.0, hi=100.0, shape="scalar",
                                           doc="below this forward speed use substeps_low")
    substeps_low: int = param(3, unit="-", lo=1, hi=64, shape="scalar",
                              doc="wheel substeps per update at low speed")
    substeps_high: int = param(1, unit="-", lo=1, hi=64, shape="scalar",
                               doc="wheel substeps per update at high speed")

    def validate(self, prefix: str = "simulation.", where: str = "") -> None:
        """Raise VehicleConfigError naming the first field out of range."""
        validate_fields(self, prefix, where)


@dataclass(frozen=True)
class TireForceScaling:
    """Scale the pitch and roll parts of the tyre forces' moment about the CoM (the talk's trick
    for high grip without wallowing): 1 = physical, 0 = no pitch/roll moment from tyre forces."""

    pitch: float = param(1.0, lo=0.0, hi=1.0, shape="scalar", doc="share of the pitch moment kept")
    roll: float = param(1.0, lo=0.0, hi=1.0, shape="scalar", doc="share of the roll moment kept")

    def validate(self, prefix: str = "tire_force_scaling.", where: str = "") -> None:
        validate_fields(self, prefix, where)


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
    sticky: sticky.StickyParams = field(default_factory=sticky.StickyParams)
    simulation: SimulationParams = field(default_factory=SimulationParams)
    tire_force_scaling: TireForceScaling = field(default_factory=TireForceScaling)
    curve_sets: tuple[CurveSet, ...] = (DEFAULT_CURVES,)
    custom_tire: Callable | None = None

    @property
    def n_wheels(self) -> int:
        return len(self.wheel_names)

    @property
    def has_engine(self) -> bool:
        return self.differential.has_engine

    @cached_property
    def groups(self) -> np.ndarray:
        """One-hot ``(n_wheels, n_groups)`` wheel -> spinning group map (tank sides)."""
        return differential.wheel_groups(self.differential, self.suspension.position)

    @cached_property
    def base_split(self) -> np.ndarray:
        """Static differential split ``(n_wheels,)``."""
        return differential.base_split(self.differential, self.n_wheels)

    def validate(self, where: str = "") -> None:
        """Validate every part (raises VehicleConfigError naming file and field)."""
        for part in (self.chassis, self.wheels, self.suspension, self.tires, self.steering,
                     self.differential, self.engine, self.gearbox, self.clutch, self.anti_roll,
                     self.tire_load_filter, self.sticky, self.simulation, self.tire_force_scaling,
                     *self.curve_sets):
            part.validate(where=where)
        if self.tires.uses("custom").any() and self.custom_tire is None:
            raise VehicleConfigError(f"{where}: a wheel uses tire.model = 'custom' but no "
                                     "custom tyre function is set")
        if np.any(self.tires.curve_set >= len(self.curve_sets)):
            raise VehicleConfigError(f"{where}: tire.curve_set refers to a missing curve set")


@dataclass
class VehicleState:
    """Dynamic state: ``(n_vehicles, n_wheels)`` wheel arrays and per-vehicle drivetrain state."""

    omega: np.ndarray          # wheel spin (rad/s)
    sticky_anchor: np.ndarray  # patch displacement from its sticky anchor (m), (..., 2)
    sticky_timer: np.ndarray   # time spent slow enough to stick (s), (..., 2)
    engine_omega: np.ndarray   # (n_vehicles,) rad/s
    gearbox: GearboxState
    drive_torque: np.ndarray   # drive torque on each wheel in the last substep (N m)

    @classmethod
    def zeros(cls, params: VehicleParams, n_vehicles: int = 1, gear: int = 1) -> VehicleState:
        """All at rest, engine idle at 0, in ``gear`` (first by default)."""
        shape = (n_vehicles, params.n_wheels)
        return cls(np.zeros(shape), np.zeros(shape + (2,)), np.zeros(shape + (2,)),
                   np.zeros(n_vehicles), GearboxState.initial(n_vehicles, gear), np.zeros(shape))


@dataclass
class Commands:
    """What the driver (or agent) asks for. Per-vehicle fields ``(n,)``, per-wheel ``(n, n_wheels)``.

    Engine vehicles use throttle/brake/handbrake/steer (+ thrust for tanks, + gear requests);
    ``direct`` vehicles (no engine) use ``wheel_torque``. ``wheel_brake`` and ``wheel_steer`` add
    per-wheel brake and steer angle for any vehicle; ``torque_split`` (if not NaN) overrides the
    differential's torque ratios (rows are normalised to sum to 1).
    """

    throttle: np.ndarray       # 0..1
    brake: np.ndarray          # 0..1 (all wheels)
    handbrake: np.ndarray      # 0..1
    steer: np.ndarray          # -1..1, positive turns left
    thrust: np.ndarray         # (n, 2) tank tracks left, right, -1..1
    gear_up: np.ndarray        # bool
    gear_down: np.ndarray      # bool
    target_gear: np.ndarray    # int; -2 = no request
    wheel_torque: np.ndarray   # N m, direct drive
    wheel_brake: np.ndarray    # 0..1 per wheel
    wheel_steer: np.ndarray    # rad per wheel, added to the steering
    torque_split: np.ndarray   # per-wheel torque ratios override, NaN = differential

    NO_GEAR_REQUEST = -2

    @classmethod
    def zeros(cls, params: VehicleParams, n_vehicles: int = 1) -> Commands:
        n, w = n_vehicles, params.n_wheels
        return cls(np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros((n, 2)),
                   np.zeros(n, bool), np.zeros(n, bool), np.full(n, cls.NO_GEAR_REQUEST),
                   np.zeros((n, w)), np.zeros((n, w)), np.zeros((n, w)), np.full((n, w), np.nan))


@dataclass
class ChassisKinematics:
    """Chassis pose and velocity from the simulator, world frame, ``(n_vehicles, ...)``."""

    position: np.ndarray          # chassis frame origin (m), (n, 3)
    rotation: np.ndarray          # world-from-chassis rotation, (n, 3, 3)
    com: np.ndarray               # centre of mass (m), (n, 3)
    velocity: np.ndarray          # CoM linear velocity (m/s), (n, 3)
    angular_velocity: np.ndarray  # (rad/s), (n, 3)


@dataclass
class GroundHits:
    """What is under each wheel: the suspension ray's hit, ``(n_vehicles, n_wheels, ...)``."""

    dist: np.ndarray     # distance along the ray (m); negative = no hit
    normal: np.ndarray   # ground normal, world frame, (..., 3)
    surface: np.ndarray  # surface type (int), row of the friction table


@dataclass
class VehicleOutputs:
    """Forces for the simulator and telemetry, ``(n_vehicles, n_wheels, ...)`` or ``(n_vehicles,)``."""

    susp_force: np.ndarray   # N, world, (..., 3)
    susp_point: np.ndarray   # m, world, (..., 3)
    tire_force: np.ndarray   # N, world, (..., 3)
    tire_point: np.ndarray   # m, world, (..., 3)
    in_contact: np.ndarray   # bool
    jounce: np.ndarray       # m, positive compressed
    spring_force: np.ndarray  # N (strut force incl. anti-roll bars)
    load: np.ndarray         # N, tyre load used by the tyre model
    normalised_load: np.ndarray  # -, load / rest load (unfiltered)
    friction: np.ndarray     # -, surface x graph
    long_slip: np.ndarray    # -
    lat_slip: np.ndarray     # rad
    long_force: np.ndarray   # N
    lat_force: np.ndarray    # N
    aligning_moment: np.ndarray  # N m
    patch_slide: np.ndarray  # m/s, contact patch over the road: (v_long - omega r, v_lat), (..., 2)
    steer: np.ndarray        # rad
    camber: np.ndarray       # rad
    drive_torque: np.ndarray  # N m delivered to each wheel by the drivetrain
    engine_omega: np.ndarray  # rad/s, (n,)
    engine_torque: np.ndarray  # N m, (n,)
    clutch_slip: np.ndarray   # rad/s, (n,)
    gear: np.ndarray          # (n,) int
    gear_ratio: np.ndarray    # (n,) gear x final, 0 in neutral or during a change
    throttle: np.ndarray      # (n,) applied (0 during automatic shifts)
    extra_torque: np.ndarray  # (n, 3) world torque about the CoM (tyre pitch/roll scaling)


def check_timestep(p: VehicleParams, dt: float) -> list[str]:
    """Warn (``warnings.warn``) about springs too stiff for the physics step ``dt``.

    PhysX's rule: ``alpha = sqrt(sprung_mass / spring_strength) / dt`` should exceed 5.

    Returns:
        The warning messages (empty when every spring is fine).
    """
    msgs = []
    for i, a in enumerate(p.suspension.alpha(dt)):
        if a < 5.0:
            msgs.append(f"{p.name}: wheel {p.wheel_names[i]}: spring alpha = sqrt(m/k)/dt = "
                        f"{a:.2f} < 5 at dt = {dt:g} s; lower spring_strength or the timestep")
    for m in msgs:
        warnings.warn(m, RuntimeWarning, stacklevel=2)
    return msgs
