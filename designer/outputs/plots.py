"""Figures of a design (matplotlib, Agg backend): each function takes the Solution dict (or rows made from
it by designer.outputs.statistics) and returns a Figure; ``data_uri`` turns one into an embeddable SVG.

No figure reads a file or the network; the map is a plain lat/lon scatter with routes, no tiles.
"""

from __future__ import annotations

import base64
import io
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import LineCollection, PatchCollection  # noqa: E402
from matplotlib.patches import FancyBboxPatch, Rectangle  # noqa: E402

from designer.formats import money  # noqa: E402
from designer.outputs import statistics as st  # noqa: E402

PALETTE = {"nodes": "#4C72B0", "site": "#937860", "power": "#C44E52", "switches": "#55A868", "optics": "#8172B3",
           "dci_routers": "#DA8BC3", "dci_attachment": "#E7A9D4", "coherent": "#CCB974", "dci_optics": "#E1C16E", "amplifiers": "#64B5CD",
           "line_system": "#4A9BB5", "fiber": "#8C8C8C", "fiber_plant": "#A6A6A6", "storage_network": "#8EBA42", "management_network": "#B9B9B9"}
TIER_COLORS = {"leaf": "#55A868", "spine": "#4C72B0", "core": "#8172B3", "dci": "#DA8BC3", "nodes": "#937860"}
LATENCY_COLORS = {"nic": "#4C72B0", "switching": "#55A868", "propagation": "#CCB974", "nvlink": "#C44E52"}
MAX_BOXES = 8
RACK_SLOT_IN = 0.17  # inches of figure height a node of a rack elevation takes (its label's 8 points and a gap)

plt.rcParams.update({"font.size": 9, "axes.titlesize": 10, "axes.spines.top": False, "axes.spines.right": False,
                     "svg.fonttype": "none", "svg.hashsalt": "designer"})  # the same figure, the same bytes


def data_uri(fig) -> str:
    """The figure as a base64 SVG data URI; the figure is closed. Vector, its text kept as text (svg.fonttype none:
    the browser's sans-serif where DejaVu Sans is missing, most narrower): sharp at any zoom and in print, and
    against PNG at 100 dpi the default example's 19 figures save in 2.3 s, not 3.8 s, in half the bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", facecolor="white", metadata={"Date": None})
    plt.close(fig)
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def save(fig, path, dpi: int = 120) -> None:
    fig.savefig(path, dpi=dpi, bbox_inches="tight", facecolor="white")
    plt.close(fig)


def _millions(ax, axis="x"):
    which = ax.xaxis if axis == "x" else ax.yaxis
    which.set_major_locator(matplotlib.ticker.MaxNLocator(4))
    which.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _p: _short_money(v)))


def _short_money(v: float) -> str:
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"${v / scale:g}{suffix}"
    return f"${v:g}"


# --- cost and power ------------------------------------------------------------------------------

def cost_figure(solution: dict):
    """Capex by category (left) and by site, stacked by category (right)."""
    by_cat = st.cost_by_category(solution)
    scopes, cats, matrix = st.cost_matrix(solution)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, max(2.6, 0.34 * max(len(by_cat), len(scopes)) + 1.2)),
                                   gridspec_kw={"width_ratios": [1, 1.25]})
    names = list(by_cat)[::-1]
    values = [by_cat[n] for n in names]
    total = sum(values) or 1.0
    ax1.barh([st.CATEGORY_LABELS.get(n, n) for n in names], values, color=[PALETTE.get(n, "#999") for n in names])
    for y, v in enumerate(values):
        ax1.text(v, y, f" {money(v)} ({v / total:.0%})", va="center", fontsize=8)
    ax1.set_xlim(0, max(values, default=1) * 1.45)
    _millions(ax1)
    ax1.set_title("capex by category")
    left = [0.0] * len(scopes)
    ys = list(range(len(scopes)))[::-1]
    for j, c in enumerate(cats):
        widths = [row[j] for row in matrix]
        ax2.barh(ys, widths, left=left, color=PALETTE.get(c, "#999"), label=st.CATEGORY_LABELS.get(c, c))
        left = [a + b for a, b in zip(left, widths)]
    ax2.set_yticks(ys, scopes)
    for y, v in zip(ys, left):
        ax2.text(v, y, f" {money(v)}", va="center", fontsize=8)
    ax2.set_xlim(0, max(left, default=1) * 1.3)
    _millions(ax2)
    ax2.set_title("capex by site and route")
    ax2.legend(fontsize=7, loc="lower right", frameon=True, framealpha=0.9)
    fig.tight_layout()
    return fig


def power_figure(solution: dict):
    """Facility power used (IT part and PUE overhead) against each open site's cap."""
    rows = st.power_vs_cap(solution)
    fig, ax = plt.subplots(figsize=(8, max(1.8, 0.55 * len(rows) + 1.0)))
    ys = list(range(len(rows)))[::-1]
    names = [r["site"] for r in rows]
    ax.barh(ys, [r["cap_mw"] for r in rows], color="#f0f0f0", edgecolor="#888", label="power cap")
    ax.barh(ys, [r["it_mw"] for r in rows], color="#4C72B0", height=0.5, label="IT power")
    ax.barh(ys, [r["facility_mw"] - r["it_mw"] for r in rows], left=[r["it_mw"] for r in rows], height=0.5,
            color="#9BB5DA", label="cooling & losses (PUE)")
    for y, r in zip(ys, rows):
        share = f"{r['share']:.0%}" if r["share"] is not None else "n/a"
        ax.text(max(r["cap_mw"], r["facility_mw"]), y, f"  {r['facility_mw']:.3g} / {r['cap_mw']:g} MW ({share})",
                va="center", fontsize=8)
    ax.set_yticks(ys, names)
    ax.set_xlim(0, (max([r["cap_mw"] for r in rows] + [r["facility_mw"] for r in rows], default=0) or 1) * 1.4)
    ax.set_xlabel("MW (facility)")
    ax.set_title("power used against the cap, per site")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22 - 0.3 / max(len(rows), 1)), ncol=3,
              frameon=False)
    return fig


