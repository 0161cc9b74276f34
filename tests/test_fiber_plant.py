"""The fiber plant of optical links (jumpers, trunks, patch panels: models.network.define_fiber_plant), checked
by hand on the tiny catalog of tests/test_model.py: 4 nodes (32 NIC links) on one 64-port switch with the
nodes 10 m away, where only the 400G transceiver (sr400, $500, 10 W a module, 2 a link) reaches.

Without the plant: capex = 400,000 nodes + 10,000 switch + 64 x 500 modules + 1,000 fixed
+ (40,000 + 500 + 64 x 10) x 1.5 power = $504,710."""

from __future__ import annotations

import pytest

from designer.audit.checks import audit
from tests.test_model import GRAY, ZR, bom_lines, design, opened, tables, two_sites
from tests.test_support import OOB, STORAGE

SRC = {"source": "test figures"}
PLANT = [dict(name="jumper", role="jumper", price_usd=10, **SRC),
         dict(name="trunk", role="trunk", price_usd=20, **SRC),
         dict(name="panel48", role="panel", ports=48, price_usd=100, **SRC),
         dict(name="panel96", role="panel", ports=96, price_usd=300, **SRC)]  # dearer: never picked
LINE = [dict(name="lc", role="duplex_jumper", price_usd=10, **SRC),
        dict(name="odf3", role="odf", ports=3, price_usd=100, **SRC),
        dict(name="odf6", role="odf", ports=6, price_usd=250, **SRC)]  # dearer: never picked


def book(**project) -> dict:
    out = tables(32, **{"cable_m_node_leaf": 10, "fiber_plant": True, **project})
    out["fiber_plant"] = PLANT
    return out


def test_patched_links_take_jumpers_a_trunk_and_panel_ports(tmp_path):
    """32 links of 10 m > cable_in_rack_m 2: 64 jumpers ($640), 32 trunks ($640), 64 panel ports -> 2 panels of
    48 ($200): $1,480 more, no power; capex $506,190."""
    sol = design(tmp_path, book())
    s = opened(sol)["s1"]
    assert s["fiber_plant"] == {"links_in_rack": 0, "links_patched": 32, "pair_ends": 0, "coherent_modules": 0,
                                "jumpers": 64, "trunks": 32, "panels": 2}
    lines = bom_lines(sol)
    assert lines["s1", "fiber_plant", "jumper"] == (64, 640, 0)
    assert lines["s1", "fiber_plant", "trunk"] == (32, 640, 0)
    assert lines["s1", "fiber_plant", "panel48"] == (2, 200, 0)
    assert sol["totals"]["capex_usd"] == pytest.approx(506_190, abs=1e-6)
    assert audit(sol) == []
    sol["bom"] = [dict(line, quantity=1, extended_usd=100) if line["item"] == "panel48" else line
                  for line in sol["bom"]]
    assert any("BOM lists 1 panel48 (fiber_plant), its 32 patched and 0 in-rack optical links, 0 fiber pair ends and 0 "
               "coherent modules need 2" in v
               for v in audit(sol))


def test_links_within_a_rack_take_one_jumper(tmp_path):
    """cable_in_rack_m 10: the 32 links stay in the rack, a jumper each ($320), no trunk or panel."""
    sol = design(tmp_path, book(cable_in_rack_m=10))
    assert opened(sol)["s1"]["fiber_plant"] == {"links_in_rack": 32, "links_patched": 0, "pair_ends": 0,
                                                "coherent_modules": 0, "jumpers": 32, "trunks": 0, "panels": 0}
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
    assert opened(wired)["s1"]["fiber_plant"] == {"links_in_rack": 0, "links_patched": 0, "pair_ends": 0,
                                                  "coherent_modules": 0, "jumpers": 0, "trunks": 0, "panels": 0}
    for solution in (sol, wired):
        assert not [line for line in solution["bom"] if line["category"] == "fiber_plant"]


def line_book(**kw) -> dict:
    out = two_sites(fiber_plant=True, **kw)
    out["fiber_plant"] = PLANT + LINE
    return out


