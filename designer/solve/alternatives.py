"""The best design for each alternative a planner asks about ("why not X"): each protocol, each topology, each
switch family, one open site fewer; with its cost, latency, power and all-reduce time against the chosen design,
or why none exists. Each is the workbook's own objective over the workbook with the alternative imposed:
protocols_allowed or topologies_allowed narrowed to it, or the site excluded (``restricted``)."""

from __future__ import annotations

import math
import time

from designer.formats import money
from designer.solve.by_run import run_key, searched
from designer.solve.highs import SolveOptions
from designer.solve.prepare import prepare_data
from designer.solve.resolve import Variant, cheapest, with_project, with_site
from designer.solve.run import Clock, budget, infeasible_reason, least_latency
from designer.solve.sensitivity import worst_latency
from models.modes import TOPOLOGY_VARIANTS


def alternatives(inputs, chosen: dict, options: SolveOptions = SolveOptions()) -> dict:
    """design.json ``alternatives``: {rows: [...], seconds}."""
    began = time.perf_counter()
    project = inputs.project
    open_sites = [e for e in chosen["sites"] if e["open"]]
    protocols, topologies = project["protocols_allowed"], project["topologies_allowed"]
    asks = []  # (kind, name, variant inputs or None when the workbook rules it out, whether the chosen design is it)
    for protocol in inputs.protocols.index:
        asks.append(("protocol", protocol, with_project(inputs, protocols_allowed=[protocol])
                     if protocol in protocols else None, all(e["protocol"] == protocol for e in open_sites)))
    for topology in dict.fromkeys(t for t, _, _ in TOPOLOGY_VARIANTS):
        asks.append(("topology", topology, with_project(inputs, topologies_allowed=[topology])
                     if topology in topologies else None, all(e["topology"] == topology for e in open_sites)))
    for family in sorted(set(inputs.protocols["switch_family"])):
        members = [p for p in protocols if inputs.protocols.loc[p, "switch_family"] == family]
        asks.append(("switch family", family, with_project(inputs, protocols_allowed=members) if members else None,
                     all(e["protocol"] in members for e in open_sites)))
    if len(open_sites) > 1:
        for e in open_sites:
            asks.append(("one site fewer", f"without {e['name']}", with_site(inputs, e["name"], status="excluded"),
                         False))
    rows, seen = [], {}
    for kind, name, variant, is_chosen in asks:
        row = {"kind": kind, "name": name}
        if variant is None:
            names = "topologies_allowed" if kind == "topology" else "protocols_allowed"
            row.update(empty(f"not in {names} ({', '.join(project[names])})"))
        elif is_chosen:
            row.update(compare(chosen, Variant(chosen["status"], chosen["objective_usd"],
                                               chosen["solver"].get("bound_usd"), chosen), chosen))
            row["note"] = "the chosen design"
        else:
            key = (tuple(variant.project["protocols_allowed"]), tuple(variant.project["topologies_allowed"]),
                   tuple(variant.sites["status"]))
            if key not in seen:
                seen[key] = answer(variant, chosen, options)
            row.update(seen[key])
        rows.append(row)
    return {"rows": rows, "seconds": round(time.perf_counter() - began, 3)}


def answer(variant, chosen: dict, options: SolveOptions) -> dict:
    """The alternative's best design within the workbook's limits; when the budget is all that rules it out, its
    best design without the budget (status ``over_budget``); else why no design exists: the first-order reason
    (designer.solve.run.infeasible_reason) and, when cheap, the diagnosis's smallest change."""
    found = restricted(variant, chosen, options)
    limit = budget(variant)
    if found.solution is not None or found.status != "infeasible":
        return compare(chosen, found, chosen)
    unbudgeted, over = variant, found
    if limit is not None:
        unbudgeted = with_project(variant, budget_usd=None)
        over = restricted(unbudgeted, chosen, options)
    if over.solution is None:
        began = time.perf_counter()
        data = prepare_data(unbudgeted)
        why = infeasible_reason(unbudgeted, data) if data.modes else over.why
        if over.status == "infeasible":
            why = with_cheapest_change(why, unbudgeted, data, options, chosen)
        seconds = found.seconds + (over.seconds if over is not found else 0.0) + time.perf_counter() - began
        return {**empty(why), "status": over.status, "seconds": round(seconds, 3)}
    row = compare(chosen, over, chosen)
    row.update(status="over_budget", seconds=round(found.seconds + over.seconds, 3),
               note=f"over budget_usd by {money(over.objective - limit)}")
    return row


def restricted(variant, chosen: dict, options: SolveOptions) -> Variant:
    """The answer the workbook's objective gives ``variant``, a restriction of the workbook (every design of it is
    one of the workbook's). min_cost: its cheapest design (designer.solve.resolve.cheapest). min_latency: its least
    feasible latency level, then the cheapest design there. Its level is at least the chosen design's when that
    was proven the workbook's least (status optimal), so only levels from there up are searched: first one
    feasibility probe with every mode the variant has (none: no design at all, the answer of most alternatives
    ruled out), then a binary search of probes below it (feasibility is monotone in the level). A training
    objective: its whole search (designer.solve.by_run.searched)."""
    if run_key(variant):
        return searched(variant, options)
    if variant.project.get("objective") != "min_latency":
        return cheapest(variant, chosen, options, cutoff=budget(variant))
    began = time.perf_counter()
    floor = worst_latency(chosen) if chosen.get("status") == "optimal" else 0.0
    levels = sorted({m.latency_us for m in prepare_data(variant).modes if m.latency_us >= floor - 1e-9})
    if not levels:
        return cheapest(variant, None, options, cutoff=budget(variant))  # says which filters left no mode
    probe = SolveOptions(threads=options.threads)
    top, proven = least_latency(variant, [levels[-1], math.inf], probe, Clock(None), lambda _m: None, [])
    if top > levels[-1]:  # the probe at the top level found no design: none exists (proven), or no verdict
        found = Variant("infeasible", why="no design meets every limit") if proven else \
            cheapest(variant, None, options, latency_cap=levels[-1], cutoff=budget(variant))
        found.seconds = time.perf_counter() - began
        return found
    level, _ = least_latency(variant, levels, probe, Clock(None), lambda _m: None, [])
    found = cheapest(variant, chosen, options, latency_cap=level, cutoff=budget(variant))
    found.seconds = time.perf_counter() - began
    return found


