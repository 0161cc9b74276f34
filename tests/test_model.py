"""Tiny hand-checkable designs, solved end to end (workbook -> model -> HiGHS -> Solution).

Every instance uses its own small catalog (below), so each expected count, dollar and watt is
worked out by hand in the comments from these figures, not from the default catalog:

- node ``n8``: 8 GPUs, 8 NICs x 400G, 1 plane, 10 kW, $100,000
- switch ``sw64``: infiniband, 64 x 400G, 16 MB, 100 ns, 500 W, $10,000, leaf/spine/core
- ``dac400``: 400G DAC, 3 m, 1 W, $100 a cable; ``sr400``: 400G transceiver, 500 m, 10 W, $500
- protocol ``infiniband``: 500 ns per NIC, efficiency 0.9
- every site: PUE 1.5, $1,000 fixed, $1,000,000 per MW of facility power
  (so the power line of the BOM is IT watts x 1.5 in dollars)

Cable lengths are the planner's (TYPICAL_LENGTHS), not the floor layout's: node-leaf 3 m (a DAC reaches),
leaf-spine 50 m and spine-core 150 m (only the transceiver reaches: two modules a link).
"""

from __future__ import annotations

import copy
import csv
import time
from collections import defaultdict
from pathlib import Path

import pytest

from designer.audit.checks import audit
from designer.errors import Infeasible
from designer.inputs.workbook import load_catalog, load_inputs
from designer.inputs.writer import write_workbook
from designer.solve.run import SolveOptions, solve

SRC = {"source": "test figures"}
NODE = dict(name="n8", gpus_per_node=8, nics_per_node=8, nic_gbps=400, planes=1, node_power_kw=10.0,
            node_price_usd=100_000, nvlink_latency_ns=300, **SRC)
SW64 = dict(model="sw64", family="infiniband", port_modes="64x400", buffer_mb=16, latency_ns=100,
            power_w=500, price_usd=10_000, roles="leaf,spine,core", **SRC)
DAC = dict(name="dac400", gbps=400, kind="dac", reach_m=3, power_w=1, price_usd=100, links_per_module=1, **SRC)
SR = dict(name="sr400", gbps=400, kind="transceiver", reach_m=500, power_w=10, price_usd=500,
          links_per_module=1, **SRC)
IB = dict(name="infiniband", switch_family="infiniband", nic_latency_ns=500, efficiency=0.9, lossless=True,
          jitter_rank=1, **SRC)
# Inter-site figures (two-site instances): a 400G coherent module with 1600 GHz channels (3 a fiber
# pair, so fiber pairs are visibly counted), a shallow and a deep DCI router of 8 x 400G each, of the fabric's
# family (a DCI router joins the fabric on leaf ports: models.network.define_dci_attachment).
ZR = dict(name="zr400", gbps=400, reach_km=120, channel_ghz=1600, power_w=15, price_usd=5_000, **SRC)
AMP = dict(name="amp", power_w=100, price_usd=10_000, **SRC)
SHALLOW = dict(model="r_shallow", family="infiniband", port_modes="8x400", buffer_mb=50, latency_ns=1000,
               power_w=500, price_usd=20_000, roles="dci", **SRC)
DEEP = dict(model="r_deep", family="infiniband", port_modes="8x400", buffer_mb=4000, latency_ns=3000,
            power_w=1000, price_usd=60_000, roles="dci", **SRC)


def site(name: str, **kw) -> dict:
    row = dict(name=name, power_mw=10, pue=1.5, max_nodes=1000, fixed_cost_usd=1_000,
               power_cost_usd_per_mw=1_000_000, energy_usd_per_mwh=50, status="candidate")
    row.update(kw)
    return row


#: the planner's cable lengths per tier, so the hand calculations here do not follow the layout
#: (tests/test_layout.py covers lengths from the layout), no support networks (tests/test_support.py) and no
#: fiber plant (tests/test_fiber_plant.py)
TYPICAL_LENGTHS = {"cable_m_node_leaf": 3, "cable_m_leaf_spine": 50, "cable_m_spine_core": 150, "cable_m_dci_attach": 60,
                   "support_networks": False, "fiber_plant": False}


def tables(gpus: int, node=NODE, sites=None, routes=None, switches=(SW64,), optics=(DAC, SR), **project) -> dict:
    """A one-site workbook over the test catalog; keyword arguments are project keys."""
    book = {
        "project": {"gpus_required": gpus, "node_type": node["name"], **TYPICAL_LENGTHS, **project},
        "sites": sites or [site("s1")],
        "node_types": [node], "switches": list(switches), "optics": list(optics), "protocols": [IB],
        "coherent": [ZR], "amplifiers": [AMP],
    }
    if routes:
        book["routes"] = routes
    return copy.deepcopy(book)  # callers may edit it; the module's catalog rows stay as they are


def design(tmp_path, book: dict, name: str = "plan") -> dict:
    """Solve a workbook given as tables; the Solution dict (design.json content)."""
    inputs = load_inputs(write_workbook(tmp_path / f"{name}.xlsx", book))
    return solve(inputs, SolveOptions(mip_gap=1e-9))


def opened(solution: dict) -> dict:
    return {s["name"]: s for s in solution["sites"] if s["open"]}


def tier_counts(site_entry: dict) -> dict:
    """tier -> {model: count}."""
    out: dict = defaultdict(dict)
    for t in site_entry["tiers"]:
        out[t["tier"]][t["model"]] = t["count"]
    return dict(out)


def link_counts(site_entry: dict) -> dict:
    """fabric link tier -> (links, item, items bought)."""
    return {lk["tier"]: (lk["count"], lk["item"], lk["modules"]) for lk in site_entry["fabric_links"]}


def bom_lines(solution: dict) -> dict:
    """(site, category, item) -> (quantity, extended_usd, total_power_w)."""
    return {(r["site"], r["category"], r["item"]): (r["quantity"], r["extended_usd"], r["total_power_w"])
            for r in solution["bom"]}


def assert_bom_total(solution: dict) -> None:
    assert sum(r["extended_usd"] for r in solution["bom"]) == pytest.approx(solution["totals"]["capex_usd"],
                                                                             rel=1e-12, abs=1e-6)


