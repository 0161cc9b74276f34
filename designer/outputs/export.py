"""Exporters over one Solution: design.json, bom.csv, design.xlsx, written atomically into a folder."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from designer.audit import resilience

BOM_COLUMNS = ["site", "category", "item", "quantity", "unit_price_usd", "extended_usd", "unit_power_w",
               "total_power_w", "sku", "lead_time_weeks"]  # the last two where the catalog row gives them


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet may run as a formula (OWASP)


@contextmanager
def atomic_dir(target: Path, keep: bool = False):
    """Yield a staging folder beside ``target`` and swap it in whole: the folder ends exactly as it was or
    exactly as this run wrote it, whatever fails. ``keep`` starts the stage as a copy of the folder (to
    replace some of its files); otherwise the folder belongs to the run: files of an earlier run that this
    one does not write are gone with the old folder. The old folder is renamed aside, the stage renamed
    into place (Ctrl-C held off between the two renames), and the old one deleted; a failed rename puts
    the old folder back. OSError becomes OutputError naming the folder."""
    from designer.errors import OutputError

    target = Path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{target.name}.stage-", dir=target.parent))
    except OSError as exc:
        raise OutputError(f"cannot write the output folder {target}: {exc.strerror or exc}") from None
    try:
        if keep and target.is_dir():
            shutil.copytree(target, stage, dirs_exist_ok=True)
        yield stage
        _swap(stage, target)
    except OSError as exc:
        raise OutputError(f"cannot write the output folder {target}: {exc.strerror or exc}"
                          + (f" ({exc.filename})" if exc.filename else "")) from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _swap(stage: Path, target: Path) -> None:
    old = None
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            os.rename(target, old / "folder")
        try:
            os.rename(stage, target)
        except OSError:
            if old is not None:
                os.rename(old / "folder", target)
            raise
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def csv_text(value):
    """A CSV cell a spreadsheet will not run: text starting like a formula gets a leading quote."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


def write_frame_csv(frame: pd.DataFrame, path: Path) -> None:
    frame.map(csv_text).to_csv(path, index=False)


def write_frames_xlsx(frames: dict[str, pd.DataFrame], path: Path, min_width: int = 10) -> None:
    """One sheet per frame, columns sized to their text; no cell is stored as a formula, whatever its text."""
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        for name, frame in frames.items():
            frame.to_excel(writer, sheet_name=name, index=False)
            ws = writer.sheets[name]
            for col in ws.columns:
                for c in col:
                    if c.data_type == "f":  # openpyxl reads text starting with '=' as a formula
                        c.data_type = "s"
                width = max(len(str(c.value)) if c.value is not None else 0 for c in col[:200])
                ws.column_dimensions[col[0].column_letter].width = min(60, max(min_width, width + 2))


def write_json(solution: dict, path: Path) -> None:
    Path(path).write_text(json.dumps(solution, indent=2, default=str) + "\n", encoding="utf-8")


def bom_frame(solution: dict) -> pd.DataFrame:
    """The BOM lines; the vendor-quote columns only when some catalog row gave them."""
    frame = pd.DataFrame(solution["bom"], columns=BOM_COLUMNS)
    return frame.drop(columns=[c for c in ("sku", "lead_time_weeks") if frame[c].isna().all()])


def write_bom_csv(solution: dict, path: Path) -> None:
    write_frame_csv(bom_frame(solution), path)


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
    write_frames_xlsx(sheets(solution), path)


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
