"""Randomly drawn simulation cases, servers costed by the engine's physics, and an equality
check shared by the twin tests."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.physics.engine import Engine
from accelscope.engine.studies.serving import Lengths, draw_closed_loop_workload, draw_workload, layout
from accelscope.engine.studies.serving import Server as _Server

# Replicas the cases are costed on: a dense model on one GPU (the default), a MoE model with
# expert and tensor parallelism, models with sliding-window layers, a pipeline, an SRAM machine,
# a model with chunked attention.
PHYSICS_SCENARIOS = {
    "dense": Scenario("llama-3.1-8b", "h100-sxm", batch=16),
    "moe": Scenario("mixtral-8x7b", "mi300x", batch=16, tp=2, ep=2),
    "window": Scenario("gemma-3-4b", "l4", batch=8),
    "pipeline": Scenario("llama-3.3-70b", "h200", batch=16, tp=2, pp=2, weight_precision="fp8",
                         activation_precision="fp8", kv_precision="fp8"),
    "sram": Scenario("llama-3.1-8b", "wse-3", batch=4),
    # A 128-token window, and chunked attention (8,192-token chunks) beside full layers.
    "short-window": Scenario("gpt-oss-20b", "h100-sxm", batch=8),
    "chunked": Scenario("llama-4-scout-17b-16e", "h100-sxm", batch=8, tp=4, weight_precision="fp8",
                        activation_precision="fp8", kv_precision="fp8"),
    # Mamba-2 layers beside attention: a fixed-size state read and written by every step.
    "hybrid": Scenario("nemotron-h-8b", "h100-sxm", batch=8),
}


# Models with attention groups, apart from the random draws: DeepSeek-V3.2's sparse layers (the
# top 2,048 tokens, an indexer key per token) and DeepSeek-V4-Flash's compressed ones (one entry
# per 4 or 128 tokens plus a 128-token window). Their replicas run no stretches.
GROUP_PHYSICS_SCENARIOS = {
    "sparse": Scenario("deepseek-v3.2", "h200", batch=8, tp=8),
    "compressed": Scenario("deepseek-v4-flash", "h200", batch=8, tp=4),
}


@functools.cache
def engine():
    return Engine()


@functools.cache
def physics(name="dense"):
    """(cost coefficients, reference cost model) of one replica of a named scenario."""
    scenario = engine().resolve(PHYSICS_SCENARIOS[name] if name in PHYSICS_SCENARIOS else GROUP_PHYSICS_SCENARIOS[name])
    return engine().iteration_costs([scenario])[:, 0].copy(), engine().iteration_cost_model(scenario)


def Server(physics_name="dense", **settings):  # noqa: N802 (stands in for the simulator's Server)
    """A simulator Server costed by the engine's physics of a named scenario."""
    cost, model = physics(physics_name)
    return _Server(cost=cost, cost_model=model, **settings)

POLICIES = ("vllm", "trtllm-no-evict", "trtllm-max-util", "static")
RELATIVE_TOLERANCE = 1e-9


