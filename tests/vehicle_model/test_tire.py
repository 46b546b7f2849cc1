"""PhysX tyre model: slips, zero-slip, friction bound, linear region, symmetry."""

import dataclasses

import numpy as np
import pytest

from traction import vehicle_model as vm
from traction.vehicle_model import FrictionTable, tire, tire_magic, tire_physx
from traction.vehicle_model.tire_models import sweep

G = 9.81


def _forces(p, long_slip, lat_slip, load, friction=1.0, camber=0.0):
    """The compiled PhysX model of each wheel of ``p`` over ``(n, 4)`` inputs; returns
    ``(f_long, f_lat, moment)`` arrays ``(n, 4)``."""
    rest = np.full(4, 3500.0)
    n = load / rest
    zero = np.zeros_like(long_slip)
    x = tire.TireInputs(zero, zero, zero, long_slip, lat_slip, np.full_like(long_slip, camber),
                        np.full_like(long_slip, friction), np.full_like(long_slip, friction), load,
                        rest, n, G).records()
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


def test_slip_definitions_have_no_minimum_denominator():
    """The physical slips at every speed: a locked wheel at 20 m/s and at 0.5 m/s both slip -1,
    a wheel spinning at 2 m/s on a car at rest +1, rolling 0; the slip angle of a rolling or a
    locked wheel is atan(v_lat / |v_long|) at 1 m/s and at 0.2 m/s alike (the earlier 4 m/s
    and 1 m/s minimum denominators gave -0.125 and 0.5, and 0.2 rad at 0.2 m/s); a wheel
    spinning faster than the ground slips sideways over its own speed, as it slips along
    (0.5 m/s sideways under a wheel spinning at 2 m/s over ground passing at 0.5: atan(0.25)).
    At rest the floor (1 um/s) only avoids 0/0."""
    cases = zip((20.0, 0.5, 0.0, 1.0, 0.2, 0.2, 0.5, 0.0), (0.0, 0.0, 0.0, 0.5, 0.1, 0.1, 0.5, 0.0),
                (0.0, 0.0, 2.0, 1.0, 0.2, 0.0, 2.0, 0.0), strict=True)
    ls, la = np.array([tire.slips(v, vy, w) for v, vy, w in cases]).T
    np.testing.assert_allclose(ls, [-1.0, -1.0, 1.0, 0.0, 0.0, -1.0, 0.75, 0.0])
    np.testing.assert_allclose(la, [0.0, 0.0, 0.0, np.arctan(0.5), np.arctan(0.5),
                                    np.arctan(0.5), np.arctan(0.25), 0.0])
    assert tire.SLIP_FLOOR == 1e-6


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
                           G).records()
    np.testing.assert_array_equal(rows[...]["tan_lat_slip"], np.tan(la))


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


# Slips of a spinning wheel and of a reversing car; a load filter that
# does not start at 0.
def test_long_slip_of_a_wheel_spinning_faster_than_the_denominator():
    """(omega r - v) / max(|v|, |omega r|): a wheel spinning at 10 m/s, or at 2 m/s, on a car
    at rest has slip 1 (full wheelspin; the earlier 4 m/s minimum denominator read 2 m/s as
    0.5), as one spinning backwards has -1; never above 1 in size when the wheel is the
    faster."""
    for wheel_speed, want in ((10.0, 1.0), (-10.0, -1.0), (2.0, 1.0)):
        long_slip, _ = tire.slips(0.0, 0.0, wheel_speed)
        assert long_slip == pytest.approx(want)
    long_slip, _ = tire.slips(5.0, 0.0, 20.0)     # 4x the car's speed
    assert long_slip == pytest.approx(0.75)


@pytest.mark.parametrize("v_long", [5.0, -5.0, -0.5])
def test_lateral_slip_angle_is_the_same_driving_forwards_or_in_reverse(v_long):
    """atan(v_lat / |v_long|): reversing at 5 m/s and sliding 1 m/s left is the same slip angle
    as driving forwards so."""
    _, lat = tire.slips(v_long, 1.0, v_long)
    assert lat == pytest.approx(np.arctan(1.0 / abs(v_long)))


@pytest.mark.parametrize("normalised,expected", [(0.2, 0.4), (0.5, 0.4), (1.5, 1.4),
                                                 (2.5, 2.4), (4.0, 2.4)])
