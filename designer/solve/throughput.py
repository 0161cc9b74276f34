"""The training objectives (issue 11 part 3): the GPU count and the design chosen together.

min_cost_per_run: the least cost of the run (capex with spares over amortization_years for the run's hours, plus
its energy); max_tokens_per_s: the most tokens per second within budget_usd, the cost of the run breaking ties.
The GPU count N ranges over the counts the parallelism allows (dp = N / (tp x pp) a multiple of ep dividing the
batch's sequences) from gpus_required to gpus_max. The step time is not linear in the counts, so for each N the
fabric modes are ranked by their step on N GPUs (models.training, one site: ``mode_step_s``) and the distinct steps
are levels, merged within LEVEL_SHARE of each other: a design at level L uses only modes whose step is at most L.

- max_tokens_per_s: feasibility is monotone in L, so a binary search of feasibility probes (as min_latency's)
  finds the least feasible level; the cheapest design there is N's answer.
- min_cost_per_run: every level is solved for its cheapest design, in ascending order, until the bound on the next
  level's cost per run (the least run-weighted cost over the years for the hours at that level's step) is no
  better than the best found.
"Cheapest" at a level is by capex + energy over amortization_years (designer.solve.run.run_weighted): at one level
the run's hours are fixed up to the merging, and that ranks the designs as their runs do; the budget stays on
capex + energy over horizon_years.

Counts are visited from the one a bound favours most; a count is skipped when its bound (compute alone for the
throughput; the nodes' price and compute alone for the cost) cannot beat the best design found. Each candidate is
extracted and judged by its own training block.

The levels are one-site steps: exact for a design on one site (up to the level merging), blind to what the
inter-site all-reduce adds to a design over several (models.training.step: after the solve). So where the workbook
allows both, each count is searched twice: designs on one site (max_sites 1), whose levels are their steps, and
designs over several (min_sites 2), whose step is at least compute + designer.solve.training.inter_site_floor_s
(a lower bound: the ring over two sites at the most inter-site capacity any site's routes carry and the shortest
route's latency). That floor enters their bound: the several-site search is skipped when compute + floor cannot
beat the best design found, and min_cost_per_run's level bound uses the hours at compute + floor for them.
A several-site design found at the least feasible level is then judged by its real step against the one-site
answer, so a fast fabric split over a slow inter-site link no longer hides a faster one-site design. Exact for
one-site designs up to the level merging; among several-site designs the search is by their one-site levels
(the best several-site design is found where the levels rank them as their real steps do), so the answer is
called optimal only when no several-site search's bound leaves room to beat it beyond the merging (``unproven``).
"""

from __future__ import annotations

import math
from dataclasses import replace

from designer.errors import Infeasible, NoSolution
from designer.solve.prepare import prepare_data
from designer.solve.training import inter_site_floor_s, job_of, mode_step_s
from models import training as tr

LEVEL_SHARE = 0.01  # steps within 1% of each other are one level: the stated gap in step time


def gpu_counts(inputs) -> list[int]:
    """The GPU counts the parallelism allows between gpus_required and gpus_max."""
    w, project = inputs.workload, inputs.project
    least = int(project["gpus_required"])
    most = int(project.get("gpus_max") or least)
    per_replica = int(w["tp"]) * int(w["pp"])
    sequences = int(w["global_batch_tokens"]) // int(w["seq_len"])
    return [dp * per_replica for dp in range(1, sequences + 1)
            if sequences % dp == 0 and dp % int(w["ep"]) == 0 and least <= dp * per_replica <= most]


def levels(steps: list[float]) -> list[float]:
    """Distinct steps, each level the top of a run of steps within LEVEL_SHARE of its first."""
    out: list[float] = []
    start = None
    for step in sorted(steps):
        if start is not None and step <= start * (1 + LEVEL_SHARE):
            out[-1] = step
        else:
            out.append(step)
            start = step
    return out


