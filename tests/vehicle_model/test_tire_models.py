"""Every tyre model: zero slip, symmetry, force bounds; magic formula peak; the arcade tyre's
gains; custom callables."""

import dataclasses
import re

import numpy as np
import pytest

from traction import vehicle_model as vm
from traction.vehicle_model import tire, tire_curve, tire_magic
from traction.vehicle_model.tire_models import evaluate as _tire_forces

MODELS = ("physx", "arcade", "curve", "magic_formula")


def _params(model, **tire_kw):
    p = vm.load_vehicle("sedan")
    tires = dataclasses.replace(p.tires, model=np.full(4, float(vm.TIRE_MODELS.index(model))),
                                **{k: np.full(4, v) for k, v in tire_kw.items()})
    return dataclasses.replace(p, tires=tires)


def _inputs(p, v_long, v_lat, omega, load=3500.0, mu=1.0, camber=0.0):
    shape = np.broadcast_shapes(np.shape(v_long), np.shape(v_lat), np.shape(omega), (1, 4))
    b = lambda a: np.broadcast_to(np.asarray(a, float), shape).copy()  # noqa: E731
    r = p.wheels.radius
    v_long, v_lat, omega = b(v_long), b(v_lat), b(omega)
    ls, la = np.zeros(shape), np.zeros(shape)
    for i, j in np.ndindex(shape):
        ls[i, j], la[i, j] = tire.slips(v_long[i, j], v_lat[i, j], omega[i, j] * r[j])
    rest = p.suspension.sprung_mass * 9.81
    load = b(load)
    return tire.TireInputs(v_long, v_lat, omega, ls, la, b(camber), b(mu), b(mu),
                           load, rest, load / rest, 9.81)


def _forces(p, x):
    return _tire_forces(p.packed, x, np.ones_like(x.load, dtype=bool))


@pytest.mark.parametrize("model", MODELS)
def test_zero_slip_gives_zero_force(model):
    p = _params(model)
    v = np.array([[0.0], [5.0], [20.0]])
    f_long, f_lat, moment, torque = _forces(p, _inputs(p, v, 0.0, v / p.wheels.radius))
    assert np.all(np.abs(f_long) < 1e-9) and np.all(np.abs(f_lat) < 1e-9)
    assert np.all(np.abs(moment) < 1e-9) and np.all(np.abs(torque) < 1e-9)


@pytest.mark.parametrize("model", MODELS)
def test_lateral_force_is_odd_in_slip_angle(model, rng):
    p = _params(model)
    v = rng.uniform(0.5, 30, (200, 1))
    vy = rng.uniform(-5, 5, (200, 4))
    w = v * rng.uniform(0.5, 1.5, (200, 4)) / p.wheels.radius
    a = _forces(p, _inputs(p, v, vy, w))
    b = _forces(p, _inputs(p, v, -vy, w))
    np.testing.assert_allclose(a[1], -b[1], atol=1e-9)
    np.testing.assert_allclose(a[0], b[0], atol=1e-9)


@pytest.mark.parametrize("model", MODELS)
def test_force_within_peak_coefficient_times_friction_times_load(model, rng):
    p = _params(model, grip=2.5) if model == "curve" else _params(model)
    n = 2000
    x = _inputs(p, rng.uniform(-30, 30, (n, 1)), rng.uniform(-10, 10, (n, 4)),
                rng.uniform(-150, 150, (n, 4)), load=rng.uniform(0, 12000, (n, 4)),
                mu=rng.uniform(0.05, 1.2, (n, 4)))
    f_long, f_lat, _, _ = _forces(p, x)
    bound = tire.peak_coefficient(p.tires) * x.friction * x.load
    assert np.all(np.isfinite(f_long)) and np.all(np.hypot(f_long, f_lat) <= bound * (1 + 1e-9))


