"""Why a served run came out as it did, in sentences with its numbers: queueing against
prefill in the TTFT, the decode step against chunked-prefill stalls in the ITL, the KV cache
and preemption, what bounds a typical iteration, and stability.

Every number is the simulator's or the engine's: the run's metrics, the static engine's batch
of one for a prompt alone, and the iteration cost's own step for a typical decode iteration.
"""

from __future__ import annotations

import math

from ..catalog import Catalog
from ..core.cost import Pricing
from ..core.scenario import Scenario
from ..core.serving import POLICY_LABELS
from ..core.units import format_price, format_time, format_usd, significant
from ..physics.engine import Engine
from ..studies.cost import SloCapacity, cheapest_at_slo
from ..studies.serving.study import ServedRun
from ..studies.serving.view import Capacity


def _rate(run: ServedRun) -> str:
    spec = run.spec
    if spec.arrival == "closed":
        return f"{spec.concurrency:,} users in a closed loop"
    if math.isinf(run.rate_rps):
        return "all at once, offline"
    if math.isnan(run.rate_rps):
        return "a trace's arrivals"
    kind = "Poisson" if spec.arrival == "poisson" else f"bursty (Gamma, CV {spec.burstiness_cv:g})"
    return f"{significant(run.rate_rps)} requests/s, {kind} arrivals"


def typical_decode_bound(engine: Engine, run: ServedRun) -> tuple[str, float]:
    """(bound, duration in s) of a decode-only iteration at the run's mean batch and the mean
    context of its replies, by the engine's iteration cost."""
    scenario: Scenario = run.scenario
    model = engine.iteration_cost_model(scenario)
    batch = max(1, round(run.metrics.batch_mean)) if math.isfinite(run.metrics.batch_mean) else 1
    context = scenario.input_len + scenario.output_len // 2
    _, positions, read = model.request_positions(context, 1, True)
    step = model.step(batch, batch, 0.0, batch * positions, batch * read, 0.0)
    return step.bound, step.time_s


def serving_sentences(engine: Engine, run: ServedRun) -> list[str]:
    """The explanation of one served run, a sentence per line."""
    m, setup, s = run.metrics, run.setup, run.scenario
    if run.disaggregated and run.prefill_setup is not None:
        replicas = f"{run.prefill_setup.replicas} prefill and {setup.replicas} decode replicas"
    else:
        replicas = f"{setup.replicas} replica{'s' if setup.replicas != 1 else ''}"
    limits = (f"of {setup.static_batch:,} sequences each" if setup.policy == "static" else
              f"with up to {setup.max_num_seqs:,} sequences and {setup.max_batched_tokens:,} tokens per iteration")
    lines = [
        f"{m.requests:,} requests ({_rate(run)}), prompts about {s.input_len:,} and replies about "
        f"{s.output_len:,} tokens, on {run.devices} device{'s' if run.devices != 1 else ''} "
        f"({replicas} of TP {s.tp} x PP {s.pp}), scheduled by {POLICY_LABELS[setup.policy]} {limits}.",
    ]
    lines.append(measured_sentence(m))
    if m.finished == 0:
        lines.append("No request finished: the run was cut short at the simulation's bound, or every request was "
                     "longer than the model's context or the whole KV cache.")
        return lines
    alone = engine.predict(s.with_changes(batch=1, dp=1))
    queue = max(m.ttft_s.mean - alone.ttft_s, 0.0)
    lines.append(
        f"TTFT: median {format_time(m.ttft_s.p50)}, p99 {format_time(m.ttft_s.p99)}. A prompt alone is prefilled in "
        f"{format_time(alone.ttft_s)}; the mean TTFT of {format_time(m.ttft_s.mean)} adds {format_time(queue)} of "
        "waiting for a slot and sharing iterations with other requests" + (
            f" (on average {significant(m.queue_mean)} requests were waiting)." if m.queue_mean >= 0.05 else "."
        )
    )
    bound, step_s = typical_decode_bound(engine, run)
    lines.append(
        f"ITL: median {format_time(m.itl_s.p50)}, p99 {format_time(m.itl_s.p99)}. A decode-only iteration at the mean "
        f"batch of {significant(m.batch_mean)} sequences takes {format_time(step_s)} and is {bound}-bound"
        + (f"; the p99 is {significant(m.itl_s.p99 / m.itl_s.p50)}x the median: iterations that also carry a "
           "prompt's prefill chunk stall every decoding request in them (chunked prefill)."
           if m.itl_s.p50 > 0 and m.itl_s.p99 > 1.5 * m.itl_s.p50 else ".")
    )
    if run.disaggregated and run.prefill_setup is not None and run.link is not None:
        lines.append(
            f"Disaggregated: a prompt's KV cache crosses from its prefill replica to a decode replica over a link of "
            f"{significant(run.link.bandwidth_bytes_per_s / 1e9)} GB/s after {format_time(run.link.latency_s)}, "
            f"{format_time(run.link.latency_s + s.input_len * run.link.kv_bytes_per_token / run.link.bandwidth_bytes_per_s)}"
            f" for a prompt of {s.input_len:,} tokens, before its decode starts."
        )
    used = m.kv_blocks_max / setup.kv_blocks_total if setup.kv_blocks_total else math.nan
    if setup.policy == "static":
        used = math.nan  # fixed-batch images hold their whole batch's cache: no blocks to count
        reduced = (f", not the scenario's {setup.requested_static_batch:,}: the KV cache holds "
                   f"{setup.kv_tokens:,} tokens, no more sequences of about {s.input_len + s.output_len:,}"
                   if setup.static_batch < setup.requested_static_batch else "")
        lines.append(f"Each fixed-batch image runs {setup.static_batch:,} sequences{reduced}; a batch's requests "
                     "start together and the next batch only when its longest reply ends.")
    kv = (f"The KV cache holds {setup.kv_tokens:,} tokens per replica ({setup.kv_blocks_total:,} blocks of "
          f"{setup.block_size}); at most {used:.0%} of it was in use" if math.isfinite(used) else "")
    if m.preemptions:
        kv += (f", and it ran out: {m.preemptions:,} times a running request was preempted, its blocks freed and its "
               "tokens recomputed later, which costs both time and throughput.")
    elif kv:
        kv += "; no request was preempted."
    if kv:
        lines.append(kv)
    slo_parts = []
    if run.spec.slo_ttft_ms is not None:
        slo_parts.append(f"p99 TTFT {significant(run.spec.slo_ttft_ms)} ms")
    if run.spec.slo_tpot_ms is not None:
        slo_parts.append(f"p99 TPOT {significant(run.spec.slo_tpot_ms)} ms")
    throughput = (f"Throughput {significant(m.output_tokens_per_s)} output tokens/s "
                  f"({significant(m.request_rate_per_s)} requests/s)")
    if slo_parts and run.spec.arrival != "offline":
        throughput += (f"; {m.slo_attainment:.0%} of requests met the SLO ({' and '.join(slo_parts)}), a goodput of "
                       f"{significant(m.goodput_per_s)} requests/s.")
    else:
        throughput += "."
    lines.append(throughput)
    if run.spec.arrival == "offline":
        lines.append("Offline: every request was queued at the start, so the queue only drains; throughput is what "
                     "counts, and TTFT is mostly the wait for a slot.")
    elif m.unstable:
        lines.append("Unstable: the waiting queue grew through the measured window. Requests arrive faster than this "
                     "deployment finishes them, so TTFT grows without bound with a longer run; the percentiles above "
                     "are those of this run's length only.")
    if m.rejected:
        lines.append(f"{m.rejected:,} requests were rejected: longer than the model's context ({setup.max_model_len:,} "
                     "tokens) or than the whole KV cache.")
    lines.append(f"Power {significant(m.average_power_w)} W on average (all devices, idle between iterations "
                 f"included): {significant(m.tokens_per_joule)} input and output tokens per joule.")
    return lines


