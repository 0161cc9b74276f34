"""Explaining a design: what relaxing each limit buys (designer.solve.sensitivity) and the best design of each
alternative (designer.solve.alternatives), each figure checked by solving the changed workbook from scratch.

Small workbooks over tests/test_diagnose.py's hand-checkable catalog: 256 GPUs (32 nodes of 15 kW facility power)
and two sites 60 km apart, ``a`` with 0.2 MW (13 nodes) and ``b`` with 10 MW and a $1M fixed cost. The cheapest
design puts every node at ``b``; one more MW at ``a`` holds them all there, which saves about b's fixed cost."""

from __future__ import annotations

import json

import pytest
from test_diagnose import SW64, book, site

from designer import cli
from designer.formats import money
from designer.inputs.workbook import load_inputs
from designer.inputs.writer import write_workbook
from designer.solve.alternatives import alternatives
from designer.solve.resolve import with_project, with_site
from designer.solve.prepare import at_most, prepare_data
from designer.solve.run import SolveOptions, budget_sets_latency, solve
from designer.solve.sensitivity import mark_constraints, sensitivity

TOL = 2e-4  # two MIP gaps


def two_sites(**project) -> dict:
    sites = [site("a", power_mw=0.2, lat=40.4, lon=-3.7), site("b", fixed_cost_usd=1_000_000, lat=40.9, lon=-3.2)]
    route = dict(site_a="a", site_b="b", distance_km=60, fiber_pairs=4, fiber_cost_usd_per_pair_km=10)
    return book(256, sites=sites, routes=[route], **project)


@pytest.fixture(scope="module")
def explained(tmp_path_factory):
    path = write_workbook(tmp_path_factory.mktemp("explain") / "two.xlsx", two_sites())
    inputs = load_inputs(path)
    chosen = solve(inputs)
    return inputs, chosen, sensitivity(inputs, chosen)


def row(rows: list[dict], limit: str, scope: str) -> dict:
    found = [r for r in rows if r["limit"] == limit and r["scope"] == scope]
    assert len(found) == 1, rows
    return found[0]


def test_a_binding_power_limit_saves_what_solving_with_the_step_saves(explained):
    inputs, chosen, sens = explained
    r = row(sens["rows"], "power_mw", "a")
    assert r["binding"] and r["step"] == "+1 MW" and r["relaxed"] == pytest.approx(1.2)
    assert r["saving_usd"] > 900_000  # b's $1M fixed cost, less a's own costs
    again = solve(with_site(inputs, "a", power_mw=r["relaxed"]))
    assert again["objective_usd"] == pytest.approx(chosen["objective_usd"] - r["saving_usd"], rel=TOL)
    assert r["effect"].startswith("saves $")


def test_a_limit_that_does_not_bind_saves_nothing_when_relaxed(explained):
    inputs, chosen, sens = explained
    r = row(sens["rows"], "max_nodes", "b")
    assert not r["binding"] and r["relaxed"] == 1100
    again = solve(with_site(inputs, "b", max_nodes=r["relaxed"]))
    assert again["objective_usd"] >= chosen["objective_usd"] - r["saving_max_usd"] - TOL * chosen["objective_usd"]


def test_every_limit_of_the_workbook_has_a_row(explained):
    _, _, sens = explained
    limits = {(r["limit"], r["scope"]) for r in sens["rows"]}
    assert {("power_mw", "a"), ("power_mw", "b"), ("max_nodes", "a"), ("max_nodes", "b"),
            ("fiber_pairs", "a--b"), ("max_oversubscription", "project"),
            ("max_fabric_latency_us", "project")} <= limits


def test_the_constraints_table_takes_binding_from_the_re_solves(explained):
    _, chosen, sens = explained
    constraints = json.loads(json.dumps(chosen["constraints"]))
    mark_constraints(constraints, sens["rows"])
    power = [c for c in constraints if c["name"] == "power_mw" and c["scope"] == "b"]
    for c in power:  # b is open with slack; a is not open, so it has no row in the table
        assert c["binding_by"] == "re-solve" and c["binding"] is row(sens["rows"], "power_mw", "b")["binding"]


def with_fast_switch(tmp_path, **project):
    """128 GPUs; a faster switch (50 ns, $50,000) makes rail_only 0.05 us faster (1.38 us) for 8 x $40,000 more."""
    tables = book(128, **project)
    tables["switches"].append(dict(SW64, model="sw64fast", latency_ns=50, price_usd=50_000))
    return load_inputs(write_workbook(tmp_path / "fast.xlsx", tables))


def test_a_faster_level_whose_modes_cannot_hold_the_job_sets_no_latency_without_a_solve():
    """min_latency with a budget: the budget sets the latency only where the next faster level has a design; a level
    whose modes hold fewer GPUs than required has none, said without a HiGHS run (the default example's faster
    levels: 32,768 GPUs at most)."""
    inputs = load_inputs(cli.DEFAULT_WORKBOOK)
    data = prepare_data(inputs, by_latency=True)
    level = min(mode.latency_us for mode in data.modes)
    assert 0 < at_most(data, level).most_gpus() < int(inputs.project["gpus_required"])
    outcomes = []
    assert budget_sets_latency(data, level, SolveOptions(), outcomes) is False and outcomes == []


