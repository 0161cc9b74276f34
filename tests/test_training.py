"""The training model (issue 11): every formula against hand calculation, in-network reduction, metamorphic
properties, published figures reproduced, the workload's input rules, and a solved design's training block
(audit re-check, a tampered figure caught)."""

from __future__ import annotations

import copy
import math
from dataclasses import replace
from pathlib import Path

import pytest

from designer.audit.fabric import Catalog
from designer.audit.training import check_training
from designer.errors import InputError
from designer.inputs.workbook import load_catalog, load_inputs
from designer.inputs.writer import write_workbook
from designer.solve.run import SolveOptions, solve
from models import collectives as co
from models import training as tr

GB = 1e9


# --- collectives: nccl-tests conventions and the alpha-beta times, by hand -------------------------

def test_busbw_factors_are_nccl_tests():
    # 1 GB in 0.01 s: algbw 100 GB/s; n = 4: all-reduce x 2(3)/4 = 1.5, the others x 3/4, send/recv x 1
    assert co.algbw_gbps(GB, 0.01) == pytest.approx(100)
    assert co.busbw_gbps("all_reduce", 4, GB, 0.01) == pytest.approx(150)
    for op in ("reduce_scatter", "all_gather", "all_to_all"):
        assert co.busbw_gbps(op, 4, GB, 0.01) == pytest.approx(75)
    assert co.busbw_gbps("send_recv", 2, GB, 0.01) == pytest.approx(100)


def test_ring_tree_and_in_network_times_by_hand():
    # S = 1 GB at 100 Gb/s is 0.08 s; alpha 5 us; n = 4
    ring = co.ring_all_reduce(GB, 4, 100, 5)
    assert ring.bandwidth_s == pytest.approx(1.5 * 0.08) and ring.latency_s == pytest.approx(6 * 5e-6)
    tree = co.tree_all_reduce(GB, 4, 100, 5)
    assert tree.bandwidth_s == pytest.approx(2 * 0.08) and tree.latency_s == pytest.approx(2 * 2 * 5e-6)
    inr = co.inr_all_reduce(GB, 4, 100, 5)
    assert inr.bandwidth_s == pytest.approx(0.08) and inr.latency_s == pytest.approx(2 * 5e-6)
    p2p = co.send_recv(GB, 100, 5)
    assert p2p.time_s == pytest.approx(0.08 + 5e-6)


def test_the_faster_algorithm_is_taken():
    # a large message: the ring's 2(n-1)/n beats the tree's 2; a small one over 1,024 members: the tree's
    # 2 log2(n) = 20 latency steps beat the ring's 2,046
    assert co.all_reduce(GB, 64, 400, 3).algorithm == "ring"
    small = co.all_reduce(1e3, 1024, 400, 3)
    assert small.algorithm == "tree" and small.latency_s == pytest.approx(20 * 3e-6)
    assert co.all_reduce(GB, 64, 400, 3, inr=True).algorithm == "in_network"
    assert co.all_reduce(GB, 1, 400, 3).time_s == 0


def test_nccl_all_reduce_runs_a_channel_per_rail_by_hand():
    # 2 domains of 8: members see min(8 x 100, 3,600) = 800 Gb/s; the ring's 30 steps, 2 of them between domains
    t = co.nccl_all_reduce(GB, 8, 2, 3600, 0.3, 100, 3.0)
    assert t.algorithm == "ring" and t.n == 16
    assert t.bandwidth_s == pytest.approx(2 * 15 / 16 * GB * 8 / 800e9)
    assert t.latency_s == pytest.approx((28 * 0.3 + 2 * 3.0) / 1e6)
    # NVLink the bottleneck: 8 x 1,000 > 3,600
    assert co.nccl_all_reduce(GB, 8, 2, 3600, 0.3, 1000, 3.0).bandwidth_s == pytest.approx(2 * 15 / 16 * GB * 8 / 3600e9)
    # tree latency 2((p-1) intra + log2(m) inter): 2(7 x 0.3 + 10 x 3) us for 1,024 domains
    tree = co.nccl_all_reduce(1e3, 8, 1024, 3600, 0.3, 100, 3.0)
    assert tree.algorithm == "tree" and tree.latency_s == pytest.approx(2 * (7 * 0.3 + 10 * 3.0) / 1e6)


