"""Served runs: a queue of requests served at most ``batch`` at a time (the second paper's
offline runs of its 1,000-conversation dataset), simulated iteration by iteration by the
serving simulator on the engine's physics."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace

from ..core.errors import AccelscopeError
from ..core.scenario import Scenario
from ..core.serving import ServingSpec
from ..physics.engine import Engine
from ..physics.results import Result
from ..studies.serving.study import simulate_served

# The served runs' requests: every one queued at t = 0, prompts of the workload's length,
# replies exponentially distributed about its mean (a conversation dataset's spread). A run's
# totals move with the draw (the longest replies set the drain): each prediction is the mean
# over draws from these seeds, the expected served run rather than one draw's.
SERVED_SEEDS: tuple[int, ...] = (0, 1, 2, 3)


def served_spec(requests: int, concurrency: int, fixed: bool, seed: int = SERVED_SEEDS[0]) -> ServingSpec:
    """The serving settings of a paper's served run: vLLM's scheduler with at most
    ``concurrency`` sequences (the batch the paper set) for continuous batching, or
    fixed-batch images of ``concurrency`` requests."""
    return ServingSpec(
        arrival="offline",
        requests=requests,
        input_distribution="fixed",
        output_distribution="exponential",
        seed=seed,
        policy="static" if fixed else "vllm",
        max_num_seqs=None if fixed else concurrency,
        slo_ttft_ms=None,
        slo_tpot_ms=None,
    )


def served_runs(
    engine: Engine,
    results: Mapping[Scenario, Result],
    requests: Mapping[Scenario, int],
    fixed_batch: Collection[Scenario] = (),
) -> dict[Scenario, Result]:
    """Each scenario as one instance (of its ``dp``) of a served run of ``requests[scenario]``
    requests, all queued at the start, at most ``batch`` in flight: the second paper's offline
    runs of its 1,000-conversation dataset (vLLM continuous batching on GPUs; as many clients as
    the batch on the dataflow machines).

    A GPU scenario is served by vLLM's scheduler with ``max_num_seqs`` = the batch: prompts
    prefilled as they join (chunked under the token budget), finished requests replaced at once,
    the KV cache sized as vLLM sizes it (preempting when it runs out), then the drain. A
    scenario in ``fixed_batch`` is served from fixed-batch images (the CS-3's and SN40L's
    pre-compiled artifacts): the batch's requests start together and the next batch only when
    the longest reply of this one ends. Each iteration's time and energy are the engine's.

    Returns each scenario's static result with run time, throughput, power and energy (and
    tokens per joule) replaced by the served run's; TTFT and ITL stay those of the static
    batch."""
    served: dict[Scenario, Result] = {}
    for scenario, static in results.items():
        if scenario not in requests or not static.fits:
            continue
        n = requests[scenario]
        concurrency = max(1, min(static.memory.resident_batch, n))
        fixed = scenario in fixed_batch
        instance = scenario.with_changes(dp=1, batch=concurrency)
        totals = [_totals(engine, instance, served_spec(n, concurrency, fixed, seed), scenario.dp) for seed in SERVED_SEEDS]
        if any(total is None for total in totals):
            continue
        mean = {key: sum(total[key] for total in totals) / len(totals) for key in totals[0]}
        served[scenario] = replace(static, **mean)
    return served


def _totals(engine: Engine, instance: Scenario, spec: ServingSpec, dp: int) -> dict[str, float] | None:
    """The run-level figures of one served run of ``instance`` (one replica), for ``dp`` of them."""
    try:
        run = simulate_served(engine, instance, spec)
    except AccelscopeError:
        return None
    metrics = run.metrics
    if metrics.finished < spec.requests or not metrics.span_s > 0.0:
        return None
    time = metrics.span_s
    energy = metrics.energy_j * dp
    output_tokens = dp * float(run.run.output_tokens.sum())
    total_tokens = output_tokens + dp * float(run.run.prompt_tokens.sum())
    return {
        "e2e_latency_s": time,
        "throughput_output_tok_s": output_tokens / time,
        "throughput_total_tok_s": total_tokens / time,
        "power_W": energy / time,
        "energy_J": energy,
        "tokens_per_joule": total_tokens / energy,
        "output_tokens_per_joule": output_tokens / energy,
    }
