"""design.json ``training``: the step time of the solved design, what the run takes and costs, the collectives a
team should see in nccl-tests, the step at other GPU counts, and the cloud offers beside it (models.training)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from models import collectives as co
from models import training as tr

FABRIC_TIERS = ("leaf", "spine", "core")
SCALING = (0.125, 0.25, 0.5, 1, 2)  # GPU counts of the step-time curve, as shares of the job's


def job_of(inputs, gpus: int | None = None) -> tr.Job:
    w, node = inputs.workload, inputs.node_types.loc[inputs.project["node_type"]]
    return tr.Job(
        gpus=int(gpus or inputs.project["gpus_required"]), params_b=float(w["model_params_billion"]),
        active_b=float(w["active_params_billion"] or w["model_params_billion"]),
        bytes_per_gradient=float(w["bytes_per_gradient"]), batch_tokens=float(w["global_batch_tokens"]),
        seq_len=int(w["seq_len"]), layers=int(w["layers"]), hidden=int(w["hidden_size"]), tp=int(w["tp"]),
        pp=int(w["pp"]), ep=int(w["ep"]), experts_per_token=int(w["experts_per_token"]), overlap=float(w["overlap"]),
        kernel_efficiency=float(w["kernel_efficiency"]), gpu_tflops=float(node["gpu_tflops"]))


def domain_of(node) -> tr.Domain:
    gpus = int(_or(node["scaleup_gpus"], node["gpus_per_node"]))
    return tr.Domain(gpus, float(node["scaleup_gbps"]), float(node["nvlink_latency_ns"]) / 1e3)


def fabric(inputs, name: str, gpus: int, protocol: str, oversubscription: float, latency_us: float, hops: int,
           switches, topology: str, dci_gbps: float = 0.0) -> tr.Fabric:
    """A fabric as the job sees it: NIC bandwidth per GPU x the protocol's efficiency / oversubscription, in-network
    reduction where every fabric switch model has it."""
    node = inputs.node_types.loc[inputs.project["node_type"]]
    row = inputs.protocols.loc[protocol]
    nic = float(node["nics_per_node"]) * float(node["nic_gbps"]) / float(node["gpus_per_node"])
    switches = set(switches)
    return tr.Fabric(
        name, gpus, nic * float(row["efficiency"]) / float(oversubscription), float(latency_us), int(hops),
        float(row["jitter_us"]),
        inr=bool(switches) and all(bool(inputs.switches.loc[m, "in_network_reduction"]) for m in switches),
        rail_only=topology == "rail_only", dci_gbps=dci_gbps)


def fabrics_of(inputs, solution: dict, gpus: int) -> list[tr.Fabric]:
    """Each open site's fabric as the job sees it, the job's GPUs shared in proportion to the site's."""
    sites = [e for e in solution["sites"] if e["open"]]
    total = sum(e["gpus"] for e in sites)
    return [fabric(inputs, e["name"], round(gpus * e["gpus"] / total), e["protocol"], e["oversubscription"],
                   e["fabric_latency_us"], e["hops"], [t["model"] for t in e["tiers"] if t["tier"] in FABRIC_TIERS],
                   e["topology"], float(e.get("dci_capacity_gbps") or 0.0))
            for e in sites]


_STEPS: dict = {}  # (workload, catalog tables, GPUs, fabric figures) -> step: modes share few distinct fabrics


def mode_step_s(inputs, mode) -> float:
    """The step of the job's GPUs (gpus_required) all on one fabric of ``mode``: the level a training objective
    probes (the inter-site term and the split over sites come after the solve)."""
    switches = tuple(m for m in (mode.leaf, mode.spine, mode.core) if m is not None)
    key = (id(inputs.workload), id(inputs.node_types), id(inputs.protocols), id(inputs.switches),
           inputs.project["node_type"], int(inputs.project["gpus_required"]), mode.protocol,
           float(mode.oversubscription), float(mode.latency_us), int(mode.hops), switches, mode.topology)
    if key not in _STEPS:
        job = job_of(inputs)
        one = fabric(inputs, mode.id, job.gpus, mode.protocol, mode.oversubscription, mode.latency_us, mode.hops,
                     switches, mode.topology)
        _STEPS[key] = tr.step(job, domain_of(inputs.node_types.loc[inputs.project["node_type"]]), [one]).step_time_s
    return _STEPS[key]


