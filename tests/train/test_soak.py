"""A short soak: random (partly out-of-range) actions with resets; nothing non-finite."""

from traction.train import soak


def test_short_soak_is_clean():
    report = soak.soak(steps=600, seed=3, episode_steps=60)
    assert report["steps"] == 600 and report["non_finite"] == 0 and report["diverged"] == 0
    assert report["resets"] >= 9 and report["rss_peak_mb"] > 0
