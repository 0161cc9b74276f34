"""Read the planner workbook into validated ``Inputs``, gathering every problem at once.

Sheets are read into plain grids (header row 1, or 2 below a title row; blank rows dropped, Excel row numbers
kept), matched to the schema by name without regard to case and spaces, parsed, then checked across sheets.
The default catalog CSVs go through the same grid parser, so they meet the same rules; a workbook catalog
sheet replaces its default table, or extends it when the project's ``catalog`` is ``extend``. Any problem
raises ``InputError`` listing all of them; otherwise every table is typed and defaulted, and ``notices``
says what was read in another form, ignored, replaced, or looks implausible.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from designer.errors import InputError, Notice, Problem
from designer.inputs.catalog import CATALOG_DIR
from designer.inputs.cells import suggest
from designer.inputs.checks import check, warn
from designer.inputs.reader import Grid, read_workbook
from designer.inputs.schema import CATALOG_SHEETS, SHEETS, TOPOLOGIES
from designer.inputs.sheets import (
    Parsed,
    frame,
    frame_empty,
    ignored,
    norm,
    parse,
    parse_default,
)

PLANNER_SOURCE = "planner workbook"  # the source of a catalog row the workbook gives without one


@dataclass(frozen=True, eq=False)
class Inputs:
    """The validated workbook: typed tables with defaults applied (see ARCHITECTURE.md)."""

    name: str
    source: str
    sha256: str
    project: dict
    sites: pd.DataFrame
    routes: pd.DataFrame
    floorplan: pd.DataFrame
    workload: dict | None
    node_types: pd.DataFrame
    switches: pd.DataFrame
    optics: pd.DataFrame
    coherent: pd.DataFrame
    amplifiers: pd.DataFrame
    protocols: pd.DataFrame
    support_networks: pd.DataFrame
    fiber_plant: pd.DataFrame
    cloud: pd.DataFrame  # GPU cloud offers (build or rent); empty without the sheet
    notices: tuple[Notice, ...] = ()  # readings, ignored names, catalog replacements, plausibility warnings


def load_inputs(path: str | Path) -> Inputs:
    """Read and validate a planner workbook; raise InputError listing every problem found."""
    path = Path(path)
    found, sha256 = read_workbook(path)
    problems: list[Problem] = []
    notices: list[Notice] = []
    grids = _named(found, problems, notices)
    for spec in SHEETS.values():
        if spec.required and spec.name not in grids:
            problems.append(Problem(spec.name, "", "", None, "required sheet is missing",
                                    f"add a sheet named '{spec.name}': {spec.description}"))
    parsed = {name: parse(SHEETS[name], grids[name], problems, notices)
              for name in SHEETS if name in grids}
    mode = parsed["project"].records[0]["catalog"] if parsed.get("project") else "replace"
    for name in CATALOG_SHEETS:
        if parsed.get(name):
            _source_rows(parsed[name], path.name, notices)
            parsed[name] = _with_default(parsed[name], mode, problems, notices)
        elif name not in grids:
            parsed[name] = parse_default(name, CATALOG_DIR, problems, notices)
    parsed = {name: p for name, p in parsed.items() if p is not None}
    check(parsed, problems, notices)
    warn(parsed, notices)
    if problems:
        raise InputError(problems)
    tables = {name: frame(parsed[name]) if name in parsed else frame_empty(SHEETS[name])
              for name in SHEETS if SHEETS[name].kind == "table"}
    project = dict(parsed["project"].records[0])
    project["name"] = project["name"] or path.stem
    project["protocols_allowed"] = project["protocols_allowed"] or list(tables["protocols"].index)
    project["topologies_allowed"] = project["topologies_allowed"] or list(TOPOLOGIES)
    workload = dict(parsed["workload"].records[0]) if "workload" in parsed else None
    return Inputs(name=project["name"], source=str(path), sha256=sha256, project=project,
                  workload=workload, notices=tuple(notices), **tables)


SHEET_ALIASES = {"dci_optics": "coherent"}  # the inter-site optics, coherent and gray, under the name


def _named(found: dict[str, Grid], problems: list[Problem], notices: list[Notice]) -> dict[str, Grid]:
    """The workbook's sheets by schema name, matched without regard to case and surrounding spaces."""
    titles: dict[str, str] = {}
    for title in found:
        name = SHEET_ALIASES.get(norm(title), norm(title))
        if name.startswith("_"):
            notices.append(Notice(title, "", "", f"sheet ignored ({ignored(name)})", "ignored"))
        elif name not in SHEETS:
            problems.append(Problem(title, "", "", None, "unknown sheet",
                                    suggest(name, SHEETS) or "rename or delete it; sheets "
                                    "are: " + ", ".join(SHEETS)))
        elif name in titles:
            problems.append(Problem(title, "", "", None, f"same sheet as {titles[name]!r} (names are compared "
                                    "without regard to case and spaces)", "keep one of the two sheets"))
        else:
            titles[name] = title
            if title != name:
                notices.append(Notice(title, "", "", f"sheet name {title!r} read as '{name}'"))
    return {name: found[title] for name, title in titles.items()}


