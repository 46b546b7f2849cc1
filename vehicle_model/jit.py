"""The compiler settings of the vehicle update: numba ``njit`` with an on-disk cache.

Compiled functions are cached on disk so only the first use after an install, an upgrade or an
edit of the compiled sources compiles (the folder: :mod:`~traction.vehicle_model.kernel_cache`);
``error_model="numpy"`` gives inf/NaN instead of raising on division by zero (the update guards
its denominators); ``fastmath={"contract"}`` fuses multiply-adds (see :data:`jit`).

The parts of the update are pasted into their callers (numba's inlining, ``inline=``), all but
the update itself, which is compiled once and called (:func:`pasted`).

Also here: :func:`borrow` (an array without reference counting, for compiled entry points),
:func:`interp`
(scalar piecewise-linear lookup) and :func:`first_compile` (a first use that compiles says so
instead of a silent wait of a minute or two).
"""

from __future__ import annotations

import contextlib
import logging
import threading

import numba
from numba import types
from numba.extending import intrinsic

from . import kernel_cache

#: This source tree's folder of compiled code (:mod:`~traction.vehicle_model.kernel_cache`).
CACHE_FOLDER = kernel_cache.folder()
kernel_cache.install(CACHE_FOLDER)

logger = logging.getLogger(__name__)

#: Seconds a first call may take before :func:`first_compile` says it is compiling (loading a
#: compiled entry point from the disk cache takes well under a second).
NOTICE_AFTER = 3.0


@contextlib.contextmanager
def first_compile(dispatcher, what: str):
    """Around a call that may compile ``dispatcher`` (a numba function), when it has nothing
    compiled in this process yet: if the call is still running after :data:`NOTICE_AFTER`
    seconds, a warning is logged that ``what`` is being compiled, and where the result is
    cached. A first use after an install compiles the whole update for a minute or two; without
    the notice that looks like a hang."""
    if dispatcher.overloads:
        yield
        return
    timer = threading.Timer(NOTICE_AFTER, logger.warning, (
        "compiling %s: once per version of traction's compiled code and its dependencies (an "
        "install, an upgrade or an edit), a minute or two on 2 cores; later runs load it from "
        "%s", what, CACHE_FOLDER))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


#: The compiled functions that are called rather than pasted into their callers (module and
#: qualified name): the whole vehicle update for a batch. Every compiled caller (the physics
#: loop, the benchmark's update loop, ``update.step`` from Python) then shares its one
#: compilation (compiled once, cached once), and pasting it would copy its intermediate
#: representation, one basic block at a time, into each caller: numba's copy of a function that
#: large takes minutes (it copies the function's whole scope of variables for every block). A
#: call per substep costs little when its arrays are borrowed (:func:`borrow`): the physics loop
#: passes them so.
CALLED = frozenset({"traction.vehicle_model.update.step_batch_with"})


def pasted(call, caller_ir, callee_ir) -> bool:
    """Numba's inlining cost model (the ``inline=`` option of :data:`jit`): paste every part
    into its caller except the functions of :data:`CALLED`."""
    f = callee_ir.func_id
    return f"{f.modname}.{f.func_qualname}" not in CALLED


#: The decorator of the vehicle update's parts. Its inlining (:func:`pasted`) makes numba paste
#: a part into its compiled caller at the IR level, so the whole update compiles into one
#: function: a call between compiled functions passes every array as a struct of seven fields
#: and changes its reference count, which costs as much as the physics of a small part. Called
#: from Python, a part is an ordinary compiled function.
#:
#: ``fastmath={"contract"}`` lets LLVM fuse a multiplication and an addition into one FMA
#: instruction (one rounding instead of two: as accurate or more). No other fast-math licence is
#: taken: NaN and infinity keep their IEEE meaning (the divergence checks rely on it), nothing is
#: reassociated or approximated. The rotations, cross and dot products of the update are chains
#: of such pairs; rollouts differ from uncontracted arithmetic in the last bits, and stay
#: bit-identical from run to run on one machine.
jit = numba.njit(cache=True, error_model="numpy", inline=pasted, fastmath={"contract"})
#: Not inlined: functions with object-mode blocks (which cannot be inlined).
jit_call = numba.njit(cache=True, error_model="numpy", fastmath={"contract"})
#: Entry points called from Python that release the GIL while they run, so that several Python
#: threads can each run one (the simulator loop over a share of a vector env's worlds).
jit_nogil = numba.njit(cache=True, error_model="numpy", fastmath={"contract"}, nogil=True)


@jit
def interp(x: float, points) -> float:
    """Piecewise-linear ``y(x)`` through ``(k, 2)`` points with increasing x, flat beyond the
    ends (``np.interp`` on one scalar, without its array checks)."""
    n = points.shape[0]
    if x <= points[0, 0]:
        return points[0, 1]
    if x >= points[n - 1, 0]:
        return points[n - 1, 1]
    j = 1
    while points[j, 0] < x:
        j += 1
    x0, y0, x1, y1 = points[j - 1, 0], points[j - 1, 1], points[j, 0], points[j, 1]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


@intrinsic
def borrow(typingctx, array):
    """``array`` without its reference count: the same data, shape and strides with a null
    meminfo and no parent object, for use only while the caller holds the array.

    Every view made in compiled code (``wheels[w]``, ``out[:, COL]``, an array bound to an
    inlined part's argument, an array passed to a compiled function) changes the reference
    count of its array's meminfo, and numba does that with an out-of-line call and an atomic
    add, which stalls the pipeline: in the update's per-wheel loops that cost more than the
    arithmetic. Views of a borrowed array carry the null meminfo, for which those calls return
    at once. The update borrows every array it is given
    (:func:`~traction.vehicle_model.update.step_batch_with`), as does the simulator loop that
    calls it (``traction.envs.physics.advance``); nothing they borrow outlives the call.
    """
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        src = context.make_array(signature.args[0])(context, builder, value=args[0])
        dst = context.make_array(signature.return_type)(context, builder)
        context.populate_array(dst, data=src.data, shape=src.shape, strides=src.strides,
                               itemsize=src.itemsize, meminfo=None)
        return dst._getvalue()

    return array(array), codegen
