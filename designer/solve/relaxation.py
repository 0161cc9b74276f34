"""The model's LP relaxation, solved in a second process while HiGHS completes the greedy plan in this one. Its cost
bounds every design of the model from below (the budget row aside, which only raises it), and its values of the site
decisions guide a second start (designer.solve.start.relaxation_start). The LP is the one the completion's run
translated (GuardedHighs ``translated``: fixed variables stay columns), with the bounds of the decisions the plan
fixed put back; it goes to the second process as a HiGHS run of its own (designer.solve.process); a small LP is
solved at once in this process (BESIDE_COLUMNS), before any start (Relaxation.launch_here). On two cores the two
solves overlap: 50 candidate sites, 1M GPUs, the completion 11-12 s of HiGHS and the LP 10-13 s, 31 s one after the
other, 15 s side by side.

A small LP is solved twice, without and with the model's tightening rows (models.network.define_tightening), and the
rows stay in the model (for every later run) only where they raise its bound by more than the gap asked: rows that
do not move the bound only move HiGHS's path. The 6-site oracle instance: $3.428M -> $3.616M (the optimum $3.775M),
ours 0.68-1.08 -> 0.49-0.60 s; the default example: +0.004% against a gap of 0.01%, left out.
"""

from __future__ import annotations

import time

import highspy
import numpy as np

from designer.solve.cuts import as_data, cut_rounds, cut_spec, from_data
from designer.solve.process import HighsProcess
from models.network import add_connectivity_cuts

GUARD = 1.0  # s past the time left that the LP's process is given to answer before it is stopped
#: an LP of fewer columns is solved here at once: its process would cost more than the solve (0.14 s to start, read
#: and answer against 0.03 s of HiGHS at 2,820 columns; 0.8 s at 15,607)
BESIDE_COLUMNS = 5_000
#: the LP's HiGHS options (one thread in its process; the scheduler's here). LP presolve on (an LP's optimum is the
#: same with it, its value the bound; the MIP presolve the solve keeps off is another code path): 50 candidate sites,
#: 1M GPUs, HiGHS alone 18.7 -> 14.4 s to the same $81,627.7M
LP_OPTIONS = {"solve_relaxation": True, "presolve": "on", "parallel": "off"}
#: what an LP's run ended in, by its HighsModelStatus name (any other: failed)
LP_STATUS = {"kOptimal": "optimal", "kTimeLimit": "no_solution"}


