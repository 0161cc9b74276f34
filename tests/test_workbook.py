"""Workbook input contract: loading, defaults, every validation rule, template, catalog."""

from __future__ import annotations

import openpyxl
import pytest

from designer.errors import InputError, Problem
from designer.inputs.catalog import CATALOG_DIR, port_modes, roles
from designer.inputs.schema import SHEETS, TOPOLOGIES, contract_markdown
from designer.inputs.template import write_template
from designer.inputs.workbook import Inputs, load_catalog, load_inputs
from designer.inputs.writer import write_workbook

HAVE_CATALOG = all((CATALOG_DIR / f"{name}.csv").is_file()
                   for name, spec in SHEETS.items() if spec.catalog)
needs_catalog = pytest.mark.skipif(not HAVE_CATALOG, reason="data/catalog/*.csv not written yet")


def catalog() -> dict:
    """A small self-contained catalog, so most tests do not depend on data/catalog."""
    src = {"source": "test"}
    return {
        "node_types": [dict(name="n8", gpus_per_node=8, nics_per_node=8, nic_gbps=400,
                            node_power_kw=10.0, node_price_usd=200_000, **src)],
        "switches": [
            dict(model="ib64", family="infiniband", port_modes="64x400", buffer_mb=16,
                 latency_ns=200, power_w=750, price_usd=30_000, roles="leaf,spine,core", **src),
            dict(model="eth64", family="ethernet", port_modes="64x800,128x400", buffer_mb=64,
                 latency_ns=500, power_w=900, price_usd=40_000, roles="leaf,spine", **src),
        ],
        "optics": [dict(name="dac400", gbps=400, kind="dac", reach_m=3, power_w=0.1,
                        price_usd=100, **src)],
        "coherent": [dict(name="400zr", gbps=400, reach_km=120, channel_ghz=75, power_w=15,
                          price_usd=5000, **src)],
        "amplifiers": [dict(name="edfa", power_w=200, price_usd=20_000, **src)],
        "protocols": [
            dict(name="infiniband", switch_family="infiniband", nic_latency_ns=450,
                 efficiency=0.95, lossless="yes", jitter_rank=1, **src),
            dict(name="rocev2", switch_family="ethernet", nic_latency_ns=800, efficiency=0.9,
                 lossless=True, jitter_rank=2, **src),
        ],
        "support_networks": [dict(name="oob", category="management_network", switch_model="sw48",
                                  switch_price_usd=8000, switch_power_w=100, nodes_per_switch=44, ports_per_node=1,
                                  port_gbps=1, link_item="cat6", link_kind="cable", link_price_usd=10, link_power_w=0,
                                  **src)],
        "fiber_plant": [dict(name="jumper", role="jumper", ports="", price_usd=40, **src)],
    }


def site(name: str, **kw) -> dict:
    row = dict(name=name, power_mw=20, pue=1.3, max_nodes=256, fixed_cost_usd=1e6,
               power_cost_usd_per_mw=1e6, energy_usd_per_mwh=60)
    row.update(kw)
    return row


def tables(**changes) -> dict:
    """A valid two-site workbook as tables; keyword arguments replace whole sheets."""
    book = {
        "project": {"gpus_required": 512, "node_type": "n8"},
        "sites": [site("alpha"), site("beta", lat=40.0, lon=-3.5, status="required")],
        "routes": [dict(site_a="alpha", site_b="beta", distance_km=60, fiber_pairs=4,
                        fiber_cost_usd_per_pair_km=1000)],
        **catalog(),
    }
    book.update(changes)
    return {name: sheet for name, sheet in book.items() if sheet is not None}


def problems_of(path) -> list[str]:
    with pytest.raises(InputError) as caught:
        load_inputs(path)
    assert all(isinstance(p, Problem) for p in caught.value.problems)
    return [str(p) for p in caught.value.problems]


def has(problems: list[str], *parts: str) -> bool:
    return any(all(part in text for part in parts) for text in problems)


