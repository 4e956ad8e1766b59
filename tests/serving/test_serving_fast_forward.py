"""Fast-forward changes no output: every run is the same, to the bit, with it on and off, in the
kernel and in the reference; and the two fast-forward the same iterations."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from serving_cases import (
    ATTENTION_EDGES,
    Server,
    assert_runs_equal,
    assert_runs_identical,
    random_case,
    steady_case,
)

from accelscope.engine.studies.serving import (
    KvLink,
    Lengths,
    draw_workload,
    simulate,
    simulate_disaggregated,
    trace_workload,
)

STEADY_CASES = range(160)


def both_ways(workload, server, bounds, engine="kernel"):
    """(stepped, fast-forwarded) runs of one case."""
    return tuple(
        simulate(workload, dataclasses.replace(server, fast_forward=on), engine=engine, **bounds) for on in (False, True)
    )


@pytest.mark.parametrize("seed", STEADY_CASES)
def test_kernel_fast_forward_changes_nothing_on_long_decodes(seed):
    stepped, fast = both_ways(*steady_case(seed))
    assert_runs_identical(stepped, fast)
    assert stepped.fast_forwarded == 0


@pytest.mark.parametrize("seed", range(48))
def test_kernel_fast_forward_changes_nothing_on_the_twin_cases(seed):
    stepped, fast = both_ways(*random_case(seed))
    assert_runs_identical(stepped, fast)


@pytest.mark.parametrize("seed", range(0, 160, 4))
def test_reference_fast_forward_changes_nothing_and_matches_the_kernel(seed):
    workload, server, bounds = steady_case(seed)
    stepped, fast = both_ways(workload, server, bounds, engine="reference")
    assert_runs_identical(stepped, fast)
    kernel = simulate(workload, server, **bounds)
    assert_runs_equal(fast, kernel)
    assert fast.fast_forwarded == kernel.fast_forwarded


def test_the_steady_cases_fast_forward_through_every_feature():
    """Windows open in most runs, and in runs that preempt, are capped, reject, close the loop
    over several replicas, route by outstanding requests, cache a prefix, and whose decodes
    cross a window or attention chunk edge; static batches never fast-forward."""
    seen = dict.fromkeys(
        ("preempted", "capped", "rejected", "closed-loop replicas", "least-outstanding", "prefix", "edge crossed"), 0
    )
    forwarded = iterations = 0
    for seed in STEADY_CASES:
        workload, server, bounds = steady_case(seed)
        result = simulate(workload, server, **bounds)
        if server.policy == "static":
            assert result.fast_forwarded == 0
            continue
        iterations += result.iterations
        forwarded += result.fast_forwarded
        if result.fast_forwarded == 0:
            continue
        seen["preempted"] += result.total_preemptions > 0
        seen["capped"] += result.capped
        seen["rejected"] += result.rejected > 0
        seen["closed-loop replicas"] += workload.users > 0 and server.replicas > 1
        seen["least-outstanding"] += server.router == "least-outstanding" and server.replicas > 1
        seen["prefix"] += server.prefix_tokens >= server.block_size
        edge = ATTENTION_EDGES.get(server_physics_name(server))
        if edge is not None:
            crossing = (workload.prompt_tokens < edge) & (workload.prompt_tokens + result.tokens_emitted > edge + 1)
            seen["edge crossed"] += bool(crossing.any())
    assert min(seen.values()) >= 3, seen
    assert forwarded > 0.4 * iterations


def server_physics_name(server):
    from serving_cases import physics

    for name in ATTENTION_EDGES:
        if physics(name)[1] is server.cost_model:
            return name
    return None


@pytest.mark.parametrize("physics_name", ["short-window", "chunked", "window"])
@pytest.mark.parametrize("engine", ["kernel", "reference"])
def test_decodes_across_a_window_or_chunk_edge(physics_name, engine):
    """Three requests decode across the edge together, in one window."""
    edge = ATTENTION_EDGES[physics_name]
    workload = trace_workload([0.0, 0.0, 0.0], [edge - 40, edge - 3, edge - 90], [200, 120, 150])
    server = Server(physics_name, max_num_seqs=8, max_batched_tokens=32768, kv_blocks_total=10**5,
                    max_model_len=16384)
    stepped, fast = both_ways(workload, server, {}, engine=engine)
    assert_runs_identical(stepped, fast)
    # One prefill for all three (each emits its first token), then 199 decode iterations in
    # one window, which the replies leave as they end.
    assert fast.iterations == 200 and fast.fast_forwarded == 199


@pytest.mark.parametrize("policy", ["vllm", "trtllm-max-util"])
@pytest.mark.parametrize("engine", ["kernel", "reference"])
def test_a_window_closes_when_the_next_step_would_preempt(policy, engine):
    """Two requests of 11 blocks each decode in a pool of 15: a window until the blocks run
    out, then a preemption, exactly as stepped."""
    workload = trace_workload([0.0, 0.0], [64, 64], [100, 100])
    server = Server(policy=policy, max_num_seqs=4, max_batched_tokens=512, block_size=16, kv_blocks_total=15)
    stepped, fast = both_ways(workload, server, {}, engine=engine)
    assert_runs_identical(stepped, fast)
    assert fast.total_preemptions > 0 and fast.fast_forwarded > 16


def test_caps_stop_a_window_where_stepping_stops():
    workload = trace_workload([0.0, 0.01], [100, 300], [500, 400])
    for bounds in ({"max_iterations": 137}, {"max_time_s": 0.7}, {"max_iterations": 3}):
        stepped, fast = both_ways(workload, Server(), bounds)
        assert_runs_identical(stepped, fast)
        assert fast.capped and np.any(fast.tokens_emitted > 1)


@pytest.mark.parametrize("engine", ["kernel", "reference"])
def test_disaggregated_pools_fast_forward_without_a_change(engine):
    """The decode pool admits requests whose first token came with their KV (an irregular
    first gap) into its windows as they arrive."""
    workload = draw_workload(12, 40, 30.0, Lengths("lognormal", 200, 0.8), Lengths("lognormal", 60, 0.8))
    pools = (Server(replicas=2, kv_blocks_total=60, max_num_seqs=6, max_batched_tokens=256),
             Server(replicas=2, router="least-outstanding", kv_blocks_total=40, max_num_seqs=8))
    link = KvLink(latency_s=2e-3, bandwidth_bytes_per_s=5e9)
    stepped, fast = (
        simulate_disaggregated(workload, *(dataclasses.replace(pool, fast_forward=on) for pool in pools), link,
                               engine=engine)
        for on in (False, True)
    )
    for pool in ("prefill", "decode", "combined"):
        assert_runs_identical(getattr(stepped, pool), getattr(fast, pool))
    assert fast.decode.fast_forwarded > 100 and fast.decode.total_preemptions > 0


def test_requests_routed_during_a_window_join_it():
    """Poisson arrivals into a vLLM replica decoding others: the prefill iterations too are
    window steps, so nearly every iteration is fast-forwarded."""
    workload = draw_workload(5, 60, 8.0, Lengths("lognormal", 300, 0.5), Lengths("lognormal", 120, 0.5))
    server = Server(max_num_seqs=64, max_batched_tokens=2048, kv_blocks_total=10**5)
    for engine in ("kernel", "reference"):
        stepped, fast = both_ways(workload, server, {}, engine=engine)
        assert_runs_identical(stepped, fast)
        assert fast.iterations - fast.fast_forwarded < 5
