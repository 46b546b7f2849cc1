"""Golden rollouts: every task (single env, native vector env in one and in two threads, the
vector env's worlds replayed as single envs, and Drift with its action mapped in Python) and
every vehicle preset (on a plain VehicleSim scene), driven through a few hundred steps of fixed,
seeded actions, hashed. Cases that are one rollout computed two ways must also hash alike.

A refactoring that claims to leave the physics and the tasks as they were must keep every hash
(sha256 of the observations, rewards, terminations, and after every step the whole MjData
``qpos``/``qvel`` and the vehicle state, commands and output arrays). A change meant to alter a
rollout re-records them, and its commit says why::

    .venv/bin/python tests/test_golden.py --record

The hashes hold on one machine and one set of versions (numba, LLVM and the processor decide
whether a multiply-add is fused); the file records the versions they were made with, and the
test is skipped on others (re-record there to compare two commits).
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from pathlib import Path

import gymnasium as gym
import mujoco
import numba
import numpy as np
import pytest

import traction.envs
from traction.envs import TractionVectorEnv, VehicleSim, actions
from traction.envs.drift_v1 import DriftEnv
from traction.scenes import build_scene
from traction.vehicle_model import preset_names

GOLDEN = Path(__file__).with_name("golden.json")
STEPS = 300
VECTOR_WORLDS = 3


def versions() -> dict:
    """What the hashes depend on besides the code."""
    return {"python": platform.python_version(), "numba": numba.__version__,
            "numpy": np.__version__, "mujoco": mujoco.__version__,
            "machine": platform.machine(), "processor": _cpu()}


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _actions(n_channels: int, seed: int, worlds: int = 1) -> np.ndarray:
    """``STEPS`` actions per world: a seeded random walk in [-1, 1] (smooth enough that the
    vehicles drive, turn and brake rather than jitter in place), float32."""
    rng = np.random.default_rng(seed)
    kicks = rng.normal(0.0, 0.35, (STEPS, worlds, n_channels))
    a, out = np.zeros((worlds, n_channels)), []
    for k in kicks:
        a = np.clip(0.8 * a + k, -1.0, 1.0)
        out.append(a.copy())
    return np.array(out, np.float32)


def _state(h, sims) -> None:
    for sim in sims:
        for a in (sim.data.qpos, sim.data.qvel, sim.state.wheel, sim.state.vehicle,
                  sim.state.gears, sim.commands.vehicle, sim.commands.wheel, sim.outputs.wheel,
                  sim.outputs.vehicle):
            h.update(np.ascontiguousarray(a).tobytes())


def single_env(env_id: str) -> str:
    if env_id == "python-mapped Drift":
        env = gym.wrappers.TimeLimit(PythonMappedDrift(), 120)
    else:
        env = gym.make(env_id, max_episode_steps=120)     # episodes end: resets are covered
    sim = env.unwrapped.sim
    h = hashlib.sha256()
    obs, _ = env.reset(seed=11)
    h.update(obs.tobytes())
    for a in _actions(env.action_space.shape[0], 3)[:, 0]:
        obs, reward, term, trunc, _ = env.step(a)
        h.update(obs.tobytes() + np.float64(reward).tobytes() + bytes([term, trunc]))
        _state(h, [sim])
        if term or trunc:
            obs, _ = env.reset()
            h.update(obs.tobytes())
    env.close()
    return h.hexdigest()


class PythonMappedDrift(DriftEnv):
    """Drift-v1 with its action mapped in Python (a task without a compiled action map)."""

    action_map = actions.NONE

    def apply_action(self, a):
        self.sim.set_commands(steer=a[0], throttle=(a[1] + 1) / 2, brake=(a[2] + 1) / 2,
                              handbrake=(a[3] + 1) / 2)


def _step_bytes(obs, reward, term, trunc) -> bytes:
    return obs.tobytes() + np.float64(reward).tobytes() + bytes([bool(term), bool(trunc)])


def _worlds_digest(hashes: list) -> str:
    """One hash of every world's own (a world's rollout hashed alone, so that single envs can
    give the same)."""
    return hashlib.sha256(b"".join(h.digest() for h in hashes)).hexdigest()


def vector_env(env_id: str, threads: int = 1) -> str:
    if env_id == "python-mapped Drift":
        venv = TractionVectorEnv(PythonMappedDrift, VECTOR_WORLDS, max_episode_steps=100,
                                 num_threads=threads)
    else:
        venv = gym.make_vec(env_id, num_envs=VECTOR_WORLDS, max_episode_steps=100,
                            vectorization_mode="vector_entry_point", num_threads=threads)
    sims = [e.sim for e in venv.unwrapped.envs]
    hashes = [hashlib.sha256() for _ in sims]
    obs, _ = venv.reset(seed=21)
    for i, h in enumerate(hashes):
        h.update(obs[i].tobytes())
    for a in _actions(venv.single_action_space.shape[0], 4, VECTOR_WORLDS):
        obs, reward, term, trunc, _ = venv.step(a)
        for i, h in enumerate(hashes):
            h.update(_step_bytes(obs[i], reward[i], term[i], trunc[i]))
            _state(h, [sims[i]])
    venv.close()
    return _worlds_digest(hashes)


def single_envs_as_worlds(env_id: str) -> str:
    """:func:`vector_env`'s rollout from single envs, one per world: world ``i`` seeded
    ``21 + i``, its actions, and the vector env's autoreset (``NEXT_STEP``: the step after an
    episode's end resets the world, ignores its action and returns reward 0, not ended)."""
    envs = [gym.wrappers.TimeLimit(PythonMappedDrift(), 100) if env_id == "python-mapped Drift"
            else gym.make(env_id, max_episode_steps=100) for _ in range(VECTOR_WORLDS)]
    actions = _actions(envs[0].action_space.shape[0], 4, VECTOR_WORLDS)
    hashes = []
    for i, env in enumerate(envs):
        sim, h = env.unwrapped.sim, hashlib.sha256()
        obs, _ = env.reset(seed=21 + i)
        h.update(obs.tobytes())
        ended = False
        for a in actions[:, i]:
            if ended:
                obs, _ = env.reset()
                reward, term, trunc, ended = 0.0, False, False, False
            else:
                obs, reward, term, trunc, _ = env.step(a)
                ended = term or trunc
            h.update(_step_bytes(obs, reward, term, trunc))
            _state(h, [sim])
        env.close()
        hashes.append(h)
    return _worlds_digest(hashes)


