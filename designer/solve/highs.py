"""One HiGHS run of a Pyomo model: options, the outcome read from incumbent and bound, never assumed."""

from __future__ import annotations

import math
import os
import threading
import time
import weakref
from dataclasses import dataclass

import highspy
import numpy as np
import pyomo.environ as pyo
from pyomo.contrib.solver.common.results import Results, SolutionStatus, TerminationCondition
from pyomo.contrib.solver.solvers.highs import Highs, HighsSolutionLoader
from pyomo.repn.linear import LinearRepnVisitor

from designer.solve import site_sets
from designer.solve.dive import rounded_design
from designer.solve.process import HighsProcess
from models.network import add_budget_row


@dataclass(frozen=True)
class SolveOptions:
    time_limit: float | None = None
    mip_gap: float = 1e-4
    presolve: bool = False  # see _run_highs: on only where the result is a candidate checked again
    threads: int | None = None
    progress: object = None  # callable(str) for progress lines, or None
    export_model: str | None = None  # write the model (symbolic names) to this .mps/.lp path
    diagnose: bool = True  # on infeasibility, say what to change (designer.solve.diagnose: an elastic model)
    rens: bool = False  # HiGHS's RENS heuristic (see _run_highs): on where the first design is what counts
    dive: bool = False  # a design rounded out of the LP (designer.solve.dive) as HiGHS's start: a start's completion
    # seconds after which a run that holds a design stops, its time limit then the rest: a start's completion
    # (designer.solve.start.complete) may run past its share while it has no design. A run in this process (a
    # model of fewer than PROCESS_COLUMNS columns, quick to complete) stops there whatever it holds
    settle_after: float | None = None
    # a design searched at the grid's splits polished at its node counts (designer.solve.polish); off: the grid's
    polish: bool = True

    @property
    def highs_threads(self) -> int:
        """The threads HiGHS runs with: ``threads``, else THREADS."""
        return self.threads or THREADS


@dataclass
class Outcome:
    """What HiGHS returned for one solve."""

    status: str  # optimal | feasible | infeasible | no_solution (limits) | failed (numerics, solver error)
    objective: float | None
    bound: float | None
    gap: float | None
    seconds: float
    termination: str
    highs_seconds: float = 0.0  # HiGHS's own run time, without Pyomo's translation
    stop: str = ""  # no_solution and failed: why HiGHS stopped without a design, in words
    start_refused: bool = False  # the start given breaks a row, bound or integrality of the model (not given)
    by: str = "HiGHS"  # what searched: HiGHS on the whole model, or set by set over the open sites (site_sets)


# HiGHS's threads when --threads is not given. Its MIP search runs on one worker (HiGHS 1.15) whatever the count,
# but its root starts an analytic centre (an interior-point solve of the whole LP, 200 iterations, no time limit,
# hard-coded in HighsMipSolverData::evaluateRootNode) as a task that runs beside the cut loop only when a second
# thread exists; with one, the root waits for it (28 s of the 50-site bench instance's first 54 s, past the time
# limit and the guard's cancel; 7.5 s with two, and three more cut rounds in 60 s). The LP solves stay serial
# (parallel "off"), as on one thread: the second core is the analytic centre's.
THREADS = min(2, os.cpu_count() or 1)
_scheduler_threads: int | None = None  # the thread count of HiGHS's scheduler in this process

