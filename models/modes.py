"""Fabric modes: every (topology, protocol, speeds, switch models, oversubscription) combination.

A mode fixes everything about a site's scale-out fabric except its size. Sizes (nodes, leaves,
spines, cores) are decided by the MILP with the linear rules each mode carries here:

- ``d1``/``u1``: down/up ports of a leaf; ``d2``/``u2`` of an aggregation (3-tier spine) switch.
  A switch with port modes {gbps: ports} is a bandwidth pool: a split uses d x g_down + u x g_up
  <= pool, each speed one of its modes, and d x g_down <= level x u x g_up (oversubscription); the cages
  it takes (switch_cages: declared, else its ports at the fastest speed; a slower port a lane of one) are
  within its own.
- ``spine_ports``: ports of a 2-tier spine at g1; ``core_ports``: ports of a core switch at g2.
- ``node_cap``: the most nodes one site can hold in this mode (topology size limit).

Modes are enumerated before the model is built; each rejected combination keeps its reason. A fabric (switches,
speeds and splits) is enumerated once; its cables and its latency depend on the cable lengths, which depend on
the site (models.layout): it becomes one mode per distinct set of lengths and cable choice, each carrying the
sites it applies at.
"""

from __future__ import annotations

import functools
import itertools
import math
import time
from collections import Counter
from dataclasses import dataclass, field

import pandas as pd

from models.layout import ATTACH, attach_length, site_layout, tier_lengths
from models.splits import Shape, static_options, static_splits

PROPAGATION_NS_PER_M = 5.0
SPEEDS_GBPS = (200, 400, 800, 1600)
OVERSUBSCRIPTION_LEVELS = (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.0)

# (topology, switch tiers, worst-case switch hops)
TOPOLOGY_VARIANTS = (
    ("leaf_spine", 2, 3),
    ("fat_tree_3", 3, 5),
    ("rail_optimized", 2, 3),
    ("rail_optimized", 3, 5),
    ("rail_only", 1, 1),
    ("rail_only", 2, 3),
    ("leaf_mesh", 1, 1),
    ("leaf_mesh", 2, 2),
)


