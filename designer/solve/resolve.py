"""Warm re-solves of a variant of the workbook (a limit relaxed, a protocol imposed, a site left out): the
cheapest design of the variant, HiGHS starting from the chosen design where it fits the variant, else from the
greedy plan. Sensitivity (designer.solve.sensitivity) and alternatives (designer.solve.alternatives) build on it."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from designer.solve.extract import extract
from designer.solve.highs import Outcome, SolveOptions, run_highs
from designer.solve.polish import polish
from designer.solve.prepare import prepare_data
from designer.solve.start import better_of, greedy_start, snapshot
from models.network import COST_SCALE, build_model, set_objective

RESOLVE_GAP = 1e-4  # the re-solves prove what the main solve proves


@dataclass
class Variant:
    """The cheapest design of a variant: ``solution`` (a Solution dict) when one exists, else ``why``."""

    status: str  # optimal | feasible | infeasible | no_solution
    objective: float | None = None
    bound: float | None = None
    solution: dict | None = None
    why: str = ""
    seconds: float = 0.0


def with_project(inputs, **keys):
    """``inputs`` with project keys replaced."""
    return replace(inputs, project={**inputs.project, **keys})


def with_site(inputs, site: str, **fields):
    """``inputs`` with fields of one site replaced."""
    sites = inputs.sites.copy()
    for key, value in fields.items():
        sites.loc[site, key] = value
    return replace(inputs, sites=sites)


def with_route(inputs, index: int, **fields):
    """``inputs`` with fields of one route (its row in the routes table) replaced."""
    routes = inputs.routes.copy()
    for key, value in fields.items():
        routes.loc[index, key] = value
    return replace(inputs, routes=routes)


def cheapest(inputs, chosen: dict | None, options: SolveOptions, latency_cap: float | None = None,
             cutoff: float | None = None) -> Variant:
    """The cheapest design of ``inputs`` (modes at or below ``latency_cap`` when given, cost within ``cutoff``
    when given), HiGHS starting from ``chosen`` (a Solution: its open sites and their modes, completed in the
    variant's model) when the variant offers those modes, else from the greedy plan."""
    began = time.perf_counter()
    data = prepare_data(inputs, latency_cap=latency_cap)
    if not data.modes:
        top = "; ".join([f"{reason} ({n})" for reason, n in data.modeset.filtered.most_common() if n][:2])
        return Variant("infeasible", why=f"no fabric mode: {top}", seconds=time.perf_counter() - began)
    model = build_model(data)
    set_objective(model)
    start = design_start(model, data, chosen, options, cutoff) if chosen else None
    if start is None:
        start = greedy_start(model, data, options, cutoff)
    values = snapshot(model) if start is not None else None
    outcome = run_highs(model, options, COST_SCALE, cutoff=cutoff, start=start is not None)
    outcome = better_of(outcome, start, values)
    if outcome.status not in ("optimal", "feasible"):
        why = "no design meets every limit" if outcome.status == "infeasible" else outcome.stop
        return Variant(outcome.status, bound=outcome.bound, why=why, seconds=time.perf_counter() - began)
    model, data, outcome = polished(model, data, outcome, options, cutoff)
    seconds = time.perf_counter() - began
    solution = extract(model, data, outcome, options, seconds=seconds)
    return Variant(outcome.status, outcome.objective, outcome.bound, solution, seconds=seconds)


def polished(model, data, outcome: Outcome, options: SolveOptions, cutoff: float | None) -> tuple:
    """(model, data, outcome) of the variant's design polished at its node counts (designer.solve.polish), as the
    main solve's is, or as they are where the polish does not apply."""
    found = polish(model, data, outcome, options, cutoff, None) if options.polish else None
    return found or (model, data, outcome)


def design_start(model, data, chosen: dict, options: SolveOptions, cutoff: float | None) -> Outcome | None:
    """Fix the chosen design's open sites and their fabric modes (by mode id) in ``model``, let HiGHS size
    the rest, free them again; the completed design's outcome (its values left in the model), or None when
    the variant does not offer a chosen mode at its site or the completion finds no design."""
    index = {mode.id: i for i, mode in enumerate(data.modes)}
    picks = {e["name"]: index.get(e["mode_id"]) for e in chosen["sites"] if e["open"]}
    if any(s not in model.modes_at or i is None or (s, i) not in model.SM for s, i in picks.items()):
        return None
    fixed = []
    for s in model.S:
        model.open[s].fix(int(s in picks))
        fixed.append(model.open[s])
    for s, i in model.SM:
        model.y[s, i].fix(int(picks.get(s) == i))
        fixed.append(model.y[s, i])
    try:
        outcome = run_highs(model, replace(options, presolve=True), COST_SCALE, cutoff=cutoff)
    finally:
        for var in fixed:
            var.unfix()
    if outcome.status not in ("optimal", "feasible"):
        return None
    outcome.status = "feasible"
    return outcome


def cheaper_than(inputs, threshold: float, options: SolveOptions, latency_cap: float | None = None,
                 cutoff: float | None = None, data=None) -> tuple[bool | None, Variant | None]:
    """Whether ``inputs`` (modes at or below ``latency_cap``) has a design costing less than ``threshold`` (USD),
    and when it has, its cheapest design (within ``cutoff`` too), to the gap of ``options``.

    One HiGHS run with min(threshold, cutoff) as its objective bound: every node whose LP bound reaches it is
    pruned, so the search proves what the variant's optimum is not (``objectiveLimit``: the optimum is at least
    ``threshold``) with no incumbent to find first, and when a design below it exists the same run goes on to the
    gap. Exact: the bound removes only designs at or above ``threshold``, and a design below it is all the answer
    needs. Returns (False, None) when none is below, (True, Variant) when one is, (None, None) when HiGHS stopped
    on a limit without a verdict."""
    began = time.perf_counter()
    data = data if data is not None else prepare_data(inputs, latency_cap=latency_cap)
    if not data.modes:
        return False, None
    model = build_model(data)
    set_objective(model)
    limit = threshold if cutoff is None else min(threshold, cutoff)
    outcome = run_highs(model, options, COST_SCALE, cutoff=limit)
    if outcome.status == "infeasible":
        return False, None
    if outcome.status not in ("optimal", "feasible") or outcome.objective is None:
        return None, None
    model, data, outcome = polished(model, data, outcome, options, cutoff)
    seconds = time.perf_counter() - began
    solution = extract(model, data, outcome, options, seconds=seconds)
    return True, Variant(outcome.status, outcome.objective, outcome.bound, solution, seconds=seconds)
