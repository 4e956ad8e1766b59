"""Stretches change no output but rounding: every request's times, counts and gaps are those of
the run stepped one iteration at a time (to the bit in the reference, which adds a stretch's
durations one by one; to 1e-9 in the kernel, which sums them in closed form), and the kernel
with stretches equals the reference with stretches."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from serving_cases import (
    ATTENTION_EDGES,
    Server,
    assert_runs_equal,
    assert_same_requests,
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
    """(stepped, with stretches) runs of one case."""
    return tuple(
        simulate(workload, dataclasses.replace(server, stretches=on), engine=engine, **bounds) for on in (False, True)
    )


def comparable(bounds):
    """A bound on records stops a run with stretches later than the same run stepped (a stretch
    is one record): the comparison leaves it out."""
    return {name: value for name, value in bounds.items() if name != "max_records"}


@pytest.mark.parametrize("seed", STEADY_CASES)
def test_kernel_stretches_change_nothing_on_long_decodes(seed):
    workload, server, bounds = steady_case(seed)
    stepped, stretched = both_ways(workload, server, comparable(bounds))
    assert_same_requests(stepped, stretched, exact=False)
    assert stepped.stretches == 0 and stepped.records == stepped.iterations


@pytest.mark.parametrize("seed", range(48))
def test_kernel_stretches_change_nothing_on_the_twin_cases(seed):
    workload, server, bounds = random_case(seed)
    stepped, stretched = both_ways(workload, server, comparable(bounds))
    assert_same_requests(stepped, stretched, exact=False)


@pytest.mark.parametrize("seed", range(0, 160, 4))
def test_reference_stretches_change_nothing_and_match_the_kernel(seed):
    workload, server, bounds = steady_case(seed)
    stepped, stretched = both_ways(workload, server, comparable(bounds), engine="reference")
    assert_same_requests(stepped, stretched, exact=True)
    kernel = simulate(workload, server, **bounds)
    assert_runs_equal(simulate(workload, server, engine="reference", **bounds), kernel, each_bin=False)


def test_the_steady_cases_run_stretches_through_every_feature():
    """Stretches run in most runs, and in runs that preempt, are capped, reject, close the loop
    over several replicas, route by outstanding requests, cache a prefix, and whose decodes cross
    a window or attention chunk edge; static batches never run one; and most iterations are
    inside stretches, the records a small share of them."""
    seen = dict.fromkeys(
        ("preempted", "capped", "rejected", "closed-loop replicas", "least-outstanding", "prefix", "edge crossed"), 0
    )
    records = iterations = 0
    for seed in STEADY_CASES:
        workload, server, bounds = steady_case(seed)
        result = simulate(workload, server, **bounds)
        if server.policy == "static":
            assert result.stretches == 0
            continue
        iterations += result.iterations
        records += result.records
        if result.stretches == 0:
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
    assert records < 0.5 * iterations


def server_physics_name(server):
    from serving_cases import physics

    for name in ATTENTION_EDGES:
        if physics(name)[1] is server.cost_model:
            return name
    return None


@pytest.mark.parametrize("physics_name", ["short-window", "chunked", "window"])
@pytest.mark.parametrize("engine", ["kernel", "reference"])
def test_decodes_across_a_window_or_chunk_edge(physics_name, engine):
    """Three requests decode across the edge together: the stretches stop at it (the positions
    grow differently beyond it) and at each reply's end."""
    edge = ATTENTION_EDGES[physics_name]
    workload = trace_workload([0.0, 0.0, 0.0], [edge - 40, edge - 3, edge - 90], [200, 120, 150])
    server = Server(physics_name, max_num_seqs=8, max_batched_tokens=32768, kv_blocks_total=10**5,
                    max_model_len=16384)
    stepped, stretched = both_ways(workload, server, {}, engine=engine)
    assert_same_requests(stepped, stretched, exact=engine == "reference")
    # One prefill for all three (each emits its first token), then 199 decode iterations.
    assert stretched.iterations == 200 and stretched.records <= 12 and stretched.stretches >= 4


@pytest.mark.parametrize("policy", ["vllm", "trtllm-max-util"])
@pytest.mark.parametrize("engine", ["kernel", "reference"])
def test_a_stretch_stops_before_the_step_that_would_preempt(policy, engine):
    """Two requests of 11 blocks each decode in a pool of 15: a stretch until the blocks run
    out, then a preemption, exactly as stepped."""
    workload = trace_workload([0.0, 0.0], [64, 64], [100, 100])
    server = Server(policy=policy, max_num_seqs=4, max_batched_tokens=512, block_size=16, kv_blocks_total=15)
    stepped, stretched = both_ways(workload, server, {}, engine=engine)
    assert_same_requests(stepped, stretched, exact=engine == "reference")
    assert stretched.total_preemptions > 0 and stretched.stretches >= 2


def test_a_time_cap_stops_a_stretch_where_stepping_stops():
    workload = trace_workload([0.0, 0.01], [100, 300], [500, 400])
    for bounds in ({"max_time_s": 0.7}, {"max_time_s": 2.5}):
        stepped, stretched = both_ways(workload, Server(), bounds)
        assert_same_requests(stepped, stretched, exact=False)
        assert stretched.capped and np.any(stretched.tokens_emitted > 1)


def test_a_record_cap_stops_a_run_with_stretches_no_sooner_than_stepping():
    workload = trace_workload([0.0, 0.01], [100, 300], [500, 400])
    for records in (3, 137):
        stepped, stretched = both_ways(workload, Server(), {"max_records": records})
        assert stepped.capped and stretched.records <= records
        assert np.all(stretched.tokens_emitted >= stepped.tokens_emitted)


@pytest.mark.parametrize("engine", ["kernel", "reference"])
def test_disaggregated_pools_run_stretches_without_a_change(engine):
    """The decode pool admits requests whose first token came with their KV (an irregular
    first gap) into its windows as they arrive."""
    workload = draw_workload(12, 40, 30.0, Lengths("lognormal", 200, 0.8), Lengths("lognormal", 60, 0.8))
    pools = (Server(replicas=2, kv_blocks_total=60, max_num_seqs=6, max_batched_tokens=256),
             Server(replicas=2, router="least-outstanding", kv_blocks_total=40, max_num_seqs=8))
    link = KvLink(latency_s=2e-3, bandwidth_bytes_per_s=5e9)
    stepped, stretched = (
        simulate_disaggregated(workload, *(dataclasses.replace(pool, stretches=on) for pool in pools), link,
                               engine=engine)
        for on in (False, True)
    )
    for pool in ("prefill", "decode", "combined"):
        assert_same_requests(getattr(stepped, pool), getattr(stretched, pool), exact=engine == "reference")
    assert stretched.decode.stretches > 5 and stretched.decode.total_preemptions > 0


def test_a_lone_long_reply_is_a_handful_of_events():
    """A reasoning reply of 4,000 tokens alone on a replica: one prefill and a stretch (cut only
    where the positions' growth or the blocks change), not 4,000 iterations' records."""
    workload = trace_workload([0.0], [800], [4000])
    result = simulate(workload, Server(kv_blocks_total=10**5, max_model_len=16384))
    assert result.iterations == 4000 and result.records <= 4
