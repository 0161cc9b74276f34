"""Statistics over a Solution (the design.json dict): pure functions, no plotting, no files.

The report (designer.outputs.report) and the figures (designer.outputs.plots) both read these, so a number shown in a
table and the bar drawn for it come from one place. Every function takes the solution dict and
returns plain Python data; none needs the Pyomo model or the workbook.
"""

from __future__ import annotations

import math
from collections import defaultdict

from designer.errors import Notice
from designer.inputs.workbook import PLANNER_SOURCE

# BOM categories in the order ARCHITECTURE.md lists them (others, if any, follow).
CATEGORIES = ("nodes", "site", "power", "switches", "optics", "dci_routers", "dci_attachment", "coherent", "dci_optics",
              "amplifiers",
              "line_system", "fiber", "fiber_plant", "storage_network", "management_network")
CATEGORY_LABELS = {"nodes": "GPU nodes", "site": "site fixed", "power": "facility power", "switches": "switches",
                   "optics": "cables & optics", "dci_routers": "DCI routers", "dci_attachment": "DCI attachment", "coherent": "coherent optics",
                   "dci_optics": "gray DCI optics", "amplifiers": "in-line amplifiers",
                   "line_system": "line system", "fiber": "fiber", "fiber_plant": "jumpers, trunks & panels",
                   "storage_network": "storage network", "management_network": "management networks"}
LATENCY_PARTS = ("nic", "switching", "propagation", "nvlink")
LATENCY_LABELS = {"nic": "NICs (both ends)", "switching": "switch hops", "propagation": "cable propagation",
                  "nvlink": "NVLink hop"}
TIER_ORDER = ("leaf", "spine", "core")


# --- formatting helpers (shared by the HTML and Markdown reports) ----------------------------------

def percent(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{x * 100:.{digits}f}%"


def number(x, digits: int = 2) -> str:
    """A number for a table: integers with separators, floats to ``digits`` significant decimals."""
    if x is None:
        return ""
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15):
        return f"{int(x):,}"
    if isinstance(x, float):
        if abs(x) >= 1000:
            return f"{x:,.0f}"
        return f"{x:,.{digits}f}" if abs(x) >= 0.01 else f"{x:.3g}"
    return str(x)


# --- summary -------------------------------------------------------------------------------------

#: a run's status in a planner's words (the solver's own termination is in the provenance)
STATUS_WORDS = {"optimal": "proved optimal within the MIP gap", "feasible": "meets every limit; not proved optimal",
                "infeasible": "no design meets every limit", "no_solution": "stopped before finding a design"}


def open_sites(solution: dict) -> list[dict]:
    return [s for s in solution.get("sites", []) if s.get("open")]


def worst_latency_us(solution: dict) -> float | None:
    values = [s["fabric_latency_us"] for s in open_sites(solution) if s.get("fabric_latency_us") is not None]
    return max(values) if values else None


def overview(solution: dict) -> dict:
    """The headline numbers of a design."""
    totals = solution.get("totals") or {}
    inputs = solution.get("inputs") or {}
    project = inputs.get("project") or {}
    return {
        "name": solution.get("name"),
        "status": solution.get("status"),
        "objective": solution.get("objective"),
        "gpus": totals.get("gpus", 0),
        "gpus_required": project.get("gpus_required"),
        "nodes": totals.get("nodes", 0),
        "sites_open": totals.get("sites_open", len(open_sites(solution))),
        "sites_total": len(inputs.get("sites") or solution.get("sites") or []),
        "capex_usd": totals.get("capex_usd"),
        "energy_usd": totals.get("energy_usd", 0.0),
        "objective_usd": solution.get("objective_usd"),
        "budget_usd": project.get("budget_usd"),
        "power_mw": totals.get("power_mw"),
        "power_cap_mw": sum(s.get("power_cap_mw") or 0.0 for s in open_sites(solution)),
        "coherent_ports": totals.get("coherent_ports", 0),
        "wavelengths": sum(int(lk.get("wavelengths") or 0) for lk in solution.get("links", [])),
        "status_words": STATUS_WORDS.get(solution.get("status"), solution.get("status")),
        "mip_gap": solution.get("mip_gap"),
        "solve_seconds": solution.get("solve_seconds"),
        "worst_latency_us": worst_latency_us(solution),
        "max_fabric_latency_us": project.get("max_fabric_latency_us"),
        "spares_usd": totals.get("spares_usd", 0.0),
        "capex_with_spares_usd": totals.get("capex_with_spares_usd", totals.get("capex_usd")),
        "lead_time": longest_lead_time(solution),
        "gridded": gridded_choices(solution),
    }


