"""Gymnasium environments (registered on import) and the MuJoCo coupling of the vehicle model.

``import traction.envs`` registers ``Traction/Climb6x6-v1``, ``Traction/Drift-v1`` and
``Traction/TankTurn-v1`` (each also as a native vector environment:
``gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")``);
:class:`VehicleSim` is the simulator bridge they share (a row of a :class:`World`);
:func:`mujoco_timers` switches MuJoCo's stage timers off for speed (process-wide).
"""

# traction.scenes picks a headless GL backend (MUJOCO_GL=egl when unset and there is no
# display); it must run before anything imports mujoco, which reads the variable once.
import traction.scenes  # noqa: F401  isort: skip

from gymnasium.envs.registration import register, registry  # noqa: E402

from .physics import mujoco_timers  # noqa: E402
from .vector import TractionVectorEnv, make_vector  # noqa: E402
from .vehicle_sim import VehicleSim  # noqa: E402
from .world import World  # noqa: E402

ENV_IDS = ("Traction/Climb6x6-v1", "Traction/Drift-v1", "Traction/TankTurn-v1")

for _id, _entry, _steps in (
        ("Traction/Climb6x6-v1", "traction.envs.climb6x6_v1:Climb6x6Env", 1500),
        ("Traction/Drift-v1", "traction.envs.drift_v1:DriftEnv", 750),
        ("Traction/TankTurn-v1", "traction.envs.tank_turn_v1:TankTurnEnv", 400)):
    if _id not in registry:
        register(id=_id, entry_point=_entry, max_episode_steps=_steps,
                 vector_entry_point=_entry.split(":")[0] + ":vector_env")

__all__ = ["ENV_IDS", "TractionVectorEnv", "VehicleSim", "World", "make_vector", "mujoco_timers"]
