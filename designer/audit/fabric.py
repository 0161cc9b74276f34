"""The concrete fabric of a design, rebuilt from design.json alone (nothing from models/).

A site's scale-out fabric is a networkx Graph. Nodes are switches (``role`` leaf | spine | core,
``model``, ``ports`` in use, ``down_ports`` and ``down_gbps`` declared, ``site``, ``plane``, ``network``)
and, per leaf, one node for the NICs on it (``role`` endpoints, ``ports`` = NICs), so a 100k-GPU fabric
stays a few thousand nodes. One edge holds every link between two nodes (``count``, ``gbps``, ``tier``,
``item``, ``kind``, ``length_m``). The wiring is derived here from the design's tier counts and port splits:

- networks: ``planes`` identical fabrics, and one per rail as well for rail_only; a tier's count
  is split evenly over them (a remainder goes to the first ones and is reported);
- endpoints: rail_optimized: a scalable unit (SU) holds d1 nodes and has one leaf per rail;
  rail_only: NIC r of every node is in rail r's network, d1 nodes a leaf; otherwise a plane's
  NICs fill the leaves d1 at a time, node by node;
- striping: a switch with u uplinks and n switches above it spreads them evenly over k of them,
  k the largest divisor of u not above n (switch i takes the k after the first i k, mod n): a 2-tier
  Clos leaf reaches every spine with u1 / S links when S divides u1 (uniform striping);
- 3-tier: pods of d2 leaves under u1 aggregation switches (Al-Fares); leaves left over form
  smaller pods whose aggregation count divides u1; aggregation switches stripe over the cores;
- leaf_mesh: u1 // (L - 1) links between every pair of the L leaves, the remaining ports spread
  evenly (designer.fabric.mesh_pairs);
- ports: a switch's cages are those it declares (``cages``), else its ports at its fastest speed, a slower link
  a lane of one (``Catalog.port``: an 800G cage holds 2 x 400G links); mesh links take up ports.

Problems met while wiring (NICs with no leaf port, a pod with no aggregation switch, a count
that does not split over the networks) are sentences in ``graph.graph["problems"]``.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import re
from collections import Counter, OrderedDict

import networkx as nx

from designer.inputs.catalog import cages, lanes, port_modes

SWITCH_ROLES = ("leaf", "spine", "core")


class Catalog:
    """The echoed input tables of a design, keyed by name."""

    def __init__(self, inputs: dict):
        self.project = inputs.get("project", {})
        keyed = {"sites": "name", "floorplan": "site", "node_types": "name", "switches": "model", "optics": "name",
                 "support_networks": "name", "fiber_plant": "name",
                 "coherent": "name", "amplifiers": "name", "protocols": "name"}
        for table, key in keyed.items():
            setattr(self, table, {str(r[key]): r for r in inputs.get(table) or []})
        self.routes = {frozenset((r["site_a"], r["site_b"])): r for r in inputs.get("routes") or []}
        self.modes = {m: port_modes(r["port_modes"]) for m, r in self.switches.items()}
        self.lanes_at: dict[tuple, int] = {}  # (model, gbps) -> lanes, as they are asked for

    def pool_gbps(self, model: str) -> float:
        """A switch's bandwidth: its port modes carry the same total (ports x Gb/s)."""
        return max(g * n for g, n in self.modes[model].items())

    def speeds(self, model: str) -> set[int]:
        return set(self.modes[model])

    def cages(self, model: str) -> int:
        return cages(self.modes[model], self.switches[model].get("cages"))

    def lanes(self, model: str, gbps: int) -> int:
        key = (model, gbps)
        if key not in self.lanes_at:
            self.lanes_at[key] = lanes(self.modes[model], gbps, self.switches[model].get("cages"))
        return self.lanes_at[key]

    def cage_gbps(self, model: str) -> int:
        """The speed of one cage: the switch's bandwidth over its cages."""
        return int(self.pool_gbps(model) // self.cages(model))

    def port(self, switch: dict, up: bool, k: int, gbps: int) -> tuple[int, int, int]:
        """(cage, lane, lanes a cage) of a switch's k-th (from 1) down or up link at ``gbps``. Down links fill
        cages from the first, a lane at a time; up links follow the declared down ports (``down_ports`` at
        ``down_gbps``): in the same cages' lanes at the same speed, else from the next free cage."""
        offset, before, per_cage = self.port_origin(switch, up, gbps)
        slot = before + k
        return offset + (slot - 1) // per_cage + 1, (slot - 1) % per_cage + 1, per_cage

    def port_origin(self, switch: dict, up: bool, gbps: int) -> tuple[int, int, int]:
        """(cages before the first, lanes taken before the first, lanes a cage) of a switch's down or up links at
        ``gbps`` (``port``)."""
        model, down, down_gbps = switch["model"], int(switch["down_ports"]), int(switch["down_gbps"] or gbps)
        per_cage = self.lanes(model, gbps)
        if up and gbps == down_gbps:
            return 0, down, per_cage
        if up:
            return -(-down // self.lanes(model, down_gbps)), 0, per_cage
        return 0, 0, per_cage


def port_names(origin: tuple[int, int, int], first: int, count: int) -> list[str]:
    """The names of a switch's ``count`` links of one kind from the ``first``-th on (from 1), as Catalog.port places
    them from their ``origin`` (Catalog.port_origin): ``p<cage>``, or ``p<cage>/<lane>`` where a cage holds more than
    one link."""
    offset, before, per_cage = origin
    slots = range(before + first - 1, before + first - 1 + count)  # from 0
    if per_cage == 1:
        return [f"p{offset + s + 1}" for s in slots]
    return [f"p{offset + s // per_cage + 1}/{s % per_cage + 1}" for s in slots]


def port_name(origin: tuple[int, int, int], k: int) -> str:
    """port_names(origin, k, 1)[0], without the list (a fabric's million single links)."""
    offset, before, per_cage = origin
    s = before + k - 1
    return f"p{offset + s + 1}" if per_cage == 1 else f"p{offset + s // per_cage + 1}/{s % per_cage + 1}"


def device_prefix(site: str) -> str:
    return re.sub(r"\s+", "-", str(site).strip())


def tier_rows(entry: dict) -> dict[str, dict]:
    """The fabric tiers of a site entry by tier name (DCI routers left out)."""
    return {t["tier"]: t for t in entry.get("tiers", []) if t["tier"] != "dci"}


def network_shape(entry: dict, node: dict) -> tuple[int, int, int]:
    """(planes, rails, networks): rails = NICs per node in one plane; rail_only has one network per rail."""
    planes = int(node["planes"])
    rails = int(node["nics_per_node"]) // planes
    return planes, rails, planes * (rails if entry["topology"] == "rail_only" else 1)


def share(count: int, parts: int, k: int) -> int:
    """Part k of count split evenly over parts (the first ones take the remainder)."""
    return count // parts + (1 if k < count % parts else 0)


class Memo:
    """Values of a function by a key: the most recently used are kept while their total weight (``weigh`` of each,
    1 by default) is within ``budget``, the oldest dropped first; the newest is always kept."""

    def __init__(self, budget: int, weigh=lambda value: 1):
        self.budget, self.weigh = budget, weigh
        self.values, self.weights, self.total = OrderedDict(), {}, 0

    def get(self, key, make):
        if key in self.values:
            self.values.move_to_end(key)
            return self.values[key]
        value = self.values[key] = make()
        self.weights[key] = self.weigh(value)
        self.total += self.weights[key]
        while self.total > self.budget and len(self.values) > 1:
            old, _ = self.values.popitem(last=False)
            self.total -= self.weights.pop(old)
        return value


#: site graphs by content, weighed by nodes + edges (~330 bytes each): a budget of 2M keeps every site of a
#: 1M-GPU design (1.14M over 22 sites, ~360 MB) for the audit, the resilience figures and the writers, which
#: would otherwise rebuild each one several times (a count-limited memo smaller than the open sites drops
#: every graph before it is asked for again)
GRAPHS = Memo(2_000_000, weigh=lambda graph: graph.number_of_nodes() + graph.number_of_edges())
CATALOGS = Memo(4)


def fingerprint(value) -> str:
    """The content of a design's part as a key (JSON, keys sorted)."""
    return json.dumps(value, sort_keys=True, default=str)


def catalog(design: dict) -> Catalog:
    """The Catalog of a design's inputs, made once per content of the inputs from a copy of them (the design may
    change later; the Catalog does not, and it is shared: never change it)."""
    inputs = design.get("inputs") or {}
    return CATALOGS.get(fingerprint(inputs), lambda: Catalog(copy.deepcopy(inputs)))


def site_graph(site, design: dict) -> nx.Graph:
    """build_site_graph's graph, built once per content of the site entry and the design's inputs: the audit,
    the resilience figures and the writers of one run share it, so it is only read, never changed."""
    entry = site if isinstance(site, dict) else next(s for s in design["sites"] if s["name"] == site)
    key = fingerprint([entry, design.get("inputs", {})])
    return GRAPHS.get(key, lambda: build_site_graph(entry, design))


def build_site_graph(site, design: dict) -> nx.Graph:
    """The scale-out fabric of one open site (a site entry or name) as a networkx Graph."""
    entry = site if isinstance(site, dict) else next(s for s in design["sites"] if s["name"] == site)
    cat = Catalog(design.get("inputs", {}))
    node = cat.node_types[entry.get("node_type") or cat.project["node_type"]]
    planes, rails, nets = network_shape(entry, node)
    graph = nx.Graph(site=entry["name"], topology=entry["topology"], fabric_tiers=int(entry.get("fabric_tiers") or 0),
                     planes=planes, rails=rails, networks=nets, problems=[])
    rows = tier_rows(entry)
    for role in SWITCH_ROLES:
        count = int(rows[role]["count"]) if role in rows else 0
        if count % nets:
            graph.graph["problems"].append(f"{entry['name']}: {count} {role} switches do not split evenly over "
                                           f"{nets} identical networks (planes x rails); off by {count % nets}")
    builder = Wiring(graph, entry, cat, rows, rails)
    for k in range(nets):
        builder.network(k, plane=k // (nets // planes), rail=k % rails if entry["topology"] == "rail_only" else None)
    for name, ports in graph.degree(weight="count"):
        if graph.nodes[name]["role"] != "endpoints":
            graph.nodes[name]["ports"] = ports
    return graph


class Wiring:
    """Adds the switches, endpoint groups and links of each network of one site to ``graph``."""

    def __init__(self, graph: nx.Graph, entry: dict, cat: Catalog, rows: dict, rails: int):
        self.g, self.entry, self.cat, self.rows, self.rails = graph, entry, cat, rows, rails
        self.site = entry["name"]
        self.prefix = device_prefix(self.site)
        self.links = {lk["tier"]: lk for lk in entry.get("fabric_links", [])}
        self.nets = graph.graph["networks"]
        self.problems = graph.graph["problems"]

    def count(self, role: str, k: int) -> int:
        return share(int(self.rows[role]["count"]), self.nets, k) if role in self.rows else 0

    def name(self, plane: int, role: str, label: str) -> str:
        p = f"-p{plane + 1}" if self.g.graph["planes"] > 1 else ""
        return f"{self.prefix}{p}-{role}-{label}"

    def add_switch(self, name: str, role: str, k: int, plane: int, **extra) -> str:
        self.g.add_node(name, role=role, model=str(self.rows[role]["model"]), site=self.site, plane=plane + 1,
                        network=k, ports=0, down_ports=int(self.rows[role].get("down_ports") or 0),
                        down_gbps=int(self.rows[role].get("down_gbps") or 0), **extra)
        return name

    def link(self, a: str, b: str, tier: str, gbps: int, count: int = 1) -> None:
        self.links_between([(a, b)], tier, gbps, count)

    def links_between(self, pairs, tier: str, gbps: int, count: int) -> None:
        """``count`` links of ``tier`` between each pair of switches (added to a pair already linked), the new
        pairs added at once (a 1M-GPU design's 1.2M pairs: one networkx call, not one each)."""
        if count <= 0:
            return
        cable = self.links.get(tier, {})
        data = {"count": count, "gbps": int(gbps), "tier": tier, "item": str(cable.get("item", "")),
                "kind": str(cable.get("kind", "")), "length_m": float(cable.get("length_m") or 0.0)}
        held_data, new = self.g.get_edge_data, {}  # a graph's own edge dict, no view made per pair
        for a, b in pairs:
            held = held_data(a, b) or new.get((a, b)) or new.get((b, a))
            if held is not None:
                held["count"] += count
            else:
                new[a, b] = data.copy()
        self.g.add_edges_from((a, b, d) for (a, b), d in new.items())

    def network(self, k: int, plane: int, rail: int | None) -> None:
        topology = self.entry["topology"]
        leaf = self.rows["leaf"]
        d1 = int(leaf["down_ports"])
        leaves = self.leaves(k, plane, rail, d1)
        tiers = int(self.entry.get("fabric_tiers") or 1)
        if topology == "leaf_mesh" and tiers == 2:
            self.mesh(leaves, int(leaf["up_ports"]), int(leaf["down_gbps"]))
        elif tiers == 2:
            spines = [self.add_switch(self.name(plane, "spine", self.label(j, self.count("spine", k), rail)),
                                      "spine", k, plane, index=j) for j in range(self.count("spine", k))]
            self.stripe(leaves, spines, int(leaf["up_ports"]), int(leaf["up_gbps"]), "leaf_spine")
        elif tiers == 3:
            self.three_tier(k, plane, leaves)

    @staticmethod
    def label(j: int, total: int, rail: int | None = None) -> str:
        r = f"r{rail + 1}-" if rail is not None else ""
        return f"{r}{j + 1:0{max(2, len(str(total)))}d}"

    def leaves(self, k: int, plane: int, rail: int | None, d1: int) -> list[str]:
        """The network's leaves, each with its endpoint group; NICs left without a port are reported."""
        topology = self.entry["topology"]
        nodes = int(self.entry["nodes"])
        count = self.count("leaf", k)
        out, attached = [], 0
        if topology == "rail_optimized":
            sus = int(self.entry.get("scalable_units") or math.ceil(nodes / d1))
            if count != sus * self.rails:
                self.problems.append(f"{self.site}: {count} leaves in a plane, but rail_optimized needs one per rail "
                                     f"per SU: {self.rails} rails x {sus} SUs = {sus * self.rails}")
            width = max(1, len(str(sus)))
            for i in range(count):
                su, r = divmod(i, self.rails)
                label = f"r{r + 1}-su{su + 1:0{width}d}"
                members = (su * d1, max(0, min(d1, nodes - su * d1)), plane * self.rails + r)
                out.append(self.leaf(self.name(plane, "leaf", label), k, plane, members, rail=r + 1, su=su + 1))
                attached += members[1]
            total = nodes * self.rails
        else:
            per_node = 1 if topology == "rail_only" else self.rails
            total = nodes * per_node
            for i in range(count):
                first = i * d1
                nic = plane * self.rails + rail if rail is not None else -1
                members = (first, max(0, min(d1, total - first)), nic)
                out.append(self.leaf(self.name(plane, "leaf", self.label(i, count, rail)), k, plane, members))
                attached += members[1]
        if attached < total:
            what = f"rail {rail + 1} of plane {plane + 1}" if rail is not None else f"plane {plane + 1}"
            self.problems.append(f"{self.site}: {total - attached} of {total} NICs in {what} have no leaf port "
                                 f"({count} leaves x {d1} down ports)")
        return out

    def leaf(self, name: str, k: int, plane: int, members: tuple[int, int, int], **extra) -> str:
        """A leaf and its endpoint group: ``first`` is a node (fixed ``nic``) or a NIC index (nic -1)."""
        first, count, nic = members
        self.add_switch(name, "leaf", k, plane, **extra)
        if count:
            group = f"{name}-nodes"
            self.g.add_node(group, role="endpoints", model=str(self.entry.get("node_type", "")), site=self.site,
                            plane=plane + 1, network=k, ports=count, leaf=name, first=first, nic=nic)
            self.link(group, name, "node_leaf", int(self.rows["leaf"]["down_gbps"]), count)
        return name

    def stripe(self, lower: list[str], upper: list[str], uplinks: int, gbps: int, tier: str) -> None:
        """Lower switch i spreads its uplinks evenly over k upper switches, k the largest divisor of
        uplinks not above len(upper): uplinks / k links to each of upper[(i k + j) mod len(upper)], j < k."""
        if not upper or not uplinks:
            if lower and uplinks:
                self.problems.append(f"{self.site}: {len(lower)} switches ({lower[0]}, ...) have {uplinks} uplinks "
                                     "each but no switch above them")
            return
        k = max(x for x in range(1, min(uplinks, len(upper)) + 1) if uplinks % x == 0)
        self.links_between(((low, upper[(i * k + j) % len(upper)]) for i, low in enumerate(lower) for j in range(k)),
                           tier, gbps, uplinks // k)

    def three_tier(self, k: int, plane: int, leaves: list[str]) -> None:
        spine = self.rows["spine"]
        u1, d2 = int(self.rows["leaf"]["up_ports"]), int(spine["down_ports"])
        aggs_total = self.count("spine", k)
        cores = [self.add_switch(self.name(plane, "core", self.label(c, self.count("core", k))), "core", k, plane,
                                 index=c) for c in range(self.count("core", k))]
        aggs, start = [], 0
        for p, (n_leaves, n_aggs) in enumerate(pods(len(leaves), aggs_total, u1, d2)):
            members = leaves[start:start + n_leaves]
            start += n_leaves
            pod = [self.add_switch(self.name(plane, "spine", f"pod{p + 1:02d}-{j + 1:02d}"), "spine", k, plane,
                                   pod=p + 1, index=j) for j in range(n_aggs)]
            for leaf in members:
                self.g.nodes[leaf]["pod"] = p + 1
            if members and not pod:
                self.problems.append(f"{self.site}: pod {p + 1} ({len(members)} leaves) has no aggregation switch: "
                                     f"{aggs_total} in the plane, {u1} uplinks a leaf, {d2} down ports a switch")
            self.stripe(members, pod, u1, int(self.rows["leaf"]["up_gbps"]), "leaf_spine")
            aggs.append(pod)
        self.stripe([a for pod in aggs for a in pod], cores, int(spine["up_ports"]), int(spine["up_gbps"] or 0),
                    "spine_core")
        self.join_pods([pod for pod in aggs if pod], set(cores))

    def join_pods(self, pods: list[list[str]], cores: set[str]) -> None:
        """Small pods reach only some cores; where two share none, a switch y of the second moves a
        single link from core b to a core a of the first, and a switch z of a third pod that holds a
        through another switch too moves its link from a to b: core loads stay as they were."""
        g = self.g
        reach = [{c for x in pod for c in g.adj[x] if c in cores} for pod in pods]
        for p, q in itertools.combinations(range(len(pods)), 2):
            if reach[p] != cores and reach[q] != cores and not reach[p] & reach[q]:
                for y, b, a in ((y, b, a) for y in pods[q] for b in list(g.adj[y]) if b in cores
                                for a in sorted(reach[p])):
                    z = next((z for z in g.adj[a] if g.nodes[z]["role"] == "spine" and z not in pods[p] + pods[q]
                              and not g.has_edge(z, b) and g.edges[z, a]["count"] == 1 and sum(
                                  g.nodes[w].get("pod") == g.nodes[z].get("pod") for w in g.adj[a]) > 1), None)
                    if g.edges[y, b]["count"] == 1 and not g.has_edge(y, a) and z is not None:
                        g.add_edge(y, a, **g.edges[y, b])
                        g.add_edge(z, b, **g.edges[z, a])
                        g.remove_edge(y, b)
                        g.remove_edge(z, a)
                        reach[q] = {c for x in pods[q] for c in g.adj[x] if c in cores}
                        break

    def mesh(self, leaves: list[str], uplinks: int, gbps: int) -> None:
        for (a, b), n in mesh_pairs(len(leaves), uplinks).items():
            self.link(leaves[a], leaves[b], "leaf_leaf", gbps, n)


def pods(leaves: int, aggs: int, u1: int, d2: int) -> list[tuple[int, int]]:
    """(leaves, aggregation switches) per pod: full pods of d2 leaves under u1 switches first, then
    pods whose switch count is the largest divisor of u1 left, each holding a x d2 / u1 leaves."""
    out = []
    while leaves > 0:
        a = max((x for x in range(1, u1 + 1) if u1 % x == 0 and x <= aggs), default=0)
        n = min(leaves, max(1, a * d2 // u1)) if a else leaves
        out.append((n, a))
        leaves, aggs = leaves - n, aggs - a
    if aggs > 0:
        out.append((0, aggs))
    return out


def mesh_pairs(n: int, ports: int) -> Counter:
    """Links per leaf pair, ``ports`` link ends a leaf: ports // (n - 1) links between every pair, the
    rest spread evenly: perfect matchings of the circle method (even n) or circulant offsets (odd n,
    two link ends a leaf each) chosen evenly over their range, so any balanced cut gets its share."""
    pairs: Counter = Counter()
    if n < 2:
        return pairs
    base, extra = divmod(ports, n - 1)
    for a in range(n):
        for b in range(a + 1, n):
            pairs[a, b] = base
    if n % 2 == 0:
        for j in range(extra):
            r = j * (n - 1) // extra
            pairs[tuple(sorted((r, n - 1)))] += 1
            for k in range(1, n // 2):
                pairs[tuple(sorted(((r + k) % (n - 1), (r - k) % (n - 1))))] += 1
    else:
        half = (n - 1) // 2
        for j in range(extra // 2):
            k = (2 * j + 1) * half // extra + 1
            for i in range(n):
                pairs[tuple(sorted((i, (i + k) % n)))] += 1
    return +pairs


def members(graph: nx.Graph, group: str, rails: int) -> list[tuple[int, int]]:
    """(node index, NIC index) of every NIC in an endpoint group."""
    data = graph.nodes[group]
    first, count, nic = data["first"], data["ports"], data["nic"]
    if nic >= 0:
        return [(first + i, nic) for i in range(count)]
    offset = (data["plane"] - 1) * rails
    return [((first + i) // rails, offset + (first + i) % rails) for i in range(count)]


def build_intersite_graph(design: dict) -> nx.Graph:
    """Sites as nodes (open, nodes, dci capacity) and every usable fiber route of the inputs as an
    edge (distance, fiber pairs available, RTT; for used routes the design's link figures, used=True)."""
    cat = Catalog(design.get("inputs", {}))
    graph = nx.Graph()
    for s in design["sites"]:
        graph.add_node(s["name"], open=bool(s["open"]), nodes=int(s.get("nodes") or 0),
                       dci_capacity_gbps=float(s.get("dci_capacity_gbps") or 0.0))
    for route in cat.routes.values():
        a, b = route["site_a"], route["site_b"]
        if a in graph and b in graph:
            graph.add_edge(a, b, distance_km=float(route["distance_km"]), fiber_pairs_available=int(route["fiber_pairs"]),
                           amplifier_spacing_km=float(route.get("amplifier_spacing_km") or 80.0), used=False,
                           srlg=route.get("srlg") or None,
                           capacity_gbps=0.0, wavelengths=0, fiber_pairs=0)
    for link in design.get("links", []):
        a, b = link["site_a"], link["site_b"]
        if not graph.has_edge(a, b):
            graph.add_edge(a, b, distance_km=float(link.get("distance_km") or 0.0), fiber_pairs_available=0,
                           amplifier_spacing_km=80.0, route_missing=True)
        graph.edges[a, b].update(used=True, **{k: link[k] for k in ("coherent_model", "wavelengths", "coherent_ports",
                                                                    "fiber_pairs", "amplifiers", "capacity_gbps",
                                                                    "rtt_ms", "site_a", "site_b")},
                                optic_kind=link.get("optic_kind") or "coherent")
    return graph
