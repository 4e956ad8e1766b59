"""The reference model against numbers worked out by hand, with the arithmetic written here.

Constants used below (resources/efficiency.toml, class gpu-simt): compute efficiency 0.70,
memory efficiency 0.85, per-layer overhead 30 µs, host time 1.0 ms per step plus 25 µs per
sequence, operators one after another (overlap 0), 5 µs to launch and synchronise each
communication operation, usable memory 0.90, runtime 1.5 GB, interconnect efficiency 0.80. H100 SXM (catalog): 989.4 TFLOP/s dense BF16, 3.35 TB/s HBM3,
80 GiB. If a catalog value or constant changes, these tests say so first.
"""

from __future__ import annotations

import math

import pytest

from accelscope.engine.core import codes
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.physics.reference import (
    all_reduce,
    causal_positions,
    chunk_reread_positions,
    execution_time,
    expected_max_standard_normal,
    experts_touched_busiest_device,
    ring_all_reduce_time,
    tensor_parallel_all_reduce,
    token_imbalance,
)

REL = 1e-9


@pytest.fixture(scope="module")
def h100(catalog):
    accelerator = catalog.accelerators["h100-sxm"]
    assert accelerator.peak("bf16") == pytest.approx(989.4e12)
    assert float(accelerator.tier("device").bandwidth_Bps) == pytest.approx(3.35e12)
    return accelerator


def test_constants_are_those_the_hand_cases_use(engine):
    gpu = engine.constants.for_class("gpu-simt")
    assert (gpu.compute_efficiency, gpu.memory_efficiency, gpu.per_layer_overhead_s) == (0.70, 0.85, 30e-6)
    assert (gpu.step_overhead_s, gpu.sequence_overhead_s, gpu.operator_overlap) == (1.0e-3, 25e-6, 0.0)
    assert gpu.collective_overhead_s == 5e-6
    assert gpu.activation_quantization_overhead_s == 24e-6
    assert (gpu.usable_memory_fraction, gpu.runtime_overhead_bytes, gpu.interconnect_efficiency) == (0.90, 1.5e9, 0.80)
    assert engine.constants.prefill_chunk_tokens == 8192


def test_llama_8b_bf16_decode_batch_1_on_h100(engine, h100):
    """Llama-3.1-8B (32 layers, d=4096, 32 heads / 8 KV heads of 128, FFN 14336, vocab 128256).

    Per layer: q 4096·4096 + k,v 2·4096·1024 + o 4096·4096 = 41,943,040; FFN 3·4096·14336
    = 176,160,768; so blocks 32·218,103,808 = 6,979,321,856. Norms (2·32+1)·4096 = 266,240.
    LM head 128256·4096 = 525,336,576.

    Bytes read per decode step, BF16 (2 bytes):
      weights  (6,979,321,856 + 266,240 + 525,336,576)·2  = 15,009,849,344
      KV read  mean context 1024 + 256/2 = 1152 tokens · 32 layers · 2·8·128 · 2 B = 150,994,944
      KV write one token: 32 · 4096 B                     =        131,072
      activations 32 layers · 2 B · (4·4096 + 2·14336)     =      2,883,584
      total                                               = 15,163,858,944
    FLOPs: 2·6,979,321,856 + 2·4096·128256 (LM head) + 1152 positions · 32 layers · 4·32·128
    (attention) = 13,958,643,712 + 1,050,673,152 + 603,979,776 = 15,613,296,640.
    Memory time 15,163,858,944 / (3.35e12 · 0.85) = 5.3253 ms; compute 15.61e9 / (989.4e12 · 0.7)
    = 0.0225 ms: memory-bound. The linear layers and attention each run at their own roofline,
    and both are memory-bound here, so together they take the whole memory time. ITL = 5.3253 +
    32 · 30 µs (per-layer overhead) + 1.0 ms + 1 · 25 µs (host time of the step) = 7.3103 ms.
    OI = 1.03 FLOP/byte, close to 2B/p = 1 with B = 1 and p = 2 bytes (attention adds the rest).
    """
    result = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", batch=1, input_len=1024, output_len=256))
    bytes_per_step = 15_009_849_344 + 150_994_944 + 131_072 + 2_883_584
    flops_per_step = 2 * 6_979_321_856 + 2 * 4096 * 128256 + 1152 * 32 * 4 * 32 * 128
    assert bytes_per_step == 15_163_858_944 and flops_per_step == 15_613_296_640
    decode = result.decode
    assert decode.bytes_per_device == pytest.approx(bytes_per_step, rel=REL)
    assert decode.flops_per_device == pytest.approx(flops_per_step, rel=REL)
    assert decode.weight_bytes_per_device == pytest.approx(15_009_849_344, rel=REL)
    assert decode.kv_bytes_per_device == pytest.approx(150_994_944 + 131_072, rel=REL)
    memory_time = bytes_per_step / (3.35e12 * 0.85)
    assert decode.memory_time_s == pytest.approx(memory_time, rel=REL)
    assert decode.compute_time_s == pytest.approx(flops_per_step / (989.4e12 * 0.70), rel=REL)
    assert decode.bound == "memory"
    assert decode.execution_time_s == pytest.approx(memory_time, rel=REL)
    assert decode.host_time_s == pytest.approx(1.0e-3 + 25e-6, rel=REL)
    assert result.itl_s == pytest.approx(memory_time + 32 * 30e-6 + 1.0e-3 + 25e-6, rel=REL)
    assert result.itl_s == pytest.approx(7.3103e-3, rel=1e-4)
    assert decode.operational_intensity == pytest.approx(flops_per_step / bytes_per_step, rel=REL)
    assert result.ridge_point == pytest.approx(989.4e12 / 3.35e12, rel=REL)  # ≈ 295 FLOP/byte


