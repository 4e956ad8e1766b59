"""A scenario served under traffic: the bridge from the engine's scenario to the simulator.

The simulator (``run.simulate``) knows requests, KV blocks and an opaque iteration cost. This
module sets it up the way a serving engine sets itself up on the scenario's hardware:

- **a replica** is the scenario's TP x PP group; ``dp`` replicas serve side by side (or, in
  disaggregated serving, the spec's prefill and decode replicas);
- **the KV cache** is sized from the engine's own memory fit, as each policy sizes it: vLLM
  takes ``memory_fraction`` of the device's *total* memory and subtracts the weights, the
  activation peak of a full iteration and the runtime; TensorRT-LLM takes the fraction of the
  memory *free* after those. The bytes per token are the engine's (TP- and MLA-aware), the
  block size the policy's;
- **an iteration's time and energy** are the engine's physics for the batch scheduled
  (``physics`` iteration cost), the same stage pass, overheads and power model as ``predict``;
- **the workload** is drawn from the spec about the scenario's mean prompt and reply lengths,
  capped by the model's context: exactly ``spec.requests`` requests when the spec names a count
  (a trace, a classroom example), else as many as a steady state needs (``steady.py``), the
  figures then measured on the run's steady-state window (``metrics.py``).

The deployment itself (limits, KV cache, iteration cost, links) is ``deployment.py``'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ...core.scenario import Scenario
from ...core.serving import ServingSpec
from ...physics.engine import Engine
from .capacity import CapacityResult
from .deployment import (
    MAX_KV_TOKENS,
    ServerSetup,
    deployment_physics,
    kv_link,
    seconds_of,
    server_of,
    server_setup,
    slo_of,
    static_best_rate,
)
from .disaggregated import DisaggregatedResult, KvLink, simulate_disaggregated
from .metrics import Metrics, steady_window, summarize, whole_run
from .run import RunResult, simulate
from .steady import (
    RunPlan,
    capacity_of,
    closed_loop_requests,
    e2e_estimate_s,
    horizon_bin_width_s,
    offline_requests,
    plan_open_loop,
    planned_run,
    planned_workload,
    rate_runner,
    replica_batch,
)
from .workload import Lengths, Workload, draw_closed_loop_workload, draw_workload

__all__ = [
    "MAX_KV_TOKENS", "ServedRun", "ServerSetup", "capacity_at_slo", "deployment_physics", "devices_for_rate",
    "draw_requests", "kv_link", "offered_rate", "rate_grid", "saturated_rate_rps", "server_of", "server_setup",
    "simulate_disaggregated_served", "simulate_served", "simulated_disaggregated_run", "slo_of",
    "static_best_rate", "sweep_rates",
]


@dataclass(frozen=True)
class ServedRun:
    scenario: Scenario
    spec: ServingSpec
    setup: ServerSetup
    rate_rps: float  # offered (math.inf offline, nan closed loop or trace)
    run: RunResult
    metrics: Metrics
    devices: int
    # Disaggregated runs: ``setup`` is the decode pool's, these the prefill pool's and the link.
    prefill_setup: ServerSetup | None = None
    link: KvLink | None = None
    plan: RunPlan | None = None  # a run sized for a steady state (None: the spec's request count)

    @property
    def disaggregated(self) -> bool:
        return self.prefill_setup is not None

    @property
    def sized(self) -> bool:
        """The run was sized for a steady state rather than given a request count."""
        return self.plan is not None or self.spec.requests is None


def draw_requests(scenario: Scenario, spec: ServingSpec, max_context: int | None, rate_rps: float | None = None,
                  requests: int | None = None) -> Workload:
    """``requests`` (default: the spec's count) of the spec's requests about the scenario's
    mean lengths (``rate_rps`` overrides the spec's), capped at ``max_context`` (None: a request
    longer than the model's context is rejected by the simulator, as a trace's is)."""
    count = requests if requests is not None else spec.requests
    if count is None:
        raise ValueError("draw_requests needs a request count (the spec sizes its runs by time)")
    prompt = Lengths(spec.input_distribution, float(scenario.input_len), spec.length_cv)
    output = Lengths(spec.output_distribution, float(scenario.output_len), spec.length_cv)
    if spec.arrival == "closed":
        return draw_closed_loop_workload(spec.seed, count, spec.concurrency, spec.think_s, prompt, output,
                                         max_context)
    rate = math.inf if spec.arrival == "offline" else (rate_rps if rate_rps is not None else spec.rate_rps)
    cv = spec.burstiness_cv if spec.arrival == "gamma" else 1.0
    return draw_workload(spec.seed, count, rate, prompt, output, max_context, cv)


def offered_rate(spec: ServingSpec, rate_rps: float | None = None) -> float:
    if spec.arrival == "closed":
        return math.nan
    if spec.arrival == "offline":
        return math.inf
    return rate_rps if rate_rps is not None else spec.rate_rps


def saturated_rate_rps(engine: Engine, scenario: Scenario, spec: ServingSpec) -> float:
    """Requests/s the deployment completes saturated (offline, the batch at its limit): the
    rate an offered load is measured against (rho = offered / saturated)."""
    offline = spec.with_changes(arrival="offline", requests=None, prefill_replicas=0, decode_replicas=0)
    run = simulate_served(engine, scenario, offline, offered_load=False)
    metrics = run.metrics
    mean_output = float(np.mean(run.run.output_tokens)) if run.run.output_tokens.size else math.nan
    return metrics.output_tokens_per_s / mean_output if mean_output > 0.0 else math.nan


def simulate_served(
    engine: Engine,
    scenario: Scenario,
    spec: ServingSpec,
    *,
    rate_rps: float | None = None,
    trace: Workload | None = None,
    reference: bool = False,
    offered_load: bool = True,
    end_to_end: bool = False,
) -> ServedRun:
    """One served run of ``scenario`` (resolved) under ``spec`` (validated), aggregated:
    exactly ``spec.requests`` requests when it names a count (or ``trace``), else a run sized
    for a steady state at the spec's (or ``rate_rps``) rate. ``reference`` runs the pure-Python
    twin (slow; for checking). With ``offered_load`` an open-loop run reports rho, the rate over
    what the deployment completes saturated (one more, offline run). ``end_to_end`` measures the
    whole run, first arrival to last completion (as a paper's served run is), not a steady window."""
    setup = server_setup(engine, scenario, spec)
    physics = deployment_physics(engine, scenario, setup)
    server = server_of(setup, physics, spec.router)
    ttft_limit, tpot_limit = seconds_of(spec.slo_ttft_ms), seconds_of(spec.slo_tpot_ms)
    engine_name = "reference" if reference else "kernel"
    rate = math.nan if trace is not None else offered_rate(spec, rate_rps)
    plan = None
    window = None
    if trace is not None or spec.requests is not None:
        workload = trace if trace is not None else draw_requests(scenario, spec, None, rate_rps)
        run = simulate(workload, server, engine=engine_name)
    elif spec.arrival in ("poisson", "gamma"):
        plan = plan_open_loop(rate, setup.replicas, spec.router, e2e_estimate_s(engine, scenario,
                                                                                replica_batch(setup, scenario)))
        run, window = planned_run(scenario, spec, setup, server, plan, engine=engine_name)
    elif spec.arrival == "offline" and spec.router == "round-robin":
        # Identical replicas each take every k-th request, all at once: one stands for them all.
        requests = offline_requests(replica_batch(setup, scenario))
        workload = draw_requests(scenario, spec, None, requests=requests)
        run = simulate(workload, replace(server, replicas=1), engine=engine_name)
        run.replicas_represented = setup.replicas
    else:
        count = (closed_loop_requests(spec.concurrency) if spec.arrival == "closed"
                 else setup.replicas * offline_requests(replica_batch(setup, scenario)))
        run = simulate(draw_requests(scenario, spec, None, requests=count), server, engine=engine_name)
    load = math.nan
    if offered_load and spec.arrival in ("poisson", "gamma") and trace is None:
        load = rate / saturated_rate_rps(engine, scenario, spec)
    if end_to_end:
        window = whole_run(run)
    metrics = summarize(run, ttft_limit, tpot_limit, window=window if window is not None else steady_window(run),
                        offered_load=load)
    return ServedRun(scenario, spec, setup, rate, run, metrics, setup.replicas * setup.devices_per_replica,
                     plan=plan)


def sweep_rates(engine: Engine, scenario: Scenario, spec: ServingSpec, rates_rps) -> list[tuple[float, Metrics]]:
    """(rate, metrics) of a run sized for a steady state at each of ``rates_rps`` (requests/s,
    whole deployment; Poisson or the spec's Gamma arrivals), in order."""
    runner = rate_runner(engine, scenario, spec)
    ttft_limit, tpot_limit = seconds_of(spec.slo_ttft_ms), seconds_of(spec.slo_tpot_ms)
    swept = []
    for rate in rates_rps:
        run, window = runner.run_at(float(rate))
        swept.append((float(rate), summarize(run, ttft_limit, tpot_limit, window=window)))
    return swept


def capacity_at_slo(engine: Engine, scenario: Scenario, spec: ServingSpec) -> CapacityResult:
    """The capacity of ``scenario`` (resolved) at the spec's SLO (``steady.capacity_of``): the
    largest request rate (whole deployment) whose steady state meets it, as a bracket."""
    return capacity_of(engine, scenario, spec)


def devices_for_rate(capacity_rps: float, target_rps: float, devices: int) -> int | None:
    """Devices a target rate needs, in whole deployments of ``devices``; None when none can."""
    if not capacity_rps > 0.0:
        return None
    return math.ceil(target_rps / capacity_rps) * devices


def simulate_disaggregated_served(
    engine: Engine, scenario: Scenario, spec: ServingSpec, *, rate_rps: float | None = None,
    prefill_scenario: Scenario | None = None,
) -> tuple[DisaggregatedResult, Metrics, ServerSetup, ServerSetup, KvLink]:
    """Prefill and decode pools of the spec's replica counts, each the scenario's TP x PP group
    (the prefill pool may run on another scenario: accelerator, layout), the KV cache carried
    over the spec's link; ``spec.requests`` requests, else as many as a steady state needs."""
    prefill_scenario = prefill_scenario or scenario
    prefill_setup = server_setup(engine, prefill_scenario, spec, spec.prefill_replicas)
    decode_setup = server_setup(engine, scenario, spec, spec.decode_replicas)
    prefill_physics = deployment_physics(engine, prefill_scenario, prefill_setup)
    decode_physics = deployment_physics(engine, scenario, decode_setup)
    link = kv_link(engine, scenario, spec, decode_physics)
    window = None
    if spec.requests is not None or spec.arrival == "offline":
        count = spec.requests if spec.requests is not None else decode_setup.replicas * offline_requests(
            replica_batch(decode_setup, scenario))
        workload = draw_requests(scenario, spec, None, rate_rps, requests=count)
        bin_width_s = None
    else:
        rate = offered_rate(spec, rate_rps)
        plan = plan_open_loop(rate, decode_setup.replicas, "least-outstanding",
                              e2e_estimate_s(engine, scenario, replica_batch(decode_setup, scenario)))
        workload, _ = planned_workload(scenario, spec, None, plan)
        bin_width_s = horizon_bin_width_s(plan.horizon_s)
        window = (plan.warmup_s, plan.window_end_s)
    result = simulate_disaggregated(workload, server_of(prefill_setup, prefill_physics, spec.router),
                                    server_of(decode_setup, decode_physics, spec.router), link,
                                    bin_width_s=bin_width_s)
    measured = steady_window(result.combined, *window) if window else steady_window(result.combined)
    metrics = summarize(result.combined, seconds_of(spec.slo_ttft_ms), seconds_of(spec.slo_tpot_ms), window=measured)
    return result, metrics, prefill_setup, decode_setup, link


def simulated_disaggregated_run(engine: Engine, scenario: Scenario, spec: ServingSpec) -> ServedRun:
    """A disaggregated run as one served run: both pools' iterations, each request's prefill
    issue and first token and its decode end (the decode pool's setup as ``setup``)."""
    result, metrics, prefill_setup, decode_setup, link = simulate_disaggregated_served(engine, scenario, spec)
    devices = (prefill_setup.replicas + decode_setup.replicas) * decode_setup.devices_per_replica
    return ServedRun(scenario, spec, decode_setup, offered_rate(spec), result.combined, metrics, devices,
                     prefill_setup, link)


def rate_grid(low: float, high: float, points: int = 16) -> np.ndarray:
    """``points`` rates spaced evenly on a log scale from ``low`` to ``high`` (requests/s)."""
    return np.geomspace(low, high, points)