def longest_lead_time(solution: dict) -> dict | None:
    """The longest quoted lead time of the BOM: {weeks, items (those that take it)}; None without quotes."""
    quoted = [b for b in solution.get("bom", []) if b.get("lead_time_weeks") is not None]
    if not quoted:
        return None
    weeks = max(b["lead_time_weeks"] for b in quoted)
    return {"weeks": weeks, "items": sorted({b["item"] for b in quoted if b["lead_time_weeks"] == weeks})}


# --- cost ----------------------------------------------------------------------------------------

def _ordered_categories(present) -> list[str]:
    return [c for c in CATEGORIES if c in present] + sorted(c for c in present if c not in CATEGORIES)


def cost_by_category(solution: dict) -> dict[str, float]:
    """Capex per BOM category, in the fixed category order; categories with no cost are left out."""
    totals: dict[str, float] = defaultdict(float)
    for line in solution.get("bom", []):
        totals[line["category"]] += float(line["extended_usd"])
    return {c: totals[c] for c in _ordered_categories(totals) if totals[c]}


def cost_by_site(solution: dict) -> dict[str, float]:
    """Capex per BOM scope: each site, then each route ("a--b": fiber and amplifiers)."""
    totals: dict[str, float] = defaultdict(float)
    for line in solution.get("bom", []):
        totals[line["site"]] += float(line["extended_usd"])
    names = [s["name"] for s in solution.get("sites", []) if s["name"] in totals]
    return {k: totals[k] for k in names + sorted(k for k in totals if k not in names)}


def cost_matrix(solution: dict) -> tuple[list[str], list[str], list[list[float]]]:
    """(scopes, categories, usd[scope][category]) for a stacked bar."""
    by = defaultdict(lambda: defaultdict(float))
    for line in solution.get("bom", []):
        by[line["site"]][line["category"]] += float(line["extended_usd"])
    scopes = list(cost_by_site(solution))
    categories = list(cost_by_category(solution))
    return scopes, categories, [[by[s][c] for c in categories] for s in scopes]


# --- power ---------------------------------------------------------------------------------------

def power_vs_cap(solution: dict) -> list[dict]:
    """Per open site: IT power, facility power (IT x PUE), the cap and the share of it used."""
    rows = []
    for s in open_sites(solution):
        cap = float(s.get("power_cap_mw") or 0.0)
        used = float(s.get("power_mw") or 0.0)
        rows.append({"site": s["name"], "it_mw": float(s.get("it_power_mw") or 0.0), "facility_mw": used,
                     "cap_mw": cap, "pue": s.get("pue"), "headroom_mw": cap - used,
                     "share": used / cap if cap else None})
    return rows


# --- sites and routes (the map) -----------------------------------------------------------------

def site_locations(solution: dict) -> list[dict]:
    """Every site of the workbook with its coordinates (None when not given) and what was opened."""
    by_name = {s["name"]: s for s in solution.get("sites", [])}
    rows = []
    echo = (solution.get("inputs") or {}).get("sites") or [{"name": n} for n in by_name]
    for site in echo:
        s = by_name.get(site["name"], {})
        rows.append({"name": site["name"], "lat": site.get("lat"), "lon": site.get("lon"),
                     "status": site.get("status", "candidate"), "open": bool(s.get("open")),
                     "gpus": s.get("gpus", 0), "power_mw": site.get("power_mw")})
    return rows


