"""Friction per world: each world of a World (the native vector env) reads its own sim's
friction table, as separate environments do, so grip can be randomised per world; a value that
is not finite and >= 0 is refused by name before anything is stepped."""

import copy

import gymnasium as gym
import numpy as np
import pytest

import traction.envs  # noqa: F401  (registers the environments)
from traction import vehicle_model as vm
from traction.envs import VehicleSim, World
from traction.scenes import build_scene

G = 9.81


def _peak(params) -> float:
    """The physx tyres' peak friction-vs-slip multiplier (the same on every wheel)."""
    peak = params.tires.friction_vs_slip[:, :, 1].max(axis=1)
    assert np.all(peak == peak[0])
    return float(peak[0])


def test_each_world_brakes_on_its_own_friction():
    """Three sedans braking from 20 m/s in one World, on tarmac of friction 1, 0.5 and 0.25
    (each world's table edited): each stops within v0^2 / (2 mu_eff g), 1 % short to 10 % long
    (the stop criterion, friction ramp-up, brake dive and the crawl to the stop), as a sedan
    alone does (tests/scenarios/test_tires.py)."""
    with World(3).filled() as world:
        sims = [VehicleSim(build_scene("sedan", "flat")) for _ in range(3)]
    mus, v0 = (1.0, 0.5, 0.25), 20.0
    for sim, mu in zip(sims, mus, strict=True):
        tire = int(sim.params.tires.tire_type[0])
        sim.friction_table.set("tarmac", mu, tire)
        sim.reset(velocity=[v0, 0, 0])
        sim.state.omega[:] = v0 / sim.params.wheels.radius
        sim.set_commands(brake=1.0)
    x0 = [sim.com_position()[0] for sim in sims]
    stopped = [None] * 3
    for _ in range(int(10.0 / sims[0].dt)):
        world.step(1)
        for i, sim in enumerate(sims):
            if stopped[i] is None and sim.forward_speed() < 0.01:
                stopped[i] = sim.com_position()[0] - x0[i]
        if all(d is not None for d in stopped):
            break
    for dist, mu in zip(stopped, mus, strict=True):
        ideal = v0**2 / (2 * mu * _peak(sims[0].params) * G)
        assert dist is not None and 0.99 * ideal <= dist <= 1.10 * ideal, (mu, dist, ideal)
    world.close()


@pytest.mark.parametrize("threads", [1, 2])
def test_per_world_edits_give_the_sync_vector_env_trajectories(threads):
    """Edits of world 2's table in place and a new table for world 3 give, bit for bit, what the
    same edits of a SyncVectorEnv's envs give; the other worlds run as if nothing was edited
    (they once all read world 0's table, or all took an in-place edit)."""
    native = gym.make_vec("Traction/Drift-v1", num_envs=4, vectorization_mode="vector_entry_point",
                          num_threads=threads)
    fresh = gym.make_vec("Traction/Drift-v1", num_envs=4, vectorization_mode="vector_entry_point")
    sync = gym.make_vec("Traction/Drift-v1", num_envs=4, vectorization_mode="sync")
    a = np.full((4, 4), 0.5, np.float32)
    for v in (native, fresh, sync):
        v.reset(seed=1)
        v.step(a)
    for sim in ([e.sim for e in native.unwrapped.envs], [e.unwrapped.sim for e in sync.envs]):
        sim[2].friction_table.values[...] /= 3.0
        table = vm.FrictionTable.default()
        table.values = table.values * 0.6
        sim[3].friction_table = table
    for _ in range(8):
        got, ref, base = native.step(a), sync.step(a), fresh.step(a)
        for g, r in zip(got[:3], ref[:3], strict=True):
            assert np.array_equal(g, r)
    assert np.array_equal(got[0][:2], base[0][:2])
    assert not np.array_equal(got[0][2], base[0][2]) and not np.array_equal(got[0][3], base[0][3])
    for v in (native, fresh, sync):
        v.close()


