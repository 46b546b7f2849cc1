"""Copies and pickles: an environment rebuilt from its constructor's arguments and snapshot
replays the original bit for bit and steps on its own; objects holding MuJoCo addresses refuse
to be copied; specs pickle and serialise, so Gymnasium's async vector env can send them."""

import copy
import pickle
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from vehicle_variants import with_model

import traction.envs
import traction.vehicle_model as vm
from traction.envs.drift_v1 import DriftEnv
from traction.envs.tank_turn_v1 import TankTurnEnv
from traction.vehicle_model import tire_custom


def _actions(env, n, seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, env.action_space.shape).astype(np.float32) for _ in range(n)]


@pytest.mark.parametrize("env_id", traction.envs.ENV_IDS)
def test_deep_copies_and_pickles_replay_the_original_bit_for_bit_and_independently(env_id):
    env = gym.make(env_id, max_episode_steps=50)
    env.reset(seed=4)
    for a in _actions(env, 5, 0):
        env.step(a)
    copies = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    qpos = env.unwrapped.data.qpos.copy()
    for _ in range(3):                                       # the copies step on their own
        copies[0].step(env.action_space.sample())
    assert np.array_equal(env.unwrapped.data.qpos, qpos)
    copies[0] = copy.deepcopy(env)
    runs = [[e.step(a) for a in _actions(env, 20, 1)] for e in (env, *copies)]
    for run in runs[1:]:
        for (o1, r1, te1, tr1, i1), (o2, r2, te2, tr2, i2) in zip(runs[0], run, strict=True):
            assert np.array_equal(o1, o2) and r1 == r2 and (te1, tr1) == (te2, tr2)
            assert i1["reward_" + env.unwrapped.reward_names[0]] == \
                i2["reward_" + env.unwrapped.reward_names[0]]
    for c in copies:                        # the spec and the time limit's count come along
        assert c.spec.id == env_id and c.spec.max_episode_steps == 50
        assert c.unwrapped.np_random_seed == 4
        assert c.get_wrapper_attr("_elapsed_steps") == env.get_wrapper_attr("_elapsed_steps") == 25


def test_a_copy_keeps_the_loaded_vehicle_and_settings_changed_since(tmp_path, monkeypatch):
    """The vehicle file is not read again (edited or out of reach after a chdir, the copy would
    be another vehicle or fail), and settings changed after construction (``set_attr``: the
    target, the reward weights dict; the friction table edited in place) hold in the copy, which
    then steps and rewards as the original does (the weights and the table were dropped)."""
    from pathlib import Path

    import traction.vehicle_model as vm

    car = tmp_path / "car.toml"
    car.write_text((Path(vm.__file__).parent / "presets" / "sedan_rwd.toml").read_text())
    monkeypatch.chdir(tmp_path)
    env = gym.make("Traction/Drift-v1", vehicle="car.toml")
    plain = gym.make("Traction/Drift-v1", vehicle="car.toml")
    for e in (env, plain):
        e.reset(seed=2)
    u = env.unwrapped
    u.target = np.radians(45.0)
    u.weights = {k: 3.0 * v for k, v in u.weights.items()}
    u.sim.friction_table.values[...] *= 0.5
    car.write_text(car.read_text().replace("mass = ", "mass = 2 * ", 1))   # now unreadable
    monkeypatch.chdir("/")
    copies = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    a = np.array([0.3, 1.0, 0.0, 0.0], np.float32)
    expected = env.step(a)[:2]
    assert expected[1] != plain.step(a)[1]                    # the settings matter
    for c in copies:
        assert c.unwrapped.target == u.target and c.unwrapped.weights == u.weights
        assert c.unwrapped.vehicle.chassis.mass == u.vehicle.chassis.mass
        obs, reward = c.step(a)[:2]
        assert np.array_equal(obs, expected[0]) and reward == expected[1]


