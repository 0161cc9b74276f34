"""Read a workbook file into plain grids: every sheet's header row and non-blank data rows with their Excel row
numbers; cells that hold an Excel error or an uncalculated formula are marked ``Bad``."""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

import openpyxl

from designer.errors import InputError, Problem


@dataclass(frozen=True)
class Bad:
    """A cell whose value cannot be used: an uncalculated formula or an Excel error value."""

    value: object
    message: str
    fix: str


@dataclass
class Grid:
    """One sheet's cells: the header row and the non-blank data rows with their row numbers."""

    label: str
    header: list
    rows: list[tuple[int, list]]


def read_workbook(path: Path) -> tuple[dict[str, Grid], str]:
    """Every worksheet as a grid, and the file's sha256; InputError if it is no workbook."""
    if not path.exists():
        raise InputError([Problem("", "", "", None, f"file not found: {path}", "check the "
                                  "path, or write a blank one with `designer template`")])
    if not path.is_file():
        raise InputError([Problem("", "", "", None, f"not a file: {path}",
                                  "give the path of an .xlsx workbook")])
    data = path.read_bytes()
    try:
        values = openpyxl.load_workbook(io.BytesIO(data), data_only=True)
        formulas = openpyxl.load_workbook(io.BytesIO(data), data_only=False)
    except Exception as exc:  # zip, XML and openpyxl errors all mean "not a readable workbook"
        fix = ("save it as an Excel workbook (.xlsx)" if path.suffix.lower() != ".xls"
               else "save it in the newer .xlsx format")
        raise InputError([Problem("", "", "", None, f"{path.name} is not a readable .xlsx "
                                  f"workbook ({type(exc).__name__}: {exc})", fix)]) from None
    grids = {ws.title: _grid(ws, formulas[ws.title]) for ws in values.worksheets}
    return grids, hashlib.sha256(data).hexdigest()


def _grid(ws, ws_formulas) -> Grid:
    header, rows = [], []
    for cells in ws.iter_rows():
        row = [_cell_value(cell, ws_formulas) for cell in cells]
        if cells[0].row == 1:
            header = row
        elif any(v is not None for v in row):
            rows.append((cells[0].row, row))
    return Grid(ws.title, header, rows)


def _cell_value(cell, ws_formulas):
    if cell.data_type == "e":
        return Bad(cell.value, "holds an Excel error", "correct the formula or type the value")
    value = cell.value
    if value is None:
        formula = ws_formulas[cell.coordinate].value
        if ws_formulas[cell.coordinate].data_type == "f":
            return Bad(str(getattr(formula, "text", formula)), "is a formula with no "
                        "calculated value", "open and save the workbook in Excel or LibreOffice "
                        "so formulas are calculated, or type the value")
    if isinstance(value, str):
        value = value.strip() or None
    return value
