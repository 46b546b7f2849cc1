"""A vehicle: parameters of all parts, batched state, and the one update sequence.

Everything is batched: state arrays lead with ``(n_vehicles, n_wheels)`` and one :func:`step`
advances every vehicle of the batch (all of the same :class:`VehicleParams`), like PhysX's
``PxVehicleUpdates``. The simulator supplies the chassis kinematics and per-wheel ground hits
and receives per-wheel forces and world application points; nothing here knows about MuJoCo.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import sticky, suspension, tire, wheel
from .chassis import ChassisParams
from .params import param, validate_fields
from .surface import FrictionTable
from .vec import cross, dot


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
class VehicleParams:
    """Everything that defines one vehicle type. Built by :func:`traction.vehicle_model.load_vehicle`."""

    name: str
    wheel_names: tuple[str, ...]
    chassis: ChassisParams
    wheels: wheel.WheelParams
    suspension: suspension.SuspensionParams
    tires: tire.TireParams
    load_filter: tire.TireLoadFilter = field(default_factory=tire.TireLoadFilter)
    sticky: sticky.StickyParams = field(default_factory=sticky.StickyParams)
    simulation: SimulationParams = field(default_factory=SimulationParams)

    @property
    def n_wheels(self) -> int:
        return len(self.wheel_names)

    def validate(self, where: str = "") -> None:
        """Validate every part (raises VehicleConfigError naming file and field)."""
        self.chassis.validate(where=where)
        self.wheels.validate(where=where)
        self.suspension.validate(where=where)
        self.tires.validate(where=where)
        self.load_filter.validate(where=where)
        self.sticky.validate(where=where)
        self.simulation.validate(where=where)


@dataclass
class VehicleState:
    """Dynamic state, ``(n_vehicles, n_wheels)`` arrays (last axis 2 = long, lat)."""

    omega: np.ndarray          # wheel spin (rad/s)
    sticky_anchor: np.ndarray  # patch displacement from its sticky anchor (m), (..., 2)
    sticky_timer: np.ndarray   # time spent slow enough to stick (s), (..., 2)

    @classmethod
    def zeros(cls, params: VehicleParams, n_vehicles: int = 1) -> VehicleState:
        shape = (n_vehicles, params.n_wheels)
        return cls(np.zeros(shape), np.zeros(shape + (2,)), np.zeros(shape + (2,)))


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
class WheelInputs:
    """Direct per-wheel commands (PhysX NoDrive), ``(n_vehicles, n_wheels)``."""

    drive_torque: np.ndarray  # N m, positive drives forward
    brake: np.ndarray         # 0..1 of max_brake_torque
    handbrake: np.ndarray     # 0..1 of max_handbrake_torque
    steer: np.ndarray         # rad, positive turns left; clipped to max_steer

    @classmethod
    def zeros(cls, params: VehicleParams, n_vehicles: int = 1) -> WheelInputs:
        shape = (n_vehicles, params.n_wheels)
        return cls(*(np.zeros(shape) for _ in range(4)))


@dataclass
class VehicleOutputs:
    """Forces for the simulator and per-wheel telemetry, ``(n_vehicles, n_wheels, ...)``."""

    susp_force: np.ndarray   # N, world, (..., 3)
    susp_point: np.ndarray   # m, world, (..., 3)
    tire_force: np.ndarray   # N, world, (..., 3)
    tire_point: np.ndarray   # m, world, (..., 3)
    in_contact: np.ndarray   # bool
    jounce: np.ndarray       # m, positive compressed
    spring_force: np.ndarray  # N
    load: np.ndarray         # N, tyre load
    normalised_load: np.ndarray  # -, load / rest load (unfiltered)
    friction: np.ndarray     # -, surface x graph
    long_slip: np.ndarray    # -
    lat_slip: np.ndarray     # rad
    long_force: np.ndarray   # N
    lat_force: np.ndarray    # N
    aligning_moment: np.ndarray  # N m
    steer: np.ndarray        # rad
    camber: np.ndarray       # rad


def _world(rotation: np.ndarray, vec_body: np.ndarray) -> np.ndarray:
    """Rotate per-wheel body vectors (n_wheels, 3) by per-vehicle rotations (n, 3, 3)."""
    return np.einsum("vij,...wj->vwi", rotation, vec_body)


def _point_velocity(ck: ChassisKinematics, point: np.ndarray) -> np.ndarray:
    """Rigid-body velocity of world points (n, n_wheels, 3)."""
    r = point - ck.com[:, None, :]
    return ck.velocity[:, None, :] + cross(ck.angular_velocity[:, None, :], r)


def step(p: VehicleParams, s: VehicleState, ck: ChassisKinematics, hits: GroundHits,
         cmd: WheelInputs, friction_table: FrictionTable, dt: float,
         gravity: float = 9.81) -> VehicleOutputs:
    """Advance all vehicles by ``dt`` and return the forces to apply.

    The state is updated in place. Order: commands -> steering -> suspension -> tyre loads ->
    contact frame and velocities -> sticky tyre -> [substeps: slips -> tyre forces -> wheel spin]
    -> forces out. The chassis velocity is held during the wheel substeps and the tyre forces are
    averaged over them.
    """
    sus, wh, ti, sim = p.suspension, p.wheels, p.tires, p.simulation
    # 1. commands
    brake = np.clip(cmd.brake, 0.0, 1.0)
    handbrake = np.clip(cmd.handbrake, 0.0, 1.0)
    brake_torque = wheel.brake_torque(wh, brake, handbrake)
    steer = np.clip(cmd.steer, -wh.max_steer, wh.max_steer) + wh.toe
    # 2. suspension line in the world and where it meets the ground
    down = _world(ck.rotation, sus.travel_direction)
    cos_inc = -dot(down, hits.normal)
    jounce, contact = suspension.jounce_from_hit(sus, wh.radius, hits.dist, cos_inc)
    start = ck.position[:, None, :] + _world(ck.rotation, sus.ray_start(wh.radius))
    centre = start + down * (sus.max_compression + wh.radius - jounce)[..., None]
    patch = centre - hits.normal * wh.radius[:, None]
    v_patch = _point_velocity(ck, patch)
    v_normal = dot(v_patch, hits.normal)
    jounce_rate = np.where(contact, -v_normal / np.maximum(cos_inc, 0.1), 0.0)
    f_spring = suspension.spring_force(sus, jounce, jounce_rate, contact, gravity)
    # 3. tyre loads
    rest_load = sus.sprung_mass * gravity
    normalised = f_spring / rest_load
    filtered = np.where(contact, p.load_filter.apply(normalised), 0.0)
    model_load = filtered * rest_load
    # 4. contact frame: wheel heading projected on the ground plane, lateral to its left
    heading_body = np.stack([np.cos(steer), np.sin(steer), np.zeros_like(steer)], axis=-1)
    heading = np.einsum("vij,vwj->vwi", ck.rotation, heading_body)
    fwd = heading - hits.normal * dot(heading, hits.normal)[..., None]
    fwd /= np.maximum(np.linalg.norm(fwd, axis=-1, keepdims=True), 1e-9)
    left = cross(hits.normal, fwd)
    v_long = dot(v_patch, fwd)
    v_lat = dot(v_patch, left)
    mu_surface = friction_table.lookup(hits.surface, ti.tire_type)
    camber = suspension.camber(sus, jounce)
    # 5. sticky tyre (static friction at rest), once per update
    locked = (s.omega == 0.0) & (brake_torque > 0.0)
    rolling_slow = np.abs(v_long) < p.sticky.speed
    mu_limit = mu_surface * ti.friction_vs_slip[:, 0, 1] * model_load
    stick_long, f_stick_long = sticky.update(p.sticky, s.sticky_anchor[..., 0],
                                             s.sticky_timer[..., 0], v_long, contact & locked,
                                             sus.sprung_mass, mu_limit, dt)
    stick_lat, f_stick_lat = sticky.update(p.sticky, s.sticky_anchor[..., 1],
                                           s.sticky_timer[..., 1], v_lat, contact & rolling_slow,
                                           sus.sprung_mass, mu_limit, dt)
    # 6. wheel substeps: slips -> tyre forces -> wheel spin (chassis velocity held)
    fwd_speed = np.abs(dot(ck.velocity, ck.rotation[:, :, 0]))
    n_sub = np.where(fwd_speed < sim.substep_speed_threshold, sim.substeps_low, sim.substeps_high)
    f_long_sum = np.zeros_like(jounce)
    f_lat_sum = np.zeros_like(jounce)
    for k in range(int(n_sub.max())):
        run = (n_sub > k)[:, None]
        h = dt / n_sub[:, None]
        long_slip, lat_slip = tire.slips(v_long, v_lat, s.omega * wh.radius,
                                         sim.min_long_slip_denominator, sim.min_lat_slip_denominator)
        long_slip = np.where(contact, long_slip, 0.0)
        lat_slip = np.where(contact, lat_slip, 0.0)
        mu = mu_surface * tire.friction_multiplier(ti, long_slip)
        f_long, f_lat, moment = tire.physx_forces(ti, long_slip, lat_slip, camber, mu, model_load,
                                                  rest_load, filtered, gravity)
        f_long = np.where(stick_long, f_stick_long, f_long)
        f_lat = np.where(stick_lat, f_stick_lat, f_lat)
        scale = np.minimum(1.0, mu * model_load / np.maximum(np.hypot(f_long, f_lat), 1e-9))
        f_long, f_lat = f_long * scale, f_lat * scale
        omega = wheel.integrate_spin(wh, s.omega, cmd.drive_torque, -f_long * wh.radius,
                                     brake_torque, h)
        s.omega = np.where(run, omega, s.omega)
        f_long_sum += np.where(run, f_long * h, 0.0)
        f_lat_sum += np.where(run, f_lat * h, 0.0)
    f_long, f_lat = f_long_sum / dt, f_lat_sum / dt
    # 7. forces out, world frame, with their application points
    origin = ck.position[:, None, :]
    return VehicleOutputs(
        susp_force=-down * f_spring[..., None],
        susp_point=origin + _world(ck.rotation, sus.force_point),
        tire_force=fwd * f_long[..., None] + left * f_lat[..., None],
        tire_point=origin + _world(ck.rotation, sus.tire_force_point),
        in_contact=contact, jounce=jounce, spring_force=f_spring, load=model_load,
        normalised_load=normalised, friction=mu, long_slip=long_slip, lat_slip=lat_slip,
        long_force=f_long, lat_force=f_lat, aligning_moment=moment, steer=steer, camber=camber)


def check_timestep(p: VehicleParams, dt: float) -> list[str]:
    """Warn (``warnings.warn``) about springs too stiff for the physics step ``dt``.

    PhysX's rule: ``alpha = sqrt(sprung_mass / spring_strength) / dt`` should exceed 5.

    Returns:
        The warning messages (empty when every spring is fine).
    """
    import warnings

    msgs = []
    for i, a in enumerate(p.suspension.alpha(dt)):
        if a < 5.0:
            msgs.append(f"{p.name}: wheel {p.wheel_names[i]}: spring alpha = sqrt(m/k)/dt = "
                        f"{a:.2f} < 5 at dt = {dt:g} s; lower spring_strength or the timestep")
    for m in msgs:
        warnings.warn(m, RuntimeWarning, stacklevel=2)
    return msgs
