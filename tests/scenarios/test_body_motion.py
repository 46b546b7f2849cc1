"""How the body moves on its suspension, with analytic expectations: tyre-force pitch and roll
scaling (braking dive, steady-turn roll), bump stops under a load the springs cannot carry,
mirrored camber, and the suspension force's direction."""

import dataclasses

import mujoco
import numpy as np
import pytest
from body_measures import body_roll, roll_lever, spring_roll_stiffness, steady_turn, weight_lever

from traction import vehicle_model as vm
from traction.envs import VehicleSim
from traction.scenes import build_scene
from traction.vehicle_model import load_vehicle

G = 9.81


def _scaled(pitch=1.0, roll=1.0, preset="sedan"):
    p = vm.load_vehicle(preset)
    return dataclasses.replace(p, tire_force_scaling=vm.TireForceScaling(pitch=pitch, roll=roll))


def _axle_loads(sim):
    """Front and rear axle suspension forces (N)."""
    f = sim.outputs.spring_force[0]
    return f[:2].sum(), f[2:].sum()


def _pitch(sim):
    """Body pitch (rad), nose down positive: minus the z component of the chassis x axis."""
    return float(-sim.data.xmat[sim.body].reshape(3, 3)[2, 0])


def _steady_braking(params, brake=0.3, v0=20.0):
    """Mean deceleration (m/s^2), front-axle load gain (N) and pitch (rad) over 0.5-1.5 s of a
    steady brake from ``v0`` (wheels rolling, not locked)."""
    sim = VehicleSim(build_scene(params, "flat"))
    sim.step(500)                                                # settle 1 s
    front0, _ = _axle_loads(sim)
    sim.reset(velocity=[v0, 0, 0])
    sim.state.omega[:] = v0 / params.wheels.radius
    sim.set_commands(brake=brake)
    sim.step(int(0.5 / sim.dt))
    v1, gains, pitches = sim.forward_speed(), [], []
    for _ in range(int(1.0 / sim.dt)):
        sim.substep()
        gains.append(_axle_loads(sim)[0] - front0)
        pitches.append(_pitch(sim))
    assert np.all(sim.state.omega > 0)                           # rolling: a steady tyre force
    return v1 - sim.forward_speed(), float(np.mean(gains)), float(np.mean(pitches))


def _wheelbase(p):
    x = p.suspension.position[:, 0]
    return x[:2].mean() - x[2:].mean()


def test_pitch_scaling_scales_the_braking_load_transfer():
    """Braking at a: the tyre forces act at the contact patches, h below the CoM (over the
    ground), and pitch the body nose down with m a h, so the front axle gains a rigid car's
    m a h / L. Keeping a share ``pitch`` of that moment keeps that share of the transfer, and
    none of it leaves the body level (the talk's trick for grip without wallowing); the
    braking itself is the same."""
    p = vm.load_vehicle("sedan")
    m, h, h_w = p.chassis.mass, roll_lever(p), weight_lever(p)
    assert h == pytest.approx(p.chassis.com[2] + p.wheels.radius.mean())   # over the ground
    wheelbase = _wheelbase(p)
    gains, decels = {}, []
    for keep in (1.0, 0.5, 0.0):
        a, gain, pitch = _steady_braking(_scaled(pitch=keep))
        assert a > 3.0                                           # m/s^2, a real stop
        decels.append(a)
        # plus m g h_w pitch: the nose-down pitch carries the suspension force points (the
        # wheel centres, h_w below the CoM) h_w pitch back under it, so the weight's normal
        # forces shift forward too (1.2 % here)
        expected = (keep * m * a * h + m * G * pitch * h_w) / wheelbase
        assert gain == pytest.approx(expected, rel=0.01, abs=1.0)
        gains[keep] = gain / a
        if keep == 0.0:
            assert abs(pitch) < 1e-4                             # rad: no dive at all
        else:
            assert pitch > 0.002                                 # dives, nose down
    assert gains[0.5] / gains[1.0] == pytest.approx(0.5, rel=0.02)
    assert max(decels) - min(decels) < 1e-3 * max(decels)