@pytest.mark.parametrize("model", MODELS)
def test_camber_thrust_direction_and_the_models_that_have_it(model):
    """Camber alone (rolling straight, no slip) pushes to +lateral for positive camber in the
    physx and curve models; the curve model reads it as a slip angle of ``-CAMBER_FACTOR x
    camber``. The arcade and magic-formula models have no camber term."""
    p = _params(model)
    v = np.array([[10.0]])
    w = v / p.wheels.radius
    f_long, f_lat, _, _ = _forces(p, _inputs(p, v, 0.0, w, camber=0.05))
    if model in ("arcade", "magic_formula"):
        assert np.all(np.abs(f_lat) < 1e-9) and np.all(np.abs(f_long) < 1e-9)
        return
    assert np.all(f_lat > 0)
    np.testing.assert_allclose(_forces(p, _inputs(p, v, 0.0, w, camber=-0.05))[1], -f_lat)
    if model == "curve":          # the same as that slip angle (with the wheel sliding that way)
        v_lat = np.tan(tire_curve.CAMBER_FACTOR * 0.05) * v
        same = _forces(p, _inputs(p, v, -v_lat, w))[1]
        np.testing.assert_allclose(f_lat, same, rtol=1e-9)


def test_magic_formula_peak_is_d_times_load_where_the_formula_puts_it():
    coef = np.array([12.0, 1.65, 0.9, 0.2])
    s = np.linspace(0, 1, 200001)
    curve = np.array([tire_magic.pure(*coef, si) for si in s])
    assert curve.max() == pytest.approx(0.9, rel=1e-9)
    assert s[np.argmax(curve)] == pytest.approx(tire_magic.peak_slip(coef), abs=1e-4)
    no_e = np.array([10.0, 1.9, 1.0, 0.0])
    assert tire_magic.peak_slip(no_e) == pytest.approx(np.tan(np.pi / (2 * 1.9)) / 10.0, rel=1e-6)
    p = _params("magic_formula")
    k = tire_magic.peak_slip(p.tires.mf_long[0])
    r = p.wheels.radius[0]
    # the shared slip (omega r - v) / max(|v|, |omega r|) is k at omega r = v / (1 - k)
    f_long, _, _, _ = _forces(p, _inputs(p, 20.0, 0.0, 20.0 / ((1 - k) * r), load=4000.0))
    assert f_long[0, 0] == pytest.approx(p.tires.mf_long[0, 2] * 4000.0, rel=1e-6)


@pytest.mark.parametrize("alpha", [0.05, 0.2, 0.4, 0.8, 1.2])
def test_magic_formula_pure_lateral_force_is_the_formula_at_the_slip_angle(alpha):
    """Free-rolling wheel at slip angle ``alpha`` (rad): ``|F_lat| = mu load D sin(C atan(B a -
    E(B a - atan(B a))))`` with ``a = alpha`` itself (not a tangent ratio)."""
    p = _params("magic_formula")
    v = 15.0
    r = p.wheels.radius[0]
    x = _inputs(p, v * np.cos(alpha), v * np.sin(alpha), v * np.cos(alpha) / r, load=4000.0)
    _, f_lat, _, _ = _forces(p, x)
    expected = 4000.0 * tire_magic.pure(*p.tires.mf_lat[0], alpha)
    assert -f_lat[0, 0] == pytest.approx(expected, rel=1e-9)


def test_custom_tyre_gets_arrays_and_its_outputs_are_used():
    seen = []

    def constant(friction, long_slip, lat_slip, camber, wheel_omega, wheel_radius, rest_load,
                 normalised_load, load, gravity):
        seen.append((friction.shape, wheel_radius.shape, rest_load.shape, load.shape))
        return (np.full_like(load, -7.0), np.full_like(load, 500.0), np.zeros_like(load),
                np.ones_like(load))

    vm.register_tire_model("constant_500", constant)
    p = dataclasses.replace(_params("custom"), custom_tire=constant)
    f_long, f_lat, moment, torque = _forces(p, _inputs(p, np.zeros((3, 1)), 0.0, 0.0))
    assert seen == [((1, 4), (4,), (4,), (1, 4))] * 3         # one call per vehicle (row)
    assert np.all(f_long == 500.0) and np.all(torque == -7.0) and np.all(moment == 1.0)
    with pytest.raises(vm.VehicleConfigError, match="not a registered tyre model"):
        vm.parse_vehicle({**_minimal_with_tire({"model": "custom", "custom": "nope"})}, "x.toml")


