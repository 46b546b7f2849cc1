"""What a control step reads off the vehicle: the chassis reading the task's methods get, and the
vehicle diagnostics every step puts in its info.

A :class:`ChassisReading` is built from the kinematics row the compiled physics loop writes after
its last substep (``VehicleSim.now``), so one step's observation, reward terms, termination and
info all see the same values without going back to MjData. The arithmetic on these 3-vectors is
done on plain Python floats: a numpy call's overhead is larger than the arithmetic itself.

The info's diagnostics, for one world (:func:`diagnostics`, the single env) or all the worlds
of a vector env at once (:func:`batch_diagnostics`, arrays over the worlds, with no dict per
world):

| key | value | unit |
|---|---|---|
| speed | CoM speed | m/s |
| gear | engaged gear (-1 reverse, 0 neutral, also while a change is in progress) | - |
| engine_rpm | engine speed | rev/min |
| long_slip, lat_slip | per wheel: slip ratio, slip angle | -, rad |
| tire_load | per wheel: tyre load | N |
| wheel_contact | per wheel: on the ground | bool |

Both read the same arrays (the chassis row and the vehicle outputs) with the same arithmetic, so
a vector env's info holds, bit for bit, the values the single env's info would
(``tests/envs/test_vector_native.py``).
"""

from __future__ import annotations

import math

import numpy as np

from traction.vehicle_model import layout as L

if [(n, L.KINEMATICS.fields[n][0].shape) for n in L.KINEMATICS.names] != [
        ("position", (3,)), ("rotation", (9,)), ("com", (3,)), ("velocity", (3,)),
        ("angular_velocity", (3,))] or L.floats(np.zeros(1, L.KINEMATICS)).dtype != np.float64:
    raise ImportError("ChassisReading unpacks a kinematics record's floats in layout order; "
                      "update it")


class ChassisReading:
    """Chassis pose and velocities at one instant (SI units).

    Attributes:
        origin: chassis frame origin, world (m), ``(x, y, z)``.
        com: centre of mass, world (m).
        rot: world-from-chassis rotation, row-major 9 floats (``rot[3 i + j] = R[i, j]``; the
            columns are the chassis x (forward), y (left), z (up) axes in the world).
        velocity, angular: CoM velocity (m/s) and angular velocity (rad/s), world frame.
        velocity_body, angular_body: the same in the chassis frame.
        speed: CoM speed (m/s). yaw: heading of the chassis x axis in the world xy plane (rad).
        tilt: angle between the chassis up axis and world up (rad).
    """

    __slots__ = ("origin", "com", "rot", "velocity", "angular", "velocity_body", "angular_body",
                 "speed", "yaw", "tilt")

    def __init__(self, k):
        """From a kinematics record ``k`` (``layout.KINEMATICS``), read as its 21 floats at once
        (a tenth of the time of reading its fields one by one)."""
        (x, y, z, r0, r1, r2, r3, r4, r5, r6, r7, r8, cx, cy, cz, vx, vy, vz, wx, wy, wz) = \
            np.frombuffer(k, np.float64).tolist()
        self.origin, self.com = (x, y, z), (cx, cy, cz)
        self.rot = (r0, r1, r2, r3, r4, r5, r6, r7, r8)
        self.velocity, self.angular = (vx, vy, vz), (wx, wy, wz)
        self.velocity_body = (r0 * vx + r3 * vy + r6 * vz, r1 * vx + r4 * vy + r7 * vz,
                              r2 * vx + r5 * vy + r8 * vz)
        self.angular_body = (r0 * wx + r3 * wy + r6 * wz, r1 * wx + r4 * wy + r7 * wz,
                             r2 * wx + r5 * wy + r8 * wz)
        self.speed = math.sqrt(vx * vx + vy * vy + vz * vz)
        self.yaw = math.atan2(r3, r0)
        self.tilt = math.acos(min(max(r8, -1.0), 1.0))

    def to_body(self, x) -> tuple[float, float, float]:
        """A world-frame vector in the chassis frame (``R^T x``)."""
        r = self.rot
        return (r[0] * x[0] + r[3] * x[1] + r[6] * x[2],
                r[1] * x[0] + r[4] * x[1] + r[7] * x[2],
                r[2] * x[0] + r[5] * x[1] + r[8] * x[2])


#: per-wheel diagnostics and their output fields
_WHEEL = (("long_slip", "long_slip"), ("lat_slip", "lat_slip"), ("tire_load", "load"))


def diagnostics(c: ChassisReading, wheel: np.ndarray, vehicle: np.ndarray) -> dict:
    """One world's diagnostics from its reading and its output records (``(n_wheels,)``, one):
    Python scalars and fresh per-wheel arrays."""
    out = {"speed": c.speed, "gear": int(vehicle["gear"]),
           "engine_rpm": float(vehicle["engine_omega"]) * 60 / (2 * math.pi)}
    for key, name in _WHEEL:
        out[key] = wheel[name].copy()
    out["wheel_contact"] = wheel["in_contact"] > 0.5
    return out


def batch_diagnostics(now: np.ndarray, wheel: np.ndarray, vehicle: np.ndarray) -> dict:
    """Every world's diagnostics as arrays over the worlds, from the batch's kinematics records
    ``(n,)`` and output records ``(n, n_wheels)``, ``(n,)``: the dtypes and
    shapes Gymnasium's info batching gives for :func:`diagnostics`' values (float64, int64,
    ``(n, n_wheels)`` float64 and bool)."""
    velocity = now["velocity"]
    vx, vy, vz = velocity[:, 0], velocity[:, 1], velocity[:, 2]
    out = {"speed": np.sqrt(vx * vx + vy * vy + vz * vz),     # as ChassisReading.speed
           "gear": vehicle["gear"].astype(np.int64),
           "engine_rpm": vehicle["engine_omega"] * 60 / (2 * math.pi)}
    for key, name in _WHEEL:
        out[key] = wheel[name].copy()
    out["wheel_contact"] = wheel["in_contact"] > 0.5
    return out
