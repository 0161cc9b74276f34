"""Graph searches over one network of a site fabric: worst-case path and max-flow bisection.

Both run on a quotient of the switch graph. Switches with the same role, model and neighbours
(and, for flows, the same link capacities to them) are twins: a symmetry of the fabric swaps
them, so one node stands for all of them without changing any distance or maximum flow. A
uniformly striped 100k-GPU fabric reduces to a few thousand nodes.
"""

from __future__ import annotations

import itertools
import weakref
from collections import defaultdict
from dataclasses import dataclass, field

import networkx as nx

PROPAGATION_NS_PER_M = 5.0
RANK = {"endpoints": 0, "leaf": 1, "spine": 2, "core": 3}
#: ranks of each graph alive: the checks compare the ranks of a link's ends over every link of a fabric
RANKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def ranks(graph: nx.Graph) -> dict:
    """The RANK of each node's role (node -> rank), once per graph."""
    if graph not in RANKS:
        RANKS[graph] = {n: RANK[d["role"]] for n, d in graph.nodes(data=True)}
    return RANKS[graph]


@dataclass
class Worst:
    """Worst case over endpoint pairs of the best path: switch hops and ns (switches + cables)."""

    hops: int = 0
    ns: float = 0.0
    hops_pair: tuple = ()
    ns_pair: tuple = ()
    unreachable: list = field(default_factory=list)

    def offer(self, hops: int, ns: float, pair: tuple) -> None:
        if hops > self.hops:
            self.hops, self.hops_pair = hops, pair
        if ns > self.ns:
            self.ns, self.ns_pair = ns, pair


def endpoint_leaves(net: nx.Graph) -> dict[str, int]:
    """Leaf -> NICs on it, in build order."""
    out: dict[str, int] = {}
    for n, d in net.nodes(data=True):
        if d["role"] == "endpoints":
            out[d["leaf"]] = out.get(d["leaf"], 0) + d["ports"]
    return out


def twin_classes(adj: dict[str, dict], label) -> dict[str, str]:
    """Node -> representative: nodes with equal label(node) and equal neighbourhood ``adj[node]``."""
    rep: dict = {}
    out = {}
    for n, nbrs in adj.items():
        key = (label(n), frozenset(nbrs.items()) if isinstance(nbrs, dict) else frozenset(nbrs))
        out[n] = rep.setdefault(key, n)
    return out


def worst_path(net: nx.Graph, latency_ns) -> Worst:
    """Worst case, over pairs of NICs, of the lowest-latency path (and of the fewest-hop path).

    ns = latencies of the switches on the path + 5 ns/m over every cable (NIC cables included);
    ``latency_ns(model)`` gives a switch's latency. Two NICs on one leaf: one hop.
    """
    rank, model = ranks(net), dict(net.nodes(data="model"))  # rank 0: an endpoint group
    switches = [n for n, r in rank.items() if r]
    adj = {n: {m for m in net.adj[n] if rank[m]} for n in switches}
    rep = twin_classes(adj, lambda n: (rank[n], model[n]))
    lat = {n: float(latency_ns(model[n])) for n in set(rep.values())}
    quotient = nx.Graph()
    quotient.add_nodes_from(lat)
    for u, v, d in net.edges(data=True):
        if u in rep and v in rep:
            prop = PROPAGATION_NS_PER_M * d["length_m"]
            quotient.add_edge(rep[u], rep[v], w=prop + (lat[rep[u]] + lat[rep[v]]) / 2, prop=prop)
    leaves = endpoint_leaves(net)
    nic_ns = 2 * max((PROPAGATION_NS_PER_M * d["length_m"] for *_, d in net.edges(data=True)
                      if d["tier"] == "node_leaf"), default=0.0)
    by_class = defaultdict(list)
    for leaf in leaves:
        by_class[rep[leaf]].append(leaf)
    worst = Worst()
    for leaf, nics in leaves.items():
        if nics > 1:
            worst.offer(1, nic_ns + lat[rep[leaf]], (leaf, leaf))
    for c, members in by_class.items():
        dist = nx.single_source_dijkstra_path_length(quotient, c, weight="w")
        hops = nx.single_source_shortest_path_length(quotient, c)
        for c2, others in by_class.items():
            if c2 == c:
                if len(members) < 2:
                    continue
                via = [2 * d["prop"] + lat[n] for n, d in quotient.adj[c].items()]
                if not via:
                    worst.unreachable.append((members[0], members[1]))
                    continue
                worst.offer(3, nic_ns + 2 * lat[c] + min(via), (members[0], members[1]))
            elif c2 not in dist:
                worst.unreachable.append((members[0], others[0]))
            else:
                worst.offer(hops[c2] + 1, nic_ns + dist[c2] + (lat[c] + lat[c2]) / 2, (members[0], others[0]))
    return worst


#: switch_links of each graph alive
SWITCH_LINKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def switch_links(net: nx.Graph) -> list[tuple[str, str, float]]:
    """(switch, switch, Gb/s one way) of every link between two switches, once per graph (each max-flow of a
    network reads them all: the bisection, then again without a spine, without a core)."""
    if net not in SWITCH_LINKS:
        rank = ranks(net)  # rank 0: an endpoint group
        SWITCH_LINKS[net] = [(u, v, d["count"] * d["gbps"]) for u, v, d in net.edges(data=True) if rank[u] and rank[v]]
    return SWITCH_LINKS[net]


