"""Presets: every bundled one loads, predicts and round-trips; malformed files are refused with
the file and the field named and nothing changed; saves are atomic; listing, finding and the
``accelscope presets`` command."""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from accelscope.cli.main import main
from accelscope.engine.catalog.hf_config import load_hf_config
from accelscope.engine.catalog.models import load_bundled_models, model_from_table, model_to_table
from accelscope.engine.catalog.presets import (
    BUNDLED_ORDER,
    MAX_PRESET_BYTES,
    MIGRATIONS,
    PRESET_SCHEMA,
    SCHEMA_VERSION,
    Preset,
    PresetError,
    bundled_preset_files,
    find_preset,
    list_presets,
    load_preset,
    migrate,
    new_preset,
    preset_from_json,
    preset_to_json,
    save_preset,
    user_preset_path,
    user_presets_dir,
)
from accelscope.engine.core.errors import CatalogError
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.workspace import VIEWS, Workspace
from accelscope.engine.physics.engine import Engine

FIXTURES = Path(__file__).parent / "fixtures"
HF = FIXTURES / "hf"
KEPT = FIXTURES / "presets"

BUNDLED = [Path(str(entry)) for entry in bundled_preset_files()]
BUNDLED_IDS = [path.stem for path in BUNDLED]


@pytest.fixture
def user_dir(tmp_path, monkeypatch):
    """A private user data folder for this test alone."""
    folder = tmp_path / "data"
    monkeypatch.setenv("ACCELSCOPE_DATA_DIR", str(folder))
    return folder


def good_document() -> dict:
    return {
        "schema": PRESET_SCHEMA,
        "name": "A test preset",
        "description": "Set up for a test.",
        "model": "llama-3.1-8b",
        "workload": {"batch": 8, "input_len": 512, "output_len": 128},
        "precision": {"weights": "bf16", "activations": "bf16", "kv_cache": "bf16"},
        "parallel": {"tp": 1, "pp": 1, "ep": 1, "dp": 1, "offload": 0.0},
        "accelerators": {"shown": ["a100-80gb", "h100-sxm"], "selected": "h100-sxm"},
        "view": "sweep",
    }


def write_json(path: Path, document: object) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


# ---- the bundled presets ---------------------------------------------------------------


def test_bundled_files_are_exactly_the_ordered_stems():
    assert BUNDLED_IDS == list(BUNDLED_ORDER)
    assert len(BUNDLED_ORDER) == 22


@pytest.mark.parametrize("path", BUNDLED, ids=BUNDLED_IDS)
def test_bundled_preset_validates_and_predicts(path, catalog, engine):
    preset = load_preset(path, catalog, bundled=True)
    workspace = preset.workspace
    # Bundled presets use catalog models, or embed a synthetic one (the scaling lesson's 1T MoE).
    if preset.model is not None:
        assert preset.model.family == "synthetic" and preset.model.id == workspace.scenario.model
        engine = Engine(catalog).with_models(preset.model)
    assert workspace.view in VIEWS
    assert workspace.selected in workspace.shown
    for accelerator_id in workspace.shown:
        result = engine.predict(workspace.scenario_on(accelerator_id))
        assert math.isfinite(result.throughput_output_tok_s) and result.throughput_output_tok_s > 0
    assert engine.predict(workspace.scenario).fits  # the selected device runs what the preset sets up


@pytest.mark.parametrize("path", BUNDLED, ids=BUNDLED_IDS)
def test_bundled_preset_round_trips(path, catalog, tmp_path):
    first = load_preset(path, catalog, bundled=True)
    copy = tmp_path / path.name
    save_preset(first, copy)
    second = load_preset(copy, catalog)
    assert second.workspace == first.workspace
    assert (second.name, second.description) == (first.name, first.description)
    # An embedded model is the same wherever its file lies.
    assert (second.model and replace(second.model, source_file="")) == (first.model and replace(first.model, source_file=""))
    # The bundled files are kept in the form save_preset writes, so a re-save changes no byte.
    assert copy.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("path", BUNDLED, ids=BUNDLED_IDS)
