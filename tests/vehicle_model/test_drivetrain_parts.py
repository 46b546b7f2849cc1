"""Engine, clutch solve, gearbox/autobox logic (no simulator)."""

import dataclasses
import re

import numpy as np
import pytest

from traction import vehicle_model as vm
from traction.vehicle_model import (
    ClutchParams,
    GearboxParams,
    VehicleState,
    drivetrain,
    engine,
    gearbox,
    load_vehicle,
)
from traction.vehicle_model import errors as vm_errors
from traction.vehicle_model.pack import pack


def _free_rev(pk) -> float:
    """Engine speed after 20 s at full throttle in neutral (1 ms steps), from rest."""
    w_e, out_g = 0.0, np.zeros(1)
    for _ in range(20000):
        w_e, _, _, _ = drivetrain.solve(pk.vehicle[0], pk.torque_curve, w_e, np.zeros(1),
                                        np.ones(1), np.ones(1), np.zeros(1), np.zeros(1), 1.0,
                                        0.0, np.ones(1), 1e-3, out_g)
    return w_e


def test_free_revving_engine_settles_where_torque_equals_damping():
    p = load_vehicle("sedan_rwd")
    ep = dataclasses.replace(p.engine, damping_full_throttle=1.2)
    pk = dataclasses.replace(p, engine=ep).packed
    w_e = _free_rev(pk)
    grid = np.linspace(1.0, ep.max_omega * 0.999, 200001)
    curve = np.asarray(ep.torque_curve)                        # the preset's points, read
    torque = ep.peak_torque * np.interp(grid / ep.max_omega, curve[:, 0], curve[:, 1])
    balance = torque - 1.2 * grid
    expected = grid[np.argmin(np.abs(balance))]
    assert expected < ep.max_omega * 0.95                      # a real balance, not the limiter
    assert w_e == pytest.approx(expected, rel=1e-3)


def test_engine_torque_follows_the_curve_points():
    """Full-throttle torque is peak torque x the curve, linear between its points (a curve read
    backwards or ignored gave other torques): sedan_rwd's 1.0 x 500 N m at 0.5 max_omega,
    0.88 at 0.125, half-way between 0.8 and 0.88 at 0.0625, 0.7 just below the limit; half of
    that at half throttle; 0 at and past max_omega."""
    ep = load_vehicle("sedan_rwd").engine
    pk = load_vehicle("sedan_rwd").packed
    for x, y in ((0.5, 1.0), (0.125, 0.88), (0.0625, 0.84), (0.9375, 0.775), (0.999999, 0.7)):
        for throttle in (1.0, 0.5):
            t = engine.torque(ep.peak_torque, ep.max_omega, pk.torque_curve, throttle,
                              x * ep.max_omega)
            assert t == pytest.approx(throttle * 500.0 * y, rel=1e-5), (x, throttle)
    for x in (1.0, 1.2):
        assert engine.torque(ep.peak_torque, ep.max_omega, pk.torque_curve, 1.0,
                             x * ep.max_omega) == 0.0


def test_flat_two_point_torque_curve_is_accepted_and_balances_at_peak_over_damping():
    """The guide's troubleshooting curve (flat, y = 1): a free-revving engine settles where
    peak torque = damping x omega; one point is refused."""
    p = load_vehicle("sedan_rwd")
    ep = dataclasses.replace(p.engine, damping_full_throttle=1.2, torque_curve=[[0, 1], [1, 1]])
    pk = dataclasses.replace(p, engine=ep).packed
    w_e = _free_rev(pk)
    assert ep.peak_torque / 1.2 < ep.max_omega
    assert w_e == pytest.approx(ep.peak_torque / 1.2, rel=1e-6)
    with pytest.raises(vm_errors.VehicleConfigError, match=r"torque_curve needs >= 2 \(x, y\) points"):
        dataclasses.replace(p.engine, torque_curve=[[0, 1]]).validate()


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
    pk = dataclasses.replace(p, clutch=cp).packed
    ratio = 10.0
    shares = np.array([0.0, 0.0, 0.5, 0.5])
    w_e, w_g = 300.0, np.zeros(4)
    slips = []
    for _ in range(50):                                        # 0.5 s at 10 ms, zero throttle
        new_g = np.full(4, np.nan)
        w_e, clutch, _, slip = drivetrain.solve(pk.vehicle[0], pk.torque_curve, w_e, w_g,
                                                p.wheels.moi, p.wheels.damping_rate, np.zeros(4),
                                                np.zeros(4), 0.0, ratio, shares, 0.01, new_g)
        w_g = new_g
        slips.append(w_e - ratio * (shares @ w_g))
        assert slip == pytest.approx(slips[-1], abs=1e-9)     # no brakes: the returned slip
        assert clutch == pytest.approx(strength * slip)        # and its torque
    slips = np.array(slips)
    assert np.all(np.isfinite(slips))
    assert abs(slips[-1]) < 0.01 * 300                         # locked up: < 1% of the start
    assert np.count_nonzero(np.diff(np.sign(slips[np.abs(slips) > 1e-9]))) <= 1
    assert w_g[2] == pytest.approx(w_g[3], rel=0.01) and w_g[2] > 0   # driven equally
    assert np.all(w_g[:2] == 0)                                # undriven wheels untouched


