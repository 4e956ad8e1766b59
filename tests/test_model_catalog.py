"""The bundled model catalog: every file loads, derived sizes match the model cards, and the
loader rejects malformed files with a message naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelscope.engine.catalog.models import (
    BUNDLED_ORDER,
    bundled_model_files,
    load_bundled_models,
    load_model_file,
    model_from_table,
    model_to_table,
)
from accelscope.engine.core.errors import CatalogError
from accelscope.engine.core.model import LAYER_ATTENTION_KINDS

NOMINAL_TOLERANCE = 0.03
HYBRID_IDS = ("qwen3-next-80b-a3b", "nemotron-h-8b", "nemotron-h-56b")

# Model cards whose figure is rounder than 3%, each with the tolerance it gets and why; the
# exact derived counts are pinned by hand below.
LOOSE_NOMINAL = {
    # "3B activated" is the A3B of the name; derived 3.87B (3.25B without embeddings).
    ("qwen3-next-80b-a3b", "active"): 0.30,
    # "14B parameters"; derived 14.66B.
    ("phi-4", "total"): 0.05,
    ("phi-4", "active"): 0.05,
    # The card's "37B activated" is DeepSeek-V3's; the indexer adds 0.85B: derived 38.40B.
    ("deepseek-v3.2", "active"): 0.04,
    # "13B activated"; derived 13.47B with the embedding table (12.94B without).
    ("deepseek-v4-flash", "active"): 0.04,
    # The A4B of the name; derived 3.82B.
    ("gemma-4-26b-a4b", "active"): 0.05,
}


# The models of 2026 with per-layer attention kinds, from their config.json (bundled as
# importer fixtures): derived counts pinned, and the groups each has.
NEW_KIND_COUNTS = {
    "deepseek-v3.2": (671_877_929_216, 38_403_807_488, {"sparse": 61}),
    "glm-5": (743_911_199_232, 41_784_709_632, {"sparse": 78}),
    "deepseek-v4-flash": (284_003_810_240, 13_471_202_240, {"compressed": 20, "compressed_sparse": 21}),
    "deepseek-v4-pro": (1_572_160_347_776, 48_942_227_072, {"compressed": 31, "compressed_sparse": 30}),
    "gemma-4-26b-a4b": (25_232_631_040, 3_822_019_840, {"global": 5}),
    "gemma-4-31b": (30_696_700_160, 30_696_700_160, {"global": 10}),
}


@pytest.mark.parametrize("model_id", NEW_KIND_COUNTS)
def test_the_new_kinds_have_their_derived_counts(model_id):
    model = load_bundled_models()[model_id]
    total, active, groups = NEW_KIND_COUNTS[model_id]
    assert (model.total_params, model.active_params) == (total, active)
    assert {g.kind: g.layers for g in model.attention_groups} == groups


@pytest.fixture(scope="module")
def catalog():
    return load_bundled_models()


def test_bundled_files_are_exactly_the_ordered_ids(catalog):
    stems = [entry.name.removesuffix(".toml") for entry in bundled_model_files()]
    assert stems == list(BUNDLED_ORDER)
    assert list(catalog) == list(BUNDLED_ORDER)
    assert len(BUNDLED_ORDER) == 40
    # The hybrids (linear-attention and state-space layers) are bundled, last.
    assert BUNDLED_ORDER[-3:] == HYBRID_IDS
    assert all(catalog[model_id].n_deltanet_layers + catalog[model_id].n_mamba_layers > 0 for model_id in HYBRID_IDS)


@pytest.mark.parametrize("model_id", BUNDLED_ORDER)
def test_bundled_model_loads_and_matches_its_nominal_size(catalog, model_id):
    model = catalog[model_id]
    assert model.id == Path(model.source_file).stem == model_id
    assert model.name and model.family and model.source and model.nominal_source
    total_tolerance = LOOSE_NOMINAL.get((model_id, "total"), NOMINAL_TOLERANCE)
    active_tolerance = LOOSE_NOMINAL.get((model_id, "active"), NOMINAL_TOLERANCE)
    assert model.total_params == pytest.approx(model.nominal_total_params, rel=total_tolerance)
    # Counted as the card counts it (with or without the embedding table and LM head).
    assert model.active_params_as_nominal == pytest.approx(model.nominal_active_params, rel=active_tolerance)
    assert model.active_params <= model.total_params
    assert model.max_context > 0


def test_loose_nominal_entries_are_needed(catalog):
    """Each exception really is outside 3% (else it should go) and names a bundled model."""
    for (model_id, which), tolerance in LOOSE_NOMINAL.items():
        model = catalog[model_id]
        derived = model.total_params if which == "total" else model.active_params_as_nominal
        nominal = model.nominal_total_params if which == "total" else model.nominal_active_params
        assert NOMINAL_TOLERANCE < abs(derived / nominal - 1) <= tolerance


@pytest.mark.parametrize("model_id", BUNDLED_ORDER)
def test_bundled_model_round_trips_through_its_table(catalog, model_id):
    model = catalog[model_id]
    table = model_to_table(model)
    assert model_from_table(table, "x.toml", source_file=model.source_file) == model


# Derived counts of the first fifteen bundled models, pinned when the format gained DeltaNet,
# Mamba-2, squared-ReLU FFNs, biases, sinks and output gates: those additions change none.
EARLIER_COUNTS = {
    "llama-3.1-8b": (8_030_261_248, 8_030_261_248),
    "llama-3.3-70b": (70_553_706_496, 70_553_706_496),
    "llama-2-70b": (68_976_648_192, 68_976_648_192),
    "nemotron-super-49b": (49_846_427_648, 49_846_427_648),
    "llama-4-scout-17b-16e": (107_769_861_120, 17_172_894_720),
    "qwen3-8b": (8_190_735_360, 8_190_735_360),
    "qwen3-14b": (14_768_307_200, 14_768_307_200),
    "qwen3-32b": (32_762_123_264, 32_762_123_264),
    "qwen2.5-72b": (72_706_203_648, 72_706_203_648),
    "qwen3-235b-a22b": (235_093_634_560, 22_190_763_520),
    "ministral-8b": (8_019_808_256, 8_019_808_256),
    "mistral-small-3.1-24b": (23_572_403_200, 23_572_403_200),
    "mixtral-8x7b": (46_702_792_704, 12_879_925_248),
    "mixtral-8x22b": (140_630_071_296, 39_161_468_928),
    "deepseek-r1": (671_026_404_352, 37_552_282_624),
}


@pytest.mark.parametrize("model_id", EARLIER_COUNTS)
def test_earlier_models_keep_their_counts(catalog, model_id):
    model = catalog[model_id]
    assert (model.total_params, model.active_params) == EARLIER_COUNTS[model_id]
    assert model.n_deltanet_layers == model.n_mamba_layers == 0
    assert model.ffn_kind == "gated" and model.nominal_active_embeddings == "both"


# The classics added with the 2026 catalog, from their config.json: derived counts pinned,
# and each within the card's stated total (the parametrised nominal test above).
CLASSIC_COUNTS = {
    "llama-3.1-70b": (70_553_706_496, 70_553_706_496),
    "llama-3.1-405b": (405_853_388_800, 405_853_388_800),
    "llama-4-maverick-17b-128e": (400_711_848_960, 17_184_691_200),
    "qwen3-coder-480b-a35b": (480_154_875_392, 35_474_765_312),
}


@pytest.mark.parametrize("model_id", CLASSIC_COUNTS)
def test_the_classics_have_their_derived_counts(catalog, model_id):
    model = catalog[model_id]
    assert (model.total_params, model.active_params) == CLASSIC_COUNTS[model_id]
    assert model.default_weight_precision == "bf16"  # each is published in BF16


def test_llama_3_1_405b_total_by_hand(catalog):
    embeddings = 128256 * 16384  # and the same again for the untied LM head
    attention = 2 * 16384 * 16384 + 2 * 16384 * (8 * 128)  # q, o + k, v
    ffn = 3 * 16384 * 53248
    per_layer = attention + ffn + 2 * 16384
    total = 2 * embeddings + 126 * per_layer + 16384
    assert total == 405_853_388_800 == catalog["llama-3.1-405b"].total_params
    assert total == pytest.approx(405e9, rel=0.003)  # Meta's 405B


def test_maverick_interleaves_dense_and_moe_layers(catalog):
    model = catalog["llama-4-maverick-17b-128e"]
    assert model.n_moe_layers == 24 and model.n_chunked_attention_layers == 36 and model.n_full_attention_layers == 12


# ---- counts checked by hand -----------------------------------------------------------


def test_llama_3_1_8b_total_by_hand(catalog):
    model = catalog["llama-3.1-8b"]
    embeddings = 128256 * 4096  # 525,336,576, and the same again for the untied LM head
    attention = 4096 * 4096 * 2 + 2 * 4096 * (8 * 128)  # q, o + k, v = 41,943,040
    ffn = 3 * 4096 * 14336  # gate, up, down = 176,160,768
    norms_per_layer = 2 * 4096
    per_layer = attention + ffn + norms_per_layer  # 218,112,000
    total = 2 * embeddings + 32 * per_layer + 4096  # + final norm
    assert total == 8_030_261_248
    assert model.total_params == total
    assert model.active_params == total


def test_mixtral_8x7b_counts_by_hand(catalog):
    model = catalog["mixtral-8x7b"]
    embeddings = 32000 * 4096  # 131,072,000 (x2: untied)
    attention = 4096 * 4096 * 2 + 2 * 4096 * 1024  # 41,943,040
    expert = 3 * 4096 * 14336  # 176,160,768
    router = 4096 * 8
    norms = 2 * 4096
    fixed_per_layer = attention + router + norms  # 41,983,808
    total = 2 * embeddings + 32 * (fixed_per_layer + 8 * expert) + 4096
    active = 2 * embeddings + 32 * (fixed_per_layer + 2 * expert) + 4096
    assert total == 46_702_792_704  # ~46.7B
    assert active == 12_879_925_248  # ~12.9B
    assert model.total_params == total
    assert model.active_params == active


def test_deepseek_r1_by_hand(catalog):
    model = catalog["deepseek-r1"]
    # MLA keeps one 512-wide latent plus the 64-wide shared RoPE key per token per layer.
    assert model.kv_elements_per_token_per_layer == 512 + 64 == 576
    assert model.kv_shards == 1
    q = 7168 * 1536 + 1536 + 1536 * 128 * (128 + 64)  # down, norm, up = 48,760,320
    kv = 7168 * (512 + 64) + 512 + 512 * 128 * (128 + 128)  # down, norm, up = 20,906,496
    out = 128 * 128 * 7168  # 117,440,512
    assert model.attention_params == q + kv + out == 187_107_328
    assert model.n_moe_layers == 58  # 61 layers, first 3 dense
    assert model.total_params == 671_026_404_352  # nominal 671B, MTP module excluded
    assert model.moe.n_routed_experts + model.moe.n_shared_experts == 257  # Table II: "257E"


def test_gpt_oss_120b_by_hand(catalog):
    model = catalog["gpt-oss-120b"]
    d, q, kv = 2880, 64 * 64, 8 * 64
    # q, k, v and o with their biases, plus one sink logit per query head
    attention = (d * q + q) + 2 * (d * kv + kv) + (q * d + d) + 64
    assert model.attention_params == attention
    expert = 3 * d * 2880 + 2 * 2880 + d  # gate and up (biases 2 x 2880), down (bias d)
    assert model.expert_params == expert
    router = d * 128 + 128  # weight and bias
    assert model.router_params_total == 36 * router
    total = 2 * 201088 * d + 36 * (attention + router + 128 * expert) + (2 * 36 + 1) * d
    assert model.total_params == total == 116_829_156_672  # the card: 116.83B
    # The card's active count: every block's fixed part, 4 experts, the LM head, no embedding.
    assert model.active_params_as_nominal == model.active_params - 201088 * d == 5_132_849_472
    assert (model.n_window_attention_layers, model.n_full_attention_layers) == (18, 18)
    assert model.attention_kind(0) == "window" and model.sliding_window == 128
    assert (model.native_weight_precision, model.native_precision_scope) == ("mxfp4", "experts")


def test_qwen3_next_by_hand(catalog):
    model = catalog["qwen3-next-80b-a3b"]
    d = 2048
    key, value = 16 * 128, 32 * 128
    deltanet = d * (2 * key + 2 * value) + d * 2 * 32 + (2 * key + value) * 4 + 2 * 32 + 128 + value * d
    assert model.deltanet.params(d) == deltanet == 33_718_464
    assert model.attention_block_params(0) == deltanet
    # Gated attention: q_proj gives queries and a gate (2 x 16 x 256), then k, v, o, q/k norms.
    attention = d * 2 * 4096 + 2 * d * 512 + 4096 * d + 2 * 256
    assert model.attention_params == model.attention_block_params(3) == attention
    assert (model.n_deltanet_layers, model.n_full_attention_layers) == (36, 12)
    assert [model.attention_kind(layer) for layer in range(4)] == ["deltanet", "deltanet", "deltanet", "full"]
    # 32 value heads x 128 x 128, plus 3 taps of the 8192-channel convolution
    assert model.recurrent_state_elements_per_layer("deltanet") == 524_288 + 3 * 8192
    assert model.recurrent_state_elements_per_layer("full") == 0
    assert model.kv_elements_per_token_per_layer == 2 * 2 * 256
    assert model.total_params == 79_674_292_992
    assert model.active_params == 3_874_831_104


def test_nemotron_h_8b_by_hand(catalog):
    model = catalog["nemotron-h-8b"]
    d, inner, groups_state = 4096, 128 * 64, 8 * 128
    conv_channels = inner + 2 * groups_state  # x, B and C
    mamba = d * (2 * inner + 2 * groups_state + 128) + conv_channels * (4 + 1) + 3 * 128 + inner + inner * d
    assert model.mamba.params(d) == mamba == 109_635_968
    attention = 2 * d * d + 2 * d * 8 * 128
    mlp = 2 * d * 21504  # squared ReLU: up and down only
    assert model.ffn_params(21504) == mlp
    assert (model.n_mamba_layers, model.n_full_attention_layers, model.count_attention("none")) == (24, 4, 24)
    assert sum(width > 0 for width in model.layer_intermediate_sizes) == 24
    total = 2 * 131072 * d + 24 * mamba + 4 * attention + 24 * mlp + (2 * 52 + 1) * d
    assert model.total_params == total == 8_101_065_728
    assert model.recurrent_state_elements_per_layer("mamba") == 128 * 64 * 128 + 3 * conv_channels
    assert model.recurrent_state_elements_per_layer("deltanet") == 0  # no such layers


def test_recurrent_state_of_an_unknown_kind():
    from accelscope.engine.core.model import ModelArch

    model = ModelArch("m", "M", "F", "s", 1, 64, 4, 4, 16, 128, 100, True, 1024, 1.0, 1.0)
    with pytest.raises(ValueError, match="unknown layer kind"):
        model.recurrent_state_elements_per_layer("ssm")
    assert {"deltanet", "mamba"} <= set(LAYER_ATTENTION_KINDS)


# ---- architecture features represented -------------------------------------------------


def test_llama_4_scout_layout(catalog):
    model = catalog["llama-4-scout-17b-16e"]
    assert model.n_moe_layers == 48
    assert model.moe.n_shared_experts == 1 and model.moe.experts_per_token == 1
    assert model.n_full_attention_layers == 12  # every 4th layer is global (NoPE)
    assert model.n_chunked_attention_layers == 36  # 8192-token chunks
    assert model.n_window_attention_layers == 0
    assert model.attention_chunk == 8192 and model.sliding_window == 0
    assert [model.attention_kind(layer) for layer in range(4)] == ["chunked", "chunked", "chunked", "full"]
    assert model.layer_moe == ()
    assert model.total_params == pytest.approx(107.7e9, rel=0.002)  # text model; 109B with vision


def test_ministral_interleaves_sliding_window(catalog):
    model = catalog["ministral-8b"]
    assert model.n_full_attention_layers == 9
    assert model.n_window_attention_layers == 27
    assert model.sliding_window == 32768


def test_nemotron_is_heterogeneous(catalog):
    model = catalog["nemotron-super-49b"]
    kinds = set(model.layer_attention)
    assert {"full", "none", "linear"} <= kinds
    assert len(set(model.layer_intermediate_sizes)) > 1
    assert model.total_params == pytest.approx(49.9e9, rel=NOMINAL_TOLERANCE)


def test_qwen_attention_details(catalog):
    assert catalog["qwen2.5-72b"].qkv_bias
    for model_id in ("qwen3-8b", "qwen3-14b", "qwen3-32b", "qwen3-235b-a22b"):
        model = catalog[model_id]
        assert model.qk_norm and model.head_dim == 128 and not model.tied_embeddings
    assert catalog["qwen3-235b-a22b"].kv_elements_per_token_per_layer == 2 * 4 * 128


# ---- the loader's checks ---------------------------------------------------------------

MINIMAL = """\
id = "tiny"
name = "Tiny"
family = "Test"
source = "hand-written for a test"
max_context = 4096

