"""Episode videos: MP4 through imageio's ffmpeg plugin, GIF when ffmpeg is unavailable."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from traction.vehicle_model.params import check_number


def ffmpeg_exe() -> str | None:
    """The ffmpeg binary imageio would start (``imageio-ffmpeg``'s bundled one, the
    ``IMAGEIO_FFMPEG_EXE`` variable's, conda's or the system's), or None if there is none.
    imageio starts ffmpeg only at the first frame, so this is asked up front."""
    try:
        import imageio_ffmpeg

        exe = imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError):
        return None
    return exe if exe and (Path(exe).is_file() or shutil.which(exe)) else None


def _with_suffix(path: Path, suffix: str) -> Path:
    """``path`` with its ``.mp4``/``.gif`` suffix replaced by ``suffix``, or ``suffix`` appended
    (``climb_0.4`` -> ``climb_0.4.mp4``, not ``climb_0.mp4``)."""
    if path.suffix.lower() in (".mp4", ".gif"):
        return path.with_suffix(suffix)
    return path.with_name(path.name + suffix)


class VideoWriter:
    """Streams frames to ``path``. MP4 (H.264) if an ffmpeg binary is available, else a GIF
    next to it (``.gif``); :attr:`path` is the file actually written (``.mp4`` or ``.gif``
    replaces those suffixes and is appended to any other name).

    MP4 frames of an odd width or height are resized to the next even size (H.264's 4:2:0
    colour). A GIF keeps frame times in whole 10 ms (its unit): ``1000 / fps`` ms rounded, so
    30 fps plays at 33.3 fps, and many viewers show frames under 20 ms at 100 ms.

    Use as a context manager or call :meth:`close`.

    Raises:
        ImportError: imageio is not installed (the ``render`` extra).
        ValueError: ``fps`` is not a finite number in (0, 1000].
    """

    def __init__(self, path: str | Path, fps: int = 30):
        fps = check_number("fps", fps, 0.0, 1000.0, lo_open=True, unit="frames/s")
        try:
            import imageio.v2 as imageio
        except ImportError as e:
            raise ImportError('VideoWriter needs imageio: pip install -e ".[render]"') from e
        self.path = Path(path)
        self.fps = fps
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._writer = None
        if ffmpeg_exe() is not None:
            try:
                self._writer = imageio.get_writer(_with_suffix(self.path, ".mp4"), fps=fps,
                                                  codec="libx264", quality=7, macro_block_size=2)
                self.path = _with_suffix(self.path, ".mp4")
            except (ImportError, RuntimeError, ValueError):
                self._writer = None
        if self._writer is None:
            self.path = _with_suffix(self.path, ".gif")
            # imageio's GIF writer (Pillow) takes the frame duration in milliseconds
            self._writer = imageio.get_writer(self.path, mode="I", duration=1000.0 / fps)
        self.frames = 0

    def append(self, frame: np.ndarray) -> None:
        """Add one ``(height, width, 3)`` uint8 RGB frame, the size of the first (ValueError
        otherwise: a float image would be cast to black)."""
        frame = np.asarray(frame)
        if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
            raise ValueError(f"frame {frame.dtype} {frame.shape}; allowed: uint8 (height, width, "
                             "3) RGB (as env.render() returns)")
        if self.frames and frame.shape != self._shape:
            raise ValueError(f"frame {frame.shape}; the video's frames are {self._shape}")
        self._shape = frame.shape
        self._writer.append_data(frame)
        self.frames += 1

    def close(self) -> Path | None:
        """Finish the file: its path, or None when no frame was appended (no file is written)."""
        self._writer.close()
        return self.path if self.frames else None

    def __enter__(self) -> VideoWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
