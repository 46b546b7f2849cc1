"""The benchmark harness: CI's gate (the quick suite against the committed baseline), its
outputs and schema, any controller through it, identical scenarios in two processes,
comparisons that flag a degraded controller and pass an identical one, and clear errors."""

import copy
import hashlib
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from traction.train import benchmark, suites
from traction.train.policy import SB3Policy

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "docs" / "benchmark" / "benchmark.json"
HELPERS = Path(__file__).with_name("bench_controllers.py")
PID = ROOT / "docs" / "examples" / "pid_controller.py"


def _run(argv, out):
    """The command line, without the engine work (its per-substep telemetry would double the
    time; tests of the metric build their envs with telemetry)."""
    return benchmark.main([*argv, "--out", str(out), "--no-progress", "--no-engine-work"])


@pytest.fixture(scope="module")
def gate(tmp_path_factory):
    """CI's gate: the scripted controllers on the quick suite, compared with the committed
    standard report (the quick suite's scenarios are its first 8 of each variant) and failing
    if the success rate of a variant is worse beyond its interval."""
    out = tmp_path_factory.mktemp("quick")
    report = _run(["--controller", "scripted", "--suite", "quick", "--compare", str(BASELINE),
                   "--fail-if-worse", "success"], out)
    return out, report


def test_the_quick_suite_passes_the_gate_against_the_committed_baseline(gate):
    _, report = gate
    c = report["comparison"]
    assert not c["failed"]
    assert c["gates"] == [{"metric": "success", "tolerance": 0.0,
                           "checked": [v.name for v in suites.VARIANTS], "failed": []}]
    assert all(r["paired"] and r["difference"]["n"] > 0 for r in c["rows"]
               if r["metric"] == "success")


def test_outputs_schema_and_report(gate):
    out, report = gate
    assert benchmark.validate(json.loads((out / "benchmark.json").read_text())) == report
    assert report["suite"] == {"name": "quick", "version": suites.VERSION, "episodes": 8}
    baseline = json.loads(BASELINE.read_text())
    for name, v in report["variants"].items():   # the committed report has every metric
        assert set(baseline["variants"][name]["metrics"]) == set(v["metrics"]) | {"engine_work"}
    for name, v in report["variants"].items():
        assert len(v["episodes"]) == 8
        assert [e["scenario"] for e in v["episodes"]] == \
            [s.as_dict() for s in suites.SUITES["quick"].variant(name).scenarios(8)]
        for metric, a in v["aggregates"].items():       # every aggregate with its interval
            if a["n"]:
                assert a["ci"][0] <= a["value"] <= a["ci"][1], (name, metric)
    md = (out / "benchmark.md").read_text()
    for png in ("trajectories.png", "telemetry.png", "intervals.png"):
        assert f"]({png})" in md and (out / png).stat().st_size > 5000, png
    assert "Expected to fail" in md and "- **climb_crest_equal**: the equal split strands" in md
    assert "passed on 7 variants" in md and "95 % interval" in md
    cases = ET.parse(out / "junit.xml").getroot().findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == [v.name for v in suites.VARIANTS]
    assert not any(c.find("failure") is not None for c in cases)


def test_scripted_controllers_on_the_quick_suite(gate):
    """What the physics promises the scripted controllers: the torque-vectoring truck crosses
    the crest course that strands the equal split, the tank pivots on the spot."""
    v = gate[1]["variants"]
    assert v["climb_crest_torque_vectoring"]["aggregates"]["success"]["value"] == 1.0
    assert v["climb_crest_equal"]["aggregates"]["success"]["value"] == 0.0
    assert v["climb_rough_hill"]["aggregates"]["success"]["value"] == 1.0
    assert v["tank_turn_special"]["aggregates"]["success"]["value"] >= 0.9
    assert v["tank_turn_special"]["aggregates"]["centre_drift"]["value"] < 0.2
    assert v["drift"]["aggregates"]["drift_time"]["value"] > 3.0
    assert all(e["metrics"]["diverged"] == 0 for x in v.values() for e in x["episodes"])


