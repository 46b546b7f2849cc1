"""Drivable surfaces and the tyre/surface friction table.

Like ``PxVehicleDrivableSurfaceToTireFrictionPairs``: every ground geom carries a surface type,
every tyre a tyre type, and the friction for a wheel is ``table[surface, tyre]``. The table is a
plain array and may be edited between updates; an unknown surface index falls back to type 0.
"""

from __future__ import annotations

import numpy as np

from .errors import VehicleConfigError

#: Default tyre types (columns of the table).
DEFAULT_TIRES = ("road", "offroad", "track")
#: Default surfaces: (name, friction for road, offroad and track tyres).
DEFAULT_SURFACES = (
    ("tarmac", (1.0, 0.9, 0.9)),
    ("wet_tarmac", (0.7, 0.65, 0.7)),
    ("gravel", (0.6, 0.75, 0.85)),
    ("grass", (0.5, 0.65, 0.8)),
    ("mud", (0.35, 0.55, 0.7)),
    ("rock", (0.9, 0.9, 0.9)),
    ("ice", (0.05, 0.07, 0.15)),
)


class FrictionTable:
    """Friction per (surface type, tyre type).

    Attributes:
        surfaces: surface names; the index is the surface type.
        tires: tyre names; the index is the tyre type.
        values: friction coefficients ``(n_surfaces, n_tires)`` (-), editable between steps:
            in place (``values[...] = ...``, :meth:`set`) or by assigning an array of that
            shape, which is checked and copied into the table's own array (the array itself is
            never replaced: a simulator reads it where it is).
    """

    def __init__(self, surfaces: list[str], tires: list[str], values):
        if not len(surfaces) or not len(tires):
            raise VehicleConfigError(f"friction table: {len(surfaces)} surfaces and {len(tires)} "
                                     "tyre types; allowed: at least one of each")
        self.surfaces = list(surfaces)
        self.tires = list(tires)
        self.values = values

    def __copy__(self) -> FrictionTable:
        """A copy with its own values (a simulator reads a table's array where it is)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._values = self._values.copy()
        return new

    @property
    def values(self) -> np.ndarray:
        """Friction ``(n_surfaces, n_tires)`` (-), float64, the table's own array."""
        return self._values

    @values.setter
    def values(self, values) -> None:
        checked = self._checked(values)
        if "_values" in vars(self):
            self._values[...] = checked                 # in place: readers hold this array
        else:
            self._values = np.array(checked, dtype=np.float64, order="C")

    def checked_values(self) -> np.ndarray:
        """:attr:`values`, checked: one finite friction >= 0 per surface and tyre type (also
        after an edit in place)."""
        return self._checked(self._values)

    def _checked(self, values) -> np.ndarray:
        """``values`` as a float array of this table's shape with finite entries >= 0, else
        VehicleConfigError naming the expected shape."""
        want = (len(self.surfaces), len(self.tires))
        try:
            values = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            raise VehicleConfigError("friction table: values must be numbers, one row per "
                                     f"surface and one column per tyre type, shape {want}") from None
        if values.shape != want:
            raise VehicleConfigError(f"friction table: values have shape {values.shape}; expected "
                                     f"{want} ({want[0]} surfaces x {want[1]} tyre types)")
        if not np.all(np.isfinite(values)) or np.any(values < 0):
            raise VehicleConfigError("friction table: values must be finite and >= 0")
        return values

    @classmethod
    def default(cls) -> FrictionTable:
        """The shipped table: tarmac, wet tarmac, gravel, grass, mud, rock, ice x road, offroad
        and track tyres."""
        names = [n for n, _ in DEFAULT_SURFACES]
        return cls(names, list(DEFAULT_TIRES), [list(f) for _, f in DEFAULT_SURFACES])

    def surface_index(self, name: str) -> int:
        """Surface type of a name (raises VehicleConfigError listing the known names)."""
        try:
            return self.surfaces.index(name)
        except ValueError:
            raise VehicleConfigError(
                f"unknown surface {name!r}; known surfaces: {', '.join(self.surfaces)}") from None

    def set(self, surface: str, friction: float, tire: int | str = 0) -> None:
        """Change one entry (takes effect at the next vehicle update); ``tire`` is a tyre type
        index or name."""
        if not np.isfinite(friction) or friction < 0:
            raise VehicleConfigError(f"friction for {surface!r} = {friction}; allowed [0, inf)")
        self.values[self.surface_index(surface), self.tire_index(tire)] = friction

    def tire_index(self, tire: int | str) -> int:
        """Tyre type of a name or index (raises VehicleConfigError listing the tyre types)."""
        if isinstance(tire, str) and tire in self.tires:
            return self.tires.index(tire)
        if (not isinstance(tire, (str, bool)) and isinstance(tire, (int, np.integer))
                and 0 <= tire < len(self.tires)):
            return int(tire)
        known = ", ".join(f"{i} = {n}" for i, n in enumerate(self.tires))
        raise VehicleConfigError(f"friction table: tire = {tire!r} is not a tyre type; known: {known}")

    def check_tire_types(self, tire_type, where: str = "") -> None:
        """Raise VehicleConfigError unless every wheel's tyre type (``TireParams.tire_type``,
        one per wheel) is a column of this table; the compiled update would otherwise read the
        last column for it, without a word."""
        pre = f"{where}: " if where else ""
        types = np.asarray(tire_type)
        for i in np.flatnonzero((types < 0) | (types >= len(self.tires))):
            known = ", ".join(f"{j} = {n}" for j, n in enumerate(self.tires))
            raise VehicleConfigError(
                f"{pre}tire.tire_type[{i}] = {types[i]:g} is not a tyre type of the friction "
                f"table; allowed 0..{len(self.tires) - 1} ({known}): give a table with a column "
                "for it or use one of these")

    def same_surfaces(self, table: FrictionTable | None) -> FrictionTable:
        """``table`` if it lists this table's surfaces in the same order (the surface numbers
        resolved in this one index it alike), this table if None; else ValueError (not a
        table) or VehicleConfigError (other surfaces) naming ``friction_table``."""
        if checked_table(table) is None:
            return self
        if table.surfaces != self.surfaces:
            raise VehicleConfigError(
                f"friction_table: surfaces {table.surfaces} differ from the scene's "
                f"{self.surfaces} (the surface numbers were resolved there); pass the same "
                "table to build_scene")
        return table

    def lookup(self, surface: np.ndarray, tire: np.ndarray) -> np.ndarray:
        """Friction for arrays of surface and tyre types (unknown surfaces use type 0)."""
        surface = np.asarray(surface)
        known = (surface >= 0) & (surface < len(self.surfaces))
        s = np.where(known, surface, 0)
        t = np.clip(np.asarray(tire, dtype=int), 0, len(self.tires) - 1)
        return self.values[s, t]


def checked_table(table: FrictionTable | None) -> FrictionTable | None:
    """``table`` if it is a :class:`FrictionTable` or None, else ValueError naming
    ``friction_table``."""
    if table is not None and not isinstance(table, FrictionTable):
        raise ValueError(f"friction_table = {table!r}; allowed: a FrictionTable or None")
    return table
