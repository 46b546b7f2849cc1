"""Offscreen rendering of scenes: RGB frames from a named camera, optional text overlay.

Headless machines need ``MUJOCO_GL=egl`` (or ``osmesa`` with Debian's ``libosmesa6``);
``import traction.scenes`` sets ``egl`` when nothing is set and there is no display, but only
if it comes before ``import mujoco`` (MuJoCo reads the variable at its first import).
"""

from __future__ import annotations

import mujoco
import numpy as np

from traction.vehicle_model.params import check_number

from . import names


class SceneRenderer:
    """Renders ``rgb_array`` frames of one model.

    Args:
        model: the compiled model.
        width, height: frame size in pixels (at most the model's offscreen buffer, 1280x720).
        camera: camera name (``chase``, ``top`` or ``driver``) or -1 for the free camera.
    """

    def __init__(self, model: mujoco.MjModel, width: int = 640, height: int = 480,
                 camera: str | int = names.CAMERA_CHASE):
        glob = model.vis.global_
        check_number("width", width, 1, glob.offwidth, integer=True, unit="px")
        check_number("height", height, 1, glob.offheight, integer=True, unit="px")
        self.model = model
        self.camera = self._camera(camera)
        try:
            self.renderer = mujoco.Renderer(model, height=height, width=width)
        except mujoco.FatalError as e:
            raise RuntimeError(
                f"MuJoCo could not open an OpenGL context ({e}). Without a display, set "
                "MUJOCO_GL=egl (or osmesa) before mujoco is first imported: MuJoCo reads it "
                "then (importing traction before mujoco sets egl for you)") from None
        self.option = mujoco.MjvOption()
        self._uploaded = (model.hfield_data.copy(), model.hfield_size.copy())

    def _camera(self, camera: str | int) -> str | int:
        """``camera`` if the model has it (ValueError listing the model's cameras)."""
        cams = [mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_CAMERA, i)
                for i in range(self.model.ncam)]
        if isinstance(camera, np.integer):
            camera = int(camera)
        if camera == -1 or camera in cams or (isinstance(camera, int) and
                                              not isinstance(camera, bool) and
                                              0 <= camera < self.model.ncam):
            return camera
        raise ValueError(f"camera = {camera!r}; allowed: {', '.join(map(str, cams))} or -1 (free)")

    def refresh_heightfields(self) -> None:
        """Upload the model's heightfields to this renderer's GPU copy if they changed since
        (a regenerated or restored terrain); :meth:`frame` calls it. The upload goes to the
        current GL context, so this renderer's is made current first: with several renderers
        in one process, another's would get it (and this one draw the old terrain)."""
        data, size = self._uploaded
        if np.array_equal(self.model.hfield_data, data) and \
                np.array_equal(self.model.hfield_size, size):
            return
        if self.renderer._gl_context is not None:
            self.renderer._gl_context.make_current()
        for hid in range(self.model.nhfield):
            mujoco.mjr_uploadHField(self.model, self.renderer._mjr_context, hid)
        data[:], size[:] = self.model.hfield_data, self.model.hfield_size

    def frame(self, data: mujoco.MjData, overlay: str | None = None,
              camera: str | int | None = None, segmentation: bool = False) -> np.ndarray:
        """One frame ``(height, width, 3)`` uint8 (or ``(h, w, 2)`` object ids/types when
        ``segmentation``); ``overlay`` is drawn as text in the top-left corner."""
        cam = self.camera if camera is None else self._camera(camera)
        if overlay and segmentation:
            raise ValueError("overlay: text is drawn on RGB frames, not on segmentation")
        self.refresh_heightfields()
        if segmentation:
            self.renderer.enable_segmentation_rendering()
        self.renderer.update_scene(data, camera=cam, scene_option=self.option)
        img = self.renderer.render()
        if segmentation:
            self.renderer.disable_segmentation_rendering()
            return img
        return draw_text(img, overlay) if overlay else img

    def close(self) -> None:
        self.renderer.close()


def draw_text(img: np.ndarray, text: str) -> np.ndarray:
    """Text (one line per ``\\n``) on a dark box in the top-left corner, using Pillow.

    Raises:
        ImportError: Pillow (the ``render`` extra) is not installed.
    """
    try:
        from PIL import Image, ImageDraw
    except ImportError as e:
        raise ImportError('a text overlay needs Pillow: pip install -e ".[render]"') from e

    pil = Image.fromarray(img)
    draw = ImageDraw.Draw(pil)
    lines = text.splitlines()
    width = max(len(line) for line in lines) * 6 + 10
    draw.rectangle([4, 4, 4 + width, 8 + 11 * len(lines)], fill=(0, 0, 0))
    draw.multiline_text((8, 6), text, fill=(255, 255, 255), spacing=1)
    return np.asarray(pil)
