"""Elastic version of the network MILP, for saying why a workbook is infeasible and what to change.

The elastic model is the ordinary model (models.network.build_model) built from *loosened* inputs
(``loosen``: no budget, ample power and space at every site, and, when asked, no latency or RTT
limit), to which ``add_elastic`` adds penalised slack measured against the planner's real limits:

- budget:  total_cost / 1e6 <= budget_usd / 1e6 + slack_budget          (millions of USD)
- power:   mw_s <= power_mw_s + slack_power_s                            (MW, per site)
- space:   sum_m nodes_sm <= max_nodes_s + slack_space_s                 (nodes, per site; max_nodes_s
           is the floorplan's racks x nodes_per_rack where that is less)
- demand:  sum_sm gpus_per_node nodes_sm >= gpus_required - slack_demand (GPUs; replaces ``demand``)
- latency: worst_latency <= max_fabric_latency_us + slack_latency        (us, when lifted)
- RTT:     a used route above max_site_rtt_ms pays (rtt_r - limit) / limit
- dci_ratio: cap_s + slack_dci_s >= dci_ratio x bw x nodes_s - M_s (1 - multi)  (Tb/s, per site, when lifted;
           paid over the capacity the ratio asks of the site's max_nodes: the share of the ratio given up)
- fiber:   sum_c pairs_rc <= fiber_pairs_r + slack_fiber_r                 (pairs, per route, when lifted)
- oversubscription, protocols, topologies (when lifted): a site's mode above max_oversubscription pays
           (level - limit) / limit, one of a protocol or topology not allowed pays 1, on its y_sm
- route_diversity (when lifted): models.network.define_route_diversity's flow per failure g (a route, or an
           srlg group's routes) with a shortfall: inflow_gs - outflow_gs + supply_gs + short_gs = open_s,
           0 <= short_gs <= drop_rd, drop_rd binary paying 1 (a restriction given up). drop_rd = 0 is the
           original constraint exactly; drop_rd = 1 leaves only define_connectivity (connected, not N-1)
- power_headroom is not lifted: the power slack is measured against power_mw x (1 - power_headroom)
           (models.modes.power_cap_mw), so a slack within the held-back share is the headroom to give up
The objective is the sum of the slacks relative to their limits (dci_ratio and the demand weighted higher:
a planner changes resources and limits before what the job asks) plus a small share of the cost, so among equally small changes the
cheaper design wins. Loosening rather than editing the built constraints keeps this independent of
how models.network states them (big-M bounds, tightenings derived from power or space).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import pyomo.environ as pyo

from models.intersite import fiber_gbps
from models.modes import TOPOLOGY_VARIANTS, floor_capacity, power_cap_mw
from models.network import define_latency, nic_gbps_per_node, site_capacity

MILLION = 1e6
# resources and limits weigh 1; what the job asks weighs more, changed only when the rest would take far more:
# the inter-site share (dci_ratio) 10, the GPUs 100
WEIGHTS = {"budget": 1.0, "power": 1.0, "space": 1.0, "latency": 1.0, "rtt": 1.0, "dci": 10.0, "fiber": 1.0,
           "oversubscription": 1.0, "restriction": 1.0, "diversity": 1.0, "demand": 100.0}
COST_WEIGHT = 1e-3
NETWORK_POWER_FACTOR = 3.0  # ample power: this many times the nodes' own facility power
# limits applied before the model or inside it, liftable into penalties
LIFTABLE = ("max_fabric_latency_us", "max_site_rtt_ms", "dci_ratio", "fiber_pairs", "max_oversubscription",
            "protocols_allowed", "topologies_allowed", "route_diversity")
LIFTED_OVERSUBSCRIPTION = 4.0  # max_oversubscription when lifted (higher levels multiply the modes for little)


@dataclass(frozen=True)
class Limits:
    """The planner's limits the elastic model measures its slack against."""

    gpus_required: int
    budget_usd: float | None
    power_mw: dict[str, float]
    max_nodes: dict[str, int]
    max_fabric_latency_us: float | None
    max_site_rtt_ms: float | None
    dci_ratio: float = 0.0
    fiber_pairs: dict[str, int] = field(default_factory=dict)  # route key (a--b) -> pairs
    max_oversubscription: float = 1.0
    protocols_allowed: tuple[str, ...] = ()
    topologies_allowed: tuple[str, ...] = ()
    lifted: tuple[str, ...] = field(default=())  # which limits were lifted into penalties

    @classmethod
    def of(cls, inputs, lift: tuple[str, ...] = ()) -> Limits:
        project = inputs.project
        lifted = tuple(k for k in LIFTABLE if k in lift and (k == "fiber_pairs" or (
            bool(project.get(k)) if k == "route_diversity" else project.get(k) is not None)))
        return cls(gpus_required=int(project["gpus_required"]), budget_usd=project.get("budget_usd"),
                   power_mw={s: power_cap_mw(inputs, s) for s in inputs.sites.index},
                   max_nodes={s: min(int(v), floor_capacity(inputs, s)) for s, v in inputs.sites["max_nodes"].items()},
                   max_fabric_latency_us=project.get("max_fabric_latency_us"),
                   max_site_rtt_ms=project.get("max_site_rtt_ms"), dci_ratio=float(project["dci_ratio"]),
                   fiber_pairs={f"{r['site_a']}--{r['site_b']}": int(r["fiber_pairs"]) for _, r in inputs.routes.iterrows()},
                   max_oversubscription=float(project["max_oversubscription"]),
                   protocols_allowed=tuple(project["protocols_allowed"]),
                   topologies_allowed=tuple(project["topologies_allowed"]), lifted=lifted)


