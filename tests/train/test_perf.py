"""The performance benchmark runs in --quick mode and writes the documented schema (no timing
assertions)."""

import json

from traction.envs import ENV_IDS
from traction.train import perf

TASK_KEYS = {"env_steps_per_s", "sim_s_per_wall_s", "physics_substeps_per_s",
             "bare_mujoco_substeps_per_s", "physics_substep_cost_vs_bare_mujoco",
             "physics_substep_cost_vs_bare_mujoco_paired",
             "env_step_cost_per_substep_vs_bare_mujoco", "vehicle_update_us_single",
             "vehicle_update_us_per_vehicle_batched_64", "vector", "startup_s"}
VECTOR_KEYS = {"env_steps_per_s", "threads", "env_steps_per_s_threaded",
               "physics_vehicle_substeps_per_s",
               "physics_cost_per_vehicle_substep_vs_bare_mujoco",
               "bare_mujoco_same_worlds_substeps_per_s",
               "physics_cost_per_vehicle_substep_vs_bare_same_worlds",
               "physics_cost_per_vehicle_substep_vs_bare_same_worlds_paired"}


def test_perf_quick_schema(tmp_path):
    perf.main(["--quick", "--out", str(tmp_path)])
    report = json.loads((tmp_path / "perf.json").read_text())
    assert set(report["tasks"]) == set(ENV_IDS)
    for r in report["tasks"].values():
        assert set(r) == TASK_KEYS
        assert all(v > 0 for k, v in r.items() if k != "vector")
        assert set(r["vector"]) == {"2", "4"}
        for n, v in r["vector"].items():                 # threads used: at most one per world
            assert set(v) == VECTOR_KEYS and all(x > 0 for x in v.values())
            assert isinstance(v["threads"], int) and 2 <= v["threads"] <= int(n)
    assert set(report["reference"]) == {"HalfCheetah-v5", "CarRacing-v3"}
    assert "| task | vector N |" in perf.table(report)
