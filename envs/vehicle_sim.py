"""The MuJoCo <-> vehicle_model bridge for one vehicle: the only code that reads or writes
MjData for vehicles (besides ``snapshot.py``, which saves and restores the whole of it).

A :class:`VehicleSim` is one MuJoCo world with one vehicle, a view of one row of a
:class:`~traction.envs.world.World` (a world of its own, or of a vector env's). Its physics
substeps run in the compiled loop of ``physics.py`` (``mj_step1 -> gather -> vehicle update ->
xfrc_applied -> mj_step2``).
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from traction import vehicle_model as vm
from traction.scenes import Scene, names
from traction.vehicle_model import layout as L
from traction.vehicle_model.telemetry import Telemetry

from . import physics
from .snapshot import refuse_copies
from .surfaces import SurfaceLookup
from .world import NO_ACTION, World, bad_friction, packed_rows, substeps

_SCALAR_COMMANDS = {"throttle", "brake", "handbrake", "steer"}


def _vector(name: str, value, size: int) -> np.ndarray | None:
    """``value`` as ``size`` finite floats (None stays None); ValueError naming ``name``."""
    if value is None:
        return None
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.shape != (size,) or not np.all(np.isfinite(arr)):
        raise ValueError(f"reset {name} = {value!r}; allowed: {size} finite numbers")
    return arr


def _unread_commands(kind: str) -> dict[str, str]:
    """The drive commands a vehicle whose differential is of type ``kind`` does not read ->
    why, and what drives it (a value that would act is refused: it would do nothing)."""
    if kind == "direct":
        unread = {"throttle": "a 'direct' vehicle has no engine; its wheels are driven by "
                              "wheel_torque (N m per wheel)",
                  "torque_split": "a 'direct' vehicle has no differential to split torque; "
                                  "give each wheel its wheel_torque"}
    else:
        unread = {"wheel_torque": f"drives a 'direct' vehicle's wheels; this one's engine drives "
                                  f"them through its {kind!r} differential: use throttle"}
    if kind == "tank":
        unread["torque_split"] = "a tank's tracks share the torque by thrust; use thrust"
    else:
        unread["thrust"] = f"steers a tank's tracks; this vehicle's differential is {kind!r}"
    return unread


def _acts(name: str, values: np.ndarray) -> bool:
    """Whether command ``name`` at ``values`` (checked numbers) would act: not all 0 (a
    torque_split: not all NaN, its 'no override')."""
    return bool(np.any(~np.isnan(values)) if name == "torque_split" else np.any(values != 0))


def _command_values(name: str, value, dtype) -> np.ndarray:
    """A command field's new values: finite numbers (``torque_split`` also NaN, "no override");
    whole numbers for integer fields (``target_gear``); ValueError naming the command."""
    try:
        raw = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"command {name} = {value!r}: not numbers") from None
    bad = np.isinf(raw) if name == "torque_split" else ~np.isfinite(raw)
    if np.dtype(dtype).kind in "iu":
        bad |= (raw != np.round(raw)) | (np.abs(raw) > 2**31)
    if np.any(bad):
        kind = ("whole numbers" if np.dtype(dtype).kind in "iu" else
                "finite (or NaN: no override)" if name == "torque_split" else "finite")
        raise ValueError(f"command {name} must be {kind}, got {value!r}")
    return raw.astype(dtype)


def _ray_sensors(m: mujoco.MjModel, p: vm.VehicleParams, scene_rays: str) -> np.ndarray:
    """Each wheel's first rangefinder's address in ``sensordata``; a footprint's rays follow it
    where the scene casts them with rangefinders (``scene_rays``: ``Terrain.footprint``),
    :data:`physics.RAY_STRIDE` values apart (checked: ``physics.gather`` reads them so)."""
    n_rays = p.contact.n_rays if scene_rays == "sensors" else 1
    first = []
    for i in range(p.n_wheels):
        ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SENSOR, names.wheel_ray_sensor(i, j))
               for j in ([None] if n_rays == 1 else range(n_rays))]
        adr = [m.sensor_adr[k] for k in ids]
        if min(ids) < 0 or np.any(np.diff(adr) != physics.RAY_STRIDE):
            raise ValueError(f"the scene's model has no consecutive rangefinders for wheel {i}'s "
                             f"{n_rays} rays (contact.model = {p.contact.model!r}): build it "
                             "with traction.scenes for these vehicle parameters")
        first.append(adr[0])
    return np.array(first)


class VehicleSim:
    """One MuJoCo world with one vehicle, stepped at the model's timestep.

    Built inside :meth:`World.filled <traction.envs.world.World.filled>`, it takes the next row
    of that world (a native vector env's); otherwise it has a world of its own.

    Attributes:
        model, data: the MuJoCo model and data.
        world, row: its :class:`~traction.envs.world.World` and its row there.
        rows: that row of every array the compiled loop reads and writes, ``(1, ...)`` views
            (``state``, ``commands``, ``outputs``, the update's inputs ``kin`` and ``hits``, ...).
        params: vehicle parameters.
        state: vehicle state (``n_vehicles = 1``).
        commands: the driver's commands applied at every substep (set with ``set_commands``).
        outputs: the last substep's :class:`~traction.vehicle_model.VehicleOutputs` (updated in
            place; ``outputs.copy()`` keeps a snapshot).
        friction_table: tyre/surface friction, editable between steps.
        telemetry: :class:`~traction.vehicle_model.telemetry.Telemetry` ring buffer, or None.
        now: the chassis kinematics after the last step, a 0-d array of one
            ``layout.KINEMATICS`` record (``position``, ``rotation``, ``com``, ``velocity``,
            ``angular_velocity``, world frame) viewing the world's row, written by the compiled
            loop (tasks read it instead of MjData; ``np.copy`` keeps a snapshot).
        action: ``(1, n_actions)``: the env's last action, clipped to [-1, 1] (read by a
            task's compiled action map, :meth:`step_mapped`).
    """

    __copy__ = __deepcopy__ = __reduce_ex__ = refuse_copies(
        "copy the environment instead (copy.deepcopy(env) and pickle rebuild it)")

    def __init__(self, scene: Scene, friction_table: vm.FrictionTable | None = None,
                 telemetry: int = 0, n_actions: int = 0):
        """Args:
            scene: compiled scene from :func:`traction.scenes.build_scene`.
            friction_table: tyre/surface friction (the table the scene's surface names were
                resolved in if None, so a custom table given to ``build_scene`` applies). A
                table given here must list the same surfaces in the same order.
            telemetry: ring-buffer capacity in substeps (0 = no telemetry recorded; recording
                runs the compiled loop one substep at a time).
            n_actions: width of :attr:`action`, the row a task's compiled action map reads
                (:meth:`step_mapped`, ``envs/actions.py``).
        """
        self.model = scene.model
        self.data = mujoco.MjData(self.model)
        self.params = scene.vehicle
        self.scene = scene
        self.n_actions = n_actions
        self._unread = _unread_commands(self.params.differential.type)
        self.params.validate(self.params.name)       # also parameters built in code
        table = scene.friction_table.same_surfaces(friction_table)   # (the scene's if None)
        table.check_tire_types(self.params.tires.tire_type, self.params.name)
        self._friction_table = table
        self.dt = float(self.model.opt.timestep)
        self.gravity = float(np.linalg.norm(self.model.opt.gravity))
        vm.check_timestep(self.params, self.dt, self.gravity)
        m = self.model
        self.body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, names.CHASSIS_BODY)
        joint = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, names.CHASSIS_JOINT)
        self.qpos_adr = int(m.jnt_qposadr[joint])
        self.qvel_adr = int(m.jnt_dofadr[joint])
        self.sensor_adr = _ray_sensors(m, self.params, scene.terrain.footprint)
        self.wheel_geoms = np.array([mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM,
                                                       names.wheel_visual(i))
                                     for i in range(self.params.n_wheels)])
        self.telemetry = Telemetry(1, self.params.n_wheels, telemetry, self.params.wheel_names) \
            if telemetry else None
        self._kin = np.zeros(1, L.KINEMATICS)
        self._sameframe = {name: getattr(m, name).copy()          # (see use_vehicle)
                           for name in ("body_sameframe", "geom_sameframe", "site_sameframe")}
        mujoco.mj_forward(self.model, self.data)
        self.surfaces = SurfaceLookup(self.model, self.data, scene)   # static geoms: once
        self.world = World.of_new_sim()
        self.row = self.world.add(self)
        self.world.point_at_table(self.row, table.values)
        self.rows = self.world.rows(self.row)
        r = self.rows
        self.state, self.commands, self.outputs = r.state, r.commands, r.outputs
        # (0-d views, not numpy's void scalars: np.copy of a void still shares its memory)
        self.wheel_angle, self.now, self.action = r.wheel_angle, r.now[0, ...], r.action
        self._call = self.world.row_call(self.row)
        self.reset()

    @property
    def friction_table(self) -> vm.FrictionTable:
        """Tyre/surface friction, this world's own (also in a vector env): edit it in place
        (``set``, ``values[...]``, or assign ``values``) or assign another table of the same
        surfaces with a column for each of the vehicle's tyre types (in a vector env: as many
        tyre types as the other worlds' tables). Read at every step (values checked there)."""
        return self._friction_table

    @friction_table.setter
    def friction_table(self, table: vm.FrictionTable) -> None:
        table = self.scene.friction_table.same_surfaces(table)
        table.check_tire_types(self.params.tires.tire_type, self.params.name)
        self.world.point_at_table(self.row, table.values)
        self._friction_table = table

    def use_vehicle(self, p: vm.VehicleParams) -> None:
        """Step the vehicle ``p`` from now on: parameters that differ from the built vehicle's
        in values only (a randomised draw: ``envs/randomize.py``; ValueError otherwise). Its
        records (``p.packed``) go to this world's row, its chassis mass, centre of mass and
        inertia to the MuJoCo model (whose constants are computed again: ``mj_setConst``, which
        leaves MjData to be reset); :attr:`params` is then ``p``. Call it before a reset."""
        self.world.set_params(self.row, p.packed)
        m, b = self.model, self.body
        m.body_mass[b] = p.chassis.mass
        m.body_ipos[b] = p.chassis.com
        m.body_inertia[b] = p.chassis.inertia
        mujoco.mj_setConst(m, self.data)
        # mj_setConst also marks every body, geom and site that sits at its frame's origin now
        # as always there (MuJoCo then skips its offset): a terrain regenerated later at another
        # offset would be misplaced. The compiled flags hold for every terrain of the scene.
        for name, flags in self._sameframe.items():
            getattr(m, name)[...] = flags
        self.params = p

    def check_friction(self, doing: str = "stepped") -> None:
        """VehicleConfigError naming this world's table (and its world in a vector env) if a
        value is not finite and >= 0 (the compiled loop refuses it too)."""
        try:
            self._friction_table.checked_values()
        except vm.VehicleConfigError:
            raise bad_friction(self.world.world_name(self.row), doing) from None

    # --- episode ---------------------------------------------------------------------------
    def reset(self, pos=None, quat=None, velocity=None, yaw_rate: float = 0.0) -> None:
        """Put the chassis at ``pos`` (3 numbers, m) / ``quat`` (4, w x y z; MuJoCo normalises
        it) (default: the scene's spawn pose) at rest, or moving at ``velocity`` (3, m/s,
        world) and turning at ``yaw_rate`` (rad/s about its own up axis, positive turning left).

        Raises:
            ValueError: a pose or velocity that is not finite numbers of that length, a zero
                quaternion or a speed above ``physics.MAX_CHASSIS_SPEED`` (nothing is changed).
        """
        pos = _vector("pos", pos, 3)
        quat = _vector("quat", quat, 4)
        velocity = _vector("velocity", velocity, 3)
        if quat is not None and not np.linalg.norm(quat) > 1e-9:
            raise ValueError(f"reset quat = {quat.tolist()}: zero; allowed: a rotation "
                             "quaternion (w, x, y, z)")
        if not (isinstance(yaw_rate, float | int) and abs(yaw_rate) <= physics.MAX_CHASSIS_SPIN):
            raise ValueError(f"reset yaw_rate = {yaw_rate!r}; allowed: a number of rad/s up to "
                             f"{physics.MAX_CHASSIS_SPIN:g} in size")
        if velocity is not None and not np.linalg.norm(velocity) <= physics.MAX_CHASSIS_SPEED:
            raise ValueError(f"reset velocity = {velocity.tolist()}; allowed: a speed up to "
                             f"{physics.MAX_CHASSIS_SPEED:g} m/s (faster counts as diverged)")
        mujoco.mj_resetData(self.model, self.data)
        a = self.qpos_adr
        self.data.qpos[a:a + 3] = self.scene.spawn_pos if pos is None else pos
        self.data.qpos[a + 3:a + 7] = self.scene.spawn_quat if quat is None else quat
        if velocity is not None:
            self.data.qvel[self.qvel_adr:self.qvel_adr + 3] = velocity
        if yaw_rate:                          # the free joint's angular velocity is body-frame
            self.data.qvel[self.qvel_adr + 5] = yaw_rate
        zero_state = vm.VehicleState.zeros(self.params, 1)
        zero_cmd = vm.Commands.zeros(self.params, 1)
        for name in ("wheel", "vehicle", "gears"):
            getattr(self.state, name)[...] = getattr(zero_state, name)
        self.commands.vehicle[...], self.commands.wheel[...] = zero_cmd.vehicle, zero_cmd.wheel
        self.outputs.wheel[...], self.outputs.vehicle[...] = 0.0, 0.0
        self.wheel_angle[...] = 0.0
        if self.telemetry is not None:
            self.telemetry.clear()                       # samples stay in time order
        self.world.write_surfaces(self.row)                   # the terrain may be new
        mujoco.mj_forward(self.model, self.data)
        self.refresh()

    def refresh(self) -> None:
        """Re-read :attr:`now` and the divergence flag from MjData (the compiled loop writes
        them after every step; call this after editing MjData by hand)."""
        r = self.rows
        physics.chassis_now(r.addr[0], r.index[0], self.model.nv, r.now[0])
        r.bad[0] = physics.diverged(r.addr[0], r.index[0], self.model.nv, r.state.wheel[0])

    def restore(self, now: np.ndarray, diverged: bool, warnings: np.ndarray) -> None:
        """After MjData's state, the terrain and the vehicle arrays were restored from a
        snapshot: rewrite the terrain's surface map, recompute MjData's derived quantities
        (``mj_forward``), and put back the snapshot's MuJoCo warning counts (the divergence
        check reads them), chassis row and divergence flag (the compiled loop wrote those after
        the snapshot's step; the next step reads them)."""
        self.world.write_surfaces(self.row)
        mujoco.mj_forward(self.model, self.data)
        self.data.warning.number[:] = warnings
        self.rows.now[0], self.rows.bad[0] = now, diverged

    def diverged(self) -> bool:
        """MuJoCo met a bad position, velocity or acceleration since the last reset (and reset
        the world itself), or a position, velocity or wheel spin is not finite (as of the last
        step or refresh)."""
        return bool(self.rows.bad[0])

    def set_commands(self, **values) -> None:
        """Set command fields (see :class:`~traction.vehicle_model.Commands`); scalars broadcast.

        Example: ``sim.set_commands(throttle=1.0, steer=-0.3)`` or, for a ``direct`` vehicle,
        ``sim.set_commands(wheel_torque=[0, 0, 500, 500])``. Fields not named keep their value.

        Raises:
            TypeError: unknown field. ValueError: non-finite value or wrong shape.
        """
        for name, value in values.items():
            if name in _SCALAR_COMMANDS and isinstance(value, float | int | np.floating | np.integer):
                if not math.isfinite(value):
                    raise ValueError(f"command {name} must be finite, got {value!r}")
                if value and name in self._unread:
                    raise ValueError(f"command {name} = {value!r}: {self._unread[name]}")
                self.commands.vehicle[0][name] = value     # the common case, without numpy
                continue
            if name not in vm.Commands.FIELDS:
                raise TypeError(f"unknown command {name!r}; fields: {', '.join(vm.Commands.FIELDS)}")
            current = getattr(self.commands, name)
            arr = _command_values(name, value, current.dtype)
            if name in self._unread and _acts(name, arr):
                raise ValueError(f"command {name} = {value!r}: {self._unread[name]}")
            try:
                setattr(self.commands, name, np.broadcast_to(arr, current.shape))
            except ValueError:
                raise ValueError(f"command {name}: shape {arr.shape} does not fit "
                                 f"{current.shape}") from None

    # --- physics substeps ------------------------------------------------------------------
    def step(self, n_substeps: int = 1) -> None:
        """Run ``n_substeps`` physics substeps with the current inputs (compiled loop).

        Raises:
            TypeError: ``n_substeps`` is not an integer. ValueError: it is negative.
        """
        if self.telemetry is None:
            self._call.run(n_substeps)
            return
        for _ in range(substeps(n_substeps)):
            self._call.run(1)
            self.telemetry.record(self.data.time - self.dt, self.outputs, self.state, self.commands)

    def step_mapped(self, n_substeps: int, action_map: int) -> int:
        """Map :attr:`action` to the commands by ``action_map`` (``envs/actions.py``: checked
        and clipped to [-1, 1] in place), then :meth:`step`; all in one compiled call.

        Returns:
            The first non-finite channel of :attr:`action` (nothing was changed), or -1.

        Raises:
            ValueError: ``action_map`` is unknown or does not fit :attr:`action`'s width.
        """
        return self.step_action(n_substeps, action_map, NO_ACTION)

    def step_action(self, n_substeps: int, action_map: int, action: np.ndarray) -> int:
        """:meth:`step_mapped` after copying ``action`` (if not empty) into :attr:`action`, in
        the same compiled call (a separate copy costs a second call and its Python side). For
        the environments' common case: the caller has checked that ``action`` is a float32
        array of the row's shape (the compiled call does not check types)."""
        if self.telemetry is None:
            return self._call.run(n_substeps, action_map, action)
        bad = self._call.run(0, action_map, action)
        if bad < 0:
            self.step(n_substeps)
        return bad

    def substep(self) -> None:
        """One physics substep: mj_step1 -> vehicle update -> xfrc_applied -> mj_step2."""
        self.step(1)

    # --- queries ---------------------------------------------------------------------------
    def gather(self) -> tuple[vm.ChassisKinematics, vm.GroundHits]:
        """What the vehicle update sees now: chassis kinematics and wheel ray hits read from
        MjData by the compiled loop's ``physics.gather`` (after ``mj_forward`` or a step)."""
        r, m = self.rows, self.model
        physics.gather(r.addr, r.index, r.sensor_adr, r.grid, r.grid_info, r.heights,
                       r.ground_type, r.patches, m.nsensordata, m.nv,
                       packed_rows(r, self.world.constants),
                       vm.footprint.scratch(self.params.contact, self.params.wheels.radius),
                       r.kin, r.hits)
        h = r.hits[0]
        kin = self.kinematics()
        hits = vm.GroundHits(h["dist"][None, :].copy(), h["normal"][None, :].copy(),
                             h["surface"][None, :].astype(np.int64))
        return kin, hits

    def chassis_row(self):
        """The current chassis kinematics as one ``layout.KINEMATICS`` record (``position``,
        ``rotation``, ``com``, ``velocity``, ``angular_velocity``), all at one instant (the pose
        from ``qpos``, not MjData's poses, which after a step are still those it started from),
        by compiled code, as a 0-d array reused by the next call."""
        physics.chassis_now(self.rows.addr[0], self.rows.index[0], self.model.nv, self._kin[0])
        return self._kin[0, ...]

    def kinematics(self) -> vm.ChassisKinematics:
        """Chassis pose, CoM and CoM/angular velocity (world frame), batch of one."""
        k = self.chassis_row()
        return vm.ChassisKinematics(k["position"][None].copy(),
                                    k["rotation"].reshape(1, 3, 3).copy(),
                                    k["com"][None].copy(), k["velocity"][None].copy(),
                                    k["angular_velocity"][None].copy())

    def chassis_position(self) -> np.ndarray:
        """Chassis frame origin, world (m), now (:meth:`chassis_row`)."""
        return self.chassis_row()["position"].copy()

    def com_position(self) -> np.ndarray:
        """Centre of mass, world (m), now (:meth:`chassis_row`)."""
        return self.chassis_row()["com"].copy()

    def com_velocity(self) -> np.ndarray:
        """Velocity of the centre of mass, world (m/s)."""
        return self.chassis_row()["velocity"].copy()

    def forward_speed(self) -> float:
        """CoM velocity along the chassis x axis (m/s)."""
        k = self.chassis_row()
        return float(k["velocity"] @ k["rotation"][0:9:3])

    def pose_for_render(self) -> None:
        """The visual tyres (:meth:`update_wheel_visuals`), then body, geom and camera poses of
        ``qpos`` now. After a step MjData holds those of the last substep's ``mj_step1``, one
        physics step behind; this recomputes only derived poses (``mj_kinematics``,
        ``mj_comPos``, ``mj_camlight``), which the next substep's ``mj_step1`` recomputes
        anyway, so rendering does not change a rollout."""
        self.update_wheel_visuals()                    # model geom poses, then the world's
        self.pose_bodies()
        mujoco.mj_comPos(self.model, self.data)
        mujoco.mj_camlight(self.model, self.data)

    def pose_bodies(self) -> None:
        """Body and geom poses of ``qpos`` now (``mj_kinematics``; see :meth:`pose_for_render`:
        it does not change a rollout), for ray queries from the chassis (the lidar)."""
        mujoco.mj_kinematics(self.model, self.data)

    def update_wheel_visuals(self) -> None:
        """Pose the visual tyres from jounce, steer and spin (call before rendering)."""
        sus, wh = self.params.suspension, self.params.wheels
        out = self.outputs
        centre = sus.ray_start(wh.radius) + sus.travel_direction * (
            sus.max_compression + wh.radius - out.jounce[0])[:, None]
        axle = np.zeros(4)
        mujoco.mju_quatZ2Vec(axle, np.array([0.0, 1.0, 0.0]))
        for i, g in enumerate(self.wheel_geoms):
            steer, spin, q1, q2 = np.zeros(4), np.zeros(4), np.zeros(4), np.zeros(4)
            mujoco.mju_axisAngle2Quat(steer, np.array([0.0, 0.0, 1.0]), out.steer[0, i])
            mujoco.mju_axisAngle2Quat(spin, np.array([0.0, 1.0, 0.0]), self.wheel_angle[0, i])
            mujoco.mju_mulQuat(q1, steer, spin)
            mujoco.mju_mulQuat(q2, q1, axle)
            self.model.geom_pos[g] = centre[i]
            self.model.geom_quat[g] = q2