def test_what_a_latency_limit_costs_is_what_lifting_it_saves(tmp_path):
    inputs = with_fast_switch(tmp_path, max_fabric_latency_us=1.4)
    chosen = solve(inputs)
    assert chosen["sites"][0]["fabric_latency_us"] == pytest.approx(1.38)
    r = row(sensitivity(inputs, chosen)["rows"], "max_fabric_latency_us", "project")
    assert r["binding"] and r["saving_usd"] == pytest.approx(320_000, rel=0.05)
    lifted = solve(with_project(inputs, max_fabric_latency_us=None))
    assert lifted["objective_usd"] == pytest.approx(chosen["objective_usd"] - r["saving_usd"], rel=TOL)
    assert r["effect"] == f"the 1.4 us latency limit costs {money(r['saving_usd'])}"


def test_min_latency_budget_that_keeps_a_faster_fabric_out_binds(tmp_path):
    """A budget of the cheapest design + $100,000 keeps the faster switch out: the budget sets the latency,
    whatever its slack."""
    inputs = with_fast_switch(tmp_path, objective="min_latency", budget_usd=2_040_000)
    chosen = solve(inputs)
    assert chosen["sites"][0]["fabric_latency_us"] == pytest.approx(1.43)
    budget = [c for c in chosen["constraints"] if c["name"] == "budget_usd"][0]
    assert budget["slack"] > 0 and budget["binding"] and budget["binding_by"] == "re-solve"
    r = row(sensitivity(inputs, chosen)["rows"], "budget_usd", "project")
    assert r["binding"] and r["latency_us"] == pytest.approx(1.38)
    faster = solve(with_project(inputs, budget_usd=r["objective_usd"] * (1 + 1e-6)))
    assert faster["sites"][0]["fabric_latency_us"] == pytest.approx(1.38)
    assert faster["objective_usd"] == pytest.approx(r["objective_usd"], rel=TOL)
    assert "the next latency level (1.38 us, infiniband) costs +$" in r["effect"]


def test_alternatives_are_the_best_designs_of_the_narrowed_workbook(explained):
    inputs, chosen, _ = explained
    alt = alternatives(inputs, chosen)
    by = {(r["kind"], r["name"]): r for r in alt["rows"]}
    assert by["protocol", "infiniband"]["note"] == "the chosen design"
    assert by["protocol", "infiniband"]["cost_delta_usd"] == 0
    for topology in ("leaf_spine", "fat_tree_3"):
        r = by["topology", topology]
        again = solve(with_project(inputs, topologies_allowed=[topology]))
        assert r["objective_usd"] == pytest.approx(again["objective_usd"], rel=TOL)
        assert r["cost_delta_usd"] == pytest.approx(r["objective_usd"] - chosen["objective_usd"])
        assert r["topologies"] == [topology]
    assert not [r for r in alt["rows"] if r["kind"] == "one site fewer"]  # one site open: none to do without


def test_cli_explain_writes_the_tables(tmp_path):
    path = write_workbook(tmp_path / "two.xlsx", two_sites())
    out = tmp_path / "out"
    assert cli.main(["solve", str(path), "-o", str(out), "--quiet", "--explain"]) == cli.EXIT_OK
    design = json.loads((out / "design.json").read_text())
    assert design["sensitivity"]["rows"] and design["alternatives"]["rows"]
    assert design["timings"]["explain_s"] > 0
    md = (out / "report.md").read_text()
    assert "## What relaxing each limit buys" in md and "## Alternatives: why not X" in md
    import openpyxl

    sheets = openpyxl.load_workbook(out / "design.xlsx", read_only=True).sheetnames
    assert "sensitivity" in sheets and "alternatives" in sheets


def test_an_alternative_the_workbook_rules_out_says_so_without_solving(explained):
    inputs, chosen, _ = explained
    narrowed = with_project(inputs, topologies_allowed=["leaf_spine", "rail_only"])
    by = {(r["kind"], r["name"]): r for r in alternatives(narrowed, chosen)["rows"]}
    r = by["topology", "fat_tree_3"]
    assert r["objective_usd"] is None and r["note"] == "not in topologies_allowed (leaf_spine, rail_only)"
    assert by["topology", "rail_only"]["note"] == "the chosen design"


# --- the probe that decides "binding" (designer.solve.resolve.cheaper_than) -----------------------------------