def test_in_network_reduction_roughly_halves_a_large_all_reduce():
    # one GPU of each group per domain (tp fills the node), 64 domains, 4 GB of gradients: the ring moves 2(n-1)/n S
    # per member, in-network reduction S (calculon issue 7: about twice the algbw)
    ring = co.nccl_all_reduce(4 * GB, 1, 64, 3600, 0.3, 400, 3.0)
    sharp = co.nccl_all_reduce(4 * GB, 1, 64, 3600, 0.3, 400, 3.0, inr=True)
    assert sharp.algorithm == "in_network"
    assert 0.45 < sharp.time_s / ring.time_s < 0.55


# --- the step, by hand ------------------------------------------------------------------------------

def job(**kw) -> tr.Job:
    base = dict(gpus=8, params_b=1.0, active_b=1.0, bytes_per_gradient=2, batch_tokens=8 * 1024, seq_len=1024,
                layers=2, hidden=512, kernel_efficiency=0.5, gpu_tflops=100.0)
    return tr.Job(**{**base, **kw})


def test_compute_is_the_flops_of_the_batch_with_the_bubble():
    # F = 6 x 1e9 + 12 x 2 x 512 x 1,024 FLOPs a token (PaLM appendix B); 8,192 tokens over 8 x 100 TFLOPS x 0.5
    flops = 6e9 + 12 * 2 * 512 * 1024
    assert job().flops_per_token == flops
    assert tr.compute_s(job()) == pytest.approx(flops * 8192 / (8 * 100e12 * 0.5))
    # pp 2: dp 4, 8 sequences = 2 micro-batches a pipeline, bubble (pp-1)/m = 1/2
    two = job(pp=2)
    assert two.dp == 4 and two.microbatches == 2
    assert tr.compute_s(two) == pytest.approx(tr.compute_s(job()) * 1.5)


def test_gradient_bytes_of_a_mixture_of_experts():
    # 100B parameters, 10B active, experts over ep 10: (10 + 90 / 10) x 1e9 / (tp 2) x 2 bytes
    assert job(params_b=100, active_b=10, ep=10, tp=2).gradient_bytes == pytest.approx(19e9)


def test_jitter_tail_is_the_expected_maximum_of_n():
    # sigma 1 us a hop, 4 hops: sigma sqrt(4) = 2 us; over 100 members x sqrt(2 ln 100)
    assert tr.tail_s(1.0, 4, 100) == pytest.approx(2e-6 * math.sqrt(2 * math.log(100)))
    assert tr.tail_s(1.0, 4, 1) == 0


def test_step_parts_by_hand():
    # 16 GPUs in two domains of 8, tp 8: tp all-reduces on NVLink, one dp ring over the 2 domains on the fabric
    j = job(gpus=16, tp=8, batch_tokens=16 * 1024, layers=4)
    domain = tr.Domain(8, 3600, 0.3)
    fabric = tr.Fabric("a", 16, 100, 3.0, 3, 0.5)
    s = tr.step(j, domain, [fabric])
    m = j.microbatches  # 16 sequences / dp 2 = 8
    tp = co.all_reduce(1024 * 512 * 2, 8, 3600, 0.3)
    assert s.comm_exposed_s["tp"] == pytest.approx(4 * 4 * m * tp.time_s)
    grads = 1e9 / 8 * 2
    assert s.comm_exposed_s["dp"] == pytest.approx(co.ring_all_reduce(grads, 2, 100, 3.0).time_s)
    assert s.jitter_s == pytest.approx(tr.tail_s(0.5, 3, 2))
    assert s.step_time_s == pytest.approx(s.compute_s + sum(s.comm_exposed_s.values()) + s.jitter_s)


