"""Procedural terrain grids: heights and a per-cell surface map, pure functions of a seed.

A :class:`TerrainGrid` covers ``[x0, x0 + (ncol-1) cell] x [y0, y0 + (nrow-1) cell]`` with heights
(m) and surface names per cell. Generators take ``seed`` and documented knobs and return identical
bytes for the same arguments. The grid becomes a MuJoCo heightfield (``terrain.py``) whose data can
be rewritten at reset without recompiling the model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from traction.vehicle_model.jit import jit
from traction.vehicle_model.params import check_number

#: Most cells a terrain grid may have (the defaults have 58,000-145,000).
MAX_CELLS = 4_000_000
#: rough_hill knob -> (lowest, highest, unit, integer); see :func:`rough_hill`.
HILL_RANGES = {"slope_deg": (0.0, 45.0, "deg", False), "roughness": (0.0, 1.0, "m", False),
               "bump_scale": (0.0, 2.0, "m", False), "ditches": (0, 20, "", True),
               "length": (50.0, 1000.0, "m", False), "width": (10.0, 400.0, "m", False),
               "resolution": (0.05, 1.0, "m", False)}


@dataclass
class TerrainGrid:
    """Heights ``(nrow, ncol)`` (m), surface indices into ``surfaces`` per cell, grid placement."""

    heights: np.ndarray
    surface: np.ndarray
    surfaces: tuple[str, ...]
    x0: float
    y0: float
    cell: float

    @property
    def extent(self) -> tuple[float, float]:
        """Full length in x and y (m)."""
        nrow, ncol = self.heights.shape
        return (ncol - 1) * self.cell, (nrow - 1) * self.cell

    def _index(self, x, y):
        c = (np.asarray(x) - self.x0) / self.cell
        r = (np.asarray(y) - self.y0) / self.cell
        return r, c

    def height_at(self, x, y) -> np.ndarray:
        """Height (m) at world ``x, y`` on MuJoCo's triangulation of the grid (clamped to the edge)."""
        x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
        out = np.empty(x.shape)
        _heights(self.heights, self.x0, self.y0, self.cell, x.ravel(), y.ravel(), out.reshape(-1))
        return out

    def contains(self, x: float, y: float) -> bool:
        """Whether world ``(x, y)`` lies over the grid (edges included)."""
        length, width = self.extent
        return self.x0 <= x <= self.x0 + length and self.y0 <= y <= self.y0 + width

    def heights_in_frame(self, x: float, y: float, yaw: float, ahead: np.ndarray,
                         side: np.ndarray, out: np.ndarray, off_grid: float = math.nan) -> None:
        """Heights (m), as :meth:`height_at`, at the points ``ahead[i]`` along heading ``yaw`` and
        ``side[i]`` to its left of world ``(x, y)``, written to ``out`` (flat float arrays of one
        length; for observations, without temporaries). Points beyond the grid's edge read
        ``off_grid`` if it is given (there is no ground there), else the edge's height."""
        _heights_in_frame(self.heights, self.x0, self.y0, self.cell, float(x), float(y),
                          math.cos(yaw), math.sin(yaw), ahead, side, out, off_grid)

    def surface_at(self, x, y) -> np.ndarray:
        """Surface index of the cell nearest to world ``x, y`` (edge cells beyond the grid)."""
        nrow, ncol = self.heights.shape
        r, c = self._index(x, y)
        return self.surface[np.clip(np.rint(r).astype(int), 0, nrow - 1),
                            np.clip(np.rint(c).astype(int), 0, ncol - 1)]


@jit
def _height(h, x0, y0, cell, x, y) -> float:
    """Height at one point on the grid's triangles, split along the (0,0)-(1,1) cell diagonal."""
    return _triangle(h, x0, y0, cell, x, y)[1]


