"""Per-task behaviour: sensible actions beat bad ones; rollover terminates; goals give success."""

import copy
import inspect

import gymnasium as gym
import numpy as np
import pytest

import traction.envs  # noqa: F401  (registers the ids)
from traction.envs import actions
from traction.scenes import build_scene, names


def _run(env, policy, steps, seed=0, options=None):
    obs, info = env.reset(seed=seed, options=options)
    total, infos = 0.0, [info]
    for _ in range(steps):
        obs, r, term, trunc, info = env.step(policy(env.unwrapped, obs))
        total += r
        infos.append(info)
        if term or trunc:
            break
    return total, infos, term


def _toward_goal(env, obs):
    goal = obs[9:12]                                            # body frame
    return np.array([0.8, np.clip(2.0 * np.arctan2(goal[1], goal[0]), -1, 1)])


def _brake_while_moving(env, obs):
    """Full brake while rolling forward; at a crawl the lever rests at 0 (held back there,
    DRIVE_LEVER would engage reverse: below REVERSE_SPEED a negative drive is reverse throttle)."""
    return np.array([-1.0 if obs[0] > actions.REVERSE_SPEED else 0.0, 0.0])


def test_climb_driving_to_the_goal_beats_braking():
    env = gym.make("Traction/Climb6x6-v1", difficulty=0.2)
    good, infos, _ = _run(env, _toward_goal, 150)
    progress = sum(i["reward_progress"] for i in infos[1:])        # m closer to the goal
    assert progress >= 20.0                                         # 6 s at ~0.8 drive
    v0, obs = infos[-1]["speed"], env.unwrapped.body_velocity()[0]   # obs[0]: forward m/s
    slowest = v0
    for _ in range(50):                                             # then 2 s of the brake
        obs, _, _, _, info = env.step(_brake_while_moving(env, obs))
        assert info["gear"] >= 0 and env.unwrapped.sim.state.gearbox.target[0] >= 0   # no reverse
        slowest = min(slowest, info["speed"])
    # stopped within the 2 s: > 2.25 m/s^2 on average (afterwards, on a hill, the released lever
    # lets the truck roll back)
    assert v0 > 5.0 and slowest < actions.REVERSE_SPEED
    bad, infos, _ = _run(env, _brake_while_moving, 150)
    assert abs(sum(i["reward_progress"] for i in infos[1:])) < 1e-3   # held where it stood
    assert max(i["speed"] for i in infos) < 1e-3
    assert min(i["gear"] for i in infos) >= 0                         # never reversed
    assert good > bad + 5.0


def test_climb_gear_reads_neutral_while_a_change_is_in_progress():
    """The autobox spends switch_time in neutral per change (no ratio, no drive): observation 49
    and ``info["gear"]`` show 0 then, as PhysX's current gear does (they read the gear left)."""
    env = gym.make("Traction/Climb6x6-v1", terrain="crest", telemetry=1)
    env.reset(seed=0)
    gears = []
    for _ in range(100):                                        # 4 s of full drive: 1st -> 3rd
        obs, _, _, _, info = env.step(np.array([1.0, 0.0], np.float32))
        ratio = env.unwrapped.sim.telemetry.arrays()["gear_ratio"][-1, 0]    # the step's end
        assert obs[49] == info["gear"] and (info["gear"] == 0) == (ratio == 0.0)
        gears.append(info["gear"])
    changes = [g for k, g in enumerate(gears) if k == 0 or g != gears[k - 1]]
    assert changes[:5] == [1, 0, 2, 0, 3]


def test_climb_rollover_terminates_with_penalty():
    env = gym.make("Traction/Climb6x6-v1", terrain="slope")
    env.reset(seed=0)
    u = env.unwrapped
    u.data.qpos[3:7] = [np.cos(np.pi / 4), np.sin(np.pi / 4), 0, 0]   # rolled 90 degrees
    _, r, term, trunc, info = env.step(np.zeros(2))
    assert term and not info["is_success"]
    assert info["reward_rollover"] == -u.weights["rollover"]


