"""Why infeasible, in planner terms: one small workbook per cause, the knob named with its figure,
and the suggested change, applied, makes the workbook solve.

The catalog is tiny and hand-checkable (the figures below), so each expected number is worked out here:

- node ``n8``: 8 GPUs, 8 NICs x 400G, 10 kW, $100,000; switch ``sw64``: InfiniBand, 64 x 400G,
  100 ns, 500 W, $10,000; ``dac400`` 3 m, 1 W, $100; ``sr400`` 500 m transceiver, 10 W, $500;
  InfiniBand NICs 500 ns; sites at PUE 1.5, $1,000 fixed, $1,000,000 per MW.
- 4 nodes (32 GPUs) on one switch draw 40,000 + 500 + 32 x 1 = 40,532 W, 60,798 W facility; they cost
  4 x 100,000 + 10,000 + 3,200 + 1,000 + 60,798 = $474,998.
- The fastest fabric is one switch (leaf_mesh, 1 tier): 2 x 0.5 + 0.1 + 2 x 3 m x 5 ns = 1.13 us; it holds
  64 / 8 = 8 nodes. Next, one switch per rail (rail_only, 1 tier) adds the NVLink hop, 1.43 us, and holds
  64 nodes.
"""

from __future__ import annotations

import copy
import json

import pytest

from designer import cli
from designer.errors import Infeasible
from designer.inputs.workbook import load_inputs
from designer.inputs.writer import write_workbook
from designer.solve.diagnose import diagnose
from designer.solve.run import SolveOptions, solve
from designer.tools.sweep import apply

SRC = {"source": "test figures"}
NODE = dict(name="n8", gpus_per_node=8, nics_per_node=8, nic_gbps=400, planes=1, node_power_kw=10.0,
            node_price_usd=100_000, nvlink_latency_ns=300, **SRC)
SW64 = dict(model="sw64", family="infiniband", port_modes="64x400", buffer_mb=16, latency_ns=100, power_w=500,
            price_usd=10_000, roles="leaf,spine,core", **SRC)
DAC = dict(name="dac400", gbps=400, kind="dac", reach_m=3, power_w=1, price_usd=100, **SRC)
SR = dict(name="sr400", gbps=400, kind="transceiver", reach_m=500, power_w=10, price_usd=500, **SRC)
IB = dict(name="infiniband", switch_family="infiniband", nic_latency_ns=500, efficiency=0.9, lossless=True,
          jitter_rank=1, **SRC)
ZR = dict(name="zr400", gbps=400, reach_km=120, channel_ghz=75, power_w=15, price_usd=5_000, **SRC)
AMP = dict(name="amp", power_w=100, price_usd=10_000, **SRC)
ROUTER = dict(model="dci8", family="infiniband", port_modes="32x400", buffer_mb=8000, latency_ns=3000, power_w=1000,
              price_usd=60_000, roles="dci", **SRC)


def site(name: str, **kw) -> dict:
    row = dict(name=name, power_mw=10, pue=1.5, max_nodes=1000, fixed_cost_usd=1_000,
               power_cost_usd_per_mw=1_000_000, energy_usd_per_mwh=50, status="candidate")
    row.update(kw)
    return row


def book(gpus: int = 32, sites=None, routes=None, workload=None, **project) -> dict:
    """A small workbook over the test catalog; keyword arguments are project keys. Cable lengths are the
    planner's (3 m, 50 m, 150 m), not the floor layout's, and there are no support networks, so the figures
    below are worked by hand."""
    tables = {
        "project": {"gpus_required": gpus, "node_type": "n8", "cable_m_node_leaf": 3, "cable_m_leaf_spine": 50,
                    "cable_m_spine_core": 150, "support_networks": False, **project},
        "sites": sites or [site("s1")],
        "node_types": [NODE], "switches": [SW64, ROUTER], "optics": [DAC, SR], "protocols": [IB],
        "coherent": [ZR], "amplifiers": [AMP],
    }
    if routes:
        tables["routes"] = routes
    if workload:
        tables["workload"] = workload
    return copy.deepcopy(tables)


