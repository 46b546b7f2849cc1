"""The compiled physics substep loop: MuJoCo and the vehicle update without Python in between.

One call of :func:`advance` runs ``n_substeps`` physics substeps for a batch of MuJoCo worlds
(one vehicle each; their arrays held in one :class:`LoopData`)::

    actions -> action rows                if the call passes them (float32, flat)
    friction tables -> w.friction         each world's own table, read where it is; checked
    action rows -> commands               if the task has an action map: check, clip, map
    for every substep:
        mj_step1(world)                   for every world: positions, velocities, sensors
        gather                            chassis pose/velocity, wheel rays -> rows, surface map
        update.step_batch_with            one batched vehicle update for all worlds (what only
                                          reports, not the forces, on the last substep only;
                                          steer angles from the commands on the first only)
        xfrc_applied[chassis] = wrench    force + torque about the CoM, world frame
        mj_step2(world)                   for every world: integrate
    then, for every world: the chassis kinematics row after the last substep and a divergence flag

``mj_step1``/``mj_step2`` are called through their C entry points in MuJoCo's shared library
(addresses from ``ctypes``) on the same ``mjModel``/``mjData`` the Python bindings hold
(``MjModel._address``/``MjData._address``), and MjData arrays are read and written through
their buffer addresses, so the loop runs compiled from end to end. Forces are recomputed every
substep; ``mj_step(nstep=k)`` is never used for vehicles.
"""

from __future__ import annotations

import ctypes
import glob
import math
import os

import mujoco
import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.experimental import structref
from numba.extending import intrinsic

from traction.scenes.heightfield import ray_hit
from traction.vehicle_model import footprint
from traction.vehicle_model.jit import borrow, jit, jit_nogil
from traction.vehicle_model.layout import Rows, Scratch
from traction.vehicle_model.update import borrow_packed, step_batch_with
from traction.vehicle_model.vec import to_world

from . import actions

#: columns of the per-world MjData buffer addresses (and of the model's body_ipos)
XPOS, XMAT, XIPOS, QVEL, SENSORDATA, XFRC, QPOS, WARNING, IPOS = range(9)
N_ADDR = 9
#: columns of the per-world indices: chassis body, its first dof, body count, qpos size, the
#: chassis free joint's first qpos
BODY, QVEL_ADR, NBODY, NQ, QPOS_ADR = range(5)
N_INDEX = 5
#: MjData.warning is an array of {int lastinfo; int number} structs; the WARNING address is that
#: of the first ``number`` (``MjData.warning.number``), so counters are every second int from it.
#: BAD*: the counters of the warnings after which MuJoCo resets the world itself (a position or
#: velocity beyond 1e10 or not finite, a bad acceleration).
BADQPOS = 2 * int(mujoco.mjtWarning.mjWARN_BADQPOS)
BADQVEL = 2 * int(mujoco.mjtWarning.mjWARN_BADQVEL)
BADQACC = 2 * int(mujoco.mjtWarning.mjWARN_BADQACC)
N_WARNING_INTS = 2 * int(mujoco.mjtWarning.mjNWARNING) - 1
#: A chassis faster than this (m/s) or spinning faster than this (rad/s) has diverged: no ground
#: vehicle gets there, but a blow-up that stays below MuJoCo's 1e10 does (a chassis inertia far
#: too small for its mass, a body box set into the ground, a damper too stiff for the step).
MAX_CHASSIS_SPEED = 150.0
MAX_CHASSIS_SPIN = 50.0
#: grid_info columns: has a surface grid, x0, y0, cell size (m), and where a footprint contact's
#: rays come from (``RAYS_*``)
HAS_GRID, GRID_X0, GRID_Y0, GRID_CELL, RAY_SOURCE = range(5)
N_GRID_INFO = 5
#: ``RAY_SOURCE``: one rangefinder per wheel (one ray, or a footprint on planes, where one ray
#: is exact); a rangefinder per footprint ray; the footprint's rays cast on the terrain's
#: height grid (``heights``), the centre one a rangefinder (it sees every geom)
RAYS_ONE, RAYS_SENSORS, RAYS_GRID = range(3)
#: patch columns: world AABB low corner, high corner, surface type
PATCH_LO, PATCH_HI, PATCH_TYPE = 0, 3, 6


