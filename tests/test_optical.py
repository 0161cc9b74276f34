"""Between sites (issue 10 part 3): the line system as BOM lines, reach from an OSNR budget, C+L, encryption.

The two-site instances are tests/test_model.py's ``two_sites`` (4 nodes a site, 1,600 Gb/s between them, one deep
router a site, here with 4 x 800G or 8 x 400G ports) with their own line system, every figure chosen for the hand calculations below:

- ``inline``: $10,000, 100 W, noise figure 5 dB; ``booster`` $3,000, 40 W; ``preamp`` $2,000, 40 W, 5 dB;
  ``mux`` $1,000, 10 W; ``hut`` $50,000, 1,000 W
- ``zrp400``: 400G, 75 GHz (64 channels a C-band pair), 1,000 km, required OSNR 24 dB, 15 W, $8,000;
  ``zr800``: 800G, 150 GHz, 1,000 km, required OSNR 31 dB, 15 W, $1 (the cheapest by far, when offered)
"""

from __future__ import annotations

import copy
import math

import pytest

from designer.audit.checks import audit
from designer.errors import Infeasible, InputError
from designer.inputs.workbook import load_inputs
from designer.inputs.writer import write_workbook
from models.intersite import channels_per_pair, osnr_db, prepare
from test_model import SRC, ZR, assert_bom_total, bom_lines, design, opened, two_sites

INLINE = dict(name="inline", role="inline", band="c", noise_figure_db=5, power_w=100, price_usd=10_000, **SRC)
BOOSTER = dict(name="booster", role="booster", band="c", noise_figure_db=6, power_w=40, price_usd=3_000, **SRC)
PREAMP = dict(name="preamp", role="preamp", band="c", noise_figure_db=5, power_w=40, price_usd=2_000, **SRC)
MUX = dict(name="mux", role="mux_demux", band="c", power_w=10, price_usd=1_000, **SRC)
HUT = dict(name="hut", role="hut", power_w=1_000, price_usd=50_000, **SRC)
C_LINE = [INLINE, BOOSTER, PREAMP, MUX, HUT]
L_LINE = [dict(row, name=row["name"] + "_l", band="l", price_usd=row["price_usd"] * 2) for row in C_LINE[:4]]
ZRP = dict(name="zrp400", gbps=400, reach_km=1000, channel_ghz=75, required_osnr_db=24, power_w=15, price_usd=8_000,
           **SRC)
ZR8 = dict(name="zr800", gbps=800, reach_km=1000, channel_ghz=150, required_osnr_db=31, power_w=15, price_usd=1,
           **SRC)


def line_book(distance_km=240, **project) -> dict:
    """two_sites at ``distance_km`` with amplifiers every 80 km, fiber losing 0.25 dB/km, the line system above."""
    book = two_sites(distance_km=distance_km, **project)
    book["routes"][0].update(amplifier_spacing_km=80, fiber_loss_db_per_km=0.25)
    book["coherent"] = [ZRP, ZR8]
    book["amplifiers"] = copy.deepcopy(C_LINE)
    for router in book["switches"][1:]:
        router["port_modes"] = "4x800,8x400"  # both speeds, the same 3,200 Gb/s
    return book


def inputs_of(tmp_path, book):
    return load_inputs(write_workbook(tmp_path / "plan.xlsx", book))


def test_osnr_of_three_spans_by_hand():
    """240 km, a span every 80 km: N = 3 spans of 80 x 0.25 = 20 dB; noise figure 5 dB, launch 0 dBm:
    OSNR = 58 + 0 - 5 - 20 - 10 log10 3 = 33 - 4.7712 = 28.2288 dB. A 150 GHz channel at 0 dBm per 50 GHz is
    launched at 10 log10 3 = 4.7712 dBm more: 33.0000 dB."""
    assert osnr_db(240, 80, 0.25, 0.0, 5.0) == pytest.approx(33 - 10 * math.log10(3), abs=1e-12)
    assert osnr_db(240, 80, 0.25, 10 * math.log10(3), 5.0) == pytest.approx(33.0, abs=1e-12)
    assert osnr_db(50, 80, 0.25, 0.0, 5.0) == pytest.approx(58 - 5 - 12.5, abs=1e-12)  # one span, no in-line site


def test_band_c_plus_l_doubles_the_channels_of_a_pair():
    """C: floor(4,800 / 75) = 64 channels a fiber pair; C+L: floor(9,600 / 75) = 128."""
    assert (channels_per_pair(75), channels_per_pair(75, "c+l")) == (64, 128)
    assert (channels_per_pair(1600), channels_per_pair(1600, "c+l")) == (3, 6)


