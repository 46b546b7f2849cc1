"""Domain randomisation (``randomize=``): checked specs, reproducible draws that differ between
worlds and stay in their ranges, draws that reach the physics, and snapshots that keep them."""

import gymnasium as gym
import numpy as np
import pytest

import traction.envs
from traction.envs import randomize as domain

G = 9.81


@pytest.mark.parametrize("spec,message", [
    ("windy", "presets: none, mild, wide"),
    ({"mass": (0.9, 1.1)}, "unknown key(s) 'mass'"),
    ({"mass_scale": (1.2, 0.9)}, "randomize['mass_scale'] = (1.2, 0.9); allowed: lo <= hi"),
    ({"friction_scale": (0.0, 1.0)}, "within [0.05, 3]"),
    ({"spring_scale": 2.0}, "expected a range (lo, hi)"),
    ({"com_offset_x": (float("nan"), 0.1)}, "randomize['com_offset_x']"),
    (["mild"], "a preset name"),
])
def test_a_bad_spec_is_refused_naming_what_is_wrong(spec, message):
    with pytest.raises(ValueError) as e:
        gym.make("Traction/TankTurn-v1", randomize=spec)
    assert message in str(e.value)


def test_a_draw_too_stiff_for_the_physics_step_is_refused():
    with pytest.raises(ValueError, match="stiffest, lightest draw .* not stable at physics_dt"):
        # dampers 4x on a vehicle a quarter as heavy: 16x the preset's c dt / m (0.08-0.15)
        gym.make("Traction/TankTurn-v1", randomize={"damper_scale": (1.0, 4.0),
                                                      "mass_scale": (0.25, 1.0)})


def _rollout(seed, randomize, steps=30):
    env = gym.make("Traction/Drift-v1", randomize=randomize)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(7)
    out = [obs]
    for _ in range(steps):
        out.append(env.step(rng.uniform(-1, 1, 4).astype(np.float32))[0])
    env.close()
    return info.get("randomization"), np.array(out)


def test_draws_replay_bit_for_bit_from_the_seed_and_differ_between_seeds():
    draw_a, obs_a = _rollout(3, "wide")
    draw_b, obs_b = _rollout(3, "wide")
    draw_c, _ = _rollout(4, "wide")
    assert draw_a == draw_b and np.array_equal(obs_a, obs_b)
    assert draw_a != draw_c
    assert set(draw_a) == set(domain.PRESETS["wide"])


def test_without_ranges_nothing_is_drawn_and_the_episode_is_the_nominal_one():
    nominal, obs_n = _rollout(3, None)
    none, obs_0 = _rollout(3, "none")
    assert nominal is None and none is None                  # no "randomization" in the info
    assert np.array_equal(obs_n, obs_0)


def test_draws_stay_in_their_ranges_and_reach_the_vehicle():
    spec = domain.PRESETS["wide"]
    env = gym.make("Traction/TankTurn-v1", randomize="wide")
    nominal = env.unwrapped.vehicle
    for seed in range(12):
        _, info = env.reset(seed=seed)
        drawn = info["randomization"]
        for key, value in drawn.items():
            lo, hi = spec[key]
            assert np.all((lo <= np.asarray(value)) & (np.asarray(value) <= hi)), key
        p = env.unwrapped.sim.params
        assert p.chassis.mass == pytest.approx(nominal.chassis.mass * drawn["mass_scale"])
        assert env.unwrapped.model.body_mass[env.unwrapped.sim.body] == p.chassis.mass
        np.testing.assert_allclose(p.suspension.spring_strength,
                                   nominal.suspension.spring_strength * drawn["spring_scale"])
        assert p.suspension.sprung_mass.sum() == pytest.approx(p.chassis.mass)   # re-split
        np.testing.assert_allclose(env.unwrapped.model.body_ipos[env.unwrapped.sim.body],
                                   nominal.chassis.com + [drawn["com_offset_x"],
                                                          drawn["com_offset_y"],
                                                          drawn["com_offset_z"]])
    assert env.unwrapped.vehicle is nominal                  # the built vehicle stays nominal
    env.close()


