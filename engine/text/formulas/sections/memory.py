"""Memory fit: weights, KV cache and workspace per device, usable memory, the largest batch
and the waves."""

from __future__ import annotations

from html import escape

from ....core.units import format_bytes, format_factor, format_flops
from ...context import Context
from ..build import Builder, section
from ..numbers import CONSTANTS_FILE, count
from .groups import factor, has_groups, kv_cache_terms, own_layers_counted
from .positions import positions_formula
from .stage import fixed_weight_bytes


@section("memory", "Memory fit (per device)", needs=("inputs",))
def memory(sh: Builder, ctx: Context) -> tuple[str, ...]:
    r = ctx.result
    _weights(sh, ctx)
    _kv_cache(sh, ctx)
    _recurrent_state(sh, ctx)
    _workspace(sh, ctx)
    near_weights = _needed(sh, ctx)
    _largest_batch(sh, ctx, near_weights)
    notes = [_fit_note(ctx, sh.value("M"))]
    if r.waves > 1:
        sh.derive("Waves", "waves", "n<sub>waves</sub>", "waves the batch runs in, one after another",
                  "⌈{B}/{B_max}⌉", count, r.waves)
        sh.derive("Wave size", "B_w", "B<sub>w</sub>", "sequences in memory at once",
                  "⌈{B}/{waves}⌉", count, r.memory.resident_batch)
    return tuple(notes)


def _weights(sh: Builder, ctx: Context) -> None:
    fixed = fixed_weight_bytes(ctx)
    template = f"({{N_q}}·{fixed} + {{N_emb}}·{{p_16}})/({{TP}}·{{PP}}) + {{N_norm}}·{{p_16}}/{{PP}}"
    if ctx.model.moe is not None:
        template = (f"({{N_q}}·{fixed} + ({{N_r}} + {{N_emb}})·{{p_16}})/({{TP}}·{{PP}}) + {{N_norm}}·{{p_16}}/{{PP}}"
                    " + {L_moe}·{E_dev}·{N_e}·{p_w}·{EP}/({TP}·{PP})")
    sh.derive("Weights per device", "W", "W", "weights held by the busiest device", template, format_bytes,
              ctx.result.memory.weights_bytes)


def _kv_cache(sh: Builder, ctx: Context) -> None:
    """The KV cache of the whole batch at full context: per token and layer, then over the
    positions a sequence keeps."""
    m, t, mem = ctx.model, ctx.trace, ctx.result.memory
    if m.mla is not None:
        sh.leaf("r_kv", "r<sub>kv</sub>", "MLA latent rank: one compressed K/V latent per token per layer, shared "
                "by all heads (every tensor-parallel device keeps all of it)", m.mla.kv_lora_rank,
                count(m.mla.kv_lora_rank), "model")
        sh.leaf("d_rope", "d<sub>rope</sub>", "MLA rotary key width", m.mla.qk_rope_head_dim,
                count(m.mla.qk_rope_head_dim), "model")
        template = "({r_kv} + {d_rope})·{p_kv}"
    else:
        sh.leaf("h_kv_dev", "h<sub>kv,dev</sub>", f"KV heads on the busiest device: ⌈{m.n_kv_heads}/TP⌉ (KV heads "
                "are replicated once TP exceeds them)", t.kv_heads_per_device, count(t.kv_heads_per_device), "model",
                "tp")
        # K = V (DeepSeek-V4's shared head): one tensor per KV head.
        template = "{h_kv_dev}·{d_h}·{p_kv}" if m.kv_shared else "2·{h_kv_dev}·{d_h}·{p_kv}"
    sh.derive("KV cache per token per layer", "kv_layer", "kv<sub>layer</sub>",
              "bytes one token keeps per layer on the busiest device (K and V)", template, format_bytes,
              t.kv_bytes_per_token_layer if t.stored_positions > 0 or has_groups(ctx) else None)

    sh.derive("Context at the end of generation", "c", "c", "tokens of context at the last step",
              "{s_in} + {s_out}", count, t.full_context)
    plain = m.n_window_attention_layers == 0 and m.n_chunked_attention_layers == 0
    if not has_groups(ctx):
        if plain:
            sh.derive("KV cache per token", "kv_tok", "kv<sub>tok</sub>", "bytes one token keeps on the busiest "
                      "device, over the layers of its stage", "{kv_layer}·{L_kv}/{PP}", format_bytes,
                      t.kv_sequence_bytes / t.full_context)
            sh.derive("KV cache", "KV", "KV", "KV cache of the whole batch at full context, per device",
                      "{B}·{c}·{kv_tok}", format_bytes, mem.kv_cache_bytes)
        else:
            _positions_kept(sh, ctx)
            sh.derive("KV cache", "KV", "KV", "KV cache of the whole batch at full context, per device",
                      "{B}·{kv_layer}·{P_kv}/{PP}", format_bytes, mem.kv_cache_bytes)
        return
    # The attention groups keep caches of their own: each is summed beside the layers of the
    # model's own heads.
    parts = []
    if own_layers_counted(ctx):
        if plain:
            parts.append("{kv_layer}·{L_kv}·{c}")
        else:
            _positions_kept(sh, ctx)
            parts.append("{kv_layer}·{P_kv}")
    parts.extend(f"{{{key}}}" for key in kv_cache_terms(sh, ctx))
    sh.derive("KV cache", "KV", "KV", "KV cache of the whole batch at full context, per device: the layers of "
              "the model's own heads and each attention group", f"{{B}}·{factor(' + '.join(parts))}/{{PP}}", format_bytes,
              mem.kv_cache_bytes)