def test_tyre_forces_at_the_wheel_centre_transfer_less_than_a_rigid_car():
    """The tyre force point decides the braking load transfer. At the default, the contact
    patch (``tire_force_height`` 0), the front axle gains the rigid car's m a h / L, h the CoM
    over the ground (within 1 %; plus the dive's weight shift, see above); at the wheel centre
    (``tire_force_height`` = r, PhysX's starting point) only m a (h - r) / L, since the brake
    torque's reaction on the chassis, which would pass the rest on, is not modelled: 43 % of it
    for the sedan (its transfer before the force point moved to the patch)."""
    p = vm.load_vehicle("sedan")
    r = p.wheels.radius
    centre = dataclasses.replace(p, suspension=dataclasses.replace(p.suspension,
                                                                    tire_force_height=r))
    h_ground, h_w = roll_lever(p), weight_lever(p)
    assert roll_lever(centre) == pytest.approx(h_ground - r.mean())
    for params in (p, centre):
        a, gain, pitch = _steady_braking(params)
        rigid = p.chassis.mass * a * h_ground / _wheelbase(p)
        expected = (p.chassis.mass * a * roll_lever(params)
                    + p.chassis.mass * G * pitch * h_w) / _wheelbase(p)
        assert gain == pytest.approx(expected, rel=0.01)
        assert gain / rigid == pytest.approx(roll_lever(params) / h_ground, rel=0.03)
    assert roll_lever(centre) / h_ground == pytest.approx(0.43, abs=0.01)


def test_roll_scaling_scales_the_steady_turn_roll():
    """Steady turn: roll phi = keep m a_y h / (K - m g h_w), h the CoM over the contact patches,
    where the tyre forces act, and h_w over the wheel centres, where the suspension forces act:
    rolled by phi, the body carries them h_w phi across under the CoM. The tyre forces' roll
    moment is the only thing scaled; that m g h_w phi is not."""
    p = vm.load_vehicle("sedan")
    m, h, h_w, k = p.chassis.mass, roll_lever(p), weight_lever(p), spring_roll_stiffness(p)
    for keep in (1.0, 0.5, 0.0):
        roll, ay = steady_turn(_scaled(roll=keep))
        assert ay > 2.0
        assert roll == pytest.approx(keep * m * ay * h / (k - m * G * h_w), rel=0.03, abs=1e-5)


def test_scaling_leaves_yaw_alone():
    """The removed moment has no yaw part: the steady turn's lateral acceleration (v x yaw
    rate) is the same with and without pitch and roll scaling (1 %)."""
    _, ay_full = steady_turn(_scaled())
    _, ay_none = steady_turn(_scaled(pitch=0.0, roll=0.0))
    assert ay_none == pytest.approx(ay_full, rel=0.01)


def _loaded(bump_stop, spring=8000.0):
    """The sedan with soft springs and half the sprung masses: the struts' preload carries half
    the weight and the springs must carry the other half (more than they can at max compression
    if ``spring`` x max_compression < m_s g / 2)."""
    p = vm.load_vehicle("sedan")
    s = p.suspension
    return dataclasses.replace(p, suspension=dataclasses.replace(
        s, sprung_mass=s.sprung_mass / 2, spring_strength=np.full(4, spring),
        bump_stop_stiffness=np.full(4, bump_stop)))


def _settled(params, seconds=4.0):
    sim = VehicleSim(build_scene(params, "flat"))
    sim.set_commands(brake=1.0)
    sim.step(int(seconds / sim.dt))
    return sim


def test_bump_stops_carry_the_load_past_max_compression():
    """Each wheel needs m_s g more than its preload; past max compression the spring gives
    k c_max and the bump stop b x the rest: overtravel (m_s g - k c_max) / b. The body sits
    lower than at rest by c_max + overtravel at each axle (interpolated at the CoM)."""
    b = 1e5
    ref = _settled(vm.load_vehicle("sedan"))
    p = _loaded(bump_stop=b)
    sim = _settled(p)
    s = p.suspension
    need = s.sprung_mass * G                                     # N per wheel beyond the preload
    assert np.all(s.spring_strength * s.max_compression < need)
    np.testing.assert_allclose(sim.outputs.jounce[0], s.max_compression)
    assert sim.outputs.spring_force[0].sum() == pytest.approx(p.chassis.mass * G, rel=1e-3)
    over = (need - s.spring_strength * s.max_compression) / b
    drop = s.max_compression + over
    x = s.position[:, 0]
    t = (p.chassis.com[0] - x[2:].mean()) / (x[:2].mean() - x[2:].mean())
    expected = drop[2:].mean() + t * (drop[:2].mean() - drop[2:].mean())
    assert ref.com_position()[2] - sim.com_position()[2] == pytest.approx(expected, abs=5e-4)
    assert sim.data.ncon == 0                                    # the body never touches down


