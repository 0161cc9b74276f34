"""The solve's first design: the greedy plan (designer.solve.greedy) completed into a full assignment of the
model's variables, then the greedy plan over the sites of the model's LP relaxation and those sites themselves
completed the same way; the cheapest is given to HiGHS as the incumbent it must beat (so a time-limited solve returns
at least the greedy design), and kept as the answer when HiGHS finds nothing better within the limit."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pyomo.environ as pyo

from designer.solve.greedy import greedy_plan
from designer.solve.highs import (
    Outcome,
    SolveOptions,
    relative_gap,
    run_highs,
    scheduler_threads,
    start_violation,
    translate,
)
from models.network import COST_SCALE, add_connectivity_cuts, build_model, set_objective

START_SHARE = 0.4  # of the time limit, at most, for completing the greedy plan
# a model with more variables than this has its greedy plan completed on a model of the chosen modes alone: the
# 50-site plan with 60 switch models (233k variables) took 21 s to translate for HiGHS and found no design in the
# 9 s left of its share; the modes it fixes at zero are most of the model
CHOSEN_ONLY = 100_000
#: ... as is one with more than MANY_MODES_VARIABLES variables over MANY_MODES fabric modes or more, where a design uses
#: a handful of them: 16 sites, 40 switch models (57,630 variables, 398 modes), to 1% in 120 s: the whole model's
#: completions of the LP's sites and HiGHS's run found nothing below the greedy design in 86 s (1.82%), the
#: neighbourhoods over the start's modes a design 1.2% below it in 17.5 s (0.98% in 46 s whole); 8 sites, 30 models
#: (12,593, 216): 0.77% -> 0.59% (0.24% -> 0.26% at 1e-4). Over few modes the whole model's runs are the better
#: search: 30 and 50 sites on the default catalog (32 and 33 modes; 0.37% -> 0.54% at 1%, 0.28% -> 0.74% at 1e-4)
MANY_MODES, MANY_MODES_VARIABLES = 100, 10_000
#: the least relative gap a completion is solved to: a start need not be proven to the solve's own gap (the default
#: example, gap 1e-4: its greedy plan's completion 2.0 -> 0.6 s, within 0.002% of the same design; the main run from
#: the LP's sites completed proves the optimum either way)
COMPLETION_GAP = 1e-3
#: how long the neighbourhoods' runs may take when the solve has no time limit (s); their processes are given 1 s past
#: it to answer
NEIGHBOURHOOD_SECONDS = 120.0


def greedy_start(model, data, options: SolveOptions, cutoff: float | None, translated=None,
                 meanwhile=None, prefer: dict | None = None, tried: set | None = None) -> Outcome | None:
    """Fix the greedy plan's decisions in ``model`` (the sites it opens and each one's fabric mode), let
    HiGHS place the nodes and size the rest (switch counts, routes, waves, fiber, routers), and free the
    decisions again. The node counts are the model's, not the plan's: the plan sizes power and inter-site
    capacity by simpler rules than the model's, and its counts can miss a site's power by a fraction.
    A plan whose own sizing is above the budget is completed too (Greedy.over_budget): the model's counts may fit it
    (the default example: its plan's own sizing above a budget 0.27% above the optimum, its completion $4,275.4M
    within the $4,280M; with that start the solve 2.8-3.0 -> 1.6-2.0 s).
    Returns the completed design's outcome, its values left in the model's variables, or None when the plan
    has no design, does not fit the model (an RTT limit over a path, a workload bound), or the completion
    finds no design in its share of the time. ``translated``: run_highs's (the LP relaxation beside it). A model of
    more than CHOSEN_ONLY variables is completed on a model of the plan's pairs alone (complete_chosen): no LP is
    launched then, and ``meanwhile`` (the caller's translation of the whole model) runs while that completion's
    HiGHS runs in its process. ``prefer``: the plan's preference of sites (greedy_plan's); ``tried``: the sites of a
    design in hand, None returned when the plan opens just those."""
    plan = greedy_plan(data.inputs, data.modes, inter=data.inter, prefer=prefer)
    if (plan.cost is None and not plan.over_budget) or set(plan.sites) == tried:
        return None
    index = {mode.id: i for i, mode in enumerate(data.modes)}
    choices = {(s, index[site["mode"]]) for s, site in plan.sites.items()}
    if any(key not in model.SM for key in choices):
        return None
    if chosen_only(model):
        return complete_chosen(model, data, choices, options, cutoff, meanwhile)
    fixed = []

    def fix(var, value) -> None:
        var.fix(value)
        fixed.append(var)

    for s in model.S:
        fix(model.open[s], int(s in plan.sites))
    for s, i in model.SM:
        fix(model.y[s, i], int((s, i) in choices))
    try:
        return complete(model, options, cutoff, translated)
    finally:
        for var in fixed:
            var.unfix()


def guided_start(model, data, options: SolveOptions, cutoff: float | None, relaxed: dict,
                 tried: set | None) -> Outcome | None:
    """The greedy plan opening the sites in the order of the LP relaxation's open values ``relaxed`` (site -> value;
    greedy_plan's ``prefer``), then their cost per MW, completed as greedy_start's; None when it opens the sites
    ``tried`` (a design's in hand) or finds no design. On plans of tens of candidate sites the LP's choice of sites
    is near an optimum's where the cost per MW's is not, and this plan keeps the routes and the RTT limit that a
    rounding of the LP's sites breaks (50 sites, 1M GPUs: the greedy design 1.04% above the LP bound, this one
    0.73%; the LP's sites rounded at 0.3, 0.5 or 0.8 left no design)."""
    return greedy_start(model, data, options, cutoff, prefer=relaxed, tried=tried)


def chosen_only(model) -> bool:
    """Whether a greedy plan of ``model`` is completed on a model of its chosen pairs (complete_chosen): more than
    CHOSEN_ONLY variables, or more than MANY_MODES_VARIABLES over MANY_MODES modes, and no budget row
    (add_horizon_budget's, which a model built afresh would not hold)."""
    size = model.nvariables()
    return not hasattr(model, "budget") and (
        size > CHOSEN_ONLY or (size > MANY_MODES_VARIABLES and len(model.M) >= MANY_MODES))


def complete_chosen(model, data, choices: set, options: SolveOptions, cutoff: float | None,
                    meanwhile=None) -> Outcome | None:
    """The completion on a model built over the chosen (site, mode) pairs alone (ModelData.chosen), its values put
    in ``model``'s variables and every other variable of ``model`` at 0. A design of ``model``: each variable of a
    pair left out is a count tied to its mode's binary, 0 with it (define_site_mode, define_count_limits); the rows
    over the sites and routes sum the pairs there, whose terms left out are 0; and a bound the model derives from
    its modes (the most a site needs or holds) is the most over more modes in ``model``, never tighter. HiGHS
    checks the values again as the start of the main solve (GuardedHighs), which runs on ``model``. The completion may
    take all the time left, not START_SHARE of it: no other search runs beside it (only ``meanwhile``), and what
    follows it (the LP by pricing, the neighbourhoods) starts from its design, where HiGHS on the whole model finds
    none (on a machine half as fast, the 50-site plan with 60 switch models took 20.7 s to complete, past its 19 s
    share of the 48 s left: no design).
    ``meanwhile``: called while HiGHS completes the small model in a process of its own (GuardedHighs.meanwhile)."""
    small = build_model(replace(data, chosen=frozenset(choices)))
    set_objective(small)
    opened = {s for s, _ in choices}
    for s in small.S:
        small.open[s].fix(int(s in opened))
    for key in small.SM:
        small.y[key].fix(1)
    outcome = complete(small, options, cutoff, share=1.0, meanwhile=meanwhile)
    if outcome is not None:
        carry_values(small, model)
    return outcome


def carry_values(small, model) -> None:
    """Put the values of ``small`` (a model over some of ``model``'s pairs) in ``model``'s variables of the same
    name and index, every other free variable of ``model`` at 0; the integer totals (``<name>_tot``, indexed by
    their position in each model's own groups) are summed again from their members. Fixed variables keep their
    values."""
    for var in model.component_data_objects(pyo.Var):
        if not var.fixed:
            var.set_value(0, skip_validation=True)
    totals = {f"{name}_tot" for name in small.total_groups}
    for part in small.component_objects(pyo.Var):
        if part.local_name in totals:
            continue
        whole = model.component(part.local_name)
        for index, var in part.items():
            if not whole[index].fixed:
                whole[index].set_value(var.value or 0, skip_validation=True)
    for name, groups in model.total_groups.items():
        total = model.component(f"{name}_tot")
        for q, members in enumerate(groups):
            total[q].set_value(round(sum(var.value for var in members)), skip_validation=True)


def complete(model, options: SolveOptions, cutoff: float | None, translated=None,
             share: float = START_SHARE, until_a_design: bool = True, meanwhile=None) -> Outcome | None:
    """HiGHS's design of ``model`` with some of its decisions fixed (a start's), in ``share`` of the time limit, or,
    with ``until_a_design`` and while it holds no design, past it up to the limit (SolveOptions.settle_after: a run
    of a large model in a process of its own; a small one stops at its share); None when it finds none. On a machine
    half as fast, the 50-site default-catalog plan's completion needed more than its 22 s share of the 55 s left:
    without a design at the share the solve had none."""
    # HiGHS's presolve is on here: its result is a candidate that HiGHS checks again as the start of the
    # main solve (presolve off) and the audit checks after, never a claim of optimality
    timed = replace(options, presolve=True, rens=True, dive=True, mip_gap=max(options.mip_gap, COMPLETION_GAP))
    if options.time_limit is not None and share < 1:
        timed = (replace(timed, settle_after=options.time_limit * share) if until_a_design else
                 replace(timed, time_limit=options.time_limit * share))
    outcome = run_highs(model, timed, COST_SCALE, cutoff=cutoff, translated=translated, meanwhile=meanwhile)
    if outcome.status not in ("optimal", "feasible"):
        return None
    outcome.status = "feasible"  # a completion of one choice of decisions, not an optimum of the model
    return outcome


def priced_start(model, start: Outcome, options: SolveOptions, cutoff: float | None,
                 ends: float | None, translation: tuple | None = None) -> tuple[Outcome | None, Outcome | None]:
    """A large model's LP bound and a better design near the start, where the whole LP would take most of the time
    limit (50 sites, 60 switch models: 43-56 s): the LP relaxation by column generation from the start's modes
    (designer.solve.pricing: 11 s there; its connectivity cuts then go into the model for a later run), then, unless
    its bound proves the start within the gap, the neighbourhoods
    of the start and of the LP's sites over the start's modes (designer.solve.neighbourhood). Returns (the LP's
    Outcome, its cost the bound, or None; the cheapest design the neighbourhoods found below the start and within
    ``cutoff``, its values then in the model's variables, else a no_solution Outcome holding the search's time, or
    None when no search ran). ``ends``: when the time is up (perf_counter seconds; None: no limit, the neighbourhoods
    then given NEIGHBOURHOOD_SECONDS). ``translation``: translate(model), when it was made before (while the start's
    completion ran), else it is made here."""
    from designer.solve.cuts import cut_spec
    from designer.solve.neighbourhood import neighbourhood_bounds, search
    from designer.solve.pricing import pair_columns, priced_relaxation

    began = time.perf_counter()
    highs, columns = translation or translate(model)
    lp = highs.getLp()
    owner, pairs = pair_columns(model, columns)
    modes = {i for (s, i), y in model.y.items() if round(y.value or 0) == 1}
    first = np.array([i in modes for _s, i in pairs], dtype=bool)
    priced = priced_relaxation(lp, owner, first, COST_SCALE, ends, scheduler_threads(), cut_spec(model, columns))
    if priced.bound is None:
        return None, None
    add_connectivity_cuts(model, priced.cuts)
    cut_words = f", {len(priced.cuts)} connectivity cut(s)" if priced.cuts else ""
    relaxed = Outcome("optimal", priced.bound, priced.bound, None, time.perf_counter() - began,
                      f"{'optimal' if priced.proven else 'bound'} after {priced.rounds} round(s) of pricing"
                      f"{cut_words}", priced.seconds)
    gap = relative_gap(start.objective, priced.bound)
    if gap is not None and gap <= options.mip_gap:
        return relaxed, None
    began = time.perf_counter()
    variables = [var for var in model.component_data_objects(pyo.Var) if id(var) in columns]
    at = np.array([columns[id(var)] for var in variables], dtype=np.int64)
    incumbent = np.zeros(lp.num_col_)
    incumbent[at] = [var.value or 0.0 for var in variables]
    left_out = (owner >= 0) & ~first[np.maximum(owner, 0)]
    opened = np.array([columns[id(var)] for var in model.open.values()], dtype=np.int64)
    run_options = {"presolve": "on", "mip_heuristic_run_rens": True, "mip_rel_gap": options.mip_gap}
    if cutoff is not None:
        run_options["objective_bound"] = cutoff / COST_SCALE * (1 + 1e-9)
    until = ends if ends is not None else time.perf_counter() + NEIGHBOURHOOD_SECONDS
    target = priced.bound / (1 - options.mip_gap) / COST_SCALE if options.mip_gap < 1 else np.inf
    try:
        answers = search(lp, left_out, neighbourhood_bounds(lp, left_out, opened, incumbent, priced.values),
                         run_options, target, until, scheduler_threads())
    except OSError:  # no temporary folder or no room for a process: the start stays
        return relaxed, None
    best = None
    for answer in answers:
        values = answer["values"]
        if values is None or start_violation(highs, values) > 0:
            continue
        objective = (float(np.dot(lp.col_cost_, values)) + lp.offset_) * COST_SCALE
        if objective < (start.objective if best is None else best[0]) and (
                cutoff is None or objective <= cutoff * (1 + 1e-9)):
            best = (objective, values, answer["seconds"])
    if best is None:  # the search's time is the solve's all the same
        return relaxed, Outcome("no_solution", None, None, None, time.perf_counter() - began,
                                "the neighbourhoods found no design below the start",
                                max((answer["seconds"] for answer in answers), default=0.0))
    objective, values, seconds = best
    for var, c in zip(variables, at):
        var.set_value(float(values[c]), skip_validation=True)
    return relaxed, Outcome("feasible", objective, None, None, time.perf_counter() - began,
                            "a neighbourhood of the start or of the LP's sites", seconds)


#: an LP relaxation leaving at most this many sites fractional has its sites completed (relaxation_start) before the
#: greedy plan over them (guided_start): a neighbourhood with that few free sites is about as constrained as a plan
#: and nearer the LP (30 sites, 400k GPUs, one site free: $33.07B in 11-16 s, the guided plan $33.37B first cost
#: 4.4-4.7 s more); with many free (50 sites, 1M GPUs: 15) its completion is a hard search (none in its share) and
#: the guided plan comes first
FEW_FREE = 3


def whole_sites(relaxed: dict) -> dict:
    """The sites the LP relaxation (``relaxed``: site -> open value) opens fully (1) or leaves closed (0), within 1e-6;
    the others are its fractional ones."""
    return {s: int(v >= 0.5) for s, v in relaxed.items() if v >= 1 - 1e-6 or v <= 1e-6}


def lp_sites_first(relaxed: dict) -> bool:
    """Whether the LP relaxation's sites (``relaxed``: site -> open value) are completed before the greedy plan over
    them: at most FEW_FREE of them fractional."""
    return len(relaxed) - len(whole_sites(relaxed)) <= FEW_FREE


def relaxation_start(model, options: SolveOptions, cutoff: float | None, tried: set | None,
                     relaxed: dict | None = None) -> Outcome | None:
    """The sites the LP relaxation (designer.solve.relaxation) whose values ``relaxed`` holds (site -> value; by
    default the model's ``open`` variables) opens
    fully open, those it leaves closed closed, the rest (its fractional ones) and every other decision free,
    completed by HiGHS as the greedy plan is
    (a RINS-like neighbourhood of the relaxation). The LP's choice of sites is near an optimum's on plans of tens
    of candidate sites, where the greedy plan's is not (30 sites, 400k GPUs: 12 sites open and 1 free, completed
    0.6% above the LP bound in 10 s; the greedy design 1.8% above it). None when the LP fixes no site or just
    the sites ``tried`` (nothing new to complete), or the completion finds no design. With a greedy design in hand
    (``tried``: its sites) the completion stops at its share, leaving the rest to HiGHS's search from that design;
    without one it may run past it while it has none (complete)."""
    value = relaxed if relaxed is not None else {s: model.open[s].value or 0.0 for s in model.S}
    fixed = whole_sites(value)
    if not fixed or (len(fixed) == len(value) and {s for s, v in fixed.items() if v} == tried):
        return None
    for s, v in fixed.items():
        model.open[s].fix(v)
    try:
        return complete(model, options, cutoff, until_a_design=tried is None)
    finally:
        for s in fixed:
            model.open[s].unfix()


def settled(start: Outcome | None, bound: float | None, mip_gap: float, time_left: bool) -> Outcome | None:
    """The start as the answer without a search: optimal when ``bound`` (the LP relaxation's) proves it within
    ``mip_gap`` of the optimum (HiGHS's own stopping rule, on the bound HiGHS's root starts from); feasible, with
    its gap to the bound, when no time is left for a search. None otherwise."""
    if start is None:
        return None
    gap = relative_gap(start.objective, bound)
    if gap is not None and gap <= mip_gap:
        return Outcome("optimal", start.objective, bound, gap, 0.0,
                       f"within the {mip_gap:g} gap of the LP relaxation's bound")
    if not time_left:
        return Outcome("feasible", start.objective, bound, gap, 0.0, "time limit: the start kept, no search")
    return None


def better_of(found: Outcome, start: Outcome | None, values: list[tuple] | None, floor: float | None = None) -> Outcome:
    """HiGHS's result, or the start when HiGHS stopped without a design or with a worse one (its values put
    back in the model's variables); the start then carries HiGHS's bound (the bound of the plan's
    completion bounds nothing of the model). HiGHS's design is kept when it is no worse than the start up to
    float rounding (1e-9 relative). A start kept beside a proven optimum (HiGHS's status optimal) is optimal too:
    it is below HiGHS's design, so its gap to the same bound is smaller. A start the model refused
    (GuardedHighs.refused: not a design of it) is never kept. ``floor``: a bound on the model known before the run
    (the LP relaxation's): the answer's bound is the greater of it and HiGHS's (a run stopped at its deadline may
    have none)."""
    if floor is not None and (found.bound is None or floor > found.bound):
        found = replace(found, bound=floor, gap=relative_gap(found.objective, floor))
    if start is None or values is None or found.start_refused:
        return found
    if found.objective is not None and found.objective <= start.objective + 1e-9 * max(1.0, abs(start.objective)):
        return found
    for var, value in values:
        var.set_value(value, skip_validation=True)
    bound = found.bound
    gap = relative_gap(start.objective, bound)
    status = "optimal" if found.status == "optimal" else "feasible"
    return Outcome(status, start.objective, bound, gap, found.seconds, f"{found.termination}; greedy design kept",
                   found.highs_seconds)


def snapshot(model) -> list[tuple]:
    """The values the model's variables hold, as (variable, value) pairs."""
    return [(var, var.value) for var in model.component_data_objects(pyo.Var) if var.value is not None]


def restore(model, values: list[tuple]) -> None:
    """Put a snapshot's values back in the model's variables (the others none)."""
    for var in model.component_data_objects(pyo.Var):
        var.set_value(None, skip_validation=True)
    for var, value in values:
        var.set_value(value, skip_validation=True)