def _box(**kw):
    return GearboxParams(forward_ratios=np.array([4.0, 2.0, 1.5]), up_ratios=np.full(3, 0.65),
                         down_ratios=np.full(3, 0.5), **kw)


def _gearbox(gp):
    """Packed vehicle parameters with gearbox ``gp`` and a fresh one-vehicle state in first
    (packed without ``validate``: the kernel is tested on boxes it refuses too)."""
    from traction.vehicle_model.pack import pack

    p = dataclasses.replace(load_vehicle("sedan_rwd"), gearbox=gp)
    return pack(p), VehicleState.zeros(p, 1, gear=1)


def _shift(pk, s, engine_ratio, dt, want=None):
    """One ``gearbox.shift`` of vehicle 0 (``want`` None: no manual request)."""
    gears, timers = s.gears[0], s.vehicle[0]
    gearbox.shift(pk.vehicle[0], pk.shift_up, pk.shift_down, gears, timers,
                  int(gears["gear"]) if want is None else want, engine_ratio, dt)


def test_gear_change_spends_switch_time_in_neutral():
    gp = _box(switch_time=0.5, autobox=0.0)
    pk, s = _gearbox(gp)
    ratios, engaged = [], []
    for k in range(70):
        _shift(pk, s, 0.3, 0.01, want=2 if k == 0 else None)  # request 2nd, then run
        ratios.append(gearbox.effective_ratio(pk.vehicle[0], pk.gear_ratios, s.gears[0], s.vehicle[0]))
        engaged.append(gearbox.engaged_gear(s.gears[0], s.vehicle[0]))
    ratios, engaged = np.array(ratios), np.array(engaged)
    assert np.all(ratios[:49] == 0.0) and np.all(ratios[51:] == 2.0 * gp.final_ratio)
    assert np.all(engaged[ratios == 0.0] == 0) and np.all(engaged[ratios > 0.0] == 2)
    assert s.gearbox.gear[0] == 2


def test_autobox_shifts_one_gear_and_never_below_first():
    gp = _box(switch_time=0.1, latency=0.5)
    pk, s = _gearbox(gp)
    gears = []
    for _ in range(300):                                       # engine always "too slow"
        _shift(pk, s, 0.1, 0.01)
        gears.append(int(s.gearbox.target[0]))
    assert set(gears) == {1}
    pk, s = _gearbox(gp)
    for _ in range(300):                                       # engine always "too fast"
        _shift(pk, s, 0.9, 0.01)
        gears.append(int(s.gearbox.target[0]))
        assert np.all(np.abs(np.diff([g for g in gears[300:]])) <= 1)
    assert s.gearbox.gear[0] == 3 and min(gears[300:]) >= 1


def test_gearbox_that_would_hunt_is_refused():
    """4, 2, 1.5 with up 0.65 and down 0.5: an up-shift from first leaves the engine at
    0.65 x 2 / 4 = 0.325 of max_omega, below second gear's 0.5: straight back down."""
    with pytest.raises(vm_errors.VehicleConfigError, match=re.escape(
            "car.toml: gearbox.up_ratios[0] = 0.65: an up-shift from gear 1 leaves the engine at "
            "up_ratios[0] * forward_ratios[1] / forward_ratios[0] = 0.325")):
        _box().validate(where="car.toml")
    _box(autobox=0.0).validate()                    # manual only: the thresholds are unused