def test_run_time_cost_and_break_even_by_hand():
    # 1M tokens a step of 2 s: 500k tokens/s; 1e12 tokens: 555.6 h; capex $8.76M over 1 year: $1,000 an hour,
    # energy $100 an hour
    j = job(batch_tokens=1e6)
    r = tr.run(j, 2.0, 1.5, 1e12, 5.0, 100.0, 8.76e6, 1.0)
    hours = 1e12 / 5e5 / 3600
    assert r.tokens_per_s == 5e5 and r.days == pytest.approx(hours / 24)
    assert r.cost_usd == pytest.approx(1100 * hours) and r.energy_mwh == pytest.approx(5 * hours)
    assert r.idle_share == pytest.approx(0.25) and r.idle_usd == pytest.approx(0.25 * 1100 * hours)
    assert r.mfu == pytest.approx(j.flops_per_token * 5e5 / (8 * 100e12))
    # break-even: $8.76M a year x 100 h / (8,760 h x ($1,001,000 - 100 h x $10)) = 10%
    assert tr.breakeven_utilisation(8.76e6, 1, 100, 10, 1_001_000) == pytest.approx(0.1)
    assert tr.breakeven_utilisation(8.76e6, 1, 100, 10, 900) is None  # rent below the energy alone
    assert tr.breakeven_utilisation(8.76e6, 1, 100, 10, 50_000) is None  # not even at full use


# --- metamorphic -----------------------------------------------------------------------------------

MOE = dict(gpus=256, params_b=400, active_b=40, batch_tokens=256 * 4096, seq_len=4096, layers=32, hidden=8192, ep=32,
           experts_per_token=2, gpu_tflops=989.0)
H100 = tr.Domain(8, 3600, 0.3)


def fabrics(**kw) -> list[tr.Fabric]:
    base = dict(gpus=128, gbps=380, latency_us=3.0, hops=3, jitter_us=0.1, dci_gbps=3200)
    return [tr.Fabric("a", **{**base, **kw}), tr.Fabric("b", **{**base, **kw})]


@pytest.mark.parametrize("moe", [False, True])
def test_more_jitter_never_shortens_the_step(moe):
    j = job(**MOE) if moe else job(**{**MOE, "ep": 1, "active_b": 400})
    times = [tr.step(j, H100, fabrics(jitter_us=x), 2000).step_time_s for x in (0, 0.1, 1, 10, 100)]
    assert times == sorted(times) and times[-1] > times[0]


def test_more_inter_site_capacity_never_lengthens_the_step():
    j = job(**MOE)
    times = [tr.step(j, H100, fabrics(dci_gbps=c), 2000).step_time_s for c in (400, 1600, 6400, 25600, 1e6)]
    assert times == sorted(times, reverse=True) and times[0] > times[-1]


def test_rail_only_costs_a_dense_model_nothing_and_moe_its_forwarding():
    dense = job(**{**MOE, "ep": 1, "active_b": 400, "tp": 8})
    assert (tr.step(dense, H100, fabrics(rail_only=True), 2000).step_time_s
            == tr.step(dense, H100, fabrics(), 2000).step_time_s)
    moe = job(**MOE)
    assert (tr.step(moe, H100, fabrics(rail_only=True), 2000).comm_exposed_s["ep"]
            > tr.step(moe, H100, fabrics(), 2000).comm_exposed_s["ep"])


# --- published figures --------------------------------------------------------------------------------