def check_site(solution: dict, tiers: dict, links: dict, capex: float, power_mw: float | None = None,
               name: str = "s1") -> dict:
    """The site's switch counts, links, facility power and the design's capex, exactly; its entry."""
    s = opened(solution)[name]
    assert tier_counts(s) == tiers
    assert link_counts(s) == links
    if power_mw is not None:
        assert s["power_mw"] == pytest.approx(power_mw, abs=1e-12)
    assert solution["totals"]["capex_usd"] == pytest.approx(capex, abs=1e-6)
    assert_bom_total(solution)
    return s


# --------------------------------------------------------------------------------------------------
# One site
# --------------------------------------------------------------------------------------------------

def test_four_nodes_on_one_switch(tmp_path):
    """4 nodes x 8 NICs = 32 endpoints fit one 64-port switch: the cheapest design is that single
    switch (a 1-tier leaf_mesh), 32 DACs, no optics.
    IT watts = 4 x 10,000 + 500 + 32 x 1 = 40,532 W; facility = 1.5 x 40,532 = 60,798 W.
    capex = 4 x 100,000 + 10,000 + 32 x 100 + 1,000 fixed + 60,798 power = $474,998."""
    sol = design(tmp_path, tables(32))
    assert sol["status"] == "optimal"
    s = opened(sol)["s1"]
    assert (s["nodes"], s["gpus"], s["topology"], s["fabric_tiers"]) == (4, 32, "leaf_mesh", 1)
    check_site(sol, {"leaf": {"sw64": 1}}, {"node_leaf": (32, "dac400", 32)}, 474_998, 0.060798)
    assert s["it_power_mw"] == pytest.approx(0.040532, abs=1e-12)
    assert sol["objective_usd"] == pytest.approx(474_998, abs=1e-6)
    # the switch's 64 x 400G: 32 links in use, half its bandwidth
    assert (s["tiers"][0]["used_gbps"], s["tiers"][0]["capacity_gbps"]) == (12_800, 25_600)
    leaf = s["tiers"][0]
    assert [leaf[k] for k in ("used_ports", "total_ports", "used_cages", "total_cages")] == [32, 64, 32, 64]
    # 1 hop: 2 x 500 ns NIC + 100 ns switch + 2 x 3 m x 5 ns/m = 1,130 ns
    assert s["fabric_latency_us"] == pytest.approx(1.13, abs=1e-9)
    assert bom_lines(sol) == {
        ("s1", "nodes", "n8"): (4, 400_000, 40_000),
        ("s1", "switches", "sw64"): (1, 10_000, 500),
        ("s1", "optics", "dac400"): (32, 3_200, 32),
        ("s1", "site", "s1 site fixed cost"): (1, 1_000, 0),
        ("s1", "power", "facility power (MW)"): pytest.approx((0.060798, 60_798, 0), abs=1e-6),
    }


def test_leaf_spine_two_tier(tmp_path):
    """16 nodes, leaf_spine, non-blocking: a leaf splits 64 ports 32 down / 32 up.
    leaves = 128 endpoints / 32 = 4; spines: a divisor j of 32 with 64 j >= 4 x 32 = 128 -> j = 2.
    Links: node-leaf 128 DACs; leaf-spine 4 x 32 = 128 links, 256 sr400 modules.
    IT watts = 160,000 + 6 x 500 + 128 x 1 + 256 x 10 = 165,688 W; facility 248,532 W.
    capex = 1,600,000 + 60,000 + 12,800 + 128,000 + 1,000 + 248,532 = $2,050,332.
    Latency: 1,000 NIC + 3 x 100 hops + 2 x (3 + 50) m x 5 ns = 1,830 ns."""
    sol = design(tmp_path, tables(128, topologies_allowed="leaf_spine"))
    s = opened(sol)["s1"]
    assert sol["status"] == "optimal"
    assert (s["nodes"], s["topology"], s["fabric_tiers"], s["hops"], s["oversubscription"]) == (
        16, "leaf_spine", 2, 3, 1)
    check_site(sol, {"leaf": {"sw64": 4}, "spine": {"sw64": 2}},
               {"node_leaf": (128, "dac400", 128), "leaf_spine": (128, "sr400", 256)},
               2_050_332, 0.248532)
    assert s["fabric_latency_us"] == pytest.approx(1.83, abs=1e-9)
    assert s["latency_breakdown_us"] == pytest.approx({"nic": 1.0, "switching": 0.3, "propagation": 0.53,
                                                        "nvlink": 0.0})


def test_rail_optimized_one_scalable_unit(tmp_path):
    """32 nodes, rail_optimized: one SU of d1 = 32 nodes, one leaf per rail -> 8 leaves;
    spines: 64 j >= 8 x 32 = 256 -> j = 4 (divides 32). Like the published H100 1-SU (8 + 4).
    Links: 256 node-leaf DACs, 256 leaf-spine links = 512 sr400 modules.
    IT watts = 320,000 + 12 x 500 + 256 + 5,120 = 331,376 W; facility 497,064 W.
    capex = 3,200,000 + 120,000 + 25,600 + 256,000 + 1,000 + 497,064 = $4,099,664."""
    sol = design(tmp_path, tables(256, topologies_allowed="rail_optimized"))
    s = opened(sol)["s1"]
    assert (s["nodes"], s["topology"], s["fabric_tiers"], s["scalable_units"], s["rails"]) == (
        32, "rail_optimized", 2, 1, 8)
    check_site(sol, {"leaf": {"sw64": 8}, "spine": {"sw64": 4}},
               {"node_leaf": (256, "dac400", 256), "leaf_spine": (256, "sr400", 512)},
               4_099_664, 0.497064)


def test_two_planes_double_every_fabric_count(tmp_path):
    """A node of 16 NICs over planes=2 gives two independent copies of the 8-NIC fabric of
    test_leaf_spine_two_tier: 8 leaves, 4 spines, 256 + 256 links, 512 sr400 modules.
    IT watts = 160,000 + 12 x 500 + 256 x 1 + 512 x 10 = 171,376 W; facility 257,064 W.
    capex = 1,600,000 + 120,000 + 25,600 + 256,000 + 1,000 + 257,064 = $2,259,664."""
    twin = dict(NODE, name="n16p2", nics_per_node=16, planes=2)
    sol = design(tmp_path, tables(128, node=twin, topologies_allowed="leaf_spine"))
    s = opened(sol)["s1"]
    assert (s["nodes"], s["planes"], s["rails"], s["endpoints"]) == (16, 2, 8, 256)
    check_site(sol, {"leaf": {"sw64": 8}, "spine": {"sw64": 4}},
               {"node_leaf": (256, "dac400", 256), "leaf_spine": (256, "sr400", 512)},
               2_259_664, 0.257064)


