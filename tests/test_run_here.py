"""Will it run here? Every model on one device: its fit and largest batch worked by hand from the
catalog and the constants, its decode rate the reference model's, what runs the ones that do not
fit, the order of the rows, the CSV, and the workspace study's declared inputs."""

from __future__ import annotations

import math

import pytest

from accelscope.engine.core.precision import bytes_per_element
from accelscope.engine.core.scenario import Scenario, Workload
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.studies.analysis import ANALYSIS_STUDIES, RUN_HERE_DEPENDS_ON, run_here_device
from accelscope.engine.studies.run_here import VERDICTS, lower_precisions, run_here, run_here_table

WORKLOAD = Workload(input_len=1024, output_len=256)  # BF16 weights, activations and KV cache


@pytest.fixture(scope="module")
def rtx_4090(engine):
    return run_here(engine, "rtx-4090", WORKLOAD)


def test_llama_8b_fits_an_rtx_4090_in_bf16_with_the_largest_batch_worked_by_hand(engine, rtx_4090):
    """Llama 3.1 8B on a 24 GiB RTX 4090, BF16, 1,024 + 256 tokens.

    Weights: 8,030,261,248 parameters x 2 B = 16.06 GB (embeddings and head stay 16-bit anyway).
    Usable: 25,769,803,776 B x 0.9 = 23.19 GB; less 1.5 GB of runtime: 5.63 GB for the KV cache
    and the prefill workspace. One sequence: 32 layers x 8 KV heads x 128 x 2 (K and V) x 2 B =
    131,072 B per token, x 1,280 tokens = 167.8 MB, plus 128,256 x 4 B of logits = 168.3 MB.
    The batch's prompts (8 x 1,024 tokens and more) fill the 8,192-token prefill chunk, so the
    workspace is one chunk: 8,192 tokens x 2 B x (2 x 4,096 + 6,144 + 2 x 14,336) = 704.6 MB.
    (5,632.3 MB - 704.6 MB) / 168.3 MB = 29.3, so 29 sequences."""
    row = rtx_4090.row("llama-3.1-8b")
    model = engine.model("llama-3.1-8b")
    device = engine.catalog.accelerator("rtx-4090").tier("device")
    gpu = engine.constants.for_class("gpu-simt")
    weights = model.total_params * 2.0
    usable = float(device.capacity_bytes) * gpu.usable_memory_fraction
    kv_per_sequence = model.kv_elements_per_token_per_layer * 2.0 * model.n_layers * (1024 + 256)
    logits = model.vocab_size * engine.constants.logits_bytes_per_element
    activation_per_token = 2.0 * (2 * model.hidden_size + model.attention_activation_width
                                  + 2 * model.mean_ffn_width_per_token)
    chunk = engine.constants.prefill_chunk_tokens
    by_hand = math.floor((usable - weights - gpu.runtime_overhead_bytes - chunk * activation_per_token)
                         / (kv_per_sequence + logits))

    assert row.fits and row.verdict == "fits" and row.fit_reason == ""
    assert row.weights_bytes == pytest.approx(weights, rel=1e-12)
    assert row.usable_bytes == pytest.approx(usable, rel=1e-12) == rtx_4090.usable_bytes
    assert row.kv_cache_bytes == pytest.approx(model.kv_elements_per_token_per_layer * 2.0 * model.n_layers * 1280)
    assert row.max_batch == by_hand == 29
    assert row.lower_precision is None and row.more_devices is None and row.option is None


def test_the_decode_rate_is_the_reference_models_at_batch_1(engine, rtx_4090):
    """1 / ITL of the reference model; below the bound of reading every weight once per token
    at the card's 1.008 TB/s (63 tokens/s)."""
    row = rtx_4090.row("llama-3.1-8b")
    reference = engine.reference(Scenario("llama-3.1-8b", "rtx-4090", input_len=1024, output_len=256))
    assert row.decode_tok_s == pytest.approx(1.0 / reference.itl_s, rel=1e-9)
    bandwidth = float(engine.catalog.accelerator("rtx-4090").tier("device").bandwidth_Bps)
    assert row.decode_tok_s < bandwidth / row.weights_bytes


