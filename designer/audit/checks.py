"""Independent audit of a design, from design.json alone (nothing from models/, solve or extract).

``audit(design)`` rebuilds each open site's fabric and the inter-site network as networkx graphs
(designer.audit.fabric), re-derives every rule of DESIGN.md section 4 from first principles and returns
each violation as a sentence (what, where, by how much); an empty list is a pass. The design's
``inputs`` echo the validated workbook; ``audit(design, workbook=PATH)`` compares that echo with
the workbook and audits against the workbook's tables.
"""

from __future__ import annotations

import copy
import math
import weakref
from collections import Counter, defaultdict

import networkx as nx

from designer.audit.fabric import (
    Catalog,
    build_intersite_graph,
    build_site_graph,
    catalog,
    members,
    site_graph,
    tier_rows,
)
from designer.audit.flows import RANK, cuts, distinct_networks, max_flow, ranks, worst_path
from designer.audit.resilience import route_resilience
from designer.audit.training import check_training
from designer.inputs.catalog import roles

__all__ = ["audit", "build_site_graph", "build_intersite_graph"]

FIBER_US_PER_KM = 4.9
C_BAND_GHZ = 4800.0
HOURS_PER_YEAR = 8760.0
PHOTON_DBM_01NM = -58.0  # h nu x 12.5 GHz at 1550 nm: 6.626e-34 J s x 193.4 THz x 12.5e9 Hz = 1.6e-9 W
END_ROLES = ("booster", "preamp", "mux_demux")
NODE_CATEGORIES = ("nodes", "switches", "dci_routers", "optics", "coherent", "dci_optics", "line_system", "dci_attachment",
                   "storage_network", "management_network")


def off(a: float, b: float, rel: float = 1e-6, tol: float = 1e-6) -> bool:
    return abs(float(a) - float(b)) > tol + rel * max(abs(float(a)), abs(float(b)))


def audit(design: dict, workbook=None) -> list[str]:
    """Every violation of the design, in words; empty when the design passes."""
    out: list[str] = []
    if workbook is not None:
        design = with_workbook(design, workbook, out)
    cat = catalog(design)
    unknown = unknown_names(design, cat)
    if unknown:
        return out + unknown
    opened = [s for s in design["sites"] if s["open"]]
    for entry in opened:
        graph = site_graph(entry, design)
        out += graph.graph["problems"]
        for check in SITE_CHECKS:
            out += check(entry, graph, cat, design)
    for check in DESIGN_CHECKS:
        out += check(design, cat)
    return out


def unknown_names(design: dict, cat: Catalog) -> list[str]:
    """Names the design uses that its input tables lack (the other checks need them all)."""
    p = cat.project
    wanted = [("node_types", p.get("node_type"), "the project's node type")]
    for s in design["sites"]:
        wanted.append(("sites", s["name"], "a site"))
        if s["open"]:
            wanted += [("node_types", s.get("node_type") or p.get("node_type"), f"{s['name']}'s node type"),
                       ("protocols", s["protocol"], f"{s['name']}'s protocol")]
            wanted += [("switches", t["model"], f"{s['name']}'s {t['tier']} switch") for t in s["tiers"]]
    wanted += [("coherent", lk["coherent_model"], f"route {lk['site_a']}--{lk['site_b']}") for lk in design["links"]]
    return [f"{what} {name!r} is not in the inputs' {table}" for table, name, what in wanted
            if name not in getattr(cat, table)]


# --------------------------------------------------------------------------------------------
# Per site
# --------------------------------------------------------------------------------------------

def check_choice(entry, graph, cat, design) -> list[str]:
    """Topology and protocol are allowed; every switch is of the protocol's family and has the role
    of its tier; planes, rails, endpoints and GPUs follow from the node type."""
    out, site, p = [], entry["name"], cat.project
    node = cat.node_types[entry.get("node_type") or p["node_type"]]
    if entry["topology"] not in (p.get("topologies_allowed") or [entry["topology"]]):
        out.append(f"{site}: topology {entry['topology']} is not in topologies_allowed")
    if entry["protocol"] not in (p.get("protocols_allowed") or [entry["protocol"]]):
        out.append(f"{site}: protocol {entry['protocol']} is not in protocols_allowed")
    family = cat.protocols[entry["protocol"]]["switch_family"]
    for t in entry["tiers"]:
        sw = cat.switches[t["model"]]
        if t["tier"] != "dci" and sw["family"] != family:
            out.append(f"{site}: {t['tier']} switch {t['model']} is {sw['family']}, protocol {entry['protocol']} "
                       f"needs {family}")
        if t["tier"] not in roles(sw["roles"]):
            out.append(f"{site}: {t['model']} is used as {t['tier']} but its roles are {sw['roles']}")
    nics, planes = int(node["nics_per_node"]), int(node["planes"])
    expect = {"planes": planes, "rails": nics // planes, "endpoints": entry["nodes"] * nics,
              "gpus": entry["nodes"] * int(node["gpus_per_node"])}
    for key, value in expect.items():
        if entry.get(key) is not None and entry[key] != value:
            out.append(f"{site}: reports {key} {entry[key]}, the node type {node['name']} gives {value}")
    return out


def cages_used(graph, n: str, cat) -> int:
    """Cages switch n needs: the cage of its last down link and of its last up link (Catalog.port), i.e.
    ceil(lanes used / lanes a cage) over its down links, its up links after the declared down ports."""
    links: dict[bool, list] = {False: [0, 0], True: [0, 0]}  # up? -> [links, gbps]
    rank = ranks(graph)
    for m, e in graph.adj[n].items():
        group = links[e["tier"] == "leaf_leaf" or rank[m] > rank[n]]
        group[0] += e["count"]
        group[1] = e["gbps"]
    return max((cat.port(graph.nodes[n], up, count, gbps)[0] for up, (count, gbps) in links.items() if count),
               default=0)


def check_ports(entry, graph, cat, design) -> list[str]:
    """No switch uses more port bandwidth than it has (ports x speed, its port modes carry equal
    totals) nor more cages (cages_used), and every link runs at a speed among the switch's port modes."""
    over: dict[str, list] = defaultdict(list)
    full: dict[str, list] = defaultdict(list)
    speeds: set = set()
    for n, d in graph.nodes(data=True):
        if d["role"] == "endpoints":
            continue
        links = graph.adj[n].values()
        used = sum(e["count"] * e["gbps"] for e in links)
        pool = cat.pool_gbps(d["model"])
        if used > pool + 1e-9:
            over[d["role"]].append((used - pool, n, used, pool))
        cages = cages_used(graph, n, cat)
        if cages > cat.cages(d["model"]):
            full[d["role"]].append((cages - cat.cages(d["model"]), n, cages))
        offered = cat.speeds(d["model"])
        for gbps in {e["gbps"] for e in links} - offered:
            speeds.add(f"{entry['name']}: {n} ({d['model']}) runs {gbps}G links but its port modes are "
                       f"{cat.switches[d['model']]['port_modes']}")
    out = sorted(speeds)[:5]
    for role, rows in over.items():
        excess, n, used, pool = max(rows)
        out.append(f"{entry['name']}: {len(rows)} {role} switch(es) use more port bandwidth than they have; worst "
                   f"{n} uses {used:,.0f} Gb/s of {pool:,.0f} ({excess:,.0f} Gb/s over)")
    for role, rows in full.items():
        excess, n, cages = max(rows)
        model = graph.nodes[n]["model"]
        out.append(f"{entry['name']}: {len(rows)} {role} switch(es) need more cages than they have; worst {n} "
                   f"({model}) needs {cages} of {cat.cages(model)} ({excess} over)")
    return out


