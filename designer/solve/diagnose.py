"""Why a workbook is infeasible, in planner terms: which knob to change and by how much.

``diagnose(inputs, reason)`` returns a dict (design.json ``diagnosis``):
``{reason, method, changes: [{knob, scope, current, needed, change, unit, message}], messages, notes, seconds}``.

- Limits applied before the model (fabric modes filtered by ``max_fabric_latency_us``, the workload's
  ``max_comm_fraction``) are answered from the mode enumeration with the limit lifted: the fastest fabric.
- Otherwise an elastic model (models.elastic) is solved: first with budget, per-site power, per-site
  space and the GPU demand relaxed; when that is not enough (or still drops GPUs), with the latency and
  RTT limits lifted into penalties as well. Its non-zero slacks are the changes to make.
"""

from __future__ import annotations

import math
import time

from designer.formats import money
from models.modes import site_floor

LATENCY_REASON = "latency above max_fabric_latency_us"  # models.modes.enumerate_modes
TOL = {"budget": 1e-4, "power": 1e-3, "space": 1e-3, "demand": 1e-3, "latency": 1e-6, "dci": 1e-6, "fiber": 1e-3}
# the limits the elastic model lifts into penalties: first those that keep the model's size, then the fabric's
FIRST = ("max_site_rtt_ms", "dci_ratio", "fiber_pairs", "route_diversity")
SECOND = ("max_fabric_latency_us", "max_oversubscription", "protocols_allowed", "topologies_allowed")


def _restricts(inputs) -> bool:
    """Whether the workbook sets a fabric limit the second elastic model lifts."""
    from models.elastic import LIFTED_OVERSUBSCRIPTION, TOPOLOGY_VARIANTS

    p = inputs.project
    return (p.get("max_fabric_latency_us") is not None
            or float(p["max_oversubscription"]) < LIFTED_OVERSUBSCRIPTION
            or bool(set(inputs.protocols.index) - set(p["protocols_allowed"]))
            or bool({t for t, _, _ in TOPOLOGY_VARIANTS} - set(p["topologies_allowed"])))


def _up(x: float, step: float) -> float:
    """x rounded up to a multiple of step (a change that is shown must be enough)."""
    return round(math.ceil(x / step - 1e-9) * step, 12)


def _up_sig(x: float, digits: int = 4) -> float:
    """x rounded up to ``digits`` significant digits: $474,998 -> $475,000, 0.060798 MW -> 0.0608."""
    if x <= 0:
        return x
    return _up(x, 10.0 ** (math.floor(math.log10(x)) - digits + 1))


def _mw(x: float) -> str:
    return f"{x:,.1f}" if x >= 10 else f"{x:.3g}"


def _mode_words(mode) -> str:
    speeds = "/".join(f"{g}G" for g in dict.fromkeys(x for x in (mode.g0, mode.g1, mode.g2) if x))
    return f"{mode.topology}, {mode.protocol}, {speeds}"


def change(knob, scope, current, needed, unit, message) -> dict:
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (current, needed))
    delta = needed - current if numbers else None
    return {"knob": knob, "scope": scope, "current": current, "needed": needed, "change": delta, "unit": unit,
            "message": message}


