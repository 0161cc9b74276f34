"""Deterministic benchmark instances: the series of sizes, synthetic planner workbooks, tiny ones for the oracle."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # the repository (designer/tools/bench/ is three below)
DEFAULT_WORKBOOK = ROOT / "data" / "examples" / "default.xlsx"
QUICK_WORKBOOK = ROOT / "data" / "examples" / "superpod-h100.xlsx"
ORACLE_PATH = ROOT / "tests" / "oracle.py"
#: what the brute-force oracle sizes (tests/oracle.py PLANNER_LENGTHS): the planner's cable length per tier, no
#: support networks and no fiber plant
ORACLE_SCOPE = {"cable_m_node_leaf": 3, "cable_m_leaf_spine": 50, "cable_m_spine_core": 150, "cable_m_dci_attach": 60,
                "support_networks": False, "fiber_plant": False}
BARE_IMPORT = "import pyomo.environ, pandas, openpyxl, networkx, highspy"


NODE_TYPE = "DGX B200"


@dataclass(frozen=True)
class Size:
    """One synthetic instance of the size series."""

    sites: int
    gpus: int
    switches: int  # 6: the default catalog's switches
    rtt_ms: float | None = None  # max_site_rtt_ms, None for no limit
    # max_fabric_latency_us: 6 for the default catalog's RTT instances, where at 5 no 3-tier RoCE fabric is left
    # (cable lengths from the floor put them at 5.2 us and up) and the 2-tier ones cap a site at ~3,640 nodes: the
    # 1M-GPU job would need all 35 sites of the largest set within the RTT limit of each other
    fabric_latency_us: float = 5.0

    @property
    def name(self) -> str:
        rtt = f"-rtt{self.rtt_ms:g}" if self.rtt_ms is not None else ""
        lat = f"-lat{self.fabric_latency_us:g}" if self.fabric_latency_us != 5.0 else ""
        return f"s{self.sites:02d}-g{self.gpus}-sw{self.switches}{rtt}{lat}"


@dataclass(frozen=True)
class Plan:
    """What one bench run measures."""

    sizes: tuple[Size, ...]
    oracle_sites: tuple[int, ...]
    time_limit: float  # HiGHS time limit per solve (s)
    oracle_wall: float  # wall-clock cap of one brute-force run (s)
    example: Path  # workbook of part (a)


FULL = Plan(sizes=(Size(2, 1_024, 10), Size(4, 8_192, 20), Size(8, 32_768, 30), Size(16, 131_072, 40),
                   Size(32, 400_000, 50), Size(50, 1_000_000, 60),
                   Size(30, 400_000, 6, rtt_ms=5.0, fabric_latency_us=6.0),
                   Size(50, 1_000_000, 6, rtt_ms=7.5, fabric_latency_us=6.0)),
            oracle_sites=(2, 3, 4, 5, 6), time_limit=120.0, oracle_wall=600.0, example=DEFAULT_WORKBOOK)
QUICK = Plan(sizes=(Size(2, 1_024, 10), Size(3, 2_048, 12)), oracle_sites=(2, 3), time_limit=20.0,
             oracle_wall=20.0, example=QUICK_WORKBOOK)


# --- synthetic instances --------------------------------------------------------------------------

def synth_switches(count: int, seed: int = 7) -> list[dict]:
    """The default switch catalog, then scaled variants of it until there are ``count`` models.

    Variant k of a base model: price x f, power x (1/f) x (0.95..1.05), latency x (0.8..1.3), with f in
    0.8..1.25 from a seeded generator: cheaper variants run hotter, so variants trade cost against power
    and latency rather than dominating their base. Port modes, buffers and roles stay the base's."""
    from designer.inputs.workbook import load_catalog

    frame = load_catalog()["switches"].reset_index()
    base = [{k: v for k, v in r.items() if not (isinstance(v, float) and v != v)} for r in frame.to_dict("records")]
    rng = random.Random(seed)
    out = [dict(r) for r in base][:count]
    k = 0
    while len(out) < count:
        b = base[k % len(base)]
        k += 1
        f = rng.uniform(0.8, 1.25)
        row = dict(b)
        row["model"] = f"{b['model']}-v{k}"
        row["price_usd"] = round(float(b["price_usd"]) * f, -2)
        row["power_w"] = round(float(b["power_w"]) / f * rng.uniform(0.95, 1.05))
        row["latency_ns"] = round(float(b["latency_ns"]) * rng.uniform(0.8, 1.3))
        row["source"] = f"bench variant of {b['model']} (price x{f:.3f}, power and latency scaled)"
        out.append(row)
    return out


