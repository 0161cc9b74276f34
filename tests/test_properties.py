"""Properties of every design the solver emits, and metamorphic relations between optima, on random tiny
valid workbooks (tests/oracle.py ``tiny_workbooks``).

- Invariants read from the Solution dict alone: the BOM adds up to the capex, power and space within
  each site's caps, the GPUs, the budget, the limits on latency and RTT, fiber, channels, amplifiers,
  site counts; and the independent audit (designer.audit.checks) finds nothing.
- Metamorphic: more budget never raises the optimal cost; more GPUs never lower it; a tighter latency or
  RTT limit never lowers it; removing a catalog item never lowers it; permuting the rows of any sheet
  never changes it. "Never lowers" includes feasibility: if the tighter workbook has a design, so has
  the looser one. Objective min_cost throughout (with min_latency, cost is only a tie-break).
"""

from __future__ import annotations

import copy
import itertools
import math
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from oracle import fabrics, tiny_workbooks

from designer.errors import Infeasible
from designer.inputs.workbook import load_inputs
from designer.inputs.writer import write_workbook
from designer.solve.run import SolveOptions, solve

EXACT = SolveOptions(mip_gap=1e-9, **({"diagnose": False} if "diagnose" in SolveOptions.__dataclass_fields__ else {}))
INVARIANT_EXAMPLES = 60
METAMORPHIC_EXAMPLES = 30
min_cost_books = tiny_workbooks(min_latency=False)


def solved(tmp_path, book: dict, name: str) -> dict | None:
    try:
        return solve(load_inputs(write_workbook(tmp_path / f"{name}.xlsx", book)), EXACT)
    except Infeasible:
        return None


def cost(solution: dict | None) -> float:
    return math.inf if solution is None else solution["objective_usd"]


def opened(solution: dict) -> list[dict]:
    return [s for s in solution["sites"] if s["open"]]


# --------------------------------------------------------------------------------------------------
# Invariants of every emitted design
# --------------------------------------------------------------------------------------------------

def invariant_violations(solution: dict, book: dict) -> list[str]:
    p = book["project"]
    out = []

    def check(ok: bool, message: str) -> None:
        if not ok:
            out.append(message)

    def close(a: float, b: float) -> bool:
        return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))

    totals = solution["totals"]
    bom = sum(line["extended_usd"] for line in solution["bom"])
    check(close(bom, totals["capex_usd"]), f"BOM ${bom:,.2f} != capex ${totals['capex_usd']:,.2f}")
    check(close(solution["objective_usd"], totals["capex_usd"] + totals.get("energy_usd", 0.0)),
          "objective != capex + energy")
    for line in solution["bom"]:
        check(close(line["extended_usd"], line["quantity"] * line["unit_price_usd"]), f"BOM line {line['item']}")
    check(totals["gpus"] >= p["gpus_required"], f"{totals['gpus']} GPUs < {p['gpus_required']} required")
    if p.get("budget_usd") is not None:
        check(solution["objective_usd"] <= p["budget_usd"] * (1 + 1e-9), "over budget")
    sites = {s["name"]: s for s in book["sites"]}
    open_sites = opened(solution)
    check(totals["sites_open"] == len(open_sites), "sites_open")
    check(p.get("min_sites", 1) <= len(open_sites) <= p.get("max_sites", len(sites)), "site count")
    for s in solution["sites"]:
        status = sites[s["name"]]["status"]
        check(s["open"] or status != "required", f"required site {s['name']} closed")
        check(not s["open"] or status != "excluded", f"excluded site {s['name']} open")
    for s in open_sites:
        row = sites[s["name"]]
        check(s["power_mw"] <= row["power_mw"] * (1 + 1e-7), f"{s['name']}: {s['power_mw']} MW > {row['power_mw']}")
        check(close(s["power_mw"], s["it_power_mw"] * row["pue"]), f"{s['name']}: PUE")
        check(1 <= s["nodes"] <= row["max_nodes"], f"{s['name']}: {s['nodes']} nodes")
        check(s["gpus"] == s["nodes"] * book["node_types"][0]["gpus_per_node"], f"{s['name']}: GPUs")
        if p.get("max_fabric_latency_us") is not None:
            check(s["fabric_latency_us"] <= p["max_fabric_latency_us"] + 1e-9, f"{s['name']}: latency")
        if len(open_sites) > 1:
            node = book["node_types"][0]
            need = p["dci_ratio"] * s["nodes"] * node["nics_per_node"] * node["nic_gbps"]
            check(s.get("dci_capacity_gbps", 0.0) >= need - 1e-6, f"{s['name']}: dci_ratio")
    check(close(totals["power_mw"], sum(s["power_mw"] for s in open_sites)), "total power")
    names = {s["name"] for s in open_sites}
    for link in solution["links"]:
        check({link["site_a"], link["site_b"]} <= names, "a link to a closed site")
        check(link["fiber_pairs"] <= link["fiber_pairs_available"], "fiber pairs")
        check(link["wavelengths"] <= link["channels_per_pair"] * link["fiber_pairs"], "channels")
        check(link["coherent_ports"] == 2 * link["wavelengths"], "coherent ports")
        route = next(r for r in book["routes"] if {r["site_a"], r["site_b"]} == {link["site_a"], link["site_b"]})
        per_pair = max(0, math.ceil(route["distance_km"] / route.get("amplifier_spacing_km", 80)) - 1)
        check(link["amplifiers"] == per_pair * link["fiber_pairs"], "amplifiers")
        if p.get("max_site_rtt_ms") is not None:
            check(link["rtt_ms"] <= p["max_site_rtt_ms"] + 1e-12, "RTT")
    check(len(open_sites) == 1 or len(solution["links"]) >= len(open_sites) - 1, "open sites not connected")
    return out


