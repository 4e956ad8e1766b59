"""Hand-worked KV and decode figures of the attention kinds of 2026, by the
closed forms and by both faces of the engine. Every figure is worked out below from the model's
config.json (bundled in tests/fixtures/hf/) and the attention papers' rules the model files
cite, never read back from the engine.
"""

from __future__ import annotations

import pytest

from accelscope.engine.catalog.hf_config import load_hf_config
from accelscope.engine.catalog.models import load_bundled_models
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.physics.reference.closed_forms import AttentionGroups, AttentionLayers

K128 = 131_072
M1 = 1_048_576
BF16 = 2.0

# DeepSeek-V3.2 at 128k, BF16 cache: MLA latent 512 + RoPE key 64 = 576 elements, 1,152 B per
# token per layer; the indexer's FP8 key 128 B + one 4 B scale = 132 B; 61 layers, all sparse.
V32_LATENT = 61 * K128 * 576 * 2  # 9,210,691,584 B
V32_INDEX = 61 * K128 * 132  # 1,055,391,744 B
V32_TOP_K_READ = 61 * 2048 * 1152  # 143,917,056 B: the top-2,048 latents a decoding token reads
V32_DECODE_FLOPS = 61 * (128 * (2 * 576 + 2 * 512) * 2048 + 2 * 64 * 128 * K128)  # absorbed MLA + indexer

# DeepSeek-V4-Flash at 1M, BF16 cache: one K = V entry of 512 elements, 1,024 B; 2 window layers
# (128 tokens), 20 layers compressed 128x, 21 compressed 4x with the indexer (top 512), each
# compressed layer keeping a 128-token window too.
V4_WINDOW = 2 * 128 * 1024
V4_DENSE = 20 * (M1 // 128 + 128) * 1024
V4_SPARSE = 21 * (M1 // 4 + 128) * 1024
V4_INDEX = 21 * (M1 // 4) * 132
V4_READ = V4_WINDOW + V4_DENSE + 21 * (512 + 128) * 1024 + V4_INDEX

# Gemma 4 26B-A4B at 128k, BF16 cache: 25 sliding layers bounded by their 1,024-token window
# (8 KV heads x 256, K and V: 8,192 B per token), 5 global layers over the whole context
# (2 KV heads x 512, K = V: 2,048 B per token).
GEMMA_WINDOW = 25 * 1024 * 8192
GEMMA_GLOBAL = 5 * K128 * 2048


@pytest.fixture(scope="module")
def models():
    return load_bundled_models()


def test_hand_figures_are_the_issues():
    assert (V32_LATENT, V32_INDEX, V32_TOP_K_READ) == (9_210_691_584, 1_055_391_744, 143_917_056)


@pytest.mark.parametrize(("model_id", "context", "stored", "read", "flops"), [
    ("deepseek-v3.2", K128, V32_LATENT + V32_INDEX, V32_TOP_K_READ + V32_INDEX, V32_DECODE_FLOPS),
    ("deepseek-v4-flash", M1, V4_WINDOW + V4_DENSE + V4_SPARSE + V4_INDEX, V4_READ, None),
    ("gemma-4-26b-a4b", K128, GEMMA_WINDOW + GEMMA_GLOBAL, GEMMA_WINDOW + GEMMA_GLOBAL, None),
])
def test_closed_forms_by_hand(models, model_id, context, stored, read, flops):
    m = models[model_id]
    layers, groups = AttentionLayers.of(m), AttentionGroups.of(m)
    own = BF16 * m.kv_elements_per_token_per_layer
    assert own * layers.stored(context) + groups.kv_bytes(context, 1, BF16) == stored
    assert own * layers.attended(context) + groups.read_bytes(context, 1, BF16) == read
    if flops is not None:
        assert groups.flops(context, 1.0) == flops


@pytest.mark.parametrize(("model_id", "accelerator", "context", "stored"), [
    ("deepseek-v3.2", "h200", K128, V32_LATENT + V32_INDEX),
    ("deepseek-v4-flash", "b200", M1, V4_WINDOW + V4_DENSE + V4_SPARSE + V4_INDEX),
    ("gemma-4-26b-a4b", "h100-sxm", K128, GEMMA_WINDOW + GEMMA_GLOBAL),
])
def test_engine_keeps_the_hand_worked_cache(engine, model_id, accelerator, context, stored):
    """One sequence at the full context, batch 1, a BF16 cache: both faces hold what the hand
    worked out (a prompt of context - 1 tokens and one generated)."""
    scenario = Scenario(model_id, accelerator, batch=1, input_len=context - 1, output_len=1, kv_precision="bf16")
    for result in (engine.predict(scenario), engine.reference(scenario)):
        assert result.memory.kv_cache_bytes == pytest.approx(stored, rel=1e-12)


def test_sparse_decode_reads_top_k_not_the_context(engine):
    """DeepSeek-V3.2's decode reads the top-2,048 latents and every indexer key (and writes one
    latent and one key per layer); at twice the context only the indexer's pass doubles."""
    def decode_kv(context):
        scenario = Scenario("deepseek-v3.2", "h200", batch=1, input_len=context, output_len=2, kv_precision="bf16")
        return engine.predict(scenario).decode.kv_bytes_per_device
    written = 61 * (1152 + 132)
    assert decode_kv(K128 - 1) == pytest.approx(V32_TOP_K_READ + V32_INDEX + written, rel=1e-12)
    assert decode_kv(2 * K128 - 1) == pytest.approx(V32_TOP_K_READ + 2 * V32_INDEX + written, rel=1e-12)



@pytest.mark.parametrize("model_id", ["deepseek-v3.2", "glm-5", "deepseek-v4-flash", "deepseek-v4-pro",
                                        "gemma-4-26b-a4b", "gemma-4-31b"])
def test_bundled_fixture_imports_to_the_catalog_groups(models, model_id):
    from pathlib import Path
    fixture = Path(__file__).parent / "fixtures" / "hf" / model_id / "config.json"
    imported = load_hf_config(fixture, model_id)
    assert imported.attention_groups == models[model_id].attention_groups
    assert imported.total_params == models[model_id].total_params