def test_a_copy_of_a_fresh_env_outlives_the_original():
    """It once shared the original's MjData (bound addresses) and stepped freed memory after the
    original was gone (a segfault; run in a child process so a regression cannot kill pytest)."""
    code = """
import copy, gc, gymnasium as gym, numpy as np, traction.envs
env = gym.make("Traction/TankTurn-v1")
twin = copy.deepcopy(env)
ref = gym.make("Traction/TankTurn-v1")
del env
gc.collect()
a = np.full(2, 0.5, np.float32)
assert np.array_equal(twin.reset(seed=1)[0], ref.reset(seed=1)[0])
for _ in range(20):
    assert np.array_equal(twin.step(a)[0], ref.step(a)[0])
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and out.stdout.strip() == "ok", (out.returncode, out.stderr[-2000:])


def test_a_pickle_from_before_a_reward_term_was_added_gets_its_default_weight():
    """TankTurn's ``off_arena`` term came after pickles of its weights were made: unpickled, the
    saved weights are kept and the new term takes its default (it raised KeyError on step)."""
    env = gym.make("Traction/TankTurn-v1", translation_weight=3.0).unwrapped
    env.reset(seed=0)
    state = copy.deepcopy(env.__getstate__())
    del state["settings"]["weights"]["off_arena"]                # as pickled before the term
    old = object.__new__(type(env))
    old.__setstate__(pickle.loads(pickle.dumps(state)))
    assert old.weights == env.weights and old.weights["translation"] == 3.0
    a = np.full(2, 0.5, np.float32)
    assert np.array_equal(old.step(a)[0], env.step(a)[0])


def test_objects_holding_mujoco_addresses_refuse_copies_by_name():
    venv = gym.make_vec("Traction/Drift-v1", num_envs=2, vectorization_mode="vector_entry_point")
    env = gym.make("Traction/Drift-v1").unwrapped
    for obj, name in ((venv.unwrapped, "TractionVectorEnv"), (env.sim, "VehicleSim"),
                      (env.sim.world, "World")):
        for attempt in (copy.copy, copy.deepcopy, pickle.dumps):
            with pytest.raises(TypeError, match=f"a {name} cannot be copied or pickled: it "
                                                "holds addresses of this process's MuJoCo data"):
                attempt(obj)


def test_specs_pickle_and_serialise_and_the_async_vector_env_sends_them():
    for env_id in traction.envs.ENV_IDS:
        spec = gym.spec(env_id)
        assert pickle.loads(pickle.dumps(spec)) == spec
        assert gym.envs.registration.EnvSpec.from_json(spec.to_json()) == spec
    venv = gym.make_vec("Traction/TankTurn-v1", num_envs=2, vectorization_mode="async")
    venv.reset(seed=0)
    assert [s.id for s in venv.get_attr("spec")] == ["Traction/TankTurn-v1"] * 2
    venv.step(np.zeros((2, 2), np.float32))                  # still alive
    venv.close()


def test_native_sub_env_specs_remake_the_env_and_seeds_read_as_in_sync_vector_env():
    native = gym.make_vec("Traction/TankTurn-v1", num_envs=2, autoreset_mode="SameStep",
                          vectorization_mode="vector_entry_point", num_threads=2)
    spec = native.unwrapped.envs[0].spec
    assert spec.kwargs == {} and spec.max_episode_steps == 400
    gym.make(spec).close()
    sync = gym.make_vec("Traction/TankTurn-v1", num_envs=2, vectorization_mode="sync")
    for v in (native, sync):
        v.reset(seed=7)
    assert native.unwrapped.np_random_seed == sync.unwrapped.np_random_seed == (7, 8)
    native.close()


def test_a_snapshot_carries_the_friction_table():
    """set_state restores the friction table's values (an env with another table replayed
    otherwise), and refuses a table of other surfaces by name."""
    env, fresh = (gym.make("Traction/Drift-v1").unwrapped for _ in range(2))
    for e in (env, fresh):
        e.reset(seed=4)
    env.sim.friction_table.values[...] *= 0.2
    fresh.set_state(env.get_state())
    assert np.array_equal(fresh.sim.friction_table.values, env.sim.friction_table.values)
    a = np.array([0.2, 0.8, 0.0, 0.0], np.float32)
    for _ in range(3):
        assert np.array_equal(env.step(a)[0], fresh.step(a)[0])
    state = env.get_state()
    state["friction"] = (("tarmac",), *state["friction"][1:])
    with pytest.raises(ValueError, match="snapshot's friction table has other surfaces"):
        fresh.set_state(state)


def _grip(friction, long_slip, lat_slip, camber, wheel_omega, wheel_radius, rest_load,
          normalised_load, load, gravity):
    """A module-level custom tyre: linear in slip, friction-limited."""
    cap = friction * load
    return (np.zeros_like(load), np.clip(10.0 * long_slip * load, -cap, cap),
            np.clip(-8.0 * lat_slip * load, -cap, cap), np.zeros_like(load))


def test_a_snapshot_with_a_custom_tyre_fits_another_registry_order(monkeypatch):
    """The snapshot fingerprint names a registered custom tyre instead of its index in the
    process's registry, so a snapshot (or pickled env) is accepted where the tyres were packed
    in another order (it was refused as 'other vehicle parameters')."""
    import dataclasses

    vm.register_tire_model("grip_for_snapshots", _grip)
    p = dataclasses.replace(with_model("sedan_rwd", "custom"), custom_tire=_grip)
    monkeypatch.setattr(tire_custom, "_BY_INDEX", [print, len])
    env = gym.make("Traction/Drift-v1", vehicle=p).unwrapped
    env.reset(seed=3)
    a = np.array([0.1, 0.6, 0.0, 0.0], np.float32)
    env.step(a)
    state = env.get_state()
    monkeypatch.setattr(tire_custom, "_BY_INDEX", [])
    other = gym.make("Traction/Drift-v1", vehicle=pickle.loads(pickle.dumps(p))).unwrapped
    other.reset(seed=9)
    other.set_state(state)
    assert tire_custom._BY_INDEX == [_grip]             # index 0 here, 2 in the original
    tire_custom._BY_INDEX.extend([len, _grip])          # (one process: keep index 2 valid)
    for _ in range(3):
        assert np.array_equal(env.step(a)[0], other.step(a)[0])


def _scaled_grip(k):
    def grip(friction, long_slip, lat_slip, camber, wheel_omega, wheel_radius, rest_load,
             normalised_load, load, gravity):
        return tuple(k * f for f in _grip(friction, long_slip, lat_slip, camber, wheel_omega,
                                          wheel_radius, rest_load, normalised_load, load,
                                          gravity))
    return grip


@pytest.mark.parametrize("register", [False, True])
def test_a_snapshot_with_another_custom_tyre_of_the_same_name_is_refused(register):
    """Two closures of one factory share module and qualified name, so the fingerprint does not
    go by them: registered tyres by their registered names, unregistered by their index."""
    import dataclasses

    envs = []
    for k in (1.0, 10.0):
        tyre = _scaled_grip(k)
        if register:
            vm.register_tire_model(f"grip_x{k:g}", tyre)
        p = dataclasses.replace(with_model("sedan_rwd", "custom"), custom_tire=tyre)
        envs.append(gym.make("Traction/Drift-v1", vehicle=p).unwrapped)
        envs[-1].reset(seed=0)
    with pytest.raises(ValueError, match="other vehicle parameters"):
        envs[1].set_state(envs[0].get_state())


# Snapshots and copies: a restored snapshot carries the episode's step count (a blow-up after
# the restore is reported at the step of the original episode); one whose task state or friction
# table does not fit is refused; only plain values and string-keyed dicts of them count as
# settings a copy takes over.
def test_a_restored_episode_counts_its_steps_from_the_snapshot(diverging_step_warning):
    """Four steps, a snapshot, restored into an env fresh from its reset; one step later the
    world blows up: the warning names step 5 of the episode (t = 5 control steps), not step 1."""
    env, fresh = (gym.make("Traction/TankTurn-v1") for _ in range(2))
    a = np.zeros(2, np.float32)
    env.reset(seed=0)
    fresh.reset(seed=1)
    for _ in range(4):
        env.step(a)
    fresh.unwrapped.set_state(env.unwrapped.get_state())
    t = 5 * fresh.unwrapped.control_dt
    assert (f"diverged in step 5 of the episode (t = {t:.3f} s)"
            in diverging_step_warning(fresh))


def test_a_snapshot_missing_or_adding_task_state_is_refused_before_anything_is_written():
    """set_state needs the task state this environment keeps (Drift: ``_held`` and
    ``_succeeded``): a snapshot without one of them, or with one it does not keep, is refused
    by name, and the environment steps on as before."""
    env = gym.make("Traction/Drift-v1").unwrapped
    env.reset(seed=2)
    a = np.array([0.1, 0.5, 0.0, 0.0], np.float32)
    env.step(a)
    good = env.get_state()
    for edit in ({"_held": None}, {"_held": None, "_spare": 1.0}, {"_spare": 1.0}):
        state = env.get_state()
        for key, value in edit.items():
            if value is None:
                del state["task"][key]
            else:
                state["task"][key] = value
        with pytest.raises(ValueError, match=r"set_state: task state .* this environment's is "
                                             r"\['_held', '_succeeded'\]"):
            env.set_state(state)
    obs = env.step(a)[0]
    env.set_state(good)
    assert np.array_equal(env.step(a)[0], obs)


def test_a_snapshot_with_other_tyre_types_in_its_friction_table_is_refused():
    """The friction table is surfaces x tyre types: a snapshot whose table names other tyre
    types (same surfaces, same shape) would restore values into the wrong cells: refused."""
    env = gym.make("Traction/Drift-v1").unwrapped
    env.reset(seed=4)
    state = env.get_state()
    surfaces, tires, values = state["friction"]
    state["friction"] = (surfaces, tuple(f"other_{t}" for t in tires), values)
    with pytest.raises(ValueError, match="snapshot's friction table has other surfaces or tyre"):
        env.set_state(state)


def test_only_plain_values_and_string_keyed_dicts_of_them_count_as_settings():
    """What a copy takes over (``snapshot.is_setting``): plain values, and dicts of them keyed
    by strings (``weights``); a dict keyed otherwise, or holding an array, is not a setting."""
    from traction.envs.snapshot import is_setting

    for value in (1.5, 3, True, "x", (1, 2), None, {"hold": 1.0, "aim": 2}):
        assert is_setting(value), value
    for value in ({1: 2.0}, {("a",): 1.0}, {"w": np.ones(2)}, np.ones(2), [1.0]):
        assert not is_setting(value), value


class _ForwardingTank(TankTurnEnv):
    """A task built on a shipped one, passing its other arguments on."""

    def __init__(self, extra: float = 1.0, **kwargs):
        super().__init__(**kwargs)
        self.extra = extra


class _OwnVehicleTank(TankTurnEnv):
    def __init__(self, **kwargs):
        super().__init__(vehicle=vm.load_vehicle("tank"), **kwargs)


@pytest.mark.parametrize("make", [
    lambda: _ForwardingTank(extra=2.0, drive_mode="standard", hold_bonus=7.0),
    lambda: _OwnVehicleTank(drive_mode="standard", hold_bonus=7.0),
])
def test_a_subclass_passing_kwargs_on_copies_and_pickles(make):
    """The constructor's ``**kwargs`` came back as one argument named 'kwargs' (TypeError on
    copy and on unpickling; the pickle itself was written)."""
    env = make()
    env.reset(seed=0)
    env.step(np.array([1.0, -1.0], np.float32))
    for clone in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        assert type(clone) is type(env) and vars(clone).get("extra") == vars(env).get("extra")
        assert clone.vehicle.differential.tank_mode == "standard" and clone.weights["hold"] == 7.0
        a = np.array([0.3, -0.5], np.float32)
        assert np.array_equal(clone.step(a)[0], copy.deepcopy(env).step(a)[0])


class _ForwardingDrift(DriftEnv):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)


class _OwnArgumentsDrift(DriftEnv):
    def __init__(self, render_mode=None):
        super().__init__(radius=12.0, render_mode=render_mode)


class _StarTank(TankTurnEnv):
    def __init__(self, extra, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.extra = extra


@pytest.mark.parametrize("make", [lambda: _ForwardingDrift(radius=12.0), _OwnArgumentsDrift])
def test_a_subclass_keeps_a_property_of_its_base_set_since(make):
    """A settable property of the shipped task that the subclass does not name (Drift's
    hold_seconds, held privately) changed after construction is set again on the copy, after
    the subclass's own constructor has run (it came back at its default, 3 s)."""
    env = make()
    env.hold_seconds = 1.5
    for clone in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        assert clone.hold_seconds == 1.5 and clone.radius == 12.0


