"""The solve's first design (the greedy plan completed, designer.solve.start) and HiGHS's wall-clock guard
(designer.solve.highs.GuardedHighs), on the shipped scale-across example, where the greedy plan has a design."""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

import highspy
import pyomo.environ as pyo
import pytest

from designer.audit.checks import audit
from designer.inputs.workbook import load_inputs
from designer.solve import run
from designer.solve.greedy import greedy_plan
from designer.solve.highs import Outcome, SolveOptions, run_highs
from designer.solve.prepare import prepare_data
from designer.solve.relaxation import Relaxation
from designer.solve.start import (
    FEW_FREE,
    greedy_start,
    guided_start,
    lp_sites_first,
    relaxation_start,
    restore,
    snapshot,
)
from models.network import COST_SCALE, build_model
from tests.conftest import example_model

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "examples" / "scale-across.xlsx"


@pytest.fixture(scope="module")
def instance():
    return example_model("scale-across")


def test_greedy_start_completes_the_plan_and_frees_its_decisions(instance):
    """The completed plan opens the plan's sites in the plan's modes and costs within 1% of the plan's own
    estimate (the model places the nodes), no less than HiGHS's proven lower bound on the optimum (a solve to a
    1% gap proves one); afterwards no variable stays fixed."""
    inputs, data, model = instance
    plan = greedy_plan(inputs, data.modes)
    start = greedy_start(model, data, SolveOptions(), cutoff=None)
    assert start is not None and start.status == "feasible"
    assert start.objective == pytest.approx(plan.cost, rel=0.01)
    modes = {mode.id: i for i, mode in enumerate(data.modes)}
    assert {(s, i) for s, i in model.SM if round(model.y[s, i].value) == 1} == {
        (s, modes[site["mode"]]) for s, site in plan.sites.items()}
    assert not any(var.fixed for var in model.component_data_objects(ctype=type(model.open[next(iter(model.S))])))
    bounded = run_highs(model, SolveOptions(mip_gap=0.01), COST_SCALE, start=True)
    assert bounded.status == "optimal" and bounded.bound <= start.objective * (1 + 1e-9)


def test_a_start_is_the_incumbent_highs_returns_when_stopped_at_once(instance):
    """Given the completed plan as its start and no time, HiGHS returns a design no worse than the plan."""
    _inputs, data, model = instance
    start = greedy_start(model, data, SolveOptions(), cutoff=None)
    stopped = run_highs(model, SolveOptions(time_limit=1e-3), COST_SCALE, start=True)
    assert stopped.status in ("feasible", "optimal")
    assert stopped.objective <= start.objective * (1 + 1e-9)


def test_a_large_model_is_completed_on_its_chosen_modes(monkeypatch, instance):
    """Above CHOSEN_ONLY variables the plan is completed on a model of its chosen (site, mode) pairs alone: the
    same design cost as completing it in the whole model (both to HiGHS's default gap), its values a design of the
    whole model (the check HiGHS's start passes: not refused, and HiGHS stopped at once returns no worse)."""
    import designer.solve.start as start_module

    _inputs, data, model = instance
    whole = greedy_start(model, data, SolveOptions(), cutoff=None)
    monkeypatch.setattr(start_module, "CHOSEN_ONLY", 0)
    for var in model.component_data_objects(pyo.Var):
        if not var.fixed:
            var.set_value(None, skip_validation=True)
    chosen = greedy_start(model, data, SolveOptions(), cutoff=None)
    assert chosen is not None and chosen.objective == pytest.approx(whole.objective, rel=2e-4)
    assert not any(var.fixed for var in model.y.values())
    stopped = run_highs(model, SolveOptions(time_limit=1e-3), COST_SCALE, start=True)
    assert not stopped.start_refused
    assert stopped.objective is not None and stopped.objective <= chosen.objective * (1 + 1e-9)


def test_many_modes_take_the_chosen_modes_path_past_their_size(monkeypatch, instance):
    """chosen_only: above CHOSEN_ONLY variables, or above MANY_MODES_VARIABLES over MANY_MODES modes or more; a model
    with a budget row never (a model built afresh would not hold it)."""
    import designer.solve.start as start_module

    _inputs, _data, model = instance
    size, modes = model.nvariables(), len(model.M)
    assert not start_module.chosen_only(model)  # the example is small
    monkeypatch.setattr(start_module, "MANY_MODES_VARIABLES", size - 1)
    monkeypatch.setattr(start_module, "MANY_MODES", modes)
    assert start_module.chosen_only(model)
    monkeypatch.setattr(start_module, "MANY_MODES", modes + 1)
    assert not start_module.chosen_only(model)
    monkeypatch.setattr(start_module, "MANY_MODES", modes)
    monkeypatch.setattr(start_module, "MANY_MODES_VARIABLES", size)
    assert not start_module.chosen_only(model)
    monkeypatch.setattr(start_module, "CHOSEN_ONLY", size - 1)
    assert start_module.chosen_only(model)
    monkeypatch.setattr(model, "budget", object(), raising=False)
    assert not start_module.chosen_only(model)