def test_schema_checks_name_the_key(gate):
    report = copy.deepcopy(gate[1])
    del report["variants"]["drift"]["aggregates"]
    with pytest.raises(ValueError, match=r"benchmark.json.variants.drift: no aggregates"):
        benchmark.validate(report)
    report = copy.deepcopy(gate[1])
    report["variants"]["drift"]["episodes"][3]["metrics"]["return"] = "high"
    with pytest.raises(ValueError, match=r"variants.drift.episodes\[3\].metrics.return"):
        benchmark.validate(report)
    with pytest.raises(ValueError, match="schema version 0; this tool reads 1"):
        benchmark.validate({**gate[1], "schema_version": 0})


def _schema_keys(schema, keys):
    if isinstance(schema, dict):
        for key, sub in schema.items():
            if key != "*":
                keys.add(key)
            _schema_keys(sub, keys)
    elif isinstance(schema, list | tuple):
        for sub in schema:
            _schema_keys(sub, keys)
    return keys


def test_every_key_of_the_schema_is_documented():
    doc = (ROOT / "docs" / "evaluating.md").read_text()
    section = doc[doc.index("## benchmark.json"):]
    missing = [k for k in sorted(_schema_keys(benchmark._SCHEMA, set())) if f"`{k}`" not in section]
    assert not missing
    assert f"schema_version` ({benchmark.SCHEMA_VERSION})" in section


def test_the_guide_shows_the_example_whole_and_every_metric():
    from traction.train.task_metrics import CLIMB, DRIFT, TANK

    doc = (ROOT / "docs" / "evaluating.md").read_text()
    assert f"```python\n{PID.read_text()}```" in doc
    metrics = doc[doc.index("## Metrics"):doc.index("## Intervals")]
    assert all(f"`{m.name}`" in metrics for m in CLIMB + DRIFT + TANK)
    assert all(f"`{v.name}`" in doc for v in suites.VARIANTS)


def test_a_user_controller_from_a_file_runs_on_every_task(tmp_path):
    """The guide's PID controller (docs/examples/pid_controller.py), one episode of every
    variant."""
    report = _run(["--controller", f"{PID}:make", "--suite", "quick", "--episodes", "1"], tmp_path)
    assert report["controller"]["kind"] == "factory"
    assert list(report["variants"]) == [v.name for v in suites.VARIANTS]
    for v in report["variants"].values():
        assert len(v["episodes"]) == 1 and v["episodes"][0]["metrics"]["diverged"] == 0
    # it pivots the tank as the scripted controller does
    assert report["variants"]["tank_turn_special"]["aggregates"]["success"]["value"] == 1.0


def test_reset_is_called_before_every_episode_and_the_controller_every_step(tmp_path):
    report = _run(["--controller", f"{HELPERS}:Counting", "--tasks", "tank_turn_special",
                   "--episodes", "3"], tmp_path)
    counting = sys.modules["traction_controller_bench_controllers"].Counting
    episodes = report["variants"]["tank_turn_special"]["episodes"]
    assert counting.resets == 3
    assert counting.calls == sum(e["steps"] for e in episodes) == 3 * 400   # zeros: no success


def test_compare_flags_a_degraded_controller_and_passes_an_identical_one(gate, tmp_path):
    baseline = gate[0] / "benchmark.json"
    same = _run(["--controller", f"{HELPERS}:scripted", "--suite", "quick", "--tasks", "TankTurn",
                 "--compare", str(baseline), "--fail-if-worse", "success",
                 "--fail-if-worse", "return"], tmp_path / "same")
    rows = same["comparison"]["rows"]
    assert not same["comparison"]["failed"]
    assert len(rows) == sum(len(v["metrics"]) for v in same["variants"].values()) == 2 * 10
    assert all(r["paired"] and r["verdict"] == "same" for r in rows)
    assert all(r["difference"]["value"] == 0.0 for r in rows if r["difference"]["n"])

    with pytest.raises(SystemExit) as exit_:
        _run(["--controller", f"{HELPERS}:degraded", "--suite", "quick", "--tasks", "TankTurn",
              "--compare", str(baseline), "--fail-if-worse", "success:0.2"], tmp_path / "worse")
    assert exit_.value.code == 1
    worse = json.loads((tmp_path / "worse" / "benchmark.json").read_text())
    gate_result = worse["comparison"]["gates"][0]
    assert gate_result["failed"] == ["tank_turn_special", "tank_turn_standard"]
    cases = ET.parse(tmp_path / "worse" / "junit.xml").getroot().findall("./testsuite/testcase")
    assert all("success" in c.find("failure").get("message") for c in cases)
    assert "**FAILED** on tank_turn_special, tank_turn_standard" in \
        (tmp_path / "worse" / "benchmark.md").read_text()


