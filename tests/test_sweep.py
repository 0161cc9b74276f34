"""Scenario sweeps: the grid, validated variations (a bad value is exit 2 before anything runs), parallel
runs in local processes and on a dask LocalCluster, infeasible scenarios as rows, the Pareto front.

The workbook is the small test catalog of tests/test_diagnose.py: one site, 32 GPUs cost $474,998
(4 nodes on one switch), 64 GPUs need 8 nodes.
"""

from __future__ import annotations

import csv
import json

import openpyxl
import pytest
from test_diagnose import book, site

from designer import cli
from designer.errors import InputError
from designer.inputs.workbook import load_inputs
from designer.inputs.writer import write_workbook
from designer.tools.sweep import apply, grid, non_dominated, parse_vary, sweep

GRID = ["gpus_required=32,64,128", "budget_usd=none,600000"]  # 6 scenarios; 64 and 128 GPUs exceed $600k


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    path = write_workbook(tmp_path_factory.mktemp("sweep") / "small.xlsx",
                          book(32, sites=[site("s1"), site("s2", power_mw=0.2, lat=1.0, lon=2.0)]))
    return load_inputs(path)


def read_csv(path) -> list[dict]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def check_grid(rows: list[dict], out) -> None:
    """The 6 scenarios of GRID, in grid order, with their outcomes and files."""
    assert [r["scenario"] for r in rows] == ["s01", "s02", "s03", "s04", "s05", "s06"]
    by = {(r["gpus_required"], r["budget_usd"]): r for r in rows}
    assert by["32", "none"]["status"] == "optimal" and by["32", "none"]["cost_usd"] == pytest.approx(474_998)
    assert by["32", "600000"]["status"] == "optimal"
    assert by["64", "none"]["gpus"] == 64 and by["128", "none"]["gpus"] == 128
    for gpus in ("64", "128"):
        r = by[gpus, "600000"]
        assert r["status"] == "infeasible" and "above budget_usd $600,000" in r["reason"]
        assert r["diagnosis"].startswith("raise budget_usd by ")
        assert r.get("cost_usd") is None
    table = read_csv(out / "sweep.csv")
    assert [t["scenario"] for t in table] == [r["scenario"] for r in rows]
    assert {"gpus_required", "budget_usd", "status", "cost_usd", "gpus", "worst_latency_us", "power_mw",
            "sites_opened", "most_gpus_cut_off", "mip_gap", "solve_seconds", "reason", "pareto_latency", "pareto_gpus"} <= set(table[0])
    sheet = openpyxl.load_workbook(out / "sweep.xlsx")["scenarios"]
    assert sheet.max_row == 7
    assert (out / "pareto.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for r in rows:
        folder = out / r["scenario"]
        design = json.loads((folder / "design.json").read_text())
        assert design["status"] == r["status"]
        assert (folder / "report.html").is_file() and (folder / "report.md").is_file()
        assert (folder / "bom.csv").is_file() == (r["status"] == "optimal")


def test_sweep_in_local_processes(inputs, tmp_path):
    rows = sweep(inputs, GRID, tmp_path, workers=2, show_progress=False)
    check_grid(rows, tmp_path)
    # cost against GPUs: 32, 64 and 128 GPUs at rising cost are all non-dominated (one of each size)
    front = {r["gpus_required"] for r in rows if r["pareto_gpus"]}
    assert front == {"32", "64", "128"}


def test_sweep_on_a_dask_cluster(inputs, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        rows = sweep(inputs, GRID, tmp_path, dask_address=cluster.scheduler_address, show_progress=False)
    check_grid(rows, tmp_path)


def test_sweep_command_with_site_fields(tmp_path, capsys):
    """A site field varied from the command line; a site short of power is an infeasible row, exit 0."""
    path = write_workbook(tmp_path / "one.xlsx", book(32))
    out = tmp_path / "out"
    code = cli.main(["sweep", str(path), "--vary", "sites.s1.power_mw=0.05,1", "--vary", "max_oversubscription=1,2",
                     "-o", str(out), "--workers", "1"])
    assert code == cli.EXIT_OK
    captured = capsys.readouterr()
    assert "4 scenarios" in captured.out and "4/4 scenarios" in captured.err
    rows = read_csv(out / "sweep.csv")
    assert [r["sites.s1.power_mw"] for r in rows] == ["0.05", "0.05", "1", "1"]
    assert [r["status"] for r in rows] == ["infeasible", "infeasible", "optimal", "optimal"]
    assert "site s1 needs 0.0108 MW more" in rows[0]["diagnosis"]


@pytest.mark.parametrize("vary, expected", [
    (["budget_usd=abc"], "--vary budget_usd: must be a positive number <= 10,000,000,000,000, got 'abc'"),
    (["gpus_required=10.5"], "--vary gpus_required: must be a positive whole number"),
    (["max_oversubscription=0.5"], "--vary max_oversubscription: must be a number >= 1"),
    (["objective=fastest"], "--vary objective: must be one of: min_cost, min_latency"),
    (["budget_usd"], "must be KEY=V1,V2,..."),
    (["budgt_usd=1"], "--vary budgt_usd: unknown project key"),
    (["sites.nowhere.power_mw=3"], "is not a site in the workbook"),
    (["sites.s1.colour=3"], "is not a sites column that can vary"),
    (["sites.s1.status=excluded"], "every site is excluded"),
    (["node_type=n9"], "is not a name in node_types"),
])
def test_a_bad_variation_is_an_input_error(tmp_path, capsys, vary, expected):
    path = write_workbook(tmp_path / "one.xlsx", book(32))
    args = ["sweep", str(path), "-o", str(tmp_path / "out")]
    for v in vary:
        args += ["--vary", v]
    assert cli.main(args) == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert expected in err, err
    assert not (tmp_path / "out").exists()


def test_variations_are_typed_by_the_schema(inputs):
    changed = apply(inputs, {"budget_usd": "2.5e6", "gpus_required": "64", "sites.s2.power_mw": "3",
                             "protocols_allowed": "infiniband", "max_fabric_latency_us": "none"})
    assert changed.project["budget_usd"] == 2.5e6 and changed.project["gpus_required"] == 64
    assert changed.project["protocols_allowed"] == ["infiniband"]
    assert changed.project["max_fabric_latency_us"] is None
    assert changed.sites.loc["s2", "power_mw"] == 3.0 and inputs.sites.loc["s2", "power_mw"] == 0.2
    assert inputs.project["gpus_required"] == 32  # the original is untouched
    with pytest.raises(InputError):
        apply(inputs, {"min_sites": "3", "max_sites": "2"})


def test_grid_and_list_values():
    varies = parse_vary(["a=1,2", "protocols_allowed=infiniband,rocev2;infiniband"])
    assert varies == [("a", ["1", "2"]), ("protocols_allowed", ["infiniband,rocev2", "infiniband"])]
    assert grid(varies)[1] == {"a": "1", "protocols_allowed": "infiniband"}
    assert len(grid(varies)) == 4


def test_non_dominated():
    rows = [{"scenario": "a", "cost_usd": 1, "lat": 3}, {"scenario": "b", "cost_usd": 2, "lat": 1},
            {"scenario": "c", "cost_usd": 2, "lat": 2}, {"scenario": "d", "cost_usd": None, "lat": None},
            {"scenario": "e", "cost_usd": 3, "lat": 4}]
    assert non_dominated(rows, "lat") == {"a", "b"}
    assert non_dominated(rows, "lat", maximize=True) == {"a", "e"}


def test_latency_front_compares_designs_of_the_same_size():
    """A 1,024-GPU design at $20M and 3 µs is not beaten by a 512-GPU one at $10M and 2 µs; a 512-GPU design at
    $11M and 2.5 µs is. The pareto_figure plots cost per GPU, one front per GPU count."""
    rows = [{"scenario": "small", "cost_usd": 10e6, "gpus": 512, "worst_latency_us": 2.0},
            {"scenario": "big", "cost_usd": 20e6, "gpus": 1024, "worst_latency_us": 3.0},
            {"scenario": "worse", "cost_usd": 11e6, "gpus": 512, "worst_latency_us": 2.5}]
    assert non_dominated(rows, "worst_latency_us") == {"small"}
    assert non_dominated(rows, "worst_latency_us", like="gpus") == {"small", "big"}


def test_sweep_csv_figures_are_plain(tmp_path):
    """Counts print as integers, money to the cent, no float noise (1833.6000000000001)."""
    from designer.tools.sweep import write_sweep

    rows = [{"scenario": "s01", "status": "optimal", "cost_usd": 1833.6000000000001, "capex_usd": 1833.6000000000001,
             "gpus": 64, "cost_per_gpu_usd": 1833.6000000000001 / 64, "worst_latency_us": 2.3300000000000001,
             "power_mw": 0.052625000000000005, "sites_open": 2, "sites_opened": "a,b", "mip_gap": 0.0,
             "solve_seconds": 0.12345}]
    write_sweep(rows, [], tmp_path)
    [row] = read_csv(tmp_path / "sweep.csv")
    assert {k: row[k] for k in ("cost_usd", "gpus", "cost_per_gpu_usd", "worst_latency_us", "power_mw", "sites_open",
                                "mip_gap", "solve_seconds")} == {
        "cost_usd": "1833.6", "gpus": "64", "cost_per_gpu_usd": "28.65", "worst_latency_us": "2.33",
        "power_mw": "0.052625", "sites_open": "2", "mip_gap": "0", "solve_seconds": "0.123"}
