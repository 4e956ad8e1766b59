"""Help → Formulas: formulas whose plugged-in numbers are the engine's own.

Engine tests need no Qt: each formula is evaluated from its terms and held equal to the kernels'
number (through a Frame, as the app computes it) and, for the key ones, to hand-worked figures.
The last tests show the window offscreen, update it and click a link.
"""

from __future__ import annotations

import dataclasses
import math
import random
import re
import subprocess
import sys

import pytest

from accelscope.engine.catalog.presets import bundled_preset_files, load_preset
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.frame import compute_frame
from accelscope.engine.text.context import Context
from accelscope.engine.text.formulas import (
    CONTROL_LABELS,
    CONTROLS,
    Formula,
    FormulaSheet,
    Term,
    evaluate,
    formula_html,
    formula_sheet,
    formulas_html,
    sheet_for_result,
)
from accelscope.engine.text.formulas.build import SectionKind, build, build_order, shown_order

from scenario_generator import random_scenario

H100_BANDWIDTH = 3.35e12  # B/s, NVIDIA H100 SXM5 datasheet (HBM3)
H100_BF16_PEAK = 989.4e12  # FLOP/s dense BF16, NVIDIA H100 architecture white paper (2022)
LLAMA_8B_KV_PER_TOKEN = 2 * 8 * 128 * 2 * 32  # K and V · 8 KV heads · head dim 128 · BF16 · 32 layers

SCENARIOS = {
    "dense": Scenario("llama-3.1-8b", "h100-sxm", batch=8),
    "dense-tp4": Scenario("llama-3.3-70b", "h100-sxm", batch=16, tp=4),
    "dense-tp3": Scenario("llama-3.1-8b", "h100-sxm", batch=4, tp=3),
    "dense-pp2": Scenario("llama-3.3-70b", "h100-sxm", batch=6, tp=2, pp=2),
    "moe": Scenario("mixtral-8x7b", "h100-sxm", batch=4, tp=2),
    "moe-ep": Scenario("qwen3-235b-a22b", "h200", batch=64, tp=8, ep=8),
    "mla-fp8": Scenario("deepseek-r1", "h200", batch=8, tp=8, pp=2, weight_precision="fp8",
                        activation_precision="fp8"),
    "offload": Scenario("llama-3.3-70b", "h100-sxm", batch=4, offload=0.5),
    "kv-offload": Scenario("llama-3.3-70b", "h100-sxm", batch=4, offload=0.4, kv_offload=0.3),
    "waves": Scenario("llama-3.1-8b", "h100-sxm", batch=512, input_len=8192, output_len=2048),
    "window": Scenario("ministral-8b", "a100-80gb", batch=4, input_len=40_000),
    "chunked-attention": Scenario("llama-4-scout-17b-16e", "h100-sxm", batch=2, tp=4, input_len=16_384),
    "two-tiers": Scenario("llama-3.1-8b", "sn40l", batch=8),
    "mesh-tp2-pp2": Scenario("llama-3.3-70b", "mi300x", batch=16, tp=2, pp=2),
    "does-not-fit": Scenario("llama-3.3-70b", "a100-40gb", batch=1),
}


def sheet_of(engine, scenario: Scenario, shown: tuple[str, ...] | None = None) -> FormulaSheet:
    """The sheet the app would show: through a Frame, with the kernels' numbers."""
    shown = shown or (scenario.accelerator,)
    frame = compute_frame(engine, Workspace(engine.resolve(scenario), shown))
    return formula_sheet(engine, frame, scenario.accelerator)


@pytest.fixture(scope="module")
def sheets(engine):
    return {name: sheet_of(engine, scenario) for name, scenario in SCENARIOS.items()}


# ---- every plugged-in result is the engine's number ----------------------------------------


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_formula_evaluates_to_the_engines_number(sheets, name):
    sheet = sheets[name]
    checked = [f for f in sheet.formulas() if f.engine_value is not None and not f.quoted]
    assert len(checked) >= 25, [f.name for f in checked]
    for formula in checked:
        assert formula.value == pytest.approx(formula.engine_value, rel=1e-9, abs=1e-30), formula.plain()
        assert formula.agrees


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_same_holds_against_the_reference_model(engine, name):
    """The sheet also reproduces the pure-Python oracle (not only the kernels)."""
    from accelscope.engine.text.formulas import sheet_for_result

    scenario = engine.resolve(SCENARIOS[name])
    result = engine.reference(scenario)
    sheet = sheet_for_result(result, engine.model(scenario.model), engine.catalog.accelerator(scenario.accelerator),
                             engine.constants)
    assert [f.plain() for f in sheet.formulas() if not f.agrees] == []