def test_a_completion_on_the_chosen_modes_may_take_all_the_time_left(monkeypatch, instance):
    """The whole model's completion runs beside its LP and before a search of its own: START_SHARE of the time left,
    or more while it has no design (its settle point). The completion on the chosen modes alone is the one design
    what follows it starts from: all of the time left (a plan whose completion needed 20.7 s of the 48 s left had
    no design in its 19 s share)."""
    import designer.solve.start as start_module

    _inputs, data, model = instance
    given = []
    real = start_module.run_highs
    monkeypatch.setattr(start_module, "run_highs",
                        lambda m, options, *a, **kw: given.append((options.time_limit, options.settle_after))
                        or real(m, options, *a, **kw))
    assert greedy_start(model, data, SolveOptions(time_limit=50.0), cutoff=None) is not None
    monkeypatch.setattr(start_module, "CHOSEN_ONLY", 0)
    assert greedy_start(model, data, SolveOptions(time_limit=50.0), cutoff=None) is not None
    assert given == [(50.0, pytest.approx(50.0 * start_module.START_SHARE)), (50.0, None)]


def test_the_lp_sites_completion_stops_at_its_share_beside_a_greedy_design(monkeypatch, instance):
    """The LP's sites completed (relaxation_start): with a greedy design in hand it stops at START_SHARE of the time
    left, the rest HiGHS's search from that design; without one it may run past its share while it has none."""
    import designer.solve.start as start_module
    from designer.solve.start import relaxation_start

    _inputs, _data, model = instance
    given = []
    monkeypatch.setattr(start_module, "run_highs", lambda m, options, *a, **kw: given.append(
        (options.time_limit, options.settle_after)) or start_module.Outcome("no_solution", None, None, None, 0.0, ""))
    for s in model.S:
        model.open[s].set_value(1)
    for tried in (set(), None):
        assert relaxation_start(model, SolveOptions(time_limit=50.0), None, tried) is None
    share = 50.0 * start_module.START_SHARE
    assert given == [(pytest.approx(share), None), (50.0, pytest.approx(share))]
    assert not any(var.fixed for var in model.open.values())


def test_a_start_that_is_not_a_design_of_the_model_is_refused(instance):
    """A start breaking one bound of the model is not given to HiGHS and never kept as the answer (better_of)."""
    from designer.solve.start import better_of, snapshot

    _inputs, data, model = instance
    start = greedy_start(model, data, SolveOptions(), cutoff=None)
    used = next(key for key in model.SM if round(model.y[key].value) == 1)
    model.nodes[used].set_value(model.nodes[used].ub + 5, skip_validation=True)
    values = snapshot(model)
    stopped = run_highs(model, SolveOptions(time_limit=1e-3), COST_SCALE, start=True)
    assert stopped.start_refused
    assert better_of(stopped, start, values) is stopped


def test_a_refused_start_is_reported_and_highs_solves_without_it(monkeypatch, instance):
    """A start the check refuses is said in the progress lines, and the solve goes on without it: HiGHS's own
    design, proven, passes the audit."""
    import designer.solve.highs as highs

    inputs, _data, _model = instance
    monkeypatch.setattr(highs, "start_violation", lambda *_args, **_kwargs: 1.0)
    lines = []
    solution = run.solve(inputs, SolveOptions(progress=lines.append))
    assert any("not given to HiGHS" in line for line in lines)
    assert solution["status"] == "optimal" and audit(solution) == []


@pytest.mark.parametrize("colwise", [False, True])
def test_start_violation_measures_rows_bounds_and_integrality(colwise):
    """By hand: x integer in [0, 4], y in [0, 10], x + 2y <= 8. (2, 3) is a design; (2, 3.5) breaks the row by 1;
    (5, 1) breaks x's bound by 1; (1.5, 1) is fractional by 0.5; all less HiGHS's 1e-6 (relative to the bound), and
    within it counted as 0. The matrix held row-wise (as Pyomo adds rows) or column-wise (a model passed whole)."""
    import highspy
    import numpy as np

    from designer.solve.highs import start_violation

    solver = highspy.Highs()
    solver.setOptionValue("output_flag", False)
    lower, upper = np.array([0.0, 0.0]), np.array([4.0, 10.0])
    if colwise:
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = 2, 1
        lp.col_cost_, lp.col_lower_, lp.col_upper_ = np.array([1.0, 1.0]), lower, upper
        lp.row_lower_, lp.row_upper_ = np.array([-highspy.kHighsInf]), np.array([8.0])
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_, lp.a_matrix_.index_ = np.array([0, 1, 2]), np.array([0, 0])
        lp.a_matrix_.value_ = np.array([1.0, 2.0])
        lp.integrality_ = [highspy.HighsVarType.kInteger, highspy.HighsVarType.kContinuous]
        solver.passModel(lp)
    else:
        solver.addVars(2, lower, upper)
        solver.changeColsIntegrality(1, np.array([0]), np.array([highspy.HighsVarType.kInteger]))
        solver.addRows(1, np.array([-highspy.kHighsInf]), np.array([8.0]), 2, np.array([0]), np.array([0, 1]),
                       np.array([1.0, 2.0]))
    held = solver.getLp().a_matrix_.format_
    assert held == (highspy.MatrixFormat.kColwise if colwise else highspy.MatrixFormat.kRowwise)
    assert start_violation(solver, [2.0, 3.0]) == 0.0
    assert start_violation(solver, [2.0, 3.0 + 1e-7]) == 0.0
    assert start_violation(solver, [2.0, 3.5]) == pytest.approx(1.0 - 8e-6)
    assert start_violation(solver, [5.0, 1.0]) == pytest.approx(1.0 - 4e-6)
    assert start_violation(solver, [1.5, 1.0]) == pytest.approx(0.5 - 1e-6)