@pytest.mark.parametrize("threads", [1, 2])
def test_a_bad_friction_value_is_refused_naming_the_world_before_any_world_steps(threads):
    venv = gym.make_vec("Traction/TankTurn-v1", num_envs=3, vectorization_mode="vector_entry_point",
                        num_threads=threads)
    venv.reset(seed=0)
    a = np.zeros((3, *venv.single_action_space.shape), np.float32)
    venv.step(a)
    arrays = venv.unwrapped.world.arrays
    before = (arrays.state.wheel.copy(), arrays.now.copy(), arrays.commands.vehicle.copy())
    times = [e.data.time for e in venv.unwrapped.envs]
    for bad in (np.nan, -0.1, np.inf):
        venv.unwrapped.envs[2].sim.friction_table.values[4, 2] = bad
        with pytest.raises(vm.VehicleConfigError, match=r"friction_table of world 2: values must "
                                                        r"be finite and >= 0 \(nothing was stepped"):
            venv.step(a + 0.5)
        assert [e.data.time for e in venv.unwrapped.envs] == times
        after = (arrays.state.wheel, arrays.now, arrays.commands.vehicle)
        assert all(np.array_equal(x, y) for x, y in zip(before, after, strict=True))
    venv.unwrapped.envs[2].sim.friction_table.values[4, 2] = 0.7
    venv.step(a)
    venv.close()


def test_a_single_sim_refuses_a_bad_value_and_takes_a_table_of_another_shape():
    """Alone, a sim names its table for a bad value, steps nothing, and takes a table with more
    tyre types (its friction rows rebuilt, its state kept): with friction 0 the driven car gains no
    speed, with the table's 1.0 it does."""
    sim = VehicleSim(build_scene("sedan_rwd", "flat"))
    sim.step(200)
    sim.friction_table.values[0, 0] = -1.0
    time = sim.data.time
    with pytest.raises(vm.VehicleConfigError, match=r"^friction_table: values must be finite"):
        sim.step(1)
    assert sim.data.time == time
    surfaces = sim.friction_table.surfaces
    wide = vm.FrictionTable(surfaces, ["road", "offroad", "track", "slick"],
                            np.zeros((len(surfaces), 4)))
    sim.friction_table = wide
    z = sim.com_position()[2]
    sim.state.set_gear(sim.params, 2)                                    # first gear
    sim.set_commands(throttle=1.0)
    sim.step(500)
    assert abs(sim.forward_speed()) < 1e-3
    assert sim.com_position()[2] == pytest.approx(z, abs=2e-3)           # still on its wheels
    wide.values[:, 0] = 1.0
    sim.step(500)
    assert sim.forward_speed() > 2.0                                     # 1 s at full throttle


def test_a_world_reads_tables_of_one_shape():
    scene = build_scene("sedan", "flat")
    surfaces = scene.friction_table.surfaces
    wide = vm.FrictionTable(surfaces, ["road", "offroad", "track", "slick"],
                            np.ones((len(surfaces), 4)))
    with pytest.raises(ValueError, match=r"World: sim 1's friction table has shape "
                                         r"\(7, 4\), sim 0's \(7, 3\)"), World(2).filled():
        [VehicleSim(build_scene("sedan", "flat")), VehicleSim(scene, friction_table=wide)]
    with World(2).filled() as world:
        sims = [VehicleSim(build_scene("sedan", "flat")) for _ in range(2)]
    with pytest.raises(ValueError, match=r"friction_table: 4 tyre types; this world's vector env "
                                         r"reads tables of 3"):
        sims[1].friction_table = wide
    assert sims[1].friction_table is not wide
    world.close()


def test_a_vector_worlds_snapshot_restores_only_its_own_table():
    venv = gym.make_vec("Traction/Drift-v1", num_envs=2, vectorization_mode="vector_entry_point")
    venv.reset(seed=3)
    envs = venv.unwrapped.envs
    state = envs[1].get_state()
    envs[0].sim.friction_table.values[...] *= 0.5
    envs[1].sim.friction_table.values[...] *= 0.5
    envs[1].set_state(state)
    default = vm.FrictionTable.default().values
    assert np.array_equal(envs[1].sim.friction_table.values, default)
    assert np.array_equal(envs[0].sim.friction_table.values, default * 0.5)
    venv.close()


