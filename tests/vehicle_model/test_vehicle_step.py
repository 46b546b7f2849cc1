"""The whole vehicle update on synthetic inputs: bounds, batching, finiteness."""

import dataclasses

import numpy as np
import pytest

from traction import vehicle_model as vm
from traction.vehicle_model import layout as L


def _random_case(p, n, rng):
    rot = np.empty((n, 3, 3))
    for i in range(n):
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        rot[i] = q * np.sign(np.linalg.det(q))
        if i % 2 == 0:
            rot[i] = np.eye(3)                            # half the batch level on flat ground
    pos = rng.normal(size=(n, 3))
    kin = vm.ChassisKinematics(pos, rot, pos + rot @ p.chassis.com, rng.normal(0, 5, (n, 3)),
                               rng.normal(0, 1, (n, 3)))
    rest = p.suspension.max_compression + 2 * p.wheels.radius
    dist = rest + rng.uniform(-0.2, 0.3, (n, p.n_wheels))
    dist[rng.uniform(size=dist.shape) < 0.1] = -1.0       # some rays miss
    normal = np.tile([0.0, 0.0, 1.0], (n, p.n_wheels, 1)) + rng.normal(0, 0.1, (n, p.n_wheels, 3))
    normal /= np.linalg.norm(normal, axis=-1, keepdims=True)
    hits = vm.GroundHits(dist, normal, rng.integers(-1, 9, (n, p.n_wheels)))
    cmd = vm.Commands.zeros(p, n)
    cmd.wheel_torque = rng.uniform(-2000, 2000, dist.shape)
    cmd.wheel_brake = rng.uniform(-0.5, 1.5, dist.shape)
    cmd.handbrake = rng.uniform(0, 1, n)
    cmd.steer = rng.uniform(-1.5, 1.5, n)
    cmd.throttle = rng.uniform(0, 1, n)
    state = vm.VehicleState.zeros(p, n)
    state.omega[:] = rng.normal(0, 30, dist.shape)
    return state, kin, hits, cmd


def _slice(obj, i):
    """Vehicle ``i`` of a batched state or commands (each buffer sliced)."""
    if isinstance(obj, vm.VehicleState):
        return vm.VehicleState(obj.wheel[i:i + 1].copy(), obj.vehicle[i:i + 1].copy(),
                               obj.gears[i:i + 1].copy())
    return vm.Commands(obj.vehicle[i:i + 1].copy(), obj.wheel[i:i + 1].copy())


def test_tyre_force_within_friction_times_load(sedan, rng):
    table = vm.FrictionTable.default()
    for _ in range(20):
        state, kin, hits, cmd = _random_case(sedan, 64, rng)
        for _ in range(5):
            out = vm.step(sedan, state, kin, hits, cmd, table, 0.002)
            f = np.linalg.norm(out.tire_force, axis=-1)
            assert np.all(np.isfinite(f)) and np.all(np.isfinite(state.omega))
            assert np.all(f <= out.friction * out.load * (1 + 1e-9) + 1e-9)
            assert np.all(f[~out.in_contact] == 0)
            assert np.all(np.abs(out.steer) <= sedan.wheels.max_steer + np.abs(sedan.wheels.toe))


def test_batch_equals_vehicles_one_by_one(sedan, rng):
    table = vm.FrictionTable.default()
    state, kin, hits, cmd = _random_case(sedan, 6, rng)
    singles = []
    for i in range(6):
        s1 = _slice(state, i)
        k1 = vm.ChassisKinematics(*(getattr(kin, f)[i:i + 1] for f in
                                    ("position", "rotation", "com", "velocity",
                                     "angular_velocity")))
        h1 = vm.GroundHits(hits.dist[i:i + 1], hits.normal[i:i + 1], hits.surface[i:i + 1])
        c1 = _slice(cmd, i)
        singles.append((vm.step(sedan, s1, k1, h1, c1, table, 0.002).tire_force, s1.omega))
    out = vm.step(sedan, state, kin, hits, cmd, table, 0.002)
    for i, (force, omega) in enumerate(singles):
        assert out.tire_force[i].tobytes() == force[0].tobytes()
        assert state.omega[i].tobytes() == omega[0].tobytes()


