"""Alpha-beta estimate of the gradient all-reduce, hierarchical across sites.

Ring all-reduce over n GPUs of S bytes: T = 2(n-1)/n x S / B + 2(n-1) x alpha, with B the slowest
per-GPU bandwidth (bytes/s) and alpha the slowest one-way latency. Across k sites the ring formula is
applied per level, as hierarchical all-reduce does: inside each site over its n_s GPUs, then across the
k sites over the site's inter-site capacity C_s (each GPU carries its 1/n_s shard):
T_inter = 2(k-1)/k x S / C_s + 2(k-1) x alpha_wan. (A flat ring over all GPUs would pay the WAN
latency 2(n-1) times: minutes per step for any real job.) A step is A micro-batches of
step_compute_ms and one synchronisation: the share is T / (A x compute + T), and the limit f gives
T <= T_max = f / (1 - f) x A x compute.
"""

from __future__ import annotations


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


def ring_s(size_bytes: float, n: int, gbps: float, alpha_us: float) -> tuple[float, float]:
    """(bandwidth term, latency term) in seconds of a ring all-reduce over n members."""
    if n <= 1:
        return 0.0, 0.0
    return 2 * (n - 1) / n * size_bytes * 8 / (gbps * 1e9), 2 * (n - 1) * alpha_us / 1e6


def inter_coefficient(params: dict, k: int) -> float:
    """Gb/s x s: the inter-site bandwidth term is this / C_s for k open sites."""
    return 2 * (k - 1) / k * params["bytes"] * 8 / 1e9


def comm_fraction(params: dict, total_s: float) -> float:
    compute = params["grad_accum_steps"] * params["step_compute_s"]
    return total_s / (compute + total_s)
