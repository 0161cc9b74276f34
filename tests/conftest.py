"""Shared pytest configuration."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

# A shell starts a background job with SIGINT ignored, and the commands it runs inherit that: the Ctrl-C tests
# (tests/test_atomic.py) need Python's handler here and the default one in the commands they start (a handler of
# this process is reset to the default in a child; an ignored signal is not).
signal.signal(signal.SIGINT, signal.default_int_handler)

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


# --- the longest test files first ------------------------------------------------------------------
# `make test` hands each worker a whole file (--dist loadfile) in the order collected: the longest files first, so
# the two workers finish together instead of one running a long file alone at the end (alphabetical order left
# tests/test_start.py, 3.5 min of 19, for last). Their order by the suite's time on 6 December 2026.
LONGEST_FIRST = ("test_start", "test_properties", "test_oracle", "test_atomic", "test_fuzz", "test_audit",
                 "test_pricing", "test_values", "test_bench", "test_sweep", "test_cli", "test_training")


def pytest_collection_modifyitems(items) -> None:
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.stem, len(rank)))  # stable: each file's own order kept


# --- the example workbooks, solved once for the whole session ----------------------------------------
# tests/test_audit.py audits each output folder, tests/test_cli.py checks the output contract on it and
# tests/test_report.py renders its report.html: one solve of each example by the command serves all three.

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "data" / "examples").glob("*.xlsx"))
EXAMPLE_TIME_LIMIT = 120
EXAMPLE_TIMEOUT = 900  # seconds of wall time before a run counts as hung


class ExampleRuns:
    """``designer solve`` on every example workbook, in subprocesses started together (one HiGHS thread each);
    ``get`` waits for one, ``design`` reads its design.json.

    The pytest-xdist workers of one run share the folder: each example is solved by the first worker to take its
    lock (held until its result is written beside its output folder), and read by the others, which wait on the
    lock; a worker that finds the lock free and no result (its solver gone without one) solves it itself."""

    def __init__(self, out: Path):
        self.out = out
        self.procs = {}
        self.locks = {}
        self.done: dict[str, subprocess.CompletedProcess] = {}
        for path in EXAMPLES:
            self.locks[path.stem] = lock = open(out / f"{path.stem}.lock", "a")  # noqa: SIM115 - held until read
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # another worker solves it
            if not self.read(path.stem):
                self.start(path)

    def start(self, path: Path) -> None:
        args = [sys.executable, "-m", "designer.cli", "solve", str(path), "-o", str(self.out / path.stem),
                "--time-limit", str(EXAMPLE_TIME_LIMIT), "--threads", "1"]
        self.procs[path.stem] = (args, subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                        text=True, cwd=ROOT))

    def read(self, stem: str) -> bool:
        """The result another worker wrote, if any (the lock is held)."""
        result = self.out / f"{stem}.result.json"
        if result.exists():
            self.done[stem] = subprocess.CompletedProcess(**json.loads(result.read_text()))
            self.release(stem)
        return stem in self.done

    def release(self, stem: str) -> None:
        lock = self.locks.pop(stem, None)
        if lock is not None:
            lock.close()

    def get(self, stem: str) -> subprocess.CompletedProcess:
        if stem not in self.done and stem not in self.procs:
            # this worker's own runs first: a worker waiting on another's lock while holding its own locks waits
            # for ever when the other waits on one of them (two workers asking for each other's example first)
            for own in [s for s in self.procs if s not in self.done]:
                self.finish(own)
            fcntl.flock(self.locks[stem], fcntl.LOCK_EX)  # the worker solving it has written its result
            if not self.read(stem):
                self.start(next(p for p in EXAMPLES if p.stem == stem))
        if stem not in self.done:
            self.finish(stem)
        return self.done[stem]

    def finish(self, stem: str) -> None:
        """Wait for this worker's run of ``stem``, write its result for the other workers and release its lock."""
        args, proc = self.procs[stem]
        try:
            stdout, stderr = proc.communicate(timeout=EXAMPLE_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
            stderr += f"\n(killed after {EXAMPLE_TIMEOUT} s)"
        self.done[stem] = subprocess.CompletedProcess(args, proc.returncode, stdout, stderr)
        written = self.out / f"{stem}.result.json.part"
        written.write_text(json.dumps(vars(self.done[stem])))
        written.replace(self.out / f"{stem}.result.json")
        self.release(stem)

    def solved(self, stem: str) -> tuple[dict, Path]:
        """design.json and the output folder of an example that must have solved."""
        result = self.get(stem)
        assert result.returncode == 0, f"{stem}: exit {result.returncode}\n{result.stderr[-3000:]}"
        out = self.out / stem
        return json.loads((out / "design.json").read_text()), out

    def close(self) -> None:
        for _, proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        for stem in list(self.locks):
            self.release(stem)


@pytest.fixture(scope="session")
def example_runs(tmp_path_factory, shared_folder):
    """The examples' solves, started when a test first asks for them and kept for the session; under pytest-xdist
    in a folder the run's workers share (shared_folder)."""
    if shared_folder is not None:
        out = shared_folder / "examples"
        out.mkdir(exist_ok=True)
    else:
        out = tmp_path_factory.mktemp("examples")
    runs = ExampleRuns(out)
    yield runs
    runs.close()


def example_model(name: str):
    """(inputs, model data, the model with its cost objective) of a shipped example workbook."""
    from designer.inputs.workbook import load_inputs
    from models.network import build_model, set_objective

    inputs = load_inputs(Path(__file__).resolve().parents[1] / "data" / "examples" / f"{name}.xlsx")
    data = shared_preparation(inputs)
    model = build_model(data)
    set_objective(model)
    return inputs, data, model


SHARED = "DESIGNER_TESTS_SHARED"  # environment variable: the folder the test workers of one run share


@pytest.fixture(scope="session", autouse=True)
def shared_folder(tmp_path_factory) -> Path | None:
    """The folder the test workers of one run share under pytest-xdist (pytest's, beside the workers' own), else
    None; also in the environment (SHARED), as test modules import this file again as tests.conftest, with globals
    of its own."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return None
    folder = tmp_path_factory.getbasetemp().parent
    os.environ[SHARED] = str(folder)
    return folder


def shared_preparation(inputs):
    """prepare_data(inputs), its modes shared by the test workers of one run (the scale-across example's take
    25-40 s, in tests/test_start.py and tests/test_pricing.py): the first worker to prepare them leaves them in a
    file the run's workers share (designer.solve.prepare.PREPARED's entry, written whole or not at all), and a
    worker that finds it there reads it into its own memo instead of preparing them again."""
    import pickle

    from designer.solve import prepare

    if not os.environ.get(SHARED):
        return prepare.prepare_data(inputs)
    key = prepare.fingerprint(inputs, None, False)
    path = Path(os.environ[SHARED]) / "preparations" / f"{key.hex()}.pickle"
    if path.exists():
        prepare.PREPARED[key] = pickle.loads(path.read_bytes())
        return prepare.prepare_data(inputs)
    data = prepare.prepare_data(inputs)
    path.parent.mkdir(exist_ok=True)
    part = path.with_suffix(f".{os.getpid()}.part")
    part.write_bytes(pickle.dumps(prepare.PREPARED[key]))
    part.replace(path)
    return data
