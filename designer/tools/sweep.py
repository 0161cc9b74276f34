"""Scenario sweeps: a grid of variations of one workbook, solved in parallel, with a Pareto front.

``designer sweep WORKBOOK --vary KEY=V1,V2 [--vary ...]`` varies project keys (budget_usd,
gpus_required, max_fabric_latency_us, dci_ratio, max_oversubscription, ...) and site fields
(``sites.NAME.power_mw``). Variations apply to the validated Inputs and are re-validated with the
schema's own rules (designer.inputs.schema, designer.inputs.workbook), so a bad value is an input error (exit 2)
before anything runs. Each scenario runs in its own process (ProcessPoolExecutor) or, with
``--dask ADDRESS``, on a dask.distributed cluster; a worker returns its row and its output files as
bytes, so workers need no shared file system. The sweep writes sweep.csv, sweep.xlsx, pareto.png
and one sub-folder per scenario (design.json, bom.csv, design.xlsx, report.html, report.md) into a
staging folder swapped in whole at the end (designer.outputs.export.atomic_dir); Ctrl-C stops every
worker's scenario and runs no other.
"""

from __future__ import annotations

import itertools
import math
import os
import signal
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from designer.errors import InputError, Problem

LIST_SEPARATOR = ";"  # values of list-valued keys (protocols_allowed) are split on ";" instead of ","
BLANK = {"", "none", "blank", "null"}
ROW_COLUMNS = ["scenario", "status", "reason", "cost_usd", "capex_usd", "gpus", "cost_per_gpu_usd", "worst_latency_us",
               "power_mw", "sites_open", "sites_opened", "most_gpus_cut_off", "mip_gap", "solve_seconds",
               "wall_seconds", "pareto_latency", "pareto_gpus", "diagnosis", "folder"]


# --- parsing and validating the variations --------------------------------------------------------

def parse_vary(items: list[str]) -> list[tuple[str, list[str]]]:
    """``KEY=V1,V2,...`` strings as (key, raw values); InputError listing every malformed one."""
    problems, out, seen = [], [], set()
    for item in items:
        key, sep, values = item.partition("=")
        key = key.strip()
        if not sep or not key:
            problems.append(Problem("--vary", "", "", item, "must be KEY=V1,V2,...",
                                    "e.g. --vary budget_usd=1e8,2e8 or --vary sites.dc2.power_mw=20,40"))
            continue
        if key in seen:
            problems.append(Problem("--vary", "", key, None, "key varied twice", "give each key one --vary"))
            continue
        seen.add(key)
        sep = LIST_SEPARATOR if LIST_SEPARATOR in values else ","
        raw = [v.strip() for v in values.split(sep)]
        if not raw or all(v == "" for v in raw):
            problems.append(Problem("--vary", "", key, values, "has no values", "list values after '='"))
            continue
        out.append((key, raw))
    if not items:
        problems.append(Problem("--vary", "", "", None, "nothing to vary", "add --vary KEY=V1,V2,..."))
    if problems:
        raise InputError(problems)
    return out


def _typed(field, raw: str, key: str, problems: list) -> object:
    """A raw --vary value typed and checked by the schema field's own rules (as the workbook loader does)."""
    from designer.inputs.cells import typed_value

    if raw.strip().lower() in BLANK:
        if field.required:
            problems.append(Problem("--vary", "", key, raw, "cannot be blank", "give a value"))
        return field.default
    before = len(problems)
    value = typed_value(field, raw, "--vary", "", problems)
    for k in range(before, len(problems)):  # name the varied key as the planner typed it
        p = problems[k]
        problems[k] = Problem("--vary", "", key, p.value, p.message, p.fix)
    return value


