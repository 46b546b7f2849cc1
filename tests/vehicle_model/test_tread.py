"""The tyre's tread and its implicit step (tire_models) on a rig without MuJoCo: the vehicle
update of the sedan over a chassis that only translates (its velocity integrated here from the
update's wrench), at 30 Hz and at 2 ms."""

import dataclasses

import numpy as np
import pytest

from traction import vehicle_model as vm

G = 9.81


def _sedan(model="physx", **tire_kw):
    p = vm.load_vehicle("sedan")
    tires = dataclasses.replace(p.tires, model=np.full(4, float(vm.TIRE_MODELS.index(model))),
                                **{k: np.full(4, v) for k, v in tire_kw.items()})
    return dataclasses.replace(p, tires=tires)


def _rig(p, dt, seconds, v0=0.0, omega0=0.0, command=None, lateral=None):
    """Run the update at ``dt`` for ``seconds`` on a chassis that translates in the ground plane
    (level, the struts at rest: each tyre's load is its sprung weight), from ``v0`` (m/s) with
    wheels spinning at ``omega0`` (rad/s); ``command(t, cmd)`` sets the commands, ``lateral(t,
    v)`` may kick the velocity. Returns per step: velocity (3,), wheel spins (4,), patch slide
    (4, 2)."""
    state, cmd = vm.VehicleState.zeros(p), vm.Commands.zeros(p)
    state.omega[:] = omega0
    v = np.array([v0, 0.0, 0.0])
    rest = p.suspension.max_compression + 2 * p.wheels.radius       # the ray's length at rest
    hits = vm.GroundHits(rest[None].copy(), np.array([0.0, 0.0, 1.0]), np.zeros((1, 4), int))
    table = vm.FrictionTable.default()
    vel, spin, slide = [], [], []
    for k in range(int(round(seconds / dt))):
        t = k * dt
        if command is not None:
            command(t, cmd)
        if lateral is not None:
            lateral(t, v)
        kin = vm.ChassisKinematics(np.zeros((1, 3)), np.eye(3)[None], p.chassis.com[None],
                                   v[None].copy(), np.zeros((1, 3)))
        out = vm.step(p, state, kin, hits, cmd, table, dt, G)
        v[:2] += dt * out.wrench[0, :2] / p.chassis.mass
        vel.append(v.copy())
        spin.append(state.omega[0].copy())
        slide.append(out.patch_slide[0].copy())
    return np.array(vel), np.array(spin), np.array(slide)


@pytest.mark.parametrize("dt", [0.002, 1 / 30])
def test_a_wheel_spinning_on_a_stopped_car_pushes_it_without_overshooting(dt):
    """Every wheel spun to 30 rad/s under a car at rest, no drive, no brake, no bearing drag: the
    road force pushes the car and spins the wheels down until they roll. The force acts on
    both, so ``m v + sum(I omega) / r`` is conserved and they meet at ``v = sum(I) omega_0 /
    r / (m + sum(I) / r^2)``, at 30 Hz as at 2 ms. The slide ``v - omega r`` changes sign
    once at most, by a few hundredths of the spin's: as the wheel reaches rolling the tread,
    stretched by the sliding force (grip 3: 2 cm), springs back, and the slide dies out
    without a second flip (the explicit tyre needed friction clamps not to chatter)."""
    p = _sedan("curve", grip=3.0)
    p = dataclasses.replace(p, wheels=dataclasses.replace(p.wheels,
                                                          damping_rate=np.full(4, 1e-9)))
    m, r, inertia = p.chassis.mass, p.wheels.radius[0], p.wheels.moi.sum()
    vel, spin, slide = _rig(p, dt, 1.5, omega0=30.0)
    momentum = inertia * 30.0 / r
    s = slide[:, :, 0]
    assert np.all(np.count_nonzero(s[1:] * s[:-1] < -1e-18, axis=0) <= 1)
    assert s.max() < 0.03 * 30.0 * r
    np.testing.assert_allclose(m * vel[:, 0] + inertia * spin.mean(axis=1) / r, momentum,
                               rtol=1e-6)
    assert vel[-1, 0] == pytest.approx(momentum / (m + inertia / r**2), rel=2e-3)
    assert np.abs(slide[-1, :, 0]).max() < 2e-3


@pytest.mark.parametrize("model, grip, locked", [("curve", 3.0, 0.75), ("curve", 1.0, 0.75),
                                                 ("physx", 1.0, 1.0)])
