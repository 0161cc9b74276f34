"""``designer bench``: how fast and how good the designer is, measured against the limits that exist.

Issue 5. Every figure comes from one run and is printed next to its target with met / missed:

- (a) the default example end to end (``designer solve`` in a fresh process) against a bare
  ``import pyomo.environ, pandas, openpyxl, networkx, highspy`` in a fresh process;
- (b) per phase times of ``solve()`` (``solution["timings"]``), (build + extract) / HiGHS's own
  time, and our ``solve()`` call against plain highspy on the exported MPS (same gap and limit);
- (c) time to a 1% gap and to proven optimality (gap 1e-4) and the peak memory (ru_maxrss of the
  child process that solved) along a series of synthetic instances of growing size;
- (d) the cost of our design against a greedy planner written here (cheapest sites by cost per MW
  first, the cheapest feasible fabric mode per site, straightforward sizing and inter-site links);
- (e) our time against the brute-force oracle (tests/oracle.py) on tiny instances of 2..6 sites.

Instances are deterministic (a seeded ``random.Random`` per instance) and are written as planner
workbooks with ``designer.xlsx.write_workbook`` and read back with ``designer.workbook.load_inputs``,
so the whole input path is exercised. Each solve runs in a fresh child process
(``python -m designer.tools.bench --child ...``) with a HiGHS time limit and a wall-clock limit; the parent
reads its peak memory with ``os.wait4``. Outputs: the table on stdout and ``bench.csv`` (one row per
figure) in the output folder, with the instance workbooks and exported models under ``instances/``.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import math
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_WORKBOOK = ROOT / "data" / "examples" / "default.xlsx"
QUICK_WORKBOOK = ROOT / "data" / "examples" / "superpod-h100.xlsx"
ORACLE_PATH = ROOT / "tests" / "oracle.py"
BARE_IMPORT = "import pyomo.environ, pandas, openpyxl, networkx, highspy"
CSV_COLUMNS = ["section", "instance", "sites", "gpus", "switch_models", "figure", "value", "unit", "target",
               "verdict", "note"]
NODE_TYPE = "DGX B200"


@dataclass(frozen=True)
class Size:
    """One synthetic instance of the size series."""

    sites: int
    gpus: int
    switches: int

    @property
    def name(self) -> str:
        return f"s{self.sites:02d}-g{self.gpus}-sw{self.switches}"


@dataclass(frozen=True)
class Plan:
    """What one bench run measures."""

    sizes: tuple[Size, ...]
    oracle_sites: tuple[int, ...]
    time_limit: float  # HiGHS time limit per solve (s)
    oracle_wall: float  # wall-clock cap of one brute-force run (s)
    example: Path  # workbook of part (a)


FULL = Plan(sizes=(Size(2, 1_024, 10), Size(4, 8_192, 20), Size(8, 32_768, 30), Size(16, 131_072, 40),
                   Size(32, 400_000, 50), Size(50, 1_000_000, 60)),
            oracle_sites=(2, 3, 4, 5, 6), time_limit=120.0, oracle_wall=600.0, example=DEFAULT_WORKBOOK)
QUICK = Plan(sizes=(Size(2, 1_024, 10), Size(3, 2_048, 12)), oracle_sites=(2, 3), time_limit=20.0,
             oracle_wall=20.0, example=QUICK_WORKBOOK)


@dataclass
class Row:
    section: str
    instance: str
    figure: str
    value: object
    unit: str = ""
    target: str = ""
    verdict: str = ""
    note: str = ""
    sites: object = ""
    gpus: object = ""
    switch_models: object = ""


@dataclass
class Table:
    rows: list[Row] = field(default_factory=list)

    def add(self, *args, **kwargs) -> Row:
        row = Row(*args, **kwargs)
        self.rows.append(row)
        print(format_row(row), flush=True)
        return row


# --- synthetic instances --------------------------------------------------------------------------

def synth_switches(count: int, seed: int = 7) -> list[dict]:
    """The default switch catalog, then scaled variants of it until there are ``count`` models.

    Variant k of a base model: price x f, power x (1/f) x (0.95..1.05), latency x (0.8..1.3), with f in
    0.8..1.25 from a seeded generator: cheaper variants run hotter, so variants trade cost against power
    and latency rather than dominating their base. Port modes, buffers and roles stay the base's."""
    from designer.inputs.workbook import load_catalog

    base = load_catalog()["switches"].reset_index().to_dict("records")
    rng = random.Random(seed)
    out = [dict(r) for r in base][:count]
    k = 0
    while len(out) < count:
        b = base[k % len(base)]
        k += 1
        f = rng.uniform(0.8, 1.25)
        row = dict(b)
        row["model"] = f"{b['model']}-v{k}"
        row["price_usd"] = round(float(b["price_usd"]) * f, -2)
        row["power_w"] = round(float(b["power_w"]) / f * rng.uniform(0.95, 1.05))
        row["latency_ns"] = round(float(b["latency_ns"]) * rng.uniform(0.8, 1.3))
        row["source"] = f"bench variant of {b['model']} (price x{f:.3f}, power and latency scaled)"
        out.append(row)
    return out


def haversine_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h))


def neighbour_routes(names: list[str], coords: list[tuple[float, float]], k: int, rng: random.Random,
                     pairs_for) -> list[dict]:
    """Routes from each site to its k nearest neighbours (by lat/lon distance, fiber 1.25 x the great
    circle), then the shortest links that join the components until every site is reachable."""
    n = len(names)
    dist = {(i, j): 1.25 * haversine_km(coords[i], coords[j]) for i in range(n) for j in range(n) if i < j}
    d = lambda i, j: dist[min(i, j), max(i, j)]  # noqa: E731
    edges = set()
    for i in range(n):
        for j in sorted((j for j in range(n) if j != i), key=lambda j: d(i, j))[:k]:
            edges.add((min(i, j), max(i, j)))
    comp = list(range(n))

    def find(i):
        while comp[i] != i:
            comp[i] = comp[comp[i]]
            i = comp[i]
        return i

    for i, j in edges:
        comp[find(i)] = find(j)
    for i, j in sorted(dist, key=dist.get):
        if find(i) != find(j):
            edges.add((i, j))
            comp[find(i)] = find(j)
    return [{"site_a": names[i], "site_b": names[j], "distance_km": round(d(i, j), 1),
             "fiber_pairs": pairs_for(i, j), "fiber_cost_usd_per_pair_km": round(rng.uniform(10, 60), 1),
             "amplifier_spacing_km": 80} for i, j in sorted(edges)]


