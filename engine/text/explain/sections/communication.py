"""A pass's collectives, for prefill and decode alike: the tensor-parallel all-reduces with
the algorithm and network the engine chose, and expert parallelism's all-to-alls."""

from __future__ import annotations

from ....core.precision import bytes_per_element
from ....core.units import format_bandwidth, format_bytes, format_factor, format_time
from ....physics.reference import NetworkTrace
from ....physics.reference.network import AllReduce
from ..context import ExplainContext, Phase
from ..words import count, sentence, tokens


def communication_sentence(ctx: ExplainContext, p: Phase, unit: str) -> str | None:
    phase, s, m, t = p.result, ctx.scenario, ctx.model, ctx.trace
    if phase.communication_time_s <= 0:
        return None
    parts = []
    if s.tp > 1:
        reduce = p.trace.all_reduce
        net = t.tp_network
        collective = t.collective_overhead_s
        launch = f" and {format_time(collective, trim=True)} to launch and synchronise it" if collective > 0 else ""
        if t.effective_ep == 1:
            per_layer = "twice per layer"
        elif m.n_moe_layers == m.n_layers:
            per_layer = "once per layer"
        else:
            per_layer = "twice per dense layer and once per MoE layer"
        parts.append(
            f"tensor parallelism over {s.tp} devices all-reduces the activations {per_layer} "
            f"({ctx.layers_per_stage()}), each of {tokens(p.trace.tokens_per_pass)} × {m.hidden_size:,} × "
            f"{format_factor(bytes_per_element(s.activation_precision))} B = {format_bytes(reduce.message_bytes)}, "
            f"{all_reduce_phrase(reduce, s.tp)} over {net.name} at {group_link_phrase(net)} × "
            f"{format_factor(ctx.cls.interconnect_efficiency)} with {format_time(net.latency_s, trim=True)} of latency "
            f"per step{launch}, taking {format_time(reduce.time_s)} each"
        )
    if t.effective_ep > 1:
        parts.append(
            f"expert parallelism over {t.effective_ep} devices adds two all-to-alls per MoE layer "
            f"(dispatch and combine, {m.n_moe_layers} MoE layers) over {t.ep_network.name}; the busiest device "
            "receives more than its share of the routed tokens"
        )
    return sentence(
        f"{'; '.join(parts)}: {format_time(phase.communication_time_s)} of communication per {unit}, "
        "not overlapped with compute"
    )


def all_reduce_phrase(reduce: AllReduce, group: int) -> str:
    """How the all-reduce runs, in how many steps, and why that algorithm (the fastest of
    those the group can use)."""
    steps = count(reduce.steps, "step")
    if reduce.algorithm == "ring":
        how = f"as a ring in 2 × ({group} − 1) = {steps}"
    elif reduce.algorithm == "recursive halving and doubling":
        how = f"by recursive halving and doubling in 2 × log₂ {group} = {steps}"
    else:
        how = f"by recursive doubling in log₂ {group} = {steps}, each device sending the whole message every step"
    if len(reduce.options) == 1:
        why = "recursive halving and doubling need a power-of-two group"
    else:
        why = "the fastest of ring, recursive halving and doubling, and recursive doubling for this message"
    return f"{how} ({why})"


def group_link_phrase(net: NetworkTrace) -> str:
    """The bandwidth a device of the group sends at, and why it is less than the network's
    on a switchless mesh."""
    record = net.interconnect
    text = format_bandwidth(net.link_bandwidth_Bps, trim=True)
    if net.link_bandwidth_Bps < float(record.bandwidth_per_direction_Bps):
        peer = format_bandwidth(float(record.peer_bandwidth_per_direction_Bps), trim=True)
        links = (
            "one direct link to the other device" if net.peers == 1
            else f"{net.peers} direct links of {peer} to the group"
        )
        total = format_bandwidth(float(record.bandwidth_per_direction_Bps), trim=True)
        text += f" ({links}: without a switch, the rest of its {total} leads outside the group)"
    return text