def _source_rows(p: Parsed, filename: str, notices: list[Notice]) -> None:
    """Source each row given without one to the workbook itself: file, sheet and row."""
    blank = [(record, row) for record, row in zip(p.records, p.rows) if record["source"] is None]
    for record, row in blank:
        record["source"] = f"{PLANNER_SOURCE} {filename}, {p.label} row {row}"
    if blank:
        notices.append(Notice(p.label, "", "source", f"{_rows(len(blank))} without a source: sourced to this "
                              f"workbook as '{PLANNER_SOURCE} {filename}, {p.label} row N'", "catalog"))


def _with_default(p: Parsed, mode: str | None, problems: list[Problem], notices: list[Notice]) -> Parsed:
    """A workbook catalog sheet replacing its default table (said when it leaves default rows out), or extending
    it (``catalog`` = extend)."""
    if mode == "extend":
        return _extended(p, problems, notices)
    default = parse_default(p.spec.name, CATALOG_DIR, [], [])  # only its names: its own problems are not the workbook's
    dropped = _names(default) - _names(p) if default else set()
    if dropped:
        verb = "replaces" if len(p.records) == 1 else "replace"
        notices.append(Notice(p.label, "", "", f"the workbook's {_rows(len(p.records))} {verb} the default table "
                              f"of {len(default.records)}", "catalog"))
    return p


def _extended(p: Parsed, problems: list[Problem], notices: list[Notice]) -> Parsed:
    """The default table with the workbook's rows added, a row of the same name overriding the default one."""
    default = parse_default(p.spec.name, CATALOG_DIR, problems, notices)
    if default is None:
        return p
    key, mine, theirs = p.spec.key, _names(p), _names(default)
    kept = [i for i, r in enumerate(default.records) if norm(r[key]) not in mine]
    overrides = [(r, c) for r, c in zip(p.records, p.cells) if r[key] is not None and norm(r[key]) in theirs]
    for record, cells in overrides:
        notices.append(Notice(p.label, cells[key], key, f"{record[key]!r} overrides the default row of the "
                              "same name", "catalog"))
    verb = "extends" if len(p.records) == 1 else "extend"
    notices.append(Notice(p.label, "", "", f"the workbook's {_rows(len(p.records))} {verb} the default table "
                          f"of {len(default.records)} ({len(overrides)} overriding a default row)", "catalog"))
    return Parsed(p.spec, p.label, [default.records[i] for i in kept] + p.records,
                  [default.cells[i] for i in kept] + p.cells, [default.rows[i] for i in kept] + p.rows)


def _names(p: Parsed) -> set[str]:
    """A catalog table's row names, normalised."""
    return {norm(r[p.spec.key]) for r in p.records if r[p.spec.key] is not None}


def _rows(n: int) -> str:
    return f"{n} row" + ("" if n == 1 else "s")


def load_catalog(directory: Path = CATALOG_DIR) -> dict[str, pd.DataFrame]:
    """The catalog CSVs in ``directory`` as validated tables (InputError listing every problem)."""
    problems: list[Problem] = []
    notices: list[Notice] = []
    parsed = {name: parse_default(name, Path(directory), problems, notices) for name in CATALOG_SHEETS}
    parsed = {name: p for name, p in parsed.items() if p is not None}
    check(parsed, problems, notices)
    if problems:
        raise InputError(problems)
    return {name: frame(p) for name, p in parsed.items()}
