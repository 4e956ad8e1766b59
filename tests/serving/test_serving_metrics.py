"""Metrics: percentile definition, the steady-state window (MSER-5, offline phases), Little's
law, stability on the waiting queue, SLO counts, energy."""

from __future__ import annotations

import numpy as np
import pytest
from serving_cases import Server

from accelscope.engine.studies.serving import (
    Lengths,
    draw_closed_loop_workload,
    draw_workload,
    simulate,
    summarize,
    trace_workload,
)
from accelscope.engine.studies.serving.metrics import (
    UNSTABLE_QUEUE_GROWTH,
    distribution,
    linear_runs_distribution,
    mser5_truncation,
    steady_window,
    weighted_percentiles,
)

PROMPT = Lengths("lognormal", 512, 1.0)
OUTPUT = Lengths("lognormal", 128, 1.0)


def test_percentiles_are_the_inverted_cdf():
    values = np.array([4.0, 1.0, 3.0, 2.0])
    assert list(weighted_percentiles(values, np.ones(4), (0.25, 0.5, 0.51, 0.9, 1.0))) == [1.0, 2.0, 3.0, 4.0, 4.0]
    rng = np.random.default_rng(0)
    sample = rng.lognormal(size=1001)
    for q in (0.5, 0.9, 0.99):
        expected = np.percentile(sample, 100 * q, method="inverted_cdf")
        assert weighted_percentiles(sample, np.ones(sample.size), (q,))[0] == expected
    # Integer weights act as repetitions.
    weights = rng.integers(1, 5, size=200)
    values = rng.normal(size=200)
    repeated = np.repeat(values, weights)
    for q in (0.5, 0.9, 0.99):
        assert weighted_percentiles(values, weights, (q,))[0] == np.percentile(repeated, 100 * q, method="inverted_cdf")


@pytest.mark.parametrize("size", [1, 2, 3, 7, 100, 1000, 1001])
def test_unweighted_distribution_equals_the_weighted_one_with_unit_weights(size):
    """Samples without weights take a shorter path (one sort); it must pick the same samples."""
    rng = np.random.default_rng(size)
    values = np.round(rng.lognormal(size=size), 2)  # ties included
    plain = distribution(values)
    weighted = distribution(values, np.ones(size))
    assert plain == weighted
    for q, got in zip((0.5, 0.9, 0.99), (plain.p50, plain.p90, plain.p99), strict=True):
        assert got == np.percentile(values, 100 * q, method="inverted_cdf")


def test_runs_of_evenly_spaced_samples_have_the_distribution_of_their_samples():
    """A record's iterations (durations rising or falling evenly from its first to its last)
    give the percentiles and mean of the samples written out one by one, without writing them."""
    rng = np.random.default_rng(1)
    for _ in range(200):
        runs = int(rng.integers(1, 30))
        first = np.round(rng.uniform(0, 10, runs), 3)
        counts = rng.integers(1, 20, runs)
        last = np.where((rng.random(runs) < 0.5) | (counts == 1), first, np.round(rng.uniform(0, 10, runs), 3))
        weights = rng.integers(0, 4, runs)
        samples = np.concatenate([np.linspace(a, b, c) for a, b, c in zip(first, last, counts, strict=True)])
        sample_weights = np.repeat(weights, counts).astype(np.float64)
        expected = distribution(samples, sample_weights)
        got = linear_runs_distribution(first, last, counts, weights)
        assert got.count == expected.count
        for field in ("mean", "p50", "p90", "p99", "max"):
            want, have = getattr(expected, field), getattr(got, field)
            assert (np.isnan(want) and np.isnan(have)) or have == pytest.approx(want, rel=1e-12, abs=1e-12), field


def test_mser5_truncates_a_warm_up_and_nothing_of_a_level_series():
    rng = np.random.default_rng(4)
    level = rng.normal(10.0, 1.0, 2000)
    assert mser5_truncation(level) <= 100
    warm = np.concatenate([np.linspace(0.0, 10.0, 300), level])
    assert 200 <= mser5_truncation(warm) <= 400
    # A series that never levels off is truncated as far as allowed: no steady state.
    assert mser5_truncation(np.arange(2000.0)) >= 900


