"""A first design of a model whose main decisions are fixed (a start's completion, designer.solve.start), rounded out
of its LP relaxation by a dive, for HiGHS to start from: with it, HiGHS stops at its root once the root's bound is
within the gap, before the cut loop and the sub-MIP heuristics that are most of a large completion's time (50 sites,
1M GPUs: 21 s to the greedy plan's first design, 1.4-2.0 s from a start).

The dive runs on the model as HiGHS's MIP presolve leaves it (the LP a tenth of the size, so each of its hundred LP
solves is ~0.03 s, not ~0.16 s), and its design is carried back by HiGHS's postsolve; the run it starts checks it
again as a design of the whole model (start_violation, then HiGHS), so a dive that goes wrong costs its time only:

- binaries first, one at a time, the largest LP value first: held at 1, else at 0 (the choices: a spine option, a
  route and its optic, the root of the route tree);
- then the other integers together: all rounded up (a count covers its need), else all down (a count under a cap),
  else each half in turn; the LP solved again after each step, from its last basis;
- a count that rounds neither way (the others' roundings leave it no integer) restarts the counts from their own
  bounds, that one first; a binary held neither way after counts were rounded restarts them too;
- passes until the LP's solution is integral, or a column rounds neither way again, or the time is out.
"""

from __future__ import annotations

import time

import highspy
import numpy as np

#: how far from an integer a column counts as fractional (HiGHS's MIP feasibility tolerance)
INTEGRAL = 1e-6
#: passes at most: a pass rounds the binaries, then the other integers; the LP may make some fractional again
PASSES = 10
PRESOLVED = (highspy.HighsPresolveStatus.kReduced, highspy.HighsPresolveStatus.kNotReduced)


def rounded_design(lp: highspy.HighsLp, seconds: float, threads: int) -> np.ndarray | None:
    """Values of every column of ``lp`` (a translated model, its fixed decisions fixed by their bounds) that hold
    its rows and bounds with its integer columns integral, or None when the dive finds none in ``seconds``.
    ``threads``: the thread count of HiGHS's scheduler in this process (highs.scheduler_threads)."""
    ends = time.perf_counter() + seconds
    presolve = _highs(threads, ends)
    presolve.passModel(lp)
    presolve.presolve()
    status = presolve.getModelPresolveStatus()
    if status == highspy.HighsPresolveStatus.kReducedToEmpty:
        reduced = np.zeros(0)
    elif status in PRESOLVED:
        reduced = Dive(presolve.getPresolvedLp(), threads, ends).design()
    else:
        return None
    if reduced is None:
        return None
    solution = highspy.HighsSolution()
    solution.col_value = list(reduced)
    solution.value_valid = True
    if presolve.postsolve(solution) == highspy.HighsStatus.kError:
        return None
    values = np.asarray(presolve.getSolution().col_value, dtype=float)
    return values if len(values) == lp.num_col_ else None


def _highs(threads: int, ends: float) -> highspy.Highs:
    highs = highspy.Highs()
    for option, value in {"output_flag": False, "threads": threads, "parallel": "off",
                          "time_limit": max(1e-6, ends - time.perf_counter())}.items():
        highs.setOptionValue(option, value)
    return highs


