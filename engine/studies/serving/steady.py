"""Runs sized for a steady state (SERVING.md section 8): how long to warm up, how long to
measure, how many requests, and which replicas to simulate.

A served figure is a measurement of the steady state, so a run is sized by time, not by a
request count: a warm-up of ``WARMUP_E2E`` end-to-end latencies (MSER-5 may find a longer one),
then a window of at least ``WINDOW_E2E`` latencies ("several") and ``WINDOW_REQUESTS`` requests (a p99 over
2,000 requests rests on its 20 slowest), then ``DRAIN_E2E`` latencies more of arrivals so that
the window's last requests see the load they would in a longer run. The run stops once the
window's requests have all left (``simulate``'s ``measured_requests``).

**Round-robin replicas are sampled.** Behind a round-robin router, identical replicas are
exchangeable: replica r serves arrivals r, r + k, r + 2k, ... of the deployment's stream, an
Erlang-k stream (the sum of k gaps) of rate lambda / k, smoother than Poisson at that rate, and
each replica's requests are independent of the others'. So the deployment is measured on as many
replicas as its window needs for ``WINDOW_REQUESTS`` requests (``simulated_replicas``), each fed
its own Erlang-k stream; its figures are then scaled to all k (``RunResult.replicas_represented``).
A least-outstanding router couples the replicas (it reads their queues), so then all k are
simulated, on the whole stream.

A run whose queue does not drain (its window's requests still waiting ``DRAIN_LIMIT_E2E``
latencies after the last arrival) is stopped there and judged unstable, rather than simulated
through its backlog.

The end-to-end latency the run is sized by is the static engine's: the time to prefill one
prompt plus a reply's decode steps at the batch the KV cache holds (``e2e_estimate_s``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ...core.scenario import Scenario
from ...core.serving import ServingSpec
from ...physics.engine import Engine
from .capacity import CapacityResult, capacity
from .deployment import (
    ServerSetup,
    deployment_physics,
    kv_link,
    server_of,
    server_setup,
    slo_of,
    static_best_rate,
)
from .disaggregated import simulate_disaggregated
from .layout import DEFAULT_BINS
from .metrics import Window, steady_window
from .run import RunResult, Server, simulate
from .workload import Lengths, Workload, cap_lengths, draw_lengths

# Warm-up left out before the window: this many end-to-end latencies at least.
WARMUP_E2E = 2.0
# The window: at least this many end-to-end latencies...
WINDOW_E2E = 5.0
# ...and this many requests, for a stable p99.
WINDOW_REQUESTS = 2000
# Arrivals go on this many latencies past the window.
DRAIN_E2E = 1.0
# A run whose window's requests are still in the system this many latencies after the arrivals
# stop has a queue that does not drain: it is stopped there and judged unstable (an overloaded
# run would otherwise take as long again as its backlog).
DRAIN_LIMIT_E2E = 4.0
# Offline: requests per simulated replica, in batches of what its KV cache and sequence limit hold.
OFFLINE_BATCHES = 4
OFFLINE_LEAST_REQUESTS = 256
# Closed loop: requests per user (the loop's own length; each user's requests follow one another).
CLOSED_LOOP_REQUESTS_PER_USER = 24
CLOSED_LOOP_LEAST_REQUESTS = 1000


@dataclass(frozen=True)
class RunPlan:
    """One open-loop run sized for a steady state at ``rate_rps`` (whole deployment)."""

    rate_rps: float
    replicas: int  # the deployment's
    simulated_replicas: int  # the sample simulated (all of them unless round-robin)
    sampled: bool  # each simulated replica fed its own stream of every k-th arrival
    warmup_s: float
    window_s: float
    horizon_s: float  # arrivals stop here
    e2e_s: float  # the latency the run is sized by
    drain_limit_s: float  # the run stops here, its queue undrained (DRAIN_LIMIT_E2E)

    @property
    def window_end_s(self) -> float:
        return self.warmup_s + self.window_s


def plan_open_loop(rate_rps: float, replicas: int, router: str, e2e_s: float) -> RunPlan:
    """The warm-up, window and replicas of a run at ``rate_rps`` over ``replicas`` replicas."""
    if not (rate_rps > 0.0 and math.isfinite(rate_rps)):
        raise ValueError("a steady-state run needs a finite, positive rate")
    e2e_s = max(e2e_s, 1e-6)
    sampled = router == "round-robin"
    per_replica = rate_rps / replicas
    simulated = replicas
    if sampled:
        # Enough replicas that the window holds WINDOW_REQUESTS requests in WINDOW_E2E latencies.
        simulated = min(replicas, max(1, math.ceil(WINDOW_REQUESTS / (per_replica * WINDOW_E2E * e2e_s))))
    simulated_rate = per_replica * simulated
    window_s = max(WINDOW_E2E * e2e_s, WINDOW_REQUESTS / simulated_rate)
    warmup_s = WARMUP_E2E * e2e_s
    horizon_s = warmup_s + window_s + DRAIN_E2E * e2e_s
    return RunPlan(rate_rps, replicas, simulated, sampled, warmup_s, window_s, horizon_s, e2e_s,
                   horizon_s + DRAIN_LIMIT_E2E * e2e_s)


def offline_requests(replica_batch: int) -> int:
    """Requests per simulated replica of an offline run: several times what it holds at once."""
    return max(OFFLINE_LEAST_REQUESTS, OFFLINE_BATCHES * max(replica_batch, 1))


def closed_loop_requests(users: int) -> int:
    return max(CLOSED_LOOP_LEAST_REQUESTS, CLOSED_LOOP_REQUESTS_PER_USER * users)


def e2e_estimate_s(engine: Engine, scenario: Scenario, batch: int) -> float:
    """A reply's end-to-end latency as the static engine sees it: one prompt's prefill, then the
    reply's decode steps at ``batch`` sequences (what the KV cache holds at the mean lengths)."""
    alone = engine.predict(scenario.with_changes(batch=1))
    loaded = engine.predict(scenario.with_changes(batch=max(batch, 1)))
    itl = loaded.itl_s if math.isfinite(loaded.itl_s) else alone.itl_s
    return float(alone.ttft_s + max(scenario.output_len - 1, 0) * itl)


