"""Values a real plan lives in: the notations planners type, the range of every numeric field (stated in the
schema, the template and the errors), HiGHS's terminations said for what they are, and workbooks solved at the
extremes of the ranges: each exits 0, or 3 with its reason, never 1 (a crash) or 4 (a limit)."""

from __future__ import annotations

import contextlib
import io
import json
import math

import openpyxl
import pyomo.environ as pyo
import pytest
from pyomo.contrib.solver.common.results import TerminationCondition as TC
from test_model import AMP, DAC, DEEP, IB, NODE, SR, SW64, ZR, site, tables, two_sites

from designer import cli
from designer.errors import InputError
from designer.inputs.catalog import MAX_PORT_GBPS, MAX_PORTS, port_modes
from designer.inputs.cells import fix_for, typed_value
from designer.inputs.schema import SHEETS
from designer.inputs.template import write_template
from designer.inputs.workbook import load_inputs
from designer.inputs.writer import write_workbook
from designer.solve.highs import SolveOptions, outcome_status, run_highs


def field(sheet: str, column: str):
    return SHEETS[sheet].field(column)


def read(sheet: str, column: str, raw):
    """(value, problems, notices) of one cell typed into ``sheet!B2``."""
    problems, notices = [], []
    value = typed_value(field(sheet, column), raw, sheet, "B2", problems, notices)
    return value, [str(p) for p in problems], [str(n) for n in notices]


# --- notations -------------------------------------------------------------------------------

READ = [
    ("project", "dci_ratio", "25%", 0.25, "0.25"),
    ("project", "dci_ratio", "12.5 %", 0.125, "0.125"),
    ("workload", "max_comm_fraction", "20%", 0.2, "0.2"),
    ("protocols", "efficiency", "95%", 0.95, "0.95"),
    ("project", "max_oversubscription", "2:1", 2.0, "2"),
    ("project", "max_oversubscription", "3 : 2", 1.5, "1.5"),
    ("project", "gpus_required", "4,000", 4000, "4000"),
    ("project", "budget_usd", "$20,000,000", 20_000_000.0, "20000000"),
    ("project", "budget_usd", "20,000,000 USD", 20_000_000.0, "20000000"),
    ("sites", "energy_usd_per_mwh", "$60/MWh", 60.0, "60"),
    ("sites", "energy_usd_per_mwh", "60 USD/MWh", 60.0, "60"),
    ("routes", "distance_km", "2 km", 2.0, "2"),
    ("sites", "power_mw", "50 MW", 50.0, "50"),
    ("sites", "power_mw", "1,234.5MW", 1234.5, "1234.5"),
    ("protocols", "switch_family", "InfiniBand", "infiniband", "'infiniband'"),
    ("project", "objective", "Min Cost", "min_cost", "'min_cost'"),
    ("sites", "status", " Required ", "required", "'required'"),
    ("protocols", "lossless", "Yes", True, "true"),
    ("project", "topologies_allowed", "Leaf Spine, RAIL_ONLY", ["leaf_spine", "rail_only"],
     "'leaf_spine,rail_only'"),
]


@pytest.mark.parametrize("sheet, column, typed, value, shown", READ)
def test_a_notation_is_read_and_the_reading_echoed(sheet, column, typed, value, shown):
    got, problems, notices = read(sheet, column, typed)
    assert (got, type(got), problems) == (value, type(value), [])
    assert notices == [f"{sheet}!B2 {column}: read {typed!r} as {shown}"]


@pytest.mark.parametrize("sheet, column, raw, value", [
    ("sites", "power_mw", "50", 50.0), ("sites", "power_mw", 50, 50.0), ("sites", "power_mw", " 1e3 ", 1000.0),
    ("project", "gpus_required", 4000.0, 4000), ("protocols", "lossless", "true", True),
    ("protocols", "lossless", True, True), ("sites", "status", "required", "required"),
    ("project", "topologies_allowed", "leaf_spine, rail_only", ["leaf_spine", "rail_only"]),
])
def test_the_plain_form_is_read_without_a_notice(sheet, column, raw, value):
    """A number cell, a plain decimal (as the default catalog's CSVs hold them) and a canonical choice."""
    assert read(sheet, column, raw) == (value, [], [])