def _mujoco_library() -> ctypes.CDLL:
    """The MuJoCo shared library the bindings loaded (the same file, so the same globals)."""
    folder = os.path.dirname(mujoco.__file__)
    libs = sorted(glob.glob(os.path.join(folder, "libmujoco.so*")) +
                  glob.glob(os.path.join(folder, "libmujoco*.dylib")) +
                  glob.glob(os.path.join(folder, "mujoco.dll")))
    if not libs:
        raise RuntimeError(f"MuJoCo's shared library was not found in {folder}")
    return ctypes.CDLL(libs[0])


_LIB = _mujoco_library()


def _mujoco_step_functions() -> np.ndarray:
    """Addresses of ``mj_step1`` and ``mj_step2`` in the MuJoCo library the bindings loaded."""
    return np.array([ctypes.cast(_LIB.mj_step1, ctypes.c_void_p).value,
                     ctypes.cast(_LIB.mj_step2, ctypes.c_void_p).value], dtype=np.int64)


_TIMER = ctypes.c_void_p.in_dll(_LIB, "mjcb_time")
_BINDINGS_TIMER = _TIMER.value


def mujoco_timers(enabled: bool) -> None:
    """Switch MuJoCo's stage timers (``MjData.timer``) on or off for the whole process.

    MuJoCo's Python bindings install a clock callback (``mjcb_time``) that times every stage of
    every step; ``mujoco.set_mjcb_time(None)`` does not remove it. The clock reads cost a few
    to over ten per cent of a Traction env step (the lighter the scene, the more). Nothing in
    Traction reads ``MjData.timer``; the training script switches them off. This is a global
    of the MuJoCo library: it affects every MjData in the process (their ``timer`` fields stop
    counting) until switched on again.
    """
    _TIMER.value = _BINDINGS_TIMER if enabled else None


STEP_FUNCTIONS = _mujoco_step_functions()


@intrinsic
def _call_step(typingctx, fn, model, data):
    """Call ``void fn(const mjModel*, mjData*)`` given the three addresses as integers."""
    sig = types.void(types.int64, types.int64, types.int64)

    def codegen(context, builder, signature, args):
        ptr = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [ptr, ptr])
        f = builder.inttoptr(args[0], fnty.as_pointer())
        builder.call(f, [builder.inttoptr(args[1], ptr), builder.inttoptr(args[2], ptr)])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _pointer(typingctx, address):
    """An integer address as a ``void*`` (for ``numba.carray``)."""
    sig = types.voidptr(types.int64)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return sig, codegen


@jit
def _buffer(address, n):
    return numba.carray(_pointer(address), (n,), np.float64)


@jit
def diverged(addr, index, nv, wheel_state) -> bool:
    """MuJoCo met a bad position, velocity or acceleration since the last reset (it then resets
    the world itself), a position, velocity or wheel spin is not finite, or the chassis moves
    or spins faster than :data:`MAX_CHASSIS_SPEED` / :data:`MAX_CHASSIS_SPIN`."""
    warnings = numba.carray(_pointer(addr[WARNING]), (N_WARNING_INTS,), np.int32)
    if warnings[BADQPOS] > 0 or warnings[BADQVEL] > 0 or warnings[BADQACC] > 0:
        return True
    qpos, qvel = _buffer(addr[QPOS], index[NQ]), _buffer(addr[QVEL], nv)
    d = index[QVEL_ADR]
    speed2 = qvel[d] * qvel[d] + qvel[d + 1] * qvel[d + 1] + qvel[d + 2] * qvel[d + 2]
    spin2 = qvel[d + 3] * qvel[d + 3] + qvel[d + 4] * qvel[d + 4] + qvel[d + 5] * qvel[d + 5]
    if speed2 > MAX_CHASSIS_SPEED * MAX_CHASSIS_SPEED or spin2 > MAX_CHASSIS_SPIN * MAX_CHASSIS_SPIN:
        return True
    total = 0.0                  # a sum of finite values is finite (an overflow is flagged too)
    for j in range(qpos.shape[0]):
        total += qpos[j]
    for j in range(nv):
        total += qvel[j]
    for w in range(wheel_state.shape[0]):
        total += wheel_state[w].omega
    return not np.isfinite(total)


