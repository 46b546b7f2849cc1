"""Engine, clutch solve, gearbox/autobox logic (no simulator)."""

import dataclasses

import numpy as np
import pytest

from traction.vehicle_model import (
    ClutchParams,
    GearboxParams,
    GearboxState,
    drivetrain,
    engine,
    gearbox,
    load_vehicle,
)


def test_free_revving_engine_settles_where_torque_equals_damping():
    ep = dataclasses.replace(load_vehicle("sedan_rwd").engine, damping_full_throttle=1.2)
    w_e = np.zeros(1)
    for _ in range(20000):                                     # 20 s at 1 ms, neutral
        w_e, _, _, _ = drivetrain.solve(ep, ClutchParams(), w_e, np.zeros((1, 1)), np.ones(1),
                                        np.ones(1), np.zeros((1, 1)), np.zeros((1, 1)),
                                        np.ones(1), np.zeros(1), np.ones((1, 1)), np.ones((1, 1)),
                                        np.full(1, 1e-3))
    grid = np.linspace(1.0, ep.max_omega * 0.999, 200001)
    balance = engine.torque(ep, np.ones_like(grid), grid) - 1.2 * grid
    expected = grid[np.argmin(np.abs(balance))]
    assert expected < ep.max_omega * 0.95                      # a real balance, not the limiter
    assert w_e[0] == pytest.approx(expected, rel=1e-3)


@pytest.mark.parametrize("strength", [10.0, 1e4])
@pytest.mark.parametrize("accuracy", ["best_possible", "estimate"])
def test_clutch_couples_engine_and_wheels_stably(strength, accuracy):
    """In gear with free wheels the clutch slip decays without oscillating (one sign change at
    most: once locked, engine braking reverses the torque flow) and engine and wheels end up
    turning together at the gear ratio, at the largest step the envs use (10 ms)."""
    p = load_vehicle("sedan_rwd")
    cp = ClutchParams(strength=strength, accuracy=accuracy, estimate_iterations=8)
    if accuracy == "estimate" and strength > 100:
        pytest.skip("estimate mode is for moderate strengths (as in PhysX)")
    ratio = np.array([10.0])
    beta = alpha = np.array([[0.0, 0.0, 0.5, 0.5]])
    w_e, w_g = np.array([300.0]), np.zeros((1, 4))
    slips = []
    for _ in range(50):                                        # 0.5 s at 10 ms, zero throttle
        w_e, w_g, clutch, _ = drivetrain.solve(p.engine, cp, w_e, w_g, p.wheels.moi,
                                               p.wheels.damping_rate, np.zeros((1, 4)),
                                               np.zeros((1, 4)), np.zeros(1), ratio, beta, alpha,
                                               np.full(1, 0.01))
        slips.append(w_e[0] - ratio[0] * (alpha @ w_g[0])[0])
    slips = np.array(slips)
    assert np.all(np.isfinite(slips))
    assert abs(slips[-1]) < 0.01 * 300                         # locked up: < 1% of the start
    assert np.count_nonzero(np.diff(np.sign(slips[np.abs(slips) > 1e-9]))) <= 1
    assert w_g[0, 2] == pytest.approx(w_g[0, 3], rel=0.01) and w_g[0, 2] > 0   # driven equally
    assert np.all(w_g[0, :2] == 0)                             # undriven wheels untouched


def _box(**kw):
    return GearboxParams(forward_ratios=np.array([4.0, 2.0, 1.5]), up_ratios=np.full(3, 0.65),
                         down_ratios=np.full(3, 0.5), **kw)


def test_gear_change_spends_switch_time_in_neutral():
    gp = _box(switch_time=0.5, autobox=0.0)
    s = GearboxState.initial(1, gear=1)
    gearbox.request(gp, s, np.array([2]), np.array([True]))
    ratios = []
    for _ in range(70):
        gearbox.update(gp, s, np.array([0.3]), 0.01)
        ratios.append(gearbox.effective_ratio(gp, s)[0])
    ratios = np.array(ratios)
    assert np.all(ratios[:49] == 0.0) and np.all(ratios[51:] == 2.0 * gp.final_ratio)
    assert s.gear[0] == 2


def test_autobox_shifts_one_gear_and_never_below_first():
    gp = _box(switch_time=0.1, latency=0.5)
    s = GearboxState.initial(1, gear=1)
    gears = []
    for _ in range(300):                                       # engine always "too slow"
        gearbox.update(gp, s, np.array([0.1]), 0.01)
        gears.append(int(s.target[0]))
    assert set(gears) == {1}
    s = GearboxState.initial(1, gear=1)
    for _ in range(300):                                       # engine always "too fast"
        gearbox.update(gp, s, np.array([0.9]), 0.01)
        gears.append(int(s.target[0]))
        assert np.all(np.abs(np.diff([g for g in gears[300:]])) <= 1)
    assert s.gear[0] == 3 and min(gears[300:]) >= 1
