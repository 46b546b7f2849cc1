"""Each task's reward terms, weights and observation channels against its documented
definition: a weight scales its term and nothing else, Climb6x6's energy and slip penalties are
their formulas, and the velocity and track channels are in the documented frames and order."""

import math

import gymnasium as gym
import numpy as np
import pytest

import traction.envs  # noqa: F401  (registers the ids)
from traction.envs.tank_turn_v1 import TankTurnEnv
from traction.train import controllers

ENV_IDS = ["Traction/Climb6x6-v1", "Traction/Drift-v1", "Traction/TankTurn-v1"]
#: the terms that are not zero in STEPS steps of the scripted controller (the others: events)
CONTINUOUS = {"Traction/Climb6x6-v1": {"progress", "energy", "slip"},
              "Traction/Drift-v1": {"sideslip", "circle", "hold"},
              "Traction/TankTurn-v1": {"heading", "aim", "translation", "hold"}}
#: steps from the reset (seed 3): Drift's scripted slide first holds the drift (`hold`) 2.2 s in
STEPS = {"Traction/Climb6x6-v1": 120, "Traction/Drift-v1": 120, "Traction/TankTurn-v1": 120}


def _terms(env, steps_or_actions, options=None):
    """Each step's reward and reward terms from a reset with seed 3, and the actions taken:
    those given, or a number of steps of the task's scripted controller (which drifts)."""
    obs, _ = env.reset(seed=3, options=options)
    replay = not isinstance(steps_or_actions, int)
    policy = None if replay else controllers.for_env(env.spec.id)
    if policy is not None:
        policy.reset()
    out, taken = [], []
    for t in range(len(steps_or_actions) if replay else steps_or_actions):
        a = steps_or_actions[t] if replay else np.asarray(policy(obs), np.float32)
        obs, reward, _, _, info = env.step(a)
        out.append((reward, {k[7:]: v for k, v in info.items() if k.startswith("reward_")}))
        taken.append(a)
    return out, taken


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_weight_scales_its_term_and_nothing_else(env_id):
    """The same seed and actions (the scripted controller's) with one weight doubled: that term
    doubles at every step, the others are unchanged, and the reward is the sum of the terms (a
    term left unweighted, or weighted with a constant, passed the earlier test: both envs ran
    the same code)."""
    env = gym.make(env_id)
    u = env.unwrapped
    options = {"target_offset": 0.3, "yaw": 0.0} if env_id == "Traction/TankTurn-v1" else None
    base, actions = _terms(env, STEPS[env_id], options)
    for reward, terms in base:
        assert reward == pytest.approx(sum(terms.values()), abs=1e-12)
    seen = {t for _, terms in base for t, v in terms.items() if v != 0.0}
    assert seen >= CONTINUOUS[env_id]
    for argument, term in type(u).weight_arguments.items():
        default = getattr(u, argument)
        env.set_wrapper_attr(argument, 2.0 * default)
        doubled, _ = _terms(env, actions, options)
        env.set_wrapper_attr(argument, default)
        for (_, mine), (_, theirs) in zip(base, doubled, strict=True):
            assert theirs[term] == 2.0 * mine[term], argument
            assert {k: v for k, v in theirs.items() if k != term} == \
                   {k: v for k, v in mine.items() if k != term}


def test_climb_energy_and_slip_penalties_are_their_formulas():
    """energy = -w drive^2 control_dt (the clipped drive channel) and slip = -w mean |long slip|
    of the wheels in contact x control_dt: both <= 0 (a sign error rewarded wheelspin)."""
    env = gym.make("Traction/Climb6x6-v1")
    u = env.unwrapped
    env.reset(seed=0)
    rng = np.random.default_rng(2)
    slipping = 0
    for _ in range(40):
        a = rng.uniform(-1.5, 1.5, 2).astype(np.float32)
        info = env.step(a)[4]
        out = u.sim.outputs
        drive = float(np.clip(a[0], -1, 1))
        assert info["reward_energy"] == pytest.approx(-0.05 * drive**2 * 0.04, rel=1e-12)
        contact = out.in_contact[0]
        mean_slip = np.abs(out.long_slip[0][contact]).mean() if contact.any() else 0.0
        assert info["reward_slip"] == pytest.approx(-0.5 * mean_slip * 0.04, rel=1e-9, abs=1e-15)
        assert info["reward_energy"] <= 0.0 and info["reward_slip"] <= 0.0
        slipping += mean_slip > 0.01
    assert slipping >= 5                                # the formula met wheelspin


