"""Drives for the wheel-contact scenarios (tests/scenarios/test_wheel_contact.py): a vehicle
rolling into a step, over a ditch or into a wall, recording its front wheels' centres and the
chassis's acceleration."""

from __future__ import annotations

import dataclasses

import numpy as np

from traction import vehicle_model as vm
from traction.envs import VehicleSim
from traction.scenes import build_scene
from traction.vehicle_model.footprint import ContactParams

G = 9.81


def with_contact(params: vm.VehicleParams, model: str) -> vm.VehicleParams:
    return dataclasses.replace(params, contact=ContactParams(model=model))


def wheel_centres(sim: VehicleSim) -> np.ndarray:
    """Every wheel centre in the world (m), ``(n_wheels, 3)``, where the contact puts it (as
    the visual tyres are posed)."""
    p = sim.params
    sus, wh = p.suspension, p.wheels
    local = sus.ray_start(wh.radius) + sus.travel_direction * (
        sus.max_compression + wh.radius - sim.outputs.jounce[0])[:, None]
    rot = sim.data.xmat[sim.body].reshape(3, 3)
    return sim.data.xpos[sim.body] + local @ rot.T


def drive(params, kind: str, size: float, speed: float, seconds: float, distance: float = 2.0,
          hold_speed: bool = True) -> dict:
    """Roll ``params`` at ``speed`` (m/s) toward an obstacle (``scenes`` terrain ``obstacle``)
    ``distance`` m ahead of its front wheels; with ``hold_speed`` the chassis's forward speed is
    held (the wheels turning with it), so the path is the geometry's and not the driver's.
    Returns the front-left wheel centre's path (``x``, ``z``, m), whether it was in contact,
    the chassis's vertical and horizontal acceleration (m/s^2, per physics step) and its
    forward speed."""
    front = float(params.suspension.position[0, 0])
    scene = build_scene(params, "obstacle", kind=kind, size=size, distance=front + distance,
                        physics_dt=0.002)
    sim = VehicleSim(scene)
    sim.reset(velocity=[speed, 0.0, 0.0])
    sim.step(1)
    sim.state.omega[:] = speed / params.wheels.radius
    rec = {"x": [], "z": [], "contact": [], "az": [], "ax": [], "speed": []}
    v_prev = sim.com_velocity().copy()
    for _ in range(int(seconds / sim.dt)):
        if hold_speed:
            a = sim.qvel_adr
            sim.data.qvel[a] = speed
            sim.refresh()
        sim.substep()
        v = sim.com_velocity().copy()
        c = wheel_centres(sim)[0]
        rec["x"].append(c[0])
        rec["z"].append(c[2])
        rec["contact"].append(bool(sim.outputs.in_contact[0, 0]))
        rec["az"].append((v[2] - v_prev[2]) / sim.dt)
        rec["ax"].append((v[0] - v_prev[0]) / sim.dt)
        rec["speed"].append(v[0])
        v_prev = v
    out = {k: np.array(v) for k, v in rec.items()}
    out["edge"] = front + distance
    out["radius"] = float(params.wheels.radius[0])
    return out


def arc_error(run: dict, height: float) -> float:
    """The largest gap (m) between the wheel centre's height and the arc of radius r about the
    step's edge (the tyre rolling over the corner), over the climb: from where the arc leaves
    the ground (``r - height`` below the edge's height) until the centre is over the edge."""
    r, edge = run["radius"], run["edge"]
    x, z = run["x"], run["z"]
    reach = np.sqrt(r * r - (r - height) ** 2)           # centre's distance at first touch
    climb = (x >= edge - reach) & (x <= edge)
    arc = height + np.sqrt(np.maximum(r * r - (edge - x[climb]) ** 2, 0.0))
    return float(np.abs(z[climb] - arc).max())