def test_custom_tyre_of_the_wrong_shape_is_named():
    def seven(friction, long_slip, lat_slip, camber, wheel_omega, wheel_radius, rest_load,
              normalised_load, load, gravity):
        return np.zeros(7), np.zeros(7), np.zeros(7), np.zeros(7)

    vm.register_tire_model("seven", seven)
    p = dataclasses.replace(_params("custom"), custom_tire=seven)
    with pytest.raises(ValueError, match=r"custom tyre seven returned wheel_torque of shape "
                       r"\(7,\); allowed: a number or one per wheel, shape \(1, 4\) or \(4,\)"):
        _forces(p, _inputs(p, 10.0, 0.0, 0.0))


def _minimal_with_tire(tire_table):
    wheels = [{"position": [x, y, 0.0]} for x in (1.2, -1.2) for y in (0.8, -0.8)]
    return {"chassis": {"mass": 1000.0, "com": [0, 0, 0.3], "body_size": [4, 1.8, 0.8],
                        "body_centre": [0, 0, 0.3]},
            "defaults": {"wheel": {"radius": 0.3}, "tire": tire_table}, "wheels": wheels}


def test_tyre_models_and_types_by_name_in_vehicle_files():
    p = vm.parse_vehicle(_minimal_with_tire({"model": "magic_formula", "tire_type": "offroad"}))
    assert np.all(p.tires.uses("magic_formula")) and np.all(p.tires.tire_type == 1)
    with pytest.raises(vm.VehicleConfigError, match=r"defaults\.tire\.model = 'slick'"):
        vm.parse_vehicle(_minimal_with_tire({"model": "slick"}), "x.toml")
    data = _minimal_with_tire({"model": "curve", "curve_set": "mine"})
    data["tire_curves"] = {"mine": {"long_slip_angles": [0.0], "long": [[[-1, -1], [1, 1]]],
                                    "lat_slip_ratios": [0.0], "lat": [[[0, 0], [1, 1]]]}}
    p = vm.parse_vehicle(data)
    assert p.curve_sets[1].name == "mine" and np.all(p.tires.curve_set == 1)


def _magic(**coef):
    """The sedan on magic formula tyres with ``mf_long``/``mf_lat`` (B, C, D, E) on every wheel."""
    p = _params("magic_formula")
    tires = dataclasses.replace(p.tires, **{k: np.tile(np.asarray(v, float), (4, 1))
                                            for k, v in coef.items()})
    return dataclasses.replace(p, tires=tires)


@pytest.mark.parametrize("field,coef,message", [
    ("mf_lat", [0.0, 1.9, 1.0, 0.1], "tire.mf_lat[0] B = 0 is out of range; allowed (0, 100]"),
    ("mf_lat", [-10.0, 1.9, 1.0, 0.1], "tire.mf_lat[0] B = -10 is out of range"),
    ("mf_long", [12.0, 2.5, 1.0, 0.2], "tire.mf_long[0] C = 2.5 is out of range; allowed (1, 2]"),
    ("mf_long", [12.0, 1.0, 1.0, 0.2], "tire.mf_long[0] C = 1 is out of range"),
    ("mf_lat", [10.0, 1.9, -1.0, 0.1], "tire.mf_lat[0] D = -1 is out of range; allowed (0, 10]"),
    ("mf_long", [12.0, 1.65, 1.0, 1.0], "tire.mf_long[0] E = 1 is out of range; allowed [-10, 1)"),
    ("mf_lat", [0.5, 1.9, 1.0, 0.1], "tire.mf_lat[0] = [0.5, 1.9, 1.0, 0.1] peaks at a slip "
                                     "angle of 2.23 rad"),
])
def test_magic_formula_coefficients_outside_pacejkas_ranges_are_refused(field, coef, message):
    p = _magic(**{field: coef})
    with pytest.raises(vm.VehicleConfigError, match=re.escape("car.toml: " + message)):
        p.validate("car.toml")


@pytest.mark.parametrize("lat", [(10.0, 1.9, 1.0, 0.1), (3.0, 1.3, 1.0, -2.0), (25.0, 2.0, 2.0, 0.9)])
def test_allowed_magic_formula_forces_oppose_the_slip(lat):
    """Anywhere in the allowed ranges the lateral force opposes the slip and is zero at zero
    slip, up to large slip angles (C <= 2: sin(C atan) never turns negative)."""
    p = _magic(mf_lat=lat)
    p.validate("car.toml")
    v_lat = np.array([[-8.0], [-1.0], [0.0], [1.0], [8.0], [40.0]])
    _, f_lat, _, _ = _forces(p, _inputs(p, 10.0, v_lat, 10.0 / p.wheels.radius[0]))
    assert np.all(f_lat[[0, 1]] > 0) and np.all(f_lat[2] == 0) and np.all(f_lat[3:] < 0)


