"""Physical ports and hand-offs to purchasing (issue 10, parts 2 and 5): cages and lanes in cabling.csv and
the audit, used and total ports per tier, optics per device, spares.

Hand-built designs use a switch of 4 x 800G cages (``4x800,8x400,16x200``) and one-NIC 400G nodes."""

from __future__ import annotations

from designer.audit.checks import Catalog, check_ports
from designer.audit.fabric import build_site_graph
from designer.outputs.cabling import fabric_rows

SMALL = "4x800,8x400,16x200"


def leaf_spine(nodes: int, leaves: int, spines: int, down: tuple[int, int], up: tuple[int, int],
               spine_ports: tuple[int, int]) -> dict:
    """A 2-tier leaf/spine site of ``SMALL`` switches: (ports, Gb/s) down and up a leaf, down a spine."""
    return {"sites": [{"name": "dc", "open": True, "nodes": nodes, "topology": "leaf_spine", "fabric_tiers": 2,
                       "node_type": "n1", "tiers": [
                           {"tier": "leaf", "model": "s", "count": leaves, "down_ports": down[0], "up_ports": up[0],
                            "down_gbps": down[1], "up_gbps": up[1]},
                           {"tier": "spine", "model": "s", "count": spines, "down_ports": spine_ports[0],
                            "up_ports": 0, "down_gbps": spine_ports[1], "up_gbps": None}],
                       "fabric_links": [{"tier": "node_leaf", "item": "400G OSFP DAC", "kind": "dac", "length_m": 3},
                                        {"tier": "leaf_spine", "item": "800G OSFP 2xSR4 twin-port (2x400G)",
                                         "kind": "transceiver", "length_m": 30}]}],
            "inputs": {"project": {"node_type": "n1"},
                       "node_types": [{"name": "n1", "nics_per_node": 1, "planes": 1}],
                       "switches": [{"model": "s", "port_modes": SMALL}]}}


def test_cabling_names_cages_and_lanes():
    design = leaf_spine(8, 2, 2, (4, 400), (4, 400), (8, 400))
    graph = build_site_graph("dc", design)
    rows = [dict(zip(("device", "port", "share", "peer", "peer_port", "peer_share"), r[1:7]))
            for r in fabric_rows(graph, design, group=False)]
    leaf = [(r["port"], r["peer_port"]) for r in rows if "dc-leaf-01" in (r["device"], r["peer"])]
    # 4 NICs on lanes of cages 1 and 2, the 4 uplinks after them (same speed) on cages 3 and 4
    assert leaf == [("p1", "p1/1"), ("p1", "p1/2"), ("p1", "p2/1"), ("p1", "p2/2"),
                    ("p3/1", "p1/1"), ("p3/2", "p1/2"), ("p4/1", "p1/1"), ("p4/2", "p1/2")]
    spine = [r["peer_port"] for r in rows if r["peer"] == "dc-spine-01"]
    assert spine == ["p1/1", "p1/2", "p2/1", "p2/2"]  # leaf-01's two links, then leaf-02's
    assert {(r["share"], r["peer_share"]) for r in rows} == {("", "1:2 splitter cable"),
                                                             ("2-port module", "2-port module")}
    assert check_ports(design["sites"][0], graph, Catalog(design["inputs"]), design) == []


def test_uplinks_at_another_speed_start_on_the_next_cage():
    # 3 x 400G down take cage 1 and half of cage 2; 8 x 200G up start at cage 3: 4 lanes a cage
    design = leaf_spine(3, 1, 2, (3, 400), (8, 200), (16, 200))
    graph = build_site_graph("dc", design)
    ups = [r[2] for r in fabric_rows(graph, design, group=False) if r[1] == "dc-leaf-01"]
    assert ups == ["p3/1", "p3/2", "p3/3", "p3/4", "p4/1", "p4/2", "p4/3", "p4/4"]
    assert check_ports(design["sites"][0], graph, Catalog(design["inputs"]), design) == []


def test_audit_fails_a_switch_short_of_cages():
    # 3 x 400 + 9 x 200 = 3,000 Gb/s fits the 3,200 Gb/s pool, but needs 2 + 3 = 5 of the 4 cages
    design = leaf_spine(3, 1, 3, (3, 400), (9, 200), (16, 200))
    graph = build_site_graph("dc", design)
    assert check_ports(design["sites"][0], graph, Catalog(design["inputs"]), design) == [
        "dc: 1 leaf switch(es) need more cages than they have; worst dc-leaf-01 (s) needs 5 of 4 (1 over)"]