def _unit_arrivals(seed: int, stream: int, requests: int, cv: float, every: int) -> np.ndarray:
    """Arrival times at rate 1 / ``every`` (s x rate): the sum of ``every`` Gamma gaps of mean 1
    and coefficient of variation ``cv`` each (every = 1: the deployment's own stream)."""
    rng = np.random.default_rng([seed, 1, stream])
    if cv <= 0.0:
        return np.arange(1, requests + 1, dtype=np.float64) * every
    shape = 1.0 / (cv * cv)
    return np.cumsum(rng.gamma(shape * every, 1.0 / shape, size=requests))


def _lengths(seed: int, stream: int, requests: int, prompt: Lengths, output: Lengths, max_context: int):
    """Prompt and reply lengths of a stream's first ``requests``, each from a random stream of its
    own, so that a longer run's requests begin with a shorter one's."""
    prompts = draw_lengths(np.random.default_rng([seed, 0, stream, 0]), requests, prompt)
    outputs = draw_lengths(np.random.default_rng([seed, 0, stream, 1]), requests, output)
    return cap_lengths(prompts, outputs, max_context)


def planned_workload(scenario: Scenario, spec: ServingSpec, max_context: int | None, plan: RunPlan):
    """(workload, measured requests) of a planned run: the arrivals up to its horizon, the
    first ``measured`` of them those issued before the window's end, lengths capped at
    ``max_context`` (None: not capped; the simulator rejects what the context cannot hold). The
    same seed draws the same requests at every rate, only faster (common random numbers across a
    sweep or a search)."""
    prompt = Lengths(spec.input_distribution, float(scenario.input_len), spec.length_cv)
    output = Lengths(spec.output_distribution, float(scenario.output_len), spec.length_cv)
    cv = spec.burstiness_cv if spec.arrival == "gamma" else 1.0
    every = plan.replicas if plan.sampled else 1
    stream_rate = plan.rate_rps / every
    arrivals, prompts, outputs, replicas = [], [], [], []
    for replica in range(plan.simulated_replicas if plan.sampled else 1):
        # Enough unit-rate arrivals to pass the horizon, with room for the draw's spread.
        expected = stream_rate * plan.horizon_s
        count = int(expected + 6.0 * math.sqrt(expected * every) + 16)
        unit = _unit_arrivals(spec.seed, replica, count, cv, every)
        times = unit / plan.rate_rps
        while times[-1] < plan.horizon_s:
            count *= 2
            unit = _unit_arrivals(spec.seed, replica, count, cv, every)
            times = unit / plan.rate_rps
        kept = int(np.searchsorted(times, plan.horizon_s, side="right"))
        prompt_tokens, output_tokens = _lengths(spec.seed, replica, kept, prompt, output, max_context)
        arrivals.append(times[:kept])
        prompts.append(prompt_tokens)
        outputs.append(output_tokens)
        replicas.append(np.full(kept, replica, dtype=np.int64))
    arrival_s = np.concatenate(arrivals)
    order = np.argsort(arrival_s, kind="stable")
    arrival_s = arrival_s[order]
    measured = int(np.searchsorted(arrival_s, plan.window_end_s, side="left"))
    workload = Workload(arrival_s, np.concatenate(prompts)[order], np.concatenate(outputs)[order],
                        np.zeros(arrival_s.size), replica=np.concatenate(replicas)[order] if plan.sampled else None)
    return workload, measured


# ---- runners: a deployment's runs at any rate, sized for a steady state ----------------------------


@dataclass(frozen=True)
class RateRunner:
    """Runs of one deployment at a chosen rate, each sized for a steady state:
    ``run_at(rate, record_iterations=True)`` gives (``RunResult``, its measurement ``Window``)
    (both pools of a disaggregated one; without records when a caller reads only ``slo_check``),
    ``scale_rps`` the rate its static best batch would sustain, about which rates are worth
    trying, ``devices`` what it occupies and ``e2e_s`` the latency its runs are sized by."""

    run_at: Callable[..., tuple[RunResult, Window]]
    scale_rps: float
    devices: int
    e2e_s: float


