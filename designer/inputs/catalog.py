"""Where the default equipment catalog lives (data/catalog/*.csv), reading its CSVs, and the parsers of
list-valued catalog cells (``port_modes``, ``roles``). ``designer.inputs.workbook.load_catalog`` validates it."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pandas as pd

CATALOG_DIR = Path(__file__).resolve().parents[2] / "data" / "catalog"

MAX_PORTS = 2_048  # ports at one speed: a 102.4 Tb/s switch chip serves 1,024 x 100G; twice that for margin
MAX_PORT_GBPS = 3_200  # the fastest line rate a port carries (1.6T shipping, 3.2T announced)
_MODE = re.compile(r"^\s*(\d+)\s*[xX]\s*(\d+)\s*$")


def port_modes(text: str) -> dict[int, int]:
    """Parse ``"64x800,128x400"`` (ports x Gb/s) into ``{800: 64, 400: 128}``.

    Raises ValueError naming the bad part; whether the modes carry equal total bandwidth is
    checked by the workbook validation, not here.
    """
    modes: dict[int, int] = {}
    for part in str(text).split(","):
        if not part.strip():
            continue
        match = _MODE.match(part)
        if not match:
            raise ValueError(f"cannot read port mode {part.strip()!r}: write ports x Gb/s, "
                             "e.g. 64x800")
        ports, gbps = int(match[1]), int(match[2])
        if not (0 < ports <= MAX_PORTS and 0 < gbps <= MAX_PORT_GBPS):
            raise ValueError(f"port mode {part.strip()!r} needs 1 to {MAX_PORTS:,} ports of 1 to "
                             f"{MAX_PORT_GBPS:,} Gb/s")
        if gbps in modes:
            raise ValueError(f"speed {gbps} Gb/s is listed twice")
        modes[gbps] = ports
    if not modes:
        raise ValueError("no port modes given")
    return modes


def cages(modes: dict[int, int], declared=None) -> int:
    """A switch's physical cages: the ``cages`` it declares (``declared``, 32 twin-port cages for a QM9700's
    ``64x400``), else its ports at the fastest speed (64 for ``64x800,128x400``)."""
    return modes[max(modes)] if pd.isna(declared) else int(declared)


def lanes(modes: dict[int, int], gbps: int, declared=None) -> int:
    """Links at ``gbps`` one cage carries: its ports at that speed over its cages (2 x 400G in an 800G cage);
    1 at a speed it does not run."""
    return max(1, modes.get(gbps, 0) // cages(modes, declared))


def port_modes_text(modes: dict[int, int]) -> str:
    """``{800: 64, 400: 128}`` back to ``"64x800,128x400"``."""
    return ",".join(f"{ports}x{gbps}" for gbps, ports in modes.items())


def cell_text(value):
    """A parsed list-valued catalog cell as the planner wrote it; other values unchanged."""
    if isinstance(value, dict):
        return port_modes_text(value)
    if isinstance(value, tuple):
        return ",".join(value)
    return value


def roles(text: str) -> set[str]:
    """Parse ``"leaf,spine"`` into ``{"leaf", "spine"}`` (blank parts dropped, lower-cased)."""
    return {part.strip().lower() for part in str(text).split(",") if part.strip()}


def read_csv_rows(path: Path) -> tuple[list[str], list[tuple[int, list[str | None]]]]:
    """A CSV file as (header, [(line number, cells)]); blank cells are None, blank lines dropped."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = next(reader, [])
        rows = []
        for values in reader:
            cells = [v.strip() or None for v in values]
            if any(c is not None for c in cells):
                rows.append((reader.line_num, cells))
    return header, rows