def test_a_batch_of_vehicles_each_with_its_own_values_equals_each_alone(sedan, rng):
    """One call, a parameter set per vehicle (masses, springs, tyre stiffness, torques: what
    domain randomisation draws) steps each vehicle as a call with its parameters alone does."""
    def variant(k):
        return dataclasses.replace(
            sedan, chassis=dataclasses.replace(sedan.chassis, mass=sedan.chassis.mass * k),
            suspension=dataclasses.replace(
                sedan.suspension, spring_strength=sedan.suspension.spring_strength * k,
                sprung_mass=sedan.suspension.sprung_mass * k),
            tires=dataclasses.replace(sedan.tires, lat_stiff_y=sedan.tires.lat_stiff_y * k),
            engine=dataclasses.replace(sedan.engine, peak_torque=sedan.engine.peak_torque / k))
    params = [variant(k) for k in (0.8, 1.0, 1.3)]
    assert len({q.packed.vehicle["peak_torque"][0] for q in params}) == 3
    table = vm.FrictionTable.default()
    state, kin, hits, cmd = _random_case(sedan, 3, rng)
    singles = []
    for i, q in enumerate(params):
        s1 = _slice(state, i)
        k1 = vm.ChassisKinematics(*(getattr(kin, f)[i:i + 1] for f in
                                    ("position", "rotation", "com", "velocity",
                                     "angular_velocity")))
        h1 = vm.GroundHits(hits.dist[i:i + 1], hits.normal[i:i + 1], hits.surface[i:i + 1])
        singles.append((vm.step(q, s1, k1, h1, _slice(cmd, i), table, 0.002).tire_force,
                        s1.omega))
    out = vm.step(params, state, kin, hits, cmd, table, 0.002)
    for i, (force, omega) in enumerate(singles):
        assert out.tire_force[i].tobytes() == force[0].tobytes()
        assert state.omega[i].tobytes() == omega[0].tobytes()
    assert not np.array_equal(out.tire_force[0], out.tire_force[2])
    with pytest.raises(ValueError, match="2 vehicle parameter sets for 3 vehicles"):
        vm.step(params[:2], state, kin, hits, cmd, table, 0.002)


def test_vehicles_of_one_batch_may_differ_in_values_only(sedan):
    from traction.vehicle_model.pack import stack
    other_gears = dataclasses.replace(sedan, gearbox=dataclasses.replace(
        sedan.gearbox, final_ratio=sedan.gearbox.final_ratio * 1.1))
    both = stack([sedan.packed, other_gears.packed])      # the final drive is a record value
    assert both.wheel.shape == (2, sedan.n_wheels)
    assert both.vehicle["final_ratio"].tolist() == [4.0, 4.4]
    curve = dataclasses.replace(sedan, engine=dataclasses.replace(
        sedan.engine, torque_curve=sedan.engine.torque_curve * [1.0, 0.9]))
    with pytest.raises(ValueError, match="vehicle 1's torque_curve differ"):
        stack([sedan.packed, curve.packed])
    with pytest.raises(ValueError, match="vehicle 1 has 6 wheels"):
        stack([sedan.packed, vm.load_vehicle("truck_6x6").packed])


def _run_update(p, state, kin, hits, cmd, report, new_commands=True, out=None):
    """``update.step_batch_with`` on copies: ``(state, outputs)`` after one update from ``out``
    (default: outputs pre-filled with 7.0, so an output left unwritten shows)."""
    from traction.vehicle_model.pack import stack
    from traction.vehicle_model.update import scratch, step_batch_with
    state = state.copy()
    if out is None:
        out = vm.VehicleOutputs.zeros(p, len(kin.position))
        out.wheel[:], out.vehicle[:] = 7.0, 7.0
    else:
        out = out.copy()
    rows = L.Rows(state.wheel, state.vehicle, state.gears, cmd.vehicle, cmd.wheel,
                  kin.records(), hits.records(), out.wheel, out.vehicle)
    step_batch_with(stack([p.packed]), rows, vm.FrictionTable.default().values[None], 0.002, 9.81,
                    np.ones(len(kin.position), bool), scratch(p.n_wheels), report, new_commands)
    return state, out


