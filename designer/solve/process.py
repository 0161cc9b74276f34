"""A HiGHS run of a translated model in a process of its own, stopped for sure at its deadline.

HiGHS 1.15 checks its time limit and a stop request only between the steps of its search, and its root waits for
the analytic centre (an interior-point solve of the whole LP: 200 iterations, no time limit, no stop request heard;
designer.solve.highs THREADS). On a large model that wait outlasts both: 32 candidate sites and 50 switch models
(128,663 columns), the run given 30 s waited in finishAnalyticCenterComputation until 82-95 s. A process can be
stopped where a thread cannot: a run of a large model goes here when it has a deadline (designer.solve.highs).

The model goes as arrays (``model.npz``: the LP's columns, rows, matrix and integrality, and a start), with the
HiGHS options and the columns to answer (``request.json``); the process (``python -m designer.solve.process
FOLDER``) imports highspy and numpy only (and, for an LP's rounds of connectivity cuts, designer.solve.cuts: networkx)
and answers with ``answer.npz``. Each improving design of a MIP is saved as
it comes (``best.npz``, HiGHS's improving-solution callback) and its bound about once a second (``bound.npy``), so
a run stopped at its deadline still answers with the best design it held and its bound."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import highspy
import numpy as np

ARRAYS = ("col_cost_", "col_lower_", "col_upper_", "row_lower_", "row_upper_")
BOUND_EVERY = 1.0  # s between two saves of a MIP's bound
POLL = 0.05  # s between two looks at runs waited for together (wait_first)


class HighsProcess:
    """One HiGHS run of ``lp`` (a highspy.HighsLp) with ``options`` (HiGHS option name -> value) in a process of its
    own, started at once; ``start``: the first incumbent (one value per column) or None; ``columns``: the columns
    whose values the answer holds (None: all); ``ends``: when the run must end (perf_counter seconds), its time
    limit then what is left of it when HiGHS starts there (the process's start and the model's reading come off).
    ``cuts``: an LP's rounds of connectivity cuts (designer.solve.cuts.cut_spec), their rows in the answer's
    ``cuts``. ``wait`` returns its answer; leaving the ``with`` block stops the process if it still runs and removes
    its folder."""

    command = (sys.executable, "-m", __name__)  # the run's process, given its folder

    def __init__(self, lp: highspy.HighsLp, options: dict, start: np.ndarray | None = None,
                 columns: list[int] | None = None, ends: float | None = None, cuts: dict | None = None):
        self.folder = tempfile.TemporaryDirectory(prefix="designer-highs-")
        path = Path(self.folder.name)
        write_model(path / "model.npz", lp, start)
        request = {"options": options, "columns": columns, "ends": monotonic(ends), "cuts": cuts}
        (path / "request.json").write_text(json.dumps(request), encoding="utf-8")
        self.process = subprocess.Popen([*self.command, str(path)], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.folder.cleanup()

    def wait(self, until: float | None, settle: float | None = None) -> dict:
        """The run's answer (read_answer) once it ends, or, when it still runs at ``until`` (perf_counter seconds;
        None: no end), the best design it saved with ``stopped`` true, the process then stopped; from ``settle`` on
        (perf_counter seconds, or None) it is stopped as soon as it has saved a design. A process that died without
        answering answers status "kSolveError"."""
        folder = Path(self.folder.name)
        while True:
            now = time.perf_counter()
            if (until is not None and now >= until) or (
                    settle is not None and now >= settle and (folder / "best.npz").exists()):
                return self.stop()
            wake = until
            if settle is not None:
                wake = settle if now < settle else now + POLL
                wake = wake if until is None else min(wake, until)
            try:
                self.process.wait(timeout=None if wake is None else max(0.0, wake - now))
            except subprocess.TimeoutExpired:
                continue
            return read_answer(folder)

    def stop(self) -> dict:
        """Stop the run now: its answer when it had ended, else the best design it saved, ``stopped`` true."""
        if self.process.poll() is not None:
            return read_answer(Path(self.folder.name))
        self.process.kill()
        self.process.wait()
        return read_saved(Path(self.folder.name))


def wait_first(runs: list[HighsProcess], until: float | None, enough) -> list[dict]:
    """The answers of runs started together, each read as it ends; once one answers with ``enough(answer)`` true, or
    at ``until`` (perf_counter seconds; None: no end), the others are stopped with what they saved."""
    answers: list[dict | None] = [None] * len(runs)
    while any(answer is None for answer in answers):
        ended = [i for i, run in enumerate(runs) if answers[i] is None and run.process.poll() is not None]
        for i in ended:
            answers[i] = read_answer(Path(runs[i].folder.name))
        if any(enough(answers[i]) for i in ended) or (until is not None and time.perf_counter() >= until):
            answers = [answer if answer is not None else run.stop() for run, answer in zip(runs, answers)]
        else:
            time.sleep(POLL)
    return answers


def monotonic(ends: float | None) -> float | None:
    """``ends`` (perf_counter seconds, this process's) on the system's monotonic clock, which the run's process
    reads too."""
    return None if ends is None else time.monotonic() + (ends - time.perf_counter())


def write_model(path: Path, lp: highspy.HighsLp, start: np.ndarray | None) -> None:
    """``lp`` and ``start`` as one .npz."""
    matrix = lp.a_matrix_
    arrays = {name: np.asarray(getattr(lp, name), dtype=float) for name in ARRAYS}
    arrays |= {"a_start": np.asarray(matrix.start_, dtype=np.int32),
               "a_index": np.asarray(matrix.index_, dtype=np.int32), "a_value": np.asarray(matrix.value_, dtype=float),
               "integer": np.asarray([t != highspy.HighsVarType.kContinuous for t in lp.integrality_], dtype=bool),
               "offset_sense": np.asarray([lp.offset_, int(lp.sense_)], dtype=float),
               "rowwise": np.asarray(matrix.format_ == highspy.MatrixFormat.kRowwise)}
    if start is not None:
        arrays["start"] = np.asarray(start, dtype=float)
    np.savez(path, **arrays)


def read_model(path: Path) -> tuple[highspy.HighsLp, np.ndarray | None]:
    """The LP and start write_model wrote."""
    with np.load(path) as arrays:
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = len(arrays["col_cost_"]), len(arrays["row_lower_"])
        for name in ARRAYS:
            setattr(lp, name, arrays[name])
        lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise if arrays["rowwise"] else highspy.MatrixFormat.kColwise
        lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = lp.num_col_, lp.num_row_
        lp.a_matrix_.start_, lp.a_matrix_.index_ = arrays["a_start"], arrays["a_index"]
        lp.a_matrix_.value_ = arrays["a_value"]
        if arrays["integer"].any():
            lp.integrality_ = [highspy.HighsVarType.kInteger if flag else highspy.HighsVarType.kContinuous
                               for flag in arrays["integer"]]
        offset, sense = arrays["offset_sense"]
        lp.offset_, lp.sense_ = float(offset), highspy.ObjSense(int(sense))
        start = arrays["start"] if "start" in arrays.files else None
    return lp, start


def save(path: Path, **arrays) -> None:
    """Arrays as an .npz written whole or not at all (a reader never sees half a file)."""
    partial = path.with_name(path.stem + ".partial.npz")
    np.savez(partial, **arrays)
    os.replace(partial, path)


def read_answer(folder: Path) -> dict:
    """The answer of a run that ended: status (the HighsModelStatus name), objective and bound (None when there are
    none), values (the requested columns', or None without a design), seconds (HiGHS's run time), nodes (-1 for an
    LP), stopped (false)."""
    try:
        with np.load(folder / "answer.npz") as arrays:
            answer = json.loads(str(arrays["summary"]))
            answer["values"] = arrays["values"] if "values" in arrays.files else None
    except (OSError, ValueError, KeyError):  # the process died before answering
        return {"status": "kSolveError", "objective": None, "bound": None, "values": None, "seconds": 0.0,
                "nodes": 0, "stopped": False}
    return answer | {"stopped": False}


def read_saved(folder: Path) -> dict:
    """The answer of a run stopped before its end: the last design and bound it saved (none when it saved none)."""
    answer = {"status": "kInterrupt", "objective": None, "bound": None, "values": None, "seconds": 0.0, "nodes": 0,
              "stopped": True}
    try:
        with np.load(folder / "best.npz") as arrays:
            answer |= {"objective": float(arrays["objective"]), "bound": float(arrays["bound"]),
                       "values": arrays["values"]}
    except (OSError, ValueError, KeyError):
        pass
    try:
        bound = float(np.load(folder / "bound.npy"))
        answer["bound"] = bound if answer["bound"] is None else max(answer["bound"], bound)
    except (OSError, ValueError):
        pass
    if answer["bound"] is not None and not np.isfinite(answer["bound"]):
        answer["bound"] = None
    return answer


def run(folder: Path) -> None:
    """The run's process: read the request, run HiGHS, write the answer (saving improving designs as they come)."""
    request = json.loads((folder / "request.json").read_text(encoding="utf-8"))
    lp, start = read_model(folder / "model.npz")
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.passModel(lp)
    for name, value in request["options"].items():
        highs.setOptionValue(name, value)
    columns = request["columns"]
    if start is not None:
        solution = highspy.HighsSolution()
        solution.col_value = start
        solution.value_valid = True
        highs.setSolution(solution)
    if lp.num_col_ and any(t != highspy.HighsVarType.kContinuous for t in lp.integrality_):
        saved = [time.perf_counter()]

        def improving(event) -> None:
            out = event.data_out
            values = np.asarray(out.mip_solution, dtype=float)
            save(folder / "best.npz", objective=out.objective_function_value, bound=out.mip_dual_bound,
                 values=values if columns is None else values[columns])

        def bound(event) -> None:
            if time.perf_counter() - saved[0] >= BOUND_EVERY:
                saved[0] = time.perf_counter()
                partial = folder / "bound.partial.npy"
                np.save(partial, np.float64(event.data_out.mip_dual_bound))
                os.replace(partial, folder / "bound.npy")

        highs.cbMipImprovingSolution.subscribe(improving)
        highs.cbMipInterrupt.subscribe(bound)
    if request["ends"] is not None:
        highs.setOptionValue("time_limit", max(1e-3, request["ends"] - time.monotonic()))
    highs.run()
    info, status = highs.getInfo(), highs.getModelStatus()
    solved = info.primal_solution_status == 2
    summary = {"status": status.name, "objective": info.objective_function_value if solved else None,
               "bound": info.mip_dual_bound if info.mip_node_count >= 0 else None,
               "seconds": highs.getRunTime(), "nodes": info.mip_node_count}
    values = np.asarray(highs.getSolution().col_value, dtype=float) if solved else None
    if request.get("cuts") and status == highspy.HighsModelStatus.kOptimal:
        from designer.solve.cuts import as_data, cut_rounds

        ends = None if request["ends"] is None else time.perf_counter() + request["ends"] - time.monotonic()
        added, best = cut_rounds(highs, request["cuts"], highs.getRunTime(), ends)
        summary |= {"objective": best["objective"], "cuts": as_data(added), "seconds": highs.getRunTime()}
        values = np.asarray(best["col_value"], dtype=float)
    if summary["bound"] is not None and not np.isfinite(summary["bound"]):
        summary["bound"] = None
    arrays = {"summary": np.asarray(json.dumps(summary))}
    if solved:
        arrays["values"] = values if columns is None else values[columns]
    save(folder / "answer.npz", **arrays)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops this process
    run(Path(sys.argv[1]))
