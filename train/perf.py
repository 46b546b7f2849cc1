"""Performance benchmark::

    python -m traction.train.perf [--out DIR] [--quick]

Per task, in one run (ratios matter; absolute numbers are noisy on shared machines):
1. bare MuJoCo: ``mj_step`` on the same compiled model and sensors with the chassis forces held
   at a typical driving value - physics substeps per second (the limit);
2. vehicle update alone: microseconds per vehicle per substep, single and batched (64);
3. single env: ``env.step`` per second, simulated seconds per wall second, and the whole physics
   substep's cost relative to the bare MuJoCo substep;
and, when installed, Gymnasium's ``HalfCheetah-v5`` and ``CarRacing-v3`` steps per second.
Writes ``DIR/perf.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import time
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np

import traction.envs
from traction import vehicle_model as vm


def _rate(fn, seconds: float) -> float:
    """Calls of ``fn`` per second over about ``seconds`` (after a short warm-up)."""
    for _ in range(10):
        fn()
    n, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(20):
            fn()
        n += 20
    return n / elapsed


def bare_mujoco(env, seconds: float) -> float:
    """Substeps/s of mj_step with the vehicle's last forces held (same contacts and sensors)."""
    model, data = env.model, mujoco.MjData(env.model)
    src = env.data
    data.qpos[:], data.qvel[:], data.xfrc_applied[:] = src.qpos, src.qvel, src.xfrc_applied
    mujoco.mj_forward(model, data)
    start = copy.deepcopy((data.qpos.copy(), data.qvel.copy()))

    def step():
        mujoco.mj_step(model, data)
        if data.time > 2.0:
            data.qpos[:], data.qvel[:] = start
            data.time = 0.0
    return _rate(step, seconds)


def vehicle_update(env, n_vehicles: int, seconds: float) -> float:
    """Microseconds per vehicle per substep of ``vehicle_model.step`` on the env's inputs."""
    sim = env.sim
    kin, hits = sim._gather()
    rep = lambda a: np.repeat(a, n_vehicles, axis=0)  # noqa: E731
    kin = vm.ChassisKinematics(*(rep(getattr(kin, f)) for f in
                                 ("position", "rotation", "com", "velocity", "angular_velocity")))
    hits = vm.GroundHits(rep(hits.dist), rep(hits.normal), rep(hits.surface))
    cmd = copy.deepcopy(sim.commands)
    for f in vars(cmd):
        setattr(cmd, f, rep(getattr(cmd, f)))
    state = vm.VehicleState.zeros(sim.params, n_vehicles)
    state.omega[:] = sim.state.omega
    rate = _rate(lambda: vm.step(sim.params, state, kin, hits, cmd, sim.friction_table, sim.dt,
                                 sim.gravity), seconds)
    return 1e6 / rate / n_vehicles


def single_env(env_id: str, seconds: float) -> dict:
    env = gym.make(env_id)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, (4096,) + env.action_space.shape)
    k = [0]

    def step():
        _, _, term, trunc, _ = env.step(actions[k[0] % 4096])
        k[0] += 1
        if term or trunc:
            env.reset()
    steps = _rate(step, seconds)
    u = env.unwrapped
    result = {"env_steps_per_s": steps, "sim_s_per_wall_s": steps * u.control_dt,
              "substeps_per_s": steps * u.n_substeps}
    result["bare_mujoco_substeps_per_s"] = bare_mujoco(u, seconds)
    result["substep_cost_vs_bare_mujoco"] = (result["bare_mujoco_substeps_per_s"]
                                             / result["substeps_per_s"])
    result["vehicle_update_us_single"] = vehicle_update(u, 1, seconds)
    result["vehicle_update_us_per_vehicle_batched_64"] = vehicle_update(u, 64, seconds)
    env.close()
    return result


def reference_env(env_id: str, seconds: float) -> float | None:
    try:
        env = gym.make(env_id)
    except Exception:  # noqa: BLE001 - not installed (box2d, mujoco extras): skip
        return None
    env.reset(seed=0)

    def step():
        _, _, term, trunc, _ = env.step(env.action_space.sample())
        if term or trunc:
            env.reset()
    rate = _rate(step, seconds)
    env.close()
    return rate


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description="Traction performance benchmark.")
    ap.add_argument("--out", type=Path, default=Path("runs/perf"))
    ap.add_argument("--quick", action="store_true", help="short timings (CI schema check)")
    args = ap.parse_args(argv)
    seconds = 0.3 if args.quick else 3.0
    report = {"machine": {"python": platform.python_version(), "mujoco": mujoco.__version__,
                          "numpy": np.__version__, "processor": platform.processor()},
              "seconds_per_measurement": seconds, "tasks": {}, "reference": {}}
    for env_id in traction.envs.ENV_IDS:
        report["tasks"][env_id] = single_env(env_id, seconds)
    for ref in ("HalfCheetah-v5", "CarRacing-v3"):
        report["reference"][ref] = reference_env(ref, seconds)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "perf.json").write_text(json.dumps(report, indent=2))
    print(table(report))
    return report


def table(report: dict) -> str:
    rows = ["| task | env steps/s | sim s / wall s | bare MuJoCo substeps/s | substep cost vs bare "
            "| vehicle update us (1) | us/vehicle (64) |", "|---|---|---|---|---|---|---|"]
    for env_id, r in report["tasks"].items():
        rows.append(f"| {env_id} | {r['env_steps_per_s']:.1f} | {r['sim_s_per_wall_s']:.2f} | "
                    f"{r['bare_mujoco_substeps_per_s']:.0f} | "
                    f"{r['substep_cost_vs_bare_mujoco']:.1f}x | "
                    f"{r['vehicle_update_us_single']:.0f} | "
                    f"{r['vehicle_update_us_per_vehicle_batched_64']:.1f} |")
    for ref, rate in report["reference"].items():
        rows.append(f"| {ref} (reference) | {'not installed' if rate is None else f'{rate:.0f}'} "
                    "| | | | | |")
    return "\n".join(rows)


if __name__ == "__main__":
    main()
