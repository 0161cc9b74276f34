"""Resilience of a design: what one failure leaves (design.json ``resilience``).

- Per open site: the bisection bandwidth (max-flow across the site's balanced cut, designer.audit.flows,
  summed over its planes and rails, and per one of those networks: they are not joined) and what is left of it
  after losing the most loaded spine (aggregation) switch, and the most loaded core switch.
- Per failure (a used route, or all used routes of one shared-risk group, the routes sheet's ``srlg``): the
  inter-site capacity left without it, whether the open sites stay connected, and the GPUs cut off.
"""

from __future__ import annotations

import networkx as nx

from designer.audit.fabric import build_intersite_graph, site_graph
from designer.audit.flows import cuts, distinct_networks, max_flow, most_loaded


def resilience(design: dict) -> dict:
    return {"sites": [site_resilience(s, design) for s in design["sites"] if s["open"]],
            "routes": route_resilience(design)}


def site_resilience(entry: dict, design: dict) -> dict:
    """Bisection of the site and what is left after losing its most loaded spine, core switch."""
    nets = []
    for net, copies in distinct_networks(site_graph(entry, design)):
        site_cuts = cuts(net)
        if site_cuts:
            cut = site_cuts[-1]
            nets.append((net, copies, cut, max_flow(net, cut.side_a, cut.side_b)))
    total = sum(copies * flow for _, copies, _, flow in nets)
    networks = sum(copies for _, copies, _, _ in nets)  # planes, and rails of a rail-only fabric: not joined
    out = {"site": entry["name"], "bisection_gbps": total if nets else None, "networks": networks,
           "per_network_gbps": total / networks if networks else None}
    for role in ("spine", "core"):
        loaded = [(most_loaded(net, role), net, cut, flow) for net, _, cut, flow in nets]
        loaded = [x for x in loaded if x[0]]
        if not loaded:
            out[role] = None
            continue
        (_, victim), net, cut, flow = max(loaded, key=lambda x: x[0][0])
        left = total - flow + max_flow(net, cut.side_a, cut.side_b, removed={victim})
        out[role] = {"device": victim, "bisection_left_gbps": left, "share_left": left / total if total else None}
    return out


def failures(design: dict) -> dict[str, list[tuple[str, str]]]:
    """What one failure takes down among the used routes: every route of one srlg group (the routes sheet's
    ``srlg``) together, a route without a group alone (name -> site pairs)."""
    graph = build_intersite_graph(design)
    out: dict[str, list[tuple[str, str]]] = {}
    for a, b, d in graph.edges(data=True):
        if d.get("used"):
            out.setdefault(f"srlg {d['srlg']}" if d.get("srlg") else f"{a}--{b}", []).append((a, b))
    return out


def route_resilience(design: dict) -> list[dict]:
    """For each failure (a used route, or a shared-risk group's used routes): the inter-site capacity left on the
    other routes, whether the open sites stay connected, and the GPUs cut off (those outside the part of the open
    sites that keeps the most GPUs)."""
    graph = build_intersite_graph(design)
    gpus = {s["name"]: int(s.get("gpus") or 0) for s in design["sites"] if s["open"]}
    used = [(a, b, d) for a, b, d in graph.edges(data=True) if d.get("used")]
    total = sum(d["capacity_gbps"] for *_, d in used)
    out = []
    for name, lost in failures(design).items():
        gone = {frozenset(e) for e in lost}
        rest = nx.Graph([(u, v) for u, v, _ in used if frozenset((u, v)) not in gone])
        rest.add_nodes_from(gpus)
        parts = [c & set(gpus) for c in nx.connected_components(rest) if c & set(gpus)]
        kept = max((sum(gpus[s] for s in c) for c in parts), default=0)
        cap = sum(d["capacity_gbps"] for u, v, d in used if frozenset((u, v)) in gone)
        left = total - cap
        out.append({"route": ", ".join(f"{a}--{b}" for a, b in lost), "srlg": name[5:] if name.startswith("srlg ")
                    else None, "capacity_gbps": cap, "capacity_left_gbps": left,
                    "share_left": left / total if total else None, "sites_connected": len(parts) <= 1,
                    "gpus_cut_off": sum(gpus.values()) - kept})
    return out


ROW_COLUMNS = ["scope", "failure", "device", "before_gbps", "after_gbps", "share_left", "sites_connected",
               "gpus_cut_off"]


def rows(res: dict | None) -> list[dict]:
    """The resilience figures as flat rows (the design workbook's resilience sheet)."""
    out = []
    for s in (res or {}).get("sites", []):
        out.append({"scope": s["site"], "failure": "none", "device": None, "before_gbps": s["bisection_gbps"],
                    "after_gbps": s["bisection_gbps"], "share_left": 1.0 if s["bisection_gbps"] else None,
                    "sites_connected": None})
        for role in ("spine", "core"):
            if s.get(role):
                out.append({"scope": s["site"], "failure": f"most loaded {role}", "device": s[role]["device"],
                            "before_gbps": s["bisection_gbps"], "after_gbps": s[role]["bisection_left_gbps"],
                            "share_left": s[role]["share_left"], "sites_connected": None})
    for r in (res or {}).get("routes", []):
        out.append({"scope": "inter-site", "failure": f"srlg {r['srlg']} cut" if r.get("srlg") else "route cut",
                    "device": r["route"], "before_gbps": r["capacity_gbps"] + r["capacity_left_gbps"],
                    "after_gbps": r["capacity_left_gbps"], "share_left": r["share_left"],
                    "sites_connected": r["sites_connected"], "gpus_cut_off": r.get("gpus_cut_off")})
    return out


def summary_lines(res: dict | None) -> list[str]:
    """One line for the sites' bisection after one switch down, one for the worst route cut."""
    if not res:
        return []
    parts = []
    for s in res["sites"]:
        left = [f"{s[r]['share_left']:.1%} without a {r}" for r in ("spine", "core") if s.get(r)]
        if left:
            parts.append(f"{s['site']} {', '.join(left)}")
    lines = [f"  resilience: bisection left: {'; '.join(parts)}"] if parts else []
    if res["routes"]:
        worst = min(res["routes"], key=lambda r: r["share_left"] or 0.0)
        cut = [r["route"] for r in res["routes"] if not r["sites_connected"]]
        stranded = max(res["routes"], key=lambda r: r.get("gpus_cut_off") or 0)
        lines.append(f"  resilience: losing {worst['route']} leaves {worst['share_left']:.1%} of inter-site capacity; "
                     + (f"losing {'; '.join(cut)} cuts open sites apart (at worst {stranded['gpus_cut_off']:,} "
                        "GPUs cut off)" if cut else "every single route loss keeps the open sites connected"))
    return lines
