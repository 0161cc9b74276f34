"""What relaxing each limit of the workbook by a meaningful step would buy, by re-solving (LP duals mean
nothing for a MILP). A limit binds when relaxing it changes the answer (a cheaper design, or under
min_latency a faster one), whatever its slack in the chosen design.

Steps: +1 MW of a site's power, +10% of its max_nodes, +5% of a route's fiber pairs (at least one), dci_ratio
20% lower, max_oversubscription to the next level, max_sites + 1, the workload's max_comm_fraction 20% higher,
the RTT and latency limits lifted, and under min_latency the budget a faster latency level needs (under the
training objectives 10% more budget).

Under a training objective (min_cost_per_run, max_tokens_per_s) each relaxation is the objective's whole search
run again and judged by the run (designer.solve.by_run): the cost of the run it saves or the tokens per second it
gains, binding beyond the search's step levels.

Each relaxation keeps the chosen design a design, so it binds exactly when its optimum is below T = the chosen
design's proven bound x (1 - 1e-6), or (min_latency) a faster level has a design. That is decided first, cheaply
(``relaxed``): one feasibility probe at the next faster level, then one HiGHS run with T as its objective bound,
which proves "nothing below T" with no incumbent to find, or finds the cheaper design and solves it to the gap in
the same run. Every site's power and space and every route's fiber pairs are first relaxed all at once, then per
limit (all sites, all routes): when that buys nothing beyond the gap, none of them alone does (a relaxation's
designs are a subset of the joint one's), and they are not re-solved one by one. A saving is given with what the
re-solve proved: ``saving_usd`` = chosen - found, ``saving_max_usd`` = chosen - the re-solve's bound (T when it
found nothing below T); a limit binds when the found design is cheaper than the chosen one's bound (proven
cheaper) or faster, and otherwise saves 0 (at most ``saving_max_usd``)."""

from __future__ import annotations

import math
import time
from dataclasses import replace

from designer.formats import money
from designer.solve.by_run import run_gain, run_key, searched
from designer.solve.highs import SolveOptions
from designer.solve.prepare import prepare_data
from designer.solve.resolve import Variant, cheaper_than, cheapest, with_project, with_route, with_site
from designer.solve.run import Clock, budget, least_latency
from models.modes import OVERSUBSCRIPTION_LEVELS

POWER_STEP_MW = 1.0
SPACE_STEP = 0.10  # of max_nodes
FIBER_STEP = 0.05  # of a route's fiber pairs, at least one
DCI_STEP = 0.8  # dci_ratio times this
COMM_STEP = 1.2  # the workload's max_comm_fraction times this
BUDGET_STEP = 1.1  # budget_usd times this, under a training objective


def worst_latency(solution: dict) -> float:
    return max((e["fabric_latency_us"] for e in solution["sites"] if e["open"]), default=0.0)


def best(inputs, chosen: dict, options: SolveOptions, start: dict | None = None) -> Variant:
    """The answer the workbook's objective gives ``inputs``: the cheapest design within the budget (min_cost), or
    the least latency level below the chosen design's that a design reaches within the budget, then the cheapest
    there (min_latency). ``start`` (default ``chosen``) is HiGHS's first design where it fits."""
    start = chosen if start is None else start
    cutoff = budget(inputs)
    if inputs.project.get("objective") != "min_latency":
        return cheapest(inputs, start, options, cutoff=cutoff)
    level = worst_latency(chosen)
    levels = sorted({m.latency_us for m in prepare_data(inputs).modes if m.latency_us < level - 1e-9})
    if levels:
        found, _ = least_latency(inputs, levels + [level], SolveOptions(threads=options.threads), Clock(None),
                                 lambda _m: None, [])
        if found < level - 1e-9:
            return cheapest(inputs, None, options, latency_cap=found, cutoff=cutoff)
    return cheapest(inputs, start, options, latency_cap=level, cutoff=cutoff)


