"""Load transfer and steady-state handling against closed forms: braking (front-axle gain
m a h / L), the skidpad (side-to-side m a_y h / t), the tilt table (the static stability angle
atan(t / 2h)) and the understeer gradient (delta = L / R + K a_y).

h is the CoM's height over the ground: the tyre forces act at the contact patches (see
``suspension.tire_force_height``), so the transfer is a rigid car's, plus what the body's own
pitch or roll on its springs adds (its weight shifts over the wheels: m g h_w phi, h_w the CoM
over the suspension force points, the wheel centres)."""


import mujoco
import numpy as np
import pytest
from body_measures import roll_lever, skidpad, understeer_gradient, weight_lever

from traction import vehicle_model as vm
from traction.envs import VehicleSim
from traction.scenes import build_scene, names

G = 9.81
SEDANS = ("sedan", "sedan_rwd")


def _axles(params):
    """Front-axle wheel mask, the distance L (m) from the front to the rear axle and the track
    t (m)."""
    pos = params.suspension.position
    front = pos[:, 0] == pos[:, 0].max()
    return front, pos[:, 0].max() - pos[:, 0].min(), pos[:, 1].max() - pos[:, 1].min()


def _pitch(sim):
    """Body pitch (rad), nose down positive."""
    return float(-sim.data.xmat[sim.body].reshape(3, 3)[2, 0])


def _braking(params, brake, v0=20.0):
    """Mean deceleration (m/s^2), front-axle load gain (N) and pitch (rad) over 1-2 s of a
    brake from ``v0`` on flat ground (after the dive's overshoot). An engine vehicle brakes in
    top gear, its engine turning with the wheels, as a car driven at ``v0`` is (in first gear,
    where a reset puts it, the wheels would drag the engine far past its limiter: the truck's
    tyres then brake at their friction limit, 1 g, and it stands on its front bump stops with
    its rear axle in the air, outside what the closed forms describe)."""
    sim = VehicleSim(build_scene(params, "flat"))
    sim.set_commands(brake=1.0)
    sim.step(500)                                                # settle 1 s
    front, _, _ = _axles(params)
    rest = sim.outputs.spring_force[0][front].sum()
    sim.reset(velocity=[v0, 0, 0])
    sim.state.omega[:] = v0 / params.wheels.radius
    if params.differential.has_engine:
        top = params.gearbox.n_forward
        sim.state.set_gear(params, top)
        sim.state.engine_omega[:] = v0 / params.wheels.radius.mean() * (
            params.gearbox.forward_ratios[top - 1] * params.gearbox.final_ratio)
    sim.set_commands(brake=brake)
    sim.step(500)
    v1, gains, pitches = sim.forward_speed(), [], []
    for _ in range(500):
        sim.substep()
        gains.append(sim.outputs.spring_force[0][front].sum() - rest)
        pitches.append(_pitch(sim))
    return v1 - sim.forward_speed(), float(np.mean(gains)), float(np.mean(pitches))


@pytest.mark.parametrize("preset, brake", [("sedan", 0.3), ("sedan_rwd", 0.2), ("truck_6x6", 0.2)])
def test_braking_moves_a_rigid_cars_load_onto_the_front_axle(preset, brake):
    """The front axle gains m a h / L (L front to rear axle: the truck's middle axle sits
    under the CoM and takes none) plus the dive's weight shift m g h_w pitch / L (within 1.5 %).
    The sedans' gain is within 5 % of the rigid car's alone (1.2-1.6 % more: they dive 1 deg
    at 0.5 g); the truck's soft springs let it dive 1.8 deg at 0.34 g, and it gains 6.1 % more
    than the rigid truck. (With the tyre forces at the wheel centres, PhysX's starting point,
    the sedans gained 43 % of the rigid car's, the truck 56 %.)"""
    p = vm.load_vehicle(preset)
    _, wheelbase, _ = _axles(p)
    m, h, h_w = p.chassis.mass, roll_lever(p), weight_lever(p)
    assert h == pytest.approx(p.chassis.com[2] + p.wheels.radius.mean())     # over the ground
    a, gain, pitch = _braking(p, brake)
    assert a > 3.0                                               # m/s^2, a real stop
    rigid = m * a * h / wheelbase
    assert gain == pytest.approx(rigid + m * G * h_w * pitch / wheelbase, rel=0.015)
    if preset in SEDANS:
        assert gain == pytest.approx(rigid, rel=0.05)


