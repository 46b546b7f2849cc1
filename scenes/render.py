"""Offscreen rendering of scenes: RGB frames from a named camera, markers, optional text overlay.

Headless machines need ``MUJOCO_GL=egl`` (or ``osmesa`` with Debian's ``libosmesa6``);
``import traction.scenes`` sets ``egl`` when nothing is set and there is no display, but only
if it comes before ``import mujoco`` (MuJoCo reads the variable at its first import).

Two render qualities: ``high`` draws with the model's settings (a 4096 x 4096 shadow map and 4x
multisampling: what a GPU draws in a millisecond or two); ``low`` draws without shadow maps and
multisampling, and grounds the vehicle with a soft shadow drawn under it. On a software OpenGL
(Mesa's llvmpipe, what EGL and OSMesa give a machine without a GPU) the shadow passes and the
multisample resolve are most of a frame's time: a 480 x 360 chase frame of TankTurn took
200 ms in ``high`` and 30 ms in ``low`` on 2 cores. ``auto`` (the default) picks ``low`` on a
software renderer and ``high`` on any other, so GPU frames are unchanged.

A process that has rendered and then forks (``multiprocessing``'s default start method on Linux,
Gymnasium's ``AsyncVectorEnv``'s unless told otherwise) hands its children an OpenGL library whose
threads did not survive the fork: a child that renders hangs. :class:`SceneRenderer` refuses in
such a child with an error saying to start the workers with ``spawn``.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import os
import sys
from dataclasses import dataclass

import mujoco
import numpy as np

from traction.vehicle_model.params import check_number

from . import names

#: render qualities (see the module docstring)
QUALITIES = ("auto", "high", "low")
#: words in ``GL_RENDERER`` of the software OpenGL implementations (Mesa's llvmpipe, softpipe and
#: swrast, Google's SwiftShader, Windows' and Apple's fallbacks)
SOFTWARE_GL = ("llvmpipe", "softpipe", "swrast", "software", "swiftshader", "gdi generic",
               "basic render")

_gl_pid: int | None = None          # the process that opened a GL context, if any


def _note_fork() -> None:
    """In a forked child: remember whether the parent had opened OpenGL (through a
    :class:`SceneRenderer` or MuJoCo's EGL display): it will not work here."""
    global _forked_after_gl
    egl = sys.modules.get("mujoco.egl")
    _forked_after_gl = _gl_pid is not None or getattr(egl, "EGL_DISPLAY", None) is not None


_forked_after_gl = False
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_note_fork)


def _opening_gl() -> None:
    """Before a GL context is made: RuntimeError in a child forked after its parent rendered."""
    global _gl_pid
    if _forked_after_gl:
        raise RuntimeError(
            "this process was forked from one that had rendered: OpenGL (EGL, OSMesa) does not "
            "survive a fork and rendering here would hang. Start the workers with spawn: "
            "gym.make_vec(..., vectorization_mode='async', vector_kwargs={'context': 'spawn'}) "
            "(and put the script's code under if __name__ == '__main__':), or render only after "
            "the workers are started")
    _gl_pid = os.getpid()


@functools.cache
def gl_renderer() -> str:
    """The OpenGL implementation's ``GL_RENDERER`` string (e.g. ``llvmpipe (LLVM 15.0.6, 256
    bits)``, or a GPU's name); ``""`` if it cannot be read. Asked once per process, from a
    1 x 1 context of its own."""
    _opening_gl()
    probe = mujoco.Renderer(mujoco.MjModel.from_xml_string("<mujoco/>"), 1, 1)
    try:
        from OpenGL import GL

        name = GL.glGetString(GL.GL_RENDERER)
        return name.decode(errors="replace") if isinstance(name, bytes) else str(name or "")
    except Exception:          # (PyOpenGL without a platform for this context: unknown)
        return ""
    finally:
        probe.close()


def software_gl() -> bool:
    """Whether OpenGL draws on the CPU (:data:`SOFTWARE_GL`)."""
    name = gl_renderer().lower()
    return any(word in name for word in SOFTWARE_GL)


def resolve_quality(quality: str) -> str:
    """``high`` or ``low`` for ``quality`` (``auto``: ``low`` on a software OpenGL); ValueError
    for another name."""
    if quality not in QUALITIES:
        raise ValueError(f"quality = {quality!r}; allowed: {', '.join(QUALITIES)}")
    if quality == "auto":
        return "low" if software_gl() else "high"
    return quality


