"""Memory: what one device holds, whether it fits, the largest batch and the waves."""

from __future__ import annotations

from ....core import codes
from ....core.units import format_bytes
from ..context import ExplainContext
from ..words import count, percent_up, sentence
from . import groups


def sentences(ctx: ExplainContext) -> list[str]:
    r = ctx.result
    lines = _offloaded_kv(ctx) if ctx.trace.kv_offload > 0 and r.fits else []
    if not r.fits:
        lines.extend(_not_fitting(ctx))
    elif r.waves > 1:
        lines.extend(_waves(ctx))
    else:
        lines.extend(_fits(ctx))
    lines.extend(_kv_layout(ctx))
    lines.extend(groups.kept_sentences(ctx))
    lines.extend(_recurrent_state(ctx))
    return lines


def _state(ctx: ExplainContext) -> str:
    """' + recurrent state X' in a sum of what a device holds, for a model with such layers."""
    state = ctx.result.memory.recurrent_state_bytes
    return f" + recurrent state {format_bytes(state)}" if ctx.trace.recurrent_layers else ""


def _recurrent_state(ctx: ExplainContext) -> list[str]:
    """What linear-attention and state-space layers keep instead of a KV cache."""
    t, m = ctx.trace, ctx.model
    if t.recurrent_layers == 0:
        return []
    kinds = " and ".join(f"{count(m.count_attention(kind), 'layer')} of {label}"
                         for kind, label in (("deltanet", "Gated DeltaNet linear attention"),
                                             ("mamba", "Mamba-2 state space")) if m.count_attention(kind))
    kv = t.kv_layers
    grows = (f"only the KV cache of its {count(kv, 'attention layer')} grows with the context" if kv
             else "nothing it keeps grows with the context")
    return [
        sentence(
            f"{m.name} has {kinds}: each keeps a fixed-size state per sequence instead of a KV cache, "
            f"{format_bytes(t.state_sequence_bytes)} per sequence per device (FP32 recurrent matrices and the short "
            f"convolution's last inputs), which every decode step reads and writes once; {grows}"
        )
    ]


def _usable(ctx: ExplainContext) -> str:
    mem = ctx.result.memory
    return (
        f"{format_bytes(mem.usable_bytes)} usable ({ctx.cls.usable_memory_fraction * 100:g}% of the "
        f"{format_bytes(mem.capacity_bytes)} of {ctx.tier_names()})"
    )


def _weights(ctx: ExplainContext) -> str:
    s, mem = ctx.scenario, ctx.result.memory
    share = f" (its 1/{s.tp * s.pp} share)" if s.tp * s.pp > 1 else ""
    weights = f"weights {format_bytes(ctx.trace.weights_near_bytes)}{share}"
    if mem.weights_far_bytes > 0:
        weights += f" on the device (another {format_bytes(mem.weights_far_bytes)} offloaded to {ctx.trace.far_tier.name})"
    return weights


def _runtime(ctx: ExplainContext) -> str:
    overhead = ctx.result.memory.overhead_bytes
    return f" + runtime {format_bytes(overhead)}" if overhead > 0 else ""


def _per_token(ctx: ExplainContext) -> str:
    t = ctx.trace
    return f"{format_bytes(t.kv_sequence_bytes / t.full_context)} per token per device"


def _offloaded_kv(ctx: ExplainContext) -> list[str]:
    t, mem = ctx.trace, ctx.result.memory
    beside = (
        f", beside {format_bytes(mem.weights_far_bytes)} of offloaded weights," if mem.weights_far_bytes > 0
        else ""
    )
    return [
        sentence(
            f"{percent_up(t.kv_offload)} of the KV cache ({format_bytes(mem.kv_cache_far_bytes)}) "
            f"is kept in {t.far_tier.name}{beside} of the {format_bytes(mem.far_usable_bytes)} usable there; "
            f"only the other {format_bytes(t.kv_cache_near_bytes)} counts against device memory"
        )
    ]


def _waves(ctx: ExplainContext) -> list[str]:
    r, s, t, mem = ctx.result, ctx.scenario, ctx.trace, ctx.result.memory
    return [
        sentence(
            f"the weights fit, the whole batch does not: per device, {_weights(ctx)}{_runtime(ctx)} leave "
            f"{format_bytes(t.kv_room_bytes)} of {_usable(ctx)} for the KV cache and activations, but the KV cache "
            f"of all {s.batch:,} sequences at the full context of {t.full_context:,} tokens would need "
            f"{format_bytes(mem.kv_cache_bytes)} ({_per_token(ctx)})"
            + (f", and their recurrent state {format_bytes(mem.recurrent_state_bytes)}" if t.recurrent_layers else "")
        ),
        sentence(
            f"the largest batch that fits is {mem.max_batch:,}, so the batch runs in {r.waves} waves of up to "
            f"{mem.resident_batch:,} sequences, one after the other, as serving stacks do with preemption: "
            f"{r.waves}× the time of one wave — this cliff is where real systems lose 5–10×"
        ),
    ]


