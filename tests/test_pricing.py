"""The LP relaxation by column generation over (site, mode) pairs (designer.solve.pricing) and the large-model path
of the cost stage it serves (designer.solve.start.priced_start), on the shipped scale-across example."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from designer.audit.checks import audit
from designer.solve import pricing
from designer.solve.highs import SolveOptions, run_highs, scheduler_threads, translate
from designer.solve.run import solve
from designer.solve.start import greedy_start
from models.network import COST_SCALE
from tests.conftest import example_model


@pytest.fixture(scope="module")
def instance():
    inputs, data, model = example_model("scale-across")
    assert greedy_start(model, data, SolveOptions(), None) is not None
    modes = {i for (_s, i), y in model.y.items() if round(y.value or 0) == 1}
    relaxed = model.clone()
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(relaxed)
    whole_lp = run_highs(relaxed, SolveOptions(), COST_SCALE)
    assert whole_lp.status == "optimal"
    return inputs, model, whole_lp.objective, modes


def priced(model, first_modes: set, rounds: int | None = None, monkeypatch=None):
    highs, columns = translate(model)
    owner, pairs = pricing.pair_columns(model, columns)
    if rounds is not None:
        monkeypatch.setattr(pricing, "ROUNDS", rounds)
    first = np.array([i in first_modes for _s, i in pairs], dtype=bool)
    return pricing.priced_relaxation(highs.getLp(), owner, first, COST_SCALE, None, scheduler_threads()), pairs


def test_every_pair_column_is_found_and_no_other(instance):
    """A column belongs to a pair exactly when its variable is indexed by a (site, mode) pair: y, nodes and the
    spine options are, the site's open and the integer totals are not."""
    _inputs, model, _lp, _modes = instance
    highs, columns = translate(model)
    owner, pairs = pricing.pair_columns(model, columns)
    assert sorted(pairs) == sorted(model.SM)
    for s, i in model.SM:
        assert pairs[owner[columns[id(model.y[s, i])]]] == (s, i)
        assert pairs[owner[columns[id(model.nodes[s, i])]]] == (s, i)
    for s, i, o in model.SMO:
        assert pairs[owner[columns[id(model.z[s, i, o])]]] == (s, i)
    for s, i, o in model.SMO_split:
        assert pairs[owner[columns[id(model.lo[s, i, o])]]] == (s, i)
    assert all(owner[columns[id(var)]] == -1 for var in model.open.values())
    assert all(owner[columns[id(var)]] == -1 for var in model.nodes_tot.values())


def test_pricing_from_one_mode_proves_the_whole_lp(instance):
    """From the pairs of the greedy design's modes the column generation ends with no pair priced below 0, and its bound is the
    whole model's LP relaxation (every integer domain relaxed, solved by HiGHS at once) to 1e-7."""
    _inputs, model, whole_lp, modes = instance
    result, pairs = priced(model, modes)
    assert result.proven and result.rounds >= 2
    assert 0 < result.pairs.sum() < len(pairs)  # pairs joined, not all of them
    assert result.bound == pytest.approx(whole_lp, rel=1e-7)
    assert result.objective == pytest.approx(whole_lp, rel=1e-7)


def test_the_pricing_lp_in_parts_is_the_pricing_lp_at_once(instance, monkeypatch):
    """The pricing LP split into parts by pair (PARTS) ends the column generation as one LP of every left-out pair
    does: the same rounds, pairs joined and bound."""
    _inputs, model, _whole_lp, modes = instance
    parts, _pairs = priced(model, modes)
    monkeypatch.setattr(pricing, "PARTS", 1)
    whole, _pairs = priced(model, modes)
    assert (parts.rounds, parts.proven) == (whole.rounds, whole.proven)
    assert np.array_equal(parts.pairs, whole.pairs)
    assert parts.bound == pytest.approx(whole.bound, rel=1e-9)


@pytest.mark.parametrize("first_row, optimum, values", [
    # x0 <= 0.25, a row of pair 0 alone: each part apart, -0.25 - 2 - 1.5
    ({0: 1.0}, -3.75, [0.25, 1.0, 0.5]),
    # x0 + x1 <= 1 reaches into the parts of pairs 0 and 1: one LP, x1 = 1 (the parts apart would say -4.5)
    ({0: 1.0, 1: 1.0}, -3.5, [0.0, 1.0, 0.5]),
])
def test_a_row_across_parts_makes_the_pricing_lp_one(first_row, optimum, values):
    """By hand: columns x0, x1, x2 of pairs 0, 1, 2 in [0, 1] priced -1, -2, -3, and x2 <= 0.5 a row of pair 2's.
    A row over one pair's columns leaves the parts apart; a row over two pairs' is solved with both."""
    rows = [(first_row, 0.25 if len(first_row) == 1 else 1.0), ({2: 1.0}, 0.5)]
    start, index, value = [0], [], []
    for c in range(3):
        for r, (coefficients, _bound) in enumerate(rows):
            if c in coefficients:
                index.append(r)
                value.append(coefficients[c])
        start.append(len(index))
    upper = np.array([bound for _c, bound in rows])
    lp = pricing.colwise_lp(np.zeros(3), np.zeros(3), np.ones(3), np.full(2, -np.inf), upper,
                            (np.array(start, dtype=np.int32), np.array(index, dtype=np.int32), np.array(value)))
    price, chosen = pricing.pricing_lp(pricing.Matrix(lp), np.ones(2, dtype=bool), np.ones(3, dtype=bool),
                                       np.arange(3), np.array([-1.0, -2.0, -3.0]), np.zeros(3), np.ones(3),
                                       np.full(2, -np.inf), upper, scheduler_threads(), None)
    assert price == pytest.approx(optimum)
    assert chosen == pytest.approx(values)