def loosen(inputs, lift: tuple[str, ...] = ()):
    """Inputs with no budget and ample power and space at every site (enough nodes for the whole job at
    any one site), and without the limits named in ``lift`` (LIFTABLE): dci_ratio 0, fiber pairs enough for any
    site's share of the job at the current ratio, every protocol and topology, max_oversubscription
    LIFTED_OVERSUBSCRIPTION."""
    project = dict(inputs.project)
    project["budget_usd"] = None
    project["power_headroom"] = 0.0  # the headroom is in Limits.power_mw, which the slack is measured against
    for key in set(lift) & {"max_fabric_latency_us", "max_site_rtt_ms"}:
        project[key] = None
    if "dci_ratio" in lift:
        project["dci_ratio"] = 0.0
    if "route_diversity" in lift:
        project["route_diversity"] = False  # back as a penalised constraint (add_elastic), its pairs not excluded
    if "max_oversubscription" in lift:
        project["max_oversubscription"] = max(float(project["max_oversubscription"]), LIFTED_OVERSUBSCRIPTION)
    if "protocols_allowed" in lift:
        project["protocols_allowed"] = list(inputs.protocols.index)
    if "topologies_allowed" in lift:
        project["topologies_allowed"] = list(dict.fromkeys(t for t, _, _ in TOPOLOGY_VARIANTS))
    if "max_fabric_latency_us" in lift:
        # latency now carries a penalty: keep the mode pruning (models.dominance) latency-aware, as it is
        # for min_latency (the elastic model sets its own objective)
        project["objective"] = "min_latency"
    node = inputs.node_types.loc[project["node_type"]]
    need = math.ceil(int(project["gpus_required"]) / int(node["gpus_per_node"]))
    sites = inputs.sites.copy()
    ample_nodes = sites["max_nodes"].clip(lower=need).astype("int64")
    node_mw = float(node["node_power_kw"]) / 1e3
    ample_power = (ample_nodes * node_mw * sites["pue"] * NETWORK_POWER_FACTOR).combine(sites["power_mw"], max)
    sites["max_nodes"] = ample_nodes
    sites["power_mw"] = ample_power.astype("float64")
    floorplan = inputs.floorplan.copy()
    if len(floorplan):  # rows enough for the whole job at any site
        floorplan["rows"] = need
    routes = inputs.routes.copy()
    if "fiber_pairs" in lift and len(routes):
        routes["fiber_pairs"] = [max(int(r["fiber_pairs"]), ample_pairs(inputs, r, need)) for _, r in routes.iterrows()]
    return replace(inputs, project=project, sites=sites, floorplan=floorplan, routes=routes)


def ample_pairs(inputs, route, nodes: int) -> int:
    """Fiber pairs enough for ``nodes`` nodes' inter-site capacity at the project's dci_ratio over ``route`` with
    its densest DCI optic within reach (1 when none is): more would only weaken the model's bounds."""
    node = inputs.node_types.loc[inputs.project["node_type"]]
    need_gbps = float(inputs.project["dci_ratio"]) * nodes * float(node["nics_per_node"]) * float(node["nic_gbps"])
    per_pair = [fiber_gbps(row, 1, str(route["band"])) for _, row in inputs.coherent.iterrows()
                if float(row["reach_km"]) >= float(route["distance_km"])]
    per_pair = [g for g in per_pair if g > 0]
    return math.ceil(need_gbps / max(per_pair)) + 1 if per_pair else 1


