"""Linear-attention (Gated DeltaNet) and state-space (Mamba-2) layers, and the block-scaled
FP4 formats, worked by hand: one layer's fixed-size state, its decode bytes and FLOPs, its
chunked prefill FLOPs; gpt-oss-120b's weights in MXFP4 and NVFP4; and what follows from them
(the largest batch, long-context decode, the compute format, the native default).

Every figure below is worked out in the docstring or comment beside it from the model files
(resources/models) and the formulas of DeltaNetSpec and MambaSpec; the engine is asked for the
same figure and must give it.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from accelscope.engine.core import codes
from accelscope.engine.core.model import weight_precision_for_model
from accelscope.engine.core.precision import PRECISIONS, bytes_per_element
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.physics.reference import ReferenceModel
from accelscope.engine.physics.reference.closed_forms import RecurrentLayers
from accelscope.engine.physics.results import OUTPUT_ROW, result_from_column

HYBRIDS = ("qwen3-next-80b-a3b", "nemotron-h-8b", "nemotron-h-56b")


def traced(engine, scenario):
    model = engine.model(scenario.model)
    return ReferenceModel(model, engine.catalog.accelerator(scenario.accelerator), engine.constants
                          ).evaluate_traced(scenario)


# ---- one Gated DeltaNet layer (Qwen3-Next-80B-A3B) ------------------------------------------

# 16 key heads and 32 value heads of 128, a 4-tap convolution.
DELTANET_MATRIX_STATE = 32 * 128 * 128  # 524,288 elements, FP32: 2,097,152 B
DELTANET_CONV_CHANNELS = 2 * 16 * 128 + 32 * 128  # q, k and v: 8,192
DELTANET_CONV_STATE = 3 * DELTANET_CONV_CHANNELS  # the last 3 inputs: 24,576 elements, 16-bit: 49,152 B
DELTANET_STATE_BYTES = 2_097_152 + 49_152  # 2,146,304 B per layer per sequence
DELTANET_DECODE_FLOPS = 7 * 32 * 128 * 128 + 2 * 8_192 * 4  # 3,670,016 + 65,536 = 3,735,552
DELTANET_PREFILL_FLOPS = 32 * (6 * 128 * 128 + 64 * (5 * 128 + 3 * 128)) + 2 * 8_192 * 4  # 5,308,416


def test_one_deltanet_layer_by_hand(engine):
    """Qwen3-Next's Gated DeltaNet layer, per sequence and per token:

    - state: the recurrent matrix, 32 value heads x 128 x 128 = 524,288 FP32 elements =
      2,097,152 B, and the convolution's last 3 inputs on 2·16·128 + 32·128 = 8,192 channels =
      24,576 16-bit elements = 49,152 B: 2,146,304 B, whatever the context;
    - decode: the recurrent step reads and writes it, 2 x 2,146,304 = 4,292,608 B, and takes
      7 d_k d_v per value head = 7·128·128·32 = 3,670,016 FLOPs plus the convolution's
      2·8,192·4 = 65,536: 3,735,552 FLOPs;
    - prefill, chunks of 64: 32 x (6·128·128 + 64·(5·128 + 3·128)) = 32 x 163,840 =
      5,242,880 FLOPs per token, plus the convolution: 5,308,416.
    """
    model = engine.model("qwen3-next-80b-a3b")
    spec = model.deltanet
    assert (spec.matrix_state_elements, spec.conv_state_elements) == (DELTANET_MATRIX_STATE, DELTANET_CONV_STATE)
    assert DELTANET_STATE_BYTES == 2_146_304
    assert (spec.decode_flops_per_token, spec.prefill_flops_per_token) == (3_735_552, 5_308_416)
    layers = RecurrentLayers.of(model)
    assert (layers.n_deltanet, layers.deltanet_shards, layers.n_mamba) == (36, 32, 0)
    assert layers.deltanet_state_bytes == DELTANET_STATE_BYTES
    assert layers.deltanet_decode_flops == DELTANET_DECODE_FLOPS == 3_735_552
    assert layers.deltanet_prefill_flops == DELTANET_PREFILL_FLOPS == 5_308_416


def test_deltanet_state_and_decode_through_the_engine(engine):
    """Qwen3-Next, batch 4, one device: 36 DeltaNet layers keep 36 x 2,146,304 = 77,266,944 B
    per sequence, 309,067,776 B for the batch, at any context. A decode step reads and writes
    all of it once: 2 x 309,067,776 = 618,135,552 B of state traffic, and does 4 x 36 x
    3,735,552 = 537,919,488 FLOPs of state work (beside attention over the 12 full layers)."""
    for context in (1000, 100_000):
        scenario = engine.resolve(Scenario("qwen3-next-80b-a3b", "b200", batch=4, input_len=context,
                                           output_len=2, weight_precision="fp8"))
        result, trace = traced(engine, scenario)
        assert trace.state_sequence_bytes == 36 * DELTANET_STATE_BYTES == 77_266_944
        assert result.memory.recurrent_state_bytes == 309_067_776
        assert engine.predict(scenario).memory.recurrent_state_bytes == pytest.approx(309_067_776, rel=1e-12)
        assert trace.decode.state_bytes_per_pass == pytest.approx(618_135_552, rel=1e-12)
        assert trace.decode.recurrent_flops_per_pass == pytest.approx(537_919_488, rel=1e-12)
        # Prefill: every prompt token by the chunked algorithm (a prompt of 1000 tokens and
        # 4 of them fit one 8,192-token chunk; 100,000 take 13 chunks each).
        prompt_tokens = 4 * context
        assert trace.prefill.recurrent_flops_per_pass * trace.prefill.passes == pytest.approx(
            prompt_tokens * 36 * DELTANET_PREFILL_FLOPS, rel=1e-12)


def test_deltanet_state_splits_by_value_heads_over_tensor_parallelism(engine):
    """TP 3 over 32 value heads: the busiest device holds ⌈32/3⌉ = 11 of them, 11/32 of the
    state: 77,266,944 x 11/32 = 26,560,512 B per sequence."""
    scenario = engine.resolve(Scenario("qwen3-next-80b-a3b", "h200", batch=1, tp=3))
    _, trace = traced(engine, scenario)
    assert trace.state_sequence_bytes == pytest.approx(26_560_512, rel=1e-12)


# ---- one Mamba-2 layer (Nemotron-H 8B) ------------------------------------------------------

# 128 heads of 64, state 128, 8 groups, a 4-tap convolution with bias.
MAMBA_MATRIX_STATE = 128 * 64 * 128  # 1,048,576 elements, FP32: 4,194,304 B
MAMBA_CONV_CHANNELS = 128 * 64 + 2 * 8 * 128  # x, B and C: 10,240
MAMBA_STATE_BYTES = 4 * 1_048_576 + 2 * 3 * 10_240  # 4,194,304 + 61,440 = 4,255,744 B
MAMBA_DECODE_FLOPS = 5 * 128 * 64 * 128 + 2 * 10_240 * 4  # 5,242,880 + 81,920 = 5,324,800
MAMBA_PREFILL_FLOPS = 128 * (2 * 128 * 64 + 4 * 128 * 64) + 8 * 2 * 128 * 128 + 2 * 10_240 * 4  # 6,635,520


def test_one_mamba_layer_by_hand():
    """Nemotron-H 8B's Mamba-2 mixer, per sequence and per token:

    - state: 128 heads x 64 x 128 = 1,048,576 FP32 elements = 4,194,304 B, and the convolution's
      last 3 inputs on 128·64 + 2·8·128 = 10,240 channels = 30,720 16-bit elements = 61,440 B:
      4,255,744 B;
    - decode: read and written once, 8,511,488 B; 5 P N per head = 5·64·128·128 = 5,242,880
      FLOPs plus the convolution's 2·10,240·4 = 81,920: 5,324,800;
    - prefill, chunks of 128: per head 2·128·64 + 4·128·64 = 49,152 (x 128 heads = 6,291,456),
      C B^T once per group 8·2·128·128 = 262,144, and the convolution 81,920: 6,635,520.
    """
    from accelscope.engine.catalog.models import load_bundled_models

    model = load_bundled_models()["nemotron-h-8b"]
    spec = model.mamba
    assert (spec.matrix_state_elements, spec.conv_state_elements) == (MAMBA_MATRIX_STATE, 3 * MAMBA_CONV_CHANNELS)
    assert MAMBA_STATE_BYTES == 4_255_744 and MAMBA_DECODE_FLOPS == 5_324_800 and MAMBA_PREFILL_FLOPS == 6_635_520
    assert (spec.decode_flops_per_token, spec.prefill_flops_per_token) == (5_324_800, 6_635_520)
    layers = RecurrentLayers.of(model)
    assert (layers.n_mamba, layers.mamba_shards, layers.n_deltanet) == (24, 128, 0)
    assert layers.mamba_state_bytes == MAMBA_STATE_BYTES


def test_mamba_state_and_decode_through_the_engine(engine):
    """Nemotron-H 8B, batch 2, two pipeline stages: each stage holds half of the 24 Mamba
    layers' state, 24 x 4,255,744 / 2 = 51,068,928 B per sequence; a decode step takes min(2, 2)
    = 2 micro-batches of 1 sequence, each reading and writing it once (102,137,856 B) and
    doing 24 x 5,324,800 / 2 = 63,897,600 FLOPs of state work."""
    scenario = engine.resolve(Scenario("nemotron-h-8b", "h100-sxm", batch=2, input_len=2000, output_len=100, pp=2))
    result, trace = traced(engine, scenario)
    assert trace.state_sequence_bytes == 51_068_928
    assert result.memory.recurrent_state_bytes == 2 * 51_068_928
    assert trace.decode.passes == 2
    assert trace.decode.state_bytes_per_pass == pytest.approx(102_137_856, rel=1e-12)
    assert trace.decode.recurrent_flops_per_pass == pytest.approx(63_897_600, rel=1e-12)
    # The four attention layers keep the KV cache: 2 stages, 2 layers each, 2·8·128 elements
    # per token in 16 bits = 4,096 B per token per layer, at 2,100 tokens of context.
    assert result.memory.kv_cache_bytes == pytest.approx(2 * 2 * 4096 * 2100, rel=1e-12)


def test_the_largest_batch_counts_the_state(engine):
    """Nemotron-H 56B on one H200 in FP8: each sequence holds its KV cache at full context, its
    logits and 54 Mamba layers' state (256 heads of 64, state 256, 8 groups): 54 x (4 x
    256·64·256 + 2 x 3 x (256·64 + 2·8·256)) = 54 x (16,777,216 + 122,880) = 912,605,184 B,
    whatever the context. The largest batch is the
    room left beside the weights over that, as for any sequence (the workspace of one prefill
    chunk taken first), and is smaller than it would be without the state."""
    scenario = engine.resolve(Scenario("nemotron-h-56b", "h200", batch=1, input_len=4000, output_len=1000,
                                       weight_precision="fp8"))
    result, trace = traced(engine, scenario)
    state = 54 * (4 * 256 * 64 * 256 + 2 * 3 * (256 * 64 + 2 * 8 * 256))
    assert state == 912_605_184 == trace.state_sequence_bytes
    per_sequence = trace.kv_sequence_bytes + trace.logits_bytes_per_sequence + state
    room = trace.kv_room_bytes - engine.constants.prefill_chunk_tokens * trace.activation_bytes_per_token
    assert trace.max_batch_term == "chunked"
    assert result.memory.max_batch == math.floor(room / per_sequence)
    assert result.memory.max_batch < math.floor(room / (per_sequence - state))
    assert engine.predict(scenario).memory.max_batch == result.memory.max_batch


def test_long_context_decode_grows_slower_for_a_hybrid(engine):
    """From 4K to 128K tokens of context, a decode step's KV bytes grow only by the attention
    layers' KV cache: Nemotron-H 8B has 4 of them (2·8·128 elements per token in 16 bits,
    4,096 B each), Llama 3.1 8B 32 of the same size. At batch 4 over 124K more tokens (the mean
    decode context goes from 4,001 to 128,001): 4 x 4 x 4,096 x 124,000 = 8.13 GB more for the
    hybrid, 4 x 32 x 4,096 x 124,000 = 65.0 GB for Llama. The hybrid's step time grows far
    less, while its recurrent state traffic stays what it was."""
    growth = {}
    for model_id, attention_layers in (("nemotron-h-8b", 4), ("llama-3.1-8b", 32)):
        short, long = (engine.resolve(Scenario(model_id, "h200", batch=4, input_len=context, output_len=2))
                       for context in (4_000, 128_000))
        (short_result, short_trace), (long_result, long_trace) = traced(engine, short), traced(engine, long)
        assert short_result.waves == long_result.waves == 1
        assert long_trace.decode.kv_bytes_per_pass - short_trace.decode.kv_bytes_per_pass == pytest.approx(
            4 * attention_layers * 4096 * 124_000, rel=1e-9)
        assert long_trace.decode.state_bytes_per_pass == short_trace.decode.state_bytes_per_pass
        growth[model_id] = long_result.itl_s / short_result.itl_s
    assert short_trace.decode.state_bytes_per_pass == 0.0  # Llama has no recurrent layers
    assert growth["nemotron-h-8b"] < growth["llama-3.1-8b"] / 2


def test_the_serving_iteration_sees_the_recurrent_layers(engine):
    """A decode-only iteration of 4 Qwen3-Next requests pays, beyond its attention, 4 x 36 x
    3,735,552 FLOPs and 4 x 2 x 77,266,944 B of state on one device; a prefill
    iteration of 1,000 prompt tokens pays 1,000 x 36 x 5,308,416 FLOPs. Checked on the step
    the reference iteration builds, and the kernel's cost rows carry the same coefficients."""
    scenario = engine.resolve(Scenario("qwen3-next-80b-a3b", "b200", batch=4, weight_precision="fp8"))
    model = engine.iteration_cost_model(scenario)
    decode = model.step(4.0, 4.0, 0.0, 4.0 * 2000, 4.0 * 2000, 0.0)
    assert decode.stage_pass.state_bytes == pytest.approx(4 * 2 * 77_266_944, rel=1e-12)
    attention_only = 4.0 * 2000 * model.setup.attention_flops_per_position(prefill=False)
    assert decode.attention_flops - attention_only == pytest.approx(4 * 36 * DELTANET_DECODE_FLOPS, rel=1e-9)
    prefill = model.step(1000.0, 1.0, 500_500.0, 0.0, 0.0, 1000.0)
    attention_only = 500_500.0 * model.setup.attention_flops_per_position(prefill=True)
    assert prefill.attention_flops - attention_only == pytest.approx(1000 * 36 * DELTANET_PREFILL_FLOPS, rel=1e-9)
    from accelscope.engine.physics import layout

    cost = engine.iteration_costs([scenario])[:, 0]
    assert cost[layout.C_DECODE_RECURRENT_FLOPS_PER_TOKEN] == pytest.approx(36 * DELTANET_DECODE_FLOPS, rel=1e-12)
    assert cost[layout.C_PREFILL_RECURRENT_FLOPS_PER_TOKEN] == pytest.approx(36 * DELTANET_PREFILL_FLOPS, rel=1e-12)
    assert cost[layout.C_STATE_TRAFFIC_PER_SEQUENCE] == pytest.approx(2 * 77_266_944, rel=1e-12)
    assert cost[layout.C_STATE_BYTES_PER_SEQUENCE] == pytest.approx(77_266_944, rel=1e-12)