@dataclass(frozen=True)
class Marker:
    """A shape drawn into frames only (not part of the model: rays, contacts and the physics
    never see it): a MuJoCo geom type, its size, position and rotation matrix (world; m) and
    colour (RGBA in [0, 1]). Build them with :meth:`arrow`, :meth:`disc`, :meth:`pole`,
    :meth:`box`."""

    type: int
    size: tuple
    pos: tuple
    mat: tuple = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    rgba: tuple = (1.0, 1.0, 1.0, 1.0)
    start: tuple | None = None        # connector geoms (arrows): from ``start`` to ``pos``
    width: float = 0.0

    @functools.cached_property
    def opaque(self) -> Marker:
        """The marker with its colour's alpha 1 (made once)."""
        return self if self.rgba[3] >= 1.0 else dataclasses.replace(
            self, rgba=(*self.rgba[:3], 1.0))

    @functools.cached_property
    def arrays(self) -> tuple:
        """``(size, pos, mat, rgba)`` as the arrays ``mjv_initGeom`` takes (made once)."""
        return (np.array(self.size, float), np.array(self.pos, float),
                np.array(self.mat, float), np.array(self.rgba, np.float32))

    @classmethod
    def arrow(cls, start, end, width: float, rgba) -> Marker:
        """An arrow from ``start`` to ``end`` (m, world), ``width`` m thick."""
        return cls(int(mujoco.mjtGeom.mjGEOM_ARROW), (0.0, 0.0, 0.0), tuple(map(float, end)),
                   rgba=tuple(rgba), start=tuple(map(float, start)), width=float(width))

    @classmethod
    def disc(cls, centre, radius: float, thickness: float, rgba) -> Marker:
        """A flat disc (vertical axis) of ``radius`` m centred at ``centre``."""
        return cls(int(mujoco.mjtGeom.mjGEOM_CYLINDER), (radius, thickness / 2, 0.0),
                   tuple(map(float, centre)), rgba=tuple(rgba))

    @classmethod
    def pole(cls, base, height: float, radius: float, rgba) -> Marker:
        """A vertical pole of ``height`` m standing on ``base``."""
        x, y, z = map(float, base)
        return cls(int(mujoco.mjtGeom.mjGEOM_CYLINDER), (radius, height / 2, 0.0),
                   (x, y, z + height / 2), rgba=tuple(rgba))

    @classmethod
    def box(cls, centre, half_sizes, mat, rgba) -> Marker:
        """A box of ``half_sizes`` (m) at ``centre`` rotated by ``mat`` (9 numbers, row-major)."""
        return cls(int(mujoco.mjtGeom.mjGEOM_BOX), tuple(map(float, half_sizes)),
                   tuple(map(float, centre)), tuple(map(float, np.ravel(mat))), tuple(rgba))


def ring(centre, radius: float, width: float, rgba, segments: int = 96) -> list[Marker]:
    """A horizontal ring (a circle line ``width`` m wide) of ``radius`` m around ``centre``, as
    ``segments`` thin boxes (made once per ring: a task draws the same ring at every frame)."""
    return list(_ring(tuple(map(float, centre)), float(radius), float(width),
                      tuple(map(float, rgba)), int(segments)))


@functools.lru_cache(maxsize=64)
def _ring(centre, radius, width, rgba, segments) -> tuple[Marker, ...]:
    cx, cy, cz = centre
    half = radius * np.tan(np.pi / segments) * 1.02          # (segments meet at the corners)
    out = []
    for t in np.arange(segments) * 2 * np.pi / segments:
        c, s = np.cos(t), np.sin(t)
        mat = (-s, -c, 0.0, c, -s, 0.0, 0.0, 0.0, 1.0)       # x along the tangent
        out.append(Marker.box((cx + radius * c, cy + radius * s, cz), (half, width / 2, 0.005),
                              mat, rgba))
    return tuple(out)


