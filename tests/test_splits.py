"""models.splits: the leaf splits of a 2-tier Clos between the oversubscription grid's levels, and which of them a
design can need (checked against every split and spine count, by brute force)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.modes import every_split, split_ports
from models.splits import Shape, option_figures, relevant_options, static_options, three_tier_options

P64 = ((400, 64),)


def all_options(splits):
    return [(d, u, j) for d, u in splits for j in range(1, u + 1) if u % j == 0]


def test_every_split_holds_the_grid_split_and_leaves_ports_dark():
    """64 x 400G at 2:1: u up ports take min(2u, 64 - u) down ports; the grid's split (most down, fewest up) is
    42/21, and 40/20 (4 ports dark) is among the splits."""
    splits = every_split(P64, 400, 400, 2.0)
    assert splits[:3] == ((2, 1), (4, 2), (6, 3)) and (40, 20) in splits
    assert all(d == min(2 * u, 64 - u) for d, u in splits)
    assert max(splits, key=lambda s: (s[0], -s[1])) == split_ports(P64, 400, 400, 2.0) == (42, 21)


@pytest.mark.parametrize("level", [1.0, 1.5, 2.0, 3.0])
def test_static_options_drop_only_dominated_ones(level):
    """An option left out has another kept with as many down ports or more, no more spines and no more links from
    a leaf to a spine; no kept option has such another."""
    cand = all_options(every_split(P64, 400, 400, level))
    kept = static_options(every_split(P64, 400, 400, level))

    def beats(a, b):
        return a != b and a[0] >= b[0] and a[2] <= b[2] and a[1] // a[2] <= b[1] // b[2]

    assert set(kept) <= set(cand)
    assert all(any(beats(a, b) for a in kept) for b in set(cand) - set(kept))
    assert not any(beats(a, b) for a in kept for b in kept)


def shape(**kw) -> Shape:
    base = dict(per_endpoint=1, leaves_per_unit=1, spine_ports=64, leaf_usd=20_000, leaf_w=500, spine_usd=20_000,
                spine_w=500, links_per_item=1, cable=True, item_usd=300, item_w=1, plant_usd=0.0, patched=False)
    return Shape(**{**base, **kw})


def test_the_counterexample_needs_one_option():
    """200 one-NIC nodes on 64-port switches at 2:1 (tests/test_oracle.py): 5 leaves of 40/20 on 2 spines; every
    other option needs more leaves, more spines or more links."""
    options = static_options(every_split(P64, 400, 400, 2.0))
    assert relevant_options(options, shape(), 200, 200) == ((40, 20, 2),)
    price, _, _ = option_figures(options, shape(), np.array([200]))
    assert price.min() == 7 * 20_000 + 100 * 300


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([1.0, 1.5, 2.0, 3.0]), st.integers(1, 8), st.integers(1, 4), st.sampled_from([1, 2]),
       st.floats(0, 5_000), st.floats(0, 2_000), st.floats(0, 500), st.integers(1, 400), st.integers(0, 60))
def test_relevant_options_keep_every_needed_figure(level, rails, unit, k, item_usd, spine_w, plant, lo, span):
    """Brute force over every split and spine count: at each endpoint count of a range, the least price, the least
    power at that price, and the least power of any feasible option are each reached by a kept option (an option
    left out is matched or beaten on price with its panels and power)."""
    splits = every_split(P64, 400, 400, level)
    figures = shape(per_endpoint=rails if unit == 1 else 1, leaves_per_unit=unit, links_per_item=k, cable=k == 1,
                    item_usd=item_usd, spine_w=spine_w, plant_usd=plant, patched=plant > 100, panel_usd=1_000,
                    panel_ports=24)
    kept = relevant_options(static_options(splits), figures, lo, lo + span)
    e = np.arange(lo, lo + span + 1)
    every = all_options(splits)
    price, power, _ = option_figures(every, figures, e)
    mine_price, mine_power, _ = option_figures(kept, figures, e) if kept else (np.full((1, len(e)), np.inf),) * 3
    assert np.array_equal(np.isfinite(price).any(axis=0), np.isfinite(mine_price).any(axis=0))
    assert np.allclose(np.nan_to_num(price.min(axis=0), posinf=-1), np.nan_to_num(mine_price.min(axis=0), posinf=-1))
    for c in range(len(e)):
        cheapest = price[:, c] == price[:, c].min()
        if np.isfinite(price[:, c].min()):
            best = mine_price[:, c] == mine_price[:, c].min()
            assert mine_power[best, c].min() <= power[cheapest, c].min() + 1e-9
            assert mine_power[np.isfinite(mine_power[:, c]), c].min() <= power[np.isfinite(power[:, c]), c].min() + 1e-9


def test_option_figures_count_twin_port_modules_per_switch():
    """A leaf of 11 uplinks on 1 spine with 2-link modules: ceil(11 / 2) = 6 at the leaf and 6 at the spine."""
    price, power, patched = option_figures([(52, 11, 1)], shape(links_per_item=2, cable=False, item_usd=1.0,
                                                                leaf_usd=0, spine_usd=0, patched=True),
                                           np.array([48]))
    assert price[0, 0] == 12 and patched[0, 0] == 11
    for d, u, j in itertools.product([52], [11], [11]):  # 11 spines of one link each: a module at each spine end
        assert option_figures([(d, u, j)], shape(links_per_item=2, cable=False, item_usd=1.0, leaf_usd=0,
                                                 spine_usd=0), np.array([48]))[0][0, 0] == 6 + 11


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([1.0, 1.5, 2.0, 3.0]), st.sampled_from([1.0, 2.0]), st.integers(1, 8), st.integers(1, 4),
       st.sampled_from([1, 2]), st.sampled_from([1, 2, 4]), st.lists(st.floats(0, 50_000), min_size=5, max_size=5),
       st.integers(1, 3_000))
def test_three_tier_options_keep_the_cheapest_fabric(level1, level2, rails, unit, k1, k2, prices, e):
    """Brute force over every leaf and aggregation split of 64-port switches (uplinks at 800G over the 400G NICs
    at the aggregation tier's top): for any prices of the three switches and the two tiers' items, the cheapest
    3-tier fabric for e endpoints uses kept options only."""
    leaf = tuple((d, u, 0) for d, u in every_split(P64, 400, 400, level1))
    aggregation = every_split(((800, 32), (400, 64)), 400, 800, level2)
    per_endpoint, per_unit = (1, unit) if unit > 1 else (rails, 1)
    kept, kept2 = three_tier_options(leaf, aggregation, per_endpoint, per_unit, 32, (k1, k2), e, e)

    def cost(d, u, d2, u2):
        leaves = per_unit * -(-per_endpoint * e // d)
        x = leaves * u
        aggs = -(-x // d2)
        cores = -(-aggs * u2 // 32)
        items1 = leaves * -(-u // k1) + -(-x // k1) if k1 > 1 else 2 * x
        items2 = aggs * -(-u2 // k2) + -(-aggs * u2 // k2) if k2 > 1 else 2 * aggs * u2
        return float(np.dot(prices, [leaves, aggs, cores, items1, items2]))

    best = min(cost(d, u, d2, u2) for d, u, _ in leaf for d2, u2 in aggregation)
    assert min(cost(d, u, d2, u2) for d, u, _ in kept for d2, u2 in kept2) == pytest.approx(best)
    assert len(kept) * len(kept2) < len(leaf) * len(aggregation)
