"""Energy audits in MuJoCo: the drivetrain creates no energy in any mode, step by step, and a
whole episode of random per-wheel torque shares on ``crest`` balances.

The vehicles run one wheel substep per physics step (the truck and the tank do anyway; the
sedans are set to), so each step's outputs are that substep's values and every term below is
exact for the step. Energies in J, powers in W.
"""

import numpy as np
import pytest
from vehicle_variants import variant

from traction.envs import VehicleSim
from traction.scenes import build_scene
from traction.vehicle_model import engine

ONE_SUBSTEP = {"substeps_low": 1, "substeps_high": 1}


def _kinetic_potential(sim, k) -> tuple[float, float]:
    """The chassis's kinetic and gravitational potential energy (J) in kinematics row ``k``."""
    m, b = sim.model, sim.body
    rot = k["rotation"].reshape(3, 3)     # body axes = principal axes
    w_body = rot.T @ k["angular_velocity"]
    v = k["velocity"]
    assert np.all(m.body_iquat[b] == [1.0, 0.0, 0.0, 0.0])
    kinetic = 0.5 * m.body_mass[b] * v @ v + 0.5 * w_body @ (m.body_inertia[b] * w_body)
    return kinetic, -m.body_mass[b] * (m.opt.gravity @ k["com"])


def _point_velocity(k, points):
    """World velocity (m/s) of chassis points ``(n, 3)`` in kinematics row ``k``."""
    com = k["com"]
    return k["velocity"] + np.cross(k["angular_velocity"],
                                                       points - com)


def _spring_energy(sim) -> float:
    """Energy (J) the struts hold, for a vehicle at rest: each wheel's normal force
    ``N = m_s g n_z + cos_incidence (k x + bump)`` (``suspension`` docstring; no damper force
    at rest) integrated from where it is 0 to the jounce ``x``, the bump stop's part read
    from ``N``. No anti-roll bars (the audited vehicles have none)."""
    p, out, k = sim.params, sim.outputs, sim.chassis_row()
    sus = p.suspension
    assert not p.anti_roll.pairs
    rot = k["rotation"].reshape(3, 3)
    g = -sim.model.opt.gravity[2]
    total = 0.0
    for w in range(p.n_wheels):
        n_force = out.spring_force[0, w]
        if not out.in_contact[0, w] or n_force <= 0.0:
            continue
        normal = out.susp_force[0, w] / n_force
        cos_inc = -(rot @ sus.travel_direction[w]) @ normal
        stiff = cos_inc * sus.spring_strength[w]
        weight = sus.sprung_mass[w] * g * normal[2]
        x, top = out.jounce[0, w], sus.max_compression[w]
        u = x + weight / stiff                                  # compression from N = 0
        over = 0.0
        if x >= top - 1e-9 and sus.bump_stop_stiffness[w] > 0.0:
            over = max(0.0, (n_force - weight - stiff * x)
                       / (cos_inc * sus.bump_stop_stiffness[w]))
        total += 0.5 * stiff * u**2 + stiff * u * over + 0.5 * cos_inc * (
            sus.bump_stop_stiffness[w] * over**2)
    return total