# ---- each formula is its template, evaluated ------------------------------------------------


def preset_sheets(engine):
    """(name, sheet) of every bundled preset on every accelerator it shows, as the app makes
    them: through a Frame, with the kernels' numbers."""
    for path in bundled_preset_files():
        preset = load_preset(path, engine.catalog, bundled=True)
        with_model = engine.with_models(preset.model) if preset.model is not None else engine
        workspace = preset.workspace
        frame = compute_frame(with_model, workspace.with_changes(scenario=with_model.resolve(workspace.scenario)))
        for accelerator in frame.accelerators:
            yield f"{preset.name} on {accelerator}", formula_sheet(with_model, frame, accelerator)


def random_scenarios(engine, count: int, seed: int):
    """Scenarios over the catalog's models and accelerators, layouts, formats, offloads and
    lengths, fitting or not."""
    rng = random.Random(seed)
    models, accelerators = sorted(engine.catalog.models), sorted(engine.catalog.accelerators)

    def log_uniform(high):
        return lambda rng, _: int(math.exp(rng.uniform(0, math.log(high))))

    draws = {
        "batch": log_uniform(4096), "input_len": log_uniform(200_000), "output_len": log_uniform(8192),
        "tp": lambda rng, _: rng.choice([1, 1, 2, 3, 4, 8, 16]),
        "pp": lambda rng, _: rng.choice([1, 1, 2, 3, 4]),
        "ep": lambda rng, values: rng.choice([1, values["tp"]]) if values["tp"] % 2 == 0 else 1,
        "dp": lambda rng, _: rng.choice([1, 2]),
        "offload": lambda rng, _: rng.choice([0.0, 0.0, round(rng.random(), 3)]),
        "kv_offload": lambda rng, _: rng.choice([0.0, 0.0, round(rng.random(), 3)]),
    }
    for _ in range(count):
        yield engine.resolve(random_scenario(rng, models, accelerators, draws))


def assert_templates_are_the_values(name: str, sheet: FormulaSheet) -> int:
    """Every formula's value is its template evaluated over its terms, and equals (1e-9) the
    engine's number it is compared with; returns how many were compared with the engine."""
    compared = 0
    for formula in sheet.formulas():
        if formula.quoted:
            continue
        value = evaluate(formula.template, formula.terms)
        if formula.at_least is not None:
            value = max(value, formula.at_least)
        assert value == formula.value == formula.evaluated(), f"{name}: {formula.plain()}"
        if formula.engine_value is not None:
            assert value == pytest.approx(formula.engine_value, rel=1e-9, abs=1e-30), f"{name}: {formula.plain()}"
            compared += 1
    return compared


# Formulas whose result the engine has no number for: the prefill's attention FLOPs before they
# are shared among chunks, the roofline's attainable rate, one wave's time.
UNCOMPARED = {"F_att_pre_all", "P_roof", "t_wave"}


def test_every_presets_formulas_are_their_templates_and_the_engines_numbers(engine):
    sheets = 0
    for name, sheet in preset_sheets(engine):
        compared = assert_templates_are_the_values(name, sheet)
        uncompared = {f.result.key for f in sheet.formulas() if f.engine_value is None}
        assert uncompared <= UNCOMPARED, name
        assert compared >= 45, name
        sheets += 1
    assert sheets >= 30


def test_random_scenarios_formulas_are_their_templates_and_the_engines_numbers(engine):
    for scenario in random_scenarios(engine, 400, seed=20261125):
        result = engine.predict(scenario)
        sheet = sheet_for_result(result, engine.model(scenario.model), engine.catalog.accelerator(scenario.accelerator),
                                 engine.constants)
        assert_templates_are_the_values(str(scenario), sheet)
        assert {f.result.key for f in sheet.formulas() if f.engine_value is None} <= UNCOMPARED, scenario