class Dive:
    """The LP relaxation of a (presolved) model in a HiGHS of its own, its column bounds tightened as it rounds."""

    def __init__(self, lp: highspy.HighsLp, threads: int, ends: float):
        self.integer = np.asarray([t != highspy.HighsVarType.kContinuous for t in lp.integrality_], dtype=bool)
        self.lower = np.asarray(lp.col_lower_, dtype=float).copy()
        self.upper = np.asarray(lp.col_upper_, dtype=float).copy()
        self.binary = self.integer & (self.lower >= 0) & (self.upper <= 1)
        self.original = (self.lower.copy(), self.upper.copy())
        self.count_columns = np.flatnonzero(self.integer & ~self.binary)
        self.stuck: int | None = None  # the first count of a rounding that rounded neither way
        self.ends = ends
        self.highs = _highs(threads, ends)
        self.highs.passModel(lp)
        integer = np.flatnonzero(self.integer).astype(np.int32)
        self.highs.changeColsIntegrality(len(integer), integer,
                                         np.full(len(integer), highspy.HighsVarType.kContinuous))

    def design(self) -> np.ndarray | None:
        """The dive's integral LP solution, or None. A count that rounds neither way (the others' roundings leave it
        no integer) restarts the counts from their own bounds, that one rounded first; a binary held neither way
        after counts were rounded restarts them too."""
        x = self.solve()
        integer = np.flatnonzero(self.integer)
        first: list[int] = []
        for _ in range(PASSES):
            if x is None:
                return None
            y = self.binaries(x)
            if y is None:
                x = self.restart()
                continue
            if not len(self.fractional(y, integer)):
                y[integer] = np.round(y[integer])
                return y
            rest = self.fractional(y, self.count_columns)
            self.stuck = None
            x = self.counts(np.concatenate([[c for c in first if c in rest], np.setdiff1d(rest, first)]).astype(int),
                            y)
            if x is None and self.stuck is not None and self.stuck not in first:
                first.insert(0, self.stuck)
                x = self.restart()
        return None

    def restart(self) -> np.ndarray | None:
        """The LP's solution with the counts back at their own bounds (the binaries held stay held); None when they
        are there already (nothing to undo)."""
        cols = self.count_columns
        lower, upper = self.original[0][cols], self.original[1][cols]
        if np.array_equal(self.lower[cols], lower) and np.array_equal(self.upper[cols], upper):
            return None
        self.lower[cols], self.upper[cols] = lower, upper
        self.highs.changeColsBounds(len(cols), cols.astype(np.int32), lower, upper)
        return self.solve()

    def solve(self) -> np.ndarray | None:
        """The LP's solution under the bounds set, None when it has none or the time is out."""
        left = self.ends - time.perf_counter()
        if left <= 0:
            return None
        self.highs.setOptionValue("time_limit", left)
        self.highs.run()
        self.highs.setOptionValue("presolve", "off")  # after the first: each next LP starts from the last basis
        if self.highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        return np.asarray(self.highs.getSolution().col_value, dtype=float)

    @staticmethod
    def fractional(x: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return cols[np.abs(x[cols] - np.round(x[cols])) > INTEGRAL]

    def bound(self, cols: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray | None:
        """The LP's solution with ``cols`` held in [lower, upper] (within their bounds), kept when it has one, else
        the bounds undone and None."""
        lower = np.clip(lower, self.lower[cols], self.upper[cols])
        upper = np.clip(upper, self.lower[cols], self.upper[cols])
        index = cols.astype(np.int32)
        self.highs.changeColsBounds(len(cols), index, lower, upper)
        x = self.solve()
        if x is None:
            self.highs.changeColsBounds(len(cols), index, self.lower[cols], self.upper[cols])
            return None
        self.lower[cols], self.upper[cols] = lower, upper
        return x

    def binaries(self, x: np.ndarray) -> np.ndarray | None:
        """The fractional binaries held one at a time, the largest first: at 1, else at 0."""
        cols = np.flatnonzero(self.binary)
        while len(fractional := self.fractional(x, cols)):
            one = fractional[[np.argmax(x[fractional])]]
            x = self.bound(one, np.ones(1), np.ones(1))
            if x is None:
                x = self.bound(one, np.zeros(1), np.zeros(1))
            if x is None:
                return None
        return x

    def counts(self, cols: np.ndarray, x: np.ndarray) -> np.ndarray | None:
        """The fractional integers ``cols`` rounded: all up, else all down, else each half in turn."""
        for lower, upper in ((np.ceil(x[cols] - INTEGRAL), self.upper[cols]),
                             (self.lower[cols], np.floor(x[cols] + INTEGRAL))):
            y = self.bound(cols, lower, upper)
            if y is not None:
                return y
        if len(cols) == 1:
            self.stuck = int(cols[0]) if self.stuck is None else self.stuck
            return None
        y = self.counts(cols[:len(cols) // 2], x)
        if y is None:
            return None
        rest = self.fractional(y, cols[len(cols) // 2:])
        return self.counts(rest, y) if len(rest) else y
