"""Disaggregated serving as a choice: runs at a rate for either deployment, its capacity at the
SLO, and how best to split a device budget between prefill and decode.

A deployment of ``R`` replicas (each the scenario's TP x PP group) can serve aggregated, every
replica doing both phases (``dp = R``), or disaggregated, ``P`` replicas prefilling and
``D = R - P`` decoding with the KV cache carried between them. Which serves more requests per
second under the SLO depends on the workload: long prompts and a tight TTFT favour more prefill
replicas; long replies and a tight TPOT more decode ones (SERVING.md section 6). This module
answers it by simulation, each option's capacity found by the same bisection as the aggregated
one, so the options are compared on equal terms.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ...core.errors import ScenarioError
from ...core.scenario import Scenario
from ...core.serving import ServingSpec
from ...physics.engine import Engine
from .capacity import CapacityResult, capacity
from .disaggregated import simulate_disaggregated
from .run import RunResult, simulate
from .study import (
    CAPACITY_HIGH_SHARE,
    CAPACITY_LOW_SHARE,
    CAPACITY_STEPS,
    _server,
    deployment_physics,
    kv_link,
    requests_at_rates,
    server_setup,
    slo_of,
    static_best_rate,
)

MAX_SPLIT_REPLICAS = 64  # a split search tries every P:D of at most this many replicas


@dataclass(frozen=True)
class RateRunner:
    """Runs of one deployment at a chosen rate: ``run_at(rate, record_iterations=True)`` gives
    the whole run (both pools of a disaggregated one; without iteration records when a caller
    reads only ``slo_check``), ``scale_rps`` the rate its static best batch would sustain, about
    which rates are worth trying, and ``devices`` what it occupies."""

    run_at: Callable[..., RunResult]
    scale_rps: float
    devices: int


def rate_runner(engine: Engine, scenario: Scenario, spec: ServingSpec) -> RateRunner:
    """The aggregated deployment of ``scenario`` (resolved), or the spec's disaggregated one.

    Raises ScenarioError when the model cannot be served there (the weights leave no room)."""
    if spec.arrival in ("offline", "closed"):
        spec = spec.with_changes(arrival="poisson")
    if not spec.disaggregated:
        setup = server_setup(engine, scenario, spec)
        server = _server(setup, deployment_physics(engine, scenario, setup), spec.router)
        at_rate = requests_at_rates(scenario, spec, setup.max_model_len)

        def run_at(rate: float, record_iterations: bool = True) -> RunResult:
            return simulate(at_rate(rate), server, record_iterations=record_iterations)

        return RateRunner(run_at, static_best_rate(engine, scenario, setup), setup.replicas * setup.devices_per_replica)

    prefill_setup = server_setup(engine, scenario, spec, spec.prefill_replicas)
    decode_setup = server_setup(engine, scenario, spec, spec.decode_replicas)
    prefill_server = _server(prefill_setup, deployment_physics(engine, scenario, prefill_setup), spec.router)
    decode_physics = deployment_physics(engine, scenario, decode_setup)
    decode_server = _server(decode_setup, decode_physics, spec.router)
    link = kv_link(engine, scenario, spec, decode_physics)
    decode_at_rate = requests_at_rates(scenario, spec, decode_setup.max_model_len)

    def run_disaggregated(rate: float, record_iterations: bool = True) -> RunResult:
        workload = decode_at_rate(rate)
        return simulate_disaggregated(workload, prefill_server, decode_server, link,
                                      record_iterations=record_iterations).combined

    # The decode pool's static best: decode holds the requests longest, so it bounds the rate
    # unless prefill is starved of replicas, which the search's low end still brackets.
    scale = static_best_rate(engine, scenario, decode_setup)
    devices = (prefill_setup.replicas + decode_setup.replicas) * decode_setup.devices_per_replica
    return RateRunner(run_disaggregated, scale, devices)


def capacity_of(engine: Engine, scenario: Scenario, spec: ServingSpec) -> CapacityResult:
    """The largest rate meeting the spec's SLO, aggregated or disaggregated as the spec says;
    the search's runs keep no iteration records, only the run at the answer does."""
    runner = rate_runner(engine, scenario, spec)
    return capacity(lambda rate: runner.run_at(rate, record_iterations=False), slo_of(spec),
                    CAPACITY_LOW_SHARE * runner.scale_rps, CAPACITY_HIGH_SHARE * runner.scale_rps, CAPACITY_STEPS,
                    recorded_run_at_rate=runner.run_at)


@dataclass(frozen=True)
class SplitOption:
    """One way to use the budget: ``prefill_replicas`` 0 means aggregated."""

    prefill_replicas: int
    decode_replicas: int
    capacity_rps: float  # 0: even a trickle misses the SLO
    failing_rps: float  # the smallest rate tried above it that failed
    devices: int

    @property
    def aggregated(self) -> bool:
        return self.prefill_replicas == 0

    @property
    def capacity_per_device_rps(self) -> float:
        return self.capacity_rps / self.devices

    @property
    def label(self) -> str:
        return "aggregated" if self.aggregated else f"{self.prefill_replicas}:{self.decode_replicas}"


@dataclass(frozen=True)
class SplitStudy:
    """Every prefill:decode split of ``replicas`` and the aggregated deployment of as many."""

    replicas: int
    devices_per_replica: int
    aggregated: SplitOption
    splits: tuple[SplitOption, ...]  # P = 1 ... replicas - 1

    @property
    def best_split(self) -> SplitOption | None:
        """The split with the largest capacity (the fewer prefill replicas on a tie); None
        when no split meets the SLO at any rate."""
        found = max(self.splits, key=lambda option: (option.capacity_rps, -option.prefill_replicas), default=None)
        return found if found is not None and found.capacity_rps > 0.0 else None

    @property
    def disaggregated_gain(self) -> float:
        """Best split's capacity over the aggregated one's (nan when either is 0)."""
        best = self.best_split
        if best is None or self.aggregated.capacity_rps <= 0.0:
            return math.nan
        return best.capacity_rps / self.aggregated.capacity_rps


def split_study(engine: Engine, scenario: Scenario, spec: ServingSpec, replicas: int) -> SplitStudy:
    """The capacity at the spec's SLO of ``replicas`` replicas of ``scenario`` (resolved) served
    aggregated, and split P:D for every P from 1 to replicas - 1."""
    if not 2 <= replicas <= MAX_SPLIT_REPLICAS:
        raise ScenarioError(f"a prefill:decode split needs 2 to {MAX_SPLIT_REPLICAS} replicas, got {replicas}")
    aggregated_spec = spec.with_changes(prefill_replicas=0, decode_replicas=0)
    aggregated_scenario = engine.resolve(scenario.with_changes(dp=replicas))
    per_replica = scenario.tp * scenario.pp

    def option(prefill: int, decode: int, found: CapacityResult) -> SplitOption:
        return SplitOption(prefill, decode, found.rate_per_s, found.failing_rate_per_s, replicas * per_replica)

    aggregated = option(0, 0, capacity_of(engine, aggregated_scenario, aggregated_spec))
    splits = tuple(
        option(prefill, replicas - prefill,
               capacity_of(engine, scenario, spec.with_changes(prefill_replicas=prefill,
                                                               decode_replicas=replicas - prefill)))
        for prefill in range(1, replicas)
    )
    return SplitStudy(replicas, per_replica, aggregated, splits)