def pair(distance_km: float = 60, **project) -> dict:
    """Two sites of 0.07 MW each (4 nodes fit one, not 8), 64 GPUs wanted: both must open."""
    sites = [site("a", power_mw=0.07, lat=40.4, lon=-3.7), site("b", power_mw=0.07, lat=40.9, lon=-3.2)]
    route = dict(site_a="a", site_b="b", distance_km=distance_km, fiber_pairs=4, fiber_cost_usd_per_pair_km=10)
    return book(64, sites=sites, routes=[route], **project)


def infeasible(tmp_path, tables: dict, name: str = "plan"):
    inputs = load_inputs(write_workbook(tmp_path / f"{name}.xlsx", tables))
    with pytest.raises(Infeasible) as caught:
        solve(inputs, SolveOptions())
    return inputs, caught.value


def only_change(diagnosis: dict, knob: str) -> dict:
    changes = [c for c in diagnosis["changes"] if c["knob"] == knob]
    assert changes, diagnosis
    return changes[0]


def fixed_by(inputs, diagnosis: dict) -> dict:
    """Solve again with every suggested change applied (as a sweep would): it must have a design."""
    changes = {("sites." + c["scope"].split(".", 1)[1] + "." + c["knob"]) if c["scope"].startswith("sites.")
               else c["knob"]: repr(c["needed"]) for c in diagnosis["changes"]}
    return solve(apply(inputs, changes), SolveOptions())


# --------------------------------------------------------------------------------------------------

def test_budget_too_low_names_the_budget_and_the_missing_dollars(tmp_path):
    inputs, exc = infeasible(tmp_path, book(32, budget_usd=400_000))
    d = exc.details["diagnosis"]
    c = only_change(d, "budget_usd")
    assert c["current"] == 400_000 and c["needed"] == pytest.approx(475_000)
    assert c["message"] == "raise budget_usd by $75,000 (to $475,000)"
    assert [x["knob"] for x in d["changes"]] == ["budget_usd"]
    assert fixed_by(inputs, d)["objective_usd"] == pytest.approx(474_998)


def test_site_short_of_power_names_the_site_and_the_megawatts(tmp_path):
    inputs, exc = infeasible(tmp_path, book(32, sites=[site("s1", power_mw=0.05)]))
    d = exc.details["diagnosis"]
    c = only_change(d, "power_mw")
    assert c["scope"] == "sites.s1" and c["unit"] == "MW"
    assert c["needed"] == pytest.approx(0.0608)  # 60,798 W facility, rounded up
    assert c["message"] == "site s1 needs 0.0108 MW more (power_mw 0.05 -> 0.0608)"
    assert [x["knob"] for x in d["changes"]] == ["power_mw"]
    assert fixed_by(inputs, d)["totals"]["gpus"] == 32


def test_latency_limit_below_every_fabric_names_the_fastest(tmp_path):
    inputs, exc = infeasible(tmp_path, book(32, max_fabric_latency_us=1.0))
    d = exc.details["diagnosis"]
    assert d["method"] == "mode_filter"
    c = only_change(d, "max_fabric_latency_us")
    assert c["needed"] == pytest.approx(1.13)
    assert "no fabric mode meets max_fabric_latency_us 1: the fastest is 1.13 us (leaf_mesh, infiniband, 400G)" \
        in c["message"]
    assert fixed_by(inputs, d)["sites"][0]["fabric_latency_us"] == pytest.approx(1.13)


def test_latency_limit_that_only_small_fabrics_meet(tmp_path):
    """1.2 us keeps the one-switch fabric (8 nodes at most); 128 GPUs need 16 nodes: one switch per rail."""
    inputs, exc = infeasible(tmp_path, book(128, max_fabric_latency_us=1.2))
    d = exc.details["diagnosis"]
    c = only_change(d, "max_fabric_latency_us")
    assert c["needed"] == pytest.approx(1.43)
    assert "the fastest that does is 1.43 us (rail_only, infiniband, 400G" in c["message"]
    assert "raise max_fabric_latency_us to 1.43" in c["message"]
    assert fixed_by(inputs, d)["totals"]["gpus"] == 128


