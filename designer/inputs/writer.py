"""Write planner workbooks: a dict of sheets to .xlsx, columns and sheets in schema order.

Key/value sheets are given as dicts ``{key: value}``; tables as DataFrames (a named index is
written as a column) or lists of dicts. Names the schema does not know are written after the
known ones, so tests can build invalid workbooks with the same helper.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from openpyxl import Workbook

from designer.inputs.catalog import cell_text
from designer.inputs.schema import SHEETS


def build_workbook(tables: dict[str, object]) -> Workbook:
    """An openpyxl Workbook holding ``tables``, one sheet each."""
    book = Workbook()
    book.remove(book.active)
    for name in _ordered(tables, SHEETS):
        sheet = book.create_sheet(name)
        spec = SHEETS.get(name)
        data = tables[name]
        if isinstance(data, dict):
            sheet.append(["key", "value"])
            for key in _ordered(data, spec.columns if spec else []):
                sheet.append([key, _cell(data[key])])
            continue
        records = _records(data)
        given = _given_columns(data, records)
        known = spec.columns if spec else []
        columns = _ordered(given, known) if given else known
        sheet.append(columns)
        for record in records:
            sheet.append([_cell(record.get(column)) for column in columns])
    return book


def write_workbook(path: str | Path, tables: dict[str, object]) -> Path:
    """Write ``tables`` to ``path`` as .xlsx and return the path."""
    path = Path(path)
    build_workbook(tables).save(path)
    return path


def _ordered(names, order) -> list[str]:
    return [n for n in order if n in names] + [n for n in names if n not in order]


def _given_columns(data, records: list[dict]) -> list[str]:
    if isinstance(data, pd.DataFrame):
        named = data.index.name is not None
        return ([data.index.name] if named else []) + [str(c) for c in data.columns]
    return list(dict.fromkeys(column for record in records for column in record))


def _records(data) -> list[dict]:
    if isinstance(data, pd.DataFrame):
        frame = data.reset_index() if data.index.name is not None else data
        return frame.to_dict("records")
    return [dict(record) for record in data]


def _cell(value):
    """A value openpyxl can store: blanks for None/NaN, plain Python scalars, lists joined, port modes as
    the planner writes them."""
    if isinstance(value, dict):
        return cell_text(value)
    if isinstance(value, (list, tuple, set)):
        return ",".join(str(v) for v in value)
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value