def test_valid_workbook_loads_typed_with_defaults(tmp_path):
    path = write_workbook(tmp_path / "plan.xlsx", tables())
    inputs = load_inputs(path)
    assert isinstance(inputs, Inputs)
    p = inputs.project
    assert inputs.name == p["name"] == "plan"
    assert p["gpus_required"] == 512 and isinstance(p["gpus_required"], int)
    assert p["objective"] == "min_cost" and p["budget_usd"] is None and p["max_sites"] is None
    assert (p["max_oversubscription"], p["dci_ratio"], p["buffer_bdp_factor"]) == (1, 0.125, 1)
    assert (p["min_sites"], p["horizon_years"]) == (1, 0)
    assert (p["cable_m_node_leaf"], p["cable_m_leaf_spine"], p["cable_m_spine_core"]) == (None, None, None)
    assert (p["rack_kw"], p["racks_per_row"], p["rack_pitch_m"], p["row_pitch_m"]) == (40, 20, 0.6, 2.1)
    assert (p["cable_rise_m"], p["cable_in_rack_m"], p["cable_slack"]) == (2, 2, 0.1)
    assert p["protocols_allowed"] == ["infiniband", "rocev2"]
    assert p["topologies_allowed"] == list(TOPOLOGIES)
    assert inputs.workload is None
    assert list(inputs.sites.index) == ["alpha", "beta"]
    assert inputs.sites.loc["alpha", "status"] == "candidate"
    assert inputs.sites.loc["beta", "status"] == "required"
    assert str(inputs.sites["max_nodes"].dtype) == "int64"
    assert inputs.sites["lat"].isna().tolist() == [True, False]
    assert inputs.routes.loc[0, "amplifier_spacing_km"] == 80
    assert inputs.node_types.loc["n8", "planes"] == 1
    assert inputs.node_types.loc["n8", "nvlink_latency_ns"] == 300
    assert inputs.optics.loc["dac400", "links_per_module"] == 1
    assert inputs.switches.index.name == "model"
    assert inputs.switches.loc["eth64", "port_modes"] == {800: 64, 400: 128}
    assert set(inputs.switches.loc["ib64", "roles"]) == {"leaf", "spine", "core"}
    assert inputs.protocols["lossless"].tolist() == [True, True]
    assert len(inputs.sha256) == 64 and inputs.source == str(path)


def test_project_values_and_workload_are_typed(tmp_path):
    project = {"name": "big", "gpus_required": "1024", "node_type": "n8", "objective":
               "MIN_LATENCY", "protocols_allowed": "rocev2", "topologies_allowed":
               "rail_only, leaf_spine", "max_sites": 2, "budget_usd": 1e8}
    workload = {"model_params_billion": 70, "step_compute_ms": 400, "max_comm_fraction": 0.2}
    inputs = load_inputs(write_workbook(tmp_path / "w.xlsx",
                                        tables(project=project, workload=workload)))
    assert inputs.name == "big" and inputs.project["gpus_required"] == 1024
    assert inputs.project["objective"] == "min_latency"
    assert inputs.project["protocols_allowed"] == ["rocev2"]
    assert inputs.project["topologies_allowed"] == ["rail_only", "leaf_spine"]
    limit = {"model_params_billion": 70.0, "bytes_per_gradient": 2.0, "step_compute_ms": 400.0,
             "grad_accum_steps": 1, "max_comm_fraction": 0.2}
    assert {k: inputs.workload[k] for k in limit} == limit
    # the training keys take their schema defaults; with no training_tokens there is no training estimate
    assert inputs.workload["training_tokens"] is None and inputs.workload["active_params_billion"] is None
    assert (inputs.workload["tp"], inputs.workload["pp"], inputs.workload["ep"]) == (1, 1, 1)
    assert inputs.workload["amortization_years"] == 4.0 and inputs.workload["overlap"] == 0.0


