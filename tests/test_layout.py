"""Cable lengths from the implicit floor layout (models.layout), worked out by hand, and what they do to a
design: the cable the MILP buys reaches the length the layout gives, per site.

Default geometry (project keys): racks 0.6 m apart, rows 2.1 m apart, 20 racks a row, 2 m up to the tray at
each end, 2 m inside a rack, 10% slack. A run from a serving rack to the farthest of R racks:
(ceil(min(R, 20) / 2) x 0.6 + floor(ceil(R / 20) / 2) x 2.1 + 4) x 1.1.
"""

from __future__ import annotations

import pytest

from models.layout import Layout, tier_lengths
from tests.test_model import NODE, SR, design, link_counts, opened, site, tables

DEFAULT = Layout(nodes_per_rack=3, rack_pitch_m=0.6, row_pitch_m=2.1, racks_per_row=20, rise_m=2.0, in_rack_m=2.0,
                 slack=0.1)


def test_runs_along_and_across_rows():
    # 22 racks: 2 rows; 10 pitches along (6.0 m), 1 row across (2.1 m), 4 m up and down: 12.1 m x 1.1
    assert DEFAULT.run(22) == pytest.approx(13.31)
    # 1 rack beside a network rack: 1 pitch, (0.6 + 4) x 1.1
    assert DEFAULT.run(1, rail=True) == pytest.approx(5.06)
    # 100 racks: 5 rows, 2 across (4.2 m), 10 along (6.0 m): 14.2 x 1.1
    assert DEFAULT.run(100) == pytest.approx(15.62)


def test_rail_leaf_serves_a_scalable_unit_across_racks():
    """A rail-optimized SU of 64 nodes at 3 a rack spans 22 racks: its rail leaves are 13.3 m of cable from
    the farthest node (no 3 m DAC reaches); the spines stand across a hall of 1,000 nodes (334 racks: 17
    rows, 8 across = 16.8 m, 10 along = 6 m): (22.8 + 4) x 1.1 = 29.48 m."""
    lengths = tier_lengths(DEFAULT, "rail_optimized", 2, d1=64, d2=0, rails=8, footprint=1_000)
    assert lengths == {"node_leaf": 13.3, "leaf_spine": 29.5}


def test_top_of_rack_leaf_stays_in_its_rack():
    """A leaf_spine leaf of 32 NIC ports serves 4 nodes of 8 NICs: in a rack of 4 it sits in the rack (2 m);
    in racks of 3 it serves 2 racks from one of them: (0.6 + 4) x 1.1 = 5.06 m."""
    four = Layout(4, 0.6, 2.1, 20, 2.0, 2.0, 0.1)
    assert tier_lengths(four, "leaf_spine", 2, d1=32, d2=0, rails=8, footprint=64)["node_leaf"] == 2.0
    assert tier_lengths(DEFAULT, "leaf_spine", 2, d1=32, d2=0, rails=8, footprint=64)["node_leaf"] == 5.1


def test_three_tiers_span_a_pod_then_the_hall():
    """fat_tree_3, 8 NICs a node, leaves of 32 down, aggregation of 32 down: a pod holds 32 x 32 / 8 = 128
    nodes (43 racks: 3 rows, 1 across, 10 along: (2.1 + 6 + 4) x 1.1 = 13.31); the hall of 10,000 nodes
    (3,334 racks: 167 rows, 83 across = 174.3 m, 10 along): (174.3 + 6 + 4) x 1.1 = 202.73 m."""
    lengths = tier_lengths(DEFAULT, "fat_tree_3", 3, d1=32, d2=32, rails=8, footprint=10_000)
    assert lengths == {"node_leaf": 5.1, "leaf_spine": 13.3, "spine_core": 202.7}


def test_a_planner_length_replaces_the_layout():
    fixed = Layout(3, 0.6, 2.1, 20, 2.0, 2.0, 0.1, fixed=(("node_leaf", 3.0),))
    assert tier_lengths(fixed, "rail_optimized", 2, d1=64, d2=0, rails=8, footprint=1_000)["node_leaf"] == 3.0


