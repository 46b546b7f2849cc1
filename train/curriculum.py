"""A curriculum for training: an environment argument moved from an easy value to the target
over the run::

    python -m traction.train.train --env Traction/Climb6x6-v1 --timesteps 1000000 \\
        --curriculum difficulty=0.3:0.8

``NAME=START:END`` ramps the argument ``NAME`` of every training world linearly from ``START``
(at step 0) to ``END`` (at :data:`RAMP` of the run's timesteps), then holds ``END``. The
argument must be one the task takes at construction *and* lets you set between episodes as an
attribute (Climb6x6's ``difficulty``; a world's new value takes effect at its next reset, as
the task's docstring says). Training's evaluations, the best checkpoint's choice and
``evaluate`` all run at ``END``, the task the curriculum leads to: the run's ``config.yml``
records ``NAME: END`` in its ``env_kwargs`` and the ramp under ``curriculum``. TensorBoard
shows the value under ``curriculum/NAME``.
"""

from __future__ import annotations

import argparse
import inspect

#: the fraction of the run's timesteps over which the value ramps (the rest trains at END)
RAMP = 0.8


def parse(text: str) -> tuple[str, float, float]:
    """``"difficulty=0.3:0.8"`` -> ``("difficulty", 0.3, 0.8)``.

    Raises:
        ValueError: not ``NAME=START:END`` with numbers, naming the text.
    """
    name, eq, span = text.partition("=")
    start, colon, end = span.partition(":")
    try:
        values = float(start), float(end)
    except ValueError:
        values = None
    if not (eq and colon and name.strip() and values):
        raise ValueError(f"--curriculum {text!r}; allowed: NAME=START:END with numbers, e.g. "
                         "difficulty=0.3:0.8")
    return name.strip(), *values


def curriculum_arg(text: str) -> tuple[str, float, float]:
    """argparse type of ``--curriculum``."""
    try:
        return parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--curriculum ")) from None


def value_at(start: float, end: float, progress: float) -> float:
    """The value at ``progress`` (0 at the first step, 1 at the last) of the run."""
    return start + (end - start) * min(max(progress, 0.0) / RAMP, 1.0)


def check(env_id: str, env_kwargs: dict, name: str, start: float, end: float) -> None:
    """``name`` is an argument of ``env_id``'s constructor and a settable attribute that takes
    ``start`` and ``end`` (one env is built to try them).

    Raises:
        ValueError: naming the argument, or the value the task refused and why.
    """
    import gymnasium as gym

    from traction.train.train import _creator, traction_spec

    spec = traction_spec(env_id)
    params = inspect.signature(_creator(spec)).parameters
    if name not in params:
        allowed = sorted(k for k in params if k != "self")
        raise ValueError(f"--curriculum {name}: not an argument of {env_id}; allowed: an "
                         f"argument its worlds can change between episodes ({', '.join(allowed)})")
    if name in env_kwargs:
        raise ValueError(f"--curriculum {name} and --env-kwarg {name}: give it once (the "
                         "curriculum sets it)")
    env = gym.make(spec.id, **{k: v for k, v in env_kwargs.items() if k != "max_episode_steps"})
    try:
        for value in (start, end):
            try:
                env.set_wrapper_attr(name, value)
            except AttributeError as e:
                raise ValueError(f"--curriculum {name}: {env_id} does not let it change between "
                                 f"episodes ({e})") from None
            except ValueError as e:
                raise ValueError(f"--curriculum {name}={start}:{end}: {e}") from None
    finally:
        env.close()


def callback(name: str, start: float, end: float, total: int):
    """The SB3 callback that sets ``name`` on every training world before each rollout."""
    from stable_baselines3.common.callbacks import BaseCallback

    class Curriculum(BaseCallback):
        def _on_rollout_start(self) -> None:
            value = value_at(start, end, self.model.num_timesteps / total)
            self.training_env.set_attr(name, value)
            self.logger.record(f"curriculum/{name}", value)

        def _on_step(self) -> bool:
            return True

    return Curriculum()
