"""Solve orchestration: validated inputs -> model data -> MILP -> HiGHS -> Solution (design.json dict).

min_cost is one HiGHS run with the budget as cutoff; min_latency searches the latency levels with small
feasibility probes, then solves for cost at the least feasible level; the training objectives search GPU counts
and step levels (designer.solve.throughput) with the same solves. Infeasibility raises with the planner's reason
and the elastic diagnosis."""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field, replace

from designer.errors import Infeasible, NoSolution, SolverFailure
from designer.formats import gap as gap_text
from designer.inputs.schema import TRAINING_OBJECTIVES
from designer.solve import site_sets
from designer.solve.diagnose import with_diagnosis
from designer.solve.extract import extract
from designer.solve.highs import TIME_OUT, Outcome, SolveOptions, run_highs, translate, translation_seconds
from designer.solve.polish import SHARE as POLISH_SHARE
from designer.solve.polish import polish
from designer.solve.prepare import at_most, prepare_data
from designer.solve.relaxation import Relaxation
from designer.solve.start import (
    better_of,
    chosen_only,
    greedy_start,
    guided_start,
    lp_sites_first,
    priced_start,
    relaxation_start,
    restore,
    settled,
    snapshot,
)
from designer.solve.throughput import solve_training
from models.modes import PastDeadline, power_cap_mw
from models.network import (
    COST_SCALE,
    ModelData,
    add_budget_row,
    build_model,
    set_objective,
)


@dataclass
class Clock:
    """The wall-clock budget of one solve: ``--time-limit`` covers every HiGHS run of it together (the
    min_latency probes and both cost stages), not each run on its own."""

    limit: float | None
    start: float = field(default_factory=time.perf_counter)

    @property
    def ends(self) -> float | None:
        """When the time is up (perf_counter seconds), or None."""
        return None if self.limit is None else self.start + self.limit

    def left(self, options: SolveOptions, setup: float = 0.0) -> SolveOptions | None:
        """``options`` with the time left as HiGHS's limit; None when no time is left beyond ``setup`` (what a run
        spends before HiGHS starts: a run that would overrun the limit translating the model is not started)."""
        if self.limit is None:
            return options
        left = self.limit - (time.perf_counter() - self.start)
        return replace(options, time_limit=left) if left > 0.05 + setup else None


