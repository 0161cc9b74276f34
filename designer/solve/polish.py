"""Every split at the design's own node counts: the polish after a solve over the grid's splits.

Where a site's Clos was searched at the grid's one split (more than one usable site: designer.solve.prepare.
every_split_applies) and a split outside it would cost less at the site's endpoint count
(designer.solve.space.cheaper_split), the design is solved again with every other decision fixed as it is (sites,
modes, node counts, the DCI routers' attachments, routes, optics, wavelengths, fiber pairs, DCI routers, support
switches) and those sites' modes offering every split their counts need, at every site a mode serves (Mode.splits
over those counts alone: ModelData.split_window). Every row of the model holds again, so the power, space, budget
and every other limit still do; the design that comes back is no dearer and takes a split outside the grid only
where it costs less.

What the design is then optimal over: the grid's splits at every node count, and every split at the design's own
counts (the polish's HiGHS run proves its optimum over what it leaves free). A lower bound over that union is the
lesser of the two runs' bounds; the design's gap is read against it. A design of every split at another node count
may still cost less (README, Model notes).
"""

from __future__ import annotations

import time
from dataclasses import replace

import pyomo.environ as pyo

from designer.solve.highs import Outcome, SolveOptions, relative_gap, run_highs, translation_seconds
from designer.solve.space import cheaper_split, every_split_of
from models.modes import PastDeadline
from models.network import (
    COST_SCALE,
    ModelData,
    agg_split,
    build_model,
    define_connectivity,
    define_route_diversity,
    define_rtt,
    endpoints,
    leaf_split,
    set_objective,
    spine_count,
)

#: the share of --time-limit the polish may take past the limit where the solve before it took it all (the promise
#: is 1.1 x the limit: this share and GuardedHighs's overrun stay within it)
SHARE = 0.04

#: the polish's own gap at the most: its model is small (at 50 sites 0.65 s to 1%), and what it leaves is money
GAP = 1e-4

#: the model's decisions a polish keeps as the design has them (what a site's split changes is left free: its
#: leaves, spines, modules, panels, power and cost; the flows and RTT labels follow the fixed routes)
FIXED = ("open", "y", "nodes", "attach", "use", "x", "waves", "pairs", "routers", "support", "multi", "router_pick")
#: the rows over open sites and used routes alone (and their own flows), which the design held and the fixed sites
#: and routes hold again: not built (at 50 sites 65k of the polish model's columns, and 6 of its 8 s in HiGHS)
ROUTED = (define_connectivity, define_route_diversity, define_rtt)


def polish(model, data: ModelData, outcome: Outcome, options: SolveOptions, cutoff: float | None,
           ends: float | None) -> tuple | None:
    """(model, data, outcome) of the design in ``model`` with its sites' splits polished, or None where no site
    names a cheaper split, no time is left (``ends``, perf_counter seconds: the time limit's end and SHARE of it)
    or the polish finds nothing cheaper.
    The data returned says what the polish replaced (ModelData.polish): {site: the grid's split (down_ports,
    up_ports, spines, agg_down_ports, agg_up_ports)} and the saving."""
    chosen = [(s, i) for s, i in model.SM if round(model.y[s, i].value or 0) == 1]
    named = {i for s, i in chosen if cheaper_split(model, data, s, i)}
    if not named or (ends is not None and ends - time.perf_counter() < 0.1):
        return None
    at = {s: i for s, i in chosen if i in named}  # every site of a mode polished: its options serve each count
    counts: dict[int, list[int]] = {}
    for s, i in at.items():
        counts.setdefault(i, []).append(round(pyo.value(endpoints(model, s, i))))
    modes = list(data.modes)
    for i in counts:
        leaf, aggregation = every_split_of(data, modes[i])
        modes[i] = replace(modes[i], splits=leaf, splits2=aggregation)
    polished = replace(data, modes=modes, chosen=frozenset(chosen),
                       split_window={i: (min(c), max(c)) for i, c in counts.items()})
    polished.modeset = data.modeset
    try:
        small = build_model(polished, ends=ends, leave_out=ROUTED)
    except PastDeadline:
        return None
    set_objective(small)
    for name in FIXED:
        mine, theirs = small.component(name), model.component(name)
        if mine is None:
            continue
        for index, var in mine.items():
            var.fix(round(theirs[index].value or 0))
    left = None if ends is None else ends - time.perf_counter() - translation_seconds(small)
    if left is not None and left <= 0.05:
        return None
    found = run_highs(small, replace(options, time_limit=left, mip_gap=min(options.mip_gap, GAP)), COST_SCALE,
                      cutoff=cutoff)
    if found.objective is None or found.objective >= outcome.objective - 0.5:
        return None
    bound = None if outcome.bound is None or found.bound is None else min(outcome.bound, found.bound)
    status = "optimal" if outcome.status == found.status == "optimal" else "feasible"
    before = {s: split_of(model, data, s, i) for s, i in at.items()}
    polished.polish = {"sites": {s: split for s, split in before.items()
                                 if split != split_of(small, polished, s, at[s])},
                       "saving_usd": outcome.objective - found.objective}
    return small, polished, Outcome(status, found.objective, bound, relative_gap(found.objective, bound),
                                    found.seconds, found.termination, found.highs_seconds)


def split_of(model, data: ModelData, s: str, i: int) -> dict:
    """The split site s's Clos (mode i) has in the design ``model`` holds: its leaves' ports, spines per plane
    (2-tier) or aggregation switches' ports (3-tier)."""
    mode = data.modes[i]
    down, up = leaf_split(model, s, i)
    down2, up2 = agg_split(model, s, i) if mode.tiers == 3 else (None, None)
    return {"down_ports": down, "up_ports": up,
            "spines": round(pyo.value(spine_count(model, s, i))) if mode.tiers == 2 else None,
            "agg_down_ports": down2, "agg_up_ports": up2}
