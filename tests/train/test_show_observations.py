"""The observation pictures tool (``python -m traction.train.show_observations``)."""

import pytest

from traction.train import show_observations


def test_writes_a_picture_per_task(tmp_path):
    pytest.importorskip("matplotlib")
    from PIL import Image

    written = show_observations.main(["--out", str(tmp_path), "--steps", "3",
                                      "--envs", "Traction/Drift-v1"])
    assert written == [tmp_path / "drift_observations.png"]
    width, height = Image.open(written[0]).size
    assert width > 2 * height > 400                     # three panels side by side


def test_observations_hold_the_frame_pixels_and_scan():
    shown = show_observations.observations("Traction/TankTurn-v1", 2, 0)
    assert shown["frame"].shape == (360, 480, 3) and shown["pixels"].shape == (84, 84, 3)
    assert shown["lidar"].shape == (64,) and shown["beams"].shape == (64, 3)
    assert (shown["lidar"] < shown["range"]).any()      # the -10 deg plane meets the arena