def solve(inputs, options: SolveOptions = SolveOptions()) -> dict:
    """The cheapest (or, for min_latency, the fastest then cheapest) design as a Solution dict.

    Raises Infeasible with a planner-level reason, NoSolution when limits stop HiGHS first."""
    say = options.progress or (lambda _msg: None)
    clock = Clock(options.time_limit)
    if inputs.project.get("objective") in TRAINING_OBJECTIVES:
        return solve_levels(inputs, options, clock, say)
    t0 = time.perf_counter()
    data = within(clock, "the fabric modes were prepared", prepare_data, inputs)
    timings = {"modes_s": time.perf_counter() - t0}

    if not data.modes:
        raise with_diagnosis(Infeasible(no_mode_reason(data), {"modes": data.modeset.summary()}), inputs, data, options)
    levels = sorted({mode.latency_us for mode in data.modes})
    levels_data = data  # pruned with the latency as a criterion under min_latency: the level probes' modes
    if inputs.project.get("objective") == "min_latency":
        # The cheapest design over every mode first (latency aside): it proves the slowest level feasible
        # and is the answer when no faster level is; modes are pruned without the latency criterion.
        data = within(clock, "the fabric modes were prepared", prepare_data, inputs, latency_cap=levels[-1])
    t1 = time.perf_counter()
    model = within(clock, "the model was built", build_model, data)
    timings["build_s"] = time.perf_counter() - t1
    say(f"{len(data.modes)} fabric modes kept of {data.modeset.summary()['enumerated']} enumerated")
    say(f"model built: {model.nvariables()} variables, {model.nconstraints()} constraints "
        f"({timings['build_s']:.1f} s)")
    if options.export_model:
        set_objective(model)
        if budget(inputs) is not None:
            add_budget_row(model, budget(inputs))
        model.write(str(options.export_model), io_options={"symbolic_solver_labels": True})
        if budget(inputs) is not None:
            model.del_component(model.budget)
        say(f"wrote the model to {options.export_model}")
    outcomes = []
    proven = True
    outcome = cost_solve(model, inputs, data, options, clock, say, outcomes)
    if inputs.project.get("objective") == "min_latency":
        # the cheapest design's worst latency is a feasible level: the search runs below it, and when no
        # faster level is feasible, the cheapest design (when proven) is the fastest one's cheapest
        found = design_latency(model, data)
        below = levels[:bisect.bisect_left(levels, found - 1e-9)]
        level, proven = least_latency(inputs, below + [found], options, clock, say, outcomes, levels_data)
        if level >= found and outcome.status == "optimal":
            pass
        elif clock.left(options):
            t1 = time.perf_counter()
            faster = prepare_data(inputs, latency_cap=level)
            faster_model = build_model(faster)
            timings["build_s"] += time.perf_counter() - t1
            say(f"least worst-case latency {level:.3f} us; {len(faster.modes)} modes at or below it")
            try:
                outcome = cost_solve(faster_model, inputs, faster, options, clock, say, outcomes)
                data, model = faster, faster_model
            except NoSolution:  # time ran out before a design at the faster level: keep the one found
                proven = False
        else:
            proven = False
    if not proven and outcome.status == "optimal":
        outcome.status = "feasible"  # a faster latency level was not ruled out: the optimum is not proven
    say(f"{outcome.by}: {outcome.status}, gap {gap_text(outcome.gap)} ({outcome.seconds:.1f} s)")
    if options.polish and outcome.objective is not None:
        began = time.perf_counter()
        # the rest of the limit, or at least its POLISH_SHARE where the solve took it all
        ends = None if clock.ends is None else max(clock.ends, began + POLISH_SHARE * clock.limit)
        polished = polish(model, data, outcome, options, budget(inputs), ends)
        outcomes.append(Outcome("polish", None, None, None, time.perf_counter() - began, "",
                                polished[2].highs_seconds if polished else 0.0))
        if polished is not None:
            model, data, outcome = polished
            say(f"every split at the design's node counts: ${data.polish['saving_usd']:,.0f} less, gap "
                f"{gap_text(outcome.gap)} ({outcomes[-1].seconds:.1f} s)")
    binds = None
    if inputs.project.get("objective") == "min_latency" and budget(inputs) is not None:
        faster = [lv for lv in levels if lv < design_latency(model, data) - 1e-9]
        if faster and clock.left(options):
            binds = budget_sets_latency(levels_data, faster[-1], clock.left(options) or options, outcomes)
    timings["solve_s"] = sum(o.seconds for o in outcomes)
    timings["highs_s"] = sum(o.highs_seconds for o in outcomes)
    t2 = time.perf_counter()
    solution = extract(model, data, outcome, options, seconds=timings["solve_s"])
    timings["extract_s"] = time.perf_counter() - t2
    for row in solution["constraints"]:
        if row["name"] == "budget_usd" and binds is not None:
            row["binding"], row["binding_by"] = binds, "re-solve"
    solution["timings"] = timings
    return solution


def within(clock: Clock, stage: str, make, *args, **kwargs):
    """``make(*args, ends=clock.ends, **kwargs)`` within the solve's time limit: a stage still running when it runs
    out (the modes' preparation, the model's build) is no design, said as a limit reached (NoSolution), not a wait
    past --time-limit."""
    try:
        return make(*args, ends=clock.ends, **kwargs)
    except PastDeadline as exc:
        raise NoSolution(f"the time limit ran out while {stage} ({exc}); raise --time-limit or narrow the switch "
                         "catalog") from None


