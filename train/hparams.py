"""Hyperparameters of the training CLI: the YAML files, ``--hp`` values, and their checks.

``train/hyperparams/<algo>.yml`` holds a ``default`` entry and per-id entries; ``--hp NAME=VALUE``
overrides them. Values are read as YAML reads them, except that numbers such as ``1e-4`` are
numbers (YAML 1.1 reads them as text); Python literals and ``dict(...)`` text for
``policy_kwargs`` work too. Everything is checked before SB3 sees it: an out-of-range value
crashed SB3 after the run folder was written, or trained on nonsense without a word.
"""

from __future__ import annotations

import inspect
import math
import re
from importlib import resources

import yaml

from traction.scenes.export import parse_assignment
from traction.train.checks import int_at_least
from traction.vehicle_model.params import check_number


class _Loader(yaml.SafeLoader):
    """YAML's safe loader reading ``1e-4`` (no dot, as YAML 1.2 and Python allow) as a number."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[0-9][0-9_]*[eE][-+]?[0-9]+"
               r"|\.[0-9_]+(?:[eE][-+]?[0-9]+)?|\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+0123456789."))


def read_yaml(text: str):
    """``text`` read as the hyperparameter files and ``--hp`` values are (see the module)."""
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass


ALGOS = ("ppo", "sac")
#: Run settings in the hyperparameter files (not algorithm arguments) -> smallest allowed value;
#: ``normalize`` is a bool, ``curriculum`` null or ``NAME=START:END`` (the environment argument
#: ramped over training, :mod:`traction.train.curriculum`; ``--curriculum`` replaces it).
RUN_MINIMUM = {"n_envs": 1, "sim_threads": 1, "eval_freq": 1, "eval_episodes": 1,
               "checkpoint_freq": 1}
RUN_KEYS = {*RUN_MINIMUM, "normalize", "curriculum"}
#: Numeric algorithm arguments -> (lowest, highest or None, kind: True an integer, False a real
#: number, OPEN a real number above the lowest), checked before SB3 sees them: out of range, SB3
#: crashes after the first rollout (``n_epochs = 0``: no update ran) or trains on nonsense
#: without a word (``gamma = 2``). None passes where SB3's default is None; other keys go to
#: SB3 unchecked (text where SB3's default is a number is refused).
OPEN = "open"
ALGO_RANGES = {
    "ppo": {"n_steps": (1, None, True), "batch_size": (1, None, True), "n_epochs": (1, None, True),
            "gamma": (0, 1, False), "gae_lambda": (0, 1, False), "ent_coef": (0, None, False),
            "vf_coef": (0, None, False), "clip_range": (0, None, OPEN),
            "clip_range_vf": (0, None, OPEN), "target_kl": (0, None, OPEN),
            "max_grad_norm": (0, None, OPEN)},
    "sac": {"buffer_size": (1, None, True), "batch_size": (1, None, True),
            "learning_starts": (0, None, True), "gamma": (0, 1, False), "tau": (0, 1, False),
            "target_update_interval": (1, None, True)},
}
#: Algorithm constructor arguments that take a Python object, which neither a YAML file nor
#: ``--hp`` can give (None, their default, passes).
OBJECT_ARGS = {"action_noise": "an ActionNoise", "replay_buffer_class": "a ReplayBuffer class",
               "rollout_buffer_class": "a RolloutBuffer class"}
#: Algorithm constructor arguments that training sets itself.
SET_BY_TRAIN = {"self", "env", "seed", "verbose", "tensorboard_log", "_init_setup_model"}


def hyperparameters(algo: str, env_id: str, overrides: dict,
                    obs_mode: str | None = None) -> dict:
    """Resolved hyperparameters: YAML ``default``, then ``env_id``'s entry, then, for an
    ``obs_mode`` other than ``"state"``, the entry ``obs_mode=<mode>`` (the policy that reads
    images or dicts, its sizes) and ``<env_id> obs_mode=<mode>``, then overrides."""
    text = (resources.files("traction.train") / "hyperparams" / f"{algo}.yml").read_text()
    table = read_yaml(text)
    mode = {} if obs_mode in (None, "state") else {
        **table.get(f"obs_mode={obs_mode}", {}), **table.get(f"{env_id} obs_mode={obs_mode}", {})}
    hp = {**table.get("default", {}), **table.get(env_id, {}), **mode, **overrides}
    return hp


def assignment(text: str) -> tuple[str, object]:
    """argparse type of ``--hp`` and ``--env-kwarg``: ``NAME=VALUE`` read as
    :func:`~traction.scenes.export.parse_assignment` reads it (numbers such as ``1e-4``, which
    YAML 1.1 reads as text, Python literals, YAML's true/false/null), and a YAML flow list or
    mapping (``[1, episode]``, ``{net_arch: [64, 64]}``) as :func:`read_yaml` reads it."""
    key, value = parse_assignment(text)
    if isinstance(value, str) and value[:1] in "[{":
        try:
            value = read_yaml(value)
        except yaml.YAMLError:
            pass
    return key, value


def split_hyperparameters(algo: str, hp: dict) -> tuple[dict, dict]:
    """Check resolved hyperparameters and split them into run settings and the algorithm's
    constructor arguments (``policy_kwargs`` text evaluated).

    Raises:
        ValueError: an unknown key (with the allowed ones), a run setting or algorithm argument
            out of range, or text where the algorithm wants a number.
    """
    import stable_baselines3 as sb3

    params = inspect.signature(getattr(sb3, algo.upper()).__init__).parameters
    allowed = sorted(({*params} - SET_BY_TRAIN) | RUN_KEYS)
    for key in hp:
        if key not in allowed:
            raise ValueError(f"--hp {key}: not a {algo.upper()} hyperparameter; allowed: "
                             f"{', '.join(allowed)}")
    run = {k: hp[k] for k in hp if k in RUN_KEYS}
    algo_hp = {k: v for k, v in hp.items() if k not in RUN_KEYS}
    for key, lo in RUN_MINIMUM.items():
        int_at_least(f"--hp {key}", run.setdefault(key, 1 if key == "sim_threads" else None), lo)
    if not isinstance(run.get("normalize"), bool):
        raise ValueError(f"--hp normalize = {run.get('normalize')!r}; allowed: true, false")
    if run.setdefault("curriculum", None) is not None:
        from traction.train import curriculum

        if not isinstance(run["curriculum"], str):
            raise ValueError(f"--hp curriculum = {run['curriculum']!r}; allowed: null or "
                             "NAME=START:END")
        curriculum.parse(run["curriculum"])
    for key, what in OBJECT_ARGS.items():
        if algo_hp.get(key) is not None:
            raise ValueError(f"--hp {key} = {algo_hp[key]!r}: takes {what} object, which a "
                             "hyperparameter file or --hp cannot give; allowed: null (set it in "
                             "code on the model prepare() returns)")
    _check_algo_values(algo, params, algo_hp, run["n_envs"])
    if isinstance(algo_hp.get("train_freq"), list):     # YAML's [n, unit]; SB3 wants a tuple
        algo_hp["train_freq"] = tuple(algo_hp["train_freq"])
    if algo_hp.get("policy_kwargs") is not None:
        algo_hp["policy_kwargs"] = policy_kwargs(algo_hp["policy_kwargs"])
    return run, algo_hp


def _python(text: str, what: str):
    """``text`` evaluated with ``dict``, ``nn`` (torch.nn) and ``torch`` in scope."""
    import torch

    try:
        return eval(text, {"dict": dict, "nn": torch.nn, "torch": torch})  # noqa: S307
    except Exception as e:  # noqa: BLE001 - any bad expression
        raise ValueError(f"--hp {what} = {text!r}: {e}; allowed: a dict, e.g. "
                         "dict(net_arch=[64, 64], activation_fn=nn.Tanh)") from None


def policy_kwargs(value) -> dict:
    """``policy_kwargs`` as SB3 takes it, from a dict (a YAML mapping: text values of ``*_fn``
    and ``*_class`` keys, such as ``nn.Tanh``, are evaluated) or ``dict(...)`` text.

    Raises:
        ValueError: not a dict, or text that does not evaluate, naming ``policy_kwargs``.
    """
    if isinstance(value, str):
        value = _python(value, "policy_kwargs")
    if not isinstance(value, dict):
        raise ValueError(f"--hp policy_kwargs = {value!r}; allowed: a dict, e.g. "
                         "dict(net_arch=[64, 64]) or {net_arch: [64, 64]}")
    return {k: _python(v, f"policy_kwargs {k}") if isinstance(v, str) and
            k.endswith(("_fn", "_class")) else v for k, v in value.items()}


def _check_algo_values(algo: str, params, algo_hp: dict, n_envs: int) -> None:
    """ValueError unless the algorithm's numeric arguments are numbers in their ranges."""
    for key, (lo, hi, kind) in ALGO_RANGES[algo].items():
        if key in algo_hp and not (algo_hp[key] is None and params[key].default is None):
            check_number(f"--hp {key}", algo_hp[key], lo, math.inf if hi is None else hi,
                         integer=kind is True, lo_open=kind == OPEN)
    if algo == "sac":
        _check_sac_values(algo_hp, n_envs)
    for key, value in algo_hp.items():                 # a number's default wants a number
        default = params[key].default if key in params else None
        if isinstance(default, int | float) and not isinstance(default, bool) \
                and isinstance(value, str) and key != "policy_kwargs":
            raise ValueError(f"--hp {key} = {value!r}; allowed: a number (default {default!r})")
    if isinstance(algo_hp.get("learning_rate"), int | float):     # (a schedule is a callable)
        check_number("--hp learning_rate", algo_hp["learning_rate"], 0, lo_open=True)
    if "device" in algo_hp:
        import torch

        try:
            if algo_hp["device"] != "auto":
                torch.device(algo_hp["device"])
        except (RuntimeError, TypeError):
            raise ValueError(f"--hp device = {algo_hp['device']!r}; allowed: auto, cpu, cuda, "
                             "cuda:N") from None


def _check_sac_values(hp: dict, n_envs: int) -> None:
    """SAC's arguments of more than one form: ``train_freq`` (steps, or ``[n, "step"|"episode"]``;
    episodes only with one env, as SB3 asserts), ``gradient_steps`` (>= 1, or -1: as many as
    steps collected), ``ent_coef`` (a number >= 0, or ``"auto"``/``"auto_<start>"`` to learn
    it)."""
    freq = hp.get("train_freq", 1)
    n, unit = (freq, "step") if not isinstance(freq, list | tuple) else (list(freq) + [None])[:2]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1 or unit not in ("step", "episode") \
            or isinstance(freq, list | tuple) and len(freq) != 2:
        raise ValueError(f"--hp train_freq = {freq!r}; allowed: an integer >= 1 or [n, step] / "
                         "[n, episode]")
    if unit == "episode" and n_envs != 1:
        raise ValueError(f"--hp train_freq = {freq!r} with n_envs = {n_envs}: SB3 trains per "
                         "episode with one env only; allowed: n_envs=1, or [n, step]")
    steps = hp.get("gradient_steps", 1)
    if isinstance(steps, bool) or not isinstance(steps, int) or not (steps >= 1 or steps == -1):
        raise ValueError(f"--hp gradient_steps = {steps!r}; allowed: an integer >= 1, or -1")
    coef = hp.get("ent_coef", "auto")
    if not (isinstance(coef, str) and coef.startswith("auto")):
        check_number("--hp ent_coef", coef, 0.0, unit="(or auto, auto_<start>)")


