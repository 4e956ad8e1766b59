"""Power and energy: energy per FLOP, per byte of each tier and per link byte, the mean power of
a device in each phase between its busy floor and TDP, and the energy of the run."""

from __future__ import annotations

from html import escape

from ....core import codes
from ....core.units import format_energy, format_factor, format_power
from ...context import Context
from ..build import Builder, section
from ..numbers import CONSTANTS_FILE, count, tiny_energy, tokens_per_joule


@section("energy", "Power and energy", needs=("decode", "step", "prefill", "communication"))
def energy(sh: Builder, ctx: Context) -> tuple[str, ...]:
    r, a, t, k = ctx.result, ctx.accelerator, ctx.trace, ctx.constants
    sh.leaf("TDP", "P<sub>TDP</sub>", f"TDP of {escape(a.name)}", t.tdp_W, format_power(t.tdp_W, trim=True),
            "accelerator")
    sh.leaf("P_idle", "P<sub>idle</sub>", f"idle power of {escape(a.name)}", t.idle_W,
            format_power(t.idle_W, trim=True), "accelerator")
    busy = ctx.cls.busy_power_fraction
    sh.leaf("f_busy", "f<sub>busy</sub>", f"share of TDP drawn at least while executing, {a.architecture_class} "
            f"class ({CONSTANTS_FILE})", busy, format_factor(busy), "accelerator")
    sh.derive("Energy per FLOP", "e_flop", "e<sub>FLOP</sub>", "set so that sustained dense products alone reach "
              "TDP", "({TDP} − {P_idle})/({eta_c}·{pi})", lambda x: tiny_energy(x, "FLOP"), t.energy_per_flop_J)
    main = t.near_tiers[0]
    e_mem = k.memory_energy_J_per_byte[main.kind]
    sh.leaf("e_mem", "e<sub>mem</sub>", f"energy per byte of {escape(main.name or main.kind)} ({CONSTANTS_FILE})",
            e_mem, tiny_energy(e_mem, "B"), "accelerator")
    e_link = t.energy_per_link_byte_J
    sh.leaf("e_link", "e<sub>link</sub>", f"energy per byte sent over the interconnect ({CONSTANTS_FILE})",
            e_link, tiny_energy(e_link, "B"))
    offloaded = t.offload > 0.0 or t.kv_offload > 0.0
    if offloaded:
        e_far = k.memory_energy_J_per_byte[t.far_tier.kind]
        sh.leaf("e_far", "e<sub>far</sub>", f"energy per byte of {escape(t.far_tier.name or t.far_tier.kind)} "
                f"({CONSTANTS_FILE})", e_far, tiny_energy(e_far, "B"), "accelerator")
    _power(sh, ctx, "dec", "{m}·", t.decode.passes, "{ITL}", r.decode.power_per_device_W, "decode", offloaded)
    _power(sh, ctx, "pre", "{n_ch}·", t.prefill.passes, "{t_prefill}", r.prefill.power_per_device_W, "prefill",
           offloaded)
    sh.derive("Devices", "N_dev", "N<sub>dev</sub>", "devices of all replicas", "{TP}·{PP}·{DP}", count, r.devices)
    waves = "{waves}·" if r.waves > 1 else ""
    sh.derive("Energy of the run", "E_run", "E<sub>run</sub>", "all devices, prefill and decode of every wave",
              f"{{N_dev}}·{waves}({{P_pre}}·{{t_prefill}} + {{P_dec}}·({{s_out}} − 1)·{{ITL}})", format_energy,
              r.energy_J)
    sh.derive("Tokens per joule", "tok_J", "Y<sub>E</sub>", "input and output tokens per joule, as the second paper "
              "counts", "{DP}·{B}·({s_in} + {s_out})/{E_run}", tokens_per_joule, r.tokens_per_joule)
    notes = [_scope_note(ctx)]
    if r.warning_bits & codes.WARN_POWER_CAPPED:
        notes.append("The work asks for more than the TDP: power is capped there (the min above).")
    return tuple(notes)


def _power(sh: Builder, ctx: Context, suffix: str, passes: str, n_passes: int, time_key: str, engine: float,
           label: str, offloaded: bool) -> None:
    key, symbol = f"P_{suffix}", f"P<sub>{suffix}</sub>"
    meaning = (f"mean power of one device during {label}: idle plus the energy of the work, over its time; at "
               "least the busy floor, at most the TDP")
    if len(ctx.trace.near_tiers) > 1:
        sh.quote(f"Power during {label}", key, symbol, meaning, engine, format_power,
                 ("model", "accelerator", "batch", "weight_precision", "tp", "pp"),
                 "Bytes are charged per tier at each tier's energy per byte; this is the engine's figure.")
        return
    passes = passes if n_passes > 1 else ""
    if offloaded:
        memory = f"({{Q_{suffix}}} − {{Q_far_{suffix}}})·{{e_mem}} + {{Q_far_{suffix}}}·{{e_far}}"
    else:
        memory = f"{{Q_{suffix}}}·{{e_mem}}"
    sh.derive(f"Power during {label}", key, symbol, meaning,
              f"min({{TDP}}, max({{f_busy}}·{{TDP}}, {{P_idle}} + {passes}({{F_{suffix}}}·{{e_flop}} + {memory} + "
              f"{{D_{suffix}}}·{{e_link}})/{time_key}))", format_power, engine)


def _scope_note(ctx: Context) -> str:
    name = escape(ctx.accelerator.name)
    if ctx.accelerator.power_scope == "system":
        return (f"System-level figures: the power of {name} is known only for the whole system (host, fans "
                "and power delivery included).")
    return f"Device-level figures: the board power of each {name}, without host, fans or power delivery."
