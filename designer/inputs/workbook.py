"""Read the planner workbook into validated ``Inputs``, gathering every problem at once.

Sheets are read into plain grids (header row 1, data from row 2, blank rows dropped, Excel row
numbers kept), parsed against ``designer.inputs.schema``, then checked across sheets. The default
catalog CSVs go through the same grid parser, so they meet the same rules. Any problem raises
``InputError`` listing all of them; otherwise every table is typed and defaulted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from designer.errors import InputError, Notice, Problem
from designer.inputs.catalog import CATALOG_DIR
from designer.inputs.cells import suggest
from designer.inputs.checks import check
from designer.inputs.reader import read_workbook
from designer.inputs.schema import CATALOG_SHEETS, SHEETS, TOPOLOGIES
from designer.inputs.sheets import frame, frame_empty, parse, parse_default


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
    notices: tuple[Notice, ...] = ()  # readings, ignored names, catalog replacements, plausibility warnings



def load_inputs(path: str | Path) -> Inputs:
    """Read and validate a planner workbook; raise InputError listing every problem found."""
    path = Path(path)
    grids, sha256 = read_workbook(path)
    problems: list[Problem] = []
    for title in grids:
        if title not in SHEETS:
            problems.append(Problem(title, "", "", None, "unknown sheet",
                                    suggest(title, SHEETS) or "rename or delete it; sheets "
                                    "are: " + ", ".join(SHEETS)))
    for spec in SHEETS.values():
        if spec.required and spec.name not in grids:
            problems.append(Problem(spec.name, "", "", None, "required sheet is missing",
                                    f"add a sheet named '{spec.name}': {spec.description}"))
    parsed = {name: parse(SHEETS[name], grids[name], problems)
              for name in SHEETS if name in grids}
    for name in CATALOG_SHEETS:
        if name not in grids:
            parsed[name] = parse_default(name, CATALOG_DIR, problems)
    parsed = {name: p for name, p in parsed.items() if p is not None}
    check(parsed, problems)
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
                  workload=workload, **tables)


def load_catalog(directory: Path = CATALOG_DIR) -> dict[str, pd.DataFrame]:
    """The catalog CSVs in ``directory`` as validated tables (InputError listing every problem)."""
    problems: list[Problem] = []
    parsed = {name: parse_default(name, Path(directory), problems) for name in CATALOG_SHEETS}
    parsed = {name: p for name, p in parsed.items() if p is not None}
    check(parsed, problems)
    if problems:
        raise InputError(problems)
    return {name: frame(p) for name, p in parsed.items()}
