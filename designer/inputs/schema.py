"""The planner workbook schema as data: sheets, columns (or keys), types, units, defaults, rules.

Every reader, writer and document of the workbook derives from ``SHEETS``: the loader
(designer.inputs.workbook), the template (designer.inputs.template) and the README's contract
(``contract_markdown``). Types: ``str``, ``int``, ``float``, ``bool``, ``enum`` (one of
``allowed``) and ``names`` (a comma list; of ``allowed`` when given, else of the names in the
sheet ``ref``). ``ref`` on a ``str`` column means its value must name a row of that sheet.
"""

from __future__ import annotations

from dataclasses import dataclass

OBJECTIVES = ("min_cost", "min_latency")
STATUSES = ("candidate", "required", "excluded")
FAMILIES = ("infiniband", "ethernet")
OPTIC_KINDS = ("dac", "aoc", "transceiver")
TOPOLOGIES = ("leaf_spine", "fat_tree_3", "rail_optimized", "rail_only", "leaf_mesh")
ROLES = ("leaf", "spine", "core", "dci")
C_BAND_GHZ = 4800.0

TYPES = ("str", "int", "float", "bool", "enum", "names")


@dataclass(frozen=True)
class Field:
    """One column of a table sheet, or one key of a key/value sheet."""

    name: str
    type: str
    description: str
    unit: str = ""
    default: object = None
    required: bool = False
    allowed: tuple[str, ...] = ()
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    ref: str = ""
    example: object = None

    def expectation(self) -> str:
        """What a valid value is, in words: 'a positive number', 'one of: a, b'."""
        if self.type == "bool":
            return "true or false (yes/no, 1/0)"
        if self.type == "enum":
            return "one of: " + ", ".join(self.allowed)
        if self.type == "names":
            of = ", ".join(self.allowed) if self.allowed else f"{self.ref} names"
            return f"a comma list of: {of}"
        if self.type == "str":
            return f"a {self.ref} name" if self.ref else "text"
        base = "whole number" if self.type == "int" else "number"
        if self.gt == 0 and self.lt is None and self.le is None:
            return f"a positive {base}"
        bounds = [f"{op} {limit:g}" for op, limit in
                  ((">", self.gt), (">=", self.ge), ("<", self.lt), ("<=", self.le))
                  if limit is not None]
        return f"a {base}" + (" " + " and ".join(bounds) if bounds else "")

    def in_range(self, value: float) -> bool:
        """Whether a number meets this field's bounds."""
        return ((self.gt is None or value > self.gt) and (self.ge is None or value >= self.ge)
                and (self.lt is None or value < self.lt) and (self.le is None or value <= self.le))


@dataclass(frozen=True)
class Sheet:
    """One sheet: ``kind`` is ``keys`` (columns key, value) or ``table`` (header row 1).

    ``key`` names the column of unique row names (the DataFrame index); ``nonempty`` tables
    need at least one data row when present.
    """

    name: str
    kind: str
    description: str
    fields: tuple[Field, ...]
    required: bool = False
    catalog: bool = False
    key: str = ""
    nonempty: bool = False

    @property
    def columns(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)


def _f(name, type_, description, unit="", **kw) -> Field:
    return Field(name, type_, description, unit, **kw)


def _positive(name, description, unit, type_="float", **kw) -> Field:
    return Field(name, type_, description, unit, gt=0, **kw)


def _cost(name, description, unit="USD", **kw) -> Field:
    return Field(name, "float", description, unit, ge=0, **kw)


_SOURCE = _f("source", "str", "where the figures come from (datasheet, list price, reference)",
             required=True, example="vendor datasheet 2024")

PROJECT = Sheet("project", "keys", "What to design: demand, limits, objective, choices.", (
    _f("name", "str", "design name (blank: the workbook's file name)"),
    _positive("gpus_required", "GPUs the training job needs, in total", "", "int",
              required=True, example=1024),
    _f("node_type", "str", "the GPU node to deploy: a name in node_types", required=True,
       ref="node_types"),
    _positive("budget_usd", "cap on total cost (blank: no cap)", "USD", example=50_000_000),
    _f("objective", "enum", "min_cost, or min_latency (cost then breaks ties)",
       default="min_cost", allowed=OBJECTIVES),
    _positive("max_fabric_latency_us", "worst-case one-way GPU-to-GPU latency inside a site "
              "(blank: no limit)", "us", example=5),
    _positive("max_site_rtt_ms", "largest round-trip time allowed between two opened sites "
              "(blank: no limit)", "ms", example=2),
    _f("max_oversubscription", "float", "largest down:up bandwidth ratio at any tier "
       "(1 = non-blocking)", "", default=1.0, ge=1, example=2),
    _f("dci_ratio", "float", "each opened site's inter-site capacity / its scale-out NIC "
       "bandwidth, when more than one site is open", "", default=0.125, ge=0, example=0.125),
    _f("protocols_allowed", "names", "comma list of protocols names (blank: all)",
       ref="protocols", example="infiniband,rocev2"),
    _f("topologies_allowed", "names", "comma list of topologies (blank: all)",
       allowed=TOPOLOGIES, example="leaf_spine,rail_optimized"),
    _f("buffer_bdp_factor", "float", "required DCI buffer = factor x rate x RTT", "",
       default=1.0, ge=0, example=1),
    _f("min_sites", "int", "fewest sites to open", "", default=1, ge=1, example=1),
    _f("max_sites", "int", "most sites to open (blank: no limit)", "", ge=1, example=2),
    _f("horizon_years", "float", "years of energy cost added to the objective "
       "(0: capex only)", "years", default=0.0, ge=0, example=5),
    _positive("cable_m_node_leaf", "typical cable length node to leaf", "m", default=3.0,
              example=3),
    _positive("cable_m_leaf_spine", "typical cable length leaf to spine", "m", default=50.0,
              example=50),
    _positive("cable_m_spine_core", "typical cable length spine to core", "m", default=150.0,
              example=150),
), required=True)