def haversine_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h))


def neighbour_routes(names: list[str], coords: list[tuple[float, float]], k: int, rng: random.Random,
                     pairs_for) -> list[dict]:
    """Routes from each site to its k nearest neighbours (by lat/lon distance, fiber 1.25 x the great
    circle), then the shortest links that join the components until every site is reachable."""
    n = len(names)
    dist = {(i, j): 1.25 * haversine_km(coords[i], coords[j]) for i in range(n) for j in range(n) if i < j}
    d = lambda i, j: dist[min(i, j), max(i, j)]  # noqa: E731
    edges = set()
    for i in range(n):
        for j in sorted((j for j in range(n) if j != i), key=lambda j: d(i, j))[:k]:
            edges.add((min(i, j), max(i, j)))
    comp = list(range(n))

    def find(i):
        while comp[i] != i:
            comp[i] = comp[comp[i]]
            i = comp[i]
        return i

    for i, j in edges:
        comp[find(i)] = find(j)
    for i, j in sorted(dist, key=dist.get):
        if find(i) != find(j):
            edges.add((i, j))
            comp[find(i)] = find(j)
    return [{"site_a": names[i], "site_b": names[j], "distance_km": round(d(i, j), 1),
             "fiber_pairs": pairs_for(i, j), "fiber_cost_usd_per_pair_km": round(rng.uniform(10, 60), 1),
             "amplifier_spacing_km": 80} for i, j in sorted(edges)]


