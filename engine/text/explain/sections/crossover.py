"""The decode crossover: the batch at which compute time reaches memory time (the crossover
study's answer), or why batching never gets there."""

from __future__ import annotations

from ....core.units import format_bytes, format_time
from ....studies.crossover import CROSSOVER_MAX_BATCH
from ..context import ExplainContext
from ..words import sentence


def sentences(ctx: ExplainContext) -> list[str]:
    lines = [_whole_pass(ctx)]
    if ctx.crossovers.linear_layers is not None:
        lines.append(_linear_layers(ctx))
    return lines


def _hypothetical(ctx: ExplainContext) -> str:
    return " (hypothetical, as the scenario does not fit)" if ctx.hypothetical else ""


def _linear_layers(ctx: ExplainContext) -> str:
    """Where operators run one after another, the batch at which the linear layers' compute
    reaches their reads: batching amortises the weight reads up to there."""
    r, c, times = ctx.result, ctx.crossovers.linear_layers, ctx.decode.trace.operators
    hypothetical = _hypothetical(ctx)
    largest = r.memory.max_batch
    reads = "the time of their weight and activation reads"
    if c.batch is None:
        where = f"at every batch that fits (at most {largest:,})" if r.fits else (
            f"up to batch {CROSSOVER_MAX_BATCH:,}{hypothetical}"
        )
        return sentence(
            f"the linear layers' compute time stays below {reads} {where}, so batching keeps amortising the "
            "weight reads"
        )
    if c.batch == 1:
        return sentence(f"the linear layers' compute time exceeds {reads} even at batch 1{hypothetical}")
    if times.linear_compute >= times.linear_memory:
        return sentence(
            f"the linear layers' compute time overtook {reads} at batch ≈ {c.batch:,}{hypothetical}: from there, "
            "each further sequence adds its whole share of linear-layer compute to the step"
        )
    fits_at = f"; the largest batch that fits is {largest:,}" if r.fits else ""
    return sentence(
        f"batching amortises the weight reads until batch ≈ {c.batch:,}, where the linear layers' compute time "
        f"reaches {reads}{hypothetical}{fits_at}"
    )


def _whole_pass(ctx: ExplainContext) -> str:
    r, c = ctx.result, ctx.crossovers.whole_pass
    hypothetical = _hypothetical(ctx)
    largest = r.memory.max_batch
    if c.batch is not None:
        if c.batch == 1:
            text = f"decode compute time exceeds memory time even at batch 1 on {ctx.accelerator.name}{hypothetical}"
        elif r.decode.compute_time_s >= r.decode.memory_time_s:
            turned = "turned compute-bound" if r.decode.bound == "compute" else "compute time overtook memory time"
            text = (
                f"decode {turned} at batch ≈ {c.batch:,}{hypothetical}: from there, each further sequence adds "
                "more compute time than memory time"
            )
        elif ctx.crossovers.linear_layers is not None:
            # Operators one after another: the linear layers' own crossover (the next sentence)
            # is where weight reads stop being amortised; this one decides the bound.
            text = f"summed over the pass, decode compute time reaches memory time at batch ≈ {c.batch:,}{hypothetical}"
        else:
            fits_at = f"; the largest batch that fits is {largest:,}" if r.fits else ""
            text = (
                f"batching amortises the weight reads until batch ≈ {c.batch:,}, where decode compute time "
                f"reaches memory time{hypothetical}{fits_at}"
            )
        return sentence(text)
    # No crossover: say what one more sequence adds to each, at the largest batch swept.
    stays = "decode stays memory-bound" if r.decode.bound == "memory" else "memory time stays ahead of compute"
    marginal = c.marginal(ctx.scenario.pp)
    if marginal is None:
        return sentence(
            f"{stays} at every batch that fits (at most {largest:,}): the batch stops fitting before "
            "compute catches up with memory"
        )
    if not r.fits:
        reach = f"up to batch {CROSSOVER_MAX_BATCH:,}{hypothetical}"
    elif marginal.compute_s >= marginal.memory_s:
        reach = f"at every batch that fits (at most {largest:,})"
    elif ctx.model.moe is None:
        reach = f"at any batch, and memory caps the batch at {largest:,} anyway"
    else:  # expert reads saturate at larger batches: say nothing beyond what was computed
        reach = f"up to the largest batch that fits ({largest:,})"
    if marginal.compute_s < marginal.memory_s:
        text = (
            f"batching does not make decode compute-bound here: each further sequence adds "
            f"{format_time(marginal.compute_s)} of compute but {format_time(marginal.memory_s)} of memory time per "
            f"step, as it reads its own KV cache ({format_bytes(ctx.trace.decode.kv_bytes_per_sequence)} per step at "
            f"the mean context), so {stays} {reach}"
        )
    else:
        text = (
            f"{stays} {reach}: each further sequence adds {format_time(marginal.compute_s)} of compute and "
            f"{format_time(marginal.memory_s)} of memory time per step (at batch {marginal.at_batch:,}), so compute "
            "would catch up only at a larger batch"
        )
    return sentence(text)