[nominal]
total_params = 1.0e6
active_params = 1.0e6
source = "none"

[architecture]
n_layers = 2
hidden_size = 64
n_heads = 4
n_kv_heads = 2
head_dim = 16
intermediate_size = 128
vocab_size = 1000
tied_embeddings = true
"""

MOE = """
[moe]
n_routed_experts = 4
experts_per_token = 2
expert_intermediate_size = 32
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_minimal_file_loads(tmp_path):
    model = load_model_file(write(tmp_path, MINIMAL))
    assert model.id == "tiny" and model.n_layers == 2 and model.moe is None
    assert model.layer_attention == ()


def test_sliding_window_alone_applies_to_every_layer(tmp_path):
    text = MINIMAL.replace("tied_embeddings = true", "tied_embeddings = true\nsliding_window = 512")
    model = load_model_file(write(tmp_path, text))
    assert model.n_window_attention_layers == 2 and model.sliding_window == 512


def test_attention_chunk_alone_applies_to_every_layer(tmp_path):
    text = MINIMAL.replace("tied_embeddings = true", "tied_embeddings = true\nattention_chunk = 256")
    model = load_model_file(write(tmp_path, text))
    assert model.layer_attention == ("chunked", "chunked")
    assert model.n_chunked_attention_layers == 2 and model.attention_chunk == 256
    assert model.sliding_window == 0