def test_shipped_tyre_defaults_pass_the_magic_formula_ranges():
    for name in vm.preset_names():
        vm.load_vehicle(name).tires.validate()
    _params("magic_formula").validate()


def _push(friction, long_slip, lat_slip, camber, wheel_omega, wheel_radius, rest_load,
          normalised_load, load, gravity):
    """A module-level custom tyre (picklable by reference)."""
    return np.zeros_like(load), np.full_like(load, 100.0), np.zeros_like(load), np.zeros_like(load)


def test_params_copies_and_pickles_repack_in_their_own_process(monkeypatch):
    """A pickle or copy of VehicleParams leaves the packed arrays out: they held the custom tyre's
    index in the pickling process's registry (another process drove another tyre), and came
    back writeable, a new type to numba that compiled the whole update again (~2 min)."""
    import copy
    import pickle

    from traction.vehicle_model import tire_custom

    p = dataclasses.replace(_params("custom"), custom_tire=_push)
    monkeypatch.setattr(tire_custom, "_BY_INDEX", [_params, _inputs])   # two tyres before it
    assert p.packed.wheel[0]["custom_index"] == 2
    monkeypatch.setattr(tire_custom, "_BY_INDEX", [])                   # "another process"
    for q in (pickle.loads(pickle.dumps(p)), copy.deepcopy(p)):
        assert not {"packed", "groups", "base_split"} & set(vars(q))
        assert tire_custom._BY_INDEX[int(q.packed.wheel[0]["custom_index"])] is _push
        assert all(not a.flags.writeable for a in q.packed)             # the original's type
        for a, b in zip(q.packed, p.packed, strict=True):
            if a is not q.packed.wheel:
                assert np.array_equal(a, b)


# The arcade tyre's two stiffnesses act on their own axes (their
# defaults differ, 1 and 2 per m/s, but no test told them apart), and the tyre inputs the
# vehicle update hands a custom tyre (slips, rest load in N) are the documented ones: the
# array drivers the other tests use build their inputs themselves, so the update's own inputs
# (tire_models.substep_forces) were not checked.
@pytest.mark.parametrize("v", [10.0, 0.25])
def test_arcade_long_and_lat_stiffness_act_on_their_own_axes(v):
    """Below the friction circle: f_long = -k_long load (v_long - omega r), f_lat = -k_lat load
    v_lat, road torque = -f_long r (defaults k_long = 1, k_lat = 2 per m/s). Below 1 m/s the
    slide is read against the patch's speed (a slip x 1 m/s): at 0.25 m/s the same slides
    push 4x as hard (a force per m/s of slide at any speed would let a parked car creep)."""
    p = _params("arcade")
    assert p.tires.arcade_long_stiffness[0] == 1.0 and p.tires.arcade_lat_stiffness[0] == 2.0
    r, rest, load = p.wheels.radius, p.suspension.sprung_mass * 9.81, 3500.0
    slide, v_lat = 0.01, 0.02
    gain = max(1.0, 1.0 / v)
    omega = (v - slide) / r
    one = lambda a: np.broadcast_to(np.asarray(a, float), (1, 4)).copy()  # noqa: E731
    ls, la = np.array([tire.slips(v, v_lat, w * rr) for w, rr in zip(omega, r, strict=True)]).T
    x = tire.TireInputs(one(v), one(v_lat), one(omega), one(ls), one(la), one(0.0), one(1.0),
                        one(1.0), one(load), one(rest), one(load / rest), 9.81)
    f_long, f_lat, moment, road = _tire_forces(p.packed, x, np.ones((1, 4), bool))
    np.testing.assert_allclose(f_long, -1.0 * load * slide * gain, rtol=1e-6)
    np.testing.assert_allclose(f_lat, -2.0 * load * v_lat * gain, rtol=1e-9)
    np.testing.assert_allclose(road, -f_long * r, rtol=1e-12)
    assert np.all(moment == 0.0)