def test_bundled_description_says_what_to_look_at(path, catalog):
    preset = load_preset(path, catalog)
    s = preset.workspace.scenario
    assert 200 < len(preset.description) < 1600
    assert any(word in preset.description for word in ("view", "plot", "tab"))
    if path.stem.startswith("brunetta-"):
        # The second paper's chat conversations, until the project states its calibrated lengths.
        assert (s.input_len, s.output_len) == (512, 256)
        assert re.search(r"stand(ing)? in for .*conversations", preset.description)
        assert "Fig." in preset.description
    fp8 = path.stem in ("brunetta-fig3-fp8-vs-bf16", "brunetta-fig6-ep-vs-tp-moe", "sharma-scaling-1t-moe")
    expected = ("fp8", "fp8", "bf16") if fp8 else ("bf16", "bf16", "bf16")
    # The lessons on newer designs: Qwen3-Next's FP8 weights; gpt-oss's own MXFP4, with FP4 products.
    expected = {"teach-hybrid-long-context": ("fp8", "bf16", "bf16"),
                "teach-fp4-weights": ("mxfp4", "mxfp4", "bf16")}.get(path.stem, expected)
    assert (s.weight_precision, s.activation_precision, s.kv_precision) == expected


def test_bundled_names_are_distinct(catalog):
    names = [load_preset(path, catalog).name for path in BUNDLED]
    assert len(set(names)) == len(names)


# ---- kept files of older versions --------------------------------------------------------


def test_kept_v1_preset_with_a_catalog_model(catalog):
    preset = load_preset(KEPT / "v1-catalog-model.json", catalog)
    assert preset.workspace == Workspace(
        Scenario(
            model="qwen3-32b", accelerator="a100-80gb", batch=48, input_len=2048, output_len=512,
            weight_precision="fp8", activation_precision="fp8", kv_precision="bf16",
            tp=2, pp=1, ep=1, dp=3, offload=0.25,
        ),
        shown=("mi300x", "h100-sxm", "a100-80gb"),
        view="energy",
    )
    assert preset.model is None and preset.source == KEPT / "v1-catalog-model.json" and not preset.bundled
    assert preset.workspace.scenario.kv_offload == 0.0  # written before the key existed


def test_kv_offload_round_trips_and_is_written_only_when_set(catalog, tmp_path):
    path = tmp_path / "kv.json"
    save_preset(a_preset(kv_offload=0.4), path)
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["schema"] == "accelscope.preset/1" and document["parallel"]["kv_offload"] == 0.4
    assert load_preset(path, catalog).workspace.scenario.kv_offload == 0.4
    save_preset(a_preset(), path)
    document = json.loads(path.read_text(encoding="utf-8"))
    assert "kv_offload" not in document["parallel"]
    assert load_preset(path, catalog).workspace.scenario.kv_offload == 0.0


def test_view_options_round_trip_and_defaults_are_not_written(catalog, tmp_path):
    path = tmp_path / "options.json"
    preset = a_preset()
    workspace = preset.workspace.with_options(far_tier="cxl2-expander-x16", device_budget=8, routing_skew=1.2)
    save_preset(replace(preset, workspace=workspace), path)
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["view_options"] == {"device_budget": 8, "far_tier": "cxl2-expander-x16", "routing_skew": 1.2}
    loaded = load_preset(path, catalog).workspace
    assert loaded == workspace
    assert (loaded.option("far_tier"), loaded.option("device_budget"), loaded.option("routing_skew")) == (
        "cxl2-expander-x16", 8, 1.2)
    # Options at their defaults are dropped, so the file is as before and workspaces compare equal.
    default = preset.workspace.with_options(far_tier="own", device_budget=4, routing_skew=0.0)
    assert default == preset.workspace and default.options == ()
    save_preset(replace(preset, workspace=default), path)
    assert "view_options" not in json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("options", "field", "words"), [
    ({"far_tier": "floppy"}, "view_options.far_tier", "must be one of own, host-ddr5-pcie5"),
    ({"device_budget": 3}, "view_options.device_budget", "must be one of 2, 4, 8, 16"),
    ({"device_budget": "4"}, "view_options.device_budget", "must be an integer"),
    ({"routing_skew": -1}, "view_options.routing_skew", "between 0 and 4"),
    ({"routing_skew": True}, "view_options.routing_skew", "between 0 and 4"),
    ({"zoom": 2}, "view_options.zoom", "unknown"),
    ({"run_here_device": "rtx-9090"}, "view_options.run_here_device", "unknown accelerator id 'rtx-9090'"),
    ({"run_here_device": 4090}, "view_options.run_here_device", "must be a string"),
    (None, "view_options", "must not be null"),
    ([1], "view_options", "table"),
])
def test_bad_view_options_are_refused_naming_the_field(options, field, words, catalog):
    document = preset_to_json(a_preset())
    document["view_options"] = options
    with pytest.raises(PresetError) as raised:
        preset_from_json(document, "p.json", catalog)
    message = str(raised.value)
    assert field in message and words in message, message


