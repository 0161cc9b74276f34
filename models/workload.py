"""Alpha-beta estimate of the gradient all-reduce behind the max_comm_fraction limit, hierarchical across sites.

Inside a site the all-reduce of S bytes over n GPUs runs as NCCL runs it (models.collectives.nccl_all_reduce):
one channel per rail over the n / p scale-up domains of p GPUs, so a GPU sees min(p x B, B_nvlink) with B the
per-GPU fabric bandwidth (a flat ring at B alone is about p times too slow); ring or tree, the faster (no
in-network reduction: the limit is an upper bound). A node type without scaleup_gbps is taken as NVLink never
the bottleneck. Across k sites the ring formula is applied per level, as hierarchical all-reduce does: inside
each site over its n_s GPUs, then across the
k sites over the site's inter-site capacity C_s (each GPU carries its 1/n_s shard):
T_inter = 2(k-1)/k x S / C_s + 2(k-1) x alpha_wan. (A flat ring over all GPUs would pay the WAN
latency 2(n-1) times: minutes per step for any real job.) A step is A micro-batches of
step_compute_ms and one synchronisation: the share is T / (A x compute + T), and the limit f gives
T <= T_max = f / (1 - f) x A x compute.
"""

from __future__ import annotations

import math

from models.collectives import nccl_all_reduce


def parameters(workload: dict, gpus: int) -> dict:
    """S (bytes), T_max and the inputs they come from, for a job of ``gpus`` GPUs."""
    size = float(workload["model_params_billion"]) * 1e9 * float(workload.get("bytes_per_gradient") or 2)
    accum = int(workload.get("grad_accum_steps") or 1)
    compute_s = float(workload["step_compute_ms"]) / 1e3
    frac = float(workload["max_comm_fraction"])
    return {"n_gpus": int(gpus), "bytes": size, "grad_accum_steps": accum, "step_compute_s": compute_s,
            "max_comm_fraction": frac, "t_max_s": frac / (1 - frac) * accum * compute_s}


def per_gpu_gbps(node, efficiency: float, oversubscription: float) -> float:
    """Scale-out goodput per GPU in Gb/s: NIC bandwidth x protocol efficiency / oversubscription."""
    nic = float(node["nics_per_node"]) * float(node["nic_gbps"]) / float(node["gpus_per_node"])
    return nic * efficiency / oversubscription


def intra_s(size_bytes: float, n: int, node, gbps: float, alpha_us: float) -> tuple[float, float]:
    """(bandwidth term, latency term) in seconds of the all-reduce over n GPUs of a site, p = the node type's
    scale-up domain (scaleup_gpus, else gpus_per_node) in each, NVLink at scaleup_gbps and nvlink_latency_ns."""
    if n <= 1:
        return 0.0, 0.0
    p = min(n, int(_given(node.get("scaleup_gpus"), node["gpus_per_node"])))
    nvlink = _given(node.get("scaleup_gbps"), math.inf)
    t = nccl_all_reduce(size_bytes, p, n // p, nvlink, _given(node.get("nvlink_latency_ns"), 300.0) / 1e3, gbps,
                        alpha_us)
    return t.bandwidth_s, t.latency_s


def _given(value, fallback) -> float:
    """A catalog figure, or ``fallback`` where the cell is blank (None, NaN or pandas' NA)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return float(fallback)
    return float(fallback) if math.isnan(number) else number


def inter_coefficient(params: dict, k: int) -> float:
    """Gb/s x s: the inter-site bandwidth term is this / C_s for k open sites."""
    return 2 * (k - 1) / k * params["bytes"] * 8 / 1e9


def comm_fraction(params: dict, total_s: float) -> float:
    compute = params["grad_accum_steps"] * params["step_compute_s"]
    return total_s / (compute + total_s)
