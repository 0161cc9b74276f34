"""``designer bench --quick``: a smoke test that it runs and writes sane figures (no timing assertions)."""

from __future__ import annotations

import csv
import math

import pytest

from designer.cli import main
from designer.tools.bench import instances, table


def _number(value: str):
    try:
        return float(value)
    except ValueError:
        return None


@pytest.fixture(scope="module")
def quick_rows(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    assert main(["bench", "--quick", "-o", str(out)]) == 0
    path = out / "bench.csv"
    assert path.exists()
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows and list(rows[0]) == table.CSV_COLUMNS
    return rows


def test_quick_bench_covers_every_part(quick_rows):
    sections = {r["section"] for r in quick_rows}
    assert {"a", "b", "c", "d", "e", "T"} <= sections
    figures = {r["figure"] for r in quick_rows}
    assert "end to end / bare import" in figures
    assert "our solve() call / highspy alone" in figures
    assert "(d) median saving vs greedy" in figures
    assert "(c) designer solve to <= 1% gap, outputs included" in figures


def test_quick_bench_times_the_whole_command_of_its_largest_instance(quick_rows):
    """The targets of the largest instances are stated on the whole ``designer solve`` (outputs included): that run
    found a design within the gap, and it takes longer than its solve() call alone, which it contains."""
    whole = [r for r in quick_rows if r["figure"] == "designer solve to 1% gap, outputs included (wall)"]
    assert [r["instance"] for r in whole] == [instances.QUICK.sizes[-1].name]
    assert whole[0]["note"].startswith(("optimal", "feasible")), whole[0]
    call = next(r for r in quick_rows if r["instance"] == whole[0]["instance"]
                and r["figure"] == "time to 1% gap (solve() call)")
    assert float(whole[0]["value"]) > float(call["value"])


def test_quick_bench_times_are_finite_and_positive(quick_rows):
    times = [r for r in quick_rows if r["unit"] in ("s", "x", "MB")]
    assert times
    for r in times:
        value = _number(r["value"].lstrip(">= "))
        assert value is not None, r
        assert math.isfinite(value), r
        # phases are printed to the millisecond by `designer solve --timings`: a short one reads 0.000
        assert value >= 0 if "phase" in r["figure"] else value > 0, r


def test_quick_bench_savings_are_never_negative(quick_rows):
    savings = [r for r in quick_rows if r["figure"] == "saving vs greedy"]
    assert savings
    for r in savings:
        value = _number(r["value"])
        assert value is not None, r
        assert value >= -1e-7, r


def test_instances_are_deterministic_and_need_several_sites():
    size = instances.Size(4, 8_192, 20)
    first, again = instances.synth_workbook(size), instances.synth_workbook(size)
    assert first == again
    assert len(first["switches"]) == 20
    assert len({s["model"] for s in first["switches"]}) == 20
    job_nodes = size.gpus // 8
    # no site's power feeds the job's nodes alone (before any network power)
    assert all(s["power_mw"] / s["pue"] / 14.3e-3 < job_nodes for s in first["sites"])
    names = {s["name"] for s in first["sites"]}
    assert all(r["site_a"] in names and r["site_b"] in names for r in first["routes"])


def test_quick_bench_runs_every_child_cleanly(quick_rows):
    """No figure of the quick run is an error (a child that could not find its workbook or log, a failed solve):
    the bench's paths are the repository's, whatever folder it is run from."""
    assert instances.DEFAULT_WORKBOOK.exists() and instances.QUICK_WORKBOOK.exists() and instances.ORACLE_PATH.exists()
    failed = [r for r in quick_rows if "error" in r["value"] or "exit" in r["note"]]
    assert not failed, failed


def test_oracle_instances_stay_within_what_the_oracle_sizes():
    from tests.oracle import PLANNER_LENGTHS

    assert instances.ORACLE_SCOPE == PLANNER_LENGTHS


@pytest.mark.parametrize("workbook", ["superpod-h100", "training-moe", 4, 6])
def test_the_bench_greedy_planner_over_the_kept_modes_plans_as_over_every_mode(workbook, tmp_path):
    """(d)'s planner runs over the modes the model data keeps (the rest, matched or beaten at every node count,
    held 26 GB at 32 sites and 50 switch models): its plan costs what the plan over every enumerated mode costs, on
    two one-site examples and the bench's 4- and 6-site oracle instances."""
    from designer.inputs.workbook import load_inputs
    from designer.inputs.writer import write_workbook
    from designer.solve.greedy import greedy_plan
    from designer.tools.bench.children import child_greedy

    if isinstance(workbook, int):
        path = tmp_path / "instance.xlsx"
        write_workbook(path, instances.tiny_workbook(workbook))
    else:
        path = instances.ROOT / "data" / "examples" / f"{workbook}.xlsx"
    kept, every = child_greedy(str(path)), greedy_plan(load_inputs(path))
    assert kept["cost"] is not None and every.cost is not None
    assert kept["cost"] == pytest.approx(every.cost, rel=1e-12)
    assert kept["sites"] == len(every.sites)