def test_gpu_demand_beyond_space_names_the_nodes_missing(tmp_path):
    inputs, exc = infeasible(tmp_path, book(64, sites=[site("s1", max_nodes=4)]))
    d = exc.details["diagnosis"]
    c = only_change(d, "max_nodes")
    assert (c["current"], c["needed"], c["change"]) == (4, 8, 4)
    assert c["message"] == "site s1 needs space for 4 more nodes (32 GPUs): max_nodes 4 -> 8"
    assert fixed_by(inputs, d)["totals"]["gpus"] == 64


def test_rtt_limit_between_two_needed_sites(tmp_path):
    """60 km is 0.588 ms RTT; a 0.5 ms limit keeps the sites apart, and neither holds 8 nodes alone."""
    inputs, exc = infeasible(tmp_path, pair(60, max_site_rtt_ms=0.5))
    d = exc.details["diagnosis"]
    c = only_change(d, "max_site_rtt_ms")
    assert c["needed"] == pytest.approx(0.59)
    assert "sites a and b are 0.588 ms apart" in c["message"]
    assert fixed_by(inputs, d)["totals"]["sites_open"] == 2


def test_diagnosis_of_a_feasible_workbook_changes_nothing(tmp_path):
    inputs = load_inputs(write_workbook(tmp_path / "ok.xlsx", book(32)))
    d = diagnose(inputs, "")
    assert d["changes"] == [] and d["method"] == "elastic"


def test_workload_limit_names_the_fraction_and_the_accumulation(tmp_path):
    """A 10B-parameter model synchronised after every 1 ms step: no fabric is fast enough."""
    workload = {"model_params_billion": 10, "step_compute_ms": 1, "max_comm_fraction": 0.1}
    _, exc = infeasible(tmp_path, book(32, workload=workload))
    d = exc.details["diagnosis"]
    assert d["method"] == "workload"
    assert {c["knob"] for c in d["changes"]} == {"max_comm_fraction", "grad_accum_steps"}
    accum = only_change(d, "grad_accum_steps")
    assert accum["needed"] > 1 and "grad_accum_steps from 1 to" in accum["message"]


def test_diagnosis_can_be_skipped(tmp_path):
    inputs = load_inputs(write_workbook(tmp_path / "poor.xlsx", book(32, budget_usd=400_000)))
    with pytest.raises(Infeasible) as caught:
        solve(inputs, SolveOptions(diagnose=False))
    assert "diagnosis" not in caught.value.details


# --- the command ----------------------------------------------------------------------------------

def test_cli_exits_3_and_writes_the_diagnosis(tmp_path, capsys):
    path = write_workbook(tmp_path / "poor.xlsx", book(32, budget_usd=400_000))
    out = tmp_path / "out"
    assert cli.main(["solve", str(path), "-o", str(out), "--quiet"]) == cli.EXIT_INFEASIBLE
    err = capsys.readouterr().err
    assert "infeasible: the minimum cost is $474,998, above budget_usd $400,000" in err
    assert "raise budget_usd by $75,000 (to $475,000)" in err and "Traceback" not in err
    design = json.loads((out / "design.json").read_text())
    assert design["status"] == "infeasible" and design["reason"].startswith("the minimum cost")
    assert design["diagnosis"]["changes"][0]["knob"] == "budget_usd"
    assert design["inputs"]["project"]["budget_usd"] == 400_000
    html = (out / "report.html").read_text()
    assert "raise budget_usd by $75,000 (to $475,000)" in html and 'id="diagnosis"' in html
    assert "raise budget_usd by $75,000" in (out / "report.md").read_text()
    assert not (out / "bom.csv").exists()