DIAGNOSIS_SECONDS = 5.0  # the elastic model's HiGHS time for an alternative with no design
DIAGNOSIS_SIZE = 400  # the most fabric modes enumerated x sites of a workbook whose alternatives' diagnosis is cheap


def with_cheapest_change(why: str, variant, data, options: SolveOptions, chosen: dict) -> str:
    """``why`` and, when the elastic diagnosis (designer.solve.diagnose) is cheap and proves its smallest change
    within DIAGNOSIS_SECONDS, that change ("; the smallest change: ..."); ``why`` alone otherwise (the diagnosis
    stopped at its time limit, found no change, or failed). Cheap: the workbook (``chosen``'s modes summary)
    enumerates at most DIAGNOSIS_SIZE fabric modes x sites; the variant's own count would not do, as the elastic
    model lifts the restriction (a protocol, a topology) and brings every mode back, and its building is not bounded
    by the time limit (the default example, 523 modes x 4 sites, took minutes of CPU for one alternative)."""
    from designer.solve.diagnose import diagnose

    enumerated = int((chosen.get("modes") or {}).get("enumerated") or 0)
    if not enumerated or enumerated * len(variant.sites) > DIAGNOSIS_SIZE:
        return why
    try:
        found = diagnose(variant, why, data=data, options=SolveOptions(time_limit=DIAGNOSIS_SECONDS,
                                                                        threads=options.threads))
    except Exception:  # noqa: BLE001 - the alternative's answer stands without it
        return why
    if not found["changes"] or any("time limit" in note for note in found["notes"]):
        return why
    return f"{why}; the smallest change: {found['changes'][0]['message']}"


def empty(why: str) -> dict:
    return {"status": "infeasible", "objective_usd": None, "cost_delta_usd": None, "latency_us": None,
            "latency_delta_us": None, "power_mw": None, "power_delta_mw": None, "allreduce_ms": None,
            "allreduce_delta_ms": None, "step_s": None, "step_delta_s": None, "run_usd": None, "run_delta_usd": None,
            "tokens_per_s": None, "tokens_delta_per_s": None, "protocols": [], "topologies": [], "sites": [],
            "seconds": 0.0, "note": why}


def compare(chosen: dict, found: Variant, base: dict) -> dict:
    """An alternative's figures and its deltas against the chosen design: cost, worst fabric latency, power, the
    workload's all-reduce estimate, the training step and the run's cost and tokens per second (where the workbook
    has them). An alternative that
    the objective would have ranked first yet costs less is within the chosen design's proven gap (it is one of the
    workbook's designs): the note says so."""
    if found.solution is None:
        return {**empty(found.why), "status": found.status, "seconds": round(found.seconds, 3)}
    design = found.solution
    open_sites = [e for e in design["sites"] if e["open"]]
    latency = worst_latency(design)
    comm, comm0 = (figure(d, "workload", "time_ms") for d in (design, base))
    step, step0 = (figure(d, "training", "step_time_s") for d in (design, base))
    run, run0 = (figure(d, "training", "cost_per_run_usd") for d in (design, base))
    rate, rate0 = (figure(d, "training", "tokens_per_s") for d in (design, base))
    delta = found.objective - float(base["objective_usd"])
    return {"status": found.status, "objective_usd": found.objective, "cost_delta_usd": delta,
            "latency_us": latency, "latency_delta_us": latency - worst_latency(base),
            "power_mw": design["totals"]["power_mw"],
            "power_delta_mw": design["totals"]["power_mw"] - base["totals"]["power_mw"],
            "allreduce_ms": comm, "allreduce_delta_ms": difference(comm, comm0),
            "step_s": step, "step_delta_s": difference(step, step0),
            "run_usd": run, "run_delta_usd": difference(run, run0),
            "tokens_per_s": rate, "tokens_delta_per_s": difference(rate, rate0),
            "protocols": sorted({e["protocol"] for e in open_sites}),
            "topologies": sorted({e["topology"] for e in open_sites}),
            "sites": [e["name"] for e in open_sites], "seconds": round(found.seconds, 3),
            "note": within_gap(base, -delta) if delta < 0 and ranks_by_cost(base, latency) else ""}


def figure(design: dict, block: str, key: str) -> float | None:
    return (design.get(block) or {}).get(key)


def difference(value: float | None, base: float | None) -> float | None:
    return None if value is None or base is None else value - base


def ranks_by_cost(chosen: dict, latency: float) -> bool:
    """Whether a cheaper alternative would have been chosen: under min_cost always, under min_latency when it is
    no slower (the training objectives rank by the run, where a cheaper design may be slower)."""
    objective = chosen.get("objective") or "min_cost"
    return objective == "min_cost" or (objective == "min_latency" and latency <= worst_latency(chosen) + 1e-9)


def within_gap(chosen: dict, saving: float) -> str:
    """The note of an alternative ``saving`` USD cheaper than the chosen design: within its proven gap."""
    bound = (chosen.get("solver") or {}).get("bound_usd")
    floor = f"; no design costs less than {money(bound)}" if bound is not None else ""
    return f"{money(saving)} cheaper: within the chosen design's proven gap, as good{floor}"