def test_chunked_layers_load_beside_window_and_full(tmp_path):
    text = MINIMAL.replace("n_layers = 2", "n_layers = 3").replace(
        "tied_embeddings = true",
        "tied_embeddings = true\nsliding_window = 512\nattention_chunk = 256\n"
        'layer_attention = ["chunked", "window", "full"]',
    )
    model = load_model_file(write(tmp_path, text))
    assert [model.attention_kind(layer) for layer in range(3)] == ["chunked", "window", "full"]
    counts = (model.n_chunked_attention_layers, model.n_window_attention_layers, model.n_full_attention_layers)
    assert counts == (1, 1, 1)
    assert (model.attention_chunk, model.sliding_window) == (256, 512)
    # A chunked layer has the weights of any other attention layer.
    assert model.attention_block_params(0) == model.attention_block_params(2) == model.attention_params


def test_moe_and_mla_tables_load(tmp_path):
    text = MINIMAL + MOE + "n_dense_layers = 1\n\n[mla]\nkv_lora_rank = 32\nqk_nope_head_dim = 16\n"
    text += "qk_rope_head_dim = 8\nv_head_dim = 16\n"
    model = load_model_file(write(tmp_path, text))
    assert model.n_moe_layers == 1
    assert model.mla.q_lora_rank == 0 and model.kv_elements_per_token_per_layer == 40