# ---- block-scaled FP4: gpt-oss-120b's weights -----------------------------------------------

# gpt-oss-120b's parameters by group (test_model_catalog pins their sum, 116,829,156,672):
EMBEDDINGS = 2 * 201_088 * 2880  # embedding table and untied LM head: 1,158,266,880
ATTENTION = 36 * (2880 * 4096 + 2 * 2880 * 512 + 4096 * 2880 + 4096 + 1024 + 2880 + 64)  # 955,805,184
ROUTERS = 36 * (2880 * 128 + 128)  # 13,275,648
EXPERTS = 36 * 128 * (3 * 2880 * 2880 + 2 * 2880 + 2880)  # 114,701,598,720
NORMS = (2 * 36 + 1) * 2880  # 210,240


def test_mxfp4_and_nvfp4_bits_per_element():
    """MXFP4: 4-bit elements and one 8-bit scale per 32 = 4.25 bits = 0.53125 B; NVFP4: one
    8-bit scale per 16 = 4.5 bits = 0.5625 B."""
    assert bytes_per_element("mxfp4") == 4.25 / 8 == 0.53125
    assert bytes_per_element("nvfp4") == 4.5 / 8 == 0.5625
    assert PRECISIONS[-2:] == ("mxfp4", "nvfp4")  # appended: earlier formats keep their codes