@pytest.mark.parametrize("scenario", [
    Scenario("qwen3-next-80b-a3b", "h200", batch=16, input_len=20_000, output_len=500, weight_precision="fp8"),
    Scenario("nemotron-h-8b", "h100-sxm", batch=64, input_len=3000, output_len=300, tp=2, pp=2),
    Scenario("nemotron-h-56b", "gh200", batch=8, input_len=2000, output_len=200, weight_precision="fp8",
             kv_offload=0.5),
    Scenario("nemotron-h-56b", "h200", batch=2000, input_len=2000, output_len=200, weight_precision="fp8"),
    Scenario("gpt-oss-120b", "b200", batch=32, weight_precision="mxfp4", activation_precision="mxfp4"),
    Scenario("gpt-oss-20b", "h100-sxm", batch=32, weight_precision="nvfp4"),
], ids=lambda s: f"{s.model}-{s.accelerator}-b{s.batch}")
def test_hybrid_and_fp4_formulas_are_their_templates_and_the_engines_numbers(engine, scenario):
    """The recurrent state (memory, decode and prefill traffic), the recurrent layers' FLOPs,
    gpt-oss's experts-only MXFP4 and NVFP4: every formula is its template and the engine's number,
    in waves, with offloaded KV cache and with pipeline stages too."""
    sheet = sheet_of(engine, engine.resolve(scenario))
    assert_templates_are_the_values(str(scenario), sheet)
    keys = {f.result.key for f in sheet.formulas()} | {t.key for f in sheet.formulas() for t in f.terms}
    hybrid = scenario.model != "gpt-oss-120b" and scenario.model != "gpt-oss-20b"
    assert ({"s_seq", "S", "S_dec", "S_pre", "f_rec_dec", "f_rec_pre"} <= keys) == hybrid


@pytest.mark.parametrize(("scenario", "suffixes"), [
    (Scenario("deepseek-v3.2", "h200", batch=4, input_len=130_560, output_len=1024, tp=8, weight_precision="fp8"),
     ("sp",)),
    (Scenario("glm-5", "b200", batch=2, input_len=60_000, output_len=500, tp=8, pp=2, weight_precision="fp8"),
     ("sp",)),
    (Scenario("deepseek-v4-flash", "b200", batch=1, input_len=1_000_000, output_len=48_576, tp=4), ("cmp", "csp")),
    (Scenario("deepseek-v4-pro", "mi300x", batch=3, input_len=5000, output_len=300, tp=8, pp=3, kv_offload=0.4),
     ("cmp", "csp")),
    (Scenario("gemma-4-31b", "h200", batch=1, input_len=130_560, output_len=1024), ("glob",)),
    (Scenario("gemma-4-26b-a4b", "h100-sxm", batch=300, input_len=2000, output_len=200, tp=4), ("glob",)),
], ids=lambda value: value.model if isinstance(value, Scenario) else "")
def test_attention_groups_formulas_are_their_templates_and_the_engines_numbers(engine, scenario, suffixes):
    """Sparse layers with the indexer, compressed and compressed-sparse layers with their window,
    global layers with their own heads: each group's KV cache, decode reads and writes, decode
    and prompt FLOPs are formulas of their own, summed into KV, KV_dec and the attention FLOPs,
    each its template and the engine's number (in waves, pipelined and offloaded too)."""
    sheet = sheet_of(engine, engine.resolve(scenario))
    assert_templates_are_the_values(str(scenario), sheet)
    formulas = {f.result.key: f for f in sheet.formulas()}
    for suffix in suffixes:
        for key in (f"KV_{suffix}", f"q_{suffix}", f"f_{suffix}", f"F_pre_{suffix}"):
            assert formulas[key].engine_value is not None, key
        assert f"{{KV_{suffix}}}" in formulas["KV"].template
        assert f"{{q_{suffix}}}" in formulas["KV_dec"].template
        assert f"{{f_{suffix}}}" in formulas["F_att_dec"].template
        assert f"{{F_pre_{suffix}}}" in formulas["F_att_pre_all"].template
    indexed = {"sp", "csp"} & set(suffixes)
    for suffix in indexed:
        assert "{p_ix}" in formulas[f"KV_{suffix}"].template and "{h_ix}" in formulas[f"f_{suffix}"].template
        assert "{k_top}" in formulas[f"A_{suffix}"].template


def test_the_notation_evaluates_as_written():
    values = {"a": 3.0, "b": 2.0, "c": 10.0}
    assert evaluate("{a}·{b} + {c}/{b} − 1", values) == 3 * 2 + 10 / 2 - 1
    assert evaluate("{a} × ({b} − {c})", values) == 3 * (2 - 10)
    assert evaluate("⌈{c}/{a}⌉ + ⌊{c}/{a}⌋", values) == 4 + 3
    assert evaluate("(1 − 1/{a})<sup>{b}</sup>", values) == (1 - 1 / 3) ** 2
    assert evaluate("{b}^{a}", values) == 8
    assert evaluate("√({a}·{a}) + log₂({b}) + 2·log₂({c})", values) == 3 + 1 + 2 * math.log2(10)
    assert evaluate("min({a}, max({b}, {c}))", values) == 3
    assert evaluate("−{a}", values) == -3
    assert evaluate("{a}·{b}", [Term("a", "a", "", 3.0, "3", ()), Term("b", "b", "", 2.0, "2", ())]) == 6


