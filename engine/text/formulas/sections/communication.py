"""Communication: the collectives of a pass (two all-reduces per layer under TP; with EP one
all-reduce and two all-to-alls per MoE layer), the bytes each device sends, and the hand-over
between pipeline stages, over the networks the engine chose."""

from __future__ import annotations

from html import escape

from ....core.units import format_bandwidth, format_bytes, format_factor, format_time
from ....physics.reference import NetworkTrace
from ...context import Context
from ..build import Builder, section
from ..numbers import count
from .stage import phase_of


def network_terms(sh: Builder, ctx: Context, key: str, net: NetworkTrace, what: str) -> None:
    """β and λ of the network a group uses, each device exchanging with ``net.peers`` others."""
    record = net.interconnect
    meaning = f"{escape(net.name)}, per direction ({what})"
    if net.link_bandwidth_Bps < float(record.bandwidth_per_direction_Bps):
        links = "one direct link" if net.peers == 1 else f"{net.peers} direct links"
        meaning += (f": {links} of {format_bandwidth(float(record.peer_bandwidth_per_direction_Bps), trim=True)}, "
                    "since a switchless mesh joins each pair of devices by its own link")
    sh.leaf(f"beta_{key}", f"β<sub>{key}</sub>", meaning, net.link_bandwidth_Bps,
            format_bandwidth(net.link_bandwidth_Bps, trim=True), "accelerator", key.lower())
    sh.leaf(f"lambda_{key}", f"λ<sub>{key}</sub>", f"latency of one step on {escape(net.name)}", net.latency_s,
            format_time(net.latency_s, trim=True), "accelerator")
    kappa = ctx.trace.collective_overhead_s
    sh.leaf("kappa", "κ<sub>coll</sub>", "fixed cost of launching and synchronising one communication "
            f"operation, {ctx.accelerator.architecture_class} class", kappa, format_time(kappa, trim=True),
            "accelerator")


def interconnect_efficiency(sh: Builder, ctx: Context) -> None:
    efficiency = ctx.cls.interconnect_efficiency
    sh.leaf("eta_ic", "η<sub>ic</sub>", f"interconnect efficiency of the {ctx.accelerator.architecture_class} class",
            efficiency, format_factor(efficiency), "accelerator")


def communication(sh: Builder, ctx: Context, suffix: str, tokens_key: str, label: str) -> None:
    """t_comm of one pass, and the bytes each device sends."""
    m, t = ctx.model, ctx.trace
    tp, ep = ctx.scenario.tp, t.effective_ep
    phase, phase_trace = phase_of(ctx, suffix)
    if tp == 1 and ep == 1:
        sh.leaf(f"t_comm_{suffix}", f"t<sub>comm,{label}</sub>", "communication per pass: none with TP = EP = 1",
                0.0, "0 s", "tp", "ep")
        sh.leaf(f"D_{suffix}", f"D<sub>{label}</sub>", "bytes a device sends per pass: none", 0.0, "0 B", "tp", "ep")
        return
    interconnect_efficiency(sh, ctx)
    sh.derive(f"All-reduce message ({label})", f"msg_{suffix}", f"S<sub>{label}</sub>",
              "activations of the pass's tokens", f"{{{tokens_key}}}·{{d}}·{{p_a}}", format_bytes,
              phase_trace.all_reduce.message_bytes)
    if tp > 1:
        network_terms(sh, ctx, "TP", t.tp_network, "tensor-parallel group")
        sent_template = all_reduce_formula(sh, ctx, suffix, label)
    if ep > 1:
        network_terms(sh, ctx, "EP", t.ep_network, "expert-parallel group")
        sh.derive(f"All-to-all volume ({label})", f"D_a2a_{suffix}", f"D<sub>a2a,{label}</sub>",
                  "token copies the busiest device sends to experts on other devices",
                  f"{{msg_{suffix}}}·{{k}}·({{EP}} − 1)/{{EP}}·{{iota_{suffix}}}", format_bytes,
                  phase_trace.all_to_all.sent_bytes)
        sh.derive(f"All-to-all ({label})", f"t_a2a_{suffix}", f"t<sub>A2A,{label}</sub>",
                  "one all-to-all (dispatch or combine)",
                  f"{{D_a2a_{suffix}}}/({{beta_EP}}·{{eta_ic}}) + ({{EP}} − 1)·{{lambda_EP}} + {{kappa}}", format_time,
                  phase_trace.all_to_all.time_s)
        dense_layers = m.n_layers - m.n_moe_layers  # layers without routed experts
        sh.leaf("L_dense", "L<sub>dense</sub>", "layers without routed experts", dense_layers, count(dense_layers),
                "model")
        reduce = f"{{t_ar_{suffix}}} + " if tp > 1 else ""
        dense = f"{{L_dense}}·2·{{t_ar_{suffix}}} + " if tp > 1 and dense_layers else ""
        moe_part = f"{{L_moe}}·({reduce}2·{{t_a2a_{suffix}}})"
        template = f"({dense}{moe_part})/{{PP}}" if dense else f"{moe_part}/{{PP}}"
        moe_sent = f"{{L_moe}}·({'{AR_' + suffix + '} + ' if tp > 1 else ''}2·{{D_a2a_{suffix}}})"
        link_template = f"({{L_dense}}·2·{{AR_{suffix}}} + {moe_sent})/{{PP}}" if dense else f"{moe_sent}/{{PP}}"
    else:
        template = f"{{L}}/{{PP}}·2·{{t_ar_{suffix}}}"
        link_template = f"{{L}}/{{PP}}·2·{{AR_{suffix}}}"
    if tp > 1:
        sh.derive(f"All-reduce bytes sent ({label})", f"AR_{suffix}", f"D<sub>AR,{label}</sub>",
                  f"bytes each device sends in one all-reduce ({phase_trace.all_reduce.algorithm})",
                  sent_template, format_bytes, phase_trace.all_reduce.sent_bytes)
    sh.derive(f"Communication ({label})", f"t_comm_{suffix}", f"t<sub>comm,{label}</sub>",
              f"collectives of one {label} pass", template, format_time, phase.communication_time_s)
    sh.derive(f"Bytes sent over links ({label})", f"D_{suffix}", f"D<sub>{label}</sub>",
              f"bytes each device sends per {label} pass (for the link energy)", link_template, format_bytes,
              phase_trace.link_bytes_per_pass)


