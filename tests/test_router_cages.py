"""DCI routers sized on their cages (models.network.define_dci_routers), the one router-port allocator of
cabling.csv (designer.outputs.cabling.RouterPorts) and the audit's check_router_cages, by hand on the two-site
instance of tests/test_model.py (two_sites: 4 nodes of 8 x 400G NICs a site, one attachment of 8 links at 400G).

The route carries 800G coherent modules (zr800, 3 channels a pair): dci_ratio 0.125 x 8 x 400G x 4 nodes = 1,600
Gb/s -> 2 wavelengths a site, 2 line-side ports at 800G. Two routers of 4 x 800G cages: ``cheap`` runs only 800G,
``dual`` 800G or 2 x 400G a cage. On bandwidth alone, 2 cheap ($40,000: 6,400 Gb/s >= 1,600 + 3,200) would do;
but the 8 fabric-side ports run at the NIC speed, 400G, which only dual has: 4 of its cages (2 a cage). The line
side's 2 cages fit a cheap router: cheap + dual ($70,000) beats 2 dual ($100,000)."""

from __future__ import annotations

import copy
import csv

import pytest

from designer.audit.checks import audit
from designer.errors import Infeasible
from designer.outputs.cabling import write_cabling
from designer.outputs.export import sheets
from tests.test_model import SRC, design, opened, tier_counts, two_sites

ZR800 = dict(name="zr800", gbps=800, reach_km=120, channel_ghz=1600, power_w=15, price_usd=5_000, **SRC)
CHEAP = dict(model="cheap", family="infiniband", port_modes="4x800", buffer_mb=4000, latency_ns=1000, power_w=500,
             price_usd=20_000, roles="dci", **SRC)
DUAL = dict(model="dual", family="infiniband", port_modes="4x800,8x400", buffer_mb=4000, latency_ns=1000,
            power_w=500, price_usd=50_000, roles="dci", **SRC)


def book() -> dict:
    out = two_sites()
    out["coherent"] = [ZR800]
    out["switches"] = [out["switches"][0], CHEAP, DUAL]
    return out


def test_fabric_ports_at_the_nic_speed_take_the_routers_that_run_it(tmp_path):
    sol = design(tmp_path, book())
    assert sol["links"][0]["wavelengths"] == 2
    for s in opened(sol).values():
        assert tier_counts(s)["dci"] == {"cheap": 1, "dual": 1}
        uses = {t["model"]: (t["used_cages"], t["total_cages"], t["cages_by_use"]) for t in s["tiers"]
                if t["tier"] == "dci"}
        assert uses == {"cheap": (2, 4, [{"side": "line", "gbps": 800, "cages": 2}]),
                        "dual": (4, 4, [{"side": "fabric", "gbps": 400, "cages": 4}])}
    assert audit(sol) == []
    racks = sheets(sol)["network_racks"]  # design.xlsx: both routers in one rack of each site's network row
    assert list(racks[racks["site"] == "a"]["devices"]) == ["1 x cheap, 1 x dual"]
    path = tmp_path / "cabling.csv"
    write_cabling(sol, path)
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    ends = [(r["device"], r["port"]) for r in rows if "-dci-" in r["device"]]
    ends += [(r["peer_device"], r["peer_port"]) for r in rows if "-dci-" in r["peer_device"]]
    # a-dci-01 is the cheap router (line side, whole cages), a-dci-02 the dual one (fabric side, 2 lanes a cage)
    assert sorted(p for d, p in ends if d == "a-dci-01") == ["p1", "p2"]
    assert sorted(p for d, p in ends if d == "a-dci-02") == [f"p{c}/{lane}" for c in range(1, 5) for lane in (1, 2)]
    assert len(ends) == len(set(ends)) == 2 * (2 + 8)  # every router port once, at both sites


def test_audit_counts_router_cages(tmp_path):
    sol = design(tmp_path, book())
    broken = copy.deepcopy(sol)
    dual = next(t for t in broken["sites"][0]["tiers"] if t["model"] == "dual")
    dual["cages_by_use"] = [{"side": "fabric", "gbps": 400, "cages": 3}]
    assert "a: 8 fabric-side DCI router ports at 400G, their cages hold 6" in audit(broken)
    cheap = next(t for t in broken["sites"][1]["tiers"] if t["model"] == "cheap")
    cheap["cages_by_use"] = [{"side": "line", "gbps": 800, "cages": 2}, {"side": "fabric", "gbps": 400, "cages": 3}]
    found = audit(broken)
    assert "b: DCI router cheap has no 400G port for its fabric side" in found
    assert "b: 1 DCI router(s) cheap have 4 cages, their ports take 5" in found


def test_no_router_at_the_nic_speed_leaves_the_sites_apart(tmp_path):
    """With only the cheap router (no 400G port) no attachment can join the fabric: the fabric side has no ports and
    no cages (a row of nothing, left out of the model), so the sites cannot be joined. When site a may hold all 8
    nodes, the design is that one site; when the power forces both open, it is infeasible."""
    plan = book()
    plan["switches"] = [plan["switches"][0], CHEAP]
    with pytest.raises(Infeasible):
        design(tmp_path, plan)
    plan["sites"][0]["power_mw"] = 1.0
    sol = design(tmp_path, plan, "one")
    assert [(s["name"], s["nodes"]) for s in opened(sol).values()] == [("a", 8)]
    assert not sol["links"] or not any(lk["wavelengths"] for lk in sol["links"])
    assert audit(sol) == []