class Ledger:
    """The energy terms of a :class:`VehicleSim`, physics step by physics step (J).

    Sources and stores:

    * ``engine``: the engine's work, its torque (net of the rev limiter's cut) x its new spin
      x dt (backward Euler's power); for a direct drive the commanded wheel torques' work;
    * ``spin``: change of the engine's and wheels' spin energy ``I w^2 / 2``;
    * ``kinetic``, ``potential``: change of the chassis's (MuJoCo's state: ``m v^2 / 2 +
      w.I.w / 2``, ``m g z`` of the centre of mass).

    Dissipation computed from each part's own formula:

    * ``clutch``: ``strength x slip^2 x dt``;
    * ``engine_damping``, ``bearings``: ``D w^2 x dt`` (engine, each wheel);
    * ``brakes``: ``b |w'| x dt``, the brake torque at the new spin (Coulomb friction inside
      the drivetrain's solve: the full torque while the wheel turns, no work once stopped);
    * ``euler``: backward Euler's ``I (w' - w)^2 / 2`` (engine and wheels);
    * ``tyre_slip``: ``-(F_long (v_long - w r) + F_lat v_lat) x dt`` (the patch's slide
      against the tyre force) - a cross-check only, see ``tyres`` below;
    * ``contacts``: minus the work of MuJoCo's constraint forces (``qfrc_constraint .
      qvel`` at the step's mean velocity): the chassis's own collisions.

    Works at the interfaces (force x velocity of the point it acts at, the velocity the step's
    mean as MuJoCo's semi-implicit Euler integrates it):

    * ``road``: what the wheels give the tyres, ``F_long r w' x dt``;
    * ``tyre_on_chassis``: the tyre forces' (and pitch/roll torque's) work on the chassis;
    * ``strut_on_chassis``: the suspension forces' work on the chassis.

    The tyres and struts are massless here and store nothing but the springs' energy, so what
    they dissipate is what enters them less what leaves them: ``tyres = road -
    tyre_on_chassis``, ``struts = -strut_on_chassis - change of spring energy``; both are
    measured at their two ends and must come out >= 0.
    """

    def __init__(self, sim):
        self.sim = sim
        p = sim.params
        self.groups = p.groups
        self.count = self.groups.sum(axis=0)
        self.direct = p.differential.type == "direct"
        self.terms = dict.fromkeys(
            ("engine", "spin", "kinetic", "potential", "clutch", "engine_damping", "bearings",
             "brakes", "euler", "tyre_slip", "contacts", "road", "tyre_on_chassis",
             "strut_on_chassis"), 0.0)
        self.worst = 0.0          # largest (wheel power - clutch power) / scale of any step
        self.checked = 0          # steps checked

    def _brake_torques(self) -> np.ndarray:
        """Brake torque per wheel (N m) the commands apply (``controls``: pedal or wheel brake,
        a tank's pulled-back stick in standard mode, handbrake)."""
        p, c = self.sim.params, self.sim.commands
        b = np.maximum(c.brake[0], np.clip(c.wheel_brake[0], 0.0, 1.0))
        if p.differential.type == "tank" and p.differential.tank_mode == "standard":
            pulled = np.clip(-np.asarray(c.thrust[0], float), 0.0, 1.0)
            b = np.maximum(b, pulled[np.argmax(self.groups, axis=1)])
        return b * p.wheels.max_brake_torque + c.handbrake[0] * p.wheels.max_handbrake_torque

    def step(self) -> None:
        """One physics step, its terms added up and the drivetrain's power check made."""
        sim, p, dt = self.sim, self.sim.params, self.sim.dt
        wh, e = p.wheels, p.engine
        k0, qv0 = sim.chassis_row().copy(), sim.data.qvel.copy()
        w0, we0 = sim.state.omega[0].copy(), float(sim.state.engine_omega[0])
        torque_cmd = sim.commands.wheel_torque[0].copy()
        sim.step(1)
        o, k1, qv1 = sim.outputs, sim.chassis_row().copy(), sim.data.qvel.copy()
        w1, we1 = sim.state.omega[0].copy(), float(sim.state.engine_omega[0])
        drive, road = o.drive_torque[0], -o.long_force[0] * wh.radius
        # The brakes are Coulomb friction inside the drivetrain's coupled solve: the full brake
        # torque b against a wheel's new spin while it turns, no work once it stops.
        brake = self._brake_torques()
        t = self.terms
        if self.direct:
            np.testing.assert_allclose(drive, torque_cmd, rtol=1e-12)   # what was commanded
            t["engine"] += drive @ w1 * dt
        else:
            ratio, throttle = o.gear_ratio[0], o.throttle[0]
            slip = o.clutch_slip[0]
            clutch = p.clutch.strength * slip if ratio != 0.0 else 0.0
            # what the clutch passed, K slip (w_e - slip), against what the wheels take
            passed, wheels = clutch * (we1 - slip), drive @ w1
            scale = abs(clutch) * (we1 + abs(slip)) + np.abs(drive) @ np.abs(w1) + 1e-9
            self.worst = max(self.worst, (wheels - passed) / scale)
            self.checked += 1
            d_e = engine.damping(e.damping_full_throttle,
                                 e.damping_zero_throttle_clutch_engaged,
                                 e.damping_zero_throttle_clutch_disengaged, throttle,
                                 ratio != 0.0)
            t["engine"] += o.engine_torque[0] * we1 * dt
            t["clutch"] += clutch * slip * dt
            t["engine_damping"] += d_e * we1**2 * dt
            t["euler"] += 0.5 * e.moi * (we1 - we0) ** 2
            t["spin"] += 0.5 * e.moi * (we1**2 - we0**2)
        t["spin"] += 0.5 * wh.moi @ (w1**2 - w0**2)
        t["bearings"] += wh.damping_rate @ w1**2 * dt
        t["brakes"] += brake @ np.abs(w1) * dt
        t["euler"] += 0.5 * wh.moi @ (w1 - w0) ** 2
        t["road"] += -road @ w1 * dt
        slide = o.patch_slide[0]
        t["tyre_slip"] -= (o.long_force[0] @ slide[:, 0] + o.lat_force[0] @ slide[:, 1]) * dt
        v_mid = 0.5 * (k0["velocity"] + k1["velocity"])
        w_mid = 0.5 * (k0["angular_velocity"] + k1["angular_velocity"])
        wrench = o.wrench[0]
        on_chassis = (wrench[:3] @ v_mid + wrench[3:] @ w_mid) * dt
        points = o.susp_point[0]
        v_struts = 0.5 * (_point_velocity(k0, points) + _point_velocity(k1, points))
        struts = np.sum(o.susp_force[0] * v_struts) * dt
        t["strut_on_chassis"] += struts
        t["tyre_on_chassis"] += on_chassis - struts
        t["contacts"] -= sim.data.qfrc_constraint @ (0.5 * (qv0 + qv1)) * dt
        (ke0, pe0), (ke1, pe1) = _kinetic_potential(sim, k0), _kinetic_potential(sim, k1)
        t["kinetic"] += ke1 - ke0
        t["potential"] += pe1 - pe0

    def residual(self, springs: float = 0.0) -> tuple[float, dict]:
        """Engine work - dissipation - change of (kinetic + potential + spin + spring) energy
        (J) with ``springs`` the change of spring energy; and the dissipation terms."""
        t = self.terms
        lost = {k: t[k] for k in ("clutch", "engine_damping", "bearings", "brakes", "euler",
                                  "contacts")}
        lost["tyres"] = t["road"] - t["tyre_on_chassis"]
        lost["struts"] = -t["strut_on_chassis"] - springs
        stored = t["spin"] + t["kinetic"] + t["potential"] + springs
        return t["engine"] - sum(lost.values()) - stored, lost


