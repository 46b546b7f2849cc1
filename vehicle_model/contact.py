"""Where each tyre meets the ground, per vehicle, for compiled code: the suspension line in the
world and the strut force (with anti-roll bars and the tyre load filter), the contact frame on the
ground plane and the useful masses there (update steps 2-4, see ``update.py``).

Per-wheel results go to the vehicle's output row (jounce, contact, strut force, loads, camber) and
to the update's scratch (``S_`` columns: patch velocity in the contact frame, inverse useful
masses, frame axes).
"""

from __future__ import annotations

import numpy as np

from . import antiroll, suspension, tire
from . import layout as L
from .jit import jit
from .layout import Packed
from .vec import cross, to_body, to_world


@jit
def suspension_forces(pk: Packed, k, hits, gravity, s, out) -> None:
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
        cos_inc = -(d0 * hits[w, L.H_NORMAL] + d1 * hits[w, L.H_NORMAL + 1]
                    + d2 * hits[w, L.H_NORMAL + 2])
        jounce, contact, over = suspension.jounce_from_hit(
            p.max_compression, p.max_droop, p.radius, hits[w, L.H_DIST], cos_inc)
        out[w, L.O_JOUNCE], out[w, L.O_CONTACT] = jounce, 1.0 if contact else 0.0
        s[w].overtravel, s[w].cos_incidence = over, cos_inc
        s[w].rate_scale = 1.0 / max(cos_inc, 0.1)
        s[w].down[0], s[w].down[1], s[w].down[2] = d0, d1, d2
    for w in range(wp.shape[0]):                  # patch arm and velocity, strut force
        p = wp[w]
        r, jounce, contact = p.radius, out[w, L.O_JOUNCE], out[w, L.O_CONTACT] > 0.5
        d0, d1, d2 = s[w].down[0], s[w].down[1], s[w].down[2]
        n0, n1, n2 = hits[w, L.H_NORMAL], hits[w, L.H_NORMAL + 1], hits[w, L.H_NORMAL + 2]
        start = p.ray_start
        s0, s1, s2 = to_world(k, start[0], start[1], start[2])
        along = p.max_compression + r - jounce    # ray start -> wheel centre
        a0 = k[L.K_POSITION] + s0 + d0 * along - n0 * r - k[L.K_COM]       # patch - CoM
        a1 = k[L.K_POSITION + 1] + s1 + d1 * along - n1 * r - k[L.K_COM + 1]
        a2 = k[L.K_POSITION + 2] + s2 + d2 * along - n2 * r - k[L.K_COM + 2]
        c0, c1, c2 = cross(k[L.K_ANGULAR], k[L.K_ANGULAR + 1], k[L.K_ANGULAR + 2], a0, a1, a2)
        v0, v1, v2 = k[L.K_VELOCITY] + c0, k[L.K_VELOCITY + 1] + c1, k[L.K_VELOCITY + 2] + c2
        strut = 0.0
        if contact:
            rate = -(v0 * n0 + v1 * n1 + v2 * n2) * s[w].rate_scale
            strut = suspension.strut_force(p.spring_strength, p.damper_rate,
                                           p.bump_stop_stiffness, jounce, rate,
                                           s[w].overtravel)
        out[w, L.O_SPRING_FORCE] = strut            # the bars add to it, the loop below projects it
        s[w].arm[0], s[w].arm[1], s[w].arm[2] = a0, a1, a2
        s[w].v_patch[0], s[w].v_patch[1], s[w].v_patch[2] = v0, v1, v2
    antiroll.add_forces(pk.bars, out[:, L.O_JOUNCE], out[:, L.O_CONTACT], out[:, L.O_SPRING_FORCE])
    for w in range(wp.shape[0]):                  # force along the ground normal, tyre load
        rest = wp[w].sprung_mass * gravity
        force, filtered = 0.0, 0.0
        if out[w, L.O_CONTACT] > 0.5:
            force = suspension.normal_force(rest, hits[w, L.H_NORMAL + 2],
                                            s[w].cos_incidence, out[w, L.O_SPRING_FORCE])
            filtered = tire.filtered_load(vp.min_normalised_load, vp.min_filtered_normalised_load,
                                          vp.max_normalised_load, vp.max_filtered_normalised_load,
                                          force / rest)
        out[w, L.O_SPRING_FORCE] = force
        out[w, L.O_NORMALISED_LOAD], out[w, L.O_LOAD] = force / rest, filtered * rest
        s[w].load_filtered = filtered


#: The useful mass counts the chassis's rotation this many times (see :func:`inverse_useful_mass`).
ROTATION_SHARE = 2.0


