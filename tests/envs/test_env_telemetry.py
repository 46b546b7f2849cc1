"""An environment built with ``telemetry=n`` records the PhysX telemetry channels of every physics
substep (``env.unwrapped.sim.telemetry``) without changing its rollout; reset and set_state
start a new recording; a native vector env refuses the argument."""

import copy

import gymnasium as gym
import numpy as np
import pytest

import traction.envs


def _rollout(env, steps: int, seed: int = 7) -> list[bytes]:
    obs, _ = env.reset(seed=seed)
    out, rng = [obs.tobytes()], np.random.default_rng(seed)
    for _ in range(steps):
        obs, reward, term, trunc, _ = env.step(rng.uniform(-1, 1, env.action_space.shape)
                                               .astype(np.float32))
        out += [obs.tobytes(), np.float64(reward).tobytes()]
    return out


@pytest.mark.parametrize("env_id", traction.envs.ENV_IDS)
def test_telemetry_records_every_substep_and_leaves_the_rollout_bit_for_bit(env_id):
    steps = 12
    plain = gym.make(env_id)
    recorded = gym.make(env_id, telemetry=1000)
    assert _rollout(plain, steps) == _rollout(recorded, steps)
    u = recorded.unwrapped
    assert plain.unwrapped.sim.telemetry is None and u.telemetry == 1000
    data = u.sim.telemetry.arrays()
    n = 1 + steps * u.n_substeps                       # the reset's settling substep, then steps
    assert len(data["time"]) == n and data["time"][0] == 0.0
    np.testing.assert_allclose(np.diff(data["time"]), u.physics_dt, rtol=1e-9)
    assert data["time"][-1] == pytest.approx(u.data.time - u.physics_dt)   # the step's start
    # the last sample is the state the step's observation and info read
    out, state = u.sim.outputs, u.sim.state
    assert np.array_equal(data["tire_load"][-1, 0], out.wheel["load"][0, :])
    assert np.array_equal(data["jounce"][-1, 0], out.wheel["jounce"][0, :])
    assert np.array_equal(data["wheel_omega"][-1, 0], state.wheel["omega"][0, :])
    assert data["engine_revs"][-1, 0] == out.vehicle[0]["engine_omega"]
    # every substep's tyre force lies within its friction circle: |F| <= mu x load
    on = data["tire_load"] > 0.0
    force = np.hypot(data["norm_long_force"], data["norm_lat_force"])
    assert on.any() and np.all(force[on] <= data["tire_friction"][on] * (1 + 1e-9))
    assert np.all(data["tire_load"] >= 0.0) and np.all(force[~on] == 0.0)


def test_reset_and_set_state_start_a_new_recording_in_time_order(tmp_path):
    env = gym.make("Traction/TankTurn-v1", telemetry=50)
    u = env.unwrapped
    env.reset(seed=0)
    for _ in range(8):                                  # 8 x 10 substeps: the ring wraps
        env.step(np.float32([1.0, -1.0]))
    data = u.sim.telemetry.arrays()
    assert len(data["time"]) == 50 and np.all(np.diff(data["time"]) > 0)
    snapshot = u.get_state()
    env.step(np.float32([1.0, -1.0]))
    u.set_state(snapshot)                               # time goes back: a new recording
    assert len(u.sim.telemetry.arrays()["time"]) == 0
    env.step(np.float32([1.0, -1.0]))
    assert len(u.sim.telemetry.arrays()["time"]) == u.n_substeps
    env.reset(seed=1)
    assert list(u.sim.telemetry.arrays()["time"]) == [0.0]
    lines = u.sim.telemetry.write_csv(tmp_path / "tank.csv").read_text().splitlines()
    header = lines[0].split(",")
    assert len(lines) == 2 and len(header) == 1 + 8 + 11 * 12   # time, vehicle, 12 wheels
    assert all(f"long_slip_{name}" in header for name in u.vehicle.wheel_names)


def test_telemetry_is_fixed_copied_as_an_argument_and_checked():
    env = gym.make("Traction/Drift-v1", telemetry=20)
    env.reset(seed=0)
    env.step(np.zeros(4, np.float32))
    twin = copy.deepcopy(env.unwrapped)                 # rebuilt from its arguments
    assert twin.telemetry == 20 and twin.sim.telemetry.capacity == 20
    with pytest.raises(AttributeError, match="telemetry"):
        env.unwrapped.telemetry = 100
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match=rf"telemetry = {bad}; allowed: an integer >= 0"):
            gym.make("Traction/Drift-v1", telemetry=bad)


def test_a_native_vector_env_refuses_telemetry_naming_what_records_it():
    with pytest.raises(ValueError, match=r"telemetry = 10; allowed: 0 in a native vector env.*"
                       r"gym.make\(id, telemetry=n\), or .*vectorization_mode='sync'"):
        gym.make_vec("Traction/Drift-v1", num_envs=2, vectorization_mode="vector_entry_point",
                     telemetry=10)
    envs = gym.make_vec("Traction/Drift-v1", num_envs=2, vectorization_mode="vector_entry_point",
                        telemetry=0)
    envs.close()
    envs = gym.make_vec("Traction/Drift-v1", num_envs=2, vectorization_mode="sync", telemetry=25)
    envs.reset(seed=0)
    envs.step(np.zeros((2, 4), np.float32))
    assert [len(e.unwrapped.sim.telemetry.arrays()["time"]) for e in envs.envs] == [11, 11]
    envs.close()
