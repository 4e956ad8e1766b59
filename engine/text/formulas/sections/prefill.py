"""Prefill and the time to first token: the chunks, causal attention over each prompt, a
chunk's FLOPs and bytes, its pass time, the prefill and the TTFT."""

from __future__ import annotations

from ....core.units import format_bytes, format_flops, format_time
from ...context import Context
from ..build import Builder, section
from ..numbers import count, large
from .communication import communication, point_to_point
from .groups import braced, has_groups, own_layers_counted, prefill_terms
from .moe import expert_formulas
from .stage import activation_traffic, memory_time, pass_time, recurrent_state_traffic


@section("prefill", "Prefill and time to first token", needs=("decode", "step"))
def prefill(sh: Builder, ctx: Context) -> tuple[str, ...]:
    t = ctx.trace
    _chunk(sh, ctx)
    _time(sh, ctx)
    notes = []
    chunks = t.prefill.passes
    if chunks > 1:
        notes.append(f"Chunked prefill: the {count(t.prompt_tokens)} prompt tokens run as {chunks:,} chunks of at "
                     f"most {ctx.constants.prefill_chunk_tokens:,}; each chunk reads the weights again and re-reads "
                     "the KV cache of earlier chunks of its prompts, which KV<sub>pre</sub> takes from the engine.")
    notes.append(f"Prefill is {ctx.result.prefill.bound}-bound.")
    return tuple(notes)


def _chunk(sh: Builder, ctx: Context) -> None:
    """The chunks, causal attention over the prompts, and one chunk's FLOPs and bytes."""
    m, t = ctx.model, ctx.trace
    sh.derive("Prefill chunks", "n_ch", "n<sub>ch</sub>", "forward passes the prompts are prefilled in",
              "⌈{B_w}·{s_in}/{C}⌉", count, t.prefill.passes)
    sh.derive("Tokens per chunk", "T", "T", "prompt tokens in one chunk", "{B_w}·{s_in}/{n_ch}", count,
              t.prefill.tokens_per_pass)
    if m.n_window_attention_layers == 0 and m.n_chunked_attention_layers == 0:
        sh.derive("Causal positions", "P_pre", "P<sub>pre</sub>", "Σ over a prompt's tokens of the positions each "
                  "attends to, over layers", "{L_kv}·{s_in}·({s_in} + 1)/2", large,
                  t.prompt_positions)
    else:
        sh.leaf("P_pre", "P<sub>pre</sub>", "Σ over a prompt's tokens of the positions each attends to, over "
                "layers: s(s+1)/2 per full layer, capped at the window or chunk on the others", t.prompt_positions,
                large(t.prompt_positions), "input_len", "model")
    if m.mla is not None:
        mla = m.mla
        sh.leaf("d_nope", "d<sub>nope</sub>", "MLA non-rotary key width per head", mla.qk_nope_head_dim,
                count(mla.qk_nope_head_dim), "model")
        sh.leaf("d_v", "d<sub>v</sub>", "MLA value width per head", mla.v_head_dim, count(mla.v_head_dim), "model")
        attention = "2·{B_w}·{h_dev}·({d_nope} + {d_rope} + {d_v})·{P_pre}/{PP}"
    else:
        attention = "4·{B_w}·{h_dev}·{d_h}·{P_pre}/{PP}"
    meaning = "FLOPs of causal attention scores and values over every prompt, on the busiest device"
    if has_groups(ctx):
        group_flops = braced(prefill_terms(sh, ctx))
        if own_layers_counted(ctx):
            attention += f" + {{B_w}}·{group_flops}/{{PP}}"
        else:
            attention = f"{{B_w}}·{group_flops}/{{PP}}"
        meaning += ", and each attention group's over the entries it attends, with its indexer's scoring"
    if t.recurrent_layers:
        attention += " + {B_w}·{s_in}·{f_rec_pre}"
        meaning += ", and the recurrent layers' chunked algorithm over every prompt token"
    sh.derive("Attention FLOPs of the prefill", "F_att_pre_all", "F<sub>att,prefill</sub>", meaning, attention,
              format_flops)
    flops = "2·{B_w}·{s_in}·{N_fix}/({TP}·{PP}) + 2·{B_w}·{d}·{V}/({TP}·{PP}) + {F_att_pre_all}"
    weights = "{W_read}"
    if m.moe is not None:
        flops += " + {n_ch}·" + expert_formulas(sh, ctx, "pre", "T", "pre")
        weights = "{W_read} + {W_e_pre}"
    sh.derive("Prefill FLOPs", "F_pre_all", "F<sub>prefill</sub>", "FLOPs of the whole prefill on the busiest "
              "device (logits only for each prompt's last token)", flops, format_flops,
              ctx.result.prefill.flops_per_device)
    sh.derive("FLOPs per chunk", "F_pre", "F<sub>pre</sub>", "FLOPs of one chunk", "{F_pre_all}/{n_ch}", format_flops,
              t.prefill.flops_per_pass)
    sh.derive("Attention FLOPs per chunk", "F_att_pre", "F<sub>att,pre</sub>", "attention FLOPs of one chunk",
              "{F_att_pre_all}/{n_ch}", format_flops, t.prefill.attention_flops_per_pass)
    sh.derive("Weights read per chunk", "W_pre", "W<sub>pre</sub>", "every chunk reads the weights again",
              weights, format_bytes, t.prefill.weight_bytes_per_pass)
    kv_chunk = t.prefill.kv_bytes_per_pass
    sh.leaf("KV_pre", "KV<sub>pre</sub>", "KV cache per chunk, as the engine computes it: the chunk's new entries "
            "written, and earlier chunks of the same prompts re-read", kv_chunk, format_bytes(kv_chunk),
            "batch", "input_len", "kv_precision", "model", "tp", "pp")
    activation_traffic(sh, ctx, "pre", "T", "pre")
    # Each prompt's state is read and written once per piece the chunks cut it into.
    state = recurrent_state_traffic(sh, ctx, "pre", "2·{B_w}·⌈{s_in}/{C}⌉·{s_seq}/{n_ch}", "pre")
    sh.derive("Bytes per chunk", "Q_pre", "Q<sub>pre</sub>", "bytes one chunk moves",
              "{W_pre} + {KV_pre} + {Q_act_pre}" + (f" + {{{state}}}" if state else ""), format_bytes,
              t.prefill.bytes_per_pass)


