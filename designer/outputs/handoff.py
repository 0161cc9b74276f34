"""Hand-offs to operations: Slurm topology files and the node map, from the audit's site graphs.

- ``topology.conf`` (Slurm topology/tree): a leaf_spine, fat_tree_3 or leaf_mesh site lists each plane-1
  leaf with its nodes and each switch above with the switches below it; a rail-optimized or rail-only
  site lists one logical switch per scalable unit (the SU's rail leaves, ``<site>-su<k>``) holding the SU's
  nodes, under one logical switch for the site's spines (``<site>-spines``; for rail_only the rails join
  over NVLink, not a spine). Sites are separate trees: a job does not span sites.
- ``topology-block.conf`` (Slurm topology/block): one block per scalable unit (rail designs) or per leaf's
  nodes (others), named ``<site>-b<k>``; BlockSizes is the base block, the nodes one block holds.
- ``nodes.csv``: one row per NIC: site, node, NIC, plane, rail, leaf, scalable unit, rack (the rack as
  cabling.csv places it).

Node names are cabling.csv's (``<site>-node-0001``); hostlists follow Slurm's expression syntax
(``<site>-node-[0001-0032,0040]``).
"""

from __future__ import annotations

import itertools
import operator
import re
from collections import defaultdict
from pathlib import Path

import networkx as nx

from designer.audit.fabric import device_prefix, members
from designer.outputs.cabling import RAIL, Floor
from designer.outputs.export import csv_cell, csv_line, csv_suffixed

NODE_COLUMNS = ["site", "node", "nic", "plane", "rail", "leaf", "scalable_unit", "rack"]


