"""Each measured run in a fresh child process with a wall-clock limit and its peak memory (os.wait4):
our solve, plain highspy on the exported model, the brute-force oracle; and any command (run_process: the whole
``designer solve``).

``python -m designer.tools.bench.children KIND ARGS OUT`` is the child's entry point."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from designer.tools.bench.instances import ORACLE_PATH, ROOT

# --- child processes ------------------------------------------------------------------------------

def child_solve(workbook: str, gap: float, limit: float, export: str | None, progress: str) -> dict:
    """One solve of one workbook (in a fresh process): status, gap, objective, timings, model size."""
    from designer.errors import Infeasible, NoSolution
    from designer.inputs.workbook import load_inputs
    from designer.solve.run import SolveOptions, solve

    log = open(progress, "a", encoding="utf-8")  # noqa: SIM115 - kept open for the whole child

    def say(msg):
        log.write(f"{time.perf_counter() - t0:9.2f} {msg}\n")
        log.flush()

    t0 = time.perf_counter()
    inputs = load_inputs(workbook)
    out = {"read_s": time.perf_counter() - t0}
    say("read and validated")
    start = time.perf_counter()
    try:
        sol = solve(inputs, SolveOptions(time_limit=limit, mip_gap=gap, export_model=export, progress=say))
    except NoSolution as exc:
        return {**out, "status": "no_solution", "note": str(exc), "call_s": time.perf_counter() - start}
    except Infeasible as exc:
        return {**out, "status": "infeasible", "note": exc.reason, "call_s": time.perf_counter() - start}
    out.update(call_s=time.perf_counter() - start, status=sol["status"], gap=sol.get("mip_gap"),
               objective=sol.get("objective_usd"), timings=sol.get("timings", {}),
               sites_open=sol["totals"].get("sites_open"), modes=sol.get("modes", {}).get("kept"),
               every_split=sol["modes"]["space"][0]["every"],
               split_savings=[x["cheaper_split"]["saving_usd"] for x in sol["sites"] if x.get("cheaper_split")],
               polished=(sol["modes"].get("polish") or {}).get("saving_usd", 0.0),
               polished_sites=sum(1 for x in sol["sites"] if x.get("polished_from")))
    text = Path(progress).read_text(encoding="utf-8")
    found = re.search(r"(\d+) variables, (\d+) constraints", text)
    if found:
        out.update(variables=int(found.group(1)), constraints=int(found.group(2)))
    return out


def child_greedy(workbook: str) -> dict:
    """The greedy planner's design of one workbook (designer.solve.greedy): its cost, sites and time, or why none.
    Over the modes the model data keeps (designer.solve.prepare: a mode dropped there is matched or beaten by a kept
    one at every node count, so the cheapest at each count is kept), as the solve's greedy start plans: over every
    enumerated mode the planner's cost and power per mode and node count held 26 GB at 32 sites and 50 switch
    models (256,869 modes, 5,995 counts), and the child was killed for lack of memory. The time is the plan's, the
    preparation's apart. In a child of its own: what it prepares would stay in the bench's process, whose size
    every later child inherits at its start (ru_maxrss counts it)."""
    from designer.inputs.workbook import load_inputs
    from designer.solve.greedy import greedy_plan
    from designer.solve.prepare import prepare_data

    data = prepare_data(load_inputs(workbook))
    plan = greedy_plan(data.inputs, data.modes, inter=data.inter)
    return {"cost": plan.cost, "sites": len(plan.sites), "reason": plan.reason, "seconds": plan.seconds}


def child_highspy(mps: str, gap: float, limit: float) -> dict:
    """highspy alone on an exported model: readModel + run with the same gap and time limit."""
    import highspy

    from designer.solve.highs import THREADS

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", THREADS)  # the solve's thread use (designer.solve.highs.THREADS)
    h.setOptionValue("parallel", "off")
    h.setOptionValue("mip_rel_gap", gap)
    h.setOptionValue("time_limit", float(limit))
    start = time.perf_counter()
    h.readModel(mps)
    h.run()
    seconds = time.perf_counter() - start
    info = h.getInfo()
    return {"seconds": seconds, "status": h.modelStatusToString(h.getModelStatus()),
            "objective": info.objective_function_value, "gap": info.mip_gap, "highs_run_s": h.getRunTime()}


def load_oracle():
    """tests/oracle.py as a module, or None when it is not there."""
    if not ORACLE_PATH.exists():
        return None
    spec = importlib.util.spec_from_file_location("bench_oracle", ORACLE_PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def child_oracle(workbook: str) -> dict:
    """The brute-force optimum of a tiny workbook (tests/oracle.py ``solve(inputs)``)."""
    from designer.inputs.workbook import load_inputs

    oracle = load_oracle()
    inputs = load_inputs(workbook)
    start = time.perf_counter()
    answer = oracle.solve(inputs)
    return {"seconds": time.perf_counter() - start, "cost": None if answer is None else answer.cost}


CHILDREN = {"solve": child_solve, "highspy": child_highspy, "oracle": child_oracle, "greedy": child_greedy}


@dataclass
class ChildResult:
    data: dict
    wall_s: float
    peak_mb: float
    killed: bool
    error: str = ""
    last_phase: str = ""


def run_process(cmd: list[str], wall: float, stderr: Path) -> tuple[int, float, float, bool]:
    """Run ``cmd`` in a fresh process (a session of its own, its stderr to the file ``stderr``); kill its process
    group after ``wall`` s. (exit code, wall seconds, peak memory in MB, killed): the peak is the process's ru_maxrss,
    read with os.wait4 when it ends (the largest of it and the children it waited for)."""
    start = time.perf_counter()
    with open(stderr, "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=ROOT, start_new_session=True)
        killed = threading.Event()

        def kill():
            killed.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(wall, kill)
        timer.start()
        try:
            _pid, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
    return os.waitstatus_to_exitcode(status), time.perf_counter() - start, usage.ru_maxrss / 1024.0, killed.is_set()


def run_child(kind: str, args: list, wall: float, progress: Path | None = None) -> ChildResult:
    """Run CHILDREN[kind](*args) in a fresh Python process (run_process)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        log = Path(tmp) / "stderr.txt"
        cmd = [sys.executable, "-m", "designer.tools.bench.children", kind, json.dumps(args), str(out)]
        code, wall_s, peak_mb, killed = run_process(cmd, wall, log)
        phase = ""
        if progress is not None and progress.exists():
            lines = progress.read_text(encoding="utf-8").strip().splitlines()
            phase = lines[-1].strip() if lines else ""
        if killed:
            return ChildResult({}, wall_s, peak_mb, True, f"killed after {wall:.0f} s wall", phase)
        if code != 0 or not out.exists():
            tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:]
            return ChildResult({}, wall_s, peak_mb, False, f"exit {code}: {' '.join(tail)[:240]}", phase)
        return ChildResult(json.loads(out.read_text(encoding="utf-8")), wall_s, peak_mb, False, "", phase)


def child_main(argv: list[str]) -> int:
    kind, args, out = argv[0], json.loads(argv[1]), argv[2]
    import logging

    logging.getLogger("pyomo").setLevel(logging.CRITICAL)
    result = CHILDREN[kind](*args)
    Path(out).write_text(json.dumps(result, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1:]))
