"""Served runs: a queue of requests served at most ``batch`` at a time (the second paper's
offline runs of its 1,000-conversation dataset), and server scenarios: requests arriving as a
Poisson stream, served at the largest rate that meets a latency objective (MLPerf Inference's
Server scenario, which the first paper's multi-stream rates come from). Both are simulated
iteration by iteration by the serving simulator on the engine's physics."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace

from ..catalog.measurements import ServerObjective
from ..core.errors import AccelscopeError
from ..core.scenario import Scenario
from ..core.serving import ServingSpec
from ..physics.engine import Engine
from ..physics.results import Result
from ..studies.serving.capacity import CapacityResult
from ..studies.serving.study import ServerSetup, capacity_at_slo, server_setup, simulate_served

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
        totals = [_totals(engine, instance, served_spec(n, concurrency, fixed, seed), scenario.dp)
                  for seed in SERVED_SEEDS]
        if any(total is None for total in totals):
            continue
        mean = {key: sum(total[key] for total in totals) / len(totals) for key in totals[0]}
        served[scenario] = replace(static, **mean)
    return served


def _totals(engine: Engine, instance: Scenario, spec: ServingSpec, dp: int) -> dict[str, float] | None:
    """The run-level figures of one served run of ``instance`` (one replica), for ``dp`` of them."""
    try:
        # A paper's served run is measured end to end: N requests, first issue to last completion.
        run = simulate_served(engine, instance, spec, offered_load=False, end_to_end=True)
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


# ---- server scenarios ------------------------------------------------------------------------

# A server scenario's requests: Poisson arrivals, every prompt and reply of the workload's
# lengths (a benchmark's own length distribution is taken as unknown, not guessed), vLLM's
# scheduler with its default limits for the device.
SERVER_POLICY = "vllm"
SERVER_LENGTHS = "fixed"

ServerKey = tuple[Scenario, int, ServerObjective]  # scenario, requests per run, objective


def server_spec(requests: int, objective: ServerObjective, seed: int = SERVED_SEEDS[0]) -> ServingSpec:
    """The serving settings of a server scenario: ``requests`` Poisson arrivals (the rate is
    the capacity search's), prompts and replies of the scenario's lengths, vLLM's defaults,
    the objective on p99 TTFT and p99 TPOT."""
    return ServingSpec(
        arrival="poisson",
        requests=requests,
        input_distribution=SERVER_LENGTHS,
        output_distribution=SERVER_LENGTHS,
        seed=seed,
        policy=SERVER_POLICY,
        slo_ttft_ms=objective.ttft_p99_ms,
        slo_tpot_ms=objective.tpot_p99_ms,
    )


@dataclass(frozen=True)
class ServerCapacity:
    """A scenario in a server scenario, for each seed of SERVED_SEEDS: the largest arrival rate
    whose run meets the objective (requests/s, whole deployment) and that run's p99 latencies
    and mean requests in flight. ``result`` is the scenario's static result with the run-level
    figures replaced by the mean over the seeds of the runs at capacity; None when no rate meets
    the objective, ``reason`` then says why."""

    result: Result | None
    reason: str | None
    setup: ServerSetup | None  # the policy's limits and KV cache the runs used
    rate_rps: tuple[float, ...] = ()
    ttft_p99_s: tuple[float, ...] = ()
    tpot_p99_s: tuple[float, ...] = ()
    running_mean: tuple[float, ...] = ()


def server_runs(
    engine: Engine, results: Mapping[Scenario, Result], runs: Collection[ServerKey]
) -> dict[ServerKey, ServerCapacity]:
    """Each (scenario, requests, objective) as a server scenario: for every seed, the capacity
    search (``capacity_at_slo``: bisection on the Poisson rate, each run ``requests`` long) and
    the run at the capacity it finds. Scenarios whose static batch does not fit are left out
    (their static result says why).

    Throughput, power, energy and tokens per joule are the runs' at capacity, averaged over the
    seeds; TTFT, ITL and E2E stay the static batch's (a server row cannot name them: its
    latencies are the objective's limits)."""
    found: dict[ServerKey, ServerCapacity] = {}
    for key in runs:
        scenario, requests, objective = key
        static = results.get(scenario)
        if static is None or not static.fits:
            continue
        found[key] = _server_capacity(engine, scenario, static, requests, objective)
    return found


def _server_capacity(
    engine: Engine, scenario: Scenario, static: Result, requests: int, objective: ServerObjective
) -> ServerCapacity:
    specs = [server_spec(requests, objective, seed) for seed in SERVED_SEEDS]
    try:
        setup = server_setup(engine, scenario, specs[0])
        searches = [capacity_at_slo(engine, scenario, spec) for spec in specs]
    except AccelscopeError as error:
        return ServerCapacity(None, f"cannot be served: {error}", None)
    failed = next((search for search in searches if search.rate_per_s <= 0.0), None)
    if failed is not None:
        return ServerCapacity(None, _no_capacity(failed, objective), setup)
    totals = [_totals_at_capacity(search) for search in searches]
    mean = {key: sum(total[key] for total in totals) / len(totals) for key in totals[0]}
    return ServerCapacity(
        result=replace(static, **mean),
        reason=None,
        setup=setup,
        rate_rps=tuple(search.rate_per_s for search in searches),
        ttft_p99_s=tuple(search.metrics.ttft_s.p99 for search in searches),
        tpot_p99_s=tuple(search.metrics.tpot_s.p99 for search in searches),
        running_mean=tuple(search.metrics.running_mean for search in searches),
    )


def _totals_at_capacity(search: CapacityResult) -> dict[str, float]:
    """The run-level figures of the run at the capacity found."""
    metrics = search.metrics
    return {
        "throughput_output_tok_s": metrics.output_tokens_per_s,
        "throughput_total_tok_s": metrics.total_tokens_per_s,
        "power_W": metrics.average_power_w,
        "energy_J": metrics.energy_j,
        "tokens_per_joule": metrics.tokens_per_joule,
        "output_tokens_per_joule": metrics.output_tokens_per_joule,
    }


def _no_capacity(search: CapacityResult, objective: ServerObjective) -> str:
    metrics = search.metrics
    return (f"no arrival rate meets p99 TTFT <= {objective.ttft_p99_ms:g} ms and p99 TPOT <= "
            f"{objective.tpot_p99_ms:g} ms: even {search.failing_rate_per_s:.3g} requests/s gives p99 TTFT "
            f"{metrics.ttft_s.p99 * 1e3:.0f} ms, p99 TPOT {metrics.tpot_s.p99 * 1e3:.0f} ms"
            + (" and a growing queue" if metrics.unstable else ""))
