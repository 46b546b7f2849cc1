"""Several :class:`~traction.envs.vehicle_sim.VehicleSim` stepped together (the native vector
environment's physics): one compiled loop call per control step, one batched vehicle update per
substep; each sim's state, commands and outputs are row views of the batch's arrays."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import actions
from .loop import NO_ACTION, Arrays, Loop, ThreadedLoop
from .snapshot import refuse_copies

if TYPE_CHECKING:
    from .vehicle_sim import VehicleSim


class SimBatch:
    """Several :class:`VehicleSim` of the same vehicle and scene kind, stepped together: one
    compiled loop call per control step, one batched vehicle update per substep.

    Each world reads its own sim's friction table at every step (tables of one shape: the same
    surfaces and tyre type count), as separate environments do: an edit through
    ``sims[i].friction_table`` applies to world ``i`` (to every world whose sim holds that same
    table object).

    ``threads`` > 1 splits the worlds into that many contiguous shares (at most one per world),
    each stepped by its own compiled loop call in its own thread (:class:`ThreadedLoop`), with
    results bit for bit those of one thread; :meth:`close` stops the threads.
    """

    __copy__ = __deepcopy__ = __reduce_ex__ = refuse_copies(
        "copy the environments instead (copy.deepcopy(env) and pickle rebuild one)")

    def __init__(self, sims: list[VehicleSim], threads: int = 1):
        if not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads = {threads!r}; allowed: an integer >= 1")
        first = sims[0]
        shape = first.friction_table.values.shape
        for i, s in enumerate(sims):
            if s.telemetry is not None:
                raise ValueError(f"SimBatch: sims[{i}] records telemetry, which a batch does not "
                                 "(it steps all worlds in one call); step it on its own, or "
                                 "create it with telemetry=0")
            if s.friction_table.values.shape != shape:
                raise ValueError(f"SimBatch: sims[{i}]'s friction table has shape "
                                 f"{s.friction_table.values.shape}, sims[0]'s {shape}; a batch "
                                 "reads tables of one shape (surfaces x tyre types)")
            same = all(np.array_equal(a, b) for a, b in zip(s.params.packed, first.params.packed,
                                                            strict=True))
            if not same:
                raise ValueError("SimBatch: every sim must use the same vehicle parameters")
            if s.surfaces.grid_shape() != first.surfaces.grid_shape() or \
                    s.surfaces.n_patches != first.surfaces.n_patches:
                raise ValueError("SimBatch: every sim must use the same kind of terrain")
        self.sims = sims
        self.arrays = Arrays(len(sims), first.params.n_wheels, first.surfaces.grid_shape(),
                              first.surfaces.n_patches, first.action.shape[1], shape)
        for i, s in enumerate(sims):
            s._batch_row = i
            s._bind(self.arrays, i)                    # (writes its table's address too)
        self.threads = min(threads, len(sims))
        if self.threads > 1:
            self._loop = ThreadedLoop(self.arrays, first, self.threads)
        else:
            self._loop = Loop(self.arrays, first, 0)
        self.action = self.arrays.action

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run."""
        return self._loop is None

    def close(self) -> None:
        """Stop the worker threads (if any) and give each sim its own arrays again, with its
        state, commands and outputs, so it steps alone and takes a table of any shape; stepping
        the batch afterwards raises RuntimeError. Closing twice does nothing."""
        if self.closed:
            return
        if self.threads > 1:
            self._loop.close()
        self._loop = None
        for s in self.sims:
            if np.shares_memory(s.now, self.arrays.now):    # (not since bound by another batch)
                s._batch_row = None
                s._bind(s._own_arrays(self.action.shape[1]), 0)

    def step(self, n_substeps: int, active: np.ndarray | None = None,
             action_map: int = actions.NONE, action: np.ndarray | None = None) -> int:
        """Advance every world (or those flagged in ``active``) by ``n_substeps`` substeps; with
        an ``action_map``, map the active worlds' rows of :attr:`action` first (as
        :meth:`VehicleSim.step_mapped` does). ``action`` (float32, the shape of :attr:`action`),
        if given, is first copied to the active worlds' rows of :attr:`action`, in the same
        compiled call.

        Returns:
            The first non-finite action channel as ``world * n_channels + channel`` (nothing
            was changed), or -1.

        Raises:
            TypeError: ``n_substeps`` is not an integer. ValueError: it is negative,
            ``active`` does not have one flag per world, ``action_map`` is unknown or does
            not fit :attr:`action`'s width, or ``action`` is not float32 of that shape.
            RuntimeError: the batch is closed.
        """
        if self.closed:
            raise RuntimeError("SimBatch is closed: its sims step on their own")
        if action is not None:
            if action.dtype != np.float32 or action.shape != self.action.shape:
                raise ValueError(f"action: {action.dtype} {action.shape}; expected float32 "
                                 f"{self.action.shape}")
            action = action.reshape(-1)
        flags = self.arrays.active
        if active is None:
            flags[...] = True
        else:
            active = np.asarray(active)
            if active.shape != flags.shape:
                raise ValueError(f"active: shape {active.shape}; expected {flags.shape}")
            flags[...] = active
        return self._loop.run(n_substeps, action_map, NO_ACTION if action is None else action)
