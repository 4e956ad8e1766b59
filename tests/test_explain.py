"""The explain panel: sentences that carry the engine's own numbers, formatted for people.

Engine tests need no Qt; the last test shows an explanation in the panel (offscreen).
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.units import format_bandwidth, format_bytes, format_flops, format_time, significant
from accelscope.engine.physics.reference import all_reduce
from accelscope.engine.text.explain import decode_crossover_batch, explain, linear_layers_crossover_batch

LLAMA_8B_H100 = Scenario("llama-3.1-8b", "h100-sxm", batch=1)
# A short context keeps each sequence's KV cache small, so batching can turn decode
# compute-bound before memory runs out (at 1,024 in / 256 out it never does, see below).
LLAMA_8B_H100_SHORT = Scenario("llama-3.1-8b", "h100-sxm", batch=1, input_len=128, output_len=32)


def only(sentences: tuple[str, ...], *needles: str) -> str:
    """The one sentence that contains every needle."""
    found = [s for s in sentences if all(n in s for n in needles)]
    assert len(found) == 1, (needles, sentences)
    return found[0]


_SECONDS = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
_TIME = r"([\d,.]+) (ns|µs|ms|s|min|h)\b"


def seconds(text: str) -> float:
    """'5.33 ms' → 0.00533."""
    number, unit = re.fullmatch(_TIME, text.strip()).groups()
    return float(number.replace(",", "")) * _SECONDS[unit]


def stated_sum(sentence: str) -> tuple[list[float], float]:
    """The terms and the total of the sentence's closing 'a + b + c = total.', in seconds; a term
    'n × t' counts n times."""
    left, total = sentence.rstrip(".").rsplit(" = ", 1)
    left = left.rsplit(" takes ", 1)[-1].rsplit(" is ", 1)[-1]
    terms = []
    for term in left.split(" + "):
        count, _, time = term.rpartition(" × ")
        terms.append((float(count.replace(",", "")) if count else 1.0) * seconds(time))
    return terms, seconds(total)


def assert_adds_up(sentence: str, engine_total: float) -> list[float]:
    """The stated terms add up to the stated total, which is the engine's (each to the three
    significant figures shown)."""
    terms, total = stated_sum(sentence)
    assert total == pytest.approx(engine_total, rel=5e-3), sentence
    assert sum(terms) == pytest.approx(engine_total, rel=1e-2), sentence
    return terms


# ---- formatting ----------------------------------------------------------------------------


def test_numbers_are_formatted_to_three_significant_figures():
    assert significant(5.3253) == "5.33"
    assert significant(0.022543) == "0.0225"
    assert significant(9.996) == "10.0"
    assert significant(989.4) == "989"
    assert significant(1978.9) == "1,979"
    assert format_bytes(15.0098e9) == "15.0 GB"
    assert format_bytes(151.1e6) == "151 MB"
    assert format_bytes(999.7e6) == "1.00 GB"
    assert format_bandwidth(3.35e12) == "3.35 TB/s"
    assert format_bandwidth(5.3e12, trim=True) == "5.3 TB/s"
    assert format_flops(15.61e9) == "15.6 GFLOP"
    assert format_time(5.3253e-3) == "5.33 ms"
    assert format_time(22.54e-6) == "22.5 µs"
    assert format_time(10e-6, trim=True) == "10 µs"
    assert format_time(334.0) == "5.57 min"


# ---- decode ----------------------------------------------------------------------------------


def test_decode_sentence_plugs_the_engine_numbers_into_the_formula(engine):
    result = engine.predict(LLAMA_8B_H100)
    decode = explain(engine, LLAMA_8B_H100).section("Decode")
    sentence = only(decode, "— memory-bound")
    assert format_bytes(result.decode.weight_bytes_per_device) == "15.0 GB"
    assert "reads 15.0 GB of weights" in sentence
    assert f"{format_bytes(result.decode.kv_bytes_per_device)} of KV cache" in sentence
    assert format_time(result.decode.memory_time_s) == "5.33 ms"
    assert "at 3.35 TB/s × 0.85 that takes 5.33 ms" in sentence
    assert (
        f"its {format_flops(result.decode.flops_per_device)} would take "
        f"{format_time(result.decode.compute_time_s)} at 989 TFLOP/s × 0.7" in sentence
    )
    # Per-layer overhead, host time and the ITL the engine computed, adding up.
    itl = only(decode, "ITL")
    assert "32 layers × 30 µs = 960 µs" in itl
    assert itl.endswith(f"= {format_time(result.itl_s)}.")
    assert format_time(result.itl_s) == "7.31 ms"
    execution, overhead, host = assert_adds_up(itl, result.itl_s)
    assert (execution, overhead, host) == pytest.approx(
        (result.decode.execution_time_s, result.decode.overhead_time_s, result.decode.host_time_s), rel=5e-3
    )


def test_gpu_decode_states_the_host_time_and_its_numbers_sum_to_the_itl(engine):
    """One step of 8 sequences on an H100: the serving stack's 1 ms + 8 × 25 µs = 1.20 ms of
    host time joins the stage pass in the ITL."""
    scenario = LLAMA_8B_H100.with_changes(batch=8)
    result = engine.predict(scenario)
    assert result.decode.host_time_s == pytest.approx(1.0e-3 + 8 * 25e-6, rel=1e-12)
    decode = explain(engine, scenario).section("Decode")
    only(decode, "host work (scheduling, input preparation, sampling, output processing) adds "
         "1 ms + 8 × 25 µs = 1.20 ms per step", "the devices wait")
    itl = only(decode, "(ITL) — takes")
    assert "1.20 ms of host time" in itl
    terms = assert_adds_up(itl, result.itl_s)
    assert terms[-1] == pytest.approx(result.decode.host_time_s, rel=5e-3)
    # Without the host time the stated terms would fall short of the engine's ITL.
    assert sum(terms[:-1]) < 0.9 * result.itl_s


def test_gpu_operators_take_their_own_rooflines_and_add(engine):
    """gpu-simt runs kernels one after another: the linear layers' roofline (weights) plus
    attention's (KV cache) is the execution time the ITL is made of."""
    result = engine.predict(LLAMA_8B_H100)
    decode = result.decode
    sentence = only(explain(engine, LLAMA_8B_H100).section("Decode"), "one after another")
    linear = max(decode.compute_time_s - decode.attention_compute_time_s,
                 decode.memory_time_s - decode.attention_memory_time_s)
    attention = max(decode.attention_compute_time_s, decode.attention_memory_time_s)
    assert linear + attention == pytest.approx(decode.execution_time_s, rel=1e-12)
    assert sentence.endswith(
        f"{format_time(linear)} + {format_time(attention)} = {format_time(decode.execution_time_s)} per step."
    )
    assert f"{format_time(decode.attention_memory_time_s)} of KV-cache reads" in sentence
    # A wafer overlaps its operators: the roofline of the whole pass.
    wafer = engine.predict(Scenario("llama-3.1-8b", "wse-3"))
    sentence = only(explain(engine, Scenario("llama-3.1-8b", "wse-3")).section("Decode"), "roofline of the whole")
    assert sentence.endswith(f"= {format_time(wafer.decode.execution_time_s)} per step.")