@pytest.mark.parametrize("diff, better, tolerance, expected", [
    ((-0.5, -0.1), "higher", 0.0, "worse"), ((-0.5, 0.1), "higher", 0.0, "same"),
    ((0.1, 0.5), "higher", 0.0, "better"), ((-0.5, -0.1), "higher", 0.2, "same"),
    ((0.1, 0.5), "lower", 0.0, "worse"), ((-0.5, -0.1), "lower", 0.0, "better"),
    ((0.0, 0.0), "higher", 0.0, "same"),
])
def test_verdict(diff, better, tolerance, expected):
    """Worse: the whole interval of the difference beyond the tolerance on the worse side."""
    interval = benchmark.stats.Interval(sum(diff) / 2, *diff, 8)
    assert benchmark.verdict(interval, better, tolerance) == expected


def test_comparing_other_scenarios_uses_independent_samples(gate):
    report = copy.deepcopy(gate[1])
    report["variants"] = {k: report["variants"][k] for k in ("drift", "tank_turn_special")}
    for e in report["variants"]["drift"]["episodes"]:
        e["scenario"]["options"]["speed"] += 0.5
    c = benchmark.compare(report, gate[1], [("success", 0.0)])
    drift = [r for r in c["rows"] if r["variant"] == "drift"]
    assert drift and not any(r["paired"] for r in drift)
    assert all(r["paired"] for r in c["rows"] if r["variant"] != "drift")


_DIGEST = """
import hashlib, json, sys
import gymnasium as gym
import traction.envs
from traction.train import suites
h = hashlib.sha256()
for name, suite in suites.SUITES.items():
    for v in suite.variants:
        h.update(json.dumps([name, suite.version, v.env_id, v.kwargs,
                             [s.as_dict() for s in v.scenarios(suite.episodes)]]).encode())
for v in suites.VARIANTS:                       # what the environment makes of them
    env = gym.make(v.env_id, **v.kwargs)
    for s in v.scenarios(3):
        obs, _ = env.reset(seed=s.seed, options=s.options)
        u = env.unwrapped
        for a in (obs, u.data.qpos, u.data.qvel, u.model.hfield_data):
            h.update(a.tobytes())
print(h.hexdigest())
"""


