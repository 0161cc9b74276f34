"""Physical ports and hand-offs to purchasing (issue 10, parts 2 and 5): cages and lanes in cabling.csv and
the audit, used and total ports per tier, optics per device, spares.

Hand-built designs use a switch of 4 x 800G cages (``4x800,8x400,16x200``) and one-NIC 400G nodes."""

from __future__ import annotations

import copy
import csv
from types import SimpleNamespace

import pandas as pd
import pytest

from designer.audit.checks import Catalog, audit, check_ports
from designer.audit.fabric import build_site_graph, port_name, port_names
from designer.inputs.workbook import load_inputs
from designer.inputs.writer import write_workbook
from designer.outputs.cabling import fabric_rows
from designer.outputs.devices import optics_per_device
from designer.outputs.export import write_outputs
from designer.outputs.report import render_markdown
from designer.solve.run import SolveOptions, solve
from designer.solve.spares import spare_lines

SMALL = "4x800,8x400,16x200"
SPLITTER = "800G OSFP to 2x400G OSFP splitter DAC"  # a 400G NIC link in an 800G cage: one of its two legs


def leaf_spine(nodes: int, leaves: int, spines: int, down: tuple[int, int], up: tuple[int, int],
               spine_ports: tuple[int, int]) -> dict:
    """A 2-tier leaf/spine site of ``SMALL`` switches: (ports, Gb/s) down and up a leaf, down a spine."""
    return {"sites": [{"name": "dc", "open": True, "nodes": nodes, "topology": "leaf_spine", "fabric_tiers": 2,
                       "node_type": "n1", "tiers": [
                           {"tier": "leaf", "model": "s", "count": leaves, "down_ports": down[0], "up_ports": up[0],
                            "down_gbps": down[1], "up_gbps": up[1]},
                           {"tier": "spine", "model": "s", "count": spines, "down_ports": spine_ports[0],
                            "up_ports": 0, "down_gbps": spine_ports[1], "up_gbps": None}],
                       "fabric_links": [{"tier": "node_leaf", "item": SPLITTER, "kind": "dac", "length_m": 3},
                                        {"tier": "leaf_spine", "item": "800G OSFP 2xSR4 twin-port (2x400G)",
                                         "kind": "transceiver", "length_m": 30}]}],
            "inputs": {"project": {"node_type": "n1"},
                       "node_types": [{"name": "n1", "nics_per_node": 1, "planes": 1}],
                       "switches": [{"model": "s", "port_modes": SMALL}],
                       "optics": [{"name": "800G OSFP 2xSR4 twin-port (2x400G)", "kind": "transceiver",
                                   "links_per_module": 2},
                                  {"name": SPLITTER, "kind": "dac", "links_per_module": 2}]}}


def cabling_rows(graph, design) -> list[list[str]]:
    """cabling.csv's rows of a site's fabric (no grouping) as a CSV reader reads them."""
    return list(csv.reader(fabric_rows(graph, design, group=False)))


def test_cabling_names_cages_and_lanes():
    design = leaf_spine(8, 2, 2, (4, 400), (4, 400), (8, 400))
    graph = build_site_graph("dc", design)
    rows = [dict(zip(("device", "port", "share", "peer", "peer_port", "peer_share"), r[1:7]))
            for r in cabling_rows(graph, design)]
    leaf = [(r["port"], r["peer_port"]) for r in rows if "dc-leaf-01" in (r["device"], r["peer"])]
    # 4 NICs on lanes of cages 1 and 2, the 4 uplinks after them (same speed) on cages 3 and 4
    assert leaf == [("p1", "p1/1"), ("p1", "p1/2"), ("p1", "p2/1"), ("p1", "p2/2"),
                    ("p3/1", "p1/1"), ("p3/2", "p1/2"), ("p4/1", "p1/1"), ("p4/2", "p1/2")]
    spine = [r["peer_port"] for r in rows if r["peer"] == "dc-spine-01"]
    assert spine == ["p1/1", "p1/2", "p2/1", "p2/2"]  # leaf-01's two links, then leaf-02's
    assert {(r["share"], r["peer_share"]) for r in rows} == {("", "1:2 splitter cable"),
                                                             ("2-port module", "2-port module")}
    assert check_ports(design["sites"][0], graph, Catalog(design["inputs"]), design) == []