@pytest.mark.parametrize("latency", [0.1, 0.3])
def test_autobox_latency_not_above_switch_time_is_refused(latency):
    """PhysX Tuning Guide: a latency below the switch time lets the autobox shift back down the
    moment a change completes (neutral <-> first cycling); the same latency without the autobox
    is unused."""
    gp = dataclasses.replace(load_vehicle("sedan_rwd").gearbox, switch_time=0.3, latency=latency)
    with pytest.raises(vm_errors.VehicleConfigError, match=re.escape(
            f"car.toml: gearbox.latency = {latency:g} s must exceed gearbox.switch_time = 0.3 s "
            "while the autobox is on")):
        gp.validate(where="car.toml")
    dataclasses.replace(gp, autobox=0.0).validate()
    dataclasses.replace(gp, latency=0.31).validate()


def _autobox_targets(gp, gear, engine_ratio, neutral, extra):
    """The autobox's target gear per 10 ms step, starting in ``gear`` (its latency passed) with
    the wheels turning where the engine is at ``engine_ratio`` of max_omega in that gear; the
    engine at ``neutral`` of max_omega while a change is in progress."""
    r = gp.forward_ratios
    pk, s = _gearbox(gp)
    s.gearbox.gear = s.gearbox.target = gear
    wheel = engine_ratio / r[gear - 1]                       # engine ratio / gear ratio
    s.vehicle[0]["autobox_timer"] = gp.latency
    targets = []
    for _ in range(int((gp.switch_time + 3 * gp.latency) / 0.01) + extra):
        ratio = wheel * r[s.gearbox.gear[0] - 1] if s.gearbox.switch_timer[0] <= 0 else neutral
        _shift(pk, s, ratio, 0.01)
        targets.append(int(s.gearbox.target[0]))
    return targets


@pytest.mark.parametrize("latency,cycles", [(0.1, True), (0.4, False)])
def test_autobox_with_latency_below_switch_time_shifts_back_at_once(latency, cycles):
    """The sedan's gears (no hunting: in second after an up-shift the engine turns at 0.75 x 2.3
    / 3.5 = 0.49 of max_omega, above the 0.35 down ratio), but the engine slows to 0.3 in the
    0.3 s in neutral (throttle cut). With a latency of 0.1 s the autobox decides the step the
    change completes, on the slowed engine, and goes back to first; with 0.4 s the engine is in
    gear again (synchronised here at once) when it next decides."""
    gp = dataclasses.replace(load_vehicle("sedan_rwd").gearbox, latency=latency)
    targets = _autobox_targets(gp, 1, gp.up_ratios[0] + 0.01, neutral=0.3, extra=5)
    assert targets[0] == 2
    assert (1 in targets[1:]) == cycles, sorted(set(targets))


@pytest.mark.parametrize("kw,message", [
    ({"reverse_ratio": 0.0}, "gearbox.reverse_ratio = 0 is out of range; allowed [-100, 0)"),
    ({"forward_ratios": np.array([]), "up_ratios": np.array([]), "down_ratios": np.array([])},
     "gearbox.forward_ratios is empty; need at least one forward gear"),
])
def test_gearbox_ratio_gaps_are_refused(kw, message):
    with pytest.raises(vm_errors.VehicleConfigError, match=re.escape(message)):
        GearboxParams(**kw).validate()


@pytest.mark.parametrize("preset", [None, "sedan_rwd", "truck_6x6", "tank"])
def test_autobox_up_shift_never_triggers_a_down_shift(preset):
    """Gear kinematics: at the up threshold of gear g the wheels turn at up[g] max_omega /
    r[g]; in g+1 the engine turns at up[g] r[g+1] / r[g] max_omega, which the validated box
    keeps above down[g+1]: held there past the latency, the autobox stays in g+1."""
    gp = GearboxParams() if preset is None else load_vehicle(preset).gearbox
    gp = dataclasses.replace(gp, autobox=1.0)
    gp.validate()
    for g in range(1, gp.n_forward):
        targets = _autobox_targets(gp, g, gp.up_ratios[g - 1] + 1e-3, neutral=0.0, extra=2)
        assert targets[0] == g + 1 and set(targets) == {g + 1}, (g, sorted(set(targets)))


