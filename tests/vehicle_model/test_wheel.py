"""Wheel spin: free spin-up at T/I, brakes stop but never reverse."""

import numpy as np
import pytest

from traction.vehicle_model import wheel


def _spin(p, omega, drive, road, brake, dt):
    """``wheel.integrate_spin`` of every wheel of ``p`` (inputs per wheel, ``(4,)``)."""
    return np.array([wheel.integrate_spin(omega[j], drive[j], road[j], brake[j], p.moi[j],
                                          p.damping_rate[j], dt) for j in range(len(p.moi))])


def test_free_wheel_spins_up_at_torque_over_moi(sedan):
    p = sedan.wheels
    dt = 1e-3
    omega = _spin(p, np.zeros(4), np.full(4, 100.0), np.zeros(4), np.zeros(4), dt)
    np.testing.assert_allclose(omega / dt, 100.0 / p.moi, rtol=1e-3)


def test_brake_stops_but_never_reverses(sedan):
    p = sedan.wheels
    omega = np.array([5.0, -5.0, 0.01, 50.0])
    brake = np.full(4, p.max_brake_torque[0])
    out = _spin(p, omega, np.zeros(4), np.zeros(4), brake, 0.01)
    assert out[0] == 0 and out[1] == 0 and out[2] == 0
    assert 0 < out[3] < 50.0
    # a brake holding against a drive torque smaller than it keeps the wheel still
    held = _spin(p, np.zeros(4), np.full(4, 500.0), np.zeros(4), brake, 0.01)
    assert np.all(held == 0)


# Wheel spin integration with an inertia other than 1 kg m^2: the brake clamp removes the brake
# torque over the inertia per unit of time (the shipped direct-drive sedan has I = 1).
def test_brake_removes_torque_times_step_over_inertia():
    """A 20 N m brake over 0.1 s on I = 4 kg m^2 removes 0.5 rad/s (no damping to speak of)."""
    out = wheel.integrate_spin(10.0, 0.0, 0.0, 20.0, 4.0, 1e-12, 0.1)
    assert out == pytest.approx(9.5, rel=1e-9)
    back = wheel.integrate_spin(-10.0, 0.0, 0.0, 20.0, 4.0, 1e-12, 0.1)
    assert back == pytest.approx(-9.5, rel=1e-9)
