"""The drivetrain creates no energy, in every mode (no simulator).

The clutch passes ``T_c`` at its output speed; the differential hands group ``g`` the torque
``G beta_g T_c``. The wheels then receive ``sum(drive torque x spin)``; the clutch passes
``T_c x (clutch output speed)``. The output speed is read from the engine's side, without the
shares: the new engine spin minus the clutch slip (the slip the clutch torque ``strength x
slip`` is made of), and the engine's own equation is checked to feel that clutch torque.
"""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traction import vehicle_model as vm
from traction.vehicle_model import drivetrain, engine
from traction.vehicle_model import layout as L

SETTINGS = settings()  # the profile in tests/conftest.py

#: every engine-driven differential mode: (preset, differential fields)
MODES = [("sedan_rwd", {"kind": "open", "drive": "rwd"}),
         ("sedan_rwd", {"kind": "open", "drive": "4wd", "front_rear_split": 0.35}),
         ("sedan_rwd", {"kind": "limited_slip", "drive": "rwd"}),
         ("sedan_rwd", {"kind": "limited_slip", "drive": "fwd"}),
         ("sedan_rwd", {"kind": "limited_slip", "drive": "4wd"}),
         ("truck_6x6", {"type": "multi_wheel"}),
         ("truck_6x6", {"type": "torque_vectoring"}),
         ("tank", {"tank_mode": "standard"}),
         ("tank", {"tank_mode": "special"})]


def _vehicle(mode: int, accuracy: str, strength: float) -> vm.VehicleParams:
    preset, diff = MODES[mode]
    p = vm.load_vehicle(preset)
    return dataclasses.replace(
        p, differential=dataclasses.replace(p.differential, **diff),
        clutch=vm.ClutchParams(strength=strength, accuracy=accuracy, estimate_iterations=3))


@st.composite
def drivetrain_steps(draw):
    """A vehicle in one of :data:`MODES` (either clutch accuracy), a random drivetrain state
    and random commands: wheel spins (some at rest, some equal, one spinning fast in the air),
    engine spin up to past the rev limit, tyre torques, contacts and suspension forces (which
    torque vectoring reads), throttle, any gear (neutral and reverse included), tank thrusts and
    per-wheel torque shares (none, random with NaN / negative / zero entries, or all on the
    fastest wheel)."""
    mode = draw(st.integers(0, len(MODES) - 1))
    accuracy = draw(st.sampled_from(["best_possible", "estimate"]))
    strength = 10.0 ** draw(st.floats(0.0, 4.0))
    p = _vehicle(mode, accuracy, strength)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = p.n_wheels
    omega = rng.normal(0.0, 40.0, n) * (rng.uniform(size=n) < 0.85)
    if p.differential.type != "tank":                       # a tank's tracks are one spin
        if rng.uniform() < 0.3:
            omega[:] = omega[0]
        omega[rng.integers(n)] = rng.uniform(-1.0, 1.0) * 300.0
    else:
        omega = p.groups @ rng.normal(0.0, 40.0, 2)
    contact = rng.uniform(size=n) < 0.7
    gears = p.gearbox.forward_ratios * p.gearbox.final_ratio
    ratio = draw(st.sampled_from([0.0, p.gearbox.reverse_ratio * p.gearbox.final_ratio,
                                  *gears]))
    split = draw(st.sampled_from(["none", "random", "fastest"]))
    shares = np.full(n, np.nan)
    if split == "random" and p.differential.type != "tank":
        shares = rng.choice([np.nan, -1.0, 0.0, 1.0], n) * rng.uniform(0.0, 1.0, n)
    elif split == "fastest" and p.differential.type != "tank":
        shares[:] = 0.0
        shares[np.argmax(np.abs(omega) * (p.base_split > 0))] = 1.0
    return dict(
        mode=MODES[mode], accuracy=accuracy, strength=strength, omega=omega,
        engine_omega=rng.uniform(0.0, 1.1) * p.engine.max_omega,
        road=rng.normal(0.0, 2000.0, n) * contact, contact=contact,
        spring=rng.uniform(0.0, 3e4, n) * contact, throttle=draw(st.floats(0.0, 1.0)),
        ratio=ratio, thrust=rng.uniform(-1.0, 1.0, 2), shares=shares,
        h=draw(st.sampled_from([1e-3, 4e-3, 1 / 60, 0.04])))


