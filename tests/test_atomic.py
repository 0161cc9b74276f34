"""Atomic outputs: a run leaves its output folder exactly as it was, or exactly as the new run wrote it, for
every failure of every step of the writing (fault injection), Ctrl-C included; no staging folder is left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from designer import cli
from designer.inputs.writer import write_workbook
from test_model import tables

ROOT = Path(__file__).resolve().parents[1]


def snapshot(folder: Path) -> dict:
    """Every file under ``folder`` (and every empty folder) with its bytes."""
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.parent.iterdir() if p.name.startswith(f".{folder.name}.")]


@pytest.fixture
def earlier(tmp_path):
    """An output folder holding an earlier run's design (32 GPUs), and a different workbook (64 GPUs)."""
    out = tmp_path / "out"
    first = write_workbook(tmp_path / "first.xlsx", tables(32))
    assert cli.main(["solve", str(first), "-o", str(out), "--quiet"]) == cli.EXIT_OK
    return out, write_workbook(tmp_path / "second.xlsx", tables(64))


def test_a_new_run_replaces_the_folder_whole(earlier, tmp_path):
    """report.md is now a folder and a planner's note lies beside the files: the new run's folder holds
    exactly its own files (the output folder belongs to the tool)."""
    out, second = earlier
    (out / "report.md").unlink()
    (out / "report.md").mkdir()
    (out / "notes.txt").write_text("mine")
    assert cli.main(["solve", str(second), "-o", str(out), "--quiet"]) == cli.EXIT_OK
    names = {p.name for p in out.iterdir()}
    assert names == {"design.json", "bom.csv", "design.xlsx", "report.html", "report.md", "cabling.csv",
                     "fabric.graphml"}
    assert (out / "report.md").is_file()
    assert json.loads((out / "design.json").read_text())["totals"]["gpus"] == 64
    assert not leftovers(out)


def test_an_infeasible_run_leaves_no_stale_design(earlier, tmp_path):
    out, _ = earlier
    infeasible = write_workbook(tmp_path / "none.xlsx", tables(64, budget_usd=1_000))
    assert cli.main(["solve", str(infeasible), "-o", str(out), "--quiet"]) == cli.EXIT_INFEASIBLE
    assert {p.name for p in out.iterdir()} == {"design.json", "report.html", "report.md"}
    assert not leftovers(out)


WRITERS = ["designer.outputs.export.write_json", "designer.outputs.export.write_bom_csv",
           "designer.outputs.export.write_xlsx", "designer.outputs.report.write_reports",
           "designer.outputs.cabling.write_fabric_files"]


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()],
                         ids=["disk full", "ctrl-c"])
@pytest.mark.parametrize("writer", WRITERS, ids=lambda w: w.rsplit(".", 1)[1])
def test_a_failing_writer_leaves_the_folder_as_it_was(earlier, monkeypatch, capsys, writer, error):
    out, second = earlier
    before = snapshot(out)

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(writer, fail)
    code = cli.main(["solve", str(second), "-o", str(out), "--quiet"])
    if isinstance(error, KeyboardInterrupt):
        assert code == cli.EXIT_INTERRUPTED
    else:
        assert code == cli.EXIT_ERROR
        assert f"cannot write the output folder {out}: No space left on device" in capsys.readouterr().err
    assert snapshot(out) == before
    assert not leftovers(out)


@pytest.mark.parametrize("failing_call", [1, 2], ids=["rename aside", "rename into place"])
def test_a_failing_swap_puts_the_old_folder_back(earlier, monkeypatch, capsys, failing_call):
    out, second = earlier
    before = snapshot(out)
    real, calls = os.rename, []

    def rename(src, dst):
        calls.append((src, dst))
        if len(calls) == failing_call:
            raise OSError(13, "Permission denied")
        return real(src, dst)

    monkeypatch.setattr("designer.outputs.export.os.rename", rename)
    assert cli.main(["solve", str(second), "-o", str(out), "--quiet"]) == cli.EXIT_ERROR
    assert "cannot write the output folder" in capsys.readouterr().err
    assert snapshot(out) == before
    assert not [n for n in leftovers(out) if ".stage-" in n]


def test_a_failing_delete_of_the_old_folder_keeps_the_new_one(earlier, monkeypatch):
    out, second = earlier
    monkeypatch.setattr("designer.outputs.export.shutil.rmtree", lambda *a, **k: None)
    assert cli.main(["solve", str(second), "-o", str(out), "--quiet"]) == cli.EXIT_OK
    assert json.loads((out / "design.json").read_text())["totals"]["gpus"] == 64


def test_report_regeneration_keeps_the_design_files(earlier):
    out, _ = earlier
    before = snapshot(out)
    assert cli.main(["report", str(out)]) == cli.EXIT_OK
    after = snapshot(out)
    assert set(after) == set(before)
    assert all(after[k] == before[k] for k in before if not k.startswith("report."))


def test_ctrl_c_during_the_solve_exits_130_and_writes_nothing(tmp_path):
    """SIGINT to a real `designer solve` once HiGHS is running."""
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "designer.cli", "solve", "-o", str(out)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if "solving" in line:
            proc.send_signal(signal.SIGINT)
            break
    assert proc.wait(timeout=120) == cli.EXIT_INTERRUPTED
    assert not out.exists() and not leftovers(out)


def test_the_solver_ctrl_c_handler_ends_with_the_solve(tmp_path):
    """After the solve, Ctrl-C raises KeyboardInterrupt again (HiGHS's handler would swallow it)."""
    path = write_workbook(tmp_path / "plan.xlsx", tables(32))
    assert cli.main(["solve", str(path), "-o", str(tmp_path / "out"), "--quiet"]) == cli.EXIT_OK
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