def test_every_design_meets_the_invariants_and_the_audit(tmp_path):
    try:
        from designer.audit.checks import audit
    except ImportError:
        audit = None
    checked = []

    @settings(max_examples=INVARIANT_EXAMPLES)
    @given(st.one_of(tiny_workbooks(), tiny_workbooks(multi_site=True)))
    def check(book):
        solution = solved(tmp_path, book, "design")
        if solution is None:
            return
        assert invariant_violations(solution, book) == []
        if audit is not None:
            assert audit(solution) == []
        checked.append(len(opened(solution)))

    check()
    print(f"\ninvariants{' and audit' if audit else ''}: {len(checked)} designs of {INVARIANT_EXAMPLES} workbooks "
          f"({sum(n > 1 for n in checked)} multi-site)")
    assert len(checked) >= INVARIANT_EXAMPLES // 2


# --------------------------------------------------------------------------------------------------
# Metamorphic relations
# --------------------------------------------------------------------------------------------------

def relation(name: str, books, body, examples: int = METAMORPHIC_EXAMPLES, least: float = 0.25) -> None:
    """Run ``body(tmp, book, data)`` on ``examples`` workbooks that have a design (``base`` rejects the
    others); it returns how the two optima compared. At least ``least`` of the examples must compare two
    designs (else the relation was barely tested)."""
    seen: Counter = Counter()
    tmp = Path(tempfile.mkdtemp(prefix=f"designer-{name}-"))

    @settings(max_examples=examples)
    @given(books, st.data())
    def check(book, data):
        seen[body(tmp, book, data)] += 1

    check()
    print(f"\n{name}: " + ", ".join(f"{k}: {v}" for k, v in sorted(seen.items())))
    assert seen["both feasible"] >= least * examples, seen


def base(tmp, book: dict) -> dict:
    """The optimum of the workbook as drawn; examples without one are not counted."""
    solution = solved(tmp, book, "base")
    assume(solution is not None)
    return solution


def no_cheaper(tighter: dict | None, looser: dict | None, what: str) -> str:
    """The optimum of the more constrained workbook is not below the looser one's (infeasible = infinite)."""
    if tighter is None:
        return "tighter infeasible"
    assert cost(looser) <= cost(tighter) * (1 + 1e-6) + 1e-6, (
        f"{what}: {cost(tighter):,.2f} with the tighter workbook, {cost(looser):,.2f} with the looser")
    return "both feasible"


def test_more_budget_never_raises_the_cost():
    def body(tmp, book, data):
        free = copy.deepcopy(book)
        free["project"].pop("budget_usd", None)
        unlimited = base(tmp, free)
        scale = data.draw(st.sampled_from([0.6, 0.9, 1.0, 1.1, 2.0]), label="budget / optimum")
        budget = book["project"].get("budget_usd") or cost(unlimited) * scale
        tight, loose = copy.deepcopy(free), copy.deepcopy(free)
        tight["project"]["budget_usd"] = budget
        loose["project"]["budget_usd"] = budget * 1.5
        at_tight, at_loose = solved(tmp, tight, "tight"), solved(tmp, loose, "loose")
        no_cheaper(at_loose, unlimited, "no budget")
        return no_cheaper(at_tight, at_loose, "budget x 1.5")

    relation("budget", min_cost_books, body)


