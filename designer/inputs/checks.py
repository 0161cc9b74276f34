"""Rules across rows and sheets: row counts, unique names, references, routes, port modes, planes, site bounds;
and the plausibility warnings: values no plan has, coordinates that contradict the routes."""

from __future__ import annotations

import math

from designer.errors import Notice, Problem
from designer.inputs.catalog import port_modes
from designer.inputs.cells import suggest
from designer.inputs.parallelism import check_objective, check_workload
from designer.inputs.schema import Field
from designer.inputs.sheets import Parsed, norm

PLAUSIBLE_SITE_MW = 5_000  # the largest campuses announced plan about 5 GW
PLAUSIBLE_DCI_RATIO = 1  # more inter-site capacity than the NICs' own bandwidth
PLAUSIBLE_PUE = 3  # operating data centers run at 1.1 to 2
EARTH_RADIUS_KM = 6371.0
COORDINATE_SLACK_KM = 10  # a site's lat/lon names a campus, not the fiber's end


def check(parsed: dict[str, Parsed], problems: list[Problem], notices: list[Notice]) -> None:
    """Rules that span rows or sheets: row counts, unique names, references, site bounds.

    A reference read in another case or spacing is rewritten to the name it matches, with a notice."""
    for p in parsed.values():
        if p.spec.nonempty and not p.records:
            problems.append(Problem(p.label, "", "", None, "has no rows",
                                    "add at least one row below the header row"))
        if p.spec.key:
            _check_unique(p, problems)
    for p in parsed.values():
        for field in p.spec.fields:
            if field.ref and field.ref in parsed:
                _check_refs(p, field, _names_of(parsed[field.ref]), problems, notices)
    if "routes" in parsed:
        _check_routes(parsed["routes"], problems)
    if "switches" in parsed:
        _check_port_modes(parsed["switches"], problems)
    if "node_types" in parsed:
        _check_planes(parsed["node_types"], problems)
    if "coherent" in parsed:
        _check_dci_optics(parsed["coherent"], problems)
    if "fiber_plant" in parsed:
        _check_panel_ports(parsed["fiber_plant"], problems)
    if "project" in parsed and "sites" in parsed:
        _check_site_counts(parsed["project"], parsed["sites"], problems)
    if "floorplan" in parsed and "project" in parsed and "node_types" in parsed:
        _check_rack_power(parsed["floorplan"], parsed["project"], parsed["node_types"], problems)
    if "project" in parsed:
        check_objective(parsed["project"], parsed.get("workload"), problems)
    if "workload" in parsed:
        check_workload(parsed["workload"], parsed.get("project"), parsed.get("node_types"), problems)


def _names_of(p: Parsed) -> dict[str, str]:
    """The row names of a sheet by their normalised form."""
    return {norm(r[p.spec.key]): r[p.spec.key] for r in p.records if r[p.spec.key] is not None}


def _check_unique(p: Parsed, problems: list[Problem]) -> None:
    first: dict[str, tuple[int, str]] = {}
    for record, cells, row in zip(p.records, p.cells, p.rows):
        name = record[p.spec.key]
        if name is None:
            continue
        if norm(name) not in first:
            first[norm(name)] = row, name
            continue
        row1, name1 = first[norm(name)]
        alike = "" if name1 == name else f" as {name1!r}: names are compared without regard to case and spaces"
        problems.append(Problem(p.label, cells[p.spec.key], p.spec.key, name,
                                f"duplicate name (first on row {row1}{alike})", "give every row its own name"))


SUGGESTED = 50  # a sheet of thousands of unknown names gets its first 50 'did you mean', not minutes of search


def _check_refs(p: Parsed, field: Field, names: dict[str, str], problems: list[Problem],
                notices: list[Notice]) -> None:
    listing = ", ".join(list(names.values())[:12]) + (", ..." if len(names) > 12 else "")
    hints: dict[str, str] = {}  # 'did you mean' searched once per name, for the first SUGGESTED names only

    def hint_for(name: str) -> str:
        if name not in hints and len(hints) < SUGGESTED:
            hints[name] = suggest(name, names.values())
        return hints.get(name, "")

    for record, cells in zip(p.records, p.cells):
        value = record[field.name]
        read = []
        for name in (value if isinstance(value, list) else [value] if value else []):
            match = names.get(norm(name))
            if match is None:
                hint = hint_for(name)
                problems.append(Problem(p.label, cells[field.name], field.name, name,
                                        f"is not a name in {field.ref}",
                                        hint or f"use one of: {listing or '(none listed)'}"))
            elif match != name:
                notices.append(Notice(p.label, cells[field.name], field.name,
                                      f"{name!r} read as {match!r}, the name in {field.ref}"))
            read.append(match or name)
        if read:
            record[field.name] = read if isinstance(value, list) else read[0]


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
            continue
        declared = record.get("cages")
        odd = [f"{ports}x{gbps}" for gbps, ports in modes.items() if declared and ports % declared]
        if odd:
            problems.append(Problem(p.label, cells["cages"], "cages", declared,
                                    f"{declared} cages do not divide the ports of {', '.join(odd)}",
                                    "give the switch's physical cages (e.g. 32 for 64 x 400G in twin-port cages), "
                                    "a number that divides its ports at every speed, or leave it blank"))