def at_count(inputs, gpus: int):
    """The workbook as a min_cost solve of ``gpus`` GPUs with the training objective's mode ranking."""
    return replace(inputs, project={**inputs.project, "gpus_required": gpus})


def parts(inputs) -> list[tuple[str, object, float]]:
    """(name, workbook, floor_s) of the searches a count needs: designs on one site (max_sites 1) and designs over
    several (min_sites 2, floor_s = inter_site_floor_s), each where the workbook allows it; the workbook itself
    (floor 0) when it cannot open two sites."""
    project = inputs.project
    usable = inputs.sites[inputs.sites["status"] != "excluded"]
    if len(usable) < 2 or not len(inputs.routes) or (project.get("max_sites") is not None
                                                      and int(project["max_sites"]) < 2):
        return [("", inputs, 0.0)]
    out = []
    if int(project.get("min_sites") or 1) <= 1 and int((usable["status"] == "required").sum()) <= 1:
        out.append(("one site", replace(inputs, project={**project, "max_sites": 1}), 0.0))
    floor = inter_site_floor_s(inputs)
    if floor < math.inf:
        several = replace(inputs, project={**project, "min_sites": max(2, int(project.get("min_sites") or 1))})
        out.append(("several sites", several, floor))
    return out or [("", inputs, 0.0)]


def bound(inputs, gpus: int, objective: str, floor_s: float = 0.0) -> float:
    """What no design of ``gpus`` GPUs can beat (lower is better): -tokens/s of compute alone, or the nodes'
    price over the years for the hours of compute alone; ``floor_s`` (a lower bound on the rest of the step,
    inter_site_floor_s for designs over several sites) is added to the compute."""
    job = job_of(inputs, gpus)
    compute = tr.compute_s(job) + floor_s
    if objective == "max_tokens_per_s":
        return -job.batch_tokens / compute
    node = inputs.node_types.loc[inputs.project["node_type"]]
    nodes_usd = math.ceil(gpus / int(node["gpus_per_node"])) * float(node["node_price_usd"])
    hours = float(inputs.workload["training_tokens"]) / (job.batch_tokens / compute) / 3600
    return nodes_usd / float(inputs.workload["amortization_years"]) / tr.HOURS_PER_YEAR * hours


def score(solution: dict, objective: str) -> tuple[float, float]:
    """(objective, tie-break), lower is better."""
    t = solution["training"]
    if objective == "max_tokens_per_s":
        return -t["tokens_per_s"], t["cost_per_run_usd"]
    return t["cost_per_run_usd"], -t["tokens_per_s"]


def solve_training(inputs, solve_at, say) -> dict:
    """The best design over the GPU counts and step levels; ``solve_at(inputs, step_cap, probe)`` solves one
    (probe: stop at the first design within the budget) and returns a Solution, or raises Infeasible or
    NoSolution. Raises the first count's Infeasible when no count has a design."""
    objective = inputs.project["objective"]
    counts = sorted(gpu_counts(inputs), key=lambda n: bound(inputs, n, objective))
    best, first_error, searched = None, None, []
    open_bounds = []  # (bound, GPUs) of the several-site searches: only their floor bounds their real steps
    for gpus in counts:
        if best is not None and bound(inputs, gpus, objective) >= score(best, objective)[0]:
            say(f"{gpus:,} GPUs: bound {bound(inputs, gpus, objective):,.4g} cannot beat the best found")
            continue
        for name, part, floor in parts(at_count(inputs, gpus)):
            if best is not None and bound(inputs, gpus, objective, floor) >= score(best, objective)[0]:
                say(f"{gpus:,} GPUs on {name}: bound {bound(inputs, gpus, objective, floor):,.4g} cannot beat the "
                    "best found")
                continue
            steps = levels([mode_step_s(part, m) for m in prepare_data(part).modes])
            if not steps:
                continue
            try:
                found = (fastest(part, steps, solve_at, say) if objective == "max_tokens_per_s"
                         else cheapest_run(part, steps, solve_at, say, best, floor))
            except (Infeasible, NoSolution) as exc:
                first_error = first_error or exc
                continue
            searched.append({"gpus": gpus, "part": name, "levels": len(steps)})
            if floor:
                open_bounds.append((bound(inputs, gpus, objective, floor), gpus))
            if found is not None and (best is None or score(found, objective) < score(best, objective)):
                best = found
    if best is None:
        raise first_error or Infeasible("no GPU count between gpus_required and gpus_max suits the parallelism")
    best["notes"].append(f"{objective}: GPU counts {', '.join(f'{c:,}' for c in counts)} considered; step levels "
                         f"merged within {LEVEL_SHARE:.0%}; chosen {best['totals']['gpus']:,} GPUs "
                         f"({best['training']['gpus']:,} for the job)")
    unproven(best, objective, open_bounds)
    return best


