"""Conservation, KV exhaustion, prefix caching, routing, closed loops, bounds and rejections."""

from __future__ import annotations

import time

import numpy as np
import pytest
from serving_cases import Server, assert_runs_identical, random_case

from accelscope.engine.studies.serving import (
    Lengths,
    draw_closed_loop_workload,
    draw_workload,
    layout,
    simulate,
    simulate_many,
    trace_workload,
)


@pytest.mark.parametrize("seed", range(0, 240, 3))
def test_conservation(seed):
    workload, server, bounds = random_case(seed)
    bounds.pop("max_records", None)
    bounds.pop("max_time_s", None)
    result = simulate(workload, server, **bounds)
    assert not result.capped
    finished = result.status == layout.STATUS_FINISHED
    rejected = result.status == layout.STATUS_REJECTED
    # Each request ends exactly once: finished or rejected, and only finished ones emit.
    assert np.all(finished | rejected)
    assert np.all(np.isfinite(result.end_s[finished])) and np.all(np.isnan(result.end_s[rejected]))
    assert np.array_equal(result.tokens_emitted[finished], workload.output_tokens[finished])
    assert np.all(result.tokens_emitted[rejected] == 0)
    assert np.all(result.first_token_s[finished] >= result.issue_s[finished])
    assert np.all(result.end_s[finished] >= result.first_token_s[finished])
    # Every emitted token after the first is an ITL sample, counted once.
    itl_samples = result.iteration_total(layout.IT_ITL_TOKENS) + result.gap_s.size + result.gaps_dropped
    assert itl_samples == np.sum(workload.output_tokens[finished] - 1)
    prompt_total = workload.prompt_tokens[finished].sum()
    prefill_tokens = result.iteration_total(layout.IT_PREFILL_TOKENS)
    if server.prefix_tokens == 0:
        assert prefill_tokens >= prompt_total
    if result.total_preemptions == 0 and server.prefix_tokens == 0:
        assert prefill_tokens == prompt_total
        if server.policy != "static":
            decode_tokens = result.iteration_total(layout.IT_DECODE_TOKENS)
            assert decode_tokens == np.sum(workload.output_tokens[finished] - 1)
            assert result.iteration_total(layout.IT_TOKENS) == prompt_total + decode_tokens
    # Blocks never exceed the pool.
    assert np.all(result.iteration_column(layout.IT_KV_BLOCKS) <= server.kv_blocks_total)


def itl_total_s(result):
    return np.sum(result.iteration_duration_s * result.iteration_column(layout.IT_ITL_TOKENS)) + result.gap_s.sum()


def test_itl_samples_sum_to_each_request_decode_time_with_preemptions():
    """The ITL multiset is exact: its count is every token after the first, its sum the sum of
    (end - first token) over requests, also when preemptions break the regular gaps."""
    workload = draw_workload(4, 60, np.inf, Lengths("lognormal", 60, 0.8), Lengths("lognormal", 30, 0.8))
    result = simulate(workload, Server(max_num_seqs=16, max_batched_tokens=512, block_size=8, kv_blocks_total=60))
    assert result.total_preemptions > 0 and result.gap_s.size > 0
    assert np.all(result.status == layout.STATUS_FINISHED)
    assert itl_total_s(result) == pytest.approx(np.sum(result.end_s - result.first_token_s), rel=1e-9)
    assert result.iteration_total(layout.IT_ITL_TOKENS) + result.gap_s.size == np.sum(workload.output_tokens - 1)


@pytest.mark.parametrize("policy", ["vllm", "trtllm-no-evict"])
def test_itl_samples_are_exact_when_the_token_budget_skips_decodes(policy):
    # 16 requests arriving with their first token emitted 50 ms earlier and a budget of 8 tokens:
    # the last 8 sit in the running list, skipped by the budget, until the first 8 finish.
    workload = trace_workload(np.zeros(16), [100] * 16, [20] * 16)
    prior_token_s = np.full(16, -0.05)
    server = Server(policy=policy, max_num_seqs=16, max_batched_tokens=8)
    result = simulate(workload, server, prior_token_s=prior_token_s)
    assert np.all(result.status == layout.STATUS_FINISHED)
    # One irregular gap per request (from the earlier token to its first decode here); those of
    # the skipped requests span the first 8 requests' whole decode.
    assert result.gap_s.size == 16
    next_iteration = np.flatnonzero(result.iteration_start_s == result.end_s[:8].max())[0]
    next_end_s = result.iteration_start_s[next_iteration] + result.iteration_duration_s[next_iteration]
    assert result.gap_s[8:] == pytest.approx(np.full(8, next_end_s + 0.05), rel=1e-12)
    assert itl_total_s(result) == pytest.approx(np.sum(result.end_s - prior_token_s), rel=1e-9)
    assert result.iteration_total(layout.IT_ITL_TOKENS) + result.gap_s.size == 16 * 19


