"""Read a workbook file into plain grids: every sheet's header row and non-blank data rows with their Excel row
numbers; cells that hold an Excel error or an uncalculated formula are marked ``Bad``.

The file gate comes first, each limit checked before the work it protects: the file's size, then the zip
directory (total and per-part expansion), then, while each sheet's XML streams through a parser that
refuses DTDs and entities (defusedxml), the bytes actually inflated, the rows with data and the columns.
One pass over each part keeps only non-blank cells: a single far cell (XFD1048576) costs one cell, not the
rectangle up to it. The limits are far beyond any real plan (a plan has tens of sites, at most thousands
of routes and catalog rows, a few dozen columns) and keep memory well under 1 GB.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from xml.etree.ElementTree import ParseError

from defusedxml.common import DefusedXmlException
from defusedxml.ElementTree import iterparse
from openpyxl.utils import column_index_from_string

from designer.errors import InputError, Problem

MAX_FILE_BYTES = 32 * 2**20  # a planner workbook with the whole default catalog is ~60 kB
MAX_UNZIPPED_BYTES = 64 * 2**20  # 20,000 rows x 12 columns of sheet XML is ~10 MB
MAX_RATIO = 200  # parts above 1 MiB: sheet XML compresses ~10-50x; a zip bomb 1,000x and more
MAX_ROWS = 20_000  # data rows with a value, per sheet: sites and routes of a plan number in the hundreds
EXCEL_ROWS = 1_048_576  # a spreadsheet's last row
MAX_COLUMNS = 100  # the widest sheet has 10 columns, plus a planner's notes

_NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
       "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
       "rel": "http://schemas.openxmlformats.org/package/2006/relationships"}
_MAIN = "{%s}" % _NS["m"]
_CELL = re.compile(r"^([A-Z]{1,3})(\d+)$")
_FIX_XLSX = "save it as an Excel workbook (.xlsx)"


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


class _Refused(Exception):
    """The file is not admitted: ``message`` says what, ``fix`` what to do."""

    def __init__(self, message: str, fix: str = _FIX_XLSX):
        super().__init__(message)
        self.message, self.fix = message, fix


def read_workbook(path: Path) -> tuple[dict[str, Grid], str]:
    """Every worksheet as a grid, and the file's sha256; InputError (file-level) if it is not admitted."""
    path = Path(path)
    try:
        data = _read_file(path)
        with zipfile.ZipFile(_Bytes(data)) as book:
            _check_directory(book)
            budget = [MAX_UNZIPPED_BYTES]
            strings = _shared_strings(book, budget)
            grids = {name: _grid(book, name, part, strings, budget) for name, part in _sheets(book, budget)}
    except _Refused as exc:
        raise InputError([Problem("", "", "", None, f"{path.name}: {exc.message}", exc.fix)]) from None
    except (zipfile.BadZipFile, ParseError, DefusedXmlException, KeyError, ValueError, EOFError,
            NotImplementedError, RuntimeError, zlib.error) as exc:
        fix = "save it in the newer .xlsx format" if path.suffix.lower() == ".xls" else _FIX_XLSX
        raise InputError([Problem("", "", "", None, f"{path.name} is not a readable .xlsx workbook "
                                  f"({_why(exc)})", fix)]) from None
    return grids, hashlib.sha256(data).hexdigest()


def _why(exc: Exception) -> str:
    """Why a file is no readable workbook, in words (no Python exception names)."""
    if isinstance(exc, zipfile.BadZipFile):
        return "not a zip package, which an .xlsx file is"
    if isinstance(exc, KeyError):
        return f"a part it needs is missing: {str(exc).strip(chr(34) + chr(39))}"
    if isinstance(exc, DefusedXmlException):
        return "its XML declares entities or a DTD, which a workbook never needs"
    if isinstance(exc, ParseError):
        return f"its XML is malformed: {exc}"
    if isinstance(exc, (EOFError, zlib.error)):
        return "the file is truncated or its compressed data is damaged"
    return str(exc) or "its content cannot be read"


def _read_file(path: Path) -> bytes:
    """The file's bytes, after checking it is a regular, readable file within MAX_FILE_BYTES."""
    try:
        if not path.exists():
            raise InputError([Problem("", "", "", None, f"file not found: {path}", "check the "
                                      "path, or write a blank one with `designer template`")])
        if not path.is_file():
            raise InputError([Problem("", "", "", None, f"not a file: {path}",
                                      "give the path of an .xlsx workbook")])
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise _Refused(f"the file is {size / 2**20:,.0f} MiB, above the {MAX_FILE_BYTES // 2**20} MiB a "
                           "planner workbook may have", "give the planner workbook itself (a few hundred kB)")
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise _Refused(f"cannot read the file: {exc.strerror or exc}",
                       "check the path and its permissions") from None
    if len(data) > MAX_FILE_BYTES:
        raise _Refused(f"the file grew beyond {MAX_FILE_BYTES // 2**20} MiB while it was read")
    return data


class _Bytes:
    """A seekable in-memory file for zipfile (io.BytesIO without copying the bytes twice)."""

    def __init__(self, data: bytes):
        self.data, self.pos = memoryview(data), 0

    def read(self, n: int = -1) -> bytes:
        end = len(self.data) if n is None or n < 0 else min(len(self.data), self.pos + n)
        out, self.pos = bytes(self.data[self.pos:end]), end
        return out

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = {0: 0, 1: self.pos, 2: len(self.data)}[whence] + offset
        return self.pos

    def tell(self) -> int:
        return self.pos

    def seekable(self) -> bool:
        return True


