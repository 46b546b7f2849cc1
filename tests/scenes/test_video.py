"""VideoWriter: GIF fallback when there is no ffmpeg binary, with the right frame duration."""

import numpy as np
import pytest
from PIL import Image

from traction.scenes import video
from traction.scenes.video import VideoWriter


def _write(path, fps, n=3):
    with VideoWriter(path, fps=fps) as writer:
        for i in range(n):
            writer.append(np.full((32, 48, 3), 60 * i, np.uint8))
    return writer


def _durations(path):
    im = Image.open(path)
    out = []
    for k in range(im.n_frames):
        im.seek(k)
        out.append(im.info["duration"])
    return out


def test_missing_ffmpeg_binary_falls_back_to_gif(tmp_path, monkeypatch):
    import imageio_ffmpeg

    def no_ffmpeg():
        raise RuntimeError("No ffmpeg exe could be found.")

    monkeypatch.delenv("IMAGEIO_FFMPEG_EXE", raising=False)
    monkeypatch.setattr(imageio_ffmpeg, "get_ffmpeg_exe", no_ffmpeg)
    writer = _write(tmp_path / "clip.mp4", fps=10)
    assert writer.path == tmp_path / "clip.gif" and writer.frames == 3
    assert Image.open(writer.path).n_frames == 3
    assert not (tmp_path / "clip.mp4").exists()


def test_ffmpeg_variable_naming_a_missing_file_falls_back_to_gif(tmp_path, monkeypatch):
    monkeypatch.setenv("IMAGEIO_FFMPEG_EXE", str(tmp_path / "no-such-ffmpeg"))
    assert video.ffmpeg_exe() is None
    assert _write(tmp_path / "clip.mp4", fps=10).path.suffix == ".gif"


@pytest.mark.parametrize("fps, ms", [(2, 500), (4, 250), (25, 40)])
def test_gif_frames_last_one_over_fps(tmp_path, monkeypatch, fps, ms):
    monkeypatch.setattr(video, "ffmpeg_exe", lambda: None)
    writer = _write(tmp_path / "clip.mp4", fps=fps)
    assert _durations(writer.path) == [ms] * 3


def test_mp4_when_ffmpeg_is_there(tmp_path):
    if video.ffmpeg_exe() is None:
        pytest.skip("no ffmpeg binary on this machine")
    assert _write(tmp_path / "clip.mp4", fps=10).path.suffix == ".mp4"


@pytest.mark.parametrize("fps", [0, -5, float("nan"), "25"])
def test_bad_frame_rate_is_refused(tmp_path, fps):
    with pytest.raises(ValueError, match=r"fps = .*; allowed: \(0, 1000\] frames/s"):
        VideoWriter(tmp_path / "v.mp4", fps=fps)


def test_frames_must_be_rgb_bytes_of_one_size(tmp_path):
    """A float image in [0, 1] would be cast to black; a frame of another size would break
    the encoder's stream."""
    with VideoWriter(tmp_path / "v.mp4", fps=10) as writer:
        with pytest.raises(ValueError, match=r"frame float64 \(16, 16, 3\); allowed: uint8"):
            writer.append(np.full((16, 16, 3), 0.5))
        writer.append(np.zeros((16, 16, 3), np.uint8))
        with pytest.raises(ValueError, match=r"frame \(32, 16, 3\); the video's frames are"):
            writer.append(np.zeros((32, 16, 3), np.uint8))
        assert writer.frames == 1


@pytest.mark.parametrize("name, written", [("climb_0.4", "climb_0.4"), ("my.run.v2", "my.run.v2"),
                                           ("clip.mp4", "clip"), ("clip.GIF", "clip")])
def test_a_dot_in_the_name_is_kept(tmp_path, monkeypatch, name, written):
    """Only a .mp4/.gif suffix is replaced: climb_0.4 and climb_0.6 wrote one climb_0 file."""
    monkeypatch.setattr(video, "ffmpeg_exe", lambda: None)
    assert _write(tmp_path / name, fps=10).path == tmp_path / f"{written}.gif"


def test_odd_mp4_frames_keep_their_size_up_to_even_and_close_without_frames_is_none(tmp_path):
    if video.ffmpeg_exe() is None:
        pytest.skip("no ffmpeg binary on this machine")
    import imageio.v2 as imageio

    with VideoWriter(tmp_path / "odd", fps=10) as writer:
        for i in range(3):
            writer.append(np.full((241, 321, 3), 60 * i, np.uint8))
    assert imageio.get_reader(writer.path).get_data(0).shape == (242, 322, 3)   # was 248 x 328
    assert VideoWriter(tmp_path / "empty", fps=10).close() is None
