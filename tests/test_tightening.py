"""The model's tightening rows (models.network.define_tightening): valid for every integer design, kept for the
solve only where they raise the LP relaxation's bound by more than the gap asked (designer.solve.relaxation)."""

from __future__ import annotations

from types import SimpleNamespace

import pyomo.environ as pyo
import pytest

from designer.inputs.workbook import load_inputs
from designer.inputs.writer import write_workbook
from designer.solve.highs import SolveOptions, run_highs
from designer.solve.prepare import prepare_data
from designer.solve import relaxation
from designer.solve.relaxation import Relaxation
from designer.tools.bench.instances import tiny_workbook
from models.network import COST_SCALE, build_model, demand_covers, set_objective
from tests.conftest import example_model


def test_demand_covers_by_hand():
    """Sites of 7, 5, 8 and 25 nodes (8 GPUs a node; one of 4 GPUs holds no node), 144 GPUs = 18 nodes. The
    maximal sets short of 18: {a, c} (15: 3 left), {a, b} (12: 6 left), {b, c} (13: 5 left); {a} (7) is not
    maximal ({a, b} is short too), and any set with d holds 18. Each leaves its shortfall r to the sites outside
    it, each counted at most r: a cover of 3 counts d (25 nodes) as 3."""
    gpus = {"a": 56, "b": 40, "c": 64, "d": 200, "e": 4}
    data = SimpleNamespace(widest_gpus=lambda: gpus, node={"gpus_per_node": 8},
                           inputs=SimpleNamespace(project={"gpus_required": 144}))
    covers = sorted(demand_covers(data), key=lambda cover: cover[1])
    assert covers == [({"b": 3, "d": 3}, 3), ({"a": 5, "d": 5}, 5), ({"c": 6, "d": 6}, 6)]


def lp_bound(model, tight: bool) -> float:
    """The LP relaxation's cost with the tightening rows on or off."""
    relaxed = model.clone()
    relaxed.tight.activate() if tight else relaxed.tight.deactivate()
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(relaxed)
    outcome = run_highs(relaxed, SolveOptions(), COST_SCALE)
    assert outcome.status == "optimal"
    return outcome.objective


@pytest.fixture(scope="module")
def six_sites(tmp_path_factory):
    path = tmp_path_factory.mktemp("six") / "six.xlsx"
    write_workbook(path, tiny_workbook(6))
    model = build_model(prepare_data(load_inputs(path)))
    set_objective(model)
    return model


def test_the_rows_cut_no_design_and_raise_the_bound(six_sites):
    """The 6-site bench instance (brute force: $3,774,705): the rows raise the LP's bound by more than 4% and the
    MILP's optimum is the same with and without them."""
    model = six_sites
    loose, tight = lp_bound(model, False), lp_bound(model, True)
    assert tight > 1.04 * loose
    optima = []
    for on in (False, True):
        solved = model.clone()
        solved.tight.activate() if on else solved.tight.deactivate()
        outcome = run_highs(solved, SolveOptions(mip_gap=1e-6), COST_SCALE)
        assert outcome.status == "optimal"
        optima.append(outcome.objective)
    assert optima[0] == pytest.approx(optima[1], rel=1e-6)
    assert optima[1] == pytest.approx(3_774_705, abs=1)
    assert tight <= optima[1]


@pytest.mark.parametrize("gap, kept", [(1e-4, True), (0.1, False)])
def test_the_rows_are_kept_where_they_raise_the_bound_more_than_the_gap(six_sites, gap, kept, monkeypatch):
    """The LP solved here (a small model) is solved without and with the rows; they stay active, and its bound is
    theirs, only where the rise exceeds the gap asked (about 5% here). The connectivity cuts' rounds, which follow
    each of the two solves, are left out here (tests/test_connectivity)."""
    monkeypatch.setattr(relaxation, "cut_spec", lambda *_args: None)
    model = six_sites.clone()
    freed = list(model.open.values()) + list(model.y.values())
    with Relaxation(model, freed, None, COST_SCALE, gap) as lp:
        assert lp.launch_here()
        bound = lp.result().bound
    assert model.tight.active == kept
    assert bound == pytest.approx(lp_bound(six_sites, kept), rel=1e-6)


def test_the_default_example_goes_without_them():
    """On the default example the rows move the LP's bound by less than the default gap (1e-4): left out, so the
    solve's path is the one without them."""
    _, _, model = example_model("default")
    loose, tight = lp_bound(model, False), lp_bound(model, True)
    assert loose <= tight <= loose * (1 + 1e-4)
    freed = list(model.open.values()) + list(model.y.values())
    with Relaxation(model, freed, None, COST_SCALE, 1e-4) as lp:
        assert lp.launch_here()
    assert not model.tight.active


def test_a_model_without_the_rows_still_gets_its_lp(tmp_path):
    """A model built without bounds (the elastic one's way) has no tightening block: its small LP is solved here as
    before (launch_here had marked the LP launched before launching it, and none was solved)."""
    path = tmp_path / "six.xlsx"
    write_workbook(path, tiny_workbook(6))
    model = build_model(prepare_data(load_inputs(path)), bounds=False)
    set_objective(model)
    assert not hasattr(model, "tight")
    freed = list(model.open.values()) + list(model.y.values())
    with Relaxation(model, freed, None, COST_SCALE, 1e-4) as lp:
        assert lp.launch_here()
        outcome = lp.result()
    assert outcome is not None and outcome.status == "optimal"