def test_800zr_fails_the_margin_where_400zr_plus_holds(tmp_path):
    """240 km: zr800 (150 GHz, launched at +4.7712 dBm) reaches 33.0 dB < 31 + 3; zrp400 (75 GHz, +1.7609 dBm)
    reaches 29.9897 dB >= 24 + 3. Only zrp400 is offered on the route, with a note; both are within reach_km."""
    inputs = inputs_of(tmp_path, line_book())
    [route] = prepare(inputs, ["a", "b"]).routes
    assert route.coherent == ("zrp400",)
    assert route.osnr_db["zrp400"] == pytest.approx(28.2288 + 1.7609, abs=1e-4)
    notes = prepare(inputs, ["a", "b"]).notes
    assert notes == ["route a-b (240 km): OSNR below the required plus osnr_margin_db 3 dB for zr800 "
                     "(33.0 < 31 + 3 dB): not offered on it"]
    book = line_book(osnr_margin_db=2)  # 33.0 >= 31 + 2: offered again
    assert prepare(inputs_of(tmp_path, book), ["a", "b"]).routes[0].coherent == ("zrp400", "zr800")


def test_the_line_system_in_the_capex_and_the_bom(tmp_path):
    """240 km, 1,600 Gb/s: 4 zrp400 wavelengths on 1 fiber pair (64 channels); N = 3 spans: 2 in-line sites.
    A site: IT = 40,000 nodes + 500 leaf + 32 + 8 DACs (the routers' attachment) + 1,500 routers + 4 x 15 modules
    + 40 + 40 + 10 line units at its end of the pair = 42,190 W, facility x 1.25 = 52,737.5 W; capex = 400,000 +
    10,000 + 3,200 + 800 + 80,000 (ports for 1,600 + 3,200 Gb/s: two routers, a deep one for the BDP 1,600 x 2.352
    / 8 = 470.4 MB) + 4 x 8,000 + 3,000 + 2,000 + 1,000 + 1,000 fixed + 52,737.5 = $585,737.5.
    Route: 240 pair-km x $10 + 2 in-line amplifiers x $10,000 + 2 huts x $50,000 = $122,400, drawing
    2 x 100 + 2 x 1,000 = 2,200 W on no site. Capex = 2 x 585,737.5 + 122,400 = $1,293,875."""
    sol = design(tmp_path, line_book())
    assert audit(sol) == []
    [link] = sol["links"]
    assert {k: link[k] for k in ("coherent_model", "wavelengths", "fiber_pairs", "amplifiers", "huts", "band",
                                 "required_osnr_db", "route_power_w", "encrypted", "encryption")} == {
        "coherent_model": "zrp400", "wavelengths": 4, "fiber_pairs": 1, "amplifiers": 2, "huts": 2, "band": "c",
        "required_osnr_db": 24, "route_power_w": 2_200, "encrypted": False, "encryption": None}
    assert link["osnr_db"] == pytest.approx(29.9897, abs=1e-4)
    for s in opened(sol).values():
        assert s["power_mw"] == pytest.approx(0.0527375, abs=1e-12)
        assert s["capex_usd"] == pytest.approx(585_737.5, abs=1e-6)
    assert sol["totals"]["route_power_mw"] == pytest.approx(0.0022, abs=1e-12)
    assert sol["totals"]["capex_usd"] == pytest.approx(1_293_875, abs=1e-6)
    lines = bom_lines(sol)
    assert lines["a--b", "amplifiers", "inline"] == (2, 20_000, 200)
    assert lines["a--b", "line_system", "hut"] == (2, 100_000, 2_000)
    for end in ("a", "b"):
        assert [lines[end, "line_system", item][:2] for item in ("booster", "preamp", "mux")] == [
            (1, 3_000), (1, 2_000), (1, 1_000)]
    assert_bom_total(sol)


def test_the_audit_recomputes_the_osnr_and_the_line_system(tmp_path):
    """The audit's own OSNR, huts and site line units: a margin of 9 dB leaves 29.99 dB 3.01 dB short, a hut
    too few and a preamp missing at one end are each a violation."""
    sol = design(tmp_path, line_book())
    broken = copy.deepcopy(sol)
    broken["inputs"]["project"]["osnr_margin_db"] = 9
    [problem] = audit(broken)
    assert problem.startswith("route a--b: OSNR 29.99 dB is below zrp400's required 24 dB plus osnr_margin_db 9 dB "
                              "by 3.01 dB")
    broken = copy.deepcopy(sol)
    broken["links"][0]["huts"] = 1
    assert audit(broken) == ["route a--b: huts is 1, 2 by the rule (wavelengths 4, pairs 1)"]
    broken = copy.deepcopy(sol)
    broken["bom"] = [line for line in broken["bom"] if (line["site"], line["item"]) != ("a", "preamp")]
    assert "a: BOM lists 0 preamp, its coherent fiber pairs need 1" in audit(broken)


