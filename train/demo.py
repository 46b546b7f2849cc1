"""The foundation demo: the sedan on flat ground and on a 10 degree slope.

Drives a scripted manoeuvre (accelerate, brake, turn), prints a table per phase (speed, per-wheel
jounce, load and slips) and writes the telemetry to CSV::

    python -m traction.train.demo --out runs/demo
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

from traction.envs import VehicleSim
from traction.scenes import build_scene
from traction.train.checks import writable_dir

#: (phase, seconds, rear drive torque per wheel N m, brake 0..1, steer -1..1)
MANOEUVRE = (
    ("accelerate", 4.0, 600.0, 0.0, 0.0),
    ("brake", 3.0, 0.0, 1.0, 0.0),
    ("turn", 4.0, 600.0, 0.0, 0.4),
)
RECORD_EVERY = 10  # substeps (50 Hz at the 2 ms physics step)


def _columns(names: tuple[str, ...]) -> list[str]:
    cols = ["t", "phase", "x", "y", "z", "speed", "yaw_rate"]
    for key in ("jounce", "load", "long_slip", "lat_slip", "omega", "contact"):
        cols += [f"{key}_{n}" for n in names]
    return cols


def _yaw_rate(sim: VehicleSim) -> float:
    """Angular velocity about world z (rad/s), in the table and the CSV alike."""
    return float(sim.chassis_row()["angular_velocity"][2])


def _row(sim: VehicleSim, t: float, phase: str) -> list:
    o = sim.outputs
    x, y, z = sim.com_position()
    return ([round(t, 4), phase, x, y, z, sim.forward_speed(), _yaw_rate(sim)]
            + list(o.jounce[0]) + list(o.load[0]) + list(o.long_slip[0])
            + list(o.lat_slip[0]) + list(sim.state.omega[0]) + list(o.in_contact[0].astype(int)))


def _print_phase(sim: VehicleSim, phase: str, t: float) -> None:
    o = sim.outputs
    print(f"  {phase:<10} t = {t:5.2f} s   speed = {sim.forward_speed():6.2f} m/s   "
          f"yaw rate = {_yaw_rate(sim):+.3f} rad/s")
    print(f"    {'wheel':<12}{'jounce mm':>10}{'load N':>9}{'long slip':>10}{'lat slip deg':>13}")
    for i, name in enumerate(sim.params.wheel_names):
        print(f"    {name:<12}{1000 * o.jounce[0, i]:10.1f}{o.load[0, i]:9.0f}"
              f"{o.long_slip[0, i]:10.3f}{np.degrees(o.lat_slip[0, i]):13.2f}")


def run(terrain: str, out: Path, **terrain_kwargs) -> Path:
    """Run the manoeuvre on one terrain; return the CSV path."""
    sim = VehicleSim(build_scene("sedan", terrain, **terrain_kwargs))
    label = terrain + (f"_{terrain_kwargs['angle_deg']:g}deg" if terrain_kwargs else "")
    print(f"\nsedan on {label}")
    path = out / f"{label}.csv"
    t, k = 0.0, 0
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(_columns(sim.params.wheel_names))
        for phase, seconds, torque, brake, steer in MANOEUVRE:
            sim.set_commands(wheel_torque=[0, 0, torque, torque], brake=brake, steer=steer)
            for _ in range(round(seconds / sim.dt)):
                sim.substep()
                t += sim.dt
                k += 1
                if k % RECORD_EVERY == 0:
                    writer.writerow(_row(sim, t, phase))
            _print_phase(sim, phase, t)
    return path


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("runs/demo"), help="output folder")
    args = ap.parse_args(argv)
    try:
        writable_dir(args.out)
    except ValueError as e:
        ap.error(str(e))
    paths = [run("flat", args.out), run("slope", args.out, angle_deg=10.0)]
    print("\ntelemetry written to: " + ", ".join(str(p) for p in paths))


if __name__ == "__main__":
    main()
