"""Solve orchestration: validated inputs -> modes -> MILP -> HiGHS -> Solution (design.json dict)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import highspy
import pyomo.environ as pyo
from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition
from pyomo.contrib.solver.solvers.highs import Highs

from designer.solve.diagnose import with_diagnosis
from designer.errors import Infeasible, NoSolution
from designer.solve.extract import extract
from models import workload as wl
from models.intersite import prepare
from models.dominance import prune
from models.modes import enumerate_modes
from models.network import (COST_SCALE, ModelData, add_budget_row, build_model, multiplier, set_objective, site_list,
                            workload_rows)


@dataclass(frozen=True)
class SolveOptions:
    time_limit: float | None = None
    mip_gap: float = 1e-4
    threads: int | None = None
    progress: object = None  # callable(str) for progress lines, or None
    export_model: str | None = None  # write the model (symbolic names) to this .mps/.lp path
    diagnose: bool = True  # on infeasibility, say what to change (designer.solve.diagnose: an elastic model)


@dataclass
class Outcome:
    """What HiGHS returned for one solve."""

    status: str  # optimal | feasible | infeasible | no_solution
    objective: float | None
    bound: float | None
    gap: float | None
    seconds: float
    termination: str
    highs_seconds: float = 0.0  # HiGHS's own run time, without Pyomo's translation


def prepare_data(inputs, latency_cap: float | None = None) -> ModelData:
    """Enumerate and filter fabric modes, prepare inter-site data and the workload limit.

    ``latency_cap`` (second min_latency stage) keeps only modes at or below the worst latency found."""
    modeset = enumerate_modes(inputs)
    if latency_cap is not None:
        slower = [m for m in modeset.modes if m.latency_us > latency_cap + 1e-9]
        modeset.filtered["slower than the least worst-case latency (min_latency objective)"] += len(slower)
        modeset.modes = [m for m in modeset.modes if m.latency_us <= latency_cap + 1e-9]
    sites = site_list(inputs)
    data = ModelData(inputs=inputs, modes=modeset.modes, sites=sites, inter=prepare(inputs, sites))
    data.modeset = modeset
    if inputs.workload:
        data.workload = wl.parameters(inputs.workload, inputs.project["gpus_required"])
        data.intra_s = intra_bounds(data)
        reason = "intra-site all-reduce estimate above the workload's time limit at every site"
        usable = {i for (s, i), t in data.intra_s.items() if t <= data.workload["t_max_s"]}
        for i, mode in enumerate(data.modes):
            if i not in usable:
                data.modeset.filtered[reason] += 1
                data.modeset.examples.setdefault(reason, mode.id)
        data.modes = [mode for i, mode in enumerate(data.modes) if i in usable]
    limit = max((data.site_node_limit(s) for s in data.sites), default=0)
    data.modes, dominated = prune(data.modes, inputs, limit, pruning_criteria(data, latency_cap))
    if dominated:
        modeset.filtered["dominated by a mode no costlier, no hotter, no slower at every size"] += len(dominated)
        modeset.examples.setdefault("dominated by a mode no costlier, no hotter, no slower at every size",
                                    next(iter(dominated)))
    if data.workload is not None:
        data.intra_s = intra_bounds(data)
    data.multiplier = {i: multiplier(mode, data.node) for i, mode in enumerate(data.modes)}
    modeset.final = len(data.modes)  # the summary counts what the model gets
    return data


def pruning_criteria(data: ModelData, latency_cap: float | None):
    """Figures besides cost and power that the model reads from a mode (lower is better): the worst-case
    latency when it is the objective (first min_latency stage), and the intra-site all-reduce bound at
    each site when a workload is given."""
    columns = []
    if data.inputs.project.get("objective") == "min_latency" and latency_cap is None:
        columns.append([mode.latency_us for mode in data.modes])
    if data.workload is not None:
        bounds = intra_bounds(data)
        allowed = {s: [i for i in range(len(data.modes)) if bounds[s, i] <= data.workload["t_max_s"]]
                   for s in data.sites}
        data.intra_s = bounds
        if workload_rows(data, allowed)[2]:
            columns += [[bounds[s, i] for i in range(len(data.modes))] for s in data.sites]
        else:  # the inter-site rows are implied: only where a mode is allowed matters
            columns += [[0.0 if bounds[s, i] <= data.workload["t_max_s"] else 1.0 for i in range(len(data.modes))]
                        for s in data.sites]
    return list(zip(*columns)) if columns else None


def intra_bounds(data: ModelData) -> dict:
    """Upper bound on each (site, mode)'s intra-site ring time: the ring over the most GPUs the site could
    hold for the job by space and power (all of the job's GPUs for a single-site design: then exact)."""
    params = data.workload
    node = data.node
    gpn = int(node["gpus_per_node"])
    bounds = {}
    for s in data.sites:
        n = min(params["n_gpus"], gpn * data.site_node_limit(s))
        for i, mode in enumerate(data.modes):
            eff = float(data.inputs.protocols.loc[mode.protocol, "efficiency"])
            bw, lat = wl.ring_s(params["bytes"], n, wl.per_gpu_gbps(node, eff, mode.oversubscription),
                                mode.latency_us)
            bounds[s, i] = bw + lat
    return bounds


def run_highs(model, options: SolveOptions, scale: float = 1.0, cutoff: float | None = None,
              stop_below_cutoff: bool = False) -> Outcome:
    """One HiGHS solve; the gap comes from incumbent and bound, never assumed. Objective and bound are
    multiplied by ``scale`` (the model states costs in millions).

    ``cutoff`` (USD) is the budget on the cost objective. It is first given to HiGHS as its objective
    bound, which spares the LP the dense budget row (that row slows HiGHS's cut loop many times over);
    a result is then checked against it: a design over budget whose bound is within it is solved
    again with the row. ``stop_below_cutoff`` ends a solve at its first design within the cutoff."""
    outcome = _run_highs(model, options, scale, cutoff, stop_below_cutoff)
    if cutoff is None or outcome.objective is None or outcome.objective <= cutoff * (1 + 1e-9):
        return outcome
    if outcome.bound is not None and outcome.bound > cutoff * (1 + 1e-9):
        return Outcome("infeasible", None, outcome.bound, None, outcome.seconds, "cost bound above the budget",
                       outcome.highs_seconds)
    add_budget_row(model, cutoff)
    try:
        again = _run_highs(model, options, scale, None, stop_below_cutoff=False)
    finally:
        model.del_component(model.budget)
    again.seconds += outcome.seconds
    again.highs_seconds += outcome.highs_seconds
    return again


def _run_highs(model, options: SolveOptions, scale: float, cutoff: float | None,
               stop_below_cutoff: bool) -> Outcome:
    solver = Highs()
    config = {"load_solutions": False, "raise_exception_on_nonoptimal_result": False,
              "rel_gap": options.mip_gap,
              # HiGHS's MIP presolve (1.14-1.16) has returned non-optimal optima with gap 0 on our models
              # (tests/test_oracle.py keeps the counterexamples): a design is never passed off as optimal.
              "solver_options": {"presolve": "off"}}
    if cutoff is not None:
        limit = cutoff / scale * (1 + 1e-9)
        config["solver_options"]["objective_bound"] = limit
        if stop_below_cutoff:
            config["solver_options"]["objective_target"] = limit
    if options.time_limit is not None:
        config["time_limit"] = options.time_limit
    if options.threads:
        config["threads"] = options.threads
        # HiGHS keeps one thread scheduler per process and refuses a run asking for another thread count.
        highspy.Highs.resetGlobalScheduler(True)
    start = time.perf_counter()
    res = solver.solve(model, **config)
    seconds = time.perf_counter() - start
    tc = res.termination_condition
    has_solution = res.solution_status in (SolutionStatus.optimal, SolutionStatus.feasible)
    if has_solution:
        res.solution_loader.load_vars()
    obj = res.incumbent_objective * scale if has_solution else None
    bound = res.objective_bound
    bound = bound * scale if bound is not None and math.isfinite(bound) else None
    gap = None
    if obj is not None and bound is not None:
        gap = abs(obj - bound) / max(abs(obj), 1e-9)
    if tc == TerminationCondition.convergenceCriteriaSatisfied and has_solution:
        status = "optimal"
    elif tc == TerminationCondition.objectiveLimit and has_solution:
        status = "feasible"  # a feasibility probe stopped at its first design within the cutoff
    elif tc in (TerminationCondition.provenInfeasible, TerminationCondition.infeasibleOrUnbounded):
        status = "infeasible"
    elif has_solution:
        status = "feasible"
    else:
        status = "no_solution"
    highs_seconds = float(solver._solver_model.getRunTime()) if getattr(solver, "_solver_model", None) else seconds
    return Outcome(status, obj, bound, gap, seconds, str(tc.name), highs_seconds)


def solve(inputs, options: SolveOptions = SolveOptions()) -> dict:
    """The cheapest (or, for min_latency, the fastest then cheapest) design as a Solution dict.

    Raises Infeasible with a planner-level reason, NoSolution when limits stop HiGHS first."""
    say = options.progress or (lambda _msg: None)
    t0 = time.perf_counter()
    data = prepare_data(inputs)
    timings = {"modes_s": time.perf_counter() - t0}

    if not data.modes:
        raise with_diagnosis(Infeasible(no_mode_reason(data), {"modes": data.modeset.summary()}), inputs, data, options)
    levels = sorted({mode.latency_us for mode in data.modes})
    if inputs.project.get("objective") == "min_latency":
        # The cheapest design over every mode first (latency aside): it proves the slowest level feasible
        # and is the answer when no faster level is; modes are pruned without the latency criterion.
        data = prepare_data(inputs, latency_cap=levels[-1])
    t1 = time.perf_counter()
    model = build_model(data)
    timings["build_s"] = time.perf_counter() - t1
    say(f"{len(data.modes)} fabric modes kept of {data.modeset.summary()['enumerated']} enumerated")
    say(f"model built: {model.nvariables()} variables, {model.nconstraints()} constraints "
        f"({timings['build_s']:.1f} s)")
    if options.export_model:
        set_objective(model, "cost")
        if budget(inputs) is not None:
            add_budget_row(model, budget(inputs))
        model.write(str(options.export_model), io_options={"symbolic_solver_labels": True})
        if budget(inputs) is not None:
            model.del_component(model.budget)
        say(f"wrote the model to {options.export_model}")
    outcomes = []
    proven = True
    outcome = cost_solve(model, inputs, data, options, say, outcomes)
    if inputs.project.get("objective") == "min_latency":
        level, proven = least_latency(inputs, levels, options, say, outcomes)
        if level < levels[-1]:
            t1 = time.perf_counter()
            data = prepare_data(inputs, latency_cap=level)
            model = build_model(data)
            timings["build_s"] += time.perf_counter() - t1
            say(f"least worst-case latency {level:.3f} us; {len(data.modes)} modes at or below it")
            outcome = cost_solve(model, inputs, data, options, say, outcomes)
    if not proven and outcome.status == "optimal":
        outcome.status = "feasible"  # a faster latency level was not ruled out: the optimum is not proven
    say(f"HiGHS: {outcome.status}, gap {outcome.gap if outcome.gap is not None else 'n/a'} ({outcome.seconds:.1f} s)")
    timings["solve_s"] = sum(o.seconds for o in outcomes)
    timings["highs_s"] = sum(o.highs_seconds for o in outcomes)
    t2 = time.perf_counter()
    solution = extract(model, data, outcome, options, seconds=timings["solve_s"])
    timings["extract_s"] = time.perf_counter() - t2
    solution["timings"] = timings
    return solution


def cost_solve(model, inputs, data: ModelData, options: SolveOptions, say, outcomes: list) -> Outcome:
    """The cheapest design of ``model`` within the budget; failures raise with the planner's reason."""
    set_objective(model, "cost")
    say("solving: cost")
    outcome = run_highs(model, options, COST_SCALE, cutoff=budget(inputs))
    outcomes.append(outcome)
    if outcome.status in ("infeasible", "no_solution"):
        handle_failure(inputs, data, outcome, options)
    return outcome


def least_latency(inputs, levels: list[float], options: SolveOptions, say, outcomes: list) -> tuple[float, bool]:
    """min_latency: the least latency level L (among the modes' worst-case latencies) at which a design
    exists using only modes at or below L, the top level being known feasible. Feasibility is monotone
    in L, so a binary search needs log2(levels) feasibility solves over small models (HiGHS stops at the
    first design within the budget). Returns (L, proven); proven is False when a probe hit the limits
    without a verdict (L is then the least level known to be feasible)."""
    probe_options = SolveOptions(time_limit=options.time_limit, mip_gap=1.0, threads=options.threads)
    cutoff = budget(inputs)
    proven = True

    def feasible(level: float) -> bool | None:
        nonlocal proven
        capped = prepare_data(inputs, latency_cap=level)
        if not capped.modes:
            return False
        model = build_model(capped)
        set_objective(model, "cost")
        outcome = run_highs(model, probe_options, COST_SCALE, cutoff=cutoff, stop_below_cutoff=True)
        outcomes.append(outcome)
        say(f"latency level {level:.3f} us: {outcome.status} ({outcome.seconds:.1f} s)")
        if outcome.status == "no_solution":
            proven = False
            return None
        return outcome.status != "infeasible"

    lo, hi = 0, len(levels) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if feasible(levels[mid]):
            hi = mid
        else:
            lo = mid + 1
    return levels[hi], proven


def budget(inputs) -> float | None:
    """The budget as a cutoff on the cost objective (capex + energy), or None."""
    value = inputs.project.get("budget_usd")
    return None if value is None else float(value)


def handle_failure(inputs, data: ModelData, outcome: Outcome, options: SolveOptions | None = None) -> None:
    if outcome.status == "no_solution":
        raise NoSolution(f"HiGHS found no design within the limits ({outcome.termination}); "
                         "raise --time-limit or simplify the workbook")
    raise with_diagnosis(Infeasible(infeasible_reason(inputs, data), {"termination": outcome.termination}),
                         inputs, data, options)


def no_mode_reason(data: ModelData) -> str:
    filtered = data.modeset.filtered
    top = "; ".join(f"{reason} ({count})" for reason, count in filtered.most_common(4))
    return f"no fabric mode is feasible for node type {data.inputs.project['node_type']}: {top}"


def infeasible_reason(inputs, data: ModelData) -> str:
    """The first-order reason, in planner terms: capacity of the sites, then budget, then the rest."""
    project = inputs.project
    node = data.node
    gpn = int(node["gpus_per_node"])
    node_w = float(node["node_power_kw"]) * 1e3
    offered = 0
    for s in data.sites:
        row = inputs.sites.loc[s]
        by_power = int(float(row["power_mw"]) * 1e6 / float(row["pue"]) // node_w)
        offered += min(int(row["max_nodes"]), by_power, max(mode.node_cap for mode in data.modes)) * gpn
    required = int(project["gpus_required"])
    if offered < required:
        return (f"the candidate sites offer at most {offered:,} GPUs within their power and space "
                f"(before network power), {required:,} are required")
    if project.get("budget_usd") is not None:
        relaxed = build_model(data)
        set_objective(relaxed, "cost")
        result = run_highs(relaxed, SolveOptions(mip_gap=1e-4, time_limit=60), COST_SCALE)
        if result.status in ("optimal", "feasible"):
            return (f"the minimum cost is ${result.objective:,.0f}, above budget_usd ${project['budget_usd']:,.0f}")
    if len(data.sites) > 1 and data.inter.excluded_pairs and project.get("max_site_rtt_ms") is not None:
        return ("no set of sites meets the GPU demand, power and space while every pair of open sites stays within "
                f"max_site_rtt_ms {project['max_site_rtt_ms']:g} over used routes")
    return ("no design meets every constraint together (power, space, inter-site capacity, fiber, reach); "
            "see the constraint notes: " + "; ".join(data.inter.notes[:3]))
