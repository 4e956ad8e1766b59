"""The combined catalog (bundled + user folder), the constants file, and scenario checks."""

from __future__ import annotations

import shutil
from dataclasses import fields
from pathlib import Path

import pytest

from accelscope.engine.catalog import Catalog, user_data_dir
from accelscope.engine.catalog.constants import load_constants
from accelscope.engine.core.errors import CatalogError, ScenarioError
from accelscope.engine.core.scenario import WORKLOAD_FIELDS, Scenario, Workload

ROOT = Path(__file__).resolve().parent.parent


def test_tests_never_use_the_real_user_folder():
    assert "accelscope-test-data-" in str(user_data_dir())


def test_user_files_join_the_catalog_and_bad_ones_are_listed(tmp_path):
    accelerators = tmp_path / "accelerators"
    models = tmp_path / "models"
    accelerators.mkdir()
    models.mkdir()
    text = (ROOT / "resources" / "accelerators" / "h100-sxm.toml").read_text()
    (accelerators / "my-h100.toml").write_text(text.replace('id = "h100-sxm"', 'id = "my-h100"'))
    (accelerators / "broken.toml").write_text('id = "broken"\nname = 3\n')
    shutil.copy(ROOT / "tests" / "fixtures" / "hf" / "qwen3-8b" / "config.json", models / "my-qwen.json")
    (models / "bad.json").write_text("[1, 2]")
    (models / "notes.txt").write_text("ignored: not a model file")

    catalog = Catalog.load(user_dir=tmp_path)
    assert "my-h100" in catalog.accelerators and "h100-sxm" in catalog.accelerators
    assert "my-qwen" in catalog.models
    assert len(catalog.problems) == 2
    assert any("broken.toml" in problem for problem in catalog.problems)
    assert any("bad.json" in problem for problem in catalog.problems)
    assert len(catalog.models) == 41 and len(catalog.accelerators) == 49


def test_unknown_ids_suggest_close_ones():
    catalog = Catalog.load(include_user=False)
    with pytest.raises(ScenarioError, match="did you mean h100-sxm"):
        catalog.accelerator("h100-smx")
    with pytest.raises(ScenarioError, match="model file not found"):
        catalog.model("/nowhere/config.json")


def test_constants_file_errors_name_the_field(tmp_path):
    text = (ROOT / "resources" / "efficiency.toml").read_text()
    bad = tmp_path / "efficiency.toml"
    bad.write_text(text.replace("compute_efficiency = { value = 0.70", "compute_efficiency = { value = 1.70", 1))
    with pytest.raises(CatalogError, match=r"efficiency.toml: classes.gpu-simt.compute_efficiency.value: 1.7 is outside"):
        load_constants(bad)
    bad.write_text(text.replace('per_layer_overhead_s = { value = 30e-6, basis = "', 'per_layer_overhead_s = { value = 30e-6, basis = "" , x = "', 1))
    with pytest.raises(CatalogError, match="per_layer_overhead_s.basis"):
        load_constants(bad)
    bad.write_text("not toml [")
    with pytest.raises(CatalogError, match="efficiency.toml"):
        load_constants(bad)


def test_every_constant_has_a_basis():
    constants = load_constants()
    for cls in constants.classes.values():
        assert all(len(text) > 40 for text in cls.basis.values()), cls.architecture_class
    assert all(len(text) > 40 for text in constants.basis.values())


@pytest.mark.parametrize(
    "changes, fragment",
    [
        ({"batch": 0}, "batch"),
        ({"batch": True}, "batch must be a whole number"),
        ({"input_len": 2.5}, "input_len must be a whole number"),
        ({"output_len": 10**9}, "output_len must be between"),
        ({"tp": -1}, "tp"),
        ({"offload": 1.5}, "offload"),
        ({"offload": float("nan")}, "offload"),
        ({"weight_precision": "fp6"}, "weight_precision must be one of"),
    ],
)
def test_scenario_validation(changes, fragment):
    with pytest.raises(ScenarioError, match=fragment):
        Scenario("llama-3.1-8b", "h100-sxm").with_changes(**changes).validate()


def test_ids_with_a_trailing_newline_are_refused(tmp_path):
    """A regex anchored with $ would accept "my-id\\n"; ids must match in full."""
    from accelscope.engine.catalog.accelerators import load_accelerator_file

    text = (ROOT / "resources" / "accelerators" / "h100-sxm.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('id = "h100-sxm"', 'id = "h100-sxm\\n"'))
    with pytest.raises(CatalogError, match="bad.toml: id"):
        load_accelerator_file(bad)


def test_hostile_model_names_give_short_one_line_errors():
    catalog = Catalog.load(include_user=False)
    with pytest.raises(ScenarioError) as raised:
        catalog.model("x" * 100_000)  # too long for the file system to look up
    assert len(str(raised.value)) < 2000
    with pytest.raises(ScenarioError) as raised:
        catalog.model("bad\nname")
    assert "\n" not in str(raised.value)


def test_a_huge_integer_offload_is_refused_not_overflowed():
    with pytest.raises(ScenarioError, match="offload"):
        Scenario("llama-3.1-8b", "h100-sxm", offload=10**400).validate()


@pytest.mark.parametrize(
    "old, new, field",
    [
        ("value = 3.35e12", "value = 1e-300", "bandwidth_Bps"),
        ("value = 700\n", "value = 1e12\n", "tdp_W"),
        ('bf16 = { value = 989.4e12', 'bf16 = { value = 5.0', "peak_flops.bf16"),
    ],
)
def test_implausible_accelerator_values_are_refused(tmp_path, old, new, field):
    """A value no device has is a typo or a hostile file; it would make every step infinite."""
    from accelscope.engine.catalog.accelerators import load_accelerator_file

    text = (ROOT / "resources" / "accelerators" / "h100-sxm.toml").read_text()
    assert old in text
    bad = tmp_path / "implausible.toml"
    bad.write_text(text.replace(old, new, 1))
    with pytest.raises(CatalogError, match=rf"implausible.toml: .*{field}.*must be between"):
        load_accelerator_file(bad)


def test_a_workload_is_the_scenarios_served_part_with_the_same_defaults():
    assert Scenario.from_workload("llama-3.1-8b", "h100-sxm", Workload()) == Scenario("llama-3.1-8b", "h100-sxm")
    scenario = Scenario("qwen3-32b", "b200", batch=48, input_len=350, output_len=190, weight_precision="fp8",
                        kv_precision="fp8", tp=4, pp=2, ep=1, dp=3, offload=0.25, kv_offload=0.5)
    layout = {name: getattr(scenario, name) for name in ("tp", "pp", "ep", "dp", "offload", "kv_offload")}
    assert Scenario.from_workload(scenario.model, scenario.accelerator, scenario.workload, **layout) == scenario
    # Every Scenario field is the workload's, the model's, the device's or the layout's: none is missed.
    assert {f.name for f in fields(Scenario)} == {*WORKLOAD_FIELDS, "model", "accelerator", *layout}