def test_nccl_ring_busbw_per_ndr_nic_as_nvidia_states():
    """NVIDIA/nccl-tests issue 290 (NVIDIA's NCCL maintainer, 2025-03-03): two DGX H100-class nodes, 8 x ConnectX-7
    NDR 400 Gb/s, NCCL_ALGO=RING: 'For NDR @ 400Gbps you should see 46-48GB/s per NIC' of all-reduce busbw. The
    model, from the shipped catalog rows (DGX H100, infiniband), at 8 GiB: busbw / 8 NICs within that range
    (tolerance: the stated range, +-2%)."""
    cat = load_catalog()
    node, ib = cat["node_types"].loc["DGX H100"], cat["protocols"].loc["infiniband"]
    per_gpu = node["nics_per_node"] * node["nic_gbps"] / node["gpus_per_node"] * ib["efficiency"]
    size = 8 * 2**30
    t = co.nccl_all_reduce(size, 8, 2, float(node["scaleup_gbps"]), node["nvlink_latency_ns"] / 1e3, per_gpu, 3.0)
    assert t.algorithm == "ring"
    assert 46 <= co.busbw_gbps("all_reduce", 16, size, t.time_s) / 8 <= 48


def test_rail_only_all_to_all_penalty_as_published():
    """Wang et al. 2023 (arXiv 2307.12169, rail-only): MoE all-to-all pays 8.2-11.2% more on a rail-only fabric of
    DGX H100-class nodes. The model: an expert all-to-all over 64 GPUs (8 domains of 8), shipped DGX H100 and
    InfiniBand rows; the rail-only time over the spine-joined one within 1.082-1.112 (+-1 point)."""
    cat = load_catalog()
    node, ib = cat["node_types"].loc["DGX H100"], cat["protocols"].loc["infiniband"]
    domain = tr.Domain(8, float(node["scaleup_gbps"]), node["nvlink_latency_ns"] / 1e3)
    fabric = tr.Fabric("a", 512, 400 * ib["efficiency"], 3.0, 3, 0.1)
    j = job(**{**MOE, "gpus": 512, "batch_tokens": 512 * 4096, "ep": 64})
    joined = tr.expert_all_to_all(64e6, j, domain, fabric)
    rail = tr.expert_all_to_all(64e6, j, domain, replace(fabric, rail_only=True))
    assert 1.072 <= rail.time_s / joined.time_s <= 1.122


# --- inputs ---------------------------------------------------------------------------------------

def book(**workload) -> dict:
    return {
        "project": {"gpus_required": 256, "node_type": "DGX H100", "protocols_allowed": "infiniband",
                    "topologies_allowed": "rail_optimized"},
        "sites": [{"name": "dc1", "power_mw": 10, "pue": 1.2, "max_nodes": 32, "fixed_cost_usd": 1e6,
                   "power_cost_usd_per_mw": 1e6, "energy_usd_per_mwh": 50, "status": "required"}],
        "workload": {"model_params_billion": 8, "training_tokens": 1e12, "global_batch_tokens": 256 * 4096,
                     "seq_len": 4096, "layers": 32, "hidden_size": 4096, "tp": 8, **workload},
        "cloud": [{"name": "rent", "node_type": "DGX H100", "usd_per_gpu_hour": 2.5, "gbps_per_gpu": 400,
                   "protocol": "infiniband", "source": "test figures"},
                  {"name": "small", "node_type": "DGX H100", "usd_per_gpu_hour": 2.0, "gbps_per_gpu": 100,
                   "protocol": "rocev2", "max_gpus": 64, "source": "test figures"}],
    }


def problems_of(tmp_path: Path, workbook: dict) -> list[str]:
    with pytest.raises(InputError) as err:
        load_inputs(write_workbook(tmp_path / "w.xlsx", workbook))
    return [str(p) for p in err.value.problems]


def test_inconsistent_parallelism_names_the_cell(tmp_path):
    found = problems_of(tmp_path, book(tp=16, pp=3, layers=None))
    text = "\n".join(found)
    assert "workload!B" in text and "tp" in text and "scale-up domain of 8 GPUs" in text
    assert "tp x pp = 48 does not divide gpus_required (256)" in text
    assert "training_tokens: the training estimate needs the model's layers" in text


