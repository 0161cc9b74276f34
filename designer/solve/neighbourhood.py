"""A better design near a large model's start, where the whole model is too large to search in the time: two
neighbourhoods HiGHS searches side by side, each in a process of its own on one core, over the columns of the start's
modes at every site and of no pair (the other pairs' columns are left out: fixed at 0 in the model):

- the start's: the sites open both in the start and in the LP relaxation's optimum fixed open, those open in neither
  closed, the rest free, the start as incumbent (RINS-like; 50 sites and 60 switch models: 1.12% above the LP bound
  -> 0.15% in 37 s);
- the LP's: every site the LP opens at all fixed open, the rest free (the start is seldom in it; 32 sites and 50
  switch models: 1.78% -> 0.65% in 25 s, where the start's neighbourhood holds nothing better), its incumbent its
  own LP rounded by a dive (designer.solve.dive), made here while the start's neighbourhood runs.

HiGHS's presolve is on: a design found is a candidate, checked against the whole model before it is kept
(designer.solve.highs.start_violation), never a claim of optimality. Each run ends at the first design within the
gap of the LP bound (objective_target) and the other is then stopped; else both run to their own optimum or the
deadline.
"""

from __future__ import annotations

import time
from contextlib import ExitStack

import highspy
import numpy as np

from designer.solve.dive import rounded_design
from designer.solve.highs import DIVE_SHARE
from designer.solve.pricing import Matrix, colwise_lp
from designer.solve.process import HighsProcess, wait_first


def neighbourhood_bounds(lp: highspy.HighsLp, left_out: np.ndarray, opened: np.ndarray, incumbent: np.ndarray,
                         relaxed: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """(column lower bounds, upper bounds, start) of the start's and the LP's neighbourhood over the whole model's
    columns. ``left_out``: the columns fixed at 0 (a mask); ``opened``: the columns of the sites' open decisions;
    ``incumbent``, ``relaxed``: the start's and the LP's column values."""
    lower, upper = np.array(lp.col_lower_, dtype=float), np.array(lp.col_upper_, dtype=float)
    lower[left_out] = upper[left_out] = 0.0
    in_start, in_lp = incumbent[opened] > 0.5, relaxed[opened] > 1e-6
    near_start = (lower.copy(), upper.copy(), incumbent)
    near_start[0][opened[in_start & in_lp]] = 1.0
    near_start[1][opened[~in_start & ~in_lp]] = 0.0
    near_lp = (lower.copy(), upper, None)
    near_lp[0][opened[in_lp]] = 1.0
    return [near_start, near_lp]


def column_subset(lp: highspy.HighsLp, kept: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> highspy.HighsLp:
    """The MIP of ``lp`` over the ``kept`` columns alone (a mask; the others are 0), every row kept, with the given
    bounds of the whole model's columns."""
    sub = colwise_lp(np.asarray(lp.col_cost_, dtype=float)[kept], lower[kept], upper[kept],
                     np.asarray(lp.row_lower_, dtype=float), np.asarray(lp.row_upper_, dtype=float),
                     Matrix(lp).block(np.ones(lp.num_row_, dtype=bool), kept))
    integer = np.asarray([t != highspy.HighsVarType.kContinuous for t in lp.integrality_], dtype=bool)[kept]
    sub.integrality_ = [highspy.HighsVarType.kInteger if flag else highspy.HighsVarType.kContinuous
                        for flag in integer]
    sub.offset_, sub.sense_ = lp.offset_, lp.sense_
    return sub


def search(lp: highspy.HighsLp, left_out: np.ndarray, neighbourhoods: list, options: dict, target: float,
           until: float, threads: int) -> list[dict]:
    """Each neighbourhood (neighbourhood_bounds) searched by HiGHS in a process of its own (``options``, one thread),
    side by side until one finds a design at or below ``target`` (the objective's units) or ``until`` (perf_counter
    seconds). A neighbourhood without a start is given its LP's dive (in DIVE_SHARE of the time left; ``threads``:
    the thread count of HiGHS's scheduler here), when the dive finds a design. Returns each run's answer
    (designer.solve.process) with its values over the whole model's columns. A process that cannot be made (no
    temporary folder, no room) raises OSError."""
    kept = ~left_out
    with ExitStack() as stack:
        runs = []
        for lower, upper, start in neighbourhoods:
            sub = column_subset(lp, kept, lower, upper)
            first = (start[kept] if start is not None else
                     rounded_design(sub, DIVE_SHARE * max(0.0, until - time.perf_counter()), threads))
            runs.append(stack.enter_context(HighsProcess(sub, options | {"threads": 1, "objective_target": target},
                                                         start=first, ends=until)))
        answers = wait_first(runs, until + 1.0, lambda a: a["values"] is not None and a["objective"] <= target)
    for answer in answers:
        if answer["values"] is not None:
            values = np.zeros(lp.num_col_)
            values[kept] = answer["values"]
            answer["values"] = values
    return answers
