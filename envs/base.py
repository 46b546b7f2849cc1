"""The base environment: simulator plumbing shared by every Traction task.

The base owns the scene, the :class:`VehicleSim`, the control/physics step split, action
checking, reset seeding, divergence handling, info diagnostics and rendering. A task subclass
owns the task interface (the methods under "task interface", Gymnasium-like: :meth:`reset_task`,
:meth:`start_task`, :meth:`apply_action`, :meth:`observation`, :meth:`reward_terms`,
:meth:`termination`, :meth:`check_option`): the action mapping, the observation, the reward
terms, termination and success; optionally what frames and evaluation videos show
(:meth:`markers`, :meth:`readout`). ``step`` returns every reward term as ``info["reward_<term>"]``
(costs negative) and the reward is exactly their sum. What the task's methods return, and
which attributes they set (each must be in ``task_state``, or ``task_cache``), is checked at
every reset and each episode's first step (``task_checks.py``: errors naming the method).

After the physics substeps the chassis is read once (:class:`~.reading.ChassisReading`, from the
row the compiled loop wrote) and that reading is passed to the observation, the reward terms,
termination and diagnostics, so they agree and none of them goes back to MjData. The native
vector env runs the same code per world: :meth:`TractionEnv.step_physics` is the single env's
physics (the vector env's is one call for all worlds), :meth:`TractionEnv.step_outcome` the task's
part of a step, :meth:`TractionEnv.step_info` its info.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import inspect
import logging
import math
import operator
import os
import sys
from typing import NamedTuple

import gymnasium as gym
import mujoco
import numpy as np

from traction.scenes import Scene, build_scene, names
from traction.scenes.build import OFFSCREEN
from traction.vehicle_model import TIRE_MODELS, VehicleParams, vehicle_params
from traction.vehicle_model import pack as vm_pack
from traction.vehicle_model.params import check_number

from . import actions, sensors, task_checks
from . import randomize as domain
from .reading import ChassisReading, diagnostics
from .snapshot import Snapshots
from .vehicle_sim import VehicleSim

logger = logging.getLogger(__name__)

_FLOAT32 = np.dtype(np.float32)

#: The shipped tasks' observation bound (every channel is physically far inside: m, m/s, rad/s,
#: slips); observations are clipped to the space so it holds even in a diverging simulation.
OBS_LIMIT = 1000.0


# --- constructor arguments: checked when given, settable between steps (a property checking
# each value), or fixed when the environment is built (a property whose setter raises, saying how
# to get another value) ---------------------------------------------------------------------------
def positive(name: str, value, unit: str = "") -> float:
    """A constructor argument that must be a finite number > 0 (ValueError naming it)."""
    return check_number(name, value, 0.0, lo_open=True, unit=unit)


def positive_setting(name: str, unit: str = "") -> property:
    """A constructor argument the task reads at every step (as ``_<name>``), so settable between
    steps (``set_attr``): checked as :func:`positive` when set."""
    def put(self, value) -> None:
        self.__dict__["_" + name] = positive(name, value, unit)

    return property(operator.attrgetter("_" + name), put,
                    doc=f"{name} ({unit or '-'}, > 0): settable between steps")


def finite_weights(weights: dict) -> dict:
    """Reward weights keyed by term, checked finite (ValueError naming the term)."""
    return {k: check_number(f"weight of reward term {k!r}", v) for k, v in weights.items()}


def weight_property(argument: str, term: str) -> property:
    """``weights[term]`` as an attribute named after its constructor ``argument`` (checked)."""
    def get(self) -> float:
        return self.weights[term]

    def put(self, value: float) -> None:
        self.weights[term] = check_number(argument, value)

    return property(get, put, doc=f"weight of reward term {term!r} (settable: set_attr)")


#: the randomisation's random stream: ``(seed, DOMAIN_STREAM)`` (apart from ``np_random``'s)
DOMAIN_STREAM = 0x5EED

#: the fidelity ladder (``tire_model=``): the tyre models a task's vehicle can be given on every
#: wheel, from the cheapest law to the richest (a custom tyre is a vehicle's own, not a rung)
TIRE_LADDER = ("arcade", "physx", "curve", "magic_formula")


def with_tire_model(p: VehicleParams, model: str) -> VehicleParams:
    """The vehicle ``p`` with tyre model ``model`` (one of :data:`TIRE_LADDER`) on every wheel,
    each model's own parameters as ``p`` gives them (its file's, else their defaults); its
    treads, friction table columns and everything else unchanged."""
    if model not in TIRE_LADDER:
        raise ValueError(f"tire_model = {model!r}; allowed: {', '.join(TIRE_LADDER)} (or None: "
                         "the vehicle's own)")
    code = float(TIRE_MODELS.index(model))
    return dataclasses.replace(p, tires=dataclasses.replace(p.tires,
                                                            model=np.full(p.n_wheels, code)))


#: constructor arguments of rendering (the renderer is made at the first frame)
RENDER_ARGUMENTS = ("render_mode", "width", "height")


def fixed_property(name: str, get=None) -> property:
    """A constructor argument that shaped the environment when it was built (its scene, vehicle,
    spaces or time steps): set once by the constructor, held as ``_<name>`` (what the task's
    per-step code reads: a property read costs 3-5 times an attribute's) unless ``get`` reads
    it; setting it again raises AttributeError saying how to get another value (a ``set_attr``
    of it did nothing)."""
    private = "_" + name

    def put(self, value) -> None:
        if get is not None or private in self.__dict__:
            raise AttributeError(fixed_message(self, name))
        self.__dict__[private] = value

    return property(get or operator.attrgetter(private), put,
                    doc=f"constructor argument {name!r}, fixed when the environment is built")


#: fixed values derived from constructor arguments: name -> how
DERIVED = {"n_substeps": "control_dt / physics_dt"}


def fixed_message(env, name: str) -> str:
    """Why ``name`` cannot be set on ``env``, and what can."""
    cls = type(env)
    arguments = inspect.signature(cls.__init__).parameters
    settable = sorted(k for k in dir(cls) if k not in dir(gym.Env) and k not in cls.fixed_names()
                      and isinstance(getattr(cls, k), property) and getattr(cls, k).fset)
    settable += [k for k in arguments if k in vars(env) and k not in RENDER_ARGUMENTS]
    env_id = env.spec.id if env.spec is not None else cls.__name__
    given = f"{name}=..." if name not in DERIVED else f"other arguments ({DERIVED[name]})"
    return (f"{name} is fixed when the environment is built (it shaped the scene, the vehicle, "
            f"the spaces or the time steps); build another: gym.make({env_id!r}, {given}). "
            f"Settable between steps: {', '.join(settable)}")


#: The task interface's methods under the private names they had before it became public: a
#: subclass defining one is refused (it would never be called), naming the public method.
RENAMED = {"_reset_task": "reset_task", "_start_task": "start_task",
           "_apply_action": "apply_action", "_observation": "observation",
           "_reward_terms": "reward_terms", "_termination": "termination",
           "_check_option": "check_option", "_markers": "markers"}


class StepOutcome(NamedTuple):
    """The task's part of one control step (:meth:`TractionEnv.step_outcome`).

    Attributes:
        reading: the chassis reading the task's methods saw.
        observation: the observation, not yet clipped to the space.
        values: the reward terms' values, in ``reward_names`` order (the reward is their sum).
        terminated, success: the task's termination and success.
        diverged: the simulation diverged in this step (then: the episode's last observation
            again, every term 0, not terminated: the episode is truncated).
    """

    reading: ChassisReading
    observation: np.ndarray
    values: list
    terminated: bool
    success: bool
    diverged: bool


def display_available() -> bool:
    """Whether a window can open: on Linux, DISPLAY or WAYLAND_DISPLAY is set."""
    return not sys.platform.startswith("linux") or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


class TractionEnv(Snapshots, gym.Env):
    """Base class of every task; see the task environments for the documented interfaces, and
    docs/architecture.md ("Writing your own task") for what a subclass declares and fills in."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for old, new in RENAMED.items():
            if old in cls.__dict__:
                raise TypeError(f"{cls.__name__} defines {old}, which nothing calls: the task "
                                f"interface is public, define {new} instead (same arguments; "
                                "docs/architecture.md, \"Writing your own task\")")
        for argument, term in cls.__dict__.get("weight_arguments", {}).items():
            setattr(cls, argument, weight_property(argument, term))
        for argument in cls.__dict__.get("fixed_arguments", ()):
            setattr(cls, argument, fixed_property(argument))

    metadata = {"render_modes": ["rgb_array", "human"], "render_fps": 25}
    #: action channel names, in order (task)
    action_names: tuple[str, ...] = ()
    #: reward term names, in order (task)
    reward_names: tuple[str, ...] = ()
    #: constructor argument -> the reward term it weighs (task); each becomes a property of
    #: ``weights[term]``, so ``set_attr("energy_weight", w)`` changes the reward from the next step
    weight_arguments: dict[str, str] = {}
    #: constructor arguments that shape the built environment (task; besides ``vehicle``,
    #: ``control_dt`` and ``physics_dt``): each becomes a property set once, so that a
    #: ``set_attr`` of one raises instead of making an attribute nothing reads
    fixed_arguments: tuple[str, ...] = ()
    control_dt = fixed_property("control_dt")
    physics_dt = fixed_property("physics_dt")
    telemetry = fixed_property("telemetry")        # capacity; the recording: sim.telemetry
    n_substeps = fixed_property("n_substeps")      # physics substeps per step (derived)
    vehicle = fixed_property("vehicle", lambda self: self._nominal_vehicle)   # (as built)
    randomize = fixed_property("randomize", lambda self: dict(self._randomize))   # (a copy)
    tire_model = fixed_property("tire_model")      # every wheel's tyre model, or None
    obs_mode = fixed_property("obs_mode")          # what the agent observes (envs/sensors.py)
    obs_options = fixed_property("obs_options", lambda self: dict(self._obs_options))
    #: reset options the task reads, besides ``terrain_seed``: name -> ``(lo, hi, unit)`` of a
    #: number, or None for another kind, which the task's :meth:`check_option` reads (task)
    reset_options: dict[str, tuple | None] = {}
    #: task attributes that change during an episode (saved by get_state) (task); every reset
    #: and each episode's first step check that the task's methods set no other attribute
    #: (TypeError naming it: ``envs/task_checks.py``)
    task_state: tuple[str, ...] = ()
    #: task attributes its methods set that only cache values computed from the step's reading
    #: (recomputed for a new reading, so not saved) (task)
    task_cache: tuple[str, ...] = ()
    #: the task's compiled action map (``envs/actions.py``), run by the physics loop's call;
    #: ``actions.NONE``: the task maps actions in Python (:meth:`apply_action`) (task)
    action_map: int = actions.NONE
    #: the observation space's bounds observations are clipped to (:meth:`observation_bounds`),
    #: read at each reset
    clip_bounds: tuple = (-OBS_LIMIT, OBS_LIMIT)

    @classmethod
    def fixed_names(cls) -> tuple[str, ...]:
        """The attributes fixed when the environment is built (setting one raises)."""
        return ("vehicle", "control_dt", "physics_dt", "n_substeps", "telemetry", "randomize",
                "tire_model", "obs_mode", "obs_options", *cls.fixed_arguments)

    def __init__(self, vehicle: VehicleParams | str, terrain: str, terrain_kwargs: dict,
                 control_dt: float, physics_dt: float, render_mode: str | None,
                 width: int, height: int, telemetry: int = 0,
                 camera_name: str = names.CAMERA_CHASE, randomize=None,
                 tire_model: str | None = None, obs_mode: str = "state",
                 obs_options: dict | None = None):
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode = {render_mode!r}; allowed: None, "
                             f"{', '.join(self.metadata['render_modes'])}")
        if render_mode == "human" and not display_available():
            raise RuntimeError("render_mode = 'human' needs a display (DISPLAY and "
                               "WAYLAND_DISPLAY are unset); headless: render_mode = 'rgb_array'")
        positive("control_dt", control_dt, "s")
        check_number("physics_dt", physics_dt, 1e-4, 0.01, unit="s (MuJoCo's step; above 0.01 s "
                     "springs and tyres lose stability)")
        width = check_number("width", width, 1, OFFSCREEN[0], integer=True, unit="px")
        height = check_number("height", height, 1, OFFSCREEN[1], integer=True, unit="px")
        self.telemetry = check_number("telemetry", telemetry, 0, integer=True, unit="physics "
                                      "substeps recorded (0: none)")
        n_sub = control_dt / physics_dt
        if abs(n_sub - round(n_sub)) > 1e-6 or round(n_sub) < 1:
            raise ValueError(f"control_dt = {control_dt} must be a positive multiple of "
                             f"physics_dt = {physics_dt}")
        self.control_dt, self.physics_dt = control_dt, physics_dt
        self.n_substeps = int(round(n_sub))
        self.tire_model = tire_model
        options = sensors.check_options(obs_mode, obs_options)
        self.obs_mode, self._obs_options = obs_mode, options
        if tire_model is not None:
            vehicle = with_tire_model(vehicle_params(vehicle), tire_model)
        self.scene: Scene = build_scene(vehicle, terrain, physics_dt=physics_dt, **terrain_kwargs)
        self.sim = VehicleSim(self.scene, n_actions=len(self.action_names),
                              telemetry=self.telemetry)
        self.sensors = sensors.Sensors(self.scene, obs_mode, options)
        if "state_space" in self.__dict__:         # (a task that set its space before this)
            self.observation_space = self.state_space
        actions.validate(self.action_map, len(self.action_names), self.sim.params.n_wheels)
        ranges = domain.spec(randomize)
        domain.check_bounds(ranges, self.sim.params, self.sim.dt, self.sim.gravity)
        self._randomize = ranges                   # (read through ``randomize``: a copy)
        self._nominal_vehicle = self.sim.params
        self._nominal_friction = self.sim.friction_table.values.copy()
        self._friction_drawn: np.ndarray | None = None    # the table as the last draw left it
        #: the values drawn at the last reset (``envs/randomize.py``; empty without ranges)
        self.randomization: dict = {}
        self._action_noise = self._observation_noise = 0.0
        self._latency = 0
        self._queue: list | None = None            # the actions waiting (latency), oldest first
        self._noise: dict[str, list] = {}          # kind -> [block of noise rows, next row]
        # the draws' and the noise's own stream, seeded with the env (so a seed gives the same
        # terrains and task starts with and without randomisation)
        self._domain_rng: np.random.Generator | None = None
        self.render_mode, self.width, self.height = render_mode, width, height
        self._renderer = None
        self._viewer = None
        self._render_quality = "auto"
        self.camera_name = camera_name
        self._warned_divergence = False
        self._env_key: str | None = None           # (see _fingerprint)
        self._was_reset = False                  # (get_state needs an episode)
        self._steps = 0                          # control steps since the reset
        self._last_obs: np.ndarray | None = None  # a diverged step returns it (step_outcome)
        self._check_step = False                 # the episode's first step checks the task
        self.metadata = {**self.metadata, "render_fps": max(1, round(1.0 / control_dt)),
                         "render_modes": self.available_render_modes()}
        self.action_space = gym.spaces.Box(-1.0, 1.0, (len(self.action_names),), np.float32)
        self._action_shape = self.action_space.shape
        self._reward_keys = tuple(f"reward_{k}" for k in self.reward_names)

    @property
    def observation_space(self) -> gym.spaces.Space:
        """What :meth:`step` returns: the task's state space (:attr:`state_space`) with
        ``obs_mode``'s sensors (``envs/sensors.py``). A task assigns its state space here."""
        return self._observation_space

    @observation_space.setter
    def observation_space(self, space: gym.spaces.Box) -> None:
        self.state_space = space
        s = getattr(self, "sensors", None)
        self._observation_space = space if s is None else s.space(space)

    @classmethod
    def available_render_modes(cls) -> list[str]:
        """The class's render modes this process can use: ``human`` only with a display. An
        environment's ``metadata["render_modes"]`` lists these, so Gymnasium's ``check_env``
        (which makes the environment in every mode its metadata lists) passes headless; the
        class's lists every mode, for ``gym.make`` to accept a window where there is one."""
        modes = list(cls.metadata["render_modes"])
        return modes if display_available() else [m for m in modes if m != "human"]

    # --- plumbing --------------------------------------------------------------------------
    @property
    def dt(self) -> float:
        """Seconds of simulated time per :meth:`step` (``control_dt``), as Gymnasium's MuJoCo
        environments have it (``env.unwrapped.dt``, ``env.get_wrapper_attr("dt")``)."""
        return self._control_dt

    @property
    def model(self) -> mujoco.MjModel:
        return self.sim.model

    @property
    def data(self) -> mujoco.MjData:
        return self.sim.data

    def read_action(self, action) -> np.ndarray:
        """The action as a float64 array of the action space's shape; ValueError if it cannot
        be read as real numbers (strings, objects, complex) or has the wrong shape."""
        try:
            a = np.asarray(action)
        except (TypeError, ValueError):
            a = None
        if a is None or a.dtype.kind not in "biuf":
            raise ValueError(f"action {action!r} cannot be read as real numbers; expected "
                             f"{self._expected_action()}") from None
        a = a.astype(np.float64, copy=False)
        if a.shape != self.action_space.shape:
            raise ValueError(f"action shape {a.shape}; expected {self._expected_action()}")
        return a

    def _expected_action(self) -> str:
        return f"{self.action_space.shape} ({', '.join(self.action_names)})"

    def check_action(self, action) -> list[float]:
        """The action as a list of floats clipped to [-1, 1] (for tasks that map in Python);
        ValueError naming the channel if it has the wrong shape or a value is not finite."""
        out = []
        for i, x in enumerate(self.read_action(action).tolist()):
            if not math.isfinite(x):
                raise actions.not_finite(self.action_names, i, x)
            out.append(-1.0 if x < -1.0 else 1.0 if x > 1.0 else x)
        return out

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        options = self._read_options(options)           # all checked before anything changes
        self.sim.check_friction("reset")
        super().reset(seed=seed)
        terrain_seed = options.pop("terrain_seed", int(self.np_random.integers(2**31 - 1)))
        if seed is not None or self._domain_rng is None:
            self._domain_rng = np.random.default_rng([self._seed_material(), DOMAIN_STREAM])
        if self._randomize:                # (a draw of checked ranges: valid, not checked again)
            self._use_draw(domain.draw(self._randomize, self._domain_rng,
                                       len(self._nominal_friction)))
        elif self.randomization:           # a draw set_state restored: the nominal vehicle again
            self._use_draw({})
        self.scene.regenerate(terrain_seed)
        self._refresh_viewer_terrain()
        before = task_checks.attributes(self)
        self.reset_task(options)
        task_checks.unsaved(self, before, "reset_task")
        self._queue, self._noise = None, {}
        self._steps, self._was_reset = 0, True
        self.sim.step(1)
        diverged = self.sim.diverged()
        c = ChassisReading(self.sim.now)
        before = task_checks.attributes(self)
        self.start_task(c)                              # baselines from the state obs shows
        task_checks.unsaved(self, before, "start_task")
        task_checks.missing_state(self)
        self._check_step = True
        if diverged:
            self._last_obs = np.zeros(self.state_space.shape, self.state_space.dtype)
        else:
            before = task_checks.attributes(self)
            obs = self.observation(c)
            task_checks.unsaved(self, before, "observation")
            task_checks.check_observation(self, obs)
            self._last_obs = obs
        self.clip_bounds = self.observation_bounds()
        obs = np.clip(self._observe(self._last_obs), *self.clip_bounds)   # (a new array)
        if not self.sensors.state_only:
            self.sensors.last = None                    # (a diverged reset: zeros, not the last)
            obs = self.sensors.compose(obs, self.sensed(diverged))
        info = {**self._diagnostics(c), **dict.fromkeys(self._reward_keys, 0.0),
                "is_success": False, "diverged": diverged}
        if self._randomize:
            info["randomization"] = copy.deepcopy(self.randomization)
        if self.render_mode == "human":                 # the window shows the new episode
            self.render()
        return obs, info

    def use_randomization(self, values: dict) -> None:
        """Drive the nominal vehicle and friction table with drawn ``values`` applied
        (``envs/randomize.py``; ``{}``: the nominal ones) until the next draw; :meth:`reset`
        draws them (with ``randomize`` ranges), ``set_state`` restores a snapshot's. Leaves
        MjData to be reset (the task's reset does)."""
        self._use_draw(domain.checked_draw(values, len(self._nominal_friction)))

    def _use_draw(self, values: dict) -> None:
        """:meth:`use_randomization` of checked ``values``."""
        drawn = domain.vehicle(self._nominal_vehicle, values)
        wheel, vehicle = vm_pack.records(drawn)            # (valid: randomize.check_bounds)
        for a in (wheel, vehicle):
            a.setflags(write=False)
        packed = self._nominal_vehicle.packed._replace(wheel=wheel, vehicle=vehicle)
        drawn.__dict__["packed"] = packed      # (cached_property's slot: not validated again)
        self.sim.use_vehicle(drawn)
        table = self.sim.friction_table.values
        if self._friction_drawn is None or not np.array_equal(table, self._friction_drawn):
            self._nominal_friction = table.copy()   # a table set or edited since: the nominal
        if domain.FRICTION_KEYS & (values.keys() | self.randomization.keys()):
            table[...] = domain.friction(self._nominal_friction, values)
        self._friction_drawn = table.copy()
        self.randomization = values
        self._action_noise = float(values.get("action_noise", 0.0))
        self._observation_noise = float(values.get("observation_noise", 0.0))
        self._latency = int(values.get("latency", 0))

    def _seed_material(self) -> int:
        """The seed of the randomisation's stream: the env's seed, or, for a generator a user
        assigned to ``np_random`` (seed -1), a hash of its state (deterministic; it draws
        nothing from it, so its episodes are those without randomisation)."""
        if self.np_random_seed >= 0:
            return self.np_random_seed
        state = repr(self.np_random.bit_generator.state).encode()
        return int.from_bytes(hashlib.sha256(state).digest()[:8], "little")

    @property
    def perturbs_actions(self) -> bool:
        """Whether this episode's actions get noise or wait (``randomize``'s ``action_noise``,
        ``latency``): :meth:`perturb_action` then runs before the physics."""
        return self._action_noise > 0.0 or self._latency > 0

    def perturb_action(self, action: np.ndarray) -> np.ndarray:
        """The action that acts this step (a copy, float64): ``action`` with this episode's
        Gaussian noise added and, with latency, the one given that many steps ago (the episode's
        first action until then). Called once per step, before the physics; an action that is
        not finite is returned as it is (the step refuses it, nothing queued)."""
        if not self._latency:                # noise alone (a value not finite stays so)
            return action + self._noise_row("action", self._action_noise, action.shape)
        a = np.array(action, dtype=np.float64)
        if not np.all(np.isfinite(a)):
            return a
        if self._action_noise > 0.0:
            a += self._noise_row("action", self._action_noise, a.shape)
        if self._queue is None:
            self._queue = [a] * self._latency
        self._queue.append(a)
        return self._queue.pop(0)

    def _observe(self, obs: np.ndarray) -> np.ndarray:
        """``obs`` as the agent sees it: with this episode's Gaussian observation noise."""
        if self._observation_noise > 0.0:
            return obs + self._noise_row("observation", self._observation_noise, obs.shape)
        return obs

    def _noise_row(self, kind: str, scale: float, shape: tuple) -> np.ndarray:
        """The next row of Gaussian noise of ``kind`` (standard deviation ``scale``) from the
        randomisation's stream, drawn ``randomize.NOISE_BLOCK`` standard rows at a time (a
        draw per step and world cost as much as a light task's whole step; ``get_state`` saves
        the block as drawn); the blocks start anew at every reset."""
        block = self._noise.get(kind)
        if block is None or block[1] == domain.NOISE_BLOCK:
            rows = self._domain_rng.standard_normal((domain.NOISE_BLOCK, *shape))
            block = self._noise[kind] = [rows, 0]
        i = block[1]
        block[1] = i + 1
        return scale * block[0][i]

    def _read_options(self, options) -> dict:
        """A copy of the reset ``options``, every value checked (numbers converted): TypeError
        if not a dict, ValueError naming an unknown key (the task's keys are
        :attr:`reset_options`) or a value and its allowed range."""
        if options is None:
            return {}
        if not isinstance(options, dict):
            raise TypeError(f"reset options: a dict, got {type(options).__name__}")
        allowed = ("terrain_seed", *self.reset_options)
        out = {}
        for key, value in options.items():
            if key not in allowed:
                raise ValueError(f"reset option {key!r} is unknown; allowed: {', '.join(allowed)}")
            if key == "terrain_seed":
                out[key] = check_number("reset option terrain_seed", value, 0, integer=True)
            elif self.reset_options[key] is None:
                out[key] = self.check_option(key, value)
            else:
                lo, hi, unit = self.reset_options[key]
                out[key] = check_number(f"reset option {key}", value, lo, hi, unit=unit)
        return out

    def step(self, action):
        self.step_physics(action)
        o = self.step_outcome()
        lo, hi = self.clip_bounds
        obs = np.maximum(o.observation, lo)      # a new array: the env's own stays unaliased
        np.minimum(obs, hi, out=obs)
        if not self.sensors.state_only:
            obs = self.sensors.compose(obs, self.sensed(o.diverged))
        info = self.step_info(o)
        reward = float(sum(o.values))
        if self.render_mode == "human":
            self.render()
        return obs, reward, o.terminated, o.diverged, info

    def step_physics(self, action) -> None:
        """The physics of one control step: check and apply ``action``, run the substeps (the
        native vector env does this for all its worlds in one call)."""
        if self.perturbs_actions:                   # (float32 stays float32, as the vector
            dtype = np.float32 if getattr(action, "dtype", None) == _FLOAT32 else np.float64
            action = self.perturb_action(self.read_action(action)).astype(dtype)   # env's)
        if self.action_map == actions.NONE:
            checked = self.check_action(action)
            self.sim.check_friction()                   # (the compiled call's, before any change)
            self.sim.action[0] = checked                # the row holds the step's action
            self.apply_action(checked)
            self.sim.step(self._n_substeps)
            return
        if (type(action) is np.ndarray and action.dtype is _FLOAT32
                and action.shape == self._action_shape):            # the common case
            bad = self.sim.step_action(self._n_substeps, self.action_map, action)
        else:
            self.sim.action[0] = self.read_action(action)
            bad = self.sim.step_mapped(self._n_substeps, self.action_map)
        if bad >= 0:
            raise actions.not_finite(self.action_names, bad, float(self.sim.action[0, bad]))

    def observation_bounds(self) -> tuple:
        """The observation space's bounds, clipped to at every step (so the space holds even in
        a diverging simulation): scalars when uniform, as the shipped tasks' +-OBS_LIMIT, else
        arrays (a task's own space; read at each reset)."""
        lo, hi = self.state_space.low, self.state_space.high
        return (lo.flat[0] if np.all(lo == lo.flat[0]) else lo,
                hi.flat[0] if np.all(hi == hi.flat[0]) else hi)

    def step_outcome(self) -> StepOutcome:
        """The task's part of a step, after its physics (once per step; it counts the steps):
        the chassis reading, the task's reward terms, termination and observation (not yet
        clipped: the vector env clips all worlds' at once). A diverged simulation (MuJoCo's bad
        position, velocity or acceleration warning, or a non-finite state, flagged by the
        compiled loop) has no valid state to show: the episode's last observation again (a
        truncation's value bootstrap then reads a state the agent has seen), every term 0, not
        terminated (it is truncated), and a warning logged once."""
        self._steps += 1
        diverged = self.sim.diverged()
        c = ChassisReading(self.sim.now)
        if diverged:
            if not self._warned_divergence:          # (MuJoCo may have reset data.time)
                logger.warning("%s: simulation diverged in step %d of the episode (t = %.3f s); "
                               "truncating the episode", type(self).__name__, self._steps,
                               self._steps * self._control_dt)
                self._warned_divergence = True
            return StepOutcome(c, self._last_obs.copy(), [0.0] * len(self.reward_names), False,
                               False, True)
        if self._check_step:
            return self._checked_outcome(c)
        terms = self.reward_terms(c)
        flags = self.termination(c)
        obs = self._last_obs = self.observation(c)    # after the terms: this step's state
        if self._observation_noise > 0.0:
            obs = self._observe(obs)
        try:
            terminated, success = flags
            values = [float(terms[k]) for k in self.reward_names]
        except (TypeError, ValueError, KeyError, IndexError):
            values = None
        # (equal sizes, none missing: the same terms; a sum that is not finite: a term is not)
        if values is None or len(terms) != len(values) or not math.isfinite(sum(values)):
            self._outcome_error(terms, flags)
        return StepOutcome(c, obs, values, terminated, success, False)

    def _checked_outcome(self, c: ChassisReading) -> StepOutcome:
        """:meth:`step_outcome`'s task part at the episode's first step, every task method's
        result and the attributes it set checked (``envs/task_checks.py``)."""
        self._check_step = False
        results = []
        for method in (self.reward_terms, self.termination, self.observation):
            before = task_checks.attributes(self)
            results.append(method(c))
            task_checks.unsaved(self, before, method.__name__)
        terms, flags, obs = results
        self._last_obs = obs
        self._outcome_error(terms, flags, first_step=True)
        task_checks.check_observation(self, obs)
        return StepOutcome(c, self._observe(obs), [float(terms[k]) for k in self.reward_names],
                           *flags, False)

    def _outcome_error(self, terms, flags, first_step: bool = False) -> None:
        """TypeError or ValueError naming the task method whose result a step could not use
        (termination not two bools, reward terms not the finite numbers of ``reward_names``)."""
        if not isinstance(flags, tuple | list) or len(flags) != 2:
            raise task_checks.termination_error(self, flags)
        if first_step:
            task_checks.check_flags(self, flags)
        try:
            values = [float(terms[k]) for k in self.reward_names]
            if len(terms) == len(values) and all(map(math.isfinite, values)):
                return
        except (TypeError, ValueError, KeyError, IndexError):
            pass
        raise task_checks.reward_terms_error(self, terms)

    def step_info(self, o: StepOutcome) -> dict:
        """A step's info: the vehicle diagnostics, ``reward_<term>`` values, ``is_success``,
        ``diverged`` (the vector env's SB3 dicts are built here too)."""
        info = self._diagnostics(o.reading)
        info.update(zip(self._reward_keys, o.values, strict=True))
        info["is_success"], info["diverged"] = bool(o.success), o.diverged
        return info

    def _diagnostics(self, c: ChassisReading) -> dict:
        """The vehicle diagnostics of the info (:func:`~.reading.diagnostics`)."""
        return diagnostics(c, self.sim.outputs.wheel[0], self.sim.outputs.vehicle[0])

    # --- measurements (read MjData now; the step itself uses its one ChassisReading) -------
    def read_chassis(self) -> ChassisReading:
        """The chassis pose and velocities now, read from MjData."""
        return ChassisReading(self.sim.chassis_row())

    def body_rotation(self) -> np.ndarray:
        """World-from-chassis rotation (3, 3)."""
        return np.reshape(self.read_chassis().rot, (3, 3))

    def body_velocity(self) -> tuple[np.ndarray, np.ndarray]:
        """CoM linear (m/s) and angular (rad/s) velocity in the chassis frame."""
        c = self.read_chassis()
        return np.array(c.velocity_body), np.array(c.angular_body)

    def heading(self) -> float:
        """Yaw of the chassis x axis in the world xy plane (rad)."""
        return self.read_chassis().yaw

    def tilt(self) -> float:
        """Angle between the chassis up axis and world up (rad)."""
        return self.read_chassis().tilt

    # --- rendering ---------------------------------------------------------------------------
    @property
    def camera_name(self) -> str:
        """The camera ``render()`` shows: ``chase`` (behind the vehicle, following it), ``top``
        (high above it, looking down), ``driver`` (in the cabin) or ``overhead`` (above it, turning
        with it); settable between steps."""
        return self._camera_name

    @camera_name.setter
    def camera_name(self, name: str) -> None:
        cameras = [self.model.camera(i).name for i in range(self.model.ncam)]
        if name not in cameras:
            raise ValueError(f"camera_name = {name!r}; allowed: {', '.join(cameras)}")
        self._camera_name = str(name)
        if self._viewer is not None:
            self._aim_viewer()

    def _aim_viewer(self) -> None:
        """The human-mode window shows :attr:`camera_name` (the viewer's Esc frees it)."""
        with self._viewer.lock():                  # (the window's thread reads the camera)
            self._viewer.cam.type = mujoco.mjtCamera.mjCAMERA_FIXED
            self._viewer.cam.fixedcamid = self.model.camera(self._camera_name).id

    def _refresh_viewer_terrain(self) -> None:
        """The human-mode window's copy of the height fields and of the ground's colours, after
        they were rewritten (its ``sync`` updates poses, not height fields or textures)."""
        if self._viewer is not None:
            for hid in range(self.model.nhfield):
                self._viewer.update_hfield(hid)
            tid = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_TEXTURE,
                                    names.TERRAIN_TEXTURE)
            if tid >= 0:
                self._viewer.update_texture(tid)

    @property
    def render_quality(self) -> str:
        """``rgb_array`` frames' quality: ``auto`` (default: ``low`` on a software OpenGL,
        ``high`` on a GPU), ``high`` (shadow map, multisampling) or ``low`` (several times
        faster without a GPU); see :mod:`traction.scenes.render`. Settable between steps."""
        return self._render_quality

    @render_quality.setter
    def render_quality(self, quality: str) -> None:
        from traction.scenes.render import QUALITIES

        if quality not in QUALITIES:
            raise ValueError(f"render_quality = {quality!r}; allowed: {', '.join(QUALITIES)}")
        if quality != getattr(self, "_render_quality", "auto") and self._renderer is not None:
            self._renderer.close()                     # the next frame makes one of the quality
            self._renderer = None
        self._render_quality = str(quality)

    def render(self):
        """An ``rgb_array`` frame of :attr:`camera_name` ((height, width, 3) uint8) with the
        task's markers (its target: :meth:`markers`), or the ``human`` window updated (None);
        None with a warning when the environment was made without a render mode."""
        if self.render_mode == "rgb_array":
            from traction.scenes.render import SceneRenderer

            if self._renderer is None:
                self._renderer = SceneRenderer(self.model, self.width, self.height,
                                               quality=self.render_quality)
            self.sim.pose_for_render()
            return self._renderer.frame(self.data, camera=self._camera_name,
                                        markers=self._checked_markers())
        if self.render_mode == "human":
            import mujoco.viewer

            if self._viewer is None:
                self._viewer = mujoco.viewer.launch_passive(self.model, self.data)
                self._aim_viewer()
            self.sim.pose_for_render()
            self._viewer.sync()
            return None
        gym.logger.warn(f"{type(self).__name__}.render() without a render mode returns None; "
                        "make the environment with render_mode='rgb_array' (frames) or 'human' "
                        "(a window), e.g. gym.make(id, render_mode='rgb_array')")
        return None

    def sensed(self, diverged: bool = False) -> dict:
        """The ``obs_mode`` sensors' readings of the state now (``envs/sensors.py``), the
        task's markers drawn into camera images. The sensors see the bodies where ``qpos`` puts
        them (MjData's poses after a step are one substep older) and a camera the tyres posed
        (steer, spin, travel; ``VehicleSim.pose_for_render``: neither changes the rollout)."""
        if self.sensors.camera_on and not diverged:
            self.sim.pose_for_render()
        elif not diverged:
            self.sim.pose_bodies()
        return self.sensors.read(self.sim.data, diverged, self._checked_markers)

    def _checked_markers(self) -> list:
        """The task's :meth:`markers` (none before the first reset); TypeError naming the
        method unless a list of ``Marker`` shapes."""
        if not self._was_reset:
            return []
        from traction.scenes.render import Marker

        shapes = self.markers()
        if not isinstance(shapes, list | tuple) or not all(isinstance(m, Marker) for m in shapes):
            raise TypeError(f"{type(self).__name__}.markers returned {shapes!r}; expected a list "
                            "of traction.scenes.render.Marker shapes (or [])")
        return shapes

    def close(self):
        self.sensors.close()
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        if self._viewer is not None:
            self._viewer.close()
            self._viewer = None

    # --- task interface (a task overrides these) ---------------------------------------------
    def reset_task(self, options: dict) -> None:
        """Place the vehicle (``self.sim.reset(pos=..., quat=..., velocity=...)``) and draw the
        episode's targets from ``self.np_random``; ``options``: the reset options of
        :attr:`reset_options`, checked (task)."""
        raise NotImplementedError

    def start_task(self, reading: ChassisReading) -> None:
        """Take the task's baselines (distance to the goal, start pose) from the reset's reading,
        after its settling substep, so the first step's terms measure from what the reset's
        observation shows (task; nothing by default)."""

    def apply_action(self, action: list[float]) -> None:
        """Map a checked action (floats clipped to [-1, 1]) to vehicle commands (task, unless
        the task names a compiled :attr:`action_map`)."""
        raise NotImplementedError

    def observation(self, reading: ChassisReading) -> np.ndarray:
        """A fresh float64 observation array of the observation space's shape (task); called
        once per step, after :meth:`reward_terms` and :meth:`termination`, so running values
        they update are this step's."""
        raise NotImplementedError

    def reward_terms(self, reading: ChassisReading) -> dict[str, float]:
        """Weighted reward terms keyed by exactly the :attr:`reward_names` (costs negative)
        (task); called once per step, first."""
        raise NotImplementedError

    def termination(self, reading: ChassisReading) -> tuple[bool, bool]:
        """``(terminated, success)`` (task); called once per step, after the reward terms and
        before the observation."""
        raise NotImplementedError

    def check_option(self, name: str, value):
        """A reset option that is not a number (``reset_options[name]`` None), checked and
        converted; ValueError naming it (task)."""
        raise NotImplementedError(name)

    # --- display (optional overrides) --------------------------------------------------------
    def markers(self) -> list:
        """Shapes drawn into ``rgb_array`` frames, not part of the scene (the task's target:
        a heading, a goal, a line to follow), as :class:`traction.scenes.render.Marker`
        (task; none by default). Read the state now (:meth:`read_chassis`)."""
        return []

    def _above_roof(self, c: ChassisReading) -> float:
        """A height (m, world) 0.3 m above the vehicle's cabin at reading ``c``: markers there
        show from above and from behind."""
        ch = self.vehicle.chassis
        return c.origin[2] + float(ch.body_centre[2] + 1.1 * ch.body_size[2]) + 0.3

    def readout(self) -> dict[str, str]:
        """The task's key quantities now, each a short text with its unit (what an evaluation
        video's overlay shows beside time, reward and success); by default the speed."""
        return {"speed": f"{self.read_chassis().speed:.1f} m/s"}
