"""check_timestep's wheel rule for every tyre model: the tyre/wheel rate is each model's force
per m/s of slide near rolling, times r^2 / I; an overshooting substep is named with the
substeps that remove the overshoot."""

import dataclasses
import math
import warnings

import numpy as np
import pytest

from traction import vehicle_model as vm
from traction.vehicle_model.timestep import wheel_rates

G = 9.81


def _with_tires(p, model, **fields):
    """``p`` with every wheel's tyre model set to ``model`` and tyre ``fields`` replaced."""
    code = vm.TIRE_MODELS.index(model)
    tires = dataclasses.replace(p.tires, model=np.full(p.n_wheels, float(code)), **fields)
    return dataclasses.replace(p, tires=tires)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def test_each_model_rate_is_its_zero_slip_stiffness(sedan):
    """Sedan (r 0.33 m, I = 0.5 x 20 x 0.33^2): physx C r^2/(I v) with C = 1000 g and v = 4 m/s
    (5 m/s at the substep threshold); magic formula B C D mu load (12 x 1.65 x 1.0 = 19.8 per unit
    slip) over min_slip_speed 1 m/s (5 m/s); the default curve rises to 1.0 at slip 0.1 (slope
    10) x grip; arcade stiffness x load per m/s at any speed; not rated: curve with clamps, custom."""
    r, inertia, load = sedan.wheels.radius, sedan.wheels.moi, sedan.suspension.sprung_mass * G
    assert inertia == pytest.approx(0.5 * 20.0 * 0.33**2)
    low, high = wheel_rates(sedan, G)
    assert low == pytest.approx(1000 * G * r**2 / (inertia * 4.0))
    assert high == pytest.approx(1000 * G * r**2 / (inertia * 5.0))
    low, high = wheel_rates(_with_tires(sedan, "magic_formula"), G, friction=0.7)
    assert low == pytest.approx(19.8 * 0.7 * load * r**2 / (inertia * 1.0))
    assert high == pytest.approx(low / 5.0)
    low, high = wheel_rates(_with_tires(sedan, "curve", clamps=np.zeros(4),
                                        grip=np.full(4, 1.5)), G, friction=0.7)
    assert low == pytest.approx(10.0 * 1.5 * 0.7 * load * r**2 / inertia)
    assert high == pytest.approx(low / 5.0)
    low, high = wheel_rates(_with_tires(sedan, "arcade", arcade_long_stiffness=np.full(4, 2.0)),
                            G, friction=0.7)
    assert low == pytest.approx(2.0 * load * r**2 / inertia) and np.all(high == low)
    for p in (_with_tires(sedan, "curve"), _with_tires(sedan, "custom")):
        assert np.all(np.isnan(wheel_rates(p, G)[0]))


def test_magic_formula_tyres_are_named_with_the_substeps_they_need(sedan):
    """Magic formula at 2 ms: the low-speed rate (~7,800 /s front) times dt / 3 is ~5; the
    message names the wheels, the model and ceil(rate dt) substeps; with those, it is silent."""
    p = _with_tires(sedan, "magic_formula")
    low, high = wheel_rates(p, G)
    need_low, need_high = math.ceil(low.max() * 0.002), math.ceil(high.max() * 0.002)
    assert (need_low, need_high) == (16, 4)
    msgs = _quiet(vm.check_timestep, p, 0.002)
    assert len(msgs) == 2
    assert "front_left, front_right, rear_left, rear_right (magic_formula tyres)" in msgs[0]
    assert f"{low.max():.0f} /s at low speed" in msgs[0]
    assert msgs[0].endswith("set simulation.substeps_low >= 16")
    assert msgs[1].endswith("set simulation.substeps_high >= 4")
    fixed = dataclasses.replace(p, simulation=dataclasses.replace(
        p.simulation, substeps_low=need_low, substeps_high=need_high))
    assert _quiet(vm.check_timestep, fixed, 0.002) == []
    assert _quiet(vm.check_timestep, p, 0.002, friction=0.05) == []   # ice: 20x softer