@pytest.mark.parametrize("template", ["__import__('os')", "{a}.real", "abs({a})", "[{a}]", "{a} if {a} else 0",
                                      "'text'"])
def test_a_template_evaluates_nothing_but_arithmetic(template):
    with pytest.raises(ValueError, match="not a formula"):
        evaluate(template, {"a": 1.0})


# ---- sections: needs and order ----------------------------------------------------------------


def test_sections_are_built_after_what_they_need_and_shown_in_design_order(sheets):
    shown = shown_order()
    order = [kind.key for kind in build_order(shown)]
    for kind in shown:
        assert all(order.index(need) < order.index(kind.key) for need in kind.needs), kind.key
    assert [s.key for s in sheets["moe-ep"].sections] == [
        "memory", "decode", "moe", "step", "prefill", "roofline", "communication", "energy", "throughput"]


def _needed(kinds: dict[str, SectionKind], key: str) -> set[str]:
    found = {key}
    for need in kinds[key].needs:
        found |= _needed(kinds, need)
    return found


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_section_uses_only_terms_of_the_sections_it_needs(engine, name):
    """``needs`` is honest: every term a formula uses was built by its own section or by one it
    needs (directly or through another)."""
    scenario = engine.resolve(SCENARIOS[name])
    ctx = Context.of(engine.predict(scenario), engine.model(scenario.model),
                     engine.catalog.accelerator(scenario.accelerator), engine.constants)
    sheet, _ = build(ctx)
    kinds = {kind.key: kind for kind in shown_order()}
    for formula in (f for formulas in sheet.formulas.values() for f in formulas):
        built_in = sheet.origin(formula.result)
        for term in formula.terms:
            assert sheet.origin(term) in _needed(kinds, built_in), (formula.result.key, term.key)


def test_sections_that_need_each_other_are_refused():
    def nothing(sheet, ctx):
        return ()

    kinds = [SectionKind("a", "A", ("b",), nothing), SectionKind("b", "B", ("a",), nothing)]
    with pytest.raises(ValueError, match="need each other"):
        build_order(kinds)
    with pytest.raises(ValueError, match="unknown"):
        build_order([SectionKind("a", "A", ("c",), nothing)])


# ---- the controls ------------------------------------------------------------------------------


def test_every_scenario_field_is_a_control_with_a_label():
    """A field added to Scenario is a control a term can depend on, and needs its label here."""
    fields = [field.name for field in dataclasses.fields(Scenario)]
    assert list(CONTROLS) == fields
    assert "accelerator" in CONTROLS  # the selected accelerator
    missing = set(CONTROLS) - set(CONTROL_LABELS)
    assert not missing, f"Scenario fields without a label in CONTROL_LABELS: {sorted(missing)}"
    assert set(CONTROL_LABELS) <= set(CONTROLS)


def test_decode_memory_time_is_bytes_over_sustained_bandwidth(engine, sheets):
    result = engine.predict(SCENARIOS["dense"])
    eta_m = engine.constants.for_class("gpu-simt").memory_efficiency
    by_hand = result.decode.bytes_per_device / (H100_BANDWIDTH * eta_m)
    formula = sheets["dense"].formula("t_m_dec")
    assert by_hand == pytest.approx(result.decode.memory_time_s, rel=1e-12)
    assert formula.value == pytest.approx(by_hand, rel=1e-12)
    assert formula.expression() == "t<sub>m,dec</sub> = Q<sub>dec</sub>/(β·η<sub>m</sub>)"
    assert [t.key for t in formula.terms] == ["Q_dec", "beta", "eta_m"]


def test_decode_compute_time_is_flops_over_sustained_peak(engine, sheets):
    result = engine.predict(SCENARIOS["dense"])
    eta_c = engine.constants.for_class("gpu-simt").compute_efficiency
    formula = sheets["dense"].formula("t_c_dec")
    assert formula.value == pytest.approx(result.decode.flops_per_device / (H100_BF16_PEAK * eta_c), rel=1e-12)