def test_coherent_pair_ends_land_on_an_odf(tmp_path):
    """tests/test_model.py test_two_sites_forced_by_power ($1,177,250): 4 zr400 wavelengths on 2 fiber pairs. At each
    site 2 pair ends take 2 ODF ports (ceil(2 / 3) = 1 odf3, $100) and 2 duplex jumpers to the line terminal, the 4
    coherent modules 4 jumpers to the mux: 6 x $10 = $60. DACs everywhere else: no MPO jumper, trunk or panel.
    capex + 2 x $160 = $1,177,570."""
    sol = design(tmp_path, line_book())
    for s in opened(sol).values():
        assert s["fiber_plant"] == {"links_in_rack": 0, "links_patched": 0, "pair_ends": 2, "coherent_modules": 4,
                                    "jumpers": 0, "trunks": 0, "panels": 0, "duplex_jumpers": 6, "odfs": 1}
    lines = bom_lines(sol)
    assert lines["a", "fiber_plant", "lc"] == (6, 60, 0)
    assert lines["b", "fiber_plant", "odf3"] == (1, 100, 0)
    assert sol["totals"]["capex_usd"] == pytest.approx(1_177_570, abs=1e-6)
    assert audit(sol) == []
    sol["links"][0]["wavelengths"] = 5  # the audit counts the jumpers from the links
    assert any("BOM lists 6 lc (fiber_plant), its 0 patched and 0 in-rack optical links, 2 fiber pair ends and 5 "
               "coherent modules need 7" in v for v in audit(sol))


def test_gray_pair_ends_jumper_to_the_module(tmp_path):
    """tests/test_model.py test_campus_link_on_gray_optics ($1,022,030): 4 gray links on 4 pairs. At each site 4
    pair ends: 4 duplex jumpers, ODF ports to the modules ($40) and ceil(4 / 3) = 2 odf3 ($200): + 2 x $240 =
    $1,022,510."""
    book = line_book(distance_km=2)
    book["routes"][0]["amplifier_spacing_km"] = 1
    book["coherent"] = [ZR, GRAY]
    sol = design(tmp_path, book)
    assert sol["links"][0]["optic_kind"] == "gray"
    assert {k: opened(sol)["b"]["fiber_plant"][k] for k in ("pair_ends", "coherent_modules", "duplex_jumpers",
                                                            "odfs")} == {"pair_ends": 4, "coherent_modules": 0,
                                                                         "duplex_jumpers": 4, "odfs": 2}
    assert sol["totals"]["capex_usd"] == pytest.approx(1_022_510, abs=1e-6)
    assert audit(sol) == []


@pytest.mark.parametrize("per_switch, plant, extra", [
    # a storage switch serves ceil(10.67) = 11 nodes, 3 racks of 4 (40 kW racks of 10 kW nodes): its 8 links
    # (4 nodes x 2 ports) leave the rack: 16 jumpers ($160), 8 trunks ($160), 16 panel ports: 1 panel48 ($100)
    (10.67, {"links_in_rack": 0, "links_patched": 8, "jumpers": 16, "trunks": 8, "panels": 1}, 420),
    # 4 nodes a switch: the switch stands in their rack, 8 jumpers
    (4, {"links_in_rack": 8, "links_patched": 0, "jumpers": 8, "trunks": 0, "panels": 0}, 80),
])
def test_support_network_links_take_the_fiber_plant(tmp_path, per_switch, plant, extra):
    """tests/test_support.py's four nodes ($527,553 with the support networks: one storage switch either way) with
    their storage links (transceivers) in the fiber plant; the out-of-band patch cords (cables) take none."""
    book = tables(32, support_networks=True, fiber_plant=True)
    book["support_networks"] = [OOB, dict(STORAGE, nodes_per_switch=per_switch)]
    book["fiber_plant"] = PLANT
    sol = design(tmp_path, book)
    got = opened(sol)["s1"]["fiber_plant"]
    assert {k: got[k] for k in plant} == plant
    assert sol["totals"]["capex_usd"] == pytest.approx(527_553 + extra, abs=1e-6)
    assert audit(sol) == []


def test_a_panel_or_odf_row_needs_its_ports(tmp_path):
    """The panels a site takes follow from a panel's or ODF's ports: a row without them is named by its cell."""
    from designer.inputs.writer import write_workbook
    from tests.test_workbook import has, problems_of

    bad = line_book()
    bad["fiber_plant"] = PLANT[:2] + [dict(PLANT[2], ports=None), dict(LINE[1], ports=None)]
    found = problems_of(write_workbook(tmp_path / "noports.xlsx", bad))
    assert has(found, "fiber_plant!C4", "a patch panel row needs its ports")
    assert has(found, "fiber_plant!C5", "an ODF row needs its ports")