def _yawed(env, yaw, velocity, spins=None):
    """The env's observation with its chassis turned to ``yaw`` (rad) at its spawn position,
    moving at ``velocity`` (world, m/s), not turning; wheel spins ``spins`` (rad/s)."""
    u = env.unwrapped
    sim = u.sim
    sim.reset(pos=sim.data.qpos[sim.qpos_adr:sim.qpos_adr + 3].copy(),
              quat=[math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)], velocity=velocity)
    if spins is not None:
        sim.state.wheel["omega"][0, :] = spins
    return u.observation(u.read_chassis())


@pytest.mark.parametrize("env_id", ["Traction/Drift-v1", "Traction/TankTurn-v1"])
def test_the_velocity_channels_are_in_the_chassis_frame(env_id):
    """Turned 1 rad left and moving at (1, 0.5) m/s in the world, the chassis moves at
    (cos 1 + 0.5 sin 1, -sin 1 + 0.5 cos 1) = (0.961, -0.571) m/s in its own frame (channels 3
    and 4 of both tasks); yaw rate 0."""
    env = gym.make(env_id)
    env.reset(seed=0)
    obs = _yawed(env, 1.0, [1.0, 0.5, 0.0])
    expected = (math.cos(1) + 0.5 * math.sin(1), -math.sin(1) + 0.5 * math.cos(1))
    np.testing.assert_allclose(obs[3:5], expected, atol=1e-9)
    assert obs[2] == pytest.approx(0.0, abs=1e-12)


def test_tank_track_channels_are_left_then_right():
    """Left wheels spinning at 10 rad/s, right ones still: channel 5 (left track) is 10 x the
    road wheel radius, channel 6 (right) is 0; and the other way round."""
    env = gym.make("Traction/TankTurn-v1")
    env.reset(seed=0)
    p = env.unwrapped.vehicle
    left = np.array([n.startswith("left") for n in p.wheel_names])
    assert left.sum() == 6
    r = p.wheels.radius[0]
    obs = _yawed(env, 0.3, [0.0, 0.0, 0.0], spins=np.where(left, 10.0, 0.0))
    np.testing.assert_allclose(obs[5:7], [10.0 * r, 0.0], atol=1e-12)
    obs = _yawed(env, 0.3, [0.0, 0.0, 0.0], spins=np.where(left, 0.0, -4.0))
    np.testing.assert_allclose(obs[5:7], [0.0, -4.0 * r], atol=1e-12)


def test_climb_progress_is_the_com_approaching_the_goal():
    """progress = the decrease of the CoM's horizontal distance to the goal (the sim's CoM at
    the step's end), step by step, as the goal vector of channels 9-11 is from the CoM (the
    chassis origin's distance differs as the body pitches and turns)."""
    env = gym.make("Traction/Climb6x6-v1")
    u = env.unwrapped
    env.reset(seed=0)
    goal = np.asarray(u._goal_xyz)

    def distance():
        return float(np.hypot(*(goal[:2] - u.sim.com_position()[:2])))

    before = distance()
    rng = np.random.default_rng(4)
    for _ in range(40):
        info = env.step(rng.uniform(-0.5, 1, 2).astype(np.float32))[4]
        now = distance()
        assert info["reward_progress"] == pytest.approx(before - now, rel=1e-9, abs=1e-12)
        before = now


@pytest.mark.parametrize("terrain", ["slope", "crest"])
def test_climb_first_step_progress_is_from_the_reset_observation(terrain):
    """The first step's progress is measured from the state the reset returned (after its
    settling substep), not from the spawn pose before it: on these terrains, spawned on its
    wheels, that substep moves the CoM by 1e-5 to 3e-5 m toward the goal, which the first
    step's progress used to count (rough_hill's level start does not move it)."""
    env = gym.make("Traction/Climb6x6-v1", terrain=terrain)
    u = env.unwrapped
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        goal = np.asarray(u._goal_xyz)
        before = float(np.hypot(*(goal[:2] - u.sim.com_position()[:2])))
        info = env.step(np.array([1.0, 0.3], np.float32))[4]
        after = float(np.hypot(*(goal[:2] - u.sim.com_position()[:2])))
        assert info["reward_progress"] == pytest.approx(before - after, rel=1e-12, abs=1e-15)


