"""Port splits of a Clos between the oversubscription grid's levels: a 2-tier Clos's leaves (below) and a 3-tier
one's leaves and aggregation switches (three_tier_options).

DESIGN 1/4 chooses a tier's oversubscription within the planner's limit: a leaf of u uplinks at g_up takes at most
d(u) down ports at g_down (d g_down <= limit u g_up, within its bandwidth and cages: models.modes.every_split). Its
u uplinks stripe over j spines (j divides u; k = u / j links from each leaf to each spine), so the P ports of a
spine hold k links from each of at most floor(P / k) leaves. An option (d, u, j) of a mode is one such choice; the
MILP picks one per site (models.network.define_spines). A split that leaves ports dark can be the cheapest: 40 down
and 20 up ports of a 64-port leaf stripe over 2 spines, where the full 42/21 needs 3.

Which options can an optimal design use? Per plane, for e endpoints (a leaf ports an endpoint, b leaves a counted
unit: models.modes.unit_shape), option (d, u, j) has ceil(a e / d) units, b units leaves, j spines, b units u
uplinks and their items (a cable or two modules per link; twin-port modules counted per switch: ceil(u / K) at each
leaf, ceil(b units k / K) at each spine), and holds e only when units <= floor(P j / (u b)). What the rest of the
model reads of them is their price (switches, items, the fiber plant per link), their power and their patched
links (the site's ceil(2 x / P) panels, x its patched links), each the same at every site the mode's cables are
chosen for. So at each e an option is never needed when another feasible option costs no more with the panels its
extra patched links can add (ceil(2 max(0, dx) / P) at most: ceil(a + b) <= ceil(a) + ceil(b)) and draws no more
power (the energy price and the power cap then favour it too); an option needed at no e of a range is left out:
- static_options: (d', j', k') matches or beats (d, j, k) at every e when d' >= d, j' <= j and k' <= k;
- relevant_options: at each e in a range, the options no other feasible one matches or beats (a tie kept once).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

CHUNK = 512  # endpoint counts compared at once


@dataclass(frozen=True)
class Shape:
    """What an option's figures depend on besides (d, u, j): a (leaf ports an endpoint), b (leaves a unit), P
    (spine ports at the uplink speed), the switches' price and power, and the uplinks' item: K links a module,
    cable (one item a link) or transceiver (two), its price and power, the fiber plant a link takes, and whether its
    links are patched (transceivers past cable_in_rack_m) and the price and ports of a panel (0: none)."""

    per_endpoint: int
    leaves_per_unit: int
    spine_ports: int
    leaf_usd: float
    leaf_w: float
    spine_usd: float
    spine_w: float
    links_per_item: int
    cable: bool
    item_usd: float
    item_w: float
    plant_usd: float
    patched: bool
    panel_usd: float = 0.0
    panel_ports: int = 0

    def panels(self, more: np.ndarray) -> np.ndarray:
        """USD of the most panels ``more`` patched links add (panels_usd)."""
        return panels_usd(self.panel_usd, self.panel_ports, more)


def panels_usd(price: float, ports: int, more: np.ndarray) -> np.ndarray:
    """USD of the most panels of ``ports`` ports (at ``price`` each) ``more`` patched links add to a site's
    ceil(2 x / P): ceil(2 max(0, more) / P) (ceil(a + b) <= ceil(a) + ceil(b)); none without panels."""
    if not ports:
        return np.zeros(np.shape(more))
    return price * np.ceil(2 * np.maximum(more, 0) / ports - 1e-9)


@functools.lru_cache(maxsize=4096)
def static_splits(splits: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """The splits no other dominates at every count: none has as many down ports or more and no more up ports (a
    3-tier fabric sizes the tier above by its ports alone)."""
    keep = pareto(np.array([(-d, u) for d, u in splits], dtype=float).reshape(-1, 2))
    return tuple(split for split, k in zip(splits, keep) if k)


def pareto(counts: np.ndarray) -> np.ndarray:
    """Rows (options) of ``counts`` (options x figures, inf where an option cannot serve) that no other row matches
    or beats on every figure (of two alike, the first), and that can serve."""
    feasible = np.isfinite(counts).all(axis=1)
    keep = feasible.copy()
    for o in np.flatnonzero(feasible):
        no_more = np.all(counts <= counts[o], axis=1) & feasible
        fewer = np.any(counts < counts[o], axis=1)
        keep[o] = not np.any(no_more & (fewer | (np.arange(len(counts)) < o)))
    return keep


@functools.lru_cache(maxsize=4096)
def static_options(splits: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int, int], ...]:
    """(d, u, j) for each split (d, u) and each j dividing u, without those another option dominates at every
    endpoint count (more or as many down ports, no more spines, no more links from a leaf to a spine)."""
    cand = [(d, u, j) for d, u in splits for j in range(1, u + 1) if u % j == 0]
    keep = pareto(np.array([(-d, j, u // j) for d, u, j in cand], dtype=float).reshape(-1, 3))
    return tuple(option for option, k in zip(cand, keep) if k)


def option_figures(options, shape: Shape, e: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(price USD, power W, patched links) per plane of each option (rows) at endpoint counts e (columns): leaves,
    spines and the uplinks' items and plant (the module docstring's counts); inf where the option cannot hold e."""
    d, u, j = (np.array(x, dtype=np.int64)[:, None] for x in zip(*options))
    e = np.asarray(e, dtype=np.int64)[None, :]
    b, K = shape.leaves_per_unit, shape.links_per_item
    units = -(-shape.per_endpoint * e // d)
    leaves = b * units
    links = leaves * u
    if K == 1:
        items = (1 if shape.cable else 2) * links
    else:
        items = leaves * -(-u // K) + j * -(-(leaves * (u // j)) // K)
    price = shape.leaf_usd * leaves + shape.spine_usd * j + shape.item_usd * items + shape.plant_usd * links
    power = shape.leaf_w * leaves + shape.spine_w * j + shape.item_w * items
    patched = links.astype(float) if shape.patched else np.zeros(links.shape)
    out = units > shape.spine_ports * j // (u * b)
    return np.where(out, np.inf, price), np.where(out, np.inf, power), np.where(out, np.inf, patched)


@functools.lru_cache(maxsize=65536)
def relevant_options(options: tuple[tuple[int, int, int], ...], shape: Shape, lo: int,
                     hi: int) -> tuple[tuple[int, int, int], ...]:
    """The options (static_options) some endpoint count e in [lo, hi] needs: feasible there and not matched or
    beaten by another feasible option on price (with the panels of its extra patched links) and power (of two
    alike, the first is kept). Each count's cheapest option (least power among the cheapest) is needed; an option it
    does not match or beat is checked against all."""
    if hi < lo or len(options) < 2:
        return options
    needed = np.zeros(len(options), dtype=bool)
    index = np.arange(len(options))
    for start in range(lo, hi + 1, CHUNK):
        e = np.arange(start, min(hi, start + CHUNK - 1) + 1)
        price, power, patched = option_figures(options, shape, e)
        feasible = np.isfinite(price)
        cheapest = np.where(price == price.min(axis=0), power, np.inf)
        star = np.argmin(cheapest, axis=0)  # per column, first of the least power among the cheapest
        cols = np.arange(len(e))
        needed[star[np.isfinite(cheapest[star, cols])]] = True

        def beaten(rows, c, mine):
            """Whether options ``rows`` at column c each match or beat the option of figures ``mine``."""
            cost = price[rows, c] + shape.panels(patched[rows, c] - mine[2])
            return (cost <= mine[0]) & (power[rows, c] <= mine[1]) & (
                (cost < mine[0]) | (power[rows, c] < mine[1]) | (rows < mine[3]))

        own = (price, power, patched, index[:, None])
        lost = beaten(star[None, :], cols[None, :], own)
        for o, c in zip(*np.nonzero(feasible & ~lost & (index[:, None] != star[None, :]))):
            if not needed[o] and not np.any(feasible[:, c] & beaten(index, c, (price[o, c], power[o, c],
                                                                              patched[o, c], o))):
                needed[o] = True
    return tuple(o for o, keep in zip(options, needed) if keep)


@functools.lru_cache(maxsize=4096)
def three_tier_options(leaf: tuple[tuple[int, int, int], ...], aggregation: tuple[tuple[int, int], ...],
                       per_endpoint: int, leaves_per_unit: int, core_ports: int, links_per_item: tuple[int, int],
                       lo: int, hi: int) -> tuple[tuple, tuple]:
    """(leaf options, aggregation splits) of a 3-tier fabric some endpoint count in [lo, hi] needs. Per plane, a
    leaf option (d, u, 0) takes ceil(a e / d) units, b units leaves and x = b units u uplinks (their items: a cable
    or two modules a link, or, K links a module, ceil(u / K) at each leaf and the aggregation ends in aggregate,
    counted by x); the tiers above depend on x alone and grow with it: the leaf options no other matches or beats on
    leaves, x and leaf-end items (b units ceil(u / K)) at some e. An aggregation split (d2, u2) takes
    A = ceil(x / d2) switches, A u2 core links (A ceil(u2 / K2) items at the aggregation ends) and
    ceil(A u2 / P_core) cores: those no other matches or beats at an x of those leaf options."""
    k1, k2 = links_per_item
    d, u, _ = (np.array(c, dtype=np.int64)[:, None] for c in zip(*leaf))
    e = np.arange(lo, hi + 1, dtype=np.int64)[None, :]
    units = -(-per_endpoint * e // d)
    leaves = leaves_per_unit * units
    figures = np.stack([leaves, leaves * u, leaves * -(-u // k1)], axis=2)  # option x e x figure
    keep = np.zeros(len(leaf), dtype=bool)
    uplinks = set()
    for c in range(e.shape[1]):
        mask = pareto(figures[:, c, :].astype(float))
        keep |= mask
        uplinks |= {int(x) for x in (leaves * u)[mask, c]}
    d2, u2 = (np.array(c, dtype=np.int64)[:, None] for c in zip(*aggregation))
    x = np.array(sorted(uplinks), dtype=np.int64)[None, :]
    aggs = -(-x // d2)
    upper = np.stack([aggs, aggs * u2, -(-(aggs * u2) // core_ports), aggs * -(-u2 // k2)], axis=2)
    keep2 = np.zeros(len(aggregation), dtype=bool)
    for c in range(x.shape[1]):
        keep2 |= pareto(upper[:, c, :].astype(float))
    return (tuple(o for o, k in zip(leaf, keep) if k), tuple(o for o, k in zip(aggregation, keep2) if k))
