"""Body measures and manoeuvres shared by the scenario tests (imported by them: pytest puts this
folder on the import path): axles, body roll, roll stiffness and lever, a steady turn."""

import numpy as np

from traction.envs import VehicleSim
from traction.scenes import build_scene


def axles(params):
    """Wheel index pairs (left, right) of each axle, front first, and their track widths (m)."""
    y = params.suspension.position[:, 1]
    pairs = [(a, a + 1) for a in range(0, params.n_wheels, 2)]
    return pairs, [y[a] - y[b] for a, b in pairs]


def body_roll(sim):
    """Body roll (rad), right side down positive: the z component of the chassis y axis."""
    return float(np.arcsin(sim.data.xmat[sim.body].reshape(3, 3)[2, 1]))


def spring_roll_stiffness(params):
    """Roll stiffness of the springs (N m/rad): roll phi moves each wheel t phi / 2, so a pair
    of springs k gives k t^2 / 2 per axle."""
    pairs, tracks = axles(params)
    k = params.suspension.spring_strength
    return sum(0.5 * (k[a] + k[b]) * t**2 / 2 for (a, b), t in zip(pairs, tracks, strict=True))


def roll_lever(params):
    """Height (m) of the CoM above the points where the tyre forces act (wheel centres here)."""
    return float(params.chassis.com[2] - params.suspension.tire_force_point[:, 2].mean())


def steady_turn(params, v=8.0, steer=0.1, seconds=4.0):
    """Roll (rad, right side down positive) and lateral acceleration v * yaw rate (m/s^2) in a
    steady left turn at ``v`` (m/s) held by a rear-torque speed controller."""
    sim = VehicleSim(build_scene(params, "flat"))
    sim.reset(velocity=[v, 0, 0])
    sim.state.omega[:] = v / params.wheels.radius
    for _ in range(int(seconds / sim.dt)):
        err = v - sim.forward_speed()
        sim.set_commands(wheel_torque=[0, 0, 400 * err, 400 * err], wheel_steer=[steer, steer, 0, 0])
        sim.substep()
    return body_roll(sim), sim.forward_speed() * sim.data.qvel[5]