class SceneRenderer:
    """Renders ``rgb_array`` frames of one model.

    Args:
        model: the compiled model.
        width, height: frame size in pixels (at most the model's offscreen buffer, 1280x720).
        camera: camera name (``chase``, ``top``, ``driver`` or ``overhead``) or -1 for the free camera.
        quality: ``auto`` (default), ``high`` or ``low`` (see the module docstring);
            :attr:`quality` is the one used.

    Raises:
        ValueError: a size, camera or quality that is not allowed, naming it.
        RuntimeError: no OpenGL context (no display and no ``MUJOCO_GL``), or a child process
            forked after its parent rendered.
    """

    def __init__(self, model: mujoco.MjModel, width: int = 640, height: int = 480,
                 camera: str | int = names.CAMERA_CHASE, quality: str = "auto"):
        glob = model.vis.global_
        check_number("width", width, 1, glob.offwidth, integer=True, unit="px")
        check_number("height", height, 1, glob.offheight, integer=True, unit="px")
        if quality not in QUALITIES:
            raise ValueError(f"quality = {quality!r}; allowed: {', '.join(QUALITIES)}")
        self.model = model
        self.camera = self._camera(camera)
        _opening_gl()
        try:
            self.quality = resolve_quality(quality)
            collecting = gc.isenabled()       # (as in frame: the new context stays current)
            gc.disable()
            try:
                self.renderer = self._make_renderer(model, width, height, self.quality)
            finally:
                if collecting:
                    gc.enable()
        except mujoco.FatalError as e:
            raise RuntimeError(
                f"MuJoCo could not open an OpenGL context ({e}). Without a display, set "
                "MUJOCO_GL=egl (or osmesa) before mujoco is first imported: MuJoCo reads it "
                "then (importing traction before mujoco sets egl for you)") from None
        self.option = mujoco.MjvOption()
        self._uploaded = (model.hfield_data.copy(), model.hfield_size.copy(),
                          _ground_texels(model).copy())
        self._shadow = _ContactShadow(model) if self.quality == "low" else None

    @staticmethod
    def _make_renderer(model, width, height, quality) -> mujoco.Renderer:
        """A ``mujoco.Renderer``; ``low``: its context made without multisampling and with a
        small shadow map (the model's settings are put back), shadows off."""
        if quality == "high":
            return mujoco.Renderer(model, height=height, width=width)
        q = model.vis.quality
        saved = q.shadowsize, q.offsamples
        q.shadowsize, q.offsamples = 1024, 0
        try:
            renderer = mujoco.Renderer(model, height=height, width=width)
        finally:
            q.shadowsize, q.offsamples = saved
        renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = False
        return renderer

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
        data, size, texels = self._uploaded
        m = self.model
        if np.array_equal(m.hfield_data, data) and np.array_equal(m.hfield_size, size) and \
                np.array_equal(_ground_texels(m), texels):
            return
        drawn = self._terrain_source()
        if self.renderer._gl_context is not None:
            self.renderer._gl_context.make_current()
        for hid in range(m.nhfield):
            mujoco.mjr_uploadHField(drawn, self.renderer._mjr_context, hid)
        tid = mujoco.mj_name2id(drawn, mujoco.mjtObj.mjOBJ_TEXTURE, names.TERRAIN_TEXTURE)
        if tid >= 0:
            mujoco.mjr_uploadTexture(drawn, self.renderer._mjr_context, tid)
        data[:], size[:], texels[:] = m.hfield_data, m.hfield_size, _ground_texels(m)

    def _terrain_source(self) -> mujoco.MjModel:
        """The model whose heightfields and ground texture the GL context gets (the scene's)."""
        return self.model

    def frame(self, data: mujoco.MjData, overlay: str | None = None,
              camera: str | int | None = None, segmentation: bool = False,
              markers: tuple | list = ()) -> np.ndarray:
        """One frame ``(height, width, 3)`` uint8 (or ``(h, w, 2)`` object ids/types when
        ``segmentation``); ``markers`` (:class:`Marker`) are drawn into the scene (not into
        segmentation frames); ``overlay`` is drawn as text in the top-left corner."""
        cam = self.camera if camera is None else self._camera(camera)
        if overlay and segmentation:
            raise ValueError("overlay: text is drawn on RGB frames, not on segmentation")
        # No garbage collection while this renderer's GL context is current: a collected
        # renderer (of an env dropped without close) frees its context in __del__, making
        # that one current, and this frame's uploads and drawing would go to it (a test saw
        # 1 frame in 2 differ that way).
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._frame(data, cam, overlay, segmentation, markers)
        finally:
            if collecting:
                gc.enable()

    def _frame(self, data, cam, overlay, segmentation, markers) -> np.ndarray:
        self.refresh_heightfields()
        if segmentation:
            self.renderer.enable_segmentation_rendering()
        self.renderer.update_scene(data, camera=cam, scene_option=self.option)
        if not segmentation:
            extra = list(markers)
            if self._shadow is not None:
                extra += self._shadow.markers(data)
            _add_markers(self.renderer.scene, extra)
        img = self.renderer.render()
        if segmentation:
            self.renderer.disable_segmentation_rendering()
            return img
        return draw_text(img, overlay) if overlay else img

    def close(self) -> None:
        self.renderer.close()


