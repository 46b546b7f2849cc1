"""The footprint contact's geometry (``vehicle_model.footprint``) against closed forms, without
a simulator: rays cast analytically at planes, a step and a ditch."""

import numba
import numpy as np
import pytest

from traction import vehicle_model as vm
from traction.vehicle_model import footprint
from traction.vehicle_model import layout as L
from traction.vehicle_model.errors import VehicleConfigError
from traction.vehicle_model.footprint import ContactParams

R, RAYS, HALF_ARC = 0.33, 17, 1.05
STRIDE = 7


def _frame(pitch=0.0):
    """A suspension line's start, direction (down) and footprint forward axis, the chassis
    pitched by ``pitch`` (rad) about y."""
    c, s = np.cos(pitch), np.sin(pitch)
    d = np.array([-s, 0.0, -c])                 # chassis -z, pitched
    f = np.array([c, 0.0, -s])                  # chassis x, pitched
    return np.array([0.2, -0.1, 1.0]), d, f


def _rays(start, d, f, ground, rays=RAYS, half_arc=HALF_ARC, r=R):
    """Rangefinder data of the footprint's rays: ``ground(origin, direction)`` gives (distance,
    normal) or None."""
    data = np.zeros(STRIDE * rays)
    for j, x in enumerate(footprint.ray_offsets(rays, half_arc, r)):
        origin = start + x * f
        hit = ground(origin, d)
        k = STRIDE * j
        if hit is None:
            data[k] = -1.0
            continue
        dist, normal = hit
        data[k], data[k + 1:k + 4], data[k + 4:k + 7] = dist, origin + dist * d, normal
    return data


@numba.njit
def _equivalent_hit(rays, xs, r, s0, s1, s2, d0, d1, d2, f0, f1, f2, data, hits, work):
    """``footprint.equivalent_hit`` into ``hits[0]`` (a record of ``layout.HIT``)."""
    return footprint.equivalent_hit(rays, xs, r, s0, s1, s2, d0, d1, d2, f0, f1, f2, data, 0,
                                    STRIDE, hits[0], work)


def _combine(start, d, f, data, rays=RAYS, half_arc=HALF_ARC, r=R):
    hits, xs = np.zeros(1, L.HIT), np.zeros(rays + 2)
    footprint.offsets_into(rays, half_arc, r, xs)
    j = _equivalent_hit(rays, xs, r, *start, *d, *f, data, hits, np.zeros((rays, 4)))
    return hits[0]["dist"], hits[0]["normal"].copy(), j


def _centre_along(dist, normal, d, r=R):
    """Where one ray's hit puts the wheel centre down the line (``suspension.jounce_from_hit``)."""
    return dist - r / max(-normal @ d, 0.1)


def _plane(point, normal):
    normal = np.asarray(normal, float) / np.linalg.norm(normal)

    def ground(origin, d):
        denom = normal @ d
        if abs(denom) < 1e-12:
            return None
        t = normal @ (np.asarray(point) - origin) / denom
        return (t, normal) if t >= 0 else None
    return ground


def _step(edge_x, height):
    """Floor z = 0, a step up to ``height`` for x >= ``edge_x`` (vertical rays and rays close to
    vertical hit the top faces)."""
    def ground(origin, d):
        t_floor = -origin[2] / d[2]
        if origin[0] + t_floor * d[0] >= edge_x:
            return (height - origin[2]) / d[2], np.array([0.0, 0.0, 1.0])
        return t_floor, np.array([0.0, 0.0, 1.0])
    return ground


@pytest.mark.parametrize("pitch", [0.0, 0.15, -0.3])
@pytest.mark.parametrize("normal", [(0, 0, 1), (0.3, 0, 1), (-0.5, 0.2, 1), (0.1, -0.6, 1)])
def test_on_a_plane_the_footprint_is_one_ray(pitch, normal):
    """Every piece of a plane bounds the tyre by the plane itself: the footprint reports the
    central ray's hit exactly (to rounding), on level ground and slopes, pitched or not."""
    start, d, f = _frame(pitch)
    ground = _plane([0.0, 0.0, 0.1], normal)
    dist, n, _ = _combine(start, d, f, _rays(start, d, f, ground))
    one_dist, one_n = ground(start, d)
    assert dist == pytest.approx(one_dist, abs=1e-12)
    np.testing.assert_allclose(n, one_n, atol=1e-12)


