"""The planner workbook schema as data: sheets, columns (or keys), types, units, defaults, rules.

Every reader, writer and document of the workbook derives from ``SHEETS``: the loader
(designer.inputs.workbook), the template (designer.inputs.template) and the README's contract
(``contract_markdown``). Types: ``str``, ``int``, ``float``, ``bool``, ``enum`` (one of
``allowed``) and ``names`` (a comma list; of ``allowed`` when given, else of the names in the
sheet ``ref``). ``ref`` on a ``str`` column means its value must name a row of that sheet.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from designer.inputs.catalog import MAX_PORT_GBPS, MAX_PORTS

OBJECTIVES = ("min_cost", "min_latency", "min_cost_per_run", "max_tokens_per_s")
TRAINING_OBJECTIVES = ("min_cost_per_run", "max_tokens_per_s")  # need the workload's training estimate
STATUSES = ("candidate", "required", "excluded")
FAMILIES = ("infiniband", "ethernet")
OPTIC_KINDS = ("dac", "aoc", "transceiver")
DCI_OPTIC_KINDS = ("coherent", "gray")
TOPOLOGIES = ("leaf_spine", "fat_tree_3", "rail_optimized", "rail_only", "leaf_mesh")
ROLES = ("leaf", "spine", "core", "dci")
SUPPORT_CATEGORIES = ("storage_network", "management_network")
FIBER_PLANT_ROLES = ("jumper", "trunk", "panel", "duplex_jumper", "odf")
CATALOG_MODES = ("replace", "extend")
BANDS = ("c", "c+l")  # a route's DWDM band: C (about 4.8 THz) or C and L (about 9.6 THz)
AMPLIFIER_BANDS = ("c", "l")
LINE_ROLES = ("inline", "booster", "preamp", "mux_demux", "hut")
C_BAND_GHZ = 4800.0

MAX_SOURCE_CHARS = 1000  # a source cites a datasheet or a quote, with its address
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
    notation: str = ""  # "share": '25%' reads as 0.25; "ratio": '2:1' reads as 2 (designer.inputs.cells)
    max_chars: int = 100  # text: a name no plan needs longer (a source may run to MAX_SOURCE_CHARS)

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
            return (f"a {self.ref} name" if self.ref else "text") + f" of at most {self.max_chars:,} characters"
        base = "whole number" if self.type == "int" else "number"
        upper = [f"{op} {_number(limit)}" for op, limit in (("<", self.lt), ("<=", self.le)) if limit is not None]
        if self.gt == 0 and self.ge is None:
            return f"a positive {base}" + (" " + " and ".join(upper) if upper else "")
        bounds = [f"{op} {_number(limit)}" for op, limit in ((">", self.gt), (">=", self.ge)) if limit is not None]
        return f"a {base}" + (" " + " and ".join(bounds + upper) if bounds + upper else "")

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


def _number(x: float) -> str:
    """A bound as a planner reads it: 10,000,000 rather than 1e+07."""
    return f"{int(x):,}" if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def _f(name, type_, description, unit="", **kw) -> Field:
    return Field(name, type_, description, unit, **kw)


def _positive(name, description, unit, type_="float", **kw) -> Field:
    return Field(name, type_, description, unit, gt=0, **kw)


def _cost(name, description, unit="USD", **kw) -> Field:
    return Field(name, "float", description, unit, ge=0, **kw)


_SOURCE = _f("source", "str", "where the figures come from (datasheet, list price, reference); blank: "
             "the planner workbook, sheet and row", example="vendor datasheet 2024", max_chars=MAX_SOURCE_CHARS)
_QUOTE = (_f("sku", "str", "vendor part number (carried into the bill of materials)", example="920-9B210-00FN-0D0"),
          _f("lead_time_weeks", "float", "quoted lead time (carried into the bill of materials)", "weeks", ge=0,
             le=520, example=12))

PROJECT = Sheet("project", "keys", "What to design: demand, limits, objective, choices.", (
    _f("name", "str", "design name (blank: the workbook's file name)"),
    _positive("gpus_required", "GPUs the training job needs, in total", "", "int",
              required=True, example=1024),
    _f("node_type", "str", "the GPU node to deploy: a name in node_types", required=True,
       ref="node_types"),
    _positive("budget_usd", "cap on total cost (blank: no cap)", "USD", example=50_000_000),
    _f("objective", "enum", "min_cost; min_latency (cost then breaks ties); min_cost_per_run or max_tokens_per_s "
       "(within budget_usd, cost then breaks ties): the GPU count from gpus_required to gpus_max is chosen too "
       "(needs the workload's training_tokens)", default="min_cost", allowed=OBJECTIVES),
    _positive("gpus_max", "most GPUs the training objectives may choose (blank: gpus_required)", "", "int",
              example=8192),
    _positive("max_fabric_latency_us", "worst-case one-way GPU-to-GPU latency inside a site "
              "(blank: no limit)", "us", example=5),
    _positive("max_site_rtt_ms", "largest round-trip time allowed between two opened sites "
              "(blank: no limit)", "ms", example=2),
    _f("max_oversubscription", "float", "largest down:up bandwidth ratio at any tier "
       "(1 = non-blocking)", "", default=1.0, ge=1, example=2, notation="ratio"),
    _f("dci_ratio", "float", "each opened site's inter-site capacity / its scale-out NIC "
       "bandwidth, when more than one site is open", "", default=0.125, ge=0, example=0.125,
       notation="share"),
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
    _positive("rack_kw", "power a rack of nodes may draw (nodes per rack = rack_kw / node_power_kw, at least "
              "one); a site's own rack_kw replaces it", "kW", default=40.0, example=40),
    _positive("racks_per_row", "racks in one row of the data hall", "", "int", default=20, example=20),
    _positive("rack_pitch_m", "distance between neighbouring racks of a row", "m", default=0.6, example=0.6),
    _positive("row_pitch_m", "distance between neighbouring rows (rack depth and one aisle)", "m",
              default=2.1, example=2.1),
    _f("cable_rise_m", "float", "cable from a device up to the overhead tray, each end", "m", default=2.0,
       ge=0, example=2),
    _positive("cable_in_rack_m", "cable from a node to a leaf in its own rack", "m", default=2.0, example=2),
    _f("cable_slack", "float", "share added to every tray run for routing and service loops", "",
       default=0.1, ge=0, le=1, example=0.1, notation="share"),
    _positive("cable_m_node_leaf", "cable length node to leaf for every fabric (blank: from the layout)", "m",
              example=3),
    _positive("cable_m_leaf_spine", "cable length leaf to spine, or leaf to leaf in a mesh (blank: from the "
              "layout)", "m", example=50),
    _positive("cable_m_spine_core", "cable length spine to core (blank: from the layout)", "m", example=150),
    _f("launch_power_dbm", "float", "optical power launched into each span per 50 GHz of spectrum (a 75 GHz channel "
       "gets 1.8 dB more, a 150 GHz one 4.8 dB: constant spectral density); 0 dBm over the 96 x 50 GHz of the C "
       "band is a typical line amplifier's ~20 dBm total output", "dBm", default=0.0, ge=-20, le=20, example=0),
    _f("osnr_margin_db", "float", "system margin a coherent wavelength's OSNR must keep above the module's "
       "required_osnr_db (ageing, repairs, fiber non-linearity, transmitter noise: none modelled otherwise)", "dB",
       default=3.0, ge=0, le=30, example=3),
    _f("encrypt_dci", "bool", "encrypt every link between sites: only DCI routers with MACsec (or, when none has it, "
       "DCI optics with line-rate encryption) are offered", default=False, example=False),
    _f("route_diversity", "bool", "N-1 between sites: every open site keeps a path to every other open site after "
       "any single route fails (or all routes of one srlg group together)", default=False, example=False),
    _f("one_dci_router_model", "bool", "each site's DCI routers are all of one model (one spares pool, one "
       "operating system)", default=False, example=False),
    _f("power_headroom", "float", "share of each site's power_mw held back (the design may use power_mw x "
       "(1 - power_headroom))", "", default=0.0, ge=0, lt=1, example=0.1, notation="share"),
    _positive("cable_m_dci_attach", "cable length DCI router to leaf (blank: from the layout, across the hall)",
              "m", example=60),
    _f("support_networks", "bool", "size the storage, in-band and out-of-band management networks of every "
       "node (the support_networks sheet) into the design", default=True, example=True),
    _f("fiber_plant", "bool", "price the jumpers, trunks, patch panels and ODFs of the optical links (the "
       "fiber_plant sheet) into the design", default=True, example=True),
    # Spares are sized after the solve and added to capex as their own total (README, Spares): 2% of the modules
    # and cables is the middle of the 1-3% sparing common for optics in large fabrics [E]; one switch per 50 of a
    # model at a site is ~2% too and, rounded up, at least one spare of every model a site runs [E]
    _f("spares_optics_share", "float", "spare transceivers and DCI modules, as a share of each BOM line's quantity "
       "(rounded up per line; sized after the solve, added to capex with spares)", "", default=0.02, ge=0, le=1,
       example=0.02, notation="share"),
    _f("spares_cables_share", "float", "spare DAC, AOC and patch cables, as a share of each BOM line's quantity "
       "(rounded up per line)", "", default=0.02, ge=0, le=1, example=0.02, notation="share"),
    _f("spares_switch_per", "int", "one spare switch per this many switches of a model at a site, rounded up "
       "(0: no spare switches)", "", default=50, ge=0, example=50),
    _f("catalog", "enum", "replace: a catalog sheet in the workbook replaces the default table; extend: "
       "its rows are added to the default table, a row of the same name overriding the default one",
       default="replace", allowed=CATALOG_MODES),
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
    _positive("rack_kw", "power a rack of nodes may draw here (blank: the project's rack_kw)", "kW",
              example=40),
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
    _positive("fiber_loss_db_per_km", "fiber attenuation at 1550 nm, splices included (spans of the OSNR budget)",
              "dB/km", default=0.22, example=0.22),
    _f("band", "enum", "c: the C band; c+l: C and L band on every fiber pair (twice the wavelengths a pair "
       "carries, an L-band unit beside every C-band amplifier and mux/demux)", default="c", allowed=BANDS),
    _f("srlg", "str", "shared-risk link group: routes with the same name fail together (one duct, bridge or "
       "landing); blank: the route fails alone", example="i95-duct"),
))

FLOORPLAN = Sheet("floorplan", "table", "Optional floor of a site's data hall, one row per site: cable lengths come "
                  "from it (else from the project's layout keys) and its racks bound the nodes.", (
    _f("site", "str", "the site: a sites name", required=True, ref="sites", example="dallas"),
    _positive("rows", "rows of racks the hall has for nodes and network racks", "", "int", required=True,
              example=40),
    _positive("racks_per_row", "racks in one row", "", "int", required=True, example=20),
    _positive("rack_kw", "power one rack may draw: the nodes in a rack may not draw more", "kW", required=True,
              example=40),
    _positive("nodes_per_rack", "nodes in one rack (blank: as many as rack_kw feeds)", "", "int", example=4),
    _positive("rack_pitch_m", "distance between neighbouring racks of a row (blank: the project's)", "m",
              example=0.6),
    _positive("row_pitch_m", "distance between neighbouring rows (blank: the project's)", "m", example=2.1),
), key="site")

WORKLOAD = Sheet("workload", "keys", "Optional training workload: with training_tokens the design's step time, "
                 "time to train and cost of the run (design.json training); with max_comm_fraction a limit on the "
                 "estimated all-reduce time (leave every value blank for none).", (
    _positive("model_params_billion", "model parameters (all experts of a mixture-of-experts model)", "billion",
              required=True, example=70),
    _positive("bytes_per_gradient", "bytes per gradient value (2 for bf16)", "bytes",
              default=2.0, example=2),
    _positive("step_compute_ms", "compute time of one micro-batch (the max_comm_fraction limit)", "ms", example=500),
    _positive("grad_accum_steps", "micro-batches accumulated per synchronisation (the max_comm_fraction limit)", "",
              "int", default=1, example=4),
    _f("max_comm_fraction", "float", "share of a step that the all-reduce may take (blank: no limit)", "",
       gt=0, lt=1, example=0.2, notation="share"),
    _positive("training_tokens", "tokens of the training run (blank: no training estimate)", "tokens",
              example=15e12),
    _positive("global_batch_tokens", "tokens of one optimizer step (all data-parallel replicas)", "tokens",
              "int", default=4_194_304, example=4_194_304),  # 4M tokens: Llama 2's batch (Touvron et al. 2023)
    _positive("seq_len", "tokens of one sequence (one sequence a micro-batch)", "tokens", "int", default=4096,
              example=4096),
    _positive("layers", "transformer layers (needed with training_tokens)", "", "int", example=80),
    _positive("hidden_size", "model width (needed with training_tokens)", "", "int", example=8192),
    _positive("active_params_billion", "parameters a token passes through (mixture of experts; blank: "
              "model_params_billion)", "billion", example=70),
    _positive("tp", "tensor-parallel GPUs (inside the scale-up domain)", "", "int", default=1, example=8),
    _positive("pp", "pipeline stages", "", "int", default=1, example=4),
    _positive("ep", "expert-parallel GPUs (1: a dense model)", "", "int", default=1, example=1),
    _positive("experts_per_token", "experts each token is routed to (mixture of experts)", "", "int", default=1,
              example=2),
    _f("overlap", "float", "share of the data-parallel communication hidden behind compute", "", default=0.0,
       ge=0, le=1, example=0.5, notation="share"),
    _f("kernel_efficiency", "float", "share of the GPUs' dense peak the kernels reach while not waiting on the "
       "network", "", default=0.6, gt=0, le=1, example=0.6, notation="share"),
    _positive("amortization_years", "years over which the capex is spread (a run pays its hours of it)", "years",
              default=4.0, example=4),
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
    _f("nvlink_latency_ns", "float", "NVLink/NVSwitch hop latency (rail-only designs, scale-up collectives)", "ns",
       default=300.0, ge=0, example=300),
    _positive("gpu_tflops", "dense BF16 peak of one GPU (the training estimate)", "TFLOPS", example=989),
    _positive("scaleup_gpus", "GPUs in one NVLink domain (blank: gpus_per_node)", "", "int", example=8),
    _positive("scaleup_gbps", "NVLink bandwidth per GPU, one direction (the training estimate)", "Gb/s",
              example=3600),
    *_QUOTE, _SOURCE,
), catalog=True, key="name", nonempty=True)

SWITCHES = Sheet("switches", "table", "Switches and DCI routers (catalog).", (
    _f("model", "str", "switch model", required=True, example="qm9700"),
    _f("family", "enum", "infiniband or ethernet", required=True, allowed=FAMILIES),
    _f("port_modes", "str", f"ports x Gb/s per speed, equal total bandwidth ({MAX_PORTS:,} ports and "
       f"{MAX_PORT_GBPS:,} Gb/s at most)", "ports x Gb/s",
       required=True, example="64x800,128x400"),
    _f("buffer_mb", "float", "packet buffer", "MB", required=True, ge=0, example=64),
    _positive("latency_ns", "port-to-port latency", "ns", required=True, example=600),
    _cost("power_w", "typical power without optics", "W", required=True, example=1700),
    _cost("price_usd", "price of one switch", required=True, example=30_000),
    _f("roles", "names", "tiers the switch may fill", required=True, allowed=ROLES,
       example="leaf,spine"),
    _f("encryption", "bool", "MACsec at line rate on its ports (a DCI router encrypting links between sites)",
       default=False, example=True),
    _positive("cages", "physical port cages, when fewer than the ports at the fastest speed (a twin-port "
              "OSFP cage holds two ports); blank: one cage a port at the fastest speed", "", "int", example=64),
    _f("in_network_reduction", "bool", "reduces all-reduce data in the switch (InfiniBand SHARP, NVLink switches)",
       default=False, example=True),
    _positive("ru", "rack units the switch takes (the network racks' elevations)", "RU", "int", default=1,
              example=2),
    *_QUOTE, _SOURCE,
), catalog=True, key="model", nonempty=True)

OPTICS = Sheet("optics", "table", "Cables and transceivers for links inside a site (catalog).", (
    _f("name", "str", "cable or transceiver name", required=True, example="osfp_800g_dr8"),
    _positive("gbps", "link speed", "Gb/s", "int", required=True, example=800),
    _f("kind", "enum", "dac or aoc (a cable per link) or transceiver (one per link end)",
       required=True, allowed=OPTIC_KINDS),
    _positive("reach_m", "longest link", "m", required=True, example=500),
    _cost("power_w", "power of one item", "W", required=True, example=15),
    _cost("price_usd", "price of one item", required=True, example=1000),
    _positive("links_per_module", "links one item carries (2 for a twin-port module, k for a 1:k splitter cable "
              "or a 4 x 200G breakout module); its switch end fills a cage of gbps x links_per_module", "",
              "int", default=1, example=1),
    *_QUOTE, _SOURCE,
), catalog=True, key="name", nonempty=True)

COHERENT = Sheet("coherent", "table", "Optics between sites (catalog; the sheet may be named dci_optics): coherent "
                 "DWDM pluggables, or gray modules that take whole fiber pairs with no DWDM and no amplifiers.", (
    _f("name", "str", "module name", required=True, example="400zr"),
    _f("kind", "enum", "coherent: a DWDM wavelength, amplified; gray: a link on its own fiber pairs, "
       "unamplified", default="coherent", allowed=DCI_OPTIC_KINDS),
    _positive("gbps", "wavelength rate", "Gb/s", "int", required=True, example=400),
    _positive("reach_km", "longest route", "km", required=True, example=120),
    _f("channel_ghz", "float", "optical channel width (C band: 4800 GHz); coherent only", "GHz",
       ge=6.25, le=C_BAND_GHZ, example=75),  # ITU-T G.694.1 flexible grid: 6.25 GHz slots
    _positive("fiber_pairs_per_link", "fiber pairs one gray link takes (a 2xFR4 module: 2)", "", "int", default=1,
              example=1),
    _f("required_osnr_db", "float", "OSNR (0.1 nm) the module needs at its receiver; coherent only (blank: reach_km "
       "alone limits the route)", "dB", ge=0, le=50, example=26),
    _f("encryption", "bool", "line-rate encryption in the module itself", default=False, example=False),
    _cost("power_w", "power of one module", "W", required=True, example=20),
    _cost("price_usd", "price of one module", required=True, example=5000),
    *_QUOTE, _SOURCE,
), catalog=True, key="name")

SUPPORT = Sheet("support_networks", "table", "The cluster's other networks, sized per node (catalog): storage, "
                "in-band and out-of-band management; each row prices its own switch and node link.", (
    _f("name", "str", "network name", required=True, example="oob_management"),
    _f("category", "enum", "bill of materials category", required=True, allowed=SUPPORT_CATEGORIES),
    _f("switch_model", "str", "the network's switch", required=True, example="SN2201"),
    _cost("switch_price_usd", "price of one switch", required=True, example=8000),
    _cost("switch_power_w", "power of one switch", "W", required=True, example=100),
    _positive("nodes_per_switch", "nodes one switch serves (its share of the network's switches per node, upper "
              "tiers included)", "", "float", required=True, example=44),
    _positive("ports_per_node", "ports each node has on this network", "", "int", required=True, example=1),
    _positive("port_gbps", "speed of a node port", "Gb/s", "int", required=True, example=1),
    _f("link_item", "str", "the cable or optic of one node port", required=True, example="1G RJ45 Cat6 patch"),
    _f("link_kind", "enum", "cable: one item a port; transceiver: a module at each end", default="cable",
       allowed=("cable", "transceiver")),
    _cost("link_price_usd", "price of one cable or module", required=True, example=10),
    _cost("link_power_w", "power of one cable or module", "W", required=True, example=0),
    *(replace(f, name=f"{part}_{f.name}", description=f.description.replace(" (", f" of the {part} (", 1))
      for part in ("switch", "link") for f in _QUOTE),
    _SOURCE,
), catalog=True, key="name")

FIBER_PLANT = Sheet("fiber_plant", "table", "Structured cabling of the optical links (catalog): a transceiver "
                    "link (fabric, DCI attachment, support network) longer than cable_in_rack_m runs device - jumper - "
                    "patch panel - trunk - patch panel - jumper - device; each lit inter-site fiber pair end lands on an "
                    "ODF port and a duplex jumper to its module or the mux (a jumper more per coherent module, module to "
                    "mux); the cheapest row of each role is used.", (
    _f("name", "str", "item name", required=True, example="MPO-16 jumper, 3 m"),
    _f("role", "enum", "jumper (device to panel), trunk (panel to panel, one a link), panel (patch panel), "
       "duplex_jumper (inter-site pair end or coherent module to ODF or mux) or odf (optical distribution frame of "
       "the inter-site pairs)", required=True, allowed=FIBER_PLANT_ROLES),
    _positive("ports", "link ends one patch panel holds, or fiber pair ends one ODF holds; panels and ODFs only",
              "", "int", example=48),
    _cost("price_usd", "price of one item", required=True, example=45),
    *_QUOTE, _SOURCE,
), catalog=True, key="name")

AMPLIFIERS = Sheet("amplifiers", "table", "The DWDM line system of coherent routes (catalog): amplifiers, mux/demux "
                   "and the huts of in-line amplifier sites; a route uses the cheapest row of each role and band.", (
    _f("name", "str", "unit name", required=True, example="edfa_inline"),
    _f("role", "enum", "inline: one per fiber pair at each in-line site; booster, preamp, mux_demux: one per fiber "
       "pair at each end; hut: one per in-line site of a route carrying coherent traffic", default="inline",
       allowed=LINE_ROLES),
    _f("band", "enum", "the band the unit serves (a c+l route takes one unit of each band; huts serve both)",
       default="c", allowed=AMPLIFIER_BANDS),
    _f("noise_figure_db", "float", "noise figure of an amplifier (in-line and preamp units set a route's OSNR)", "dB",
       default=5.0, ge=0, le=20, example=5),
    _cost("power_w", "power of one unit", "W", required=True, example=100),
    _cost("price_usd", "price of one unit", required=True,
          example=20_000),
    *_QUOTE, _SOURCE,
), catalog=True, key="name")

PROTOCOLS = Sheet("protocols", "table", "Transport protocols (catalog).", (
    _f("name", "str", "protocol name", required=True, example="infiniband"),
    _f("switch_family", "enum", "switch family the protocol runs on", required=True,
       allowed=FAMILIES),
    _f("nic_latency_ns", "float", "NIC/stack latency per end", "ns", required=True, ge=0,
       example=500),
    _f("efficiency", "float", "goodput share of the line rate", "", required=True, gt=0,
       le=1, example=0.95, notation="share"),
    _f("lossless", "bool", "lossless transport (credit flow control or PFC)", required=True),
    _f("jitter_rank", "int", "latency jitter rank (0 = least)", "", required=True, ge=0,
       example=0),
    _f("jitter_us", "float", "spread (standard deviation) of one hop's latency (the training estimate's tail)",
       "us", default=0.0, ge=0, example=0.5),
    _SOURCE,
), catalog=True, key="name", nonempty=True)

CLOUD = Sheet("cloud", "table", "Optional GPU cloud offers to compare the designed cluster's run with (build or "
              "rent).", (
    _f("name", "str", "offer name", required=True, example="cloud-h100-ib"),
    _f("node_type", "str", "the offer's GPU node: a node_types name", required=True, ref="node_types",
       example="DGX H100"),
    _positive("usd_per_gpu_hour", "price of one GPU for an hour", "USD", required=True, example=2.5),
    _positive("gbps_per_gpu", "scale-out network bandwidth per GPU", "Gb/s", required=True, example=400),
    _f("protocol", "str", "the offer's transport: a protocols name", required=True, ref="protocols",
       example="infiniband"),
    _f("jitter_us", "float", "per-hop latency spread (blank: the protocol's)", "us", ge=0, example=0.5),
    _positive("latency_us", "worst one-way GPU-to-GPU latency (blank: the designed fabric's)", "us", example=5),
    _positive("hops", "switch hops of the worst path (a 2-tier Clos: 3)", "", "int", default=3, example=3),
    _positive("max_gpus", "most GPUs the offer rents to one job (blank: no limit)", "", "int", example=32768),
    _SOURCE,
), key="name")

# The range a real plan lives in, per numeric column: beyond it a value is a typo or a unit slip, and the model
# could not hold it soundly (it states costs in millions of USD, rows in Tb/s, GB and kW). Each upper bound
# leaves an order of magnitude or more over the largest plan in sight (gigawatt campuses, millions of GPUs,
# 20,000 km routes, $1T budgets); tests/test_values.py solves workbooks at these extremes.
UPPER: dict[tuple[str, str], float] = {
    ("switches", "ru"): 48,  # a full rack: the largest modular chassis take ~30 RU
    ("project", "gpus_required"): 10_000_000,  # ten times the largest cluster announced (~1M GPUs)
    ("project", "gpus_max"): 10_000_000,  # as gpus_required
    ("project", "budget_usd"): 1e13,  # $10 trillion: ten times a $1T programme
    ("project", "max_fabric_latency_us"): 1_000,  # 1 ms one way inside a site; fabrics are at 1-10 us
    ("project", "max_site_rtt_ms"): 1_000,  # fiber half way round the planet and back is ~200 ms
    ("project", "max_oversubscription"): 64,  # fabrics run 1:1 to 8:1; 64:1 is no longer a training fabric
    ("project", "dci_ratio"): 100,  # DCI 100 times the NIC bandwidth; 12.5 (a percentage) is still a warning
    ("project", "buffer_bdp_factor"): 100,  # buffers are sized at 1-2 BDP
    ("project", "min_sites"): 1_000, ("project", "max_sites"): 1_000,  # a continent of sites
    ("project", "horizon_years"): 50,  # longer than any facility's life
    ("project", "spares_switch_per"): 100_000,  # one spare for a hundred thousand switches is none
    ("project", "cable_m_node_leaf"): 10_000, ("project", "cable_m_leaf_spine"): 10_000,
    ("project", "cable_m_spine_core"): 10_000,  # 10 km: the largest campus
    ("project", "cable_m_dci_attach"): 10_000,
    ("project", "rack_kw"): 2_000, ("sites", "rack_kw"): 2_000,  # as node_power_kw: a rack-scale node's rack
    ("floorplan", "rack_kw"): 2_000, ("floorplan", "nodes_per_rack"): 1_000,
    ("floorplan", "rows"): 10_000, ("floorplan", "racks_per_row"): 1_000,  # 100 ha of hall at most
    ("floorplan", "rack_pitch_m"): 10, ("floorplan", "row_pitch_m"): 100,
    ("project", "racks_per_row"): 1_000,  # a row of 600 m
    ("project", "rack_pitch_m"): 10, ("project", "row_pitch_m"): 100,  # racks are 0.6-1.2 m wide, rows ~2-5 m apart
    ("project", "cable_rise_m"): 100, ("project", "cable_in_rack_m"): 100,  # a rack stands ~2.2 m tall
    ("sites", "power_mw"): 100_000,  # 100 GW: twenty times the largest campus announced (5 GW)
    ("sites", "pue"): 5,  # the worst facilities run at 2-3
    ("sites", "max_nodes"): 10_000_000,  # a site holding gpus_required's bound in one-GPU nodes
    ("sites", "fixed_cost_usd"): 1e12,  # $1T for one site
    ("sites", "power_cost_usd_per_mw"): 1e10,  # $10,000 per W of capex; builds cost ~$10 per W
    ("sites", "energy_usd_per_mwh"): 100_000,  # ten times the highest market price cap (ERCOT: $5,000)
    ("routes", "distance_km"): 40_000,  # the planet's circumference; the longest cables run ~20,000 km
    ("routes", "fiber_pairs"): 10_000,  # the largest cables hold a few hundred pairs
    ("routes", "fiber_cost_usd_per_pair_km"): 10_000_000,  # leases run $100s-$10,000s per pair km
    ("routes", "amplifier_spacing_km"): 1_000,  # spans run 40-120 km; unrepeatered links reach ~500 km
    ("routes", "fiber_loss_db_per_km"): 2,  # single-mode fiber loses 0.15-0.35 dB/km at 1550 nm
    ("workload", "model_params_billion"): 100_000,  # 100 trillion parameters, fifty times today's largest
    ("workload", "bytes_per_gradient"): 16,  # fp64 gradients with an fp64 copy
    ("workload", "step_compute_ms"): 10_000_000,  # ~3 hours per step
    ("workload", "grad_accum_steps"): 100_000,
    ("workload", "training_tokens"): 1e16,  # a thousand times the largest runs (~15-30T tokens)
    ("workload", "global_batch_tokens"): 1e10, ("workload", "seq_len"): 10_000_000,  # batches run at ~1-60M tokens
    ("workload", "layers"): 10_000, ("workload", "hidden_size"): 1_000_000,  # models run ~100 layers, ~16k wide
    ("workload", "active_params_billion"): 100_000,  # as model_params_billion
    ("workload", "tp"): 1_024, ("workload", "pp"): 1_024, ("workload", "ep"): 100_000,
    ("workload", "experts_per_token"): 1_024, ("workload", "amortization_years"): 50,
    ("node_types", "gpu_tflops"): 1e6,  # a thousand PFLOPS a GPU; GPUs run at ~1-5 PFLOPS dense BF16
    ("node_types", "scaleup_gpus"): 100_000, ("node_types", "scaleup_gbps"): 1e6,  # NVLink 5: 7,200 Gb/s a GPU
    ("protocols", "jitter_us"): 1e6, ("cloud", "jitter_us"): 1e6,  # a second; spreads run at 0.1-100 us
    ("cloud", "usd_per_gpu_hour"): 10_000, ("cloud", "gbps_per_gpu"): 1e5, ("cloud", "latency_us"): 1e6,
    ("cloud", "hops"): 100, ("cloud", "max_gpus"): 10_000_000,
    ("node_types", "gpus_per_node"): 1_024, ("node_types", "nics_per_node"): 1_024,  # rack-scale nodes: 72-576
    ("node_types", "nic_gbps"): 3_200,  # the fastest line rate a port carries (1.6T shipping, 3.2T announced)
    ("node_types", "planes"): 16,  # multi-plane fabrics use 2-8
    ("node_types", "node_power_kw"): 2_000,  # a rack-scale node draws 120-600 kW
    ("node_types", "node_price_usd"): 1e8,  # rack-scale systems list at $3-5M
    ("node_types", "nvlink_latency_ns"): 1_000_000,  # 1 ms; NVLink hops take ~300 ns
    ("switches", "buffer_mb"): 1_000_000,  # 1 TB; deep-buffer routers hold ~100 GB
    ("switches", "latency_ns"): 10_000_000,  # 10 ms; deep-buffer routers take ~10 us
    ("switches", "power_w"): 1_000_000,  # a modular chassis draws ~30 kW
    ("switches", "price_usd"): 1e8,  # a modular chassis lists at ~$1M
    ("optics", "gbps"): 3_200,  # as nic_gbps
    ("optics", "reach_m"): 100_000,  # 100 km: beyond it a link is a DCI route (coherent)
    ("optics", "power_w"): 10_000, ("optics", "price_usd"): 1e7,  # modules draw ~30 W and cost ~$10,000
    ("switches", "cages"): MAX_PORTS,
    ("optics", "links_per_module"): 16,  # twin-port modules carry 2, breakouts 8
    ("coherent", "gbps"): 3_200,  # as nic_gbps
    ("coherent", "reach_km"): 40_000,  # as distance_km
    ("coherent", "fiber_pairs_per_link"): 16,  # parallel single-mode modules take 4-8 pairs
    ("support_networks", "nodes_per_switch"): 10_000, ("support_networks", "ports_per_node"): 64,
    ("support_networks", "port_gbps"): 3_200,  # as nic_gbps
    ("support_networks", "switch_price_usd"): 1e8, ("support_networks", "switch_power_w"): 1_000_000,  # as switches
    ("support_networks", "link_price_usd"): 1e7, ("support_networks", "link_power_w"): 10_000,  # as optics
    ("fiber_plant", "ports"): 10_000, ("fiber_plant", "price_usd"): 1e7,  # the largest enclosures hold ~1,000 ports
    ("coherent", "power_w"): 10_000, ("coherent", "price_usd"): 1e7,  # modules draw ~25 W and cost ~$20,000
    ("amplifiers", "power_w"): 100_000, ("amplifiers", "price_usd"): 1e8,  # huts draw ~1 kW, cost ~$100,000
    ("protocols", "nic_latency_ns"): 10_000_000,  # 10 ms; NIC stacks take ~1 us
    ("protocols", "jitter_rank"): 100,  # a rank among a handful of protocols
}

# Lower bounds where a tiny positive value breaks the model: figures that others are divided by.
LOWER: dict[tuple[str, str], float] = {
    # nodes a site can feed = power / node power: 1e-300 kW overflows; no node draws under 100 W
    ("node_types", "node_power_kw"): 0.01,
    # amplifiers per pair = distance / spacing: 1e-300 km overflows; spans run 40-120 km
    ("routes", "amplifier_spacing_km"): 1,
    # switches = nodes / nodes per switch: a switch serves at least a hundredth of a node's ports
    ("support_networks", "nodes_per_switch"): 0.01,
}


def _bounded(sheet: Sheet) -> Sheet:
    """``sheet`` with the bounds of UPPER and LOWER in its fields (a LOWER bound replaces ``> 0``)."""
    return replace(sheet, fields=tuple(_bound(sheet.name, f) for f in sheet.fields))


def _bound(sheet: str, field: Field) -> Field:
    if (sheet, field.name) in LOWER:
        field = replace(field, gt=None, ge=LOWER[sheet, field.name])
    if (sheet, field.name) in UPPER:
        field = replace(field, le=UPPER[sheet, field.name])
    return field


SHEETS: dict[str, Sheet] = {s.name: _bounded(s) for s in (
    PROJECT, SITES, ROUTES, FLOORPLAN, WORKLOAD, NODE_TYPES, SWITCHES, OPTICS, COHERENT, AMPLIFIERS,
    PROTOCOLS, SUPPORT, FIBER_PLANT, CLOUD)}
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
        note = ("; replaces the default catalog table when present (extends it when the project's "
                "`catalog` is `extend`)") if sheet.catalog else ""
        out += [f"### `{sheet.name}`", "", f"{sheet.description} {status.capitalize()} "
                f"{shape}{note}.", "",
                f"| {'key' if sheet.kind == 'keys' else 'column'} | type | unit | default | "
                "required | description |", "|---|---|---|---|---|---|"]
        for f in sheet.fields:
            kind = _TYPE_WORDS[f.type]
            if f.allowed:
                kind += ": " + ", ".join(f"`{a}`" for a in f.allowed)
            rule = (f.expectation() if f.type in ("int", "float")
                    else f"at most {f.max_chars:,} characters" if f.type == "str" else "")
            description = f.description + (f"; {rule}" if rule else "")
            default = "" if f.default is None else f"{f.default:g}" if isinstance(
                f.default, float) else f.default
            out.append(f"| `{f.name}` | {_cell(kind)} | {_cell(f.unit)} | {_cell(default)} | "
                       f"{'yes' if f.required else ''} | {_cell(description)} |")
        out.append("")
    return "\n".join(out)