def test_kv_cache_keeps_8b_decode_memory_bound_at_the_default_context(engine):
    """At 1,024 in / 256 out each sequence reads 151 MB of KV cache per step, which costs more
    memory time than its FLOPs cost compute time: no batch makes decode compute-bound."""
    assert decode_crossover_batch(engine, LLAMA_8B_H100) is None
    result = engine.predict(LLAMA_8B_H100)
    largest = engine.predict(LLAMA_8B_H100.with_changes(batch=result.memory.max_batch))
    assert largest.decode.compute_time_s < largest.decode.memory_time_s
    sentence = only(explain(engine, LLAMA_8B_H100).section("Decode"), "does not make decode compute-bound")
    assert "its own KV cache" in sentence
    assert f"caps the batch at {result.memory.max_batch:,}" in sentence


def test_crossover_batch_is_where_compute_first_reaches_memory(engine):
    n = decode_crossover_batch(engine, LLAMA_8B_H100_SHORT)
    assert n is not None and 100 <= n <= 600
    at = engine.predict(LLAMA_8B_H100_SHORT.with_changes(batch=n))
    below = engine.predict(LLAMA_8B_H100_SHORT.with_changes(batch=n - 1))
    assert at.decode.compute_time_s >= at.decode.memory_time_s
    assert below.decode.compute_time_s < below.decode.memory_time_s
    assert n <= at.memory.max_batch  # computed without waves
    sentence = only(explain(engine, LLAMA_8B_H100_SHORT).section("Decode"), "Summed over the pass")
    assert f"reaches memory time at batch ≈ {n:,}" in sentence