def diagnose(inputs, reason: str = "", data=None, options=None) -> dict:
    """The diagnosis of an infeasible workbook (see the module docstring)."""
    start = time.perf_counter()
    say = (getattr(options, "progress", None) if options is not None else None) or (lambda _m: None)
    out = {"reason": reason, "method": None, "changes": [], "notes": []}
    pre = _before_model(inputs, data)
    if pre is None:
        pre = _percentage(inputs, options)
    if pre is not None:
        out.update(pre)
    else:
        # The RTT limit only removes routes, so lifting it costs little; lifting the latency limit brings
        # back every fabric mode it filtered (a larger model): only when the first model is not enough.
        say("diagnosing: elastic model (budget, power, space, demand, RTT, dci_ratio, fiber pairs, route diversity)")
        found = _elastic(inputs, lift=FIRST, options=options)
        if (found is None or found["slacks"]["demand_gpus"] > 0.5) and _restricts(inputs):
            say("diagnosing: elastic model with the fabric limits lifted as well (latency, oversubscription, "
                "protocols, topologies)")
            second = _elastic(inputs, lift=FIRST + SECOND, options=options)
            if second is not None:
                found = second
        if found is None:
            out["method"] = "elastic"
            out["notes"].append("no change to the budget, site power, site space, GPU demand, fabric latency, RTT, "
                                "dci_ratio, fiber pairs, route diversity, oversubscription, protocol or topology "
                                "limits alone makes a design possible: the cause is elsewhere (sites to open, routes, "
                                "reach, the workload limit)")
        else:
            out["method"] = "elastic"
            out["changes"] = _changes(inputs, found)
            out["notes"] += found["notes"]
    out["messages"] = [c["message"] for c in out["changes"]] or ([out["reason"]] if out["reason"] else [])
    out["seconds"] = round(time.perf_counter() - start, 3)
    return out


# --- limits applied before the model --------------------------------------------------------------

def _before_model(inputs, data) -> dict | None:
    """A diagnosis when no fabric mode survives the filters applied before the model: the latency limit,
    or the workload's time limit (then the fastest intra-site all-reduce of any mode)."""
    from models.modes import enumerate_modes

    project = inputs.project
    modeset = data.modeset if data is not None else enumerate_modes(inputs)
    kept = data.modes if data is not None else modeset.modes
    if kept:
        return None
    limit = project.get("max_fabric_latency_us")
    if not modeset.modes and limit is not None and modeset.filtered.get(LATENCY_REASON):
        lifted = enumerate_modes(_with(inputs, max_fabric_latency_us=None))
        if lifted.modes:
            fastest = min(lifted.modes, key=lambda m: (m.latency_us, m.oversubscription))
            needed = _up(fastest.latency_us, 0.01)
            msg = (f"no fabric mode meets max_fabric_latency_us {limit:g}: the fastest is "
                   f"{fastest.latency_us:.2f} us ({_mode_words(fastest)}); raise max_fabric_latency_us to "
                   f"{needed:.2f}")
            parts = ", ".join(f"{k} {v:.2f}" for k, v in fastest.latency_breakdown_us.items() if v)
            return {"method": "mode_filter", "changes": [change(
                "max_fabric_latency_us", "project", float(limit), needed, "us", msg)],
                "notes": [f"fastest mode {fastest.id}: {parts} us"]}
    if modeset.modes and inputs.workload and data is not None and data.workload is not None:
        from copy import copy

        from designer.solve.prepare import intra_bounds

        every = copy(data)
        every.modes = list(modeset.modes)
        return _workload_change(data.workload, min(intra_bounds(every).values()))
    from models.elastic import loosen

    if _restricts(inputs) and enumerate_modes(loosen(inputs, SECOND)).modes:
        return None  # the elastic model lifts the fabric limits (protocols, topologies, oversubscription)
    top = ", ".join(f"{r} ({n})" for r, n in modeset.filtered.most_common(3))
    return {"method": "mode_filter", "changes": [],
            "notes": [f"every fabric mode was filtered out before solving: {top}"]}


