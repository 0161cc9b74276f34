"""How numbers are said to a planner: one money format for messages, the CLI and the report; bandwidth and
microseconds with their units."""

from __future__ import annotations

import math


def _scaled(x: float | None, steps: tuple[tuple[float, str], ...], small: str) -> str:
    """x in the first unit of ``steps`` (size, format) it reaches, else ``small``; "n/a" for none or NaN."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    for size, form in steps:
        if abs(x) >= size:
            return form.format(x / size)
    return small.format(x)


def money(x: float | None) -> str:
    """$1.23B, $45.5M, $12,300."""
    return _scaled(x, ((1e9, "${:,.2f}B"), (1e6, "${:,.1f}M")), "${:,.0f}")


def bandwidth(gbps: float | None) -> str:
    """800 Gb/s, 12.8 Tb/s, 1.02 Pb/s."""
    return _scaled(gbps, ((1e6, "{:,.2f} Pb/s"), (1e3, "{:,.1f} Tb/s")), "{:,.0f} Gb/s")


def microseconds(us: float | None) -> str:
    """2.33 µs."""
    return "n/a" if us is None else f"{us:,.2f} µs"


def gap(fraction: float | None) -> str:
    """A relative MIP gap in percent with two significant digits below 1% (0.0032%, 0.97%, 1.12%): a gap under the
    1e-4 default target reads as what it is, not as 0.00%; "n/a" for none, NaN or infinity (no design)."""
    if not isinstance(fraction, (int, float)) or not math.isfinite(fraction):
        return "n/a"
    if fraction == 0 or abs(fraction) >= 0.01:
        return f"{fraction:.2%}"
    return f"{fraction * 100:.2g}%"


def split_words(split: dict) -> str:
    """A Clos's port split (design.json ``cheaper_split``): "leaves of 40 down / 20 up ports on 2 spine(s) a
    network", or, 3-tier, "... and aggregation switches of 4 down / 4 up ports"."""
    words = f"leaves of {split['down_ports']} down / {split['up_ports']} up ports"
    if split.get("spines") is not None:
        return words + f" on {split['spines']} spine(s) a network"
    return words + f" and aggregation switches of {split['agg_down_ports']} down / {split['agg_up_ports']} up ports"