def test_guard_stops_highs_as_a_time_limit(instance):
    """A deadline already past: the timer asks HiGHS to stop at once, and the stop reads as a time limit
    (no design yet: no_solution with the limit in words), never as a failure or as Ctrl-C. Called directly, the
    solver still records the translation's own time (from its solve call), not the time since some earlier mark."""
    import designer.solve.highs as highs

    _inputs, _data, model = instance
    guarded = highs.GuardedHighs()
    guarded.deadline = time.perf_counter() - 1
    began = time.perf_counter()
    results = guarded.solve(model, load_solutions=False, raise_exception_on_nonoptimal_result=False,
                            solver_options={"presolve": "off"})
    assert 0 < highs.translation_seconds(model) <= time.perf_counter() - began
    assert guarded.guarded
    assert results.termination_condition.name in ("maxTimeLimit", "convergenceCriteriaSatisfied")
    status, stop = highs.outcome_status(results.termination_condition, False)
    if results.termination_condition.name == "maxTimeLimit":
        assert status == "no_solution" and "time limit" in stop


def test_solve_keeps_the_greedy_design_when_highs_finds_none(monkeypatch, instance):
    """A time-limited solve returns at least the greedy design: with HiGHS made to stop without a design,
    the solve returns the best of the starts it made (the completed plan, and where the main run does not search set
    by set over the open sites, the plan over the LP relaxation's sites and the LP's completed sites), unproven,
    with HiGHS's bound, and the audit passes it."""
    inputs, data, model = instance
    real = run.run_highs

    def stopped(model, options, *args, **kwargs):
        if kwargs.get("start"):  # a bound to report: any proven one will do, a 5% gap proves one sooner
            found = real(model, replace(options, time_limit=None, mip_gap=0.05), *args, **kwargs)
            for var in model.component_data_objects(ctype=type(model.open[next(iter(model.S))])):
                var.set_value(None, skip_validation=True)  # a stop without a design loads nothing
            return Outcome("no_solution", None, found.bound, None, found.seconds, "maxTimeLimit")
        return real(model, options, *args, **kwargs)

    completions = []

    def recorded(second):
        def record(*args, **kwargs):
            completions.append(second(*args, **kwargs))
            return completions[-1]
        return record

    monkeypatch.setattr(run, "run_highs", stopped)
    monkeypatch.setattr(run, "relaxation_start", recorded(relaxation_start))
    monkeypatch.setattr(run, "guided_start", recorded(guided_start))
    monkeypatch.setattr(run, "greedy_start", recorded(greedy_start))
    solution = run.solve(inputs, SolveOptions())
    assert solution["status"] == "feasible"
    assert any(c is not None for c in completions)
    best = min(c.objective for c in completions if c is not None)
    assert solution["objective_usd"] == pytest.approx(best, rel=1e-6)
    assert solution["solver"]["bound_usd"] is not None and solution["mip_gap"] is not None
    assert audit(solution) == []


def test_the_plan_over_the_lps_sites_opens_them_first(instance):
    """greedy_plan's ``prefer`` orders the sites before their cost per MW: no preference (or an even one) is the cost
    per MW's plan itself; a preference for houston, which that plan leaves closed, opens it. guided_start completes
    that plan into a design of the model opening the preferred site, and has nothing new for the sites a design in
    hand opens."""
    inputs, data, model = instance
    plain = greedy_plan(inputs, data.modes)
    assert "houston" not in plain.sites
    for even in ({}, {s: 0.5 for s in inputs.sites.index}):
        same = greedy_plan(inputs, data.modes, prefer=even)
        assert (same.cost, list(same.sites)) == (plain.cost, list(plain.sites))
    assert "houston" in greedy_plan(inputs, data.modes, prefer={"houston": 1.0}).sites
    found = guided_start(model, data, SolveOptions(), None, {"houston": 1.0}, set(plain.sites))
    assert found is not None and found.status == "feasible"
    opened = {s for s in model.S if round(model.open[s].value) == 1}
    assert "houston" in opened
    assert not any(var.fixed for var in [*model.open.values(), *model.y.values()])
    assert guided_start(model, data, SolveOptions(), None, {"houston": 1.0}, opened) is None


def test_a_plan_above_the_budget_by_its_own_sizing_is_still_completed():
    """The default example's greedy plan costs more than its $4.28B budget by the planner's own sizing (no plan, over
    budget only); the model completes its sites and modes within the budget (HiGHS places the nodes), a start the
    solve had dropped; the same plan with a budget below the proven optimum has no completion."""
    inputs, data, model = example_model("default")
    budget = float(inputs.project["budget_usd"])
    plan = greedy_plan(inputs, data.modes, inter=data.inter)
    assert plan.cost is None and plan.over_budget and plan.sites
    found = greedy_start(model, data, SolveOptions(), budget)
    assert found is not None and found.objective <= budget
    assert {s for s in model.S if round(model.open[s].value) == 1} == set(plan.sites)
    assert greedy_start(model, data, SolveOptions(), 4.2e9) is None  # below the optimum, $4,268.75M


