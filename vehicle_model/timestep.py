"""Is a physics step short enough for the update's explicit parts? (:func:`check_timestep`)

Four parts of the update are explicit and have a step limit:

* **Springs** (PhysX's rule): ``alpha = sqrt(sprung_mass / spring_strength) / dt`` should exceed 5.
* **Wheel spin against the tyre.** Near rolling, every tyre model but the custom one pushes
  back on the wheel with a force proportional to the patch's slide ``omega r - v``; the spin
  relaxes toward rolling at ``lambda = k r^2 / I`` (``k`` the force per m/s of slide, ``r``
  radius, ``I`` wheel inertia). The explicit spin update over a wheel substep ``h`` overshoots
  rolling (the slip flips sign every substep) once ``lambda h > 1``, and past 2 the flips grow
  until the tyre saturates; a braked wheel that flips never rests, so its sticky tyre never
  engages and the car creeps.
  ``k`` per model (``mu`` the surface friction, ``load`` the rest load ``sprung_mass g``):

  ==============  ========================================  ===============================
  model           force per unit slip                       slip denominator ``v``
  ==============  ========================================  ===============================
  physx           ``long_stiff_per_unit_gravity g``          ``min_long_slip_denominator``
  magic_formula   ``B C D mu load`` (``mf_long``)            ``min_slip_speed``
  curve           zero-slip slope x ``grip mu load``         ``min_slip_speed``
  ==============  ========================================  ===============================

  and ``k = force per unit slip / v``; the arcade tyre's ``k`` is ``arcade_long_stiffness
  load`` at any speed. Below ``substep_speed_threshold`` the slip denominator is the smallest
  (``h = dt / substeps_low``); above it, it is at least the threshold (``h = dt /
  substeps_high``). PhysX's answer is more substeps; its substeps also advance the chassis,
  ours re-solve the wheels with the chassis held. The curve tyre with friction clamps on is
  not rated: the clamps cap the force at what stops the slide within the step. A custom tyre
  is the caller's.
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
* **Sticky tyre**: its spring-damper is explicit over ``dt`` (the anchor moves with the
  velocity, the force acts over the next step), a mode ``x' = x + dt v``, ``v' = v - dt (w^2 x'
  + 2 zeta w v)`` of the sprung mass, stable only while ``(w dt)^2 + 4 zeta w dt < 4`` (``w = 2
  pi frequency``; the eigenvalues' product is ``1 - 2 zeta w dt`` and their sum ``2 - (w dt)^2
  - 2 zeta w dt``).

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

from .params import check_step_inputs
from .tire import MODELS

#: A wheel substep overshoots rolling when the tyre/wheel rate times the substep exceeds this;
#: so do the dampers when their fastest rate times the step does.
OVERSHOOT = 1.0
#: Softest spring (natural frequency, Hz) and weakest damper (damping ratio) not reported as a
#: likely unit slip.
MIN_FREQUENCY, MIN_DAMPING = 0.3, 0.05


def _curve_slopes(p) -> np.ndarray:
    """Zero-slip slope of each wheel's steepest longitudinal curve (force per unit slip per
    unit of ``grip mu load``)."""
    eps = 1e-6
    slopes = []
    for curve_set in p.curve_sets:
        steepest = 0.0
        for c in curve_set.long:
            y = np.interp([-eps, 0.0, eps], c[:, 0], c[:, 1])
            steepest = max(steepest, abs(y[1] - y[0]) / eps, abs(y[2] - y[1]) / eps)
        slopes.append(steepest)
    return np.array(slopes)[p.tires.curve_set.astype(int)]


def wheel_rates(p, gravity: float = 9.81, friction=1.0) -> tuple[np.ndarray, np.ndarray]:
    """Rates ``lambda`` (1/s) at which each wheel's tyre pulls its spin toward rolling, at low
    speed (slip denominator at its minimum) and at the substep speed threshold; NaN where a
    wheel is not rated (custom tyre, curve tyre with clamps). ``friction``: the largest surface
    friction each wheel meets, scalar or ``(n_wheels,)``."""
    sim, wh, ty = p.simulation, p.wheels, p.tires
    load = p.suspension.sprung_mass * gravity                     # rest load, N
    mu = _friction(friction, len(load))
    mf = ty.mf_long
    per_slip = np.select(                                         # force per unit slip, N
        [ty.uses("physx"), ty.uses("magic_formula"), ty.uses("curve") & (ty.clamps == 0)],
        [ty.long_stiff_per_unit_gravity * gravity, mf[:, 0] * mf[:, 1] * mf[:, 2] * mu * load,
         _curve_slopes(p) * ty.grip * mu * load], np.nan)
    v_min = np.where(ty.uses("physx"), sim.min_long_slip_denominator, ty.min_slip_speed)
    v_high = np.maximum(v_min, sim.substep_speed_threshold)
    arcade = ty.arcade_long_stiffness * load                      # force per m/s of slide
    k_low = np.where(ty.uses("arcade"), arcade, per_slip / v_min)
    k_high = np.where(ty.uses("arcade"), arcade, per_slip / v_high)
    return k_low * wh.radius**2 / wh.moi, k_high * wh.radius**2 / wh.moi


def _friction(friction, n_wheels: int) -> np.ndarray:
    """``friction`` as ``(n_wheels,)``, refusing what is not finite, >= 0 and of that size."""
    try:
        mu = np.broadcast_to(np.asarray(friction, dtype=float), (n_wheels,))
    except (TypeError, ValueError):
        mu = None
    if mu is None or not np.all(np.isfinite(mu) & (mu >= 0.0)):
        raise ValueError(f"friction = {friction!r}: expected a number or {n_wheels} numbers, "
                         "finite and >= 0")
    return mu


def _wheel_messages(p, dt: float, gravity: float, friction) -> list[str]:
    """One message per speed regime naming the wheels whose substep overshoots."""
    sim, ty = p.simulation, p.tires
    low, high = wheel_rates(p, gravity, friction)
    msgs = []
    for regime, rate, n, key in (("low", low, sim.substeps_low, "substeps_low"),
                                 ("high", high, sim.substeps_high, "substeps_high")):
        h = dt / n
        over = np.flatnonzero(np.nan_to_num(rate) * h > OVERSHOOT)
        if not over.size:
            continue
        worst = rate[over].max()
        models = "/".join(sorted({MODELS[int(ty.model[i])] for i in over}))
        msgs.append(f"{p.name}: wheels {', '.join(p.wheel_names[i] for i in over)} ({models} "
                    f"tyres): tyre/wheel rate k r^2/I up to {worst:.0f} /s at {regime} speed "
                    f"times the wheel substep {h:g} s = {worst * h:.2f} > 1: the spin overshoots "
                    f"rolling every substep (a braked wheel never rests, the car creeps); set "
                    f"simulation.{key} >= {int(np.ceil(worst * dt))}")
    return msgs


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


def check_timestep(p, dt: float, gravity: float = 9.81, friction=1.0) -> list[str]:
    """Warn (``warnings.warn``) about springs, dampers, wheels and sticky tyres too stiff for the
    physics step ``dt``, and about springs and dampers so soft they look like a unit slip (see
    the module docstring for each rule).

    Args:
        p: the vehicle's parameters.
        dt: physics step (s).
        gravity: m/s^2.
        friction: the largest surface friction each wheel meets, scalar or ``(n_wheels,)``
            (``VehicleSim`` passes its friction table's); the magic-formula and curve tyres'
            stiffness grows with it.

    Returns:
        The warning messages (empty when every spring and wheel is fine).

    Raises:
        ValueError: ``dt`` or ``gravity`` not a positive finite number.
    """
    check_step_inputs(dt, gravity)
    msgs = _suspension_messages(p, dt) + _wheel_messages(p, dt, gravity, friction)
    sk = p.sticky
    a = 2.0 * np.pi * sk.frequency * dt
    if a * a + 4.0 * sk.damping_ratio * a >= 4.0:
        msgs.append(f"{p.name}: sticky tyre: (w dt)^2 + 4 zeta w dt = "
                    f"{a * a + 4 * sk.damping_ratio * a:.2f} >= 4 (w = 2 pi sticky.frequency, "
                    f"zeta = sticky.damping_ratio) at dt = "
                    f"{dt:g} s: the explicit spring-damper is unstable; lower sticky.frequency "
                    "or sticky.damping_ratio, or the timestep")
    for m in msgs:
        warnings.warn(m, RuntimeWarning, stacklevel=2)
    return msgs
