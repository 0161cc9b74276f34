"""The design report: ``report.html`` (one self-contained file, figures embedded as SVG data URIs, no
network access) and ``report.md`` (the same content as text, for diffs), from a Solution dict only.

``write_reports(folder, solution)`` is what ``designer solve`` calls inside its output callback;
``regenerate(folder)`` is ``designer report FOLDER`` (reads folder/design.json).
"""

from __future__ import annotations

import functools
import json
import time
from pathlib import Path

from jinja2 import Environment, FileSystemBytecodeCache, FileSystemLoader, StrictUndefined, select_autoescape

from designer.formats import bandwidth, microseconds, money
from designer.outputs import statistics as st

TEMPLATES = Path(__file__).resolve().parent / "templates"
HTML_NAME, MD_NAME = "report.html", "report.md"
PRICE_NOTICE = ("Prices and most power figures come from an editable equipment catalog (data/catalog/*.csv, or "
                "the workbook's own catalog sheets); most are estimates, not quotes. Each row's source is listed "
                "below: check the ones that matter before buying.")


class CompiledTemplates(FileSystemBytecodeCache):
    """Jinja's cache of compiled templates in the user's own temporary folder (jinja's default: created private,
    refused when another user owns it), each entry checked against its template's source: the report's two
    templates compile in 0.44 s, a run after the first reads them in milliseconds. A cache that cannot be written
    costs that time, never the report."""

    def dump_bytecode(self, bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


def compiled_templates() -> CompiledTemplates | None:
    """The cache of compiled templates, or None where no private temporary folder can be had (jinja refuses one that
    another user owns or others may write in)."""
    try:
        return CompiledTemplates()
    except (OSError, RuntimeError):
        return None


@functools.cache
def _env() -> Environment:
    # HTML is escaped; Markdown is text (escaping it would print &#39; for every quote)
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)),
                      autoescape=select_autoescape(enabled_extensions=("html.j2",), default=False),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      bytecode_cache=compiled_templates())
    env.filters.update(money=money, pct=st.percent, num=st.number, in_use=st.in_use,
                       mw=lambda x: "n/a" if x is None else f"{x:,.2f} MW" if abs(x) >= 1 or x == 0 else f"{x:.3g} MW",
                       us=microseconds, gbps=bandwidth,
                       md=lambda x: str(x if x is not None else "").replace("|", "\\|").replace("\n", " "))
    return env


def _figure(make, *args) -> dict:
    """A figure as {"uri": data URI} or {"error": text} when drawing fails (the report still renders)."""
    from designer.outputs import plots

    try:
        return {"uri": plots.data_uri(make(*args)), "error": None}
    except Exception as exc:  # noqa: BLE001 - one bad figure must not lose the whole report
        import matplotlib.pyplot as plt

        plt.close("all")
        return {"uri": None, "error": f"{type(exc).__name__}: {exc}"}


def draw(jobs: dict) -> dict:
    """Each job's figure ({key: (make, *args)} -> {key: _figure(make, *args)}); every other one is drawn at the same
    time in a forked process (export.beside), where this process may start one (a daemon may not)."""
    import multiprocessing

    from designer.outputs.export import beside

    keys = list(jobs)
    if len(keys) < 2 or multiprocessing.current_process().daemon:
        return _draw_some(jobs, keys)
    with beside(_draw_some, jobs, keys[1::2]) as theirs:
        mine = _draw_some(jobs, keys[::2])
    return mine | theirs[0]


def _draw_some(jobs: dict, keys: list) -> dict:
    return {k: _figure(*jobs[k]) for k in keys}


def site_rows(solution: dict) -> list[dict]:
    """Per open site what the report shows of it besides its figures: its fabric, latency budget and racks."""
    limit = latency_limit(solution)
    opened = st.open_sites(solution)
    plans = [st.network_racks(s, solution) for s in opened]
    return [{"site": s, "fabric": st.fabric_summary(s), "latency": st.latency_budget(s, limit),
             "racks": st.rack_kinds(racks) if racks else [], "rack_plan": racks}
            for s, racks in zip(opened, plans)]