def test_kept_v1_preset_with_an_embedded_model(catalog, engine, tmp_path):
    preset = load_preset(KEPT / "v1-embedded-model.json", catalog)
    model = preset.model
    assert preset.workspace.scenario.model == model.id == "tiny-moe"
    assert preset.workspace.shown == () and preset.workspace.selected == "h100-sxm"
    assert model.layer_attention == ("window", "full", "window", "full") and model.sliding_window == 512
    assert model.moe.n_routed_experts == 8 and model.n_moe_layers == 3
    assert model.total_params == model.nominal_total_params
    # It runs once the app registers it, and it survives a save.
    private = Engine(catalog=catalog).with_models(model)
    assert private.predict(preset.workspace.scenario).fits
    save_preset(preset, tmp_path / "again.json")
    again = load_preset(tmp_path / "again.json", catalog)
    assert again.workspace == preset.workspace
    assert again.model == replace(model, source_file=str(tmp_path / "again.json"))


# ---- migrations --------------------------------------------------------------------------


def test_migrations_registry_is_a_chain_up_to_the_current_version():
    assert all(1 <= version < SCHEMA_VERSION for version in MIGRATIONS)


def test_an_older_version_is_migrated_step_by_step():
    def one_to_two(document):
        document["view"] = {"tab": document["view"]}
        return document

    def two_to_three(document):
        document["view"] = document["view"]["tab"].upper()
        return document

    old = {"schema": "accelscope.preset/1", "view": "sweep"}
    new = migrate(old, "old.json", current=3, migrations={1: one_to_two, 2: two_to_three})
    assert new == {"schema": "accelscope.preset/3", "view": "SWEEP"}
    assert old == {"schema": "accelscope.preset/1", "view": "sweep"}  # the input is not changed


def test_an_older_version_without_a_migration_is_refused():
    with pytest.raises(PresetError) as raised:
        migrate({"schema": "accelscope.preset/1"}, "old.json", current=2, migrations={})
    assert raised.value.field == "schema" and "no longer supported" in str(raised.value)


# ---- malformed files ----------------------------------------------------------------------


def edit(change):
    def make(path: Path) -> None:
        document = good_document()
        change(document)
        write_json(path, document)

    return make


def text(content: str | bytes):
    def make(path: Path) -> None:
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")

    return make


def embedded_qwen(document):
    model = model_to_table(load_hf_config(HF / "qwen3-8b" / "config.json"))  # id "qwen3-8b", as the catalog's
    document["model"] = model