@pytest.mark.parametrize("friction", [-0.1, np.nan, [1.0, 1.0], "wet"])
def test_a_bad_friction_is_named(sedan, friction):
    with pytest.raises(ValueError, match="friction = .*expected a number or 4 numbers"):
        vm.check_timestep(sedan, 0.002, friction=friction)


def test_the_damping_rates_are_the_chassis_modes(sedan):
    """The sedan's struts sit symmetrically left and right, so roll decouples: its rate is
    sum c y^2 / I_xx; heave and pitch share sum c / m + sum c x^2 / I_yy (the trace) and, with
    equal dampers at the axles' two distances a and b from the CoM, the product c^2 (a + b)^2
    / (m I_yy) x 4 (the determinant). Roll is the fastest, 1.87x a strut's own c / m."""
    from traction.vehicle_model.timestep import damping_rates

    sp, ch = sedan.suspension, sedan.chassis
    r = sp.force_point - ch.com
    c = sp.damper_rate
    rates = damping_rates(sedan)
    roll = np.sum(c * r[:, 1] ** 2) / ch.inertia[0]
    assert roll == pytest.approx(rates[-1], rel=1e-12)
    heave_pitch = [x for x in rates if not math.isclose(x, roll, rel_tol=1e-9)]
    trace = c.sum() / ch.mass + np.sum(c * r[:, 0] ** 2) / ch.inertia[1]
    assert sum(heave_pitch) == pytest.approx(trace, rel=1e-12)
    a, b = r[0, 0], -r[2, 0]
    assert np.prod(heave_pitch) == pytest.approx(4 * c[0] ** 2 * (a + b) ** 2
                                                 / (ch.mass * ch.inertia[1]), rel=1e-12)
    assert rates[-1] / (c / sp.sprung_mass).max() == pytest.approx(1.87, abs=0.005)


@pytest.mark.parametrize("field, factor, rule", [
    ("damper_rate", 10.0, "fastest damping rate (heave, roll or pitch: the damper rates over "
                          "the body's mass and inertia) = 1.18 > 1 at dt = 0.004 s"),
    ("spring_strength", 1e-3, "natural frequency sqrt(k/m)/(2 pi) = 0.0469 Hz < 0.3 Hz"),
    ("damper_rate", 1e-3, "damping ratio c/(2 sqrt(k m)) = 0.000732 < 0.05"),
])
def test_dampers_too_strong_for_the_step_or_a_unit_slip_are_named(sedan, field, factor, rule):
    """The sedan's struts (35,000 N/m, 5,500 N s/m; sprung 402.8 kg front, 347.2 kg rear) at
    4 ms: dampers 10x give the chassis's roll a damping rate x dt of 1.18 (each strut's own
    c dt / m 0.55-0.63), a spring 1000x too soft 1.48 Hz / sqrt(1000) at the front (the worst
    is named), a damper 1000x too weak a damping ratio of 0.732 / 1000. The presets are silent
    at 2 and 4 ms, and so are dampers of exactly 0 (meant)."""
    sp = sedan.suspension
    p = dataclasses.replace(sedan, suspension=dataclasses.replace(
        sp, **{field: getattr(sp, field) * factor}))
    msgs = _quiet(vm.check_timestep, p, 0.004)
    assert len(msgs) == 1 and rule in msgs[0]
    if field == "spring_strength" or factor < 1.0:
        assert "wheels front_left, front_right, rear_left, rear_right" in msgs[0]
    undamped = dataclasses.replace(sedan, suspension=dataclasses.replace(
        sp, damper_rate=np.zeros(4)))
    assert _quiet(vm.check_timestep, undamped, 0.004) == []
    for name in ("sedan", "sedan_rwd", "truck_6x6", "tank"):
        for dt in (0.002, 0.004):
            assert _quiet(vm.check_timestep, vm.load_vehicle(name), dt) == []
