"""The README's Python examples run as written, and do what their comments say."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def _quick_start(ns):
    assert ns["frame"].shape == (480, 640, 3) and ns["frame"].dtype == np.uint8
    assert ns["frame"].std() > 5                                  # a picture, not a blank
    assert set(ns["info"]) >= {"reward_heading", "is_success"}


def _telemetry(ns):
    data = ns["data"]
    assert data["time"].shape == (1001,) and data["long_slip"].shape == (1001, 1, 4)
    assert data["time"][-1] == pytest.approx(1000 * 0.004)         # the reset's substep, then 1000
    assert len(Path("drift_telemetry.csv").read_text().splitlines()) == 1 + 1001


def _coupling(ns):
    sim = ns["sim"]
    assert sim.dt == 0.002                                        # "substeps of 2 ms"
    assert sim.data.time == pytest.approx((1000 + 2000) * 0.002)  # 1000 substeps = 2 s, then 4 s
    assert sim.outputs.load.shape == sim.outputs.long_slip.shape == (1, 4)
    yaw = np.arctan2(sim.data.xmat[sim.body][3], sim.data.xmat[sim.body][0])
    assert yaw > 0.1                                              # steer 0.2 turned it left
    # "brakes on: it stops and holds on the slope"
    assert np.linalg.norm(sim.com_velocity()) < 1e-3 and np.all(sim.state.omega == 0)
    p0 = sim.com_position()
    sim.step(500)                                                 # 1 s more: no creep
    assert np.linalg.norm(sim.com_position() - p0) < 1e-3


def _vector(ns):
    assert ns["obs"].shape == (8, 9) and ns["reward"].shape == (8,)
    from traction.vehicle_model import FrictionTable
    default = FrictionTable.default().values
    scale = [w.sim.friction_table.values / default for w in ns["envs"].unwrapped.envs]
    assert all(np.allclose(k, k[0, 0]) and 0.4 <= k[0, 0] < 1.0 for k in scale)  # one per world
    assert len({k[0, 0] for k in scale}) == 8


def _randomised(ns):
    drawn, nominal = ns["info"]["randomization"], ns["env"].unwrapped.vehicle
    from traction.envs.randomize import PRESETS
    assert set(drawn) == set(PRESETS["mild"])
    env = ns["env"].unwrapped          # the last one: friction and latency ranges of its own
    assert env.randomize == {"friction_scale": (0.5, 1.0), "latency": (0, 2)}
    assert nominal.chassis.mass == 1500.0


def _observation_modes(ns):
    obs, env = ns["obs"], ns["env"]
    assert obs["state"].shape == (90,) and obs["lidar"].shape == (192,)   # 64 beams x 3 planes
    assert env.observation_space.contains(obs)
    assert (obs["lidar"] < 30.0).any()                   # the 15 deg down plane meets the hill


def _standalone(ns):
    assert ns["state"].omega.shape == (64, 4)


def _video(ns):
    assert Path("runs/climb.mp4").stat().st_size > 0 or Path("runs/climb.gif").stat().st_size > 0
    assert ns["sim"].data.time == pytest.approx(50 * 20 * ns["sim"].dt)   # "2 s"


def _async(ns):
    assert ns["obs"].shape == (2, 19) and ns["reward"].shape == (2,)
    assert [f.shape for f in ns["frames"]] == [(120, 160, 3)] * 2


#: each block's claims, by a line that identifies the block
CLAIMS = {'gym.make("Traction/TankTurn-v1", render_mode': _quick_start, "telemetry=2000": _telemetry,
          'build_scene("sedan_rwd", "slope"': _coupling, 'vectorization_mode="vector_entry_point"':
          _vector, 'vectorization_mode="async"': _async, "VehicleState.zeros": _standalone,
          "VideoWriter(": _video, 'randomize="mild"': _randomised,
          'obs_mode="state+lidar"': _observation_modes}

#: a script block runs after this process rendered (the workers' fork would hang after it)
RENDER_FIRST = """
if __name__ == "__main__":
    from traction.scenes import build_scene
    from traction.scenes.render import SceneRenderer
    SceneRenderer(build_scene().model, 8, 8).close()
"""

#: a script block's claims get what it made, printed as the script ends
SCRIPT_REPORT = """
if __name__ == "__main__":
    import pickle, sys
    sys.stdout.buffer.write(pickle.dumps({"obs": obs, "reward": reward, "frames": frames}))
"""


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code, tmp_path, monkeypatch):
    """Each block runs as written: a block with a ``__main__`` guard (the async vector env's,
    whose spawned workers import the file) as a script of its own, with a rendered frame in
    this process first (a fork after it would hang)."""
    claims = [check for key, check in CLAIMS.items() if key in code]
    assert len(claims) == 1, "a README example without its claims checked here"
    monkeypatch.chdir(tmp_path)                                   # files it writes: runs/...
    if 'if __name__ == "__main__":' in code:
        import pickle

        script = tmp_path / "example.py"
        script.write_text(RENDER_FIRST + code + SCRIPT_REPORT)
        run = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=600)
        assert run.returncode == 0, run.stderr.decode()
        claims[0](pickle.loads(run.stdout))
        return
    ns = {}
    exec(compile(code, str(README), "exec"), ns)
    claims[0](ns)