@pytest.mark.parametrize("preset", SEDANS)
def test_skidpad_moves_a_rigid_cars_load_to_the_outer_wheels(preset):
    """Steady circle of 40 m at a_y = 1-4 m/s^2: the outer wheels gain what the inner ones
    lose, in all m a_y h / t, t the track, plus the roll's weight shift m g h_w phi / t
    (within 1 %); within 5 % of the rigid car's alone (the sedan 4.3 %, sedan_rwd with its
    anti-roll bars 3.1 %)."""
    p = vm.load_vehicle(preset)
    _, _, track = _axles(p)
    m, h, h_w = p.chassis.mass, roll_lever(p), weight_lever(p)
    left = p.suspension.position[:, 1] > 0                      # inside of the left turn
    for ay in (1.0, 4.0):
        _, a_y, _, roll, loads = skidpad(p, 40.0, np.sqrt(ay * 40.0))
        assert a_y == pytest.approx(ay, rel=0.02)
        transfer = (loads[~left].sum() - loads[left].sum()) / 2
        rigid = m * a_y * h / track
        assert transfer == pytest.approx(rigid + m * G * h_w * roll / track, rel=0.01)
        assert transfer == pytest.approx(rigid, rel=0.05)


def _tilt_table(params, rate_deg=0.5, chunk=0.02, stop_deg=60.0):
    """Tilt the flat ground about the world x axis under the braked vehicle's centre line
    (its left side up) by ``rate_deg`` per second. Returns the table angle (rad) at which the
    uphill wheels' loads all reached zero, the body's roll relative to the table (rad) and the
    CoM's height over the table (m) then, the table angle at which the body had rolled 30
    deg past the table, and how far (m) the body moved along the table before the lift-off
    (its point under the chassis origin at ground level, which the tyres hold: the body rolls
    about it)."""
    sim = VehicleSim(build_scene(params, "flat"))
    model = sim.model
    ground = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, names.GROUND)
    model.geom_sameframe[ground] = 0                            # read geom_quat from now on
    uphill = params.suspension.position[:, 1] > 0
    sim.set_commands(brake=1.0)
    sim.step(1000)                                               # settle 2 s on the flat
    base = np.array([0.0, 0.0, -params.wheels.radius.mean()])  # chassis frame, on the ground

    def on_table(theta):
        """The base point in the table's frame (x, across the slope uphill, up)."""
        axes = sim.data.xmat[sim.body].reshape(3, 3)
        point = sim.chassis_position() + axes @ base
        return np.array([point[0], point[1] * np.cos(theta) + point[2] * np.sin(theta)])

    theta, lift = 0.0, None
    start = on_table(theta)
    while theta < np.radians(stop_deg):
        theta += np.radians(rate_deg) * chunk
        model.geom_quat[ground] = [np.cos(theta / 2), np.sin(theta / 2), 0.0, 0.0]
        sim.step(int(round(chunk / sim.dt)))
        normal = np.array([0.0, -np.sin(theta), np.cos(theta)])     # table up
        body_y = sim.data.xmat[sim.body].reshape(3, 3)[:, 1]
        roll = np.arcsin(body_y @ normal)                        # downhill (right) side down
        if lift is None and np.all(sim.outputs.spring_force[0][uphill] <= 0.0):
            moved = float(np.linalg.norm(on_table(theta) - start))
            lift = (theta, roll, float(sim.com_position() @ normal), moved)
        if roll > np.radians(30.0):
            return (*lift, theta)
    raise AssertionError(f"no rollover up to {stop_deg} deg (lift-off: {lift})")


def test_truck_on_a_tilt_table_tips_near_its_static_stability_angle():
    """The truck on a table tilted slowly sideways (0.5 deg/s) lifts its uphill wheels within
    10 % of the rigid vehicle's static stability angle atan(t / 2h) (38.7 deg; at 36.2 deg:
    its body rolls 6.8 deg on its springs and shifts its weight h_w phi downhill, so
    tan(theta) = (t / 2 - h_w phi) / h, within 1 %) and rolls over soon after, without
    sliding before (the tyres' treads hold it: under 5 cm). With the tyre forces at the
    wheel centres it lifted at 54 deg, the rollover lever being 0.7 m instead of 1.25 m."""
    p = vm.load_vehicle("truck_6x6")
    _, _, track = _axles(p)
    h, h_w = roll_lever(p), weight_lever(p)
    static = np.arctan(track / (2 * h))
    lift, roll, height, moved, over = _tilt_table(p)
    assert lift == pytest.approx(static, rel=0.10)
    assert height == pytest.approx(h, rel=0.03)                  # m, CoM over the table
    assert np.tan(lift) == pytest.approx((track / 2 - h_w * roll) / height, rel=0.01)
    assert over - lift < np.radians(3.0)                         # it falls over
    assert moved < 0.05                                          # m: it did not slide first