#: A pixel observation's heightfield: at most this many grid points (about 2 m cells on the
#: shipped terrains: 32 x 32 over TankTurn's 60 m arena, 51 x 21 over Climb6x6's 100 x 40 m
#: hill; a cell is 2-4 pixels 10-20 m ahead). On a software OpenGL a frame's cost is its
#: triangles: TankTurn's 84 x 84 frame took 11 ms with its 241 x 241 grid, 1.6 ms at 4096
#: points, 0.8 ms at 1024, 0.4 ms without terrain.
OBSERVATION_HFIELD_POINTS = 1024
#: Quads along each side of a plane in a pixel observation (see ``ObservationCamera``)
OBSERVATION_PLANE_QUADS = 16
#: Slices and stacks of the cylinders (tyres) and spheres of a pixel observation (MuJoCo's
#: default 28 x 16 costs 7 ms of tyres per frame on a software OpenGL; 8 x 4 looks round at
#: 84 px)
OBSERVATION_SLICES = 8


def coarse_heightfield(data: np.ndarray, nrow: int, ncol: int, max_points: int
                       ) -> tuple[np.ndarray, int, int]:
    """A heightfield's ``data`` (``nrow * ncol`` elevations, row-major, rows along y) resampled
    onto a grid of at most ``max_points`` points spanning the same extent (linear
    interpolation, so the corners and edges stay where they are): ``(data, rows, cols)``."""
    k = max(1.0, float(np.sqrt(nrow * ncol / max_points)))
    rows, cols = max(2, int((nrow - 1) / k) + 1), max(2, int((ncol - 1) / k) + 1)
    while rows * cols > max(max_points, 4) and (rows > 2 or cols > 2):
        k *= 1.02
        rows, cols = max(2, int((nrow - 1) / k) + 1), max(2, int((ncol - 1) / k) + 1)
    if (rows, cols) == (nrow, ncol):
        return np.asarray(data, np.float32).copy(), nrow, ncol
    grid = np.asarray(data, np.float64).reshape(nrow, ncol)
    x, y = np.linspace(0, ncol - 1, cols), np.linspace(0, nrow - 1, rows)
    along = np.array([np.interp(x, np.arange(ncol), r) for r in grid])          # nrow x cols
    out = np.array([np.interp(y, np.arange(nrow), c) for c in along.T]).T        # rows x cols
    return out.astype(np.float32).ravel(), rows, cols


