"""Performance benchmark::

    python -m traction.train.perf [--out DIR] [--quick]

Per task, in one run (ratios matter; absolute numbers are noisy on shared machines):

Every env measurement replays the task's scripted controller's actions from seed 0 (resets
untimed), so the vehicle drives as intended rather than tumbling under random actions.

1. bare MuJoCo: ``mj_step1``/``mj_step2`` on the same compiled model and sensors, in the same
   compiled loop the environments use, from states along the drive with their chassis forces
   held - physics substeps per second (the limit);
2. vehicle update alone: the compiled update called in a compiled loop on the env's inputs,
   microseconds per vehicle per substep, single and batched (64 vehicles);
3. single env: ``env.step`` per second, simulated seconds per wall second, and the cost of one
   physics substep (MuJoCo + vehicle update + glue: action, ``VehicleSim.step``) and of a whole
   env step per substep (plus observation, reward, info) relative to the bare MuJoCo substep;
4. native vector env (N = 16 and 64): env steps per second in total, and the physics cost per
   vehicle-substep relative to bare MuJoCo of one world and of the same N worlds (N terrains
   do not fit in the caches that one world has, so MuJoCo itself runs slower per world); env
   steps per second again with the physics in as many threads as the process has cores (at
   least 2; ``num_threads``);
5. ``import traction.envs`` + first ``gym.make`` in a fresh process (warm on-disk kernel cache);
6. the wheel contact models (:func:`contact_models`): env steps per second with one ray per
   wheel and with the footprint, in one run; and domain randomisation (:func:`randomisation`):
   env steps per second without it, with the ``mild`` vehicle draws and with all of ``mild``
   (noise too), resets timed, in one run;
7. observation modes (:func:`observation_modes`): env steps per second, and per second of the
   process's CPU time (OpenGL's threads included), with the state vector, camera pixels and the
   lidar, in a single env and a native vector env, in one run;
8. training (:func:`training`, when Stable-Baselines3 is installed): PPO with the shipped
   hyperparameters (``train/hyperparams/ppo.yml``: its worlds, its physics threads, one torch
   thread), end-to-end environment steps per second, against the native vector env of as many
   worlds and threads replaying the same actions, paired iteration by iteration; and the
   learner's share (the update's time in the training's);

and, when installed, Gymnasium's ``HalfCheetah-v5`` and ``CarRacing-v3`` env steps per second
(per wall second and per CPU second: CarRacing's is the pixel env the observation modes are
compared with).
The physics costs relative to bare MuJoCo are also measured *paired* (:func:`paired_cost`: both
timed from the same restored states, in turn, in several sweeps over the states, minimum of many
runs each), so that a slow moment of the machine hits both sides alike (the ratio of two
separately timed rates moved by up to 0.3 between runs of the same code).
Every rate is the best of ``ROUNDS`` interleaved rounds (each round measures every quantity of
a task once). Writes ``DIR/perf.json`` and prints a table (``--quick``: short timings, N = 2
and 4).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np

import traction.envs
from traction.envs.physics import STEP_FUNCTIONS, _call_step
from traction.train.checks import writable_dir
from traction.vehicle_model.footprint import MODELS, ContactParams
from traction.vehicle_model.jit import borrow, first_compile, jit
from traction.vehicle_model.layout import Rows
from traction.vehicle_model.pack import stack
from traction.vehicle_model.update import borrow_packed, borrow_rows, scratch, step_batch_with


def _rate(fn, seconds: float) -> float:
    """Calls of ``fn`` per second over about ``seconds`` (after a short warm-up)."""
    for _ in range(3):
        fn()
    n, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        fn()
        n += 1
    return n / elapsed


def scripted_actions(env_id: str, steps: int = 300) -> np.ndarray:
    """Actions of the task's scripted controller over one episode from seed 0 (a typical drive:
    random actions would mostly measure a vehicle lying on its roof)."""
    from traction.train.controllers import for_env

    env = gym.make(env_id)
    ctrl = for_env(env_id)
    obs, _ = env.reset(seed=0)
    actions = []
    for _ in range(steps):
        actions.append(ctrl(obs))
        obs, _, term, trunc, _ = env.step(actions[-1])
        if term or trunc:
            break
    env.close()
    return np.array(actions, dtype=np.float32)


def _replay(env, actions, seconds: float, step) -> tuple[float, list]:
    """Replay ``actions`` from seed 0 (resets untimed) for about ``seconds`` of timed
    ``step(env, action)`` calls; returns (steps per second, MuJoCo states along the way)."""
    timed, n, states = 0.0, 0, []
    while timed < seconds:
        env.reset(seed=0)
        for i, a in enumerate(actions):
            t = time.perf_counter()
            step(env, a)
            timed += time.perf_counter() - t
            n += 1
            if i % 25 == 0 and len(states) < 40:
                states.append(_snapshot([env.unwrapped]))
    return n / timed, states


@jit
def _bare_loop(n_substeps, functions, models, datas) -> None:
    """The compiled substep loop of ``envs/physics.py`` without the vehicle: ``mj_step1`` for
    every world, then ``mj_step2`` for every world (applied forces left as they are)."""
    for _ in range(n_substeps):
        for i in range(models.shape[0]):
            _call_step(functions[0], models[i], datas[i])
        for i in range(models.shape[0]):
            _call_step(functions[1], models[i], datas[i])


def bare_mujoco(models: list, snapshots: list, seconds: float) -> float:
    """World-substeps per second of bare MuJoCo: the worlds ``models`` restored to each snapshot
    (one ``(qpos, qvel, xfrc_applied)`` per world) and run for 100 substeps with those chassis
    forces held, in the same compiled loop the environments use (no Python per substep)."""
    datas = [mujoco.MjData(m) for m in models]
    addr = (np.array([m._address for m in models], np.int64),
            np.array([d._address for d in datas], np.int64))
    timed, n = 0.0, 0
    while timed < seconds:
        for snapshot in snapshots:
            for m, d, (qpos, qvel, xfrc) in zip(models, datas, snapshot, strict=True):
                mujoco.mj_resetData(m, d)
                d.qpos[:], d.qvel[:], d.xfrc_applied[:] = qpos, qvel, xfrc
            t = time.perf_counter()
            _bare_loop(100, STEP_FUNCTIONS, *addr)
            timed += time.perf_counter() - t
            n += 100 * len(models)
    return n / timed


def _snapshot(envs) -> list:
    return [(e.data.qpos.copy(), e.data.qvel.copy(), e.data.xfrc_applied.copy()) for e in envs]


@jit
def _repeat_update(k, packed, rows, friction, dt, gravity, active):
    work = scratch(packed.wheel.shape[1])          # once per call, as in the physics loop
    for _ in range(k):                             # passed as the physics loop passes them
        step_batch_with(borrow_packed(packed), borrow_rows(rows), borrow(friction), dt, gravity,
                        borrow(active), work)


def vehicle_update(env, n_vehicles: int, seconds: float) -> float:
    """Microseconds per vehicle per substep of the compiled update on the env's inputs."""
    sim = env.sim
    o = sim.rows
    rep = lambda a: np.ascontiguousarray(np.repeat(a, n_vehicles, axis=0))  # noqa: E731
    rows = Rows(rep(o.state.wheel), rep(o.state.vehicle), rep(o.state.gears),
                rep(o.commands.vehicle), rep(o.commands.wheel), rep(o.kin), rep(o.hits),
                rep(o.outputs.wheel), rep(o.outputs.vehicle))
    args = (stack([sim.params.packed] * n_vehicles), rows,     # (a record row per vehicle, as
            rep(sim.friction_table.values[None]), sim.dt, sim.gravity,     # in a world)
            np.ones(n_vehicles, np.bool_))
    k = 1000 if n_vehicles == 1 else 20
    with first_compile(_repeat_update, "the benchmark's update loop"):
        _repeat_update(0, *args)                    # compiles or loads it, untimed
    rate = max(_rate(lambda: _repeat_update(k, *args), seconds / ROUNDS) for _ in range(ROUNDS))
    return 1e6 / (rate * k) / n_vehicles