def test_c_plus_l_carries_twice_the_wavelengths_a_pair_with_l_band_units(tmp_path):
    """zr400 (1,600 GHz channels): 3 a pair in the C band, 6 in C+L. With one fiber pair the 4 wavelengths fit only
    in C+L; every amplifier and mux/demux then has an L-band twin (priced twice its C unit here): 100 km, spacing
    40 km: 2 in-line sites, so 2 C and 2 L in-line amplifiers and 2 huts (huts serve both bands)."""
    book = two_sites()
    book["routes"][0].update(fiber_pairs=1, band="C+L")
    book["amplifiers"] = copy.deepcopy(C_LINE + L_LINE)
    sol = design(tmp_path, book)
    assert audit(sol) == []
    [link] = sol["links"]
    assert (link["wavelengths"], link["fiber_pairs"], link["channels_per_pair"], link["band"]) == (4, 1, 6, "c+l")
    lines = bom_lines(sol)
    assert (lines["a--b", "amplifiers", "inline"][:2], lines["a--b", "amplifiers", "inline_l"][:2]) == (
        (2, 20_000), (2, 40_000))
    assert lines["a--b", "line_system", "hut"][:2] == (2, 100_000)
    assert lines["b", "line_system", "booster_l"][:2] == (1, 6_000)
    book["routes"][0]["band"] = "c"
    with pytest.raises(Infeasible):  # 4 wavelengths on one pair of 3 C-band channels
        design(tmp_path, book, "c_only")


def test_c_plus_l_without_l_band_units_offers_no_coherent_type(tmp_path):
    book = two_sites()
    book["routes"][0]["band"] = "c+l"
    book["amplifiers"] = copy.deepcopy(C_LINE)
    inter = prepare(inputs_of(tmp_path, book), ["a", "b"])
    assert inter.routes == []
    assert inter.notes[0] == ("route a-b is C+L but the amplifiers table has no L-band inline, L-band booster, "
                              "L-band preamp, L-band mux_demux: coherent types are not offered on it")


def test_encrypt_dci_offers_only_encrypting_equipment(tmp_path):
    """encrypt_dci: with a MACsec router (r_deep) only it is offered; with none, only the optics that encrypt."""
    book = two_sites(encrypt_dci=True)
    book["switches"][2]["encryption"] = True  # r_deep
    inter = prepare(inputs_of(tmp_path, book), ["a", "b"])
    assert (inter.routers, inter.encryption) == (["r_deep"], "router")
    assert inter.notes == ["encrypt_dci: DCI routers without MACsec were left out (r_shallow)"]
    book = two_sites(encrypt_dci=True)
    book["coherent"] = [ZR, dict(ZR, name="zr400_sec", price_usd=6_000, encryption=True)]
    sol = design(tmp_path, book)
    assert audit(sol) == []
    [link] = sol["links"]
    assert (link["coherent_model"], link["encrypted"], link["encryption"]) == ("zr400_sec", True, "optic")
    broken = copy.deepcopy(sol)
    broken["inputs"]["coherent"][1]["encryption"] = False
    assert audit(broken) == ["route a--b: encrypt_dci, but neither zr400_sec nor MACsec on every DCI router at both "
                             "ends encrypts it"]


def test_old_amplifier_rows_read_as_c_band_inline_units(tmp_path):
    """An amplifiers sheet of name, power and price only (older workbooks): role inline, band c, 5 dB."""
    inputs = inputs_of(tmp_path, two_sites())
    row = inputs.amplifiers.loc["amp"]
    assert (row["role"], row["band"], row["noise_figure_db"]) == ("inline", "c", 5.0)
    assert (inputs.routes.loc[0, "band"], inputs.routes.loc[0, "fiber_loss_db_per_km"]) == ("c", 0.22)
    assert (inputs.project["launch_power_dbm"], inputs.project["osnr_margin_db"], inputs.project["encrypt_dci"]) == (
        0.0, 3.0, False)


def test_a_bad_band_names_its_cell(tmp_path):
    book = two_sites()
    book["routes"][0]["band"] = "X"
    book["amplifiers"][0]["role"] = "amp"
    with pytest.raises(InputError) as caught:
        inputs_of(tmp_path, book)
    found = [str(p) for p in caught.value.problems]
    assert any(p.startswith("routes!G2 band: must be one of: c, c+l, got 'X'") for p in found), found
    assert any(p.startswith("amplifiers!B2 role: must be one of: inline, booster, preamp, mux_demux, hut, got 'amp'")
               for p in found), found