def test_autobox_reads_each_gears_own_thresholds():
    """PhysX's autobox compares the engine's omega / max_omega with the current gear's up and
    down ratios: with thresholds that differ per gear (up 0.6, 0.7, 0.8, 0.9; down 0.2, 0.3,
    0.4, 0.5), 1e-3 below gear g's up ratio it stays, 1e-3 above it shifts to g + 1; 1e-3 above
    its down ratio it stays, 1e-3 below it shifts to g - 1 (the top gear never up, first
    never down)."""
    gp = GearboxParams(forward_ratios=np.array([4.0, 2.5, 1.6, 1.0]),
                       up_ratios=np.array([0.6, 0.7, 0.8, 0.9]),
                       down_ratios=np.array([0.2, 0.3, 0.4, 0.5]), switch_time=0.1, latency=0.5)
    for g in range(1, 5):
        up, down = gp.up_ratios[g - 1], gp.down_ratios[g - 1]
        cases = [(up - 1e-3, g), (up + 1e-3, min(g + 1, 4)),
                 (down + 1e-3, g), (down - 1e-3, max(g - 1, 1))]
        for ratio, expected in cases:
            pk, s = _gearbox(gp)
            s.gearbox.gear = s.gearbox.target = g
            s.vehicle[0]["autobox_timer"] = gp.latency
            _shift(pk, s, ratio, 0.01)
            assert int(s.gearbox.target[0]) == expected, (g, ratio)


def test_brakes_slow_a_wheel_toward_zero_either_way_and_stop_it_there():
    """A brake changes a wheel's spin by at most brake torque x dt / inertia toward 0, whichever
    way it turns, and stops it at 0 rather than turning it back."""
    from traction.vehicle_model import wheel

    assert wheel.apply_brake(10.0, 3.0) == 7.0
    assert wheel.apply_brake(-10.0, 3.0) == -7.0                 # reversing: slowed as well
    assert wheel.apply_brake(2.0, 3.0) == 0.0 and wheel.apply_brake(-2.0, 3.0) == 0.0
    assert wheel.apply_brake(-5.0, 0.0) == -5.0


# The clutch's estimate mode needs at least one sweep (0 sweeps would
# leave the engine uncoupled from the wheels in gear, without a word).
@pytest.mark.parametrize("kw, message", [
    ({"accuracy": "estimate", "estimate_iterations": 0},
     "car.toml: clutch.estimate_iterations = 0 is out of range; allowed integer in [1, 100]"),
    ({"estimate_iterations": 101},
     "car.toml: clutch.estimate_iterations = 101 is out of range; allowed integer in [1, 100]"),
    ({"strength": 0.0}, "car.toml: clutch.strength = 0 is out of range; allowed (0, 1e+06]"),
])
def test_clutch_fields_out_of_range_are_named(kw, message):
    p = vm.load_vehicle("sedan")
    with pytest.raises(vm.VehicleConfigError, match=re.escape(message)):
        dataclasses.replace(p, clutch=ClutchParams(**kw)).validate("car.toml")


# VehicleState.set_gear during a gear change.
def test_set_gear_during_a_change_engages_that_gear_at_once():
    """set_gear puts the vehicle in the gear with no change running: a manual change that was
    under way (neutral for switch_time) is cancelled, the new gear drives from the next
    update on."""
    gp = GearboxParams(forward_ratios=np.array([4.0, 2.0, 1.5]), up_ratios=np.full(3, 0.65),
                       down_ratios=np.full(3, 0.5), switch_time=0.5, autobox=0.0)
    p = dataclasses.replace(load_vehicle("sedan_rwd"), gearbox=gp)
    pk, s = pack(p), VehicleState.zeros(p, 1, gear=1)
    gears, timers = s.gears[0], s.vehicle[0]
    for k in range(10):                                  # request 2nd: 0.1 s into 0.5 s
        gearbox.shift(pk.vehicle[0], pk.shift_up, pk.shift_down, gears, timers,
                      2 if k == 0 else int(gears["gear"]), 0.3, 0.01)
    assert gearbox.engaged_gear(gears, timers) == 0     # in neutral, changing
    s.set_gear(p, 3)
    gearbox.shift(pk.vehicle[0], pk.shift_up, pk.shift_down, gears, timers, 3, 0.3, 0.01)
    assert gearbox.engaged_gear(gears, timers) == 3
    ratio = gearbox.effective_ratio(pk.vehicle[0], pk.gear_ratios, gears, timers)
    assert ratio == 1.5 * gp.final_ratio