def test_a_plan_past_group_above_lists_a_leafs_nics_on_one_row():
    """Past GROUP_ABOVE links, the NICs on one leaf share a row (``<leaf>-nodes``, the leaf's port range, links =
    NICs, the racks they span); the switch links are listed as before."""
    design = leaf_spine(8, 2, 2, (4, 400), (4, 400), (8, 400))
    graph = build_site_graph("dc", design)
    grouped = list(csv.reader(fabric_rows(graph, design, group=True)))
    nics = [r for r in grouped if r[1].endswith("-nodes")]
    assert [(r[1], r[4], r[5], r[12], r[13]) for r in nics] == [
        ("dc-leaf-01-nodes", "dc-leaf-01", "p1/1-p2/2", "4", "dc-r01-01..dc-r01-04"),
        ("dc-leaf-02-nodes", "dc-leaf-02", "p1/1-p2/2", "4", "dc-r01-05..dc-r01-08")]
    single = cabling_rows(graph, design)
    assert [r[1:15] for r in grouped if r not in nics] == [r[1:15] for r in single if "-node-" not in r[1]]
    assert sum(int(r[12]) for r in grouped) == len(single)


def test_a_link_speed_the_switch_does_not_offer_is_reported_once_a_switch():
    """check_ports names each switch running a speed none of its port modes has, once per switch and speed (the
    first five, sorted), and says nothing of the speeds it has."""
    design = leaf_spine(8, 2, 2, (4, 400), (4, 100), (8, 100))  # uplinks at 100G: 800, 400 and 200G on offer
    graph = build_site_graph("dc", design)
    found = check_ports(design["sites"][0], graph, Catalog(design["inputs"]), design)
    assert [m for m in found if "port modes" in m] == [f"dc: dc-{n} (s) runs 100G links but its port modes are {SMALL}"
                     for n in ("leaf-01", "leaf-02", "spine-01", "spine-02")]


def test_uplinks_at_another_speed_start_on_the_next_cage():
    # 3 x 400G down take cage 1 and half of cage 2; 8 x 200G up start at cage 3: 4 lanes a cage
    design = leaf_spine(3, 1, 2, (3, 400), (8, 200), (16, 200))
    graph = build_site_graph("dc", design)
    ups = [r[2] for r in cabling_rows(graph, design) if r[1] == "dc-leaf-01"]
    assert ups == ["p3/1", "p3/2", "p3/3", "p3/4", "p4/1", "p4/2", "p4/3", "p4/4"]
    assert check_ports(design["sites"][0], graph, Catalog(design["inputs"]), design) == []


@pytest.mark.parametrize("up", [False, True])
@pytest.mark.parametrize("down, gbps", [((3, 400), 400), ((3, 400), 200), ((5, 200), 800), ((0, 400), 200),
                                        ((16, 200), 200)])
def test_port_names_are_the_ports_port_places(down, gbps, up):
    # cabling.csv names a run of links from its origin: the same cages and lanes as Catalog.port link by link
    cat = Catalog(leaf_spine(4, 1, 1, (4, 400), (4, 400), (4, 400))["inputs"])
    switch = {"model": "s", "down_ports": down[0], "down_gbps": down[1]}
    origin = cat.port_origin(switch, up, gbps)
    expected = []
    for k in range(1, 13):
        cage, lane, lanes = cat.port(switch, up, k, gbps)
        expected.append(f"p{cage}" if lanes == 1 else f"p{cage}/{lane}")
    assert port_names(origin, 1, 12) == expected
    assert port_names(origin, 1, 5) + port_names(origin, 6, 7) == expected
    assert [port_name(origin, k) for k in range(1, 13)] == expected


def test_audit_fails_a_switch_short_of_cages():
    # 3 x 400 + 9 x 200 = 3,000 Gb/s fits the 3,200 Gb/s pool, but needs 2 + 3 = 5 of the 4 cages
    design = leaf_spine(3, 1, 3, (3, 400), (9, 200), (16, 200))
    graph = build_site_graph("dc", design)
    assert check_ports(design["sites"][0], graph, Catalog(design["inputs"]), design) == [
        "dc: 1 leaf switch(es) need more cages than they have; worst dc-leaf-01 (s) needs 5 of 4 (1 over)"]


