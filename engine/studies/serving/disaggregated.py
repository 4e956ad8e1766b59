"""Disaggregated prefill and decode: a prefill pool, a KV transfer, then a decode pool.

The prefill pool runs the requests with one output token each (continuous batching of prompts
only; a request leaves at its first token). Each prefill replica has one link that carries one
transfer at a time, first come first served (ties by request index); a transfer takes
``latency_s + prompt_tokens * kv_bytes_per_token / bandwidth_bytes_per_s``. The decode pool's
arrivals are the finished transfers, admitted with their KV computed and the first token already
emitted. Requests with one output token end at the prefill pool. Open loop only: a closed-loop
user would couple the two pools' clocks through its next issue.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ...physics.jit import jit
from . import layout
from .run import RunResult, default_bin_width_s, simulate
from .workload import Workload


@dataclass(frozen=True)
class KvLink:
    """One transfer link per prefill replica: latency (s), bandwidth (B/s), KV bytes per token (B)."""

    latency_s: float = 0.0
    bandwidth_bytes_per_s: float = 64e9
    kv_bytes_per_token: float = 131072.0


@dataclass
class DisaggregatedResult:
    """The two pools' own runs (the decode run in its arrival order, see ``decode_order``), the
    transfer times per request (s, NaN when none) and ``combined``: a ``RunResult`` per original
    request (issue and first token from the prefill pool, end from the decode pool; replicas
    numbered prefill first, then decode) for ``summarize``."""

    prefill: RunResult
    decode: RunResult
    decode_order: np.ndarray
    transfer_start_s: np.ndarray
    transfer_end_s: np.ndarray
    combined: RunResult


def kv_transfer_reference(ready_s, source_replica, prompt_tokens, link, replicas, transfer_start_s, transfer_end_s):
    """FIFO transfers on one link per prefill replica; fills the start and end times (s).

    ``ready_s`` is NaN for requests that do not transfer.
    """
    link_free_s = [0.0] * replicas
    waiting = sorted((ready_s[i], i) for i in range(len(ready_s)) if not math.isnan(ready_s[i]))
    transfer_start_s[:] = math.nan
    transfer_end_s[:] = math.nan
    for ready, index in waiting:
        replica = int(source_replica[index])
        start = max(ready, link_free_s[replica])
        duration = link.latency_s + int(prompt_tokens[index]) * link.kv_bytes_per_token / link.bandwidth_bytes_per_s
        transfer_start_s[index] = start
        transfer_end_s[index] = start + duration
        link_free_s[replica] = start + duration


@jit
def kv_transfer_kernel(
    order,
    ready_s,
    source_replica,
    prompt_tokens,
    latency_s,
    kv_bytes_per_token,
    bandwidth_bytes_per_s,
    link_free_s,
    transfer_start_s,
    transfer_end_s,
):
    """Compiled twin of ``kv_transfer_reference``. ``order`` lists the transferring requests by
    (ready time, index); ``link_free_s`` (float64[replicas]) is scratch."""
    for replica in range(link_free_s.shape[0]):
        link_free_s[replica] = 0.0
    for index in range(ready_s.shape[0]):
        transfer_start_s[index] = np.nan
        transfer_end_s[index] = np.nan
    for position in range(order.shape[0]):
        index = order[position]
        replica = source_replica[index]
        start = max(ready_s[index], link_free_s[replica])
        duration = latency_s + prompt_tokens[index] * kv_bytes_per_token / bandwidth_bytes_per_s
        transfer_start_s[index] = start
        transfer_end_s[index] = start + duration
        link_free_s[replica] = start + duration


def simulate_disaggregated(workload, prefill_server, decode_server, link, engine="kernel", *, bin_width_s=None,
                           **bounds):
    """Simulate the tandem; ``bounds`` (max_records, max_time_s, max_gaps, record_iterations)
    apply to each pool; both pools' time bins start ``bin_width_s`` wide (default: the
    workload's ``default_bin_width_s``) so that the combined run's add up."""
    if workload.users > 0:
        raise ValueError("disaggregated runs take open-loop workloads")
    if prefill_server.router == "assigned" or decode_server.router == "assigned":
        raise ValueError("the pools of a disaggregated run route their requests themselves")
    requests = workload.requests
    bounds["bin_width_s"] = default_bin_width_s(workload) if bin_width_s is None else bin_width_s
    prefill_workload = replace(workload, output_tokens=np.ones(requests, dtype=np.int64))
    prefill = simulate(prefill_workload, prefill_server, engine=engine, **bounds)

    # Only requests that got their first token and want more move on.
    ready_s = np.where(
        (prefill.status == layout.STATUS_FINISHED) & (workload.output_tokens > 1), prefill.first_token_s, np.nan
    )
    transfer_start_s = np.empty(requests)
    transfer_end_s = np.empty(requests)
    source_replica = np.ascontiguousarray(prefill.replica)
    prompt_tokens = np.ascontiguousarray(workload.prompt_tokens, dtype=np.int64)
    if engine == "kernel":
        transferring = np.flatnonzero(~np.isnan(ready_s))
        order = transferring[np.argsort(ready_s[transferring], kind="stable")]
        kv_transfer_kernel(
            order, ready_s, source_replica, prompt_tokens, float(link.latency_s), float(link.kv_bytes_per_token),
            float(link.bandwidth_bytes_per_s), np.empty(prefill_server.replicas), transfer_start_s, transfer_end_s,
        )  # fmt: skip
    else:
        kv_transfer_reference(
            ready_s, source_replica, prompt_tokens, link, prefill_server.replicas, transfer_start_s, transfer_end_s
        )

    moving = np.flatnonzero(~np.isnan(transfer_end_s))
    decode_order = moving[np.argsort(transfer_end_s[moving], kind="stable")]
    decode_workload = Workload(
        transfer_end_s[decode_order],
        prompt_tokens[decode_order],
        np.ascontiguousarray(workload.output_tokens[decode_order], dtype=np.int64),
        np.zeros(decode_order.size),
    )
    decode = simulate(
        decode_workload, decode_server, prior_token_s=prefill.first_token_s[decode_order], engine=engine, **bounds
    )
    combined = _combine(workload, prefill, decode, decode_order, prefill_server, decode_server)
    return DisaggregatedResult(prefill, decode, decode_order, transfer_start_s, transfer_end_s, combined)


def _combine(workload, prefill, decode, decode_order, prefill_server, decode_server):
    """Per original request: the prefill pool's issue and first token, the decode pool's end."""
    request_float = prefill.request_float.copy()
    request_int = prefill.request_int.copy()
    # Requests that move on are finished only when the decode pool finishes them.
    request_float[decode_order, layout.REQ_END_S] = decode.end_s
    request_int[decode_order, layout.REQ_STATUS] = decode.status
    request_int[decode_order, layout.REQ_REPLICA] = np.where(
        decode.replica >= 0, decode.replica + prefill_server.replicas, -1
    )
    request_int[decode_order, layout.REQ_PREEMPTIONS] += decode.preemptions
    request_int[decode_order, layout.REQ_TOKENS_EMITTED] = decode.tokens_emitted
    decode_iterations = decode.iteration_int.copy()
    decode_iterations[:, layout.IT_REPLICA] += prefill_server.replicas
    counters = prefill.counters + decode.counters
    for flag in (layout.CNT_CAPPED, layout.CNT_MEASURED_DONE):
        counters[flag] = max(prefill.counters[flag], decode.counters[flag])
    bins, bin_width_s = merged_bins(prefill.bins, prefill.bin_width_s, decode.bins, decode.bin_width_s)
    replicas = prefill_server.replicas + decode_server.replicas
    idle_power_w = (
        prefill_server.replicas * prefill_server.idle_power_w + decode_server.replicas * decode_server.idle_power_w
    ) / replicas
    return RunResult(
        prompt_tokens=np.ascontiguousarray(workload.prompt_tokens, dtype=np.int64),
        output_tokens=np.ascontiguousarray(workload.output_tokens, dtype=np.int64),
        replicas=replicas,
        idle_power_w=idle_power_w,
        request_float=request_float,
        request_int=request_int,
        iteration_float=np.concatenate([prefill.iteration_float, decode.iteration_float]),
        iteration_int=np.concatenate([prefill.iteration_int, decode_iterations]),
        gap_s=np.concatenate([prefill.gap_s, decode.gap_s]),
        counters=counters,
        bins=bins,
        bin_width_s=bin_width_s,
        run_end_s=max(prefill.run_end_s, decode.run_end_s),
        iterations_recorded=prefill.iterations_recorded and decode.iterations_recorded,
    )


def merged_bins(bins_a, width_a, bins_b, width_b):
    """Two runs' time bins added up: the narrower ones widened (pairs merged) to the other's
    width first. Both began at the same width, so each width is that times a power of two."""
    if width_a > width_b:
        bins_a, width_a, bins_b, width_b = bins_b, width_b, bins_a, width_a
    bins_a = bins_a.copy()
    while width_a < width_b * (1.0 - 1e-12):
        half = bins_a.shape[0] // 2
        bins_a[:half] = bins_a[0::2] + bins_a[1::2]
        bins_a[half:] = 0.0
        width_a *= 2.0
    return bins_a + bins_b, width_b
