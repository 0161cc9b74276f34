"""The design space a solve searched (design.json ``modes.space``): what "optimal" is optimal over.

A design is proven optimal over the fabrics the model can express, and some fabric choices are searched over a
grid, not over every value (README, Model notes). A planner checking the design against a vendor's needs to know
which: a 40/20 leaf split striped over 2 spines is a design the grid's levels cannot express.
"""

from __future__ import annotations

from designer.inputs.schema import TRAINING_OBJECTIVES
from designer.solve.prepare import every_split_applies
from models.modes import oversubscription_levels
from models.network import site_list


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