@pytest.mark.parametrize("lp_starts", [True, False])
def test_an_lp_solved_here_comes_first_and_the_greedy_plan_is_completed_below_its_starts(monkeypatch, lp_starts):
    """A model whose LP is solved here at once (the default example) has its LP's starts completed first, then the
    greedy plan under the cutoff of the best design in hand, so it only adds a design below it (here none: its
    completion's bound is above the LP's sites completed); the solve's optimum is the same. Where the LP's starts find
    nothing, the greedy plan is completed under the budget alone, the answer as before."""
    inputs = load_inputs(EXAMPLE.with_name("default.xlsx"))
    budget = float(inputs.project["budget_usd"])
    calls = []

    def recorded(name, make):
        def record(*args, **kwargs):
            found = make(*args, **kwargs) if lp_starts or name == "greedy" else None
            calls.append((name, args[3] if name != "lp_sites" else args[2], found))
            return found
        return record

    monkeypatch.setattr(run, "greedy_start", recorded("greedy", greedy_start))
    monkeypatch.setattr(run, "guided_start", recorded("guided", guided_start))
    monkeypatch.setattr(run, "relaxation_start", recorded("lp_sites", relaxation_start))
    solution = run.solve(inputs, SolveOptions())
    assert solution["status"] == "optimal" and solution["objective_usd"] == pytest.approx(4_268_753_464, rel=1e-4)
    assert calls[-1][0] == "greedy" and [name for name, _, _ in calls].count("greedy") == 1
    lp_found = [found.objective for name, _, found in calls if name != "greedy" and found is not None]
    assert bool(lp_found) == lp_starts
    assert calls[-1][1] == (min(lp_found) if lp_starts else budget)
    assert (calls[-1][2] is None) == lp_starts


def test_the_lps_sites_come_first_when_few_are_fractional():
    """The LP's sites are completed before the greedy plan over them when at most FEW_FREE are fractional (values
    within 1e-6 of 0 or 1 count as whole, as relaxation_start fixes them)."""
    whole = {"a": 1.0, "b": 0.0, "c": 1 - 1e-7, "d": 1e-7}
    assert lp_sites_first(whole)
    assert lp_sites_first(whole | {f"f{k}": 0.5 for k in range(FEW_FREE)})
    assert not lp_sites_first(whole | {f"f{k}": 0.5 for k in range(FEW_FREE + 1)})


def test_greedy_plan_opens_sites_within_the_rtt_limit_of_each_other(tmp_path):
    """Under max_site_rtt_ms the greedy plan opens only sites whose shortest path of routes to every other
    open site is within the limit (checked here over the workbook's routes with the model's RTT), so its
    completion is not ruled out by the RTT rows."""
    import networkx as nx

    from designer.inputs.writer import write_workbook
    from designer.tools.bench.instances import Size, synth_workbook
    from models.intersite import rtt_ms

    size = Size(30, 300_000, 6, rtt_ms=5.0)  # within what the RTT-joined sites hold with their DCI attachments
    book = synth_workbook(size)
    inputs = load_inputs(write_workbook(tmp_path / "s30.xlsx", book))
    plan = greedy_plan(inputs, prepare_data(inputs).modes)
    assert plan.cost is not None and len(plan.sites) > 2
    graph = nx.Graph()
    graph.add_weighted_edges_from((r["site_a"], r["site_b"], rtt_ms(r["distance_km"])) for r in book["routes"])
    opened = sorted(plan.sites)
    far = [(a, b) for a in opened for b in opened if a < b
           and nx.shortest_path_length(graph, a, b, weight="weight") > size.rtt_ms + 1e-9]
    assert far == []
    everything = {r["site_a"] for r in book["routes"]} | {r["site_b"] for r in book["routes"]}
    assert any(nx.shortest_path_length(graph, a, b, weight="weight") > size.rtt_ms
               for a in everything for b in everything)  # the limit does rule pairs out here


def test_highs_gets_the_time_left_after_the_translation(instance):
    """The time limit a run gives HiGHS is what is left of it once Pyomo has translated the model, so a
    large model's translation does not come on top of --time-limit."""
    import designer.solve.highs as highs

    _inputs, _data, model = instance
    guarded = highs.GuardedHighs()
    given = 3.0
    guarded.ends = time.perf_counter() + given
    results = guarded.solve(model, load_solutions=False, raise_exception_on_nonoptimal_result=False,
                            time_limit=given, solver_options={"presolve": "off"})
    assert results.termination_condition.name in ("convergenceCriteriaSatisfied", "maxTimeLimit")
    assert 0 < guarded.given < given


def in_processes(monkeypatch, command: tuple | None = None) -> list:
    """Every run with a deadline goes to a process of its own (PROCESS_COLUMNS 0), started with ``command`` when
    given; returns the list the runs' HighsProcess objects are added to."""
    import designer.solve.highs as highs
    import designer.solve.process as process

    made = []

    class Recorded(process.HighsProcess):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    if command is not None:
        monkeypatch.setattr(Recorded, "command", command)
    monkeypatch.setattr(highs, "PROCESS_COLUMNS", 0)
    monkeypatch.setattr(highs, "HighsProcess", Recorded)
    return made


def test_a_large_run_in_its_own_process_is_the_same_run(monkeypatch, instance):
    """A run with a deadline of a model of PROCESS_COLUMNS columns or more goes to a process of its own
    (designer.solve.process): from the same start it returns the same proven optimum, bound and design as the run
    in this process, its values loaded in the model, with HiGHS's own seconds there."""
    _inputs, data, model = instance
    greedy_start(model, data, SolveOptions(), cutoff=None)
    start = snapshot(model)
    here = run_highs(model, SolveOptions(time_limit=60), COST_SCALE, start=True)
    design = {key: round(var.value) for key, var in model.y.items()}
    restore(model, start)
    made = in_processes(monkeypatch)
    apart = run_highs(model, SolveOptions(time_limit=60), COST_SCALE, start=True)
    assert len(made) == 1 and made[0].process.returncode == 0
    assert here.status == apart.status == "optimal" and apart.termination == "convergenceCriteriaSatisfied"
    assert apart.objective == pytest.approx(here.objective, rel=1e-9)
    assert apart.bound == pytest.approx(here.bound, rel=1e-9)
    assert {key: round(var.value) for key, var in model.y.items()} == design
    assert pyo.value(model.obj) * COST_SCALE == pytest.approx(apart.objective, rel=1e-9)
    assert 0 < apart.highs_seconds <= apart.seconds



