"""The vehicle update: one commented sequence, reading top to bottom like the physics.

commands -> gears -> steering -> suspension (+ anti-roll bars) -> tyre loads -> contact frame ->
tyre treads -> [substeps: slips -> tyre forces -> drivetrain and wheel spin -> tyre forces at the
new spins] -> forces out.

Compiled with numba over the packed arrays of ``layout.py``: :func:`step_batch_with` advances
every vehicle of a batch in one call (the simulator coupling in ``traction.envs`` calls it between
``mj_step1`` and ``mj_step2``); :func:`step` is the same update for numpy users, on the
dataclasses of ``vehicle.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import chassis, contact, controls, drivetrain, gearbox, step_checks, suspension, tire_models
from . import layout as L
from .jit import borrow, first_compile, jit
from .layout import Packed, Rows, Scratch
from .pack import stack
from .params import check_step_inputs
from .surface import FrictionTable
from .vec import rot
from .vehicle import (
    ChassisKinematics,
    Commands,
    GroundHits,
    VehicleOutputs,
    VehicleParams,
    VehicleState,
)


@jit
def step_vehicle(pk: Packed, rows: Rows, v: int, friction, dt, gravity, scratch: Scratch,
                 report=True, new_commands=True) -> None:
    """Advance vehicle ``v`` of ``rows`` by ``dt``: its state updated in place, its outputs
    written.

    The chassis velocity is held during the wheel substeps and the tyre forces are averaged over
    them; forces are for the simulator to apply for the next ``dt``. Outputs: forces, torques
    and the clutch slip are means over the substeps, slips and friction the last substep's, the
    rest end-of-update values (:class:`~traction.vehicle_model.vehicle.VehicleOutputs`).
    ``scratch``: :func:`scratch`.
    ``report=False`` skips what only reports and feeds no force (see
    :func:`~traction.vehicle_model.tire_models.substep_forces`): for a caller that runs several
    updates in a row and reads the outputs after the last one only. ``new_commands=False``
    promises that the commands and parameters are those of this vehicle's previous update and
    its outputs are as that update left them: the steer angles and wheel headings there are
    kept (see :func:`~traction.vehicle_model.controls.commands`), for a caller that runs
    several updates in a row with the same commands.
    """
    ws, vs, gears = rows.wheel_state[v], rows.vehicle_state[v], rows.gears[v]    # state
    cv, cw = rows.cmd_vehicle[v], rows.cmd_wheel[v]                              # commands
    k, hits = rows.kinematics[v], rows.hits[v]                                   # the chassis, ground
    out, out_v = rows.out_wheel[v], rows.out_vehicle[v]                          # outputs
    s, x, g = scratch
    vp = pk.vehicle[0]
    throttle, ratio = controls.commands(pk, gears, vs, cv, cw, dt, s, out,  # 1. commands, gears
                                        new_commands)
    suspension.struts_and_loads(pk, k, hits, gravity, s, out)               # 2.-3. struts, loads
    contact.contact_frame(pk, k, hits, friction, ws, s, out)                # 4. contact frame
    fwd_speed = abs(k.velocity[0] * rot(k, 0, 0) + k.velocity[1] * rot(k, 1, 0)
                    + k.velocity[2] * rot(k, 2, 0))
    n_sub = int(vp.substeps_low if fwd_speed < vp.substep_speed_threshold else vp.substeps_high)
    h = dt / n_sub
    tire_models.prepare(pk, k, ws, dt, h, gravity, s, out)                  # 5. tyre treads
    thrust_l = min(max(cv.thrust[0], -1.0), 1.0)        # tank tracks
    thrust_r = min(max(cv.thrust[1], -1.0), 1.0)
    for w in range(s.shape[0]):                    # the means over the substeps
        s[w].acc_long, s[w].acc_lat, s[w].acc_drive, s[w].acc_moment = 0.0, 0.0, 0.0, 0.0
    engine_torque, clutch_slip = 0.0, 0.0
    for _ in range(n_sub):                         # 6. wheel substeps, chassis velocity held
        tire_models.substep_forces(pk, ws, gravity, h, s, x, out, report)
        for w in range(ws.shape[0]):
            s[w].omega0 = ws[w].omega
        engine_omega = vs.engine_omega
        t_eng, slip = drivetrain.spin(pk, ws, vs, cw, thrust_l, thrust_r, throttle, ratio, h, s, g, out)
        # A tyre force that passed friction x load at the new spin is held there and the spins
        # are solved again, so the wheel and the chassis always feel the same force (each pass
        # fixes a wheel more: at most one pass per wheel).
        while tire_models.hold_at_cap(pk, ws, s, x, out):
            for w in range(ws.shape[0]):
                ws[w].omega = s[w].omega0
            vs.engine_omega = engine_omega
            t_eng, slip = drivetrain.spin(pk, ws, vs, cw, thrust_l, thrust_r, throttle, ratio, h,
                                          s, g, out)
        tire_models.substep_finish(pk, ws, h, s, x, out, report)
        engine_torque += t_eng * h
        clutch_slip += slip * h
        for w in range(out.shape[0]):
            s[w].acc_long += out[w].long_force * h
            s[w].acc_lat += out[w].lat_force * h
            s[w].acc_drive += ws[w].drive_torque * h
            s[w].acc_moment += out[w].aligning_moment * h
    chassis.forces_out(pk, k, ws, hits, dt, s, out, out_v)                  # 7. forces out
    tire_models.remember(k, ws, s, out)
    out_v.engine_omega, out_v.engine_torque = vs.engine_omega, engine_torque / dt
    out_v.clutch_slip = clutch_slip / dt          # means over the substeps, as the torques
    out_v.gear = gearbox.engaged_gear(gears, vs)                      # 0 while shifting
    out_v.gear_ratio, out_v.throttle = ratio, throttle


@jit
def borrow_packed(pk: Packed) -> Packed:
    """``pk`` with every array borrowed (see :func:`~traction.vehicle_model.jit.borrow`); by
    field name, so a reordered ``Packed`` cannot swap two arrays of the same shape."""
    return Packed(wheel=borrow(pk.wheel), vehicle=borrow(pk.vehicle),
                  torque_curve=borrow(pk.torque_curve), gear_ratios=borrow(pk.gear_ratios),
                  shift_up=borrow(pk.shift_up), shift_down=borrow(pk.shift_down),
                  bars=borrow(pk.bars), families=borrow(pk.families),
                  family_index=borrow(pk.family_index), points=borrow(pk.points))


@jit
def one_vehicle(pk: Packed, j: int) -> Packed:
    """Row ``j`` of a batch's parameters (:func:`~traction.vehicle_model.pack.stack`), as one
    vehicle's :class:`Packed` (views)."""
    return Packed(wheel=pk.wheel[j], vehicle=pk.vehicle[j:j + 1],
                  torque_curve=pk.torque_curve, gear_ratios=pk.gear_ratios,
                  shift_up=pk.shift_up, shift_down=pk.shift_down, bars=pk.bars,
                  families=pk.families, family_index=pk.family_index, points=pk.points)


