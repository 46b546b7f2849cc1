"""Pure vehicle dynamics (numpy only): suspension, wheels, tyres, batched over vehicles.

Never imports mujoco, gymnasium or other traction packages; the simulator coupling lives in
``traction.envs``. Typical use::

    from traction.vehicle_model import load_vehicle, VehicleState, step
    params = load_vehicle("sedan")
    state = VehicleState.zeros(params, n_vehicles=8)
"""

from .chassis import ChassisParams
from .config import load_vehicle, parse_vehicle, preset_names
from .errors import VehicleConfigError
from .sticky import StickyParams
from .surface import FrictionTable
from .suspension import SuspensionParams, compute_sprung_masses
from .tire import TireLoadFilter, TireParams
from .vehicle import (
    ChassisKinematics,
    GroundHits,
    SimulationParams,
    VehicleOutputs,
    VehicleParams,
    VehicleState,
    WheelInputs,
    check_timestep,
    step,
)
from .wheel import WheelParams

__all__ = [
    "ChassisKinematics", "ChassisParams", "FrictionTable", "GroundHits", "SimulationParams",
    "StickyParams", "SuspensionParams", "TireLoadFilter", "TireParams", "VehicleConfigError",
    "VehicleOutputs", "VehicleParams", "VehicleState", "WheelInputs", "WheelParams",
    "check_timestep", "compute_sprung_masses", "load_vehicle", "parse_vehicle", "preset_names",
    "step",
]