def _spin(c):
    """One ``drivetrain.spin`` (the differential's shares, the torque_split override, the
    coupled solve, the drive torques) on the state ``c``, no brakes (they act afterwards, on
    the solved spins, and only remove spin). Returns the new wheel spins (rad/s), the drive
    torques (N m), the clutch torque (N m) and the clutch output speed (rad/s, engine side)."""
    p = _vehicle(MODES.index(c["mode"]), c["accuracy"], c["strength"])
    n = p.n_wheels
    ws, vs = np.zeros(n, L.WHEEL_STATE), np.zeros(1, L.VEHICLE_STATE)[0]
    cw = np.zeros(n, L.WHEEL_COMMANDS)
    s, g = np.zeros(n, L.SCRATCH), np.zeros(n, L.GROUP_SCRATCH)
    out = np.zeros(n, L.WHEEL_OUTPUTS)
    ws["omega"][:], vs["engine_omega"] = c["omega"], c["engine_omega"]
    cw["torque_split"][:] = c["shares"]
    s["road"] = c["road"]
    out["in_contact"][:], out["spring_force"][:] = c["contact"], c["spring"]
    t_eng, slip = drivetrain.spin(p.packed, ws, vs, cw, c["thrust"][0], c["thrust"][1],
                                  c["throttle"], c["ratio"], c["h"], s, g, out)
    e, engaged = p.engine, c["ratio"] != 0.0
    clutch = p.clutch.strength * slip if engaged else 0.0
    if c["accuracy"] == "best_possible":                  # the engine feels that clutch torque
        m_e = e.moi / c["h"] + engine.damping(
            e.damping_full_throttle, e.damping_zero_throttle_clutch_engaged,
            e.damping_zero_throttle_clutch_disengaged, c["throttle"], engaged)
        rhs = e.moi * c["engine_omega"] / c["h"] + t_eng
        assert m_e * vs["engine_omega"] + clutch == pytest.approx(rhs, rel=1e-9, abs=1e-6)
    return ws["omega"][:].copy(), ws["drive_torque"][:].copy(), clutch, vs["engine_omega"] - slip


@SETTINGS
@given(drivetrain_steps())
def test_the_wheels_never_get_more_power_than_the_clutch_passes(c):
    """Every differential mode, the commanded shares (Climb6x6's ``wheel_torques`` action)
    and the tank's thrusts, both clutch accuracies, any gear, up to past the rev limit: the
    power the drivetrain gives the wheels, ``sum(drive torque x new spin)``, never exceeds
    the clutch torque x its output speed (relative 1e-6). With speed weights other than the
    torque shares (the PhysX base split while torque vectoring, an LSD or ``torque_split``
    moves the torque) this failed by up to 170 % of the engine's work."""
    omega, drive, clutch, out_speed = _spin(c)
    wheels, passed = float(drive @ omega), clutch * out_speed
    scale = abs(clutch) * abs(out_speed) + float(np.abs(drive) @ np.abs(omega)) + 1e-12
    assert wheels - passed <= 1e-6 * scale, (wheels, passed)
    assert np.all(np.isfinite(omega))
    if c["ratio"] == 0.0:                                        # neutral: nothing passes
        assert np.all(drive == 0.0)


def _dense(p, w_e, w_g, inertia, damping, road, throttle, ratio, speed_weights, shares, h):
    """The coupled backward-Euler step (see ``drivetrain``) solved densely with numpy, clutch
    torque ``K (w_e - G sum(speed_weights w_g))``, group ``g`` driven by ``G shares_g`` of it.
    Returns the new spins ``[w_e, w_g...]`` (no limiter) and the clutch torque."""
    e = p.engine
    k = p.clutch.strength if ratio != 0.0 else 0.0
    t = engine.torque(e.peak_torque, e.max_omega, p.packed.torque_curve, throttle, w_e)
    d_e = engine.damping(e.damping_full_throttle, e.damping_zero_throttle_clutch_engaged,
                         e.damping_zero_throttle_clutch_disengaged, throttle, ratio != 0.0)
    m = np.diag(np.concatenate([[e.moi / h + d_e], inertia / h + damping]))
    u = np.concatenate([[1.0], -ratio * np.asarray(shares)])
    v = np.concatenate([[1.0], -ratio * np.asarray(speed_weights)])
    b = np.concatenate([[e.moi * w_e / h + t], inertia * w_g / h + road])
    x = np.linalg.solve(m + k * np.outer(u, v), b)
    return x, k * (v @ x)


