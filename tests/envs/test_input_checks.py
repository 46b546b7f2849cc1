"""Bad constructor arguments, reset options and vector-env calls are refused with an error that
names what was wrong, before anything is built or stepped."""

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded

import traction.envs  # noqa: F401  (registers the environments)
from traction.envs import VehicleSim, World, physics
from traction.scenes import build_scene
from traction.vehicle_model import load_vehicle


def _one_gear_car():
    p = load_vehicle("sedan_rwd")
    return dataclasses.replace(p, gearbox=dataclasses.replace(p.gearbox, forward_ratios=[3.5],
                                                              up_ratios=[0.65], down_ratios=[0.5]))


@pytest.mark.parametrize("kwargs, match", [
    ({"physics_dt": 0.0}, r"physics_dt = 0.0; allowed: \[0.0001, 0.01\] s"),
    ({"physics_dt": 1e-5}, r"physics_dt = 1e-05; allowed: \[0.0001, 0.01\] s"),
    ({"physics_dt": 0.02, "control_dt": 0.04}, r"physics_dt = 0.02; allowed: \[0.0001, 0.01\] s "
     r"\(MuJoCo's step; above 0.01 s springs and tyres lose stability\)"),
    ({"control_dt": float("nan")}, r"control_dt = nan; allowed"),
    ({"control_dt": float("inf")}, r"control_dt = inf; allowed"),
    ({"control_dt": 0.041}, r"must be a positive multiple of physics_dt"),
    ({"hold_seconds": 0.0}, r"hold_seconds = 0.0; allowed: > 0"),
    ({"hold_seconds": -1.0}, r"hold_seconds = -1.0"),
    ({"circle_weight": float("nan")}, r"reward term 'circle' = nan"),
    ({"vehicle": "truck_6x6"}, r"has 6 wheels; Drift-v1's observation"),
    ({"vehicle": "sedan"}, r"vehicle 'sedan' has no engine \(differential type 'direct'\)"),
    ({"radius": 2.0}, r"radius = 2.0; allowed: \[5, 60\] m"),
    ({"vehicle": _one_gear_car()}, r"vehicle 'sedan_rwd' has 1 forward gear\(s\); Drift-v1 "
     r"starts each episode in second gear"),
    ({"target_sideslip_deg": "30"}, r"target_sideslip_deg = '30'; allowed: \[0, 80\) deg"),
    ({"target_sideslip_deg": None}, r"target_sideslip_deg = None; allowed: \[0, 80\) deg"),
    ({"target_sideslip_deg": 80.0}, r"target_sideslip_deg = 80.0; allowed: \[0, 80\) deg"),
])
def test_drift_arguments_are_checked(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make("Traction/Drift-v1", **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    ({"vehicle": "sedan_rwd"}, r"has 4 wheels; Climb6x6-v1's observation"),
    ({"goal_radius": -1.0}, r"goal_radius = -1.0"),
    ({"slip_weight": float("inf")}, r"reward term 'slip' = inf"),
    ({"terrain": "crest", "difficulty": float("nan")}, r"difficulty = nan; allowed: \[0, 1\]"),
])
def test_climb_arguments_are_checked(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make("Traction/Climb6x6-v1", **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    ({"width": 0}, r"width = 0; allowed: an integer in \[1, 1280\] px"),
    ({"width": 2000}, r"width = 2000; allowed: an integer in \[1, 1280\] px"),
    ({"height": 2.5}, r"height = 2.5; allowed: an integer in \[1, 720\] px"),
])
def test_frame_size_is_checked_when_the_env_is_made(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make("Traction/TankTurn-v1", render_mode="rgb_array", **kwargs)


@pytest.mark.parametrize("env_id", ["Traction/Drift-v1", "Traction/Climb6x6-v1",
                                    "Traction/TankTurn-v1"])
@pytest.mark.parametrize("vehicle", [3, None, ["tank"]])
def test_vehicle_argument_of_a_wrong_type_is_named(env_id, vehicle):
    with pytest.raises(ValueError, match=r"vehicle = .*; allowed: a preset name \(sedan, "):
        gym.make(env_id, vehicle=vehicle)


def test_tank_weights_are_checked():
    with pytest.raises(ValueError, match=r"reward term 'hold' = nan"):
        gym.make("Traction/TankTurn-v1", hold_bonus=float("nan"))


@pytest.mark.parametrize("env_id, options, match", [
    ("Traction/TankTurn-v1", {"yaw": float("nan")}, r"reset option yaw = nan"),
    ("Traction/TankTurn-v1", {"target_offset": float("inf")}, r"reset option target_offset = inf"),
    ("Traction/TankTurn-v1", {"yaw": "1"}, r"reset option yaw = '1'"),
    ("Traction/Drift-v1", {"speed": float("nan")}, r"reset option speed = nan"),
    ("Traction/Drift-v1", {"speed": -3.0}, r"reset option speed = -3.0; allowed: \[0, 40\] m/s"),
    ("Traction/Drift-v1", {"spawn": (0, 0, 0)}, r"reset option 'spawn' is unknown; allowed: "
                                                r"terrain_seed, speed"),
    ("Traction/Climb6x6-v1", {"spawn": (np.nan, 0, 0)}, r"reset option spawn x = nan"),
    ("Traction/Climb6x6-v1", {"spawn": (1e6, 0, 0)}, r"reset option spawn x = 1000000.0"),
    ("Traction/Climb6x6-v1", {"spawn": (-49.0, 0, 0)}, r"reset option spawn x = -49.0; allowed: "
     r"\[-47.3909, 47.3909\] m"),                      # the truck's wheels off the 100 m grid
    ("Traction/Climb6x6-v1", {"spawn": (1,)}, r"reset option spawn = \(1,\); allowed: \(x m, y m"),
    ("Traction/Climb6x6-v1", {"terrain_seed": "abc"}, r"terrain_seed = 'abc'; allowed: an integer >= 0"),
    ("Traction/Climb6x6-v1", {"terrain_seed": 1.5}, r"terrain_seed = 1.5"),
    ("Traction/Climb6x6-v1", {"terrain_seed": -5}, r"terrain_seed = -5"),
    ("Traction/Climb6x6-v1", {"spwan": (0, 0, 0)}, r"reset option 'spwan' is unknown"),
])
def test_reset_options_are_checked(env_id, options, match):
    env = gym.make(env_id)
    with pytest.raises(ValueError, match=match):
        env.reset(seed=0, options=options)
    env.reset(seed=0)                                   # the env is still usable


@pytest.mark.parametrize("yaw", [-6.0, -4.0, 4.0, 6.0])
def test_a_spawn_yaw_may_be_any_angle_of_a_turn_either_way(yaw):
    """Climb's spawn yaw is allowed in [-2 pi, 2 pi]: 4 rad is -2.28 rad, and so on."""
    env = gym.make("Traction/Climb6x6-v1")
    env.reset(seed=0, options={"spawn": (-30.0, 0.0, yaw)})
    wrapped = (yaw + np.pi) % (2 * np.pi) - np.pi
    assert env.unwrapped.heading() == pytest.approx(wrapped, abs=1e-3)
    with pytest.raises(ValueError, match=r"reset option spawn yaw = 6.3; allowed: \[-6.28319, "
                       r"6.28319\] rad"):
        env.reset(seed=0, options={"spawn": (-30.0, 0.0, 6.3)})


@pytest.mark.parametrize("env_id, bad", [
    ("Traction/Climb6x6-v1", {"spawn": (1e6, 0, 0)}),
    ("Traction/Drift-v1", {"speed": 99.0}),
    ("Traction/TankTurn-v1", {"terrain_seed": 1, "yaw": 9.0}),
])
def test_a_refused_reset_changes_nothing(env_id, bad):
    """Every option is checked before the RNG is reseeded or the terrain regenerated: after a
    refused reset with another seed, the episode continues exactly as if it had not been tried."""
    def run(refuse: bool):
        env = gym.make(env_id)
        env.reset(seed=3)
        env.step(env.action_space.sample() * 0)
        if refuse:
            with pytest.raises(ValueError, match="reset option"):
                env.reset(seed=4, options=bad)
        u = env.unwrapped
        obs = [env.step(np.full(env.action_space.shape, 0.5, np.float32))[0] for _ in range(3)]
        return np.array(obs), u.model.hfield_data.copy(), env.reset()[0]
    for got, expected in zip(run(True), run(False), strict=True):
        np.testing.assert_array_equal(got, expected)


def test_complex_actions_are_refused():
    env = gym.make("Traction/TankTurn-v1")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"cannot be read as real numbers; expected \(2,\) "
                                         r"\(left, right\)"):
        env.step(np.array([0.5 + 3j, 0.1j]))
    with pytest.raises(ValueError, match=r"'ab' cannot be read .*; expected \(2,\) \(left, "):
        env.step("ab")
    venv = gym.make_vec("Traction/TankTurn-v1", num_envs=2, vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"cannot be read as real numbers \(dtype complex128\); "
                                         r"expected \(2, 2\) \(num_envs, left, right\)"):
        venv.step(np.full((2, 2), 0.5 + 1j))


