"""One update of one vehicle checked against its formulas and invariants: slips at walking pace,
static friction from the friction graph at zero slip, independence of the heading, each
update's own aligning moment, and copies that are snapshots."""

import numpy as np
import pytest

from traction import vehicle_model as vm
from traction.vehicle_model import layout as L


def _flat(p, rot=None, velocity=(0.0, 0.0, 0.0), spin=(0.0, 0.0, 0.0), compression=0.0):
    """Kinematics and ground hits of one vehicle level on flat ground (turned by ``rot``,
    moving at ``velocity`` and ``spin`` in the world frame), every wheel ``compression`` (m)
    past its rest jounce."""
    rot = np.eye(3) if rot is None else rot
    kin = vm.ChassisKinematics(np.zeros((1, 3)), rot[None], (rot @ p.chassis.com)[None],
                               np.array([velocity], float), np.array([spin], float))
    dist = (p.suspension.max_compression + 2 * p.wheels.radius)[None] - compression
    hits = vm.GroundHits(dist, np.tile([0.0, 0.0, 1.0], (1, p.n_wheels, 1)),
                         np.zeros((1, p.n_wheels), int))
    return kin, hits


def _level_at_rest_jounce(p, velocity, omega):
    """One update of one vehicle level on flat ground, every wheel at its rest jounce, the
    chassis moving at ``velocity`` (world = chassis frame) and not turning."""
    kin, hits = _flat(p, velocity=velocity)
    state = vm.VehicleState.zeros(p, 1)
    state.omega[:] = omega
    return vm.step(p, state, kin, hits, vm.Commands.zeros(p, 1), vm.FrictionTable.default(),
                   0.002)


@pytest.mark.parametrize("v_long,v_lat", [(0.5, 0.5), (0.2, -0.3), (3.0, 0.6)])
def test_the_models_read_the_lateral_slip_of_the_patch_at_walking_pace(sedan, v_long, v_lat):
    """The tyre models are handed lat_slip = atan(v_lat / |v_long|) at any speed (no minimum
    denominator: it was 1 m/s, which read 0.5 m/s sideways at 0.2 m/s as 0.46 rad, not 1.19)."""
    import dataclasses
    seen = []

    def recorder(friction, long_slip, lat_slip, camber, wheel_omega, wheel_radius, rest_load,
                 normalised_load, load, gravity):
        seen.append(lat_slip.copy())
        zero = np.zeros_like(load)
        return zero, zero, zero, zero

    p = dataclasses.replace(sedan, custom_tire=recorder, tires=dataclasses.replace(
        sedan.tires, model=np.full(4, float(vm.TIRE_MODELS.index("custom")))))
    _level_at_rest_jounce(p, [v_long, v_lat, 0.0], v_long / sedan.wheels.radius)
    np.testing.assert_allclose(seen[0], np.arctan(v_lat / abs(v_long)), rtol=1e-9)


def test_static_friction_at_rest_is_the_friction_graphs_zero_slip_value(sedan):
    """Static friction is the graph's value at zero slip: a car at rest whose treads are
    deflected far sideways (0.3 m, far past what friction holds) pulls back with surface
    friction x the PhysX graph at zero slip x load, not the graph's peak, and the tread's
    stretch is brought back to that force (one wheel substep: after the first, the force
    eases as the chassis is expected to give)."""
    import dataclasses

    g = np.array(sedan.tires.friction_vs_slip, float)
    g[:, 0, 1] = 0.2                                    # low grip at rest, 1.0 at the peak
    p = dataclasses.replace(sedan, tires=dataclasses.replace(sedan.tires, friction_vs_slip=g),
                            simulation=dataclasses.replace(sedan.simulation, substeps_low=1))
    kin, hits = _flat(p)
    state = vm.VehicleState.zeros(p, 1)
    state.tread_deflection[..., 1] = 0.3                # pulled 0.3 m left of the patch
    cmd = vm.Commands.zeros(p, 1)
    cmd.wheel_brake = 1.0
    out = vm.step(p, state, kin, hits, cmd, vm.FrictionTable.default(), 0.002)
    np.testing.assert_allclose(out.lat_force / out.load, 0.2, rtol=1e-9)
    spring = p.tires.tread_stiffness_lat * p.suspension.sprung_mass * 9.81
    np.testing.assert_allclose(spring * state.tread_deflection[0, :, 1], 0.2 * out.load[0],
                               rtol=1e-9)