def rejected(sheet, column, typed, message, fix) -> str:
    return f"{sheet}!B2 {column}: {message}, got {typed!r} (fix: {fix})"


REFUSED = [
    ("sites", "power_mw", "50k", "has the unit or suffix 'k', but power_mw is in MW",
     "convert to MW and enter the number alone or with 'MW', e.g. 50"),
    ("project", "budget_usd", "$20M", "has the unit or suffix 'M', but budget_usd is in USD",
     "convert to USD and enter the number alone or with 'USD', e.g. 50000000"),
    ("routes", "distance_km", "2 miles", "has the unit or suffix 'miles', but distance_km is in km",
     "convert to km and enter the number alone or with 'km', e.g. 80"),
    ("sites", "power_mw", "50 mw", "has the unit or suffix 'mw', but power_mw is in MW",
     "convert to MW and enter the number alone or with 'MW', e.g. 50"),
    ("project", "dci_ratio", "0.5x", "has the suffix 'x', but dci_ratio is a plain number", None),
    ("sites", "power_mw", "$50", "has a $ sign, but power_mw is not in USD", None),
    ("project", "max_oversubscription", "25%", "is a percentage, but max_oversubscription is not a share", None),
    ("project", "gpus_required", "2:1", "is a ratio, but gpus_required is not one", None),
    ("project", "max_oversubscription", "2:0", "is a ratio whose second term is not positive", None),
]
AMBIGUOUS = ["1.000,5", "1,5", "4,00", "12,34,567"]


@pytest.mark.parametrize("sheet, column, typed, message, fix", REFUSED)
def test_an_ambiguous_notation_is_refused_with_the_cell_and_a_fix(sheet, column, typed, message, fix):
    got, problems, notices = read(sheet, column, typed)
    assert got is None and notices == []
    assert problems == [rejected(sheet, column, typed, message, fix or fix_for(field(sheet, column)))]


@pytest.mark.parametrize("typed", AMBIGUOUS)
def test_a_decimal_comma_or_odd_grouping_is_refused(typed):
    fix = ("write '.' for decimals and ',' only between groups of three digits, e.g. 1000.5 or 1,000.5; "
           + fix_for(field("sites", "power_mw")))
    assert read("sites", "power_mw", typed)[1] == [rejected(
        "sites", "power_mw", typed, "is ambiguous: a ',' or '.' here could be a decimal mark or a thousands "
        "separator", fix)]


@pytest.mark.parametrize("sheet, column, typed", [
    ("project", "gpus_required", "4 000"), ("sites", "power_mw", "nan"), ("sites", "power_mw", "inf"),
    ("sites", "power_mw", "1e308"), ("protocols", "efficiency", "250%"), ("project", "gpus_required", "4,000.5"),
    ("sites", "power_mw", "€50"), ("sites", "power_mw", True),
])
def test_what_is_no_number_in_range_says_the_range(sheet, column, typed):
    f = field(sheet, column)
    assert read(sheet, column, typed)[1] == [rejected(sheet, column, typed, f"must be {f.expectation()}",
                                                      fix_for(f))]


@pytest.mark.parametrize("sheet, column, typed, hint", [
    ("project", "objective", "min-cost", "did you mean 'min_cost'?"),
    ("sites", "status", "Requird", "did you mean 'required'?"),
    ("protocols", "switch_family", "Infini Band", "did you mean 'infiniband'?"),
])
def test_typos_in_choices_stay_errors(sheet, column, typed, hint):
    got, problems, _ = read(sheet, column, typed)
    assert got is None and problems == [rejected(sheet, column, typed, f"must be {field(sheet, column).expectation()}",
                                                 hint)]


def test_typos_in_lists_stay_errors():
    problems = read("project", "topologies_allowed", "leaf_spine, rail-only")[1]
    assert problems == [rejected("project", "topologies_allowed", "leaf_spine, rail-only",
                                 "has unknown entry 'rail-only'",
                                 "did you mean 'rail_only'? " + fix_for(field("project", "topologies_allowed")))]