@jit
def surface_at(grid, grid_info, ground_type, patches, x, y, z) -> int:
    """Surface type at a world point: the smallest static patch box containing it, else the
    terrain grid's nearest cell (edge cells beyond the grid), else the ground geom's type."""
    for j in range(patches.shape[0]):
        p = patches[j]
        if (p[PATCH_LO] <= x <= p[PATCH_HI] and p[PATCH_LO + 1] <= y <= p[PATCH_HI + 1]
                and p[PATCH_LO + 2] <= z <= p[PATCH_HI + 2]):
            return int(p[PATCH_TYPE])
    if grid_info[HAS_GRID] < 0.5:
        return ground_type
    r = int(np.rint((y - grid_info[GRID_Y0]) / grid_info[GRID_CELL]))
    c = int(np.rint((x - grid_info[GRID_X0]) / grid_info[GRID_CELL]))
    return grid[min(max(r, 0), grid.shape[0] - 1), min(max(c, 0), grid.shape[1] - 1)]


@jit
def chassis(addr, index, nv, k) -> None:
    """Chassis kinematics record ``k`` of one world (addresses ``addr``, indices ``index``) from
    MjData's poses, which are those of ``qpos`` after ``mj_step1`` or ``mj_forward`` (the
    vehicle update's input), and ``qvel``."""
    b, nbody = index[BODY], index[NBODY]
    xpos = _buffer(addr[XPOS], 3 * nbody)
    xmat = _buffer(addr[XMAT], 9 * nbody)
    xipos = _buffer(addr[XIPOS], 3 * nbody)
    for j in range(3):
        k.position[j] = xpos[3 * b + j]
        k.com[j] = xipos[3 * b + j]
    for j in range(9):
        k.rotation[j] = xmat[9 * b + j]
    _velocities(addr, index, nv, k)


@jit
def chassis_now(addr, index, nv, k) -> None:
    """Chassis kinematics record ``k`` of one world at one instant, the current ``qpos`` and
    ``qvel``: after ``mj_step2`` MjData's poses are still those the step started from (one
    substep old), so the pose is computed from the chassis free joint's ``qpos`` as MuJoCo's
    ``mj_kinematics`` does (normalised quaternion, ``mju_quat2Mat``; CoM = origin + R ipos)."""
    q = _buffer(addr[QPOS], index[NQ])
    a = index[QPOS_ADR]
    w, x, y, z = q[a + 3], q[a + 4], q[a + 5], q[a + 6]
    norm = math.sqrt(w * w + x * x + y * y + z * z)
    if norm < 1e-15:
        w, x, y, z = 1.0, 0.0, 0.0, 0.0
    elif abs(norm - 1.0) > 1e-15:
        inv = 1.0 / norm
        w, x, y, z = w * inv, x * inv, y * inv, z * inv
    r = k.rotation
    r[0], r[4], r[8] = w * w + x * x - y * y - z * z, w * w - x * x + y * y - z * z, \
        w * w - x * x - y * y + z * z
    r[1], r[2], r[3] = 2 * (x * y - w * z), 2 * (x * z + w * y), 2 * (x * y + w * z)
    r[5], r[6], r[7] = 2 * (y * z - w * x), 2 * (x * z - w * y), 2 * (y * z + w * x)
    ipos = _buffer(addr[IPOS], 3 * index[NBODY])
    b = index[BODY]
    for j in range(3):
        k.position[j] = q[a + j]
        k.com[j] = (r[3 * j] * ipos[3 * b] + r[3 * j + 1] * ipos[3 * b + 1]
                    + r[3 * j + 2] * ipos[3 * b + 2]) + q[a + j]
    _velocities(addr, index, nv, k)