def test_leaf_mesh_two_tier(tmp_path):
    """12 nodes (96 endpoints) exceed one switch (64 ports), so the mesh has 2 levels. Between two
    halves of L leaves with u mesh ports run L^2/4 x u/(L-1) links, so non-blocking needs
    d <= u L / (2(L-1)). 3 leaves: d <= 0.75 u, best 27 down / 36 mesh: 81 endpoints, too few;
    4 leaves: d <= 2u/3, best 25 down / 38 mesh: 100 endpoints. leaves = ceil(96 / 25) = 4;
    mesh links = 4 x 38 / 2 = 76 on sr400 (50 m): 152 modules.
    IT watts = 120,000 + 4 x 500 + 96 x 1 + 152 x 10 = 123,616 W; facility 185,424 W.
    capex = 1,200,000 + 40,000 + 9,600 + 76,000 + 1,000 + 185,424 = $1,512,024.
    Latency: 1,000 NIC + 2 x 100 + (2 x 3 + 50) m x 5 ns = 1,480 ns."""
    sol = design(tmp_path, tables(96, topologies_allowed="leaf_mesh"))
    s = opened(sol)["s1"]
    assert (s["nodes"], s["topology"], s["fabric_tiers"], s["hops"]) == (12, "leaf_mesh", 2, 2)
    check_site(sol, {"leaf": {"sw64": 4}},
               {"node_leaf": (96, "dac400", 96), "leaf_leaf": (76, "sr400", 152)},
               1_512_024, 0.185424)
    assert s["fabric_latency_us"] == pytest.approx(1.48, abs=1e-9)


def test_rail_only_one_switch_per_rail(tmp_path):
    """16 nodes <= 64 ports: each of the 8 rails is one switch, no spine.
    IT watts = 160,000 + 8 x 500 + 128 x 1 = 164,128 W; facility 246,192 W.
    capex = 1,600,000 + 80,000 + 12,800 + 1,000 + 246,192 = $1,939,992.
    Latency: 1,000 NIC + 100 switch + 30 cable + 300 NVLink = 1,430 ns."""
    sol = design(tmp_path, tables(128, topologies_allowed="rail_only"))
    s = opened(sol)["s1"]
    assert (s["nodes"], s["topology"], s["fabric_tiers"]) == (16, "rail_only", 1)
    check_site(sol, {"leaf": {"sw64": 8}}, {"node_leaf": (128, "dac400", 128)}, 1_939_992, 0.246192)
    assert s["latency_breakdown_us"] == pytest.approx({"nic": 1.0, "switching": 0.1, "propagation": 0.03,
                                                        "nvlink": 0.3})
    assert s["fabric_latency_us"] == pytest.approx(1.43, abs=1e-9)


def test_rail_only_two_tier_per_rail(tmp_path):
    """80 nodes > 64 ports: each rail is its own 2-tier Clos. Per rail: 3 leaves (ceil(80 / 32)) of 28 down and 28
    up ports (84 >= 80 down, non-blocking; 4 ports dark each), their 84 uplinks on 2 spines (2 divides 28; 64 x 2 >=
    84): $20,000 + 84 links x $1,000. The full 32/32 split needs 96 links on 2 spines ($116,000 against $104,000);
    27/27 (81 >= 80) needs 3 spines (27's divisors 1, 3, ...: $111,000). Times 8 rails: 24 leaves, 16 spines; 640
    node-leaf DACs, 8 x 84 = 672 leaf-spine links = 1,344 sr400 modules.
    IT watts = 800,000 + 40 x 500 + 640 + 13,440 = 834,080 W; facility 1,251,120 W.
    capex = 8,000,000 + 400,000 + 64,000 + 672,000 + 1,000 + 1,251,120 = $10,388,120."""
    sol = design(tmp_path, tables(640, topologies_allowed="rail_only"))
    s = opened(sol)["s1"]
    assert (s["nodes"], s["topology"], s["fabric_tiers"]) == (80, "rail_only", 2)
    assert (s["tiers"][0]["down_ports"], s["tiers"][0]["up_ports"], s["oversubscription"]) == (28, 28, 1.0)
    check_site(sol, {"leaf": {"sw64": 24}, "spine": {"sw64": 16}},
               {"node_leaf": (640, "dac400", 640), "leaf_spine": (672, "sr400", 1344)},
               10_388_120)


TWIN_CAGES = dict(SW64, cages=32)  # 64 x 400G in 32 twin-port cages of 800G, as a QM9700
SPLIT = dict(DAC, name="split400", price_usd=200, power_w=2, links_per_module=2)  # 1:2 splitter, 2 x dac400's figures


def test_twin_port_module_carries_two_links(tmp_path):
    """test_leaf_spine_two_tier on a switch of 32 twin-port cages, with a twin-port module (2 links a module, 15 W,
    $800) as the only 50 m optic: 128 leaf-spine links have 256 ends, 256 / 2 = 128 modules. A single-link DAC
    would leave a lane of each cage dark: the nodes take 1:2 splitter DACs ($200, 2 W), 128 / 2 = 64 of them.
    IT watts = 160,000 + 3,000 + 128 + 128 x 15 = 165,048 W; facility 247,572 W.
    capex = 1,600,000 + 60,000 + 12,800 + 102,400 + 1,000 + 247,572 = $2,023,772."""
    twin = dict(SR, name="twin400", power_w=15, price_usd=800, links_per_module=2)
    sol = design(tmp_path, tables(128, switches=(TWIN_CAGES,), optics=(DAC, SPLIT, twin),
                                  topologies_allowed="leaf_spine"))
    check_site(sol, {"leaf": {"sw64": 4}, "spine": {"sw64": 2}},
               {"node_leaf": (128, "split400", 64), "leaf_spine": (128, "twin400", 128)},
               2_023_772, 0.247572)
    assert bom_lines(sol)[("s1", "optics", "twin400")] == (128, 102_400, 1_920)


def test_multi_link_modules_round_up(tmp_path):
    """Modules are whole items: 3 one-NIC nodes 10 m from their leaf (beyond the DAC) have 3 links,
    6 link ends; a 4-link module (filling a 1,600G cage of 4 x 400G) covers them with ceil(6 / 4) = 2 items, not
    1.5."""
    node = dict(NODE, name="n1", gpus_per_node=1, nics_per_node=1)
    quad = dict(SR, name="quad400", links_per_module=4)
    switch = dict(SW64, port_modes="16x1600,64x400")
    sol = design(tmp_path, tables(3, node=node, switches=(switch,), optics=(DAC, quad),
                                  topologies_allowed="leaf_mesh", cable_m_node_leaf=10))
    s = opened(sol)["s1"]
    assert link_counts(s) == {"node_leaf": (3, "quad400", 4)}
    assert bom_lines(sol)[("s1", "optics", "quad400")][0] == 4