def test_cli_infeasible_replaces_a_previous_design(tmp_path, capsys):
    """The folder must not mix a solved bom.csv with an infeasible design.json."""
    out = tmp_path / "out"
    good = write_workbook(tmp_path / "plan.xlsx", book(32))
    assert cli.main(["solve", str(good), "-o", str(out), "--quiet"]) == cli.EXIT_OK
    assert (out / "bom.csv").exists()
    poor = write_workbook(tmp_path / "plan.xlsx", book(32, budget_usd=400_000))
    assert cli.main(["solve", str(poor), "-o", str(out), "--quiet"]) == cli.EXIT_INFEASIBLE
    assert json.loads((out / "design.json").read_text())["status"] == "infeasible"
    assert not (out / "bom.csv").exists() and not (out / "design.xlsx").exists()
    capsys.readouterr()


# --- every planner limit: dci_ratio, fiber pairs, RTT, oversubscription, protocols, topologies ------------

def fixed_by_every_change(inputs, diagnosis: dict) -> dict:
    """Solve again with every suggested change applied, route fiber pairs and name lists included."""
    from designer.solve.resolve import with_project, with_route

    for c in diagnosis["changes"]:
        if c["scope"].startswith("routes."):
            a, b = c["scope"].split(".", 1)[1].split("--")
            row = inputs.routes.index[(inputs.routes["site_a"] == a) & (inputs.routes["site_b"] == b)][0]
            inputs = with_route(inputs, row, fiber_pairs=c["needed"])
        elif c["knob"] in ("protocols_allowed", "topologies_allowed"):
            inputs = with_project(inputs, **{c["knob"]: c["needed"].split(",")})
    rest = {"changes": [c for c in diagnosis["changes"] if not c["scope"].startswith("routes.")
                        and c["knob"] not in ("protocols_allowed", "topologies_allowed")]}
    return fixed_by(inputs, rest)


def test_dci_ratio_typed_as_a_percentage_is_named(tmp_path):
    """12.5 asks each site for 12.5 x its 12.8 Tb/s of NICs: 160 Tb/s, above the 4 pairs' 102.4 Tb/s (a larger
    site would do instead, but the typo is the change to make)."""
    inputs, exc = infeasible(tmp_path, pair(60, dci_ratio=12.5))
    d = exc.details["diagnosis"]
    assert [c["knob"] for c in d["changes"]] == ["dci_ratio"], d
    c = d["changes"][0]
    assert c["needed"] == pytest.approx(0.125) and "set dci_ratio to 0.125 (12.5%)" in c["message"]
    assert fixed_by(inputs, d)["totals"]["sites_open"] == 2


def first_change(tmp_path, tables: dict, knob: str):
    """The infeasible workbook's inputs, diagnosis and first (smallest) change, which must be to ``knob``."""
    inputs, exc = infeasible(tmp_path, tables)
    d = exc.details["diagnosis"]
    assert d["changes"] and d["changes"][0]["knob"] == knob, d
    return inputs, d, d["changes"][0]


def two_sites(nodes: int, pairs: int, **project) -> dict:
    """Two sites of ``nodes`` nodes each, both needed (min_sites 2), joined by 60 km of ``pairs`` fiber pairs; a
    pair carries 64 wavelengths of 400G, 25.6 Tb/s, and a node has 3.2 Tb/s of NICs."""
    sites = [site("a", max_nodes=nodes, lat=40.4, lon=-3.7), site("b", max_nodes=nodes, lat=40.9, lon=-3.2)]
    route = dict(site_a="a", site_b="b", distance_km=60, fiber_pairs=pairs, fiber_cost_usd_per_pair_km=10)
    return book(16 * nodes, sites=sites, routes=[route], min_sites=2, **project)


def test_dci_ratio_above_what_the_routes_carry_is_named(tmp_path):
    """200 nodes a site at dci_ratio 1 ask 640 Tb/s: 25 pairs where there is one. dci_ratio is what the job asks
    and weighs 10 times a resource, but 24 more pairs (24 times the route) are a larger change than lowering it to
    what one pair carries at both sites (25.6 / 640 = 0.04; 2 x 10 x 0.96)."""
    inputs, d, c = first_change(tmp_path, two_sites(200, 1, dci_ratio=1), "dci_ratio")
    assert c["needed"] == pytest.approx(0.04)
    assert "lower dci_ratio to 0.04" in c["message"]
    assert fixed_by(inputs, d)["totals"]["sites_open"] == 2


