"""Reading what planners type: names without regard to case and spaces, notes and '_' names ignored, a title row
above the headers, catalog sheets replacing or extending the defaults (sources, vendor-quote columns into the
BOM), plausibility warnings; each reading a Notice naming its cell, shown in design.json and the report."""

from __future__ import annotations

import csv
import shutil

import openpyxl
import pytest
from test_diagnose import book, site

from designer.errors import InputError
from designer.inputs.catalog import CATALOG_DIR
from designer.inputs.checks import great_circle_km
from designer.inputs.workbook import load_catalog, load_inputs
from designer.inputs.writer import write_workbook
from designer.outputs import statistics as st
from designer.outputs.report import render_html, render_markdown
from designer.solve.run import SolveOptions, solve

needs_catalog = pytest.mark.skipif(not (CATALOG_DIR / "node_types.csv").is_file(), reason="no default catalog")
OEM = dict(name="OEM 8x", gpus_per_node=8, nics_per_node=8, nic_gbps=400, node_power_kw=12, node_price_usd=300_000)


def notices(inputs, kind: str) -> list[str]:
    return [str(n) for n in inputs.notices if n.kind == kind]


def problems(path) -> list[str]:
    with pytest.raises(InputError) as caught:
        load_inputs(path)
    return [str(p) for p in caught.value.problems]


def plan(**project) -> dict:
    """Two sites and a route over the default catalog; keyword arguments are project keys."""
    return {"project": {"gpus_required": 64, "node_type": "DGX B200", **project},
            "sites": [site("alpha", lat=40.4, lon=-3.7), site("beta", lat=40.9, lon=-3.2)],
            "routes": [dict(site_a="alpha", site_b="beta", distance_km=80, fiber_pairs=4,
                            fiber_cost_usd_per_pair_km=10)]}


@needs_catalog
def test_names_are_read_without_regard_to_case_and_spaces(tmp_path):
    tables = plan(GPUs_required=64, node_type="dgx b200", protocols_allowed="InfiniBand")
    del tables["project"]["gpus_required"]
    tables["Sites"] = [{("Name" if k == "name" else k): v for k, v in row.items()} for row in tables.pop("sites")]
    tables["routes "] = [dict(tables.pop("routes")[0], site_a="Alpha")]
    path = write_workbook(tmp_path / "case.xlsx", tables)
    sheet = openpyxl.load_workbook(path)
    sheet["project"]["A1"] = "Key"
    sheet.save(path)
    inputs = load_inputs(path)
    assert notices(inputs, "read") == [
        "Sites: sheet name 'Sites' read as 'sites'",
        "routes : sheet name 'routes ' read as 'routes'",
        "project!A1 key: header 'Key' read as 'key'",
        "project!A4 gpus_required: key 'GPUs_required' read as 'gpus_required'",
        "Sites!A1 name: header 'Name' read as 'name'",
        "project!B2 node_type: 'dgx b200' read as 'DGX B200', the name in node_types",
        "project!B3 protocols_allowed: 'InfiniBand' read as 'infiniband', the name in protocols",
        "routes !A2 site_a: 'Alpha' read as 'alpha', the name in sites"]
    assert inputs.project["node_type"] == "DGX B200" and inputs.project["gpus_required"] == 64
    assert inputs.project["protocols_allowed"] == ["infiniband"]
    assert list(inputs.routes["site_a"]) == ["alpha"] and list(inputs.sites.index) == ["alpha", "beta"]


@needs_catalog
def test_names_that_collide_once_normalised_are_errors(tmp_path):
    tables = plan()
    tables["sites"] = [dict(site("alpha"), PUE=1.4), site("Alpha "), site("beta")]
    tables["sites "] = tables["sites"]  # Excel itself refuses two sheet names differing only in case
    found = problems(write_workbook(tmp_path / "twice.xlsx", tables))
    assert found == [
        "sites : same sheet as 'sites' (names are compared without regard to case and spaces) "
        "(fix: keep one of the two sheets)",
        "sites!I1 pue: column appears twice (first in C1; names are compared without regard to case and "
        "spaces) (fix: delete one of the two columns)",
        "sites!A3 name: duplicate name (first on row 2 as 'alpha': names are compared without regard to case "
        "and spaces), got 'Alpha' (fix: give every row its own name)"]