def inter_site_floor_s(inputs, gpus: int | None = None) -> float:
    """A lower bound on what the inter-site all-reduce adds to the step of any design over two or more sites
    (models.training.step adds (1 - overlap) x ring(S, k, C_s, alpha) to dp and tail(sigma, 2 hops, k) to the
    jitter, at each site; the step takes the largest): ring(S, k, C, alpha) = 2(k-1)/k x 8 S / C + 2(k-1) alpha is
    at least its k = 2 value 8 S / C + 2 alpha, and tail grows with k. C is bounded above by the most any one
    site's routes carry (each route's fiber pairs x the densest DCI optic within its reach, summed over the
    site's routes), alpha below by the shortest route's one-way latency (the step takes the longest used one),
    sigma by the least jitter of the protocols allowed. So a design over k >= 2 sites has step >= compute +
    this. 0 without routes; inf when no route carries anything (no design opens two sites)."""
    import math

    from models.intersite import fiber_gbps, rtt_ms

    routes = inputs.routes
    if not len(routes):
        return 0.0
    carry: dict = {}
    for _, r in routes.iterrows():
        band = str(r.get("band") or "c")
        per_pair = max((fiber_gbps(row, 1, band) for _, row in inputs.coherent.iterrows()
                        if float(row["reach_km"]) >= float(r["distance_km"])), default=0.0)
        for site in (r["site_a"], r["site_b"]):
            carry[site] = carry.get(site, 0.0) + int(r["fiber_pairs"]) * per_pair
    most = max(carry.values())
    if most <= 0:
        return math.inf
    alpha_us = min(rtt_ms(float(d)) for d in routes["distance_km"]) / 2 * 1e3
    job = job_of(inputs, gpus)
    wan = co.ring_all_reduce(job.gradient_bytes * job.tp * job.pp, 2, most, alpha_us)
    allowed = [p for p in inputs.project["protocols_allowed"] if p in inputs.protocols.index]
    sigma = min(float(inputs.protocols.loc[p, "jitter_us"]) for p in allowed) if allowed else 0.0
    return (1 - job.overlap) * wan.time_s + tr.tail_s(sigma, 2, 2)


def wan_latency_us(solution: dict) -> float:
    """The slowest inter-site one-way latency: half the largest RTT of a used link."""
    return max((link["rtt_ms"] / 2 * 1e3 for link in solution["links"]), default=0.0)


def energy_usd_per_hour(inputs, solution: dict) -> float:
    """Facility MW of every open site x its energy price (USD/MWh): the run's energy cost per hour."""
    return sum(e["power_mw"] * float(inputs.sites.loc[e["name"], "energy_usd_per_mwh"])
               for e in solution["sites"] if e["open"])


def collective_rows(step: tr.Step) -> list[dict]:
    rows = []
    for site, dim, t in step.collectives:
        scope = "inter-site" if "inter-site" in t.algorithm else site
        rows.append({"scope": scope, "dimension": dim, "op": t.op, "algorithm": t.algorithm, "n": t.n,
                     "bytes": t.bytes, "time_s": t.time_s, "algbw_gbps": co.algbw_gbps(t.bytes, t.time_s),
                     "busbw_gbps": co.busbw_gbps(t.op, t.n, t.bytes, t.time_s)})
    return rows


def training_block(inputs, solution: dict) -> dict | None:
    """The training estimate of a solved design (None without training_tokens or without an open site)."""
    w = inputs.workload
    if not w or w.get("training_tokens") is None or not any(e["open"] for e in solution["sites"]):
        return None
    job, domain = job_of(inputs), domain_of(inputs.node_types.loc[inputs.project["node_type"]])
    fabrics, wan = fabrics_of(inputs, solution, job.gpus), wan_latency_us(solution)
    step = tr.step(job, domain, fabrics, wan)
    capex, per_hour = solution["totals"]["capex_with_spares_usd"], energy_usd_per_hour(inputs, solution)
    run = tr.run(job, step.step_time_s, step.compute_s, float(w["training_tokens"]), solution["totals"]["power_mw"],
                 per_hour, capex, float(w["amortization_years"]))
    return {
        "step_time_s": step.step_time_s, "compute_s": step.compute_s, "comm_exposed_s": dict(step.comm_exposed_s),
        "jitter_s": step.jitter_s, "mfu": run.mfu, "tokens_per_s": run.tokens_per_s,
        "time_to_train_days": run.days, "energy_mwh": run.energy_mwh, "cost_per_run_usd": run.cost_usd,
        "idle_share": run.idle_share, "idle_usd": run.idle_usd,
        "gpus": job.gpus, "training_tokens": float(w["training_tokens"]), "global_batch_tokens": job.batch_tokens,
        "parallelism": {"tp": job.tp, "pp": job.pp, "dp": job.dp, "ep": job.ep}, "microbatches": job.microbatches,
        "flops_per_token": job.flops_per_token, "amortization_years": float(w["amortization_years"]),
        "energy_usd_per_hour": per_hour, "capex_usd": capex,
        "collectives": collective_rows(step),
        "scaling": scaling(job, domain, fabrics, wan),
        "cloud": cloud_rows(inputs, job, fabrics, run, capex, per_hour, float(w["amortization_years"])),
        "notes": rail_only_notes(job, domain, fabrics, wan, step),
    }