def test_distribution_of_nothing_is_nan():
    empty = distribution(np.array([]))
    assert empty.count == 0 and np.isnan(empty.p99)


def test_percentiles_are_ordered_in_a_run():
    result = simulate(draw_workload(1, 800, 6.0, PROMPT, OUTPUT), Server(kv_blocks_total=3000))
    metrics = summarize(result)
    for summary in (metrics.ttft_s, metrics.tpot_s, metrics.e2e_s, metrics.itl_s):
        assert summary.count > 0
        assert summary.p50 <= summary.p90 <= summary.p99 <= summary.max
    assert metrics.itl_exact


def test_littles_law_holds_in_a_long_stable_run():
    result = simulate(draw_workload(2, 4000, 6.0, PROMPT, OUTPUT), Server())
    metrics = summarize(result)
    assert not metrics.unstable
    assert metrics.littles_law_ratio == pytest.approx(1.0, abs=0.03)
    assert metrics.requests_in_system_mean > 5.0


def saturated_rate(server, seed):
    """Completions per second of an offline run: the server's capacity for these lengths."""
    metrics = summarize(simulate(draw_workload(seed, 1500, np.inf, PROMPT, OUTPUT), server))
    return metrics.request_rate_per_s


@pytest.mark.parametrize(
    "server",
    [Server(), Server(policy="trtllm-no-evict", kv_blocks_total=4000), Server(replicas=2, max_num_seqs=64)],
    ids=["vllm", "no-evict", "two-replicas"],
)
def test_unstable_flags_overload_and_never_half_load(server):
    capacity_per_s = saturated_rate(server, 99)
    for seed in range(4):
        half = summarize(simulate(draw_workload(seed, 1500, 0.5 * capacity_per_s, PROMPT, OUTPUT), server))
        double = summarize(simulate(draw_workload(seed, 1500, 2.0 * capacity_per_s, PROMPT, OUTPUT), server))
        assert not half.unstable and abs(half.queue_growth) < 0.05 and half.steady
        assert double.unstable and double.queue_growth > UNSTABLE_QUEUE_GROWTH


def test_closed_loop_is_never_unstable():
    workload = draw_closed_loop_workload(1, 1000, 64, 0.0, PROMPT, OUTPUT)
    metrics = summarize(simulate(workload, Server()))
    assert not metrics.unstable


def test_rates_goodput_and_attainment_by_hand_over_a_run_too_short_for_a_steady_state():
    workload = draw_workload(3, 12, 8.0, PROMPT, OUTPUT)
    result = simulate(workload, Server())
    ttft = result.first_token_s - result.issue_s
    tpot = (result.end_s - result.first_token_s) / np.maximum(workload.output_tokens - 1, 1)
    span_s = result.end_s.max() - result.issue_s.min()
    ttft_limit_s = float(np.median(ttft))
    tpot_limit_s = float(np.quantile(tpot[workload.output_tokens > 1], 0.8))
    meeting = (ttft <= ttft_limit_s) & ((workload.output_tokens == 1) | (tpot <= tpot_limit_s))
    metrics = summarize(result, ttft_limit_s, tpot_limit_s)
    # Too few requests to measure a steady state: the whole run, and a note that says so.
    assert not metrics.steady and "too few requests" in metrics.steady_note
    assert metrics.span_s == pytest.approx(span_s)
    assert metrics.output_tokens_per_s == pytest.approx(workload.output_tokens.sum() / span_s)
    total_tokens = workload.output_tokens.sum() + workload.prompt_tokens.sum()
    assert metrics.total_tokens_per_s == pytest.approx(total_tokens / span_s)
    assert metrics.request_rate_per_s == pytest.approx(12 / span_s)
    assert metrics.goodput_per_s == pytest.approx(meeting.sum() / span_s)
    assert metrics.slo_attainment == pytest.approx(meeting.mean())
    assert 0.2 < metrics.slo_attainment < 0.7
    # Either limit alone.
    assert summarize(result, ttft_limit_s=ttft_limit_s).slo_attainment == pytest.approx(np.mean(ttft <= ttft_limit_s))
    assert summarize(result).slo_attainment == 1.0


