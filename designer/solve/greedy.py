"""A greedy planner: cheapest sites per MW first, the cheapest feasible fabric mode per site, straightforward
sizing and inter-site links: the benchmark's baseline (part d), in the solve layer where it can read the model data."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from models.intersite import end_watts, fiber_gbps, is_gray, line_usd, links_on_pairs, prepare
from models.modes import plant_rows, power_cap_mw
from models.network import plant_usd_per_link, support_links


@dataclass
class Greedy:
    """A design a planner could size by hand; ``cost`` is capex + energy like the model's objective."""

    cost: float | None
    sites: dict = field(default_factory=dict)  # name -> {nodes, mode, cost, it_w}
    links: list = field(default_factory=list)  # (a, b, coherent, waves, pairs)
    reason: str = ""
    seconds: float = 0.0
    #: no design only because its cost is above budget_usd: ``sites`` is a whole plan whose choice of sites and modes
    #: a model may still complete within the budget (designer.solve.start)
    over_budget: bool = False


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


def fabric_cost_watts(mode, n, nics: int, planes: int, prices: dict, watts: dict, plant: dict | None = None,
                      in_rack_m: float = 0.0):
    """(cost USD, IT W, fits) of ``mode`` for node counts ``n``: switches, cables or modules, and the fiber plant
    its transceiver links take (``plant``: models.modes.plant_rows; panels by the port)."""
    leaves, mid, top, links, copies, fits = fabric_size(mode, n, nics, planes)
    cost = copies * (prices[mode.leaf] * leaves + (prices[mode.spine] * mid if mode.spine else 0)
                     + (prices[mode.core] * top if mode.core else 0))
    power = copies * (watts[mode.leaf] * leaves + (watts[mode.spine] * mid if mode.spine else 0)
                      + (watts[mode.core] * top if mode.core else 0))
    for cable, count in zip(mode.cables, links):
        items = _ceil((1 if cable.cable else 2) * count, cable.links_per_module)
        cost = cost + cable.unit_price * items + plant_usd_per_link(plant or {}, cable, in_rack_m) * count
        power = power + cable.unit_power_w * items
    return cost.astype(float), power.astype(float), fits


def support_cost_watts(inputs, n):
    """(cost USD, IT W) of the support networks for node counts ``n`` (numpy array): per network,
    ceil(n / nodes_per_switch) switches and n x ports_per_node links (a cable one item, transceivers two)."""
    import numpy as np

    cost, power = np.zeros(len(n)), np.zeros(len(n))
    if not inputs.project.get("support_networks", True):
        return cost, power
    for _, row in inputs.support_networks.iterrows():
        switches = np.ceil(n / float(row["nodes_per_switch"]) - 1e-9)
        ports, per_port = support_links(row)
        items = n * ports * per_port
        cost = cost + switches * float(row["switch_price_usd"]) + items * float(row["link_price_usd"])
        power = power + switches * float(row["switch_power_w"]) + items * float(row["link_power_w"])
    return cost, power


def route_most_gbps(route: dict, co) -> float:
    """The most a route's fiber carries with its best DCI optic (every pair lit)."""
    return max(fiber_gbps(co.loc[c], route["pairs"], route["route"].band) for c in route["types"])


def route_capacities(opened: list, parent: dict, need: dict, routes: dict, co) -> dict | str:
    """Gb/s per route (frozenset of its two sites): each open site's need on the route to its parent,
    then any site still short tops up its routes to open sites (tree routes first, then the shortest),
    each up to what its fiber carries with the fastest coherent type. A reason string when it cannot."""
    def most(e):
        return route_most_gbps(routes[e], co)

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


def _rtt_from(s: str, order: list[str], dist: dict, routes: dict) -> dict:
    """Shortest RTT (ms) from site ``s`` to each site of ``order`` over the routes among ``order`` and ``s``
    (``dist``: those among ``order``): a path leaves s by a route to a site n of the order, then goes on from n."""
    inf = float("inf")
    hops = [(n, routes[frozenset((s, n))]["rtt"]) for n in order if frozenset((s, n)) in routes]
    return {o: min((w + (0.0 if n == o else dist.get((n, o), inf)) for n, w in hops), default=inf) for o in order}