def relaxed(inputs, chosen: dict, options: SolveOptions, base: Base) -> Variant:
    """The answer the workbook's objective gives ``inputs``, a relaxation of the workbook (the chosen design stays
    a design of it, so its optimum is at most the chosen cost, at most the chosen latency level), decided cheaply
    where it does not change: the relaxation binds exactly when it has a faster design (min_latency) or one
    cheaper than T = the chosen design's proven bound x (1 - 1e-6) (Base.row).

    - min_latency: one probe at the next latency level below the chosen design's, within the budget (feasibility
      is monotone in the level: no design there, none faster); a design there is the answer ``best`` gives.
    - then designer.solve.resolve.cheaper_than: HiGHS with T as its objective bound, stopping at its first design
      below T. None proves the relaxation's optimum is in [T, chosen cost]: the chosen design is the answer, its
      bound T (``saving_max_usd`` = chosen cost - T). A design below T is solved to the gap in the same model.
    - a chosen design the polish changed (designer.solve.polish): the full re-solve, polished too (a relaxation's
      design over the grid at or above T may polish below it).
    A probe stopped by a limit leaves the full re-solve (``best``) to answer. Under a training objective the
    search itself answers (designer.solve.by_run.searched)."""
    if base.run_key:
        return searched(inputs, options)
    began = time.perf_counter()
    cap = None
    if inputs.project.get("objective") == "min_latency":
        faster = sorted({m.latency_us for m in prepare_data(inputs).modes if m.latency_us < base.latency - 1e-9})
        if faster:
            level, proven = least_latency(inputs, [faster[-1], base.latency], SolveOptions(threads=options.threads),
                                          Clock(None), lambda _m: None, [])
            if level < base.latency - 1e-9 or not proven:
                found = best(inputs, chosen, options)
                found.seconds = time.perf_counter() - began
                return found
        cap = base.latency
    if (chosen.get("modes") or {}).get("polish"):
        found = best(inputs, chosen, options)
        found.seconds = time.perf_counter() - began
        return found
    threshold = base.bound - 1e-6 * abs(base.bound)
    verdict, found = cheaper_than(inputs, threshold, options, latency_cap=cap, cutoff=budget(inputs))
    if verdict is None:
        found = best(inputs, chosen, options)
    elif not verdict:
        found = Variant(chosen["status"], base.objective, threshold, chosen)
    found.seconds = time.perf_counter() - began
    return found


def sensitivity(inputs, chosen: dict, options: SolveOptions = SolveOptions()) -> dict:
    """design.json ``sensitivity``: {rows: [...], seconds}; each row a limit, its step, and what it buys."""
    began = time.perf_counter()
    base = Base(chosen)
    rows = []
    project = inputs.project
    if project.get("budget_usd") is not None:
        rows.append(budget_row(inputs, chosen, base, options))
    rows.append(latency_row(inputs, chosen, base, options))
    if project.get("max_site_rtt_ms") is not None and len(inputs.sites) > 1:
        rows.append(rtt_row(inputs, chosen, base, options))
    ratio = float(project["dci_ratio"])
    if ratio > 0 and chosen["totals"]["sites_open"] > 1:
        lower = round(ratio * DCI_STEP, 6)
        rows.append(base.row("dci_ratio", "project", ratio, lower, f"{ratio:g} -> {lower:g}",
                             relaxed(with_project(inputs, dci_ratio=lower), chosen, options, base)))
    level = float(project["max_oversubscription"])
    above = [lv for lv in OVERSUBSCRIPTION_LEVELS if lv > level + 1e-9]
    if above:
        rows.append(base.row("max_oversubscription", "project", level, above[0], f"{level:g} -> {above[0]:g}",
                             relaxed(with_project(inputs, max_oversubscription=above[0]), chosen, options, base)))
    if project.get("max_sites") is not None:
        most = int(project["max_sites"])
        rows.append(base.row("max_sites", "project", most, most + 1, f"{most} -> {most + 1}",
                             relaxed(with_project(inputs, max_sites=most + 1), chosen, options, base)))
    if inputs.workload and inputs.workload.get("max_comm_fraction") is not None:
        frac = float(inputs.workload["max_comm_fraction"])
        looser = round(min(0.99, frac * COMM_STEP), 6)
        rows.append(base.row("max_comm_fraction", "workload", frac, looser, f"{frac:g} -> {looser:g}",
                             relaxed(replace(inputs, workload={**inputs.workload, "max_comm_fraction": looser}),
                                     chosen, options, base)))
    sites = [s for s in inputs.sites.index if inputs.sites.loc[s, "status"] != "excluded"]
    power = {s: (float(inputs.sites.loc[s, "power_mw"]), float(inputs.sites.loc[s, "power_mw"]) + POWER_STEP_MW)
             for s in sites}
    space = {s: (int(inputs.sites.loc[s, "max_nodes"]),
                 int(inputs.sites.loc[s, "max_nodes"]) + max(1, math.ceil(SPACE_STEP * int(inputs.sites.loc[s, "max_nodes"]))))
             for s in sites}
    fiber = {i: (int(r["fiber_pairs"]), int(r["fiber_pairs"]) + max(1, round(FIBER_STEP * int(r["fiber_pairs"]))))
             for i, r in inputs.routes.iterrows() if r["site_a"] in sites and r["site_b"] in sites}
    scope = {i: f"{inputs.routes.loc[i, 'site_a']}--{inputs.routes.loc[i, 'site_b']}" for i in fiber}
    groups = [("power_mw", power, with_site, lambda a, b: f"+{b - a:g} MW", None),
              ("max_nodes", space, with_site, lambda a, b: f"+{b - a:,} nodes", None),
              ("fiber_pairs", fiber, with_route, lambda a, b: f"+{b - a:,} pair" + ("s" if b - a > 1 else ""), scope)]
    every = every_resource(inputs, chosen, base, options, groups)
    for limit, steps, apply, words, scopes in groups:
        rows += group(inputs, chosen, base, options, limit, steps, apply, words, scopes, every)
    return {"rows": rows, "seconds": round(time.perf_counter() - began, 3)}