@jit
def _velocities(addr, index, nv, k) -> None:
    """The velocities of record ``k`` from ``qvel`` and the record's pose."""
    dof = index[QVEL_ADR]
    qvel = _buffer(addr[QVEL], nv)
    r = k.rotation
    for j in range(3):                          # free-joint angular velocity is in the body frame
        k.angular_velocity[j] = (r[3 * j] * qvel[dof + 3] + r[3 * j + 1] * qvel[dof + 4]
                                 + r[3 * j + 2] * qvel[dof + 5])
    a0, a1, a2 = k.angular_velocity[0], k.angular_velocity[1], k.angular_velocity[2]
    r0, r1, r2 = (k.com[0] - k.position[0], k.com[1] - k.position[1],
                  k.com[2] - k.position[2])
    k.velocity[0] = qvel[dof] + a1 * r2 - a2 * r1          # linear part is at the body origin
    k.velocity[1] = qvel[dof + 1] + a2 * r0 - a0 * r2
    k.velocity[2] = qvel[dof + 2] + a0 * r1 - a1 * r0


#: Values per rangefinder in ``sensordata``: distance, hit point (3), normal (3).
RAY_STRIDE = 7


@jit
def gather(addr, index, sensor_adr, grid, grid_info, heights, ground_type, patches, n_sensordata,
           nv, pk, ray_work, kin, hits) -> None:
    """Chassis kinematics and wheel ground hits (records) of every world, from MjData (after
    mj_step1): one ray's hit per wheel, or a footprint's rays combined into the hit one ray
    would report (``vehicle_model.footprint``; ``pk``: the vehicles' packed parameters, one
    set or one per world (``pack.stack``), ``ray_work``: ``footprint.scratch``; the rays from
    rangefinders or cast on the world's height grid, ``grid_info[i, RAY_SOURCE]``)."""
    rays = int(pk.vehicle[0].contact_rays)       # (the contact's layout: every world's)
    n_wheels = pk.wheel.shape[1]
    own_params = pk.wheel.shape[0] > 1
    offsets = n_wheels * (rays + 2)
    xs = ray_work[:offsets].reshape((n_wheels, rays + 2))     # each wheel's ray offsets
    cast = ray_work[offsets:offsets + RAY_STRIDE * rays]      # rays cast on a height grid
    work = ray_work[offsets + RAY_STRIDE * rays:].reshape((rays, 4))
    for i in range(kin.shape[0]):
        k = kin[i]
        chassis(addr[i], index[i], nv, k)
        sensors = _buffer(addr[i, SENSORDATA], n_sensordata)
        source = int(grid_info[i, RAY_SOURCE]) if rays > 1 else RAYS_ONE
        for w in range(sensor_adr.shape[1]):
            s = sensor_adr[i, w]                  # rangefinder data: dist, point (3), normal (3)
            h = hits[i, w]
            data = sensors
            if source != RAYS_ONE:
                p = pk.wheel[i if own_params else 0, w]
                r = p.radius
                t = p.travel_direction
                d0, d1, d2 = to_world(k, t[0], t[1], t[2])
                f0, f1, f2 = 1.0 - t[0] * t[0], -t[0] * t[1], -t[0] * t[2]   # chassis x less its
                # part along the travel
                norm = np.sqrt(f0 * f0 + f1 * f1 + f2 * f2)
                f0, f1, f2 = to_world(k, f0 / norm, f1 / norm, f2 / norm)
                start = p.ray_start
                s0, s1, s2 = to_world(k, start[0], start[1], start[2])
                s0, s1, s2 = s0 + k.position[0], s1 + k.position[1], s2 + k.position[2]
                if source == RAYS_GRID:
                    _cast_on_grid(heights[i], grid_info[i], rays, xs[w], s0, s1, s2, d0, d1, d2,
                                  f0, f1, f2, sensors, s, cast)
                    data, s = cast, 0
                j = footprint.equivalent_hit(rays, xs[w], r, s0, s1, s2, d0, d1, d2, f0, f1, f2,
                                             data, s, RAY_STRIDE, h, work)
                s += RAY_STRIDE * max(j, 0)       # the surface under the bounding ray
            else:
                h.dist = sensors[s]
                for j in range(3):
                    h.normal[j] = sensors[s + 4 + j]
            h.surface = surface_at(grid[i], grid_info[i], ground_type[i], patches[i],
                                   data[s + 1], data[s + 2], data[s + 3])