BAD_FILES = [
    # (what is wrong, edit to the minimal file, field the message must name)
    ("missing key", ("n_layers = 2\n", ""), "architecture.n_layers"),
    ("unknown top key", ("max_context = 4096", "max_context = 4096\ncolour = 'red'"), "colour"),
    ("unknown architecture key", ("vocab_size = 1000", "vocab_size = 1000\nn_layer = 3"), "architecture.n_layer"),
    ("wrong type", ("hidden_size = 64", 'hidden_size = "64"'), "architecture.hidden_size"),
    ("bool for int", ("hidden_size = 64", "hidden_size = true"), "architecture.hidden_size"),
    ("float for int", ("hidden_size = 64", "hidden_size = 64.0"), "architecture.hidden_size"),
    ("zero", ("n_layers = 2", "n_layers = 0"), "architecture.n_layers"),
    ("negative", ("vocab_size = 1000", "vocab_size = -5"), "architecture.vocab_size"),
    ("absurd", ("n_layers = 2", "n_layers = 1000000"), "architecture.n_layers"),
    ("heads not divisible", ("n_kv_heads = 2", "n_kv_heads = 3"), "architecture.n_kv_heads"),
    ("bad id", ('id = "tiny"', 'id = "Tiny Model"'), "id"),
    ("active above total", ("active_params = 1.0e6", "active_params = 2.0e6"), "nominal.active_params"),
    ("non-positive nominal", ("total_params = 1.0e6", "total_params = 0.0"), "nominal.total_params"),
    (
        "layer list too short",
        ("tied_embeddings = true", 'tied_embeddings = true\nlayer_attention = ["full"]'),
        "architecture.layer_attention",
    ),
    (
        "unknown layer kind",
        ("tied_embeddings = true", 'tied_embeddings = true\nlayer_attention = ["full", "ring"]'),
        "architecture.layer_attention[1]",
    ),
    (
        "window without size",
        ("tied_embeddings = true", 'tied_embeddings = true\nlayer_attention = ["full", "window"]'),
        "architecture.sliding_window",
    ),
    (
        "chunked without size",
        ("tied_embeddings = true", 'tied_embeddings = true\nlayer_attention = ["full", "chunked"]'),
        "architecture.attention_chunk",
    ),
    (
        "zero chunk for chunked layers",
        (
            "tied_embeddings = true",
            'tied_embeddings = true\nattention_chunk = 0\nlayer_attention = ["chunked", "full"]',
        ),
        "architecture.attention_chunk",
    ),
    (
        "negative chunk",
        ("tied_embeddings = true", "tied_embeddings = true\nattention_chunk = -1"),
        "architecture.attention_chunk",
    ),
    (
        "absurd chunk",
        ("tied_embeddings = true", "tied_embeddings = true\nattention_chunk = 2000000000"),
        "architecture.attention_chunk",
    ),
    (
        "chunk not an integer",
        ("tied_embeddings = true", 'tied_embeddings = true\nattention_chunk = "8k"'),
        "architecture.attention_chunk",
    ),
    (
        "window and chunk without layer list",
        ("tied_embeddings = true", "tied_embeddings = true\nsliding_window = 512\nattention_chunk = 256"),
        "architecture.layer_attention",
    ),
    (
        "layer_moe without moe table",
        ("tied_embeddings = true", "tied_embeddings = true\nlayer_moe = [true, false]"),
        "architecture.layer_moe",
    ),
    (
        "negative layer width",
        ("tied_embeddings = true", "tied_embeddings = true\nlayer_intermediate_sizes = [128, -1]"),
        "architecture.layer_intermediate_sizes[1]",
    ),
]