#: the seconds Pyomo took to translate each model alive for HiGHS, its last run's (translation_seconds)
TRANSLATION: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
GUARD = 0.05  # HiGHS is stopped at its time limit plus this share of it (and 0.5 s) when it has not stopped itself
#: a run with a deadline of a model of this many columns or more goes to a process of its own (designer.solve.process),
#: where the deadline holds whatever HiGHS does: the analytic centre it may wait for grows with the model (200
#: interior-point iterations, measured alone: 0.19 s at 2,743 columns, 2.1 s at 15,578, 60 s at 128,663) and
#: sending the model costs ~0.3 s (a process started, arrays written and read)
PROCESS_COLUMNS = 10_000
#: the share of a run's time its dive may take (GuardedHighs.dive), and its seconds in a run without a limit
DIVE_SHARE, DIVE_SECONDS = 0.5, 60.0
#: the columns from which a run asked to dive does: below, HiGHS finds a completion's design at its root at once
#: (the default and 6-site examples: 0.03-0.06 s, and 0.04 s more with the dive)
DIVE_COLUMNS = PROCESS_COLUMNS
#: the termination of a run in a process, by its HighsModelStatus name (Pyomo's reading of the same statuses)
TERMINATIONS = {
    "kOptimal": TerminationCondition.convergenceCriteriaSatisfied,
    "kInfeasible": TerminationCondition.provenInfeasible,
    "kUnboundedOrInfeasible": TerminationCondition.infeasibleOrUnbounded,
    "kUnbounded": TerminationCondition.unbounded,
    "kObjectiveBound": TerminationCondition.objectiveLimit,
    "kObjectiveTarget": TerminationCondition.objectiveLimit,
    "kTimeLimit": TerminationCondition.maxTimeLimit,
    "kInterrupt": TerminationCondition.maxTimeLimit,  # the process ignores Ctrl-C: only its deadline stops it
    "kIterationLimit": TerminationCondition.iterationLimit,
    "kSolutionLimit": TerminationCondition.iterationLimit,
    "kModelEmpty": TerminationCondition.unknown,
    "kNotset": TerminationCondition.unknown,
    "kUnknown": TerminationCondition.unknown,
}


