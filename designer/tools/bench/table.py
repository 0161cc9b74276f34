"""The benchmark's table: rows with their target and verdict, printed as they come and written to bench.csv."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

CSV_COLUMNS = ["section", "instance", "sites", "gpus", "switch_models", "figure", "value", "unit", "target",
               "verdict", "note"]


@dataclass
class Row:
    section: str
    instance: str
    figure: str
    value: object
    unit: str = ""
    target: str = ""
    verdict: str = ""
    note: str = ""
    sites: object = ""
    gpus: object = ""
    switch_models: object = ""


@dataclass
class Table:
    rows: list[Row] = field(default_factory=list)

    def add(self, *args, **kwargs) -> Row:
        row = Row(*args, **kwargs)
        self.rows.append(row)
        print(format_row(row), flush=True)
        return row


# --- the table ------------------------------------------------------------------------------------

def fmt(value) -> str:
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if abs(value) >= 1e6:
            return f"{value:,.0f}"
        if abs(value) >= 100:
            return f"{value:.1f}"
        if abs(value) >= 1 or value == 0:
            return f"{value:.2f}"
        return f"{value:.3g}"
    return str(value)


def format_row(row: Row) -> str:
    value = fmt(row.value) + (f" {row.unit}" if row.unit else "")
    text = f"{row.section:<3} {row.instance:<20} {row.figure:<44} {value:>18}  {row.target:<22} {row.verdict:<7}"
    return (text + (f" {row.note}" if row.note else "")).rstrip()


def header() -> str:
    return (f"{'':<3} {'instance':<20} {'figure':<44} {'value':>18}  {'target':<22} {'verdict':<7} note\n"
            + "-" * 140)


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("met" if ok else "missed")


def write_csv(path: Path, rows: list[Row]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({c: (r.value if c == "value" else getattr(r, c)) for c in CSV_COLUMNS})
