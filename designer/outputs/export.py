"""Exporters over one Solution: design.json, bom.csv, optics_per_device.csv, design.xlsx, written atomically into a
folder."""

from __future__ import annotations

import errno
import gc
import json
import logging
import os
import secrets
import shutil
import signal
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from designer.audit import resilience
from designer.outputs.devices import optics_per_device
from designer.outputs.statistics import alternative_rows, rack_rows, sensitivity_rows

BOM_COLUMNS = ["site", "category", "item", "quantity", "unit_price_usd", "extended_usd", "unit_power_w",
               "total_power_w", "sku", "lead_time_weeks", "spare_of", "basis"]
OPTIONAL_COLUMNS = BOM_COLUMNS[-4:]  # where the catalog row gives them; spares lines only


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet may run as a formula (OWASP)
RUN_MARKS = ("design.json", "sweep.csv")  # a folder holding one of these is an earlier run's, replaced whole
log = logging.getLogger(__name__)


def check_output_folder(target, replaced: bool = True) -> None:
    """Refuse, before any work, an output folder that cannot be written, saying why in words (OutputError).
    A ``replaced`` folder is swapped in whole (atomic_dir), so an existing one must be empty or an earlier
    run's, and the stage is made beside it; otherwise files are written in it."""
    from designer.errors import OutputError

    target = Path(target)
    where = target.parent
    try:
        if target.exists():
            _check_replaceable(target, replaced)
            where = Path(os.path.realpath(target)).parent if replaced else target
        else:
            where = next(p for p in target.parents if p.exists())  # the folder to create it in
            if not where.is_dir():
                raise OutputError(f"cannot write the output folder {target}: {where} is not a folder")
        with _ctrl_c_held() as pressed:  # the probe is gone again whenever Ctrl-C lands
            os.rmdir(tempfile.mkdtemp(prefix=f".{target.name}.probe-", dir=where))
        if pressed:
            raise KeyboardInterrupt
    except OSError as exc:
        raise _unwritable(target, exc, where) from None


def _check_replaceable(target: Path, replaced: bool = True) -> None:
    """An existing output folder can take the outputs: a folder we may write in and, when it is replaced
    whole, empty or an earlier run's (so that `-o .` never deletes a project)."""
    from designer.errors import OutputError

    def refuse(reason: str):
        return OutputError(f"cannot write the output folder {target}: {reason}")

    if not target.is_dir():
        raise refuse("a file of that name is in the way")
    if not os.access(target, os.W_OK | os.X_OK):
        raise refuse(f"no permission to write in {target}")
    if replaced and any(target.iterdir()) and not any((target / name).is_file() for name in RUN_MARKS):
        raise refuse(f"it holds files but no earlier run's {' or '.join(RUN_MARKS)}, and a run replaces its "
                     "folder whole; give a new or empty folder")


def _unwritable(target, exc: OSError, where):
    """The OutputError of an OSError met making the output folder ``target`` (or its stage) in ``where``."""
    from designer.errors import OutputError

    return OutputError(f"cannot write the output folder {target}: {_reason(exc, where)}")


def _reason(exc: OSError, where) -> str:
    """An OSError in words, naming the folder it concerns (never a temporary file's name)."""
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"no permission to write in {where}"
    return f"{exc.strerror or exc} ({where})"


@contextmanager
def atomic_dir(target: Path, keep: bool = False):
    """Yield a staging folder beside ``target`` and swap it in whole: the folder ends exactly as it was or
    exactly as this run wrote it, whatever fails (Ctrl-C included). ``keep`` starts the stage as a copy of
    the folder (to replace some of its files); otherwise the folder belongs to the run: files of an earlier
    run that this one does not write are gone with the old folder. A symlinked folder is written where it
    points. OSError becomes OutputError naming the folder."""
    from designer.errors import OutputError

    target = Path(target)
    real = Path(os.path.realpath(target))
    try:
        if real.exists():
            _check_replaceable(real)
        real.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unwritable(target, exc, real.parent) from None
    stage = _sibling(real, "stage")
    try:
        try:  # made inside the block that discards it: a Ctrl-C that lands as the folder is made takes it away too
            os.mkdir(stage)
        except OSError as exc:
            raise _unwritable(target, exc, real.parent) from None
        if real.is_dir():
            shutil.copymode(real, stage)
            if keep:
                shutil.copytree(real, stage, dirs_exist_ok=True)
        yield stage
        _swap(stage, real)
    except BaseException as exc:
        _discard(stage)
        if isinstance(exc, OSError):
            name = Path(exc.filename).name if exc.filename and Path(exc.filename).parent == stage else None
            raise OutputError(f"cannot write the output folder {target}: {exc.strerror or exc}"
                              + (f" ({name})" if name else "")) from None
        raise