def test_type_and_range_errors_name_the_cell(tmp_path):
    sites = [site("alpha", power_mw="abc", pue=0.9, lat=91, lon=0),
             site("beta", max_nodes=2.5, energy_usd_per_mwh=-1, status="maybe")]
    workload = {"model_params_billion": 70, "step_compute_ms": 0, "max_comm_fraction": 1.5,
                "grad_accum_steps": "two"}
    project = {"gpus_required": 512, "node_type": "n8", "max_oversubscription": 0.5,
               "dci_ratio": -0.1, "objective": "cheapest"}
    nodes = [dict(catalog()["node_types"][0], planes=3)]
    protocols = [dict(catalog()["protocols"][0], efficiency=0, lossless="maybe"),
                 dict(catalog()["protocols"][1], switch_family="ethernett")]
    found = problems_of(write_workbook(tmp_path / "bad.xlsx", tables(
        sites=sites, workload=workload, project=project, node_types=nodes,
        protocols=protocols)))
    assert has(found, "sites!B2 power_mw: must be a positive number <= 100,000, got 'abc'",
               "(fix: enter a positive number <= 100,000 in MW, e.g. 50)")
    assert has(found, "sites!C2 pue: must be a number >= 1 and <= 5, got 0.9")
    assert has(found, "sites!H2 lat:", ">= -90 and <= 90", "got 91")
    assert has(found, "sites!D3 max_nodes: must be a positive whole number <= 10,000,000, got 2.5")
    assert has(found, "sites!G3 energy_usd_per_mwh: must be a number >= 0 and <= 100,000, got -1")
    assert has(found, "sites!J3 status: must be one of: candidate, required, excluded")
    assert has(found, "workload!B3 step_compute_ms: must be a positive number <= 10,000,000, got 0")
    assert has(found, "workload!B5 max_comm_fraction: must be a positive number < 1")
    assert has(found, "workload!B4 grad_accum_steps:", "got 'two'")
    assert has(found, "project!B4 objective: must be one of: min_cost, min_latency",
               "got 'cheapest'")
    assert has(found, "project!B5 max_oversubscription: must be a number >= 1")
    assert has(found, "project!B6 dci_ratio: must be a number >= 0")
    assert has(found, "node_types!E2 planes: must divide nics_per_node (8), got 3")
    assert has(found, "protocols!D2 efficiency: must be a positive number <= 1")
    assert has(found, "protocols!E2 lossless: must be true or false", "got 'maybe'")
    assert has(found, "protocols!B3 switch_family: must be one of: infiniband, ethernet",
               "(fix: did you mean 'ethernet'?)")
    assert len(found) == 16, "\n".join(found)


def test_required_sheets_columns_keys_and_blanks(tmp_path):
    sites = [{k: v for k, v in site("alpha").items() if k != "pue"},
             dict({k: v for k, v in site("beta").items() if k != "pue"}, power_mw=None)]
    found = problems_of(write_workbook(tmp_path / "req.xlsx", tables(
        project={"node_type": "n8"}, sites=sites,
        workload={"step_compute_ms": 400, "max_comm_fraction": 0.2})))
    assert has(found, "project gpus_required: required key is missing")
    assert has(found, "sites pue: required column is missing")
    assert has(found, "sites!B3 power_mw: is blank but required")
    assert has(found, "workload model_params_billion: required key is missing")
    found = problems_of(write_workbook(tmp_path / "nosheets.xlsx",
                                       {"routes": tables()["routes"]}))
    assert has(found, "project: required sheet is missing")
    assert has(found, "sites: required sheet is missing")


def test_blank_rows_skipped_and_excel_row_numbers_kept(tmp_path):
    path = write_workbook(tmp_path / "gaps.xlsx", tables())
    book = openpyxl.load_workbook(path)
    book["sites"].insert_rows(3, 2)  # two blank rows between alpha and beta
    book["sites"]["B5"] = "lots"
    book.save(path)
    assert problems_of(path) == ["sites!B5 power_mw: must be a positive number <= 100,000, got 'lots' "
                                 "(fix: enter a positive number <= 100,000 in MW, e.g. 50)"]
    book["sites"]["B5"] = 30
    book.save(path)
    assert list(load_inputs(path).sites.index) == ["alpha", "beta"]


def test_duplicates_and_references(tmp_path):
    routes = [dict(site_a="alpha", site_b="beta", distance_km=60, fiber_pairs=4,
                   fiber_cost_usd_per_pair_km=1000),
              dict(site_a="beta", site_b="alpha", distance_km=61, fiber_pairs=2,
                   fiber_cost_usd_per_pair_km=1000),
              dict(site_a="alpha", site_b="alpha", distance_km=1, fiber_pairs=1,
                   fiber_cost_usd_per_pair_km=1),
              dict(site_a="alpha", site_b="gamma", distance_km=5, fiber_pairs=1,
                   fiber_cost_usd_per_pair_km=1)]
    sites = [site("alpha"), site("beta"), site("alpha")]
    optics = catalog()["optics"] * 2
    project = {"gpus_required": 8, "node_type": "N8x", "protocols_allowed": "infiniband,ib",
               "topologies_allowed": "leaf_spine,torus"}
    found = problems_of(write_workbook(tmp_path / "refs.xlsx", tables(
        routes=routes, sites=sites, optics=optics, project=project)))
    assert has(found, "sites!A4 name: duplicate name (first on row 2), got 'alpha'")
    assert has(found, "optics!A3 name: duplicate name (first on row 2)")
    assert has(found, "routes!A3 site_a: duplicate route beta-alpha (first on row 2")
    assert has(found, "routes!B4 site_b: route from a site to itself")
    assert has(found, "routes!B5 site_b: is not a name in sites, got 'gamma'")
    assert has(found, "project!B3 node_type: is not a name in node_types, got 'N8x'",
               "did you mean 'n8'?")
    assert has(found, "project!B4 protocols_allowed: is not a name in protocols, got 'ib'")
    assert has(found, "project!B5 topologies_allowed: has unknown entry 'torus'",
               "use a comma list of: leaf_spine, fat_tree_3")


