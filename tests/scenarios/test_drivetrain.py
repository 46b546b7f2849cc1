"""Drivetrain scenarios in MuJoCo: gears, autobox, differentials, 6x6 on crests, tank turns."""


import numpy as np
import pytest
from vehicle_variants import variant

from traction.envs import VehicleSim
from traction.scenes import build_scene
from traction.vehicle_model import VehicleConfigError, load_vehicle


def _yaw(sim):
    m = sim.data.xmat[sim.body]
    return np.arctan2(m[3], m[0])


def test_engine_and_wheel_speeds_follow_gear_ratio_at_top_speed():
    p = variant("sedan_rwd", gearbox={"autobox": 0.0})
    sim = VehicleSim(build_scene(p, "flat"))
    sim.state.set_gear(sim.params, 2)
    sim.set_commands(throttle=1.0)
    sim.step(int(10 / sim.dt))
    out = sim.outputs
    assert out.engine_omega[0] > 0.97 * p.engine.max_omega          # on the rev limiter
    wheel = sim.state.omega[0] @ p.base_split                       # driven (rear) wheels
    ratio = p.gearbox.forward_ratios[1] * p.gearbox.final_ratio
    assert out.engine_omega[0] == pytest.approx(wheel * ratio, rel=0.02)


def _run_gears(p, seconds, throttle=1.0, brake=0.0, sim=None):
    sim = sim or VehicleSim(build_scene(p, "flat"))
    sim.set_commands(throttle=throttle, brake=brake)
    gears, targets, neutral = [], [], 0
    for _ in range(int(seconds / sim.dt)):
        sim.substep()
        gears.append(int(sim.state.gearbox.gear[0]))
        targets.append(int(sim.state.gearbox.target[0]))
        neutral += sim.outputs.gear_ratio[0] == 0.0
    return sim, np.array(gears), np.array(targets), neutral * sim.dt / seconds


def test_autobox_shifts_up_through_every_gear_and_down_when_braking():
    p = load_vehicle("sedan_rwd")
    sim, gears, targets, _ = _run_gears(p, 12.0)
    changes = gears[np.flatnonzero(np.diff(gears)) + 1]
    assert list(changes) == [2, 3, 4, 5]                            # each gear once, in order
    sim, gears, targets, _ = _run_gears(p, 10.0, throttle=0.0, brake=1.0, sim=sim)
    assert np.all(np.diff(gears) <= 0) and gears[-1] == 1           # down to first, never up
    assert targets.min() >= 1                                       # never asked for neutral
    assert abs(sim.forward_speed()) < 0.01


def test_autobox_cuts_the_engine_torque_for_each_automatic_shift():
    """Full throttle from rest: four automatic upshifts, each in neutral for the 0.3 s switch
    time, and the engine gives no torque during them (the throttle cut); in gear below the rev
    limit it gives peak torque x the curve (> 0.7 x 500 N m)."""

    p = load_vehicle("sedan_rwd")
    sim = VehicleSim(build_scene(p, "flat"))
    sim.set_commands(throttle=1.0)
    shifting, torque_in_gear = [], []
    for _ in range(int(12.0 / sim.dt)):
        sim.substep()
        auto = bool(sim.state.gears[0]["auto_shift"])
        if auto:
            shifting.append(sim.outputs.engine_torque[0])
        elif sim.outputs.engine_omega[0] < 0.95 * p.engine.max_omega:
            torque_in_gear.append(sim.outputs.engine_torque[0])
    per_shift = p.gearbox.switch_time / sim.dt
    assert 4 * (per_shift - 1) <= len(shifting) <= 4 * (per_shift + 1)
    assert np.all(np.array(shifting) == 0.0)
    assert min(torque_in_gear) > 0.7 * p.engine.peak_torque