def _check_directory(book: zipfile.ZipFile) -> None:
    """Refuse what the zip directory declares: too much in all, a part expanding like a zip bomb."""
    total = sum(info.file_size for info in book.infolist())
    if total > MAX_UNZIPPED_BYTES:
        raise _Refused(f"its parts expand to {total / 2**20:,.0f} MiB, above the {MAX_UNZIPPED_BYTES // 2**20} "
                       "MiB limit (a zip bomb, or far more rows than a plan has)")
    for info in book.infolist():
        if info.file_size > 2**20 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise _Refused(f"part {info.filename} expands {info.file_size / max(info.compress_size, 1):,.0f} "
                           f"times, above the {MAX_RATIO}x a workbook part has (a zip bomb)")


def _open(book: zipfile.ZipFile, name: str, budget: list[int]):
    """A part's inflated bytes as a stream that refuses to go past the total budget, whatever the
    directory said."""
    raw = book.open(name)

    class Counted:
        def read(self, n: int = -1) -> bytes:
            chunk = raw.read(n)
            budget[0] -= len(chunk)
            if budget[0] < 0:
                raise _Refused(f"its parts expand beyond {MAX_UNZIPPED_BYTES // 2**20} MiB (a zip bomb)")
            return chunk

    return Counted()


def _parts(book: zipfile.ZipFile, name: str, budget: list[int]):
    """(event, element) of a part's XML, streamed, DTDs and entities refused."""
    return iterparse(_open(book, name, budget), events=("end",), forbid_dtd=True)


def _sheets(book: zipfile.ZipFile, budget: list[int]) -> list[tuple[str, str]]:
    """(sheet name, part path) of every worksheet, in workbook order; every target inside the package."""
    rels = {}
    for _, el in _parts(book, "xl/_rels/workbook.xml.rels", budget):
        if el.tag == "{%s}Relationship" % _NS["rel"]:
            target = el.get("Target", "")
            path = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join("xl", target))
            rels[el.get("Id")] = path
    sheets = []
    for _, el in _parts(book, "xl/workbook.xml", budget):
        if el.tag == _MAIN + "sheet":
            name, rid = el.get("name"), el.get("{%s}id" % _NS["r"])
            part = rels.get(rid)
            if part is None or part.startswith("..") or part not in book.namelist():
                raise _Refused(f"sheet '{name}' points to a part the file does not hold ({part or rid})",
                               "open and save the workbook in Excel or LibreOffice to repair it")
            sheets.append((name, part))
    return sheets


def _shared_strings(book: zipfile.ZipFile, budget: list[int]) -> list[str]:
    if "xl/sharedStrings.xml" not in book.namelist():
        return []
    strings = []
    for _, el in _parts(book, "xl/sharedStrings.xml", budget):
        if el.tag == _MAIN + "si":
            strings.append("".join(t.text or "" for t in el.iter(_MAIN + "t")))
            el.clear()
    return strings


def _grid(book: zipfile.ZipFile, name: str, part: str, strings: list[str], budget: list[int]) -> Grid:
    """One sheet in one pass: non-blank cells only, within MAX_ROWS data rows and MAX_COLUMNS columns."""
    header, rows, width = [], [], 0
    for _, el in _parts(book, part, budget):
        if el.tag != _MAIN + "row":
            continue
        cells = {}
        for c in el.iter(_MAIN + "c"):
            value = _value(c, strings)
            if value is None:
                continue
            match = _CELL.match(c.get("r", ""))
            if not match:
                raise ValueError(f"a cell without a reference in sheet '{name}'")
            column = column_index_from_string(match[1])
            if column > MAX_COLUMNS:
                raise _Refused(f"sheet '{name}' has a value in {match[0]}, beyond the {MAX_COLUMNS} columns a "
                               "sheet may have", f"delete the far cells of sheet '{name}'")
            cells[column] = value
        number = int(el.get("r") or 0)
        el.clear()
        if number > EXCEL_ROWS:
            raise _Refused(f"sheet '{name}' has a row {number:,}, beyond a spreadsheet's last row "
                           f"{EXCEL_ROWS:,}: the file was not written by a spreadsheet or is damaged",
                           "save the workbook again from Excel or LibreOffice")
        if not cells:
            continue
        width = max(width, max(cells))
        values = [cells.get(i) for i in range(1, max(cells) + 1)]
        if number == 1:
            header = values
        else:
            rows.append((number, values))
            if len(rows) > MAX_ROWS:
                raise _Refused(f"sheet '{name}' has more than {MAX_ROWS:,} rows with data (row {number})",
                               "keep the plan's rows only; a plan has at most a few thousand")
    header += [None] * (width - len(header))
    return Grid(name, header, rows)


def _value(c, strings: list[str]):
    """A cell's value as openpyxl would give it: text stripped (blank -> None), numbers, booleans, or
    ``Bad`` for an error value or a formula whose result was never calculated."""
    kind, v, f = c.get("t", "n"), c.find(_MAIN + "v"), c.find(_MAIN + "f")
    text = v.text if v is not None else None
    if kind == "inlineStr":
        text = "".join(t.text or "" for t in c.iter(_MAIN + "t"))
    if kind == "e":
        return Bad(text, "holds an Excel error", "correct the formula or type the value")
    if text is None:
        if f is not None and f.text:
            return Bad("=" + f.text, "is a formula with no calculated value", "open and save the workbook in "
                       "Excel or LibreOffice so formulas are calculated, or type the value")
        return None
    if kind == "s":
        text = strings[int(text)]
    elif kind == "b":
        return text.strip() == "1"
    elif kind == "n":
        number = float(text)
        return int(number) if number.is_integer() and not re.search(r"[.eE]", text) else number
    return text.strip() or None