def test_weight_reads_are_amortised_until_the_linear_layers_turn_compute_bound(engine):
    """On a GPU the linear layers take their own roofline: their compute reaches their weight
    reads at a smaller batch than the whole pass's compute reaches all of its memory time."""

    def linear(result):
        d = result.decode
        return d.compute_time_s - d.attention_compute_time_s, d.memory_time_s - d.attention_memory_time_s

    n = linear_layers_crossover_batch(engine, LLAMA_8B_H100_SHORT)
    assert n is not None and n < decode_crossover_batch(engine, LLAMA_8B_H100_SHORT)
    compute, reads = linear(engine.predict(LLAMA_8B_H100_SHORT.with_changes(batch=n)))
    assert compute >= reads
    compute, reads = linear(engine.predict(LLAMA_8B_H100_SHORT.with_changes(batch=n - 1)))
    assert compute < reads
    sentence = only(explain(engine, LLAMA_8B_H100_SHORT).section("Decode"), "Batching amortises")
    assert f"until batch ≈ {n:,}, where the linear layers' compute time" in sentence
    # Overlapped operators have no such sentence: the whole pass's roofline is all there is.
    wafer = explain(engine, Scenario("llama-3.1-8b", "wse-3")).section("Decode")
    assert not any("linear layers' compute time" in line for line in wafer)


def test_compute_bound_decode_past_the_crossover(engine):
    # An A100 computes slowly enough for 512 sequences' FLOPs to outlast their host time.
    scenario = Scenario("llama-3.1-8b", "a100-80gb", batch=512, input_len=128, output_len=32)
    result = engine.predict(scenario)
    assert result.decode.bound == "compute"
    decode = explain(engine, scenario).section("Decode")
    only(decode, "compute-bound", format_time(result.decode.compute_time_s))
    only(decode, "turned compute-bound at batch ≈")
    only(decode, "linear layers' compute time overtook")


def test_overhead_bound_decode_on_a_wafer(engine):
    scenario = Scenario("llama-3.1-8b", "wse-3")
    result = engine.predict(scenario)
    assert result.decode.bound == "overhead"
    sentence = only(explain(engine, scenario).section("Decode"), "overhead-bound")
    assert "21 PB/s × 0.5" in sentence


# ---- prefill ---------------------------------------------------------------------------------


def test_prefill_is_compute_bound_with_its_chunks_and_ttft(engine):
    result = engine.predict(LLAMA_8B_H100)
    prefill = explain(engine, LLAMA_8B_H100).section("Prefill")
    sentence = only(prefill, "compute-bound")
    assert f"{format_time(result.prefill.compute_time_s)} at 989 TFLOP/s × 0.7" in sentence
    assert f"that takes {format_time(result.prefill.memory_time_s)}" in sentence
    only(prefill, "one chunk of 1,024 tokens")
    ttft = only(prefill, "TTFT")
    assert ttft.endswith(f"= {format_time(result.ttft_s)}.")
    assert_adds_up(ttft, result.ttft_s)
    only(prefill, "host work", f"1 ms + 1 × 25 µs = {format_time(result.prefill.host_time_s)} to the prefill")