def _physics_of(env):
    """``step(env, action)`` running the physics of one control step of ``env`` (check and map
    the action, the substeps); bound once, so the timing holds no walk through Gymnasium's
    wrappers to the unwrapped env (0.3-0.5 us per control step)."""
    physics = env.unwrapped.step_physics
    return lambda _, a: physics(a)


#: paired costs: a snapshot every this many steps of the drive, timed this many times each, in
#: this many sweeps over all the snapshots (a slow spell of the machine then has to recur at the
#: same snapshot in every sweep to move its minimum)
PAIR_EVERY, PAIR_REPEATS, PAIR_SWEEPS = 10, 40, 4
#: every rate is the best of this many rounds; a round measures each quantity once, so a slow
#: moment of a shared machine hits a round's measurements alike instead of one ratio's side
ROUNDS = 3


class _Snapshot:
    """What one control step's physics reads and writes in an unwrapped env: MuJoCo's integration
    state and the vehicle's arrays (a light restore that keeps the caches warm, unlike
    ``set_state``, which also copies the terrain)."""

    SPEC = mujoco.mjtState.mjSTATE_INTEGRATION

    def __init__(self, env):
        self.env, sim = env, env.sim
        self.mj = np.empty(mujoco.mj_stateSize(env.model, self.SPEC))
        mujoco.mj_getState(env.model, env.data, self.mj, self.SPEC)
        self.arrays = [sim.state.wheel, sim.state.vehicle, sim.state.gears, sim.commands.vehicle,
                       sim.commands.wheel, sim.outputs.wheel, sim.outputs.vehicle,
                       sim.wheel_angle, sim.rows.now]
        self.saved = [a.copy() for a in self.arrays]

    def restore(self) -> None:
        mujoco.mj_setState(self.env.model, self.env.data, self.mj, self.SPEC)
        for a, v in zip(self.arrays, self.saved, strict=True):
            a[...] = v