def test_an_array_without_its_layout_records_is_refused(sedan, rng):
    """The compiled update reads records at fixed offsets: ``update.step`` refuses an array
    that is not of its layout's records (the float columns they replaced, another record)
    or not C-contiguous, naming it."""
    state, kin, hits, cmd = _random_case(sedan, 2, rng)
    columns = vm.VehicleState(L.floats(state.wheel).copy(), state.vehicle, state.gears)
    table = vm.FrictionTable.default()
    with pytest.raises(ValueError, match=r"state.wheel must be a C-contiguous array of shape "
                                         r"\(2, 4\) of layout.WHEEL_STATE records; got float64 "
                                         r"\(2, 4, 10\)"):
        vm.step(sedan, columns, kin, hits, cmd, table, 0.002)
    swapped = vm.Commands(cmd.vehicle, np.zeros((2, 4), L.WHEEL_OUTPUTS))
    with pytest.raises(ValueError, match=r"commands.wheel must be .* of layout.WHEEL_COMMANDS "
                                         r"records; got records \(susp_force, "):
        vm.step(sedan, state, kin, hits, swapped, table, 0.002)
    fortran = vm.VehicleState(np.asfortranarray(state.wheel), state.vehicle, state.gears)
    with pytest.raises(ValueError, match="state.wheel must be a C-contiguous .* not C-contig"):
        vm.step(sedan, fortran, kin, hits, cmd, table, 0.002)


def test_kinematics_or_hits_for_another_vehicle_count_are_refused(sedan, rng):
    """``update.step`` sizes the batch by the state: chassis kinematics or ground hits for more
    vehicles (read past the state's rows) or fewer wheels are refused, naming which."""
    state, kin, hits, cmd = _random_case(sedan, 2, rng)
    _, kin3, hits3, _ = _random_case(sedan, 3, rng)
    table = vm.FrictionTable.default()
    disagree = r"the arrays disagree on the number of vehicles: state.wheel 2, .*"
    with pytest.raises(ValueError, match=disagree + "chassis kinematics 3, ground hits 2"):
        vm.step(sedan, state, kin3, hits, cmd, table, 0.002)
    with pytest.raises(ValueError, match=disagree + "chassis kinematics 2, ground hits 3"):
        vm.step(sedan, state, kin, hits3, cmd, table, 0.002)
    three = vm.GroundHits(hits.dist[:, :3], hits.normal[:, :3], hits.surface[:, :3])
    with pytest.raises(ValueError, match=r"hits.dist has shape \(2, 3\); expected \(n_vehicles, 4"):
        vm.step(sedan, state, kin, three, cmd, table, 0.002)


def test_update_with_the_same_commands_keeps_the_steer_and_changes_nothing_else(sedan, rng):
    """``new_commands=False`` (every physics substep of a call but the first) keeps the steer
    angles and headings of the previous update: a second update with the same commands gives
    bit-identical state and outputs either way. The heading is (cos, sin) of the steer angle,
    exactly (1, 0) for wheels that cannot steer."""
    state, kin, hits, cmd = _random_case(sedan, 64, rng)
    state, out = _run_update(sedan, state, kin, hits, cmd, True)
    steerable = sedan.packed.wheel["max_steer"] != 0.0
    assert np.any(out.steer[:, steerable] != 0.0) and np.all(out.steer[:, ~steerable] == 0.0)
    assert np.allclose(out.heading[..., 0], np.cos(out.steer), rtol=0, atol=1e-15)
    assert np.allclose(out.heading[..., 1], np.sin(out.steer), rtol=0, atol=1e-15)
    assert np.all(out.heading[:, ~steerable] == [1.0, 0.0])
    full = _run_update(sedan, state, kin, hits, cmd, True, True, out)
    kept = _run_update(sedan, state, kin, hits, cmd, True, False, out)
    for a, b in zip(full, kept, strict=True):
        for name in vars(a):
            assert getattr(a, name).tobytes() == getattr(b, name).tobytes(), name
    stale = out.copy()
    stale.wheel["heading"][..., 0] = 0.5                  # not recomputed: the caller's promise
    _, kept = _run_update(sedan, state, kin, hits, cmd, True, False, stale)
    assert np.all(kept.wheel["heading"][..., 0] == 0.5)