def test_the_standalone_update_takes_a_table_per_vehicle(sedan):
    """Two vehicles in the same state spinning their wheels from rest on tarmac, one table each
    (friction 1 and 0.3), driven hard (3000 N m a wheel): the second's friction (surface x
    graph, at the same slip) is 0.3 times the first's; its wheels slide, so its tyre forces are
    friction x load (Coulomb; once the treads have stretched), 0.3 times the first's limit; the
    first's stay within that limit."""
    state = vm.VehicleState.zeros(sedan, 2)
    state.omega[:] = 60.0                                     # wheels spinning from rest
    kin = vm.ChassisKinematics(np.zeros((2, 3)), np.repeat(np.eye(3)[None], 2, 0),
                               np.repeat(sedan.chassis.com[None], 2, 0), np.zeros((2, 3)),
                               np.zeros((2, 3)))
    rest = sedan.suspension.max_compression + sedan.wheels.radius
    hits = vm.GroundHits(np.full((2, 4), 0.95 * rest), np.array([0.0, 0.0, 1.0]),
                         np.zeros((2, 4), int))
    cmd = vm.Commands.zeros(sedan, 2)
    cmd.wheel_torque = 3000.0
    grippy, slick = vm.FrictionTable.default(), vm.FrictionTable.default()
    slick.values = slick.values * 0.3
    for _ in range(20):
        out = vm.step(sedan, state, kin, hits, cmd, [grippy, slick], 0.002)
    assert np.all(out.in_contact) and np.all(out.friction[0] > 0)
    np.testing.assert_allclose(out.friction[1], 0.3 * out.friction[0], rtol=1e-12)
    f, limit = np.linalg.norm(out.tire_force, axis=-1), out.friction * out.load
    np.testing.assert_allclose(f[1], limit[1], rtol=1e-9)
    np.testing.assert_allclose(f[1], 0.3 * limit[0], rtol=1e-9)
    assert np.all(f[0] <= limit[0] * (1 + 1e-9)) and np.all(f[0] > f[1])
    for bad, match in (([grippy], "a FrictionTable or a list of 2"),
                       ([grippy] * 3, "a FrictionTable or a list of 2"),
                       ("tarmac", "a FrictionTable or a list of 2"),
                       ([grippy, vm.FrictionTable(["tarmac"], ["road"], [[1.0]])],
                        r"shapes \[\(7, 3\), \(1, 1\)\]")):
        with pytest.raises(ValueError, match=match):
            vm.step(sedan, state, kin, hits, cmd, bad, 0.002)


@pytest.mark.parametrize("how", ["autoreset", "reset", "single"])
def test_a_bad_friction_value_is_refused_before_a_reset_changes_anything(how):
    """A reset steps once, so it reads the table: a bad value is refused before any world is
    reset (the next-step autoreset of every world, an explicit reset, one env's reset), and the
    run then continues as if nothing had been tried (worlds reset once were reset twice, their
    RNG drawn again, and the error named no world)."""
    def make():
        if how == "single":
            return gym.make("Traction/TankTurn-v1", max_episode_steps=2)
        return gym.make_vec("Traction/TankTurn-v1", num_envs=3, max_episode_steps=2,
                            vectorization_mode="vector_entry_point")

    def sims(env):
        u = env.unwrapped
        return [e.sim for e in u.envs] if how != "single" else [u.sim]

    a = np.zeros(make().action_space.shape, np.float32)
    runs = []
    for inject in (False, True):
        env = make()
        env.reset(seed=4)
        out = [env.step(a)[0] for _ in range(2)]                   # every episode ends
        if inject:
            table = sims(env)[-1].friction_table
            table.values[1, 0] = np.nan
            times = [s.data.time for s in sims(env)]
            where = "friction_table of world 2" if how != "single" else "friction_table"
            with pytest.raises(vm.VehicleConfigError,
                               match=rf"^{where}: values must be finite and >= 0 \(nothing was "):
                env.step(a) if how == "autoreset" else env.reset()
            assert [s.data.time for s in sims(env)] == times
            table.values[1, 0] = vm.FrictionTable.default().values[1, 0]
        out += [env.step(a)[0] if how == "autoreset" else env.reset()[0] for _ in range(1)]
        out += [env.step(a)[0] for _ in range(3)]
        runs.append(out)
        env.close()
    assert all(np.array_equal(x, y) for x, y in zip(*runs, strict=True))