def max_flow(net: nx.Graph, side_a, side_b, removed=()) -> float:
    """Maximum flow in Gb/s from the switches of side_a to those of side_b (every link full duplex,
    count x gbps each way), with the switches in ``removed`` taken out."""
    source, sink = "\0a", "\0b"
    side_a, side_b, removed = set(side_a), set(side_b), set(removed)
    where = {**dict.fromkeys(side_b, sink), **dict.fromkeys(side_a, source)}
    adj: dict[str, dict] = defaultdict(lambda: defaultdict(float))
    for u, v, cap in switch_links(net):
        if u in removed or v in removed:
            continue
        a, b = where.get(u, u), where.get(v, v)
        if a != b:
            adj[a][b] += cap
            adj[b][a] += cap
    if source not in adj or sink not in adj:
        return 0.0
    rep = twin_classes({n: dict(nbrs) for n, nbrs in adj.items()},
                       lambda n: n if n in (source, sink) else net.nodes[n]["role"])
    caps: dict[tuple, float] = defaultdict(float)
    for u, nbrs in adj.items():
        for v, cap in nbrs.items():
            caps[rep[u], rep[v]] += cap
    flow_graph = nx.DiGraph()
    flow_graph.add_edges_from((u, v, {"capacity": c}) for (u, v), c in caps.items())
    return float(nx.maximum_flow_value(flow_graph, source, sink))


@dataclass
class Cut:
    """A balanced cut through a network: which tiers it crosses, its two sides, NIC bandwidth on each."""

    name: str
    tiers: tuple[str, ...]
    side_a: list
    side_b: list
    demand_gbps: float  # NIC bandwidth of the smaller side


def nic_gbps(net: nx.Graph) -> dict[str, float]:
    """Leaf -> bandwidth of the NIC links on it."""
    out: dict[str, float] = defaultdict(float)
    for n, d in net.nodes(data=True):
        if d["role"] == "endpoints":
            e = net.edges[n, d["leaf"]]
            out[d["leaf"]] += e["count"] * e["gbps"]
    return out


def cuts(net: nx.Graph) -> list[Cut]:
    """Bisections to check: leaves in halves (inside the largest pod, for a 3-tier fabric), and for
    a 3-tier fabric of two pods or more, pods in halves; halves as even in NIC bandwidth as whole
    leaves (pods) allow. The last cut is the site's bisection."""
    bw = nic_gbps(net)
    leaves = list(bw)
    pods: dict[int, list] = defaultdict(list)
    for leaf in leaves:
        pods[net.nodes[leaf].get("pod", 0)].append(leaf)

    def halves(name, tiers, groups):
        sizes = list(itertools.accumulate(sum(bw[x] for x in g) for g in groups))
        half = min(range(1, len(groups)), key=lambda i: abs(2 * sizes[i - 1] - sizes[-1]))
        a = [x for g in groups[:half] for x in g]
        b = [x for g in groups[half:] for x in g]
        return Cut(name, tiers, a, b, min(sum(bw[x] for x in a), sum(bw[x] for x in b)))

    if len(leaves) < 2:
        return []
    if len(pods) > 1 or 0 not in pods:
        biggest = max(pods.values(), key=len)
        out = [halves("leaves of one pod in halves", ("leaf",), [[x] for x in biggest])] if len(biggest) > 1 else []
        if len(pods) > 1:
            out.append(halves("pods in halves", ("leaf", "spine"), list(pods.values())))
        return out
    return [halves("leaves in halves", ("leaf",), [[x] for x in leaves])]


def most_loaded(net: nx.Graph, role: str) -> tuple[float, str] | None:
    """(link bandwidth, switch) of the switch of a role carrying the most over its links to other switches (all of
    a spine's or core's links), the first of equals."""
    load: dict = defaultdict(float)
    for u, v, gbps in switch_links(net):
        load[u] += gbps
        load[v] += gbps
    loads = [(load[n], n) for n, r in net.nodes(data="role") if r == role]
    return max(loads, key=lambda x: x[0]) if loads else None


#: distinct_networks of each graph alive
NETWORKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def distinct_networks(graph: nx.Graph) -> list[tuple[nx.Graph, int]]:
    """The site's networks (planes, rails) as (one subgraph, number of identical copies), found once per graph
    (the audit's checks and the resilience figures each ask; the graph and the subgraphs are only read)."""
    if graph not in NETWORKS:
        NETWORKS[graph] = split_networks(graph)
    held = NETWORKS[graph]
    return [(graph, 1)] if held is None else held


def split_networks(graph: nx.Graph) -> list[tuple[nx.Graph, int]] | None:
    """distinct_networks of a graph, None when the graph is one network (kept apart from the graph it is
    held for: NETWORKS holds it by a weak key)."""
    members: dict[int, list] = defaultdict(list)
    for n, d in graph.nodes(data=True):
        members[d["network"]].append(n)
    if len(members) == 1:
        return None
    links: dict[int, list] = defaultdict(list)
    for u, _, e in graph.edges(data=True):
        links[graph.nodes[u]["network"]].append((e["tier"], e["count"]))
    seen: dict[tuple, list] = {}
    for k in sorted(members):
        shape = (tuple(sorted((graph.nodes[n]["role"], graph.nodes[n]["model"], graph.nodes[n]["ports"])
                              for n in members[k])), tuple(sorted(links[k])))
        seen.setdefault(shape, [k, 0])[1] += 1
    out = []
    for k, copies in seen.values():
        sub = nx.Graph()  # a copy in the graph's order (subgraph views iterate in set order)
        sub.add_nodes_from((n, graph.nodes[n]) for n in members[k])
        sub.add_edges_from((u, v, d) for u in members[k] for v, d in graph.adj[u].items())
        out.append((sub, copies))
    return out
