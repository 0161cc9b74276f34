"""Resilience a planner can require (issue 12 part 4): route_diversity (N-1 between sites), shared-risk groups of
routes (srlg), what each failure cuts off; and the power_headroom and one_dci_router_model keys.

The three-site instance is tests/test_model.py's ``two_sites`` catalog with a third site: 12 nodes (96 GPUs) wanted,
each site holds 4 (max_nodes), so all three open; dci_ratio 0.03125 x 8 x 400G x 4 nodes = 400 Gb/s a site, one
zr400 wavelength. Routes a-b and b-c of 100 km, a-c of 110 km, amplifiers every 40 km, $10 a fiber pair-km."""

from __future__ import annotations

import copy

import pytest

from designer.audit.checks import audit
from designer.audit.resilience import route_resilience
from designer.errors import Infeasible
from designer.inputs.workbook import load_inputs
from designer.inputs.writer import write_workbook
from models.intersite import prepare
from test_model import design, opened, site, tier_counts, two_sites


def triangle(**project) -> dict:
    book = two_sites(dci_ratio=0.03125, **project)
    book["project"]["gpus_required"] = 96
    book["sites"] = [site(n, power_mw=0.07, pue=1.25, max_nodes=4) for n in "abc"]
    route = book["routes"][0]
    book["routes"] = [dict(route), dict(route, site_a="b", site_b="c"), dict(route, site_a="a", site_b="c",
                                                                             distance_km=110)]
    return book


def pairs(sol: dict) -> set:
    return {(lk["site_a"], lk["site_b"]) for lk in sol["links"]}


def test_route_diversity_adds_the_third_route_at_its_hand_cost(tmp_path):
    """Cheapest: the path a-b-c (a and c single-homed). With route_diversity the 110 km a-c route is added:
    1 fiber pair x 110 km x $10 = $1,100; ceil(110 / 40) - 1 = 2 amplifiers = $20,000; 2 zr400 modules = $10,000;
    at a and c the routes' buffer needs 400 Gb/s x (0.98 + 1.078) ms / 8 = 102.9 MB > 2 x 50 MB: a third shallow
    router each, 2 x $20,000; their power (500 W + 15 W) x 1.25 x 2 sites at $1M per MW = $1,287.50.
    Together +$72,387.50 on $1,582,850."""
    cheap = design(tmp_path, triangle(), "cheap")
    diverse = design(tmp_path, triangle(route_diversity=True), "diverse")
    assert pairs(cheap) == {("a", "b"), ("b", "c")}
    assert pairs(diverse) == {("a", "b"), ("b", "c"), ("a", "c")}
    assert cheap["objective_usd"] == pytest.approx(1_582_850, abs=1e-6)
    assert diverse["objective_usd"] - cheap["objective_usd"] == pytest.approx(72_387.5, abs=1e-6)
    assert {s: tier_counts(e)["dci"] for s, e in opened(diverse).items()} == {
        "a": {"r_shallow": 3}, "b": {"r_shallow": 2}, "c": {"r_shallow": 3}}
    assert audit(diverse) == []
    # each cut of the path strands the 32 GPUs of one end; the triangle loses a third of its capacity, no GPU
    assert [(r["route"], r["sites_connected"], r["gpus_cut_off"]) for r in route_resilience(cheap)] == [
        ("a--b", False, 32), ("b--c", False, 32)]
    assert {(r["route"], r["gpus_cut_off"], r["capacity_left_gbps"]) for r in route_resilience(diverse)} == {
        ("a--b", 0, 800.0), ("b--c", 0, 800.0), ("a--c", 0, 800.0)}


def test_audit_fails_a_design_that_breaks_n_minus_1(tmp_path):
    """The cheapest design, audited as if the workbook had asked for route_diversity: one line per route whose
    loss cuts the open sites apart."""
    sol = design(tmp_path, triangle())
    assert audit(sol) == []
    sol["inputs"]["project"]["route_diversity"] = True
    assert audit(sol) == ["route_diversity: losing route a--b cuts the open sites apart (32 GPUs cut off)",
                          "route_diversity: losing route b--c cuts the open sites apart (32 GPUs cut off)"]