SITES = Sheet("sites", "table", "Candidate data-center sites, one row each.", (
    _f("name", "str", "site name", required=True, example="dallas"),
    _positive("power_mw", "facility power available", "MW", required=True, example=50),
    _f("pue", "float", "power usage effectiveness (facility / IT power)", "",
       required=True, ge=1, example=1.3),
    _positive("max_nodes", "GPU nodes the space can hold", "", "int", required=True,
              example=512),
    _cost("fixed_cost_usd", "paid if the site is opened", required=True, example=5_000_000),
    _cost("power_cost_usd_per_mw", "capex per MW of facility power used", "USD/MW",
          required=True, example=1_000_000),
    _cost("energy_usd_per_mwh", "energy price", "USD/MWh", required=True, example=60),
    _f("lat", "float", "latitude, for the map (optional)", "degrees", ge=-90, le=90, example=32.8),
    _f("lon", "float", "longitude, for the map (optional)", "degrees", ge=-180, le=180,
       example=-96.8),
    _f("status", "enum", "candidate: the solver decides; required: must open; excluded: "
       "never opened", default="candidate", allowed=STATUSES),
), required=True, key="name", nonempty=True)

ROUTES = Sheet("routes", "table", "Fiber routes between two sites; no row = no direct link.", (
    _f("site_a", "str", "one end: a sites name", required=True, ref="sites"),
    _f("site_b", "str", "other end: a sites name", required=True, ref="sites"),
    _positive("distance_km", "fiber route length", "km", required=True, example=80),
    _positive("fiber_pairs", "fiber pairs available", "", "int", required=True, example=4),
    _cost("fiber_cost_usd_per_pair_km", "lease or build cost of a used fiber pair",
          "USD/pair/km", required=True, example=2000),
    _positive("amplifier_spacing_km", "distance between in-line amplifiers", "km",
              default=80.0, example=80),
))

WORKLOAD = Sheet("workload", "keys", "Optional training workload: adds a limit on the "
                 "estimated all-reduce time (leave every value blank for none).", (
    _positive("model_params_billion", "model parameters", "billion", required=True, example=70),
    _positive("bytes_per_gradient", "bytes per gradient value (2 for bf16)", "bytes",
              default=2.0, example=2),
    _positive("step_compute_ms", "compute time of one step", "ms", required=True, example=500),
    _positive("grad_accum_steps", "micro-batches accumulated per synchronisation", "",
              "int", default=1, example=4),
    _f("max_comm_fraction", "float", "share of a step that communication may take", "",
       required=True, gt=0, lt=1, example=0.2),
))

NODE_TYPES = Sheet("node_types", "table", "GPU nodes (catalog).", (
    _f("name", "str", "node type name", required=True, example="dgx_h100"),
    _positive("gpus_per_node", "GPUs in one node", "", "int", required=True, example=8),
    _positive("nics_per_node", "scale-out NICs (rails) per node", "", "int", required=True,
              example=8),
    _positive("nic_gbps", "speed of one NIC", "Gb/s", "int", required=True, example=400),
    _positive("planes", "independent fabric planes the NICs are split over", "", "int",
              default=1, example=1),
    _positive("node_power_kw", "power of one node", "kW", required=True, example=10.2),
    _cost("node_price_usd", "price of one node", required=True, example=300_000),
    _f("nvlink_latency_ns", "float", "NVLink/NVSwitch hop latency (rail-only designs)", "ns",
       default=300.0, ge=0, example=300),
    _SOURCE,
), catalog=True, key="name", nonempty=True)

