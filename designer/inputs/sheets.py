"""One sheet's grid to typed records against its schema (table or key/value sheet), the default catalog CSVs
through the same parser, and the typed DataFrames of the validated tables.

Names (sheets, headers, keys) are matched without regard to case and surrounding spaces, each reading in
another form noted; a ``notes`` column and names starting with ``_`` are ignored and noted; a title row
above the headers is recognised and the headers read from the row below it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from openpyxl.utils import get_column_letter

from designer.errors import Notice, Problem
from designer.inputs.catalog import port_modes, read_csv_rows
from designer.inputs.cells import as_text, suggest, typed_value
from designer.inputs.reader import Bad, Grid
from designer.inputs.schema import SHEETS, Sheet


@dataclass
class Parsed:
    """A parsed sheet: typed records (one for a key/value sheet) and each value's cell."""

    spec: Sheet
    label: str
    records: list[dict]
    cells: list[dict]
    rows: list[int]


def norm(name) -> str:
    """A name as it is matched: without regard to case and surrounding spaces."""
    return as_text(name).lower()


def ignored(name: str) -> str:
    """Why a (normalised) sheet or column name is ignored, or "" when it is not."""
    if name == "notes":
        return "a notes column"
    return "its name starts with '_'" if name.startswith("_") else ""


def parse_default(name: str, directory: Path, problems: list[Problem], notices: list[Notice]) -> Parsed | None:
    """A default catalog CSV through the sheet parser; unlike a workbook sheet, every row must name its source."""
    path = directory / f"{name}.csv"
    label = f"data/catalog/{name}.csv"
    if not path.is_file():
        problems.append(Problem(label, "", "", None, "default catalog file is missing",
                                f"add a '{name}' sheet to the workbook, or restore the file"))
        return None
    header, rows = read_csv_rows(path)
    parsed = parse(SHEETS[name], Grid(label, [h.strip() or None for h in header], rows), problems, notices)
    for record, cells in zip(parsed.records, parsed.cells):
        if record["source"] is None:
            problems.append(Problem(label, cells["source"], "source", None, "a default catalog row must name "
                                    "its source", "state where the figures come from (datasheet, list price)"))
    return parsed


# --- parsing one sheet -----------------------------------------------------------------------

def parse(spec: Sheet, grid: Grid, problems: list[Problem], notices: list[Notice]) -> Parsed | None:
    """Type every cell of a sheet against the schema; None for an optional sheet left blank."""
    known = spec.columns if spec.kind == "table" else ["key", "value"]
    grid, header_row = _below_title(grid, known, notices)
    columns = _columns(spec, grid, known, header_row, problems, notices)
    if spec.kind == "table":
        return _parse_table(spec, grid, columns, problems, notices)
    return _parse_keys(spec, grid, columns, problems, notices)


def _below_title(grid: Grid, known: list[str], notices: list[Notice]) -> tuple[Grid, int]:
    """The grid with its header row: row 1 when it holds the headers; the next row when row 1 is a title
    (a single filled cell, e.g. merged across) above a row holding at least two known headers."""
    filled = [(i, h) for i, h in enumerate(grid.header) if h is not None]
    if len(filled) != 1 or not grid.rows or norm(filled[0][1]) in known:
        return grid, 1
    row, values = grid.rows[0]
    if len({norm(v) for v in values if isinstance(v, str)} & set(known)) < 2:
        return grid, 1
    (column, title), = filled
    notices.append(Notice(grid.label, f"{get_column_letter(column + 1)}1", "",
                          f"row 1 read as a title ({as_text(title)!r}); the headers are read from row {row}"))
    width = max(len(v) for _, v in grid.rows)
    return Grid(grid.label, list(values) + [None] * (width - len(values)), grid.rows[1:]), row


def _columns(spec, grid, known, header_row, problems, notices) -> dict[str, int]:
    """Map header names to column positions, reporting unknown, duplicate and missing ones."""
    columns: dict[str, int] = {}
    for i, head in enumerate(grid.header):
        cell = f"{get_column_letter(i + 1)}{header_row}"
        if head is None:
            if any(i < len(values) and values[i] is not None for _, values in grid.rows):
                problems.append(Problem(grid.label, cell, "", None, "column has values but no "
                                        "header", "head it with one of: " + ", ".join(known)))
        elif isinstance(head, Bad):
            problems.append(Problem(grid.label, cell, "", head.value, head.message, head.fix))
        elif why := ignored(name := norm(head)):
            notices.append(Notice(grid.label, cell, as_text(head), f"column ignored ({why})", "ignored"))
        elif name in columns:
            first = f"{get_column_letter(columns[name] + 1)}{header_row}"
            problems.append(Problem(grid.label, cell, name, None, f"column appears twice (first in {first}; "
                                    "names are compared without regard to case and spaces)",
                                    "delete one of the two columns"))
        elif name not in known:
            problems.append(Problem(grid.label, cell, "", as_text(head), "unknown column",
                                    suggest(name, known) or "rename or delete it; columns "
                                    "are: " + ", ".join(known)))
        else:
            columns[name] = i
            if as_text(head) != name:
                notices.append(Notice(grid.label, cell, name, f"header {as_text(head)!r} read as '{name}'"))
    required = [f.name for f in spec.fields if f.required] if spec.kind == "table" else known
    for name in required:
        if name not in columns:
            field = spec.field(name)
            what = f": {field.description}" if field else ""
            problems.append(Problem(grid.label, "", name, None, "required column is missing",
                                    f"add a column headed '{name}' in row {header_row}{what}"))
    return columns


