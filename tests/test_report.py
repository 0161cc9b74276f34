"""The design report: every section, figures embedded, nothing fetched from the network, the Markdown
twin, ``designer report DIR``, and a look at the page in headless Chromium (skipped, saying why, only
where no browser can be installed: ``make browser`` installs Debian's ``chromium``).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import jinja2
import pytest
from test_diagnose import book, pair, site

from designer import cli
from designer.formats import money
from designer.inputs.writer import write_workbook
from designer.outputs import report
from designer.outputs.report import render_html, render_markdown

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "data" / "examples").glob("*.xlsx"))
SECTIONS = ["summary", "cost", "power", "map", "sites", "resilience", "communication", "constraints", "modes", "bom",
            "provenance"]
WORKLOAD = {"model_params_billion": 1, "step_compute_ms": 500, "grad_accum_steps": 4, "max_comm_fraction": 0.5}
IMG = re.compile(r'<img [^>]*src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"')
#: the least Solution dict the report renders from (no inputs echo, no solver)
BARE = {"name": "bare", "status": "optimal", "mip_gap": 0.0, "solve_seconds": 1.0, "objective_usd": 0.0,
        "totals": {"gpus": 0, "nodes": 0, "capex_usd": 0.0, "power_mw": 0.0, "coherent_ports": 0},
        "sites": [], "links": [], "bom": []}
EXTERNAL = re.compile(r'''(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//''', re.I)


@pytest.fixture(scope="module")
def solved(tmp_path_factory) -> Path:
    """Two sites with coordinates, a route and a workload, solved through the command."""
    tmp = tmp_path_factory.mktemp("report")
    path = write_workbook(tmp / "pair.xlsx", pair(60, workload=WORKLOAD))
    out = tmp / "out"
    assert cli.main(["solve", str(path), "-o", str(out), "--quiet"]) == cli.EXIT_OK
    return out


def design(folder: Path) -> dict:
    return json.loads((folder / "design.json").read_text())


def test_every_section_is_there(solved):
    html = (solved / "report.html").read_text()
    for section in SECTIONS:
        assert f'<section id="{section}">' in html, section
    solution = design(solved)
    assert solution["totals"]["sites_open"] == 2 and solution["workload"] is not None
    for s in solution["sites"]:
        assert f'id="site-{s["name"]}"' in html
    for text in ("Capex", "Worst fabric latency", "MIP gap", "Latency budget", "gradient accumulation",
                 "Binding constraints", "Bill of materials", "editable equipment catalog", "most are estimates",
                 solution["inputs"]["sha256"], solution["solver"]["pyomo_version"], solution["solver"]["version"],
                 "zr400", "RTT"):
        assert text in html, text
    total = money(solution["totals"]["capex_usd"])
    assert html.count(total) >= 2  # the summary card and the BOM total


def test_figures_are_embedded_svgs(solved):
    """Cost, power, map and communication; per site its fabric, floor, network racks (its DCI routers) and latency,
    each drawn once for the sites it is alike at: the pair's two sites are the same but for their names, so site b
    shows a's four."""
    html = (solved / "report.html").read_text()
    images = IMG.findall(html)
    assert design(solved)["totals"]["sites_open"] == 2
    assert len(images) == 4 + 4
    for what in ("Fabric diagram", "Floor plan", "Network racks", "Latency budget"):
        assert html.count(f"{what}: the same as a's above.") == 1, what
    for data in images:
        svg = base64.b64decode(data)
        assert svg.startswith(b"<?xml") and b"<svg " in svg and b"</svg>" in svg
        assert b"href=\"http" not in svg  # nothing fetched
    assert "figure could not be drawn" not in html


def test_a_figure_is_shared_only_by_sites_alike_in_what_it_shows(solved):
    """alike: the fabric statistics of the pair's two sites differ in their names alone; one more node at b is a
    figure of its own."""
    import copy

    from designer.outputs import statistics as st
    from designer.outputs.report import alike

    a, b = st.open_sites(design(solved))
    assert alike(st.fabric_summary(a)) == alike(st.fabric_summary(b))
    bigger = copy.deepcopy(b)
    bigger["nodes"] += 1
    assert alike(st.fabric_summary(a)) != alike(st.fabric_summary(bigger))