def measured_sentence(m) -> str:
    """How the run's figures were measured: on its steady state, or over the whole run and why."""
    if not m.steady:
        return f"Measured over the whole run: {m.steady_note}."
    load = (f"; the offered load is {m.offered_load:.2f} of what the deployment serves saturated"
            if math.isfinite(m.offered_load) else "")
    return (f"Measured on its steady state: the {m.measured_requests:,} requests issued in a window of "
            f"{format_time(m.window_s)} after {format_time(m.window_start_s)} of warm-up (the warm-up and the drain "
            f"left out){load}.")


def cheapest_sentences(capacities: tuple[Capacity, ...], pricing: Pricing, catalog: Catalog) -> list[str]:
    """Which accelerator meeting the SLO serves a million output tokens cheapest at its capacity,
    rented and owned (each with its price's source and date), and those no price is known for."""
    options = [SloCapacity(c.accelerator, c.devices, c.rate_rps if math.isfinite(c.rate_rps) else 0.0,
                           c.output_tokens_per_s, c.total_tokens_per_s, c.power_W)
               for c in capacities if c.problem is None]
    if not any(option.capacity_rps > 0.0 for option in options):
        return []
    sentences = []
    for view, verb in (("rental", "rented"), ("ownership", "owned")):
        cheapest = cheapest_at_slo(options, pricing, catalog, view)
        best = cheapest.best
        if best is None:
            names = ", ".join(catalog.accelerator(a).name for a in cheapest.unpriced)
            sentences.append(f"Cheapest meeting the SLO, {verb}: unknown — no {view} price for {names}.")
            continue
        cost = best.view(view)
        price = cost.price
        per = "per device-hour" if view == "rental" else "per device"
        source = f" ({format_price(price.value)} {per}: {price.citation})" if price is not None else ""
        devices = f"{best.devices:,} device{'s' if best.devices != 1 else ''}"
        text = (f"Cheapest meeting the SLO, {verb}: {catalog.accelerator(best.accelerator).name} "
                f"({devices}) at {format_usd(cost.usd_per_mtok_output)} per million output tokens at its "
                f"capacity{source}")
        runners = [f"{catalog.accelerator(c.accelerator).name} {format_usd(c.view(view).usd_per_mtok_output)}"
                   for c in cheapest.ranked[1:3]]
        if runners:
            text += "; then " + ", ".join(runners)
        if cheapest.unpriced:
            text += f"; no {view} price for " + ", ".join(catalog.accelerator(a).name for a in cheapest.unpriced)
        sentences.append(text + ".")
    return sentences