def check_striping(entry, graph, cat, design) -> list[str]:
    """Uniform striping: a 2-tier Clos leaf has the same number of links to every spine of its
    network; in 3 tiers a leaf to every aggregation switch of its pod, and an aggregation switch to
    every core it reaches. A leaf mesh joins every pair of leaves."""
    site, topo, tiers = entry["name"], entry["topology"], int(entry.get("fabric_tiers") or 1)
    if topo == "leaf_mesh" or tiers == 1:
        return check_mesh(entry, graph) if topo == "leaf_mesh" and tiers == 2 else []
    spines = Counter(d["network"] for _, d in graph.nodes(data=True) if d["role"] == "spine")
    bad = []
    rank = ranks(graph)
    for n, d in graph.nodes(data=True):
        if d["role"] not in ("leaf", "spine") or (d["role"] == "spine" and tiers == 2):
            continue
        up = {m: e["count"] for m, e in graph.adj[n].items() if rank[m] > rank[n]}
        reach = len(up) == spines[d["network"]] if tiers == 2 else True
        if len(set(up.values())) > 1 or not reach:
            bad.append((n, up))
    if not bad:
        return []
    n, up = bad[0]
    above = {"leaf": "spines" if tiers == 2 else "aggregation switches"}.get(graph.nodes[n]["role"], "cores")
    return [f"{site}: uniform striping broken at {len(bad)} switch(es); e.g. {n} has "
            f"{'/'.join(str(c) for c in sorted(set(up.values())))} links to {len(up)} "
            + (f"of the {spines[graph.nodes[n]['network']]} " if tiers == 2 else "") + above]


