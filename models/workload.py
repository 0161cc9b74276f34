"""Alpha-beta estimate of the gradient all-reduce (ring) and the time it may take.

Ring all-reduce over n GPUs of S bytes: T = 2(n-1)/n x S / B + 2(n-1) x alpha, with B the slowest
per-GPU bandwidth (bytes/s) and alpha the slowest one-way latency. A step is A micro-batches of
step_compute_ms and one synchronisation, so the communication share is T / (A x compute + T) and
the limit max_comm_fraction f gives T <= f / (1 - f) x A x compute.
"""

from __future__ import annotations


def parameters(workload: dict, gpus: int) -> dict:
    """beta (bytes, the bandwidth numerator), gamma (latency multiplier) and t_max_s for n = gpus."""
    n = int(gpus)
    size = float(workload["model_params_billion"]) * 1e9 * float(workload.get("bytes_per_gradient") or 2)
    accum = int(workload.get("grad_accum_steps") or 1)
    compute_s = float(workload["step_compute_ms"]) / 1e3
    frac = float(workload["max_comm_fraction"])
    return {
        "n_gpus": n, "bytes": size, "beta_bytes": 2 * (n - 1) / n * size, "gamma": 2 * (n - 1),
        "grad_accum_steps": accum, "step_compute_s": compute_s, "max_comm_fraction": frac,
        "t_max_s": frac / (1 - frac) * accum * compute_s,
    }


def per_gpu_gbps(node, efficiency: float, oversubscription: float) -> float:
    """Scale-out goodput per GPU in Gb/s: NIC bandwidth x protocol efficiency / oversubscription."""
    nic = float(node["nics_per_node"]) * float(node["nic_gbps"]) / float(node["gpus_per_node"])
    return nic * efficiency / oversubscription


def ring_time_s(params: dict, gbps_per_gpu: float, alpha_us: float) -> dict:
    """Both terms of the ring estimate and the communication share of a step."""
    bw_term = params["beta_bytes"] * 8 / (gbps_per_gpu * 1e9)
    lat_term = params["gamma"] * alpha_us / 1e6
    total = bw_term + lat_term
    compute = params["grad_accum_steps"] * params["step_compute_s"]
    return {"bw_term_s": bw_term, "latency_term_s": lat_term, "time_s": total,
            "comm_fraction": total / (compute + total)}
