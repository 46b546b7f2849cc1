"""PhysX tyre model: slips, zero-slip, friction bound, linear region, symmetry."""

import dataclasses

import numpy as np
import pytest

from traction.vehicle_model import FrictionTable, tire, tire_physx
from traction.vehicle_model import layout as L

G = 9.81


def _forces(p, long_slip, lat_slip, load, friction=1.0, camber=0.0):
    """The compiled PhysX model of each wheel of ``p`` over ``(n, 4)`` inputs; returns
    ``(f_long, f_lat, moment)`` arrays ``(n, 4)``."""
    rest = np.full(4, 3500.0)
    n = load / rest
    zero = np.zeros_like(long_slip)
    x = tire.TireInputs(zero, zero, zero, long_slip, lat_slip, np.full_like(long_slip, camber),
                        np.full_like(long_slip, friction), np.full_like(long_slip, friction), load,
                        rest, n, G, zero, zero, zero, zero).rows()
    wheels = p.packed.wheel
    out = np.zeros(x.shape[:2] + (4,))
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[i, j] = tire_physx.forces(wheels[j], x[i, j])
    np.testing.assert_allclose(out[..., 3], -out[..., 0] * p.wheels.radius)  # road torque
    return out[..., 0], out[..., 1], out[..., 2]


def test_zero_slip_zero_force(sedan):
    z = np.zeros((2, 4))
    fx, fy, mz = _forces(sedan, z, z, np.full((2, 4), 3500.0))
    assert np.all(fx == 0) and np.all(fy == 0) and np.all(mz == 0)


def test_force_never_exceeds_friction_times_load(sedan, rng):
    shape = (2000, 4)
    ls = rng.uniform(-2, 2, shape)
    la = rng.uniform(-1.5, 1.5, shape)
    load = rng.uniform(0, 15000, shape)
    mu = rng.uniform(0.05, 1.5, shape)
    fx, fy, _ = _forces(sedan, ls, la, load, mu)
    assert np.all(np.isfinite(fx)) and np.all(np.isfinite(fy))
    assert np.all(np.hypot(fx, fy) <= mu * load * (1 + 1e-9))


def test_linear_region_matches_stiffnesses(sedan):
    p = sedan.tires
    load = np.full((1, 4), 3500.0)
    fx, _, _ = _forces(sedan, np.full((1, 4), 1e-4), np.zeros((1, 4)), load)
    np.testing.assert_allclose(fx[0], p.long_stiff_per_unit_gravity * G * 1e-4, rtol=1e-3)
    _, fy, _ = _forces(sedan, np.zeros((1, 4)), np.full((1, 4), 1e-4), load)
    smooth = np.array([tire_physx._smooth_force(3.0 / x) for x in p.lat_stiff_x])
    lat_stiff = 3500.0 * p.lat_stiff_y * smooth
    np.testing.assert_allclose(fy[0], -lat_stiff * 1e-4, rtol=1e-3)


def test_odd_symmetry(sedan, rng):
    ls = rng.uniform(-1, 1, (50, 4))
    la = rng.uniform(-1, 1, (50, 4))
    load = np.full((50, 4), 4000.0)
    a = _forces(sedan, ls, la, load)
    b = _forces(sedan, -ls, -la, load)
    for fa, fb in zip(a, b, strict=True):
        np.testing.assert_allclose(fa, -fb, atol=1e-9)


def test_slip_definitions_and_denominators():
    cases = zip((20.0, 0.0, 1.0), (0.0, 0.0, 0.5), (0.0, 2.0, 1.0), strict=True)
    ls, la = np.array([tire.slips(v, vy, w, 4.0, 1.0) for v, vy, w in cases]).T
    np.testing.assert_allclose(ls, [-1.0, 0.5, 0.0])          # locked; spinning at rest; rolling
    np.testing.assert_allclose(la, [0.0, 0.0, np.arctan(0.5)])


def test_friction_graph_and_table(sedan):
    p = sedan.tires
    graph = np.array([[0.0, 0.4], [0.5, 1.0], [0.75, 0.6]])
    q = dataclasses.replace(sedan, tires=dataclasses.replace(
        p, friction_vs_slip=np.repeat(graph[None], 4, axis=0)))
    v = [tire.friction_multiplier(q.packed.wheel[j], s)
         for j, s in enumerate((0.0, -0.25, 0.5, 2.0))]
    np.testing.assert_allclose(v, [0.4, 0.7, 1.0, 0.6])
    table = FrictionTable.default()
    assert table.lookup(np.array([table.surface_index("ice"), 99, -1]), np.zeros(3))[0] == 0.05
    assert table.tires == ["road", "offroad", "track"]
    np.testing.assert_allclose(table.lookup(np.array([99, -1]), np.zeros(2)), 1.0)  # fallback


@pytest.mark.parametrize("filtered,expected", [(0.5, 0.5), (2.0, 2.0), (5.0, 3.0)])
def test_load_filter(filtered, expected):
    f = tire.TireLoadFilter()
    assert tire.filtered_load(f.min_normalised_load, f.min_filtered_normalised_load,
                              f.max_normalised_load, f.max_filtered_normalised_load,
                              filtered) == pytest.approx(expected)