def _random_commands(sim, rng, kind):
    """Random driver commands for a vehicle with a ``kind`` drivetrain (throttle, brakes,
    steer, handbrake, per-wheel torque shares - none, random with NaN / negative / zero
    entries, or all on the fastest wheel -, tank thrusts, direct wheel torques)."""
    n = sim.params.n_wheels
    brake = rng.uniform() if rng.uniform() < 0.2 else 0.0
    sim.set_commands(steer=rng.uniform(-1.0, 1.0), brake=brake,
                     handbrake=1.0 if rng.uniform() < 0.05 else 0.0)
    if kind == "direct":
        sim.set_commands(wheel_torque=[rng.uniform(-600.0, 900.0, n)])
        return
    sim.set_commands(throttle=rng.uniform(0.2, 1.0) if brake == 0.0 else 0.0)
    if kind == "tank":
        sim.set_commands(thrust=[rng.uniform(-1.0, 1.0, 2)])
        return
    choice = rng.integers(3)
    split = np.full(n, np.nan)
    if choice == 1:
        split = rng.choice([np.nan, -1.0, 0.0, 1.0], n) * rng.uniform(0.0, 1.0, n)
    elif choice == 2:
        split[:] = 0.0
        split[np.argmax(sim.state.omega[0] * (sim.params.base_split > 0))] = 1.0
    sim.set_commands(torque_split=[split])


MODES = [  # (id, preset, differential fields, terrain, terrain knobs)
    ("open_rwd", "sedan_rwd", {"kind": "open"}, "flat", {}),
    ("open_4wd", "sedan_rwd", {"kind": "open", "drive": "4wd"}, "flat", {}),
    ("lsd_rwd", "sedan_rwd", {"kind": "limited_slip"}, "flat", {}),
    ("lsd_fwd", "sedan_rwd", {"kind": "limited_slip", "drive": "fwd"}, "flat", {}),
    ("lsd_4wd", "sedan_rwd", {"kind": "limited_slip", "drive": "4wd"}, "flat", {}),
    ("locked_rwd", "sedan_rwd", {"kind": "locked"}, "flat", {}),
    ("multi_wheel", "truck_6x6", {"type": "multi_wheel"}, "crest", {"incline_deg": 5.0}),
    ("torque_vectoring", "truck_6x6", {}, "crest", {"incline_deg": 5.0}),
    ("tank_standard", "tank", {"tank_mode": "standard"}, "flat", {}),
    ("tank_special", "tank", {"tank_mode": "special"}, "flat", {}),
    ("direct", "sedan", {}, "flat", {}),
]
ICE = [("ice", (0.0, 0.8), (400.0, 0.6))]          # left wheels on ice: the LSDs work