def test_without_bump_stops_the_body_rests_on_its_collision_shape():
    """The same load with no bump stop: the struts stop at max compression and the chassis
    box carries the rest on the ground (as PhysX leaves it to the rigid body's shapes)."""
    p = _loaded(bump_stop=0.0)
    sim = _settled(p)
    assert sim.data.ncon > 0
    assert sim.outputs.spring_force[0].sum() < 0.9 * p.chassis.mass * G
    # the box bottom's height above the ground at rest (0.18 m; the chassis frame's origin is
    # at the wheel centres, one radius up): the body sits that much lower
    clearance = p.chassis.body_centre[2] - p.chassis.body_size[2] / 2 + p.wheels.radius[0]
    ref = _settled(vm.load_vehicle("sedan"))
    assert ref.com_position()[2] - sim.com_position()[2] == pytest.approx(clearance, abs=0.005)


def test_mirrored_camber_brakes_straight():
    """The sedan's camber changes with jounce, mirrored on the right side (tops in when
    compressed): under braking dive both front wheels tilt and their camber thrusts cancel, so
    the car neither drifts nor yaws. (Unmirrored, the same values pulled it 0.15 mm aside.)
    Pedal 0.4 (6.5 m/s^2): no wheel locks. At 0.5 the dive unloads the rear tyres below their
    brakes' 750 N m (2.1 kN each: 690 N m) and the rear wheels lock, and a car on locked rear
    wheels is unstable in yaw: it grows the rounding-level difference of the two sides to
    1.6 um aside in 4 s."""
    p = vm.load_vehicle("sedan")
    s = p.suspension
    left = s.position[:, 1] > 0
    np.testing.assert_array_equal(s.camber_at_max_compression[left],
                                  -s.camber_at_max_compression[~left])
    assert np.all(s.camber_at_max_compression != 0)
    sim = VehicleSim(build_scene(p, "flat"))
    sim.reset(velocity=[20, 0, 0])
    sim.state.omega[:] = 20 / p.wheels.radius
    sim.set_commands(brake=0.4)
    y0 = sim.com_position()[1]
    sim.step(1000)
    camber = sim.outputs.camber[0]
    assert abs(camber[0]) > 1e-4 and camber[0] == pytest.approx(-camber[1])
    assert abs(sim.com_position()[1] - y0) < 1e-6                # m, over ~30 m
    assert abs(sim.data.qvel[5]) < 1e-6
    assert abs(body_roll(sim)) < 1e-6


@pytest.mark.parametrize("terrain,kw", [("flat", {}), ("slope", {"angle_deg": 10.0})])
def test_suspension_forces_act_along_the_ground_normal_however_the_body_tilts(terrain, kw):
    """Body pitched 3 deg and rolled 2 deg against the ground: each wheel's suspension force
    lies along its ray's hit normal (so it has no part in the ground plane to push the body
    along), with the reported magnitude."""
    p = vm.load_vehicle("sedan")
    sim = VehicleSim(build_scene(p, terrain, **kw))
    tilt = np.zeros(4)
    mujoco.mju_euler2Quat(tilt, np.radians([2.0, 3.0, 0.0]), "xyz")
    quat = np.zeros(4)
    mujoco.mju_mulQuat(quat, sim.scene.spawn_quat, tilt)
    sim.reset(quat=quat)
    normal = sim.gather()[1].normal[0]                           # what the update will see
    sim.substep()
    out = sim.outputs
    assert out.in_contact.all()
    np.testing.assert_allclose(np.linalg.norm(normal, axis=1), 1.0, rtol=1e-9)
    force = out.susp_force[0]
    np.testing.assert_allclose(force, normal * out.spring_force[0][:, None], rtol=1e-12, atol=1e-9)
    axis_z = sim.data.xmat[sim.body].reshape(3, 3)[:, 2]        # not the chassis up axis
    assert np.all(np.abs(normal @ axis_z) < np.cos(np.radians(2.0)))


# A suspension with more droop than compression rests where one with
# equal travel does.
def test_unequal_suspension_travel_rests_at_zero_jounce_at_the_same_height():
    """The ray starts at the top of the tyre at max compression: with 0.08 m compression and
    0.25 m droop the sedan still rests on its springs at zero jounce, at the body height of
    the preset (0.15 m each way)."""
    p = load_vehicle("sedan")
    q = dataclasses.replace(p, suspension=dataclasses.replace(
        p.suspension, max_compression=np.full(4, 0.08), max_droop=np.full(4, 0.25)))
    heights = []
    for v in (p, q):
        sim = VehicleSim(build_scene(v, "flat"))
        sim.step(1000)                                   # 2 s
        assert np.all(sim.outputs.in_contact)
        np.testing.assert_allclose(sim.outputs.jounce, 0.0, atol=1e-3)
        heights.append(sim.com_position()[2])
    assert abs(heights[1] - heights[0]) < 1e-3