@jit
def inverse_useful_mass(pk: Packed, k, w, a0, a1, a2, d0, d1, d2) -> float:
    """1 / the useful mass (1/kg) a tyre force along ``d`` at the patch (arm ``a`` from the CoM)
    meets: the wheel's sprung mass ``m_s`` with its share of the chassis inertia, ``1/m = 1/m_s +
    2 (r x d) . J_s^-1 (r x d)`` in body axes, ``J_s = (m_s / m) J`` (``inv_sprung_mass`` and the
    diagonal of ``J_s^-1 x`` :data:`ROTATION_SHARE`, ``turn_coef``, are packed: no division here).

    Why shares, and why the rotation twice: the tyre integrates each wheel and direction on its
    own (``tire_models``), predicting the patch's response to its force with this mass. That
    is stable when the predicted responses bound the chassis's true one to all the tyres' forces
    at once: the diagonal of ``1/m_i`` must dominate the mobility matrix ``G = sum_k u_k u_k^T``
    (a rank-one term per chassis mode: translation, and rotation about each axis). A rank-one
    term is dominated by any diagonal ``D`` with ``sum_i u_i^2 / D_i <= 1``. Shares in proportion
    to the sprung masses give each term exactly 1 when every wheel pushes in one direction only
    (the talk's useful mass); but longitudinal and lateral forces both turn the chassis about
    its vertical axis (and, on a steered wheel, about the others), so each rotation term has two
    entries per wheel, and counting the rotation twice in each direction brings its sum back to
    1. With ``J_s`` once, a parked car's yaw mode is predicted up to 2x too stiff, and the
    implicit step could flip its sign every step at large steps."""
    p = pk.wheel[w]
    x0, x1, x2 = cross(a0, a1, a2, d0, d1, d2)
    b0, b1, b2 = to_body(k, x0, x1, x2)
    return (p.inv_sprung_mass + b0 * b0 * p.turn_coef[0] + b1 * b1 * p.turn_coef[1]
            + b2 * b2 * p.turn_coef[2])


@jit
def contact_frame(pk: Packed, k, hits, friction, ws, s, out) -> None:
    """4. Wheel heading (step 1's, chassis plane) projected on the ground plane, lateral to its
    left; patch velocity in that frame, surface friction, camber, inverse useful masses along
    both axes (three short loops, see :func:`suspension_forces`)."""
    wp = pk.wheel
    for w in range(wp.shape[0]):                          # frame axes, patch velocity in them
        n0, n1, n2 = hits[w, L.H_NORMAL], hits[w, L.H_NORMAL + 1], hits[w, L.H_NORMAL + 2]
        h0, h1, h2 = to_world(k, out[w, L.O_HEADING], out[w, L.O_HEADING + 1], 0.0)
        along = h0 * n0 + h1 * n1 + h2 * n2
        f0, f1, f2 = h0 - n0 * along, h1 - n1 * along, h2 - n2 * along
        norm = max(np.sqrt(f0 * f0 + f1 * f1 + f2 * f2), 1e-9)
        f0, f1, f2 = f0 / norm, f1 / norm, f2 / norm
        l0, l1, l2 = cross(n0, n1, n2, f0, f1, f2)
        v0, v1, v2 = s[w].v_patch[0], s[w].v_patch[1], s[w].v_patch[2]
        s[w].v_long = v0 * f0 + v1 * f1 + v2 * f2
        s[w].v_lat = v0 * l0 + v1 * l1 + v2 * l2
        s[w].fwd[0], s[w].fwd[1], s[w].fwd[2] = f0, f1, f2
        s[w].left[0], s[w].left[1], s[w].left[2] = l0, l1, l2
    for w in range(wp.shape[0]):                          # surface friction, camber
        p = wp[w]
        surface = int(hits[w, L.H_SURFACE])
        if surface < 0 or surface >= friction.shape[0]:
            surface = 0                                   # unknown surfaces use type 0
        tire_type = min(max(int(p.tire_type), 0), friction.shape[1] - 1)
        s[w].mu_surface = friction[surface, tire_type]
        out[w, L.O_CAMBER] = suspension.camber(
            p.camber_at_rest, p.camber_at_max_compression, p.camber_at_max_droop, p.max_compression,
            p.max_droop, out[w, L.O_JOUNCE])
    for w in range(wp.shape[0]):                          # useful masses along both axes
        a0, a1, a2 = s[w].arm[0], s[w].arm[1], s[w].arm[2]
        fwd, left = s[w].fwd, s[w].left
        s[w].inv_mass[0] = inverse_useful_mass(pk, k, w, a0, a1, a2, fwd[0], fwd[1], fwd[2])
        s[w].inv_mass[1] = inverse_useful_mass(pk, k, w, a0, a1, a2, left[0], left[1], left[2])
