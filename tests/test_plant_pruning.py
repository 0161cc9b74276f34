"""The pruning of cable options (models.modes.choose_cables) and of modes (models.dominance) counts the fiber plant
a transceiver link takes (tests/test_fiber_plant.py's catalog: jumper $10, trunk $20, 48-port panel $100;
cable_in_rack_m 2): an AOC dearer than a transceiver pair per link may be the cheaper choice once the plant is
counted."""

from __future__ import annotations

import pandas as pd
import pytest

from models.modes import choose_cables
from tests.test_fiber_plant import PLANT, book
from tests.test_model import DAC, SR, design, link_counts, opened

PLANT_ROWS = {row["role"]: row for row in PLANT if row["name"] != "panel96"}


def aoc(price: float) -> dict:
    """A 400G AOC reaching 30 m drawing 20 W, as much as a transceiver pair (2 x 10 W)."""
    return dict(DAC, name="aoc400", kind="aoc", reach_m=30, power_w=20, price_usd=price)


def kept(price: float, length_m: float, plant: dict) -> list[str]:
    optics = pd.DataFrame([SR, aoc(price)]).set_index("name")
    return sorted(c.item for c in choose_cables(optics, "node_leaf", 400, length_m, (400,), plant, 2.0))


def test_cable_options_count_the_plant():
    """At 10 m a transceiver pair ($1,000 a link) adds $40 to $140 of plant: two jumpers and a trunk, and up to a
    whole panel for its two ports (ceil(2 / 48) = 1). An AOC at $1,100 is kept (1,100 < 1,140) as is the pair
    (1,040 < 1,100); at $1,030 the AOC beats the pair (1,030 < 1,040); without plant the pair beats it
    (1,000 < 1,100); within the rack a jumper each: $1,010 against $1,010, neither beats the other."""
    assert kept(1_100, 10, PLANT_ROWS) == ["aoc400", "sr400"]
    assert kept(1_030, 10, PLANT_ROWS) == ["aoc400"]
    assert kept(1_100, 10, {}) == ["sr400"]
    assert kept(1_010, 2, PLANT_ROWS) == ["aoc400", "sr400"]


def test_solve_picks_the_aoc_the_plant_makes_cheaper(tmp_path):
    """4 nodes, 32 node links of 10 m on one switch. Transceivers: $506,190 (tests/test_fiber_plant.py: 64 modules
    $32,000 and plant $1,480). AOCs at $1,045: no plant, the same 640 W, so 504,710 - 32,000 + 32 x 1,045 =
    $506,150. The transceiver mode's least cost (32,000 + $1,280 of jumpers and trunks) is below the AOC mode's
    $33,440: it dominates only if the 2 panels its 64 patched ports need ($200) are left out."""
    sol = design(tmp_path, {**book(), "optics": [DAC, SR, aoc(1_045)]})
    assert link_counts(opened(sol)["s1"])["node_leaf"] == (32, "aoc400", 32)
    assert "fiber_plant" not in {line["category"] for line in sol["bom"]}
    assert sol["totals"]["capex_usd"] == pytest.approx(506_150, abs=1e-6)


@pytest.mark.parametrize("width", [0, 1, 2, 3, 7, 8, 63, 64, 999, 5000])
def test_window_minima_match_the_definition(width):
    """models.dominance.window_min (a sparse table) against its definition, min(values[max(0, e - width)..e]),
    on random values with infinite stretches (modes beyond their size)."""
    import numpy as np

    from models.dominance import window_min

    rng = np.random.default_rng(width)
    values = rng.normal(size=1500)
    values[rng.random(1500) < 0.1] = np.inf
    want = np.array([values[max(0, e - width):e + 1].min() for e in range(len(values))])
    assert np.array_equal(window_min(values, width), want)


def test_every_dropped_mode_leads_to_a_kept_one():
    """models.dominance.prune drops a mode only for one that is kept or itself dropped for one further on
    (dominance is transitive): following the dominating modes from any dropped mode ends at a kept one, on the
    default example's fabrics (cable lengths per group of sites, DCI attachments)."""
    from pathlib import Path

    from designer.inputs.workbook import load_inputs
    from designer.solve.prepare import prepare_data
    from models.dominance import prune
    from models.modes import enumerate_modes

    inputs = load_inputs(Path(__file__).resolve().parents[1] / "data" / "examples" / "default.xlsx")
    data = prepare_data(inputs)
    survivors, dropped = prune(enumerate_modes(inputs).modes, inputs,
                               {s: data.site_node_limit(s) for s in data.sites})
    kept = {mode.id for mode in survivors}
    assert dropped and kept and not kept & set(dropped)
    for mode_id in dropped:
        seen = set()
        while mode_id in dropped:
            assert mode_id not in seen, "a cycle of dominating modes"
            seen.add(mode_id)
            mode_id = dropped[mode_id]
        assert mode_id in kept


def test_modes_sampled_together_cost_what_each_costs_alone():
    """The dominance screen's figures for modes of one structure, computed together (models.dominance.sampled),
    are cost_power's for each mode alone to the last bit (the screen compares them exactly: a rounding apart could
    keep a dominated mode or drop a dominator), on the scale-across example's enumerated modes."""
    from pathlib import Path

    import numpy as np

    from designer.inputs.workbook import load_inputs
    from models import dominance
    from models.modes import enumerate_modes, plant_rows, switch_rows

    inputs = load_inputs(Path(__file__).resolve().parents[1] / "data" / "examples" / "scale-across.xlsx")
    modes = enumerate_modes(inputs).modes[:3000]
    node = inputs.node_types.loc[inputs.project["node_type"]]
    nics, planes = int(node["nics_per_node"]), int(node["planes"])
    rails, sw = nics // planes, switch_rows(inputs)
    plant = ({role: row.to_dict() for role, row in plant_rows(inputs).items()},
             float(inputs.project.get("cable_in_rack_m") or 0.0))
    n = np.unique(np.linspace(1, 5000, 48).astype(np.int64))
    alike: dict = {}
    for i, mode in enumerate(modes):
        alike.setdefault(dominance.module_structure(mode, planes * (rails if mode.topology == "rail_only" else 1)),
                         []).append(i)
    assert max(len(members) for members in alike.values()) > 1  # groups of more than one mode are tried
    together, alone = {}, {}
    for members in alike.values():
        mult = planes * (rails if modes[members[0]].topology == "rail_only" else 1)
        cost, power = dominance.sampled(modes, members, n, sw, nics, rails, mult, together, plant)
        for row, i in enumerate(members):
            c, p, _ = dominance.cost_power(modes[i], n, sw, nics, rails, mult, alone, "all", plant)
            assert np.array_equal(cost[row], c) and np.array_equal(power[row], p)