def hostlist(prefix: str, numbers, width: int) -> str:
    """Slurm hostlist expression of ``prefix`` + zero-padded numbers: ``p[0001-0004,0007]``."""
    nums = sorted(set(numbers))
    if not nums:
        return ""
    if len(nums) == 1:
        return f"{prefix}{nums[0]:0{width}d}"
    ranges, start, prev = [], nums[0], nums[0]
    for n in nums[1:] + [None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        ranges.append(f"{start:0{width}d}" if start == prev else f"{start:0{width}d}-{prev:0{width}d}")
        if n is not None:
            start = prev = n
    return f"{prefix}[{','.join(ranges)}]"


def names_list(names) -> str:
    """Switch names as Slurm hostlist expressions, one per prefix: ``s-leaf-[001-016]``."""
    groups: dict[tuple[str, int], list[int]] = defaultdict(list)
    plain = []
    for name in names:
        match = re.match(r"^(.*?)(\d+)$", name)
        if match:
            groups[match[1], len(match[2])].append(int(match[2]))
        else:
            plain.append(name)
    return ",".join([hostlist(prefix, nums, width) for (prefix, width), nums in sorted(groups.items())] + plain)


class SiteNodes:
    """One site's nodes by leaf and scalable unit, read from its graph."""

    def __init__(self, graph: nx.Graph, entry: dict):
        self.graph, self.entry = graph, entry
        self.prefix = device_prefix(graph.graph["site"])
        self.width = max(4, len(str(entry["nodes"])))
        self.rail = entry.get("topology") in RAIL
        self.by_leaf: dict[str, set[int]] = defaultdict(set)
        self.nics: list[tuple[int, int, str]] = []  # (node, nic, leaf)
        for group, data in graph.nodes(data=True):
            if data["role"] != "endpoints":
                continue
            leaf = data["leaf"]
            for node, nic in members(graph, group, graph.graph["rails"]):
                self.by_leaf[leaf].add(node)
                self.nics.append((node, nic, leaf))
        self.nics.sort()

    def nodes(self, numbers) -> str:
        return hostlist(f"{self.prefix}-node-", (n + 1 for n in numbers), self.width)

    def units(self) -> dict[int, set[int]]:
        """Nodes per scalable unit (rail designs: the nodes under one SU's rail leaves)."""
        out: dict[int, set[int]] = defaultdict(set)
        for leaf, nodes in self.by_leaf.items():
            out[int(self.graph.nodes[leaf].get("su") or 1)] |= nodes
        return dict(sorted(out.items()))

    def plane_one(self, role: str) -> list[str]:
        return sorted(n for n, d in self.graph.nodes(data=True) if d["role"] == role and d.get("plane") == 1
                      and d.get("network") in (0, None))

    def tree_lines(self) -> list[str]:
        site = self.graph.graph["site"]
        lines = [f"# {site}: {self.entry['topology']}, {self.entry['nodes']:,} nodes"]
        if self.rail:
            units = self.units()
            for su, nodes in units.items():
                lines.append(f"SwitchName={self.prefix}-su{su} Nodes={self.nodes(nodes)}")
            if len(units) > 1:
                names = hostlist(f"{self.prefix}-su", units, 1)
                lines.append(f"SwitchName={self.prefix}-spines Switches={names}")
            return lines
        for leaf in self.plane_one("leaf"):
            if self.by_leaf.get(leaf):
                lines.append(f"SwitchName={leaf} Nodes={self.nodes(self.by_leaf[leaf])}")
        for role in ("spine", "core"):
            below = {"spine": "leaf", "core": "spine"}[role]
            for switch in self.plane_one(role):
                kids = sorted(n for n in self.graph.adj[switch] if self.graph.nodes[n]["role"] == below)
                if kids:
                    lines.append(f"SwitchName={switch} Switches={names_list(kids)}")
        return lines

    def blocks(self) -> list[set[int]]:
        if self.rail:
            return list(self.units().values())
        return [self.by_leaf[leaf] for leaf in self.plane_one("leaf") if self.by_leaf.get(leaf)]


def site_nodes(solution: dict, graphs: list[nx.Graph]) -> list[SiteNodes]:
    entries = {s["name"]: s for s in solution["sites"]}
    return [SiteNodes(g, entries[g.graph["site"]]) for g in graphs]


def write_topology(sites: list[SiteNodes], path: Path) -> None:
    """topology.conf for Slurm's topology/tree plugin (module docstring)."""
    lines = ["# Slurm topology.conf (TopologyPlugin=topology/tree), written by designer"]
    for s in sites:
        lines += [""] + s.tree_lines()
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_blocks(sites: list[SiteNodes], path: Path) -> None:
    """topology-block.conf for Slurm's topology/block plugin: blocks of the same base size."""
    lines = ["# Slurm topology.conf for TopologyPlugin=topology/block, written by designer"]
    base = 0
    for s in sites:
        lines.append(f"# {s.graph.graph['site']}")
        for k, nodes in enumerate(s.blocks(), 1):
            lines.append(f"BlockName={s.prefix}-b{k} Nodes={s.nodes(nodes)}")
            base = max(base, len(nodes))
    if base:
        lines.append(f"BlockSizes={base}")
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_node_map(sites: list[SiteNodes], path: Path) -> None:
    """nodes.csv: one row per NIC (module docstring), joined from cells made once (export.csv_cell: a node's name
    and rack, a leaf's name and unit), not once per NIC (a 1M-GPU design: 1M rows, 4.8 -> 0.9 s)."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        handle.write(csv_line([csv_cell(c) for c in NODE_COLUMNS]))
        for s in sites:
            floor = Floor(s.graph, s.entry)
            rails = s.graph.graph["rails"]
            site = csv_cell(s.graph.graph["site"])
            leaves = {leaf: f"{csv_cell(leaf)},{csv_cell(s.graph.nodes[leaf].get('su') or '')}" for leaf in s.by_leaf}
            head = csv_cell(f"{s.prefix}-node-")
            nic_cells = {nic: f"{nic + 1},{nic // rails + 1},{nic % rails + 1}" for nic in {k for _, k, _ in s.nics}}
            for node, nics in itertools.groupby(s.nics, key=operator.itemgetter(0)):
                first = f"{site},{csv_suffixed(head, f'{node + 1:0{s.width}d}')},"
                rack = csv_cell(floor.node_rack(node))
                handle.write("".join([f"{first}{nic_cells[nic]},{leaves[leaf]},{rack}\r\n" for _, nic, leaf in nics]))


def write_handoffs(solution: dict, graphs: list[nx.Graph], folder: Path) -> None:
    """topology.conf, topology-block.conf and nodes.csv into an output folder."""
    sites = site_nodes(solution, graphs)
    write_topology(sites, Path(folder) / "topology.conf")
    write_blocks(sites, Path(folder) / "topology-block.conf")
    write_node_map(sites, Path(folder) / "nodes.csv")