@pytest.mark.parametrize("camber", [False, True])
def test_update_without_report_changes_only_the_reported_slip_angle(sedan, rng, camber):
    """``report=False`` (every physics substep but a call's last) skips the slip angle of PhysX
    tyres without camber, which feeds no force, and the reported (contact patch) slips: state
    and every other output are bit-identical. With camber the tyre needs the angle, so it is
    computed all the same."""
    p = sedan
    if not camber:
        zero = np.zeros(sedan.n_wheels)
        p = dataclasses.replace(sedan, suspension=dataclasses.replace(
            sedan.suspension, camber_at_rest=zero, camber_at_max_compression=zero,
            camber_at_max_droop=zero))
    assert np.all(p.packed.wheel["tire_model"] == 0)              # PhysX tyres
    state, kin, hits, cmd = _random_case(p, 64, rng)
    s_full, out_full = _run_update(p, state, kin, hits, cmd, True)
    s_lean, out_lean = _run_update(p, state, kin, hits, cmd, False)
    for a, b in ((s_full.wheel, s_lean.wheel), (s_full.vehicle, s_lean.vehicle),
                 (s_full.gears, s_lean.gears), (out_full.vehicle, out_lean.vehicle)):
        assert a.tobytes() == b.tobytes()
    others = [n for n in L.WHEEL_OUTPUTS.names if n not in ("lat_slip", "long_slip")]
    for name in others:
        assert out_full.wheel[name].tobytes() == out_lean.wheel[name].tobytes(), name
    contact = out_full.in_contact
    assert np.all(out_full.lat_slip[~contact] == 0.0) and np.all(np.isfinite(out_full.lat_slip))
    assert np.any(out_full.lat_slip[contact] != 0.0) and np.any(out_full.long_slip[contact] != 0.0)
    assert np.all(out_lean.lat_slip[contact] == 7.0)              # not computed, not written
    assert np.all(out_lean.long_slip[contact] == 7.0)
    assert (out_full.camber != 0.0).any() == camber


def test_useful_masses_of_every_wheel_bound_the_sprung_mass(sedan, rng):
    """The tyre predicts its patch's response with each wheel's useful masses along both axes
    of its contact frame; the update computes their inverses for every wheel (equal to
    ``contact.inverse_useful_mass`` on its own frame), each at least ``1 / m_s`` (the chassis
    also turns) and at most ``1 / m_s + 2 |r|^2 / min(J_s)``."""
    from traction.vehicle_model import contact
    from traction.vehicle_model.pack import stack
    from traction.vehicle_model.update import scratch, step_batch_with
    p = sedan
    state, kin, hits, cmd = _random_case(p, 1, rng)
    hits.dist[:] = p.suspension.max_compression + 2 * p.wheels.radius    # every wheel in contact
    work = scratch(p.n_wheels)
    s = work.wheel
    s["inv_mass"] = -1.0
    out = vm.VehicleOutputs.zeros(p, 1)
    rows = L.Rows(state.wheel, state.vehicle, state.gears, cmd.vehicle, cmd.wheel,
                  kin.records(), hits.records(), out.wheel, out.vehicle)
    step_batch_with(stack([p.packed]), rows, vm.FrictionTable.default().values[None], 0.002, 9.81,
                    np.ones(1, bool), work, True, True)
    k = kin.records()[0]
    share = p.suspension.sprung_mass / p.chassis.mass
    for w in range(4):
        arm = s["arm"][w]
        expect = [contact.inverse_useful_mass(p.packed, k, w, *arm, *s[axis][w])
                  for axis in ("fwd", "left")]
        got = list(s["inv_mass"][w])
        assert got == expect
        most = 1 / p.suspension.sprung_mass[w] + 2 * arm @ arm / (share[w] * p.chassis.inertia.min())
        assert all(1 / p.suspension.sprung_mass[w] < v <= most for v in got)


