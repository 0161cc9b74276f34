VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test bench examples clean browser compiled

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

# The project's own modules compiled ahead (an editable install leaves them as source, and where
# PYTHONDONTWRITEBYTECODE is set every run compiled them again: ~0.1 s of each command's start).
compiled: $(STAMP)
	$(PY) -m compileall -q designer models

run: compiled
	$(VENV)/bin/designer solve

# The suite on every core (pytest-xdist), a test file to a worker so its module fixtures are built once; the
# slowest tests listed at the end.
test: compiled browser
	$(PY) -m pytest -n auto --dist loadfile --durations=25

# Headless Chromium for the report's rendering test (tests/test_report.py); the test skips, saying so,
# where it cannot be installed.
browser:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) \
		|| echo "chromium could not be installed: the browser test will be skipped"

bench: compiled
	$(VENV)/bin/designer bench -o reports/bench

examples: $(STAMP)
	$(PY) scripts/make_examples.py

clean:
	rm -rf $(VENV) reports/*/
