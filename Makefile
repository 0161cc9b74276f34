VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test bench examples clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/designer solve

test: $(STAMP)
	$(PY) -m pytest

examples: $(STAMP)
	$(PY) scripts/make_examples.py

clean:
	rm -rf $(VENV) reports/*/
