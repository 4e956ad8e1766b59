"""The compiled kernel equals the pure-Python reference, with JIT on and off."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from serving_cases import Server, assert_close, assert_runs_equal, random_case

from accelscope.engine.studies.serving import (
    KvLink,
    layout,
    Lengths,
    draw_workload,
    simulate,
    simulate_disaggregated,
    summarize,
)

CASES = range(48)


@pytest.mark.parametrize("seed", CASES)
def test_kernel_equals_reference(seed):
    """Stepped one iteration at a time, every output; with stretches, the bins' totals (a
    stretch's iterations end at times summed two ways)."""
    workload, server, bounds = random_case(seed)
    stepped = dataclasses.replace(server, stretches=False)
    assert_runs_equal(simulate(workload, stepped, engine="reference", **bounds), simulate(workload, stepped, **bounds))
    reference = simulate(workload, server, engine="reference", **bounds)
    kernel = simulate(workload, server, **bounds)
    assert_runs_equal(reference, kernel, each_bin=False)
    # The case exercised something: at least one request was issued.
    assert np.isfinite(kernel.issue_s).any()


@pytest.mark.parametrize("physics_name", ["sparse", "compressed"])
@pytest.mark.parametrize("policy", ["vllm", "trtllm-max-util"])
def test_kernel_equals_reference_with_attention_groups(physics_name, policy):
    """Sparse and compressed layers: prompts around the top-2,048 and decodes across it (and
    across compressed entries' edges), every output equal; such a replica runs no stretches
    (their decode cost bends and steps with the context), asked for or not."""
    from serving_cases import Server as PhysicsServer

    from accelscope.engine.studies.serving import trace_workload

    workload = trace_workload([0.0, 0.0, 0.001, 0.002], [2000, 2040, 300, 5000], [90, 30, 60, 20])
    server = PhysicsServer(physics_name, policy=policy, max_num_seqs=8, max_batched_tokens=4096,
                           kv_blocks_total=10**4, max_model_len=16384)
    assert server.has_attention_groups and server.settings(0)[layout.SET_STRETCHES] == 0
    reference = simulate(workload, server, engine="reference")
    kernel = simulate(workload, server)
    assert_runs_equal(reference, kernel)
    assert kernel.stretches == 0 and kernel.iterations >= 89  # one per token of the longest reply
    assert_runs_equal(kernel, simulate(workload, dataclasses.replace(server, stretches=False)))


def test_random_cases_cover_the_features():
    """The drawn cases include preemption, rejection, caps, prefix hits and several replicas."""
    preempted = rejected = capped = multi_replica = closed = 0
    for seed in CASES:
        workload, server, bounds = random_case(seed)
        result = simulate(workload, server, **bounds)
        preempted += result.total_preemptions > 0
        rejected += result.rejected > 0
        capped += result.capped
        multi_replica += server.replicas > 1
        closed += workload.users > 0
    assert min(preempted, rejected, capped, multi_replica, closed) >= 3


def test_disaggregated_kernel_equals_reference():
    workload = draw_workload(12, 40, 30.0, Lengths("lognormal", 200, 0.8), Lengths("lognormal", 20, 0.8))
    prefill = Server(replicas=2, kv_blocks_total=60, max_num_seqs=6, max_batched_tokens=256)
    decode = Server(replicas=2, router="least-outstanding", kv_blocks_total=40, max_num_seqs=8)
    link = KvLink(latency_s=2e-3, bandwidth_bytes_per_s=5e9)
    reference = simulate_disaggregated(workload, prefill, decode, link, engine="reference")
    kernel = simulate_disaggregated(workload, prefill, decode, link)
    assert_runs_equal(reference.prefill, kernel.prefill, each_bin=False)
    assert_runs_equal(reference.decode, kernel.decode, each_bin=False)
    assert_close(reference.transfer_end_s, kernel.transfer_end_s, "transfer ends")
    assert_runs_equal(reference.combined, kernel.combined, each_bin=False)
    assert kernel.decode.total_preemptions > 0
    assert summarize(kernel.combined).finished == 40


JIT_OFF_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
sys.path.insert(0, {root!r})
import numba
from numba.core import config
assert config.DISABLE_JIT
import dataclasses
from serving_cases import assert_runs_equal, assert_same_requests, random_case, steady_case
from accelscope.engine.studies.serving import simulate
from accelscope.engine.studies.serving.kernel.loop import run
assert not isinstance(run, numba.core.registry.CPUDispatcher)
for seed in {seeds!r}:
    workload, server, bounds = random_case(seed)
    assert_runs_equal(simulate(workload, server, engine="reference", **bounds), simulate(workload, server, **bounds),
                      each_bin=False)
stretches = 0
for seed in {steady_seeds!r}:
    workload, server, bounds = steady_case(seed)
    bounds.pop("max_records", None)
    stretched = simulate(workload, server, **bounds)
    assert_same_requests(simulate(workload, dataclasses.replace(server, stretches=False), **bounds), stretched,
                         exact=False)
    assert_runs_equal(simulate(workload, server, engine="reference", **bounds), stretched, each_bin=False)
    stretches += stretched.stretches
assert stretches > 0
print("jit-off cases equal")
"""


def test_kernel_equals_reference_with_jit_disabled():
    tests = Path(__file__).resolve().parent
    script = JIT_OFF_SCRIPT.format(tests=str(tests), root=str(tests.parent), seeds=list(range(12)),
                                   steady_seeds=[2, 6, 17, 22, 24, 28, 36, 45])
    environment = dict(os.environ, NUMBA_DISABLE_JIT="1")
    completed = subprocess.run(
        [sys.executable, "-c", script], check=False, env=environment, capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "jit-off cases equal" in completed.stdout
