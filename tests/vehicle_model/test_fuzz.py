"""Property-based tests (hypothesis) over parameters inside their validated ranges and random
inputs: the update stays finite, tyre forces respect their bounds, differential ratios sum to 1."""

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from traction import vehicle_model as vm
from traction.vehicle_model import differential, tire
from traction.vehicle_model import layout as L

SETTINGS = settings()  # the profile in tests/conftest.py
PRESETS = ("sedan", "sedan_rwd", "truck_6x6", "tank")


@st.composite
def vehicles(draw):
    p = vm.load_vehicle(draw(st.sampled_from(PRESETS)))
    n = p.n_wheels
    f = st.floats
    sus = dataclasses.replace(
        p.suspension,
        spring_strength=np.full(n, draw(f(5e3, 5e5))),
        damper_rate=np.full(n, draw(f(0.0, 5e4))),
        max_compression=np.full(n, draw(f(0.05, 0.5))),
        max_droop=np.full(n, draw(f(0.05, 0.5))))
    tires = dataclasses.replace(
        p.tires, model=np.array([draw(st.integers(0, 3)) for _ in range(n)], float),
        grip=np.full(n, draw(f(0.5, 4.0))),
        tread_stiffness_long=np.full(n, draw(f(10.0, 1e3))),
        tread_stiffness_lat=np.full(n, draw(f(10.0, 1e3))),
        tread_damping=np.full(n, draw(f(0.0, 3.0))),
        long_stiff_per_unit_gravity=np.full(n, draw(f(100.0, 1e4))),
        lat_stiff_y=np.full(n, draw(f(1.0, 50.0))))
    wheels = dataclasses.replace(p.wheels, damping_rate=np.full(n, draw(f(0.05, 5.0))),
                                 max_brake_torque=np.full(n, draw(f(0.0, 1e4))))
    q = dataclasses.replace(p, suspension=sus, tires=tires, wheels=wheels)
    q.validate("fuzz")
    return q


@SETTINGS
@given(vehicles(), st.integers(0, 2**31 - 1))
def test_update_stays_finite_and_tyres_within_bounds(p, seed):
    rng = np.random.default_rng(seed)
    n, w = 3, p.n_wheels
    rot = np.stack([np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in range(n)])
    rot *= np.sign(np.linalg.det(rot))[:, None, None]
    pos = rng.normal(0, 5, (n, 3))
    kin = vm.ChassisKinematics(pos, rot, pos + rot @ p.chassis.com, rng.normal(0, 15, (n, 3)),
                               rng.normal(0, 3, (n, 3)))
    rest = p.suspension.max_compression + 2 * p.wheels.radius
    dist = rest + rng.uniform(-0.6, 0.8, (n, w))
    dist[rng.uniform(size=(n, w)) < 0.2] = -1.0
    normal = rng.normal(0, 0.3, (n, w, 3)) + [0, 0, 1]
    normal /= np.linalg.norm(normal, axis=-1, keepdims=True)
    hits = vm.GroundHits(dist, normal, rng.integers(-2, 10, (n, w)))
    cmd = vm.Commands.zeros(p, n)
    cmd.throttle, cmd.brake = rng.uniform(-1, 2, n), rng.uniform(-1, 2, n)
    cmd.steer, cmd.handbrake = rng.uniform(-3, 3, n), rng.uniform(0, 1, n)
    cmd.thrust = rng.uniform(-2, 2, (n, 2))
    cmd.wheel_torque = rng.normal(0, 3000, (n, w))
    state = vm.VehicleState.zeros(p, n)
    state.omega[:] = rng.normal(0, 80, (n, w))
    state.engine_omega[:] = rng.uniform(0, p.engine.max_omega, n)
    table = vm.FrictionTable.default()
    for dt in (0.002, 0.01):
        out = vm.step(p, state, kin, hits, cmd, table, dt)
        for name in ("wheel", "vehicle"):                    # every output field
            assert np.all(np.isfinite(L.floats(getattr(out, name)))), name
        bound = tire.peak_coefficient(p.tires) * out.friction * out.load
        assert np.all(np.linalg.norm(out.tire_force, axis=-1) <= bound * (1 + 1e-9) + 1e-6)
        assert np.all(np.isfinite(state.omega)) and np.all(state.engine_omega >= 0)


@SETTINGS
@given(st.sampled_from(["open", "limited_slip", "locked"]), st.sampled_from(["4wd", "fwd", "rwd"]),
       st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(1.0, 5.0), st.integers(0, 2**31 - 1))
def test_four_wheel_ratios_sum_to_one(kind, drive, split, lr, bias, seed):
    v = vm.load_vehicle("sedan_rwd")
    p = dataclasses.replace(v.differential, kind=kind, drive=drive, front_rear_split=split,
                            front_left_right_split=lr, rear_left_right_split=1 - lr,
                            front_bias=bias, rear_bias=bias, centre_bias=bias)
    q = dataclasses.replace(v, differential=p)
    pk = q.packed
    rng = np.random.default_rng(seed)
    base = differential.base_split(p, 4)
    np.testing.assert_array_equal(pk.wheel["base_split"], base)
    omega = rng.normal(0, 50, (20, 4)) * (rng.uniform(size=(20, 4)) < 0.8)
    beta = np.full((20, q.groups.shape[1]), np.nan)        # a spool: one group per axle
    for i in range(20):
        differential.ratios(pk.vehicle[0], base, pk.wheel["group"], omega[i], np.ones(4),
                            np.ones(4), 0.0, 0.0, beta[i])
    np.testing.assert_allclose(beta.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(beta >= -1e-15)