def test_llama_8b_batch_1_decode_power_is_the_busy_floor_on_h100(engine, h100):
    """The step of the test above, in watts. H100: TDP 700 W, idle 70 W; gpu-simt busy floor
    0.79 · 700 = 553 W. Energy per FLOP (700 − 70)/(0.70 · 989.4e12) = 9.0964e-13 J; HBM 48 pJ/B.

      bytes  15,163,858,944 · 48e-12          = 0.727865 J
      FLOPs  15,613,296,640 · 9.0964e-13      = 0.014203 J
      idle + work/ITL = 70 + 0.742068 / 7.3103e-3 = 70 + 101.51 = 171.5 W

    below the floor, so a memory-bound step draws 553 W (not the 172 W of work alone), and
    without the floor it draws the 172 W. The floor holds over the whole step, host time
    included: it is the average the paper measured over whole runs, host gaps and all."""
    assert (float(h100.tdp_W), float(h100.idle_W)) == (700.0, 70.0)
    assert engine.constants.for_class("gpu-simt").busy_power_fraction == 0.79
    assert engine.constants.memory_energy_J_per_byte["hbm"] == 48e-12
    scenario = Scenario("llama-3.1-8b", "h100-sxm", batch=1, input_len=1024, output_len=256)
    result = engine.reference(scenario)
    e_flop = (700.0 - 70.0) / (0.70 * 989.4e12)
    work = 15_163_858_944 * 48e-12 + 15_613_296_640 * e_flop
    assert work == pytest.approx(0.742068, rel=1e-5)
    without_floor = 70.0 + work / result.itl_s
    assert without_floor == pytest.approx(171.51, rel=1e-3)
    assert result.decode.power_per_device_W == pytest.approx(0.79 * 700.0, rel=REL)

    from dataclasses import replace

    from accelscope.engine.physics.reference import evaluate

    classes = dict(engine.constants.classes)
    classes["gpu-simt"] = replace(classes["gpu-simt"], busy_power_fraction=0.0)
    no_floor = replace(engine.constants, classes=classes)
    bare = evaluate(scenario, engine.model("llama-3.1-8b"), h100, no_floor)
    assert bare.decode.power_per_device_W == pytest.approx(without_floor, rel=REL)
    assert bare.itl_s == result.itl_s  # the floor changes power, not time


