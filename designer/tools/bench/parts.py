"""The parts of the benchmark, (a) to (e), the whole run and its summary against the targets."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from designer.formats import gap as gap_text
from designer.tools.bench.children import ChildResult, run_child, run_process
from designer.tools.bench.instances import (
    BARE_IMPORT,
    DEFAULT_WORKBOOK,
    FULL,
    ORACLE_PATH,
    QUICK,
    ROOT,
    Plan,
    Size,
    synth_workbook,
    tiny_workbook,
)
from designer.tools.bench.table import Row, Table, fmt, header, verdict, write_csv

# --- the parts ------------------------------------------------------------------------------------

def designer_command() -> list[str]:
    exe = Path(sys.executable).parent / "designer"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "designer.cli"]


def part_a(table: Table, plan: Plan, work: Path) -> dict:
    """The example end to end against the bare import, each one fresh process, one measured run each
    (after one unmeasured run of each, so that both find their files in the page cache: a fresh clone's first
    solve read the project's and the plotting stack's files from disk, the bare import's were cached)."""
    subprocess.run([sys.executable, "-c", BARE_IMPORT], check=True, cwd=ROOT)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", BARE_IMPORT], check=True, cwd=ROOT)
    bare = time.perf_counter() - start
    name = plan.example.name
    table.add("a", name, "bare import (fresh process)", bare, "s")
    out = work / f"solve-{plan.example.stem}"
    cmd = designer_command() + ["solve", str(plan.example), "-o", str(out), "--quiet", "--timings",
                                "--time-limit", f"{plan.time_limit:g}"]
    subprocess.run(cmd, capture_output=True, cwd=ROOT)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    e2e = time.perf_counter() - start
    timings = phase_times(done.stderr)
    design = {}
    if (out / "design.json").exists():
        design = json.loads((out / "design.json").read_text(encoding="utf-8"))
    status = design.get("status", f"exit {done.returncode}")
    note = "" if done.returncode == 0 else f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}"
    table.add("a", name, "designer solve end to end (fresh process)", e2e, "s", note=f"status {status}; {note}".strip("; "))
    for phase, seconds in timings.items():
        table.add("a", name, f"  phase {phase}", seconds, "s")
    ratio = e2e / bare
    table.add("a", name, "end to end / bare import", ratio, "x", "<= 3x", verdict(ratio <= 3))
    return {"timings": timings, "status": status, "gap": design.get("mip_gap"), "name": name}


def phase_times(stderr: str) -> dict[str, float]:
    """The phases ``designer solve --timings`` printed (name_s -> seconds)."""
    return {k: float(v) for k, v in re.findall(r"^\s+(\w+_s)\s+([\d.]+)\s*$", stderr, re.M)}


def log_phases(text: str, call_s: float, read_s: float) -> dict:
    """Phase times of a solve from its progress log (time stamps since the child started), for runs that
    return no timings (no solution within the limit, or killed)."""
    marks = {}
    keys = (("read and validated", "read"), ("fabric modes kept", "modes"), ("model built", "built"),
            ("solving: cost", "solving"), ("HiGHS:", "highs"))
    for line in text.splitlines():
        stamp, _, msg = line.strip().partition(" ")
        for key, mark in keys:
            if key in msg:
                try:
                    marks.setdefault(mark, float(stamp))
                except ValueError:
                    pass
    read = marks.get("read", read_s)
    out = {}
    built = re.search(r"model built:.*\(([\d.]+) s\)", text)  # the build time the solve itself states
    if "built" in marks and built:
        out["build_s"] = float(built.group(1))
        out["modes_s"] = max(0.0, marks["built"] - read - out["build_s"])
    elif "modes" in marks:
        out["modes_s"] = marks["modes"] - read
        if "built" in marks:
            out["build_s"] = marks["built"] - marks["modes"]
    if "solving" in marks:
        out["solve_s"] = marks.get("highs", read + call_s) - marks["solving"]
    return out


def size_fields(size: Size) -> dict:
    return {"sites": size.sites, "gpus": size.gpus, "switch_models": size.switches}


def solve_status(res: ChildResult) -> tuple[str, str]:
    """(status, note) of a solve child."""
    if res.error:
        return ("killed" if res.killed else "error"), res.error + (f"; last phase: {res.last_phase}" if res.last_phase else "")
    d = res.data
    note = d.get("note", "").split(";")[0]
    if d.get("status") in ("optimal", "feasible"):
        gap = d.get("gap")
        note = f"gap {gap_text(gap)}"
    return d.get("status", "?"), note