# --- map -----------------------------------------------------------------------------------------

def _place_labels(ax, fig, texts):
    """Nudge site labels so they do not overlap (a few candidate offsets, first free one wins)."""
    offsets = [(7, 7), (7, -13), (-7, 7), (-7, -13), (0, 16), (0, -22), (14, 0), (-14, 0), (12, 24), (12, -30)]
    fig.draw_without_rendering()  # the limits and positions final, nothing rasterized
    renderer = fig.canvas.get_renderer()
    placed = []
    for text in texts:
        for dx, dy in offsets:
            text.set_position((dx, dy))
            text.set_ha("left" if dx >= 0 else "right")
            box = text.get_window_extent(renderer).expanded(1.05, 1.1)
            if not any(box.overlaps(p) for p in placed):
                break
        placed.append(text.get_window_extent(renderer))


def map_figure(solution: dict):
    """Sites at their lat/lon (a schematic circle when the workbook gives none) with the routes: used
    routes thick and numbered, their coherent type, capacity and RTT listed beside the map."""
    sites = st.site_locations(solution)
    routes = st.route_rows(solution)
    located = [s for s in sites if s["lat"] is not None and s["lon"] is not None]
    schematic = not located
    pos = {}
    if schematic:
        n = len(sites)
        for k, s in enumerate(sites):
            angle = math.pi / 2 - 2 * math.pi * k / max(n, 1)
            pos[s["name"]] = (math.cos(angle), math.sin(angle)) if n > 1 else (0.0, 0.0)
    else:
        for s in located:
            pos[s["name"]] = (float(s["lon"]), float(s["lat"]))
        xs = [p[0] for p in pos.values()]
        ys = [p[1] for p in pos.values()]
        missing = [s for s in sites if s["name"] not in pos]
        for k, s in enumerate(missing):  # sites without coordinates: a row under the map
            pos[s["name"]] = (min(xs) + k * 0.8, min(ys) - 1.0)
    fig = plt.figure(figsize=(11, 5.2))
    ax = fig.add_axes([0.04, 0.08, 0.5, 0.84])
    side = fig.add_axes([0.57, 0.08, 0.42, 0.84])
    side.axis("off")
    used = [r for r in routes if r["used"]]
    max_cap = max([r["capacity_gbps"] or 0 for r in used] + [1])
    coherent_types = sorted({r["coherent_model"] for r in used})
    cmap = plt.get_cmap("tab10")
    ccolor = {c: cmap(i % 10) for i, c in enumerate(coherent_types)}
    legend_lines = []
    number = 0
    for r in routes:
        if r["site_a"] not in pos or r["site_b"] not in pos:
            continue
        (x1, y1), (x2, y2) = pos[r["site_a"]], pos[r["site_b"]]
        if r["used"]:
            number += 1
            width = 1.5 + 5.5 * (r["capacity_gbps"] or 0) / max_cap
            ax.plot([x1, x2], [y1, y2], color=ccolor[r["coherent_model"]], lw=width, alpha=0.85, zorder=2,
                    solid_capstyle="round")
            ax.annotate(str(number), ((x1 + x2) / 2, (y1 + y2) / 2), ha="center", va="center", fontsize=7,
                        zorder=5, bbox={"boxstyle": "circle,pad=0.2", "fc": "white", "ec": "#333", "lw": 0.6})
            legend_lines.append(f"{number}. {r['site_a']} - {r['site_b']}: {r['wavelengths']:,} x "
                                f"{r['coherent_model']}, {r['capacity_gbps'] / 1e3:,.1f} Tb/s, "
                                f"RTT {r['rtt_ms']:.3f} ms, {r['fiber_pairs']} pair(s)")
        else:
            ax.plot([x1, x2], [y1, y2], color="#aaa", lw=1, ls="--", zorder=1)
            legend_lines.append(f"-  {r['site_a']} - {r['site_b']}: unused, {r['distance_km']:g} km, "
                                f"RTT {r['rtt_ms']:.3f} ms")
    max_gpus = max([s["gpus"] for s in sites] + [1])
    texts = []
    for s in sites:
        x, y = pos[s["name"]]
        if s["open"]:
            ax.scatter([x], [y], s=60 + 400 * s["gpus"] / max_gpus, color="#C44E52", edgecolor="black", zorder=3)
        else:
            if s["status"] == "excluded":
                ax.scatter([x], [y], s=60, color="#555", marker="x", zorder=3)
            else:
                ax.scatter([x], [y], s=60, facecolor="white", edgecolor="#555", zorder=3)
        label = f"{s['name']}\n{s['gpus']:,} GPUs" if s["open"] else f"{s['name']} ({s['status']}, closed)" \
            if s["status"] == "excluded" else f"{s['name']} (closed)"
        texts.append(ax.annotate(label, (x, y), xytext=(7, 7), textcoords="offset points", fontsize=8, zorder=6,
                                 bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.75}))
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    span = max(max(xs) - min(xs), max(ys) - min(ys), 0.5)
    ax.set_xlim(min(xs) - 0.25 * span, max(xs) + 0.25 * span)
    ax.set_ylim(min(ys) - 0.2 * span, max(ys) + 0.2 * span)
    if schematic:
        ax.set_xticks([])
        ax.set_yticks([])
        for spine in ax.spines.values():
            spine.set_visible(False)
        ax.set_title("sites and routes (schematic: no lat/lon in the workbook)")
    else:
        mean_lat = sum(ys) / len(ys)
        ax.set_aspect(1 / max(math.cos(math.radians(mean_lat)), 0.2), adjustable="box")
        ax.set_xlabel("longitude")
        ax.set_ylabel("latitude")
        ax.set_title("sites and routes (line width: capacity)")
        ax.grid(alpha=0.3)
    _place_labels(ax, fig, texts)
    lines = ["Routes"] + (legend_lines or ["(no routes in the workbook)"])
    lines += ["", "Sites: filled = opened (size: GPUs), hollow = closed."]
    if coherent_types:
        lines.append("Colour: coherent type (" + ", ".join(coherent_types) + ").")
    side.text(0, 1, "\n".join(_wrap(line, 70) for line in lines), va="top", ha="left", fontsize=8,
              family="monospace")
    for c in coherent_types:
        ax.plot([], [], color=ccolor[c], lw=3, label=c)
    if coherent_types:
        ax.legend(fontsize=7, loc="best", frameon=True)
    return fig


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width, subsequent_indent="    ")) if text else ""