def synth_workbook(size: Size) -> dict:
    """Sheets of one size-series instance: ``size.sites`` candidate sites in a ~450 x 600 km region, power
    and space such that no site holds more than 3/4 of the job and all of them about 2.25 times the job, routes
    to the 3 nearest neighbours with fiber for a site's whole inter-site need, ``size.switches`` models."""
    rng = random.Random(1000 * size.sites + size.switches)
    gpn, node_kw = 8, 14.3  # DGX B200 (default catalog)
    job = -(-size.gpus // gpn)
    weights = [rng.uniform(0.6, 1.4) for _ in range(size.sites)]
    scale = size.sites / sum(weights)
    names, coords, sites, cap = [], [], [], []
    for i, w in enumerate(weights):
        # about twice the job in all, and an eighth more for the leaf ports the DCI routers' attachments take
        nodes = max(2, int(min(0.75 * job, 2.25 * job / size.sites * w * scale)))
        pue = round(rng.uniform(1.1, 1.4), 2)
        power_mw = round(nodes * node_kw * 1.12 * pue / 1e3, 3)
        names.append(f"site{i:02d}")
        coords.append((round(rng.uniform(36.0, 40.0), 3), round(rng.uniform(-86.0, -79.0), 3)))
        cap.append(nodes)
        sites.append({"name": names[-1], "power_mw": power_mw, "pue": pue,
                      "max_nodes": int(nodes * rng.uniform(0.9, 1.2)),
                      "fixed_cost_usd": round(power_mw * rng.uniform(0.2, 0.6) * 1e6, -3),
                      "power_cost_usd_per_mw": round(rng.uniform(6e6, 10e6), -3),
                      "energy_usd_per_mwh": round(rng.uniform(40, 80), 1),
                      "lat": coords[-1][0], "lon": coords[-1][1], "status": "candidate"})
    # a pair carries 32 x 800G = 25.6 Tb/s; dci_ratio 0.125 of 8 x 400G per node = 400 Gb/s per node
    pairs_for = lambda i, j: 4 + math.ceil(400 * max(cap[i], cap[j]) / 25_600 * rng.uniform(1.0, 2.0))  # noqa: E731
    routes = neighbour_routes(names, coords, 3, rng, pairs_for) if size.sites > 1 else []
    project = {"name": size.name, "gpus_required": size.gpus, "node_type": NODE_TYPE, "objective": "min_cost",
               "max_fabric_latency_us": size.fabric_latency_us, "max_oversubscription": 1, "dci_ratio": 0.125,
               "max_site_rtt_ms": size.rtt_ms}
    return {"project": project, "sites": sites, "routes": routes, "switches": synth_switches(size.switches)}


def tiny_workbook(n_sites: int) -> dict:
    """A brute-force-sized instance: ``n_sites`` sites of 3..5 small nodes, two small switches and one DCI
    router, one coherent type, routes to the 2 nearest neighbours; the job needs about half of all nodes."""
    rng = random.Random(500 + n_sites)
    src = {"source": "bench oracle instance"}
    names = [f"t{i}" for i in range(n_sites)]
    coords = [(round(rng.uniform(37.0, 39.0), 3), round(rng.uniform(-80.0, -77.0), 3)) for _ in names]
    sites = [{"name": s, "power_mw": round(rng.uniform(0.04, 0.08), 3), "pue": round(rng.uniform(1.1, 1.4), 2),
              "max_nodes": rng.randint(4, 8), "fixed_cost_usd": round(rng.uniform(50e3, 400e3), -3),
              "power_cost_usd_per_mw": round(rng.uniform(1e6, 3e6), -3), "energy_usd_per_mwh": 60,
              "lat": lat, "lon": lon, "status": "candidate"} for s, (lat, lon) in zip(names, coords)]
    routes = neighbour_routes(names, coords, 2, rng, lambda i, j: 1) if n_sites > 1 else []
    node = {"name": "tiny-node", "gpus_per_node": 8, "nics_per_node": 2, "nic_gbps": 400, "planes": 1,
            "node_power_kw": 6.0, "node_price_usd": 150_000, "nvlink_latency_ns": 300, **src}
    switches = [
        {"model": "sw8", "family": "ethernet", "port_modes": "8x400", "buffer_mb": 16, "latency_ns": 400,
         "power_w": 150, "price_usd": 6_000, "roles": "leaf,spine,core", **src},
        {"model": "sw16", "family": "ethernet", "port_modes": "8x800,16x400", "buffer_mb": 32, "latency_ns": 500,
         "power_w": 300, "price_usd": 14_000, "roles": "leaf,spine,core", **src},
        {"model": "dci", "family": "ethernet", "port_modes": "8x800,16x400", "buffer_mb": 4_000, "latency_ns": 2_000,
         "power_w": 600, "price_usd": 40_000, "roles": "dci", **src},
    ]
    optics = [
        {"name": "dac400", "gbps": 400, "kind": "dac", "reach_m": 3, "power_w": 0.1, "price_usd": 150,
         "links_per_module": 1, **src},
        {"name": "dr4-400", "gbps": 400, "kind": "transceiver", "reach_m": 500, "power_w": 8, "price_usd": 600,
         "links_per_module": 1, **src},
        {"name": "dr8-800", "gbps": 800, "kind": "transceiver", "reach_m": 500, "power_w": 15, "price_usd": 1_100,
         "links_per_module": 1, **src},
    ]
    coherent = [{"name": "zr400", "gbps": 400, "reach_km": 1000, "channel_ghz": 75, "power_w": 20,
                 "price_usd": 6_000, **src},
                {"name": "zr800", "gbps": 800, "reach_km": 1000, "channel_ghz": 150, "power_w": 28,
                 "price_usd": 11_000, **src}]
    protocols = [{"name": "rocev2", "switch_family": "ethernet", "nic_latency_ns": 800, "efficiency": 0.9,
                  "lossless": True, "jitter_rank": 2, **src}]
    total = sum(s["max_nodes"] for s in sites)
    largest = max(s["max_nodes"] for s in sites)
    need = max(largest + 1, total // 2) if n_sites > 1 else largest
    project = {"name": f"oracle-{n_sites}", "gpus_required": 8 * need, "node_type": "tiny-node",
               "objective": "min_cost", "max_oversubscription": 1, "dci_ratio": 0.125, **ORACLE_SCOPE}
    return {"project": project, "sites": sites, "routes": routes, "node_types": [node], "switches": switches,
            "optics": optics, "coherent": coherent,
            "amplifiers": [{"name": "amp", "power_w": 100, "price_usd": 10_000, **src}], "protocols": protocols}