def test_chunked_prefill_multiplies_the_chunk_time(engine):
    scenario = Scenario("qwen3-32b", "mi300x", batch=64, tp=2)
    result = engine.predict(scenario)
    prefill = explain(engine, scenario).section("Prefill")
    only(prefill, "8 chunks of 8,192 tokens")
    ttft = only(prefill, "TTFT")
    assert ttft.endswith(f"= {format_time(result.prefill.time_s)}.")
    # 8 × (one chunk's pass) + the host's 8 × 1 ms + 64 × 25 µs.
    assert f"+ {format_time(result.prefill.host_time_s)} = " in ttft
    chunks = 8 * (result.prefill.execution_time_s + result.prefill.communication_time_s
                  + result.prefill.overhead_time_s)
    assert chunks + result.prefill.host_time_s == pytest.approx(result.prefill.time_s, rel=1e-12)
    only(prefill, "host work", "8 × 1 ms + 64 × 25 µs = 9.60 ms")
    # The MI300X's serving stack factor is part of every rate.
    only(prefill, "5.3 TB/s × 0.85 × 0.8", "1,307 TFLOP/s × 0.7 × 0.8")


# ---- memory ----------------------------------------------------------------------------------


def test_fitting_memory_lists_the_parts_and_the_largest_batch(engine):
    result = engine.predict(LLAMA_8B_H100)
    memory = explain(engine, LLAMA_8B_H100).section("Memory")
    sentence = only(memory, "Fits")
    for size in (result.memory.weights_bytes, result.memory.kv_cache_bytes, result.memory.usable_bytes):
        assert format_bytes(size) in sentence
    only(memory, f"largest batch that fits is {result.memory.max_batch:,}")


# DeepSeek-V3.2 and Gemma 4 31B at 128k: a decoding token at the mean context of 131,072 tokens.
V32_128K = Scenario("deepseek-v3.2", "h200", batch=1, input_len=130_560, output_len=1024, tp=8,
                    weight_precision="fp8")
GEMMA_31B_128K = Scenario("gemma-4-31b", "h200", batch=1, input_len=130_560, output_len=1024)


def groups_of(engine, scenario):
    from accelscope.engine.physics.reference import ReferenceModel

    scenario = engine.resolve(scenario)
    model = engine.model(scenario.model)
    _, trace = ReferenceModel(model, engine.catalog.accelerator(scenario.accelerator), engine.constants
                              ).evaluate_traced(scenario)
    return trace.attention_groups


def test_sparse_layers_name_their_top_k_and_the_indexers_keys(engine):
    """DeepSeek-V3.2 at 128k: the 61 sparse layers keep MLA's latent and an indexer key for every
    token, and a decoding token reads the top 2,048 latents of 131,072 plus every key (61 ×
    131,072 × 132 B = 1.06 GB, tests/test_attention_kinds.py works it by hand)."""
    explanation = explain(engine, V32_128K)
    (sparse,) = groups_of(engine, V32_128K)
    assert (sparse.kind, sparse.layers, sparse.top_k, sparse.attended_entries) == ("sparse", 61, 2048, 2048)
    assert sparse.index_read_bytes == 61 * 131_072 * 132
    kept = only(explanation.section("Memory"), "61 sparse layers", "indexer")
    assert "top 2,048 tokens" in kept and "131,584 entries of 1.15 kB" in kept
    assert format_bytes(sparse.kv_sequence_bytes) in kept and format_bytes(sparse.index_sequence_bytes) in kept
    read = only(explanation.section("Decode"), "the 61 sparse layers read 2,048 of 131,072 cached entries each step")
    assert f"plus the indexer's {format_bytes(61 * 131_072 * 132)} of keys" in read
    assert format_bytes(sparse.entry_read_bytes) in read
    assert format_flops(sparse.index_flops) in read and format_flops(sparse.decode_flops) in read