def _percentage(inputs, options) -> dict | None:
    """A dci_ratio above the plausible (the loader's warning: a percentage typed as a number) that, read as a
    percentage, gives the workbook a design: that is the change, found by a probe stopping at its first design."""
    from designer.inputs.checks import PLAUSIBLE_DCI_RATIO
    from designer.solve.highs import SolveOptions, run_highs
    from designer.solve.prepare import prepare_data
    from models.network import COST_SCALE, build_model, set_objective

    ratio = float(inputs.project["dci_ratio"])
    if ratio <= PLAUSIBLE_DCI_RATIO:
        return None
    data = prepare_data(_with(inputs, dci_ratio=ratio / 100))
    if not data.modes:
        return None
    model = build_model(data)
    set_objective(model)
    budget = inputs.project.get("budget_usd")
    outcome = run_highs(model, SolveOptions(mip_gap=1.0, threads=getattr(options, "threads", None),
                                            time_limit=getattr(options, "time_limit", None) or 120.0), COST_SCALE,
                        cutoff=None if budget is None else float(budget), stop_below_cutoff=budget is not None)
    if outcome.status not in ("optimal", "feasible"):
        return None
    return {"method": "percentage", "changes": [change(
        "dci_ratio", "project", ratio, ratio / 100, "",
        f"dci_ratio {ratio:g} asks each open site for {ratio:g} x its NIC bandwidth between sites: a percentage "
        f"typed as a number? set dci_ratio to {ratio / 100:g} ({ratio:g}%), and the workbook has a design")],
        "notes": []}


def _workload_change(params, fastest_s: float) -> dict:
    compute = params["step_compute_s"]
    accum = params["grad_accum_steps"]
    frac = params["max_comm_fraction"]
    need_frac = fastest_s / (accum * compute + fastest_s)
    need_accum = math.ceil(fastest_s * (1 - frac) / (frac * compute) - 1e-9)
    changes = [
        change("max_comm_fraction", "workload", frac, _up(need_frac, 0.001), "",
               f"no fabric mode meets the workload's max_comm_fraction {frac:g}: the fastest all-reduce inside one "
               f"site takes {fastest_s * 1e3:,.0f} ms per step; raise max_comm_fraction to {_up(need_frac, 0.001):.3f}"),
        change("grad_accum_steps", "workload", accum, need_accum, "",
               f"or raise grad_accum_steps from {accum} to {need_accum} (fewer synchronisations per sample)"),
    ]
    return {"method": "workload", "changes": changes, "notes": []}


def _with(inputs, **project):
    from dataclasses import replace

    return replace(inputs, project={**inputs.project, **project})


# --- elastic model --------------------------------------------------------------------------------

def _elastic(inputs, lift: tuple[str, ...], options) -> dict | None:
    """Solve the elastic model; None when even it has no solution."""
    from designer.solve.highs import SolveOptions, run_highs
    from designer.solve.prepare import prepare_data
    from models.elastic import Limits, add_elastic, loosen, mode_penalty, read_slacks
    from models.network import build_model

    limits = Limits.of(inputs, lift)
    loose = loosen(inputs, lift)
    data = prepare_data(loose, penalty=lambda mode: mode_penalty(mode, limits))
    if not data.modes:
        return None
    if data.workload is not None and not any(t <= data.workload["t_max_s"] for t in data.intra_s.values()):
        return None
    model = build_model(data, bounds=False)
    add_elastic(model, data, limits)
    time_limit = getattr(options, "time_limit", None) or 120.0
    threads = getattr(options, "threads", None)
    outcome = run_highs(model, SolveOptions(time_limit=time_limit, mip_gap=1e-4, threads=threads))
    if outcome.status not in ("optimal", "feasible"):
        return None
    slacks = read_slacks(model, limits)
    notes = []
    if outcome.status == "feasible":
        notes.append(f"the elastic model stopped at its time limit ({time_limit:g} s): the changes below are enough "
                     "but may not be the smallest")
    return {"slacks": slacks, "data": data, "model": model, "limits": limits, "lifted": limits.lifted,
            "status": outcome.status, "notes": notes}


