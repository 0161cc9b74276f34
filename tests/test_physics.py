"""Physics: fiber delay, bandwidth-delay product, amplifiers, channels, per-mode latency, all-reduce time."""

from __future__ import annotations

import pytest
from test_model import NODE, design, opened, tables
from test_modes import by_variant, modes_of

from designer.errors import Infeasible
from models import workload as wl
from models.intersite import (
    FIBER_US_PER_KM,
    amplifiers_per_pair,
    bdp_mb,
    channels_per_pair,
    rtt_ms,
)
from models.modes import PROPAGATION_NS_PER_M


def test_fiber_delay_and_rtt():
    assert FIBER_US_PER_KM == 4.9
    assert rtt_ms(100) == pytest.approx(0.98)  # 2 x 4.9 us x 100 km
    assert rtt_ms(1000) == pytest.approx(9.8)  # "1000 km ~ 10 ms RTT"
    assert rtt_ms(2) == pytest.approx(0.0196)


def test_bandwidth_delay_product():
    assert bdp_mb(800, rtt_ms(100)) == pytest.approx(98.0)  # 800 Gb/s x 0.98 ms / 8 = 98 MB
    assert bdp_mb(400, rtt_ms(100)) == pytest.approx(49.0)
    assert bdp_mb(800, rtt_ms(1000)) == pytest.approx(980.0)
    assert bdp_mb(0, rtt_ms(100)) == 0


@pytest.mark.parametrize("km, spacing, amps", [
    (2, 80, 0), (79, 80, 0), (80, 80, 0), (81, 80, 1), (100, 80, 1), (160, 80, 1), (161, 80, 2),
    (620, 80, 7), (100, 40, 2), (1000, 100, 9),
])
def test_amplifiers_per_pair(km, spacing, amps):
    """ceil(d / spacing) - 1: one in-line amplifier every spacing km, none at the ends."""
    assert amplifiers_per_pair(km, spacing) == amps


@pytest.mark.parametrize("ghz, channels", [(75, 64), (150, 32), (100, 48), (50, 96), (1600, 3), (4800, 1),
                                           (4000, 1)])
def test_channels_per_pair(ghz, channels):
    """floor(4800 GHz of C band / channel width)."""
    assert channels_per_pair(ghz) == channels


# worst-case one-way latency with the test catalog: 2 x 500 ns NIC, 100 ns a switch hop,
# 5 ns/m over the typical lengths (node-leaf 3 m, leaf-spine 50 m, spine-core 150 m), NVLink 300 ns
LATENCY_US = {
    # (topology, tiers): (switching, propagation, nvlink); propagation in m x 5 ns
    ("leaf_spine", 2): (0.3, 2 * (3 + 50) * 5e-3, 0.0),
    ("fat_tree_3", 3): (0.5, 2 * (3 + 50 + 150) * 5e-3, 0.0),
    ("rail_optimized", 2): (0.3, 2 * (3 + 50) * 5e-3, 0.0),
    ("rail_optimized", 3): (0.5, 2 * (3 + 50 + 150) * 5e-3, 0.0),
    ("rail_only", 1): (0.1, 2 * 3 * 5e-3, 0.3),
    ("rail_only", 2): (0.3, 2 * (3 + 50) * 5e-3, 0.3),
    ("leaf_mesh", 1): (0.1, 2 * 3 * 5e-3, 0.0),
    ("leaf_mesh", 2): (0.2, (2 * 3 + 50) * 5e-3, 0.0),
}


def test_latency_per_mode(tmp_path):
    """2 x NIC + hops x switch + 5 ns/m of cable (+ the NVLink hop of rail-only designs)."""
    assert PROPAGATION_NS_PER_M == 5.0
    modes = by_variant(modes_of(tmp_path, tables(8)))
    assert set(modes) == set(LATENCY_US)
    for key, (switching, propagation, nvlink) in LATENCY_US.items():
        mode = modes[key]
        expected = {"nic": 1.0, "switching": switching, "propagation": propagation, "nvlink": nvlink}
        assert mode.latency_breakdown_us == pytest.approx(expected), key
        assert mode.latency_us == pytest.approx(sum(expected.values())), key
        assert switching == pytest.approx(mode.hops * 0.1), key


def test_latency_follows_cable_lengths_and_protocol(tmp_path):
    """fat_tree_3 with 2/30/100 m cables and 800 ns NICs: 1.6 + 0.5 + 2 x 132 m x 5 ns = 3.42 us."""
    book = tables(8, topologies_allowed="fat_tree_3", cable_m_node_leaf=2, cable_m_leaf_spine=30,
                  cable_m_spine_core=100)
    book["protocols"] = [dict(book["protocols"][0], nic_latency_ns=800)]
    mode = by_variant(modes_of(tmp_path, book))["fat_tree_3", 3]
    assert mode.latency_breakdown_us == pytest.approx({"nic": 1.6, "switching": 0.5, "propagation": 1.32,
                                                       "nvlink": 0.0})
    assert mode.latency_us == pytest.approx(3.42)


# --- the all-reduce estimate (models.workload) -------------------------------------------------------

LLM = {"model_params_billion": 70, "bytes_per_gradient": 2, "step_compute_ms": 6000, "grad_accum_steps": 8,
       "max_comm_fraction": 0.25}


