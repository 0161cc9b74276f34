"""Solved Pyomo model -> Solution: the one design object every exporter, report and audit reads.

Counts are read from the model's integer variables; costs, power and the bill of materials are then
recomputed here from those counts and the catalog, and checked against the model's own capex.
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

import pyomo.environ as pyo

import designer
from designer.formats import money
from designer.inputs.catalog import cages, lanes
from designer.inputs.echo import inputs_echo, plain
from designer.solve.space import cheaper_split, design_space, polish_notes, split_notes
from designer.solve.spares import spare_lines
from designer.solve.training import training_block
from models.modes import (
    hall_nodes,
    oversubscription_of,
    pool_gbps,
    power_cap_mw,
    site_floor,
    site_layout_of,
    site_rack_kw,
)
from models.intersite import bdp_mb, is_gray, links_on_pairs, required_osnr, route_watts
from models.network import (
    HOURS_PER_YEAR,
    cable_items,
    core_count,
    agg_split,
    leaf_count,
    leaf_split,
    plant_counts,
    router_groups,
    spine_count,
    support_links,
    tier_links,
)

SCHEMA_VERSION = 1


def ival(x) -> int:
    """Integer value of a variable or expression (0 for plain zeros)."""
    return int(round(pyo.value(x))) if not isinstance(x, (int, float)) else int(round(x))


QUOTED = {"nodes": "node_types", "switches": "switches", "dci_routers": "switches", "optics": "optics",
          "coherent": "coherent", "dci_optics": "coherent", "amplifiers": "amplifiers",
          "line_system": "amplifiers", "dci_attachment": "optics", "fiber_plant": "fiber_plant"}  # BOM category -> table
QUOTE_COLUMNS = ("sku", "lead_time_weeks")


def quotes(inputs) -> dict[tuple[str, str], dict]:
    """The vendor-quote cells (sku, lead_time_weeks) of each catalog item that has any, by (category, item); a
    support network's switch and link give theirs as switch_sku, link_sku, ..."""
    out = {}

    def add(category, item, row, prefix=""):
        given = {c: v for c in QUOTE_COLUMNS if (v := plain(row.get(prefix + c))) is not None}
        if given:
            out[category, str(item)] = given

    for category, table in QUOTED.items():
        for item, row in getattr(inputs, table).iterrows():
            add(category, item, row)
    for _, row in inputs.support_networks.iterrows():
        for part, item in (("switch", "switch_model"), ("link", "link_item")):
            add(row["category"], row[item], row, f"{part}_")
    return out


class Bom:
    """Bill of materials lines keyed by (site, category, item), with the item's vendor-quote cells."""

    def __init__(self, quoted: dict[tuple[str, str], dict]):
        self.lines: dict[tuple[str, str, str], dict] = {}
        self.quoted = quoted

    def add(self, site, category, item, quantity, unit_price, unit_power_w=0.0):
        if quantity <= 0:
            return
        key = (site, category, item)
        line = self.lines.setdefault(key, {"site": site, "category": category, "item": item, "quantity": 0,
                                           "unit_price_usd": float(unit_price),
                                           "unit_power_w": float(unit_power_w),
                                           **self.quoted.get((category, item), {})})
        line["quantity"] += quantity

    def rows(self) -> list[dict]:
        out = []
        for line in self.lines.values():
            q = line["quantity"]
            out.append({**line, "quantity": q, "extended_usd": q * line["unit_price_usd"],
                        "total_power_w": q * line["unit_power_w"]})
        return out

    def total(self, site=None, field="extended_usd") -> float:
        return sum(r[field] for r in self.rows() if site is None or r["site"] == site)


