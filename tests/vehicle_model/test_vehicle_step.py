"""The whole vehicle update on synthetic inputs: bounds, batching, finiteness."""

import numpy as np

from traction import vehicle_model as vm


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