@jit
def _triangle(h, x0, y0, cell, x, y) -> tuple[int, float, float, float]:
    """The triangle of the grid under ``(x, y)`` (an id: cell and half), :func:`_height` there
    and the triangle's slopes ``dh/dx, dh/dy``."""
    nrow, ncol = h.shape
    r = min(max((y - y0) / cell, 0.0), nrow - 1 - 1e-9)
    c = min(max((x - x0) / cell, 0.0), ncol - 1 - 1e-9)
    r0, c0 = int(np.floor(r)), int(np.floor(c))
    fr, fc = r - r0, c - c0
    h00, h01, h10, h11 = h[r0, c0], h[r0, c0 + 1], h[r0 + 1, c0], h[r0 + 1, c0 + 1]
    if fc >= fr:                                       # the upper triangle
        gx, gy = h01 - h00, h11 - h01
        return 2 * (r0 * ncol + c0) + 1, h00 + fc * gx + fr * gy, gx / cell, gy / cell
    gx, gy = h11 - h10, h10 - h00
    return 2 * (r0 * ncol + c0), h00 + fr * gy + fc * gx, gx / cell, gy / cell


@jit
def ray_hit(h, x0, y0, cell, o0, o1, o2, d0, d1, d2,
            guess: float = 0.0) -> tuple[float, float, float, float]:
    """Where the ray from ``o`` along the unit ``d`` (pointing down) meets the grid's triangles
    (MuJoCo's triangulation, as :func:`_height`): ``(distance, normal)``, the distance -1
    beyond the grid's edge, with the ground above ``o`` or if the search does not settle.

    Newton's method on ``o_z + t d_z - h(o_xy + t d_xy)`` from the distance ``guess`` (a
    neighbouring ray's: fewer steps): on one triangle ``h`` is linear, so a step that lands on
    the triangle whose plane it used has found the hit exactly (a few steps where the ray
    crosses triangle edges; the ray's tilt times the ground's slope must stay below 1, as for
    any ground a wheel stands on)."""
    x_hi, y_hi = x0 + (h.shape[1] - 1) * cell, y0 + (h.shape[0] - 1) * cell
    t = max(guess, 0.0)
    x, y = o0 + t * d0, o1 + t * d1
    for _ in range(12):
        if x < x0 or x > x_hi or y < y0 or y > y_hi:
            return -1.0, 0.0, 0.0, 1.0
        tri, z, gx, gy = _triangle(h, x0, y0, cell, x, y)
        slope = gx * d0 + gy * d1 - d2                 # d/dt of h(o + t d) - (o_z + t d_z)
        if slope <= 1e-9:
            return -1.0, 0.0, 0.0, 1.0
        t += (o2 + t * d2 - z) / slope
        x, y = o0 + t * d0, o1 + t * d1
        if x >= x0 and x <= x_hi and y >= y0 and y <= y_hi and \
                _triangle(h, x0, y0, cell, x, y)[0] == tri:
            if t < 0.0:
                return -1.0, 0.0, 0.0, 1.0
            norm = np.sqrt(gx * gx + gy * gy + 1.0)
            return t, -gx / norm, -gy / norm, 1.0 / norm
    return -1.0, 0.0, 0.0, 1.0


@jit
def _cell_height(h, r0, c0, fr, fc) -> float:
    """Height in cell ``(r0, c0)`` at fractions ``fr`` (rows, y) and ``fc`` (columns, x), on
    MuJoCo's two triangles (as :func:`_triangle`)."""
    fr, fc = min(max(fr, 0.0), 1.0), min(max(fc, 0.0), 1.0)
    h00 = h[r0, c0]
    if fc >= fr:
        return h00 + fc * (h[r0, c0 + 1] - h00) + fr * (h[r0 + 1, c0 + 1] - h[r0, c0 + 1])
    return h00 + fr * (h[r0 + 1, c0] - h00) + fc * (h[r0 + 1, c0 + 1] - h[r0 + 1, c0])


