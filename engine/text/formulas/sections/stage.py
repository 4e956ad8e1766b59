"""One pass through a pipeline stage, for decode and prefill alike: the weights every pass
reads, the activation traffic, the memory time (far tier apart), and compute, execution,
overhead and the stage pass's time."""

from __future__ import annotations

from html import escape

from ....core.units import format_bytes, format_time
from ....physics.reference import PhaseTrace
from ....physics.results import PhaseResult
from ...context import Context
from ..build import Builder


def phase_of(ctx: Context, suffix: str) -> tuple[PhaseResult, PhaseTrace]:
    """The engine's result and trace of the phase a suffix names: "pre" or "dec"."""
    if suffix == "pre":
        return ctx.result.prefill, ctx.trace.prefill
    return ctx.result.decode, ctx.trace.decode


def stack_factor(ctx: Context) -> str:
    """'·{sigma}' where the serving stack is not the reference one (else it is 1 and left out)."""
    return "·{sigma}" if ctx.stack != 1.0 else ""


def fixed_weight_bytes(ctx: Context) -> str:
    """The bytes per parameter of the block weights every token uses: the weight format, or 16
    bits where the format is the model's own and covers only its routed experts (gpt-oss's MXFP4)."""
    return "{p_16}" if ctx.model.native_scope_keeps_wide(ctx.scenario.weight_precision) else "{p_w}"


def dense_read(sh: Builder, ctx: Context) -> None:
    routers = "{N_r}·{p_16} + " if ctx.model.moe is not None else ""
    sh.derive("Dense weights read per pass", "W_read", "W<sub>read</sub>", "weights every pass reads: blocks, "
              "norms and the LM head (the input embedding is gathered row by row, not read)",
              f"({{N_q}}·{fixed_weight_bytes(ctx)} + {routers}{{V}}·{{d}}·{{p_16}})/({{TP}}·{{PP}}) + "
              "{N_norm}·{p_16}/{PP}", format_bytes, ctx.trace.dense_read_bytes)


def recurrent_state_traffic(sh: Builder, ctx: Context, suffix: str, template: str, label: str) -> str:
    """Where the model has DeltaNet or Mamba layers: the state one pass reads and writes (its
    key, "" for a model without them)."""
    if ctx.trace.recurrent_layers == 0:
        return ""
    key = f"S_{suffix}"
    sh.derive(f"Recurrent state read and written ({label})", key, f"S<sub>{label}</sub>",
              "each sequence of the pass reads its fixed-size state once and writes it once, whatever the context",
              template, format_bytes, phase_of(ctx, suffix)[1].state_bytes_per_pass)
    return key


def activation_traffic(sh: Builder, ctx: Context, suffix: str, tokens_key: str, label: str) -> None:
    sh.derive(f"Activation traffic ({label})", f"Q_act_{suffix}", f"Q<sub>act,{label}</sub>",
              "activations written and read between the kernels of the stage's layers",
              f"{{{tokens_key}}}·{{L}}/{{PP}}·{{p_a}}·(4·{{d}} + 2·{{w_ffn}}/{{TP}})", format_bytes,
              phase_of(ctx, suffix)[1].activation_traffic_bytes_per_pass)


def memory_time(sh: Builder, ctx: Context, suffix: str, label: str, weight_key: str, kv_key: str) -> None:
    """t_m of one pass: bytes over the sustained bandwidth; offloaded bytes at the link's."""
    t, (phase, phase_trace) = ctx.trace, phase_of(ctx, suffix)
    stack = stack_factor(ctx)
    name = f"Memory time ({label})"
    key, symbol = f"t_m_{suffix}", f"t<sub>m,{label}</sub>"
    meaning = f"time to stream one {label} pass's bytes"
    if len(t.near_tiers) > 1:
        tiers = " and ".join(escape(tier.name or tier.kind) for tier in t.near_tiers)
        sh.quote(name, key, symbol, meaning, phase.memory_time_s, format_time,
                 ("model", "accelerator", "batch", "weight_precision", "kv_precision", "tp", "pp"),
                 f"{escape(ctx.accelerator.name)} places weights and then the KV cache in {tiers}, fastest first, and "
                 "each tier's share is read at its own bandwidth; this is the engine's sum over tiers.")
        return
    if t.offload == 0.0 and t.kv_offload == 0.0:
        sh.derive(name, key, symbol, meaning, f"{{Q_{suffix}}}/({{beta}}·{{eta_m}}{stack})", format_time,
                  phase.memory_time_s)
        return
    parts = []
    if t.offload > 0.0:
        parts.append(f"{{{weight_key}}}·{{phi_w}}")
    if t.kv_offload > 0.0:
        parts.append(f"{{{kv_key}}}·{{phi_kv}}")
    sh.derive(f"Bytes from the far tier ({label})", f"Q_far_{suffix}", f"Q<sub>far,{label}</sub>",
              "offloaded weights and KV cache streamed over the far tier's link", " + ".join(parts), format_bytes,
              phase_trace.bytes_by_tier_per_pass[-1])
    sh.derive(name, key, symbol, meaning,
              f"({{Q_{suffix}}} − {{Q_far_{suffix}}})/({{beta}}·{{eta_m}}{stack}) + "
              f"{{Q_far_{suffix}}}/({{beta_far}}·{{eta_l}}{stack})", format_time, phase.memory_time_s)