@contextmanager
def beside(func, *args):
    """Run ``func(*args)`` in a forked process while the body runs, then wait for it: writers of files
    that do not depend on each other use both cores (the report's figures beside the cabling plan). Yields a list
    that holds what ``func`` returned once the block is over. The child's exception (an OSError, Ctrl-C) is raised
    here; a failing body stops the child. The child is no daemon, so that it may fork in turn (report.draw)."""
    import multiprocessing

    context = multiprocessing.get_context("fork")  # the child starts with the solution in memory, nothing to send
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_run_beside, args=(send, func, args), daemon=False)
    returned: list = []
    try:
        with _ctrl_c_held() as pressed:  # a Ctrl-C during the fork must not leave a child writing unseen
            gc.collect()  # the garbage of the work before, not handed to the child, which freezes all it has
            child.start()
        send.close()
        if pressed:
            raise KeyboardInterrupt
        yield returned
        try:
            failure, value = receive.recv()
        except EOFError:
            failure = RuntimeError(f"the process writing with {func.__name__} ended without a word")
    except BaseException:
        if child.pid is not None:
            child.kill()
        raise
    finally:
        if child.pid is not None:
            child.join()
        send.close()
        receive.close()
    if failure is not None:
        raise failure
    returned.append(value)


@contextmanager
def frozen():
    """The objects this process holds now left out of its collections until the block ends (gc.freeze): at the start
    of a command, what its imports made, which lives as long as the command does, is never walked again (the
    default example's command: 0.25-0.29 -> 0.18-0.20 s of collections in its own process). Unfrozen at the end by
    the block that froze first (none before it): a caller in the same process (the tests) collects what the block
    leaves. Not at a fork: the process would keep what the solve left uncollected (50 sites: 200 MB more at its
    peak); beside collects it and the forked child freezes all it inherits instead (_run_beside)."""
    owner = gc.get_freeze_count() == 0
    gc.freeze()
    try:
        yield
    finally:
        if owner:
            gc.unfreeze()


def _run_beside(send, func, args) -> None:
    signal.signal(signal.SIGINT, signal.default_int_handler)  # not the parent's held Ctrl-C
    gc.freeze()  # what it inherits never walked by its collections, nor those pages written (the gc module's advice)
    try:
        value = func(*args)
        send.send((None, value))
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent, which raises it
        try:
            send.send((exc, None))
        except Exception:  # noqa: BLE001 - an exception that cannot be pickled goes back as its text
            send.send((RuntimeError(f"{type(exc).__name__}: {exc}"), None))


def _sibling(target: Path, kind: str) -> Path:
    """A fresh hidden name beside ``target``: ``.NAME.stage-XXXXXXXX`` or ``.NAME.old-XXXXXXXX``."""
    return target.with_name(f".{target.name}.{kind}-{secrets.token_hex(4)}")


def _swap(stage: Path, target: Path) -> None:
    """Rename the old folder aside, the stage into place, and delete the old one, with Ctrl-C held off.
    A Ctrl-C that came before the stage is in place stops the run (the old folder is put back); after,
    the run is complete and it has nothing left to stop. A failed rename puts the old folder back."""
    from designer.errors import OutputError

    with _ctrl_c_held() as pressed:
        old = None
        if target.exists():
            old = _sibling(target, "old")
            os.rename(target, old)
        try:
            if pressed:
                raise KeyboardInterrupt
            os.rename(stage, target)
        except BaseException:
            if old is not None:
                try:
                    os.rename(old, target)
                except OSError as exc:
                    raise OutputError(f"cannot write the output folder {target}: {_reason(exc, target)}; the "
                                      f"earlier outputs are in {old}") from None
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
            if old.exists():
                log.warning("warning: could not delete the earlier outputs set aside in %s; delete it by hand", old)


def _discard(stage: Path) -> None:
    """Remove a staging folder whole, even if Ctrl-C is pressed again meanwhile (then raised after)."""
    with _ctrl_c_held() as pressed:
        shutil.rmtree(stage, ignore_errors=True)
    if pressed:
        raise KeyboardInterrupt


@contextmanager
def _ctrl_c_held():
    """Record Ctrl-C instead of raising it, in the main thread (where Python runs signal handlers, whichever
    thread the signal reaches); yields the list of SIGINTs received. A SIGINT already ignored stays so."""
    pressed: list[int] = []
    in_main = threading.current_thread() is threading.main_thread()
    if not in_main or signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, None):
        yield pressed
        return
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: pressed.append(signum))
    try:
        yield pressed
    finally:
        signal.signal(signal.SIGINT, previous)