def replica_batch(setup: ServerSetup, scenario: Scenario) -> int:
    """The sequences one replica holds at once at the mean lengths (KV cache and sequence limit)."""
    mean_context = max(scenario.input_len + scenario.output_len // 2, 1)
    return max(1, min(setup.max_num_seqs, setup.kv_tokens // mean_context))


def horizon_bin_width_s(horizon_s: float) -> float:
    """The bins' first width: half of them span the arrivals (they widen as the run goes on)."""
    return max(horizon_s, 1e-6) / (DEFAULT_BINS / 2)


def planned_run(scenario: Scenario, spec: ServingSpec, setup: ServerSetup, server: Server, plan: RunPlan,
                *, record_iterations: bool = True, engine: str = "kernel") -> tuple[RunResult, Window]:
    """One run of ``plan`` on ``server`` (the deployment's, routed by ``spec``): the sample of
    round-robin replicas, or every replica on the whole stream."""
    workload, measured = planned_workload(scenario, spec, None, plan)
    if plan.sampled:
        server = replace(server, replicas=plan.simulated_replicas, router="assigned")
    result = simulate(workload, server, record_iterations=record_iterations, measured_requests=measured,
                      max_time_s=plan.drain_limit_s, bin_width_s=horizon_bin_width_s(plan.horizon_s), engine=engine)
    result.replicas_represented = plan.replicas
    return result, planned_window(result, plan)


def planned_window(result: RunResult, plan: RunPlan) -> Window:
    """The window of a planned run: its steady window, or, stopped at its drain limit, the whole
    run marked as not draining."""
    if result.capped and result.run_end_s >= plan.drain_limit_s:
        return replace(steady_window(result), note=f"the waiting queue did not drain: the window's requests were "
                       f"still in the system {DRAIN_LIMIT_E2E:g} end-to-end latencies after the arrivals stopped",
                       undrained=True)
    return steady_window(result, plan.warmup_s, plan.window_end_s)


def rate_runner(engine: Engine, scenario: Scenario, spec: ServingSpec) -> RateRunner:
    """The aggregated deployment of ``scenario`` (resolved), or the spec's disaggregated one.

    Raises ScenarioError when the model cannot be served there (the weights leave no room)."""
    if spec.arrival in ("offline", "closed"):
        spec = spec.with_changes(arrival="poisson")
    if not spec.disaggregated:
        setup = server_setup(engine, scenario, spec)
        server = server_of(setup, deployment_physics(engine, scenario, setup), spec.router)
        e2e_s = e2e_estimate_s(engine, scenario, replica_batch(setup, scenario))

        def run_at(rate: float, record_iterations: bool = True) -> tuple[RunResult, Window]:
            plan = plan_open_loop(rate, setup.replicas, spec.router, e2e_s)
            return planned_run(scenario, spec, setup, server, plan, record_iterations=record_iterations)

        return RateRunner(run_at, static_best_rate(engine, scenario, setup), setup.replicas * setup.devices_per_replica,
                          e2e_s)

    prefill_setup = server_setup(engine, scenario, spec, spec.prefill_replicas)
    decode_setup = server_setup(engine, scenario, spec, spec.decode_replicas)
    prefill_server = server_of(prefill_setup, deployment_physics(engine, scenario, prefill_setup), spec.router)
    decode_physics = deployment_physics(engine, scenario, decode_setup)
    decode_server = server_of(decode_setup, decode_physics, spec.router)
    link = kv_link(engine, scenario, spec, decode_physics)
    e2e_s = e2e_estimate_s(engine, scenario, replica_batch(decode_setup, scenario))

    def run_disaggregated(rate: float, record_iterations: bool = True) -> tuple[RunResult, Window]:
        # The pools couple through the transfers: every replica on the whole stream.
        plan = plan_open_loop(rate, decode_setup.replicas, "least-outstanding", e2e_s)
        workload, _ = planned_workload(scenario, spec, None, plan)
        combined = simulate_disaggregated(workload, prefill_server, decode_server, link,
                                          record_iterations=record_iterations, max_time_s=plan.drain_limit_s,
                                          bin_width_s=horizon_bin_width_s(plan.horizon_s)).combined
        return combined, planned_window(combined, plan)

    # The decode pool's static best: decode holds the requests longest, so it bounds the rate
    # unless prefill is starved of replicas, which the search's trickle still brackets.
    scale = static_best_rate(engine, scenario, decode_setup)
    devices = (prefill_setup.replicas + decode_setup.replicas) * decode_setup.devices_per_replica
    return RateRunner(run_disaggregated, scale, devices, e2e_s)


def capacity_of(engine: Engine, scenario: Scenario, spec: ServingSpec) -> CapacityResult:
    """The largest rate meeting the spec's SLO, aggregated or disaggregated as the spec says
    (``capacity.capacity``); the search's runs keep no iteration records, only the run at the
    answer does."""
    runner = rate_runner(engine, scenario, spec)
    return capacity(lambda rate: runner.run_at(rate, record_iterations=False), slo_of(spec), runner.scale_rps,
                    recorded_run_at_rate=runner.run_at)