def extract(model, data, outcome, options, seconds: float) -> dict:
    """Build the Solution dict (design.json content) from the solved model."""
    inputs = data.inputs
    project = inputs.project
    sw = inputs.switches
    co = inputs.coherent
    bom = Bom(quotes(inputs))
    sites_out, links_out = [], []
    site_caps: dict[str, float] = defaultdict(float)
    site_bdp: dict[str, float] = defaultdict(float)
    coherent_at: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    end_units: dict[str, list] = defaultdict(list)  # site -> (line item, units) at its end of its lit pairs

    for r in model.R:
        route = model.route[r]
        chosen = [c for c in route.coherent if ival(model.x[r, c]) == 1]
        if not chosen:
            continue
        c = chosen[0]
        waves, pairs = ival(model.waves[r, c]), ival(model.pairs[r, c])
        cap = waves * float(co.loc[c, "gbps"])
        gray = is_gray(co.loc[c])
        line = () if gray else route.line
        label = f"{route.a}--{route.b}"
        for end in (route.a, route.b):
            site_caps[end] += cap
            site_bdp[end] += bdp_mb(cap, route.rtt_ms)
            coherent_at[end][c] += waves
        for item in line:
            if item.at_ends:
                for end in (route.a, route.b):
                    end_units[end].append((item, item.count // 2 * pairs))
            else:
                category = "line_system" if item.role == "hut" else "amplifiers"
                bom.add(label, category, item.name, item.count * (1 if item.role == "hut" else pairs),
                        item.price_usd, item.power_w)
        links_out.append({
            "site_a": route.a, "site_b": route.b, "coherent_model": c, "wavelengths": waves,
            "coherent_ports": 2 * waves, "fiber_pairs": pairs,
            "amplifiers": sum(i.count for i in line if i.role == "inline") * pairs, "capacity_gbps": cap,
            "rtt_ms": route.rtt_ms, "distance_km": route.distance_km,
            "channels_per_pair": None if gray else links_on_pairs(co.loc[c], route.band)[0],
            "fiber_pairs_per_link": links_on_pairs(co.loc[c])[1] if gray else None,
            "fiber_pairs_available": route.fiber_pairs, "optic_kind": "gray" if gray else "coherent",
            "band": None if gray else route.band, "osnr_db": route.osnr_db.get(c),
            "required_osnr_db": required_osnr(co.loc[c]) if c in route.osnr_db else None,
            "huts": sum(i.count for i in line if i.role == "hut"),
            "route_power_w": route_watts(route, pairs, 1) if line else 0.0,
            "encrypted": data.inter.encryption is not None, "encryption": data.inter.encryption,
        })
        if pairs:
            bom.add(label, "fiber", f"fiber pair-km ({route.distance_km:g} km)", pairs * route.distance_km,
                    route.cost_per_pair / route.distance_km if route.distance_km else 0.0)

    for s in data.sites:
        row = inputs.sites.loc[s]
        picked = [i for i in model.modes_at[s] if ival(model.y[s, i]) == 1]
        entry = {"name": s, "open": bool(picked), "nodes": 0, "gpus": 0, "topology": None, "protocol": None,
                 "link_gbps": None, "oversubscription": None, "tiers": [], "power_mw": 0.0, "capex_usd": 0.0,
                 "fabric_latency_us": None, "power_cap_mw": power_cap_mw(inputs, s), "max_nodes": int(row["max_nodes"]),
                 "pue": float(row["pue"])}
        if picked:
            entry.update(site_fabric(model, data, s, picked[0], bom))
            routers = []
            for k in model.K:
                count = ival(model.routers[s, k])
                if count:
                    routers.append({"model": k, "count": count})
                    bom.add(s, "dci_routers", k, count, sw.loc[k, "price_usd"], sw.loc[k, "power_w"])
            for c, waves in coherent_at[s].items():
                category = "dci_optics" if is_gray(co.loc[c]) else "coherent"
                bom.add(s, category, c, waves, co.loc[c, "price_usd"], co.loc[c, "power_w"])
            for item, units in end_units[s]:
                bom.add(s, "line_system", item.name, units, item.price_usd, item.power_w)
            if routers:
                gbps = max(int(co.loc[c, "gbps"]) for c in coherent_at[s]) if coherent_at[s] else None
                for rt in routers:
                    entry["tiers"].append(router_tier(model, s, rt["model"], rt["count"], gbps))
            attachment = dci_attachment(model, data, s, picked[0], bom)
            if attachment:  # the routers' ports on the leaves are in use too
                entry["dci_attachment"] = attachment
                port_use([t for t in entry["tiers"] if t["tier"] != "dci"], entry["fabric_links"] + [
                    {"tier": "node_leaf", "gbps": attachment["gbps"], "count": attachment["links"]}], sw)
            entry["dci_capacity_gbps"] = site_caps[s]
            entry["dci_bdp_mb"] = site_bdp[s]
            entry["support_networks"] = support_networks(model, data, s, entry["nodes"], bom)
            plant = fiber_plant(model, data, s, bom)
            if plant:
                entry["fiber_plant"] = plant
            it_w = bom.total(s, "total_power_w")
            facility_mw = it_w * float(row["pue"]) / 1e6
            entry["it_power_mw"] = it_w / 1e6
            entry["power_mw"] = facility_mw
            bom.add(s, "site", f"{s} site fixed cost", 1, row["fixed_cost_usd"])
            bom.add(s, "power", "facility power (MW)", facility_mw, row["power_cost_usd_per_mw"])
            entry["capex_usd"] = bom.total(s)
            entry["energy_usd"] = (float(project.get("horizon_years") or 0) * HOURS_PER_YEAR
                                   * float(row["energy_usd_per_mwh"]) * facility_mw)
        sites_out.append(entry)

    rows = bom.rows()
    capex = sum(r["extended_usd"] for r in rows)
    model_capex = pyo.value(model.capex)
    if abs(capex - model_capex) > 1e-6 * max(1.0, abs(model_capex)) + 1e-3:
        raise RuntimeError(f"bill of materials ${capex:,.2f} differs from the model's capex ${model_capex:,.2f}")
    energy = sum(e.get("energy_usd", 0.0) for e in sites_out)
    spares = spare_lines(rows, inputs)
    spares_usd = sum(r["extended_usd"] for r in spares)
    open_sites = [e for e in sites_out if e["open"]]
    solution = {
        "schema_version": SCHEMA_VERSION,
        "name": inputs.name,
        "status": outcome.status,
        "mip_gap": outcome.gap,
        "solve_seconds": round(seconds, 3),
        "objective": project.get("objective") or "min_cost",
        "objective_usd": capex + energy,
        "totals": {
            "gpus": sum(e["gpus"] for e in sites_out), "nodes": sum(e["nodes"] for e in sites_out),
            "capex_usd": capex, "power_mw": sum(e["power_mw"] for e in sites_out),
            "coherent_ports": sum(link["coherent_ports"] for link in links_out), "energy_usd": energy,
            "sites_open": len(open_sites), "route_power_mw": sum(link["route_power_w"] for link in links_out) / 1e6,
            "spares_usd": spares_usd, "capex_with_spares_usd": capex + spares_usd,
        },
        "sites": sites_out,
        "links": links_out,
        "bom": rows,
        "spares": spares,
        "modes": {**data.modeset.summary(), "space": design_space(inputs, data.polish is not None),
                  "polish": data.polish and {"saving_usd": data.polish["saving_usd"]}},
        "workload": workload_estimate(data, open_sites, links_out),
        "solver": {
            "name": "highs", "version": highs_version(), "pyomo_version": pyomo_version(),
            "designer_version": designer.__version__, "threads": options.highs_threads,
            "time_limit": options.time_limit, "mip_gap_target": options.mip_gap,
            "termination": outcome.termination, "bound_usd": outcome.bound,
        },
    }
    solution["constraints"] = constraint_table(solution, inputs)
    solution["notes"] = (list(data.inter.notes) + split_notes(open_sites) + polish_notes(open_sites, data.polish)
                         + spares_over_budget(solution, project.get("budget_usd")))
    solution["training"] = training_block(inputs, solution)
    solution["inputs"] = inputs_echo(inputs)
    return solution


def spares_over_budget(solution: dict, budget) -> list[str]:
    """A warning when capex with spares plus energy is above budget_usd (spares are sized after the solve)."""
    totals = solution["totals"]
    total = totals["capex_with_spares_usd"] + totals["energy_usd"]
    if budget is None or total <= float(budget) * (1 + 1e-9):
        return []
    return [f"warning: capex with spares {money(totals['capex_with_spares_usd'])} plus energy "
            f"{money(totals['energy_usd'])} is above budget_usd {money(float(budget))} by "
            f"{money(total - float(budget))}: the spares ({money(totals['spares_usd'])}) are sized after the "
            "optimization, which kept the design itself within the budget"]


def site_fabric(model, data, s, i, bom: Bom) -> dict:
    """Counts, links, latency and BOM lines of the fabric of site s in mode i."""
    mode = data.modes[i]
    inputs = data.inputs
    node = data.node
    sw = inputs.switches
    mult = data.multiplier[i]
    nodes = ival(model.nodes[s, i])
    gpn = int(node["gpus_per_node"])
    leaves = mult * ival(leaf_count(model, s, i))
    spines = mult * ival(spine_count(model, s, i))
    cores = mult * ival(core_count(model, s, i))
    bom.add(s, "nodes", str(inputs.project["node_type"]), nodes, node["node_price_usd"],
            float(node["node_power_kw"]) * 1e3)
    down, up = leaf_split(model, s, i)
    tiers = [{"tier": "leaf", "model": mode.leaf, "count": leaves, "port_gbps": mode.g0, "down_ports": down,
              "up_ports": up, "down_gbps": mode.g0, "up_gbps": (mode.g1 or mode.g0) if mode.tiers >= 2 else None,
              "buffer_mb": float(sw.loc[mode.leaf, "buffer_mb"])}]
    bom.add(s, "switches", mode.leaf, leaves, sw.loc[mode.leaf, "price_usd"], sw.loc[mode.leaf, "power_w"])
    if spines:
        spine_row = {"tier": "spine", "model": mode.spine, "count": spines, "port_gbps": mode.g1,
                     "buffer_mb": float(sw.loc[mode.spine, "buffer_mb"])}
        if mode.tiers == 3:
            d2, u2 = agg_split(model, s, i)
            spine_row.update(down_ports=d2, up_ports=u2, down_gbps=mode.g1, up_gbps=mode.g2)
        else:
            spine_row.update(down_ports=mode.spine_ports, up_ports=0, down_gbps=mode.g1, up_gbps=None)
        tiers.append(spine_row)
        bom.add(s, "switches", mode.spine, spines, sw.loc[mode.spine, "price_usd"], sw.loc[mode.spine, "power_w"])
    if cores:
        tiers.append({"tier": "core", "model": mode.core, "count": cores, "port_gbps": mode.g2,
                      "down_ports": mode.core_ports, "up_ports": 0, "down_gbps": mode.g2, "up_gbps": None,
                      "buffer_mb": float(sw.loc[mode.core, "buffer_mb"])})
        bom.add(s, "switches", mode.core, cores, sw.loc[mode.core, "price_usd"], sw.loc[mode.core, "power_w"])
    fabric_links = []
    for t, links_expr in enumerate(tier_links(model, s, i)):
        cable = mode.cables[t]
        links = ival(links_expr)
        items = ival(cable_items(model, s, i, t, links_expr))
        fabric_links.append({"tier": cable.tier, "count": links, "gbps": cable.gbps, "length_m": cable.length_m,
                             "item": cable.item, "kind": cable.kind, "modules": items})
        bom.add(s, "optics", cable.item, items, cable.unit_price, cable.unit_power_w)
    port_use(tiers, fabric_links, sw)
    planes = int(node["planes"])
    return {
        "nodes": nodes, "gpus": nodes * gpn, "topology": mode.topology, "protocol": mode.protocol,
        "link_gbps": mode.g0, "tiers": tiers,
        "oversubscription": oversubscription_of(mode, (down, up), agg_split(model, s, i) if mode.tiers == 3 else None)
        if mode.splits else mode.oversubscription,
        "fabric_latency_us": round(mode.latency_us, 6), "fabric_tiers": mode.tiers, "planes": planes,
        "rails": data.rails, "endpoints": nodes * int(node["nics_per_node"]),
        "scalable_units": ival(model.su[s, i]) if (s, i) in model.SM_su else None,
        "hops": mode.hops, "latency_breakdown_us": mode.latency_breakdown_us, "fabric_links": fabric_links,
        "mode_id": mode.id, "node_type": str(inputs.project["node_type"]),
        "layout": site_layout_echo(data, s, mode, nodes), "cheaper_split": cheaper_split(model, data, s, i),
        "polished_from": data.polish["sites"].get(s) if data.polish else None,
    }


def router_tier(model, s: str, k: str, count: int, gbps: int | None) -> dict:
    """The dci tier of router model k at site s, with the cages its ports take of each kind
    (models.network.define_dci_routers): ``cages_by_use`` [{side: line | fabric, gbps, cages}]."""
    sw = model.data.inputs.switches
    use = [{"side": side, "gbps": g, "cages": ival(model.dci_cages[s, k, side, g])}
           for side, g in router_groups(model, s) if (s, k, side, g) in model.SKG]
    use = [u for u in use if u["cages"]]
    return {"tier": "dci", "model": k, "count": count, "port_gbps": gbps, "buffer_mb": float(sw.loc[k, "buffer_mb"]),
            "used_cages": sum(u["cages"] for u in use), "total_cages": count * cages(sw.loc[k, "port_modes"], sw.loc[k].get("cages")),
            "cages_by_use": use}


def dci_attachment(model, data, s: str, i: int, bom: Bom) -> dict | None:
    """How site s's DCI routers join its fabric (models.network.define_dci_attachment): attachments of one
    node's NIC ports each on leaf down ports, their cables or modules as BOM lines of category dci_attachment."""
    mode = data.modes[i]
    nics = int(data.node["nics_per_node"])
    used = [(mode.attach[a], ival(model.attach[s, i, a])) for a in model.attach_at.get((s, i), ())]
    used = [(cable, n) for cable, n in used if n]
    if not used:
        return None
    cables = []
    for cable, n in used:
        items = n * cable.items_per_attachment(nics)
        bom.add(s, "dci_attachment", cable.item, items, cable.unit_price, cable.unit_power_w)
        cables.append({"item": cable.item, "kind": cable.kind, "attachments": n, "items": items})
    total = sum(n for _, n in used)
    return {"attachments": total, "links": total * nics, "gbps": mode.g0, "length_m": used[0][0].length_m,
            "ports_per_attachment": nics, "cables": cables,
            "where": "leaf down ports, as one node's NICs (one per rail and plane)"}


def fiber_plant(model, data, s: str, bom: Bom) -> dict | None:
    """Jumpers, trunks, patch panels and ODFs of site s's optical links and inter-site fiber pairs
    (models.network.define_fiber_plant), as BOM lines of category fiber_plant."""
    if not data.plant:
        return None
    counts = {role: ival(count) for role, count in plant_counts(model, s).items()}
    for role, row in data.plant.items():
        bom.add(s, "fiber_plant", str(row.name), counts[role], row["price_usd"], 0.0)
    return {"links_in_rack": ival(model.plant_short[s]), "links_patched": ival(model.plant_long[s]),
            "pair_ends": ival(model.plant_ends[s]), "coherent_modules": ival(model.plant_modules[s]),
            **{f"{role}s": counts[role] for role in data.plant}}


def support_networks(model, data, s: str, nodes: int, bom: Bom) -> list[dict]:
    """The support networks of site s: switches and node links, as BOM lines of their category."""
    table = data.inputs.support_networks
    out = []
    for n in model.N:
        row = table.loc[n]
        switches = ival(model.support[s, n])
        ports, per_port = support_links(row)
        items = int(round(nodes * ports * per_port))
        bom.add(s, row["category"], row["switch_model"], switches, row["switch_price_usd"], row["switch_power_w"])
        bom.add(s, row["category"], row["link_item"], items, row["link_price_usd"], row["link_power_w"])
        out.append({"name": n, "category": row["category"], "switch_model": row["switch_model"], "switches": switches,
                    "links": nodes * ports, "port_gbps": int(row["port_gbps"]), "link_item": row["link_item"],
                    "link_items": items, "link_length_m": data.support_lengths(s)[n]})
    return out


def port_use(tiers: list[dict], fabric_links: list[dict], sw) -> None:
    """Each switch tier's links against what its switches have: bandwidth (the links on its ports, both ends of a
    mesh link on leaves; capacity = count x the switch's total at any of its port modes), ports (link ends; total =
    count x ports at the tier's port speed) and cages (the switch's declared cages, else its ports at its fastest speed, a slower link a lane
    of one: ceil(sum of ends / lanes a cage at their speed) against count x cages)."""
    ends = {"node_leaf": ("leaf",), "leaf_leaf": ("leaf", "leaf"), "leaf_spine": ("leaf", "spine"),
            "spine_core": ("spine", "core")}
    used: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))  # tier -> gbps -> link ends
    for lk in fabric_links:
        for role in ends[lk["tier"]]:
            used[role][lk["gbps"]] += lk["count"]
    for t in tiers:
        modes, declared = sw.loc[t["model"], "port_modes"], sw.loc[t["model"]].get("cages")
        mine = used.get(t["tier"], {})
        t["capacity_gbps"] = float(t["count"] * pool_gbps(sw.loc[t["model"]]))
        t["used_gbps"] = float(sum(g * n for g, n in mine.items()))
        t["total_ports"] = t["count"] * modes.get(t["port_gbps"], cages(modes, declared))
        t["used_ports"] = sum(mine.values())
        t["total_cages"] = t["count"] * cages(modes, declared)
        t["used_cages"] = -(-sum(Fraction(n, lanes(modes, g, declared)) for g, n in mine.items()) // 1)


def site_layout_echo(data, s: str, mode, nodes: int) -> dict:
    """The floor the fabric's cable lengths come from (models.layout): the site's floorplan or the implicit
    layout."""
    layout = site_layout_of(data.inputs, s)
    floor = site_floor(data.inputs, s)
    return {"basis": "floorplan" if floor is not None else "implicit layout", "rack_kw": site_rack_kw(data.inputs, s),
            "nodes_per_rack": layout.nodes_per_rack, "node_racks": layout.racks(nodes) if nodes else 0,
            "footprint_nodes": min(mode.node_cap, hall_nodes(data.site_node_limit(s))),
            "rows": int(floor["rows"]) if floor is not None else None,
            "racks_per_row": layout.racks_per_row, "rack_pitch_m": layout.rack_pitch_m,
            "row_pitch_m": layout.row_pitch_m, "rise_m": layout.rise_m, "slack": layout.slack,
            "planner_lengths": dict(layout.fixed)}


def workload_estimate(data, open_sites, links) -> dict | None:
    """The hierarchical all-reduce estimate of the chosen design (models.workload), slowest site first."""
    from models import workload as wl

    params = data.workload
    if params is None or not open_sites:
        return None
    inputs = data.inputs
    node = data.node
    k = len(open_sites)
    alpha_wan = max((link["rtt_ms"] / 2 * 1e3 for link in links), default=0.0) if k > 1 else 0.0
    worst = None
    for e in open_sites:
        eff = float(inputs.protocols.loc[e["protocol"], "efficiency"])
        gbps = wl.per_gpu_gbps(node, eff, e["oversubscription"])
        n_s = min(e["gpus"], params["n_gpus"])
        bw_intra, lat_intra = wl.intra_s(params["bytes"], n_s, node, gbps, e["fabric_latency_us"])
        bw_inter = lat_inter = 0.0
        if k > 1:
            bw_inter = wl.inter_coefficient(params, k) / e["dci_capacity_gbps"]
            lat_inter = 2 * (k - 1) * alpha_wan / 1e6
        total = bw_intra + lat_intra + bw_inter + lat_inter
        if worst is None or total > worst["time_ms"] / 1e3:
            worst = {"site": e["name"], "n_gpus_site": n_s, "sites": k, "bandwidth_gbps_per_gpu": gbps,
                     "alpha_us": e["fabric_latency_us"], "alpha_wan_us": alpha_wan,
                     "intra_bw_ms": bw_intra * 1e3, "intra_latency_ms": lat_intra * 1e3,
                     "inter_bw_ms": bw_inter * 1e3, "inter_latency_ms": lat_inter * 1e3,
                     "time_ms": total * 1e3}
    worst.update({"n_gpus": params["n_gpus"], "bytes": params["bytes"], "grad_accum_steps": params["grad_accum_steps"],
                  "step_compute_ms": params["step_compute_s"] * 1e3, "t_max_ms": params["t_max_s"] * 1e3,
                  "comm_fraction": wl.comm_fraction(params, worst["time_ms"] / 1e3),
                  "comm_fraction_without_accumulation": worst["time_ms"] / 1e3
                  / (params["step_compute_s"] + worst["time_ms"] / 1e3),
                  "limit": params["max_comm_fraction"]})
    return worst


def constraint_table(solution: dict, inputs) -> list[dict]:
    """Each planner-level constraint with its left side, right side and slack (from the solution)."""
    project = inputs.project
    rows = []

    def add(name, scope, lhs, sense, rhs):
        slack = (rhs - lhs) if sense == "<=" else (lhs - rhs)
        rows.append({"name": name, "scope": scope, "lhs": lhs, "sense": sense, "rhs": rhs, "slack": slack,
                     "binding": abs(slack) <= 1e-6 * max(1.0, abs(rhs))})

    totals = solution["totals"]
    add("gpus_required", "project", totals["gpus"], ">=", float(project["gpus_required"]))
    if project.get("budget_usd") is not None:
        add("budget_usd", "project", solution["objective_usd"], "<=", float(project["budget_usd"]))
    if project.get("max_fabric_latency_us") is not None:
        for e in solution["sites"]:
            if e["open"]:
                add("max_fabric_latency_us", e["name"], e["fabric_latency_us"], "<=",
                    float(project["max_fabric_latency_us"]))
    for e in solution["sites"]:
        if not e["open"]:
            continue
        add("power_mw", e["name"], e["power_mw"], "<=", e["power_cap_mw"])
        add("max_nodes", e["name"], float(e["nodes"]), "<=", float(e["max_nodes"]))
        if solution["totals"]["sites_open"] > 1:
            need = float(project["dci_ratio"]) * e["endpoints"] * float(e["link_gbps"])
            add("dci_ratio", e["name"], e.get("dci_capacity_gbps", 0.0), ">=", need)
            buffers = sum(t["count"] * t["buffer_mb"] for t in e["tiers"] if t["tier"] == "dci")
            add("buffer_bdp", e["name"], buffers, ">=",
                float(project["buffer_bdp_factor"]) * e.get("dci_bdp_mb", 0.0))
    for link in solution["links"]:
        scope = f"{link['site_a']}--{link['site_b']}"
        add("fiber_pairs", scope, float(link["fiber_pairs"]), "<=", float(link["fiber_pairs_available"]))
        if link["optic_kind"] == "gray":
            add("fiber_pairs_per_link", scope, float(link["wavelengths"] * link["fiber_pairs_per_link"]), "<=",
                float(link["fiber_pairs"]))
        else:
            add("channels_per_pair", scope, float(link["wavelengths"]), "<=",
                float(link["channels_per_pair"] * link["fiber_pairs"]))
        if project.get("max_site_rtt_ms") is not None:
            add("max_site_rtt_ms", scope, link["rtt_ms"], "<=", float(project["max_site_rtt_ms"]))
    wl = solution.get("workload")
    if wl:
        add("max_comm_fraction", "workload", wl["comm_fraction"], "<=", wl["limit"])
    return rows


def highs_version() -> str:
    import highspy

    h = highspy.Highs()
    return f"{h.versionMajor()}.{h.versionMinor()}.{h.versionPatch()}"


def pyomo_version() -> str:
    import pyomo.version

    return pyomo.version.version