def test_a_workbook_typed_in_notations_loads_and_lists_each_reading(tmp_path):
    book = tables(32, sites=[site("s1", power_mw="50 MW", fixed_cost_usd="$1,000")], budget_usd="$20,000,000",
                  max_oversubscription="2:1", objective="Min Cost", dci_ratio="25%")
    book["project"]["gpus_required"] = "4,000"
    inputs = load_inputs(write_workbook(tmp_path / "plan.xlsx", book))
    project = inputs.project
    assert (project["gpus_required"], project["budget_usd"], project["max_oversubscription"]) == (4000, 2e7, 2.0)
    assert (project["objective"], project["dci_ratio"]) == ("min_cost", 0.25)
    assert (inputs.sites.loc["s1", "power_mw"], inputs.sites.loc["s1", "fixed_cost_usd"]) == (50.0, 1000.0)
    readings = {str(n) for n in inputs.notices if n.kind == "read"}
    assert {"project!B2 gpus_required: read '4,000' as 4000", "sites!B2 power_mw: read '50 MW' as 50",
            "sites!E2 fixed_cost_usd: read '$1,000' as 1000"} <= readings
    assert len([r for r in readings if r.startswith("project!")]) == 5


def test_notices_are_optional():
    problems = []
    assert typed_value(field("project", "dci_ratio"), "25%", "project", "B7", problems) == 0.25 and not problems


# --- the range of every numeric field --------------------------------------------------------

NUMERIC = [(sheet, f) for sheet in SHEETS.values() for f in sheet.fields if f.type in ("int", "float")]


def test_every_numeric_field_has_both_bounds():
    unbounded = [f"{s.name}.{f.name}" for s, f in NUMERIC
                 if (f.gt is None and f.ge is None) or (f.lt is None and f.le is None)]
    assert not unbounded


def edge(f, side: str, inside: bool) -> float:
    """``f``'s value at its lower or upper bound: just inside it, or just outside (a step a planner could type:
    1 for whole numbers, a billionth of the bound for others, which the .xlsx keeps)."""
    strict, loose = (f.gt, f.ge) if side == "lower" else (f.lt, f.le)
    bound = strict if strict is not None else loose
    step = 1 if f.type == "int" else max(abs(bound), 1) * 1e-9
    step = step if side == "lower" else -step
    if strict is not None:
        return bound + step if inside else bound
    return bound if inside else bound - step


OOB = dict(name="oob", category="management_network", switch_model="sw48", switch_price_usd=8_000, switch_power_w=100,
           nodes_per_switch=44, ports_per_node=1, port_gbps=1, link_item="cat6", link_price_usd=10, link_power_w=0,
           source="test figures")
PANEL = dict(name="panel", role="panel", ports=48, price_usd=900, source="test figures")
CLOUD = dict(name="offer", node_type=NODE["name"], usd_per_gpu_hour=2.5, gbps_per_gpu=400, protocol=IB["name"],
             source="test figures")
ROWS = {"node_types": NODE, "switches": SW64, "optics": DAC, "coherent": ZR, "amplifiers": AMP, "protocols": IB,
        "support_networks": OOB, "fiber_plant": PANEL, "cloud": CLOUD}


def edge_book(side: str, inside: bool) -> dict:
    """Every numeric field at the edge: each key of the key sheets, and one row per numeric column in each table
    (named after the column; routes join the sites in turn, floorplan rows take one site each)."""
    book = tables(64)
    book["workload"] = {"model_params_billion": 70, "step_compute_ms": 500, "max_comm_fraction": 0.2}
    for sheet in SHEETS.values():
        fields = [f for f in sheet.fields if f.type in ("int", "float")]
        if sheet.kind == "keys":
            book[sheet.name].update({f.name: edge(f, side, inside) for f in fields})
        elif sheet.name == "sites":
            book["sites"] = [site(f.name, **{f.name: edge(f, side, inside)}) for f in fields]
        elif sheet.name == "routes":
            names = [s["name"] for s in book["sites"]]
            route = {"distance_km": 100, "fiber_pairs": 4, "fiber_cost_usd_per_pair_km": 10}
            book["routes"] = [dict(route, site_a=a, site_b=b, **{f.name: edge(f, side, inside)})
                              for f, a, b in zip(fields, names, names[1:])]
        elif sheet.name == "floorplan":
            names = [s["name"] for s in book["sites"]]
            floor = {"rows": 2, "racks_per_row": 4, "rack_kw": 40}
            book["floorplan"] = [dict(floor, site=s, **{f.name: edge(f, side, inside)}) for f, s in zip(fields, names)]
        else:
            base = ROWS[sheet.name]
            book[sheet.name] = [base] + [dict(base, **{sheet.key: f.name, f.name: edge(f, side, inside)})
                                         for f in fields]
    return book


