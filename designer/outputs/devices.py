"""Optics per device (design.xlsx sheet ``optics_per_device``, optics_per_device.csv), for purchasing.

Per site and device class (node, leaf, spine, core, DCI router, a support network's switch): each cable or
module item, how many one device takes, how many devices take that many, and the total. Fabric items come
from the audit's graphs (designer.audit.checks.device_items: a cable at its lower end, a module at each end, a
twin-port module per device, the tier's aggregate rest on a ``pooled`` row); a site's DCI modules are spread
over its routers in turn, as cabling.csv does; a support network's items follow its rows (a cable at the node,
a transceiver at the node and at the switch, spread evenly over the network's switches). The totals add up to
the BOM's lines of those items.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from designer.audit.checks import device_items
from designer.audit.fabric import catalog, share, site_graph

COLUMNS = ["site", "device", "item", "category", "per_device", "devices", "total"]


def optics_per_device(solution: dict) -> pd.DataFrame:
    """The rows of every open site (module docstring)."""
    cat = catalog(solution)
    rows: list[dict] = []
    for entry in (s for s in solution["sites"] if s["open"]):
        held: Counter = Counter()  # (device class, item, category, per device) -> devices
        graph = site_graph(entry, solution)
        for key, n in device_items(graph, cat)[1].items():
            if key[0] == "pooled":
                rows.append(row(entry["name"], f"{key[1]} (pooled: twin-port modules counted across the tier)",
                                key[2], "optics", None, None, n))
            else:
                device, item = key
                role = "node" if isinstance(device, tuple) else graph.nodes[device]["role"]
                held[role, item, "optics", n] += 1
        spread(held, dci_modules(entry, solution), sum(t["count"] for t in entry["tiers"] if t["tier"] == "dci"),
               "dci router")
        for net in entry.get("support_networks") or []:
            support(held, net, cat.support_networks.get(net["name"], {}), int(entry["nodes"]))
        rows += [row(entry["name"], *key, devices) for key, devices in held.items() if key[-1]]
    return pd.DataFrame(rows, columns=COLUMNS)


def row(site, device, item, category, per_device, devices, total=None) -> dict:
    return {"site": site, "device": device, "item": item, "category": category, "per_device": per_device,
            "devices": devices, "total": per_device * devices if total is None else total}


def spread(held: Counter, items: dict[tuple[str, str], int], devices: int, role: str) -> None:
    """``items`` ((item, category) -> quantity) spread evenly over ``devices`` of one class."""
    for (item, category), quantity in items.items():
        for k in range(devices):
            held[role, item, category, share(quantity, devices, k)] += 1


def dci_modules(entry: dict, solution: dict) -> dict[tuple[str, str], int]:
    """The DCI modules of a site (one a wavelength or gray link of its routes), by (item, category)."""
    out: Counter = Counter()
    for link in solution.get("links", []):
        if entry["name"] in (link["site_a"], link["site_b"]):
            gray = link.get("optic_kind") == "gray"
            out[link["coherent_model"], "dci_optics" if gray else "coherent"] += link["wavelengths"]
    return out


def support(held: Counter, net: dict, catalog_row: dict, nodes: int) -> None:
    """A support network's node links: a cable at the node; a transceiver at the node and one at the switch."""
    item, category, ports = net["link_item"], net["category"], net["links"] // max(nodes, 1)
    held["node", item, category, ports] += nodes
    if (catalog_row.get("link_kind") or "cable") == "transceiver":
        spread(held, {(item, category): net["links"]}, net["switches"], f"{net['name']} switch")
