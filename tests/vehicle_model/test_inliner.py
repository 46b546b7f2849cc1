"""Numba's inliner with one copy per inlined function: the same machine code, swapped only while
held."""

import re

import numba
import numpy as np
import pytest
from numba.core.inline_closurecall import InlineWorker

from traction.vehicle_model import inliner

ORIGINAL = InlineWorker.__dict__["inline_ir"]


def _part_py(x, n):
    total = 0.0                                  # a loop and a branch: several basic blocks
    for i in range(n):
        if x[i] > 0.0:
            total += x[i]
        else:
            total -= 0.5 * x[i]
    return total


part = numba.njit(inline="always")(_part_py)


def _caller_py(x):
    return part(x, 3) + 2.0 * part(x[1:], 2)


def _assembly(dispatcher) -> str:
    text = "\n".join(dispatcher.inspect_asm().values())
    return re.sub(r"_ZN[0-9A-Za-z_$.]+|\.Lfunc_end\d+|\.LBB\d+_\d+|\.LCPI\d+_\d+", "NAME", text)


def test_the_swap_holds_only_inside_and_gives_the_same_machine_code():
    assert inliner.one_copy_inline_ir() is not None, (
        "numba's InlineWorker.inline_ir no longer holds inliner.PER_BLOCK: the update compiles "
        "at the old speed (twice as long); update the swap for this numba")
    x = np.array([1.0, -2.0, 3.0])
    per_block = numba.njit(_caller_py)
    assert per_block(x) == 1.0 + 1.0 + 3.0 + 2.0 * (1.0 + 3.0)
    with inliner.one_copy_per_function():
        assert InlineWorker.__dict__["inline_ir"] is inliner.one_copy_inline_ir()
        one_copy = numba.njit(_caller_py)
        assert one_copy(x) == per_block(x)
    assert InlineWorker.__dict__["inline_ir"] is ORIGINAL
    assert _assembly(one_copy) == _assembly(per_block)


def test_the_original_is_back_after_an_error():
    with pytest.raises(RuntimeError, match="inside"):
        with inliner.one_copy_per_function():
            raise RuntimeError("inside")
    assert InlineWorker.__dict__["inline_ir"] is ORIGINAL


def test_nothing_is_swapped_when_the_inliner_reads_otherwise(monkeypatch):
    inliner.one_copy_inline_ir.cache_clear()
    monkeypatch.setattr(inliner, "PER_BLOCK", "        a line no numba has\n")
    try:
        assert inliner.one_copy_inline_ir() is None
        with inliner.one_copy_per_function():
            assert InlineWorker.__dict__["inline_ir"] is ORIGINAL
    finally:
        inliner.one_copy_inline_ir.cache_clear()