@pytest.mark.parametrize("mode", MODES, ids=[m[0] for m in MODES])
def test_drivetrain_never_gives_the_wheels_more_than_the_clutch_passes(mode):
    """Every drivetrain mode in MuJoCo, 3 s of random commands (new every 20 ms: throttle,
    brakes and handbrake, steer, per-wheel torque shares or tank thrusts, direct torques):
    at every physics step the wheels get no more power than the clutch passes (relative
    1e-6; a direct drive's wheels get exactly the commanded torques), and the run balances
    (engine work - dissipation - change of stored energy within +-0.5 % of the engine work,
    the terms of :class:`Ledger`)."""
    _, preset, diff, terrain, knobs = mode
    p = variant(preset, differential=diff, simulation=ONE_SUBSTEP)
    patches = {"patches": ICE} if terrain == "flat" and preset == "sedan_rwd" else {}
    sim = VehicleSim(build_scene(p, terrain, **knobs, **patches))
    rng = np.random.default_rng(1)
    ledger = Ledger(sim)
    for i in range(int(3.0 / sim.dt)):
        if i % 10 == 0:
            _random_commands(sim, rng, p.differential.type if preset != "sedan_rwd" else "4w")
        ledger.step()
    assert ledger.worst <= 1e-6
    residual, lost = ledger.residual()
    work = ledger.terms["engine"]
    assert work > 2e3                                           # J: the run did drive
    assert abs(residual) <= 0.005 * work, (residual / work, ledger.terms)   # measured: ~1e-7


def _crest_episode(seconds: float = 12.0, seed: int = 0):
    """The run of :func:`test_random_wheel_shares_on_crest_balance_over_an_episode`: returns
    the sim, its ledger and the change of spring energy (J)."""
    p = variant("truck_6x6", simulation=ONE_SUBSTEP)
    sim = VehicleSim(build_scene(p, "crest", incline_deg=5.0, physics_dt=0.004))
    sim.set_commands(brake=1.0)
    sim.step(250)                                               # settle on the crests, braked
    springs0 = _spring_energy(sim)
    rng = np.random.default_rng(seed)
    ledger = Ledger(sim)
    for i in range(int(seconds / sim.dt)):
        if i % 10 == 0:
            action = 2.0 * rng.uniform(0.0, 1.0, 6) ** 3 - 1.0
            braking = rng.uniform() < 0.1
            sim.set_commands(throttle=0.0 if braking else rng.uniform(0.5, 1.0),
                             brake=rng.uniform() if braking else 0.0,
                             steer=0.3 * rng.uniform(-1.0, 1.0),
                             torque_split=[(action + 1.0) / 2.0])
        ledger.step()
    sim.set_commands(throttle=0.0, brake=1.0, steer=0.0)
    for _ in range(int(4.0 / sim.dt)):
        ledger.step()
    assert np.linalg.norm(sim.com_velocity()) < 0.01               # at rest: no damper force
    return sim, ledger, _spring_energy(sim) - springs0


def test_random_wheel_shares_on_crest_balance_over_an_episode():
    """The 6x6 on ``crest`` at the Climb task's 4 ms step, driven as a random agent with
    per-wheel shares (Climb6x6's ``wheel_torques``) might: for 12 s, every 40 ms (a control
    step) new shares ``(a + 1) / 2`` (as the task maps its actions) of actions ``a = 2 u^3 -
    1``, ``u`` uniform, so that most of the torque often goes to one or two wheels, the
    airborne ones too; throttle 0.5-1, or a random brake pedal a tenth of the time, and a
    little steer; then 4 s of full brake to rest. Ledger (:class:`Ledger`), over the whole
    run:

    engine work - dissipation - change of (kinetic + potential + spin + spring) energy
    >= -0.5 % of engine work,

    dissipation = clutch + engine damping + bearings + brakes + backward Euler + MuJoCo
    contacts + tyres + struts, the tyres' and struts' as what enters them less what leaves
    (both >= 0), the tyres' cross-checked against the slide x force at their patches (within
    10 %). The drivetrain surplus this guards against was 7.5 % of the engine's work on such a
    run (113.7 kJ of 1524 kJ); the residual is within 0.5 % both ways, so a surplus of that
    size would show."""
    sim, ledger, springs = _crest_episode()
    residual, lost = ledger.residual(springs)
    work = ledger.terms["engine"]
    assert work > 5e5 and ledger.checked > 2000
    assert ledger.worst <= 1e-6
    assert lost["tyres"] > 0.0 and lost["struts"] > 0.0
    assert ledger.terms["tyre_slip"] == pytest.approx(lost["tyres"], rel=0.1)
    assert residual >= -0.005 * work, (residual / work, lost)
    assert residual <= 0.005 * work, (residual / work, lost)