@pytest.mark.parametrize(("problem", "edit", "field"), BAD_FILES, ids=[case[0] for case in BAD_FILES])
def test_bad_file_names_file_and_field(tmp_path, problem, edit, field):
    old, new = edit
    assert old in MINIMAL
    path = write(tmp_path, MINIMAL.replace(old, new, 1))
    with pytest.raises(CatalogError) as raised:
        load_model_file(path)
    assert raised.value.field == field
    assert str(path) in str(raised.value) and field in str(raised.value)


def test_table_expected(tmp_path):
    nominal_table = '[nominal]\ntotal_params = 1.0e6\nactive_params = 1.0e6\nsource = "none"\n'
    assert nominal_table in MINIMAL
    text = MINIMAL.replace(nominal_table, "").replace("max_context = 4096", "max_context = 4096\nnominal = 3")
    path = write(tmp_path, text)
    with pytest.raises(CatalogError, match="must be a table") as raised:
        load_model_file(path)
    assert raised.value.field == "nominal"


BAD_MOE = [
    ("experts_per_token = 2", "experts_per_token = 5", "moe.experts_per_token"),
    (
        "expert_intermediate_size = 32",
        "expert_intermediate_size = 32\nn_shared_experts = 1",
        "moe.shared_expert_intermediate_size",
    ),
    ("expert_intermediate_size = 32", "expert_intermediate_size = 32\nn_dense_layers = 2", "moe.n_dense_layers"),
    ("expert_intermediate_size = 32", "expert_intermediate_size = 32\ntop_k = 2", "moe.top_k"),
]


