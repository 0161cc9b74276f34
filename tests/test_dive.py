"""The LP's rounded design (designer.solve.dive): hand-checkable roundings on two-column models, and on a real
completion (the scale-across example's greedy plan, its sites and modes fixed) a design of the whole model that
HiGHS takes as its start and stops from within the gap."""

from __future__ import annotations

import time

import highspy
import numpy as np
import pytest

from designer.solve.dive import Dive, rounded_design
from designer.solve.greedy import greedy_plan
from designer.solve.highs import (
    DIVE_SHARE,
    GuardedHighs,
    SolveOptions,
    run_highs,
    scheduler_threads,
    start_violation,
    translate,
)
from designer.solve.start import START_SHARE, complete
from models.network import COST_SCALE
from tests.conftest import example_model

INTEGER, CONTINUOUS = highspy.HighsVarType.kInteger, highspy.HighsVarType.kContinuous


def two_columns(cost, lower, upper, rows, row_lower, row_upper) -> highspy.HighsLp:
    """A MIP of two integer columns; ``rows``: one row of two coefficients each."""
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = 2, len(rows)
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, lower, upper
    lp.row_lower_, lp.row_upper_ = row_lower, row_upper
    matrix = np.asarray(rows, dtype=float).T  # column-wise
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = [0, len(rows), 2 * len(rows)]
    lp.a_matrix_.index_ = list(range(len(rows))) * 2
    lp.a_matrix_.value_ = list(matrix.ravel())
    lp.integrality_ = [INTEGER, INTEGER]
    return lp


def dive(lp: highspy.HighsLp) -> np.ndarray | None:
    return Dive(lp, scheduler_threads(), time.perf_counter() + 10).design()


def test_a_count_rounds_up_to_cover_its_need_and_down_under_its_cap():
    """min 2a - b, a >= 1.5, b <= 2.5: the LP's (1.5, 2.5) rounds neither all up (b = 3 breaks its cap) nor all
    down (a = 1 misses its need); by halves a goes up to 2, b down to 2."""
    x = dive(two_columns([2.0, -1.0], [0.0, 0.0], [10.0, 10.0], [[1.0, 0.0], [0.0, 1.0]],
                         [1.5, -highspy.kHighsInf], [highspy.kHighsInf, 2.5]))
    assert list(x) == [2.0, 2.0]


def test_binaries_are_held_the_largest_first_at_one_else_at_zero():
    """max 5 z1 + 4 z2, 6 z1 + 4 z2 <= 7 (a knapsack): the LP takes z2 = 1, z1 = 1/2; z1 held at 1 leaves z2 = 1/4,
    which cannot be held at 1 (6 + 4 > 7), so at 0: the design (1, 0), worth 5 (the optimum, here)."""
    x = dive(two_columns([-5.0, -4.0], [0.0, 0.0], [1.0, 1.0], [[6.0, 4.0]], [-highspy.kHighsInf], [7.0]))
    assert list(x) == [1.0, 0.0]


def test_a_count_left_no_integer_by_another_restarts_the_counts_rounded_first():
    """min -3b - 3c, 3a + 2b + 2c <= 6.5, a + 3b - 2c >= 4.25, a <= 5, b <= 3, c <= 4: the LP's (0, 3, 1/4) has c
    rounded up to 1, which leaves b = 2.25 with no integer (b = 3 breaks the first row, b = 2 the second: 6 - 2 <
    4.25). The counts restart from their bounds with b first: b and c down together (b <= 2, c <= 1) give
    (0.1875, 2, 0.96875), then a and c down: the design (0, 2, 0)."""
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = 3, 2
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = [0.0, -3.0, -3.0], [0.0] * 3, [5.0, 3.0, 4.0]
    lp.row_lower_, lp.row_upper_ = [-highspy.kHighsInf, 4.25], [6.5, highspy.kHighsInf]
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_ = [0, 2, 4, 6], [0, 1] * 3
    lp.a_matrix_.value_ = [3.0, 1.0, 2.0, 3.0, 2.0, -2.0]
    lp.integrality_ = [INTEGER] * 3
    assert list(dive(lp)) == [0.0, 2.0, 0.0]