@jit
def _cast_on_grid(heights, info, rays, xs, s0, s1, s2, d0, d1, d2, f0, f1, f2, sensors, centre,
                  out) -> None:
    """A footprint's rays (``out``, rangefinder layout) cast on the height grid, but the centre
    ray's data copied from its rangefinder at ``sensors[centre:]`` (which sees every geom, the
    terrain's boxes and patches too)."""
    mid = rays // 2
    for c in range(RAY_STRIDE):
        out[RAY_STRIDE * mid + c] = sensors[centre + c]
    for step in range(1, rays):                      # outward from the centre, each ray
        j = mid + (step + 1) // 2 if step % 2 else mid - step // 2    # from its inner
        inner = j - 1 if j > mid else j + 1          # neighbour's distance (nearby ground)
        guess = out[RAY_STRIDE * inner]
        o = RAY_STRIDE * j
        x = xs[j + 1]
        o0, o1, o2 = s0 + x * f0, s1 + x * f1, s2 + x * f2
        t, n0, n1, n2 = ray_hit(heights, info[GRID_X0], info[GRID_Y0], info[GRID_CELL], o0, o1,
                                o2, d0, d1, d2, guess)
        out[o], out[o + 1], out[o + 2], out[o + 3] = t, o0 + t * d0, o1 + t * d1, o2 + t * d2
        out[o + 4], out[o + 5], out[o + 6] = n0, n1, n2