def test_duals_of_the_wrong_sign_are_set_to_zero():
    """Rows x >= 1 (no upper), x <= 2 (no lower), 1 <= x <= 2 and a free row: a dual pointing at an infinite bound is
    0, one of the row's own sign kept, either sign kept on a row bounded on both sides."""
    lower, upper = np.array([1.0, -np.inf, 1.0, -np.inf]), np.array([np.inf, 2.0, 2.0, np.inf])
    assert pricing.signed(np.array([-3e-8, 3e-8, -0.5, 1e-8]), lower, upper) == pytest.approx([0, 0, -0.5, 0])
    assert pricing.signed(np.array([0.25, -0.75, 0.5, 0.0]), lower, upper) == pytest.approx([0.25, -0.75, 0.5, 0])
    assert pricing.box_minimum(pricing.signed(np.array([0.0, 3e-8, 0.0, 0.0]), lower, upper), lower, upper) == 0.0


def test_a_bound_cut_short_is_still_below_the_lp(instance, monkeypatch):
    """One round only, from the greedy design's modes (their restricted LP above the whole LP): the Lagrangian bound L(y) stays at or
    below the whole LP, though the restricted LP's optimum is above it, so it bounds every design."""
    _inputs, model, whole_lp, modes = instance
    result, _pairs = priced(model, modes, rounds=1, monkeypatch=monkeypatch)
    assert not result.proven and result.rounds == 1
    assert result.objective > whole_lp * (1 + 1e-6)
    assert result.bound <= whole_lp * (1 + 1e-9)


def test_a_large_model_gets_its_bound_by_pricing_and_a_design_near_its_start(monkeypatch, instance):
    """Above CHOSEN_ONLY variables the cost stage prices the LP from the greedy design's modes and searches the
    start's neighbourhood: the answer is the same optimum (within the 1e-4 gap) as the whole model's solve, the
    bound it states is at most the optimum, and the design passes the audit."""
    import designer.solve.start as start_module

    inputs, _model, whole_lp, _modes = instance
    reference = solve(inputs, SolveOptions())
    said = []
    monkeypatch.setattr(start_module, "CHOSEN_ONLY", 0)
    answer = solve(inputs, SolveOptions(progress=said.append))
    assert any(line.startswith("LP relaxation by pricing") for line in said)
    assert answer["status"] in ("optimal", "feasible")
    assert answer["objective_usd"] == pytest.approx(reference["objective_usd"], rel=2e-4)
    assert answer["solver"]["bound_usd"] >= whole_lp * (1 - 1e-9)
    assert answer["solver"]["bound_usd"] <= reference["objective_usd"] * (1 + 1e-9)
    assert audit(answer) == []


def test_the_lps_neighbourhood_starts_from_its_dive(monkeypatch, instance):
    """The LP's neighbourhood has no incumbent of its own (the start is seldom in it): it is given its LP rounded by a
    dive, a design of its columns (rows, bounds and integrality held), while the start's neighbourhood runs."""
    import highspy

    import designer.solve.neighbourhood as neighbourhood
    import designer.solve.start as start_module
    from designer.solve.highs import start_violation

    inputs, _model, _whole_lp, _modes = instance
    made, dive = [], neighbourhood.rounded_design

    def recorded(lp, seconds, threads):
        values = dive(lp, seconds, threads)
        made.append((lp, values))
        return values

    monkeypatch.setattr(neighbourhood, "rounded_design", recorded)
    monkeypatch.setattr(start_module, "CHOSEN_ONLY", 0)
    answer = solve(inputs, SolveOptions())
    assert len(made) == 1
    lp, values = made[0]
    assert values is not None and len(values) == lp.num_col_
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.passModel(lp)
    assert start_violation(highs, list(values)) == 0
    assert answer["status"] in ("optimal", "feasible") and audit(answer) == []


def test_a_search_that_finds_nothing_is_counted_in_the_solve_time(monkeypatch, instance):
    """The neighbourhoods' time is the solve's even when they find no design below the start: said, and summed in
    solve_s with the starts' (here a search of 3 s that finds nothing)."""
    import re
    import time

    import designer.solve.neighbourhood as neighbourhood
    import designer.solve.start as start_module

    def nothing(*_args):
        time.sleep(3.0)
        return [{"values": None, "seconds": 3.0}, {"values": None, "seconds": 3.0}]

    monkeypatch.setattr(neighbourhood, "search", nothing)
    monkeypatch.setattr(start_module, "CHOSEN_ONLY", 0)
    said = []
    answer = solve(instance[0], SolveOptions(progress=said.append))
    searched = [float(m[1]) for line in said if (m := re.match(r"the neighbourhoods found no design below the start "
                                                                r"\(([\d.]+) s\)", line))]
    greedy = [float(m[1]) for line in said if (m := re.match(r"greedy start: \$[\d,]+ \(([\d.]+) s\)", line))]
    assert len(searched) == 1 and searched[0] >= 3.0 and len(greedy) == 1
    assert answer["timings"]["solve_s"] >= searched[0] + greedy[0] - 0.1