@pytest.mark.parametrize(("old", "new", "field"), BAD_MOE, ids=[case[2] for case in BAD_MOE])
def test_bad_moe_table(tmp_path, old, new, field):
    path = write(tmp_path, MINIMAL + MOE.replace(old, new))
    with pytest.raises(CatalogError) as raised:
        load_model_file(path)
    assert raised.value.field == field
    assert str(path) in str(raised.value)


def test_layer_moe_lists_moe_layers(tmp_path):
    model = load_model_file(write(tmp_path, MINIMAL + MOE + "layer_moe = [true, false]\n"))
    assert model.layer_moe == (True, False)
    assert model.is_moe_layer(0) and not model.is_moe_layer(1)
    assert model.n_moe_layers == 1
    assert model.dense_ffn_size(1) == 128 and model.dense_ffn_size(0) == 0
    # The same layout the other way round matches the compact form (one dense layer first).
    flipped = load_model_file(write(tmp_path, MINIMAL + MOE + "layer_moe = [false, true]\n"))
    compact = load_model_file(write(tmp_path, MINIMAL + MOE + "n_dense_layers = 1\n"))
    assert [flipped.is_moe_layer(layer) for layer in range(2)] == [compact.is_moe_layer(layer) for layer in range(2)]
    assert flipped.total_params == compact.total_params == model.total_params
    assert flipped.active_params == compact.active_params


BAD_LAYER_MOE = [
    # (what is wrong, line added to the [moe] table, field the message must name)
    ("too short", "layer_moe = [true]", "moe.layer_moe"),
    ("too long", "layer_moe = [true, false, true]", "moe.layer_moe"),
    ("not a list", "layer_moe = true", "moe.layer_moe"),
    ("integer entry", "layer_moe = [true, 1]", "moe.layer_moe[1]"),
    ("string entry", 'layer_moe = ["yes", true]', "moe.layer_moe[0]"),
    ("no moe layer", "layer_moe = [false, false]", "moe.layer_moe"),
    ("with n_dense_layers", "layer_moe = [false, true]\nn_dense_layers = 1", "moe.n_dense_layers"),
    ("with moe_layer_step", "layer_moe = [false, true]\nmoe_layer_step = 2", "moe.moe_layer_step"),
]