class Base:
    """The chosen design's figures that every relaxation is measured against."""

    def __init__(self, chosen: dict):
        self.objective = float(chosen["objective_usd"])
        bound = chosen["solver"].get("bound_usd")
        self.bound = self.objective if bound is None else float(bound)
        self.latency = worst_latency(chosen)
        self.power = float(chosen["totals"]["power_mw"])
        self.run_key = run_key(chosen)
        self.run = float(chosen["training"][self.run_key]) if self.run_key else None

    def row(self, limit: str, scope: str, current, relaxed, step: str, found: Variant) -> dict:
        """A sensitivity row from the relaxed workbook's answer."""
        row = {"limit": limit, "scope": scope, "current": current, "relaxed": relaxed, "step": step,
               "status": found.status, "objective_usd": found.objective, "saving_usd": None, "saving_max_usd": None,
               "latency_us": None, "binding": False, "seconds": round(found.seconds, 3), "effect": ""}
        if found.solution is None:
            row["effect"] = f"no design: {found.why}"
            return row
        latency = worst_latency(found.solution)
        row["latency_us"] = latency
        if self.run_key:
            return self.run_row(row, found.solution)
        row["saving_usd"] = self.objective - found.objective
        row["saving_max_usd"] = max(0.0, self.objective - (found.bound if found.bound is not None else found.objective))
        faster = latency < self.latency - 1e-9
        row["binding"] = faster or found.objective < self.bound - 1e-6 * abs(self.bound)
        if not row["binding"]:  # a design within the gap of the chosen one, costlier or cheaper: the same answer
            row["saving_usd"] = 0.0
        row["effect"] = effect(row, self.latency)
        return row

    def run_row(self, row: dict, design: dict) -> dict:
        """A training objective's row: the found design's run (``run_relaxed``) against the chosen one's."""
        figure = float(design["training"][self.run_key])
        gain, binding = run_gain(self.run_key, self.run, figure)
        cost = self.run_key == "cost_per_run_usd"
        row.update(binding=binding, run_figure=self.run_key, run_chosen=self.run, run_relaxed=figure,
                   saving_usd=(gain if binding else 0.0) if cost else None)
        if not binding:
            row["effect"] = "nothing beyond the search's step levels (1%)"
        elif cost:
            row["effect"] = f"saves {money(gain)} on the run ({money(self.run)} -> {money(figure)})"
        else:
            row["effect"] = f"+{gain:,.0f} tokens/s (+{gain / self.run:.1%})"
        return row