def test_llama_8b_memory_fit_on_h100(engine):
    """Weights 8,030,261,248 params · 2 B = 16,060,522,496 B per device (all of them, input
    embedding included). KV per token 131,072 B; at the full context 1024 + 256 = 1280 tokens a
    sequence holds 167,772,160 B. Usable 0.9 · 80 GiB = 77,309,411,328 B; minus runtime
    1.5e9 B and weights leaves 59,748,888,832 B.

    Activation workspace: per prompt token 2 B · (2·4096 + (32+16)·128 + 2·14336) = 86,016 B,
    up to one 8192-token chunk; FP32 logits 128256 · 4 = 513,024 B per sequence.
    Beyond 8192/1024 = 8 sequences the chunk is full: 59,748,888,832 − 8192 · 86,016
    = 59,044,245,504 B for (167,772,160 + 513,024) B per sequence → 350 sequences.
    """
    result = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", batch=1, input_len=1024, output_len=256))
    memory = result.memory
    assert memory.weights_bytes == pytest.approx(16_060_522_496, rel=REL)
    assert memory.kv_cache_bytes == pytest.approx(167_772_160, rel=REL)
    assert memory.usable_bytes == pytest.approx(0.9 * 80 * 2**30, rel=REL)
    available = 0.9 * 80 * 2**30 - 1.5e9 - 16_060_522_496
    per_sequence = 167_772_160 + 128256 * 4
    assert memory.max_batch == math.floor((available - 8192 * 86_016) / per_sequence) == 350
    assert result.fits and result.fit_code == codes.FIT_OK and result.waves == 1


def test_llama_70b_needs_two_h100s(engine):
    """Llama-3.3-70B in BF16: ~70.6e9 params · 2 B ≈ 141 GB > 77.3 GB usable on one H100, so
    it does not fit; at TP=2 each device holds ≈ 70.6 GB, which fits beside one sequence."""
    result = engine.reference(Scenario("llama-3.3-70b", "h100-sxm", batch=1))
    assert not result.fits
    assert result.fit_code == codes.FIT_WEIGHTS_DO_NOT_FIT
    assert result.memory.weights_bytes == pytest.approx(2 * engine.model("llama-3.3-70b").total_params, rel=REL)
    assert result.tp_needed == 2
    # The far tier (host memory over PCIe) can take the excess: ≈ 1 − (77.3 − 1.5 − ...)/141.
    assert 0.4 < result.offload_needed < 0.5
    at_tp2 = engine.reference(Scenario("llama-3.3-70b", "h100-sxm", batch=1, tp=2))
    assert at_tp2.fits
    # The second paper's guideline: weights above 80% of memory starve the KV cache.
    assert at_tp2.warning_bits & codes.WARN_KV_STARVED


def test_tensor_parallel_all_reduce_on_decode(engine, h100):
    """TP=2: two all-reduces per layer of B·d·2 bytes = 8192 B at batch 1. As a ring each
    takes 2·(1/2)·8192 / (bw · 0.8) + 2·1·latency; two devices can instead swap their whole
    messages and add locally (recursive doubling: the same 8192 B sent, one step):
    8192 / (bw · 0.8) + latency. Launching and synchronising the collective adds 5 µs.
    32 layers → 64 all-reduces per step."""
    bandwidth = float(h100.interconnect.bandwidth_per_direction_Bps) * 0.8
    latency = float(h100.interconnect.latency_s)
    ring = 2 * (2 - 1) / 2 * 8192 / bandwidth + 2 * (2 - 1) * latency
    assert ring_all_reduce_time(8192, 2, bandwidth, latency) == pytest.approx(ring, rel=REL)
    one = 8192 / bandwidth + latency
    assert all_reduce(8192, 2, bandwidth, latency) == (pytest.approx(one, rel=REL), 8192, "recursive doubling")
    result = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", batch=1, tp=2))
    assert result.decode.communication_time_s == pytest.approx(64 * (one + 5e-6), rel=REL)
    assert tensor_parallel_all_reduce(h100, engine.constants, 2, 8192) == (
        pytest.approx(one + 5e-6, rel=REL), 8192, "recursive doubling")


def test_all_reduce_takes_the_fastest_algorithm():
    """At 360 GB/s and 1 µs per step over four devices, for a message of S bytes:
      ring                     1.5·S/B + 6 µs
      recursive halving-dbl.   1.5·S/B + 4 µs   (same bytes, 2·log2 4 = 4 steps)
      recursive doubling       2·S/B   + 2 µs   (the whole message, log2 4 = 2 steps)
    Doubling wins below S = 4 µs·B = 1.44 MB, halving-doubling above; three devices (not a
    power of two) have only the ring: 4/3·S/B + 4 µs."""
    bandwidth, latency = 360e9, 1e-6
    small, large = 16_384, 8_000_000
    assert all_reduce(small, 4, bandwidth, latency) == (
        pytest.approx(2 * small / bandwidth + 2e-6, rel=REL), 2 * small, "recursive doubling")
    assert all_reduce(large, 4, bandwidth, latency) == (
        pytest.approx(1.5 * large / bandwidth + 4e-6, rel=REL), 1.5 * large, "recursive halving and doubling")
    assert all_reduce(small, 3, bandwidth, latency) == (
        pytest.approx(4 / 3 * small / bandwidth + 4e-6, rel=REL), pytest.approx(4 / 3 * small, rel=REL), "ring")
    assert all_reduce(small, 1, bandwidth, latency) == (0.0, 0.0, "none")


