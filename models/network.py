"""The network-design MILP: one ``define_<what>`` function per constraint group.

Notation: s site, m fabric mode, o a 2-tier Clos's leaf split and spine count option (models.splits), r route,
c coherent type, k DCI router model, a DCI attachment cable option.
Every group is built only over the pre-filtered index sets where it applies (``ModelData``).
Counts of a 2- or 3-tier fabric are per plane (per rail for rail_only) and multiplied by the
plane (and rail) count when they enter cost and power. The budget, capex + energy <= budget_usd, is not
a row here: the solve applies it as HiGHS's objective cutoff on the cost objective (designer.solve.run).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field, replace

import pyomo.environ as pyo
from pyomo.contrib.fbbt.expression_bounds_walker import ExpressionBoundsVisitor
from pyomo.repn import generate_standard_repn

from models.intersite import (
    InterSite,
    bdp_mb,
    end_watts,
    failure_groups,
    fiber_gbps,
    is_gray,
    line_usd,
    links_on_pairs,
)
from models.layout import support_length
from models.modes import (
    Mode,
    check_deadline,
    plant_rows,
    power_cap_mw,
    site_layout_of,
    site_node_limits,
    split_figures,
    switch_cages,
    switch_rows,
    table_rows,
    unit_shape,
)
from models.splits import relevant_options, static_splits, three_tier_options

HOURS_PER_YEAR = 8760.0
COST_SCALE = 1e6  # the cost objective in millions of USD: keeps HiGHS well scaled
COVER_SITES = 12  # define_tightening enumerates the demand's covers over at most this many usable sites


@dataclass
class ModelData:
    """Validated tables reduced to the numbers and index sets the model needs."""

    inputs: object
    modes: list[Mode]
    sites: list[str]
    inter: InterSite
    workload: dict | None = None  # models.workload.parameters, when the workbook has a workload
    intra_s: dict = field(default_factory=dict)  # (site, mode) -> bound on the intra-site all-reduce time
    multiplier: dict = field(default_factory=dict)  # mode -> switch-count multiplier (planes x rails)
    # the (site, mode) pairs offered, when only some are (a completion of chosen modes, designer.solve.start);
    # None for all that apply
    chosen: frozenset | None = None
    # mode -> (lo, hi): the endpoint counts its every-split options serve, where only those are asked
    # (designer.solve.polish); else split_range's
    split_window: dict = field(default_factory=dict)
    # what the polish replaced, where it changed the design: {sites: {site: the grid's split}, saving_usd}
    # (designer.solve.polish); None otherwise
    polish: dict | None = None
    _limits: dict | None = field(default=None, repr=False)
    _attachments: dict = field(default_factory=dict, repr=False)  # site -> most_attachments, read per (site, mode)
    _support_m: dict = field(default_factory=dict, repr=False)  # site -> support_lengths
    intra_memo: dict = field(default_factory=dict, repr=False)  # (site, mode id) -> designer.solve.prepare.intra_bounds

    @functools.cached_property
    def node(self):
        return table_rows(self.inputs, "node_types")[self.inputs.project["node_type"]]

    def site_node_limit(self, s: str) -> int:
        """Most nodes site s needs or can hold in any mode (models.modes.site_node_limits)."""
        if self._limits is None:
            self._limits = site_node_limits(self.inputs)
        return self._limits[s]

    def node_limit(self, s: str, i: int) -> int:
        """Most nodes site s holds in mode i: the site's limit and the mode's topology size."""
        return min(self.modes[i].node_cap, self.site_node_limit(s))

    def route_most_gbps(self, route) -> float:
        """The most route ``route`` carries (Gb/s): every fiber pair lit with its best DCI optic."""
        co = table_rows(self.inputs, "coherent")
        return max((fiber_gbps(co[c], route.fiber_pairs, route.band) for c in route.coherent), default=0.0)

    def most_attachments(self, s: str) -> int:
        """Most DCI attachments site s can need: its routes' most capacity over one node's NIC bandwidth."""
        if s not in self._attachments:
            most = sum(self.route_most_gbps(r) for r in self.inter.routes if s in (r.a, r.b))
            self._attachments[s] = math.ceil(most / nic_gbps_per_node(self) - 1e-9)
        return self._attachments[s]

    def usd_per_it_watt(self, s: str) -> float:
        """What one watt of IT load at site s costs: facility power capex and energy over the horizon, x PUE."""
        row = table_rows(self.inputs, "sites")[s]
        years = float(self.inputs.project.get("horizon_years") or 0)
        return float(row["pue"]) / 1e6 * (float(row["power_cost_usd_per_mw"])
                                          + years * HOURS_PER_YEAR * float(row["energy_usd_per_mwh"]))

    def attach_options(self, s: str, i: int) -> list[int]:
        """The attachment cables of mode i worth offering at site s: an option is left out when another costs no
        more at the site (price + power at its $ per watt) and draws no more power (so a power cap is no reason)."""
        nics = int(self.node["nics_per_node"])
        rate = self.usd_per_it_watt(s)
        figures = [(c.items_per_attachment(nics) * (c.unit_price + rate * c.unit_power_w),
                    c.items_per_attachment(nics) * c.unit_power_w) for c in self.modes[i].attach]
        return [a for a, (cost, watts) in enumerate(figures)
                if not any((c2, w2) < (cost, watts) or ((c2, w2) == (cost, watts) and b < a)
                           for b, (c2, w2) in enumerate(figures) if b != a and c2 <= cost and w2 <= watts)]

    def endpoint_limit(self, s: str, i: int) -> int:
        """Most endpoints (nodes and DCI attachments) the leaves of mode i at site s serve."""
        if not self.modes[i].attach:
            return self.node_limit(s, i)
        return min(self.modes[i].node_cap, self.node_limit(s, i) + self.most_attachments(s))

    def pairs(self) -> list[tuple[str, int]]:
        """The (site, mode) pairs the model offers, site by site: the mode's cables are the site's, its intra-site
        all-reduce bound is within the workload's step (when a workload is given), and it is chosen (when
        ``chosen`` is given)."""
        at: dict[str, list[int]] = {s: [] for s in self.sites}
        for i, mode in enumerate(self.modes):
            for s in mode.sites:
                if (s in at and (self.workload is None or self.intra_s[s, i] <= self.workload["t_max_s"])
                        and (self.chosen is None or (s, i) in self.chosen)):
                    at[s].append(i)
        return [(s, i) for s in self.sites for i in at[s]]

    def widest_gpus(self) -> dict[str, int]:
        """site_most_gpus over every pair the whole model offers, chosen or not (rows built from it are the same in
        a model of chosen pairs, whose LP prices the others: designer.solve.pricing)."""
        return (self if self.chosen is None else replace(self, chosen=None)).site_most_gpus()

    def site_most_gpus(self) -> dict[str, int]:
        """Most GPUs each site holds in any mode it is offered: max_i min(cap_i, L_s) = min(max_i cap_i, L_s) over
        the pairs (site s, mode i), so the sizes of the modes offered at each site first (300,000 modes before the
        pruning at 60 switch models: with every mode offered wherever its cables are the site's, once per set of
        such sites)."""
        caps = dict.fromkeys(self.sites, 0)
        if self.workload is None and self.chosen is None:
            widest: dict[frozenset, int] = {}
            for mode in self.modes:
                widest[mode.sites] = max(widest.get(mode.sites, 0), mode.node_cap)
            offered = ((s, cap) for where, cap in widest.items() for s in where if s in caps)
        else:
            offered = ((s, self.modes[i].node_cap) for s, i in self.pairs())
        for s, cap in offered:
            caps[s] = max(caps[s], cap)
        gpn = int(self.node["gpus_per_node"])
        return {s: gpn * min(cap, self.site_node_limit(s)) if cap else 0 for s, cap in caps.items()}

    def most_gpus(self) -> int:
        """Most GPUs any design holds: the max_sites sites that hold the most, each at its most (a bound that
        needs no solve: below gpus_required, no design exists)."""
        most = sorted(self.site_most_gpus().values(), reverse=True)
        limit = self.inputs.project.get("max_sites")
        return sum(most[:int(limit)] if limit is not None else most)

    def single_site_possible(self) -> bool:
        """Whether any one site could hold the whole job (else more than one site must open)."""
        if int(self.inputs.project.get("min_sites") or 1) > 1:
            return False
        need = int(self.inputs.project["gpus_required"])
        return any(gpus >= need for gpus in self.site_most_gpus().values())

    @property
    def support(self) -> list[str]:
        """The support networks sized into the design (none when the project switches them off)."""
        if not self.inputs.project.get("support_networks", True):
            return []
        return list(self.inputs.support_networks.index)

    @functools.cached_property
    def plant(self) -> dict:
        """The fiber_plant rows priced into the design (plant_rows)."""
        return plant_rows(self.inputs)

    def support_lengths(self, s: str) -> dict[str, float]:
        """Length in metres of each support network's node link at site s (models.layout.support_length)."""
        if s not in self._support_m:
            layout = site_layout_of(self.inputs, s)
            table = table_rows(self.inputs, "support_networks")
            self._support_m[s] = {n: support_length(layout, float(table[n]["nodes_per_switch"]))
                                  for n in self.support}
        return self._support_m[s]

    @property
    def rails(self) -> int:
        """NICs per node in one plane: one rail each."""
        return int(self.node["nics_per_node"]) // int(self.node["planes"])

    def clos_options(self, s: str, i: int) -> tuple[tuple[int, int, int], ...]:
        """The (down ports, up ports, spines) options of 2-tier Clos mode i at site s: its one split over each spine
        count dividing its uplinks, or, for a mode of every split (Mode.splits), those some endpoint count the sites
        it applies at hold needs (models.splits.relevant_options); a 3-tier mode of every split: its leaf splits
        (d, u, 0) some count needs (models.splits.three_tier_options)."""
        mode = self.modes[i]
        if not mode.splits:
            return mode.options()
        if mode.tiers == 3:
            return self.three_tier(i)[0]
        return relevant_options(mode.options(), split_figures(self.inputs, mode, self.rails), *self.split_range(i))

    def agg_options(self, s: str, i: int) -> tuple[tuple[int, int], ...]:
        """The aggregation splits (d2, u2) of 3-tier mode i of every split at site s some endpoint count needs."""
        return self.three_tier(i)[1]

    def three_tier(self, i: int) -> tuple[tuple, tuple]:
        """models.splits.three_tier_options of 3-tier mode i of every split over split_range."""
        mode = self.modes[i]
        return three_tier_options(mode.options(), static_splits(mode.splits2), *unit_shape(mode.topology, self.rails),
                                  mode.core_ports, (mode.cables[1].links_per_module, mode.cables[2].links_per_module),
                                  *self.split_range(i))

    def split_range(self, i: int) -> tuple[int, int]:
        """The endpoint counts mode i of every split may serve: up to the most of the sites it applies at (one
        range for all: a site's options are the same whichever site's limit is the larger), from 1, or the whole
        job on the only usable site; or ``split_window``'s."""
        if i in self.split_window:
            return self.split_window[i]
        most = max(self.endpoint_limit(t, i) for t in self.modes[i].sites if t in self.site_set)
        job = -(-int(self.inputs.project["gpus_required"]) // int(self.node["gpus_per_node"]))
        return (min(most, job) if len(self.sites) == 1 else 1), most

    @functools.cached_property
    def site_set(self) -> frozenset:
        return frozenset(self.sites)


def site_list(inputs) -> list[str]:
    """Sites the model may open: every site not marked excluded."""
    sites = table_rows(inputs, "sites")
    return [s for s in sites if sites[s]["status"] != "excluded"]


def multiplier(mode: Mode, node) -> int:
    """Copies of the per-plane count: planes, times rails for rail_only (one network per rail)."""
    planes = int(node["planes"])
    rails = int(node["nics_per_node"]) // planes
    return planes * (rails if mode.topology == "rail_only" else 1)


def has_spine_options(mode: Mode) -> bool:
    return mode.tiers == 2 and mode.topology != "leaf_mesh"


# --------------------------------------------------------------------------------------------
# Model building
# --------------------------------------------------------------------------------------------

def build_model(data: ModelData, bounds: bool = True, ends: float | None = None,
                leave_out: tuple = ()) -> pyo.ConcreteModel:
    """The full MILP with expressions ``capex`` and ``energy``; no objective yet. ``bounds``: the integer counts'
    bounds (define_bounds), which read the rows' needs as they are; an elastic model, whose slacks lower those
    needs, goes without them. The worst latency (define_latency) is added by what reads it: min_latency is
    searched over modes filtered by latency (designer.solve.prepare.at_most), so the cost stage never does, and its
    rows (levels x sites, each over the modes at or above its level: 1.8M nonzeros with 60 switch models) would
    only weigh on the translation and the LP. ``ends``: a deadline (perf_counter seconds) checked before each
    group (models.modes.PastDeadline). ``leave_out``: constraint groups not built (where the sites and used routes
    are fixed, define_connectivity's, define_route_diversity's and define_rtt's rows hold with them:
    designer.solve.polish)."""
    m = pyo.ConcreteModel(name="designer")
    m.data = data
    groups = [define_sets, define_variables, define_totals, define_site_mode, define_leaves, define_spines,
              define_aggregation_core, define_modules, define_count_limits, define_demand, define_site_count,
              define_routes, define_connectivity, define_dci_capacity, define_dci_routers, define_dci_attachment,
              define_one_router_model, define_route_diversity, define_rtt, define_workload, define_support,
              define_fiber_plant, define_power, define_cost] + ([define_bounds, define_tightening] if bounds else [])
    for define in (group for group in groups if group not in leave_out):
        check_deadline(ends, f"built up to {define.__name__}")
        define(m, data)
    return m


def define_sets(m, data: ModelData) -> None:
    """S sites, M modes, SM the (site, mode) pairs where the mode applies (its cables are the site's), SMO
    the split and spine options of 2-tier Clos modes (ModelData.clos_options; SMO_split those of modes of every
    split, m.options their (d, u, j) by pair; a 3-tier mode of every split its leaf splits (d, u, 0) there and its
    aggregation splits in SMQ, m.agg_options), R routes, RC route x coherent type within reach, K DCI routers,
    SK = S x K, N support networks, SN = S x N, SMA the DCI attachment cable options of modes at sites with
    routes."""
    m.S = pyo.Set(initialize=data.sites, ordered=True)
    m.M = pyo.Set(initialize=range(len(data.modes)), ordered=True)
    pairs = data.pairs()
    m.SM = pyo.Set(initialize=pairs, dimen=2)
    m.modes_at = {s: [i for t, i in pairs if t == s] for s in data.sites}
    m.SM_su = pyo.Set(within=m.SM, initialize=[(s, i) for s, i in m.SM
                                                if data.modes[i].topology == "rail_optimized"])
    m.SM_leafvar = pyo.Set(within=m.SM, initialize=[(s, i) for s, i in m.SM if data.modes[i].tiers >= 2])
    m.options = {(s, i): data.clos_options(s, i) for s, i in m.SM
                 if has_spine_options(data.modes[i]) or (data.modes[i].tiers == 3 and data.modes[i].splits)}
    m.SMO = pyo.Set(dimen=3, initialize=[(s, i, o) for (s, i), options in m.options.items()
                                         for o in range(len(options))])
    m.SMO_split = pyo.Set(within=m.SMO, initialize=[(s, i, o) for s, i, o in m.SMO if data.modes[i].splits])
    m.SM3 = pyo.Set(within=m.SM, initialize=[(s, i) for s, i in m.SM if data.modes[i].tiers == 3])
    m.SMT = pyo.Set(dimen=3, initialize=[(s, i, t) for s, i in m.SM for t in twin_tiers(data.modes[i])
                                         if pooled_ends(data.modes[i], t)])
    m.SMOW = pyo.Set(dimen=3, initialize=[(s, i, o) for s, i, o in m.SMO if 1 in twin_tiers(data.modes[i])
                                          and has_spine_options(data.modes[i])])
    m.agg_options = {(s, i): data.agg_options(s, i) for s, i in m.SM if data.modes[i].splits2}
    m.SMQ = pyo.Set(dimen=3, initialize=[(s, i, q) for (s, i), options in m.agg_options.items()
                                         for q in range(len(options))])
    routes = data.inter.routes
    m.R = pyo.Set(initialize=[r.key for r in routes], ordered=True)
    m.RC = pyo.Set(dimen=2, initialize=[(r.key, c) for r in routes for c in r.coherent])
    m.K = pyo.Set(initialize=data.inter.routers, ordered=True)
    m.N = pyo.Set(initialize=data.support, ordered=True)
    m.SN = pyo.Set(dimen=2, initialize=[(s, n) for s in data.sites for n in data.support])
    m.SK = pyo.Set(dimen=2, initialize=[(s, k) for s in data.sites for k in data.inter.routers])
    m.route = {r.key: r for r in routes}
    m.incident = {s: [r.key for r in routes if s in (r.a, r.b)] for s in data.sites}
    m.SMA = pyo.Set(dimen=3, initialize=[(s, i, a) for s, i in pairs if m.incident[s]
                                         for a in data.attach_options(s, i)])
    m.attach_at = {}
    for s, i, a in m.SMA:
        m.attach_at.setdefault((s, i), []).append(a)


def define_variables(m, data: ModelData) -> None:
    """open_s, y_sm binaries; nodes_sm, su_sm, leaves_sm, agg_sm, core_sm, modules_smt integers;
    z_smo split and spine option binaries, lo_smo the leaves (scalable units) of a mode of every split in its
    option o; z2_smq, ao_smq a 3-tier mode's aggregation split binaries and its aggregation switches in split q;
    route, coherent, wavelength, fiber, router and flow variables; support_sn switches of each support
    network; attach_sma DCI router attachments (each a node's worth of leaf ports)."""
    m.open = pyo.Var(m.S, domain=pyo.Binary)
    m.y = pyo.Var(m.SM, domain=pyo.Binary)
    m.nodes = pyo.Var(m.SM, domain=pyo.NonNegativeReals)
    m.su = pyo.Var(m.SM_su, domain=pyo.NonNegativeReals)
    m.leaves = pyo.Var(m.SM_leafvar, domain=pyo.NonNegativeReals)
    m.z = pyo.Var(m.SMO, domain=pyo.Binary)
    m.lo = pyo.Var(m.SMO_split, domain=pyo.NonNegativeReals)
    m.z2 = pyo.Var(m.SMQ, domain=pyo.Binary)
    m.ao = pyo.Var(m.SMQ, domain=pyo.NonNegativeReals)
    m.agg = pyo.Var(m.SM3, domain=pyo.NonNegativeReals)
    m.core = pyo.Var(m.SM3, domain=pyo.NonNegativeReals)
    m.modules = pyo.Var(m.SMT, domain=pyo.NonNegativeReals)
    m.spine_modules = pyo.Var(m.SMOW, domain=pyo.NonNegativeReals)
    m.use = pyo.Var(m.R, domain=pyo.Binary)
    m.x = pyo.Var(m.RC, domain=pyo.Binary)
    m.waves = pyo.Var(m.RC, domain=pyo.NonNegativeReals)
    m.pairs = pyo.Var(m.RC, domain=pyo.NonNegativeIntegers)
    m.routers = pyo.Var(m.SK, domain=pyo.NonNegativeIntegers)
    m.support = pyo.Var(m.SN, domain=pyo.NonNegativeIntegers)
    m.attach = pyo.Var(m.SMA, domain=pyo.NonNegativeReals)
    m.multi = pyo.Var(domain=pyo.Binary)
    m.most_need = {}  # s -> the most inter-site capacity (Tb/s) any row asks of site s (define_bounds)
    m.router_memo = {}  # (s, k) -> most_routers


def define_totals(m, data: ModelData) -> None:
    """Integrality carried by totals over exclusive options. The per-mode counts nodes_sm, su_sm, leaves_sm,
    agg_sm, core_sm, modules_smt, spine_modules_smj and attach_sma are continuous; their totals over the modes at a
    site are integers: nodes_tot_s = sum_m nodes_sm, su_tot_s, leaves_tot_s, agg_tot_s, core_tot_s likewise,
    modules_tot_st = sum_m modules_smt (t the tier's place in the mode's cables), spine_modules_tot_s =
    sum_mj spine_modules_smj, attach_tot_sa = sum_m attach_sma (a the option's place in the mode's list). A route's
    wavelengths waves_rc are continuous, their total over its DCI optics waves_tot_r = sum_c waves_rc an integer.
    Exact: each of these counts is at most a bound times y_sm (define_site_mode, define_leaves,
    define_count_limits, define_modules, define_dci_attachment), z_smj or x_rc (define_routes: q_c waves_rc <=
    l_c pairs_rc, pairs_rc <= fiber_pairs_r x_rc), and one mode per site and one optic per route is chosen, so
    in an integer y and x only the chosen option's count can be nonzero and it equals its integer total; the LP
    relaxation is unchanged (a total is a sum of columns). Why: HiGHS's root reduced-cost fixing stores up to
    1,024 lurking bounds per integer column with a nonzero reduced cost, at a cost quadratic in their number,
    on every root LP; the counts of the modes a site does not use (most columns) were most of the default
    example's solve time, and the wavelengths of the optics a route does not use (a domain of 1,000+ each) most of
    a 30-site plan's root. Fiber pairs (domains of tens) stay integer per optic: summed, the default example's
    HiGHS run took 2.8 s against 2.2 s."""
    def site(s, *_):
        return s

    def route(r, _c):
        return r

    m.total_groups = {}
    families = {"nodes": site, "su": site, "modules": lambda s, i, t: (s, t), "leaves": site, "agg": site, "core": site,
                "spine_modules": site, "attach": lambda s, i, a: (s, a), "waves": route}
    for name, total_of in families.items():
        var = getattr(m, name)
        parts = {}
        for key in var:
            parts.setdefault(total_of(*key), []).append(var[key])
        groups = list(parts.values())
        m.total_groups[name] = groups
        total = pyo.Var(range(len(groups)), domain=pyo.NonNegativeIntegers)
        m.add_component(f"{name}_tot", total)
        m.add_component(f"{name}_tot_def", pyo.Constraint(range(len(groups)), rule=lambda m, q, total=total,
                                                          groups=groups: total[q] == sum(groups[q])))


# --- counts as expressions ---------------------------------------------------------------------

def leaf_count(m, s, i):
    """Leaf switches per plane (per rail for rail_only) of mode i at site s."""
    mode = m.data.modes[i]
    if mode.topology == "rail_optimized":
        return m.data.rails * m.su[s, i]
    if mode.tiers == 1:
        return m.y[s, i]
    return m.leaves[s, i]


def spine_count(m, s, i):
    """2-tier spines (3-tier aggregation switches) per plane."""
    mode = m.data.modes[i]
    if mode.tiers == 3:
        return m.agg[s, i]
    if has_spine_options(mode):
        return sum(j * m.z[s, i, o] for o, (_, _, j) in enumerate(m.options[s, i]))
    return 0


def uplinks(m, s, i):
    """Leaf uplinks per plane of a 2- or 3-tier Clos: u1 per leaf, or, with every split, each option's u per leaf."""
    mode = m.data.modes[i]
    if not mode.splits:
        return leaf_count(m, s, i) * mode.u1
    unit = unit_shape(mode.topology, m.data.rails)[1]
    return unit * sum(u * m.lo[s, i, o] for o, (_, u, _) in enumerate(m.options[s, i]))


def leaf_split(m, s, i) -> tuple[int, int]:
    """(down, up) ports of the leaves of mode i at site s in a solved model: the chosen option's with every split."""
    mode = m.data.modes[i]
    if not mode.splits:
        return mode.d1, mode.u1
    return next((d, u) for o, (d, u, _) in enumerate(m.options[s, i]) if pyo.value(m.z[s, i, o]) > 0.5)


def agg_uplinks(m, s, i):
    """Aggregation uplinks per plane of a 3-tier fabric: u2 per aggregation switch, or each split's u2 per switch
    of it (every split)."""
    mode = m.data.modes[i]
    if not mode.splits2:
        return m.agg[s, i] * mode.u2
    return sum(u2 * m.ao[s, i, q] for q, (_, u2) in enumerate(m.agg_options[s, i]))


def agg_split(m, s, i) -> tuple[int, int]:
    """(down, up) ports of the aggregation switches of 3-tier mode i at site s in a solved model."""
    mode = m.data.modes[i]
    if not mode.splits2:
        return mode.d2, mode.u2
    return next(split for q, split in enumerate(m.agg_options[s, i]) if pyo.value(m.z2[s, i, q]) > 0.5)


def endpoints(m, s, i):
    """What the leaves of mode i at site s serve: its nodes and the DCI routers' attachments (each takes the
    leaf ports of one node: one per rail in each plane)."""
    return m.nodes[s, i] + sum(m.attach[s, i, a] for a in m.attach_at.get((s, i), ()))


def core_count(m, s, i):
    return m.core[s, i] if m.data.modes[i].tiers == 3 else 0


def tier_links(m, s, i):
    """Links per tier, in the order of mode.cables: node-leaf, then leaf-spine or leaf-leaf, spine-core."""
    mode = m.data.modes[i]
    mult = m.data.multiplier[i]
    links = [int(m.data.node["nics_per_node"]) * m.nodes[s, i]]
    if mode.topology == "leaf_mesh" and mode.tiers == 2:
        links.append(mult * leaf_count(m, s, i) * (mode.u1 // 2))
    elif mode.tiers >= 2:
        links.append(mult * uplinks(m, s, i))
    if mode.tiers == 3:
        links.append(mult * agg_uplinks(m, s, i))
    return links


def twin_tiers(mode: Mode) -> list[int]:
    """Cable tiers carried by multi-link items: twin-port transceivers, or splitter cables (node links)."""
    return [t for t, c in enumerate(mode.cables) if c.links_per_module > 1]


def pooled_ends(mode: Mode, t: int) -> bool:
    """Whether tier t has link ends counted in aggregate: the leaf side of node links and the upper side
    of 3-tier links (per-switch counts there depend on how nodes and pods fill the switches)."""
    return t == 0 or mode.tiers == 3


def cable_items(m, s, i, t, links):
    """Cables, or transceiver modules, of tier t. One cable per link; single-link transceivers 2 per link;
    twin-port modules are counted per switch (ceil(ports / links_per_module) in each switch): exactly at
    nodes, leaves, aggregation uplinks and 2-tier spines, in aggregate at the ends noted in pooled_ends; a 1:k
    splitter cable (node links) fills a leaf cage and ends on k NICs: ceil(links / k) over the leaves, in
    aggregate."""
    mode = m.data.modes[i]
    cable = mode.cables[t]
    if t not in twin_tiers(mode):
        return cable.modules_per_link * links
    k = cable.links_per_module
    mult = m.data.multiplier[i]
    pooled = m.modules[s, i, t] if (s, i, t) in m.SMT else 0
    if t == 0:
        return pooled if cable.cable else -(-int(m.data.node["nics_per_node"]) // k) * m.nodes[s, i] + pooled
    if cable.tier == "spine_core":
        if mode.splits2:
            return mult * sum(-(-u2 // k) * m.ao[s, i, q] for q, (_, u2) in enumerate(m.agg_options[s, i])) + pooled
        return mult * -(-mode.u2 // k) * m.agg[s, i] + pooled
    if mode.splits:
        unit = unit_shape(mode.topology, m.data.rails)[1]
        leaf_ends = mult * unit * sum(-(-u // k) * m.lo[s, i, o] for o, (_, u, _) in enumerate(m.options[s, i]))
    else:
        leaf_ends = mult * -(-mode.u1 // k) * leaf_count(m, s, i)
    if mode.tiers == 2 and mode.topology != "leaf_mesh":
        return leaf_ends + mult * sum(j * m.spine_modules[s, i, o] for o, (_, _, j) in enumerate(m.options[s, i]))
    return leaf_ends + pooled


# --- constraint groups -------------------------------------------------------------------------

def define_site_mode(m, data: ModelData) -> None:
    """sum_m y_sm = open_s; open_s = 1 for required sites;
    y_sm <= nodes_sm <= N_sm y_sm (an open fabric holds at least one node), N_sm the least of the mode's
    size limit, max_nodes_s and the nodes the site's power feeds (network power aside)."""
    sites = table_rows(data.inputs, "sites")
    m.one_mode = pyo.Constraint(m.S, rule=lambda m, s: sum(m.y[s, i] for i in m.modes_at[s]) == m.open[s])
    m.required = pyo.Constraint([s for s in data.sites if sites[s]["status"] == "required"],
                                rule=lambda m, s: m.open[s] == 1)
    m.nodes_min = pyo.Constraint(m.SM, rule=lambda m, s, i: m.nodes[s, i] >= m.y[s, i])
    m.nodes_max = pyo.Constraint(m.SM, rule=lambda m, s, i: m.nodes[s, i] <= data.node_limit(s, i) * m.y[s, i])


def define_leaves(m, data: ModelData) -> None:
    """With e_sm = nodes_sm + the DCI attachments (endpoints):
    rail_optimized: d1 su_sm >= e_sm (an SU holds d1 endpoints; one leaf per rail per SU);
    leaf_spine, fat_tree_3, leaf_mesh: d1 leaves_sm >= rails e_sm; rail_only: d1 leaves_sm >= e_sm;
    leaf_mesh (2 leaves or more): 2 y_sm <= leaves_sm <= max_leaves_m y_sm (the bisection bound of its split).
    A mode of every split counts its units (leaves, or su) per option: units_sm = sum_o lo_smo and
    sum_o d_o lo_smo >= rails e_sm (leaf_spine) or e_sm (rail_optimized)."""
    rails = data.rails

    def rule(m, s, i):
        mode = data.modes[i]
        if mode.splits:
            per_endpoint = unit_shape(mode.topology, rails)[0]
            return sum(d * m.lo[s, i, o] for o, (d, _, _) in enumerate(m.options[s, i])) >= per_endpoint * endpoints(
                m, s, i)
        if mode.topology == "rail_optimized":
            return mode.d1 * m.su[s, i] >= endpoints(m, s, i)
        per_node = 1 if mode.topology == "rail_only" else rails
        return mode.d1 * m.leaves[s, i] >= per_node * endpoints(m, s, i)

    m.leaf_ports = pyo.Constraint(m.SM_su | m.SM_leafvar, rule=rule)
    split = sorted({(s, i) for s, i, _ in m.SMO_split})
    m.split_units = pyo.Constraint(split, rule=lambda m, s, i: (
        m.su[s, i] if data.modes[i].topology == "rail_optimized" else m.leaves[s, i]) == sum(
        m.lo[s, i, o] for o in range(len(m.options[s, i]))))
    mesh = [(s, i) for s, i in m.SM_leafvar if data.modes[i].topology == "leaf_mesh"]
    m.mesh_min = pyo.Constraint(mesh, rule=lambda m, s, i: m.leaves[s, i] >= 2 * m.y[s, i])
    m.mesh_max = pyo.Constraint(mesh, rule=lambda m, s, i: m.leaves[s, i] <= data.modes[i].max_leaves * m.y[s, i])


def define_spines(m, data: ModelData) -> None:
    """2-tier Clos with uniform striping: one option o = (d, u, j) (sum_o z_smo = y_sm), its spine count j a divisor
    of u; the spines' ports hold every leaf uplink: P_spine sum_o j z_smo >= u1 leaves (one split), or, with every
    split, each option's units within what its spines hold: lo_smo <= min(floor(P j / (u b)), ceil(a E_sm / d))
    z_smo (b leaves a unit, a ports an endpoint: unit_shape; E_sm the most endpoints, more units than they need
    never optimal; a 3-tier mode's leaf splits, one chosen, lo_smo <= ceil(a E_sm / d) z_smo)."""
    m.spine_pick = pyo.Constraint(sorted(m.options), rule=lambda m, s, i: sum(
        m.z[s, i, o] for o in range(len(m.options[s, i]))) == m.y[s, i])
    single = [(s, i) for s, i in sorted(m.options) if not data.modes[i].splits]
    m.spine_ports = pyo.Constraint(single, rule=lambda m, s, i: data.modes[i].spine_ports * spine_count(
        m, s, i) >= data.modes[i].u1 * leaf_count(m, s, i))

    def option_units(m, s, i, o):
        mode = data.modes[i]
        d, u, j = m.options[s, i][o]
        per_endpoint, unit = unit_shape(mode.topology, data.rails)
        most = -(-per_endpoint * data.endpoint_limit(s, i) // d)
        if mode.tiers == 2:
            most = min(most, mode.spine_ports * j // (u * unit))
        return m.lo[s, i, o] <= most * m.z[s, i, o]

    m.option_units = pyo.Constraint(m.SMO_split, rule=option_units)


def define_aggregation_core(m, data: ModelData) -> None:
    """3-tier: d2 agg_sm >= the leaves' uplinks (aggregation down ports hold them); P_core core_sm >= u2 agg_sm (core
    ports hold aggregation uplinks). With every aggregation split q = (d2, u2): one chosen (sum_q z2_smq = y_sm),
    agg_sm = sum_q ao_smq, sum_q d2 ao_smq >= the leaves' uplinks, P_core core_sm >= sum_q u2 ao_smq, and
    ao_smq <= ceil(X_sm / d2) z2_smq, X_sm the most uplinks the site's leaves can have (most_uplinks)."""
    def agg_ports(m, s, i):
        mode = data.modes[i]
        if mode.splits2:
            return sum(d2 * m.ao[s, i, q] for q, (d2, _) in enumerate(m.agg_options[s, i])) >= uplinks(m, s, i)
        return mode.d2 * m.agg[s, i] >= uplinks(m, s, i)

    m.agg_ports = pyo.Constraint(m.SM3, rule=agg_ports)
    m.core_ports = pyo.Constraint(m.SM3, rule=lambda m, s, i: data.modes[i].core_ports * m.core[s, i]
                                  >= agg_uplinks(m, s, i))
    split = sorted(m.agg_options)
    m.agg_pick = pyo.Constraint(split, rule=lambda m, s, i: sum(
        m.z2[s, i, q] for q in range(len(m.agg_options[s, i]))) == m.y[s, i])
    m.agg_units = pyo.Constraint(split, rule=lambda m, s, i: m.agg[s, i] == sum(
        m.ao[s, i, q] for q in range(len(m.agg_options[s, i]))))
    m.agg_option_units = pyo.Constraint(m.SMQ, rule=lambda m, s, i, q: m.ao[s, i, q] <= -(
        -most_uplinks(data, m, s, i) // m.agg_options[s, i][q][0]) * m.z2[s, i, q])


def most_uplinks(data: ModelData, m, s: str, i: int) -> int:
    """The most uplinks per plane the leaves of Clos mode i at site s have: the most leaves its endpoints need in a
    split, times its up ports, over its splits."""
    mode = data.modes[i]
    per_endpoint, unit = unit_shape(mode.topology, data.rails)
    splits = [(d, u) for d, u, _ in m.options[s, i]] if mode.splits else [(mode.d1, mode.u1)]
    return max(unit * -(-per_endpoint * data.endpoint_limit(s, i) // d) * u for d, u in splits)


def define_modules(m, data: ModelData) -> None:
    """Twin-port transceivers (k links a module): pooled ends 0 <= k x modules_smt - link ends <= (k - 1) y_sm
    (exactly the ceiling, so a design stopped short of optimality buys no spare modules; none in a mode not
    chosen, whose links are 0); each of the j spines of a 2-tier Clos option o = (d, u, j) holds u / j ports of
    each leaf: with one split, k x spine_modules_smo >= u / j x (leaves - P_spine (1 - z_smo)) (2-tier leaves never
    exceed P_spine), with every split k x spine_modules_smo >= u / j x b lo_smo (lo_smo is 0 when not chosen);
    spine_modules_smo <= ceil(P_spine / k) z_smo (none for options not chosen),
    k x spine_modules_smo - u / j x leaves <= (k - 1) z_smo (exactly the ceiling: u / j is whole, j a divisor of
    u, so a design stopped short of optimality buys no spare modules), and in aggregate
    k sum_o j spine_modules_smo >= the leaves' uplinks (valid: the chosen option's row times j; it is what the LP
    relaxation keeps of the spines' modules, where a fractional z_smo leaves the per-spine rows slack)."""
    def excess(m, s, i, t):
        return data.modes[i].cables[t].links_per_module * m.modules[s, i, t] - tier_links(m, s, i)[t]

    m.module_count = pyo.Constraint(m.SMT, rule=lambda m, s, i, t: excess(m, s, i, t) >= 0)
    m.module_round = pyo.Constraint(m.SMT, rule=lambda m, s, i, t: excess(m, s, i, t) <= (
        data.modes[i].cables[t].links_per_module - 1) * m.y[s, i])

    def spine_ends(m, s, i, o):
        """Ports of each spine of option o when chosen: u / j leaves (one split: less P_spine when not chosen),
        u / j b lo_smo with every split (lo_smo is 0 when not chosen)."""
        mode = data.modes[i]
        _, u, j = m.options[s, i][o]
        if mode.splits:
            return u // j * unit_shape(mode.topology, data.rails)[1] * m.lo[s, i, o]
        return u // j * (leaf_count(m, s, i) - mode.spine_ports * (1 - m.z[s, i, o]))

    def per_spine(m, s, i, o):
        return data.modes[i].cables[1].links_per_module * m.spine_modules[s, i, o] >= spine_ends(m, s, i, o)

    m.spine_module_count = pyo.Constraint(m.SMOW, rule=per_spine)

    def per_spine_round(m, s, i, o):
        mode = data.modes[i]
        k = mode.cables[1].links_per_module
        _, u, j = m.options[s, i][o]
        ends = spine_ends(m, s, i, o) if mode.splits else u // j * leaf_count(m, s, i)
        return k * m.spine_modules[s, i, o] - ends <= (k - 1) * m.z[s, i, o]

    def all_spines(m, s, i):
        k = data.modes[i].cables[1].links_per_module
        return k * sum(j * m.spine_modules[s, i, o] for o, (_, _, j) in enumerate(m.options[s, i])) >= uplinks(
            m, s, i)

    m.spine_module_round = pyo.Constraint(m.SMOW, rule=per_spine_round)
    m.spine_module_total = pyo.Constraint(sorted({(s, i) for s, i, _ in m.SMOW}), rule=all_spines)
    m.spine_module_pick = pyo.Constraint(m.SMOW, rule=lambda m, s, i, o: m.spine_modules[s, i, o] <= -(
        -data.modes[i].spine_ports // data.modes[i].cables[1].links_per_module) * m.z[s, i, o])


def define_count_limits(m, data: ModelData) -> None:
    """Every count is tied to its binary, so a design stopped short of optimality holds no equipment of a
    mode it does not use (nor routers at a closed site), with the least big-M an optimal design respects:
    su_sm <= ceil(E_sm / d1) y_sm; leaves_sm <= ceil(n E_sm / d1) y_sm (n = 1 for rail_only, else rails),
    E_sm the most endpoints (models.network.ModelData.endpoint_limit);
    agg_sm <= ceil(X_sm / d2) y_sm, X_sm the most uplinks of E_sm endpoints' leaves (most_uplinks; the least d2
    of a mode's aggregation splits); core_sm <= ceil(u2 Amax_sm / P_core) y_sm (the most u2);
    routers_sk <= R_sk sum_{m: leaf family = k's} y_sm (a router joins only leaves of its own family:
    define_dci_attachment), R_sk the routers of model k alone that carry the most
    capacity site s's routes can hold (cages for the ports of both sides it runs, and the buffer)."""
    rails = data.rails

    def fewest_down(s, i):
        mode = data.modes[i]
        return min(d for d, _, _ in m.options[s, i]) if mode.splits else mode.d1

    def agg_splits(s, i):
        mode = data.modes[i]
        return m.agg_options[s, i] if mode.splits2 else [(mode.d2, mode.u2)]

    def most_leaves(s, i):
        mode, n = data.modes[i], data.endpoint_limit(s, i)
        if mode.topology == "rail_optimized":
            return rails * -(-n // fewest_down(s, i))
        return -(-(1 if mode.topology == "rail_only" else rails) * n // fewest_down(s, i))

    def most_aggs(s, i):
        return -(-most_uplinks(data, m, s, i) // min(d2 for d2, _ in agg_splits(s, i)))

    m.su_max = pyo.Constraint(m.SM_su, rule=lambda m, s, i: m.su[s, i] <= -(
        -data.endpoint_limit(s, i) // fewest_down(s, i)) * m.y[s, i])
    plain = [(s, i) for s, i in m.SM_leafvar if data.modes[i].topology != "leaf_mesh"]
    m.leaves_max = pyo.Constraint(plain, rule=lambda m, s, i: m.leaves[s, i] <= most_leaves(s, i) * m.y[s, i])
    m.agg_max = pyo.Constraint(m.SM3, rule=lambda m, s, i: m.agg[s, i] <= most_aggs(s, i) * m.y[s, i])
    m.core_max = pyo.Constraint(m.SM3, rule=lambda m, s, i: m.core[s, i] <= -(
        -max(u2 for _, u2 in agg_splits(s, i)) * most_aggs(s, i) // data.modes[i].core_ports) * m.y[s, i])
    if not data.inter.routes:
        return
    family = {k: row["family"] for k, row in switch_rows(data.inputs).items()}
    m.routers_max = pyo.Constraint(m.SK, rule=lambda m, s, k: m.routers[s, k] <= most_routers(m, s, k) * sum(
        m.y[s, i] for i in m.modes_at[s] if family[data.modes[i].leaf] == family[k]))


def most_routers(m, s, k) -> int:
    """R_sk: the routers of model k alone that carry the most capacity site s's routes can hold (cages for the
    ports of both sides it runs, each route at its most links of a DCI optic at each speed and the most
    attachments, and the buffer); computed once a model."""
    if (s, k) not in m.router_memo:
        m.router_memo[s, k] = _most_routers(m, s, k)
    return m.router_memo[s, k]


def _most_routers(m, s, k) -> int:
    data = m.data
    sw, co = switch_rows(data.inputs), table_rows(data.inputs, "coherent")

    def most_ports(side, g):
        if side == "fabric":
            return int(data.node["nics_per_node"]) * data.most_attachments(s)
        return sum(max((most_links(co, m.route[r], c) for c in m.route[r].coherent if int(co[c]["gbps"]) == g),
                       default=0) for r in m.incident[s])

    routes = [m.route[r] for r in m.incident[s]]
    cages = sum(-(-most_ports(side, g) // router_lanes(sw, k, g)) for side, g in router_groups(m, s)
                if router_lanes(sw, k, g))
    ports = -(-cages // router_cages(sw, k))
    buffer_mb = float(sw[k]["buffer_mb"])
    bdp = float(data.inputs.project["buffer_bdp_factor"]) * sum(bdp_mb(data.route_most_gbps(r), r.rtt_ms)
                                                                 for r in routes)
    return max(ports, math.ceil(bdp / buffer_mb) if buffer_mb > 0 else 0)


def most_links(co, route, c) -> int:
    """The most links of DCI optic c route ``route`` carries: every fiber pair lit with it."""
    links, pairs = links_on_pairs(co[c], route.band)
    return route.fiber_pairs * links // pairs


def define_one_router_model(m, data: ModelData) -> None:
    """one_dci_router_model: a site's DCI routers are of one model, pick_sk binary,
    sum_k pick_sk <= 1 and routers_sk <= R_sk pick_sk (R_sk as in define_count_limits)."""
    routed = [(s, k) for s, k in m.SK if m.incident[s]]
    if not data.inputs.project.get("one_dci_router_model") or not routed:
        return
    m.router_pick = pyo.Var(routed, domain=pyo.Binary)
    m.router_one = pyo.Constraint([s for s in data.sites if m.incident[s]], rule=lambda m, s: sum(
        m.router_pick[s, k] for k in m.K) <= 1)
    m.router_picked = pyo.Constraint(routed, rule=lambda m, s, k: m.routers[s, k]
                                     <= most_routers(m, s, k) * m.router_pick[s, k])


def define_route_diversity(m, data: ModelData) -> None:
    """route_diversity (N-1): for each failure g (a route, or every route of one srlg group:
    models.intersite.failure_groups) the open sites stay connected over the used routes outside g, as a
    single-commodity flow from define_connectivity's root: for r not in g, 0 <= f_grd <= (|S|-1) use_r in
    each direction d; inflow_gs - outflow_gs + supply_gs = open_s, 0 <= supply_gs <= |S| root_s. Exact: the
    flow reaches every open site from the root exactly when the used routes outside g join them all."""
    if not data.inputs.project.get("route_diversity") or len(data.sites) < 2 or not data.inter.routes:
        return
    n = len(data.sites)
    groups = failure_groups(data.inter.routes)
    m.G = pyo.Set(initialize=list(groups), ordered=True)
    arcs = [(g, r, d) for g in groups for r in m.R if r not in groups[g] for d in (0, 1)]
    m.rd_flow = pyo.Var(arcs, domain=pyo.NonNegativeReals)
    m.rd_supply = pyo.Var(m.G, m.S, domain=pyo.NonNegativeReals)
    m.rd_use = pyo.Constraint(arcs, rule=lambda m, g, r, d: m.rd_flow[g, r, d] <= (n - 1) * m.use[r])
    m.rd_root = pyo.Constraint(m.G, m.S, rule=lambda m, g, s: m.rd_supply[g, s] <= n * m.root[s])
    into, out = {}, {}
    for g, r, d in arcs:
        route = m.route[r]
        head, tail = (route.b, route.a) if d == 0 else (route.a, route.b)
        into.setdefault((g, head), []).append((g, r, d))
        out.setdefault((g, tail), []).append((g, r, d))
    m.rd_balance = pyo.Constraint(m.G, m.S, rule=lambda m, g, s: sum(m.rd_flow[a] for a in into.get((g, s), []))
                                  - sum(m.rd_flow[a] for a in out.get((g, s), [])) + m.rd_supply[g, s] == m.open[s])


def define_demand(m, data: ModelData) -> None:
    """sum_sm gpus_per_node nodes_sm >= gpus_required (infeasible outright when no site may use any mode)."""
    gpn = int(data.node["gpus_per_node"])
    need = int(data.inputs.project["gpus_required"])
    m.demand = pyo.Constraint(rule=lambda m: sum(gpn * m.nodes[s, i] for s, i in m.SM) >= need
                              if len(m.SM) else pyo.Constraint.Infeasible)


def define_site_count(m, data: ModelData) -> None:
    """min_sites <= sum_s open_s <= max_sites; multi >= (sum_s open_s - 1) / (|S| - 1);
    multi = 1 when no single site can hold the job (a valid tightening of the relaxation)."""
    p = data.inputs.project
    total = sum(m.open[s] for s in m.S)
    m.min_sites = pyo.Constraint(expr=total >= int(p.get("min_sites") or 1))
    if p.get("max_sites") is not None:
        m.max_sites = pyo.Constraint(expr=total <= int(p["max_sites"]))
    if len(data.sites) == 1:
        m.multi.fix(0)
    elif not data.single_site_possible():
        m.multi.fix(1)
        m.multi_site = pyo.Constraint(expr=total >= 2)
    else:
        m.multi_site = pyo.Constraint(expr=total - 1 <= (len(data.sites) - 1) * m.multi)


def define_routes(m, data: ModelData) -> None:
    """A used route joins two open sites and carries one coherent type:
    use_r <= open_a, use_r <= open_b, sum_c x_rc = use_r; x_rc <= waves_rc; q_c waves_rc <= l_c pairs_rc
    (l_c links on q_c fiber pairs: a coherent type's channels in the route's band on 1, a gray module on its
    fiber_pairs_per_link);
    pairs_rc <= fiber_pairs_r x_rc."""
    m.use_a = pyo.Constraint(m.R, rule=lambda m, r: m.use[r] <= m.open[m.route[r].a])
    m.use_b = pyo.Constraint(m.R, rule=lambda m, r: m.use[r] <= m.open[m.route[r].b])
    m.one_coherent = pyo.Constraint(m.R, rule=lambda m, r: sum(
        m.x[r, c] for c in m.route[r].coherent) == m.use[r])
    co = table_rows(data.inputs, "coherent")
    m.waves_min = pyo.Constraint(m.RC, rule=lambda m, r, c: m.waves[r, c] >= m.x[r, c])

    def channels(m, r, c):
        links, pairs = links_on_pairs(co[c], m.route[r].band)
        return pairs * m.waves[r, c] <= links * m.pairs[r, c]

    m.channels = pyo.Constraint(m.RC, rule=channels)
    m.fiber = pyo.Constraint(m.RC, rule=lambda m, r, c: m.pairs[r, c] <= m.route[r].fiber_pairs * m.x[r, c])


def capacity(m, r):
    """Capacity of route r in Tb/s: sum_c gbps_c waves_rc / 1000 (rows stay within a few orders of
    magnitude, which HiGHS's cuts need)."""
    co = table_rows(m.data.inputs, "coherent")
    return sum(float(co[c]["gbps"]) / 1e3 * m.waves[r, c] for c in m.route[r].coherent)


def site_capacity(m, s):
    return sum(capacity(m, r) for r in m.incident[s])


def define_connectivity(m, data: ModelData) -> None:
    """Open sites form one connected network over used routes (single-commodity flow from one root):
    sum_s root_s = 1, root_s <= open_s; flow on a route <= (|S|-1) use_r in each direction;
    inflow - outflow + supply_s = open_s with supply_s <= |S| root_s."""
    if len(data.sites) < 2:
        return
    n = len(data.sites)
    arcs = [(r, d) for r in m.R for d in (0, 1)]
    m.root = pyo.Var(m.S, domain=pyo.Binary)
    m.supply = pyo.Var(m.S, domain=pyo.NonNegativeReals)
    m.flow = pyo.Var(arcs, domain=pyo.NonNegativeReals)
    m.one_root = pyo.Constraint(expr=sum(m.root[s] for s in m.S) == 1)
    m.root_open = pyo.Constraint(m.S, rule=lambda m, s: m.root[s] <= m.open[s])
    m.supply_root = pyo.Constraint(m.S, rule=lambda m, s: m.supply[s] <= n * m.root[s])
    m.flow_use = pyo.Constraint(arcs, rule=lambda m, r, d: m.flow[r, d] <= (n - 1) * m.use[r])

    def head(r, d):
        return m.route[r].b if d == 0 else m.route[r].a

    def balance(m, s):
        inflow = sum(m.flow[r, d] for r, d in arcs if head(r, d) == s)
        outflow = sum(m.flow[r, d] for r, d in arcs if head(r, 1 - d) == s)
        return inflow - outflow + m.supply[s] == m.open[s]

    m.flow_balance = pyo.Constraint(m.S, rule=balance)
    pairs = [(a, b) for a, b, _ in data.inter.excluded_pairs]
    m.pair_excluded = pyo.Constraint(range(len(pairs)), rule=lambda m, q: m.open[pairs[q][0]]
                                     + m.open[pairs[q][1]] <= 1)


def add_connectivity_cuts(m, cuts) -> None:
    """The rows of ``cuts`` (models.connectivity.Cut, found against an LP point of ``m``), each
    sum_{r in cut.routes} use_r >= open_a + open_b - 1: every design of the model meets them (define_connectivity
    holds its open sites together); its LP relaxation may not."""
    if not hasattr(m, "connected"):
        m.connected = pyo.ConstraintList()
    for cut in cuts:
        m.connected.add(sum(m.use[r] for r in cut.routes) >= m.open[cut.a] + m.open[cut.b] - 1)


def nic_gbps_per_node(data: ModelData) -> float:
    node = data.node
    return float(node["nics_per_node"]) * float(node["nic_gbps"])


def define_dci_capacity(m, data: ModelData) -> None:
    """When more than one site is open, each open site's inter-site capacity covers dci_ratio of its
    NIC bandwidth: sum_{r at s} cap_r >= dci_ratio bw_node sum_m nodes_sm - M_s (1 - multi)."""
    if len(data.sites) < 2:
        return
    ratio = float(data.inputs.project["dci_ratio"])
    bw = nic_gbps_per_node(data)

    def rule(m, s):
        per_node = ratio * bw / 1e3  # Tb/s
        big = per_node * data.site_node_limit(s)
        most = max((data.node_limit(s, i) for i in m.modes_at[s]), default=0)
        m.most_need[s] = max(m.most_need.get(s, 0.0), per_node * most)
        return site_capacity(m, s) >= per_node * sum(m.nodes[s, i] for i in m.modes_at[s]) - big * (1 - m.multi)

    m.dci_capacity = pyo.Constraint(m.S, rule=rule)


def router_groups(m, s) -> list[tuple[str, int]]:
    """The kinds of DCI router port at site s, (side, Gb/s): the line side at each speed of its routes' DCI optics,
    the fabric side (the attachments) at the NIC speed; none at a site without routes."""
    if not m.incident[s]:
        return []
    co = table_rows(m.data.inputs, "coherent")
    line = sorted({int(co[c]["gbps"]) for r in m.incident[s] for c in m.route[r].coherent}, reverse=True)
    return [("line", g) for g in line] + [("fabric", int(m.data.node["nic_gbps"]))]


def router_cages(sw, k: str) -> int:
    """Cages of router k: those it declares, else its ports at its fastest speed (models.modes.switch_cages)."""
    return switch_cages(sw[k])


def router_lanes(sw, k: str, gbps: int) -> int:
    """Ports at ``gbps`` one cage of router k holds: its ports at that speed over its cages (0 when it has no such
    port mode)."""
    return sw[k]["port_modes"].get(gbps, 0) // router_cages(sw, k)


def group_ports(m, s, side: str, gbps: int):
    """Router ports of one kind at site s: the wavelengths (or gray links) of its routes at that speed, or the
    attachments' links (nics_per_node each)."""
    if side == "fabric":
        return int(m.data.node["nics_per_node"]) * sum(
            m.attach[s, i, a] for i in m.modes_at[s] for a in m.attach_at.get((s, i), ()))
    co = table_rows(m.data.inputs, "coherent")
    return sum(m.waves[r, c] for r in m.incident[s] for c in m.route[r].coherent if int(co[c]["gbps"]) == gbps)


def define_dci_routers(m, data: ModelData) -> None:
    """DCI routers at each site, sized on their cages: a cage of router k runs one kind of port g (line side at a
    DCI optic's speed, fabric side at the NIC speed) and holds lanes_kg of them (its ports at that speed over its
    cages: 1 at the cage speed, 2 at half of it); cages_skg integer:
    sum_g cages_skg <= C_k routers_sk; sum_k lanes_kg cages_skg >= ports_sg (router_groups, group_ports), so the
    ports fit the cages (and so the bandwidth). Buffers hold the bandwidth-delay product,
    sum_k buffer_k routers_sk >= bdp_factor sum_{r at s} cap_r RTT_r / 8 (rows in GB)."""
    if not data.inter.routes:
        return
    sw = switch_rows(data.inputs)
    factor = float(data.inputs.project["buffer_bdp_factor"])
    routed = [s for s in data.sites if m.incident[s]]
    groups = [(s, side, g) for s in routed for side, g in router_groups(m, s)]
    m.SKG = pyo.Set(dimen=4, initialize=[(s, k, side, g) for s, side, g in groups for k in m.K
                                         if router_lanes(sw, k, g)])
    m.dci_cages = pyo.Var(m.SKG, domain=pyo.NonNegativeIntegers)
    m.router_cage_room = pyo.Constraint([(s, k) for s in routed for k in m.K], rule=lambda m, s, k: sum(
        m.dci_cages[s, k, side, g] for side, g in router_groups(m, s) if (s, k, side, g) in m.SKG)
        <= router_cages(sw, k) * m.routers[s, k])
    def ports_fit(m, s, side, g):
        held = sum(router_lanes(sw, k, g) * m.dci_cages[s, k, side, g] for k in m.K if (s, k, side, g) in m.SKG)
        ports = group_ports(m, s, side, g)
        if isinstance(held, int) and isinstance(ports, int):  # no router runs g and no port of the kind exists
            return pyo.Constraint.Skip
        return held >= ports

    m.router_ports = pyo.Constraint(groups, rule=ports_fit)
    m.router_buffer = pyo.Constraint(routed, rule=lambda m, s: sum(  # GB on both sides
        float(sw[k]["buffer_mb"]) / 1e3 * m.routers[s, k] for k in m.K)
        >= factor * sum(bdp_mb(1.0, m.route[r].rtt_ms) * capacity(m, r) for r in m.incident[s]))


def attached_tbps(m, s):
    """Bandwidth of site s's DCI attachments in Tb/s (each a node's NIC bandwidth)."""
    bw = nic_gbps_per_node(m.data) / 1e3
    return sum(bw * m.attach[s, i, a] for i in m.modes_at[s] for a in m.attach_at.get((s, i), ()))


def define_dci_attachment(m, data: ModelData) -> None:
    """The DCI routers' fabric-side ports plug into leaf down ports as nodes' NICs do (one per rail and plane:
    a leaf is where any endpoint joins a Clos, and the spines' ports are all taken by leaf uplinks in a
    non-blocking fabric), so the fabric is sized for nodes + attachments (define_leaves). At a site with routes:
    bw_node sum_ma attach_sma >= sum_{r at s} cap_r (the attachments carry the inter-site capacity);
    attach_sma <= A_s y_sm, A_s the most the site's routes need (ModelData.most_attachments);
    nodes_sm + sum_a attach_sma <= node_cap_m y_sm; a mode whose leaves no DCI router can join (another
    protocol family, or no port at the NIC speed: an InfiniBand fabric and Ethernet routers) carries none:
    sum_{r at s} cap_r <= C_s (1 - y_sm), C_s the most the routes carry."""
    routed = [s for s in data.sites if m.incident[s]]
    if not routed:
        return
    m.attach_cover = pyo.Constraint(routed, rule=lambda m, s: attached_tbps(m, s) >= site_capacity(m, s))
    m.attach_max = pyo.Constraint(m.SMA, rule=lambda m, s, i, a: m.attach[s, i, a]
                                  <= data.most_attachments(s) * m.y[s, i])
    pairs = [(s, i) for s in routed for i in m.modes_at[s] if (s, i) in m.attach_at]
    m.attach_size = pyo.Constraint(pairs, rule=lambda m, s, i: endpoints(m, s, i) <= data.modes[i].node_cap * m.y[s, i])
    apart = [(s, i) for s in routed for i in m.modes_at[s] if (s, i) not in m.attach_at]
    m.attach_none = pyo.Constraint(apart, rule=lambda m, s, i: site_capacity(m, s) <= sum(
        data.route_most_gbps(m.route[r]) for r in m.incident[s]) / 1e3 * (1 - m.y[s, i]))


def attach_terms(m, s, what: str):
    """DCI attachment cables or modules at site s, in USD (``what`` price) or W (power): nics links per
    attachment (models.modes.Cable.items_per_attachment)."""
    nics = int(m.data.node["nics_per_node"])
    total = 0
    for i in m.modes_at[s]:
        for a in m.attach_at.get((s, i), ()):
            cable = m.data.modes[i].attach[a]
            unit = cable.unit_price if what == "price" else cable.unit_power_w
            total += unit * cable.items_per_attachment(nics) * m.attach[s, i, a]
    return total


def define_rtt(m, data: ModelData) -> None:
    """max_site_rtt_ms: two open sites are joined by a used path within the limit, as one unit of flow per
    site pair (a, b) over the arcs of walks within the limit, whose RTT-weighted length stays within it:
    w_ab >= open_a + open_b - 1 (0 <= w_ab <= 1); out_a - in_a = w_ab, in_b - out_b = w_ab, balance elsewhere;
    f_abruv <= use_r; sum rtt_r f_abruv <= limit w_ab. Exact: any split of the flow over paths has one path
    no longer than the average, so some used path within the limit exists; and a design with such a path
    sends the whole unit along it. No paths are enumerated (pairs x arcs within the RTT ball instead)."""
    pairs = data.inter.rtt_arcs
    if not pairs:
        return
    limit = float(data.inputs.project["max_site_rtt_ms"])
    m.RP = pyo.Set(dimen=2, initialize=list(pairs))
    m.RPA = pyo.Set(dimen=5, initialize=[(a, b, *arc) for (a, b), arcs in pairs.items() for arc in arcs])
    m.joined = pyo.Var(m.RP, bounds=(0, 1))
    m.rtt_flow = pyo.Var(m.RPA, bounds=(0, 1))
    m.joined_open = pyo.Constraint(m.RP, rule=lambda m, a, b: m.joined[a, b] >= m.open[a] + m.open[b] - 1)
    ends = {(a, b): sorted({n for _, u, v in arcs for n in (u, v)} | {a, b}) for (a, b), arcs in pairs.items()}
    out_arcs, in_arcs = {}, {}
    for a, b, r, u, v in m.RPA:
        out_arcs.setdefault((a, b, u), []).append((a, b, r, u, v))
        in_arcs.setdefault((a, b, v), []).append((a, b, r, u, v))

    def balance(m, a, b, n):
        net = sum(m.rtt_flow[k] for k in out_arcs.get((a, b, n), [])) - sum(m.rtt_flow[k] for k in in_arcs.get((a, b, n), []))
        return net == (m.joined[a, b] if n == a else -m.joined[a, b] if n == b else 0)

    m.rtt_balance = pyo.Constraint([(a, b, n) for (a, b), nodes in ends.items() for n in nodes], rule=balance)
    m.rtt_use = pyo.Constraint(m.RPA, rule=lambda m, a, b, r, u, v: m.rtt_flow[a, b, r, u, v] <= m.use[r])
    m.rtt_length = pyo.Constraint(m.RP, rule=lambda m, a, b: sum(
        m.route[r].rtt_ms / limit * m.rtt_flow[a, b, r, u, v] for r, u, v in pairs[(a, b)]) <= m.joined[a, b])


def define_workload(m, data: ModelData) -> None:
    """Hierarchical all-reduce across k open sites (models.workload): for open site s in mode m,
    T_sm + 2(k-1)/k S / cap_s + 2(k-1) alpha_q <= T_max, where T_sm bounds the intra-site ring
    (modes above T_max were left out of SM), alpha_q is a level of the worst one-way latency of a used
    route (lev_q >= use_r for routes at or above level q) and kk_k picks the number of open sites.
    Linear form: cap_s >= sum_m coef_smqk y_sm - M (2 - lev_q - kk_k); pairs with no time left are
    forbidden: sum_{m: no time} y_sm <= 2 - lev_q - kk_k. A row whose coefficients never exceed what
    dci_ratio already asks of a one-node site is implied and left out (often all of them)."""
    levels, needs, binding = workload_rows(data, m.modes_at)
    if not binding:
        return
    m.Q = pyo.Set(initialize=range(len(levels)))
    m.KK = pyo.Set(initialize=range(1, len(data.sites) + 1))
    m.lev = pyo.Var(m.Q, domain=pyo.Binary)
    m.kk = pyo.Var(m.KK, domain=pyo.Binary)
    m.kk_one = pyo.Constraint(expr=sum(m.kk[k] for k in m.KK) == 1)
    m.kk_def = pyo.Constraint(expr=sum(k * m.kk[k] for k in m.KK) == sum(m.open[s] for s in m.S))
    m.QR = pyo.Set(dimen=2, initialize=[(q, r.key) for q in m.Q for r in data.inter.routes
                                        if r.rtt_ms / 2 >= levels[q] - 1e-12])
    m.lev_route = pyo.Constraint(m.QR, rule=lambda m, q, r: m.lev[q] >= m.use[r])

    def capacity_rule(m, s, q, k):
        coef = {i: c for i, c in needs(s, q, k) if c is not None}
        if not coef:
            return pyo.Constraint.Skip
        big = max(coef.values())
        m.most_need[s] = max(m.most_need.get(s, 0.0), big)
        return site_capacity(m, s) >= sum(c * m.y[s, i] for i, c in coef.items()) - big * (2 - m.lev[q] - m.kk[k])

    def no_time_rule(m, s, q, k):
        bad = [i for i, c in needs(s, q, k) if c is None]
        if not bad:
            return pyo.Constraint.Skip
        return sum(m.y[s, i] for i in bad) <= 2 - m.lev[q] - m.kk[k]

    m.QSK = pyo.Set(dimen=3, initialize=binding)
    m.workload_capacity = pyo.Constraint(m.QSK, rule=capacity_rule)
    m.workload_time = pyo.Constraint(m.QSK, rule=no_time_rule)


def workload_rows(data: ModelData, modes_at: dict) -> tuple[list, object, list]:
    """Route latency levels (ms), the per-GPU need function needs(s, q, k) -> [(mode, Tb/s or None when no
    time is left)], and the (s, q, k) rows that are not implied by dci_ratio for a one-node site."""
    from models.workload import inter_coefficient

    params = data.workload
    if params is None or len(data.sites) < 2 or not data.inter.routes:
        return [], None, []
    levels = sorted({r.rtt_ms / 2 for r in data.inter.routes})
    t_max = params["t_max_s"]
    implied = float(data.inputs.project["dci_ratio"]) * nic_gbps_per_node(data) / 1e3  # Tb/s, one node

    def left(s, i, q, k):
        return t_max - data.intra_s[s, i] - 2 * (k - 1) * levels[q] / 1e3

    def needs(s, q, k):
        return [(i, inter_coefficient(params, k) / left(s, i, q, k) / 1e3 if left(s, i, q, k) > 0 else None)
                for i in modes_at[s]]

    binding = [(s, q, k) for s in data.sites for q in range(len(levels)) for k in range(2, len(data.sites) + 1)
               if any(c is None or c > implied for _, c in needs(s, q, k))]
    return levels, needs, binding


def site_nodes(m, s):
    return sum(m.nodes[s, i] for i in m.modes_at[s])


def support_links(row) -> tuple[int, float]:
    """(ports per node, items per port) of a support_networks row: a cable is one item, a transceiver link
    two modules (each end its own)."""
    return int(row["ports_per_node"]), (1.0 if row["link_kind"] == "cable" else 2.0)


def define_support(m, data: ModelData) -> None:
    """Support networks (storage, in-band and out-of-band management), sized per node:
    nodes_per_switch_n x support_sn >= sum_m nodes_sm; each node has ports_per_node_n links (their cables or
    modules priced and powered in site_capex and site_it_watts)."""
    table = table_rows(data.inputs, "support_networks")
    m.support_size = pyo.Constraint(m.SN, rule=lambda m, s, n: float(table[n]["nodes_per_switch"])
                                    * m.support[s, n] >= site_nodes(m, s))


def support_terms(m, s, what: str):
    """Support networks' switches and node links at site s, in USD (``what`` price) or W (power)."""
    data = m.data
    table = table_rows(data.inputs, "support_networks")
    column = {"price": "price_usd", "power": "power_w"}[what]
    total = 0
    for n in m.N:
        ports, items = support_links(table[n])
        total += float(table[n][f"switch_{column}"]) * m.support[s, n]
        total += float(table[n][f"link_{column}"]) * ports * items * site_nodes(m, s)
    return total


def optical_links(m, s, in_rack: bool, modes=None):
    """Transceiver links of site s (fabric tiers, DCI attachments, support networks) within ``cable_in_rack_m``
    (in_rack) or longer; ``modes``: those of these modes only (all at s by default)."""
    data = m.data
    limit = float(data.inputs.project.get("cable_in_rack_m") or 0.0)
    nics = int(data.node["nics_per_node"])
    modes = m.modes_at[s] if modes is None else modes
    total = 0
    for i in modes:
        mode = data.modes[i]
        for t, links in enumerate(tier_links(m, s, i)):
            cable = mode.cables[t]
            if cable.kind == "transceiver" and (cable.length_m <= limit) == in_rack:
                total += links
        for a in m.attach_at.get((s, i), ()):
            cable = mode.attach[a]
            if cable.kind == "transceiver" and (cable.length_m <= limit) == in_rack:
                total += nics * m.attach[s, i, a]
    table = table_rows(data.inputs, "support_networks")
    for n, metres in data.support_lengths(s).items():
        if table[n]["link_kind"] == "transceiver" and (metres <= limit) == in_rack:
            total += support_links(table[n])[0] * sum(m.nodes[s, i] for i in modes)
    return total


def define_fiber_plant(m, data: ModelData) -> None:
    """The fiber plant (catalog fiber_plant) of each site s: its transceiver links (optical_links) short_s within
    cable_in_rack_m and long_s beyond; its lit inter-site fiber pair ends e_s = sum_{r at s, c} pairs_rc and coherent
    modules w_s = sum_{r at s, c coherent} waves_rc. A short link takes a jumper; a long one a jumper at each end, a
    trunk and a patch-panel port at each end; a pair end an ODF port and a duplex jumper (ODF to the gray module or
    the line terminal), a coherent module a duplex jumper to its mux port:
    jumpers = short_s + 2 long_s, trunks = long_s, duplex jumpers = e_s + w_s,
    0 <= P_panel panels_s - 2 long_s <= P_panel - 1, 0 <= P_odf odfs_s - e_s <= P_odf - 1 (integers: exactly the
    ceilings, so a design stopped short of optimality buys no spare panel)."""
    if not data.plant:
        return
    co = table_rows(data.inputs, "coherent")
    m.plant_short = pyo.Expression(m.S, rule=lambda m, s: optical_links(m, s, True))
    m.plant_long = pyo.Expression(m.S, rule=lambda m, s: optical_links(m, s, False))
    m.plant_ends = pyo.Expression(m.S, rule=lambda m, s: sum(
        m.pairs[r, c] for r in m.incident[s] for c in m.route[r].coherent))
    m.plant_modules = pyo.Expression(m.S, rule=lambda m, s: sum(
        m.waves[r, c] for r in m.incident[s] for c in m.route[r].coherent if not is_gray(co[c])))
    for role, name, ends in (("panel", "panels", lambda m, s: 2 * m.plant_long[s]),
                             ("odf", "odfs", lambda m, s: m.plant_ends[s])):
        if role not in data.plant:
            continue
        ports = int(data.plant[role]["ports"])
        m.add_component(name, pyo.Var(m.S, domain=pyo.NonNegativeIntegers))
        m.add_component(f"{name}_ports", pyo.Constraint(m.S, rule=lambda m, s, name=name, ends=ends, ports=ports:
                                                        pyo.inequality(0, ports * getattr(m, name)[s] - ends(m, s),
                                                                       ports - 1)))


def plant_usd_per_link(plant: dict, cable, in_rack_m: float) -> float:
    """The fiber plant one link of ``cable`` takes, in USD (define_fiber_plant): none for a cable; a transceiver link
    within ``in_rack_m`` a jumper; a longer one a jumper at each end, a trunk and a patch-panel port at each end
    (a panel's price over its ports: the panels' ceiling is per site)."""
    if cable.kind != "transceiver" or not plant:
        return 0.0
    price = {role: float(row["price_usd"]) for role, row in plant.items()}
    if cable.length_m <= in_rack_m:
        return price.get("jumper", 0.0)
    panel = 2 * price["panel"] / float(plant["panel"]["ports"]) if "panel" in plant else 0.0
    return 2 * price.get("jumper", 0.0) + price.get("trunk", 0.0) + panel


def plant_counts(m, s) -> dict:
    """Items of each priced fiber_plant role at site s (define_fiber_plant)."""
    if not m.data.plant:
        return {}
    short, long = m.plant_short[s], m.plant_long[s]
    counts = {"jumper": short + 2 * long, "trunk": long, "duplex_jumper": m.plant_ends[s] + m.plant_modules[s]}
    panels = {"panel": "panels", "odf": "odfs"}
    return {role: counts[role] if role in counts else getattr(m, panels[role])[s] for role in m.data.plant}


def plant_cost(m, s):
    """Jumpers, trunks, patch panels and ODFs of site s in USD (define_fiber_plant)."""
    return sum(float(m.data.plant[role]["price_usd"]) * count for role, count in plant_counts(m, s).items())


def site_it_watts(m, s):
    """IT power of site s in W: nodes, switches, cables/optics, DCI routers, coherent modules, the line system's
    units at its end of each lit coherent pair (booster, preamp, mux/demux), support networks, DCI attachments."""
    data = m.data
    node_w = float(data.node["node_power_kw"]) * 1e3
    sw = switch_rows(data.inputs)
    co = table_rows(data.inputs, "coherent")
    total = 0
    for i in m.modes_at[s]:
        mode = data.modes[i]
        mult = data.multiplier[i]
        total += node_w * m.nodes[s, i]
        total += mult * float(sw[mode.leaf]["power_w"]) * leaf_count(m, s, i)
        if mode.spine:
            total += mult * float(sw[mode.spine]["power_w"]) * spine_count(m, s, i)
        if mode.core:
            total += mult * float(sw[mode.core]["power_w"]) * core_count(m, s, i)
        for t, links in enumerate(tier_links(m, s, i)):
            total += mode.cables[t].unit_power_w * cable_items(m, s, i, t, links)
    total += sum(float(sw[k]["power_w"]) * m.routers[s, k] for k in m.K)
    total += sum(float(co[c]["power_w"]) * m.waves[r, c] for r in m.incident[s] for c in m.route[r].coherent)
    total += sum(end_watts(m.route[r]) * coherent_pairs(m, r) for r in m.incident[s])
    return total + support_terms(m, s, "power") + attach_terms(m, s, "power")


def define_power(m, data: ModelData) -> None:
    """Facility power: mw_s = PUE_s x IT_s / 1e6 <= cap_s open_s, cap_s = power_mw_s (1 - power_headroom)
    (models.modes.power_cap_mw; the definition row in kW)."""
    sites = table_rows(data.inputs, "sites")
    m.mw = pyo.Var(m.S, domain=pyo.NonNegativeReals)
    m.mw_def = pyo.Constraint(m.S, rule=lambda m, s: 1e3 * m.mw[s] == float(sites[s]["pue"])
                              * site_it_watts(m, s) / 1e3)  # kW on both sides
    m.power_cap = pyo.Constraint(m.S, rule=lambda m, s: m.mw[s] <= power_cap_mw(data.inputs, s) * m.open[s])


def site_capex(m, s):
    """Capex of site s: nodes, fixed cost, facility power, switches, cables/optics, DCI routers,
    coherent modules at its end of each route, support networks, DCI attachments, fiber plant."""
    data = m.data
    sites = table_rows(data.inputs, "sites")
    sw = switch_rows(data.inputs)
    co = table_rows(data.inputs, "coherent")
    cost = float(sites[s]["fixed_cost_usd"]) * m.open[s] + float(sites[s]["power_cost_usd_per_mw"]) * m.mw[s]
    node_price = float(data.node["node_price_usd"])
    for i in m.modes_at[s]:
        mode = data.modes[i]
        mult = data.multiplier[i]
        cost += node_price * m.nodes[s, i]
        cost += mult * float(sw[mode.leaf]["price_usd"]) * leaf_count(m, s, i)
        if mode.spine:
            cost += mult * float(sw[mode.spine]["price_usd"]) * spine_count(m, s, i)
        if mode.core:
            cost += mult * float(sw[mode.core]["price_usd"]) * core_count(m, s, i)
        for t, links in enumerate(tier_links(m, s, i)):
            cost += mode.cables[t].unit_price * cable_items(m, s, i, t, links)
    cost += sum(float(sw[k]["price_usd"]) * m.routers[s, k] for k in m.K)
    cost += sum(float(co[c]["price_usd"]) * m.waves[r, c] for r in m.incident[s] for c in m.route[r].coherent)
    return cost + support_terms(m, s, "price") + attach_terms(m, s, "price") + plant_cost(m, s)


def coherent_pairs(m, r):
    """Fiber pairs route r lights with coherent types (gray links take no line system)."""
    co = table_rows(m.data.inputs, "coherent")
    return sum(m.pairs[r, c] for c in m.route[r].coherent if not is_gray(co[c]))


def route_capex(m, r):
    """Fiber pairs over the route's length and its line system (models.intersite.line_usd): units per lit coherent
    pair, and a hut per in-line site once any coherent type is chosen, x_rc summed over the coherent types."""
    route = m.route[r]
    co = table_rows(m.data.inputs, "coherent")
    pairs = sum(m.pairs[r, c] for c in route.coherent)
    lit = sum(m.x[r, c] for c in route.coherent if not is_gray(co[c]))
    return route.cost_per_pair * pairs + line_usd(route, coherent_pairs(m, r), lit)


def define_cost(m, data: ModelData) -> None:
    """capex = sum_s site capex + sum_r route capex; energy = horizon x 8760 h x price_s x mw_s."""
    sites = table_rows(data.inputs, "sites")
    years = float(data.inputs.project.get("horizon_years") or 0)
    m.capex = pyo.Expression(expr=sum(site_capex(m, s) for s in m.S) + sum(route_capex(m, r) for r in m.R))
    m.energy = pyo.Expression(expr=sum(years * HOURS_PER_YEAR * float(sites[s]["energy_usd_per_mwh"]) * m.mw[s]
                                       for s in m.S))
    m.total_cost = pyo.Expression(expr=m.capex + m.energy)


def define_latency(m, data: ModelData) -> None:
    """The worst one-way fabric latency of any open site (us), by levels L_1 < ... < L_Q of the modes'
    latencies: above_q >= sum_{m: L_m >= L_q} y_sm at every site s (0 <= above_q <= 1), and
    worst_latency >= sum_q (L_q - L_{q-1}) above_q. Exact for integer y and far tighter in the
    relaxation than worst_latency >= L_m y_sm."""
    levels = sorted({mode.latency_us for mode in data.modes})
    m.L = pyo.Set(initialize=range(len(levels)))
    m.above = pyo.Var(m.L, bounds=(0, 1))
    m.worst_latency = pyo.Var(domain=pyo.NonNegativeReals)
    m.latency_level = pyo.Constraint(m.L, m.S, rule=lambda m, q, s: m.above[q] >= sum(
        m.y[s, i] for i in m.modes_at[s] if data.modes[i].latency_us >= levels[q]))
    m.latency_def = pyo.Constraint(expr=m.worst_latency >= sum(
        (levels[q] - (levels[q - 1] if q else 0.0)) * m.above[q] for q in m.L))


def add_budget_row(m, budget_usd: float, energy_share: float = 1.0) -> None:
    """The budget as an explicit row, capex + energy_share x energy <= budget_usd: for a model written to a file
    (share 1), or one whose objective weighs the energy over other years than the budget's (share: the budget's
    years over the objective's)."""
    m.budget = pyo.Constraint(expr=(m.capex + energy_share * m.energy) / COST_SCALE <= budget_usd / COST_SCALE)


def set_objective(m) -> None:
    """The cost objective, capex + energy in millions (COST_SCALE): the one objective the model is solved for
    (min_latency is a search over latency levels, each a cost solve)."""
    if hasattr(m, "obj"):
        m.del_component(m.obj)
    m.obj = pyo.Objective(expr=m.total_cost / COST_SCALE, sense=pyo.minimize)


def define_bounds(m, data: ModelData) -> None:
    """Column bounds on every integer count, each the most its rows allow or, for a count bought only to cover
    a need, the most an optimal design buys (one unit fewer would still cover it, for less):
    the per-mode counts at their big-M rows' M (nodes, leaves, su, agg, core, attach, spine modules) and
    modules_smt <= ceil((max link ends + k - 1) / k); a site total at the largest of its modes' (one mode a
    site); a route's capacity below max(D_a, D_b) + one link, D_s the most any row asks of site s (dci_ratio,
    the workload), so waves_rc <= ceil(1000 max(D_a, D_b) / g_c) and pairs_rc their fiber pairs (a single DCI
    optic a route), within fiber_pairs_r; attachments, router cages and routers what those waves and the
    buffer's bandwidth-delay product need; support_sn <= ceil(max nodes_s / nodes_per_switch_n);
    odfs_s <= ceil(sum_{r at s} fiber_pairs_r / P_odf), panels_s <= ceil(2 max long_s / P_panel).
    No design an optimum could be is cut off. Why: HiGHS's root reduced-cost fixing and domain propagation
    work on the integer domains; unbounded and loosely bounded counts took most of the default example's
    solve time."""
    walker = ExpressionBoundsVisitor(use_fixed_var_values_as_bounds=True)  # one: each new walker inspects itself

    def most(expr) -> float:
        walker.leaf_bounds.clear()  # the bounds it cached may have been tightened since
        return walker.walk_expression(expr)[1]

    for v, row in [(m.nodes, m.nodes_max), (m.su, getattr(m, "su_max", None)), (m.leaves, m.leaves_max),
                   (m.leaves, getattr(m, "mesh_max", None)), (m.agg, m.agg_max), (m.core, m.core_max),
                   (m.spine_modules, m.spine_module_pick), (m.lo, m.option_units), (m.ao, m.agg_option_units)]:
        for key in (row or ()):
            v[key].setub(big_m(row[key], v[key]))
    co = table_rows(data.inputs, "coherent")
    bw = nic_gbps_per_node(data) / 1e3
    cap = {}  # route -> most Tb/s an optimal design lights on it
    for r in m.R:
        route = m.route[r]
        need = max(m.most_need.get(route.a, 0.0), m.most_need.get(route.b, 0.0))
        for c in route.coherent:
            links, per = links_on_pairs(co[c], route.band)
            gbps = float(co[c]["gbps"])
            waves = min(most_links(co, route, c), max(1, math.ceil(1e3 * need / gbps - 1e-9)))
            m.waves[r, c].setub(waves)
            m.pairs[r, c].setub(min(route.fiber_pairs, -(-waves * per // links)))
            cap[r] = max(cap.get(r, 0.0), waves * gbps / 1e3)
    attachments = {s: min(data.most_attachments(s), math.ceil(sum(cap[r] for r in m.incident[s]) / bw - 1e-9))
                   for s in m.S if m.incident[s]}
    for s, i, a in m.SMA:
        m.attach[s, i, a].setub(attachments[s])
    for s, i, t in m.SMT:
        k = data.modes[i].cables[t].links_per_module
        m.modules[s, i, t].setub(math.ceil((most(tier_links(m, s, i)[t]) + k - 1) / k - 1e-9))
    for name, groups in m.total_groups.items():
        total = getattr(m, f"{name}_tot")
        for q, members in enumerate(groups):
            total[q].setub(math.floor(max(v.ub for v in members) + 1e-9))
    if hasattr(m, "SKG"):
        sw = switch_rows(data.inputs)
        factor = float(data.inputs.project["buffer_bdp_factor"])
        for s, k in m.SK:
            if not m.incident[s]:
                m.routers[s, k].setub(0)
                continue
            cages = 0
            for side, g in router_groups(m, s):
                if (s, k, side, g) in m.SKG:
                    ports = (int(data.node["nics_per_node"]) * attachments[s] if side == "fabric" else sum(
                        max((m.waves[r, c].ub for c in m.route[r].coherent if int(co[c]["gbps"]) == g),
                            default=0) for r in m.incident[s]))
                    m.dci_cages[s, k, side, g].setub(math.ceil(ports / router_lanes(sw, k, g) - 1e-9))
                    cages += m.dci_cages[s, k, side, g].ub
            bdp = factor * sum(bdp_mb(1e3 * cap[r], m.route[r].rtt_ms) for r in m.incident[s])
            buffer_mb = float(sw[k]["buffer_mb"])
            m.routers[s, k].setub(min(most_routers(m, s, k), max(
                -(-cages // router_cages(sw, k)), math.ceil(bdp / buffer_mb - 1e-9) if buffer_mb > 0 else 0)))
    table = table_rows(data.inputs, "support_networks")
    for s, n in m.SN:
        nodes = max((data.node_limit(s, i) for i in m.modes_at[s]), default=0)
        m.support[s, n].setub(math.ceil(nodes / float(table[n]["nodes_per_switch"]) - 1e-9))
    if hasattr(m, "panels"):
        ports = int(data.plant["panel"]["ports"])
        for s in m.S:
            long = max((most(optical_links(m, s, False, [i])) for i in m.modes_at[s]), default=0.0)
            m.panels[s].setub(math.ceil(2 * long / ports - 1e-9))
    if hasattr(m, "odfs"):
        ports = int(data.plant["odf"]["ports"])
        for s in m.S:
            m.odfs[s].setub(math.ceil(sum(m.route[r].fiber_pairs for r in m.incident[s]) / ports - 1e-9))


def define_tightening(m, data: ModelData) -> None:
    """Rows every integer design of the model satisfies, which its LP relaxation need not, in the block ``tight``,
    built deactivated (designer.solve.relaxation activates them where they raise the LP's bound by more than the gap
    asked; each shifts HiGHS's path elsewhere: the default example's proof took 1.5-4 s with them against 0.3 s):
    - fiber floor: pairs_rc >= x_rc (an integer pairs_rc >= q_c / l_c waves_rc >= q_c / l_c x_rc);
    - route ends: sum_{r at s} use_r >= open_s + multi - 1 (an open site of a connected design of two sites or more
      ends a used route; one open site may take multi = 0);
    - router floor: sum_k routers_sk >= open_s + multi - 1 at a site with routes (that route's wavelengths take
      router ports; without a router no wavelength is lit, and no second site opens);
    - wave ceilings: waves_rc <= W_rc x_rc, W_rc its bound (define_bounds: the most an optimal design lights);
    - demand covers (at most COVER_SITES usable sites): with D = ceil(gpus_required / gpus_per_node) and c_s the
      most nodes site s holds in any mode the whole model offers, each maximal set T of sites with c(T) < D leaves
      r_T = D - c(T) nodes to sites outside it: sum_{s not in T} min(c_s, r_T) open_s >= r_T.
    Why: the flow's relaxation fed a site through a route used 1/50 from a fractional root, a used optic bought a
    thirty-second of a fiber pair, a site a fifth of a router, and fractions of cheap sites covered the last nodes;
    on the 6-site oracle instance these rows take the root LP from 9.2% to 4.2% below the optimum and HiGHS's proof
    from 13 search nodes to 1-5."""
    m.tight = pyo.Block()
    t = m.tight
    t.fiber_floor = pyo.Constraint(m.RC, rule=lambda _, r, c: m.pairs[r, c] >= m.x[r, c])
    t.wave_ceiling = pyo.Constraint(m.RC, rule=lambda _, r, c: m.waves[r, c] <= m.waves[r, c].ub * m.x[r, c])
    if len(data.sites) > 1:
        t.route_ends = pyo.Constraint(m.S, rule=lambda _, s: sum(m.use[r] for r in m.incident[s])
                                      >= m.open[s] + m.multi - 1)
    if data.inter.routes and len(m.K):
        routed = [s for s in data.sites if m.incident[s]]
        t.router_floor = pyo.Constraint(routed, rule=lambda _, s: sum(m.routers[s, k] for k in m.K)
                                        >= m.open[s] + m.multi - 1)
    covers = demand_covers(data)
    t.demand_cover = pyo.Constraint(range(len(covers)), rule=lambda _, q: sum(
        c * m.open[s] for s, c in covers[q][0].items()) >= covers[q][1])
    t.deactivate()


def demand_covers(data: ModelData) -> list[tuple[dict, int]]:
    """define_tightening's covers as ({site: min(c_s, r_T)}, r_T), one per maximal set T of usable sites short of
    the demand; none over more than COVER_SITES usable sites."""
    gpn = int(data.node["gpus_per_node"])
    caps = {s: gpus // gpn for s, gpus in data.widest_gpus().items() if gpus >= gpn}
    if not 1 < len(caps) <= COVER_SITES:
        return []
    need = -(-int(data.inputs.project["gpus_required"]) // gpn)
    sites = sorted(caps)
    covers = []
    for k in range(len(sites)):
        for short in itertools.combinations(sites, k):
            held = sum(caps[s] for s in short)
            rest = [s for s in sites if s not in short]
            if held < need and all(held + caps[s] >= need for s in rest):
                covers.append(({s: min(caps[s], need - held) for s in rest}, need - held))
    return covers


def big_m(row, var) -> float:
    """The most ``var`` takes under a row ``a var + sum_b c_b b <= u`` (or >= l), every other variable b binary."""
    repn = generate_standard_repn(row.body, quadratic=False)
    coefs = {id(v): c for v, c in zip(repn.linear_vars, repn.linear_coefs)}
    a = coefs.pop(id(var))
    if a > 0 and row.has_ub():
        return (row.upper - repn.constant + sum(max(0.0, -c) for c in coefs.values())) / a
    if a < 0 and row.has_lb():
        return (repn.constant - row.lower + sum(max(0.0, c) for c in coefs.values())) / -a
    raise ValueError(f"{row.name} does not bound {var.name} above")