def test_climb_leaving_the_terrain_terminates_with_penalty_before_the_fall():
    """Reversing from the start off the course's near edge: the episode ends as the CoM crosses
    the edge, with the truck still level and at the edge's height (not after falling off)."""
    env = gym.make("Traction/Climb6x6-v1")
    env.reset(seed=5)
    u = env.unwrapped
    grid = u.scene.terrain.grid
    for _ in range(200):
        _, _, term, trunc, info = env.step(np.array([-1.0, 0.0], np.float32))
        if term or trunc:
            break
    c = u.read_chassis()
    assert term and not trunc and not info["is_success"]
    assert info["reward_off_terrain"] == -u.weights["off_terrain"] and info["reward_rollover"] == 0
    assert c.com[0] < grid.x0 < c.com[0] + 0.5                   # just past the edge
    assert c.tilt < 0.3 and abs(c.com[2] - grid.height_at(grid.x0, c.com[1])) < 2.0


def test_climb_height_map_shows_the_drop_beyond_the_edge():
    """Facing the near edge 4 m away: rows up to 3 m ahead read the ground (as a ray cast
    does), rows from 4.5 m read 10 m below the terrain's lowest point."""
    import mujoco

    env = gym.make("Traction/Climb6x6-v1")
    obs, _ = env.reset(seed=5, options={"spawn": (-46.0, 0.0, np.pi)})
    u = env.unwrapped
    grid, z = u.scene.terrain.grid, u.read_chassis().origin[2]
    rows = obs[50:90].reshape(8, 5)
    assert np.all(rows[:3] > -3.0)
    np.testing.assert_allclose(rows[3:], grid.heights.min() - 10.0 - z)
    x, y = u.read_chassis().origin[:2]
    hit, chassis = np.zeros(1, np.int32), u.model.body(names.CHASSIS_BODY).id
    for ahead in (0.0, 1.5, 3.0):                    # heading -x: the point is (x - ahead, y)
        top = np.array([x - ahead, y, 50.0])
        d = mujoco.mj_ray(u.model, u.data, top, np.array([0.0, 0.0, -1.0]), None, 1, chassis, hit)
        assert rows[int(ahead / 1.5), 2] == pytest.approx(50.0 - d - z, abs=0.05)


def test_climb_reaching_the_goal_is_success():
    env = gym.make("Traction/Climb6x6-v1", terrain="slope")
    env.reset(seed=0)
    goal = env.unwrapped._goal()
    _, infos, term = _run(env, _toward_goal, 5, options={"spawn": (goal[0] - 3.0, 0.0, 0.0)})
    assert term and infos[-1]["is_success"] and infos[-1]["reward_success"] > 0


def test_climb_wheel_torque_mode_routes_torque():
    env = gym.make("Traction/Climb6x6-v1", action_mode="wheel_torques", terrain="slope")
    env.reset(seed=0)
    a = np.array([1.0, 0.0, 1, 1, -1, -1, 1, 1], np.float32)   # nothing to the middle axle
    for _ in range(10):
        env.step(a)
    drive = env.unwrapped.sim.outputs.drive_torque[0]
    assert drive[0] > 0 and np.all(drive[[2, 3]] == 0.0)          # middle axle: no share
    np.testing.assert_allclose(drive[[1, 4, 5]], drive[0], rtol=1e-9)   # equal shares


def _hold_circle(env, obs):
    e, s, c = obs[5], obs[6], obs[7]
    steer = np.clip(0.35 + 0.15 * e - 1.5 * np.arctan2(s, c), -1, 1)
    return np.array([steer, -0.2, -1.0, -1.0])


def test_drift_staying_on_the_circle_beats_leaving_it():
    env = gym.make("Traction/Drift-v1")
    good, _, _ = _run(env, _hold_circle, 200)
    bad, _, term = _run(env, lambda e, o: np.array([-1.0, 1.0, -1.0, -1.0]), 200)
    assert good > bad + 10.0


