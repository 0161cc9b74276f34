"""Dominance pruning of fabric modes before the model is built.

Mode A dominates mode B when, for every node count n that B could serve at any site, A's fabric costs
no more and draws no more power, A holds n nodes too, and A is no worse on every other criterion the
model reads (the caller's ``criteria``: worst-case latency for min_latency, the intra-site all-reduce
bound at each site when a workload is given). Any design using B is then matched or beaten by
the same design using A, so B can be dropped without changing the optimum. Counts per n are the
least the model's sizing rules allow (models.network docstrings), computed here in bulk with numpy.

Where sites have routes, a fabric's leaves serve the DCI routers' attachments too (models.network
define_dci_attachment): its switches (and the links above the leaves) are sized for e = n + v endpoints, n nodes
and v <= V attachments, while its node links follow the n nodes alone: cost(n, e) = S(e) + L(n). A then
dominates B only with the same attachment cables (or B has none) and cost_A(n, e) <= cost_B(n, e) (and power) for
every e up to B's limit and every n in [max(1, e - V), e]:

    S_A(e) - S_B(e) <= min_{e - V <= n <= e} (L_B(n) - L_A(n))

(the window minimum depends only on the two modes' node-link cables: computed once per pair). The caller's
``site_limits`` are the endpoint limits (nodes plus the most attachments); V is ``window``.

A fabric's cost includes the fiber plant its transceiver links take (models.network.define_fiber_plant; none when
the project switches it off): a jumper per link within cable_in_rack_m, two jumpers and a trunk per longer
(patched) link, linear and in S or L as its tier is; and the site's ceil(2 (x + long) / P) panels, x its other
patched links. Putting A for B grows them by at most ceil(2 max(0, d) / P) panels (ceil(a + b) <= ceil(a) +
ceil(b)), d = long_A(n) - long_B(n) at B's least counts (its real links are no fewer), with attachments
d = dS(e) + max_{e - V <= n <= e} dL(n): A's cost takes them on top, B's none.

Modes of one port structure and one module structure per cable tier (module_structure) share every count: their
figures are the same counts times factors (terms: prices, powers, fiber plant, patched links). One whose factors,
criteria, node limit and sites are each no worse dominates the other at every count (_shadowed), which settles most
modes before any figure over every count is computed (92,256 of the scale-across example's modes in 518 such
groups; of the default example's 621 in groups of more than one, 531 or 578, the latency a criterion or not).

A 2-tier Clos of every leaf split (Mode.splits, models.splits) is a design of one of its options at each count: as
A, its figures are those of its cheapest option there; as B, each figure's least over its options (no design of it
is below them), so A dominates it only where it beats every option. A 3-tier one is never B.
"""

from __future__ import annotations

import itertools

import numpy as np

from models.modes import Mode, check_deadline, plant_bounds, plant_rows, split_figures, switch_rows, unit_shape
from models.splits import option_figures, panels_usd, static_splits, three_tier_options

SAMPLES = 48
STRONG = 64  # modes per screening count tried first as dominators
CHECK_EVERY = 256  # modes checked between two looks at the deadline


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
            "links": links, "plane_leaves": leaves, "plane_spines": spines}


def port_structure(mode: Mode, multiplier: int) -> tuple:
    """What a mode's switch and link counts depend on (cost_power caches them by it)."""
    return (mode.topology, mode.tiers, mode.d1, mode.u1, mode.d2, mode.u2, mode.spine_ports, mode.core_ports,
            multiplier)


def module_shape(t: int, cable) -> tuple:
    """What cable tier t's items depend on besides the port structure (cable_items)."""
    return t, cable.links_per_module, cable.modules_per_link, cable.cable, cable.tier


def module_structure(mode: Mode, multiplier: int) -> tuple:
    """The port structure and each cable tier's module shape: what the mode's counts and items depend on (modes
    alike in it are sampled together)."""
    return port_structure(mode, multiplier) + tuple(module_shape(t, cable) for t, cable in enumerate(mode.cables))