def test_nothing_is_fetched_from_the_network(solved):
    html = (solved / "report.html").read_text()
    assert not EXTERNAL.findall(html)
    assert "<script" not in html and "<link" not in html and "@import" not in html


def test_markdown_twin(solved):
    md = (solved / "report.md").read_text()
    for heading in ("# Design report: pair", "## Summary", "## Cost", "## Power", "## Sites and routes",
                    "## Fabric per site", "## Communication estimate", "## Constraints and their slack",
                    "## Fabric modes", "## Bill of materials", "## Provenance"):
        assert heading in md, heading
    assert "data:image" not in md and "<" not in md.replace("<=", "").replace("->", "")


def test_designer_report_regenerates_both(solved, capsys):
    html = (solved / "report.html").read_text()
    (solved / "report.html").unlink()
    (solved / "report.md").write_text("stale")
    assert cli.main(["report", str(solved)]) == cli.EXIT_OK
    assert "wrote report.html, report.md" in capsys.readouterr().out
    again = (solved / "report.html").read_text()
    strip = lambda text: re.sub(r"generated [0-9: -]+", "", text)  # noqa: E731
    assert strip(again) == strip(html)
    assert (solved / "report.md").read_text().startswith("# Design report")


def test_report_of_a_folder_without_a_design_is_an_input_error(tmp_path, capsys):
    assert cli.main(["report", str(tmp_path)]) == cli.EXIT_INPUT
    assert "no design.json" in capsys.readouterr().err


def test_single_site_without_coordinates_or_workload(tmp_path):
    """No lat/lon: a schematic map; no workload: no communication section; one site, no routes (its one leaf in a
    rack of nodes: no network rack to draw)."""
    path = write_workbook(tmp_path / "one.xlsx", book(32))
    out = tmp_path / "out"
    assert cli.main(["solve", str(path), "-o", str(out), "--quiet"]) == cli.EXIT_OK
    html = (out / "report.html").read_text()
    assert 'id="communication"' not in html and len(IMG.findall(html)) == 3 + 3
    assert "figure could not be drawn" not in html
    split = design(out)["modes"]["space"][0]  # one usable site: every split searched
    assert split["every"] and split["searched"].startswith("every split within max_oversubscription")
    assert "over the design space searched (Fabric modes: 1 choice(s) on a grid)" in (out / "report.md").read_text()


def test_the_design_space_searched_is_stated(solved):
    """What "optimal" is optimal over: with two usable sites a Clos tier's split is searched at the grid's levels,
    and the report says so, with why, beside the status and under Fabric modes."""
    rows = {r["choice"]: r for r in design(solved)["modes"]["space"]}
    split = rows["port split of a Clos tier (down : up ports)"]
    assert not split["every"] and "with 2 usable sites" in split["searched"]
    assert rows["uplink speed"]["every"] and not rows["spine count of a 2-tier Clos"]["every"]
    html = (solved / "report.html").read_text()
    assert '<h3 id="space">The design space searched</h3>' in html and "2 choice(s) on a grid" in html
    assert split["searched"] in (solved / "report.md").read_text()


def test_infeasible_report_shows_the_diagnosis(tmp_path):
    path = write_workbook(tmp_path / "tight.xlsx", book(32, sites=[site("s1", power_mw=0.05)]))
    out = tmp_path / "out"
    assert cli.main(["solve", str(path), "-o", str(out), "--quiet"]) == cli.EXIT_INFEASIBLE
    html = (out / "report.html").read_text()
    assert "site s1 needs 0.0108 MW more" in html and "INFEASIBLE" in html.upper()
    assert 'id="cost"' not in html and not EXTERNAL.findall(html)


