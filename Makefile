# The whole set-up on a fresh machine is `make demo` or `make test`.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q

.PHONY: demo test test-rllib lint clean baseline

$(VENV)/bin/python:
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed-dev: $(VENV)/bin/python pyproject.toml
	$(PIP) install -e ".[dev]"
	@touch $@

# Offscreen rendering backend for MuJoCo (EGL, or OSMesa installed on demand); stops make if
# gl-backend fails.
GL = MUJOCO_GL=$$(sh .ci/gl-backend $(PY)) && export MUJOCO_GL &&

# The scripted controllers on the standard scenario suite, with a video per task (rendering
# costs far more than the physics) (docs/evaluating.md).
demo: $(VENV)/.installed-dev
	$(GL) $(PY) -m traction.train.benchmark --controller scripted --suite standard --out runs/benchmark \
		--video climb_rough_hill climb_crest_torque_vectoring drift tank_turn_special

# The committed report of the scripted controllers, which is also CI's baseline
# (tests/train/test_benchmark.py gates the quick suite against it): run after a physics change.
baseline: $(VENV)/.installed-dev
	$(PY) -m traction.train.benchmark --controller scripted --suite standard --no-progress --out docs/benchmark

test: $(VENV)/.installed-dev
	$(GL) $(PY) -m pytest -q

# RLlib pins its own Gymnasium (ray[rllib] 2.60: gymnasium==1.2.2), so it gets a virtual
# environment of its own: there the environment tests run on that Gymnasium, with the RLlib test.
RLLIB_VENV := .venv-rllib
$(RLLIB_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(RLLIB_VENV)
	$(RLLIB_VENV)/bin/python -m pip --disable-pip-version-check -q install -e ".[train]" \
		"ray[rllib]==2.60.0" "gymnasium==1.2.2" pytest hypothesis
	@touch $@

test-rllib: $(RLLIB_VENV)/.installed
	$(GL) $(RLLIB_VENV)/bin/python -m pytest -q tests/envs tests/train/test_rllib.py

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) $(RLLIB_VENV) build *.egg-info runs