def apply(inputs, changes: dict[str, str], name: str | None = None):
    """The Inputs of one scenario: ``changes`` {key: raw value} applied and re-validated.

    Keys are project keys or ``sites.NAME.FIELD``. InputError lists every bad value."""
    from designer.inputs.schema import SHEETS, TOPOLOGIES

    problems: list[Problem] = []
    project = dict(inputs.project)
    sites = inputs.sites.copy()
    for key, raw in changes.items():
        if key.startswith("sites."):
            _, _, rest = key.partition(".")
            site, _, column = rest.rpartition(".")
            field = SHEETS["sites"].field(column)
            if site not in sites.index:
                problems.append(Problem("--vary", "", key, site, "is not a site in the workbook",
                                        "sites are: " + ", ".join(map(str, sites.index))))
                continue
            if field is None or column == "name":
                problems.append(Problem("--vary", "", key, column, "is not a sites column that can vary",
                                        "columns: " + ", ".join(c for c in SHEETS["sites"].columns if c != "name")))
                continue
            value = _typed(field, raw, key, problems)
            sites.loc[site, column] = value
            continue
        field = SHEETS["project"].field(key)
        if field is None or key == "name":
            problems.append(Problem("--vary", "", key, None, "unknown project key",
                                    "keys: " + ", ".join(k for k in SHEETS["project"].columns if k != "name")
                                    + ", or sites.NAME.FIELD"))
            continue
        project[key] = _typed(field, raw, key, problems)
    _cross_checks(inputs, project, sites, changes, problems)
    if problems:
        raise InputError(problems)
    project["protocols_allowed"] = project["protocols_allowed"] or list(inputs.protocols.index)
    project["topologies_allowed"] = project["topologies_allowed"] or list(TOPOLOGIES)
    if name:
        project["name"] = name
    return replace(inputs, name=project["name"], project=project, sites=sites)


def _cross_checks(inputs, project, sites, changes, problems) -> None:
    """The loader's rules across keys that a variation can break: references, site counts."""
    if "node_type" in changes and project["node_type"] not in inputs.node_types.index:
        problems.append(Problem("--vary", "", "node_type", project["node_type"], "is not a name in node_types",
                                "use one of: " + ", ".join(map(str, inputs.node_types.index))))
    if "protocols_allowed" in changes:
        for name in project["protocols_allowed"] or []:
            if name not in inputs.protocols.index:
                problems.append(Problem("--vary", "", "protocols_allowed", name, "is not a name in protocols",
                                        "use some of: " + ", ".join(map(str, inputs.protocols.index))))
    lo, hi = project.get("min_sites"), project.get("max_sites")
    if lo is not None and hi is not None and lo > hi:
        problems.append(Problem("--vary", "", "min_sites", lo, f"is more than max_sites ({hi})",
                                "lower min_sites or raise max_sites"))
    usable = int((sites["status"] != "excluded").sum())
    if usable == 0:
        problems.append(Problem("--vary", "", "status", None, "every site is excluded",
                                "keep at least one site candidate or required"))
    required = int((sites["status"] == "required").sum())
    if hi is not None and required > hi:
        problems.append(Problem("--vary", "", "max_sites", hi, f"is less than the {required} required sites",
                                "raise max_sites"))


def grid(varies: list[tuple[str, list[str]]]) -> list[dict[str, str]]:
    """Every combination of the varied values, first key slowest."""
    keys = [k for k, _ in varies]
    return [dict(zip(keys, combo)) for combo in itertools.product(*(v for _, v in varies))]


def scenario_ids(n: int) -> list[str]:
    width = max(2, len(str(n)))
    return [f"s{k + 1:0{width}d}" for k in range(n)]


# --- running one scenario (in a worker process) --------------------------------------------------

def run_scenario(task: dict) -> dict:
    """Solve one scenario and render its outputs; returns {"row": ..., "files": {name: bytes}}.

    Runs in a worker (a local process or a dask worker): it touches no shared folder, and every failure
    becomes a row with its reason."""
    from designer.audit.resilience import resilience
    from designer.errors import Infeasible, NoSolution
    from designer.outputs.export import write_outputs
    from designer.outputs.report import write_infeasible, write_reports
    from designer.solve.diagnose import infeasible_solution
    from designer.solve.run import SolveOptions, solve

    start = time.perf_counter()
    inputs = task["inputs"]
    options = SolveOptions(time_limit=task.get("time_limit"), mip_gap=task.get("mip_gap", 1e-4),
                           threads=task.get("threads"), diagnose=task.get("diagnose", True))
    row = {"scenario": task["scenario"], **task["changes"], "status": None, "reason": ""}
    files: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="designer-sweep-") as tmp:
        out = Path(tmp) / "out"
        try:
            solution = solve(inputs, options)
            solution["resilience"] = resilience(solution)
            write_outputs(solution, out, extra=write_reports)
            row.update(summarise(solution))
        except Infeasible as exc:
            solution = infeasible_solution(inputs, exc, options)
            write_infeasible(out, solution)
            diagnosis = exc.details.get("diagnosis") or {}
            row.update(status="infeasible", reason=exc.reason,
                       diagnosis="; ".join(c["message"] for c in diagnosis.get("changes", [])))
        except NoSolution as exc:
            row.update(status="no_solution", reason=str(exc))
        except Exception as exc:  # noqa: BLE001 - a failed scenario is a row, not a crashed sweep
            row.update(status="error", reason=f"{type(exc).__name__}: {exc}")
        if out.is_dir():
            files = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    row["wall_seconds"] = round(time.perf_counter() - start, 3)
    return {"row": row, "files": files}


