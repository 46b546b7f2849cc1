"""The compiler setting's helpers: the notice a first use that compiles gives."""

import logging
import time

from traction.vehicle_model import jit


class _Dispatcher:
    """Stands in for a numba function: only its ``overloads`` are read."""

    def __init__(self, overloads):
        self.overloads = overloads


def _records(caplog, dispatcher, seconds):
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=jit.logger.name):
        with jit.first_compile(dispatcher, "the test kernel"):
            time.sleep(seconds)
        time.sleep(0.15)                      # a notice wrongly left pending would fire here
    return [r.getMessage() for r in caplog.records if r.name == jit.logger.name]


def test_a_slow_first_compile_says_what_it_compiles_and_where_it_is_cached(monkeypatch, caplog):
    monkeypatch.setattr(jit, "NOTICE_AFTER", 0.05)
    messages = _records(caplog, _Dispatcher({}), 0.3)
    assert len(messages) == 1
    assert "compiling the test kernel" in messages[0]
    assert str(jit.CACHE_FOLDER) in messages[0]


def test_no_notice_for_a_fast_first_call_or_a_function_already_compiled(monkeypatch, caplog):
    monkeypatch.setattr(jit, "NOTICE_AFTER", 0.1)
    assert _records(caplog, _Dispatcher({}), 0.0) == []          # loaded from the disk cache
    assert _records(caplog, _Dispatcher({"sig": "entry"}), 0.3) == []   # compiled earlier