@needs_catalog
def test_notes_and_underscore_names_are_ignored_and_listed(tmp_path):
    tables = plan()
    tables["sites"] = [dict(row, notes="ask the landlord", _calc=3) for row in tables["sites"]]
    tables["_scratch"] = [{"anything": 1}]
    path = write_workbook(tmp_path / "notes.xlsx", tables)
    sheet = openpyxl.load_workbook(path)
    sheet["project"]["C1"] = "Notes"
    sheet["project"]["C2"] = "from the March plan"
    sheet.save(path)
    inputs = load_inputs(path)
    assert notices(inputs, "ignored") == [
        "_scratch: sheet ignored (its name starts with '_')",
        "project!C1 Notes: column ignored (a notes column)",
        "sites!K1 notes: column ignored (a notes column)",
        "sites!L1 _calc: column ignored (its name starts with '_')"]
    assert "notes" not in inputs.sites.columns
    tables["sites"] = [dict(site("alpha"), remarks="x", pues=1.2), site("beta")]
    found = problems(write_workbook(tmp_path / "typo.xlsx", tables))
    assert "sites!J1: unknown column, got 'pues' (fix: did you mean 'pue'?)" in found
    assert any(p.startswith("sites!I1: unknown column, got 'remarks'") for p in found)


def titled(path, sheet: str, title: str):
    """Insert a title row, merged across the headers, above a sheet's header row."""
    book_ = openpyxl.load_workbook(path)
    ws = book_[sheet]
    ws.insert_rows(1)
    ws["A1"] = title
    ws.merge_cells(start_row=1, start_column=1, end_row=1, end_column=ws.max_column)
    book_.save(path)
    return path


@needs_catalog
def test_title_row_above_the_headers_is_read_and_said(tmp_path):
    path = titled(write_workbook(tmp_path / "title.xlsx", plan()), "sites", "Candidate sites, March")
    inputs = load_inputs(path)
    assert notices(inputs, "read") == [
        "sites!A1: row 1 read as a title ('Candidate sites, March'); the headers are read from row 2"]
    assert list(inputs.sites.index) == ["alpha", "beta"]
    tables = plan()
    tables["sites"][1]["pue"] = "x"
    path = titled(titled(write_workbook(tmp_path / "bad.xlsx", tables), "sites", "Sites"), "project", "Plan")
    assert problems(path) == ["sites!C4 pue: must be a number >= 1 and <= 5, got 'x' "
                              "(fix: enter a number >= 1 and <= 5, e.g. 1.3)"]


@needs_catalog
def test_a_catalog_sheet_replaces_the_default_table_and_says_so(tmp_path):
    default = len(load_catalog()["node_types"])
    tables = plan()
    tables["node_types"] = [OEM]
    found = problems(write_workbook(tmp_path / "replace.xlsx", tables))
    assert found == ["project!B3 node_type: is not a name in node_types, got 'DGX B200' (fix: use one of: OEM 8x)"]
    tables["project"]["node_type"] = "OEM 8x"
    inputs = load_inputs(write_workbook(tmp_path / "oem.xlsx", tables))
    assert notices(inputs, "catalog") == [
        "node_types source: 1 row without a source: sourced to this workbook as "
        "'planner workbook oem.xlsx, node_types row N'",
        f"node_types: the workbook's 1 row replaces the default table of {default}"]
    assert list(inputs.node_types.index) == ["OEM 8x"]
    assert inputs.node_types.loc["OEM 8x", "source"] == "planner workbook oem.xlsx, node_types row 2"


