"""Write the example planner workbooks in data/examples/ (run: make examples).

- default.xlsx: the embedded default: four candidate sites (a campus pair 2 km apart on a 864-pair
  cable, one ~100 km away, one ~600 km away), a training job of 50k GPUs whose power needs more than one site, under
  min_latency: a budget that holds the design and its spares, a fabric-latency limit, and dci_ratio,
  non-blocking fabrics and an RTT limit that bind (its --explain tables: README, Explaining a design).
- superpod-h100.xlsx: one site, the published DGX SuperPOD H100 4-SU case (127 nodes, QM9700 only,
  rail-optimized, non-blocking): 32 leaf and 16 spine switches.
- scale-across.xlsx: three 100 MW-class sites hundreds of km apart.
- training-moe.xlsx: one hall training a mixture of experts whose all-to-all crosses the fabric, objective
  min_cost_per_run over 2,048-4,096 GPUs, with cloud offers: the network's share of the run's cost and build or rent.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from designer.inputs.workbook import load_catalog  # noqa: E402
from designer.inputs.writer import write_workbook  # noqa: E402

OUT = ROOT / "data" / "examples"


def site(name, power_mw, max_nodes, fixed, power_cost, energy, lat, lon, pue=1.25, status="candidate"):
    return {"name": name, "power_mw": power_mw, "pue": pue, "max_nodes": max_nodes, "fixed_cost_usd": fixed,
            "power_cost_usd_per_mw": power_cost, "energy_usd_per_mwh": energy, "lat": lat, "lon": lon,
            "status": status}


def route(a, b, km, pairs, cost_per_pair_km, spacing=80):
    return {"site_a": a, "site_b": b, "distance_km": km, "fiber_pairs": pairs,
            "fiber_cost_usd_per_pair_km": cost_per_pair_km, "amplifier_spacing_km": spacing}


def default_workbook() -> dict:
    return {
        "project": {
            "name": "default", "gpus_required": 50_000, "node_type": "DGX B200",
            "budget_usd": 4_280_000_000, "objective": "min_latency", "max_fabric_latency_us": 4.0,
            "max_site_rtt_ms": 8.0, "max_oversubscription": 1, "dci_ratio": 0.125,
        },
        "sites": [
            site("ashburn-a", 55, 4000, 20e6, 9e6, 75, 39.04, -77.49, pue=1.2),
            site("ashburn-b", 35, 2500, 15e6, 9e6, 75, 39.02, -77.47, pue=1.25),
            site("richmond", 60, 4500, 25e6, 8e6, 65, 37.54, -77.44, pue=1.3),
            site("atlanta", 70, 5000, 30e6, 7e6, 55, 33.75, -84.39, pue=1.15),
        ],
        "routes": [
            route("ashburn-a", "ashburn-b", 2, 1728, 60),  # a 3,456-fiber campus cable
            route("ashburn-a", "richmond", 110, 16, 25),
            route("ashburn-b", "richmond", 112, 16, 25),
            route("richmond", "atlanta", 620, 16, 20),
            route("ashburn-a", "atlanta", 860, 8, 20),
        ],
        "workload": {"model_params_billion": 70, "bytes_per_gradient": 2, "step_compute_ms": 6000,
                     "grad_accum_steps": 8, "max_comm_fraction": 0.25,
                     # a Llama-3-70B-like run (Meta 2024: 80 layers, width 8,192, 15T tokens) split tp 8 x pp 5
                     "training_tokens": 15e12, "global_batch_tokens": 5000 * 4096, "seq_len": 4096, "layers": 80,
                     "hidden_size": 8192, "tp": 8, "pp": 5},
    }


def superpod_h100_workbook() -> dict:
    catalog = load_catalog()
    return {
        "project": {"name": "superpod-h100", "gpus_required": 127 * 8, "node_type": "DGX H100",
                    "topologies_allowed": "rail_optimized", "protocols_allowed": "infiniband",
                    "max_oversubscription": 1},
        "sites": [site("superpod", 5, 127, 0, 10e6, 80, 37.37, -121.96, pue=1.3, status="required")],
        "switches": catalog["switches"].loc[["QM9700"]],
    }


def scale_across_workbook() -> dict:
    return {
        "project": {"name": "scale-across", "gpus_required": 150_000, "node_type": "DGX B300",
                    "max_oversubscription": 2, "dci_ratio": 0.02, "max_site_rtt_ms": 12.0,
                    "horizon_years": 5, "protocols_allowed": "rocev2,ethernet_tcp"},
        "sites": [
            site("dallas", 130, 9000, 40e6, 7e6, 45, 32.78, -96.80, pue=1.2),
            site("abilene", 150, 10000, 35e6, 6e6, 35, 32.45, -99.73, pue=1.15),
            site("houston", 110, 8000, 40e6, 7.5e6, 50, 29.76, -95.37, pue=1.25),
            site("oklahoma", 100, 7000, 30e6, 6.5e6, 40, 35.47, -97.52, pue=1.2),
        ],
        "routes": [
            route("dallas", "abilene", 290, 64, 15),
            route("dallas", "houston", 385, 64, 15),
            route("dallas", "oklahoma", 330, 64, 15),
            route("abilene", "houston", 560, 32, 12),
        ],
    }


def training_moe_workbook() -> dict:
    """One 4,096-GPU H100 hall training a DeepSeek-V3-like mixture of experts (DeepSeek-AI 2024: 671B parameters,
    37B active, 61 layers, width 7,168, 8 experts a token, 14.8T tokens) with experts spread over 64 GPUs: the
    expert all-to-all crosses the fabric every layer, so the protocol and topology show in the run's cost; the
    objective min_cost_per_run chooses 2,048 or 4,096 GPUs with the fabric. Cloud offers to compare with (prices
    [E] estimates of 2025 list prices)."""
    return {
        "project": {"name": "training-moe", "gpus_required": 2048, "gpus_max": 4096, "node_type": "DGX H100",
                    "objective": "min_cost_per_run", "max_oversubscription": 2},
        "sites": [site("hall", 12, 600, 5e6, 9e6, 70, 40.71, -74.01, pue=1.3, status="required")],
        "workload": {"model_params_billion": 671, "active_params_billion": 37, "training_tokens": 14.8e12,
                     "global_batch_tokens": 4096 * 4096, "seq_len": 4096, "layers": 61, "hidden_size": 7168,
                     "tp": 1, "pp": 1, "ep": 64, "experts_per_token": 8, "overlap": 0.5},
        "cloud": [
            {"name": "cloud-h100-infiniband", "node_type": "DGX H100", "usd_per_gpu_hour": 2.99, "gbps_per_gpu": 400,
             "protocol": "infiniband", "hops": 3, "source": "[E] estimate of 2025 on-demand H100 list prices"},
            {"name": "cloud-h100-ethernet", "node_type": "DGX H100", "usd_per_gpu_hour": 2.2, "gbps_per_gpu": 100,
             "protocol": "ethernet_tcp", "hops": 3, "max_gpus": 8192,
             "source": "[E] estimate: a cheaper offer on a 100G TCP network"},
        ],
    }


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in (("default", default_workbook), ("superpod-h100", superpod_h100_workbook),
                        ("scale-across", scale_across_workbook), ("training-moe", training_moe_workbook)):
        path = write_workbook(OUT / f"{name}.xlsx", build())
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
