"""Runs whose every time is worked out by hand: the simulator's mechanics on a transparent stub
cost (reference simulator), and served runs against the static engine's own numbers (kernel,
real physics)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from serving_cases import Server as PhysicsServer
from serving_cases import assert_same_requests
from serving_cases import engine as shared_engine
from stub_cost import decode_positions_reference, iteration_cost_reference, make_cost, request_positions_reference

from accelscope.engine.studies.serving import Server, layout, summarize, trace_workload
from accelscope.engine.studies.serving import simulate as simulate_any

HOST_S = 1e-3
PER_SEQUENCE_S = 1e-4
COST = make_cost(
    host_s=HOST_S,
    per_sequence_s=PER_SEQUENCE_S,
    flops_per_token=1e9,
    attention_flops_per_position=1e6,
    flop_rate=1e12,
    weight_bytes=1e9,
    kv_bytes_per_position=1e5,
    byte_rate=1e12,
)
POLICIES = ("vllm", "trtllm-no-evict", "trtllm-max-util", "static")


def simulate(workload, server, engine="reference"):
    """The reference simulator with the stub's cost functions, stepped one iteration at a time
    (its records are those worked out below); the run with stretches has every request the same."""
    assert engine == "reference"
    stepped, stretched = (
        simulate_any(workload, dataclasses.replace(server, stretches=stretches), engine="reference",
                     request_positions=request_positions_reference, iteration_cost=iteration_cost_reference,
                     decode_positions=decode_positions_reference)
        for stretches in (False, True)
    )
    assert_same_requests(stepped, stretched, exact=True)
    return stepped


def server(policy):
    return Server(
        policy=policy, max_num_seqs=8, max_batched_tokens=4096, block_size=16, kv_blocks_total=1000,
        static_batch=8, cost=COST,
    )  # fmt: skip


@pytest.mark.parametrize("policy", POLICIES)
def test_one_request_at_a_time(policy):
    # Requests 100 s apart never meet: prompt 100, output 5.
    workload = trace_workload([0.0, 100.0, 200.0], [100, 100, 100], [5, 5, 5])
    result = simulate(workload, server(policy), engine="reference")
    # Prefill: 100 tokens attend to 1 + ... + 100 = 5050 positions; compute bound:
    # 1e-3 + 1e-4 + (100 * 1e9 + 1e6 * 5050) / 1e12 = 0.10615 s.
    prefill_s = 0.10615
    # Decode at context c: 1.1e-3 + (1e9 + 1e6 * (c + 1)) / 1e12 (compute beats 1e-3 + 1e-7 (c + 1)).
    decode_s = [1.1e-3 + 1.101e-3, 1.1e-3 + 1.102e-3, 1.1e-3 + 1.103e-3, 1.1e-3 + 1.104e-3]
    ttft = result.first_token_s - result.issue_s
    assert ttft == pytest.approx([prefill_s] * 3, rel=1e-12)
    assert result.end_s - result.issue_s == pytest.approx([prefill_s + sum(decode_s)] * 3, rel=1e-12)
    # 3 x (1 prefill + 4 decodes) iterations, each with one sequence.
    assert result.iterations == 15
    assert np.all(result.iteration_column(layout.IT_SEQUENCES) == 1)
    durations = result.iteration_duration_s.reshape(3, 5)
    assert durations == pytest.approx(np.array([[prefill_s] + decode_s] * 3), rel=1e-12)
    # Every inter-token gap is one batch-1 decode iteration.
    metrics = summarize(result)
    assert metrics.itl_s.count == 12
    assert result.gap_s.size == 0
    assert metrics.itl_s.max == pytest.approx(decode_s[-1], rel=1e-12)
    assert metrics.itl_s.mean == pytest.approx(sum(decode_s) / 4, rel=1e-12)
    assert metrics.tpot_s.mean == pytest.approx(sum(decode_s) / 4, rel=1e-12)


@pytest.mark.parametrize("policy", POLICIES)
def test_a_batch_at_time_zero(policy, engine="reference"):
    # 4 requests of prompt 50 and output 3 at t = 0, all fitting at once.
    workload = trace_workload(np.zeros(4), [50] * 4, [3] * 4)
    result = simulate(workload, server(policy), engine=engine)
    # Iteration 1 prefills all: 200 tokens, 4 * (1 + ... + 50) = 5100 positions:
    # 1e-3 + 4e-4 + (200e9 + 1e6 * 5100) / 1e12 = 0.2065 s.
    # Then output - 1 = 2 decodes of 4 sequences at contexts 50 and 51:
    # 1.4e-3 + (4e9 + 1e6 * 4 * 51) / 1e12 = 5.604e-3 s and 1.4e-3 + (4e9 + 1e6 * 4 * 52) / 1e12 = 5.608e-3 s.
    expected_durations = [0.2065, 5.604e-3, 5.608e-3]
    assert result.iterations == 3
    assert result.iteration_duration_s == pytest.approx(expected_durations, rel=1e-12)
    assert result.iteration_start_s == pytest.approx([0.0, 0.2065, 0.2065 + 5.604e-3], rel=1e-12)
    assert list(result.iteration_column(layout.IT_SEQUENCES)) == [4, 4, 4]
    assert list(result.iteration_column(layout.IT_TOKENS)) == [200, 4, 4]
    assert list(result.iteration_column(layout.IT_PREFILL_TOKENS)) == [200, 0, 0]
    assert list(result.iteration_column(layout.IT_DECODE_TOKENS)) == [0, 4, 4]
    assert list(result.iteration_column(layout.IT_ITL_TOKENS)) == [0, 4, 4]
    assert result.first_token_s == pytest.approx([0.2065] * 4, rel=1e-12)
    assert result.end_s == pytest.approx([0.2065 + 5.604e-3 + 5.608e-3] * 4, rel=1e-12)
    # KV blocks: ceil(50/16) = 4 per request, then ceil(51/16) = 4 and ceil(52/16) = 4.
    if policy != "static":
        assert list(result.iteration_column(layout.IT_KV_BLOCKS)) == [16, 16, 16]


def test_static_batch_keeps_finished_members_until_the_longest_ends():
    # Batch of 2: outputs 1 and 3. The short one keeps its slot (padding) while the long one decodes.
    workload = trace_workload([0.0, 0.0, 0.0], [10, 10, 10], [1, 3, 2])
    result = simulate(workload, Server(policy="static", static_batch=2, cost=COST), engine="reference")
    sequences = list(result.iteration_column(layout.IT_SEQUENCES))
    # Batch 1: prefill + 2 decodes with 2 sequences; batch 2: prefill + 1 decode with 1 sequence.
    assert sequences == [2, 2, 2, 1, 1]
    assert list(result.iteration_column(layout.IT_DECODE_TOKENS)) == [0, 1, 1, 0, 1]
    assert result.end_s[0] == pytest.approx(result.iteration_duration_s[0], rel=1e-12)
    # The third request starts only when the batch's longest reply (request 1) ends.
    assert result.iteration_start_s[3] == pytest.approx(result.end_s[1], rel=1e-12)
    # The finished member decodes as padding at context 10 (11 positions), like the live one.
    prefill_s = HOST_S + 2 * PER_SEQUENCE_S + (20e9 + 1e6 * 2 * 55) / 1e12
    decode_s = HOST_S + 2 * PER_SEQUENCE_S + (2e9 + 1e6 * 2 * 11) / 1e12
    assert result.iteration_duration_s[:2] == pytest.approx([prefill_s, decode_s], rel=1e-12)


# ---- against the static engine (kernel, the engine's physics) -------------------------------------


def static_result(scenario):
    return shared_engine().predict(scenario)


@pytest.mark.parametrize("physics_name", ["dense", "moe"])
def test_one_request_at_a_time_matches_the_static_batch_of_one(physics_name):
    """Rate -> 0: each request runs alone. Its TTFT is the static batch of one's prefill (host
    time included) and its TPOT the static ITL, which the engine takes at the mean context of
    the generation: the simulator's decode steps at contexts I+1 .. I+O-1 average to it."""
    from serving_cases import PHYSICS_SCENARIOS

    base = PHYSICS_SCENARIOS[physics_name]
    prompt, output = 600, 40
    static = static_result(base.with_changes(batch=1, input_len=prompt, output_len=output))
    server = PhysicsServer(physics_name, max_num_seqs=64, max_batched_tokens=8192, kv_blocks_total=100_000)
    workload = trace_workload([0.0, 1000.0, 2000.0], [prompt] * 3, [output] * 3)
    result = simulate_any(workload, server)
    metrics = summarize(result)
    assert result.first_token_s - result.issue_s == pytest.approx([static.ttft_s] * 3, rel=1e-9)
    assert metrics.tpot_s.mean == pytest.approx(static.itl_s, rel=1e-9)
    assert metrics.itl_s.count == 3 * (output - 1)


@pytest.mark.parametrize("physics_name", ["dense", "moe", "pipeline"])
def test_a_batch_at_time_zero_matches_the_static_batch(physics_name):
    """N requests at t = 0, fixed lengths, ample KV, N <= max_num_seqs, one prefill chunk: the
    served run is the static batch of N, its TTFT the static TTFT and its end the static
    end-to-end latency."""
    from serving_cases import PHYSICS_SCENARIOS

    base = PHYSICS_SCENARIOS[physics_name]
    batch, prompt, output = 8, 500, 30
    static = static_result(base.with_changes(batch=batch, input_len=prompt, output_len=output))
    assert static.waves == 1
    server = PhysicsServer(physics_name, max_num_seqs=64, max_batched_tokens=8192, kv_blocks_total=100_000)
    result = simulate_any(trace_workload(np.zeros(batch), [prompt] * batch, [output] * batch), server)
    assert result.iterations == output
    assert result.first_token_s == pytest.approx([static.ttft_s] * batch, rel=1e-9)
    assert result.end_s == pytest.approx([static.e2e_latency_s] * batch, rel=1e-9)
    run_energy = float(result.iteration_energy_j.sum())
    assert run_energy == pytest.approx(static.energy_J, rel=1e-9)
