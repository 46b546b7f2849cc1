"""Where a tyre meets the ground over its footprint and profile, not at one point.

``contact.model = "ray"`` (PhysX's raycast mode) finds the ground with one ray from the top of the
wheel's travel down its suspension line and places the tyre on the plane that ray hits. It misses
what lies under the rest of the tyre: the wheel jumps onto a kerb the moment the ray passes the
edge, drops into a ditch narrower than the tyre, and on a heightfield it feels the one facet under
the wheel centre, however small and steep.

``contact.model = "footprint"`` casts ``contact.rays`` parallel rays down the suspension line,
spread along the tyre's circumference in its plane: ray ``j`` starts ``x_j = r sin(theta_j)``
ahead of the wheel centre, ``theta_j`` evenly spaced in ``[-half_arc, half_arc]`` (denser where
the tyre's profile is steep). Each hit stands for the ground over its cell of the footprint
(``x`` halfway to its neighbours): the plane it hit, cut at the cell's edges. The tyre must lie
on or above every such plane piece; against the piece of ray ``j`` that bounds the wheel centre's
distance ``a`` down the suspension line (from the line's start ``S``, direction ``d``):

- where the tyre touches the plane inside the cell (its tangent point ``-r n_j . f`` ahead of
  the centre, ``f`` the footprint's forward axis), the plane itself, as one ray uses it: the
  centre at distance ``r`` from it, ``a <= (n_j . (S - p_j) - r) / (-n_j . d)``;
- else the cell's edge: a line on that plane across the tyre, at ``u_e`` ahead of the centre;
  the centre at distance ``r`` from it, ``a <= t_e - sqrt((r^2 - u_e^2) / (1 - (d . m)^2))``,
  ``t_e`` where the line crosses the wheel plane (down ``d``) and ``m`` its direction.

An edge bounds only where it is a corner, the ground beyond it lying lower (the neighbouring
ray's hit below this piece's plane extended to it); where the neighbour continues the plane or
rises, its own piece bounds. A piece's plane is extended at most as steeply as the footprint's
profile (``tan(half_arc)``): a steeper face is a step's side, not ground to extend. The two
bounds of a piece agree where the tangent point crosses the cell edge, so the bound moves
continuously as the tyre rolls over a piece; on a plane the one piece holding the tangent point
bounds, so flat ground and slopes give exactly one ray's result; and over a step the corner
bounds trace the arc the tyre rolls over the edge (within about ``r sin(theta) delta_theta /
2``: 1.7 cm for a 0.33 m tyre with 17 rays, 60 degrees either side). Where a ray crosses an edge
the corner moves to the next cell edge and the bound steps, by at most a cell's width times the
profile's slope (3.4 cm on that step, where one ray jumps its full height).
The tyre sits at the tightest bound (the highest centre); the ground normal is the bounds'
normals (a plane's, or from an edge to the centre: a kerb pushes the wheel back as well as up)
averaged with weights that fall to 0 over :data:`BLEND` x ``r`` of bound above the tightest (a
corner's also scaled by its drop over that band), so it turns smoothly where the tightest bound
changes and a slight bend of the ground does not swing it. The result is one equivalent hit: the
distance and normal one ray would report for a plane through that contact, which the
suspension and tyre read as they read one ray (``update.py`` does not know the difference).

The rays are fixed to the chassis: the footprint runs along the chassis's forward axis (projected
square to the suspension line), not the steered wheel's heading; they lie in the wheel's plane
through its centre (none across the tyre's width).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import VehicleConfigError
from .jit import jit
from .params import param, validate_fields

#: The normal blends the bounds within this share of the radius above the tightest one.
BLEND = 0.03
#: A hit whose plane faces the suspension line at less than this cosine is a wall's face (the
#: suspension's own limit of contact, ``suspension.jounce_from_hit``): only its point bounds.
WALL_COS = 0.1
#: A cell's edge is a corner where the ground beyond it lies more than this (m) lower.
CORNER = 1e-6
#: Contact models (``contact.model``) and their codes in the packed parameters.
MODELS = ("ray", "footprint")


@dataclass(frozen=True)
class ContactParams:
    """How each wheel finds the ground (the vehicle file's ``[contact]`` table)."""

    model: str = param("ray", shape="choice", choices=MODELS,
                       doc="ray: one ray down the suspension line (PhysX's raycast); footprint: "
                           "rays along the tyre's circumference, the tyre's profile against the "
                           "ground over its footprint")
    rays: int = param(17, unit="-", lo=3, hi=63, shape="scalar", integer=True,
                      doc="footprint: rays per wheel (odd: one under the centre)")
    half_arc: float = param(1.05, unit="rad", lo=0.1, hi=1.4, shape="scalar",
                            doc="footprint: the rays span this angle of the tyre either side of "
                                "straight down (1.05 rad = 60 deg: steps up to half the radius)")

    def validate(self, prefix: str = "contact.", where: str = "") -> None:
        """Raise VehicleConfigError naming the first field out of range."""
        validate_fields(self, prefix, where)
        if self.model == "footprint" and self.rays % 2 == 0:
            raise VehicleConfigError(f"{where}{prefix}rays = {self.rays}: must be odd (one ray "
                                     "under the wheel centre)")

    @property
    def n_rays(self) -> int:
        """Rays per wheel of this model."""
        return self.rays if self.model == "footprint" else 1


def ray_offsets(rays: int, half_arc: float, radius: float) -> np.ndarray:
    """How far ahead of the wheel centre each footprint ray starts (m), ``(rays,)``:
    ``r sin(theta_j)``, the angles evenly spaced over ``[-half_arc, half_arc]``."""
    return np.array([_angle_offset(j, rays, half_arc, radius) for j in range(rays)])


def scratch(contact: ContactParams, radii: np.ndarray) -> np.ndarray:
    """The combining's working array for a vehicle of wheel ``radii``, allocated once by its
    caller: each wheel's ray offsets (:func:`offsets_into`, filled
    here), then room for one wheel's rays cast on a grid (rangefinder layout) and
    :func:`equivalent_hit`'s ``work``."""
    rays = contact.n_rays
    n = len(radii)
    out = np.zeros(n * (rays + 2) + 7 * rays + 4 * rays)
    if rays <= 1:
        return out                                   # (unread: the shapes stay valid)
    for w in range(n):
        offsets_into(rays, contact.half_arc, float(radii[w]),
                     out[w * (rays + 2):(w + 1) * (rays + 2)])
    return out


def forward_axis(travel_direction: np.ndarray) -> np.ndarray:
    """The footprint's forward axis (chassis frame, unit): the chassis's x axis less its part
    along the suspension line ``travel_direction``."""
    d = np.asarray(travel_direction, dtype=float)
    f = np.array([1.0, 0.0, 0.0]) - d[0] * d
    return f / np.linalg.norm(f)


@jit
def _angle_offset(j: float, rays: int, half_arc: float, radius: float) -> float:
    return radius * np.sin(-half_arc + 2.0 * half_arc * j / (rays - 1))


@jit
def offsets_into(rays: int, half_arc: float, radius: float, xs) -> None:
    """``xs[1:rays + 1]`` = :func:`ray_offsets`; ``xs[0]`` and ``xs[rays + 1]`` continue the
    end pairs' spacing (so the end cells are as wide as their neighbours)."""
    for j in range(rays):
        xs[j + 1] = _angle_offset(j, rays, half_arc, radius)
    xs[0] = 2.0 * xs[1] - xs[2]
    xs[rays + 1] = 2.0 * xs[rays] - xs[rays - 1]


@jit
def _slope(along: float, cos_n: float, limit: float) -> float:
    """How fast a plane descends down the suspension line per metre ahead, ``along / cos_n``,
    bounded by ``limit`` (the footprint's steepest profile, ``tan(half_arc)``): a face steeper
    than the tyre's sampled arc is a step's side, and extended across a cell it would put the
    step's top far above where the face was hit."""
    return min(max(along / cos_n, -limit), limit)


@jit
def _piece(j, rays, xs, r, s0, s1, s2, d0, d1, d2, f0, f1, f2, data, first, stride):
    """The bound on the centre's distance ``a`` down the suspension line (from its start ``S``)
    from ray ``j``'s plane piece, that bound's normal and its weight in the blended normal:
    ``(a_max, n0, n1, n2, weight)``; ``a_max`` is inf where the piece cannot touch the tyre
    (see the module docstring)."""
    c = first + stride * j
    dist, n0, n1, n2 = data[c], data[c + 4], data[c + 5], data[c + 6]
    if dist < 0.0:
        return np.inf, 0.0, 0.0, 1.0, 0.0
    x = xs[j + 1]
    cos_n = -(n0 * d0 + n1 * d1 + n2 * d2)            # how squarely the plane faces the line
    if cos_n < WALL_COS:                                 # a wall's face (or an edge the ray
        if abs(x) >= r:                                  # grazed): its hit point only, as a
            return np.inf, 0.0, 0.0, 1.0, 0.0            # line across the tyre
        alpha = np.sqrt(r * r - x * x)
        return (dist - alpha, (-alpha * d0 - x * f0) / r, (-alpha * d1 - x * f1) / r,
                (-alpha * d2 - x * f2) / r, 1.0)
    along = n0 * f0 + n1 * f1 + n2 * f2
    tangent = -r * along                                 # where the tyre touches the plane
    lo, hi = 0.5 * (x + xs[j]), 0.5 * (x + xs[j + 2])
    if lo <= tangent <= hi:                              # inside the cell: the plane itself
        s_p = n0 * (s0 - data[c + 1]) + n1 * (s1 - data[c + 2]) + n2 * (s2 - data[c + 3])
        return (s_p - r) / cos_n, n0, n1, n2, 1.0
    u_e, k = (lo, j - 1) if tangent < lo else (hi, j + 1)   # the cell's edge the tyre meets
    if abs(u_e) >= r:
        return np.inf, 0.0, 0.0, 1.0, 0.0
    limit = abs(xs[rays] / np.sqrt(max(r * r - xs[rays] * xs[rays], 1e-12 * r * r)))
    slope = _slope(along, cos_n, limit)
    t_e = dist + (u_e - x) * slope                       # the edge line crosses the wheel plane
    # A corner only where the ground beyond the edge lies lower: the neighbour's hit below this
    # plane extended to the neighbour's ray (no neighbour, or none hit: nothing holds it up).
    # Where the neighbour continues the plane or rises, its own piece bounds the tyre. A
    # corner's normal counts in the blend in proportion to its drop, up to BLEND x r: a bend
    # of the ground too slight to be a kerb does not swing the normal.
    drop = np.inf
    if 0 <= k < rays:
        ck = first + stride * k
        if data[ck] >= 0.0 and -(data[ck + 4] * d0 + data[ck + 5] * d1 + data[ck + 6] * d2) \
                >= WALL_COS:
            drop = data[ck] - (dist + (xs[k + 1] - x) * slope)
    if drop <= CORNER:
        return np.inf, 0.0, 0.0, 1.0, 0.0
    # the edge line's direction m = n x f (square to f): its part along d
    m0, m1, m2 = n1 * f2 - n2 * f1, n2 * f0 - n0 * f2, n0 * f1 - n1 * f0
    m_norm2 = m0 * m0 + m1 * m1 + m2 * m2
    dm2 = (m0 * d0 + m1 * d1 + m2 * d2) ** 2 / m_norm2
    alpha = np.sqrt((r * r - u_e * u_e) / max(1.0 - dm2, 1e-12))
    # normal: from the edge line's nearest point to the centre (centre - edge point, less its
    # part along m), at the bound
    w0, w1, w2 = -alpha * d0 - u_e * f0, -alpha * d1 - u_e * f1, -alpha * d2 - u_e * f2
    wm = (w0 * m0 + w1 * m1 + w2 * m2) / m_norm2
    w0, w1, w2 = w0 - wm * m0, w1 - wm * m1, w2 - wm * m2
    w_norm = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    return (t_e - alpha, w0 / w_norm, w1 / w_norm, w2 / w_norm,
            min(1.0, drop / (BLEND * r)))


@jit
def equivalent_hit(rays: int, xs, r: float, s0, s1, s2, d0, d1, d2, f0, f1, f2, data,
                   first: int, stride: int, hit, work) -> int:
    """Combine one wheel's footprint rays into the hit one ray would report: writes the ``hit``
    record's ``dist`` and ``normal`` (``layout.HIT``; the distance -1 when nothing bounds
    the tyre) and returns the ray whose piece bounds it (its hit point gives the surface; -1
    if none).

    ``xs``: the rays' offsets (:func:`offsets_into`); ``S = (s0, s1, s2)``: the suspension
    line's start (world), ``d`` its direction, ``f`` the footprint's forward axis (unit,
    square to ``d``); ``data[first + stride j:]`` holds ray ``j``'s rangefinder data
    (distance, hit point, normal; distance -1 for no hit); ``work``: ``(rays, 4)`` scratch."""
    best, best_j = np.inf, -1
    for j in range(rays):                                # each piece's bound; the tightest
        a, n0, n1, n2, weight = _piece(j, rays, xs, r, s0, s1, s2, d0, d1, d2, f0, f1, f2,
                                       data, first, stride)
        work[j, 0], work[j, 1], work[j, 2], work[j, 3] = a, weight * n0, weight * n1, weight * n2
        if a < best:
            best, best_j = a, j
    if best_j < 0:
        hit.dist = -1.0
        hit.normal[0], hit.normal[1], hit.normal[2] = 0.0, 0.0, 1.0
        return -1
    band = BLEND * r
    m0 = m1 = m2 = 0.0
    for j in range(rays):                                # normals of the bounds near it
        weight = 1.0 - (work[j, 0] - best) / band
        if weight > 0.0:
            m0 += weight * work[j, 1]
            m1 += weight * work[j, 2]
            m2 += weight * work[j, 3]
    norm = np.sqrt(m0 * m0 + m1 * m1 + m2 * m2)
    m0, m1, m2 = m0 / norm, m1 / norm, m2 / norm
    cos_inc = -(m0 * d0 + m1 * d1 + m2 * d2)
    # the distance one ray would report for the plane through the contact with this normal:
    # ``suspension.jounce_from_hit`` puts the centre r / cos before it, at ``best``
    hit.dist = max(best + r / max(cos_inc, 0.1), 0.0)     # (0: the ground at the line's start)
    hit.normal[0], hit.normal[1], hit.normal[2] = m0, m1, m2
    return best_j