class ObservationCamera(SceneRenderer):
    """Small RGB frames for an agent to observe (``obs_mode="pixels"``), drawn for speed: no
    shadows, reflections or skybox (the sky is the clear colour), no multisampling, no sites,
    tyres with :data:`OBSERVATION_SLICES` facets, and the terrain's heightfield drawn from a
    render twin (a copy of the scene's ``spec`` whose heightfield is resampled to at most
    :data:`OBSERVATION_HFIELD_POINTS` points, refreshed when the terrain changes). The frame
    depends only on the model and MjData, so a restored state renders the same pixels.

    Args:
        model: the scene's compiled model.
        spec: the MjSpec it was compiled from (``Scene.spec``); None draws the full heightfield.
        width, height, camera: as :class:`SceneRenderer`.
    """

    def __init__(self, model: mujoco.MjModel, spec: mujoco.MjSpec | None, width: int = 84,
                 height: int = 84, camera: str | int = names.CAMERA_CHASE):
        self._twin = self._make_twin(model, spec)
        super().__init__(model, width, height, camera, quality="low")
        self.renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = False
        self.renderer.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = False
        self.renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SKYBOX] = False
        self.option.sitegroup[:] = 0
        self.option.flags[mujoco.mjtVisFlag.mjVIS_RANGEFINDER] = 0   # (drawn, if transparent)
        self._shadow = None

    @staticmethod
    def _make_twin(model, spec) -> mujoco.MjModel | None:
        """The model the GL context is made from (None without a spec): heightfields resampled,
        planes drawn in :data:`OBSERVATION_PLANE_QUADS` quads a side. (A context draws a plane
        from a mesh it makes once, of one quad per ``size[2]`` metres up to 200 a side: 80,000
        triangles for the 5 km ground, 2-3 ms of a software OpenGL's frame.)"""
        if spec is None:
            return None
        twin = spec.copy()
        for geom in twin.geoms:
            if geom.type == mujoco.mjtGeom.mjGEOM_PLANE and geom.size[0] > 0:
                geom.size = [geom.size[0], geom.size[1],
                             2 * max(geom.size[0], geom.size[1]) / OBSERVATION_PLANE_QUADS]
        coarse = []
        for h, hfield in enumerate(twin.hfields):
            adr, n, c = model.hfield_adr[h], model.hfield_nrow[h], model.hfield_ncol[h]
            data, rows, cols = coarse_heightfield(model.hfield_data[adr:adr + n * c], n, c,
                                                  OBSERVATION_HFIELD_POINTS)
            hfield.nrow, hfield.ncol, hfield.userdata = rows, cols, data.tolist()
            hfield.size = model.hfield_size[h].tolist()
            coarse.append(data)
        compiled = twin.compile()
        for h, data in enumerate(coarse):   # the compiler rescaled each to [0, 1]: the model's
            tadr = compiled.hfield_adr[h]   # scale back, as a refresh writes it
            compiled.hfield_data[tadr:tadr + data.size] = data
        compiled.tex_data[:] = model.tex_data   # (the terrain's colours as painted now)
        return compiled

    def frame(self, data: mujoco.MjData, overlay: str | None = None,
              camera: str | int | None = None, segmentation: bool = False,
              markers: tuple | list = ()) -> np.ndarray:
        """As :meth:`SceneRenderer.frame`, the markers drawn opaque: a translucent marker
        overlapping the vehicle came out differently from one GL context to another (the same
        state, 3 pixels in 2 of 6 contexts on a software OpenGL), so an observation would not
        be a function of the state."""
        return super().frame(data, overlay, camera, segmentation, [m.opaque for m in markers])

    def _make_renderer(self, model, width, height, quality) -> mujoco.Renderer:
        """A renderer whose context is made from the twin (when there is one) with the
        observation's settings (the model's put back)."""
        source = self._twin if self._twin is not None else model
        q = source.vis.quality
        saved = q.shadowsize, q.offsamples, q.numslices, q.numstacks, q.numquads
        q.shadowsize, q.offsamples, q.numslices, q.numstacks = 1, 0, OBSERVATION_SLICES, 4
        q.numquads = 1                          # a box face in one quad (MuJoCo's 4 x 4: a
        try:                                    # drift pad's 96 boxes cost 2 ms a frame)
            renderer = mujoco.Renderer(source, height=height, width=width)
        finally:
            q.shadowsize, q.offsamples, q.numslices, q.numstacks, q.numquads = saved
        renderer._model = model             # the scene is updated from the physics' model
        return renderer

    def _terrain_source(self) -> mujoco.MjModel:
        """The twin, its heightfields resampled from the scene's and its ground texture
        copied (see :meth:`SceneRenderer.refresh_heightfields`)."""
        twin, m = self._twin, self.model
        if twin is None:
            return m
        _ground_texels(twin)[:] = _ground_texels(m)
        for h in range(m.nhfield):
            adr, n, c = m.hfield_adr[h], m.hfield_nrow[h], m.hfield_ncol[h]
            coarse, _, _ = coarse_heightfield(m.hfield_data[adr:adr + n * c], n, c,
                                              OBSERVATION_HFIELD_POINTS)
            tadr = twin.hfield_adr[h]
            twin.hfield_data[tadr:tadr + coarse.size] = coarse
            twin.hfield_size[h] = m.hfield_size[h]
        return twin


def _ground_texels(model: mujoco.MjModel) -> np.ndarray:
    """The heightfield ground's texture in ``model.tex_data`` (a view; empty without one)."""
    tid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_TEXTURE, names.TERRAIN_TEXTURE)
    if tid < 0:
        return model.tex_data[:0]
    adr = model.tex_adr[tid]
    size = model.tex_width[tid] * model.tex_height[tid] * model.tex_nchannel[tid]
    return model.tex_data[adr:adr + size]


