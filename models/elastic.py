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
The objective is the sum of the slacks relative to their limits (demand weighted higher: a planner
changes resources before the job) plus a small share of the cost, so among equally small changes the
cheaper design wins. Loosening rather than editing the built constraints keeps this independent of
how models.network states them (big-M bounds, tightenings derived from power or space).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import pyomo.environ as pyo

from models.modes import floor_capacity, power_cap_mw

MILLION = 1e6
WEIGHTS = {"budget": 1.0, "power": 1.0, "space": 1.0, "latency": 1.0, "rtt": 1.0, "demand": 10.0}
COST_WEIGHT = 1e-3
NETWORK_POWER_FACTOR = 3.0  # ample power: this many times the nodes' own facility power
LIFTABLE = ("max_fabric_latency_us", "max_site_rtt_ms")  # limits applied before the model, liftable into penalties


@dataclass(frozen=True)
class Limits:
    """The planner's limits the elastic model measures its slack against."""

    gpus_required: int
    budget_usd: float | None
    power_mw: dict[str, float]
    max_nodes: dict[str, int]
    max_fabric_latency_us: float | None
    max_site_rtt_ms: float | None
    lifted: tuple[str, ...] = field(default=())  # which of the two limits were lifted into penalties

    @classmethod
    def of(cls, inputs, lift: tuple[str, ...] = ()) -> Limits:
        project = inputs.project
        lifted = tuple(k for k in LIFTABLE if k in lift and project.get(k) is not None)
        return cls(gpus_required=int(project["gpus_required"]), budget_usd=project.get("budget_usd"),
                   power_mw={s: power_cap_mw(inputs, s) for s in inputs.sites.index},
                   max_nodes={s: min(int(v), floor_capacity(inputs, s)) for s, v in inputs.sites["max_nodes"].items()},
                   max_fabric_latency_us=project.get("max_fabric_latency_us"),
                   max_site_rtt_ms=project.get("max_site_rtt_ms"), lifted=lifted)


def loosen(inputs, lift: tuple[str, ...] = ()):
    """Inputs with no budget and ample power and space at every site (enough nodes for the whole job at
    any one site), and without the limits named in ``lift`` (max_fabric_latency_us, max_site_rtt_ms)."""
    project = dict(inputs.project)
    project["budget_usd"] = None
    project["power_headroom"] = 0.0  # the headroom is in Limits.power_mw, which the slack is measured against
    for key in lift:
        project[key] = None
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
    return replace(inputs, project=project, sites=sites, floorplan=floorplan)


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
        m.slack_latency = pyo.Var(domain=pyo.NonNegativeReals)
        m.elastic_latency = pyo.Constraint(expr=m.worst_latency <= cap + m.slack_latency)
        terms.append(w["latency"] * m.slack_latency / cap)
    if "max_site_rtt_ms" in limits.lifted:
        cap = float(limits.max_site_rtt_ms)
        over = {r: (m.route[r].rtt_ms - cap) / cap for r in m.R if m.route[r].rtt_ms > cap + 1e-12}
        terms += [w["rtt"] * excess * m.use[r] for r, excess in over.items()]
    m.elastic_penalty = pyo.Expression(expr=sum(terms))
    if hasattr(m, "obj"):
        m.del_component(m.obj)
    m.obj = pyo.Objective(expr=m.elastic_penalty + COST_WEIGHT * m.total_cost / cost_scale, sense=pyo.minimize)


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
        "cost_usd": value(m.total_cost),
        "opened": opened,
        "modes": chosen,
        "nodes": {s: sum(value(m.nodes[s, i]) for i in m.modes_at[s]) for s in opened},
        "mw": {s: value(m.mw[s]) for s in opened},
        "used_routes": [r for r in m.R if value(m.use[r]) > 0.5],
    }
    return out
