"""Constructor arguments of a task environment: checked when given, settable between steps
(a property checking each value), or fixed when the environment is built (a property whose
setter raises, saying how to get another value)."""

from __future__ import annotations

import inspect
import operator

import gymnasium as gym

from traction.vehicle_model.params import check_number


def positive(name: str, value, unit: str = "") -> float:
    """A constructor argument that must be a finite number > 0 (ValueError naming it)."""
    return check_number(name, value, 0.0, lo_open=True, unit=unit)


def positive_setting(name: str, unit: str = "") -> property:
    """A constructor argument the task reads at every step (as ``_<name>``), so settable between
    steps (``set_attr``): checked as :func:`positive` when set."""
    def put(self, value) -> None:
        self.__dict__["_" + name] = positive(name, value, unit)

    return property(operator.attrgetter("_" + name), put,
                    doc=f"{name} ({unit or '-'}, > 0): settable between steps")


def finite_weights(weights: dict) -> dict:
    """Reward weights keyed by term, checked finite (ValueError naming the term)."""
    return {k: check_number(f"weight of reward term {k!r}", v) for k, v in weights.items()}


def weight_property(argument: str, term: str) -> property:
    """``weights[term]`` as an attribute named after its constructor ``argument`` (checked)."""
    def get(self) -> float:
        return self.weights[term]

    def put(self, value: float) -> None:
        self.weights[term] = check_number(argument, value)

    return property(get, put, doc=f"weight of reward term {term!r} (settable: set_attr)")


#: constructor arguments of rendering (the renderer is made at the first frame)
RENDER_ARGUMENTS = ("render_mode", "width", "height")


def fixed_property(name: str, get=None) -> property:
    """A constructor argument that shaped the environment when it was built (its scene, vehicle,
    spaces or time steps): set once by the constructor, held as ``_<name>`` (what the task's
    per-step code reads: a property read costs 3-5 times an attribute's) unless ``get`` reads
    it; setting it again raises AttributeError saying how to get another value (a ``set_attr``
    of it did nothing)."""
    private = "_" + name

    def put(self, value) -> None:
        if get is not None or private in self.__dict__:
            raise AttributeError(fixed_message(self, name))
        self.__dict__[private] = value

    return property(get or operator.attrgetter(private), put,
                    doc=f"constructor argument {name!r}, fixed when the environment is built")


#: fixed values derived from constructor arguments: name -> how
DERIVED = {"n_substeps": "control_dt / physics_dt"}


def fixed_message(env, name: str) -> str:
    """Why ``name`` cannot be set on ``env``, and what can."""
    cls = type(env)
    arguments = inspect.signature(cls.__init__).parameters
    settable = sorted(k for k in dir(cls) if k not in dir(gym.Env) and k not in cls.fixed_names()
                      and isinstance(getattr(cls, k), property) and getattr(cls, k).fset)
    settable += [k for k in arguments if k in vars(env) and k not in RENDER_ARGUMENTS]
    env_id = env.spec.id if env.spec is not None else cls.__name__
    given = f"{name}=..." if name not in DERIVED else f"other arguments ({DERIVED[name]})"
    return (f"{name} is fixed when the environment is built (it shaped the scene, the vehicle, "
            f"the spaces or the time steps); build another: gym.make({env_id!r}, {given}). "
            f"Settable between steps: {', '.join(settable)}")


_UNSET = object()


def set_each(objects, name: str, values) -> None:
    """``setattr(objects[i], name, values[i])`` for each, all or none: when one raises (a
    setting checks its value), the ones set before get their old values back (or lose the
    attribute they did not have) and the error is raised."""
    before = []
    try:
        for obj, value in zip(objects, values, strict=True):
            before.append(getattr(obj, name, _UNSET))
            setattr(obj, name, value)
    except Exception:
        for obj, old in zip(objects, before[:-1], strict=False):
            if old is _UNSET:
                delattr(obj, name)
            else:
                setattr(obj, name, old)
        raise
