"""Fabric-mode enumeration (models.modes): port splits, size limits, fat-tree formulas, cables, filters.

Workbooks use the small catalog of tests/test_model.py (64 x 400G ``sw64``, 8-NIC ``n8``), so the
numbers below follow from those figures.
"""

from __future__ import annotations

import pytest
from test_model import DAC, NODE, SR, SW64, tables

from designer.inputs.workbook import load_inputs
from designer.inputs.writer import write_workbook
from models.modes import (
    OVERSUBSCRIPTION_LEVELS,
    Cable,
    choose_cables,
    enumerate_modes,
    split_ports,
)


def modes_of(tmp_path, book: dict):
    return enumerate_modes(load_inputs(write_workbook(tmp_path / "plan.xlsx", book)))


def by_variant(modeset) -> dict:
    """(topology, tiers) -> the one mode of that variant (the test catalogs leave one each), and for the
    2-level leaf mesh, which has one split per mesh-size limit, the largest mesh."""
    out: dict = {}
    for mode in modeset.modes:
        key = (mode.topology, mode.tiers)
        if key == ("leaf_mesh", 2):
            if key not in out or mode.node_cap > out[key].node_cap:
                out[key] = mode
            continue
        assert key not in out, f"more than one mode for {mode.topology}/{mode.tiers}"
        out[key] = mode
    return out


@pytest.mark.parametrize("level, expected", [
    (1.0, (32, 32)),  # non-blocking: half down, half up
    (1.5, (38, 26)),  # 38 <= 1.5 x 26 = 39, 38 + 26 = 64
    (2.0, (42, 21)),  # 42 <= 2 x 21, 63 ports used (43 down would need 22 up: 65)
    (3.0, (48, 16)),
    (4.0, (51, 13)),
    (5.0, (53, 11)),
    (7.0, (56, 8)),
])
def test_split_ports_one_speed(level, expected):
    assert split_ports(((400, 64),), 400, 400, level) == expected


TH5 = ((800, 64), (400, 128), (200, 256))  # 64 cages of 800G


def test_split_ports_is_a_bandwidth_pool():
    """A 51.2T switch: 400G down and 800G up share the pool; non-blocking gives 64 x 400 + 32 x 800."""
    assert split_ports(TH5, 400, 800, 1.0) == (64, 32)
    assert split_ports(TH5, 200, 800, 1.0) == (128, 32)
    assert split_ports(TH5, 400, 800, 3.0) == (96, 16)


def test_split_ports_within_the_cages():
    """400G down (2 a cage) and 200G up (4 a cage) at 2:1: the pool allows 85 + 85 (85 x 400 + 85 x 200 =
    51,000 Gb/s), but that takes 43 + 22 = 65 of the 64 cages; 84 + 84 takes 42 + 21."""
    assert split_ports(TH5, 400, 200, 2.0) == (84, 84)
    assert split_ports(((800, 2), (400, 4), (200, 8)), 400, 200, 3.0) == (2, 2)  # 3 + 2 would take 3 cages of 2


