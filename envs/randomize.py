"""Domain randomisation: the vehicle's physics drawn anew at every reset.

A task's ``randomize`` argument names a preset (``"none"``, ``"mild"``, ``"wide"``) or gives a
dict of ranges, ``{key: (lo, hi)}``, each drawn uniformly and independently at every reset from
a random stream of its own, seeded with the environment (so the same seed replays the same
draws; the worlds of a vector env, seeded apart, draw apart; and ``np_random`` is not drawn
from, so a seed gives the same terrain and task start with and without randomisation). A key
left out keeps its nominal value. The keys:

========================  =======  ==========================================================
key                       unit     what it scales or moves
========================  =======  ==========================================================
friction_scale            -        every value of the friction table (surface x tyre type):
                                   the grip of every surface, which is also the tyres' peak
                                   friction (the table is the peak; the tyre model shapes it)
surface_friction_scale    -        the same, one draw per surface (puddles grippier than tarmac)
mass_scale                -        the vehicle's mass, its inertia with it (same shape)
com_offset_x/_y/_z        m        the centre of mass, added to its position (chassis frame)
inertia_scale             -        the chassis's moments of inertia
tire_stiffness_scale      -        the tyres' slip stiffnesses: PhysX's lateral and longitudinal
                                   and camber stiffness, the arcade tyre's, the Magic Formula's
                                   B (its slope at zero slip, BCD); the curve tyre's curves are
                                   data and are kept
engine_torque_scale       -        the engine's peak torque
brake_torque_scale        -        every wheel's brake and handbrake torque
spring_scale              -        every suspension spring
damper_scale              -        every suspension damper
action_noise              action   the standard deviation of Gaussian noise added to every
                                   action channel at every step, before clipping
observation_noise         obs.     the same on every observation channel (in its own unit)
latency                   steps    a whole number of control steps each action waits before
                                   it acts (drawn among lo..hi; an episode's first action acts
                                   until then)
========================  =======  ==========================================================

The sprung masses are computed again for the drawn mass and centre of mass, as a loaded file
without them would be (so the drawn vehicle rests at zero jounce; each at least a share of the
mean, ``suspension.MIN_SPRUNG_SHARE``). A spec is checked when the environment is built, so that
a draw need not be (validating a vehicle costs several milliseconds; a reset without draws, half
of one): an unknown key, a range outside the key's allowed one or with ``lo > hi`` raises
ValueError naming it, and so does a spec whose ends give an invalid vehicle (every key at its
low end, every key at its high end: every other drawn parameter is a nominal one scaled or moved
by one key, so it lies between its values there) or whose stiffest and lightest vehicles (every
spring, damper and tyre stiffness at its highest, mass and inertia at their lowest, the centre
of mass at each of the 8 corners of its offsets) get a warning from ``check_timestep`` the
nominal vehicle does not get. The drawn vehicle is then packed for the compiled update as it is.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping

import numpy as np

from traction import vehicle_model as vm
from traction.vehicle_model.params import evolve
from traction.vehicle_model.suspension import compute_sprung_masses

#: key -> (allowed lo, allowed hi, unit)
KEYS = {
    "friction_scale": (0.05, 3.0, "-"),
    "surface_friction_scale": (0.05, 3.0, "-"),
    "mass_scale": (0.25, 4.0, "-"),
    "com_offset_x": (-1.0, 1.0, "m"),
    "com_offset_y": (-1.0, 1.0, "m"),
    "com_offset_z": (-1.0, 1.0, "m"),
    "inertia_scale": (0.25, 4.0, "-"),
    "tire_stiffness_scale": (0.25, 4.0, "-"),
    "engine_torque_scale": (0.1, 4.0, "-"),
    "brake_torque_scale": (0.1, 4.0, "-"),
    "spring_scale": (0.25, 4.0, "-"),
    "damper_scale": (0.25, 4.0, "-"),
    "action_noise": (0.0, 1.0, "action units"),
    "observation_noise": (0.0, 10.0, "observation units"),
    "latency": (0, 10, "control steps"),
}
#: the keys that act on the agent's actions and observations, not on the vehicle
AGENT_KEYS = frozenset({"action_noise", "observation_noise", "latency"})

PRESETS: dict[str, dict[str, tuple[float, float]]] = {
    "none": {},
    # what a second build of the same car, on another day, differs by
    "mild": {"friction_scale": (0.9, 1.1), "mass_scale": (0.95, 1.1),
             "com_offset_x": (-0.05, 0.05), "com_offset_y": (-0.02, 0.02),
             "com_offset_z": (-0.02, 0.02), "inertia_scale": (0.9, 1.1),
             "tire_stiffness_scale": (0.9, 1.1), "engine_torque_scale": (0.9, 1.1),
             "brake_torque_scale": (0.9, 1.1), "spring_scale": (0.9, 1.1),
             "damper_scale": (0.9, 1.1), "action_noise": (0.0, 0.02),
             "observation_noise": (0.0, 0.01)},
    # a car one has not driven: worn or new tyres, a load in the boot, a tired engine
    "wide": {"friction_scale": (0.7, 1.2), "surface_friction_scale": (0.9, 1.1),
             "mass_scale": (0.9, 1.3), "com_offset_x": (-0.15, 0.15),
             "com_offset_y": (-0.05, 0.05), "com_offset_z": (-0.05, 0.05),
             "inertia_scale": (0.8, 1.25), "tire_stiffness_scale": (0.75, 1.25),
             "engine_torque_scale": (0.75, 1.2), "brake_torque_scale": (0.75, 1.2),
             "spring_scale": (0.8, 1.25), "damper_scale": (0.75, 1.3),
             "action_noise": (0.0, 0.05), "observation_noise": (0.0, 0.02), "latency": (0, 1)},
}

#: rows of noise drawn at once from the stream (``TractionEnv._noise_row``)
NOISE_BLOCK = 256

#: the keys that scale the friction table (the others change the vehicle)
FRICTION_KEYS = frozenset({"friction_scale", "surface_friction_scale"})

#: the nominal value of each key (a draw of it changes nothing)
NOMINAL = {k: 0.0 if k.startswith("com_offset") or k in AGENT_KEYS else 1.0 for k in KEYS}


def spec(randomize) -> dict[str, tuple[float, float]]:
    """A ``randomize`` argument (preset name, dict of ranges, or None) as checked ranges.

    Raises:
        ValueError: an unknown preset or key, a range that is not two finite numbers with
            ``lo <= hi`` inside the key's allowed range (naming them).
    """
    if randomize is None:
        return {}
    if isinstance(randomize, str):
        if randomize not in PRESETS:
            raise ValueError(f"randomize = {randomize!r}; presets: {', '.join(PRESETS)} (or a "
                             "dict of ranges {key: (lo, hi)})")
        return dict(PRESETS[randomize])
    if not isinstance(randomize, Mapping):
        raise ValueError(f"randomize: a preset name ({', '.join(PRESETS)}) or a dict of ranges "
                         f"{{key: (lo, hi)}}; got {type(randomize).__name__}")
    unknown = sorted(set(randomize) - set(KEYS))
    if unknown:
        raise ValueError(f"randomize: unknown key(s) {', '.join(map(repr, unknown))}; allowed: "
                         f"{', '.join(KEYS)}")
    out = {}
    for key, value in randomize.items():
        lo_ok, hi_ok, unit = KEYS[key]
        try:
            lo, hi = (float(v) for v in value)
        except (TypeError, ValueError):
            raise ValueError(f"randomize[{key!r}] = {value!r}; expected a range (lo, hi) "
                             f"in [{lo_ok:g}, {hi_ok:g}] {unit}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo_ok <= lo <= hi <= hi_ok):
            raise ValueError(f"randomize[{key!r}] = ({lo:g}, {hi:g}); allowed: lo <= hi within "
                             f"[{lo_ok:g}, {hi_ok:g}] {unit}")
        if key == "latency" and not (lo.is_integer() and hi.is_integer()):
            raise ValueError(f"randomize['latency'] = ({lo:g}, {hi:g}); allowed: whole numbers "
                             "of control steps")
        out[key] = (lo, hi)
    return out


def draw(ranges: dict[str, tuple[float, float]], rng: np.random.Generator,
         n_surfaces: int) -> dict:
    """One draw of every key of ``ranges`` (in the order of :data:`KEYS`, so a spec's order
    does not change the draws): floats, and ``surface_friction_scale`` one per surface."""
    out = {}
    for key in KEYS:
        if key in ranges:
            lo, hi = ranges[key]
            if key == "surface_friction_scale":
                out[key] = rng.uniform(lo, hi, n_surfaces).tolist()
            elif key == "latency":
                out[key] = int(rng.integers(int(lo), int(hi) + 1))
            else:
                out[key] = float(rng.uniform(lo, hi))
    return out


def checked_draw(values, n_surfaces: int) -> dict:
    """Drawn values as :meth:`get_state` saved them, checked (ValueError naming a bad one)."""
    if not isinstance(values, Mapping) or set(values) - set(KEYS):
        raise ValueError(f"randomization values: a dict of keys among {', '.join(KEYS)}; got "
                         f"{values!r}")
    out = {}
    for key, value in values.items():
        lo, hi, unit = KEYS[key]
        v = np.asarray(value, float)
        shape = (n_surfaces,) if key == "surface_friction_scale" else ()
        whole = key != "latency" or float(v).is_integer()
        if v.shape != shape or not np.all((lo <= v) & (v <= hi)) or not whole:
            raise ValueError(f"randomization value {key} = {value!r}; expected shape {shape} "
                             f"in [{lo:g}, {hi:g}] {unit}")
        out[key] = int(v) if key == "latency" else v.tolist()
    return out


def _scaled(part, scales: dict):
    """``part`` (a frozen parameter dataclass) with the named fields multiplied."""
    return evolve(part, **{f: getattr(part, f) * s for f, s in scales.items()})


def vehicle(nominal: vm.VehicleParams, values: dict) -> vm.VehicleParams:
    """The nominal vehicle with the drawn ``values`` applied (sprung masses computed again for
    the drawn mass and centre of mass; not validated: see the module docstring)."""
    get = lambda key: values.get(key, NOMINAL[key])            # noqa: E731
    p = nominal
    mass_s, inertia_s = get("mass_scale"), get("inertia_scale")
    offset = np.array([get("com_offset_x"), get("com_offset_y"), get("com_offset_z")])
    ch = evolve(p.chassis, mass=p.chassis.mass * mass_s, com=p.chassis.com + offset,
                inertia=p.chassis.inertia * mass_s * inertia_s)
    sus = _scaled(p.suspension, {"spring_strength": get("spring_scale"),
                                 "damper_rate": get("damper_scale")})
    sus = evolve(sus, sprung_mass=compute_sprung_masses(sus.position, ch.com, ch.mass))
    k = get("tire_stiffness_scale")
    tires = _scaled(p.tires, {"lat_stiff_y": k, "long_stiff_per_unit_gravity": k,
                              "camber_stiff_per_unit_gravity": k, "arcade_long_stiffness": k,
                              "arcade_lat_stiffness": k})
    if k != 1.0:                                      # Magic Formula: B, the first coefficient
        b = np.array([k, 1.0, 1.0, 1.0])
        tires = evolve(tires, mf_long=tires.mf_long * b, mf_lat=tires.mf_lat * b)
    # The formula is a function of B x, so its peaks move to 1/k of the nominal slips: given
    # here, into the cache the property fills (functools.cached_property keeps its value in the
    # instance's __dict__), instead of solved again (0.6 ms of a 1.5 ms draw).
    long_peak, lat_peak = p.tires.mf_peak_slips
    tires.__dict__["mf_peak_slips"] = (long_peak / k, lat_peak / k)
    brake = get("brake_torque_scale")
    wheels = _scaled(p.wheels, {"max_brake_torque": brake, "max_handbrake_torque": brake})
    engine = _scaled(p.engine, {"peak_torque": get("engine_torque_scale")})
    out = evolve(p, chassis=ch, suspension=sus, tires=tires, wheels=wheels, engine=engine)
    for name in ("groups", "base_split"):     # drawn values leave the drivetrain's layout:
        out.__dict__[name] = getattr(p, name)  # its cached arrays are the nominal vehicle's
    return out


def friction(nominal: np.ndarray, values: dict) -> np.ndarray:
    """The friction table's values with the drawn scales applied (rows: surfaces)."""
    scale = values.get("friction_scale", 1.0)
    rows = np.asarray(values.get("surface_friction_scale", 1.0), float)
    return nominal * scale * (rows[:, None] if rows.ndim else rows)


