"""The command line's gate: bad flags are usage errors before any work, an output folder that cannot be
written is said in words before the solve, a file that cannot be read is an input error, a closed pipe ends
quietly, the loader's notices are printed, and no output can be turned against its reader (text that a
spreadsheet would run as a formula is stored as text)."""

from __future__ import annotations

import csv
import errno
import os
import subprocess
import sys
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from test_model import DEEP, NODE, SHALLOW, SW64, site, tables

from designer import cli
from designer.inputs.writer import write_workbook
from designer.outputs.export import write_frame_csv, write_frames_xlsx

ROOT = Path(__file__).resolve().parents[1]
PYTHON_ERRORS = ("Traceback", "ValueError", "TypeError", "FileNotFoundError", "BrokenPipeError", "OSError",
                 "PermissionError")
SOLVE_FLAGS = [
    ["--time-limit", "-5"], ["--time-limit", "0"], ["--time-limit", "nan"], ["--time-limit", "inf"],
    ["--time-limit", "soon"], ["--mip-gap", "-1"], ["--mip-gap", "1"], ["--mip-gap", "nan"], ["--mip-gap", "inf"],
    ["--threads", "-3"], ["--threads", "0"], ["--threads", "2.5"], ["--threads", "\u00b2"],
    ["--export-model", "m.txt"], ["--export-model", "mps"],
]


def usage_error(argv: list[str], capsys) -> str:
    """Run ``argv``; it must stop in argparse (exit 2) and say so in one error line; returns that line."""
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert not any(name in err for name in PYTHON_ERRORS), err
    [line] = [x for x in err.splitlines() if ": error: " in x]
    return line


@pytest.mark.parametrize("flags", SOLVE_FLAGS, ids=lambda f: " ".join(f))
def test_bad_flags_are_usage_errors_before_any_work(tmp_path, capsys, flags):
    """argparse refuses them (exit 2) before the workbook is even read: the workbook here does not exist."""
    line = usage_error(["solve", str(tmp_path / "missing.xlsx"), "-o", str(tmp_path / "out"), *flags], capsys)
    assert f"argument {flags[0]}: {flags[1]!r}" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command, flags", [
    (["sweep", "w.xlsx", "--vary", "budget_usd=1"], ["--time-limit", "-1"]),
    (["sweep", "w.xlsx", "--vary", "budget_usd=1"], ["--mip-gap", "1.5"]),
    (["sweep", "w.xlsx", "--vary", "budget_usd=1"], ["--threads", "0"]),
    (["sweep", "w.xlsx", "--vary", "budget_usd=1"], ["--workers", "0"]),
    (["sweep", "w.xlsx", "--vary", "budget_usd=1"], ["--workers", "many"]),
    (["bench"], ["--time-limit", "nan"]),
    (["bench"], ["--time-limit", "0"]),
], ids=lambda v: " ".join(v))
def test_sweep_and_bench_refuse_bad_flags_too(command, flags, capsys):
    assert f"argument {flags[0]}" in usage_error([*command, *flags], capsys)


def test_good_flags_are_taken_as_numbers():
    args = cli.parser().parse_args(["solve", "--time-limit", "1e-3", "--mip-gap", "0", "--threads", " 2",
                                    "--export-model", "m.LP"])
    assert (args.time_limit, args.mip_gap, args.threads, args.export_model) == (0.001, 0.0, 2, "m.LP")


@pytest.fixture
def plan(tmp_path, monkeypatch) -> Path:
    """A valid small workbook; solving it fails the test (the checks must come before the solve)."""
    monkeypatch.setattr("designer.solve.run.solve", lambda *a, **k: pytest.fail("solved before checking"))
    return write_workbook(tmp_path / "plan.xlsx", tables(32))


def refused(argv: list[str], out: Path, reason: str, capsys) -> None:
    assert cli.main(argv) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert f"error: cannot write the output folder {out}: {reason}" in err, err
    assert len(err.splitlines()) == 1 and not any(name in err for name in PYTHON_ERRORS)