def test_linear_layers_and_attention_take_their_own_rooflines_on_a_gpu(engine, h100):
    """Llama-3.1-8B on an H100, batch 512, 128 in / 128 out: one decode step at the mean
    context 128 + 64 = 192. Rates: 989.4e12 · 0.7 = 692.58e12 FLOP/s, 3.35e12 · 0.85 =
    2.8475e12 B/s.

      linear FLOPs  512 · (2·6,979,321,856 + 2·4096·128256)       = 7.68477e15 → 11.096 ms
      linear bytes  15,009,849,344 weights + 512 · 2,883,584 act.  = 16.4863e9  →  5.790 ms
      attention     512 · 192 · 32 · 4·32·128 FLOPs                = 51.540e9   →  0.074 ms
      KV bytes      512 · (192 · 131,072 read + 131,072 written)   = 12.9520e9  →  4.549 ms

    One after another (a GPU): max(11.096, 5.790) + max(0.074, 4.549) = 15.644 ms. As one
    roofline (overlap 1): max(11.170, 10.339) = 11.170 ms. The linear layers are compute-bound
    while attention waits on the KV cache, and kernels do not overlap, so the pass is 40%
    longer than the whole-pass roofline says."""
    result = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", batch=512, input_len=128, output_len=128))
    decode = result.decode
    assert result.waves == 1
    rate, bandwidth = 989.4e12 * 0.7, 3.35e12 * 0.85
    linear_c = 512 * (2 * 6_979_321_856 + 2 * 4096 * 128256) / rate
    linear_m = (15_009_849_344 + 512 * 2_883_584) / bandwidth
    attention_c = 512 * 192 * 32 * 4 * 32 * 128 / rate
    attention_m = 512 * (192 * 131_072 + 131_072) / bandwidth
    assert (linear_c, linear_m, attention_c, attention_m) == (
        pytest.approx(11.096e-3, rel=1e-3), pytest.approx(5.790e-3, rel=1e-3),
        pytest.approx(0.0744e-3, rel=1e-3), pytest.approx(4.549e-3, rel=1e-3))
    assert decode.attention_compute_time_s == pytest.approx(attention_c, rel=REL)
    assert decode.attention_memory_time_s == pytest.approx(attention_m, rel=REL)
    assert decode.compute_time_s == pytest.approx(linear_c + attention_c, rel=REL)
    assert decode.memory_time_s == pytest.approx(linear_m + attention_m, rel=REL)
    assert decode.execution_time_s == pytest.approx(linear_c + attention_m, rel=REL)
    assert decode.execution_time_s == pytest.approx(15.644e-3, rel=1e-4)
    whole = execution_time(decode.compute_time_s, decode.memory_time_s, attention_c, attention_m, 1.0)
    assert whole == pytest.approx(linear_c + attention_c, rel=REL)
    assert decode.execution_time_s / whole == pytest.approx(1.4005, rel=1e-4)
    assert result.itl_s == pytest.approx(decode.execution_time_s + 32 * 30e-6 + 1.0e-3 + 512 * 25e-6, rel=REL)
    # Host time 1.0 + 512 · 0.025 = 13.8 ms and 32 · 30 µs of layer overhead exceed the 11.17 ms
    # of compute: at this batch the serving stack's host work is the largest single term.
    assert decode.host_time_s == pytest.approx(13.8e-3, rel=REL)
    assert decode.bound == "overhead"