def test_drift_success_after_holding_the_target_sideslip(monkeypatch):
    env = gym.make("Traction/Drift-v1", hold_seconds=1.0)
    u = env.unwrapped
    env.reset(seed=0)
    monkeypatch.setattr(type(u), "sideslip", lambda self, c=None: self.target)
    monkeypatch.setattr(type(u), "cross_track", lambda self, c=None: 0.5)
    coast = np.array([0.0, 0.0, -1.0, -1.0])                  # half throttle, no brakes
    steps = [env.step(coast) for _ in range(30)]
    infos = [s[4] for s in steps]
    assert not infos[20]["is_success"] and infos[26]["is_success"]
    # the observation's drift timer is this step's, the one the hold term pays
    assert all(o[18] == i["reward_hold"] for o, _, _, _, i in steps)
    assert infos[-1]["reward_sideslip"] > 0.5
    # hold pays the drift's age / hold_seconds (0.04 s steps), capped at 1
    assert infos[4]["reward_hold"] == pytest.approx(infos[3]["reward_hold"] + 0.04)
    assert infos[-1]["reward_hold"] == 1.0
    monkeypatch.setattr(type(u), "cross_track", lambda self, c=None: 8.0)   # off the line: drift ends
    after = [env.step(coast)[4] for _ in range(3)]
    assert all(i["reward_hold"] == 0.0 and i["is_success"] for i in after)   # success stays


def _pivot(env, obs):
    """PD on the heading error; below ~0.55 the engine cannot break the tracks' static scrub,
    so commands keep that minimum until within 1.5 degrees, then release."""
    err = np.arctan2(obs[0], obs[1])
    u = np.clip(3.0 * err - 0.8 * obs[2], -1, 1)
    u = np.sign(u) * max(abs(u), 0.55) if abs(err) > np.radians(1.5) else 0.0
    return np.array([-u, u])


def test_tank_pivot_reaches_and_holds_the_target_heading():
    env = gym.make("Traction/TankTurn-v1")
    total, infos, term = _run(env, _pivot, 400, options={"target_offset": np.pi / 2, "yaw": 0.3})
    assert term and infos[-1]["is_success"]
    bad, _, _ = _run(env, lambda e, o: np.array([1.0, 1.0]), 100,
                     options={"target_offset": np.pi / 2, "yaw": 0.3})
    assert total > bad + 1.0


def test_tank_leaving_the_arena_terminates_with_penalty_before_the_fall():
    """Full ahead from the centre, yaw 0: the episode ends as the CoM crosses the arena's edge
    (x = 30 m), level and at the arena's height; it had run on to the time limit with the tank
    falling from the edge."""
    env = gym.make("Traction/TankTurn-v1")
    env.reset(seed=0, options={"yaw": 0.0, "target_offset": 1.0})
    u = env.unwrapped
    grid = u.scene.terrain.grid
    for _ in range(400):
        _, _, term, trunc, info = env.step(np.array([1.0, 1.0], np.float32))
        if term or trunc:
            break
    c = u.read_chassis()
    assert term and not trunc and not info["is_success"]
    assert info["reward_off_arena"] == -u.weights["off_arena"] == -10.0
    assert grid.x0 + grid.extent[0] < c.com[0] < grid.x0 + grid.extent[0] + 0.5
    assert c.tilt < 0.3 and abs(c.com[2] - u.start[2]) < 1.0


