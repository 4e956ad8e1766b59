"""Importing Hugging Face config.json files.

The fixtures under tests/fixtures/hf are the published config.json files of one model per
family, written out by hand (no network in the test run); each must give the same derived
counts as the bundled catalog entry for that model.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from accelscope.engine.catalog.hf_config import SUPPORTED_ARCHITECTURES, load_hf_config
from accelscope.engine.catalog.models import load_bundled_models
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
