"""The training block of design.json re-checked from its own figures and the echoed inputs (nothing from models/):
step time = compute + exposed communication + jitter; throughput, time to train and cost of the run from it; the
compute time from the FLOPs of a token (PaLM appendix B) and the 1F1B bubble; each collective's algbw and busbw by
the nccl-tests factors."""

from __future__ import annotations

import math

HOURS_PER_YEAR = 8760.0
BUSBW = {"all_reduce": lambda n: 2 * (n - 1) / n, "reduce_scatter": lambda n: (n - 1) / n,
         "all_gather": lambda n: (n - 1) / n, "all_to_all": lambda n: (n - 1) / n, "send_recv": lambda n: 1.0}


def _off(a: float, b: float, rel: float = 1e-6) -> bool:
    return abs(a - b) > rel * max(1.0, abs(a), abs(b))


def check_training(design: dict, cat) -> list[str]:
    t = design.get("training")
    if not t:
        return []
    out = []

    def expect(name: str, stated: float, derived: float, how: str) -> None:
        if _off(stated, derived):
            out.append(f"training {name} {stated:.6g} is not {how} ({derived:.6g})")

    step = t["step_time_s"]
    expect("step_time_s", step, t["compute_s"] + sum(t["comm_exposed_s"].values()) + t["jitter_s"],
           "compute_s + sum of comm_exposed_s + jitter_s")
    expect("tokens_per_s", t["tokens_per_s"], t["global_batch_tokens"] / step, "global_batch_tokens / step_time_s")
    expect("time_to_train_days", t["time_to_train_days"], t["training_tokens"] / t["tokens_per_s"] / 86400,
           "training_tokens / tokens_per_s / 86400")
    expect("idle_share", t["idle_share"], (step - t["compute_s"]) / step, "(step_time_s - compute_s) / step_time_s")
    hours = t["time_to_train_days"] * 24
    totals = design["totals"]
    per_hour = sum(e["power_mw"] * float(cat.sites[e["name"]]["energy_usd_per_mwh"])
                   for e in design["sites"] if e["open"])
    expect("cost_per_run_usd", t["cost_per_run_usd"],
           totals["capex_with_spares_usd"] / t["amortization_years"] / HOURS_PER_YEAR * hours + per_hour * hours,
           "capex with spares / amortization_years x run hours + energy of the run")
    expect("energy_mwh", t["energy_mwh"], totals["power_mw"] * hours, "facility MW x run hours")
    out += _compute(design, cat, t)
    for row in t["collectives"]:
        algbw = row["bytes"] / row["time_s"] / 1e9 if row["time_s"] > 0 else 0.0
        busbw = algbw * BUSBW[row["op"]](row["n"]) if row["n"] > 1 else 0.0
        where = f"{row['scope']} {row['dimension']} {row['op']}"
        expect(f"{where} algbw_gbps", row["algbw_gbps"], algbw, "bytes / time_s")
        expect(f"{where} busbw_gbps", row["busbw_gbps"], busbw, "algbw x the nccl-tests factor")
    return out


def _compute(design: dict, cat, t: dict) -> list[str]:
    """compute_s = (6 P_active + 12 L H T) x B / (N x peak x kernel_efficiency) x (1 + (pp - 1) / m)."""
    w = (design.get("inputs") or {}).get("workload") or {}
    node = cat.node_types.get(str(cat.project.get("node_type")))
    if not w or node is None:
        return []
    active = w.get("active_params_billion") or w["model_params_billion"]
    flops = 6 * active * 1e9 + 12 * w["layers"] * w["hidden_size"] * w["seq_len"]
    dp = t["gpus"] // (w["tp"] * w["pp"])
    micro = w["global_batch_tokens"] / w["seq_len"] / dp
    compute = (flops * w["global_batch_tokens"] / (t["gpus"] * node["gpu_tflops"] * 1e12 * w["kernel_efficiency"])
               * (1 + (w["pp"] - 1) / micro))
    if _off(t["compute_s"], compute) or not math.isfinite(t["compute_s"]):
        return [f"training compute_s {t['compute_s']:.6g} is not the FLOPs of the batch at the GPUs' "
                f"kernel_efficiency of peak ({compute:.6g})"]
    return []
