"""The terms every section uses: the scenario's controls, the model's shape, the accelerator's
figures and the class constants, and the few facts of the engine's layout (heads, KV heads and
experts per device) the formulas take as given."""

from __future__ import annotations

from html import escape

from ....core.precision import bytes_per_element
from ....core.units import format_bandwidth, format_factor, format_flop_rate, format_time
from ...context import Context
from ..build import Builder, section
from ..numbers import CONSTANTS_FILE, count, large, percent, precision_label


@section("inputs", None)
def inputs(sh: Builder, ctx: Context) -> tuple[str, ...]:
    _scenario(sh, ctx)
    _model(sh, ctx)
    _accelerator(sh, ctx)
    _parameter_groups(sh, ctx)
    return ()


def _scenario(sh: Builder, ctx: Context) -> None:
    """The controls: workload, formats, layout and offloads (as they apply)."""
    s, m, t = ctx.scenario, ctx.model, ctx.trace
    p_w = bytes_per_element(s.weight_precision)
    sh.leaf("B", "B", "batch: sequences per replica, prompted together", s.batch, count(s.batch), "batch")
    sh.leaf("s_in", "s<sub>in</sub>", "input (prompt) tokens per sequence", s.input_len, count(s.input_len), "input_len")
    sh.leaf("s_out", "s<sub>out</sub>", "output tokens per sequence", s.output_len, count(s.output_len), "output_len")
    sh.leaf("p_w", "p<sub>w</sub>", f"bytes per weight of the linear layers ({precision_label(s.weight_precision)})",
            p_w, f"{p_w:g} B", "weight_precision")
    p_16 = t.wide_bytes_per_element
    sh.leaf("p_16", "p<sub>16</sub>", "bytes per element of embeddings, LM head, norms and routers (kept in 16 bits "
            "unless the weights are wider)", p_16, f"{p_16:g} B", "weight_precision")
    p_a = bytes_per_element(s.activation_precision)
    sh.leaf("p_a", "p<sub>a</sub>", f"bytes per activation element ({precision_label(s.activation_precision)})", p_a,
            f"{p_a:g} B", "activation_precision")
    p_kv = bytes_per_element(s.kv_precision)
    sh.leaf("p_kv", "p<sub>kv</sub>", f"bytes per KV-cache element ({precision_label(s.kv_precision)})", p_kv,
            f"{p_kv:g} B", "kv_precision")
    for key, label, value in (("TP", "tensor-parallel devices", s.tp), ("PP", "pipeline stages", s.pp),
                              ("DP", "data-parallel replicas", s.dp)):
        sh.leaf(key, key, label, value, count(value), key.lower())
    sh.leaf("EP", "EP", "expert-parallel devices" + (" (a dense model has none to spread)" if m.moe is None else ""),
            t.effective_ep, count(t.effective_ep), "ep")
    sh.leaf("phi_w", "φ<sub>w</sub>", "share of the weights offloaded to the far tier", t.offload, percent(t.offload),
            "offload")
    sh.leaf("phi_kv", "φ<sub>kv</sub>", "share of the KV cache kept in the far tier", t.kv_offload,
            percent(t.kv_offload), "kv_offload")


def _model(sh: Builder, ctx: Context) -> None:
    """The model's shape, and its heads on the busiest device."""
    m, t = ctx.model, ctx.trace
    sh.leaf("L", "L", f"layers of {escape(m.name)}", m.n_layers, count(m.n_layers), "model")
    sh.leaf("d", "d", "hidden size", m.hidden_size, count(m.hidden_size), "model")
    sh.leaf("V", "V", "vocabulary size", m.vocab_size, count(m.vocab_size), "model")
    sh.leaf("h", "h", "attention (query) heads", m.n_heads, count(m.n_heads), "model")
    sh.leaf("h_dev", "h<sub>dev</sub>", "query heads on the busiest device: ⌈h/TP⌉", t.heads_per_device,
            count(t.heads_per_device), "model", "tp")
    sh.leaf("d_h", "d<sub>h</sub>", "head dimension", m.head_dim, count(m.head_dim), "model")
    sh.leaf("L_kv", "L<sub>kv</sub>", "layers that keep a KV cache", t.kv_layers, count(t.kv_layers), "model")