def test_load_filter_interpolates_between_its_own_ends(normalised, expected):
    """A filter from (0.5, 0.4) to (2.5, 2.4): linear between the two points, flat outside."""
    assert tire.filtered_load(0.5, 0.4, 2.5, 2.4, normalised) == pytest.approx(expected)


# The peak coefficient is the model's peak, not a bound above it.
def _magic_tyres(mf_long, mf_lat):
    p = vm.load_vehicle("sedan")
    tires = dataclasses.replace(
        p.tires, model=np.full(4, float(vm.TIRE_MODELS.index("magic_formula"))),
        mf_long=np.tile(np.asarray(mf_long, float), (4, 1)),
        mf_lat=np.tile(np.asarray(mf_lat, float), (4, 1)))
    return dataclasses.replace(p, tires=tires)


@pytest.mark.parametrize("d_long,d_lat", [(0.9, 1.1), (1.2, 0.8)])
def test_magic_formula_peak_coefficient_is_the_larger_pure_slip_peak(d_long, d_lat):
    """peak_coefficient is the largest |F| / (friction x load) the tyre produces: for the Magic
    Formula the larger D, reached at the pure-slip peaks (and not exceeded in between)."""
    p = _magic_tyres([12.0, 1.65, d_long, 0.2], [10.0, 1.9, d_lat, 0.1])
    peak_long, peak_lat = (tire_magic.peak_slip(p.tires.mf_long[0]),
                           tire_magic.peak_slip(p.tires.mf_lat[0]))
    load = 4000.0
    f_long, _ = sweep(p, 0, np.array([peak_long]), np.array([0.0]), load)
    _, f_lat = sweep(p, 0, np.array([0.0]), np.array([peak_lat]), load)
    sr, sa = np.meshgrid(np.linspace(-1, 1, 41), np.linspace(-0.6, 0.6, 41))
    fx, fy = sweep(p, 0, sr, sa, load)
    reached = max(abs(f_long[0]), abs(f_lat[0]), np.hypot(fx, fy).max()) / load
    assert tire.peak_coefficient(p.tires)[0] == pytest.approx(max(d_long, d_lat), rel=1e-9)
    assert reached == pytest.approx(tire.peak_coefficient(p.tires)[0], rel=1e-3)


def _mf_inputs(p, v_long, v_lat, omega, load=4000.0):
    shape = (1, 4)
    b = lambda a: np.broadcast_to(np.asarray(a, float), shape).copy()  # noqa: E731
    r = p.wheels.radius
    ls, la = np.zeros(shape), np.zeros(shape)
    for j in range(4):
        ls[0, j], la[0, j] = tire.slips(v_long, v_lat, omega * r[j])
    rest = p.suspension.sprung_mass * 9.81
    return tire.TireInputs(b(v_long), b(v_lat), b(omega), ls, la, b(0.0), b(1.0), b(1.0), b(load),
                           rest, load / rest, 9.81)


def test_magic_formula_lateral_force_and_moment_reversing_match_driving_forwards():
    """The slip angle is atan(v_lat / |v_long|): sliding 1 m/s left at
    10 m/s gives the same lateral force forwards and in reverse, and the aligning moment is
    -trail x that force (the trail behind the patch centre)."""
    from traction.vehicle_model.tire_models import evaluate

    p = _magic_tyres([12.0, 1.65, 1.0, 0.2], [10.0, 1.9, 1.0, 0.1])
    r = p.wheels.radius[0]
    fwd = evaluate(p.packed, _mf_inputs(p, 10.0, 1.0, 10.0 / r))
    rev = evaluate(p.packed, _mf_inputs(p, -10.0, 1.0, -10.0 / r))
    want = -4000.0 * tire_magic.pure(*p.tires.mf_lat[0], np.arctan(0.1))
    np.testing.assert_allclose(fwd[1], want, rtol=1e-9)
    np.testing.assert_allclose(rev[1], want, rtol=1e-9)
    for _, f_lat, moment, _ in (fwd, rev):
        assert np.all(f_lat < 0)                               # opposes the slide to the left
        np.testing.assert_allclose(moment, -p.tires.trail * f_lat, rtol=1e-12)
        assert np.all(moment > 0)
