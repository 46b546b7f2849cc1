"""Vehicle files: presets load, bad files raise VehicleConfigError naming file and field."""

import dataclasses
import re
import warnings

import numpy as np
import pytest

from traction.vehicle_model import (
    VehicleConfigError,
    check_timestep,
    load_vehicle,
    preset_names,
)
from traction.vehicle_model.config import parse_vehicle

BASE = """
name = "t"
[chassis]
mass = 1000.0
com = [0.0, 0.0, 0.3]
body_size = [4.0, 1.8, 0.8]
body_centre = [0.0, 0.0, 0.3]
[defaults.wheel]
radius = 0.3
[[wheels]]
position = [1.2, 0.8, 0.0]
[[wheels]]
position = [1.2, -0.8, 0.0]
[[wheels]]
position = [-1.2, 0.8, 0.0]
[[wheels]]
position = [-1.2, -0.8, 0.0]
"""


def _load(tmp_path, text):
    f = tmp_path / "car.toml"
    f.write_text(text)
    return load_vehicle(f)


def test_presets_load_and_are_consistent():
    assert "sedan" in preset_names()
    p = load_vehicle("sedan")
    assert p.chassis.mass == pytest.approx(1500.0)
    assert p.suspension.sprung_mass.sum() == pytest.approx(p.chassis.mass)
    np.testing.assert_allclose(p.wheels.moi, 0.5 * p.wheels.mass * p.wheels.radius**2)
    assert p.wheels.radius.flags.writeable is False


def test_minimal_file_loads_with_defaults(tmp_path):
    p = _load(tmp_path, BASE)
    assert p.n_wheels == 4
    assert p.suspension.spring_strength[0] == 35000.0
    np.testing.assert_allclose(p.suspension.sprung_mass, 250.0)


@pytest.mark.parametrize("edit,field", [
    ("[defaults.suspension]\nspring_strength = -5.0", "defaults.suspension.spring_strength"),
    ("[chassis.extra]\nx = 1", "chassis.extra"),
    ("[defaults.tire]\nlat_stiff_y = 'stiff'", "defaults.tire.lat_stiff_y"),
    ("[defaults.suspension]\nmax_compression = 0.0\nmax_droop = 0.0", "max_droop"),
    ("[simulation]\nsubsteps_low = 0", "simulation.substeps_low"),
    ("[defaults.wheel]\nbogus = 1", "defaults.wheel.bogus"),
])
def test_bad_values_name_the_field(tmp_path, edit, field):
    text = BASE.replace("[defaults.wheel]\nradius = 0.3", "[defaults.wheel]\nradius = 0.3\n"
                        if "defaults.wheel" in edit else "[defaults.wheel]\nradius = 0.3")
    if "defaults.wheel" in edit:
        text = text.replace("radius = 0.3\n", "radius = 0.3\n" + edit.split("\n", 1)[1] + "\n")
    else:
        text = text + "\n" + edit + "\n"
    with pytest.raises(VehicleConfigError, match=re.escape(field)) as e:
        _load(tmp_path, text)
    assert "car.toml" in str(e.value)


def test_negative_mass_and_missing_radius(tmp_path):
    with pytest.raises(VehicleConfigError, match=r"chassis\.mass = -1.*allowed"):
        _load(tmp_path, BASE.replace("mass = 1000.0", "mass = -1.0"))
    with pytest.raises(VehicleConfigError, match=r"wheels\[0\]\.wheel\.radius is required"):
        _load(tmp_path, BASE.replace("[defaults.wheel]\nradius = 0.3", ""))


def test_too_few_wheels_and_syntax_error(tmp_path):
    two = BASE.split("[[wheels]]")
    with pytest.raises(VehicleConfigError, match="at least 3"):
        _load(tmp_path, "[[wheels]]".join(two[:3]))
    with pytest.raises(VehicleConfigError, match="car.toml: TOML syntax error"):
        _load(tmp_path, BASE + "\n[chassis\n")


def test_unknown_preset_lists_presets():
    with pytest.raises(VehicleConfigError, match="sedan"):
        load_vehicle("hovercraft")


def test_sprung_mass_sum_must_match_chassis():
    import tomllib
    data = tomllib.loads(BASE + "\n[defaults.suspension]\nsprung_mass = 100.0\n")
    with pytest.raises(VehicleConfigError, match="sprung_mass sums to 400"):
        parse_vehicle(data, "x.toml")


def test_stiff_spring_warns_for_timestep(sedan):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert check_timestep(sedan, 0.002) == []
        msgs = check_timestep(sedan, 0.05)
        assert len([m for m in msgs if "spring alpha" in m]) == 4
    assert any("alpha" in str(x.message) for x in w)


def test_wheel_substep_too_long_for_the_tyre_warns():
    """lambda = C r^2 / (I v_min): truck 2500 g x 0.55^2 / (12.1 x 4) = 153 /s; one low-speed
    substep is fine at 4 ms (0.61) and overshoots at 10 ms (1.53: needs 2 substeps)."""
    truck = load_vehicle("truck_6x6")
    assert truck.simulation.substeps_low == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_timestep(truck, 0.004) == []
        msgs = check_timestep(truck, 0.010)
    assert len(msgs) == 6 and all("substeps_low >= 2" in m and "153 /s" in m for m in msgs)


def test_wheel_far_outside_the_chassis_is_an_error(tmp_path):
    with pytest.raises(VehicleConfigError, match=r"wheels\[0\]\.position.*outside the chassis"):
        _load(tmp_path, BASE.replace("position = [1.2, 0.8, 0.0]", "position = [12.0, 0.8, 0.0]"))


def _sticky_amplitude(frequency, damping_ratio, dt, steps=400):
    """A sprung mass held by the sticky spring-damper alone (explicit, as in the update): the
    largest |velocity| over the last quarter of ``steps`` after a 1 mm/s start."""
    from traction.vehicle_model import sticky

    m, v, anchor, timer, tail = 400.0, 1e-3, 0.0, 0.0, []
    for i in range(steps):
        anchor, timer, active, force = sticky.update(5.0, 0.0, frequency, damping_ratio, anchor,
                                                     timer, v, True, m, 1e9, dt)
        v += force / m * dt
        if i >= 3 * steps // 4:
            tail.append(abs(v) if active else np.inf)     # broke loose: left the sticky range
    return max(tail)


@pytest.mark.parametrize("frequency,zeta,dt,unstable", [
    (5.0, 1.0, 0.004, False), (50.0, 1.0, 0.004, True), (5.0, 5.0, 0.01, True),
    (5.0, 5.0, 0.004, False), (30.0, 0.2, 0.004, False),
])
def test_sticky_tyre_instability_is_reported(sedan, frequency, zeta, dt, unstable):
    """(w dt)^2 + 4 zeta w dt >= 4 (w = 2 pi f) makes the explicit spring-damper diverge:
    check_timestep says so exactly when the mode grows."""
    p = dataclasses.replace(sedan, sticky=dataclasses.replace(sedan.sticky, frequency=frequency,
                                                                damping_ratio=zeta))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        msgs = [m for m in check_timestep(p, dt) if "sticky tyre" in m]
    assert len(msgs) == int(unstable)
    if unstable:
        assert "sticky.frequency" in msgs[0] and ">= 4" in msgs[0]
    amplitude = _sticky_amplitude(frequency, zeta, dt)
    assert (amplitude > 1e-3) if unstable else (amplitude < 1e-3)