def test_a_steady_window_leaves_out_the_warm_up_and_the_drain():
    """4,000 requests at a moderate rate: the window starts after the warm-up MSER-5 finds and
    ends at the last arrival; its latencies are over the requests issued in it, and its
    throughput is what arrives in it: their replies' tokens over its length (within 2 %, the
    window's edges); the whole span, drain included, reads lower."""
    workload = draw_workload(5, 4000, 20.0, PROMPT, OUTPUT)
    result = simulate(workload, Server())
    metrics = summarize(result)
    window = steady_window(result)
    assert metrics.steady and window.steady and not metrics.unstable
    assert 0.0 < window.start_s < 0.1 * window.end_s and window.end_s == pytest.approx(workload.arrival_s[-1])
    issued = (result.issue_s >= metrics.window_start_s) & (result.issue_s < metrics.window_end_s)
    assert metrics.measured_requests == issued.sum() > 3500
    ttft = (result.first_token_s - result.issue_s)[issued]
    assert metrics.ttft_s.p99 == np.percentile(ttft, 99, method="inverted_cdf")
    arriving = workload.output_tokens[issued].sum() / metrics.window_s
    assert metrics.output_tokens_per_s == pytest.approx(arriving, rel=0.02)
    assert metrics.output_tokens_per_s > workload.output_tokens.sum() / metrics.span_s


def test_energy_adds_idle_power_between_iterations():
    # Two requests 10 s apart on 2 replicas: most of the window is idle.
    workload = trace_workload([0.0, 10.0], [100, 100], [10, 10])
    server = Server(replicas=2, idle_power_w=80.0)
    result = simulate(workload, server)
    metrics = summarize(result)
    window_s = result.end_s[1] - 0.0
    busy_s = result.iteration_duration_s.sum()
    expected_j = result.iteration_energy_j.sum() + 80.0 * (2 * window_s - busy_s)
    assert metrics.energy_j == pytest.approx(expected_j, rel=1e-12)
    assert metrics.average_power_w == pytest.approx(expected_j / window_s, rel=1e-12)
    assert metrics.output_tokens_per_joule == pytest.approx(20 / expected_j, rel=1e-12)
    assert metrics.tokens_per_joule == pytest.approx((200 + 20) / expected_j, rel=1e-12)  # input + output
    # An H100 executing draws at least its busy floor (0.79 x 700 W) and at most its 700 W TDP.
    iteration_power_w = result.iteration_energy_j / result.iteration_duration_s
    assert np.all((iteration_power_w >= 0.79 * 700.0 - 1e-9) & (iteration_power_w <= 700.0 + 1e-9))


def test_batch_queue_and_kv_summaries():
    workload = trace_workload(np.zeros(6), [100] * 6, [4] * 6)
    result = simulate(workload, Server(max_num_seqs=4))
    metrics = summarize(result)
    assert metrics.batch_max == 4
    # Prefill of 4 (2 waiting), 3 decodes of 4 (a stretch), then prefill of 2 and 3 decodes of 2.
    assert list(result.iterations_per_record) == [1, 3, 1, 3]
    durations = result.iteration_duration_s
    assert metrics.queue_mean == pytest.approx(2 * durations[:2].sum() / durations.sum(), rel=1e-12)
    assert metrics.batch_mean == pytest.approx(
        (4 * durations[:2].sum() + 2 * durations[2:].sum()) / durations.sum(), rel=1e-12
    )
    assert metrics.kv_blocks_max == 4 * 7


@pytest.mark.parametrize("seed", range(12))
def test_the_slo_check_is_summarizes_fields(seed):
    """The capacity search and the rate curves read a run through ``slo_check``: every field
    it has is the same as ``summarize``'s, NaNs in the same places, with and without limits."""
    from dataclasses import fields

    from serving_cases import random_case

    from accelscope.engine.studies.serving.metrics import slo_check

    workload, server, bounds = random_case(seed)
    result = simulate(workload, server, **bounds)
    for limits in ((None, None), (0.05, None), (None, 0.01), (0.2, 0.02)):
        check, full = slo_check(result, *limits), summarize(result, *limits)
        for field in fields(check):
            mine, theirs = getattr(check, field.name), getattr(full, field.name)
            assert mine == theirs or (mine != mine and theirs != theirs), (seed, limits, field.name)
