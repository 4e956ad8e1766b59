"""Aggregated against disaggregated at one device budget: the runner each takes, their capacity
at the SLO, the prefill:decode split search, and the Serving tab's run of a disaggregated spec."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accelscope.engine.core.errors import ScenarioError
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.serving import ServingSpec
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.studies.serving.split import capacity_of, rate_runner, split_study
from accelscope.engine.studies.serving.steady import plan_open_loop, planned_workload
from accelscope.engine.studies.serving.study import (
    capacity_at_slo,
    simulate_disaggregated_served,
    simulate_served,
    simulated_disaggregated_run,
)
from accelscope.engine.studies.serving.view import current_run, rate_curve

SPEC = ServingSpec(requests=150, rate_rps=3.0, slo_ttft_ms=1500.0, slo_tpot_ms=80.0)
SPLIT = SPEC.with_changes(prefill_replicas=1, decode_replicas=2)


@pytest.fixture(scope="module")
def scenario(engine):
    return engine.resolve(Scenario("llama-3.1-8b", "h100-sxm", input_len=1024, output_len=128))


@pytest.mark.parametrize("spec", [SPEC, SPEC.with_changes(arrival="gamma", burstiness_cv=3.0),
                                  SPEC.with_changes(input_distribution="lognormal", length_cv=1.5)])
@pytest.mark.parametrize("replicas, router", [(1, "round-robin"), (8, "round-robin"), (3, "least-outstanding")])
def test_runs_at_two_rates_draw_the_same_requests(spec, scenario, replicas, router):
    """Common random numbers: a run sized at one rate and one at another draw the same requests
    in the same pattern, only faster (each sampled replica's stream its own), as far as the
    shorter run goes."""
    plans = [plan_open_loop(rate, replicas, router, 2.0) for rate in (0.37, 4.5, 1234.5)]
    drawn = [planned_workload(scenario, spec, 8192, plan)[0] for plan in plans]
    for plan, workload in zip(plans, drawn, strict=True):
        assert plan.sampled == (router == "round-robin")
        assert (workload.replica is not None) == plan.sampled
        for other_plan, other in zip(plans, drawn, strict=True):
            for replica in range(plan.simulated_replicas if plan.sampled else 1):
                mine = workload.replica == replica if plan.sampled else slice(None)
                theirs = other.replica == replica if other_plan.sampled else slice(None)
                if plan.sampled and not (theirs.any() and other_plan.simulated_replicas > replica):
                    continue
                a, b = workload.arrival_s[mine] * plan.rate_rps, other.arrival_s[theirs] * other_plan.rate_rps
                common = min(a.size, b.size)
                np.testing.assert_allclose(a[:common], b[:common], rtol=1e-12)
                for name in ("prompt_tokens", "output_tokens"):
                    np.testing.assert_array_equal(getattr(workload, name)[mine][:common],
                                                  getattr(other, name)[theirs][:common])


def test_the_aggregated_runner_is_the_served_run(engine, scenario):
    runner = rate_runner(engine, scenario, SPEC)
    sized = SPEC.with_changes(requests=None)
    served = simulate_served(engine, scenario, sized, rate_rps=4.5, offered_load=False)
    run, window = runner.run_at(4.5)
    np.testing.assert_array_equal(run.request_float, served.run.request_float)
    np.testing.assert_array_equal(run.iteration_float, served.run.iteration_float)
    assert (window.start_s, window.end_s) == (served.metrics.window_start_s, served.metrics.window_end_s) or \
        served.metrics.window_s > 0.0
    assert runner.devices == 1


def test_the_disaggregated_runner_is_the_tandem(engine, scenario):
    runner = rate_runner(engine, scenario, SPLIT)
    tandem, metrics, prefill_setup, decode_setup, _link = simulate_disaggregated_served(
        engine, scenario, SPLIT.with_changes(requests=None), rate_rps=4.5)
    run, _window = runner.run_at(4.5)
    np.testing.assert_array_equal(run.request_float, tandem.combined.request_float)
    assert runner.devices == prefill_setup.replicas + decode_setup.replicas == 3


def test_aggregated_capacity_is_the_aggregated_search(engine, scenario):
    found, expected = capacity_of(engine, scenario, SPEC), capacity_at_slo(engine, scenario, SPEC)
    assert (found.rate_per_s, found.failing_rate_per_s, found.runs) == (
        expected.rate_per_s, expected.failing_rate_per_s, expected.runs)
    assert 0.0 < found.rate_per_s < found.failing_rate_per_s


def test_the_split_search_tries_every_split_and_the_aggregated_deployment(engine, scenario):
    study = split_study(engine, scenario, SPEC, 3)
    assert [(o.prefill_replicas, o.decode_replicas) for o in study.splits] == [(1, 2), (2, 1)]
    assert [o.label for o in study.splits] == ["1:2", "2:1"] and study.aggregated.label == "aggregated"
    assert all(o.devices == 3 for o in (study.aggregated, *study.splits))
    # Each option is the capacity of its own deployment, found by the same search.
    aggregated = capacity_of(engine, engine.resolve(scenario.with_changes(dp=3)), SPEC)
    assert study.aggregated.capacity_rps == aggregated.rate_per_s
    one_two = capacity_of(engine, scenario, SPLIT)
    assert study.splits[0].capacity_rps == one_two.rate_per_s
    best = study.best_split
    assert best is not None and best.capacity_rps == max(o.capacity_rps for o in study.splits)
    assert study.disaggregated_gain == pytest.approx(best.capacity_rps / study.aggregated.capacity_rps)
    assert best.capacity_per_device_rps == pytest.approx(best.capacity_rps / 3)


def test_a_split_that_meets_no_slo_has_no_best(engine, scenario):
    impossible = SPEC.with_changes(slo_ttft_ms=1e-3)
    study = split_study(engine, scenario, impossible, 2)
    assert study.best_split is None and math.isnan(study.disaggregated_gain)


@pytest.mark.parametrize("replicas", [1, 65])
def test_a_split_needs_two_to_sixty_four_replicas(engine, scenario, replicas):
    with pytest.raises(ScenarioError, match="needs 2 to 64 replicas"):
        split_study(engine, scenario, SPEC, replicas)


def test_the_tabs_run_of_a_disaggregated_spec_is_the_tandem_in_time_order(engine, scenario):
    workspace = Workspace(scenario, shown=("h100-sxm",), serving=SPLIT)
    run = current_run(engine, workspace)
    tandem, metrics, *_ = simulate_disaggregated_served(engine, scenario, SPLIT)
    assert run.served.disaggregated and run.served.devices == 3
    assert run.metrics == metrics
    assert np.all(np.diff(run.time_s) >= 0.0)
    assert run.time_s.size == tandem.prefill.iteration_float.shape[0] + tandem.decode.iteration_float.shape[0]
    assert simulated_disaggregated_run(engine, scenario, SPLIT).metrics == metrics


def test_a_disaggregated_rate_curve_runs_the_tandem(engine, scenario):
    curve = rate_curve(engine, scenario, SPLIT, points=3)
    runner = rate_runner(engine, scenario, SPLIT)
    tandem, metrics, *_ = simulate_disaggregated_served(engine, scenario, SPLIT.with_changes(requests=None),
                                                        rate_rps=float(curve.rates_rps[1]))
    assert curve.problem is None
    assert curve.goodput_rps[1] == metrics.goodput_per_s
    assert curve.rates_rps[0] == pytest.approx(0.1 * runner.scale_rps)


def test_the_shown_accelerators_side_by_side_are_each_alone():
    """``each_shown`` on two threads gives, in the shown order, what one thread gives; a
    cancelled search starts nothing more."""
    from accelscope.engine.core.scenario import Scenario
    from accelscope.engine.core.serving import ServingSpec
    from accelscope.engine.core.workspace import Workspace
    from accelscope.engine.physics.engine import Engine
    from accelscope.engine.studies.serving.view import each_shown

    engine = Engine()
    scenario = engine.resolve(Scenario(model="llama-3.1-8b", accelerator="h100-sxm"))
    spec = ServingSpec(requests=200, slo_ttft_ms=500.0, slo_tpot_ms=50.0)
    workspace = Workspace(scenario=scenario, shown=("h100-sxm", "a100-80gb", "l40s", "mi300x"), serving=spec)
    alone = list(each_shown(engine, workspace, threads=1))
    together = list(each_shown(engine, workspace, threads=2))
    assert [curve.accelerator for curve, _ in together] == list(workspace.shown)
    for (curve_a, capacity_a), (curve_b, capacity_b) in zip(alone, together, strict=True):
        assert capacity_a == capacity_b
        assert np.array_equal(curve_a.throughput_output_tok_s, curve_b.throughput_output_tok_s)
        assert np.array_equal(curve_a.ttft_p99_s, curve_b.ttft_p99_s, equal_nan=True)
    assert list(each_shown(engine, workspace, threads=2, cancelled=lambda: True)) == []


@pytest.mark.slow
def test_the_split_preset_says_what_its_run_shows(engine):
    """The bundled preset's description: at p99 TPOT 20 ms the 2:2 split serves about a fifth
    more than four aggregated replicas and 1:3 starves prefill; at 100 ms aggregated wins."""
    from dataclasses import replace

    from accelscope.engine.catalog.presets import bundled_preset_files, load_preset

    path = next(p for p in bundled_preset_files() if p.name.startswith("serving-aggregated-vs-disaggregated"))
    preset = load_preset(path, engine.catalog, bundled=True)
    assert "about a fifth more" in preset.description and "1:3 starves prefill" in preset.description
    scenario, spec = engine.resolve(preset.workspace.scenario), preset.workspace.serving
    tight = split_study(engine, scenario, spec, 4)
    by_label = {option.label: option for option in tight.splits}
    assert tight.best_split.label == "2:2" and 1.1 <= tight.disaggregated_gain <= 1.3
    assert by_label["1:3"].capacity_rps < tight.aggregated.capacity_rps
    loose = split_study(engine, scenario, replace(spec, slo_tpot_ms=100.0), 4)
    assert loose.disaggregated_gain < 1.0
