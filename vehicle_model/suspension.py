"""Suspension: a spring-damper along a ray-cast suspension line carrying a sprung mass.

Geometry (chassis frame, x forward, y left, z up): the wheel centre at rest is ``position``; the
suspension travels along the unit vector ``travel_direction`` (pointing down). The ground query is
a ray that starts at the top of the tyre at maximum compression and runs along the travel
direction. *Jounce* is compression measured from rest (m, positive = compressed), limited to
``[-max_droop, max_compression]``.

The strut pushes along its line with the sprung weight's share on that line plus the spring,
damper and bump stop; as in PhysX, the chassis receives only the part of that push along the
ground normal (the tyre model supplies the forces in the ground plane). With gravity along world
-z that part is (N, never pulling)::

    N = sprung_mass * g * n_z + cos_incidence * (spring_strength * jounce
                                                 + damper_rate * jounce_rate + bump)

``n_z``: the ground normal's vertical component; ``cos_incidence = -travel_direction . normal``.
So the vehicle rests at zero jounce when the sprung masses match the chassis mass distribution,
on a slope as on the flat, and a pitching or rolling body gets no horizontal push from its
struts. ``N`` is the suspension force the outputs report and the tyre load (before the filter).
The tyre forces act at the contact patch (the wheel centre less one radius along the ground
normal, where the tyre touches the hit plane), raised by ``tire_force_height``; the suspension
force acts at ``force_point`` (the wheel centre at rest), along the normal, whose line through
the patch passes the wheel centre.

The jounce rate is the contact point's velocity along the normal (the PhysX SDK differences the
jounce over the step instead, which also sees the ground's profile passing under the wheel and
spikes at touchdown; on smooth ground the two agree). Compression beyond ``max_compression``
adds no spring force unless the wheel has a bump stop (``bump_stop_stiffness`` > 0, N/m, acting
on the compression past the limit); without one the chassis collision geoms take over, so the
scene must give the chassis a collision shape low enough to meet the ground before the ray origin
does. (PhysX adds a solver limit constraint at max compression; MuJoCo takes no constraints from
this module.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import antiroll, tire
from .errors import VehicleConfigError
from .jit import jit
from .layout import Packed
from .params import freeze_arrays, param, validate_fields
from .vec import cross, to_world

#: Largest angle (rad) between a suspension's travel direction and the chassis -z axis: the
#: direction is the compression -> droop travel and the ground ray's; one pointing up or sideways
#: never finds the ground under the wheel (real struts lean by well under 45 degrees).
MAX_TRAVEL_TILT = np.pi / 3


@dataclass(frozen=True)
class SuspensionParams:
    """Per-wheel suspension data; scalars are ``(n_wheels,)``, vectors ``(n_wheels, 3)``."""

    position: np.ndarray = param(unit="m", lo=-50, hi=50, shape="wheel3",
                                 doc="wheel centre at rest, chassis frame", packed=True)
    travel_direction: np.ndarray = param(unit="-", lo=-1, hi=1, shape="wheel3",
                                         doc="unit vector of compression->droop travel, chassis frame; "
                                         "within 60 deg of straight down [0, 0, -1]", packed=True)
    max_compression: np.ndarray = param(unit="m", lo=0.0, hi=2.0, doc="travel above rest", packed=True)
    max_droop: np.ndarray = param(unit="m", lo=0.0, hi=2.0, doc="travel below rest", packed=True)
    spring_strength: np.ndarray = param(unit="N/m", lo=0.0, hi=1e8, lo_open=True,
                                        doc="spring rate", packed=True)
    damper_rate: np.ndarray = param(unit="N s/m", lo=0.0, hi=1e7,
                                    doc="damper rate (damping ratio 0.8..1.2 typical)", packed=True)
    sprung_mass: np.ndarray = param(unit="kg", lo=0.0, hi=1e6, lo_open=True,
                                    doc="chassis mass carried by this spring", packed=True)
    bump_stop_stiffness: np.ndarray = param(unit="N/m", lo=0.0, hi=1e9,
                                            doc="spring rate past max_compression (0: none)", packed=True)
    camber_at_rest: np.ndarray = param(unit="rad", lo=-0.5, hi=0.5,
                                       doc="camber at zero jounce; chassis frame: > 0 leans the "
                                       "wheel's top to +y (left), and camber thrust pushes that "
                                       "way, so right wheels take mirrored values", packed=True)
    camber_at_max_compression: np.ndarray = param(unit="rad", lo=-0.5, hi=0.5,
                                                  doc="camber at full compression", packed=True)
    camber_at_max_droop: np.ndarray = param(unit="rad", lo=-0.5, hi=0.5,
                                            doc="camber at full droop", packed=True)
    force_point: np.ndarray = param(unit="m", lo=-50, hi=50, shape="wheel3",
                                    doc="suspension force application point, chassis frame", packed=True)
    tire_force_height: np.ndarray = param(
        unit="m", lo=0.0, hi=10.0,
        doc="height of the tyre force application point above the contact patch, along the "
        "ground normal: 0 applies the tyre forces where the tyre meets the ground (the point "
        "moves with jounce and follows the ground), giving a rigid car's load transfer m a h / L "
        "with h the CoM over the ground; the wheel radius puts it at the wheel centre, as PhysX "
        "starts, where the brake and drive torques' reaction on the body, which is not modelled, "
        "would be missing and the transfer is m a (h - r) / L", packed=True)

    def __post_init__(self):
        freeze_arrays(self)

    def validate(self, prefix: str = "suspension.", where: str = "") -> None:
        """Range checks plus: unit travel directions pointing down (within
        :data:`MAX_TRAVEL_TILT` of the chassis -z axis) and non-zero total travel."""
        validate_fields(self, prefix, where)
        pre = f"{where}: " if where else ""
        norms = np.linalg.norm(self.travel_direction, axis=-1)
        for i, n in enumerate(norms):
            if abs(n - 1.0) > 1e-3:
                raise VehicleConfigError(
                    f"{pre}{prefix}travel_direction[{i}] has length {n:.4g}; it must be a unit vector")
        down = -self.travel_direction[:, 2] / norms
        for i in np.flatnonzero(down < np.cos(MAX_TRAVEL_TILT)):
            tilt = np.degrees(np.arccos(np.clip(down[i], -1.0, 1.0)))
            raise VehicleConfigError(
                f"{pre}{prefix}travel_direction[{i}] = {self.travel_direction[i].tolist()} points "
                f"{tilt:.0f} deg away from straight down (chassis -z); allowed up to "
                f"{np.degrees(MAX_TRAVEL_TILT):.0f} deg: it is the compression -> droop direction "
                "and the ground ray is cast along it (e.g. [0, 0, -1])")
        travel = self.max_compression + self.max_droop
        for i, t in enumerate(travel):
            if t <= 0.0:
                raise VehicleConfigError(
                    f"{pre}{prefix}max_compression[{i}] + max_droop[{i}] = {t:g}; allowed > 0 m")

    def ray_start(self, radius: np.ndarray) -> np.ndarray:
        """Ray origin (chassis frame, m): top of the tyre at max compression, ``(n_wheels, 3)``."""
        up = (self.max_compression + radius)[:, None]
        return self.position - self.travel_direction * up

    def natural_frequency(self) -> np.ndarray:
        """Undamped natural frequency sqrt(k/m)/(2 pi) of each spring (Hz)."""
        return np.sqrt(self.spring_strength / self.sprung_mass) / (2.0 * np.pi)

    def damping_ratio(self) -> np.ndarray:
        """c / (2 sqrt(k m)) per spring (1 = critical)."""
        return self.damper_rate / (2.0 * np.sqrt(self.spring_strength * self.sprung_mass))

    def alpha(self, dt: float) -> np.ndarray:
        """PhysX stability ratio sqrt(m/k)/dt; below 5 the spring is too stiff for ``dt``."""
        return np.sqrt(self.sprung_mass / self.spring_strength) / dt


def centre_line_y(positions: np.ndarray) -> float:
    """y (m, chassis frame) of the vehicle's centre line: midway between the outermost wheel
    centres. Wheels left of it (larger y) are on the left side. It is the wheels' geometry that
    makes a side (a tank's track, an axle's left and right wheel), not where the chassis origin
    or the centre of mass happen to lie, and the midpoint does not move when one side has more
    wheels than the other."""
    y = np.asarray(positions)[:, 1]
    return 0.5 * (float(y.min()) + float(y.max()))


#: Smallest sprung mass :func:`compute_sprung_masses` gives a wheel, as a share of the mean.
MIN_SPRUNG_SHARE = 0.05


def compute_sprung_masses(positions: np.ndarray, com: np.ndarray, mass: float) -> np.ndarray:
    """Split the chassis mass over the suspensions so that mass and centre of mass match.

    Solves ``sum(m_i) = M`` and ``sum(m_i * (x_i, y_i)) = M * (x_c, y_c)`` (the ground-plane
    moments; heights do not matter) for any number of wheels >= 3, taking the solution closest to
    an equal split with every mass at least :data:`MIN_SPRUNG_SHARE` of the mean ``M / n``. The
    closest solution without that bound is affine in the wheel position: the loads of a rigid
    chassis on equal springs (for the usual rectangle of wheels, the lever rule per axle, like
    ``PxVehicleComputeSprungMasses``). When it would leave a wheel (almost) unloaded or pulling,
    as on a long vehicle with its centre of mass near one end, that wheel is held at the bound
    and the others carry the rest - the same equilibrium with those wheels barely touching
    (their tyre load is capped at a multiple of the sprung mass by the load filter, so none may
    be zero).

    Args:
        positions: wheel positions, chassis frame, ``(n_wheels, 3)`` (m).
        com: centre of mass, chassis frame, ``(3,)`` (m).
        mass: chassis mass (kg).

    Returns:
        Sprung masses ``(n_wheels,)`` (kg).

    Raises:
        VehicleConfigError: fewer than 3 wheels, wheels all on one line, or a centre of mass
            outside the wheels' support polygon (or so near its edge that a wheel would get
            less than the bound).
    """
    n = len(positions)
    if n < 3:
        raise VehicleConfigError(f"wheels: a vehicle needs at least 3 wheels, got {n}")
    a = np.vstack([np.ones(n), positions[:, 0], positions[:, 1]])
    b = mass * np.array([1.0, com[0], com[1]])
    m0 = np.full(n, mass / n)
    gram = a @ a.T
    if np.linalg.cond(gram) > 1e12:
        raise VehicleConfigError("wheels: wheel positions are collinear; cannot support the chassis")
    m = m0 + a.T @ np.linalg.solve(gram, b - a @ m0)
    if np.all(m >= MIN_SPRUNG_SHARE * mass / n):
        return m
    bounded = _bounded_split(a, b, m0, MIN_SPRUNG_SHARE * mass / n)
    if bounded is None:
        raise VehicleConfigError(
            f"chassis.com = {np.round(com, 3).tolist()} lies outside the wheels' support polygon "
            f"or too near its edge (sprung masses would be {np.round(m, 1).tolist()} kg; each "
            f"must be at least {MIN_SPRUNG_SHARE:g} x the mean {mass / n:g} kg)")
    return bounded


def _bounded_split(a: np.ndarray, b: np.ndarray, m0: np.ndarray, low: float) -> np.ndarray | None:
    """``argmin |m - m0|`` subject to ``a m = b`` and ``m >= low`` (None if there is none).

    Newton's method on the dual (concave, piecewise quadratic in the 3 multipliers ``lam``):
    ``m(lam) = max(low, m0 + a.T lam)``, gradient ``b - a m(lam)``, Hessian ``-a_F a_F.T`` over
    the wheels above the bound; backtracking keeps the dual increasing. Without a solution the
    dual grows without bound and the iterations end with the constraints unmet."""
    def dual(lam):
        m = np.maximum(low, m0 + a.T @ lam)
        return 0.5 * np.sum((m - m0) ** 2) - lam @ (a @ m - b), m

    lam = np.zeros(len(b))
    value, m = dual(lam)
    scale = np.abs(b).max()
    for _ in range(100):
        residual = b - a @ m
        if np.abs(residual).max() <= 1e-9 * scale:
            return m
        free = m0 + a.T @ lam > low
        hess = a[:, free] @ a[:, free].T + 1e-12 * np.eye(len(b))
        step = np.linalg.lstsq(hess, residual, rcond=None)[0]
        t = 1.0
        while t > 1e-12:
            new_value, new_m = dual(lam + t * step)
            if new_value >= value + 1e-4 * t * (step @ residual):
                break
            t *= 0.5
        lam, value, m = lam + t * step, new_value, new_m
    return None


@jit
def jounce_from_hit(max_compression: float, max_droop: float, radius: float, dist: float,
                    cos_incidence: float) -> tuple[float, bool, float]:
    """Jounce from a ray hit, placing the tyre so it touches the hit plane.

    Args:
        max_compression, max_droop, radius: the wheel's travel limits and radius (m).
        dist: ray hit distance (m); negative means no hit.
        cos_incidence: ``-travel_direction . ground_normal`` (1 on flat ground).

    Returns:
        ``(jounce, in_contact, overtravel)``: jounce clipped to ``[-max_droop, max_compression]``
        (m), whether the ground lies within suspension travel, and the compression beyond
        ``max_compression`` (m, >= 0).
    """
    if dist < 0.0:                                # no hit: airborne, hanging at full droop
        return -max_droop, False, 0.0
    centre_along_ray = dist - radius / max(cos_incidence, 0.1)
    jounce = max_compression + radius - centre_along_ray
    in_contact = jounce >= -max_droop and cos_incidence > 0.1
    overtravel = max(jounce - max_compression, 0.0) if in_contact else 0.0
    return min(max(jounce, -max_droop), max_compression), in_contact, overtravel


@jit
def strut_force(spring: float, damper: float, bump_stop: float, jounce: float,
                jounce_rate: float, overtravel: float) -> float:
    """Strut force (N, along the strut, pushing positive) beyond the sprung weight's share:
    spring, damper and bump stop (anti-roll bars add to it, see ``antiroll``)."""
    return spring * jounce + damper * jounce_rate + bump_stop * overtravel


@jit
def normal_force(rest_load: float, normal_z: float, cos_incidence: float,
                 strut: float) -> float:
    """Suspension force (N) on the chassis along the ground normal, never pulling, of a wheel in
    contact: the sprung weight's normal part (``rest_load`` = sprung mass x g, times the
    normal's vertical component) plus the strut force ``strut`` projected on the normal.
    (PhysX's ``hitNorm . (-w F_w - T beta m_s)``, with ``F_w`` the strut push including the
    weight's share ``m_s g . w`` on the strut line ``w`` and ``T beta`` the weight's part
    across it, reduces to this.)"""
    return max(rest_load * normal_z + cos_incidence * strut, 0.0)


@jit
def camber(at_rest: float, at_compression: float, at_droop: float, max_compression: float,
           max_droop: float, jounce: float) -> float:
    """Camber angle (rad), linear in jounce between rest and each travel limit."""
    if jounce >= 0.0:
        return at_rest + (at_compression - at_rest) * jounce / (
            max_compression if max_compression > 0 else 1.0)
    return at_rest + (at_droop - at_rest) * -jounce / (max_droop if max_droop > 0 else 1.0)


@jit
def struts_and_loads(pk: Packed, k, hits, gravity, s, out) -> None:
    """2. Suspension line in the world, where it meets the ground, strut force and its part
    along the ground normal (see ``suspension``); 3. tyre loads.

    Two short loops over the wheels (as in the contact frame and the tyre substep): each
    wheel's operations form one long dependent chain, and short loop bodies let the processor
    run the chains of several wheels at once (each part 20-25 % faster than as one loop)."""
    vp, wp = pk.vehicle[0], pk.wheel
    for w in range(wp.shape[0]):                  # suspension line, where the tyre meets the hit
        p = wp[w]
        t = p.travel_direction
        d0, d1, d2 = to_world(k, t[0], t[1], t[2])
        cos_inc = -(d0 * hits[w].normal[0] + d1 * hits[w].normal[1]
                    + d2 * hits[w].normal[2])
        jounce, contact, over = jounce_from_hit(
            p.max_compression, p.max_droop, p.radius, hits[w].dist, cos_inc)
        out[w].jounce, out[w].in_contact = jounce, 1.0 if contact else 0.0
        s[w].overtravel, s[w].cos_incidence = over, cos_inc
        s[w].rate_scale = 1.0 / max(cos_inc, 0.1)
        s[w].down[0], s[w].down[1], s[w].down[2] = d0, d1, d2
    for w in range(wp.shape[0]):                  # patch arm and velocity, strut force
        p = wp[w]
        r, jounce, contact = p.radius, out[w].jounce, out[w].in_contact > 0.5
        d0, d1, d2 = s[w].down[0], s[w].down[1], s[w].down[2]
        n0, n1, n2 = hits[w].normal[0], hits[w].normal[1], hits[w].normal[2]
        start = p.ray_start
        s0, s1, s2 = to_world(k, start[0], start[1], start[2])
        along = p.max_compression + r - jounce    # ray start -> wheel centre
        a0 = k.position[0] + s0 + d0 * along - n0 * r - k.com[0]       # patch - CoM
        a1 = k.position[1] + s1 + d1 * along - n1 * r - k.com[1]
        a2 = k.position[2] + s2 + d2 * along - n2 * r - k.com[2]
        c0, c1, c2 = cross(k.angular_velocity[0], k.angular_velocity[1], k.angular_velocity[2], a0, a1, a2)
        v0, v1, v2 = k.velocity[0] + c0, k.velocity[1] + c1, k.velocity[2] + c2
        strut = 0.0
        if contact:
            rate = -(v0 * n0 + v1 * n1 + v2 * n2) * s[w].rate_scale
            strut = strut_force(p.spring_strength, p.damper_rate,
                                           p.bump_stop_stiffness, jounce, rate,
                                           s[w].overtravel)
        out[w].spring_force = strut            # the bars add to it, the loop below projects it
        s[w].arm[0], s[w].arm[1], s[w].arm[2] = a0, a1, a2
        s[w].v_patch[0], s[w].v_patch[1], s[w].v_patch[2] = v0, v1, v2
    antiroll.add_forces(pk.bars, out["jounce"], out["in_contact"], out["spring_force"])
    for w in range(wp.shape[0]):                  # force along the ground normal, tyre load
        rest = wp[w].sprung_mass * gravity
        force, filtered = 0.0, 0.0
        if out[w].in_contact > 0.5:
            force = normal_force(rest, hits[w].normal[2],
                                            s[w].cos_incidence, out[w].spring_force)
            filtered = tire.filtered_load(vp.min_normalised_load, vp.min_filtered_normalised_load,
                                          vp.max_normalised_load, vp.max_filtered_normalised_load,
                                          force / rest)
        out[w].spring_force = force
        out[w].normalised_load, out[w].load = force / rest, filtered * rest
        s[w].load_filtered = filtered