def test_climb_difficulty_set_between_episodes_shapes_the_next_terrain():
    """A curriculum: set_attr("difficulty", d) on a single or native vector env gives, at the
    next reset, the terrain a fresh env of difficulty d builds from that terrain seed (it was a
    constructor argument only; set_attr made a new attribute nobody read). Copies keep it."""
    def heights(seed, d):
        return build_scene("truck_6x6", "rough_hill", seed=seed, difficulty=d).terrain.grid.heights

    env = gym.make("Traction/Climb6x6-v1")
    env.reset(seed=0)
    env.set_wrapper_attr("difficulty", 0.9)                    # what SyncVectorEnv calls
    env.reset(options={"terrain_seed": 5})
    assert env.unwrapped.difficulty == 0.9
    assert np.array_equal(env.unwrapped.scene.terrain.grid.heights, heights(5, 0.9))
    twin = copy.deepcopy(env)
    assert twin.unwrapped.difficulty == 0.9
    twin.reset(options={"terrain_seed": 6})
    assert np.array_equal(twin.unwrapped.scene.terrain.grid.heights, heights(6, 0.9))
    with pytest.raises(ValueError, match=r"difficulty = 1.5; allowed: \[0, 1\]"):
        env.unwrapped.difficulty = 1.5
    venv = gym.make_vec("Traction/Climb6x6-v1", num_envs=2,
                        vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    venv.set_attr("difficulty", [0.1, 1.0])
    venv.reset(options={"terrain_seed": 5})
    for world, d in zip(venv.unwrapped.envs, (0.1, 1.0), strict=True):
        assert np.array_equal(world.scene.terrain.grid.heights, heights(5, d))
    venv.close()


def test_drift_target_set_after_construction_is_the_one_rewarded():
    """target_sideslip_deg was read at construction only: setting it (set_attr) made a new
    attribute and the reward kept the old target."""
    a = np.array([0.3, 1.0, 0.0, 0.0], np.float32)
    envs = [gym.make("Traction/Drift-v1", target_sideslip_deg=t) for t in (30.0, 45.0)]
    envs[0].set_wrapper_attr("target_sideslip_deg", 45.0)
    rewards = []
    for e in envs:
        e.reset(seed=1)
        rewards.append([e.step(a)[1] for _ in range(20)])
    assert rewards[0] == rewards[1]
    assert envs[0].unwrapped.target_sideslip_deg == pytest.approx(45.0)
    with pytest.raises(ValueError, match=r"target_sideslip_deg = 80; allowed: \[0, 80\) deg"):
        envs[0].unwrapped.target_sideslip_deg = 80


@pytest.mark.parametrize("env_id", ["Traction/Climb6x6-v1", "Traction/Drift-v1",
                                    "Traction/TankTurn-v1"])
def test_reward_weights_set_after_construction_are_the_ones_rewarded(env_id):
    """Every weight argument is an attribute of weights[term] (set_attr made a new attribute
    nobody read): an env given weights later rewards as one built with them."""
    cls = type(gym.make(env_id).unwrapped)
    args = [a for a in inspect.signature(cls.__init__).parameters
            if a.endswith(("_weight", "_bonus", "_penalty"))]
    assert sorted(args) == sorted(cls.weight_arguments)
    given = {a: 0.5 + i for i, a in enumerate(args)}
    built, later = gym.make(env_id, **given), gym.make(env_id)
    for a, w in given.items():
        later.set_wrapper_attr(a, w)
        assert built.unwrapped.weights[cls.weight_arguments[a]] == getattr(built.unwrapped, a) == w
    rng = np.random.default_rng(0)
    for e in (built, later):
        e.reset(seed=2)
    for _ in range(15):
        a = rng.uniform(-1, 1, built.action_space.shape).astype(np.float32)
        assert built.step(a)[1] == later.step(a)[1]
    with pytest.raises(ValueError, match=rf"{args[0]} = nan"):
        setattr(later.unwrapped, args[0], float("nan"))


@pytest.mark.parametrize("env_id, fixed", [
    ("Traction/Climb6x6-v1", {"terrain": "crest", "differential": "equal",
                              "action_mode": "wheel_torques"}),
    ("Traction/Drift-v1", {"radius": 30.0}),
    ("Traction/TankTurn-v1", {"drive_mode": "standard"}),
])
def test_arguments_that_shaped_the_env_refuse_set_attr_by_name(env_id, fixed):
    """A constructor argument that shaped the built env (scene, vehicle, spaces, time steps)
    cannot be set afterwards: set_attr (native and SyncVectorEnv) and set_wrapper_attr raise,
    naming it and what is settable (they made an attribute nothing read, or, for Drift's
    radius, moved the rewarded circle off the painted pad). Every other argument is settable
    and read (a property or an attribute the task reads), or a rendering one."""
    fixed = {**fixed, "vehicle": "sedan", "control_dt": 0.08, "physics_dt": 0.002}
    env = gym.make(env_id)
    u = env.unwrapped
    args = set(inspect.signature(type(u).__init__).parameters) - {"self"}
    settable = {a for a in args if isinstance(getattr(type(u), a, None), property)
                and a not in fixed} | {a for a in args if a in vars(u)}
    assert args == set(fixed) | settable | {"render_mode", "width", "height"}
    before = {a: getattr(u, a) for a in fixed}
    sync = gym.make_vec(env_id, num_envs=2, vectorization_mode="sync")
    native = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point")
    for name, value in fixed.items():
        message = (rf"{name} is fixed when the environment is built .*gym.make\('{env_id}', "
                   rf"{name}=\.\.\.\)\. Settable between steps: .*{sorted(settable)[0]}")
        for setter in (env.set_wrapper_attr, sync.set_attr, native.set_attr):
            with pytest.raises(AttributeError, match=message):
                setter(name, value)
    assert {a: getattr(u, a) for a in fixed} == before
    twin = copy.deepcopy(u)
    assert {a: getattr(twin, a) for a in fixed if a != "vehicle"} == \
           {a: v for a, v in before.items() if a != "vehicle"}
    for v in (sync, native):
        v.close()


def test_settings_read_every_step_are_checked_when_set():
    """goal_radius (Climb6x6) and hold_seconds (Drift) are read at every step, so settable; a
    value that is not a finite number > 0 is refused by name (it was taken: a negative radius
    never succeeded), and a set radius is the one the success reads."""
    env = gym.make("Traction/Climb6x6-v1")
    drift = gym.make("Traction/Drift-v1")
    for e, name in ((env, "goal_radius"), (drift, "hold_seconds")):
        for bad in (0.0, -1.0, float("nan"), "6"):
            with pytest.raises(ValueError, match=rf"{name} = .*; allowed: > 0 (m|s)"):
                e.set_wrapper_attr(name, bad)
    env.reset(seed=0)
    env.set_wrapper_attr("goal_radius", 1e4)                     # the goal is everywhere
    *_, terminated, _, info = env.step(np.zeros(2, np.float32))
    assert terminated and info["is_success"] and env.unwrapped.goal_radius == 1e4


def test_the_substep_count_is_fixed_and_old_pickles_still_load():
    """n_substeps (control_dt / physics_dt) was settable, and the native vector env kept its own
    copy; a state pickled when the fixed arguments were plain attributes holds them among its
    settings, which load (they equal the constructor's)."""
    env = gym.make("Traction/Drift-v1")
    with pytest.raises(AttributeError, match=r"n_substeps is fixed .*gym.make\("
                                             r"'Traction/Drift-v1', other arguments \(control_dt"):
        env.set_wrapper_attr("n_substeps", 1)
    u = env.unwrapped
    u.reset(seed=0)
    saved = u.__getstate__()
    saved["settings"].update(radius=20.0, control_dt=0.04, physics_dt=0.004, n_substeps=10)
    old = object.__new__(type(u))
    old.__setstate__(saved)
    assert (old.radius, old.n_substeps) == (20.0, 10)
    a = np.array([0.2, 0.8, 0.0, 0.0], np.float32)
    assert np.array_equal(old.step(a)[0], u.step(a)[0])


# Drive lever from reverse gear at a standstill: lever forward shifts back to first gear.
def test_drive_lever_forward_from_reverse_at_a_standstill_selects_first_gear():
    """Below REVERSE_SPEED either way the lever selects the gear it points to: back at rest
    engages reverse; forward again before the truck has moved asks for first gear with the lever
    as throttle (not the swapped pedal roles, which would brake in reverse)."""
    u = gym.make("Traction/Climb6x6-v1").unwrapped
    u.reset(seed=0)
    u.step(np.array([-0.75, 0.0], np.float32))                         # at rest: reverse
    assert u.sim.state.gearbox.target[0] < 0
    assert abs(u.read_chassis().velocity_body[0]) < 0.5                 # still below 0.5 m/s
    u.step(np.array([0.5, 0.0], np.float32))
    c = u.sim.commands.vehicle[0]
    assert (c["throttle"], c["brake"], c["target_gear"]) == (0.5, 0.0, 1.0)
