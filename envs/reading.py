"""What a task reads off the chassis once per control step, as plain Python floats.

A :class:`ChassisReading` is built from the kinematics row the compiled physics loop writes after
its last substep (``VehicleSim.now``), so one step's observation, reward terms, termination and
info all see the same values without going back to MjData. The arithmetic on these 3-vectors is
done on floats: each numpy call costs ~1 us of overhead, more than the arithmetic itself.
"""

from __future__ import annotations

import math

from traction.vehicle_model import layout as L

if (L.K_POSITION, L.K_ROTATION, L.K_COM, L.K_VELOCITY, L.K_ANGULAR, L.N_KINEMATICS) != \
        (0, 3, 12, 15, 18, 21):
    raise ImportError("ChassisReading unpacks the kinematics row in layout order; update it")


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

    def __init__(self, row):
        (x, y, z, r0, r1, r2, r3, r4, r5, r6, r7, r8, cx, cy, cz, vx, vy, vz, wx, wy, wz) = \
            row.tolist()                           # the layout.K_* columns, in order
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
