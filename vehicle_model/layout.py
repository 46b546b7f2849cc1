"""Array layouts of the compiled vehicle update: the packed parameters, and the state, command,
input and output records.

The update (``update.py``) is compiled with numba. It reads the parameters by name from numpy
records (``pk.wheel[w].spring_strength``, ``pk.vehicle[0].peak_torque``), whose fields
``pack.py`` generates from the parameters' declarations; :func:`~traction.vehicle_model.pack.pack`
turns validated :class:`~traction.vehicle_model.VehicleParams` into a :class:`Packed` tuple once
per vehicle type. State, commands, simulator inputs, outputs, the tyre inputs and the update's
scratch are records declared here: ``state[w].omega`` in compiled code.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


def _record(*names: str, dtype: str = "f8", pad: bool = False) -> np.dtype:
    """A record of ``dtype`` fields (``"name:3"``: a 3-vector), in order. ``pad``: its size padded
    to whole 64-byte cache lines (the update's scratch: a row spanning part of a line cost the
    Drift car's update ~10 %); otherwise packed, so an array of records is laid out as the
    float rows it replaced."""
    fields = []
    for n in names:
        name, _, width = n.partition(":")
        fields.append((name, dtype, (int(width),)) if width else (name, dtype))
    plain = np.dtype(fields, align=True)
    if not pad:
        return plain
    return np.dtype({"names": plain.names, "formats": [plain.fields[n][0] for n in plain.names],
                     "offsets": [plain.fields[n][1] for n in plain.names],
                     "itemsize": -(-plain.itemsize // 64) * 64}, align=True)


#: differential type codes (``diff_type``)
DIFF_TYPES = ("direct", "four_wheel", "multi_wheel", "torque_vectoring", "tank")
DIRECT, FOUR_WHEEL, MULTI_WHEEL, TORQUE_VECTORING, TANK = range(5)
#: driven axles of a four_wheel differential (``drive``)
DRIVES = ("4wd", "fwd", "rwd")

# Arrays of these records lead with ``(n_vehicles, n_wheels)`` (per wheel) or ``(n_vehicles,)``
# (per vehicle); compiled code reads ``state[w].omega``, numpy code ``state.wheel["omega"]`` or the
# named views of ``vehicle.py``. Field names are those views' names.

# --- state ----------------------------------------------------------------------------------
#: Wheel state. ``tread_deflection``: the tread's deflection (m, long and lat); what the last
#: update saw and applied at the patch: ``patch_velocity`` (m/s, chassis axes) and
#: ``patch_force`` (N, long and lat in that update's contact frame); ``history`` is 1 once they
#: hold an update's (a reset's zeros are none); see ``tire_models``.
WHEEL_STATE = _record("omega", "drive_torque", "tread_deflection:2", "patch_velocity:3",
                      "patch_force:2", "history")
VEHICLE_STATE = _record("engine_omega", "switch_timer", "autobox_timer")
#: Gearbox state (integers): the gear, the gear being changed to, 1 if the autobox started it.
GEAR_STATE = _record("gear", "target", "auto_shift", dtype="i8")

# --- commands (floats, flags as 0/1; see vehicle.Commands) ------------------------------------
VEHICLE_COMMANDS = _record("throttle", "brake", "handbrake", "steer", "thrust:2", "gear_up",
                           "gear_down", "target_gear")
WHEEL_COMMANDS = _record("wheel_torque", "wheel_brake", "wheel_steer", "torque_split")

# --- inputs from the simulator ----------------------------------------------------------------
#: The chassis: frame origin, world-from-chassis rotation (row-major), CoM, CoM velocity and
#: angular velocity, world frame.
KINEMATICS = _record("position:3", "rotation:9", "com:3", "velocity:3", "angular_velocity:3")
#: The ground under a wheel: distance along the suspension ray (negative: no hit), unit normal,
#: surface type (a row of the friction table).
HIT = _record("dist", "normal:3", "surface")

# --- outputs ----------------------------------------------------------------------------------
# Over an update of ``dt`` with ``n`` wheel substeps: forces and torques (tyre forces, aligning
# moment, drive torque, engine torque) and the clutch slip are means over the substeps (what
# acts over ``dt``); slips and friction are the last substep's tyre inputs; spins, jounce, loads,
# gear and the rest are the values at the end of the update (see ``vehicle.VehicleOutputs``).
WHEEL_OUTPUTS = _record(
    "susp_force:3", "susp_point:3", "tire_force:3", "tire_point:3", "in_contact", "jounce",
    "spring_force", "load", "normalised_load", "friction", "long_slip", "lat_slip",
    "long_force", "lat_force", "aligning_moment", "patch_slide:2", "steer", "heading:2",
    "camber", "drive_torque")
VEHICLE_OUTPUTS = _record("engine_omega", "engine_torque", "clutch_slip", "gear", "gear_ratio",
                          "throttle", "extra_torque:3", "wrench:6")

# --- tyre model inputs (one per wheel, see tire.TireInputs) ----------------------------------
#: the TireInputs fields, then ``tan_lat_slip`` = tan(lateral slip), derived (the update has it
#: as v_lat / denominator, so the PhysX tyre needs no tan(atan(.)) without camber)
TIRE_INPUTS = _record(
    "v_long", "v_lat", "omega", "long_slip", "lat_slip", "camber", "friction",
    "surface_friction", "load", "rest_load", "normalised_load", "gravity", "tan_lat_slip")


def floats(records: np.ndarray) -> np.ndarray:
    """The float (or integer) columns under an array of packed records: ``(..., n_columns)``,
    a view (for whole-array checks and hashes)."""
    base = records.dtype.fields[records.dtype.names[0]][0].base
    return records.view(base).reshape(records.shape + (-1,))


def field_view(buffer: str, name: str, dtype=None, doc: str = ""):
    """A property viewing field ``name`` of the named record buffer. Assigning the property
    writes into the buffer (broadcasting). With ``dtype`` (bool flags, integer gears of a float
    buffer) it returns a converted, read-only copy: an indexed write (``cmd.target_gear[1] = 3``)
    would change only the copy, so it raises instead; assign the whole field
    (``cmd.target_gear = gears``)."""

    def get(self):
        view = getattr(self, buffer)[name]
        if dtype is None:
            return view
        out = view != 0 if dtype is bool else view.astype(dtype)
        out.flags.writeable = False
        return out

    def put(self, value):
        getattr(self, buffer)[name] = value

    return property(get, put, doc=doc)


class Packed(NamedTuple):
    """One vehicle type as arrays for the compiled update (a batch's vehicles: the same with
    their records stacked, one row per vehicle: ``pack.stack``).

    Attributes:
        wheel: ``(n_wheels,)`` records of the per-wheel parameters
            (:func:`~traction.vehicle_model.pack.wheel_dtype`); a batch's: ``(1 or n,
            n_wheels)``.
        vehicle: ``(1,)``: the record of the per-vehicle parameters
            (:func:`~traction.vehicle_model.pack.vehicle_dtype`); compiled code reads
            ``pk.vehicle[0].peak_torque``. A batch's: ``(1 or n,)``.
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