def part_bcd(table: Table, plan: Plan, work: Path, size: Size, largest: bool, whole: bool) -> dict:
    """Parts (b), (c) and (d) of one size-series instance; ``whole``: also the whole ``designer solve`` command to
    a 1% gap, outputs included (part_whole), what the targets of the largest instances are stated on."""
    from designer.inputs.writer import write_workbook

    name = size.name
    wb = write_workbook(work / f"{name}.xlsx", synth_workbook(size))
    meta = size_fields(size)
    wall = 4 * plan.time_limit + (600 if plan is FULL else 60)
    mps = work / f"{name}.mps"
    runs = {}
    for label, gap in (("1%", 0.01), ("optimal", 1e-4)):
        progress = work / f"{name}-gap{gap:g}.log"
        progress.unlink(missing_ok=True)
        export = str(mps) if label == "1%" else None
        runs[label] = run_child("solve", [str(wb), gap, plan.time_limit, export, str(progress)], wall, progress)
    first, best = runs["1%"], runs["optimal"]
    result = {"name": name, "size": size}
    log = work / f"{name}-gap0.01.log"
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    found = re.search(r"(\d+) fabric modes kept.*\n.*model built: (\d+) variables, (\d+) constraints", text)
    if found:
        table.add("b", name, "model size (variables / constraints)", f"{found.group(2)} / {found.group(3)}",
                  note=f"{found.group(1)} modes kept", **meta)
    t = first.data.get("timings")
    source = ""
    if not t:  # no solution or killed: the phases from the progress log's time stamps
        t = log_phases(text, first.data.get("call_s", first.wall_s), first.data.get("read_s", 0.0))
        source = f"from the progress log ({solve_status(first)[0]}: no timings returned)"
    for phase in ("modes_s", "build_s", "solve_s", "highs_s", "extract_s"):
        if phase in t:
            table.add("b", name, f"phase {phase} (1% gap run)", float(t[phase]), "s", note=source, **meta)
    highs = t.get("highs_s") or t.get("solve_s")
    if highs and "build_s" in t:
        ratio = (t["build_s"] + t.get("extract_s", 0.0)) / highs
        target = "<= 0.3 (largest size)" if largest else "(<= 0.3 at largest)"
        table.add("b", name, "(build + extract) / HiGHS solve", ratio, "", target,
                  verdict(ratio <= 0.3) if largest else "", source, **meta)
        result["overhead"] = ratio
    ours = sum(float(t.get(k, 0.0)) for k in ("modes_s", "build_s", "solve_s", "extract_s"))
    if mps.exists() and ours > 0:
        hs = run_child("highspy", [str(mps), 0.01, plan.time_limit], wall)
        if hs.error:
            table.add("b", name, "highspy alone on the MPS", "error", note=hs.error, **meta)
        else:
            table.add("b", name, "highspy alone on the MPS (read + run)", hs.data["seconds"], "s",
                      note=f"{hs.data['status']}, gap {gap_text(hs.data['gap'])}; plain HiGHS options "
                           "(the designer may set others, e.g. presolve)", **meta)
            ratio = ours / hs.data["seconds"]
            table.add("b", name, "our solve() call / highspy alone", ratio, "x", "<= 1.2x", verdict(ratio <= 1.2),
                      note=f"our call = modes + build + solve + extract (MPS write excluded); "
                           f"ours {solve_status(first)[0]}", **meta)
            result["vs_highspy"] = ratio
    elif first.error:
        table.add("b", name, "1% gap run", solve_status(first)[0], note=solve_status(first)[1], **meta)
    peak = max(first.peak_mb, best.peak_mb)
    for label, res in runs.items():
        status, note = solve_status(res)
        seconds = res.data.get("call_s") if not res.error else res.wall_s
        promise = float(seconds) / plan.time_limit
        table.add("c", name, f"solve() call / --time-limit ({label} run)", promise, "x", "<= 1.1",
                  verdict(promise <= 1.1), "the limit is one wall-clock budget for the whole solve", **meta)
        table.add("c", name, f"time to {'1% gap' if label == '1%' else 'optimal (gap 1e-4)'} (solve() call)",
                  float(seconds), "s", note=f"{status}; {note}".strip("; "), **meta)
        result[label] = (status, seconds, res.data.get("gap"))
    answer = best if not best.error and best.data.get("objective") else first
    if answer.data.get("split_savings") is not None:  # target 8: what the grid's splits cost at the design found
        named = answer.data["split_savings"]
        table.add("c", name, "the polish saved (every split at the design's node counts)", answer.data["polished"],
                  "USD", note=f"at {answer.data['polished_sites']} of {answer.data.get('sites_open')} open sites; "
                              f"named and left (no time for the polish): {sum(named):,.0f} USD at {len(named)}; "
                              "every split at every count: "
                              f"{'yes' if answer.data['every_split'] else 'no (more than one usable site)'}; "
                              f"objective {answer.data['objective']:,.0f} USD", **meta)
    table.add("c", name, "peak memory (child ru_maxrss)", peak, "MB",
              note=f"1% run {first.peak_mb:.0f} MB (writes the MPS too), 1e-4 run {best.peak_mb:.0f} MB", **meta)
    result["peak_mb"] = peak
    if whole:
        result["whole"] = part_whole(table, plan, work, wb, meta, wall)
    result["ours"] = answer
    result["saving"] = part_d(table, name, wb, result["ours"], meta, wall)
    return result