def _positions_kept(sh: Builder, ctx: Context) -> None:
    positions_formula(sh, ctx.model, "P_kv", "P<sub>kv</sub>", "KV entries a sequence keeps at full context, "
                      "summed over layers", "c", stored=True, engine_value=ctx.trace.stored_positions)


def _recurrent_state(sh: Builder, ctx: Context) -> None:
    """Where the model has Gated DeltaNet or Mamba-2 layers: their fixed-size state, which does
    not grow with the context."""
    t, m = ctx.trace, ctx.model
    if t.recurrent_layers == 0:
        return
    kinds = [f"{m.count_attention(kind)} {label}" for kind, label in (("deltanet", "Gated DeltaNet"),
                                                                        ("mamba", "Mamba-2"))
             if m.count_attention(kind)]
    sh.leaf("s_seq", "s<sub>seq</sub>", f"fixed-size state of one sequence on the busiest device, over its stage's "
            f"share of the {' and '.join(kinds)} layers: the recurrent matrices in FP32 and the short "
            "convolution's last inputs in 16 bits, split by heads over TP", t.state_sequence_bytes,
            format_bytes(t.state_sequence_bytes), "model", "tp", "pp")
    sh.derive("Recurrent state", "S", "S", "the recurrent layers' state of the whole batch, per device, at any "
              "context", "{B}·{s_seq}", format_bytes, ctx.result.memory.recurrent_state_bytes)
    for suffix, prefill in (("dec", False), ("pre", True)):
        value = t.recurrent_flops_per_token_prefill if prefill else t.recurrent_flops_per_token_decode
        how = "the chunked algorithm, per prompt token" if prefill else "one recurrent step, per decoding token"
        sh.leaf(f"f_rec_{suffix}", f"f<sub>rec,{suffix}</sub>", f"FLOPs of the recurrent layers beyond their "
                f"projections on the busiest device, over its stage: {how}", value, format_flops(value),
                "model", "tp", "pp")


def _workspace(sh: Builder, ctx: Context) -> None:
    """Activations and logits of one prefill pass."""
    m = ctx.model
    width = m.attention_activation_width
    sh.leaf("w_attn", "w<sub>attn</sub>", "attention activation width per token (Q, K and V)", width, count(width),
            "model")
    sh.leaf("w_ffn", "w<sub>ffn</sub>", "FFN width a token passes through, mean over layers",
            m.mean_ffn_width_per_token, count(m.mean_ffn_width_per_token), "model")
    sh.derive("Activation workspace per token", "a_tok", "a<sub>tok</sub>", "activation bytes per token in "
              "flight", "{p_a}·(2·{d} + ({w_attn} + 2·{w_ffn})/{TP})", format_bytes,
              ctx.trace.activation_bytes_per_token)
    logits = ctx.constants.logits_bytes_per_element
    sh.leaf("p_logit", "p<sub>logit</sub>", f"bytes per logit (FP32, {CONSTANTS_FILE})", logits, f"{logits:g} B")
    sh.derive("Logits per sequence", "l_seq", "ℓ<sub>seq</sub>", "logit bytes per sequence on the busiest device",
              "{V}·{p_logit}/{TP}", format_bytes, ctx.trace.logits_bytes_per_sequence)
    sh.derive("Activation workspace", "A", "A", "activations and logits of one prefill pass",
              "min({B}·{s_in}, {C})·{a_tok} + {B}·{l_seq}", format_bytes, ctx.result.memory.activation_bytes)