BAD_PRESETS = [
    # (case, how to make the file, field the message names (None: the whole file), words in the message)
    ("not JSON", text("{this is not json"), None, "not valid JSON"),
    ("a JSON list", text("[1, 2, 3]"), None, "must be a JSON object"),
    ("not UTF-8", text(b'{"name": "\xff"}'), None, "not UTF-8"),
    ("unknown key", edit(lambda d: d.update(colour="red")), "colour", "unknown key"),
    ("unknown nested key", edit(lambda d: d["workload"].update(batches=3)), "workload.batches", "unknown key"),
    ("missing key", edit(lambda d: d.pop("view")), "view", "required field is missing"),
    ("missing nested key", edit(lambda d: d["parallel"].pop("ep")), "parallel.ep", "required field is missing"),
    ("null value", edit(lambda d: d["workload"].update(batch=None)), "workload.batch", "must not be null"),
    ("wrong type", edit(lambda d: d["workload"].update(batch="64")), "workload.batch", "must be an integer"),
    ("float for int", edit(lambda d: d["workload"].update(batch=8.0)), "workload.batch", "must be an integer"),
    ("bool for int", edit(lambda d: d["parallel"].update(tp=True)), "parallel.tp", "must be an integer"),
    ("negative batch", edit(lambda d: d["workload"].update(batch=-4)), "workload.batch", "between 1 and"),
    ("zero output", edit(lambda d: d["workload"].update(output_len=0)), "workload.output_len", "between 1 and"),
    ("absurd tp", edit(lambda d: d["parallel"].update(tp=10**9)), "parallel.tp", "between 1 and"),
    ("NaN offload", text(json.dumps(good_document()).replace('"offload": 0.0', '"offload": NaN')),
     "parallel.offload", "finite number between 0 and 1"),
    ("infinite offload", text(json.dumps(good_document()).replace('"offload": 0.0', '"offload": Infinity')),
     "parallel.offload", "finite number between 0 and 1"),
    ("offload above 1", edit(lambda d: d["parallel"].update(offload=1.5)), "parallel.offload", "between 0 and 1"),
    ("bool offload", edit(lambda d: d["parallel"].update(offload=False)), "parallel.offload", "must be a number"),
    ("KV offload above 1", edit(lambda d: d["parallel"].update(kv_offload=1.5)), "parallel.kv_offload",
     "between 0 and 1"),
    ("null KV offload", edit(lambda d: d["parallel"].update(kv_offload=None)), "parallel.kv_offload", "must not be null"),
    ("text KV offload", edit(lambda d: d["parallel"].update(kv_offload="half")), "parallel.kv_offload",
     "must be a number"),
    ("unknown precision", edit(lambda d: d["precision"].update(weights="fp6")), "precision.weights", "must be one of"),
    ("unknown view", edit(lambda d: d.update(view="heatmap")), "view", "must be one of roofline"),
    ("empty name", edit(lambda d: d.update(name="  ")), "name", "must not be empty"),
    ("name with a line break", edit(lambda d: d.update(name="two\nlines")), "name", "line breaks"),
    ("long description", edit(lambda d: d.update(description="x" * 5000)), "description", "at most 4,000"),
    ("unknown model id", edit(lambda d: d.update(model="llama-3.1-8c")), "model", "unknown model id 'llama-3.1-8c'"),
    ("model of a wrong type", edit(lambda d: d.update(model=["llama-3.1-8b"])), "model", "catalog model id or a model table"),
    ("unknown accelerator id", edit(lambda d: d["accelerators"].update(shown=["a100-80gb", "h100-sxn"])),
     "accelerators.shown[1]", "did you mean h100-sxm"),
    ("unknown selected id", edit(lambda d: d["accelerators"].update(shown=[], selected="tpu-v9")),
     "accelerators.selected", "unknown accelerator id 'tpu-v9'"),
    ("selected not shown", edit(lambda d: d["accelerators"].update(selected="mi300x")),
     "accelerators.selected", "must be one of the shown"),
    ("accelerator shown twice", edit(lambda d: d["accelerators"].update(shown=["h100-sxm", "h100-sxm"])),
     "accelerators.shown[1]", "listed twice"),
    ("accelerator id not a string", edit(lambda d: d["accelerators"].update(shown=[7])),
     "accelerators.shown[0]", "must be an accelerator id"),
    ("newer schema", edit(lambda d: d.update(schema="accelscope.preset/2")), "schema", "newer than this accelscope"),
    ("missing schema", edit(lambda d: d.pop("schema")), "schema", "required field is missing"),
    ("foreign schema", edit(lambda d: d.update(schema="otherapp/1")), "schema", "not an accelscope preset schema"),
    ("schema of a wrong type", edit(lambda d: d.update(schema=1)), "schema", "must be a string"),
    ("duplicate key", text('{"schema": "accelscope.preset/1", "view": "sweep", "view": "memory"}'), None, "appears twice"),
    ("integer too long", text('{"workload": {"batch": 1' + "0" * 5000 + "}}"), None, "not valid JSON"),
    ("nested too deeply", text("[" * 200_000 + "]" * 200_000), None, "not valid JSON"),
    ("larger than 1 MB", edit(lambda d: d.update(description="x" * (MAX_PRESET_BYTES + 10))), None, "larger than 1 MB"),
    ("embedded model with a bad field",
     edit(lambda d: d.update(model={**model_to_table(load_bundled_models()["llama-3.1-8b"]), "id": "mine",
                                    "architecture": {**model_to_table(load_bundled_models()["llama-3.1-8b"])["architecture"],
                                                     "n_kv_heads": 6}})),
     "model.architecture.n_kv_heads", "must divide n_heads"),
    ("embedded model with an unknown key",
     edit(lambda d: d.update(model={**model_to_table(load_bundled_models()["llama-3.1-8b"]), "id": "mine", "size": 8})),
     "model.size", "unknown key"),
    ("embedded model reusing a catalog id", edit(embedded_qwen), "model.id", "different catalog model"),
]