def _level(p, velocity=(2.0, 0.5, 0.0), spin=1.3, throttle=1.0, engine_omega=200.0):
    """One vehicle on level ground, every wheel at rest length, wheels turning ``spin`` x
    rolling speed: ``(state, kin, hits, cmd)``."""
    kin = vm.ChassisKinematics(np.zeros((1, 3)), np.eye(3)[None], p.chassis.com[None],
                               np.array([velocity], float), np.zeros((1, 3)))
    rest = p.suspension.max_compression + 2 * p.wheels.radius
    hits = vm.GroundHits(rest[None], np.array([0.0, 0.0, 1.0]), np.zeros((1, p.n_wheels), int))
    cmd = vm.Commands.zeros(p, 1)
    cmd.throttle = throttle
    state = vm.VehicleState.zeros(p, 1)
    state.omega[:] = spin * velocity[0] / p.wheels.radius
    state.engine_omega[:] = engine_omega
    return state, kin, hits, cmd


def test_drivetrain_outputs_are_substep_means_that_reconcile():
    """Below 5 m/s an update runs 3 wheel substeps. Engine torque, drive torques and clutch slip
    are all means over them, so they balance exactly: the clutch passes ``K x clutch_slip``,
    the wheels get ``gear_ratio`` times that, and the engine's spin changes by what its own
    torque leaves over (damping made negligible). The clutch slip once was the last substep's
    (off by a third here) while the torques were means."""
    rwd = vm.load_vehicle("sedan_rwd")
    p = dataclasses.replace(rwd, engine=dataclasses.replace(rwd.engine,
                                                            damping_full_throttle=1e-9))
    assert p.simulation.substeps_low == 3 and p.simulation.substep_speed_threshold > 2.0
    state, kin, hits, cmd = _level(p)
    w0, dt = state.engine_omega[0], 0.01
    out = vm.step(p, state, kin, hits, cmd, vm.FrictionTable.default(), dt)
    k, ratio = p.clutch.strength, out.gear_ratio[0]
    assert ratio > 0 and abs(out.clutch_slip[0]) > 1.0
    clutch_torque = k * out.clutch_slip[0]
    assert out.drive_torque[0].sum() == pytest.approx(ratio * clutch_torque, rel=1e-9)
    spin_up = p.engine.moi * (state.engine_omega[0] - w0) / dt
    assert spin_up == pytest.approx(out.engine_torque[0] - clutch_torque, abs=1e-6)
    last = state.engine_omega[0] - ratio * (p.base_split @ state.omega[0])    # RWD LSD: alpha
    assert abs(out.clutch_slip[0] - last) > 0.1                 # not the last substep's value