@jit
def ray_grid(h, x0, y0, cell, top, o0, o1, o2, d0, d1, d2, reach) -> float:
    """Distance along the ray from ``o`` along the unit ``d`` (any direction) to where it first
    meets the grid's triangulated surface (MuJoCo's triangulation, either side), within
    ``reach``; -1 if it does not (``top``: the grid's highest point, where a rising ray stops).

    The cells under the ray are walked in order (a 2D DDA, Amanatides and Woo); in each, the
    ray's height above the surface is linear between the cell's edges and the diagonal
    splitting its triangles, so a change of sign between those points is the hit, exactly.
    The work is the number of cells the ray crosses, where a ray query that tests every cell
    of the rectangle the ray spans (MuJoCo's, ``mj_ray``) grows with its square."""
    nrow, ncol = h.shape
    u0, v0 = (o0 - x0) / cell, (o1 - y0) / cell          # grid units: columns along x, rows y
    du, dv = d0 / cell, d1 / cell                        # per metre along the ray
    ta, tb = 0.0, reach
    if abs(du) < 1e-12:
        if u0 < 0.0 or u0 > ncol - 1:
            return -1.0
    else:
        t1, t2 = -u0 / du, (ncol - 1 - u0) / du
        ta, tb = max(ta, min(t1, t2)), min(tb, max(t1, t2))
    if abs(dv) < 1e-12:
        if v0 < 0.0 or v0 > nrow - 1:
            return -1.0
    else:
        t1, t2 = -v0 / dv, (nrow - 1 - v0) / dv
        ta, tb = max(ta, min(t1, t2)), min(tb, max(t1, t2))
    if ta > tb:
        return -1.0
    t = ta
    c = min(max(int(np.floor(u0 + t * du)), 0), ncol - 2)
    r = min(max(int(np.floor(v0 + t * dv)), 0), nrow - 2)
    step_c, step_r = (1 if du > 0 else -1), (1 if dv > 0 else -1)
    inf = 1e300
    next_c = ((c + (1 if du > 0 else 0)) - u0) / du if abs(du) >= 1e-12 else inf
    next_r = ((r + (1 if dv > 0 else 0)) - v0) / dv if abs(dv) >= 1e-12 else inf
    across = (v0 - r - (u0 - c)) / (du - dv) if abs(du - dv) >= 1e-12 else inf
    f = o2 + t * d2 - _cell_height(h, r, c, v0 + t * dv - r, u0 + t * du - c)
    if f == 0.0:
        return t
    while True:
        end = min(next_c, next_r, tb)
        for k in range(2):                               # to the diagonal, then to the edge
            t_k = across if k == 0 else end
            if k == 0 and not (t < t_k < end):
                continue
            f_k = o2 + t_k * d2 - _cell_height(h, r, c, v0 + t_k * dv - r, u0 + t_k * du - c)
            if (f > 0.0) != (f_k > 0.0) or f_k == 0.0:   # crossed the surface: linear between
                return t + (t_k - t) * f / (f - f_k)
            t, f = t_k, f_k
        if t >= tb or (d2 >= 0.0 and o2 + t * d2 > top):
            return -1.0
        if next_c < next_r:
            c += step_c
            next_c += step_c / du
        else:
            r += step_r
            next_r += step_r / dv
        if c < 0 or c > ncol - 2 or r < 0 or r > nrow - 2:
            return -1.0
        across = (v0 - r - (u0 - c)) / (du - dv) if abs(du - dv) >= 1e-12 else inf


@jit
def rays_grid(h, x0, y0, cell, top, origin, directions, reach, out) -> None:
    """:func:`ray_grid` for each row of ``directions`` (``(n, 3)``, unit) from ``origin``,
    written to ``out``."""
    for i in range(directions.shape[0]):
        out[i] = ray_grid(h, x0, y0, cell, top, origin[0], origin[1], origin[2],
                          directions[i, 0], directions[i, 1], directions[i, 2], reach)


@jit
def _heights(h, x0, y0, cell, xs, ys, out) -> None:
    for i in range(xs.shape[0]):
        out[i] = _height(h, x0, y0, cell, xs[i], ys[i])


@jit
def _heights_in_frame(h, x0, y0, cell, x, y, c, s, ahead, side, out, off_grid) -> None:
    x_hi, y_hi = x0 + (h.shape[1] - 1) * cell, y0 + (h.shape[0] - 1) * cell
    for i in range(out.shape[0]):
        px, py = x + c * ahead[i] - s * side[i], y + s * ahead[i] + c * side[i]
        outside = px < x0 or px > x_hi or py < y0 or py > y_hi
        out[i] = off_grid if outside and off_grid == off_grid else _height(h, x0, y0, cell, px, py)


def check_knob(terrain: str, name: str, value, lo: float, hi: float, unit: str = "",
               integer: bool = False) -> None:
    """Raise ValueError naming the terrain, the knob, its value and the allowed range unless
    ``lo <= value <= hi`` (NaN is refused), and, with ``integer``, ``value`` is an int."""
    check_number(f"{terrain} {name}", value, lo, hi, integer=integer, unit=unit)


