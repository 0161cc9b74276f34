"""Inter-site data prepared for the model: routes, coherent options, DCI routers, RTT pairs.

Pure Python over validated tables; the Pyomo model only reads what this module returns.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import networkx as nx

FIBER_US_PER_KM = 4.9
C_BAND_GHZ = 4800.0


def rtt_ms(distance_km: float) -> float:
    """Round-trip time over fiber: 2 x 4.9 us/km."""
    return 2 * FIBER_US_PER_KM * distance_km / 1e3


def amplifiers_per_pair(distance_km: float, spacing_km: float) -> int:
    """In-line amplifiers per fiber pair: one every spacing_km, none at the ends."""
    return max(0, math.ceil(distance_km / spacing_km) - 1)


def channels_per_pair(channel_ghz: float) -> int:
    """Wavelengths one fiber pair carries in the C band."""
    return int(C_BAND_GHZ // channel_ghz)


def links_on_pairs(row) -> tuple[int, int]:
    """(links, fiber pairs): ``links`` links of a DCI optic ride on ``pairs`` fiber pairs. A coherent module is
    one wavelength of floor(4800 GHz / channel) a pair; a gray module takes fiber_pairs_per_link pairs."""
    if is_gray(row):
        return 1, int(row.get("fiber_pairs_per_link") or 1)
    return channels_per_pair(float(row["channel_ghz"])), 1


def fiber_gbps(row, pairs: int) -> float:
    """The most ``pairs`` fiber pairs carry with DCI optic ``row`` (every pair lit)."""
    links, per = links_on_pairs(row)
    return pairs * links // per * float(row["gbps"])


def is_gray(row) -> bool:
    """A gray DCI optic: its own fiber pairs, no DWDM, no amplifiers."""
    return str(row.get("kind") or "coherent") == "gray"


def bdp_mb(gbps: float, rtt: float) -> float:
    """Bandwidth-delay product in MB for gbps over an RTT in ms."""
    return gbps * rtt / 8.0


@dataclass(frozen=True)
class Route:
    key: str
    a: str
    b: str
    distance_km: float
    fiber_pairs: int
    cost_per_pair: float  # USD per fiber pair over the whole distance
    amplifiers_per_pair: int
    rtt_ms: float
    coherent: tuple[str, ...]  # DCI optics (coherent or gray) whose reach covers the distance


@dataclass
class InterSite:
    routes: list[Route]
    routers: list[str]  # DCI router models usable with every coherent speed offered
    coherent: list[str]
    excluded_pairs: list[tuple[str, str, str]]  # (a, b, why)
    rtt_arcs: dict[tuple[str, str], list[tuple[str, str, str]]]  # site pair -> (route key, from, to) arcs
    # that lie on some walk between the pair within max_site_rtt_ms (no pair listed when there is no limit)
    notes: list[str]


def prepare(inputs, sites: list[str]) -> InterSite:
    """Routes between usable sites, their coherent options, DCI routers and RTT-limited pairs."""
    project = inputs.project
    max_rtt = project.get("max_site_rtt_ms")
    notes: list[str] = []
    coherent = inputs.coherent
    dci = [m for m, row in inputs.switches.iterrows() if "dci" in row["roles"]]
    speeds = {int(g) for g in coherent["gbps"]}
    routers = [m for m in dci if speeds <= set(inputs.switches.loc[m, "port_modes"])]
    usable_coherent = list(coherent.index)
    if dci and not routers:
        # No router carries every speed: keep the speeds the DCI routers share.
        shared = set.intersection(*(set(inputs.switches.loc[m, "port_modes"]) for m in dci))
        usable_coherent = [c for c in coherent.index if int(coherent.loc[c, "gbps"]) in shared]
        routers = dci if usable_coherent else []
        notes.append("coherent types at speeds no DCI router port carries were left out")

    site_set = set(sites)
    routes: list[Route] = []
    if len(inputs.routes) and not routers:
        notes.append("no DCI router (a switch with role dci) carries the coherent speeds: no route can be used")
    for _, row in (inputs.routes if routers else inputs.routes.iloc[:0]).iterrows():
        a, b = str(row["site_a"]), str(row["site_b"])
        if a not in site_set or b not in site_set:
            continue
        dist = float(row["distance_km"])
        rtt = rtt_ms(dist)
        if max_rtt is not None and rtt > max_rtt:
            notes.append(f"route {a}-{b} ({rtt:.3f} ms RTT) is above max_site_rtt_ms and cannot be used")
            continue
        options = tuple(c for c in usable_coherent if float(coherent.loc[c, "reach_km"]) >= dist)
        if not options:
            notes.append(f"route {a}-{b} ({dist:g} km) is beyond the reach of every coherent type")
            continue
        routes.append(Route(
            key=f"{a}--{b}", a=a, b=b, distance_km=dist, fiber_pairs=int(row["fiber_pairs"]),
            cost_per_pair=float(row["fiber_cost_usd_per_pair_km"]) * dist,
            amplifiers_per_pair=amplifiers_per_pair(dist, float(row["amplifier_spacing_km"])),
            rtt_ms=rtt, coherent=options,
        ))

    graph = nx.Graph()
    graph.add_nodes_from(sites)
    for r in routes:
        graph.add_edge(r.a, r.b, key=r.key, rtt=r.rtt_ms)
    excluded, rtt_arcs = [], {}
    lengths = dict(nx.all_pairs_dijkstra_path_length(graph, weight="rtt"))
    for a, b in itertools.combinations(sites, 2):
        if b not in lengths[a]:
            excluded.append((a, b, "no usable fiber path"))
        elif max_rtt is not None and lengths[a][b] > max_rtt + 1e-12:
            excluded.append((a, b, f"RTT above max_site_rtt_ms {max_rtt:g}"))
        elif max_rtt is not None:
            rtt_arcs[(a, b)] = arcs_within(routes, lengths[a], lengths[b], max_rtt)
    return InterSite(routes, routers, usable_coherent, excluded, rtt_arcs, notes)


def arcs_within(routes: list[Route], from_a: dict, to_b: dict, limit: float) -> list[tuple[str, str, str]]:
    """Directed arcs (route key, u, v) of the routes some a-b walk within ``limit`` ms can use:
    d(a, u) + rtt(u, v) + d(v, b) <= limit, d the least RTT over every usable route."""
    out = []
    for r in routes:
        for u, v in ((r.a, r.b), (r.b, r.a)):
            if u in from_a and v in to_b and from_a[u] + r.rtt_ms + to_b[v] <= limit + 1e-12:
                out.append((r.key, u, v))
    return out
