"""Is a physics step short enough for the update's explicit parts? (:func:`check_timestep`)

Two parts of the update are explicit and have a step limit, and one more is checked:

* **Springs** (PhysX's rule): ``alpha = sqrt(sprung_mass / spring_strength) / dt`` should exceed 5.
* **Dampers.** The struts push on one rigid chassis, and their damper forces act over the
  next step: each of its vertical modes (heave, roll, pitch) slows as ``v' = v - dt lambda v``,
  ``lambda`` an eigenvalue of ``M^-1 C`` (``M = diag(mass, I_xx, I_yy)``, ``C = sum_i c_i j_i
  j_i^T`` with ``j_i = (1, y_i, -x_i)`` the strut's force point about the centre of mass, ``c_i``
  its damper_rate). Once ``lambda dt > 1`` that motion reverses every step (the struts chatter
  between zero and twice their load), past 2 it grows: the vehicle bounces, then leaves the
  ground, finite and so never flagged as diverged. Roll is the fastest mode, 1.5-2x a strut's
  own ``c / m`` in the presets (the struts sit at half the track, the body's roll inertia is
  small): the tank chattered in roll with dampers 13.5x its preset's, each strut's ``c dt / m``
  still under 1. The presets: 0.08-0.15 at 4 ms.
* **Tyres, parked.** The tyre is implicit in the wheel spin and in the chassis motion its force
  causes (``tire_models``), each wheel and direction predicting the chassis's response with its
  *useful mass* (``contact.inverse_useful_mass``): the step is then stable, and a parked vehicle
  settles without jitter, at any step and for every tyre model, as long as those predictions
  bound the chassis's true response to all the tyres at once. The shares of the useful masses
  see to that for a vehicle whose sprung masses add up to the chassis mass; a vehicle changed in
  code may not (sprung masses larger than the chassis carries). The rule builds the one-step
  map of the parked vehicle (:func:`parked_tread_map`: every tyre's stuck tread with its
  wheel locked, the chassis with its true mass and inertia) and reports a mode that flips sign
  every step and fades slower than ``PARKED_FLIP`` per step: the vehicle would jitter. (The
  tyre model does not enter: a parked tyre is its tread.) The wheel substeps no longer have a
  rule: the tyre's torque on the wheel is implicit in the spin update (the explicit version
  overshot rolling once the tyre's rate ``k r^2 / I`` times the substep passed 1).

Not a step limit, checked alongside: a suspension far outside any vehicle's tuning, the mark of
a unit slip (N/mm or N s/mm given as N/m or N s/m). The spring holds the sprung weight at zero
jounce whatever its strength, so a spring 1000x too soft loads without a sign and the body
wallows (natural frequency below ``MIN_FREQUENCY``; PhysX's guide: 5-10 rad/s, 0.8-1.6 Hz, for a
family car), and a damper 1000x too weak lets it bounce for minutes (damping ratio below
``MIN_DAMPING``; the guide: 0.8-1.2).
"""

from __future__ import annotations

import warnings

import numpy as np

from .contact import ROTATION_SHARE
from .params import check_step_inputs

#: The dampers overshoot when their fastest rate times the step exceeds this.
OVERSHOOT = 1.0
#: A parked vehicle's tyre mode that flips sign every step and keeps more than this of itself per
#: step is reported (after 3 s at 30 Hz, 0.9 of a mode is left to 8e-5 of it).
PARKED_FLIP = 0.9
#: Softest spring (natural frequency, Hz) and weakest damper (damping ratio) not reported as a
#: likely unit slip.
MIN_FREQUENCY, MIN_DAMPING = 0.3, 0.05