SWITCHES = Sheet("switches", "table", "Switches and DCI routers (catalog).", (
    _f("model", "str", "switch model", required=True, example="qm9700"),
    _f("family", "enum", "infiniband or ethernet", required=True, allowed=FAMILIES),
    _f("port_modes", "str", "ports x Gb/s per speed, equal total bandwidth", "ports x Gb/s",
       required=True, example="64x800,128x400"),
    _f("buffer_mb", "float", "packet buffer", "MB", required=True, ge=0, example=64),
    _positive("latency_ns", "port-to-port latency", "ns", required=True, example=600),
    _cost("power_w", "typical power without optics", "W", required=True, example=1700),
    _cost("price_usd", "price of one switch", required=True, example=30_000),
    _f("roles", "names", "tiers the switch may fill", required=True, allowed=ROLES,
       example="leaf,spine"),
    _SOURCE,
), catalog=True, key="model", nonempty=True)

OPTICS = Sheet("optics", "table", "Cables and transceivers for links inside a site (catalog).", (
    _f("name", "str", "cable or transceiver name", required=True, example="osfp_800g_dr8"),
    _positive("gbps", "link speed", "Gb/s", "int", required=True, example=800),
    _f("kind", "enum", "dac or aoc (a cable per link) or transceiver (one per link end)",
       required=True, allowed=OPTIC_KINDS),
    _positive("reach_m", "longest link", "m", required=True, example=500),
    _cost("power_w", "power of one item", "W", required=True, example=15),
    _cost("price_usd", "price of one item", required=True, example=1000),
    _positive("links_per_module", "links one item carries (2 for a twin-port module)", "",
              "int", default=1, example=1),
    _SOURCE,
), catalog=True, key="name", nonempty=True)

COHERENT = Sheet("coherent", "table", "Coherent DCI pluggables between sites (catalog).", (
    _f("name", "str", "module name", required=True, example="400zr"),
    _positive("gbps", "wavelength rate", "Gb/s", "int", required=True, example=400),
    _positive("reach_km", "longest route", "km", required=True, example=120),
    _f("channel_ghz", "float", "optical channel width (C band: 4800 GHz)", "GHz",
       required=True, gt=0, le=C_BAND_GHZ, example=75),
    _cost("power_w", "power of one module", "W", required=True, example=20),
    _cost("price_usd", "price of one module", required=True, example=5000),
    _SOURCE,
), catalog=True, key="name")

AMPLIFIERS = Sheet("amplifiers", "table", "In-line optical amplifiers (catalog).", (
    _f("name", "str", "amplifier name", required=True, example="edfa_inline"),
    _cost("power_w", "power of one amplifier", "W", required=True, example=100),
    _cost("price_usd", "price of one amplifier (per fiber pair)", required=True,
          example=20_000),
    _SOURCE,
), catalog=True, key="name")

PROTOCOLS = Sheet("protocols", "table", "Transport protocols (catalog).", (
    _f("name", "str", "protocol name", required=True, example="infiniband"),
    _f("switch_family", "enum", "switch family the protocol runs on", required=True,
       allowed=FAMILIES),
    _f("nic_latency_ns", "float", "NIC/stack latency per end", "ns", required=True, ge=0,
       example=500),
    _f("efficiency", "float", "goodput share of the line rate", "", required=True, gt=0,
       le=1, example=0.95),
    _f("lossless", "bool", "lossless transport (credit flow control or PFC)", required=True),
    _f("jitter_rank", "int", "latency jitter rank (0 = least)", "", required=True, ge=0,
       example=0),
    _SOURCE,
), catalog=True, key="name", nonempty=True)

SHEETS: dict[str, Sheet] = {s.name: s for s in (
    PROJECT, SITES, ROUTES, WORKLOAD, NODE_TYPES, SWITCHES, OPTICS, COHERENT, AMPLIFIERS,
    PROTOCOLS)}
CATALOG_SHEETS = tuple(name for name, s in SHEETS.items() if s.catalog)

_TYPE_WORDS = {"str": "text", "int": "integer", "float": "number", "bool": "true/false",
               "enum": "choice", "names": "comma list"}


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|")


def contract_markdown() -> str:
    """The workbook contract as markdown: one table per sheet (for the README)."""
    out = []
    for sheet in SHEETS.values():
        status = "required" if sheet.required else "optional"
        shape = "key/value sheet (columns `key`, `value`)" if sheet.kind == "keys" else "table"
        note = "; replaces the default catalog table when present" if sheet.catalog else ""
        out += [f"### `{sheet.name}`", "", f"{sheet.description} {status.capitalize()} "
                f"{shape}{note}.", "",
                f"| {'key' if sheet.kind == 'keys' else 'column'} | type | unit | default | "
                "required | description |", "|---|---|---|---|---|---|"]
        for f in sheet.fields:
            kind = _TYPE_WORDS[f.type]
            if f.allowed:
                kind += ": " + ", ".join(f"`{a}`" for a in f.allowed)
            rule = f.expectation() if f.type in ("int", "float") else ""
            description = f.description + (f"; {rule}" if rule else "")
            default = "" if f.default is None else f"{f.default:g}" if isinstance(
                f.default, float) else f.default
            out.append(f"| `{f.name}` | {_cell(kind)} | {_cell(f.unit)} | {_cell(default)} | "
                       f"{'yes' if f.required else ''} | {_cell(description)} |")
        out.append("")
    return "\n".join(out)
