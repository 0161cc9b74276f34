"""Read the planner workbook into validated ``Inputs``, gathering every problem at once.

Sheets are read into plain grids (header row 1, data from row 2, blank rows dropped, Excel row
numbers kept), parsed against ``designer.inputs.schema``, then checked across sheets. The default
catalog CSVs go through the same grid parser, so they meet the same rules. Any problem raises
``InputError`` listing all of them; otherwise every table is typed and defaulted.
"""

from __future__ import annotations

import difflib
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

import openpyxl
import pandas as pd
from openpyxl.utils import get_column_letter

from designer.errors import InputError, Problem
from designer.inputs.catalog import CATALOG_DIR, port_modes, read_csv_rows
from designer.inputs.schema import CATALOG_SHEETS, SHEETS, TOPOLOGIES, Field, Sheet

_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0"}


@dataclass(frozen=True, eq=False)
class Inputs:
    """The validated workbook: typed tables with defaults applied (see ARCHITECTURE.md)."""

    name: str
    source: str
    sha256: str
    project: dict
    sites: pd.DataFrame
    routes: pd.DataFrame
    workload: dict | None
    node_types: pd.DataFrame
    switches: pd.DataFrame
    optics: pd.DataFrame
    coherent: pd.DataFrame
    amplifiers: pd.DataFrame
    protocols: pd.DataFrame


@dataclass(frozen=True)
class _Bad:
    """A cell whose value cannot be used: an uncalculated formula or an Excel error value."""

    value: object
    message: str
    fix: str


@dataclass
class _Grid:
    """One sheet's cells: the header row and the non-blank data rows with their row numbers."""

    label: str
    header: list
    rows: list[tuple[int, list]]


@dataclass
class _Parsed:
    """A parsed sheet: typed records (one for a key/value sheet) and each value's cell."""

    spec: Sheet
    label: str
    records: list[dict]
    cells: list[dict]
    rows: list[int]


def load_inputs(path: str | Path) -> Inputs:
    """Read and validate a planner workbook; raise InputError listing every problem found."""
    path = Path(path)
    grids, sha256 = _read_workbook(path)
    problems: list[Problem] = []
    for title in grids:
        if title not in SHEETS:
            problems.append(Problem(title, "", "", None, "unknown sheet",
                                    _suggest(title, SHEETS) or "rename or delete it; sheets "
                                    "are: " + ", ".join(SHEETS)))
    for spec in SHEETS.values():
        if spec.required and spec.name not in grids:
            problems.append(Problem(spec.name, "", "", None, "required sheet is missing",
                                    f"add a sheet named '{spec.name}': {spec.description}"))
    parsed = {name: _parse(SHEETS[name], grids[name], problems)
              for name in SHEETS if name in grids}
    for name in CATALOG_SHEETS:
        if name not in grids:
            parsed[name] = _parse_default(name, CATALOG_DIR, problems)
    parsed = {name: p for name, p in parsed.items() if p is not None}
    _check(parsed, problems)
    if problems:
        raise InputError(problems)
    tables = {name: _frame(parsed[name]) if name in parsed else _frame_empty(SHEETS[name])
              for name in SHEETS if SHEETS[name].kind == "table"}
    project = dict(parsed["project"].records[0])
    project["name"] = project["name"] or path.stem
    project["protocols_allowed"] = project["protocols_allowed"] or list(tables["protocols"].index)
    project["topologies_allowed"] = project["topologies_allowed"] or list(TOPOLOGIES)
    workload = dict(parsed["workload"].records[0]) if "workload" in parsed else None
    return Inputs(name=project["name"], source=str(path), sha256=sha256, project=project,
                  workload=workload, **tables)


def load_catalog(directory: Path = CATALOG_DIR) -> dict[str, pd.DataFrame]:
    """The catalog CSVs in ``directory`` as validated tables (InputError listing every problem)."""
    problems: list[Problem] = []
    parsed = {name: _parse_default(name, Path(directory), problems) for name in CATALOG_SHEETS}
    parsed = {name: p for name, p in parsed.items() if p is not None}
    _check(parsed, problems)
    if problems:
        raise InputError(problems)
    return {name: _frame(p) for name, p in parsed.items()}


# --- reading ---------------------------------------------------------------------------------

def _read_workbook(path: Path) -> tuple[dict[str, _Grid], str]:
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