def route_rows(solution: dict) -> list[dict]:
    """Every route of the workbook; used ones carry the solution's link (coherent type, capacity, RTT)."""
    from models.intersite import rtt_ms  # pure function: RTT over fiber

    links = {frozenset((lk["site_a"], lk["site_b"])): lk for lk in solution.get("links", [])}
    rows, seen = [], set()
    for r in (solution.get("inputs") or {}).get("routes") or []:
        key = frozenset((r["site_a"], r["site_b"]))
        seen.add(key)
        lk = links.get(key)
        rows.append({"site_a": r["site_a"], "site_b": r["site_b"], "distance_km": r.get("distance_km"),
                     "used": lk is not None, "coherent_model": lk and lk["coherent_model"],
                     "wavelengths": lk and lk["wavelengths"], "capacity_gbps": lk and lk["capacity_gbps"],
                     "fiber_pairs": lk and lk["fiber_pairs"], "fiber_pairs_available": r.get("fiber_pairs"),
                     "amplifiers": lk and lk["amplifiers"],
                     "rtt_ms": lk["rtt_ms"] if lk else rtt_ms(float(r.get("distance_km") or 0.0))})
    for key, lk in links.items():
        if key not in seen:
            rows.append({**lk, "used": True})
    return rows


# --- per-site fabric -----------------------------------------------------------------------------

def fabric_tiers(site: dict) -> list[dict]:
    """The switch tiers of a site's scale-out fabric, leaf first (DCI routers left out)."""
    tiers = [t for t in site.get("tiers", []) if t["tier"] in TIER_ORDER]
    return sorted(tiers, key=lambda t: TIER_ORDER.index(t["tier"]))


def in_use(tier: dict, what: str) -> str:
    """A tier's ports or cages in use: "2,048 / 4,096 (50.0%)" (blank for a tier without the figures)."""
    used, total = tier.get(f"used_{what}"), tier.get(f"total_{what}")
    if used is None or not total:
        return ""
    return f"{number(used)} / {number(total)} ({percent(used / total)})"


def dci_tiers(site: dict) -> list[dict]:
    return [t for t in site.get("tiers", []) if t["tier"] == "dci"]


def latency_budget(site: dict, limit_us: float | None = None) -> dict:
    """A site's worst-case one-way latency split into its parts (us), with the limit when given."""
    parts = dict(site.get("latency_breakdown_us") or {})
    rows = [{"part": p, "label": LATENCY_LABELS.get(p, p), "us": float(parts.get(p) or 0.0)}
            for p in list(LATENCY_PARTS) + [p for p in parts if p not in LATENCY_PARTS]]
    total = site.get("fabric_latency_us")
    if total is None:
        total = sum(r["us"] for r in rows)
    hops = site.get("hops")
    per_hop = None
    if hops:
        per_hop = float(parts.get("switching") or 0.0) / hops
    return {"site": site["name"], "parts": rows, "total_us": float(total), "hops": hops,
            "per_hop_us": per_hop, "limit_us": limit_us,
            "headroom_us": None if limit_us is None else float(limit_us) - float(total)}


def fabric_summary(site: dict) -> dict:
    """The facts a fabric diagram shows: tiers with counts per plane and per network (a plane, or one rail of a
    rail-only fabric: its rails are not joined), links per tier."""
    planes = int(site.get("planes") or 1)
    rail_only = site.get("topology") == "rail_only"
    networks = planes * int(site.get("rails") or 1) if rail_only else planes
    tiers = []
    for t in fabric_tiers(site):
        tiers.append({**t, "per_plane": t["count"] / planes if planes else t["count"],
                      "per_network": t["count"] / networks})
    return {"site": site["name"], "topology": site.get("topology"), "protocol": site.get("protocol"),
            "fabric_tiers": site.get("fabric_tiers"), "planes": planes, "rails": site.get("rails"),
            "nodes": site.get("nodes"), "gpus": site.get("gpus"), "endpoints": site.get("endpoints"),
            "link_gbps": site.get("link_gbps"), "oversubscription": site.get("oversubscription"),
            "scalable_units": site.get("scalable_units"), "tiers": tiers, "networks": networks, "rail_only": rail_only,
            "caveat": RAIL_ONLY_CAVEAT if rail_only else None,
            "links": list(site.get("fabric_links") or []), "dci": dci_tiers(site),
            "dci_capacity_gbps": site.get("dci_capacity_gbps"), "dci_attachment": site.get("dci_attachment"),
            "floor": floor_text(site)}


