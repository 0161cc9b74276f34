"""Outputs that read right (issue 12 part 5): design.xlsx as a planner's workbook, plain numbers in bom.csv, labels
that say what they count, the report's resilience section, rail-only drawn and measured per rail.

Designs: tests/test_resilience.py's ``triangle`` (three sites on a path a-b-c, 32 GPUs each) and a rail-only site of
tests/test_model.py's catalog (1,024 GPUs = 128 nodes x 8 rails, 64-port switches: each rail a 2-tier Clos of 4 leaves
and 2 spines, 32 nodes a leaf)."""

from __future__ import annotations

import csv

import openpyxl
import pytest
from test_model import design, tables
from test_resilience import triangle

from designer.audit.resilience import resilience
from designer.formats import gap
from designer.outputs.export import write_outputs
from designer.outputs.plots import fabric_figure
from designer.outputs.report import render_html, render_markdown
from designer.outputs.summary import summary_lines


@pytest.fixture(scope="module")
def path_design(tmp_path_factory) -> dict:
    sol = design(tmp_path_factory.mktemp("path"), triangle())
    sol["resilience"] = resilience(sol)
    return sol


@pytest.fixture(scope="module")
def rail_only(tmp_path_factory) -> dict:
    sol = design(tmp_path_factory.mktemp("rail"), tables(1024, topologies_allowed="rail_only"))
    sol["resilience"] = resilience(sol)
    return sol


def test_design_xlsx_is_a_planners_workbook(tmp_path, path_design):
    write_outputs(path_design, tmp_path)
    book = openpyxl.load_workbook(tmp_path / "design.xlsx")
    assert {"switches", "fabric_links", "input_sites", "input_routes", "input_switches"} <= set(book.sheetnames)
    assert "fabric" not in book.sheetnames  # switches and links apart: a column of counts adds up one kind
    for ws in book.worksheets:
        assert ws.freeze_panes == "A2", ws.title
        assert all(c.font.b for c in ws[1] if c.value is not None), ws.title
    bom = book["bom"]
    head = [c.value for c in bom[1]]
    last = len(path_design["bom"]) + len(path_design["spares"]) + 1  # the header and the lines, not the totals
    assert bom.auto_filter.ref == f"A1:{bom.cell(1, len(head)).column_letter}{last}"
    rows = list(bom.iter_rows(min_row=2))
    col = {name: k for k, name in enumerate(head)}
    first = rows[0]
    assert (first[col["quantity"]].number_format, first[col["unit_price_usd"]].number_format,
            first[col["extended_usd"]].number_format) == ("#,##0", '"$"#,##0.00', '"$"#,##0')
    capex, with_spares = rows[-2], rows[-1]
    assert (capex[0].value, capex[col["extended_usd"]].value) == ("total capex", path_design["totals"]["capex_usd"])
    assert (with_spares[0].value, with_spares[col["extended_usd"]].value) == (
        "total with spares", path_design["totals"]["capex_with_spares_usd"])
    assert capex[0].font.b and capex[col["extended_usd"]].number_format == '"$"#,##0'
    summary = {r[0].value: r[1] for r in book["summary"].iter_rows(min_row=2)}
    assert summary["mip_gap"].number_format == "0.000%" and summary["capex_usd"].number_format == '"$"#,##0'
    assert summary["gpus"].number_format == "#,##0"
    # every input table as a table, blanks as empty cells (a route's blank srlg, a site's blank lat)
    sites = list(book["input_sites"].iter_rows(values_only=True))
    assert len(sites) == 1 + 3 and "lat" in sites[0]
    assert all(r[sites[0].index("lat")] is None for r in sites[1:])
    routes = list(book["input_routes"].iter_rows(values_only=True))
    assert [r[:2] for r in routes[1:]] == [("a", "b"), ("b", "c"), ("a", "c")]
    assert all(r[routes[0].index("srlg")] is None for r in routes[1:])
    values = [c.value for ws in book.worksheets for row in ws.iter_rows() for c in row]
    assert not {"None", "nan", "NaN"} & {v for v in values if isinstance(v, str)}