# --- per-site fabric -----------------------------------------------------------------------------

def _boxes(count: int) -> tuple[list[float], bool]:
    """x positions (0..10) of the boxes drawn for a tier of ``count``; True when some are elided."""
    shown = min(count, MAX_BOXES)
    elided = count > MAX_BOXES
    if shown <= 0:
        return [], False
    step = 10.0 / shown
    return [step * (k + 0.5) for k in range(shown)], elided


def fabric_figure(site: dict):
    """The scale-out fabric of one site as tiers of switches: model, count, ports, speeds, links. A rail-only
    fabric is drawn as one rail ("x 8": its rails are copies, not joined)."""
    f = st.fabric_summary(site)
    rails = f["networks"] if f["rail_only"] else 1
    tiers = f["tiers"]
    levels = [("nodes", None)] + [(t["tier"], t) for t in tiers]
    mesh = f["topology"] == "leaf_mesh" and any(lk["tier"] == "leaf_leaf" for lk in f["links"])
    top = len(levels) - 1 + (0.75 if mesh else 0.35) + (0.55 if f["dci"] else 0)
    fig, ax = plt.subplots(figsize=(11, 0.95 * (top + 0.5) + 0.6))
    ax.set_xlim(-5.2, 17.2)
    ax.set_ylim(-0.45, top)
    ax.axis("off")
    xs_by_level = []
    for y, (name, t) in enumerate(levels):
        count = f["nodes"] if t is None else t["per_network"] if f["rail_only"] else t["count"]
        xs, elided = _boxes(int(count or 0))
        xs_by_level.append(xs)
        w, h = (0.7, 0.34) if t is None else (min(0.9, 9.0 / max(len(xs), 1)), 0.42)
        for k, x in enumerate(xs):
            if elided and k == len(xs) - 2:
                ax.text(x, y, "...", ha="center", va="center", fontsize=12)
                continue
            ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02",
                                        fc=TIER_COLORS[name], ec="black", lw=0.6, zorder=3))
        if t is None:
            label = (f"nodes x{f['nodes']:,}\n{f['gpus']:,} GPUs, {f['endpoints']:,} NICs\n"
                     f"{f['rails']} rail(s)/plane @{f['link_gbps']}G")
            if f["scalable_units"]:
                label += f", {f['scalable_units']} SUs"
        else:
            ports = ""
            if t.get("down_ports"):
                up = f" / {t['up_ports']} up @{t.get('up_gbps') or t['port_gbps']}G" if t.get("up_ports") else ""
                ports = f"\n{t['down_ports']} down @{t.get('down_gbps') or t['port_gbps']}G{up}"
            per_plane = f" ({t['per_plane']:g}/plane)" if f["planes"] > 1 else ""
            if f["rail_only"]:
                label = f"{t['tier']} x{t['per_network']:g} a rail\n(x {rails} = {t['count']:,})\n{t['model']}{ports}"
            else:
                label = f"{t['tier']} x{t['count']:,}{per_plane}\n{t['model']}{ports}"
        ax.text(-0.5, y, label, ha="right", va="center", fontsize=8)
    # links between consecutive levels, one artist for them all
    ax.add_collection(LineCollection([((xa, y + 0.17), (xb, y + 1 - 0.21)) for y in range(len(levels) - 1)
                                      for xa in xs_by_level[y] for xb in xs_by_level[y + 1]],
                                     colors="#666", linewidths=0.5, alpha=0.35, zorder=1), autolim=False)
    if mesh and len(xs_by_level) > 1:
        leaf_xs = xs_by_level[1]
        for a in range(len(leaf_xs)):
            for b in range(a + 1, len(leaf_xs)):
                ax.annotate("", (leaf_xs[b], 1.21), (leaf_xs[a], 1.21), zorder=1,
                            arrowprops={"arrowstyle": "-", "color": "#666", "lw": 0.5, "alpha": 0.35,
                                        "connectionstyle": f"arc3,rad=-{0.25 + 0.02 * (b - a)}"})
    link_y = {"node_leaf": 0.5, "leaf_spine": 1.5, "spine_core": 2.5, "leaf_leaf": 1.3}
    for lk in f["links"]:
        y = link_y.get(lk["tier"], 0.5)
        what = lk["item"] if lk["kind"] in ("dac", "aoc") else f"{lk['modules']:,} x {lk['item']}"
        per_rail = f" ({lk['count'] / rails:g} a rail)" if f["rail_only"] else ""
        text = (f"{lk['tier'].replace('_', '-')}: {lk['count']:,} links{per_rail} x {lk['gbps']}G, "
                f"{lk['length_m']:g} m\n{what}")
        ax.text(10.5, y, text, ha="left", va="center", fontsize=7.5, color="#222")
    if f["dci"]:
        dci_text = "DCI: " + ", ".join(f"{d['count']} x {d['model']}" for d in f["dci"])
        dci_text += f"\n{(f['dci_capacity_gbps'] or 0) / 1e3:,.1f} Tb/s inter-site"
        att = f["dci_attachment"]
        if att:  # the routers' fabric side: on leaf down ports, as nodes' NICs
            items = ", ".join(c["item"] for c in att["cables"])
            dci_text += f"\njoined on {att['links']:,} leaf ports @{att['gbps']}G ({items}, {att['length_m']:g} m)"
            ax.annotate("", (xs_by_level[1][-1] + 0.3, 1.15), (10.4, top - 0.3), zorder=1,
                        arrowprops={"arrowstyle": "-", "color": TIER_COLORS["dci"], "lw": 1.2,
                                    "connectionstyle": "arc3,rad=0.15"})
        ax.text(10.5, top - 0.3, dci_text, ha="left", va="center", fontsize=7.5,
                bbox={"boxstyle": "round", "fc": TIER_COLORS["dci"], "alpha": 0.35})
    over = f["oversubscription"]
    planes = f["planes"]
    title = (f"{f['site']}: {f['topology']} ({f['fabric_tiers']}-tier), {f['protocol']}, {f['link_gbps']}G NICs, "
             f"oversubscription {over:.3g}:1, {planes} plane{'s' if planes > 1 else ''}")
    if f["rail_only"]:
        title += f"\none rail drawn, x {rails}: the rails are not joined, cross-rail traffic goes over NVLink"
    elif planes > 1:
        title += " (one plane drawn)"
    ax.set_title(title, loc="left")
    return fig


