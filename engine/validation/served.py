"""Served runs: a queue of requests served at most ``batch`` at a time, worked out from the
engine's static-batch steps (the second paper's offline runs of its 1,000-conversation dataset)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace

from ..core.scenario import Scenario
from ..physics.engine import Engine
from ..physics.results import Outputs, Result


@dataclass(frozen=True)
class ServedRun:
    """A served run of ``requests`` requests per instance (dp replicas), worked out from the
    engine's static-batch steps; see :func:`served_runs`."""

    concurrency: int  # requests in flight while the queue lasts
    time_s: float  # one instance, first prompt to last token
    energy_J: float  # all devices of all replicas
    drain_time_s: float  # of time_s: after the queue is empty


def served_runs(
    engine: Engine,
    results: Mapping[Scenario, Result],
    requests: Mapping[Scenario, int],
    fixed_batch: Collection[Scenario] = (),
) -> dict[Scenario, Result]:
    """Each scenario as one instance of a served run of ``requests[scenario]`` requests, all
    queued at the start, at most ``batch`` (and at most what memory holds) in flight: the
    second paper's offline runs of its 1,000-conversation dataset (vLLM continuous batching on
    GPUs; as many clients as the batch on the dataflow machines).

    Each request's prompt is prefilled when it joins; its decode steps are exponentially
    distributed about the workload's mean (output_len - 1). While the queue lasts, C requests
    run and each finished one is replaced at once; the queue empties after N - C completions,
    having produced (N - C)·m of the N·m decode tokens (m the mean), in (N - C)·m/C steps at
    the batch-C step time. By memorylessness the C requests left then each still need m steps
    on average, and with k left the next one finishes after m/k steps at the batch-k step time:
    the drain takes Σ_{k=1..C} (m/k)·ITL(k). Energy adds each phase's per-device power x time.
    With C = 1 this is N times the static batch of one; with a constant step time it is the
    static total plus m·ITL·(H_C − 1), the price of the tail.

    A scenario in ``fixed_batch`` is served from a fixed-batch image instead (the CS-3's and
    SN40L's pre-compiled artifacts): C requests start together, the batch runs at the batch-C
    step time until its longest reply finishes, and only then do the next C start. The longest
    of C exponential replies takes m·H_C steps on average (H_C the C-th harmonic number), so the
    run takes (N/C)·(prefill of C + m·H_C·ITL(C)). With C = 1 both policies are the same.

    Returns each scenario's static result with run time, throughput, power and energy (and
    tokens per joule) replaced by the served run's; TTFT and ITL stay those of the static
    batch."""
    if not requests:
        return {}
    plans: list[tuple[Scenario, int, int, bool]] = []  # scenario, concurrency, first column, fixed batch
    batches: list[Scenario] = []
    for scenario, result in results.items():
        if scenario not in requests or not result.fits:
            continue
        concurrency = max(1, min(result.memory.resident_batch, requests[scenario]))
        fixed = scenario in fixed_batch
        # A fixed-batch run only ever steps at batch C; a continuous one drains through every batch below.
        sizes = (concurrency,) if fixed else range(1, concurrency + 1)
        plans.append((scenario, concurrency, len(batches), fixed))
        batches.extend(scenario.with_changes(batch=k) for k in sizes)
    outputs = Outputs(engine.evaluate(batches))
    return {
        scenario: _served_run(scenario, results[scenario], requests[scenario], concurrency, fixed, outputs, first)
        for scenario, concurrency, first, fixed in plans
    }


def _served_run(
    scenario: Scenario, static: Result, n: int, concurrency: int, fixed: bool, outputs: Outputs, first: int
) -> Result:
    """``scenario``'s ``static`` result as one instance of a served run of ``n`` requests, ``concurrency`` at a time,
    from the step times of the batches from column ``first`` on (batch C alone when ``fixed``,
    else batches 1 ... C)."""
    m = max(scenario.output_len - 1, 0)
    last = first if fixed else first + concurrency - 1  # the batch-C column
    itl = float(outputs.itl_s[last])
    decode_power = float(outputs.decode.power_per_device_W[last])
    prefill_time = float(outputs.prefill.time_s[last])
    prefill_power = float(outputs.prefill.power_per_device_W[last])
    prefills = n / concurrency
    if fixed:
        # Every batch decodes for as long as its longest reply, all of it at batch C.
        full_steps = prefills * m * sum(1.0 / k for k in range(1, concurrency + 1))
        drain_time = drain_energy = 0.0
    else:
        full_steps = (n - concurrency) * m / concurrency
        columns = slice(first, first + concurrency)
        drain_steps = [m / k for k in range(1, concurrency + 1)]
        drain_itl = outputs.itl_s[columns]
        drain_power = outputs.decode.power_per_device_W[columns]
        drain_time = float(sum(steps * t for steps, t in zip(drain_steps, drain_itl, strict=True)))
        drain_energy = float(sum(
            steps * t * p for steps, t, p in zip(drain_steps, drain_itl, drain_power, strict=True)
        ))
    time = prefills * prefill_time + full_steps * itl + drain_time
    energy_per_device = (
        prefills * prefill_time * prefill_power
        + full_steps * itl * decode_power
        + drain_energy
    )
    energy = energy_per_device * static.devices
    dp = scenario.dp
    total_tokens = dp * n * (scenario.input_len + scenario.output_len)
    output_tokens = dp * n * scenario.output_len
    return replace(
        static,
        e2e_latency_s=time,
        throughput_output_tok_s=output_tokens / time,
        throughput_total_tok_s=total_tokens / time,
        power_W=energy / time,
        energy_J=energy,
        tokens_per_joule=total_tokens / energy,
        output_tokens_per_joule=output_tokens / energy,
    )