def _accelerator(sh: Builder, ctx: Context) -> None:
    """The accelerator's figures and its class's constants."""
    a, cls, t = ctx.accelerator, ctx.cls, ctx.trace
    sh.leaf("pi", "π", f"dense peak of {escape(a.name)} at {t.compute_precision.upper()} (the format the products "
            "run in)", t.peak_flops, format_flop_rate(t.peak_flops, trim=True), "accelerator", "weight_precision",
            "activation_precision")
    sh.leaf("eta_c", "η<sub>c</sub>", f"compute efficiency of the {a.architecture_class} class",
            cls.compute_efficiency, format_factor(cls.compute_efficiency), "accelerator")
    sh.leaf("eta_m", "η<sub>m</sub>", f"memory efficiency of the {a.architecture_class} class",
            cls.memory_efficiency, format_factor(cls.memory_efficiency), "accelerator")
    sh.leaf("sigma", "σ", f"serving-stack factor of {escape(a.name)} (1 = the reference stack)", ctx.stack,
            format_factor(ctx.stack), "accelerator")
    main = t.ridge_tier
    sh.leaf("beta", "β", f"bandwidth of {escape(main.name or main.kind)}", main.effective_bandwidth_Bps,
            format_bandwidth(main.effective_bandwidth_Bps, trim=True), "accelerator")
    far = t.far_tier
    if far is not None:
        sh.leaf("beta_far", "β<sub>far</sub>", f"bandwidth to the far tier ({escape(far.name or far.kind)}), "
                "memory or link whichever is slower", far.effective_bandwidth_Bps,
                format_bandwidth(far.effective_bandwidth_Bps, trim=True), "accelerator")
        sh.leaf("eta_l", "η<sub>link</sub>", f"link efficiency of the {a.architecture_class} class",
                cls.link_efficiency, format_factor(cls.link_efficiency), "accelerator")
    sh.leaf("tau", "τ<sub>layer</sub>", f"fixed overhead per layer per pass, {a.architecture_class} class",
            t.layer_overhead_floor_s, format_time(t.layer_overhead_floor_s, trim=True), "accelerator")
    if t.activation_quantization_s > 0:
        sh.leaf("tau_q", "τ<sub>q</sub>", "the kernels that quantise each linear product's input per layer per "
                f"pass, activations below 16 bits, {a.architecture_class} class", t.activation_quantization_s,
                format_time(t.activation_quantization_s, trim=True), "accelerator", "activation_precision")
    sh.leaf("tau_step", "τ<sub>step</sub>", "the serving stack's host time per forward step (scheduling, input "
            f"preparation, sampling, output processing), {a.architecture_class} class", t.step_overhead_s,
            format_time(t.step_overhead_s, trim=True), "accelerator")
    sh.leaf("tau_seq", "τ<sub>seq</sub>", "host time per step for each sequence in it, "
            f"{a.architecture_class} class", t.sequence_overhead_s, format_time(t.sequence_overhead_s, trim=True),
            "accelerator")
    sh.leaf("omega", "ω", f"operator overlap of the {a.architecture_class} class: 1, a pass takes the roofline of "
            "the whole pass; 0, each operator (linear layers, attention) its own, one after another",
            cls.operator_overlap, format_factor(cls.operator_overlap), "accelerator")
    chunk = ctx.constants.prefill_chunk_tokens
    sh.leaf("C", "C", f"prefill chunk: most tokens per forward pass ({CONSTANTS_FILE})", chunk, count(chunk))


def _parameter_groups(sh: Builder, ctx: Context) -> None:
    """The model's parameters in the groups the weights and FLOPs count (the model record's
    counts, grouped), and its experts."""
    m, t = ctx.model, ctx.trace
    routers = m.router_params_total
    quantised = m.block_params_fixed - routers
    sh.leaf("N_q", "N<sub>q</sub>", "linear weights every token uses (attention, dense FFN, shared experts), "
            "stored at p<sub>w</sub>", quantised, large(quantised), "model")
    embeddings = m.embedding_params + (0 if m.tied_embeddings else m.lm_head_params)
    sh.leaf("N_emb", "N<sub>emb</sub>", "embedding table" + (" (tied to the LM head)" if m.tied_embeddings else
            " and LM head"), embeddings, large(embeddings), "model")
    sh.leaf("N_norm", "N<sub>norm</sub>", "norm gains (every tensor-parallel device keeps all of them)",
            m.norm_params, large(m.norm_params), "model")
    sh.leaf("N_fix", "N<sub>fix</sub>", "block weights every token multiplies (2 FLOP each): attention, dense "
            "FFN, shared experts, routers", m.block_params_fixed, large(m.block_params_fixed), "model")
    if m.moe is not None:
        sh.leaf("N_r", "N<sub>r</sub>", "router weights (kept at p<sub>16</sub>)", routers, large(routers), "model")
        sh.leaf("N_e", "N<sub>e</sub>", "weights of one routed expert", m.expert_params, large(m.expert_params),
                "model")
        sh.leaf("E", "E", "routed experts per MoE layer", m.moe.n_routed_experts, count(m.moe.n_routed_experts),
                "model")
        sh.leaf("k", "k", "routed experts per token", m.moe.experts_per_token, count(m.moe.experts_per_token),
                "model")
        sh.leaf("L_moe", "L<sub>moe</sub>", "MoE layers", m.n_moe_layers, count(m.n_moe_layers), "model")
        sh.leaf("E_dev", "E<sub>dev</sub>", "routed experts per device per MoE layer: ⌈E/EP⌉", t.experts_per_device,
                count(t.experts_per_device), "model", "ep")