def test_route_fiber_capping_a_site_is_named_with_the_pairs_needed(tmp_path):
    """88 nodes a site at dci_ratio 1 ask 281.6 Tb/s: 11 pairs where there are 10 (the smallest change: 10%)."""
    inputs, d, c = first_change(tmp_path, two_sites(88, 10, dci_ratio=1), "fiber_pairs")
    assert c["scope"] == "routes.a--b" and (c["current"], c["needed"]) == (10, 11)
    assert "route a--b's 10 fiber pairs cap the inter-site capacity of a, b" in c["message"]
    assert fixed_by_every_change(inputs, d)["links"][0]["fiber_pairs"] == 11


def test_tight_rtt_limit_suggests_the_value(tmp_path):
    inputs, d, c = first_change(tmp_path, pair(112, max_site_rtt_ms=1.0), "max_site_rtt_ms")
    assert c["needed"] == pytest.approx(1.10)
    assert "raise it to 1.10" in c["message"]
    assert fixed_by(inputs, d)["totals"]["sites_open"] == 2


def test_topology_restriction_is_named(tmp_path):
    """A leaf mesh holds 128 nodes at most (at oversubscription 1.94); 2,048 GPUs need another topology."""
    tables = book(2048, topologies_allowed="leaf_mesh", max_oversubscription=4)
    inputs, d, c = first_change(tmp_path, tables, "topologies_allowed")
    assert c["current"] == "leaf_mesh"
    assert c["needed"].startswith("leaf_mesh,") and "to topologies_allowed (the design uses it at s1)" in c["message"]
    assert fixed_by_every_change(inputs, d)["totals"]["gpus"] >= 2048


def test_oversubscription_limit_is_named_with_the_level(tmp_path):
    """1,024 NICs (128 nodes) in a mesh of 64-port leaves: L leaves of d down and u mesh ports (u even, u >= L - 1,
    d + u <= 64, L d >= 1,024) at the least oversubscription 2 d (L - 1) / (u L): 37 leaves of 28 down and 36 mesh
    ports, 2 x 28 x 36 / (36 x 37) = 1.51351:1, said rounded up, 1.5136 (34 mesh ports need 35 leaves of 30: 1.714; 38 leave 26 down, and 40
    leaves exceed one link per leaf pair). The mesh-size grid's 1.9375 was not the least."""
    inputs, d, c = first_change(tmp_path, book(1024, topologies_allowed="leaf_mesh"), "max_oversubscription")
    assert c["needed"] == 1.5136
    assert "raise max_oversubscription to 1.5136" in c["message"]
    assert fixed_by(inputs, d)["totals"]["gpus"] == 1024


def test_protocol_restriction_that_leaves_no_fabric_is_named(tmp_path):
    """RoCE needs Ethernet switches and the catalog has none: allowing only it leaves no fabric mode."""
    tables = book(32, protocols_allowed="roce")
    tables["protocols"].append(dict(IB, name="roce", switch_family="ethernet"))
    inputs, d, c = first_change(tmp_path, tables, "protocols_allowed")
    assert (c["current"], c["needed"]) == ("roce", "roce,infiniband")
    assert c["message"] == "add infiniband to protocols_allowed (the design uses it at s1)"
    assert fixed_by_every_change(inputs, d)["sites"][0]["protocol"] == "infiniband"


# --- project keys that restrict the design: power_headroom, route_diversity ------------------------------

