"""The scenario: the model on the accelerator, the workload, the formats and the layout."""

from __future__ import annotations

from ....core.units import format_factor, format_params
from ..context import ExplainContext
from ..words import count, percent_up, sentence


def sentences(ctx: ExplainContext) -> list[str]:
    s, m, t = ctx.scenario, ctx.model, ctx.trace
    size = f"{format_params(m.total_params)} parameters"
    if m.moe is not None:
        size += f", {format_params(m.active_params)} active per token"
    layout = f"TP {s.tp} × PP {s.pp} × DP {s.dp} = {count(ctx.result.devices, 'device')}"
    if t.effective_ep > 1:
        layout += f", experts spread over EP {s.ep}"
    if s.offload:
        layout += f", {percent_up(s.offload)} of the weights offloaded"
    if s.kv_offload:
        layout += f", {percent_up(s.kv_offload)} of the KV cache offloaded"
    precision = (
        f"weights {s.weight_precision}, activations {s.activation_precision}, KV cache {s.kv_precision}; "
        f"matrix products run on the {ctx.result.compute_precision} units"
    )
    workload = (
        f"one prompt of {s.input_len:,} tokens, generating {count(s.output_len, 'token')}" if s.batch == 1
        else f"a static batch of {s.batch:,} prompts of {s.input_len:,} tokens, each generating "
        f"{count(s.output_len, 'token')}"
    )
    lines = [
        sentence(f"{m.name} ({size}) on {ctx.accelerator.name}: {workload}"),
        sentence(f"{precision}; {layout}"),
    ]
    if ctx.stack != 1.0:
        lines.append(
            sentence(
                f"the serving stack of {ctx.accelerator.name} is taken at {format_factor(ctx.stack)} of the reference "
                "(vLLM on CUDA): every compute and memory rate below carries that last factor"
            )
        )
    return lines