def test_a_binary_left_no_way_by_a_rounded_count_restarts_the_counts():
    """min 2z - 3c, -2z + 3c <= 2, z + 2c <= 2.5, z binary, c <= 4: c rounded up to 1 needs z >= 1/2 (the first row)
    and z <= 1/2 (the second), so z can be held neither at 1 nor at 0; the counts restart from their bounds, z is
    held at 1 and c, at 3/4, rounds down to 0: the design (1, 0)."""
    lp = two_columns([2.0, -3.0], [0.0, 0.0], [1.0, 4.0], [[-2.0, 3.0], [1.0, 2.0]],
                     [-highspy.kHighsInf, -highspy.kHighsInf], [2.0, 2.5])
    assert list(dive(lp)) == [1.0, 0.0]


def test_a_model_without_an_integral_design_gives_none():
    """2a = 1 has no integer solution: every rounding of a = 1/2 breaks the row."""
    lp = two_columns([1.0, 1.0], [0.0, 0.0], [5.0, 5.0], [[2.0, 0.0]], [1.0], [1.0])
    lp.integrality_ = [INTEGER, CONTINUOUS]
    assert dive(lp) is None


@pytest.fixture(scope="module")
def completion():
    """The scale-across example's model with its greedy plan's sites and modes fixed, translated for HiGHS."""
    inputs, data, model = example_model("scale-across")
    plan = greedy_plan(inputs, data.modes)
    index = {mode.id: i for i, mode in enumerate(data.modes)}
    choices = {(s, index[site["mode"]]) for s, site in plan.sites.items()}
    for s in model.S:
        model.open[s].fix(int(s in plan.sites))
    for key in model.SM:
        model.y[key].fix(int(key in choices))
    yield model
    for var in [*model.open.values(), *model.y.values()]:
        var.unfix()


def test_the_dive_gives_a_design_of_the_whole_model(completion):
    """Through HiGHS's presolve and back (postsolve): one value per column of the translated model, its rows,
    bounds and integrality held (the check a start passes before HiGHS is given it), its cost no less than the
    completion's LP bound."""
    highs, _ = translate(completion)
    lp = highs.getLp()
    values = rounded_design(lp, 30.0, scheduler_threads())
    assert values is not None and len(values) == lp.num_col_
    assert start_violation(highs, list(values)) == 0
    relaxed = highspy.Highs()
    relaxed.setOptionValue("output_flag", False)
    relaxed.passModel(lp)
    relaxed.changeColsIntegrality(lp.num_col_, np.arange(lp.num_col_, dtype=np.int32),
                                  np.full(lp.num_col_, CONTINUOUS))
    relaxed.run()
    assert float(np.dot(values, lp.col_cost_)) + lp.offset_ >= relaxed.getInfo().objective_function_value - 1e-6


def test_a_completion_starts_from_the_dive_and_matches_one_without(monkeypatch, completion):
    """complete() runs HiGHS from the dive's design (given as its start; the model is small, so the dive's column
    threshold is lowered); its design is within the completion's gap of the one HiGHS finds with no start."""
    given, give = [], GuardedHighs._give
    monkeypatch.setattr("designer.solve.highs.DIVE_COLUMNS", 0)

    def recorded(self, values):
        given.append(len(values))
        give(self, values)

    monkeypatch.setattr(GuardedHighs, "_give", recorded)
    with_dive = complete(completion, SolveOptions(mip_gap=0.01), cutoff=None)
    assert given, "the dive's design was not given to HiGHS"
    without = run_highs(completion, SolveOptions(mip_gap=0.01, presolve=True, rens=True), COST_SCALE)
    assert with_dive is not None and without.status == "optimal"
    assert with_dive.objective == pytest.approx(without.objective, rel=0.02)
    assert with_dive.objective >= without.bound * (1 - 1e-9)


def test_the_dive_takes_at_most_half_the_time_to_the_runs_settle_point(monkeypatch, completion):
    """A completion under a 10 s limit settles at START_SHARE of it (4 s): its dive is given at most half of that."""
    asked = []
    monkeypatch.setattr("designer.solve.highs.DIVE_COLUMNS", 0)
    monkeypatch.setattr("designer.solve.highs.rounded_design", lambda _lp, seconds, _threads: asked.append(seconds))
    complete(completion, SolveOptions(time_limit=10.0, mip_gap=0.01), cutoff=None)
    assert len(asked) == 1 and 0 < asked[0] <= DIVE_SHARE * 10.0 * START_SHARE
