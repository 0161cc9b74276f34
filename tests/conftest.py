"""Shared pytest configuration."""

from __future__ import annotations

import os

# --- hypothesis profiles (tests/test_oracle.py, tests/test_properties.py) ----------------------------
# "designer" (default): derandomized, so CI runs the same examples every time; no deadline (an example
# solves a MILP); no example database. "designer-random": fresh examples each run, for local hunting
# (HYPOTHESIS_PROFILE=designer-random). Example counts are set per test; DESIGNER_ORACLE_EXAMPLES=N
# raises the oracle comparison's.
try:
    from hypothesis import HealthCheck, settings
except ImportError:  # hypothesis is a test extra; the tests that need it import it themselves
    pass
else:
    _quiet = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
    settings.register_profile("designer", derandomize=True, deadline=None, database=None, print_blob=True,
                              suppress_health_check=_quiet)
    settings.register_profile("designer-random", derandomize=False, deadline=None, database=None,
                              print_blob=True, suppress_health_check=_quiet)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "designer"))