def test_twin_port_modules_counted_per_switch(tmp_path):
    """A twin-port module sits in one switch: a leaf with an odd number of uplinks needs one module
    more than half of them. max_oversubscription 5 on 32 twin-port cages: u = 11 uplinks take 6 cages, so
    d <= 2 x (32 - 6) = 52 down ports (52 <= 5 x 11), the grid's split at 5:1; 6 nodes (48 endpoints) on 1 leaf
    and 1 spine would take ceil(11 / 2) = 6 modules at each end, 12 in all (the 11 of an aggregate 2 x 11 / 2 would
    leave one uplink of the leaf and one port of the spine unserved). 10 uplinks hold 50 >= 48 down ports within
    5:1 (5 cages, 54 down ports by the cages): 5 modules at each end, 10 in all, the design."""
    twin = dict(SR, name="twin400", power_w=15, price_usd=800, links_per_module=2)
    sol = design(tmp_path, tables(48, switches=(TWIN_CAGES,), optics=(DAC, SPLIT, twin),
                                  topologies_allowed="leaf_spine", max_oversubscription=5))
    s = opened(sol)["s1"]
    assert tier_counts(s) == {"leaf": {"sw64": 1}, "spine": {"sw64": 1}}
    leaf = next(t for t in s["tiers"] if t["tier"] == "leaf")
    assert (leaf["down_ports"], leaf["up_ports"]) == (50, 10)
    assert link_counts(s)["leaf_spine"] == (10, "twin400", 10)
    assert link_counts(s)["node_leaf"] == (48, "split400", 24)


# --------------------------------------------------------------------------------------------------
# Two sites, one route
# --------------------------------------------------------------------------------------------------

def two_sites(distance_km: float = 100, **project) -> dict:
    """8 nodes (64 GPUs) wanted; two sites of 0.055 MW at PUE 1.25, one route with 40 km amplifier
    spacing, $10 a fiber pair-km, zr400 (400G, 3 channels a pair), the two DCI routers beside the switch
    (cable_m_dci_attach 3 m: a DAC reaches). A site's routers join its switch by one attachment (8 x 400G =
    3,200 Gb/s, at least its inter-site capacity): 8 more switch ports and DACs ($800, 8 W), and router ports
    for capacity + 3,200 Gb/s. A site with 4 nodes draws (40,000 + 500 leaf + 32 + 8 DACs + 1,500 routers +
    4 x 15 coherent) x 1.25 = 52,625 W <= 55,000 W; 5 nodes draw at least (50,000 + 500 + 40) x 1.25 = 63,175 W:
    so both sites open, 4 nodes each (a single 64-port switch each: 32 + 8 of its ports)."""
    sites = [site(n, power_mw=0.055, pue=1.25) for n in ("a", "b")]
    route = dict(site_a="a", site_b="b", distance_km=distance_km, fiber_pairs=4, fiber_cost_usd_per_pair_km=10,
                 amplifier_spacing_km=40)
    return tables(64, sites=sites, routes=[route], switches=(SW64, SHALLOW, DEEP),
                  topologies_allowed="leaf_mesh", **{"cable_m_dci_attach": 3, **project})


GRAY = dict(name="lr400", kind="gray", gbps=400, reach_km=5, fiber_pairs_per_link=1, power_w=10, price_usd=1_000,
            **SRC)


def test_campus_link_on_gray_optics(tmp_path):
    """2 km, amplifiers every 1 km: 4 links of 400G. Gray (a fiber pair a link, $1,000 a module): 4 pairs of the
    4, 8 modules, no amplifiers; coherent would take 2 pairs, 2 amplifiers and 8 x $5,000 modules.
    RTT 0.0196 ms: BDP 3.92 MB; router ports 1,600 + 3,200 Gb/s: two shallow routers. Site IT = 40,000 + 500 +
    32 + 8 + 1,000 + 4 x 10 = 41,580 W, x 1.25 = 51,975 W; site capex = 400,000 + 10,000 + 3,200 + 800 + 40,000 +
    4,000 + 1,000 + 51,975 = $510,975; route = 4 pairs x 2 km x $10 = $80; total $1,022,030."""
    book = two_sites(distance_km=2)
    book["routes"][0]["amplifier_spacing_km"] = 1
    book["coherent"] = [ZR, GRAY]
    sol = design(tmp_path, book)
    [link] = sol["links"]
    assert {k: link[k] for k in ("coherent_model", "optic_kind", "wavelengths", "fiber_pairs", "amplifiers",
                                 "fiber_pairs_per_link", "channels_per_pair")} == {
        "coherent_model": "lr400", "optic_kind": "gray", "wavelengths": 4, "fiber_pairs": 4, "amplifiers": 0,
        "fiber_pairs_per_link": 1, "channels_per_pair": None}
    assert sol["objective_usd"] == pytest.approx(1_022_030, abs=1e-6)
    assert all(s["capex_usd"] == pytest.approx(510_975, abs=1e-6) for s in opened(sol).values())
    assert not [line for line in sol["bom"] if line["category"] == "amplifiers"]
    assert bom_lines(sol)["a", "dci_optics", "lr400"][:2] == (4, 4_000)  # gray modules: their own BOM category
    # with 3 fiber pairs the 4 gray links do not fit: coherent it is (2 pairs, 1 amplifier each)
    book["routes"][0]["fiber_pairs"] = 3
    [link] = design(tmp_path, book, "three")["links"]
    assert (link["coherent_model"], link["fiber_pairs"], link["amplifiers"]) == ("zr400", 2, 2)


