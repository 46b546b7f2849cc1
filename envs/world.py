"""MuJoCo worlds with one vehicle each, stepped by one compiled call: a single environment's
world is a :class:`World` of one, a native vector environment's worlds are one :class:`World` of
``num_envs``.

A :class:`World` holds every array the compiled physics loop (``physics.advance``) reads or
writes, one row per world (:class:`Arrays`), and that loop bound to them (:class:`Call`), run in
one thread or split over several. Each world's :class:`~traction.envs.vehicle_sim.VehicleSim`
is a view of its row, made when the sim is built and never moved: a sim built inside
:meth:`World.filled` takes the next row of that world, any other sim a world of its own. A sim
steps its own row alone (a reset's settling substep, a sim driven by hand), the world steps all
its rows at once.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import operator
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import numba
import numpy as np

from traction import vehicle_model as vm
from traction.vehicle_model import layout as L
from traction.vehicle_model.jit import first_compile
from traction.vehicle_model.layout import Packed
from traction.vehicle_model.pack import SHARED, stack
from traction.vehicle_model.update import scratch as scratch_arrays

from . import actions, physics
from .snapshot import refuse_copies
from .surfaces import SURFACE_DTYPE

#: the empty action: the action rows are already loaded
NO_ACTION = np.zeros(0, np.float32)
#: the compiled loop's action argument: float32, one dimension, any strides
ACTION_TYPE = numba.types.Array(numba.types.float32, 1, "A")
#: the world that sims built now join (see :meth:`World.filled`)
_FILLING: contextvars.ContextVar[World | None] = contextvars.ContextVar("filling", default=None)


class Arrays:
    """Every array the compiled loop reads or writes, for ``n`` worlds (see ``physics.advance``)."""

    def __init__(self, n: int, n_wheels: int, grid_shape: tuple[int, int], n_patches: int,
                 n_actions: int, table_shape: tuple[int, int], ray_work: np.ndarray,
                 packed: Packed):
        self.models = np.zeros(n, np.int64)
        self.datas = np.zeros(n, np.int64)
        self.addr = np.zeros((n, physics.N_ADDR), np.int64)
        self.index = np.zeros((n, physics.N_INDEX), np.int64)
        self.sensor_adr = np.zeros((n, n_wheels), np.int64)
        self.grid = np.zeros((n, *grid_shape), SURFACE_DTYPE)    # small: read every substep
        self.grid_info = np.zeros((n, physics.N_GRID_INFO))
        self.heights = np.zeros((n, *grid_shape))               # a footprint's rays are cast on
        self.ground_type = np.zeros(n, np.int64)
        self.patches = np.zeros((n, n_patches, 7))
        # each world's vehicle parameter records (pack.stack: they may differ in value, e.g.
        # randomised per episode; the arrays the records index are the world's constants)
        self.params_wheel = np.zeros((n, n_wheels), packed.wheel.dtype)
        self.params_vehicle = np.zeros(n, packed.vehicle.dtype)
        self.state = vm.VehicleState(np.zeros((n, n_wheels), L.WHEEL_STATE),
                                     np.zeros(n, L.VEHICLE_STATE), np.zeros(n, L.GEAR_STATE))
        self.commands = vm.Commands(np.zeros(n, L.VEHICLE_COMMANDS),
                                    np.zeros((n, n_wheels), L.WHEEL_COMMANDS))
        self.outputs = vm.VehicleOutputs(np.zeros((n, n_wheels), L.WHEEL_OUTPUTS),
                                         np.zeros(n, L.VEHICLE_OUTPUTS))
        self.kin = np.zeros(n, L.KINEMATICS)
        self.hits = np.zeros((n, n_wheels), L.HIT)
        self.wheel_angle = np.zeros((n, n_wheels))
        self.now = np.zeros(n, L.KINEMATICS)
        self.bad = np.zeros(n, np.bool_)
        self.action = np.zeros((n, n_actions))    # each world's last action, clipped
        self.active = np.ones(n, np.bool_)        # the worlds the next loop call advances
        self.table_addr = np.zeros(n, np.int64)   # each world's friction table (its values)
        self.tables = np.empty(n, object)         # ... held: the address stays valid (and a
                                                  # values.resize() refused) while it is read
        self.friction = np.zeros((n, *table_shape))  # the tables, copied in at every loop call
        self.scratch = scratch_arrays(n_wheels)   # the update's, shared by the worlds in turn
        self.ray_work = ray_work                  # the footprint's (footprint.scratch), too

    def block(self, start: int, stop: int, own_active: bool) -> Arrays:
        """Rows ``start:stop`` of every array, as views (the same storage for fewer worlds),
        with their own update scratch (a loop over them may run in another thread) and, if
        ``own_active``, their own ``active`` flags, all set (the rows then step whatever the
        flags of the whole)."""
        r = slice(start, stop)
        out = object.__new__(Arrays)
        for k, v in vars(self).items():
            if isinstance(v, np.ndarray):
                setattr(out, k, v[r])
        out.state = vm.VehicleState(self.state.wheel[r], self.state.vehicle[r], self.state.gears[r])
        out.commands = vm.Commands(self.commands.vehicle[r], self.commands.wheel[r])
        out.outputs = vm.VehicleOutputs(self.outputs.wheel[r], self.outputs.vehicle[r])
        if own_active:
            out.active = np.ones(stop - start, np.bool_)
        out.scratch = scratch_arrays(self.state.wheel.shape[1])
        out.ray_work = self.ray_work.copy()
        return out


#: the wheel records' fields the scene's rays and sensors were placed by (``set_params`` keeps)
GEOMETRY = ("radius", "ray_start", "travel_direction")


def packed_rows(a: Arrays, constants: SimpleNamespace) -> Packed:
    """The vehicle parameters of the worlds of ``a``: their record rows and the arrays all
    worlds share (``pack.stack``'s layout)."""
    return Packed(a.params_wheel, a.params_vehicle, *constants.shared)


def bad_friction(world: int | None, doing: str = "stepped") -> vm.VehicleConfigError:
    """The error for a friction table holding a value not finite and >= 0: of world ``world``
    of a vector env (None: a world alone); nothing was ``doing``."""
    where = "friction_table" if world is None else f"friction_table of world {world}"
    return vm.VehicleConfigError(f"{where}: values must be finite and >= 0 (nothing was {doing})")


def substeps(n_substeps) -> int:
    """``n_substeps`` as an int (the compiled entry point does not check types).

    Raises:
        TypeError: not an integer. ValueError: negative.
    """
    n_substeps = operator.index(n_substeps)
    if n_substeps < 0:
        raise ValueError(f"n_substeps = {n_substeps}; allowed: an integer >= 0")
    return n_substeps


class Call:
    """``physics.advance`` bound to a set of arrays (a world's, or a block of its rows).

    The arrays and the vehicle's constants are held in one compiled struct
    (:class:`~traction.envs.physics.LoopData`), passed by its address (``physics.advance_at``),
    and the compiled overload is looked up once, so a call unboxes three integers, a type and
    the action instead of 39 arrays and skips numba's per-call type dispatch; the checks of a
    call whose arguments are as last time are a few comparisons (:meth:`run` is a method, not
    ``__call__``: an instance call costs twice a method call in CPython). Each world's friction
    table is read where it is (``a.table_addr``, which its sim keeps current), so an edit in
    place or a new table applies at the next call.

    ``first``: the index of ``a``'s first row in its world, and ``named``: whether errors name
    the world (a vector env's) or not (a world alone).
    """

    def __init__(self, a: Arrays, constants: SimpleNamespace, first: int, named: bool):
        self.a, self.constants, self.first, self.named = a, constants, first, named
        self.entry = None
        self.data_type = None                     # the numba type the entry point takes
        self.valid_map = None                       # the last action map validated

    def bind(self) -> None:
        """(Re)build the compiled struct of the arrays (after one was replaced)."""
        a, c = self.a, self.constants
        self.data = physics.loop_data(
            physics.STEP_FUNCTIONS, a.models, a.datas, a.addr, a.index, a.sensor_adr, a.grid,
            a.grid_info, a.heights, a.ground_type, a.patches, c.n_sensordata, c.nv,
            packed_rows(a, c), a.state.wheel,
            a.state.vehicle, a.state.gears, a.commands.vehicle, a.commands.wheel, a.table_addr,
            a.friction, c.dt, c.gravity, a.outputs.wheel, a.outputs.vehicle, a.kin, a.hits,
            a.wheel_angle, a.now, a.bad, a.action, a.active, *a.scratch, a.ray_work)
        self.address = physics.loop_data_address(self.data)     # held by self.data
        self.data_type = numba.typeof(self.data)

    def run(self, n_substeps: int, action_map: int = actions.NONE,
            action: np.ndarray = NO_ACTION) -> int:
        """``physics.advance`` of the rows flagged in the arrays' ``active``: the first
        non-finite action channel (flat index) or -1.

        ``action``: empty, or a float32 array of one dimension holding every row's action
        (the caller checks its type: the entry point does not).

        Raises:
            TypeError: ``n_substeps`` is not an integer. ValueError: it is negative,
            ``action_map`` is unknown or does not fit the action rows' width, or ``action``
            does not hold one row per world. VehicleConfigError: a world's friction table
            holds a value that is not finite and >= 0 (nothing is stepped).
        """
        if (n_substeps.__class__ is not int or n_substeps < 0 or action_map != self.valid_map
                or self.entry is None):
            n_substeps = self._prepare(n_substeps, action_map)
        bad = self.entry(n_substeps, self.address, self.data_type, action_map, action)
        if bad < -1:                                    # (one comparison when it is not)
            self._refuse(bad, action)
        return bad

    def _refuse(self, code: int, action: np.ndarray) -> None:
        """Raise the error ``physics.advance``'s ``code`` stands for."""
        if code == physics.WRONG_ACTION_SIZE:
            raise ValueError(f"action: {action.shape[0]} values; expected "
                             f"{self.a.action.size} (one row of {self.a.action.shape[1]} per world)")
        world = physics.BAD_FRICTION - code
        raise bad_friction(self.first + world if self.named else None)

    def _prepare(self, n_substeps, action_map) -> int:
        """Check the arguments of a call unlike the last; bind and look up the entry point."""
        n_substeps = substeps(n_substeps)
        if action_map != self.valid_map:            # the compiled maps do not check bounds
            actions.validate(action_map, self.a.action.shape[1], self.a.state.wheel.shape[1])
            self.valid_map = action_map
        if self.entry is None:                     # binds, and compiles or loads, on first use
            self.bind()
            sig = (numba.types.int64, numba.types.int64, numba.typeof(self.data_type),
                   numba.types.int64, ACTION_TYPE)
            with first_compile(physics.advance_at, "the physics loop and vehicle update"):
                physics.advance_at.compile(sig)
            self.entry = physics.advance_at.overloads[sig].entry_point
        return n_substeps


class World:
    """``size`` MuJoCo worlds with one vehicle each (of the same parameters, on terrains of the
    same kind), stepped together: one compiled call per control step, one batched vehicle update
    per substep (see the module docstring).

    Attributes:
        size: the number of worlds. sims: each row's :class:`VehicleSim`, in row order.
        arrays: the :class:`Arrays` of every row.
        threads: the threads :meth:`step` splits the worlds over (at most one per world).

    Each world reads its own sim's friction table at every step (tables of one shape: the same
    surfaces and tyre type count), as separate environments do: an edit through
    ``sims[i].friction_table`` applies to world ``i``. With ``threads`` > 1, :meth:`step` first
    loads and checks every world's friction table and action and maps the actions in one call
    with no substeps (a bad value stops it before any world changes), then runs ``threads``
    calls, each over a contiguous share of the rows with its own update scratch, in that many
    threads (the compiled loop releases the GIL); the worlds are independent, so the results are
    bit for bit those of one thread.
    """

    __copy__ = __deepcopy__ = __reduce_ex__ = refuse_copies(
        "copy the environments instead (copy.deepcopy(env) and pickle rebuild one)")

    def __init__(self, size: int = 1, threads: int = 1):
        if not isinstance(size, int) or size < 1:
            raise ValueError(f"size = {size!r}; allowed: an integer >= 1")
        if not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads = {threads!r}; allowed: an integer >= 1")
        self.size, self.threads = size, min(threads, size)
        self.sims: list = []
        self.arrays: Arrays | None = None
        self.closed = False
        self._row_calls: dict[int, Call] = {}     # each row's own, stepping it alone
        self._pool = None

    @contextlib.contextmanager
    def filled(self):
        """While held, every :class:`VehicleSim` built (by an environment's constructor, say)
        takes the next row of this world; on exit every row must have its sim.

        Raises:
            ValueError: a sim that does not fit the world (another vehicle, terrain kind,
                friction table shape or action width, or one recording telemetry in a world of
                more than one), more sims than rows, or fewer on exit.
        """
        token = _FILLING.set(self)
        try:
            yield self
        finally:
            _FILLING.reset(token)
        if len(self.sims) != self.size:
            raise ValueError(f"World: {len(self.sims)} sims built for its {self.size} worlds")

    @staticmethod
    def of_new_sim() -> World:
        """The world a sim built now joins: the one being filled, else a new world of one."""
        return _FILLING.get() or World(1)

    def add(self, sim) -> int:
        """Give ``sim`` (a :class:`VehicleSim` being built) the next row: its MuJoCo data's
        addresses, its sensors and its terrain's surfaces are written there. Returns the row."""
        if len(self.sims) == self.size:
            raise ValueError(f"World: all its {self.size} worlds have their sim")
        i = len(self.sims)
        if sim.telemetry is not None and self.size > 1:
            raise ValueError(f"World: sim {i} records telemetry, which a world of {self.size} "
                             "does not (it steps all worlds in one call); step it on its own, or "
                             "build it with telemetry=0")
        if self.arrays is None:
            self._allocate(sim)
        else:
            self._check_fits(sim, i)
        self.sims.append(sim)
        a = self.arrays
        a.models[i], a.datas[i] = sim.model._address, sim.data._address
        d = sim.data
        a.addr[i] = [d.xpos.ctypes.data, d.xmat.ctypes.data, d.xipos.ctypes.data,
                     d.qvel.ctypes.data, d.sensordata.ctypes.data, d.xfrc_applied.ctypes.data,
                     d.qpos.ctypes.data, d.warning.number.ctypes.data,
                     sim.model.body_ipos.ctypes.data]
        a.index[i] = [sim.body, sim.qvel_adr, sim.model.nbody, sim.model.nq, sim.qpos_adr]
        a.sensor_adr[i] = sim.sensor_adr
        a.params_wheel[i], a.params_vehicle[i] = sim.params.packed.wheel, sim.params.packed.vehicle[0]
        self.write_surfaces(i)
        return i

    def _allocate(self, sim) -> None:
        """The arrays, shaped by the first sim, and the calls over them."""
        self.arrays = Arrays(self.size, sim.params.n_wheels, sim.surfaces.grid_shape(),
                             sim.surfaces.n_patches, sim.n_actions,
                             sim.friction_table.values.shape,
                             vm.footprint.scratch(sim.params.contact, sim.params.wheels.radius),
                             sim.params.packed)
        shared = tuple(getattr(sim.params.packed, name) for name in SHARED)
        self.constants = SimpleNamespace(n_sensordata=int(sim.model.nsensordata),
                                         nv=int(sim.model.nv), shared=shared,
                                         dt=sim.dt, gravity=sim.gravity)
        named = self.size > 1
        self.whole = Call(self.arrays, self.constants, 0, named)
        self.shares = []
        if self.threads > 1:
            edges = [round(i * self.size / self.threads) for i in range(self.threads + 1)]
            self.shares = [Call(self.arrays.block(lo, hi, False), self.constants, lo, named)
                           for lo, hi in itertools.pairwise(edges)]
            self._pool = ThreadPoolExecutor(self.threads - 1, thread_name_prefix="traction-physics")

    def _check_fits(self, sim, i: int) -> None:
        first = self.sims[0]
        shape = self.arrays.friction.shape[1:]
        if sim.friction_table.values.shape != shape:
            raise ValueError(f"World: sim {i}'s friction table has shape "
                             f"{sim.friction_table.values.shape}, sim 0's {shape}; a world reads "
                             "tables of one shape (surfaces x tyre types)")
        same = all(np.array_equal(a, b) for a, b in zip(sim.params.packed, first.params.packed,
                                                        strict=True))
        if not same:
            raise ValueError("World: every sim must use the same vehicle parameters")
        if (sim.dt, sim.gravity) != (first.dt, first.gravity):
            raise ValueError(f"World: sim {i} steps {sim.dt} s at g = {sim.gravity}, sim 0 "
                             f"{first.dt} s at g = {first.gravity}; a world steps its rows alike")
        if (sim.surfaces.grid_shape() != first.surfaces.grid_shape()
                or sim.surfaces.n_patches != first.surfaces.n_patches):
            raise ValueError("World: every sim must use the same kind of terrain")
        if sim.n_actions != first.n_actions:
            raise ValueError(f"World: sim {i} reads {sim.n_actions} action channels, sim 0 "
                             f"{first.n_actions}")

    def row_call(self, i: int) -> Call:
        """The call stepping row ``i`` alone (the whole world's, for a world of one)."""
        if self.size == 1:
            return self.whole
        if i not in self._row_calls:
            self._row_calls[i] = Call(self.arrays.block(i, i + 1, True), self.constants, i, True)
        return self._row_calls[i]

    #: the arrays of :meth:`rows` besides state, commands and outputs
    ROW_ARRAYS = ("addr", "index", "sensor_adr", "grid", "grid_info", "heights", "ground_type",
                  "patches", "kin", "hits", "wheel_angle", "now", "bad", "action",
                  "params_wheel", "params_vehicle")

    def rows(self, i: int) -> SimpleNamespace:
        """Row ``i`` of what a sim reads and writes, as ``(1, ...)`` views: its MjData
        addresses, surface maps, vehicle state, commands, outputs, the update's inputs, the
        wheel angles, chassis row, divergence flag and action."""
        a, r = self.arrays, slice(i, i + 1)
        out = SimpleNamespace(**{k: getattr(a, k)[r] for k in self.ROW_ARRAYS})
        out.state = vm.VehicleState(a.state.wheel[r], a.state.vehicle[r], a.state.gears[r])
        out.commands = vm.Commands(a.commands.vehicle[r], a.commands.wheel[r])
        out.outputs = vm.VehicleOutputs(a.outputs.wheel[r], a.outputs.vehicle[r])
        return out

    def set_params(self, i: int, packed: Packed) -> None:
        """Row ``i`` steps the vehicle parameters ``packed`` from now on: their records are
        copied to its rows.

        Raises:
            ValueError: parameters that differ from the world's in more than their records'
                values (``pack.stack``), or in the wheels' geometry the rays were laid out for
                (:data:`GEOMETRY`, the contact's ray count).
        """
        a = self.arrays
        mine = Packed(a.params_wheel[i], a.params_vehicle[i:i + 1], *self.constants.shared)
        same = (packed.wheel.dtype == mine.wheel.dtype and packed.wheel.shape == mine.wheel.shape
                and packed.vehicle.dtype == mine.vehicle.dtype
                and all(getattr(packed, n) is s for n, s in zip(SHARED, self.constants.shared,
                                                                strict=True)))
        if not same:                               # (a draw shares the very arrays: no check)
            stack([mine, packed])                  # (raises for more than other values)
        # what the rays were laid out for (the world's ray work, the sensors) must stay
        moved = [f for f in GEOMETRY if not np.array_equal(mine.wheel[f], packed.wheel[f])]
        if packed.vehicle[0]["contact_rays"] != mine.vehicle[0]["contact_rays"]:
            moved.append("contact_rays")
        if moved:
            raise ValueError(f"set_params: the vehicle's {', '.join(moved)} differ from world "
                             f"{i}'s; its rays and sensors were built for those")
        a.params_wheel[i], a.params_vehicle[i] = packed.wheel, packed.vehicle[0]

    def write_surfaces(self, i: int) -> None:
        """Row ``i``'s surface maps from its sim's terrain (after a new terrain)."""
        a, surfaces = self.arrays, self.sims[i].surfaces
        surfaces.write(a.grid[i], a.grid_info[i], a.patches[i], a.heights[i])
        a.ground_type[i] = surfaces.ground_type

    def point_at_table(self, i: int, values: np.ndarray) -> None:
        """Row ``i`` reads its friction table from ``values`` (held, so the address stays valid).
        A table of another shape is taken by a world of one, and by a row of a closed world
        (stepped alone): its call gets friction rows of that shape."""
        a = self.arrays
        call = self.row_call(i)
        if values.shape != call.a.friction.shape[1:]:
            if self.size > 1 and not self.closed:
                raise ValueError(f"friction_table: {values.shape[1]} tyre types; this world's "
                                 f"vector env reads tables of {a.friction.shape[2]} (give it a "
                                 "table with those tyre types)")
            call.a.friction = np.zeros((1, *values.shape))
            if call.entry is not None:
                call.bind()
        a.tables[i], a.table_addr[i] = values, values.ctypes.data

    def world_name(self, i: int) -> int | None:
        """How errors name row ``i``: its index in a world of several, None in a world of one."""
        return i if self.size > 1 else None

    def step(self, n_substeps: int, active: np.ndarray | None = None,
             action_map: int = actions.NONE, action: np.ndarray | None = None) -> int:
        """Advance every world (or those flagged in ``active``) by ``n_substeps`` substeps; with
        an ``action_map``, map the active worlds' rows of ``arrays.action`` first (as
        :meth:`VehicleSim.step_mapped` does). ``action`` (float32, the shape of
        ``arrays.action``), if given, is first copied to the active worlds' rows, in the same
        compiled call.

        Returns:
            The first non-finite action channel as ``world * n_channels + channel`` (nothing
            was changed), or -1.

        Raises:
            TypeError: ``n_substeps`` is not an integer. ValueError: it is negative,
            ``active`` does not have one flag per world, ``action_map`` is unknown or does
            not fit the action width, or ``action`` is not float32 of that shape.
            VehicleConfigError: a world's friction table holds a bad value (nothing changed).
            RuntimeError: the world is closed.
        """
        if self.closed:
            raise RuntimeError("World is closed: its sims step on their own")
        a = self.arrays
        if action is not None:
            if action.dtype != np.float32 or action.shape != a.action.shape:
                raise ValueError(f"action: {action.dtype} {action.shape}; expected float32 "
                                 f"{a.action.shape}")
            action = action.reshape(-1)
        if active is None:
            a.active[...] = True
        else:
            active = np.asarray(active)
            if active.shape != a.active.shape:
                raise ValueError(f"active: shape {active.shape}; expected {a.active.shape}")
            a.active[...] = active
        action = NO_ACTION if action is None else action
        if not self.shares:
            return self.whole.run(n_substeps, action_map, action)
        n_substeps = substeps(n_substeps)              # raises before any world changes
        bad = self.whole.run(0, action_map, action)    # and this (actions, friction tables)
        if bad != -1:
            return bad
        pending = [self._pool.submit(share.run, n_substeps) for share in self.shares[1:]]
        try:
            self.shares[0].run(n_substeps)
        finally:
            for p in pending:           # every share ends before the world is read (or raised)
                p.result()
        return -1

    def close(self) -> None:
        """Stop the worker threads; stepping the whole world afterwards raises RuntimeError,
        each sim still steps its own row (and may take a friction table of another shape).
        Closing twice does nothing."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        self.closed = True