def test_host_time_joins_the_itl_and_the_ttft(engine, sheets):
    """gpu-simt: 1 ms per forward step and 25 µs per sequence in it, devices waiting."""
    result = engine.predict(SCENARIOS["dense"])
    sheet = sheets["dense"]
    host = sheet.formula("t_host_dec")
    assert host.value == pytest.approx(1.0e-3 + 8 * 25e-6, rel=1e-12)
    assert host.value == pytest.approx(result.decode.host_time_s, rel=1e-12)
    assert [t.key for t in host.terms] == ["tau_step", "B_w", "tau_seq"]
    terms = {t.key: t for t in host.terms}
    assert terms["tau_step"].controls == terms["tau_seq"].controls == ("accelerator",)
    itl = sheet.formula("ITL")
    assert itl.expression() == "ITL = t<sub>pass,dec</sub> + t<sub>host,dec</sub>"
    assert itl.value == pytest.approx(sheet.formula("t_pass_dec").value + host.value, rel=1e-12)
    assert itl.value == pytest.approx(result.itl_s, rel=1e-12)
    # Prefill: one forward step per chunk, one sequence's share per prompt.
    prefill_host = sheet.formula("t_host_pre")
    assert prefill_host.value == pytest.approx(1 * 1.0e-3 + 8 * 25e-6, rel=1e-12)
    assert "t_host_pre" in {t.key for t in sheet.formula("t_prefill").terms}
    assert sheet.formula("t_prefill").value == pytest.approx(result.prefill.time_s, rel=1e-12)
    chunked = sheets["dense-tp4"].formula("t_host_pre")
    assert chunked.value == pytest.approx(2 * 1.0e-3 + 16 * 25e-6, rel=1e-12)  # two chunks of 8,192 tokens


def test_execution_time_follows_the_operator_overlap(engine, sheets):
    """A GPU (ω = 0) adds the linear layers' roofline and attention's; a wafer (ω = 1) takes the
    roofline of the whole pass."""
    gpu = sheets["dense"]
    assert gpu.formula("t_exec_dec").value == pytest.approx(
        gpu.formula("t_lin_dec").value + gpu.formula("t_att_dec").value, rel=1e-12)
    # Never below the whole pass's roofline; above it where one operator is compute-bound and the
    # other memory-bound.
    assert gpu.formula("t_exec_dec").value >= max(gpu.formula("t_c_dec").value, gpu.formula("t_m_dec").value)
    busy = sheet_of(engine, Scenario("llama-3.1-8b", "a100-80gb", batch=512, input_len=128, output_len=32))
    linear, attention = busy.formula("t_lin_dec"), busy.formula("t_att_dec")
    assert linear.value == pytest.approx(busy.formula("t_c_dec").value - busy.formula("t_c_att_dec").value)
    assert attention.value == busy.formula("t_m_att_dec").value
    assert busy.formula("t_exec_dec").value > max(busy.formula("t_c_dec").value, busy.formula("t_m_dec").value)
    assert {t.key: t.value for t in gpu.formula("t_exec_dec").terms}["omega"] == 0.0
    wafer = sheet_of(engine, Scenario("llama-3.1-8b", "wse-3", batch=8))
    assert {t.key: t.value for t in wafer.formula("t_exec_dec").terms}["omega"] == 1.0
    assert wafer.formula("t_exec_dec").value == pytest.approx(
        max(wafer.formula("t_c_dec").value, wafer.formula("t_m_dec").value), rel=1e-12)
    assert wafer.formula("t_host_dec").value == 0.0
    for sheet in (gpu, busy, wafer):
        assert [f for f in sheet.formulas() if not f.agrees] == []


def test_the_all_reduce_formula_is_the_algorithm_the_engine_chose(sheets):
    """Four H100s: one decode token per sequence makes a small message, recursive doubling's
    log₂ 4 = 2 steps win; a prefill chunk's 134 MB favour the ring's bytes in recursive halving
    and doubling's 4 steps. Three devices only have the ring."""
    tp4 = sheets["dense-tp4"]
    decode, prefill = tp4.formula("t_ar_dec"), tp4.formula("t_ar_pre")
    assert decode.name == "All-reduce, recursive doubling (dec)"
    assert decode.plain().startswith("t_AR,dec = log₂(TP)·S_dec/(β_TP·η_ic) + log₂(TP)·λ_TP + κ_coll")
    assert prefill.name == "All-reduce, recursive halving and doubling (pre)"
    assert "2·log₂(TP)·λ_TP" in prefill.plain()
    assert tp4.formula("AR_dec").plain().startswith("D_AR,dec = log₂(TP)·S_dec")
    tp3 = sheets["dense-tp3"]
    ring = tp3.formula("t_ar_dec")
    assert ring.name == "All-reduce, ring (dec)"
    assert ring.plain().startswith("t_AR,dec = 2·(TP − 1)/TP·S_dec/(β_TP·η_ic) + 2·(TP − 1)·λ_TP + κ_coll")
    kappa = next(term for term in ring.terms if term.key == "kappa")
    assert kappa.value == 5e-6  # launch and synchronisation of each collective
    assert "not a power of two" in ring.note
    for sheet in (tp4, tp3):
        comm = sheet.formula("t_comm_dec")
        assert comm.value == pytest.approx(comm.engine_value, rel=1e-9)


