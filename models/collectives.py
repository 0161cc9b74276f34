"""Collective times by the conventions of nccl-tests and NCCL's alpha-beta model; bus bandwidth as nccl-tests says it.

nccl-tests (doc/PERFORMANCE.md, NVIDIA/nccl-tests): algbw = S / t; busbw = algbw x factor with factor 2(n-1)/n for
all-reduce, (n-1)/n for reduce-scatter, all-gather and all-to-all, 1 for send/recv. With S bytes per member, B the
per-member bandwidth one way and alpha one step's latency (NCCL src/graph/tuning.cc, 2.x: time = latency + bytes /
bandwidth; ring all-reduce takes 2(n-1) steps; tree 2 log2(n) steps up and down):

    ring all-reduce          2(n-1)/n x S / B + 2(n-1) alpha
    tree all-reduce          2 S / B + 2 log2(n) alpha         (every member sends and receives S on the way up and
                                                                 again on the way down: NCCL's double binary tree)
    in-network all-reduce    S / B + 2 alpha                    (SHARP: a member sends S up once and receives the sum
                                                                 once, about twice the ring's algbw: calculon issue 7)
    send/recv                S / B + alpha

NCCL takes the faster of ring and tree for the size (tuning.cc); in-network reduction joins the choice where every
switch on the path reduces (``inr``). Units: bytes, Gb/s, microseconds in; seconds out.

Across domains (``nccl_all_reduce``: m scale-up domains of p members each, n = p m) NCCL runs one channel per rail:
a channel's ring passes every member once and leaves each domain through its own NIC, so the p NICs of a domain
carry the p channels side by side and each member's NVLink carries all of them. The bandwidth a member sees is
B = min(p x B_fabric, B_nvlink); ring latency = (2(n-1) - 2(m-1)) x alpha_nvlink + 2(m-1) x alpha_fabric, tree
latency = 2((p-1) alpha_nvlink + log2(m) alpha_fabric) (tuning.cc, the ring's nInter = 2(nNodes-1)). In-network
reduction reduces inside the domain over NVLink, then each member's S / p share goes up to the switches and back:
max(2(p-1)/p x S / B_nvlink, S / (p x B_fabric)) + 2(p-1) alpha_nvlink + 2 alpha_fabric.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

BUSBW_FACTOR = {  # nccl-tests doc/PERFORMANCE.md
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "all_to_all": lambda n: (n - 1) / n,
    "send_recv": lambda n: 1.0,
}


@dataclass(frozen=True)
class Timed:
    """One collective as run: the algorithm NCCL would take, its time, and the bandwidth terms it splits into."""

    op: str
    algorithm: str
    n: int
    bytes: float
    bandwidth_s: float
    latency_s: float

    @property
    def time_s(self) -> float:
        return self.bandwidth_s + self.latency_s


def seconds(size_bytes: float, gbps: float) -> float:
    """Time to move ``size_bytes`` at ``gbps`` Gb/s."""
    return size_bytes * 8 / (gbps * 1e9)


def algbw_gbps(size_bytes: float, time_s: float) -> float:
    """nccl-tests algbw = S / t, in GB/s (as nccl-tests prints it)."""
    return size_bytes / time_s / 1e9 if time_s > 0 else 0.0


def busbw_gbps(op: str, n: int, size_bytes: float, time_s: float) -> float:
    """nccl-tests busbw = algbw x the op's factor, in GB/s."""
    return algbw_gbps(size_bytes, time_s) * BUSBW_FACTOR[op](n) if n > 1 else 0.0


def ring_all_reduce(size: float, n: int, gbps: float, alpha_us: float) -> Timed:
    return Timed("all_reduce", "ring", n, size, 2 * (n - 1) / n * seconds(size, gbps), 2 * (n - 1) * alpha_us / 1e6)


def tree_all_reduce(size: float, n: int, gbps: float, alpha_us: float) -> Timed:
    return Timed("all_reduce", "tree", n, size, 2 * seconds(size, gbps), 2 * math.log2(n) * alpha_us / 1e6)


def inr_all_reduce(size: float, n: int, gbps: float, alpha_us: float) -> Timed:
    return Timed("all_reduce", "in_network", n, size, seconds(size, gbps), 2 * alpha_us / 1e6)


def all_reduce(size: float, n: int, gbps: float, alpha_us: float, inr: bool = False) -> Timed:
    """The fastest of ring, tree and (where the switches reduce) in-network all-reduce; nothing to do for n = 1."""
    if n <= 1:
        return Timed("all_reduce", "none", n, size, 0.0, 0.0)
    options = [ring_all_reduce(size, n, gbps, alpha_us), tree_all_reduce(size, n, gbps, alpha_us)]
    if inr:
        options.append(inr_all_reduce(size, n, gbps, alpha_us))
    return min(options, key=lambda t: t.time_s)


def send_recv(size: float, gbps: float, alpha_us: float) -> Timed:
    return Timed("send_recv", "p2p", 2, size, seconds(size, gbps), alpha_us / 1e6)


def nccl_all_reduce(size: float, p: int, m: int, nvlink_gbps: float, nvlink_us: float, fabric_gbps: float,
                    fabric_us: float, inr: bool = False) -> Timed:
    """All-reduce over m domains of p members as NCCL runs it (ring, tree or in-network, the fastest)."""
    n = p * m
    if m <= 1:
        return all_reduce(size, p, nvlink_gbps, nvlink_us)
    gbps = min(p * fabric_gbps, nvlink_gbps)
    inter = 2 * (m - 1)
    ring = Timed("all_reduce", "ring", n, size, 2 * (n - 1) / n * seconds(size, gbps),
                 ((2 * (n - 1) - inter) * nvlink_us + inter * fabric_us) / 1e6)
    tree = Timed("all_reduce", "tree", n, size, 2 * seconds(size, gbps),
                 2 * ((p - 1) * nvlink_us + math.log2(m) * fabric_us) / 1e6)
    options = [ring, tree]
    if inr:
        inner = 2 * (p - 1) / p * seconds(size, nvlink_gbps) if p > 1 else 0.0
        options.append(Timed("all_reduce", "in_network", n, size, max(inner, seconds(size / p, fabric_gbps)),
                             (2 * (p - 1) * nvlink_us + 2 * fabric_us) / 1e6))
    return min(options, key=lambda t: t.time_s)
