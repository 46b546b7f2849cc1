"""The vehicle demo (`python -m traction.train.demo`): its printed table and CSV agree."""

import csv
import math
import re

import pytest

from traction.train import demo


def test_vehicle_demo_table_and_csv_agree(tmp_path, capsys):
    """The printed per-phase yaw rate is the CSV's (world z); the table read the body-frame
    angular velocity, 0.246 against the CSV's 0.242 rad/s on the 10 deg slope."""
    path = demo.run("slope", tmp_path, angle_deg=10.0)
    printed = re.findall(r"t = +([\d.]+) s .* yaw rate = ([-+\d.]+) rad/s", capsys.readouterr().out)
    rows = {round(float(r["t"]), 2): float(r["yaw_rate"]) for r in csv.DictReader(path.open())}
    assert len(printed) >= 3
    for t, yaw in printed:
        assert float(yaw) == pytest.approx(rows[float(t)], abs=6e-4), t


def test_every_printed_wheel_figure_is_its_csv_column(tmp_path, capsys):
    """At each phase's end the printed jounce, load and slips of every wheel are the CSV's
    columns of that name at that time (lateral slip printed in degrees)."""
    import numpy as np

    path = demo.run("flat", tmp_path)
    out = capsys.readouterr().out
    rows = {round(float(r["t"]), 2): r for r in csv.DictReader(path.open())}
    names = demo.VehicleSim(demo.build_scene("sedan", "flat")).params.wheel_names
    blocks = re.findall(r"t = +([\d.]+) s .*\n.*\n((?:    \S+ +[-\d. ]+\n){4})", out)
    assert len(blocks) == len(demo.MANOEUVRE)
    for t, block in blocks:
        row = rows[float(t)]
        for line, name in zip(block.splitlines(), names, strict=True):
            label, jounce, load, long_slip, lat_deg = line.split()
            assert label == name
            assert float(jounce) == pytest.approx(1000 * float(row[f"jounce_{name}"]), abs=0.06)
            assert float(load) == pytest.approx(float(row[f"load_{name}"]), abs=0.6)
            assert float(long_slip) == pytest.approx(float(row[f"long_slip_{name}"]), abs=6e-4)
            assert float(lat_deg) == pytest.approx(np.degrees(float(row[f"lat_slip_{name}"])),
                                                   abs=6e-3)


# The demo's yaw rate is the angular velocity about world z, whatever the body's attitude.
def test_demo_yaw_rate_is_about_world_z():
    """Level, spinning (0.4, -0.2, 0.7) rad/s: the yaw rate is 0.7; rolled 90 deg (the body's y
    axis pointing up), a spin about the body's y axis is a yaw rate and one about its z is not."""
    sim = demo.VehicleSim(demo.build_scene("sedan", "flat"))
    sim.reset(pos=[0.0, 0.0, 5.0], quat=[1.0, 0.0, 0.0, 0.0])
    a = sim.qvel_adr
    sim.data.qvel[a + 3:a + 6] = [0.4, -0.2, 0.7]
    assert demo._yaw_rate(sim) == pytest.approx(0.7, abs=1e-12)
    c = math.cos(math.pi / 4)
    sim.reset(pos=[0.0, 0.0, 5.0], quat=[c, c, 0.0, 0.0])
    sim.data.qvel[a + 3:a + 6] = [0.0, 0.7, 0.0]            # body frame: about body y = world z
    assert demo._yaw_rate(sim) == pytest.approx(0.7, abs=1e-9)
    sim.data.qvel[a + 3:a + 6] = [0.0, 0.0, 0.7]            # about body z = world -y
    assert demo._yaw_rate(sim) == pytest.approx(0.0, abs=1e-9)