def test_an_unwritable_output_folder_is_said_before_the_solve(tmp_path, plan, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cases = {blocker: "a file of that name is in the way", blocker / "sub" / "out": f"{blocker} is not a folder"}
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        cases[locked / "out"] = f"no permission to write in {locked}"
    for out, reason in cases.items():
        refused(["solve", str(plan), "-o", str(out), "--quiet"], out, reason, capsys)
    assert blocker.read_text() == "x"


def test_a_read_only_file_system_is_said_in_words(tmp_path, plan, monkeypatch, capsys):
    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr("designer.outputs.export.tempfile.mkdtemp", read_only)
    out = tmp_path / "out"
    refused(["solve", str(plan), "-o", str(out), "--quiet"], out, f"Read-only file system ({tmp_path})", capsys)


def test_a_folder_that_is_not_an_earlier_run_is_never_replaced(tmp_path, plan, capsys):
    """A run replaces its folder whole, so `-o` at a project folder (here: a planner's notes) is refused,
    and the folder is untouched."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("mine")
    refused(["solve", str(plan), "-o", str(project), "--quiet"], project,
            "it holds files but no earlier run's design.json or sweep.csv", capsys)
    refused(["sweep", str(plan), "--vary", "budget_usd=1e6", "-o", str(project), "--quiet"], project,
            "it holds files but no earlier run's design.json or sweep.csv", capsys)
    assert [p.name for p in project.iterdir()] == ["notes.txt"]


def test_an_empty_folder_is_taken(tmp_path, capsys):
    out = tmp_path / "empty"
    out.mkdir()
    path = write_workbook(tmp_path / "plan.xlsx", tables(32))
    assert cli.main(["solve", str(path), "-o", str(out), "--quiet"]) == cli.EXIT_OK
    assert (out / "design.json").is_file()


def test_sweep_and_bench_check_their_folder_first(tmp_path, plan, monkeypatch, capsys):
    monkeypatch.setattr("designer.tools.bench.parts.main", lambda *a: pytest.fail("benched before checking"))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    refused(["sweep", str(plan), "--vary", "budget_usd=1e6", "-o", str(blocker)], blocker,
            "a file of that name is in the way", capsys)
    refused(["bench", "-o", str(blocker)], blocker, "a file of that name is in the way", capsys)


def test_a_workbook_that_cannot_be_read_is_an_input_error(tmp_path, monkeypatch, capsys):
    """Exit 2 with the file-level reason (not exit 1 with a Python exception)."""
    path = write_workbook(tmp_path / "plan.xlsx", tables(32))
    if os.geteuid() == 0:  # root reads anything: the reader meets the error it would meet
        def denied(*args, **kwargs):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))

        monkeypatch.setattr("designer.inputs.reader.open", denied, raising=False)
    else:
        path.chmod(0)
    for argv in (["validate", str(path)], ["solve", str(path), "-o", str(tmp_path / "out")]):
        assert cli.main(argv) == cli.EXIT_INPUT
        err = capsys.readouterr().err
        assert "cannot read the file: Permission denied" in err
        assert not any(name in err for name in PYTHON_ERRORS)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("reader", ["head -n 1", "true"], ids=["head", "closed at once"])
def test_a_closed_pipe_ends_quietly(reader):
    """`designer catalog | head -n 1`, and a reader gone before the first line: exit 0, nothing on stderr."""
    shell = f"set -o pipefail; {sys.executable} -m designer.cli catalog | {reader} > /dev/null"
    done = subprocess.run(["bash", "-c", shell], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and done.stderr == ""


def test_notices_are_printed_grouped_unless_quiet(tmp_path, capsys):
    """validate and solve list what was read as, ignored, taken from the catalog and found implausible,
    one line each on stderr, in that order; solve --quiet does not."""
    book = tables(32)
    book["sites"][0].update(notes="a planner's note", power_mw="5 MW", pue=3.5)
    book["_scratch"] = [{"a": 1}]
    book["node_types"] = [NODE]
    path = write_workbook(tmp_path / "plan.xlsx", book)
    for argv in (["validate", str(path)], ["solve", str(path), "-o", str(tmp_path / "out")]):
        assert cli.main(argv) == cli.EXIT_OK
        lines = [x for x in capsys.readouterr().err.splitlines() if not x.startswith("  ..")]
        labels = [x.split(": ", 1)[0] for x in lines]
        assert labels == sorted(labels, key=["read as", "ignored", "catalog", "warning"].index), lines
        assert {"read as", "ignored", "catalog", "warning"} == set(labels)
        assert "read as: sites!B2 power_mw: read '5 MW' as 5" in lines
        assert "ignored: sites!I1 notes: column ignored (a notes column)" in lines
        assert "catalog: node_types: the workbook's 1 row replaces the default table of 4" in lines
    assert cli.main(["solve", str(path), "-o", str(tmp_path / "out"), "--quiet"]) == cli.EXIT_OK
    assert capsys.readouterr().err == ""


TEXT = ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "plain", "a-b"]


def test_spreadsheet_files_keep_formula_text_as_text_and_numbers_as_numbers(tmp_path):
    frame = pd.DataFrame({"text": TEXT, "number": [-5, -0.5, 0, 1, 2, 3, 4, 5]})
    write_frame_csv(frame.rename(columns={"text": "=header"}), tmp_path / "t.csv")
    with open(tmp_path / "t.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["'=header", "number"]
    assert [r[0] for r in rows[1:]] == ["'" + t for t in TEXT[:6]] + TEXT[6:]
    assert [float(r[1]) for r in rows[1:3]] == [-5, -0.5]
    write_frames_xlsx({"s": frame}, tmp_path / "t.xlsx")
    sheet = openpyxl.load_workbook(tmp_path / "t.xlsx")["s"]
    texts, numbers = [c for c in sheet["A"][1:]], [c for c in sheet["B"][1:]]
    assert [c.value for c in texts] == TEXT  # openpyxl writes through lxml, which keeps a CR as &#13;
    assert all(c.data_type == "s" for c in texts)
    assert all(c.quotePrefix for c in texts[:6]) and not any(c.quotePrefix for c in texts[6:])
    assert [c.value for c in numbers[:2]] == [-5, -0.5] and all(c.data_type == "n" for c in numbers)


HOSTILE = ['=HYPERLINK("http://evil.example/","x")', "@SUM(A1)"]


def hostile_workbook(tmp_path: Path) -> Path:
    """Two sites named like formulas, typed as text (as Excel keeps '=... after an apostrophe)."""
    route = {"site_a": HOSTILE[0], "site_b": HOSTILE[1], "distance_km": 10, "fiber_pairs": 40,
             "fiber_cost_usd_per_pair_km": 10}
    book = tables(256, sites=[site(name) for name in HOSTILE], routes=[route], switches=(SW64, SHALLOW, DEEP))
    path = write_workbook(tmp_path / "plan.xlsx", book)
    typed = openpyxl.load_workbook(path)
    for sheet in typed.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                if cell.data_type == "f":
                    cell.data_type = "s"
    typed.save(path)
    return path


def check_xlsx(path: Path) -> set:
    """No cell is a formula; returns the hostile names found, as typed."""
    seen = set()
    for sheet in openpyxl.load_workbook(path).worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                assert cell.data_type != "f", f"{path.name} {sheet.title}!{cell.coordinate}: {cell.value}"
                if isinstance(cell.value, str) and cell.value.startswith(("=", "@")):
                    assert cell.quotePrefix, f"{path.name} {sheet.title}!{cell.coordinate}"
                    seen.add(cell.value)
    return seen


def check_csv(path: Path) -> None:
    """No cell starts like a formula, but a negative number, which stays a number."""
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.reader(handle):
            for value in row:
                assert not value.startswith(("=", "+", "@", "\t", "\r")), (path.name, value)
                if value.startswith("-"):
                    float(value)


def test_no_output_holds_a_formula_from_a_hostile_name(tmp_path):
    """design.xlsx, bom.csv, cabling.csv of a solve and sweep.csv, sweep.xlsx of a sweep: no formula, the
    names read back as typed; report.html escapes them."""
    path = hostile_workbook(tmp_path)
    out = tmp_path / "out"
    assert cli.main(["solve", str(path), "-o", str(out), "--quiet"]) == cli.EXIT_OK
    assert set(HOSTILE) <= check_xlsx(out / "design.xlsx")
    for name in ("bom.csv", "cabling.csv", "optics_per_device.csv"):
        check_csv(out / name)
    html = (out / "report.html").read_text()
    assert "HYPERLINK(&#34;http://evil.example/&#34;" in html and 'href="http://evil' not in html
    swept = tmp_path / "sweep"
    argv = ["sweep", str(path), "--vary", "budget_usd=none", "-o", str(swept), "--workers", "1", "--quiet"]
    assert cli.main(argv) == cli.EXIT_OK
    check_csv(swept / "sweep.csv")
    check_xlsx(swept / "sweep.xlsx")
    with open(swept / "sweep.csv", newline="", encoding="utf-8") as handle:
        [row] = list(csv.DictReader(handle))
    assert row["sites_opened"].startswith(("'=", "'@"))