def test_work_meanwhile_sends_a_run_of_any_size_apart_and_runs_beside_it(monkeypatch, instance):
    """A run given work for this process while HiGHS runs (``meanwhile``: the whole model's translation beside the
    chosen pairs' completion) goes to a process of its own whatever its size, and the work is done once, after
    the process has started and before the solve returns; the run returns the same proven optimum as without it,
    with a time limit or without one (no deadline to stop it at: the process runs to its end)."""
    import designer.solve.highs as highs

    _inputs, data, model = instance
    greedy_start(model, data, SolveOptions(), cutoff=None)
    start = snapshot(model)
    here = run_highs(model, SolveOptions(time_limit=60), COST_SCALE, start=True)
    restore(model, start)
    made = in_processes(monkeypatch)
    monkeypatch.setattr(highs, "PROCESS_COLUMNS", 10**9)  # far above the model: only the work sends it apart
    done = []
    apart = run_highs(model, SolveOptions(time_limit=60), COST_SCALE, start=True,
                      meanwhile=lambda: done.append(len(made)))
    assert done == [1] and len(made) == 1 and made[0].process.returncode == 0
    assert apart.status == here.status == "optimal"
    assert apart.objective == pytest.approx(here.objective, rel=1e-9)
    restore(model, start)
    unlimited = run_highs(model, SolveOptions(), COST_SCALE, start=True, meanwhile=lambda: done.append(len(made)))
    assert done == [1, 2] and len(made) == 2 and made[1].process.returncode == 0
    assert unlimited.status == "optimal" and unlimited.objective == pytest.approx(here.objective, rel=1e-9)

def test_a_process_past_its_deadline_is_stopped_and_the_start_kept(monkeypatch, instance):
    """--time-limit is a wall-clock promise whatever HiGHS does: a run in its own process that has not ended by
    its deadline (here the main run's process, presolve off, sleeps; the greedy completion's, presolve on, runs for
    real) is stopped there, and the solve returns the greedy design, unproven, with the LP relaxation's bound, within
    the limit and GUARD."""
    import designer.solve.highs as highs

    inputs, data, model = instance
    main_run_sleeps = ("import sys, time, json; from pathlib import Path; "
                       "from designer.solve.process import run; folder = Path(sys.argv[1]); "
                       "main = json.loads((folder / 'request.json').read_text())['options']['presolve'] == 'off'; "
                       "time.sleep(60) if main else run(folder)")
    made = in_processes(monkeypatch, (sys.executable, "-c", main_run_sleeps))
    limit, outcomes = 8.0, []
    clock = run.Clock(limit)
    outcome = run.cost_solve(model, inputs, data, SolveOptions(time_limit=limit), clock, lambda _line: None, outcomes)
    assert time.perf_counter() - clock.start <= limit * (1 + highs.GUARD) + 0.5 + 0.5  # 0.5 s: stopping, reading
    assert made[-1].process.returncode != 0  # the main run's process, stopped
    assert outcome.status == "feasible" and outcome.termination.endswith("greedy design kept")
    assert outcome.bound is not None and outcome.gap is not None and outcome.bound <= outcome.objective
    assert pyo.value(model.obj) * COST_SCALE == pytest.approx(outcome.objective, rel=1e-9)


def test_the_limit_holds_while_the_modes_are_prepared(monkeypatch):
    """The time limit covers the modes' enumeration and pruning too (3 s on this example, 92,448 fabrics; none
    kept from an earlier preparation): a limit that runs out there ends the solve at once as a limit reached
    (NoSolution, saying where), not after."""
    from collections import OrderedDict

    import designer.solve.highs as highs
    import designer.solve.prepare as prepare
    from designer.errors import NoSolution

    monkeypatch.setattr(prepare, "PREPARED", OrderedDict())
    inputs = load_inputs(EXAMPLE)
    limit = 1.0
    began = time.perf_counter()
    with pytest.raises(NoSolution, match="while the fabric modes were prepared"):
        run.solve(inputs, SolveOptions(time_limit=limit))
    assert time.perf_counter() - began <= limit * (1 + highs.GUARD) + 0.5  # a HiGHS run's deadline


def test_the_limit_holds_while_the_model_is_built(instance):
    """The model's build looks at the clock before each constraint group: past the deadline it stops (PastDeadline,
    saying how far it got), and the solve says the limit ran out there (NoSolution)."""
    from designer.errors import NoSolution
    from models.modes import PastDeadline

    _inputs, data, _model = instance
    with pytest.raises(PastDeadline, match="define_sets"):
        build_model(data, ends=time.perf_counter() - 1)
    with pytest.raises(NoSolution, match="while the model was built"):
        run.within(run.Clock(1e-9), "the model was built", build_model, data)
    assert build_model(data, ends=time.perf_counter() + 600).nvariables() == _model.nvariables()


def test_a_process_past_its_settle_point_stops_once_it_holds_a_design():
    """wait(until, settle): a run holding no design at its settle point goes on, and is stopped as soon as it saves
    one (here 1.5 s after it starts, settle at 0.3 s); one that never saves one runs to ``until``."""
    import numpy as np

    import designer.solve.process as process

    lp = highspy.Highs()
    lp.addVars(2, np.array([0.0, 0.0]), np.array([4.0, 4.0]))
    later = ("import sys, time, numpy; from pathlib import Path; from designer.solve.process import save; "
             "time.sleep(1.5); save(Path(sys.argv[1]) / 'best.npz', objective=7.0, bound=5.0, values=numpy.ones(2)); "
             "time.sleep(60)")
    for command, stops_after, objective in (((sys.executable, "-c", later), (1.5, 8.0), 7.0),
                                            ((sys.executable, "-c", "import time; time.sleep(60)"), (3.0, 8.0), None)):
        with type("Settled", (process.HighsProcess,), {"command": command})(lp.getLp(), {}) as apart:
            began = time.perf_counter()
            answer = apart.wait(began + 3.0, settle=began + 0.3)
            waited = time.perf_counter() - began
        assert answer["stopped"] and answer["objective"] == objective
        assert stops_after[0] <= waited < stops_after[1]


