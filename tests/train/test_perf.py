"""The performance benchmark runs in --quick mode and writes the documented schema (no timing
assertions)."""

import json

from traction.envs import ENV_IDS
from traction.train import perf

TASK_KEYS = {"env_steps_per_s", "sim_s_per_wall_s", "substeps_per_s",
             "bare_mujoco_substeps_per_s", "substep_cost_vs_bare_mujoco",
             "vehicle_update_us_single", "vehicle_update_us_per_vehicle_batched_64"}


def test_perf_quick_schema(tmp_path):
    perf.main(["--quick", "--out", str(tmp_path)])
    report = json.loads((tmp_path / "perf.json").read_text())
    assert set(report["tasks"]) == set(ENV_IDS)
    for r in report["tasks"].values():
        assert set(r) == TASK_KEYS and all(v > 0 for v in r.values())
    assert set(report["reference"]) == {"HalfCheetah-v5", "CarRacing-v3"}