def parked_tread_map(p, dt: float, gravity: float = 9.81) -> np.ndarray:
    """The one-step map of a parked vehicle's tyres: how the update (``tire_models``, the stuck
    patch of every tyre with its wheel locked) and the rigid chassis carry a small disturbance
    from one physics step ``dt`` (with ``substeps_low`` wheel substeps) to the next.

    State: the chassis's velocity and angular velocity (body axes, level, at rest), each tread
    deflection (long and lat per wheel), and the patch velocities and mean forces the update
    remembers for its prediction. Per substep each tyre takes ``F (h / m_u + 1 / k) = -v_pred
    - ext + c u / k`` (``m_u`` its useful mass, ``k = c h + d``), moves its tread and its
    predicted velocity; the chassis then takes the mean forces for ``dt`` with its true mass
    and inertia (the forces at the tyre force points, the velocities at the patches). Returns
    the square matrix of that linear map."""
    sp, ch, ti = p.suspension, p.chassis, p.tires
    n_w = p.n_wheels
    n_sub = p.simulation.substeps_low
    h = dt / n_sub
    m_s = sp.sprung_mass
    c = np.concatenate([ti.tread_stiffness_long, ti.tread_stiffness_lat]) * np.tile(m_s, 2) * gravity
    d = 2.0 * np.tile(ti.tread_damping, 2) * np.sqrt(c * np.tile(m_s, 2))
    k = c * h + d
    patch = sp.position - np.array([0.0, 0.0, 1.0]) * p.wheels.radius[:, None] - ch.com
    force_at = patch + np.array([0.0, 0.0, 1.0]) * sp.tire_force_height[:, None]   # raised along the normal
    dirs = np.array([[1.0, 0.0, 0.0]] * n_w + [[0.0, 1.0, 0.0]] * n_w)

    def jac(arms):                                  # patch velocity along d = d . (V + W x r)
        arms = np.tile(arms, (2, 1))
        return np.hstack([dirs, np.cross(arms, dirs)])
    jv, jf = jac(patch), jac(force_at)
    inv_mass = np.concatenate([np.full(3, 1.0 / ch.mass), 1.0 / np.asarray(ch.inertia)])
    share = np.tile(m_s / ch.mass, 2)
    inv_useful = (1.0 / np.tile(m_s, 2) + ROTATION_SHARE * np.einsum(
        "ij,j,ij->i", jv[:, 3:], 1.0 / np.asarray(ch.inertia), jv[:, 3:]) / share)
    n = 2 * n_w
    size = 6 + 3 * n

    def step(state):
        qd, u, v_prev, f_prev = state[:6], state[6:6 + n], state[6 + n:6 + 2 * n], state[6 + 2 * n:]
        u = u.copy()
        v_now = jv @ qd
        ext = h * ((v_now - v_prev) / dt - f_prev * inv_useful)
        v_pred, total = v_now.copy(), np.zeros(n)
        for _ in range(n_sub):
            f = (-v_pred - ext + c * u / k) / (h * inv_useful + 1.0 / k)
            u += h * (f - c * u) / k
            v_pred += ext + h * f * inv_useful
            total += f
        f_mean = total / n_sub
        qd = qd + dt * inv_mass * (jf.T @ f_mean)
        return np.concatenate([qd, u, v_now, f_mean])
    return np.column_stack([step(e) for e in np.eye(size)])


def _tread_messages(p, dt: float, gravity: float) -> list[str]:
    """A parked vehicle whose tyres' one-step map (:func:`parked_tread_map`) has a mode that
    flips sign every step and fades slower than :data:`PARKED_FLIP` per step: it jitters."""
    eig = np.linalg.eigvals(parked_tread_map(p, dt, gravity))
    flipping = eig[eig.real < -1e-9]                    # (not rounding about 0)
    worst = float(np.abs(flipping).max()) if flipping.size else 0.0
    if worst <= PARKED_FLIP:
        return []
    return [f"{p.name}: tyres: parked, a mode of the tyre treads against the chassis flips sign "
            f"every step and keeps {worst:.2f} of itself per step (> {PARKED_FLIP:g}) at dt = "
            f"{dt:g} s: the vehicle jitters; the useful masses (the sprung masses' shares of the "
            "chassis mass and inertia) then overstate the inertia the tyres meet (sprung masses "
            "adding up to more than chassis.mass?); lower tire.tread_stiffness_long/_lat or the "
            "timestep"]


