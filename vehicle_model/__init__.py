"""Pure vehicle dynamics (numpy only): suspension, wheels, tyres, batched over vehicles.

Never imports mujoco, gymnasium or other traction packages; the simulator coupling lives in
``traction.envs``. Typical use::

    from traction.vehicle_model import load_vehicle, VehicleState, step
    params = load_vehicle("sedan")
    state = VehicleState.zeros(params, n_vehicles=8)
"""

from .antiroll import AntiRollParams
from .chassis import ChassisParams
from .clutch import ClutchParams
from .config import load_vehicle, parse_vehicle, preset_names, vehicle_params
from .differential import DifferentialParams
from .engine import EngineParams
from .errors import VehicleConfigError
from .gearbox import GearboxParams, GearboxState
from .steering import SteeringParams
from .surface import FrictionTable
from .suspension import SuspensionParams, compute_sprung_masses
from .timestep import check_timestep
from .tire import MODELS as TIRE_MODELS
from .tire import TireInputs, TireLoadFilter, TireParams
from .tire_curve import CurveSet
from .tire_custom import register_tire_model
from .update import step
from .vehicle import (
    ChassisKinematics,
    Commands,
    GroundHits,
    SimulationParams,
    TireForceScaling,
    VehicleOutputs,
    VehicleParams,
    VehicleState,
)
from .wheel import WheelParams

__all__ = [
    "TIRE_MODELS", "CurveSet", "TireForceScaling", "TireInputs", "register_tire_model",
    "AntiRollParams", "ChassisKinematics", "ChassisParams", "ClutchParams", "Commands",
    "DifferentialParams", "EngineParams", "FrictionTable", "GearboxParams", "GearboxState",
    "GroundHits", "SimulationParams", "SteeringParams", "SuspensionParams",
    "TireLoadFilter", "TireParams", "VehicleConfigError", "VehicleOutputs", "VehicleParams",
    "VehicleState", "WheelParams", "check_timestep", "compute_sprung_masses", "load_vehicle",
    "parse_vehicle", "preset_names", "step", "vehicle_params",
]