class GuardedHighs(Highs):
    """Pyomo's HiGHS interface with a start and a wall-clock guard.

    ``start``: give HiGHS the values the model's variables hold as its first incumbent (a complete design: HiGHS
    checks it and keeps it when feasible). ``ends`` (perf_counter seconds): when the run must end; HiGHS's time
    limit is what is left of it once Pyomo has translated the model (seconds for a large one). ``deadline``: HiGHS
    checks its limit only between the steps of its search, and a root heuristic of a large model can overrun it many
    times; at the deadline a timer asks HiGHS to stop (cancelSolve), and the run ends at its next check with the
    best design found, as a time limit. A stop HiGHS reports that the timer did not ask for is Ctrl-C. A model of
    PROCESS_COLUMNS columns or more, run with a deadline, runs in a process of its own (designer.solve.process),
    stopped at the deadline with the best design it saved. ``translated``: called with the translated HiGHS model
    and the column of each variable (id -> index) before HiGHS runs (designer.solve.relaxation reads the LP there).
    ``meanwhile``: work for this process while HiGHS runs (the solve translates the whole model while its chosen
    pairs' completion runs, designer.solve.start.complete_chosen): a run given one goes to a process of its own
    whatever its size and whether it has a deadline or not (50 sites, 60 switch models, no time limit: the 16 s
    translation beside the 12 s completion, the solve 63 -> 49 s), and ``meanwhile`` is called once it runs there;
    the wait for the process begins after it, and stops the process at once if the deadline has passed.

    ``sites``: where 1 to site_sets.SITES open_s are free in a model of fewer than site_sets.COLUMNS columns, the run
    is designer.solve.site_sets's search over the sets of open sites, on the translated model, under the same timer
    (none with a settle point: the search has no first design to stop at).

    A fixed variable stays a column with its coefficients (fixed bounds), not a constant folded into the rows:
    the translated model is then the whole model's, whatever is fixed."""

    start: bool = False
    dive: bool = False  # without ``start``, DIVE_COLUMNS columns or more: the LP's rounded design (designer.solve.dive)
    # is the start, when it has one
    ends: float | None = None
    deadline: float | None = None
    settle: float | None = None  # perf_counter seconds: SolveOptions.settle_after
    guarded: bool = False  # the timer stopped HiGHS
    refused: bool = False  # the start broke the translated model (start_violation) and was not given
    given: float | None = None  # the time limit HiGHS was given (s)
    translated = None  # callable(highspy.Highs, dict) or None
    meanwhile = None  # callable() run here while HiGHS runs in a process of its own, or None
    called = 0.0  # perf_counter when solve was called (set_instance, the translation, follows)
    start_values = None  # the start given to HiGHS (one value per column), or None
    apart_seconds: float | None = None  # HiGHS's run time in its process or the site sets' search's, else None
    sites: bool = False  # search set by set over the model's open sites where it applies (designer.solve.site_sets)
    by: str = "HiGHS"  # Outcome.by

    def __init__(self, **kwds):
        super().__init__(**{"treat_fixed_vars_as_params": False, **kwds})

    def solve(self, model, **kwds):
        self.called = time.perf_counter()
        return super().solve(model, **kwds)

    def add_constraints(self, cons: list) -> None:
        """The rows as Pyomo's persistent interface adds them (the columns in the order their variables first
        appear, the same bookkeeping), in one walk of each row where Pyomo makes three (its variables, a standard
        repn, and its bounds at each reading): Pyomo's linear repn visitor, which also walks a named
        subexpression shared by rows once. Fixed variables are unfixed for the walk, so they stay columns."""
        if not cons:
            return
        self._sol = None
        fixed = [v for v in cons[0].model().component_data_objects(pyo.Var, descend_into=True) if v.fixed]
        for v in fixed:
            v.unfix()
        walker = LinearRepnVisitor({})
        rows, variables = [], {}
        try:
            for con in cons:
                if con in self._active_constraints:
                    raise ValueError(f"Constraint {con.name} has already been added")
                lower, body, upper = con.to_bounded_expression(evaluate_bounds=True)
                repn = walker.walk_expression(body)
                if repn.nonlinear is not None:
                    raise ValueError(f"{con.name} is not linear")
                for v in repn.linear:  # the walk's result has its multiplier applied and no zero coefficient
                    variables.setdefault(v, walker.var_map[v])
                rows.append((con, lower, upper, repn.constant, repn.linear))
        finally:
            for v in fixed:
                v.fix()
        self.add_variables([v for key, v in variables.items() if key not in self._referenced_variables])
        columns = self._pyomo_var_to_solver_var_map
        lbs, ubs, starts, index, coefficients = [], [], [], [], []
        for con, lower, upper, constant, linear in rows:
            self._active_constraints[con] = con.expr
            self._named_expressions[con] = []
            self._vars_referenced_by_con[con] = [variables[v] for v in linear]
            for v in linear:
                self._referenced_variables[v][0][con] = None
            starts.append(len(coefficients))
            index.extend(columns[v] for v in linear)
            coefficients.extend(linear.values())
            lbs.append(-highspy.kHighsInf if lower is None else lower - constant)
            ubs.append(highspy.kHighsInf if upper is None else upper - constant)
            row = len(self._pyomo_con_to_solver_con_map)
            self._pyomo_con_to_solver_con_map[con] = row
            self._solver_con_to_pyomo_con_map[row] = con
        self._solver_model.addRows(len(lbs), np.array(lbs, dtype=np.double), np.array(ubs, dtype=np.double),
                                   len(coefficients), np.array(starts), np.array(index),
                                   np.array(coefficients, dtype=np.double))

    def _solve(self):
        TRANSLATION[self._model] = time.perf_counter() - self.called
        if self.translated is not None:
            self.translated(self._solver_model, self._pyomo_var_to_solver_var_map)
        if self.start:
            self._set_start()
        elif self.dive and self._solver_model.getNumCol() >= DIVE_COLUMNS:
            self._dive_start()
        if self.ends is not None:
            self.given = self._active_config.time_limit = max(1e-6, self.ends - time.perf_counter())
        large = self._solver_model.getNumCol() >= PROCESS_COLUMNS
        if self.meanwhile is not None or (self.deadline is not None and large):
            results = self._solve_apart()
            if results is not None:
                return results
        free = self._free_sites()
        if self.settle is not None:  # here the run stops at its settle point, holding a design or not
            self.given = self._active_config.time_limit = max(1e-6, self.settle - time.perf_counter())
            self.deadline = min(self.deadline, self.settle + (self.deadline - self.ends))
        timer = None
        if self.deadline is not None:
            timer = threading.Timer(max(0.0, self.deadline - time.perf_counter()), self._stop)
            timer.daemon = True
            timer.start()
        try:
            results = self._solve_by_sites(free) if free else None
            if results is not None:
                return results
            if free and self.ends is not None:  # the search's LPs took some of the time
                self.given = self._active_config.time_limit = max(1e-6, self.ends - time.perf_counter())
            return super()._solve()
        finally:
            if timer is not None:
                timer.cancel()

    def _stop(self) -> None:
        self.guarded = True
        self._solver_model.cancelSolve()

    def _options(self) -> dict:
        """The HiGHS options Pyomo would give the run here."""
        config = self._active_config
        options = {"threads": config.threads, "time_limit": config.time_limit, "mip_rel_gap": config.rel_gap,
                   "mip_abs_gap": config.abs_gap, **dict(config.solver_options.items())}
        return {k: v for k, v in options.items() if v is not None}

    def _free_sites(self) -> list[int]:
        """The columns of the model's free open_s when the run searches set by set (designer.solve.site_sets):
        asked (``sites``), no settle point, and the search applies to the model; else []."""
        if not self.sites or self.settle is not None or not hasattr(self._model, "open"):
            return []
        columns = self._pyomo_var_to_solver_var_map
        return site_sets.applies(self._solver_model, [columns[id(v)] for v in self._model.open.values()
                                                      if id(v) in columns])

    def _solve_by_sites(self, free: list[int]) -> Results | None:
        """The run as designer.solve.site_sets's search over the sets of open sites, on the translated model with
        the options Pyomo would give it; None where the search leaves the run to HiGHS on the whole model."""
        highs = self._solver_model
        highs.setOptionValue("output_flag", False)
        for name, value in self._options().items():
            highs.setOptionValue(name, value)
        highs.HandleKeyboardInterrupt = True
        answer = site_sets.search(highs, free, self._active_config.rel_gap or 0.0, self.ends, self.start_values,
                                  lambda: self.guarded)
        if answer is None:
            return None
        self.apart_seconds = answer["seconds"]
        self.by = f"HiGHS set by set over the open sites ({answer['solved']} of {answer['sets']} sets solved)"
        return self._results(answer)

    def _solve_apart(self) -> Results | None:
        """The run in a process of its own with the options Pyomo would give HiGHS here, stopped at the deadline;
        its answer read as Pyomo reads a run's (_postsolve). None when the process cannot be made (no temporary
        folder, no room for a process): the run is then made here, under the timer."""
        try:
            run = HighsProcess(self._solver_model.getLp(), self._options(), self.start_values, ends=self.ends)
        except OSError:
            return None
        with run:
            if self.meanwhile is not None:
                self.meanwhile()
            answer = run.wait(self.deadline, self.settle)
        self.guarded = answer["stopped"]  # a run stopped there: HiGHS ran until then
        ran = time.perf_counter() - self.called - TRANSLATION[self._model]
        self.apart_seconds = ran if self.guarded else answer["seconds"]
        return self._results(answer)

    def _results(self, answer: dict) -> Results:
        """A run's answer (designer.solve.process's) read as Pyomo reads a run's (_postsolve)."""
        config = self._active_config
        results = Results()
        results.solution_loader = HighsSolutionLoader(self, self._model)
        results.solver_name, results.solver_version, results.solver_config = self.name, self.version(), config
        self._sol = highspy.HighsSolution()
        solved = answer["values"] is not None
        if solved:
            self._sol.col_value = answer["values"]
            self._sol.value_valid = True
        results.solution_status = (SolutionStatus.optimal if answer["status"] == "kOptimal" else
                                   SolutionStatus.feasible if solved else SolutionStatus.noSolution)
        results.termination_condition = TERMINATIONS.get(answer["status"], TerminationCondition.error)
        results.incumbent_objective = answer["objective"] if solved else None
        results.objective_bound = answer["bound"]
        results.timing_info.highs_time = answer["seconds"]
        return results

    def highs_seconds(self) -> float:
        """HiGHS's own run time in the last run (in its process for a run there; the whole search for a run set by
        set over the open sites)."""
        return self.apart_seconds if self.apart_seconds is not None else float(self._solver_model.getRunTime())

    def _set_start(self) -> None:
        columns = self._pyomo_var_to_solver_var_map
        values = [0.0] * len(columns)
        for var in self._model.component_data_objects(pyo.Var, descend_into=True):
            if id(var) in columns and var.value is not None:
                values[columns[id(var)]] = float(var.value)
        if start_violation(self._solver_model, values) > 0:
            self.refused = True
            return
        self._give(values)

    def _dive_start(self) -> None:
        """The LP's rounded design as the start (a design of the translated model, or none given), the dive given
        DIVE_SHARE of the time left to the run's settle point, else its end (DIVE_SECONDS without a limit)."""
        horizon = self.settle if self.settle is not None else self.ends
        seconds = DIVE_SECONDS if horizon is None else DIVE_SHARE * max(0.0, horizon - time.perf_counter())
        values = rounded_design(self._solver_model.getLp(), seconds, scheduler_threads())
        if values is not None and start_violation(self._solver_model, values) == 0:
            self._give(list(values))

    def _give(self, values: list[float]) -> None:
        solution = highspy.HighsSolution()
        solution.col_value = values
        solution.value_valid = True
        self._solver_model.setSolution(solution)
        self.start_values = values

    def _postsolve(self, stream):
        results = super()._postsolve(stream)
        if self._solver_model.getModelStatus() == highspy.HighsModelStatus.kInterrupt:
            results.termination_condition = (TerminationCondition.maxTimeLimit if self.guarded
                                              else TerminationCondition.interrupted)
        return results