def test_a_model_too_big_in_bf16_runs_here_in_fp8(engine, rtx_4090):
    """Qwen3 14B: 14.8 B parameters x 2 B = 29.5 GB > 23.2 GB usable. At 8 bits (FP8: the card
    has FP8 units) its linear layers halve: 16.3 GB, which fits; it also fits two cards in BF16."""
    row = rtx_4090.row("qwen3-14b")
    assert not row.fits and row.verdict == "lower_precision"
    assert row.fit_reason == "the weights do not fit in device memory"
    assert row.weights_bytes > row.usable_bytes
    option = row.option
    assert (option.weight_precision, option.kv_precision, option.devices) == ("fp8", "bf16", 1)
    assert option.label(rtx_4090.workload) == "FP8 weights"
    fp8 = engine.reference(Scenario("qwen3-14b", "rtx-4090", input_len=1024, output_len=256, weight_precision="fp8"))
    assert fp8.fits and option.fits
    assert option.max_batch == fp8.memory.max_batch == row.runs_max_batch
    assert option.decode_tok_s == pytest.approx(1.0 / fp8.itl_s, rel=1e-9) == pytest.approx(row.decode_tok_s)
    assert row.more_devices.devices == 2 and row.more_devices.fits


def test_a_model_too_big_at_any_precision_needs_the_devices_the_engine_says(engine, rtx_4090):
    """Llama 3.3 70B: 141 GB in BF16, 35 GB even at 4 bits: it needs tensor parallelism over
    8 cards (the engine's tp_needed), where its batch-1 rate is that layout's."""
    row = rtx_4090.row("llama-3.3-70b")
    assert row.verdict == "more_devices" and row.lower_precision is None
    one_card = engine.predict(Scenario("llama-3.3-70b", "rtx-4090", input_len=1024, output_len=256))
    assert row.more_devices.devices == one_card.tp_needed == 8
    eight = engine.reference(Scenario("llama-3.3-70b", "rtx-4090", input_len=1024, output_len=256, tp=8))
    assert eight.fits and row.option.max_batch == eight.memory.max_batch
    assert row.decode_tok_s == pytest.approx(1.0 / eight.itl_s, rel=1e-9)
    assert row.option.label(rtx_4090.workload) == "TP 8 (8 devices)"


def test_rows_are_sorted_fits_first_then_fastest(rtx_4090):
    verdicts = [VERDICTS.index(row.verdict) for row in rtx_4090.rows]
    assert verdicts == sorted(verdicts)
    for verdict in VERDICTS:
        rates = [row.decode_tok_s for row in rtx_4090.rows if row.verdict == verdict]
        assert rates == sorted(rates, reverse=True), verdict
    assert rtx_4090.rows[0].model == "llama-3.2-3b"  # the smallest model is the fastest that fits
    assert {"fits", "lower_precision", "more_devices"} <= {row.verdict for row in rtx_4090.rows}


def test_every_model_the_engine_knows_is_a_row(engine, rtx_4090):
    assert sorted(row.model for row in rtx_4090.rows) == sorted(engine.model_index)
    assert rtx_4090.accelerator_name == "NVIDIA GeForce RTX 4090" and rtx_4090.context == 1280
    assert rtx_4090.workload.batch == 1


def test_lower_precisions_go_from_the_least_narrowing_and_use_the_devices_formats(engine):
    rtx_4090 = engine.catalog.accelerator("rtx-4090")  # FP8 units, no FP4
    rtx_5090 = engine.catalog.accelerator("rtx-5090")  # Blackwell: FP4 units too
    a100 = engine.catalog.accelerator("a100-80gb")  # no FP8 units: INT8
    assert lower_precisions(WORKLOAD, rtx_4090) == (("fp8", "bf16"), ("fp8", "fp8"), ("int4", "bf16"), ("int4", "fp8"))
    assert lower_precisions(WORKLOAD, rtx_5090)[2] == ("fp4", "bf16")
    assert lower_precisions(WORKLOAD, a100)[:2] == (("int8", "bf16"), ("int8", "int8"))
    fp8_weights = Workload(weight_precision="fp8")
    assert lower_precisions(fp8_weights, rtx_4090) == (("fp8", "fp8"), ("int4", "bf16"), ("int4", "fp8"))
    assert lower_precisions(Workload(weight_precision="int4", kv_precision="fp8"), rtx_4090) == ()
    for weights, kv in lower_precisions(WORKLOAD, rtx_4090):
        assert bytes_per_element(weights) <= 1 and bytes_per_element(kv) <= 2


