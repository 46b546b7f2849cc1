"""The compiled physics loop bound to a set of worlds: the arrays it reads and writes
(:class:`Arrays`, a sim's own or a batch's) and the bound call (:class:`Loop`, used by
:class:`~traction.envs.vehicle_sim.VehicleSim` and :class:`~traction.envs.sim_batch.SimBatch`;
:class:`ThreadedLoop`, a batch's worlds in shares run by several threads).
"""

from __future__ import annotations

import itertools
import operator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numba
import numpy as np

from traction import vehicle_model as vm
from traction.vehicle_model import layout as L
from traction.vehicle_model.jit import first_compile
from traction.vehicle_model.update import scratch as scratch_arrays

from . import actions, physics
from .surfaces import SURFACE_DTYPE

if TYPE_CHECKING:
    from .vehicle_sim import VehicleSim

#: the empty action: the action rows are already loaded
NO_ACTION = np.zeros(0, np.float32)
#: the compiled loop's action argument: float32, one dimension, any strides
ACTION_TYPE = numba.types.Array(numba.types.float32, 1, "A")


class Arrays:
    """Every array the compiled loop reads or writes, for ``n`` worlds (see ``physics.advance``)."""

    def __init__(self, n: int, n_wheels: int, grid_shape: tuple[int, int], n_patches: int,
                 n_actions: int, table_shape: tuple[int, int]):
        self.models = np.zeros(n, np.int64)
        self.datas = np.zeros(n, np.int64)
        self.addr = np.zeros((n, physics.N_ADDR), np.int64)
        self.index = np.zeros((n, physics.N_INDEX), np.int64)
        self.sensor_adr = np.zeros((n, n_wheels), np.int64)
        self.grid = np.zeros((n, *grid_shape), SURFACE_DTYPE)    # small: read every substep
        self.grid_info = np.zeros((n, 4))
        self.ground_type = np.zeros(n, np.int64)
        self.patches = np.zeros((n, n_patches, 7))
        self.state = vm.VehicleState(np.zeros((n, n_wheels, L.N_WHEEL_STATE)),
                                     np.zeros((n, L.N_VEHICLE_STATE)),
                                     np.zeros((n, L.N_GEAR_STATE), np.int64))
        self.commands = vm.Commands(np.zeros((n, L.N_VEHICLE_COMMANDS)),
                                    np.zeros((n, n_wheels, L.N_WHEEL_COMMANDS)))
        self.outputs = vm.VehicleOutputs(np.zeros((n, n_wheels, L.N_WHEEL_OUTPUTS)),
                                         np.zeros((n, L.N_VEHICLE_OUTPUTS)))
        self.kin = np.zeros((n, L.N_KINEMATICS))
        self.hits = np.zeros((n, n_wheels, L.N_HIT))
        self.wheel_angle = np.zeros((n, n_wheels))
        self.now = np.zeros((n, L.N_KINEMATICS))
        self.bad = np.zeros(n, np.bool_)
        self.action = np.zeros((n, n_actions))    # each world's last action, clipped
        self.active = np.ones(n, np.bool_)        # the worlds the next loop call advances
        self.table_addr = np.zeros(n, np.int64)   # each world's friction table (its values)
        self.tables = np.empty(n, object)         # ... held: the address stays valid (and a
                                                  # values.resize() refused) while it is read
        self.friction = np.zeros((n, *table_shape))  # the tables, copied in at every loop call
        self.scratch = scratch_arrays(n_wheels)   # the update's, shared by the worlds in turn

    def rows(self, i: int) -> dict:
        """Row ``i`` of every array as a ``(1, ...)`` view (the scratch shared)."""
        return vars(self.block(i, i + 1, self.scratch))

    def block(self, start: int, stop: int, scratch: tuple | None = None) -> Arrays:
        """Rows ``start:stop`` of every array, as views: the same storage for fewer worlds,
        with the given scratch (None: its own, for a loop run in another thread)."""
        r = slice(start, stop)
        out = object.__new__(Arrays)
        for k, v in vars(self).items():
            if isinstance(v, np.ndarray):
                setattr(out, k, v[r])
        out.state = vm.VehicleState(self.state.wheel[r], self.state.vehicle[r], self.state.gears[r])
        out.commands = vm.Commands(self.commands.vehicle[r], self.commands.wheel[r])
        out.outputs = vm.VehicleOutputs(self.outputs.wheel[r], self.outputs.vehicle[r])
        out.scratch = scratch if scratch is not None else scratch_arrays(self.state.wheel.shape[1])
        return out


def bad_friction(world: int | None, doing: str = "stepped") -> vm.VehicleConfigError:
    """The error for a friction table holding a value not finite and >= 0: of world ``world``
    of a batch (None: a sim alone); nothing was ``doing``."""
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