@structref.register
class LoopDataType(types.StructRef):
    """The numba type of :class:`LoopData` (its fields' types fixed by the constructor's
    arguments)."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(t)) for name, t in fields)


class LoopData(structref.StructRefProxy):
    """Every array and constant :func:`advance` reads or writes for a batch of worlds, held in
    one compiled struct (by reference: the arrays are shared, not copied).

    A compiled call unboxes each array argument from Python one by one (39 arrays, the packed
    parameters' 10 included: microseconds per call); it unboxes this struct with one attribute
    read. Build it with :func:`loop_data`; the fields are
    :data:`LOOP_FIELDS` (``s, x, g``: the update's scratch arrays,
    :func:`~traction.vehicle_model.update.scratch`).
    """


LOOP_FIELDS = ("functions", "models", "datas", "addr", "index", "sensor_adr", "grid",
                 "grid_info", "heights", "ground_type", "patches", "n_sensordata", "nv", "packed",
                 "wheel_state", "vehicle_state", "gears", "cmd_v", "cmd_w", "table_addr",
                 "friction", "dt",
                 "gravity", "out_w", "out_v", "kin", "hits", "wheel_angle", "now", "bad", "action",
                 "active", "s", "x", "g", "ray_work")
structref.define_proxy(LoopData, LoopDataType, LOOP_FIELDS)


@jit
def loop_data(functions, models, datas, addr, index, sensor_adr, grid, grid_info, heights,
              ground_type, patches, n_sensordata, nv, packed, wheel_state, vehicle_state, gears,
              cmd_v, cmd_w, table_addr, friction, dt, gravity, out_w, out_v, kin, hits,
              wheel_angle, now, bad, action, active, s, x, g, ray_work):
    """A :class:`LoopData` (compiled and cached on disk, unlike the proxy's own constructor)."""
    return LoopData(functions, models, datas, addr, index, sensor_adr, grid, grid_info, heights,
                  ground_type, patches, n_sensordata, nv, packed, wheel_state, vehicle_state,
                  gears, cmd_v, cmd_w, table_addr, friction, dt, gravity, out_w, out_v, kin, hits,
                  wheel_angle, now, bad, action, active, s, x, g, ray_work)


@intrinsic
def _meminfo_address(typingctx, w):
    """The address of a :class:`LoopData` struct's meminfo (what :func:`_loop_data_at` takes)."""
    if not isinstance(w, LoopDataType):
        return None

    def codegen(context, builder, signature, args):
        st = cgutils.create_struct_proxy(signature.args[0])(context, builder, value=args[0])
        return builder.ptrtoint(st.meminfo, ir.IntType(64))

    return types.int64(w), codegen


@intrinsic
def _loop_data_at(typingctx, address, data_type):
    """The :class:`LoopData` struct whose meminfo is at ``address``, of the type ``data_type``
    names: a new reference (the caller holds the struct while the callee runs)."""
    if not isinstance(data_type, types.TypeRef) or not isinstance(address, types.Integer):
        return None
    typ = data_type.instance_type

    def codegen(context, builder, signature, args):
        st = cgutils.create_struct_proxy(typ)(context, builder)
        st.meminfo = builder.inttoptr(args[0], st.meminfo.type)
        context.nrt.incref(builder, typ, st._getvalue())
        return st._getvalue()

    return typ(address, data_type), codegen


@jit
def loop_data_address(w) -> int:
    """The address :func:`advance_at` takes for the :class:`LoopData` ``w``."""
    return _meminfo_address(w)


#: :func:`advance` returns this when its ``action`` has neither 0 nor one row per world
WRONG_ACTION_SIZE = -2
#: :func:`advance` returns this minus ``i`` when world ``i``'s friction table holds a value that
#: is not finite and >= 0
BAD_FRICTION = -3


@jit
def load_tables(table_addr, friction) -> int:
    """Copy every world's friction table (the float64 values at ``table_addr[i]``, of
    ``friction[i]``'s shape) to ``friction[i]``, also of the worlds not stepped (a reset after
    the step reads it: it is checked before anything changes); the first world whose table
    holds a value not finite and >= 0 (its copy unfinished), else -1."""
    size = friction.shape[1] * friction.shape[2]
    for i in range(friction.shape[0]):
        values, row = _buffer(table_addr[i], size), friction[i].reshape(size)
        for j in range(size):
            if not 0.0 <= values[j] < np.inf:
                return i
            row[j] = values[j]
    return -1


@jit
def advance(n_substeps, w, action_map, action) -> int:
    """Run ``n_substeps`` physics substeps of every world of the :class:`LoopData` ``w`` whose
    ``w.active`` flag is set (see the module docstring); then write each such world's chassis
    row (after the last substep, at that instant: :func:`chassis_now`) to ``w.now`` and its
    :func:`diverged` flag to ``w.bad``. Every array is borrowed
    (:func:`~traction.vehicle_model.jit.borrow`): views cost no reference counting.

    ``action`` (float32, one dimension): empty, or the active worlds' actions, one row per world
    flattened, first copied to their rows of ``w.action`` (one call where a separate copy costs
    a second; :data:`WRONG_ACTION_SIZE` is returned for any other size, before anything
    changes). Each world's friction table is then copied from where its sim keeps it
    (:func:`load_tables`); a value not finite and >= 0 stops the call before any command changes
    (:data:`BAD_FRICTION` minus the world is returned). With an ``action_map`` (``actions.*``,
    not ``actions.NONE``) the active worlds' rows of ``w.action`` are then checked, clipped and
    mapped to their commands; a non-finite channel stops the call before any command changes
    and is returned (``world * n_channels + channel``). Returns -1 otherwise."""
    functions, models, datas = borrow(w.functions), borrow(w.models), borrow(w.datas)
    addr, index, sensor_adr = borrow(w.addr), borrow(w.index), borrow(w.sensor_adr)
    grid, grid_info, patches = borrow(w.grid), borrow(w.grid_info), borrow(w.patches)
    heights, ray_work = borrow(w.heights), borrow(w.ray_work)
    ground_type, kin, hits = borrow(w.ground_type), borrow(w.kin), borrow(w.hits)
    packed, friction = borrow_packed(w.packed), borrow(w.friction)
    wheel_state, vehicle_state, gears = borrow(w.wheel_state), borrow(w.vehicle_state), borrow(w.gears)
    cmd_v, cmd_w, action_rows = borrow(w.cmd_v), borrow(w.cmd_w), borrow(w.action)
    out_w, out_v, wheel_angle = borrow(w.out_w), borrow(w.out_v), borrow(w.wheel_angle)
    s, x, g = borrow(w.s), borrow(w.x), borrow(w.g)
    now, bad, active = borrow(w.now), borrow(w.bad), borrow(w.active)
    n_sensordata, nv, dt, gravity = w.n_sensordata, w.nv, w.dt, w.gravity
    rows = Rows(wheel_state, vehicle_state, gears, cmd_v, cmd_w, kin, hits, out_w, out_v)
    scratch = Scratch(s, x, g)
    n = models.shape[0]
    if action.shape[0] > 0 and not actions.load_rows(borrow(action), action_rows, active):
        return WRONG_ACTION_SIZE
    bad_table = load_tables(borrow(w.table_addr), friction)
    if bad_table >= 0:
        return BAD_FRICTION - bad_table
    if action_map != actions.NONE:
        first_bad = actions.check(action_rows, active)
        if first_bad >= 0:
            return first_bad
        for i in range(n):
            if active[i]:
                actions.apply(action_map, action_rows[i], cmd_v[i], cmd_w[i], gears[i], now[i])
    for sub in range(n_substeps):
        for i in range(n):
            if active[i]:
                _call_step(functions[0], models[i], datas[i])
        gather(addr, index, sensor_adr, grid, grid_info, heights, ground_type, patches,
               n_sensordata, nv, packed, ray_work, kin, hits)
        step_batch_with(packed, rows, friction, dt, gravity, active, scratch,
                        sub == n_substeps - 1,          # outputs that only report: last substep
                        sub == 0)                       # commands (steer angles): first substep
        for i in range(n):
            if not active[i]:
                continue
            xfrc = _buffer(addr[i, XFRC], 6 * index[i, NBODY])
            b = index[i, BODY]
            for j in range(6):
                xfrc[6 * b + j] = out_v[i].wrench[j]
            for k in range(wheel_angle.shape[1]):
                wheel_angle[i, k] += wheel_state[i, k].omega * dt
            _call_step(functions[1], models[i], datas[i])
    for i in range(n):
        if active[i]:
            chassis_now(addr[i], index[i], nv, now[i])
            bad[i] = diverged(addr[i], index[i], nv, wheel_state[i])
    return -1


@jit_nogil
def advance_at(n_substeps, address, data_type, action_map, action) -> int:
    """:func:`advance` of the :class:`LoopData` at ``address`` (:func:`loop_data_address`), whose
    numba type is ``data_type`` (``numba.typeof(w)``). Called from Python, an integer and a
    type unbox faster than the struct's proxy; the caller must hold the struct for the call.
    Releases the GIL while it runs: calls on separate sets of worlds may run in separate threads
    (``traction.envs.world.World``)."""
    return advance(n_substeps, _loop_data_at(address, data_type), action_map, action)
