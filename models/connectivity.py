"""Connectivity cuts: rows every design meets that the LP relaxation of the route flow may break.

A design's open sites form one network over used routes, each joining two open sites (models.network.define_routes,
define_connectivity: one commodity flows from a root to every open site, at most (|S| - 1) use_r on a route). Its LP
relaxation can carry that flow on a small share of a route and split the root over several groups of sites, each
supplying itself: the LP then opens groups of sites no route joins (16 candidate sites, 40 switch models: three
groups, where every design of them has none).

For a set A of sites, a site a in A and a site b outside it, a design that opens both uses a route across A's
boundary delta(A) (the path from a to b leaves A, over routes between open sites):

    sum_{r in delta(A)} use_r >= open_a + open_b - 1

and with a or b closed its right side is at most 0. violated_cuts finds, for an LP point, the most violated such
row of each pair of sites the point opens by more than half in sum: the least cut between a and b in the route graph
weighted by use_r is the least edge on their path in its Gomory-Hu tree, and A the side of a once that edge is
removed. The graph holds the sites the point opens (a route to a closed site carries no more than its open value):
at 50 candidate sites the tree then costs a max-flow per site the LP opens, not per candidate. The rows only cut
off LP points: the optimum of the model is the same with them (tests/test_connectivity).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import networkx as nx

TOLERANCE = 1e-4  # a row violated by less is not worth a row


@dataclass(frozen=True)
class Cut:
    """The row sum_{r in routes} use_r >= open_a + open_b - 1: ``routes`` cross between a side holding ``a`` and
    the rest, which holds ``b``."""

    routes: tuple
    a: str
    b: str


def violated_cuts(opened: dict, used: dict, ends: dict) -> list[Cut]:
    """The rows (Cut) the LP point (``opened``: site -> open_s, ``used``: route -> use_r) breaks by more than
    TOLERANCE, one per side found; ``ends``: route -> (site a, site b)."""
    live = [s for s in opened if opened[s] > TOLERANCE]
    pairs = [(a, b) for a, b in itertools.combinations(live, 2) if opened[a] + opened[b] - 1 > TOLERANCE]
    if not pairs:
        return []
    graph = nx.Graph()  # the sites the point opens: a route to a closed one carries use_r <= open <= TOLERANCE
    graph.add_nodes_from(live)
    for r, (a, b) in ends.items():
        weight = max(0.0, used.get(r, 0.0))
        if a not in graph or b not in graph:
            continue
        if graph.has_edge(a, b):
            graph[a][b]["capacity"] += weight
        else:
            graph.add_edge(a, b, capacity=weight)
    groups = list(nx.connected_components(graph))
    component = {s: k for k, group in enumerate(groups) for s in group}
    trees = {k: nx.gomory_hu_tree(graph.subgraph(group)) if len(group) > 1 else None for k, group in enumerate(groups)}
    sides: dict[frozenset, Cut] = {}
    for a, b in pairs:
        tree = trees[component[a]]
        if component[a] != component[b]:  # no route joins them at all: no cut weighs less
            side = frozenset(s for s, k in component.items() if k == component[a])
        else:
            path = nx.shortest_path(tree, a, b)
            weight, (u, v) = min((tree[u][v]["weight"], (u, v)) for u, v in zip(path, path[1:]))
            if weight >= opened[a] + opened[b] - 1 - TOLERANCE:
                continue
            tree.remove_edge(u, v)
            side = frozenset(nx.node_connected_component(tree, a))
            tree.add_edge(u, v, weight=weight)
        if side not in sides:
            crossing = tuple(r for r, (u, v) in ends.items() if (u in side) != (v in side))
            sides[side] = Cut(crossing, a, b)
    return list(sides.values())