def test_renders_from_a_minimal_solution():
    """The report reads only the Solution dict: a bare one still renders (no inputs echo, no solver)."""
    assert "Design report: bare" in render_html(BARE)
    assert render_markdown(BARE).startswith("# Design report: bare")


def test_compiled_templates_are_read_back_not_compiled_again(tmp_path, monkeypatch):
    """A run after the first reads the templates' compiled code from the cache: with compiling made to fail, a fresh
    environment over the filled cache still renders both reports, the same text."""
    monkeypatch.setattr(report, "compiled_templates", lambda: report.CompiledTemplates(str(tmp_path)))
    monkeypatch.setattr(report.time, "strftime", lambda *_args: "2026-12-07 12:00:00")  # the reports' "generated"
    report._env.cache_clear()
    try:
        first = render_html(BARE), render_markdown(BARE)
        assert len(list(tmp_path.iterdir())) == 2  # one entry a template
        report._env.cache_clear()

        def no_compiling(*_args, **_kwargs):
            raise AssertionError("a cached template was compiled again")

        monkeypatch.setattr(jinja2.Environment, "compile", no_compiling)
        assert (render_html(BARE), render_markdown(BARE)) == first
    finally:
        report._env.cache_clear()


def test_a_cache_that_cannot_be_had_or_written_costs_time_not_the_report(tmp_path, monkeypatch):
    """No private temporary folder (a file where jinja's would be): no cache; a cache folder that is gone: nothing
    written, the report as it is."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    (tmp_path / f"_jinja2-cache-{os.getuid()}").write_text("in the way")
    assert report.compiled_templates() is None
    gone = report.CompiledTemplates(str(tmp_path / "gone"))
    monkeypatch.setattr(report, "compiled_templates", lambda: gone)
    report._env.cache_clear()
    try:
        assert render_markdown(BARE).startswith("# Design report: bare")
        assert not (tmp_path / "gone").exists()
    finally:
        report._env.cache_clear()


# --- in the browser -------------------------------------------------------------------------------

def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("no headless browser: `make browser` installs Debian's chromium (apt-get install chromium); "
                "it could not be installed here")


def screenshot(html: Path, png: Path, height: int = 3000) -> None:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                        f"--user-data-dir={profile}", f"--screenshot={png}", f"--window-size=1400,{height}",
                        html.resolve().as_uri()], capture_output=True, timeout=180, check=False)
    assert png.is_file() and png.stat().st_size > 0, "chromium wrote no screenshot"


def looks_like_a_report(png: Path) -> None:
    """Not blank: varied pixels, ink on a fair share of the page, and the figures' colours."""
    import numpy as np
    from PIL import Image

    image = Image.open(png).convert("RGB")
    gray = np.asarray(image.convert("L"), dtype=float)
    assert gray.std() > 20, "the page is (nearly) uniform"
    ink = (gray < 200).mean()
    assert ink > 0.03, f"only {ink:.1%} of the page is drawn"
    hsv = np.asarray(image.convert("HSV"))
    colourful = ((hsv[..., 1] > 80) & (hsv[..., 2] > 60)).mean()
    assert colourful > 0.005, f"no figure colours ({colourful:.2%} saturated pixels)"


def test_report_renders_in_chromium(solved, tmp_path):
    png = tmp_path / "report.png"
    screenshot(solved / "report.html", png)
    looks_like_a_report(png)


@pytest.mark.parametrize("stem", [p.stem for p in EXAMPLES])
def test_every_example_report_renders_in_chromium(example_runs, stem, tmp_path):
    """Each example's report, as the command wrote it (the session's solves, tests/conftest.py), renders: figures
    inline, nothing fetched from outside, no figure that failed to draw, a page that looks like a report."""
    chromium()
    _design, out = example_runs.solved(stem)
    html = (out / "report.html").read_text()
    assert IMG.findall(html) and not EXTERNAL.findall(html) and "figure could not be drawn" not in html
    png = tmp_path / "report.png"
    screenshot(out / "report.html", png)
    looks_like_a_report(png)
