"""The cost model solved one set of open sites at a time, where the candidate sites left free are few.

The LP relaxation of the model opens sites fractionally (a capacitated facility location: each open_s pays its
site's fixed costs in proportion), and on small workbooks HiGHS spends most of its run closing that gap with cuts
and branching. With every open_s fixed, the gap left is the fabrics' own. The search:

- each 0/1 assignment T of the free open_s columns (Gray-code order, one bound changed from one LP to the next) gets
  LP(T), the LP relaxation with open fixed to T, a lower bound on every design that opens exactly T (none when
  that LP is infeasible);
- the sets are taken in increasing LP(T); a set whose LP(T) is within the gap of the best design found closes, and
  with it every later one; the others are solved as MILPs on the model with open fixed to T, the best design's
  cost (or the budget) their objective bound, so one that cannot beat it stops on its own bound;
- the bound returned is the least over the sets of what each proved: LP(T) of a set closed by it, its MILP's dual
  bound (the best design's cost where it proved nothing below it); a search stopped by its time returns the best
  design found and the least bound of the sets still open.

Exact: every design opens one T, each T's bound is a relaxation's or a MILP's proven bound, and a design is called
optimal only when its cost is within the gap of the least of them. The measured gains (HiGHS on the whole model
from the same start against this search, README Model notes): the 6-site oracle instance 0.25 s -> 0.08-0.09 s
(63 sets, 61 closed by their LPs in 0.03 s, 2 MILPs); the bench's 4 sites with 20 switch models to 1e-4 82 s ->
18 s. With 8 free sites and 12,593 columns the 255 LPs alone took 19 s: the search is for few sites and small
models (SITES, COLUMNS)."""

from __future__ import annotations

import math
import time

import highspy
import numpy as np

#: the most free open_s columns searched set by set (2^SITES LPs), and the model's columns from which it is not (each
#: LP grows with them)
SITES, COLUMNS = 6, 10_000
OPTIMAL = highspy.HighsModelStatus.kOptimal


def applies(highs: highspy.Highs, columns: list[int]) -> list[int]:
    """The free ones of ``columns`` (the open_s columns) when the search applies to the model: 1 to SITES free
    columns, fewer than COLUMNS columns, integer columns; else []."""
    lp = highs.getLp()
    if lp.num_col_ >= COLUMNS or all(t == highspy.HighsVarType.kContinuous for t in lp.integrality_):
        return []
    free = [j for j in columns if lp.col_lower_[j] < lp.col_upper_[j]]
    return free if 1 <= len(free) <= SITES else []


def decides(model, data) -> bool:
    """Whether the cost stage's main run will search among two sets or more (before the model is translated): 1 to
    SITES free open_s, fewer than COLUMNS variables, and two sets or more of the open sites (those fixed open in
    each) hold the job's GPUs, each site at the most any of its modes holds, within min_sites and max_sites. A set
    with a feasible LP is one of them (its nodes fit its sites' modes), so where this is false at most one set has a
    feasible LP and the search has nothing to decide: its LPs are not solved. The sets' LPs may rule out more
    (power, routes, latency); then one set alone is left to HiGHS on the whole model."""
    free = [s for s in model.S if not model.open[s].fixed]
    if not 1 <= len(free) <= SITES or model.nvariables() >= COLUMNS:
        return False
    gpus = data.widest_gpus()
    required = [s for s in model.S if model.open[s].fixed and model.open[s].value > 0.5]
    project = data.inputs.project
    least, most = int(project.get("min_sites") or 1), project.get("max_sites")
    need = int(project["gpus_required"])
    sets = 0
    for k in range(2 ** len(free)):  # k = 0: the required sites alone
        chosen = required + [s for b, s in enumerate(free) if k >> b & 1]
        count = len(chosen)
        if sum(gpus.get(s, 0) for s in chosen) >= need and count >= least and (most is None or count <= most):
            sets += 1
            if sets == 2:
                return True
    return False


def relaxed_bounds(highs: highspy.Highs, lp: highspy.HighsLp, free: list[int],
                   ends: float | None) -> list[tuple[float, tuple]] | None:
    """(LP(T), T) for each assignment T (a tuple of 0/1, one per free column) whose LP is feasible, in increasing
    LP(T); None when the time ran out first. ``lp``: the model of ``highs`` (whose options it is solved with)."""
    relaxed = highspy.Highs()
    relaxed.setOptionValue("output_flag", False)
    for name in ("threads", "parallel", "presolve"):  # one thread scheduler per process: the same thread count
        relaxed.setOptionValue(name, highs.getOptionValue(name)[1])
    relaxed.passModel(lp)
    relaxed.changeColsIntegrality(lp.num_col_, np.arange(lp.num_col_, dtype=np.int32),
                                  np.zeros(lp.num_col_, dtype=np.uint8))
    index = np.asarray(free, dtype=np.int32)
    found = []
    for k in range(2 ** len(free)):
        if ends is not None and time.perf_counter() >= ends:
            return None
        gray = k ^ (k >> 1)
        assignment = tuple((gray >> b) & 1 for b in range(len(free)))
        values = np.asarray(assignment, dtype=float)
        relaxed.changeColsBounds(len(free), index, values, values)
        relaxed.run()
        if relaxed.getModelStatus() == OPTIMAL:
            found.append((relaxed.getInfo().objective_function_value, assignment))
        elif relaxed.getModelStatus() != highspy.HighsModelStatus.kInfeasible:
            found.append((-math.inf, assignment))  # no bound proven: its MILP decides
    found.sort()
    return found


