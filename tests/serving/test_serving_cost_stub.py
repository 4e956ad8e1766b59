"""The stub iteration cost: hand-computed values, and its compiled twin."""

from __future__ import annotations

import math

import pytest

from accelscope.engine.studies.serving import cost_stub
from accelscope.engine.studies.serving.cost_stub import make_cost

COST = make_cost(
    host_s=1e-3,
    per_sequence_s=1e-4,
    flops_per_token=1e9,
    attention_flops_per_position=1e6,
    flop_rate=1e12,
    weight_bytes=1e9,
    kv_bytes_per_position=1e5,
    byte_rate=1e12,
    static_power_w=200.0,
    peak_power_w=400.0,
)


def test_chunk_positions_sum_the_attended_positions():
    # A chunk of 3 tokens after 5 cached: positions 6 + 7 + 8, and 5 cached positions read.
    assert cost_stub.request_positions_reference(COST, 5, 3, False) == (21.0, 0.0, 5.0)
    assert cost_stub.request_positions_reference(COST, 0, 100, False) == (5050.0, 0.0, 0.0)


def test_decode_positions_are_the_context_plus_one():
    assert cost_stub.request_positions_reference(COST, 100, 1, True) == (0.0, 101.0, 101.0)


def test_prefill_iteration_is_compute_bound():
    # 100 tokens: (100 * 1e9 + 1e6 * 5050) / 1e12 = 0.10505 s of compute vs 1e-3 s of weights.
    duration_s, energy_j = cost_stub.iteration_cost_reference(COST, 100, 1, 5050.0, 0.0, 0.0)
    assert duration_s == pytest.approx(1e-3 + 1e-4 + 0.10505, rel=1e-12)
    busy_share = 0.10505 / duration_s
    assert energy_j == pytest.approx((200.0 + 200.0 * busy_share) * duration_s, rel=1e-12)


def test_decode_iteration_takes_the_slower_unit():
    # Compute (1e9 + 1e6 * 101) / 1e12 = 1.101e-3 s beats memory (1e9 + 1e5 * 101) / 1e12 = 1.0101e-3 s.
    duration_s, _ = cost_stub.iteration_cost_reference(COST, 1, 1, 0.0, 101.0, 101.0)
    assert duration_s == pytest.approx(1.1e-3 + 1.101e-3, rel=1e-12)
    # With a slow memory, the weights and KV reads bound it.
    slow_memory = COST.copy()
    slow_memory[cost_stub.BYTE_RATE] = 1e11
    duration_s, _ = cost_stub.iteration_cost_reference(slow_memory, 1, 1, 0.0, 101.0, 101.0)
    assert duration_s == pytest.approx(1.1e-3 + (1e9 + 1e5 * 101) / 1e11, rel=1e-12)


@pytest.mark.parametrize(
    "arguments",
    [(0, 1, False), (7, 13, False), (4095, 1, True), (123456, 8192, False)],
)
def test_compiled_positions_equal_the_reference(arguments):
    assert cost_stub.request_positions(COST, *arguments) == cost_stub.request_positions_reference(COST, *arguments)


@pytest.mark.parametrize("sums", [(1, 1, 0.0, 101.0, 101.0), (8192, 300, 3.3e7, 2.0e5, 9.1e5), (0, 0, 0.0, 0.0, 0.0)])
def test_compiled_cost_equals_the_reference(sums):
    compiled = cost_stub.iteration_cost(COST, *sums)
    reference = cost_stub.iteration_cost_reference(COST, *sums)
    for value, expected in zip(compiled, reference):
        assert math.isclose(value, expected, rel_tol=1e-15)
