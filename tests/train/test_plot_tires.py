"""The tyre plotting tool writes one non-trivial PNG per distinct tyre."""

import numpy as np
import pytest

from traction.train import plot_tires
from traction.vehicle_model import load_vehicle, tire
from traction.vehicle_model.tire_models import sweep


def test_plot_tires_writes_pngs(tmp_path):
    paths = plot_tires.main(["truck_6x6", "--out", str(tmp_path)])
    assert len(paths) == 1                                    # one tyre spec on every wheel
    data = paths[0].read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_plot_tires_draws_each_axle_whose_rest_load_differs(tmp_path):
    """sedan_rwd: one tyre spec, but the front wheels carry 389 kg and the rear 361 kg, so the
    curves (at multiples of the rest load; PhysX lateral stiffness per rest load) differ."""
    paths = plot_tires.main(["sedan_rwd", "--out", str(tmp_path)])
    assert [p.name for p in paths] == ["front_left_physx.png", "rear_left_physx.png"]


def test_plot_tires_refuses_an_unknown_vehicle(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        plot_tires.main(["no_such_car", "--out", str(tmp_path / "o")])
    assert exit_info.value.code == 2 and "no_such_car" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_sweep_matches_pure_slip_expectations():
    p = load_vehicle("sedan_rwd")
    rest = p.suspension.sprung_mass[0] * 9.81
    f_long, f_lat = sweep(p, 0, np.array([0.0, 1e-3]), np.array([0.0, 0.0]), rest)
    assert f_long[0] == 0.0 and f_lat[0] == 0.0
    # PhysX linear region: F = C_long * slip, slip = (wr - v) / max(|v|, |wr|, 4)
    expected = p.tires.long_stiff_per_unit_gravity[0] * 9.81 * 1e-3 / 1.001
    assert f_long[1] == pytest.approx(expected, rel=1e-3)


def test_the_slip_axis_is_the_models_long_slip():
    """The plot's x is telemetry's long_slip, (omega r - v) / max(|v|, |omega r|): the sweep at
    those points reports exactly that slip, and the PhysX curve is odd in it (the axis was
    (omega r - v) / v, where +1 is long_slip 0.5: about 3000 N at +1 against -3541 N at -1)."""
    p = load_vehicle("sedan_rwd")
    v = 15.0
    omega_r = v * (1.0 + plot_tires.slip_ratio(plot_tires.LONG_SLIPS))
    got = [tire.slips(v, 0.0, w)[0] for w in omega_r]
    np.testing.assert_allclose(got, plot_tires.LONG_SLIPS, atol=1e-12)
    s = np.array([0.1, 0.3, 0.5, 0.9])
    rest = p.suspension.sprung_mass[0] * 9.81
    f_drive, _ = sweep(p, 0, plot_tires.slip_ratio(s), np.zeros(4), rest)
    f_brake, _ = sweep(p, 0, plot_tires.slip_ratio(-s), np.zeros(4), rest)
    np.testing.assert_allclose(f_drive, -f_brake, rtol=1e-9)