@jit
def scratch(n_wheels: int) -> Scratch:
    """The scratch of :func:`step_vehicle` (reused across vehicles and substeps)."""
    return Scratch(np.zeros(n_wheels, L.SCRATCH), np.zeros(n_wheels, L.TIRE_INPUTS),
                   np.zeros(n_wheels, L.GROUP_SCRATCH))


@jit
def borrow_rows(rows: Rows) -> Rows:
    """``rows`` with every array borrowed (see :func:`~traction.vehicle_model.jit.borrow`)."""
    return Rows(borrow(rows.wheel_state), borrow(rows.vehicle_state), borrow(rows.gears),
                borrow(rows.cmd_vehicle), borrow(rows.cmd_wheel), borrow(rows.kinematics),
                borrow(rows.hits), borrow(rows.out_wheel), borrow(rows.out_vehicle))


@jit
def step_batch_with(pk: Packed, rows: Rows, friction, dt, gravity, active, scratch: Scratch,
                    report=True, new_commands=True) -> None:
    """Advance every vehicle of a batch (``rows``) whose ``active`` flag is set, with the
    caller's :func:`scratch` (a loop over substeps allocates it once), ``report`` and
    ``new_commands`` (see :func:`step_vehicle`). Every array is borrowed
    (:func:`~traction.vehicle_model.jit.borrow`): the update's views then cost no reference
    counting.

    ``pk``: the vehicles' parameters (:func:`~traction.vehicle_model.pack.stack`): one set of
    records for every vehicle, or one per vehicle. ``friction``: ``(1 or n_vehicles,
    n_surfaces, n_tires)``: one friction table for every vehicle, or one per vehicle
    (ValueError for another count of either)."""
    n = rows.kinematics.shape[0]
    if friction.shape[0] != 1 and friction.shape[0] != n:
        raise ValueError("vehicle update: friction must hold one table, or one per vehicle")
    if (pk.vehicle.shape[0] != 1 and pk.vehicle.shape[0] != n) or \
            pk.wheel.shape[0] != pk.vehicle.shape[0]:
        raise ValueError("vehicle update: pk must hold one set of records, or one per vehicle")
    pk, rows = borrow_packed(pk), borrow_rows(rows)
    friction, active = borrow(friction), borrow(active)
    scratch = Scratch(borrow(scratch.wheel), borrow(scratch.tire), borrow(scratch.group))
    per_vehicle, own_params = friction.shape[0] > 1, pk.vehicle.shape[0] > 1
    for v in range(n):
        if active[v]:
            step_vehicle(one_vehicle(pk, v if own_params else 0), rows, v,
                         friction[v if per_vehicle else 0], dt, gravity, scratch, report,
                         new_commands)


