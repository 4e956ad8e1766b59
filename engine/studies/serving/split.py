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
from dataclasses import dataclass

from ...core.errors import ScenarioError
from ...core.scenario import Scenario
from ...core.serving import ServingSpec
from ...physics.engine import Engine
from .capacity import CapacityResult
from .steady import RateRunner, capacity_of, rate_runner

__all__ = ["RateRunner", "SplitOption", "SplitStudy", "capacity_of", "rate_runner", "split_study"]

MAX_SPLIT_REPLICAS = 64  # a split search tries every P:D of at most this many replicas


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