def test_autobox_setups_physx_warns_about_are_refused_and_the_shipped_one_only_shifts_up():
    """PhysX troubleshooting: with its default gear table (ratios halving, up 0.65 / down 0.5)
    each upshift lands below the down ratio, and with a latency below the switch time the
    autobox decides again on the engine slowed in neutral: the car drops straight back, 1 -> 2
    -> 1 -> 2 ... (the gearbox unit tests show that cycling). The simulator refuses both
    setups, naming the fields; the shipped gear table and latency (1 s > 0.3 s) only shift up.
    A 150 N m engine keeps the tyres from spinning, as in the PhysX case."""
    physx_table = {"forward_ratios": np.array([4.0, 2.0, 1.5, 1.1, 1.0]), "final_ratio": 4.0,
                   "up_ratios": np.full(5, 0.65), "down_ratios": np.full(5, 0.5)}
    weak = {"peak_torque": 150.0}
    with pytest.raises(VehicleConfigError, match=r"up_ratios\[0\] = 0.65: an up-shift from gear 1 "
                                                 r"leaves the engine at .* 0.325 of max_omega"):
        VehicleSim(build_scene(variant("sedan_rwd", gearbox=physx_table, engine=weak), "flat"))
    short_latency = {"switch_time": 0.5, "latency": 0.1}
    with pytest.raises(VehicleConfigError,
                       match=r"gearbox.latency = 0.1 s must exceed gearbox.switch_time = 0.5 s"):
        VehicleSim(build_scene(variant("sedan_rwd", gearbox=short_latency, engine=weak), "flat"))
    _, g_good, _, _ = _run_gears(variant("sedan_rwd", engine=weak), 20.0)
    assert np.count_nonzero(np.diff(g_good) < 0) == 0 and g_good.max() >= 3


def _split_friction_run(kind):
    """5 s at 0.7 throttle in first gear, the left wheels on ice. (At full throttle first gear
    puts 6.5 kN m on the rear axle, four times what the tarmac tyre holds: the limited-slip car
    spins its tarmac wheel too and, unsteered, yaws into donuts.)"""
    p = variant("sedan_rwd", differential={"kind": kind}, gearbox={"autobox": 0.0})
    sim = VehicleSim(build_scene(p, "flat", patches=[("ice", (0.0, 0.8), (400.0, 0.6))]))
    sim.set_commands(throttle=0.7)
    x0 = sim.com_position()[0]
    sim.step(int(5.0 / sim.dt))
    return sim.com_position()[0] - x0, sim.state.omega[0]


def test_open_differential_spins_the_ice_wheel_and_limited_slip_moves_the_car():
    d_open, w_open = _split_friction_run("open")
    d_lsd, _ = _split_friction_run("limited_slip")
    assert w_open[2] > 10 * w_open[3]                               # rear left (ice) spins
    assert d_lsd > 3 * d_open


def test_spool_turns_both_rear_wheels_at_one_speed_on_split_friction():
    """The locked rear axle (a spool) on the same split-friction launch: the ice wheel and the
    tarmac wheel are one shaft, so they turn at one speed at every step (exactly: one group's
    spin), the tarmac tyre takes the drive the ice one cannot, and the car moves at least as
    far as with the limited slip and well beyond the open differential."""
    d_open, _ = _split_friction_run("open")
    d_lsd, _ = _split_friction_run("limited_slip")
    d_spool, w = _split_friction_run("locked")
    assert w[2] == w[3] and w[2] > 0
    assert d_spool > 3 * d_open and d_spool > 0.9 * d_lsd


def _crest_run(diff_type):
    p = variant("truck_6x6", differential={"type": diff_type})
    sim = VehicleSim(build_scene(p, "crest", incline_deg=5.0))
    sim.step(250)
    assert not sim.outputs.in_contact[0, 2:4].any()                 # middle axle hangs
    x0 = sim.com_position()[0]
    sim.set_commands(throttle=1.0)
    spins = []
    for _ in range(100):                                            # 10 s
        sim.step(int(0.1 / sim.dt))
        spins.append(np.abs(sim.state.omega[0]))
    return sim.com_position()[0] - x0, np.mean(spins[50:], axis=0)  # mean |spin|, last 5 s


def test_six_by_six_equal_split_sticks_on_crests_torque_vectoring_crosses():
    """The middle axle hangs over the crest: with the equal split the torque goes where the
    road resists least, the middle wheels spin (touching the crest now and then, when the
    truck rocks) and the truck stays; torque vectoring (torque by suspension force) crosses."""
    progress_equal, omega_equal = _crest_run("multi_wheel")
    progress_tv, _ = _crest_run("torque_vectoring")
    assert progress_equal < 0.5
    assert omega_equal[2:4].min() > 10 * omega_equal[[0, 1, 4, 5]].max()    # middle spins
    assert progress_tv > 3.0 + 3.6                                  # the whole truck crossed