# --------------------------------------------------------------------------------------------------
# Spares: sized after the solve from the BOM's counts
# --------------------------------------------------------------------------------------------------

def quoted_inputs(**project):
    """Inputs as spare_lines reads them: the project keys, the optics and support_networks tables."""
    optics = pd.DataFrame([{"name": "sr4", "kind": "transceiver"}, {"name": "dac", "kind": "dac"}]).set_index("name")
    support = pd.DataFrame([{"name": "oob", "category": "management_network", "switch_model": "mgmt",
                             "link_item": "cat6", "link_kind": "cable"}]).set_index("name")
    return SimpleNamespace(project={"spares_optics_share": 0.02, "spares_cables_share": 0.02,
                                    "spares_switch_per": 50, **project}, optics=optics, support_networks=support)


def line(site, category, item, quantity, price=100.0) -> dict:
    return {"site": site, "category": category, "item": item, "quantity": quantity, "unit_price_usd": price,
            "extended_usd": quantity * price, "unit_power_w": 1.0, "total_power_w": quantity * 1.0}


def test_spares_by_hand():
    bom = [line("a", "optics", "sr4", 101), line("a", "optics", "dac", 100), line("a", "switches", "sw", 100),
           line("a", "dci_routers", "sw", 20), line("b", "management_network", "mgmt", 120),
           line("a", "management_network", "cat6", 49), line("a", "nodes", "dgx", 500)]
    got = {(s["site"], s["item"]): (s["quantity"], s["spare_of"], s["basis"])
           for s in spare_lines(bom, quoted_inputs())}
    assert got == {("a", "sr4"): (3, "optics", "2% of 101, rounded up"),  # 2.02 -> 3
                   ("a", "dac"): (2, "optics", "2% of 100, rounded up"),  # exactly 2, not 3 by float error
                   ("a", "cat6"): (1, "management_network", "2% of 49, rounded up"),
                   ("a", "sw"): (3, "switches", "1 per 50 of 120, rounded up"),  # fabric and DCI together
                   ("b", "mgmt"): (3, "management_network", "1 per 50 of 120, rounded up")}
    assert spare_lines(bom, quoted_inputs(spares_optics_share=0, spares_cables_share=0, spares_switch_per=0)) == []
    assert all(s["total_power_w"] == 0 and s["extended_usd"] == s["quantity"] * 100 for s in spare_lines(
        bom, quoted_inputs()))


# --------------------------------------------------------------------------------------------------
# On a solved scalable unit: spares, optics per device and the outputs reconcile with the BOM
# --------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def one_su(tmp_path_factory) -> dict:
    book = {"project": {"gpus_required": 256, "node_type": "DGX H100", "protocols_allowed": "infiniband",
                        "topologies_allowed": "rail_optimized", "cable_m_node_leaf": 3, "cable_m_leaf_spine": 50,
                        "fiber_plant": False, "budget_usd": 8.9e6},
            "sites": [{"name": "dc1", "power_mw": 10, "pue": 1.2, "max_nodes": 32, "fixed_cost_usd": 1e6,
                       "power_cost_usd_per_mw": 1e6, "energy_usd_per_mwh": 50, "status": "required"}]}
    path = write_workbook(tmp_path_factory.mktemp("one_su") / "one_su.xlsx", book)
    return solve(load_inputs(path), SolveOptions())


def test_spares_of_one_su(one_su):
    spares = {s["item"]: s["quantity"] for s in one_su["spares"]}
    # the 256 NIC links fill the leaves' 800G twin-port cages: 128 1:2 splitter DACs at 2%: 3; 256 twin-port
    # modules at 2%: 6; 12 fabric + 5 storage QM9700 at one per 50: 1
    assert (spares[SPLITTER], spares["800G OSFP 2xSR4 twin-port (2x400G)"], spares["QM9700"]) == (3, 6, 1)
    totals = one_su["totals"]
    assert totals["spares_usd"] == sum(s["extended_usd"] for s in one_su["spares"]) > 0
    assert totals["capex_with_spares_usd"] == totals["capex_usd"] + totals["spares_usd"]
    assert sum(b["extended_usd"] for b in one_su["bom"]) == pytest.approx(totals["capex_usd"])
    # the design is within the $8.9M budget, with spares it is not: a warning says so
    assert totals["capex_usd"] <= 8.9e6 < totals["capex_with_spares_usd"]
    assert any(n.startswith("warning: capex with spares") for n in one_su["notes"])
    assert audit(one_su) == []


