"""One sheet's grid to typed records against its schema (table or key/value sheet), the default catalog CSVs
through the same parser, and the typed DataFrames of the validated tables."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from openpyxl.utils import get_column_letter

from designer.errors import Problem
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


def parse_default(name: str, directory: Path, problems: list[Problem]) -> Parsed | None:
    path = directory / f"{name}.csv"
    label = f"data/catalog/{name}.csv"
    if not path.is_file():
        problems.append(Problem(label, "", "", None, "default catalog file is missing",
                                f"add a '{name}' sheet to the workbook, or restore the file"))
        return None
    header, rows = read_csv_rows(path)
    return parse(SHEETS[name], Grid(label, [h.strip() or None for h in header], rows),
                  problems)


# --- parsing one sheet -----------------------------------------------------------------------

def parse(spec: Sheet, grid: Grid, problems: list[Problem]) -> Parsed | None:
    """Type every cell of a sheet against the schema; None for an optional sheet left blank."""
    columns = _columns(spec, grid, problems)
    if spec.kind == "table":
        return _parse_table(spec, grid, columns, problems)
    return _parse_keys(spec, grid, columns, problems)


def _columns(spec: Sheet, grid: Grid, problems: list[Problem]) -> dict[str, int]:
    """Map header names to column positions, reporting unknown, duplicate and missing ones."""
    known = spec.columns if spec.kind == "table" else ["key", "value"]
    columns: dict[str, int] = {}
    for i, head in enumerate(grid.header):
        cell = f"{get_column_letter(i + 1)}1"
        if head is None:
            if any(i < len(values) and values[i] is not None for _, values in grid.rows):
                problems.append(Problem(grid.label, cell, "", None, "column has values but no "
                                        "header", "head it with one of: " + ", ".join(known)))
        elif isinstance(head, Bad):
            problems.append(Problem(grid.label, cell, "", head.value, head.message, head.fix))
        elif (name := str(head).strip()) in columns:
            problems.append(Problem(grid.label, cell, name, None, "column appears twice",
                                    "delete one of the two columns"))
        elif name not in known:
            problems.append(Problem(grid.label, cell, "", name, "unknown column",
                                    suggest(name, known) or "rename or delete it; columns "
                                    "are: " + ", ".join(known)))
        else:
            columns[name] = i
    required = [f.name for f in spec.fields if f.required] if spec.kind == "table" else known
    for name in required:
        if name not in columns:
            field = spec.field(name)
            what = f": {field.description}" if field else ""
            problems.append(Problem(grid.label, "", name, None, "required column is missing",
                                    f"add a column headed '{name}' in row 1{what}"))
    return columns


def _parse_table(spec, grid, columns, problems) -> Parsed:
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
            record[field.name] = typed_value(field, raw, grid.label, cells[field.name], problems)
        parsed.records.append(record)
        parsed.cells.append(cells)
        parsed.rows.append(row)
    return parsed


def _parse_keys(spec, grid, columns, problems) -> Parsed | None:
    if "key" not in columns or "value" not in columns:
        return None
    kcol, vcol = columns["key"], columns["value"]
    given: dict[str, tuple[object, str]] = {}
    first_row: dict[str, int] = {}
    for row, values in grid.rows:
        key = values[kcol] if kcol < len(values) else None
        raw = values[vcol] if vcol < len(values) else None
        kcell, vcell = f"{get_column_letter(kcol + 1)}{row}", f"{get_column_letter(vcol + 1)}{row}"
        if key is None:
            if raw is not None:
                problems.append(Problem(grid.label, kcell, "key", None, "value without a key",
                                        "enter the key or delete the row"))
            continue
        key = as_text(key)
        if spec.field(key) is None:
            problems.append(Problem(grid.label, kcell, "key", key, "unknown key",
                                    suggest(key, spec.columns) or "keys are: "
                                    + ", ".join(spec.columns)))
        elif key in given:
            problems.append(Problem(grid.label, kcell, "key", key, f"key listed twice (first on "
                                    f"row {first_row[key]})", "delete one of the two rows"))
        else:
            given[key], first_row[key] = (raw, vcell), row
    if not spec.required and all(raw is None for raw, _ in given.values()):
        return None
    record, cells = {}, {}
    for field in spec.fields:
        if field.name in given:
            raw, cells[field.name] = given[field.name]
            record[field.name] = typed_value(field, raw, grid.label, cells[field.name], problems)
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