def test_a_suite_gives_identical_scenarios_in_two_processes():
    """Two fresh interpreters (other hash seeds) list the same scenarios and reset the
    environments to the same bits: observation, MuJoCo state and terrain."""
    procs = [subprocess.Popen([sys.executable, "-c", _DIGEST], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONHASHSEED": str(seed)})
             for seed in (1, 2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    assert outs[0][0] == outs[1][0] and len(outs[0][0].strip()) == 64


#: sha256 of the scenario lists of suites.VERSION: a change to a variant or its scenarios must
#: bump suites.VERSION (reports carry it) and then this digest
SCENARIOS = {1: "220f4c5654a46df98d0fb38e81366121461b2c5fe62a8db5853785aed03d21ed"}


def test_the_scenarios_change_only_with_the_suite_version():
    h = hashlib.sha256()
    for v in suites.VARIANTS:
        h.update(json.dumps([v.name, v.env_id.split("-v")[0], v.kwargs,
                             [s.as_dict() for s in v.scenarios(20)]]).encode())
    assert h.hexdigest() == SCENARIOS[suites.VERSION], h.hexdigest()


def test_the_suites_cover_every_task_and_the_quick_suite_is_the_standard_prefix():
    assert {v.task for v in suites.VARIANTS} == {"Climb6x6", "Drift", "TankTurn"}
    standard, quick = suites.SUITES["standard"], suites.SUITES["quick"]
    assert standard.episodes >= 20 and quick.episodes < standard.episodes
    for v in suites.VARIANTS:
        assert v.scenarios(quick.episodes) == v.scenarios(standard.episodes)[:quick.episodes]
        assert len({json.dumps(s.options) for s in v.scenarios(standard.episodes)}) == 20


def test_time_to_success_is_when_success_began_not_the_episode_end():
    """Drift's success is sticky and its episode goes on: the time to success is the step the
    sustained drift was first held for 3 s (5.04 s for seed 1000), not the 20 s episode."""
    from traction.train.controllers import DriftController
    from traction.train.suites import Scenario
    from traction.train.task_metrics import telemetry_capacity

    env = gym.make("Traction/Drift-v1", max_episode_steps=500)
    env = gym.make("Traction/Drift-v1", max_episode_steps=500, telemetry=telemetry_capacity(env))
    metrics, track = benchmark.run_episode(env, DriftController(), Scenario("d", 1000, {}))
    env.close()
    assert metrics["success"] == 1.0 and len(track["speed"]) == 501
    assert metrics["time_to_success"] == pytest.approx(5.04, abs=0.05)
    # it holds its slide 3 deg from the 30 deg target on average (over the last three quarters)
    assert 1.0 < metrics["sideslip_error"] < 6.0
    assert metrics["drift_time"] >= 3.0


def test_task_metrics_measure_what_they_say():
    """Tank: the centre drift is the horizontal distance the CoM moved. Climb: the goal
    distance read from the observation is the env's own horizontal distance to the goal."""
    from traction.envs.reading import ChassisReading
    from traction.train.controllers import ClimbController, TankTurnController
    from traction.train.suites import Scenario
    from traction.train.task_metrics import telemetry_capacity

    env = gym.make("Traction/TankTurn-v1")
    env = gym.make("Traction/TankTurn-v1", telemetry=telemetry_capacity(env))
    metrics, track = benchmark.run_episode(env, TankTurnController(), Scenario("t", 1000, {}))
    u = env.unwrapped
    end = u.sim.com_position()
    assert track["xy"][-1] == end[:2].tolist()
    assert metrics["centre_drift"] == pytest.approx(np.hypot(*(np.array(track["xy"][-1])
                                                               - track["xy"][0])), rel=1e-12)
    assert metrics["heading_error"] == pytest.approx(np.degrees(abs(u.heading_error())), abs=1e-9)
    env.close()

    env = gym.make("Traction/Climb6x6-v1", max_episode_steps=100)
    env = gym.make("Traction/Climb6x6-v1", max_episode_steps=100,
                   telemetry=telemetry_capacity(env))
    metrics, _ = benchmark.run_episode(env, ClimbController(), Scenario("c", 1000, {}))
    u = env.unwrapped
    assert metrics["goal_distance"] == pytest.approx(
        u._goal_distance(ChassisReading(u.sim.chassis_row())), rel=1e-9)
    assert metrics["throttle_time"] > 0 and metrics["engine_work"] > 0
    env.close()


def test_a_controller_error_names_the_episode(tmp_path):
    with pytest.raises(RuntimeError, match="my controller broke") as e:
        _run(["--controller", f"{HELPERS}:crashing", "--tasks", "drift", "--episodes", "1"],
             tmp_path)
    assert any("in benchmark episode drift/000 (seed 1000" in n for n in e.value.__notes__)


BAD = [
    (["--controller", "nope"], "--controller 'nope': not 'scripted', not a folder, and no ':'; "
     "expected 'scripted', MODULE:FACTORY"),
    (["--controller", "no_such_module_xyz:make"], "no module 'no_such_module_xyz' on the Python "
     "path (a file: give its path, ending in .py)"),
    (["--controller", f"{PID}:nope"], "has no 'nope'; its functions and classes: CirclePID, "
     "ClimbPID, HeadingPID, PID, make"),
    (["--controller", "/nonexistent/ctl.py:make"], "no file /nonexistent/ctl.py"),
    (["--controller", f"{HELPERS}:no_argument"], "no_argument() cannot be called with one "
     "argument; a factory takes a TaskSpec"),
    (["--controller", f"{HELPERS}:not_callable", "--tasks", "drift"], "the factory returned 42 "
     "(int) for drift, which is not callable"),
    (["--controller", f"{HELPERS}:degraded", "--tasks", "drift"], "does not drive drift "
     "(Traction/Drift-v1): TankTurn only; choose the variants it drives with --tasks"),
    (["--pretrained", "Traction/Drift-v9"], "no trained agent ships for it; available: "),
    (["--fail-if-worse", "success"], "--fail-if-worse needs --compare BASELINE.json"),
    (["--compare", str(BASELINE), "--fail-if-worse", "bogus"], "--fail-if-worse bogus: not a "
     "metric of the chosen variants; allowed: success, return, time_to_success"),
    (["--fail-if-worse", "success:-1"], "'success:-1'; allowed: METRIC or METRIC:TOLERANCE"),
    (["--tasks", "Nope"], "--tasks 'Nope': not a variant, task or environment id of suite "
     "standard; allowed: climb_rough_hill"),
    (["--compare", __file__], "not JSON"),
    (["--suite", "huge"], "argument --suite: invalid choice: 'huge'"),
    (["--tasks", "drift", "--video", "TankTurn"], "--video tank_turn_special tank_turn_standard: "
     "not among the variants run; allowed: drift"),
]


@pytest.mark.parametrize("argv, message", BAD)
def test_bad_arguments_name_what_was_expected(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as e:
        _run(argv, tmp_path / "out")
    assert e.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out" / "benchmark.json").exists()


def test_a_folder_that_is_not_a_run(tmp_path, capsys):
    with pytest.raises(SystemExit):
        _run(["--controller", str(tmp_path)], tmp_path / "out")
    assert "a folder without config.yml, so not a training run" in capsys.readouterr().err


def test_a_training_run_folder_drives_the_task_it_was_trained_on(tmp_path, capsys):
    """A run folder (an untrained PPO saved as train saves it) drives its task's variants
    with the deterministic policy on observations normalised by the run's statistics."""
    import stable_baselines3 as sb3
    import yaml

    from traction.train.train import make_vec

    run = tmp_path / "run"
    run.mkdir()
    venv = make_vec("Traction/TankTurn-v1", {}, 1, 0, True)
    venv.reset()
    venv.step(np.zeros((1, 2), np.float32))                   # statistics other than 0, 1
    model = sb3.PPO("MlpPolicy", venv, seed=0, device="cpu")
    model.save(run / "model.zip")
    venv.save(str(run / "vecnormalize.pkl"))
    (run / "config.yml").write_text(yaml.safe_dump({
        "env_id": "Traction/TankTurn-v1", "algo": "ppo", "env_kwargs": {},
        "run": {"normalize": True}}))
    report = _run(["--controller", str(run), "--tasks", "TankTurn", "--episodes", "1"],
                  tmp_path / "out")
    assert report["controller"]["kind"] == "sb3"
    assert set(report["variants"]) == {"tank_turn_special", "tank_turn_standard"}

    from traction.train.policy import resolve

    source = resolve(str(run))
    env = gym.make("Traction/TankTurn-v1")
    policy = source.make(benchmark.task_spec(env, suites.VARIANTS[-1]))
    assert isinstance(policy, SB3Policy)
    obs, _ = env.reset(seed=0)
    expected, _ = model.predict(venv.normalize_obs(obs), deterministic=True)
    assert np.array_equal(policy(obs), expected)

    with pytest.raises(SystemExit):
        _run(["--controller", str(run), "--tasks", "drift"], tmp_path / "out2")
    assert "its policy was trained on Traction/TankTurn-v1" in capsys.readouterr().err


def test_videos_show_each_variants_first_episode_in_real_time(tmp_path):
    """--video: <variant>.mp4 of the first episode, a frame every FRAME_EVERY control steps
    (0.04 s each), shown for that long: 12.5 fps."""
    import imageio.v2 as imageio

    report = _run(["--tasks", "TankTurn", "--episodes", "2", "--video", "tank_turn_special"],
                  tmp_path)
    assert not (tmp_path / "tank_turn_standard.mp4").exists()
    reader = imageio.get_reader(tmp_path / "tank_turn_special.mp4")
    assert reader.get_meta_data()["fps"] == pytest.approx(1.0 / (0.04 * benchmark.FRAME_EVERY))
    steps = report["variants"]["tank_turn_special"]["episodes"][0]["steps"]
    assert reader.count_frames() == steps // benchmark.FRAME_EVERY