def _needed(sh: Builder, ctx: Context) -> str:
    """Usable memory and what the busiest device needs of it (offloaded parts apart); returns
    the key of the weights left on the device."""
    t, cls, mem = ctx.trace, ctx.cls, ctx.result.memory
    tiers = " + ".join(escape(tier.name or tier.kind) for tier in t.near_tiers)
    sh.leaf("M_cap", "M<sub>cap</sub>", f"capacity of {tiers}", mem.capacity_bytes, format_bytes(mem.capacity_bytes),
            "accelerator")
    class_name = ctx.accelerator.architecture_class
    sh.leaf("f_use", "f<sub>use</sub>", f"usable share of memory, {class_name} class", cls.usable_memory_fraction,
            format_factor(cls.usable_memory_fraction), "accelerator")
    sh.leaf("R", "R", f"runtime's own memory, {class_name} class", cls.runtime_overhead_bytes,
            format_bytes(cls.runtime_overhead_bytes), "accelerator")
    sh.derive("Usable memory", "U", "U", "memory the weights, KV cache and workspace may use", "{M_cap}·{f_use}",
              format_bytes, mem.usable_bytes)

    near_weights, near_kv = "W", "KV"
    if t.offload > 0.0:
        sh.derive("Weights on the device", "W_near", "W<sub>near</sub>", "weights left in device memory",
                  "{W}·(1 − {phi_w})", format_bytes, t.weights_near_bytes)
        near_weights = "W_near"
    if t.kv_offload > 0.0:
        sh.derive("KV cache on the device", "KV_near", "KV<sub>near</sub>", "KV cache left in device memory",
                  "{KV}·(1 − {phi_kv})", format_bytes, t.kv_cache_near_bytes)
        near_kv = "KV_near"
    state = " + {S}" if t.recurrent_layers else ""
    sh.derive("Device memory needed", "M", "M", "what the busiest device holds",
              f"{{{near_weights}}} + {{{near_kv}}}{state} + {{A}} + {{R}}", format_bytes, t.device_bytes)
    if t.offload > 0.0 or t.kv_offload > 0.0:
        far = t.far_tier
        sh.leaf("M_far", "M<sub>far</sub>", f"capacity of {escape(far.name or far.kind)}", float(far.capacity_bytes),
                format_bytes(float(far.capacity_bytes)), "accelerator")
        sh.derive("Usable far memory", "U_far", "U<sub>far</sub>", "far-tier memory offloaded data may use",
                  "{M_far}·{f_use}", format_bytes, mem.far_usable_bytes)
    return near_weights


def _largest_batch(sh: Builder, ctx: Context, near_weights: str) -> None:
    """The largest batch that fits, on the side of the workspace's kink the engine's answer
    falls on: the prompt tokens of the whole batch within one prefill chunk, or beyond it
    (workspace fixed); no fewer than none."""
    t = ctx.trace
    sh.derive("Near KV cache per sequence", "kv_seq", "kv<sub>seq</sub>", "device-memory KV cache of one sequence "
              "at full context", "{KV}/{B}" + ("·(1 − {phi_kv})" if t.kv_offload > 0 else ""), format_bytes,
              t.kv_sequence_near_bytes)
    room = f"{{U}} − {{{near_weights}}} − {{R}}"
    state = " + {s_seq}" if t.recurrent_layers else ""
    if t.max_batch_term == "chunked":
        template = f"⌊({room} − {{C}}·{{a_tok}})/({{kv_seq}} + {{l_seq}}{state})⌋"
    else:
        template = f"⌊({room})/({{kv_seq}} + {{l_seq}}{state} + {{s_in}}·{{a_tok}})⌋"
        if t.max_batch_term == "chunk":  # the prompts would no longer fit one chunk
            template = f"min({template}, ⌊{{C}}/{{s_in}}⌋)"
    if t.kv_offload > 0.0:
        sh.leaf("kv_seq_far", "kv<sub>seq,far</sub>", "far-tier KV cache of one sequence", t.kv_sequence_far_bytes,
                format_bytes(t.kv_sequence_far_bytes), "kv_offload")
        template = f"min({template}, ⌊({{U_far}} − {{W}}·{{phi_w}})/{{kv_seq_far}}⌋)"
    sh.derive("Largest batch that fits", "B_max", "B<sub>max</sub>", "most sequences whose full-context KV "
              "cache fits beside the weights", template, count, ctx.result.memory.max_batch, at_least=0)


def _fit_note(ctx: Context, used: float) -> str:
    r, mem = ctx.result, ctx.result.memory
    if not r.fits:
        return (f"Does not fit: {escape(r.fit_reason)}. Every number below is what the model computes as if the "
                "scenario ran as given.")
    if r.waves > 1:
        return (f"The weights fit but the whole batch does not (M = {format_bytes(used)} > U = "
                f"{format_bytes(mem.usable_bytes)}): the engine runs it in {r.waves} waves of at most "
                f"{mem.resident_batch:,} sequences, one after another, as serving stacks do with preemption; the "
                "step formulas below are for one wave.")
    return f"Fits: M = {format_bytes(used)} ≤ U = {format_bytes(mem.usable_bytes)}."
