"""The search over sets of open sites (designer.solve.site_sets) on a facility-location model small enough to
check by hand, and in the solve on a workbook the brute force checks."""

from __future__ import annotations

import time

import highspy
import numpy as np
import oracle
import pytest

from designer.inputs.workbook import load_inputs
from designer.inputs.writer import write_workbook
from designer.solve import site_sets
from designer.solve.highs import scheduler_threads
from designer.solve.run import SolveOptions, solve
from designer.solve.prepare import prepare_data
from designer.tools.bench.instances import DEFAULT_WORKBOOK, tiny_workbook
from models.network import build_model

CAPS, FIXED, UNIT = (6, 5, 4), (10.0, 4.0, 3.0), (1.0, 2.0, 2.5)


def facility(demand: int) -> highspy.Highs:
    """Three sites s (columns 0-2: open_s; 3-5: x_s integer nodes): x_s <= cap_s open_s, sum_s x_s >= demand,
    minimise sum_s fixed_s open_s + unit_s x_s. At demand 9: {0, 1} costs 10 + 4 + 6 + 2 x 3 = 26, {0, 2} 26.5,
    {1, 2} 27, all three 29, one site alone holds at most 6; the LP relaxation opens sites in proportion to their
    nodes: 6 at 1 + 10/6 and 3 at 2 + 4/5 = 24.4."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    inf = highspy.kHighsInf
    h.addVars(6, np.zeros(6), np.array([1.0, 1, 1, inf, inf, inf]))
    h.changeColsCost(6, np.arange(6, dtype=np.int32), np.array(FIXED + UNIT))
    h.changeColsIntegrality(6, np.arange(6, dtype=np.int32), np.full(6, 1, dtype=np.uint8))
    for s in range(3):
        h.addRow(-inf, 0.0, 2, np.array([3 + s, s], dtype=np.int32), np.array([1.0, -CAPS[s]]))
    h.addRow(float(demand), inf, 3, np.array([3, 4, 5], dtype=np.int32), np.ones(3))
    # HiGHS refuses a run asking another thread count than its scheduler's in this process (designer.solve.highs)
    for name, value in (("presolve", "off"), ("threads", scheduler_threads()), ("parallel", "off"),
                        ("mip_rel_gap", 1e-9)):
        h.setOptionValue(name, value)
    return h


def whole_model(h: highspy.Highs) -> tuple[float, float]:
    """HiGHS's optimum on the whole model and its LP relaxation's."""
    lp = h.getLp()
    mip = highspy.Highs()
    mip.setOptionValue("output_flag", False)
    mip.setOptionValue("threads", scheduler_threads())
    mip.passModel(lp)
    mip.run()
    relaxed = highspy.Highs()
    relaxed.setOptionValue("output_flag", False)
    relaxed.setOptionValue("threads", scheduler_threads())
    lp.integrality_ = [highspy.HighsVarType.kContinuous] * lp.num_col_
    relaxed.passModel(lp)
    relaxed.run()
    return mip.getInfo().objective_function_value, relaxed.getInfo().objective_function_value


def test_search_finds_the_cheapest_set_and_proves_it():
    h = facility(9)
    optimum, relaxed = whole_model(h)
    assert optimum == pytest.approx(26.0) and relaxed == pytest.approx(24.4)
    answer = site_sets.search(h, [0, 1, 2], 1e-9, None, None, lambda: False)
    assert answer["status"] == "kOptimal" and not answer["stopped"]
    assert answer["objective"] == pytest.approx(26.0) and answer["bound"] == pytest.approx(26.0)
    assert list(np.round(answer["values"])) == [1, 1, 0, 6, 3, 0]
    assert answer["sets"] == 4 and answer["solved"] == 1  # {0, 1} proves 26; the next LP bound, 26.5, closes the rest
    lp = h.getLp()  # the model's bounds are as they were
    assert list(lp.col_lower_[:3]) == [0, 0, 0] and list(lp.col_upper_[:3]) == [1, 1, 1]


def test_each_set_bounded_by_its_lp():
    """LP(T) with open fixed: {0, 1} 14 + 6 + 6 = 26, {0, 2} 13 + 6 + 7.5, {1, 2} 7 + 10 + 10, {0, 1, 2} 17 + 6 + 6;
    a site alone is short of 9 nodes, no LP."""
    h = facility(9)
    sets = site_sets.relaxed_bounds(h, h.getLp(), [0, 1, 2], None)
    assert [(round(b, 6), t) for b, t in sets] == [(26.0, (1, 1, 0)), (26.5, (1, 0, 1)), (27.0, (0, 1, 1)),
                                                   (29.0, (1, 1, 1))]


def test_a_budget_below_every_design_is_no_design():
    h = facility(9)
    h.setOptionValue("objective_bound", 25.0)
    answer = site_sets.search(h, [0, 1, 2], 1e-9, None, None, lambda: False)
    assert answer["status"] == "kInfeasible" and answer["values"] is None
    assert answer["bound"] >= 25.0  # each set proved nothing below the budget
    assert h.getOptionValue("objective_bound")[1] == 25.0


def test_a_start_within_the_gap_closes_every_set_without_a_milp():
    """The {0, 2} design (26.5) is within 2% of the least LP(T) (26): no set is solved, the start is the answer."""
    start = [1, 0, 1, 6, 0, 3]
    answer = site_sets.search(facility(9), [0, 1, 2], 0.02, None, start, lambda: False)
    assert answer["status"] == "kOptimal" and answer["objective"] == pytest.approx(26.5)
    assert answer["bound"] == pytest.approx(26.0) and answer["nodes"] == 0 and answer["solved"] == 0


def test_out_of_time_returns_the_start_and_no_proof():
    start = [1, 1, 1, 6, 3, 0]
    answer = site_sets.search(facility(9), [0, 1, 2], 1e-9, time.perf_counter() - 1.0, start, lambda: False)
    assert answer["status"] == "kTimeLimit" and answer["stopped"]
    assert answer["objective"] == pytest.approx(29.0) and list(answer["values"]) == start


def test_one_feasible_set_is_left_to_the_whole_model():
    """15 nodes need all three sites: nothing to decide among sets."""
    assert site_sets.search(facility(15), [0, 1, 2], 1e-9, None, None, lambda: False) is None


def test_applies_to_few_free_sites_of_a_small_model():
    h = facility(9)
    assert site_sets.applies(h, [0, 1, 2]) == [0, 1, 2]
    h.changeColBounds(1, 1.0, 1.0)  # a required site is no choice
    assert site_sets.applies(h, [0, 1, 2]) == [0, 2]
    assert site_sets.applies(h, [1]) == []
    many = highspy.Highs()
    many.setOptionValue("output_flag", False)
    n = site_sets.SITES + 1
    many.addVars(n, np.zeros(n), np.ones(n))
    many.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.ones(n, dtype=np.uint8))
    assert site_sets.applies(many, list(range(n))) == []


def test_the_solve_searches_set_by_set_and_agrees_with_the_brute_force(tmp_path, monkeypatch):
    """The bench's 4-site brute-force instance: the solve's main run is the search (8 of its 15 sets have a
    feasible LP), said so in the progress line, and its design is the brute force's optimum."""
    book = tiny_workbook(4)
    inputs = load_inputs(write_workbook(tmp_path / "four.xlsx", book))
    searched = []
    search = site_sets.search

    def spy(*args, **kwargs):
        answer = search(*args, **kwargs)
        searched.append(answer)
        return answer

    monkeypatch.setattr(site_sets, "search", spy)
    said = []
    solution = solve(inputs, SolveOptions(mip_gap=1e-9, progress=said.append))
    answer = oracle.Oracle(inputs).solve()
    assert any(a is not None for a in searched)
    ran = next(a for a in searched if a is not None)
    assert f"HiGHS set by set over the open sites ({ran['solved']} of {ran['sets']} sets solved): optimal" in [
        line.split(", gap")[0] for line in said]
    assert ran["sets"] == 8 and 1 <= ran["solved"] <= 8
    assert solution["status"] == "optimal"
    assert solution["objective_usd"] + (solution["modes"].get("polish") or {}).get("saving_usd", 0.0) == (
        pytest.approx(answer.cost, rel=1e-6))


def test_the_search_decides_where_two_sets_hold_the_job(tmp_path):
    """The 4-site brute-force instance: several sets of its sites hold the job, so the LP's starts are left to the
    search's own first set. The default example's sites hold 16,384, 15,664, 16,384 and 16,384 GPUs at most: its
    50,000 need all four, so the starts stay; 40,000 fit in any three."""
    data = prepare_data(load_inputs(write_workbook(tmp_path / "four.xlsx", tiny_workbook(4))))
    assert site_sets.decides(build_model(data), data)
    data = prepare_data(load_inputs(DEFAULT_WORKBOOK))
    model = build_model(data)
    assert not site_sets.decides(model, data)
    model.open["atlanta"].fix(1)  # required: three free sites, and all of them still needed
    assert not site_sets.decides(model, data)
    data.inputs.project["gpus_required"] = 40_000
    assert site_sets.decides(model, data)