def summarise(solution: dict) -> dict:
    from designer.outputs.statistics import open_sites, worst_latency_us

    totals = solution["totals"]
    opened = open_sites(solution)
    return {"status": solution["status"], "cost_usd": solution["objective_usd"], "capex_usd": totals["capex_usd"],
            "gpus": totals["gpus"], "cost_per_gpu_usd": solution["objective_usd"] / totals["gpus"] if totals["gpus"]
            else None, "worst_latency_us": worst_latency_us(solution), "power_mw": totals["power_mw"],
            "sites_open": len(opened), "sites_opened": ",".join(s["name"] for s in opened),
            "mip_gap": solution["mip_gap"], "solve_seconds": solution["solve_seconds"],
            "most_gpus_cut_off": max((r["gpus_cut_off"] for r in (solution.get("resilience") or {}).get("routes", [])),
                                     default=0)}


# --- running the grid -----------------------------------------------------------------------------

class Progress:
    """A plain-text progress bar on stderr (one line per scenario when stderr is not a terminal)."""

    def __init__(self, total: int, enabled: bool = True, stream=None):
        self.total, self.done, self.failed = total, 0, 0
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.start = time.perf_counter()
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._draw("")

    def update(self, row: dict) -> None:
        self.done += 1
        if row.get("status") not in ("optimal", "feasible"):
            self.failed += 1
        self._draw(f"{row['scenario']} {row.get('status')}")

    def _draw(self, last: str) -> None:
        if not self.enabled:
            return
        width = 30
        filled = int(width * self.done / max(self.total, 1))
        bar = "#" * filled + "." * (width - filled)
        text = (f"[{bar}] {self.done}/{self.total} scenarios, {self.failed} without a design, "
                f"{time.perf_counter() - self.start:.0f} s" + (f"  ({last})" if last else ""))
        if self.tty:
            self.stream.write("\r" + text.ljust(110))
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def default_workers(n: int) -> int:
    return max(1, min(n, os.cpu_count() or 1))


def run_tasks(tasks: list[dict], workers: int | None = None, dask_address: str | None = None,
              progress: Progress | None = None, on_result=None) -> list[dict]:
    """Run every task (run_scenario) in parallel; results in task order."""
    results: dict[str, dict] = {}

    def done(result: dict) -> None:
        results[result["row"]["scenario"]] = result
        if on_result is not None:
            on_result(result)
        if progress is not None:
            progress.update(result["row"])

    if dask_address:
        _run_dask(tasks, dask_address, done)
    else:
        _run_local(tasks, workers or default_workers(len(tasks)), done)
    return [results[t["scenario"]] for t in tasks]


def _failed(task: dict, exc: BaseException) -> dict:
    row = {"scenario": task["scenario"], **task["changes"], "status": "error",
           "reason": f"{type(exc).__name__}: {exc}"}
    return {"row": row, "files": {}}


class _Worker:
    """A local sweep worker process: Ctrl-C stops the scenario it runs and skips those queued for it (the
    pool hands each worker more than one in advance), so a sweep stops promptly."""

    stopped = False
    busy = False

    @classmethod
    def start(cls) -> None:
        signal.signal(signal.SIGINT, cls.ctrl_c)

    @classmethod
    def ctrl_c(cls, _signum, _frame) -> None:
        cls.stopped = True
        if cls.busy:  # between scenarios the pool's own loop must not be interrupted
            raise KeyboardInterrupt

    @classmethod
    def run(cls, task: dict) -> dict:
        if cls.stopped:
            raise KeyboardInterrupt
        cls.busy = True
        try:
            return run_scenario(task)
        finally:
            cls.busy = False