def test_the_probe_answers_exactly_on_both_sides_of_the_optimum(explained):
    """The relaxed workbook (+1 MW at a) solved from scratch costs O; the probe finds no design below O less a
    hair (its proof), and below O plus a hair it finds one and solves it to the same O."""
    from designer.solve.highs import SolveOptions
    from designer.solve.resolve import cheaper_than

    inputs, _, _ = explained
    variant = with_site(inputs, "a", power_mw=1.2)
    optimum = solve(variant)["objective_usd"]
    verdict, found = cheaper_than(variant, optimum * (1 - 1e-3), SolveOptions())
    assert verdict is False and found is None
    verdict, found = cheaper_than(variant, optimum * (1 + 1e-3), SolveOptions())
    assert verdict is True and found.objective == pytest.approx(optimum, rel=TOL)
    assert found.solution["objective_usd"] == pytest.approx(found.objective)


def test_a_limit_found_not_binding_by_the_probe_has_no_cheaper_design(explained):
    """Every row the probe calls not binding: solving its relaxed workbook from scratch finds nothing below the
    chosen design's bound (the verdict is the re-solve's, not the slack's)."""
    inputs, chosen, sens = explained
    bound = chosen["solver"]["bound_usd"]
    rows = [r for r in sens["rows"] if r["limit"] == "max_nodes" and not r["binding"]]
    assert rows
    for r in rows:
        assert r["objective_usd"] == pytest.approx(chosen["objective_usd"]) and r["saving_usd"] == 0
        assert r["saving_max_usd"] == pytest.approx(chosen["objective_usd"] - bound, abs=1e-6 * bound + 1)
        again = solve(with_site(inputs, r["scope"], max_nodes=r["relaxed"]))
        assert again["objective_usd"] >= bound * (1 - 1e-6)  # the probe proved the optimum is at least that


def test_min_latency_alternative_slower_than_the_chosen_level_has_its_design(tmp_path):
    """Under min_latency an alternative is the fastest level its own workbook reaches, then the cheapest there: a
    leaf-spine fabric is slower than the chosen rail-only one (1.38 us), and it is answered with its design, as
    solving the narrowed workbook gives it, not ruled out at the chosen level."""
    inputs = with_fast_switch(tmp_path, objective="min_latency")
    chosen = solve(inputs)
    assert chosen["sites"][0]["fabric_latency_us"] == pytest.approx(1.38)
    by = {(r["kind"], r["name"]): r for r in alternatives(inputs, chosen)["rows"]}
    r = by["topology", "leaf_spine"]
    again = solve(with_project(inputs, topologies_allowed=["leaf_spine"]))
    assert r["status"] == "optimal" and r["latency_us"] > 1.38
    assert r["latency_us"] == pytest.approx(again["sites"][0]["fabric_latency_us"])
    assert r["objective_usd"] == pytest.approx(again["objective_usd"], rel=TOL)


def test_an_alternative_with_no_design_names_the_smallest_change(tmp_path):
    """Two sites of 0.07 MW that must both open (test_diagnose.pair): without a, b alone lacks the power for 8
    nodes. The row says why and the elastic diagnosis's smallest change, and that change makes b alone solve."""
    from test_diagnose import pair

    inputs = load_inputs(write_workbook(tmp_path / "pair.xlsx", pair(60)))
    chosen = solve(inputs)
    assert chosen["totals"]["sites_open"] == 2
    by = {(r["kind"], r["name"]): r for r in alternatives(inputs, chosen)["rows"]}
    r = by["one site fewer", "without a"]
    assert r["status"] == "infeasible" and "; the smallest change: site b needs " in r["note"]
    needed = float(r["note"].split("power_mw 0.07 -> ")[1].rstrip(")"))
    alone = solve(with_site(with_site(inputs, "a", status="excluded"), "b", power_mw=needed))
    assert alone["totals"]["sites_open"] == 1 and alone["totals"]["gpus"] == 64


def test_a_cheaper_alternative_is_said_to_lie_within_the_gap_only_where_the_objective_ranks_it_first(explained):
    """An alternative can cost less than the chosen design only within its proven gap (min_cost, or min_latency at
    no more latency): its note says so and names the bound. A slower one under min_latency is simply cheaper.
    Each row carries the training step and its delta where the designs have one."""
    from designer.solve.alternatives import compare
    from designer.solve.resolve import Variant

    _, chosen, _ = explained
    cheaper = Variant("optimal", chosen["objective_usd"] - 2_000, solution=chosen)
    note = compare(chosen, cheaper, chosen)["note"]
    assert note.startswith("$2,000 cheaper: within the chosen design's proven gap")
    assert money(chosen["solver"]["bound_usd"]) in note
    slower = json.loads(json.dumps(chosen))
    for e in slower["sites"]:
        if e["open"]:
            e["fabric_latency_us"] += 1.0
    base = {**chosen, "objective": "min_latency"}
    assert compare(base, Variant("optimal", chosen["objective_usd"] - 2_000, solution=slower), base)["note"] == ""
    timed = {**chosen, "training": {"step_time_s": 0.5}}
    row = compare(timed, Variant("optimal", chosen["objective_usd"], solution={**chosen, "training": {
        "step_time_s": 0.625}}), timed)
    assert row["step_s"] == 0.625 and row["step_delta_s"] == pytest.approx(0.125)
