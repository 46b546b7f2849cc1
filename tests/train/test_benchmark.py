"""The scripted benchmark in --quick mode: outputs, schema, and the thresholds CI asserts."""

import json

import pytest

from traction.train import benchmark

KEYS = {"env_id", "kwargs", "episodes", "success_rate", "mean_return", "std_return",
        "mean_time_to_success_s", "diverged"}


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    benchmark.run(out, quick=True, progress=False)
    return out, json.loads((out / "benchmark.json").read_text())


def test_outputs_and_schema(quick):
    out, summary = quick
    assert set(summary) == {v[0] for v in benchmark.VARIANTS}
    for entry in summary.values():
        assert KEYS <= set(entry) and 0.0 <= entry["success_rate"] <= 1.0
        assert entry["diverged"] == 0
    assert "mean_abs_sideslip_error_deg" in summary["drift"]
    # each episode has its own seed (SEED0 + k): other targets, other returns
    assert summary["tank_turn_special"]["std_return"] > 0.0
    assert "centre_drift_m" in summary["tank_turn_special"]
    for name in ("benchmark.md", "trajectories.png", "telemetry.png", "climb_rough_hill.mp4",
                 "drift.mp4", "tank_turn_special.mp4"):
        assert (out / name).stat().st_size > 500, name


def test_videos_play_in_real_time(quick):
    """A frame every FRAME_EVERY control steps (0.04 s) is shown for that long: 12.5 fps (it
    was written at 12, so the videos ran 4 % slow)."""
    import imageio.v2 as imageio

    out, _ = quick
    for name in ("climb_rough_hill.mp4", "drift.mp4", "tank_turn_special.mp4"):
        fps = imageio.get_reader(out / name).get_meta_data()["fps"]
        assert fps == pytest.approx(1.0 / (0.04 * benchmark.FRAME_EVERY)), name


def test_scripted_thresholds(quick):
    _, s = quick
    assert s["tank_turn_special"]["success_rate"] >= 0.9
    assert s["tank_turn_special"]["centre_drift_m"] < 0.2
    assert s["climb_crest_torque_vectoring"]["success_rate"] > \
        s["climb_crest_equal"]["success_rate"]
    assert s["climb_rough_hill"]["success_rate"] > 0


def test_time_to_success_is_when_success_began_not_the_episode_end():
    """Drift's success is sticky and its episode goes on: the time to success is the step the
    sustained drift was first held for 3 s (13.6 s for seed 1000), not the 20 s episode."""
    import gymnasium as gym

    from traction.train.controllers import DriftController
    env = gym.make("Traction/Drift-v0", max_episode_steps=500)
    metrics, track, _ = benchmark._episode(env, DriftController(), 1000, record=False)
    env.close()
    assert metrics["success"] and metrics["steps"] == 500
    assert metrics["time_to_success"] == pytest.approx(13.64, abs=0.05)
    # it holds ~26 deg against the 30 deg target (degrees, over the last three quarters)
    assert 1.0 < metrics["mean_abs_sideslip_error_deg"] < 6.0


def test_the_table_shows_success_as_a_percentage():
    entry = {"episodes": 20, "success_rate": 0.9, "mean_return": 8.2, "std_return": 1.0,
             "mean_time_to_success_s": 4.5, "centre_drift_m": 0.031}
    row = benchmark._table({"tank_turn_special": entry}, quick=False).splitlines()[-1]
    assert row == "| tank_turn_special | 20 | 90% | 8.2 +- 1.0 | 4.5 | centre drift 0.03 m |"


def test_centre_drift_is_the_horizontal_distance_the_tank_moved():
    import gymnasium as gym
    import numpy as np

    from traction.train.controllers import TankTurnController
    env = gym.make("Traction/TankTurn-v0")
    env.reset(seed=1000)
    u = env.unwrapped
    start = u.sim.com_position()
    metrics, track, _ = benchmark._episode(env, TankTurnController(), 1000, record=False)
    end = u.sim.com_position()
    assert track["xy"][-1] == end[:2].tolist() and end[2] != start[2]     # it settled a little
    assert metrics["centre_drift_m"] == pytest.approx(np.hypot(*(end - start)[:2]), rel=1e-12)
    env.close()