def test_switch_port_modes_and_roles(tmp_path):
    base = catalog()["switches"][0]
    switches = [dict(base, model="a", port_modes="64x800,64x400"),
                dict(base, model="b", port_modes="sixty-four"),
                dict(base, model="c", roles="leaf,router"),
                dict(base, model="d", family="nvlink")]
    found = problems_of(write_workbook(tmp_path / "sw.xlsx", tables(switches=switches)))
    assert has(found, "switches!C2 port_modes: modes must have equal total bandwidth")
    assert has(found, "switches!C3 port_modes: cannot read port mode 'sixty-four'")
    assert has(found, "switches!H4 roles: has unknown entry 'router', got 'leaf,router'",
               "(fix: use a comma list of: leaf, spine, core, dci)")
    assert has(found, "switches!B5 family: must be one of: infiniband, ethernet")


def test_site_count_rules(tmp_path):
    sites = [site("a", status="required"), site("b", status="required"),
             site("c", status="excluded")]
    found = problems_of(write_workbook(tmp_path / "count.xlsx", tables(
        sites=sites, routes=[],
        project={"gpus_required": 8, "node_type": "n8", "min_sites": 3, "max_sites": 1})))
    assert has(found, "project!B4 min_sites: is more than max_sites (1), got 3")
    assert has(found, "project!B5 max_sites: is less than the 2 sites with status required "
               "(a, b), got 1")
    assert has(found, "project!B4 min_sites: is more than the 2 sites not excluded")
    sites = [site("a", status="excluded")]
    found = problems_of(write_workbook(tmp_path / "excl.xlsx", tables(sites=sites, routes=[])))
    assert has(found, "sites status: every site is excluded")
    found = problems_of(write_workbook(tmp_path / "none.xlsx", tables(sites=[], routes=[])))
    assert has(found, "sites: has no rows")


def test_unknown_sheet_column_and_key_suggest(tmp_path):
    sites = [dict(site("alpha"), powr_mw=5)]
    found = problems_of(write_workbook(tmp_path / "typo.xlsx", tables(
        sites=sites, rutes=[], project={"gpus_required": 8, "node_type": "n8",
                                         "max_site": 2})))
    assert has(found, "rutes: unknown sheet (fix: did you mean 'routes'?)")
    assert has(found, "sites!H1: unknown column, got 'powr_mw' (fix: did you mean 'power_mw'?)")
    assert has(found, "project!A4 key: unknown key, got 'max_site'",
               "did you mean 'max_sites'?")


def test_many_errors_reported_at_once(tmp_path):
    sites = [site("alpha", power_mw=-1), site("beta", pue="x")]
    found = problems_of(write_workbook(tmp_path / "many.xlsx", tables(
        sites=sites, extra=[{"a": 1}], project={"gpus_required": 0, "node_type": "n8"})))
    assert len(found) == 4
    assert has(found, "sites!B2") and has(found, "sites!C3") and has(found, "extra: unknown")
    assert has(found, "project!B2 gpus_required")


def test_catalog_sheet_replaces_default(tmp_path):
    only = [dict(catalog()["protocols"][1])]
    inputs = load_inputs(write_workbook(tmp_path / "cat.xlsx", tables(protocols=only)))
    assert list(inputs.protocols.index) == ["rocev2"]
    assert inputs.project["protocols_allowed"] == ["rocev2"]


@needs_catalog
def test_missing_catalog_sheets_use_default(tmp_path):
    default = load_catalog()
    node = default["node_types"].index[0]
    book = {"project": {"gpus_required": 64, "node_type": node}, "sites": [site("solo")]}
    inputs = load_inputs(write_workbook(tmp_path / "solo.xlsx", book))
    for name in ("node_types", "switches", "optics", "coherent", "amplifiers", "protocols"):
        assert list(getattr(inputs, name).index) == list(default[name].index)
    assert inputs.routes.empty and list(inputs.routes.columns) == SHEETS["routes"].columns