def check_mesh(entry, graph) -> list[str]:
    leaves = Counter(d["network"] for _, d in graph.nodes(data=True) if d["role"] == "leaf")
    links = Counter(graph.nodes[u]["network"] for u, v, e in graph.edges(data=True) if e["tier"] == "leaf_leaf")
    missing = sum(n * (n - 1) // 2 for n in leaves.values()) - links.total()
    return [f"{entry['name']}: leaf mesh leaves {missing} leaf pair(s) without a direct link"] if missing > 0 else []


def check_paths(entry, graph, cat, design) -> list[str]:
    """Worst-case switch hops and one-way latency by graph search equal the reported values and meet
    max_fabric_latency_us. Latency = 2 x NIC latency of the protocol + switch latencies on the path
    + 5 ns/m of cable (the project's lengths) + the NVLink hop for rail_only. A reported figure
    above the graph's is accepted only where the top tier carries no shortest path (one leaf, one pod)."""
    site = entry["name"]
    node = cat.node_types[entry.get("node_type") or cat.project["node_type"]]
    extra_ns = 2 * float(cat.protocols[entry["protocol"]]["nic_latency_ns"])
    if entry["topology"] == "rail_only":
        extra_ns += 300.0 if node.get("nvlink_latency_ns") is None else float(node["nvlink_latency_ns"])
    out, hops, us = [], 0, 0.0
    conservative = True
    for net, _ in distinct_networks(graph):
        worst = worst_path(net, lambda model: cat.switches[model]["latency_ns"])
        for a, b in worst.unreachable[:1]:
            out.append(f"{site}: NICs on {a} cannot reach NICs on {b} ({len(worst.unreachable)} leaf pair(s) cut off)")
        hops, us = max(hops, worst.hops), max(us, (worst.ns + extra_ns) / 1e3)
        conservative &= top_tier_idle(net)
    if hops == 0:  # a single NIC a network: no two NICs talk over the fabric
        return out
    reported_hops, reported_us = entry.get("hops"), entry.get("fabric_latency_us")
    if reported_hops is not None and (hops > reported_hops or (hops < reported_hops and not conservative)):
        out.append(f"{site}: worst-case path crosses {hops} switch hops by graph search, the design reports "
                   f"{reported_hops}")
    if reported_us is not None and (off(us, reported_us) and (us > reported_us or not conservative)):
        out.append(f"{site}: worst-case one-way latency is {us:.4f} us by graph search, the design reports "
                   f"{reported_us:.4f} us (off by {us - reported_us:+.4f} us)")
    limit = cat.project.get("max_fabric_latency_us")
    if limit is not None and max(us, reported_us or 0.0) > float(limit) + 1e-9:
        out.append(f"{site}: worst-case latency {max(us, reported_us or 0.0):.4f} us is above max_fabric_latency_us "
                   f"{float(limit):g} by {max(us, reported_us or 0.0) - float(limit):.4f} us")
    return out


def top_tier_idle(net: nx.Graph) -> bool:
    """True when every NIC still reaches every other without the top switch tier (above leaves)."""
    roles = {d["role"] for _, d in net.nodes(data=True)}
    top = max(roles - {"endpoints"}, key=RANK.get, default="leaf")
    if top == "leaf":
        return False
    rest = net.subgraph(n for n, d in net.nodes(data=True) if d["role"] != top)
    groups = [n for n, d in rest.nodes(data=True) if d["role"] == "endpoints"]
    return not groups or nx.node_connected_component(rest, groups[0]).issuperset(groups)


def declared_ratios(entry) -> dict[str, float]:
    """Down:up bandwidth of each tier by the design's own port split; a leaf mesh's ratio is the
    reported one (its mesh ports are not all toward the other half of the fabric)."""
    out = {}
    for role, t in tier_rows(entry).items():
        if t.get("up_ports") and t.get("up_gbps"):
            out[role] = t["down_ports"] * t["down_gbps"] / (t["up_ports"] * t["up_gbps"])
    if entry["topology"] == "leaf_mesh" and "leaf" in out:
        out["leaf"] = float(entry.get("oversubscription") or 1.0)
    return out


def check_oversubscription(entry, graph, cat, design) -> list[str]:
    """Oversubscription per tier from the actual links (down bandwidth / up bandwidth of each leaf
    and aggregation switch; mesh links count as up) is within max_oversubscription and the
    reported figure; the reported figure is within the limit and covers the declared port splits."""
    site, tiers = entry["name"], int(entry.get("fabric_tiers") or 1)
    limit = float(cat.project.get("max_oversubscription") or 1.0)
    reported = float(entry.get("oversubscription") or 1.0)
    out = []
    if reported > limit + 1e-9:
        out.append(f"{site}: oversubscription {reported:g}:1 is above max_oversubscription {limit:g}:1")
    for role, ratio in declared_ratios(entry).items():
        if ratio > reported * (1 + 1e-3):
            out.append(f"{site}: the {role} port split is {ratio:.4g}:1, the design reports {reported:g}:1")
    if tiers == 1:
        return out
    worst: dict[str, tuple] = {}
    rank = ranks(graph)
    for n, d in graph.nodes(data=True):
        if d["role"] not in ("leaf", "spine") or (d["role"] == "spine" and tiers == 2):
            continue
        down = up = 0.0
        for m, e in graph.adj[n].items():
            bw = e["count"] * e["gbps"]
            if e["tier"] == "leaf_leaf" or rank[m] > rank[n]:
                up += bw
            else:
                down += bw
        ratio = down / up if up else (math.inf if down else 0.0)
        worst[d["role"]] = max(worst.get(d["role"], (0.0, "")), (ratio, n))
    for role, (ratio, n) in worst.items():
        if ratio > min(limit, max(reported, 1.0)) * (1 + 1e-3):
            out.append(f"{site}: {role} {n} is oversubscribed {ratio:.4g}:1 by its links (limit {limit:g}:1, "
                       f"reported {reported:g}:1)")
    return out


def check_bisection(entry, graph, cat, design) -> list[str]:
    """Bisection by max-flow/min-cut, per network (plane, rail): leaves in halves, and pods in
    halves for 3 tiers; the flow meets the NIC bandwidth of the smaller half times the non-blocking
    share the declared oversubscription of the tiers crossed implies (1 / product of their ratios)."""
    ratios = declared_ratios(entry)
    out = []
    for net, _ in distinct_networks(graph):
        for cut in cuts(net):
            share = 1.0 / max(1.0, math.prod(ratios.get(t, 1.0) for t in cut.tiers))
            need = cut.demand_gbps * share
            flow = max_flow(net, cut.side_a, cut.side_b)
            if flow < need * (1 - 1e-9):
                out.append(f"{entry['name']}: bisection with {cut.name} is {flow / 1e3:,.1f} Tb/s, {flow / need:.0%} of "
                           f"the {need / 1e3:,.1f} Tb/s that oversubscription {1 / share:g}:1 implies for "
                           f"{cut.demand_gbps / 1e3:,.1f} Tb/s of NICs on a side (short by {(need - flow) / 1e3:,.1f} Tb/s)")
                break
    return out


#: device_items of each graph alive (with the Catalog it was counted for): the audit and optics_per_device ask for
#: every site's twice or more
ITEMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def device_items(graph, cat) -> tuple[Counter, Counter]:
    """count_device_items(graph, cat), counted once per graph and catalog."""
    held = ITEMS.get(graph)
    if held is None or held[0] is not cat:
        held = ITEMS[graph] = (cat, count_device_items(graph, cat))
    return held[1]


def count_device_items(graph, cat) -> tuple[Counter, Counter]:
    """(links per tier, cables or modules per (device, item)) in the graph; a device is a switch's name or
    ("node", k). A cable is counted at its lower end, a 1:k splitter cable at its switch end as a twin-port
    module is, a single-link transceiver at each end. A twin-port module
    (k links) sits in one device: ceil(link ends / k) per node, leaf uplink side, aggregation uplink side and
    2-tier spine (their port counts follow from the design's split); in aggregate, ceil(ends / k) over the tier,
    at the leaf side of NIC links and the upper side of 3-tier links, whose per-switch split is a wiring choice
    that can pair ports to within one module: there each device holds ceil(its ends / k) when they add up to the
    aggregate, else floor(its ends / k) and the rest is counted on ("pooled", role)."""
    links, items = Counter(), Counter()
    ends: dict[tuple, Counter] = defaultdict(Counter)  # (tier, pooled role or None) -> device -> link ends
    three = graph.graph["fabric_tiers"] == 3
    rails, rank = graph.graph["rails"], ranks(graph)
    for u, v, e in graph.edges(data=True):
        tier, item, count = e["tier"], e["item"], e["count"]
        links[tier] += count
        optic = cat.optics.get(item)
        if optic is None:
            continue
        low, high = (u, v) if rank[u] <= rank[v] else (v, u)
        lows = (Counter(("node", n) for n, _ in members(graph, low, rails)) if rank[low] == RANK["endpoints"]
                else {low: count})
        lpm = int(optic.get("links_per_module") or 1)
        cable = optic["kind"] in ("dac", "aoc")
        if lpm == 1:
            for d, n in lows.items():
                items[d, item] += n
            if not cable:
                items[high, item] += count
        else:
            if not cable:  # a splitter cable is counted at its switch end only
                at = ends[tier, item, None]
                for d, n in lows.items():  # Counter.update's own loop, without its call and Mapping check per link
                    at[d] += n
            pooled = tier == "node_leaf" or (three and tier != "leaf_leaf")
            ends[tier, item, graph.nodes[high]["role"] if pooled else None][high] += e["count"]
    for (tier, item, pool), at in ends.items():
        lpm = int(cat.optics[item].get("links_per_module") or 1)
        each = {d: -(-n // lpm) for d, n in at.items()}
        total = -(-sum(at.values()) // lpm)
        if pool is not None and sum(each.values()) > total:
            each = {d: n // lpm for d, n in at.items()}
            items["pooled", pool, item] += total - sum(each.values())
        items.update({(d, item): n for d, n in each.items()})
    return links, items


def graph_items(graph, cat) -> tuple[Counter, Counter]:
    """(links per tier, cables or modules per item) in the graph (device_items summed over devices)."""
    links, at = device_items(graph, cat)
    items = Counter()
    for key, n in at.items():
        items[key[-1]] += n
    return links, items


DECLARED_SPEED = {"node_leaf": ("leaf", "down_gbps"), "leaf_spine": ("leaf", "up_gbps"),
                  "leaf_leaf": ("leaf", "up_gbps"), "spine_core": ("spine", "up_gbps")}


def check_cables(entry, graph, cat, design) -> list[str]:
    """Each tier's cable or optic exists, runs at the tier's link speed (the port speed the switch
    tier below declares) and reaches the tier's length; the length is one a cable can run (least_length_m);
    the reported link and module counts equal the graph's."""
    out, site = [], entry["name"]
    links, items = graph_items(graph, cat)
    speeds = {e["tier"]: e["gbps"] for *_, e in graph.edges(data=True)}
    reported = {lk["tier"]: lk for lk in entry.get("fabric_links", [])}
    for tier in sorted(set(links) | set(reported)):
        lk = reported.get(tier)
        if lk is None:
            out.append(f"{site}: {links[tier]} {tier} links in the fabric but no cable for them in fabric_links")
            continue
        optic = cat.optics.get(lk["item"])
        length = float(lk.get("length_m") or 0.0)
        if optic is None:
            out.append(f"{site}: {tier} cable {lk['item']} is not in the optics catalog")
            continue
        if float(optic["reach_m"]) < length:
            out.append(f"{site}: {tier} cable {lk['item']} reaches {optic['reach_m']:g} m, the tier needs {length:g} m")
        least = least_length_m(entry, tier, cat)
        if length < least - 0.05:
            out.append(f"{site}: fabric_links gives {tier} {length:g} m, its racks are at least {least:g} m of cable "
                       "apart")
        if int(optic["gbps"]) != speeds.get(tier, lk["gbps"]) or lk["gbps"] != speeds.get(tier, lk["gbps"]):
            out.append(f"{site}: {tier} links run at {speeds.get(tier)}G but {lk['item']} is {optic['gbps']}G "
                       f"(fabric_links says {lk['gbps']}G)")
        if lk["count"] != links[tier]:
            out.append(f"{site}: fabric_links reports {lk['count']} {tier} links, the fabric has {links[tier]}")
        out += cage_fit(site, tier, optic, tier_rows(entry), cat)
        role, key = DECLARED_SPEED[tier]
        declared = tier_rows(entry).get(role, {}).get(key)
        if declared is not None and declared != lk["gbps"]:
            out.append(f"{site}: the {role} tier declares {declared}G {key.split('_')[0]} ports, its {tier} links run at "
                       f"{lk['gbps']}G")
    return out


SWITCH_ENDS = {"node_leaf": ("leaf",), "leaf_leaf": ("leaf",), "leaf_spine": ("leaf", "spine"),
               "spine_core": ("spine", "core"), "dci_attach": ("leaf",)}


def cage_fit(site: str, tier: str, optic: dict, rows: dict, cat) -> list[str]:
    """An item fills the cage at each switch end of its tier (of a DCI attachment, the leaf end, as models.modes.
    attach_cables has it): gbps x links_per_module = the cage's speed (a
    switch's bandwidth over its cages); a splitter cable (a DAC or AOC of more than one link) only on node links,
    its legs on NICs."""
    out, k = [], int(optic.get("links_per_module") or 1)
    if optic["kind"] in ("dac", "aoc") and k > 1 and tier != "node_leaf":
        out.append(f"{site}: {tier} cable {optic['name']} is a 1:{k} splitter; its legs fit NICs, not switch cages")
    for role in SWITCH_ENDS[tier]:
        model = rows.get(role, {}).get("model")
        if model in cat.switches and int(optic["gbps"]) * k != cat.cage_gbps(model):
            out.append(f"{site}: {tier} item {optic['name']} takes a {int(optic['gbps']) * k}G cage, the {role} "
                       f"{model}'s cages are {cat.cage_gbps(model)}G")
    return out


def check_support(entry, graph, cat, design) -> list[str]:
    """Each support network (when the project sizes them): switches >= nodes / nodes_per_switch, node links
    = nodes x ports_per_node (a cable an item, a transceiver link two), as the site entry and the BOM say."""
    if cat.project.get("support_networks") is False or not cat.support_networks:
        return []
    out, site, nodes = [], entry["name"], int(entry.get("nodes") or 0)
    given = {n["name"]: n for n in entry.get("support_networks") or []}
    bom = Counter()
    for line in design["bom"]:
        if line["site"] == site and line["category"] in SUPPORT_OF:
            bom[line["category"], line["item"]] += line["quantity"]
    want = Counter()
    for name, row in cat.support_networks.items():
        net = given.get(name)
        if net is None:
            out.append(f"{site}: support network {name} missing")
            continue
        least = math.ceil(nodes / float(row["nodes_per_switch"]) - 1e-9)
        if net["switches"] < least:
            out.append(f"{site}: {net['switches']} {row['switch_model']} for {name}, {nodes:,} nodes need {least}")
        items = nodes * int(row["ports_per_node"]) * (1 if row.get("link_kind", "cable") == "cable" else 2)
        if net["link_items"] != items:
            out.append(f"{site}: {net['link_items']} {row['link_item']} for {name}, {nodes:,} nodes x "
                       f"{row['ports_per_node']} ports need {items}")
        want[row["category"], row["switch_model"]] += net["switches"]
        want[row["category"], row["link_item"]] += items
    for key, quantity in want.items():
        if off(bom[key], quantity):
            out.append(f"{site}: BOM lists {bom[key]:g} {key[1]} ({key[0]}), the support networks need {quantity:g}")
    return out


def check_floor(entry, graph, cat, design) -> list[str]:
    """Where the workbook has a floorplan for the site: the nodes' racks fit its rows, and a rack's nodes
    draw no more than its rack_kw."""
    floor = cat.floorplan.get(entry["name"])
    if not floor:
        return []
    node = cat.node_types.get(entry.get("node_type"), {})
    kw = float(node.get("node_power_kw") or 0)
    per_rack = int(floor.get("nodes_per_rack") or (int(float(floor["rack_kw"]) // kw + 1e-9) if kw else 1))
    out = []
    if per_rack * kw > float(floor["rack_kw"]) + 1e-9:
        out.append(f"{entry['name']}: {per_rack} nodes a rack draw {per_rack * kw:g} kW, above rack_kw {floor['rack_kw']:g}")
    racks = -(-int(entry.get("nodes") or 0) // max(per_rack, 1))
    room = int(floor["rows"]) * int(floor["racks_per_row"])
    if racks > room:
        out.append(f"{entry['name']}: {entry['nodes']:,} nodes fill {racks:,} racks, the floorplan has {room:,}")
    return out


def least_length_m(entry, tier: str, cat) -> float:
    """The shortest cable a tier can have on the design's floor: a planner's length as given; a node in the
    rack of its leaf (a top-of-rack leaf serving no more nodes than a rack holds) needs no tray run; every
    other link leaves one rack for another, up to the tray and down again (2 x cable_rise_m), and a leaf
    serving n racks of nodes from another reaches the farthest at least k steps away, k the least with
    2k^2 + 2k + 1 >= n + 1 (the rack positions within k steps of a grid, a step the shorter of the rack
    and row pitch)."""
    p = cat.project
    key = {"leaf_leaf": "leaf_spine"}.get(tier, tier)
    if p.get(f"cable_m_{key}") is not None:
        return float(p[f"cable_m_{key}"])
    node = cat.node_types.get(entry.get("node_type"), {})
    floor = cat.floorplan.get(entry["name"]) or {}
    rack_kw = float(floor.get("rack_kw") or cat.sites.get(entry["name"], {}).get("rack_kw") or p.get("rack_kw") or 0)
    per_rack = max(1, int(rack_kw // float(node.get("node_power_kw") or 1) + 1e-9)) if rack_kw else 1
    per_rack = int(floor.get("nodes_per_rack") or per_rack)
    rise = 2 * float(p.get("cable_rise_m") or 0)
    if tier != "node_leaf":
        return rise
    leaf = tier_rows(entry).get("leaf", {})
    rail = entry.get("topology") in ("rail_optimized", "rail_only")
    served = int(leaf.get("down_ports") or 0) if rail else -(-int(leaf.get("down_ports") or 0) // int(entry["rails"]))
    racks = -(-min(served, int(entry.get("nodes") or 0)) // per_rack)
    if racks <= 1 and not rail:
        return 0.0
    pitch = min(float(floor.get("rack_pitch_m") or p.get("rack_pitch_m") or 0),
                float(floor.get("row_pitch_m") or p.get("row_pitch_m") or 0))
    return rise + math.ceil((math.sqrt(2 * max(racks, 1) + 1) - 1) / 2 - 1e-9) * pitch
def check_site_bom(entry, graph, cat, design) -> list[str]:
    """BOM quantities equal the graph: nodes, switches per model (plus DCI routers), cables and
    modules per item."""
    site = entry["name"]
    lines = Counter()
    for row in design["bom"]:
        if row["site"] == site and row["category"] in ("nodes", "switches", "dci_routers", "optics"):
            lines[row["category"], row["item"]] += row["quantity"]
    want = Counter({("nodes", entry.get("node_type") or cat.project["node_type"]): entry["nodes"]})
    for _, d in graph.nodes(data=True):
        if d["role"] != "endpoints":
            want["switches", d["model"]] += 1
    for t in entry["tiers"]:
        if t["tier"] == "dci":
            want["dci_routers", t["model"]] += t["count"]
    for item, n in graph_items(graph, cat)[1].items():
        want["optics", item] += n
    return [f"{site}: BOM lists {lines[key]:g} {key[1]} ({key[0]}), the fabric has {want[key]:g}"
            for key in sorted(set(lines) | set(want)) if off(lines[key], want[key], rel=0, tol=1e-9)]


def check_site_power(entry, graph, cat, design) -> list[str]:
    """IT power recomputed from the site's BOM items and the catalog, times PUE, is the reported
    power and within power_mw x (1 - power_headroom); nodes within max_nodes; required sites open, excluded
    ones closed."""
    site = entry["name"]
    row = cat.sites[site]
    watts = sum(line["quantity"] * catalog_unit(line, cat)[1] for line in design["bom"]
                if line["site"] == site and line["category"] in NODE_CATEGORIES)
    facility = watts * float(row["pue"]) / 1e6
    out = []
    if off(facility, entry["power_mw"]):
        out.append(f"{site}: facility power is {facility:.6f} MW from the BOM and catalog (IT {watts / 1e6:.6f} MW x "
                   f"PUE {row['pue']:g}), the design reports {entry['power_mw']:.6f} MW")
    if entry.get("it_power_mw") is not None and off(watts / 1e6, entry["it_power_mw"]):
        out.append(f"{site}: IT power is {watts / 1e6:.6f} MW from the BOM and catalog, the design reports "
                   f"{entry['it_power_mw']:.6f} MW")
    power = max(facility, entry["power_mw"])
    share = float(cat.project.get("power_headroom") or 0.0)
    cap = float(row["power_mw"]) * (1 - share)
    if power > cap * (1 + 1e-9):
        held = f" less power_headroom {share:.0%}" if share else ""
        out.append(f"{site}: facility power {power:.3f} MW is above power_mw {row['power_mw']:g}{held} "
                   f"({cap:g} MW) by {power - cap:.3f} MW")
    if entry["nodes"] > int(row["max_nodes"]):
        out.append(f"{site}: {entry['nodes']} nodes exceed max_nodes {row['max_nodes']} by "
                   f"{entry['nodes'] - int(row['max_nodes'])}")
    if row.get("status") == "excluded":
        out.append(f"{site}: is open but its status is excluded")
    return out


def support_run_m(entry, row, cat) -> float:
    """Length of a support network's node link on the site's floor (its layout echo): in the rack when the
    ceil(nodes_per_switch) nodes its switch serves fit in one, else from a network rack among their racks, at
    least a rack pitch along: (along x rack pitch + floor(rows / 2) x row pitch + 2 x rise) x (1 + slack)."""
    lay, p = entry.get("layout") or {}, cat.project
    served = math.ceil(float(row["nodes_per_switch"]) - 1e-9)
    racks = -(-served // max(1, int(lay.get("nodes_per_rack") or 1)))
    if racks <= 1:
        return float(p.get("cable_in_rack_m") or 0.0)
    per_row = int(lay.get("racks_per_row") or 1)
    along, across = max(1, -(-min(racks, per_row) // 2)), -(-racks // per_row) // 2
    return round((along * float(lay["rack_pitch_m"]) + across * float(lay["row_pitch_m"]) + 2 * float(lay["rise_m"]))
                 * (1 + float(lay["slack"])), 1)


def check_fiber_plant(entry, graph, cat, design) -> list[str]:
    """With the fiber plant priced (project fiber_plant, a fiber_plant table): the site's transceiver links (fabric
    tiers, DCI attachments, support networks) within cable_in_rack_m take a jumper each; longer ones two jumpers, a
    trunk and two patch-panel ports; each lit fiber pair end of its routes an ODF port and a duplex jumper, each
    coherent module a duplex jumper more; BOM fiber_plant lines of the cheapest row of each role = those counts,
    panels = ceil(2 x patched links / ports), ODFs = ceil(pair ends / ports)."""
    site, p = entry["name"], cat.project
    bom = Counter()
    for line in design["bom"]:
        if line["site"] == site and line["category"] == "fiber_plant":
            bom[line["item"]] += line["quantity"]
    if p.get("fiber_plant") is False or not cat.fiber_plant:
        return [f"{site}: BOM lists {n:g} {item} (fiber_plant) with no fiber plant priced" for item, n in bom.items()]
    limit = float(p.get("cable_in_rack_m") or 0.0)
    short = long = 0
    att = entry.get("dci_attachment") or {}
    runs = [(cat.optics.get(lk["item"], {}).get("kind"), lk["count"], lk["length_m"])
            for lk in entry.get("fabric_links", [])]
    runs += [(cat.optics.get(c["item"], {}).get("kind"), c["attachments"] * att["ports_per_attachment"],
              att["length_m"]) for c in att.get("cables", [])]
    if p.get("support_networks") is not False:
        runs += [(row.get("link_kind"), int(entry["nodes"]) * int(row["ports_per_node"]), support_run_m(entry, row, cat))
                 for row in cat.support_networks.values()]
    for kind, links, metres in runs:
        if kind == "transceiver":
            short += links if float(metres) <= limit else 0
            long += links if float(metres) > limit else 0
    mine = [lk for lk in design.get("links", []) if site in (lk["site_a"], lk["site_b"])]
    ends = sum(int(lk["fiber_pairs"]) for lk in mine)
    modules = sum(int(lk["wavelengths"]) for lk in mine if lk.get("optic_kind") != "gray")
    pick = {}
    for row in cat.fiber_plant.values():
        if row["role"] not in pick or float(row["price_usd"]) < float(pick[row["role"]]["price_usd"]):
            pick[row["role"]] = row
    count = {"jumper": short + 2 * long, "trunk": long, "panel": 2 * long, "duplex_jumper": ends + modules,
             "odf": ends}
    want = Counter()
    for role, row in pick.items():
        want[row["name"]] += -(-count[role] // int(row.get("ports") or 1)) if role in ("panel", "odf") else count[role]
    return [f"{site}: BOM lists {bom[item]:g} {item} (fiber_plant), its {long} patched and {short} in-rack optical "
            f"links, {ends} fiber pair ends and {modules} coherent modules need {want[item]}"
            for item in sorted(set(bom) | set(+want)) if off(bom[item], want[item], rel=0, tol=1e-9)]


def check_dci_attachment(entry, graph, cat, design) -> list[str]:
    """A site carrying inter-site traffic joins its DCI routers to its fabric: attachments of one node's NIC
    ports each (nics_per_node links at the NIC speed) on leaf down ports the nodes leave free, their bandwidth
    >= the site's inter-site capacity; the leaves of the protocol's family the routers share (an InfiniBand
    fabric has no Ethernet router to join); each cable in the optics catalog at that speed, reaching the length,
    filling the leaf's cages as a node link's item does (cage_fit, no splitter: its legs end on NICs); BOM
    dci_attachment lines = a cable per link, or for transceivers ceil(nics / k) modules at the router and one
    at each leaf port."""
    out, site = [], entry["name"]
    att = entry.get("dci_attachment")
    cap = sum(lk["wavelengths"] * float(cat.coherent[lk["coherent_model"]]["gbps"]) for lk in design.get("links", [])
              if site in (lk["site_a"], lk["site_b"]))
    bom = Counter()
    for line in design["bom"]:
        if line["site"] == site and line["category"] == "dci_attachment":
            bom[line["item"]] += line["quantity"]
    if not att:
        if cap > 0:
            out.append(f"{site}: its routes carry {cap:,.0f} Gb/s but no DCI attachment joins its routers to the fabric")
        return out + [f"{site}: BOM lists {n:g} {item} (dci_attachment) for no attachment" for item, n in bom.items()]
    node = cat.node_types[entry.get("node_type") or cat.project["node_type"]]
    nics, gbps = int(node["nics_per_node"]), int(node["nic_gbps"])
    count = sum(int(c["attachments"]) for c in att["cables"])
    if att["attachments"] != count or att["links"] != count * nics or att["gbps"] != gbps:
        out.append(f"{site}: dci_attachment says {att['attachments']} attachments, {att['links']} links at "
                   f"{att['gbps']}G; its cables hold {count}, {count * nics} links of {nics} NIC ports at {gbps}G")
    if count * nics * gbps < cap - 1e-6:
        out.append(f"{site}: DCI attachments carry {count * nics * gbps:,.0f} Gb/s, its routes {cap:,.0f} Gb/s")
    leaf_family = cat.switches[tier_rows(entry)["leaf"]["model"]]["family"]
    for t in entry["tiers"]:
        if t["tier"] == "dci" and cat.switches[t["model"]]["family"] != leaf_family:
            out.append(f"{site}: DCI router {t['model']} is {cat.switches[t['model']]['family']}, the fabric's leaves "
                       f"{leaf_family}: it cannot join them")
    free = sum(d["down_ports"] - sum(e["count"] for m, e in graph.adj[n].items()
                                     if graph.nodes[m]["role"] == "endpoints")
               for n, d in graph.nodes(data=True) if d["role"] == "leaf")
    if free < count * nics:
        out.append(f"{site}: the leaves have {free} down ports the nodes leave free, the DCI attachments need "
                   f"{count * nics}")
    want = Counter()
    for c in att["cables"]:
        optic = cat.optics.get(c["item"])
        if optic is None:
            out.append(f"{site}: DCI attachment cable {c['item']} is not in the optics catalog")
            continue
        if int(optic["gbps"]) != gbps or float(optic["reach_m"]) < float(att["length_m"]):
            out.append(f"{site}: DCI attachment cable {c['item']} ({optic['gbps']}G, {optic['reach_m']:g} m) does not "
                       f"carry {gbps}G over {att['length_m']:g} m")
        out += cage_fit(site, "dci_attach", optic, tier_rows(entry), cat)
        k = int(optic.get("links_per_module") or 1)
        per = nics if optic["kind"] in ("dac", "aoc") else -(-nics // k) + nics
        want[c["item"]] += int(c["attachments"]) * per
    return out + [f"{site}: BOM lists {bom[item]:g} {item} (dci_attachment), its attachments need {want[item]}"
                  for item in sorted(set(bom) | set(want)) if off(bom[item], want[item], rel=0, tol=1e-9)]


def check_router_cages(entry, graph, cat, design) -> list[str]:
    """A site's DCI router ports fit their cages: each dci tier's cages_by_use (line side at a DCI optic's speed,
    fabric side at the NIC speed) within count x its cages and at speeds it runs; the cages of each kind hold its
    ports, lanes a cage = the router's ports at that speed over its cages: wavelengths (or gray links) of the site's
    routes at that speed on the line side, the DCI attachment links on the fabric side."""
    out, site = [], entry["name"]
    ports, held = Counter(), Counter()
    for lk in design.get("links", []):
        if site in (lk["site_a"], lk["site_b"]) and lk["wavelengths"]:
            ports["line", int(cat.coherent[lk["coherent_model"]]["gbps"])] += int(lk["wavelengths"])
    att = entry.get("dci_attachment") or {}
    if att:
        ports["fabric", int(att["gbps"])] += int(att["links"])
    for t in entry["tiers"]:
        if t["tier"] != "dci":
            continue
        uses = t.get("cages_by_use") or []
        room = t["count"] * cat.cages(t["model"])
        if sum(u["cages"] for u in uses) > room:
            out.append(f"{site}: {t['count']} DCI router(s) {t['model']} have {room} cages, their ports take "
                       f"{sum(u['cages'] for u in uses)}")
        for u in uses:
            if int(u["gbps"]) not in cat.speeds(t["model"]):
                out.append(f"{site}: DCI router {t['model']} has no {u['gbps']}G port for its {u['side']} side")
                continue
            held[u["side"], int(u["gbps"])] += u["cages"] * cat.lanes(t["model"], int(u["gbps"]))
    for (side, gbps), n in sorted(ports.items()):
        if held[side, gbps] < n:
            out.append(f"{site}: {n} {side}-side DCI router ports at {gbps}G, their cages hold {held[side, gbps]}")
    return out


SITE_CHECKS = (check_choice, check_ports, check_striping, check_paths, check_oversubscription, check_bisection,
               check_cables, check_floor, check_support, check_dci_attachment, check_router_cages, check_fiber_plant,
               check_site_bom, check_site_power)


# --------------------------------------------------------------------------------------------
# Whole design
# --------------------------------------------------------------------------------------------

def check_demand(design, cat) -> list[str]:
    """GPUs >= gpus_required; totals are the sums over sites; min_sites <= open sites <= max_sites;
    every required site open."""
    p, totals, out = cat.project, design["totals"], []
    gpn = int(cat.node_types[p["node_type"]]["gpus_per_node"])
    gpus = sum(s["nodes"] * gpn for s in design["sites"] if s["open"])
    if gpus < int(p["gpus_required"]):
        out.append(f"the design has {gpus:,} GPUs, {int(p['gpus_required']) - gpus:,} short of gpus_required "
                   f"{int(p['gpus_required']):,}")
    opened = [s["name"] for s in design["sites"] if s["open"]]
    sums = {"gpus": gpus, "nodes": sum(s["nodes"] for s in design["sites"] if s["open"]),
            "sites_open": len(opened), "coherent_ports": sum(lk["coherent_ports"] for lk in design["links"]),
            "power_mw": sum(s["power_mw"] for s in design["sites"] if s["open"])}
    for key, value in sums.items():
        if key in totals and off(totals[key], value):
            out.append(f"totals.{key} is {totals[key]:,}, the sum over the design is {value:,}")
    if len(opened) < int(p.get("min_sites") or 1) or len(opened) > int(p.get("max_sites") or len(opened)):
        out.append(f"{len(opened)} sites open, outside min_sites {p.get('min_sites')} / max_sites {p.get('max_sites')}")
    for name, row in cat.sites.items():
        if row.get("status") == "required" and name not in opened:
            out.append(f"{name}: status required but the site is not open")
    return out


CATALOG_OF = {"nodes": "node_types", "switches": "switches", "dci_routers": "switches", "optics": "optics",
              "dci_attachment": "optics", "fiber_plant": "fiber_plant",
              "coherent": "coherent", "dci_optics": "coherent", "amplifiers": "amplifiers", "line_system": "amplifiers"}
SUPPORT_OF = NODE_CATEGORIES[-2:]  # switches and node links of the support networks


def catalog_unit(line: dict, cat) -> tuple[float, float]:
    """(unit price, unit power in W) of a BOM line by the inputs; the line's own figures when the
    item is unknown (check_money reports it)."""
    category, item = line["category"], line["item"]
    row = getattr(cat, CATALOG_OF[category]).get(item) if category in CATALOG_OF else None
    if category in SUPPORT_OF:
        for net in cat.support_networks.values():
            if net["switch_model"] == item:
                return float(net["switch_price_usd"]), float(net["switch_power_w"])
            if net["link_item"] == item:
                return float(net["link_price_usd"]), float(net["link_power_w"])
    if category == "nodes" and row:
        return float(row["node_price_usd"]), float(row["node_power_kw"]) * 1e3
    if row:
        return float(row["price_usd"]), float(row.get("power_w") or 0.0)
    route = {f"{r['site_a']}--{r['site_b']}": r for r in cat.routes.values()}.get(line["site"])
    site = cat.sites.get(line["site"], {})
    price = {"site": site.get("fixed_cost_usd"), "power": site.get("power_cost_usd_per_mw"),
             "fiber": route and route["fiber_cost_usd_per_pair_km"]}.get(category)
    return float(line["unit_price_usd"] if price is None else price), float(line["unit_power_w"])


def check_money(design, cat) -> list[str]:
    """Each BOM line: catalog price and power, extended = quantity x price; site fixed cost and
    facility power lines per the sites table; the BOM total is totals.capex_usd and each site's
    capex; objective = capex + energy over horizon_years; total cost within budget_usd. Spares are not in the
    BOM: their own total beside capex (check_spares)."""
    out, p = [], cat.project
    site_rows = cat.sites
    capex_by_site: Counter = Counter()
    for line in design["bom"]:
        where = f"BOM line {line['site']} / {line['category']} / {line['item']}"
        if line["category"] in CATALOG_OF and line["item"] not in getattr(cat, CATALOG_OF[line["category"]]):
            out.append(f"{where}: item not in the inputs' catalog")
        price, power = catalog_unit(line, cat)
        if off(line["unit_price_usd"], price) or off(line["unit_power_w"], power):
            out.append(f"{where}: unit ${line['unit_price_usd']:,.2f} / {line['unit_power_w']:g} W, the catalog says "
                       f"${price:,.2f} / {power:g} W")
        if off(line["extended_usd"], line["quantity"] * line["unit_price_usd"]):
            out.append(f"{where}: extended ${line['extended_usd']:,.2f} is not quantity x unit price "
                       f"${line['quantity'] * line['unit_price_usd']:,.2f}")
        capex_by_site[line["site"]] += line["extended_usd"]
    capex = sum(capex_by_site.values())
    if off(capex, design["totals"]["capex_usd"]):
        out.append(f"BOM total ${capex:,.2f} differs from totals.capex_usd ${design['totals']['capex_usd']:,.2f}")
    years = float(p.get("horizon_years") or 0.0)
    energy = 0.0
    for s in design["sites"]:
        if not s["open"]:
            continue
        if off(capex_by_site[s["name"]], s["capex_usd"]):
            out.append(f"{s['name']}: capex_usd ${s['capex_usd']:,.2f}, its BOM lines add up to "
                       f"${capex_by_site[s['name']]:,.2f}")
        row = site_rows[s["name"]]
        energy += years * HOURS_PER_YEAR * float(row["energy_usd_per_mwh"]) * s["power_mw"]
        lines = {ln["category"]: ln for ln in design["bom"] if ln["site"] == s["name"]}
        if "power" in lines and off(lines["power"]["quantity"], s["power_mw"]):
            out.append(f"{s['name']}: the BOM buys {lines['power']['quantity']:.6f} MW of facility power, the site "
                       f"uses {s['power_mw']:.6f} MW")
        if float(row["fixed_cost_usd"]) > 0 and "site" not in lines:
            out.append(f"{s['name']}: the BOM has no line for the site's fixed cost ${row['fixed_cost_usd']:,.0f}")
    if off(energy, design["totals"].get("energy_usd", 0.0)):
        out.append(f"energy over {years:g} years is ${energy:,.2f}, totals.energy_usd says "
                   f"${design['totals'].get('energy_usd', 0.0):,.2f}")
    if off(design["objective_usd"], capex + energy):
        out.append(f"objective_usd ${design['objective_usd']:,.2f} is not capex + energy ${capex + energy:,.2f}")
    budget = p.get("budget_usd")
    if budget is not None and capex + energy > float(budget) * (1 + 1e-9):
        out.append(f"total cost ${capex + energy:,.0f} is above budget_usd ${float(budget):,.0f} by "
                   f"${capex + energy - float(budget):,.0f}")
    return out


def line_plan(cat, band: str) -> dict[str, list[dict]]:
    """The line units of a coherent route by role: the cheapest amplifiers row of the role in each band the route
    uses (ties: lower noise figure, then name); huts serve every band."""
    plan = {}
    for role in ("inline", *END_ROLES, "hut"):
        for b in [None] if role == "hut" else ["c", "l"] if band == "c+l" else ["c"]:
            rows = [r for r in cat.amplifiers.values() if r["role"] == role and b in (None, r["band"])]
            if rows:
                plan.setdefault(role, []).append(min(rows, key=lambda r: (float(r["price_usd"]),
                                                                          float(r["noise_figure_db"]), str(r["name"]))))
    return plan


def spared_as(line: dict, cat) -> str | None:
    """What a BOM line's spares follow: ``switch`` (per site and model), ``module`` or ``cable`` (per line)."""
    category, item = line["category"], line["item"]
    if category in ("switches", "dci_routers"):
        return "switch"
    if category in ("coherent", "dci_optics"):
        return "module"
    if category in ("optics", "dci_attachment"):
        return {"transceiver": "module"}.get(cat.optics.get(item, {}).get("kind"), "cable")
    nets = [n for n in cat.support_networks.values() if n["category"] == category]
    if any(n["switch_model"] == item for n in nets):
        return "switch"
    kinds = [n.get("link_kind") or "cable" for n in nets if n["link_item"] == item]
    return ("module" if kinds[0] == "transceiver" else "cable") if kinds else None


def check_spares(design, cat) -> list[str]:
    """Spares: ceil(spares_optics_share x quantity) of each transceiver or DCI module line, ceil(spares_cables_share
    x quantity) of each cable line, ceil(switches / spares_switch_per) per site and switch model, each at the
    catalog price with extended = quantity x price; totals.spares_usd is their sum, capex_with_spares_usd =
    capex + spares."""
    p = cat.project
    share = {"module": float(p.get("spares_optics_share") or 0), "cable": float(p.get("spares_cables_share") or 0)}
    per = int(p.get("spares_switch_per") or 0)
    want, switches = Counter(), Counter()
    for line in design["bom"]:
        kind = spared_as(line, cat)
        if kind == "switch":
            switches[line["site"], line["item"]] += line["quantity"]
        elif kind:
            want[line["site"], line["item"]] += math.ceil(share[kind] * line["quantity"] - 1e-9)
    for key, n in switches.items():
        want[key] += -(-int(n) // per) if per else 0
    out, got, usd = [], Counter(), 0.0
    for line in design.get("spares", []):
        got[line["site"], line["item"]] += line["quantity"]
        usd += line["extended_usd"]
        price = catalog_unit({**line, "category": line["spare_of"]}, cat)[0]
        if off(line["unit_price_usd"], price) or off(line["extended_usd"], line["quantity"] * price):
            out.append(f"spares {line['site']} / {line['item']}: {line['quantity']:g} x ${line['unit_price_usd']:,.2f} "
                       f"= ${line['extended_usd']:,.2f}, the catalog price is ${price:,.2f}")
    out += [f"spares {site} / {item}: {got[site, item]:g}, the spares rules give {want[site, item]:g}"
            for site, item in sorted(set(got) | set(+want)) if off(got[site, item], want[site, item])]
    totals = design["totals"]
    if off(totals.get("spares_usd", 0.0), usd):
        out.append(f"totals.spares_usd ${totals.get('spares_usd', 0.0):,.2f}, the spares lines add up to ${usd:,.2f}")
    if off(totals.get("capex_with_spares_usd", totals["capex_usd"]), totals["capex_usd"] + usd):
        out.append(f"totals.capex_with_spares_usd ${totals['capex_with_spares_usd']:,.2f} is not capex + spares "
                   f"${totals['capex_usd'] + usd:,.2f}")
    return out


def check_links(design, cat) -> list[str]:
    """Per used route: both ends open, a route of the inputs; coherent reach >= distance; wavelengths <=
    floor(4800 GHz x bands / channel) x fiber pairs; fiber pairs within those available; ports = 2 x wavelengths;
    capacity = wavelengths x rate; RTT = 2 x 4.9 us/km x distance. A coherent route's line system (the cheapest unit
    of each role and band): N = ceil(distance / spacing) spans, in-line amplifiers = (N - 1) x pairs per band, a hut
    per in-line site, their power the route's; OSNR (0.1 nm) = 58 + P_ch - NF - loss x distance / N - 10 log10 N,
    P_ch the launch power per 50 GHz scaled to the channel, NF the worst in-line or preamp noise figure, at least the
    module's required OSNR plus osnr_margin_db; the route's BOM lines match; route power sums to totals."""
    out, p = [], cat.project
    opened = {s["name"] for s in design["sites"] if s["open"]}
    bom = defaultdict(float)
    for line in design["bom"]:
        bom[line["site"], line["category"]] += line["quantity"]
    route_w = 0.0
    for link in design["links"]:
        a, b = link["site_a"], link["site_b"]
        name = f"route {a}--{b}"
        route = cat.routes.get(frozenset((a, b)))
        co = cat.coherent.get(link["coherent_model"])
        if route is None or co is None:
            out.append(f"{name}: {'no such route in the inputs' if route is None else 'coherent type unknown'}")
            continue
        dist, pairs, waves = float(route["distance_km"]), int(link["fiber_pairs"]), int(link["wavelengths"])
        for end in (a, b):
            if end not in opened:
                out.append(f"{name}: carries traffic but {end} is not open")
        if float(co["reach_km"]) < dist:
            out.append(f"{name}: {co['name']} reaches {co['reach_km']:g} km, the route is {dist:g} km")
        gray = str(co.get("kind") or "coherent") == "gray"
        band = route["band"]
        if gray:
            per_link = int(co.get("fiber_pairs_per_link") or 1)
            if waves * per_link > pairs:
                out.append(f"{name}: {waves} gray links of {per_link} fiber pair(s) each on {pairs} fiber pair(s)")
        else:
            channels = int(C_BAND_GHZ * (2 if band == "c+l" else 1) // float(co["channel_ghz"]))
            if waves > channels * pairs:
                out.append(f"{name}: {waves} wavelengths on {pairs} fiber pair(s) of {channels} channels each: "
                           f"{waves - channels * pairs} too many")
        if pairs > int(route["fiber_pairs"]):
            out.append(f"{name}: uses {pairs} fiber pairs, {route['fiber_pairs']} available "
                       f"({pairs - int(route['fiber_pairs'])} beyond)")
        spans = max(1, math.ceil(dist / float(route["amplifier_spacing_km"])))
        plan = {} if gray else line_plan(cat, band)
        amps = (spans - 1) * pairs * len(plan.get("inline", []))
        huts = (spans - 1) * len(plan.get("hut", []))
        watts = sum(float(r["power_w"]) for r in plan.get("inline", [])) * (spans - 1) * pairs + sum(
            float(r["power_w"]) for r in plan.get("hut", [])) * huts
        route_w += watts
        figures = {"amplifiers": (link["amplifiers"], amps), "coherent_ports": (link["coherent_ports"], 2 * waves),
                   "capacity_gbps": (link["capacity_gbps"], waves * float(co["gbps"])),
                   "rtt_ms": (link["rtt_ms"], 2 * FIBER_US_PER_KM * dist / 1e3),
                   "huts": (link["huts"], huts), "route_power_w": (link["route_power_w"], watts)}
        if link.get("distance_km") is not None:
            figures["distance_km"] = (link["distance_km"], dist)
        for key, (got, want) in figures.items():
            if off(got, want, rel=1e-9, tol=1e-9):
                out.append(f"{name}: {key} is {got:g}, {want:g} by the rule (wavelengths {waves}, pairs {pairs})")
        if not gray and link["band"] != band:
            out.append(f"{name}: band is {link['band']}, the route's is {band}")
        noise = [float(r["noise_figure_db"]) for r in plan.get("preamp", []) + (plan.get("inline", []) if spans > 1
                                                                                   else [])]
        required = co.get("required_osnr_db")
        if not gray and required is not None and noise:
            launch = float(p["launch_power_dbm"]) + 10 * math.log10(float(co["channel_ghz"]) / 50.0)
            osnr = (launch - PHOTON_DBM_01NM - max(noise) - float(route["fiber_loss_db_per_km"]) * dist / spans
                    - 10 * math.log10(spans))
            need = float(required) + float(p["osnr_margin_db"])
            for key, want in (("osnr_db", osnr), ("required_osnr_db", float(required))):
                if link[key] is None or off(link[key], want, rel=1e-9, tol=1e-9):
                    out.append(f"{name}: {key} is {link[key]}, {want:.3f} dB by the rule ({spans} spans)")
            if osnr < need - 1e-9:
                out.append(f"{name}: OSNR {osnr:.2f} dB is below {co['name']}'s required {float(required):g} dB plus "
                           f"osnr_margin_db {float(p['osnr_margin_db']):g} dB by {need - osnr:.2f} dB")
        for category, want in (("amplifiers", amps), ("fiber", pairs * dist), ("line_system", huts)):
            if off(bom[f"{a}--{b}", category], want):
                out.append(f"{name}: BOM has {bom[f'{a}--{b}', category]:g} {category}, the route needs {want:g}")
    if off(design["totals"].get("route_power_mw", 0.0), route_w / 1e6):
        out.append(f"totals.route_power_mw is {design['totals'].get('route_power_mw', 0.0):g}, the routes' in-line "
                   f"amplifiers and huts draw {route_w / 1e6:g} MW")
    return out


def check_intersite(design, cat) -> list[str]:
    """Per open site, with capacity = wavelengths x rate and RTT from the distance: coherent modules in
    the BOM = wavelengths of its routes; DCI router ports hold every coherent port and the attachment ports
    toward the fabric (capacity + the attachments' links x speed); router buffers >= buffer_bdp_factor x sum of capacity x RTT
    (MB = Gb/s x ms / 8); line units at its end (booster, preamp, mux/demux of each band) = the fiber pairs of its
    coherent routes; with encrypt_dci, every link encrypted by its DCI optic or by MACsec on every DCI router at
    both ends. With more than one site open:
    capacity >= dci_ratio x NIC bandwidth, open sites connected over used routes, and every pair
    within max_site_rtt_ms over used routes; with route_diversity, connected after any one failure (a route, or an
    srlg group's routes: designer.audit.resilience); with one_dci_router_model, one DCI router model per site."""
    out, p = [], cat.project
    graph = build_intersite_graph(design)
    used = nx.Graph([(u, v, d) for u, v, d in graph.edges(data=True) if d.get("used")])
    opened = [s for s in design["sites"] if s["open"]]
    node = cat.node_types[p["node_type"]]
    factor = 1.0 if p.get("buffer_bdp_factor") is None else float(p["buffer_bdp_factor"])
    coherent_bom, end_bom = Counter(), Counter()
    for line in design["bom"]:
        if line["category"] in ("coherent", "dci_optics"):
            coherent_bom[line["site"], line["item"]] += line["quantity"]
        if line["category"] == "line_system" and line["site"] in cat.sites:
            end_bom[line["site"], line["item"]] += line["quantity"]
    macsec = {s["name"]: all(cat.switches[t["model"]].get("encryption") for t in s["tiers"] if t["tier"] == "dci")
              for s in opened}
    for lk in design["links"] if p.get("encrypt_dci") else []:
        sealed = cat.coherent[lk["coherent_model"]].get("encryption")
        if not (sealed or (macsec.get(lk["site_a"]) and macsec.get(lk["site_b"]))) or not lk.get("encrypted"):
            out.append(f"route {lk['site_a']}--{lk['site_b']}: encrypt_dci, but neither {lk['coherent_model']} nor "
                       "MACsec on every DCI router at both ends encrypts it")
    for s in opened:
        name = s["name"]
        mine = [d for *_, d in used.edges(name, data=True)] if name in used else []
        waves = Counter()
        for d in mine:
            waves[d["coherent_model"]] += d["wavelengths"]
        for model in set(waves) | {m for (site, m) in coherent_bom if site == name}:
            if coherent_bom[name, model] != waves[model]:
                out.append(f"{name}: BOM lists {coherent_bom[name, model]:g} {model} modules, its routes carry "
                           f"{waves[model]} wavelengths")
        units = Counter()
        for d in mine:
            if d["optic_kind"] != "gray":
                band = cat.routes[frozenset((d["site_a"], d["site_b"]))]["band"]
                for role, rows in line_plan(cat, band).items():
                    for row in rows if role in END_ROLES else []:
                        units[row["name"]] += d["fiber_pairs"]
        for item in set(units) | {i for (site, i) in end_bom if site == name}:
            if off(end_bom[name, item], units[item], rel=0, tol=1e-9):
                out.append(f"{name}: BOM lists {end_bom[name, item]:g} {item}, its coherent fiber pairs need {units[item]}")
        caps = [(d["wavelengths"] * float(cat.coherent[d["coherent_model"]]["gbps"]),
                 2 * FIBER_US_PER_KM * d["distance_km"] / 1e3) for d in mine]
        cap = sum(c for c, _ in caps)
        bdp = sum(c * rtt / 8 for c, rtt in caps)
        dci = [t for t in s["tiers"] if t["tier"] == "dci"]
        if p.get("one_dci_router_model") and len({t["model"] for t in dci}) > 1:
            out.append(f"{name}: one_dci_router_model, but its DCI routers are of "
                       f"{len({t['model'] for t in dci})} models ({', '.join(sorted({t['model'] for t in dci}))})")
        pool = sum(t["count"] * cat.pool_gbps(t["model"]) for t in dci)
        buffers = sum(t["count"] * float(cat.switches[t["model"]]["buffer_mb"]) for t in dci)
        att = s.get("dci_attachment") or {}
        toward = float(att.get("links") or 0) * float(att.get("gbps") or 0)
        if pool < cap + toward - 1e-6:
            out.append(f"{name}: DCI router ports carry {pool:,.0f} Gb/s, the {cap:,.0f} Gb/s of coherent ports and "
                       f"{toward:,.0f} Gb/s toward the fabric need {cap + toward:,.0f} ({cap + toward - pool:,.0f} short)")
        for t in dci:
            for d in mine:
                gbps = int(cat.coherent[d["coherent_model"]]["gbps"])
                if gbps not in cat.speeds(t["model"]):
                    out.append(f"{name}: DCI router {t['model']} has no {gbps}G port for {d['coherent_model']}")
        if buffers < factor * bdp * (1 - 1e-9):
            out.append(f"{name}: DCI router buffers hold {buffers:,.0f} MB, the bandwidth-delay product needs "
                       f"{factor * bdp:,.0f} MB (x{factor:g}; {factor * bdp - buffers:,.0f} MB short)")
        if len(opened) > 1:
            need = float(p["dci_ratio"]) * s["nodes"] * int(node["nics_per_node"]) * float(node["nic_gbps"])
            if cap < need * (1 - 1e-9):
                out.append(f"{name}: inter-site capacity {cap:,.0f} Gb/s is below dci_ratio {float(p['dci_ratio']):g} "
                           f"x NIC bandwidth = {need:,.0f} Gb/s ({need - cap:,.0f} short)")
    names = [s["name"] for s in opened]
    if len(names) > 1:
        used.add_nodes_from(names)
        parts = [sorted(c & set(names)) for c in nx.connected_components(used) if c & set(names)]
        if len(parts) > 1:
            out.append(f"open sites are not connected over used routes: {' | '.join(', '.join(c) for c in parts)}")
        if p.get("route_diversity"):
            for r in route_resilience(design):
                if not r["sites_connected"]:
                    what = f"srlg {r['srlg']} ({r['route']})" if r.get("srlg") else f"route {r['route']}"
                    out.append(f"route_diversity: losing {what} cuts the open sites apart "
                               f"({r['gpus_cut_off']:,} GPUs cut off)")
        limit = p.get("max_site_rtt_ms")
        if limit is not None:
            for a in names:
                rtt = nx.single_source_dijkstra_path_length(used, a, weight="rtt_ms")
                for b in names:
                    if a < b and b in rtt and rtt[b] > float(limit) + 1e-9:
                        out.append(f"sites {a} and {b}: RTT {rtt[b]:.3f} ms over used routes is above max_site_rtt_ms "
                                   f"{float(limit):g} by {rtt[b] - float(limit):.3f} ms")
    return out


DESIGN_CHECKS = (check_demand, check_money, check_spares, check_links, check_intersite, check_training)


# --------------------------------------------------------------------------------------------
# Against a workbook
# --------------------------------------------------------------------------------------------

def with_workbook(design: dict, workbook, out: list[str]) -> dict:
    """The design with the workbook's tables as its inputs; each difference from the echo is noted."""
    from designer.inputs.echo import inputs_echo
    from designer.inputs.workbook import load_inputs

    echoed = inputs_echo(load_inputs(workbook))
    tables = {name: echoed[name] for name in ("project", "routes", "sites", "node_types", "switches", "optics",
                                              "coherent", "amplifiers", "protocols")}
    echo = design.get("inputs") or {}
    for name, table in tables.items():
        out += [f"the design's inputs differ from {workbook}: {d}" for d in differences(name, table, echo.get(name))]
    return {**copy.copy(design), "inputs": {**echo, **tables}}


def differences(name: str, mine, theirs) -> list[str]:
    """Cells of one input table that differ between the workbook (mine) and the design's echo."""
    if name == "project":
        theirs = theirs or {}
        return [f"project.{k} is {theirs.get(k)!r} in the design, {v!r} in the workbook" for k, v in mine.items()
                if k != "name" and not same(v, theirs.get(k))]
    if len(mine) != len(theirs or []):
        return [f"{name} has {len(theirs or [])} rows in the design, {len(mine)} in the workbook"]
    return [f"{name} row {i + 1} {k} is {b.get(k)!r} in the design, {v!r} in the workbook"
            for i, (a, b) in enumerate(zip(mine, theirs)) for k, v in a.items() if k != "source" and not same(v, b.get(k))]


def same(a, b) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return not off(a, b, rel=1e-12, tol=1e-12)
    return a == b