def _parse_table(spec, grid, columns, problems, notices) -> Parsed:
    parsed = Parsed(spec, grid.label, [], [], [])
    for row, values in grid.rows:
        record, cells = {}, {}
        for field in spec.fields:
            if field.name not in columns:
                record[field.name], cells[field.name] = field.default, ""
                continue
            i = columns[field.name]
            cells[field.name] = f"{get_column_letter(i + 1)}{row}"
            raw = values[i] if i < len(values) else None
            record[field.name] = typed_value(field, raw, grid.label, cells[field.name], problems, notices)
        parsed.records.append(record)
        parsed.cells.append(cells)
        parsed.rows.append(row)
    return parsed


def _parse_keys(spec, grid, columns, problems, notices) -> Parsed | None:
    if "key" not in columns or "value" not in columns:
        return None
    kcol, vcol = columns["key"], columns["value"]
    given: dict[str, tuple[object, str]] = {}
    first_row: dict[str, int] = {}
    for row, values in grid.rows:
        text = values[kcol] if kcol < len(values) else None
        raw = values[vcol] if vcol < len(values) else None
        kcell, vcell = f"{get_column_letter(kcol + 1)}{row}", f"{get_column_letter(vcol + 1)}{row}"
        if text is None:
            if raw is not None:
                problems.append(Problem(grid.label, kcell, "key", None, "value without a key",
                                        "enter the key or delete the row"))
            continue
        key = norm(text)
        if spec.field(key) is None:
            problems.append(Problem(grid.label, kcell, "key", as_text(text), "unknown key",
                                    suggest(key, spec.columns) or "keys are: "
                                    + ", ".join(spec.columns)))
        elif key in given:
            problems.append(Problem(grid.label, kcell, "key", as_text(text), f"key listed twice (first on "
                                    f"row {first_row[key]})", "delete one of the two rows"))
        else:
            given[key], first_row[key] = (raw, vcell), row
            if as_text(text) != key:
                notices.append(Notice(grid.label, kcell, key, f"key {as_text(text)!r} read as '{key}'"))
    if not spec.required and all(raw is None for raw, _ in given.values()):
        return None
    record, cells = {}, {}
    for field in spec.fields:
        if field.name in given:
            raw, cells[field.name] = given[field.name]
            record[field.name] = typed_value(field, raw, grid.label, cells[field.name], problems, notices)
            continue
        record[field.name], cells[field.name] = field.default, ""
        if field.required:
            problems.append(Problem(grid.label, "", field.name, None, "required key is missing",
                                    f"add a row with key '{field.name}' and {field.expectation()}"
                                    f" as value ({field.description})"))
    return Parsed(spec, grid.label, [record], [cells], [0])


# --- typed tables ----------------------------------------------------------------------------

_DTYPES = {"int": ("int64", "Int64"), "float": ("float64", "float64"),
           "bool": ("bool", "boolean")}


def frame(p: Parsed) -> pd.DataFrame:
    """Typed DataFrame of a table sheet, indexed by its name column when it has one.

    List-valued cells are carried parsed, once, for every consumer: a ``names`` cell as a tuple of
    names, ``switches.port_modes`` as ``{gbps: ports}`` (``catalog.port_modes_text`` writes it back)."""
    df = pd.DataFrame(p.records, columns=p.spec.columns)
    for field in p.spec.fields:
        if field.type == "names":
            df[field.name] = df[field.name].map(lambda v: tuple(v) if v else None)
        elif field.name == "port_modes":
            df[field.name] = df[field.name].map(port_modes)
        elif field.type in _DTYPES:
            full, nullable = _DTYPES[field.type]
            df[field.name] = df[field.name].astype(nullable if df[field.name].isna().any()
                                                   else full)
    return df.set_index(p.spec.key) if p.spec.key else df


def frame_empty(spec: Sheet) -> pd.DataFrame:
    return frame(Parsed(spec, spec.name, [], [], []))
