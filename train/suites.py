"""Scenario suites: named, versioned lists of fixed episodes per task variant.

A *variant* is a task with its environment arguments (``climb_crest_equal``: Climb6x6 on the
crest course with the equal split). A *scenario* is one episode's start: the reset seed and
reset options that fix everything the episode draws (terrain seed, spawn pose, target heading,
start speed). Scenario ``k`` of a variant is a pure function of ``k`` (integer seeds, and
poses from a low-discrepancy sequence rounded to a few decimals: plain float arithmetic, no
random generator), so a suite gives bit-identical scenarios on every machine and in every
process, and its episodes spread evenly over the ranges the environment itself would draw from.

Suites:

- ``standard``: 20 episodes of every variant (the published report; intervals narrow enough to
  tell a controller that fails one episode in five from one that never fails);
- ``quick``: the first 8 of the same scenarios (CI: its results pair episode by episode with a
  ``standard`` baseline's).

``--episodes N`` takes the first ``N`` scenarios of each variant (more than the suite has: the
same sequence continued). Changing a variant's arguments or its scenarios changes the suite:
bump :data:`VERSION` (reports carry it, and a comparison pairs only scenarios that are equal).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from traction.envs import ENV_IDS

#: version of the variants and scenarios below (in every report)
VERSION = 1

#: reset seed and terrain seed of scenario k: FIRST_SEED + k
FIRST_SEED = 1000


def env_id(task: str) -> str:
    """The registered id of ``task`` (``"Climb6x6"`` -> ``"Traction/Climb6x6-v1"``), read from
    :data:`traction.envs.ENV_IDS`, so the suites follow a version bump of the ids."""
    ids = [i for i in ENV_IDS if i.startswith(f"Traction/{task}-")]
    if len(ids) != 1:
        raise ValueError(f"task {task!r}: {len(ids)} registered ids {ids}; expected one")
    return ids[0]


# Additive recurrence ("R-sequence", Roberts 2018): point k has coordinates frac((k + 1) a_j),
# with a_j = 1/g^j and g the generalised golden ratio of the dimension; consecutive points fill
# [0, 1)^d evenly, and the first N are spread for any N (no stratification to redo). (k + 1,
# not k: point 0 would be the corner of the ranges, and a 0.5 offset their centre, a target
# heading equal to the start heading.)
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0                  # 1 / 1.618..., for one dimension
_PLASTIC = 1.324717957244746                            # g of two dimensions


def _r1(k: int) -> float:
    return ((k + 1) * _GOLDEN) % 1.0


def _r2(k: int) -> tuple[float, float]:
    return ((k + 1) / _PLASTIC) % 1.0, ((k + 1) / _PLASTIC**2) % 1.0


def _between(u: float, lo: float, hi: float, digits: int) -> float:
    return round(lo + (hi - lo) * u, digits)


#: rough_hill: the truck starts 8 m from the hill's near edge (x = -50 m), as the env places it
CLIMB_START_X = -42.0
#: crest: the chassis over the first ditch (the env's fixed start: the wheel-set centre at x = 0)
CREST_START_X = -0.048


def _climb(k: int) -> tuple[int, dict]:
    """rough_hill: a terrain per scenario; lateral offset +-3 m and yaw +-15 deg, the env's own
    ranges."""
    u, v = _r2(k)
    return FIRST_SEED + k, {"terrain_seed": FIRST_SEED + k, "spawn": [
        CLIMB_START_X, _between(u, -3.0, 3.0, 3), _between(v, -math.radians(15), math.radians(15), 4)]}


def _crest(k: int) -> tuple[int, dict]:
    """crest (one fixed course): the start over the first ditch, offset +-2 m sideways and
    turned +-6 deg."""
    u, v = _r2(k)
    return FIRST_SEED + k, {"spawn": [
        CREST_START_X, _between(u, -2.0, 2.0, 3), _between(v, -math.radians(6), math.radians(6), 4)]}


def _drift(k: int) -> tuple[int, dict]:
    """Drift: start speed 8-10 m/s (the env's range); the seed draws the +-0.05 rad heading
    noise."""
    return FIRST_SEED + k, {"speed": _between(_r1(k), 8.0, 10.0, 3)}


def _tank(k: int) -> tuple[int, dict]:
    """TankTurn: an arena per scenario, start heading and target offset over +-180 deg."""
    u, v = _r2(k)
    return FIRST_SEED + k, {"terrain_seed": FIRST_SEED + k,
                            "yaw": _between(u, -math.pi, math.pi, 4),
                            "target_offset": _between(v, -math.pi, math.pi, 4)}


@dataclass(frozen=True)
class Scenario:
    """One episode's start: ``env.reset(seed=seed, options=options)``."""

    id: str                          # "<variant>/<k, 3 digits>"
    seed: int
    options: dict

    def as_dict(self) -> dict:
        return {"id": self.id, "seed": self.seed, "options": self.options}


@dataclass(frozen=True)
class Variant:
    """A task with its environment arguments and its scenario sequence."""

    name: str
    task: str                                     # "Climb6x6", "Drift", "TankTurn"
    kwargs: dict
    description: str
    scenario: Callable[[int], tuple[int, dict]] = field(repr=False)
    #: why every controller is expected to fail it (None: a controller can succeed)
    expected_to_fail: str | None = None

    @property
    def env_id(self) -> str:
        return env_id(self.task)

    def scenarios(self, n: int) -> list[Scenario]:
        """The first ``n`` scenarios."""
        return [Scenario(f"{self.name}/{k:03d}", *self.scenario(k)) for k in range(n)]


VARIANTS = (
    Variant("climb_rough_hill", "Climb6x6", {},
            "6x6 truck up a procedural rough hill (difficulty 0.5) to the summit", _climb),
    Variant("climb_rough_hill_hard", "Climb6x6", {"difficulty": 0.7},
            "the same hills at difficulty 0.7: steeper, rougher, deeper ditches", _climb),
    Variant("climb_crest_torque_vectoring", "Climb6x6",
            {"terrain": "crest", "differential": "torque_vectoring", "max_episode_steps": 500},
            "crest course (the middle axle hangs over each ditch), torque-vectoring "
            "differential; 20 s (the course takes ~10 s)", _crest),
    Variant("climb_crest_equal", "Climb6x6",
            {"terrain": "crest", "differential": "equal", "max_episode_steps": 500},
            "the crest course with the engine torque split equally over the six wheels; 20 s",
            _crest,
            expected_to_fail=(
                "the equal split strands the truck over the first ditch, as in the 6x6 post "
                "this task reproduces: the truck rests on its front and rear axles, the hanging "
                "middle wheels take their equal share of the torque and spin up, and the "
                "loaded wheels get too little to climb out. Drive and steer cannot change the "
                "split; climb_crest_torque_vectoring is the same course with the fix")),
    Variant("drift", "Drift", {}, "RWD sedan holding a 30 deg drift on the 20 m skidpad "
            "circle (a wet quarter)", _drift),
    Variant("tank_turn_special", "TankTurn", {"drive_mode": "special"},
            "tank pivoting to a target heading, tracks driven in opposite directions", _tank),
    Variant("tank_turn_standard", "TankTurn", {"drive_mode": "standard"},
            "the same turns, a negative command brakes a track instead of reversing it", _tank),
)


@dataclass(frozen=True)
class Suite:
    """A named, versioned list of scenarios: the first ``episodes`` of every variant."""

    name: str
    episodes: int
    description: str
    variants: tuple[Variant, ...] = VARIANTS
    version: int = VERSION

    def variant(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        raise ValueError(f"variant {name!r}; allowed: {', '.join(v.name for v in self.variants)}")


SUITES = {
    "standard": Suite("standard", 20, "20 episodes of every variant (the published report)"),
    "quick": Suite("quick", 8, "the first 8 episodes of every variant (CI)"),
}


def get_suite(name: str) -> Suite:
    """The suite called ``name``; ValueError listing the suites otherwise."""
    if name not in SUITES:
        raise ValueError(f"suite {name!r}; allowed: {', '.join(SUITES)}")
    return SUITES[name]


def select(suite: Suite, tasks: list[str] | None) -> list[Variant]:
    """The variants ``tasks`` names, in the suite's order: variant names, task names
    (``TankTurn``: all its variants) or env ids; all of them for None.

    Raises:
        ValueError: a name that is none of those, listing what is allowed.
    """
    if not tasks:
        return list(suite.variants)
    chosen = set()
    for name in tasks:
        hits = {v.name for v in suite.variants
                if name in (v.name, v.task, v.env_id, v.env_id.removeprefix("Traction/"))}
        if not hits:
            raise ValueError(
                f"--tasks {name!r}: not a variant, task or environment id of suite {suite.name}; "
                f"allowed: {', '.join(v.name for v in suite.variants)}; tasks "
                f"{', '.join(dict.fromkeys(v.task for v in suite.variants))}; or their ids")
        chosen |= hits
    return [v for v in suite.variants if v.name in chosen]