def test_a_stopped_process_answers_with_the_best_design_it_saved(tmp_path):
    """A run stopped at its deadline answers with the last design and bound it saved (status kInterrupt,
    stopped); one that saved none answers without a design, and one that died answers a solver error."""
    import numpy as np

    import designer.solve.process as process

    lp = highspy.Highs()
    lp.addVars(2, np.array([0.0, 0.0]), np.array([4.0, 4.0]))
    saves = ("import sys, time, numpy; from pathlib import Path; from designer.solve.process import save; "
             "folder = Path(sys.argv[1]); save(folder / 'best.npz', objective=7.0, bound=5.0, values=numpy.ones(2)); "
             "numpy.save(folder / 'bound.npy', 6.0); time.sleep(60)")
    for command, expected in (((sys.executable, "-c", saves), (7.0, 6.0, [1.0, 1.0])),
                              ((sys.executable, "-c", "import time; time.sleep(60)"), (None, None, None))):
        with type("Stopped", (process.HighsProcess,), {"command": command})(lp.getLp(), {}) as apart:
            folder = Path(apart.folder.name)
            waited = time.perf_counter()
            while expected[0] is not None and not (folder / "bound.npy").exists() and time.perf_counter() < waited + 30:
                time.sleep(0.05)
            answer = apart.wait(time.perf_counter() + 0.2)
        assert answer["stopped"] and answer["status"] == "kInterrupt"
        values = None if answer["values"] is None else list(answer["values"])
        assert (answer["objective"], answer["bound"], values) == expected
    died = type("Dies", (process.HighsProcess,), {"command": (sys.executable, "-c", "raise SystemExit(3)")})
    with died(lp.getLp(), {}) as apart:
        answer = apart.wait(time.perf_counter() + 30)
    assert not answer["stopped"] and answer["status"] == "kSolveError" and answer["values"] is None


def test_greedy_plan_fills_a_site_no_further_than_its_fiber_serves():
    """The default example: atlanta is the cheapest site per MW, but its one route (16 fiber pairs of
    32 x 800G = 409.6 Tb/s) serves 409,600 / (0.125 x 8 x 400) = 1,024 nodes: the plan puts no more there (it
    filled atlanta's power before and found no route for its capacity)."""
    inputs = load_inputs(EXAMPLE.parent / "default.xlsx")
    plan = greedy_plan(replace(inputs, project={**inputs.project, "budget_usd": None}), prepare_data(inputs).modes)
    assert plan.cost is not None, plan.reason
    assert plan.sites["atlanta"]["nodes"] <= 1024


def test_a_start_highs_matches_or_proves_optimal_keeps_the_proof():
    """better_of: HiGHS's design no worse than the start up to float rounding is HiGHS's answer (status and all);
    a start kept below a proven optimum is optimal (its gap to the same bound is smaller); below an unproven one,
    feasible with its own gap."""
    from designer.solve.start import better_of

    start = Outcome("feasible", 159_240.14, None, None, 0.0, "greedy")
    rounding = Outcome("optimal", 159_240.14 * (1 + 1e-15), 159_240.14, 1.8e-16, 1.0, "convergenceCriteriaSatisfied")
    assert better_of(rounding, start, []) is rounding
    proven = Outcome("optimal", 159_250.0, 159_240.0, 6.3e-5, 1.0, "convergenceCriteriaSatisfied")
    kept = better_of(proven, start, [])
    assert kept.status == "optimal" and kept.objective == 159_240.14
    assert kept.gap == pytest.approx(0.14 / 159_240.14) and kept.termination.endswith("greedy design kept")
    stopped = Outcome("feasible", 170_000.0, 150_000.0, 0.1176, 1.0, "timeLimit")
    kept = better_of(stopped, start, [])
    assert kept.status == "feasible" and kept.gap == pytest.approx((159_240.14 - 150_000) / 159_240.14)


def test_greedy_grows_from_another_site_when_the_cheapest_is_cut_off(tmp_path):
    """Three sites of 4 nodes each, 8 nodes wanted, max_site_rtt_ms 1: a (the cheapest per MW) reaches b only over
    a 1,000 km route (RTT 9.8 ms), b and c are 100 km apart. Grown from a, the plan stops at a alone (no site is
    joined to it within the limit); grown from the next cheapest, b and c hold the job. The model agrees: b and c."""
    from designer.inputs.writer import write_workbook
    from tests.test_model import design, opened, two_sites

    book = two_sites(max_site_rtt_ms=1)
    book["sites"] = [dict(s, name=n, fixed_cost_usd=fee) for s, n, fee in
                     zip(book["sites"] * 2, ("a", "b", "c"), (100, 5_000, 6_000))]
    far, near = dict(book["routes"][0]), dict(book["routes"][0])
    far.update(site_a="a", site_b="b", distance_km=1_000)
    near.update(site_a="b", site_b="c")
    book["routes"] = [far, near]
    inputs = load_inputs(write_workbook(tmp_path / "three.xlsx", book))
    plan = greedy_plan(inputs, prepare_data(inputs).modes)
    assert plan.cost is not None, plan.reason
    assert sorted(plan.sites) == ["b", "c"]
    assert sorted(opened(design(tmp_path, book))) == ["b", "c"]