def floor_figure(site: dict):
    """The site's floor: its racks of nodes along rows, shaded by the scalable unit or leaf they hang off, and
    the elevation of one rack of nodes."""
    import numpy as np

    plan = st.floor_plan(site)
    rows, per_row = plan["rows"], plan["per_row"]
    grid = np.full((rows, per_row), np.nan)
    for r, group in enumerate(plan["group"]):
        grid[r // per_row, r % per_row] = group % 2
    height = min(6.0, 1.6 + 0.12 * rows)
    fig, (ax, rack) = plt.subplots(1, 2, figsize=(10, height), gridspec_kw={"width_ratios": [5, 1]})
    fig.subplots_adjust(top=1 - 0.5 / height, bottom=0.55 / height)  # room for two title lines and the axis label
    ax.imshow(grid, aspect="auto", cmap=matplotlib.colors.ListedColormap(["#4C72B0", "#8FAADC"]),
              interpolation="nearest", vmin=0, vmax=1)
    ax.set_xlabel(f"rack along the row (shades alternate per {plan['group_name']})")
    ax.set_ylabel("row")
    ax.set_xticks([0, per_row - 1], [1, per_row])
    ax.set_yticks([0, rows - 1] if rows > 1 else [0], [1, rows] if rows > 1 else [1])
    room = f" of a floor of {plan['floor_rows']} rows" if plan["floor_rows"] else ""
    ax.set_title(f"{site['name']}: {plan['racks']:,} racks of nodes in {rows:,} rows of {per_row}{room} "
                 f"({plan['basis']})", loc="left")
    fullest, slots = plan["fullest"], max(4, int((height - 1.05) / RACK_SLOT_IN))
    drawn = fullest if fullest <= slots else slots - 1  # a rack of more nodes than fit: the last slot says how many
    rack.set_xlim(0, 1)
    rack.set_ylim(0, min(fullest, slots) + 0.6)
    rack.axis("off")
    for k in range(drawn):
        rack.add_patch(FancyBboxPatch((0.1, k + 0.1), 0.8, 0.8, boxstyle="round,pad=0.01", fc=TIER_COLORS["nodes"],
                                      ec="white"))
        rack.text(0.5, k + 0.5, f"node {k + 1}", ha="center", va="center", color="white", fontsize=8)
    if drawn < fullest:
        rack.text(0.5, drawn + 0.5, f"... {fullest - drawn:,} more", ha="center", va="center", fontsize=8)
    held = "" if fullest == plan["per_rack"] else f" of the {plan['per_rack']:,} it holds"
    rack.set_title(f"one rack: {fullest:,} node(s){held}\nat most {plan['rack_kw']:g} kW", fontsize=9)
    return fig


def rack_figure(site: dict, solution: dict):
    """Elevations of the site's network racks (statistics.network_racks), each distinct rack once with how many
    there are: its switches by rack unit from the bottom, the units and kW it takes of the rack's."""
    plan = st.network_racks(site, solution)
    kinds = st.rack_kinds(plan)
    fig, axes = plt.subplots(1, len(kinds), figsize=(min(12.0, 1.0 + 1.9 * len(kinds)), 6.2), squeeze=False,
                             sharey=True)
    axes[0][0].set_ylim(0, plan["rack_ru"])
    axes[0][0].set_yticks(range(0, plan["rack_ru"] + 1, 6))
    for ax, rack in zip(axes[0], kinds):
        ax.set_xlim(0, 1)
        ax.add_patch(Rectangle((0.05, 0), 0.9, plan["rack_ru"], fc="#F2F2F2", ec="#7F7F7F"))
        unit, boxes = 0, []
        for model, count, ru in rack["devices"]:
            for _ in range(count):
                boxes.append(Rectangle((0.1, unit + 0.08), 0.8, ru - 0.16))
                # inside the rack, so within the axes: left out of the layout's extents (text is what costs there)
                ax.text(0.5, unit + ru / 2, _wrap(model, 18), ha="center", va="center", color="white",
                        fontsize=6 if ru < 2 else 7).set_in_layout(False)
                unit += ru
        # one collection of the rack's switches: an artist a switch (add_patch) cost 4x the time to make
        ax.add_collection(PatchCollection(boxes, fc=TIER_COLORS[rack["tier"]], ec="white"), autolim=False)
        ax.set_xticks([])
        ax.yaxis.set_visible(ax is axes[0][0])  # the first rack's rack units stand for all
        ax.set_title(f"{rack['tier']}\n{rack['count']:,} rack(s)", fontsize=9)
        ax.set_xlabel(f"{rack['ru']} / {plan['rack_ru']} RU\n{rack['kw']:.1f} / {plan['rack_kw']:g} kW", fontsize=8)
    axes[0][0].set_ylabel("rack unit")
    note = f"; {plan['in_node_racks']:,} leaves stand in racks of nodes" if plan["in_node_racks"] else ""
    fig.suptitle(f"{site['name']}: network racks, switches without optics{note}", x=0.01, ha="left", fontsize=10)
    fig.tight_layout()
    return fig


def latency_figure(site: dict, limit_us: float | None = None):
    """A stacked bar of the worst-case one-way latency of a site: NICs, switch hops, propagation, NVLink."""
    budget = st.latency_budget(site, limit_us)
    fig, ax = plt.subplots(figsize=(8, 1.1))
    left = 0.0
    for part in budget["parts"]:
        if part["us"] <= 0:
            continue
        ax.barh([0], [part["us"]], left=left, color=LATENCY_COLORS.get(part["part"], "#999"), height=0.5,
                label=f"{part['label']} {part['us']:.2f} us")
        if part["us"] > 0.08 * budget["total_us"]:
            ax.text(left + part["us"] / 2, 0, f"{part['us']:.2f}", ha="center", va="center", fontsize=8,
                    color="white")
        left += part["us"]
    right = left
    if limit_us is not None:
        ax.axvline(limit_us, color="#C44E52", ls="--", lw=1.2)
        ax.text(limit_us, 0.38, f" limit {limit_us:g} us", color="#C44E52", fontsize=8, va="bottom")
        right = max(right, limit_us)
    ax.set_xlim(0, right * 1.15 or 1)
    ax.set_yticks([])
    ax.set_xlabel("one-way latency (us)")
    hops = f", {budget['hops']} switch hops" if budget["hops"] else ""
    ax.set_title(f"{site['name']}: worst-case GPU-to-GPU latency {budget['total_us']:.2f} us{hops}", loc="left")
    ax.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.6), frameon=False)
    return fig