def test_the_worlds_of_a_vector_env_draw_apart_and_step_their_own_vehicles():
    venv = traction.envs.make_vector("Traction/Drift-v1", 3, randomize="wide")
    _, infos = venv.reset(seed=0)
    batched = infos["randomization"]                    # Gymnasium batches the dict by key
    draws = [{k: np.asarray(v[i]).tolist() for k, v in batched.items() if k[0] != "_"}
             for i in range(3)]
    assert len({d["mass_scale"] for d in draws}) == 3
    masses = [env.sim.params.chassis.mass for env in venv.envs]
    rows = venv.world.arrays.params_vehicle["peak_torque"]
    np.testing.assert_allclose(rows, [env.sim.params.engine.peak_torque for env in venv.envs])
    assert len(set(masses)) == 3 and len(set(rows.tolist())) == 3
    # each world steps as the same env alone would (seeded as the vector env seeds it: 0 + i),
    # with its own draw
    rng = np.random.default_rng(1)
    actions = rng.uniform(-1, 1, (10, 3, 4)).astype(np.float32)
    together = np.array([venv.step(a)[0] for a in actions])
    venv.close()
    for i in range(3):
        env = gym.make("Traction/Drift-v1", randomize="wide")
        _, info = env.reset(seed=i)
        assert info["randomization"] == draws[i]
        alone = np.array([env.step(a[i])[0] for a in actions])
        env.close()
        np.testing.assert_array_equal(alone, together[:, i])


def _braking_deceleration(scale: float) -> float:
    """Mean deceleration (m/s^2) of the sedan braking with every wheel locked on dry tarmac
    from 15 m/s over 0.6 s, with the friction table scaled by ``scale``."""
    env = gym.make("Traction/Drift-v1", randomize={"friction_scale": (scale, scale),
                                                   "brake_torque_scale": (2.0, 2.0)})
    env.reset(seed=0, options={"speed": 15.0})
    brake = np.array([0.0, -1.0, 1.0, 1.0], np.float32)     # no throttle, full brakes
    env.step(brake)                                          # the wheels lock
    v0 = env.unwrapped.sim.forward_speed()
    for _ in range(15):
        env.step(brake)
    v1 = env.unwrapped.sim.forward_speed()
    env.close()
    assert v1 > 1.0                                          # still sliding: a mean over slip
    return (v0 - v1) / (15 * 0.04)


def test_a_friction_scale_of_a_half_halves_the_braking_deceleration():
    full, half = _braking_deceleration(1.0), _braking_deceleration(0.5)
    assert 0.3 * G < half < full                             # sliding tyres: mu g-like
    assert half / full == pytest.approx(0.5, rel=0.05)


def test_set_state_restores_the_drawn_vehicle_and_replays():
    env = gym.make("Traction/Drift-v1", randomize="wide").unwrapped
    env.reset(seed=5)
    drawn, mass = dict(env.randomization), env.sim.params.chassis.mass
    table = env.sim.friction_table.values.copy()
    snap = env.get_state()
    a = np.array([0.2, 0.5, -1.0, -1.0], np.float32)
    after = [env.step(a)[0] for _ in range(5)]
    env.reset(seed=6)                                        # another draw
    assert env.sim.params.chassis.mass != mass
    env.set_state(snap)
    assert env.randomization == drawn and env.sim.params.chassis.mass == mass
    assert env.model.body_mass[env.sim.body] == mass
    np.testing.assert_array_equal(env.sim.friction_table.values, table)
    again = [env.step(a)[0] for _ in range(5)]
    np.testing.assert_array_equal(np.array(after), np.array(again))
    with pytest.raises(ValueError, match="set_state: randomization value mass_scale"):
        env.set_state({**snap, "randomization": {"mass_scale": 99.0}})
    env.close()


@pytest.mark.parametrize("model", ["arcade", "physx", "curve", "magic_formula"])
def test_the_fidelity_ladder_puts_one_tyre_model_on_every_wheel(model):
    from traction.vehicle_model import TIRE_MODELS

    env = gym.make("Traction/TankTurn-v1", tire_model=model)
    env.reset(seed=0)
    code = TIRE_MODELS.index(model)
    assert np.all(env.unwrapped.vehicle.tires.model == code)
    assert np.all(env.unwrapped.sim.world.arrays.params_wheel["tire_model"] == code)  # stepped
    for _ in range(5):
        obs, *_ = env.step(env.action_space.sample())
    assert np.all(np.isfinite(obs))
    env.close()