def test_host_time_is_per_step_and_per_sequence(engine):
    """The serving stack's host work: decode adds 1.0 ms + B · 25 µs to every step; prefill of
    B prompts of I tokens in ⌈B·I/8192⌉ chunks adds that many steps' fixed part and B
    sequences' part. Batch 64, 1,024 in: 8 chunks → 8 · 1.0 + 64 · 0.025 = 9.6 ms of prefill
    host time; decode 1.0 + 64 · 0.025 = 2.6 ms per step."""
    result = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", batch=64, input_len=1024, output_len=256))
    assert result.prefill.host_time_s == pytest.approx(8 * 1.0e-3 + 64 * 25e-6, rel=REL)
    assert result.decode.host_time_s == pytest.approx(1.0e-3 + 64 * 25e-6, rel=REL)
    prefill_pass = result.prefill.execution_time_s + result.prefill.communication_time_s + result.prefill.overhead_time_s
    assert result.prefill.time_s == pytest.approx(8 * prefill_pass + 9.6e-3, rel=REL)
    # A wafer-scale engine's stack runs the decode step on the device: no host time.
    wafer = engine.reference(Scenario("llama-3.1-8b", "wse-3", batch=64, input_len=1024, output_len=256))
    assert wafer.decode.host_time_s == 0.0 and wafer.prefill.host_time_s == 0.0


def test_moe_expert_traffic_grows_with_batch(engine):
    """Mixtral-8x7B: 8 experts, top-2. At batch 1 a step touches 1 − (1 − 2/8)^1 = 1/4 of the
    8 experts = 2 per layer; at batch 16, 8·(1 − 0.75^16) = 7.92 of them. Expert weights read
    grow by 7.92/2 ≈ 3.96× while the expert FLOPs grow 16×."""
    model = engine.model("mixtral-8x7b")
    expert_bytes = model.expert_params * 2 * model.n_moe_layers

    def expert_read(batch: int) -> float:
        result = engine.reference(Scenario("mixtral-8x7b", "h100-sxm", batch=batch, tp=2))
        return result

    one = engine.reference(Scenario("mixtral-8x7b", "mi300x", batch=1))
    sixteen = engine.reference(Scenario("mixtral-8x7b", "mi300x", batch=16))
    touched_1 = 8 * (1 - 0.75**1)
    touched_16 = 8 * (1 - 0.75**16)
    assert touched_1 == pytest.approx(2.0)
    # Difference of bytes between the two steps: experts + batch-proportional KV/activations.
    grow = sixteen.decode.bytes_per_device - one.decode.bytes_per_device
    expert_part = (touched_16 - touched_1) * expert_bytes
    assert grow > expert_part
    assert grow < expert_part * 1.2  # the rest is KV and activations of 15 more sequences
    assert expert_read(1).fits is False or True  # a TP=2 layout evaluates without error


def test_deepseek_mla_kv_cache_is_the_latent(engine):
    """DeepSeek-R1 keeps 512 (latent) + 64 (RoPE key) = 576 elements per token per layer, over
    61 layers: 576 · 61 · 2 B = 70,272 B per token in BF16 — versus 2·128·128·61·2 B ≈ 4 MB for
    the same heads without MLA. Tensor parallelism does not split it."""
    model = engine.model("deepseek-r1")
    assert model.kv_elements_per_token_per_layer == 576
    one = engine.reference(Scenario("deepseek-r1", "mi300x", batch=1, input_len=1000, output_len=24, tp=8))
    assert one.memory.kv_cache_bytes == pytest.approx(576 * 61 * 2 * 1024, rel=REL)


def test_offload_charges_the_link(engine):
    """Half the weights of Llama-3.1-8B in host memory: 7.5e9 bytes read per step over the
    host link (PCIe or C2C) at link efficiency 0.85 dominate the step."""
    base = engine.reference(Scenario("llama-3.1-8b", "h100-sxm"))
    half = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", offload=0.5))
    host = engine.catalog.accelerators["h100-sxm"].tier("far")
    link = host.effective_bandwidth_Bps * 0.85
    read = 15_009_849_344 * 0.5
    assert half.decode.memory_time_s - base.decode.memory_time_s == pytest.approx(
        read / link - read / (3.35e12 * 0.85), rel=1e-6
    )
    assert half.memory.weights_far_bytes == pytest.approx(0.5 * 16_060_522_496, rel=REL)