def test_weights_of_a_dense_bf16_model_are_two_bytes_per_parameter(engine, sheets):
    model = engine.model("llama-3.1-8b")
    weights = sheets["dense"].formula("W")
    assert weights.value == pytest.approx(2 * model.total_params, rel=1e-12)
    assert weights.value == pytest.approx(16.06e9, rel=1e-3)  # 8.03 B parameters × 2 B
    # With TP = 4 every device holds a quarter, except the norm gains each one keeps whole.
    seventy = engine.model("llama-3.3-70b")
    split = (seventy.total_params - seventy.norm_params) * 2 / 4 + seventy.norm_params * 2
    assert sheets["dense-tp4"].formula("W").value == pytest.approx(split, rel=1e-12)


def test_kv_bytes_per_token_by_hand(engine, sheets):
    dense = sheets["dense"]
    assert dense.formula("kv_tok").value == LLAMA_8B_KV_PER_TOKEN == 131_072
    result = engine.predict(SCENARIOS["dense"])
    assert result.memory.kv_cache_bytes == pytest.approx(8 * (1024 + 256) * LLAMA_8B_KV_PER_TOKEN, rel=1e-12)
    # TP = 4 over Llama-3.3-70B's 8 KV heads: 2 per device, over 80 layers.
    assert sheets["dense-tp4"].formula("kv_tok").value == 2 * 2 * 128 * 2 * 80
    # MLA keeps one latent of 512 + 64 elements per token per layer on every device, in the KV-cache
    # format (BF16 here: the scenario quantises weights and activations only).
    assert sheets["mla-fp8"].formula("kv_layer").value == (512 + 64) * 2


def test_ridge_point_is_peak_over_bandwidth(engine):
    scenario = SCENARIOS["dense"]
    frame = compute_frame(engine, Workspace(scenario, ("h100-sxm", "mi300x")))
    for accelerator in ("h100-sxm", "mi300x"):
        ridge = formula_sheet(engine, frame, accelerator).formula("I_ridge")
        assert ridge.value == pytest.approx(frame.result(accelerator).ridge_point, rel=1e-12)
        assert ridge.value == pytest.approx(frame.roofline(accelerator).ridge_point, rel=1e-12)
    h100 = formula_sheet(engine, frame, "h100-sxm").formula("I_ridge")
    assert h100.value == pytest.approx(H100_BF16_PEAK / H100_BANDWIDTH, rel=1e-12)  # 295.3 FLOP/B


def test_moe_distinct_experts_follow_the_uniform_routing_formula(sheets):
    # Mixtral: 8 experts, 2 per token; a decode pass of 4 tokens touches 8·(1 − (6/8)^4) of them.
    touched = sheets["moe"].formula("E_read_dec")
    assert touched.value == pytest.approx(8 * (1 - 0.75**4), rel=1e-12)  # 5.47
    assert sheets["moe"].section("moe").formulas  # shown in its own section


def test_ep_imbalance_is_named_rather_than_hidden(sheets):
    moe = sheets["moe-ep"].section("moe")
    assert any("Blom" in note for note in moe.notes)
    keys = {t.key for f in moe.formulas for t in f.terms}
    assert "z_ep" in keys


def test_offload_splits_memory_time_between_tiers(engine, sheets):
    formula = sheets["offload"].formula("t_m_dec")
    assert {"beta", "beta_far", "eta_l", "Q_far_dec"} <= {t.key for t in formula.terms}
    result = engine.predict(SCENARIOS["offload"])
    far_bytes = sheets["offload"].formula("Q_far_dec").value
    assert far_bytes == pytest.approx(0.5 * result.decode.weight_bytes_per_device, rel=1e-12)


def test_kv_offload_enters_the_memory_fit(sheets):
    sheet = sheets["kv-offload"]
    assert sheet.formula("KV_near").value == pytest.approx(0.7 * sheet.formula("KV").value, rel=1e-12)
    assert "KV_near" in {t.key for t in sheet.formula("M").terms}
    assert "phi_kv" in {t.key for t in sheet.formula("Q_far_dec").terms}
    assert "kv_offload" in sheet.section("memory").controls
    # Without KV offload the term stays out of the formulas.
    assert "phi_kv" not in {t.key for f in sheets["offload"].formulas() for t in f.terms}