@pytest.mark.parametrize("rack_kw, per_rack, item, items, metres", [
    (40, 4, "dac400", 32, 2.0),  # the switch in the nodes' rack: the 3 m DAC reaches
    (25, 2, SR["name"], 64, 5.1),  # 2 racks: (0.6 + 4) x 1.1 m, only the 500 m transceiver reaches
])
def test_a_site_gets_the_cables_its_racks_need(tmp_path, rack_kw, per_rack, item, items, metres):
    """4 nodes (8 GPUs, 10 kW, 8 x 400G) on one 64 x 400G switch (a 1-tier leaf_mesh); the site's rack_kw sets
    how many nodes share a rack and so the node-leaf length and cable."""
    book = tables(32, sites=[site("s1", rack_kw=rack_kw)], topologies_allowed="leaf_mesh", cable_m_node_leaf=None)
    got = opened(design(tmp_path, book))["s1"]
    assert link_counts(got)["node_leaf"] == (32, item, items)
    assert got["fabric_links"][0]["length_m"] == metres
    assert got["layout"]["nodes_per_rack"] == per_rack and got["layout"]["rack_kw"] == rack_kw
    # propagation over the worst path: node to switch and back down, 2 x metres x 5 ns/m
    assert got["latency_breakdown_us"]["propagation"] == pytest.approx(2 * metres * 5e-3)
    assert NODE["node_power_kw"] == 10.0


# --------------------------------------------------------------------------------------------------
# A floorplan sheet: the site's own racks, pitches and rack power
# --------------------------------------------------------------------------------------------------

def floor_book(gpus: int, **floor) -> dict:
    """One site of n8 nodes (10 kW, 8 x 400G) on one 64 x 400G switch, with a floorplan row."""
    book = tables(gpus, topologies_allowed="leaf_mesh", cable_m_node_leaf=None)
    book["floorplan"] = [dict(site="s1", rows=2, racks_per_row=4, rack_kw=40, **floor)]
    return book


def test_floorplan_sets_the_lengths_and_bounds_the_nodes(tmp_path):
    """2 nodes a rack 1.2 m apart: 4 nodes fill 2 racks, the switch 1 pitch from the far one:
    (1.2 + 4) x 1.1 = 5.72 m, so the transceiver; 2 rows x 4 racks x 2 nodes = 16 nodes at most."""
    got = opened(design(tmp_path, floor_book(32, nodes_per_rack=2, rack_pitch_m=1.2)))["s1"]
    assert got["fabric_links"][0]["length_m"] == 5.7 and got["fabric_links"][0]["item"] == SR["name"]
    assert got["layout"]["basis"] == "floorplan" and got["layout"]["rows"] == 2
    assert got["layout"]["node_racks"] == 2


def test_floorplan_racks_full_names_its_rows(tmp_path):
    """17 nodes need 9 racks of 2; the floor has 8: the diagnosis adds a row of 4 racks (8 nodes), and the
    workbook with that row solves."""
    from designer.errors import Infeasible
    from designer.inputs.workbook import load_inputs
    from designer.inputs.writer import write_workbook
    from designer.solve.run import SolveOptions, solve

    inputs = load_inputs(write_workbook(tmp_path / "full.xlsx", floor_book(17 * 8, nodes_per_rack=2)))
    with pytest.raises(Infeasible) as caught:
        solve(inputs, SolveOptions())
    change = next(c for c in caught.value.details["diagnosis"]["changes"] if c["knob"] == "rows")
    assert (change["scope"], change["current"], change["needed"]) == ("floorplan.s1", 2, 3)
    assert "floorplan rows 2 -> 3" in change["message"]
    fixed = floor_book(17 * 8, nodes_per_rack=2)
    fixed["floorplan"][0]["rows"] = 3
    assert opened(design(tmp_path, fixed, "fixed"))["s1"]["nodes"] == 17


def test_rack_power_is_a_constraint(tmp_path):
    from designer.errors import InputError
    from designer.inputs.workbook import load_inputs
    from designer.inputs.writer import write_workbook

    with pytest.raises(InputError) as caught:
        load_inputs(write_workbook(tmp_path / "hot.xlsx", floor_book(32, nodes_per_rack=5)))
    assert [str(p) for p in caught.value.problems] == [
        "floorplan!E2 nodes_per_rack: 5 x n8 draw 50 kW, above the rack's 40 kW, got 5 (fix: enter at most 4 or "
        "raise rack_kw)"]


