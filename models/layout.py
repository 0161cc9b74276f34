"""Cable lengths from an implicit floor layout, when the workbook has no floor plan.

Racks of nodes stand in rows of ``racks_per_row`` racks, ``rack_pitch_m`` apart along a row and
``row_pitch_m`` apart across rows; a site's racks hold ``nodes_per_rack`` nodes each (its rack power over
a node's power, at least one: a rack-scale node is a rack of its own). Cables run up from the device,
along overhead trays in straight runs along and across rows, and down to the other device:

    length = (along + across + 2 x rise_m) x (1 + slack)

where ``along``/``across`` is the tray distance between the two racks. A group of R racks served from one
point (a leaf, a pod's aggregation switches, the spines) fills ceil(R / racks_per_row) rows with the
serving network rack in the middle, so its farthest rack is
``ceil(min(R, racks_per_row) / 2)`` rack pitches along and ``floor(rows / 2)`` row pitches across.

Per tier (a mode's d1 down ports at its leaves, d2 at aggregation switches; rails NICs per node and plane):
- node-leaf: a ToR leaf (leaf_spine, fat_tree_3, leaf_mesh) serves ceil(d1 / rails) nodes; when they fit
  in one rack the leaf sits in that rack and the run is ``in_rack_m``. A rail leaf (rail_optimized,
  rail_only) serves one NIC of each of d1 nodes (a scalable unit): the SU's rail leaves stand in a
  network rack among the SU's racks, at least one rack pitch from any node.
- leaf-spine (2-tier) and leaf-leaf (mesh): the spines (or the mesh's far leaf) across the fabric's whole
  footprint (the most nodes the fabric holds at the site); a mesh link spans the footprint twice.
- 3-tier: leaf to aggregation across a pod (d2 leaves' nodes), aggregation to core across the footprint.
- DCI attachment (router to leaf): the DCI routers stand in the network row with the fabric's top tier, so
  a router-leaf link runs across the whole footprint.
- support networks (node to storage or management switch): a switch serving n nodes stands in their rack when
  they fit in one (``in_rack_m``), else in a network rack among their racks, as a rail leaf.

The footprint is the most nodes the fabric holds at the site: its size limit, or the site's node limit
(space, power and the job) rounded up to a power of two (models.modes.hall_nodes), so the cables reach
whatever size the design settles at. A length the planner gives (project ``cable_m_*``)
replaces the layout's for its tier.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

TIERS = ("node_leaf", "leaf_spine", "spine_core")
ATTACH = "dci_attach"  # DCI router to leaf: the routers stand in the network row, across the hall from the leaves


@dataclass(frozen=True)
class Layout:
    """One site's floor: nodes per rack and the hall's geometry (metres)."""

    nodes_per_rack: int
    rack_pitch_m: float
    row_pitch_m: float
    racks_per_row: int
    rise_m: float
    in_rack_m: float
    slack: float
    fixed: tuple = ()  # ((tier, metres), ...) the planner's lengths, replacing the layout's

    def run(self, racks: int, rail: bool = False) -> float:
        """Longest cable from a serving point in the middle of ``racks`` racks to the farthest of them."""
        rows = math.ceil(racks / self.racks_per_row)
        along = math.ceil(min(racks, self.racks_per_row) / 2)
        if rail:
            along = max(along, 1)
        across = rows // 2
        return (along * self.rack_pitch_m + across * self.row_pitch_m + 2 * self.rise_m) * (1 + self.slack)

    def racks(self, nodes: int) -> int:
        return max(1, math.ceil(nodes / self.nodes_per_rack))


def site_layout(project: dict, rack_kw: float, node_kw: float, floor: dict | None = None) -> Layout:
    """The layout of a site whose racks take ``rack_kw`` kW, for nodes of ``node_kw`` kW each; a floorplan
    row (``floor``) gives the site's own rows, nodes per rack and pitches."""
    fixed = tuple((tier, float(project[f"cable_m_{tier}"])) for tier in (*TIERS, ATTACH)
                  if project.get(f"cable_m_{tier}") is not None)
    floor = {k: v for k, v in (floor or {}).items() if v is not None and v == v}
    per_rack = int(floor.get("nodes_per_rack") or max(1, int(rack_kw // node_kw + 1e-9)))
    return Layout(nodes_per_rack=per_rack, rack_pitch_m=float(floor.get("rack_pitch_m", project["rack_pitch_m"])),
                  row_pitch_m=float(floor.get("row_pitch_m", project["row_pitch_m"])),
                  racks_per_row=int(floor.get("racks_per_row", project["racks_per_row"])),
                  rise_m=float(project["cable_rise_m"]), in_rack_m=float(project["cable_in_rack_m"]),
                  slack=float(project["cable_slack"]), fixed=fixed)


def tier_lengths(layout: Layout, topology: str, tiers: int, d1: int, d2: int, rails: int,
                 footprint: int) -> dict[str, float]:
    """Length in metres of each cable tier of a fabric holding up to ``footprint`` nodes (module docstring);
    the leaf-leaf links of a 2-tier mesh are under ``leaf_spine``."""
    rail = topology in ("rail_optimized", "rail_only")
    served = min(footprint, d1 if rail else math.ceil(d1 / rails))
    racks = layout.racks(served)
    lengths = {"node_leaf": layout.in_rack_m if racks == 1 and not rail else layout.run(racks, rail)}
    hall = layout.racks(footprint)
    if topology == "leaf_mesh" and tiers == 2:
        lengths["leaf_spine"] = 2 * layout.run(hall) - 2 * layout.rise_m * (1 + layout.slack)
    elif tiers == 2:
        lengths["leaf_spine"] = layout.run(hall)
    elif tiers == 3:
        pod = min(footprint, math.ceil(d2 * d1 / rails))
        lengths["leaf_spine"] = layout.run(layout.racks(pod))
        lengths["spine_core"] = layout.run(hall)
    lengths = {tier: round(metres, 1) for tier, metres in lengths.items()}
    lengths.update({tier: metres for tier, metres in layout.fixed if tier in lengths})
    return lengths


def attach_length(layout: Layout, footprint: int) -> float:
    """Length in metres of a DCI router's link to a leaf (module docstring), or the planner's."""
    fixed = dict(layout.fixed)
    return fixed[ATTACH] if ATTACH in fixed else round(layout.run(layout.racks(footprint)), 1)


def support_length(layout: Layout, nodes_per_switch: float) -> float:
    """Length in metres of a support network's node link (module docstring): its switch serves
    ceil(nodes_per_switch) nodes."""
    racks = layout.racks(math.ceil(nodes_per_switch - 1e-9))
    return layout.in_rack_m if racks == 1 else round(layout.run(racks, rail=True), 1)