def test_the_tyre_rolls_over_a_step_on_its_arc():
    """A 0.15 m step under a 0.33 m tyre: as the edge passes under the footprint the centre
    follows the arc ``z = H + sqrt(r^2 - e^2)`` about the corner (``e`` the edge's distance
    ahead) within 2 cm (measured 1.7 cm, the pieces' half-widths at 57 deg of the profile),
    where one ray jumps the full 0.15 m when it crosses the edge. The path still steps where a
    ray crosses the edge (the corner moves from one cell edge to the next: at most a cell's
    width times the profile's slope, 3.4 cm here, against one ray's 15 cm), and the normal
    tilts back from the corner, so the kerb pushes the wheel back as well as up."""
    h = 0.15
    start, d, f = _frame()
    errors, heights, tilts = [], [], []
    for e in np.arange(-0.02, R, 0.001):                  # edge e ahead of the centre
        edge = start[0] + e
        dist, n, _ = _combine(start, d, f, _rays(start, d, f, _step(edge, h)))
        z = start[2] - _centre_along(dist, n, d)          # centre height above the floor
        arc = max(R, h + np.sqrt(max(R * R - e * e, 0.0))) if e > 0 else h + R
        errors.append(z - arc)
        heights.append(z)
        tilts.append(n[0])
    assert np.abs(errors).max() < 0.02
    assert np.abs(np.diff(heights)).max() < 0.035
    assert min(tilts) < -0.5                              # facing back at the corner
    one = [start[2] - _centre_along(*_step(start[0] + e, h)(start, d), d)
           for e in (0.001, -0.001)]
    assert one[1] - one[0] == pytest.approx(h)            # one ray: the whole step at once


def test_a_ditch_narrower_than_the_tyre_is_bridged():
    """A 0.2 m ditch under a 0.33 m tyre: the centre drops at most ``r - sqrt(r^2 - 0.1^2)``
    = 1.55 cm as the tyre spans it (within the pieces' resolution: < 2 cm), where one ray
    drops into it."""
    start, d, f = _frame()
    width, depth = 0.2, 0.5

    def ditch(x0):
        def ground(origin, dd):
            t = -origin[2] / dd[2]
            x = origin[0] + t * dd[0]
            if x0 < x < x0 + width:
                return (-depth - origin[2]) / dd[2], np.array([0.0, 0.0, 1.0])
            return t, np.array([0.0, 0.0, 1.0])
        return ground

    drops = []
    for x0 in np.arange(-0.45, 0.25, 0.002):
        g = ditch(start[0] + x0)
        dist, n, _ = _combine(start, d, f, _rays(start, d, f, g))
        drops.append(R - (start[2] - _centre_along(dist, n, d)))
    assert max(drops) < 0.02
    assert max(drops) > 0.01                             # it does dip, as a tyre does


def test_no_hit_is_no_contact_and_walls_bound_only_by_their_point():
    start, d, f = _frame()
    data = _rays(start, d, f, lambda o, dd: None)
    dist, _, j = _combine(start, d, f, data)
    assert dist == -1.0 and j == -1
    # a hit on a face along the line (a wall's, grazed at an edge): only its point bounds
    data = _rays(start, d, f, lambda o, dd: (0.8, np.array([-1.0, 0.0, 0.0])))
    dist, n, _ = _combine(start, d, f, data)
    assert _centre_along(dist, n, d) == pytest.approx(0.8 - R, abs=1e-9)


