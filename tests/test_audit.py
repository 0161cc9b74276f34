"""The independent audit, cabling plan, GraphML and resilience (issue 3, parts 1 and 3).

Small designs are solved in-process over the default catalog: ``one_su`` is the DGX H100 scalable
unit (32 nodes, 8 rail leaves with 32 down and 32 up ports, 4 spines of 64 ports: 8 links from
each leaf to each spine), ``two_sites`` two such units 100 km apart. Every example workbook is
solved once for the session, by the CLI in parallel subprocesses (tests/conftest.py), and its output folder
audited by the CLI.
"""

from __future__ import annotations

import copy
import csv
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import networkx as nx
import openpyxl
import pytest

from designer import cli
from designer.audit.checks import audit, build_intersite_graph, build_site_graph
from designer.audit.fabric import mesh_pairs, pods
from designer.audit.flows import worst_path
from designer.audit.resilience import resilience, summary_lines
from designer.inputs.workbook import load_inputs
from designer.inputs.writer import write_workbook
from designer.outputs.cabling import write_cabling, write_graphml
from designer.solve.run import SolveOptions, solve

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "data" / "examples").glob("*.xlsx"))


def site(name: str, **kw) -> dict:
    return {"name": name, "power_mw": 10, "pue": 1.2, "max_nodes": 32, "fixed_cost_usd": 1e6,
            "power_cost_usd_per_mw": 1e6, "energy_usd_per_mwh": 50, "status": "candidate", **kw}


def su_book(gpus: int, sites: list[dict], routes=None, **project) -> dict:
    book = {"project": {"gpus_required": gpus, "node_type": "DGX H100", "protocols_allowed": "infiniband",
                        "topologies_allowed": "rail_optimized", "cable_m_node_leaf": 3, "cable_m_leaf_spine": 50,
                        "cable_m_spine_core": 150, **project}, "sites": sites}
    if routes:
        book["routes"] = routes
    return book


def solved(tmp_path_factory, name: str, book: dict) -> dict:
    path = write_workbook(tmp_path_factory.mktemp(name) / f"{name}.xlsx", book)
    return solve(load_inputs(path), SolveOptions())


@pytest.fixture(scope="module")
def one_su(tmp_path_factory) -> dict:
    return solved(tmp_path_factory, "one_su", su_book(256, [site("dc1", status="required")]))


@pytest.fixture(scope="module")
def two_sites(tmp_path_factory) -> dict:
    route = {"site_a": "dc1", "site_b": "dc2", "distance_km": 100, "fiber_pairs": 4,
             "fiber_cost_usd_per_pair_km": 10, "amplifier_spacing_km": 80}
    # the default catalog's DCI routers are Ethernet and join only Ethernet leaves: one of InfiniBand's family
    # (test figures) joins these InfiniBand fabrics
    book = su_book(512, [site("dc1"), site("dc2")], [route], max_site_rtt_ms=2, catalog="extend")
    book["switches"] = [{"model": "ib-dci", "family": "infiniband", "port_modes": "64x800,128x400", "buffer_mb": 8000,
                         "latency_ns": 3000, "power_w": 2000, "price_usd": 250000, "roles": "dci",
                         "source": "test figures"}]
    return solved(tmp_path_factory, "two_sites", book)


def mutated(design: dict, change) -> dict:
    design = copy.deepcopy(design)
    change(design)
    return design


def tier(design: dict, role: str, site_index: int = 0) -> dict:
    return next(t for t in design["sites"][site_index]["tiers"] if t["tier"] == role)


def bom_line(design: dict, category: str, item_part: str = "") -> dict:
    return next(b for b in design["bom"] if b["category"] == category and item_part in b["item"])


# --------------------------------------------------------------------------------------------------
# Every example's design passes (solved once each by the CLI, in parallel)
# --------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module", autouse=True)
def start_examples(request):
    """Starts the examples' solves (tests/conftest.py) as this module begins, when the audit test is selected."""
    if any(item.module is request.module and "example_runs" in item.fixturenames for item in request.session.items):
        request.getfixturevalue("example_runs")