def random_case(seed):
    """(workload, server, bounds) for seed ``seed``: every policy, open and closed loop, 1-3
    replicas, both routers, prefix caching on and off, tight and ample KV, bounds now and then."""
    rng = np.random.default_rng(seed)
    policy = POLICIES[seed % len(POLICIES)]
    requests = int(rng.integers(8, 40))
    block_size = int(rng.choice([4, 8, 16]))
    max_model_len = int(rng.choice([128, 256, 1024]))
    prompt = Lengths(str(rng.choice(["fixed", "exponential", "lognormal"])), float(rng.uniform(8, 120)), 1.0)
    output = Lengths(str(rng.choice(["fixed", "uniform", "lognormal"])), float(rng.uniform(1, 24)), 0.5)
    # Sometimes longer than max_model_len, so that some requests are rejected.
    max_context_tokens = int(rng.choice([max_model_len, 2 * max_model_len]))
    if rng.random() < 0.35:
        workload = draw_closed_loop_workload(
            seed, requests, int(rng.integers(1, 6)), float(rng.choice([0.0, 0.02])), prompt, output, max_context_tokens
        )
    else:
        rate = float(rng.choice([5.0, 40.0, 400.0, math.inf]))
        workload = draw_workload(seed, requests, rate, prompt, output, max_context_tokens)
    largest = int(np.max(workload.prompt_tokens + workload.output_tokens))
    kv_blocks_total = int(rng.choice([0, 1, 2, 3, 50])) if rng.random() < 0.7 else 100000
    if kv_blocks_total < 100000:
        kv_blocks_total = kv_blocks_total + (largest // block_size if kv_blocks_total else 0)
    server = Server(
        policy=policy,
        replicas=int(rng.integers(1, 4)),
        router=str(rng.choice(["round-robin", "least-outstanding"])),
        max_num_seqs=int(rng.integers(1, 12)),
        max_batched_tokens=int(rng.choice([8, 32, 128, 512])),
        block_size=block_size,
        kv_blocks_total=kv_blocks_total,
        long_prefill_threshold=int(rng.choice([0, 0, 16])),
        max_model_len=max_model_len,
        prefix_tokens=int(rng.choice([0, 0, 6, 24])),
        static_batch=int(rng.integers(1, 6)),
        physics_name=str(rng.choice(list(PHYSICS_SCENARIOS))),
    )
    bounds = {}
    if rng.random() < 0.15:
        bounds["max_records"] = int(rng.integers(5, 60))
    if rng.random() < 0.15:
        bounds["max_time_s"] = float(rng.uniform(0.05, 1.0))
    if rng.random() < 0.15:
        bounds["max_gaps"] = int(rng.integers(0, 3))
    return workload, server, bounds


def assert_close(a, b, what):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, what
    assert np.array_equal(np.isnan(a), np.isnan(b)), what
    finite = ~np.isnan(a)
    assert np.allclose(a[finite], b[finite], rtol=RELATIVE_TOLERANCE, atol=0.0), what


def assert_runs_identical(a, b):
    """Every output the same, to the bit (NaN where the other has NaN)."""
    for name in ("request_float", "request_int", "iteration_float", "iteration_int", "gap_s", "counters", "bins"):
        assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=getattr(a, name).dtype.kind == "f"), name
    assert a.bin_width_s == b.bin_width_s and a.run_end_s == b.run_end_s


def assert_runs_equal(a, b, each_bin=True):
    """Times equal to 1e-9 relative, counts exactly; the time bins too (``each_bin``), or (where
    a stretch's iterations end at times summed two ways, so that one may fall either side of a
    bin's edge) their totals."""
    assert_close(a.request_float, b.request_float, "per-request times")
    assert np.array_equal(a.request_int, b.request_int), "per-request counts"
    assert_close(a.iteration_float, b.iteration_float, "per-record start, duration, energy")
    assert np.array_equal(a.iteration_int, b.iteration_int), "per-record counts"
    assert_close(a.gap_s, b.gap_s, "irregular gaps")
    assert np.array_equal(a.counters, b.counters), "counters"
    assert_same_bins(a, b, each_bin)


def assert_same_bins(a, b, each_bin=True):
    assert a.bin_width_s == pytest.approx(b.bin_width_s, rel=1e-12), "bin widths"
    scale = max(float(np.abs(a.bins).max(initial=0.0)), 1e-300)
    if each_bin:
        assert np.allclose(a.bins, b.bins, rtol=RELATIVE_TOLERANCE, atol=RELATIVE_TOLERANCE * scale), "time bins"
    assert np.allclose(a.bins.sum(axis=0), b.bins.sum(axis=0), rtol=RELATIVE_TOLERANCE,
                       atol=RELATIVE_TOLERANCE * scale), "time bins' totals"