def test_bom_csv_numbers_are_plain(tmp_path, path_design):
    """Whole quantities print as integers, facility MW as a decimal; money to the cent, no float noise."""
    write_outputs(path_design, tmp_path)
    with (tmp_path / "bom.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    amps = next(r for r in rows if r["item"] == "amp")
    assert (amps["quantity"], amps["unit_price_usd"], amps["extended_usd"]) == ("2", "10000", "20000")
    power = next(r for r in rows if r["category"] == "power" and r["site"] == "a")
    assert float(power["quantity"]) * 1e6 == pytest.approx(float(power["extended_usd"]), abs=0.01)
    for r in rows:
        for key in ("quantity", "unit_price_usd", "extended_usd", "unit_power_w", "total_power_w"):
            assert len(r[key].partition(".")[2]) <= 9, (key, r[key])
    assert sum(float(r["extended_usd"]) for r in rows if r["category"] != "spares") == pytest.approx(
        path_design["totals"]["capex_usd"], abs=0.01 * len(rows))


def test_report_resilience_section_and_labels(path_design):
    """The path's two cuts each strand one end's 32 GPUs; route_diversity is named as the fix. Markdown is text
    (an apostrophe stays one), latencies in µs, wavelengths and modules counted apart, no solver words."""
    md = render_markdown(path_design)
    assert "## Resilience" in md
    assert "| route | a--b | 400 Gb/s | 400 Gb/s | 50.0% | no | 32 |" in md
    assert "set it to true to have every open site keep a path" in md
    assert "| between sites | 2 wavelengths, 4 DCI optic modules (one at each end) |" in md
    assert "| part | µs |" in md and "&#39;" not in md and "&amp;" not in md
    html = render_html(path_design)
    assert '<section id="resilience">' in html and "proved optimal within the MIP gap" in html
    assert "convergence" not in html.split('<section id="provenance">')[0].lower()
    lines = summary_lines(path_design)
    assert "capex $1.6M" in lines[1] and "4 DCI optic modules" in lines[1]
    assert any("losing a--b; b--c cuts open sites apart (at worst 32 GPUs cut off)" in line for line in lines)


@pytest.mark.parametrize(("fraction", "text"), [(None, "n/a"), (float("inf"), "n/a"), (0.0, "0.00%"), (3.2003e-05, "0.0032%"),
                                                (0.0097, "0.97%"), (0.011195785824275425, "1.12%")])
def test_gap_said_in_percent(fraction, text):
    """A gap reads in percent, two significant digits below 1%: the default target's 3.2e-5 is 0.0032%, not 0.00%
    (the summary) nor 3.200320019934905e-05 (the progress line, before)."""
    assert gap(fraction) == text


def test_rail_only_drawn_and_measured_per_rail(rail_only):
    """8 rails of 4 leaves and 2 spines: the figure draws one rail (4 leaf boxes, "x 8"), the report gives the
    bisection per rail (32 leaves' 32 up links of 400G, halved by the balanced cut: 25.6 Tb/s a rail) and says
    cross-rail traffic goes over NVLink."""
    [site] = [s for s in rail_only["sites"] if s["open"]]
    assert {t["tier"]: t["count"] for t in site["tiers"]} == {"leaf": 32, "spine": 16}
    fig = fabric_figure(site)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "leaf x4 a rail\n(x 8 = 32)\nsw64\n32 down @400G / 32 up @400G" in texts
    assert "over NVLink" in fig.axes[0].get_title(loc="left")
    boxes = [p for p in fig.axes[0].patches if p.get_y() > 0.5 and p.get_y() < 1.5]
    assert len(boxes) == 4
    # each of the rail's 4 leaves drawn joined to each of its 2 spines (the links one collection)
    [links] = fig.axes[0].collections
    assert sum(1 for (_, y0), (_, y1) in links.get_segments() if 1 < y0 < 2 and 1 < y1 < 2) == 8
    md = render_markdown(rail_only)
    assert "Per rail: 4 leaf, 2 spine (x 8 rails)." in md
    assert "| s1 | 204.8 Tb/s | 25.6 Tb/s x 8 rails | most loaded spine |" in md
    assert "cross the node's NVLink" in md or "crosses the node's NVLink" in md


def test_cells_joined_by_hand_are_what_the_csv_module_writes():
    """cabling.csv's rows are cells made once (export.csv_cell) joined by hand: the same text as csv.writer over the
    escaped values (export.csv_text), whatever a cell holds, and nothing a spreadsheet would run."""
    import io

    from designer.outputs.cabling import write_lines
    from designer.outputs.export import FORMULA_STARTS, csv_cell, csv_line, csv_suffixed, csv_text
    values = ["dc", "=cmd", "@SUM(A1)", "a, -b", 'say "hi"', "two\nlines", "\rcr", "-1", "+x", "", None, 400, 10.0,
              0.1 + 0.2, 1e-7, -3, "dc-leaf-01", "p1/2", "tab\there"]
    rows = [values, list(reversed(values))]
    out = io.StringIO()
    write_lines(out, (csv_line([csv_cell(v) for v in row]) for row in rows), batch=1)
    expected = io.StringIO()
    csv.writer(expected).writerows([[csv_text(v) for v in row] for row in rows])
    assert out.getvalue() == expected.getvalue()
    read = list(csv.reader(io.StringIO(out.getvalue())))
    assert read[0][1] == "'=cmd" and read[0][3] == "a, -b" and read[0][5] == "two\nlines"
    assert not any(cell.startswith(FORMULA_STARTS) for cell, v in zip(read[0], values) if isinstance(v, str))
    for head in ("dc", "a,b", 'q"', "=x", "-dc"):
        assert csv_suffixed(csv_cell(head + "-c"), "0000042") == csv_cell(head + "-c0000042")


@pytest.mark.parametrize("case", ["plain", "escaped", "signed zeros", "bool", "no data"])
def test_graphml_is_networkx_byte_for_byte(tmp_path, case):
    """designer.outputs.graphml writes what nx.write_graphml writes, byte for byte: text to escape in names, keys and
    values, repeated attribute dicts (made once), 0.0 beside -0.0 under one key (equal, two texts), a value of
    another type (networkx itself writes that graph), nodes and edges without data."""
    import networkx as nx

    from designer.outputs.graphml import write_graphml

    graph = nx.Graph(name="fabric & <co>")
    for k in range(6):
        graph.add_node(f"leaf-{k}", role="leaf", ports=32, site="a&b" if case == "escaped" else "a")
    graph.add_node('sp"ine <1>' if case == "escaped" else "spine-1", role="spine", ports=6)
    spine = next(n for n in graph if "ine" in n)
    for k in range(6):
        data = {"count": 1, "gbps": 400, "tier": "leaf_spine", "item": "OSFP 800G <DR8>" if case == "escaped" else "x"}
        if case == "signed zeros":
            data["length_m"] = -0.0 if k % 2 else 0.0
        if case == "bool":
            data["used"] = k % 2 == 0
        graph.add_edge(f"leaf-{k}", spine, **data)
    if case == "no data":
        graph.add_node("lonely")
        graph.add_edge("lonely", "leaf-0")
    nx.write_graphml(graph, tmp_path / "networkx.graphml")
    write_graphml(graph, tmp_path / "ours.graphml")
    assert (tmp_path / "ours.graphml").read_bytes() == (tmp_path / "networkx.graphml").read_bytes()


@pytest.mark.parametrize("shared", [False, True])
def test_fabric_graphml_of_several_sites_is_their_union_as_networkx_writes_it(tmp_path, shared):
    """fabric.graphml lists the sites' graphs one after another without building the graph of them all: the bytes
    networkx writes for that graph, edges added in an order other than the one they are listed in; a device name two
    sites share (networkx merges the two) goes to networkx itself."""
    import networkx as nx

    from designer.outputs.cabling import GRAPHML_EDGE, GRAPHML_NODE, write_graphml

    graphs = []
    for site in ("a", "b"):
        g = nx.Graph(site=site)
        for n in ("spine", "leaf-2", "leaf-1"):
            g.add_node(f"{site}-{n}", role=n.split("-")[0], model="m", ports=4, site=site, plane=1, down_ports=2)
        if shared:
            g.add_node("dci", role="dci", model="r", ports=1, site=site)
            g.add_edge(f"{site}-leaf-1", "dci", count=1, gbps=800, tier="dci", item="zr", length_m=1.5)
        for leaf in ("leaf-1", "leaf-2"):
            g.add_edge(f"{site}-spine", f"{site}-{leaf}", count=2, gbps=400, tier="leaf_spine", item="x", length_m=30.0)
        graphs.append(g)
    whole = nx.Graph(name="pair")
    for g in graphs:
        whole.add_nodes_from((n, {k: v for k, v in d.items() if k in GRAPHML_NODE}) for n, d in g.nodes(data=True))
        whole.add_edges_from((u, v, {k: d[k] for k in GRAPHML_EDGE}) for u, v, d in g.edges(data=True))
    nx.write_graphml(whole, tmp_path / "networkx.graphml")
    write_graphml({"name": "pair"}, tmp_path / "ours.graphml", graphs)
    assert (tmp_path / "ours.graphml").read_bytes() == (tmp_path / "networkx.graphml").read_bytes()