def test_the_read_table_cannot_move_or_be_freed_under_a_world():
    """The loop reads a table's values where they are, so they are held where it reads them:
    a resize of the array is refused (numpy: it is referenced), a table replaced is no longer
    read (its memory may be reused: the new one is), and a copy of a table has its own values.
    A sim's arrays are its world's rows, from its construction on."""
    with World(2).filled() as world:
        sims = [VehicleSim(build_scene("sedan", "flat")) for _ in range(2)]
    with pytest.raises(ValueError, match="cannot resize"):
        sims[0].friction_table.values.resize((70, 3))
    sims[0].friction_table = vm.FrictionTable.default()          # the old one: no longer held
    sims[0].friction_table.values[...] = 0.5
    junk = [np.full(21, 1e300) for _ in range(1000)]             # (memory freed would be reused)
    world.step(1)
    assert np.all(world.arrays.friction[0] == 0.5) and len(junk) == 1000
    table = vm.FrictionTable.default()
    twin = copy.copy(table)
    twin.values = np.zeros((7, 3))
    assert np.array_equal(table.values, vm.FrictionTable.default().values)
    sims[0].reset(velocity=[5.0, 0.0, 0.0])                            # rolling, wheels still
    world.step(50)
    assert np.shares_memory(sims[0].now, world.arrays.now)
    rolling = 5.0 / sims[0].params.wheels.radius                       # spun up by the world's
    np.testing.assert_allclose(sims[0].state.omega[0], rolling, rtol=0.1)
    world.close()


@pytest.mark.parametrize("threads", [1, 2])
def test_a_closed_vector_env_leaves_each_world_its_sim(threads):
    """After ``venv.close()`` each world's env steps on its own from the state it had, bit for
    bit as an env that was never in a vector env, and its sim takes a table with more tyre
    types (a vector env's world reads one shape; it once kept refusing with the vector env's
    message). The closed world refuses to step, with one message for one and two threads."""
    venv = gym.make_vec("Traction/Drift-v1", num_envs=2, vectorization_mode="vector_entry_point",
                        num_threads=threads)
    alone = gym.make("Traction/Drift-v1")
    venv.reset(seed=5)
    alone.reset(seed=6)                                  # world 1's seed
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, (8, 2, 4)).astype(np.float32)
    for a in actions[:4]:
        venv.step(a)
        alone.step(a[1])
    venv.close()
    world = venv.unwrapped.envs[1]
    for a in actions[4:]:
        mine, theirs = world.step(a[1]), alone.step(a[1])
        assert np.array_equal(mine[0], theirs[0]) and mine[1] == theirs[1]
    assert np.array_equal(world.sim.data.qpos, alone.unwrapped.sim.data.qpos)
    surfaces = world.sim.friction_table.surfaces
    world.sim.friction_table = vm.FrictionTable(surfaces, ["road", "offroad", "track", "slick"],
                                                np.ones((len(surfaces), 4)))
    world.step(actions[0, 1])
    with pytest.raises(RuntimeError, match="World is closed: its sims step on their own"):
        venv.unwrapped.world.step(1)
    venv.close()                                         # twice: nothing


# Assigning ``values`` of a table a simulator already holds copies into
# the table's own array, so the simulator (which reads that array where it is) sees the edit.
# The existing tests assign ``values`` only before the table is handed to a simulator.
def test_assigning_values_of_a_held_table_reaches_the_simulator():
    env = gym.make("Traction/Drift-v1")
    env.reset(seed=0)
    a = np.full(env.action_space.shape, 0.5, np.float32)
    env.step(a)
    sim = env.unwrapped.sim
    table = sim.friction_table
    array = table.values
    assert np.all(sim.outputs.friction[sim.outputs.in_contact] > 0)
    table.values = np.zeros_like(array)                # assigned, not edited in place
    assert table.values is array and np.all(array == 0.0)
    env.step(a)
    assert np.any(sim.outputs.in_contact)
    assert np.all(sim.outputs.friction == 0.0)          # every wheel read the new values
    env.close()