def start_violation(solver: highspy.Highs, values: list[float], tolerance: float = 1e-6) -> float:
    """The most by which ``values`` (one per column) break a row, a column bound or an integrality of the model
    translated in ``solver``, beyond ``tolerance`` (relative to the bound, HiGHS's MIP feasibility tolerance); 0
    when they are a design of it. A start is checked here before HiGHS is given it, so a start that is not a
    design of this model (one completed on another model, designer.solve.start) is never kept as the answer."""
    lp = solver.getLp()
    x = np.asarray(values, dtype=float)
    matrix = lp.a_matrix_
    starts, index = np.asarray(matrix.start_), np.asarray(matrix.index_, dtype=np.int64)
    coefficients = np.asarray(matrix.value_, dtype=float)
    if matrix.format_ == highspy.MatrixFormat.kColwise:
        terms = coefficients * np.repeat(x, np.diff(starts))
        rows = np.bincount(index, weights=terms, minlength=lp.num_row_)
    else:
        rows = np.bincount(np.repeat(np.arange(lp.num_row_), np.diff(starts)), weights=coefficients * x[index],
                           minlength=lp.num_row_)

    def beyond(value, lower, upper):
        lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        with np.errstate(invalid="ignore"):
            over = np.maximum(lower - value - tolerance * np.maximum(1, np.abs(lower)),
                              value - upper - tolerance * np.maximum(1, np.abs(upper)))
        return float(np.max(np.nan_to_num(over, nan=0.0, neginf=0.0), initial=0.0))

    integer = np.asarray([t != highspy.HighsVarType.kContinuous for t in lp.integrality_], dtype=bool)
    fraction = float(np.max(np.abs(x[integer] - np.round(x[integer])), initial=0.0)) if len(integer) else 0.0
    return max(beyond(rows, lp.row_lower_, lp.row_upper_), beyond(x, lp.col_lower_, lp.col_upper_),
               fraction - tolerance if fraction > tolerance else 0.0)