def test_kv_offload_charges_the_link(engine):
    """Half the KV cache of one Llama-3.1-8B sequence in host memory. A decode step reads
    150,994,944 B of KV and writes 131,072 B (test above): half of 151,126,016 B moves over
    the host link at link efficiency 0.85 instead of HBM at 0.85; the weights stay put."""
    base = engine.reference(Scenario("llama-3.1-8b", "h100-sxm"))
    half = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", kv_offload=0.5))
    host = engine.catalog.accelerators["h100-sxm"].tier("far")
    link = host.effective_bandwidth_Bps * 0.85
    moved = 0.5 * (150_994_944 + 131_072)
    assert half.decode.memory_time_s - base.decode.memory_time_s == pytest.approx(
        moved / link - moved / (3.35e12 * 0.85), rel=1e-6
    )
    assert half.decode.bytes_per_device == pytest.approx(base.decode.bytes_per_device, rel=REL)
    assert half.memory.kv_cache_bytes == pytest.approx(167_772_160, rel=REL)
    assert half.memory.kv_cache_far_bytes == pytest.approx(0.5 * 167_772_160, rel=REL)
    assert half.memory.weights_far_bytes == 0.0 and base.memory.kv_cache_far_bytes == 0.0


def test_kv_offload_counts_only_the_near_part_against_device_memory(engine):
    """As in test_llama_8b_memory_fit_on_h100, 59,044,245,504 B are left for sequences beyond
    a full chunk, each needing its KV (167,772,160 B at full context) and FP32 logits (513,024 B).
    Half the KV offloaded: 83,886,080 + 513,024 B on the device per sequence → 699 sequences;
    the host holds 0.9 · 250 GB = 225 GB, room for 2,682 halves, so the device sets the limit.
    All of it offloaded: 513,024 B per sequence on the device would allow 115,090, but the host
    holds only 225e9 / 167,772,160 = 1,341 sequences: the far tier sets the limit."""
    half = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", kv_offload=0.5))
    assert half.memory.max_batch == math.floor(59_044_245_504 / (83_886_080 + 513_024)) == 699
    assert half.memory.far_usable_bytes == pytest.approx(225e9, rel=REL)
    everything = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", kv_offload=1.0))
    assert everything.memory.max_batch == math.floor(225e9 / 167_772_160) == 1341
    assert everything.fits
    waves = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", batch=2000, kv_offload=1.0))
    assert waves.fits and waves.waves == 2 and waves.warning_bits & codes.WARN_KV_WAVES


def test_kv_offload_needs_a_far_tier_large_enough(engine):
    """One sequence of 2,000,000 tokens keeps 2e6 · 131,072 B = 262 GB of KV cache, more than
    the 225 GB usable of the H100's host share: the far tier is too small. A TPU v7 has no
    far tier at all."""
    long = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", input_len=2_000_000, output_len=1, kv_offload=1.0))
    assert not long.fits and long.fit_code == codes.FIT_FAR_TIER_TOO_SMALL
    nowhere = engine.reference(Scenario("llama-3.1-8b", "tpu-v7", kv_offload=0.5))
    assert not nowhere.fits and nowhere.fit_code == codes.FIT_OFFLOAD_WITHOUT_FAR_TIER
    assert nowhere.memory.kv_cache_far_bytes == 0.0


def test_pipeline_decode_sums_stages(engine):
    """PP=2 at batch 1: one micro-batch; each stage has 16 layers, the step passes both stages
    and one activation transfer of 4096·2 B (plus 5 µs to launch and synchronise it)."""
    one = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", pp=2))
    stage = (
        one.decode.execution_time_s
        + one.decode.communication_time_s
        + one.decode.overhead_time_s
    )
    assert one.decode.overhead_time_s == pytest.approx(16 * 30e-6, rel=REL)
    accelerator = engine.catalog.accelerators["h100-sxm"]
    hop = 8192 / (float(accelerator.interconnect.bandwidth_per_direction_Bps) * 0.8) + float(
        accelerator.interconnect.latency_s
    ) + 5e-6  # the transfer's launch and synchronisation
    # The host works once per step, not per stage.
    assert one.itl_s == pytest.approx(2 * stage + hop + 1.0e-3 + 25e-6, rel=REL)


def test_kv_waves_when_the_batch_does_not_fit(engine):
    """A batch above the largest that fits runs in waves of at most that size: 1000 sequences
    with room for 350 → 3 waves of 334, and the run takes 3 waves' time."""
    result = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", batch=1000))
    assert result.fits and result.memory.max_batch == 350
    assert result.waves == 3 and result.memory.resident_batch == 334
    assert result.warning_bits & codes.WARN_KV_WAVES
    wave = result.prefill.time_s + 255 * result.itl_s
    assert result.e2e_latency_s == pytest.approx(3 * wave, rel=REL)
    assert result.throughput_output_tok_s == pytest.approx(1000 * 256 / (3 * wave), rel=REL)