@st.composite
def group_steps(draw):
    """Random groups (1-8, signed shares summing to 1 in magnitude), spins, inertias,
    damping, tyre torques, throttle, gear, clutch strength and step."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(1, 8))
    shares = rng.uniform(-0.3, 1.0, n) * (rng.uniform(size=n) < 0.8)
    if not shares.any():
        shares[0] = 1.0
    shares /= np.abs(shares).sum()
    p = vm.load_vehicle("truck_6x6")
    return dict(strength=10.0 ** rng.uniform(0.0, 4.0),
                w_e=rng.uniform(0.0, 1.0) * p.engine.max_omega,
                w_g=rng.normal(0.0, 50.0, n), inertia=rng.uniform(0.5, 100.0, n),
                damping=rng.uniform(0.05, 5.0, n), road=rng.normal(0.0, 3000.0, n),
                throttle=rng.uniform(), ratio=rng.choice([0.0, -25.0, 5.0, 25.0]),
                shares=shares, h=float(rng.choice([1e-3, 4e-3, 0.04])))


def _truck(strength, accuracy="best_possible", sweeps=5):
    return dataclasses.replace(vm.load_vehicle("truck_6x6"), clutch=vm.ClutchParams(
        strength=strength, accuracy=accuracy, estimate_iterations=sweeps))


def _solve(c, accuracy="best_possible", sweeps=5, brake=None):
    p = _truck(c["strength"], accuracy, sweeps)
    n = len(c["w_g"])
    out = np.full(n, np.nan)
    w_e, clutch, t_eng, slip = drivetrain.solve(
        p.packed.vehicle[0], p.packed.torque_curve, c["w_e"], c["w_g"], c["inertia"], c["damping"],
        c["road"], np.zeros(n) if brake is None else brake, c["throttle"], c["ratio"],
        c["shares"], c["h"], out)
    return w_e, clutch, t_eng, slip, out


def _dense_case(c):
    return _dense(_truck(c["strength"]), c["w_e"], c["w_g"], c["inertia"], c["damping"],
                  c["road"], c["throttle"], c["ratio"], c["shares"], c["shares"], c["h"])


@SETTINGS
@given(group_steps())
def test_implicit_solve_is_exact_and_the_estimate_converges_to_it(c):
    """``best_possible`` (Sherman-Morrison) gives the dense solution of the coupled equations
    to 1e-9 at any clutch strength; ``estimate`` (Gauss-Seidel on the same symmetric system)
    gets there too at the moderate strengths PhysX means it for (here up to 50 N m s/rad, the
    presets have 10-20) given sweeps enough (100, 1e-6; a hundredfold closer than 20 sweeps
    where light wheels at a long step couple strongly), and its few-sweep answer passes the
    wheels exactly the clutch's power at its output speed as well."""
    p = _truck(c["strength"])
    x, clutch = _dense_case(c)
    if not 0.0 < x[0] < p.engine.max_omega:
        return                                              # the limiter's case is tested apart
    scale = np.abs(x).max() + 1.0
    w_e, t_c, _, slip, w_g = _solve(c)
    np.testing.assert_allclose(np.concatenate([[w_e], w_g]), x, rtol=0, atol=1e-9 * scale)
    assert t_c == pytest.approx(clutch, rel=1e-9, abs=1e-9 * c["strength"] * scale)
    moderate = dict(c, strength=min(c["strength"], 50.0))
    x, _ = _dense_case(moderate)
    if 0.0 < x[0] < p.engine.max_omega:
        def error(sweeps):
            w_e, _, _, _, w_g = _solve(moderate, "estimate", sweeps)
            return np.abs(np.concatenate([[w_e], w_g]) - x).max()
        # strongly coupled draws (light wheels at a long step: K u^2 >> I/h) converge slowly:
        # there 100 sweeps (the most allowed) still cut the error of 20 a hundredfold
        assert error(100) <= max(1e-6 * (np.abs(x).max() + 1.0), 0.01 * error(20))
    w_e, t_c, _, slip, w_g = _solve(c, "estimate", 2)
    if not 0.0 < w_e < p.engine.max_omega:
        return
    wheels = float(c["ratio"] * t_c * c["shares"] @ w_g)
    assert wheels == pytest.approx(t_c * (w_e - slip), rel=1e-9, abs=1e-9 * abs(t_c) * scale)