def unproven(best: dict, objective: str, open_bounds: list[tuple[float, int]]) -> None:
    """Call ``best`` feasible, not optimal, when a several-site search's bound (compute + inter_site_floor_s) leaves
    room beyond the step levels for a several-site design better than it: those searches rank designs by their
    one-site levels, not their real steps, so only the bound is proven there. The note says how much room."""
    if not open_bounds:
        return
    value, gpus = min(open_bounds)
    chosen = score(best, objective)[0]
    if value >= chosen - LEVEL_SHARE * abs(chosen):
        return
    best["status"] = "feasible"
    figure = (f"{-value:,.0f} tokens/s against the chosen {-chosen:,.0f}" if objective == "max_tokens_per_s"
              else f"a run of ${value:,.0f} against the chosen ${chosen:,.0f}")
    best["notes"].append(f"not proven optimal: designs over several sites are searched by their one-site step "
                         f"levels, and only compute + the inter-site floor bounds their real steps; at {gpus:,} GPUs "
                         f"that bound leaves room for up to {figure}")


def fastest(inputs, steps: list[float], solve_at, say) -> dict:
    """The cheapest design at the least feasible level (binary search, the top level solved first)."""
    top = solve_at(inputs, steps[-1], False)
    lo, hi = 0, len(steps) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        try:
            solve_at(inputs, steps[mid], True)
            hi, verdict = mid, "feasible"
        except Infeasible:
            lo, verdict = mid + 1, "infeasible"
        say(f"{inputs.project['gpus_required']:,} GPUs, step level {steps[mid]:.4g} s: {verdict}")
    return top if hi == len(steps) - 1 else solve_at(inputs, steps[hi], False)


def cheapest_run(inputs, steps: list[float], solve_at, say, best: dict | None, floor_s: float = 0.0) -> dict | None:
    """Levels in ascending order, each its cheapest design, until a level's bound cannot beat the best: the run's
    hours at the level's step for designs on one site, at compute + ``floor_s`` for designs over several (their
    real step is not bounded by their one-site level)."""
    cheapest = solve_at(inputs, steps[-1], False)  # every mode: the least run-weighted cost there is
    # a run of H hours costs at least H x that cost's proven bound / (amortization_years x 8760 h) (run_weighted)
    least = float(cheapest["solver"].get("bound_usd") or 0.0)
    per_hour = least / float(inputs.workload["amortization_years"]) / tr.HOURS_PER_YEAR
    job = job_of(inputs)
    found = cheapest
    for level in steps[:-1]:
        step = level if not floor_s else tr.compute_s(job) + floor_s
        hours = float(inputs.workload["training_tokens"]) / (job.batch_tokens / step) / 3600
        incumbent = min((s for s in (best, found) if s is not None), key=lambda s: score(s, "min_cost_per_run"))
        if per_hour * hours >= score(incumbent, "min_cost_per_run")[0]:
            break
        try:
            design = solve_at(inputs, level, False)
        except Infeasible:
            continue
        say(f"{job.gpus:,} GPUs, step level {level:.4g} s: run ${design['training']['cost_per_run_usd']:,.0f}")
        if score(design, "min_cost_per_run") < score(found, "min_cost_per_run"):
            found = design
    return found