def _time(sh: Builder, ctx: Context) -> None:
    """A chunk's pass time, the prefill of a wave, and the time to first token."""
    r = ctx.result
    pre = r.prefill
    memory_time(sh, ctx, "pre", "pre", "W_pre", "KV_pre")
    communication(sh, ctx, "pre", "T", "pre")
    point_to_point(sh, ctx, "pre", "T", "pre")
    pass_time(sh, ctx, "pre", "pre", "KV_pre", "S_pre" if ctx.trace.recurrent_layers else "")
    sh.derive("Host time of the prefill", "t_host_pre", "t<sub>host,pre</sub>", "the serving stack's host work, "
              "once per forward step (a chunk) and once per prompt, during which the devices wait",
              "{n_ch}·{tau_step} + {B_w}·{tau_seq}", format_time, pre.host_time_s)
    if ctx.scenario.pp > 1:
        template = "({n_ch} + {PP} − 1)·{t_pass_pre} + ({PP} − 1)·{t_p2p_pre} + {t_host_pre}"
    else:
        template = "{n_ch}·{t_pass_pre} + {t_host_pre}"
    sh.derive("Prefill of one wave" if r.waves > 1 else "Prefill time", "t_prefill", "t<sub>prefill</sub>",
              "time until the wave's first tokens", template, format_time, pre.time_s)
    if r.waves > 1:
        sh.derive("One wave", "t_wave", "t<sub>wave</sub>", "prefill and decode of one wave",
                  "{t_prefill} + ({s_out} − 1)·{ITL}", format_time)
        sh.derive("Time to first token", "TTFT", "TTFT", "mean over requests: later waves wait for earlier ones",
                  "{t_prefill} + ({waves} − 1)/2·{t_wave}", format_time, r.ttft_s)
    else:
        sh.derive("Time to first token", "TTFT", "TTFT", "the prefill of the whole batch", "{t_prefill}",
                  format_time, r.ttft_s)