def test_contact_parameters_are_checked():
    with pytest.raises(VehicleConfigError, match="contact.model"):
        ContactParams(model="sweep").validate()
    with pytest.raises(VehicleConfigError, match="contact.rays = 16: must be odd"):
        ContactParams(model="footprint", rays=16).validate()
    assert vm.load_vehicle("sedan").contact.n_rays == RAYS        # the presets' footprint
    assert vm.load_vehicle("tank").contact.n_rays == 1             # a track: one ray a wheel
    assert ContactParams(model="ray").n_rays == 1
    assert footprint.ray_offsets(RAYS, HALF_ARC, R)[RAYS // 2] == 0.0


def _exact_along(start, d, f, points, r=R):
    """The centre's distance down the line for a disc of radius ``r`` in the wheel plane resting
    on the ground ``points`` (world, densely sampled outline): the smallest ``t - sqrt(r^2 -
    u^2)`` over the points ``u`` ahead and ``t`` down the line."""
    rel = points - start
    u, t = rel @ f, rel @ d
    near = np.abs(u) < r
    return float(np.min(t[near] - np.sqrt(r * r - u[near] ** 2)))


def _outline(xs, zs):
    """Densely sampled polyline through ``(xs, zs)`` at y = -0.1 (the wheel plane)."""
    pts = [np.linspace([x0, -0.1, z0], [x1, -0.1, z1], 400)
           for x0, z0, x1, z1 in zip(xs[:-1], zs[:-1], xs[1:], zs[1:], strict=True)]
    return np.concatenate(pts)


def _polyline_ground(xs, zs):
    """Rays meet the polyline (x, z) (normals from its segments)."""
    def ground(origin, d):
        best = None
        for x0, z0, x1, z1 in zip(xs[:-1], zs[:-1], xs[1:], zs[1:], strict=True):
            e = np.array([x1 - x0, z1 - z0])
            m = np.array([[d[0], -e[0]], [d[2], -e[1]]])
            if abs(np.linalg.det(m)) < 1e-14:
                continue
            t, s = np.linalg.solve(m, [x0 - origin[0], z0 - origin[2]])
            if t >= 0 and 0 <= s <= 1 and (best is None or t < best[0]):
                n = np.array([-e[1], 0.0, e[0]])
                best = (t, n / np.linalg.norm(n) * np.sign(n[2] or 1.0))
        return best
    return ground


@pytest.mark.parametrize("pitch", [0.0, 0.12, -0.12])
def test_a_ridge_or_step_anywhere_under_the_footprint_bounds_the_tyre(pitch):
    """Against the exact disc resting on the ground (brute force over the outline): a ridge
    (slopes +-0.1) anywhere under the tyre, its apex on a cell edge included (unpitched: a
    pitched line's hits lie off the offsets), always bounds
    the tyre within 1 cm; a 0.15 m step with the suspension line pitched 0.12 rad (the rays
    graze the step's face) within 4 cm - a face steeper than the footprint's arc is not
    extended across its cell (it had held the wheel 18 cm above any support)."""
    start, d, f = _frame(pitch)
    xs = footprint.ray_offsets(RAYS, HALF_ARC, R)
    edges = (xs[1:] + xs[:-1]) / 2
    for apex in np.concatenate([edges[5:12], np.linspace(-0.2, 0.2, 41)]):
        x = start[0] + apex
        g_xs, g_zs = [x - 2.0, x, x + 2.0], [0.3 - 0.2, 0.3, 0.3 - 0.2]
        dist, n, _ = _combine(start, d, f, _rays(start, d, f, _polyline_ground(g_xs, g_zs)))
        assert dist >= 0.0
        exact = _exact_along(start, d, f, _outline(g_xs, g_zs))
        assert _centre_along(dist, n, d) == pytest.approx(exact, abs=0.01)
    for e in np.linspace(-0.05, R, 60):
        edge = start[0] + e
        g_xs, g_zs = [edge - 3, edge, edge, edge + 3], [0.0, 0.0, 0.15, 0.15]
        dist, n, _ = _combine(start, d, f, _rays(start, d, f, _polyline_ground(g_xs, g_zs)))
        exact = _exact_along(start, d, f, _outline(g_xs, g_zs))
        assert abs(_centre_along(dist, n, d) - exact) < 0.04


def test_a_slight_bend_does_not_swing_the_normal():
    """Level ground that bends down by 1e-4 of slope under the tyre (a float32 heightfield's
    rounding is of this order): the normal stays within 0.05 deg of the ground's (a corner's
    normal counts by its drop; at full weight it had swung 3 deg)."""
    start, d, f = _frame()
    for bend in np.linspace(-0.25, 0.25, 51):
        x = start[0] + bend
        g_xs, g_zs = [x - 2.0, x, x + 2.0], [0.0, 0.0, -2e-4]
        _, n, _ = _combine(start, d, f, _rays(start, d, f, _polyline_ground(g_xs, g_zs)))
        assert np.degrees(np.arccos(min(n[2], 1.0))) < 0.05