def check_cells(terrain: str, length: float, width: float, resolution: float) -> None:
    """Raise ValueError if a ``length`` x ``width`` grid of cell ``resolution`` (m) has more
    than :data:`MAX_CELLS` cells."""
    cells = (int(round(length / resolution)) + 1) * (int(round(width / resolution)) + 1)
    if cells > MAX_CELLS:
        raise ValueError(f"{terrain}: {length:g} x {width:g} m at resolution {resolution:g} m is "
                         f"{cells} cells; allowed: at most {MAX_CELLS} (coarser resolution or a "
                         "smaller terrain)")


def _grid(length: float, width: float, resolution: float, x0: float):
    ncol = int(round(length / resolution)) + 1
    nrow = int(round(width / resolution)) + 1
    xs = x0 + np.arange(ncol) * resolution
    ys = -width / 2 + np.arange(nrow) * resolution
    return np.meshgrid(xs, ys)


def value_noise(rng: np.random.Generator, shape, period: float) -> np.ndarray:
    """Smooth noise in [-1, 1]: random values every ``period`` cells, bilinearly interpolated."""
    nrow, ncol = shape
    coarse = rng.uniform(-1, 1, (int(nrow / period) + 2, int(ncol / period) + 2))
    r = np.arange(nrow) / period
    c = np.arange(ncol) / period
    r0, c0 = np.floor(r).astype(int), np.floor(c).astype(int)
    fr, fc = (r - r0)[:, None], (c - c0)[None, :]
    fr, fc = fr * fr * (3 - 2 * fr), fc * fc * (3 - 2 * fc)       # smoothstep
    g = coarse
    top = g[r0][:, c0] * (1 - fc) + g[r0][:, c0 + 1] * fc
    bot = g[r0 + 1][:, c0] * (1 - fc) + g[r0 + 1][:, c0 + 1] * fc
    return top * (1 - fr) + bot * fr


def fractal_noise(rng, shape, period: float, octaves: int = 4) -> np.ndarray:
    """Sum of value-noise octaves (period halves, amplitude halves), normalised to about [-1, 1]."""
    out = np.zeros(shape)
    amp, total = 1.0, 0.0
    for _ in range(octaves):
        out += amp * value_noise(rng, shape, max(period, 1.0))
        total += amp
        amp *= 0.5
        period *= 0.5
    return out / total


def hill_knobs(difficulty: float) -> dict:
    """Map ``difficulty`` in [0, 1] onto the rough-hill knobs (the curriculum dial)."""
    check_knob("rough_hill", "difficulty", difficulty, 0.0, 1.0)
    return {"slope_deg": 4.0 + 14.0 * difficulty, "roughness": 0.03 + 0.25 * difficulty,
            "bump_scale": 0.15 + 0.45 * difficulty, "ditches": int(round(1 + 4 * difficulty))}