def test_two_sites_forced_by_power(tmp_path):
    """100 km: dci_ratio 0.125 x 8 x 400G x 4 nodes = 1,600 Gb/s a site -> 4 wavelengths of 400G,
    8 coherent ports; 3 channels a pair -> 2 fiber pairs; ceil(100 / 40) - 1 = 2 amplifiers a pair -> 4.
    RTT = 2 x 4.9 us x 100 = 0.98 ms; BDP = 1,600 Gb/s x 0.98 ms / 8 = 196 MB a site.
    Router ports: 3,200 Gb/s a router >= 1,600 + 3,200 (the attachment) -> 2 routers; 196 MB of buffer: deep +
    shallow ($80,000) beats 2 deep ($120,000); 2 shallow hold 100 MB only.
    Site IT = 40,000 + 500 + 32 + 8 + 1,500 + 60 = 42,100 W, facility 52,625 W;
    site capex = 400,000 + 10,000 + 3,200 + 800 + 80,000 + 4 x 5,000 + 1,000 + 52,625 = $567,625;
    route = 2 pairs x 100 km x $10 + 4 x $10,000 = $42,000; capex = 2 x 567,625 + 42,000 = $1,177,250.
    Amplifier power is on the route, not in a site's power: 2 x 0.052625 MW."""
    sol = design(tmp_path, two_sites())
    assert sol["status"] == "optimal"
    sites = opened(sol)
    assert sorted(sites) == ["a", "b"]
    for s in sites.values():
        assert (s["nodes"], s["topology"], s["fabric_tiers"]) == (4, "leaf_mesh", 1)
        assert tier_counts(s) == {"leaf": {"sw64": 1}, "dci": {"r_deep": 1, "r_shallow": 1}}
        assert s["power_mw"] == pytest.approx(0.052625, abs=1e-12)
        assert s["capex_usd"] == pytest.approx(567_625, abs=1e-6)
        assert s["dci_capacity_gbps"] == 1600 and s["dci_bdp_mb"] == pytest.approx(196)
        assert {k: s["dci_attachment"][k] for k in ("attachments", "links", "gbps", "length_m")} == {
            "attachments": 1, "links": 8, "gbps": 400, "length_m": 3}
        assert s["tiers"][0]["used_ports"] == 40  # 32 NICs and 8 router ports on the switch
    [link] = sol["links"]
    assert {k: link[k] for k in ("site_a", "site_b", "coherent_model", "wavelengths", "coherent_ports",
                                 "fiber_pairs", "amplifiers", "capacity_gbps", "channels_per_pair")} == {
        "site_a": "a", "site_b": "b", "coherent_model": "zr400", "wavelengths": 4, "coherent_ports": 8,
        "fiber_pairs": 2, "amplifiers": 4, "capacity_gbps": 1600, "channels_per_pair": 3}
    assert link["rtt_ms"] == pytest.approx(0.98, abs=1e-12)
    totals = sol["totals"]
    assert (totals["gpus"], totals["nodes"], totals["coherent_ports"], totals["sites_open"]) == (64, 8, 8, 2)
    assert totals["capex_usd"] == pytest.approx(1_177_250, abs=1e-6)
    assert totals["power_mw"] == pytest.approx(0.10525, abs=1e-12)
    lines = bom_lines(sol)
    assert lines[("a--b", "amplifiers", "amp")] == (4, 40_000, 400)
    assert lines[("a--b", "fiber", "fiber pair-km (100 km)")][:2] == pytest.approx((200, 2_000))
    assert lines[("a", "coherent", "zr400")] == (4, 20_000, 60)
    assert lines[("b", "dci_routers", "r_deep")] == (1, 60_000, 1_000)
    assert lines[("b", "dci_attachment", "dac400")] == (8, 800, 8)
    assert_bom_total(sol)


def test_short_route_needs_no_deep_buffer(tmp_path):
    """The same at 2 km: BDP = 1,600 x 0.0196 / 8 = 3.92 MB <= 2 x 50 MB: 2 shallow routers a site (ports for
    1,600 + 3,200 Gb/s); ceil(2 / 40) - 1 = 0 amplifiers. Site IT = 40,000 + 500 + 32 + 8 + 1,000 + 60 = 41,600 W,
    facility 52,000 W; site capex = 400,000 + 10,000 + 3,200 + 800 + 40,000 + 20,000 + 1,000 + 52,000 = $527,000;
    fiber 2 pairs x 2 km x $10 = $40; capex = $1,054,040."""
    sol = design(tmp_path, two_sites(distance_km=2))
    for s in opened(sol).values():
        assert tier_counts(s)["dci"] == {"r_shallow": 2}
        assert s["dci_bdp_mb"] == pytest.approx(3.92)
    [link] = sol["links"]
    assert (link["wavelengths"], link["fiber_pairs"], link["amplifiers"]) == (4, 2, 0)
    assert sol["totals"]["capex_usd"] == pytest.approx(1_054_040, abs=1e-6)
    assert_bom_total(sol)


def test_dci_ratio_scales_the_inter_site_capacity(tmp_path):
    """dci_ratio 0.25: 0.25 x 3,200 x 4 = 3,200 Gb/s -> 8 wavelengths, ceil(8 / 3) = 3 pairs, 6
    amplifiers; BDP 3,200 x 0.98 / 8 = 392 MB; ports 3,200 + 3,200 (one attachment still covers it) -> 2
    routers: deep + shallow (4,050 MB, $80,000) beats 2 deep ($120,000) and 8 shallow ($160,000).
    Site IT = 40,000 + 500 + 32 + 8 + 1,000 + 500 + 8 x 15 = 42,160 W, facility 52,700 W;
    site capex = 400,000 + 10,000 + 3,200 + 800 + 80,000 + 40,000 + 1,000 + 52,700 = $587,700;
    route = 3 x 100 x $10 + 6 x $10,000 = $63,000; capex = $1,238,400."""
    sol = design(tmp_path, two_sites(dci_ratio=0.25))
    for s in opened(sol).values():
        assert tier_counts(s)["dci"] == {"r_deep": 1, "r_shallow": 1}
        assert s["capex_usd"] == pytest.approx(587_700, abs=1e-6)
    [link] = sol["links"]
    assert (link["wavelengths"], link["coherent_ports"], link["fiber_pairs"], link["amplifiers"]) == (8, 16, 3, 6)
    assert sol["totals"]["capex_usd"] == pytest.approx(1_238_400, abs=1e-6)
    assert_bom_total(sol)


def test_dci_routers_of_another_family_cannot_join_the_fabric(tmp_path):
    """Ethernet DCI routers and an InfiniBand fabric: no router joins the leaves, so no site carries inter-site
    traffic, and the two sites the power forces open cannot be joined. With the audit, a design whose routes carry
    traffic to a site without an attachment fails."""
    book = two_sites()
    book["switches"] = [SW64, dict(SHALLOW, family="ethernet"), dict(DEEP, family="ethernet")]
    with pytest.raises(Infeasible):
        design(tmp_path, book)
    sol = design(tmp_path, two_sites(), "joined")
    del sol["sites"][0]["dci_attachment"]
    assert any("no DCI attachment joins its routers to the fabric" in v for v in audit(sol))