def test_a_device_nothing_fits_on_alone(engine):
    """A Groq chip holds 230 MB of SRAM: no model fits one, at any precision; each needs the
    chips the engine names."""
    study = run_here(engine, "groq-lpu", WORKLOAD, model_ids=["llama-3.1-8b", "llama-3.2-3b"])
    assert [row.verdict for row in study.rows] == ["more_devices", "more_devices"]
    for row in study.rows:
        alone = engine.predict(Scenario(row.model, "groq-lpu", input_len=1024, output_len=256))
        assert row.more_devices.devices == alone.tp_needed >= 64


def test_the_table_is_one_row_per_model_with_the_studys_numbers(rtx_4090):
    table = run_here_table(rtx_4090)
    assert table.view == "run_here" and len(table.rows) == len(rtx_4090.rows)
    column = {name: index for index, name in enumerate(table.headers)}
    by_id = {row[column["model_id"]]: row for row in table.rows}
    llama = by_id["llama-3.1-8b"]
    assert llama[column["device"]] == "NVIDIA GeForce RTX 4090" and llama[column["model"]] == "Llama 3.1 8B"
    assert llama[column["runs_here"]] == "yes" and llama[column["largest_batch [sequences]"]] == 29
    assert llama[column["decode_batch_1 [tokens/s]"]] == pytest.approx(rtx_4090.row("llama-3.1-8b").decode_tok_s)
    assert llama[column["runs_with"]] == ""
    qwen = by_id["qwen3-14b"]
    assert qwen[column["runs_here"]] == "at a lower precision" and qwen[column["decode_batch_1 [tokens/s]"]] == ""
    assert qwen[column["runs_with"]] == "FP8 weights" and qwen[column["runs_with: weight_precision"]] == "fp8"
    assert [row[column["model_id"]] for row in table.rows] == [row.model for row in rtx_4090.rows]
    assert table.to_csv().startswith("device,model,model_id,")


# ---- the workspace study ----------------------------------------------------------------------

BASE = Workspace(Scenario("llama-3.1-8b", "h100-sxm", input_len=1024, output_len=256), shown=("h100-sxm",),
                 view="run_here")


def test_the_study_shows_the_selected_accelerator_unless_the_tab_chose_one(engine):
    assert run_here_device(engine, BASE) == "h100-sxm"
    assert run_here_device(engine, BASE.with_options(run_here_device="m4-max")) == "m4-max"
    study = ANALYSIS_STUDIES["run_here"].run(engine, BASE.with_options(run_here_device="m4-max"))
    assert study.accelerator == "m4-max"


@pytest.mark.parametrize(("name", "value"), [
    ("accelerator", "mi300x"),
    ("input_len", 8192),
    ("output_len", 4096),
    ("weight_precision", "fp8"),
    ("activation_precision", "fp8"),
    ("kv_precision", "fp8"),
    ("run_here_device", "rtx-4090"),
])
def test_every_declared_input_changes_the_study(engine, name, value):
    assert name in RUN_HERE_DEPENDS_ON
    study = ANALYSIS_STUDIES["run_here"]
    before = study.run(engine, BASE)
    changed = (BASE.with_options(**{name: value}) if name == "run_here_device"
               else BASE.with_scenario(**{name: value}))
    assert study.run(engine, changed) != before, name
    assert set(RUN_HERE_DEPENDS_ON) == {"accelerator", "input_len", "output_len", "weight_precision",
                                        "activation_precision", "kv_precision", "run_here_device"}
