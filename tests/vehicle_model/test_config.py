"""Vehicle files: presets load, bad files raise VehicleConfigError naming file and field."""

import dataclasses
import re
import tomllib
import warnings

import numpy as np
import pytest

from traction import vehicle_model as vm
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


def test_the_largest_wheel_in_range_gets_its_default_inertia(tmp_path):
    """Wheel mass and radius at their maxima (5000 kg, 3 m: a mining truck's tyre is ~5 t at
    2 m): the default 0.5 m r^2 = 22,500 kg m^2 is within moi's range (it was refused, naming
    wheel.moi, a key the file did not hold)."""
    p = _load(tmp_path, BASE.replace("radius = 0.3", "radius = 3.0\nmass = 5000.0"))
    np.testing.assert_allclose(p.wheels.moi, 0.5 * 5000.0 * 3.0**2)


@pytest.mark.parametrize("edit,field", [
    ("[defaults.suspension]\nspring_strength = -5.0", "defaults.suspension.spring_strength"),
    ("[chassis.extra]\nx = 1", "chassis.extra"),
    ("[defaults.tire]\nlat_stiff_y = 'stiff'", "defaults.tire.lat_stiff_y"),
    ("[defaults.suspension]\nmax_compression = 0.0\nmax_droop = 0.0", "max_droop"),
    ("[simulation]\nsubsteps_low = 0", "simulation.substeps_low"),
    ("[defaults.wheel]\nbogus = 1", "defaults.wheel.bogus"),
    ("[gearbox]\nforward_ratios = 3.5", "gearbox.forward_ratios = 3.5 must be a list of numbers"),
    ("[engine]\ntorque_curve = 1.0", "engine.torque_curve = 1.0 must be a list of [x, y] pairs"),
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


@pytest.mark.parametrize("text, message", [
    (BASE.replace("com = [0.0, 0.0, 0.3]", "com = [5.0, 0.0, 0.3]"),
     "car.toml: chassis.com = [5.0, 0.0, 0.3] lies outside the wheels' support polygon"),
    (BASE.replace("-0.8", "0.8").replace("1.2, 0.8", "2.0, 0.8"),    # all on the line y = 0.8
     "car.toml: wheels: wheel positions are collinear"),
])
def test_wheel_layout_errors_name_the_file(tmp_path, text, message):
    with pytest.raises(VehicleConfigError, match=re.escape(message)):
        _load(tmp_path, text)


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
        [spring] = [m for m in msgs if "spring alpha" in m]        # one naming every wheel
        assert "wheels front_left, front_right, rear_left, rear_right: spring alpha" in spring
    assert any("alpha" in str(x.message) for x in w)


@pytest.mark.parametrize("edit, message", [
    ("[sticky]\nspeed = 0.5", "[sticky]: removed: every tyre's tread spring holds a parked "
                              "vehicle up to friction x load"),
    ("[simulation]\nmin_long_slip_denominator = 4.0",
     "simulation.min_long_slip_denominator: removed: the slips are the physical ones at every "
     "speed, over max(|v|, |omega r|)"),
    ("[simulation]\nmin_lat_slip_denominator = 1.0",
     "simulation.min_lat_slip_denominator: removed: the slips are the physical ones"),
    ("[defaults.tire]\nmin_slip_speed = 1.0", "defaults.tire.min_slip_speed: removed: the slips"),
    ("[defaults.tire]\nclamps = 1", "defaults.tire.clamps: removed: the tyre's step is implicit "
                                    "in the slips and never carries a slip past zero"),
])
def test_keys_of_the_earlier_tyre_are_refused_with_what_replaced_them(tmp_path, edit, message):
    """The sticky tyre, the minimum slip denominators and the friction clamps went with the
    tyre's tread (tire_models): a file that sets them learns why and what to do, and a wheel's
    own table is read the same way."""
    with pytest.raises(VehicleConfigError, match=re.escape("car.toml: " + message)):
        _load(tmp_path, BASE + edit + "\n")
    with pytest.raises(VehicleConfigError, match=re.escape("car.toml: wheels[0].tire.clamps: removed")):
        _load(tmp_path, BASE.replace("position = [1.2, 0.8, 0.0]",
                                     "position = [1.2, 0.8, 0.0]\ntire = { clamps = 1 }", 1))


def test_wheel_far_outside_the_chassis_is_an_error(tmp_path):
    with pytest.raises(VehicleConfigError, match=r"wheels\[0\]\.position.*outside the chassis"):
        _load(tmp_path, BASE.replace("position = [1.2, 0.8, 0.0]", "position = [12.0, 0.8, 0.0]"))


def test_a_body_reaching_below_the_tyres_is_an_error(tmp_path):
    """BASE: wheel centres at z = 0, radius 0.3 -> contact at -0.3 m; a box 0.8 m tall centred at
    0.3 m has its bottom at -0.1 m (clears); centred at 0.05 m its bottom is at -0.35 m."""
    assert _load(tmp_path, BASE).chassis.body_centre[2] == 0.3
    with pytest.raises(VehicleConfigError, match=re.escape(
            "car.toml: chassis: the body's bottom (body_centre z - body_size z / 2 = -0.35 m) lies "
            "0.05 m below the tyres' contact points at rest (wheel centre z - radius = -0.3 m)")):
        _load(tmp_path, BASE.replace("body_centre = [0.0, 0.0, 0.3]", "body_centre = [0.0, 0.0, 0.05]"))


@pytest.mark.parametrize("edit,message", [
    ('[differential]\ntype = "four_wheel"\n'
     'wheels = ["front_left", "front_right", "rear_left", "rear_left"]',
     "differential.wheels names 'rear_left' twice"),
    ('[differential]\ntype = "multi_wheel"\ndriven = ["rear_left", "rear_left"]',
     "differential.driven names 'rear_left' twice"),
])
def test_duplicate_wheel_references_in_a_file_are_errors(tmp_path, edit, message):
    text = _named(BASE) + "\n" + edit + "\n"
    with pytest.raises(VehicleConfigError, match=re.escape("car.toml: " + message)):
        _load(tmp_path, text)


@pytest.mark.parametrize("edit,message", [
    ('type = "four_wheel"\ndrive = "4wd"\ndriven = ["rear_left", "rear_right"]',
     "differential.driven is not read by type = 'four_wheel', only by multi_wheel and "
     "torque_vectoring"),
    ('type = "multi_wheel"\ndrive = "rwd"', "differential.drive is not read by type = "
     "'multi_wheel', only by four_wheel"),
    ('type = "tank"\ndriven = ["rear_left"]', "differential.driven is not read by type = 'tank'"),
    ('kind = "open"', "differential.kind is not read by type = 'direct', only by four_wheel"),
])
def test_a_differential_key_its_type_does_not_read_is_an_error(tmp_path, edit, message):
    """A four_wheel differential given ``driven = [rears]`` drove all four wheels without a
    word, and a multi_wheel one given ``drive = "rwd"`` split equally over all four."""
    with pytest.raises(VehicleConfigError, match=re.escape(f"car.toml: {message}")):
        _load(tmp_path, _named(BASE) + "\n[differential]\n" + edit + "\n")
    kind = re.search(r'type = "(\w+)"', edit)
    _load(tmp_path, _named(BASE) + "\n[differential]\n" + (kind[0] if kind else "") + "\n")


@pytest.mark.parametrize("key", ["rear_bias = 1.0", "centre_bias = 2.0",
                                 "rear_left_right_split = 0.6", "front_left_right_split = 0.5"])
def test_a_locked_differential_refuses_the_bias_and_left_right_split_it_does_not_read(
        tmp_path, key):
    """A spool's two wheels turn as one: a bias or a left/right split given to it would do
    nothing, so the file is refused naming the key; front_rear_split (the 4wd centre) is read."""
    head = _named(BASE) + '\n[differential]\ntype = "four_wheel"\nkind = "locked"\n'
    with pytest.raises(VehicleConfigError, match=re.escape(
            f"car.toml: differential.{key.split()[0]}: not read by kind = 'locked'")):
        _load(tmp_path, head + key + "\n")
    p = _load(tmp_path, head + 'drive = "4wd"\nfront_rear_split = 0.4\n')
    assert p.differential.kind == "locked" and p.groups.shape == (4, 2)


def test_four_wheel_references_of_another_count_are_shown(tmp_path):
    with pytest.raises(VehicleConfigError, match=re.escape(
            "car.toml: differential.wheels = ['front_left', 'front_right', 'rear_left'] has 3 "
            "names; needs 4")):
        _load(tmp_path, _named(BASE) + '\n[differential]\ntype = "four_wheel"\nwheels = '
                                       '["front_left", "front_right", "rear_left"]\n')


def _named(text, names=("front_left", "front_right", "rear_left", "rear_right")):
    parts = text.split("[[wheels]]\n")
    return parts[0] + "".join(f'[[wheels]]\nname = "{n}"\n{w}'
                              for n, w in zip(names, parts[1:], strict=True))


def test_duplicate_wheel_names_are_errors(tmp_path, sedan):
    with pytest.raises(VehicleConfigError, match=re.escape(
            "car.toml: wheels[3].name = 'rear_left' is already the name of wheels[2]")):
        _load(tmp_path, _named(BASE, ("front_left", "front_right", "rear_left", "rear_left")))
    names = ("fl", "fr", "rl", "rl")
    with pytest.raises(VehicleConfigError, match=r"wheel name 'rl' is used by wheels \[2, 3\]"):
        dataclasses.replace(sedan, wheel_names=names).validate("car.toml")


@pytest.mark.parametrize("edit,message", [
    ("[defaults.suspension]\ntravel_direction = [0.0, 0.0, 1.0]",
     "suspension.travel_direction[0] = [0.0, 0.0, 1.0] points 180 deg away from straight down "
     "(chassis -z); allowed up to 60 deg"),
    ("[defaults.suspension]\ntravel_direction = [1.0, 0.0, 0.0]",
     "suspension.travel_direction[0] = [1.0, 0.0, 0.0] points 90 deg away from straight down"),
    ("[steering]\nmax_angle = 0.6\n[[wheels]]\nposition = [2.0, 0.0, 0.0]\nsteer_multiplier = 1.0",
     "wheels[4] ('wheel4'): steering.multiplier = 1 (wheels[4].steer_multiplier) but "
     "wheel.max_steer = 0 rad limits its steer angle to 0: it never steers"),
    ("[[wheels]]\nposition = [2.0, 0.0, 0.0]\nsteer_multiplier = 1.0\nwheel = { max_steer = 0.5 }",
     "steering.max_angle = 0 rad but wheels wheel4 have a steering.multiplier (steer_multiplier): "
     "the steer command turns no wheel"),
    ("[tire_load_filter]\nmin_filtered_normalised_load = 2.0\nmax_filtered_normalised_load = 0.5",
     "tire_load_filter.min_filtered_normalised_load = 2 must not exceed "
     "max_filtered_normalised_load = 0.5: the filter must not give a more loaded tyre less load"),
])
def test_config_pitfalls_are_errors_naming_the_fields(tmp_path, edit, message):
    """Definitions that load but cannot work: a suspension ray cast up or sideways never finds
    the ground; a steer multiplier with a 0 limit or a 0 steering angle never steers; a load
    filter that falls with load takes grip from the loaded wheels."""
    with pytest.raises(VehicleConfigError, match=re.escape("car.toml: " + message)):
        _load(tmp_path, BASE + edit + "\n")


def test_sound_variants_of_the_pitfalls_load(tmp_path):
    """The neighbours of the refused definitions: a leaning strut, a steered wheel with its
    limits, a flat load filter."""
    p = _load(tmp_path, BASE + "[steering]\nmax_angle = 0.6\n[defaults.suspension]\n"
              "travel_direction = [0.0, 0.5, -0.8660254]\n[tire_load_filter]\n"
              "min_filtered_normalised_load = 1.0\nmax_filtered_normalised_load = 1.0\n"
              "[[wheels]]\nposition = [2.0, 0.0, 0.0]\nsteer_multiplier = 1.0\n"
              "wheel = { max_steer = 0.5 }\n")
    assert p.steering.multiplier.tolist() == [0, 0, 0, 0, 1]


@pytest.mark.parametrize("edit, message", [
    ("[defaults.tire]\nmodel = 2.5", "defaults.tire.model = 2.5 is not a whole number"),
    ("[defaults.tire]\ntire_type = 0.5", "defaults.tire.tire_type = 0.5 is not a whole number"),
    ("[gearbox]\nautobox = 0.5", "gearbox.autobox = 0.5 is not a whole number"),
    ("[tire_curves.default]\nlong_slip_angles = [0.0]\nlong = [[[0.0, 0.0], [1.0, 1.0]]]\n"
     "lat_slip_ratios = [0.0]\nlat = [[[0.0, 0.0], [1.0, 1.0]]]",
     "tire_curves.default: the name of the shipped set"),
    ("[tire_curves.mine]\nlong_slip_angles = [0.0, nan]\n"
     "long = [[[0.0, 0.0], [1.0, 1.0]], [[0.0, 0.0], [1.0, 1.0]]]\n"
     "lat_slip_ratios = [0.0]\nlat = [[[0.0, 0.0], [1.0, 1.0]]]",
     "tire_curves.mine: family indices [0.0, nan] must increase"),
    ("[defaults.tire]\ncustom = ['foo']", "tire.custom = ['foo']; allowed: the name of a "
     "registered tyre function"),
    ("[defaults.tire]\ncurve_set = 1", "defaults.tire.curve_set = 1 is not a curve set; "
     "allowed: 'default' (0)"),
])
def test_codes_curve_sets_and_custom_names_are_checked(tmp_path, edit, message):
    """A fractional code would pick one model in the compiled update and another in the
    Python checks (a curve tyre once ran without its clamp masses: no force); a user set named
    'default' was silently replaced by the shipped one; a NaN family index passed."""
    with pytest.raises(VehicleConfigError, match=re.escape("car.toml: " + message)):
        _load(tmp_path, BASE + edit + "\n")


def test_a_file_that_is_not_text_names_the_file(tmp_path):
    f = tmp_path / "car.toml"
    f.write_bytes(b"name = \"\xff\xfe\"\n")
    with pytest.raises(VehicleConfigError, match=re.escape(f"{f}: not a UTF-8 text file")):
        load_vehicle(f)


def test_vehicles_changed_in_python_get_the_wheel_placement_check(sedan):
    """Wheel placement is checked by VehicleParams.validate, so a vehicle made with
    dataclasses.replace is held to it as a file is. (The mass balance is a file check: in
    Python a chassis heavier than its sprung masses is a payload, see test_body_motion.)"""
    heavy = dataclasses.replace(sedan, chassis=dataclasses.replace(sedan.chassis, mass=4500.0))
    heavy.validate("heavy")
    pos = sedan.suspension.position.copy()
    pos[0, 0] = 9.0
    far = dataclasses.replace(sedan, suspension=dataclasses.replace(sedan.suspension,
                                                                    position=pos))
    with pytest.raises(VehicleConfigError, match=r"wheels\[0\].position = \[9.0, "):
        far.validate()


# In vehicle files: TOML booleans are not numbers (``mass = true`` read
# as 1 kg went unseen), and a three-wheeled vehicle loads (the documented minimum; refusing it
# went unseen: only compute_sprung_masses was tested with three wheels).
def _vehicle(wheels, **chassis):
    return {"chassis": {"mass": 1000.0, "com": [0.0, 0.0, 0.3], "body_size": [4.0, 1.8, 0.8],
                        "body_centre": [0.0, 0.0, 0.3], **chassis},
            "defaults": {"wheel": {"radius": 0.3}},
            "wheels": [{"position": list(w)} for w in wheels]}


FOUR = [(1.2, 0.8, 0.0), (1.2, -0.8, 0.0), (-1.2, 0.8, 0.0), (-1.2, -0.8, 0.0)]


@pytest.mark.parametrize("where, value, message", [
    ("chassis", True, "x.toml: chassis.mass = True must be a number; allowed (0, 1e+06] kg"),
    ("wheel", False, "x.toml: wheels[0].wheel.radius = False must be a number; allowed [0.05, 3] m"),
])
def test_a_toml_boolean_is_not_a_number(where, value, message):
    data = _vehicle(FOUR)
    if where == "chassis":
        data["chassis"]["mass"] = value
    else:
        data["wheels"][0]["wheel"] = {"radius": value}
    with pytest.raises(vm.VehicleConfigError, match=re.escape(message)):
        vm.parse_vehicle(data, "x.toml")


def test_three_wheels_load_and_two_are_refused():
    p = vm.parse_vehicle(_vehicle([(1.2, 0.0, 0.0), (-1.0, 0.8, 0.0), (-1.0, -0.8, 0.0)],
                                  com=[-0.2, 0.0, 0.3]), "trike.toml")
    assert p.n_wheels == 3 and abs(sum(p.suspension.sprung_mass) - 1000.0) < 1e-6
    with pytest.raises(vm.VehicleConfigError, match=re.escape(
            "x.toml: wheels: a vehicle needs at least 3 [[wheels]], got 2")):
        vm.parse_vehicle(_vehicle(FOUR[:2]), "x.toml")


# A new user's first hour (issue 57): a mass in tonnes loaded and ran, the warnings blaming the
# dampers and springs; [defaults] did not name the key it refused; limited-slip keys on an open
# differential passed without a word.
@pytest.mark.parametrize("mass, inertia, message", [
    (2.2, None, "chassis.mass = 2.2 kg in a body of 4 x 1.8 x 0.8 m (chassis.body_size) is "
                "0.382 kg/m^3 on average; allowed 5 to 20000 kg/m^3 (a mass in tonnes? give kg)"),
    (900_000.0, None, "is 1.56e+05 kg/m^3 on average; allowed 5 to 20000 kg/m^3 (a mass in "
                      "grams? give kg)"),
    (2.2, [450.0, 1700.0, 1800.0], "0.382 kg/m^3"),         # the density is checked first
    (1000.0, [4.5e5, 1.7e6, 1.8e6], "chassis.inertia x = 450000 kg m^2 with chassis.mass = 1000 "
                                    "kg puts the mass 21.2 m from the CoM on average"),
])
def test_a_mass_or_inertia_in_other_units_is_an_error_naming_them(tmp_path, mass, inertia,
                                                                  message):
    """The body's mean density must lie between 5 kg/m^3 (the presets': 250-650) and 20 000
    (denser than lead); the radius of gyration sqrt(I / m) within the vehicle's reach (no mass
    distribution inside the vehicle gives more: I = sum m r^2 <= m r_max^2)."""
    text = BASE.replace("mass = 1000.0", f"mass = {mass}")
    if inertia is not None:
        text = text.replace("[chassis]\n", f"[chassis]\ninertia = {inertia}\n")
    with pytest.raises(VehicleConfigError, match=re.escape("car.toml: ") + ".*" +
                       re.escape(message)):
        _load(tmp_path, text)


def test_the_limits_of_a_plausible_mass_load():
    """The presets' inertias reach 56 % of the vehicle's extent as radius of gyration; a light
    vehicle at 5 kg/m^3 and a heavy one at 20 000 load."""
    for name in preset_names():
        load_vehicle(name)
    volume = 4.0 * 1.8 * 0.8
    for mass in (5.0 * volume, 20_000.0 * volume):
        text = BASE.replace("mass = 1000.0", f"mass = {mass}")
        assert parse_vehicle(tomllib.loads(text), "car.toml").chassis.mass == mass


def test_an_unknown_defaults_table_is_named(tmp_path):
    with pytest.raises(VehicleConfigError, match=re.escape(
            "car.toml: unknown key(s) defaults.tyre, defaults.wheels; [defaults] may only hold "
            "wheel, suspension, tire")):
        _load(tmp_path, BASE + "[defaults.wheels]\nmass = 20.0\n[defaults.tyre]\ngrip = 1.0\n")


@pytest.mark.parametrize("keys", [["rear_bias"], ["front_bias", "centre_bias"]])
def test_limited_slip_keys_on_an_open_differential_are_errors(tmp_path, keys):
    """An open differential reads no bias: given one, the file meant a limited slip."""
    edit = ('[differential]\ntype = "four_wheel"\ndrive = "4wd"\nkind = "open"\n'
            + "".join(f"{k} = 1.5\n" for k in keys))
    with pytest.raises(VehicleConfigError, match=re.escape(
            f"car.toml: {', '.join(f'differential.{k}' for k in keys)}: read by a limited-slip "
            "differential only, and kind = 'open'")):
        _load(tmp_path, _named(BASE) + "\n" + edit)
    lsd = _load(tmp_path, _named(BASE) + "\n" + edit.replace('"open"', '"limited_slip"'))
    assert lsd.differential.kind == "limited_slip"
