"""Rounds of connectivity cuts on the LP relaxation (models.connectivity): solve, add the rows its point breaks, solve
again from where it was, until it breaks none or the rounds have taken as long as the first solve (a second at least).
Each row holds for every design, so the last optimal round's cost is a bound of the model, and the rows go into the
model for every later run (models.network.add_connectivity_cuts).

16 candidate sites, 40 switch models: the LP's $10,441.6M -> $10,477.4M in 10 rounds (5.4 s; the first solve 4.5 s),
HiGHS's root from it $10,487.8M where it reached $10,467.9M without (both at 100 s); 32 sites, 50 models, on its whole
LP by hand: $31,925.8M -> $32,023.1M (30 rounds of 0.1-1.4 s; the solve prices that LP, designer.solve.pricing, and
runs the rounds on its restricted LP); the 6-site oracle instance $3.616M -> $3.628M (the optimum and the solve's time
as they were). On the examples and the RTT-limited 30- and 50-site instances of the bench the LP's point breaks none.

The rows are given as plain data (``spec``, ``Cut``), so that the LP's own process (designer.solve.process) runs the
rounds too."""

from __future__ import annotations

import time

import highspy
import numpy as np

from models.connectivity import Cut, violated_cuts

MIN_SECONDS = 1.0  # the rounds may take at least this long, however fast the first solve was


def cut_spec(model, columns: dict) -> dict | None:
    """What the rounds read of ``model`` translated (``columns``: variable id -> column): its sites and their open
    columns, its routes, their ends and use columns; None where the model does not hold its open sites together
    (no connectivity rows: one site, or a model built without them) or has no route."""
    if not hasattr(model, "flow_balance") or not len(model.R):
        return None
    return {"sites": list(model.S), "open": [columns[id(model.open[s])] for s in model.S],
            "routes": list(model.R), "use": [columns[id(model.use[r])] for r in model.R],
            "ends": [[model.route[r].a, model.route[r].b] for r in model.R]}


def cut_rounds(highs: highspy.Highs, spec: dict | None, seconds: float,
               ends: float | None = None) -> tuple[list[Cut], dict]:
    """Rounds on ``highs``, an LP solved to optimality, for at most max(``seconds``, MIN_SECONDS) and until ``ends``
    (perf_counter seconds; None: no end). Returns the rows added and the last optimal round's solution
    ({"objective", "col_value"}); a round that does not end optimal (its time up) is left out of both (its rows stay in
    ``highs``).
    Without a ``spec``, no round: the LP's own solution."""
    began = time.perf_counter()
    best = {"objective": highs.getInfo().objective_function_value, "col_value": list(highs.getSolution().col_value)}
    added: list[Cut] = []
    if spec is None:
        return added, best
    ends_of = {r: tuple(pair) for r, pair in zip(spec["routes"], spec["ends"])}
    while True:
        x = best["col_value"]
        cuts = violated_cuts({s: x[c] for s, c in zip(spec["sites"], spec["open"])},
                             {r: x[c] for r, c in zip(spec["routes"], spec["use"])}, ends_of)
        left = max(seconds, MIN_SECONDS) - (time.perf_counter() - began)
        if ends is not None:
            left = min(left, ends - time.perf_counter())
        if not cuts or left <= 0:
            return added, best
        for cut in cuts:
            index, value = cut_row(spec, cut)
            highs.addRow(-1.0, highspy.kHighsInf, len(index), index, value)
        highs.setOptionValue("time_limit", highs.getRunTime() + max(1e-3, left))  # HiGHS's clock runs on over runs
        highs.run()
        if highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return added, best
        added += cuts
        best = {"objective": highs.getInfo().objective_function_value,
                "col_value": list(highs.getSolution().col_value)}


def cut_row(spec: dict, cut: Cut) -> tuple[np.ndarray, np.ndarray]:
    """The row of ``cut`` over the translated model's columns (``spec``: cut_spec's), its lower bound -1 and no upper:
    (columns, coefficients) of sum_{r in cut.routes} use_r - open_a - open_b >= -1."""
    use = dict(zip(spec["routes"], spec["use"]))
    opened = dict(zip(spec["sites"], spec["open"]))
    index = [use[r] for r in cut.routes] + [opened[cut.a], opened[cut.b]]
    return np.array(index, dtype=np.int32), np.array([1.0] * len(cut.routes) + [-1.0, -1.0])


def as_data(cuts: list[Cut]) -> list[list]:
    """Rows as JSON data: [routes, a, b] each."""
    return [[list(c.routes), c.a, c.b] for c in cuts]


def from_data(rows: list[list]) -> list[Cut]:
    return [Cut(tuple(routes), a, b) for routes, a, b in rows]