@dataclass(frozen=True)
class Cable:
    """The cable or transceiver pair chosen for one tier of links."""

    tier: str
    gbps: int
    length_m: float
    item: str
    kind: str
    links_per_module: int
    unit_price: float
    unit_power_w: float

    @property
    def cable(self) -> bool:
        """A cable (DAC or AOC; a splitter when it carries more than one link), not a transceiver."""
        return self.kind in ("dac", "aoc")

    @property
    def modules_per_link(self) -> float:
        """Items per link at best: a cable (a 1:k splitter serves k links), or a module at each end (a twin-port
        module serves two)."""
        return (1.0 if self.cable else 2.0) / self.links_per_module

    def patched(self, in_rack_m: float) -> bool:
        """Whether its links run through patch panels: a transceiver's link longer than cable_in_rack_m (two jumpers
        and a trunk, plant_bounds), not a cable's."""
        return self.kind == "transceiver" and self.length_m > in_rack_m

    def items_per_attachment(self, nics: int) -> int:
        """Items for one DCI attachment's ``nics`` router-leaf links: a cable each; or, for transceivers, the
        router's ports sharing multi-link modules (ceil(nics / k)) and a module at each leaf end (the ports
        of one attachment lie on different leaves in a rail design)."""
        if self.cable:
            return nics
        return -(-nics // self.links_per_module) + nics


@dataclass(frozen=True)
class Mode:
    """One fabric design pattern; sizes are linear in the MILP's integer counts."""

    id: str
    topology: str
    tiers: int
    hops: int
    protocol: str
    leaf: str
    spine: str | None
    core: str | None
    g0: int
    g1: int | None
    g2: int | None
    d1: int
    u1: int
    d2: int = 0
    u2: int = 0
    spine_ports: int = 0
    core_ports: int = 0
    level1: float = 1.0
    level2: float = 1.0
    oversubscription: float = 1.0
    cables: tuple[Cable, ...] = ()
    latency_us: float = 0.0
    latency_breakdown_us: dict = field(default_factory=dict, compare=False, hash=False)
    node_cap: int = 0
    max_leaves: int = 0  # leaf_mesh: most leaves the mesh may have at this port split
    sites: frozenset = field(default=frozenset(), compare=False, hash=False)  # where its cables are the choice
    # DCI router-to-leaf links at the NIC speed, the Pareto-optimal cables over the sites' attach length; none
    # when no DCI router speaks the leaf's family at that speed (the fabric then carries no inter-site traffic)
    attach: tuple[Cable, ...] = ()
    # a Clos at the oversubscription limit: every leaf split (d, u) within it (models.splits); () for the one split
    # (d1, u1); splits2: a 3-tier one's every aggregation split (d2, u2)
    splits: tuple[tuple[int, int], ...] = ()
    splits2: tuple[tuple[int, int], ...] = ()

    @property
    def rail_based(self) -> bool:
        return self.topology in ("rail_optimized", "rail_only")

    def evolve(self, **changes) -> Mode:
        """A copy with ``changes``: dataclasses.replace without its walk over the fields and __init__ (the
        enumeration makes a mode per cable choice: 92k on the scale-across example, 1.0 s of its 3.6 s there)."""
        copy = object.__new__(Mode)
        copy.__dict__.update(self.__dict__, **changes)
        return copy

    def spine_options(self) -> list[int]:
        """Uniform striping: the spines of one 2-tier Clos divide a leaf's uplinks."""
        return [s for s in range(1, self.u1 + 1) if self.u1 % s == 0]

    def options(self) -> tuple[tuple[int, int, int], ...]:
        """A 2-tier Clos's (down ports, up ports, spines) choices: the split (d1, u1) over each spine count dividing
        u1, or, with ``splits``, those of every split no other dominates (models.splits.static_options); a 3-tier
        one's leaf splits (d, u, 0) no other dominates (models.splits.static_splits)."""
        if self.tiers == 3:
            return tuple((d, u, 0) for d, u in static_splits(self.splits))
        if self.splits:
            return static_options(self.splits)
        return tuple((self.d1, self.u1, j) for j in self.spine_options())


class PastDeadline(Exception):
    """A step before the solver (the modes' preparation, the model's build) ran past the caller's deadline (its
    message says how far it got)."""


def unit_shape(topology: str, rails: int) -> tuple[int, int]:
    """(leaf down ports an endpoint takes, leaves a unit counted) of a 2-tier Clos: a leaf_spine counts leaves, rails
    ports an endpoint; a rail-optimized fabric scalable units of a leaf per rail, a port each; a rail-only fabric
    (a Clos per rail) leaves, a port each."""
    if topology == "rail_optimized":
        return 1, rails
    return (1, 1) if topology == "rail_only" else (rails, 1)


def split_figures(inputs, mode: Mode, rails: int) -> Shape:
    """What the price, power and patched links of a 2-tier Clos mode's options depend on (models.splits.Shape):
    its switches, its uplinks' item and the least fiber plant a link of it takes (plant_bounds)."""
    sw = switch_rows(inputs)
    cable = mode.cables[1]
    in_rack = float(inputs.project.get("cable_in_rack_m") or 0.0)
    plant = plant_rows(inputs)
    per_endpoint, per_unit = unit_shape(mode.topology, rails)
    panel = plant.get("panel")
    return Shape(per_endpoint, per_unit, mode.spine_ports, float(sw[mode.leaf]["price_usd"]),
                 float(sw[mode.leaf]["power_w"]), float(sw[mode.spine]["price_usd"]), float(sw[mode.spine]["power_w"]),
                 cable.links_per_module, cable.cable, cable.unit_price, cable.unit_power_w,
                 plant_bounds(plant, cable, in_rack)[0], cable.patched(in_rack),
                 0.0 if panel is None else float(panel["price_usd"]), 0 if panel is None else int(panel["ports"]))


def check_deadline(ends: float | None, progress: str) -> None:
    """Raise PastDeadline (with ``progress``) when ``ends`` (perf_counter seconds) has passed."""
    if ends is not None and time.perf_counter() > ends:
        raise PastDeadline(progress)


@dataclass
class ModeSet:
    """The kept modes and, for each rejected combination, why. After the model data's preparation
    (designer.solve.prepare) ``modes`` are the modes the model gets, or, where none is left, those the filters after
    the enumeration removed."""

    modes: list[Mode]
    filtered: Counter
    examples: dict[str, str]
    final: int | None = None  # modes left after the filters applied after enumeration (workload, dominance)

    def summary(self) -> dict:
        kept = len(self.modes) if self.final is None else self.final
        return {
            "enumerated": kept + sum(self.filtered.values()),
            "kept": kept,
            "filtered": dict(self.filtered),
            "examples": [{"reason": r, "mode": m} for r, m in self.examples.items()],
        }


@functools.lru_cache(maxsize=4096)
def split_ports(modes: tuple[tuple[int, int], ...], g_down: int, g_up: int, level: float,
                cages: int | None = None) -> tuple[int, int]:
    """Most down ports d (then fewest up ports u) of a switch with port modes ((gbps, ports), ...) with
    d*g_down + u*g_up <= pool, d*g_down <= level*u*g_up, and ceil(d / lanes_down) + ceil(u / lanes_up) <= cages:
    ``cages`` (switch_cages; default its ports at the fastest speed), a port a lane of one (the audit's
    Catalog.port gives each speed its own cages)."""
    best = (0, 0)
    for d, u in every_split(modes, g_down, g_up, level, cages):
        if d > best[0]:
            best = (d, u)
    return best


@functools.lru_cache(maxsize=4096)
def every_split(modes: tuple[tuple[int, int], ...], g_down: int, g_up: int, level: float,
                cages: int | None = None) -> tuple[tuple[int, int], ...]:
    """Every up-port count u with the most down ports d it takes (split_ports' rules), (d, u) by u, d >= 1: the
    splits a leaf may use within the oversubscription ``level`` (models.splits)."""
    ports = dict(modes)
    pool = max(g * n for g, n in modes)
    cages = cages or ports[max(ports)]
    lanes_down, lanes_up = (max(1, ports.get(g, 0) // cages) for g in (g_down, g_up))
    out = []
    for u in range(1, int(pool // g_up) + 1):
        d = min(int((pool - u * g_up) // g_down), int(level * u * g_up // g_down + 1e-9),
                (cages - -(-u // lanes_up)) * lanes_down)
        if d > 0:
            out.append((d, u))
    return tuple(out)


def switch_splits(row, g_down: int, g_up: int, level: float) -> tuple[tuple[int, int], ...]:
    """every_split of a catalog switch (switch_rows: its port modes and cages)."""
    return every_split(tuple(row["port_modes"].items()), g_down, g_up, level, switch_cages(row))


def mesh_split(pool_gbps: float, g: int, level: float, leaves: int) -> tuple[int, int]:
    """Down/up ports of a mesh leaf for a mesh of up to ``leaves`` leaves. Between two halves of L leaves
    with u mesh ports each run L^2/4 x u/(L-1) links, so the bisection holds level x the NIC bandwidth
    when d <= level x u x L / (2(L-1)); u is even (each mesh link joins two leaves) and u >= L - 1."""
    share = leaves / (2 * (leaves - 1))
    best = (0, 0)
    for u in range(max(2, leaves - 1 + (leaves - 1) % 2), int(pool_gbps // g) + 1, 2):
        d = min(int((pool_gbps - u * g) // g), int(level * u * share + 1e-9))
        if d > best[0]:
            best = (d, u)
    return best


def mesh_sizes(pool_gbps: float, g: int, level: float) -> tuple[int, ...]:
    """The leaf-mesh sizes a split is made for: every mesh from 2 leaves to one link from each port to each other
    leaf (L - 1 <= ports), each distinct split once, at the largest size it is the split of. A split that holds
    the bisection of L leaves holds it for any fewer (L / (L - 1) falls with L, and u >= L - 1 still), so a mode
    of up to L leaves offers it to every mesh of 2 to L leaves: every mesh size gets its own best split."""
    largest = {}
    for leaves in range(2, int(pool_gbps // g) + 2):
        split = mesh_split(pool_gbps, g, level, leaves)
        if split[0] > 0:
            largest[split] = leaves
    return tuple(sorted(largest.values()))


def fits_cages(tier: str, gbps: int, kind: str, links_per_module: int, cages: tuple[int, ...]) -> bool:
    """Whether an item fills the cages at its switch ends (``cages``: their speeds, Gb/s). Its switch end takes
    gbps x links_per_module: a single-link module or cable a cage at the link speed, a twin-port module (two
    links) or a 1:k splitter cable (k links) a cage of k lanes, so an 800G cage of a ``64x800,128x400`` switch
    at 400G takes a twin-port module or a 1:2 splitter, never a single 400G module that would leave a lane dark.
    A splitter's legs end on NICs: it serves node links only."""
    if kind in ("dac", "aoc") and links_per_module > 1 and tier != "node_leaf":
        return False
    return all(gbps * links_per_module == cage for cage in cages)


@functools.lru_cache(maxsize=16)
def plant_rows(inputs) -> dict:
    """The cheapest fiber_plant row of each role (jumper, trunk, panel, ...) priced into a design; none when the
    project switches the fiber plant off. Once per inputs: the dominance check reads it for each mode it sizes."""
    table = inputs.fiber_plant
    if not inputs.project.get("fiber_plant", True) or not len(table):
        return {}
    return {role: rows.sort_values(["price_usd"]).iloc[0] for role, rows in table.groupby("role")}


def plant_bounds(plant: dict, cable: Cable, in_rack_m: float) -> tuple[float, float]:
    """(least, most) USD of fiber plant one link of ``cable`` adds at its site (models.network.define_fiber_plant):
    none for a cable; a jumper for a transceiver within ``in_rack_m``; beyond, two jumpers and a trunk, and panels
    for its two ports: the site's ceil(2 long / P) panels grow by 0 to ceil(2 / P) (N more links: by at most
    ceil(2N / P) <= N ceil(2 / P))."""
    if cable.kind != "transceiver" or not plant:
        return 0.0, 0.0
    price = {role: float(row["price_usd"]) for role, row in plant.items()}
    if cable.length_m <= in_rack_m:
        return price.get("jumper", 0.0), price.get("jumper", 0.0)
    fixed = 2 * price.get("jumper", 0.0) + price.get("trunk", 0.0)
    panels = -(-2 // int(plant["panel"]["ports"])) * price["panel"] if "panel" in plant else 0.0
    return fixed, fixed + panels


def choose_cables(optics, tier: str, gbps: int, length_m: float, cages: tuple[int, ...], plant: dict | None = None,
                  in_rack_m: float = 0.0) -> list[Cable]:
    """Cables or transceivers that carry gbps over length_m, fill the cages at their switch ends (fits_cages)
    and that no other option beats for sure.

    Per link a cable is 1 / links_per_module items at best (a splitter's k legs all used) and 1 at worst, a
    transceiver 2 / links_per_module modules at best (ends that share modules) and 2 at worst (each end alone
    in its device: modules are counted per device). An option is dropped only when another's worst price and
    power per link are no more than its best, the price with the fiber plant the link adds (``plant``: plant_rows;
    plant_bounds, the other's most against its least). Two transceivers at one length take the same plant (the
    site's in-rack and patched links are the same whichever is used): it cancels."""
    rows = optics[["gbps", "reach_m", "kind", "links_per_module", "price_usd", "power_w"]]
    options = [Cable(tier, gbps, length_m, str(name), str(kind), int(lpm), float(price), float(power))
               for name, g, reach, kind, lpm, price, power in rows.itertuples(name=None)
               if int(g) == gbps and float(reach) >= length_m and fits_cages(tier, gbps, str(kind), int(lpm), cages)]

    def per_link(c: Cable) -> tuple[float, float]:
        """(best, worst) items per link."""
        return c.modules_per_link, 1.0 if c.cable else 2.0

    def beats(a: Cable, b: Cable) -> bool:
        a_worst, b_best = per_link(a)[1], per_link(b)[0]
        same = a.kind == b.kind == "transceiver"
        extra = (0.0, 0.0) if same else (plant_bounds(plant or {}, a, in_rack_m)[1],
                                         plant_bounds(plant or {}, b, in_rack_m)[0])
        price = (a.unit_price * a_worst + extra[0], b.unit_price * b_best + extra[1])
        power = (a.unit_power_w * a_worst, b.unit_power_w * b_best)
        return price[0] <= price[1] and power[0] <= power[1] and (price[0] < price[1] or power[0] < power[1])

    return [b for b in options if not any(beats(a, b) for a in options if a is not b)]


@functools.lru_cache(maxsize=1024)
def cable_options(inputs, tier: str, gbps: int, length_m: float, cages: tuple[int, ...]) -> tuple[Cable, ...]:
    """choose_cables over the inputs' optics and fiber plant, once per (tier, speed, length, cages)."""
    return tuple(choose_cables(inputs.optics, tier, gbps, length_m, cages, plant_rows(inputs),
                               float(inputs.project.get("cable_in_rack_m") or 0.0)))


@functools.lru_cache(maxsize=64)
def table_rows(inputs, table: str) -> dict[str, dict]:
    """A catalog table (``inputs.<table>``) as plain dicts by its index: the enumeration and the model's build read
    its cells hundreds of thousands of times, where a pandas lookup costs microseconds each."""
    return getattr(inputs, table).to_dict("index")


def switch_rows(inputs) -> dict[str, dict]:
    """The switches table as plain dicts (table_rows)."""
    return table_rows(inputs, "switches")


def pool_gbps(switch_row) -> float:
    return max(g * n for g, n in switch_row["port_modes"].items())


def switch_cages(switch_row) -> int:
    """A switch's physical cages: the ``cages`` it declares (a QM9700's 64 x 400G ports sit in 32 twin-port
    cages), else its ports at its fastest speed."""
    declared = switch_row.get("cages")
    return switch_row["port_modes"][max(switch_row["port_modes"])] if pd.isna(declared) else int(declared)


def cage_gbps(switch_row) -> int:
    """The speed of one of a switch's cages: its bandwidth over its cages (800 for a QM9700 or a 64 x 800G)."""
    return int(pool_gbps(switch_row) // switch_cages(switch_row))


@functools.lru_cache(maxsize=16)
def cage_speeds(inputs) -> dict[str, int]:
    """cage_gbps of each switch model (the enumeration asks a million times at 60 models)."""
    return {name: cage_gbps(row) for name, row in switch_rows(inputs).items()}


@functools.lru_cache(maxsize=256)
def has_dci_router(inputs, family: str, gbps: int) -> bool:
    """A DCI router (role dci) of the switch family with a port at ``gbps`` is in the catalog."""
    return any("dci" in row["roles"] and row["family"] == family and gbps in row["port_modes"]
               for row in switch_rows(inputs).values())


def power_cap_mw(inputs, site: str) -> float:
    """The facility power site ``site`` may use: power_mw x (1 - power_headroom)."""
    share = float(inputs.project.get("power_headroom") or 0.0)
    return float(inputs.sites.loc[site, "power_mw"]) * (1.0 - share)


def site_node_limits(inputs) -> dict[str, int]:
    """Most nodes each usable site needs or can hold in any mode: space (max_nodes, and the racks of its
    floorplan), facility power for the nodes alone, and the job itself (an optimal design never puts more
    nodes at one site than the whole job needs)."""
    node = inputs.node_types.loc[inputs.project["node_type"]]
    node_w = float(node["node_power_kw"]) * 1e3
    job = -(-int(inputs.project["gpus_required"]) // int(node["gpus_per_node"]))
    return {s: min(int(row["max_nodes"]), int(power_cap_mw(inputs, s) * 1e6 / float(row["pue"]) // node_w), job,
                   floor_capacity(inputs, s))
            for s, row in inputs.sites.iterrows() if row["status"] != "excluded"}


def site_floor(inputs, site: str) -> dict | None:
    """The site's floorplan row, if the workbook has one."""
    plan = getattr(inputs, "floorplan", None)
    return None if plan is None or site not in plan.index else plan.loc[site].to_dict()


def site_layout_of(inputs, site: str):
    """The site's layout (models.layout): its floorplan, else the project's layout keys and its rack_kw."""
    node_kw = float(inputs.node_types.loc[inputs.project["node_type"], "node_power_kw"])
    return site_layout(inputs.project, site_rack_kw(inputs, site), node_kw, site_floor(inputs, site))


def floor_capacity(inputs, site: str) -> int:
    """Nodes the site's floorplan racks hold (rows x racks_per_row x nodes_per_rack); no bound without one."""
    floor = site_floor(inputs, site)
    if floor is None:
        return 1 << 62
    layout = site_layout_of(inputs, site)
    return int(floor["rows"]) * int(floor["racks_per_row"]) * layout.nodes_per_rack


def oversubscription_levels(max_level: float) -> list[float]:
    """The grid's levels up to ``max_level``, and the limit itself when it is not one of them."""
    return sorted({lv for lv in OVERSUBSCRIPTION_LEVELS if lv <= max_level} | {max_level})


def enumerate_modes(inputs, ends: float | None = None, splits: bool = False) -> ModeSet:
    """All fabric modes for the project's node type, filtered by compatibility, size and latency, each with
    the cables of the sites it applies at. ``ends``: a deadline (perf_counter seconds) checked between fabrics
    (PastDeadline). ``splits``: a 2-tier Clos at the oversubscription limit offers every leaf split within it
    (Mode.splits) besides each level of the grid's one split (designer.solve.prepare.every_split_applies)."""
    project = inputs.project
    node = inputs.node_types.loc[project["node_type"]]
    nics, planes = int(node["nics_per_node"]), int(node["planes"])
    g0 = int(node["nic_gbps"])
    levels = oversubscription_levels(float(project["max_oversubscription"]))
    max_latency = project.get("max_fabric_latency_us")
    filtered: Counter = Counter()
    examples: dict[str, str] = {}
    seen: set = set()

    def reject(reason: str, label: str) -> None:
        filtered[reason] += 1
        examples.setdefault(reason, label)

    if nics % planes:
        reject(f"nics_per_node {nics} not divisible by planes {planes}", project["node_type"])
        return ModeSet([], filtered, examples)
    rails = nics // planes
    floors = SiteFloors(inputs, rails)
    kept: list[Mode] = []
    for topology, tiers, hops in TOPOLOGY_VARIANTS:
        if topology not in project["topologies_allowed"]:
            reject("topology not in topologies_allowed", topology)
            continue
        for protocol in project["protocols_allowed"]:
            family = inputs.protocols.loc[protocol, "switch_family"]
            by_role = {
                role: [m for m, row in switch_rows(inputs).items()
                       if row["family"] == family and role in row["roles"]]
                for role in ("leaf", "spine", "core")
            }
            if not by_role["leaf"]:
                reject(f"no {family} switch with role leaf for protocol {protocol}", f"{topology}/{protocol}")
                continue
            for fabric in _modes_for(inputs, topology, tiers, hops, protocol, by_role, g0, rails,
                                     levels, reject, max_latency, splits):
                key = (fabric.topology, fabric.tiers, fabric.protocol, fabric.leaf, fabric.spine, fabric.core,
                       fabric.g1, fabric.g2, fabric.d1, fabric.u1, fabric.d2, fabric.u2, fabric.node_cap,
                       fabric.splits, fabric.splits2)
                if key in seen:
                    reject("same port split as a lower oversubscription level", fabric.id)
                    continue
                seen.add(key)
                check_deadline(ends, f"{len(seen):,} fabrics enumerated")
                kept += _cabled(inputs, fabric, floors, reject, max_latency)
    return ModeSet(kept, filtered, examples)


def hall_nodes(limit: int) -> int:
    """The hall a site's lengths are laid out for: its node limit rounded up to a power of two, so that
    sites of a similar size share their cables (and modes); a hall at most twice the site's area, its
    runs at most 1.42 times as long."""
    return 1 << max(0, int(limit) - 1).bit_length()


class SiteFloors:
    """Each usable site's layout (models.layout) and node limit; sites grouped by the cable lengths a fabric
    gets there, once per fabric geometry."""

    def __init__(self, inputs, rails: int):
        self.limits = site_node_limits(inputs)
        self.rails = rails
        self.layouts = {s: site_layout_of(inputs, s) for s in self.limits}
        self._groups: dict = {}

    def groups(self, fabric: Mode) -> list[tuple[dict, frozenset]]:
        """[(lengths by tier, the sites where the fabric's cables have those lengths)]."""
        key = (fabric.topology, fabric.tiers, fabric.d1, fabric.d2, fabric.node_cap)
        if key not in self._groups:
            by_lengths: dict[tuple, set] = {}
            for s, layout in self.layouts.items():
                footprint = max(1, min(fabric.node_cap, hall_nodes(self.limits[s])))
                lengths = tier_lengths(layout, fabric.topology, fabric.tiers, fabric.d1, fabric.d2, self.rails,
                                       footprint)
                lengths[ATTACH] = attach_length(layout, footprint)
                by_lengths.setdefault(tuple(lengths.items()), set()).add(s)
            self._groups[key] = [(dict(k), frozenset(v)) for k, v in sorted(by_lengths.items())]
        return self._groups[key]


def site_rack_kw(inputs, site: str) -> float:
    """The rack power of a site: its floorplan's, its own rack_kw, else the project's."""
    floor = site_floor(inputs, site)
    if floor is not None:
        return float(floor["rack_kw"])
    value = inputs.sites.loc[site].get("rack_kw") if "rack_kw" in inputs.sites.columns else None
    return float(inputs.project["rack_kw"] if value is None or value != value else value)


def _cabled(inputs, fabric: Mode, floors: SiteFloors, reject, max_latency) -> list[Mode]:
    """The fabric as modes: per group of sites with the same cable lengths, one mode per Pareto-optimal cable
    choice per tier, its latency with the cables' propagation; a group past the latency limit or without a
    cable that reaches gets no mode (the reason is kept when no site gets one)."""
    groups = floors.groups(fabric)
    out, reasons = [], []
    cage = {role: cage_speeds(inputs)[model] for role, model in
            (("leaf", fabric.leaf), ("spine", fabric.spine), ("core", fabric.core)) if model}
    for all_lengths, sites in groups:
        lengths = dict(all_lengths)
        attach = attach_cables(inputs, fabric, lengths.pop(ATTACH))
        tiers = [("node_leaf", fabric.g0, lengths["node_leaf"], (cage["leaf"],))]
        if fabric.topology == "leaf_mesh" and fabric.tiers == 2:
            tiers.append(("leaf_leaf", fabric.g0, lengths["leaf_spine"], (cage["leaf"],)))
        elif fabric.tiers >= 2:
            tiers.append(("leaf_spine", fabric.g1, lengths["leaf_spine"], (cage["leaf"], cage["spine"])))
        if fabric.tiers == 3:
            tiers.append(("spine_core", fabric.g2, lengths["spine_core"], (cage["spine"], cage["core"])))
        options = [cable_options(inputs, *tier) for tier in tiers]
        missing = next((tier for tier, o in zip(tiers, options) if not o), None)
        if missing:
            _, g, length, cages = missing
            reasons.append((f"no cable or optic for {g}G over {length:g} m that fills a "
                            f"{'G or '.join(str(c) for c in sorted(set(cages)))}G cage", fabric.id))
            continue
        propagation = PROPAGATION_NS_PER_M * _path_m(fabric, lengths) / 1e3
        breakdown = {**fabric.latency_breakdown_us, "propagation": propagation}
        latency = sum(breakdown.values())
        if max_latency is not None and latency > max_latency + 1e-12:
            reasons.append(("latency above max_fabric_latency_us", fabric.id))
            continue
        where = "" if len(groups) == 1 else "/" + "+".join(f"{v:g}m" for v in all_lengths.values())
        for cables in itertools.product(*options):
            out.append(fabric.evolve(id=f"{fabric.id}{where}/" + "+".join(c.item for c in cables), cables=cables,
                               latency_us=latency, latency_breakdown_us=breakdown, sites=sites, attach=attach))
    if not out and reasons:
        reject(*reasons[0])
    return out


def attach_cables(inputs, fabric: Mode, length_m: float) -> tuple[Cable, ...]:
    """Cables for DCI router-to-leaf links of ``fabric``: a router port at the NIC speed takes a leaf down port
    as a NIC does (the item fills the leaf's cage); none when no DCI router (role dci) is of the leaf's family
    with a port at that speed."""
    if not has_dci_router(inputs, switch_rows(inputs)[fabric.leaf]["family"], fabric.g0):
        return ()
    return cable_options(inputs, ATTACH, fabric.g0, length_m, (cage_speeds(inputs)[fabric.leaf],))


def _path_m(fabric: Mode, lengths: dict) -> float:
    """Metres of cable on the worst-case path: up and down through every tier it crosses."""
    if fabric.tiers == 1:
        return 2 * lengths["node_leaf"]
    if fabric.topology == "leaf_mesh":
        return 2 * lengths["node_leaf"] + lengths["leaf_spine"]
    return 2 * sum(lengths.values())


def _modes_for(inputs, topology, tiers, hops, protocol, by_role, g0, rails, levels, reject, max_latency=None,
               splits=True):
    """Yield the fabrics of one (topology, tiers, protocol), rejecting incompatible combinations. The latency
    without cable propagation depends on the switches alone: a switch combination above max_latency is
    rejected once, before its fabrics are built."""
    switches = switch_rows(inputs)
    proto = inputs.protocols.loc[protocol].to_dict()  # read for every switch combination: plain dicts
    node = inputs.node_types.loc[inputs.project["node_type"]].to_dict()
    speeds = lambda model: set(switches[model]["port_modes"])  # noqa: E731
    upper_roles = {1: (), 2: ("spine",), 3: ("spine", "core")}[tiers]
    if topology == "leaf_mesh" and tiers == 2:
        upper_roles = ()
    for leaf in by_role["leaf"]:
        if g0 not in speeds(leaf):
            reject(f"leaf switch has no {g0}G port mode for the NIC speed", f"{topology}/{protocol}/{leaf}")
            continue
        uppers = [by_role[r] for r in upper_roles]
        for models in itertools.product(*uppers):
            spine = models[0] if len(models) > 0 else None
            core = models[1] if len(models) > 1 else None
            breakdown = _latency_breakdown(switches, proto, node, topology, tiers,
                                           topology == "leaf_mesh" and tiers == 2, leaf, spine, core)
            if max_latency is not None and sum(breakdown.values()) > max_latency + 1e-12:
                reject("latency above max_fabric_latency_us", f"{topology}/{tiers}/{protocol}/{leaf}/{spine}/{core}")
                continue
            g1_opts = [None]  # a mesh links leaves at the NIC speed
            if tiers >= 2 and topology != "leaf_mesh":
                g1_opts = sorted(s for s in speeds(leaf) if spine is None or s in speeds(spine))
            for g1 in g1_opts:
                g2_opts = [None]
                if tiers == 3:
                    g2_opts = sorted(speeds(spine) & speeds(core))
                for g2 in g2_opts:
                    lv2 = levels if tiers == 3 else [1.0]
                    lv1 = levels if tiers >= 2 else [1.0]
                    for level1, level2 in itertools.product(lv1, lv2):
                        sizes = (mesh_sizes(pool_gbps(switches[leaf]), g0, level1)
                                 if topology == "leaf_mesh" and tiers == 2 else (0,))
                        for mesh_leaves in sizes:
                            yield from _build_modes(inputs, topology, tiers, hops, protocol, leaf, spine, core, g0,
                                                    g1, g2, level1, level2, rails, reject, breakdown, mesh_leaves,
                                                    splits and level1 == lv1[-1] and level2 == lv2[-1])
            if tiers >= 2 and topology != "leaf_mesh" and not g1_opts:
                reject("no common uplink speed between leaf and upper tier", f"{topology}/{leaf}/{spine}")


def _build_modes(inputs, topology, tiers, hops, protocol, leaf, spine, core, g0, g1, g2,
                 level1, level2, rails, reject, breakdown, mesh_leaves=0, every=False):
    """Yield the fabric of one combination (its cables are chosen per site by _cabled); ``breakdown`` is the
    combination's worst-case latency by component without cable propagation (_latency_breakdown); ``every``: a
    Clos offers every leaf split within level1 (Mode.splits), a 3-tier one every aggregation split within level2
    (Mode.splits2) too."""
    switches = switch_rows(inputs)
    label = "/".join(str(x) for x in (topology, tiers, protocol, leaf, spine, core, g0, g1, g2, level1, level2))
    if mesh_leaves:
        label += f"/mesh<={mesh_leaves}"
    leaf_pool = pool_gbps(switches[leaf])
    mesh2 = topology == "leaf_mesh" and tiers == 2
    if tiers == 1:
        d1, u1 = int(leaf_pool // g0), 0
    elif mesh2:
        d1, u1 = mesh_split(leaf_pool, g0, level1, mesh_leaves)
    else:
        d1, u1 = split_ports(tuple(switches[leaf]["port_modes"].items()), g0, g1, level1, switch_cages(switches[leaf]))
    if d1 <= 0 or (tiers >= 2 and u1 <= 0):
        reject("switch too small for the oversubscription split", label)
        return
    d2 = u2 = spine_ports = core_ports = 0
    if tiers == 2 and not mesh2:
        spine_ports = int(pool_gbps(switches[spine]) // g1)
    if tiers == 3:
        d2, u2 = split_ports(tuple(switches[spine]["port_modes"].items()), g1, g2, level2,
                             switch_cages(switches[spine]))
        core_ports = int(pool_gbps(switches[core]) // g2)
        if d2 <= 0 or u2 <= 0:
            reject("switch too small for the oversubscription split", label)
            return
    splits = splits2 = ()
    if every and tiers >= 2 and not mesh2:
        splits = switch_splits(switches[leaf], g0, g1, level1)
    if every and tiers == 3:
        splits2 = switch_splits(switches[spine], g1, g2, level2)
    node_cap = _node_cap(topology, tiers, mesh_leaves, rails, d1, u1, d2, spine_ports, core_ports)
    if node_cap <= 0:
        reject("topology cannot hold one node with this switch", label)
        return
    ratio1 = d1 * g0 / (u1 * (g1 or g0)) if u1 else 1.0
    if mesh2:
        ratio1 = d1 / (u1 * mesh_leaves / (2 * (mesh_leaves - 1)))  # bisection at the largest mesh
    ratio2 = d2 * g1 / (u2 * g2) if tiers == 3 else 1.0
    ratio = rounded_ratio(max(ratio1, ratio2))
    yield Mode(
        id=label, topology=topology, tiers=tiers, hops=hops, protocol=protocol, leaf=leaf, spine=spine, core=core,
        g0=g0, g1=g1, g2=g2, d1=d1, u1=u1, d2=d2, u2=u2, spine_ports=spine_ports, core_ports=core_ports,
        level1=level1, level2=level2, oversubscription=ratio,
        latency_us=sum(breakdown.values()), latency_breakdown_us=breakdown, node_cap=node_cap,
        max_leaves=mesh_leaves, splits=splits, splits2=splits2,
    )


def rounded_ratio(ratio: float) -> float:
    """An oversubscription to 4 decimals, rounded up: as max_oversubscription the figure admits its split again (a
    diagnosis offers it)."""
    return math.ceil(ratio * 1e4 - 1e-6) / 1e4


def oversubscription_of(mode: Mode, leaf: tuple[int, int], aggregation: tuple[int, int] | None = None) -> float:
    """The oversubscription of a Clos of ``mode``'s speeds whose leaves split (d, u), and a 3-tier one's aggregation
    switches (d2, u2): the worse tier's (a 2-tier one's spines are not oversubscribed: 1)."""
    (d, u), (d2, u2) = leaf, aggregation or (0, 1)
    second = d2 * mode.g1 / (u2 * mode.g2) if mode.tiers == 3 else 1.0
    return rounded_ratio(max(d * mode.g0 / (u * mode.g1), second))


def _node_cap(topology, tiers, mesh_leaves, rails, d1, u1, d2, spine_ports, core_ports) -> int:
    """Most nodes per site. 2-tier: spines <= u1 (striping) so leaves <= spine ports;
    3-tier: pods <= core ports with d2 leaves each; mesh: leaves <= u1 + 1."""
    if tiers == 1:
        return d1 if topology == "rail_only" else d1 // rails
    if mesh_leaves:
        return mesh_leaves * d1 // rails
    max_leaves = spine_ports if tiers == 2 else core_ports * d2
    if topology == "rail_only":
        return max_leaves * d1
    if topology == "rail_optimized":
        return (max_leaves // rails) * d1
    return max_leaves * d1 // rails


def _latency_breakdown(switches, proto, node, topology, tiers, mesh2, leaf, spine, core) -> dict:
    """Worst-case one-way GPU-to-GPU latency in us without cable propagation: NICs, switch hops, NVLink."""
    lat = {s: float(switches[s]["latency_ns"]) for s in (leaf, spine, core) if s}
    if tiers == 1 or mesh2:
        switching = lat[leaf] * (2 if mesh2 else 1)
    elif tiers == 2:
        switching = 2 * lat[leaf] + lat[spine]
    else:
        switching = 2 * lat[leaf] + 2 * lat[spine] + lat[core]
    nvlink = float(node["nvlink_latency_ns"]) if topology == "rail_only" else 0.0
    return {"nic": 2 * float(proto["nic_latency_ns"]) / 1e3, "switching": switching / 1e3,
            "propagation": 0.0, "nvlink": nvlink / 1e3}