def test_tank_first_step_terms_are_from_the_reset_observation():
    """TankTurn's reset observation shows zero displacement, and the first step's heading and
    translation terms measure from the heading error and position that observation shows."""
    env = gym.make("Traction/TankTurn-v1")
    u = env.unwrapped
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        assert obs[7] == 0.0 and obs[8] == 0.0
        err0, pos0 = abs(math.atan2(obs[0], obs[1])), u.sim.com_position()[:2].copy()
        obs, _, _, _, info = env.step(np.array([0.5, -0.5], np.float32))
        err1, pos1 = abs(math.atan2(obs[0], obs[1])), u.sim.com_position()[:2]
        heading = info["reward_heading"] / u.weights["heading"]
        moved = -info["reward_translation"] / u.weights["translation"]
        assert heading == pytest.approx(err0 - err1, rel=1e-9, abs=1e-13)
        assert moved == pytest.approx(math.hypot(*(pos1 - pos0)), rel=1e-9, abs=1e-13)


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_drift_sideslip_is_positive_with_the_velocity_right_of_the_nose(side):
    """Turned 1 rad left, moving at 8 m/s at 30 deg to the right of the nose (a counter-clockwise
    drift, the task's direction): sideslip channel +30 deg and the sideslip term its full weight
    x moving (1 at 8 m/s); at 30 deg to the left: -30 deg and no sideslip reward."""
    env = gym.make("Traction/Drift-v1")
    u = env.unwrapped
    env.reset(seed=0)
    beta = math.radians(30.0)
    heading = 1.0 - side * beta                      # the velocity's direction in the world
    obs = _yawed(env, 1.0, [8.0 * math.cos(heading), 8.0 * math.sin(heading), 0.0])
    assert obs[1] == pytest.approx(side * beta, abs=1e-6)       # (|vx| + 1e-6 in atan2)
    c = u.read_chassis()
    assert u.sideslip(c) == pytest.approx(side * beta, abs=1e-6)
    term = u.reward_terms(c)["sideslip"]
    assert term == pytest.approx(u.weights["sideslip"] if side > 0 else 0.0, abs=1e-6)


@pytest.mark.parametrize("yaw, offset", [(3.0, 0.3), (-3.0, -0.3), (3.1, 3.0), (-3.1, -3.0),
                                         (0.5, -3.1), (math.pi - 0.01, 0.02)])
def test_tank_heading_error_wraps_across_the_seam(yaw, offset):
    """The heading error is the shortest signed turn to the target, in [-pi, pi): with the target
    drawn as start heading + offset, it is the offset (to the settling substep's yaw change),
    also when heading, target or their difference crosses +-pi. The reward terms use it: the
    last case (0.02 rad, across the seam) is within the hold tolerance, so its clock runs."""
    env = gym.make("Traction/TankTurn-v1")
    u = env.unwrapped
    env.reset(seed=0, options={"yaw": yaw, "target_offset": offset})
    assert -math.pi <= u.target < math.pi
    err = u.heading_error()
    assert err == pytest.approx(offset, abs=1e-4)
    info = env.step(np.zeros(2, np.float32))[4]
    assert abs(info["reward_heading"]) < 1e-3 * u.weights["heading"]
    assert u._held == (0.04 if abs(offset) < u.TOLERANCE else 0.0)  # the hold clock runs