@needs_catalog
def test_catalog_extend_adds_and_overrides_rows_by_name(tmp_path):
    default = load_catalog()["node_types"]
    tables = plan(catalog="extend")
    tables["node_types"] = [OEM, dict(OEM, name="dgx h100 ", node_price_usd=150_000, source="quote 42")]
    inputs = load_inputs(write_workbook(tmp_path / "extend.xlsx", tables))
    assert notices(inputs, "catalog") == [
        "node_types source: 1 row without a source: sourced to this workbook as "
        "'planner workbook extend.xlsx, node_types row N'",
        "node_types!A3 name: 'dgx h100' overrides the default row of the same name",
        f"node_types: the workbook's 2 rows extend the default table of {len(default)} (1 overriding a default row)"]
    names = list(inputs.node_types.index)
    assert len(names) == len(default) + 1 and "DGX H100" not in names and "DGX B200" in names
    assert inputs.node_types.loc["dgx h100", "node_price_usd"] == 150_000
    assert inputs.node_types.loc["DGX B200", "source"] == default.loc["DGX B200", "source"]


@needs_catalog
def test_a_protocols_sheet_without_source_loads(tmp_path):
    tables = plan()
    tables["protocols"] = [dict(name="infiniband", switch_family="infiniband", nic_latency_ns=450, efficiency=0.95,
                                lossless=True, jitter_rank=1)]
    inputs = load_inputs(write_workbook(tmp_path / "proto.xlsx", tables))
    assert inputs.protocols.loc["infiniband", "source"] == "planner workbook proto.xlsx, protocols row 2"


@needs_catalog
def test_plausibility_warnings_name_the_cell(tmp_path):
    assert notices(load_inputs(write_workbook(tmp_path / "fine.xlsx", plan())), "warning") == []
    tables = plan(dci_ratio=5)
    tables["sites"] = [site("alpha", lat=40.4, lon=-3.7, power_mw=55_000, pue=3.5), site("beta", lat=-3.2, lon=40.9)]
    inputs = load_inputs(write_workbook(tmp_path / "odd.xlsx", tables))
    crow = great_circle_km(40.4, -3.7, -3.2, 40.9)
    assert notices(inputs, "warning") == [
        "sites!B2 power_mw: 55,000 MW is more than any campus has (the largest plan about 5,000 MW): kW typed as MW?",
        "sites!C2 pue: 3.5 is above any operating data center (PUE 1.1 to 2): a typo?",
        "project!B4 dci_ratio: 5 asks more inter-site capacity than the NIC bandwidth itself: a percentage? "
        "(5% is 0.05)",
        f"routes!C2 distance_km: 80 km is shorter than the {crow:,.0f} km between alpha and beta as the crow flies "
        "(sites lat/lon): lat and lon swapped, or the wrong site?"]


