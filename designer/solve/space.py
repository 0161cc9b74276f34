"""The design space a solve searched (design.json ``modes.space``): what "optimal" is optimal over.

A design is proven optimal over the fabrics the model can express, and some fabric choices are searched over a
grid, not over every value (README, Model notes). A planner checking the design against a vendor's needs to know
which: a 40/20 leaf split striped over 2 spines is a design the grid's levels cannot express.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyomo.environ as pyo

from designer.formats import money, split_words
from designer.inputs.schema import TRAINING_OBJECTIVES
from designer.solve.prepare import every_split_applies
from models.dominance import panel_usd, plant_of, three_tier_figures
from models.modes import oversubscription_levels, split_figures, switch_rows, switch_splits, unit_shape
from models.network import endpoints, site_list, spine_count
from models.splits import option_figures, static_options, static_splits, three_tier_options


def design_space(inputs, polished: bool = False) -> list[dict]:
    """One row per fabric choice: ``choice``, what was ``searched``, and ``every`` (whether that is every value a
    planner could give it). ``polished``: the design's splits were then polished at its node counts
    (designer.solve.polish)."""
    limit = float(inputs.project["max_oversubscription"])
    return [split_row(inputs, limit, polished),
            {"choice": "spine count of a 2-tier Clos", "every": False,
             "searched": "each divisor of a leaf's uplinks (uniform striping: every leaf has the same number of links "
                         "to every spine)"},
            {"choice": "uplink speed", "every": True,
             "searched": "every speed both tiers' switches share, slower than the NICs included"},
            {"choice": "leaf mesh size", "every": True,
             "searched": "any number of leaves up to what the mesh's port split keeps non-blocking"}]


def split_row(inputs, limit: float, polished: bool = False) -> dict:
    """The leaf (and aggregation) port split: every split within max_oversubscription, or the grid's levels (and,
    ``polished``, every split at the design's node counts)."""
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
    polish = (f"; then every split within max_oversubscription {limit:g} at the design's own node counts, the rest "
              "of the design as it was (polish)" if polished else "")
    return {"choice": choice, "every": False,
            "searched": f"the oversubscription {named}, each split using every port{polish}; every split within "
                        f"the limit is searched on a workbook of one usable site under the cost objectives ({why})"}


def cheaper_split(model, data, s: str, i: int) -> dict | None:
    """Where site s's Clos (mode i) was searched at the grid's one split: the cheapest split within
    max_oversubscription (within the design's own at each tier where a training objective's step or the workload's
    all-reduce limit reads it) at the site's endpoint count that draws no more power, when it costs less than the
    design's: {down_ports, up_ports (the leaves'), spines (2-tier, per plane: per rail of a rail-only fabric),
    agg_down_ports, agg_up_ports (3-tier), saving_usd}. Both priced alike, as the dominance check prices options
    (leaves, spines or aggregation switches and cores, their links' items and least fiber plant, for every plane
    and rail), the panels its extra patched links may add counted against it. What searching every split would
    save there at the least, at this node count; the design is optimal over the grid all the same."""
    mode = data.modes[i]
    if mode.splits or mode.splits2 or mode.tiers == 1 or mode.topology == "leaf_mesh":
        return None
    leaf_splits, agg_splits = every_split_of(data, mode)
    e = round(pyo.value(endpoints(model, s, i)))
    if mode.tiers == 2:
        options = ((mode.d1, mode.u1, round(pyo.value(spine_count(model, s, i)))),) + static_options(leaf_splits)
        shape = split_figures(data.inputs, mode, data.rails)
        price, power, patched = (x[:, 0] for x in option_figures(options, shape, [e]))  # per plane
        price, more_panels = data.multiplier[i] * price, data.multiplier[i] * shape.panels(patched - patched[0])
        picks = [{"down_ports": d, "up_ports": u, "spines": j, "agg_down_ports": None, "agg_up_ports": None}
                 for d, u, j in options]
    else:
        leaf, aggregation = three_tier_options(tuple((d, u, 0) for d, u in static_splits(leaf_splits)),
                                               static_splits(agg_splits), *unit_shape(mode.topology, data.rails),
                                               mode.core_ports, (mode.cables[1].links_per_module,
                                                                 mode.cables[2].links_per_module), e, e)
        pairs = [((mode.d1, mode.u1), (mode.d2, mode.u2))] + [
            ((d, u), split2) for (d, u, _), split2 in itertools.product(leaf, aggregation)]
        plant = plant_of(data.inputs)
        price, power, patched = three_tier_figures(mode, pairs, e, data.inputs, data.rails, data.multiplier[i],
                                                   plant).T
        more_panels = panel_usd(plant[0], patched - patched[0])
        picks = [{"down_ports": d, "up_ports": u, "spines": None, "agg_down_ports": d2, "agg_up_ports": u2}
                 for (d, u), (d2, u2) in pairs]
    cost = np.where(np.isfinite(price) & (power <= power[0] * (1 + 1e-12)), price + more_panels, np.inf)
    best = int(np.argmin(cost))
    saving = float(price[0] - cost[best])
    return {**picks[best], "saving_usd": saving} if saving >= 0.5 else None


def every_split_of(data, mode) -> tuple[tuple, tuple]:
    """(leaf splits, aggregation splits: () below 3 tiers) of Clos ``mode`` within max_oversubscription, or within
    the mode's own oversubscription at each tier where a training objective's step or the workload's all-reduce
    limit reads it (models.modes.switch_splits)."""
    own = data.workload is not None or data.inputs.project.get("objective") in TRAINING_OBJECTIVES
    limit = float(data.inputs.project["max_oversubscription"])
    switches = switch_rows(data.inputs)
    leaf = switch_splits(switches[mode.leaf], mode.g0, mode.g1, mode.d1 * mode.g0 / (mode.u1 * mode.g1) if own
                         else limit)
    if mode.tiers < 3:
        return leaf, ()
    return leaf, switch_splits(switches[mode.spine], mode.g1, mode.g2,
                               mode.d2 * mode.g1 / (mode.u2 * mode.g2) if own else limit)


def split_notes(sites: list[dict]) -> list[str]:
    """A note for each open site a split outside the grid searched would make cheaper (cheaper_split)."""
    return [f"site {x['name']}: {split_words(c)}, a split the grid searched here does not hold (design space: "
            f"Fabric modes), would cost {money(c['saving_usd'])} less at its {x['nodes']:,} nodes and draw no more "
            "power" for x in sites if (c := x.get("cheaper_split"))]


def polish_notes(sites: list[dict], polish: dict | None) -> list[str]:
    """A note for each open site whose split the polish changed (designer.solve.polish), and its saving."""
    if not polish:
        return []
    return [f"site {x['name']}: the grid's split, {split_words(x['polished_from'])}, polished at its {x['nodes']:,} "
            "nodes to the split shown (every split within the limit searched there)" for x in sites
            if x.get("polished_from")] + [
        f"every split at the design's node counts (polish): {money(polish['saving_usd'])} less than the design "
        "over the grid's splits"]