def tight_kv_case(policy):
    # 24 requests of 200 + 100 tokens at once on 100 blocks of 16 tokens (1,600 tokens).
    workload = trace_workload(np.zeros(24), [200] * 24, [100] * 24)
    server = Server(policy=policy, max_num_seqs=16, max_batched_tokens=1024, block_size=16, kv_blocks_total=100)
    return workload, simulate(workload, server)


def test_kv_exhaustion_makes_vllm_preempt_and_recompute():
    workload, result = tight_kv_case("vllm")
    assert np.all(result.status == layout.STATUS_FINISHED)
    assert result.total_preemptions > 0
    # The recomputed prompts and generated tokens show up as extra prefill work.
    assert result.iteration_total(layout.IT_PREFILL_TOKENS) > workload.prompt_tokens.sum()
    assert result.iteration_column(layout.IT_KV_BLOCKS).max() == 100


def test_kv_exhaustion_never_preempts_under_no_evict():
    workload, result = tight_kv_case("trtllm-no-evict")
    assert np.all(result.status == layout.STATUS_FINISHED)
    assert result.total_preemptions == 0
    assert result.iteration_total(layout.IT_PREFILL_TOKENS) == workload.prompt_tokens.sum()
    # Reservations to completion (ceil(300/16) = 19 blocks) admit at most 5 at a time.
    assert result.iteration_column(layout.IT_RUNNING).max() == 5


def test_kv_exhaustion_pauses_under_max_utilization():
    _, result = tight_kv_case("trtllm-max-util")
    assert np.all(result.status == layout.STATUS_FINISHED)
    assert result.total_preemptions > 0


def test_prefix_cache_saves_prefill_work_and_blocks():
    # Prompts of 1,100 tokens sharing a 1,024-token system prompt: one alone, then two together.
    workload = trace_workload([0.0, 10.0, 10.0], [1100] * 3, [4] * 3)
    plain = simulate(workload, Server(block_size=16, kv_blocks_total=1000, max_batched_tokens=4096))
    shared = simulate(
        workload, Server(block_size=16, kv_blocks_total=1000, max_batched_tokens=4096, prefix_tokens=1024)
    )
    # The first request computes everything; the two others hit 1,024 tokens (64 full blocks).
    assert plain.iteration_total(layout.IT_PREFILL_TOKENS) == 3300
    assert shared.iteration_total(layout.IT_PREFILL_TOKENS) == 3300 - 2 * 1024
    assert np.all(shared.first_token_s[1:] - 10.0 < plain.first_token_s[1:] - 10.0)
    # Together: 2 x ceil(1100/16) = 138 blocks, or the 64 shared ones plus 2 x 5 of their own.
    together = plain.iteration_start_s == 10.0
    assert plain.iteration_column(layout.IT_KV_BLOCKS)[together][0] == 138
    together = shared.iteration_start_s == 10.0
    assert shared.iteration_column(layout.IT_KV_BLOCKS)[together][0] == 74


def test_round_robin_and_least_outstanding_routing():
    workload = trace_workload(np.zeros(7), [10, 500, 10, 10, 10, 10, 10], [2, 200, 2, 2, 2, 2, 2])
    round_robin = simulate(workload, Server(replicas=3))
    assert list(round_robin.replica) == [0, 1, 2, 0, 1, 2, 0]
    # Routed at the same instant, least-outstanding spreads evenly too (ties go to the lowest index).
    least = simulate(workload, Server(replicas=3, router="least-outstanding"))
    assert list(least.replica) == [0, 1, 2, 0, 1, 2, 0]
    # Later arrivals avoid replica 1, busy with the long request.
    later = trace_workload([0.0, 0.0, 0.0, 1.0, 1.0, 1.0], [10, 500, 10, 10, 10, 10], [2, 200, 2, 2, 2, 2])
    least = simulate(later, Server(replicas=3, router="least-outstanding"))
    assert list(least.replica) == [0, 1, 2, 0, 2, 0]


def test_closed_loop_keeps_users_busy_one_request_each():
    workload = draw_closed_loop_workload(3, 40, 3, 0.05, Lengths("fixed", 50), Lengths("fixed", 5))
    result = simulate(workload, Server(max_num_seqs=8))
    assert np.all(result.status == layout.STATUS_FINISHED)
    assert np.all(result.issue_s[:3] == 0.0)
    # Every later request is issued by a user at one of the earlier requests' end plus its think time.
    ends = np.sort(result.end_s)
    for index in range(3, 40):
        issue_without_think = result.issue_s[index] - workload.think_s[index]
        assert np.min(np.abs(ends - issue_without_think)) < 1e-12
    # Never more than 3 requests in the system.
    in_system = result.iteration_column(layout.IT_WAITING) + result.iteration_column(layout.IT_RUNNING)
    assert in_system.max() <= 3


