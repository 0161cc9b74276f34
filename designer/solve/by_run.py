"""Explaining a design chosen by a training objective (min_cost_per_run, max_tokens_per_s): a relaxation or an
alternative is the workbook's own search (designer.solve.throughput) run again on the changed workbook, and the
designs are compared by the run, not by their capex: the cost of the run saved, or the tokens per second gained.
The search is exact up to its step levels (designer.solve.throughput.LEVEL_SHARE), so a change binds when the run
improves by more than that share."""

from __future__ import annotations

import time

from designer.errors import Infeasible, NoSolution
from designer.inputs.schema import TRAINING_OBJECTIVES
from designer.solve.highs import SolveOptions
from designer.solve.resolve import Variant
from designer.solve.throughput import LEVEL_SHARE

RUN_KEYS = {"min_cost_per_run": "cost_per_run_usd", "max_tokens_per_s": "tokens_per_s"}


def run_key(inputs_or_solution) -> str | None:
    """The training block's figure the objective ranks by (None for min_cost and min_latency)."""
    project = getattr(inputs_or_solution, "project", None)
    objective = project.get("objective") if project is not None else inputs_or_solution.get("objective")
    return RUN_KEYS[objective] if objective in TRAINING_OBJECTIVES else None


def searched(inputs, options: SolveOptions) -> Variant:
    """The training objective's answer for ``inputs``: its design (the whole search), or why none exists."""
    from designer.solve.run import solve

    began = time.perf_counter()
    try:
        solution = solve(inputs, SolveOptions(mip_gap=options.mip_gap, threads=options.threads))
    except Infeasible as error:
        return Variant("infeasible", why=error.reason, seconds=time.perf_counter() - began)
    except NoSolution as error:
        return Variant("no_solution", why=str(error), seconds=time.perf_counter() - began)
    return Variant(solution["status"], float(solution["objective_usd"]), solution["solver"].get("bound_usd"),
                   solution, seconds=time.perf_counter() - began)


def run_gain(key: str, chosen: float, found: float) -> tuple[float, bool]:
    """(gain, binding): the run's cost saved (cost_per_run_usd) or tokens per second gained (tokens_per_s) by the
    found design over the chosen one; binding when the gain is more than LEVEL_SHARE of the chosen figure."""
    gain = chosen - found if key == "cost_per_run_usd" else found - chosen
    return gain, gain > LEVEL_SHARE * abs(chosen)