def test_gpt_oss_120b_weights_in_mxfp4_as_published(engine):
    """gpt-oss-120b is published with its routed experts in MXFP4 and everything else in BF16.
    Experts: 114,701,598,720 x 0.53125 = 60,935,224,320 B; the rest, 955,805,184 (attention) +
    13,275,648 (routers) + 1,158,266,880 (embeddings) + 210,240 (norms) = 2,127,557,952
    parameters x 2 B = 4,255,115,904 B; in all 65,190,340,224 B (60.71 GiB)."""
    assert ATTENTION == 955_805_184 and EXPERTS == 114_701_598_720
    assert EMBEDDINGS + ATTENTION + ROUTERS + EXPERTS + NORMS == 116_829_156_672
    expected = 60_935_224_320 + 4_255_115_904
    assert EXPERTS * 0.53125 == 60_935_224_320 and (ATTENTION + ROUTERS + EMBEDDINGS + NORMS) * 2 == 4_255_115_904
    scenario = engine.resolve(Scenario("gpt-oss-120b", "h100-sxm", weight_precision="mxfp4"))
    assert engine.reference(scenario).memory.weights_bytes == expected == 65_190_340_224
    assert engine.predict(scenario).memory.weights_bytes == pytest.approx(expected, rel=1e-12)
    assert engine.predict(scenario).fits  # on one 80 GB device, as its card says