def _grid(ws, ws_formulas) -> _Grid:
    header, rows = [], []
    for cells in ws.iter_rows():
        row = [_cell_value(cell, ws_formulas) for cell in cells]
        if cells[0].row == 1:
            header = row
        elif any(v is not None for v in row):
            rows.append((cells[0].row, row))
    return _Grid(ws.title, header, rows)


def _cell_value(cell, ws_formulas):
    if cell.data_type == "e":
        return _Bad(cell.value, "holds an Excel error", "correct the formula or type the value")
    value = cell.value
    if value is None:
        formula = ws_formulas[cell.coordinate].value
        if ws_formulas[cell.coordinate].data_type == "f":
            return _Bad(str(getattr(formula, "text", formula)), "is a formula with no "
                        "calculated value", "open and save the workbook in Excel or LibreOffice "
                        "so formulas are calculated, or type the value")
    if isinstance(value, str):
        value = value.strip() or None
    return value


def _parse_default(name: str, directory: Path, problems: list[Problem]) -> _Parsed | None:
    path = directory / f"{name}.csv"
    label = f"data/catalog/{name}.csv"
    if not path.is_file():
        problems.append(Problem(label, "", "", None, "default catalog file is missing",
                                f"add a '{name}' sheet to the workbook, or restore the file"))
        return None
    header, rows = read_csv_rows(path)
    return _parse(SHEETS[name], _Grid(label, [h.strip() or None for h in header], rows),
                  problems)


# --- parsing one sheet -----------------------------------------------------------------------

def _parse(spec: Sheet, grid: _Grid, problems: list[Problem]) -> _Parsed | None:
    """Type every cell of a sheet against the schema; None for an optional sheet left blank."""
    columns = _columns(spec, grid, problems)
    if spec.kind == "table":
        return _parse_table(spec, grid, columns, problems)
    return _parse_keys(spec, grid, columns, problems)


