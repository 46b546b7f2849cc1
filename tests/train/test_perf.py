"""The performance benchmark runs in --quick mode and writes the documented schema (no timing
assertions)."""

import json
import math

import gymnasium as gym
import numpy as np
import pytest

from traction.envs import ENV_IDS
from traction.train import perf

TASK_KEYS = {"observation_modes", "env_steps_per_s", "sim_s_per_wall_s",
             "physics_substeps_per_s",
             "bare_mujoco_substeps_per_s", "physics_substep_cost_vs_bare_mujoco",
             "physics_substep_cost_vs_bare_mujoco_paired",
             "env_step_cost_per_substep_vs_bare_mujoco", "vehicle_update_us_single",
             "vehicle_update_us_per_vehicle_batched_64", "vector", "startup_s", "training",
             "contact", "randomisation"}
TRAINING_KEYS = {"n_envs", "sim_threads", "torch_threads", "train_steps_per_s", "env_steps_per_s",
                 "train_vs_env", "train_vs_env_cpu", "learner_share"}
VECTOR_KEYS = {"env_steps_per_s", "threads", "env_steps_per_s_threaded",
               "physics_vehicle_substeps_per_s",
               "physics_cost_per_vehicle_substep_vs_bare_mujoco",
               "bare_mujoco_same_worlds_substeps_per_s",
               "physics_cost_per_vehicle_substep_vs_bare_same_worlds",
               "physics_cost_per_vehicle_substep_vs_bare_same_worlds_paired"}


def test_perf_quick_schema(tmp_path):
    perf.main(["--quick", "--out", str(tmp_path)])
    report = json.loads((tmp_path / "perf.json").read_text())
    assert set(report) == {"machine", "seconds_per_measurement", "tasks", "reference"}
    assert report["seconds_per_measurement"] == 0.2                 # --quick
    assert set(report["tasks"]) == set(ENV_IDS)
    for env_id, r in report["tasks"].items():
        assert set(r) == TASK_KEYS
        # the derived figures are their definitions (control step 40 ms, 10 substeps)
        u = gym.make(env_id).unwrapped
        steps, bare = r["env_steps_per_s"], r["bare_mujoco_substeps_per_s"]
        assert r["sim_s_per_wall_s"] == pytest.approx(steps * u.control_dt, rel=1e-12)
        assert r["env_step_cost_per_substep_vs_bare_mujoco"] == pytest.approx(
            bare / (steps * u.n_substeps), rel=1e-12)
        assert r["physics_substep_cost_vs_bare_mujoco"] == pytest.approx(
            bare / r["physics_substeps_per_s"], rel=1e-12)
        assert all(v > 0 for k, v in r.items()
                   if k not in ("vector", "training", "contact", "randomisation",
                                "observation_modes"))
        c = r["contact"]                               # both contact models, in one run
        assert set(c["env_steps_per_s"]) == {"ray", "footprint"}
        assert c["footprint_cost_vs_ray"] == pytest.approx(
            c["env_steps_per_s"]["ray"] / c["env_steps_per_s"]["footprint"])
        d = r["randomisation"]                         # four settings, in one run
        assert set(d["env_steps_per_s"]) == set(d["env_steps_per_cpu_s"]) == {
            "none", "nominal draws", "mild, vehicle", "mild"}
        assert all(d["share_of_none"][k] == pytest.approx(v / d["env_steps_per_cpu_s"]["none"])
                   for k, v in d["env_steps_per_cpu_s"].items())
        assert 0 < d["share_of_episode"] <= 1.5 and math.isfinite(d["draw_ms"])
        assert math.isfinite(d["noise_us_per_step"])
        o = r["observation_modes"]                     # three modes, 1 and 2 worlds, one run
        assert set(o) == {"1", "2"}
        for v in o.values():
            assert set(v["env_steps_per_s"]) == set(v["env_steps_per_cpu_s"]) == set(perf.OBS_MODES)
            assert all(x > 0 for x in v["env_steps_per_cpu_s"].values())
            assert all(v["share_of_state"][k] == pytest.approx(x / v["env_steps_per_s"]["state"])
                       for k, x in v["env_steps_per_s"].items())
        t = r["training"]                              # --quick: 4 worlds, 16 steps each
        assert set(t) == TRAINING_KEYS and (t["n_envs"], t["torch_threads"]) == (4, 1)
        assert t["train_vs_env"] == pytest.approx(t["train_steps_per_s"] / t["env_steps_per_s"])
        assert 0 < t["learner_share"] < 1
        assert set(r["vector"]) == {"2", "4"}
        for n, v in r["vector"].items():                 # threads used: at most one per world
            assert set(v) == VECTOR_KEYS and all(x > 0 for x in v.values())
            assert isinstance(v["threads"], int) and 2 <= v["threads"] <= int(n)
    assert set(report["reference"]) == {"HalfCheetah-v5", "CarRacing-v3"}
    for ref in report["reference"].values():                    # (None: not installed)
        assert ref is None or set(ref) == {"env_steps_per_s", "env_steps_per_cpu_s"}
    assert "| per CPU s vs CarRacing-v3 |" in perf.table(report)
    assert "| task | vector N |" in perf.table(report)
    assert "| footprint cost vs one ray |" in perf.table(report)
    assert "| every key drawn at its nominal value |" in perf.table(report)
    assert "| PPO training steps/s | training / env | same, CPU time | learner share |" in perf.table(report)


def test_update_microseconds_are_per_vehicle_and_substep(monkeypatch):
    """With the timer faked at 1000 calls/s: one vehicle x 1000 updates per call -> 1 us;
    64 vehicles x 20 updates per call -> 1e6 / (1000 x 20) / 64 us per vehicle."""
    u = gym.make("Traction/Drift-v1").unwrapped
    u.reset(seed=0)
    monkeypatch.setattr(perf, "_rate", lambda fn, seconds: 1000.0)
    assert perf.vehicle_update(u, 1, 0.01) == pytest.approx(1.0)
    assert perf.vehicle_update(u, 64, 0.01) == pytest.approx(1e6 / (1000 * 20) / 64)


def test_paired_cost_is_physics_time_over_bare_time_with_each_sides_minimum(monkeypatch):
    """Fake timings: physics 3 ms (2 ms once, the uninterrupted run), bare MuJoCo 1 ms (0.5 ms
    once): the ratio of the minima summed over the snapshots."""
    env = gym.make("Traction/TankTurn-v1")
    env.reset(seed=0)
    calls = {"physics": 0, "bare": 0}

    def timed(snaps, fn, *args):
        side = "bare" if fn is perf._bare_loop else "physics"
        calls[side] += 1
        fast = calls[side] == 2
        return (0.0005 if fast else 0.001) if side == "bare" else (0.002 if fast else 0.003)

    monkeypatch.setattr(perf, "_restored_time", timed)
    actions = np.zeros((4, 2), np.float32)
    ratio = perf.paired_cost([env.unwrapped], env.unwrapped.step_physics, env.step, actions,
                             every=2, repeats=2, sweeps=1)
    # two snapshots x two repeats each side; snapshot 0 saw the fast runs
    assert calls == {"physics": 4, "bare": 4}
    assert ratio == pytest.approx((0.002 + 0.003) / (0.0005 + 0.001))
