"""What the Serving tab shows, computed without Qt: every shown accelerator's served throughput
and latency percentiles against the request rate, its capacity at the SLO, and the selected
accelerator's run at the current rate (its timeline and distributions).

Each accelerator's curve has its own rates, log-spaced from a fraction to a multiple of what
it would finish as a static batch at its largest batch (:func:`study.static_best_rate`), so
that a slow and a fast accelerator both get their points where their curves bend; the plot
shares the log rate axis.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ...core.errors import AccelscopeError
from ...core.scenario import Scenario
from ...core.serving import ServingSpec
from ...core.workspace import Workspace
from ...physics.engine import Engine
from . import layout
from .metrics import Metrics, slo_check
from .run import RunResult
from .capacity import FOUND
from .split import capacity_of, rate_runner
from .study import ServedRun, simulate_served, simulated_disaggregated_run

SWEEP_POINTS = 16
SWEEP_LOW_SHARE = 0.1  # of the static best rate
SWEEP_HIGH_SHARE = 1.5
HISTOGRAM_BINS = 40


@dataclass(frozen=True)
class RateCurve:
    """One accelerator's served runs against the offered rate (requests/s)."""

    accelerator: str
    rates_rps: np.ndarray
    throughput_output_tok_s: np.ndarray
    goodput_rps: np.ndarray
    ttft_p99_s: np.ndarray
    tpot_p99_s: np.ndarray
    unstable: np.ndarray  # bool: the waiting queue grew (not a steady state)
    problem: str | None = None  # why the accelerator cannot serve the scenario (no curve)


@dataclass(frozen=True)
class Capacity:
    """An accelerator's capacity at the SLO (``capacity.CapacityResult`` in the spec's
    deployment): between ``rate_rps`` and ``failing_rate_rps``."""

    accelerator: str
    rate_rps: float  # the largest rate found to meet the SLO; 0 when none does; nan when it cannot serve at all
    failing_rate_rps: float
    devices: int
    problem: str | None = None  # why it cannot serve the scenario at all
    # The run at the capacity (nan when no rate meets the SLO): what its cost is priced from.
    output_tokens_per_s: float = math.nan
    total_tokens_per_s: float = math.nan
    power_W: float = math.nan
    status: str = FOUND  # capacity.FOUND, NONE or UNDETERMINED
    reason: str | None = None  # why none, or why undetermined


@dataclass(frozen=True)
class Histogram:
    edges: np.ndarray  # bin edges (s), log-spaced
    weights: np.ndarray  # samples per bin


@dataclass(frozen=True)
class CurrentRun:
    """The selected accelerator at the spec's rate, for the timeline and the distributions."""

    served: ServedRun
    time_s: np.ndarray  # each iteration's start, from the first issue
    running: np.ndarray  # requests running after each iteration's scheduling, all replicas
    waiting: np.ndarray
    kv_used: np.ndarray  # share of the KV blocks in use (the busiest replica's pool)
    ttft: Histogram
    itl: Histogram

    @property
    def metrics(self) -> Metrics:
        return self.served.metrics


def sweep_rates(best_rps: float, points: int = SWEEP_POINTS) -> np.ndarray:
    return np.geomspace(SWEEP_LOW_SHARE * best_rps, SWEEP_HIGH_SHARE * best_rps, points)


def rate_curve(engine: Engine, scenario: Scenario, spec: ServingSpec, points: int = SWEEP_POINTS) -> RateCurve:
    """Served runs of ``scenario`` (resolved) at ``points`` rates about its capacity (the
    spec's deployment: aggregated, or its prefill and decode pools); offline and closed-loop
    specs are swept with Poisson arrivals."""
    try:
        runner = rate_runner(engine, scenario, spec)
    except AccelscopeError as error:
        empty = np.zeros(0)
        return RateCurve(scenario.accelerator, empty, empty, empty, empty, empty, np.zeros(0, dtype=bool), str(error))
    rates = sweep_rates(runner.scale_rps, points)
    slo = (None if spec.slo_ttft_ms is None else spec.slo_ttft_ms / 1e3,
           None if spec.slo_tpot_ms is None else spec.slo_tpot_ms / 1e3)
    metrics = []
    for rate in rates:
        # slo_check reads per-request outputs and bins only: the runs need no iteration records.
        run, window = runner.run_at(float(rate), record_iterations=False)
        metrics.append(slo_check(run, *slo, window=window))
    return RateCurve(
        accelerator=scenario.accelerator,
        rates_rps=rates,
        throughput_output_tok_s=np.array([m.output_tokens_per_s for m in metrics]),
        goodput_rps=np.array([m.goodput_per_s for m in metrics]),
        ttft_p99_s=np.array([m.ttft_s.p99 for m in metrics]),
        tpot_p99_s=np.array([m.tpot_s.p99 for m in metrics]),
        unstable=np.array([m.unstable for m in metrics], dtype=bool),
    )