def test_gpt_oss_120b_weights_in_nvfp4(engine):
    """NVFP4 is not gpt-oss's own format, so it covers every linear layer of the blocks, as any
    other format does: attention 955,805,184 x 0.5625 = 537,640,416 B and experts
    114,701,598,720 x 0.5625 = 64,519,649,280 B; routers, embeddings and norms stay 16-bit,
    1,171,752,768 x 2 = 2,343,505,536 B; in all 67,400,795,232 B. Over TP 2 each device holds
    half of it but the norms whole (210,240 x 2 = 420,480 B): (67,400,795,232 - 420,480) / 2 +
    420,480 = 33,700,607,856 B."""
    expected = 537_640_416 + 64_519_649_280 + 2_343_505_536
    assert expected == 67_400_795_232
    assert ATTENTION * 0.5625 == 537_640_416 and EXPERTS * 0.5625 == 64_519_649_280
    assert (ROUTERS + EMBEDDINGS + NORMS) * 2 == 2_343_505_536
    scenario = engine.resolve(Scenario("gpt-oss-120b", "b200", weight_precision="nvfp4", tp=2))
    assert engine.reference(scenario).memory.weights_bytes == (expected - 420_480) / 2 + 420_480 == 33_700_607_856


def test_fp4_formats_run_on_fp4_units_where_the_device_has_them(engine):
    """MXFP4 and NVFP4 weights with activations in the same format run on FP4 tensor cores on
    Blackwell (b200) with no fallback; on Hopper (h100-sxm), which has none, they are
    dequantised and multiplied in BF16, with the fallback warning. With BF16 activations the
    products are BF16 everywhere (W4A16)."""
    for precision in ("mxfp4", "nvfp4"):
        blackwell = engine.predict(engine.resolve(Scenario("gpt-oss-20b", "b200", weight_precision=precision,
                                                           activation_precision=precision)))
        hopper = engine.predict(engine.resolve(Scenario("gpt-oss-20b", "h100-sxm", weight_precision=precision,
                                                        activation_precision=precision)))
        w4a16 = engine.predict(engine.resolve(Scenario("gpt-oss-20b", "b200", weight_precision=precision)))
        assert blackwell.compute_precision == "fp4" and not blackwell.warning_bits & codes.WARN_COMPUTE_FALLBACK
        assert hopper.compute_precision == "bf16" and hopper.warning_bits & codes.WARN_COMPUTE_FALLBACK
        assert w4a16.compute_precision == "bf16"