def cell_of(book: openpyxl.Workbook, sheet, f, row: int) -> str:
    """The cell holding ``f`` in data row ``row`` (0-based) of a table, or the value cell of a key."""
    grid = book[sheet.name]
    if sheet.kind == "keys":
        return next(f"B{c.row}" for c in grid["A"] if c.value == f.name)
    column = next(c.column_letter for c in grid[1] if c.value == f.name)
    return f"{column}{row + 2}"


def range_problems(path) -> set:
    try:
        load_inputs(path)
    except InputError as exc:
        return {(p.sheet, p.cell, p.column, p.message) for p in exc.problems if p.message.startswith("must be ")}
    return set()


@pytest.mark.parametrize("side", ["lower", "upper"])
def test_every_bound_admits_its_edge_and_refuses_past_it_naming_the_cell(tmp_path, side):
    inside = write_workbook(tmp_path / "inside.xlsx", edge_book(side, inside=True))
    assert range_problems(inside) == set()
    outside = write_workbook(tmp_path / "outside.xlsx", edge_book(side, inside=False))
    book = openpyxl.load_workbook(outside)
    expected = set()
    for sheet in SHEETS.values():
        table_fields = [f for f in sheet.fields if f.type in ("int", "float")]
        for i, f in enumerate(table_fields):
            row = i if sheet.name in ("sites", "routes", "floorplan") else i + 1
            expected.add((sheet.name, cell_of(book, sheet, f, row), f.name, f"must be {f.expectation()}"))
    assert range_problems(outside) == expected


@pytest.mark.parametrize("text", [f"{MAX_PORTS}x400", f"64x{MAX_PORT_GBPS}", "1x1", "512x200,128x800"])
def test_port_modes_within_the_bounds_are_read(text):
    assert sum(port_modes(text).values()) >= 1


@pytest.mark.parametrize("text", [f"{MAX_PORTS + 1}x400", f"64x{MAX_PORT_GBPS + 1}", "0x400", "64x0",
                                  "99999999999999999999x400", "100000x400"])
def test_port_modes_beyond_the_bounds_are_refused(text):
    with pytest.raises(ValueError, match=f"port mode '{text}' needs 1 to {MAX_PORTS:,} ports of 1 to "
                                         f"{MAX_PORT_GBPS:,} Gb/s"):
        port_modes(text)


# The values of issues 8 and 13 that crashed, hung or passed: now input errors naming their cell (exit 2).
ISSUE_VALUES = [
    ("sites", 0, "max_nodes", 1e308), ("sites", 0, "power_mw", 1e308), ("routes", 0, "distance_km", 1e308),
    ("optics", 0, "reach_m", 1e308), ("coherent", 0, "channel_ghz", 1e-6), ("sites", 0, "energy_usd_per_mwh", 1e300),
    ("switches", 0, "port_modes", "99999999999999999999x400"), ("switches", 0, "port_modes", "100000x400"),
]