def test_ep_and_batch_must_split_evenly(tmp_path):
    text = "\n".join(problems_of(tmp_path, book(ep=3, global_batch_tokens=4096 * 7)))
    assert "does not divide the 32 data-parallel replicas" in text
    assert "global_batch_tokens" in text and "multiple of 131,072" in text


def test_the_limit_needs_its_compute_time(tmp_path):
    text = "\n".join(problems_of(tmp_path, book(max_comm_fraction=0.2)))
    assert "step_compute_ms" in text


# --- a solved design ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    path = write_workbook(tmp_path_factory.mktemp("training") / "t.xlsx", book())
    return solve(load_inputs(path), SolveOptions())


def test_training_block_of_a_solved_design(solved):
    t = solved["training"]
    assert t["parallelism"] == {"tp": 8, "pp": 1, "dp": 32, "ep": 1}
    assert t["step_time_s"] == pytest.approx(t["compute_s"] + sum(t["comm_exposed_s"].values()) + t["jitter_s"])
    assert t["time_to_train_days"] == pytest.approx(1e12 / t["tokens_per_s"] / 86400)
    assert 0 < t["mfu"] < 0.6 and 0 < t["idle_share"] < 1
    dp = next(c for c in t["collectives"] if c["dimension"] == "dp")
    assert dp["n"] == 32 and dp["algorithm"] == "in_network"  # QM9700 fabric: SHARP on every switch
    assert [c["fits"] for c in t["cloud"]] == [True, False]
    assert t["cloud"][0]["cost_per_run_usd"] > 0 and t["scaling"][-1]["gpus"] == 512
    assert check_training(solved, Catalog(solved["inputs"])) == []


@pytest.mark.parametrize("key, change", [
    ("step_time_s", lambda t: t.update(jitter_s=t["jitter_s"] + 0.1)),
    ("time_to_train_days", lambda t: t.update(time_to_train_days=t["time_to_train_days"] * 1.01)),
    ("compute_s", lambda t: t.update(compute_s=t["compute_s"] * 0.9, step_time_s=t["step_time_s"]
                                     - t["compute_s"] * 0.1)),
    ("busbw_gbps", lambda t: t["collectives"][0].update(busbw_gbps=t["collectives"][0]["busbw_gbps"] * 2)),
])
def test_audit_catches_a_tampered_training_figure(solved, key, change):
    design = copy.deepcopy(solved)
    change(design["training"])
    assert any(key in v for v in check_training(design, Catalog(design["inputs"])))


# --- the training objectives: GPU count and fabric chosen together (tiny instances) -------------------------

def objective_book(objective: str, **project) -> dict:
    """A tiny plan: 8-16 H100 nodes on one site, InfiniBand or RoCEv2, a leaf-spine or rail-only fabric; the
    batch (128 sequences) lets tp 8 run on 64, 128 GPUs (dp 8, 16)."""
    b = book()
    b["project"].update({"gpus_required": 64, "gpus_max": 128, "objective": objective, "max_oversubscription": 2,
                         "protocols_allowed": "infiniband,rocev2", "topologies_allowed": "leaf_spine,rail_only",
                         **project})
    b["workload"].update(global_batch_tokens=128 * 4096, tp=8)
    del b["cloud"]
    return b


def cheapest_at(sized, level: float) -> dict | None:
    """The cheapest design of ``sized`` using only modes whose step is at most ``level`` (None: none in budget)."""
    from designer.solve.extract import extract
    from designer.solve.highs import run_highs
    from designer.solve.prepare import prepare_data
    from models.network import COST_SCALE, build_model, set_objective

    data = prepare_data(sized, step_cap=level)
    model = build_model(data)
    set_objective(model)
    budget = sized.project.get("budget_usd")
    outcome = run_highs(model, SolveOptions(), COST_SCALE, cutoff=None if budget is None else float(budget))
    if outcome.status != "optimal":
        return None
    return extract(model, data, outcome, SolveOptions(), seconds=outcome.seconds)


