"""The native vector environment: N worlds, one compiled physics loop, one batched vehicle update.

``gym.make_vec("Traction/Climb6x6-v1", num_envs=64, vectorization_mode="vector_entry_point")``
returns a :class:`TractionVectorEnv`. It holds N task environments (each its own MuJoCo model
and data, terrain, RNG and task state) whose simulators are the rows of one
:class:`~traction.envs.world.World`: per control step the actions are copied into the world's
action rows and one compiled call checks and maps them (the task's action map) and advances
every world's substeps (``mj_step1`` for all -> one vehicle update for all -> ``mj_step2`` for
all, per substep), then each world's task computes its observation, reward terms and
termination with the same code as the single environment (``TractionEnv.step_outcome``), so
both give identical trajectories. The observations are clipped all at once; ``step`` builds
Gymnasium's batched info straight from the step's per-world values and the vehicle diagnostics
of all worlds at once (``reading.batch_diagnostics``, the values the single environment gives),
without one dict per world (those and their per-key batching cost more than a light task's
step); the SB3 adapter, which wants one dict per world, gets them from the same arrays with
the single environment's keys, values and types (:meth:`TractionVectorEnv.infos`). Each world reads its own
friction table (``envs[i].sim.friction_table``) at every step, as each env of a
``SyncVectorEnv`` does: an edit applies to that world only (grip randomised per world).

``num_threads`` > 1 steps the worlds' physics in that many threads, each running the compiled
loop over its share of the worlds (the loop releases the GIL); the worlds are independent, so
the trajectories are bit for bit those of one thread. The task code after the physics still
runs in the calling thread, and handing work to a thread costs some tens of microseconds per
step: threads pay at tens of worlds, not at a few (``python -m traction.train.perf`` measures
them).

Autoreset follows Gymnasium 1.x ``AutoresetMode.NEXT_STEP`` by default (``SAME_STEP`` on
request): a sub-environment that terminated or truncated is reset by the *next* ``step`` call
(whose action for it is ignored), which returns the reset observation with reward 0 and
``terminated = truncated = False``. Episodes are truncated at ``max_episode_steps`` (from the
registration) like ``TimeLimit`` does.
"""

from __future__ import annotations

import copy
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import load_env_creator
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, create_empty_array

from traction.vehicle_model.params import check_number

from . import actions as action_maps
from . import sensors as sensing
from .base import StepOutcome
from .reading import ChassisReading, batch_diagnostics
from .snapshot import refuse_copies
from .world import World


class StepResults(NamedTuple):
    """The results of one vector step: the info values, lists over the worlds (reward-term
    values in ``reward_names`` order, success and divergence flags, and the chassis reading the
    step's task code used, None for a world reset in the step), and the step's observations,
    rewards, terminations and truncations (the vector env's buffers: copy them to keep them)."""

    values: list
    success: list
    diverged: list
    readings: list
    observations: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray


class TractionVectorEnv(VectorEnv):
    """``num_envs`` copies of a Traction task stepped together (see the module docstring).

    Args:
        env_class: the task environment class (or ``"module:Class"``).
        num_envs: number of sub-environments.
        max_episode_steps: truncate episodes after this many steps (None: never).
        autoreset_mode: ``NEXT_STEP`` (Gymnasium's default) or ``SAME_STEP`` (the ended episode's
            last observation and info go to ``info["final_obs"]``/``info["final_info"]`` and the
            returned observation is the reset one).
        num_threads: threads stepping the physics (at most one per world; see the module
            docstring). Results do not depend on it.
        **kwargs: passed to every sub-environment's constructor.
    """

    __copy__ = __deepcopy__ = __reduce_ex__ = refuse_copies(
        "make another with gym.make_vec, or copy its sub-environments (copy.deepcopy(env))")

    def __init__(self, env_class, num_envs: int, max_episode_steps: int | None = None,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 num_threads: int = 1, **kwargs):
        if isinstance(env_class, str):
            env_class = load_env_creator(env_class)
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs = {num_envs!r}; allowed: an integer >= 1")
        if not isinstance(num_threads, int) or num_threads < 1:
            raise ValueError(f"num_threads = {num_threads!r}; allowed: an integer >= 1")
        if max_episode_steps is not None:
            check_number("max_episode_steps", max_episode_steps, 1, integer=True)
        if kwargs.get("telemetry", 0) != 0:
            raise ValueError(f"telemetry = {kwargs['telemetry']!r}; allowed: 0 in a native vector "
                             "env (its worlds step in one compiled call, which records none); "
                             "record with a single env: gym.make(id, telemetry=n), or single "
                             "envs side by side: gym.make_vec(id, n, vectorization_mode='sync', "
                             "telemetry=n)")
        self.world = World(num_envs, num_threads)
        with self.world.filled():                  # each env's VehicleSim is a row of it
            self.envs = [env_class(**kwargs) for _ in range(num_envs)]
        first = self.envs[0]
        self.num_envs = num_envs
        self.max_episode_steps = max_episode_steps
        self.n_substeps = first.n_substeps
        self.render_mode = first.render_mode
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        if self.autoreset_mode == AutoresetMode.DISABLED:
            raise ValueError("autoreset_mode: allowed NextStep or SameStep")
        self.metadata = {**first.metadata, "autoreset_mode": self.autoreset_mode}
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(first.observation_space, num_envs)
        self.action_space = batch_space(first.action_space, num_envs)
        self._elapsed = np.zeros(num_envs, np.int64)
        self._autoreset = np.zeros(num_envs, np.bool_)
        state = first.state_space                 # the task's vector: every mode computes it
        self._obs = np.zeros((num_envs, *state.shape), state.dtype)
        #: with sensors (``obs_mode``), the observations returned (``_obs`` holds the state)
        self._agent = (None if first.sensors.state_only else
                       create_empty_array(first.observation_space, num_envs, fn=np.zeros))
        self._rewards = np.zeros(num_envs)
        self._terminated = np.zeros(num_envs, np.bool_)
        self._truncated = np.zeros(num_envs, np.bool_)
        self.final: dict[int, tuple[np.ndarray, dict]] = {}     # see step_batch
        self._every = np.ones(num_envs, np.bool_)               # (read only)
        self._every.setflags(write=False)
        self._all = list(range(num_envs))
        self._zeros = (0.0,) * len(first.reward_names)         # a reset world's reward terms
        self._reward_keys = tuple(f"reward_{k}" for k in first.reward_names)
        self._was_reset = False

    def reset(self, *, seed: int | list[int | None] | None = None,
              options: dict[str, Any] | None = None):
        """Reset every sub-environment (``seed`` int: sub-environment i gets ``seed + i``), or,
        as Gymnasium 1.x's partial reset, those flagged in ``options["reset_mask"]`` (a bool
        array, one flag per sub-environment; the info then holds only theirs). The other
        options go to each reset sub-environment."""
        self._check_open("reset")
        seeds = self._seeds(seed)
        options = dict(options or {})
        mask = self._reset_mask(options.pop("reset_mask", None))
        worlds = np.flatnonzero(mask).tolist()
        for i in worlds:                                  # before any world is reset
            self.envs[i].sim.check_friction("reset")
        infos = []
        for i in worlds:
            obs, info = self.envs[i].reset(seed=seeds[i], options=options or None)
            self._store(i, obs)
            infos.append(info)
        self.mark_reset(mask)
        if len(worlds) == self.num_envs:
            return self.observations(), self._batch_infos(infos)
        out: dict = {}
        for i, info in zip(worlds, infos, strict=True):
            out = self._add_info(out, info, i)
        return self.observations(), out

    def _store(self, i: int, obs) -> None:
        """Keep world ``i``'s observation (as its env returned it) in the buffers."""
        if self._agent is None:
            self._obs[i] = obs
            return
        sensing.write_row(self._agent, i, obs)
        if isinstance(obs, dict) and "state" in obs:
            self._obs[i] = obs["state"]

    def observations(self):
        """A copy of every world's observation now (the state vectors, or with ``obs_mode``
        the sensors' too)."""
        return self._obs.copy() if self._agent is None else sensing.copy_buffer(self._agent)

    def world_observation(self, i: int):
        """A copy of world ``i``'s observation now."""
        return self._obs[i].copy() if self._agent is None else sensing.read_row(self._agent, i)

    def booked_resets(self, worlds: list[int], results: list) -> None:
        """Book resets of the sub-environments ``worlds`` made by calling their ``reset``
        directly (``call("reset")``, the SB3 adapter), ``results`` what each returned: their
        observations, step counts and pending autoresets start anew, as after :meth:`reset`."""
        mask = np.zeros(self.num_envs, np.bool_)
        mask[worlds] = True
        for i, (obs, _) in zip(worlds, results, strict=True):
            self._store(i, obs)
        self.mark_reset(mask)

    def mark_reset(self, mask: np.ndarray) -> None:
        """Book the worlds flagged in ``mask`` as just reset (episode step counts, pending
        autoresets); the vector env counts as reset once every world has been."""
        self._elapsed[mask] = 0
        self._autoreset[mask] = False
        self._was_reset = self._was_reset or bool(mask.all())

    def _reset_mask(self, mask) -> np.ndarray:
        """The worlds to reset: all, or the ``reset_mask`` option checked (ValueError)."""
        if mask is None:
            return self._every
        mask = np.asarray(mask)
        if mask.dtype != np.bool_ or mask.shape != (self.num_envs,) or not mask.any():
            raise ValueError(f"reset option reset_mask: {mask.dtype} {mask.shape}; allowed: a "
                             f"bool array of shape ({self.num_envs},) with at least one True")
        if not self._was_reset and not mask.all():
            raise ResetNeeded("reset_mask before the first reset: reset every sub-environment "
                              "first")
        return mask

    def _action_error(self, actions: np.ndarray) -> str:
        """What is wrong with ``actions`` (not real numbers, or the wrong shape) and what is
        expected."""
        got = (f"cannot be read as real numbers (dtype {actions.dtype})"
               if actions.dtype.kind not in "biuf" else f"shape {actions.shape}")
        return (f"actions {got}; expected {self.action_space.shape} "
                f"(num_envs, {', '.join(self.envs[0].action_names)})")

    def step(self, actions):
        r = self.step_batch(actions)
        a = self.world.arrays                       # every world's state after steps and resets
        info = batch_diagnostics(a.now, a.outputs.wheel, a.outputs.vehicle)
        values = np.array(r.values).reshape(self.num_envs, -1)
        for j, key in enumerate(self._reward_keys):
            info[key] = values[:, j]
        info["is_success"] = np.array(r.success, np.bool_)
        info["diverged"] = np.array(r.diverged, np.bool_)
        for key in list(info):
            info["_" + key] = np.ones(self.num_envs, np.bool_)
        for i, (obs, last) in self.final.items():
            info = self._add_info(info, {"final_obs": obs, "final_info": last}, i)
        return (self.observations(), self._rewards.copy(), self._terminated.copy(),
                self._truncated.copy(), info)

    def _batch_infos(self, infos: list[dict]) -> dict:
        """Gymnasium's batched info (``VectorEnv._add_info``: per key an array of the values and
        a ``_key`` mask) of the sub-environments' reset infos, built a key at a time when every
        one reports the same flat keys (an ``_add_info`` per key and world costs milliseconds
        at tens of worlds), else
        environment by environment. (``step`` builds its info from arrays, see there.)"""
        keys = infos[0].keys()
        if ("final_obs" in keys or any(info.keys() != keys for info in infos)
                or any(isinstance(v, dict) for v in infos[0].values())):
            out: dict = {}
            for i, info in enumerate(infos):
                out = self._add_info(out, info, i)
            return out
        out = {}
        for key in keys:
            values = [info[key] for info in infos]
            kind = type(values[0])
            if kind in (int, float, bool) or issubclass(kind, np.number):
                out[key] = np.array(values, dtype=kind)
            elif kind is np.ndarray:
                out[key] = np.stack(values).astype(values[0].dtype, copy=False)
            else:
                out[key] = np.empty(self.num_envs, dtype=object)
                for i, v in enumerate(values):
                    out[key][i] = v
            out["_" + key] = np.ones(self.num_envs, np.bool_)
        return out

    def step_batch(self, actions) -> StepResults:
        """Step every sub-environment: fill the observation, reward, terminated and truncated
        buffers and return the info's values (:class:`StepResults`; :meth:`step` batches them
        as Gymnasium does, :meth:`infos` makes one dict per world, as SB3 wants).

        Each world runs its task's own code (:meth:`TractionEnv.step_outcome`, as the single
        env's ``step`` does) and its reward is summed as there; the observations are clipped
        all at once. :attr:`final` holds, per world whose episode ended and was reset in this
        step (``SAME_STEP``), its last observation and info.
        """
        self._check_open("step")
        if not self._was_reset:
            raise ResetNeeded("step() before reset(): reset the vector environment first")
        try:
            actions = np.asarray(actions)
        except (TypeError, ValueError):
            actions = np.asarray(None)
        if actions.dtype.kind not in "biuf" or actions.shape != self.action_space.shape:
            raise ValueError(self._action_error(actions))
        same_step = self.autoreset_mode == AutoresetMode.SAME_STEP
        stepping = self._every if same_step else ~self._autoreset
        self.step_physics(actions, stepping)
        steps = self._all if same_step else np.flatnonzero(stepping).tolist()
        r, terminated = self._task_steps(steps)
        elapsed, truncated, limit = self._elapsed.tolist(), list(r.diverged), self.max_episode_steps
        for i in steps:
            elapsed[i] += 1
            if limit is not None and elapsed[i] >= limit:
                truncated[i] = True
        ended = [i for i in steps if terminated[i] or truncated[i]]
        self._elapsed[:], self._truncated[:] = elapsed, truncated
        self.final = {}
        if same_step:                                    # reset ended episodes now, keep the last
            if ended:
                last = self.infos(r, ended)
                self.final = {i: (self.world_observation(i), info)
                              for i, info in zip(ended, last, strict=True)}
                self._reset_worlds(ended, r)
        else:                                            # ended last step: reset now
            self._reset_worlds(np.flatnonzero(~stepping).tolist(), r)
            self._autoreset[:] = False
            self._autoreset[ended] = True
        return r

    def _task_steps(self, steps: list[int]) -> tuple[StepResults, list]:
        """Observation, reward terms and termination of the worlds ``steps`` (each by its
        task's code): observations (clipped), rewards and terminations to the buffers; the
        info's values per world (zeros for the others) and the terminations."""
        n = self.num_envs
        values, success, diverged = [self._zeros] * n, [False] * n, [False] * n
        readings, rewards, terminated, obs = [None] * n, [0.0] * n, [False] * n, []
        for i in steps:
            env = self.envs[i]
            o = env.step_outcome()
            obs.append(o.observation)
            readings[i], values[i], rewards[i] = o.reading, o.values, float(sum(o.values))
            terminated[i], success[i], diverged[i] = o.terminated, bool(o.success), o.diverged
            if self.render_mode == "human":
                env.render()
        if obs:                                             # clipped all at once
            lo, hi = self.envs[0].clip_bounds               # (every world's space is its)
            self._obs[steps] = np.minimum(np.maximum(np.array(obs), lo), hi)
        if self._agent is not None:                         # the sensors, world by world
            for i in steps:
                env = self.envs[i]
                self._store(i, env.sensors.compose(self._obs[i], env.sensed(diverged[i])))
        self._rewards[:], self._terminated[:] = rewards, terminated
        observations = self._obs if self._agent is None else self._agent
        return StepResults(values, success, diverged, readings, observations, self._rewards,
                           self._terminated, self._truncated), terminated

    def _reset_worlds(self, worlds: list[int], r: StepResults) -> None:
        """Reset the sub-environments ``worlds``: their observation, and reward 0, terminated
        and truncated False in the buffers unless their episode just ended (``SAME_STEP``
        returns its last step's); their info values those of the reset (zeros, False)."""
        for i in worlds:
            self._store(i, self.envs[i].reset()[0])   # its info: diagnostics + the zeros below
            self._elapsed[i] = 0
            r.values[i], r.success[i], r.diverged[i], r.readings[i] = self._zeros, False, False, None

    def infos(self, r: StepResults, worlds=None) -> list[dict]:
        """One info dict per world (all, or those in ``worlds``) from a step's results and the
        worlds' state now, holding the keys, values and types the single env's step gives
        (``TractionEnv.step_info``). Every world's at once are built from the diagnostics of all
        worlds computed as arrays (``reading.batch_diagnostics``, the same arithmetic): a
        ``step_info`` per world costs several microseconds more per world and step, a sizeable
        share of a light task's step."""
        if worlds is not None:
            return [self.envs[i].step_info(StepOutcome(
                r.readings[i] or ChassisReading(self.envs[i].sim.now), None, r.values[i], False,
                r.success[i], r.diverged[i])) for i in worlds]
        a = self.world.arrays
        batch = batch_diagnostics(a.now, a.outputs.wheel, a.outputs.vehicle)
        scalars = [batch.pop(k).tolist() for k in ("speed", "gear", "engine_rpm")]
        wheels = list(batch)
        rows = [batch[k] for k in wheels]
        keys = ("speed", "gear", "engine_rpm", *wheels, *self._reward_keys, "is_success",
                "diverged")
        return [dict(zip(keys, (speed, gear, rpm, *(w[i] for w in rows), *values,
                                bool(success), bool(bad)), strict=True))
                for i, (speed, gear, rpm, values, success, bad)
                in enumerate(zip(*scalars, r.values, r.success, r.diverged, strict=True))]

    def _check_open(self, call: str) -> None:
        if self.world.closed:       # (before any world's commands or state change)
            raise RuntimeError(f"{call}() after close(): the vector environment is closed (its "
                               "sub-environments step on their own)")

    def step_physics(self, actions: np.ndarray, stepping: np.ndarray) -> None:
        """Check and apply the actions of the sub-environments flagged in ``stepping`` (an
        array of the batched action space's shape), then run every world's physics substeps
        in one compiled call (which also checks, clips and maps the actions when the task has a
        compiled action map)."""
        first = self.envs[0]
        perturbing = [i for i in np.flatnonzero(stepping) if self.envs[i].perturbs_actions]
        if perturbing and np.all(np.isfinite(actions[perturbing])):   # (else refused below)
            actions = np.array(actions, np.float32 if actions.dtype == np.float32 else float)
            for i in perturbing:                          # noise, latency (randomize)
                actions[i] = self.envs[i].perturb_action(actions[i])
        if first.action_map == action_maps.NONE:
            checked = {}
            for i in np.flatnonzero(stepping):
                try:
                    checked[i] = self.envs[i].check_action(actions[i])
                except ValueError as e:
                    raise ValueError(f"sub-environment {i}: {e}") from None
            for env in self.envs:                           # (the compiled call's, in advance)
                env.sim.check_friction()
            for i, a in checked.items():                    # all checked before any is applied
                self.envs[i].sim.action[0] = a
                self.envs[i].apply_action(a)
            self.world.step(self.n_substeps, stepping)
            return
        rows = self.world.arrays.action
        if actions.dtype == np.float32:         # the action space's: copied in the compiled call
            bad = self.world.step(self.n_substeps, stepping, first.action_map, actions)
        else:
            rows[...] = actions
            bad = self.world.step(self.n_substeps, stepping, first.action_map)
        if bad >= 0:
            i, j = divmod(bad, rows.shape[1])
            error = action_maps.not_finite(first.action_names, j, float(rows[i, j]))
            raise ValueError(f"sub-environment {i}: {error}")

    def _seeds(self, seed) -> list:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, int | np.integer):
            return [int(seed) + i for i in range(self.num_envs)]
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"reset(seed=...) got {len(seeds)} seeds; expected {self.num_envs}")
        return seeds

    def render(self):
        """Frames of every sub-environment (``rgb_array``), as a tuple."""
        return tuple(env.render() for env in self.envs)

    def close_extras(self, **kwargs):
        self.world.close()
        for env in self.envs:
            env.close()

    @property
    def np_random_seed(self) -> tuple:
        """Every sub-environment's seed (as ``SyncVectorEnv``: the worlds seed themselves)."""
        return self.get_attr("np_random_seed")

    @property
    def np_random(self) -> tuple:
        """Every sub-environment's random generator (as ``SyncVectorEnv``)."""
        return self.get_attr("np_random")

    def get_attr(self, name: str) -> tuple:
        return tuple(getattr(env, name) for env in self.envs)

    def call(self, name: str, *args, **kwargs) -> tuple:
        """Call a method of every sub-environment; ``call("reset", ...)`` is booked as a reset of
        every world (:meth:`booked_resets`)."""
        out = tuple(getattr(env, name)(*args, **kwargs) for env in self.envs)
        if name == "reset":
            self.booked_resets(self._all, list(out))
        return out

    def set_attr(self, name: str, values) -> None:
        """Set ``name`` on every sub-environment, as Gymnasium's ``SyncVectorEnv`` does: one value
        per world (a list or tuple of ``num_envs``), or any other value for all of them. A value
        a world refuses raises with every world as it was."""
        if not isinstance(values, list | tuple):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError(f"set_attr({name!r}, values): {len(values)} values; expected one "
                             f"per world ({self.num_envs}) or a single value")
        set_each(self.envs, name, values)