def test_power_headroom_is_named_with_the_share_to_set(tmp_path):
    """power_headroom 0.2 leaves 0.056 MW of s1's 0.07; 4 nodes draw 60,798 W at the facility (0.0608 MW rounded
    up): a headroom of 1 - 0.0608 / 0.07 = 0.1314 (0.131 rounded down) gives it, as does power_mw 0.0608 / 0.8 =
    0.076. The same megawatts either way, and the headroom's are already there: it comes first."""
    inputs, d, c = first_change(tmp_path, book(32, sites=[site("s1", power_mw=0.07)], power_headroom=0.2),
                                "power_headroom")
    assert (c["current"], c["needed"]) == (0.2, 0.131)
    assert c["message"] == ("power_headroom 0.2 leaves 0.056 MW at s1 (the design uses 0.0608): set power_headroom "
                            "to 0.131")
    power = only_change(d, "power_mw")
    assert (power["current"], power["needed"]) == (0.07, pytest.approx(0.076))
    assert power["message"] == "site s1 needs 0.0048 MW more than power_headroom 0.2 leaves (power_mw 0.07 -> 0.076)"
    assert [x["knob"] for x in d["changes"]] == ["power_headroom", "power_mw"]
    # each suggestion alone makes the workbook solve
    assert fixed_by(inputs, {"changes": [c]})["totals"]["gpus"] == 32
    assert fixed_by(inputs, {"changes": [power]})["totals"]["gpus"] == 32


def test_power_headroom_is_not_offered_when_the_site_needs_more_than_its_power(tmp_path):
    """0.05 MW with a 0.1 headroom: the design uses 0.0608 MW, above power_mw itself: no headroom is enough."""
    _, d, c = first_change(tmp_path, book(32, sites=[site("s1", power_mw=0.05)], power_headroom=0.1), "power_mw")
    assert [x["knob"] for x in d["changes"]] == ["power_mw"]
    assert c["needed"] == pytest.approx(0.0608 / 0.9, rel=1e-3) and c["needed"] * 0.9 >= 0.0608


def test_route_diversity_between_two_needed_sites_is_named(tmp_path):
    """Two sites that must both open (min_sites 2) and one route between them: losing it parts them, so no
    design is N-1; the one change is to give route_diversity up (a second path needs a third site)."""
    inputs, d, c = first_change(tmp_path, two_sites(4, 4, route_diversity=True), "route_diversity")
    assert "route_diversity" in d["reason"]
    assert (c["current"], c["needed"], c["change"]) == (True, False, None)
    assert c["message"].startswith("route_diversity makes this infeasible: no second route reaches b "
                                   "(losing a--b cuts off b); add a site with routes to both sides "
                                   "or set route_diversity to false")
    assert c["message"].endswith("or set route_diversity to false")
    assert [x["knob"] for x in d["changes"]] == ["route_diversity"]
    assert fixed_by(inputs, d)["totals"]["sites_open"] == 2


def line_of_three(**project) -> dict:
    """Three sites of 4 nodes each, all needed for 96 GPUs, in a line a--b--c (40 km routes)."""
    sites = [site("a", max_nodes=4, lat=40.4, lon=-3.7), site("b", max_nodes=4, lat=40.6, lon=-3.5),
             site("c", max_nodes=4, lat=40.8, lon=-3.3)]
    routes = [dict(site_a="a", site_b="b", distance_km=40, fiber_pairs=4, fiber_cost_usd_per_pair_km=10),
              dict(site_a="b", site_b="c", distance_km=40, fiber_pairs=4, fiber_cost_usd_per_pair_km=10)]
    return book(96, sites=sites, routes=routes, **project)


def test_route_diversity_names_the_route_to_add(tmp_path):
    """In a line a--b--c losing a--b cuts a off and losing b--c cuts c off; one route a--c closes the ring. Both
    suggestions are tried: the route added (route_diversity kept) and route_diversity given up."""
    tables = line_of_three(route_diversity=True)
    inputs, d, c = first_change(tmp_path, tables, "route_diversity")
    assert c["message"] == ("route_diversity makes this infeasible: no second route reaches a, c (losing a--b cuts "
                            "off a; losing b--c cuts off c); add a route a--c or set route_diversity to false")
    assert fixed_by(inputs, d)["totals"]["sites_open"] == 3
    ring = copy.deepcopy(tables)
    ring["routes"].append(dict(site_a="a", site_b="c", distance_km=70, fiber_pairs=4, fiber_cost_usd_per_pair_km=10))
    solved = solve(load_inputs(write_workbook(tmp_path / "ring.xlsx", ring)), SolveOptions())
    assert solved["totals"]["sites_open"] == 3 and len(solved["links"]) == 3