def test_formula_without_cached_value(tmp_path):
    path = write_workbook(tmp_path / "f.xlsx", tables())
    book = openpyxl.load_workbook(path)
    book["sites"]["B2"] = "=10*5"  # openpyxl stores no cached value
    book["sites"]["C3"] = "#DIV/0!"  # an error value
    book.save(path)
    found = problems_of(path)
    assert has(found, "sites!B2 power_mw: is a formula with no calculated value, got '=10*5'")
    assert has(found, "sites!C3 pue: holds an Excel error, got '#DIV/0!'")
    assert len(found) == 2


def test_formula_with_cached_value_is_read(tmp_path):
    path = write_workbook(tmp_path / "cached.xlsx", tables())
    book = openpyxl.load_workbook(path)
    book["sites"]["B2"] = "=10*5"
    book.save(path)
    _cache_value(path, "sites", "B2", "50")
    assert load_inputs(path).sites.loc["alpha", "power_mw"] == 50


def _cache_value(path, sheet, cell, value):
    """Write a cached result into a formula cell, as Excel does on save."""
    import re
    import zipfile

    book = openpyxl.load_workbook(path)
    index = book.sheetnames.index(sheet) + 1
    member = f"xl/worksheets/sheet{index}.xml"
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    xml = parts[member].decode()
    xml = re.sub(rf'(<c r="{cell}"[^>]*>)(<f>[^<]*</f>)(<v\s*/>|<v></v>)?',
                 rf"\1\2<v>{value}</v>", xml)
    parts[member] = xml.encode()
    with zipfile.ZipFile(path, "w") as z:
        for name, data in parts.items():
            z.writestr(name, data)


def test_not_a_workbook_and_missing_file(tmp_path):
    fake = tmp_path / "plan.xlsx"
    fake.write_text("name,power_mw\nalpha,5\n")
    found = problems_of(fake)
    assert len(found) == 1 and "plan.xlsx is not a readable .xlsx workbook" in found[0]
    found = problems_of(tmp_path / "nowhere.xlsx")
    assert found == [f"workbook: file not found: {tmp_path / 'nowhere.xlsx'} (fix: check the "
                     "path, or write a blank one with `designer template`)"]


@needs_catalog
def test_template_round_trip(tmp_path):
    path = write_template(tmp_path / "template.xlsx")
    book = openpyxl.load_workbook(path)
    assert book.sheetnames == list(SHEETS)
    for name, spec in SHEETS.items():
        sheet = book[name]
        if spec.kind == "table":
            assert [c.value for c in sheet[1]] == spec.columns
            assert all(c.comment is not None for c in sheet[1])
        else:
            keys = [sheet.cell(row, 1).value for row in range(2, sheet.max_row + 1)]
            assert keys == spec.columns
    lists = {str(dv.sqref): dv.formula1
             for dv in book["sites"].data_validations.dataValidation}
    assert lists["K2:K1000"] == '"candidate,required,excluded"'
    project_lists = [dv.formula1 for dv in book["project"].data_validations.dataValidation]
    assert '"min_cost,min_latency,min_cost_per_run,max_tokens_per_s"' in project_lists
    assert "unit: MW" in book["sites"]["B1"].comment.text
    assert "required" in book["sites"]["B1"].comment.text

    with pytest.raises(InputError) as caught:
        load_inputs(path)
    assert {p.column for p in caught.value.problems} >= {"gpus_required", "node_type"}

    keys = {book["project"].cell(row, 1).value: row
            for row in range(2, book["project"].max_row + 1)}
    book["project"].cell(keys["gpus_required"], 2).value = 64
    book["project"].cell(keys["node_type"], 2).value = book["node_types"]["A2"].value
    book["sites"].append(list(site("here").values()))
    book.save(path)
    inputs = load_inputs(path)
    assert inputs.name == "template" and list(inputs.sites.index) == ["here"]
    assert inputs.workload is None
    default = load_catalog()
    assert list(inputs.switches.index) == list(default["switches"].index)


def test_parsers():
    assert port_modes("64x800,128x400") == {800: 64, 400: 128}
    assert port_modes(" 32 X 400 ") == {400: 32}
    for bad in ("", "64x", "64x800,32x800", "0x400"):
        with pytest.raises(ValueError):
            port_modes(bad)
    assert roles("leaf, Spine,,core") == {"leaf", "spine", "core"}


@needs_catalog
def test_default_catalog_validates():
    tables_ = load_catalog()
    assert set(tables_) == {n for n, s in SHEETS.items() if s.catalog}
    assert all(len(tables_[n]) for n in ("node_types", "switches", "optics", "protocols"))


