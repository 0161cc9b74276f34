"""Model data for one solve: fabric modes enumerated, filtered and pruned, inter-site data, the workload limit."""

from __future__ import annotations

import hashlib
import math
import pickle
from collections import Counter, OrderedDict
from dataclasses import fields, replace

import pandas as pd

from designer.inputs.schema import TRAINING_OBJECTIVES
from designer.solve.training import mode_step_s
from models import workload as wl
from models.dominance import prune
from models.intersite import prepare
from models.modes import Mode, ModeSet, check_deadline, enumerate_modes
from models.network import ModelData, multiplier, site_list, workload_rows


#: the modes and their account of the last few preparations, by fingerprint (prepare_data)
PREPARED: OrderedDict[bytes, tuple[tuple[Mode, ...], ModeSet]] = OrderedDict()
KEPT = 4


def prepare_data(inputs, latency_cap: float | None = None, step_cap: float | None = None,
                 penalty=None, by_latency: bool = False, ends: float | None = None) -> ModelData:
    """Enumerate and filter fabric modes, prepare inter-site data and the workload limit.

    ``latency_cap`` (second min_latency stage) keeps only modes at or below the worst latency found; ``step_cap``
    (the training objectives' levels) only modes whose training step on the job's GPUs is at or below it;
    ``penalty`` (mode -> what the elastic objective charges for choosing it) is one more pruning criterion;
    ``by_latency``: the worst-case latency is a pruning criterion whatever the objective (see at_most); ``ends``:
    the solve's deadline (perf_counter seconds), past which the enumeration and the pruning stop
    (models.modes.PastDeadline).

    The modes kept are a function of the inputs and these arguments alone: the last KEPT preparations are kept by
    a fingerprint of both (the inputs as they are at the call, but for the project keys no preparation reads:
    UNREAD), so a second preparation of the same workbook (the explanation's re-solves, a level probed again, a
    training level's run-weighted solve) reads them instead of enumerating and pruning again (3 s on the
    scale-across example). A penalty (a function) is not fingerprinted: none is kept.

    Under a training objective the step is a pruning criterion (pruning_criteria), so a ``step_cap`` is the
    uncapped preparation's modes at or below it (step_at_most): one preparation serves every level of a GPU
    count, where each level enumerated and pruned anew (training-moe example: 14 preparations -> 2, its search
    79 s -> 27 s)."""
    if step_cap is not None:
        if inputs.project.get("objective") not in TRAINING_OBJECTIVES:
            raise ValueError("a step_cap is a training objective's level: the step is no pruning criterion here")
        return step_at_most(prepare_data(inputs, latency_cap, None, penalty, by_latency, ends), step_cap)
    key = None if penalty is not None else fingerprint(inputs, latency_cap, by_latency)
    if key in PREPARED:
        PREPARED.move_to_end(key)
        modes, modeset = PREPARED[key]
        sites = site_list(inputs)
        data = ModelData(inputs=inputs, modes=list(modes), sites=sites, inter=prepare(inputs, sites))
        data.modeset = copied(modeset)
        data.workload = workload_of(inputs)
    else:
        if latency_cap is not None and penalty is None and latency_ranked(inputs, by_latency):
            data = latency_capped(prepare_data(inputs, by_latency=by_latency, ends=ends), latency_cap, ends)
        else:
            data = pruned(inputs, latency_cap, penalty, by_latency, ends)
        if key is not None:
            PREPARED[key] = (tuple(data.modes), copied(data.modeset))
            while len(PREPARED) > KEPT:
                PREPARED.popitem(last=False)
    if data.workload is not None:
        data.intra_s = intra_bounds(data)
    data.multiplier = {i: multiplier(mode, data.node) for i, mode in enumerate(data.modes)}
    data.modeset.final = len(data.modes)  # the summary counts what the model gets
    return data


#: project keys the preparation never reads (the model's budget and energy rows do): workbooks that differ only in
#: them share a preparation
UNREAD = ("budget_usd", "horizon_years")


def fingerprint(inputs, *args) -> bytes:
    """A digest of the inputs as they are now (each table by its index, columns and values: a DataFrame's own
    pickle carries pandas's caches, which reading it fills; the project without UNREAD) and the preparation's
    arguments."""
    state = [value.to_dict("split") if isinstance(value, pd.DataFrame)
             else {k: v for k, v in value.items() if k not in UNREAD} if f.name == "project" else value
             for f, value in ((f, getattr(inputs, f.name)) for f in fields(inputs))]
    return hashlib.sha256(pickle.dumps((state, args), protocol=pickle.HIGHEST_PROTOCOL)).digest()


def copied(modeset: ModeSet) -> ModeSet:
    """A modeset whose account (and list of modes) its reader may change without changing ``modeset``; the modes
    themselves are immutable and shared."""
    return replace(modeset, modes=list(modeset.modes), filtered=Counter(modeset.filtered),
                   examples=dict(modeset.examples))


