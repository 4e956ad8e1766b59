"""Compare mode's deltas: inputs that differ and outputs that moved, against the engine."""

from __future__ import annotations

import pytest

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.text.compare import FAR_FACTOR, comparison, deltas, input_changes


def test_inputs_that_differ_are_named_with_both_values():
    a = Scenario("llama-3.1-8b", "h100-sxm", batch=1, offload=0.0)
    b = a.with_changes(batch=64, weight_precision="fp8", offload=0.25)
    assert input_changes(a, b) == ["batch 1 → 64", "weight precision bf16 → fp8", "offload 0% → 25%"]
    assert input_changes(a, a) == []


def test_deltas_are_the_engines_ratios_with_the_right_direction(engine):
    a = engine.predict(Scenario("llama-3.1-8b", "h100-sxm", batch=1))
    b = engine.predict(Scenario("llama-3.1-8b", "h100-sxm", batch=4))
    by_label = {d.label: d for d in deltas(a, b)}
    itl = by_label["inter-token latency"]
    assert itl.ratio == pytest.approx(b.itl_s / a.itl_s, rel=1e-12)
    assert itl.better is False  # batching lengthens each step
    throughput = by_label["output tokens/s (system)"]
    assert throughput.ratio == pytest.approx(b.throughput_output_tok_s / a.throughput_output_tok_s, rel=1e-12)
    assert throughput.better is True and 1.5 < throughput.ratio < FAR_FACTOR
    assert f"{throughput.ratio - 1:+.1%}" in throughput.sentence() and "(better)" in throughput.sentence()
    same = {d.label: d for d in deltas(a, a)}
    assert all(d.better is None and "unchanged" in d.sentence() for d in same.values())


def test_a_far_delta_gives_both_values_and_no_verdict(engine):
    a = engine.predict(Scenario("llama-3.1-8b", "h100-sxm", batch=1))
    b = engine.predict(Scenario("llama-3.1-8b", "h100-sxm", batch=64))
    throughput = {d.label: d for d in deltas(a, b)}["output tokens/s (system)"]
    assert throughput.ratio > FAR_FACTOR  # the engine's batching gain, beyond +1000 %
    sentence = throughput.sentence()
    assert throughput.better is None and "better" not in sentence and "worse" not in sentence and "%" not in sentence
    assert f"A {throughput.a_text}" in sentence and f"B {throughput.b_text}" in sentence


def test_two_models_are_never_better_or_worse_than_each_other(engine):
    workspace = Workspace(Scenario("llama-3.1-8b", "h100-sxm", batch=8), shown=("h100-sxm",))
    a = engine.predict(workspace.scenario)
    b = engine.predict(workspace.scenario.with_changes(model="qwen3-8b"))
    compared = deltas(a, b)
    assert any(d.ratio is not None and abs(d.ratio - 1) > 1e-3 for d in compared)  # their outputs do differ
    for delta in compared:
        assert delta.better is None and not delta.comparable
        assert "better" not in delta.sentence() and "worse" not in delta.sentence() and "%" not in delta.sentence()
    assert "different models" in comparison(workspace, a, b).plain_text()


def test_models_and_accelerators_are_named_not_given_by_id(engine):
    """A synthetic or imported model's id is generated: the changes name it as the legends do."""
    catalog = engine.catalog

    def name_of(field, catalog_id):
        return (catalog.models if field == "model" else catalog.accelerators)[catalog_id].name

    a = Scenario("llama-3.1-8b", "h100-sxm")
    b = a.with_changes(model="qwen3-8b", accelerator="l40s")
    changes = input_changes(a, b, name_of)
    assert changes == [f"model {catalog.models['llama-3.1-8b'].name} → {catalog.models['qwen3-8b'].name}",
                       f"accelerator {catalog.accelerators['h100-sxm'].name} → {catalog.accelerators['l40s'].name}"]
    workspace = Workspace(a, shown=("h100-sxm",))
    missing = comparison(workspace, None, engine.predict(a.with_changes(accelerator="l40s")), name_of)
    assert catalog.accelerators["l40s"].name in missing.plain_text() and "l40s" not in missing.plain_text()


def test_comparison_section_reads_inputs_and_outputs(engine):
    workspace = Workspace(Scenario("llama-3.1-8b", "h100-sxm", batch=1), shown=("h100-sxm",))
    a = engine.predict(workspace.scenario)
    b = engine.predict(workspace.scenario.with_changes(tp=2))
    explanation = comparison(workspace, a, b)
    lines = explanation.section("B against A (pinned)")
    assert lines[0] == "What changed from A: tp 1 → 2."
    assert any(line.startswith("inter-token latency:") for line in lines)
    missing = comparison(workspace, None, b)
    assert "nothing to compare" in missing.plain_text()
