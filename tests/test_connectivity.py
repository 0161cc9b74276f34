"""Connectivity cuts (models.connectivity, designer.solve.cuts): the rows an LP point breaks, found exactly on
hand-made points; on a line of four sites whose LP opens the two ends alone, the rounds raise the LP's bound, every
row holds at the optimum, and the optimum is the same with and without them, in this process and in the LP's own."""

from __future__ import annotations

import numpy as np
import pytest
from test_diagnose import book, site

import designer.solve.start as start_module
from designer.inputs.workbook import load_inputs
from designer.inputs.writer import write_workbook
from designer.solve import pricing, relaxation
from designer.solve.cuts import cut_spec
from designer.solve.highs import SolveOptions as HighsOptions
from designer.solve.highs import run_highs, scheduler_threads, translate
from designer.solve.prepare import prepare_data
from designer.solve.run import SolveOptions, solve
from designer.solve.start import greedy_start
from models.connectivity import Cut, violated_cuts
from models.network import COST_SCALE, build_model, set_objective

LINE = {"ab": ("a", "b"), "bc": ("b", "c"), "cd": ("c", "d")}


def test_a_point_whose_open_sites_no_used_route_joins_breaks_a_row():
    """a and d open, b and c closed, no route used: the side {a} (the open sites no route joins are apart) has one
    route across, a-b, unused: the row use_ab >= open_a + open_d - 1 = 1, broken by 1."""
    assert violated_cuts({"a": 1.0, "b": 0.0, "c": 0.0, "d": 1.0}, {}, LINE) == [Cut(("ab",), "a", "d")]


def test_a_joined_point_breaks_none_and_a_fractional_one_by_its_share():
    assert violated_cuts({s: 1.0 for s in "abcd"}, {r: 1.0 for r in LINE}, LINE) == []
    # half of each route used, every site open: every cut between two open sites weighs 0.5 < 1
    cuts = violated_cuts({s: 1.0 for s in "abcd"}, {r: 0.5 for r in LINE}, LINE)
    assert cuts and all(len(c.routes) == 1 for c in cuts)
    # a and b half open each: open_a + open_b - 1 = 0, no row asks anything of them
    assert violated_cuts({"a": 0.5, "b": 0.5, "c": 0.0, "d": 0.0}, {}, LINE) == []


def test_a_site_no_route_reaches_cannot_open_beside_another():
    """No route at all between e and the rest: a row over routes the point leaves unused, which e cannot meet open
    beside a or b (0 >= open + 0.6 - 1)."""
    used = {"ab": 1.0}
    cuts = violated_cuts({"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.0, "e": 0.6}, used, LINE)
    assert [c for c in cuts if c.b == "e" and c.a in "ab" and not any(used.get(r) for r in c.routes)]
    assert Cut(("bc",), "a", "e") in cuts  # the side {a, b}: its one route out leads to the closed c


@pytest.fixture(scope="module")
def line(tmp_path_factory):
    """Four sites on a line a - b - c - d: a and d hold 4 nodes each, b and c one each at $1M more; 8 nodes wanted.
    The LP opens a and d and splits its flow's root between them, no route between them used."""
    sites = [site("a", power_mw=0.07), site("b", power_mw=0.02, fixed_cost_usd=1_000_000),
             site("c", power_mw=0.02, fixed_cost_usd=1_000_000), site("d", power_mw=0.07)]
    routes = [dict(site_a=a, site_b=b, distance_km=50, fiber_pairs=4, fiber_cost_usd_per_pair_km=10)
              for a, b in LINE.values()]
    path = write_workbook(tmp_path_factory.mktemp("line") / "line.xlsx", book(64, sites=sites, routes=routes))
    return load_inputs(path)


def lp_bound(inputs, monkeypatch, beside: int, cuts: bool = True):
    """The LP relaxation's bound (USD) and model, solved in this process or in its own (BESIDE_COLUMNS)."""
    model = build_model(prepare_data(inputs))
    set_objective(model)
    with monkeypatch.context() as patch:
        patch.setattr(relaxation, "BESIDE_COLUMNS", beside)
        if not cuts:
            patch.setattr(relaxation, "cut_spec", lambda *_args: None)
        with relaxation.Relaxation(model, [], None, COST_SCALE) as lp:
            lp.launch(*translate(model))
            return lp.result().bound, model


def test_the_rounds_raise_the_bound_here_and_in_the_lps_process_alike(line, monkeypatch):
    plain, _ = lp_bound(line, monkeypatch, 10**9, cuts=False)
    here, model = lp_bound(line, monkeypatch, 10**9)
    apart, model_apart = lp_bound(line, monkeypatch, 0)
    assert plain == pytest.approx(1_378_248, rel=1e-4)
    assert here > plain + 1_000_000 and apart == pytest.approx(here, rel=1e-9)
    assert len(model.connected) == len(model_apart.connected) > 0
    optimum = solve(line, SolveOptions())["objective_usd"]
    assert here <= optimum


def test_the_rows_hold_at_the_optimum_which_they_leave_as_it_was(line, monkeypatch):
    with_cuts = solve(line, SolveOptions())
    _, model = lp_bound(line, monkeypatch, 10**9)
    found = run_highs(model, HighsOptions(mip_gap=1e-9), COST_SCALE)
    assert found.status == "optimal" and found.objective == pytest.approx(with_cuts["objective_usd"], rel=1e-9)
    assert all(min(row.lslack(), row.uslack()) >= -1e-6 for row in model.connected.values())
    monkeypatch.setattr(relaxation, "cut_spec", lambda *_args: None)
    without = solve(line, SolveOptions())
    assert with_cuts["objective_usd"] == pytest.approx(without["objective_usd"], rel=1e-9) == 3_339_711
    assert [(s["name"], s["nodes"]) for s in with_cuts["sites"] if s["open"]] == [("a", 4), ("b", 1), ("c", 1),
                                                                                   ("d", 2)]


def test_the_lp_by_pricing_takes_the_rows_too(line, monkeypatch):
    """The LP by pricing (designer.solve.pricing) from the greedy design's modes proves the plain LP, then rounds of
    cuts on its restricted LP, its pairs priced again after each: the bound rises above the plain LP's by the middle
    sites' $1M and stays at or below the optimum. On the large-model path (priced_start) the rows go into the model,
    and the optimum is the same."""
    data = prepare_data(line)
    model = build_model(data)
    set_objective(model)
    assert greedy_start(model, data, HighsOptions(), None) is not None
    highs, columns = translate(model)
    owner, pairs = pricing.pair_columns(model, columns)
    modes = {i for (_s, i), y in model.y.items() if round(y.value or 0) == 1}
    first = np.array([i in modes for _s, i in pairs], dtype=bool)
    assert not first.all()
    lp = highs.getLp()
    plain = pricing.priced_relaxation(lp, owner, first, COST_SCALE, None, scheduler_threads())
    cut = pricing.priced_relaxation(lp, owner, first, COST_SCALE, None, scheduler_threads(),
                                       cut_spec(model, columns))
    assert plain.proven and not plain.cuts and plain.bound == pytest.approx(1_378_248, rel=1e-4)
    assert cut.proven and cut.cuts and plain.bound + 1_000_000 < cut.bound <= 3_339_711 * (1 + 1e-9)

    monkeypatch.setattr(start_module, "CHOSEN_ONLY", 0)
    said = []
    answer = solve(line, SolveOptions(progress=said.append))
    assert any(line.startswith("LP relaxation by pricing") and "connectivity cut(s)" in line for line in said)
    assert answer["objective_usd"] == pytest.approx(3_339_711, rel=1e-9)