@pytest.mark.parametrize("beside", [True, False])
def test_the_lp_relaxation_bounds_the_optimum_and_guides_a_start(monkeypatch, instance, beside):
    """The LP relaxation, solved on the model the greedy completion translated (the plan's fixed decisions freed
    again) in its own process or, small, in this one, is the model's own LP: its cost equals that of the model with every integer
    domain relaxed, solved here, and is below HiGHS's proven optimum; completing its sites (open where it opens
    them fully, closed where it leaves them closed) gives a design at or above the optimum, opening the LP's fully
    open sites, and leaves no variable fixed."""
    import designer.solve.relaxation as relaxation

    _inputs, data, model = instance
    monkeypatch.setattr(relaxation, "BESIDE_COLUMNS", 0 if beside else 10**9)
    optimum = run_highs(model, SolveOptions(), COST_SCALE)
    relaxed_model = model.clone()
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(relaxed_model)
    lp_here = run_highs(relaxed_model, SolveOptions(), COST_SCALE)
    with Relaxation(model, list(model.open.values()) + list(model.y.values()), None, COST_SCALE) as lp:
        assert greedy_start(model, data, SolveOptions(), None, translated=lp.launch) is not None
        relaxed = lp.result()
    assert (lp.process is not None) == beside
    assert relaxed.status == "optimal" and relaxed.bound == pytest.approx(lp_here.objective, rel=1e-9)
    assert relaxed.bound <= optimum.bound * (1 + 1e-9) and relaxed.bound <= optimum.objective
    assert [model.open[s].value for s in model.S] == pytest.approx([relaxed_model.open[s].value for s in model.S],
                                                                   abs=1e-6)
    full = {s for s in model.S if model.open[s].value >= 1 - 1e-6}
    found = relaxation_start(model, SolveOptions(), cutoff=None, tried=None)
    if found is not None:  # the LP fixes sites on this example
        assert found.status == "feasible" and found.objective >= optimum.objective * (1 - 1e-4)
        assert full <= {s for s in model.S if round(model.open[s].value) == 1}
    assert not any(var.fixed for var in model.component_data_objects(ctype=type(model.open[next(iter(model.S))])))


def test_an_lp_process_that_does_not_answer_is_stopped_at_its_limit(monkeypatch, instance):
    """The LP's process is given the time left: one that has not answered by then (and GUARD) is stopped, and the
    solve goes on without a bound; one never launched (no greedy completion) gives no outcome."""
    import designer.solve.relaxation as relaxation

    _inputs, _data, model = instance
    sleeper = type("Sleeper", (relaxation.HighsProcess,),
                   {"command": (sys.executable, "-c", "import time; time.sleep(60)")})
    monkeypatch.setattr(relaxation, "HighsProcess", sleeper)
    monkeypatch.setattr(relaxation, "GUARD", 0.2)
    monkeypatch.setattr(relaxation, "BESIDE_COLUMNS", 0)
    with Relaxation(model, [], 0.3, COST_SCALE) as lp:
        assert lp.result() is None
        run_highs(model, SolveOptions(), COST_SCALE, translated=lp.launch)
        began = time.perf_counter()
        stopped = lp.result()
        assert time.perf_counter() - began < 5
        assert stopped.status == "failed" and stopped.bound is None and lp.process.process.returncode is not None


def test_a_start_is_settled_by_the_lp_bound_only_within_the_gap():
    from designer.solve.start import settled

    start = Outcome("feasible", 101.0, None, None, 1.0, "start")
    assert settled(start, 100.0, 0.01, True).status == "optimal"  # (101 - 100) / 101 < 1%
    assert settled(start, 100.0, 0.01, True).gap == pytest.approx(1 / 101)
    assert settled(start, 100.0, 0.005, True) is None  # a search may close the gap
    late = settled(start, 100.0, 0.005, False)  # no time left: kept, unproven, with its gap
    assert late.status == "feasible" and late.bound == 100.0 and late.gap == pytest.approx(1 / 101)
    assert settled(start, None, 0.01, False).status == "feasible" and settled(start, None, 0.01, True) is None
    assert settled(None, 100.0, 0.01, False) is None


def test_no_highs_run_past_a_limit_the_starts_used_up(monkeypatch, instance):
    """When the greedy completion uses the whole --time-limit without a design, the solve stops there with the
    limit's reason (NoSolution) and starts no HiGHS run with a fresh limit."""
    from designer.errors import NoSolution

    inputs, _data, _model = instance
    runs = []

    def slow_greedy(*_args, **_kwargs):
        time.sleep(1.1)
        return None

    monkeypatch.setattr(run, "greedy_start", slow_greedy)
    monkeypatch.setattr(run, "run_highs", lambda *a, **kw: runs.append(a) or run_highs(*a, **kw))
    with pytest.raises(NoSolution, match="time limit"):
        run.solve(inputs, SolveOptions(time_limit=1.0))
    assert runs == []