def brute_force(inputs) -> list[dict]:
    """Every GPU count and every distinct step level (no merging, no bound), each its cheapest design."""
    from designer.solve import throughput
    from designer.solve.prepare import prepare_data
    from designer.solve.training import mode_step_s

    designs = []
    for gpus in throughput.gpu_counts(inputs):
        sized = throughput.at_count(inputs, gpus)
        for level in sorted({mode_step_s(sized, m) for m in prepare_data(sized).modes}):
            designs.append(cheapest_at(sized, level))
    return [d for d in designs if d is not None]


def test_a_step_level_keeps_what_pruning_its_modes_alone_keeps(tmp_path, monkeypatch):
    """A level's modes are the uncapped preparation's at or below its step (designer.solve.prepare.step_at_most):
    the same modes as enumerating only the modes at or below it and pruning them (the step is a pruning criterion
    under a training objective, so a mode is dropped only for one no slower), at every level of both GPU counts;
    one preparation serves them all."""
    from designer.solve import prepare, throughput
    from designer.solve.training import mode_step_s
    from models.modes import enumerate_modes

    inputs = load_inputs(write_workbook(tmp_path / "run.xlsx", objective_book("min_cost_per_run")))
    prepare.PREPARED.clear()
    pruned, calls = prepare.pruned, []
    monkeypatch.setattr(prepare, "pruned", lambda *a: calls.append(a) or pruned(*a))
    for gpus in throughput.gpu_counts(inputs):
        sized = throughput.at_count(inputs, gpus)
        everything = enumerate_modes(sized)
        steps = sorted({mode_step_s(sized, m) for m in prepare.prepare_data(sized).modes})
        assert len(steps) > 2
        for level in steps:
            got = [m.id for m in prepare.prepare_data(sized, step_cap=level).modes]
            under = replace(everything, modes=[m for m in everything.modes
                                               if mode_step_s(sized, m) <= level * (1 + 1e-9)])
            with monkeypatch.context() as m:
                m.setattr(prepare, "enumerate_modes", lambda _inputs, _ends=None, under=under, **_: under)
                alone = [mode.id for mode in pruned(sized, None, None, False, None).modes]
            assert got == alone, level
    assert len(calls) == 2  # one preparation for each GPU count


def test_min_cost_per_run_matches_brute_force(tmp_path):
    inputs = load_inputs(write_workbook(tmp_path / "run.xlsx", objective_book("min_cost_per_run")))
    chosen = solve(inputs, SolveOptions())
    every = brute_force(inputs)
    assert {d["training"]["gpus"] for d in every} == {64, 128}
    best = min(d["training"]["cost_per_run_usd"] for d in every)
    # the levels merge steps within 1%: the cost of a run is within 1% of the brute force's best
    assert best <= chosen["training"]["cost_per_run_usd"] <= best * 1.01
    assert chosen["objective"] == "min_cost_per_run"


def test_max_tokens_per_s_matches_brute_force_and_more_budget_never_lowers_it(tmp_path):
    inputs = load_inputs(write_workbook(tmp_path / "tps.xlsx", objective_book("max_tokens_per_s")))
    chosen = solve(inputs, SolveOptions())
    every = brute_force(inputs)
    best = max(d["training"]["tokens_per_s"] for d in every)
    assert best / 1.01 <= chosen["training"]["tokens_per_s"] <= best * (1 + 1e-9)
    assert chosen["training"]["gpus"] == 128  # twice the GPUs on the same fabric is the faster run
    tight = chosen["objective_usd"] * 0.7  # a budget below the fastest design: fewer GPUs or a slower fabric
    lower = solve(load_inputs(write_workbook(tmp_path / "tight.xlsx", objective_book(
        "max_tokens_per_s", budget_usd=tight))), SolveOptions())
    assert lower["objective_usd"] <= tight and lower["training"]["tokens_per_s"] <= chosen["training"]["tokens_per_s"]


