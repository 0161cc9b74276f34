"""The time of one synchronous training step on a design, and what the run then takes and costs.

Placement (Megatron-LM's order, tensor parallel innermost, pipeline outermost): tp ranks share a scale-up (NVLink)
domain of U GPUs; the domain's other U / tp slots hold data-parallel ranks, p = min(dp, U / tp) of each data-parallel
group in one domain; pipeline stages sit in other domains when tp x dp fills the domain; expert-parallel groups are
ep consecutive data-parallel ranks. Pipelines stay inside a site; data parallelism spans the sites.

Step time = compute + exposed communication (tp, pp, dp, ep) + jitter tail, each at the slowest site:

- compute = F x B / (N x peak x kernel_efficiency) x (1 + (pp - 1) / m), F = 6 P_active + 12 L H T FLOPs per token
  (PaLM, Chowdhery et al. 2022, appendix B), B global batch tokens, m = B / T / dp micro-batches of one sequence
  per pipeline and (pp - 1) / m the 1F1B bubble (Narayanan et al. 2021, SC21).
- tp: 4 all-reduces per layer and micro-batch (2 forward, 2 backward: Shoeybi et al. 2019, Megatron-LM) of T x H x
  2 bytes over tp GPUs on NVLink, L / pp layers a stage, on the critical path.
- pp: a forward activation and a backward gradient of T x H x 2 / tp bytes per micro-batch (Megatron's
  scatter-gather), point to point, on the fabric when the pipeline leaves the domain; not overlapped.
- dp: gradients of (P_active + (P - P_active) / ep) / (tp x pp) parameters per GPU, all-reduced as NCCL runs it
  over the dp / p domains of the site, one channel per rail (models.collectives.nccl_all_reduce: ring, tree or
  in-network, the fastest); then across k sites a ring on the whole gradient over each site's inter-site capacity
  with the WAN latency. A share ``overlap`` of it is hidden behind the backward pass.
- ep: 4 all-to-alls per layer and micro-batch (dispatch and combine, forward and backward) of T x H x 2 x k_e / tp
  bytes (k_e experts per token); the part for peers in other domains goes over the NIC, the rest over NVLink, in
  parallel; on a rail-only fabric a peer on another rail is reached through NVLink first (Wang et al. 2023,
  arXiv 2307.12169): that forwarding adds its NVLink time.
- jitter: a synchronous collective waits for the slowest of its N members; with independent per-hop spreads sigma,
  a path of h hops spreads sigma x sqrt(h), and the expected maximum of N such normal delays is about
  sigma x sqrt(h) x sqrt(2 ln N) (extreme-value bound of N Gaussians). Charged once per fabric synchronisation of
  the step: the dp all-reduce, each pipeline transfer, each expert all-to-all, the inter-site all-reduce.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from models import collectives as co

ACTIVATION_BYTES = 2  # bf16 activations
HOURS_PER_YEAR = 8760  # 365 days, as the energy horizon of the cost model


@dataclass(frozen=True)
class Job:
    """The workload as the step model reads it (parameters in billions, sizes in tokens)."""

    gpus: int
    params_b: float
    active_b: float
    bytes_per_gradient: float
    batch_tokens: float
    seq_len: int
    layers: int
    hidden: int
    tp: int = 1
    pp: int = 1
    ep: int = 1
    experts_per_token: int = 1
    overlap: float = 0.0
    kernel_efficiency: float = 0.6
    gpu_tflops: float = 989.0

    @property
    def dp(self) -> int:
        return self.gpus // (self.tp * self.pp)

    @property
    def microbatches(self) -> float:
        return self.batch_tokens / self.seq_len / self.dp

    @property
    def flops_per_token(self) -> float:
        return 6 * self.active_b * 1e9 + 12 * self.layers * self.hidden * self.seq_len

    @property
    def gradient_bytes(self) -> float:
        """Gradient bytes a GPU all-reduces: its tp x pp share of the dense part and of its experts."""
        params = (self.active_b + (self.params_b - self.active_b) / self.ep) * 1e9
        return params / (self.tp * self.pp) * self.bytes_per_gradient


@dataclass(frozen=True)
class Domain:
    """The scale-up (NVLink) domain: GPUs in it, per-GPU bandwidth one way, one hop's latency."""

    gpus: int
    gbps: float
    latency_us: float


