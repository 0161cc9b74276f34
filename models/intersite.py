"""Inter-site data prepared for the model: routes, coherent options, DCI routers, RTT pairs.

Pure Python over validated tables; the Pyomo model only reads what this module returns.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import networkx as nx

FIBER_US_PER_KM = 4.9
C_BAND_GHZ = 4800.0
BANDS = {"c": ("c",), "c+l": ("c", "l")}  # a route's band -> the amplifier bands it needs
END_ROLES = ("booster", "preamp", "mux_demux")  # one per fiber pair at each end, per band
ASE_DB = 58.0  # -10 log10(h nu B_ref) in dBm: a photon's energy at 1550 nm over the 0.1 nm (12.5 GHz) reference


def rtt_ms(distance_km: float) -> float:
    """Round-trip time over fiber: 2 x 4.9 us/km."""
    return 2 * FIBER_US_PER_KM * distance_km / 1e3


def amplifiers_per_pair(distance_km: float, spacing_km: float) -> int:
    """In-line amplifiers per fiber pair: one every spacing_km, none at the ends."""
    return max(0, math.ceil(distance_km / spacing_km) - 1)


def channels_per_pair(channel_ghz: float, band: str = "c") -> int:
    """Wavelengths one fiber pair carries: floor(4800 GHz x bands / channel) (C+L: two bands)."""
    return int(C_BAND_GHZ * len(BANDS[band]) // channel_ghz)


def links_on_pairs(row, band: str = "c") -> tuple[int, int]:
    """(links, fiber pairs): ``links`` links of a DCI optic ride on ``pairs`` fiber pairs. A coherent module is
    one wavelength of channels_per_pair a pair; a gray module takes fiber_pairs_per_link pairs."""
    if is_gray(row):
        return 1, int(row.get("fiber_pairs_per_link") or 1)
    return channels_per_pair(float(row["channel_ghz"]), band), 1


def fiber_gbps(row, pairs: int, band: str = "c") -> float:
    """The most ``pairs`` fiber pairs carry with DCI optic ``row`` (every pair lit)."""
    links, per = links_on_pairs(row, band)
    return pairs * links // per * float(row["gbps"])


def osnr_db(distance_km: float, spacing_km: float, loss_db_per_km: float, launch_dbm: float, nf_db: float) -> float:
    """ASE-limited OSNR in 0.1 nm over N = ceil(d / spacing) equal spans, each followed by an amplifier of noise
    figure NF: 58 + P_ch - NF - loss x d / N - 10 log10 N (dB, dBm)."""
    spans = max(1, math.ceil(distance_km / spacing_km))
    return ASE_DB + launch_dbm - nf_db - loss_db_per_km * distance_km / spans - 10 * math.log10(spans)


def channel_dbm(launch_dbm_per_50ghz: float, channel_ghz: float) -> float:
    """Launch power of one channel at constant spectral density: P_50 + 10 log10(channel / 50 GHz)."""
    return launch_dbm_per_50ghz + 10 * math.log10(channel_ghz / 50.0)


@dataclass(frozen=True)
class LineItem:
    """Line-system units of a route lit with a coherent type: ``count`` per lit fiber pair (in-line amplifiers at
    every in-line site; booster, preamp and mux/demux 2, one at each end) or per route (role hut: one per
    in-line site)."""

    role: str
    name: str
    price_usd: float
    power_w: float
    count: int

    @property
    def at_ends(self) -> bool:
        return self.role in END_ROLES


def line_system(amplifiers, band: str, in_line_sites: int) -> tuple[tuple[LineItem, ...], float | None, str]:
    """(units, worst noise figure of the in-line and preamp amplifiers (None: none), what the band lacks) of a
    route: the cheapest row of each role and band (ties: lower noise figure, then name); a hut per in-line site."""
    items, figures, missing = [], [], []
    for role in ("inline", *END_ROLES, "hut"):
        count = in_line_sites if role in ("inline", "hut") else 2
        of_role = amplifiers[amplifiers["role"] == role]
        for b in (None,) if role == "hut" else BANDS[band]:
            rows = of_role if b is None else of_role[of_role["band"] == b]
            if not len(rows):
                if b == "l" and len(of_role) and count:
                    missing.append(f"L-band {role}")
                continue
            row = rows.assign(_name=rows.index).sort_values(["price_usd", "noise_figure_db", "_name"]).iloc[0]
            if count:
                items.append(LineItem(role, str(row.name), float(row["price_usd"]), float(row["power_w"]), count))
                if role in ("inline", "preamp"):
                    figures.append(float(row["noise_figure_db"]))
    return tuple(items), max(figures, default=None), ", ".join(missing)


def line_usd(route: Route, pairs, lit=1):
    """Line system price of a route: per-pair units x lit coherent pairs + huts x ``lit`` (1 when it carries
    coherent traffic; a model expression works as well as a number)."""
    return sum(i.price_usd * i.count * (lit if i.role == "hut" else pairs) for i in route.line)


def end_watts(route: Route) -> float:
    """Power of the line units at one end of one lit fiber pair (booster, preamp, mux/demux per band)."""
    return sum(i.power_w * i.count / 2 for i in route.line if i.at_ends)


def route_watts(route: Route, pairs: int, lit: int) -> float:
    """Power along the route, on no site: in-line amplifiers x lit pairs + huts x ``lit``."""
    return sum(i.power_w * i.count * (lit if i.role == "hut" else pairs) for i in route.line if not i.at_ends)


def is_gray(row) -> bool:
    """A gray DCI optic: its own fiber pairs, no DWDM, no amplifiers."""
    return str(row.get("kind") or "coherent") == "gray"


def bdp_mb(gbps: float, rtt: float) -> float:
    """Bandwidth-delay product in MB for gbps over an RTT in ms."""
    return gbps * rtt / 8.0


@dataclass(frozen=True)
class Route:
    key: str
    a: str
    b: str
    distance_km: float
    fiber_pairs: int
    cost_per_pair: float  # USD per fiber pair over the whole distance
    amplifiers_per_pair: int
    rtt_ms: float
    coherent: tuple[str, ...]  # DCI optics (coherent or gray) whose reach (and OSNR budget) covers the distance
    band: str = "c"
    line: tuple[LineItem, ...] = ()  # the line system a coherent type lights
    osnr_db: dict = field(default_factory=dict)  # coherent type -> OSNR at its receiver (where it is checked)
    srlg: str | None = None  # shared-risk link group: routes of one group fail together


@dataclass
class InterSite:
    routes: list[Route]
    routers: list[str]  # DCI router models usable with every coherent speed offered
    coherent: list[str]
    excluded_pairs: list[tuple[str, str, str]]  # (a, b, why)
    rtt_arcs: dict[tuple[str, str], list[tuple[str, str, str]]]  # site pair -> (route key, from, to) arcs
    # that lie on some walk between the pair within max_site_rtt_ms (no pair listed when there is no limit)
    notes: list[str]
    encryption: str | None = None  # with encrypt_dci: "router" (MACsec on every DCI router) or "optic"


def prepare(inputs, sites: list[str]) -> InterSite:
    """Routes between usable sites, their coherent options, DCI routers and RTT-limited pairs."""
    project = inputs.project
    max_rtt = project.get("max_site_rtt_ms")
    notes: list[str] = []
    coherent = inputs.coherent
    dci = [m for m, row in inputs.switches.iterrows() if "dci" in row["roles"]]
    dci, usable_coherent, encryption = encrypting(inputs, dci, notes)
    speeds = {int(g) for g in coherent.loc[usable_coherent, "gbps"]}
    routers = [m for m in dci if speeds <= set(inputs.switches.loc[m, "port_modes"])]
    if dci and not routers:
        # No router carries every speed: keep the speeds the DCI routers share.
        shared = set.intersection(*(set(inputs.switches.loc[m, "port_modes"]) for m in dci))
        usable_coherent = [c for c in usable_coherent if int(coherent.loc[c, "gbps"]) in shared]
        routers = dci if usable_coherent else []
        notes.append("coherent types at speeds no DCI router port carries were left out")

    site_set = set(sites)
    routes: list[Route] = []
    if len(inputs.routes) and not routers:
        notes.append("no DCI router (a switch with role dci) carries the coherent speeds: no route can be used")
    for _, row in (inputs.routes if routers else inputs.routes.iloc[:0]).iterrows():
        a, b = str(row["site_a"]), str(row["site_b"])
        if a not in site_set or b not in site_set:
            continue
        dist = float(row["distance_km"])
        rtt = rtt_ms(dist)
        if max_rtt is not None and rtt > max_rtt:
            notes.append(f"route {a}-{b} ({rtt:.3f} ms RTT) is above max_site_rtt_ms and cannot be used")
            continue
        options = tuple(c for c in usable_coherent if float(coherent.loc[c, "reach_km"]) >= dist)
        if not options:
            notes.append(f"route {a}-{b} ({dist:g} km) is beyond the reach of every coherent type")
            continue
        band = str(row["band"])
        amps = amplifiers_per_pair(dist, float(row["amplifier_spacing_km"]))
        line, nf, missing = line_system(inputs.amplifiers, band, amps)
        if missing:
            notes.append(f"route {a}-{b} is C+L but the amplifiers table has no {missing}: coherent types are "
                         "not offered on it")
            options = tuple(c for c in options if is_gray(coherent.loc[c]))
        osnr = {c: osnr_db(dist, float(row["amplifier_spacing_km"]), float(row["fiber_loss_db_per_km"]),
                           channel_dbm(float(project["launch_power_dbm"]),
                                       float(coherent.loc[c, "channel_ghz"])), nf)
                for c in options if nf is not None and required_osnr(coherent.loc[c]) is not None}
        margin = float(project["osnr_margin_db"])
        short = [c for c in osnr if osnr[c] < required_osnr(coherent.loc[c]) + margin]
        if short:
            notes.append(f"route {a}-{b} ({dist:g} km): OSNR below the required plus osnr_margin_db {margin:g} dB for "
                         + ", ".join(f"{c} ({osnr[c]:.1f} < {required_osnr(coherent.loc[c]):g} + {margin:g} dB)"
                                     for c in short) + ": not offered on it")
            options = tuple(c for c in options if c not in short)
        if not options:
            continue
        routes.append(Route(
            key=f"{a}--{b}", a=a, b=b, distance_km=dist, fiber_pairs=int(row["fiber_pairs"]),
            cost_per_pair=float(row["fiber_cost_usd_per_pair_km"]) * dist, amplifiers_per_pair=amps,
            rtt_ms=rtt, coherent=options, band=band, line=line, osnr_db={c: osnr[c] for c in options if c in osnr},
            srlg=srlg_of(row),
        ))

    graph = nx.Graph()
    graph.add_nodes_from(sites)
    for r in routes:
        graph.add_edge(r.a, r.b, key=r.key, rtt=r.rtt_ms)
    excluded, rtt_arcs = [], {}
    lengths = dict(nx.all_pairs_dijkstra_path_length(graph, weight="rtt"))
    for a, b in itertools.combinations(sites, 2):
        if b not in lengths[a]:
            excluded.append((a, b, "no usable fiber path"))
        elif max_rtt is not None and lengths[a][b] > max_rtt + 1e-12:
            excluded.append((a, b, f"RTT above max_site_rtt_ms {max_rtt:g}"))
        elif max_rtt is not None:
            rtt_arcs[(a, b)] = arcs_within(routes, lengths[a], lengths[b], max_rtt)
    if project.get("route_diversity"):
        excluded += not_diverse(graph, routes, {frozenset(p[:2]) for p in excluded})
    return InterSite(routes, routers, usable_coherent, excluded, rtt_arcs, notes, encryption)


def not_diverse(graph: nx.Graph, routes: list[Route], known: set) -> list[tuple[str, str, str]]:
    """Site pairs that no design may open together under route_diversity: some one failure (failure_groups)
    separates them over every usable route, so it separates them over the used ones too."""
    out = []
    for name, keys in failure_groups(routes).items():
        rest = graph.copy()
        rest.remove_edges_from((r.a, r.b) for r in routes if r.key in keys)
        part = {n: k for k, c in enumerate(nx.connected_components(rest)) for n in c}
        for a, b in itertools.combinations(graph.nodes, 2):
            if part[a] != part[b] and frozenset((a, b)) not in known:
                known.add(frozenset((a, b)))
                out.append((a, b, f"route_diversity: losing {name} separates them"))
    return out


def srlg_of(row) -> str | None:
    """A routes row's shared-risk group (None: blank, or no such column)."""
    value = row.get("srlg")
    return None if value is None or value != value or str(value).strip() == "" else str(value)


