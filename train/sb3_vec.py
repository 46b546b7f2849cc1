"""Stable-Baselines3 adapter for the native vector environment (training uses it by default).

SB3's ``VecEnv`` resets an ended episode in the same step, returns the reset observation and
puts the last one in ``info["terminal_observation"]`` (``info["TimeLimit.truncated"]`` marks
time-limit ends). :class:`TractionSB3VecEnv` runs a :class:`~traction.envs.TractionVectorEnv`
in ``SAME_STEP`` autoreset mode and translates, so all sub-environments advance in one compiled
physics call per step instead of one Python ``env.step`` each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices

from traction.envs import make_vector


class TractionSB3VecEnv(VecEnv):
    """SB3 ``VecEnv`` over ``num_envs`` copies of a registered Traction task.

    Args:
        env_id: registered id, e.g. ``"Traction/TankTurn-v1"``.
        num_envs: number of sub-environments.
        **kwargs: passed to every sub-environment (e.g. ``render_mode``, task arguments);
            ``max_episode_steps`` overrides the registered time limit as in ``gym.make`` (None
            keeps it, -1 none); ``num_threads`` goes to the vector env (its physics in threads;
            see :class:`~traction.envs.TractionVectorEnv`).

    Each sub-environment's ``spec`` is the registered one with these arguments, as
    ``gym.make`` gives it. Actions are checked as the native vector env checks them: an array of
    shape ``(num_envs, action size)``, any real dtype (float64 actions step as they do in a
    single env). Episode returns and lengths (``info["episode"]``, SB3's ``ep_rew_mean``) come
    from wrapping it in SB3's ``VecMonitor``, as training does (``train.make_vec``).
    """

    def __init__(self, env_id: str, num_envs: int, **kwargs):
        self.venv = make_vector(env_id, num_envs, autoreset_mode=AutoresetMode.SAME_STEP,
                                **kwargs)
        self.render_mode = self.venv.render_mode
        #: the info keys of the reward terms (``reward_<term>``), in ``reward_names`` order
        self.reward_keys = tuple(f"reward_{k}" for k in self.venv.envs[0].reward_names)
        #: the last step's reward terms per world, ``(num_envs, len(reward_names))``, in
        #: ``reward_names`` order (an ended episode's: its last step's), for logging them
        #: without reading every world's info (``train._reward_terms_callback``)
        self.reward_terms = np.zeros((num_envs, len(self.reward_keys)))
        super().__init__(num_envs, self.venv.single_observation_space,
                         self.venv.single_action_space)

    @property
    def envs(self) -> list:
        return self.venv.envs

    def reset(self):
        seeds = [None if s is None else int(s) for s in self._seeds]
        results = [env.reset(seed=seeds[i], options=self._options[i] or None)
                   for i, env in enumerate(self.envs)]
        self.reset_infos = [info for _, info in results]
        self.venv.booked_resets(list(range(self.num_envs)), results)
        self._reset_seeds()
        self._reset_options()
        return self.venv.observations()       # (with obs_mode's sensors: a dict of arrays)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions          # checked (shape, dtype, finite) by the vector env's step

    def step_wait(self):
        venv = self.venv
        r = venv.step_batch(self._actions)
        infos = venv.infos(r)
        terms = r.values
        if venv.final:
            terms = list(terms)
        for i, (last_obs, last_info) in venv.final.items():   # the ended episode's last step
            self.reset_infos[i] = infos[i]
            infos[i] = {**last_info, "terminal_observation": last_obs}
            terms[i] = [last_info[k] for k in self.reward_keys]
        self.reward_terms = np.array(terms, np.float64).reshape(self.num_envs, -1)
        time_limit = (r.truncated & ~r.terminated).tolist()
        for info, cut in zip(infos, time_limit, strict=True):
            info["TimeLimit.truncated"] = cut
        dones = r.terminated | r.truncated
        return venv.observations(), r.rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        self.venv.close()

    def _indices(self, indices: VecEnvIndices) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return indices

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return [getattr(self.envs[i], attr_name) for i in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        for i in self._indices(indices):
            setattr(self.envs[i], attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None,
                   **method_kwargs) -> list[Any]:
        """Call a method of the sub-environments; a ``reset`` so called starts their episodes'
        step counts (time limit) anew, as it does a ``TimeLimit``-wrapped env's."""
        worlds = list(self._indices(indices))
        out = [getattr(self.envs[i], method_name)(*method_args, **method_kwargs) for i in worlds]
        if method_name == "reset":
            self.venv.booked_resets(worlds, out)
        return out

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None):
        return [isinstance(self.envs[i], wrapper_class) for i in self._indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [env.render() for env in self.envs]