@dataclass(frozen=True)
class Fabric:
    """One site's scale-out fabric as a GPU sees it: the job's GPUs there, goodput per GPU, worst one-way latency,
    switch hops, per-hop jitter, whether every switch reduces in the network, rail-only or not; and the site's
    inter-site capacity."""

    site: str
    gpus: int
    gbps: float
    latency_us: float
    hops: int
    jitter_us: float
    inr: bool = False
    rail_only: bool = False
    dci_gbps: float = 0.0


@dataclass
class Step:
    compute_s: float
    comm_exposed_s: dict
    jitter_s: float
    collectives: list = field(default_factory=list)

    @property
    def step_time_s(self) -> float:
        return self.compute_s + sum(self.comm_exposed_s.values()) + self.jitter_s


def compute_s(job: Job) -> float:
    """F x B / (N x peak x efficiency) x (1 + (pp - 1) / m)."""
    peak = job.gpus * job.gpu_tflops * 1e12 * job.kernel_efficiency
    return job.flops_per_token * job.batch_tokens / peak * (1 + (job.pp - 1) / job.microbatches)


def tail_s(jitter_us: float, hops: int, members: int) -> float:
    """Expected wait for the slowest of ``members``: sigma x sqrt(hops) x sqrt(2 ln N)."""
    if members <= 1 or jitter_us <= 0:
        return 0.0
    return jitter_us * math.sqrt(max(hops, 1)) * math.sqrt(2 * math.log(members)) / 1e6


