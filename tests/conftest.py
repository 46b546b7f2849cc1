"""Shared fixtures."""

import os

os.environ.setdefault("MUJOCO_GL", "egl")  # before anything imports mujoco (no display here)

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

from traction.vehicle_model import load_vehicle  # noqa: E402

# Property tests: ``make test`` draws the same examples every run (derandomised), so CI's
# verdict depends on the code, not on the draw; hunting for new counterexamples is a separate,
# long run: ``HYPOTHESIS_PROFILE=explore pytest tests/vehicle_model -k "fuzz or energy"``.
settings.register_profile("repeatable", max_examples=50, derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", max_examples=2000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


@pytest.fixture(scope="session")
def sedan():
    return load_vehicle("sedan")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _braking_distance(sim, v0: float = 20.0, seconds: float = 10.0) -> float:
    """Distance (m) from ``v0`` (m/s, wheels rolling) to standstill with full brakes."""
    sim.reset(velocity=[v0, 0, 0])
    sim.state.omega[:] = v0 / sim.params.wheels.radius
    sim.set_commands(brake=1.0)
    x0 = sim.com_position()[0]
    for _ in range(int(seconds / sim.dt)):
        sim.substep()
        if sim.forward_speed() < 0.01:
            break
    return sim.com_position()[0] - x0


@pytest.fixture
def braking_distance():
    """``braking_distance(sim, v0=20.0)``: full-brake stopping distance (m)."""
    return _braking_distance


def _holds_still(sim) -> None:
    """Assert that a braked, settled vehicle stays put for 100 x 50 substeps (10 s at 2 ms):
    under 1 cm, no jitter (speed under 1 mm/s), wheels locked."""
    p0 = sim.com_position()
    speeds = []
    for _ in range(100):
        sim.step(50)
        speeds.append(np.linalg.norm(sim.com_velocity()))
    assert np.linalg.norm(sim.com_position() - p0) < 0.01
    assert max(speeds) < 1e-3
    assert np.all(sim.state.omega == 0)


@pytest.fixture
def holds_still():
    """``holds_still(sim)``: asserts a braked vehicle neither creeps nor jitters for 10 s."""
    return _holds_still


@pytest.fixture
def diverging_step_warning(caplog):
    """``diverging_step_warning(env)``: spins ``env``'s chassis to 2e10 rad/s (MuJoCo resets
    its world for this), steps it with a zero action, asserts the step ends truncated and
    flagged ``diverged``, and returns the warnings logged."""
    def step(env) -> str:
        import logging

        u = env.unwrapped
        u.data.qvel[u.sim.qvel_adr + 2] = 2e10
        u.sim.refresh()
        with caplog.at_level(logging.WARNING, logger="traction.envs.base"):
            *_, trunc, info = env.step(np.zeros(env.action_space.shape, np.float32))
        assert trunc and info["diverged"]
        return caplog.text
    return step