def test_the_update_hands_a_custom_tyre_its_documented_inputs():
    """Rolling with a slip ratio and a slip angle: the custom tyre sees the update's own long
    and lateral slips, ``(omega r - v) / max(|v|, |omega r|)`` and ``atan(v_lat / max(|v|,
    |omega r|))`` of the patch (what ``VehicleOutputs`` reports too when the tread does not move: the tyre
    makes no force here), the rest load as sprung mass x gravity (N), gravity and the wheel
    radii."""
    seen = []

    def recorder(friction, long_slip, lat_slip, camber, wheel_omega, wheel_radius, rest_load,
                 normalised_load, load, gravity):
        seen.append(dict(long_slip=long_slip.copy(), lat_slip=lat_slip.copy(),
                         rest_load=np.array(rest_load), wheel_radius=np.array(wheel_radius),
                         gravity=gravity))
        return (np.zeros_like(load), np.zeros_like(load), np.zeros_like(load), np.zeros_like(load))

    p = dataclasses.replace(_params("custom"), custom_tire=recorder)
    state, cmd = vm.VehicleState.zeros(p), vm.Commands.zeros(p)
    v, v_lat = 10.0, 1.5
    state.omega[:] = 1.2 * v / p.wheels.radius                  # spinning faster than rolling
    kin = vm.ChassisKinematics(np.zeros((1, 3)), np.eye(3)[None], p.chassis.com[None],
                               np.array([[v, v_lat, 0.0]]), np.zeros((1, 3)))
    rest = p.suspension.max_compression + p.wheels.radius
    hits = vm.GroundHits(np.full((1, 4), 0.95 * rest), np.array([0.0, 0.0, 1.0]),
                         np.zeros((1, 4), int))
    g = 9.81
    out = vm.step(p, state, kin, hits, cmd, vm.FrictionTable.default(), 0.002, g)
    assert np.all(out.in_contact) and seen
    last = seen[-1]
    np.testing.assert_allclose(last["long_slip"], (1.2 - 1.0) / 1.2, rtol=1e-12)
    np.testing.assert_allclose(last["lat_slip"], np.arctan(v_lat / (1.2 * v)), rtol=1e-12)
    np.testing.assert_allclose(out.long_slip, last["long_slip"], rtol=5e-3)   # bearing drag
    np.testing.assert_allclose(out.lat_slip, last["lat_slip"], rtol=1e-3)
    assert not np.allclose(out.long_slip, out.lat_slip)
    np.testing.assert_allclose(last["rest_load"], p.suspension.sprung_mass * g, rtol=1e-12)
    np.testing.assert_allclose(last["wheel_radius"], p.wheels.radius, rtol=1e-12)
    assert last["gravity"] == g
    assert last["long_slip"].shape == (1, 4) and last["wheel_radius"].shape == (4,)
    assert last["rest_load"].shape == (4,)                     # per-wheel constants: (k,)


# Curve-set validation: normalised y within [-1, 1] either way, >= 2 points per curve, one
# curve per family index.
def _with_long(curves=None, angles=None):
    d = tire_curve.DEFAULT
    return dataclasses.replace(d, long=d.long if curves is None else curves,
                               long_slip_angles=d.long_slip_angles if angles is None else angles)


def test_default_curve_set_is_valid():
    tire_curve.DEFAULT.validate()


def test_curve_y_below_minus_one_is_refused():
    """Braking curves are negative: -1.5 is as far out of the normalised range as +1.5."""
    bad = np.array([[-1.0, -1.5], [0.0, 0.0], [1.0, 0.8]])
    with pytest.raises(vm.VehicleConfigError, match=r"long\[0\]: y values are normalised"):
        _with_long((bad,) + tire_curve.DEFAULT.long[1:]).validate()


def test_single_point_curve_is_refused():
    one = np.array([[0.0, 0.5]])
    with pytest.raises(vm.VehicleConfigError, match=r"long\[1\]: need >= 2 \[x, y\] points"):
        _with_long(tire_curve.DEFAULT.long[:1] + (one,) + tire_curve.DEFAULT.long[2:]).validate()


def test_family_needs_one_curve_per_index():
    """Four slip angles but three curves: refused (the packed family would read past them)."""
    with pytest.raises(vm.VehicleConfigError, match=r"long: need one curve per family index "
                                                    r"\(4 indices, 3 curves\)"):
        _with_long(tire_curve.DEFAULT.long[:3]).validate()