def per_domain(job: Job, domain: Domain) -> int:
    """Data-parallel ranks of one group in one scale-up domain."""
    return max(1, min(job.dp, domain.gpus // job.tp))


def expert_all_to_all(size: float, job: Job, domain: Domain, fabric: Fabric) -> co.Timed:
    """All-to-all of ``size`` bytes per GPU over ep GPUs: the NIC share and the NVLink share in parallel, plus the
    NVLink forwarding of a rail-only fabric's cross-rail share."""
    ep = job.ep
    p = min(ep, per_domain(job, domain))
    out = size * (ep - p) / ep
    inner = size * (p - 1) / ep
    bw = max(co.seconds(out, fabric.gbps), co.seconds(inner, domain.gbps))
    if fabric.rail_only and p > 1:
        bw += co.seconds(out * (p - 1) / p, domain.gbps)
    lat = ((ep // p - 1) * fabric.latency_us + (p - 1) * domain.latency_us) / 1e6
    return co.Timed("all_to_all", "pairwise", ep, size, bw, lat)


def site_step(job: Job, domain: Domain, fabric: Fabric) -> tuple[dict, float, list]:
    """Exposed communication per dimension, the jitter tail and the collectives of one site (inter-site apart)."""
    m = job.microbatches
    layers = job.layers / job.pp
    token_bytes = job.seq_len * job.hidden * ACTIVATION_BYTES
    p = per_domain(job, domain)
    dp_site = max(1, fabric.gpus // (job.tp * job.pp))
    rows, comm, jitter = [], {"tp": 0.0, "pp": 0.0, "dp": 0.0, "ep": 0.0}, 0.0
    if job.tp > 1:
        tp = co.all_reduce(token_bytes, job.tp, domain.gbps, domain.latency_us)
        comm["tp"] = 4 * layers * m * tp.time_s
        rows.append(("tp", tp))
    if job.pp > 1:
        over_fabric = job.tp * job.dp >= domain.gpus
        link = (fabric.gbps, fabric.latency_us) if over_fabric else (domain.gbps, domain.latency_us)
        pp = co.send_recv(token_bytes / job.tp, *link)
        comm["pp"] = 2 * m * pp.time_s
        jitter += 2 * m * tail_s(fabric.jitter_us, fabric.hops, 2) if over_fabric else 0.0
        rows.append(("pp", pp))
    if dp_site > 1:
        inner = min(p, dp_site)
        dp = co.nccl_all_reduce(job.gradient_bytes, inner, dp_site // inner, domain.gbps, domain.latency_us,
                                fabric.gbps, fabric.latency_us, fabric.inr)
        comm["dp"] = (1 - job.overlap) * dp.time_s
        jitter += tail_s(fabric.jitter_us, fabric.hops, dp_site // inner)
        rows.append(("dp", dp))
    if job.ep > 1:
        ep = expert_all_to_all(token_bytes * job.experts_per_token / job.tp, job, domain, fabric)
        comm["ep"] = 4 * layers * m * ep.time_s
        if job.ep > p:
            jitter += 4 * layers * m * tail_s(fabric.jitter_us, fabric.hops, job.ep // p)
        rows.append(("ep", ep))
    return comm, jitter, rows


def inter_site(job: Job, fabric: Fabric, sites: int, wan_latency_us: float) -> co.Timed:
    """Ring all-reduce of the whole gradient (every tp x pp shard) across ``sites`` over the site's capacity."""
    return co.ring_all_reduce(job.gradient_bytes * job.tp * job.pp, sites, fabric.dci_gbps, wan_latency_us)


def step(job: Job, domain: Domain, fabrics: list[Fabric], wan_latency_us: float = 0.0,
         wan_hops: int = 2) -> Step:
    """The step at the slowest site, per dimension; with k > 1 sites the inter-site all-reduce adds to dp (and its
    tail, over the ``wan_hops`` routers between sites, to the jitter)."""
    result = Step(compute_s(job), {"tp": 0.0, "pp": 0.0, "dp": 0.0, "ep": 0.0}, 0.0)
    k = len(fabrics)
    for fabric in fabrics:
        comm, jitter, rows = site_step(job, domain, fabric)
        if k > 1:
            wan = inter_site(job, fabric, k, wan_latency_us)
            comm["dp"] += (1 - job.overlap) * wan.time_s
            jitter += tail_s(fabric.jitter_us, wan_hops, k)
            rows.append(("dp", replace(wan, algorithm="ring (inter-site)")))
        result.collectives += [(fabric.site, dim, timed) for dim, timed in rows]
        for dim in comm:
            result.comm_exposed_s[dim] = max(result.comm_exposed_s[dim], comm[dim])
        result.jitter_s = max(result.jitter_s, jitter)
    return result


@dataclass(frozen=True)
class Run:
    """What a run of ``training_tokens`` takes on a cluster whose step is ``step_s``."""

    step_s: float
    compute_s: float
    tokens_per_s: float
    mfu: float
    days: float
    energy_mwh: float
    cost_usd: float
    idle_share: float
    idle_usd: float


def run(job: Job, step_s: float, compute: float, training_tokens: float, facility_mw: float,
        energy_usd_per_hour: float, capex_usd: float, amortization_years: float) -> Run:
    """tokens/s = B / step; MFU = F x tokens/s / (N x peak); days = tokens / (tokens/s) / 86400; energy = facility
    MW x hours; cost = capex / amortization_years / 8760 h x hours + energy; idle = (step - compute) / step of it."""
    tps = job.batch_tokens / step_s
    hours = training_tokens / tps / 3600
    cost = capex_usd / amortization_years / HOURS_PER_YEAR * hours + energy_usd_per_hour * hours
    idle = (step_s - compute) / step_s
    return Run(step_s, compute, tps, job.flops_per_token * tps / (job.gpus * job.gpu_tflops * 1e12),
               hours / 24, facility_mw * hours, cost, idle, idle * cost)


def breakeven_utilisation(capex_usd: float, amortization_years: float, run_hours: float,
                          energy_usd_per_hour: float, rent_per_run_usd: float) -> float | None:
    """Share of the year the built cluster must train for its cost per run to equal renting's: a year at
    utilisation u costs capex / years + u x 8760 x energy per hour and trains u x 8760 / run_hours runs, so
    u = capex / years x run_hours / (8760 x (rent per run - energy per run)); None when building never breaks even
    (renting costs less than a run's energy, or u would exceed the whole year)."""
    margin = rent_per_run_usd - energy_usd_per_hour * run_hours
    if margin <= 0:
        return None
    share = capex_usd / amortization_years * run_hours / (HOURS_PER_YEAR * margin)
    return share if share <= 1 else None
