"""check_timestep: the dampers' chassis modes, the springs, and the parked tyres (the
one-step map of every tyre's tread against the chassis, with the useful masses the update
predicts with)."""

import dataclasses
import math
import warnings

import numpy as np
import pytest

from traction import vehicle_model as vm
from traction.vehicle_model.timestep import PARKED_FLIP, parked_tread_map

G = 9.81


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _lighter(p, factor):
    """``p`` with its chassis mass and inertia times ``factor``, the sprung masses kept (a
    vehicle changed in code: its struts were tuned for another load)."""
    return dataclasses.replace(p, chassis=dataclasses.replace(
        p.chassis, mass=p.chassis.mass * factor, inertia=p.chassis.inertia * factor))


def _worst_flip(p, dt):
    e = np.linalg.eigvals(parked_tread_map(p, dt))
    flipping = e[e.real < -1e-9]
    return float(np.abs(flipping).max()) if flipping.size else 0.0


@pytest.mark.parametrize("name", ["sedan", "sedan_rwd", "truck_6x6", "tank"])
@pytest.mark.parametrize("dt", [0.002, 0.004, 1 / 30, 0.1])
def test_parked_tyres_of_the_presets_never_flip(name, dt):
    """The useful masses bound the chassis's response to all the tyres at once (their shares
    add up to the chassis, the rotation counted for both directions), so the implicit tread
    step of a parked vehicle is stable and settles without a sign flip at any step: the map's
    eigenvalues lie in the unit disc (1: the chassis motions no tyre force touches, such as
    heave) and none is negative."""
    p = vm.load_vehicle(name)
    e = np.linalg.eigvals(parked_tread_map(p, dt))
    assert np.abs(e).max() <= 1.0 + 1e-9
    assert _worst_flip(p, dt) == 0.0
    assert not [m for m in _quiet(vm.check_timestep, p, dt) if "tyres: parked" in m]


def test_a_chassis_lighter_than_its_sprung_masses_is_warned_at_the_step_it_flips(sedan):
    """Sprung masses adding up to more than the chassis mass (and its inertia scaled alike):
    the useful masses then overstate what the tyres push, the predictions fall short, and at
    30 Hz a mode of the sedan's treads flips sign every step from a chassis at about 0.4 of
    its mass (growing below 0.35); the rule names it exactly there, and a shorter step
    settles."""
    dt = 1 / 30
    assert _worst_flip(_lighter(sedan, 0.6), dt) < 0.5
    fine = [f for f in np.linspace(0.2, 1.0, 81) if _worst_flip(_lighter(sedan, f), dt) <= PARKED_FLIP]
    boundary = min(fine)
    assert 0.3 < boundary < 0.5
    for factor, warned in ((boundary, False), (boundary - 0.02, True)):
        msgs = [m for m in _quiet(vm.check_timestep, _lighter(sedan, factor), dt) if "tyres:" in m]
        assert len(msgs) == int(warned)
    [msg] = [m for m in _quiet(vm.check_timestep, _lighter(sedan, 0.3), dt) if "tyres:" in m]
    assert msg.startswith("sedan: tyres: parked, a mode of the tyre treads against the chassis "
                          "flips sign every step")
    assert "sprung masses adding up to more than chassis.mass?" in msg
    assert not [m for m in _quiet(vm.check_timestep, _lighter(sedan, 0.3), 0.002) if "tyres:" in m]


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