def test_audit_holds_the_design_to_its_floor(tmp_path):
    """The audit re-checks the floorplan: 4 nodes in 2 racks of 2 do not fit a floor of 1 rack, and 2 n8 nodes
    (20 kW) are above a 15 kW rack."""
    import copy

    from designer.audit.checks import audit

    solution = design(tmp_path, floor_book(32, nodes_per_rack=2))
    assert not audit(solution)
    tight = copy.deepcopy(solution)
    tight["inputs"]["floorplan"][0].update(rows=1, racks_per_row=1, rack_kw=15)
    found = audit(tight)
    assert "s1: 4 nodes fill 2 racks, the floorplan has 1" in found
    assert "s1: 2 nodes a rack draw 20 kW, above rack_kw 15" in found


def test_cabling_names_racks_and_cables(tmp_path):
    """4 nodes, 2 a rack, one switch: nodes 1-2 in rack r01-01, 3-4 in r01-02, the switch in the rack of the
    middle node it serves (node 3: r01-02); every cable has its own ID."""
    import csv

    from designer.outputs.cabling import write_cabling

    solution = design(tmp_path, floor_book(32, nodes_per_rack=2))
    write_cabling(solution, tmp_path / "cabling.csv")
    rows = list(csv.DictReader(open(tmp_path / "cabling.csv", encoding="utf-8")))
    assert len(rows) == 32
    racks = {(r["device"], r["rack"], r["peer_rack"]) for r in rows}
    assert racks == {("s1-node-0001", "s1-r01-01", "s1-r01-02"), ("s1-node-0002", "s1-r01-01", "s1-r01-02"),
                     ("s1-node-0003", "s1-r01-02", "s1-r01-02"), ("s1-node-0004", "s1-r01-02", "s1-r01-02")}
    assert len({r["cable_id"] for r in rows}) == 32 and rows[0]["cable_id"] == "s1-c0000001"


def test_floor_plan_groups_racks_by_what_serves_them(tmp_path):
    """4 nodes 2 a rack under one switch: 2 racks in 1 row, one group; the report draws the floor."""
    from designer.outputs import plots
    from designer.outputs.statistics import floor_plan

    site = opened(design(tmp_path, floor_book(32, nodes_per_rack=2)))["s1"]
    plan = floor_plan(site)
    assert (plan["racks"], plan["rows"], plan["per_rack"], plan["group"], plan["floor_rows"]) == (2, 1, 2, [0, 0], 2)
    assert plots.data_uri(plots.floor_figure(site)).startswith("data:image/svg+xml;base64,")


def test_rail_units_shade_the_floor():
    """A rail-optimized SU of 32 nodes at 3 a rack: racks 0-10 hold SU 1 (rack 10 shares nodes 30-32 with
    SU 2's node 33), racks 11-21 SU 2."""
    from designer.outputs.statistics import floor_plan

    site = {"nodes": 64, "rails": 8, "topology": "rail_optimized", "tiers": [{"tier": "leaf", "down_ports": 32}],
            "layout": {"nodes_per_rack": 3, "racks_per_row": 20, "node_racks": 22, "rack_kw": 40}}
    plan = floor_plan(site)
    assert plan["group"] == [0] * 11 + [1] * 11 and plan["rows"] == 2 and plan["groups"] == 2


@pytest.mark.parametrize("nodes, per_rack, drawn, title", [
    (8, 3_999, 3, "one rack: 8 node(s) of the 3,999 it holds"),  # node_power_kw 0.01 in a 40 kW rack; a one-row
    (200, 100, 3, "one rack: 100 node(s)"),  # figure has room for 4 slots: 3 nodes and how many more
    (4, 2, 2, "one rack: 2 node(s)")])
def test_a_rack_elevation_draws_the_nodes_of_its_fullest_rack_within_its_height(nodes, per_rack, drawn, title):
    """The rack beside the floor shows the nodes of the site's fullest rack, not every slot power allows (a 0.01 kW
    node in a 40 kW rack drew 3,999 boxes: 15 s of writing), and no more than the figure's height holds."""
    from designer.outputs import plots

    site = {"name": "s1", "nodes": nodes, "rails": 1, "topology": "leaf_spine", "tiers": [{"tier": "leaf",
                                                                                          "down_ports": 32}],
            "layout": {"nodes_per_rack": per_rack, "racks_per_row": 20, "node_racks": -(-nodes // per_rack),
                       "rack_kw": 40}}
    rack = plots.floor_figure(site).axes[1]
    labels = [t.get_text() for t in rack.texts]
    assert [x for x in labels if x.startswith("node ")] == [f"node {k + 1}" for k in range(drawn)]
    assert rack.get_title().split("\n")[0] == title
    assert (f"... {min(nodes, per_rack) - drawn} more" in labels) == (drawn < min(nodes, per_rack))