def scaling(job: tr.Job, domain: tr.Domain, fabrics: list[tr.Fabric], wan: float) -> list[dict]:
    """Step time and throughput of the chosen fabric at other GPU counts (same per-GPU bandwidth, latency and
    inter-site capacity; counts where tp x pp, ep and the batch still split evenly)."""
    rows = []
    for share in SCALING:
        gpus = round(job.gpus * share)
        other = replace(job, gpus=gpus)
        if gpus < job.tp * job.pp or gpus % (job.tp * job.pp) or other.dp % job.ep or other.microbatches % 1:
            continue
        step = tr.step(other, domain, [replace(f, gpus=round(f.gpus * share)) for f in fabrics], wan)
        rows.append({"gpus": gpus, "step_time_s": step.step_time_s, "compute_s": step.compute_s,
                     "tokens_per_s": job.batch_tokens / step.step_time_s,
                     "comm_share": 1 - step.compute_s / step.step_time_s})
    return rows


def cloud_rows(inputs, job: tr.Job, fabrics: list[tr.Fabric], built: tr.Run, capex: float, per_hour: float,
               years: float) -> list[dict]:
    """Each cloud offer's run of the same job on one site of its network, and the utilisation at which the built
    cluster's cost per run equals renting."""
    rows = []
    worst = max(fabrics, key=lambda f: f.latency_us)
    for name, offer in inputs.cloud.iterrows():
        node = inputs.node_types.loc[offer["node_type"]]
        protocol = inputs.protocols.loc[offer["protocol"]]
        fits = _or(offer["max_gpus"], job.gpus) >= job.gpus
        row = {"offer": str(name), "node_type": offer["node_type"], "usd_per_gpu_hour": float(offer["usd_per_gpu_hour"]),
               "fits": bool(fits)}
        if fits:
            rented = replace(job, gpu_tflops=float(node["gpu_tflops"]))
            fabric = tr.Fabric(
                str(name), job.gpus, float(offer["gbps_per_gpu"]) * float(protocol["efficiency"]),
                _or(offer["latency_us"], worst.latency_us), int(offer["hops"]),
                _or(offer["jitter_us"], float(protocol["jitter_us"])))
            step = tr.step(rented, domain_of(node), [fabric])
            tps = job.batch_tokens / step.step_time_s
            hours = float(inputs.workload["training_tokens"]) / tps / 3600
            cost = job.gpus * float(offer["usd_per_gpu_hour"]) * hours
            row.update({"step_time_s": step.step_time_s, "tokens_per_s": tps, "time_to_train_days": hours / 24,
                        "cost_per_run_usd": cost,
                        "breakeven_utilisation": tr.breakeven_utilisation(capex, years, built.days * 24, per_hour,
                                                                          cost)})
        rows.append(row)
    return rows


def _or(value, fallback) -> float:
    """A catalog cell, or ``fallback`` where it is blank."""
    return float(fallback) if pd.isna(value) else float(value)


def rail_only_notes(job: tr.Job, domain: tr.Domain, fabrics: list[tr.Fabric], wan: float, step: tr.Step) -> list[str]:
    """What a rail-only fabric costs this workload: the step again with its cross-rail traffic on the fabric."""
    if not any(f.rail_only for f in fabrics):
        return []
    spine = tr.step(job, domain, [replace(f, rail_only=False) for f in fabrics], wan)
    extra = step.step_time_s - spine.step_time_s
    if extra <= 1e-12:
        return ["rail-only fabric: this workload's collectives stay in their rails (NVLink carries the cross-rail "
                "traffic of tensor parallelism); it costs the step nothing (Wang et al. 2023: dense models lose "
                "nothing)"]
    return [f"rail-only fabric: the expert all-to-all's cross-rail traffic is forwarded over NVLink, "
            f"{extra * 1e3:,.1f} ms a step ({extra / spine.step_time_s:.1%}) more than a fabric joining the rails "
            f"(Wang et al. 2023: MoE all-to-all pays 8-11%)"]
