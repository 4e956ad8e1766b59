"""How a stage pass's times add up, for prefill and decode alike: execution as the class
overlaps its operators, the fixed per-layer overhead, the serving stack's host time, and the
passes and hand-overs of a pipeline."""

from __future__ import annotations

from ....core.units import format_factor, format_time
from ..context import ExplainContext, Phase
from ..words import same, sentence


def execution_sentence(ctx: ExplainContext, p: Phase, unit: str) -> str:
    """How the pass's compute and memory time make its execution time, as the class overlaps
    its operators (stage.execution_time): the whole pass's roofline, or the linear layers' and
    attention's each, added."""
    phase, times = p.result, p.trace.operators
    overlap = ctx.cls.operator_overlap
    device = ctx.accelerator.name
    kind = f"({ctx.accelerator.architecture_class} class)"
    execution = format_time(phase.execution_time_s)
    if overlap >= 1.0:
        return sentence(
            f"{device} overlaps a pass's operators {kind}, each streaming into the next, so the pass takes "
            f"the roofline of the whole: max({format_time(phase.compute_time_s)}, {format_time(phase.memory_time_s)}) = "
            f"{execution} per {unit}"
        )
    operators = (
        f"the linear layers take max({format_time(times.linear_compute)} of compute, "
        f"{format_time(times.linear_memory)} of weight and activation reads) = {format_time(times.linear)} and "
        f"attention max({format_time(times.attention_compute)} of compute, "
        f"{format_time(times.attention_memory)} of KV-cache reads) = {format_time(times.attention)}"
    )
    if overlap <= 0.0:
        return sentence(
            f"{device} runs a pass's operators one after another {kind}, so each takes its own roofline and their "
            f"times add: {operators}; {format_time(times.linear)} + {format_time(times.attention)} = {execution} per "
            f"{unit}"
        )
    weight = format_factor(overlap)
    one_after_another = format_time(times.by_operator)
    return sentence(
        f"{device} overlaps a pass's operators in part {kind}, operator overlap {weight}: {operators}, "
        f"{one_after_another} one after another, against {format_time(times.whole)} for the whole "
        f"pass's roofline; {weight} × {format_time(times.whole)} + (1 − {weight}) × {one_after_another} = "
        f"{execution} per {unit}"
    )


def host_sentence(ctx: ExplainContext, p: Phase, prefill: bool) -> str | None:
    """The serving stack's host time of the phase: per forward step (a prefill chunk is one)
    and per sequence in it, as the engine charges it."""
    host = p.result.host_time_s
    if host <= 0:
        return None
    t = ctx.trace
    step, per_sequence, steps = t.step_overhead_s, t.sequence_overhead_s, p.trace.host_steps
    parts = []
    if step > 0:
        parts.append(f"{steps:,} × {format_time(step, trim=True)}" if steps > 1 else format_time(step, trim=True))
    if per_sequence > 0:
        parts.append(f"{ctx.result.memory.resident_batch:,} × {format_time(per_sequence, trim=True)}")
    formula = " + ".join(parts)
    if same(p.trace.host_s, host) and (len(parts) > 1 or "×" in formula):
        amount = f"{formula} = {format_time(host)}"
    else:
        amount = format_time(host)
    work = "the serving stack's host work (scheduling, input preparation, sampling, output processing)"
    if prefill:
        return sentence(
            f"{work} adds {amount} to the prefill, once per forward step (a chunk) and once per prompt, "
            "during which the devices wait"
        )
    return sentence(f"{work} adds {amount} per step, during which the devices wait")


def overhead_phrase(ctx: ExplainContext, p: Phase) -> str:
    host = p.result.host_time_s
    t = ctx.trace
    per_layer = format_time(t.layer_overhead_floor_s, trim=True)
    if t.activation_quantization_s > 0:
        # 8-bit (or narrower) activations: the quantisation kernels before each linear product.
        per_layer = f"({per_layer} + {format_time(t.activation_quantization_s, trim=True)} quantising the activations)"
    return (
        f"{ctx.layers_per_stage()} × {per_layer} = "
        f"{format_time(p.result.overhead_time_s)} of fixed per-layer overhead"
        + (f" and {format_time(host)} of host time" if host > 0 and ctx.scenario.pp == 1 else "")
    )


def pass_sum(p: Phase) -> str:
    """The terms of one stage pass: execution (compute and memory), communication, overhead."""
    phase = p.result
    terms = [format_time(phase.execution_time_s)]
    if phase.communication_time_s > 0:
        terms.append(format_time(phase.communication_time_s))
    terms.append(format_time(phase.overhead_time_s))
    return " + ".join(terms)


def stated_transfer(ctx: ExplainContext, p: Phase) -> float:
    """One hand-over to the next pipeline stage, as the phase's total leaves it: (total −
    passes in a row × stage pass − host) / (PP − 1), from the engine's result.

    The trace's ``transfer_s`` is the same time to within 1e-9; the text states this one so
    that what it says stays as it was: a few hand-overs (2 of 300 random scenarios) sit on a
    rounding boundary of the three figures shown, where the two fall on different sides."""
    phase = p.result
    stage_pass = phase.execution_time_s + phase.communication_time_s + phase.overhead_time_s
    return (phase.time_s - p.trace.pipeline_passes * stage_pass - phase.host_time_s) / (ctx.scenario.pp - 1)


def pipeline_sum(ctx: ExplainContext, p: Phase) -> str:
    """'passes × pass + transfers × transfer (+ host) = total' of a pipelined phase."""
    transfers = ctx.scenario.pp - 1
    transfer = format_time(stated_transfer(ctx, p))
    terms = [
        f"{p.trace.pipeline_passes:,} × {format_time(p.trace.pass_time_s)}",
        f"{transfers} × {transfer}" if transfers > 1 else transfer,
    ]
    if p.result.host_time_s > 0:
        terms.append(format_time(p.result.host_time_s))
    return f"{' + '.join(terms)} = {format_time(p.result.time_s)}"
