"""Guardrails for task authors (envs/task_checks.py): an attribute a task's method sets but
``task_state`` omits, and task methods returning the wrong kind of value, raise at once naming
the method, the attribute or term, and the fix."""

import copy
import math

import numpy as np
import pytest

from traction.envs import task_checks
from traction.envs.tank_turn_v1 import TankTurnEnv

PIVOT = np.array([1.0, -1.0], np.float32)


class Forgetful(TankTurnEnv):
    """TankTurn with ``target`` (drawn in reset_task) left out of task_state."""

    task_state = ("start", "_prev_pos", "_prev_err", "_held")


def test_an_attribute_missing_from_task_state_made_copies_diverge_and_now_raises(monkeypatch):
    with monkeypatch.context() as m:               # the scenario, without the check
        m.setattr(task_checks, "unsaved", lambda *args: None)
        env = Forgetful()
        env.reset(seed=0)
        clone = copy.deepcopy(env)                 # reset (its own target), then restored
        assert clone.target != env.target
        assert not np.array_equal(clone.step(PIVOT)[0], env.step(PIVOT)[0])
    with pytest.raises(TypeError, match=r"^Forgetful.reset_task set self.target, which "
                                        r"Forgetful.task_state does not list: .* Add it: "
                                        r"task_state = \('start', '_prev_pos', '_prev_err', "
                                        r"'_held', 'target'\)"):
        Forgetful().reset(seed=0)


class Counting(TankTurnEnv):
    """Counts its steps in an attribute task_state omits (set in a step method)."""

    def reward_terms(self, c):
        self._count = getattr(self, "_count", 0) + 1
        return super().reward_terms(c)


class Appending(TankTurnEnv):
    """Keeps a history list, changed in place in a step method, that task_state omits."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.history = []

    def termination(self, c):
        self.history.append(c.yaw)
        return super().termination(c)


@pytest.mark.parametrize(("cls", "method", "name"), [(Counting, "reward_terms", "_count"),
                                                     (Appending, "termination", "history")])
def test_a_step_method_setting_an_unlisted_attribute_raises_at_the_first_step(cls, method, name):
    env = cls()
    env.reset(seed=0)
    with pytest.raises(TypeError, match=rf"^{cls.__name__}.{method} set self.{name}, which "):
        env.step(PIVOT)


def test_a_task_state_attribute_the_reset_does_not_set_is_named():
    cls = type("Extra", (TankTurnEnv,), {"task_state": (*TankTurnEnv.task_state, "_goal")})
    with pytest.raises(AttributeError, match=r"^Extra.task_state lists '_goal', which neither"):
        cls().reset(seed=0)


class BoolTermination(TankTurnEnv):
    def termination(self, c):
        return False


def test_termination_returning_a_bool_names_the_method_and_the_expected_tuple():
    env = BoolTermination()
    env.reset(seed=0)
    with pytest.raises(TypeError, match=r"^BoolTermination.termination returned False \(bool\); "
                                        r"expected a tuple \(terminated, success\) of two bools"):
        env.step(PIVOT)


class NumberFlags(TankTurnEnv):
    def termination(self, c):
        return 0.0, 0.0


def test_termination_flags_that_are_not_bools_are_named():
    env = NumberFlags()
    env.reset(seed=0)
    with pytest.raises(TypeError, match=r"^NumberFlags.termination returned terminated = 0.0 "
                                        r"\(float\); expected a bool"):
        env.step(PIVOT)


class NanLater(TankTurnEnv):
    """A NaN translation term from the third step (past the first step's full check)."""

    def reward_terms(self, c):
        terms = super().reward_terms(c)
        if self._steps >= 3:
            terms["translation"] = math.nan
        return terms


def test_a_nan_reward_term_at_any_step_names_the_term():
    env = NanLater()
    env.reset(seed=0)
    env.step(PIVOT)
    env.step(PIVOT)
    with pytest.raises(ValueError, match=r"^NanLater.reward_terms returned term 'translation' = "
                                         r"nan; every term must be finite"):
        env.step(PIVOT)


@pytest.mark.parametrize(("terms", "error", "match"), [
    (1.0, TypeError, r"reward_terms returned float 1.0; expected a dict of the terms"),
    ({"heading": 0.0}, ValueError, r"reward_terms returned \['heading'\]; expected the terms"),
    ("x", TypeError, r"reward_terms returned str 'x'; expected a dict")])
def test_reward_terms_of_another_form_are_named(terms, error, match):
    env = type("Odd", (TankTurnEnv,), {"reward_terms": lambda self, c: terms})()
    env.reset(seed=0)
    with pytest.raises(error, match="^Odd." + match):
        env.step(PIVOT)


def test_a_non_finite_observation_at_reset_names_the_method_and_the_channel():
    def observation(self, c):
        obs = TankTurnEnv.observation(self, c)
        obs[4] = math.inf
        return obs

    env = type("InfObs", (TankTurnEnv,), {"observation": observation})()
    with pytest.raises(ValueError, match=r"^InfObs.observation returned a value that is not "
                                         r"finite: obs\[4\] = inf"):
        env.reset(seed=0)


def test_the_checked_first_step_gives_what_an_unchecked_step_gives():
    """The episode's first step runs the task's methods under checks; its results are those
    of the step without them, bit for bit."""
    checked, unchecked = TankTurnEnv(), TankTurnEnv()
    checked.reset(seed=3)
    unchecked.reset(seed=3)
    unchecked._check_step = False
    for _ in range(3):
        a, b = checked.step(PIVOT), unchecked.step(PIVOT)
        assert np.array_equal(a[0], b[0]) and a[1:4] == b[1:4]
        assert all(np.array_equal(a[4][k], b[4][k]) for k in a[4])