@pytest.mark.parametrize(("problem", "line", "field"), BAD_LAYER_MOE, ids=[case[0] for case in BAD_LAYER_MOE])
def test_bad_layer_moe(tmp_path, problem, line, field):
    path = write(tmp_path, MINIMAL + MOE + line + "\n")
    with pytest.raises(CatalogError) as raised:
        load_model_file(path)
    assert raised.value.field == field
    assert str(path) in str(raised.value) and field in str(raised.value)


DELTANET = """
[deltanet]
n_key_heads = 2
n_value_heads = 4
key_head_dim = 8
value_head_dim = 16
conv_kernel = 4
"""

MAMBA = """
[mamba]
n_heads = 4
head_dim = 16
state_size = 8
n_groups = 2
conv_kernel = 4
"""

HYBRID_LAYERS = 'layer_attention = ["deltanet", "mamba"]\nffn_kind = "relu2"'


def hybrid_text() -> str:
    return MINIMAL.replace("tied_embeddings = true", "tied_embeddings = true\n" + HYBRID_LAYERS) + DELTANET + MAMBA


def test_deltanet_and_mamba_layers_load(tmp_path):
    model = load_model_file(write(tmp_path, hybrid_text()))
    assert model.layer_attention == ("deltanet", "mamba")
    assert (model.n_deltanet_layers, model.n_mamba_layers, model.n_full_attention_layers) == (1, 1, 0)
    d = 64
    assert model.attention_block_params(0) == d * (2 * 16 + 2 * 64) + d * 8 + (32 + 64) * 4 + 8 + 16 + 64 * d
    assert model.attention_block_params(1) == d * (2 * 64 + 2 * 16 + 4) + (64 + 32) * 5 + 12 + 64 + 64 * d
    assert model.ffn_params(128) == 2 * d * 128 and model.kv_elements_per_token_per_layer == 2 * 2 * 16
    assert model.recurrent_state_elements_per_layer("deltanet") == 4 * 8 * 16 + 3 * (2 * 16 + 64)
    assert model.recurrent_state_elements_per_layer("mamba") == 4 * 16 * 8 + 3 * (64 + 2 * 2 * 8)
    without_bias = load_model_file(write(tmp_path, hybrid_text() + "conv_bias = false\n"))
    assert without_bias.attention_block_params(1) == model.attention_block_params(1) - (64 + 32)
    assert model_from_table(model_to_table(without_bias), "x", source_file=without_bias.source_file) == without_bias


def test_new_switches_count_their_weights(tmp_path):
    plain = load_model_file(write(tmp_path, MINIMAL + MOE))
    extras = "tied_embeddings = true\no_bias = true\nattention_sinks = true\n"
    extras += "attention_output_gate = true\nffn_bias = true"
    text = MINIMAL.replace("tied_embeddings = true", extras) + MOE + "router_bias = true\n"
    model = load_model_file(write(tmp_path, text))
    # output bias (d), one sink per query head, and the gate half of q_proj (d x 4 x 16)
    assert model.attention_params == plain.attention_params + 64 + 4 + 64 * 64
    assert model.expert_params == plain.expert_params + 2 * 32 + 64  # gate, up and down biases
    assert model.router_params_total == plain.router_params_total + 2 * 4  # two MoE layers
    assert model_from_table(model_to_table(model), "x", source_file=model.source_file) == model
    gated_bias = load_model_file(write(tmp_path, text.replace("o_bias = true", "qkv_bias = true")))
    assert gated_bias.attention_params - model.attention_params == 2 * 64 + 2 * 32 - 64  # q bias doubled too


def test_native_precision_and_active_basis_load(tmp_path):
    text = MINIMAL.replace('source = "none"', 'source = "none"\nactive_embeddings = "head_only"') + MOE
    text += '\n[native_precision]\nweights = "mxfp4"\nscope = "experts"\nsource = "a card"\n'
    model = load_model_file(write(tmp_path, text))
    assert (model.native_weight_precision, model.native_precision_scope) == ("mxfp4", "experts")
    assert model.native_precision_source == "a card"
    # Tied: the one table is the LM head, which "head_only" counts.
    assert model.active_params_as_nominal == model.active_params
    untied = load_model_file(write(tmp_path, text.replace("tied_embeddings = true", "tied_embeddings = false")))
    assert untied.active_params_as_nominal == untied.active_params - 1000 * 64
    none = load_model_file(write(tmp_path, text.replace('"head_only"', '"none"')))
    assert none.active_params_as_nominal == none.active_params - 1000 * 64
    assert model_from_table(model_to_table(untied), "x", source_file=untied.source_file) == untied