def test_throughput_and_energy_count_what_they_say(engine):
    """Output tokens/s = B·O / e2e; total counts B·(I + O); tokens/J counts input + output."""
    result = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", batch=8, dp=2))
    e2e = result.e2e_latency_s
    assert result.throughput_output_tok_s == pytest.approx(2 * 8 * 256 / e2e, rel=REL)
    assert result.throughput_total_tok_s == pytest.approx(2 * 8 * 1280 / e2e, rel=REL)
    assert result.tokens_per_joule == pytest.approx(2 * 8 * 1280 / result.energy_J, rel=REL)
    assert result.power_W == pytest.approx(result.energy_J / e2e, rel=REL)
    accelerator = engine.catalog.accelerators["h100-sxm"]
    assert float(accelerator.idle_W) * 2 <= result.power_W <= float(accelerator.tdp_W) * 2


def test_layout_problems_are_reported_not_raised(engine):
    dense_ep = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", ep=2))
    assert not dense_ep.fits and dense_ep.fit_code == codes.FIT_EP_ON_DENSE_MODEL
    ep_tp = engine.reference(Scenario("mixtral-8x7b", "mi300x", tp=2, ep=4))
    assert ep_tp.fit_code == codes.FIT_EP_NOT_DIVIDING_TP
    uneven = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", tp=3))
    assert uneven.fits and uneven.warning_bits & codes.WARN_TP_UNEVEN_HEADS
    for result in (dense_ep, ep_tp, uneven):
        assert math.isfinite(result.itl_s) and result.itl_s > 0


# ---- the small formulas ---------------------------------------------------------------


def test_expected_maximum_of_normals():
    """Blom's approximation against the exact expected maxima (tables of order statistics):
    n = 2: 0.5642 (1/√π), 4: 1.0294, 8: 1.4236, 16: 1.7660. Blom is 4.5% high at n = 2, 2% at
    n = 4 and under 1% from n = 8."""
    for n, exact, tolerance in ((2, 0.5642, 0.05), (4, 1.0294, 0.02), (8, 1.4236, 0.01), (16, 1.7660, 0.01)):
        assert expected_max_standard_normal(n) == pytest.approx(exact, rel=tolerance)
    assert expected_max_standard_normal(1) == 0.0


def test_routing_imbalance_and_touched_experts():
    assert token_imbalance(64, 1) == 1.0
    # 64 assignments over 4 devices: 1 + 1.0294·sqrt(3/64) ≈ 1.2229
    assert token_imbalance(64, 4) == pytest.approx(1 + expected_max_standard_normal(4) * math.sqrt(3 / 64))
    assert token_imbalance(1, 8) <= 8
    # ep = 1 is E·(1 − (1 − k/E)^B) (closed_forms.expert_touch_probability)
    q = 1 - (1 - 8 / 256) ** 16
    assert experts_touched_busiest_device(256, q, 1) == pytest.approx(256 * q)
    assert experts_touched_busiest_device(2, 0.5, 4) <= 2


def test_causal_and_chunked_positions():
    assert causal_positions(4, 0) == 10  # 1 + 2 + 3 + 4
    assert causal_positions(10, 4) == 10 + 6 * 4  # capped at the window after 4 tokens
    assert chunk_reread_positions(1000, 8192, 0) == 0
    # 3 chunks of 100: the 2nd reads 100 earlier positions, the 3rd 200.
    assert chunk_reread_positions(300, 100, 0) == 300
    assert chunk_reread_positions(300, 100, 150) == 100 + 150


def test_roofline_of_h100(engine, h100):
    """BF16 ceiling 989.4 TFLOP/s; HBM3 slope 3.35 TB/s meets it at 295.3 FLOP/byte; FP8 doubles
    the ceiling and the ridge; an A100 asked for FP8 has no FP8 units and stays on BF16."""
    from accelscope.engine.physics.roofline import roofline

    bf16 = roofline(h100, "bf16", "bf16", engine.constants)
    assert bf16.compute_precision == "bf16" and bf16.peak_flops == pytest.approx(989.4e12)
    assert bf16.ridge_point == pytest.approx(989.4e12 / 3.35e12)
    assert bf16.sustained_flops == pytest.approx(989.4e12 * 0.70)
    assert bf16.attainable(1.0) == pytest.approx(3.35e12)
    assert bf16.attainable(1e4) == pytest.approx(989.4e12)
    assert [s.level for s in bf16.slopes] == ["device", "far"]  # the L2's bandwidth is unpublished
    fp8 = roofline(h100, "fp8", "fp8", engine.constants)
    assert fp8.ridge_point == pytest.approx(2 * bf16.ridge_point, rel=1e-3)  # 1978.9 vs 2 x 989.4
    a100 = roofline(engine.catalog.accelerators["a100-80gb"], "fp8", "fp8", engine.constants)
    assert a100.compute_precision == "bf16"
    # The engine's ridge point is the roofline's.
    result = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", weight_precision="fp8", activation_precision="fp8"))
    assert result.ridge_point == pytest.approx(fp8.ridge_point, rel=REL)