# Why HiGHS stopped without a design when it proved nothing: a limit the planner can raise (no_solution),
# or a failure more time does not mend (failed). A numerical failure is never passed off as a time limit.
TIME_OUT = "the time limit ran out before HiGHS found a design"
LIMITS = {
    TerminationCondition.maxTimeLimit: TIME_OUT,
    TerminationCondition.iterationLimit: "HiGHS reached its iteration or node limit before finding a design",
}
FAILURES = {
    TerminationCondition.error: "HiGHS reported a solver error (numerical trouble or an internal failure)",
    TerminationCondition.unknown: "HiGHS stopped without a verdict, the sign of numerical trouble",
    TerminationCondition.minStepLength: "HiGHS stalled on numerical trouble (minimum step length)",
    TerminationCondition.locallyInfeasible: "HiGHS found no design but could not prove there is none "
                                            "(numerical trouble)",
    TerminationCondition.unbounded: "HiGHS found the cost unbounded below, which no valid model is",
    TerminationCondition.emptyModel: "HiGHS was given an empty model",
    TerminationCondition.licensingProblems: "HiGHS reported a licensing problem",
}


def run_highs(model, options: SolveOptions, scale: float = 1.0, cutoff: float | None = None,
              stop_below_cutoff: bool = False, start: bool = False, translated=None, meanwhile=None,
              sites: bool = False) -> Outcome:
    """One HiGHS solve; the gap comes from incumbent and bound, never assumed. Objective and bound are
    multiplied by ``scale`` (the model states costs in millions).

    ``cutoff`` (USD) is the budget on the cost objective. It is first given to HiGHS as its objective
    bound, which spares the LP the dense budget row (that row slows HiGHS's cut loop many times over);
    a result is then checked against it: a design over budget whose bound is within it is solved
    again with the row. ``stop_below_cutoff`` ends a solve at its first design within the cutoff. ``start``:
    the values the model's variables hold are HiGHS's first incumbent; ``translated`` and ``meanwhile``:
    GuardedHighs's (the first run's only); ``sites``: search set by set over the model's open sites where that
    applies (designer.solve.site_sets)."""
    outcome = _run_highs(model, options, scale, cutoff, stop_below_cutoff, start, translated, meanwhile, sites)
    if cutoff is None or outcome.objective is None or outcome.objective <= cutoff * (1 + 1e-9):
        return outcome
    if outcome.bound is not None and outcome.bound > cutoff * (1 + 1e-9):
        return Outcome("infeasible", None, outcome.bound, None, outcome.seconds, "cost bound above the budget",
                       outcome.highs_seconds)
    add_budget_row(model, cutoff)
    try:
        again = _run_highs(model, options, scale, None, stop_below_cutoff=False, start=start, sites=sites)
    finally:
        model.del_component(model.budget)
    again.seconds += outcome.seconds
    again.highs_seconds += outcome.highs_seconds
    return again


