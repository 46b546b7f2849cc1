"""Saving and restoring a Traction environment: snapshots, copies and pickles.

:meth:`Snapshots.get_state` / :meth:`Snapshots.set_state` save and restore everything a step
reads, so a restored environment replays bit for bit. ``copy.deepcopy`` and ``pickle`` build on
them: an environment is rebuilt from its constructor's arguments (its MjModel and MjData, the
compiled loop's bound addresses and the renderer belong to one process and one object, so they
are made anew, never copied) and, once reset, the snapshot is restored into it. A copy then steps
exactly as the original would, and independently of it.
"""

from __future__ import annotations

import copy
import hashlib
import inspect

import gymnasium as gym
import mujoco
import numpy as np

from traction.vehicle_model import tire_custom

from .randomize import NOISE_BLOCK, checked_draw

#: types of the public attributes a copy takes over from its original (settings such as
#: ``target`` or ``hold_seconds`` that ``set_attr`` may have changed after construction), and
#: of the values of a dict setting (``weights``)
SETTINGS = (bool, int, float, str, tuple, type(None))


def is_setting(value) -> bool:
    """A plain value of :data:`SETTINGS`, or a dict of them keyed by strings."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and isinstance(v, SETTINGS) for k, v in value.items())
    return isinstance(value, SETTINGS)


def refuse_copies(instead: str):
    """``__copy__``/``__deepcopy__``/``__reduce_ex__`` of a class that holds raw addresses of
    one process's MuJoCo data (the compiled loop's bindings): a copy would step the original's
    memory, and after the original is freed, freed memory. Each raises a TypeError saying what to
    copy ``instead``."""

    def refuse(self, *args):
        raise TypeError(f"a {type(self).__name__} cannot be copied or pickled: it holds addresses "
                        f"of this process's MuJoCo data; {instead}")

    return refuse


class Snapshots:
    """Save/restore, copy and pickle support of :class:`~traction.envs.base.TractionEnv`."""

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        self._init_args = (args, kwargs)         # what a copy or an unpickled env is built from
        return self

    def __getstate__(self) -> dict:
        """What a pickle or a deep copy holds: the constructor's arguments (the vehicle as the
        parameters it was loaded to, not a file path read again), the public settings changed
        since, the spec ``gym.make`` gave, and after a reset a :meth:`get_state` snapshot."""
        positional, init, own, inherited = self._init_arguments()
        if "vehicle" in own or "vehicle" in init:
            init["vehicle"] = self.vehicle
        later = {}                                 # arguments a property can change since:
        for name in (*own, *inherited):            # given again, or set after the subclass's
            prop = getattr(type(self), name, None) # constructor (which passes what it likes)
            if isinstance(prop, property) and name in own:
                init[name] = getattr(self, name)
            elif isinstance(prop, property) and prop.fset and name not in self.fixed_names():
                later[name] = getattr(self, name)
        settings = {k: v for k, v in vars(self).items()
                    if not k.startswith("_") and is_setting(v)}
        return {"init": init, "args": positional, "properties": later, "settings": settings,
                "spec": self.spec, "seed": self._np_random_seed,
                "snapshot": self.get_state() if self._was_reset else None}

    def _init_arguments(self) -> tuple[tuple, dict, dict, set]:
        """The constructor's arguments as ``(*args, **kwargs)`` to call it with again (by name,
        a subclass's ``**kwargs`` flattened, unless it takes ``*args``), its parameters, and the
        names of its bases' arguments that it does not name itself (a task built on a shipped
        one)."""
        args, kwargs = self._init_args
        signature = inspect.signature(type(self).__init__)
        params, bound = signature.parameters, signature.bind(self, *args, **kwargs)
        if any(p.kind is p.VAR_POSITIONAL for p in params.values()):
            positional, init = bound.args[1:], dict(bound.kwargs)
        else:
            positional, init = (), {}
            for name, value in bound.arguments.items():
                if params[name].kind is inspect.Parameter.VAR_KEYWORD:
                    init.update(value)
                elif name != "self":
                    init[name] = value
        inherited = {n for base in type(self).__mro__[1:] if "__init__" in vars(base)
                     for n in inspect.signature(vars(base)["__init__"]).parameters}
        return positional, init, params, inherited - set(params)

    def __setstate__(self, saved: dict) -> None:
        positional = saved.get("args", ())         # (a state pickled before held none)
        self._init_args = (positional, saved["init"])
        self.__init__(*positional, **saved["init"])
        for key, value in saved.get("properties", {}).items():
            setattr(self, key, value)
        fixed = self.fixed_names()
        for key, value in saved["settings"].items():
            if key not in fixed:        # (a state pickled before they were fixed holds them)
                now = getattr(self, key, None)
                if isinstance(now, dict) and isinstance(value, dict):   # a term added since
                    value = {**now, **value}                            # keeps its default
                setattr(self, key, value)
        self.spec = saved["spec"]
        if saved["snapshot"] is not None:
            self.reset()                                 # an episode to restore into
            self.set_state(saved["snapshot"])
            self._np_random_seed = saved["seed"]

    def __deepcopy__(self, memo: dict):
        new = object.__new__(type(self))
        new.__setstate__(copy.deepcopy(self.__getstate__(), memo))
        return new

    def get_state(self) -> dict:
        """Everything needed to continue bit for bit: MuJoCo's integration state (incl. warm
        start), the vehicle state, commands and outputs, the chassis row and divergence flag the
        next step's action map and checks read, the RNG, the terrain, the friction table's
        values, the task's own state, the last observation (a diverged step repeats it) and the
        randomised vehicle's drawn values (``randomization``) with the actions waiting
        (``latency``).
        (The TimeLimit wrapper's step count lives outside the unwrapped env.)"""
        if not self._was_reset:
            raise gym.error.ResetNeeded("get_state before the first reset(): no episode to save")
        spec = mujoco.mjtState.mjSTATE_INTEGRATION
        mj = np.empty(mujoco.mj_stateSize(self.model, spec))
        mujoco.mj_getState(self.model, self.data, mj, spec)
        sim = self.sim
        snapshot = copy.deepcopy({
            "mujoco": mj, "state": sim.state, "commands": sim.commands,
            "wheel_angle": sim.wheel_angle, "outputs": sim.outputs, "now": sim.now,
            "diverged": sim.diverged(), "warnings": self.data.warning.number,
            "steps": self._steps, "rng": self.np_random.bit_generator.state,
            "task": {k: getattr(self, k) for k in self.task_state}, "env": self._fingerprint(),
            "friction": _table_of(sim.friction_table), "last_obs": self._last_obs,
            "randomization": self.randomization, "action_queue": self._queue,
            "noise": self._noise,
            "domain_rng": self._domain_rng.bit_generator.state})
        snapshot["terrain"] = self.scene.save_terrain()            # (a copy already)
        return snapshot

    def set_state(self, state: dict) -> None:
        """Restore a :meth:`get_state` snapshot (of this environment): the next steps replay
        bit for bit, and MjData's derived quantities (poses for rendering and
        :meth:`read_chassis`) are recomputed for the restored state."""
        self._check_snapshot(state)                          # before anything is written
        terrain = state["terrain"]                          # restore_terrain copies it
        state = copy.deepcopy({k: v for k, v in state.items() if k != "terrain"})
        drawn = state.get("randomization", {})
        if drawn or self.randomization:       # the snapshot's vehicle (MjData is set below)
            self.use_randomization(drawn)
        spec = mujoco.mjtState.mjSTATE_INTEGRATION
        mujoco.mj_setState(self.model, self.data, state["mujoco"], spec)
        sim = self.sim                                   # write into the bound arrays
        for name in ("state", "commands", "outputs"):
            for buf, value in vars(state[name]).items():
                getattr(getattr(sim, name), buf)[...] = value
        sim.wheel_angle[...] = state["wheel_angle"]
        sim.friction_table.values[...] = state["friction"][2]     # in place: the loop reads it
        self.np_random.bit_generator.state = state["rng"]
        self.scene.restore_terrain(terrain)
        self._refresh_viewer_terrain()
        for key, value in state["task"].items():
            setattr(self, key, value)
        self._steps, self._last_obs = state["steps"], state["last_obs"]
        self._queue, self._noise = state.get("action_queue"), state.get("noise", {})
        if state.get("domain_rng") is not None:
            if self._domain_rng is None:              # (an env not reset yet)
                self._domain_rng = np.random.default_rng()
            self._domain_rng.bit_generator.state = state["domain_rng"]
        sim.restore(state["now"], state["diverged"], state["warnings"])
        if not self.sensors.state_only:     # the readings a diverged step repeats: of this state
            self.sensors.last = None
            self.sensed(self.sim.diverged())
        if sim.telemetry is not None:            # (its samples stay in time order)
            sim.telemetry.clear()

    def _check_snapshot(self, state) -> None:
        """ValueError naming the first part of ``state`` that is not of a :meth:`get_state`
        snapshot of this environment (another task, terrain kind, vehicle or vehicle
        parameters, or other time steps)."""
        keys = {"mujoco", "state", "commands", "wheel_angle", "outputs", "now", "diverged",
                "warnings", "steps", "rng", "task", "terrain", "env", "friction", "last_obs"}
        if not isinstance(state, dict) or not keys <= state.keys():
            missing = sorted(keys - state.keys()) if isinstance(state, dict) else "a dict"
            raise ValueError(f"set_state: not a get_state snapshot (missing {missing})")
        size = mujoco.mj_stateSize(self.model, mujoco.mjtState.mjSTATE_INTEGRATION)
        parts = [("mujoco", np.shape(state["mujoco"]), (size,)),
                 ("wheel_angle", np.shape(state["wheel_angle"]), self.sim.wheel_angle.shape),
                 ("last_obs", np.shape(state["last_obs"]), self.state_space.shape)]
        for name in ("state", "commands", "outputs"):
            theirs = vars(state[name]) if hasattr(state[name], "__dict__") else {}
            parts += [(f"{name}.{buf}", np.shape(theirs.get(buf)), np.shape(mine))
                      for buf, mine in vars(getattr(self.sim, name)).items()]
        for what, got, expected in parts:
            if got != expected and got[:-1] == expected and "." in what:
                raise ValueError(f"set_state: {what} has shape {got}, float columns: a snapshot "
                                 "of a traction version before the vehicle arrays became "
                                 f"records (shape {expected}); it cannot be restored here, take "
                                 "it again with this version")
            if got != expected:
                raise ValueError(f"set_state: {what} has shape {got}; this environment's has "
                                 f"{expected} (a snapshot of another environment?)")
        if set(state["task"]) != set(self.task_state):
            raise ValueError(f"set_state: task state {sorted(state['task'])}; this "
                             f"environment's is {sorted(self.task_state)}")
        self.scene.check_saved_terrain(state["terrain"])
        try:
            drawn = checked_draw(state.get("randomization", {}),
                                 len(self.sim.friction_table.values))
        except ValueError as e:
            raise ValueError(f"set_state: {e}") from None
        _check_agent_state(state, drawn, self.action_space.shape, self.state_space.shape)
        mine, theirs = _table_of(self.sim.friction_table), state["friction"]
        if not (isinstance(theirs, tuple) and len(theirs) == 3 and theirs[:2] == mine[:2]
                and np.shape(theirs[2]) == mine[2].shape):
            raise ValueError("set_state: the snapshot's friction table has other surfaces or "
                             f"tyre types; this environment's: {mine[0]} x {mine[1]}")
        if state["env"] != self._fingerprint():
            raise ValueError("set_state: a snapshot of an environment with other vehicle "
                             "parameters or time steps (it would not replay here)")

    def _fingerprint(self) -> str:
        """What a snapshot's environment must share with this one: the task, control and physics
        steps and every parameter of the vehicle's compiled update; a custom tyre by the name
        it is registered under (a process's registry order may differ), else by its index in
        this process (an unregistered function, e.g. a closure, fits this process only)."""
        if self._env_key is None:
            h = hashlib.sha256(f"{type(self).__qualname__} {self.control_dt!r} "
                               f"{self.physics_dt!r}".encode())
            packed = self.vehicle.packed
            wheel = packed.wheel.copy()
            name = tire_custom.name_of(self.vehicle.custom_tire)
            if name is not None:               # a registered tyre by its name, not the index
                wheel["custom_index"] = 0   # in this process's registry (others may differ)
                h.update(f"custom tyre {name!r}".encode())
            for a in (wheel, *packed[1:]):
                if a.dtype.names:          # a record: each field by its name, in name order, so
                    for field in sorted(a.dtype.names):    # the key does not follow the layout
                        h.update(field.encode() + np.ascontiguousarray(a[field]).tobytes())
                else:
                    h.update(np.ascontiguousarray(a).tobytes())
            self._env_key = h.hexdigest()
        return self._env_key


def _check_agent_state(state: dict, drawn: dict, action_shape: tuple, obs_shape: tuple) -> None:
    """ValueError naming the part of a snapshot's randomisation state (``randomize``'s stream,
    noise blocks and latency queue) that no :meth:`Snapshots.get_state` could have saved."""
    rng = state.get("domain_rng")
    if rng is not None:
        try:
            np.random.default_rng().bit_generator.state = rng
        except (TypeError, ValueError, KeyError) as e:
            raise ValueError(f"set_state: domain_rng is not a generator state ({e})") from None
    noise = state.get("noise", {})
    shapes = {"action": action_shape, "observation": obs_shape}
    if not isinstance(noise, dict) or set(noise) - set(shapes) or not all(
            isinstance(b, list) and len(b) == 2 and isinstance(b[1], int)
            and np.shape(b[0]) == (NOISE_BLOCK, *shapes[k]) and 0 <= b[1] <= NOISE_BLOCK
            for k, b in noise.items()):
        raise ValueError("set_state: noise is not the noise blocks of this environment")
    queue, latency = state.get("action_queue"), int(drawn.get("latency", 0))
    if queue is not None and not (
            isinstance(queue, list) and len(queue) == latency
            and all(np.shape(a) == action_shape and np.all(np.isfinite(a)) for a in queue)):
        raise ValueError(f"set_state: action_queue is not {latency} finite actions of shape "
                         f"{action_shape} (the snapshot's latency)")


def _table_of(table) -> tuple:
    """A friction table as a snapshot holds it: ``(surfaces, tyre types, values copy)``."""
    return tuple(table.surfaces), tuple(table.tires), table.values.copy()