def test_locked_wheels_slide_to_the_coulomb_distance_at_30_hz(model, grip, locked):
    """Brakes that lock every wheel (10x the sedan's), from 20 m/s at 30 Hz: the car slides
    ``v^2 / (2 mu_lock g)`` (curve tyres: 0.75 x grip locked; grip 3 slid 26 m against 9.1 m
    when the clamps bounded the force as if it also spun the locked wheel up) and stops in
    ``v / (mu_lock g)``, within 5 % and 10 % plus a step (measured: +1 to +3 %, +4 to +10 %:
    the tread builds its force over the first step); no wheel turns, and the car is at rest a
    second later (the tread, stretched by the sliding force, springs back a few centimetres
    first: 1.5 cm at grip 3)."""
    p = _sedan(model, grip=grip)
    p = dataclasses.replace(p, wheels=dataclasses.replace(p.wheels,
                                                          max_brake_torque=np.full(4, 15000.0)))
    dt, mu = 1 / 30, locked * grip

    def brake(t, cmd):
        cmd.brake = 1.0
    vel, spin, _ = _rig(p, dt, 6.0 / mu, v0=20.0, omega0=0.0, command=brake)
    stop = np.argmax(vel[:, 0] < 0.01)
    distance = np.sum(vel[:stop + 1, 0]) * dt
    assert distance == pytest.approx(20.0**2 / (2 * mu * G), rel=0.05)
    assert abs((stop + 1) * dt - 20.0 / (mu * G)) <= 0.10 * 20.0 / (mu * G) + dt
    assert np.all(spin == 0.0)
    assert np.abs(vel[stop + 30:, 0]).max() < 0.01


def test_launch_and_a_sideways_kick_at_30_hz_with_triple_grip_do_not_chatter():
    """Curve tyres of grip 3 at 30 Hz, the rear wheels driven hard (1500 N m each), then the
    car kicked sideways at 1.5 m/s: the longitudinal and the lateral slide of each wheel change
    sign twice at most (the tread springing back once the slide stops) instead of every step,
    and the kick dies out."""
    p = _sedan("curve", grip=3.0)

    def drive(t, cmd):
        cmd.wheel_torque = [0.0, 0.0, 1500.0, 1500.0] if t < 2.0 else 0.0

    def kick(t, v):
        if abs(t - 2.0) < 1e-9:
            v[1] = 1.5
    vel, _, slide = _rig(p, 1 / 30, 4.0, command=drive, lateral=kick)
    for j in range(2):                       # sign changes of slides over 1 mm/s
        s = np.sign(np.where(np.abs(slide[:, :, j]) < 1e-3, 0.0, slide[:, :, j]))
        assert np.all(np.count_nonzero(s[1:] * s[:-1] < 0, axis=0) <= 2)
    assert vel[59, 0] > 10.0 and abs(vel[-1, 1]) < 1e-3


def test_tread_deflection_is_state_and_holds_its_force():
    """The tread's deflection is state (``VehicleState.tread_deflection``): a parked, braked car
    whose treads are deflected 1 mm to the right pulls to the left with the spring's force
    (``tread_stiffness_lat`` x rest load x 1 mm), less what the chassis's expected give takes
    off over the step (``c u / (1 + (c h + d) h / m_u)``: 0.85-0.9 of it at 2 ms), and the
    patch stays where it is (the deflection is kept, to the damper's small give)."""
    p = _sedan()
    state, cmd = vm.VehicleState.zeros(p), vm.Commands.zeros(p)
    cmd.brake = 1.0
    state.tread_deflection[..., 1] = -1e-3
    rest = p.suspension.max_compression + 2 * p.wheels.radius
    hits = vm.GroundHits(rest[None].copy(), np.array([0.0, 0.0, 1.0]), np.zeros((1, 4), int))
    kin = vm.ChassisKinematics(np.zeros((1, 3)), np.eye(3)[None], p.chassis.com[None],
                               np.zeros((1, 3)), np.zeros((1, 3)))
    out = vm.step(p, state, kin, hits, cmd, vm.FrictionTable.default(), 0.002, G)
    c_lat = p.tires.tread_stiffness_lat * p.suspension.sprung_mass * G
    ratio = out.lat_force[0] / (-1e-3 * c_lat)
    assert np.all((0.8 < ratio) & (ratio < 0.95))
    np.testing.assert_allclose(state.tread_deflection[0, :, 1], -1e-3, rtol=0.01)