def test_rtt_limit_forbids_the_second_site(tmp_path):
    """max_site_rtt_ms 0.5 < 0.98 ms: the two sites may not both open, one holds 4 nodes only."""
    with pytest.raises(Infeasible, match="max_site_rtt_ms 0.5"):
        design(tmp_path, two_sites(max_site_rtt_ms=0.5))


# --------------------------------------------------------------------------------------------------
# Objective, limits, infeasibility
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("project, topology, capex", [
    # 12 nodes: rail-only (8 rail switches, no optics) is both cheapest and fastest (1.43 us):
    # capex = 1,200,000 + 80,000 + 9,600 + 1,000 + (120,000 + 4,000 + 96) x 1.5 = $1,476,744;
    # the 2-level leaf mesh costs $1,512,024 (see test_leaf_mesh_two_tier).
    ({}, "rail_only", 1_476_744),
    ({"objective": "min_latency"}, "rail_only", 1_476_744),
    ({"max_fabric_latency_us": 1.45}, "rail_only", 1_476_744),
])
def test_objective_and_latency_limit(tmp_path, project, topology, capex):
    sol = design(tmp_path, tables(96, **project))
    s = opened(sol)["s1"]
    assert (s["nodes"], s["topology"]) == (12, topology)
    assert sol["totals"]["capex_usd"] == pytest.approx(capex, abs=1e-6)
    assert sol["status"] == "optimal"


def test_energy_over_the_horizon_is_opex(tmp_path):
    """horizon_years 2 adds 2 x 8,760 h x $50/MWh x 0.060798 MW = $53,259.048 of energy to the
    objective of test_four_nodes_on_one_switch, outside the BOM and capex."""
    sol = design(tmp_path, tables(32, horizon_years=2))
    assert sol["totals"]["capex_usd"] == pytest.approx(474_998, abs=1e-6)
    assert sol["totals"]["energy_usd"] == pytest.approx(53_259.048, abs=1e-6)
    assert sol["objective_usd"] == pytest.approx(474_998 + 53_259.048, abs=1e-6)
    assert_bom_total(sol)


def test_budget_below_the_minimum_cost(tmp_path):
    with pytest.raises(Infeasible) as caught:
        design(tmp_path, tables(32, budget_usd=400_000))
    assert caught.value.reason == "the minimum cost is $474,998, above budget_usd $400,000"


def test_not_enough_power_for_the_gpus(tmp_path):
    """0.1 MW at PUE 1.5 feeds 66,666 W: 6 nodes of 10 kW, 48 GPUs before the network."""
    with pytest.raises(Infeasible, match="offer at most 48 GPUs within their power and space"):
        design(tmp_path, tables(64, sites=[site("s1", power_mw=0.1)]))


# --------------------------------------------------------------------------------------------------
# Published reference designs (smoke: two rows; tests/test_published.py holds them all)
# --------------------------------------------------------------------------------------------------

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "reference_designs.csv"


@pytest.mark.skipif(not REFERENCE.is_file(), reason="shared/reference not present")
@pytest.mark.parametrize("name", ["h100-1su", "b200-16su"])
def test_reference_design_smoke(tmp_path, name):
    row = next(r for r in csv.DictReader(REFERENCE.open()) if r["design"] == name)
    catalog = load_catalog()
    node_name = {"8": "DGX H100" if name.startswith("h100") else "DGX B200"}[row["gpus_per_node"]]
    nodes = int(row["nodes"])
    book = {
        "project": {"gpus_required": nodes * int(row["gpus_per_node"]), "node_type": node_name,
                    "topologies_allowed": row["topology"], "protocols_allowed": "infiniband",
                    "max_oversubscription": 1},
        "sites": [site("pod", power_mw=50, max_nodes=nodes, status="required")],
        "switches": catalog["switches"].loc[[row["switch_model"]]],
    }
    sol = design(tmp_path, book, name)
    s = opened(sol)["pod"]
    counts = {t: sum(m.values()) for t, m in tier_counts(s).items()}
    expected = {t: int(row[t]) for t in ("leaf", "spine", "core") if int(row[t])}
    assert (s["nodes"], s["endpoints"], counts) == (nodes, int(row["endpoints"]), expected)
    if row["links_per_tier"]:
        assert {lk["tier"]: lk["count"] for lk in s["fabric_links"]} == {
            t: int(row["links_per_tier"]) for t in ("node_leaf", "leaf_spine", "spine_core")[:s["fabric_tiers"]]}


def test_thread_counts_may_change_between_solves(tmp_path):
    """HiGHS keeps one thread scheduler per process: solves asking for different thread counts in one
    process (a sweep's in-process worker after a default solve) must all still solve."""
    inputs = load_inputs(write_workbook(tmp_path / "plan.xlsx", tables(32)))
    statuses = [solve(inputs, SolveOptions(threads=threads))["status"] for threads in (None, 1, 2, 1)]
    assert statuses == ["optimal"] * 4