@pytest.mark.parametrize(("case", "make", "field", "words"), BAD_PRESETS, ids=[case[0] for case in BAD_PRESETS])
def test_malformed_preset_is_refused_naming_file_and_problem(case, make, field, words, catalog, tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    path = folder / "from-a-student.json"
    make(path)
    before = snapshot(folder)
    with pytest.raises(PresetError) as raised:
        load_preset(path, catalog)
    error = raised.value
    assert isinstance(error, CatalogError)
    message = str(error)
    assert "from-a-student.json" in message and words in message
    assert error.field == field
    if field is not None:
        assert f": {field}: " in message
    assert snapshot(folder) == before  # nothing written, nothing changed


def test_preset_from_json_needs_an_object(catalog):
    with pytest.raises(PresetError, match="must be a JSON object"):
        preset_from_json(["not", "an", "object"], "x.json", catalog)


def test_preset_from_json_registers_nothing(catalog):
    document = good_document()
    document["model"] = {**model_to_table(load_bundled_models()["qwen3-8b"]), "id": "my-qwen"}
    models, accelerators = dict(catalog.models), dict(catalog.accelerators)
    preset = preset_from_json(document, "x.json", catalog)
    assert preset.model.id == "my-qwen"
    assert catalog.models == models and catalog.accelerators == accelerators


# ---- embedded models ------------------------------------------------------------------------


def model_sources():
    models = list(load_bundled_models().values())
    for folder in sorted(HF.iterdir()):
        models.append(load_hf_config(folder / "config.json", model_id=f"{folder.name}-hf"))
    return models


@pytest.mark.parametrize("model", model_sources(), ids=lambda model: model.id)
def test_model_table_round_trips(model):
    table = json.loads(json.dumps(model_to_table(model)))
    assert model_from_table(table, "x.json", source_file=model.source_file) == model


def test_embedded_model_from_a_config_json_round_trips(catalog, tmp_path):
    model = load_hf_config(HF / "qwen3-8b" / "config.json", model_id="qwen3-8b-imported")
    workspace = Workspace(Scenario(model=model.id, accelerator="h100-sxm", batch=16), ("h100-sxm", "mi300x"), "memory")
    preset = new_preset("Imported Qwen3 8B", "A model imported from its config.json.", workspace, model)
    assert preset.model is model  # not a bundled model: carried inside the preset
    path = tmp_path / "imported.json"
    save_preset(preset, path)
    assert json.loads(path.read_text(encoding="utf-8"))["model"]["architecture"]["qk_norm"] is True
    loaded = load_preset(path, catalog)
    assert loaded.workspace == workspace
    assert loaded.model == replace(model, source_file=str(path))  # source_file: where it was read from
    save_preset(loaded, tmp_path / "again.json")
    assert load_preset(tmp_path / "again.json", catalog).model == replace(model, source_file=str(tmp_path / "again.json"))
    engine = Engine(catalog=catalog).with_models(loaded.model)
    assert engine.predict(loaded.workspace.scenario).fits


def test_new_preset_refers_to_a_bundled_model_by_id():
    model = load_bundled_models()["llama-3.1-8b"]
    workspace = Workspace(Scenario(model=model.id, accelerator="h100-sxm"), ("h100-sxm",))
    preset = new_preset("Plain", "", workspace, model)
    assert preset.model is None and preset_to_json(preset)["model"] == "llama-3.1-8b"


def test_new_preset_gives_a_changed_bundled_model_an_id_of_its_own(catalog, tmp_path):
    imported = load_hf_config(HF / "qwen3-8b" / "config.json")  # id "qwen3-8b", nominal sizes of its own
    workspace = Workspace(Scenario(model="qwen3-8b", accelerator="h100-sxm"), ("h100-sxm",))
    preset = new_preset("Imported", "", workspace, imported)
    assert preset.model == replace(imported, id="qwen3-8b-custom")
    assert preset.workspace == workspace.with_scenario(model="qwen3-8b-custom")
    save_preset(preset, tmp_path / "imported.json")
    assert load_preset(tmp_path / "imported.json", catalog).model.id == "qwen3-8b-custom"
    with pytest.raises(ValueError, match="not the workspace's model"):
        new_preset("Wrong", "", workspace, load_bundled_models()["llama-3.1-8b"])


def test_an_embedded_model_equal_to_the_catalog_one_is_accepted(catalog):
    document = good_document()
    document["model"] = model_to_table(catalog.models["llama-3.1-8b"])
    preset = preset_from_json(document, "x.json", catalog)
    assert preset.workspace.scenario.model == "llama-3.1-8b"


def test_preset_to_json_refuses_a_model_that_is_not_the_workspaces():
    model = load_bundled_models()["qwen3-8b"]
    workspace = Workspace(Scenario(model="llama-3.1-8b", accelerator="h100-sxm"), ())
    with pytest.raises(ValueError, match="not the workspace's model"):
        preset_to_json(Preset("x", "", workspace, model))


# ---- atomic saves ---------------------------------------------------------------------------


def a_preset(batch: int = 8, kv_offload: float = 0.0) -> Preset:
    scenario = Scenario(model="llama-3.1-8b", accelerator="h100-sxm", batch=batch, kv_offload=kv_offload)
    workspace = Workspace(scenario, ("h100-sxm",), "sweep")
    return Preset("Saved", "A preset to save.", workspace)


@pytest.fixture
def saved(tmp_path):
    folder = tmp_path / "presets"
    path = folder / "mine.json"
    save_preset(a_preset(batch=8), path)
    return path


def fail(error: Exception):
    raise error


def fail_after_partial_write(document, stream, **options):
    stream.write(json.dumps(document, **options)[:40])
    stream.flush()
    raise OSError(28, "No space left on device")


@pytest.mark.parametrize(
    ("target", "replacement"),
    [
        ("json.dump", fail_after_partial_write),
        ("os.fsync", lambda fd: fail(OSError(5, "Input/output error"))),
        ("os.replace", lambda source, target: fail(OSError(13, "Permission denied"))),
    ],
    ids=["partial write", "fsync", "rename"],
)
def test_a_failed_save_leaves_the_previous_file_and_no_temporary(saved, monkeypatch, target, replacement, catalog):
    before = snapshot(saved.parent)
    monkeypatch.setattr(target, replacement)
    with pytest.raises(OSError):
        save_preset(a_preset(batch=64), saved)
    monkeypatch.undo()
    assert snapshot(saved.parent) == before  # the old file byte for byte, and nothing else
    assert load_preset(saved, catalog).workspace.scenario.batch == 8


def test_an_interrupted_save_leaves_the_previous_file(saved, monkeypatch):
    before = snapshot(saved.parent)

    def interrupted(document, stream, **options):
        stream.write("{")
        raise KeyboardInterrupt

    monkeypatch.setattr("json.dump", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_preset(a_preset(batch=64), saved)
    monkeypatch.undo()
    assert snapshot(saved.parent) == before


def test_a_save_replaces_the_file_and_leaves_nothing_else(saved, catalog):
    save_preset(a_preset(batch=64), saved)
    assert [path.name for path in saved.parent.iterdir()] == ["mine.json"]
    assert load_preset(saved, catalog).workspace.scenario.batch == 64


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_a_save_keeps_the_files_permissions(saved):
    assert saved.stat().st_mode & 0o777 == 0o644  # readable by others, as a file written in place would be
    saved.chmod(0o600)
    save_preset(a_preset(batch=64), saved)
    assert saved.stat().st_mode & 0o777 == 0o600


def test_an_invalid_preset_is_not_saved(saved):
    before = snapshot(saved.parent)
    bad = a_preset()
    bad = replace(bad, workspace=bad.workspace.with_scenario(offload=math.nan))
    with pytest.raises(PresetError) as raised:
        save_preset(bad, saved)
    assert raised.value.field == "parallel.offload"
    with pytest.raises(PresetError, match="view"):
        save_preset(replace(bad, workspace=a_preset().workspace.with_changes(view="table")), saved)
    assert snapshot(saved.parent) == before


def test_an_oversized_preset_is_not_saved(saved):
    before = snapshot(saved.parent)
    # Names and descriptions are capped; a model's notes are not, so only an embedded model grows this large.
    model = replace(load_bundled_models()["llama-3.1-8b"], id="big", notes="x" * MAX_PRESET_BYTES)
    huge = Preset("Huge", "", Workspace(Scenario(model="big", accelerator="h100-sxm"), ()), model)
    with pytest.raises(PresetError, match="larger than 1 MB"):
        save_preset(huge, saved)
    assert snapshot(saved.parent) == before


# ---- listing and finding --------------------------------------------------------------------


def test_user_presets_live_in_the_user_data_folder(user_dir):
    assert user_presets_dir() == user_dir / "presets"
    assert user_preset_path("Roofline: my version!") == user_dir / "presets" / "roofline-my-version.json"


def test_list_presets_shows_a_broken_user_file_and_loads_the_others(user_dir, catalog):
    folder = user_presets_dir()
    folder.mkdir(parents=True)
    save_preset(a_preset(), folder / "mine.json")
    write_json(folder / "broken.json", {**good_document(), "view": "heatmap"})
    (folder / "notes.txt").write_text("not a preset", encoding="utf-8")
    entries = list_presets(catalog)
    assert [entry.path.stem for entry in entries] == [*BUNDLED_ORDER, "broken", "mine"]
    assert all(entry.bundled and entry.problem is None for entry in entries[: len(BUNDLED_ORDER)])
    broken, mine = entries[-2:]
    assert not broken.bundled and "broken.json" in broken.problem and "view" in broken.problem
    assert (mine.name, mine.problem, mine.bundled) == ("Saved", None, False)


def test_list_presets_without_a_user_folder(user_dir, catalog):
    assert [entry.path.stem for entry in list_presets(catalog)] == list(BUNDLED_ORDER)


def test_find_a_bundled_preset_by_stem_and_by_name(user_dir, catalog):
    by_stem = find_preset("teach-roofline-basics", catalog)
    assert by_stem.name == "Roofline basics" and by_stem.bundled
    assert by_stem.source.name == "teach-roofline-basics.json"
    by_name = find_preset("Roofline basics", catalog)
    assert by_name.workspace == by_stem.workspace
    assert find_preset("roofline BASICS", catalog).workspace == by_stem.workspace


def test_find_a_preset_by_path(user_dir, catalog, tmp_path):
    path = tmp_path / "elsewhere" / "shared.json"
    save_preset(a_preset(batch=32), path)
    assert find_preset(str(path), catalog).workspace.scenario.batch == 32
    with pytest.raises(PresetError, match="no such preset file"):
        find_preset(str(tmp_path / "missing.json"), catalog)


def test_a_user_preset_comes_before_a_bundled_one_of_the_same_stem(user_dir, catalog):
    save_preset(a_preset(batch=99), user_presets_dir() / "teach-roofline-basics.json")
    found = find_preset("teach-roofline-basics", catalog)
    assert found.workspace.scenario.batch == 99 and not found.bundled
    assert find_preset("Saved", catalog).workspace.scenario.batch == 99


def test_an_unknown_preset_lists_close_matches(user_dir, catalog):
    with pytest.raises(PresetError) as raised:
        find_preset("roofline basic", catalog)
    assert "did you mean" in str(raised.value) and "Roofline basics" in str(raised.value)
    with pytest.raises(PresetError, match="accelscope presets"):
        find_preset("zzzzzz", catalog)


def test_a_broken_user_file_asked_for_by_stem_reports_its_problem(user_dir, catalog):
    user_presets_dir().mkdir(parents=True)
    write_json(user_presets_dir() / "broken.json", {**good_document(), "model": "gpt-9"})
    with pytest.raises(PresetError) as raised:
        find_preset("broken", catalog)
    assert raised.value.field == "model" and "broken.json" in str(raised.value)


# ---- the command line -----------------------------------------------------------------------


def test_cli_presets_json(user_dir, capsys):
    user_presets_dir().mkdir(parents=True)
    save_preset(a_preset(), user_presets_dir() / "mine.json")
    write_json(user_presets_dir() / "broken.json", [1, 2])
    status = main(["presets", "--json"])
    captured = capsys.readouterr()
    assert status == 0 and captured.err == ""
    rows = json.loads(captured.out)["presets"]
    assert [row["file"] for row in rows] == [f"{stem}.json" for stem in BUNDLED_ORDER] + ["broken.json", "mine.json"]
    assert set(rows[0]) == {"name", "file", "path", "bundled", "description", "problem"}
    assert all(row["bundled"] and row["problem"] is None and row["description"] for row in rows[:-2])
    broken, mine = rows[-2:]
    assert not broken["bundled"] and "must be a JSON object" in broken["problem"]
    assert (mine["name"], mine["bundled"], mine["problem"]) == ("Saved", False, None)
    assert os.path.samefile(mine["path"], user_presets_dir() / "mine.json")


def test_cli_presets_text(user_dir, capsys):
    user_presets_dir().mkdir(parents=True)
    write_json(user_presets_dir() / "broken.json", {**good_document(), "schema": "accelscope.preset/7"})
    status = main(["presets"])
    out = capsys.readouterr().out
    assert status == 0
    assert "teach-roofline-basics.json" in out and "Roofline basics" in out
    assert "broken.json" in out and "problem:" in out and "newer than this accelscope" in out


def test_the_memory_bound_lesson_states_the_engines_ratios(catalog, engine):
    """The classroom preset quotes ratios a student will read off the latency view; they must
    be the engine's, rounded as written."""
    path = next(p for p in BUNDLED if p.stem == "teach-why-decode-is-memory-bound")
    preset = load_preset(path, catalog)
    text = preset.description
    scenario = preset.workspace.scenario

    def result(accelerator: str, batch: int):
        return engine.predict(scenario.with_changes(accelerator=accelerator, batch=batch))

    a100, h100, h100_64 = result("a100-80gb", 1), result("h100-sxm", 1), result("h100-sxm", 64)
    stated = {
        "itl": float(re.search(r"inter-token latency is only about ([\d.]+)× shorter", text).group(1)),
        "ttft": float(re.search(r"time to first token \(prefill, compute-bound\) is about ([\d.]+)× shorter",
                                text).group(1)),
        "throughput": float(re.search(r"output throughput grows about ([\d.]+)×", text).group(1)),
        "itl_growth": float(re.search(r"inter-token latency grows only about ([\d.]+)×", text).group(1)),
    }
    assert stated["itl"] == pytest.approx(a100.itl_s / h100.itl_s, abs=0.05)
    assert stated["ttft"] == pytest.approx(a100.ttft_s / h100.ttft_s, abs=0.5)
    assert stated["throughput"] == pytest.approx(h100_64.throughput_output_tok_s / h100.throughput_output_tok_s, abs=0.5)
    assert stated["itl_growth"] == pytest.approx(h100_64.itl_s / h100.itl_s, abs=0.05)


def test_the_run_here_device_round_trips_and_the_selected_one_is_the_default(catalog, tmp_path):
    path = tmp_path / "run-here.json"
    preset = a_preset()
    workspace = preset.workspace.with_options(run_here_device="m4-max")
    save_preset(replace(preset, workspace=workspace), path)
    assert json.loads(path.read_text(encoding="utf-8"))["view_options"] == {"run_here_device": "m4-max"}
    assert load_preset(path, catalog).workspace == workspace
    assert preset.workspace.with_options(run_here_device="") == preset.workspace  # "": the selected accelerator