def test_human_rendering_without_a_display_is_refused(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    with pytest.raises(RuntimeError, match="'human' needs a display"):
        gym.make("Traction/TankTurn-v1", render_mode="human")


@pytest.mark.parametrize("argv, display, message", [
    ([], None, "the viewer needs a display"),
    (["--vehicle", "nope"], ":0", "unknown vehicle preset 'nope'"),
    (["--terrain", "moon"], ":0", "terrain"),
    (["CartPole-v1"], ":0", "'CartPole-v1': not a Traction environment; allowed: "),
    (["--vehicle", "sedan"], ":0", "--vehicle sedan: a 'direct' vehicle has no engine"),
])
def test_drive_cli_gives_usage_errors_before_opening_a_window(monkeypatch, capsys, argv, display,
                                                             message):
    from traction.envs import drive

    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    if display:
        monkeypatch.setenv("DISPLAY", display)
    else:
        monkeypatch.delenv("DISPLAY", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        drive.main(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("steps", [0, -2, 2.5, "3", True])
def test_vector_time_limit_is_checked(steps):
    with pytest.raises(ValueError, match="max_episode_steps = .*; allowed: an integer >= 1"):
        gym.make_vec("Traction/TankTurn-v1", num_envs=2, vectorization_mode="vector_entry_point",
                     max_episode_steps=steps)


@pytest.mark.parametrize("steps, limit", [(None, 400), (-1, None), (7, 7)])
def test_vector_time_limit_reads_as_in_gym_make(steps, limit):
    venv = gym.make_vec("Traction/TankTurn-v1", num_envs=1, vectorization_mode="vector_entry_point",
                        max_episode_steps=steps)
    single = gym.make("Traction/TankTurn-v1", max_episode_steps=steps)
    assert venv.unwrapped.max_episode_steps == limit
    assert getattr(single, "_max_episode_steps", None) == limit      # TimeLimit's, if wrapped


def test_vector_step_before_reset_is_refused():
    venv = gym.make_vec("Traction/Climb6x6-v1", num_envs=2,
                        vectorization_mode="vector_entry_point")
    with pytest.raises(ResetNeeded, match="step\\(\\) before reset\\(\\)"):
        venv.step(np.zeros((2, 2), np.float32))


def test_vector_partial_reset_resets_only_the_masked_worlds():
    venv = gym.make_vec("Traction/TankTurn-v1", num_envs=3, vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    for _ in range(10):
        obs, *_ = venv.step(np.tile(np.float32([1.0, -1.0]), (3, 1)))
    times = [e.data.time for e in venv.unwrapped.envs]
    mask = np.array([False, True, False])
    new, info = venv.reset(seed=5, options={"reset_mask": mask})
    after = [e.data.time for e in venv.unwrapped.envs]
    assert after[0] == times[0] and after[2] == times[2] and after[1] < times[1]
    assert np.array_equal(new[[0, 2]], obs[[0, 2]]) and not np.array_equal(new[1], obs[1])
    assert info["_is_success"].tolist() == [False, True, False]
    single = gym.make("Traction/TankTurn-v1")                      # world 1 got seed 5 + 1
    assert np.array_equal(single.reset(seed=6)[0], new[1])
    for bad in (np.array([1, 0, 0]), np.array([False, False, False]), np.array([True, False])):
        with pytest.raises(ValueError, match="reset_mask"):
            venv.reset(options={"reset_mask": bad})


def test_a_tyre_type_outside_the_friction_table_is_refused_by_the_simulator():
    import dataclasses

    from traction.envs import VehicleSim
    from traction.scenes import build_scene
    from traction.vehicle_model import VehicleConfigError, load_vehicle

    p = load_vehicle("sedan_rwd")
    p = dataclasses.replace(p, tires=dataclasses.replace(p.tires, tire_type=np.full(4, 7)))
    with pytest.raises(VehicleConfigError, match=r"tire.tire_type\[0\] = 7 is not a tyre type"):
        VehicleSim(build_scene(p, "flat"))


@pytest.mark.parametrize("values, match", [
    ({"torque_split": [np.nan, np.nan, np.inf, 1.0]}, r"torque_split must be finite \(or NaN: no "
                                                      r"override\)"),
    ({"target_gear": np.nan}, r"command target_gear must be whole numbers, got nan"),
    ({"target_gear": 2.7}, r"command target_gear must be whole numbers, got 2.7"),
    ({"wheel_torque": ["a"] * 4}, r"command wheel_torque = \['a', 'a', 'a', 'a'\]: not numbers"),
])
def test_vehicle_sim_commands_are_checked(values, match):
    from traction.envs import VehicleSim
    from traction.scenes import build_scene

    sim = VehicleSim(build_scene("sedan", "flat"))
    with pytest.raises(ValueError, match=match):
        sim.set_commands(**values)
    sim.set_commands(torque_split=[np.nan] * 4, target_gear=2)          # NaN: no override


@pytest.mark.parametrize("preset, values, match", [
    ("sedan", {"throttle": 1.0}, "command throttle = 1.0: a 'direct' vehicle has no engine"),
    ("sedan_rwd", {"wheel_torque": [0, 0, 500, 500]}, "command wheel_torque = .*: drives a "
     "'direct' vehicle's wheels; this one's engine drives them through its 'four_wheel'"),
    ("truck_6x6", {"thrust": [[1.0, -1.0]]}, "command thrust = .*: steers a tank's tracks; this "
     "vehicle's differential is 'torque_vectoring'"),
    ("tank", {"torque_split": [1.0] + [0.0] * 11}, "a tank's tracks share the torque by thrust"),
    ("sedan", {"torque_split": [0.5, 0.5, 0.0, 0.0]}, "a 'direct' vehicle has no differential"),
])
def test_a_drive_command_the_vehicle_does_not_read_is_refused(preset, values, match):
    """It did nothing: full throttle left the direct-drive sedan standing (found by a reviewer);
    the idle value generic code sets (0; a torque_split's NaN) is accepted."""
    from traction.envs import VehicleSim
    from traction.scenes import build_scene

    sim = VehicleSim(build_scene(preset, "flat"))
    with pytest.raises(ValueError, match=match):
        sim.set_commands(**values)
    idle = {name: np.full(np.shape(v), np.nan if name == "torque_split" else 0.0)
            for name, v in values.items()}
    sim.set_commands(**idle)


@pytest.mark.parametrize("kwargs, match", [
    ({"pos": [0.0, 0.0, np.nan]}, r"reset pos = \[0.0, 0.0, nan\]; allowed: 3 finite numbers"),
    ({"pos": 5.0}, r"reset pos = 5.0; allowed: 3 finite numbers"),
    ({"quat": [0, 0, 0, 0]}, r"reset quat = \[0.0, 0.0, 0.0, 0.0\]: zero"),
    ({"velocity": [1.0, 2.0]}, r"reset velocity = \[1.0, 2.0\]; allowed: 3 finite numbers"),
])
def test_vehicle_sim_reset_pose_is_checked_before_anything_changes(kwargs, match):
    from traction.envs import VehicleSim
    from traction.scenes import build_scene

    sim = VehicleSim(build_scene("sedan", "flat"), telemetry=100)
    sim.step(5)
    time = sim.data.time
    with pytest.raises(ValueError, match=match):
        sim.reset(**kwargs)
    assert sim.data.time == time
    with pytest.raises(ValueError, match=r"n_substeps = -1; allowed: an integer >= 0"):
        sim.step(-1)                                     # with telemetry too


def test_a_world_of_several_refuses_sims_that_record_telemetry():
    """A world of several steps them in one call and records nothing, so a sim recording
    telemetry is refused by name (its buffer stayed empty and gave header-only CSVs)."""
    with pytest.raises(ValueError, match=r"World: sim 1 records telemetry"), World(2).filled():
        [VehicleSim(build_scene("sedan"), telemetry=t) for t in (0, 100)]


# A world steps every row with the first sim's packed vehicle parameters, so a sim of another
# vehicle (here the same sedan with weaker brakes) must be refused; the check comparing each sim
# with itself went unseen.
def test_a_world_refuses_sims_of_other_vehicle_parameters():
    p = load_vehicle("sedan")
    weak = dataclasses.replace(p, wheels=dataclasses.replace(
        p.wheels, max_brake_torque=np.asarray(p.wheels.max_brake_torque) * 0.5))
    with pytest.raises(ValueError, match="World: every sim must use the same vehicle parameters"):
        with World(2).filled():
            [VehicleSim(build_scene(p)), VehicleSim(build_scene(weak))]
    with World(2).filled() as world:                                  # equal parameters: fine
        [VehicleSim(build_scene(p)) for _ in range(2)]
    world.close()


# A control step shorter than half a physics step.
@pytest.mark.parametrize("control_dt", [1e-9, 1e-12])
def test_a_control_step_of_no_physics_substep_is_refused(control_dt):
    """control_dt / physics_dt rounds to 0 substeps: a step would advance nothing."""
    with pytest.raises(ValueError, match="must be a positive multiple of physics_dt"):
        gym.make("Traction/Drift-v1", control_dt=control_dt)


@pytest.mark.parametrize("seeds", [[1, 2, 3], [1]])
def test_vector_reset_needs_exactly_one_seed_per_world(seeds):
    venv = gym.make_vec("Traction/TankTurn-v1", num_envs=2, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match=rf"reset\(seed=...\) got {len(seeds)} seeds; expected 2"):
        venv.reset(seed=seeds)
    venv.close()


# VehicleSim inputs at their limits: a scalar command must be finite (the fast path for plain
# numbers included), and a reset speed of exactly the maximum is allowed.
@pytest.mark.parametrize("name, value", [("throttle", float("nan")), ("steer", float("inf")),
                                         ("brake", np.float64(-np.inf)), ("handbrake", np.nan)])
def test_a_non_finite_scalar_command_is_refused_and_nothing_changes(name, value):
    sim = VehicleSim(build_scene("sedan_rwd", "flat"))
    sim.set_commands(**{name: 0.5})
    before = sim.commands.vehicle.copy()
    with pytest.raises(ValueError, match=rf"command {name} must be finite"):
        sim.set_commands(**{name: value})
    assert np.array_equal(sim.commands.vehicle, before)


def test_reset_at_exactly_the_maximum_chassis_speed_is_allowed():
    """The limit is inclusive ("a speed up to" it); just above it is refused."""
    sim = VehicleSim(build_scene("sedan", "flat"))
    top = physics.MAX_CHASSIS_SPEED
    sim.reset(velocity=[top, 0.0, 0.0])
    assert np.linalg.norm(sim.com_velocity()) == pytest.approx(top)
    with pytest.raises(ValueError, match="allowed: a speed up to"):
        sim.reset(velocity=[top * (1 + 1e-9), 0.0, 0.0])


def test_a_world_is_filled_with_exactly_its_rows():
    """Sims built inside ``World.filled`` take its rows in order; one more than it has rows, or
    fewer by the end of the block, is refused by count; a sim built outside gets a world of
    its own."""
    with World(2).filled() as world:
        sims = [VehicleSim(build_scene("sedan")) for _ in range(2)]
        with pytest.raises(ValueError, match="World: all its 2 worlds have their sim"):
            VehicleSim(build_scene("sedan"))
    assert [s.row for s in sims] == [0, 1] and all(s.world is world for s in sims)
    alone = VehicleSim(build_scene("sedan"))
    assert (alone.world.size, alone.row) == (1, 0) and alone.world is not world
    with pytest.raises(ValueError, match=r"World: 1 sims built for its 3 worlds"):
        with World(3).filled():
            VehicleSim(build_scene("sedan"))
    world.close()