def test_eight_bit_activations_add_their_quantisation_kernels_to_each_layer(engine):
    """Llama 3.1 8B, 32 layers. W8A8 (FP8 weights and activations): each layer pays the 30 us
    floor and 24 us of quantisation kernels, 32 x 54 us = 1.728 ms per pass, in prefill and
    decode alike. W8A16 (FP8 weights, BF16 activations, as on the A100) quantises nothing:
    32 x 30 us = 0.96 ms. The difference is all the ITL moves by, apart from the weights."""
    w8a8 = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", batch=16, weight_precision="fp8",
                                     activation_precision="fp8", kv_precision="bf16"))
    w8a16 = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", batch=16, weight_precision="fp8",
                                      activation_precision="bf16", kv_precision="bf16"))
    assert w8a8.decode.overhead_time_s == pytest.approx(32 * 54e-6, rel=REL)
    assert w8a8.prefill.overhead_time_s == pytest.approx(32 * 54e-6, rel=REL)
    assert w8a16.decode.overhead_time_s == pytest.approx(32 * 30e-6, rel=REL)
    # A compiled class (the TPU's systolic class) fuses the quantisation: no extra time.
    tpu = engine.reference(Scenario("llama-3.1-8b", "tpu-v7", batch=16, weight_precision="fp8",
                                    activation_precision="fp8", kv_precision="bf16"))
    systolic = engine.constants.for_class("systolic")
    assert tpu.decode.overhead_time_s == pytest.approx(32 * systolic.per_layer_overhead_s, rel=REL)


def test_a_switchless_mesh_limits_a_small_group_to_its_direct_links(engine):
    """MI300X: seven Infinity Fabric links of 64 GB/s per direction, one per pair of GPUs.
    Llama 3.1 8B at batch 1: each all-reduce is 4096 x 2 B = 8192 B, by recursive doubling.
      TP=2: one step over the one link:        8192 / (64e9 x 0.8) + 2 us
      TP=8: three steps, all seven links free: 3 x (8192 / (448e9 x 0.8) + 2 us)
    plus 5 us to launch and synchronise each; 64 all-reduces per step. A pipeline hand-over
    goes over one link whatever the group: 8192 / (64e9 x 0.8) + 2 us + 5 us."""
    pair = 8192 / (64e9 * 0.8) + 2e-6 + 5e-6
    tp2 = engine.reference(Scenario("llama-3.1-8b", "mi300x", batch=1, tp=2))
    assert tp2.decode.communication_time_s == pytest.approx(64 * pair, rel=REL)
    eight = 3 * (8192 / (448e9 * 0.8) + 2e-6) + 5e-6
    tp8 = engine.reference(Scenario("llama-3.1-8b", "mi300x", batch=1, tp=8))
    assert tp8.decode.communication_time_s == pytest.approx(64 * eight, rel=REL)
    # The H100's NVSwitch gives a pair the whole 450 GB/s.
    h100 = engine.reference(Scenario("llama-3.1-8b", "h100-sxm", batch=1, tp=2))
    assert h100.decode.communication_time_s == pytest.approx(64 * (8192 / (450e9 * 0.8) + 1e-6 + 5e-6), rel=REL)
    pp2 = engine.reference(Scenario("llama-3.1-8b", "mi300x", batch=1, tp=4, pp=2))
    hand_over = 8192 / (64e9 * 0.8) + 2e-6 + 5e-6
    stage = pp2.decode.execution_time_s + pp2.decode.communication_time_s + pp2.decode.overhead_time_s
    assert pp2.itl_s == pytest.approx(2 * stage + hand_over + pp2.decode.host_time_s, rel=REL)