def _check_planes(p: Parsed, problems: list[Problem]) -> None:
    for record, cells in zip(p.records, p.cells):
        nics, planes = record["nics_per_node"], record["planes"]
        if nics and planes and nics % planes:
            problems.append(Problem(p.label, cells["planes"], "planes", planes,
                                    f"must divide nics_per_node ({nics})",
                                    "use a number of planes the NICs split over evenly"))


def _check_dci_optics(p: Parsed, problems: list[Problem]) -> None:
    """A coherent module needs its channel width (the wavelengths a fiber pair carries follow from it)."""
    for values, cells in zip(p.records, p.cells):
        if values.get("kind", "coherent") == "coherent" and values.get("channel_ghz") is None:
            problems.append(Problem(p.label, cells["channel_ghz"], "channel_ghz", None,
                                    "a coherent module needs its channel width",
                                    "enter the channel width in GHz (e.g. 75 for 400ZR), or set kind to gray"))


def _check_panel_ports(p: Parsed, problems: list[Problem]) -> None:
    """A patch panel or an ODF needs its ports (the panels a site takes follow from them)."""
    for values, cells in zip(p.records, p.cells):
        if values.get("role") in ("panel", "odf") and values.get("ports") is None:
            what = {"panel": "a patch panel", "odf": "an ODF"}[values["role"]]
            problems.append(Problem(p.label, cells["ports"], "ports", None, f"{what} row needs its ports",
                                    "enter the link ends (panel) or fiber pair ends (odf) one unit holds, e.g. 48"))


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


def _check_rack_power(floor: Parsed, project: Parsed, nodes: Parsed, problems: list[Problem]) -> None:
    """Rack power is a constraint where a floorplan gives it: the nodes of one rack draw no more than
    rack_kw, and at least one node fits a rack."""
    name = norm(project.records[0]["node_type"] or "")
    node = next((r for r in nodes.records if norm(r["name"]) == name), None)
    if node is None or not node.get("node_power_kw"):
        return
    kw = float(node["node_power_kw"])
    for values, cells in zip(floor.records, floor.cells):
        rack_kw, per_rack = values["rack_kw"], values["nodes_per_rack"]
        if rack_kw is None:
            continue
        if kw > rack_kw:
            problems.append(Problem(floor.label, cells["rack_kw"], "rack_kw", rack_kw,
                                    f"one {node['name']} draws {kw:g} kW, more than a rack may",
                                    f"raise rack_kw to at least {kw:g}"))
        elif per_rack is not None and per_rack * kw > rack_kw + 1e-9:
            problems.append(Problem(floor.label, cells["nodes_per_rack"], "nodes_per_rack", per_rack,
                                    f"{per_rack} x {node['name']} draw {per_rack * kw:g} kW, above the rack's "
                                    f"{rack_kw:g} kW", f"enter at most {int(rack_kw // kw)} or raise rack_kw"))


# --- plausibility: values no plan has, as warnings -----------------------------------------------

def warn(parsed: dict[str, Parsed], notices: list[Notice]) -> None:
    """Warnings (not errors) for values no real plan has: a unit or percentage slip, swapped coordinates."""
    if "sites" in parsed:
        _warn_sites(parsed["sites"], notices)
    if "project" in parsed:
        _warn_project(parsed["project"], notices)
    if "sites" in parsed and "routes" in parsed:
        _warn_routes(parsed["routes"], parsed["sites"], notices)


def _warn_sites(p: Parsed, notices: list[Notice]) -> None:
    for record, cells in zip(p.records, p.cells):
        mw, pue = record["power_mw"], record["pue"]
        if mw is not None and mw > PLAUSIBLE_SITE_MW:
            notices.append(Notice(p.label, cells["power_mw"], "power_mw", f"{mw:,g} MW is more than any campus "
                                  f"has (the largest plan about {PLAUSIBLE_SITE_MW:,} MW): kW typed as MW?", "warning"))
        if pue is not None and pue > PLAUSIBLE_PUE:
            notices.append(Notice(p.label, cells["pue"], "pue", f"{pue:g} is above any operating data center "
                                  "(PUE 1.1 to 2): a typo?", "warning"))


def _warn_project(p: Parsed, notices: list[Notice]) -> None:
    ratio = p.records[0]["dci_ratio"]
    if ratio is not None and ratio > PLAUSIBLE_DCI_RATIO:
        notices.append(Notice(p.label, p.cells[0]["dci_ratio"], "dci_ratio", f"{ratio:g} asks more inter-site "
                              f"capacity than the NIC bandwidth itself: a percentage? ({ratio:g}% is "
                              f"{ratio / 100:g})", "warning"))


def _warn_routes(routes: Parsed, sites: Parsed, notices: list[Notice]) -> None:
    where = {r["name"]: (r["lat"], r["lon"]) for r in sites.records
             if r["name"] is not None and r["lat"] is not None and r["lon"] is not None}
    for record, cells in zip(routes.records, routes.cells):
        a, b, km = record["site_a"], record["site_b"], record["distance_km"]
        if a not in where or b not in where or km is None:
            continue
        crow = great_circle_km(*where[a], *where[b])
        if km + COORDINATE_SLACK_KM < crow:
            notices.append(Notice(routes.label, cells["distance_km"], "distance_km", f"{km:,g} km is shorter than "
                                  f"the {crow:,.0f} km between {a} and {b} as the crow flies (sites lat/lon): "
                                  "lat and lon swapped, or the wrong site?", "warning"))


def great_circle_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Haversine distance on a sphere of the Earth's mean radius."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    h = (math.sin((p2 - p1) / 2) ** 2
         + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2)
    return 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(min(1.0, h)))
