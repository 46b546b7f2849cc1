"""The SB3 adapter of the native vector env against SB3's own ``DummyVecEnv`` of ``gym.make``
envs: action checks, float64 actions, time limits, specs and resets made through
``env_method``."""

import gymnasium as gym
import numpy as np
import pytest

import traction.envs  # noqa: F401  (registers the ids)

pytest.importorskip("stable_baselines3")
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402

from traction.train.sb3_vec import TractionSB3VecEnv  # noqa: E402

TANK = "Traction/TankTurn-v1"


def test_wrongly_shaped_actions_are_refused_naming_the_expected_shape():
    venv = TractionSB3VecEnv(TANK, 4)
    venv.reset()
    for bad in (np.zeros((2, 4)), np.zeros(8), np.zeros((4, 3))):   # same sizes, or one more
        with pytest.raises(ValueError, match=r"actions shape .*; expected \(4, 2\) "
                                             r"\(num_envs, left, right\)"):
            venv.step(bad)
    venv.step(np.zeros((4, 2)))                                     # and then it steps
    venv.close()


def test_float64_actions_step_as_dummy_vec_env_steps_them():
    ours = TractionSB3VecEnv("Traction/Drift-v1", 2)
    ref = make_vec_env(lambda: gym.make("Traction/Drift-v1"), n_envs=2)
    ours.seed(5)
    ref.seed(5)
    ours.reset()
    ref.reset()
    rng = np.random.default_rng(2)
    for _ in range(6):
        a = rng.uniform(-1, 1, (2, 4)) * (1 + 1e-9)        # not float32 values
        o1, r1, _, _ = ours.step(a)
        o2, r2, _, _ = ref.step(a)
        assert np.array_equal(o1, o2) and np.array_equal(r1, r2.astype(np.float32))
    huge = np.zeros((2, 4))
    huge[0, 1] = 1e39                                      # beyond float32: clipped, as there
    assert np.array_equal(ours.step(huge)[0], ref.step(huge)[0])
    ours.close()


def test_time_limit_reads_as_gym_make_and_specs_are_gym_makes():
    assert TractionSB3VecEnv(TANK, 1, max_episode_steps=-1).venv.max_episode_steps is None
    assert TractionSB3VecEnv(TANK, 1).venv.max_episode_steps == 400
    for bad in (0, -2, 2.5, True):
        with pytest.raises(ValueError, match=r"max_episode_steps = .*; allowed: an integer >= 1, "
                                             r"-1 \(no limit\) or None"):
            TractionSB3VecEnv(TANK, 1, max_episode_steps=bad)
    venv = TractionSB3VecEnv(TANK, 2, max_episode_steps=7, drive_mode="standard", num_threads=2)
    spec = venv.get_attr("spec")[0]
    made = gym.make(TANK, max_episode_steps=7, drive_mode="standard").spec
    assert (spec.id, spec.max_episode_steps, spec.kwargs) == \
        (made.id, made.max_episode_steps, made.kwargs)
    assert gym.make(spec).spec.kwargs["drive_mode"] == "standard"   # the spec remakes the env
    native = gym.make_vec(TANK, num_envs=2, vectorization_mode="vector_entry_point",
                          max_episode_steps=7, num_threads=2)
    assert native.unwrapped.envs[1].spec.max_episode_steps == 7
    assert "num_threads" not in native.unwrapped.envs[1].spec.kwargs


def test_reset_through_env_method_restarts_the_time_limit_as_in_dummy_vec_env():
    ours = TractionSB3VecEnv(TANK, 2, max_episode_steps=10)
    ref = make_vec_env(lambda: gym.make(TANK, max_episode_steps=10), n_envs=2)
    for v in (ours, ref):
        v.seed(1)
        v.reset()
    a = np.zeros((2, 2), np.float32)
    for _ in range(6):
        ours.step(a)
        ref.step(a)
    for v in (ours, ref):
        v.env_method("reset", seed=9, indices=[0])
    for _ in range(6):
        d1, d2 = ours.step(a)[2], ref.step(a)[2]
        assert np.array_equal(d1, d2)
    assert not d1[0]                                     # world 0: 6 steps into its new episode
    native = gym.make_vec(TANK, num_envs=2, vectorization_mode="vector_entry_point",
                          max_episode_steps=4)
    native.reset(seed=0)
    for _ in range(3):
        native.step(a)
    native.call("reset", seed=2)
    assert not native.step(a)[3].any()                   # step 1 of 4, not 4 of 4


# As in SB3's own VecEnvs, ``seed(s)`` applies to the next ``reset()``
# only; later resets continue the seeded generators (an evaluation callback resets its env once
# per evaluation: re-seeding each time replayed the same start states). Not clearing the seeds
# after a reset went unseen.
def test_a_seed_applies_to_the_next_reset_only_as_in_dummy_vec_env():
    ours = TractionSB3VecEnv("Traction/Drift-v1", 2)
    ref = make_vec_env(lambda: gym.make("Traction/Drift-v1"), n_envs=2)
    ours.seed(5)
    ref.seed(5)
    first = ours.reset()
    assert np.array_equal(first, ref.reset())
    second = ours.reset()
    assert np.array_equal(second, ref.reset())             # unseeded: the generators go on
    assert not np.array_equal(first, second)
    ours.close()
    ref.close()


@pytest.mark.parametrize("env_id", traction.envs.ENV_IDS)
def test_infos_are_dummy_vec_envs_key_for_key_and_reward_terms_match(env_id):
    """The adapter builds each world's info from the batch's diagnostics computed at once; they
    hold the values, types and keys ``gym.make`` envs give (through episode ends), and
    ``reward_terms`` holds the step's terms (an ended episode's: its last step's)."""
    ours = TractionSB3VecEnv(env_id, 2, max_episode_steps=5)
    ref = make_vec_env(lambda: gym.make(env_id, max_episode_steps=5), n_envs=2)
    ours.seed(3)
    ref.seed(3)
    ours.reset()
    ref.reset()
    rng = np.random.default_rng(0)
    keys = ours.reward_keys
    for _ in range(12):
        a = rng.uniform(-1, 1, (2, ours.action_space.shape[0])).astype(np.float32)
        infos, expected = ours.step(a)[3], ref.step(a)[3]
        for i, (mine, theirs) in enumerate(zip(infos, expected, strict=True)):
            assert set(mine) == set(theirs) - {"episode"}               # (Monitor's key)
            for key, value in mine.items():
                assert type(value) is type(theirs[key]), key
                assert np.array_equal(value, theirs[key]), key
            assert ours.reward_terms[i].tolist() == [mine[k] for k in keys]
    ours.close()