@pytest.mark.parametrize("change, expected", [
    (lambda d: d["spares"][0].update(quantity=d["spares"][0]["quantity"] + 1), "the spares rules give 3"),
    (lambda d: d["totals"].update(spares_usd=0.0), "totals.spares_usd $0.00"),
    (lambda d: d["inputs"]["project"].update(spares_switch_per=10), "spares dc1 / QM9700: 1, the spares rules give 2"),
])
def test_audit_rechecks_the_spares(one_su, change, expected):
    design = copy.deepcopy(one_su)
    change(design)
    assert expected in "\n".join(audit(design))


def test_optics_per_device_reconcile_with_the_bom(one_su):
    frame = optics_per_device(one_su)
    rows = {(r.device, r.item, r.per_device): (r.devices, r.total) for r in frame.itertuples()}
    assert not any(device == "node" and item == SPLITTER for device, item, _ in rows)
    assert rows[("leaf", SPLITTER, 16)] == (8, 128)  # a splitter counted at its switch end: 32 NICs a leaf, 2 a cable
    assert rows[("leaf", "800G OSFP 2xSR4 twin-port (2x400G)", 16)] == (8, 128)  # 32 uplinks a leaf, 2 a module
    assert rows[("spine", "800G OSFP 2xSR4 twin-port (2x400G)", 32)] == (4, 128)
    # 32 nodes x 2 storage ports: a module at the node, and 64 spread over the 5 storage switches
    assert rows[("node", "400G NDR multimode module", 2)] == (32, 64)
    assert (rows[("storage switch", "400G NDR multimode module", 13)],
            rows[("storage switch", "400G NDR multimode module", 12)]) == ((4, 52), (1, 12))
    totals = frame.groupby("item")["total"].sum().to_dict()
    links = {b["item"]: b["quantity"] for b in one_su["bom"]
             if b["category"] in ("optics", "storage_network", "management_network") and b["item"] in totals}
    assert totals == links and len(links) == 5


def test_outputs_carry_spares_ports_and_optics(tmp_path, one_su):
    write_outputs(one_su, tmp_path)
    bom = pd.read_csv(tmp_path / "bom.csv")
    assert bom.loc[bom["category"] != "spares", "extended_usd"].sum() == pytest.approx(one_su["totals"]["capex_usd"])
    assert bom["extended_usd"].sum() == pytest.approx(one_su["totals"]["capex_with_spares_usd"])
    assert set(bom.loc[bom["category"] == "spares", "basis"]) >= {"2% of 256, rounded up"}
    book = pd.read_excel(tmp_path / "design.xlsx", sheet_name=None)
    assert book["optics_per_device"]["total"].sum() == pd.read_csv(tmp_path / "optics_per_device.csv")["total"].sum()
    leaf = book["switches"].set_index("tier").loc["leaf"]
    assert (leaf["used_ports"], leaf["total_ports"], leaf["used_cages"], leaf["total_cages"]) == (512, 512, 256, 256)
    text = render_markdown(one_su)
    assert "| spine | QM9700 | 4 | 400G | 64 | 0 | 100.0% | 256 / 256 (100.0%) | 128 / 128 (100.0%) |" in text
    assert "## Spares" in text and "capex with spares" in text


def test_a_single_link_module_on_a_lane_is_a_breakout():
    design = leaf_spine(3, 1, 2, (3, 400), (8, 200), (16, 200))
    design["sites"][0]["fabric_links"][1]["item"] = "200G QSFP56 SR4"
    design["inputs"]["optics"] = [{"name": "200G QSFP56 SR4", "kind": "transceiver", "links_per_module": 1}]
    graph = build_site_graph("dc", design)
    shares = {(r[3], r[6]) for r in cabling_rows(graph, design) if r[1] == "dc-leaf-01"}
    assert shares == {("1:4 breakout, 1 link(s) a module", "1:4 breakout, 1 link(s) a module")}