def test_default_catalog_is_validated_like_a_sheet(tmp_path):
    for name, rows in catalog().items():
        (tmp_path / f"{name}.csv").write_text(
            ",".join(rows[0]) + "\n" + "\n".join(",".join(f'"{v}"' for v in r.values())
                                                  for r in rows) + "\n")
    (tmp_path / "optics.csv").write_text("name,gbps,kind,reach_m,power_w,price_usd,source\n"
                                         "x,400,laser,3,1,1,s\n")
    with pytest.raises(InputError) as caught:
        load_catalog(tmp_path)
    assert [str(p) for p in caught.value.problems] == [
        "data/catalog/optics.csv!C2 kind: must be one of: dac, aoc, transceiver, got 'laser' "
        "(fix: use one of: dac, aoc, transceiver)"]


def test_contract_markdown_lists_every_sheet_and_column():
    text = contract_markdown()
    for name, spec in SHEETS.items():
        assert f"### `{name}`" in text
        assert all(f"| `{column}` |" in text for column in spec.columns)


def test_sheet_structure_problems(tmp_path):
    path = write_workbook(tmp_path / "shape.xlsx", tables())
    book = openpyxl.load_workbook(path)
    book["sites"]["L1"] = "pue"  # a second pue column
    book["sites"]["M2"] = 7  # data without a header (K stays blank)
    book["project"].append([None, 5])  # a value without a key
    book["project"].append(["gpus_required", 8])  # a key twice
    workload = book.create_sheet("workload")
    workload.append(["key", "amount"])
    workload.append(["step_compute_ms", 10])
    book.save(path)
    found = problems_of(path)
    assert has(found, "sites!L1 pue: column appears twice")
    assert has(found, "sites!M1: column has values but no header")
    assert has(found, "project!A4 key: value without a key")
    assert has(found, "project!A5 key: key listed twice (first on row 2), got 'gpus_required'")
    assert has(found, "workload!B1: unknown column, got 'amount'")
    assert has(found, "workload value: required column is missing")
    assert len(found) == 6, "\n".join(found)


def test_dci_optics_sheet_holds_coherent_and_gray_rows(tmp_path):
    """The inter-site optics sheet may be named dci_optics; a gray row needs no channel width, a coherent
    row does (the wavelengths a fiber pair carries follow from it)."""
    rows = [dict(name="zr", kind="coherent", gbps=400, reach_km=120, channel_ghz=75, power_w=15, price_usd=5000,
                 source="test"),
            dict(name="fr4", kind="gray", gbps=800, reach_km=2, fiber_pairs_per_link=2, power_w=18, price_usd=1700,
                 source="test")]
    book = tables(coherent=None)
    book["dci_optics"] = rows
    inputs = load_inputs(write_workbook(tmp_path / "dci.xlsx", book))
    assert list(inputs.coherent["kind"]) == ["coherent", "gray"]
    assert inputs.coherent.loc["fr4", "fiber_pairs_per_link"] == 2 and inputs.coherent.loc["zr", "fiber_pairs_per_link"] == 1
    book["dci_optics"] = [dict(rows[0], channel_ghz=None)]
    found = problems_of(write_workbook(tmp_path / "nochannel.xlsx", book))
    assert has(found, "dci_optics", "channel_ghz", "a coherent module needs its channel width", "set kind to gray")


def test_spares_keys_default_read_shares_and_name_bad_cells(tmp_path):
    inputs = load_inputs(write_workbook(tmp_path / "w.xlsx", tables()))
    assert [inputs.project[k] for k in ("spares_optics_share", "spares_cables_share", "spares_switch_per")] == [
        0.02, 0.02, 50]
    project = {"gpus_required": 512, "node_type": "n8", "spares_optics_share": "3%", "spares_switch_per": 0}
    inputs = load_inputs(write_workbook(tmp_path / "s.xlsx", tables(project=project)))
    assert (inputs.project["spares_optics_share"], inputs.project["spares_switch_per"]) == (0.03, 0)
    project = {"gpus_required": 512, "node_type": "n8", "spares_optics_share": 2, "spares_switch_per": -1,
               "spares_cables_share": "some"}
    found = problems_of(write_workbook(tmp_path / "bad.xlsx", tables(project=project)))
    assert has(found, "project!B4 spares_optics_share: must be a number >= 0 and <= 1, got 2")
    assert has(found, "project!B5 spares_cables_share:", "got 'some'")  # the writer keeps the schema's order
    assert has(found, "project!B6 spares_switch_per: must be a whole number >= 0 and <= 100,000, got -1")
