"""The MuJoCo <-> vehicle_model bridge: the only code that reads or writes MjData for vehicles.

One physics substep::

    mj_step1            positions, velocities, sensors (all wheel rangefinders, in C)
    gather              chassis pose/velocity + per-wheel (dist, point, normal) -> arrays
    vehicle_model.step  suspension, tyres, wheel spin on (n_vehicles, n_wheels) arrays
    apply               sum forces per chassis, add r x F about the CoM, assign xfrc_applied
    mj_step2            integrate

Forces are recomputed every substep; ``mj_step(nstep=k)`` is never used for vehicles.
"""

from __future__ import annotations

import mujoco
import numpy as np

from traction import vehicle_model as vm
from traction.scenes import Scene, names
from traction.vehicle_model.telemetry import Telemetry
from traction.vehicle_model.vec import cross

from .surfaces import SurfaceLookup


class VehicleSim:
    """One MuJoCo world with one vehicle, stepped at the model's timestep.

    Attributes:
        model, data: the MuJoCo model and data.
        params: vehicle parameters.
        state: vehicle state (``n_vehicles = 1``).
        commands: the driver's commands applied at every substep (set with ``set_commands``).
        outputs: the last :class:`~traction.vehicle_model.VehicleOutputs` (telemetry).
        friction_table: tyre/surface friction, editable between steps.
        telemetry: :class:`~traction.vehicle_model.telemetry.Telemetry` ring buffer, or None.
    """

    def __init__(self, scene: Scene, friction_table: vm.FrictionTable | None = None,
                 telemetry: int = 0):
        """Args:
            scene: compiled scene from :func:`traction.scenes.build_scene`.
            friction_table: tyre/surface friction (default table if None).
            telemetry: ring-buffer capacity in substeps (0 = no telemetry recorded).
        """
        self.model = scene.model
        self.data = mujoco.MjData(self.model)
        self.params = scene.vehicle
        self.scene = scene
        self.friction_table = friction_table or vm.FrictionTable.default()
        self.dt = float(self.model.opt.timestep)
        self.gravity = float(np.linalg.norm(self.model.opt.gravity))
        vm.check_timestep(self.params, self.dt)
        m = self.model
        self.body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, names.CHASSIS_BODY)
        joint = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, names.CHASSIS_JOINT)
        self.qpos_adr = int(m.jnt_qposadr[joint])
        self.qvel_adr = int(m.jnt_dofadr[joint])
        sensors = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SENSOR, names.wheel_ray_sensor(i))
                   for i in range(self.params.n_wheels)]
        self.sensor_adr = np.array([m.sensor_adr[s] for s in sensors])
        self.wheel_geoms = np.array([mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM,
                                                       names.wheel_visual(i))
                                     for i in range(self.params.n_wheels)])
        self.wheel_angle = np.zeros((1, self.params.n_wheels))
        self.telemetry = Telemetry(1, self.params.n_wheels, telemetry) if telemetry else None
        mujoco.mj_forward(self.model, self.data)
        self.surfaces = SurfaceLookup(self.model, self.data, scene)   # static geoms: once
        self.reset()

    # --- episode ---------------------------------------------------------------------------
    def reset(self, pos=None, quat=None, velocity=None) -> None:
        """Put the chassis at ``pos``/``quat`` (default: the scene's spawn pose) at rest."""
        mujoco.mj_resetData(self.model, self.data)
        a = self.qpos_adr
        self.data.qpos[a:a + 3] = self.scene.spawn_pos if pos is None else pos
        self.data.qpos[a + 3:a + 7] = self.scene.spawn_quat if quat is None else quat
        if velocity is not None:
            self.data.qvel[self.qvel_adr:self.qvel_adr + 3] = velocity
        self.state = vm.VehicleState.zeros(self.params, 1)
        self.commands = vm.Commands.zeros(self.params, 1)
        self.wheel_angle[:] = 0.0
        mujoco.mj_forward(self.model, self.data)
        self.outputs = None

    def set_commands(self, **values) -> None:
        """Set command fields (see :class:`~traction.vehicle_model.Commands`); scalars broadcast.

        Example: ``sim.set_commands(throttle=1.0, steer=-0.3)`` or, for a ``direct`` vehicle,
        ``sim.set_commands(wheel_torque=[0, 0, 500, 500])``. Fields not named keep their value.

        Raises:
            TypeError: unknown field. ValueError: non-finite value or wrong shape.
        """
        for name, value in values.items():
            if not hasattr(self.commands, name) or name.startswith("_"):
                raise TypeError(f"unknown command {name!r}; fields: "
                                f"{', '.join(vars(self.commands))}")
            current = getattr(self.commands, name)
            arr = np.asarray(value, dtype=current.dtype)
            if name != "torque_split" and arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
                raise ValueError(f"command {name} must be finite, got {value!r}")
            try:
                setattr(self.commands, name, np.broadcast_to(arr, current.shape).copy())
            except ValueError:
                raise ValueError(f"command {name}: shape {arr.shape} does not fit "
                                 f"{current.shape}") from None

    # --- one physics substep ---------------------------------------------------------------
    def substep(self) -> None:
        """mj_step1 -> vehicle update -> xfrc_applied -> mj_step2."""
        mujoco.mj_step1(self.model, self.data)
        kin, hits = self._gather()
        self.outputs = vm.step(self.params, self.state, kin, hits, self.commands,
                               self.friction_table, self.dt, self.gravity)
        self._apply(kin, self.outputs)
        self.wheel_angle += self.state.omega * self.dt
        if self.telemetry is not None:
            self.telemetry.record(self.data.time, self.outputs, self.state, self.commands)
        mujoco.mj_step2(self.model, self.data)

    def step(self, n_substeps: int = 1) -> None:
        """Run ``n_substeps`` physics substeps with the current inputs."""
        for _ in range(n_substeps):
            self.substep()

    def kinematics(self) -> vm.ChassisKinematics:
        """Chassis pose, CoM and CoM/angular velocity (world frame), batch of one."""
        d, b = self.data, self.body
        rot = d.xmat[b].reshape(1, 3, 3).copy()
        pos = d.xpos[b][None].copy()
        com = d.xipos[b][None].copy()
        qv = d.qvel[self.qvel_adr:self.qvel_adr + 6]
        omega = rot[0] @ qv[3:6]                       # free-joint angular velocity is local
        vel = qv[0:3] + cross(omega, com[0] - pos[0])  # linear part is at the body origin
        return vm.ChassisKinematics(pos, rot, com, vel[None], omega[None])

    def _gather(self) -> tuple[vm.ChassisKinematics, vm.GroundHits]:
        d = self.data
        kin = self.kinematics()
        ray = d.sensordata[self.sensor_adr[:, None] + np.arange(names.RAY_DATA_SIZE)]
        dist = ray[None, :, 0]
        points = ray[None, :, 1:4]
        normal = ray[None, :, 4:7]
        hits = vm.GroundHits(dist, normal, self.surfaces.lookup(points))
        return kin, hits

    def _apply(self, kin: vm.ChassisKinematics, out: vm.VehicleOutputs) -> None:
        force = out.susp_force + out.tire_force
        torque = (cross(out.susp_point - kin.com[:, None], out.susp_force)
                  + cross(out.tire_point - kin.com[:, None], out.tire_force))
        self.data.xfrc_applied[self.body, :3] = force[0].sum(axis=0)
        self.data.xfrc_applied[self.body, 3:] = torque[0].sum(axis=0) + out.extra_torque[0]

    # --- queries ---------------------------------------------------------------------------
    def chassis_position(self) -> np.ndarray:
        """Chassis frame origin, world (m)."""
        return self.data.xpos[self.body].copy()

    def com_position(self) -> np.ndarray:
        """Centre of mass, world (m)."""
        return self.data.xipos[self.body].copy()

    def com_velocity(self) -> np.ndarray:
        """Velocity of the centre of mass, world (m/s)."""
        return self.kinematics().velocity[0]

    def forward_speed(self) -> float:
        """CoM velocity along the chassis x axis (m/s)."""
        return float(self.com_velocity() @ self.data.xmat[self.body].reshape(3, 3)[:, 0])

    def update_wheel_visuals(self) -> None:
        """Pose the visual tyres from jounce, steer and spin (call before rendering)."""
        if self.outputs is None:
            return
        sus, wh = self.params.suspension, self.params.wheels
        out = self.outputs
        centre = sus.ray_start(wh.radius) + sus.travel_direction * (
            sus.max_compression + wh.radius - out.jounce[0])[:, None]
        for i, g in enumerate(self.wheel_geoms):
            steer = np.zeros(4)
            mujoco.mju_axisAngle2Quat(steer, np.array([0.0, 0.0, 1.0]), out.steer[0, i])
            spin = np.zeros(4)
            mujoco.mju_axisAngle2Quat(spin, np.array([0.0, 1.0, 0.0]), self.wheel_angle[0, i])
            axle = np.zeros(4)
            mujoco.mju_quatZ2Vec(axle, np.array([0.0, 1.0, 0.0]))
            q1, q2 = np.zeros(4), np.zeros(4)
            mujoco.mju_mulQuat(q1, steer, spin)
            mujoco.mju_mulQuat(q2, q1, axle)
            self.model.geom_pos[g] = centre[i]
            self.model.geom_quat[g] = q2
