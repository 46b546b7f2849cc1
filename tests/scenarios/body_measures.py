"""Body measures and manoeuvres shared by the scenario tests (imported by them: pytest puts this
folder on the import path): axles, body roll, roll stiffness and levers, a steady turn."""

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
    """Height (m) of the CoM above the points where the tyre forces act: the contact patches
    (the wheel centres one radius down, at rest) raised by ``tire_force_height``. The tyre
    forces' moment about the CoM per unit force, which pitches and rolls the body."""
    s = params.suspension
    points = s.position[:, 2] - params.wheels.radius + s.tire_force_height
    return float(params.chassis.com[2] - points.mean())


def weight_lever(params):
    """Height (m) of the CoM above the suspension force points (the wheel centres): rolled or
    pitched by phi, the body carries those points (and the normal forces' lines through them)
    phi times this across under the CoM, so the weight's moment about them grows by m g this
    phi (the body's own compliance adds that to the load transfer)."""
    return float(params.chassis.com[2] - params.suspension.force_point[:, 2].mean())


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


def _physx_load_curve(k):
    """PhysX's smoothing K - K^2/3 + K^3/27 (1 from K = 3), ``tire_physx._smooth_force``."""
    k = min(k, 3.0)
    return k - k**2 / 3 + k**3 / 27


def understeer_gradient(params, gravity=9.81):
    """The bicycle model's understeer gradient K (rad per m/s^2 of lateral acceleration) of a
    two-axle vehicle on PhysX tyres, steering angle delta = L / R + K a_y:
    K = (1 / C'_f - 1 / C'_r) / g, C' an axle's cornering stiffness per unit of its load,
    ``lat_stiff_y`` x PhysX's load curve at rest load (``smooth(3 / lat_stiff_x)``, 0.875 for
    ``lat_stiff_x`` = 2). PhysX's cornering stiffness is proportional to the rest load, so
    equal values on both axles steer neutrally whatever the weight split. Exact for small slip
    angles; the PhysX curve bends from zero slip (force K - K^2 / 3 ...), so a skidpad's fit
    over 0.5-2 m/s^2 finds about 5 % more."""
    t, x = params.tires, params.suspension.position[:, 0]
    front, rear = x > x.mean(), x < x.mean()
    per_load = [t.lat_stiff_y[i] * _physx_load_curve(3.0 / t.lat_stiff_x[i])
                for i in range(params.n_wheels)]
    per_load = np.array(per_load)
    assert np.ptp(per_load[front]) == 0 and np.ptp(per_load[rear]) == 0
    return float(1.0 / per_load[front][0] - 1.0 / per_load[rear][0]) / gravity


def skidpad(params, radius, speed, seconds=10.0, average=3.0, every=5):
    """Drive a steady circle of ``radius`` (m) at ``speed`` (m/s) on flat ground, counter-
    clockwise: the steer command integrates the path curvature's error (yaw rate / speed
    against 1 / radius), the rear wheels hold the speed (wheel torque, or the throttle of an
    engine). Means over the last ``average`` s of ``seconds``: front road-wheel steer angle
    (rad, the mean of the steered front wheels'), lateral acceleration speed x yaw rate
    (m/s^2), path radius speed / yaw rate (m), body roll (rad, right side down positive) and
    the suspension forces ``(n_wheels,)`` (N)."""
    sim = VehicleSim(build_scene(params, "flat"))
    sim.reset(velocity=[speed, 0, 0])
    sim.state.omega[:] = speed / params.wheels.radius
    x = params.suspension.position[:, 0]
    front = (x == x.max()) & (params.steering.multiplier != 0)
    steer = np.arctan((x.max() - x.min()) / radius) / params.steering.max_angle
    drive, h = 0.0, every * sim.dt
    kept = []
    steps = int(round(seconds / h))
    for i in range(steps):
        v, yaw_rate = sim.forward_speed(), sim.data.qvel[5]
        steer += 40.0 * (1.0 / radius - yaw_rate / max(v, 0.1)) * h       # 1/m -> command
        drive += (speed - v) * h
        if params.has_engine:
            sim.set_commands(steer=steer, throttle=float(np.clip(0.1 + 0.5 * (speed - v)
                                                                 + 0.2 * drive, 0.0, 1.0)))
        else:
            torque = 400.0 * (speed - v) + 200.0 * drive
            sim.set_commands(steer=steer, wheel_torque=np.where(x < x.mean(), torque, 0.0))
        sim.step(every)
        if i >= steps - int(round(average / h)):
            kept.append((sim.outputs.steer[0][front].mean(), v, sim.data.qvel[5], body_roll(sim),
                         *sim.outputs.spring_force[0]))
    delta, v, yaw_rate, roll, *loads = np.mean(kept, axis=0)
    return delta, v * yaw_rate, v / yaw_rate, roll, np.array(loads)