def test_zero_camber_takes_the_slip_tangent(sedan, rng):
    """Without camber the model uses ``tan(lat_slip)`` from its input row (the update has it as
    ``v_lat / denominator``); a camber whose term is below rounding goes through
    ``tan(lat_slip - term)``: both give the same forces (no step at zero camber)."""
    shape = (64, 4)
    ls, la = rng.uniform(-0.3, 0.3, shape), rng.uniform(-0.6, 0.6, shape)
    load = rng.uniform(500.0, 7000.0, shape)
    flat = _forces(sedan, ls, la, load, camber=0.0)
    tilted = _forces(sedan, ls, la, load, camber=1e-13)
    for a, b in zip(flat, tilted, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)
    zero = np.zeros(shape)
    rows = tire.TireInputs(zero, zero, zero, ls, la, zero, zero, zero, load, load, zero + 1.0,
                           G, zero, zero, zero, zero).rows()
    np.testing.assert_array_equal(rows[..., L.X_TAN_LAT_SLIP], np.tan(la))


def test_physx_smoothing_polynomials():
    """Force smoothing K - K^2/3 + K^3/27 and moment smoothing K - K^2 + K^3/3 - K^4/27: both
    start at slope 1, the force reaches 1 with zero slope at K = 3, the moment returns to 0
    there; both hold their K = 3 values beyond."""
    k = np.linspace(0.0, 3.0, 61)
    force = np.array([tire_physx._smooth_force(x) for x in k])
    moment = np.array([tire_physx._smooth_moment(x) for x in k])
    np.testing.assert_allclose(force, k - k**2 / 3 + k**3 / 27, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(moment, k - k**2 + k**3 / 3 - k**4 / 27, rtol=1e-13, atol=1e-14)
    assert tire_physx._smooth_force(3.0) == pytest.approx(1.0, abs=1e-15)
    assert tire_physx._smooth_moment(3.0) == pytest.approx(0.0, abs=1e-14)
    assert tire_physx._smooth_force(1e-6) == pytest.approx(1e-6, rel=1e-6)
    assert tire_physx._smooth_force(7.0) == tire_physx._smooth_force(3.0)
    assert tire_physx._smooth_moment(7.0) == tire_physx._smooth_moment(3.0)


def _lat_stiffness(p, rest=3500.0):
    """PhysX lateral stiffness (N/rad) of each wheel at its rest load."""
    smooth = np.array([tire_physx._smooth_force(3.0 / x) for x in p.tires.lat_stiff_x])
    return rest * p.tires.lat_stiff_y * smooth


def test_camber_thrust_is_camber_stiffness_times_angle_times_gravity(sedan):
    """PhysX guide: the independent camber force is ``camber_stiff_per_unit_gravity x camber x
    g``, and it takes part in the same normalisation as the slip forces. In the linear region it
    adds to the slip-angle force: ``F_lat = -C_lat tan(alpha) + C_camber g gamma``."""
    c_gamma = sedan.tires.camber_stiff_per_unit_gravity * G
    assert np.all(c_gamma > 0)
    load, zero = np.full((1, 4), 3500.0), np.zeros((1, 4))
    for gamma in (0.02, -0.05):                          # no slip: camber thrust alone
        fx, fy, _ = _forces(sedan, zero, zero, load, camber=gamma)
        np.testing.assert_allclose(fy[0], c_gamma * gamma, rtol=1e-3)
        assert np.all(fx == 0)
    _, fy, _ = _forces(sedan, zero, np.full((1, 4), 1e-4), load, camber=0.02)
    np.testing.assert_allclose(fy[0], -_lat_stiffness(sedan) * 1e-4 + c_gamma * 0.02, rtol=1e-3)
    # a slip angle of C_camber g gamma / C_lat against it cancels the thrust
    cancel = np.arctan(c_gamma * 0.02 / _lat_stiffness(sedan))[None]
    _, fy, _ = _forces(sedan, zero, cancel, load, camber=0.02)
    np.testing.assert_allclose(fy[0], 0.0, atol=1e-9)


def test_camber_thrust_shares_the_friction_limit(sedan):
    """A camber thrust as large as half the lateral stiffness (an extreme camber stiffness)
    saturates at friction x load like a large slip angle, and with a longitudinal slip the
    combined force still stays within it."""
    gamma = 0.1
    stiff = 0.5 * _lat_stiffness(sedan) / (gamma * G)
    big = dataclasses.replace(sedan, tires=dataclasses.replace(
        sedan.tires, camber_stiff_per_unit_gravity=stiff))
    load, zero = np.full((1, 4), 3500.0), np.zeros((1, 4))
    _, fy, _ = _forces(big, zero, zero, load, camber=gamma)
    np.testing.assert_allclose(fy[0], 3500.0, rtol=1e-9)          # mu = 1: the whole budget
    fx, fy, _ = _forces(big, np.full((1, 4), 0.05), zero, load, camber=gamma)
    assert np.all(np.hypot(fx, fy) <= 3500.0 * (1 + 1e-9)) and np.all(fx > 0) and np.all(fy > 0)


# FrictionTable.lookup falls back to surface type 0 for every unknown
# surface, including the first index past the table (the existing test uses 99 and -1, so a
# `<=` for `<` off-by-one, an IndexError at n_surfaces, went unseen).
def test_lookup_of_the_first_surface_past_the_table_falls_back_to_type_0():
    table = FrictionTable.default()
    n = len(table.surfaces)
    ice = table.surface_index("ice")
    got = table.lookup(np.array([n, ice, -1, n]), np.array([0, 2, 1, 2]))
    np.testing.assert_allclose(got, [table.values[0, 0], table.values[ice, 2],
                                     table.values[0, 1], table.values[0, 2]])
