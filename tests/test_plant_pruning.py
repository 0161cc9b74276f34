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
    """The dominance checks' figures for modes of one structure, computed together (models.dominance.sampled: cost,
    power and patched links, of every tier or the switches' alone), are cost_power's for each mode alone to the last
    bit (the checks compare them exactly: a rounding apart could keep a dominated mode or drop a dominator), on the
    scale-across example's enumerated modes."""
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
        for tiers in ("all", "switches"):
            figures = dominance.sampled(modes, members, n, sw, nics, rails, mult, together, plant, tiers)
            for row, i in enumerate(members):
                each = dominance.cost_power(modes[i], n, sw, nics, rails, mult, alone, tiers, plant)
                assert all(np.array_equal(mine[row], theirs) for mine, theirs in zip(figures, each))


@pytest.mark.parametrize("example", ["default", "scale-across"])
def test_a_shadowed_mode_is_dominated_at_every_count(example):
    """models.dominance._shadowed: where a mode shadows another of its module structure (every factor of its
    figures no higher), its cost, power and patched links are the other's or less at every node count, to the last
    bit (cost_power's figures, as the exact check compares them), on an example's enumerated modes (the first 3,000
    of them)."""
    from pathlib import Path

    import numpy as np

    from designer.inputs.workbook import load_inputs
    from models import dominance
    from models.modes import enumerate_modes, switch_rows

    inputs = load_inputs(Path(__file__).resolve().parents[1] / "data" / "examples" / f"{example}.xlsx")
    modes = enumerate_modes(inputs).modes[:3000]
    node = inputs.node_types.loc[inputs.project["node_type"]]
    nics, planes = int(node["nics_per_node"]), int(node["planes"])
    rails, sw, plant = nics // planes, switch_rows(inputs), dominance.plant_of(inputs)
    alike: dict = {}
    for i, mode in enumerate(modes):
        alike.setdefault(dominance.module_structure(mode, planes * (rails if mode.topology == "rail_only" else 1)),
                         []).append(i)
    zeros, n, counts = np.zeros((len(modes), 1)), np.arange(1, 4001, dtype=np.int64), {}
    pairs = 0
    for group in alike.values():
        mult = planes * (rails if modes[group[0]].topology == "rail_only" else 1)
        for b, a in dominance._shadowed(modes, group, np.zeros(len(modes), dtype=int), zeros, sw, plant).items():
            assert a != b and a in group
            figures_a = dominance.cost_power(modes[a], n, sw, nics, rails, mult, counts, "all", plant)
            figures_b = dominance.cost_power(modes[b], n, sw, nics, rails, mult, counts, "all", plant)
            assert all(np.all(x <= y) for x, y in zip(figures_a, figures_b)), (modes[a].id, modes[b].id)
            pairs += 1
    assert pairs > 100


@pytest.mark.parametrize("objective", ["min_cost", "min_latency"])
def test_shadowing_keeps_what_the_exact_checks_alone_keep(monkeypatch, objective):
    """The dominance check with the shadowing pass keeps the very modes it keeps without it (every mode then
    checked exactly against the modes kept), on the default example's 1,079 modes, the worst-case latency a
    criterion or not; most of them are shadowed."""
    from pathlib import Path

    import numpy as np

    from designer.inputs.workbook import load_inputs
    from designer.solve.prepare import prepare_data
    from models import dominance
    from models.modes import enumerate_modes

    inputs = load_inputs(Path(__file__).resolve().parents[1] / "data" / "examples" / "default.xlsx")
    inputs.project["objective"] = objective
    data = prepare_data(inputs)
    modes = enumerate_modes(inputs).modes
    criteria = np.array([[m.latency_us] for m in modes]) if objective == "min_latency" else None
    limits = {s: data.site_node_limit(s) for s in data.sites}
    shadowed = []
    real = dominance._shadowed
    monkeypatch.setattr(dominance, "_shadowed", lambda *a: shadowed.append(real(*a)) or shadowed[-1])
    with_pass, dropped = dominance.prune(modes, inputs, limits, criteria)
    monkeypatch.setattr(dominance, "_shadowed", lambda *a: {})
    without, _ = dominance.prune(modes, inputs, limits, criteria)
    assert [m.id for m in with_pass] == [m.id for m in without] and with_pass
    assert sum(len(s) for s in shadowed) > len(modes) // 2
    assert len(dropped) + len(with_pass) == len(modes)


def test_each_factor_of_a_mode_decides_its_shadow():
    """A mode shadows its copy with one factor of its figures raised (a switch's price or power, a cable tier's item
    price or power, its links patched beyond cable_in_rack_m, a criterion, a site it does not apply at, a smaller
    node limit), and neither shadows the other when one factor is raised and another lowered; a copy alike in
    everything is shadowed by the first; another attachment cable shadows none."""
    from dataclasses import replace
    from pathlib import Path

    import numpy as np

    from designer.inputs.workbook import load_inputs
    from models import dominance
    from models.modes import enumerate_modes, switch_rows

    inputs = load_inputs(Path(__file__).resolve().parents[1] / "data" / "examples" / "default.xlsx")
    mode = next(m for m in enumerate_modes(inputs).modes if m.tiers == 2 and m.cables[1].kind == "transceiver")
    switches, plant = dict(switch_rows(inputs)), dominance.plant_of(inputs)
    mode = replace(mode, cables=tuple(replace(c, length_m=min(c.length_m, plant[1])) for c in mode.cables))  # unpatched
    for name, row in list(switches.items()):
        for what in ("price_usd", "power_w"):
            switches[f"{name} {what}+"] = {**row, what: float(row[what]) + 1}
            switches[f"{name} {what}-"] = {**row, what: float(row[what]) - 1}

    def cable(t, **changed):
        return tuple(replace(c, **changed) if k == t else c for k, c in enumerate(mode.cables))

    def shadows(a, b, fig_a=(), fig_b=(), attach=(0, 0)):
        figures = np.array([[0.0, 0.0, 0.0, *fig_a][-3:], [0.0, 0.0, 0.0, *fig_b][-3:]])
        return dominance._shadowed([a, b], [0, 1], np.array(attach), figures, switches, plant)

    raised = [replace(mode, leaf=f"{mode.leaf} price_usd+"), replace(mode, spine=f"{mode.spine} power_w+"),
              replace(mode, cables=cable(1, unit_price=mode.cables[1].unit_price + 1)),
              replace(mode, cables=cable(0, unit_power_w=mode.cables[0].unit_power_w + 1)),
              replace(mode, cables=cable(1, length_m=plant[1] + 10))]
    for worse in raised:
        assert shadows(mode, worse) == {1: 0} and shadows(worse, mode) == {0: 1}, worse
    mixed = replace(mode, leaf=f"{mode.leaf} price_usd-", cables=cable(1, unit_power_w=mode.cables[1].unit_power_w + 1))
    assert shadows(mode, mixed) == {} and shadows(mixed, mode) == {}
    for fig_b in ((0.0, 0.0, 1e-9), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)):  # a criterion, a smaller limit, a site less
        assert shadows(mode, mode, (), fig_b) == {1: 0} and shadows(mode, mode, fig_b, ()) == {0: 1}
        assert shadows(mode, raised[0], fig_b, ()) == {} and shadows(raised[0], mode, (), fig_b) == {}
    assert shadows(mode, mode) == {1: 0}
    assert shadows(mode, mode, attach=(1, 2)) == {}