# --- communication -------------------------------------------------------------------------------

def communication_figure(comm: dict):
    """All-reduce time per synchronisation by term (left); communication share of a step against the
    number of accumulated micro-batches, with the limit (right)."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.0), gridspec_kw={"width_ratios": [1.2, 1]})
    terms = comm["terms"]
    colors = ["#4C72B0", "#9BB5DA", "#55A868", "#A8D5B5"]
    left = 0.0
    for t, c in zip(terms, colors):
        if t["ms"] <= 0:
            continue
        ax1.barh([0], [t["ms"]], left=left, color=c, height=0.5, label=f"{t['term']} {t['ms']:,.1f} ms")
        left += t["ms"]
    if comm.get("t_max_ms"):
        ax1.axvline(comm["t_max_ms"], color="#C44E52", ls="--")
        ax1.text(comm["t_max_ms"], 0.3, f" limit {comm['t_max_ms']:,.0f} ms", color="#C44E52", fontsize=8)
    ax1.set_xlim(0, max(left, comm.get("t_max_ms") or 0) * 1.2 or 1)
    ax1.set_yticks([])
    ax1.set_xlabel("ms per synchronisation")
    ax1.set_title(f"all-reduce {comm['time_ms']:,.0f} ms (slowest site: {comm.get('site')})", loc="left")
    ax1.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2, frameon=False)
    steps = [p["grad_accum_steps"] for p in comm["curve"]]
    share = [p["comm_fraction"] for p in comm["curve"]]
    ax2.plot(steps, share, marker="o", color="#4C72B0")
    a = comm.get("grad_accum_steps") or 1
    ax2.scatter([a], [comm["comm_fraction"]], s=90, color="#C44E52", zorder=3, label=f"this design (A={a})")
    if comm.get("limit") is not None:
        ax2.axhline(comm["limit"], color="#C44E52", ls="--", lw=1)
        ax2.text(steps[-1], comm["limit"], " limit", color="#C44E52", fontsize=8, va="bottom", ha="right")
    ax2.set_xscale("log", base=2)
    ax2.set_xticks(steps, [str(s) for s in steps])
    ax2.set_ylim(0, 1)
    ax2.yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
    ax2.set_xlabel("gradient accumulation steps A")
    ax2.set_ylabel("communication share of a step")
    ax2.set_title("effect of gradient accumulation", loc="left")
    ax2.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return fig


# --- training ------------------------------------------------------------------------------------

def training_figure(training: dict):
    """The step as a waterfall of its parts (left); step time and tokens per second of the chosen fabric against
    the GPU count (right)."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.4), gridspec_kw={"width_ratios": [1.2, 1]})
    colors = ["#4C72B0", "#8172B2", "#CCB974", "#55A868", "#DD8452", "#C44E52"]
    left = 0.0
    for i, (part, color) in enumerate(zip(training["parts"], colors)):
        ax1.bar([i], [part["s"]], bottom=[left], color=color, width=0.6)
        if part["s"] > 0:
            ax1.text(i, left + part["s"], f"{part['s']:.3g} s", ha="center", va="bottom", fontsize=7)
        left += part["s"]
    ax1.bar([len(training["parts"])], [left], color="#333", width=0.6)
    ax1.text(len(training["parts"]), left, f"{left:.3g} s", ha="center", va="bottom", fontsize=7)
    ax1.set_xticks(range(len(training["parts"]) + 1), [p["part"] for p in training["parts"]] + ["step"],
                   rotation=20, fontsize=7)
    ax1.set_ylabel("seconds per step")
    ax1.set_title(f"step {left:.3g} s: MFU {training['mfu']:.1%}, network idle {training['idle_share']:.1%}",
                  loc="left")
    rows = training["scaling"]
    gpus = [r["gpus"] for r in rows]
    ax2.plot(gpus, [r["step_time_s"] for r in rows], marker="o", color="#4C72B0", label="step time")
    ax2.plot(gpus, [r["compute_s"] for r in rows], ls="--", color="#999", label="compute alone")
    ax2.scatter([training["gpus"]], [training["step_time_s"]], s=90, color="#C44E52", zorder=3, label="this design")
    ax2.set_xscale("log", base=2)
    ax2.set_yscale("log")
    ax2.set_xticks(gpus, [f"{g:,}" for g in gpus])
    ax2.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax2.yaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax2.set_xlabel("GPUs (same fabric per GPU)")
    ax2.set_ylabel("seconds per step")
    ax2.set_title("step time against GPU count", loc="left")
    ax2.legend(fontsize=7, frameon=False)
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    return fig


