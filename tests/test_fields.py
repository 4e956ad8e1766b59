"""The scenario-field registry and every place made from it: each field changed in turn must show
in each of them, so a field missing from one fails here rather than being silently dropped."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from accelscope.cli.arguments import add_scenario_arguments, scenario_values
from accelscope.cli.serialize import result_to_dict
from accelscope.cli.serve import scenario_dict
from accelscope.engine.catalog.presets import new_preset, preset_from_json, preset_to_json
from accelscope.engine.core.fields import (
    FIELDS_BY_NAME,
    KINDS,
    ROLES,
    SCENARIO_FIELDS,
    comment_lines,
    fields_of,
    summary_text,
)
from accelscope.engine.core.scenario import WORKLOAD_FIELDS, Scenario, Workload
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics import layout
from accelscope.engine.physics.pack import pack_scenarios

from scenario_generator import KIND_DRAWS, random_scenario

BASE = Scenario("qwen3-30b-a3b", "h100-sxm", batch=4, tp=4, ep=2)
# A value other than BASE's for each field (the model and accelerator: another in the catalog).
CHANGED = {"model": "llama-3.1-8b", "accelerator": "mi300x", "batch": 9, "input_len": 2048, "output_len": 100,
           "weight_precision": "fp8", "activation_precision": "fp8", "kv_precision": "fp8", "tp": 2, "pp": 2,
           "ep": 4, "dp": 3, "offload": 0.25, "kv_offload": 0.5}
VALUE_FIELDS = [f for f in SCENARIO_FIELDS if f.kind != "id"]


def test_the_registry_is_the_scenario():
    """Scenario's dataclass fields and defaults are the registry's, in its order; Workload's
    are the fields whose role is the workload."""
    declared = [(f.name, f.default) for f in dataclasses.fields(Scenario)]
    registry = [(f.name, f.default) for f in SCENARIO_FIELDS]
    assert [(n, None if d is dataclasses.MISSING else d) for n, d in declared] == registry
    assert WORKLOAD_FIELDS == tuple(f.name for f in fields_of("workload"))
    assert [(f.name, f.default) for f in dataclasses.fields(Workload)] == [(f.name, f.default) for f in fields_of("workload")]
    assert set(CHANGED) == set(FIELDS_BY_NAME), "the test's changed values name every field"
    for f in SCENARIO_FIELDS:
        assert f.kind in KINDS and f.role in ROLES, f.name
        assert f.help and f.flag.startswith("--") and f.label and f.physics_row, f.name
        assert f.kind == "id" or f.preset_key is not None, f.name


@pytest.mark.parametrize("field", SCENARIO_FIELDS, ids=lambda f: f.name)
def test_each_field_reaches_the_physics_table(field):
    models, accelerators = {"qwen3-30b-a3b": 0, "llama-3.1-8b": 1}, {"h100-sxm": 0, "mi300x": 1}
    before = pack_scenarios([BASE], models, accelerators)[:, 0]
    after = pack_scenarios([BASE.with_changes(**{field.name: CHANGED[field.name]})], models, accelerators)[:, 0]
    assert (before != after).nonzero()[0].tolist() == [layout.SCENARIO_ROW[field.physics_row]]


@pytest.mark.parametrize("field", VALUE_FIELDS, ids=lambda f: f.name)
def test_each_field_survives_a_preset(field, engine):
    changed = BASE.with_changes(**{field.name: CHANGED[field.name]})
    workspace = Workspace(scenario=changed, shown=(changed.accelerator,))
    preset = new_preset("fields", "each field", workspace, engine.model(changed.model))
    document = preset_to_json(preset)
    read = preset_from_json(json.loads(json.dumps(document)), "fields.preset.json", engine.catalog)
    assert read.workspace.scenario == changed
    assert document != preset_to_json(new_preset("fields", "each field", dataclasses.replace(workspace, scenario=BASE),
                                                 engine.model(BASE.model)))


@pytest.mark.parametrize("field", VALUE_FIELDS, ids=lambda f: f.name)
def test_each_field_shows_in_the_summary_the_comments_and_the_json(field, engine):
    changed = BASE.with_changes(**{field.name: CHANGED[field.name]})
    if field.summary is not None:
        assert summary_text(changed) != summary_text(BASE)
    assert comment_lines(changed) != comment_lines(BASE)

    def predicted(scenario):
        model, accelerator = engine.model(scenario.model), engine.catalog.accelerators[scenario.accelerator]
        return result_to_dict(engine.predict(scenario), model, accelerator, engine.constants)["scenario"]

    assert predicted(changed) != predicted(BASE)
    assert predicted(changed)[field.name] == CHANGED[field.name]
    if field.name != "batch":  # a served run sets the batch itself
        assert scenario_dict(changed)[field.name] == CHANGED[field.name]


def test_kv_offload_is_in_predict_json(engine):
    """The drift the registry ended: predict --json printed the same scenario at any KV offload."""
    model, accelerator = engine.model(BASE.model), engine.catalog.accelerators[BASE.accelerator]
    document = result_to_dict(engine.predict(BASE.with_changes(kv_offload=0.5)), model, accelerator, engine.constants)
    assert document["scenario"]["kv_offload"] == 0.5


@pytest.mark.parametrize("field", SCENARIO_FIELDS, ids=lambda f: f.name)
def test_each_field_has_a_flag_and_a_jsonl_key(field):
    import argparse

    parser = argparse.ArgumentParser()
    add_scenario_arguments(parser)
    value = CHANGED[field.name]
    text = str(value)
    args = parser.parse_args(["--model", "m", "--accelerator", "a", field.flag, text])
    values = scenario_values(vars(args))
    assert values[field.name] == value
    from_jsonl = scenario_values({"model": "m", "accelerator": "a", field.name: value})
    assert from_jsonl[field.name] == value


def test_each_field_has_a_control(qtbot, engine):
    from accelscope.gui.controls.scenario_panel import TOOLTIPS, ControlsPanel

    panel = ControlsPanel(engine.catalog)
    qtbot.addWidget(panel)
    for f in SCENARIO_FIELDS:
        widget = panel.widget_for(f.name)
        assert widget is not None, f"no control for {f.name}"
        assert widget.toolTip() == TOOLTIPS["accelerators" if f.name == "accelerator" else f.name], f.name
        assert f.kind == "id" or f.name in panel.bindings, f.name


def test_the_shared_generator_varies_every_field():
    rng = random.Random(7)
    drawn = [random_scenario(rng, ["a", "b"], ["x", "y"]) for _ in range(200)]
    for f in SCENARIO_FIELDS:
        assert len({getattr(s, f.name) for s in drawn}) > 1, f"the generator never varies {f.name}"
    assert set(KIND_DRAWS) == set(KINDS) - {"id"}


@pytest.mark.parametrize("field", VALUE_FIELDS, ids=lambda f: f.name)
def test_each_field_shows_in_the_explanation(field, engine):
    """The explanation's scenario sentences say each input (a MoE model with EP 2, so EP shows)."""
    from accelscope.engine.text.explain import explain

    def scenario_section(scenario):
        return explain(engine, engine.resolve(scenario)).plain_text()

    assert scenario_section(BASE.with_changes(**{field.name: CHANGED[field.name]})) != scenario_section(BASE)


def test_each_field_is_a_term_of_the_formula_sheet(engine):
    """Each input is a term of the formula sheet, linked to its control (F1 jumps to it)."""
    from accelscope.engine.physics.frame import compute_frame
    from accelscope.engine.text.formulas import formula_sheet

    workspace = Workspace(scenario=engine.resolve(BASE.with_changes(offload=0.1, kv_offload=0.1)),
                          shown=(BASE.accelerator,))
    sheet = formula_sheet(engine, compute_frame(engine, workspace), BASE.accelerator)
    linked = {control for section in sheet.sections for control in section.controls}
    assert {f.name for f in SCENARIO_FIELDS} - {"accelerator"} <= linked
