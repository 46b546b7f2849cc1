"""Episode videos: MP4 through imageio's ffmpeg plugin, GIF when ffmpeg is unavailable."""

from __future__ import annotations

from pathlib import Path

import numpy as np


class VideoWriter:
    """Streams frames to ``path``. MP4 (H.264) if ``imageio-ffmpeg`` works, else a GIF next to
    it (``.gif``); :attr:`path` is the file actually written.

    Use as a context manager or call :meth:`close`.
    """

    def __init__(self, path: str | Path, fps: int = 30):
        import imageio.v2 as imageio

        self.path = Path(path)
        self.fps = fps
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._writer = imageio.get_writer(self.path.with_suffix(".mp4"), fps=fps,
                                              codec="libx264", quality=7, macro_block_size=8)
            self.path = self.path.with_suffix(".mp4")
        except (ImportError, RuntimeError, ValueError):
            self.path = self.path.with_suffix(".gif")
            self._writer = imageio.get_writer(self.path, mode="I", duration=1.0 / fps)
        self.frames = 0

    def append(self, frame: np.ndarray) -> None:
        self._writer.append_data(np.asarray(frame, dtype=np.uint8))
        self.frames += 1

    def close(self) -> Path:
        self._writer.close()
        return self.path

    def __enter__(self) -> VideoWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