def test_a_native_format_is_the_default_when_a_model_is_chosen(engine):
    """gpt-oss starts in MXFP4 and DeepSeek-V3 in FP8; a model without a published format keeps
    what the user chose, unless that was only the previous model's own format."""
    gpt_oss, deepseek, llama = (engine.model(m) for m in ("gpt-oss-120b", "deepseek-v3", "llama-3.1-8b"))
    assert gpt_oss.default_weight_precision == "mxfp4" and deepseek.default_weight_precision == "fp8"
    assert llama.default_weight_precision == "bf16"
    assert weight_precision_for_model(gpt_oss, "bf16", llama) == "mxfp4"
    assert weight_precision_for_model(deepseek, "mxfp4", gpt_oss) == "fp8"
    assert weight_precision_for_model(llama, "mxfp4", gpt_oss) == "bf16"
    assert weight_precision_for_model(llama, "int4", gpt_oss) == "int4"
    assert weight_precision_for_model(llama, "fp8", None) == "fp8"


# ---- everything answers ----------------------------------------------------------------------


def finite_or_roofless(out: np.ndarray) -> bool:
    """Every output finite, but the ridge point of a part with no compute peak published for the
    format (nor a wider one): infinite, and the result then does not fit, saying why."""
    finite = np.isfinite(out)
    roofless = np.isposinf(out[OUTPUT_ROW["ridge_point"]]) & (out[OUTPUT_ROW["fits"]] == 0)
    finite[OUTPUT_ROW["ridge_point"]] |= roofless
    return bool(finite.all())