def _changes(inputs, found: dict) -> list[dict]:
    """Planner-level changes from the elastic slacks, biggest lever first."""
    s = found["slacks"]
    limits = found["limits"]
    data = found["data"]
    gpn = int(data.node["gpus_per_node"])
    out = []
    if s["budget_musd"] * 1e6 > TOL["budget"] * max(limits.budget_usd or 0, 1):
        needed = _up_sig(limits.budget_usd + s["budget_musd"] * 1e6)
        out.append(change("budget_usd", "project", float(limits.budget_usd), needed, "USD",
                          f"raise budget_usd by {money(needed - limits.budget_usd)} (to {money(needed)})"))
    out += _power_changes(inputs, found)
    for site, slack in s["space_nodes"].items():
        if slack > TOL["space"]:
            cap = limits.max_nodes[site]
            more = math.ceil(slack - 1e-6)
            floor = site_floor(inputs, site)
            if floor is not None and cap < int(inputs.sites.loc[site, "max_nodes"]):
                per_row = int(floor["racks_per_row"]) * (cap // (int(floor["rows"]) * int(floor["racks_per_row"])))
                rows = int(floor["rows"]) + math.ceil(more / max(per_row, 1))
                out.append(change("rows", f"floorplan.{site}", int(floor["rows"]), rows, "rows",
                                  f"site {site} needs racks for {more:,} more nodes ({more * gpn:,} GPUs): "
                                  f"floorplan rows {int(floor['rows']):,} -> {rows:,}"))
                continue
            out.append(change("max_nodes", f"sites.{site}", cap, cap + more, "nodes",
                              f"site {site} needs space for {more:,} more nodes ({more * gpn:,} GPUs): "
                              f"max_nodes {cap:,} -> {cap + more:,}"))
    if s["latency_us"] > TOL["latency"]:
        cap = float(limits.max_fabric_latency_us)
        worst_site = max(s["modes"], key=lambda k: data.modes[s["modes"][k]].latency_us)
        mode = data.modes[s["modes"][worst_site]]
        needed = _up(mode.latency_us, 0.01)
        out.append(change("max_fabric_latency_us", "project", cap, needed, "us",
                          f"no fabric within max_fabric_latency_us {cap:g} holds the design: the fastest that does "
                          f"is {mode.latency_us:.2f} us ({_mode_words(mode)} at {worst_site}); raise "
                          f"max_fabric_latency_us to {needed:.2f}"))
    rtt = _rtt_needed(found)
    if rtt is not None:
        cap = float(limits.max_site_rtt_ms)
        pair, value = rtt
        needed = _up(value, 0.01)
        out.append(change("max_site_rtt_ms", "project", cap, needed, "ms",
                          f"sites {pair[0]} and {pair[1]} are {value:.3f} ms apart (RTT over the routes used), above "
                          f"max_site_rtt_ms {cap:g}: raise it to {needed:.2f}"))
    out += _network_changes(inputs, found)
    out += _diversity_changes(inputs, found)
    if s["demand_gpus"] > 0.5:
        short = math.ceil(s["demand_gpus"] - 1e-6)
        held = limits.gpus_required - short
        held -= held % gpn
        out.append(change("gpus_required", "project", limits.gpus_required, held, "GPUs",
                          f"even so the candidate sites hold at most {held:,} GPUs (topology size, sites and routes): "
                          f"lower gpus_required by {limits.gpus_required - held:,} (to {held:,}) or add candidate "
                          "sites"))
    out.sort(key=_relative)
    knobs = [c["knob"] for c in out]
    if "power_headroom" in knobs and "power_mw" in knobs and knobs.index("power_mw") < knobs.index("power_headroom"):
        out.insert(knobs.index("power_mw"), out.pop(knobs.index("power_headroom")))  # see _relative
    if out:
        opened = ", ".join(f"{k} ({int(round(found['slacks']['nodes'][k])) * gpn:,} GPUs)" for k in s["opened"])
        found["notes"].append(f"with these changes the cheapest design costs {money(s['cost_usd'])} and opens "
                              f"{opened}")
    return out


def _relative(c: dict) -> float:
    """How large a change is against its limit, weighted as the elastic model weighs it (models.elastic.WEIGHTS:
    dci_ratio 10 times); a protocol or topology to allow, or route_diversity to give up, counts as 1, the GPU
    demand comes last. power_headroom h -> h' frees (h - h') x power_mw, the same megawatts as raising power_mw
    by (h - h') / (1 - h) of itself: it is measured so, and _changes puts it before the power_mw raises it stands
    for (the same megawatts, already there; their roundings differ)."""
    from models.elastic import WEIGHTS

    if c["knob"] == "gpus_required":
        return math.inf
    if c["knob"] == "power_headroom":
        return (c["current"] - c["needed"]) / (1.0 - c["current"])
    weight = WEIGHTS["dci"] if c["knob"] == "dci_ratio" else 1.0
    if c["change"] is not None:
        return weight * abs(c["needed"] - c["current"]) / max(abs(c["current"]), 1e-9)
    return 1.0


def _network_changes(inputs, found: dict) -> list[dict]:
    """Changes to dci_ratio, route fiber pairs, max_oversubscription, protocols_allowed and topologies_allowed
    read from the elastic design."""
    s = found["slacks"]
    limits = found["limits"]
    data = found["data"]
    model = found["model"]
    out = []
    if any(v > TOL["dci"] for v in s["dci_tbps"].values()) and len(s["opened"]) > 1:
        bw = float(data.node["nics_per_node"]) * float(data.node["nic_gbps"]) / 1e3  # Tb/s per node
        held = min(s["capacity_tbps"][k] / (bw * s["nodes"][k]) for k in s["opened"] if s["nodes"][k] > 0.5)
        needed = _down_sig(held, 3)
        hint = (f" ({limits.dci_ratio:g} looks like a percentage: {limits.dci_ratio / 100:g})"
                if limits.dci_ratio > 1 else "")
        out.append(change("dci_ratio", "project", limits.dci_ratio, needed, "",
                          f"each open site's inter-site capacity must be dci_ratio {limits.dci_ratio:g} x its NIC "
                          f"bandwidth, more than its routes and routers carry: lower dci_ratio to {needed:g}{hint}"))
    for r, slack in s["fiber_pairs"].items():
        if slack > TOL["fiber"]:
            have = limits.fiber_pairs[r]
            needed = math.ceil(s["pairs_used"][r] - 1e-6)
            route = model.route[r]
            capped = ", ".join(k for k in (route.a, route.b) if k in s["opened"])
            out.append(change("fiber_pairs", f"routes.{r}", have, needed, "pairs",
                              f"route {r}'s {have:,} fiber pairs cap the inter-site capacity of {capped} (dci_ratio "
                              f"{limits.dci_ratio:g} of its NIC bandwidth): it needs {needed:,} pairs "
                              f"(fiber_pairs {have:,} -> {needed:,})"))
    chosen = {k: data.modes[i] for k, i in s["modes"].items()}
    over = {k: m.oversubscription for k, m in chosen.items() if m.oversubscription > limits.max_oversubscription + 1e-9}
    if "max_oversubscription" in limits.lifted and over:
        worst = max(over, key=over.get)
        out.append(change("max_oversubscription", "project", limits.max_oversubscription, over[worst], "",
                          f"the design needs oversubscription {over[worst]:g} at {worst}: raise max_oversubscription "
                          f"to {over[worst]:g}"))
    for knob, attr in (("protocols_allowed", "protocol"), ("topologies_allowed", "topology")):
        allowed = list(getattr(limits, knob))
        missing = sorted({getattr(m, attr) for m in chosen.values()} - set(allowed)) if knob in limits.lifted else []
        if missing:
            where = ", ".join(k for k, m in chosen.items() if getattr(m, attr) in missing)
            out.append(change(knob, "project", ",".join(allowed), ",".join(allowed + missing), "",
                              f"add {', '.join(missing)} to {knob} (the design uses it at {where})"))
    return out


def _power_changes(inputs, found: dict) -> list[dict]:
    """Power changes from the elastic slacks: each short site's power_mw raised to what the design uses, grossed
    up by power_headroom h (the design may use power_mw x (1 - h)); and, with h > 0, when the held-back share
    alone is what is short (every short site uses at most its power_mw), the one power_headroom h' that gives
    every site what it uses: h' = min_s (1 - use_s / power_mw_s), rounded down to 0.001."""
    s = found["slacks"]
    limits = found["limits"]
    share = float(inputs.project.get("power_headroom") or 0.0)
    out, uses = [], {}
    for site, slack in s["power_mw"].items():
        if slack <= TOL["power"]:
            continue
        cap = limits.power_mw[site]
        raw = float(inputs.sites.loc[site, "power_mw"])
        use = _up_sig(cap + slack)
        uses[site] = (use, raw)
        needed = _up_sig(use / (1.0 - share))
        held = f" than power_headroom {share:g} leaves" if share else ""
        out.append(change("power_mw", f"sites.{site}", raw, needed, "MW",
                          f"site {site} needs {_mw(use - cap)} MW more{held} (power_mw {raw:g} -> {needed:g})"))
    if share > 0 and uses and all(use <= raw * (1 - 1e-9) for use, raw in uses.values()):
        needed = math.floor((1.0 - max(use / raw for use, raw in uses.values())) * 1e3 + 1e-9) / 1e3
        where = ", ".join(f"{_mw(raw * (1 - share))} MW at {k} (the design uses {_mw(use)})"
                          for k, (use, raw) in uses.items())
        out.append(change("power_headroom", "project", share, needed, "",
                          f"power_headroom {share:g} leaves {where}: set power_headroom to {needed:g}"))
    return out


def _diversity_changes(inputs, found: dict) -> list[dict]:
    """route_diversity given up by the elastic design: the failures that cut its open sites apart over the routes
    it uses (models.intersite.failure_groups), the sites each cuts off, and routes to add between open sites
    without one (greedy: each the pair that joins the most failures' parts, until every failure is covered)."""
    import itertools

    import networkx as nx

    from models.intersite import failure_groups

    s = found["slacks"]
    if not s.get("route_diversity_dropped"):
        return []
    model = found["model"]
    routes = found["data"].inter.routes
    used = set(s["used_routes"])
    opened = list(s["opened"])
    cuts = {}  # failure name -> its parts (lists of open sites), largest first
    for name, keys in failure_groups(routes).items():
        graph = nx.Graph()
        graph.add_nodes_from(opened)
        graph.add_edges_from((model.route[r].a, model.route[r].b) for r in used if r not in keys)
        parts = sorted((sorted(c) for c in nx.connected_components(graph)), key=lambda c: (-len(c), c))
        if len(parts) > 1:
            cuts[name] = parts
    routed = {frozenset((str(r["site_a"]), str(r["site_b"]))) for _, r in inputs.routes.iterrows()}
    left, add = dict(cuts), []
    while left:
        pairs = [p for p in itertools.combinations(sorted(opened), 2) if frozenset(p) not in routed
                 and frozenset(p) not in {frozenset(q) for q in add}]
        score = {p: sum(1 for parts in left.values() if not any(p[0] in c and p[1] in c for c in parts))
                 for p in pairs}
        if not score or max(score.values()) == 0:
            break
        best = max(pairs, key=lambda p: score[p])  # the first of the best, in name order
        add.append(best)
        left = {k: v for k, v in left.items() if any(best[0] in c and best[1] in c for c in v)}
    said = "; ".join(f"losing {name} cuts off {', '.join(x for part in parts[1:] for x in part)}"
                     for name, parts in cuts.items())
    cut_off = sorted({x for parts in cuts.values() for part in parts[1:] for x in part})
    if add and not left:
        route_words = f"add a route {' and '.join(f'{a}--{b}' for a, b in add)}"
    elif left and not add:  # every pair of open sites has its route already: a second path runs through another
        route_words = "add a site with routes to both sides"
    else:
        route_words = "add routes between the open sites"
    why = f" ({said})" if said else ""
    return [change("route_diversity", "project", True, False, "",
                   f"route_diversity makes this infeasible: no second route reaches {', '.join(cut_off) or 'every open site'}"
                   f"{why}; {route_words} or set route_diversity to false")]


def _down_sig(x: float, digits: int) -> float:
    """x rounded down to ``digits`` significant digits (a lower limit that is shown must be enough)."""
    if x <= 0:
        return 0.0
    step = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return round(math.floor(x / step + 1e-9) * step, 12)


def _rtt_needed(found: dict):
    """The largest RTT between two opened sites over the routes the elastic design uses, when it is above
    max_site_rtt_ms (the limit lifted); None otherwise."""
    import networkx as nx

    limits = found["limits"]
    if "max_site_rtt_ms" not in limits.lifted:
        return None
    model = found["model"]
    s = found["slacks"]
    graph = nx.Graph()
    graph.add_nodes_from(s["opened"])
    for r in s["used_routes"]:
        route = model.route[r]
        graph.add_edge(route.a, route.b, rtt=route.rtt_ms)
    worst = None
    lengths = dict(nx.all_pairs_dijkstra_path_length(graph, weight="rtt"))
    for a in s["opened"]:
        for b in s["opened"]:
            if a < b and b in lengths.get(a, {}):
                if worst is None or lengths[a][b] > worst[1]:
                    worst = ((a, b), lengths[a][b])
    if worst is None or worst[1] <= float(limits.max_site_rtt_ms) + 1e-9:
        return None
    return worst


# --- the hook solve() calls, and the infeasible design.json ---------------------------------------

def with_diagnosis(exc, inputs, data=None, options=None):
    """``exc`` (an Infeasible) with ``details["diagnosis"]`` filled in, unless options.diagnose is False.
    A failing diagnosis is recorded, never raised: the infeasibility is the answer either way."""
    if options is not None and not getattr(options, "diagnose", True):
        return exc
    try:
        exc.details["diagnosis"] = diagnose(inputs, exc.reason, data=data, options=options)
    except Exception as err:  # noqa: BLE001
        exc.details["diagnosis"] = {"reason": exc.reason, "method": None, "changes": [], "messages": [exc.reason],
                                    "notes": [f"the diagnosis failed: {type(err).__name__}: {err}"]}
    if data is not None and "modes" not in exc.details and getattr(data, "modeset", None) is not None:
        exc.details["modes"] = data.modeset.summary()
    return exc


def infeasible_solution(inputs, exc, options=None) -> dict:
    """The design.json of an infeasible workbook: status, reason, diagnosis, modes, inputs echo, versions."""
    import highspy

    import designer
    from designer.inputs.echo import inputs_echo
    from designer.solve.extract import SCHEMA_VERSION, pyomo_version
    from designer.solve.highs import SolveOptions
    from designer.solve.space import design_space

    diagnosis = exc.details.get("diagnosis")
    return {
        "schema_version": SCHEMA_VERSION, "name": inputs.name, "status": "infeasible", "reason": exc.reason,
        "diagnosis": diagnosis, "mip_gap": None, "solve_seconds": None,
        "objective": inputs.project.get("objective") or "min_cost", "objective_usd": None,
        "totals": {"gpus": 0, "nodes": 0, "capex_usd": 0.0, "power_mw": 0.0, "coherent_ports": 0, "energy_usd": 0.0,
                   "sites_open": 0, "spares_usd": 0.0, "capex_with_spares_usd": 0.0},
        "sites": [], "links": [], "bom": [], "spares": [], "constraints": [], "workload": None,
        "training": None, "modes": {**(exc.details.get("modes") or {}), "space": design_space(inputs)}, "notes": [],
        "solver": {"name": "highs", "pyomo_version": pyomo_version(),
                   "version": f"{highspy.HIGHS_VERSION_MAJOR}.{highspy.HIGHS_VERSION_MINOR}.{highspy.HIGHS_VERSION_PATCH}",
                   "designer_version": designer.__version__, "threads": (options or SolveOptions()).highs_threads,
                   "time_limit": getattr(options, "time_limit", None),
                   "mip_gap_target": getattr(options, "mip_gap", None),
                   "termination": exc.details.get("termination"), "bound_usd": None},
        "inputs": inputs_echo(inputs),
    }
