"""Attention positions summed over layers, for models with sliding-window or chunked-attention
layers beside full ones (a model with full attention only needs no sum)."""

from __future__ import annotations

from ....core.model import ModelArch
from ..build import Builder
from ..numbers import count


def positions_formula(sh: Builder, m: ModelArch, key: str, symbol: str, meaning: str, context_key: str,
                      stored: bool, engine_value: float) -> None:
    """Σ over layers of the positions a sequence keeps (``stored``) or a new token reads, at the
    context of the term ``context_key``."""
    parts = []
    if m.n_full_attention_layers:
        sh.leaf("L_full", "L<sub>full</sub>", "layers attending to the whole context", m.n_full_attention_layers,
                count(m.n_full_attention_layers), "model")
        parts.append(f"{{L_full}}·{{{context_key}}}")
    if m.n_window_attention_layers:
        sh.leaf("L_win", "L<sub>win</sub>", "sliding-window layers", m.n_window_attention_layers,
                count(m.n_window_attention_layers), "model")
        sh.leaf("w_win", "w", "sliding window (tokens)", m.sliding_window, count(m.sliding_window), "model")
        parts.append(f"{{L_win}}·min({{{context_key}}}, {{w_win}})")
    if m.n_chunked_attention_layers:
        sh.leaf("L_chunk", "L<sub>chunk</sub>", "chunked-attention layers", m.n_chunked_attention_layers,
                count(m.n_chunked_attention_layers), "model")
        sh.leaf("w_chunk", "w<sub>chunk</sub>", "attention chunk (tokens)", m.attention_chunk,
                count(m.attention_chunk), "model")
        if stored:
            parts.append(f"{{L_chunk}}·min({{{context_key}}}, {{w_chunk}})")
        elif sh.value(context_key) <= m.attention_chunk:
            parts.append(f"{{L_chunk}}·{{{context_key}}}")
        else:  # past the first chunk a token attends to half a chunk on average
            parts.append("{L_chunk}·({w_chunk} + 1)/2")
    sh.derive("Positions" + (" kept" if stored else " read"), key, symbol, meaning, " + ".join(parts), count,
              engine_value)
