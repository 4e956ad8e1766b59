"""The Serving explanation states the run's numbers and the reasons behind them."""

from __future__ import annotations

import pytest

from accelscope.engine.core.errors import ScenarioError
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
    assert "Unstable: the waiting queue grew" in text


def test_no_room_for_the_kv_cache_is_said_plainly(engine):
    scenario = engine.resolve(Scenario("llama-3.3-70b", "h100-sxm", tp=2))
    with pytest.raises(ScenarioError, match="no request can run: 50% of total memory goes to the weights"):
        simulate_served(engine, scenario, ServingSpec(requests=50, memory_fraction=0.5))


def test_the_cheapest_accelerator_at_the_slo_is_named_with_its_price_and_source(engine):
    """One H100 at its capacity emitting 1,000 output tokens/s, rented at the book's $2.49 per
    device-hour: 2.49 / 3,600 s / 1,000 tokens/s x 10^6 = $0.692 per million output tokens.
    A device no rental price is known for is named apart, never ranked as free; one that
    misses the SLO is not offered."""
    import math

    from accelscope.engine.core.cost import CostSettings, Pricing
    from accelscope.engine.studies.serving.view import Capacity
    from accelscope.engine.text.serving import cheapest_sentences

    pricing = Pricing(engine.catalog.prices, CostSettings())
    rent = engine.catalog.prices.devices["h100-sxm"].rental
    assert rent is not None and rent.value == 2.49
    capacities = (
        Capacity("h100-sxm", 5.0, 6.0, 1, None, 1000.0, 1500.0, 600.0),
        Capacity("wse-3", 9.0, 10.0, 1, None, 5000.0, 7000.0, 20000.0),
        Capacity("a100-80gb", 0.0, 0.1, 1),  # misses the SLO at any rate
    )
    rented, owned = cheapest_sentences(capacities, pricing, engine.catalog)
    h100, wse3 = (engine.catalog.accelerator(a).name for a in ("h100-sxm", "wse-3"))
    assert rented.startswith(f"Cheapest meeting the SLO, rented: {h100} (1 device) at $0.692 per million output")
    assert rent.citation in rented and f"no rental price for {wse3}" in rented and "A100" not in rented
    assert owned.startswith("Cheapest meeting the SLO, owned: ")
    assert cheapest_sentences((Capacity("a100-80gb", 0.0, 0.1, 1), Capacity("h100-sxm", math.nan, math.nan, 1,
                                                                            "does not fit")), pricing,
                              engine.catalog) == []