RAIL_ONLY_CAVEAT = ("Rail-only: each rail is its own network and no switch joins the rails; traffic between GPUs "
                    "on different rails crosses the node's NVLink first, so the bisection is per rail")


def resilience_view(solution: dict) -> dict | None:
    """design.json ``resilience`` for the report: per open site its bisection (per network: a plane, or a rail of
    a rail-only fabric) and what the most loaded spine or core switch leaves; per failure (a route, or an srlg
    group's routes) the capacity lost and left and the GPUs cut off; whether the workbook requires N-1."""
    res = solution.get("resilience")
    if not res:
        return None
    by_name = {s["name"]: s for s in open_sites(solution)}
    sites = []
    for r in res.get("sites", []):
        site = by_name.get(r["site"]) or {}
        rail_only = site.get("topology") == "rail_only"
        n, planes = r.get("networks") or 1, int(site.get("planes") or 1)
        split = f"{n} rails" + (f" ({planes} planes x {n // planes})" if planes > 1 else "") if rail_only \
            else f"{n} planes"
        losses = [{"role": role, "device": r[role]["device"], "left_gbps": r[role]["bisection_left_gbps"],
                   "share_left": r[role]["share_left"]} for role in ("spine", "core") if r.get(role)]
        sites.append({"site": r["site"], "bisection_gbps": r.get("bisection_gbps"), "networks": r.get("networks"),
                      "per_network_gbps": r.get("per_network_gbps"), "split": split,
                      "rail_only": rail_only, "losses": losses})
    project = (solution.get("inputs") or {}).get("project") or {}
    return {"sites": sites, "routes": list(res.get("routes", [])), "required": bool(project.get("route_diversity")),
            "rail_only": [s["site"] for s in sites if s["rail_only"]], "caveat": RAIL_ONLY_CAVEAT}