def search(highs: highspy.Highs, free: list[int], gap: float, ends: float | None, start: list[float] | None,
           stopped) -> dict | None:
    """The model's best design over every set of open sites (module docstring), on ``highs`` (its options set, its
    bounds restored after): an answer as designer.solve.process's (status: a HighsModelStatus name, objective,
    bound, values, seconds, nodes, stopped, and ``sets``: the sets of a feasible LP, and ``solved``: the MILPs solved
    among them); its objective bound option, the budget, is a cutoff: a design counts
    below it, and a set whose bound reaches it closes. ``start``: a design (one value per column) to begin from, or
    None; ``stopped()``: whether the run's guard stopped it (a MILP interrupted otherwise was stopped by Ctrl-C).
    None when one set alone has a feasible LP: there is nothing to decide among sets, and the run is HiGHS's on the
    whole model (fixing the sites took the default example's proof from 0.22-0.26 s to 0.49-0.58 s over HiGHS's
    seeds, its path only)."""
    began = time.perf_counter()
    lp = highs.getLp()
    lower = np.asarray([lp.col_lower_[j] for j in free])
    upper = np.asarray([lp.col_upper_[j] for j in free])
    index = np.asarray(free, dtype=np.int32)
    cut = highs.getOptionValue("objective_bound")[1]  # the budget (inf without one): a design counts below it
    best, values = math.inf, None
    if start is not None:
        cost = float(np.dot(lp.col_cost_, start) + lp.offset_)
        if cost < cut:
            best, values = cost, np.asarray(start, dtype=float)
    sets = relaxed_bounds(highs, lp, free, ends)
    if sets is not None and len(sets) == 1:
        return None
    answer = {"objective": None, "bound": None, "values": None, "nodes": 0, "stopped": False,
              "sets": len(sets or ()), "solved": 0}
    if sets is None:
        return answer | {"status": "kTimeLimit", "seconds": time.perf_counter() - began, "stopped": True,
                         "objective": None if values is None else best, "values": values}
    proven = []  # each closed set's bound
    status = "kOptimal"
    try:
        for k, (bound, assignment) in enumerate(sets):
            if bound >= (min(cut, best - gap * abs(best)) if math.isfinite(best) else cut):
                proven.extend(b for b, _ in sets[k:])
                break
            if ends is not None and time.perf_counter() >= ends:
                proven.extend(b for b, _ in sets[k:])
                status = "kTimeLimit"
                break
            fixed = np.asarray(assignment, dtype=float)
            highs.changeColsBounds(len(free), index, fixed, fixed)
            highs.setOptionValue("objective_bound", min(cut, best))
            if ends is not None:
                highs.setOptionValue("time_limit", max(1e-3, ends - time.perf_counter()))
            if values is not None and np.allclose(values[index], fixed):
                given = highspy.HighsSolution()
                given.col_value = list(values)
                given.value_valid = True
                highs.setSolution(given)
            highs.run()
            answer["solved"] += 1
            run_status = highs.getModelStatus()
            info = highs.getInfo()
            answer["nodes"] += max(0, info.mip_node_count)
            if info.primal_solution_status == 2 and info.objective_function_value < best:
                best = info.objective_function_value
                values = np.asarray(highs.getSolution().col_value, dtype=float)
            if run_status in (OPTIMAL, highspy.HighsModelStatus.kInfeasible,
                              highspy.HighsModelStatus.kObjectiveBound):
                dual = info.mip_dual_bound if run_status == OPTIMAL and math.isfinite(info.mip_dual_bound) else math.inf
                proven.append(max(bound, min(dual, best, cut)))  # nothing below the cutoff it was given
                continue
            if run_status == highspy.HighsModelStatus.kInterrupt and not stopped():
                raise KeyboardInterrupt
            dual = info.mip_dual_bound if math.isfinite(info.mip_dual_bound) else -math.inf
            proven.extend([max(bound, dual)] + [b for b, _ in sets[k + 1:]])
            status = "kTimeLimit"
            break
    finally:
        highs.changeColsBounds(len(free), index, lower, upper)
        highs.setOptionValue("objective_bound", cut)
    objective = best if values is not None else None
    least = min(proven, default=math.inf)
    answer |= {"seconds": time.perf_counter() - began, "stopped": status != "kOptimal"}
    if objective is None:
        return answer | {"status": "kInfeasible" if status == "kOptimal" else status,
                         "bound": least if math.isfinite(least) else None}
    least = min(least, objective)
    answer |= {"objective": objective, "values": values, "bound": least if math.isfinite(least) else None}
    within = objective - least <= gap * abs(objective) + 1e-9
    # a whole search whose bound is not within the gap (rounding only: each set closes within it) is a design, not
    # an optimum
    return answer | {"status": status if status != "kOptimal" or within else "kSolutionLimit"}