def test_training_objective_needs_the_training_estimate(tmp_path):
    b = objective_book("max_tokens_per_s", gpus_max=32)
    del b["workload"]["training_tokens"]
    text = "\n".join(problems_of(tmp_path, b))
    assert "objective: needs the training estimate" in text and "gpus_max: is less than gpus_required" in text


def test_the_schema_extremes_keep_every_figure_finite():
    """The largest values the schema takes (designer.inputs.schema UPPER): 100 trillion parameters, 10,000 layers a
    million wide, 10-million-token sequences, a 1,000,000 TFLOPS GPU, 1 s of jitter a hop; and the smallest."""
    big = job(gpus=1_024 * 1_024, params_b=100_000, active_b=100_000, bytes_per_gradient=16,
              batch_tokens=1e10 // 10_000_000 * 10_000_000, seq_len=10_000_000, layers=10_000, hidden=1_000_000,
              tp=1_024, gpu_tflops=1e6)
    step = tr.step(big, tr.Domain(1_024, 1e6, 1_000), [tr.Fabric("a", big.gpus, 3_200, 1_000, 100, 1e6)])
    run = tr.run(big, step.step_time_s, step.compute_s, 1e16, 100_000, 1e7, 1e13, 50)
    small = job(gpus=1, batch_tokens=1, seq_len=1, layers=1, hidden=1, gpu_tflops=1e-3)
    tiny = tr.step(small, tr.Domain(1, 1, 0), [tr.Fabric("a", 1, 1, 0, 1, 0)])
    for value in (step.step_time_s, run.days, run.cost_usd, run.mfu, tiny.step_time_s):
        assert math.isfinite(value) and value >= 0


def two_site_book(**project) -> dict:
    """128 GPUs (16 nodes) on RoCEv2. dc1 holds 16 nodes but its 0.208 MW fits them only with the leanest fabric
    (oversubscription 2: a 0.680 s step); dc2 holds 8. The fastest fabric (oversubscription 1, a 0.597 s step on one
    site) needs both sites, and dci_ratio 0.01 buys them one 400G wavelength: the whole gradient crosses it."""
    b = objective_book("max_tokens_per_s", gpus_required=128, gpus_max=128, protocols_allowed="rocev2",
                       dci_ratio=0.01, **project)
    b["sites"][0].update(status="candidate", power_mw=0.208, lat=40.4, lon=-3.7)
    b["sites"].append(dict(b["sites"][0], name="dc2", max_nodes=8, power_mw=10, lat=40.6, lon=-3.5))
    b["routes"] = [dict(site_a="dc1", site_b="dc2", distance_km=40, fiber_pairs=2, fiber_cost_usd_per_pair_km=10)]
    return b


def test_max_tokens_per_s_sees_the_inter_site_step(tmp_path):
    """A two-site design at the fastest one-site level is slower in fact (its inter-site all-reduce): the search
    must not stop at that level. The best of the designs on one site and over both, by their real steps, is the
    one-site design; the two-site one's step is at least compute + inter_site_floor_s (the bound is a bound)."""
    from designer.solve import throughput
    from designer.solve.prepare import prepare_data
    from designer.solve.training import inter_site_floor_s, job_of, mode_step_s

    inputs = load_inputs(write_workbook(tmp_path / "two.xlsx", two_site_book()))
    chosen = solve(inputs, SolveOptions())
    one, several = throughput.parts(inputs)[0][1], throughput.parts(inputs)[1][1]
    fastest_level = min(throughput.levels([mode_step_s(several, m) for m in prepare_data(several).modes]))
    split = cheapest_at(several, fastest_level)  # what the levels alone chose: the fastest level's design
    assert split is not None and split["totals"]["sites_open"] == 2
    alone = [cheapest_at(one, level) for level in throughput.levels([mode_step_s(one, m)
                                                                     for m in prepare_data(one).modes])]
    best_alone = max((d for d in alone if d is not None), key=lambda d: d["training"]["tokens_per_s"])
    assert split["training"]["step_time_s"] > best_alone["training"]["step_time_s"]
    assert chosen["totals"]["sites_open"] == 1
    assert chosen["training"]["tokens_per_s"] == pytest.approx(best_alone["training"]["tokens_per_s"], rel=1e-9)
    floor = inter_site_floor_s(inputs)
    assert 0 < floor and split["training"]["step_time_s"] >= tr.compute_s(job_of(inputs)) + floor
    # the several-site search ranks by one-site levels: only compute + floor is proven there, and that bound
    # (batch tokens over it) leaves room above the chosen design, so it is not called optimal
    room = job_of(inputs).batch_tokens / (tr.compute_s(job_of(inputs)) + floor)
    assert room > chosen["training"]["tokens_per_s"] * (1 + throughput.LEVEL_SHARE)
    assert chosen["status"] == "feasible"
    assert f"leaves room for up to {room:,.0f} tokens/s" in " ".join(chosen["notes"])