def add_elastic(m, data, limits: Limits, weights: dict | None = None) -> None:
    """Slack variables, the constraints that measure them and the elastic objective ``m.obj``."""
    w = {**WEIGHTS, **(weights or {})}
    gpn = int(data.node["gpus_per_node"])
    sites = list(m.S)
    m.slack_power = pyo.Var(m.S, domain=pyo.NonNegativeReals)
    m.slack_space = pyo.Var(m.S, domain=pyo.NonNegativeReals)
    m.slack_demand = pyo.Var(domain=pyo.NonNegativeReals)
    m.elastic_power = pyo.Constraint(m.S, rule=lambda m, s: m.mw[s] <= limits.power_mw[s] + m.slack_power[s])
    m.elastic_space = pyo.Constraint(m.S, rule=lambda m, s: sum(m.nodes[s, i] for i in m.modes_at[s])
                                     <= limits.max_nodes[s] + m.slack_space[s])
    if hasattr(m, "demand"):
        m.demand.deactivate()
    m.elastic_demand = pyo.Constraint(expr=sum(gpn * m.nodes[s, i] for s, i in m.SM)
                                      >= limits.gpus_required - m.slack_demand)
    terms = [w["power"] * m.slack_power[s] / max(limits.power_mw[s], 1e-6) for s in sites]
    terms += [w["space"] * m.slack_space[s] / max(limits.max_nodes[s], 1) for s in sites]
    terms.append(w["demand"] * m.slack_demand / limits.gpus_required)
    if limits.budget_usd is not None:
        m.slack_budget = pyo.Var(domain=pyo.NonNegativeReals)
        m.elastic_budget = pyo.Constraint(expr=m.total_cost / MILLION <= limits.budget_usd / MILLION + m.slack_budget)
        terms.append(w["budget"] * m.slack_budget * MILLION / limits.budget_usd)
        cost_scale = limits.budget_usd
    else:
        node_price = float(data.node["node_price_usd"])
        cost_scale = max(1.0, node_price * limits.gpus_required / gpn)
    if "max_fabric_latency_us" in limits.lifted:
        cap = float(limits.max_fabric_latency_us)
        define_latency(m, data)
        m.slack_latency = pyo.Var(domain=pyo.NonNegativeReals)
        m.elastic_latency = pyo.Constraint(expr=m.worst_latency <= cap + m.slack_latency)
        terms.append(w["latency"] * m.slack_latency / cap)
    if "max_site_rtt_ms" in limits.lifted:
        cap = float(limits.max_site_rtt_ms)
        over = {r: (m.route[r].rtt_ms - cap) / cap for r in m.R if m.route[r].rtt_ms > cap + 1e-12}
        terms += [w["rtt"] * excess * m.use[r] for r, excess in over.items()]
    terms += _elastic_network(m, data, limits, w)
    m.elastic_penalty = pyo.Expression(expr=sum(terms))
    if hasattr(m, "obj"):
        m.del_component(m.obj)
    m.obj = pyo.Objective(expr=m.elastic_penalty + COST_WEIGHT * m.total_cost / cost_scale, sense=pyo.minimize)


def _elastic_network(m, data, limits: Limits, w: dict) -> list:
    """Slack and penalty terms of the lifted dci_ratio, fiber pairs, oversubscription, protocol, topology and
    route_diversity limits (module docstring)."""
    terms = []
    if "route_diversity" in limits.lifted and len(data.sites) > 1 and data.inter.routes:
        terms.append(w["diversity"] * _elastic_diversity(m, data))
    if "dci_ratio" in limits.lifted and limits.dci_ratio > 0 and len(data.sites) > 1:
        per_node = limits.dci_ratio * nic_gbps_per_node(data) / 1e3  # Tb/s

        m.slack_dci = pyo.Var(m.S, domain=pyo.NonNegativeReals)
        m.elastic_dci = pyo.Constraint(m.S, rule=lambda m, s: site_capacity(m, s) + m.slack_dci[s] >= per_node * sum(
            m.nodes[s, i] for i in m.modes_at[s]) - per_node * data.site_node_limit(s) * (1 - m.multi))
        terms += [w["dci"] * m.slack_dci[s] / max(per_node * limits.max_nodes[s], 1e-9) for s in m.S]
    if "fiber_pairs" in limits.lifted:
        have = {r: limits.fiber_pairs.get(r, m.route[r].fiber_pairs) for r in m.R}
        m.slack_fiber = pyo.Var(m.R, domain=pyo.NonNegativeReals)
        m.elastic_fiber = pyo.Constraint(m.R, rule=lambda m, r: sum(m.pairs[r, c] for c in m.route[r].coherent)
                                         <= have[r] + m.slack_fiber[r])
        terms += [w["fiber"] * m.slack_fiber[r] / max(have[r], 1) for r in m.R]
    pay = {i: mode_penalty(mode, limits, w) for i, mode in enumerate(data.modes)}
    terms += [pay[i] * m.y[s, i] for s, i in m.SM if pay[i]]
    return terms


