"""Brute-force oracle: the cheapest design of a tiny workbook by exhaustive search.

Written from DESIGN.md section 4 and the rules the model docstrings state, without importing
``models`` or ``designer.solve.run``: its own fabric enumeration (topology, tiers, protocol, switch per
tier, speeds, port splits, cable per tier), its own switch-count arithmetic for a node count, its
own cost, power and latency sums, and its own inter-site search (routes, coherent type, waves,
fiber pairs, amplifiers, DCI routers, connectivity, RTT, dci_ratio, route_diversity with srlg groups, one DCI
router model a site, power_headroom). Nothing is relaxed: every site subset, every node count, every fabric,
every route/coherent/wave assignment and every DCI router mix is tried (dominated choices are pruned only where
a cheaper choice is at least as good in every constraint). Meant for <= 4 sites, a few switches and optics, a few nodes per site.

The training objectives (min_cost_per_run, max_tokens_per_s; ``Oracle.every_run`` and ``best_run``) are searched
on workbooks of one usable site: every GPU count the parallelism allows (designer.solve.throughput.gpu_counts),
every node count and every fabric, each judged by the step of models.training (the formulas are tested on their
own) on the fabric's own figures (per-GPU goodput at its oversubscription, latency, hops, the protocol's jitter,
in-network reduction, rail-only) and by the cost of its run. Under any other objective the workload sheet is not
modelled: the oracle refuses inputs that carry one.

``Rules`` names the points where DESIGN.md leaves room and the MILP takes one reading. The
defaults are the MILP's documented readings; the other values are wider readings of DESIGN.md, to
look for cheaper designs those readings rule out (tests/test_oracle.py pins what was found).

``tiny_workbooks`` and ``tiny_training_workbooks`` (end of the module) are the hypothesis strategies of instances
the oracle can search.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace

import pandas as pd

#: the planner's cable length per tier (the oracle takes no floor layout: books set all three) and no
#: support networks and fiber plant (per-node and per-link lines the oracle does not size)
PLANNER_LENGTHS = {"cable_m_node_leaf": 3, "cable_m_leaf_spine": 50, "cable_m_spine_core": 150,
                   "cable_m_dci_attach": 60, "support_networks": False,
                   "fiber_plant": False}
#: oversubscription levels a tier's split is made at (the MILP's grid), plus the planner's limit
LEVEL_GRID = (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.0)
C_BAND_GHZ = 4800.0
FIBER_US_PER_KM = 4.9
CABLE_NS_PER_M = 5.0
HOURS_PER_YEAR = 8760.0
EPS = 1e-9
SEARCH_LIMIT = 50_000  # route/coherent/wave assignments the oracle will try for one set of open sites


@dataclass(frozen=True)
class Rules:
    """Readings of DESIGN.md section 4 where it leaves a choice. The defaults are the MILP's; the others
    are wider readings, used to look for cheaper designs the MILP's choices rule out.

    - ``levels``: "grid": a tier's port split is the one (most down ports, then fewest up) at each
      oversubscription level in LEVEL_GRID up to the limit and at the limit itself; "every": for every
      up-port count, the most down ports within the limit (a split may leave ports dark: fewer uplinks
      can stripe over fewer spines); "one_site" (the MILP's): "every" at each tier of a 2- or 3-tier Clos
      (leaf_spine, fat_tree_3, rail_optimized, rail_only) on a workbook of one usable site under the cost
      objectives, the grid in a mesh, with more sites and under the training objectives
      (designer.solve.prepare.every_split_applies).
    - ``uplinks``: "any": any speed both switches have; "not_slower": a tier's uplinks run at least as
      fast as its downlinks (the MILP's reading until four 200G uplinks were found cheaper than two 400G).
    """

    levels: str = "one_site"
    uplinks: str = "any"


# --- catalog cells ---------------------------------------------------------------------------

def speeds_of(text) -> dict[int, int]:
    """"64x800,128x400" -> {800: 64, 400: 128} (ports per speed); the validated inputs carry it parsed."""
    if isinstance(text, dict):
        return dict(text)
    out = {}
    for part in str(text).split(","):
        if part.strip():
            ports, gbps = part.lower().split("x")
            out[int(gbps)] = int(ports)
    return out


def bandwidth(text: str) -> int:
    """Total switching bandwidth (Gb/s) of a switch: every port mode carries the same."""
    return max(g * n for g, n in speeds_of(text).items())


def roles_of(text) -> set[str]:
    parts = text if isinstance(text, tuple) else str(text).split(",")
    return {p.strip().lower() for p in parts if p.strip()}


# --- fabrics ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Link:
    """The cable (or transceiver pair) of one link tier."""

    tier: str
    gbps: int
    item: str
    kind: str
    per_module: int
    price: float
    watts: float

    @property
    def cable(self) -> bool:
        return self.kind in ("dac", "aoc")

    def items(self, ends: list[tuple[int, int]], links: int) -> int:
        """A cable per link (a 1:k splitter per k node links, all on leaves: ceil(links / k)); else a transceiver
        module per link end, a multi-link module serving up to ``per_module`` ends of one device. ``ends`` lists
        (devices, ends on each) for every end group."""
        if self.cable:
            return -(-links // self.per_module)
        k = self.per_module
        return sum(devices * -(-each // k) for devices, each in ends)


@dataclass(frozen=True)
class Fabric:
    topology: str
    tiers: int
    protocol: str
    leaf: str
    spine: str | None
    core: str | None
    g0: int
    g1: int | None
    g2: int | None
    d1: int
    u1: int
    d2: int
    u2: int
    spine_ports: int  # 2-tier spine ports at g1
    core_ports: int  # core ports at g2
    mesh_leaves: int  # leaf mesh: most leaves at this split
    links: tuple[Link, ...]
    latency_us: float

    @property
    def mesh(self) -> bool:
        return self.topology == "leaf_mesh" and self.tiers == 2

    def label(self) -> str:
        parts = (self.topology, self.tiers, self.protocol, self.leaf, self.spine, self.core, self.g0,
                 self.g1, self.g2, f"{self.d1}/{self.u1}", f"{self.d2}/{self.u2}")
        return "/".join(str(p) for p in parts) + "/" + "+".join(k.item for k in self.links)


@dataclass
class Sized:
    """One fabric built for a node count: switches, links, cost and power (without nodes)."""

    fabric: Fabric
    nodes: int
    switches: dict  # role -> (model, count over all planes/rails)
    links: list  # (tier, count, items)
    cost: float
    watts: float


def _best(options) -> tuple[int, int] | None:
    """Most down ports, then fewest up ports."""
    if not options:
        return None
    d = max(d for d, _ in options)
    return d, min(u for dd, u in options if dd == d)


def _split_set(options, ratio, limit: float, rules: Rules) -> set:
    """The splits of ``options`` (d, u) used: the best (most down ports, then fewest up) at each level up to
    the limit, or ("every") each up-port count with the most down ports it takes within the limit;
    ``ratio(d, u)`` is a split's oversubscription."""
    if rules.levels == "every":
        within = [(d, u) for d, u in options if ratio(d, u) <= limit + EPS]
        return {(max(d for d, uu in within if uu == u), u) for u in {u for _, u in within}}
    levels = {lv for lv in LEVEL_GRID if lv <= limit} | {limit}
    found = (_best([(d, u) for d, u in options if ratio(d, u) <= level + EPS]) for level in sorted(levels))
    return {x for x in found if x is not None}


def cage_speed(sw, model: str) -> int:
    """Gb/s of one of a switch's cages: its bandwidth over its cages (declared, else its ports at its fastest
    speed)."""
    ports = speeds_of(sw.loc[model, "port_modes"])
    declared = sw.loc[model].get("cages")
    return bandwidth(sw.loc[model, "port_modes"]) // (ports[max(ports)] if pd.isna(declared) else int(declared))


def clos_splits(modes, g_down: int, g_up: int, limit: float, rules: Rules, cage: int) -> set:
    """Splits (d down at g_down, u up at g_up) of a switch with d g_down <= level u g_up, within its bandwidth
    and its cages of ``cage`` Gb/s, each holding cage / g ports of g."""
    pool = bandwidth(modes)

    def cages(n, g):
        return -(-n * g // cage)

    options = [(d, u) for u in range(1, pool // g_up + 1) for d in range(1, (pool - u * g_up) // g_down + 1)
               if cages(d, g_down) + cages(u, g_up) <= pool // cage]
    return _split_set(options, lambda d, u: d * g_down / (u * g_up), limit, rules)


def mesh_splits(pool: int, g: int, limit: float, leaves: int, rules: Rules) -> set:
    """Splits of a leaf in a mesh of ``leaves`` leaves: u even (a mesh link joins two leaves), u >= leaves - 1
    (a link per leaf pair), and the bisection, leaves^2/4 x u/(leaves-1) links, carries level x the NIC
    bandwidth of half the mesh: d x 2(leaves - 1) <= level x u x leaves."""
    ports = pool // g
    options = [(d, u) for u in range(2, ports + 1, 2) if u >= leaves - 1 for d in range(1, ports - u + 1)]
    return _split_set(options, lambda d, u: d * 2 * (leaves - 1) / (u * leaves), limit, rules)


def cable_options(inputs, tier: str, gbps: int, length_m: float, cages: tuple[int, ...]) -> list[Link]:
    """Cables and transceivers that carry gbps over length_m and whose switch end fills the cages at each
    switch end (``cages``: their Gb/s): gbps x links_per_module equal to each; a splitter cable (more than one
    link) only on node links, its legs on NICs. One is left out only when another costs no more and draws no
    more power for every link count (items per link exact: 1 or 2)."""
    found = []
    for name, row in inputs.optics.iterrows():
        k, cable = int(row["links_per_module"]), row["kind"] in ("dac", "aoc")
        fits = all(gbps * k == c for c in cages) and not (cable and k > 1 and tier != "node_leaf")
        if int(row["gbps"]) == gbps and float(row["reach_m"]) >= length_m and fits:
            found.append(Link(tier, gbps, str(name), str(row["kind"]), int(row["links_per_module"]),
                              float(row["price_usd"]), float(row["power_w"])))

    def per_link(k: Link):  # items per link, when it does not depend on how ends share devices
        items = None if k.per_module > 1 else 1 if k.cable else 2
        return None if items is None else (items * k.price, items * k.watts)

    out = []
    for i, k in enumerate(found):
        mine = per_link(k)
        beaten = mine is not None and any(
            (other := per_link(o)) is not None and other[0] <= mine[0] and other[1] <= mine[1]
            and (other != mine or j < i) for j, o in enumerate(found) if j != i)
        if not beaten:
            out.append(k)
    return out


def fabrics(inputs, rules: Rules = Rules()) -> list[Fabric]:
    """Every fabric the catalog and the project allow (before the node count is known)."""
    p = inputs.project
    node = inputs.node_types.loc[p["node_type"]]
    g0 = int(node["nic_gbps"])
    limit = float(p["max_oversubscription"])
    if any(p.get(key) is None for key in PLANNER_LENGTHS) or p["support_networks"] or p["fiber_plant"]:
        raise ValueError("the oracle sizes cables for the planner's lengths, no support networks and no fiber plant: "
                         "set "
                         + ", ".join(f"{k} {v}" for k, v in PLANNER_LENGTHS.items()))
    lengths = tuple(float(p[key]) for key in list(PLANNER_LENGTHS)[:3])
    usable = [s for s in inputs.sites.index if inputs.sites.loc[s, "status"] != "excluded"]
    if rules.levels == "one_site" and (p.get("objective") in TRAINING_OBJECTIVES or len(usable) > 1):
        rules = replace(rules, levels="grid")
    sw = inputs.switches
    out = []
    variants = [("leaf_spine", 2), ("fat_tree_3", 3), ("rail_optimized", 2), ("rail_optimized", 3),
                ("rail_only", 1), ("rail_only", 2), ("leaf_mesh", 1), ("leaf_mesh", 2)]
    for topology, tiers in variants:
        if topology not in p["topologies_allowed"]:
            continue
        for protocol in p["protocols_allowed"]:
            family = inputs.protocols.loc[protocol, "switch_family"]

            def having(role):
                return [m for m in sw.index if sw.loc[m, "family"] == family and role in roles_of(sw.loc[m, "roles"])]

            mesh = topology == "leaf_mesh" and tiers == 2
            if tiers == 1 or mesh:
                uppers = [(None, None)]
            elif tiers == 2:
                uppers = [(s, None) for s in having("spine")]
            else:
                uppers = [(s, c) for s in having("spine") for c in having("core")]
            for leaf in having("leaf"):
                if g0 not in speeds_of(sw.loc[leaf, "port_modes"]):
                    continue
                for spine, core in uppers:
                    out += _fabrics_of(inputs, rules, topology, tiers, protocol, leaf, spine, core, g0,
                                       limit, lengths, node)
    return out


def _up_speeds(rules, down: int, a: str, b: str | None, sw) -> list[int]:
    common = set(speeds_of(sw.loc[a, "port_modes"]))
    if b is not None:
        common &= set(speeds_of(sw.loc[b, "port_modes"]))
    return sorted(g for g in common if rules.uplinks == "any" or g >= down)


def _fabrics_of(inputs, rules, topology, tiers, protocol, leaf, spine, core, g0, limit, lengths, node):
    sw = inputs.switches
    mesh = topology == "leaf_mesh" and tiers == 2
    leaf_pool = bandwidth(sw.loc[leaf, "port_modes"])
    out = []
    cage = {m: cage_speed(sw, m) for m in (leaf, spine, core) if m}
    clos = replace(rules, levels="every") if rules.levels == "one_site" else rules  # a Clos's tiers
    if tiers == 1:
        combos = [(None, None, leaf_pool // g0, 0, 0, 0, 0)]
    elif mesh:
        combos = {(None, None, d, u, 0, 0, size) for size in range(2, leaf_pool // g0 + 2)
                  for d, u in mesh_splits(leaf_pool, g0, limit, size, rules)}  # a split for every mesh size
    elif tiers == 2:
        combos = [(g1, None, d, u, 0, 0, 0) for g1 in _up_speeds(rules, g0, leaf, spine, sw)
                  for d, u in clos_splits(sw.loc[leaf, "port_modes"], g0, g1, limit, clos, cage[leaf])]
    elif tiers == 3:
        combos = [(g1, g2, d, u, d2, u2, 0) for g1 in _up_speeds(rules, g0, leaf, spine, sw)
                  for g2 in _up_speeds(rules, g1, spine, core, sw)
                  for d, u in clos_splits(sw.loc[leaf, "port_modes"], g0, g1, limit, clos, cage[leaf])
                  for d2, u2 in clos_splits(sw.loc[spine, "port_modes"], g1, g2, limit, clos, cage[spine])]
    lat_ns = {m: float(sw.loc[m, "latency_ns"]) for m in (leaf, spine, core) if m}
    nic_ns = float(inputs.protocols.loc[protocol, "nic_latency_ns"])
    nl, ls, sc = lengths
    if tiers == 1:
        switching, metres = lat_ns[leaf], 2 * nl
    elif mesh:
        switching, metres = 2 * lat_ns[leaf], 2 * nl + ls
    elif tiers == 2:
        switching, metres = 2 * lat_ns[leaf] + lat_ns[spine], 2 * (nl + ls)
    else:
        switching, metres = 2 * lat_ns[leaf] + 2 * lat_ns[spine] + lat_ns[core], 2 * (nl + ls + sc)
    nvlink = float(node["nvlink_latency_ns"]) if topology == "rail_only" else 0.0
    latency_us = (2 * nic_ns + switching + metres * CABLE_NS_PER_M + nvlink) / 1e3
    limit_us = inputs.project.get("max_fabric_latency_us")
    if limit_us is not None and latency_us > limit_us + EPS:
        return []
    for g1, g2, d1, u1, d2, u2, mesh_leaves in sorted(combos, key=str):
        spine_ports = bandwidth(sw.loc[spine, "port_modes"]) // g1 if tiers == 2 and not mesh else 0
        core_ports = bandwidth(sw.loc[core, "port_modes"]) // g2 if tiers == 3 else 0
        tiers_links = [("node_leaf", g0, nl, (cage[leaf],))]
        if mesh:
            tiers_links.append(("leaf_leaf", g0, ls, (cage[leaf],)))
        elif tiers >= 2:
            tiers_links.append(("leaf_spine", g1, ls, (cage[leaf], cage[spine])))
        if tiers == 3:
            tiers_links.append(("spine_core", g2, sc, (cage[spine], cage[core])))
        choices = [cable_options(inputs, *tier) for tier in tiers_links]
        for cables in itertools.product(*choices):
            out.append(Fabric(topology, tiers, protocol, leaf, spine, core, g0, g1, g2, d1, u1, d2, u2,
                              spine_ports, core_ports, mesh_leaves, tuple(cables), latency_us))
    return out


_figures_of: dict = {}


def _figures(inputs) -> tuple[dict, dict]:
    """(node type row, {switch: (price, watts)}) of the inputs, read once (sizing runs thousands of times)."""
    cached = _figures_of.get("inputs")
    if cached is not inputs:
        sw = inputs.switches
        _figures_of.update(inputs=inputs, node=inputs.node_types.loc[inputs.project["node_type"]].to_dict(),
                           switches={m: (float(sw.loc[m, "price_usd"]), float(sw.loc[m, "power_w"])) for m in sw.index})
    return _figures_of["node"], _figures_of["switches"]


def size(inputs, f: Fabric, nodes: int, attached: int = 0) -> Sized | None:
    """The fewest switches of fabric f for ``nodes`` nodes and ``attached`` DCI router attachments (each on
    the leaf ports of one node), its links, cost and power; None if it cannot hold them."""
    node, figures = _figures(inputs)
    nics, planes = int(node["nics_per_node"]), int(node["planes"])
    rails = nics // planes
    copies = planes * (rails if f.topology == "rail_only" else 1)  # independent networks
    # NIC ports one network holds per node: one per rail, or one (a rail network)
    per_node = 1 if f.topology == "rail_only" else rails
    spines = cores = 0
    served = nodes + attached  # endpoints on the leaves
    link_counts = [nics * nodes]
    # link ends per tier as (devices, ends on each); a pooled group counts every end as on one device
    # (the model's rule where per-switch counts depend on how nodes and pods fill the switches)
    ends = [[(nodes, nics), (1, nics * nodes)]]
    if f.tiers == 1:
        if per_node * served > f.d1:
            return None
        leaves = 1
    elif f.mesh:
        leaves = max(2, -(-per_node * served // f.d1))
        if leaves > f.mesh_leaves:  # the split holds the bisection of a mesh this large
            return None
        link_counts.append(copies * leaves * f.u1 // 2)
        ends.append([(copies * leaves, f.u1)])
    else:
        if f.topology == "rail_optimized":
            units = -(-served // f.d1)  # scalable units of d1 nodes, a leaf per rail each
            leaves = rails * units
        else:
            leaves = -(-per_node * served // f.d1)
        uplinks = leaves * f.u1
        link_counts.append(copies * uplinks)
        if f.tiers == 2:
            fits = [s for s in range(1, f.u1 + 1) if f.u1 % s == 0 and s * f.spine_ports >= uplinks]
            if not fits:
                return None
            spines = fits[0]
            ends.append([(copies * leaves, f.u1), (copies * spines, uplinks // spines)])
        else:
            if leaves > f.core_ports * f.d2:  # pods of <= d2 leaves, one core port per pod
                return None
            spines = -(-uplinks // f.d2)
            cores = -(-spines * f.u2 // f.core_ports)
            link_counts.append(copies * spines * f.u2)
            ends.append([(copies * leaves, f.u1), (1, copies * uplinks)])
            ends.append([(copies * spines, f.u2), (1, copies * spines * f.u2)])
    switches = {"leaf": (f.leaf, copies * leaves)}
    if spines:
        switches["spine"] = (f.spine, copies * spines)
    if cores:
        switches["core"] = (f.core, copies * cores)
    cost = sum(figures[m][0] * n for m, n in switches.values())
    watts = sum(figures[m][1] * n for m, n in switches.values())
    links = []
    for cable, count, tier_ends in zip(f.links, link_counts, ends):
        items = cable.items(tier_ends, count)
        links.append((cable.tier, count, items))
        cost += items * cable.price
        watts += items * cable.watts
    return Sized(f, nodes, switches, links, cost, watts)


# --- the training objectives' figures of a fabric ----------------------------------------------------------

TRAINING_OBJECTIVES = ("min_cost_per_run", "max_tokens_per_s")
#: worst-case switch hops of a path by (topology, tiers): up and down every tier; a mesh link joins two leaves
HOPS = {("leaf_spine", 2): 3, ("fat_tree_3", 3): 5, ("rail_optimized", 2): 3, ("rail_optimized", 3): 5,
        ("rail_only", 1): 1, ("rail_only", 2): 3, ("leaf_mesh", 1): 1, ("leaf_mesh", 2): 2}


def oversubscription(f: Fabric) -> float:
    """The figure a design states: the worse of its two tiers' ratios, a missing tier counting 1 (1 for one
    tier); the first tier's d g0 / (u g1), or a mesh's bisection d x 2(L-1) / (u x L) at the largest mesh L its split
    is made for; the second's d2 g1 / (u2 g2); rounded up to 4 decimals."""
    if f.tiers == 1:
        return 1.0
    first = f.d1 * 2 * (f.mesh_leaves - 1) / (f.u1 * f.mesh_leaves) if f.mesh else f.d1 * f.g0 / (f.u1 * f.g1)
    return math.ceil(max(first, f.d2 * f.g1 / (f.u2 * f.g2) if f.tiers == 3 else 1.0) * 1e4 - 1e-6) / 1e4


def job_fabric(inputs, f: Fabric, gpus: int):
    """Fabric f as the job's ``gpus`` GPUs see it (models.training.Fabric): per GPU the node's NIC bandwidth x the
    protocol's efficiency / oversubscription, its latency, hops and per-hop jitter, in-network reduction when every
    switch model of it reduces, rail-only or not; one site, no inter-site capacity."""
    from models import training as tr

    node = inputs.node_types.loc[inputs.project["node_type"]]
    proto = inputs.protocols.loc[f.protocol]
    per_gpu = int(node["nics_per_node"]) * float(node["nic_gbps"]) / int(node["gpus_per_node"])
    models = [m for m in (f.leaf, f.spine, f.core) if m is not None]
    return tr.Fabric("site", gpus, per_gpu * float(proto["efficiency"]) / oversubscription(f), f.latency_us,
                     HOPS[f.topology, f.tiers], float(proto["jitter_us"]),
                     inr=all(bool(inputs.switches.loc[m, "in_network_reduction"]) for m in models),
                     rail_only=f.topology == "rail_only")


@dataclass
class Run:
    """A one-site design under a training objective: its GPU count, build and the run's figures."""

    gpus: int
    nodes: int
    fabric: str
    cost: float  # capex + energy over the horizon (what budget_usd bounds)
    step_s: float
    tokens_per_s: float
    cost_per_run: float


# --- the search -----------------------------------------------------------------------------

@dataclass
class Answer:
    cost: float  # capex + energy over the horizon
    latency_us: float  # worst fabric latency of the open sites
    sites: dict  # name -> {nodes, fabric, switches, links, routers, watts, mw, cost}
    routes: list = field(default_factory=list)  # (a, b, coherent, waves, pairs)


class Oracle:
    def __init__(self, inputs, rules: Rules = Rules()):
        if inputs.workload and inputs.project.get("objective") not in TRAINING_OBJECTIVES:
            raise ValueError("the oracle models the workload sheet only for the training objectives")
        self.inputs = inputs
        p = self.p = inputs.project
        self.node = inputs.node_types.loc[p["node_type"]]
        self.gpn = int(self.node["gpus_per_node"])
        self.node_w = float(self.node["node_power_kw"]) * 1e3
        self.node_bw = int(self.node["nics_per_node"]) * float(self.node["nic_gbps"])
        self.years = float(p.get("horizon_years") or 0.0)
        self.fabrics = fabrics(inputs, rules)
        sites = inputs.sites
        self.sites = [s for s in sites.index if sites.loc[s, "status"] != "excluded"]
        self._fronts: dict = {}
        self._all: dict = {}  # (fabric, nodes) -> every fabric sized, for the training objectives
        # per site and node count: the sized fabrics no other beats in cost, power and latency
        self.sized = {s: {n: self._front(s, n) for n in range(1, int(sites.loc[s, "max_nodes"]) + 1)}
                      for s in self.sites}
        self._site_memo: dict = {}

    def _dollars_per_watt(self, s) -> float:
        row = self.inputs.sites.loc[s]
        return float(row["pue"]) / 1e6 * (float(row["power_cost_usd_per_mw"])
                                          + self.years * HOURS_PER_YEAR * float(row["energy_usd_per_mwh"]))

    def _front(self, s, n, attached: int = 0) -> list[Sized]:
        """The sized fabrics of n nodes (and ``attached`` DCI attachments, on fabrics a DCI router can join)
        that no other beats in cost, power and latency; attachment cables priced into each."""
        key = (s, n, attached)
        if key in self._fronts:
            return self._fronts[key]
        per_w = self._dollars_per_watt(s)
        built = []
        for f in self.fabrics:
            if (z := size(self.inputs, f, n, attached)) is None:
                continue
            for usd, watts in self.attachment(f) if attached else [(0.0, 0.0)]:
                built.append(Sized(z.fabric, z.nodes, z.switches, z.links, z.cost + attached * usd,
                                   z.watts + attached * watts))
        built.sort(key=lambda z: (z.cost + per_w * z.watts, z.watts, z.fabric.latency_us))
        front = []
        for z in built:
            if not any(k.watts <= z.watts and k.fabric.latency_us <= z.fabric.latency_us for k in front):
                front.append(z)
        self._fronts[key] = front
        return front

    def attachment(self, f: Fabric) -> list[tuple[float, float]]:
        """(USD, W) of one DCI attachment (a node's NIC ports on leaf ports, linked to a DCI router) on fabric f,
        for each cable at the NIC speed over cable_m_dci_attach: a cable per link, or for transceivers ceil(nics / k)
        modules at the router and one at each leaf port; none when no DCI router of the leaf's family has a port
        at the NIC speed."""
        sw = self.inputs.switches
        family = sw.loc[f.leaf, "family"]
        if not any("dci" in roles_of(sw.loc[m, "roles"]) and sw.loc[m, "family"] == family
                   and f.g0 in speeds_of(sw.loc[m, "port_modes"]) for m in sw.index):
            return []
        nics = int(self.node["nics_per_node"])
        options = []
        for k in cable_options(self.inputs, "dci_attach", f.g0, float(self.p["cable_m_dci_attach"]),
                               (cage_speed(sw, f.leaf),)):
            items = nics if k.cable else -(-nics // k.per_module) + nics
            options.append((items * k.price, items * k.watts))
        return options

    # -- one site ---------------------------------------------------------------------------

    def priced(self, s, n: int, usd: float, watts: float) -> tuple[float, float, float] | None:
        """(cost, capex, facility MW) of site s with n nodes and equipment of ``usd`` drawing ``watts``; None when
        MW = PUE x IT W exceeds power_mw x (1 - power_headroom). capex = fixed + nodes + equipment +
        power_cost_usd_per_mw x MW; cost = capex + MW x horizon_years x 8760 h x energy_usd_per_mwh."""
        row = self.inputs.sites.loc[s]
        mw = float(row["pue"]) * (self.node_w * n + watts) / 1e6
        if mw > float(row["power_mw"]) * (1 - float(self.p.get("power_headroom") or 0)) * (1 + 1e-9):
            return None
        capex = (float(row["fixed_cost_usd"]) + float(self.node["node_price_usd"]) * n + usd
                 + mw * float(row["power_cost_usd_per_mw"]))
        return capex + mw * self.years * HOURS_PER_YEAR * float(row["energy_usd_per_mwh"]), capex, mw

    def site_options(self, s, lat_cap, dci) -> dict:
        """Node count -> (cost, detail) of the cheapest build of site s, given its inter-site
        equipment ``dci`` = (capacity Gb/s, coherent cost, coherent W, ((family, router options), ...)) or None."""
        key = (s, lat_cap, dci)
        if key in self._site_memo:
            return self._site_memo[key]
        ratio = float(self.p["dci_ratio"])
        out = {}
        attached = 0 if dci is None else math.ceil(dci[0] / self.node_bw - 1e-9)
        for n, front in self.sized[s].items():
            if dci is not None and ratio * self.node_bw * n > dci[0] + 1e-6:
                continue
            if attached:
                front = self._front(s, n, attached)
            families = {} if dci is None else dict(dci[3])
            best = None
            for z in front:
                if z.fabric.latency_us > lat_cap + EPS:
                    continue
                extras = [(0.0, 0.0, None)] if dci is None else [
                    (dci[1] + rc, dci[2] + rw, mix)
                    for rc, rw, mix in families.get(self.inputs.switches.loc[z.fabric.leaf, "family"], ())]
                for xc, xw, mix in extras:
                    priced = self.priced(s, n, z.cost + xc, z.watts + xw)
                    if priced is not None and (best is None or priced[0] < best[0]):
                        best = (priced[0], {"nodes": n, "fabric": z.fabric.label(), "switches": z.switches,
                                            "links": z.links, "routers": mix, "it_w": self.node_w * n + z.watts + xw,
                                            "mw": priced[2], "latency_us": z.fabric.latency_us})
            if best is not None:
                out[n] = best
        self._site_memo[key] = out
        return out

    def combine(self, options: list[tuple[str, dict]]):
        """Cheapest node counts over the open sites meeting the GPU demand (every site >= 1 node)."""
        need = int(self.p["gpus_required"])
        states = {0: (0.0, {})}  # GPUs placed (capped at need) -> (cost, site details)
        for s, opts in options:
            nxt = {}
            for placed, (cost, picked) in states.items():
                for n, (c, detail) in opts.items():
                    g = min(need, placed + self.gpn * n)
                    if g not in nxt or cost + c < nxt[g][0]:
                        nxt[g] = (cost + c, {**picked, s: detail})
            states = nxt
        return states.get(need)

    # -- inter-site ---------------------------------------------------------------------------

    def routers(self, ports: tuple, buffer_mb: float, speeds: frozenset, family: str) -> tuple:
        """DCI router mixes (cost, W, {model: count}) of one switch family whose cages hold ``ports`` and whose
        buffers >= buffer_mb, none beaten in both cost and power. ``ports`` = ((Gb/s, count), ...), one entry a kind
        of port (the line side at each DCI optic speed, the fabric side at the NIC speed): a cage runs one kind and
        holds the router's ports at that speed over its cages (none at a speed it lacks). Routers must carry every
        coherent speed used."""
        sw = self.inputs.switches
        models = [m for m in sw.index if "dci" in roles_of(sw.loc[m, "roles"]) and sw.loc[m, "family"] == family
                  and speeds <= set(speeds_of(sw.loc[m, "port_modes"]))]
        modes = {m: speeds_of(sw.loc[m, "port_modes"]) for m in models}
        cages = {m: bandwidth(sw.loc[m, "port_modes"]) // cage_speed(sw, m) for m in models}
        buf = {m: float(sw.loc[m, "buffer_mb"]) for m in models}

        def lanes(m, g):
            return modes[m].get(g, 0) // cages[m]

        def fewest(m, left, buf_left):  # fewest routers of model m holding the ports left and the buffer left
            if any(n > 0 and not lanes(m, g) for g, n in left) or (buf_left > 1e-6 and buf[m] <= 0):
                return None
            need = -(-sum(-(-n // lanes(m, g)) for g, n in left if n > 0) // cages[m])
            return max(need, math.ceil(buf_left / buf[m] - 1e-9) if buf_left > 1e-6 else 0)

        def splits(head, left):  # every split of the head routers' cages among the kinds: the ports they leave
            if not head:
                yield left
                return
            (m, count), rest = head[0], head[1:]
            kinds = [j for j, (g, n) in enumerate(left) if n > 0 and lanes(m, left[j][0])]
            for alloc in itertools.product(*(range(-(-left[j][1] // lanes(m, left[j][0])) + 1) for j in kinds)):
                if sum(alloc) <= cages[m] * count:
                    after = list(left)
                    for j, c in zip(kinds, alloc):
                        after[j] = (left[j][0], max(0, left[j][1] - c * lanes(m, left[j][0])))
                    yield from splits(rest, tuple(after))

        def alone(m):  # routers of model m alone for the kinds it runs and the buffer: more of it never helps
            runs = tuple((g, n) for g, n in ports if lanes(m, g))
            return fewest(m, runs, buffer_mb) if buf[m] > 0 or buffer_mb <= 1e-6 else fewest(m, runs, 0)

        mixes = []
        if models:
            # every count of all models but the last (up to what one model alone would need), then the
            # fewest of the last over every split of the others' cages
            ranges = [range(alone(m) + 1) for m in models[:-1]]
            for head in itertools.product(*ranges):
                buf_left = buffer_mb - sum(buf[m] * c for m, c in zip(models, head))
                found = [n for left in splits(tuple((m, c) for m, c in zip(models, head) if c), ports)
                         if (n := fewest(models[-1], left, buf_left)) is not None]
                if not found:
                    continue
                counts = (*head, min(found))
                if self.p.get("one_dci_router_model") and sum(c > 0 for c in counts) > 1:
                    continue
                cost = sum(float(sw.loc[m, "price_usd"]) * c for m, c in zip(models, counts))
                watts = sum(float(sw.loc[m, "power_w"]) * c for m, c in zip(models, counts))
                mixes.append((cost, watts, tuple((m, c) for m, c in zip(models, counts) if c)))
        mixes.sort()
        front = []
        for mix in mixes:
            if not any(f[1] <= mix[1] for f in front):
                front.append(mix)
        return tuple(front)

    def usable_routes(self, opened: tuple) -> list[dict]:
        inp = self.inputs
        max_rtt = self.p.get("max_site_rtt_ms")
        amp_price = float(inp.amplifiers["price_usd"].min()) if len(inp.amplifiers) else 0.0
        out = []
        for _, r in inp.routes.iterrows():
            a, b = str(r["site_a"]), str(r["site_b"])
            if a not in opened or b not in opened:
                continue
            dist = float(r["distance_km"])
            rtt = 2 * FIBER_US_PER_KM * dist / 1e3
            if max_rtt is not None and rtt > max_rtt:
                continue
            types = [c for c in inp.coherent.index if float(inp.coherent.loc[c, "reach_km"]) >= dist]
            if not types:
                continue
            amps = max(0, math.ceil(dist / float(r["amplifier_spacing_km"])) - 1)
            srlg = r.get("srlg")
            out.append({"a": a, "b": b, "dist": dist, "rtt": rtt, "pairs": int(r["fiber_pairs"]), "types": types,
                        "srlg": srlg if isinstance(srlg, str) and srlg.strip() else None,
                        "pair_cost": float(r["fiber_cost_usd_per_pair_km"]) * dist + amps * amp_price,
                        "amps": amps})
        return out

    def multi_site(self, opened: tuple, lat_cap: float):
        inp = self.inputs
        co = inp.coherent
        routes = self.usable_routes(opened)
        ratio = float(self.p["dci_ratio"])
        max_n = {s: int(inp.sites.loc[s, "max_nodes"]) for s in opened}
        options = []
        for r in routes:
            opts = [None]
            need = ratio * self.node_bw * max(max_n[r["a"]], max_n[r["b"]])
            for c in r["types"]:
                gbps = float(co.loc[c, "gbps"])
                per_pair = int(C_BAND_GHZ // float(co.loc[c, "channel_ghz"]))
                top = min(max(1, math.ceil(need / gbps - 1e-9)), per_pair * r["pairs"])
                opts += [(c, w) for w in range(1, top + 1)]
            options.append(opts)
        max_rtt = self.p.get("max_site_rtt_ms")
        factor = float(self.p["buffer_bdp_factor"])
        if math.prod(len(o) for o in options) > SEARCH_LIMIT:
            raise ValueError(f"too large for the oracle: {[len(o) for o in options]} route options")
        best = None
        for pick in itertools.product(*options):
            used = [(r, o) for r, o in zip(routes, pick) if o is not None]
            if len(used) < len(opened) - 1 or not self._connected(opened, used, max_rtt):
                continue
            if self.p.get("route_diversity") and not self._diverse(opened, used):
                continue
            cap = {s: 0.0 for s in opened}
            bdp = {s: 0.0 for s in opened}
            c_cost = {s: 0.0 for s in opened}
            c_w = {s: 0.0 for s in opened}
            speeds = {s: {} for s in opened}  # DCI optic speed -> wavelengths (line-side router ports) at each site
            fiber = 0.0
            for r, (c, w) in used:
                gbps = float(co.loc[c, "gbps"])
                pairs = -(-w // int(C_BAND_GHZ // float(co.loc[c, "channel_ghz"])))
                fiber += pairs * r["pair_cost"]
                for end in (r["a"], r["b"]):
                    cap[end] += gbps * w
                    bdp[end] += gbps * w * r["rtt"] / 8.0
                    c_cost[end] += w * float(co.loc[c, "price_usd"])
                    c_w[end] += w * float(co.loc[c, "power_w"])
                    speeds[end][int(gbps)] = speeds[end].get(int(gbps), 0) + w
            per_site = []
            for s in opened:
                attached = math.ceil(cap[s] / self.node_bw - 1e-9)  # the DCI attachments, nics links each
                ports = (*sorted(speeds[s].items(), reverse=True),
                         (int(self.node["nic_gbps"]), attached * int(self.node["nics_per_node"])))
                # routers join leaves of their own family: their mixes per family
                mixes = tuple((family, found) for family in sorted(set(inp.switches["family"]))
                              if (found := self.routers(ports, factor * bdp[s], frozenset(speeds[s]), family)))
                if not mixes:
                    break
                opts = self.site_options(s, lat_cap, (cap[s], c_cost[s], c_w[s], mixes))
                if not opts:
                    break
                per_site.append((s, opts))
            else:
                found = self.combine(per_site)
                if found is not None and (best is None or found[0] + fiber < best[0]):
                    best = (found[0] + fiber, found[1],
                            [(r["a"], r["b"], c, w, -(-w // int(C_BAND_GHZ // float(co.loc[c, "channel_ghz"]))))
                             for r, (c, w) in used])
        return best

    @staticmethod
    def _connected(opened, used, max_rtt) -> bool:
        """Open sites joined by used routes; with an RTT limit, every pair by a path within it."""
        dist = {(a, b): (0.0 if a == b else math.inf) for a in opened for b in opened}
        for r, _ in used:
            a, b = r["a"], r["b"]
            dist[a, b] = dist[b, a] = min(dist[a, b], r["rtt"])
        for k in opened:  # Floyd-Warshall over the used routes
            for a in opened:
                for b in opened:
                    if dist[a, k] + dist[k, b] < dist[a, b]:
                        dist[a, b] = dist[a, k] + dist[k, b]
        limit = math.inf if max_rtt is None else max_rtt + 1e-12
        return all(dist[a, b] < math.inf and dist[a, b] <= limit for a in opened for b in opened)

    @staticmethod
    def _diverse(opened, used) -> bool:
        """N-1: after losing any one used route, or every used route of one srlg group, the open sites are still
        joined (by any path: no RTT limit on the detour)."""
        failures = {}
        for i, (r, _) in enumerate(used):
            failures.setdefault(r["srlg"] or i, set()).add(i)
        return all(Oracle._connected(opened, [u for i, u in enumerate(used) if i not in lost], None)
                   for lost in failures.values())

    # -- whole problem ------------------------------------------------------------------------

    def cheapest(self, lat_cap: float = math.inf) -> Answer | None:
        """The cheapest design whose open sites all have fabric latency <= lat_cap (no budget)."""
        p = self.p
        sites = self.inputs.sites
        required = {s for s in self.sites if sites.loc[s, "status"] == "required"}
        lo = int(p.get("min_sites") or 1)
        hi = min(len(self.sites), int(p["max_sites"]) if p.get("max_sites") is not None else len(self.sites))
        best = None
        for k in range(lo, hi + 1):
            for opened in itertools.combinations(self.sites, k):
                if not required <= set(opened):
                    continue
                if k == 1:
                    found = self.combine([(opened[0], self.site_options(opened[0], lat_cap, None))])
                    found = None if found is None else (found[0], found[1], [])
                else:
                    found = self.multi_site(opened, lat_cap)
                if found is not None and (best is None or found[0] < best[0]):
                    best = found
        if best is None:
            return None
        cost, detail, routes = best
        return Answer(cost, max(d["latency_us"] for d in detail.values()), detail, routes)

    def solve(self) -> Answer | None:
        """The optimum under the project's objective and budget; None when nothing is feasible."""
        budget = self.p.get("budget_usd")
        within = (lambda a: a is not None and (budget is None or a.cost <= budget * (1 + 1e-9)))
        if (self.p.get("objective") or "min_cost") != "min_latency":
            answer = self.cheapest()
            return answer if within(answer) else None
        for lat in sorted({f.latency_us for f in self.fabrics}):
            answer = self.cheapest(lat)
            if within(answer):
                return answer
        return None


    # -- training objectives ------------------------------------------------------------------

    def runs(self, gpus: int):
        """Every one-site design of ``gpus`` GPUs for the job (every usable site, node count n >= gpus / GPUs a node
        and fabric holding n nodes, within the site's power and the budget), each a Run judged by its own step
        (models.training.step on the fabric's figures, the job as designer.solve.training.job_of reads the workload)
        and cost of the run (capex / amortization_years for the run's
        hours + facility MW x energy_usd_per_mwh x hours; no spares: books set them to none)."""
        from designer.solve.training import domain_of, job_of
        from models import training as tr

        w, budget = self.inputs.workload, self.p.get("budget_usd")
        job, domain = job_of(self.inputs, gpus), domain_of(self.node)
        steps = {}
        for s in self.sites:
            energy = float(self.inputs.sites.loc[s, "energy_usd_per_mwh"])
            for n in range(-(-gpus // self.gpn), int(self.inputs.sites.loc[s, "max_nodes"]) + 1):
                for f in self.fabrics:
                    z = self._size(f, n)
                    priced = None if z is None else self.priced(s, n, z.cost, z.watts)
                    if priced is None or (budget is not None and priced[0] > budget * (1 + 1e-9)):
                        continue
                    fabric = job_fabric(self.inputs, f, gpus)
                    if fabric not in steps:
                        steps[fabric] = tr.step(job, domain, [fabric])
                    step = steps[fabric]
                    run = tr.run(job, step.step_time_s, step.compute_s, float(w["training_tokens"]), priced[2],
                                 priced[2] * energy, priced[1], float(w["amortization_years"]))
                    yield Run(gpus, n, f.label(), priced[0], step.step_time_s, run.tokens_per_s, run.cost_usd)

    def _size(self, f: Fabric, n: int) -> Sized | None:
        """size(f, n), once."""
        if (f, n) not in self._all:
            self._all[f, n] = size(self.inputs, f, n)
        return self._all[f, n]

    def every_run(self) -> list[Run]:
        """Every one-site design over the GPU counts the parallelism allows (designer.solve.throughput.gpu_counts)."""
        from designer.solve.throughput import gpu_counts

        if len(self.sites) > 1:
            raise ValueError("the oracle's training search covers workbooks of one usable site")
        return [r for gpus in gpu_counts(self.inputs) for r in self.runs(gpus)]

    def best_run(self, runs: list[Run]) -> Run | None:
        """The best of ``runs`` under the objective: least cost of the run (most tokens/s breaking ties), or most
        tokens/s (least cost of the run breaking ties); None when there are none."""
        if self.p["objective"] == "max_tokens_per_s":
            return min(runs, key=lambda r: (-r.tokens_per_s, r.cost_per_run), default=None)
        return min(runs, key=lambda r: (r.cost_per_run, -r.tokens_per_s), default=None)


def solve(inputs, rules: Rules = Rules()) -> Answer | None:
    """The oracle's optimum of validated inputs (designer.workbook.Inputs), or None if infeasible."""
    return Oracle(inputs, rules).solve()


# --- instances --------------------------------------------------------------------------------

def tiny_workbooks(max_sites: int = 4, budget: bool = True, min_latency: bool = True, twin_port: bool = True,
                   multi_site: bool = False, resilience: bool = False):
    """A hypothesis strategy of tiny valid workbooks (dict of sheets for designer.xlsx.write_workbook).

    A base that is usually feasible (a leaf/spine/core switch at the NIC speed, a cable that reaches a
    node, an optic that reaches a spine, a DCI router), then random extras and limits that often bind:
    1-3 fabric switches of 3-16 ports, 0-2 DCI routers, 1-4 optics, 1-2 coherent types, a node type of
    1-4 NICs over 1-2 planes, 1..max_sites sites of 1-8 nodes, routes between most site pairs. About
    half the multi-site instances need more GPUs than one site holds. No workload sheet. ``budget``,
    ``min_latency`` and ``twin_port`` allow a budget, the min_latency objective, multi-link items (twin-port
    modules and splitters, drawn to fill a cage);
    ``multi_site`` draws at least two sites and, when they can, more GPUs than one site holds; ``resilience``
    sometimes puts routes in one srlg group and sets route_diversity, one_dci_router_model, power_headroom."""
    from hypothesis import strategies as st

    shapes = ["3x400", "4x400", "6x400", "8x400", "4x800,8x400", "2x800,4x400,8x200", "4x400,8x200", "6x200",
              "8x200", "3x800,6x400,12x200", "16x200", "8x800,16x400", "10x400"]
    coherent_shapes = [("zr400", 400, 120, 75.0), ("zrp400", 400, 1000, 75.0), ("zr800", 800, 120, 150.0),
                       ("zrp800", 800, 1000, 150.0), ("wide400", 400, 600, 1600.0)]

    @st.composite
    def build(draw):
        src = {"source": "oracle test instance"}

        def pick(options):
            return draw(st.sampled_from(options))

        def often(n: int = 5) -> bool:  # true n times in n + 1 (and what examples shrink to)
            return pick([True] * n + [False])

        nics = pick([1, 2, 4])
        planes = pick([p for p in (1, 2) if nics % p == 0])
        g0 = pick([200, 400])
        gpn = pick([1, 2, 4, 8])
        node = dict(name="gpu_node", gpus_per_node=gpn, nics_per_node=nics, nic_gbps=g0, planes=planes,
                    node_power_kw=pick([2.0, 4.5, 10.0]), node_price_usd=pick([20_000, 90_000]),
                    nvlink_latency_ns=pick([100, 300]), **src)
        families = pick([["infiniband"], ["ethernet"], ["infiniband", "ethernet"]])
        protocols = [dict(name="ib" if f == "infiniband" else "roce", switch_family=f,
                          nic_latency_ns=450 if f == "infiniband" else 800, efficiency=0.9, lossless=True,
                          jitter_rank=0, **src) for f in families]
        switches = []
        for i in range(draw(st.integers(1, 3))):
            base = i == 0 and often()
            switches.append(dict(
                model=f"sw{i}", family=families[0] if i == 0 else pick(families),
                port_modes=pick([x for x in shapes if g0 in speeds_of(x) and bandwidth(x) >= 3200] if base else shapes),
                buffer_mb=16,
                latency_ns=pick([100, 250, 600]), power_w=pick([100, 400]), price_usd=pick([2_000, 9_000, 25_000]),
                roles="leaf,spine,core" if base else pick(["leaf", "leaf,spine", "leaf,spine,core", "spine,core"]),
                **src))
        coherent = [dict(name=n, gbps=g, reach_km=r, channel_ghz=c, power_w=pick([10, 25]),
                         price_usd=pick([3_000, 8_000]), **src)
                    for n, g, r, c in draw(st.lists(st.sampled_from(coherent_shapes), min_size=1, max_size=2,
                                                    unique=True))]
        # DCI routers join the fabric on leaf ports at the NIC speed, of the leaves' family (mostly the base's)
        for i in range(pick([1, 1, 1, 2, 2, 0])):
            switches.append(dict(
                model=f"dci{i}", family=families[0] if often() else pick(families),
                port_modes=pick(["8x800,16x400,32x200", "36x800,72x400", "36x800,72x400,144x200"]),
                buffer_mb=pick([4_000, 200, 8]), latency_ns=2_000, power_w=pick([300, 1_500]),
                price_usd=pick([20_000, 60_000]), roles="dci", **src))
        fabric_speeds = sorted({g for x in switches if x["roles"] != "dci" for g in speeds_of(x["port_modes"])})
        up_speeds = [g for g in fabric_speeds if g >= g0] or fabric_speeds
        cage_speeds = {max(speeds_of(x["port_modes"])) for x in switches if x["roles"] != "dci"}
        base_cage = max(speeds_of(switches[0]["port_modes"]))
        optics = []
        for i in range(pick([2, 3, 1, 4])):
            kind = pick(["dac", "aoc", "transceiver"])
            if i == 0 and often():  # reaches a node at the NIC speed
                gbps, reach = g0, pick([3, 30, 100])
            elif i == 1 and often():  # reaches a spine and a core
                gbps, reach = pick(up_speeds), pick([500, 100])
            else:
                gbps, reach = pick(fabric_speeds), pick([3, 30, 100, 500])
            # links an item carries: what fills a drawn switch's cage at this speed (a twin-port module or a
            # splitter where the cage is faster)
            fills = sorted({c // gbps for c in cage_speeds if c % gbps == 0}) or [1]
            base_fill = base_cage // gbps if base_cage % gbps == 0 else None
            k = base_fill if i < 2 and base_fill and often() else pick(fills if twin_port else fills[:1])
            if i == 0 and k > 1 and often(2):  # a twin-port module at the NIC speed also joins DCI routers
                kind, reach = "transceiver", max(reach, 100)
            optics.append(dict(name=f"opt{i}", gbps=gbps, kind=kind, reach_m=reach, power_w=pick([0.1, 8.0]),
                               price_usd=pick([100, 600]), links_per_module=k, **src))
        sites = []
        for i in range(draw(st.integers(2 if multi_site else 1, max_sites))):
            sites.append(dict(name=f"s{i}", power_mw=pick([0.1, 0.3, 1.0, 0.04]), pue=pick([1.1, 1.4]),
                              max_nodes=draw(st.integers(1, 8)), fixed_cost_usd=pick([0, 100_000, 400_000]),
                              power_cost_usd_per_mw=pick([0, 1e6, 3e6]), energy_usd_per_mwh=pick([0, 80]),
                              status=pick(["candidate"] * 6 + ["required", "excluded"])))
        if all(x["status"] == "excluded" for x in sites):
            sites[0]["status"] = "candidate"
        open_to = [x for x in sites if x["status"] != "excluded"]
        capacity = gpn * sum(x["max_nodes"] for x in open_to)
        largest = gpn * max(x["max_nodes"] for x in open_to)
        required = sum(x["status"] == "required" for x in open_to)
        top = capacity if often(9) else capacity + gpn  # sometimes more than all sites hold
        spread = len(open_to) > 1 and top > largest and (multi_site or often(1))  # more than one site holds
        if spread and not any(x["roles"] == "dci" for x in switches):
            switches.append(dict(model="dci_extra", family=families[0], port_modes="8x800,16x400,32x200", buffer_mb=4_000,
                                 latency_ns=2_000, power_w=300, price_usd=40_000, roles="dci", **src))
        routes = []
        has_dci = any(x["roles"] == "dci" for x in switches)
        for a, b in itertools.combinations([x["name"] for x in sites], 2):
            # routes without any DCI router crash the model build (see tests/test_oracle.py); at most one
            # route more than a tree needs, so the wave search stays small
            if has_dci and len(routes) < len(sites) and often(4):
                routes.append(dict(site_a=a, site_b=b, distance_km=pick([5, 40, 90, 150, 400]),
                                   fiber_pairs=pick([1, 2]), fiber_cost_usd_per_pair_km=pick([0, 50, 500]),
                                   amplifier_spacing_km=pick([40, 80]),
                                   srlg=pick([None, None, None, "duct"]) if resilience else None))
        project = {"gpus_required": draw(st.integers(largest + 1, top) if spread else st.integers(1, largest)),
                   "node_type": "gpu_node", "max_oversubscription": pick([1, 1, 1.5, 2, 3]),
                   "dci_ratio": pick([0.125, 0, 0.0625, 0.25][: 3 if len(sites) > 3 else 4]),
                   "buffer_bdp_factor": pick([1, 0, 2]),
                   "horizon_years": pick([0, 0, 3]), "cable_m_node_leaf": pick([2, 3]),
                   "cable_m_leaf_spine": pick([10, 50]), "cable_m_spine_core": pick([50, 150]),
                   "cable_m_dci_attach": pick([3, 3, 60]),
                   "support_networks": False, "fiber_plant": False}
        if budget and not often(3):
            project["budget_usd"] = pick([6e5, 2e6, 4e6])
        if not often(3):
            project["max_fabric_latency_us"] = pick([2.2, 3.1, 5.3, 8.0])
        if not often(3):
            project["max_site_rtt_ms"] = pick([0.5, 1.1, 4.0])
        if not often(4):
            project["protocols_allowed"] = protocols[0]["name"]
        if often(2):  # mostly without the one-switch designs, to reach more tiers
            project["topologies_allowed"] = pick(["leaf_spine", "fat_tree_3", "rail_optimized", "fat_tree_3",
                                                  "leaf_spine,fat_tree_3", "rail_optimized,fat_tree_3", "rail_only",
                                                  "leaf_mesh", "leaf_spine,rail_optimized,rail_only"])
        if resilience and not often(5):
            project["route_diversity"] = True
        if resilience and not often(4):
            project["one_dci_router_model"] = True
        if resilience and not often(4):
            project["power_headroom"] = pick([0.1, 0.25])
        if min_latency and not often(5):
            project["objective"] = "min_latency"
        if not often(3):
            project["min_sites"] = draw(st.integers(1, len(open_to)))
        if not often(3):
            project["max_sites"] = draw(st.integers(max(1, required, project.get("min_sites", 1)), len(open_to)))
        return {"project": project, "sites": sites, "routes": routes, "node_types": [node], "switches": switches,
                "optics": optics, "coherent": coherent,
                "amplifiers": [dict(name="amp", power_w=100, price_usd=pick([0, 15_000]), **src)],
                "protocols": protocols}

    return build()


def tiny_training_workbooks(objective: str):
    """A hypothesis strategy of tiny one-site workbooks (tiny_workbooks) with a workload under a training
    objective: tp a divisor of the node's GPUs, pp 1-2, ep 1-2, 2-16 sequences a batch; gpus_required and
    gpus_max two of the counts the parallelism allows, mostly within the site (gpus_max mostly the largest that
    fits); oversubscription up to 1-4; GPU peak and NVLink bandwidth,
    protocol efficiency and jitter, in-network reduction drawn; no spares (sized after the solve, which does
    not see them)."""
    from hypothesis import strategies as st

    @st.composite
    def build(draw):
        book = draw(tiny_workbooks(max_sites=1, min_latency=False))

        def pick(options):
            return draw(st.sampled_from(options))

        node = book["node_types"][0]
        node.update(gpu_tflops=pick([100, 1000]), scaleup_gbps=pick([900, 3600]))
        for proto in book["protocols"]:
            proto.update(efficiency=pick([0.8, 0.9, 0.95]), jitter_us=pick([0, 0.5, 5]))
        for switch in book["switches"]:
            switch["in_network_reduction"] = pick([False, True])
        tp, pp, ep = pick([t for t in (1, 2, 4, 8) if node["gpus_per_node"] % t == 0]), pick([1, 2]), pick([1, 2])
        sequences = pick([2, 4, 8, 16])
        counts = [dp * tp * pp for dp in range(1, sequences + 1) if sequences % dp == 0 and dp % ep == 0]
        if not counts:
            ep, counts = 1, [dp * tp * pp for dp in range(1, sequences + 1) if sequences % dp == 0]
        fit = [c for c in counts if c <= node["gpus_per_node"] * book["sites"][0]["max_nodes"]] or counts[:1]
        least = pick(fit)
        book["project"].update(objective=objective, gpus_required=least, max_oversubscription=pick([1, 2, 3, 4]),
                               gpus_max=pick([max(fit), max(fit)] + [c for c in counts if c >= least]),
                               spares_optics_share=0, spares_cables_share=0, spares_switch_per=0)
        book["workload"] = {"model_params_billion": pick([4, 30]), "training_tokens": 1e10,
                            "global_batch_tokens": sequences * 2048, "seq_len": 2048, "layers": 4,
                            "hidden_size": 1024, "tp": tp, "pp": pp, "ep": ep, "overlap": pick([0, 0.5]),
                            "amortization_years": pick([1, 4])}
        return book

    return build()