def solve_levels(inputs, options: SolveOptions, clock: Clock, say) -> dict:
    """min_cost_per_run / max_tokens_per_s: designer.solve.throughput over solves at a GPU count and step level;
    the design is called optimal only when every solve of the search was."""
    outcomes: list = []
    finals: list[str] = []  # the status of each cost solve of the search
    t0 = time.perf_counter()

    def solve_at(sized, step_cap: float, probe: bool) -> dict | None:
        data = prepare_data(sized, step_cap=step_cap)
        if not data.modes:
            raise Infeasible(no_mode_reason(data), {"modes": data.modeset.summary()})
        model = build_model(data)
        if probe:
            set_objective(model)
            timed = clock.left(SolveOptions(mip_gap=1.0, threads=options.threads))
            if timed is None:
                raise NoSolution("the time limit ran out during the training objective's search")
            outcome = run_highs(model, timed, COST_SCALE, cutoff=budget(sized), stop_below_cutoff=True)
            outcomes.append(outcome)
            if outcome.status == "infeasible":
                raise Infeasible(f"no design at step level {step_cap:.4g} s", {})
            if outcome.status in ("no_solution", "failed"):
                handle_failure(sized, data, outcome)
            return None
        weighted = run_weighted(sized)
        data = prepare_data(weighted, step_cap=step_cap)
        model = build_model(data)
        add_horizon_budget(model, sized)
        outcome = cost_solve(model, weighted, data, options, clock, say, outcomes, diagnose=False)
        finals.append(outcome.status)
        data.inputs = sized  # the design said against the workbook's own horizon_years
        return extract(model, data, outcome, options, seconds=outcome.seconds)

    try:
        solution = solve_training(inputs, solve_at, say)
    except Infeasible:  # no count has a design: the planner's reason and diagnosis at gpus_required
        return solve(replace(inputs, project={**inputs.project, "objective": "min_cost"}), options)
    if any(status != "optimal" for status in finals) and solution["status"] == "optimal":
        solution["status"] = "feasible"  # a solve of the search stopped without proof
    solution["timings"] = {"solve_s": sum(o.seconds for o in outcomes),
                           "highs_s": sum(o.highs_seconds for o in outcomes), "search_s": time.perf_counter() - t0}
    return solution


def run_weighted(inputs):
    """A training objective's level solve: the workbook with its energy over amortization_years and no budget
    cutoff (add_horizon_budget keeps the budget). A run of H hours costs H x (capex / (A x 8760 h) + sum_s
    price_s x MW_s) = H / (A x 8760 h) x (capex + A x 8760 h x sum_s price_s x MW_s): at one step level (H fixed
    up to the level's merging) the designs rank as their runs by capex + energy over A = amortization_years years,
    whatever horizon_years the workbook sets for the budget and the report."""
    years = float(inputs.workload["amortization_years"])
    return replace(inputs, project={**inputs.project, "horizon_years": years, "budget_usd": None})


def add_horizon_budget(model, inputs) -> None:
    """The workbook's budget on its own cost (capex + energy over horizon_years, which is (horizon_years /
    amortization_years) x the run-weighted model's energy) as an explicit row."""
    limit = budget(inputs)
    if limit is None:
        return
    add_budget_row(model, limit, float(inputs.project.get("horizon_years") or 0)
                   / float(inputs.workload["amortization_years"]))