def test_another_tyre_model_changes_the_braking_and_a_bad_one_is_refused():
    def stop(model):
        env = gym.make("Traction/Drift-v1", tire_model=model)
        env.reset(seed=0, options={"speed": 15.0})
        for _ in range(10):
            env.step(np.array([0.0, -1.0, 1.0, 1.0], np.float32))
        v = env.unwrapped.sim.forward_speed()
        env.close()
        return v
    assert stop("physx") != stop("magic_formula")
    with pytest.raises(ValueError, match="tire_model = 'pacejka'; allowed: arcade, physx"):
        gym.make("Traction/Drift-v1", tire_model="pacejka")


def test_latency_delays_each_action_by_the_drawn_steps_and_replays_from_a_snapshot():
    """With a latency of 2 steps the car acts on the action given 2 steps before (the first
    action until then): the same as an env without latency given the actions 2 steps late."""
    rng = np.random.default_rng(3)
    given = rng.uniform(-1, 1, (12, 4)).astype(np.float32)
    late = np.concatenate([given[:1], given[:1], given[:-2]])
    env = gym.make("Traction/Drift-v1", randomize={"latency": (2, 2)}).unwrapped
    ref = gym.make("Traction/Drift-v1").unwrapped
    _, info = env.reset(seed=1)
    ref.reset(seed=1)
    assert info["randomization"] == {"latency": 2}
    speeds, ref_speeds, snap = [], [], None
    for k, (a, b) in enumerate(zip(given, late, strict=True)):
        if k == 6:
            snap = env.get_state()
        env.step(a)
        ref.step(b)
        speeds.append(env.sim.now["velocity"].copy())
        ref_speeds.append(ref.sim.now["velocity"].copy())
    np.testing.assert_array_equal(np.array(speeds), np.array(ref_speeds))
    env.set_state(snap)                                   # the queue is restored with it
    again = []
    for a in given[6:]:
        env.step(a)
        again.append(env.sim.now["velocity"].copy())
    np.testing.assert_array_equal(np.array(again), np.array(speeds[6:]))
    with pytest.raises(ValueError, match="whole numbers of control steps"):
        gym.make("Traction/Drift-v1", randomize={"latency": (0, 1.5)})


@pytest.mark.parametrize("vector", [False, True])
def test_action_and_observation_noise_have_the_drawn_spread_and_replay(vector):
    spec = {"action_noise": (0.1, 0.1), "observation_noise": (0.05, 0.05)}

    def run(randomize):
        if vector:
            env = traction.envs.make_vector("Traction/TankTurn-v1", 2, randomize=randomize)
            obs, _ = env.reset(seed=2)
            out = [obs[0]] + [env.step(np.zeros((2, 2), np.float32))[0][0] for _ in range(40)]
        else:
            env = gym.make("Traction/TankTurn-v1", randomize=randomize)
            obs, _ = env.reset(seed=2)
            out = [obs] + [env.step(np.zeros(2, np.float32))[0] for _ in range(40)]
        env.close()
        return np.array(out)
    noisy, again = run(spec), run(spec)
    np.testing.assert_array_equal(noisy, again)            # from the seed, bit for bit
    # the noise has its own random stream: without it, the same seed drives the same episode
    seen = run({"observation_noise": (0.05, 0.05)})
    true = run(None)
    assert (seen - true).std() == pytest.approx(0.05, rel=0.1)
    assert abs((seen - true).mean()) < 0.01
    assert not np.array_equal(run({"action_noise": (0.1, 0.1)}), true)   # it moves the tank


def test_a_seed_gives_the_same_terrain_and_task_with_and_without_randomisation():
    """The draws and the noise have their own random stream: a seed gives the same terrain and
    target, so a nominal and a randomised evaluation of one seed differ by the draw alone."""
    plain = gym.make("Traction/Climb6x6-v1").unwrapped
    drawn = gym.make("Traction/Climb6x6-v1", randomize="wide").unwrapped
    for seed in (0, 11):
        plain.reset(seed=seed)
        drawn.reset(seed=seed)
        np.testing.assert_array_equal(plain._goal_xyz, drawn._goal_xyz)
        np.testing.assert_array_equal(plain.scene.terrain.grid.heights,
                                      drawn.scene.terrain.grid.heights)
    plain.close()
    drawn.close()


