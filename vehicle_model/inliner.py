"""Numba's inliner with one copy per inlined function instead of one per basic block.

Every part of the vehicle update is inlined into its caller (``inline="always"``, see
:data:`~traction.vehicle_model.jit.jit`), so compiling an entry point copies each part's
intermediate representation (IR) at each of its call sites. Numba's inliner
(``InlineWorker.inline_ir``, numba 0.68) deep-copies that IR one basic block at a time, each
with its own memo. Every variable of a block refers to the function's scope, and the scope lists
every variable of the function, so each block's copy copies the whole scope again: a copy costs
blocks x variables (numba issues #8989 and #9204 found the same). For the vehicle update that
was 70 % of the ~1 min one entry point took to compile (cProfile: 130 of 181 s in ``deepcopy``).

:func:`one_copy_per_function` swaps in the same method with one deep copy of all the blocks
together (one memo: the copied blocks share one copied scope, as the original blocks share
theirs) while it is held. It holds numba's compiler lock meanwhile, so no other compilation in
the process sees the swap. The machine code is the same: the update's assembly compiled both
ways is identical but for the pickled IR of its object-mode block, which carries a random id at
every compilation. If this numba's inliner does not read as expected, nothing is swapped.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import textwrap

from numba.core import inline_closurecall
from numba.core.compiler_lock import global_compiler_lock

#: the per-block copy in numba's ``InlineWorker.inline_ir`` (its nested ``copy_ir``), and what
#: replaces it
PER_BLOCK = """\
        for block_label, block in the_ir.blocks.items():
            new_block = copy.deepcopy(the_ir.blocks[block_label])
            kernel_copy.blocks[block_label] = new_block
"""
ONE_COPY = """\
        kernel_copy.blocks = copy.deepcopy(the_ir.blocks)
"""


@functools.cache
def one_copy_inline_ir():
    """``InlineWorker.inline_ir`` with :data:`ONE_COPY` for :data:`PER_BLOCK`, compiled in the
    inliner's module; None when its source is not available or does not hold :data:`PER_BLOCK`
    exactly once."""
    original = inline_closurecall.InlineWorker.__dict__.get("inline_ir")
    try:
        source = textwrap.dedent(inspect.getsource(original))
    except (OSError, TypeError):
        return None
    if source.count(PER_BLOCK) != 1:
        return None
    namespace: dict = {}
    code = compile(source.replace(PER_BLOCK, ONE_COPY), inline_closurecall.__file__, "exec")
    exec(code, vars(inline_closurecall), namespace)
    return namespace["inline_ir"]


@contextlib.contextmanager
def one_copy_per_function():
    """Compile with :func:`one_copy_inline_ir` (if available) for the duration, under numba's
    compiler lock; the original method is back on exit, also after an error."""
    fast = one_copy_inline_ir()
    if fast is None:
        yield
        return
    worker = inline_closurecall.InlineWorker
    with global_compiler_lock:
        original = worker.__dict__["inline_ir"]
        worker.inline_ir = fast
        try:
            yield
        finally:
            worker.inline_ir = original