def _restored_time(snaps: list, fn, *args) -> float:
    """Seconds of ``fn(*args)`` right after restoring every snapshot."""
    for snap in snaps:
        snap.restore()
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


def paired_cost(envs: list, physics, advance, actions, every: int, repeats: int,
                sweeps: int = PAIR_SWEEPS) -> float:
    """Physics cost relative to bare MuJoCo, paired state by state (robust to a shared machine's
    drifting speed, which moves the ratio of two separately timed rates by up to +-0.3).

    ``advance(action)`` replays the actions (from a reset the caller made) through the unwrapped
    envs ``envs``, and all of them are snapshotted at every ``every``-th step. Then, in
    ``sweeps`` sweeps over the snapshots, ``repeats // sweeps`` times each (at least once):
    restore and time ``physics(action)`` (the physics of one control step), restore and time
    bare MuJoCo for as many substeps on the same MjData (chassis forces held as the last step
    left them), in turn, the one timed first alternating. The minimum of each per snapshot,
    summed over the snapshots, gives the ratio: the minimum is the run nothing interrupted.
    Timing a snapshot in separate sweeps, and either side first, keeps a slow spell of the
    machine (which can last the few milliseconds of a snapshot's repeats) from counting on one
    side only (seen: single ratios 0.1-0.2 off in the vector env, both ways, with 5 repeats in
    one go). The envs are left at the last snapshot."""
    addr = (np.array([e.model._address for e in envs], np.int64),
            np.array([e.data._address for e in envs], np.int64))
    n_substeps = envs[0].n_substeps
    points = []
    for i, a in enumerate(actions):
        if i % every == 0:
            points.append(([_Snapshot(e) for e in envs], a))
        advance(a)
    def bare(snaps) -> float:
        return _restored_time(snaps, _bare_loop, n_substeps, STEP_FUNCTIONS, *addr)

    best_p, best_b = [float("inf")] * len(points), [float("inf")] * len(points)
    for sweep in range(sweeps):
        for j, (snaps, a) in enumerate(points):
            for r in range(max(repeats // sweeps, 1)):
                bare_first = (r + sweep) % 2 == 1
                if bare_first:
                    best_b[j] = min(best_b[j], bare(snaps))
                best_p[j] = min(best_p[j], _restored_time(snaps, physics, a))
                if not bare_first:
                    best_b[j] = min(best_b[j], bare(snaps))
    for snap in points[-1][0]:
        snap.restore()
    return sum(best_p) / sum(best_b)


def single_env(env_id: str, actions: np.ndarray, seconds: float) -> dict:
    env = gym.make(env_id)
    u = env.unwrapped
    part = seconds / ROUNDS
    physics_step = _physics_of(env)
    _, states = _replay(env, actions, part, physics_step)        # warm-up; states along the drive
    steps, physics, bare = 0.0, 0.0, 0.0
    for _ in range(ROUNDS):
        steps = max(steps, _replay(env, actions, part, lambda e, a: e.step(a))[0])
        physics = max(physics, _replay(env, actions, part, physics_step)[0] * u.n_substeps)
        bare = max(bare, bare_mujoco([u.model], states, part))
    env.reset(seed=0)
    paired = paired_cost([u], u.step_physics, env.step, actions, PAIR_EVERY,
                         PAIR_REPEATS if seconds >= 1.0 else 3)
    result = {"env_steps_per_s": steps, "sim_s_per_wall_s": steps * u.control_dt,
              "physics_substeps_per_s": physics, "bare_mujoco_substeps_per_s": bare,
              "physics_substep_cost_vs_bare_mujoco": bare / physics,
              "physics_substep_cost_vs_bare_mujoco_paired": paired,
              "env_step_cost_per_substep_vs_bare_mujoco": bare / (steps * u.n_substeps),
              "vehicle_update_us_single": vehicle_update(u, 1, seconds),
              "vehicle_update_us_per_vehicle_batched_64": vehicle_update(u, 64, seconds)}
    env.close()
    return result


def contact_models(env_id: str, actions: np.ndarray, seconds: float) -> dict:
    """Env steps per second of the task with each wheel contact model (``contact.model``:
    ``vehicle_model.footprint``), replaying the same actions, measured in turn in each of
    ``ROUNDS`` rounds (best of each), and the footprint's cost as a ratio to one ray's."""
    vehicle = gym.make(env_id).unwrapped.vehicle
    envs = {model: gym.make(env_id, vehicle=dataclasses.replace(
        vehicle, contact=ContactParams(model=model))) for model in MODELS}
    rates = {model: 0.0 for model in envs}
    for _ in range(ROUNDS):
        for model, env in envs.items():
            rates[model] = max(rates[model], _replay(env, actions, seconds / ROUNDS,
                                                     lambda e, a: e.step(a))[0])
    for env in envs.values():
        env.close()
    return {"env_steps_per_s": rates, "footprint_cost_vs_ray": rates["ray"] / rates["footprint"]}


def randomisation(env_id: str, actions: np.ndarray, seconds: float) -> dict:
    """Env steps per second of the task without randomisation; with every vehicle and friction
    key drawn at its nominal value (the draws' own cost: the same physics); with the ``mild``
    preset's vehicle and friction draws (other cars: the same actions drive them elsewhere, at
    another cost of the physics); and with the whole ``mild`` preset (also action and
    observation noise); each replaying the same actions as whole episodes, the reset (where a
    draw happens) timed with them, in turn in each of ``ROUNDS`` rounds (best of each); and
    each one's rate per CPU second of the process (what the settings cost, whatever else the
    machine runs: the env steps in this thread alone) as a share of the rate without."""
    from traction.envs.randomize import AGENT_KEYS, KEYS, NOMINAL, PRESETS

    nominal = {k: (NOMINAL[k], NOMINAL[k]) for k in KEYS if k not in AGENT_KEYS}
    physics = {k: v for k, v in PRESETS["mild"].items() if k not in AGENT_KEYS}
    envs = {name: gym.make(env_id, randomize=spec)
            for name, spec in (("none", None), ("nominal draws", nominal),
                               ("mild, vehicle", physics), ("mild", "mild"))}
    wall, cpu = dict.fromkeys(envs, 0.0), dict.fromkeys(envs, 0.0)

    def episodes(env, seconds):
        n, start, c = 0, time.perf_counter(), time.process_time()
        while (elapsed := time.perf_counter() - start) < seconds:
            env.reset()
            for a in actions:
                env.step(a)
            n += len(actions)
        return n / elapsed, n / max(time.process_time() - c, 1e-9)
    for env in envs.values():
        env.reset(seed=0)
    for _ in range(ROUNDS):
        for name, env in envs.items():
            w, c = episodes(env, seconds / ROUNDS)
            wall[name], cpu[name] = max(wall[name], w), max(cpu[name], c)
    costs = randomisation_costs(env_id, actions, envs["none"], envs["nominal draws"])
    for env in envs.values():
        env.close()
    return {"episode_steps": len(actions), "env_steps_per_s": wall, "env_steps_per_cpu_s": cpu,
            "share_of_none": {k: v / cpu["none"] for k, v in cpu.items()}, **costs}


def randomisation_costs(env_id: str, actions: np.ndarray, plain, drawn, reps: int = 30) -> dict:
    """The randomisation's own work, timed apart from the episodes (its few percent drown in
    the rates' run-to-run noise): a reset of ``drawn`` (every key drawn at its nominal value)
    against one of ``plain`` (ms), and a step with action and observation noise against one
    without (us: noise of 1e-12, so that the physics is the same); interleaved, best of
    ``ROUNDS``, CPU time. ``share_of_episode``: a whole episode's rate with both costs as a
    share of the rate without them (the ``mild`` preset's cost, less its other cars')."""
    noisy = gym.make(env_id, randomize={"action_noise": (1e-12, 1e-12),
                                        "observation_noise": (1e-12, 1e-12)})
    quiet = gym.make(env_id)
    best: dict[str, float] = {}

    def timed(name, f, n):
        c = time.process_time()
        for _ in range(n):
            f()
        best[name] = min(best.get(name, math.inf), (time.process_time() - c) / n)

    def episode(env):
        env.reset(seed=1)
        for a in actions:
            env.step(a)
    for env in (noisy, quiet):
        env.reset(seed=0)
    for _ in range(ROUNDS):
        timed("reset", plain.reset, reps)
        timed("reset, draw", drawn.reset, reps)
        timed("episode, noise", lambda: episode(noisy), 1)
        timed("episode", lambda: episode(quiet), 1)
    noisy.close()
    quiet.close()
    draw = best["reset, draw"] - best["reset"]
    noise = (best["episode, noise"] - best["episode"]) / len(actions)
    episode_s = best["reset"] + best["episode"]
    return {"draw_ms": 1e3 * draw, "noise_us_per_step": 1e6 * noise,
            "share_of_episode": episode_s / (episode_s + draw + len(actions) * noise)}


#: the observation modes :func:`observation_modes` times
OBS_MODES = ("state", "pixels", "state+lidar")


def observation_modes(env_id: str, actions: np.ndarray, seconds: float,
                      sizes: tuple = (1, 16)) -> dict:
    """Env steps per second (wall, and per CPU second of the process: a software OpenGL draws
    in threads of its own) in each of :data:`OBS_MODES` (default ``obs_options``: 84 x 84
    pixels from the overhead camera; 2 x 32 lidar beams), in a single env (size 1) and in native
    vector envs of ``sizes`` worlds, each replaying the scripted actions as whole episodes
    (resets timed), the modes in turn in each of ``ROUNDS`` rounds (best of each); and each
    mode's rate as a share of the state env's."""
    from traction.envs import make_vector

    out = {}
    for n in sizes:
        envs = {mode: gym.make(env_id, obs_mode=mode) if n == 1 else
                make_vector(env_id, n, obs_mode=mode) for mode in OBS_MODES}
        wall, cpu = dict.fromkeys(OBS_MODES, 0.0), dict.fromkeys(OBS_MODES, 0.0)
        batch = actions if n == 1 else np.repeat(actions[:, None], n, axis=1)

        def episodes(env, seconds, batch=batch, n=n):
            steps, start, c = 0, time.perf_counter(), time.process_time()
            while (elapsed := time.perf_counter() - start) < seconds:
                env.reset()
                for a in batch:
                    env.step(a)
                steps += len(batch) * n
            return steps / elapsed, steps / max(time.process_time() - c, 1e-9)
        for env in envs.values():
            env.reset(seed=0)
        for _ in range(ROUNDS):
            for mode, env in envs.items():
                w, c = episodes(env, seconds / ROUNDS)
                wall[mode], cpu[mode] = max(wall[mode], w), max(cpu[mode], c)
        for env in envs.values():
            env.close()
        out[str(n)] = {"env_steps_per_s": wall, "env_steps_per_cpu_s": cpu,
                       "share_of_state": {k: v / wall["state"] for k, v in wall.items()}}
    return out


def vector_env(env_id: str, n: int, actions: np.ndarray, seconds: float, bare: float,
               threads: int = 2) -> dict:
    """The native vector env replaying the scripted actions in every sub-environment (each on
    its own terrain). Its physics cost per vehicle-substep is compared with the single-world
    bare MuJoCo figure (``bare``) and with bare MuJoCo stepping the same ``n`` worlds from
    states along the replay (``n`` terrains do not share the caches that one world has). Its
    env steps per second are also measured with the physics in ``threads`` threads."""
    venv = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point")
    threaded = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point",
                            num_threads=threads)
    u = venv.unwrapped
    batch = np.repeat(actions[:, None], n, axis=1)
    snapshots = []

    def timed(step, v=venv) -> float:
        total, count = 0.0, 0
        while total < seconds:
            v.reset(seed=0)
            for i, a in enumerate(batch):
                t = time.perf_counter()
                step(a)
                total += time.perf_counter() - t
                count += 1
                if v is venv and i % 25 == 0 and len(snapshots) < 12:
                    snapshots.append(_snapshot(u.envs))
        return count * n / total

    every = np.ones(n, np.bool_)

    def physics(a) -> None:
        u.step_physics(a, every)
    seconds /= ROUNDS
    timed(physics)                                 # warm-up; states along the drive
    steps, substeps, bare_n, steps_threaded = 0.0, 0.0, 0.0, 0.0
    for _ in range(ROUNDS):
        steps = max(steps, timed(venv.step))
        steps_threaded = max(steps_threaded, timed(threaded.step, threaded))
        substeps = max(substeps, timed(physics) * u.n_substeps)
        bare_n = max(bare_n, bare_mujoco([e.model for e in u.envs], snapshots, seconds))
    venv.reset(seed=0)
    paired = paired_cost(u.envs, physics, venv.step, batch, 5 * PAIR_EVERY,
                         PAIR_REPEATS // 2 if seconds >= 0.3 else 2)
    venv.close()
    threaded.close()
    return {"env_steps_per_s": steps, "threads": threaded.unwrapped.world.threads,   # (<= n)
            "env_steps_per_s_threaded": steps_threaded, "physics_vehicle_substeps_per_s": substeps,
            "physics_cost_per_vehicle_substep_vs_bare_mujoco": bare / substeps,
            "bare_mujoco_same_worlds_substeps_per_s": bare_n,
            "physics_cost_per_vehicle_substep_vs_bare_same_worlds": bare_n / substeps,
            "physics_cost_per_vehicle_substep_vs_bare_same_worlds_paired": paired}


#: paired training rounds (each: one PPO iteration, then the env alone for as many steps)
TRAIN_ROUNDS = 6


def training(env_id: str, rounds: int = TRAIN_ROUNDS, overrides: dict | None = None) -> dict:
    """End-to-end PPO training speed with the shipped hyperparameters (``overrides`` on top)
    against the env's own: in each of ``rounds`` rounds, one timed training iteration (rollout
    and update, as ``model.learn`` runs them: policy passes, the SB3 adapter, VecMonitor,
    VecNormalize, the rollout buffer; without the evaluation and checkpoint callbacks, which
    run every 20,000 and 50,000 steps), its update timed on its own, then the native vector env
    of as many worlds and physics threads stepping the iteration's actions (clipped to the
    action space, as the training clips them; Gymnasium's API, no SB3). Rates are the best of
    the rounds; the learner's share is the update's part of the training time, summed over the
    rounds. ``train_vs_env_cpu`` is the same ratio in the process's CPU time summed over the
    rounds: on a shared machine, time spent waiting for a core counts on neither side (with
    one physics thread and one torch thread the process's CPU time is its one thread's work)."""
    import tempfile

    import torch

    from traction.train import train

    with tempfile.TemporaryDirectory() as tmp:
        p = train.prepare(env_id, "ppo", 10**9, 0, Path(tmp) / "run", overrides or {}, {},
                          threads=1)
    model, run = p["model"], p["run"]
    model.tensorboard_log = None                       # no TensorBoard files
    n, per = run["n_envs"], model.n_steps * run["n_envs"]
    env = traction.envs.make_vector(train.traction_spec(env_id).id, n,
                                    num_threads=run["sim_threads"])
    env.reset(seed=0)
    update = [0.0]
    learner = model.train

    def timed_update():
        t = time.perf_counter()
        learner()
        update[0] += time.perf_counter() - t
    model.train = timed_update
    model.learn(per, progress_bar=False)               # warm-up (first reset, first update)
    best_train = best_env = float("inf")
    total, update[0], cpu_train, cpu_env = 0.0, 0.0, 0.0, 0.0
    for _ in range(rounds):
        t, c = time.perf_counter(), time.process_time()
        model.learn(per, progress_bar=False, reset_num_timesteps=False)
        took = time.perf_counter() - t
        cpu_train += time.process_time() - c
        best_train, total = min(best_train, took), total + took
        actions = np.asarray(model.rollout_buffer.actions)       # (flattened: world-major)
        actions = actions.reshape(n, model.n_steps, -1).swapaxes(0, 1)
        actions = np.clip(actions, env.single_action_space.low,
                          env.single_action_space.high).astype(np.float32)
        t, c = time.perf_counter(), time.process_time()
        for a in actions:
            env.step(a)
        best_env = min(best_env, time.perf_counter() - t)
        cpu_env += time.process_time() - c
    p["venv"].close()
    p["eval_env"].close()
    env.close()
    return {"n_envs": n, "sim_threads": run["sim_threads"],
            "torch_threads": torch.get_num_threads(), "train_steps_per_s": per / best_train,
            "env_steps_per_s": per / best_env, "train_vs_env": best_env / best_train,
            "train_vs_env_cpu": cpu_env / cpu_train, "learner_share": update[0] / total}


def startup_seconds(env_id: str) -> float:
    """``import traction.envs`` + first ``gym.make`` + reset in a fresh interpreter."""
    code = ("import time; t = time.perf_counter(); import gymnasium as gym, traction.envs; "
            f"e = gym.make({env_id!r}); e.reset(seed=0); print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def reference_env(env_id: str, seconds: float) -> dict | None:
    """Gymnasium's ``env_id`` stepped with random actions: ``{"env_steps_per_s",
    "env_steps_per_cpu_s"}``, None when it is not installed."""
    try:
        env = gym.make(env_id)
    except Exception:  # noqa: BLE001 - not installed (box2d, mujoco extras): skip
        return None
    env.reset(seed=0)

    def step():
        _, _, term, trunc, _ = env.step(env.action_space.sample())
        if term or trunc:
            env.reset()
    c, t = time.process_time(), time.perf_counter()
    rate = _rate(step, seconds)
    cpu = rate * (time.perf_counter() - t) / max(time.process_time() - c, 1e-9)
    env.close()
    return {"env_steps_per_s": rate, "env_steps_per_cpu_s": cpu}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description="Traction performance benchmark.")
    ap.add_argument("--out", type=Path, default=Path("runs/perf"))
    ap.add_argument("--quick", action="store_true", help="short timings, small vector envs (CI)")
    args = ap.parse_args(argv)
    try:
        writable_dir(args.out)              # before minutes of measurements, not after
    except ValueError as e:
        ap.error(str(e))
    seconds = 0.2 if args.quick else 3.0
    sizes = (2, 4) if args.quick else (16, 64)
    threads = max(len(os.sched_getaffinity(0)), 2)      # every core this process may use
    try:
        import stable_baselines3  # noqa: F401
        has_sb3 = True
    except ImportError:                                  # (the train extra) no training figures
        has_sb3 = False
    report = {"machine": {"python": platform.python_version(), "mujoco": mujoco.__version__,
                          "numpy": np.__version__, "processor": platform.processor()},
              "seconds_per_measurement": seconds, "tasks": {}, "reference": {}}
    for env_id in traction.envs.ENV_IDS:
        actions = scripted_actions(env_id, 40 if args.quick else 300)
        r = single_env(env_id, actions, seconds)
        r["vector"] = {str(n): vector_env(env_id, n, actions, seconds,
                                          r["bare_mujoco_substeps_per_s"], threads)
                       for n in sizes}
        r["startup_s"] = startup_seconds(env_id)
        r["contact"] = contact_models(env_id, actions, seconds)
        r["randomisation"] = randomisation(env_id, actions, seconds)
        r["observation_modes"] = observation_modes(env_id, actions, seconds,
                                                   (1, 2) if args.quick else (1, 16))
        if has_sb3:
            r["training"] = training(env_id, 2 if args.quick else TRAIN_ROUNDS,
                                     {"n_envs": 4, "n_steps": 16} if args.quick else None)
        report["tasks"][env_id] = r
    for ref in ("HalfCheetah-v5", "CarRacing-v3"):
        report["reference"][ref] = reference_env(ref, seconds)
    print(table(report))                # the results are on screen even if writing fails
    (args.out / "perf.json").write_text(json.dumps(report, indent=2))
    return report


def table(report: dict) -> str:
    """Markdown tables of a report: single env, vector envs, references."""
    rows = ["| task | env steps/s | sim s / wall s | bare MuJoCo substeps/s | physics substep vs bare "
            "| physics vs bare, paired | env step per substep vs bare | update us (1) "
            "| update us/vehicle (64) | startup s |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for env_id, r in report["tasks"].items():
        rows.append(f"| {env_id} | {r['env_steps_per_s']:.0f} | {r['sim_s_per_wall_s']:.1f} | "
                    f"{r['bare_mujoco_substeps_per_s']:.0f} | "
                    f"{r['physics_substep_cost_vs_bare_mujoco']:.2f}x | "
                    f"{r['physics_substep_cost_vs_bare_mujoco_paired']:.2f}x | "
                    f"{r['env_step_cost_per_substep_vs_bare_mujoco']:.2f}x | "
                    f"{r['vehicle_update_us_single']:.2f} | "
                    f"{r['vehicle_update_us_per_vehicle_batched_64']:.2f} | {r['startup_s']:.2f} |")
    rows += ["", "| task | vector N | env steps/s | physics per vehicle-substep vs bare (1 world) "
             "| bare MuJoCo, same N worlds: substeps/s | physics vs bare (same N worlds) "
             "| same, paired | env steps/s, physics in threads |",
             "|---|---|---|---|---|---|---|---|"]
    for env_id, r in report["tasks"].items():
        for n, v in r["vector"].items():
            rows.append(f"| {env_id} | {n} | {v['env_steps_per_s']:.0f} | "
                        f"{v['physics_cost_per_vehicle_substep_vs_bare_mujoco']:.2f}x | "
                        f"{v['bare_mujoco_same_worlds_substeps_per_s']:.0f} | "
                        f"{v['physics_cost_per_vehicle_substep_vs_bare_same_worlds']:.2f}x | "
                        f"{v['physics_cost_per_vehicle_substep_vs_bare_same_worlds_paired']:.2f}x | "
                        f"{v['env_steps_per_s_threaded']:.0f} ({v['threads']} threads) |")
    rows += ["", "| task | env steps/s, one ray per wheel | env steps/s, footprint "
             "| footprint cost vs one ray |", "|---|---|---|---|"]
    for env_id, r in report["tasks"].items():
        c = r["contact"]
        rows.append(f"| {env_id} | {c['env_steps_per_s']['ray']:.0f} | "
                    f"{c['env_steps_per_s']['footprint']:.0f} | "
                    f"{c['footprint_cost_vs_ray']:.2f}x |")
    rows += ["", "| task | steps per episode | env steps per CPU s, no randomisation | every "
             "key drawn at its nominal value | mild, vehicle draws | mild (with noise) | a draw "
             "(ms) | noise (us a step) | episode rate with both |",
             "|---|---|---|---|---|---|---|---|---|"]
    for env_id, r in report["tasks"].items():
        d = r["randomisation"]
        e, share = d["env_steps_per_cpu_s"], d["share_of_none"]
        rows.append(f"| {env_id} | {d['episode_steps']} | {e['none']:.0f} | "
                    + " | ".join(f"{e[k]:.0f} ({100 * share[k]:.0f} %)"
                                 for k in ("nominal draws", "mild, vehicle", "mild"))
                    + f" | {d['draw_ms']:.2f} | {d['noise_us_per_step']:.1f} | "
                    f"{100 * d['share_of_episode']:.1f} % |")
    rows += ["", "| task | worlds | physics threads | torch threads | env steps/s (native vector "
             "env) | PPO training steps/s | training / env | same, CPU time | learner share |",
             "|---|---|---|---|---|---|---|---|---|"]
    for env_id, r in report["tasks"].items():
        t = r.get("training")
        if t is not None:
            rows.append(f"| {env_id} | {t['n_envs']} | {t['sim_threads']} | {t['torch_threads']} "
                        f"| {t['env_steps_per_s']:.0f} | {t['train_steps_per_s']:.0f} | "
                        f"{100 * t['train_vs_env']:.0f} % | {100 * t['train_vs_env_cpu']:.0f} % | "
                        f"{100 * t['learner_share']:.0f} % |")
    racing = (report["reference"].get("CarRacing-v3") or {}).get("env_steps_per_cpu_s")
    rows += ["", "| task | worlds | obs_mode | env steps/s | share of state | env steps per CPU s "
             "| per CPU s vs CarRacing-v3 |", "|---|---|---|---|---|---|---|"]
    for env_id, r in report["tasks"].items():
        for n, o in r.get("observation_modes", {}).items():
            for mode, rate in o["env_steps_per_s"].items():
                cpu = o["env_steps_per_cpu_s"][mode]
                vs = f"{cpu / racing:.1f}x" if racing else "-"
                rows.append(f"| {env_id} | {n} | {mode} | {rate:.0f} | "
                            f"{100 * o['share_of_state'][mode]:.0f} % | {cpu:.0f} | {vs} |")
    rows += ["", "| reference | env steps/s | env steps per CPU s |", "|---|---|---|"]
    for ref, rate in report["reference"].items():
        rows.append(f"| {ref} | not installed | |" if rate is None else
                    f"| {ref} | {rate['env_steps_per_s']:.0f} | "
                    f"{rate['env_steps_per_cpu_s']:.0f} |")
    return "\n".join(rows)


if __name__ == "__main__":
    main()