def test_explaining_a_training_objective_judges_by_the_run(tmp_path):
    """Under min_cost_per_run each relaxation and alternative is the objective's search run again and judged by
    the cost of the run, not the capex: a relaxation never makes the run dearer beyond the search's step levels
    (the chosen design is still a design of it) and binds only when it saves more than them; an alternative (a
    restriction of the workbook) never runs cheaper beyond them, and its deltas are its run against the chosen."""
    from designer.solve.alternatives import alternatives
    from designer.solve.sensitivity import sensitivity
    from designer.solve.throughput import LEVEL_SHARE

    inputs = load_inputs(write_workbook(tmp_path / "run.xlsx", objective_book("min_cost_per_run")))
    chosen = solve(inputs, SolveOptions())
    run = chosen["training"]["cost_per_run_usd"]
    rows = [r for r in sensitivity(inputs, chosen)["rows"] if r.get("run_relaxed") is not None]
    assert rows
    for r in rows:
        assert r["run_figure"] == "cost_per_run_usd" and r["run_chosen"] == run
        assert r["run_relaxed"] <= run * (1 + LEVEL_SHARE)
        assert r["binding"] == (run - r["run_relaxed"] > LEVEL_SHARE * run)
        assert r["effect"].startswith("saves" if r["binding"] else "nothing beyond the search's step levels")
    found = [r for r in alternatives(inputs, chosen)["rows"] if r["objective_usd"] is not None]
    assert {r["kind"] for r in found} >= {"protocol", "topology"}
    for r in found:
        assert r["run_usd"] >= run * (1 - LEVEL_SHARE)
        assert r["run_delta_usd"] == pytest.approx(r["run_usd"] - run)
        assert r["step_delta_s"] == pytest.approx(r["step_s"] - chosen["training"]["step_time_s"])


def test_more_budget_buys_tokens_per_second_in_the_sensitivity(tmp_path):
    """max_tokens_per_s within $4.7M: 64 GPUs ($3.1M); 10% more budget holds the 128-GPU design ($5.08M): the
    budget row binds and says the tokens per second it buys, the chosen and relaxed runs' own figures."""
    from designer.solve.sensitivity import sensitivity

    inputs = load_inputs(write_workbook(tmp_path / "tps.xlsx", objective_book("max_tokens_per_s",
                                                                              budget_usd=4_700_000)))
    chosen = solve(inputs, SolveOptions())
    assert chosen["training"]["gpus"] == 64
    r = [r for r in sensitivity(inputs, chosen)["rows"] if r["limit"] == "budget_usd"][0]
    assert r["binding"] and r["relaxed"] == pytest.approx(5_170_000) and r["saving_usd"] is None
    faster = solve(replace(inputs, project={**inputs.project, "budget_usd": 5_170_000}), SolveOptions())
    assert faster["training"]["gpus"] == 128
    assert r["run_relaxed"] == pytest.approx(faster["training"]["tokens_per_s"])
    gain = r["run_relaxed"] - r["run_chosen"]
    assert r["effect"] == f"+{gain:,.0f} tokens/s (+{gain / r['run_chosen']:.1%})"