def test_huge_rate_with_many_requests_answers_in_bounded_time():
    workload = draw_workload(1, 100_000, 1e9, Lengths("fixed", 128), Lengths("fixed", 16))
    started = time.perf_counter()
    result = simulate(workload, Server(), max_records=5_000)
    elapsed_s = time.perf_counter() - started
    assert result.capped and result.records == 5_000
    unfinished = result.status == layout.STATUS_UNFINISHED
    assert unfinished.sum() > 0 and np.all(np.isnan(result.end_s[unfinished]))
    from accelscope.engine.studies.serving import summarize

    metrics = summarize(result)
    assert metrics.unstable and metrics.capped
    assert elapsed_s < 30.0


def test_time_cap_stops_the_run():
    workload = draw_workload(2, 200, 50.0, Lengths("fixed", 100), Lengths("fixed", 50))
    result = simulate(workload, Server(), max_time_s=1.0)
    assert result.capped
    assert np.nanmax(result.end_s) <= 1.0
    assert np.all(result.iteration_start_s <= 1.0)
    assert np.any(result.status == layout.STATUS_UNFINISHED)
    # Requests that had not arrived by the cap were never issued.
    assert np.all(np.isnan(result.issue_s[workload.arrival_s > 1.0]))


@pytest.mark.parametrize("policy", ["vllm", "trtllm-no-evict", "trtllm-max-util"])
def test_zero_kv_blocks_rejects_everything(policy):
    workload = draw_workload(3, 50, 10.0)
    result = simulate(workload, Server(policy=policy, kv_blocks_total=0))
    assert np.all(result.status == layout.STATUS_REJECTED)
    assert result.rejected == 50 and result.iterations == 0 and not result.capped


@pytest.mark.parametrize("policy", ["vllm", "trtllm-no-evict", "trtllm-max-util", "static"])
def test_prompt_longer_than_max_model_len_is_rejected(policy):
    workload = trace_workload([0.0, 0.1, 0.2], [100, 5000, 100], [10, 10, 10])
    result = simulate(workload, Server(policy=policy, max_model_len=4096))
    assert list(result.status) == [layout.STATUS_FINISHED, layout.STATUS_REJECTED, layout.STATUS_FINISHED]
    assert result.rejected == 1
    assert result.issue_s[1] == pytest.approx(0.1)


def test_request_larger_than_the_pool_is_rejected_not_deadlocked():
    # 40 blocks of 16 tokens hold 640 tokens; the second request needs 1,000.
    workload = trace_workload([0.0, 0.0, 0.0], [100, 900, 100], [10, 100, 10])
    for policy in ("vllm", "trtllm-no-evict", "trtllm-max-util"):
        result = simulate(workload, Server(policy=policy, kv_blocks_total=40))
        assert list(result.status) == [layout.STATUS_FINISHED, layout.STATUS_REJECTED, layout.STATUS_FINISHED]


def test_invalid_inputs_are_refused():
    with pytest.raises(ValueError):
        simulate(trace_workload([1.0, 0.5], [10, 10], [1, 1]), Server())
    with pytest.raises(ValueError):
        simulate(trace_workload([0.0], [0], [1]), Server())
    with pytest.raises(ValueError):
        simulate(trace_workload([0.0], [10], [1]), Server(policy="fifo"))
    with pytest.raises(ValueError):
        simulate(trace_workload([0.0], [10], [1]), Server(block_size=0))


def test_simulate_many_gives_each_run_in_order_on_any_number_of_threads():
    cases = [random_case(seed) for seed in range(12)]
    runs = [(workload, server) for workload, server, _ in cases]
    alone = [simulate(workload, server) for workload, server in runs]
    for threads in (1, 2, 5):
        together = simulate_many(runs, threads=threads)
        assert len(together) == len(runs)
        for one, other in zip(alone, together, strict=True):
            assert_runs_identical(one, other)
    assert simulate_many(runs, threads=2, summary=lambda run: run.iterations) == [run.iterations for run in alone]
    assert simulate_many([]) == []
    with pytest.raises(ValueError):
        simulate_many(runs, threads=0)


def test_a_rate_sweep_summarizes_each_rate_as_its_own_run():
    from accelscope.engine.core.scenario import Scenario
    from accelscope.engine.core.serving import ServingSpec
    from accelscope.engine.physics.engine import Engine
    from accelscope.engine.studies.serving import study

    engine = Engine()
    scenario = engine.resolve(Scenario("llama-3.1-8b", "h100-sxm"))
    spec = ServingSpec(seed=3)
    rates = study.rate_grid(1.0, 20.0, 4)
    swept = study.sweep_rates(engine, scenario, spec, rates)
    assert [rate for rate, _ in swept] == list(rates)
    for rate, metrics in swept:
        served = study.simulate_served(engine, scenario, spec, rate_rps=rate, offered_load=False)
        assert repr(metrics) == repr(served.metrics) and metrics.steady