def part_whole(table: Table, plan: Plan, work: Path, workbook: Path, meta: dict, wall: float) -> dict:
    """``designer solve WORKBOOK --mip-gap 0.01`` in a fresh process, every output written (what a planner waits
    for): its wall time, gap and peak memory (children.run_process), and its phases."""
    import shutil

    name = workbook.stem
    out = work / f"{name}-outputs"
    shutil.rmtree(out, ignore_errors=True)
    log = work / f"{name}-command.log"
    cmd = designer_command() + ["solve", str(workbook), "-o", str(out), "--quiet", "--timings", "--mip-gap", "0.01",
                                "--time-limit", f"{plan.time_limit:g}"]
    code, seconds, peak, killed = run_process(cmd, wall, log)
    text = log.read_text(encoding="utf-8", errors="replace")
    found = out / "design.json"
    design = json.loads(found.read_text(encoding="utf-8")) if code == 0 and found.exists() else {}
    status = "killed" if killed else design.get("status", f"exit {code}")
    gap = design.get("mip_gap")
    note = ("; ".join(f"{k} {v:.1f} s" for k, v in phase_times(text).items() if k in ("solve_s", "audit_s", "write_s"))
            if code == 0 else " ".join(text.strip().splitlines()[-1:])[:240])
    table.add("c", name, "designer solve to 1% gap, outputs included (wall)", seconds, "s",
              note=f"{status}, gap {gap_text(gap)}; {note}".strip("; "), **meta)
    table.add("c", name, "peak memory of the whole command (ru_maxrss)", peak, "MB", **meta)
    return {"status": status, "seconds": seconds, "gap": gap, "peak_mb": peak}


def part_d(table: Table, name: str, workbook: Path, ours: ChildResult, meta: dict, wall: float) -> float | None:
    """The greedy planner's design (in a child: designer.tools.bench.children.child_greedy) against ours."""
    plan = run_child("greedy", [str(workbook)], wall)
    if plan.error:
        table.add("d", name, "greedy planner", "error", note=plan.error, **meta)
        return None
    g = plan.data
    if g["cost"] is None:
        table.add("d", name, "greedy planner", "no design", note=f"{g['reason']} ({g['seconds']:.1f} s)", **meta)
        return None
    table.add("d", name, "greedy planner cost", g["cost"] / 1e6, "M$",
              note=f"{g['sites']} sites, {g['seconds']:.1f} s", **meta)
    obj = ours.data.get("objective") if not ours.error else None
    if obj is None:
        status, note = solve_status(ours)
        table.add("d", name, "saving vs greedy", "n/a", "", ">= 0 %", "missed",
                  f"our solve returned no design ({status}: {note}) where the greedy planner found one", **meta)
        return None
    status, note = solve_status(ours)
    table.add("d", name, "our design cost", obj / 1e6, "M$", note=f"{status}; {note}", **meta)
    saving = 100.0 * (g["cost"] - obj) / g["cost"]
    ok = saving >= -1e-7
    table.add("d", name, "saving vs greedy", saving, "%", ">= 0 %", "met" if ok else "BUG",
              "" if ok else "our design is costlier than the greedy one: a bug to report", **meta)
    return saving