@pytest.mark.parametrize("k", [0.25, 0.8, 1.0, 1.3, 4.0])
def test_the_magic_formula_peaks_a_draw_carries_are_the_solved_ones(k):
    """A stiffness draw scales the Magic Formula's B; its peaks are given (nominal / k), not
    solved again: they must be what the solver finds for the drawn coefficients."""
    from traction.vehicle_model import vehicle_params
    from traction.vehicle_model.tire_magic import peak_slip

    p = domain.vehicle(vehicle_params("sedan_rwd"), {"tire_stiffness_scale": k})
    given = p.tires.mf_peak_slips
    np.testing.assert_allclose(given[0], peak_slip(p.tires.mf_long), rtol=1e-12)
    np.testing.assert_allclose(given[1], peak_slip(p.tires.mf_lat), rtol=1e-12)


def test_a_draw_is_the_vehicle_a_full_rebuild_gives():
    """A draw builds its vehicle without validating or copying the unchanged arrays
    (``params.evolve``, records packed alone): it must be the vehicle that ``dataclasses.replace``
    (which validates nothing but copies every field through ``__post_init__``) builds, pack to
    the same records, and leave the nominal vehicle as it was."""
    import dataclasses

    from traction.vehicle_model import pack, vehicle_params
    from traction.vehicle_model.suspension import compute_sprung_masses

    nominal = vehicle_params("tank")
    before = pack.records(nominal)
    values = domain.draw(domain.PRESETS["wide"], np.random.default_rng(3), 1)
    p = domain.vehicle(nominal, values)
    ch = dataclasses.replace(
        nominal.chassis, mass=nominal.chassis.mass * values["mass_scale"],
        com=nominal.chassis.com + [values[f"com_offset_{a}"] for a in "xyz"],
        inertia=nominal.chassis.inertia * values["mass_scale"] * values["inertia_scale"])
    sus = dataclasses.replace(
        nominal.suspension,
        spring_strength=nominal.suspension.spring_strength * values["spring_scale"],
        damper_rate=nominal.suspension.damper_rate * values["damper_scale"],
        sprung_mass=compute_sprung_masses(nominal.suspension.position, ch.com, ch.mass))
    for part, want in (("chassis", ch), ("suspension", sus)):
        got = getattr(p, part)
        assert type(got) is type(want)
        for f in dataclasses.fields(want):
            np.testing.assert_array_equal(getattr(got, f.name), getattr(want, f.name), f.name)
            value = getattr(got, f.name)
            assert not (isinstance(value, np.ndarray) and value.flags.writeable), f.name
    assert p.engine.peak_torque == nominal.engine.peak_torque * values["engine_torque_scale"]
    p.validate("drawn tank")                                 # a valid vehicle, validated here
    rebuilt = dataclasses.replace(p, chassis=ch, suspension=sus)
    for mine, theirs in zip(pack.records(p), pack.records(rebuilt), strict=True):
        for name in mine.dtype.names:
            np.testing.assert_array_equal(mine[name], theirs[name], name)
    for mine, theirs in zip(before, pack.records(nominal), strict=True):
        assert mine.tobytes() == theirs.tobytes()            # the nominal vehicle is untouched


def test_evolve_replaces_named_fields_only_and_refuses_unknown_ones():
    from traction.vehicle_model import vehicle_params
    from traction.vehicle_model.params import evolve

    engine = vehicle_params("sedan_rwd").engine
    new = evolve(engine, peak_torque=engine.peak_torque * 2)
    assert new.peak_torque == 2 * engine.peak_torque and engine.peak_torque == new.peak_torque / 2
    assert new.torque_curve is engine.torque_curve            # unchanged: shared, read-only
    with pytest.raises(TypeError, match="no field"):
        evolve(engine, peak_torq=1.0)


# --- found in review: each failed before its fix --------------------------------------------


def test_a_randomised_reset_leaves_the_next_terrain_where_it_belongs():
    """mj_setConst (a drawn mass) once marked the terrain geom as sitting at its frame's origin
    when the last terrain did: the next terrain was then misplaced (16 of 200 Climb seeds)."""
    acts = np.random.default_rng(0).uniform(-1, 1, (20, 2)).astype(np.float32)

    def run(history):
        env = gym.make("Traction/Climb6x6-v1", randomize={"latency": (0, 0)})
        for s in history:
            env.reset(seed=s)                      # seed 111's ground sits at z = 0
        env.reset(seed=101)                        # seed 101's at z = -0.011
        out = np.array([env.step(a)[0] for a in acts])
        env.close()
        return out
    np.testing.assert_array_equal(run([]), run([111]))


