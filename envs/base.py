"""The base environment: simulator plumbing shared by every Traction task.

The base owns the scene, the :class:`VehicleSim`, the control/physics step split, action
checking, reset seeding, divergence handling, info diagnostics and rendering. A task subclass
owns (the methods marked *task*): the action mapping, the observation, the reward terms,
termination and success. ``step`` returns every reward term as ``info["reward_<term>"]`` (costs
negative) and the reward is exactly their sum.
"""

from __future__ import annotations

import copy
import logging
import math

import gymnasium as gym
import mujoco
import numpy as np

from traction.scenes import Scene, build_scene
from traction.vehicle_model import VehicleParams
from traction.vehicle_model.layout import K_ANGULAR, K_ROTATION, K_VELOCITY

from .vehicle_sim import VehicleSim

logger = logging.getLogger(__name__)

#: Observation bound (every channel is physically far inside: m, m/s, rad/s, slips); observations
#: are clipped to it so the space holds even in a diverging simulation.
OBS_LIMIT = 1000.0


class TractionEnv(gym.Env):
    """Base class; see the task environments for the documented interfaces."""

    metadata = {"render_modes": ["rgb_array", "human"], "render_fps": 25}
    #: action channel names, in order (task)
    action_names: tuple[str, ...] = ()
    #: reward term names, in order (task)
    reward_names: tuple[str, ...] = ()
    #: task attributes that change during an episode (saved by get_state) (task)
    task_state: tuple[str, ...] = ()

    def __init__(self, vehicle: VehicleParams | str, terrain: str, terrain_kwargs: dict,
                 control_dt: float, physics_dt: float, render_mode: str | None,
                 width: int, height: int):
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode = {render_mode!r}; allowed: None, "
                             f"{', '.join(self.metadata['render_modes'])}")
        n_sub = control_dt / physics_dt
        if physics_dt <= 0 or control_dt <= 0 or abs(n_sub - round(n_sub)) > 1e-6:
            raise ValueError(f"control_dt = {control_dt} must be a positive multiple of "
                             f"physics_dt = {physics_dt}")
        if physics_dt > 0.01:
            raise ValueError(f"physics_dt = {physics_dt}; allowed (0, 0.01] s (spring and tyre "
                             "stability)")
        self.control_dt, self.physics_dt = control_dt, physics_dt
        self.n_substeps = int(round(n_sub))
        self.scene: Scene = build_scene(vehicle, terrain, physics_dt=physics_dt, **terrain_kwargs)
        self.sim = VehicleSim(self.scene)
        self.render_mode, self.width, self.height = render_mode, width, height
        self._renderer = None
        self._viewer = None
        self._warned_divergence = False
        self.metadata = {**self.metadata, "render_fps": int(round(1.0 / control_dt))}
        self.action_space = gym.spaces.Box(-1.0, 1.0, (len(self.action_names),), np.float32)

    # --- plumbing --------------------------------------------------------------------------
    @property
    def model(self) -> mujoco.MjModel:
        return self.sim.model

    @property
    def data(self) -> mujoco.MjData:
        return self.sim.data

    @property
    def vehicle(self) -> VehicleParams:
        return self.sim.params

    def _check_action(self, action) -> np.ndarray:
        try:
            a = np.asarray(action, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"action {action!r} cannot be read as numbers") from None
        if a.shape != self.action_space.shape:
            raise ValueError(f"action shape {a.shape}; expected {self.action_space.shape} "
                             f"({', '.join(self.action_names)})")
        if not math.isfinite(a.sum()):              # cheap gate; the sum of finite values is finite
            bad = ~np.isfinite(a)                   # (but for overflow, checked here)
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(f"action[{i}] ({self.action_names[i]}) = {a[i]} is not finite")
        return np.minimum(np.maximum(a, -1.0), 1.0)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        terrain_seed = options.pop("terrain_seed", int(self.np_random.integers(2**31 - 1)))
        self.scene.regenerate(terrain_seed, self._renderer.context if self._renderer else None)
        self._reset_task(options)
        self.sim.step(1)
        obs = np.clip(self._observation(), -OBS_LIMIT, OBS_LIMIT)
        info = {**self._diagnostics(), **{f"reward_{k}": 0.0 for k in self.reward_names},
                "is_success": False, "diverged": False}
        return obs, info

    def step(self, action):
        self._begin_step(action)
        self.sim.step(self.n_substeps)
        return self._finish_step()

    def _begin_step(self, action) -> None:
        """Check and apply an action (before the physics substeps)."""
        self._apply_action(self._check_action(action))

    def _finish_step(self):
        """Observation, reward terms, termination and info after the physics substeps."""
        diverged = self._diverged()
        if diverged:
            obs = np.zeros(self.observation_space.shape, self.observation_space.dtype)
            terms = {k: 0.0 for k in self.reward_names}
            terminated, success = False, False
        else:
            obs = np.minimum(np.maximum(self._observation(), -OBS_LIMIT), OBS_LIMIT)
            terms = self._reward_terms()
            terminated, success = self._termination()
        reward = float(sum(terms.values()))
        info = {**self._diagnostics(), **{f"reward_{k}": float(v) for k, v in terms.items()},
                "is_success": bool(success), "diverged": diverged}
        if self.render_mode == "human":
            self.render()
        return obs, reward, terminated, diverged, info

    def _diverged(self) -> bool:
        d = self.data
        bad_qacc = d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > 0
        omega = self.sim.state.omega
        finite = math.isfinite(d.qpos.sum() + d.qvel.sum() + omega.sum()) or (   # cheap gate
            np.isfinite(d.qpos).all() and np.isfinite(d.qvel).all() and np.isfinite(omega).all())
        if (bad_qacc or not finite) and not self._warned_divergence:
            logger.warning("%s: simulation diverged at t = %.3f s; truncating the episode",
                           type(self).__name__, d.time)
            self._warned_divergence = True
        return bool(bad_qacc or not finite)

    def _diagnostics(self) -> dict:
        out = self.sim.outputs
        v = self.sim.com_velocity()
        return {"speed": math.sqrt(v @ v),
                "gear": int(out.gear[0]), "engine_rpm": float(out.engine_omega[0] * 60 / (2 * np.pi)),
                "long_slip": out.long_slip[0].copy(), "lat_slip": out.lat_slip[0].copy(),
                "tire_load": out.load[0].copy(), "wheel_contact": out.in_contact[0].copy()}

    # --- save / restore ------------------------------------------------------------------
    def get_state(self) -> dict:
        """Everything needed to continue bit for bit: MuJoCo's integration state (incl. warm
        start), the vehicle state and commands, the RNG, the terrain and the task's own state.
        (The TimeLimit wrapper's step count lives outside the unwrapped env.)"""
        spec = mujoco.mjtState.mjSTATE_INTEGRATION
        mj = np.empty(mujoco.mj_stateSize(self.model, spec))
        mujoco.mj_getState(self.model, self.data, mj, spec)
        sim = self.sim
        return copy.deepcopy({
            "mujoco": mj, "state": sim.state, "commands": sim.commands,
            "wheel_angle": sim.wheel_angle, "outputs": sim.outputs,
            "rng": self.np_random.bit_generator.state, "hfield": self.model.hfield_data,
            "terrain": (self.scene.terrain, self.model.hfield_size, self.model.geom_pos),
            "task": {k: getattr(self, k) for k in self.task_state}})

    def set_state(self, state: dict) -> None:
        """Restore a :meth:`get_state` snapshot (of this environment)."""
        state = copy.deepcopy(state)
        spec = mujoco.mjtState.mjSTATE_INTEGRATION
        mujoco.mj_setState(self.model, self.data, state["mujoco"], spec)
        sim = self.sim                                   # write into the bound arrays
        for name in ("state", "commands", "outputs"):
            for buf, value in vars(state[name]).items():
                getattr(getattr(sim, name), buf)[...] = value
        sim.wheel_angle[...] = state["wheel_angle"]
        self.np_random.bit_generator.state = state["rng"]
        self.model.hfield_data[:] = state["hfield"]
        self.scene.terrain, hsize, gpos = state["terrain"]
        self.model.hfield_size[:] = hsize
        self.model.geom_pos[:] = gpos
        for key, value in state["task"].items():
            setattr(self, key, value)

    # --- geometry helpers for tasks ----------------------------------------------------------
    def body_rotation(self) -> np.ndarray:
        """World-from-chassis rotation (3, 3)."""
        return self.data.xmat[self.sim.body].reshape(3, 3)

    def body_velocity(self) -> tuple[np.ndarray, np.ndarray]:
        """CoM linear (m/s) and angular (rad/s) velocity in the chassis frame."""
        k = self.sim.chassis_row()
        rot = k[K_ROTATION:K_ROTATION + 9].reshape(3, 3)
        return rot.T @ k[K_VELOCITY:K_VELOCITY + 3], rot.T @ k[K_ANGULAR:K_ANGULAR + 3]

    def heading(self) -> float:
        """Yaw of the chassis x axis in the world xy plane (rad)."""
        rot = self.body_rotation()
        return float(np.arctan2(rot[1, 0], rot[0, 0]))

    def tilt(self) -> float:
        """Angle between the chassis up axis and world up (rad)."""
        return float(np.arccos(np.clip(self.body_rotation()[2, 2], -1.0, 1.0)))

    # --- rendering ---------------------------------------------------------------------------
    def render(self):
        if self.render_mode == "rgb_array":
            from traction.scenes.render import SceneRenderer

            if self._renderer is None:
                self._renderer = SceneRenderer(self.model, self.width, self.height)
            self.sim.update_wheel_visuals()
            return self._renderer.frame(self.data)
        if self.render_mode == "human":
            import mujoco.viewer

            if self._viewer is None:
                self._viewer = mujoco.viewer.launch_passive(self.model, self.data)
            self.sim.update_wheel_visuals()
            self._viewer.sync()
        return None

    def close(self):
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        if self._viewer is not None:
            self._viewer.close()
            self._viewer = None

    # --- task interface (override) -----------------------------------------------------------
    def _reset_task(self, options: dict) -> None:
        """Place the vehicle, sample task targets (task)."""
        raise NotImplementedError

    def _apply_action(self, action: np.ndarray) -> None:
        """Map a clipped action to vehicle commands (task)."""
        raise NotImplementedError

    def _observation(self) -> np.ndarray:
        """float32 observation (task)."""
        raise NotImplementedError

    def _reward_terms(self) -> dict[str, float]:
        """Weighted reward terms keyed by :attr:`reward_names` (costs negative) (task)."""
        raise NotImplementedError

    def _termination(self) -> tuple[bool, bool]:
        """``(terminated, success)`` (task)."""
        raise NotImplementedError