def test_unused_modes_and_closed_sites_hold_no_equipment(tmp_path):
    """A design stopped short of optimality must not carry equipment of a mode it does not use, wavelengths of a
    DCI optic a route does not use, or routers at a site it does not open (the model's capex would then exceed
    the BOM). With the site, mode and optic choices of the optimum fixed, forcing any count of an unselected mode
    or optic (or any router of a closed site) to at least one leaves the model infeasible."""
    from designer.solve.highs import SolveOptions as Options
    from designer.solve.highs import run_highs
    from designer.solve.prepare import prepare_data
    from models.network import build_model, set_objective

    sites = [site("a", max_nodes=32), site("b", max_nodes=32), site("c", max_nodes=4, fixed_cost_usd=10_000_000)]
    routes = [dict(site_a=a, site_b=b, distance_km=50, fiber_pairs=40, fiber_cost_usd_per_pair_km=10)
              for a, b in (("a", "b"), ("b", "c"))]
    # two 16-port models, neither cheaper and cooler than the other: 3-tier fabrics (from 128 NICs up) of
    # either, so unselected 3-tier modes stand beside the chosen one at the open sites
    sw16 = dict(SW64, model="sw16", port_modes="16x400", price_usd=2_000)
    sw16b = dict(sw16, model="sw16b", price_usd=1_500, power_w=900)
    book = tables(512, sites=sites, routes=routes, switches=(sw16, sw16b, SHALLOW, DEEP), max_oversubscription=2)
    book["coherent"].append(dict(ZR, name="zr400-dearer", price_usd=6_000))  # an optic each route leaves unused
    data = prepare_data(load_inputs(write_workbook(tmp_path / "plan.xlsx", book)))
    model = build_model(data)
    set_objective(model)
    assert run_highs(model, Options(mip_gap=1e-9)).status == "optimal"
    assert {s for s in model.S if round(model.open[s].value)} == {"a", "b"}
    unused = {(s, i) for s, i in model.SM if round(model.y[s, i].value) == 0}
    counts = [var[s, i] for var in (model.su, model.leaves, model.agg, model.core) for s, i in var if (s, i) in unused]
    counts += [model.routers[s, k] for s, k in model.SK if s == "c"]
    assert {v.parent_component().name for v in counts if v.index()[0] != "c"} >= {"leaves", "agg", "core"}
    # a route's wavelengths are continuous per DCI optic (their total is the integer): none on an optic it does not use
    lit = {(r, c) for r, c in model.RC if round(model.x[r, c].value)}
    assert lit and all(model.waves[r, c].value == pytest.approx(round(model.waves[r, c].value)) for r, c in lit)
    counts += [model.waves[r, c] for r, c in model.RC if (r, c) not in lit and round(model.use[r].value)]
    assert any(v.parent_component().name == "waves" for v in counts)
    for binary in (model.y, model.open, model.x):
        for v in binary.values():
            v.fix(round(v.value))
    for var in counts:
        var.setlb(1)
        assert run_highs(model, Options(mip_gap=1.0)).status == "infeasible", f"{var.name} holds phantom equipment"
        var.setlb(0)


def test_time_limit_covers_every_highs_run_of_a_solve(tmp_path, monkeypatch):
    """--time-limit is one budget for the whole solve: under min_latency (a cost stage with its starts, latency
    probes and a second cost stage) every HiGHS run gets only the time left (a start's completion runs past
    START_SHARE of it only while it has no design), so the limits it is given shrink and all fit in the one budget."""
    import designer.solve.run as run
    import designer.solve.start as starts

    given = []

    def recording(real):
        def run_highs(model, options, *args, **kwargs):
            limit = options.time_limit
            if options.rens and options.settle_after is None:  # the LP's sites completed beside a greedy design
                limit = options.time_limit / starts.START_SHARE  # START_SHARE of the time left
            elif options.rens:  # a start's completion: past START_SHARE of the time left only while it has no design
                assert options.settle_after == pytest.approx(options.time_limit * starts.START_SHARE)
            given.append((time.perf_counter(), limit))
            return real(model, options, *args, **kwargs)
        return run_highs

    monkeypatch.setattr(run, "run_highs", recording(run.run_highs))
    monkeypatch.setattr(starts, "run_highs", recording(starts.run_highs))
    start = time.perf_counter()
    fast = dict(SW64, model="fast", latency_ns=50, price_usd=30_000)  # a faster level that holds the job
    book = tables(512, switches=(SW64, fast), objective="min_latency")
    inputs = load_inputs(write_workbook(tmp_path / "plan.xlsx", book))
    solve(inputs, SolveOptions(time_limit=30))
    assert len(given) >= 3
    for at, limit in given:
        assert limit == pytest.approx(30 - (at - start), abs=0.5)
    assert [limit for _, limit in given] == sorted((limit for _, limit in given), reverse=True)


def test_latency_level_that_cannot_hold_the_job_needs_no_solve(tmp_path, monkeypatch):
    """min_latency: a level whose modes hold fewer GPUs than gpus_required (ModelData.most_gpus: each site at
    its most, the max_sites largest) is ruled out without a HiGHS run. 128 nodes: a one-switch rail (64 ports,
    1.43 us) holds 64 nodes, 512 GPUs; the design is the 2-tier one, as before."""
    import designer.solve.run as run

    runs, said = [], []
    real = run.run_highs
    monkeypatch.setattr(run, "run_highs", lambda *a, **kw: runs.append(kw.get("stop_below_cutoff")) or real(*a, **kw))
    inputs = load_inputs(write_workbook(tmp_path / "plan.xlsx", tables(1024, objective="min_latency")))
    sol = solve(inputs, SolveOptions(mip_gap=1e-9, progress=said.append))
    assert sol["status"] == "optimal" and opened(sol)["s1"]["nodes"] == 128
    assert [t["tier"] for t in opened(sol)["s1"]["tiers"]] == ["leaf", "spine"]
    probes = [m for m in said if m.startswith("latency level")]
    assert "latency level 1.430 us: infeasible (its modes hold 512 GPUs at most)" in probes
    assert runs.count(True) == sum("GPUs at most" not in m for m in probes)  # a probe stops at its first design


def test_most_gpus_counts_the_largest_sites_max_sites_allows(tmp_path):
    """Two sites of 10 and 30 nodes of 8 GPUs: 320 GPUs at most with max_sites 2, 240 with max_sites 1."""
    from designer.solve.prepare import prepare_data

    for max_sites, most in ((2, 320), (1, 240)):
        book = tables(4096, sites=[site("a", max_nodes=10), site("b", max_nodes=30)], max_sites=max_sites)
        data = prepare_data(load_inputs(write_workbook(tmp_path / f"m{max_sites}.xlsx", book)))
        assert data.site_most_gpus() == {"a": 80, "b": 240} and data.most_gpus() == most


def test_clock_runs_out():
    from designer.solve.run import Clock

    assert Clock(None).left(SolveOptions(time_limit=None)).time_limit is None
    assert Clock(10.0).left(SolveOptions()).time_limit == pytest.approx(10.0, abs=0.5)
    assert Clock(0.01).left(SolveOptions()) is None


