"""What the scripted controllers' docstrings (and the README) claim they do."""

import gymnasium as gym
import numpy as np
import pytest

import traction.envs  # noqa: F401  (registers the ids)
from traction.train.controllers import DriftController


@pytest.mark.parametrize("seed", [1000, 1003])
def test_drift_controller_holds_a_continuous_slide_near_its_target(seed):
    """DriftController: kicked into the slide within 3 s, then in the hold phase to the end of
    the episode; after a first swing (15-34 deg in its first 3 s) the sideslip stays between 20
    and 35 deg, about 27.5 deg on average (2.5 deg short of its 30 deg target), and the car
    never spins out; its circle lies inside the marked one (the README's caveat: no success)."""
    env = gym.make("Traction/Drift-v0")
    ctrl = DriftController()
    obs, _ = env.reset(seed=seed)
    phases, beta, cross = [], [], []
    while True:
        obs, _, term, trunc, info = env.step(ctrl(obs))
        phases.append(ctrl.phase)
        beta.append(np.degrees(obs[1]))
        cross.append(obs[5])
        assert info["reward_spin_out"] == 0
        if term or trunc:
            break
    assert trunc and not term and len(phases) == 750              # the whole 30 s episode
    first = phases.index("hold")
    assert first * 0.04 < 3.0 and set(phases[first:]) == {"hold"}
    slide = np.array(beta[first + 75:])
    assert 20.0 < slide.min() and slide.max() < 35.0
    assert slide.mean() == pytest.approx(27.5, abs=1.0)
    assert np.abs(slide - np.degrees(ctrl.target)).mean() < 3.5
    assert -12.0 < np.mean(cross[first + 75:]) < -5.0              # m, inside the circle
    assert not info["is_success"]
