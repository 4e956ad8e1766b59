"""Importing Hugging Face config.json files.

The fixtures under tests/fixtures/hf are the published config.json files of one model per
family, written out by hand (no network in the test run); each must give the same derived
counts as the bundled catalog entry for that model.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path

import pytest

from accelscope.engine.catalog.hf_config import SUPPORTED_ARCHITECTURES, load_hf_config
from accelscope.engine.catalog.models import load_bundled_models, load_model_file, model_to_table
from accelscope.engine.core.errors import CatalogError

FIXTURES = Path(__file__).parent / "fixtures" / "hf"
FIXTURE_NAMES = sorted(entry.name for entry in FIXTURES.iterdir() if (entry / "config.json").is_file())

# The Hugging Face config.json of Ministral 8B sets one 32K window with a 32K context
# (transformers' limit), so it imports as full attention; the catalog keeps the model's
# interleaved 128K/32K pattern. Every other fixture must give the catalog's layout.
LAYOUT_DIFFERS = {"ministral-8b"}


@pytest.fixture(scope="module")
def catalog():
    return load_bundled_models()


def fixture_config(name: str) -> dict:
    return json.loads((FIXTURES / name / "config.json").read_text())


def write_config(tmp_path: Path, config: object, folder: str = "some-model") -> Path:
    path = tmp_path / folder / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def test_one_fixture_per_family():
    assert set(FIXTURE_NAMES) >= {
        "llama-3.1-8b",
        "ministral-8b",
        "mixtral-8x7b",
        "qwen2.5-72b",
        "qwen3-8b",
        "qwen3-235b-a22b",
        "deepseek-r1",
        "llama-4-scout-17b-16e",
        "gpt-oss-120b",
        "qwen3-next-80b-a3b",
        "gemma-3-4b",
        "glm-4.5-air",
        "deepseek-v3",
        "kimi-k2",
        "nemotron-h-8b",
        "phi-4",
    }


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_matches_catalog(catalog, name):
    imported = load_hf_config(FIXTURES / name / "config.json")
    bundled = catalog[name]
    assert imported.id == name  # slug of the folder
    assert imported.family == bundled.family
    assert imported.total_params == bundled.total_params
    assert imported.active_params == bundled.active_params
    assert imported.matmul_params_per_token == bundled.matmul_params_per_token
    assert imported.kv_elements_per_token_per_layer == bundled.kv_elements_per_token_per_layer
    assert imported.n_moe_layers == bundled.n_moe_layers
    layers = range(bundled.n_layers)
    assert [imported.is_moe_layer(layer) for layer in layers] == [bundled.is_moe_layer(layer) for layer in layers]
    assert (imported.qkv_bias, imported.qk_norm) == (bundled.qkv_bias, bundled.qk_norm)
    switches = ("o_bias", "attention_sinks", "attention_output_gate", "ffn_kind", "ffn_bias", "deltanet", "mamba")
    assert [getattr(imported, key) for key in switches] == [getattr(bundled, key) for key in switches]
    assert imported.layer_intermediate_sizes == bundled.layer_intermediate_sizes
    assert (imported.moe.router_bias if imported.moe else None) == (bundled.moe.router_bias if bundled.moe else None)
    if imported.native_weight_precision:  # the catalog may know a format its config.json does not state
        imported_format = (imported.native_weight_precision, imported.native_precision_scope)
        assert imported_format == (bundled.native_weight_precision, bundled.native_precision_scope)
    if name not in LAYOUT_DIFFERS:
        assert imported.layer_attention == bundled.layer_attention
        assert imported.sliding_window == bundled.sliding_window
        assert imported.attention_chunk == bundled.attention_chunk
    # No nominal size in a config.json: the derived counts stand in, and the notes say so.
    assert imported.nominal_total_params == imported.total_params
    assert imported.nominal_active_params == imported.active_params
    assert "nominal" in imported.notes
    assert imported.source_file.endswith("config.json")


def test_deepseek_fixture_details():
    model = load_hf_config(FIXTURES / "deepseek-r1" / "config.json")
    assert model.mla.kv_lora_rank == 512 and model.mla.q_lora_rank == 1536
    assert (model.moe.n_dense_layers, model.moe.moe_layer_step) == (3, 1)
    assert model.moe.n_shared_experts == 1 and model.moe.shared_expert_intermediate_size == 2048
    assert model.max_context == 163840
    assert "multi-token-prediction" in model.notes


def test_llama4_defaults_no_rope_layers_when_absent(tmp_path):
    config = fixture_config("llama-4-scout-17b-16e")
    del config["text_config"]["no_rope_layers"]
    del config["text_config"]["moe_layers"]
    model = load_hf_config(write_config(tmp_path, config))
    assert model.n_chunked_attention_layers == 36 and model.n_full_attention_layers == 12
    assert model.attention_chunk == 8192
    assert model.n_moe_layers == 48


def test_llama4_fixture_has_chunked_layers(catalog):
    model = load_hf_config(FIXTURES / "llama-4-scout-17b-16e" / "config.json")
    assert model.n_chunked_attention_layers == 36 and model.n_full_attention_layers == 12
    assert model.n_window_attention_layers == 0
    assert model.attention_chunk == 8192 and model.sliding_window == 0
    assert [model.attention_kind(layer) for layer in range(4)] == ["chunked", "chunked", "chunked", "full"]
    bundled = catalog["llama-4-scout-17b-16e"]
    assert model.layer_attention == bundled.layer_attention
    assert model.attention_chunk == bundled.attention_chunk
    # moe_layers lists every layer: the compact form, no per-layer map.
    assert model.layer_moe == () and (model.moe.n_dense_layers, model.moe.moe_layer_step) == (0, 1)
    assert "chunked attention" in model.notes


def test_llama4_chunk_as_long_as_context_is_full_attention(tmp_path):
    config = fixture_config("llama-4-scout-17b-16e")
    config["text_config"]["attention_chunk_size"] = config["text_config"]["max_position_embeddings"]
    model = load_hf_config(write_config(tmp_path, config))
    assert model.layer_attention == () and model.attention_chunk == 0
    assert model.n_full_attention_layers == 48


def test_llama4_irregular_moe_layers(tmp_path):
    config = fixture_config("llama-4-scout-17b-16e")
    config["text_config"]["moe_layers"] = [1, 2, 5]
    model = load_hf_config(write_config(tmp_path, config))
    assert len(model.layer_moe) == 48
    assert [layer for layer in range(48) if model.is_moe_layer(layer)] == [1, 2, 5]
    assert model.n_moe_layers == 3
    assert model.dense_ffn_size(0) == 16384  # intermediate_size_mlp


def test_llama4_interleaved_moe_like_maverick(tmp_path):
    config = fixture_config("llama-4-scout-17b-16e")
    text = config["text_config"]
    text["interleave_moe_layer_step"] = 2
    del text["moe_layers"]
    model = load_hf_config(write_config(tmp_path, config))
    assert model.n_moe_layers == 24
    assert model.is_moe_layer(1) and not model.is_moe_layer(0)
    assert model.layer_moe == () and model.moe.moe_layer_step == 2  # the compact form fits
    assert model.dense_ffn_size(0) == 16384  # intermediate_size_mlp


def test_model_folder_accepted():
    assert load_hf_config(FIXTURES / "mixtral-8x7b").id == "mixtral-8x7b"


def test_layer_types_list(tmp_path):
    config = fixture_config("qwen3-8b")
    config.update(sliding_window=4096, layer_types=["sliding_attention", "full_attention"] * 18)
    model = load_hf_config(write_config(tmp_path, config))
    assert model.n_window_attention_layers == 18 and model.attention_kind(0) == "window"
    assert model.attention_chunk == 0
    config["layer_types"][3] = {"kind": "odd"}
    with pytest.raises(CatalogError) as raised:
        load_hf_config(write_config(tmp_path, config))
    assert raised.value.field == "layer_types[3]"


def test_layer_types_chunked_attention(tmp_path):
    config = fixture_config("qwen3-8b")
    layer_types = ["chunked_attention"] * 3 + ["full_attention"] + ["chunked_attention", "sliding_attention"] * 16
    config.update(attention_chunk_size=8192, sliding_window=4096, layer_types=layer_types)
    model = load_hf_config(write_config(tmp_path, config))
    kinds = [model.attention_kind(layer) for layer in range(6)]
    assert kinds == ["chunked", "chunked", "chunked", "full", "chunked", "window"]
    assert model.n_chunked_attention_layers == 19 and model.n_window_attention_layers == 16
    assert (model.attention_chunk, model.sliding_window) == (8192, 4096)
    del config["attention_chunk_size"]
    with pytest.raises(CatalogError) as raised:
        load_hf_config(write_config(tmp_path, config))
    assert raised.value.field == "attention_chunk_size"
    # A chunk at least as long as the context is full attention.
    config.update(attention_chunk_size=config["max_position_embeddings"])
    model = load_hf_config(write_config(tmp_path, config))
    assert model.n_chunked_attention_layers == 0 and model.attention_chunk == 0
    assert model.n_full_attention_layers == 20


def test_family_from_model_type_alone(tmp_path):
    config = fixture_config("llama-3.1-8b")
    del config["architectures"]
    model = load_hf_config(write_config(tmp_path, config))
    assert model.total_params == 8_030_261_248


def test_model_id_argument_and_hf_cache_layout(tmp_path):
    config = fixture_config("qwen3-8b")
    assert load_hf_config(write_config(tmp_path, config), model_id="my-qwen").id == "my-qwen"
    snapshot = "models--Qwen--Qwen3-8B/snapshots/9c925d64d72725edaf899c6cb9c377fd0709d9c5"
    model = load_hf_config(write_config(tmp_path, config, folder=snapshot))
    assert (model.id, model.name) == ("qwen3-8b", "Qwen3-8B")
    # A user catalog keeps imported configs as models/<name>.json.
    renamed = tmp_path / "models" / "Qwen3-8B-long.json"
    renamed.parent.mkdir()
    renamed.write_text(json.dumps(config))
    assert load_hf_config(renamed).id == "qwen3-8b-long"
    with pytest.raises(CatalogError, match="lowercase"):
        load_hf_config(write_config(tmp_path, config), model_id="Not An Id")


def test_qwen_sliding_window_from_max_window_layers(tmp_path):
    config = fixture_config("qwen3-8b")
    config.update(use_sliding_window=True, sliding_window=4096, max_window_layers=28)
    model = load_hf_config(write_config(tmp_path, config))
    assert model.n_full_attention_layers == 28 and model.n_window_attention_layers == 8
    assert model.sliding_window == 4096


def test_mistral_window_on_every_layer(tmp_path):
    config = fixture_config("ministral-8b")
    config["sliding_window"] = 4096  # Mistral 7B v0.1 style
    model = load_hf_config(write_config(tmp_path, config))
    assert model.n_window_attention_layers == 36 and model.sliding_window == 4096


def test_ministral_ragged_window_pattern(tmp_path, catalog):
    config = fixture_config("ministral-8b")
    config.update(sliding_window=[131072, 32768, 32768, 32768], max_position_embeddings=131072)
    model = load_hf_config(write_config(tmp_path, config))
    bundled = catalog["ministral-8b"]
    assert model.layer_attention == bundled.layer_attention
    assert model.sliding_window == bundled.sliding_window == 32768


def test_qwen3_moe_leading_dense_layers(tmp_path):
    config = fixture_config("qwen3-235b-a22b")
    config["mlp_only_layers"] = [0, 1]
    model = load_hf_config(write_config(tmp_path, config))
    assert model.moe.n_dense_layers == 2 and model.n_moe_layers == 92
    assert model.layer_moe == ()  # the compact form expresses it
    assert model.dense_ffn_size(0) == 12288


def test_qwen3_moe_irregular_dense_layers(tmp_path, catalog):
    config = fixture_config("qwen3-235b-a22b")
    config["mlp_only_layers"] = [0, 5]
    model = load_hf_config(write_config(tmp_path, config))
    assert len(model.layer_moe) == 94
    assert [layer for layer in range(94) if not model.is_moe_layer(layer)] == [0, 5]
    assert model.n_moe_layers == 92
    assert model.dense_ffn_size(0) == model.dense_ffn_size(5) == 12288 and model.dense_ffn_size(1) == 0
    # Two MoE layers (routed experts and router) swapped for two dense FFNs.
    bundled = catalog["qwen3-235b-a22b"]
    moe_layer = bundled.moe.n_routed_experts * bundled.expert_params + bundled.moe_layer_fixed_params
    dense_layer = bundled.ffn_params(12288)
    assert model.total_params == bundled.total_params - 2 * moe_layer + 2 * dense_layer
    active_moe_layer = bundled.moe.experts_per_token * bundled.expert_params + bundled.moe_layer_fixed_params
    assert model.active_params == bundled.active_params - 2 * active_moe_layer + 2 * dense_layer


def test_qwen3_moe_sparse_step(tmp_path):
    config = fixture_config("qwen3-235b-a22b")
    config["decoder_sparse_step"] = 2
    model = load_hf_config(write_config(tmp_path, config))
    assert model.layer_moe == () and model.moe.moe_layer_step == 2 and model.n_moe_layers == 47
    config["mlp_only_layers"] = [3]  # every 2nd layer but the 4th: no compact form
    model = load_hf_config(write_config(tmp_path, config))
    assert [layer for layer in range(8) if model.is_moe_layer(layer)] == [1, 5, 7]
    assert model.n_moe_layers == 46
    config["mlp_only_layers"] = list(range(94))
    with pytest.raises(CatalogError) as raised:
        load_hf_config(write_config(tmp_path, config))
    assert raised.value.field == "mlp_only_layers"


@pytest.mark.parametrize(
    ("first_k_dense_replace", "moe_layer_freq", "compact", "moe_layers_below_8"),
    [
        (3, 1, (3, 1), [3, 4, 5, 6, 7]),
        (3, 2, (3, 2), [4, 6]),
        (2, 3, (1, 3), [3, 6]),
        (0, 2, None, [0, 2, 4, 6]),  # layer 0 MoE, then every 2nd: no compact form
        (0, 3, None, [0, 3, 6]),
    ],
)
def test_deepseek_moe_layer_frequency(tmp_path, first_k_dense_replace, moe_layer_freq, compact, moe_layers_below_8):
    config = fixture_config("deepseek-r1")
    config.update(first_k_dense_replace=first_k_dense_replace, moe_layer_freq=moe_layer_freq)
    model = load_hf_config(write_config(tmp_path, config))
    # DeepSeek's rule: layer l is MoE when l >= first_k_dense_replace and l % moe_layer_freq == 0.
    expected = [layer >= first_k_dense_replace and layer % moe_layer_freq == 0 for layer in range(61)]
    assert [model.is_moe_layer(layer) for layer in range(61)] == expected
    assert [layer for layer in range(8) if model.is_moe_layer(layer)] == moe_layers_below_8
    if compact:
        assert model.layer_moe == () and (model.moe.n_dense_layers, model.moe.moe_layer_step) == compact
    else:
        assert model.layer_moe == tuple(expected)


def nemotron_nas_config() -> dict:
    def block(attention: str, ffn_mult: float | None) -> dict:
        attention_config = {"no_op": attention == "none", "replace_with_linear": attention == "linear"}
        attention_config["n_heads_in_group"] = 8 if attention == "full" else None
        ffn_config = {"no_op": ffn_mult is None, "replace_with_linear": False, "ffn_mult": ffn_mult}
        return {"attention": attention_config, "ffn": ffn_config}

    return {
        "architectures": ["DeciLMForCausalLM"],
        "model_type": "nemotron-nas",
        "hidden_size": 8192,
        "num_attention_heads": 64,
        "num_hidden_layers": 4,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": False,
        "block_configs": [block("full", 5.25), block("none", 2.625), block("linear", 1.3125), block("full", None)],
    }


def test_nemotron_nas_block_configs(tmp_path):
    model = load_hf_config(write_config(tmp_path, nemotron_nas_config()))
    assert model.family == "Nemotron"
    assert model.layer_attention == ("full", "none", "linear", "full")
    # ffn_mult -> int(2/3 * mult * 8192), rounded up to a multiple of 256
    assert model.layer_intermediate_sizes == (28672, 14336, 7168, 0)
    assert model.n_kv_heads == 8 and model.head_dim == 128
    gqa = 8192 * 8192 * 2 + 2 * 8192 * 1024
    linear = 8192 * 8192
    ffns = 3 * 8192 * (28672 + 14336 + 7168)
    embeddings = 2 * 128256 * 8192
    norms = (2 * 4 + 1) * 8192
    assert model.total_params == embeddings + 2 * gqa + linear + ffns + norms


def test_nemotron_nas_mixed_kv_heads_rejected(tmp_path):
    config = nemotron_nas_config()
    config["block_configs"][3]["attention"]["n_heads_in_group"] = 4
    config["block_configs"][3]["ffn"]["ffn_mult"] = 1.0
    with pytest.raises(CatalogError) as raised:
        load_hf_config(write_config(tmp_path, config))
    assert raised.value.field == "block_configs"


# ---- malformed files -------------------------------------------------------------------


def edited(name: str, edit) -> dict:
    config = copy.deepcopy(fixture_config(name))
    edit(config)
    return config


BAD_CONFIGS = [
    # (what is wrong, config, field the message must name)
    ("missing field", edited("llama-3.1-8b", lambda c: c.pop("num_hidden_layers")), "num_hidden_layers"),
    ("wrong type", edited("llama-3.1-8b", lambda c: c.update(hidden_size="4096")), "hidden_size"),
    ("bool for int", edited("llama-3.1-8b", lambda c: c.update(vocab_size=True)), "vocab_size"),
    ("negative", edited("llama-3.1-8b", lambda c: c.update(num_attention_heads=-32)), "num_attention_heads"),
    ("zero", edited("mixtral-8x7b", lambda c: c.update(num_local_experts=0)), "num_local_experts"),
    ("absurd", edited("llama-3.1-8b", lambda c: c.update(num_hidden_layers=10**9)), "num_hidden_layers"),
    ("kv heads", edited("llama-3.1-8b", lambda c: c.update(num_key_value_heads=7)), "num_key_value_heads"),
    ("top-k", edited("mixtral-8x7b", lambda c: c.update(num_experts_per_tok=9)), "num_experts_per_tok"),
    ("unsupported", edited("llama-3.1-8b", lambda c: c.update(architectures=["GPT2LMHeadModel"])), "architectures"),
    (
        "unsupported model_type",
        edited("llama-3.1-8b", lambda c: (c.pop("architectures"), c.update(model_type="gpt2"))),
        "model_type",
    ),
    ("no family", edited("llama-3.1-8b", lambda c: (c.pop("architectures"), c.pop("model_type"))), "architectures"),
    (
        "nested field",
        edited("llama-4-scout-17b-16e", lambda c: c["text_config"].pop("hidden_size")),
        "text_config.hidden_size",
    ),
    ("mla rank", edited("deepseek-r1", lambda c: c.update(kv_lora_rank=0)), "kv_lora_rank"),
    (
        "architectures type",
        edited("llama-3.1-8b", lambda c: c.update(architectures="LlamaForCausalLM")),
        "architectures",
    ),
]


@pytest.mark.parametrize(("problem", "config", "field"), BAD_CONFIGS, ids=[case[0] for case in BAD_CONFIGS])
def test_bad_config_names_file_and_field(tmp_path, problem, config, field):
    path = write_config(tmp_path, config)
    with pytest.raises(CatalogError) as raised:
        load_hf_config(path)
    assert raised.value.field == field
    assert str(path) in str(raised.value) and field in str(raised.value)


def test_unsupported_architecture_lists_supported(tmp_path):
    config = edited("llama-3.1-8b", lambda c: c.update(architectures=["GPT2LMHeadModel"]))
    with pytest.raises(CatalogError) as raised:
        load_hf_config(write_config(tmp_path, config))
    message = str(raised.value)
    assert "GPT2LMHeadModel" in message
    assert all(name in message for name in SUPPORTED_ARCHITECTURES)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2, 3]", "must be a JSON object"),
        ('{"hidden_size": NaN}', "not valid JSON"),
        ('"config"', "must be a JSON object"),
    ],
    ids=["not json", "json list", "nan", "json string"],
)
def test_unreadable_json(tmp_path, content, expected):
    path = tmp_path / "config.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CatalogError, match=expected) as raised:
        load_hf_config(path)
    assert str(path) in str(raised.value)


def test_too_large_file_rejected_before_parsing(tmp_path):
    path = tmp_path / "config.json"
    path.write_bytes(b"{" + b" " * (10 * 1024 * 1024) + b"}")  # valid JSON, just too big
    with pytest.raises(CatalogError, match="larger than 10 MB") as raised:
        load_hf_config(path)
    assert str(path) in str(raised.value)


def test_missing_file(tmp_path):
    with pytest.raises(CatalogError, match="cannot read"):
        load_hf_config(tmp_path / "nowhere" / "config.json")


# ---- the families added with the hybrid format ----------------------------------------

NEW_FAMILY_FIXTURES = [
    "gpt-oss-120b",
    "gpt-oss-20b",
    "qwen3-next-80b-a3b",
    "gemma-3-4b",
    "gemma-3-27b",
    "glm-4.5",
    "glm-4.5-air",
    "deepseek-v3",
    "kimi-k2",
    "nemotron-h-8b",
    "nemotron-h-56b",
    "phi-4",
]

# Cards rounder than 3% (as in test_model_catalog): Qwen3-Next's "3B activated", Phi-4's "14B".
LOOSE = {("qwen3-next-80b-a3b", "active"): 0.30, ("phi-4", "total"): 0.05, ("phi-4", "active"): 0.05}


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    return "[" + ", ".join(toml_value(item) for item in value) + "]"


def to_toml(table: dict) -> str:
    """The model table as a model file: top-level keys first, then one [section] per table."""
    lines = [f"{key} = {toml_value(value)}" for key, value in table.items() if not isinstance(value, dict)]
    for key, section in table.items():
        if isinstance(section, dict):
            lines += ["", f"[{key}]", *(f"{name} = {toml_value(value)}" for name, value in section.items())]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", NEW_FAMILY_FIXTURES)
def test_new_family_matches_the_published_size(catalog, name):
    imported = load_hf_config(FIXTURES / name / "config.json")
    bundled = catalog[name]
    published_total, published_active = bundled.nominal_total_params, bundled.nominal_active_params
    as_card = replace(imported, nominal_active_embeddings=bundled.nominal_active_embeddings)
    assert imported.total_params == pytest.approx(published_total, rel=LOOSE.get((name, "total"), 0.03))
    assert as_card.active_params_as_nominal == pytest.approx(published_active, rel=LOOSE.get((name, "active"), 0.03))


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_imported_model_round_trips_as_a_model_file(tmp_path, name):
    imported = load_hf_config(FIXTURES / name / "config.json")
    path = tmp_path / f"{imported.id}.toml"
    path.write_text(to_toml(model_to_table(imported)), encoding="utf-8")
    assert load_model_file(path) == replace(imported, source_file=str(path))


def test_gpt_oss_details(tmp_path):
    model = load_hf_config(FIXTURES / "gpt-oss-120b" / "config.json")
    assert model.family == "gpt-oss"
    assert model.qkv_bias and model.o_bias and model.attention_sinks and model.ffn_bias and model.moe.router_bias
    assert (model.n_window_attention_layers, model.n_full_attention_layers, model.sliding_window) == (18, 18, 128)
    assert (model.native_weight_precision, model.native_precision_scope) == ("mxfp4", "experts")
    assert "mxfp4" in model.native_precision_source
    assert model.max_context == 131072
    # Without layer_types, transformers' default: a window on even layers, full on odd ones.
    config = fixture_config("gpt-oss-120b")
    del config["layer_types"]
    assert load_hf_config(write_config(tmp_path, config)).layer_attention == model.layer_attention
    config.update(attention_bias=False)
    unbiased = load_hf_config(write_config(tmp_path, config))
    assert not unbiased.qkv_bias and not unbiased.o_bias
    assert model.attention_params - unbiased.attention_params == 64 * 64 + 2 * 8 * 64 + 2880


def test_qwen3_next_details(tmp_path):
    model = load_hf_config(FIXTURES / "qwen3-next-80b-a3b" / "config.json")
    assert (model.n_deltanet_layers, model.n_full_attention_layers) == (36, 12)
    assert model.deltanet.n_value_heads == 32 and model.deltanet.conv_kernel == 4
    assert model.attention_output_gate and model.qk_norm
    assert model.moe.n_shared_experts == 1 and model.moe.shared_expert_intermediate_size == 512
    assert model.recurrent_state_elements_per_layer("deltanet") == 32 * 128 * 128 + 3 * (2 * 2048 + 4096)
    config = fixture_config("qwen3-next-80b-a3b")
    config["layer_types"] = ["linear_attention", "full_attention"] * 24
    listed = load_hf_config(write_config(tmp_path, config))
    assert (listed.n_deltanet_layers, listed.n_full_attention_layers) == (24, 24)
    del config["layer_types"]
    config.update(full_attention_interval=2, mlp_only_layers=[0])
    model = load_hf_config(write_config(tmp_path, config))
    assert model.layer_attention == listed.layer_attention
    assert model.n_moe_layers == 47 and model.dense_ffn_size(0) == 5120
    config["full_attention_interval"] = 1  # every layer full attention: no [deltanet] needed
    model = load_hf_config(write_config(tmp_path, config))
    assert model.layer_attention == () and model.deltanet is None


def test_gemma3_details(tmp_path):
    model = load_hf_config(FIXTURES / "gemma-3-4b" / "config.json")
    assert model.family == "Gemma" and model.tied_embeddings and model.qk_norm
    assert (model.n_heads, model.n_kv_heads, model.head_dim, model.vocab_size) == (8, 4, 256, 262208)
    assert "defaults" in model.notes and "num_attention_heads" in model.notes
    assert "vision encoder" in model.notes
    assert (model.n_window_attention_layers, model.n_full_attention_layers) == (29, 5)
    assert [model.attention_kind(layer) for layer in range(6)] == ["window"] * 5 + ["full"]
    # The text-only class keeps the same fields at the top level.
    config = fixture_config("gemma-3-27b")
    text = dict(config["text_config"], architectures=["Gemma3ForCausalLM"], model_type="gemma3_text")
    flat = load_hf_config(write_config(tmp_path, text))
    nested = load_hf_config(FIXTURES / "gemma-3-27b" / "config.json")
    assert flat.total_params == nested.total_params and flat.layer_attention == nested.layer_attention
    assert "vision encoder" not in flat.notes and flat.tied_embeddings
    text["layer_types"] = ["sliding_attention", "full_attention"] * 31
    assert load_hf_config(write_config(tmp_path, text)).n_full_attention_layers == 31
    del text["layer_types"]
    text.update(sliding_window_pattern=3, tie_word_embeddings=False)
    model = load_hf_config(write_config(tmp_path, text))
    assert model.n_full_attention_layers == 20 and not model.tied_embeddings


def test_glm4_moe_details():
    model = load_hf_config(FIXTURES / "glm-4.5" / "config.json")
    assert model.family == "GLM" and model.qkv_bias and not model.o_bias and model.qk_norm
    assert (model.moe.n_dense_layers, model.n_moe_layers) == (3, 89)
    assert model.moe.n_shared_experts == 1 and model.moe.shared_expert_intermediate_size == 1536
    assert "multi-token-prediction" in model.notes
    assert not load_hf_config(FIXTURES / "glm-4.5-air" / "config.json").qk_norm


def test_kimi_k2_is_its_own_family():
    model = load_hf_config(FIXTURES / "kimi-k2" / "config.json")
    assert model.family == "Kimi" and model.mla is not None
    assert (model.moe.n_routed_experts, model.moe.n_dense_layers, model.n_heads) == (384, 1, 64)
    assert model.native_weight_precision == ""


def test_deepseek_fp8_native_precision(tmp_path):
    model = load_hf_config(FIXTURES / "deepseek-v3" / "config.json")
    assert (model.native_weight_precision, model.native_precision_scope) == ("fp8", "linear")
    assert "[128, 128]" in model.native_precision_source
    config = fixture_config("deepseek-v3")
    del config["quantization_config"]["weight_block_size"]
    model = load_hf_config(write_config(tmp_path, config))
    assert model.native_weight_precision == "" and "quantization_config" in model.notes
    config["quantization_config"] = {"quant_method": "awq", "bits": 4}
    model = load_hf_config(write_config(tmp_path, config))
    assert model.native_weight_precision == "" and "'awq'" in model.notes


def test_nemotron_h_details(tmp_path):
    model = load_hf_config(FIXTURES / "nemotron-h-8b" / "config.json")
    assert model.family == "Nemotron" and model.ffn_kind == "relu2"
    assert (model.n_mamba_layers, model.n_full_attention_layers, model.count_attention("none")) == (24, 4, 24)
    assert model.layer_attention[:8] == ("mamba", "none", "mamba", "none", "mamba", "none", "mamba", "full")
    assert model.layer_intermediate_sizes[:8] == (0, 21504, 0, 21504, 0, 21504, 0, 0)
    assert model.mamba.n_groups == 8 and model.mamba.conv_bias
    # The list form, with transformers' names old and new, gives the same model.
    config = fixture_config("nemotron-h-8b")
    names = {"M": "mamba", "*": "attention", "-": "mlp"}
    config["layers_block_type"] = [names[letter] for letter in config.pop("hybrid_override_pattern")]
    config["layers_block_type"][0] = "linear_attention"
    listed = load_hf_config(write_config(tmp_path, config))
    assert listed.total_params == model.total_params and listed.layer_attention == model.layer_attention


def test_phi3_fused_projections_counted_as_separate():
    model = load_hf_config(FIXTURES / "phi-4" / "config.json")
    assert model.family == "Phi" and model.head_dim == 128 and "qkv_proj" in model.notes
    assert model.total_params == 14_659_507_200


def nested_edit(key: str, value: object):
    def edit(config: dict) -> None:
        config["text_config"][key] = value

    return edit


BAD_NEW_CONFIGS = [
    # (what is wrong, config, field the message must name)
    ("gpt-oss experts missing", edited("gpt-oss-120b", lambda c: c.pop("num_local_experts")), "num_local_experts"),
    (
        "gpt-oss layer_types too short",
        edited("gpt-oss-120b", lambda c: c.update(layer_types=["full_attention"] * 35)),
        "layer_types",
    ),
    (
        "gpt-oss mxfp4 on a dense model",
        edited("llama-3.1-8b", lambda c: c.update(quantization_config={"quant_method": "mxfp4"})),
        "quantization_config.quant_method",
    ),
    (
        "qwen3-next value heads missing",
        edited("qwen3-next-80b-a3b", lambda c: c.pop("linear_num_value_heads")),
        "linear_num_value_heads",
    ),
    (
        "qwen3-next value heads not a multiple",
        edited("qwen3-next-80b-a3b", lambda c: c.update(linear_num_value_heads=24)),
        "linear_num_value_heads",
    ),
    (
        "qwen3-next conv kernel as text",
        edited("qwen3-next-80b-a3b", lambda c: c.update(linear_conv_kernel_dim="4")),
        "linear_conv_kernel_dim",
    ),
    (
        "qwen3-next layer_types too long",
        edited("qwen3-next-80b-a3b", lambda c: c.update(layer_types=["full_attention"] * 49)),
        "layer_types",
    ),
    (
        "qwen3-next unknown layer type",
        edited("qwen3-next-80b-a3b", lambda c: c.update(layer_types=["mamba"] + ["full_attention"] * 47)),
        "layer_types[0]",
    ),
    ("gemma hidden size missing", edited("gemma-3-4b", lambda c: c["text_config"].pop("hidden_size")),
     "text_config.hidden_size"),
    ("gemma window pattern as text", edited("gemma-3-27b", nested_edit("sliding_window_pattern", "6")),
     "text_config.sliding_window_pattern"),
    ("gemma layer_types too short", edited("gemma-3-27b", nested_edit("layer_types", ["full_attention"] * 61)),
     "text_config.layer_types"),
    ("glm experts missing", edited("glm-4.5-air", lambda c: c.pop("n_routed_experts")), "n_routed_experts"),
    ("glm qk norm as text", edited("glm-4.5", lambda c: c.update(use_qk_norm="true")), "use_qk_norm"),
    ("kimi kv rank missing", edited("kimi-k2", lambda c: c.pop("kv_lora_rank")), "kv_lora_rank"),
    (
        "fp8 block size not a pair",
        edited("deepseek-v3", lambda c: c["quantization_config"].update(weight_block_size=[128])),
        "quantization_config.weight_block_size",
    ),
    (
        "fp8 block size as text",
        edited("deepseek-v3", lambda c: c["quantization_config"].update(weight_block_size=["128", 128])),
        "quantization_config.weight_block_size[0]",
    ),
    ("nemotron-h state size missing", edited("nemotron-h-8b", lambda c: c.pop("ssm_state_size")), "ssm_state_size"),
    (
        "nemotron-h pattern shorter than the layers",
        edited("nemotron-h-8b", lambda c: c.update(hybrid_override_pattern=c["hybrid_override_pattern"][:-1])),
        "hybrid_override_pattern",
    ),
    (
        "nemotron-h pattern not a string",
        edited("nemotron-h-8b", lambda c: c.update(hybrid_override_pattern=52)),
        "hybrid_override_pattern",
    ),
    (
        "nemotron-h unknown block",
        edited("nemotron-h-8b", lambda c: c.update(hybrid_override_pattern="X" + c["hybrid_override_pattern"][1:])),
        "hybrid_override_pattern",
    ),
    (
        "nemotron-h MoE block",
        edited("nemotron-h-8b", lambda c: c.update(hybrid_override_pattern="E" + c["hybrid_override_pattern"][1:])),
        "hybrid_override_pattern",
    ),
    (
        "nemotron-h groups not dividing heads",
        edited("nemotron-h-8b", lambda c: c.update(n_groups=3)),
        "n_groups",
    ),
    (
        "nemotron-h gated MLP",
        edited("nemotron-h-8b", lambda c: c.update(mlp_hidden_act="silu")),
        "mlp_hidden_act",
    ),
    (
        "nemotron-h moe block in list",
        edited("nemotron-h-8b", lambda c: (c.pop("hybrid_override_pattern"), c.update(layers_block_type=["moe"]))),
        "layers_block_type[0]",
    ),
    ("phi intermediate missing", edited("phi-4", lambda c: c.pop("intermediate_size")), "intermediate_size"),
]


@pytest.mark.parametrize(("problem", "config", "field"), BAD_NEW_CONFIGS, ids=[case[0] for case in BAD_NEW_CONFIGS])
def test_bad_new_family_config_names_file_and_field(tmp_path, problem, config, field):
    path = write_config(tmp_path, config)
    with pytest.raises(CatalogError) as raised:
        load_hf_config(path)
    assert raised.value.field == field
    assert str(path) in str(raised.value) and field in str(raised.value)