def attention_memory_time(sh: Builder, ctx: Context, suffix: str, label: str, kv_key: str,
                          state_key: str = "") -> None:
    """t_m,att of one pass: the KV cache's share of the memory time (its offloaded part at the
    far tier's link rate), with the recurrent state's (never offloaded) where there is one."""
    t, (phase, _) = ctx.trace, phase_of(ctx, suffix)
    stack = stack_factor(ctx)
    name = f"KV-cache time ({label})"
    key, symbol = f"t_m_att_{suffix}", f"t<sub>m,att,{label}</sub>"
    meaning = f"of t<sub>m,{label}</sub>: the time of the KV cache attention reads and writes"
    if len(t.near_tiers) > 1:
        sh.quote(name, key, symbol, meaning, phase.attention_memory_time_s, format_time,
                 ("model", "accelerator", "batch", "kv_precision", "tp", "pp"),
                 "The KV cache's share of the tiers, each at its own bandwidth; this is the engine's sum.")
        return
    state = f" + {{{state_key}}}/({{beta}}·{{eta_m}}{stack})" if state_key else ""
    if state_key:
        meaning += " and the recurrent state's"
    if t.kv_offload > 0.0:
        sh.derive(name, key, symbol, meaning,
                  f"{{{kv_key}}}·(1 − {{phi_kv}})/({{beta}}·{{eta_m}}{stack}) + "
                  f"{{{kv_key}}}·{{phi_kv}}/({{beta_far}}·{{eta_l}}{stack}){state}", format_time,
                  phase.attention_memory_time_s)
        return
    sh.derive(name, key, symbol, meaning, f"{{{kv_key}}}/({{beta}}·{{eta_m}}{stack}){state}", format_time,
              phase.attention_memory_time_s)


def pass_time(sh: Builder, ctx: Context, suffix: str, label: str, kv_key: str, state_key: str = "") -> None:
    stack = stack_factor(ctx)
    phase, phase_trace = phase_of(ctx, suffix)
    sh.derive(f"Compute time ({label})", f"t_c_{suffix}", f"t<sub>c,{label}</sub>",
              f"time for one {label} pass's FLOPs", f"{{F_{suffix}}}/({{pi}}·{{eta_c}}{stack})", format_time,
              phase.compute_time_s)
    sh.derive(f"Attention compute time ({label})", f"t_c_att_{suffix}", f"t<sub>c,att,{label}</sub>",
              f"of t<sub>c,{label}</sub>: attention's FLOPs", f"{{F_att_{suffix}}}/({{pi}}·{{eta_c}}{stack})",
              format_time, phase.attention_compute_time_s)
    attention_memory_time(sh, ctx, suffix, label, kv_key, state_key)
    t_c, t_m = f"t_c_{suffix}", f"t_m_{suffix}"
    t_c_att, t_m_att = f"t_c_att_{suffix}", f"t_m_att_{suffix}"
    sh.derive(f"Linear layers ({label})", f"t_lin_{suffix}", f"t<sub>lin,{label}</sub>",
              "the linear layers on their own roofline: their compute, or their weight and activation reads",
              f"max({{{t_c}}} − {{{t_c_att}}}, {{{t_m}}} − {{{t_m_att}}})", format_time,
              phase_trace.operators.linear)
    sh.derive(f"Attention ({label})", f"t_att_{suffix}", f"t<sub>att,{label}</sub>",
              "attention on its own roofline: its compute, or its KV-cache reads",
              f"max({{{t_c_att}}}, {{{t_m_att}}})", format_time, phase_trace.operators.attention)
    sh.derive(f"Execution time ({label})", f"t_exec_{suffix}", f"t<sub>exec,{label}</sub>",
              f"compute and memory of one {label} pass together: the whole pass's roofline where operators "
              "overlap, the linear layers' and attention's one after the other where they do not",
              f"{{omega}}·max({{{t_c}}}, {{{t_m}}}) + (1 − {{omega}})·({{t_lin_{suffix}}} + {{t_att_{suffix}}})",
              format_time, phase.execution_time_s)
    if ctx.trace.activation_quantization_s > 0:
        sh.derive(f"Overhead ({label})", f"t_oh_{suffix}", f"t<sub>oh,{label}</sub>",
                  "kernel launches and synchronisation, a fixed cost per layer, and the kernels that "
                  "quantise the activations", "{L}/{PP}·({tau} + {tau_q})", format_time, phase.overhead_time_s)
    else:
        sh.derive(f"Overhead ({label})", f"t_oh_{suffix}", f"t<sub>oh,{label}</sub>",
                  "kernel launches and synchronisation, a fixed cost per layer", "{L}/{PP}·{tau}", format_time,
                  phase.overhead_time_s)
    sh.derive(f"Stage pass ({label})", f"t_pass_{suffix}", f"t<sub>pass,{label}</sub>",
              f"one {label} pass through a pipeline stage (communication is not overlapped with compute)",
              f"{{t_exec_{suffix}}} + {{t_comm_{suffix}}} + {{t_oh_{suffix}}}", format_time, phase_trace.pass_time_s)