def test_global_layers_name_their_heads_beside_the_sliding_window(engine):
    """Gemma 4 31B at 128k: 10 global layers of 4 K = V heads of 512 keep and read the whole
    context (4 × 512 × 2 B = 4.10 kB a token); the 50 sliding-window layers keep 1,024 tokens."""
    explanation = explain(engine, GEMMA_31B_128K)
    (glob,) = groups_of(engine, GEMMA_31B_128K)
    assert (glob.kind, glob.layers, glob.entry_bytes) == ("global", 10, 4 * 512 * 2)
    kept = only(explanation.section("Memory"), "10 global layers")
    assert "4 KV heads of 512, K = V" in kept and "50 sliding-window layers" in kept and "1,024 tokens" in kept
    assert f"131,584 entries of {format_bytes(4096)}" in kept and format_bytes(glob.kv_sequence_bytes) in kept
    assert format_bytes(glob.kv_sequence_bytes) == format_bytes(10 * 131_584 * 4096)
    read = only(explanation.section("Decode"), "the 10 global layers read all 131,072 cached entries each step")
    assert format_bytes(glob.entry_read_bytes) in read and format_flops(glob.decode_flops) in read
    assert format_flops(glob.decode_flops) == format_flops(10 * 4 * 32 * 512 * 131_072)


def test_models_without_attention_groups_say_nothing_of_them(engine):
    explanation = explain(engine, LLAMA_8B_H100)
    assert not [s for _, section in explanation.sections for s in section if "indexer" in s or "global layers" in s]


def test_weights_that_do_not_fit_say_what_would(engine):
    scenario = Scenario("llama-3.3-70b", "h100-sxm")
    result = engine.predict(scenario)
    assert not result.fits and result.tp_needed == 2
    memory = explain(engine, scenario).section("Memory")
    only(memory, "Does not fit", "the weights need 141 GB", "77.3 GB usable")
    only(memory, "TP=2 (2 devices)", "offloading 47% of the weights")
    only(memory, "hypothetical")
    # With the crossovers too: the sweep of a scenario that does not fit runs without waves.
    decode = explain(engine, scenario).section("Decode")
    only(decode, "hypothetical", "Summed over the pass")
    only(decode, "hypothetical", "linear layers' compute time")


def test_kv_waves_are_explained(engine):
    scenario = LLAMA_8B_H100.with_changes(batch=1000)
    result = engine.predict(scenario)
    assert result.waves == 3
    memory = explain(engine, scenario).section("Memory")
    only(memory, "3 waves", f"largest batch that fits is {result.memory.max_batch:,}")


def test_offloaded_weights_are_read_over_the_host_link(engine):
    scenario = Scenario("llama-3.3-70b", "h100-sxm", offload=0.5)
    result = engine.predict(scenario)
    decode = explain(engine, scenario).section("Decode")
    sentence = only(decode, "Host DDR5 over PCIe Gen5 x16", "64 GB/s × 0.85")
    assert f"{format_time(result.decode.memory_time_s)} of memory time" in sentence
    assert f"{format_bytes(result.decode.weight_bytes_per_device * 0.5)} of the weights" in sentence


# ---- parallelism and MoE ---------------------------------------------------------------------


def test_tensor_parallelism_names_the_all_reduce_time(engine):
    scenario = Scenario("qwen3-32b", "mi300x", batch=64, tp=2)
    result = engine.predict(scenario)
    assert result.decode.communication_time_s > 0
    decode = explain(engine, scenario).section("Decode")
    only(decode, "all-reduce", f"{format_time(result.decode.communication_time_s)} of communication per step")
    only(explain(engine, scenario).section("Memory"), "its 1/2 share")


NVLINK_4 = (450e9 * 0.8, 1e-6)  # H100 SXM: B/s per direction × the gpu-simt interconnect efficiency, latency


