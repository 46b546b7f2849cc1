"""The CI soak: 20k steps of random (partly out-of-range) actions over every task with resets;
nothing non-finite, nothing diverges, memory does not grow."""

from traction.train import soak


def test_soak_20k_steps_is_clean():
    report = soak.soak(steps=20_000, seed=3, episode_steps=200)
    assert report["steps"] == 20_000 and report["non_finite"] == 0 and report["diverged"] == 0
    assert report["resets"] >= 90 and report["rss_peak_mb"] > 0
    assert report["rss_growth_after_warmup_mb"] < 50.0