class Loop:
    """``physics.advance`` bound to one set of arrays (a sim's own, or a batch's).

    The arrays are held in one :class:`~traction.envs.physics.Worlds` struct, passed by its
    address (``physics.advance_at``), and the compiled overload is looked up once, so a call
    unboxes three integers, a type and the action (~0.1 us) instead of 39 arrays (~2 us) plus
    numba's per-call type dispatch (~2.5 us); the checks of a call whose arguments are as last
    time are a few comparisons (:meth:`run` is a method, not ``__call__``: an instance call
    costs twice a method call in CPython). The arrays are owned by the sim or batch and never
    replaced; each world's friction table is read where it is (``a.table_addr``, which its sim
    keeps current), so an edit in place or a new table applies at the next call.

    ``first_world``: the index of ``a``'s first world in its batch (None: a sim's own arrays),
    for the error naming a world whose friction table holds a bad value.
    """

    def __init__(self, a: Arrays, sim: VehicleSim, first_world: int | None = None):
        self.a, self.sim, self.first_world, self.entry = a, sim, first_world, None
        self.worlds_type = None                     # the numba type the entry point takes
        self.valid_map = None                       # the last action map validated

    def _bind(self) -> None:
        a, sim = self.a, self.sim
        self.worlds = physics.worlds(
            physics.STEP_FUNCTIONS, a.models, a.datas, a.addr, a.index, a.sensor_adr, a.grid,
            a.grid_info, a.ground_type, a.patches, int(sim.model.nsensordata), int(sim.model.nv),
            sim.params.packed, a.state.wheel, a.state.vehicle, a.state.gears, a.commands.vehicle,
            a.commands.wheel, a.table_addr, a.friction, sim.dt, sim.gravity, a.outputs.wheel,
            a.outputs.vehicle, a.kin, a.hits, a.wheel_angle, a.now, a.bad, a.action, a.active, *a.scratch)
        self.address = physics.worlds_address(self.worlds)     # held by self.worlds
        self.worlds_type = numba.typeof(self.worlds)

    def run(self, n_substeps: int, action_map: int = actions.NONE,
            action: np.ndarray = NO_ACTION) -> int:
        """``physics.advance`` of the worlds flagged in the arrays' ``active``: the first
        non-finite action channel (flat index) or -1.

        ``action``: empty, or a float32 array of one dimension holding every world's action row
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
        bad = self.entry(n_substeps, self.address, self.worlds_type, action_map, action)
        if bad < -1:                                    # (one comparison when it is not)
            self._refuse(bad, action)
        return bad

    def _refuse(self, code: int, action: np.ndarray) -> None:
        """Raise the error ``physics.advance``'s ``code`` stands for."""
        if code == physics.WRONG_ACTION_SIZE:
            raise ValueError(f"action: {action.shape[0]} values; expected "
                             f"{self.a.action.size} (one row of {self.a.action.shape[1]} per world)")
        world = physics.BAD_FRICTION - code
        raise bad_friction(None if self.first_world is None else self.first_world + world)

    def _prepare(self, n_substeps, action_map) -> int:
        """Check the arguments of a call unlike the last; (re)bind and look up the entry point."""
        n_substeps = substeps(n_substeps)
        if action_map != self.valid_map:            # the compiled maps do not check bounds
            actions.validate(action_map, self.a.action.shape[1], self.a.state.wheel.shape[1])
            self.valid_map = action_map
        if self.entry is None:                     # binds, and compiles or loads, on first use
            self._bind()
            sig = (numba.types.int64, numba.types.int64, numba.typeof(self.worlds_type),
                   numba.types.int64, ACTION_TYPE)
            with first_compile(physics.advance_at, "the physics loop and vehicle update"):
                physics.advance_at.compile(sig)
            self.entry = physics.advance_at.overloads[sig].entry_point
        return n_substeps


class ThreadedLoop:
    """:class:`Loop`'s call for a batch of worlds split into ``threads`` contiguous shares, each
    advanced by its own :class:`Loop` in its own thread (the compiled loop releases the GIL).

    The worlds are independent, so the results are bit for bit those of one :class:`Loop` over
    all of them. The friction tables and actions are first loaded and checked, and the actions
    mapped, for the whole batch in one call with no substeps, so a bad friction value or a
    non-finite action still stops the call before any world changes; then every share runs its
    substeps, the first in the calling thread.
    """

    def __init__(self, a: Arrays, sim: VehicleSim, threads: int):
        n = a.models.shape[0]
        edges = [round(i * n / threads) for i in range(threads + 1)]
        self.whole = Loop(a, sim, 0)
        self.shares = [Loop(a.block(lo, hi), sim, lo) for lo, hi in itertools.pairwise(edges)]
        self.pool = ThreadPoolExecutor(threads - 1, thread_name_prefix="traction-physics")

    def run(self, n_substeps: int, action_map: int = actions.NONE,
            action: np.ndarray = NO_ACTION) -> int:
        """As :meth:`Loop.run`."""
        n_substeps = substeps(n_substeps)              # raises before any world changes
        bad = self.whole.run(0, action_map, action)    # and this (actions, friction tables)
        if bad != -1:
            return bad
        pending = [self.pool.submit(share.run, n_substeps) for share in self.shares[1:]]
        try:
            self.shares[0].run(n_substeps)
        finally:
            for p in pending:           # every share ends before the batch is read (or raised)
                p.result()
        return -1

    def close(self) -> None:
        """Stop the worker threads."""
        self.pool.shutdown()