def assert_same_requests(stepped, stretched, exact):
    """A run with stretches is the run stepped one iteration at a time: every request's times
    (to the bit with ``exact``, else to 1e-9), counts and gaps, the iterations, and the bins'
    totals (a stretch's energy is spread over it at its mean power)."""
    if exact:
        assert np.array_equal(stepped.request_float, stretched.request_float, equal_nan=True), "per-request times"
        assert np.array_equal(stepped.gap_s, stretched.gap_s), "irregular gaps"
    else:
        assert_close(stepped.request_float, stretched.request_float, "per-request times")
        assert_close(stepped.gap_s, stretched.gap_s, "irregular gaps")
    assert np.array_equal(stepped.request_int, stretched.request_int), "per-request counts"
    for counter in (layout.CNT_ITERATIONS, layout.CNT_CAPPED, layout.CNT_REJECTED, layout.CNT_PREEMPTIONS,
                    layout.CNT_GAPS, layout.CNT_GAPS_DROPPED, layout.CNT_MEASURED_DONE):
        assert stepped.counters[counter] == stretched.counters[counter], counter
    assert stepped.run_end_s == pytest.approx(stretched.run_end_s, rel=RELATIVE_TOLERANCE)
    assert_same_bins(stepped, stretched, each_bin=False)


# Where each model's decode positions stop growing by the same amount: its window or chunk.
ATTENTION_EDGES = {"window": 1024, "short-window": 128, "chunked": 8192}


def steady_case(seed):
    """(workload, server, bounds) of long decodes for the fast-forward: like ``random_case``
    (every policy, open and closed loop, 1-3 replicas, both routers, prefix caching, tight and
    ample KV, caps), with replies of tens to hundreds of tokens, and on models with windows or
    attention chunks, prompts just short of the edge so that the decodes cross it."""
    rng = np.random.default_rng([seed, 18])
    policy = POLICIES[seed % len(POLICIES)]
    physics_name = str(rng.choice(["dense", "moe", "pipeline", "window", "short-window", "chunked", "chunked"]))
    edge = ATTENTION_EDGES.get(physics_name)
    requests = int(rng.integers(4, 20))
    output_mean = float(rng.uniform(8, 160))
    if edge is None:
        prompt = Lengths(str(rng.choice(["fixed", "exponential", "lognormal"])), float(rng.uniform(8, 600)), 1.0)
    else:
        prompt = Lengths("uniform", edge - output_mean * float(rng.uniform(0.1, 0.9)), 0.02)
    output = Lengths(str(rng.choice(["fixed", "uniform", "lognormal", "exponential"])), output_mean, 0.5)
    max_model_len = int(rng.choice([2048, 16384])) if edge != 8192 else 16384
    if rng.random() < 0.35:
        workload = draw_closed_loop_workload(
            seed, requests, int(rng.integers(1, 7)), float(rng.choice([0.0, 0.0, 0.005, 0.05])), prompt, output,
            max_model_len,
        )
    else:
        rate = float(rng.choice([3.0, 30.0, 300.0, math.inf]))
        workload = draw_workload(seed, requests, rate, prompt, output, max_model_len)
    block_size = int(rng.choice([1, 4, 16, 32]))
    largest = int(np.max(workload.prompt_tokens + workload.output_tokens))
    kv_blocks_total = 10**6 if rng.random() < 0.4 else -(-largest // block_size) + int(rng.choice([0, 2, 8, 60]))
    budgets = [16, 64, 512, 8192] if (edge or 0) < 1024 else [1024, 8192]
    server = Server(
        policy=policy,
        replicas=int(rng.integers(1, 4)),
        router=str(rng.choice(["round-robin", "least-outstanding"])),
        max_num_seqs=int(rng.integers(1, 16)),
        max_batched_tokens=int(rng.choice(budgets)),
        block_size=block_size,
        kv_blocks_total=kv_blocks_total,
        long_prefill_threshold=int(rng.choice([0, 0, 300])),
        max_model_len=max_model_len,
        prefix_tokens=int(rng.choice([0, 0, 6, 40])),
        static_batch=int(rng.integers(1, 6)),
        physics_name=physics_name,
    )
    bounds = {}
    if rng.random() < 0.15:
        bounds["max_records"] = int(rng.integers(10, 400))
    if rng.random() < 0.15:
        bounds["max_time_s"] = float(rng.uniform(0.01, 0.5))
    if rng.random() < 0.15:
        bounds["max_gaps"] = int(rng.integers(0, 3))
    return workload, server, bounds
