"""Prefill: the wave's prompts in chunks, what bounds a chunk, and the time to first token."""

from __future__ import annotations

from ....core.units import format_bytes, format_flops, format_time
from ..context import ExplainContext
from ..words import amount, count, sentence
from .communication import communication_sentence
from .reads import rates_and_verdict
from .stage import execution_sentence, host_sentence, overhead_phrase, pass_sum, pipeline_sum, stated_transfer


def sentences(ctx: ExplainContext) -> list[str]:
    p, s, r = ctx.prefill, ctx.scenario, ctx.result
    pt = p.trace
    prompts = count(r.memory.resident_batch, "prompt")
    prompt_tokens = ctx.trace.prompt_tokens
    if pt.passes == 1:
        lines = [sentence(f"prefill of {prompts} × {s.input_len:,} tokens runs as one chunk of {prompt_tokens:,} tokens")]
    else:
        lines = [
            sentence(
                f"prefill of {prompts} × {s.input_len:,} tokens = {prompt_tokens:,} tokens runs as {pt.passes:,} chunks "
                f"of {amount(pt.tokens_per_pass)} tokens (at most {ctx.constants.prefill_chunk_tokens:,} per chunk; "
                "the weights are read once per chunk)"
            )
        ]
    kv = f", {format_bytes(pt.kv_bytes_per_pass)} of KV cache" if pt.kv_bytes_per_pass > 0 else ""
    lines += rates_and_verdict(
        ctx,
        p,
        f"per chunk, {ctx.device()} reads {format_bytes(pt.bytes_per_pass)}: "
        f"{format_bytes(pt.weight_bytes_per_pass)} of weights{kv} and "
        f"{format_bytes(pt.activation_traffic_bytes_per_pass)} of activations",
        f"its {format_flops(pt.flops_per_pass)}",
    )
    lines.append(execution_sentence(ctx, p, "chunk"))
    comm = communication_sentence(ctx, p, "chunk")
    if comm:
        lines.append(comm)
    host_line = host_sentence(ctx, p, prefill=True)
    if host_line:
        lines.append(host_line)
    lines.append(_total(ctx))
    if r.waves > 1:
        lines.append(
            sentence(
                f"that is one wave; over {r.waves} waves a request waits {format_time(r.ttft_s)} on "
                "average for its first token"
            )
        )
    return lines


def _total(ctx: ExplainContext) -> str:
    """How the chunks' stage passes, the pipeline's hand-overs and the host time make the prefill."""
    p, s, r = ctx.prefill, ctx.scenario, ctx.result
    pt, phase = p.trace, p.result
    if s.pp == 1:
        host = f" + {format_time(phase.host_time_s)}" if phase.host_time_s > 0 else ""
        total = (
            f"{pt.passes:,} × ({pass_sum(p)}){host} = {format_time(phase.time_s)}" if pt.passes > 1
            else f"{pass_sum(p)}{host} = {format_time(phase.time_s)}"
        )
        what = "prefill of one wave" if r.waves > 1 else "prefill — the time to first token (TTFT) —"
        return sentence(f"with {overhead_phrase(ctx, p)}, {what} takes {total}")
    take = "take" if pt.passes > 1 else "takes"
    host_wait = f" and the host's {format_time(phase.host_time_s)}" if phase.host_time_s > 0 else ""
    return sentence(
        f"with {overhead_phrase(ctx, p)}, a stage pass takes {pass_sum(p)} = {format_time(pt.pass_time_s)}; "
        f"{count(pt.passes, 'chunk')} through {s.pp} stages {take} {pt.passes:,} + {s.pp - 1} = "
        f"{pt.pipeline_passes:,} passes in a row, plus {count(s.pp - 1, 'activation transfer')} of "
        f"{format_time(stated_transfer(ctx, p))}{host_wait}: "
        f"prefill{' of one wave' if r.waves > 1 else ''} takes {pipeline_sum(ctx, p)}"
    )