def test_an_idle_unbraked_group_still_couples():
    """A group at rest with no tyre torque and no brake (a wheel in the air, at rest) has no
    pull at zero clutch torque, yet its row is linear in that torque: the exact solve must
    count it (it once left it out of the slope, so the one linear step missed the root; found
    by the energy test on an open 4wd sedan reversing at the rev limit)."""
    c = dict(strength=1.0, w_e=250.0, w_g=np.array([0.0, 0.0, 185.2, 0.0]),
             inertia=np.full(4, 1.089), damping=np.full(4, 0.25),
             road=np.array([-251.4, 0.0, 957.3, 276.1]), throttle=0.0, ratio=-14.8,
             shares=np.array([0.175, 0.175, 0.325, 0.325]), h=1e-3)
    x, clutch = _dense_case(c)
    w_e, t_c, _, _, w_g = _solve(c)
    np.testing.assert_allclose(np.concatenate([[w_e], w_g]), x, rtol=1e-12, atol=1e-9)
    assert t_c == pytest.approx(clutch, rel=1e-12)


@SETTINGS
@given(group_steps())
def test_one_implicit_step_never_gains_energy(c):
    """The step's energy balance (``drivetrain`` docstring): the engine's and the tyres' work
    over the step, ``h (T_engine w_e' + sum(T_road w_g'))``, pays for the change of spin
    energy, backward Euler's ``I/2 (x' - x)^2``, the damping ``h D x'^2`` and the clutch's
    ``h K slip^2``, to rounding; with brakes (Coulomb friction inside the solve) the brakes'
    ``h brake |w'|`` joins the losses and the balance still holds to rounding.
    At the rev limiter too: the engine's torque is then net of the limiter's cut and its spin
    the held one."""
    p, h = _truck(c["strength"]), c["h"]
    rng = np.random.default_rng(0)
    brake = rng.uniform(0.0, 5000.0, len(c["w_g"]))
    w_e, t_c, t_eng, slip, free = _solve(c)
    _, _, _, _, braked = _solve(c, brake=brake)
    e, i_g = p.engine, c["inertia"]
    d_e = engine.damping(e.damping_full_throttle, e.damping_zero_throttle_clutch_engaged,
                         e.damping_zero_throttle_clutch_disengaged, c["throttle"],
                         c["ratio"] != 0.0)
    work = h * (t_eng * w_e + c["road"] @ free)
    spin = e.moi / 2 * (w_e**2 - c["w_e"] ** 2) + i_g @ (free**2 - c["w_g"] ** 2) / 2
    losses = (e.moi / 2 * (w_e - c["w_e"]) ** 2 + i_g @ (free - c["w_g"]) ** 2 / 2
              + h * (d_e * w_e**2 + c["damping"] @ free**2) + h * t_c * slip)
    assert h * t_c * slip >= 0.0
    scale = abs(work) + abs(spin) + losses + 1e-9
    assert work - spin - losses == pytest.approx(0.0, abs=1e-9 * scale)
    # With brakes, inside the same solve: each group's row leaves the brake torque tau_g,
    # which is Coulomb friction (|tau| <= brake; the full brake against the spin where the
    # group turns), and the balance gains the brakes' h sum(brake |w'|) on the loss side.
    w_e, t_c, t_eng, slip, braked = _solve(c, brake=brake)
    tau = (c["inertia"] * c["w_g"] / h + c["road"] + c["ratio"] * c["shares"] * t_c
           - (c["inertia"] / h + c["damping"]) * braked)
    row = c["inertia"] / h * (np.abs(braked) + np.abs(c["w_g"])) + np.abs(c["road"]) + brake
    assert np.all(np.abs(tau) <= brake + 1e-9 * row)
    turning = braked != 0.0
    np.testing.assert_allclose(tau[turning], brake[turning] * np.sign(braked[turning]),
                               rtol=0, atol=1e-9 * row.max())
    work = h * (t_eng * w_e + c["road"] @ braked)
    spin = e.moi / 2 * (w_e**2 - c["w_e"] ** 2) + i_g @ (braked**2 - c["w_g"] ** 2) / 2
    losses = (e.moi / 2 * (w_e - c["w_e"]) ** 2 + i_g @ (braked - c["w_g"]) ** 2 / 2
              + h * (d_e * w_e**2 + c["damping"] @ braked**2) + h * t_c * slip
              + h * brake @ np.abs(braked))
    scale = abs(work) + abs(spin) + losses + 1e-9
    assert work - spin - losses == pytest.approx(0.0, abs=1e-9 * scale)


