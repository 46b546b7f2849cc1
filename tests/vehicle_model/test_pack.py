"""The packed parameter records: generated from the fields declared ``packed=``, each one read by
the compiled code, filled with the parameters' values."""

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from traction import vehicle_model as vm
from traction.vehicle_model import pack

ROOT = Path(vm.__file__).resolve().parent.parent
#: the compiled sources that read the records (pack.py only writes them)
READERS = [p for p in sorted((ROOT / "vehicle_model").glob("*.py")) if p.name != "pack.py"] + [
    ROOT / "envs" / "physics.py"]


def _marked(cls):
    return {(f.name if f.metadata["packed"] is True else f.metadata["packed"]): f
            for f in dataclasses.fields(cls) if f.metadata.get("packed")}


def test_every_field_marked_packed_is_a_record_field_and_every_record_field_is_read():
    wheel, vehicle = pack.wheel_dtype(), pack.vehicle_dtype()
    marked = {}
    for _, cls in pack._WHEEL_PARTS + pack._vehicle_parts():
        marked |= _marked(cls)
    missing = sorted(n for n in marked if n not in wheel.names and n not in vehicle.names)
    assert not missing, f"declared packed= but not in a record: {missing}"
    source = "\n".join(p.read_text() for p in READERS)
    unread = sorted(n for n in (*wheel.names, *vehicle.names)
                    if not re.search(rf"\.{n}\b|\[\"{n}\"\]", source))
    assert not unread, f"packed but read by no compiled code: {unread}"


@pytest.mark.parametrize("preset", ["sedan", "truck_6x6", "tank"])
def test_the_records_hold_the_parameters_values(preset):
    p = vm.load_vehicle(preset)
    wheel, vehicle = p.packed.wheel, p.packed.vehicle[0]
    np.testing.assert_array_equal(wheel["spring_strength"], p.suspension.spring_strength)
    np.testing.assert_array_equal(wheel["position"], p.suspension.position)
    np.testing.assert_array_equal(wheel["friction_vs_slip"],
                                  p.tires.friction_vs_slip.reshape(p.n_wheels, 6))
    np.testing.assert_array_equal(wheel["inv_sprung_mass"], 1.0 / p.suspension.sprung_mass)
    assert vehicle["engine_moi"] == p.engine.moi and vehicle["peak_torque"] == p.engine.peak_torque
    assert vehicle["diff_type"] == vm.layout.DIFF_TYPES.index(p.differential.type)
    assert vehicle["n_groups"] == p.groups.shape[1]
    assert not wheel.flags.writeable and not p.packed.vehicle.flags.writeable


def test_a_name_packed_twice_is_refused():
    with pytest.raises(TypeError, match="declared twice: \\['radius'\\]"):
        pack._dtype([pack._Entry("radius", 1, None), pack._Entry("radius", 1, None)])
