"""The fiber plant of optical links (jumpers, trunks, patch panels: models.network.define_fiber_plant), checked
by hand on the tiny catalog of tests/test_model.py: 4 nodes (32 NIC links) on one 64-port switch with the
nodes 10 m away, where only the 400G transceiver (sr400, $500, 10 W a module, 2 a link) reaches.

Without the plant: capex = 400,000 nodes + 10,000 switch + 64 x 500 modules + 1,000 fixed
+ (40,000 + 500 + 64 x 10) x 1.5 power = $504,710."""

from __future__ import annotations

import pytest

from designer.audit.checks import audit
from tests.test_model import bom_lines, design, opened, tables

SRC = {"source": "test figures"}
PLANT = [dict(name="jumper", role="jumper", price_usd=10, **SRC),
         dict(name="trunk", role="trunk", price_usd=20, **SRC),
         dict(name="panel48", role="panel", ports=48, price_usd=100, **SRC),
         dict(name="panel96", role="panel", ports=96, price_usd=300, **SRC)]  # dearer: never picked


def book(**project) -> dict:
    out = tables(32, **{"cable_m_node_leaf": 10, "fiber_plant": True, **project})
    out["fiber_plant"] = PLANT
    return out


def test_patched_links_take_jumpers_a_trunk_and_panel_ports(tmp_path):
    """32 links of 10 m > cable_in_rack_m 2: 64 jumpers ($640), 32 trunks ($640), 64 panel ports -> 2 panels of
    48 ($200): $1,480 more, no power; capex $506,190."""
    sol = design(tmp_path, book())
    s = opened(sol)["s1"]
    assert s["fiber_plant"] == {"links_in_rack": 0, "links_patched": 32, "jumpers": 64, "trunks": 32, "panels": 2}
    lines = bom_lines(sol)
    assert lines["s1", "fiber_plant", "jumper"] == (64, 640, 0)
    assert lines["s1", "fiber_plant", "trunk"] == (32, 640, 0)
    assert lines["s1", "fiber_plant", "panel48"] == (2, 200, 0)
    assert sol["totals"]["capex_usd"] == pytest.approx(506_190, abs=1e-6)
    assert audit(sol) == []
    sol["bom"] = [dict(line, quantity=1, extended_usd=100) if line["item"] == "panel48" else line
                  for line in sol["bom"]]
    assert any("BOM lists 1 panel48 (fiber_plant), its 32 patched and 0 in-rack optical links need 2" in v
               for v in audit(sol))


def test_links_within_a_rack_take_one_jumper(tmp_path):
    """cable_in_rack_m 10: the 32 links stay in the rack, a jumper each ($320), no trunk or panel."""
    sol = design(tmp_path, book(cable_in_rack_m=10))
    assert opened(sol)["s1"]["fiber_plant"] == {"links_in_rack": 32, "links_patched": 0, "jumpers": 32,
                                                "trunks": 0, "panels": 0}
    assert sol["totals"]["capex_usd"] == pytest.approx(504_710 + 320, abs=1e-6)
    assert audit(sol) == []


def test_switched_off_or_copper_needs_none(tmp_path):
    """fiber_plant false, or DACs (3 m: node links of 3 m take DACs, not modules): no fiber_plant line."""
    sol = design(tmp_path, book(fiber_plant=False))
    assert sol["totals"]["capex_usd"] == pytest.approx(504_710, abs=1e-6)
    copper = tables(32, fiber_plant=True)
    copper["fiber_plant"] = PLANT
    assert "fiber_plant" not in opened(sol)["s1"]
    wired = design(tmp_path, copper, "copper")
    assert opened(wired)["s1"]["fiber_plant"] == {"links_in_rack": 0, "links_patched": 0, "jumpers": 0, "trunks": 0,
                                                  "panels": 0}
    for solution in (sol, wired):
        assert not [line for line in solution["bom"] if line["category"] == "fiber_plant"]
