"""Spares, sized after the solve from the design's counts (the optimization does not see them).

Per BOM line: ceil(spares_optics_share x quantity) of a transceiver or DCI module, ceil(spares_cables_share x
quantity) of a DAC, AOC or patch cable; per site and switch model (fabric, DCI router or support network):
ceil(switches / spares_switch_per). Each is a line of category ``spares`` at the spared line's unit price,
with ``spare_of`` (its category) and ``basis`` (the rule in words); spares draw no power. Their sum is
``totals.spares_usd``, beside ``totals.capex_usd`` (which stays the BOM's total and the model's capex).
"""

from __future__ import annotations

import math

SWITCH_CATEGORIES = ("switches", "dci_routers")
MODULE_CATEGORIES = ("coherent", "dci_optics")


def spare_kind(line: dict, inputs) -> str | None:
    """``module``, ``cable`` or ``switch`` for a BOM line that is spared, else None."""
    category, item = line["category"], line["item"]
    if category in SWITCH_CATEGORIES:
        return "switch"
    if category in MODULE_CATEGORIES:
        return "module"
    if category in ("optics", "dci_attachment"):
        return "module" if inputs.optics.loc[item, "kind"] == "transceiver" else "cable"
    for _, row in inputs.support_networks.iterrows():
        if row["category"] == category and row["switch_model"] == item:
            return "switch"
        if row["category"] == category and row["link_item"] == item:
            return "module" if row["link_kind"] == "transceiver" else "cable"
    return None


def share_of(share: float, quantity: float) -> int:
    """ceil(share x quantity), blind to the float error of the product (2% of 100 is 2)."""
    return math.ceil(share * quantity - 1e-9)


def spare_lines(bom: list[dict], inputs) -> list[dict]:
    """The spares of a design's BOM lines (module docstring)."""
    project = inputs.project
    shares = {"module": float(project.get("spares_optics_share") or 0.0),
              "cable": float(project.get("spares_cables_share") or 0.0)}
    per = int(project.get("spares_switch_per") or 0)
    out, switches = [], {}
    for line in bom:
        kind = spare_kind(line, inputs)
        if kind == "switch":
            key = (line["site"], line["item"])
            switches.setdefault(key, {**line, "quantity": 0})["quantity"] += line["quantity"]
        elif kind and share_of(shares[kind], line["quantity"]):
            out.append(spare(line, share_of(shares[kind], line["quantity"]),
                             f"{shares[kind] * 100:g}% of {line['quantity']:g}, rounded up"))
    if per:
        out += [spare(line, -(-int(line["quantity"]) // per), f"1 per {per} of {line['quantity']:g}, rounded up")
                for line in switches.values()]
    return out


def spare(line: dict, quantity: int, basis: str) -> dict:
    """A spares line for ``quantity`` of ``line``'s item (its price and vendor-quote cells)."""
    return {**line, "category": "spares", "quantity": quantity, "extended_usd": quantity * line["unit_price_usd"],
            "unit_power_w": 0.0, "total_power_w": 0.0, "spare_of": line["category"], "basis": basis}