def _run_highs(model, options: SolveOptions, scale: float, cutoff: float | None,
               stop_below_cutoff: bool, start: bool = False, translated=None, meanwhile=None,
               sites: bool = False) -> Outcome:
    solver = GuardedHighs()
    solver.start, solver.translated, solver.meanwhile, solver.sites = start, translated, meanwhile, sites
    solver.dive = options.dive
    if options.time_limit is not None:
        solver.ends = time.perf_counter() + options.time_limit
        solver.deadline = solver.ends + options.time_limit * GUARD + 0.5
        if options.settle_after is not None and options.settle_after < options.time_limit:
            solver.settle = time.perf_counter() + options.settle_after
    config = {"load_solutions": False, "raise_exception_on_nonoptimal_result": False,
              "rel_gap": options.mip_gap,
              # HiGHS's MIP presolve (1.14-1.16) has returned non-optimal optima with gap 0 on our models
              # (tests/test_oracle.py keeps the counterexamples): a design is never passed off as optimal.
              "solver_options": {"presolve": "on" if options.presolve else "off",
                                 # RENS, a sub-MIP around the root LP, spent 1.5 s of the default example's
                                 # 3.9 s and found nothing the other heuristics miss (2.4 s without it; the
                                 # other examples unchanged); but it is what finds the first design of a
                                 # large plan's completion (designer.solve.start): 50 sites, none in 60 s without
                                 "mip_heuristic_run_rens": options.rens}}
    if cutoff is not None:
        limit = cutoff / scale * (1 + 1e-9)
        config["solver_options"]["objective_bound"] = limit
        if stop_below_cutoff:
            config["solver_options"]["objective_target"] = limit
    if options.time_limit is not None:
        config["time_limit"] = options.time_limit
    config["threads"] = threads = options.highs_threads
    config["solver_options"]["parallel"] = "off"  # see THREADS
    global _scheduler_threads
    if threads != _scheduler_threads:
        # HiGHS keeps one thread scheduler per process and refuses a run asking for another thread count.
        highspy.Highs.resetGlobalScheduler(True)
        _scheduler_threads = threads
    began = time.perf_counter()
    res = solver.solve(model, **config)
    seconds = time.perf_counter() - began
    tc = res.termination_condition
    has_solution = res.solution_status in (SolutionStatus.optimal, SolutionStatus.feasible)
    if has_solution:
        res.solution_loader.load_vars()
    obj = res.incumbent_objective * scale if has_solution else None
    bound = res.objective_bound
    bound = bound * scale if bound is not None and math.isfinite(bound) else None
    gap = relative_gap(obj, bound)
    status, stop = outcome_status(tc, has_solution)
    highs_seconds = solver.highs_seconds() if getattr(solver, "_solver_model", None) else seconds
    return Outcome(status, obj, bound, gap, seconds, str(tc.name), highs_seconds, stop, solver.refused,
                   solver.by)


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """HiGHS's relative gap of a design's cost to a lower bound, |objective - bound| / |objective|; None without
    either."""
    if objective is None or bound is None:
        return None
    return abs(objective - bound) / max(abs(objective), 1e-9)


