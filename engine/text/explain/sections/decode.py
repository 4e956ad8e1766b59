"""Decode: one step at the mean context, what bounds it, its experts and crossover batch, and
the inter-token latency."""

from __future__ import annotations

from ....core.units import format_bandwidth, format_bytes, format_flop_rate, format_flops, format_time, significant
from ..context import ExplainContext
from ..words import amount, count, sentence
from . import crossover, groups, moe
from .communication import communication_sentence
from .reads import rates_and_verdict
from .stage import execution_sentence, host_sentence, overhead_phrase, pass_sum, pipeline_sum, stated_transfer


def sentences(ctx: ExplainContext) -> list[str]:
    p, s, r, t = ctx.decode, ctx.scenario, ctx.result, ctx.trace
    pt = p.trace
    mean_context = significant(t.mean_decode_context)
    if pt.passes > 1:
        lines = [
            sentence(
                f"each decode step moves {pt.passes} micro-batches of {amount(pt.sequences_per_pass)} sequences "
                f"through the {s.pp} pipeline stages (one token each, at the mean context of {mean_context} tokens)"
            )
        ]
        subject = f"per micro-batch, {ctx.device()}"
    else:
        lines = []
        subject = "each decode step" + (" on the busiest device" if s.tp * s.pp > 1 else "")
    reads = (
        f"{subject} reads {format_bytes(pt.weight_bytes_per_pass)} of weights and "
        f"{format_bytes(pt.kv_bytes_per_pass)} of KV cache"
    )
    if pt.passes == 1:
        reads += f" ({count(r.memory.resident_batch, 'sequence')} at the mean context of {mean_context} tokens)"
    reads += f", {format_bytes(pt.bytes_per_pass)} in all with activations"
    lines += rates_and_verdict(ctx, p, reads, f"its {format_flops(pt.flops_per_pass)}")
    lines.extend(groups.read_sentences(ctx))
    unit = "step" if pt.passes == 1 else "micro-batch"
    lines.append(execution_sentence(ctx, p, unit))
    lines.append(
        sentence(
            f"its operational intensity is {significant(r.decode.operational_intensity)} FLOP/byte; the roofline's "
            f"ridge point is {significant(r.ridge_point)} FLOP/byte ({format_flop_rate(t.peak_flops, trim=True)} ÷ "
            f"{format_bandwidth(t.ridge_tier.effective_bandwidth_Bps, trim=True)})"
        )
    )
    lines.extend(moe.sentences(ctx))
    lines.extend(crossover.sentences(ctx))
    comm = communication_sentence(ctx, p, unit)
    if comm:
        lines.append(comm)
    host_line = host_sentence(ctx, p, prefill=False)
    if host_line:
        lines.append(host_line)
    lines.append(_total(ctx))
    return lines


def _total(ctx: ExplainContext) -> str:
    """How the stage passes, the pipeline's hand-overs and the host time make the ITL."""
    p, s, r = ctx.decode, ctx.scenario, ctx.result
    phase = p.result
    if s.pp == 1:
        host = f" + {format_time(phase.host_time_s)}" if phase.host_time_s > 0 else ""
        return sentence(
            f"with {overhead_phrase(ctx, p)}, one decode step — the inter-token latency (ITL) — takes "
            f"{pass_sum(p)}{host} = {format_time(r.itl_s)}"
        )
    transfers = f"{count(s.pp - 1, 'activation transfer')} of {format_time(stated_transfer(ctx, p))}"
    host_wait = f", and the host adds {format_time(phase.host_time_s)}" if phase.host_time_s > 0 else ""
    return sentence(
        f"with {overhead_phrase(ctx, p)}, a stage pass takes {pass_sum(p)} = {format_time(p.trace.pass_time_s)}; "
        f"a token crosses {s.pp} stages and {transfers}{host_wait}, so the inter-token latency (ITL) is "
        f"{pipeline_sum(ctx, p)}"
    )
