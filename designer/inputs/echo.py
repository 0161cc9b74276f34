"""The validated inputs as JSON-ready records: design.json ``inputs``, so a design can be audited on its own.

List-valued catalog cells are written back as the planner typed them (``64x800,128x400``, ``leaf,spine``);
``notices`` lists what the loader read in another form, ignored, replaced or found implausible."""

from __future__ import annotations

import math
from dataclasses import asdict

import pandas as pd

from designer.inputs.catalog import cell_text


def inputs_echo(inputs) -> dict:
    """The validated inputs as JSON-ready records, so a design can be audited on its own."""

    def records(frame, index_name):
        return [{index_name: str(k), **{c: plain(cell_text(v)) for c, v in row.items()}}
                for k, row in frame.iterrows()]

    return {
        "workbook": inputs.source, "sha256": inputs.sha256,
        "project": {k: plain(v) for k, v in inputs.project.items()},
        "workload": {k: plain(v) for k, v in inputs.workload.items()} if inputs.workload else None,
        "sites": records(inputs.sites, "name"),
        "routes": [{c: plain(v) for c, v in row.items()} for _, row in inputs.routes.iterrows()],
        "floorplan": records(inputs.floorplan, "site"),
        "node_types": records(inputs.node_types, "name"), "switches": records(inputs.switches, "model"),
        "optics": records(inputs.optics, "name"), "coherent": records(inputs.coherent, "name"),
        "amplifiers": records(inputs.amplifiers, "name"), "protocols": records(inputs.protocols, "name"),
        "support_networks": records(inputs.support_networks, "name"),
        "fiber_plant": records(inputs.fiber_plant, "name"), "cloud": records(inputs.cloud, "name"),
        "notices": [asdict(n) for n in inputs.notices],
    }


def plain(value):
    """numpy/pandas scalars, NaN and pandas' NA -> JSON-ready Python values."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is pd.NA:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
