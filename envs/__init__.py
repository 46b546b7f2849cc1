"""Gymnasium environments and the MuJoCo coupling of the vehicle model.

The three task environments (Climb6x6, Drift, TankTurn) are registered here once they exist;
for now the package holds the simulator bridge :class:`VehicleSim`.
"""

from .vehicle_sim import VehicleSim

__all__ = ["VehicleSim"]
