"""Preset vehicles with some parameters changed, for the scenario tests (imported by them: pytest
puts this folder on the import path)."""

import dataclasses

import numpy as np

from traction import vehicle_model as vm


def variant(preset: str, **parts) -> vm.VehicleParams:
    """Preset ``preset`` with fields of its parts replaced: ``variant("sedan_rwd",
    gearbox={"autobox": 0.0})``."""
    p = vm.load_vehicle(preset)
    return dataclasses.replace(p, **{k: dataclasses.replace(getattr(p, k), **v)
                                     for k, v in parts.items()})


def with_model(preset: str, model: str, **tire_kw) -> vm.VehicleParams:
    """Preset ``preset`` with tyre model ``model`` on every wheel and the tyre fields
    ``tire_kw`` (one value, for every wheel)."""
    p = vm.load_vehicle(preset)
    n = p.n_wheels
    tires = dataclasses.replace(p.tires, model=np.full(n, float(vm.TIRE_MODELS.index(model))),
                                **{k: np.full(n, v) for k, v in tire_kw.items()})
    return dataclasses.replace(p, tires=tires)
