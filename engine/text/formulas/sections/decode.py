"""The decode step: one pass's sequences, context and attention, its FLOPs and the bytes it
moves."""

from __future__ import annotations

from ....core.units import format_bytes, format_flops
from ...context import Context
from ..build import Builder, section
from ..numbers import count
from .groups import braced, decode_terms, factor, has_groups, own_layers_counted
from .moe import expert_formulas
from .positions import positions_formula
from .stage import activation_traffic, dense_read, recurrent_state_traffic


def batch_terms(sh: Builder, ctx: Context) -> None:
    """The wave size and the decode micro-batches (PP > 1 keeps PP micro-batches in flight)."""
    s, passes = ctx.scenario, ctx.trace.decode.passes
    if ctx.result.waves == 1:
        sh.leaf("B_w", "B", "batch: sequences per replica, prompted together", s.batch, count(s.batch), "batch")
    sh.leaf("m", "m", "decode micro-batches in flight: min(B, PP)", passes, count(passes), "batch", "pp")


@section("decode", "Decode step: FLOPs and bytes", needs=("memory",))
def decode(sh: Builder, ctx: Context) -> tuple[str, ...]:
    m, r, t = ctx.model, ctx.result, ctx.trace
    batch_terms(sh, ctx)
    sh.derive("Sequences per pass", "b", "b", "sequences in one decode pass (one micro-batch)", "{B_w}/{m}", count,
              t.decode.sequences_per_pass)
    sh.derive("Mean context", "c_mean", "c<sub>mean</sub>", "context of the average decode step: halfway through "
              "the generation", "{s_in} + {s_out}/2", count, t.mean_decode_context)
    if m.n_window_attention_layers == 0 and m.n_chunked_attention_layers == 0:
        sh.derive("Positions read", "P_dec", "P<sub>dec</sub>", "KV entries a new token reads, summed over layers",
                  "{L_kv}·{c_mean}", count, t.decode_attended_positions)
    else:
        positions_formula(sh, m, "P_dec", "P<sub>dec</sub>", "KV entries a new token reads, summed over layers",
                          "c_mean", stored=False, engine_value=t.decode_attended_positions)
    attention = ("2·{b}·{h_dev}·(2·{r_kv} + {d_rope})·{P_dec}/{PP}" if m.mla is not None
                 else "4·{b}·{h_dev}·{d_h}·{P_dec}/{PP}")
    meaning = "FLOPs of attention scores and values over the context, in one decode pass on the busiest device"
    kv = "{b}·{kv_layer}·({P_dec} + {L_kv})/{PP}"
    kv_meaning = "each sequence reads its KV cache at the mean context and writes one new token's entries"
    if has_groups(ctx):
        group_bytes, group_flops = decode_terms(sh, ctx)
        own = own_layers_counted(ctx)
        attention = (f"{attention} + " if own else "") + f"{{b}}·{braced(group_flops)}/{{PP}}"
        kv_parts = (["{kv_layer}·({P_dec} + {L_kv})"] if own else []) + [f"{{{k}}}" for k in group_bytes]
        kv = f"{{b}}·{factor(' + '.join(kv_parts))}/{{PP}}"
        meaning += ", each attention group's over the entries it attends, with its indexer's scoring"
        kv_meaning += ", each attention group the entries it attends and every indexer key"
    if t.recurrent_layers:
        attention += " + {b}·{f_rec_dec}"
        meaning += ", and the recurrent layers' one step of their state"
    sh.derive("Attention FLOPs per decode pass", "F_att_dec", "F<sub>att,dec</sub>", meaning, attention,
              format_flops, t.decode.attention_flops_per_pass)
    flops = "2·{b}·{N_fix}/({TP}·{PP}) + 2·{b}·{d}·{V}/({TP}·{PP}) + {F_att_dec}"
    dense_read(sh, ctx)
    weights = "{W_read}"
    if m.moe is not None:
        with sh.shown_in("moe"):
            flops += " + " + expert_formulas(sh, ctx, "dec", "b", "dec")
        weights = "{W_read} + {W_e_dec}"
    sh.derive("Decode FLOPs per pass", "F_dec", "F<sub>dec</sub>", "FLOPs of one decode pass on the busiest "
              "device: linear layers, LM head, attention over the context", flops, format_flops,
              t.decode.flops_per_pass)
    sh.derive("Weights read per decode pass", "W_dec", "W<sub>dec</sub>", "weight bytes one decode pass reads",
              weights, format_bytes, t.decode.weight_bytes_per_pass)
    sh.derive("KV cache read and written per pass", "KV_dec", "KV<sub>dec</sub>",
              kv_meaning, kv, format_bytes, t.decode.kv_bytes_per_pass)
    activation_traffic(sh, ctx, "dec", "b", "dec")
    state = recurrent_state_traffic(sh, ctx, "dec", "2·{b}·{s_seq}", "dec")
    sh.derive("Bytes per decode pass", "Q_dec", "Q<sub>dec</sub>", "bytes one decode pass moves",
              "{W_dec} + {KV_dec} + {Q_act_dec}" + (f" + {{{state}}}" if state else ""), format_bytes,
              t.decode.bytes_per_pass)
    notes = []
    passes = t.decode.passes
    if passes > 1:
        notes.append(f"With PP = {ctx.scenario.pp}, a decode step moves m = {passes} micro-batches of b = "
                     f"{count(sh.value('b'))} sequences through the stages; the formulas are for one micro-batch "
                     "pass on the busiest device.")
    if r.waves > 1:
        notes.append(f"The batch runs in {r.waves} waves: B<sub>w</sub> = {r.memory.resident_batch:,} sequences are "
                     "in memory at once.")
    return tuple(notes)