def cost_solve(model, inputs, data: ModelData, options: SolveOptions, clock: Clock, say,
               outcomes: list, diagnose: bool = True) -> Outcome:
    """The cheapest design of ``model`` within the budget: the greedy design and, while the LP relaxation's bound
    leaves the best so far more than the gap above the optimum, the greedy plan over the LP's sites and the LP's
    sites completed (designer.solve.start; the LP solved beside the greedy completion, designer.solve.relaxation,
    so none without a greedy plan: HiGHS's root solves it first); the cheapest of them is the answer when the LP's
    bound proves it within the gap, else HiGHS's start, kept when HiGHS finds nothing better in time; failures raise
    with the planner's reason (and, with ``diagnose``, the elastic diagnosis).

    An LP small enough to be solved here at once (Relaxation.launch_here) comes first: the LP's starts, then the greedy
    plan, each completed only for a design below the best in hand (its cutoff; ``below``), so a completion that cannot
    beat it ends as soon as its bound says so. The default example: the LP's sites completed ($4,268.90M in 0.5 s),
    then the greedy plan, whose completion's root bound ($4,270.4M) ends it in 0.06 s, where it had first taken 0.5 s.
    The LP's starts then stop at their share of the time limit (``tried`` empty): the greedy plan is the floor.
    Where the main run searches set by set over the open sites (designer.solve.site_sets.decides: two sets or more
    of them can hold the job), the LP's starts are left out: the search solves the set of least LP bound first (the
    6-site oracle instance: 0.25 -> 0.19 s). Elsewhere at most one set has a feasible LP, and the main run is
    HiGHS's on the whole model, without the sets' LPs."""
    set_objective(model)
    first = len(outcomes)
    by_sets = site_sets.decides(model, data)
    freed = list(model.open.values()) + list(model.y.values())
    with Relaxation(model, freed, clock.ends, COST_SCALE, options.mip_gap) as lp:
        timed = clock.left(options)  # None: the limit is used up (min_latency's probes), no start and no LP
        lp_first = timed is not None and not chosen_only(model) and lp.launch_here()
        ahead: list = []  # the whole model translated while its chosen pairs' completion runs apart (priced_start's)
        start = greedy_start(model, data, timed, budget(inputs), translated=lp.launch,
                             meanwhile=lambda: ahead.append(translate(model))) if timed and not lp_first else None
        values = None
        if start is not None:
            outcomes.append(start)
            values = snapshot(model)
            say(f"greedy start: ${start.objective:,.0f} ({start.seconds:.1f} s)")
        # the sites of the design in hand (a later start opening just those is skipped); none where the LP came first,
        # but the greedy plan follows as the floor, so the LP's starts stop at their share (an empty set, not None)
        tried = set() if lp_first else None
        if start is not None:
            tried = {s for s in model.S if (model.open[s].value or 0.0) > 0.5}
        relaxed = lp.result()  # the LP's values of the sites are now in the model
    bound, near = None, None
    if relaxed is None and start is not None and chosen_only(model) and clock.left(options):
        # no LP was launched (the plan completed on its chosen pairs): the LP by pricing, the neighbourhoods
        relaxed, near = priced_start(model, start, options, budget(inputs), clock.ends, ahead[0] if ahead else None)
        if relaxed is not None:
            say(f"LP relaxation by pricing: ${relaxed.bound:,.0f} ({relaxed.termination}, {relaxed.seconds:.1f} s)")
    if relaxed is not None:
        outcomes.append(relaxed)
        bound = relaxed.bound
    if near is not None:
        outcomes.append(near)
        if near.objective is None:  # the search's time, no design below the start
            say(f"{near.termination} ({near.seconds:.1f} s)")
        else:
            say(f"a neighbourhood of the start or of the LP's sites: ${near.objective:,.0f} ({near.seconds:.1f} s)")
            start, values = near, snapshot(model)
    elif bound is not None and not chosen_only(model):
        say(f"LP relaxation: ${bound:,.0f} (HiGHS {relaxed.highs_seconds:.1f} s, {relaxed.seconds:.1f} s waited for)")
        setup = translation_seconds(model)
        relaxed_open = {s: model.open[s].value or 0.0 for s in model.S}
        second_starts = [("the greedy plan over the LP relaxation's sites completed",
                          lambda timed, cut: guided_start(model, data, timed, cut, relaxed_open, tried)),
                         ("the LP relaxation's sites completed",
                          lambda timed, cut: relaxation_start(model, timed, cut, tried, relaxed_open))]
        if lp_sites_first(relaxed_open):
            second_starts.reverse()
        if by_sets:  # the main run's search: its set of least LP bound is solved first
            second_starts = []
        held = None  # the outcome whose values the model holds (the LP's open values or a completion's otherwise)
        for what, second in second_starts:
            timed = clock.left(options, setup)
            if settled(start, bound, options.mip_gap, True) is not None or timed is None:
                break
            found = second(timed, below(budget(inputs), start) if lp_first else budget(inputs))
            if found is None:
                continue
            outcomes.append(found)
            held = found
            say(f"{what}: ${found.objective:,.0f} ({found.seconds:.1f} s)")
            if start is None or found.objective < start.objective:
                start, values = found, snapshot(model)
        if values is not None and start is not held:
            restore(model, values)
    # the greedy plan last where the LP's starts came first, for a design below theirs; without one in hand, whatever
    # the translation may take (it is the floor the solve returns, as the first start is otherwise)
    timed = clock.left(options, translation_seconds(model) if start is not None else 0.0) if lp_first else None
    if timed is not None:
        cut = below(budget(inputs), start)
        found = greedy_start(model, data, timed, cut)
        if found is not None:
            outcomes.append(found)
            say(f"greedy start: ${found.objective:,.0f} ({found.seconds:.1f} s)")
            if start is None or found.objective < start.objective:
                start, values = found, snapshot(model)
        elif start is not None:
            say(f"greedy start: no design below ${cut:,.0f}")
        if values is not None and start is not found:  # the plan's fixings, or its worse design, left in the model
            restore(model, values)
    answer = settled(start, bound, options.mip_gap, clock.left(options, translation_seconds(model)) is not None)
    if answer is not None:
        answer.seconds = sum(o.seconds for o in outcomes[first:])
        answer.highs_seconds = sum(o.highs_seconds for o in outcomes[first:])
        say(f"the start is the answer: {answer.termination}")
        return answer
    say("solving: cost")
    timed = clock.left(options, translation_seconds(model))
    if timed is None:  # the starts took the limit, or what is left of it would go in translating the model
        outcome = Outcome("no_solution", None, None, None, 0.0, "maxTimeLimit", stop=TIME_OUT)
    else:
        outcome = run_highs(model, timed, COST_SCALE, cutoff=budget(inputs), start=start is not None, sites=by_sets)
        if outcome.start_refused:
            say("the start breaks a row, bound or integrality of the model: not given to HiGHS, not kept")
    outcomes.append(outcome)
    outcome = better_of(outcome, start, values, bound)
    if outcome.status == "infeasible" and not diagnose:
        raise Infeasible("no design within the limits at this level", {"termination": outcome.termination})
    if outcome.status in ("infeasible", "no_solution", "failed"):
        handle_failure(inputs, data, outcome, options)
    return outcome