def part_e(table: Table, plan: Plan, work: Path, oracle_present: bool) -> tuple[list, list]:
    """Tiny instances: the oracle's time against ours, the costs compared, and the greedy saving."""
    from designer.inputs.writer import write_workbook

    speedups, savings = [], []
    for n in plan.oracle_sites:
        name = f"oracle-{n}-sites"
        meta = {"sites": n, "gpus": "", "switch_models": 3}
        wb = write_workbook(work / f"{name}.xlsx", tiny_workbook(n))
        progress = work / f"{name}.log"
        progress.unlink(missing_ok=True)
        ours = run_child("solve", [str(wb), 1e-4, plan.time_limit, None, str(progress)],
                         4 * plan.time_limit + 60, progress)
        status, note = solve_status(ours)
        our_s = ours.data.get("call_s") if not ours.error else None
        table.add("e", name, "our solve() call, gap 1e-4", our_s if our_s is not None else status,
                  "s" if our_s is not None else "", note=f"{status}; {note}".strip("; "), **meta)
        if oracle_present:
            orc = run_child("oracle", [str(wb)], plan.oracle_wall)
            target = ">= 100x" if n == 6 else ""
            if orc.error:
                if orc.killed and our_s:
                    bound = plan.oracle_wall / our_s
                    table.add("e", name, "brute force / ours (oracle cut off)", f">= {bound:.0f}", "x", target,
                              verdict(bound >= 100) if target else "", f"oracle {orc.error}", **meta)
                    speedups.append((n, bound, True))
                else:
                    table.add("e", name, "brute-force oracle", "error", note=orc.error, **meta)
            else:
                table.add("e", name, "brute-force oracle", orc.data["seconds"], "s", **meta)
                if our_s:
                    ratio = orc.data["seconds"] / our_s
                    table.add("e", name, "brute force / ours", ratio, "x", target, verdict(ratio >= 100) if target else "",
                              **meta)
                    speedups.append((n, ratio, False))
                mine, theirs = ours.data.get("objective"), orc.data.get("cost")
                if mine is not None or theirs is not None:
                    same = mine is not None and theirs is not None and abs(mine - theirs) <= 1e-4 * abs(theirs) + 1
                    table.add("e", name, "our cost = oracle cost", "yes" if same else "NO", "", "equal",
                              "met" if same else "missed",
                              f"ours {fmt(mine)} USD, oracle {fmt(theirs)} USD", **meta)
        saving = part_d(table, name, wb, ours, meta, plan.oracle_wall)
        if saving is not None:
            savings.append(saving)
    if not oracle_present:
        table.add("e", "-", "brute force / ours", "skipped", note=f"{ORACLE_PATH.relative_to(ROOT)} not found")
    return speedups, savings


def run(out_dir: Path, quick: bool = False, time_limit: float | None = None) -> list[Row]:
    """The whole bench; returns the rows (also printed, and written to out_dir/bench.csv)."""
    plan = QUICK if quick else FULL
    if time_limit is not None:
        plan = Plan(plan.sizes, plan.oracle_sites, time_limit, plan.oracle_wall, plan.example)
    out_dir = Path(out_dir).resolve()  # the children run in the repository, not where the bench was started
    work = out_dir / "instances"
    work.mkdir(parents=True, exist_ok=True)
    table = Table()
    started = time.perf_counter()
    print(f"designer bench{' --quick' if quick else ''}: {os.cpu_count()} CPUs, HiGHS limit {plan.time_limit:g} s "
          f"per solve; figures from one run each", flush=True)
    print(header(), flush=True)
    example = part_a(table, plan, work)
    results = []
    most = max(size.sites for size in plan.sizes)
    for k, size in enumerate(plan.sizes):
        results.append(part_bcd(table, plan, work, size, largest=k == len(plan.sizes) - 1,
                                whole=size.sites == most))
    oracle_present = ORACLE_PATH.exists()
    speedups, tiny_savings = part_e(table, plan, work, oracle_present)
    summary(table, plan, example, results, speedups, tiny_savings, oracle_present)
    table.add("-", "-", "bench wall time", time.perf_counter() - started, "s")
    write_csv(out_dir / "bench.csv", table.rows)
    print(f"wrote {out_dir / 'bench.csv'} ({len(table.rows)} figures)", flush=True)
    return table.rows


def target_8(table: Table, results: list) -> None:
    """(8) optimal over the design space, not a grid: met where every instance's Clos splits were all searched;
    otherwise the most a split outside the grid would save at a design's node counts (part_bcd)."""
    solved = [r for r in results if r["ours"].data.get("split_savings") is not None]
    if not solved:
        table.add("T", "all instances", "(8) every split searched", "n/a", "", "every instance", "n/a")
        return
    gridded = [r for r in solved if not r["ours"].data["every_split"]]

    def saved(r) -> float:
        """What every split at the design's node counts saved (the polish) or would save (named, left)."""
        return r["ours"].data["polished"] + sum(r["ours"].data["split_savings"])

    worst = max(solved, key=lambda r: saved(r) / r["ours"].data["objective"])
    table.add("T", worst["name"], "(8) every split searched; the most the grid's splits cost at a design's counts",
              100 * saved(worst) / worst["ours"].data["objective"], "%", "every instance", verdict(not gridded),
              f"{len(gridded)} of {len(solved)} instances searched at the grid's splits at every node count (more than "
              f"one usable site), then every split at the design's (the polish, and splits named where no time "
              f"was left for it: {saved(worst):,.0f} USD here)")


