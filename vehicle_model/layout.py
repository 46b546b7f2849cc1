"""Array layouts of the compiled vehicle update: the packed parameters, and the state, command and
output columns.

The update (``update.py``) is compiled with numba. It reads the parameters by name from numpy
records (``pk.wheel[w].spring_strength``, ``pk.vehicle[0].peak_torque``), whose fields
``pack.py`` generates from the parameters' declarations; :func:`~traction.vehicle_model.pack.pack`
turns validated :class:`~traction.vehicle_model.VehicleParams` into a :class:`Packed` tuple once
per vehicle type. Its scratch is records too (:data:`SCRATCH`, :data:`GROUP_SCRATCH`). State,
commands, simulator inputs, outputs and the tyre inputs are float arrays whose columns are named
here, used as ``state.wheel[v, w, OMEGA]``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


def _columns(*names: str) -> int:
    """Define module constants ``NAME = index`` for consecutive columns; returns the count."""
    g = globals()
    i = 0
    for n in names:
        width = 1
        if ":" in n:
            n, w = n.split(":")
            width = int(w)
        g[n] = i
        i += width
    return i


#: differential type codes (``diff_type``)
DIFF_TYPES = ("direct", "four_wheel", "multi_wheel", "torque_vectoring", "tank")
DIRECT, FOUR_WHEEL, MULTI_WHEEL, TORQUE_VECTORING, TANK = range(5)
#: driven axles of a four_wheel differential (``drive``)
DRIVES = ("4wd", "fwd", "rwd")

# --- state ----------------------------------------------------------------------------------
#: tyre state (``tire_models``): the tread deflection (m, long and lat), and what the last update
#: saw and applied at the patch: its velocity (m/s, chassis axes) and mean force (N, long and lat
#: in that update's contact frame); ``HISTORY`` is 1 once they hold an update's (a reset's zeros
#: are none)
N_WHEEL_STATE = _columns("OMEGA", "DRIVE_TORQUE", "DEFLECTION:2", "PATCH_VELOCITY:3",
                         "PATCH_FORCE:2", "HISTORY")
N_VEHICLE_STATE = _columns("ENGINE_OMEGA", "SWITCH_TIMER", "AUTOBOX_TIMER")
N_GEAR_STATE = _columns("GEAR", "TARGET", "AUTO_SHIFT")

# --- commands -------------------------------------------------------------------------------
N_VEHICLE_COMMANDS = _columns("THROTTLE", "BRAKE", "HANDBRAKE", "STEER", "THRUST:2", "GEAR_UP",
                              "GEAR_DOWN", "TARGET_GEAR")
N_WHEEL_COMMANDS = _columns("WHEEL_TORQUE", "WHEEL_BRAKE", "WHEEL_STEER", "TORQUE_SPLIT")

# --- inputs from the simulator ----------------------------------------------------------------
N_KINEMATICS = _columns("K_POSITION:3", "K_ROTATION:9", "K_COM:3", "K_VELOCITY:3", "K_ANGULAR:3")
N_HIT = _columns("H_DIST", "H_NORMAL:3", "H_SURFACE")

# --- outputs ----------------------------------------------------------------------------------
# Over an update of ``dt`` with ``n`` wheel substeps: forces and torques (tyre forces, aligning
# moment, drive torque, engine torque) and the clutch slip are means over the substeps (what
# acts over ``dt``); slips and friction are the last substep's tyre inputs; spins, jounce, loads,
# gear and the rest are the values at the end of the update (see ``vehicle.VehicleOutputs``).
N_WHEEL_OUTPUTS = _columns(
    "O_SUSP_FORCE:3", "O_SUSP_POINT:3", "O_TIRE_FORCE:3", "O_TIRE_POINT:3", "O_CONTACT",
    "O_JOUNCE", "O_SPRING_FORCE", "O_LOAD", "O_NORMALISED_LOAD", "O_FRICTION", "O_LONG_SLIP",
    "O_LAT_SLIP", "O_LONG_FORCE", "O_LAT_FORCE", "O_MOMENT", "O_PATCH_SLIDE:2", "O_STEER",
    "O_HEADING:2", "O_CAMBER", "O_DRIVE_TORQUE")
N_VEHICLE_OUTPUTS = _columns("O_ENGINE_OMEGA", "O_ENGINE_TORQUE", "O_CLUTCH_SLIP", "O_GEAR",
                             "O_GEAR_RATIO", "O_THROTTLE", "O_EXTRA_TORQUE:3", "O_WRENCH:6")

# --- tyre model inputs (one row per wheel, see tire.TireInputs) ------------------------------
#: the TireInputs fields in order, then X_TAN_LAT_SLIP = tan(lateral slip), derived (the update
#: has it as v_lat / denominator, so the PhysX tyre needs no tan(atan(.)) without camber)
N_TIRE_INPUTS = _columns(
    "X_V_LONG", "X_V_LAT", "X_OMEGA", "X_LONG_SLIP", "X_LAT_SLIP", "X_CAMBER", "X_FRICTION",
    "X_SURFACE_FRICTION", "X_LOAD", "X_REST_LOAD", "X_NORMALISED_LOAD", "X_GRAVITY",
    "X_TAN_LAT_SLIP")


def column_view(buffer: str, col: int, width: int = 0, dtype=None, doc: str = ""):
    """A property viewing column ``col`` (``width`` > 0: columns ``col:col+width``) of the named
    buffer. Assigning the property writes into the buffer (broadcasting). With ``dtype`` (bool
    flags, integer gears of a float buffer) it returns a converted, read-only copy: an indexed
    write (``cmd.target_gear[1] = 3``) would change only the copy, so it raises instead; assign
    the whole column (``cmd.target_gear = gears``)."""
    index = (Ellipsis, slice(col, col + width)) if width else (Ellipsis, col)

    def get(self):
        view = getattr(self, buffer)[index]
        if dtype is None:
            return view
        out = view != 0 if dtype is bool else view.astype(dtype)
        out.flags.writeable = False
        return out

    def put(self, value):
        getattr(self, buffer)[index] = value

    return property(get, put, doc=doc)


class Packed(NamedTuple):
    """One vehicle type as arrays for the compiled update.

    Attributes:
        wheel: ``(n_wheels,)`` records of the per-wheel parameters
            (:func:`~traction.vehicle_model.pack.wheel_dtype`).
        vehicle: ``(1,)``: the record of the per-vehicle parameters
            (:func:`~traction.vehicle_model.pack.vehicle_dtype`); compiled code reads
            ``pk.vehicle[0].peak_torque``.
        torque_curve: engine ``(k, 2)`` (omega/max_omega, torque/peak).
        gear_ratios: ``(n_forward + 2,)`` indexed by gear + 1 (reverse, neutral, 1st...).
        shift_up, shift_down: autobox omega/max_omega thresholds per forward gear.
        bars: anti-roll bars ``(n_bars, 3)``: wheel a, wheel b, stiffness (N/m).
        families: curve-tyre family members ``(m, 3)``: family value, first point, point count.
        family_index: ``(n_sets, 2, 2)`` first member and member count of each set's long and
            lat family.
        points: curve points ``(p, 2)``.
    """

    wheel: np.ndarray
    vehicle: np.ndarray
    torque_curve: np.ndarray
    gear_ratios: np.ndarray
    shift_up: np.ndarray
    shift_down: np.ndarray
    bars: np.ndarray
    families: np.ndarray
    family_index: np.ndarray
    points: np.ndarray

# --- scratch of one vehicle update (update.py): records, one per wheel or wheel group ---------
def _record(*names: str) -> np.dtype:
    """A record of float fields (``"name:3"``: a 3-vector), its size padded to whole 64-byte cache
    lines (a row spanning part of a line cost the Drift car's update ~10 %)."""
    fields = []
    for n in names:
        name, _, width = n.partition(":")
        fields.append((name, "f8", (int(width),)) if width else (name, "f8"))
    plain = np.dtype(fields)
    return np.dtype({"names": plain.names, "formats": [plain.fields[n][0] for n in plain.names],
                     "offsets": [plain.fields[n][1] for n in plain.names],
                     "itemsize": -(-plain.itemsize // 64) * 64})


#: Per-wheel scratch. ``road`` and ``road_damp``: the tyre's torque on the wheel over a substep
#: is ``road - road_damp x omega`` at the substep's new spin (implicit, see ``tire_models``);
#: ``pred``: the patch velocity (long, lat) the tyre predicts at the substep's start, ``ext``
#: its change per substep from all but this tyre's own force change; ``tread``: tread spring
#: (long, lat), ``tread_inv_k``: 1 / its ``c h + d`` (long, lat); ``inv_mass``: inverse useful
#: masses (long, lat); ``affine``: the longitudinal force ``A + B omega r`` (A, B) of the
#: substep; ``force0``: the model's forces at the substep's kinematic slips (long, lat);
#: ``stiff``: the model's stiffness at zero slip (N per unit slip, long and lat) this update;
#: ``omega0``: the wheel's spin at the substep's start (a spin update done again starts there);
#: ``acc_*``: sums over the substeps of force x time (the update's means); ``down``, ``fwd``,
#: ``left``: the suspension line and the contact frame (world axes), ``arm``: CoM to patch,
#: ``v_patch``: the patch's velocity (world), ``cos_incidence``: the suspension line against
#: the ground normal, ``rate_scale``: 1 / that (clamped), ``overtravel``: compression past the
#: stop (m)
SCRATCH = _record(
    "brake", "v_long", "v_lat", "mu_surface", "inv_mass:2", "road", "road_damp",
    "acc_long", "acc_lat", "acc_drive", "acc_moment", "load_filtered", "overtravel",
    "cos_incidence", "rate_scale", "v_patch:3", "down:3", "arm:3", "fwd:3",
    "left:3", "pred:2", "ext:2", "tread:2", "tread_inv_k:2", "affine:2", "force0:2",
    "stiff:2", "moment", "road_ratio", "omega0")
#: Per-group scratch of the drivetrain: spin, inertia, damping, road and brake torque, the
#: differential's share, new spin, wheel count.
GROUP_SCRATCH = _record("spin", "inertia", "damping", "road", "brake", "share", "new_spin",
                        "count")
