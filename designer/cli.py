"""The ``designer`` command. Imports are lazy so ``--help`` answers without Pyomo or pandas.

Exit codes: 0 solved, 1 anything else, 2 invalid input (a bad flag included), 3 infeasible, 4 no solution
within limits, 130 interrupted (Ctrl-C; the output folder as it was).
"""

from __future__ import annotations

import argparse
import io
import math
import os
import sys
import time
import unicodedata
import warnings
from pathlib import Path

EXIT_OK, EXIT_ERROR, EXIT_INPUT, EXIT_INFEASIBLE, EXIT_NO_SOLUTION = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C
ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WORKBOOK = ROOT / "data" / "examples" / "default.xlsx"
REPORTS = ROOT / "reports"


def _number(text: str, low: float, high: float, low_open: bool, high_open: bool, what: str) -> float:
    """A finite number within (or at) its bounds, else an argparse usage error (exit 2, before any work)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; {what}") from None
    inside = math.isfinite(value) and (value > low if low_open else value >= low) and (
        value < high if high_open else value <= high)
    if not inside:
        raise argparse.ArgumentTypeError(f"{text!r} is out of range; {what}")
    return value


def seconds(text: str) -> float:
    return _number(text, 0, math.inf, True, True, "give a time limit in seconds above 0, e.g. 60")


def gap(text: str) -> float:
    return _number(text, 0, 1, False, True, "give a relative gap from 0 up to (not including) 1, e.g. 0.01")


def count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return value


def model_path(text: str) -> str:
    if Path(text).suffix.lower() not in (".mps", ".lp"):
        raise argparse.ArgumentTypeError(f"{text!r} must end in .mps or .lp (the format is taken from it)")
    return text


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="designer", description="Optimizing network designer for GPU training "
                                "clusters: planner workbook in, proven-optimal design out.")
    p.add_argument("--debug", action="store_true", help="show a traceback on errors")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("solve", help="solve a planner workbook and write the design")
    s.add_argument("workbook", nargs="?", help="planner workbook (.xlsx); default: the embedded example")
    s.add_argument("-o", "--output", help="output folder (default: reports/<workbook stem>/)")
    s.add_argument("--time-limit", type=seconds, help="wall-clock limit of the whole solve in seconds")
    s.add_argument("--mip-gap", type=gap, default=1e-4, help="relative MIP gap to prove (default 1e-4)")
    s.add_argument("--threads", type=count, help="HiGHS threads")
    s.add_argument("--quiet", action="store_true", help="print only errors")
    s.add_argument("--export-model", metavar="PATH", type=model_path, help="also write the exact model (.mps or .lp, symbolic "
                   "names) so it can be re-solved with plain HiGHS")
    s.add_argument("--timings", action="store_true", help="print the time of each phase")
    s.add_argument("--explain", action="store_true", help="also re-solve to say what relaxing each limit buys "
                   "(sensitivity) and what each alternative costs (protocol, topology, switch family, one site "
                   "fewer); a re-solve per limit and alternative: minutes on a large workbook")
    s.add_argument("--debug", action="store_true", help="show a traceback on errors")

    a = sub.add_parser("audit", help="re-check a design from first principles (exit 0 only when it passes)")
    a.add_argument("design", help="output folder of a `designer solve` run, or its design.json")
    a.add_argument("--workbook", help="compare with this planner workbook and audit against its tables")
    a.add_argument("--debug", action="store_true", help="show a traceback on errors")

    v = sub.add_parser("validate", help="check a workbook without solving")
    v.add_argument("workbook")
    v.add_argument("--debug", action="store_true", help="show a traceback on errors")

    t = sub.add_parser("template", help="write a blank planner workbook with the default catalog")
    t.add_argument("path")
    t.add_argument("--debug", action="store_true", help="show a traceback on errors")

    r = sub.add_parser("report", help="regenerate report.html and report.md from DIR/design.json")
    r.add_argument("folder", help="output folder of a `designer solve` run")
    r.add_argument("--debug", action="store_true", help="show a traceback on errors")

    w = sub.add_parser("sweep", help="solve a grid of scenarios in parallel; sweep.csv, sweep.xlsx, pareto.png")
    w.add_argument("workbook", help="planner workbook (.xlsx)")
    w.add_argument("--vary", action="append", default=[], metavar="KEY=V1,V2,...",
                   help="a project key (budget_usd, gpus_required, max_fabric_latency_us, dci_ratio, ...) or a site "
                   "field (sites.NAME.power_mw) and its values; repeat for a grid")
    w.add_argument("-o", "--output", help="output folder (default: reports/<workbook stem>-sweep/)")
    w.add_argument("--workers", type=count, help="parallel processes (default: CPUs, at most the scenarios)")
    w.add_argument("--dask", metavar="ADDRESS", help="run on an existing dask.distributed scheduler, e.g. "
                   "tcp://scheduler:8786")
    w.add_argument("--time-limit", type=seconds, help="wall-clock limit per scenario in seconds")
    w.add_argument("--mip-gap", type=gap, default=1e-4, help="relative MIP gap to prove (default 1e-4)")
    w.add_argument("--threads", type=count, default=1, help="HiGHS threads per scenario (default 1)")
    w.add_argument("--no-diagnose", action="store_true", help="skip the elastic diagnosis of infeasible scenarios")
    w.add_argument("--quiet", action="store_true", help="no progress bar")
    w.add_argument("--debug", action="store_true", help="show a traceback on errors")

    c = sub.add_parser("catalog", help="list the default equipment catalog")
    c.add_argument("table", nargs="?", help="one table: node_types, switches, optics, coherent, amplifiers, "
                   "protocols")
    c.add_argument("--debug", action="store_true", help="show a traceback on errors")

    b = sub.add_parser("bench", help="benchmark: synthetic instances of growing size against bare import, "
                       "plain highspy, a greedy planner and brute force; bench.csv")
    b.add_argument("--quick", action="store_true", help="a few small instances with short limits (under a minute)")
    b.add_argument("-o", "--output", help="output folder (default: reports/bench/)")
    b.add_argument("--time-limit", type=seconds, help="HiGHS time limit per solve in seconds (default 120, 20 with "
                   "--quick)")
    b.add_argument("--debug", action="store_true", help="show a traceback on errors")
    return p


class Terminal(io.TextIOBase):
    """Standard output or error with control and format characters escaped (a name in a workbook cannot
    move the cursor, ring the bell or reverse the text on the planner's terminal); lines and tabs kept."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write("".join(repr(c)[1:-1] if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf")
                                  else c for c in text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return self.stream.isatty()


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Terminal(sys.stdout), Terminal(sys.stderr)
    try:
        with warnings.catch_warnings():
            if not args.debug:  # a library's warnings (a glyph missing from a font) are not the planner's
                import logging

                logging.getLogger("pyomo").setLevel(logging.CRITICAL)
                warnings.simplefilter("ignore")
            return run_command(args)
    finally:
        sys.stdout, sys.stderr = streams


def entry() -> int:
    """The ``designer`` console script: main(), then every object left frozen (gc.freeze), so that the interpreter's
    exit does not walk them in its last collections (0.3-0.4 s after the default example's solve, 0.1 s left). Not
    main() itself: a caller in the same process (the tests) keeps collecting what its calls leave."""
    import gc

    code = main()
    gc.freeze()
    return code


def run_command(args) -> int:
    """The command's exit code, every failure mapped to one (report_error)."""
    try:
        code = COMMANDS[args.command](args)
        sys.stdout.flush()  # a closed pipe is found here, not at exit
        return code
    except KeyboardInterrupt:
        print("interrupted: nothing written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader of our output went away (designer catalog | head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - the CLI maps every failure to an exit code
        return report_error(exc, args.debug)


def report_error(exc: Exception, debug: bool) -> int:
    from designer.errors import (
        AuditFailure,
        Infeasible,
        InputError,
        NoSolution,
        OutputError,
        SolverFailure,
    )

    if debug:
        import traceback

        traceback.print_exc()
    if isinstance(exc, InputError):
        print(f"error: {len(exc.problems)} problem(s) in the input:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return EXIT_INPUT
    if isinstance(exc, Infeasible):
        print(f"infeasible: {exc.reason}", file=sys.stderr)
        diagnosis = exc.details.get("diagnosis") or {}
        if diagnosis.get("changes"):
            print("to make a design possible:", file=sys.stderr)
        for line in [c["message"] for c in diagnosis.get("changes", [])] + diagnosis.get("notes", []):
            print(f"  {line}", file=sys.stderr)
        return EXIT_INFEASIBLE
    if isinstance(exc, NoSolution):
        print(f"no solution: {exc}", file=sys.stderr)
        return EXIT_NO_SOLUTION
    if isinstance(exc, (SolverFailure, OutputError)):
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if isinstance(exc, AuditFailure):
        print(f"error: the solver's design fails the independent audit ({len(exc.violations)} violation(s)); "
              "this is a bug in the designer, no files written:", file=sys.stderr)
        for violation in exc.violations:
            print(f"  {violation}", file=sys.stderr)
        return EXIT_ERROR
    print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
    return EXIT_ERROR


def cmd_solve(args) -> int:
    from designer.audit.checks import audit
    from designer.audit.resilience import resilience
    from designer.errors import AuditFailure, Infeasible
    from designer.inputs.workbook import load_inputs
    from designer.outputs.cabling import site_graphs, write_cabling, write_graphml
    from designer.outputs.handoff import write_handoffs
    from designer.outputs.export import beside, check_output_folder, frozen, write_outputs, write_tables
    from designer.outputs.report import figures, write_infeasible, write_reports
    from designer.solve.diagnose import infeasible_solution
    from designer.solve.run import SolveOptions, solve

    with frozen():  # what the imports made left out of the collections until the command ends (export.frozen)
        workbook = Path(args.workbook) if args.workbook else DEFAULT_WORKBOOK
        say = (lambda _m: None) if args.quiet else (lambda m: print(f"  .. {m}", file=sys.stderr, flush=True))
        say(f"reading {workbook}")
        start = time.perf_counter()
        inputs = load_inputs(workbook)
        read_s = time.perf_counter() - start
        if not args.quiet:
            print_notices(inputs)
        out = Path(args.output) if args.output else REPORTS / workbook.stem
        check_output_folder(out)
        options = SolveOptions(time_limit=args.time_limit, mip_gap=args.mip_gap, threads=args.threads, progress=say,
                               export_model=args.export_model)
        try:
            solution = solve(inputs, options)
        except Infeasible as exc:  # design.json with the diagnosis, and the report; exit 3 via report_error
            solution = infeasible_solution(inputs, exc, options)
            say("writing the outputs")
            files = write_infeasible(out, solution)
            print(f"wrote {', '.join(f.name for f in files)} to {out}", file=sys.stderr)
            raise

        if args.explain:
            explain(inputs, solution, SolveOptions(mip_gap=args.mip_gap, threads=args.threads), say)

        def extra(stage, solution):
            # the site graphs built once, before the fork; in the forked process the report's figures first
            # (report.draw: in two), then fabric.graphml, neither of which reads the resilience; in this one the
            # resilience (design.json, the tables and the report read it), the tables, cabling.csv, the audit, the
            # handoffs and, the figures drawn, the reports (README, Performance: session 36). The outputs are staged
            # until the audit passes (write_outputs): a design that fails it leaves no file
            graphs = site_graphs(solution)

            def figures_and_graphml():
                drawn = figures(solution)
                write_graphml(solution, stage / "fabric.graphml", graphs)
                return drawn

            with beside(figures_and_graphml) as drawn:
                solution["resilience"] = resilience(solution)
                write_tables(solution, stage)
                write_cabling(solution, stage / "cabling.csv", graphs)
                start = time.perf_counter()
                violations = audit(solution)
                solution["timings"]["audit_s"] = time.perf_counter() - start
                if violations:
                    raise AuditFailure(violations)
                write_handoffs(solution, graphs, stage)
            write_reports(stage, solution, drawn[0])

        solution["timings"] = {"read_validate_s": read_s, **solution.get("timings", {})}
        say("writing the outputs")
        start = time.perf_counter()
        files = write_outputs(solution, out, extra=extra, tables=False)
        solution["timings"]["write_s"] = time.perf_counter() - start
        try:
            print_result(args, solution, files, out)
        except KeyboardInterrupt:  # the new outputs are in place: the run is done, only its summary is cut short
            pass
        return EXIT_OK


def explain(inputs, solution: dict, options, say) -> None:
    """design.json ``sensitivity`` and ``alternatives`` by re-solving; the constraints table's binding flags from
    the sensitivity's re-solves."""
    from designer.solve.alternatives import alternatives
    from designer.solve.sensitivity import mark_constraints, sensitivity

    say("explaining: each limit relaxed and re-solved")
    solution["sensitivity"] = sensitivity(inputs, solution, options)
    mark_constraints(solution["constraints"], solution["sensitivity"]["rows"])
    say(f"explaining: the alternatives ({solution['sensitivity']['seconds']:.0f} s so far)")
    solution["alternatives"] = alternatives(inputs, solution, options)
    solution.setdefault("timings", {})["explain_s"] = (solution["sensitivity"]["seconds"]
                                                       + solution["alternatives"]["seconds"])


def print_result(args, solution: dict, files: list[Path], out: Path) -> None:
    """The time of each phase (--timings, stderr), the summary and the files written (stdout)."""
    from designer.outputs.summary import summary_lines

    if args.timings:
        for phase, seconds in solution["timings"].items():
            print(f"  {phase:<16}{seconds:9.3f}", file=sys.stderr)
    if not args.quiet:
        for line in summary_lines(solution):
            print(line)
        print(f"wrote {', '.join(f.name for f in files)} to {out}")


NOTICE_KINDS = {"read": "read as", "ignored": "ignored", "catalog": "catalog", "warning": "warning"}


def print_notices(inputs) -> None:
    """What the loader read in another form, ignored, took from the catalog, or finds implausible: one line
    each on stderr, grouped in that order (a kind of notice not listed in NOTICE_KINDS last, by its name)."""
    kinds = list(NOTICE_KINDS) + sorted({n.kind for n in inputs.notices} - set(NOTICE_KINDS))
    for kind in kinds:
        for notice in (n for n in inputs.notices if n.kind == kind):
            print(f"{NOTICE_KINDS.get(kind, kind)}: {notice}", file=sys.stderr)


def cmd_report(args) -> int:
    from designer.outputs.report import regenerate

    files = regenerate(args.folder)
    print(f"wrote {', '.join(f.name for f in files)} to {args.folder}")
    return EXIT_OK


def cmd_sweep(args) -> int:
    from designer.tools.sweep import cli_sweep

    return cli_sweep(args, REPORTS)


def cmd_audit(args) -> int:
    import json

    from designer.audit.checks import audit

    path = Path(args.design)
    path = path / "design.json" if path.is_dir() else path
    try:
        design = json.loads(path.read_text(encoding="utf-8"))
        missing = [k for k in ("status", "sites", "links", "bom", "totals", "inputs") if k not in design]
    except (OSError, ValueError, TypeError) as exc:
        print(f"error: cannot read a design from {path}: {exc}", file=sys.stderr)
        return EXIT_INPUT
    if missing:
        print(f"error: {path} is not a design.json (no {', '.join(missing)})", file=sys.stderr)
        return EXIT_INPUT
    if design["status"] not in ("optimal", "feasible"):
        print(f"{path}: no design to audit (status {design['status']})", file=sys.stderr)
        return EXIT_ERROR
    violations = audit(design, workbook=args.workbook)
    for violation in violations:
        print(violation)
    if violations:
        print(f"{path}: {len(violations)} violation(s)", file=sys.stderr)
        return EXIT_ERROR
    opened = sum(1 for s in design["sites"] if s["open"])
    print(f"{path}: audit passed ({opened} open site(s), {len(design['links'])} route(s))")
    return EXIT_OK


def cmd_validate(args) -> int:
    from designer.inputs.workbook import load_inputs

    inputs = load_inputs(args.workbook)
    print_notices(inputs)
    print(f"{args.workbook}: valid ({len(inputs.sites)} sites, {len(inputs.routes)} routes, "
          f"{inputs.project['gpus_required']:,} GPUs of {inputs.project['node_type']})")
    return EXIT_OK


def cmd_template(args) -> int:
    from designer.inputs.template import write_template

    path = write_template(args.path)
    print(f"wrote template {path}")
    return EXIT_OK


def cmd_catalog(args) -> int:
    import pandas as pd

    from designer.inputs.workbook import load_catalog

    tables = load_catalog()
    names = [args.table] if args.table else list(tables)
    for name in names:
        if name not in tables:
            print(f"error: no catalog table '{name}'; tables: {', '.join(tables)}", file=sys.stderr)
            return EXIT_INPUT
        frame = tables[name].drop(columns=["source"], errors="ignore")
        print(f"# {name}")
        with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_colwidth", 40):
            print(frame.to_string())
        print()
    print("Prices and most power figures are estimates from an editable catalog; see each row's source "
          "(data/catalog/*.csv).")
    return EXIT_OK


def cmd_bench(args) -> int:
    from designer.outputs.export import check_output_folder
    from designer.tools.bench.parts import main as bench_main

    check_output_folder(Path(args.output) if args.output else REPORTS / "bench", replaced=False)
    return bench_main(args)


COMMANDS = {"solve": cmd_solve, "audit": cmd_audit, "validate": cmd_validate, "template": cmd_template,
            "catalog": cmd_catalog, "report": cmd_report, "sweep": cmd_sweep, "bench": cmd_bench}

if __name__ == "__main__":
    sys.exit(entry())