def _fits(ctx: ExplainContext) -> list[str]:
    s, t, mem = ctx.scenario, ctx.trace, ctx.result.memory
    kv_where = " on the device" if mem.kv_cache_far_bytes > 0 else ""
    return [
        sentence(
            f"fits: per device, {_weights(ctx)} + KV cache {format_bytes(t.kv_cache_near_bytes)}{kv_where} "
            f"({count(s.batch, 'sequence')} at the full context of {t.full_context:,} tokens, {_per_token(ctx)})"
            f"{_state(ctx)} + activations {format_bytes(mem.activation_bytes)}{_runtime(ctx)} = "
            f"{format_bytes(t.device_bytes)} of {_usable(ctx)}"
        ),
        sentence(
            f"the largest batch that fits is {mem.max_batch:,}: each further sequence needs "
            f"{format_bytes(t.kv_sequence_bytes)} of KV cache at full context"
            + (f" and {format_bytes(t.state_sequence_bytes)} of recurrent state" if t.recurrent_layers else "")
        ),
    ]


def _kv_layout(ctx: ExplainContext) -> list[str]:
    """How tensor parallelism splits the KV cache, or why it cannot."""
    s, m = ctx.scenario, ctx.model
    if m.mla is not None:
        return [
            sentence(
                f"{m.name} uses multi-head latent attention: its KV cache keeps one compressed latent of "
                f"{m.kv_elements_per_token_per_layer} elements per token per layer, shared by all heads, "
                "so every tensor-parallel device keeps all of it"
            )
        ]
    if s.tp > 1 and s.tp <= m.n_kv_heads:
        return [
            sentence(f"tensor parallelism splits the KV cache by its {m.n_kv_heads} KV heads over the {s.tp} devices")
        ]
    return []


def _not_fitting(ctx: ExplainContext) -> list[str]:
    """Why the scenario does not fit, what would make one sequence fit, and what the numbers
    below then mean."""
    r, s, t, mem = ctx.result, ctx.scenario, ctx.trace, ctx.result.memory
    code = r.fit_code
    usable = (
        f"{format_bytes(mem.usable_bytes)} usable ({ctx.cls.usable_memory_fraction * 100:g}% of "
        f"{format_bytes(mem.capacity_bytes)})"
    )
    share = f" per device (its 1/{s.tp * s.pp} share)" if s.tp * s.pp > 1 else ""
    near_weights = format_bytes(t.weights_near_bytes)
    if code == codes.FIT_WEIGHTS_DO_NOT_FIT:
        runtime = f", of which the runtime takes {format_bytes(mem.overhead_bytes)}" if mem.overhead_bytes else ""
        reason = (
            f"does not fit: the weights need {near_weights}{share} but one {ctx.accelerator.name} has "
            f"{usable}{runtime}"
        )
    elif code == codes.FIT_KV_DOES_NOT_FIT_ONE_SEQUENCE:
        reason = (
            f"does not fit: the weights fit ({near_weights}{share} of {format_bytes(mem.usable_bytes)} usable), but "
            f"the KV cache of even one sequence at its full context of {t.full_context:,} tokens needs "
            f"{format_bytes(t.kv_sequence_bytes)}, more than is left beside them"
        )
    elif code == codes.FIT_FAR_TIER_TOO_SMALL:
        parts = []
        if mem.weights_far_bytes > 0:
            parts.append(f"the {format_bytes(mem.weights_far_bytes)} of offloaded weights")
        if t.kv_offload > 0:
            parts.append(f"the {format_bytes(t.kv_sequence_far_bytes)} of offloaded KV cache of one sequence")
        offloaded = " and ".join(parts)
        where = t.far_tier.name if t.far_tier else "the far tier"
        reason = f"does not fit: {offloaded} exceed the {format_bytes(mem.far_usable_bytes)} usable in {where}"
    elif code == codes.FIT_COMPUTE_UNPUBLISHED:
        reason = (
            f"fits in memory (the weights take {near_weights}{share} of {usable}), but no time can be stated: "
            + (ctx.accelerator.compute_unpublished.rstrip('.') or
               f"no {r.compute_precision.upper()} or wider compute peak of the {ctx.accelerator.name} is published, "
               f"and a narrower format's rate is not borrowed")
        )
    else:
        reason = f"does not run as laid out: {codes.FIT_REASONS[code]}"
    lines = [sentence(reason)]
    if code in (codes.FIT_WEIGHTS_DO_NOT_FIT, codes.FIT_KV_DOES_NOT_FIT_ONE_SEQUENCE, codes.FIT_FAR_TIER_TOO_SMALL):
        options = []
        if r.tp_needed and r.tp_needed != s.tp:
            options.append(f"TP={r.tp_needed} ({count(r.tp_needed * s.pp * s.dp, 'device')})")
        if r.offload_needed > 0.0 and t.far_tier is not None:
            options.append(f"offloading {percent_up(r.offload_needed)} of the weights to {t.far_tier.name}")
        if options:
            lines.append(sentence(f"{' or '.join(options)} would fit one sequence at full context"))
        else:
            lines.append(sentence("neither more tensor parallelism nor offloading makes one sequence fit"))
    lines.append(sentence("every number below is hypothetical: what the model computes as if the scenario ran as given"))
    return lines
