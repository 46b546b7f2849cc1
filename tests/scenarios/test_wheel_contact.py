"""Wheel contact in MuJoCo (``contact.model``, ``vehicle_model.footprint``): the footprint
against one ray over a step, a ditch and a wall (the ``obstacle`` terrain), and the two alike on
planes (static loads, parked on a slope, braking, the skidpad)."""

import numpy as np
import pytest
from wheel_contact import G, arc_error, drive, with_contact

from traction import vehicle_model as vm
from traction.envs import VehicleSim
from traction.scenes import build_scene


@pytest.fixture(scope="module")
def sedans():
    p = vm.load_vehicle("sedan")
    return {model: with_contact(p, model) for model in ("ray", "footprint")}


def test_a_step_is_climbed_on_the_tyres_arc(sedans):
    """The sedan at 2 m/s (held) into a 0.15 m step: with the footprint the front wheel's
    centre follows the arc of radius r about the edge within 2 cm (measured 1.5 cm) and the
    chassis's vertical acceleration peaks under 2 g (0.8 g); one ray leaves the wheel on the
    floor until its ray passes the edge, then puts it on top: 15 cm off the arc."""
    foot = drive(sedans["footprint"], "step", 0.15, 2.0, 2.5)
    assert arc_error(foot, 0.15) < 0.02
    assert np.abs(foot["az"]).max() < 2 * G
    assert foot["z"][-1] == pytest.approx(0.15 + foot["radius"], abs=0.005)   # on top
    ray = drive(sedans["ray"], "step", 0.15, 2.0, 2.5)
    assert arc_error(ray, 0.15) == pytest.approx(0.15, abs=0.005)


def test_a_ditch_narrower_than_the_tyre_does_not_swallow_it(sedans):
    """A 0.2 m ditch under the 0.33 m tyres at 2 m/s: the footprint bridges it (the front
    centre dips 1.7 cm, the geometry's 1.55 cm plus the pieces' resolution); one ray drops the
    wheel 20 cm into it."""
    drops = {}
    for model, p in sedans.items():
        run = drive(p, "ditch", 0.2, 2.0, 2.0)
        over = (run["x"] > run["edge"]) & (run["x"] < run["edge"] + 0.2)
        drops[model] = run["radius"] - run["z"][over].min()
    assert drops["footprint"] < 0.02
    assert drops["ray"] > 0.15


def test_a_wall_stops_the_car_without_a_crash_spike(sedans):
    """Driven into a wall at 2 m/s (then free), the chassis's collision stops the car before
    its front wheels reach the wall (its nose overhangs them), decelerating under 5 g
    (``chassis.collision_time`` 0.1 s; MuJoCo's default contact peaked at 21 g), in either
    contact model."""
    for p in sedans.values():
        run = drive(p, "wall", 0.5, 2.0, 1.5, hold_speed=False)
        assert run["x"].max() < run["edge"] - 0.5             # never near the wall's face
        assert abs(run["speed"][-1]) < 0.5                    # stopped (a small rebound)
        assert np.hypot(run["ax"], run["az"]).max() < 5 * G


def test_on_a_plane_the_footprint_drives_as_one_ray(sedans):
    """Every piece of a plane bounds the tyre by the plane itself. On the ``obstacle`` terrain
    (a box far ahead: the footprint's rays are rangefinders there, combined every step; on
    a scene of planes alone one ray is used, being exact) the static loads, the braking
    distance from 20 m/s and the yaw rate of a steady turn agree with one ray's within 1 %
    (slopes: tests/vehicle_model/test_footprint.py)."""
    def sim_of(p):
        sim = VehicleSim(build_scene(p, "obstacle", kind="wall", size=0.5, distance=90.0))
        assert sim.scene.terrain.footprint == "sensors"
        return sim

    loads, stops, yaw = {}, {}, {}
    for m, p in sedans.items():
        sim = sim_of(p)
        sim.set_commands(brake=1.0)
        sim.step(1000)
        loads[m] = sim.outputs.spring_force[0].copy()
        sim = sim_of(p)
        sim.reset(velocity=[20.0, 0, 0])
        sim.state.omega[:] = 20.0 / p.wheels.radius
        sim.set_commands(brake=1.0)
        x0 = sim.com_position()[0]
        sim.step(int(6.0 / sim.dt))
        stops[m] = sim.com_position()[0] - x0
        sim = sim_of(p)
        sim.reset(velocity=[10.0, 0, 0])
        sim.state.omega[:] = 10.0 / p.wheels.radius
        sim.set_commands(wheel_torque=[0.0, 0.0, 150.0, 150.0], steer=0.3)
        sim.step(int(4.0 / sim.dt))
        yaw[m] = sim.data.qvel[sim.qvel_adr + 5]
    np.testing.assert_allclose(loads["footprint"], loads["ray"], rtol=0.01)
    assert stops["footprint"] == pytest.approx(stops["ray"], rel=0.01)
    assert 20.0 < stops["ray"] < 60.0                         # (short of the wall)
    assert yaw["footprint"] == pytest.approx(yaw["ray"], rel=0.01)
    assert abs(yaw["ray"]) > 0.2                              # it is turning
