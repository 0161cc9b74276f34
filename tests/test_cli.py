"""The ``designer`` command end to end: examples, the output contract, exit codes, input errors.

The example workbooks are solved once each for the session (tests/conftest.py), in subprocesses started
when this module begins if test_audit has not started them (the quicker tests run meanwhile; the example
tests come last); the output contract is DESIGN.md section 5.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest
from test_model import site, tables, two_sites

from designer import cli
from designer.inputs.schema import TOPOLOGIES
from designer.inputs.writer import write_workbook

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "data" / "examples").glob("*.xlsx"))
SHEETS = ["summary", "sites", "switches", "fabric_links", "links", "bom", "optics_per_device", "power", "cost",
          "constraints", "design_space", "inputs", "input_sites", "input_node_types", "input_switches",
          "input_optics", "solver", "resilience"]
BOM_CATEGORIES = {"nodes", "site", "power", "switches", "optics", "dci_routers", "dci_attachment", "coherent",
                  "amplifiers", "line_system", "fiber", "fiber_plant", "storage_network", "management_network",
                  "dci_optics"}
NUMBER = (int, float)
INT = int
MAYBE = type(None)


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "designer.cli", *args]


def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(command(*args), capture_output=True, text=True, cwd=ROOT, timeout=timeout)


@pytest.fixture(scope="module", autouse=True)
def examples(request):
    """Starts the example solves (tests/conftest.py, shared with test_audit and test_report) before the first
    test of this module when any example test is selected, so the quicker tests run meanwhile."""
    wanted = any(item.module is request.module and "example" in item.name for item in request.session.items)
    return request.getfixturevalue("example_runs") if wanted else None


# --- the output contract (DESIGN.md section 5) -------------------------------------------------------

def check_fields(record: dict, spec: dict, where: str) -> None:
    for key, kinds in spec.items():
        assert key in record, f"{where}: missing key {key!r}"
        value = record[key]
        assert isinstance(value, kinds) and not (isinstance(value, bool) and bool not in _tuple(kinds)), (
            f"{where}.{key}: {value!r} is not {kinds}")


def _tuple(kinds) -> tuple:
    return kinds if isinstance(kinds, tuple) else (kinds,)


TOP = {"status": str, "mip_gap": NUMBER + (MAYBE,), "solve_seconds": NUMBER, "objective_usd": NUMBER,
       "totals": dict, "sites": list, "links": list, "bom": list}
TOTALS = {"gpus": INT, "nodes": INT, "capex_usd": NUMBER, "power_mw": NUMBER, "coherent_ports": INT}
SITE = {"name": str, "open": bool, "nodes": INT, "gpus": INT, "topology": (str, MAYBE), "protocol": (str, MAYBE),
        "link_gbps": (INT, MAYBE), "oversubscription": NUMBER + (MAYBE,), "tiers": list, "power_mw": NUMBER,
        "capex_usd": NUMBER, "fabric_latency_us": NUMBER + (MAYBE,)}
OPEN_SITE = {"topology": str, "protocol": str, "link_gbps": INT, "oversubscription": NUMBER,
             "fabric_latency_us": NUMBER}
TIER = {"tier": str, "model": str, "count": INT, "port_gbps": (INT, MAYBE)}
LINK = {"site_a": str, "site_b": str, "coherent_model": str, "wavelengths": INT, "coherent_ports": INT,
        "fiber_pairs": INT, "amplifiers": INT, "capacity_gbps": NUMBER, "rtt_ms": NUMBER}
BOM = {"site": str, "category": str, "item": str, "quantity": NUMBER, "unit_price_usd": NUMBER,
       "extended_usd": NUMBER, "unit_power_w": NUMBER, "total_power_w": NUMBER}


def check_contract(design: dict) -> None:
    """Every key DESIGN.md section 5 lists, with its type, and the invariants between them."""
    check_fields(design, TOP, "design")
    assert design["status"] in ("optimal", "feasible", "infeasible", "no_solution")
    check_fields(design["totals"], TOTALS, "totals")
    for s in design["sites"]:
        check_fields(s, SITE, f"sites[{s.get('name')}]")
        if s["open"]:
            check_fields(s, OPEN_SITE, f"sites[{s['name']}]")
            assert s["topology"] in TOPOLOGIES
            assert s["nodes"] > 0 and s["gpus"] > 0 and s["tiers"]
        for t in s["tiers"]:
            check_fields(t, TIER, f"sites[{s['name']}].tiers")
            assert t["tier"] in ("leaf", "spine", "core", "dci") and t["count"] > 0
    for link in design["links"]:
        check_fields(link, LINK, "links")
        assert link["coherent_ports"] == 2 * link["wavelengths"]
    for line in design["bom"]:
        check_fields(line, BOM, "bom")
        assert line["category"] in BOM_CATEGORIES
        assert line["extended_usd"] == pytest.approx(line["quantity"] * line["unit_price_usd"])
        assert line["total_power_w"] == pytest.approx(line["quantity"] * line["unit_power_w"])
    totals = design["totals"]
    assert sum(line["extended_usd"] for line in design["bom"]) == pytest.approx(totals["capex_usd"], rel=1e-12)
    assert totals["gpus"] == sum(s["gpus"] for s in design["sites"])
    assert totals["nodes"] == sum(s["nodes"] for s in design["sites"])
    assert totals["coherent_ports"] == sum(link["coherent_ports"] for link in design["links"])
    assert totals["power_mw"] == pytest.approx(sum(s["power_mw"] for s in design["sites"]))
    if design["status"] == "optimal":
        assert design["mip_gap"] is not None and design["mip_gap"] <= design["solver"]["mip_gap_target"] + 1e-12


# --------------------------------------------------------------------------------------------------
# Exit codes and messages, in process (cli.main) and as a subprocess
# --------------------------------------------------------------------------------------------------

def book_with(change) -> dict:
    book = tables(32)
    change(book)
    return book


def _set(sheet: str, key, value, row: int = 0):
    def change(book):
        target = book[sheet] if isinstance(book[sheet], dict) else book[sheet][row]
        target[key] = value
    return change


def _add(sheet: str, value):
    def change(book):
        book[sheet] = value if sheet not in book else book[sheet] + value
    return change


def _drop(sheet: str, key):
    def change(book):
        book[sheet].pop(key)
    return change


def _workload(book):
    book["workload"] = {"model_params_billion": 1, "step_compute_ms": 100, "max_comm_fraction": 1.5}


def _sites(book):
    book["sites"] = [site("s1"), site("s1")]


def _routes(book):
    book["routes"] = [dict(site_a="s1", site_b="zz", distance_km=10, fiber_pairs=1, fiber_cost_usd_per_pair_km=1)]


def _several(book):
    book["sites"][0]["power_mw"] = "abc"
    book["project"]["node_type"] = "nX"


INVALID = {
    "type": (_set("sites", "power_mw", "abc"), ["sites!B2 power_mw: must be a positive number <= 100,000, got 'abc'"]),
    "range": (_set("sites", "pue", 0.9), ["sites!C2 pue: must be a number >= 1 and <= 5, got 0.9"]),
    "blank": (_set("sites", "pue", None), ["sites!C2 pue: is blank but required"]),
    "enum": (_set("project", "objective", "fastest"), ["project!B4 objective: must be one of: min_cost, min_latency"]),
    "reference": (_set("project", "node_type", "nX"), ["project!B3 node_type: is not a name in node_types, got 'nX'"]),
    "missing key": (_drop("project", "gpus_required"), ["project gpus_required: required key is missing"]),
    "unknown sheet": (_add("rutes", []), ["rutes: unknown sheet (fix: did you mean 'routes'?)"]),
    "unknown column": (_set("sites", "powr_mw", 3), ["sites!I1: unknown column, got 'powr_mw'"]),
    "unknown key": (_set("project", "max_site", 2), ["key: unknown key, got 'max_site'"]),
    "duplicate": (_sites, ["sites!A3 name: duplicate name (first on row 2), got 's1'"]),
    "route site": (_routes, ["routes!B2 site_b: is not a name in sites, got 'zz'"]),
    "workload": (_workload, ["workload!B4 max_comm_fraction: must be a positive number < 1, got 1.5"]),
    "port modes": (_set("switches", "port_modes", "sixty-four"), ["switches!C2 port_modes: cannot read port mode"]),
    "several": (_several, ["error: 2 problem(s) in the input:", "sites!B2 power_mw", "project!B3 node_type"]),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_invalid_workbook_exits_2_naming_the_cell(tmp_path, capsys, case):
    change, expected = INVALID[case]
    path = write_workbook(tmp_path / "bad.xlsx", book_with(change))
    out = tmp_path / "out"
    for argv in (["validate", str(path)], ["solve", str(path), "-o", str(out)]):
        assert cli.main(argv) == cli.EXIT_INPUT, argv
        err = capsys.readouterr().err
        for text in expected:
            assert text in err, (argv, err)
        assert "Traceback" not in err
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [path]  # no staging folder left behind either


def test_unreadable_and_missing_workbooks(tmp_path, capsys):
    fake = tmp_path / "fake.xlsx"
    fake.write_text("name,power_mw\nalpha,5\n")
    for path, text in ((fake, "fake.xlsx is not a readable .xlsx workbook"),
                       (tmp_path / "nowhere.xlsx", "file not found")):
        for argv in (["validate", str(path)], ["solve", str(path), "-o", str(tmp_path / "out")]):
            assert cli.main(argv) == cli.EXIT_INPUT
            err = capsys.readouterr().err
            assert text in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_invalid_workbook_subprocess(tmp_path):
    """The real exit code and stderr, from a separate process."""
    path = write_workbook(tmp_path / "bad.xlsx", book_with(_set("sites", "power_mw", "abc")))
    out = tmp_path / "out"
    for args in (("validate", str(path)), ("solve", str(path), "-o", str(out))):
        result = run(*args)
        assert result.returncode == 2
        assert "sites!B2 power_mw: must be a positive number <= 100,000, got 'abc'" in result.stderr
        assert "Traceback" not in result.stderr and result.stdout == ""
    assert not out.exists()


def test_debug_shows_the_traceback(tmp_path, capsys):
    path = write_workbook(tmp_path / "bad.xlsx", book_with(_set("sites", "power_mw", "abc")))
    assert cli.main(["validate", str(path), "--debug"]) == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert "Traceback" in err and "sites!B2 power_mw" in err


def test_solve_writes_the_outputs(tmp_path, capsys, monkeypatch):
    """Default output folder reports/<workbook stem>/ (here under a temporary reports/)."""
    monkeypatch.setattr(cli, "REPORTS", tmp_path / "reports")
    path = write_workbook(tmp_path / "tiny.xlsx", tables(32))
    assert cli.main(["solve", str(path)]) == cli.EXIT_OK
    stdout = capsys.readouterr().out
    out = tmp_path / "reports" / "tiny"
    assert {"design.json", "bom.csv", "design.xlsx"} <= {p.name for p in out.iterdir()}
    design = json.loads((out / "design.json").read_text())
    check_contract(design)
    assert design["status"] == "optimal" and design["totals"]["capex_usd"] == pytest.approx(474_998)
    assert "design tiny: optimal" in stdout and "32 GPUs on 4 nodes at 1 site(s)" in stdout
    assert [p.name for p in (tmp_path / "reports").iterdir()] == ["tiny"]  # no staging folder left


def test_quiet_prints_nothing(tmp_path, capsys):
    path = write_workbook(tmp_path / "tiny.xlsx", tables(32))
    assert cli.main(["solve", str(path), "-o", str(tmp_path / "out"), "--quiet"]) == cli.EXIT_OK
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    assert (tmp_path / "out" / "design.json").is_file()


def test_two_site_design_through_the_cli(tmp_path, capsys):
    path = write_workbook(tmp_path / "pair.xlsx", two_sites())
    assert cli.main(["solve", str(path), "-o", str(tmp_path / "out")]) == cli.EXIT_OK
    stdout = capsys.readouterr().out
    design = json.loads((tmp_path / "out" / "design.json").read_text())
    check_contract(design)
    assert design["totals"]["capex_usd"] == pytest.approx(1_177_250)  # tests/test_model.py test_two_sites_forced_by_power
    assert ("a <-> b: 4 wavelengths of zr400 (8 modules, 1.6 Tb/s) on 2 fiber pair(s), 4 amplifiers, RTT 0.980 ms"
            in stdout)


def test_infeasible_exits_3_with_the_reason(tmp_path):
    """Budget below the $474,998 minimum of the 4-node single-switch design (tests/test_model.py)."""
    path = write_workbook(tmp_path / "poor.xlsx", tables(32, budget_usd=400_000))
    result = run("solve", str(path), "-o", str(tmp_path / "out"))
    assert result.returncode == 3, result.stderr
    assert "infeasible: the minimum cost is $474,998, above budget_usd $400,000" in result.stderr
    assert "Traceback" not in result.stderr
    if (tmp_path / "out" / "design.json").exists():  # an infeasible run may record its diagnosis
        assert json.loads((tmp_path / "out" / "design.json").read_text())["status"] == "infeasible"


def test_infeasible_rerun_leaves_no_files_of_the_earlier_design(tmp_path, capsys):
    """Solved, then re-run infeasible into the same folder: the folder holds what the second run wrote,
    no bill of materials, cabling or graph of a design that design.json no longer describes."""
    out = tmp_path / "out"
    path = write_workbook(tmp_path / "plan.xlsx", tables(32))
    assert cli.main(["solve", str(path), "-o", str(out), "--quiet"]) == cli.EXIT_OK
    path = write_workbook(tmp_path / "plan.xlsx", tables(32, budget_usd=400_000))
    assert cli.main(["solve", str(path), "-o", str(out), "--quiet"]) == cli.EXIT_INFEASIBLE
    err = capsys.readouterr().err
    written = set(re.search(r"wrote (.+) to ", err).group(1).split(", "))
    assert json.loads((out / "design.json").read_text())["status"] == "infeasible"
    assert {p.name for p in out.iterdir()} == written


def test_no_solution_within_the_limits_exits_4(tmp_path, capsys, monkeypatch):
    """A millisecond's time limit stops HiGHS before it holds any design, the greedy planner having none
    to start from (with one, the solve returns it: tests/test_start.py); the modes are prepared and the model
    built here whatever the limit (a limit that runs out there: tests/test_start.py)."""
    from designer.solve import greedy, run, start

    monkeypatch.setattr(start, "greedy_plan", lambda *_args, **_kw: greedy.Greedy(None, reason="none"))
    monkeypatch.setattr(run, "within", lambda _clock, _stage, make, *args, **kw: make(*args, **kw))
    path = write_workbook(tmp_path / "pair.xlsx", two_sites())
    assert cli.main(["solve", str(path), "-o", str(tmp_path / "out"), "--time-limit", "0.001"]) == cli.EXIT_NO_SOLUTION
    err = capsys.readouterr().err
    assert "no solution: HiGHS found no design within the limits" in err and "Traceback" not in err


def test_other_failures_exit_1(tmp_path, capsys):
    """An output path that is a file, not a folder: exit 1, a one-line error, no traceback."""
    path = write_workbook(tmp_path / "tiny.xlsx", tables(32))
    blocker = tmp_path / "out"
    blocker.write_text("not a folder")
    assert cli.main(["solve", str(path), "-o", str(blocker), "--quiet"]) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
    assert blocker.read_text() == "not a folder"


def test_failed_solve_keeps_the_previous_outputs(tmp_path, capsys):
    """Atomic output: an invalid re-run leaves the earlier design untouched."""
    good = write_workbook(tmp_path / "plan.xlsx", tables(32))
    out = tmp_path / "out"
    assert cli.main(["solve", str(good), "-o", str(out), "--quiet"]) == cli.EXIT_OK
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    bad = write_workbook(tmp_path / "plan.xlsx", book_with(_set("sites", "power_mw", "abc")))
    assert cli.main(["solve", str(bad), "-o", str(out), "--quiet"]) == cli.EXIT_INPUT
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    capsys.readouterr()


# --------------------------------------------------------------------------------------------------
# help, template, catalog
# --------------------------------------------------------------------------------------------------

def test_help_imports_neither_pyomo_nor_pandas():
    code = ("import sys\n"
            "from designer.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n"
            "for sub in ('solve', 'validate', 'template', 'catalog'):\n"
            "    try:\n        main([sub, '--help'])\n    except SystemExit as e:\n        assert e.code == 0\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('pyomo', 'pandas', 'numpy', 'highspy'))\n"
            "assert not heavy, heavy\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "usage: designer" in result.stdout
    for sub in ("solve", "validate", "template", "catalog"):
        assert sub in result.stdout


def test_help_lists_the_solve_options():
    result = run("solve", "--help", timeout=60)
    assert result.returncode == 0
    for option in ("-o", "--time-limit", "--mip-gap", "--threads", "--quiet", "--debug"):
        assert option in result.stdout


def test_template_then_validate(tmp_path):
    path = tmp_path / "plan.xlsx"
    result = run("template", str(path), timeout=60)
    assert result.returncode == 0 and path.is_file(), result.stderr
    blank = run("validate", str(path), timeout=60)
    assert blank.returncode == 2
    assert "gpus_required" in blank.stderr and "node_type" in blank.stderr and "Traceback" not in blank.stderr
    book = openpyxl.load_workbook(path)
    keys = {book["project"].cell(row, 1).value: row for row in range(2, book["project"].max_row + 1)}
    book["project"].cell(keys["gpus_required"], 2).value = 1024
    book["project"].cell(keys["node_type"], 2).value = "DGX H100"
    header = [c.value for c in book["sites"][1]]
    row = site("here")
    book["sites"].append([row.get(column) for column in header])
    book.save(path)
    filled = run("validate", str(path), timeout=60)
    assert filled.returncode == 0, filled.stderr
    assert "valid (1 sites, 0 routes, 1,024 GPUs of DGX H100)" in filled.stdout


def test_catalog_prints_the_tables(capsys):
    assert cli.main(["catalog"]) == cli.EXIT_OK
    out = capsys.readouterr().out
    for table in ("node_types", "switches", "optics", "coherent", "amplifiers", "protocols"):
        assert f"# {table}" in out
    for item in ("DGX H100", "QM9700", "Q3400", "400ZR", "infiniband", "rocev2"):
        assert item in out
    assert "estimates" in out
    assert cli.main(["catalog", "switches"]) == cli.EXIT_OK
    out = capsys.readouterr().out
    assert "# switches" in out and "# optics" not in out and "QM9700" in out
    assert cli.main(["catalog", "routers"]) == cli.EXIT_INPUT
    assert "no catalog table 'routers'" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------
# The examples (last, so that the tests above run while the solves started with this module go on)
# --------------------------------------------------------------------------------------------------

EXAMPLE_STEMS = [p.stem for p in EXAMPLES]


def test_examples_are_there():
    assert {"default", "superpod-h100", "scale-across"} <= set(EXAMPLE_STEMS)
    assert cli.DEFAULT_WORKBOOK == ROOT / "data" / "examples" / "default.xlsx"


@pytest.mark.parametrize("stem", EXAMPLE_STEMS)
def test_example_solves_and_meets_the_contract(examples, stem):
    design, out = examples.solved(stem)
    result = examples.get(stem)
    assert design["status"] in ("optimal", "feasible")
    check_contract(design)
    gpus_required = design["inputs"]["project"]["gpus_required"]
    assert design["totals"]["gpus"] >= gpus_required
    assert f"design {design['name']}: {design['status']}" in result.stdout
    assert f"to {out}" in result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("stem", EXAMPLE_STEMS)
def test_example_bom_csv_and_workbook(examples, stem):
    design, out = examples.solved(stem)
    with (out / "bom.csv").open(newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == [*BOM, "spare_of", "basis"]
        rows = list(reader)
    assert len(rows) == len(design["bom"]) + len(design["spares"]) and design["spares"]
    spares = [r for r in rows if r["category"] == "spares"]
    assert sum(float(r["extended_usd"]) for r in rows if r not in spares) == pytest.approx(
        design["totals"]["capex_usd"], rel=1e-9)
    assert sum(float(r["extended_usd"]) for r in spares) == pytest.approx(design["totals"]["spares_usd"], rel=1e-9)
    book = openpyxl.load_workbook(out / "design.xlsx", read_only=True)
    names = book.sheetnames
    assert [n for n in names if n in SHEETS] == SHEETS, names
    bom = list(book["bom"].iter_rows(values_only=True))
    column = bom[0].index("extended_usd")
    lines = [r for r in bom[1:] if r[0] not in ("total capex", "total with spares")]
    assert sum(r[column] for r in lines) == pytest.approx(design["totals"]["capex_with_spares_usd"], rel=1e-9)
    assert [r[column] for r in bom[len(lines) + 1:]] == pytest.approx(
        [design["totals"]["capex_usd"], design["totals"]["capex_with_spares_usd"]], rel=1e-12)
    summary = {k: v for k, v in book["summary"].iter_rows(min_row=2, values_only=True)}
    assert summary["status"] == design["status"]


def test_example_superpod_h100_matches_the_reference(examples):
    """DGX SuperPOD H100 4 SU: 127 nodes -> 32 leaf and 16 spine QM9700."""
    design, _ = examples.solved("superpod-h100")
    assert design["status"] == "optimal"
    [s] = [s for s in design["sites"] if s["open"]]
    assert (s["nodes"], s["topology"]) == (127, "rail_optimized")
    assert {t["tier"]: (t["model"], t["count"]) for t in s["tiers"]} == {
        "leaf": ("QM9700", 32), "spine": ("QM9700", 16)}


def test_example_default_is_multi_site(examples):
    """The embedded default: more than one site by power, coherent links between them, the workload estimate."""
    design, _ = examples.solved("default")
    assert design["totals"]["sites_open"] >= 2 and design["links"]
    assert design["workload"] is not None and design["workload"]["comm_fraction"] <= design["workload"]["limit"]
    assert design["totals"]["gpus"] >= 50_000


def test_the_console_script_freezes_what_is_left_after_the_command(monkeypatch):
    """``designer`` (pyproject's script) is cli.entry: main()'s exit code, then gc.freeze, so the interpreter's exit
    does not walk the command's objects again; main() itself, which the tests call, leaves the collector alone."""
    import gc
    import tomllib

    from designer import cli

    project = tomllib.loads((Path(cli.__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["designer"] == "designer.cli:entry"
    frozen = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    monkeypatch.setattr(cli, "main", lambda: cli.EXIT_INFEASIBLE)
    assert cli.entry() == cli.EXIT_INFEASIBLE and frozen == [1]