def csv_text(value):
    """A CSV cell a spreadsheet will not run: text starting like a formula gets a leading quote."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


def csv_cell(value) -> str:
    """The text of one CSV cell as the csv module writes ``csv_text(value)`` (minimal quoting: text holding a comma,
    a quote or a line break in quotes, its quotes doubled; None empty; a number as str): rows joined by hand from
    cells made once (cabling.csv's million rows)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        return str(value)
    text = csv_text(value)
    if "," in text or '"' in text or "\n" in text or "\r" in text:
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_line(cells: list[str]) -> str:
    """A row of cell texts (csv_cell's) as a CSV line, ended CRLF as the csv module ends it."""
    return ",".join(cells) + "\r\n"


def csv_suffixed(cell: str, tail: str) -> str:
    """``csv_cell(text + tail)`` from ``cell = csv_cell(text)`` (text not empty) and a ``tail`` without a character
    to quote: numbered names (``<site>-c0000001``) from their prefix's cell."""
    return cell[:-1] + tail + '"' if cell.startswith('"') else cell + tail


def write_frame_csv(frame: pd.DataFrame, path: Path) -> None:
    """A frame as CSV, formula-like text quoted (csv_text), numbers plain (plain_number); CRLF rows (RFC 4180), so
    that the csv module quotes a carriage return inside a cell instead of letting it split the row."""
    numbers = frame.select_dtypes(include="number").columns
    frame.assign(**{c: frame[c].map(plain_number if c in numbers else csv_text) for c in frame.columns}).rename(
        columns=csv_text).to_csv(path, index=False, lineterminator="\r\n")


def plain_number(value) -> str:
    """A number as a CSV cell: a whole one without a decimal point (4, not 4.0), others without float noise
    (1833.6, not 1833.6000000000001); blank for a missing one."""
    if value is None or value != value:
        return ""
    if isinstance(value, bool):
        return str(value)
    rounded = round(float(value), 9)
    return str(int(rounded)) if rounded.is_integer() and abs(rounded) < 1e15 else repr(rounded)


def number_format(column: str) -> str | None:
    """The Excel number format of a column (or key) by its name: money, shares, counts, units."""
    if column in ("unit_price_usd", "price_usd"):
        return '"$"#,##0.00'
    if column.endswith("_usd"):
        return '"$"#,##0'
    if column == "mip_gap":
        return "0.000%"
    if "share" in column or column.endswith(("_fraction", "_pct")):
        return "0.0%"
    if column.endswith("_mw"):
        return "#,##0.000"
    if column.endswith(("_ms", "_us", "_db", "_dbm")):
        return "#,##0.000"
    if column.endswith(("_km", "_m", "_w", "_kw", "_mb", "_weeks", "_s")):
        return "#,##0.0"
    if column.endswith(("_gbps", "_ports", "_cages", "_nodes", "_gpus")) or column in COUNT_COLUMNS:
        return "#,##0"
    return None


COUNT_COLUMNS = {"quantity", "count", "nodes", "gpus", "wavelengths", "coherent_ports", "fiber_pairs", "amplifiers",
                 "modules", "total", "per_device", "devices", "max_nodes", "endpoints", "huts", "port_gbps",
                 "link_gbps", "gpus_required", "sites_open", "enumerated", "kept"}


def write_frames_xlsx(frames: dict[str, pd.DataFrame], path: Path, min_width: int = 10,
                      footers: dict[str, list[dict]] | None = None) -> None:
    """One sheet per frame, as a planner's table: bold frozen header, a filter over the rows, number formats by
    column name (number_format; on key/value sheets by key), blanks as empty cells, and ``footers`` (sheet ->
    rows, e.g. a total) in bold below the filtered rows. Columns sized to their text; no cell is stored as a
    formula, whatever its text."""
    from openpyxl.styles import Font

    bold = Font(bold=True)
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        for name, frame in frames.items():
            frame.to_excel(writer, sheet_name=name, index=False)
            ws = writer.sheets[name]
            rows = ws.max_row
            ws.freeze_panes = "A2"
            if len(frame.columns):
                ws.auto_filter.ref = ws.dimensions
            for row in (footers or {}).get(name, []):
                ws.append([row.get(c) for c in frame.columns])
                for c in ws[ws.max_row]:
                    c.font = bold
            keyed = list(frame.columns) == ["key", "value"]
            for c in ws[1]:
                c.font = bold
            for col in ws.columns:
                head = str(col[0].value)
                form = None if keyed else number_format(head)
                for k, c in enumerate(col[1:], start=2):
                    if isinstance(c.value, str) and c.value.startswith(FORMULA_STARTS):
                        c.data_type = "s"  # openpyxl takes text starting with '=' for a formula
                        c.quotePrefix = True  # and Excel keeps it text when the cell is edited
                    elif keyed and head == "value" and k <= rows:
                        form = number_format(str(ws.cell(k, 1).value))
                    if form and isinstance(c.value, (int, float)) and not isinstance(c.value, bool):
                        c.number_format = form
                width = max(len(str(c.value)) if c.value is not None else 0 for c in col[:200])
                ws.column_dimensions[col[0].column_letter].width = min(60, max(min_width, width + 2))


def write_json(solution: dict, path: Path) -> None:
    Path(path).write_text(json.dumps(solution, indent=2, default=str) + "\n", encoding="utf-8")


def bom_frame(solution: dict) -> pd.DataFrame:
    """The BOM lines, then the spares lines (category spares); the vendor-quote columns only when some catalog
    row gave them, the spares' columns only with spares. Money to the cent, power to the milliwatt per unit and the
    tenth of a watt in total."""
    frame = pd.DataFrame(solution["bom"] + solution.get("spares", []), columns=BOM_COLUMNS)
    frame = frame.drop(columns=[c for c in OPTIONAL_COLUMNS if frame[c].isna().all()])
    return round_figures(frame, {"unit_price_usd": 2, "extended_usd": 2, "unit_power_w": 3, "total_power_w": 1})


def round_figures(frame: pd.DataFrame, digits: dict[str, int]) -> pd.DataFrame:
    """``frame`` with the columns of ``digits`` rounded to that many decimals."""
    return frame.assign(**{c: pd.to_numeric(frame[c], errors="coerce").round(n) for c, n in digits.items()
                           if c in frame})


def write_bom_csv(solution: dict, path: Path) -> None:
    write_frame_csv(bom_frame(solution), path)


INPUT_TABLES = ("sites", "routes", "floorplan", "node_types", "switches", "optics", "coherent", "amplifiers",
                "protocols", "support_networks", "fiber_plant")
RACK_COLUMNS = ["site", "rack", "tier", "devices", "ru_used", "rack_ru", "kw", "rack_kw"]  # statistics.rack_rows


def sheets(solution: dict) -> dict[str, pd.DataFrame]:
    """The design workbook's sheets, in order: switches and fabric links apart (their counts do not add up), each
    input table echoed as a table (input_*)."""
    totals = solution["totals"]
    summary = [("name", solution.get("name")), ("status", solution["status"]), ("mip_gap", solution["mip_gap"]),
               ("objective", solution.get("objective")), ("objective_usd", solution["objective_usd"]),
               ("solve_seconds", solution["solve_seconds"])] + [(k, v) for k, v in totals.items()]
    opened = [s for s in solution["sites"] if s["open"]]
    site_rows = [{k: s.get(k) for k in ("name", "open", "nodes", "gpus", "topology", "protocol", "link_gbps",
                                        "oversubscription", "fabric_tiers", "planes", "hops", "fabric_latency_us",
                                        "power_mw", "power_cap_mw", "capex_usd")} for s in solution["sites"]]
    switches = [{"site": s["name"], **t} for s in opened for t in s["tiers"]]
    fabric_links = [{"site": s["name"], **lk} for s in opened for lk in s.get("fabric_links", [])]
    bom = bom_frame(solution)
    power = [{"site": s["name"], "it_power_mw": s.get("it_power_mw"), "pue": s.get("pue"),
              "facility_power_mw": s["power_mw"], "power_cap_mw": s["power_cap_mw"],
              "headroom_mw": s["power_cap_mw"] - s["power_mw"]} for s in opened]
    cost = bom.groupby(["site", "category"], as_index=False)[["extended_usd", "total_power_w"]].sum()
    solver = [(k, v) for k, v in solution.get("solver", {}).items()]
    inputs = solution.get("inputs", {})
    echo = [("workbook", inputs.get("workbook")), ("sha256", inputs.get("sha256"))]
    echo += [(k, json.dumps(v, default=str) if isinstance(v, (dict, list)) else v)
             for k, v in inputs.get("project", {}).items()]
    out = {
        "summary": pd.DataFrame(summary, columns=["key", "value"]),
        "sites": pd.DataFrame(site_rows),
        "switches": pd.DataFrame(switches),
        "fabric_links": pd.DataFrame(fabric_links),
        "links": pd.DataFrame(solution["links"]),
        "bom": bom,
        "optics_per_device": optics_per_device(solution),
        "network_racks": pd.DataFrame(rack_rows(solution), columns=RACK_COLUMNS),
        "power": pd.DataFrame(power),
        "cost": cost,
        "constraints": pd.DataFrame(solution.get("constraints", [])),
        "design_space": pd.DataFrame((solution.get("modes") or {}).get("space") or [],
                                     columns=["choice", "searched", "every"]),
        "inputs": pd.DataFrame(echo, columns=["key", "value"]),
    }
    if inputs.get("workload"):
        out["input_workload"] = pd.DataFrame(list(inputs["workload"].items()), columns=["key", "value"])
    for table in INPUT_TABLES:
        if inputs.get(table):
            out[f"input_{table}"] = pd.DataFrame(inputs[table]).map(
                lambda v: ", ".join(map(str, v)) if isinstance(v, list) else v)
    if inputs.get("notices"):
        out["input_notices"] = pd.DataFrame(inputs["notices"])
    out["solver"] = pd.DataFrame(solver, columns=["key", "value"])
    out["resilience"] = pd.DataFrame(resilience.rows(solution.get("resilience")), columns=resilience.ROW_COLUMNS)
    if solution.get("sensitivity"):
        out["sensitivity"] = pd.DataFrame(sensitivity_rows(solution))
    if solution.get("alternatives"):
        out["alternatives"] = pd.DataFrame([{k: ", ".join(v) if isinstance(v, list) else v for k, v in r.items()}
                                            for r in alternative_rows(solution)])
    return out | training_sheets(solution.get("training"))


def bom_totals(solution: dict, bom: pd.DataFrame) -> list[dict]:
    """The BOM sheet's total rows: capex (the lines other than spares), and with spares the capex with spares."""
    spare = bom["category"] == "spares"
    rows = [{"site": "total capex", "extended_usd": solution["totals"]["capex_usd"],
             "total_power_w": float(bom.loc[~spare, "total_power_w"].sum())}]
    if spare.any():
        rows.append({"site": "total with spares", "extended_usd": solution["totals"].get("capex_with_spares_usd")})
    return rows


TRAINING_TABLES = ("collectives", "scaling", "cloud", "notes")


def training_sheets(training: dict | None) -> dict[str, pd.DataFrame]:
    """Sheet ``training`` (the step and the run, key by key) and its tables: collectives, step time against GPU
    count, cloud offers."""
    if not training:
        return {}
    keys = [(f"comm_exposed_s.{k}" if name == "comm_exposed_s" else f"parallelism.{k}" if name == "parallelism"
             else name, v)
            for name, value in training.items() if name not in TRAINING_TABLES
            for k, v in (value.items() if isinstance(value, dict) else [(None, value)])]
    keys += [("note", n) for n in training["notes"]]
    out = {"training": pd.DataFrame(keys, columns=["key", "value"]),
           "collectives": pd.DataFrame(training["collectives"]), "training_scaling": pd.DataFrame(training["scaling"])}
    if training["cloud"]:
        out["build_or_rent"] = pd.DataFrame(training["cloud"])
    return out


def write_xlsx(solution: dict, path: Path) -> dict[str, pd.DataFrame]:
    """design.xlsx; returns its sheets (optics_per_device.csv is one of them)."""
    frames = sheets(solution)
    write_frames_xlsx(frames, path, footers={"bom": bom_totals(solution, frames["bom"])})
    return frames


def write_tables(solution: dict, stage: Path) -> None:
    """bom.csv, design.xlsx and optics_per_device.csv (one of its sheets)."""
    write_bom_csv(solution, stage / "bom.csv")
    frames = write_xlsx(solution, stage / "design.xlsx")
    write_frame_csv(frames["optics_per_device"], stage / "optics_per_device.csv")


def write_outputs(solution: dict, out_dir: Path, extra=None, tables: bool = True) -> list[Path]:
    """Write every output file atomically; ``extra(stage, solution)`` may add more (report, audit: an exception
    there leaves the folder as it was). design.json comes last, with what ``extra`` adds to the solution (the
    audit's time). ``tables``: write_tables first; False where ``extra`` writes them (the CLI, beside the cabling
    plan)."""
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as stage:
        if tables:
            write_tables(solution, stage)
        if extra is not None:
            extra(stage, solution)
        write_json(solution, stage / "design.json")
        names = sorted(p.name for p in stage.iterdir())
    return [out_dir / n for n in names]