def rough_hill(seed: int, difficulty: float = 0.5, *, slope_deg: float | None = None,
               roughness: float | None = None, bump_scale: float | None = None,
               ditches: int | None = None, length: float = 100.0, width: float = 40.0,
               resolution: float = 0.25) -> tuple[TerrainGrid, np.ndarray]:
    """A hill rising toward a summit plateau along +x, with fractal roughness, rocks and ditches.

    Args:
        seed: RNG seed; same seed and knobs give identical bytes.
        difficulty: 0..1, sets the knobs below unless they are given explicitly.
        slope_deg: average climb of the hill (deg).
        roughness: amplitude of the fractal roughness (m).
        bump_scale: height (m) of the rocks (their radius is 3x that).
        ditches: number of ditches crossing the climb.
        length, width: terrain size (m); the vehicle starts at ``x = -length/2 + 8``.
        resolution: cell size (m).
        Allowed ranges: :data:`HILL_RANGES`.

    Returns:
        ``(grid, summit)``: the terrain and the summit centre ``(x, y, z)`` (m).

    Raises:
        ValueError: a knob or the seed (an integer >= 0) out of range, or a grid over
            :data:`MAX_CELLS` cells, naming the knob, its value and the allowed range.
    """
    k = hill_knobs(difficulty)
    slope_deg = k["slope_deg"] if slope_deg is None else slope_deg
    roughness = k["roughness"] if roughness is None else roughness
    bump_scale = k["bump_scale"] if bump_scale is None else bump_scale
    ditches = k["ditches"] if ditches is None else ditches
    for name, value in (("slope_deg", slope_deg), ("roughness", roughness),
                        ("bump_scale", bump_scale), ("ditches", ditches), ("length", length),
                        ("width", width), ("resolution", resolution)):
        check_knob("rough_hill", name, value, *HILL_RANGES[name])
    check_cells("rough_hill", length, width, resolution)
    rng = np.random.default_rng(check_number("seed", seed, 0, integer=True))
    x0 = -length / 2
    xs, ys = _grid(length, width, resolution, x0)
    start, summit_x = x0 + 15.0, length / 2 - 15.0
    u = np.clip((xs - start) / (summit_x - start), 0.0, 1.0)
    rise = math.tan(math.radians(slope_deg)) * (summit_x - start)
    h = rise * u * u * (3 - 2 * u)                                   # smooth ramp to the summit
    climb = (u > 0) & (u < 1)
    ramp = np.clip((xs - start) / 5.0, 0, 1) * np.clip((summit_x - xs) / 5.0 + 1, 0, 1)
    h += roughness * fractal_noise(rng, h.shape, 16.0 / resolution) * ramp
    for _ in range(int(8 + 20 * bump_scale)):                        # rocks
        cx, cy = rng.uniform(start + 5, summit_x), rng.uniform(-width / 2 + 4, width / 2 - 4)
        rad = 3.0 * bump_scale * rng.uniform(0.6, 1.4)
        height = bump_scale * rng.uniform(0.5, 1.0)
        if rad > 0:                                                  # bump_scale 0: no rocks
            h += height * np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * (rad / 2) ** 2))
    for i in range(ditches):                                         # ditches across the climb
        cx = start + (i + 1) * (summit_x - start) / (ditches + 1) + rng.uniform(-3, 3)
        angle = rng.uniform(-0.4, 0.4)
        d = (xs - cx) * math.cos(angle) + ys * math.sin(angle)
        w = rng.uniform(1.5, 3.0)
        h -= np.where(np.abs(d) < w / 2, (0.15 + bump_scale) * 0.5 * (1 + np.cos(2 * np.pi * d / w)),
                      0.0)
    names = ("grass", "mud", "gravel", "rock")
    mud = fractal_noise(rng, h.shape, 10.0 / resolution, 2) > 0.35
    surface = np.where(mud & climb, 1, 0)
    slope = np.hypot(*np.gradient(h, resolution))
    surface = np.where(slope > math.tan(math.radians(slope_deg + 12)), 3, surface)
    surface = np.where(climb & (fractal_noise(rng, h.shape, 6.0 / resolution, 2) < -0.45), 2,
                       surface)
    grid = TerrainGrid(h, surface.astype(np.int64), names, x0, -width / 2, resolution)
    summit = np.array([summit_x + 7.5, 0.0, float(grid.height_at(summit_x + 7.5, 0.0))])
    return grid, summit


def bumpy_plane(seed: int, amplitude: float = 0.05, *, length: float = 60.0,
                width: float = 60.0, resolution: float = 0.25, incline_deg: float = 0.0,
                surface: str = "tarmac") -> TerrainGrid:
    """A plane (optionally inclined toward +x) with mild fractal bumps of ``amplitude`` (m).

    Raises:
        ValueError: a knob or the seed (an integer >= 0) out of range, named with its allowed
            range.
    """
    for name, value, lo, hi, unit in (("amplitude", amplitude, 0.0, 1.0, "m"),
                                      ("length", length, 10.0, 1000.0, "m"),
                                      ("width", width, 10.0, 1000.0, "m"),
                                      ("resolution", resolution, 0.05, 1.0, "m"),
                                      ("incline_deg", incline_deg, 0.0, 60.0, "deg")):
        check_knob("bumpy_plane", name, value, lo, hi, unit)
    check_cells("bumpy_plane", length, width, resolution)
    rng = np.random.default_rng(check_number("seed", seed, 0, integer=True))
    xs, ys = _grid(length, width, resolution, -length / 2)
    h = xs * math.tan(math.radians(incline_deg))
    h = h + amplitude * fractal_noise(rng, h.shape, 8.0 / resolution)
    return TerrainGrid(h, np.zeros(h.shape, dtype=np.int64), (surface,), -length / 2,
                       -width / 2, resolution)