def test_what_the_engine_does_beyond_a_formula_is_said_in_a_sentence(sheets):
    waves = sheets["waves"]
    assert waves.formula("waves").value > 1
    assert any("waves" in note for note in waves.section("memory").notes)
    assert any("Chunked prefill" in note for note in waves.section("prefill").notes)
    # Two near tiers (SRAM beside HBM): memory time (and the KV cache's share of it) and power
    # are the engine's, with a reason.
    two_tiers = sheets["two-tiers"]
    quoted = [f for f in two_tiers.formulas() if f.quoted]
    assert {f.result.key for f in quoted} == {"t_m_dec", "t_m_pre", "t_m_att_dec", "t_m_att_pre", "P_dec", "P_pre"}
    assert all(f.note for f in quoted)
    # A single-tier device shows every formula.
    assert not [f for f in sheets["dense"].formulas() if f.quoted]


def test_a_scenario_that_does_not_fit_says_so(sheets):
    notes = sheets["does-not-fit"].section("memory").notes
    assert notes[0].startswith("Does not fit")


def test_a_formula_that_disagrees_is_flagged():
    result = Term("x", "x", "a number", 2.0, "2", ("batch",), derived=True)
    term = Term("B", "B", "batch", 2.0, "2", ("batch",))
    formula = Formula("Twice", result, "{B}", (term,), engine_value=3.0, engine_text="3")
    assert not formula.agrees
    assert "engine's own figure is 3" in formula_html(formula)


# ---- controls and HTML ---------------------------------------------------------------------


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_section_names_a_control_that_exists(sheets, name):
    sheet = sheets[name]
    assert [s.key for s in sheet.sections][:2] == ["memory", "decode"]
    for section in sheet.sections:
        assert section.controls, section.title
        for formula in section.formulas:
            for term in (formula.result, *formula.terms):
                assert set(term.controls) <= set(CONTROLS), term


def test_terms_link_to_the_controls_that_change_them(sheets):
    terms = {t.key: t for f in sheets["dense-tp4"].formulas() for t in (f.result, *f.terms)}
    assert terms["B"].controls == ("batch",)
    assert terms["p_w"].controls == ("weight_precision",)
    assert terms["TP"].controls == ("tp",)
    assert terms["beta"].controls == ("accelerator",)
    assert set(terms["pi"].controls) == {"accelerator", "weight_precision", "activation_precision"}
    # A derived term carries every control behind it: KV cache grows with batch and both lengths.
    assert {"batch", "input_len", "output_len", "kv_precision", "tp", "model"} <= set(terms["KV"].controls)
    assert terms["C"].controls == ()  # the prefill chunk is a constant, set in no control


def test_html_has_headings_and_links(sheets):
    html = formulas_html(sheets["moe"])
    assert html.count("<h3>") == len(sheets["moe"].sections)
    assert '<a href="control:batch">B = 4</a>' in html
    assert 'href="control:weight_precision"' in html and 'href="control:tp"' in html
    # Every in-page link has its target.
    targets = set(re.findall(r'name="(f-[^"]+)"', html))
    links = set(re.findall(r'href="#(f-[^"]+)"', html))
    assert links and links <= targets
    assert "N<sub>fix</sub>" in html and "·" in html and "×" in html


def test_a_model_name_is_escaped_in_html(engine, sheets):
    sheet = sheets["dense"]
    odd = FormulaSheet("A <b>&</b> model", sheet.sections)
    assert "A &lt;b&gt;&amp;&lt;/b&gt; model" in formulas_html(odd)


def test_an_accelerator_that_is_not_shown_is_refused(engine):
    frame = compute_frame(engine, Workspace(SCENARIOS["dense"], ("h100-sxm",)))
    with pytest.raises(ValueError, match="not among the shown"):
        formula_sheet(engine, frame, "mi300x")