def damping_rates(p) -> np.ndarray:
    """The rates (1/s) at which the dampers slow the chassis's vertical modes (heave, roll,
    pitch): the eigenvalues of ``M^-1 C``, ascending (see the module docstring)."""
    sp, ch = p.suspension, p.chassis
    r = sp.force_point - ch.com
    j = np.column_stack([np.ones(len(r)), r[:, 1], -r[:, 0]])
    c = j.T @ (sp.damper_rate[:, None] * j)
    scale = 1.0 / np.sqrt([ch.mass, ch.inertia[0], ch.inertia[1]])
    return np.linalg.eigvalsh(scale[:, None] * c * scale[None, :])     # symmetric, same spectrum


def _suspension_messages(p, dt: float) -> list[str]:
    """Springs too stiff and dampers too strong for ``dt``; springs and dampers so soft they
    look like a unit slip (one message per rule, naming the wheels and the worst value; a
    damper rate of exactly 0 is taken as meant)."""
    sp, names = p.suspension, p.wheel_names
    rules = (
        (sp.alpha(dt), lambda a: a < 5.0, min,
         lambda a: f"spring alpha = sqrt(m/k)/dt = {a:.2f} < 5 at dt = {dt:g} s: too stiff for "
                   "the step; lower suspension.spring_strength or the timestep"),
        (sp.natural_frequency(), lambda f: f < MIN_FREQUENCY, min,
         lambda f: f"natural frequency sqrt(k/m)/(2 pi) = {f:.3g} Hz < {MIN_FREQUENCY:g} Hz: the "
                   "body wallows; suspension.spring_strength is in N/m (35 N/mm is 35000 N/m; "
                   "cars 1-2 Hz)"),
        (sp.damping_ratio(), lambda z: (z < MIN_DAMPING) & (sp.damper_rate > 0.0), min,
         lambda z: f"damping ratio c/(2 sqrt(k m)) = {z:.3g} < {MIN_DAMPING:g}: the body "
                   "bounces for many seconds; suspension.damper_rate is in N s/m (cars 0.3-1.2)"),
    )
    msgs = []
    fastest = damping_rates(p)[-1] * dt
    if fastest > OVERSHOOT:
        msgs.append(f"{p.name}: dampers: dt x the chassis's fastest damping rate (heave, roll or "
                    f"pitch: the damper rates over the body's mass and inertia) = {fastest:.2f} "
                    f"> 1 at dt = {dt:g} s: the dampers reverse that motion every step "
                    "(unstable past 2: the struts chatter, the vehicle bounces off the ground); "
                    "lower suspension.damper_rate or the timestep")
    for value, bad, worst, text in rules:
        hit = np.flatnonzero(bad(value))
        if hit.size:
            msgs.append(f"{p.name}: wheels {', '.join(names[i] for i in hit)}: "
                        + text(worst(value[hit])))
    return msgs


def check_timestep(p, dt: float, gravity: float = 9.81) -> list[str]:
    """Warn (``warnings.warn``) about springs and dampers too stiff for the physics step ``dt``,
    tyres that would jitter on a parked vehicle, and springs and dampers so soft they look like
    a unit slip (see the module docstring for each rule).

    Args:
        p: the vehicle's parameters.
        dt: physics step (s).
        gravity: m/s^2.

    Returns:
        The warning messages (empty when every spring, damper and tyre is fine).

    Raises:
        ValueError: ``dt`` or ``gravity`` not a positive finite number.
    """
    check_step_inputs(dt, gravity)
    msgs = _suspension_messages(p, dt) + _tread_messages(p, dt, gravity)
    for m in msgs:
        warnings.warn(m, RuntimeWarning, stacklevel=2)
    return msgs