_UNSET = object()


def set_each(objects, name: str, values) -> None:
    """``setattr(objects[i], name, values[i])`` for each, all or none: when one raises (a
    setting checks its value), the ones set before get their old values back (or lose the
    attribute they did not have) and the error is raised."""
    before = []
    try:
        for obj, value in zip(objects, values, strict=True):
            before.append(getattr(obj, name, _UNSET))
            setattr(obj, name, value)
    except Exception:
        for obj, old in zip(objects, before[:-1], strict=False):
            if old is _UNSET:
                delattr(obj, name)
            else:
                setattr(obj, name, old)
        raise


#: arguments of the vector env itself, not of its sub-environments
VECTOR_ONLY = ("num_threads", "autoreset_mode")


def time_limit(steps: int | None, registered: int | None) -> int | None:
    """``max_episode_steps`` read as ``gym.make`` reads it: None is the registered limit, -1
    none."""
    if steps is None:
        return registered
    if steps == -1:
        return None
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"max_episode_steps = {steps!r}; allowed: an integer >= 1, -1 (no "
                         "limit) or None (the registered limit)")
    return steps


def give_specs(venv: TractionVectorEnv, env_id: str, kwargs: dict, steps: int | None) -> None:
    """Give every sub-environment the spec ``gym.make(env_id, **kwargs)`` would give it: the
    registered one with these arguments (less the vector env's own: ``num_threads``,
    ``autoreset_mode``) and time limit (sub-environments built from their class have none)."""
    spec = copy.deepcopy(gym.spec(env_id))
    spec.kwargs = {**spec.kwargs, **{k: v for k, v in kwargs.items() if k not in VECTOR_ONLY}}
    spec.max_episode_steps = steps
    for env in venv.envs:
        env.unwrapped.spec = spec


def make_vector(env_id: str, num_envs: int = 1, **kwargs) -> TractionVectorEnv:
    """The native vector env of ``num_envs`` worlds of the registered Traction task ``env_id``,
    as ``gym.make_vec(env_id, num_envs, vectorization_mode="vector_entry_point", **kwargs)``
    builds it (each task's ``vector_env`` is its registered ``vector_entry_point``, a
    ``"module:function"`` string, so specs pickle and serialise). ``kwargs`` go over the
    registered ones; ``max_episode_steps`` reads as in ``gym.make`` (None: the registered limit,
    -1: none); each sub-environment gets the spec ``gym.make`` would give it."""
    spec = gym.spec(env_id)
    kwargs = {**spec.kwargs, **kwargs}
    steps = time_limit(kwargs.pop("max_episode_steps", None), spec.max_episode_steps)
    venv = TractionVectorEnv(spec.entry_point, num_envs, max_episode_steps=steps, **kwargs)
    give_specs(venv, env_id, kwargs, steps)
    return venv


__all__ = ["TractionVectorEnv", "make_vector"]
