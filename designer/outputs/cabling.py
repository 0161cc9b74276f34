"""Cabling plan (cabling.csv) and switch-level graph (fabric.graphml) of a design.

cabling.csv has one row per link, port to port, in the graph order of designer.audit.fabric: a node's
NIC k is port ``p<k>``; a switch port is a physical cage, ``p<cage>`` when the link takes the whole cage and
``p<cage>/<lane>`` when it is a lane of one (``Catalog.port``: an 800G cage of a ``64x800,128x400`` switch
holds two 400G links, ``p1/1`` and ``p1/2``). A switch fills its cages with down links from p1 and its up
links after its declared down ports (a leaf with 32 down ports of whole cages has uplinks from p33); mesh
links use up ports. ``cage_share`` and ``peer_cage_share`` say what serves a shared cage at each switch end:
``2-port module`` (a twin-port transceiver, one module a cage), ``1:2 splitter cable`` (a DAC or AOC) or, for a
module carrying fewer links than the cage has lanes, ``1:4 breakout, 1 link(s) a module``; else ``whole cage``
(blank at a NIC). Inter-site links (one a coherent wavelength or a gray link) join DCI routers,
on the line-side cages the design gives each router model (RouterPorts: a 400G module a lane of an 800G cage,
``lane of a 1:2 cage``); each DCI attachment link joins a router port on the fabric-side cages to a free leaf
down port after the nodes' (attachment_links). ``links`` is 1 on every row unless the plan would
exceed GROUP_ABOVE rows: then the NICs on one leaf share one row (device ``<leaf>-nodes``, port range
``p1/1-p16/2`` on the leaf, ``links`` = NICs), which keeps a multi-million-NIC plan a few hundred thousand rows.

``rack``/``peer_rack`` place each end on the site's floor as models.layout lays it out: node k (from 0) in
rack k // nodes_per_rack, numbered along rows of racks_per_row (``<site>-r03-07``: row 3, rack 7); a rail
leaf in its scalable unit's network rack (``<site>-su2-net``); a top-of-rack leaf in the rack of the middle
node it serves; spines and cores in the network row (``<site>-net-spine``, ``<site>-net-core``), DCI routers
in ``<site>-net-dci``. ``cable_id`` numbers the cables of a site (``<site>-c0000001``) and the wavelengths of
a route (``<a>--<b>-w00001``).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from pathlib import Path

import networkx as nx

from designer.audit.fabric import (
    Catalog,
    build_intersite_graph,
    catalog,
    device_prefix,
    members,
    port_name,
    port_names,
    site_graph,
)
from designer.audit.flows import RANK
from designer.outputs.export import csv_cell, csv_line, csv_suffixed
from designer.outputs.graphml import write_graphml as write_graphml_file
from designer.outputs.graphml import write_parts

COLUMNS = ["site", "device", "port", "cage_share", "peer_device", "peer_port", "peer_cage_share", "speed_gbps",
           "item", "kind", "length_m", "length_class", "links", "rack", "peer_rack", "cable_id"]
RAIL = ("rail_optimized", "rail_only")  # topologies whose leaves serve one NIC of each node (a rail)
GROUP_ABOVE = 2_000_000
GRAPHML_NODE = ("role", "model", "ports", "site", "plane", "network", "pod", "rail", "su")
GRAPHML_EDGE = ("count", "gbps", "tier", "item")
LENGTH_CLASSES = ((5, "in-rack"), (30, "in-row"), (100, "data hall"), (2000, "campus"), (120_000, "metro dwdm"))


def length_class(metres: float) -> str:
    return next((name for limit, name in LENGTH_CLASSES if metres <= limit), "long-haul dwdm")


def site_graphs(solution: dict) -> list[nx.Graph]:
    return [site_graph(s, solution) for s in solution["sites"] if s["open"]]


def write_cabling(solution: dict, path: Path, graphs: list[nx.Graph] | None = None) -> None:
    """Write cabling.csv: lines joined by hand from cells made as CSV text (csv_cell), each ended CRLF as the csv
    module ends them (a 1M-GPU design's 2.3M rows: 23.0 -> 10.8-12.0 s)."""
    graphs = site_graphs(solution) if graphs is None else graphs
    group = sum(d["ports"] for g in graphs for _, d in g.nodes(data=True)) // 2 > GROUP_ABOVE  # each link's 2 ends
    with open(path, "w", newline="", encoding="utf-8") as handle:
        handle.write(csv_line([csv_cell(c) for c in COLUMNS]))
        for graph in graphs:
            write_lines(handle, fabric_rows(graph, solution, group))
        write_lines(handle, coherent_rows(solution))


def write_lines(handle, lines, batch: int = 20_000) -> None:
    """Write text lines a batch at a time."""
    lines = iter(lines)
    while chunk := list(itertools.islice(lines, batch)):
        handle.write("".join(chunk))


class Floor:
    """Where a site's devices stand (the module docstring)."""

    def __init__(self, graph: nx.Graph, entry: dict):
        lay = entry.get("layout") or {}
        self.graph, self.prefix = graph, device_prefix(graph.graph["site"])
        self.per_rack = int(lay.get("nodes_per_rack") or 1)
        self.per_row = int(lay.get("racks_per_row") or 20)
        self.rail = entry.get("topology") in RAIL
        self.racks: dict[str, str] = {}
        for group, data in graph.nodes(data=True):
            if data["role"] == "endpoints":
                nodes = sorted({n for n, _ in members(graph, group, graph.graph["rails"])})
                for leaf in graph.adj[group]:
                    self.racks.setdefault(leaf, self.leaf_rack(leaf, nodes))

    def node_rack(self, k: int) -> str:
        index = k // self.per_rack
        return f"{self.prefix}-r{index // self.per_row + 1:02d}-{index % self.per_row + 1:02d}"

    def leaf_rack(self, leaf: str, nodes: list[int]) -> str:
        su = self.graph.nodes[leaf].get("su")
        if self.rail and su:
            return f"{self.prefix}-su{su}-net"
        return self.node_rack(nodes[len(nodes) // 2]) if nodes else f"{self.prefix}-net-leaf"

    def rack(self, device: str) -> str:
        role = self.graph.nodes[device]["role"]
        return self.racks.get(device) or f"{self.prefix}-net-{role}"


def fabric_rows(graph: nx.Graph, solution: dict, group: bool):
    """The CSV lines of one site's fabric links, in graph order, joined from cells made once (export.csv_cell: each
    device's name and rack; each link kind's speed, item and length as one text); port names need no quoting."""
    site = graph.graph["site"]
    entry = next(s for s in solution["sites"] if s["name"] == site)
    width = max(4, len(str(entry["nodes"])))
    prefix = device_prefix(site)
    floor = Floor(graph, entry)
    cat = catalog(solution)
    nodes = dict(graph.nodes(data=True))
    rank = {n: RANK[d["role"]] for n, d in nodes.items()}
    names = {n: csv_cell(n) for n in nodes}
    racks = {n: csv_cell(floor.rack(n)) for n, d in nodes.items() if d["role"] != "endpoints"}
    site_cell, cable_head, node_head = csv_cell(site), csv_cell(f"{prefix}-c"), csv_cell(f"{prefix}-node-")
    taken: dict[tuple, int] = defaultdict(int)
    origins: dict[tuple, tuple] = {}
    shares: dict[tuple, str] = {}
    commons: dict[tuple, str] = {}  # a link kind's gbps, item, kind, length_m, length_class cells
    cables = itertools.count(1)

    def origin(switch: str, up: bool, e: dict) -> tuple:
        key = (switch, up, e["gbps"])
        if key not in origins:
            origins[key] = cat.port_origin(nodes[switch], up, e["gbps"])
        return origins[key]

    def ports(switch: str, up: bool, e: dict, count: int) -> list[str]:
        first = taken[switch, up] + 1
        taken[switch, up] += count
        return port_names(origin(switch, up, e), first, count)

    def next_port(switch: str, up: bool, e: dict) -> str:
        taken[switch, up] += 1
        return port_name(origin(switch, up, e), taken[switch, up])

    def share(switch: str, e: dict) -> str:
        key = (nodes[switch]["model"], e["gbps"], e["item"], e["kind"])
        if key not in shares:
            shares[key] = csv_cell(share_of(cat.lanes(key[0], e["gbps"]), e, cat))
        return shares[key]

    def common(e: dict) -> str:
        key = (e["gbps"], e["item"], e["kind"], e["length_m"])
        if key not in commons:
            commons[key] = ",".join([str(e["gbps"]), csv_cell(e["item"]), csv_cell(e["kind"]), str(e["length_m"]),
                                     csv_cell(length_class(e["length_m"]))])
        return commons[key]

    def cable_ids(count: int) -> list[str]:
        return [csv_suffixed(cable_head, f"{k:07d}") for k in itertools.islice(cables, count)]

    node_cells: dict[int, tuple[str, str]] = {}  # a node's name and rack, made once for its NICs

    def node(k: int) -> tuple[str, str]:
        if k not in node_cells:
            node_cells[k] = (csv_suffixed(node_head, f"{k + 1:0{width}d}"), csv_cell(floor.node_rack(k)))
        return node_cells[k]

    for u, v, e in graph.edges(data=True):
        low, high = (u, v) if rank[u] <= rank[v] else (v, u)
        high_share, high_rack, high_name, kind = share(high, e), racks[high], names[high], common(e)
        if nodes[low]["role"] == "endpoints":
            nics = members(graph, low, graph.graph["rails"])
            if group:
                span = ports(high, False, e, e["count"])
                span = f"{span[0]}-{span[-1]}" if e["count"] > 1 else span[0]
                yield csv_line([site_cell, names[low], "", "", high_name, span, high_share, kind, str(e["count"]),
                                csv_cell(f"{floor.node_rack(nics[0][0])}..{floor.node_rack(nics[-1][0])}"), high_rack,
                                *cable_ids(1)])
                continue
            for (k, nic), port, cable in zip(nics, ports(high, False, e, len(nics)), cable_ids(len(nics))):
                name, rack = node(k)
                yield (f"{site_cell},{name},p{nic + 1},,{high_name},{port},{high_share},{kind},1,{rack},{high_rack},"
                       f"{cable}\r\n")
            continue
        count, mesh = e["count"], e["tier"] == "leaf_leaf"
        low_share, low_rack, low_name = share(low, e), racks[low], names[low]
        if count == 1:  # most switch-to-switch links of a large fabric: one row, no lists
            yield (f"{site_cell},{low_name},{next_port(low, True, e)},{low_share},{high_name},"
                   f"{next_port(high, mesh, e)},{high_share},{kind},1,{low_rack},{high_rack},"
                   f"{csv_suffixed(cable_head, f'{next(cables):07d}')}\r\n")
            continue
        for low_port, high_port, cable in zip(ports(low, True, e, count), ports(high, mesh, e, count),
                                              cable_ids(count)):
            yield (f"{site_cell},{low_name},{low_port},{low_share},{high_name},{high_port},{high_share},{kind},1,"
                   f"{low_rack},{high_rack},{cable}\r\n")
    for router, model, router_port, leaf, e in attachment_links(graph, entry, solution, cat):
        router_share = csv_cell(share_of(cat.lanes(model, e["gbps"]), e, cat))
        yield csv_line([site_cell, csv_cell(router), router_port, router_share, names[leaf], *ports(leaf, False, e, 1),
                        share(leaf, e), common(e), "1", csv_cell(f"{prefix}-net-dci"), racks[leaf], *cable_ids(1)])


def share_of(lanes: int, e: dict, cat: Catalog) -> str:
    """What serves a cage of ``lanes`` links at a switch end of link e (the module docstring's cage_share)."""
    per_module = int(cat.optics.get(e["item"], {}).get("links_per_module") or 1)
    if lanes == 1:
        return "whole cage"
    if e["kind"] in ("dac", "aoc"):
        return f"1:{lanes} splitter cable"
    return f"{lanes}-port module" if per_module == lanes else f"1:{lanes} breakout, {per_module} link(s) a module"


def router_names(entry: dict) -> list[tuple[str, str]]:
    """(device name, model) of a site's DCI routers, in the order of its dci tiers."""
    models = [t["model"] for t in entry["tiers"] if t["tier"] == "dci" for _ in range(t["count"])]
    return [(f"{device_prefix(entry['name'])}-dci-{i + 1:02d}", model) for i, model in enumerate(models)]


class RouterPorts:
    """A site's DCI router ports: each kind of port (``line`` at a DCI optic's speed, ``fabric`` at the NIC speed)
    has the cages its dci tier gives it (``cages_by_use``, models.network.define_dci_routers); a tier's cages are
    handed out in order, router after router and cage after cage, to its kinds in the order listed, and a kind's
    ports fill its cages' lanes in order (``take``). A port past its kind's cages (a design whose cages do not hold
    its ports: the audit's check_router_cages says so) is named after the last cage of the site's last router."""

    def __init__(self, entry: dict, cat: Catalog):
        names = iter(router_names(entry))
        self.slots: dict[tuple, list] = defaultdict(list)  # (side, gbps) -> [(router, model, port), ...]
        self.last = ("", "", 0)
        for t in (t for t in entry["tiers"] if t["tier"] == "dci"):
            routers = [next(names)[0] for _ in range(t["count"])]
            cages = iter([(r, c) for r in routers for c in range(1, cat.cages(t["model"]) + 1)])
            for use in t.get("cages_by_use") or []:
                lanes = cat.lanes(t["model"], use["gbps"])
                for router, cage in itertools.islice(cages, use["cages"]):
                    self.slots[use["side"], use["gbps"]] += [
                        (router, t["model"], f"p{cage}" if lanes == 1 else f"p{cage}/{lane}")
                        for lane in range(1, lanes + 1)]
            if routers:
                self.last = (routers[-1], t["model"], cat.cages(t["model"]))
        self.taken: dict[tuple, int] = defaultdict(int)

    def take(self, side: str, gbps: int) -> tuple[str, str, str]:
        """(router, model, port) of the next port of a kind."""
        key = (side, int(gbps))
        k = self.taken[key]
        self.taken[key] += 1
        if k < len(self.slots[key]):
            return self.slots[key][k]
        router, model, cages = self.last
        return router, model, f"p{cages}"


def attachment_links(graph: nx.Graph, entry: dict, solution: dict, cat: Catalog):
    """(router, its model, its port, leaf, link) of each DCI attachment link: an attachment's NIC-like ports go one to a
    leaf of each rail and plane (a leaf of each plane for other topologies), on down ports the nodes leave free,
    leaves in graph order; router ports from RouterPorts (the fabric side)."""
    att = entry.get("dci_attachment")
    if not att or not router_names(entry):
        return
    ports = RouterPorts(entry, cat)
    rails = graph.graph["rails"]
    free: dict[tuple, list[list]] = defaultdict(list)
    for leaf, d in graph.nodes(data=True):
        if d["role"] != "leaf":
            continue
        rail = d.get("rail") or (d["network"] % rails + 1 if entry["topology"] == "rail_only" else None)
        used = sum(e["count"] for m, e in graph.adj[leaf].items() if graph.nodes[m]["role"] == "endpoints")
        free[d["plane"], rail].append([leaf, int(d["down_ports"]) - used])
    rail_based = entry["topology"] in RAIL
    first: dict[tuple, int] = defaultdict(int)  # per key, its first leaf with a free port (they fill in order)
    for cable in att["cables"]:
        e = {"gbps": int(att["gbps"]), "item": cable["item"], "kind": cable["kind"], "length_m": float(att["length_m"])}
        for _ in range(int(cable["attachments"])):
            for r in range(int(att["ports_per_attachment"])):
                key = (r // rails + 1, r % rails + 1 if rail_based else None)
                slots = free[key]
                while first[key] < len(slots) and slots[first[key]][1] <= 0:
                    first[key] += 1
                if first[key] == len(slots):
                    continue  # no free leaf port: the audit reports it (check_dci_attachment)
                slot = slots[first[key]]
                slot[1] -= 1
                yield *ports.take("fabric", e["gbps"]), slot[0], e


def coherent_rows(solution: dict):
    """The CSV line of each wavelength (or gray link): a DCI module in a router port at each end of the route, from
    each site's RouterPorts (the line side at the module's speed)."""
    cat = catalog(solution)
    ports = {s["name"]: RouterPorts(s, cat) for s in solution["sites"] if s["open"]}

    def port(site: str, gbps: int) -> tuple[str, str, str]:
        if site not in ports:
            return f"{device_prefix(site)}-dci-??", "", ""
        router, model, name = ports[site].take("line", gbps)
        lanes = cat.lanes(model, gbps) if model else 1
        return router, name, "whole cage" if lanes == 1 else f"lane of a 1:{lanes} cage"

    graph = build_intersite_graph(solution)
    for a, b, d in graph.edges(data=True):
        if not d.get("used"):
            continue
        gbps = int(d["capacity_gbps"] / d["wavelengths"]) if d["wavelengths"] else 0
        metres = d["distance_km"] * 1000
        for k in range(d["wavelengths"]):
            (ra, pa, sa), (rb, pb, sb) = port(a, gbps), port(b, gbps)
            yield csv_line([csv_cell(v) for v in (f"{a}--{b}", ra, pa, sa, rb, pb, sb, gbps, d["coherent_model"],
                                                  d["optic_kind"], metres, length_class(metres), 1,
                                                  f"{device_prefix(a)}-net-dci", f"{device_prefix(b)}-net-dci",
                                                  f"{device_prefix(a)}--{device_prefix(b)}-w{k + 1:05d}")])


def write_graphml(solution: dict, path: Path, graphs: list[nx.Graph] | None = None) -> None:
    """The sites' fabrics as one switch-level graph (endpoint groups included) in GraphML, with the
    attributes a graph tool needs (cable kind and length follow from ``item`` and ``tier``)."""
    graphs = site_graphs(solution) if graphs is None else graphs
    attributes = {"name": str(solution.get("name", ""))}
    nodes = [(n, {k: v for k, v in d.items() if k in GRAPHML_NODE}) for g in graphs for n, d in g.nodes(data=True)]
    edges = [(u, v, {k: d[k] for k in GRAPHML_EDGE}) for g in graphs for u, v, d in g.edges(data=True)]

    def whole() -> nx.Graph:
        graph = nx.Graph(**attributes)
        graph.add_nodes_from(nodes)
        graph.add_edges_from(edges)
        return graph

    if len({n for n, _ in nodes}) < len(nodes):  # sites sharing a device name: networkx merges them
        write_graphml_file(whole(), path)
    else:  # the sites' graphs listed one after another, as the graph of them all lists its nodes and edges
        write_parts(attributes, nodes, edges, path, whole)
