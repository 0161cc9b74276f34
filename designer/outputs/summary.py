"""The short text summary the CLI prints after a solve (from the Solution only)."""

from __future__ import annotations

from designer.audit import resilience
from designer.formats import gap, money, split_words


def summary_lines(solution: dict) -> list[str]:
    totals = solution["totals"]
    lines = [
        f"design {solution.get('name')}: {solution['status']} "
        f"(gap {gap(solution['mip_gap'])}, {solution['solve_seconds']:.1f} s)",
        f"  {totals['gpus']:,} GPUs on {totals['nodes']:,} nodes at {totals['sites_open']} site(s); "
        f"capex {money(totals['capex_usd'])}, power {totals['power_mw']:.2f} MW, "
        f"{totals['coherent_ports']:,} DCI optic modules",
    ]
    if totals.get("spares_usd"):
        lines.append(f"  spares {money(totals['spares_usd'])} (sized after the optimization); capex with spares "
                     f"{money(totals['capex_with_spares_usd'])}")
    lines += [f"  {note}" for note in solution.get("notes", []) if note.startswith("warning:")]
    if totals.get("energy_usd"):
        lines.append(f"  energy over the horizon {money(totals['energy_usd'])}; objective {money(solution['objective_usd'])}")
    for site in solution["sites"]:
        if not site["open"]:
            continue
        counts = ", ".join(f"{t['count']} {t['tier']} {t['model']}" + (f" @{t['port_gbps']}G" if t.get("port_gbps") else "")
                           for t in site["tiers"])
        lines.append(
            f"  {site['name']}: {site['gpus']:,} GPUs, {site['topology']} ({site['fabric_tiers']}-tier, "
            f"{site['planes']} plane(s)), {site['protocol']}, {site['link_gbps']}G NICs, "
            f"oversubscription {site['oversubscription']:g}:1, latency {site['fabric_latency_us']:.2f} µs, "
            f"{site['power_mw']:.2f}/{site['power_cap_mw']:g} MW, {money(site['capex_usd'])}")
        lines.append(f"    switches: {counts}")
        if site.get("cheaper_split"):
            c = site["cheaper_split"]
            lines.append(f"    outside the grid searched: {split_words(c)} would cost {money(c['saving_usd'])} less")
        if site.get("polished_from"):
            lines.append(f"    polished at its node count from the grid's {split_words(site['polished_from'])}")
    for link in solution["links"]:
        what = ("wavelength" if (link.get("optic_kind") or "coherent") == "coherent" else "link") + (
            "s" if link["wavelengths"] != 1 else "")
        lines.append(f"  {link['site_a']} <-> {link['site_b']}: {link['wavelengths']} {what} of "
                     f"{link['coherent_model']} ({link['coherent_ports']} modules, "
                     f"{link['capacity_gbps'] / 1e3:,.1f} Tb/s) on {link['fiber_pairs']} fiber pair(s), "
                     f"{link['amplifiers']} amplifiers, RTT {link['rtt_ms']:.3f} ms")
    return lines + training_lines(solution.get("training")) + resilience.summary_lines(solution.get("resilience"))


def training_lines(t: dict | None) -> list[str]:
    """The run on this design, and each cloud offer's beside it."""
    if not t:
        return []
    lines = [f"  training: step {t['step_time_s']:.3g} s, {t['tokens_per_s']:,.0f} tokens/s, MFU {t['mfu']:.1%}, "
             f"{t['time_to_train_days']:,.1f} days, run {money(t['cost_per_run_usd'])} (network idle "
             f"{t['idle_share']:.1%} = {money(t['idle_usd'])})"]
    for c in t["cloud"]:
        lines.append(f"    rent {c['offer']}: " + (
            f"{c['time_to_train_days']:,.1f} days, {money(c['cost_per_run_usd'])}" if c["fits"]
            else "fewer GPUs than the job needs"))
    return lines
