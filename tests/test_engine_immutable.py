"""An engine does not change once made: studies and resolving a scenario leave it as it was."""

from __future__ import annotations

import json

import pytest

from accelscope.engine.catalog.synthetic import moe_1t
from accelscope.engine.core.errors import ScenarioError
from accelscope.engine.core.scenario import Scenario, Workload
from accelscope.engine.studies.scaling import compare_strategies


def test_with_models_gives_a_new_engine_and_leaves_this_one(engine):
    before = engine.model_index
    model = moe_1t()
    larger = engine.with_models(model)
    assert larger is not engine
    assert model.id in larger.model_index and model.id not in engine.model_index
    assert engine.model_index == before
    assert larger.with_models(model) is larger  # already known as it is: nothing to make
    assert larger.predict(Scenario(model.id, "b200", batch=8, tp=8, pp=2, weight_precision="fp8")).fits


def test_a_study_does_not_register_models_in_the_callers_engine(engine):
    """compare_strategies builds a routed-expert-free twin of the model; it used to be added to
    the engine it was given."""
    before = engine.model_index
    comparison = compare_strategies(engine, "qwen3-235b-a22b", "h100-sxm", Workload(batch=8))
    assert comparison.strategies
    assert engine.model_index == before


def test_resolve_has_no_side_effect_and_a_model_file_needs_for_scenario(engine, tmp_path):
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048,
        "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32,
        "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 8192,
        "tie_word_embeddings": True,
    }
    path = tmp_path / "tiny-llama" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(config))
    before = engine.model_index
    scenario = Scenario(str(path), "h100-sxm")
    with pytest.raises(ScenarioError, match="for_scenario"):
        engine.resolve(scenario)
    assert engine.model_index == before
    with_file, resolved = engine.for_scenario(scenario)
    assert resolved.model == "tiny-llama" and "tiny-llama" in with_file.model_index
    assert "tiny-llama" not in engine.model_index
    assert engine.predict(scenario).fits  # predict takes the same path, and leaves the engine too
    assert engine.model_index == before