def step(p: VehicleParams | Sequence[VehicleParams], s: VehicleState, ck: ChassisKinematics,
         hits: GroundHits, cmd: Commands, friction_table: FrictionTable | Sequence[FrictionTable],
         dt: float, gravity: float = 9.81) -> VehicleOutputs:
    """Advance all vehicles by ``dt`` (state updated in place) and return forces and telemetry.

    ``p``: one vehicle type for every vehicle, or a sequence of one per vehicle that differ in
    values only (``pack.stack``: e.g. randomised masses, stiffnesses and torques; the state
    and output arrays are shaped by the first). ``friction_table``: one table for every
    vehicle, or a sequence of one per vehicle (of one shape: the same surface and tyre type
    counts), e.g. to randomise grip per vehicle.

    The array interface of :func:`step_batch_with` for numpy users: dataclasses in, a fresh
    :class:`VehicleOutputs` out. Both flags are passed, as the tests' direct calls pass them:
    each compiled signature compiles the whole update again (~half a minute).

    Raises:
        ValueError: ``dt`` or ``gravity`` not a positive finite number, an array of the wrong
            shape or dtype, a ground normal not of unit length, or a non-finite command
            (:mod:`~traction.vehicle_model.step_checks`).
        VehicleConfigError: a wheel's ``tire_type`` that is not a column of a friction table,
            or a table's values not finite and >= 0.
    """
    check_step_inputs(dt, gravity)
    each = [p] if isinstance(p, VehicleParams) else list(p)
    if len(each) not in (1, len(s.wheel)):
        raise ValueError(f"p: {len(each)} vehicle parameter sets for {len(s.wheel)} vehicles; "
                         "give one, or one per vehicle")
    pk = stack([q.packed for q in each])
    p = each[0]
    friction = step_checks.friction_stack(friction_table, p, len(s.wheel))
    kin, hit = step_checks.kinematics_rows(ck), step_checks.hit_rows(hits, p.n_wheels)
    step_checks.check_rows(p, s, cmd, kin, hit)
    step_checks.check_commands(cmd)
    out = VehicleOutputs.zeros(p, len(s.wheel))
    rows = Rows(s.wheel, s.vehicle, s.gears, cmd.vehicle, cmd.wheel, kin, hit, out.wheel,
                out.vehicle)
    with first_compile(step_batch_with, "the vehicle update"):
        step_batch_with(pk, rows, friction, float(dt), float(gravity),
                        np.ones(len(s.wheel), dtype=np.bool_), scratch(p.n_wheels), True, True)
    return out