def _add_markers(scene: mujoco.MjvScene, markers: list[Marker]) -> None:
    """Append ``markers`` to the scene's geoms (as MuJoCo's decorations: no model object)."""
    if scene.ngeom + len(markers) > scene.maxgeom:
        raise ValueError(f"{len(markers)} markers do not fit the scene ({scene.ngeom} of "
                         f"{scene.maxgeom} geoms used)")
    # The camera's position (between the eyes): a geom's distance to it orders the
    # transparent geoms when they are drawn; mjv_initGeom leaves it as the slot held it (a
    # geom of an earlier frame, or nothing).
    eye = (np.asarray(scene.camera[0].pos) + np.asarray(scene.camera[1].pos)) / 2
    for m in markers:
        g = scene.geoms[scene.ngeom]
        mujoco.mjv_initGeom(g, m.type, *m.arrays)
        if m.start is not None:
            mujoco.mjv_connector(g, m.type, m.width, np.array(m.start, float),
                                 np.array(m.pos, float))
            if m.type == mujoco.mjtGeom.mjGEOM_ARROW:   # MuJoCo draws an arrow half as long
                g.size[2] *= 2.0                        # as size[2]: its tip at the end asked
        g.category = mujoco.mjtCatBit.mjCAT_DECOR
        g.camdist = float(np.linalg.norm(np.asarray(g.pos) - eye))
        scene.ngeom += 1


class _ContactShadow:
    """The ``low`` quality's stand-in for the shadow map: a dark, soft-edged footprint of the
    vehicle's body on the plane under its wheels (where they touch the ground, in the chassis
    frame), so the vehicle does not seem to float."""

    def __init__(self, model: mujoco.MjModel):
        self.body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, names.CHASSIS_BODY)
        wheels = []
        while (g := mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM,
                                      names.wheel_visual(len(wheels)))) >= 0:
            wheels.append(g)
        self.half = None
        if self.body < 0 or not wheels:
            return
        self.wheels = np.array(wheels)
        self.radius = model.geom_size[self.wheels, 0]
        boxes = np.flatnonzero((model.geom_bodyid == self.body) & (model.geom_contype == 0)
                               & (model.geom_type == mujoco.mjtGeom.mjGEOM_BOX))
        pos, reach = model.geom_pos[self.wheels, :2], self.radius[:, None]
        lo = np.min([*(model.geom_pos[boxes, :2] - model.geom_size[boxes, :2]), *(pos - reach)],
                    axis=0)
        hi = np.max([*(model.geom_pos[boxes, :2] + model.geom_size[boxes, :2]), *(pos + reach)],
                    axis=0)
        self.centre, self.half = (lo + hi) / 2, (hi - lo) / 2

    def markers(self, data: mujoco.MjData) -> list[Marker]:
        if self.half is None:
            return []
        rot = data.xmat[self.body].reshape(3, 3)
        origin = data.xpos[self.body]
        local = (data.geom_xpos[self.wheels] - origin) @ rot         # wheel centres, chassis
        ground = float(np.mean(local[:, 2] - self.radius)) + 0.02   # (2 cm up: no z-fighting)
        out = []
        for grow, alpha in ((1.15, 0.1), (1.05, 0.12), (0.95, 0.14), (0.85, 0.16)):  # soft edge
            centre = origin + rot @ np.array([*self.centre, ground])
            out.append(Marker.box(centre, (*(self.half * grow), 0.002), rot, (0, 0, 0, alpha)))
        return out


def draw_text(img: np.ndarray, text: str, size: int | None = None) -> np.ndarray:
    """Text (one line per ``\\n``) on a dark translucent box in the top-left corner, using
    Pillow; ``size``: the font's height in pixels (default: 1/24 of the frame's height, at least
    11).

    Raises:
        ImportError: Pillow (the ``render`` extra) is not installed.
    """
    try:
        from PIL import Image, ImageDraw
    except ImportError as e:
        raise ImportError('a text overlay needs Pillow: pip install -e ".[render]"') from e

    size = size or max(11, img.shape[0] // 24)
    font = _font(size)
    pil = Image.fromarray(img).convert("RGBA")
    layer = Image.new("RGBA", pil.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    left, top, right, bottom = draw.multiline_textbbox((8, 6), text, font=font, spacing=2)
    draw.rectangle([4, 4, right + 4, bottom + 4], fill=(0, 0, 0, 160))
    draw.multiline_text((8, 6), text, fill=(255, 255, 255, 255), font=font, spacing=2)
    return np.asarray(Image.alpha_composite(pil, layer).convert("RGB"))


@functools.cache
def _font(size: int):
    """Pillow's scalable default font (Pillow >= 10.1 with FreeType), else its bitmap one."""
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError, ImportError):
        return ImageFont.load_default()
