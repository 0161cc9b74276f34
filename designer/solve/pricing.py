"""The LP relaxation of a large model by column generation over its (site, mode) pairs, proved by pricing.

Most columns of a large plan are the counts of (site, mode) pairs no good design uses (50 sites and 60 switch models:
226,101 of 232,963). The restricted LP holds every column that belongs to no pair and the pairs of a few modes (a
start's, at every site where they apply), and every row; the other pairs' columns are 0 (not in it). Its row duals y
price the pairs left out. With R the rows that touch a column of the restricted LP, dualized at y, and every other
row (each a row of left-out columns alone: a pair's own rows) kept,

    L(y) = offset + sum_{r in R} y_r b_r + sum_{j restricted} min_{l_j <= x_j <= u_j} rc_j x_j
           + min { rc . x : x left out, l <= x <= u, the kept rows }

with rc = c - A^T y and b_r a row's lower bound where y_r > 0 and its upper where y_r < 0 (y of those signs: 0 on a
row bounded on one side only, where the other sign would make it -inf), is a lower bound on the whole LP (weak
duality of the Lagrangian that keeps the bounds and the kept rows), so on every design of the model.
Its last term, the pricing LP, splits by pair. The pairs whose part of it is negative join the restricted LP, solved
again from its basis, until none is left (L(y) is then the restricted LP's optimum, and that is the whole LP's) or
the rounds or the clock run out (the greatest L(y) so far is the bound). 50 sites and 60 switch models: two rounds,
11 s, against 43-56 s for the whole LP; 30 sites, 400k GPUs: two rounds, 0.4 s. The pricing LP is solved in PARTS
LPs of its pairs, without presolve (pricing_lp).

Then rounds of connectivity cuts (designer.solve.cuts) on the restricted LP, its pairs priced again after each: 16
sites, 40 switch models, $10,441.6M -> $10,477.4M in ~2 s (49 rows; the pricing 1.0 s); 50 sites, 60 models,
$82,882.2M -> $82,934.2M in 8-10 s (179 rows; 9.1 s); 32 sites, 50 models, $31,925.8M -> $32,026.8M in 11 s (200
rows; 2.8 s).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import highspy
import numpy as np
import pyomo.environ as pyo

from designer.solve.cuts import MIN_SECONDS, cut_rounds, cut_row
from models.connectivity import Cut

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
#: the connectivity cuts' rounds, and the pricing after each, may take this many times the time the pricing took to
#: prove the LP (designer.solve.cuts.MIN_SECONDS at least): they took 1x at 50 sites and 60 switch models, 2x at 16
#: sites and 40 models, 4x at 32 sites and 50 models (where at 2x they stopped with nothing)
CUT_SHARE = 5.0


@dataclass
class Priced:
    """What the column generation ends with: ``bound`` the greatest L(y) (USD), ``objective`` the restricted LP's
    optimum (USD) where the pricing ended, before any cut, ``values`` its column values (the point the LP's
    neighbourhood reads, designer.solve.neighbourhood: from the cuts' point, at 50 sites and 60 switch models, the
    neighbourhoods found no design in 70 s, from this one $83.15B in 3 s), ``proven`` whether no pair was left with a
    negative price (the bound is then the whole LP's optimum up to rounding), ``pairs`` the pairs it held (True per
    pair), ``rounds`` and ``seconds``; ``cuts`` the connectivity cuts added to the restricted LP
    (models.connectivity.Cut)."""

    bound: float | None
    objective: float | None
    values: np.ndarray | None
    proven: bool
    pairs: np.ndarray
    rounds: int
    seconds: float
    cuts: list = field(default_factory=list)


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

    def add_rows(self, rows: list[tuple[np.ndarray, np.ndarray]]) -> None:
        """More rows, after the others: each (columns, values)."""
        if not rows:
            return
        self.col = np.concatenate([self.col] + [np.asarray(c, dtype=np.int64) for c, _v in rows])
        self.row = np.concatenate([self.row] + [np.full(len(c), self.num_row + k, dtype=np.int64)
                                                for k, (c, _v) in enumerate(rows)])
        self.value = np.concatenate([self.value] + [np.asarray(v, dtype=float) for _c, v in rows])
        self.num_row += len(rows)

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


def signed(duals: np.ndarray, row_lower: np.ndarray, row_upper: np.ndarray) -> np.ndarray:
    """The row duals with those of the wrong sign set to 0 (y_r >= 0 on a row with no upper bound, <= 0 on one with no
    lower, 0 on a free row): L(y) holds for every y of these signs, and HiGHS leaves duals of the wrong sign within its
    dual feasibility tolerance (3e-8 on the 16-site restricted LP with cut rows), which would make L(y) -inf."""
    wrong = (np.isinf(row_upper) & (duals < 0)) | (np.isinf(row_lower) & (duals > 0))
    return np.where(wrong, 0.0, duals)


def box_minimum(weights: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> float:
    """sum_j min over [l_j, u_j] of w_j x_j (a column's reduced cost times its value; a row's dual times its bound:
    the lower where y_r > 0, the upper where y_r < 0); -inf when a weight beyond TINY points at an infinite bound."""
    weights = np.where((np.abs(weights) <= TINY) & ~(np.isfinite(lower) & np.isfinite(upper)), 0.0, weights)
    with np.errstate(invalid="ignore"):
        terms = np.where(weights > 0, weights * lower, np.where(weights < 0, weights * upper, 0.0))
    return float(np.sum(terms))


def priced_relaxation(lp: highspy.HighsLp, owner: np.ndarray, first: np.ndarray, scale: float,
                      ends: float | None, threads: int, cuts: dict | None = None) -> Priced:
    """The model's LP relaxation by column generation (module docstring). ``lp``: the translated model; ``owner``:
    each column's pair (pair_columns); ``first``: the pairs the restricted LP starts with (True per pair); ``scale``:
    USD per unit of the objective; ``ends``: when the time is up (perf_counter seconds; None: no limit); ``threads``:
    the thread count of HiGHS's scheduler in this process (designer.solve.highs.scheduler_threads). ``cuts``
    (designer.solve.cuts.cut_spec): once the pricing has proved the LP, rounds of connectivity cuts on the restricted
    LP, its pairs priced again after each, for CUT_SHARE times as long as the pricing took (MIN_SECONDS at least). A
    cut's row holds columns of no pair (open, use), so it is dualized in L(y) with the restricted LP's other rows:
    L(y) then bounds the LP with the rows, which every design meets, and the bound is the greatest L(y) with or
    without them."""
    started = time.perf_counter()
    generation = Generation(lp, owner, first, threads)
    best = Priced(None, None, None, False, generation.held, 0, 0.0)
    rounds = 0
    while rounds < ROUNDS and generation.solve(ends):
        rounds += 1
        joining = generation.price(best, scale, ends)
        best.objective, best.values = generation.point(scale)
        if joining is None:
            break
        if not joining.any():
            best.proven = True
            break
        generation.join(joining)
    best.rounds = rounds
    if cuts is not None and best.proven:
        until = time.perf_counter() + max(CUT_SHARE * (time.perf_counter() - started), MIN_SECONDS)
        until = min(until, ends) if ends is not None else until
        priced = True  # the restricted LP's point has been priced
        for _ in range(ROUNDS):
            added = generation.cut(cuts, until)
            if added is None or (priced and not added):  # the time up, or no row broken at a point priced
                break
            best.cuts += added
            joining = generation.price(best, scale, until)
            if joining is None:
                break
            priced = not joining.any()
            if not priced:
                generation.join(joining)
                if not generation.solve(until):
                    break
    best.seconds = time.perf_counter() - started
    return best


class Generation:
    """The restricted LP of a column generation (priced_relaxation) and what its pricing reads: the whole model's
    matrix, costs and bounds (rows added as cuts join), the pairs ``held`` and the columns left ``out``. The
    restricted LP holds every row and the columns not left out alone (``order``: their columns in the whole model),
    a joining pair's columns added after them: at 50 sites and 60 switch models a tenth of the whole model's columns,
    where fixing the others at 0 kept them all in HiGHS (and 235 MB more once cut rows joined)."""

    def __init__(self, lp: highspy.HighsLp, owner: np.ndarray, first: np.ndarray, threads: int):
        self.matrix, self.owner, self.threads, self.offset = Matrix(lp), owner, threads, lp.offset_
        self.cost = np.asarray(lp.col_cost_, dtype=float)
        self.lower, self.upper = np.asarray(lp.col_lower_, dtype=float), np.asarray(lp.col_upper_, dtype=float)
        self.row_lower = np.asarray(lp.row_lower_, dtype=float)
        self.row_upper = np.asarray(lp.row_upper_, dtype=float)
        self.held = first.copy()
        self.out = np.zeros(len(owner), dtype=bool)
        self.out[owner >= 0] = ~self.held[owner[owner >= 0]]
        inside = ~self.out
        self.order = np.flatnonzero(inside)
        restricted = colwise_lp(self.cost[inside], self.lower[inside], self.upper[inside], self.row_lower,
                                self.row_upper, self.matrix.block(np.ones(self.matrix.num_row, dtype=bool), inside))
        restricted.offset_ = lp.offset_
        self.highs = highspy.Highs()
        self.highs.setOptionValue("output_flag", False)
        self.highs.passModel(restricted)
        for option, value in (LP_OPTIONS | {"threads": threads}).items():
            self.highs.setOptionValue(option, value)

    def solve(self, ends: float | None) -> bool:
        """The restricted LP solved again (from its basis) until ``ends``: whether it is optimal."""
        if ends is not None:
            left = ends - time.perf_counter()
            if left <= 0:
                return False
            self.highs.setOptionValue("time_limit", self.highs.getRunTime() + left)  # its clock runs on over runs
        self.highs.run()
        return self.highs.getModelStatus() == highspy.HighsModelStatus.kOptimal

    def price(self, best: Priced, scale: float, ends: float | None) -> np.ndarray | None:
        """L(y) at the optimal restricted LP's duals, ``best.bound`` raised to it where it is greater; the pairs whose
        part of the pricing LP is negative (True per pair), or None when the pricing LP is not solved in time."""
        matrix, out = self.matrix, self.out
        objective = self.highs.getInfo().objective_function_value
        duals = signed(np.asarray(self.highs.getSolution().row_dual, dtype=float), self.row_lower, self.row_upper)
        kept = ~matrix.rows_touching(~out)  # the rows of left-out columns alone
        duals[kept] = 0.0
        rc = matrix.reduced_costs(self.cost, duals)
        inside = ~out
        part = self.offset + box_minimum(duals, self.row_lower, self.row_upper) + box_minimum(
            rc[inside], self.lower[inside], self.upper[inside])
        price, chosen = pricing_lp(matrix, kept, out, self.owner, rc, self.lower, self.upper, self.row_lower,
                                   self.row_upper, self.threads, ends)
        bound = part + price if price is not None else -np.inf
        if np.isfinite(bound) and (best.bound is None or bound * scale > best.bound):
            best.bound = float(bound * scale)
        if chosen is None:
            return None
        share = np.bincount(self.owner[out], weights=rc[out] * chosen, minlength=len(self.held))
        return (share < -NEGLIGIBLE * max(1.0, abs(objective))) & ~self.held

    def point(self, scale: float) -> tuple[float, np.ndarray]:
        """The optimal restricted LP's cost (USD) and values of the whole model's columns (0 where left out)."""
        values = np.zeros(len(self.owner))
        values[self.order] = self.highs.getSolution().col_value
        return self.highs.getInfo().objective_function_value * scale, values

    def join(self, joining: np.ndarray) -> None:
        """The ``joining`` pairs' columns added to the restricted LP."""
        self.held |= joining
        now = self.out & self.held[np.maximum(self.owner, 0)] & (self.owner >= 0)
        self.out &= ~now
        freed = np.flatnonzero(now)
        start, index, value = self.matrix.block(np.ones(self.matrix.num_row, dtype=bool), now)
        self.highs.addCols(len(freed), self.cost[freed], self.lower[freed], self.upper[freed], len(index), start[:-1],
                           index, value)
        self.order = np.concatenate([self.order, freed])

    def cut(self, spec: dict, until: float) -> list[Cut] | None:
        """Rounds of connectivity cuts on the optimal restricted LP until ``until`` (designer.solve.cuts.cut_rounds),
        their rows added to the matrix the pricing reads: the rows added, or None when the last round did not end
        optimal (its rows are then in the LP alone, so the pricing stops)."""
        at = np.empty(len(self.owner), dtype=np.int64)  # each whole-model column's place in the restricted LP
        at[self.order] = np.arange(len(self.order))
        here = spec | {"open": [int(at[c]) for c in spec["open"]], "use": [int(at[c]) for c in spec["use"]]}
        added, _ = cut_rounds(self.highs, here, until - time.perf_counter(), until)
        if self.highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        self.matrix.add_rows([cut_row(spec, cut) for cut in added])
        self.row_lower = np.append(self.row_lower, np.full(len(added), -1.0))
        self.row_upper = np.append(self.row_upper, np.full(len(added), np.inf))
        return added


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