@pytest.mark.parametrize("overrun", [0.9, 1.05, 1.3])
def test_drivetrain_outputs_reconcile_at_the_rev_limiter(overrun):
    """At full throttle with the wheels driving the engine to (or past) its maximum spin, the
    limiter holds the engine there. The outputs still balance: the engine torque is the net
    torque after the limiter's cut, and the clutch torque (``K x clutch_slip``) is what the
    wheels received (they once got 4 % more than reported, and the engine equation was off by
    a third of its torque)."""
    rwd = vm.load_vehicle("sedan_rwd")
    p = dataclasses.replace(rwd, engine=dataclasses.replace(rwd.engine,
                                                            damping_full_throttle=1e-9))
    w_max = p.engine.max_omega
    state, kin, hits, cmd = _level(p, velocity=(20.0, 0.0, 0.0), spin=1.0, engine_omega=w_max)
    state.gearbox.current = state.gearbox.target = 1
    g1 = p.gearbox.forward_ratios[0] * p.gearbox.final_ratio
    state.omega[:] = overrun * w_max / g1                    # the wheels turn the engine this fast
    w_wheels, dt = state.omega[0].copy(), 0.002
    out = vm.step(p, state, kin, hits, cmd, vm.FrictionTable.default(), dt)
    k, ratio = p.clutch.strength, out.gear_ratio[0]
    assert ratio == pytest.approx(g1) and state.engine_omega[0] == pytest.approx(w_max) \
        if overrun > 1 else state.engine_omega[0] <= w_max
    clutch_torque = k * out.clutch_slip[0]
    assert out.drive_torque[0].sum() == pytest.approx(ratio * clutch_torque, rel=1e-9)
    spin_up = p.engine.moi * (state.engine_omega[0] - w_max) / dt
    assert spin_up == pytest.approx(out.engine_torque[0] - clutch_torque, abs=1e-6 * k)
    rear = slice(2, 4)                                         # each driven wheel's own balance
    road = out.long_force[0, rear] * p.wheels.radius[rear]
    bearing = p.wheels.damping_rate[rear] * state.omega[0, rear]
    np.testing.assert_allclose(p.wheels.moi[rear] * (state.omega[0, rear] - w_wheels[rear]) / dt,
                               out.drive_torque[0, rear] - road - bearing, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("engine_omega", [200.0, 600.0])       # 600: at the rev limiter
def test_clutch_slip_while_shifting_is_the_engine_spin_and_no_torque_passes(engine_omega):
    """During a change the gear ratio is 0: nothing reaches the wheels and the slip is the
    engine's own (mean) spin, as PhysX's telemetry has it, not 0; at the limiter too."""
    p = vm.load_vehicle("sedan_rwd")
    assert p.engine.max_omega == 600.0
    state, kin, hits, cmd = _level(p, engine_omega=engine_omega)
    state.gearbox.target = 2
    state.vehicle["switch_timer"][:] = 0.2
    w0 = state.engine_omega[0]
    out = vm.step(p, state, kin, hits, cmd, vm.FrictionTable.default(), 0.01)
    assert out.gear_ratio[0] == 0.0 and np.all(out.drive_torque[0] == 0.0)
    assert out.gear[0] == 0                        # neutral is engaged (it read the gear left)
    lo, hi = sorted((w0, state.engine_omega[0]))
    assert lo <= out.clutch_slip[0] <= hi and out.clutch_slip[0] > 100.0
    state.vehicle["switch_timer"][:] = 0.004                   # the change ends in this step
    out = vm.step(p, state, kin, hits, cmd, vm.FrictionTable.default(), 0.01)
    assert out.gear[0] == 2 and out.gear_ratio[0] == pytest.approx(
        p.gearbox.forward_ratios[1] * p.gearbox.final_ratio)


def test_aligning_moment_is_the_substep_mean_like_the_lateral_force(sedan):
    """Curve tyres: moment = -trail x lateral force in every substep; both outputs are means
    over the 3 low-speed substeps, so the identity holds for the outputs too."""
    tires = dataclasses.replace(sedan.tires, model=np.full(4, float(vm.TIRE_MODELS.index("curve"))))
    p = dataclasses.replace(sedan, tires=tires)
    state, kin, hits, cmd = _level(p, velocity=(2.0, 0.8, 0.0), spin=1.0)
    cmd.wheel_torque = 400.0
    out = vm.step(p, state, kin, hits, cmd, vm.FrictionTable.default(), 0.01)
    assert np.all(out.in_contact) and np.all(np.abs(out.lat_force) > 100.0)
    np.testing.assert_allclose(out.aligning_moment, -p.tires.trail * out.lat_force, rtol=1e-12)


def test_standalone_step_names_wrong_dtypes_field_shapes_normals_and_non_finite_commands(
        sedan, rng):
    """What a numpy user can get wrong is refused by name: a float32 state or float64 gears
    (compiled the whole update again, or failed inside numba), kinematics fields whose sizes
    only add up to the row (read shifted), a ground normal that is not unit length (load 0), a
    NaN command (the vehicle's spins NaN for good; a NaN target_gear chose reverse). A NaN
    torque_split means 'the differential's' and runs."""
    state, kin, hits, cmd = _random_case(sedan, 2, rng)
    table = vm.FrictionTable.default()

    def step(s=state, k=kin, h=hits, c=cmd):
        return vm.step(sedan, s, k, h, c, table, 0.002)

    f32 = vm.VehicleState(L.floats(state.wheel).astype(np.float32), state.vehicle, state.gears)
    with pytest.raises(ValueError, match=r"state.wheel must be a C-contiguous array .* got "
                                         r"float32"):
        step(s=f32)
    floats = vm.VehicleState(state.wheel, state.vehicle, L.floats(state.gears).astype(float))
    with pytest.raises(ValueError, match=r"state.gears must be a C-contiguous array of shape "
                                         r"\(2,\) of layout.GEAR_STATE records; got float64"):
        step(s=floats)
    shifted = dataclasses.replace(kin, velocity=kin.velocity[:, :2],
                                  angular_velocity=np.c_[kin.angular_velocity, kin.velocity[:, 2]])
    with pytest.raises(ValueError, match=r"kinematics.velocity has shape \(2, 2\); expected "
                                         r"\(n_vehicles, 3\)"):
        step(k=shifted)
    long_normal = vm.GroundHits(np.abs(hits.dist), 2.0 * hits.normal, hits.surface)
    with pytest.raises(ValueError, match=r"hits.normal of vehicle 0, wheel 0 has length 2; "
                                         r"allowed: unit length"):
        step(h=long_normal)
    for name, value in (("throttle", np.nan), ("target_gear", np.nan), ("steer", np.inf)):
        bad = cmd.copy()
        bad.vehicle[name][1] = value
        with pytest.raises(ValueError, match=rf"commands.{name} = {value} for vehicle 1; "
                                             r"allowed: finite"):
            step(c=bad)
    split = cmd.copy()
    split.torque_split = np.nan
    assert np.isfinite(L.floats(step(c=split).wheel)).all()
    split.torque_split = np.inf                   # NaN means the differential's; inf does not
    with pytest.raises(ValueError, match=r"commands.torque_split = inf for vehicle 0, wheel 0"):
        step(c=split)


def test_gear_and_flag_views_refuse_indexed_writes_and_cached_arrays_are_read_only(sedan):
    """``target_gear``, ``gear_up``/``gear_down`` and ``auto_shift`` are converted copies of
    float columns: ``cmd.target_gear[1] = 3`` changed only the copy (lost silently), so the
    copies are read-only; assigning the whole column writes it. A frozen vehicle's cached
    ``base_split`` and ``groups`` are read-only (an edit re-routed the drive torque)."""
    cmd = vm.Commands.zeros(sedan, 3)
    for name in ("target_gear", "gear_up", "gear_down"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(cmd, name)[1] = 1
    cmd.target_gear = [1, 3, 2]
    assert cmd.target_gear.tolist() == [1, 3, 2]
    state = vm.VehicleState.zeros(sedan, 3)
    with pytest.raises(ValueError, match="read-only"):
        state.gearbox.auto_shift[0] = True
    for name in ("base_split", "groups"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(sedan, name)[...] = 0


def test_standalone_step_validates_parameters_built_in_code(sedan, rng):
    """``dataclasses.replace`` skips validation; packing validates (a wheel of zero inertia
    spun up to NaN)."""
    state, kin, hits, cmd = _random_case(sedan, 1, rng)
    bad = dataclasses.replace(sedan, wheels=dataclasses.replace(sedan.wheels,
                                                                moi=np.zeros(4)))
    with pytest.raises(vm.VehicleConfigError, match=r"sedan: wheel.moi\[0\] = 0 is out of range"):
        vm.step(bad, state, kin, hits, cmd, vm.FrictionTable.default(), 0.002)


def test_the_tyres_carry_the_filtered_load(sedan):
    """A load filter capped at 1.2 x rest load above 1.5 x (PhysX's tyre load filter): wheels
    pressed to over 2 x their rest load report that, but the tyre model gets 1.2 x
    rest load, so wheels spinning on the spot slide with friction x 1.2 x rest (Coulomb), not
    2 x."""
    f = dataclasses.replace(sedan.tire_load_filter, max_normalised_load=1.5,
                            max_filtered_normalised_load=1.2)
    p = dataclasses.replace(sedan, tire_load_filter=f)
    rest = p.suspension.sprung_mass * 9.81
    state = vm.VehicleState.zeros(p)
    state.omega[:] = 60.0
    kin = vm.ChassisKinematics(np.zeros((1, 3)), np.eye(3)[None], p.chassis.com[None],
                               np.zeros((1, 3)), np.zeros((1, 3)))
    jounce = 3.0 * rest / p.suspension.spring_strength
    dist = p.suspension.max_compression + p.wheels.radius - jounce
    hits = vm.GroundHits(dist[None], np.array([0.0, 0.0, 1.0]), np.zeros((1, 4), int))
    slick = vm.FrictionTable.default()
    slick.values = slick.values * 0.3                                # the wheels keep sliding
    cmd = vm.Commands.zeros(p)                  # the drive holds the spin against the road
    cmd.wheel_torque = 0.3 * 1.2 * rest * p.wheels.radius + p.wheels.damping_rate * 60.0
    for _ in range(20):                         # the tread stretches to the force first
        out = vm.step(p, state, kin, hits, cmd, slick, 0.002)
    assert np.all(out.normalised_load[0] > 2.0)
    np.testing.assert_allclose(out.load[0], 1.2 * rest, rtol=1e-12)
    f_tyre = np.linalg.norm(out.tire_force[0], axis=-1)
    np.testing.assert_allclose(f_tyre, out.friction[0] * 1.2 * rest, rtol=2e-3)   # not 2 x


@pytest.mark.parametrize("thrust", [(1.0, 0.5), (-0.6, 0.9)])
def test_tank_track_torques_reconcile_with_the_clutch(thrust):
    """A tank (special mode) with thrusts ``(left, right)``: the wheels' drive torques add up
    to ``gear_ratio x K x clutch_slip``; each track takes its share |thrust| / (|l| + |r|),
    signed as its thrust, spread evenly over its six wheels."""
    p = vm.load_vehicle("tank")
    state, kin, hits, cmd = _level(p, velocity=(1.0, 0.0, 0.0))
    state.gearbox.current = state.gearbox.target = 1
    cmd.thrust = np.array([thrust])
    out = vm.step(p, state, kin, hits, cmd, vm.FrictionTable.default(), 0.004)
    drive, ratio = out.drive_torque[0], out.gear_ratio[0]
    clutch_torque = p.clutch.strength * out.clutch_slip[0]
    assert ratio > 0 and abs(clutch_torque) > 10.0
    left = np.array([n.startswith("left") for n in p.wheel_names])
    assert left.sum() == 6
    total = ratio * clutch_torque
    assert np.abs(drive).sum() == pytest.approx(abs(total), rel=1e-9)
    for side, t in ((left, thrust[0]), (~left, thrust[1])):
        share = t / (abs(thrust[0]) + abs(thrust[1]))
        np.testing.assert_allclose(drive[side], share * total / 6, rtol=1e-9)


# Hit_rows checks normals only where a ray hit (dist >= 0): a missed
# ray (dist < 0, as MuJoCo's rangefinder reports) may carry any normal, e.g. zeros. Checking the
# misses too went unseen (the existing test makes every dist positive before the check).
def test_a_missed_ray_may_carry_a_zero_normal(sedan):
    state, cmd = vm.VehicleState.zeros(sedan), vm.Commands.zeros(sedan)
    kin = vm.ChassisKinematics(np.zeros((1, 3)), np.eye(3)[None], sedan.chassis.com[None],
                               np.zeros((1, 3)), np.zeros((1, 3)))
    rest = sedan.suspension.max_compression + sedan.wheels.radius
    dist = np.full((1, 4), 0.95 * rest)
    dist[0, 3] = -1.0                                           # this ray found no ground
    normal = np.tile([0.0, 0.0, 1.0], (1, 4, 1))
    normal[0, 3] = 0.0
    hits = vm.GroundHits(dist, normal, np.zeros((1, 4), int))
    out = vm.step(sedan, state, kin, hits, cmd, vm.FrictionTable.default(), 0.002)
    assert out.in_contact[0].tolist() == [True, True, True, False]
    assert out.load[0, 3] == 0.0 and np.all(out.load[0, :3] > 0)
