"""Validation across parts: wheel references, per-wheel array shapes, duplicates, gear state,
the friction table, the update's dt and gravity. Each error names the field."""

import dataclasses
import re

import numpy as np
import pytest

from traction import vehicle_model as vm
from traction.vehicle_model import VehicleConfigError


def _with(p, part, **kw):
    return dataclasses.replace(p, **{part: dataclasses.replace(getattr(p, part), **kw)})


@pytest.mark.parametrize("part,kw,message", [
    ("wheels", {"radius": np.full(3, 0.33)}, "wheel.radius has shape (3,); expected shape (4,)"),
    ("wheels", {"radius": 0.33}, "wheel.radius has shape (); expected shape (4,)"),
    ("suspension", {"position": np.zeros((4, 2))},
     "suspension.position has shape (4, 2); expected shape (4, 3)"),
    ("tires", {"mf_lat": np.tile([10.0, 1.9, 1.0], (4, 1))},
     "tire.mf_lat has shape (4, 3); expected shape (4, 4)"),
    ("steering", {"multiplier": np.zeros(5)}, "steering.multiplier has shape (5,)"),
])
def test_per_wheel_arrays_need_one_value_per_wheel(sedan, part, kw, message):
    with pytest.raises(VehicleConfigError, match=re.escape("car.toml: " + message)):
        _with(sedan, part, **kw).validate("car.toml")


@pytest.mark.parametrize("kw,message", [
    ({"pairs": ((0, 7),), "stiffness": (1e4,)},
     "anti_roll_bars[0].wheels = (0, 7) refers to a wheel outside 0..3"),
    ({"pairs": ((0, 1),), "stiffness": (1e4, 2e4)}, "1 wheel pairs but 2 stiffness values"),
    ({"pairs": ((0, -1),), "stiffness": (1e4,)}, "anti_roll_bars[0].wheels = (0, -1) refers"),
])
def test_anti_roll_bar_wheels_are_range_checked(sedan, kw, message):
    with pytest.raises(VehicleConfigError, match=re.escape(message)):
        dataclasses.replace(sedan, anti_roll=vm.AntiRollParams(**kw)).validate("car.toml")


@pytest.mark.parametrize("kw,message", [
    ({"four_wheels": (0, 1, 2, 9)}, "differential.four_wheels = (0, 1, 2, 9) refers to a wheel "
                                    "outside 0..3"),
    ({"four_wheels": (0, 1, 2, 2)}, "differential.four_wheels = (0, 1, 2, 2) refers to wheel 2 "
                                    "twice"),
    ({"four_wheels": (0, 1, 2)}, "differential.four_wheels = (0, 1, 2); needs 4 wheels"),
])
def test_four_wheel_references_are_checked(kw, message):
    rwd = vm.load_vehicle("sedan_rwd")
    with pytest.raises(VehicleConfigError, match=re.escape(message)):
        _with(rwd, "differential", **kw).validate("car.toml")


def test_driven_wheels_are_checked():
    truck = vm.load_vehicle("truck_6x6")
    with pytest.raises(VehicleConfigError, match=re.escape("driven = (0, 0, 1) refers to wheel 0 "
                                                           "twice")):
        _with(truck, "differential", driven=(0, 0, 1)).validate("t.toml")
    with pytest.raises(VehicleConfigError, match=re.escape("driven = (0, 6) refers to a wheel "
                                                           "outside 0..5")):
        _with(truck, "differential", driven=(0, 6)).validate("t.toml")


def test_gears_outside_the_box_are_refused():
    p = vm.load_vehicle("sedan_rwd")                       # 5 forward gears
    for gear in (7, 6, -2):
        with pytest.raises(ValueError, match=rf"gear = {gear} is out of range; allowed -1 "
                                             r"\(reverse\), 0 \(neutral\) or 1..5"):
            vm.VehicleState.zeros(p, 1, gear=gear)
    s = vm.VehicleState.zeros(p, 2, gear=5)
    assert np.all(s.gearbox.gear == 5) and np.all(s.gearbox.target == 5)
    with pytest.raises(ValueError, match=r"gear = 6 is out of range; allowed .* or 1..5"):
        s.set_gear(p, [1, 6])
    with pytest.raises(ValueError, match=r"gear = 1.5 is out of range"):
        s.set_gear(p, [1, 1.5])
    assert np.all(s.gearbox.gear == 5) and np.all(s.gearbox.target == 5)
    s.set_gear(p, [-1, 2])
    assert s.gearbox.gear.tolist() == s.gearbox.target.tolist() == [-1, 2]


