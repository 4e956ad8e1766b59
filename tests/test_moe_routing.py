"""The routing Monte Carlo against closed forms: the mean of distinct experts under uniform
routing, exact balance, a two-expert case summed exactly, and the engine's analytic imbalance."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from accelscope.engine.studies import moe_routing
from accelscope.engine.studies.moe_routing import (
    RoutingSetup,
    compose_step_factors,
    distinct_experts_variance,
    simulate_routing,
    single_device_view,
    step_factors,
    step_time_distribution,
    step_time_summary,
)

# Simulated means must land within this many standard errors of the exact mean: a deviation
# this large has probability 6e-5 under a correct simulation (the seed is fixed anyway).
STANDARD_ERRORS = 4.0


@pytest.mark.parametrize(
    ("experts", "per_token", "tokens"),
    [(8, 2, 1), (8, 2, 4), (128, 8, 16), (256, 8, 64), (384, 8, 32), (16, 1, 8)],
)
def test_mean_distinct_experts_matches_closed_form(experts, per_token, tokens):
    samples = 4000
    result = simulate_routing(RoutingSetup(experts, per_token, tokens, samples=samples, seed=3))
    exact = experts * (1.0 - (1.0 - per_token / experts) ** tokens)
    standard_error = math.sqrt(distinct_experts_variance(experts, per_token, tokens) / samples)
    assert result.analytic_distinct_experts == pytest.approx(exact, rel=1e-12)
    assert abs(result.mean_distinct_experts - exact) <= STANDARD_ERRORS * standard_error + 1e-12


def test_distinct_experts_variance_hand_case():
    # One token picking 2 of 8: always exactly 2 distinct experts, variance 0.
    assert distinct_experts_variance(8, 2, 1) == pytest.approx(0.0, abs=1e-12)
    # Two tokens each picking 1 of 2: 1 or 2 distinct with probability 1/2 each: variance 1/4.
    assert distinct_experts_variance(2, 1, 2) == pytest.approx(0.25, rel=1e-12)


def test_balanced_routing_has_imbalance_exactly_one():
    # B·k = 64·2 = 128 assignments, a multiple of E = 8, and E a multiple of ep = 4.
    result = simulate_routing(RoutingSetup(8, 2, 64, ep=4, routing="balanced", samples=50))
    assert np.all(result.imbalance == 1.0)
    assert result.imbalance_p99 == 1.0


def test_one_device_has_imbalance_one():
    result = simulate_routing(RoutingSetup(64, 4, 16, ep=1, routing="skewed", skew=1.5, samples=200))
    assert np.all(result.imbalance == 1.0)


def test_skew_increases_imbalance():
    uniform = simulate_routing(RoutingSetup(64, 4, 32, ep=8, samples=2000, seed=1))
    skewed = simulate_routing(RoutingSetup(64, 4, 32, ep=8, routing="skewed", skew=1.0, samples=2000, seed=1))
    standard_error = math.hypot(
        uniform.imbalance.std() / math.sqrt(uniform.samples), skewed.imbalance.std() / math.sqrt(skewed.samples)
    )
    assert skewed.imbalance_mean > uniform.imbalance_mean + STANDARD_ERRORS * standard_error
    assert skewed.imbalance_p99 > uniform.imbalance_p99


def test_skewed_popularity_matches_its_weights():
    # Two experts on two devices, one pick per token, weights 1 and 1/2 (s = 1): the busiest
    # device's load is max(X, B − X) with X ~ Binomial(B, 2/3); its mean is summed exactly.
    tokens = 30
    p = 2.0 / 3.0
    exact = sum(
        math.comb(tokens, x) * p**x * (1 - p) ** (tokens - x) * max(x, tokens - x) for x in range(tokens + 1)
    )
    samples = 5000
    result = simulate_routing(RoutingSetup(2, 1, tokens, ep=2, routing="skewed", skew=1.0, samples=samples, seed=7))
    loads = result.busiest_device_assignments
    assert abs(loads.mean() - exact) <= STANDARD_ERRORS * loads.std() / math.sqrt(samples)


def test_every_expert_picked_when_k_equals_e():
    # Heavy skew with every expert taken exercises the scan that finishes a token's picks.
    result = simulate_routing(RoutingSetup(6, 6, 5, ep=3, routing="skewed", skew=3.0, samples=100))
    assert np.all(result.distinct_experts == 6)
    assert np.all(result.busiest_device_assignments == 5 * 2)  # 2 experts per device, each picked by 5 tokens


def test_zero_skew_is_uniform_routing():
    uniform = simulate_routing(RoutingSetup(32, 4, 16, ep=4, samples=300, seed=5))
    skew_zero = simulate_routing(RoutingSetup(32, 4, 16, ep=4, routing="skewed", skew=0.0, samples=300, seed=5))
    assert np.array_equal(uniform.busiest_device_assignments, skew_zero.busiest_device_assignments)


def test_seeded_and_deterministic():
    setup = RoutingSetup(128, 8, 32, ep=8, routing="skewed", skew=0.8, samples=300, seed=11)
    first = simulate_routing(setup)
    again = simulate_routing(RoutingSetup(128, 8, 32, ep=8, routing="skewed", skew=0.8, samples=300, seed=11))
    other = simulate_routing(RoutingSetup(128, 8, 32, ep=8, routing="skewed", skew=0.8, samples=300, seed=12))
    assert np.array_equal(first.busiest_device_assignments, again.busiest_device_assignments)
    assert not np.array_equal(first.busiest_device_assignments, other.busiest_device_assignments)


@pytest.mark.parametrize(("experts", "per_token", "tokens", "ep"), [(256, 8, 8, 8), (128, 8, 16, 4), (16, 1, 64, 4)])
def test_engine_imbalance_close_to_simulation(experts, per_token, tokens, ep):
    # The engine takes the busiest device as mean + z·sd with Blom's z (a normal
    # approximation); with 64 or more assignments it is within 5% of the simulated mean.
    result = simulate_routing(RoutingSetup(experts, per_token, tokens, ep=ep, samples=4000))
    assert result.imbalance_mean == pytest.approx(result.engine_imbalance, rel=0.05)
    assert result.mean_busiest_device_experts == pytest.approx(result.engine_busiest_device_experts, rel=0.05)


def test_step_time_balanced_has_no_spread():
    routing = simulate_routing(RoutingSetup(8, 2, 64, ep=4, routing="balanced", moe_layers=32, samples=50))
    steps = step_time_distribution(routing, 2e-3, 1e-3, load="tokens", steps=500)
    assert np.all(steps.step_times_s == pytest.approx(3e-3, rel=1e-12))
    assert steps.coefficient_of_variation == pytest.approx(0.0, abs=1e-12)


def test_step_time_keeps_the_mean_and_spreads():
    routing = simulate_routing(RoutingSetup(64, 4, 8, ep=8, moe_layers=16, samples=2000))
    steps = step_time_distribution(routing, 2e-3, 1e-3, load="tokens", steps=4000)
    standard_error = steps.std_s / math.sqrt(4000)
    assert abs(steps.mean_s - 3e-3) <= STANDARD_ERRORS * standard_error
    assert steps.p99_s > steps.p50_s
    assert steps.coefficient_of_variation > 0.0
    # Sixteen independent layers average out: the step's spread is below one layer's.
    one_layer = routing.imbalance / routing.imbalance.mean()
    assert steps.std_s < 2e-3 * one_layer.std()



@pytest.mark.parametrize("routing", ["uniform", "skewed"])
def test_one_device_view_equals_simulating_on_one_device(routing):
    # The draws do not depend on ep, so the view of an 8-device run is the 1-device run.
    one = RoutingSetup(64, 4, 24, ep=1, routing=routing, skew=0.7, samples=400, seed=21)
    direct = simulate_routing(one)  # asked first: simulated on one device
    eight = simulate_routing(RoutingSetup(64, 4, 24, ep=8, routing=routing, skew=0.7, samples=400, seed=21))
    view = single_device_view(eight)
    assert view.setup == direct.setup
    for name in ("distinct_experts", "busiest_device_assignments", "busiest_device_experts", "placement"):
        assert np.array_equal(getattr(view, name), getattr(direct, name)), name
    assert simulate_routing(one).imbalance_mean == 1.0


def test_step_summary_is_the_distribution_without_samples():
    routing = simulate_routing(RoutingSetup(128, 8, 16, ep=8, moe_layers=24, samples=500, seed=4))
    for load in ("experts", "tokens"):
        steps = step_time_distribution(routing, 3e-3, 2e-3, load=load)
        summary = step_time_summary(routing, 3e-3, 2e-3, load=load)
        assert summary.mean_s == pytest.approx(steps.mean_s, rel=1e-12)
        assert summary.p50_s == pytest.approx(steps.p50_s, rel=1e-12)
        assert summary.p99_s == pytest.approx(steps.p99_s, rel=1e-12)
        assert summary.variance_s2 == pytest.approx(steps.variance_s2, rel=1e-9)
        assert summary.coefficient_of_variation == pytest.approx(steps.coefficient_of_variation, rel=1e-9)
    # Composed once per simulation and load, whatever the times.
    assert step_factors(routing, "tokens") is step_factors(routing, "tokens")


def test_long_compositions_draw_the_same_stream_in_blocks(monkeypatch):
    routing = simulate_routing(RoutingSetup(32, 4, 8, ep=4, moe_layers=10, samples=300, seed=8))
    whole = step_factors(routing, "tokens", steps=500).factors
    monkeypatch.setattr(moe_routing, "MAX_SHARED_DRAWS", 64)  # blocks of 6 steps
    fresh = dataclasses.replace(routing)  # the same simulation with nothing composed yet
    assert np.array_equal(step_factors(fresh, "tokens", steps=500).factors, whole)

def test_composed_passes_are_drawn_uniformly_from_each_placement():
    # Two placements of 5 passes each; pass factors are their index. One layer per placement
    # and uniform draws spaced evenly pick every pass of each pool equally often.
    factors = np.arange(10, dtype=float)
    placement = np.array([0, 1] * 5)
    uniforms = np.repeat(((np.arange(1000) + 0.5) / 1000)[:, None], 2, axis=1)
    out = np.empty(1000)
    compose_step_factors(factors, placement, 2, uniforms, out)
    # Placement 0 holds passes 0, 2, 4, 6, 8 (mean 4), placement 1 passes 1, 3, ... (mean 5).
    assert out.mean() == pytest.approx((4.0 + 5.0) / 2, rel=1e-12)
    assert np.array_equal(np.unique(out), (np.arange(0, 10, 2) + np.arange(1, 10, 2)) / 2)

@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"experts_per_token": 9}, r"experts_per_token \(9\) cannot exceed n_experts \(8\)"),
        ({"ep": 16}, r"ep \(16\) cannot exceed n_experts"),
        ({"routing": "zipf"}, "routing must be one of"),
        ({"skew": -1.0}, "skew must be a number between 0 and 10"),
        ({"tokens": 0}, "tokens must be between"),
    ],
)
def test_bad_setups_are_refused(changes, message):
    fields = {"n_experts": 8, "experts_per_token": 2, "tokens": 4}
    fields.update(changes)
    with pytest.raises(ValueError, match=message):
        simulate_routing(RoutingSetup(**fields))


def test_bad_step_inputs_are_refused():
    routing = simulate_routing(RoutingSetup(8, 2, 4, samples=10))
    with pytest.raises(ValueError, match="expert_time_s must be a finite time"):
        step_time_distribution(routing, -1.0, 1e-3)
    with pytest.raises(ValueError, match="load must be one of"):
        step_time_distribution(routing, 1e-3, 1e-3, load="bytes")
