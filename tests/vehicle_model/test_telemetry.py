"""Telemetry ring buffer: samples oldest first after wrapping, every CSV cell is its channel's
value under its header, time keeps its digits, bad arguments are refused."""

import csv

import numpy as np
import pytest

from traction import vehicle_model as vm
from traction.vehicle_model.telemetry import UNITS, VEHICLE_CHANNELS, WHEEL_CHANNELS, Telemetry


def _recorded(capacity, n_samples, t0=0.0, dt=0.1):
    p = vm.load_vehicle("sedan_rwd")
    tel = Telemetry(n_vehicles=2, n_wheels=4, capacity=capacity)
    state, cmd = vm.VehicleState.zeros(p, 2), vm.Commands.zeros(p, 2)
    out = vm.VehicleOutputs.zeros(p, 2)
    for k in range(n_samples):
        out.jounce = float(k) + np.arange(4) / 10            # differs per wheel and sample
        out.load, out.long_force = 1000.0, 500.0
        out.engine_omega = np.array([10.0 * k, -10.0 * k])    # differs per vehicle
        state.omega[...] = k
        tel.record(t0 + dt * k, out, state, cmd)
    return p, tel


@pytest.mark.parametrize("capacity,n_samples", [(1, 1), (1, 3), (5, 4), (5, 5), (5, 11)])
def test_ring_buffer_keeps_the_last_samples_oldest_first(capacity, n_samples):
    _, tel = _recorded(capacity, n_samples)
    kept = np.arange(max(0, n_samples - capacity), n_samples)
    data = tel.arrays()
    np.testing.assert_allclose(data["time"], 0.1 * kept)
    np.testing.assert_allclose(data["jounce"][:, 1, 2], kept + 0.2)
    np.testing.assert_allclose(data["engine_revs"], np.stack([10.0 * kept, -10.0 * kept], 1))
    np.testing.assert_allclose(data["wheel_omega"][:, 0, 3], kept)
    np.testing.assert_allclose(data["norm_long_force"], 0.5)           # force / load


def test_control_and_force_channels_are_their_own_commands_and_outputs():
    """Steer keeps its sign (in [-1, 1]), brake and handbrake their own columns (in [0, 1]), and
    every tyre force and moment channel is divided by the tyre's load."""
    p = vm.load_vehicle("sedan_rwd")
    tel = Telemetry(n_vehicles=1, n_wheels=4, capacity=4)
    state, cmd, out = vm.VehicleState.zeros(p, 1), vm.Commands.zeros(p, 1), vm.VehicleOutputs.zeros(p, 1)
    cmd.steer, cmd.brake, cmd.handbrake = -0.5, 0.3, 1.0
    out.load = np.array([[2000.0, 1000.0, 500.0, 0.0]])                 # the last one airborne
    out.long_force, out.lat_force, out.aligning_moment = 400.0, -300.0, 20.0
    tel.record(0.0, out, state, cmd)
    data = tel.arrays()
    assert data["steer_control"][0, 0] == -0.5
    assert data["brake_control"][0, 0] == 0.3 and data["handbrake_control"][0, 0] == 1.0
    np.testing.assert_allclose(data["norm_long_force"][0, 0], [0.2, 0.4, 0.8, 0.0])
    np.testing.assert_allclose(data["norm_lat_force"][0, 0], [-0.15, -0.3, -0.6, 0.0])
    np.testing.assert_allclose(data["norm_aligning_moment"][0, 0], [0.01, 0.02, 0.04, 0.0])


def test_clear_starts_over():
    _, tel = _recorded(4, 6)
    tel.clear()
    assert len(tel.arrays()["time"]) == 0


def test_every_csv_cell_is_its_channel_under_its_header(tmp_path):
    p, tel = _recorded(5, 8)
    path = tel.write_csv(tmp_path / "t.csv", vehicle=1, wheel_names=p.wheel_names)
    data = tel.arrays()
    with path.open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 5 and set(rows[0]) <= set(UNITS) | {
        f"{c}_{w}" for c in WHEEL_CHANNELS for w in p.wheel_names}
    for s, row in enumerate(rows):
        assert float(row["time"]) == pytest.approx(data["time"][s], abs=1e-9)
        for c in VEHICLE_CHANNELS:
            assert float(row[c]) == pytest.approx(data[c][s, 1], rel=1e-5, abs=1e-9)
        for c in WHEEL_CHANNELS:
            for j, w in enumerate(p.wheel_names):
                assert float(row[f"{c}_{w}"]) == pytest.approx(data[c][s, 1, j], rel=1e-5, abs=1e-9)


def test_csv_time_keeps_millisecond_steps_after_hours(tmp_path):
    _, tel = _recorded(5, 5, t0=36_000.0, dt=0.002)        # 10 h of simulated time
    with tel.write_csv(tmp_path / "t.csv").open() as f:
        times = [float(r["time"]) for r in csv.DictReader(f)]
    np.testing.assert_allclose(np.diff(times), 0.002, rtol=1e-6)


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(ValueError, match="telemetry capacity = 0; allowed: an integer >= 1"):
        Telemetry(1, 4, capacity=0)
    with pytest.raises(MemoryError, match=r"telemetry capacity = 1000000000000 samples of 1 "
                       r"vehicle\(s\) x 4 wheels needs 3.95e\+05 GiB \(424 bytes a sample\)"):
        Telemetry(1, 4, capacity=10**12)                   # was numpy's bare MemoryError
    with pytest.raises(MemoryError, match="telemetry capacity = 10000000000000000000 samples"):
        Telemetry(1, 4, capacity=10**19)                   # was numpy's "array is too big"
    _, tel = _recorded(3, 3)
    with pytest.raises(ValueError, match=r"wheel_names = \('a', 'b'\); need 4 distinct names"):
        tel.write_csv(tmp_path / "t.csv", wheel_names=("a", "b"))
    for empty in ((), []):                                 # fell back to w0..w3 silently
        with pytest.raises(ValueError, match=r"wheel_names = \(\); need 4 distinct names"):
            tel.write_csv(tmp_path / "t.csv", wheel_names=empty)
    for bad in (2, 0.5, -1):                               # 0.5 was numpy's IndexError
        with pytest.raises(ValueError, match=rf"vehicle = {bad}; allowed: an integer in \[0, 1\]"):
            tel.write_csv(tmp_path / "t.csv", vehicle=bad)
    for n in (0, -1):                                      # -1: numpy's negative dimensions
        with pytest.raises(ValueError, match=rf"n_vehicles = {n}; allowed: an integer >= 1"):
            Telemetry(n, 4)
    assert all(c in UNITS for c in (*WHEEL_CHANNELS, *VEHICLE_CHANNELS, "time"))

