"""The LP relaxation of a large model by column generation over its (site, mode) pairs, proved by pricing.

Most columns of a large plan are the counts of (site, mode) pairs no good design uses (50 sites and 60 switch models:
226,101 of 232,963). The restricted LP holds every column that belongs to no pair and the pairs of a few modes (a
start's, at every site where they apply); the other pairs' columns are fixed at 0. Its row duals y price the pairs
left out. With R the rows that touch a column of the restricted LP, dualized at y, and every other row (each a row of
left-out columns alone: a pair's own rows) kept,

    L(y) = offset + sum_{r in R} y_r b_r + sum_{j restricted} min_{l_j <= x_j <= u_j} rc_j x_j
           + min { rc . x : x left out, l <= x <= u, the kept rows }

with rc = c - A^T y and b_r a row's lower bound where y_r > 0 and its upper where y_r < 0, is a lower bound on the
whole LP (weak duality of the Lagrangian that keeps the bounds and the kept rows), so on every design of the model.
Its last term, the pricing LP, splits by pair. The pairs whose part of it is negative join the restricted LP, solved
again from its basis, until none is left (L(y) is then the restricted LP's optimum, and that is the whole LP's) or
the rounds or the clock run out (the greatest L(y) so far is the bound). 50 sites and 60 switch models: two rounds,
11 s, against 43-56 s for the whole LP; 30 sites, 400k GPUs: two rounds, 0.4 s. The pricing LP is solved in PARTS
LPs of its pairs, without presolve (pricing_lp).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import highspy
import numpy as np
import pyomo.environ as pyo

ROUNDS = 10  # restricted LPs solved at most
#: a pair whose part of the pricing LP is below -NEGLIGIBLE x |the restricted LP's optimum| joins the restricted LP;
#: a reduced cost or dual within TINY of 0 on a column or row whose bound is infinite counts as 0 (HiGHS's
#: optimal duals carry 1e-15 of rounding there, which would make L(y) -inf)
NEGLIGIBLE = 1e-9
TINY = 1e-9
LP_OPTIONS = {"solve_relaxation": True, "presolve": "off", "parallel": "off", "output_flag": False}
#: the pricing LP's parts (pairs by their index modulo PARTS), each its own HiGHS run: 50 sites and 60 switch models,
#: whose pricing LP has 343k rows and 226k columns, held 1.86 GB at its peak as one LP with presolve (5.3 + 2.4 s
#: over the two rounds), 1.78 GB without (3.2 + 1.3 s)
PARTS = 16


@dataclass
class Priced:
    """What the column generation ends with: ``bound`` the greatest L(y) (USD), ``objective`` the last restricted
    LP's optimum (USD), ``values`` its column values, ``proven`` whether no pair was left with a negative price (the
    bound is then the whole LP's optimum up to rounding), ``pairs`` the pairs it held (True per pair), ``rounds``
    and ``seconds``."""

    bound: float | None
    objective: float | None
    values: np.ndarray | None
    proven: bool
    pairs: np.ndarray
    rounds: int
    seconds: float


def pair_columns(model, columns: dict) -> tuple[np.ndarray, list[tuple]]:
    """The pair of each column of the translated ``model`` (an index into the returned list of (site, mode) pairs;
    -1 for a column of no pair: a site's, a route's, a total's). A variable belongs to a pair when its index starts
    with one of the model's (site, mode) pairs (y, nodes, leaves, modules, spine options, attachments, ...)."""
    pairs = set(model.SM)
    keys: dict[tuple, int] = {}
    owner = np.full(len(columns), -1, dtype=np.int64)
    for var in model.component_data_objects(pyo.Var):
        index = var.index()
        if isinstance(index, tuple) and len(index) >= 2 and index[:2] in pairs and id(var) in columns:
            owner[columns[id(var)]] = keys.setdefault(index[:2], len(keys))
    return owner, list(keys)


class Matrix:
    """A translated LP's constraint matrix as (column, row, value) of each nonzero."""

    def __init__(self, lp: highspy.HighsLp):
        matrix = lp.a_matrix_
        starts = np.asarray(matrix.start_, dtype=np.int64)
        index = np.asarray(matrix.index_, dtype=np.int64)
        self.value = np.asarray(matrix.value_, dtype=float)
        spread = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
        if matrix.format_ == highspy.MatrixFormat.kColwise:
            self.col, self.row = spread, index
        else:
            self.col, self.row = index, spread
        self.num_col, self.num_row = lp.num_col_, lp.num_row_

    def reduced_costs(self, cost: np.ndarray, duals: np.ndarray) -> np.ndarray:
        """c - A^T y."""
        return cost - np.bincount(self.col, weights=self.value * duals[self.row], minlength=self.num_col)

    def rows_touching(self, columns: np.ndarray) -> np.ndarray:
        """Whether each row has a nonzero in one of ``columns`` (a mask over the columns)."""
        touched = np.zeros(self.num_row, dtype=bool)
        touched[self.row[columns[self.col]]] = True
        return touched

    def block(self, rows: np.ndarray, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The submatrix of ``rows`` and ``columns`` (masks), column-wise: (start, index, value)."""
        keep = columns[self.col] & rows[self.row]
        row_at = np.cumsum(rows) - 1
        col_at = np.cumsum(columns) - 1
        col, row, value = col_at[self.col[keep]], row_at[self.row[keep]], self.value[keep]
        order = np.lexsort((row, col))
        start = np.concatenate([[0], np.cumsum(np.bincount(col, minlength=int(columns.sum())))])
        return start.astype(np.int32), row[order].astype(np.int32), value[order]


def colwise_lp(cost: np.ndarray, lower: np.ndarray, upper: np.ndarray, row_lower: np.ndarray,
               row_upper: np.ndarray, block: tuple[np.ndarray, np.ndarray, np.ndarray]) -> highspy.HighsLp:
    """An LP of these columns and rows, its matrix a column-wise (start, index, value) (Matrix.block)."""
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(cost), len(row_lower)
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, lower, upper
    lp.row_lower_, lp.row_upper_ = row_lower, row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = lp.num_col_, lp.num_row_
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = block
    return lp


def box_minimum(weights: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> float:
    """sum_j min over [l_j, u_j] of w_j x_j (a column's reduced cost times its value; a row's dual times its bound:
    the lower where y_r > 0, the upper where y_r < 0); -inf when a weight beyond TINY points at an infinite bound."""
    weights = np.where((np.abs(weights) <= TINY) & ~(np.isfinite(lower) & np.isfinite(upper)), 0.0, weights)
    with np.errstate(invalid="ignore"):
        terms = np.where(weights > 0, weights * lower, np.where(weights < 0, weights * upper, 0.0))
    return float(np.sum(terms))


def priced_relaxation(lp: highspy.HighsLp, owner: np.ndarray, first: np.ndarray, scale: float,
                      ends: float | None, threads: int) -> Priced:
    """The model's LP relaxation by column generation (module docstring). ``lp``: the translated model; ``owner``:
    each column's pair (pair_columns); ``first``: the pairs the restricted LP starts with (True per pair); ``scale``:
    USD per unit of the objective; ``ends``: when the time is up (perf_counter seconds; None: no limit); ``threads``:
    the thread count of HiGHS's scheduler in this process (designer.solve.highs.scheduler_threads)."""
    started = time.perf_counter()
    matrix = Matrix(lp)
    cost = np.asarray(lp.col_cost_, dtype=float)
    lower, upper = np.asarray(lp.col_lower_, dtype=float), np.asarray(lp.col_upper_, dtype=float)
    row_lower, row_upper = np.asarray(lp.row_lower_, dtype=float), np.asarray(lp.row_upper_, dtype=float)
    held = first.copy()
    out = np.zeros(len(owner), dtype=bool)
    out[owner >= 0] = ~held[owner[owner >= 0]]
    restricted = highspy.Highs()
    restricted.setOptionValue("output_flag", False)
    restricted.passModel(lp)
    for option, value in (LP_OPTIONS | {"threads": threads}).items():
        restricted.setOptionValue(option, value)
    fixed = np.flatnonzero(out).astype(np.int32)
    restricted.changeColsBounds(len(fixed), fixed, np.zeros(len(fixed)), np.zeros(len(fixed)))
    best = Priced(None, None, None, False, held, 0, 0.0)
    for rounds in range(1, ROUNDS + 1):
        if ends is not None:
            left = ends - time.perf_counter()
            if left <= 0:
                break
            restricted.setOptionValue("time_limit", left)
        restricted.run()
        if restricted.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            break
        objective = restricted.getInfo().objective_function_value
        duals = np.asarray(restricted.getSolution().row_dual, dtype=float)
        kept = ~matrix.rows_touching(~out)  # the rows of left-out columns alone
        duals[kept] = 0.0
        rc = matrix.reduced_costs(cost, duals)
        inside = ~out
        part = lp.offset_ + box_minimum(duals, row_lower, row_upper) + box_minimum(rc[inside], lower[inside],
                                                                                 upper[inside])
        price, chosen = pricing_lp(matrix, kept, out, owner, rc, lower, upper, row_lower, row_upper, threads, ends)
        bound = part + price if price is not None else -np.inf
        if np.isfinite(bound) and (best.bound is None or bound * scale > best.bound):
            best.bound = float(bound * scale)
        best.objective, best.values = objective * scale, np.asarray(restricted.getSolution().col_value)
        best.rounds = rounds
        if chosen is None:
            break
        share = np.bincount(owner[out], weights=rc[out] * chosen, minlength=len(held))
        joining = (share < -NEGLIGIBLE * max(1.0, abs(objective))) & ~held
        if not joining.any():
            best.proven = True
            break
        held |= joining
        now = out & held[np.maximum(owner, 0)] & (owner >= 0)
        out &= ~now
        freed = np.flatnonzero(now).astype(np.int32)
        restricted.changeColsBounds(len(freed), freed, lower[freed], upper[freed])
    best.pairs = held
    best.seconds = time.perf_counter() - started
    return best


def pricing_lp(matrix: Matrix, kept: np.ndarray, out: np.ndarray, owner: np.ndarray, rc: np.ndarray,
               lower: np.ndarray, upper: np.ndarray, row_lower: np.ndarray, row_upper: np.ndarray, threads: int,
               ends: float | None) -> tuple[float | None, np.ndarray | None]:
    """min { rc . x : x over the left-out columns within their bounds, the kept rows }: its optimum and the left-out
    columns' values (None, None when HiGHS does not prove it optimal in time). It splits by pair (a kept row is a
    pair's own): solved as the sum of PARTS LPs, each of the pairs of one index modulo PARTS (one LP where a kept row
    reaches into two parts), without presolve (a part's rows are its pairs' own: little for it to remove)."""
    if not out.any():
        return 0.0, np.zeros(0)
    part = np.where(out, owner % PARTS, -1)
    at = kept[matrix.row] & out[matrix.col]
    rows, parts = matrix.row[at], part[matrix.col[at]]
    first, last = np.full(matrix.num_row, PARTS), np.full(matrix.num_row, -1)
    np.minimum.at(first, rows, parts)
    np.maximum.at(last, rows, parts)
    if np.any(kept & (first < last)):
        part[out] = 0
        first[:] = 0
    slot = np.cumsum(out) - 1  # a left-out column's place among the left-out columns
    chosen = np.zeros(int(out.sum()))
    total = 0.0
    for p in np.unique(part[out]):
        columns, within = part == p, kept & (first == p)
        lp = colwise_lp(rc[columns], lower[columns], upper[columns], row_lower[within], row_upper[within],
                        matrix.block(within, columns))
        highs = highspy.Highs()
        highs.setOptionValue("output_flag", False)
        highs.passModel(lp)
        del lp
        for option, setting in (LP_OPTIONS | {"threads": threads}).items():
            highs.setOptionValue(option, setting)
        if ends is not None:
            highs.setOptionValue("time_limit", max(1e-3, ends - time.perf_counter()))
        highs.run()
        if highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None, None
        total += highs.getInfo().objective_function_value
        chosen[slot[columns]] = highs.getSolution().col_value
    return total, chosen