def below(cutoff: float | None, start: Outcome | None) -> float | None:
    """What a further start is completed under: the budget, or the cost of the design in hand where it is lower."""
    if start is None:
        return cutoff
    return start.objective if cutoff is None else min(cutoff, start.objective)


def design_latency(model, data: ModelData) -> float:
    """The worst-case latency over the open sites of the design held in ``model``."""
    return max((data.modes[i].latency_us for s, i in model.SM if round(model.y[s, i].value or 0) == 1),
               default=0.0)


def least_latency(inputs, levels: list[float], options: SolveOptions, clock: Clock, say,
                  outcomes: list, levels_data: ModelData | None = None) -> tuple[float, bool]:
    """min_latency: the least latency level L (among the modes' worst-case latencies) at which a design
    exists using only modes at or below L, the top level being known feasible. Feasibility is monotone
    in L, so a binary search needs log2(levels) feasibility solves over small models (HiGHS stops at the
    first design within the budget; none where the level's modes cannot hold gpus_required, ModelData.most_gpus).
    Returns (L, proven); proven is False when a probe hit the limits without a verdict or the clock ran out (L is
    then the least level known to be feasible). ``levels_data``: the
    inputs' modes pruned with the latency as a criterion (prepared here when not given), each probe's modes
    those at or below its level (designer.solve.prepare.at_most)."""
    levels_data = levels_data or prepare_data(inputs, by_latency=True)
    probe_options = SolveOptions(mip_gap=1.0, threads=options.threads)
    cutoff = budget(inputs)
    proven = True

    def feasible(level: float) -> bool | None:
        nonlocal proven
        capped = at_most(levels_data, level)
        if not capped.modes:
            return False
        if capped.most_gpus() < int(inputs.project["gpus_required"]):
            say(f"latency level {level:.3f} us: infeasible (its modes hold {capped.most_gpus():,} GPUs at most)")
            return False
        timed = clock.left(probe_options)
        if timed is None:
            proven = False
            return None
        model = build_model(capped)
        set_objective(model)
        outcome = run_highs(model, timed, COST_SCALE, cutoff=cutoff, stop_below_cutoff=True)
        outcomes.append(outcome)
        say(f"latency level {level:.3f} us: {outcome.status} ({outcome.seconds:.1f} s)")
        if outcome.status in ("no_solution", "failed"):
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