def synth_workbook(size: Size) -> dict:
    """Sheets of one size-series instance: ``size.sites`` candidate sites in a ~450 x 600 km region, power
    and space such that no site holds more than 3/4 of the job and all of them about twice the job, routes
    to the 3 nearest neighbours with fiber for a site's whole inter-site need, ``size.switches`` models."""
    rng = random.Random(1000 * size.sites + size.switches)
    gpn, node_kw = 8, 14.3  # DGX B200 (default catalog)
    job = -(-size.gpus // gpn)
    weights = [rng.uniform(0.6, 1.4) for _ in range(size.sites)]
    scale = size.sites / sum(weights)
    names, coords, sites, cap = [], [], [], []
    for i, w in enumerate(weights):
        nodes = max(2, int(min(0.75 * job, 2.0 * job / size.sites * w * scale)))
        pue = round(rng.uniform(1.1, 1.4), 2)
        power_mw = round(nodes * node_kw * 1.12 * pue / 1e3, 3)
        names.append(f"site{i:02d}")
        coords.append((round(rng.uniform(36.0, 40.0), 3), round(rng.uniform(-86.0, -79.0), 3)))
        cap.append(nodes)
        sites.append({"name": names[-1], "power_mw": power_mw, "pue": pue,
                      "max_nodes": int(nodes * rng.uniform(0.9, 1.2)),
                      "fixed_cost_usd": round(power_mw * rng.uniform(0.2, 0.6) * 1e6, -3),
                      "power_cost_usd_per_mw": round(rng.uniform(6e6, 10e6), -3),
                      "energy_usd_per_mwh": round(rng.uniform(40, 80), 1),
                      "lat": coords[-1][0], "lon": coords[-1][1], "status": "candidate"})
    # a pair carries 32 x 800G = 25.6 Tb/s; dci_ratio 0.125 of 8 x 400G per node = 400 Gb/s per node
    pairs_for = lambda i, j: 4 + math.ceil(400 * max(cap[i], cap[j]) / 25_600 * rng.uniform(1.0, 2.0))  # noqa: E731
    routes = neighbour_routes(names, coords, 3, rng, pairs_for) if size.sites > 1 else []
    project = {"name": size.name, "gpus_required": size.gpus, "node_type": NODE_TYPE, "objective": "min_cost",
               "max_fabric_latency_us": 5.0, "max_oversubscription": 1, "dci_ratio": 0.125}
    return {"project": project, "sites": sites, "routes": routes, "switches": synth_switches(size.switches)}


def tiny_workbook(n_sites: int) -> dict:
    """A brute-force-sized instance: ``n_sites`` sites of 3..5 small nodes, two small switches and one DCI
    router, one coherent type, routes to the 2 nearest neighbours; the job needs about half of all nodes."""
    rng = random.Random(500 + n_sites)
    src = {"source": "bench oracle instance"}
    names = [f"t{i}" for i in range(n_sites)]
    coords = [(round(rng.uniform(37.0, 39.0), 3), round(rng.uniform(-80.0, -77.0), 3)) for _ in names]
    sites = [{"name": s, "power_mw": round(rng.uniform(0.04, 0.08), 3), "pue": round(rng.uniform(1.1, 1.4), 2),
              "max_nodes": rng.randint(4, 8), "fixed_cost_usd": round(rng.uniform(50e3, 400e3), -3),
              "power_cost_usd_per_mw": round(rng.uniform(1e6, 3e6), -3), "energy_usd_per_mwh": 60,
              "lat": lat, "lon": lon, "status": "candidate"} for s, (lat, lon) in zip(names, coords)]
    routes = neighbour_routes(names, coords, 2, rng, lambda i, j: 1) if n_sites > 1 else []
    node = {"name": "tiny-node", "gpus_per_node": 8, "nics_per_node": 2, "nic_gbps": 400, "planes": 1,
            "node_power_kw": 6.0, "node_price_usd": 150_000, "nvlink_latency_ns": 300, **src}
    switches = [
        {"model": "sw8", "family": "ethernet", "port_modes": "8x400", "buffer_mb": 16, "latency_ns": 400,
         "power_w": 150, "price_usd": 6_000, "roles": "leaf,spine,core", **src},
        {"model": "sw16", "family": "ethernet", "port_modes": "8x800,16x400", "buffer_mb": 32, "latency_ns": 500,
         "power_w": 300, "price_usd": 14_000, "roles": "leaf,spine,core", **src},
        {"model": "dci", "family": "ethernet", "port_modes": "8x800,16x400", "buffer_mb": 4_000, "latency_ns": 2_000,
         "power_w": 600, "price_usd": 40_000, "roles": "dci", **src},
    ]
    optics = [
        {"name": "dac400", "gbps": 400, "kind": "dac", "reach_m": 3, "power_w": 0.1, "price_usd": 150,
         "links_per_module": 1, **src},
        {"name": "dr4-400", "gbps": 400, "kind": "transceiver", "reach_m": 500, "power_w": 8, "price_usd": 600,
         "links_per_module": 1, **src},
        {"name": "dr8-800", "gbps": 800, "kind": "transceiver", "reach_m": 500, "power_w": 15, "price_usd": 1_100,
         "links_per_module": 1, **src},
    ]
    coherent = [{"name": "zr400", "gbps": 400, "reach_km": 1000, "channel_ghz": 75, "power_w": 20,
                 "price_usd": 6_000, **src},
                {"name": "zr800", "gbps": 800, "reach_km": 1000, "channel_ghz": 150, "power_w": 28,
                 "price_usd": 11_000, **src}]
    protocols = [{"name": "rocev2", "switch_family": "ethernet", "nic_latency_ns": 800, "efficiency": 0.9,
                  "lossless": True, "jitter_rank": 2, **src}]
    total = sum(s["max_nodes"] for s in sites)
    largest = max(s["max_nodes"] for s in sites)
    need = max(largest + 1, total // 2) if n_sites > 1 else largest
    project = {"name": f"oracle-{n_sites}", "gpus_required": 8 * need, "node_type": "tiny-node",
               "objective": "min_cost", "max_oversubscription": 1, "dci_ratio": 0.125}
    return {"project": project, "sites": sites, "routes": routes, "node_types": [node], "switches": switches,
            "optics": optics, "coherent": coherent,
            "amplifiers": [{"name": "amp", "power_w": 100, "price_usd": 10_000, **src}], "protocols": protocols}


# --- the greedy planner (d) -----------------------------------------------------------------------

@dataclass
class Greedy:
    """A design a planner could size by hand; ``cost`` is capex + energy like the model's objective."""

    cost: float | None
    sites: dict = field(default_factory=dict)  # name -> {nodes, mode, cost, it_w}
    links: list = field(default_factory=list)  # (a, b, coherent, waves, pairs)
    reason: str = ""
    seconds: float = 0.0


def _ceil(a, b):
    return -(-a // b)


def fabric_size(mode, n, nics: int, planes: int):
    """(cost USD, IT W without nodes, fits) of mode ``mode`` for node counts ``n`` (int numpy array), by
    DESIGN.md section 4: leaves hold the endpoints, the least spine count dividing a leaf's uplinks that
    holds every uplink, aggregation and core switches holding the uplinks below, a cable per link or a
    transceiver per link end; counts are per plane (per rail for rail_only) and multiplied."""
    import numpy as np

    rails = nics // planes
    copies = planes * (rails if mode.topology == "rail_only" else 1)
    fits = n <= mode.node_cap
    zero = np.zeros_like(n)
    if mode.tiers == 1:
        leaves = np.ones_like(n)
    elif mode.topology == "rail_optimized":
        leaves = rails * _ceil(n, mode.d1)  # a leaf per rail per scalable unit of d1 nodes
    else:
        leaves = _ceil(n * (1 if mode.topology == "rail_only" else rails), mode.d1)
    mid, top, links = zero, zero, [nics * n]
    if mode.topology == "leaf_mesh" and mode.tiers == 2:
        leaves = np.maximum(leaves, 2)
        links.append(copies * leaves * (mode.u1 // 2))
    elif mode.tiers == 2:
        divisors = np.array([j for j in range(1, mode.u1 + 1) if mode.u1 % j == 0])
        pick = np.searchsorted(divisors, _ceil(mode.u1 * leaves, mode.spine_ports))
        fits = fits & (pick < len(divisors))
        mid = divisors[np.minimum(pick, len(divisors) - 1)]
        links.append(copies * leaves * mode.u1)
    elif mode.tiers == 3:
        mid = _ceil(mode.u1 * leaves, mode.d2)
        top = _ceil(mode.u2 * mid, mode.core_ports)
        links += [copies * leaves * mode.u1, copies * mid * mode.u2]
    return leaves, mid, top, links, copies, fits


def fabric_cost_watts(mode, n, nics: int, planes: int, prices: dict, watts: dict):
    leaves, mid, top, links, copies, fits = fabric_size(mode, n, nics, planes)
    cost = copies * (prices[mode.leaf] * leaves + (prices[mode.spine] * mid if mode.spine else 0)
                     + (prices[mode.core] * top if mode.core else 0))
    power = copies * (watts[mode.leaf] * leaves + (watts[mode.spine] * mid if mode.spine else 0)
                      + (watts[mode.core] * top if mode.core else 0))
    for cable, count in zip(mode.cables, links):
        items = count if cable.kind in ("dac", "aoc") else _ceil(2 * count, cable.links_per_module)
        cost = cost + cable.unit_price * items
        power = power + cable.unit_power_w * items
    return cost.astype(float), power.astype(float), fits


def route_capacities(opened: list, parent: dict, need: dict, routes: dict, co) -> dict | str:
    """Gb/s per route (frozenset of its two sites): each open site's need on the route to its parent,
    then any site still short tops up its routes to open sites (tree routes first, then the shortest),
    each up to what its fiber carries with the fastest coherent type. A reason string when it cannot."""
    def most(e):
        r = routes[e]
        return max(r["pairs"] * int(4800.0 // float(co.loc[c, "channel_ghz"])) * float(co.loc[c, "gbps"])
                   for c in r["types"])

    cap = {}
    for s in opened[1:]:
        if parent.get(s) not in opened:
            return f"{s} has no route to the open sites"
        e = frozenset((s, parent[s]))
        cap[e] = min(need[s], most(e))
    open_set = set(opened)
    for s in opened:
        short = need[s] - sum(c for e, c in cap.items() if s in e)
        if short <= 1e-9:
            continue
        mine = [e for e in routes if s in e and e <= open_set]
        mine.sort(key=lambda e: (e not in cap, routes[e]["dist"]))
        for e in mine:
            add = min(short, most(e) - cap.get(e, 0.0))
            if add > 1e-9:
                cap[e] = cap.get(e, 0.0) + add
                short -= add
        if short > 1e-6:
            return f"the fiber at {s} cannot carry its {need[s]:.0f} Gb/s inter-site need"
    return cap


def greedy_plan(inputs, modes=None, max_rounds: int = 30) -> Greedy:
    """Cheapest sites by cost per MW first (each next one joined by a route to those already open), each
    filled as far as its power and space allow with the mode that holds the most nodes, then the cheapest
    mode for the nodes placed; a tree of routes (each joining site to the open site nearest to it) sized
    at dci_ratio of the joining site's NIC bandwidth, topped up where a site's routes fall short, the
    cheapest coherent type per route, the cheapest single DCI router model per site. Power taken by the
    DCI equipment is reserved and the plan redone until every site fits."""
    import numpy as np

    from designer.inputs.catalog import port_modes, roles
    from models.modes import enumerate_modes

    start = time.perf_counter()
    p = inputs.project
    node = inputs.node_types.loc[p["node_type"]]
    gpn, nics, planes = int(node["gpus_per_node"]), int(node["nics_per_node"]), int(node["planes"])
    node_w, node_price = float(node["node_power_kw"]) * 1e3, float(node["node_price_usd"])
    node_bw = nics * float(node["nic_gbps"])
    modes = enumerate_modes(inputs).modes if modes is None else modes
    if not modes:
        return Greedy(None, reason="no fabric mode", seconds=time.perf_counter() - start)
    sw = inputs.switches
    prices = {m: float(sw.loc[m, "price_usd"]) for m in sw.index}
    watts = {m: float(sw.loc[m, "power_w"]) for m in sw.index}
    sites = inputs.sites
    years = float(p.get("horizon_years") or 0.0)
    job = _ceil(int(p["gpus_required"]), gpn)
    usable = [s for s in sites.index if sites.loc[s, "status"] != "excluded"]

    def usd_per_it_w(s):  # facility power capex and energy over the horizon, per IT watt
        r = sites.loc[s]
        return float(r["pue"]) / 1e6 * (float(r["power_cost_usd_per_mw"])
                                        + years * 8760.0 * float(r["energy_usd_per_mwh"]))

    def per_mw(s):
        r = sites.loc[s]
        return float(r["fixed_cost_usd"]) / float(r["power_mw"]) + usd_per_it_w(s) * 1e6 / float(r["pue"])

    # routes a link may use: reach of some coherent type, and the RTT limit
    co = inputs.coherent
    max_rtt = p.get("max_site_rtt_ms")
    routes = {}
    for _, r in inputs.routes.iterrows():
        a, b, dist = str(r["site_a"]), str(r["site_b"]), float(r["distance_km"])
        rtt = 2 * 4.9 * dist / 1e3
        types = [c for c in co.index if float(co.loc[c, "reach_km"]) >= dist]
        if a in usable and b in usable and types and (max_rtt is None or rtt <= max_rtt):
            routes[frozenset((a, b))] = {"a": a, "b": b, "dist": dist, "rtt": rtt, "types": types,
                                         "pairs": int(r["fiber_pairs"]),
                                         "amps": max(0, math.ceil(dist / float(r["amplifier_spacing_km"])) - 1),
                                         "pair_usd": float(r["fiber_cost_usd_per_pair_km"]) * dist}
    amp_usd = float(inputs.amplifiers["price_usd"].min()) if len(inputs.amplifiers) else 0.0
    speeds = {int(g) for g in co["gbps"]}
    dci = [m for m in sw.index if "dci" in roles(sw.loc[m, "roles"])]
    routers = [m for m in dci if speeds <= set(port_modes(sw.loc[m, "port_modes"]))] or dci

    # opening order: required sites, then the cheapest per MW joined to the open ones
    required = [s for s in usable if sites.loc[s, "status"] == "required"]
    order, rest = list(required), sorted((s for s in usable if s not in required), key=per_mw)
    while rest:
        joined = [s for s in rest if not order or any(frozenset((s, o)) in routes for o in order)]
        if not joined:
            break
        order.append(joined[0])
        rest.remove(joined[0])
    parent = {}
    for k, s in enumerate(order[1:], 1):
        near = [o for o in order[:k] if frozenset((s, o)) in routes]
        parent[s] = min(near, key=lambda o: routes[frozenset((s, o))]["dist"]) if near else None

    limit = {s: min(int(sites.loc[s, "max_nodes"]), job) for s in order}
    top_n = max(limit.values(), default=0)
    grid = np.arange(1, top_n + 1, dtype=np.int64)
    reserve = {s: 0.0 for s in order}  # IT watts kept for DCI routers and coherent modules
    sized = [fabric_cost_watts(mode, grid, nics, planes, prices, watts) for mode in modes]
    for _round in range(max_rounds):
        # most nodes each site holds in each mode within power and space
        budget = np.array([max(0.0, float(sites.loc[s, "power_mw"]) * 1e6 / float(sites.loc[s, "pue"]) - reserve[s])
                           for s in order])
        most = np.zeros((len(modes), len(order)), dtype=np.int64)
        for i, (_cost, w, fits) in enumerate(sized):
            total = np.where(fits, node_w * grid + w, np.inf)
            total = np.minimum.accumulate(total[::-1])[::-1]  # most nodes n with total(n') <= budget, n' >= n
            most[i] = np.searchsorted(total, budget * (1 + 1e-12), side="right")
        cap = {s: min(limit[s], int(most[:, k].max())) for k, s in enumerate(order)}
        placed, left = {}, job
        for s in order:
            if left <= 0:
                break
            if cap[s] > 0:
                placed[s] = min(cap[s], left)
                left -= placed[s]
        if left > 0:
            return Greedy(None, reason=f"the sites cannot hold {job} nodes", seconds=time.perf_counter() - start)
        opened = [s for s in order if s in placed]
        if p.get("max_sites") is not None and len(opened) > int(p["max_sites"]):
            return Greedy(None, reason="more sites than max_sites", seconds=time.perf_counter() - start)
        plan = {}
        for k, s in enumerate(order):
            if s not in placed:
                continue
            n = placed[s]
            best = None
            room = budget[k] * (1 + 1e-12)
            for i, mode in enumerate(modes):
                if most[i, k] < n or not sized[i][2][n - 1] or node_w * n + sized[i][1][n - 1] > room:
                    continue
                c, w = float(sized[i][0][n - 1]), float(sized[i][1][n - 1])
                total = c + usd_per_it_w(s) * (w + node_w * n)
                if best is None or total < best[0]:
                    best = (total, mode.id, c, w)
            if best is None:
                return Greedy(None, reason=f"no mode holds {n} nodes at {s}", seconds=time.perf_counter() - start)
            plan[s] = {"nodes": n, "mode": best[1], "fabric_usd": best[2], "it_w": best[3] + node_w * n}
        links, dci_w, dci_usd, fiber_usd = [], {s: 0.0 for s in opened}, {s: 0.0 for s in opened}, 0.0
        if len(opened) > 1:
            need = {s: float(p["dci_ratio"]) * node_bw * plan[s]["nodes"] for s in opened}
            cap_r = route_capacities(opened, parent, need, routes, co)
            if isinstance(cap_r, str):
                return Greedy(None, reason=cap_r, seconds=time.perf_counter() - start)
            got = {s: 0.0 for s in opened}
            bdp = {s: 0.0 for s in opened}
            for e, gbps_need in cap_r.items():
                r = routes[e]
                choice = None
                for c in r["types"]:
                    gbps = float(co.loc[c, "gbps"])
                    waves = max(1, math.ceil(gbps_need / gbps - 1e-9))
                    pairs = _ceil(waves, int(4800.0 // float(co.loc[c, "channel_ghz"])))
                    if pairs > r["pairs"]:
                        continue
                    usd = (2 * waves * float(co.loc[c, "price_usd"]) + pairs * (r["pair_usd"] + r["amps"] * amp_usd)
                           + waves * float(co.loc[c, "power_w"]) * (usd_per_it_w(r["a"]) + usd_per_it_w(r["b"])))
                    if choice is None or usd < choice[0]:
                        choice = (usd, c, waves, pairs, gbps)
                if choice is None:
                    return Greedy(None, reason=f"route {r['a']}-{r['b']} cannot carry {gbps_need:.0f} Gb/s",
                                  seconds=time.perf_counter() - start)
                _usd, c, waves, pairs, gbps = choice
                links.append((r["a"], r["b"], c, waves, pairs))
                fiber_usd += pairs * (r["pair_usd"] + r["amps"] * amp_usd)
                for end in (r["a"], r["b"]):
                    got[end] += waves * gbps
                    bdp[end] += waves * gbps * r["rtt"] / 8.0
                    dci_usd[end] += waves * float(co.loc[c, "price_usd"])
                    dci_w[end] += waves * float(co.loc[c, "power_w"])
            factor = float(p["buffer_bdp_factor"])
            for s in opened:
                options = []
                for k in routers:
                    pool = max(g * n for g, n in port_modes(sw.loc[k, "port_modes"]).items())
                    buf = float(sw.loc[k, "buffer_mb"])
                    count = max(math.ceil(2 * got[s] / pool - 1e-9),
                                math.ceil(factor * bdp[s] / buf - 1e-9) if buf > 0 else 0)
                    options.append((count * (prices[k] + watts[k] * usd_per_it_w(s)), count, k))
                if not options:
                    return Greedy(None, reason="no DCI router", seconds=time.perf_counter() - start)
                _usd, count, k = min(options)
                dci_usd[s] += count * prices[k]
                dci_w[s] += count * watts[k]
        over = [s for s in opened if dci_w[s] > reserve[s] + 1e-6]
        if over:  # reserve the DCI power and place again
            for s in over:
                reserve[s] = dci_w[s]
            continue
        total = fiber_usd
        for s in opened:
            r = sites.loc[s]
            it_w = plan[s]["it_w"] + dci_w[s]
            site_usd = (float(r["fixed_cost_usd"]) + node_price * plan[s]["nodes"] + plan[s]["fabric_usd"]
                        + dci_usd[s] + usd_per_it_w(s) * it_w)
            plan[s].update(cost=site_usd, it_w=it_w)
            total += site_usd
        budget_usd = p.get("budget_usd")
        if budget_usd is not None and total > float(budget_usd) * (1 + 1e-9):
            return Greedy(None, plan, links, reason="above budget_usd", seconds=time.perf_counter() - start)
        return Greedy(total, plan, links, seconds=time.perf_counter() - start)
    return Greedy(None, reason="DCI power reservation did not settle", seconds=time.perf_counter() - start)


# --- child processes ------------------------------------------------------------------------------

def child_solve(workbook: str, gap: float, limit: float, export: str | None, progress: str) -> dict:
    """One solve of one workbook (in a fresh process): status, gap, objective, timings, model size."""
    from designer.errors import Infeasible, NoSolution
    from designer.solve.run import SolveOptions, solve
    from designer.inputs.workbook import load_inputs

    log = open(progress, "a", encoding="utf-8")  # noqa: SIM115 - kept open for the whole child

    def say(msg):
        log.write(f"{time.perf_counter() - t0:9.2f} {msg}\n")
        log.flush()

    t0 = time.perf_counter()
    inputs = load_inputs(workbook)
    out = {"read_s": time.perf_counter() - t0}
    say("read and validated")
    start = time.perf_counter()
    try:
        sol = solve(inputs, SolveOptions(time_limit=limit, mip_gap=gap, export_model=export, progress=say))
    except NoSolution as exc:
        return {**out, "status": "no_solution", "note": str(exc), "call_s": time.perf_counter() - start}
    except Infeasible as exc:
        return {**out, "status": "infeasible", "note": exc.reason, "call_s": time.perf_counter() - start}
    out.update(call_s=time.perf_counter() - start, status=sol["status"], gap=sol.get("mip_gap"),
               objective=sol.get("objective_usd"), timings=sol.get("timings", {}),
               sites_open=sol["totals"].get("sites_open"), modes=sol.get("modes", {}).get("kept"))
    text = Path(progress).read_text(encoding="utf-8")
    found = re.search(r"(\d+) variables, (\d+) constraints", text)
    if found:
        out.update(variables=int(found.group(1)), constraints=int(found.group(2)))
    return out


def child_highspy(mps: str, gap: float, limit: float) -> dict:
    """highspy alone on an exported model: readModel + run with the same gap and time limit."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("mip_rel_gap", gap)
    h.setOptionValue("time_limit", float(limit))
    start = time.perf_counter()
    h.readModel(mps)
    h.run()
    seconds = time.perf_counter() - start
    info = h.getInfo()
    return {"seconds": seconds, "status": h.modelStatusToString(h.getModelStatus()),
            "objective": info.objective_function_value, "gap": info.mip_gap, "highs_run_s": h.getRunTime()}


def load_oracle():
    """tests/oracle.py as a module, or None when it is not there."""
    if not ORACLE_PATH.exists():
        return None
    spec = importlib.util.spec_from_file_location("bench_oracle", ORACLE_PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def child_oracle(workbook: str) -> dict:
    """The brute-force optimum of a tiny workbook (tests/oracle.py ``solve(inputs)``)."""
    from designer.inputs.workbook import load_inputs

    oracle = load_oracle()
    inputs = load_inputs(workbook)
    start = time.perf_counter()
    answer = oracle.solve(inputs)
    return {"seconds": time.perf_counter() - start, "cost": None if answer is None else answer.cost}


CHILDREN = {"solve": child_solve, "highspy": child_highspy, "oracle": child_oracle}


@dataclass
class ChildResult:
    data: dict
    wall_s: float
    peak_mb: float
    killed: bool
    error: str = ""
    last_phase: str = ""


def run_child(kind: str, args: list, wall: float, progress: Path | None = None) -> ChildResult:
    """Run CHILDREN[kind](*args) in a fresh Python process; kill its process group after ``wall`` s.
    Peak memory is the child's own ru_maxrss, read with os.wait4 when it ends."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        log = Path(tmp) / "stderr.txt"
        cmd = [sys.executable, "-m", "designer.tools.bench", "--child", kind, json.dumps(args), str(out)]
        start = time.perf_counter()
        with open(log, "wb") as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=ROOT, start_new_session=True)
            killed = threading.Event()

            def kill():
                killed.set()
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

            timer = threading.Timer(wall, kill)
            timer.start()
            try:
                _pid, status, usage = os.wait4(proc.pid, 0)
            finally:
                timer.cancel()
            proc.returncode = os.waitstatus_to_exitcode(status)
        wall_s = time.perf_counter() - start
        peak_mb = usage.ru_maxrss / 1024.0  # KiB on Linux
        phase = ""
        if progress is not None and progress.exists():
            lines = progress.read_text(encoding="utf-8").strip().splitlines()
            phase = lines[-1].strip() if lines else ""
        if killed.is_set():
            return ChildResult({}, wall_s, peak_mb, True, f"killed after {wall:.0f} s wall", phase)
        if proc.returncode != 0 or not out.exists():
            tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:]
            return ChildResult({}, wall_s, peak_mb, False, f"exit {proc.returncode}: {' '.join(tail)[:240]}", phase)
        return ChildResult(json.loads(out.read_text(encoding="utf-8")), wall_s, peak_mb, False, "", phase)


def child_main(argv: list[str]) -> int:
    kind, args, out = argv[0], json.loads(argv[1]), argv[2]
    import logging

    logging.getLogger("pyomo").setLevel(logging.CRITICAL)
    result = CHILDREN[kind](*args)
    Path(out).write_text(json.dumps(result, default=str), encoding="utf-8")
    return 0


# --- the table ------------------------------------------------------------------------------------

def fmt(value) -> str:
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if abs(value) >= 1e6:
            return f"{value:,.0f}"
        if abs(value) >= 100:
            return f"{value:.1f}"
        if abs(value) >= 1 or value == 0:
            return f"{value:.2f}"
        return f"{value:.3g}"
    return str(value)


def format_row(row: Row) -> str:
    value = fmt(row.value) + (f" {row.unit}" if row.unit else "")
    text = f"{row.section:<3} {row.instance:<20} {row.figure:<44} {value:>18}  {row.target:<22} {row.verdict:<7}"
    return (text + (f" {row.note}" if row.note else "")).rstrip()


def header() -> str:
    return (f"{'':<3} {'instance':<20} {'figure':<44} {'value':>18}  {'target':<22} {'verdict':<7} note\n"
            + "-" * 140)


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("met" if ok else "missed")


def write_csv(path: Path, rows: list[Row]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({c: (r.value if c == "value" else getattr(r, c)) for c in CSV_COLUMNS})


# --- the parts ------------------------------------------------------------------------------------

def designer_command() -> list[str]:
    exe = Path(sys.executable).parent / "designer"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "designer.cli"]


def part_a(table: Table, plan: Plan, work: Path) -> dict:
    """The example end to end against the bare import, each one fresh process, one measured run each
    (after one unmeasured import so that both find the files in the page cache)."""
    subprocess.run([sys.executable, "-c", BARE_IMPORT], check=True, cwd=ROOT)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", BARE_IMPORT], check=True, cwd=ROOT)
    bare = time.perf_counter() - start
    name = plan.example.name
    table.add("a", name, "bare import (fresh process)", bare, "s")
    out = work / f"solve-{plan.example.stem}"
    cmd = designer_command() + ["solve", str(plan.example), "-o", str(out), "--quiet", "--timings",
                                "--time-limit", f"{plan.time_limit:g}"]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    e2e = time.perf_counter() - start
    timings = {k: float(v) for k, v in re.findall(r"^\s+(\w+_s)\s+([\d.]+)\s*$", done.stderr, re.M)}
    design = {}
    if (out / "design.json").exists():
        design = json.loads((out / "design.json").read_text(encoding="utf-8"))
    status = design.get("status", f"exit {done.returncode}")
    note = "" if done.returncode == 0 else f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}"
    table.add("a", name, "designer solve end to end (fresh process)", e2e, "s", note=f"status {status}; {note}".strip("; "))
    for phase, seconds in timings.items():
        table.add("a", name, f"  phase {phase}", seconds, "s")
    ratio = e2e / bare
    table.add("a", name, "end to end / bare import", ratio, "x", "<= 1.5x", verdict(ratio <= 1.5))
    return {"timings": timings, "status": status, "gap": design.get("mip_gap"), "name": name}


def log_phases(text: str, call_s: float, read_s: float) -> dict:
    """Phase times of a solve from its progress log (time stamps since the child started), for runs that
    return no timings (no solution within the limit, or killed)."""
    marks = {}
    keys = (("read and validated", "read"), ("fabric modes kept", "modes"), ("model built", "built"),
            ("solving: cost", "solving"), ("HiGHS:", "highs"))
    for line in text.splitlines():
        stamp, _, msg = line.strip().partition(" ")
        for key, mark in keys:
            if key in msg:
                try:
                    marks.setdefault(mark, float(stamp))
                except ValueError:
                    pass
    read = marks.get("read", read_s)
    out = {}
    built = re.search(r"model built:.*\(([\d.]+) s\)", text)  # the build time the solve itself states
    if "built" in marks and built:
        out["build_s"] = float(built.group(1))
        out["modes_s"] = max(0.0, marks["built"] - read - out["build_s"])
    elif "modes" in marks:
        out["modes_s"] = marks["modes"] - read
        if "built" in marks:
            out["build_s"] = marks["built"] - marks["modes"]
    if "solving" in marks:
        out["solve_s"] = marks.get("highs", read + call_s) - marks["solving"]
    return out


def size_fields(size: Size) -> dict:
    return {"sites": size.sites, "gpus": size.gpus, "switch_models": size.switches}


def solve_status(res: ChildResult) -> tuple[str, str]:
    """(status, note) of a solve child."""
    if res.error:
        return ("killed" if res.killed else "error"), res.error + (f"; last phase: {res.last_phase}" if res.last_phase else "")
    d = res.data
    note = d.get("note", "").split(";")[0]
    if d.get("status") in ("optimal", "feasible"):
        gap = d.get("gap")
        note = f"gap {gap:.2%}" if isinstance(gap, (int, float)) else "gap n/a"
    return d.get("status", "?"), note


def part_bcd(table: Table, plan: Plan, work: Path, size: Size, largest: bool) -> dict:
    """Parts (b), (c) and (d) of one size-series instance."""
    from designer.inputs.workbook import load_inputs
    from designer.inputs.writer import write_workbook

    name = size.name
    wb = write_workbook(work / f"{name}.xlsx", synth_workbook(size))
    meta = size_fields(size)
    wall = 4 * plan.time_limit + (600 if plan is FULL else 60)
    mps = work / f"{name}.mps"
    runs = {}
    for label, gap in (("1%", 0.01), ("optimal", 1e-4)):
        progress = work / f"{name}-gap{gap:g}.log"
        progress.unlink(missing_ok=True)
        export = str(mps) if label == "1%" else None
        runs[label] = run_child("solve", [str(wb), gap, plan.time_limit, export, str(progress)], wall, progress)
    first, best = runs["1%"], runs["optimal"]
    result = {"name": name, "size": size}
    log = work / f"{name}-gap0.01.log"
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    found = re.search(r"(\d+) fabric modes kept.*\n.*model built: (\d+) variables, (\d+) constraints", text)
    if found:
        table.add("b", name, "model size (variables / constraints)", f"{found.group(2)} / {found.group(3)}",
                  note=f"{found.group(1)} modes kept", **meta)
    t = first.data.get("timings")
    source = ""
    if not t:  # no solution or killed: the phases from the progress log's time stamps
        t = log_phases(text, first.data.get("call_s", first.wall_s), first.data.get("read_s", 0.0))
        source = f"from the progress log ({solve_status(first)[0]}: no timings returned)"
    for phase in ("modes_s", "build_s", "solve_s", "highs_s", "extract_s"):
        if phase in t:
            table.add("b", name, f"phase {phase} (1% gap run)", float(t[phase]), "s", note=source, **meta)
    highs = t.get("highs_s") or t.get("solve_s")
    if highs and "build_s" in t:
        ratio = (t["build_s"] + t.get("extract_s", 0.0)) / highs
        target = "<= 0.3 (largest size)" if largest else "(<= 0.3 at largest)"
        table.add("b", name, "(build + extract) / HiGHS solve", ratio, "", target,
                  verdict(ratio <= 0.3) if largest else "", source, **meta)
        result["overhead"] = ratio
    ours = sum(float(t.get(k, 0.0)) for k in ("modes_s", "build_s", "solve_s", "extract_s"))
    if mps.exists() and ours > 0:
        hs = run_child("highspy", [str(mps), 0.01, plan.time_limit], wall)
        if hs.error:
            table.add("b", name, "highspy alone on the MPS", "error", note=hs.error, **meta)
        else:
            gap = hs.data["gap"]
            gap_text = f"{gap:.2%}" if isinstance(gap, (int, float)) and math.isfinite(gap) else "n/a"
            table.add("b", name, "highspy alone on the MPS (read + run)", hs.data["seconds"], "s",
                      note=f"{hs.data['status']}, gap {gap_text}; plain HiGHS options (the designer may set others, "
                           "e.g. presolve)", **meta)
            ratio = ours / hs.data["seconds"]
            table.add("b", name, "our solve() call / highspy alone", ratio, "x", "<= 1.2x", verdict(ratio <= 1.2),
                      note=f"our call = modes + build + solve + extract (MPS write excluded); "
                           f"ours {solve_status(first)[0]}", **meta)
            result["vs_highspy"] = ratio
    elif first.error:
        table.add("b", name, "1% gap run", solve_status(first)[0], note=solve_status(first)[1], **meta)
    peak = max(first.peak_mb, best.peak_mb)
    for label, res in runs.items():
        status, note = solve_status(res)
        seconds = res.data.get("call_s") if not res.error else res.wall_s
        target = ""
        ok = None
        if largest and label == "1%":
            target = "<= 60 s, gap <= 1%"
            gap = res.data.get("gap")
            ok = status in ("optimal", "feasible") and gap is not None and gap <= 0.01 + 1e-9 and seconds <= 60
        gap_log = work / f"{name}-gap{0.01 if label == '1%' else 1e-4:g}.log"
        phases = res.data.get("timings") or log_phases(
            gap_log.read_text(encoding="utf-8") if gap_log.exists() else "", seconds, res.data.get("read_s", 0.0))
        over = phases.get("solve_s", 0.0)
        if over > 1.25 * plan.time_limit:
            note += f"; HiGHS ran {over:.0f} s against its {plan.time_limit:g} s time limit"
        table.add("c", name, f"time to {'1% gap' if label == '1%' else 'optimal (gap 1e-4)'} (solve() call)",
                  float(seconds), "s", target, verdict(ok) if target else "", f"{status}; {note}".strip("; "), **meta)
        result[label] = (status, seconds, res.data.get("gap"))
    table.add("c", name, "peak memory (child ru_maxrss)", peak, "MB", "<= 4096 MB" if largest else "",
              verdict(peak <= 4096) if largest else "",
              f"1% run {first.peak_mb:.0f} MB (writes the MPS too), 1e-4 run {best.peak_mb:.0f} MB", **meta)
    result["peak_mb"] = peak
    result["ours"] = best if not best.error and best.data.get("objective") else first
    inputs = load_inputs(wb)
    result["saving"] = part_d(table, name, inputs, result["ours"], meta)
    return result


def part_d(table: Table, name: str, inputs, ours: ChildResult, meta: dict) -> float | None:
    g = greedy_plan(inputs)
    if g.cost is None:
        table.add("d", name, "greedy planner", "no design", note=f"{g.reason} ({g.seconds:.1f} s)", **meta)
        return None
    table.add("d", name, "greedy planner cost", g.cost / 1e6, "M$",
              note=f"{len(g.sites)} sites, {g.seconds:.1f} s", **meta)
    obj = ours.data.get("objective") if not ours.error else None
    if obj is None:
        status, note = solve_status(ours)
        table.add("d", name, "saving vs greedy", "n/a", "", ">= 0 %", "missed",
                  f"our solve returned no design ({status}: {note}) where the greedy planner found one", **meta)
        return None
    status, note = solve_status(ours)
    table.add("d", name, "our design cost", obj / 1e6, "M$", note=f"{status}; {note}", **meta)
    saving = 100.0 * (g.cost - obj) / g.cost
    ok = saving >= -1e-7
    table.add("d", name, "saving vs greedy", saving, "%", ">= 0 %", "met" if ok else "BUG",
              "" if ok else "our design is costlier than the greedy one: a bug to report", **meta)
    return saving


def part_e(table: Table, plan: Plan, work: Path, oracle_present: bool) -> tuple[list, list]:
    """Tiny instances: the oracle's time against ours, the costs compared, and the greedy saving."""
    from designer.inputs.workbook import load_inputs
    from designer.inputs.writer import write_workbook

    speedups, savings = [], []
    for n in plan.oracle_sites:
        name = f"oracle-{n}-sites"
        meta = {"sites": n, "gpus": "", "switch_models": 3}
        wb = write_workbook(work / f"{name}.xlsx", tiny_workbook(n))
        progress = work / f"{name}.log"
        progress.unlink(missing_ok=True)
        ours = run_child("solve", [str(wb), 1e-4, plan.time_limit, None, str(progress)],
                         4 * plan.time_limit + 60, progress)
        status, note = solve_status(ours)
        our_s = ours.data.get("call_s") if not ours.error else None
        table.add("e", name, "our solve() call, gap 1e-4", our_s if our_s is not None else status,
                  "s" if our_s is not None else "", note=f"{status}; {note}".strip("; "), **meta)
        if oracle_present:
            orc = run_child("oracle", [str(wb)], plan.oracle_wall)
            target = ">= 100x" if n == 6 else ""
            if orc.error:
                if orc.killed and our_s:
                    bound = plan.oracle_wall / our_s
                    table.add("e", name, "brute force / ours (oracle cut off)", f">= {bound:.0f}", "x", target,
                              verdict(bound >= 100) if target else "", f"oracle {orc.error}", **meta)
                    speedups.append((n, bound, True))
                else:
                    table.add("e", name, "brute-force oracle", "error", note=orc.error, **meta)
            else:
                table.add("e", name, "brute-force oracle", orc.data["seconds"], "s", **meta)
                if our_s:
                    ratio = orc.data["seconds"] / our_s
                    table.add("e", name, "brute force / ours", ratio, "x", target, verdict(ratio >= 100) if target else "",
                              **meta)
                    speedups.append((n, ratio, False))
                mine, theirs = ours.data.get("objective"), orc.data.get("cost")
                if mine is not None or theirs is not None:
                    same = mine is not None and theirs is not None and abs(mine - theirs) <= 1e-4 * abs(theirs) + 1
                    table.add("e", name, "our cost = oracle cost", "yes" if same else "NO", "", "equal",
                              "met" if same else "missed",
                              f"ours {fmt(mine)} USD, oracle {fmt(theirs)} USD", **meta)
        saving = part_d(table, name, load_inputs(wb), ours, meta)
        if saving is not None:
            savings.append(saving)
    if not oracle_present:
        table.add("e", "-", "brute force / ours", "skipped", note=f"{ORACLE_PATH.relative_to(ROOT)} not found")
    return speedups, savings


def run(out_dir: Path, quick: bool = False, time_limit: float | None = None) -> list[Row]:
    """The whole bench; returns the rows (also printed, and written to out_dir/bench.csv)."""
    plan = QUICK if quick else FULL
    if time_limit is not None:
        plan = Plan(plan.sizes, plan.oracle_sites, time_limit, plan.oracle_wall, plan.example)
    out_dir = Path(out_dir)
    work = out_dir / "instances"
    work.mkdir(parents=True, exist_ok=True)
    table = Table()
    started = time.perf_counter()
    print(f"designer bench{' --quick' if quick else ''}: {os.cpu_count()} CPUs, HiGHS limit {plan.time_limit:g} s "
          f"per solve; figures from one run each", flush=True)
    print(header(), flush=True)
    example = part_a(table, plan, work)
    results = []
    for k, size in enumerate(plan.sizes):
        results.append(part_bcd(table, plan, work, size, largest=k == len(plan.sizes) - 1))
    oracle_present = ORACLE_PATH.exists()
    speedups, tiny_savings = part_e(table, plan, work, oracle_present)
    summary(table, plan, example, results, speedups, tiny_savings, oracle_present)
    table.add("-", "-", "bench wall time", time.perf_counter() - started, "s")
    write_csv(out_dir / "bench.csv", table.rows)
    print(f"wrote {out_dir / 'bench.csv'} ({len(table.rows)} figures)", flush=True)
    return table.rows


def summary(table: Table, plan: Plan, example: dict, results: list, speedups: list, tiny_savings: list,
            oracle_present: bool) -> None:
    """The targets of issue 5 section 2, one line each."""
    print("-" * 140 + "\ntargets (issue 5, section 2)", flush=True)
    a = next((r for r in table.rows if r.section == "a" and r.figure == "end to end / bare import"), None)
    if a is not None:
        table.add("T", example["name"], "(a) end to end / bare import", a.value, "x", "<= 1.5x", a.verdict)
    big = results[-1] if results else None
    if big is not None:
        name = big["name"]
        ov = big.get("overhead")
        table.add("T", name, "(b) (build + extract) / HiGHS solve", ov if ov is not None else "n/a", "",
                  "<= 0.3", verdict(None if ov is None else ov <= 0.3))
        vs = big.get("vs_highspy")
        table.add("T", name, "(b) our call / highspy alone", vs if vs is not None else "n/a", "x", "<= 1.2x",
                  verdict(None if vs is None else vs <= 1.2))
        status, seconds, gap = big["1%"]
        ok = status in ("optimal", "feasible") and gap is not None and gap <= 0.01 + 1e-9 and seconds <= 60
        gap_text = f"{gap:.2%}" if isinstance(gap, (int, float)) else "n/a"
        table.add("T", name, "(c) time to <= 1% gap", float(seconds), "s", "<= 60 s", verdict(ok),
                  f"{status}, gap {gap_text}")
        table.add("T", name, "(c) peak memory", big["peak_mb"], "MB", "<= 4096 MB", verdict(big["peak_mb"] <= 4096))
    if plan is FULL or plan.example == DEFAULT_WORKBOOK:
        t = example["timings"]
        solve_s = t.get("solve_s")
        ok = None if solve_s is None else (example["status"] == "optimal" and solve_s <= 2.0)
        table.add("T", example["name"], "(c) 4-site default to optimal: solve time",
                  solve_s if solve_s is not None else "n/a", "s", "<= 2 s", verdict(ok), f"status {example['status']}")
    else:
        table.add("T", "-", "(c) 4-site default to optimal", "not run", "", "<= 2 s", "n/a",
                  f"--quick solves {plan.example.name} in part (a)")
    savings = [r["saving"] for r in results if r.get("saving") is not None] + tiny_savings
    lost = [r.instance for r in table.rows if r.figure == "saving vs greedy" and r.verdict == "missed"]
    if savings:
        worst = min(savings)
        state = "BUG" if worst < -1e-7 else ("missed" if lost else "met")
        table.add("T", "all instances", "(d) median saving vs greedy", statistics.median(savings), "%",
                  "never < 0", state,
                  f"{len(savings)} instances compared, min {worst:.2f} %, max {max(savings):.2f} %"
                  + (f"; no design from our solve where greedy had one: {', '.join(lost)}" if lost else ""))
    else:
        table.add("T", "all instances", "(d) median saving vs greedy", "n/a", "", "never < 0", "n/a")
    if not oracle_present:
        table.add("T", "-", "(e) brute force / ours at 6 sites", "skipped", "", ">= 100x", "n/a",
                  "tests/oracle.py not found")
    else:
        at = [s for s in speedups if s[0] == 6] or ([max(speedups)] if speedups else [])
        if at:
            n, ratio, cut = at[0]
            value = f">= {ratio:.0f}" if cut else ratio
            table.add("T", f"oracle-{n}-sites", f"(e) brute force / ours at {n} sites", value, "x", ">= 100x",
                      verdict(ratio >= 100) if n == 6 else "n/a", "oracle cut off at its wall limit" if cut else "")
        else:
            table.add("T", "-", "(e) brute force / ours", "n/a", "", ">= 100x", "n/a", "no oracle run finished")


def main(args) -> int:
    out = Path(args.output) if args.output else ROOT / "reports" / "bench"
    run(out, quick=args.quick, time_limit=getattr(args, "time_limit", None))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        sys.exit(child_main(sys.argv[2:]))
    print("usage: designer bench [--quick] [-o DIR]", file=sys.stderr)
    sys.exit(2)
