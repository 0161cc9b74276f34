"""The cluster's other networks (storage, in-band and out-of-band management), sized per node: worked by hand
over the tiny catalog of tests/test_model.py (4 nodes of 10 kW on one 64 x 400G switch, PUE 1.5, $1 per W of
facility power)."""

from __future__ import annotations

import copy

import pytest

from designer.audit.checks import audit
from tests.test_model import bom_lines, design, opened, tables

SRC = {"source": "test figures"}
OOB = dict(name="oob", category="management_network", switch_model="sw48", switch_price_usd=8_000, switch_power_w=100,
           nodes_per_switch=44, ports_per_node=1, port_gbps=1, link_item="cat6", link_kind="cable", link_price_usd=10,
           link_power_w=0, **SRC)
STORAGE = dict(name="storage", category="storage_network", switch_model="sw64s", switch_price_usd=35_000,
               switch_power_w=750, nodes_per_switch=10.67, ports_per_node=2, port_gbps=400, link_item="sr400s",
               link_kind="transceiver", link_price_usd=500, link_power_w=10, **SRC)


def book(gpus: int, **project) -> dict:
    out = tables(gpus, **{"support_networks": True, **project})
    out["support_networks"] = [OOB, STORAGE]
    return out


def test_four_nodes_with_their_support_networks(tmp_path):
    """oob: 1 switch ($8,000, 100 W) and 4 patch cords ($40); storage: ceil(4 / 10.67) = 1 switch ($35,000,
    750 W) and 4 nodes x 2 ports x 2 modules = 16 modules ($8,000, 160 W). IT = 40,532 + 100 + 910 = 41,542 W,
    facility 62,313 W; capex = 400,000 + 10,000 + 3,200 + 1,000 + 8,040 + 43,000 + 62,313 = $527,553
    (without them $474,998, tests/test_model.py)."""
    sol = design(tmp_path, book(32))
    site = opened(sol)["s1"]
    assert sol["objective_usd"] == pytest.approx(527_553, abs=1e-6)
    lines = bom_lines(sol)
    assert lines["s1", "management_network", "sw48"][:2] == (1, 8_000)
    assert lines["s1", "management_network", "cat6"][:2] == (4, 40)
    assert lines["s1", "storage_network", "sw64s"][:2] == (1, 35_000)
    assert lines["s1", "storage_network", "sr400s"] == (16, 8_000, 160)
    assert [(n["name"], n["switches"], n["links"], n["link_items"]) for n in site["support_networks"]] == [
        ("oob", 1, 4, 4), ("storage", 1, 8, 16)]
    assert not audit(sol)
    broken = copy.deepcopy(sol)
    broken["sites"][0]["support_networks"][1]["switches"] = 0
    assert "s1: 0 sw64s for storage, 4 nodes need 1" in audit(broken)
    off = design(tmp_path, book(32, support_networks=False), "off")
    assert off["objective_usd"] == pytest.approx(474_998, abs=1e-6)
    assert not [line for line in off["bom"] if line["category"].endswith("_network")]


def test_switch_counts_round_up_per_site(tmp_path):
    """45 nodes: 2 out-of-band switches of 44, 5 storage switches of 10.67 (45 / 10.67 = 4.2)."""
    sol = design(tmp_path, book(45 * 8))
    nets = {n["name"]: n["switches"] for s in opened(sol).values() for n in s["support_networks"]}
    assert sum(s["nodes"] for s in opened(sol).values()) == 45
    assert nets == {"oob": 2, "storage": 5}


def test_default_rows_size_the_superpod_as_its_reference_architecture(tmp_path):
    """The default rows' ratios are the DGX SuperPOD H100 RA's 4-SU counts (127 nodes: 16 QM9700 storage, 8
    SN4600C in-band, 8 SN2201 out-of-band switches), so the SuperPOD example buys those counts."""
    import json
    from pathlib import Path

    from designer import cli

    example = Path(__file__).resolve().parents[1] / "data" / "examples" / "superpod-h100.xlsx"
    assert cli.main(["solve", str(example), "-o", str(tmp_path / "out"), "--quiet"]) == cli.EXIT_OK
    site = json.loads((tmp_path / "out" / "design.json").read_text())["sites"][0]
    assert {n["switch_model"]: n["switches"] for n in site["support_networks"]} == {
        "QM9700": 16, "SN4600C": 8, "SN2201": 8}
    assert {n["name"]: n["links"] for n in site["support_networks"]} == {"storage": 254, "inband": 254, "oob": 127}