def _columns(spec: Sheet, grid: _Grid, problems: list[Problem]) -> dict[str, int]:
    """Map header names to column positions, reporting unknown, duplicate and missing ones."""
    known = spec.columns if spec.kind == "table" else ["key", "value"]
    columns: dict[str, int] = {}
    for i, head in enumerate(grid.header):
        cell = f"{get_column_letter(i + 1)}1"
        if head is None:
            if any(i < len(values) and values[i] is not None for _, values in grid.rows):
                problems.append(Problem(grid.label, cell, "", None, "column has values but no "
                                        "header", "head it with one of: " + ", ".join(known)))
        elif isinstance(head, _Bad):
            problems.append(Problem(grid.label, cell, "", head.value, head.message, head.fix))
        elif (name := str(head).strip()) in columns:
            problems.append(Problem(grid.label, cell, name, None, "column appears twice",
                                    "delete one of the two columns"))
        elif name not in known:
            problems.append(Problem(grid.label, cell, "", name, "unknown column",
                                    _suggest(name, known) or "rename or delete it; columns "
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


def _parse_table(spec, grid, columns, problems) -> _Parsed:
    parsed = _Parsed(spec, grid.label, [], [], [])
    for row, values in grid.rows:
        record, cells = {}, {}
        for field in spec.fields:
            if field.name not in columns:
                record[field.name], cells[field.name] = field.default, ""
                continue
            i = columns[field.name]
            cells[field.name] = f"{get_column_letter(i + 1)}{row}"
            raw = values[i] if i < len(values) else None
            record[field.name] = _value(field, raw, grid.label, cells[field.name], problems)
        parsed.records.append(record)
        parsed.cells.append(cells)
        parsed.rows.append(row)
    return parsed


def _parse_keys(spec, grid, columns, problems) -> _Parsed | None:
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
        key = _text(key)
        if spec.field(key) is None:
            problems.append(Problem(grid.label, kcell, "key", key, "unknown key",
                                    _suggest(key, spec.columns) or "keys are: "
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
            record[field.name] = _value(field, raw, grid.label, cells[field.name], problems)
            continue
        record[field.name], cells[field.name] = field.default, ""
        if field.required:
            problems.append(Problem(grid.label, "", field.name, None, "required key is missing",
                                    f"add a row with key '{field.name}' and {field.expectation()}"
                                    f" as value ({field.description})"))
    return _Parsed(spec, grid.label, [record], [cells], [0])


def _value(field: Field, raw, label: str, cell: str, problems: list[Problem]):
    """The typed value of one cell, its default when blank, or None after reporting a problem."""
    if isinstance(raw, _Bad):
        problems.append(Problem(label, cell, field.name, raw.value, raw.message, raw.fix))
        return None
    if raw is not None:
        try:
            value = _CONVERT[field.type](field, raw)
        except ValueError as exc:
            message, *fix = exc.args
            problems.append(Problem(label, cell, field.name, raw, message,
                                    fix[0] if fix else _fix(field)))
            return None
        if value != []:
            return value
    if field.required:
        problems.append(Problem(label, cell, field.name, None, "is blank but required",
                                _fix(field)))
        return None
    return field.default


def _fix(field: Field) -> str:
    if field.type in ("enum", "names") and field.allowed:
        return "use " + field.expectation()
    unit = f" in {field.unit}" if field.unit and field.type in ("int", "float") else ""
    example = f", e.g. {field.example}" if field.example is not None else ""
    return f"enter {field.expectation()}{unit}{example}"


def _text(raw) -> str:
    if isinstance(raw, float) and raw.is_integer():
        return str(int(raw))
    return str(raw).strip()


def _number(field: Field, raw, whole: bool):
    problem = ValueError(f"must be {field.expectation()}")
    if isinstance(raw, bool):
        raise problem
    if isinstance(raw, str):
        try:
            raw = float(raw)
        except ValueError:
            raise problem from None
    if not isinstance(raw, (int, float)) or raw != raw or raw in (float("inf"), float("-inf")):
        raise problem
    if whole and not float(raw).is_integer():
        raise problem
    value = int(raw) if whole else float(raw)
    if not field.in_range(value):
        raise problem
    return value


def _bool(field: Field, raw) -> bool:
    text = _text(raw).lower() if not isinstance(raw, bool) else str(raw).lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise ValueError(f"must be {field.expectation()}")


def _enum(field: Field, raw) -> str:
    text = _text(raw).lower()
    if text not in field.allowed:
        raise ValueError(f"must be {field.expectation()}",
                         _suggest(text, field.allowed) or _fix(field))
    return text


def _names(field: Field, raw) -> list[str]:
    names = list(dict.fromkeys(part.strip() for part in _text(raw).split(",") if part.strip()))
    if field.allowed:
        names = [n.lower() for n in names]
        for name in names:
            if name not in field.allowed:
                hint = _suggest(name, field.allowed)
                raise ValueError(f"has unknown entry '{name}'",
                                 (f"{hint} " if hint else "") + _fix(field))
    return names


_CONVERT = {
    "str": lambda field, raw: _text(raw),
    "int": lambda field, raw: _number(field, raw, whole=True),
    "float": lambda field, raw: _number(field, raw, whole=False),
    "bool": _bool,
    "enum": _enum,
    "names": _names,
}


def _suggest(word: str, choices) -> str:
    """'did you mean ...?' for the closest choice, ignoring case; "" when none is close."""
    lowered = {str(c).lower(): c for c in choices}
    match = difflib.get_close_matches(str(word).lower(), list(lowered), n=1, cutoff=0.6)
    return f"did you mean '{lowered[match[0]]}'?" if match else ""


# --- checks across rows and sheets -----------------------------------------------------------

def _check(parsed: dict[str, _Parsed], problems: list[Problem]) -> None:
    """Rules that span rows or sheets: row counts, unique names, references, site bounds."""
    for p in parsed.values():
        if p.spec.nonempty and not p.records:
            problems.append(Problem(p.label, "", "", None, "has no rows",
                                    "add at least one row below the header row"))
        if p.spec.key:
            _check_unique(p, problems)
    for p in parsed.values():
        for field in p.spec.fields:
            if field.ref and field.ref in parsed:
                _check_refs(p, field, _names_of(parsed[field.ref]), problems)
    if "routes" in parsed:
        _check_routes(parsed["routes"], problems)
    if "switches" in parsed:
        _check_port_modes(parsed["switches"], problems)
    if "node_types" in parsed:
        _check_planes(parsed["node_types"], problems)
    if "project" in parsed and "sites" in parsed:
        _check_site_counts(parsed["project"], parsed["sites"], problems)


def _names_of(p: _Parsed) -> list[str]:
    return [r[p.spec.key] for r in p.records if r[p.spec.key] is not None]


def _check_unique(p: _Parsed, problems: list[Problem]) -> None:
    first: dict[str, int] = {}
    for record, cells, row in zip(p.records, p.cells, p.rows):
        name = record[p.spec.key]
        if name is None:
            continue
        if name in first:
            problems.append(Problem(p.label, cells[p.spec.key], p.spec.key, name,
                                    f"duplicate name (first on row {first[name]})",
                                    "give every row its own name"))
        else:
            first[name] = row


def _check_refs(p: _Parsed, field: Field, names: list[str], problems: list[Problem]) -> None:
    listing = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
    for record, cells in zip(p.records, p.cells):
        value = record[field.name]
        for name in (value if isinstance(value, list) else [value] if value else []):
            if name not in names:
                hint = _suggest(name, names)
                problems.append(Problem(p.label, cells[field.name], field.name, name,
                                        f"is not a name in {field.ref}",
                                        hint or f"use one of: {listing or '(none listed)'}"))


def _check_routes(p: _Parsed, problems: list[Problem]) -> None:
    first: dict[frozenset, int] = {}
    for record, cells, row in zip(p.records, p.cells, p.rows):
        a, b = record["site_a"], record["site_b"]
        if a is None or b is None:
            continue
        if a == b:
            problems.append(Problem(p.label, cells["site_b"], "site_b", b, "route from a site "
                                    "to itself", "give two different sites, or delete the row"))
        elif (pair := frozenset((a, b))) in first:
            problems.append(Problem(p.label, cells["site_a"], "site_a", a, f"duplicate route "
                                    f"{a}-{b} (first on row {first[pair]}, either direction)",
                                    "keep one row per site pair"))
        else:
            first[pair] = row


def _check_port_modes(p: _Parsed, problems: list[Problem]) -> None:
    for record, cells in zip(p.records, p.cells):
        text = record["port_modes"]
        if text is None:
            continue
        fix = "write ports x Gb/s per speed, comma separated, e.g. 64x800,128x400"
        try:
            modes = port_modes(text)
        except ValueError as exc:
            problems.append(Problem(p.label, cells["port_modes"], "port_modes", text, str(exc),
                                    fix))
            continue
        totals = {gbps * ports for gbps, ports in modes.items()}
        if len(totals) > 1:
            shown = ", ".join(f"{ports}x{gbps} = {ports * gbps} Gb/s"
                              for gbps, ports in modes.items())
            problems.append(Problem(p.label, cells["port_modes"], "port_modes", text,
                                    f"modes must have equal total bandwidth ({shown})", fix))


def _check_planes(p: _Parsed, problems: list[Problem]) -> None:
    for record, cells in zip(p.records, p.cells):
        nics, planes = record["nics_per_node"], record["planes"]
        if nics and planes and nics % planes:
            problems.append(Problem(p.label, cells["planes"], "planes", planes,
                                    f"must divide nics_per_node ({nics})",
                                    "use a number of planes the NICs split over evenly"))


def _check_site_counts(project: _Parsed, sites: _Parsed, problems: list[Problem]) -> None:
    values, cells = project.records[0], project.cells[0]
    lo, hi = values["min_sites"], values["max_sites"]
    status = [r["status"] for r in sites.records]
    required = [r["name"] for r in sites.records if r["status"] == "required"]
    usable = sum(s != "excluded" for s in status)
    if sites.records and usable == 0:
        problems.append(Problem(sites.label, "", "status", None, "every site is excluded",
                                "set at least one site to candidate or required"))
    if lo is not None and hi is not None and lo > hi:
        problems.append(Problem(project.label, cells["min_sites"], "min_sites", lo,
                                f"is more than max_sites ({hi})", "lower min_sites or raise "
                                "max_sites"))
    if hi is not None and len(required) > hi:
        problems.append(Problem(project.label, cells["max_sites"], "max_sites", hi,
                                f"is less than the {len(required)} sites with status required "
                                f"({', '.join(required)})", "raise max_sites or set fewer "
                                "sites to required"))
    if lo is not None and usable and usable < lo:
        problems.append(Problem(project.label, cells["min_sites"], "min_sites", lo,
                                f"is more than the {usable} sites not excluded",
                                "lower min_sites or add candidate sites"))


# --- typed tables ----------------------------------------------------------------------------

_DTYPES = {"int": ("int64", "Int64"), "float": ("float64", "float64"),
           "bool": ("bool", "boolean")}


def _frame(p: _Parsed) -> pd.DataFrame:
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


def _frame_empty(spec: Sheet) -> pd.DataFrame:
    return _frame(_Parsed(spec, spec.name, [], [], []))