def test_the_formulas_module_imports_no_qt():
    code = ("import sys, accelscope.engine.text.formulas; "
            "print(any(name.startswith(('PySide6', 'pyqtgraph')) for name in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---- the window ----------------------------------------------------------------------------


def _anchor_position(browser, href: str) -> int:
    """Document position of the first character of the link to ``href``."""
    block = browser.document().begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            if fragment.charFormat().anchorHref() == href:
                return fragment.position()
            iterator += 1
        block = block.next()
    raise AssertionError(f"no link to {href}")


def _click_link(qtbot, browser, href: str) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QTextCursor

    cursor = QTextCursor(browser.document())
    cursor.setPosition(_anchor_position(browser, href) + 1)
    browser.setTextCursor(cursor)
    browser.ensureCursorVisible()
    rect = browser.cursorRect(cursor)
    point = rect.center()
    point.setX(max(rect.left() - 3, 1))  # inside the link's first character
    qtbot.mouseClick(browser.viewport(), Qt.MouseButton.LeftButton, pos=point)


def test_window_shows_updates_and_asks_for_controls(qtbot, engine):
    from accelscope.gui.windows.formulas import FormulasWindow

    window = FormulasWindow(engine)
    qtbot.addWidget(window)
    window.resize(700, 500)
    window.show()
    qtbot.waitExposed(window)
    frame = compute_frame(engine, Workspace(SCENARIOS["dense"], ("h100-sxm", "mi300x")))
    window.update_frame(frame, "h100-sxm")
    text = window.text()
    assert "Weights per device" in text and "Llama" in window.windowTitle() and "H100" in window.windowTitle()
    assert "B = 8" in text

    # A later frame replaces the numbers and keeps the reader's place.
    scroll_bar = window.browser.verticalScrollBar()
    scroll_bar.setValue(scroll_bar.maximum() // 2)
    place = scroll_bar.value()
    assert place > 0
    frame = compute_frame(engine, Workspace(SCENARIOS["dense"].with_changes(batch=16), ("h100-sxm", "mi300x")))
    window.update_frame(frame, "h100-sxm")
    assert "B = 16" in window.text() and "B = 8 " not in window.text()
    assert scroll_bar.value() == place

    # Another selected accelerator, then one that is not shown (the first shown one is used).
    window.update_frame(frame, "mi300x")
    assert "MI300X" in window.windowTitle()
    window.update_frame(frame, "b200")
    assert "H100" in window.windowTitle()

    # Clicking a term's link asks for its control.
    scroll_bar.setValue(0)
    with qtbot.waitSignal(window.control_requested, timeout=2000) as signal:
        _click_link(qtbot, window.browser, "control:batch")
    assert signal.args == ["batch"]


def test_window_follows_links_to_formulas(qtbot, engine):
    from PySide6.QtCore import QUrl

    from accelscope.gui.windows.formulas import FormulasWindow

    window = FormulasWindow(engine)
    qtbot.addWidget(window)
    window.resize(700, 400)
    window.show()
    qtbot.waitExposed(window)
    window.update_frame(compute_frame(engine, Workspace(SCENARIOS["moe"], ("h100-sxm",))), "h100-sxm")
    scroll_bar = window.browser.verticalScrollBar()
    scroll_bar.setValue(scroll_bar.maximum())
    with qtbot.assertNotEmitted(window.control_requested):
        window.browser.anchorClicked.emit(QUrl("#f-W"))
    assert scroll_bar.value() < scroll_bar.maximum()  # scrolled back up to the weights formula


def test_a_hidden_window_renders_when_shown(qtbot, engine):
    from accelscope.gui.windows.formulas import FormulasWindow

    window = FormulasWindow(engine)
    qtbot.addWidget(window)
    frame = compute_frame(engine, Workspace(SCENARIOS["dense"], ("h100-sxm",)))
    window.update_frame(frame, "h100-sxm")
    assert window.sheet is None and window.text() == ""
    window.show()
    qtbot.waitExposed(window)
    assert "Weights per device" in window.text()
    window.update_frame(None, "h100-sxm")
    assert window.text() == "" and window.sheet is None


def test_linked_controls_exist_in_the_controls_panel(qtbot, engine, sheets):
    """Every control a sheet links to (but the model and accelerator) is one the panel binds."""
    from accelscope.gui.controls.scenario_panel import ControlsPanel

    panel = ControlsPanel(engine.catalog)
    qtbot.addWidget(panel)
    for name in ("dense", "moe-ep", "offload", "mla-fp8"):
        linked = {c for section in sheets[name].sections for c in section.controls}
        assert linked - {"model", "accelerator"} <= set(panel.bindings), name


def test_numbers_round_as_the_explain_panel_does(sheets):
    text = formulas_html(sheets["dense"])
    assert "3.35 TB/s" in text and "989 TFLOP/s" in text
    assert math.isclose(sheets["dense"].formula("I_ridge").value, 295.3, rel_tol=1e-3)