@pytest.mark.parametrize("k", [4, 8, 16, 32, 64])
def test_fat_tree_formulas(tmp_path, k):
    """Al-Fares with k-port switches and one-NIC hosts, non-blocking: a 2-tier Clos holds k^2/2 hosts
    (k leaves, k/2 spines); a 3-tier fat tree holds k^3/4 hosts with k^2/2 edge, k^2/2 aggregation
    and k^2/4 core switches (5k^2/4 in all)."""
    host = dict(NODE, name="host", gpus_per_node=1, nics_per_node=1)
    switch = dict(SW64, model="swk", port_modes=f"{k}x400")
    modes = by_variant(modes_of(tmp_path, tables(k, node=host, switches=(switch,),
                                                 topologies_allowed="leaf_spine,fat_tree_3")))
    two, three = modes["leaf_spine", 2], modes["fat_tree_3", 3]
    assert (two.d1, two.u1, two.spine_ports) == (k // 2, k // 2, k)
    assert two.node_cap == k * k // 2
    assert (three.d1, three.u1, three.d2, three.u2, three.core_ports) == (k // 2,) * 4 + (k,)
    assert three.node_cap == k ** 3 // 4
    hosts = three.node_cap
    edge = hosts // three.d1
    agg = three.u1 * edge // three.d2
    core = three.u2 * agg // three.core_ports
    assert (edge, agg, core) == (k * k // 2, k * k // 2, k * k // 4)
    assert edge + agg + core == 5 * k * k // 4
    leaves = two.node_cap // two.d1
    assert (leaves, two.u1 * leaves // two.spine_ports) == (k, k // 2)
    assert two.oversubscription == three.oversubscription == 1


def test_size_limits_per_topology(tmp_path):
    """node_cap with 8 rails and 32/32 leaves of 64 ports:
    leaf_spine: 64 leaves (spine ports) x 32 / 8 = 256 nodes; fat_tree_3: 64 x 32 leaves x 32 / 8 = 8192;
    rail_optimized 2-tier: 64 // 8 = 8 SUs of 32 = 256; 3-tier: 2048 leaves // 8 = 256 SUs = 8192;
    rail_only: 64 nodes on one switch per rail, 64 x 32 = 2048 as a 2-tier Clos per rail;
    leaf_mesh: 64 // 8 = 8 nodes on one switch; a mesh is split for every size, and the largest non-blocking
    one is 43 leaves of 42 mesh ports and 21 down (21 <= 42 x 43 / (2 x 42), the bisection share): 903 NICs,
    43 x 21 // 8 = 112 nodes (45 leaves of 44 and 20 hold as many; the old grid's 48 leaves, 96)."""
    modes = by_variant(modes_of(tmp_path, tables(8)))
    assert {key: m.node_cap for key, m in modes.items()} == {
        ("leaf_spine", 2): 256, ("fat_tree_3", 3): 8192, ("rail_optimized", 2): 256,
        ("rail_optimized", 3): 8192, ("rail_only", 1): 64, ("rail_only", 2): 2048, ("leaf_mesh", 1): 8,
        ("leaf_mesh", 2): 112}
    assert {key: m.hops for key, m in modes.items()} == {
        ("leaf_spine", 2): 3, ("fat_tree_3", 3): 5, ("rail_optimized", 2): 3, ("rail_optimized", 3): 5,
        ("rail_only", 1): 1, ("rail_only", 2): 3, ("leaf_mesh", 1): 1, ("leaf_mesh", 2): 2}
    assert modes["leaf_mesh", 1].d1 == 64 and (modes["leaf_mesh", 2].d1, modes["leaf_mesh", 2].u1) == (21, 42)


def test_planes_raise_the_size_limit(tmp_path):
    """16 NICs as one plane: a 2-tier Clos holds 64 x 32 / 16 = 128 nodes; as 2 planes of 8 rails,
    each plane holds 256 nodes (so planes keep a fabric in fewer tiers)."""
    one = by_variant(modes_of(tmp_path, tables(8, node=dict(NODE, nics_per_node=16, planes=1))))
    two = by_variant(modes_of(tmp_path, tables(8, node=dict(NODE, nics_per_node=16, planes=2))))
    assert one["leaf_spine", 2].node_cap == 128
    assert two["leaf_spine", 2].node_cap == 256


def test_oversubscription_levels_up_to_the_limit(tmp_path):
    """The standard levels up to max_oversubscription, and the limit itself; never above it."""
    for limit, expected in [(1, {1.0}), (3, {1.0, 1.5, 2.0, 3.0}), (2.5, {1.0, 1.5, 2.0, 2.5}),
                            (7, set(OVERSUBSCRIPTION_LEVELS))]:
        modeset = modes_of(tmp_path, tables(8, topologies_allowed="leaf_spine", max_oversubscription=limit))
        assert {m.level1 for m in modeset.modes} == expected, limit
        assert all(m.oversubscription <= limit + 1e-9 for m in modeset.modes)
        assert all(m.d1 * m.g0 <= m.level1 * m.u1 * m.g1 + 1e-9 for m in modeset.modes)


def test_uplinks_at_every_speed_both_switches_have(tmp_path):
    """A tier's uplinks may run at any speed its two switches share, slower than its downlinks too (four
    200G uplinks carry what two 400G ones do); the split holds the oversubscription in bandwidth."""
    eth = dict(SW64, model="eth", family="ethernet", port_modes="64x800,128x400,256x200")
    proto = dict(name="rocev2", switch_family="ethernet", nic_latency_ns=800, efficiency=0.9, lossless=True,
                 jitter_rank=2, source="test")
    optics = [dict(DAC, name=f"dac{g}", gbps=g, links_per_module=800 // g) for g in (200, 400, 800)] + [
        dict(SR, name=f"sr{g}", gbps=g, links_per_module=800 // g) for g in (200, 400, 800)]  # fill 800G cages
    book = tables(8, switches=(eth,), optics=optics, protocols_allowed="rocev2", max_oversubscription=2)
    book["protocols"] = [proto]
    modeset = modes_of(tmp_path, book)
    assert {(m.g1, m.g2) for m in modeset.modes if m.tiers == 3} >= {(400, 400), (400, 800), (800, 800)}
    assert {m.g1 for m in modeset.modes if m.tiers == 2 and m.topology != "leaf_mesh"} >= {200, 400, 800}
    for m in modeset.modes:
        assert m.g0 == 400
        if m.u1:
            assert m.d1 * m.g0 <= 2 * m.u1 * (m.g1 or m.g0) + 1e-9  # max_oversubscription 2, in bandwidth


def test_cables_pareto_in_price_and_power():
    """In 800G cages at 400G, per link: twin $800 / 15 W at best (one twin module serves two link ends) and
    $1,600 / 30 W at worst, the 1:2 splitter AOC $500 / 8 W at best and $1,000 / 16 W at worst: neither beats
    the other; the single-link sr400, aoc100 and dac400 leave a lane dark and are not offered. Between two
    switches the splitter's legs would not fill a cage: the twin alone. In 400G cages sr400 is $1,000 / 20 W (two
    modules), beaten by aoc100 ($700 / 16 W); the DAC is out of reach at 50 m."""
    import pandas as pd

    rows = [DAC, SR, dict(SR, name="twin", price_usd=800, power_w=15, links_per_module=2),
            dict(DAC, name="split", kind="aoc", reach_m=100, price_usd=1000, power_w=16, links_per_module=2),
            dict(DAC, name="aoc", kind="aoc", reach_m=30, price_usd=700, power_w=16),
            dict(DAC, name="aoc100", kind="aoc", reach_m=100, price_usd=700, power_w=16)]
    optics = pd.DataFrame(rows).set_index("name")

    def picked(tier, gbps, length, cages):
        return {c.item: (c.unit_price * c.modules_per_link, c.unit_power_w * c.modules_per_link)
                for c in choose_cables(optics, tier, gbps, length, cages)}

    assert picked("node_leaf", 400, 50, (800,)) == {"twin": (800, 15), "split": (500, 8)}
    assert picked("leaf_spine", 400, 50, (800, 800)) == {"twin": (800, 15)}
    assert picked("leaf_spine", 400, 50, (400, 400)) == {"aoc100": (700, 16)}
    assert picked("leaf_spine", 400, 50, (400, 800)) == {}  # no item fills both ends' cages
    assert [c.item for c in choose_cables(optics, "node_leaf", 400, 3, (400,))] == ["dac400"]
    assert choose_cables(optics, "spine_core", 800, 3, (800, 800)) == []


@pytest.mark.parametrize("kind, links, expected", [("dac", 1, 1.0), ("aoc", 1, 1.0), ("transceiver", 1, 2.0),
                                                   ("transceiver", 2, 1.0), ("transceiver", 4, 0.5),
                                                   ("dac", 2, 0.5), ("aoc", 4, 0.25)])
def test_items_per_link(kind, links, expected):
    assert Cable("leaf_spine", 400, 50, "x", kind, links, 1.0, 1.0).modules_per_link == expected


def test_filter_reasons_are_kept(tmp_path):
    """Every rejected combination is counted under its reason, with an example."""
    book = tables(8, protocols_allowed="infiniband,rocev2", topologies_allowed="leaf_spine,rail_only",
                  max_fabric_latency_us=1.5)
    book["protocols"].append(dict(name="rocev2", switch_family="ethernet", nic_latency_ns=800, efficiency=0.9,
                                  lossless=True, jitter_rank=2, source="test"))
    modeset = modes_of(tmp_path, book)
    summary = modeset.summary()
    # 5 of the 8 topology variants are not allowed; rocev2 has no switch; of the 3 infiniband modes
    # rail_only 1-tier (1.43 us) is kept, leaf_spine (1.83 us) and rail_only 2-tier (2.13 us) are too slow
    assert [(m.topology, m.tiers) for m in modeset.modes] == [("rail_only", 1)]
    assert summary["filtered"] == {
        "topology not in topologies_allowed": 5,
        "no ethernet switch with role leaf for protocol rocev2": 3,
        "latency above max_fabric_latency_us": 2,
    }
    assert summary["enumerated"] == 11 and summary["kept"] == 1
    assert {e["reason"] for e in summary["examples"]} == set(summary["filtered"])


def test_leaf_without_the_nic_speed_is_rejected(tmp_path):
    slow = dict(SW64, port_modes="128x200")
    modeset = modes_of(tmp_path, tables(8, switches=(slow,), topologies_allowed="leaf_spine"))
    assert modeset.modes == []
    assert modeset.filtered == {"leaf switch has no 400G port mode for the NIC speed": 1,
                                "topology not in topologies_allowed": 7}