def workload_of(inputs) -> dict | None:
    """The workload's parameters when it limits the communication time (max_comm_fraction), else None."""
    if inputs.workload and inputs.workload.get("max_comm_fraction") is not None:
        return wl.parameters(inputs.workload, inputs.project["gpus_required"])
    return None


def pruned(inputs, latency_cap: float | None, penalty, by_latency: bool, ends: float | None) -> ModelData:
    """prepare_data's work: the modes enumerated, filtered and pruned, in the model data with its inter-site
    data and the workload's parameters."""
    modeset = enumerate_modes(inputs, ends, splits=every_split_applies(inputs))
    if latency_cap is not None:
        slower = [m for m in modeset.modes if m.latency_us > latency_cap + 1e-9]
        modeset.filtered["slower than the least worst-case latency (min_latency objective)"] += len(slower)
        modeset.modes = [m for m in modeset.modes if m.latency_us <= latency_cap + 1e-9]
    check_deadline(ends, f"{len(modeset.modes):,} modes enumerated")
    sites = site_list(inputs)
    data = ModelData(inputs=inputs, modes=modeset.modes, sites=sites, inter=prepare(inputs, sites))
    data.modeset = modeset
    data.workload = workload_of(inputs)
    if data.workload is not None:
        data.intra_s = intra_bounds(data)
        reason = "intra-site all-reduce estimate above the workload's time limit at every site"
        usable = {i for (s, i), t in data.intra_s.items() if t <= data.workload["t_max_s"]}
        for i, mode in enumerate(data.modes):
            if i not in usable:
                data.modeset.filtered[reason] += 1
                data.modeset.examples.setdefault(reason, mode.id)
        data.modes = [mode for i, mode in enumerate(data.modes) if i in usable]
    if data.inter.routes and float(inputs.project["dci_ratio"]) > 0 and not data.single_site_possible():
        # every open site carries inter-site traffic: a fabric no DCI router can join is of no use
        reason = "no DCI router can join its leaves, and more than one site must open"
        alone = [mode for mode in data.modes if not mode.attach]
        if alone:
            modeset.filtered[reason] += len(alone)
            modeset.examples.setdefault(reason, alone[0].id)
            data.modes = [mode for mode in data.modes if mode.attach]
    dominance_pruned(data, pruning_criteria(data, latency_cap, penalty, by_latency), penalty, ends)
    if data.modes:  # the enumerated modes (313,344 with 60 switch models) are let go; the diagnosis reads them
        modeset.modes = data.modes  # only when none is kept
    return data


DOMINATED = "dominated by a mode no costlier, no hotter, no slower at every size"


