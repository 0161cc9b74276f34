"""How numbers are said to a planner: one money format for messages, the CLI and the report."""

from __future__ import annotations

import math


def money(x: float | None) -> str:
    """$1.23B, $45.5M, $12,300."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if abs(x) >= 1e9:
        return f"${x / 1e9:,.2f}B"
    if abs(x) >= 1e6:
        return f"${x / 1e6:,.1f}M"
    return f"${x:,.0f}"