def check_bounds(ranges: dict, nominal: vm.VehicleParams, dt: float, gravity: float) -> None:
    """ValueError if a draw of the spec could be an invalid vehicle or unstable at the physics
    step (the module docstring says what is checked and why it covers every draw)."""
    for end, pick in (("low", 0), ("high", 1)):
        values = {k: r[pick] for k, r in ranges.items()
                  if k not in FRICTION_KEYS | AGENT_KEYS}
        try:
            vehicle(nominal, values).validate(f"{nominal.name} (randomised)")
        except vm.VehicleConfigError as e:
            raise ValueError(f"randomize: every range at its {end} end gives an invalid "
                             f"vehicle: {e}") from None
    stiff = {}
    for key, (lo, hi) in ranges.items():
        if key in ("spring_scale", "damper_scale", "tire_stiffness_scale"):
            stiff[key] = hi
        elif key in ("mass_scale", "inertia_scale"):
            stiff[key] = lo
    offsets = [k for k in ("com_offset_x", "com_offset_y", "com_offset_z") if k in ranges]
    if not stiff and not offsets:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = set(vm.check_timestep(nominal, dt, gravity))
        for ends in itertools.product((0, 1), repeat=len(offsets)):
            corner = {**stiff, **{k: ranges[k][e] for k, e in zip(offsets, ends, strict=True)}}
            new = [w for w in vm.check_timestep(vehicle(nominal, corner), dt, gravity)
                   if w not in before]
            if new:
                raise ValueError(
                    f"randomize: the stiffest, lightest draw ("
                    f"{', '.join(f'{k} = {v:g}' for k, v in corner.items())}) is not stable at "
                    f"physics_dt = {dt:g} s: {new[0]} (narrow the ranges, or a smaller "
                    "physics_dt)")