def floor_plan(site: dict) -> dict | None:
    """The floor a site's figure draws (its ``layout``): racks of nodes along rows, each rack's group (the
    scalable unit a rail leaf serves, or the nodes of one top-of-rack leaf), rows, nodes per rack and the nodes
    of the fullest rack (``fullest``: fewer than a rack holds where the site has fewer nodes)."""
    lay = site.get("layout")
    if not lay or not lay.get("node_racks"):
        return None
    leaf = next((t for t in site.get("tiers", []) if t["tier"] == "leaf"), {})
    rail = site.get("topology") in ("rail_optimized", "rail_only")
    down, rails = int(leaf.get("down_ports") or 1), int(site.get("rails") or 1)
    served = down if rail else max(1, -(-down // rails))
    per_rack, per_row, racks = int(lay["nodes_per_rack"]), int(lay["racks_per_row"]), int(lay["node_racks"])
    nodes = int(site.get("nodes") or 0)
    return {"racks": racks, "per_rack": per_rack, "fullest": min(per_rack, nodes) or per_rack, "per_row": per_row,
            "rows": -(-racks // per_row),
            "group": [(r * per_rack) // served for r in range(racks)],
            "group_name": "scalable unit (its rail leaves in a network rack)" if rail else "top-of-rack leaf",
            "groups": -(-nodes // served), "rack_kw": lay["rack_kw"],
            "basis": lay.get("basis", "implicit layout"), "floor_rows": lay.get("rows")}


def floor_text(site: dict) -> str:
    """Where the cable lengths come from, in a sentence (the site's ``layout``, models.layout)."""
    lay = site.get("layout")
    if not lay:
        return ""
    given = ", ".join(f"{tier.replace('_', '-')} {m:g} m" for tier, m in (lay.get("planner_lengths") or {}).items())
    text = (f"Cable lengths from the implicit floor layout: {lay['nodes_per_rack']} node(s) a rack at "
            f"{lay['rack_kw']:g} kW, {lay['node_racks']:,} racks of nodes in rows of {lay['racks_per_row']} racks "
            f"{lay['rack_pitch_m']:g} m apart, rows {lay['row_pitch_m']:g} m apart; each run {lay['rise_m']:g} m up "
            f"to the tray and down at each end, +{lay['slack']:.0%} slack; laid out for a hall of "
            f"{lay['footprint_nodes']:,} nodes.")
    return text + (f" The planner's lengths: {given}." if given else "")


RACK_RU = 42  # units of a network rack: the common 19-inch 42U rack (EIA-310 widths; heights of 42-52U exist) [E]
NETWORK_ROW = ("leaf", "spine", "core", "dci")  # the order network racks are listed in


def pack(devices: list[tuple[str, int, float]], rack_kw: float) -> list[dict]:
    """Devices (model, RU, W) filling racks in order: a rack takes the next device while it stays within RACK_RU
    units and rack_kw (a device too big for any rack stands alone). Racks as {devices: [[model, count, RU each]], ru,
    kw}."""
    racks: list[dict] = []
    for model, ru, watts in devices:
        rack = racks[-1] if racks else None
        if rack is None or rack["ru"] + ru > RACK_RU or rack["kw"] + watts / 1e3 > rack_kw + 1e-9:
            rack = {"devices": [], "ru": 0, "kw": 0.0}
            racks.append(rack)
        if rack["devices"] and rack["devices"][-1][0] == model:
            rack["devices"][-1][1] += 1
        else:
            rack["devices"].append([model, 1, ru])
        rack["ru"] += ru
        rack["kw"] += watts / 1e3
    return racks


def network_racks(site: dict, solution: dict) -> dict | None:
    """The site's network racks, where cabling.csv places its switches (models.layout): a rail design's leaves in
    its scalable units' network racks (``<site>-su<n>-net``, each unit's share of the leaves); spines, cores and DCI
    routers in the network row (``<site>-net-<tier>``), each tier filling racks of RACK_RU units and the site's
    rack_kw in order (pack), with the switches' ``ru`` and ``power_w`` (optics not included). Other leaves
    stand in racks of nodes: counted, not racked here. {racks: [{name, tier, devices, ru, kw}], rack_ru, rack_kw,
    in_node_racks}."""
    lay = site.get("layout")
    if not lay or not site.get("open"):
        return None
    switches = {str(r["model"]): r for r in (solution.get("inputs") or {}).get("switches") or []}
    rack_kw = float(lay["rack_kw"])

    def units(tiers):
        return [(t["model"], int(switches.get(t["model"], {}).get("ru") or 1),
                 float(switches.get(t["model"], {}).get("power_w") or 0.0)) for t in tiers for _ in range(t["count"])]

    prefix = str(site["name"]).strip().replace(" ", "-")
    racks, in_node_racks = [], 0
    rail = site.get("topology") in ("rail_optimized", "rail_only") and site.get("scalable_units")
    for tier in NETWORK_ROW:
        rows = [t for t in site.get("tiers", []) if t["tier"] == tier]
        if not rows:
            continue
        if tier == "leaf" and not rail:
            in_node_racks += sum(t["count"] for t in rows)
            continue
        if tier == "leaf":
            devices, sus = units(rows), int(site["scalable_units"])
            for su in range(sus):
                share = devices[su * len(devices) // sus:(su + 1) * len(devices) // sus]
                for k, rack in enumerate(pack(share, rack_kw)):
                    racks.append({"name": f"{prefix}-su{su + 1}-net" + (f"-{k + 1}" if k else ""), "tier": tier,
                                  **rack})
            continue
        for k, rack in enumerate(pack(units(rows), rack_kw)):
            racks.append({"name": f"{prefix}-net-{tier}-{k + 1:02d}", "tier": tier, **rack})
    return {"racks": racks, "rack_ru": RACK_RU, "rack_kw": rack_kw, "in_node_racks": in_node_racks}


def rack_kinds(plan: dict) -> list[dict]:
    """The distinct network racks of a site (same tier and devices), in order, each with how many there are."""
    kinds: dict[tuple, dict] = {}
    for rack in plan["racks"]:
        key = (rack["tier"], tuple(map(tuple, rack["devices"])))
        if key in kinds:
            kinds[key]["count"] += 1
        else:
            kinds[key] = {**rack, "count": 1}
    return list(kinds.values())


def rack_rows(solution: dict) -> list[dict]:
    """Every network rack of every open site (design.xlsx sheet network_racks)."""
    out = []
    for site in open_sites(solution):
        plan = network_racks(site, solution)
        for rack in plan["racks"] if plan else []:
            out.append({"site": site["name"], "rack": rack["name"], "tier": rack["tier"],
                        "devices": ", ".join(f"{n} x {model}" for model, n, _ in rack["devices"]),
                        "ru_used": rack["ru"], "rack_ru": plan["rack_ru"], "kw": round(rack["kw"], 3),
                        "rack_kw": plan["rack_kw"]})
    return out


# --- communication -------------------------------------------------------------------------------

def communication(solution: dict) -> dict | None:
    """The all-reduce estimate with its terms, and the communication share for other accumulation steps."""
    wl = solution.get("workload")
    if not wl:
        return None
    t_s = float(wl["time_ms"]) / 1e3
    compute_s = float(wl.get("step_compute_ms") or 0.0) / 1e3
    accum = int(wl.get("grad_accum_steps") or 1)
    steps = sorted({1, 2, 4, 8, 16, 32, accum})
    curve = [{"grad_accum_steps": a, "comm_fraction": t_s / (a * compute_s + t_s) if (a * compute_s + t_s) else 0.0}
             for a in steps]
    terms = [
        ("intra-site bandwidth", float(wl.get("intra_bw_ms") or 0.0)),
        ("intra-site latency", float(wl.get("intra_latency_ms") or 0.0)),
        ("inter-site bandwidth", float(wl.get("inter_bw_ms") or 0.0)),
        ("inter-site latency", float(wl.get("inter_latency_ms") or 0.0)),
    ]
    bw = terms[0][1] + terms[2][1]
    lat = terms[1][1] + terms[3][1]
    return {**wl, "terms": [{"term": n, "ms": v} for n, v in terms], "bandwidth_term_ms": bw, "latency_term_ms": lat,
            "step_ms": accum * compute_s * 1e3 + t_s * 1e3, "curve": curve,
            "syncs_per_microbatch": 1.0 / accum}


# --- training ------------------------------------------------------------------------------------

STEP_PARTS = (("compute", "compute_s"), ("tensor parallel", "tp"), ("pipeline", "pp"), ("data parallel", "dp"),
              ("expert all-to-all", "ep"), ("jitter tail", "jitter_s"))


def training(solution: dict) -> dict | None:
    """The training block with the step's parts in waterfall order (seconds and shares of the step)."""
    t = solution.get("training")
    if not t:
        return None
    step = t["step_time_s"]
    parts = []
    for label, key in STEP_PARTS:
        value = t["comm_exposed_s"][key] if key in t["comm_exposed_s"] else t[key]
        parts.append({"part": label, "s": value, "share": value / step if step else 0.0})
    return {**t, "parts": parts, "network_s": step - t["compute_s"]}


# --- constraints and modes ----------------------------------------------------------------------

def constraint_rows(solution: dict) -> list[dict]:
    """Planner-level constraints, binding first, then by relative slack."""
    rows = []
    for c in solution.get("constraints", []):
        rhs = float(c["rhs"]) if c.get("rhs") is not None else 0.0
        rel = abs(float(c["slack"])) / max(abs(rhs), 1e-9) if c.get("slack") is not None else None
        rows.append({**c, "relative_slack": rel})
    return sorted(rows, key=lambda r: (not r.get("binding"), r["relative_slack"] if r["relative_slack"] is not None
                                       else math.inf))


def sensitivity_rows(solution: dict) -> list[dict]:
    """What relaxing each limit buys (design.json ``sensitivity``), binding limits first, largest saving first."""
    rows = (solution.get("sensitivity") or {}).get("rows") or []
    return sorted(rows, key=lambda r: (not r["binding"], -(r["saving_usd"] or 0.0) if r["limit"] != "budget_usd"
                                       else -math.inf))


def alternative_rows(solution: dict) -> list[dict]:
    """The alternatives (design.json ``alternatives``) with their designs in words: feasible ones by what the
    objective ranks (the cost; under a training objective the run's cost or its tokens per second)."""
    rows = (solution.get("alternatives") or {}).get("rows") or []
    out = [{**r, "design": ", ".join(r["protocols"] + r["topologies"]) + (
        f" at {len(r['sites'])} site(s)" if r["sites"] else "")} for r in rows]
    rank = {"min_cost_per_run": lambda r: r.get("run_delta_usd"),
            "max_tokens_per_s": lambda r: -(r.get("tokens_delta_per_s") or 0.0)}.get(
        solution.get("objective"), lambda r: r["cost_delta_usd"])
    return sorted(out, key=lambda r: (r["objective_usd"] is None, rank(r) or 0.0))


def design_space(solution: dict) -> list[dict]:
    """What each fabric choice was searched over (design.json modes.space; none in a design.json of before it)."""
    return list((solution.get("modes") or {}).get("space") or [])


def gridded_choices(solution: dict) -> list[str]:
    """The fabric choices searched over a grid, not over every value a planner could give them."""
    return [row["choice"] for row in design_space(solution) if not row["every"]]


def modes_filtered(solution: dict) -> list[dict]:
    """Each reason a fabric mode was left out, with how many and one example, most frequent first."""
    modes = solution.get("modes") or {}
    examples = {e["reason"]: e["mode"] for e in modes.get("examples", [])}
    rows = [{"reason": r, "count": n, "example": examples.get(r, "")} for r, n in (modes.get("filtered") or {}).items()]
    return sorted(rows, key=lambda r: -r["count"])


# --- bill of materials and provenance ------------------------------------------------------------

def bom_rows(solution: dict) -> list[dict]:
    """BOM lines grouped by scope then category order, largest first inside a category."""
    order = {c: i for i, c in enumerate(_ordered_categories({b["category"] for b in solution.get("bom", [])}))}
    scopes = {s: i for i, s in enumerate(cost_by_site(solution))}
    return sorted(solution.get("bom", []), key=lambda b: (scopes.get(b["site"], 99), order[b["category"]],
                                                          -b["extended_usd"]))


CATALOG_TABLES = (("node_types", "name"), ("switches", "model"), ("optics", "name"), ("coherent", "name"),
                  ("amplifiers", "name"), ("protocols", "name"))


def catalog_sources(solution: dict, used_only: bool = True) -> list[dict]:
    """The catalog rows behind the design with their ``source``; only the items in the BOM when used_only."""
    inputs = solution.get("inputs") or {}
    used = {b["item"] for b in solution.get("bom", [])}
    used |= {s.get("protocol") for s in open_sites(solution)}
    used |= {s.get("node_type") for s in open_sites(solution)}
    rows = []
    for table, key in CATALOG_TABLES:
        for r in inputs.get(table) or []:
            name = r.get(key)
            if used_only and name not in used:
                continue
            source = r.get("source") or ""
            rows.append({"table": table, "item": name, "price_usd": r.get("price_usd", r.get("node_price_usd")),
                         "source": source, "planner": source.startswith(PLANNER_SOURCE)})
    return rows


def input_notices(solution: dict, kind: str) -> list[str]:
    """The loader's notices of one kind (read, ignored, catalog, warning) as the CLI prints them."""
    return [str(Notice(**n)) for n in (solution.get("inputs") or {}).get("notices") or [] if n["kind"] == kind]


def provenance(solution: dict) -> dict:
    """Where the design comes from: workbook, versions, solver settings; the input warnings and catalog notices."""
    inputs = solution.get("inputs") or {}
    solver = solution.get("solver") or {}
    return {"workbook": inputs.get("workbook"), "sha256": inputs.get("sha256"),
            "designer_version": solver.get("designer_version"), "pyomo_version": solver.get("pyomo_version"),
            "highs_version": solver.get("version"), "solver": solver.get("name"),
            "termination": solver.get("termination"), "time_limit": solver.get("time_limit"),
            "mip_gap_target": solver.get("mip_gap_target"), "threads": solver.get("threads"),
            "bound_usd": solver.get("bound_usd"), "schema_version": solution.get("schema_version"),
            "warnings": input_notices(solution, "warning"), "catalog": input_notices(solution, "catalog")}