#: each preset's plain scene (terrain, its knobs) and physics step
SCENES = {"sedan": ("slope", {"angle_deg": 8.0, "roughness": 0.05}),
          "sedan_rwd": ("skidpad", {}),
          "tank": ("arena", {}),
          "truck_6x6": ("rough_hill", {"difficulty": 0.6})}


def _commands(sim, a) -> dict:
    """One step's commands from a 4-channel action, for the vehicle's drive kind."""
    kind = sim.params.differential.type
    if kind == "tank":
        return {"thrust": [[float(a[0]), float(a[1])]], "brake": max(float(a[2]), 0.0),
                "throttle": max(abs(float(a[0])), abs(float(a[1])))}
    if kind == "direct":                            # no engine: torque at the rear wheels
        return {"steer": float(a[0]), "wheel_torque": [[0.0, 0.0, 600 * a[1], 600 * a[1]]],
                "brake": max(float(a[2]), 0.0) ** 2}
    return {"steer": float(a[0]), "throttle": (float(a[1]) + 1) / 2,
            "brake": max(float(a[2]), 0.0) ** 2, "handbrake": float(a[3] > 0.9)}


def preset_scene(preset: str) -> str:
    terrain, knobs = SCENES[preset]
    sim = VehicleSim(build_scene(preset, terrain, seed=5, physics_dt=0.004, **knobs))
    sim.reset()
    h = hashlib.sha256()
    for a in _actions(4, 6)[:, 0]:
        sim.set_commands(**_commands(sim, a))
        sim.step(5)
        _state(h, [sim])
        h.update(sim.now.tobytes() + bytes([sim.diverged()]))
    return h.hexdigest()


def presets() -> list[str]:
    return preset_names()


def cases() -> dict:
    """Name -> the function computing its hash."""
    out = {}
    for env_id in (*traction.envs.ENV_IDS, "python-mapped Drift"):
        out[f"single {env_id}"] = lambda e=env_id: single_env(e)
        out[f"vector {env_id}"] = lambda e=env_id: vector_env(e)
        out[f"vector, 2 threads, {env_id}"] = lambda e=env_id: vector_env(e, 2)
        out[f"single envs as the vector's worlds, {env_id}"] = \
            lambda e=env_id: single_envs_as_worlds(e)
    for preset in presets():
        out[f"preset {preset}"] = lambda p=preset: preset_scene(p)
    return out


def _recorded() -> dict:
    return json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}


def test_every_preset_has_a_scene():
    assert sorted(SCENES) == presets(), "give a new preset a golden scene in SCENES"


@pytest.mark.parametrize("case", sorted(cases()))
def test_rollout_is_as_recorded(case):
    recorded = _recorded()
    if recorded.get("versions") != versions():
        pytest.skip(f"golden hashes recorded with {recorded.get('versions')}; re-record here: "
                    ".venv/bin/python tests/test_golden.py --record")
    assert case in recorded["hashes"], "re-record: .venv/bin/python tests/test_golden.py --record"
    assert cases()[case]() == recorded["hashes"][case], (
        f"{case}: the rollout changed (see {GOLDEN.name}'s note for changes made on purpose)")


def alike() -> list[tuple[str, str]]:
    """Pairs of cases that are one rollout computed two ways, so must hash alike: the vector env
    in one thread and in two, its worlds and single envs given their seeds and actions, and
    Drift's action mapped by its compiled map and in Python."""
    pairs = []
    for env_id in (*traction.envs.ENV_IDS, "python-mapped Drift"):
        pairs.append((f"vector {env_id}", f"vector, 2 threads, {env_id}"))
        pairs.append((f"vector {env_id}", f"single envs as the vector's worlds, {env_id}"))
    for kind in ("single", "vector"):
        pairs.append((f"{kind} Traction/Drift-v1", f"{kind} python-mapped Drift"))
    return pairs


@pytest.mark.parametrize(("case", "other"), alike())
def test_one_rollout_computed_two_ways_is_recorded_alike(case, other):
    """With each case checked against its recorded hash above, equal recorded hashes make the
    threaded vector env's rollouts bit for bit the one-thread ones, the vector env's worlds
    single envs', and the Python action map's the compiled one's."""
    hashes = _recorded()["hashes"]
    assert hashes[case] == hashes[other]


def record() -> None:
    hashes = {name: fn() for name, fn in sorted(cases().items())}
    GOLDEN.write_text(json.dumps({"versions": versions(), "hashes": hashes}, indent=1) + "\n")
    print(f"recorded {len(hashes)} rollouts in {GOLDEN}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit(f"usage: {sys.argv[0]} --record   (re-records {GOLDEN.name})")
    record()