def _driving(p, yaw, speed=10.0):
    """One vehicle level on flat ground (wheels 1 cm compressed) heading ``yaw``, moving at
    ``speed`` forward and 0.8 m/s sideways in its own frame, yawing, wheels spinning 5 % fast
    with 300 N m each and 0.2 steer."""
    c, s = np.cos(yaw), np.sin(yaw)
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    kin, hits = _flat(p, rot, rot @ np.array([speed, 0.8, 0.0]), (0.0, 0.0, 0.3), 0.01)
    state = vm.VehicleState.zeros(p, 1)
    state.omega[:] = 1.05 * speed / p.wheels.radius
    cmd = vm.Commands.zeros(p, 1)
    cmd.wheel_torque = 300.0
    cmd.steer = 0.2
    return state, kin, hits, cmd, rot


@pytest.mark.parametrize("yaw", [np.pi / 4, 2.0, -2.5])
def test_the_update_does_not_depend_on_the_heading(sedan, yaw):
    """Turning the whole scene about the vertical turns the forces with it and changes nothing
    else: the same spins, slips and body-frame forces at any heading (also the wheel substep
    count, chosen from the forward speed along the chassis x axis)."""
    table = vm.FrictionTable.default()
    results = []
    for heading in (0.0, yaw):
        state, kin, hits, cmd, rot = _driving(sedan, heading)
        out = vm.step(sedan, state, kin, hits, cmd, table, 0.002)
        body_force = np.einsum("ij,nwj->nwi", rot.T, out.tire_force)
        results.append((state.omega.copy(), body_force, out.long_slip.copy(),
                        out.lat_slip.copy()))
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-9)


def test_aligning_moment_of_each_update_is_its_own_mean(sedan):
    """Updates in a row on the same scratch arrays (as the physics loop runs them): each
    update's aligning moment is the mean over its own substeps (magic formula: -trail x the
    lateral force), not a running sum over updates."""
    import dataclasses

    from traction.vehicle_model.pack import stack
    from traction.vehicle_model.update import scratch, step_batch_with

    model = float(vm.TIRE_MODELS.index("magic_formula"))
    p = dataclasses.replace(sedan, tires=dataclasses.replace(sedan.tires,
                                                             model=np.full(4, model)))
    state, kin, hits, cmd, _ = _driving(p, 0.0)
    out = vm.VehicleOutputs.zeros(p, 1)
    scr = scratch(p.n_wheels)
    rows = L.Rows(state.wheel, state.vehicle, state.gears, cmd.vehicle, cmd.wheel,
                  kin.records(), hits.records(), out.wheel, out.vehicle)
    for _ in range(3):
        step_batch_with(stack([p.packed]), rows, vm.FrictionTable.default().values[None], 0.002, 9.81,
                        np.ones(1, bool), scr, True, True)
        assert np.any(np.abs(out.aligning_moment) > 1.0)
        np.testing.assert_allclose(out.aligning_moment, -p.tires.trail * out.lat_force,
                                   rtol=1e-9, atol=1e-9)


def test_copies_of_state_commands_and_outputs_are_snapshots(sedan):
    """``copy()`` keeps a snapshot (VehicleSim's docs: ``outputs.copy()``): writing the
    original's buffers, as the next update does in place, leaves the copy as it was."""
    for original in (vm.VehicleState.zeros(sedan, 2), vm.Commands.zeros(sedan, 2),
                     vm.VehicleOutputs.zeros(sedan, 2)):
        snap = original.copy()
        before = {k: L.floats(v).copy() for k, v in vars(snap).items()}
        for buf in vars(original).values():
            buf[...] = 5                                   # every field of every record
        for k, v in vars(snap).items():
            np.testing.assert_array_equal(L.floats(v), before[k],
                                          err_msg=f"{type(original).__name__}.{k}")
