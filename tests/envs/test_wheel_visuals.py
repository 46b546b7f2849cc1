"""Visual tyres follow jounce, steer and spin, and never collide."""

import mujoco
import numpy as np

from traction.envs import VehicleSim
from traction.scenes import build_scene
from traction.vehicle_model import load_vehicle


def test_visual_wheels_follow_jounce_steer_and_spin(sedan):
    sim = VehicleSim(build_scene(sedan, "flat"))
    sim.set_commands(wheel_torque=[0, 0, 400, 400], wheel_steer=[0.3, 0.3, 0, 0])
    sim.step(300)
    sim.update_wheel_visuals()
    out = sim.outputs
    for i, g in enumerate(sim.wheel_geoms):
        pos = sim.model.geom_pos[g]
        # travel is straight down in the sedan: centre = rest position + jounce up
        np.testing.assert_allclose(pos, sedan.suspension.position[i] + [0, 0, out.jounce[0, i]],
                                   atol=1e-12)
        mat = np.zeros(9)
        mujoco.mju_quat2Mat(mat, sim.model.geom_quat[g])
        axle = mat.reshape(3, 3)[:, 2]                       # cylinder axis = wheel axle
        d = out.steer[0, i]
        np.testing.assert_allclose(axle, [-np.sin(d), np.cos(d), 0.0], atol=1e-9)
    assert np.all(sim.wheel_angle[0, 2:] > 0)                # driven wheels rolled forward
    assert np.all(sim.model.geom_contype[sim.wheel_geoms] == 0)


def test_a_visual_tyre_turns_through_the_angle_it_rolled_and_forward():
    """Free-rolling front tyres turn through distance / radius (the spin accumulates over the
    substeps), their front point moving down as they roll forward; reset turns them back."""
    p = load_vehicle("sedan")                               # wheel torques commanded directly
    sim = VehicleSim(build_scene(p, "flat"))
    x0 = sim.com_position()[0]
    sim.set_commands(wheel_torque=[0, 0, 150, 150])
    sim.step(400)                                           # 0.8 s: ~0.5 rad of roll
    rolled = (sim.com_position()[0] - x0) / p.wheels.radius[:2]
    np.testing.assert_allclose(sim.wheel_angle[0, :2], rolled, rtol=0.02)
    assert 0.2 < sim.wheel_angle[0, 0] < 1.5
    sim.update_wheel_visuals()
    for i in (0, 1):
        mat = np.zeros(9)
        mujoco.mju_quat2Mat(mat, sim.model.geom_quat[sim.wheel_geoms[i]])
        front = mat.reshape(3, 3)[:, 0]                     # the tyre's point ahead at rest
        angle = sim.wheel_angle[0, i]
        np.testing.assert_allclose(front, [np.cos(angle), 0.0, -np.sin(angle)], atol=1e-9)
    sim.reset()
    assert np.all(sim.wheel_angle == 0.0)


def test_telemetry_records_every_substep_when_enabled(tmp_path):
    sim = VehicleSim(build_scene("sedan_rwd", "flat"), telemetry=100)
    sim.set_commands(throttle=1.0)
    sim.step(150)
    data = sim.telemetry.arrays()
    assert len(data["time"]) == 100
    np.testing.assert_allclose(np.diff(data["time"]), sim.dt)
    assert data["engine_revs"][-1, 0] == sim.outputs.engine_omega[0]
    assert np.all(data["wheel_omega"][-1, 0] >= 0)
    path = sim.telemetry.write_csv(tmp_path / "tel.csv")     # the sim's wheel names
    lines = path.read_text().splitlines()
    assert len(lines) == 101
    assert all(f"long_slip_{name}" in lines[0].split(",") for name in sim.params.wheel_names)
    assert VehicleSim(build_scene("sedan_rwd", "flat")).telemetry is None


def test_headless_rendering_works_without_mujoco_gl_set():
    import os
    import subprocess
    import sys

    code = ("import gymnasium as gym, traction.envs\n"
            "env = gym.make('Traction/TankTurn-v1', render_mode='rgb_array', width=64, height=48)\n"
            "env.reset(seed=0); print(env.render().shape)")
    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "DISPLAY")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd="/", check=True)
    assert out.stdout.strip() == "(48, 64, 3)"


def test_a_simulator_reset_clears_its_telemetry():
    sim = VehicleSim(build_scene("sedan", "flat"), telemetry=100)
    sim.step(5)
    sim.reset()
    sim.step(3)
    times = sim.telemetry.arrays()["time"]
    np.testing.assert_allclose(times, np.arange(3) * sim.dt, atol=1e-12)