def greedy_plan(inputs, modes=None, max_rounds: int = 30, inter=None, prefer: dict | None = None) -> Greedy:
    """Cheapest sites by cost per MW first (each next one joined by a route to those already open), each
    filled as far as its power and space allow with the mode that holds the most nodes, then the cheapest
    mode for the nodes placed; a tree of routes (each joining site to the open site nearest to it) sized
    at dci_ratio of the joining site's NIC bandwidth, topped up where a site's routes fall short, the
    cheapest coherent type per route, the cheapest single DCI router model per site. Power taken by the
    DCI equipment is reserved and the plan redone until every site fits. ``modes`` and ``inter`` (the inter-site
    data of models.intersite.prepare over the usable sites): the model data's, where the caller has them.
    ``prefer``: a weight per site (the LP relaxation's open values) that orders the sites before their cost per MW,
    most preferred first: the plan then opens the sites the LP opens where the routes and the RTT limit let it."""
    import numpy as np

    from models.modes import enumerate_modes

    start = time.perf_counter()
    p = inputs.project
    node = inputs.node_types.loc[p["node_type"]]
    gpn, nics, planes = int(node["gpus_per_node"]), int(node["nics_per_node"]), int(node["planes"])
    node_w, node_price = float(node["node_power_kw"]) * 1e3, float(node["node_price_usd"])
    node_bw = nics * float(node["nic_gbps"])
    modes = enumerate_modes(inputs).modes if modes is None else modes
    by_id = {mode.id: mode for mode in modes}
    if not modes:
        return Greedy(None, reason="no fabric mode", seconds=time.perf_counter() - start)
    sw = inputs.switches
    prices = {m: float(sw.loc[m, "price_usd"]) for m in sw.index}
    watts = {m: float(sw.loc[m, "power_w"]) for m in sw.index}
    sites = inputs.sites
    years = float(p.get("horizon_years") or 0.0)
    job = _ceil(int(p["gpus_required"]), gpn)
    usable = [s for s in sites.index if sites.loc[s, "status"] != "excluded"]

    # facility power capex and energy over the horizon, per IT watt
    per_it_w = {s: float(r["pue"]) / 1e6 * (float(r["power_cost_usd_per_mw"])
                                            + years * 8760.0 * float(r["energy_usd_per_mwh"]))
                for s, r in sites.loc[usable].iterrows()}

    def per_mw(s):
        r = sites.loc[s]
        return float(r["fixed_cost_usd"]) / float(r["power_mw"]) + per_it_w[s] * 1e6 / float(r["pue"])

    def rank(s):
        """The opening order's key: the preference first (most preferred first), then the cost per MW."""
        return (-prefer.get(s, 0.0), per_mw(s)) if prefer is not None else (0.0, per_mw(s))

    # routes a link may use, with the DCI optics and routers the model offers (models.intersite.prepare)
    co = inputs.coherent
    max_rtt = p.get("max_site_rtt_ms")
    inter = prepare(inputs, usable) if inter is None else inter
    routes = {frozenset((r.a, r.b)): {"a": r.a, "b": r.b, "dist": r.distance_km, "rtt": r.rtt_ms,
                                      "types": list(r.coherent), "pairs": r.fiber_pairs, "pair_usd": r.cost_per_pair,
                                      "route": r} for r in inter.routes}
    routers = inter.routers

    limit = {s: min(int(sites.loc[s, "max_nodes"]), job) for s in usable}
    ratio = float(p["dci_ratio"])

    def attached(n: int) -> int:
        """DCI attachments a site of n nodes takes in a multi-site plan (one more for wavelength rounding)."""
        return math.ceil(ratio * n - 1e-9) + 1

    def with_attachments(fits) -> int:
        """Most nodes n a fabric holds with their attachments too: fits[n + attached(n) - 1] (``fits``: whether it
        holds 1, 2, ... endpoints)."""
        n = np.arange(1, len(fits) + 1)
        e = n + np.ceil(ratio * n - 1e-9).astype(np.int64) + 1
        ok = e <= len(fits)
        ok[ok] = fits[e[ok] - 1]
        return int(n[ok].max()) if ok.any() else 0

    top_n = max(limit.values(), default=0)
    grid = np.arange(1, top_n + attached(top_n) + 1, dtype=np.int64)
    extra_usd, extra_w = support_cost_watts(inputs, grid)
    plant, in_rack_m = plant_rows(inputs), float(p.get("cable_in_rack_m") or 0.0)
    sized = [(c + extra_usd, w + extra_w, fits)
             for c, w, fits in (fabric_cost_watts(mode, grid, nics, planes, prices, watts, plant, in_rack_m)
                                for mode in modes)]
    held_with = [with_attachments(fits) for _c, _w, fits in sized]  # per mode, the same every round

    # opening order: required sites, then the cheapest per MW joined to the open ones and, under an RTT
    # limit, within it of each of them over routes among them; grown from the cheapest site first,
    # and from the next cheapest when that order closes (no site left both joined and within the limit)
    # before its sites could hold the job (holds)
    required = [s for s in usable if sites.loc[s, "status"] == "required"]

    def grow(seed: list[str]) -> list[str]:
        """The order from ``seed``: a site joins when a route ties it to the order and, under an RTT limit, the
        routes among the order's sites and it (those a design may use: both ends open) reach each of them within
        the limit; ``dist`` keeps those shortest RTTs, shortened through each site that joins."""
        order, dist = [], {}
        rest = list(seed) + sorted((s for s in usable if s not in seed), key=rank)
        while rest:
            for s in rest:
                reach = _rtt_from(s, order, dist, routes)
                if len(order) < len(seed) or (any(math.isfinite(d) for d in reach.values())
                                              and (max_rtt is None or max(reach.values()) <= max_rtt)):
                    break
            else:
                break
            for a in order:
                for b in order:
                    if a != b:
                        dist[a, b] = min(dist.get((a, b), math.inf), reach[a] + reach[b])
            for o in order:
                dist[s, o] = dist[o, s] = reach[o]
            order.append(s)
            rest.remove(s)
        return order

    def holds(order: list[str]) -> bool:
        """Whether the sites of ``order`` hold the job by power, space, the largest fabric and (several sites) the
        largest a DCI router can join and the nodes their routes' fiber serves at dci_ratio, the network's own power
        aside: a first screen."""
        multi = ratio > 0 and len(order) > 1
        return sum(site_most[s, multi] for s in order) >= job

    largest = [int(grid[fits].max(initial=0)) for _c, _w, fits in sized]
    # Gb/s a site's routes carry at most (the same every round)
    fiber_at = {s: sum(route_most_gbps(r, co) for e, r in routes.items() if s in e) for s in usable}
    site_most = {}  # (site, several sites open) -> the most nodes it holds (holds)
    for s in usable:
        by_power = min(power_cap_mw(inputs, s) * 1e6 / float(sites.loc[s, "pue"]) / node_w, limit[s])
        alone = max((largest[i] for i, mode in enumerate(modes) if s in mode.sites), default=0)
        joined = max((held_with[i] for i, mode in enumerate(modes) if s in mode.sites and mode.attach), default=0)
        fiber = fiber_at[s] / max(ratio * node_bw, 1e-9)
        site_most[s, False] = min(by_power, alone)
        site_most[s, True] = min(by_power, joined, fiber)

    seeds = [required] if required else [[s] for s in sorted(usable, key=rank)]
    order = next((o for o in map(grow, seeds) if holds(o)), None) or grow(seeds[0] if seeds else [])
    parent = {}
    for k, s in enumerate(order[1:], 1):
        near = [o for o in order[:k] if frozenset((s, o)) in routes]
        parent[s] = min(near, key=lambda o: routes[frozenset((s, o))]["dist"]) if near else None

    reserve = {s: 0.0 for s in order}  # IT watts kept for DCI routers and coherent modules
    for _round in range(max_rounds):
        # most nodes each site holds in each mode within power and space
        budget = np.array([max(0.0, power_cap_mw(inputs, s) * 1e6 / float(sites.loc[s, "pue"]) - reserve[s])
                           for s in order])
        most = np.zeros((len(modes), len(order)), dtype=np.int64)
        for i, (_cost, w, fits) in enumerate(sized):
            total = np.where(fits, node_w * grid + w, np.inf)
            total = np.minimum.accumulate(total[::-1])[::-1]  # most nodes n with total(n') <= budget, n' >= n
            most[i] = np.searchsorted(total, budget * (1 + 1e-12), side="right")
            most[i] *= np.array([s in modes[i].sites for s in order])  # a mode's cables are for its sites
        cap = {s: min(limit[s], int(most[:, k].max())) for k, s in enumerate(order)}
        if order and cap[order[0]] < job and float(p["dci_ratio"]) > 0:
            # more than one site opens: a site holds no more nodes than its routes' fiber can serve, nor more than
            # a fabric a DCI router can join holds with the routers' attachments on its leaves
            per_node = float(p["dci_ratio"]) * node_bw
            for k, s in enumerate(order):
                joined = max((min(int(most[i, k]), held_with[i]) for i, mode in enumerate(modes)
                              if mode.attach and s in mode.sites), default=0)
                cap[s] = min(cap[s], int(fiber_at[s] // per_node), joined)
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
            e = n + (attached(n) if len(placed) > 1 else 0)  # leaf ports: nodes and DCI routers
            for i, mode in enumerate(modes):
                if len(placed) > 1 and not mode.attach:
                    continue  # its leaves cannot join a DCI router (models.network.define_dci_attachment)
                if most[i, k] < n or not sized[i][2][e - 1] or node_w * n + sized[i][1][e - 1] > room:
                    continue
                c, w = float(sized[i][0][e - 1]), float(sized[i][1][e - 1])
                total = c + per_it_w[s] * (w + node_w * n)
                if best is None or total < best[0]:
                    best = (total, mode.id, c, w)
            if best is None and e > n and n > 1:  # the attachments' leaf ports (and power): fewer nodes, place again
                limit[s] = max(1, min(n - 1, n - (e - n)))
                break
            if best is None:
                return Greedy(None, reason=f"no mode holds {n} nodes at {s}", seconds=time.perf_counter() - start)
            plan[s] = {"nodes": n, "mode": best[1], "fabric_usd": best[2], "it_w": best[3] + node_w * n}
        if len(plan) < len(placed):
            continue
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
                    on_pair, per = links_on_pairs(co.loc[c])
                    pairs = _ceil(waves * per, on_pair)
                    if pairs > r["pairs"]:
                        continue
                    line = 0 if is_gray(co.loc[c]) else 1
                    end_w = waves * float(co.loc[c, "power_w"]) + line * pairs * end_watts(r["route"])
                    usd = (2 * waves * float(co.loc[c, "price_usd"]) + pairs * r["pair_usd"]
                           + line * line_usd(r["route"], pairs) + end_w * (per_it_w[r["a"]] + per_it_w[r["b"]]))
                    if choice is None or usd < choice[0]:
                        choice = (usd, c, waves, pairs, gbps)
                if choice is None:
                    return Greedy(None, reason=f"route {r['a']}-{r['b']} cannot carry {gbps_need:.0f} Gb/s",
                                  seconds=time.perf_counter() - start)
                _usd, c, waves, pairs, gbps = choice
                links.append((r["a"], r["b"], c, waves, pairs))
                line = 0 if is_gray(co.loc[c]) else 1
                fiber_usd += pairs * r["pair_usd"] + line * line_usd(r["route"], pairs)
                for end in (r["a"], r["b"]):
                    got[end] += waves * gbps
                    bdp[end] += waves * gbps * r["rtt"] / 8.0
                    dci_usd[end] += waves * float(co.loc[c, "price_usd"])
                    dci_w[end] += waves * float(co.loc[c, "power_w"]) + line * pairs * end_watts(r["route"])
            factor = float(p["buffer_bdp_factor"])
            for s in opened:
                # the routers' attachments (each a node's NIC bandwidth on leaf ports) carry what the routes bring,
                # each by the cheapest of its fabric's attachment cables at the site's $ per watt
                cable = min(by_id[plan[s]["mode"]].attach, key=lambda c, s=s: (
                    c.items_per_attachment(nics) * (c.unit_price + c.unit_power_w * per_it_w[s]),
                    c.items_per_attachment(nics) * c.unit_power_w))
                items = math.ceil(got[s] / node_bw - 1e-9) * cable.items_per_attachment(nics)
                dci_usd[s] += items * cable.unit_price
                dci_w[s] += items * cable.unit_power_w
                options = []
                for k in routers:
                    pool = max(g * n for g, n in sw.loc[k, "port_modes"].items())
                    buf = float(sw.loc[k, "buffer_mb"])
                    count = max(math.ceil(2 * got[s] / pool - 1e-9),
                                math.ceil(factor * bdp[s] / buf - 1e-9) if buf > 0 else 0)
                    options.append((count * (prices[k] + watts[k] * per_it_w[s]), count, k))
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
                        + dci_usd[s] + per_it_w[s] * it_w)
            plan[s].update(cost=site_usd, it_w=it_w)
            total += site_usd
        budget_usd = p.get("budget_usd")
        if budget_usd is not None and total > float(budget_usd) * (1 + 1e-9):
            return Greedy(None, plan, links, reason="above budget_usd", seconds=time.perf_counter() - start,
                          over_budget=True)
        return Greedy(total, plan, links, seconds=time.perf_counter() - start)
    return Greedy(None, reason="DCI power reservation did not settle", seconds=time.perf_counter() - start)
