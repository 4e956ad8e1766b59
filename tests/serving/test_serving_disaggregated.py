"""Disaggregated prefill and decode pools joined by a KV transfer."""

from __future__ import annotations

import numpy as np
import pytest
from serving_cases import Server, assert_close

from accelscope.engine.studies.serving import (
    KvLink,
    Lengths,
    Workload,
    draw_workload,
    layout,
    simulate,
    simulate_disaggregated,
)
from accelscope.engine.studies.serving.disaggregated import kv_transfer_kernel, kv_transfer_reference

WORKLOAD = draw_workload(21, 120, 12.0, Lengths("lognormal", 400, 1.0), Lengths("lognormal", 40, 1.0))
PREFILL = Server(replicas=2, max_num_seqs=8, max_batched_tokens=1024, kv_blocks_total=400)
DECODE = Server(replicas=2, router="least-outstanding", max_num_seqs=32, kv_blocks_total=600)


def test_infinitely_fast_link_matches_the_pools_run_alone():
    tandem = simulate_disaggregated(WORKLOAD, PREFILL, DECODE, KvLink(latency_s=0.0, bandwidth_bytes_per_s=np.inf))
    combined = tandem.combined
    assert np.all(combined.status == layout.STATUS_FINISHED)
    # TTFT equals the prefill pool's own, run alone with one output token per request.
    prefill_alone = simulate(
        Workload(WORKLOAD.arrival_s, WORKLOAD.prompt_tokens, np.ones(120, dtype=np.int64), WORKLOAD.think_s),
        PREFILL,
    )
    assert_close(combined.first_token_s, prefill_alone.first_token_s, "first tokens")
    assert_close(combined.first_token_s - combined.issue_s, prefill_alone.first_token_s - WORKLOAD.arrival_s, "TTFT")
    # The transfer takes no time.
    moving = WORKLOAD.output_tokens > 1
    assert_close(tandem.transfer_end_s[moving], prefill_alone.first_token_s[moving], "transfers")
    # Decode times equal a decode pool fed by the same first-token times.
    order = np.flatnonzero(moving)
    order = order[np.argsort(prefill_alone.first_token_s[order], kind="stable")]
    decode_alone = simulate(
        Workload(
            prefill_alone.first_token_s[order],
            WORKLOAD.prompt_tokens[order],
            WORKLOAD.output_tokens[order],
            np.zeros(order.size),
        ),
        DECODE,
        prior_token_s=prefill_alone.first_token_s[order],
    )
    assert_close(combined.end_s[order], decode_alone.end_s, "end times")
    assert_close(combined.end_s[~moving], prefill_alone.first_token_s[~moving], "one-token requests")
    assert np.array_equal(combined.tokens_emitted, WORKLOAD.output_tokens)


def test_slow_link_delays_decoding_but_not_the_first_token():
    fast = simulate_disaggregated(WORKLOAD, PREFILL, DECODE, KvLink(0.0, np.inf))
    slow = simulate_disaggregated(WORKLOAD, PREFILL, DECODE, KvLink(latency_s=5e-3, bandwidth_bytes_per_s=2e9))
    assert_close(slow.combined.first_token_s, fast.combined.first_token_s, "first tokens")
    moving = WORKLOAD.output_tokens > 1
    assert np.all(slow.combined.end_s[moving] > fast.combined.end_s[moving])
    # Each transfer lasts at least latency + prompt x 131072 B / 2 GB/s.
    duration_s = slow.transfer_end_s[moving] - slow.transfer_start_s[moving]
    expected_s = 5e-3 + WORKLOAD.prompt_tokens[moving] * 131072.0 / 2e9
    assert duration_s == pytest.approx(expected_s, rel=1e-12)


def test_transfers_queue_on_their_link_first_come_first_served():
    ready_s = np.array([0.0, 0.0, 0.5, np.nan, 0.1])
    source_replica = np.array([0, 0, 1, 0, 0])
    prompt_tokens = np.array([1000, 2000, 1000, 1000, 1000])
    link = KvLink(latency_s=0.01, bandwidth_bytes_per_s=1e9, kv_bytes_per_token=1e5)
    start_s = np.empty(5)
    end_s = np.empty(5)
    kv_transfer_reference(ready_s, source_replica, prompt_tokens, link, 2, start_s, end_s)
    # Request 0: 0.01 + 0.1 s; request 1 waits for it: 0.11 + 0.21; request 4 waits for both.
    assert start_s[[0, 1, 4, 2]] == pytest.approx([0.0, 0.11, 0.32, 0.5])
    assert end_s[[0, 1, 4, 2]] == pytest.approx([0.11, 0.32, 0.43, 0.61])
    assert np.isnan(start_s[3]) and np.isnan(end_s[3])
    kernel_start_s = np.empty(5)
    kernel_end_s = np.empty(5)
    kv_transfer_kernel(
        np.array([0, 1, 4, 2]), ready_s, source_replica, prompt_tokens, 0.01, 1e5, 1e9, np.empty(2),
        kernel_start_s, kernel_end_s,
    )  # fmt: skip
    assert_close(kernel_start_s, start_s, "starts")
    assert_close(kernel_end_s, end_s, "ends")


def test_closed_loop_is_refused():
    workload = Workload(np.zeros(3), np.full(3, 10), np.full(3, 3), np.zeros(3), users=1)
    with pytest.raises(ValueError):
        simulate_disaggregated(workload, PREFILL, DECODE, KvLink())
