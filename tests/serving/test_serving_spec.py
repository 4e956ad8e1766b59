"""The serving settings: checked values, kept in presets (only what differs from the defaults)."""

from __future__ import annotations

import json

import pytest

from accelscope.engine.catalog import Catalog
from accelscope.engine.catalog.presets import (
    Preset,
    PresetError,
    load_preset,
    preset_from_json,
    preset_to_json,
    save_preset,
)
from accelscope.engine.core.errors import ScenarioError
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.serving import ServingSpec
from accelscope.engine.core.workspace import Workspace


@pytest.fixture(scope="module")
def catalog():
    return Catalog.load(include_user=False)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"arrival": "burst"}, "arrival must be one of poisson, gamma, offline, closed"),
        ({"rate_rps": 0.0}, "rate_rps must be at least 1e-06"),
        ({"rate_rps": float("nan")}, "rate_rps must be at least 1e-06"),
        ({"rate_rps": 10**400}, "rate_rps must be at least 1e-06"),
        ({"requests": 0}, "requests must be between 1"),
        ({"requests": 2.5}, "requests must be a whole number"),
        ({"concurrency": True}, "concurrency must be a whole number"),
        ({"policy": "sglang"}, "policy must be one of vllm"),
        ({"length_cv": 0.9, "input_distribution": "uniform"}, "uniform lengths need length_cv at most 0.577"),
        ({"prefill_replicas": 2}, "needs both prefill and decode replicas"),
        ({"prefill_replicas": 1, "decode_replicas": 1, "arrival": "closed"}, "open-loop arrivals only"),
        ({"memory_fraction": 1.5}, "memory_fraction must be above 0 and at most 1"),
        ({"slo_ttft_ms": -1.0}, "slo_ttft_ms must be above 0"),
    ],
)
def test_bad_settings_are_refused_naming_the_field(changes, message):
    with pytest.raises(ScenarioError, match=message):
        ServingSpec().with_changes(**changes).validate()


def test_defaults_are_valid_and_limits_default_to_the_policy():
    spec = ServingSpec().validate()
    assert spec.max_num_seqs is None and spec.block_size is None and not spec.disaggregated


def test_serving_settings_round_trip_through_a_preset(catalog, tmp_path):
    spec = ServingSpec(arrival="gamma", rate_rps=7.5, burstiness_cv=3.0, requests=500, policy="trtllm-no-evict",
                       max_num_seqs=64, slo_ttft_ms=None, prefix_tokens=512, prefill_replicas=1, decode_replicas=3)
    workspace = Workspace(Scenario("llama-3.1-8b", "h100-sxm"), ("h100-sxm",), serving=spec)
    preset = Preset("Serving", "", workspace)
    document = preset_to_json(preset)
    assert document["serving"]["slo_ttft_ms"] is None and "seed" not in document["serving"]
    save_preset(preset, tmp_path / "p.json")
    assert load_preset(tmp_path / "p.json", catalog).workspace == workspace


def test_a_preset_without_serving_settings_takes_the_defaults(catalog):
    document = preset_to_json(Preset("Plain", "", Workspace(Scenario("llama-3.1-8b", "h100-sxm"), ("h100-sxm",))))
    assert "serving" not in document
    assert preset_from_json(document, "p.json", catalog).workspace.serving == ServingSpec()


@pytest.mark.parametrize(
    ("serving", "message"),
    [
        ({"rate": 3}, "p.json: serving.rate: unknown key"),
        ({"rate_rps": "fast"}, "p.json: serving.rate_rps: must be a number"),
        ({"concurrency": None}, "p.json: serving.concurrency: must not be null"),
        ({"policy": "nope"}, "p.json: serving.policy: must be one of"),
        ({"prefill_replicas": 2}, "p.json: serving: disaggregated serving needs both"),
    ],
)
def test_bad_serving_settings_in_a_preset_name_the_field(catalog, serving, message):
    document = preset_to_json(Preset("P", "", Workspace(Scenario("llama-3.1-8b", "h100-sxm"), ("h100-sxm",))))
    document["serving"] = serving
    with pytest.raises(PresetError) as raised:
        preset_from_json(json.loads(json.dumps(document)), "p.json", catalog)
    assert message in str(raised.value)