def all_reduce_formula(sh: Builder, ctx: Context, suffix: str, label: str) -> str:
    """t_AR of one all-reduce by the algorithm the engine took for this message (the fastest of
    the ring and, for a power-of-two TP, recursive halving-doubling and recursive doubling);
    returns the template of the bytes each device sends in it."""
    _, phase_trace = phase_of(ctx, suffix)
    reduce = phase_trace.all_reduce
    tp, algorithm = ctx.scenario.tp, reduce.algorithm
    msg, rate = f"{{msg_{suffix}}}", "({beta_TP}·{eta_ic})"
    ring_share = "2·({TP} − 1)/{TP}·" + msg
    if algorithm == "ring":
        template = f"{ring_share}/{rate} + 2·({{TP}} − 1)·{{lambda_TP}} + {{kappa}}"
        sent_template = ring_share
        how = "as a ring: 2(TP − 1)/TP of the message in 2(TP − 1) steps"
    elif algorithm == "recursive halving and doubling":
        template = f"{ring_share}/{rate} + 2·log₂({{TP}})·{{lambda_TP}} + {{kappa}}"
        sent_template = ring_share
        how = "by recursive halving then doubling: the ring's bytes in 2·log₂(TP) steps"
    else:
        template = f"log₂({{TP}})·{msg}/{rate} + log₂({{TP}})·{{lambda_TP}} + {{kappa}}"
        sent_template = f"log₂({{TP}})·{msg}"
        how = "by recursive doubling: the whole message in each of log₂(TP) steps"
    if len(reduce.options) == 1:
        note = f"TP = {tp} is not a power of two, so the ring is the only algorithm the engine has for it."
    else:
        listed = ", ".join(f"{name} {format_time(time)}" for name, time in reduce.options)
        note = f"The engine takes the fastest all-reduce for this message: {listed}."
    sh.derive(f"All-reduce, {algorithm} ({label})", f"t_ar_{suffix}", f"t<sub>AR,{label}</sub>",
              f"one all-reduce over the TP devices, {how}", template, format_time, reduce.time_s, note)
    return sent_template


def point_to_point(sh: Builder, ctx: Context, suffix: str, tokens_key: str, label: str) -> None:
    if ctx.scenario.pp == 1:
        return
    network_terms(sh, ctx, "PP", ctx.trace.pp_network, "between pipeline stages")
    interconnect_efficiency(sh, ctx)
    sh.derive(f"Stage-to-stage transfer ({label})", f"t_p2p_{suffix}", f"t<sub>p2p,{label}</sub>",
              "one point-to-point transfer of the pass's activations to the next stage",
              f"{{{tokens_key}}}·{{d}}·{{p_a}}/({{beta_PP}}·{{eta_ic}}) + {{lambda_PP}} + {{kappa}}", format_time,
              phase_of(ctx, suffix)[1].transfer_s)


@section("communication", "Communication (TP, PP, EP)", needs=("decode",), note_controls=("tp", "pp", "ep", "dp"))
def communication_section(sh: Builder, ctx: Context) -> tuple[str, ...]:
    s, t = ctx.scenario, ctx.trace
    communication(sh, ctx, "dec", "b", "dec")
    point_to_point(sh, ctx, "dec", "b", "dec")
    notes = []
    if s.tp == 1 and t.effective_ep == 1:
        notes.append("No tensor or expert parallelism: no collectives within a stage.")
    if s.pp == 1:
        notes.append("No pipeline: no transfers between stages.")
    else:
        notes.append("The engine does not overlap communication with compute, a conservative choice.")
    domain = float(ctx.accelerator.interconnect.domain_size)
    for net, key in ((t.tp_network, "tp"), (t.pp_network, "pp")):
        if net.group > 1 and net.crosses_domain:
            notes.append(f"The {key.upper()} group of {net.group} devices is larger than the scale-up domain of "
                         f"{domain:g}: it crosses the slower network.")
    notes.append(f"DP = {s.dp}: replicas do not communicate; throughput and devices multiply by DP.")
    return tuple(notes)