# --- sweeps --------------------------------------------------------------------------------------

FRONTS = ("#C44E52", "#4C72B0", "#55A868", "#8172B3", "#CCB974")  # one colour per GPU count's front


def pareto_figure(rows: list[dict], front_latency: set, front_gpus: set):
    """Cost per GPU against worst fabric latency (a front per GPU count: only designs of the same size compete)
    and cost against GPUs; non-dominated scenarios marked."""
    ok = [r for r in rows if r.get("cost_usd") is not None]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, key, front, xlabel, ylabel in ((ax1, "worst_latency_us", front_latency, "worst fabric latency (µs)",
                                            "cost per GPU"), (ax2, "gpus", front_gpus, "GPUs", "cost")):
        pts = [r for r in ok if r.get(key) is not None and r.get("gpus")]

        def cost(r):
            return r["cost_usd"] / r["gpus"] if ax is ax1 else r["cost_usd"]

        others = [r for r in pts if r["scenario"] not in front]
        ax.scatter([r[key] for r in others], [cost(r) for r in others], color="#999", s=30, label="dominated")
        sizes = sorted({r["gpus"] for r in pts}) if ax is ax1 else [None]
        for k, size in enumerate(sizes):
            best = sorted([r for r in pts if r["scenario"] in front and size in (None, r["gpus"])],
                          key=lambda r: r[key])
            label = "non-dominated" + (f" ({size:,} GPUs)" if size is not None and len(sizes) > 1 else "")
            ax.plot([r[key] for r in best], [cost(r) for r in best], color=FRONTS[k % len(FRONTS)],
                    marker="o", lw=1.2, ms=7, label=label)
        labels: dict[tuple, list[str]] = {}
        for r in pts:  # scenarios at the same point share one label
            labels.setdefault((r[key], round(cost(r), 2)), []).append(r["scenario"])
        for (x, y), names in labels.items():
            ax.annotate(", ".join(names), (x, y), xytext=(4, 4), textcoords="offset points", fontsize=7,
                        color="#333")
        _millions(ax, "y")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, frameon=False)
    failed = len(rows) - len(ok)
    ax1.set_title("cost per GPU against worst latency, same GPU count (lower-left is better)", loc="left",
                  fontsize=10)
    ax2.set_title("cost against GPUs (lower-right is better)", loc="left")
    if failed:
        fig.suptitle(f"{failed} of {len(rows)} scenario(s) had no design and are not plotted", fontsize=9,
                     color="#C44E52")
    fig.tight_layout()
    return fig