def test_no_highs_run_whose_translation_would_overrun_the_limit(monkeypatch, instance):
    """A HiGHS run spends the model's translation before HiGHS starts: Pyomo's time of the last run is recorded,
    and a run that would spend the time left translating is not started. Here every run is said to take an hour to
    translate: the solve keeps the completed plan (the completion, started before any translation was timed, is
    the only HiGHS run), unproven, within the time limit."""
    import designer.solve.highs as highs

    inputs, _data, model = instance
    run_highs(model, SolveOptions(mip_gap=1.0), COST_SCALE)
    assert 0 < highs.translation_seconds(model) < 60
    clock = run.Clock(10.0)
    assert clock.left(SolveOptions(), setup=1.0).time_limit == pytest.approx(10.0, abs=0.5)
    assert clock.left(SolveOptions(), setup=10.0) is None
    runs = []
    monkeypatch.setattr(run, "translation_seconds", lambda _model: 3600.0)
    monkeypatch.setattr(run, "run_highs", lambda *a, **kw: runs.append(a) or run_highs(*a, **kw))
    monkeypatch.setattr(run, "relaxation_start", lambda *a, **kw: runs.append(a))
    began = time.perf_counter()
    solution = run.solve(inputs, SolveOptions(time_limit=60.0))
    assert time.perf_counter() - began < 66 and runs == []
    assert solution["status"] == "feasible" and audit(solution) == []


def test_no_lp_process_where_its_file_cannot_be_written(monkeypatch, tmp_path, instance):
    """A temporary folder that cannot be made leaves the solve without the LP's bound, never without its design:
    the greedy completion goes on, the LP gives no outcome, and the solve answers as without a greedy plan's LP."""
    import tempfile

    import designer.solve.relaxation as relaxation

    inputs, data, model = instance
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing" / "folder"))
    monkeypatch.setattr(relaxation, "BESIDE_COLUMNS", 0)
    with Relaxation(model, list(model.open.values()) + list(model.y.values()), None, COST_SCALE) as lp:
        start = greedy_start(model, data, SolveOptions(), None, translated=lp.launch)
        assert start is not None and lp.launched and lp.process is None
        assert lp.result() is None
    solution = run.solve(inputs, SolveOptions(mip_gap=0.01))
    assert solution["status"] == "optimal" and audit(solution) == []


def test_no_start_when_the_limit_is_used_up_before_the_cost_stage(monkeypatch, instance):
    """A cost stage that begins with no time left (min_latency's probes took it) starts no greedy completion with
    a fresh limit: it stops with the limit's reason."""
    from designer.errors import NoSolution

    inputs, data, model = instance
    starts = []
    monkeypatch.setattr(run, "greedy_start", lambda *a, **kw: starts.append(a))
    clock = run.Clock(1.0, start=time.perf_counter() - 2.0)
    with pytest.raises(NoSolution, match="time limit"):
        run.cost_solve(model, inputs, data, SolveOptions(time_limit=1.0), clock, lambda _m: None, [])
    assert starts == []


def test_translation_is_pyomos_with_one_walk_a_row(instance):
    """GuardedHighs adds the rows in one walk each (Pyomo's linear repn visitor); the translated model is the one
    Pyomo's own HiGHS interface makes of the scale-across example, with a third of its site-mode binaries fixed:
    the same columns in the same order with the same bounds, integrality and costs, the same rows with the same
    bounds and nonzeros, the coefficients equal to the last bits that the order of a sum moves. A fixed variable
    stays a column (its bounds its value) and is fixed again afterwards."""
    from pyomo.contrib.solver.solvers.highs import Highs

    import designer.solve.highs as highs
    from models.network import set_objective

    _inputs, _data, model = instance
    set_objective(model)
    fixed = [var for k, var in enumerate(model.y.values()) if k % 3 == 0 and not var.fixed]
    for var in fixed:
        var.fix(1.0 if var.value and var.value > 0.5 else 0.0)
    try:
        ours, our_columns = highs.translate(model)
        pyomos = Highs(treat_fixed_vars_as_params=False)
        pyomos.set_instance(model)
        assert all(var.fixed for var in fixed)
    finally:
        for var in fixed:
            var.unfix()
    theirs, their_columns = pyomos._solver_model, pyomos._pyomo_var_to_solver_var_map
    assert our_columns == their_columns
    a, b = ours.getLp(), theirs.getLp()
    for name in ("col_cost_", "col_lower_", "col_upper_", "row_lower_", "row_upper_"):
        assert list(getattr(a, name)) == list(getattr(b, name)), name
    assert list(a.integrality_) == list(b.integrality_)
    assert a.offset_ == pytest.approx(b.offset_, rel=1e-12)
    fixed_at = [our_columns[id(var)] for var in fixed]
    assert [a.col_lower_[c] for c in fixed_at] == [a.col_upper_[c] for c in fixed_at]
    ma, mb = a.a_matrix_, b.a_matrix_
    assert ma.format_ == mb.format_
    assert list(ma.start_) == list(mb.start_) and list(ma.index_) == list(mb.index_)
    assert ma.value_ == pytest.approx(list(mb.value_), rel=1e-12)


def test_the_greedy_plan_prices_its_dci_attachments(tmp_path):
    """The 5-site bench instance: the greedy planner's cost had left out the DCI routers' attachment cables
    (each a node's NIC links on leaf ports) and fell $8,128 below the optimum the brute force and the MILP agree on
    ($2,696,158, bench part (d) 'BUG'); a plan's cost is at least the optimum."""
    from designer.inputs.writer import write_workbook
    from designer.tools.bench.instances import tiny_workbook

    path = tmp_path / "five.xlsx"
    write_workbook(path, tiny_workbook(5))
    inputs = load_inputs(path)
    optimum = run.solve(inputs, SolveOptions(mip_gap=1e-6))["objective_usd"]
    assert optimum == pytest.approx(2_696_158, abs=1)
    assert greedy_plan(inputs).cost >= optimum
