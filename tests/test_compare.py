"""Compare mode's deltas: inputs that differ and outputs that moved, against the engine."""

from __future__ import annotations

import pytest

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.text.compare import comparison, deltas, input_changes


def test_inputs_that_differ_are_named_with_both_values():
    a = Scenario("llama-3.1-8b", "h100-sxm", batch=1, offload=0.0)
    b = a.with_changes(batch=64, weight_precision="fp8", offload=0.25)
    assert input_changes(a, b) == ["batch 1 → 64", "weight precision bf16 → fp8", "offload 0% → 25%"]
    assert input_changes(a, a) == []


def test_deltas_are_the_engines_ratios_with_the_right_direction(engine):
    a = engine.predict(Scenario("llama-3.1-8b", "h100-sxm", batch=1))
    b = engine.predict(Scenario("llama-3.1-8b", "h100-sxm", batch=64))
    by_label = {d.label: d for d in deltas(a, b)}
    itl = by_label["inter-token latency"]
    assert itl.ratio == pytest.approx(b.itl_s / a.itl_s, rel=1e-12)
    assert itl.better is False  # batching lengthens each step
    throughput = by_label["output tokens/s (system)"]
    assert throughput.ratio == pytest.approx(b.throughput_output_tok_s / a.throughput_output_tok_s, rel=1e-12)
    assert throughput.better is True and throughput.ratio > 10
    assert f"{throughput.ratio - 1:+.1%}" in throughput.sentence()
    same = {d.label: d for d in deltas(a, a)}
    assert all(d.better is None and "unchanged" in d.sentence() for d in same.values())


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