BAD_NEW_FIELDS = [
    # (what is wrong, file text, field the message must name)
    (
        "deltanet layers without table",
        MINIMAL.replace("tied_embeddings = true", 'tied_embeddings = true\nlayer_attention = ["deltanet", "full"]'),
        "deltanet",
    ),
    (
        "mamba layers without table",
        MINIMAL.replace("tied_embeddings = true", 'tied_embeddings = true\nlayer_attention = ["mamba", "full"]'),
        "mamba",
    ),
    ("deltanet table without layers", MINIMAL + DELTANET, "architecture.layer_attention"),
    ("mamba table without layers", MINIMAL + MAMBA, "architecture.layer_attention"),
    (
        "value heads not a multiple",
        hybrid_text().replace("n_value_heads = 4", "n_value_heads = 3"),
        "deltanet.n_value_heads",
    ),
    ("groups not dividing heads", hybrid_text().replace("n_groups = 2", "n_groups = 3"), "mamba.n_groups"),
    ("unknown mamba key", hybrid_text() + "d_state = 8\n", "mamba.d_state"),
    ("missing deltanet field", hybrid_text().replace("key_head_dim = 8\n", ""), "deltanet.key_head_dim"),
    ("zero conv kernel", hybrid_text().replace("conv_kernel = 4", "conv_kernel = 0", 1), "deltanet.conv_kernel"),
    ("state size as text", hybrid_text().replace("state_size = 8", 'state_size = "8"'), "mamba.state_size"),
    ("bad ffn kind", hybrid_text().replace('ffn_kind = "relu2"', 'ffn_kind = "swiglu"'), "architecture.ffn_kind"),
    ("sinks not a bool", MINIMAL.replace("tied_embeddings = true", "tied_embeddings = true\nattention_sinks = 1"),
     "architecture.attention_sinks"),
    ("router bias not a bool", MINIMAL + MOE + 'router_bias = "yes"\n', "moe.router_bias"),
    (
        "gate with mla",
        MINIMAL.replace("tied_embeddings = true", "tied_embeddings = true\nattention_output_gate = true")
        + "\n[mla]\nkv_lora_rank = 32\nqk_nope_head_dim = 16\nqk_rope_head_dim = 8\nv_head_dim = 16\n",
        "architecture.attention_output_gate",
    ),
    ("bad active basis", MINIMAL.replace('source = "none"', 'source = "none"\nactive_embeddings = "some"'),
     "nominal.active_embeddings"),
    ("bad weights", MINIMAL + '\n[native_precision]\nweights = "int4"\nscope = "linear"\nsource = "x"\n',
     "native_precision.weights"),
    ("bad scope", MINIMAL + '\n[native_precision]\nweights = "fp8"\nscope = "all"\nsource = "x"\n',
     "native_precision.scope"),
    ("experts scope on a dense model",
     MINIMAL + '\n[native_precision]\nweights = "mxfp4"\nscope = "experts"\nsource = "x"\n',
     "native_precision.scope"),
    ("no precision source", MINIMAL + '\n[native_precision]\nweights = "fp8"\nscope = "linear"\n',
     "native_precision.source"),
    ("unknown precision key",
     MINIMAL + '\n[native_precision]\nweights = "fp8"\nscope = "linear"\nsource = "x"\nblock = 128\n',
     "native_precision.block"),
]


@pytest.mark.parametrize(("problem", "text", "field"), BAD_NEW_FIELDS, ids=[case[0] for case in BAD_NEW_FIELDS])
def test_bad_new_fields_name_file_and_field(tmp_path, problem, text, field):
    path = write(tmp_path, text)
    with pytest.raises(CatalogError) as raised:
        load_model_file(path)
    assert raised.value.field == field
    assert str(path) in str(raised.value) and field in str(raised.value)


def test_not_toml(tmp_path):
    path = write(tmp_path, "id = \n")
    with pytest.raises(CatalogError, match="not valid TOML") as raised:
        load_model_file(path)
    assert str(path) in str(raised.value)


def test_missing_file(tmp_path):
    with pytest.raises(CatalogError, match="cannot read"):
        load_model_file(tmp_path / "absent.toml")


def test_oversized_file(tmp_path):
    path = tmp_path / "huge.toml"
    path.write_bytes(b"#" * (10 * 1024 * 1024 + 1))
    with pytest.raises(CatalogError, match="larger than 10 MB"):
        load_model_file(path)