def test_friction_table_errors_name_the_expected_shape_and_tyre():
    with pytest.raises(VehicleConfigError, match=r"values have shape \(3,\); expected \(2, 2\)"):
        vm.FrictionTable(["a", "b"], ["road", "slick"], [1.0, 0.9, 0.8])
    table = vm.FrictionTable.default()
    with pytest.raises(VehicleConfigError, match=r"tire = 5 is not a tyre type; known: 0 = road"):
        table.set("ice", 0.1, tire=5)
    table.set("ice", 0.12, tire="track")
    assert table.values[table.surface_index("ice"), 2] == 0.12
    with pytest.raises(VehicleConfigError, match=r"0 surfaces and 2 tyre types; allowed: at least "
                                                 "one of each"):
        vm.FrictionTable([], ["road", "slick"], np.zeros((0, 2)))


def test_friction_values_are_checked_when_assigned_and_when_stepping(sedan):
    """``values`` may be assigned or edited in place between steps. An assignment of the wrong
    shape or with a NaN is refused there, naming the table, and leaves the table as it was; an
    assignment is copied into the table's own array (simulators read that array where it is);
    an in-place NaN is refused by the next step (the update would give NaN forces)."""
    state, cmd = vm.VehicleState.zeros(sedan), vm.Commands.zeros(sedan)
    kin = vm.ChassisKinematics(np.zeros((1, 3)), np.eye(3)[None], sedan.chassis.com[None],
                               np.zeros((1, 3)), np.zeros((1, 3)))
    hits = vm.GroundHits(np.ones((1, 4)), np.array([0.0, 0.0, 1.0]), np.zeros((1, 4), int))
    table = vm.FrictionTable.default()
    own = table.values
    with pytest.raises(VehicleConfigError, match=r"values have shape \(7,\); expected \(7, 3\)"):
        table.values = np.ones(7)
    with pytest.raises(VehicleConfigError, match="values must be finite and >= 0"):
        table.values = np.full((7, 3), np.nan)
    assert np.array_equal(own, vm.FrictionTable.default().values)
    table.values = np.full((7, 3), 2, dtype=np.int32)
    assert table.values is own and own.dtype == np.float64 and own[6, 0] == 2.0
    own[6, 0] = np.nan
    with pytest.raises(VehicleConfigError, match="values must be finite and >= 0"):
        vm.step(sedan, state, kin, hits, cmd, table, 0.01)


@pytest.mark.parametrize("dt,gravity,name", [
    (0.0, 9.81, "dt"), (-0.01, 9.81, "dt"), (np.nan, 9.81, "dt"), (0.01, 0.0, "gravity"),
    (0.01, -9.81, "gravity"), (0.01, np.inf, "gravity"),
])
def test_non_positive_dt_or_gravity_is_refused(sedan, dt, gravity, name):
    with pytest.raises(ValueError, match=rf"{name} = .*; allowed: > 0 (s|m/s\^2)"):
        vm.check_timestep(sedan, dt, gravity)
    state, cmd = vm.VehicleState.zeros(sedan), vm.Commands.zeros(sedan)
    kin = vm.ChassisKinematics(np.zeros((1, 3)), np.eye(3)[None], sedan.chassis.com[None],
                               np.zeros((1, 3)), np.zeros((1, 3)))
    hits = vm.GroundHits(np.ones((1, 4)), np.array([0.0, 0.0, 1.0]), np.zeros((1, 4), int))
    before = state.copy()
    with pytest.raises(ValueError, match=rf"vehicle update: {name} = "):
        vm.step(sedan, state, kin, hits, cmd, vm.FrictionTable.default(), dt, gravity)
    np.testing.assert_array_equal(state.wheel, before.wheel)


@pytest.mark.parametrize("bad", [5, 3])                        # 3: one past the last column
def test_tyre_type_outside_the_friction_table_is_refused_when_stepping(sedan, bad):
    """``tire_type`` may index a custom table's extra columns, so the file cannot check it;
    the update checks it against the table it is given (it once read the last column)."""
    p = _with(sedan, "tires", tire_type=np.array([0.0, 1.0, 2.0, bad]))
    state, cmd = vm.VehicleState.zeros(p), vm.Commands.zeros(p)
    kin = vm.ChassisKinematics(np.zeros((1, 3)), np.eye(3)[None], p.chassis.com[None],
                               np.zeros((1, 3)), np.zeros((1, 3)))
    hits = vm.GroundHits(np.ones((1, 4)), np.array([0.0, 0.0, 1.0]), np.zeros((1, 4), int))
    with pytest.raises(VehicleConfigError, match=re.escape(
            f"sedan: tire.tire_type[3] = {bad} is not a tyre type of the friction table; "
            "allowed 0..2 (0 = road, 1 = offroad, 2 = track)")):
        vm.step(p, state, kin, hits, cmd, vm.FrictionTable.default(), 0.01)
    with pytest.raises(VehicleConfigError, match=re.escape(f"tire.tire_type[3] = {bad}")):
        vm.FrictionTable.default().check_tire_types(p.tires.tire_type)
    vm.FrictionTable.default().check_tire_types(np.array([0, 1, 2, 2]))   # the last column: fine
    wide = vm.FrictionTable(["tarmac"], ["road", "offroad", "track", "a", "b", "slick"],
                            [[1.0, 0.9, 0.9, 1.0, 1.0, 1.2]])
    out = vm.step(p, state, kin, hits, cmd, wide, 0.01)
    assert out.friction[0, 3] == wide.values[0, bad] == (1.2 if bad == 5 else 1.0)   # its column