def test_every_model_on_every_accelerator_in_its_own_format(engine):
    """Every bundled model on every accelerator, weights in the model's default format: finite
    answers, and where it does not fit, the reason and what would fit (more tensor parallelism,
    or offloading to a far tier)."""
    scenarios = [engine.resolve(Scenario(model.id, accelerator, batch=4,
                                         weight_precision=model.default_weight_precision))
                 for model in engine.catalog.models.values() for accelerator in engine.catalog.accelerators]
    out = engine.evaluate(scenarios)
    assert finite_or_roofless(out)
    for column, scenario in enumerate(scenarios):
        result = result_from_column(out, column, scenario)
        assert result.itl_s > 0 and result.ttft_s > 0
        if not result.fits:
            assert result.fit_reason and result.fit_reason != "fits"
            if result.fit_code != codes.FIT_COMPUTE_UNPUBLISHED:  # it fits; only no roof is published
                assert result.tp_needed > scenario.tp or result.offload_needed >= 0.0, scenario


def test_kernels_equal_the_reference_on_hybrids_and_fp4(engine):
    """Drawn scenarios of the hybrids and of gpt-oss in every format, MXFP4 and NVFP4 often:
    the kernel's outputs equal the reference's to 1e-9 (tests/test_kernels.py's comparison)."""
    from test_kernels import assert_same

    rng = random.Random(20261126)
    models = [*HYBRIDS, "gpt-oss-120b", "gpt-oss-20b", "deepseek-v3"]
    formats = [*PRECISIONS, "mxfp4", "nvfp4", "mxfp4", "nvfp4"]
    scenarios = []
    for _ in range(400):
        model = engine.model(rng.choice(models))
        tp = rng.choice([1, 2, 3, 4, 8, 64])
        scenarios.append(engine.resolve(Scenario(
            model.id, rng.choice(list(engine.catalog.accelerators)),
            batch=rng.choice([1, 7, 64, rng.randint(1, 3000)]),
            input_len=rng.choice([1, 4096, rng.randint(1, 300_000)]),
            output_len=rng.choice([1, 2, rng.randint(1, 10_000)]),
            weight_precision=rng.choice(formats), activation_precision=rng.choice(formats),
            kv_precision=rng.choice(PRECISIONS), tp=tp, pp=rng.choice([1, 2, 3]),
            ep=rng.choice([1, tp]) if model.moe else 1, dp=rng.choice([1, 2]),
            offload=rng.choice([0.0, 0.0, 0.5]), kv_offload=rng.choice([0.0, 0.0, 0.4]),
        )))
    out = engine.evaluate(scenarios)
    assert finite_or_roofless(out)
    for column, scenario in enumerate(scenarios):
        assert_same(engine.reference(scenario), result_from_column(out, column, scenario), scenario)


def test_a_served_hybrid_keeps_each_running_sequences_state_beside_its_kv_cache(engine):
    """Serving Nemotron-H 8B: the KV pool is shared with the fixed-size state of the running
    sequences (102,137,856 B each on one device). As many run at once as the pool holds at the
    workload's mean context (1,024 + 128 tokens) with their state beside their KV cache (4
    attention layers x 4,096 B per token): no more than that, and the KV cache is what is left."""
    from accelscope.engine.core.serving import ServingSpec
    from accelscope.engine.studies.serving.study import server_setup

    scenario = engine.resolve(Scenario("nemotron-h-8b", "h100-sxm"))
    setup = server_setup(engine, scenario, ServingSpec())
    state, per_token = 102_137_856, 4 * 4096
    assert setup.kv_bytes_per_token == per_token
    pool = setup.kv_cache_bytes + setup.max_num_seqs * state
    per_sequence = state + per_token * (1024 + 128)
    assert setup.max_num_seqs == math.floor(pool / per_sequence) < 1024  # vLLM's default limit, cut by memory
    llama = server_setup(engine, engine.resolve(Scenario("llama-3.1-8b", "h100-sxm")), ServingSpec())
    assert llama.max_num_seqs == 1024  # no recurrent layers: the limit as set