class Relaxation:
    """The LP relaxation of ``model`` in a process of its own: ``launch`` (the completion's ``translated``
    callback) starts it on the translated model, once (an LP of fewer than BESIDE_COLUMNS columns is solved there
    and then, in this process); ``result`` waits for it and returns its Outcome; leaving the ``with`` block stops
    it if it still runs and removes its files. ``freed``: the variables whose bounds the LP takes from their domains
    (the decisions a start fixes); ``ends``: when the solve's time is up (perf_counter seconds, None for no
    limit), the LP's time limit and the end of the wait for it; ``gap``: the relative gap asked, which the tightening
    rows must raise a small LP's bound by to be kept."""

    def __init__(self, model, freed: list, ends: float | None, scale: float, gap: float = 0.0):
        self.model, self.freed, self.ends, self.scale, self.gap = model, freed, ends, scale, gap
        self.process: HighsProcess | None = None
        self.answer: dict | None = None  # a small LP's, solved at launch
        self.launched = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.process is not None:
            self.process.__exit__(*exc)

    def launch(self, translated: highspy.Highs, columns: dict) -> None:
        """Write the translated model with the freed variables' domain bounds and start the LP's process. A file or
        process that cannot be made (a full temporary folder, no room for a process) leaves the solve without the
        LP, as a plan without a completion does: never without its design."""
        if self.launched:
            return
        self.launched = True
        lp = self.relaxed(translated, columns)
        wanted = [columns[id(v)] for v in self.model.open.values()]
        spec = cut_spec(self.model, columns)
        if lp.getNumCol() < BESIDE_COLUMNS:
            from designer.solve.highs import scheduler_threads

            self.answer = solve_lp(lp, self.time_left(), wanted, scheduler_threads(), spec, self.ends)
            return
        try:
            self.process = HighsProcess(lp.getLp(), LP_OPTIONS | {"threads": 1}, columns=wanted, ends=self.ends,
                                        cuts=spec)
        except OSError:
            self.process = None

    def relaxed(self, translated: highspy.Highs, columns: dict) -> highspy.Highs:
        """A copy of the translated model with the freed variables' domain bounds (its integrality is left to the
        solve: LP_OPTIONS solves the relaxation)."""
        freed = [v for v in self.freed if id(v) in columns]
        lp = highspy.Highs()
        lp.setOptionValue("output_flag", False)
        lp.passModel(translated.getLp())
        if freed:
            lp.changeColsBounds(len(freed), np.array([columns[id(v)] for v in freed], dtype=np.int32),
                                np.array([v.lb for v in freed], dtype=float),
                                np.array([v.ub for v in freed], dtype=float))
        return lp

    def time_left(self) -> float | None:
        return None if self.ends is None else self.ends - time.perf_counter()

    def launch_here(self) -> bool:
        """Launch the LP now when it is solved here at once, before any start: True then; else (False) nothing is
        launched, and the greedy completion's translation launches it in its process. Told by the model's variables
        (fewer than BESIDE_COLUMNS; its columns are no more) before any translation: a larger model is not translated
        here only to be found too large (50 sites, 1M GPUs: 2.8 s). The LP is solved without and with the model's
        tightening rows (module docstring), which are left active only where they raise its bound by more than
        ``gap``."""
        if self.model.nvariables() >= BESIDE_COLUMNS:
            return False
        from designer.solve.highs import scheduler_threads, translate, translate_rows

        tight = getattr(self.model, "tight", None)  # a model built without bounds (the elastic one) has none
        if tight is None:
            self.launch(*translate(self.model))
            return True
        self.launched = True
        tight.activate()
        translated, columns, rows = translate_rows(self.model, tight)
        lp = self.relaxed(translated, columns)
        wanted = [columns[id(v)] for v in self.model.open.values()]
        spec = cut_spec(self.model, columns)
        table = lp.getLp()
        index = np.array(rows, dtype=np.int32)
        lp.changeRowsBounds(len(rows), index, np.full(len(rows), -highspy.kHighsInf),
                            np.full(len(rows), highspy.kHighsInf))
        loose = solve_lp(lp, self.time_left(), wanted, scheduler_threads(), spec, self.ends)
        lp.changeRowsBounds(len(rows), index, np.asarray(table.row_lower_)[index], np.asarray(table.row_upper_)[index])
        tightened = solve_lp(lp, self.time_left(), wanted, scheduler_threads(), spec, self.ends)
        tightened["cuts"] = loose.get("cuts", []) + tightened.get("cuts", [])  # the loose solve's rows stay in lp
        if loose["status"] == tightened["status"] == "optimal" and (
                tightened["objective"] - loose["objective"] > self.gap * abs(tightened["objective"])):
            self.answer = tightened
        else:
            tight.deactivate()
            self.answer = loose
        return True

    def result(self):
        """The LP's Outcome (status optimal with its cost as ``bound``; its values of ``model.open`` put in the
        model), or None when it was not launched. ``seconds`` is the wall time spent waiting for it here (the
        rest overlapped the completion); a process that does not answer in its time limit is stopped."""
        if self.answer is not None:
            return self.outcome(self.answer, 0.0)
        if self.process is None:
            return None
        waited = time.perf_counter()
        answer = self.process.wait(None if self.ends is None else self.ends + GUARD)  # stopped: kInterrupt, failed
        summary = {"status": LP_STATUS.get(answer["status"], "failed"), "termination": answer["status"],
                   "seconds": answer["seconds"]}
        if summary["status"] == "optimal":
            summary |= {"objective": answer["objective"], "values": list(answer["values"]),
                        "cuts": answer.get("cuts", [])}
        return self.outcome(summary, time.perf_counter() - waited)

    def outcome(self, answer: dict, seconds: float):
        """The Outcome of an answer (solve_lp's), its values of ``model.open`` put in the model."""
        from designer.solve.highs import Outcome

        status = answer.get("status", "failed")
        if status != "optimal":
            return Outcome(status, None, None, None, seconds, answer.get("termination", "no answer"),
                           answer.get("seconds", 0.0))
        for var, value in zip(self.model.open.values(), answer["values"]):
            var.set_value(value, skip_validation=True)
        if answer.get("cuts"):
            add_connectivity_cuts(self.model, from_data(answer["cuts"]))
        bound = answer["objective"] * self.scale
        return Outcome("optimal", bound, bound, None, seconds, "optimal", answer["seconds"])


def solve_lp(lp: highspy.Highs, time_limit: float | None, columns: list[int], threads: int, cuts: dict | None = None,
             ends: float | None = None) -> dict:
    """Solve the relaxation of ``lp`` here (LP_OPTIONS, ``threads`` the scheduler's) and answer: status,
    termination, HiGHS's seconds and, when optimal, the objective and the listed columns' values; with ``cuts``
    (cut_spec's), after rounds of connectivity cuts until ``ends`` (designer.solve.cuts), and the rows they added
    (``cuts``, as data)."""
    for option, value in (LP_OPTIONS | {"threads": threads}).items():
        lp.setOptionValue(option, value)
    if time_limit is not None:
        lp.setOptionValue("time_limit", max(1e-3, float(time_limit)))
    lp.run()
    status = lp.getModelStatus()
    answer = {"status": LP_STATUS.get(status.name, "failed"), "termination": status.name, "seconds": lp.getRunTime()}
    if answer["status"] == "optimal":
        added, best = cut_rounds(lp, cuts, lp.getRunTime(), ends)
        values = best["col_value"]
        answer |= {"objective": best["objective"], "values": [values[c] for c in columns], "cuts": as_data(added),
                   "seconds": lp.getRunTime()}  # HiGHS's clock: every round's run
    return answer
