VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test bench examples clean browser

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/designer solve

# The suite on every core (pytest-xdist), a test file to a worker so its module fixtures are built once; the
# slowest tests listed at the end.
test: $(STAMP) browser
	$(PY) -m pytest -n auto --dist loadfile --durations=25

# Headless Chromium for the report's rendering test (tests/test_report.py); the test skips, saying so,
# where it cannot be installed.
browser:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) \
		|| echo "chromium could not be installed: the browser test will be skipped"

bench: $(STAMP)
	$(VENV)/bin/designer bench -o reports/bench

examples: $(STAMP)
	$(PY) scripts/make_examples.py

clean:
	rm -rf $(VENV) reports/*/
