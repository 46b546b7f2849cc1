"""Clutch: couples the engine to the differential with torque ``strength * clutch_slip``.

``clutch_slip = omega_engine - G * sum(beta_i * omega_i)`` where ``G`` is gear x final ratio and
``beta_i`` are the differential's torque shares, which also weight the wheel spins in the
clutch's output speed (so the wheels take exactly the power the clutch passes, and the clutch
dissipates ``strength * clutch_slip^2``; see ``differential``). Accuracy modes as in PhysX:
``best_possible`` solves engine and wheel spins implicitly together (stable at any strength and
step); ``estimate`` runs ``estimate_iterations`` Gauss-Seidel sweeps of the same equations.
"""

from __future__ import annotations

from dataclasses import dataclass

from .params import param, validate_fields


@dataclass(frozen=True)
class ClutchParams:
    """Clutch data (scalars)."""

    strength: float = param(10.0, unit="N m s/rad", lo=0.0, hi=1e6, lo_open=True,
                            shape="scalar", doc="torque per rad/s of clutch slip", packed="clutch_strength")
    accuracy: str = param("best_possible", shape="choice", choices=("best_possible", "estimate"),
                          doc="implicit solve or iterative estimate")
    estimate_iterations: int = param(5, unit="-", lo=1, hi=100, shape="scalar", integer=True,
                                     doc="sweeps in estimate mode", packed="clutch_iterations")

    def validate(self, prefix: str = "clutch.", where: str = "") -> None:
        """Raise VehicleConfigError naming the first field out of range."""
        validate_fields(self, prefix, where)