def cable_items(mode: Mode, t: int, c: dict, n: np.ndarray, nics: int) -> np.ndarray:
    """Items of cable tier t, as models.network.cable_items counts them (twin-port modules per switch, splitter
    cables in aggregate)."""
    cable = mode.cables[t]
    links = c["links"][t]
    k = cable.links_per_module
    if k == 1:
        return cable.modules_per_link * links
    if t == 0:
        return (0 if cable.cable else -(-nics // k) * n) + _ceil_div(links, k)
    if cable.tier == "spine_core":
        return -(-mode.u2 // k) * c["spines"] + _ceil_div(links, k)
    leaf_ends = -(-mode.u1 // k) * c["leaves"]
    if mode.topology == "leaf_mesh":
        return leaf_ends
    if mode.tiers == 2:
        per_spine = np.where(c["plane_spines"] > 0, mode.u1 * c["plane_leaves"] // np.maximum(c["plane_spines"], 1), 0)
        return leaf_ends + c["spines"] * _ceil_div(per_spine, k)
    return leaf_ends + _ceil_div(links, k)


def counted(mode: Mode, n: np.ndarray, rails: int, multiplier: int, nics: int, counts: dict | None) -> dict:
    """The switch and link counts of the mode's port structure for node counts n (fabric_counts, the node links
    added), cached in ``counts`` by port_structure when given, with room for its items (items)."""
    whole = counts.get(port_structure(mode, multiplier)) if counts is not None else None
    if whole is None:
        whole = fabric_counts(mode, n, rails, multiplier)
        whole["links"][0] = nics * n
        whole["items"] = {}  # module_shape -> its items for n (cable_items)
        if counts is not None:
            counts[port_structure(mode, multiplier)] = whole
    return whole


def items(mode: Mode, t: int, whole: dict, n: np.ndarray, nics: int) -> np.ndarray:
    """Cable tier t's items for the node counts n that ``whole`` (counted's) holds, once per module shape."""
    shape = module_shape(t, mode.cables[t])
    if shape not in whole["items"]:
        whole["items"][shape] = cable_items(mode, t, whole, n, nics)
    return whole["items"][shape]


def cost_power(mode: Mode, n: np.ndarray, switches: dict, nics: int, rails: int, multiplier: int,
               counts: dict | None = None, tiers: str = "all", plant: tuple = ({}, 0.0), size: int | None = None):
    """Fabric cost (USD), power (W) and patched transceiver links for node counts n; nodes themselves excluded
    (equal for all modes). ``switches`` maps model -> catalog row (models.modes.switch_rows); ``counts`` caches the
    switch and link counts by port structure for one n (modes that differ only in cables or sites share them).
    ``tiers``: "all", "nodes" (the node links alone) or "switches" (the switches and the links above the leaves).
    ``plant``: (plant_rows, cable_in_rack_m); the cost takes each link's least fiber plant (plant_bounds: its
    jumpers and trunk, no panels). ``size``: the figures for the first ``size`` counts of n alone (the cached counts
    are n's)."""
    whole = counted(mode, n, rails, multiplier, nics, counts)
    c, every = whole, n
    if size is not None:
        c = {name: [links[:size] for links in whole["links"]] if name == "links" else whole[name][:size]
             for name in ("leaves", "spines", "cores", "links")}
        n = n[:size]
    cost = np.zeros(len(n))
    power = np.zeros(len(n))
    patched = np.zeros(len(n))
    for model, count in ((mode.leaf, c["leaves"]), (mode.spine, c["spines"]), (mode.core, c["cores"])):
        if model and tiers != "nodes":
            cost += float(switches[model]["price_usd"]) * count
            power += float(switches[model]["power_w"]) * count
    for t, cable in enumerate(mode.cables):
        if (t == 0 and tiers == "switches") or (t > 0 and tiers == "nodes"):
            continue
        tier_items = items(mode, t, whole, every, nics)[:size]
        cost += cable.unit_price * tier_items + plant_bounds(plant[0], cable, plant[1])[0] * c["links"][t]
        power += cable.unit_power_w * tier_items
        if cable.patched(plant[1]):
            patched += c["links"][t]
    return cost, power, patched


def split_cost_power(mode: Mode, n: np.ndarray, inputs, rails: int, multiplier: int, least: bool):
    """A mode of every leaf split (Mode.splits): its switches' and uplinks' cost, power and patched links for
    endpoint counts n (models.splits.option_figures): of the cheapest option at each count (a design it can be: as
    the dominating mode), or ``least``, each figure's least over the options (no design of it is below: as the
    dominated mode)."""
    price, power, patched = option_figures(mode.options(), split_figures(inputs, mode, rails), n)
    if least:
        figures = price.min(axis=0), power.min(axis=0), patched.min(axis=0)
    else:
        cheapest = np.where(price == price.min(axis=0), power, np.inf)
        pick = np.argmin(cheapest, axis=0), np.arange(len(n))
        figures = price[pick], power[pick], patched[pick]
    return tuple(multiplier * f for f in figures)


def sampled(modes: list[Mode], members: list[int], n: np.ndarray, switches: dict, nics: int, rails: int,
            multiplier: int, counts: dict, plant: tuple,
            tiers: str = "all") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """cost_power's cost, power and patched links (``tiers`` "all" or "switches") of the modes ``members`` at node
    counts n, all at once: modes of one port structure and one module structure per cable tier, which share their
    counts and items. The same operations element by element, in the same order (a missing switch adds 0 x its zero
    count), so the same figures to the last bit: the dominance checks compare them with cost_power's."""
    first = modes[members[0]]
    c = counted(first, n, rails, multiplier, nics, counts)
    group = [modes[i] for i in members]
    cost = np.zeros((len(group), len(n)))
    power = np.zeros((len(group), len(n)))
    patched = np.zeros((len(group), len(n)))
    for role, count in (("leaf", c["leaves"]), ("spine", c["spines"]), ("core", c["cores"])):
        models = [getattr(mode, role) for mode in group]
        price = np.array([float(switches[m]["price_usd"]) if m else 0.0 for m in models])
        watts = np.array([float(switches[m]["power_w"]) if m else 0.0 for m in models])
        cost += price[:, None] * count[None, :]
        power += watts[:, None] * count[None, :]
    for t, cable in enumerate(first.cables):
        if t == 0 and tiers == "switches":
            continue
        tier_items = items(first, t, c, n, nics)
        unit = np.array([mode.cables[t].unit_price for mode in group])
        fiber = np.array([plant_bounds(plant[0], mode.cables[t], plant[1])[0] for mode in group])
        watts = np.array([mode.cables[t].unit_power_w for mode in group])
        cost += unit[:, None] * tier_items[None, :] + fiber[:, None] * c["links"][t][None, :]
        power += watts[:, None] * tier_items[None, :]
        long = np.array([mode.cables[t].patched(plant[1]) for mode in group])
        patched += long[:, None] * c["links"][t][None, :]
    return cost, power, patched


def panel_usd(plant: dict, more: np.ndarray) -> np.ndarray:
    """Most the site's panels can grow by when it has ``more`` patched links (models.splits.panels_usd)."""
    panel = plant.get("panel")
    return panels_usd(0.0, 0, more) if panel is None else panels_usd(float(panel["price_usd"]), int(panel["ports"]),
                                                                        more)


def window_min(values: np.ndarray, width: int) -> np.ndarray:
    """out[e] = min(values[max(0, e - width)..e]): minima over spans doubling in length (a sparse table, log2(width)
    vector steps), each window the min of its two overlapping spans of the largest length it holds."""
    out = np.minimum.accumulate(values)  # the windows that start at 0 (e <= width)
    if width + 1 >= len(values):
        return out
    span, table = 1, values.copy()
    while 2 * span <= width + 1:
        table[span:] = np.minimum(table[span:], table[:-span])  # table[e] = min(values[e - 2 span + 1..e])
        span *= 2
    e = np.arange(width, len(values))
    out[width:] = np.minimum(table[e], table[e - (width + 1) + span])
    return out


def prune(modes: list[Mode], inputs, site_limits: dict[str, int], criteria: np.ndarray | None = None,
          window: int = 0, ends: float | None = None, only: int | None = None) -> tuple[list[Mode], dict]:
    """Modes not dominated by another; ``{dropped id: dominating id}``. A mode dominates another only where
    it applies at every site the other does; ``site_limits`` bounds the endpoint counts each site can hold;
    ``criteria`` (modes x k, lower is better) are the further figures a dominating mode must not exceed;
    ``window``: V, the most DCI attachments a site's leaves may hold besides its nodes (the module docstring's
    rule; 0: none); ``ends``: a deadline (perf_counter seconds) checked every CHECK_EVERY modes (PastDeadline);
    ``only``: the one endpoint count any design has (one usable site holding the whole job): compared there alone
    (_at_one_count)."""
    if len(modes) < 2:
        return list(modes), {}
    crit = np.zeros((len(modes), 0)) if criteria is None else np.asarray(criteria, dtype=float)
    check_deadline(ends, f"{len(modes):,} modes to check for dominance")
    modes, crit, dropped = _same_fabric(modes, crit, ends)
    if only is not None:
        kept, more = _at_one_count(modes, crit, inputs, only, ends)
    else:
        kept, more = _pairwise(modes, crit, inputs, site_limits, window, ends)
    return kept, {**dropped, **more}


def three_tier_cost_power(mode: Mode, n: int, inputs, rails: int, multiplier: int, plant: tuple) -> tuple:
    """A 3-tier mode of every split at n endpoints (models.splits.three_tier_options): cost, power and patched links
    of its switches and links above the leaves, of its cheapest (leaf, aggregation) split pair, and each figure's
    least over the pairs; ``plant``: (plant rows as dicts, cable_in_rack_m)."""
    per_endpoint, per_unit = unit_shape(mode.topology, rails)
    leaf, aggregation = three_tier_options(mode.options(), static_splits(mode.splits2), per_endpoint, per_unit,
                                           mode.core_ports, (mode.cables[1].links_per_module,
                                                             mode.cables[2].links_per_module), n, n)
    pairs = [((d, u), split2) for (d, u, _), split2 in itertools.product(leaf, aggregation)]
    figures = three_tier_figures(mode, pairs, n, inputs, rails, multiplier, plant)
    return figures[np.lexsort((figures[:, 1], figures[:, 0]))[0]], figures.min(axis=0)


def three_tier_figures(mode: Mode, pairs: list, n: int, inputs, rails: int, multiplier: int,
                       plant: tuple) -> np.ndarray:
    """Cost, power and patched links (a row each) of a 3-tier fabric's switches and links above the leaves at n
    endpoints, for each pair ((d, u), (d2, u2)) of leaf and aggregation splits: ceil(a n / d) units of b leaves, as
    many aggregation switches as their uplinks need, the cores theirs; a link's items a cable, two transceivers, or
    twin-port modules at each switch's end and pooled at the upper end; each link's least fiber plant."""
    sw = switch_rows(inputs)
    plant, in_rack = plant
    per_endpoint, per_unit = unit_shape(mode.topology, rails)
    rows = []
    for (d, u), (d2, u2) in pairs:
        leaves = per_unit * -(-per_endpoint * n // d)
        aggs = -(-leaves * u // d2)
        switches = ((mode.leaf, leaves), (mode.spine, aggs), (mode.core, -(-aggs * u2 // mode.core_ports)))
        cost = sum(float(sw[m]["price_usd"]) * c for m, c in switches)
        power = sum(float(sw[m]["power_w"]) * c for m, c in switches)
        patched = 0.0
        for cable, links, ends in ((mode.cables[1], leaves * u, (leaves, u)), (mode.cables[2], aggs * u2, (aggs, u2))):
            k = cable.links_per_module
            items = cable.modules_per_link * links if k == 1 else ends[0] * -(-ends[1] // k) + -(-links // k)
            cost += cable.unit_price * items + plant_bounds(plant, cable, in_rack)[0] * links
            power += cable.unit_power_w * items
            patched += links if cable.patched(in_rack) else 0
        rows.append((cost, power, patched))
    return multiplier * np.array(rows, dtype=float).reshape(-1, 3)


def plant_of(inputs) -> tuple[dict, float]:
    """(the fiber plant's rows as plain dicts, cable_in_rack_m): plant_bounds reads them for every cable of every
    mode sized."""
    return ({role: row.to_dict() for role, row in plant_rows(inputs).items()},
            float(inputs.project.get("cable_in_rack_m") or 0.0))


def _at_one_count(modes: list[Mode], crit: np.ndarray, inputs, n: int, ends: float | None = None):
    """Dominance at one endpoint count n (one site, no attachments): A dominates B when A holds n, costs no more
    with the panels its extra patched links may add and draws no more power, each as the module docstring's figures
    (a mode of every split: its cheapest option as A, each figure's least as B), and is no worse on the criteria; a
    mode that cannot hold n serves no design: one that holds it and is no worse on the criteria dominates it, and it
    dominates none (the model's demand rules it out)."""
    node = inputs.node_types.loc[inputs.project["node_type"]]
    nics, planes = int(node["nics_per_node"]), int(node["planes"])
    rails = nics // planes
    sw = switch_rows(inputs)
    plant = plant_of(inputs)
    at, counts, node_links = np.array([n], dtype=np.int64), {}, {}
    mine = np.full((2, len(modes), 3), np.inf)  # [as A, as B] x mode x (cost, power, patched)
    alike: dict[tuple, tuple[int, list[int]]] = {}  # (multiplier, modes) of one module structure, sized together
    links_of = {}  # mode -> its node links' (cost, power, patched)
    for i, mode in enumerate(modes):
        if i % CHECK_EVERY == 0:
            check_deadline(ends, f"{i:,} of {len(modes):,} modes sized for the dominance check")
        if mode.node_cap < n:
            continue
        mult = planes * (rails if mode.topology == "rail_only" else 1)
        key = (mode.cables[0], mult)
        if key not in node_links:
            links = cost_power(mode, at, sw, nics, rails, mult, None, "nodes", plant)
            node_links[key] = np.array([f[0] for f in links])
        links_of[i] = node_links[key]
        if mode.splits and mode.tiers == 2:
            ups = [np.array([f[0] for f in split_cost_power(mode, at, inputs, rails, mult, least)])
                   for least in (False, True)]
            mine[:, i] = np.array(ups) + links_of[i]
        elif mode.splits:
            mine[:, i] = np.array(three_tier_cost_power(mode, n, inputs, rails, mult, plant)) + links_of[i]
        else:
            alike.setdefault(module_structure(mode, mult), (mult, []))[1].append(i)
    for mult, members in alike.values():
        ups = np.hstack(sampled(modes, members, at, sw, nics, rails, mult, counts, plant, "switches"))
        mine[:, members] = ups + np.array([links_of[i] for i in members])
    dropped: dict[str, str] = {}
    fits = np.isfinite(mine[0, :, 0])
    alive = np.ones(len(modes), dtype=bool)
    kept = np.zeros(0, dtype=np.int64)
    order = np.lexsort((np.arange(len(modes)), mine[1, :, 1], mine[1, :, 0]))
    for b in order:
        if len(kept):
            cost = mine[0, kept, 0] + panel_usd(plant[0], mine[0, kept, 2] - mine[1, b, 2])
            ok = ((cost <= mine[1, b, 0]) & (mine[0, kept, 1] <= mine[1, b, 1])
                  & np.all(crit[kept] <= crit[b] + 1e-12, axis=1))
            if ok.any():
                dropped[modes[b].id] = modes[int(kept[np.argmax(ok)])].id
                alive[b] = False
                continue
        if fits[b]:
            kept = np.append(kept, b)
    return [m for m, keep in zip(modes, alive) if keep], dropped


def _same_fabric(modes: list[Mode], crit: np.ndarray, ends: float | None = None):
    """Modes that build the same fabric (they differ only in protocol): keep one of each group unless
    another of the group is better on some criterion. ``ends``: prune's deadline."""
    groups: dict[tuple, list[int]] = {}
    for i, mode in enumerate(modes):
        key = (mode.topology, mode.tiers, mode.leaf, mode.spine, mode.core, mode.g0, mode.g1, mode.g2, mode.d1,
               mode.u1, mode.d2, mode.u2, mode.spine_ports, mode.core_ports, mode.node_cap, mode.cables, mode.sites,
               mode.splits)
        groups.setdefault(key, []).append(i)
    keep = np.ones(len(modes), dtype=bool)
    dropped = {}
    rows = crit.tolist()  # compared a pair at a time: Python's floats, not arrays of a few
    for k, group in enumerate(groups.values()):
        if k % CHECK_EVERY == 0:
            check_deadline(ends, f"{k:,} of {len(groups):,} fabrics checked for protocol twins")
        if not crit.shape[1]:  # no criterion: the first of the group stands for it
            keep[group[1:]] = False
            dropped.update((modes[b].id, modes[group[0]].id) for b in group[1:])
            continue
        for b in group:
            for a in group:
                if (a != b and keep[a] and all(x <= y for x, y in zip(rows[a], rows[b]))
                        and (rows[a] != rows[b] or a < b)):
                    keep[b] = False
                    dropped[modes[b].id] = modes[a].id
                    break
    return [m for m, k in zip(modes, keep) if k], crit[keep], dropped


def _pairwise(modes: list[Mode], crit: np.ndarray, inputs, site_limits: dict[str, int], window: int,
              ends: float | None = None):
    """Dominance between fabrics, screened on sampled node counts, then checked at every count."""
    node = inputs.node_types.loc[inputs.project["node_type"]]
    nics, planes = int(node["nics_per_node"]), int(node["planes"])
    rails = nics // planes
    sw = switch_rows(inputs)
    sites = sorted(site_limits)
    where = np.array([[s in mode.sites for s in sites] for mode in modes], dtype=bool).reshape(len(modes), len(sites))
    limits = np.asarray([min(mode.node_cap, max((site_limits[s] for s in mode.sites if s in site_limits), default=0))
                         for mode in modes], dtype=np.int64)
    mults = [planes * (rails if mode.topology == "rail_only" else 1) for mode in modes]
    top = max(int(limits.max()), 1)
    sample = np.unique(np.linspace(1, top, min(SAMPLES, top)).astype(np.int64))
    cache: dict[tuple[int, bool], tuple[np.ndarray, ...]] = {}
    every, every_counts, sample_counts = np.arange(1, top + 1, dtype=np.int64), {}, {}
    ids: dict = {(): 0}  # an id per set of attachment cables; 0: none
    attach = np.array([ids.setdefault(mode.attach, len(ids)) if window else 0 for mode in modes])
    node_links: dict = {}  # node-link cable -> (cost, power, patched links) of the node links of n = 1..top nodes
    gaps: dict = {}  # (cable of A, cable of B) -> window minima of B's node links less A's (cost, power, -patched)
    plant = plant_of(inputs)

    def full(i: int, least: bool = False) -> tuple[np.ndarray, ...]:
        """Cost, power and patched links of mode i for n = 1..limit_i (what it can hold): everything, or its
        switches and upper links alone where attachments share the leaves; of a mode of every leaf split, its
        cheapest option's (split_cost_power), or ``least`` the least figures over its options."""
        if (i, least) not in cache:
            if modes[i].splits and modes[i].tiers == 2:
                n = every[:limits[i]]
                ups = split_cost_power(modes[i], n, inputs, rails, mults[i], least)
                nodes = () if window else cost_power(modes[i], n, sw, nics, rails, mults[i], None, "nodes", plant)
                cache[i, least] = ups if window else tuple(a + b for a, b in zip(ups, nodes))
            else:
                cache[i, least] = cost_power(modes[i], every, sw, nics, rails, mults[i], every_counts,
                                             "switches" if window else "all", plant, size=limits[i])
        return cache[i, least]

    def links_of(i: int) -> tuple[np.ndarray, ...]:
        key = modes[i].cables[0]
        if key not in node_links:
            node_links[key] = cost_power(modes[i], every, sw, nics, rails, mults[i], None, "nodes", plant)
        return node_links[key]

    def gap(a: int, b: int) -> tuple[np.ndarray, ...]:
        """Window minima over n in [e - V, e] of L_B(n) - L_A(n), cost, power and patched links (zero for one
        cable)."""
        key = (modes[a].cables[0], modes[b].cables[0])
        if key not in gaps:
            (ca, pa, la), (cb, pb, lb) = links_of(a), links_of(b)
            gaps[key] = (window_min(cb - ca, window), window_min(pb - pa, window), window_min(lb - la, window))
        return gaps[key]

    def beats(a: int, b: int, lim: int) -> tuple[bool, bool]:
        """(A dominates B at every count up to lim, and the two are the same there)."""
        (cost_a, power_a, long_a), (cost_b, power_b, long_b) = full(a), full(b, least=True)
        if not window:
            cost_a = cost_a[:lim] + panel_usd(plant[0], long_a[:lim] - long_b[:lim])
            return (bool(np.all(cost_a <= cost_b[:lim]) and np.all(power_a[:lim] <= power_b[:lim])),
                    np.array_equal(cost_a, cost_b[:lim]) and np.array_equal(power_a[:lim], power_b[:lim]))
        slack_cost, slack_power, slack_long = gap(a, b)
        cost_a = cost_a[:lim] + panel_usd(plant[0], long_a[:lim] - long_b[:lim] - slack_long[:lim])
        ok = bool(np.all(cost_a - cost_b[:lim] <= slack_cost[:lim] + 1e-9)
                  and np.all(power_a[:lim] - power_b[:lim] <= slack_power[:lim] + 1e-9))
        return ok, (ok and modes[a].cables[0] == modes[b].cables[0] and np.array_equal(cost_a, cost_b[:lim])
                    and np.array_equal(power_a[:lim], power_b[:lim]))

    s_cost = np.full((len(modes), len(sample)), np.inf)
    s_power = np.full((len(modes), len(sample)), np.inf)
    alike: dict[tuple, list[int]] = {}  # modes of one port structure and one module structure per cable tier
    for i, mode in enumerate(modes):
        alike.setdefault(module_structure(mode, mults[i]), []).append(i)
    figures = np.hstack([crit, -limits[:, None], ~where]).astype(float)
    shadows: dict[int, int] = {}
    for group in alike.values():
        shadows.update(_shadowed(modes, group, attach, figures, sw, plant, ends))
    alike = {key: kept for key, group in alike.items() if (kept := [i for i in group if i not in shadows])}
    done = 0
    for group in alike.values():
        for at in range(0, len(group), CHECK_EVERY):
            check_deadline(ends, f"{done:,} of {len(modes):,} modes sampled for the dominance check")
            members = group[at:at + CHECK_EVERY]
            done += len(members)
            s_cost[members], s_power[members], _ = sampled(modes, members, sample, sw, nics, rails,
                                                           mults[members[0]], sample_counts, plant)
    for i, mode in enumerate(modes):
        if mode.splits and mode.tiers == 2:  # the least over its options: a mode dominating it is below it there too
            fit = sample[sample <= limits[i]]
            if len(fit):
                cost, power, _ = split_cost_power(mode, fit, inputs, rails, mults[i], True)
                if not window:
                    nodes = cost_power(mode, fit, sw, nics, rails, mults[i], None, "nodes", plant)
                    cost, power = cost + nodes[0], power + nodes[1]
                s_cost[i, :len(fit)], s_power[i, :len(fit)] = cost, power
    s_cost[sample[None, :] > limits[:, None]] = np.inf
    s_power[sample[None, :] > limits[:, None]] = np.inf
    dropped: dict[str, str] = {}
    alive = np.ones(len(modes), dtype=bool)
    alive[list(shadows)] = False
    size = len(sample)
    first = sorted({size - 1, 0, size // 2, size // 4, 3 * size // 4}) if size else []  # no samples: no screen
    screen = np.hstack([s_cost[:, first], s_power[:, first]])  # cost and power at the screening counts
    def dominator(b: int, pool: np.ndarray) -> int | None:
        """The first mode of ``pool`` (alive, index order) that dominates b: screened on a few sampled node
        counts (most candidates fail there), then on every sample and the criteria, then checked exactly
        over 1..limit_b. A 3-tier mode of every split is dominated by none (its figures here are its grid split's:
        one design it can be, as the dominating mode)."""
        if modes[b].splits and modes[b].tiers == 3:
            return None
        lim = limits[b]
        cand = pool[alive[pool] & (limits[pool] >= lim)]  # a mode that holds fewer nodes than b dominates none
        cand = cand[np.all(screen[cand] <= screen[b], axis=1)]
        cand = cand[(cand != b) & ((attach[cand] == attach[b]) | (attach[b] == 0))
                    & np.all(where[cand] | ~where[b], axis=1) & np.all(s_cost[cand] <= s_cost[b], axis=1)
                    & np.all(s_power[cand] <= s_power[b], axis=1) & np.all(crit[cand] <= crit[b] + 1e-12, axis=1)]
        if not cand.size:
            return None
        for a in cand:
            ok, equal = beats(int(a), b, lim)
            if ok:
                same = equal and np.array_equal(crit[a], crit[b]) and limits[a] == lim
                if same and a > b:
                    continue  # identical: keep the first
                return int(a)
        return None

    # First against the few modes cheapest at some screening count (they dominate most of the others). Then what
    # is left in lexicographic order of its sampled costs and powers, each against the modes kept so far: a mode
    # that dominates another is no costlier and no hotter at every sample, so it comes first in that order (or
    # ties on every sample); a mode dominated by one dropped earlier is dominated by what dropped that one
    # (dominance is transitive). So a mode is dropped only for a mode that is kept, and each is checked against
    # the kept modes alone (hundreds), not every mode left (100,000+ with 30 switch models or more).
    strong = np.unique(np.concatenate([np.argsort(s_cost[:, k], kind="stable")[:STRONG] for k in first]
                                      or [np.zeros(0, dtype=np.int64)]))

    def drop(b: int, a: int) -> None:
        dropped[modes[b].id] = modes[a].id
        alive[b] = False
        cache.pop((b, False), None)
        cache.pop((b, True), None)

    checked = 0

    def check() -> None:
        nonlocal checked
        checked += 1
        if checked % CHECK_EVERY == 0:
            check_deadline(ends, f"{checked:,} dominance checks, {int(alive.sum()):,} of {len(modes):,} modes left")

    for b in np.flatnonzero(alive):
        check()
        a = dominator(b, strong)
        if a is not None:
            drop(b, a)
    left = np.flatnonzero(alive)
    keys = [s_power[left, k] for k in reversed(range(size))] + [s_cost[left, k] for k in reversed(range(size))]
    kept = np.zeros(0, dtype=np.int64)  # in index order: dominator takes the first that dominates
    for b in left[np.lexsort([left] + keys)] if len(left) else []:
        check()
        a = dominator(int(b), kept)
        if a is not None:
            drop(int(b), a)
        else:
            kept = np.insert(kept, np.searchsorted(kept, b), b)
    for b, a in shadows.items():  # a shadowed mode is dominated by its shadow's kept dominator, or the shadow
        dropped[modes[b].id] = dropped.get(modes[a].id, modes[a].id)
    return [m for m, keep in zip(modes, alive) if keep], dropped


def terms(mode: Mode, switches: dict, plant: tuple) -> list[float]:
    """The factors of a mode's figures that its module structure leaves open: each role's switch price and power,
    each cable tier's item price and power, least fiber plant a link and whether its links are patched. cost_power's
    figures are these times counts the module structure fixes, summed in a fixed order."""
    out = []
    for model in (mode.leaf, mode.spine, mode.core):
        out += [float(switches[model]["price_usd"]), float(switches[model]["power_w"])] if model else [0.0, 0.0]
    for cable in mode.cables:
        out += [cable.unit_price, cable.unit_power_w, plant_bounds(plant[0], cable, plant[1])[0],
                float(cable.patched(plant[1]))]
    return out


def _shadowed(modes: list[Mode], group: list[int], attach: np.ndarray, figures: np.ndarray, switches: dict,
              plant: tuple, ends: float | None = None) -> dict[int, int]:
    """Modes of one module structure (``group``) that another of it shadows: {b: a}, a no higher than b in every
    factor (terms), on every criterion, in its node limit's negative and in the sites it does not apply at
    (``figures``' columns), with the same attachment cables. Every figure of A's is then B's, or less, at every
    count (the same counts times factors no higher, summed in the same order: the same floating-point operations,
    each rounding monotone), panels and window slack included, so A dominates B (_pairwise's beats holds). Of two
    alike in everything, the first shadows the second (_pairwise keeps the first of two identical modes). Sorted
    lexicographically, a shadow comes before what it shadows, and shadowing is transitive: each mode is checked
    against the modes no earlier one shadows (the group's front). Modes of every split are left out. ``ends``:
    prune's deadline."""
    check_deadline(ends, f"{len(group):,} modes of one structure to check for shadows")
    plain = [i for i in group if not modes[i].splits]
    if len(plain) < 2:
        return {}
    rows = np.hstack([np.array([terms(modes[i], switches, plant) for i in plain]), figures[plain],
                      attach[plain, None].astype(float)])
    order = np.lexsort([np.array(plain)] + [rows[:, k] for k in reversed(range(rows.shape[1]))])
    front: list[int] = []
    out: dict[int, int] = {}
    for done, k in enumerate(order):
        if done % CHECK_EVERY == 0:
            check_deadline(ends, f"{done:,} of {len(plain):,} modes of one structure checked for shadows")
        if front:
            shadow = np.flatnonzero(np.all(rows[front, :-1] <= rows[k, :-1], axis=1) & (rows[front, -1] == rows[k, -1]))
            if shadow.size:
                out[plain[k]] = plain[front[shadow[0]]]
                continue
        front.append(k)
    return out
