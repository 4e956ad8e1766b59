"""The Serving explanation states the run's numbers and the reasons behind them."""

from __future__ import annotations

import pytest

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.serving import ServingSpec
from accelscope.engine.core.units import format_time
from accelscope.engine.studies.serving.study import simulate_served
from accelscope.engine.text.serving import serving_sentences


@pytest.fixture(scope="module")
def runs(engine):
    scenario = engine.resolve(Scenario("llama-3.1-8b", "h100-sxm"))
    return {rate: simulate_served(engine, scenario, ServingSpec(rate_rps=rate, requests=600)) for rate in (5.0, 60.0)}


def test_a_light_load_names_prefill_and_the_decode_step(engine, runs):
    run = runs[5.0]
    text = "\n".join(serving_sentences(engine, run))
    alone = engine.predict(run.scenario.with_changes(batch=1))
    assert f"A prompt alone is prefilled in {format_time(alone.ttft_s)}" in text
    assert f"TTFT: median {format_time(run.metrics.ttft_s.p50)}" in text
    assert "memory-bound" in text and "no request was preempted" in text
    assert "Unstable" not in text


def test_an_overload_names_queueing_preemption_and_instability(engine, runs):
    run = runs[60.0]
    assert run.metrics.unstable and run.metrics.preemptions > 0
    text = "\n".join(serving_sentences(engine, run))
    assert "requests were waiting" in text
    assert f"{run.metrics.preemptions:,} times a running request was preempted" in text
    assert "Unstable: the queue was still growing" in text


def test_no_room_for_the_kv_cache_is_said_plainly(engine):
    scenario = engine.resolve(Scenario("llama-3.3-70b", "h100-sxm", tp=2))
    run = simulate_served(engine, scenario, ServingSpec(requests=50, memory_fraction=0.5))
    text = "\n".join(serving_sentences(engine, run))
    assert "No request can run: 50% of the device's memory leaves no room for the KV cache" in text