@pytest.mark.parametrize("stem", [p.stem for p in EXAMPLES])
def test_example_designs_pass_the_audit(example_runs, stem):
    result = example_runs.get(stem)
    if result.returncode == cli.EXIT_INFEASIBLE:
        pytest.skip(f"{stem} has no design: {result.stderr.strip().splitlines()[0]}")
    assert result.returncode == 0, result.stderr
    folder = example_runs.out / stem
    assert {"cabling.csv", "fabric.graphml", "design.json"} <= {p.name for p in folder.iterdir()}
    assert "resilience" in json.loads((folder / "design.json").read_text())
    checked = subprocess.run([sys.executable, "-m", "designer.cli", "audit", str(folder), "--workbook",
                              str(ROOT / "data" / "examples" / f"{stem}.xlsx")], cwd=ROOT, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "audit passed" in checked.stdout


# --------------------------------------------------------------------------------------------------
# design.json holds the contract ARCHITECTURE.md documents, key for key, both ways
# --------------------------------------------------------------------------------------------------

def documented_solution() -> dict:
    """The key tree of ARCHITECTURE.md's Solution block: {key: (optional, nullable, subtree or None)}.

    Grammar: entries separated by commas; ``+`` marks an extra, ``?`` a key only some designs have,
    ``(...)`` a comment, ``key: {...}`` a mapping, ``key: [{...}]`` a list of mappings, ``null | {...}``
    a mapping or null; other words after a colon are comments (e.g. enumerated values)."""
    import re

    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = text.split("## `Solution`", 1)[1].split("```", 2)[1]
    tokens = re.findall(r'"[^"]*"|[A-Za-z_][A-Za-z0-9_]*\??|[{}\[\]:,|+()]', block)
    pos = 0

    def skip_comment():
        nonlocal pos
        depth = 0
        while True:
            depth += {"(": 1, ")": -1}.get(tokens[pos], 0)
            pos += 1
            if depth == 0:
                return

    def value():
        nonlocal pos
        nullable = False
        while pos < len(tokens) and tokens[pos] not in (",", "}", "+") :
            tok = tokens[pos]
            if tok == "(":
                skip_comment()
            elif tok == "null":
                nullable, pos = True, pos + 1
            elif tok == "{":
                pos += 1
                return nullable, entries("}")
            elif tok == "[":
                pos += 2  # "[", "{"
                sub = entries("}")
                pos += 1  # "]"
                return nullable, sub
            else:
                pos += 1  # comment words, "|"
        return nullable, None

    def entries(close):
        nonlocal pos
        out = {}
        while pos < len(tokens) and tokens[pos] != close:
            tok = tokens[pos]
            if tok in (",", "+"):
                pos += 1
            elif tok == "(":
                skip_comment()
            else:
                key, optional = tok.rstrip("?"), tok.endswith("?")
                pos += 1
                nullable, sub = False, None
                if pos < len(tokens) and tokens[pos] == ":":
                    pos += 1
                    nullable, sub = value()
                elif pos < len(tokens) and tokens[pos] == "(":
                    skip_comment()
                out[key] = (optional, nullable, sub)
        pos += 1
        return out

    tokens.append("END")
    return entries("END")


def contract_gaps(doc: dict, actual, path: str = "") -> list[str]:
    """Documented keys the design lacks and design keys the document lacks, with their paths."""
    items = actual if isinstance(actual, list) else [actual]
    items = [x for x in items if isinstance(x, dict)]
    if not items:
        return []
    if len(doc) == 1 and next(iter(doc)).isupper():  # a mapping with free keys
        return []
    present = set().union(*items)
    gaps = [f"{path}{k}: documented, not in design.json" for k, (optional, _, _) in doc.items()
            if not optional and k not in present]
    gaps += [f"{path}{k}: in design.json, not documented" for k in sorted(present - set(doc))]
    for key, (_, nullable, sub) in doc.items():
        values = [x[key] for x in items if key in x and x[key] is not None]
        if any(x.get(key, 0) is None for x in items) and not nullable and sub is not None:
            gaps.append(f"{path}{key}: null in design.json, documented as never null")
        if sub is not None:
            flat = [v for val in values for v in (val if isinstance(val, list) else [val])]
            gaps += contract_gaps(sub, flat, f"{path}{key}.")
    return gaps


def test_design_json_matches_the_documented_contract(example_runs):
    """The default example's design.json (links, DCI, a workload, resilience) has every documented key
    and no undocumented one."""
    design, _folder = example_runs.solved("default")
    doc = documented_solution()
    assert {"status", "sites", "links", "bom", "workload"} <= set(doc)
    assert doc["sites"][2]["tiers"][2]["buffer_mb"] == (False, False, None)
    gaps = contract_gaps(doc, design)
    assert not gaps, "\n".join(gaps)


def test_contract_check_sees_a_missing_and_an_extra_key():
    doc = {"a": (False, False, None), "b": (False, True, {"c": (False, False, None)}), "d": (True, False, None)}
    assert contract_gaps(doc, {"a": 1, "b": {"c": 2}}) == []
    assert contract_gaps(doc, {"a": 1, "b": None}) == []
    assert contract_gaps(doc, {"b": [{"c": 1}, {"c": 2, "e": 3}], "x": 0}) == [
        "a: documented, not in design.json", "x: in design.json, not documented",
        "b.e: in design.json, not documented"]


# --------------------------------------------------------------------------------------------------
# Clean designs pass; hand-broken ones are rejected with the rule named
# --------------------------------------------------------------------------------------------------

def test_small_designs_pass(one_su, two_sites):
    assert audit(one_su) == []
    assert audit(two_sites) == []


def one_spine_fewer(d):
    tier(d, "spine")["count"] -= 1


def one_leaf_fewer(d):
    tier(d, "leaf")["count"] -= 1


def power_off(d):
    d["sites"][0]["power_mw"] *= 1.01


def dac_quantity_off(d):
    bom_line(d, "optics", "DAC")["quantity"] += 1


def switch_price_off(d):
    bom_line(d, "switches")["unit_price_usd"] += 1


@pytest.mark.parametrize("change, expected", [
    (one_spine_fewer, ["3 spine switch(es) use more port bandwidth", "uniform striping broken at 8 switch(es)",
                       "BOM lists 12 QM9700 (switches), the fabric has 11"]),
    (one_leaf_fewer, ["7 leaves in a plane, but rail_optimized needs one per rail per SU: 8 rails x 1 SUs = 8",
                      "32 of 256 NICs in plane 1 have no leaf port",
                      "BOM lists 128 800G OSFP to 2x400G OSFP splitter DAC (optics), the fabric has 112"]),
    (power_off, ["facility power is", "the design reports", "totals.power_mw"]),
    (dac_quantity_off, ["BOM lists 129 800G OSFP to 2x400G OSFP splitter DAC (optics), the fabric has 128",
                       "is not quantity x unit price"]),
    (switch_price_off, ["unit $35,001.00", "the catalog says $35,000.00"]),
    (lambda d: d["sites"][0].update(fabric_latency_us=1.9), ["one-way latency is 2.0300 us by graph search, the design "
                                                             "reports 1.9000 us"]),
    (lambda d: d["sites"][0].update(hops=5), ["crosses 3 switch hops by graph search, the design reports 5"]),
    (lambda d: d["sites"][0].update(oversubscription=2.0), ["oversubscription 2:1 is above max_oversubscription 1:1"]),
    (lambda d: d["inputs"]["project"].update(max_fabric_latency_us=1.5), ["above max_fabric_latency_us 1.5 by 0.5300"]),
    (lambda d: d["inputs"]["project"].update(gpus_required=300), ["256 GPUs, 44 short of gpus_required 300"]),
    (lambda d: d["inputs"]["project"].update(budget_usd=1e6), ["above budget_usd $1,000,000"]),
    (lambda d: d["inputs"]["project"].update(cable_m_leaf_spine=100), ["fabric_links gives leaf_spine 50 m, its racks "
                                                                        "are at least 100 m of cable apart"]),
    (lambda d: d["sites"][0]["fabric_links"][1].update(length_m=60), ["reaches 50 m, the tier needs 60 m"]),
    # 20 kW racks hold one 10.2 kW DGX H100: the SU's 32 nodes fill 32 racks, the farthest at least 4 steps of
    # 0.6 m from its rail leaves (2 x 16 + 2 x 4 + 1 = 41 positions within 4 steps, 25 within 3), 2 x 2 m rise
    (lambda d: d["inputs"]["project"].update(cable_m_node_leaf=None, rack_kw=20),
     ["fabric_links gives node_leaf 3 m, its racks are at least 6.4 m of cable apart"]),
    (lambda d: d["inputs"]["sites"][0].update(max_nodes=30), ["32 nodes exceed max_nodes 30 by 2"]),
    (lambda d: d["inputs"]["sites"][0].update(power_mw=0.1), ["above power_mw 0.1"]),
    (lambda d: d["inputs"]["switches"][0].update(port_modes="48x400"), ["use more port bandwidth"]),
    (lambda d: d["inputs"]["project"].update(topologies_allowed=["leaf_spine"]), ["not in topologies_allowed"]),
])
def test_broken_fabric_is_rejected(one_su, change, expected):
    violations = audit(mutated(one_su, change))
    text = "\n".join(violations)
    for part in expected:
        assert part in text, text


def wavelength_fewer(d):
    d["links"][0]["wavelengths"] -= 1


def pair_beyond(d):
    d["links"][0]["fiber_pairs"] = 5


def attach_item(name: str):
    def change(d):
        for entry in d["sites"]:
            for cable in (entry.get("dci_attachment") or {}).get("cables", []):
                cable["item"] = name
    return change


@pytest.mark.parametrize("change, expected", [
    (wavelength_fewer, ["coherent_ports is 32, 30 by the rule", "capacity_gbps is 12800, 12000 by the rule",
                        "BOM lists 16 800ZR modules, its routes carry 15 wavelengths",
                        "dc1: inter-site capacity 12,000 Gb/s is below dci_ratio 0.125 x NIC bandwidth = 12,800 Gb/s"]),
    (pair_beyond, ["uses 5 fiber pairs, 4 available (1 beyond)", "amplifiers is 1, 5 by the rule"]),
    (lambda d: d["links"][0].update(wavelengths=40, coherent_ports=80, capacity_gbps=32000.0),
     ["40 wavelengths on 1 fiber pair(s) of 32 channels each: 8 too many"]),
    (lambda d: d["links"][0].update(amplifiers=0), ["amplifiers is 0, 1 by the rule"]),
    (lambda d: d["links"].clear(), ["open sites are not connected over used routes: dc1 | dc2"]),
    (lambda d: d["inputs"]["project"].update(max_site_rtt_ms=0.5), ["RTT 0.980 ms over used routes is above max_site_rtt_ms"]),
    (lambda d: d["inputs"]["coherent"][2].update(reach_km=90), ["800ZR reaches 90 km, the route is 100 km"]),
    (lambda d: [s.update(buffer_mb=100.0) for s in d["inputs"]["switches"] if s["model"] == "ib-dci"],
     ["dc1: DCI router buffers hold 100 MB, the bandwidth-delay product needs 1,568 MB"]),
    # an attachment link takes a leaf down port as a NIC does: its item fills the QM9700's 800G twin-port cage
    (attach_item("400G OSFP AOC"), ["dc1: dci_attach item 400G OSFP AOC takes a 400G cage, the leaf QM9700's "
                                    "cages are 800G"]),
    (attach_item("800G OSFP to 2x400G OSFP splitter DAC"),
     ["dc1: dci_attach cable 800G OSFP to 2x400G OSFP splitter DAC is a 1:2 splitter; its legs fit NICs"]),
])
def test_broken_intersite_is_rejected(two_sites, change, expected):
    text = "\n".join(audit(mutated(two_sites, change)))
    for part in expected:
        assert part in text, text


def test_audit_against_the_workbook(tmp_path, one_su):
    book = su_book(256, [site("dc1", status="required")])
    assert audit(one_su, workbook=write_workbook(tmp_path / "same.xlsx", book)) == []
    book["sites"][0]["power_mw"] = 0.3
    text = "\n".join(audit(one_su, workbook=write_workbook(tmp_path / "other.xlsx", book)))
    assert "sites row 1 power_mw is 10.0 in the design, 0.3 in the workbook" in text
    assert "above power_mw 0.3" in text


# --------------------------------------------------------------------------------------------------
# The CLI: designer audit, and designer solve refusing a design that fails
# --------------------------------------------------------------------------------------------------

def test_audit_command_exit_codes(tmp_path, one_su, capsys):
    good, bad = tmp_path / "good", tmp_path / "bad.json"
    good.mkdir()
    (good / "design.json").write_text(json.dumps(one_su))
    bad.write_text(json.dumps(mutated(one_su, one_spine_fewer)))
    assert cli.main(["audit", str(good)]) == 0
    assert "audit passed" in capsys.readouterr().out
    assert cli.main(["audit", str(bad)]) == 1
    assert "uniform striping broken" in capsys.readouterr().out
    (tmp_path / "junk.json").write_text("{not json")
    assert cli.main(["audit", str(tmp_path / "junk.json")]) == 2
    assert cli.main(["audit", str(tmp_path / "missing")]) == 2


def test_solve_refuses_a_design_that_fails_the_audit(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("designer.audit.checks.audit", lambda design: ["made-up violation for the test"])
    out = tmp_path / "out"
    workbook = ROOT / "data" / "examples" / "superpod-h100.xlsx"
    assert cli.main(["solve", str(workbook), "-o", str(out), "--quiet"]) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert "fails the independent audit" in err and "made-up violation for the test" in err
    assert not out.exists()
    # the audit runs while the report is drawn, the outputs staged: an earlier run's folder is left as it was
    out.mkdir()
    (out / "design.json").write_text("earlier run")
    assert cli.main(["solve", str(workbook), "-o", str(out), "--quiet"]) == cli.EXIT_ERROR
    assert "fails the independent audit" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["design.json"] and (out / "design.json").read_text() == "earlier run"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no stage left beside it


# --------------------------------------------------------------------------------------------------
# Graphs: the wiring rules on reference shapes
# --------------------------------------------------------------------------------------------------

def test_one_su_graph(one_su):
    graph = build_site_graph("dc1", one_su)
    roles = Counter(d["role"] for _, d in graph.nodes(data=True))
    assert roles == {"leaf": 8, "spine": 4, "endpoints": 8}
    assert graph.has_node("dc1-leaf-r3-su1") and graph.has_node("dc1-spine-02")
    for leaf in (n for n, d in graph.nodes(data=True) if d["role"] == "leaf"):
        ups = [e["count"] for n, e in graph.adj[leaf].items() if graph.nodes[n]["role"] == "spine"]
        assert ups == [8, 8, 8, 8]
        assert graph.nodes[leaf]["ports"] == 64
    worst = worst_path(graph, lambda model: 200.0)
    assert (worst.hops, worst.ns) == (3, 3 * 200 + 2 * 5 * (3 + 50))


def al_fares_design(k: int) -> dict:
    """A hand-made 3-tier fat tree of k-port switches, one NIC a node (k^3/4 nodes)."""
    leaves, aggs, cores = k * k // 2, k * k // 2, k * k // 4
    half = k // 2
    return {"sites": [{"name": "ft", "open": True, "nodes": k ** 3 // 4, "topology": "fat_tree_3", "fabric_tiers": 3,
                       "node_type": "n1", "tiers": [
                           {"tier": "leaf", "model": "k", "count": leaves, "down_ports": half, "up_ports": half,
                            "down_gbps": 400, "up_gbps": 400},
                           {"tier": "spine", "model": "k", "count": aggs, "down_ports": half, "up_ports": half,
                            "down_gbps": 400, "up_gbps": 400},
                           {"tier": "core", "model": "k", "count": cores, "down_ports": k, "up_ports": 0,
                            "down_gbps": 400, "up_gbps": None}]}],
            "inputs": {"project": {"node_type": "n1", "cable_m_node_leaf": 3, "cable_m_leaf_spine": 50,
                                   "cable_m_spine_core": 150},
                       "node_types": [{"name": "n1", "nics_per_node": 1, "planes": 1}],
                       "switches": [{"model": "k", "port_modes": f"{k}x400"}]}}


@pytest.mark.parametrize("k", [4, 8, 16])
def test_fat_tree_wiring_is_al_fares(k):
    graph = build_site_graph("ft", al_fares_design(k))
    roles = Counter(d["role"] for _, d in graph.nodes(data=True))
    assert (roles["leaf"], roles["spine"], roles["core"]) == (k * k // 2, k * k // 2, k * k // 4)
    assert {d["ports"] for _, d in graph.nodes(data=True) if d["role"] != "endpoints"} == {k}
    pods_of = Counter(d["pod"] for _, d in graph.nodes(data=True) if d["role"] == "leaf")
    assert pods_of == {p: k // 2 for p in range(1, k + 1)}
    for core in (n for n, d in graph.nodes(data=True) if d["role"] == "core"):
        assert sorted(graph.nodes[a]["pod"] for a in graph.adj[core]) == list(range(1, k + 1))
    assert worst_path(graph, lambda model: 100.0).hops == 5


def test_leaf_mesh_and_pods():
    for n, ports in [(2, 6), (5, 4), (6, 6), (7, 10), (64, 64)]:
        pairs = mesh_pairs(n, ports)
        ends = Counter()
        for (a, b), count in pairs.items():
            ends[a] += count
            ends[b] += count
        assert set(ends.values()) == {ports}
        assert len(pairs) == n * (n - 1) // 2  # every pair joined
    assert pods(94, 94, 32, 32) == [(32, 32), (32, 32), (16, 16), (8, 8), (4, 4), (2, 2)]
    assert pods(8, 8, 2, 2) == [(2, 2)] * 4


def test_intersite_graph(two_sites):
    graph = build_intersite_graph(two_sites)
    edge = graph.edges["dc1", "dc2"]
    assert edge["used"] and edge["wavelengths"] == 16 and edge["fiber_pairs_available"] == 4


# --------------------------------------------------------------------------------------------------
# Exports: cabling.csv, fabric.graphml, resilience
# --------------------------------------------------------------------------------------------------

def test_cabling_lists_every_link_port_to_port(tmp_path, two_sites):
    write_cabling(two_sites, tmp_path / "cabling.csv")
    with open(tmp_path / "cabling.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    fabric_links = sum(lk["count"] for s in two_sites["sites"] for lk in s["fabric_links"])
    attached = sum(s["dci_attachment"]["links"] for s in two_sites["sites"] if s["open"])
    assert len(rows) == fabric_links + two_sites["links"][0]["wavelengths"] + attached
    assert attached == sum(r["device"].split("-")[1] == "dci" and r["peer_device"].split("-")[1] == "leaf"
                           for r in rows) > 0  # router to leaf, on a port of each
    assert {r["links"] for r in rows} == {"1"}
    ends = Counter((r["device"], r["port"]) for r in rows) + Counter((r["peer_device"], r["peer_port"]) for r in rows)
    assert max(ends.values()) == 1  # no port used twice
    first = rows[0]
    # a QM9700's 64 x 400G ports sit in 32 twin-port cages: a NIC link is lane 1 or 2 of a leaf cage
    assert (first["device"], first["port"], first["peer_device"], first["peer_port"]) == (
        "dc1-node-0001", "p1", "dc1-leaf-r1-su1", "p1/1")
    uplink = next(r for r in rows if r["peer_device"] == "dc1-spine-01")
    # the polish split the leaves 18 down / 18 up on 6 spines (32 nodes and the DCI routers' 4 attachments a site:
    # 2 SUs of 18; the grid's 32/32 on 8): 18 NIC links fill the leaf's cages 1-9, its uplinks start at cage 10
    assert (uplink["device"], uplink["port"], uplink["peer_port"]) == ("dc1-leaf-r1-su1", "p10/1", "p1/1")
    spine_cages = [int(r["peer_port"][1:].split("/")[0]) for r in rows if r["peer_device"].startswith("dc1-spine")]
    assert max(spine_cages) == 24  # 16 leaves x 3 links a spine: 48 ports, 24 cages
    wave = next(r for r in rows if r["item"] == "800ZR")
    assert (wave["site"], wave["speed_gbps"], wave["length_m"]) == ("dc1--dc2", "800", "100000.0")


def test_graphml_round_trips(tmp_path, one_su):
    write_graphml(one_su, tmp_path / "fabric.graphml")
    graph = nx.read_graphml(tmp_path / "fabric.graphml")
    built = build_site_graph("dc1", one_su)
    assert set(graph.nodes) == set(built.nodes)
    assert graph.number_of_edges() == built.number_of_edges()
    for name, data in built.nodes(data=True):
        assert {k: graph.nodes[name][k] for k in ("role", "model", "ports", "site")} == {
            k: data[k] for k in ("role", "model", "ports", "site")}
    edge = graph.edges["dc1-leaf-r1-su1", "dc1-spine-01"]
    assert (edge["count"], edge["gbps"], edge["tier"]) == (8, 400, "leaf_spine")


def test_resilience_of_one_su(one_su, two_sites):
    res = resilience(one_su)
    (dc1,) = res["sites"]
    assert dc1["bisection_gbps"] == 4 * 32 * 400  # half the rails' leaves, 32 NICs each, non-blocking
    assert dc1["spine"]["bisection_left_gbps"] == 3 * 32 * 400 and dc1["spine"]["share_left"] == 0.75
    assert dc1["core"] is None and res["routes"] == []
    assert "dc1 75.0% without a spine" in summary_lines(res)[0]
    (route,) = resilience(two_sites)["routes"]
    # 512 GPUs over two sites: the cut leaves each on its own, the one with fewer GPUs (or the second) cut off
    smaller = min(s["gpus"] for s in two_sites["sites"] if s["open"])
    assert route == {"route": "dc1--dc2", "srlg": None, "capacity_gbps": 12800.0, "capacity_left_gbps": 0.0,
                     "share_left": 0.0, "sites_connected": False, "gpus_cut_off": smaller}


def test_resilience_in_the_design_workbook(tmp_path, one_su, monkeypatch):
    from designer.outputs.export import write_xlsx

    write_xlsx({**one_su, "resilience": resilience(one_su)}, tmp_path / "design.xlsx")
    sheet = openpyxl.load_workbook(tmp_path / "design.xlsx")["resilience"]
    rows = list(sheet.iter_rows(values_only=True))
    assert rows[0][:3] == ("scope", "failure", "device")
    assert ("dc1", "most loaded spine", "dc1-spine-01", 51200, 38400, 0.75) == rows[2][:6]


def test_memo_keeps_the_newest_within_its_budget():
    from designer.audit.fabric import Memo
    made = []
    memo = Memo(10, weigh=len)

    def get(key: str) -> str:
        return memo.get(key, lambda: made.append(key) or key * 4)

    get("a"), get("b")  # weights 4 + 4
    get("a")  # used again: "b" is now the oldest
    get("c")  # 12 > 10: "b" goes
    assert list(memo.values) == ["a", "c"] and memo.total == 8
    get("a"), get("c")
    assert made == ["a", "b", "c"]  # both were kept
    memo.get("big", lambda: "x" * 50)  # over the budget alone: kept, everything older dropped
    assert list(memo.values) == ["big"] and memo.total == 50


def test_distinct_networks_are_split_once_a_graph_and_let_it_go():
    import gc
    import weakref

    from designer.audit.flows import NETWORKS, distinct_networks

    def network(k: int) -> list[tuple]:
        return [(f"l{k}", {"network": k, "role": "leaf", "model": "m", "ports": 2}),
                (f"s{k}", {"network": k, "role": "spine", "model": "m", "ports": 2})]

    planes = nx.Graph()
    for k in (0, 1):
        planes.add_nodes_from(network(k))
        planes.add_edge(f"l{k}", f"s{k}", tier="leaf_spine", count=2)
    first = distinct_networks(planes)
    assert [(sorted(sub.nodes), copies) for sub, copies in first] == [(["l0", "s0"], 2)]
    assert distinct_networks(planes) is first  # split once
    one = nx.Graph()
    one.add_nodes_from(network(0))
    assert distinct_networks(one) == [(one, 1)]
    held = len(NETWORKS)
    ref = weakref.ref(one)
    del one
    gc.collect()
    assert ref() is None and len(NETWORKS) == held - 1  # the cache does not keep a graph alive
