"""Exporters over one Solution: design.json, bom.csv, design.xlsx, written atomically into a folder."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from designer.audit import resilience

BOM_COLUMNS = ["site", "category", "item", "quantity", "unit_price_usd", "extended_usd", "unit_power_w",
               "total_power_w"]


@contextmanager
def atomic_dir(target: Path):
    """Yield a staging folder; on success its files replace those in target, on failure nothing changes."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        yield stage
        target.mkdir(parents=True, exist_ok=True)
        for item in stage.iterdir():
            os.replace(item, target / item.name)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def write_json(solution: dict, path: Path) -> None:
    Path(path).write_text(json.dumps(solution, indent=2, default=str) + "\n", encoding="utf-8")


def bom_frame(solution: dict) -> pd.DataFrame:
    return pd.DataFrame(solution["bom"], columns=BOM_COLUMNS)


def write_bom_csv(solution: dict, path: Path) -> None:
    bom_frame(solution).to_csv(path, index=False)


def sheets(solution: dict) -> dict[str, pd.DataFrame]:
    """The design workbook's sheets, in order."""
    totals = solution["totals"]
    summary = [("name", solution.get("name")), ("status", solution["status"]), ("mip_gap", solution["mip_gap"]),
               ("objective", solution.get("objective")), ("objective_usd", solution["objective_usd"]),
               ("solve_seconds", solution["solve_seconds"])] + [(k, v) for k, v in totals.items()]
    opened = [s for s in solution["sites"] if s["open"]]
    site_rows = [{k: s.get(k) for k in ("name", "open", "nodes", "gpus", "topology", "protocol", "link_gbps",
                                        "oversubscription", "fabric_tiers", "planes", "hops", "fabric_latency_us",
                                        "power_mw", "power_cap_mw", "capex_usd")} for s in solution["sites"]]
    fabric = [{"site": s["name"], **t} for s in opened for t in s["tiers"]]
    fabric += [{"site": s["name"], "tier": f"links {lk['tier']}", "model": lk["item"], "count": lk["count"],
                "port_gbps": lk["gbps"], "modules": lk["modules"], "length_m": lk["length_m"]}
               for s in opened for lk in s.get("fabric_links", [])]
    bom = bom_frame(solution)
    power = [{"site": s["name"], "it_power_mw": s.get("it_power_mw"), "pue": s.get("pue"),
              "facility_power_mw": s["power_mw"], "power_cap_mw": s["power_cap_mw"],
              "headroom_mw": s["power_cap_mw"] - s["power_mw"]} for s in opened]
    cost = bom.groupby(["site", "category"], as_index=False)[["extended_usd", "total_power_w"]].sum()
    solver = [(k, v) for k, v in solution.get("solver", {}).items()]
    inputs = solution.get("inputs", {})
    echo = [(k, json.dumps(v, default=str) if isinstance(v, (dict, list)) else v)
            for k, v in inputs.get("project", {}).items()]
    echo.insert(0, ("workbook", inputs.get("workbook")))
    echo.insert(1, ("sha256", inputs.get("sha256")))
    return {
        "summary": pd.DataFrame(summary, columns=["key", "value"]),
        "sites": pd.DataFrame(site_rows),
        "fabric": pd.DataFrame(fabric),
        "links": pd.DataFrame(solution["links"]),
        "bom": bom,
        "power": pd.DataFrame(power),
        "cost": cost,
        "constraints": pd.DataFrame(solution.get("constraints", [])),
        "inputs": pd.DataFrame(echo, columns=["key", "value"]),
        "solver": pd.DataFrame(solver, columns=["key", "value"]),
        "resilience": pd.DataFrame(resilience.rows(solution.get("resilience")), columns=resilience.ROW_COLUMNS),
    }


def write_xlsx(solution: dict, path: Path) -> None:
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        for name, frame in sheets(solution).items():
            frame.to_excel(writer, sheet_name=name, index=False)
            ws = writer.sheets[name]
            for col in ws.columns:
                width = max(len(str(c.value)) if c.value is not None else 0 for c in col[:200])
                ws.column_dimensions[col[0].column_letter].width = min(60, max(10, width + 2))


def write_outputs(solution: dict, out_dir: Path, extra=None) -> list[Path]:
    """Write every output file atomically; ``extra(stage, solution)`` may add more (report, audit)."""
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as stage:
        write_json(solution, stage / "design.json")
        write_bom_csv(solution, stage / "bom.csv")
        write_xlsx(solution, stage / "design.xlsx")
        if extra is not None:
            extra(stage, solution)
        names = sorted(p.name for p in stage.iterdir())
    return [out_dir / n for n in names]
