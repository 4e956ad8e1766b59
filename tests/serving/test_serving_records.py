"""A run without iteration records gives every per-request output, gap and counter of the
recorded run, in both engines, with JIT on and off; ``summarize`` refuses it, ``slo_check``
and the capacity search read it as they read the recorded run."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from serving_cases import Server, random_case, steady_case

from accelscope.engine.studies.serving import (
    KvLink,
    Lengths,
    Slo,
    capacity,
    draw_workload,
    simulate,
    simulate_disaggregated,
    summarize,
)
from accelscope.engine.studies.serving.metrics import slo_check

RANDOM_SEEDS = range(0, 48, 2)
STEADY_SEEDS = (2, 6, 17, 22, 24, 28, 36, 45)
SLO_LIMITS = ((None, None), (0.05, 0.004), (0.5, None))


def check_values(check):
    """Every number of an ``SloCheck``, flattened (its distributions included)."""
    values = []
    for value in dataclasses.astuple(check):
        values.extend(value if isinstance(value, tuple) else (value,))
    return np.array(values, dtype=np.float64)


def assert_same_without_records(recorded, unrecorded):
    assert recorded.iterations_recorded and not unrecorded.iterations_recorded
    assert unrecorded.iteration_float.shape[0] == 0 and unrecorded.iteration_int.shape[0] == 0
    for name in ("request_float", "request_int", "gap_s", "counters", "bins"):
        a, b = getattr(recorded, name), getattr(unrecorded, name)
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), name
    assert recorded.bin_width_s == unrecorded.bin_width_s and recorded.run_end_s == unrecorded.run_end_s
    for limits in SLO_LIMITS:
        assert np.array_equal(check_values(slo_check(recorded, *limits)), check_values(slo_check(unrecorded, *limits)),
                              equal_nan=True), limits


@pytest.mark.parametrize("engine", ["kernel", "reference"])
@pytest.mark.parametrize(("make_case", "seed"), [
    *(pytest.param(random_case, seed, id=f"random-{seed}") for seed in RANDOM_SEEDS),
    *(pytest.param(steady_case, seed, id=f"stretched-{seed}") for seed in STEADY_SEEDS),
])
def test_runs_without_records_equal_the_recorded(make_case, seed, engine):
    """Random runs, and runs with stretches of steady decoding."""
    workload, server, bounds = make_case(seed)
    recorded = simulate(workload, server, engine=engine, **bounds)
    assert_same_without_records(recorded, simulate(workload, server, engine=engine, record_iterations=False, **bounds))


def test_the_cases_overwrite_the_one_row_many_times():
    """The runs compared above exercise what a lost record could change: many records,
    irregular gaps, stretches and the record cap."""
    records = gaps = stretches = capped_by_records = 0
    for seed in RANDOM_SEEDS:
        workload, server, bounds = random_case(seed)
        run = simulate(workload, server, record_iterations=False, **bounds)
        records = max(records, run.records)
        gaps += run.gap_s.size
        capped_by_records += run.capped and run.records == bounds.get("max_records")
    for seed in STEADY_SEEDS:
        workload, server, bounds = steady_case(seed)
        stretches += simulate(workload, server, record_iterations=False, **bounds).stretches
    assert records > 50 and gaps > 0 and stretches > 0 and capped_by_records > 0


def test_disaggregated_run_without_records_equals_the_recorded():
    workload = draw_workload(12, 40, 30.0, Lengths("lognormal", 200, 0.8), Lengths("lognormal", 20, 0.8))
    prefill = Server(replicas=2, kv_blocks_total=60, max_num_seqs=6, max_batched_tokens=256)
    decode = Server(replicas=2, router="least-outstanding", kv_blocks_total=40, max_num_seqs=8)
    link = KvLink(latency_s=2e-3, bandwidth_bytes_per_s=5e9)
    recorded = simulate_disaggregated(workload, prefill, decode, link)
    unrecorded = simulate_disaggregated(workload, prefill, decode, link, record_iterations=False)
    assert np.array_equal(recorded.transfer_end_s, unrecorded.transfer_end_s, equal_nan=True)
    for pool in ("prefill", "decode", "combined"):
        assert_same_without_records(getattr(recorded, pool), getattr(unrecorded, pool))


def test_summarize_refuses_a_run_without_records():
    workload, server, bounds = random_case(1)
    run = simulate(workload, server, record_iterations=False, **bounds)
    with pytest.raises(ValueError, match="iteration records"):
        summarize(run)


def test_capacity_searching_without_records_finds_the_same_answer(engine):
    from accelscope.engine.core.scenario import Scenario
    from accelscope.engine.studies.serving.metrics import steady_window
    from accelscope.engine.studies.serving.steady import plan_open_loop, planned_workload

    scenario = engine.resolve(Scenario("llama-3.1-8b", "h100-sxm", input_len=512, output_len=64))
    from accelscope.engine.core.serving import ServingSpec

    spec = ServingSpec(length_cv=1.0)
    server = Server(max_num_seqs=64, kv_blocks_total=3000)

    def run_at_rate(rate_per_s, record_iterations=True):
        plan = plan_open_loop(rate_per_s, 1, "round-robin", 0.5)
        workload, measured = planned_workload(scenario, spec, 8192, plan)
        run = simulate(workload, server, record_iterations=record_iterations, measured_requests=measured)
        return run, steady_window(run, plan.warmup_s, plan.window_end_s)

    for slo in (Slo(ttft_p99_s=0.5, tpot_p99_s=0.02), Slo(ttft_p99_s=1e-4)):
        recorded = capacity(run_at_rate, slo, 20.0)
        searched = capacity(lambda rate: run_at_rate(rate, False), slo, 20.0, recorded_run_at_rate=run_at_rate)
        assert (searched.rate_per_s, searched.failing_rate_per_s, searched.runs, searched.status) == (
            recorded.rate_per_s, recorded.failing_rate_per_s, recorded.runs, recorded.status)
        assert searched.result.iterations_recorded
        assert np.array_equal(searched.result.iteration_float, recorded.result.iteration_float)
        assert np.array_equal(check_values(searched.metrics), check_values(recorded.metrics), equal_nan=True)


JIT_OFF_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
sys.path.insert(0, {root!r})
import numba
from numba.core import config
assert config.DISABLE_JIT
from serving_cases import random_case, steady_case
from test_serving_records import assert_same_without_records
from accelscope.engine.studies.serving import simulate
from accelscope.engine.studies.serving.kernel.loop import run as simulate_kernel
assert not isinstance(simulate_kernel, numba.core.registry.CPUDispatcher)
cases = [random_case(seed) for seed in {seeds!r}] + [steady_case(seed) for seed in {steady_seeds!r}]
for workload, server, bounds in cases:
    assert_same_without_records(simulate(workload, server, **bounds),
                                simulate(workload, server, record_iterations=False, **bounds))
print("jit-off cases equal")
"""


def test_kernel_without_records_with_jit_disabled():
    tests = Path(__file__).resolve().parent
    script = JIT_OFF_SCRIPT.format(tests=str(tests), root=str(tests.parent), seeds=list(range(0, 24, 3)),
                                   steady_seeds=[2, 17, 28])
    environment = dict(os.environ, NUMBA_DISABLE_JIT="1")
    completed = subprocess.run(
        [sys.executable, "-c", script], check=False, env=environment, capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "jit-off cases equal" in completed.stdout