def effect(row: dict, latency: float) -> str:
    """What the step buys, in words."""
    if row["latency_us"] < latency - 1e-9:
        return (f"a faster design: {row['latency_us']:.2f} us instead of {latency:.2f} us, "
                f"{signed(-row['saving_usd'])}")
    if row["binding"]:
        return f"saves {money(row['saving_usd'])}"
    return f"nothing (at most {money(row['saving_max_usd'])}, within the gap)" if row["saving_max_usd"] > 0.5 \
        else "nothing"


def signed(usd: float) -> str:
    return ("+" if usd >= 0 else "-") + money(abs(usd))


def every_resource(inputs, chosen, base: Base, options, groups: list) -> dict | None:
    """Every site's power and space and every route's fiber pairs relaxed by their steps at once: a row (Base.row)
    that, when it does not bind, answers for each of them (each one's designs are a subset of these); None when
    there are fewer than two such limits (the groups answer alone)."""
    if sum(len(steps) for _, steps, _, _, _ in groups) < 2:
        return None
    together = inputs
    for limit, steps, apply, _, _ in groups:
        for key, (_, value) in steps.items():
            together = apply(together, key, **{limit: value})
    row = base.row("resources", "all", None, None, "", relaxed(together, chosen, options, base))
    return None if row["binding"] else row


def group(inputs, chosen, base: Base, options, limit: str, steps: dict, apply, words, scope: dict | None = None,
          every: dict | None = None) -> list[dict]:
    """Rows of a per-site (per-route) limit: all relaxed at once first (or ``every``, a non-binding row of every
    site and route limit relaxed at once); one by one only when that binds."""
    if not steps:
        return []
    scope = scope or {k: str(k) for k in steps}
    if every is not None:
        joint_row = dict(every, limit=limit)
        together_words = "every site's power and space and every route's fiber relaxed together"
    else:
        together = inputs
        for key, (_, value) in steps.items():
            together = apply(together, key, **{limit: value})
        joint_row = base.row(limit, "all", None, None, "", relaxed(together, chosen, options, base))
        together_words = f"all {'routes' if limit == 'fiber_pairs' else 'sites'} relaxed together"
    if not joint_row["binding"]:
        rows = []
        for key, (current, value) in steps.items():
            row = dict(joint_row, scope=scope[key], current=current, relaxed=value, step=words(current, value),
                       seconds=0.0)
            row["effect"] += f" ({together_words})"
            rows.append(row)
        return rows
    return [base.row(limit, scope[key], current, value, words(current, value),
                     relaxed(apply(inputs, key, **{limit: value}), chosen, options, base))
            for key, (current, value) in steps.items()]


def budget_row(inputs, chosen: dict, base: Base, options) -> dict:
    """min_cost: the budget only cuts designs off above the optimum, so it cannot bind a feasible answer;
    min_latency: what the next latency level below the chosen design's costs, at any budget; a training objective:
    what 10% more budget does to the run (more GPUs or a faster fabric)."""
    limit = float(inputs.project["budget_usd"])
    if base.run_key:
        more = limit * BUDGET_STEP
        return base.row("budget_usd", "project", limit, more, f"+{BUDGET_STEP - 1:.0%}",
                        relaxed(with_project(inputs, budget_usd=more), chosen, options, base))
    row = {"limit": "budget_usd", "scope": "project", "current": limit, "relaxed": None, "step": "",
           "status": None, "objective_usd": None, "saving_usd": None, "saving_max_usd": None, "latency_us": None,
           "binding": False, "seconds": 0.0}
    if inputs.project.get("objective") != "min_latency":
        row["effect"] = "nothing: the cheapest design is within it, and a larger budget only admits costlier ones"
        return row
    unbudgeted = with_project(inputs, budget_usd=None)
    levels = sorted({m.latency_us for m in prepare_data(unbudgeted).modes if m.latency_us < base.latency - 1e-9})
    if not levels:
        row["effect"] = "nothing: no fabric is faster than the chosen one"
        return row
    found = cheapest(unbudgeted, None, options, latency_cap=levels[-1])
    row.update(status=found.status, seconds=round(found.seconds, 3), step="a faster latency level")
    if found.solution is None:
        row["effect"] = ("nothing: no design is faster at any budget" if found.status == "infeasible"
                         else f"not known: {found.why}")
        return row
    latency = worst_latency(found.solution)
    protocols = sorted({e["protocol"] for e in found.solution["sites"] if e["open"]})
    more = found.objective - base.objective
    row.update(relaxed=found.objective, objective_usd=found.objective, latency_us=latency, binding=True,
               saving_usd=-more, saving_max_usd=None)
    row["effect"] = (f"the next latency level ({latency:.2f} us, {', '.join(protocols)}) costs {signed(more)}: "
                     f"budget_usd {money(found.objective)}")
    return row