def test_a_bad_value_in_a_per_wheel_table_names_its_wheel(sedan):
    """A value out of range in a per-wheel table (wheel x point x column) is named by its wheel
    index, the first axis, with the value and the allowed range."""
    table = sedan.tires.friction_vs_slip.copy()              # (4, 3, 2), values in [0, 10]
    table[2, 1, 1] = 11.0
    with pytest.raises(VehicleConfigError, match=re.escape(
            "car.toml: tire.friction_vs_slip[2] = 11 is out of range; allowed [0, 10]")):
        _with(sedan, "tires", friction_vs_slip=table).validate("car.toml")


# Validation checks that no test exercised on one side.
@pytest.mark.parametrize("wheel,axis,value", [(2, 0, -9.0), (3, 1, -6.0), (0, 0, 9.0),
                                              (0, 1, 6.0)])
def test_a_wheel_far_outside_the_chassis_is_refused_on_every_side(sedan, wheel, axis, value):
    """Behind or right of the box (negative x or y) is as wrong as ahead or left of it."""
    pos = sedan.suspension.position.copy()
    pos[wheel, axis] = value
    with pytest.raises(VehicleConfigError, match=re.escape(f"wheels[{wheel}].position = ")):
        _with(sedan, "suspension", position=pos).validate("car.toml")


def test_a_curve_set_index_one_past_the_last_set_is_refused(sedan):
    """``tire.curve_set`` indexes ``curve_sets``: with one set only index 0 exists."""
    assert len(sedan.curve_sets) == 1
    _with(sedan, "tires", curve_set=np.zeros(4)).validate("car.toml")
    with pytest.raises(VehicleConfigError, match=re.escape(
            "car.toml: tire.curve_set[2] = 1 refers to a missing curve set; allowed 0..0 "
            "(default)")):
        _with(sedan, "tires", curve_set=np.array([0.0, 0.0, 1.0, 1.0])).validate("car.toml")


def test_a_friction_graph_whose_plateau_is_not_past_its_peak_is_refused(sedan):
    g = np.array(sedan.tires.friction_vs_slip, float)
    flat = g.copy()
    flat[:, 2, 0] = flat[:, 1, 0]                    # plateau slip == peak slip
    with pytest.raises(VehicleConfigError, match=r"friction_vs_slip\[0\] slips .* must be 0 < "
                                                 r"peak < plateau"):
        _with(sedan, "tires", friction_vs_slip=flat).validate("car.toml")


def test_a_load_filter_with_equal_min_and_max_load_is_refused(sedan):
    """The filter divides by max - min normalised load: equal ends are refused, not a
    division by zero in the update."""
    f = vm.TireLoadFilter(min_normalised_load=1.0, min_filtered_normalised_load=1.0,
                          max_normalised_load=1.0, max_filtered_normalised_load=1.0)
    with pytest.raises(VehicleConfigError, match="max_normalised_load = 1 must exceed "
                                                 "min_normalised_load = 1"):
        dataclasses.replace(sedan, tire_load_filter=f).validate("car.toml")


def test_a_short_suspension_travel_direction_is_refused(sedan):
    """travel_direction must be a unit vector: too short is refused as too long is."""
    d = np.array(sedan.suspension.travel_direction, float)
    d[1] = [0.0, 0.0, -0.5]
    with pytest.raises(VehicleConfigError, match=re.escape(
            "suspension.travel_direction[1] has length 0.5; it must be a unit vector")):
        _with(sedan, "suspension", travel_direction=d).validate("car.toml")


def test_a_wheel_cannot_be_its_own_steering_partner(sedan):
    assert sedan.steering.partner == (1, 0, 3, 2)
    with pytest.raises(VehicleConfigError, match=r"steering.partner = \(0, 0, 3, 2\)"):
        _with(sedan, "steering", partner=(0, 0, 3, 2)).validate("car.toml")


@pytest.mark.parametrize("kw,message", [
    ({"pairs": ((0, 4),), "stiffness": (1e4,)},
     "anti_roll_bars[0].wheels = (0, 4) refers to a wheel outside 0..3"),
    ({"pairs": ((0, 1),), "stiffness": (-1e4,)}, "anti_roll_bars[0].stiffness = -10000.0"),
])
def test_anti_roll_bar_to_wheel_n_or_negative_stiffness_is_refused(sedan, kw, message):
    """Wheel indices run 0..n_wheels-1 (index n would read another vehicle's row in the
    compiled update); a negative stiffness would push the body into the roll."""
    with pytest.raises(VehicleConfigError, match=re.escape(message)):
        dataclasses.replace(sedan, anti_roll=vm.AntiRollParams(**kw)).validate("car.toml")