def latency_limit(solution: dict) -> float | None:
    return ((solution.get("inputs") or {}).get("project") or {}).get("max_fabric_latency_us")


def figures(solution: dict) -> dict:
    """Every figure of report.html by key, drawn at once (draw): each site figure for the first site that shows it
    and {"same_as": that site} for the sites alike (site_figures), then the design's cost, power, map,
    communication and training figures where it has them."""
    from designer.outputs import plots

    jobs, shared = site_figures(site_rows(solution), latency_limit(solution), solution)
    if st.open_sites(solution):
        jobs["cost"] = (plots.cost_figure, solution)
        jobs["power"] = (plots.power_figure, solution)
    if st.site_locations(solution):
        jobs["map"] = (plots.map_figure, solution)
    if comm := st.communication(solution):
        jobs["communication"] = (plots.communication_figure, comm)
    if train := st.training(solution):
        jobs["training"] = (plots.training_figure, train)
    return {**draw(jobs), **shared}


def context(solution: dict, drawn: dict | None = None) -> dict:
    """Everything the templates show, computed once (designer.outputs.statistics) from the solution; ``drawn``: its
    figures (figures), none where not given (report.md)."""
    ov = st.overview(solution)
    project = (solution.get("inputs") or {}).get("project") or {}
    opened = st.open_sites(solution)
    comm = st.communication(solution)
    train = st.training(solution)
    has_design = bool(opened)
    locations = st.site_locations(solution)
    sites = site_rows(solution)
    drawn = drawn or {}
    for k, x in enumerate(sites):
        x.update({kind: drawn.get((k, kind)) for kind in SITE_FIGURES})
    figs = {name: drawn[name] for name in ("cost", "power", "map", "communication", "training") if name in drawn}
    cost_cat = st.cost_by_category(solution)
    total = sum(cost_cat.values()) or 1.0
    return {
        "s": solution, "ov": ov, "project": project, "has_design": has_design,
        "diagnosis": solution.get("diagnosis"), "reason": solution.get("reason"),
        "cost_by_category": [{"category": c, "label": st.CATEGORY_LABELS.get(c, c), "usd": v, "share": v / total}
                             for c, v in cost_cat.items()],
        "cost_by_site": [{"scope": k, "usd": v} for k, v in st.cost_by_site(solution).items()],
        "power": st.power_vs_cap(solution), "locations": locations, "routes": st.route_rows(solution),
        "sites": sites, "comm": comm, "train": train, "constraints": st.constraint_rows(solution),
        "resilience": st.resilience_view(solution),
        "sensitivity": st.sensitivity_rows(solution), "alternatives": st.alternative_rows(solution),
        "modes": {"enumerated": 0, "kept": 0, **(solution.get("modes") or {})},
        "modes_filtered": st.modes_filtered(solution), "space": st.design_space(solution),
        "bom": st.bom_rows(solution), "spares": solution.get("spares") or [],
        "sources": st.catalog_sources(solution, used_only=has_design),
        "prov": st.provenance(solution), "notice": PRICE_NOTICE, "figs": figs,
        "notes": solution.get("notes") or [], "generated": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


SITE_FIGURES = ("fabric_fig", "latency_fig", "floor_fig", "rack_fig")


def site_figures(sites: list[dict], limit: float | None, solution: dict) -> tuple[dict, dict]:
    """The open sites' figures ({(k, kind): (make, *args)}, k a site's place in ``sites``, context's entries), each
    drawn for the first site that shows it; for the sites alike in what it shows (alike), {(k, kind): {"same_as":
    that site}} instead."""
    from designer.outputs import plots

    jobs, shared, drawn_for = {}, {}, {}
    for k, x in enumerate(sites):
        s, racks = x["site"], x["rack_plan"]
        floor = st.floor_plan(s)
        figures_of = [("fabric_fig", x["fabric"], (plots.fabric_figure, s)),
                      ("latency_fig", x["latency"], (plots.latency_figure, s, limit))]
        if floor:
            figures_of.append(("floor_fig", floor, (plots.floor_figure, s)))
        if racks and racks["racks"]:
            shown = {"kinds": x["racks"], **{key: racks[key] for key in ("rack_ru", "rack_kw", "in_node_racks")}}
            figures_of.append(("rack_fig", shown, (plots.rack_figure, s, solution)))
        for kind, shown, job in figures_of:
            first = drawn_for.setdefault((kind, alike(shown)), s["name"])
            if first == s["name"]:
                jobs[k, kind] = job
            else:
                shared[k, kind] = {"uri": None, "error": None, "same_as": first}
    return jobs, shared


def alike(shown) -> str:
    """What a site's figure shows (its statistics) without the names in it (the site's, its racks'): sites alike in it
    share one drawing (of a 1M-GPU design's 35 sites, 13 have a fabric, 34 a latency budget, 27 a floor and 26 network
    racks drawn before: its report's drawing 23.7 -> 8.3 s)."""
    def unnamed(value):
        if isinstance(value, dict):
            return {k: unnamed(v) for k, v in value.items() if k not in ("site", "name")}
        return [unnamed(v) for v in value] if isinstance(value, (list, tuple)) else value

    return json.dumps(unnamed(shown), sort_keys=True, default=str)


def render_html(solution: dict, drawn: dict | None = None) -> str:
    """report.html; ``drawn``: its figures drawn already (figures), else drawn here."""
    drawn = figures(solution) if drawn is None else drawn
    return _env().get_template("report.html.j2").render(**context(solution, drawn))


def render_markdown(solution: dict) -> str:
    return _env().get_template("report.md.j2").render(**context(solution))


def write_reports(folder, solution: dict, drawn: dict | None = None) -> list[Path]:
    """Write report.html and report.md into ``folder`` (the staging folder of an atomic write); ``drawn`` as in
    render_html."""
    folder = Path(folder)
    html = folder / HTML_NAME
    md = folder / MD_NAME
    html.write_text(render_html(solution, drawn), encoding="utf-8")
    md.write_text(render_markdown(solution), encoding="utf-8")
    return [html, md]


def regenerate(folder) -> list[Path]:
    """Rebuild both reports from folder/design.json; the folder is swapped in whole with its other files
    kept (atomic_dir keep=True), so a failure leaves the old reports."""
    from designer.errors import InputError, Problem
    from designer.outputs.export import atomic_dir

    folder = Path(folder)
    path = folder / "design.json"
    if not path.is_file():
        raise InputError([Problem("", "", "", None, f"no design.json in {folder}",
                                  "give the output folder of a `designer solve` run")])
    try:
        solution = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError([Problem("", "", "", None, f"cannot read {path}: {exc.strerror or exc}",
                                  "check the path and its permissions")]) from None
    except ValueError as exc:  # not JSON, or not UTF-8
        raise InputError([Problem("", "", "", None, f"{path} is not valid JSON ({exc})",
                                  "solve again to rewrite it")]) from None
    with atomic_dir(folder, keep=True) as stage:
        write_reports(stage, solution)
    return [folder / HTML_NAME, folder / MD_NAME]


def write_infeasible(out_dir, solution: dict) -> list[Path]:
    """design.json and the reports of an infeasible workbook, swapped in whole (atomic_dir): the folder holds
    this run's files only, none of an earlier design's."""
    from designer.outputs.export import atomic_dir, write_json

    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as stage:
        write_json(solution, stage / "design.json")
        write_reports(stage, solution)
        names = sorted(p.name for p in stage.iterdir())
    return [out_dir / n for n in names]
