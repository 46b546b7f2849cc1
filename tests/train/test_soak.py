"""The CI soak: 20k steps of random (partly out-of-range) actions over every task with resets;
nothing non-finite, nothing diverges, memory does not grow."""

from traction.train import soak


def test_soak_20k_steps_is_clean():
    report = soak.soak(steps=20_000, seed=3, episode_steps=200)
    assert report["steps"] == 20_000 and report["non_finite"] == 0 and report["diverged"] == 0
    assert report["resets"] >= 90 and report["rss_peak_mb"] > 0
    assert report["rss_growth_after_warmup_mb"] < 50.0


def test_resident_memory_is_read_as_the_kernel_reports_it():
    """``_rss_mb`` is the resident set (VmRSS), not the virtual size (VmSize, several times
    larger once numba, MuJoCo and torch are mapped)."""
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    rss = int(fields["VmRSS"].split()[0]) / 1024                    # kB -> MB
    size = int(fields["VmSize"].split()[0]) / 1024
    assert abs(soak._rss_mb() - rss) < 5.0 < size - rss


def test_peak_memory_and_non_finite_steps_are_counted(monkeypatch):
    """The peak is the kernel's high-water mark (ru_maxrss, kB) in MB; a step whose observation
    holds a NaN counts as non-finite even when its reward is finite."""
    import types

    import gymnasium as gym
    import numpy as np

    class NanOnce(gym.Wrapper):
        count = 0

        def step(self, action):
            obs, r, term, trunc, info = self.env.step(action)
            NanOnce.count += 1
            if NanOnce.count == 2:
                obs = np.full_like(obs, np.nan)
            return obs, r, term, trunc, info

    make = gym.make
    monkeypatch.setattr(soak.gym, "make", lambda *a, **k: NanOnce(make(*a, **k)))
    monkeypatch.setattr(soak.resource, "getrusage",
                        lambda who: types.SimpleNamespace(ru_maxrss=8 * 2**20))  # kB: 8 GB
    report = soak.soak(steps=6, seed=0)
    assert report["non_finite"] == 1 and report["steps"] == 6
    assert report["rss_peak_mb"] == 8 * 1024
