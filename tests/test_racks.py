"""Network racks (designer.outputs.statistics.network_racks, the report's elevations and design.xlsx's network_racks
sheet), worked by hand on site entries as design.json holds them."""

from __future__ import annotations

import matplotlib.pyplot as plt

from designer.outputs import plots
from designer.outputs import statistics as st
from designer.outputs.export import RACK_COLUMNS

SRC = {"source": "test figures"}
SWITCHES = [dict(model="leaf2u", power_w=900, ru=2, **SRC), dict(model="spine4u", power_w=3000, ru=4, **SRC),
            dict(model="router3u", power_w=2000, ru=3, **SRC), dict(model="router2u", power_w=1500, ru=2, **SRC)]


def site(**kw) -> dict:
    entry = {"name": "dc 1", "open": True, "topology": "leaf_spine", "scalable_units": None,
             "layout": {"rack_kw": 40.0, "nodes_per_rack": 2},
             "tiers": [{"tier": "leaf", "model": "leaf2u", "count": 12}, {"tier": "spine", "model": "spine4u", "count": 14},
                       {"tier": "dci", "model": "router2u", "count": 1}, {"tier": "dci", "model": "router3u", "count": 5}]}
    entry.update(kw)
    return entry


def solution(*sites) -> dict:
    return {"sites": list(sites), "inputs": {"switches": SWITCHES}}


def test_spines_and_routers_fill_racks_by_units_and_power():
    """Spines of 4 RU, 3 kW: 10 fill 40 of 42 RU (30 kW; an 11th would take 44 RU), 4 more a second rack.
    Routers: a 2 RU one and five 3 RU ones, 17 RU, 11.5 kW: one rack. The 12 top-of-rack leaves are in node racks."""
    plan = st.network_racks(site(), solution())
    assert [(r["name"], r["tier"], r["devices"], r["ru"], r["kw"]) for r in plan["racks"]] == [
        ("dc-1-net-spine-01", "spine", [["spine4u", 10, 4]], 40, 30.0),
        ("dc-1-net-spine-02", "spine", [["spine4u", 4, 4]], 16, 12.0),
        ("dc-1-net-dci-01", "dci", [["router2u", 1, 2], ["router3u", 5, 3]], 17, 11.5)]
    assert plan["in_node_racks"] == 12 and plan["rack_ru"] == 42


def test_rack_power_limits_before_units():
    """10 kW racks: three 3 kW spines (9 kW) a rack, 14 spines in 5 racks (3, 3, 3, 3, 2)."""
    entry = site(layout={"rack_kw": 10.0, "nodes_per_rack": 1})
    plan = st.network_racks(entry, solution())
    spines = [r["devices"][0][1] for r in plan["racks"] if r["tier"] == "spine"]
    assert spines == [3, 3, 3, 3, 2]
    kinds = st.rack_kinds(plan)
    assert [(k["tier"], k["count"]) for k in kinds] == [("spine", 4), ("spine", 1), ("dci", 1), ("dci", 1)]


def test_rail_leaves_stand_in_their_scalable_units_racks():
    """A rail-optimized design of 3 scalable units and 12 rail leaves: 4 leaves (8 RU) in each unit's network rack,
    named as cabling.csv names them."""
    entry = site(topology="rail_optimized", scalable_units=3, tiers=[{"tier": "leaf", "model": "leaf2u", "count": 12}])
    plan = st.network_racks(entry, solution())
    assert [(r["name"], r["devices"], r["ru"]) for r in plan["racks"]] == [
        (f"dc-1-su{k}-net", [["leaf2u", 4, 2]], 8) for k in (1, 2, 3)]
    assert plan["in_node_racks"] == 0


def test_racks_in_the_workbook_rows_and_the_figure():
    sol = solution(site(), site(name="dc2", open=False))
    rows = st.rack_rows(sol)
    assert [(r["site"], r["rack"], r["devices"], r["ru_used"], r["kw"]) for r in rows] == [
        ("dc 1", "dc-1-net-spine-01", "10 x spine4u", 40, 30.0), ("dc 1", "dc-1-net-spine-02", "4 x spine4u", 16, 12.0),
        ("dc 1", "dc-1-net-dci-01", "1 x router2u, 5 x router3u", 17, 11.5)]
    assert list(rows[0]) == RACK_COLUMNS
    fig = plots.rack_figure(site(), sol)
    assert len(fig.axes) == 3  # one elevation per distinct rack
    # every switch labelled in its rack, the rack units shown once (the racks share them)
    assert [sorted(t.get_text() for t in ax.texts) for ax in fig.axes] == [
        ["spine4u"] * 10, ["spine4u"] * 4, ["router2u"] + ["router3u"] * 5]
    # a box per switch, of its rack units less a gap: 4U spines, then a 2U and five 3U routers
    heights = [[round(p.get_extents().height, 2) for p in ax.collections[0].get_paths()] for ax in fig.axes]
    assert heights == [[3.84] * 10, [3.84] * 4, [1.84] + [2.84] * 5]
    assert [ax.yaxis.get_visible() for ax in fig.axes] == [True, False, False]
    assert fig.axes[1].get_ylim() == fig.axes[0].get_ylim() == (0, 42)
    plt.close(fig)
