"""Draw a vehicle's tyre curves to PNG::

    python -m traction.train.plot_tires sedan_rwd --out runs/tires

For every distinct tyre on the vehicle (by axle or wheel) it writes ``<wheel>_<model>.png`` with
three panels: longitudinal force vs longitudinal slip and lateral force vs slip angle, each at
0.5, 1 and 1.5 times the rest load, and the friction circle (force pairs over a grid of combined
slips) at rest load. Forces are steady-state values from
``traction.vehicle_model.tire_models.sweep``. The slip axis is the model's (and telemetry's)
``long_slip``, PhysX's (omega r - v) / max(|v|, |omega r|), so telemetry overlays it directly.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from traction.train.checks import MissingExtra, require, writable_dir
from traction.vehicle_model import TIRE_MODELS, load_vehicle
from traction.vehicle_model.tire_models import sweep

LOAD_FACTORS = (0.5, 1.0, 1.5)
#: longitudinal slips plotted (1 = a wheel spinning on the spot is out of reach: omega r = inf)
LONG_SLIPS = np.linspace(-1.0, 0.99, 399)


def slip_ratio(long_slip: np.ndarray) -> np.ndarray:
    """The ``sweep``'s slip ratio (omega r - v) / v for the model's ``long_slip``
    (omega r - v) / max(|v|, |omega r|) of a wheel rolling forward: driving (> 0) divides by
    omega r, braking by v."""
    s = np.asarray(long_slip, dtype=float)
    return np.where(s > 0, s / (1.0 - np.minimum(s, 0.999)), s)


def distinct_tyres(p) -> list[int]:
    """One wheel index per distinct tyre curve (e.g. front and rear axle): the tyre's parameters
    and its wheel's sprung mass (the rest load, which sets the plotted loads and scales the
    PhysX tyre's lateral stiffness)."""
    seen, out = [], []
    for i in range(p.n_wheels):
        key = tuple(np.asarray(getattr(p.tires, f)[i]).tobytes()
                    for f in p.tires.__dataclass_fields__) + (float(p.suspension.sprung_mass[i]),)
        if key not in seen:
            seen.append(key)
            out.append(i)
    return out


def plot_wheel(p, wheel: int, path: Path) -> Path:
    """Write the three-panel figure for one wheel's tyre."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rest = float(p.suspension.sprung_mass[wheel] * 9.81)
    model = TIRE_MODELS[int(p.tires.model[wheel])]
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.5))
    sr = slip_ratio(LONG_SLIPS)
    alpha = np.radians(np.linspace(-30, 30, 401))
    for k in LOAD_FACTORS:
        f_long, _ = sweep(p, wheel, sr, np.zeros_like(sr), k * rest)
        _, f_lat = sweep(p, wheel, np.zeros_like(alpha), alpha, k * rest)
        ax[0].plot(LONG_SLIPS, f_long, label=f"{k:g} x rest load ({k * rest:.0f} N)")
        ax[1].plot(np.degrees(alpha), f_lat, label=f"{k:g} x rest load")
    grid_sr, grid_a = np.meshgrid(slip_ratio(np.linspace(-1, 0.95, 40)),
                                  np.radians(np.linspace(-25, 25, 41)))
    f_long, f_lat = sweep(p, wheel, grid_sr, grid_a, rest)
    ax[2].scatter(f_lat.ravel(), f_long.ravel(), s=3, c=np.abs(grid_a).ravel(), cmap="viridis")
    circle = np.linspace(0, 2 * np.pi, 200)
    ax[2].plot(rest * np.cos(circle), rest * np.sin(circle), "k--", lw=0.8,
               label="friction x load (mu = 1)")
    ax[0].set(xlabel="longitudinal slip, (omega r - v) / max(|v|, |omega r|) (-)",
              ylabel="longitudinal force (N)", title="pure longitudinal")
    ax[1].set(xlabel="slip angle (deg)", ylabel="lateral force (N)", title="pure lateral")
    ax[2].set(xlabel="lateral force (N)", ylabel="longitudinal force (N)", aspect="equal",
              title="friction circle, rest load (colour: |slip angle|)")
    for a in ax:
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    fig.suptitle(f"{p.name}: wheel {p.wheel_names[wheel]}, tyre model '{model}'")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv=None) -> list[Path]:
    ap = argparse.ArgumentParser(description="Draw a vehicle's tyre curves to PNG.")
    ap.add_argument("vehicle", help="preset name or path to a vehicle TOML file")
    ap.add_argument("--out", type=Path, default=Path("runs/tires"), help="output folder")
    args = ap.parse_args(argv)
    try:                                               # VehicleConfigError: file, field, range
        require("plot_tires", "matplotlib")
        p = load_vehicle(args.vehicle)
        writable_dir(args.out)
    except (MissingExtra, ValueError, OSError) as e:
        ap.error(str(e))
    paths = []
    for wheel in distinct_tyres(p):
        model = TIRE_MODELS[int(p.tires.model[wheel])]
        paths.append(plot_wheel(p, wheel, args.out / f"{p.wheel_names[wheel]}_{model}.png"))
    for path in paths:
        print(path)
    return paths


if __name__ == "__main__":
    main()
