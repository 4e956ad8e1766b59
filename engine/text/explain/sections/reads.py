"""How a pass's reads and its compute bound it, for prefill and decode alike: where its bytes
come from and how long they take, how long its FLOPs take, and the verdict."""

from __future__ import annotations

from ....core.units import format_bandwidth, format_bytes, format_time
from ..context import ExplainContext, Phase
from ..words import percent_up, same, sentence


def memory_clause(ctx: ExplainContext, p: Phase) -> tuple[str, bool]:
    """How the pass's bytes are read and how long that takes; and whether the clause is a
    sentence of its own (offloaded or multi-tier reads) rather than a short 'at ...' phrase.

    Offloaded weights and KV cache are read from the far tier at its link rate; the rest from
    the near tiers. With one near tier the near time is bytes / (bandwidth × η_m × stack) exactly;
    with two (SRAM beside HBM) the engine's time is quoted with its effective rate."""
    t, pt = ctx.trace, p.trace
    memory_time = p.result.memory_time_s
    far = t.far_tier if t.offload > 0 or t.kv_offload > 0 else None
    far_weight_bytes = pt.far_weight_bytes_per_pass if far is not None else 0.0
    far_kv_bytes = pt.far_kv_bytes_per_pass if far is not None else 0.0
    far_bytes = pt.bytes_by_tier_per_pass[-1] if far is not None else 0.0
    near_bytes, near_time = pt.near_bytes_per_pass, pt.near_time_s
    tier = t.near_tiers[0] if len(t.near_tiers) == 1 else None
    if tier is not None and not same(near_bytes / t.near_rates_Bps[0], near_time):
        tier = None  # the formula would not reproduce the engine's time: quote the time only
    if far_bytes <= 0 and tier is not None:
        return f"at {ctx.near_rate_text(tier)} that takes {format_time(memory_time)}", False
    other = "the other " if far_bytes > 0 else ""
    if tier is not None:
        near = (
            f"{other}{format_bytes(near_bytes)} come from {tier.name} at {ctx.near_rate_text(tier)} in "
            f"{format_time(near_time)}"
        )
    else:
        slowest = t.near_tiers[-1]
        near = (
            f"{other}{format_bytes(near_bytes)} come from {ctx.tier_names()} (weights fill the fastest tier "
            f"first, then the KV cache) in {format_time(near_time)}, an effective "
            f"{format_bandwidth(near_bytes / near_time)} ({slowest.name} alone: {ctx.near_rate_text(slowest)})"
        )
    if far is None or far_bytes <= 0:
        return near, True
    parts = []
    if far_weight_bytes > 0:
        parts.append(f"{format_bytes(far_weight_bytes)} of the weights (the {percent_up(t.offload)} offloaded)")
    if far_kv_bytes > 0:
        parts.append(f"{format_bytes(far_kv_bytes)} of the KV cache (the {percent_up(t.kv_offload)} offloaded)")
    return (
        f"{' and '.join(parts)} stream from "
        f"{far.name} at {ctx.far_rate_text(far)}, which takes {format_time(pt.far_time_s)}; {near}: "
        f"{format_time(memory_time)} of memory time"
    ), True


def verdict(p: Phase) -> str:
    phase = p.result
    if phase.bound in ("compute", "memory"):
        return f"{phase.bound}-bound"
    larger = "compute" if phase.compute_time_s >= phase.memory_time_s else "memory"
    if phase.bound == "communication":
        what = "communication exceeds"
    elif phase.host_time_s > 0:
        # The engine's bound counts the host time spread over the phase's stage passes.
        what = (
            f"the fixed overheads ({format_time(phase.overhead_time_s)} of per-layer overhead and "
            f"{format_time(p.trace.host_per_pipeline_pass_s)} of host time per pass) exceed"
        )
    else:
        what = "the fixed per-layer overhead exceeds"
    return f"{larger} is the larger of the two, but {what} both: {phase.bound}-bound"


def rates_and_verdict(ctx: ExplainContext, p: Phase, reads: str, work: str) -> list[str]:
    """'<reads>; at <bw> × η that takes T, while <work> would take T' at <peak> × η — bound'."""
    clause, long_form = memory_clause(ctx, p)
    compute = format_time(p.result.compute_time_s)
    rate_formula = same(p.trace.flops_per_pass / ctx.trace.compute_rate_flops, p.result.compute_time_s)
    at_peak = f" at {ctx.compute_rate_text()}" if rate_formula else ""
    if long_form:
        return [
            sentence(reads),
            sentence(clause),
            sentence(f"{work} would take {compute}{at_peak} — {verdict(p)}"),
        ]
    return [sentence(f"{reads}; {clause}, while {work} would take {compute}{at_peak} — {verdict(p)}")]