def mode_penalty(mode, limits: Limits, w: dict = WEIGHTS) -> float:
    """What choosing ``mode`` at a site pays in the elastic objective: (level - limit) / limit above a lifted
    max_oversubscription, 1 for a protocol or topology a lifted restriction leaves out. The mode pruning takes it
    as a criterion (designer.solve.prepare), so a mode is not dropped for a cheaper one that pays more here."""
    penalty = 0.0
    if "max_oversubscription" in limits.lifted and mode.oversubscription > limits.max_oversubscription + 1e-9:
        penalty += w["oversubscription"] * (mode.oversubscription - limits.max_oversubscription) / limits.max_oversubscription
    if ("protocols_allowed" in limits.lifted and mode.protocol not in limits.protocols_allowed) or \
            ("topologies_allowed" in limits.lifted and mode.topology not in limits.topologies_allowed):
        penalty += w["restriction"]
    return penalty


def _elastic_diversity(m, data):
    """N-1 route diversity with one binary ``drop_rd`` that may give it up (module docstring); returns drop_rd."""
    from models.intersite import failure_groups

    n = len(data.sites)
    groups = failure_groups(data.inter.routes)
    m.el_G = pyo.Set(initialize=list(groups), ordered=True)
    arcs = [(g, r, d) for g in groups for r in m.R if r not in groups[g] for d in (0, 1)]
    m.drop_rd = pyo.Var(domain=pyo.Binary)
    m.el_rd_flow = pyo.Var(arcs, domain=pyo.NonNegativeReals)
    m.el_rd_supply = pyo.Var(m.el_G, m.S, domain=pyo.NonNegativeReals)
    m.el_rd_short = pyo.Var(m.el_G, m.S, domain=pyo.NonNegativeReals, bounds=(0, 1))
    m.el_rd_use = pyo.Constraint(arcs, rule=lambda m, g, r, d: m.el_rd_flow[g, r, d] <= (n - 1) * m.use[r])
    m.el_rd_root = pyo.Constraint(m.el_G, m.S, rule=lambda m, g, s: m.el_rd_supply[g, s] <= n * m.root[s])
    m.el_rd_drop = pyo.Constraint(m.el_G, m.S, rule=lambda m, g, s: m.el_rd_short[g, s] <= m.drop_rd)
    ends = {a: (m.route[a[1]].b, m.route[a[1]].a)[::1 if a[2] == 0 else -1] for a in arcs}  # arc -> (head, tail)

    def balance(m, g, s):
        net = sum(m.el_rd_flow[a] for a in arcs if a[0] == g and ends[a][0] == s) - sum(
            m.el_rd_flow[a] for a in arcs if a[0] == g and ends[a][1] == s)
        return net + m.el_rd_supply[g, s] + m.el_rd_short[g, s] == m.open[s]

    m.el_rd_balance = pyo.Constraint(m.el_G, m.S, rule=balance)
    return m.drop_rd


def value(x) -> float:
    v = pyo.value(x, exception=False)
    return 0.0 if v is None else float(v)


def read_slacks(m, limits: Limits) -> dict:
    """The slack of every relaxed limit in the loaded solution, and what the elastic design opened."""
    opened = [s for s in m.S if value(m.open[s]) > 0.5]
    chosen = {s: i for s in opened for i in m.modes_at[s] if value(m.y[s, i]) > 0.5}
    out = {
        "budget_musd": value(m.slack_budget) if hasattr(m, "slack_budget") else 0.0,
        "power_mw": {s: value(m.slack_power[s]) for s in m.S},
        "space_nodes": {s: value(m.slack_space[s]) for s in m.S},
        "demand_gpus": value(m.slack_demand),
        "latency_us": value(m.slack_latency) if hasattr(m, "slack_latency") else 0.0,
        "route_diversity_dropped": hasattr(m, "drop_rd") and value(m.drop_rd) > 0.5,
        "cost_usd": value(m.total_cost),
        "opened": opened,
        "modes": chosen,
        "nodes": {s: sum(value(m.nodes[s, i]) for i in m.modes_at[s]) for s in opened},
        "mw": {s: value(m.mw[s]) for s in opened},
        "used_routes": [r for r in m.R if value(m.use[r]) > 0.5],
        "dci_tbps": {s: value(m.slack_dci[s]) for s in m.S} if hasattr(m, "slack_dci") else {},
        "fiber_pairs": {r: value(m.slack_fiber[r]) for r in m.R} if hasattr(m, "slack_fiber") else {},
        "pairs_used": {r: sum(value(m.pairs[r, c]) for c in m.route[r].coherent) for r in m.R},
        "capacity_tbps": {s: value(site_capacity(m, s)) for s in opened},
    }
    return out
