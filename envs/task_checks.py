"""Guardrails for task authors: what the task interface's methods return, and which attributes
they set.

A task's mistakes would otherwise surface far from their cause: an attribute that
``reset_task`` draws but ``task_state`` does not list is not saved by ``get_state``, so a
``copy.deepcopy`` or unpickled environment (which is reset, then restored) keeps its own draw
and silently steps differently from the original; a ``termination`` returning a bool fails
deep in the base with "cannot unpack non-iterable bool object"; a NaN reward term passes into
training. The base (``envs/base.py``) calls these checks at every reset and at the first step
of each episode (a few microseconds an episode), and the cheap ones (termination unpacks, the
reward terms are finite numbers) at every step; each error names the task's method and what
it should have returned.

What the attribute check sees: the task's instance attributes rebound by a hook (a new object,
or a new attribute), and lists, dicts, sets and arrays changed in place. It cannot see an
attribute set only in a branch that has not run yet (a latch set late in an episode), nor a
change inside another object; those still belong in ``task_state``.
"""

from __future__ import annotations

import math

import numpy as np

#: types whose contents the attribute check compares (a copy is taken before the hook runs)
_CONTAINERS = (list, dict, set, np.ndarray)


def attributes(env) -> dict:
    """The environment's instance attributes now: name -> (object, a copy of its contents if
    it is a container, else None); :func:`unsaved` compares against it."""
    return {k: (v, v.copy() if isinstance(v, _CONTAINERS) else None) for k, v in vars(env).items()}


def _same_contents(before, now) -> bool:
    try:
        if isinstance(now, np.ndarray):
            return (before.shape == now.shape and before.dtype == now.dtype
                    and np.array_equal(before, now, equal_nan=now.dtype.kind in "fc"))
        return bool(before == now)
    except (TypeError, ValueError):              # (contents that cannot be compared: unseen)
        return True


def unsaved(env, before: dict, method: str) -> None:
    """TypeError naming the first attribute the task's ``method`` set (since ``before``, from
    :func:`attributes`) that neither ``task_state`` nor ``task_cache`` lists, and the fix."""
    listed = (*env.task_state, *env.task_cache)
    for name, value in vars(env).items():
        if name in listed:
            continue
        old = before.get(name)
        if old is not None and old[0] is value and (old[1] is None
                                                    or _same_contents(old[1], value)):
            continue
        cls = type(env).__name__
        raise TypeError(
            f"{cls}.{method} set self.{name}, which {cls}.task_state does not list: get_state, "
            "copy.deepcopy and pickle do not save it, so a copy or a restored snapshot would "
            f"step differently from the original. Add it: task_state = "
            f"{(*env.task_state, name)!r}; or, if it only caches values computed from the "
            f"step's reading, list it in task_cache; or, if it is the same in every episode, set "
            "it in __init__ (docs/architecture.md, \"Writing your own task\")")


def missing_state(env) -> None:
    """AttributeError naming a ``task_state`` attribute the reset's hooks did not set (a
    snapshot taken now could not save it)."""
    for name in env.task_state:
        if not hasattr(env, name):
            cls = type(env).__name__
            raise AttributeError(f"{cls}.task_state lists {name!r}, which neither __init__, "
                                 f"reset_task nor start_task set: get_state saves task_state "
                                 f"after a reset; set self.{name} there (or remove it from "
                                 "task_state)")


def termination_error(env, result) -> TypeError:
    """The error for a ``termination`` that returned ``result``, not two flags."""
    return TypeError(f"{type(env).__name__}.termination returned {result!r} "
                     f"({type(result).__name__}); expected a tuple (terminated, success) of two "
                     "bools, e.g. `return done, done and reached`")


def check_flags(env, result) -> None:
    """TypeError unless ``termination``'s ``(terminated, success)`` are bools (Python or
    numpy): Gymnasium's ``terminated`` and the info's ``is_success`` are."""
    for what, flag in zip(("terminated", "success"), result, strict=True):
        if not isinstance(flag, bool | np.bool_):
            raise TypeError(f"{type(env).__name__}.termination returned {what} = {flag!r} "
                            f"({type(flag).__name__}); expected a bool (wrap it: bool(...))")


def reward_terms_error(env, terms) -> Exception:
    """The error for ``reward_terms`` results the step could not sum (its values in
    ``reward_names`` order failed): not a dict, other terms, a value that is not a real number,
    or one that is not finite; ValueError or TypeError naming the method and the term."""
    cls, names = type(env).__name__, list(env.reward_names)
    if not isinstance(terms, dict):
        return TypeError(f"{cls}.reward_terms returned {type(terms).__name__} {terms!r}; "
                         f"expected a dict of the terms of reward_names, {names}, to floats")
    if sorted(terms) != sorted(names):
        return ValueError(f"{cls}.reward_terms returned {sorted(terms, key=str)}; expected the "
                          f"terms of reward_names, {names}")
    for name in names:
        value = terms[name]
        try:
            number = float(value)
        except (TypeError, ValueError):
            return TypeError(f"{cls}.reward_terms returned term {name!r} = {value!r} "
                             f"({type(value).__name__}); expected a real number")
        if not math.isfinite(number):
            return ValueError(f"{cls}.reward_terms returned term {name!r} = {number}; every "
                              "term must be finite (the reward is their sum)")
    return ValueError(f"{cls}.reward_terms returned {terms!r}, which could not be summed")


def check_observation(env, obs, method: str = "observation") -> None:
    """TypeError or ValueError unless ``obs`` is a real-valued array of the observation space's
    shape, every value finite."""
    cls, space = type(env).__name__, env.state_space
    try:
        kind = np.asarray(obs).dtype
    except (TypeError, ValueError):                 # (a ragged sequence)
        kind = None
    if kind is None or kind.kind not in "biuf":
        raise TypeError(f"{cls}.{method} returned {type(obs).__name__} of "
                        f"{getattr(kind, 'name', '?')}; expected a float64 numpy array of "
                        f"shape {space.shape}")
    if np.shape(obs) != space.shape:
        raise ValueError(f"{cls}.{method} returned shape {np.shape(obs)}; the observation "
                         f"space's is {space.shape}")
    finite = np.isfinite(obs)
    if not finite.all():
        index = tuple(int(i) for i in np.argwhere(~finite)[0])
        raise ValueError(f"{cls}.{method} returned a value that is not finite: "
                         f"obs[{', '.join(map(str, index))}] = {np.asarray(obs)[index]}")