def dominance_pruned(data: ModelData, criteria, penalty, ends: float | None) -> None:
    """data.modes without those another mode dominates (models.dominance.prune; ``criteria`` the further figures
    compared), counted in data.modeset."""
    # DCI routers take leaf ports: up to V endpoints beyond a site's nodes
    window = max((data.most_attachments(s) for s in data.sites), default=0) if data.inter.routes else 0
    limits = {s: data.site_node_limit(s) + (data.most_attachments(s) if window else 0) for s in data.sites}
    # one usable site holds the whole job: its node count is the job's (an elastic model's demand may fall short)
    only = None
    if len(data.sites) == 1 and penalty is None:
        only = -(-int(data.inputs.project["gpus_required"]) // int(data.node["gpus_per_node"]))
    data.modes, dominated = prune(data.modes, data.inputs, limits, criteria, window, ends, only)
    if dominated:
        data.modeset.filtered[DOMINATED] += len(dominated)
        data.modeset.examples.setdefault(DOMINATED, next(iter(dominated)))


def latency_ranked(inputs, by_latency: bool) -> bool:
    """Whether a preparation without a latency cap prunes with the worst-case latency as a criterion."""
    return by_latency or inputs.project.get("objective") == "min_latency"


def latency_capped(data: ModelData, latency_cap: float, ends: float | None) -> ModelData:
    """What preparing ``data``'s workbook with ``latency_cap`` keeps, from ``data`` (prepared without a cap, the
    latency a pruning criterion): its modes at or below the cap, pruned again without the latency criterion. A mode
    that one without it dominates is dominated by one ``data`` kept (dominance is transitive: the kept mode that
    dominates the dominator, or the dominator itself), so pruning these few modes keeps what pruning every enumerated
    mode at or below the cap would (up to which of two identical modes stays). The min_latency objective's second
    preparation on the default example: 1,079 modes enumerated and pruned again, 0.15 s; its first's 55, 0.04 s."""
    capped = restricted(data, lambda mode: mode.latency_us <= latency_cap + 1e-9,
                        "slower than the least worst-case latency (min_latency objective)")
    dominance_pruned(capped, pruning_criteria(capped, latency_cap), None, ends)
    return capped


INF = math.inf


def every_split_applies(inputs) -> bool:
    """Whether a 2-tier Clos offers every leaf split within max_oversubscription (models.splits), not the grid's
    levels alone: under the cost objectives, on a workbook of one usable site. The training objectives read a mode's
    one oversubscription in its step. With more sites a site's node count ranges over its whole limit, and the
    options some count needs grew the default example's Clos pairs from 6 to 63 options each and HiGHS from 1.3 to
    193 s (README Performance)."""
    return inputs.project.get("objective") not in TRAINING_OBJECTIVES and len(site_list(inputs)) == 1


def at_most(data: ModelData, level: float) -> ModelData:
    """``data`` (pruned with the worst-case latency as a criterion) restricted to the modes at or below ``level``:
    a mode is dropped there only for one no slower, so what is left is what pruning the modes at or below the
    level would keep (up to which of two identical modes stays): the min_latency level probes read it instead of
    enumerating and pruning again."""
    return restricted(data, lambda mode: mode.latency_us <= level + 1e-9,
                      "slower than the least worst-case latency (min_latency objective)")


def step_at_most(data: ModelData, step_cap: float) -> ModelData:
    """``data`` (pruned under a training objective: the step a criterion) restricted to the modes whose training
    step is at or below ``step_cap``: by at_most's argument, what pruning those modes alone keeps."""
    return restricted(data, lambda mode: mode_step_s(data.inputs, mode) <= step_cap * (1 + 1e-9),
                      "training step above the level probed (training objective)")


def restricted(data: ModelData, keep, reason: str) -> ModelData:
    """``data`` with only the modes ``keep(mode)`` holds for, the others counted as filtered for ``reason``."""
    filtered, examples = Counter(data.modeset.filtered), dict(data.modeset.examples)
    kept, dropped = [], []
    for mode in data.modes:
        (kept if keep(mode) else dropped).append(mode)
    if dropped:
        filtered[reason] += len(dropped)
        examples.setdefault(reason, dropped[0].id)
    capped = replace(data, modes=kept, intra_s={}, _limits=None, _attachments={}, _support_m={})
    capped.modeset = ModeSet(kept, filtered, examples, len(kept))
    if capped.workload is not None:
        capped.intra_s = intra_bounds(capped)
    capped.multiplier = {i: multiplier(mode, capped.node) for i, mode in enumerate(kept)}
    return capped


def pruning_criteria(data: ModelData, latency_cap: float | None, penalty=None, by_latency: bool = False):
    """Figures besides cost and power that the model reads from a mode (lower is better): the worst-case
    latency when it is the objective (first min_latency stage), the training step under a training objective,
    the intra-site all-reduce bound at each site when a workload is given, and the elastic model's penalty."""
    columns = []
    if penalty is not None:
        columns.append([penalty(mode) for mode in data.modes])
    if latency_cap is None and latency_ranked(data.inputs, by_latency):
        columns.append([mode.latency_us for mode in data.modes])
    if data.inputs.project.get("objective") in TRAINING_OBJECTIVES:  # a faster step may be worth its cost
        columns.append([mode_step_s(data.inputs, mode) for mode in data.modes])
    if data.workload is not None:
        bounds = intra_bounds(data)
        allowed = {s: [i for i in range(len(data.modes)) if (s, i) in bounds and bounds[s, i] <= data.workload["t_max_s"]]
                   for s in data.sites}
        data.intra_s = bounds
        if workload_rows(data, allowed)[2]:
            columns += [[bounds.get((s, i), INF) for i in range(len(data.modes))] for s in data.sites]
        else:  # the inter-site rows are implied: only where a mode is allowed matters
            columns += [[0.0 if bounds.get((s, i), INF) <= data.workload["t_max_s"] else 1.0
                         for i in range(len(data.modes))] for s in data.sites]
    return list(zip(*columns)) if columns else None


def intra_bounds(data: ModelData) -> dict:
    """Upper bound on each (site, mode)'s intra-site all-reduce time (where the mode applies): over the most GPUs the site could
    hold for the job by space and power (all of the job's GPUs for a single-site design: then exact). Each
    (site, mode) is computed once for ``data`` (its modes are filtered and pruned between the calls)."""
    params = data.workload
    node = data.node
    gpn = int(node["gpus_per_node"])
    efficiency = data.inputs.protocols["efficiency"].astype(float).to_dict()
    bounds = {}
    for s in data.sites:
        n = min(params["n_gpus"], gpn * data.site_node_limit(s))
        for i, mode in enumerate(data.modes):
            if s not in mode.sites:
                continue
            key = (s, mode.id)
            if key not in data.intra_memo:
                bw, lat = wl.intra_s(params["bytes"], n, node,
                                     wl.per_gpu_gbps(node, efficiency[mode.protocol], mode.oversubscription),
                                     mode.latency_us)
                data.intra_memo[key] = bw + lat
            bounds[s, i] = data.intra_memo[key]
    return bounds