def each_shown(engine: Engine, workspace: Workspace, *, threads: int | None = None,
               cancelled: Callable[[], bool] = lambda: False) -> Iterator[tuple[RateCurve, Capacity]]:
    """Every shown accelerator's curve and capacity, in the shown order, as each is ready.

    The accelerators run side by side on ``threads`` threads (default: every core; the
    simulator's kernel releases the GIL); one thread runs them in order here. Once
    ``cancelled()`` is true no further accelerator is started and the iteration ends."""

    def one(accelerator: str) -> tuple[RateCurve, Capacity] | None:
        if cancelled():
            return None
        curve = rate_curve(engine, workspace.scenario_on(accelerator), workspace.serving)
        return curve, capacity_on(engine, workspace, accelerator)

    threads = max(1, min(threads or os.cpu_count() or 1, len(workspace.shown)))
    if threads == 1:
        for accelerator in workspace.shown:
            both = one(accelerator)
            if both is None:
                return
            yield both
        return
    with ThreadPoolExecutor(threads, thread_name_prefix="accelscope-serving-shown") as pool:
        for both in pool.map(one, workspace.shown):
            if both is None:
                return
            yield both


def capacity_on(engine: Engine, workspace: Workspace, accelerator: str) -> Capacity:
    """One accelerator's capacity at the workspace's SLO, in the spec's deployment."""
    scenario = workspace.scenario_on(accelerator)
    spec = workspace.serving
    replicas = spec.prefill_replicas + spec.decode_replicas if spec.disaggregated else scenario.dp
    devices = scenario.tp * scenario.pp * replicas
    try:
        result = capacity_of(engine, scenario, spec)
    except AccelscopeError as error:
        return Capacity(accelerator, math.nan, math.nan, devices, str(error))
    if result.rate_per_s <= 0.0:
        return Capacity(accelerator, result.rate_per_s, result.failing_rate_per_s, devices, status=result.status,
                        reason=result.reason)
    metrics = result.metrics
    return Capacity(accelerator, result.rate_per_s, result.failing_rate_per_s, devices, None,
                    metrics.output_tokens_per_s, metrics.total_tokens_per_s, metrics.average_power_w,
                    result.status, result.reason)


def _histogram(values: np.ndarray, weights: np.ndarray | None = None) -> Histogram:
    values = np.asarray(values, dtype=np.float64)
    keep = np.isfinite(values) & (values > 0)
    if weights is not None:
        keep &= np.asarray(weights) > 0
    values = values[keep]
    if values.size == 0:
        return Histogram(np.zeros(0), np.zeros(0))
    low, high = float(values.min()), float(values.max())
    if high <= low * 1.0001:
        low, high = low / 1.1, high * 1.1
    edges = np.geomspace(low, high, HISTOGRAM_BINS + 1)
    counts, _ = np.histogram(values, edges, weights=None if weights is None else np.asarray(weights)[keep])
    return Histogram(edges, counts.astype(np.float64))


def current_run(engine: Engine, workspace: Workspace) -> CurrentRun:
    """The selected accelerator's run at the spec's rate (raises AccelscopeError when it
    cannot serve the scenario)."""
    spec = workspace.serving
    served = (simulated_disaggregated_run(engine, workspace.scenario, spec) if spec.disaggregated
              else simulate_served(engine, workspace.scenario, spec))
    run: RunResult = served.run
    start = float(np.nanmin(run.issue_s)) if run.issue_s.size else 0.0
    # In time order: a disaggregated run lists the prefill pool's iterations, then the decode pool's.
    order = np.argsort(run.iteration_start_s, kind="stable")
    replicas = run.iteration_column(layout.IT_REPLICA)[order]
    blocks = run.iteration_column(layout.IT_KV_BLOCKS)[order].astype(np.float64)
    pool = max(served.setup.kv_blocks_total, 1)
    # Requests running and waiting on all replicas at each iteration: the last value each replica
    # reported, carried forward.
    running = _carried_sum(replicas, run.iteration_column(layout.IT_RUNNING)[order], run.replicas)
    waiting = _carried_sum(replicas, run.iteration_column(layout.IT_WAITING)[order], run.replicas)
    ttft = run.first_token_s - run.issue_s
    # A stretch's iterations at their mean duration, each with its tokens' weight.
    iterations = run.iterations_per_record.astype(np.float64)
    itl_values = np.concatenate([run.iteration_duration_s / np.maximum(iterations, 1.0), run.gap_s])
    itl_weights = np.concatenate([run.iteration_column(layout.IT_ITL_TOKENS) * iterations,
                                  np.ones(run.gap_s.size)])
    return CurrentRun(
        served=served,
        time_s=run.iteration_start_s[order] - start,
        running=running,
        waiting=waiting,
        kv_used=blocks / pool,
        ttft=_histogram(ttft),
        itl=_histogram(itl_values, itl_weights),
    )


def _carried_sum(replicas: np.ndarray, values: np.ndarray, count: int) -> np.ndarray:
    """At each record, the sum over replicas of each one's latest value (0 before its first)."""
    values = values.astype(np.float64)
    if count == 1:
        return values
    positions = np.arange(values.shape[0])
    total = np.zeros(values.shape[0])
    for replica in range(count):
        mine = replicas == replica
        # The index of this replica's latest record at or before each position (-1: none yet).
        latest = np.maximum.accumulate(np.where(mine, positions, -1))
        total += np.where(latest >= 0, values[np.maximum(latest, 0)], 0.0)
    return total
