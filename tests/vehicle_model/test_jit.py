"""The compiler setting's helpers: the notice a first use that compiles gives. The notice's timer
is replaced by one the test fires (no wall-clock timing: a loaded machine would stall a real
one)."""

import logging

from traction.vehicle_model import jit


class _Dispatcher:
    """Stands in for a numba function: only its ``overloads`` are read."""

    def __init__(self, overloads):
        self.overloads = overloads


class _Timer:
    """Stands in for ``threading.Timer``: :meth:`elapse` runs the function unless cancelled."""

    made: list = []

    def __init__(self, interval, function, args=()):
        self.interval, self.function, self.args = interval, function, args
        self.started = self.cancelled = False
        _Timer.made.append(self)

    def start(self):
        self.started = True

    def cancel(self):
        self.cancelled = True

    def elapse(self):
        if self.started and not self.cancelled:
            self.function(*self.args)


def _records(monkeypatch, caplog, dispatcher, slow: bool):
    """The notices of one ``first_compile`` whose call outlasts the notice delay if ``slow``,
    and of the timer elapsing after it ended (a notice wrongly left pending)."""
    _Timer.made = []
    monkeypatch.setattr(jit.threading, "Timer", _Timer)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=jit.logger.name):
        with jit.first_compile(dispatcher, "the test kernel"):
            if slow:
                for t in _Timer.made:
                    t.elapse()
        for t in _Timer.made:
            t.elapse()
    return [r.getMessage() for r in caplog.records if r.name == jit.logger.name]


def test_a_slow_first_compile_says_what_it_compiles_and_where_it_is_cached(monkeypatch, caplog):
    messages = _records(monkeypatch, caplog, _Dispatcher({}), slow=True)
    assert len(messages) == 1
    assert "compiling the test kernel" in messages[0]
    assert str(jit.CACHE_FOLDER) in messages[0]
    (timer,) = _Timer.made
    assert timer.interval == jit.NOTICE_AFTER and timer.cancelled


def test_no_notice_for_a_fast_first_call_or_a_function_already_compiled(monkeypatch, caplog):
    assert _records(monkeypatch, caplog, _Dispatcher({}), slow=False) == []   # from the cache
    assert len(_Timer.made) == 1 and _Timer.made[0].cancelled
    assert _records(monkeypatch, caplog, _Dispatcher({"sig": "entry"}), slow=True) == []
    assert _Timer.made == []                                                  # compiled earlier
