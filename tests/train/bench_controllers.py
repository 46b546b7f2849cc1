"""Controller factories the benchmark tests load by file path (``--controller FILE:NAME``)."""

import numpy as np

from traction.train.controllers import for_env
from traction.train.policy import Unsupported


def scripted(task):
    """The scripted controllers again, through the factory protocol: identical episodes."""
    return for_env(task.env_id)


def degraded(task):
    """TankTurn's scripted controller with its track commands cut to 30 %: below the tracks'
    static scrub, so the tank hardly turns."""
    if not task.env_id.startswith("Traction/TankTurn"):
        raise Unsupported("TankTurn only")
    inner = for_env(task.env_id)
    return lambda obs: 0.3 * inner(obs)


def no_argument():
    return for_env("Traction/TankTurn-v1")


def not_callable(task):
    return 42


def crashing(task):
    def controller(obs):
        raise RuntimeError("my controller broke")
    return controller


class Counting:
    """Records its calls: resets before every episode, one call per step."""

    resets = 0
    calls = 0

    def __init__(self, task):
        self.action = np.zeros(task.action_space.shape, np.float32)

    def reset(self):
        type(self).resets += 1

    def __call__(self, obs):
        type(self).calls += 1
        return self.action