def latency_row(inputs, chosen: dict, base: Base, options) -> dict:
    """max_fabric_latency_us lifted: what the limit costs (min_cost). Under min_latency it cannot bind: lifting
    it adds only fabrics slower than it, and the answer is the fastest level a design reaches."""
    limit = inputs.project.get("max_fabric_latency_us")
    if limit is None:
        return {"limit": "max_fabric_latency_us", "scope": "project", "current": None, "relaxed": None, "step": "",
                "status": None, "objective_usd": None, "saving_usd": None, "saving_max_usd": None,
                "latency_us": None, "binding": False, "seconds": 0.0, "effect": "no limit set"}
    if inputs.project.get("objective") == "min_latency":
        return {"limit": "max_fabric_latency_us", "scope": "project", "current": float(limit), "relaxed": None,
                "step": "lifted", "status": None, "objective_usd": None, "saving_usd": 0.0, "saving_max_usd": 0.0,
                "latency_us": base.latency, "binding": False, "seconds": 0.0,
                "effect": "nothing: min_latency picks the fastest level a design reaches, and lifting the limit "
                          "only adds slower fabrics"}
    row = base.row("max_fabric_latency_us", "project", float(limit), None, "lifted",
                   relaxed(with_project(inputs, max_fabric_latency_us=None), chosen, options, base))
    if row["binding"] and not base.run_key:
        row["effect"] = f"the {float(limit):g} us latency limit costs {money(row['saving_usd'])}"
    return row


def rtt_row(inputs, chosen: dict, base: Base, options) -> dict:
    """max_site_rtt_ms lifted: nothing when it keeps no route or pair of sites out (the model is the same)."""
    limit = float(inputs.project["max_site_rtt_ms"])
    lifted = with_project(inputs, max_site_rtt_ms=None)
    data = prepare_data(inputs)
    if not data.inter.excluded_pairs and len(data.inter.routes) == len(prepare_data(lifted).inter.routes):
        return {"limit": "max_site_rtt_ms", "scope": "project", "current": limit, "relaxed": None, "step": "lifted",
                "status": None, "objective_usd": None, "saving_usd": 0.0, "saving_max_usd": 0.0, "latency_us": None,
                "binding": False, "seconds": 0.0, "effect": "nothing: it keeps no route and no pair of sites out"}
    row = base.row("max_site_rtt_ms", "project", limit, None, "lifted", relaxed(lifted, chosen, options, base))
    if row["binding"] and row["latency_us"] >= base.latency - 1e-9 and not base.run_key:
        row["effect"] = f"the {limit:g} ms RTT limit costs {money(row['saving_usd'])}"
    return row


def mark_constraints(constraints: list[dict], rows: list[dict]) -> None:
    """The constraints table's ``binding`` from the re-solves where they tried the limit (``binding_by``:
    re-solve), else from the slack. A row of one site or route under a project-wide limit (dci_ratio, the latency
    and RTT limits) binds when the limit does and the row has no slack: the RTT limit binds through the routes it
    keeps out, not through those in the table."""
    tried = {(r["limit"], r["scope"]): r["binding"] for r in rows}
    for c in constraints:
        if (c["name"], c["scope"]) in tried:
            c["binding"] = tried[c["name"], c["scope"]]
        elif (c["name"], "project") in tried:
            c["binding"] = tried[c["name"], "project"] and c["binding"]
        else:
            continue
        c["binding_by"] = "re-solve"