def test_the_all_reduce_names_the_algorithm_the_engine_chose(engine):
    """One token's 8 kB all-reduce over two H100s is one exchange (recursive doubling); three
    devices are no power of two, so only the ring is possible. The time each takes is the one
    the engine charges, the algorithm's steps and 5 µs to launch and synchronise the collective:
    32 layers × 2 all-reduces make the step's communication."""
    message = 4096 * 2  # one token × hidden size × BF16
    for tp, algorithm, phrase in ((2, "recursive doubling", "by recursive doubling in log₂ 2 = 1 step"),
                                  (3, "ring", "as a ring in 2 × (3 − 1) = 4 steps")):
        scenario = LLAMA_8B_H100.with_changes(tp=tp)
        result = engine.predict(scenario)
        steps, _, chosen = all_reduce(message, tp, *NVLINK_4)
        each = steps + 5e-6
        assert chosen == algorithm
        assert 32 * 2 * each == pytest.approx(result.decode.communication_time_s, rel=1e-12)
        sentence = only(explain(engine, scenario).section("Decode"), "all-reduces the activations")
        assert phrase in sentence and f"taking {format_time(each)} each" in sentence
        assert "5 µs to launch and synchronise it" in sentence
        assert f"{format_time(result.decode.communication_time_s)} of communication per step" in sentence
        other = "as a ring" if tp == 2 else "recursive doubling in"
        assert other not in sentence


def test_moe_names_its_experts(engine):
    scenario = Scenario(
        "deepseek-r1", "h200", batch=16, tp=8, weight_precision="fp8", activation_precision="fp8"
    )
    explanation = explain(engine, scenario)
    decode = explanation.section("Decode")
    only(decode, "mixture of experts", "8 of 256 routed experts")
    only(decode, "distinct experts per MoE layer")
    only(explanation.section("Memory"), "latent")
    only(explanation.section("Prefill"), "1,979 TFLOP/s × 0.7")  # FP8 units


def test_expert_parallelism_names_the_all_to_alls(engine):
    scenario = Scenario("mixtral-8x7b", "h100-sxm", batch=32, tp=2, ep=2)
    decode = explain(engine, scenario).section("Decode")
    only(decode, "all-to-alls", "all-reduces")
    only(decode, "with EP 2 each device holds 4")


def test_pipeline_stages_and_micro_batches(engine):
    scenario = Scenario("llama-3.3-70b", "h100-sxm", batch=8, tp=2, pp=2)
    result = engine.predict(scenario)
    decode = explain(engine, scenario).section("Decode")
    only(decode, "2 micro-batches of 4 sequences")
    itl = only(decode, "40 layers per stage × 30 µs", f"= {format_time(result.itl_s)}.")
    # 2 stage passes, 1 transfer between the stages, and the host's time of the step.
    _passes, _transfer, host = assert_adds_up(itl, result.itl_s)
    assert host == pytest.approx(result.decode.host_time_s, rel=5e-3)
    prefill = explain(engine, scenario).section("Prefill")
    assert_adds_up(only(prefill, "passes in a row"), result.prefill.time_s)


# ---- throughput and energy -------------------------------------------------------------------


def test_power_scope_is_named(engine):
    wafer = explain(engine, Scenario("llama-3.1-8b", "wse-3")).section("Throughput and energy")
    only(wafer, "system-level")
    gpu = explain(engine, LLAMA_8B_H100).section("Throughput and energy")
    only(gpu, "device-level")
    result = engine.predict(LLAMA_8B_H100)
    only(gpu, f"{significant(result.tokens_per_joule)} input+output tokens per joule")
    only(gpu, f"{significant(result.throughput_output_tok_s)} output tokens/s")


def test_power_names_the_busy_floor_where_it_binds(engine):
    """One Llama 3.1 8B stream on an H100 reads weights, nearly idle arithmetic: its decode draws
    the gpu-simt floor, 0.79 · 700 W = 553 W; a CS-3 (no floor in its class) mentions none."""
    one_stream = Scenario("llama-3.1-8b", "h100-sxm", batch=1)
    assert engine.predict(one_stream).decode.power_per_device_W == pytest.approx(553.0)
    gpu = explain(engine, one_stream).section("Throughput and energy")
    only(gpu, "decode 553 W (the busy floor)")
    only(gpu, "busy floor 553 W: a gpu-simt device executing draws at least 0.79 of its TDP")
    wafer = explain(engine, Scenario("llama-3.1-8b", "wse-3")).section("Throughput and energy")
    assert not any("busy floor" in line for line in wafer)


