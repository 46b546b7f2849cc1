"""Array layouts of the compiled vehicle update: parameter, state, command and output columns.

The update (``update.py``) is compiled with numba and reads plain float arrays, so every named
quantity has a column index here, used as ``wheel_params[w, RADIUS]`` or ``state.wheel[v, w,
OMEGA]``. :func:`pack` turns validated :class:`~traction.vehicle_model.VehicleParams` into a
:class:`Packed` tuple once per vehicle type; the frozen dataclasses stay the documented source of
truth and the packed arrays are derived from them.
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


# --- per-wheel parameters: wheel_params[w, col] ----------------------------------------------
N_WHEEL_PARAMS = _columns(
    "RADIUS", "MOI", "DAMPING", "MAX_BRAKE", "MAX_HANDBRAKE", "MAX_STEER", "TOE",
    "POSITION:3", "TRAVEL:3", "RAY_START:3", "FORCE_POINT:3",
    "MAX_COMPRESSION", "MAX_DROOP", "SPRING", "DAMPER", "SPRUNG_MASS", "BUMP_STOP",
    "CAMBER_REST", "CAMBER_COMPRESSION", "CAMBER_DROOP",
    "STEER_MULT", "PARTNER", "GROUP", "BASE_SPLIT",
    "TIRE_MODEL", "TIRE_TYPE", "FRICTION_VS_SLIP:6", "LAT_STIFF_X", "LAT_STIFF_Y",
    "LONG_STIFF_G", "CAMBER_STIFF_G", "ARCADE_LONG", "ARCADE_LAT", "GRIP", "CURVE_SET",
    "MF_LONG:4", "MF_LAT:4", "TRAIL", "MF_PEAK_LONG",
    "MF_PEAK_LAT", "STATIC_COEF", "CAP_COEF", "CUSTOM_INDEX", "INV_SPRUNG_MASS",
    "TURN_COEF:3", "TIRE_FORCE_HEIGHT", "TREAD_STIFF:2", "TREAD_DAMP:2", "CURVE_SLOPE:2",
    "GAIN_FLOOR")

# --- per-vehicle parameters: vehicle_params[col] ---------------------------------------------
N_VEHICLE_PARAMS = _columns(
    "N_GROUPS", "DIFF_TYPE", "LIMITED_SLIP", "DRIVE", "FRONT_REAR_SPLIT", "FRONT_LR_SPLIT",
    "REAR_LR_SPLIT", "FRONT_BIAS", "REAR_BIAS", "CENTRE_BIAS", "AIR_SHARE", "MIN_ON_GROUND",
    "TANK_SPECIAL", "FOUR_WHEELS:4",
    "ENGINE_MOI", "PEAK_TORQUE", "MAX_OMEGA", "DAMP_FULL", "DAMP_ENGAGED", "DAMP_DISENGAGED",
    "FINAL_RATIO", "SWITCH_TIME", "AUTOBOX", "LATENCY", "N_FORWARD",
    "CLUTCH_STRENGTH", "CLUTCH_IMPLICIT", "CLUTCH_ITERATIONS",
    "MAX_ANGLE", "ACKERMANN", "REFERENCE_X",
    "LOAD_MIN", "LOAD_MIN_FILTERED", "LOAD_MAX", "LOAD_MAX_FILTERED",
    "SUBSTEP_SPEED", "SUBSTEPS_LOW", "SUBSTEPS_HIGH",
    "KEEP_PITCH", "KEEP_ROLL", "HAS_CUSTOM", "CONTACT_RAYS", "CONTACT_HALF_ARC")

#: differential type codes (``DIFF_TYPE``)
DIFF_TYPES = ("direct", "four_wheel", "multi_wheel", "torque_vectoring", "tank")
DIRECT, FOUR_WHEEL, MULTI_WHEEL, TORQUE_VECTORING, TANK = range(5)
#: driven axles of a four_wheel differential (``DRIVE``)
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
        wheel: ``(n_wheels, N_WHEEL_PARAMS)`` per-wheel parameters.
        vehicle: ``(N_VEHICLE_PARAMS,)`` per-vehicle parameters.
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

# --- per-wheel scratch of one vehicle update (update.py) --------------------------------------
#: (padded to whole 64-byte cache lines per wheel row, 8 columns each: a row spanning part of a
#: line cost the Drift car's update ~10 %)
#: ``S_ROAD`` and ``S_ROAD_DAMP``: the tyre's torque on the wheel over a substep is
#: ``S_ROAD - S_ROAD_DAMP x omega`` at the substep's new spin (implicit, see ``tire_models``);
#: ``S_PRED``: the patch velocity (long, lat) the tyre predicts at the substep's start, ``S_EXT``
#: its change per substep from all but this tyre's own force change; ``S_TREAD``: tread spring
#: (long, lat), ``S_TREAD_INV_K``: 1 / its ``c h + d`` (long, lat); ``S_INV_MASS``: inverse
#: useful masses (long, lat); ``S_AFFINE``: the longitudinal force ``A + B omega r`` (A, B) of
#: the substep; ``S_F0``: the model's forces at the substep's kinematic slips (long, lat);
#: ``S_STIFF``: the model's stiffness at zero slip (N per unit slip, long and lat) this update;
#: ``S_OMEGA0``: the wheel's spin at the substep's start (a spin update done again starts there)
N_SCRATCH = _columns(
    "S_BRAKE", "S_V_LONG", "S_V_LAT", "S_MU_SURFACE", "S_INV_MASS:2", "S_ROAD", "S_ROAD_DAMP",
    "S_ACC_LONG", "S_ACC_LAT", "S_ACC_DRIVE", "S_ACC_MOMENT", "S_LOAD_FILTERED", "S_OVERTRAVEL",
    "S_COS_INCIDENCE", "S_RATE_SCALE", "S_V_PATCH:3", "S_DOWN:3", "S_ARM:3", "S_FWD:3",
    "S_LEFT:3", "S_PRED:2", "S_EXT:2", "S_TREAD:2", "S_TREAD_INV_K:2", "S_AFFINE:2", "S_F0:2",
    "S_STIFF:2", "S_MOMENT", "S_ROAD_RATIO", "S_OMEGA0")
#: per-group scratch of the drivetrain: spin, inertia, damping, road and brake torque, the
#: differential's share, new spin, wheel count
N_GROUP_SCRATCH = _columns("G_SPIN", "G_INERTIA", "G_DAMPING", "G_ROAD", "G_BRAKE", "G_SHARE",
                           "G_NEW", "G_COUNT")