def _run_local(tasks, workers: int, done) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    if workers <= 1:
        for task in tasks:
            done(run_scenario(task))
        return
    context = multiprocessing.get_context("spawn")  # no fork of a process holding HiGHS or plotting threads
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_Worker.start) as pool:
        futures = {pool.submit(_Worker.run, task): task for task in tasks}
        try:
            for future in as_completed(futures):
                try:
                    result = future.result()
                except Exception as exc:  # noqa: BLE001 - a worker that died is a row with its reason
                    result = _failed(futures[future], exc)
                done(result)
        except BaseException:  # Ctrl-C, or files not written: stop every worker's scenario, run no other
            pool.shutdown(wait=False, cancel_futures=True)
            for worker in multiprocessing.active_children():
                os.kill(worker.pid, signal.SIGINT)
            raise


def _run_dask(tasks, address: str, done) -> None:
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise InputError([Problem("--dask", "", "", None, "dask.distributed is not installed",
                                  "pip install 'designer[dask]' (or dask[distributed])")]) from None
    try:
        client = Client(address, timeout="20s")
    except Exception as exc:  # noqa: BLE001
        raise InputError([Problem("--dask", "", "", address, f"cannot reach the dask scheduler ({exc})",
                                  "give the scheduler address, e.g. tcp://host:8786")]) from None
    try:
        futures = client.map(run_scenario, tasks, pure=False, key=[f"designer-{t['scenario']}-{os.getpid()}-"
                                                                     f"{time.time_ns()}" for t in tasks])
        by_key = {f.key: t for f, t in zip(futures, tasks)}
        for future in as_completed(futures):
            try:
                result = future.result()
            except Exception as exc:  # noqa: BLE001 - a worker that died is a row with its reason
                result = _failed(by_key[future.key], exc)
            done(result)
    finally:
        client.close()


# --- Pareto front and outputs ---------------------------------------------------------------------

def non_dominated(rows: list[dict], key: str, maximize: bool = False, like: str | None = None) -> set[str]:
    """Scenarios whose (cost, key) no other scenario beats in both (minimising cost; key minimised, or
    maximised when ``maximize``), compared only with scenarios of the same ``like`` value (e.g. the GPU count:
    a 1,024-GPU design is not beaten by a cheaper 512-GPU one)."""
    pts = [(r["scenario"], float(r["cost_usd"]), float(r[key]) * (-1 if maximize else 1), r.get(like) if like else 0)
           for r in rows if r.get("cost_usd") is not None and r.get(key) is not None
           and not (isinstance(r.get(key), float) and math.isnan(r[key]))]
    front = set()
    for name, c, x, g in pts:
        if not any(g2 == g and (c2 <= c and x2 <= x) and (c2 < c or x2 < x) for _, c2, x2, g2 in pts):
            front.add(name)
    return front


#: sweep.csv's figures rounded to what they mean (cents, watts, nanoseconds, milliseconds)
ROUNDING = {"cost_usd": 2, "capex_usd": 2, "cost_per_gpu_usd": 2, "worst_latency_us": 3, "power_mw": 6,
            "mip_gap": 6, "solve_seconds": 3, "wall_seconds": 3}


def write_sweep(rows: list[dict], varied: list[str], out: Path) -> list[Path]:
    """sweep.csv, sweep.xlsx (scenarios, grid) and pareto.png into ``out``. The latency front compares designs of
    the same GPU count; the GPU front, cost against GPUs delivered."""
    import pandas as pd

    from designer.outputs.export import round_figures, write_frame_csv, write_frames_xlsx
    from designer.outputs.plots import pareto_figure, save

    front_latency = non_dominated(rows, "worst_latency_us", like="gpus")
    front_gpus = non_dominated(rows, "gpus", maximize=True)
    for r in rows:
        r["pareto_latency"] = r["scenario"] in front_latency
        r["pareto_gpus"] = r["scenario"] in front_gpus
    columns = ["scenario"] + varied + [c for c in ROW_COLUMNS if c != "scenario"]
    frame = round_figures(pd.DataFrame([{c: r.get(c) for c in columns} for r in rows], columns=columns), ROUNDING)
    write_frame_csv(frame, out / "sweep.csv")
    write_frames_xlsx({"scenarios": frame, "grid": pd.DataFrame({"varied": varied})}, out / "sweep.xlsx", min_width=9)
    save(pareto_figure(rows, front_latency, front_gpus), out / "pareto.png")
    return [out / "sweep.csv", out / "sweep.xlsx", out / "pareto.png"]


