"""The file gate of the workbook reader: every limit refused with a file-level reason before the work it
protects; a normal workbook read as before (values, error and formula cells, row numbers)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import openpyxl
import pytest

from designer.errors import InputError
from designer.inputs import reader
from designer.inputs.reader import Bad, read_workbook
from designer.inputs.writer import write_workbook

ROOT = Path(__file__).resolve().parents[1]
BOOK = {"project": {"gpus_required": 64, "node_type": "DGX H100"},
        "sites": [{"name": "s1", "power_mw": 5, "pue": 1.3, "max_nodes": 100, "fixed_cost_usd": 0,
                   "power_cost_usd_per_mw": 0, "energy_usd_per_mwh": 50}]}


def refused(path: Path) -> str:
    with pytest.raises(InputError) as info:
        read_workbook(path)
    assert len(info.value.problems) == 1
    problem = info.value.problems[0]
    assert problem.sheet == "" and problem.cell == "" and problem.fix
    return str(problem)


def rewrite(path: Path, change) -> Path:
    """The workbook at ``path`` with its parts passed through ``change(name, bytes) -> bytes``."""
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in parts.items():
            z.writestr(name, change(name, data))
    return path


def sheet_part(path: Path, title: str) -> str:
    book = openpyxl.load_workbook(path)
    return f"xl/worksheets/sheet{book.sheetnames.index(title) + 1}.xml"


def test_a_normal_workbook_reads_as_before(tmp_path):
    path = write_workbook(tmp_path / "plan.xlsx", BOOK)
    book = openpyxl.load_workbook(path)
    book["sites"]["B3"], book["sites"]["C3"] = "=10*5", "#DIV/0!"
    book["sites"]["A3"] = "  s2 "
    book.save(path)
    grids, sha = read_workbook(path)
    assert len(sha) == 64 and list(grids) == ["project", "sites"]
    assert grids["project"].header == ["key", "value"]
    assert grids["project"].rows == [(2, ["gpus_required", 64]), (3, ["node_type", "DGX H100"])]
    sites = grids["sites"]
    assert sites.header[:3] == ["name", "power_mw", "pue"]
    assert sites.rows[0] == (2, ["s1", 5, 1.3, 100, 0, 0, 50])
    row, values = sites.rows[1]
    assert row == 3 and values[0] == "s2"
    assert values[1] == Bad("=10*5", values[1].message, values[1].fix) and "formula" in values[1].message
    assert isinstance(values[2], Bad) and values[2].value == "#DIV/0!"


def test_a_file_too_large_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "huge.xlsx"
    with open(path, "wb") as handle:
        handle.truncate(4 * 2**30)  # sparse: 4 GiB that take no disk
    assert "4,096 MiB, above the 32 MiB" in refused(path)


def test_a_zip_bomb_part_is_refused(tmp_path):
    path = write_workbook(tmp_path / "plan.xlsx", BOOK)
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as z:
        z.writestr("xl/media/bomb.bin", b"\0" * (40 * 2**20))
    assert "expands" in refused(path) and "zip bomb" in refused(path)


def test_parts_expanding_beyond_the_budget_are_refused_while_streaming(tmp_path, monkeypatch):
    """Declared sizes can lie: the inflated bytes are counted as they stream."""
    path = write_workbook(tmp_path / "plan.xlsx", BOOK)
    monkeypatch.setattr(reader, "MAX_UNZIPPED_BYTES", 10**9)
    monkeypatch.setattr(reader, "_check_directory", lambda book: None)
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as z:
        z.writestr("xl/sharedStrings.xml", b"<sst>" + b" " * (2 * 2**20) + b"</sst>")
    monkeypatch.setattr(reader, "MAX_UNZIPPED_BYTES", 2**20)
    assert "expand beyond" in refused(path)


def test_empty_rows_by_the_million_are_refused(tmp_path):
    path = write_workbook(tmp_path / "plan.xlsx", BOOK)
    part = sheet_part(path, "sites")
    empty = b"".join(b'<row r="%d"/>' % r for r in range(10, 5_000_000))
    rewrite(path, lambda name, data: data.replace(b"</sheetData>", empty + b"</sheetData>") if name == part else data)
    message = refused(path)
    assert "expand" in message and "MiB" in message


def test_a_far_cell_costs_one_cell(tmp_path):
    """A1048576 in sites is one more data row (the sheet parser names its blanks); XFD1 is refused."""
    path = write_workbook(tmp_path / "plan.xlsx", BOOK)
    part = sheet_part(path, "sites")
    far = b'<row r="1048576"><c r="A1048576" t="inlineStr"><is><t>far</t></is></c></row>'
    rewrite(path, lambda name, data: data.replace(b"</sheetData>", far + b"</sheetData>") if name == part else data)
    grids, _ = read_workbook(path)
    assert grids["sites"].rows[-1] == (1048576, ["far"])
    wide = b'<row r="1"><c r="XFD1" t="inlineStr"><is><t>x</t></is></c></row>'
    proj = sheet_part(path, "project")
    rewrite(path, lambda name, data: data.replace(b"<sheetData>", b"<sheetData>" + wide) if name == proj else data)
    assert "value in XFD1, beyond the 100 columns" in refused(path)


def test_too_many_rows_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "MAX_ROWS", 3)
    book = dict(BOOK, sites=[dict(BOOK["sites"][0], name=f"s{i}") for i in range(5)])
    assert "more than 3 rows with data" in refused(write_workbook(tmp_path / "plan.xlsx", book))


def test_sheet_parts_missing_or_outside_the_package(tmp_path):
    path = write_workbook(tmp_path / "plan.xlsx", BOOK)
    rewrite(path, lambda name, data: data.replace(b"worksheets/sheet2.xml", b"../outside.xml")
            if name == "xl/_rels/workbook.xml.rels" else data)
    assert "sheet 'sites' points to a part the file does not hold" in refused(path)


def test_xml_entities_are_refused(tmp_path):
    path = write_workbook(tmp_path / "plan.xlsx", BOOK)
    part = sheet_part(path, "sites")
    bomb = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
    rewrite(path, lambda name, data: bomb + (data.split(b"?>", 1)[1] if data.startswith(b"<?xml") else data)
            if name == part else data)
    assert "not a readable .xlsx workbook" in refused(path)


def test_unreadable_and_special_files(tmp_path):
    fifo = tmp_path / "pipe.xlsx"
    os.mkfifo(fifo)
    assert "not a file" in refused(fifo)
    locked = write_workbook(tmp_path / "locked.xlsx", BOOK)
    locked.chmod(0)
    if os.access(locked, os.R_OK):
        pytest.skip("this user reads files whatever their mode (root)")
    assert "cannot read the file" in refused(locked)


def test_reading_the_largest_admitted_sheet_stays_small(tmp_path):
    """20,000 site rows (the row limit) read in one pass: peak memory of a fresh process, printed, and held
    under 1 GB."""
    book = dict(BOOK, sites=[dict(BOOK["sites"][0], name=f"s{i}") for i in range(reader.MAX_ROWS)])
    path = write_workbook(tmp_path / "big.xlsx", book)
    # VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child of a large pytest would report it
    code = ("import sys; from designer.inputs.reader import read_workbook; "
            "g, _ = read_workbook(sys.argv[1]); assert len(g['sites'].rows) == 20000; "
            "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=300,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    peak_mb = int(out.stdout) / 1024
    print(f"peak memory reading 20,000 site rows: {peak_mb:.0f} MB")
    assert peak_mb < 1024


def test_a_file_the_process_cannot_read_is_a_file_level_input_error(tmp_path, monkeypatch):
    """Whoever runs the suite (root reads any mode), an unreadable file is exit 2 with the reason."""
    path = write_workbook(tmp_path / "plan.xlsx", BOOK)

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(reader, "open", denied, raising=False)
    assert "plan.xlsx: cannot read the file: Permission denied" in refused(path)
