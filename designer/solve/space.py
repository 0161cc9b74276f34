"""The design space a solve searched (design.json ``modes.space``): what "optimal" is optimal over.

A design is proven optimal over the fabrics the model can express, and some fabric choices are searched over a
grid, not over every value (README, Model notes). A planner checking the design against a vendor's needs to know
which: a 40/20 leaf split striped over 2 spines is a design the grid's levels cannot express.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from designer.formats import money
from designer.inputs.schema import TRAINING_OBJECTIVES
from designer.solve.prepare import every_split_applies
from models.modes import every_split, oversubscription_levels, split_figures, switch_cages, switch_rows
from models.network import endpoints, site_list, spine_count
from models.splits import option_figures, static_options


def design_space(inputs) -> list[dict]:
    """One row per fabric choice: ``choice``, what was ``searched``, and ``every`` (whether that is every value a
    planner could give it)."""
    limit = float(inputs.project["max_oversubscription"])
    return [split_row(inputs, limit),
            {"choice": "spine count of a 2-tier Clos", "every": False,
             "searched": "each divisor of a leaf's uplinks (uniform striping: every leaf has the same number of links "
                         "to every spine)"},
            {"choice": "uplink speed", "every": True,
             "searched": "every speed both tiers' switches share, slower than the NICs included"},
            {"choice": "leaf mesh size", "every": True,
             "searched": "any number of leaves up to what the mesh's port split keeps non-blocking"}]


def split_row(inputs, limit: float) -> dict:
    """The leaf (and aggregation) port split: every split within max_oversubscription, or the grid's levels."""
    choice = "port split of a Clos tier (down : up ports)"
    if every_split_applies(inputs):
        return {"choice": choice, "every": True,
                "searched": f"every split within max_oversubscription {limit:g}, ports left dark where fewer "
                            "uplinks on fewer spines cost less"}
    levels = oversubscription_levels(limit)
    named = ("levels " if len(levels) > 1 else "level ") + ", ".join(f"{level:g}" for level in levels)
    why = ("a training objective's step reads one oversubscription per fabric"
           if inputs.project.get("objective") in TRAINING_OBJECTIVES
           else f"with {len(site_list(inputs))} usable sites each site's node count ranges over its whole limit, and "
                "the splits that range needs are too many to solve in time")
    return {"choice": choice, "every": False,
            "searched": f"the oversubscription {named}, each split using every port; every split within "
                        f"the limit is searched on a workbook of one usable site under the cost objectives ({why})"}


def cheaper_split(model, data, s: str, i: int) -> dict | None:
    """Where site s's 2-tier Clos (mode i) was searched at the grid's one split: the cheapest split within
    max_oversubscription (within the design's own oversubscription where a training objective's step or the
    workload's all-reduce limit reads it) at the site's endpoint count e that draws no more power, when it costs
    less than the design's. Both priced alike (models.splits.option_figures: leaves, spines, the uplinks' items and
    fiber plant, per plane, times the planes and rails), the panels its extra patched links may add counted against
    it: {down_ports, up_ports, spines, saving_usd}, the spines per plane (per rail of a rail-only fabric). What
    searching every split would save there at the least, at this node count; the design is optimal over the grid all
    the same."""
    mode = data.modes[i]
    if mode.splits or mode.tiers != 2 or mode.topology == "leaf_mesh":
        return None
    leaf = switch_rows(data.inputs)[mode.leaf]
    limit = float(data.inputs.project["max_oversubscription"])
    if data.workload is not None or data.inputs.project.get("objective") in TRAINING_OBJECTIVES:
        limit = mode.d1 * mode.g0 / (mode.u1 * mode.g1)  # the step and the all-reduce limit read the bandwidth
    splits = every_split(tuple(leaf["port_modes"].items()), mode.g0, mode.g1, limit, switch_cages(leaf))
    options = ((mode.d1, mode.u1, round(pyo.value(spine_count(model, s, i)))),) + static_options(splits)
    shape = split_figures(data.inputs, mode, data.rails)
    count = round(pyo.value(endpoints(model, s, i)))
    price, power, patched = (x[:, 0] for x in option_figures(options, shape, [count]))
    cost = np.where(np.isfinite(price) & (power <= power[0] * (1 + 1e-12)), price + shape.panels(patched - patched[0]),
                    np.inf)
    best = int(np.argmin(cost))
    saving = float(price[0] - cost[best]) * data.multiplier[i]
    if saving < 0.5:
        return None
    down, up, spines = options[best]
    return {"down_ports": down, "up_ports": up, "spines": spines, "saving_usd": saving}


def split_notes(sites: list[dict]) -> list[str]:
    """A note for each open site a split outside the grid searched would make cheaper (cheaper_split)."""
    return [f"site {x['name']}: leaves of {c['down_ports']} down / {c['up_ports']} up ports on {c['spines']} "
            f"spine(s) a network, a split the grid searched here does not hold (design space: Fabric modes), would "
            f"cost {money(c['saving_usd'])} less at its {x['nodes']:,} nodes and draw no more power"
            for x in sites if (c := x.get("cheaper_split"))]