class Rows(NamedTuple):
    """A batch's record arrays, leading with the vehicle: what the update reads (state,
    commands, the simulator's inputs) and writes (state, outputs)."""

    wheel_state: np.ndarray      # (n, n_wheels) WHEEL_STATE
    vehicle_state: np.ndarray    # (n,) VEHICLE_STATE
    gears: np.ndarray            # (n,) GEAR_STATE
    cmd_vehicle: np.ndarray      # (n,) VEHICLE_COMMANDS
    cmd_wheel: np.ndarray        # (n, n_wheels) WHEEL_COMMANDS
    kinematics: np.ndarray       # (n,) KINEMATICS
    hits: np.ndarray             # (n, n_wheels) HIT
    out_wheel: np.ndarray        # (n, n_wheels) WHEEL_OUTPUTS
    out_vehicle: np.ndarray      # (n,) VEHICLE_OUTPUTS


class Scratch(NamedTuple):
    """The update's working arrays for one vehicle (reused across vehicles and substeps)."""

    wheel: np.ndarray            # (n_wheels,) SCRATCH
    tire: np.ndarray             # (n_wheels,) TIRE_INPUTS
    group: np.ndarray            # (n_wheels,) GROUP_SCRATCH, the first n_groups used


# --- scratch of one vehicle update (update.py): records, one per wheel or wheel group ---------

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
    "stiff:2", "moment", "road_ratio", "omega0", pad=True)
#: Per-group scratch of the drivetrain: spin, inertia, damping, road and brake torque, the
#: differential's share, new spin, wheel count.
GROUP_SCRATCH = _record("spin", "inertia", "damping", "road", "brake", "share", "new_spin",
                        "count", pad=True)