def summary(table: Table, plan: Plan, example: dict, results: list, speedups: list, tiny_savings: list,
            oracle_present: bool) -> None:
    """The targets of issue 9 (scale and speed), one line each; (b) the overhead figures of issue 5."""
    print("-" * 140 + "\ntargets (issue 9)", flush=True)
    a = next((r for r in table.rows if r.section == "a" and r.figure == "end to end / bare import"), None)
    if a is not None:
        table.add("T", example["name"], "(a) end to end / bare import", a.value, "x", "<= 3x", verdict(a.value <= 3))
    if plan is FULL or plan.example == DEFAULT_WORKBOOK:
        solve_s = example["timings"].get("solve_s")
        ok = None if solve_s is None else (example["status"] == "optimal" and solve_s <= 1.0)
        table.add("T", example["name"], "(a) default example proven optimal: solve time",
                  solve_s if solve_s is not None else "n/a", "s", "<= 1 s", verdict(ok), f"status {example['status']}")
    else:
        table.add("T", "-", "(a) default example proven optimal", "not run", "", "<= 1 s", "n/a",
                  f"--quick solves {plan.example.name} in part (a)")
    if results:
        most = max(r["size"].sites for r in results)
        for big, limit in [(max((r for r in results if r["size"].sites == most and r["size"].switches > 6),
                                key=lambda r: r["size"].switches, default=None), 120.0),
                           (next((r for r in results if r["size"].sites == most and r["size"].switches == 6), None),
                            60.0)]:
            if big is None:
                continue
            name, whole = big["name"], big["whole"]
            status, seconds, gap = whole["status"], whole["seconds"], whole["gap"]
            ok = status in ("optimal", "feasible") and gap is not None and gap <= 0.01 + 1e-9 and seconds <= limit
            table.add("T", name, "(c) designer solve to <= 1% gap, outputs included", float(seconds), "s",
                      f"<= {limit:g} s", verdict(ok), f"{status}, gap {gap_text(gap)}; the solve() call alone "
                      f"{float(big['1%'][1]):.1f} s")
            table.add("T", name, "(c) peak memory of the whole command", whole["peak_mb"], "MB", "<= 2048 MB",
                      verdict(whole["peak_mb"] <= 2048),
                      f"the solve() runs {big['peak_mb']:.0f} MB, the 1% run's with the MPS export the bench asks")
        big = results[-1]
        for label, key, unit, most in (("(b) (build + extract) / HiGHS solve", "overhead", "", 0.3),
                                       ("(b) our call / highspy alone", "vs_highspy", "x", 1.2)):
            value = big.get(key)
            table.add("T", big["name"], label, value if value is not None else "n/a", unit, f"<= {most:g}{unit}",
                      verdict(None if value is None else value <= most))
    savings = [r["saving"] for r in results if r.get("saving") is not None] + tiny_savings
    lost = [r.instance for r in table.rows if r.figure == "saving vs greedy" and r.verdict == "missed"]
    if savings:
        worst = min(savings)
        state = "BUG" if worst < -1e-7 else ("missed" if lost else "met")
        table.add("T", "all instances", "(d) median saving vs greedy", statistics.median(savings), "%",
                  "never < 0", state,
                  f"{len(savings)} instances compared, min {worst:.2f} %, max {max(savings):.2f} %"
                  + (f"; no design from our solve where greedy had one: {', '.join(lost)}" if lost else ""))
    else:
        table.add("T", "all instances", "(d) median saving vs greedy", "n/a", "", "never < 0", "n/a")
    target_8(table, results)
    if not oracle_present:
        table.add("T", "-", "(e) brute force / ours at 6 sites", "skipped", "", ">= 100x", "n/a",
                  "tests/oracle.py not found")
    else:
        at = [s for s in speedups if s[0] == 6] or ([max(speedups)] if speedups else [])
        if at:
            n, ratio, cut = at[0]
            value = f">= {ratio:.0f}" if cut else ratio
            table.add("T", f"oracle-{n}-sites", f"(e) brute force / ours at {n} sites", value, "x", ">= 100x",
                      verdict(ratio >= 100) if n == 6 else "n/a", "oracle cut off at its wall limit" if cut else "")
        else:
            table.add("T", "-", "(e) brute force / ours", "n/a", "", ">= 100x", "n/a", "no oracle run finished")


def main(args) -> int:
    out = Path(args.output) if args.output else ROOT / "reports" / "bench"
    run(out, quick=args.quick, time_limit=getattr(args, "time_limit", None))
    return 0