def test_drift_starts_in_second_gear_with_the_engine_turning_with_the_wheels():
    """Drift's reset launches the car at 8-10 m/s in second gear with the engine at the wheels'
    spin x (second gear x final ratio): the clutch does not slip at the start (a mismatched
    engine speed would jerk the car on its first substep)."""
    env = gym.make("Traction/Drift-v1")
    u = env.unwrapped
    gb = u.vehicle.gearbox
    for seed in range(3):
        _, info = env.reset(seed=seed)
        out = u.sim.outputs
        engine = float(out.engine_omega[0])
        assert info["gear"] == 2
        assert float(out.vehicle[0]["gear_ratio"]) == pytest.approx(
            gb.forward_ratios[1] * gb.final_ratio)
        assert engine == pytest.approx(info["engine_rpm"] * 2 * math.pi / 60)
        assert engine > 100.0                                     # rad/s, turning
        assert abs(float(out.clutch_slip[0])) < 0.01 * engine


def test_drift_can_start_in_a_slide_yawing_with_the_circle():
    """``start_sideslip_deg`` = 30: episodes start with the nose turned in by a sideslip drawn
    in [0, 30] deg (observation 1; seen across the range), yawing at about speed / radius (the
    circle's rate; the first substep's tyre forces take a little of it). At 0, the default, no
    draw is added: the start is the task's own, without sideslip or yaw."""
    env = gym.make("Traction/Drift-v1", start_sideslip_deg=30.0)
    u = env.unwrapped
    slides = []
    for seed in range(12):
        obs, _ = env.reset(seed=seed)
        c = u.read_chassis()
        slides.append(math.degrees(obs[1]))
        assert c.angular[2] == pytest.approx(c.speed / u.radius, rel=0.08)
    assert min(slides) > -0.5 and max(slides) < 30.5 and max(slides) - min(slides) > 15.0
    plain, given = gym.make("Traction/Drift-v1"), gym.make("Traction/Drift-v1",
                                                           start_sideslip_deg=0.0)
    for seed in range(3):
        a, b = plain.reset(seed=seed)[0], given.reset(seed=seed)[0]
        assert np.array_equal(a, b) and abs(a[1]) < 1e-9 and abs(a[2]) < 1e-9
    with pytest.raises(ValueError, match="start_sideslip_deg"):
        u.start_sideslip_deg = 80.0


def test_tank_hold_needs_the_heading_held_without_a_break():
    """The hold term pays once the heading error has stayed within 2 deg for 1 s (25 steps):
    10 steps within, one step off (the target moved 0.5 rad), back within: the hold pays at
    the 25th step after the break, not the 15th."""
    env = gym.make("Traction/TankTurn-v1")
    u = env.unwrapped
    env.reset(seed=0, options={"yaw": 0.3, "target_offset": 0.0})
    still = np.zeros(2, np.float32)
    for _ in range(10):
        assert env.step(still)[4]["reward_hold"] == 0.0
    target = u.target
    u.target = target + 0.5
    assert env.step(still)[4]["reward_hold"] == 0.0
    u.target = target
    paid = [env.step(still)[4]["reward_hold"] > 0 for _ in range(30)]
    assert paid.index(True) == 24 and all(paid[24:])


class _Terms(TankTurnEnv):
    """A task of your own whose reward terms or observation do not match what it declares."""

    def __init__(self, drop=None, add=None, obs_size=9, **kwargs):
        super().__init__(**kwargs)
        self.drop, self.add, self.obs_size = drop, add, obs_size

    def reward_terms(self, c):
        terms = super().reward_terms(c)
        terms.pop(self.drop, None)
        return {**terms, **({self.add: 1.0} if self.add else {})}

    def observation(self, c):
        return super().observation(c)[:self.obs_size]


@pytest.mark.parametrize("kwargs", [{"drop": "hold"}, {"add": "style"}])
def test_reward_terms_other_than_declared_are_named(kwargs):
    """A term left out raised a bare KeyError; one not in reward_names was silently dropped."""
    env = _Terms(**kwargs)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"_Terms.reward_terms returned \[.*\]; expected the "
                                         r"terms of reward_names, \['heading', "):
        env.step(np.zeros(2, np.float32))


def test_an_observation_of_another_shape_than_the_space_is_named():
    """It passed in a single env and failed inside numpy in the vector env."""
    with pytest.raises(ValueError, match=r"_Terms.observation returned shape \(8,\); the "
                                         r"observation space's is \(9,\)"):
        _Terms(obs_size=8).reset(seed=0)