def test_a_subclass_taking_args_copies_and_pickles():
    """A named argument before ``*args`` was given twice on the copy (TypeError)."""
    env = _StarTank(2.0, "standard")
    for clone in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        assert clone.extra == 2.0 and clone.drive_mode == "standard"


@pytest.mark.parametrize("env_id", traction.envs.ENV_IDS)
def test_a_restored_snapshot_replays_the_rollout_bit_for_bit_tyre_state_included(env_id):
    """get_state / set_state carry the vehicle state arrays whole, the tyres' tread deflections
    and the patch history of their prediction among them: after a restore the same actions
    give the same observations, rewards and vehicle state bit for bit (the snapshot is taken
    mid-drive, with the treads deflected)."""
    env = gym.make(env_id)
    env.reset(seed=7)
    for a in _actions(env, 15, 2):
        env.step(a)
    u = env.unwrapped
    assert np.any(u.sim.state.tread_deflection != 0.0)
    assert np.all(u.sim.state.wheel[...]["history"] == 1.0)
    snapshot = u.get_state()
    actions = _actions(env, 20, 3)

    def run():
        steps = [env.step(a)[:2] for a in actions]
        return steps, u.sim.state.wheel.copy(), u.data.qpos.copy()
    first = run()
    u.set_state(snapshot)
    second = run()
    for (o1, r1), (o2, r2) in zip(first[0], second[0], strict=True):
        assert o1.tobytes() == o2.tobytes() and r1 == r2
    assert first[1].tobytes() == second[1].tobytes() and first[2].tobytes() == second[2].tobytes()