def test_spine_module_rows_hold_exactly_the_ceiling_of_each_spines_links():
    """A 2-tier Clos of twin-port modules (k links a module) whose option (d, u, j) has j spines take u / j links of
    each of L leaves: the rows leave each spine exactly ceil(u L / j / k) modules (no spare one, as on a time-limited
    stop, no fewer), and the aggregate row holds for that count. The default example's modes have one split each
    (several sites); the SuperPOD's (one site) every split (its leaves counted per option)."""
    import pyomo.environ as pyo

    from designer.solve.prepare import prepare_data
    from models.modes import unit_shape
    from models.network import build_model, leaf_count

    def holds(row) -> bool:
        body = pyo.value(row.body)
        return ((row.lower is None or body >= pyo.value(row.lower) - 1e-9)
                and (row.upper is None or body <= pyo.value(row.upper) + 1e-9))

    checked = {}
    for example in ("default", "superpod-h100"):
        data = prepare_data(load_inputs(Path(__file__).resolve().parents[1] / "data" / "examples" / f"{example}.xlsx"))
        model = build_model(data)
        checked[example] = 0
        for s, i, o in model.SMOW:
            mode, leaves_var = data.modes[i], model.su if (s, i) in model.SM_su else model.leaves
            k = mode.cables[1].links_per_module
            _, u, j = model.options[s, i][o]
            model.y[s, i].set_value(1)
            for other in range(len(model.options[s, i])):
                model.z[s, i, other].set_value(int(other == o))
                model.spine_modules[s, i, other].set_value(0)
                if (s, i, other) in model.SMO_split:
                    model.lo[s, i, other].set_value(0)
            for units in range(1, 5):
                leaves_var[s, i].set_value(units)
                if mode.splits:
                    model.lo[s, i, o].set_value(units)
                leaves = round(pyo.value(leaf_count(model, s, i)))
                assert leaves == units * unit_shape(mode.topology, data.rails)[1]
                if leaves * u > mode.spine_ports * j:
                    continue  # more leaf uplinks than j spines hold
                need = -(-(u // j * leaves) // k)
                rows = [model.spine_module_count[s, i, o], model.spine_module_round[s, i, o],
                        model.spine_module_pick[s, i, o], model.spine_module_total[s, i]]
                for count, expected in ((need, True), (need + 1, False), (need - 1, False)):
                    model.spine_modules[s, i, o].set_value(count)
                    assert all(holds(r) for r in rows) is expected, (example, u, j, leaves, count)
                model.spine_modules[s, i, o].set_value(0)
                checked[example] += 1
    assert checked["default"] >= 3 and checked["superpod-h100"] >= 1, checked


def test_a_second_preparation_of_the_same_inputs_reads_the_kept_modes(monkeypatch):
    """prepare_data keeps the modes of its last preparations by the inputs' content and its arguments: the same
    inputs again (re-read from the workbook, or the same object) get the same modes and account without a second
    enumeration; a changed input, or another argument, is prepared afresh."""
    from collections import OrderedDict

    import designer.solve.prepare as prepare

    monkeypatch.setattr(prepare, "PREPARED", OrderedDict())
    enumerated = []
    real = prepare.enumerate_modes
    monkeypatch.setattr(prepare, "enumerate_modes", lambda *a, **kw: enumerated.append(1) or real(*a, **kw))
    workbook = Path(__file__).resolve().parents[1] / "data" / "examples" / "default.xlsx"
    first = prepare.prepare_data(load_inputs(workbook))
    again = prepare.prepare_data(load_inputs(workbook))
    assert len(enumerated) == 1
    assert [m.id for m in again.modes] == [m.id for m in first.modes] and again.modes
    assert again.modeset.summary() == first.modeset.summary()
    assert again.multiplier == first.multiplier and again.inter.routes == first.inter.routes
    again.modeset.filtered["changed by a reader"] += 1  # a reader's change stays its own
    assert prepare.prepare_data(again.inputs).modeset.summary() == first.modeset.summary()
    changed = load_inputs(workbook)
    changed.project["max_oversubscription"] = 2.0
    looser = prepare.prepare_data(changed)
    assert len(enumerated) == 2
    assert looser.modeset.summary()["enumerated"] > first.modeset.summary()["enumerated"]
    prepare.prepare_data(load_inputs(workbook), by_latency=True)
    assert len(enumerated) == 3


@pytest.mark.parametrize("objective", ["min_latency", "min_cost"])
def test_a_latency_capped_preparation_keeps_what_pruning_every_mode_keeps(monkeypatch, objective):
    """A preparation with a latency cap is derived from the uncapped one (the latency a pruning criterion: the
    min_latency objective, or by_latency): its modes at or below the cap, pruned again without the criterion. At
    every latency level of the default example it keeps the modes that enumerating and pruning every mode at or
    below the cap keeps, in an account of as many enumerated modes, and enumerates nothing itself."""
    from collections import OrderedDict

    import designer.solve.prepare as prepare

    monkeypatch.setattr(prepare, "PREPARED", OrderedDict())
    inputs = load_inputs(Path(__file__).resolve().parents[1] / "data" / "examples" / "default.xlsx")
    inputs.project["objective"] = objective
    by_latency = objective != "min_latency"
    uncapped = prepare.prepare_data(inputs, by_latency=by_latency)
    levels = sorted({m.latency_us for m in uncapped.modes})
    assert len(levels) >= 3
    enumerated = []
    real = prepare.enumerate_modes
    monkeypatch.setattr(prepare, "enumerate_modes", lambda *a, **kw: enumerated.append(1) or real(*a, **kw))
    for level in levels:
        derived = prepare.prepare_data(inputs, latency_cap=level, by_latency=by_latency)
        assert not enumerated
        every = prepare.pruned(inputs, level, None, by_latency, None)
        enumerated.clear()
        assert sorted(m.id for m in derived.modes) == sorted(m.id for m in every.modes) and derived.modes
        assert all(m.latency_us <= level + 1e-9 for m in derived.modes)
        summary = derived.modeset.summary()
        assert summary["enumerated"] == every.modeset.summary()["enumerated"]
        assert summary["kept"] + sum(summary["filtered"].values()) == summary["enumerated"]


def test_a_mode_evolved_is_the_mode_replaced():
    """Mode.evolve (the enumeration's copy per cable choice) makes what dataclasses.replace makes: every field the
    same, equal and of one hash, the original untouched."""
    import dataclasses

    from models.modes import Mode

    mode = Mode(id="clos", topology="clos", tiers=2, hops=3, protocol="rocev2", leaf="L", spine="S", core=None, g0=400,
                g1=400, g2=None, d1=32, u1=32, latency_breakdown_us={"nic": 1.0})
    changes = {"id": "clos/dac", "latency_us": 2.5, "sites": frozenset({"a"}), "splits": ((40, 20),)}
    evolved, replaced = mode.evolve(**changes), dataclasses.replace(mode, **changes)
    assert evolved == replaced and hash(evolved) == hash(replaced)
    assert all(getattr(evolved, f.name) == getattr(replaced, f.name) for f in dataclasses.fields(Mode))
    assert mode.id == "clos" and mode.splits == () and mode.sites == frozenset()