def test_a_restored_draw_does_not_outlive_its_episode_in_an_env_without_ranges():
    source = gym.make("Traction/Drift-v1", randomize="wide").unwrapped
    source.reset(seed=4)
    plain = gym.make("Traction/Drift-v1").unwrapped
    plain.reset(seed=0)
    plain.set_state(source.get_state())
    assert plain.sim.params.chassis.mass == source.sim.params.chassis.mass != 1500.0
    plain.reset(seed=1)
    assert plain.randomization == {} and plain.sim.params.chassis.mass == 1500.0
    assert plain.model.body_mass[plain.sim.body] == 1500.0 and not plain.perturbs_actions
    np.testing.assert_array_equal(plain.sim.friction_table.values, plain._nominal_friction)
    fresh = gym.make("Traction/Drift-v1").unwrapped
    fresh.reset(seed=1)
    a = np.array([0.1, 0.4, -1.0, -1.0], np.float32)
    np.testing.assert_array_equal([plain.step(a)[0] for _ in range(5)],
                                  [fresh.step(a)[0] for _ in range(5)])
    never_reset = gym.make("Traction/Drift-v1", randomize="wide").unwrapped
    never_reset.set_state(source.get_state())       # (its own stream made for the snapshot's)
    assert never_reset.randomization == source.randomization


def test_a_generator_assigned_to_np_random_still_resets_and_replays():
    def run():
        env = gym.make("Traction/Drift-v1", randomize="mild").unwrapped
        env.np_random = np.random.default_rng(5)          # Gymnasium's seed is then -1
        _, info = env.reset()
        return info["randomization"]
    assert run() == run()


def test_float64_actions_with_noise_step_alike_in_a_single_and_a_vector_env():
    spec = {"action_noise": (0.1, 0.1)}
    acts = np.random.default_rng(1).uniform(-1, 1, (10, 2, 2))          # float64
    venv = traction.envs.make_vector("Traction/TankTurn-v1", 2, randomize=spec)
    venv.reset(seed=10)
    together = np.array([venv.step(a)[0] for a in acts])
    venv.close()
    env = gym.make("Traction/TankTurn-v1", randomize=spec)
    env.reset(seed=11)
    np.testing.assert_array_equal([env.step(a[1])[0] for a in acts], together[:, 1])


def test_a_friction_table_edited_between_episodes_is_the_one_the_draws_scale():
    env = gym.make("Traction/Drift-v1", randomize={"friction_scale": (0.5, 0.5)}).unwrapped
    env.reset(seed=0)
    edited = env.sim.friction_table.values * 0 + 0.8         # the user's own table
    env.sim.friction_table.values[...] = edited
    env.reset(seed=1)
    np.testing.assert_allclose(env.sim.friction_table.values, 0.4)


def test_set_state_checks_the_randomisation_state_before_writing_anything():
    env = gym.make("Traction/Drift-v1", randomize={"latency": (1, 1)}).unwrapped
    env.reset(seed=0)
    env.step(np.zeros(4, np.float32))
    snap = env.get_state()
    steps = env._steps
    for bad, message in ((("domain_rng", {"state": 1}), "domain_rng is not a generator state"),
                         (("action_queue", "garbage"), "action_queue is not 1 finite actions"),
                         (("noise", {"action": 3}), "noise is not the noise blocks")):
        with pytest.raises(ValueError, match=message):
            env.set_state({**snap, bad[0]: bad[1]})
    env.step(np.zeros(4, np.float32))
    assert env._steps == steps + 1                         # nothing was restored


def test_the_stability_check_covers_the_centre_of_mass_corners():
    with pytest.raises(ValueError, match="com_offset_y = -0.25"):
        gym.make("Traction/TankTurn-v1", randomize={"mass_scale": (0.5, 1.0),
                                                      "damper_scale": (1.0, 3.374),
                                                      "com_offset_y": (-0.25, 0.25)})


def test_a_vehicle_whose_rays_would_not_fit_the_scene_is_refused():
    import dataclasses

    env = gym.make("Traction/Drift-v1").unwrapped
    env.reset(seed=0)
    p = env.vehicle
    bigger = dataclasses.replace(p, wheels=dataclasses.replace(p.wheels,
                                                               radius=p.wheels.radius * 1.1))
    with pytest.raises(ValueError, match="the vehicle's radius, ray_start differ"):
        env.sim.use_vehicle(bigger)
    env.close()