# Engine and clutch solve edge cases: the torque curve's x must run over the whole rev range,
# 0 to 1; an engine dragged backwards by the wheels is held at 0; the piecewise-linear lookup is
# flat beyond both ends.
@pytest.mark.parametrize("curve", [[[0.0, 1.0], [0.5, 0.9]], [[0.0, 1.0], [0.5, 0.9], [0.9, 0.8]]])
def test_torque_curve_must_end_at_the_rev_limit(curve):
    """A curve whose last x is not 1 (max_omega) leaves the top of the rev range undefined:
    refused, naming its x values."""
    ep = dataclasses.replace(load_vehicle("sedan_rwd").engine, torque_curve=curve)
    with pytest.raises(vm_errors.VehicleConfigError, match=r"torque_curve x values .* must "
                                                             r"increase from 0 to 1"):
        ep.validate()


def _solve(pk, w_e, w_g, road, throttle, ratio, h=1e-3):
    from traction.vehicle_model import drivetrain

    n = len(w_g)
    out = np.zeros(n)
    res = drivetrain.solve(pk.vehicle[0], pk.torque_curve, w_e, np.asarray(w_g, float), np.ones(n),
                           np.full(n, 0.25), np.asarray(road, float), np.zeros(n), throttle,
                           ratio, np.full(n, 1.0 / n), h, out)
    return res, out


def test_engine_dragged_backwards_by_the_wheels_stops_at_zero():
    """In gear, wheels turning backwards fast pull the engine through a strong clutch; the
    engine never spins backwards: it is held at 0."""
    p = load_vehicle("sedan_rwd")
    pk = dataclasses.replace(p, clutch=ClutchParams(strength=1e4)).packed
    (w_e, _, _, _), _ = _solve(pk, 0.0, [-200.0, -200.0], [0.0, 0.0], 0.0, 10.0, h=1e-2)
    assert w_e == 0.0


def test_interp_is_flat_beyond_both_ends_and_linear_between():
    """The lookup behind the engine curve and the tyre curves: the end values beyond the ends."""
    from traction.vehicle_model.jit import interp

    pts = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 5.0]])
    assert interp(-3.0, pts) == 1.0 and interp(0.0, pts) == 1.0
    assert interp(2.0, pts) == 5.0 and interp(7.0, pts) == 5.0
    assert interp(0.5, pts) == pytest.approx(1.5) and interp(1.5, pts) == pytest.approx(3.5)


# A tank track in the air, in neutral, spins down like each of its wheels: group damping is the
# sum over its wheels.
def test_a_free_track_in_neutral_spins_down_at_its_wheels_damping_over_inertia():
    """A track is one spin for its six wheels, with their summed inertia and summed bearing
    damping: lifted off the ground, no gear, no brake, it loses spin at the rate of any one
    wheel, omega(t) = omega0 exp(-t D / I) (implicit substeps: exp to 1e-3)."""
    p = vm.load_vehicle("tank")
    kin = vm.ChassisKinematics(np.zeros((1, 3)), np.eye(3)[None], p.chassis.com[None],
                               np.zeros((1, 3)), np.zeros((1, 3)))
    hits = vm.GroundHits(np.full((1, p.n_wheels), -1.0), np.array([0.0, 0.0, 1.0]),
                         np.zeros((1, p.n_wheels), int))                  # no ray hits: airborne
    state, cmd = vm.VehicleState.zeros(p, 1), vm.Commands.zeros(p, 1)
    state.gearbox.gear[:] = state.gearbox.target[:] = 0                  # neutral
    omega0 = 40.0
    state.omega[:] = omega0
    dt, steps = 0.02, 50
    for _ in range(steps):
        out = vm.step(p, state, kin, hits, cmd, vm.FrictionTable.default(), dt)
    assert not np.any(out.in_contact[0])
    rate = p.wheels.damping_rate / p.wheels.moi
    assert np.all(rate > 0.1)                                            # 1/s: a visible decay
    np.testing.assert_allclose(state.omega[0], omega0 * np.exp(-dt * steps * rate), rtol=1e-3)
