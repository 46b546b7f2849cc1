"""The guide's own task (docs/architecture.md, "Writing your own task") runs as written: it
passes Gymnasium's checker, reaches its goal under a scripted driver, runs in the native vector
env with the single env's trajectories, copies, and is accepted for training."""

import copy
import re
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from traction.envs.base import RENAMED, TractionEnv
from traction.train import train

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


@pytest.fixture(scope="module")
def stop_env_module(tmp_path_factory):
    section = GUIDE.read_text().split("## Writing your own task", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    folder = tmp_path_factory.mktemp("guide")
    (folder / "my_tasks.py").write_text(code)
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(folder))
        import my_tasks

        yield my_tasks


def _drive(obs):
    """Throttle below the speed from which 2 m/s^2 of braking stops at the mark, else brake
    (pedal channels: -1 off, 1 full)."""
    slow_enough = obs[2] < np.sqrt(4.0 * max(obs[0] - 0.3, 0.0))
    return np.array([0, 1, -1, -1] if slow_enough else [0, -1, 1, -1], np.float32)


def test_the_guides_task_checks_and_reaches_its_goal(stop_env_module):
    env = gym.make("MyTasks/Stop-v0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)
    obs, _ = env.reset(seed=0)
    for _ in range(500):
        obs, reward, terminated, truncated, info = env.step(_drive(obs))
        assert reward == info["reward_progress"] + info["reward_stopped"]
        if terminated or truncated:
            break
    assert terminated and info["is_success"] and abs(obs[0]) < 1.0 and abs(obs[1]) < 0.05


def test_the_guides_task_vectorises_copies_and_trains(stop_env_module):
    venv = gym.make_vec("MyTasks/Stop-v0", num_envs=2, vectorization_mode="vector_entry_point")
    envs = [gym.make("MyTasks/Stop-v0") for _ in range(2)]
    obs, _ = venv.reset(seed=5)
    singles = [e.reset(seed=5 + i)[0] for i, e in enumerate(envs)]
    for _ in range(30):
        assert np.array_equal(obs, np.stack(singles))
        actions = np.stack([_drive(o) for o in obs])
        obs = venv.step(actions)[0]
        singles = [e.step(a)[0] for e, a in zip(envs, actions, strict=True)]
    clone = copy.deepcopy(envs[0].unwrapped)
    a = _drive(singles[0])
    assert np.array_equal(clone.step(a)[0], envs[0].unwrapped.step(a)[0])
    train.check_env("my_tasks:MyTasks/Stop-v0", {})


@pytest.mark.parametrize(("old", "new"), sorted(RENAMED.items()))
def test_a_task_written_against_the_private_names_is_refused_naming_the_public_one(old, new):
    """Before the task interface was public its methods were ``_observation`` and so on; a task
    still defining one would silently never be called, so its class is refused at once."""
    with pytest.raises(TypeError, match=rf"^Old defines {old}, which nothing calls: the task "
                                        rf"interface is public, define {new} instead"):
        type("Old", (TractionEnv,), {old: lambda self, *args: None})
    type("New", (TractionEnv,), {new: lambda self, *args: None})        # the public name: fine


def _guide_section() -> str:
    return GUIDE.read_text().split("## Writing your own task", 1)[1].split("\n## ", 1)[0]


def test_the_guides_example_calls_the_base_constructor_by_keyword():
    import ast

    (code,) = re.findall(r"```python\n(.*?)```", _guide_section(), re.S)
    calls = [n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__"]
    assert len(calls) == 1 and not calls[0].args and len(calls[0].keywords) >= 8


def test_the_guide_names_every_command_field_reading_field_and_action_map():
    """What a task author reads instead of the source: the fields of ``set_commands``, of the
    chassis reading, and every compiled action map, each named in the guide."""
    from traction.envs import actions
    from traction.envs.reading import ChassisReading
    from traction.vehicle_model import Commands

    section = _guide_section()
    names = (*Commands.FIELDS, *ChassisReading.__slots__,
             *(n for n in actions.NAMES.values()), "terrain_seed", "check_option", "task_cache")
    assert [n for n in names if not re.search(rf"`(actions\.)?{n}`", section)] == []