def run_cli(*args: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(list(args))
    return code, err.getvalue()


@pytest.mark.parametrize("sheet, row, column, value", ISSUE_VALUES)
def test_values_no_plan_has_are_input_errors_naming_the_cell(tmp_path, sheet, row, column, value):
    book = two_sites()
    book[sheet][row][column] = value
    path = write_workbook(tmp_path / "plan.xlsx", book)
    letter = next(c.column_letter for c in openpyxl.load_workbook(path)[sheet][1] if c.value == column)
    code, err = run_cli("solve", str(path), "-o", str(tmp_path / "out"), "--quiet")
    assert code == 2 and f"{sheet}!{letter}{row + 2} {column}: " in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_energy_price_and_horizon_beyond_their_bounds_are_input_errors(tmp_path):
    book = tables(32, sites=[site("s1", energy_usd_per_mwh=1e300)], horizon_years=1e6)
    code, err = run_cli("validate", str(write_workbook(tmp_path / "plan.xlsx", book)))
    assert code == 2
    assert "sites!G2 energy_usd_per_mwh: must be" in err and "horizon_years: must be" in err


def test_the_template_states_every_range_and_notation(tmp_path):
    book = openpyxl.load_workbook(write_template(tmp_path / "template.xlsx"))
    notes = {}
    for sheet in SHEETS.values():
        grid = book[sheet.name]
        cells = grid["A"][1:] if sheet.kind == "keys" else grid[1]
        notes[sheet.name] = {c.value: c.comment.text for c in cells if c.comment}
    for sheet, f in NUMERIC:
        assert f"type: {f.expectation()}" in notes[sheet.name][f.name], (sheet.name, f.name)
    assert "also read: a percentage (12.5% is 0.125)" in notes["project"]["dci_ratio"]
    assert "also read: a ratio (2:1 is 2)" in notes["project"]["max_oversubscription"]
    assert f"{MAX_PORTS:,} ports and {MAX_PORT_GBPS:,} Gb/s" in notes["switches"]["port_modes"]


# --- HiGHS's terminations --------------------------------------------------------------------

@pytest.mark.parametrize("condition, has_design, status, words", [
    (TC.convergenceCriteriaSatisfied, True, "optimal", ""),
    (TC.objectiveLimit, True, "feasible", ""),
    (TC.maxTimeLimit, True, "feasible", ""),
    (TC.objectiveLimit, False, "infeasible", ""),
    (TC.provenInfeasible, False, "infeasible", ""),
    (TC.maxTimeLimit, False, "no_solution", "the time limit ran out"),
    (TC.iterationLimit, False, "no_solution", "iteration or node limit"),
    (TC.error, False, "failed", "solver error (numerical trouble or an internal failure)"),
    (TC.unknown, False, "failed", "numerical trouble"),
    (TC.minStepLength, False, "failed", "numerical trouble"),
    (TC.locallyInfeasible, False, "failed", "numerical trouble"),
])
def test_each_termination_is_said_for_what_it_is(condition, has_design, status, words):
    got, stop = outcome_status(condition, has_design)
    assert got == status and (words in stop if words else stop == "")
    assert status != "no_solution" or "numerical" not in stop


def test_ctrl_c_in_highs_stops_the_run():
    with pytest.raises(KeyboardInterrupt):
        outcome_status(TC.interrupted, True)


def test_a_numerical_failure_is_reported_as_one_not_as_a_limit():
    """A cost HiGHS takes for infinite (>= 1e20) on a variable forced to 1: HiGHS returns no verdict."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.y = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.forced = pyo.Constraint(expr=m.x >= 1)
    m.cover = pyo.Constraint(expr=m.x + m.y >= 1.5)
    m.obj = pyo.Objective(expr=1e300 * m.x + m.y)
    outcome = run_highs(m, SolveOptions(time_limit=30))
    assert (outcome.status, outcome.objective) == ("failed", None)
    assert "numerical trouble" in outcome.stop and "time" not in outcome.stop


# --- solves at the extremes of the ranges ----------------------------------------------------

def two_forced(**project) -> dict:
    """two_sites with room to spare in each site's power, two sites forced by space (4 nodes each)."""
    book = two_sites(**project)
    book["sites"] = [site(name, power_mw=1, max_nodes=4) for name in ("a", "b")]
    return book


def extreme_routes(**route) -> dict:
    book = two_forced(buffer_bdp_factor=100, dci_ratio=1)
    book["routes"][0].update(route)
    book["coherent"] = [dict(ZR, reach_km=40_000, channel_ghz=6.25)]
    book["switches"] = [SW64, dict(DEEP, port_modes=f"{MAX_PORTS}x400", buffer_mb=1_000_000)]
    book["amplifiers"] = [dict(AMP, price_usd=1e8, power_w=100_000)]
    return book


RICH = site("s1", power_mw=100_000, pue=1, max_nodes=10_000_000, fixed_cost_usd=1e12, power_cost_usd_per_mw=1e10,
            energy_usd_per_mwh=100_000)
ZERO_COST = {"power_w": 0, "price_usd": 0}

SOLVED = {
    "power, prices, energy and horizon at their maxima": tables(
        64, sites=[RICH], horizon_years=50, budget_usd=1e13, node=dict(NODE, node_price_usd=1e8)),
    "pue at its maximum": tables(64, sites=[dict(RICH, pue=5)], horizon_years=50),
    "everything free, nodes at their least power": tables(
        64, sites=[site("s1", fixed_cost_usd=0, power_cost_usd_per_mw=0, energy_usd_per_mwh=0)],
        node=dict(NODE, node_power_kw=0.01, node_price_usd=0), switches=(dict(SW64, **ZERO_COST),),
        optics=(dict(DAC, **ZERO_COST), dict(SR, **ZERO_COST))),
    "the largest switch, dearest and hungriest": tables(
        4096, sites=[site("s1", power_mw=100_000)],
        switches=(dict(SW64, port_modes=f"{MAX_PORTS}x400", price_usd=1e8, power_w=1_000_000),)),
    "the fastest line rate": tables(
        64, node=dict(NODE, nic_gbps=MAX_PORT_GBPS), switches=(dict(SW64, port_modes=f"{MAX_PORTS}x{MAX_PORT_GBPS}"),),
        optics=(dict(DAC, gbps=MAX_PORT_GBPS), dict(SR, gbps=MAX_PORT_GBPS))),
    "the largest node": tables(
        1024 * 16, sites=[site("s1", power_mw=100_000)], switches=(dict(SW64, port_modes=f"{MAX_PORTS}x400"),),
        node=dict(NODE, gpus_per_node=1024, nics_per_node=1024, planes=16, node_power_kw=2000, node_price_usd=1e8)),
    "the longest route, most fibers, dearest fiber, densest grid, amplifiers 1 km apart": extreme_routes(
        distance_km=40_000, fiber_pairs=10_000, fiber_cost_usd_per_pair_km=1e7, amplifier_spacing_km=1),
    "a 20,000 km route with amplifiers 1,000 km apart": extreme_routes(distance_km=20_000, amplifier_spacing_km=1000),
    "a route of a nanometre": extreme_routes(distance_km=1e-12),
    "the largest workload": {**two_forced(), "workload": {
        "model_params_billion": 100_000, "bytes_per_gradient": 16, "step_compute_ms": 10_000_000,
        "grad_accum_steps": 100_000, "max_comm_fraction": 0.99}},
    "no bandwidth-delay buffer asked": two_forced(buffer_bdp_factor=0),
    "a free NVLink hop in a rail-only fabric": tables(
        64, node=dict(NODE, nvlink_latency_ns=0), topologies_allowed="rail_only"),
}

INFEASIBLE = {
    "a one-port switch": (tables(64, switches=(dict(SW64, port_modes="1x400"),)), "offer at most 8 GPUs"),
    "the most GPUs": (tables(10_000_000), "offer at most"),
    "a tiny budget": (tables(64, budget_usd=1e-9), "above budget_usd"),
    "a tiny fabric latency": (tables(64, max_fabric_latency_us=1e-9), "latency above max_fabric_latency_us"),
    "a tiny RTT between sites": (two_sites(max_site_rtt_ms=1e-9), "within max_site_rtt_ms"),
    "a site of a milliwatt at the greatest PUE": (
        tables(64, sites=[site("s1", power_mw=1e-9, pue=5)]), "offer at most 0 GPUs"),
}


@pytest.mark.parametrize("name", SOLVED)
def test_extreme_workbook_solves_and_passes_the_audit(tmp_path, name):
    out = tmp_path / "out"
    code, err = run_cli("solve", str(write_workbook(tmp_path / "plan.xlsx", SOLVED[name])), "-o", str(out),
                        "--quiet", "--time-limit", "60")
    assert code == 0, err
    design = json.loads((out / "design.json").read_text())
    totals = design["totals"]
    assert design["status"] == "optimal" and math.isfinite(design["objective_usd"])
    assert design["objective_usd"] == pytest.approx(totals["capex_usd"] + totals["energy_usd"], rel=1e-9)


@pytest.mark.parametrize("name", INFEASIBLE)
def test_extreme_workbook_is_infeasible_with_its_reason(tmp_path, name):
    book, reason = INFEASIBLE[name]
    code, err = run_cli("solve", str(write_workbook(tmp_path / "plan.xlsx", book)), "-o", str(tmp_path / "out"),
                        "--quiet", "--time-limit", "60")
    assert code == 3 and "infeasible: " in err and reason in err, err
