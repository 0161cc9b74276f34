"""``designer bench``: how fast and how good the designer is, measured against the limits that exist.

Issue 5. Every figure comes from one run and is printed next to its target with met / missed:

- (a) the default example end to end (``designer solve`` in a fresh process) against a bare
  ``import pyomo.environ, pandas, openpyxl, networkx, highspy`` in a fresh process;
- (b) per phase times of ``solve()`` (``solution["timings"]``), (build + extract) / HiGHS's own
  time, and our ``solve()`` call against plain highspy on the exported MPS (same gap and limit);
- (c) time to a 1% gap and to proven optimality (gap 1e-4) and the peak memory (ru_maxrss of the
  child process that solved) along a series of synthetic instances of growing size;
- (d) the cost of our design against a greedy planner written here (cheapest sites by cost per MW
  first, the cheapest feasible fabric mode per site, straightforward sizing and inter-site links);
- (e) our time against the brute-force oracle (tests/oracle.py) on tiny instances of 2..6 sites.

Instances are deterministic (a seeded ``random.Random`` per instance) and are written as planner
workbooks with ``designer.inputs.writer.write_workbook`` and read back with ``designer.inputs.workbook.load_inputs``,
so the whole input path is exercised. Each solve runs in a fresh child process
(``python -m designer.tools.bench.children ...``) with a HiGHS time limit and a wall-clock limit; the parent
reads its peak memory with ``os.wait4``. Outputs: the table on stdout and ``bench.csv`` (one row per
figure) in the output folder, with the instance workbooks and exported models under ``instances/``.
"""
