"""Rules across rows and sheets: row counts, unique names, references, routes, port modes, planes, site bounds."""

from __future__ import annotations

from designer.errors import Problem
from designer.inputs.catalog import port_modes
from designer.inputs.cells import suggest
from designer.inputs.schema import Field
from designer.inputs.sheets import Parsed


def check(parsed: dict[str, Parsed], problems: list[Problem]) -> None:
    """Rules that span rows or sheets: row counts, unique names, references, site bounds."""
    for p in parsed.values():
        if p.spec.nonempty and not p.records:
            problems.append(Problem(p.label, "", "", None, "has no rows",
                                    "add at least one row below the header row"))
        if p.spec.key:
            _check_unique(p, problems)
    for p in parsed.values():
        for field in p.spec.fields:
            if field.ref and field.ref in parsed:
                _check_refs(p, field, _names_of(parsed[field.ref]), problems)
    if "routes" in parsed:
        _check_routes(parsed["routes"], problems)
    if "switches" in parsed:
        _check_port_modes(parsed["switches"], problems)
    if "node_types" in parsed:
        _check_planes(parsed["node_types"], problems)
    if "project" in parsed and "sites" in parsed:
        _check_site_counts(parsed["project"], parsed["sites"], problems)


def _names_of(p: Parsed) -> list[str]:
    return [r[p.spec.key] for r in p.records if r[p.spec.key] is not None]


def _check_unique(p: Parsed, problems: list[Problem]) -> None:
    first: dict[str, int] = {}
    for record, cells, row in zip(p.records, p.cells, p.rows):
        name = record[p.spec.key]
        if name is None:
            continue
        if name in first:
            problems.append(Problem(p.label, cells[p.spec.key], p.spec.key, name,
                                    f"duplicate name (first on row {first[name]})",
                                    "give every row its own name"))
        else:
            first[name] = row


def _check_refs(p: Parsed, field: Field, names: list[str], problems: list[Problem]) -> None:
    listing = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
    for record, cells in zip(p.records, p.cells):
        value = record[field.name]
        for name in (value if isinstance(value, list) else [value] if value else []):
            if name not in names:
                hint = suggest(name, names)
                problems.append(Problem(p.label, cells[field.name], field.name, name,
                                        f"is not a name in {field.ref}",
                                        hint or f"use one of: {listing or '(none listed)'}"))


def _check_routes(p: Parsed, problems: list[Problem]) -> None:
    first: dict[frozenset, int] = {}
    for record, cells, row in zip(p.records, p.cells, p.rows):
        a, b = record["site_a"], record["site_b"]
        if a is None or b is None:
            continue
        if a == b:
            problems.append(Problem(p.label, cells["site_b"], "site_b", b, "route from a site "
                                    "to itself", "give two different sites, or delete the row"))
        elif (pair := frozenset((a, b))) in first:
            problems.append(Problem(p.label, cells["site_a"], "site_a", a, f"duplicate route "
                                    f"{a}-{b} (first on row {first[pair]}, either direction)",
                                    "keep one row per site pair"))
        else:
            first[pair] = row


def _check_port_modes(p: Parsed, problems: list[Problem]) -> None:
    for record, cells in zip(p.records, p.cells):
        text = record["port_modes"]
        if text is None:
            continue
        fix = "write ports x Gb/s per speed, comma separated, e.g. 64x800,128x400"
        try:
            modes = port_modes(text)
        except ValueError as exc:
            problems.append(Problem(p.label, cells["port_modes"], "port_modes", text, str(exc),
                                    fix))
            continue
        totals = {gbps * ports for gbps, ports in modes.items()}
        if len(totals) > 1:
            shown = ", ".join(f"{ports}x{gbps} = {ports * gbps} Gb/s"
                              for gbps, ports in modes.items())
            problems.append(Problem(p.label, cells["port_modes"], "port_modes", text,
                                    f"modes must have equal total bandwidth ({shown})", fix))


def _check_planes(p: Parsed, problems: list[Problem]) -> None:
    for record, cells in zip(p.records, p.cells):
        nics, planes = record["nics_per_node"], record["planes"]
        if nics and planes and nics % planes:
            problems.append(Problem(p.label, cells["planes"], "planes", planes,
                                    f"must divide nics_per_node ({nics})",
                                    "use a number of planes the NICs split over evenly"))


def _check_site_counts(project: Parsed, sites: Parsed, problems: list[Problem]) -> None:
    values, cells = project.records[0], project.cells[0]
    lo, hi = values["min_sites"], values["max_sites"]
    status = [r["status"] for r in sites.records]
    required = [r["name"] for r in sites.records if r["status"] == "required"]
    usable = sum(s != "excluded" for s in status)
    if sites.records and usable == 0:
        problems.append(Problem(sites.label, "", "status", None, "every site is excluded",
                                "set at least one site to candidate or required"))
    if lo is not None and hi is not None and lo > hi:
        problems.append(Problem(project.label, cells["min_sites"], "min_sites", lo,
                                f"is more than max_sites ({hi})", "lower min_sites or raise "
                                "max_sites"))
    if hi is not None and len(required) > hi:
        problems.append(Problem(project.label, cells["max_sites"], "max_sites", hi,
                                f"is less than the {len(required)} sites with status required "
                                f"({', '.join(required)})", "raise max_sites or set fewer "
                                "sites to required"))
    if lo is not None and usable and usable < lo:
        problems.append(Problem(project.label, cells["min_sites"], "min_sites", lo,
                                f"is more than the {usable} sites not excluded",
                                "lower min_sites or add candidate sites"))