@pytest.mark.parametrize("mode", ["special", "standard"])
def test_tank_turns_on_the_spot_or_about_a_track(mode):
    p = variant("tank", differential={"tank_mode": mode})
    sim = VehicleSim(build_scene(p, "flat"))
    sim.set_commands(throttle=1.0, thrust=[[-1.0, 1.0]])
    sim.step(int(2.0 / sim.dt))                                     # spin up
    c0, yaw0 = sim.com_position(), _yaw(sim)
    seconds = 4.0
    turned, prev, halfway = 0.0, yaw0, None
    for k in range(int(seconds / sim.dt)):
        sim.substep()
        yaw = _yaw(sim)
        turned += (yaw - prev + np.pi) % (2 * np.pi) - np.pi
        prev = yaw
        if k == int(seconds / sim.dt) // 2:
            halfway = (turned, np.linalg.norm((sim.com_position() - c0)[:2]))
    rate = turned / seconds
    drift = np.linalg.norm((sim.com_position() - c0)[:2])
    # Driven tyres slip backwards on the ground, so neither track's contact moves faster than
    # its tread: the yaw rate stays below the no-slip rate (tread speeds' difference / track
    # centreline distance), and well above zero for tracks that grip.
    y = p.suspension.position[:, 1]
    left = y > np.mean(y)
    tread = sim.state.omega[0] * p.wheels.radius
    no_slip = (tread[~left].mean() - tread[left].mean()) / (y[left].mean() - y[~left].mean())
    assert 0.2 * abs(no_slip) < abs(rate) < abs(no_slip)
    if mode == "special":
        assert rate > 0.3                                           # rad/s, counter-clockwise
        assert drift < 1e-3                                         # m: turns on the spot
        np.testing.assert_allclose(sim.state.omega[0, :6], -sim.state.omega[0, 6:])
    else:
        assert rate > 0.15
        assert np.all(sim.state.omega[0, :6] == 0)                  # left track braked
        # turning about a point on the braked side: the CoM moves on a circle of radius R, a
        # chord 2 R sin(turned / 2) from the start, R the same halfway and at the end (2 %).
        # The braked track's friction cannot hold it against the driven one's thrust, so it
        # is dragged forward and the centre lies beyond it: h < R < 2 h, h the braked track's
        # distance from the CoM (measured: R = 1.7 h)
        left = p.suspension.position[:, 1] > 0
        h = np.mean(p.suspension.position[left, 1]) - p.chassis.com[1]
        radius = drift / (2 * abs(np.sin(turned / 2)))
        assert halfway[1] / (2 * abs(np.sin(halfway[0] / 2))) == pytest.approx(radius, rel=0.02)
        assert h < radius < 2 * h
        assert np.all(sim.state.omega[0, 6:] > 0)


# Torque split commands on the rear-drive sedan (its limited slip: a spool's wheels are one
# shaft): shares of undriven wheels are dropped and the rest renormalised; with no share left
# the differential's base split drives the wheels.
def _drive_torques(split, substeps=50):
    sim = VehicleSim(build_scene(variant("sedan_rwd", differential={"kind": "limited_slip"}),
                                 "flat"))
    sim.set_commands(throttle=1.0, torque_split=split)
    sim.step(substeps)
    return sim.outputs.drive_torque[0].copy()


def test_torque_split_drops_undriven_wheels_and_renormalises_the_rest():
    """[1, 1, 1, 3] on a rear-drive car: the fronts get nothing, the rears 1/4 and 3/4 of the
    drive torque, exactly as if the fronts' shares had not been given (NaN or 0)."""
    t = _drive_torques([1.0, 1.0, 1.0, 3.0])
    assert t[0] == 0.0 and t[1] == 0.0 and t[2] > 0
    assert t[3] / t[2] == pytest.approx(3.0, rel=1e-9)
    for same in ([np.nan, np.nan, 1.0, 3.0], [0.0, 0.0, 0.25, 0.75]):
        np.testing.assert_array_equal(_drive_torques(same), t)


@pytest.mark.parametrize("split", [[0.0, 0.0, 0.0, 0.0], [1.0, 1.0, np.nan, np.nan],
                                   [np.nan, np.nan, -1.0, 0.0]])
def test_torque_split_with_no_eligible_share_still_drives_the_car(split):
    """No positive share on a driven wheel: the differential's base split, so both rear wheels
    are driven (nothing at the fronts)."""
    t = _drive_torques(split)
    assert t[0] == 0.0 and t[1] == 0.0
    assert t[2] > 0 and t[3] > 0
