"""Drive a vehicle yourself in MuJoCo's viewer (needs a display)::

    python -m traction.envs.drive Traction/Drift-v1          # an environment's vehicle and scene
    python -m traction.envs.drive --vehicle sedan_rwd --terrain skidpad

Keys: Up throttle, Down brake (reverse gear once stopped), Left/Right steer, Space handbrake,
Q / E gear down / up, Backspace reset. Tanks: Up/Down drive both tracks, Left/Right counter-rotate
them. The viewer only reports key presses (and auto-repeats while a key is held), so a key counts
as held for :data:`HOLD` seconds after its last press; inputs are smoothed with PhysX's keyboard
rise/fall rates. :class:`KeyboardDriver` holds that logic and is tested without a display.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from traction.vehicle_model import controls

KEY_UP, KEY_DOWN, KEY_LEFT, KEY_RIGHT = 265, 264, 263, 262   # GLFW key codes
KEY_SPACE, KEY_Q, KEY_E, KEY_BACKSPACE = 32, 81, 69, 259
HOLD = 0.3  # s a key counts as held after its last press/repeat


class KeyboardDriver:
    """Turns viewer key presses into :class:`~traction.vehicle_model.Commands` fields."""

    def __init__(self, tank: bool = False):
        self.tank = tank
        self.pressed: dict[int, float] = {}
        self.smoothed = np.zeros((1, 4))           # throttle, brake, handbrake, steer
        self.gear_request = 0                       # -1 down, +1 up, 0 none
        self.reset_requested = False
        self.smoothing = controls.SmoothingParams.keyboard()

    def press(self, keycode: int, t: float) -> None:
        """Record a key press (or auto-repeat) at time ``t`` (s)."""
        if keycode in (KEY_Q, KEY_E):
            self.gear_request = -1 if keycode == KEY_Q else 1
        elif keycode == KEY_BACKSPACE:
            self.reset_requested = True
        else:
            self.pressed[keycode] = t

    def held(self, keycode: int, t: float) -> bool:
        return t - self.pressed.get(keycode, -np.inf) < HOLD

    def commands(self, t: float, forward_speed: float, gear: int, dt: float) -> dict:
        """Command fields for ``VehicleSim.set_commands`` at time ``t``."""
        up, down = self.held(KEY_UP, t), self.held(KEY_DOWN, t)
        steer = float(self.held(KEY_LEFT, t)) - float(self.held(KEY_RIGHT, t))
        out: dict = {}
        reverse = gear < 0
        if self.tank:
            drive = float(up) - float(down)
            out["thrust"] = [[np.clip(drive - steer, -1, 1), np.clip(drive + steer, -1, 1)]]
            raw = np.array([[float(up or down or steer != 0), 0.0, 0.0, 0.0]])
        else:
            if down and forward_speed < 0.5 and not reverse:
                out["target_gear"] = -1             # stopped and still braking: reverse
            elif up and reverse and forward_speed > -0.5:
                out["target_gear"] = 1
            throttle, brake = (down, up) if reverse else (up, down)
            raw = np.array([[float(throttle), float(brake), float(self.held(KEY_SPACE, t)),
                             steer]])
        self.smoothed = controls.smooth(self.smoothing, self.smoothed, raw,
                                        np.array([forward_speed]), dt)
        t_, b_, h_, s_ = self.smoothed[0]
        out.update(throttle=t_, brake=b_, handbrake=h_, steer=s_)
        if self.gear_request and "target_gear" not in out:
            out["target_gear"] = gear + self.gear_request
        self.gear_request = 0
        return out


def _simulator(args):
    """The simulator to drive: the env's (``env_id``) or a scene's (``--vehicle``, ``--terrain``)."""
    from traction.scenes import build_scene

    from .vehicle_sim import VehicleSim

    if args.env_id:
        import gymnasium as gym

        import traction.envs  # noqa: F401

        if args.env_id not in traction.envs.ENV_IDS:
            raise ValueError(f"{args.env_id!r}: not a Traction environment; allowed: "
                             f"{', '.join(traction.envs.ENV_IDS)}")
        env = gym.make(args.env_id).unwrapped
        env.reset(seed=args.seed)
        return env.sim
    return VehicleSim(build_scene(args.vehicle, args.terrain, seed=args.seed))


def main(argv=None) -> None:
    """Open the viewer and drive (blocks until the window is closed)."""
    import mujoco.viewer

    from .base import display_available

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("env_id", nargs="?", help="e.g. Traction/Drift-v1 (else --vehicle/--terrain)")
    ap.add_argument("--vehicle", default="sedan_rwd")
    ap.add_argument("--terrain", default="skidpad")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if not display_available():
        ap.error("the viewer needs a display (DISPLAY and WAYLAND_DISPLAY are unset)")
    try:
        sim = _simulator(args)
    except ValueError as e:                            # bad id, vehicle, terrain or seed
        ap.error(str(e))
    if sim.params.differential.type == "direct":
        ap.error(f"--vehicle {args.vehicle}: a 'direct' vehicle has no engine for the keys' "
                 "throttle (its wheels take torques in N m); drive sedan_rwd, truck_6x6 or tank")
    driver = KeyboardDriver(tank=sim.params.differential.type == "tank")
    control_dt = 0.02
    with mujoco.viewer.launch_passive(sim.model, sim.data,
                                      key_callback=lambda k: driver.press(k, time.time())) as v:
        while v.is_running():
            start = time.time()
            if driver.reset_requested:
                sim.reset()
                driver.reset_requested = False
            sim.set_commands(**driver.commands(start, sim.forward_speed(),
                                               int(sim.state.gearbox.gear[0]), control_dt))
            sim.step(round(control_dt / sim.dt))
            sim.pose_for_render()
            v.sync()
            time.sleep(max(0.0, control_dt - (time.time() - start)))


if __name__ == "__main__":
    main()