def test_a_shared_risk_group_fails_together(tmp_path):
    """a-b and a-c in one duct: losing it cuts a off, so N-1 over the groups has no design with a open, and all
    three sites must open: infeasible, and the reason names the group (models.intersite.not_diverse rules the
    pairs out before the solve). The triangle passes N-1 over single routes but not over the group."""
    book = triangle(route_diversity=True)
    book["routes"][0]["srlg"] = book["routes"][2]["srlg"] = "duct1"
    inputs = load_inputs(write_workbook(tmp_path / "grouped.xlsx", book))
    assert prepare(inputs, ["a", "b", "c"]).excluded_pairs == [
        ("a", "b", "route_diversity: losing srlg duct1 separates them"),
        ("a", "c", "route_diversity: losing srlg duct1 separates them")]
    with pytest.raises(Infeasible, match=r"route_diversity; e\.g\. sites a and b: losing srlg duct1 separates them"):
        design(tmp_path, book, "grouped")
    sol = design(tmp_path, triangle(route_diversity=True), "single")
    echoed = {(r["site_a"], r["site_b"]): r for r in sol["inputs"]["routes"]}
    echoed["a", "b"]["srlg"] = echoed["a", "c"]["srlg"] = "duct1"
    assert [(r["route"], r["srlg"], r["capacity_gbps"], r["gpus_cut_off"]) for r in route_resilience(sol)] == [
        ("a--b, a--c", "duct1", 800.0, 32), ("b--c", None, 400.0, 0)]
    assert audit(sol) == ["route_diversity: losing srlg duct1 (a--b, a--c) cuts the open sites apart "
                          "(32 GPUs cut off)"]


def test_one_dci_router_model_per_site(tmp_path):
    """two_sites at 100 km: each site's cheapest routers are r_deep + r_shallow ($80,000, 1,500 W: the 196 MB
    buffer and 4,800 Gb/s of ports); with one model a site: 4 r_shallow (200 MB, $80,000, 2,000 W) beat 2 r_deep
    ($120,000): 500 W more x 1.25 at $1M per MW, +$625 a site."""
    mixed = design(tmp_path, two_sites(), "mixed")
    one = design(tmp_path, two_sites(one_dci_router_model=True), "one")
    assert all(tier_counts(s)["dci"] == {"r_deep": 1, "r_shallow": 1} for s in opened(mixed).values())
    assert all(tier_counts(s)["dci"] == {"r_shallow": 4} for s in opened(one).values())
    assert one["objective_usd"] - mixed["objective_usd"] == pytest.approx(2 * 625, abs=1e-6)
    assert audit(one) == []
    mixed["inputs"]["project"]["one_dci_router_model"] = True
    assert audit(mixed) == [f"{s}: one_dci_router_model, but its DCI routers are of 2 models (r_deep, r_shallow)"
                            for s in ("a", "b")]


def test_power_headroom_derates_each_site(tmp_path):
    """two_sites: 4 nodes draw 52,625 W a site of the 55,000. power_headroom 4% leaves 52,800 W: the same design,
    power_cap_mw 0.0528; 5% leaves 52,250 W: 3 nodes a site, 48 GPUs of the 64: infeasible."""
    sol = design(tmp_path, two_sites(power_headroom=0.04), "four")
    assert [(s["nodes"], s["power_cap_mw"]) for s in opened(sol).values()] == [(4, pytest.approx(0.0528))] * 2
    assert audit(sol) == []
    with pytest.raises(Infeasible):
        design(tmp_path, two_sites(power_headroom=0.05), "five")
    tight = copy.deepcopy(sol)
    tight["inputs"]["project"]["power_headroom"] = 0.05
    assert audit(tight) == [f"{s}: facility power 0.053 MW is above power_mw 0.055 less power_headroom 5% "
                            "(0.05225 MW) by 0.000 MW" for s in ("a", "b")]
