"""Where each tyre meets the ground, per vehicle, for compiled code: the contact frame on the
ground plane, the surface friction, the camber and the useful masses there (update step 4, see
``update.py``; steps 2-3, the suspension line, struts and tyre loads, are
``suspension.struts_and_loads``).

Per-wheel results go to the vehicle's output row (camber) and to the update's scratch records
(``layout.SCRATCH``: patch velocity in the contact frame, inverse useful masses, frame axes).
"""

from __future__ import annotations

import numpy as np

from . import suspension
from .jit import jit
from .layout import Packed
from .vec import cross, to_body, to_world

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
    both axes (three short loops, see ``suspension.struts_and_loads``)."""
    wp = pk.wheel
    for w in range(wp.shape[0]):                          # frame axes, patch velocity in them
        n0, n1, n2 = hits[w].normal[0], hits[w].normal[1], hits[w].normal[2]
        h0, h1, h2 = to_world(k, out[w].heading[0], out[w].heading[1], 0.0)
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
        surface = int(hits[w].surface)
        if surface < 0 or surface >= friction.shape[0]:
            surface = 0                                   # unknown surfaces use type 0
        tire_type = min(max(int(p.tire_type), 0), friction.shape[1] - 1)
        s[w].mu_surface = friction[surface, tire_type]
        out[w].camber = suspension.camber(
            p.camber_at_rest, p.camber_at_max_compression, p.camber_at_max_droop, p.max_compression,
            p.max_droop, out[w].jounce)
    for w in range(wp.shape[0]):                          # useful masses along both axes
        a0, a1, a2 = s[w].arm[0], s[w].arm[1], s[w].arm[2]
        fwd, left = s[w].fwd, s[w].left
        s[w].inv_mass[0] = inverse_useful_mass(pk, k, w, a0, a1, a2, fwd[0], fwd[1], fwd[2])
        s[w].inv_mass[1] = inverse_useful_mass(pk, k, w, a0, a1, a2, left[0], left[1], left[2])
