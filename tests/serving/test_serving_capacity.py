"""Capacity at an SLO as a steady-state bracket: the search on a deployment's runs sized for a
steady state converges whatever the seed and request count, scales with round-robin replicas,
says 0 only when a request alone misses the SLO and undetermined (never 0) when a run reaches a
bound; and the served figures against closed forms (M/D/1, the MLPerf-style check)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from serving_cases import Server as PhysicsServer

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.serving import ServingSpec
from accelscope.engine.studies.serving import Slo, capacity, simulate, summarize, trace_workload
from accelscope.engine.studies.serving.capacity import BRACKET, FOUND, NONE, UNDETERMINED, meets_slo
from accelscope.engine.studies.serving.metrics import Window, slo_check
from accelscope.engine.studies.serving.steady import capacity_of, rate_runner

# Llama 3.1 8B on one H100, 512 in / 256 out, MLPerf's Llama-3.1-8B server objective.
SPEC = ServingSpec(slo_ttft_ms=2000.0, slo_tpot_ms=100.0)


@pytest.fixture(scope="module")
def scenario(engine):
    return engine.resolve(Scenario("llama-3.1-8b", "h100-sxm", input_len=512, output_len=256))


@pytest.fixture(scope="module")
def one_replica(engine, scenario):
    return capacity_of(engine, scenario, SPEC)


def test_the_capacity_is_a_narrow_bracket_whose_ends_meet_and_miss_the_slo(engine, scenario, one_replica):
    found = one_replica
    assert found.status == FOUND and found.reason is None
    assert 0.0 < found.rate_per_s < found.failing_rate_per_s <= found.rate_per_s * (1.0 + BRACKET)
    slo = Slo(2.0, 0.1)
    assert meets_slo(found.metrics, slo) and found.metrics.steady and not found.metrics.unstable
    run, window = rate_runner(engine, scenario, SPEC).run_at(found.failing_rate_per_s, False)
    assert not meets_slo(slo_check(run, 2.0, 0.1, window=window), slo)
    assert found.runs <= 16


def test_the_capacity_does_not_move_with_the_request_count_or_the_seed(engine, scenario, one_replica):
    """The search sizes its own runs: a spec's request count does not enter it, and another
    seed's draw lands within the bracket's width (3 %) of the first."""
    for changes in ({"requests": 500}, {"requests": 16000}):
        again = capacity_of(engine, scenario, SPEC.with_changes(**changes))
        assert again.rate_per_s == one_replica.rate_per_s
    for seed in (1, 2):
        other = capacity_of(engine, scenario, SPEC.with_changes(seed=seed))
        assert other.rate_per_s == pytest.approx(one_replica.rate_per_s, rel=0.03)


@pytest.mark.parametrize("replicas", [2, 8, 64])
def test_round_robin_replicas_serve_as_many_times_one(engine, scenario, one_replica, replicas):
    """k identical replicas behind round-robin each see every k-th arrival, a smoother stream than
    Poisson at lambda / k: together at least 0.95 x k times one replica."""
    found = capacity_of(engine, engine.resolve(scenario.with_changes(dp=replicas)), SPEC)
    assert found.status == FOUND
    assert found.rate_per_s >= 0.95 * replicas * one_replica.rate_per_s
    assert found.rate_per_s <= 1.5 * replicas * one_replica.rate_per_s


def test_at_seventy_percent_of_capacity_the_run_is_stable_and_serves_what_arrives(engine, scenario, one_replica):
    """The MLPerf-style check: at 70 % of the capacity the run is steady and stable, and its
    throughput is the rate times the mean reply, within 2 %."""
    rate = 0.7 * one_replica.rate_per_s
    run, window = rate_runner(engine, scenario, SPEC).run_at(rate)
    metrics = summarize(run, 2.0, 0.1, window=window)
    assert metrics.steady and not metrics.unstable and abs(metrics.queue_growth) < 0.05
    measured = (run.issue_s >= metrics.window_start_s) & (run.issue_s < metrics.window_end_s)
    mean_reply = run.output_tokens[measured].mean()
    assert metrics.output_tokens_per_s == pytest.approx(rate * mean_reply, rel=0.02)


def test_a_long_reply_model_gets_a_capacity(engine):
    """DeepSeek-R1 on 8 x B200 (TP 4, DP 2, FP4 weights), ~800-token prompts, ~3,900-token
    replies, p99 TTFT 2 s and TPOT 80 ms: its runs are steady and a rate meets the SLO."""
    scenario = engine.resolve(Scenario("deepseek-r1", "b200", input_len=800, output_len=3900, tp=4, dp=2,
                                       weight_precision="fp4"))
    found = capacity_of(engine, scenario, ServingSpec(slo_ttft_ms=2000.0, slo_tpot_ms=80.0))
    assert found.status == FOUND and found.rate_per_s > 0.0
    assert found.metrics.steady and not found.metrics.unstable


def test_capacity_is_zero_only_when_a_request_alone_misses_the_slo(engine, scenario):
    found = capacity_of(engine, scenario, SPEC.with_changes(slo_ttft_ms=1e-3))
    assert found.status == NONE and found.rate_per_s == 0.0 and found.runs == 1
    assert "a request alone misses the SLO" in found.reason and "TTFT" in found.reason


def test_capacity_is_monotone_in_the_slo(engine, scenario):
    slos = [(500.0, 30.0), (1000.0, 50.0), (2000.0, 100.0), (None, None)]
    rates = [capacity_of(engine, scenario, SPEC.with_changes(slo_ttft_ms=ttft, slo_tpot_ms=tpot))
             for ttft, tpot in slos]
    values = [found.rate_per_s for found in rates]
    assert values == sorted(values) and values[0] > 0.0
    # Without limits a rate must still be stable: the last one is bounded.
    assert rates[-1].status == FOUND and math.isfinite(rates[-1].failing_rate_per_s)


def test_a_run_that_reaches_a_bound_leaves_the_capacity_undetermined(scenario):
    """A run stopped by a safety bound says nothing of its rate: the search stops with the
    reason, and does not call the capacity 0."""
    server = PhysicsServer(max_num_seqs=64, kv_blocks_total=3000)
    requests = trace_workload(np.arange(200) * 0.01, np.full(200, 512), np.full(200, 64))

    def capped(rate):
        run = simulate(requests, server, max_time_s=0.5)
        return run, Window(0.0, 1.0)

    found = capacity(capped, Slo(2.0, 0.1), 10.0)
    assert found.status == UNDETERMINED and not found.determined
    assert "safety bound" in found.reason and found.rate_per_s == 0.0


def test_capacity_needs_a_positive_scale():
    with pytest.raises(ValueError):
        capacity(lambda rate: None, Slo(), 0.0)


def test_one_sequence_at_a_time_with_a_constant_service_time_is_an_md1_queue():
    """One replica, one request at a time, every request one iteration of the same length (a
    64-token prompt, one output token): an M/D/1 queue, whose mean wait is rho x S / (2 (1 - rho))."""
    server = PhysicsServer(max_num_seqs=1, max_batched_tokens=4096, kv_blocks_total=1000)
    rng = np.random.default_rng(8)
    service_s = float(simulate(trace_workload([0.0], [64], [1]), server).first_token_s[0])
    for load in (0.5, 0.8):
        arrival_s = np.cumsum(rng.exponential(service_s / load, 60_000))
        run = simulate(trace_workload(arrival_s, np.full(arrival_s.size, 64), np.ones(arrival_s.size, dtype=np.int64)),
                       server, record_iterations=False)
        wait_s = (run.first_token_s - run.issue_s - service_s)[2000:]
        assert wait_s.mean() == pytest.approx(load * service_s / (2.0 * (1.0 - load)), rel=0.05)
