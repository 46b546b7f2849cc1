"""Errors raised by the vehicle model."""


class VehicleConfigError(ValueError):
    """A vehicle definition is invalid.

    The message names the file (when there is one), the field, the offending value and the
    allowed range, e.g. ``sedan.toml: wheels[2].suspension.spring_strength = -5.0, allowed (0, inf)``.
    """