def test_more_gpus_never_lower_the_cost():
    def body(tmp, book, data):
        more = data.draw(st.sampled_from([1, 2, 3, 8]), label="more GPUs")
        bigger = copy.deepcopy(book)
        bigger["project"]["gpus_required"] += more
        return no_cheaper(solved(tmp, bigger, "more"), base(tmp, book), f"{more} more GPUs")

    # the tiny books are drawn near what their sites hold (and multi-site ones lose leaf ports to the DCI
    # attachments): a fifth or so still hold a few GPUs more, enough to compare two designs 10 times or more
    relation("gpus_required", min_cost_books, body, examples=50, least=0.2)


def test_tighter_latency_limit_never_lowers_the_cost():
    """A limit just under the optimum's worst fabric latency: at the latency of a faster fabric (the oracle's
    enumeration lists them), or 1 ns under the optimum's (binding)."""
    def body(tmp, book, data):
        optimum = base(tmp, book)
        worst = max(s["fabric_latency_us"] for s in opened(optimum))
        faster = sorted({f.latency_us for f in fabrics(load_inputs(tmp / "base.xlsx"))} - {worst})
        levels = [x for x in reversed(faster) if x < worst - 1e-9] or [worst - 1e-3]  # the nearest first
        limit = data.draw(st.sampled_from(levels), label="limit (us)")
        tighter = copy.deepcopy(book)
        tighter["project"]["max_fabric_latency_us"] = limit
        return no_cheaper(solved(tmp, tighter, "tighter"), optimum, f"max_fabric_latency_us {limit:g}")

    # a faster fabric rarely holds the job as cheaply or at all: more examples, fewer comparisons expected
    relation("max_fabric_latency_us", min_cost_books, body, examples=40, least=0.1)


def test_tighter_rtt_limit_never_lowers_the_cost():
    """A limit just above the RTT of a route, or of two routes in a row, below the workbook's own limit."""
    def body(tmp, book, data):
        optimum = base(tmp, book)
        rtts = [2 * 4.9 * r["distance_km"] / 1e3 for r in book["routes"]]
        given = book["project"].get("max_site_rtt_ms") or math.inf
        levels = sorted({x * 1.0001 for x in rtts + [a + b for a, b in itertools.combinations(rtts, 2)]
                         if x * 1.0001 < given}, reverse=True)
        if not levels:
            return "no limit to try"
        limit = data.draw(st.sampled_from(levels), label="max_site_rtt_ms")
        tighter = copy.deepcopy(book)
        tighter["project"]["max_site_rtt_ms"] = limit
        verdict = no_cheaper(solved(tmp, tighter, "tighter"), optimum, f"max_site_rtt_ms {limit:g}")
        return verdict if optimum["links"] else "one site (limit not binding)"

    relation("max_site_rtt_ms", tiny_workbooks(min_latency=False, max_sites=3, multi_site=True),
             body, least=0.2)


def test_removing_a_catalog_item_never_lowers_the_cost():
    """A switch (fabric or DCI) or an optic, preferably one the optimal design uses."""
    def body(tmp, book, data):
        optimum = base(tmp, book)
        used = {line["item"] for line in optimum["bom"]}
        choices = [(sheet, i) for sheet in ("switches", "optics") if len(book[sheet]) > 1
                   for i in range(len(book[sheet]))]
        if not choices:
            return "nothing to remove"
        preferred = [(sheet, i) for sheet, i in choices
                     if book[sheet][i].get("model", book[sheet][i].get("name")) in used] or choices
        sheet, index = data.draw(st.sampled_from(preferred), label="removed")
        fewer = copy.deepcopy(book)
        del fewer[sheet][index]
        return no_cheaper(solved(tmp, fewer, "fewer"), optimum, f"without {sheet} row {index}")

    relation("catalog item removed", min_cost_books, body)


def test_row_order_never_changes_the_cost():
    """Every table sheet's rows shuffled (sites, routes, catalog): the same optimal cost, or both infeasible."""
    def body(tmp, book, data):
        shuffled = copy.deepcopy(book)
        for sheet, rows in book.items():
            if isinstance(rows, list) and len(rows) > 1:
                shuffled[sheet] = data.draw(st.permutations(rows), label=sheet)
        a, b = solved(tmp, book, "as_given"), solved(tmp, shuffled, "shuffled")
        assert (a is None) == (b is None)
        if a is None:
            return "both infeasible"
        assert b["objective_usd"] == pytest.approx(a["objective_usd"], rel=1e-6)
        return "both feasible"

    relation("rows permuted", tiny_workbooks(), body)
