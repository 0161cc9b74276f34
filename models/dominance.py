"""Dominance pruning of fabric modes before the model is built.

Mode A dominates mode B when, for every node count n that B could serve at any site, A's fabric costs
no more and draws no more power, A holds n nodes too, A is no slower (worst-case latency) and, when a
workload is given, gives each GPU no less bandwidth. Any design using B is then matched or beaten by
the same design using A, so B can be dropped without changing the optimum. Counts per n are the
least the model's sizing rules allow (models.network docstrings), computed here in bulk with numpy.
"""

from __future__ import annotations

import numpy as np

from models.modes import Mode

SAMPLES = 48


def _ceil_div(a: np.ndarray, b: int) -> np.ndarray:
    return -(-a // b)


def _spines(mode: Mode, leaves: np.ndarray) -> np.ndarray:
    """Least divisor j of u1 with j x spine_ports >= u1 x leaves (0 where none fits)."""
    need = mode.u1 * leaves
    out = np.zeros_like(leaves)
    for j in sorted(mode.spine_options(), reverse=True):
        out = np.where(j * mode.spine_ports >= need, j, out)
    return out


def fabric_counts(mode: Mode, n: np.ndarray, rails: int, multiplier: int) -> dict:
    """Switch counts (all planes/rails) and links per cable tier for node counts n."""
    if mode.topology == "rail_optimized":
        leaves = rails * _ceil_div(n, mode.d1)
    elif mode.tiers == 1:
        leaves = np.ones_like(n)
    elif mode.topology == "rail_only":
        leaves = _ceil_div(n, mode.d1)
    else:
        leaves = _ceil_div(rails * n, mode.d1)
        if mode.topology == "leaf_mesh":
            leaves = np.maximum(leaves, 2)
    spines = cores = np.zeros_like(n)
    links = [None]  # node-leaf links are per node: filled by the caller
    if mode.tiers == 2 and mode.topology != "leaf_mesh":
        spines = _spines(mode, leaves)
        links.append(multiplier * leaves * mode.u1)
    elif mode.topology == "leaf_mesh" and mode.tiers == 2:
        links.append(multiplier * leaves * (mode.u1 // 2))
    elif mode.tiers == 3:
        spines = _ceil_div(mode.u1 * leaves, mode.d2)
        cores = _ceil_div(mode.u2 * spines, mode.core_ports)
        links.append(multiplier * leaves * mode.u1)
        links.append(multiplier * spines * mode.u2)
    return {"leaves": multiplier * leaves, "spines": multiplier * spines, "cores": multiplier * cores,
            "links": links}


def cost_power(mode: Mode, n: np.ndarray, switches, nics: int, rails: int, multiplier: int):
    """Fabric cost (USD) and power (W) for node counts n; nodes themselves excluded (equal for all modes)."""
    c = fabric_counts(mode, n, rails, multiplier)
    c["links"][0] = nics * n
    cost = np.zeros(len(n))
    power = np.zeros(len(n))
    for model, count in ((mode.leaf, c["leaves"]), (mode.spine, c["spines"]), (mode.core, c["cores"])):
        if model:
            cost += float(switches.loc[model, "price_usd"]) * count
            power += float(switches.loc[model, "power_w"]) * count
    for cable, links in zip(mode.cables, c["links"]):
        if cable.kind == "transceiver" and cable.links_per_module > 1:
            items = _ceil_div(2 * links, cable.links_per_module)
        else:
            items = cable.modules_per_link * links
        cost += cable.unit_price * items
        power += cable.unit_power_w * items
    return cost, power


def prune(modes: list[Mode], inputs, node_limit: int, bandwidth: dict | None,
          latency_matters: bool = True) -> tuple[list[Mode], dict]:
    """Modes not dominated by another; ``{dropped id: dominating id}``. ``node_limit`` bounds the node
    counts any site can hold; ``bandwidth`` (mode id -> per-GPU Gb/s) is given when a workload counts;
    latency counts unless the objective and constraints are indifferent to it (min_cost without a
    workload: the latency limit has already filtered the modes)."""
    if len(modes) < 2:
        return list(modes), {}
    node = inputs.node_types.loc[inputs.project["node_type"]]
    nics, planes = int(node["nics_per_node"]), int(node["planes"])
    rails = nics // planes
    sw = inputs.switches
    limits = [min(mode.node_cap, node_limit) for mode in modes]
    top = max(limits)
    n = np.arange(1, top + 1, dtype=np.int64)
    arrays = []
    for mode in modes:
        mult = planes * (rails if mode.topology == "rail_only" else 1)
        cost, power = cost_power(mode, n, sw, nics, rails, mult)
        arrays.append((cost, power))
    cost = np.vstack([a[0] for a in arrays])
    power = np.vstack([a[1] for a in arrays])
    # Beyond a mode's own limit it cannot serve: give it infinite cost and power there.
    for i, lim in enumerate(limits):
        cost[i, lim:] = np.inf
        power[i, lim:] = np.inf
    sample = np.unique(np.linspace(0, top - 1, min(SAMPLES, top)).astype(int))
    lat = np.array([m.latency_us for m in modes]) if latency_matters else np.zeros(len(modes))
    bw = np.array([bandwidth[m.id] for m in modes]) if bandwidth else np.zeros(len(modes))
    dropped: dict[str, str] = {}
    alive = np.ones(len(modes), dtype=bool)
    for b in range(len(modes)):
        lim = limits[b]
        # Quick screen on sampled node counts, then the exact check over 1..limit_b.
        cand = (lat <= lat[b] + 1e-12) & (bw >= bw[b] - 1e-9) & alive
        cand[b] = False
        cand &= np.all(cost[:, sample] <= cost[b, sample], axis=1) & np.all(power[:, sample] <= power[b, sample], axis=1)
        for a in np.flatnonzero(cand):
            if np.all(cost[a, :lim] <= cost[b, :lim]) and np.all(power[a, :lim] <= power[b, :lim]):
                same = (np.array_equal(cost[a, :lim], cost[b, :lim]) and np.array_equal(power[a, :lim], power[b, :lim])
                        and lat[a] == lat[b] and bw[a] == bw[b] and limits[a] == lim)
                if same and a > b:
                    continue  # identical: keep the first
                dropped[modes[b].id] = modes[a].id
                alive[b] = False
                break
    return [m for m, keep in zip(modes, alive) if keep], dropped