def test_warnings_section_carries_the_engine_warnings(engine):
    scenario = Scenario("llama-3.3-70b", "h100-sxm")
    warnings = explain(engine, scenario).section("Warnings")
    assert any("starved" in w for w in warnings)
    assert explain(engine, LLAMA_8B_H100).section("Warnings") == ()


@pytest.mark.parametrize("accelerator", ["sn40l", "gc200", "groq-lpu", "tpu-v7", "mtia-v2", "gaudi3"])
def test_every_class_of_machine_is_explained(engine, accelerator):
    text = explain(engine, Scenario("llama-3.1-8b", accelerator, batch=4)).plain_text()
    for heading in ("Memory", "Prefill", "Decode", "Throughput and energy"):
        assert f"\n{heading}\n" in text
    assert "nan" not in text and "inf" not in text


def test_explain_module_imports_no_qt():
    code = (
        "import sys, accelscope.engine.text.explain; "
        "print(any(m.startswith(('PySide6', 'pyqtgraph')) for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# ---- the panel -------------------------------------------------------------------------------


def test_panel_shows_the_explanation(qtbot, engine):
    from accelscope.gui.panels.explain import ExplainPanel

    panel = ExplainPanel()
    qtbot.addWidget(panel)
    assert panel.text() == ""
    explanation = explain(engine, LLAMA_8B_H100)
    panel.show_explanation(explanation)
    text = panel.text()
    assert explanation.title in text
    for heading, sentences in explanation.sections:
        assert heading in text
        for sentence in sentences:
            assert sentence in text
    assert "at 3.35 TB/s × 0.85 that takes 5.33 ms" in text
    assert panel.browser.font().pointSize() >= 11
    assert panel.browser.isReadOnly()


def test_the_explain_panel_keeps_the_readers_place(qtbot, engine):
    """Updating the text (a slider moved) must not scroll the reader back to the top."""
    from accelscope.engine.core.scenario import Scenario
    from accelscope.engine.text.explain import explain
    from accelscope.gui.panels.explain import ExplainPanel

    panel = ExplainPanel()
    qtbot.addWidget(panel)
    panel.resize(360, 300)  # short: the text needs scrolling
    panel.show()
    qtbot.waitExposed(panel)
    panel.show_explanation(explain(engine, Scenario("llama-3.1-8b", "h100-sxm", batch=1)))
    scroll_bar = panel.browser.verticalScrollBar()
    assert scroll_bar.maximum() > 0
    scroll_bar.setValue(scroll_bar.maximum() // 2)
    middle = scroll_bar.value()
    panel.show_explanation(explain(engine, Scenario("llama-3.1-8b", "h100-sxm", batch=2)))
    assert scroll_bar.value() == middle


def test_an_update_in_place_shows_what_a_fresh_panel_shows(qtbot, engine):
    from PySide6.QtGui import QTextCursor

    from accelscope.engine.core.scenario import Scenario
    from accelscope.gui.panels.explain import ExplainPanel

    def shown(panel):
        out, block = [], panel.browser.document().begin()
        while block.isValid():
            cursor = QTextCursor(block)
            cursor.movePosition(QTextCursor.MoveOperation.NextCharacter)
            out.append((block.text(), cursor.charFormat().fontWeight(), cursor.charFormat().font().pointSize()))
            block = block.next()
        return out

    live = ExplainPanel()
    qtbot.addWidget(live)
    live.show_explanation(explain(engine, Scenario("llama-3.1-8b", "h100-sxm", batch=1000)))
    later = explain(engine, Scenario("llama-3.1-8b", "h100-sxm", batch=300))
    live.show_explanation(later)
    assert live._blocks is not None  # rewritten in place
    fresh = ExplainPanel()
    qtbot.addWidget(fresh)
    fresh.show_explanation(later)
    assert live.text() == fresh.text() and shown(live) == shown(fresh)
