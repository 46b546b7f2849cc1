# The whole set-up on a fresh machine is `make demo` or `make test`.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q

.PHONY: demo test test-scale test-rllib test-pythons lint clean baseline

$(VENV)/bin/python:
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found; 3.12, 3.13: make test-pythons)"; exit 1; }
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

# Two test processes (pytest-xdist): the suite is CPU-bound and CI's machine has two cores.
test: $(VENV)/.installed-dev
	$(GL) $(PY) -m pytest -q -m "not scale" -n 2

# The tests that start a local Ray cluster (a tiny sweep through Ray Tune): minutes of start-up,
# kept out of make test (CI's time budget).
test-scale: $(VENV)/.installed-dev
	$(GL) $(PY) -m pytest -q -m scale

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

# The suite on every other supported Python this machine has (.ci/pythons finds 3.12 and 3.13 on
# PATH or in pyenv), after `make test` on 3.11: a virtual environment each (.venv-3.X) with the
# package and its test extra, which leaves out the training stack (PyPI's torch 2.13.0 for Linux is
# the multi-GB CUDA build; the CPU one comes from download.pytorch.org), so the tests that need
# stable-baselines3 skip there. Not part of CI (`make test`).
OTHER_PYTHONS ?= 3.12 3.13
test-pythons: test
	@sh .ci/pythons $(OTHER_PYTHONS) | while read -r version python; do \
	  venv=.venv-$$version; echo "== Python $$version: $$python -> $$venv"; \
	  [ -x $$venv/bin/python ] || $$python -m venv $$venv || exit 1; \
	  $$venv/bin/python -m pip --disable-pip-version-check -q install -e ".[test]" || exit 1; \
	  MUJOCO_GL=$$(sh .ci/gl-backend $$venv/bin/python) $$venv/bin/python -m pytest -q || exit 1; \
	done

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) $(RLLIB_VENV) .venv-3.* build *.egg-info runs