def write_scenario_files(out: Path, result: dict) -> None:
    """A scenario's files into its own folder of the sweep's (staging) folder."""
    if not result["files"]:
        return
    folder = out / result["row"]["scenario"]
    folder.mkdir()
    for name, data in result["files"].items():
        (folder / name).write_bytes(data)
    result["row"]["folder"] = result["row"]["scenario"]


def sweep(inputs, vary: list[str], out: Path, workers: int | None = None, dask_address: str | None = None,
          time_limit: float | None = None, mip_gap: float = 1e-4, threads: int | None = 1, diagnose: bool = True,
          show_progress: bool = True) -> list[dict]:
    """Validate the grid, run it, write every output; the rows in grid order. The output folder is swapped
    in whole once every scenario has run (atomic_dir): a sweep that fails or is stopped leaves it as it was."""
    from designer.outputs.export import atomic_dir

    varies = parse_vary(vary)
    combos = grid(varies)
    ids = scenario_ids(len(combos))
    problems, tasks = [], []
    for sid, changes in zip(ids, combos):
        try:
            scenario_inputs = apply(inputs, changes, name=f"{inputs.name}-{sid}")
        except InputError as exc:
            problems += [p for p in exc.problems if p not in problems]
            continue
        tasks.append({"scenario": sid, "changes": changes, "inputs": scenario_inputs, "time_limit": time_limit,
                      "mip_gap": mip_gap, "threads": threads, "diagnose": diagnose})
    if problems:
        raise InputError(problems)
    with atomic_dir(Path(out)) as stage:
        progress = Progress(len(tasks), enabled=show_progress)
        results = run_tasks(tasks, workers, dask_address, progress,
                            on_result=lambda r: write_scenario_files(stage, r))
        rows = [r["row"] for r in results]
        write_sweep(rows, [k for k, _ in varies], stage)
    return rows


def cli_sweep(args, reports: Path) -> int:
    """``designer sweep``: exit 0 when the sweep ran (scenarios without a design are rows), 2 on bad input."""
    from designer.inputs.workbook import load_inputs
    from designer.outputs.export import check_output_folder

    workbook = Path(args.workbook)
    inputs = load_inputs(workbook)
    out = Path(args.output) if args.output else reports / f"{workbook.stem}-sweep"
    check_output_folder(out)
    start = time.perf_counter()
    rows = sweep(inputs, args.vary, out, workers=args.workers, dask_address=args.dask, time_limit=args.time_limit,
                 mip_gap=args.mip_gap, threads=args.threads, diagnose=not args.no_diagnose,
                 show_progress=not args.quiet)
    from designer.formats import money

    varied = [k for k, _ in parse_vary(args.vary)]
    for r in rows:
        what = ", ".join(f"{k}={r.get(k)}" for k in varied)
        if r.get("cost_usd") is not None:
            mark = " *" if r.get("pareto_latency") or r.get("pareto_gpus") else ""
            print(f"{r['scenario']} {what}: {r['status']}, {money(r['cost_usd'])}, {r['gpus']:,} GPUs, "
                  f"worst latency {r['worst_latency_us']:.2f} µs, {r['power_mw']:.2f} MW, "
                  f"sites {r['sites_opened']}{mark}")
        else:
            print(f"{r['scenario']} {what}: {r['status']}: {r.get('diagnosis') or r.get('reason')}")
    print(f"{len(rows)} scenarios in {time.perf_counter() - start:.1f} s (* non-dominated); wrote sweep.csv, "
          f"sweep.xlsx, pareto.png and one folder per scenario to {out}")
    return 1 if rows and all(r["status"] == "error" for r in rows) else 0