def _understeer(params, radius=40.0, lateral=(0.5, 1.0, 1.5, 2.0)):
    """Understeer gradient (rad per m/s^2): the slope of delta - L / R against a_y on a
    skidpad of ``radius`` at the ``lateral`` accelerations (m/s^2), R the path radius."""
    _, wheelbase, _ = _axles(params)
    points = [skidpad(params, radius, np.sqrt(ay * radius)) for ay in lateral]
    a_y = np.array([q[1] for q in points])
    excess = np.array([q[0] - wheelbase / q[2] for q in points])
    assert np.all(np.abs(np.array([q[2] for q in points]) / radius - 1.0) < 0.01)
    return float(np.polyfit(a_y, excess, 1)[0])


@pytest.mark.parametrize("preset", SEDANS)
def test_sedans_understeer_a_little_on_the_skidpad(preset):
    """Steady constant-radius runs (40 m) at 0.5-2 m/s^2: the front wheels steer beyond
    Ackermann's L / R by K a_y, K = 1-4 deg/g (measured 2.1 deg/g), as the bicycle model of
    the presets' front and rear cornering stiffness per unit load gives (1.7 deg/g; the PhysX
    curve bends from zero slip, +10 %, and the load transfer takes some more from the lighter,
    stiffer rear: within 30 %). With one stiffness on every tyre (PhysX's cornering stiffness
    being proportional to the rest load) the same car steers neutrally."""
    p = vm.load_vehicle(preset)
    k = _understeer(p)
    assert 1.0 <= np.degrees(k) * G <= 4.0                       # deg/g
    assert k == pytest.approx(understeer_gradient(p), rel=0.3)
    tires = p.tires
    neutral = vm.VehicleParams(**{**p.__getstate__(), "tires": type(tires)(**{
        **{f: getattr(tires, f) for f in tires.__dataclass_fields__},
        "lat_stiff_y": np.full(p.n_wheels, 17.95)})})
    assert understeer_gradient(neutral) == 0.0
    assert abs(np.degrees(_understeer(neutral)) * G) < 0.2


def _sideways_flips(params, dt=0.004):
    """Most sign flips of one contact patch's sideways slide (beyond 2 mm/s) in one run, and
    the largest slide at the end (m/s), while the vehicle, launched sideways at 0.8 m/s (and
    forward at 0, 1, 2 m/s), slides to rest for 2 s at ``dt``."""
    flips, last = 0, 0.0
    for forward in (0.0, 1.0, 2.0):
        sim = VehicleSim(build_scene(params, "flat", physics_dt=dt))
        sim.step(250)
        sim.reset(velocity=[forward, 0.8, 0.0])
        sim.state.omega[:] = forward / params.wheels.radius
        slide = []
        for _ in range(int(round(2.0 / dt))):
            sim.substep()
            slide.append(sim.outputs.patch_slide[0][:, 1].copy())
        slide = np.array(slide)
        sign = np.sign(np.where(np.abs(slide) < 0.002, 0.0, slide))
        flips = max(flips, int(np.max(np.count_nonzero(sign[1:] * sign[:-1] < 0, axis=0))))
        last = max(last, float(np.abs(slide[-1]).max()))
    return flips, last


@pytest.mark.parametrize("preset", ["sedan", "sedan_rwd", "truck_6x6", "tank"])
def test_a_sideways_slide_settles_without_chatter_at_the_tasks_step(preset):
    """Tyre forces at the contact patch, far below the CoM, couple the tyres' lateral forces to
    the body's roll. Slid sideways at 0.8 m/s (forward at 0, 1 and 2 m/s), every preset comes
    to rest at the tasks' 4 ms step: each patch's slide changes sign at most once (the tread
    springing back where the slide ends, measured at 0.11-0.13 s on the sedans' front or rear
    pair), never chatters, and is under 1 mm/s after 2 s (sedans 1e-7 to 1e-6, truck 2e-4). Before the
    tread, a minimum lateral slip denominator made each tyre a damper C / v_min on the chassis'
    sway, roll and yaw, and the truck's chattered at 1 m/s."""
    flips, last = _sideways_flips(vm.load_vehicle(preset))
    assert flips <= 1
    assert last < 1e-3                                          # m/s