def scheduler_threads() -> int:
    """The thread count of HiGHS's scheduler in this process: another HiGHS run here must ask for the same."""
    return _scheduler_threads or THREADS


def translate(model) -> tuple[highspy.Highs, dict]:
    """``model`` translated for HiGHS as a run of it is (GuardedHighs: fixed variables stay columns), without a run:
    the highspy model and each variable's column (id -> index). Its time is the model's translation_seconds."""
    solver = _translated(model)
    return solver._solver_model, solver._pyomo_var_to_solver_var_map


def translate_rows(model, block) -> tuple[highspy.Highs, dict, list[int]]:
    """translate(model) and the rows of the active constraints of ``block`` (a block of the model)."""
    solver = _translated(model)
    rows = solver._pyomo_con_to_solver_con_map
    return (solver._solver_model, solver._pyomo_var_to_solver_var_map,
            [rows[c] for c in block.component_data_objects(pyo.Constraint, active=True)])


def _translated(model) -> GuardedHighs:
    solver = GuardedHighs()
    started = time.perf_counter()
    solver.set_instance(model)
    TRANSLATION[model] = time.perf_counter() - started
    return solver


def translation_seconds(model) -> float:
    """What a HiGHS run of ``model`` spends before HiGHS starts (Pyomo's translation), as its last run did; 0 before
    the first. 233k variables and 348k rows: 11.5 s, a run a time limit must leave room for."""
    return TRANSLATION.get(model, 0.0)


def outcome_status(tc: TerminationCondition, has_solution: bool) -> tuple[str, str]:
    """(status, stop) of a HiGHS termination; ``stop`` says why no design came (no_solution, failed)."""
    if tc == TerminationCondition.interrupted:
        raise KeyboardInterrupt  # Ctrl-C reached HiGHS: the run stops, whatever it held
    if has_solution:  # optimal only when proven; an objective target reached is a first design within the cutoff
        return ("optimal" if tc == TerminationCondition.convergenceCriteriaSatisfied else "feasible"), ""
    if tc in (TerminationCondition.provenInfeasible, TerminationCondition.infeasibleOrUnbounded,
              TerminationCondition.objectiveLimit):  # the last: proven that no design is within the cutoff
        return "infeasible", ""
    if tc in LIMITS:
        return "no_solution", LIMITS[tc]
    return "failed", FAILURES.get(tc, f"HiGHS stopped: {tc.name}")

