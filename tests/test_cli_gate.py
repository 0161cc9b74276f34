"""The command line's gate: bad flags are usage errors before any work, an output folder that cannot be
written is said in words before the solve, a closed pipe ends quietly, and no output can be turned against
its reader (text that a spreadsheet would run as a formula is stored as text)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest

from designer import cli
from designer.inputs.writer import write_workbook
from test_model import site, tables

ROOT = Path(__file__).resolve().parents[1]
PYTHON_ERRORS = ("Traceback", "ValueError", "TypeError", "FileNotFoundError", "BrokenPipeError", "OSError")


@pytest.mark.parametrize("flags", [
    ["--time-limit", "-5"], ["--time-limit", "0"], ["--time-limit", "nan"], ["--time-limit", "inf"],
    ["--mip-gap", "-1"], ["--mip-gap", "1"], ["--mip-gap", "nan"], ["--threads", "-3"], ["--threads", "0"],
    ["--export-model", "m.txt"],
])
def test_bad_flags_are_usage_errors_before_any_work(tmp_path, capsys, flags):
    """argparse refuses them (exit 2) before the workbook is even read: the workbook here does not exist."""
    with pytest.raises(SystemExit) as info:
        cli.main(["solve", str(tmp_path / "missing.xlsx"), "-o", str(tmp_path / "out"), *flags])
    assert info.value.code == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert f"argument {flags[0]}" in err and not any(name in err for name in PYTHON_ERRORS)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", [["sweep", "w.xlsx", "--vary", "budget_usd=1"], ["bench"]])
def test_sweep_and_bench_refuse_bad_limits_too(command, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main([*command, "--time-limit", "-1"])
    assert info.value.code == cli.EXIT_INPUT


def test_an_unwritable_output_folder_is_said_before_the_solve(tmp_path, capsys, monkeypatch):
    path = write_workbook(tmp_path / "plan.xlsx", tables(32))
    monkeypatch.setattr("designer.solve.run.solve", lambda *a, **k: pytest.fail("solved before checking"))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cases = {blocker: "a file of that name is in the way", blocker / "sub" / "out": f"{blocker} is not a folder"}
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        cases[locked / "out"] = "no permission to write in"
    for out, reason in cases.items():
        assert cli.main(["solve", str(path), "-o", str(out), "--quiet"]) == cli.EXIT_ERROR
        err = capsys.readouterr().err
        assert f"error: cannot write the output folder {out}: {reason}" in err
        assert not any(name in err for name in PYTHON_ERRORS)


def test_a_closed_pipe_ends_quietly():
    """`designer catalog | head -1`: the reader leaves, the command ends without a word on stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "designer.cli", "catalog"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert "BrokenPipe" not in err and "Traceback" not in err


HOSTILE = ['=HYPERLINK("http://evil.example/","x")', "@SUM(A1)", "+cmd", "-2+3"]


def test_no_output_holds_a_formula_from_a_hostile_name(tmp_path):
    """Sites named like formulas: no xlsx cell is a formula, every CSV cell starting like one is quoted,
    the names still read back as typed, and numbers (negative ones included) stay numbers."""
    sites = [site(name) for name in HOSTILE[:2]]
    route = dict(site_a=HOSTILE[0], site_b=HOSTILE[1], distance_km=10, fiber_pairs=40, fiber_cost_usd_per_pair_km=10)
    from test_model import DEEP, SHALLOW, SW64

    book = tables(256, sites=sites, routes=[route], switches=(SW64, SHALLOW, DEEP))
    path = write_workbook(tmp_path / "plan.xlsx", book)
    typed = openpyxl.load_workbook(path)  # typed as text, as Excel keeps '=... after an apostrophe
    for sheet in typed.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                if cell.data_type == "f":
                    cell.data_type = "s"
    typed.save(path)
    out = tmp_path / "out"
    assert cli.main(["solve", str(path), "-o", str(out), "--quiet"]) == cli.EXIT_OK
    seen = set()
    for sheet in openpyxl.load_workbook(out / "design.xlsx").worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                assert cell.data_type != "f", f"{sheet.title}!{cell.coordinate} is a formula: {cell.value}"
                if cell.value in HOSTILE:
                    seen.add(cell.value)
    assert set(HOSTILE[:2]) <= seen
    for name in ("bom.csv", "cabling.csv"):
        with open(out / name, newline="", encoding="utf-8") as handle:
            for row in csv.reader(handle):
                for value in row:
                    assert not value.startswith(("=", "+", "@", "\t", "\r")), (name, value)
                    if value.startswith("-"):
                        float(value)  # a negative number, never text
    html = (out / "report.html").read_text()
    assert "HYPERLINK(&#34;http://evil.example/&#34;" in html and 'href="http://evil' not in html