def test_workload_parameters():
    """S = 70e9 x 2 bytes; T_max = f / (1 - f) x A x compute = 0.25 / 0.75 x 8 x 6 s = 16 s."""
    p = wl.parameters(LLM, 50_000)
    assert p["bytes"] == pytest.approx(1.4e11)
    assert p["t_max_s"] == pytest.approx(16.0)
    assert (p["n_gpus"], p["grad_accum_steps"], p["step_compute_s"]) == (50_000, 8, 6.0)
    defaults = wl.parameters({"model_params_billion": 1, "step_compute_ms": 1000, "max_comm_fraction": 0.2}, 8)
    assert (defaults["bytes"], defaults["grad_accum_steps"]) == (2e9, 1)
    assert defaults["t_max_s"] == pytest.approx(0.25)


def test_intra_site_all_reduce_runs_a_channel_per_rail():
    """64 GPUs in 8 nodes of 8 at 400 Gb/s a GPU, alpha 2 us, NVLink 300 ns (no scaleup_gbps: never the
    bottleneck): a GPU sees 8 x 400 = 3,200 Gb/s; ring 2 x 63/64 x 1.4e11 B x 8 / 3,200e9 = 0.6890625 s, latency
    (126 - 14) x 0.3 + 14 x 2 us = 61.6 us (the tree's 2 x 1.4e11 x 8 / 3,200e9 = 0.7 s is slower). A flat ring
    at 400 Gb/s would take 8 times as long."""
    bw, lat = wl.intra_s(1.4e11, 64, NODE, 400, 2.0)
    assert bw == pytest.approx(0.6890625)
    assert lat == pytest.approx(61.6e-6)
    assert wl.intra_s(1.4e11, 1, NODE, 400, 2.0) == (0.0, 0.0)
    # NVLink at 2,000 Gb/s a GPU below the rails' 3,200: it bounds the ring
    bw, _ = wl.intra_s(1.4e11, 64, dict(NODE, scaleup_gbps=2000), 400, 2.0)
    assert bw == pytest.approx(2 * 63 / 64 * 1.4e11 * 8 / 2000e9)


def test_per_gpu_bandwidth_and_inter_site_term():
    """8 x 400G NICs over 8 GPUs at efficiency 0.9 and 2:1 oversubscription: 180 Gb/s a GPU.
    Across k = 3 sites: 2 x 2/3 x 1.4e11 B x 8 = 1,493.33 Gb x s, divided by the site's capacity."""
    assert wl.per_gpu_gbps(NODE, 0.9, 2.0) == pytest.approx(180.0)
    assert wl.per_gpu_gbps(dict(NODE, nics_per_node=16), 1.0, 1.0) == pytest.approx(800.0)
    p = wl.parameters(LLM, 50_000)
    assert wl.inter_coefficient(p, 3) == pytest.approx(4 / 3 * 1120)
    assert wl.inter_coefficient(p, 2) == pytest.approx(1120)


def test_gradient_accumulation_divides_the_communication_share():
    """2 s of communication against 8 x 6 s of compute: 2 / 50 = 4%; with A = 1: 2 / 8 = 25%."""
    assert wl.comm_fraction(wl.parameters(LLM, 8), 2.0) == pytest.approx(0.04)
    assert wl.comm_fraction(wl.parameters(dict(LLM, grad_accum_steps=1), 8), 2.0) == pytest.approx(0.25)


SMALL_JOB = {"model_params_billion": 1, "step_compute_ms": 1000, "max_comm_fraction": 0.2}


def test_design_reports_the_estimate(tmp_path):
    """The 32-GPU single-switch design of test_model: 360 Gb/s a GPU (3,200 x 0.9 / 8), alpha 1.13 us, 4 nodes of 8
    GPUs: a channel per rail, 8 x 360 = 2,880 Gb/s a GPU. Ring bandwidth term 2 x 31/32 x 2e9 B x 8 / 2,880e9 =
    10.76389 ms; latency (62 - 6) x 0.3 us over NVLink + 6 x 1.13 us between nodes = 0.02358 ms; 10.78747 ms against
    1 s of compute; the limit allows 0.2 / 0.8 x 1 s = 250 ms."""
    book = tables(32)
    book["workload"] = SMALL_JOB
    est = design(tmp_path, book)["workload"]
    assert est["bandwidth_gbps_per_gpu"] == pytest.approx(360.0)
    assert est["intra_bw_ms"] == pytest.approx(10.76388889)
    assert est["intra_latency_ms"] == pytest.approx(0.02358)
    assert est["time_ms"] == pytest.approx(10.78746889)
    assert est["comm_fraction"] == pytest.approx(0.01078746889 / 1.01078746889)
    assert est["t_max_ms"] == pytest.approx(250.0) and est["limit"] == 0.2
    assert (est["n_gpus"], est["sites"], est["inter_bw_ms"]) == (32, 1, 0.0)


def test_workload_limit_and_accumulation(tmp_path):
    """max_comm_fraction 0.01 allows 0.01 / 0.99 s = 10.10 ms < 10.79 ms: infeasible; accumulating 2
    micro-batches doubles the allowance to 20.2 ms: feasible again."""
    book = tables(32)
    book["workload"] = dict(SMALL_JOB, max_comm_fraction=0.01)
    with pytest.raises(Infeasible) as caught:
        design(tmp_path, book)
    assert "all-reduce" in caught.value.reason and "time limit" in caught.value.reason
    book["workload"] = dict(SMALL_JOB, max_comm_fraction=0.01, grad_accum_steps=2)
    sol = design(tmp_path, book)
    assert opened(sol)["s1"]["nodes"] == 4
    assert sol["workload"]["t_max_ms"] == pytest.approx(2 * 0.01 / 0.99 * 1000)