def test_speed_weights_other_than_the_shares_would_create_energy():
    """What the energy tests guard against, on the truck in its 3rd gear with the middle
    wheels in the air at 19 rad/s and the others at 5 (the crest): with all torque on a middle
    wheel and the clutch's speed weighting the six wheels equally, as PhysX's base split does,
    the wheel gets 2.7 times the power the clutch passes (the dense solve of those equations);
    with the shares as speed weights, exactly what it passes."""
    p = vm.load_vehicle("truck_6x6")
    w_g = np.array([5.0, 5.0, 19.0, 19.0, 5.0, 5.0])
    shares = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    ratio = p.gearbox.forward_ratios[2] * p.gearbox.final_ratio
    args = (p, 0.9 * p.engine.max_omega, w_g, p.wheels.moi, p.wheels.damping_rate,
            np.array([-2000.0, -2000.0, 0.0, 0.0, -2000.0, -2000.0]), 1.0, ratio)
    for weights, gain in ((np.full(6, 1 / 6), 2.68), (shares, 1.0)):
        x, clutch = _dense(*args, weights, shares, 0.004)
        wheels = ratio * clutch * shares @ x[1:]
        passed = clutch * ratio * weights @ x[1:]
        assert wheels / passed == pytest.approx(gain, rel=0.02)


def test_a_held_engine_never_drives_wheels_that_overrun_it():
    """Full throttle in first just under the rev limit, 25 Hz steps, the wheels (downhill)
    turning the clutch's output 1 % past the limit: solved unheld, the engine ends at
    604.56 rad/s, ahead of the output's 604.43, and the clutch would push the wheels (+1.3 N m)
    while the limiter holds the engine at 600, slower than they turn: energy from nowhere. The
    wheels are solved again against the held engine, so the clutch brakes them (negative
    torque, with the slip of the held engine) and dissipates ``strength x slip^2``."""
    p = dataclasses.replace(vm.load_vehicle("sedan_rwd"), clutch=vm.ClutchParams(strength=10.0))
    e, ratio, h = p.engine, p.gearbox.forward_ratios[0] * p.gearbox.final_ratio, 0.04
    shares = np.array([0.0, 0.0, 0.5, 0.5])
    w_g = np.full(4, 1.01 * e.max_omega / ratio)
    args = (p.wheels.moi, p.wheels.damping_rate, np.zeros(4))
    x, unheld = _dense(p, 0.99 * e.max_omega, w_g, *args, 1.0, ratio, shares, shares, h)
    assert x[0] > ratio * shares @ x[1:] > e.max_omega and unheld > 0.0
    out = np.zeros(4)
    w_e, clutch, t_eng, slip = drivetrain.solve(
        p.packed.vehicle[0], p.packed.torque_curve, 0.99 * e.max_omega, w_g, *args, np.zeros(4),
        1.0, ratio, shares, h, out)
    assert w_e == e.max_omega
    assert slip == pytest.approx(w_e - ratio * shares @ out, rel=1e-12)
    assert clutch == pytest.approx(p.clutch.strength * slip, rel=1e-12)
    assert clutch < 0.0 and clutch * slip > 0.0
    d_e = e.damping_full_throttle                     # the engine's equation at the held spin
    assert e.moi * (w_e - 0.99 * e.max_omega) / h == pytest.approx(
        t_eng - d_e * w_e - clutch, rel=1e-9)