def failure_groups(routes: list[Route]) -> dict[str, tuple[str, ...]]:
    """What one failure takes down: an srlg group's routes together, a route without a group alone
    (name -> route keys)."""
    groups: dict[str, list[str]] = {}
    for r in routes:
        groups.setdefault(f"srlg {r.srlg}" if r.srlg else r.key, []).append(r.key)
    return {name: tuple(keys) for name, keys in groups.items()}


def required_osnr(row) -> float | None:
    """The OSNR a coherent module needs (None: gray, or not given)."""
    value = row.get("required_osnr_db")
    return None if is_gray(row) or value is None or value != value else float(value)  # NaN: a blank cell


def encrypting(inputs, dci: list[str], notes: list[str]) -> tuple[list[str], list[str], str | None]:
    """(DCI routers, DCI optics, what encrypts) offered: all of them without encrypt_dci; with it, the routers
    with MACsec (they encrypt every link), else every router and only the optics that encrypt themselves."""
    coherent = list(inputs.coherent.index)
    if not inputs.project.get("encrypt_dci"):
        return dci, coherent, None
    macsec = [m for m in dci if bool(inputs.switches.loc[m, "encryption"])]
    if macsec:
        if len(macsec) < len(dci):
            notes.append("encrypt_dci: DCI routers without MACsec were left out (" + ", ".join(
                m for m in dci if m not in macsec) + ")")
        return macsec, coherent, "router"
    sealed = [c for c in coherent if bool(inputs.coherent.loc[c, "encryption"])]
    notes.append("encrypt_dci: no DCI router has MACsec; only DCI optics that encrypt are offered"
                 + ("" if sealed else " and none does: no route can be used"))
    return (dci if sealed else []), sealed, "optic"


def arcs_within(routes: list[Route], from_a: dict, to_b: dict, limit: float) -> list[tuple[str, str, str]]:
    """Directed arcs (route key, u, v) of the routes some a-b walk within ``limit`` ms can use:
    d(a, u) + rtt(u, v) + d(v, b) <= limit, d the least RTT over every usable route."""
    out = []
    for r in routes:
        for u, v in ((r.a, r.b), (r.b, r.a)):
            if u in from_a and v in to_b and from_a[u] + r.rtt_ms + to_b[v] <= limit + 1e-12:
                out.append((r.key, u, v))
    return out