def budget_sets_latency(levels_data: ModelData, level: float, options: SolveOptions, outcomes: list) -> bool | None:
    """min_latency: whether a design at ``level`` (the next latency level below the answer's) exists without the
    budget: then the budget, whatever its slack, is what sets the latency. None when the probe found no verdict. No
    design, and no solve, where the level's modes cannot hold gpus_required (ModelData.most_gpus, as least_latency
    rules levels out). ``levels_data`` as for least_latency (the model holds no budget row: it is a cutoff, not given
    here)."""
    capped = at_most(levels_data, level)
    if not capped.modes or capped.most_gpus() < int(levels_data.inputs.project["gpus_required"]):
        return False
    model = build_model(capped)
    set_objective(model)
    outcome = run_highs(model, replace(options, mip_gap=1.0), COST_SCALE)
    outcomes.append(outcome)
    return None if outcome.status in ("no_solution", "failed") else outcome.status != "infeasible"


def budget(inputs) -> float | None:
    """The budget as a cutoff on the cost objective (capex + energy), or None."""
    value = inputs.project.get("budget_usd")
    return None if value is None else float(value)


def handle_failure(inputs, data: ModelData, outcome: Outcome, options: SolveOptions | None = None) -> None:
    """Raise what an outcome without a design means: a solver failure, a limit reached, or no design."""
    if outcome.status == "failed":
        raise SolverFailure(f"{outcome.stop} ({outcome.termination}); this is not a time limit: check the "
                            "workbook for figures far apart in magnitude, or run with --export-model")
    if outcome.status == "no_solution":
        raise NoSolution(f"HiGHS found no design within the limits: {outcome.stop} ({outcome.termination}); "
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
        by_power = int(power_cap_mw(inputs, s) * 1e6 / float(row["pue"]) // node_w)
        offered += min(int(row["max_nodes"]), by_power, max(mode.node_cap for mode in data.modes)) * gpn
    required = int(project["gpus_required"])
    if offered < required:
        return (f"the candidate sites offer at most {offered:,} GPUs within their power and space "
                f"(before network power), {required:,} are required")
    if project.get("budget_usd") is not None:
        relaxed = build_model(data)
        set_objective(relaxed)
        result = run_highs(relaxed, SolveOptions(mip_gap=1e-4, time_limit=60), COST_SCALE)
        if result.status in ("optimal", "feasible"):
            return (f"the minimum cost is ${result.objective:,.0f}, above budget_usd ${project['budget_usd']:,.0f}")
    if len(data.sites) > 1 and data.inter.excluded_pairs and project.get("max_site_rtt_ms") is not None:
        return ("no set of sites meets the GPU demand, power and space while every pair of open sites stays within "
                f"max_site_rtt_ms {project['max_site_rtt_ms']:g} over used routes")
    apart = [(a, b, why) for a, b, why in data.inter.excluded_pairs if why.startswith("route_diversity")]
    if len(data.sites) > 1 and apart:
        a, b, why = apart[0]
        return ("no set of sites meets the GPU demand, power and space while every open site keeps a path to the "
                f"others after any one route or srlg group fails (route_diversity; e.g. sites {a} and {b}: "
                f"{why.split(': ', 1)[1]})")
    notes = "; ".join(data.inter.notes[:3])
    return ("no design meets every constraint together (power, space, inter-site capacity, fiber, reach)"
            + (f"; see the constraint notes: {notes}" if notes else ""))
