"""The attention groups in words (``Trace.attention_groups``): what each kind of layer keeps at
the full context, for the memory section, and what a decoding token reads and computes in it at
the mean context, for the decode section. Bytes and FLOPs are one sequence's over all the
model's layers of the kind, on the busiest device's share of the heads."""

from __future__ import annotations

from ....core.units import format_bytes, format_flops
from ....physics.reference import GroupTrace
from ..context import ExplainContext
from ..words import amount, count, sentence

NAMES = {"global": "global", "sparse": "sparse", "compressed": "compressed", "compressed_sparse": "compressed sparse"}


def _layers(g: GroupTrace) -> str:
    return f"the {count(g.layers, NAMES[g.kind] + ' layer')}"


def _kept(g: GroupTrace) -> str:
    """How a layer of the group keeps its entries."""
    if g.ratio > 1:
        kept = f"one entry per {g.ratio:,} tokens"
        if g.window:
            kept += f" and the last {g.window:,} tokens uncompressed"
        return kept
    return "an entry for every token"


def _own_layers(ctx: ExplainContext) -> str:
    """The model's layers of its own heads, beside its groups: ', beside N sliding-window
    layers ...' or ''."""
    m = ctx.model
    parts = []
    if m.n_full_attention_layers:
        parts.append(f"{m.n_full_attention_layers:,} full-attention layers over the whole context")
    if m.n_window_attention_layers:
        parts.append(f"{m.n_window_attention_layers:,} sliding-window layers, each keeping at most the last "
                     f"{m.sliding_window:,} tokens")
    if m.n_chunked_attention_layers:
        parts.append(f"{m.n_chunked_attention_layers:,} chunked-attention layers, each keeping at most "
                     f"{m.attention_chunk:,} tokens")
    return f"; the other layers are {' and '.join(parts)}" if parts else ""


def _device(ctx: ExplainContext) -> str:
    """Where the bytes are: one pipeline stage holds only its share of the layers, which the
    stages sentence says."""
    return " on the busiest device" if ctx.scenario.tp > 1 and ctx.scenario.pp == 1 else ""


def _stages(ctx: ExplainContext) -> str:
    pp = ctx.scenario.pp
    return f" (the {pp} pipeline stages each keep their layers' share)" if pp > 1 else ""


def kept_sentences(ctx: ExplainContext) -> list[str]:
    """What each group keeps per sequence at the full context."""
    t, m = ctx.trace, ctx.model
    if not t.attention_groups:
        return []
    full = f"{t.full_context:,}"
    lines = []
    for i, g in enumerate(t.attention_groups):
        lead = f"{m.name}'s " if i == 0 else "its "
        layers = count(g.layers, NAMES[g.kind] + " layer")
        if g.kind == "global":
            shape = m.global_attention
            how = (f"attend the whole context with heads of their own ({count(shape.n_kv_heads, 'KV head')} of "
                   f"{shape.head_dim}{', K = V: one tensor' if shape.k_eq_v else ''})")
        elif g.kind == "sparse":
            how = f"attend only the top {g.top_k:,} tokens an indexer picks, and keep {_kept(g)}"
        elif g.kind == "compressed_sparse":
            how = f"keep {_kept(g)} and attend the top {g.top_k:,} compressed entries an indexer picks, and the window"
        else:
            how = f"keep {_kept(g)} and attend all of them"
        text = (f"{lead}{layers} {how}: at the full context of {full} tokens each keeps "
                f"{amount(g.stored_entries)} entries of {format_bytes(g.entry_bytes)}")
        if g.index_stride:
            text += (f" and {amount(g.stored_index_keys)} indexer keys of {format_bytes(g.index_key_bytes)}, "
                     f"{format_bytes(g.kv_sequence_bytes)} per sequence over the layers{_device(ctx)}, "
                     f"{format_bytes(g.index_sequence_bytes)} of it the indexer's keys")
        else:
            text += f", {format_bytes(g.kv_sequence_bytes)} per sequence over the layers{_device(ctx)}"
        if i == len(t.attention_groups) - 1:
            text += _own_layers(ctx) + _stages(ctx)
        lines.append(sentence(text))
    return lines


def read_sentences(ctx: ExplainContext) -> list[str]:
    """What a decoding token reads and computes in each group at the mean context."""
    t = ctx.trace
    lines = []
    for g in t.attention_groups:
        context = f"at the mean context of {amount(t.mean_decode_context)} tokens, " if not lines else ""
        if g.attended_entries < g.context_entries:
            text = (f"{context}{_layers(g)} read {amount(g.attended_entries)} of {amount(g.context_entries)} "
                    f"cached entries each step ({format_bytes(g.entry_read_bytes)} per sequence{_device(ctx)})")
        else:
            text = (f"{context}{_layers(g)} read all {amount(g.attended_entries)} cached entries each step "
                    f"({format_bytes(g.entry_read_bytes)} per sequence{_device(ctx)})")
        if g.index_stride:
            text += (f", plus the indexer's {format_bytes(g.index_read_bytes)} of keys, every one of which it "
                     f"scores: {format_flops(g.index_flops)} of the layers' {format_flops(g.decode_flops)}")
        else:
            text += f", and compute {format_flops(g.decode_flops)}"
        lines.append(sentence(text))
    return lines