@needs_catalog
def test_a_default_catalog_row_must_still_name_its_source(tmp_path):
    folder = shutil.copytree(CATALOG_DIR, tmp_path / "catalog")
    with (folder / "amplifiers.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    rows[1][rows[0].index("source")] = ""
    with (folder / "amplifiers.csv").open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    with pytest.raises(InputError) as caught:
        load_catalog(folder)
    assert [str(p) for p in caught.value.problems] == [
        "data/catalog/amplifiers.csv!G2 source: a default catalog row must name its source "
        "(fix: state where the figures come from (datasheet, list price))"]


def test_great_circle_distance():
    assert great_circle_km(40.4168, -3.7038, 41.3874, 2.1686) == pytest.approx(505, abs=3)  # Madrid-Barcelona
    assert great_circle_km(0, 0, 0, 180) == pytest.approx(20_015, abs=1)  # half the equator


@pytest.fixture(scope="module")
def quoted(tmp_path_factory):
    """A solved design whose node type and storage network carry vendor quotes, the node type no source, at a site
    with PUE 3.5."""
    tables = book(sites=[site("s1", pue=3.5)])
    node = tables["node_types"][0]
    node.update(sku="DGX-B200-Q1", lead_time_weeks=16)
    del node["source"]
    with (CATALOG_DIR / "support_networks.csv").open(newline="", encoding="utf-8") as f:
        storage = next(csv.DictReader(f))  # the storage network's row
    tables["support_networks"] = [dict(storage, switch_sku="QM9700-S", link_lead_time_weeks=26)]
    tables["project"]["support_networks"] = True
    path = write_workbook(tmp_path_factory.mktemp("quote") / "quote.xlsx", tables)
    return solve(load_inputs(path), SolveOptions())


def test_the_bom_carries_sku_and_lead_time(quoted):
    nodes = [b for b in quoted["bom"] if b["category"] == "nodes"]
    assert [(b["sku"], b["lead_time_weeks"]) for b in nodes] == [("DGX-B200-Q1", 16.0)]
    storage = {b["item"]: (b.get("sku"), b.get("lead_time_weeks")) for b in quoted["bom"]
               if b["category"] == "storage_network"}
    assert storage == {"QM9700": ("QM9700-S", None), "400G NDR multimode module": (None, 26.0)}
    assert all("sku" not in b for b in quoted["bom"] if b["category"] not in ("nodes", "storage_network"))
    assert st.overview(quoted)["lead_time"] == {"weeks": 26.0, "items": ["400G NDR multimode module"]}
    assert sum(b["extended_usd"] for b in quoted["bom"]) == pytest.approx(quoted["totals"]["capex_usd"])


def test_design_json_and_report_show_warnings_and_the_planners_figures(quoted):
    warning = "sites!C2 pue: 3.5 is above any operating data center (PUE 1.1 to 2): a typo?"
    assert {"sheet": "sites", "cell": "C2", "column": "pue", "kind": "warning",
            "message": "3.5 is above any operating data center (PUE 1.1 to 2): a typo?"} in quoted["inputs"]["notices"]
    md = render_markdown(quoted)
    summary = md[md.index("## Summary"):md.index("## Cost")]
    assert f"Warnings on the inputs:\n- {warning}" in summary
    provenance = md[md.index("## Provenance"):]
    assert ("The planner's own figures (catalog rows the workbook gives without a source): node_types **n8**."
            in provenance)
    assert "| node_types | n8 (planner's) | $100,000 | planner workbook quote.xlsx, node_types row 2 |" in provenance
    html = render_html(quoted)
    summary = html[html.index('<section id="summary">'):html.index("</section>")]
    assert f"<li>{warning}</li>" in summary
    assert "node_types <b>n8</b>" in html[html.index('<section id="provenance">'):]


def test_thousands_of_unknown_names_search_did_you_mean_a_bounded_number_of_times(tmp_path, monkeypatch):
    """3,000 routes naming unknown sites among 1,000: every cell is named, but the 'did you mean' search (a
    fuzzy match over every site) runs for the first names only; the rest list the site names."""
    from designer.inputs import checks
    from designer.inputs.workbook import load_inputs as load
    from designer.inputs.writer import write_workbook as write

    calls = []
    real = checks.suggest
    monkeypatch.setattr(checks, "suggest", lambda *a: calls.append(a) or real(*a))
    site = {"name": "s", "power_mw": 5, "pue": 1.3, "max_nodes": 100, "fixed_cost_usd": 0,
            "power_cost_usd_per_mw": 0, "energy_usd_per_mwh": 50}
    routes = [dict(site_a=f"sitx-{i:04d}", site_b="site-0001", distance_km=10, fiber_pairs=2,
                   fiber_cost_usd_per_pair_km=1) for i in range(3000)]
    path = write(tmp_path / "r.xlsx", {"project": {"gpus_required": 8, "node_type": "DGX H100"},
                                       "sites": [dict(site, name=f"site-{i:04d}") for i in range(1000)],
                                       "routes": routes})
    with pytest.raises(InputError) as info:
        load(path)
    found = [str(p) for p in info.value.problems]
    assert len(found) == 3000 and len(calls) == checks.SUGGESTED
    assert found[0] == ("routes!A2 site_a: is not a name in sites, got 'sitx-0000' (fix: did you mean "
                        "'site-0000'?)")
    assert found[-1].startswith("routes!A3001 site_a: is not a name in sites, got 'sitx-2999' (fix: use one of: "
                                "site-0000, site-0001")
