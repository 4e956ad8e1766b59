"""The reference's trace holds the facts the text layer works out for itself today: each field
equals what explain.py or formulas.py computes, for every bundled preset's scenario on every
accelerator. (When those modules read the trace instead, this test says they lost nothing.)"""

from __future__ import annotations

import math

import pytest

from accelscope.engine.catalog.presets import bundled_preset_files, load_preset
from accelscope.engine.core.precision import bytes_per_element
from accelscope.engine.physics.reference import ReferenceModel, all_reduce, layer_overhead_s
from accelscope.engine.text import explain, formulas

RELATIVE = 1e-9


def same(expected, actual) -> bool:
    if isinstance(expected, str | bool) or isinstance(actual, str | bool):
        return expected == actual
    if isinstance(expected, tuple | list):
        return len(expected) == len(actual) and all(same(e, a) for e, a in zip(expected, actual, strict=True))
    return abs(expected - actual) <= RELATIVE * max(abs(expected), abs(actual), 1e-300)


def preset_cases(engine):
    for path in bundled_preset_files():
        preset = load_preset(path, engine.catalog, bundled=True)
        with_model = engine.with_models(preset.model) if preset.model is not None else engine
        for accelerator in engine.catalog.accelerators:
            yield preset.name, with_model, with_model.resolve(preset.workspace.scenario_on(accelerator))


def text_facts(engine, scenario):
    """(trace, the explain writer, the formula sheet's terms by key, result) of one scenario."""
    model = engine.model(scenario.model)
    accelerator = engine.catalog.accelerator(scenario.accelerator)
    result, trace = ReferenceModel(model, accelerator, engine.constants).evaluate_traced(scenario)
    writer = explain._Writer(result, model, accelerator, engine.constants, crossover=None)
    builder = formulas._Builder(result, model, accelerator, engine.constants)
    sections = builder.sheet_sections()
    terms = {key: term.value for key, term in builder.sheet.terms.items()}
    # P_pre and P_dec name both a phase's attention positions and its power: the positions as
    # the prefill and decode sections use them, the power as the energy section derives it.
    for section_key, key in (("prefill", "P_pre"), ("decode", "P_dec")):
        used = [term for f in next(x for x in sections if x.key == section_key).formulas for term in (f.result, *f.terms)
                if term.key == key]
        terms[f"{key}_positions"] = used[0].value
    return trace, writer, builder, terms, result


def facts(trace, writer, builder, terms, result):
    """(field, the trace's value, what the text modules compute) for every fact they compute."""
    s, m, cls = writer.s, writer.m, writer.cls
    p_a = bytes_per_element(s.activation_precision)
    listed = []

    def fact(name, value, *text_keys, text=None):
        for key in text_keys:
            if key in terms:
                listed.append((f"{name} ~ formulas {key}", value, terms[key]))
        if text is not None:
            listed.append((f"{name} ~ explain", value, text))

    # compute, layout, memory
    fact("peak_flops", trace.peak_flops, "pi", text=writer.peak)
    fact("compute_rate_flops", trace.compute_rate_flops, text=writer.compute_rate())
    fact("compute_precision", trace.compute_precision, text=result.compute_precision)
    fact("effective_ep", trace.effective_ep, "EP", text=writer.effective_ep)
    fact("layers_per_stage", trace.layers_per_stage, text=m.n_layers / s.pp)
    fact("heads_per_device", trace.heads_per_device, "h_dev")
    fact("kv_heads_per_device", trace.kv_heads_per_device, "h_kv_dev")
    if m.moe is not None:
        fact("experts_per_device", trace.experts_per_device, "E_dev",
             text=math.ceil(m.moe.n_routed_experts / writer.effective_ep))
    fact("offload", trace.offload, "phi_w", text=writer.offload)
    fact("kv_offload", trace.kv_offload, "phi_kv", text=writer.kv_offload)
    fact("kv_layers", trace.kv_layers, "L_kv")
    fact("kv_bytes_per_token_layer", trace.kv_bytes_per_token_layer, "kv_layer")
    fact("kv_sequence_bytes", trace.kv_sequence_bytes, text=result.memory.kv_cache_bytes / s.batch)
    fact("activation_bytes_per_token", trace.activation_bytes_per_token, "a_tok")
    fact("logits_bytes_per_sequence", trace.logits_bytes_per_sequence, "l_seq")
    fact("dense_read_bytes", trace.dense_read_bytes, "W_read")
    fact("near_rates_Bps", trace.near_rates_Bps, text=[writer.near_rate(tier) for tier in writer.near])
    fact("far_rate_Bps", trace.far_rate_Bps, text=writer.far_rate(writer.far) if writer.far else 0.0)
    # positions
    fact("stored_positions", trace.stored_positions, "P_kv",
         text=builder.stored_positions(s.input_len + s.output_len))
    fact("mean_decode_context", trace.mean_decode_context, "c_mean", text=s.input_len + s.output_len / 2.0)
    fact("decode_attended_positions", trace.decode_attended_positions, "P_dec_positions",
         text=builder.attended_positions(s.input_len + s.output_len / 2.0))
    fact("prompt_positions", trace.prompt_positions, "P_pre_positions")
    fact("prompt_reread_positions", trace.prefill.kv_read_bytes_per_pass * trace.prefill.passes,
         text=writer.resident * trace.kv_bytes_per_token_layer / s.pp * trace.prompt_reread_positions)
    # networks
    for key, network, group, peers in (("TP", trace.tp_network, s.tp, s.tp - 1),
                                       ("EP", trace.ep_network, writer.effective_ep, writer.effective_ep - 1),
                                       ("PP", trace.pp_network, s.tp * s.pp, 1)):
        net = writer.network(group)
        fact(f"{key} network name", network.name, text=net.name)
        fact(f"{key} network link bandwidth", network.link_bandwidth_Bps, f"beta_{key}",
             text=net.group_bandwidth_Bps(peers))
        fact(f"{key} network bandwidth", network.bandwidth_Bps,
             text=net.group_bandwidth_Bps(peers) * cls.interconnect_efficiency)
        fact(f"{key} network latency", network.latency_s, f"lambda_{key}", text=float(net.latency_s))
        fact(f"{key} network crosses the domain", network.crosses_domain,
             text=group > float(writer.a.interconnect.domain_size))
    fact("collective_overhead_s", trace.collective_overhead_s, "kappa", text=cls.collective_overhead_s)
    # fixed costs
    fact("layer_overhead_floor_s", trace.layer_overhead_floor_s, "tau")
    fact("activation_quantization_s", trace.activation_quantization_s, "tau_q",
         text=layer_overhead_s(cls, p_a) - cls.per_layer_overhead_s)
    fact("layer_overhead_s", trace.layer_overhead_s, text=layer_overhead_s(cls, p_a))
    fact("overhead_per_pass_s", trace.overhead_per_pass_s, "t_oh_dec", "t_oh_pre")
    fact("step_overhead_s", trace.step_overhead_s, "tau_step")
    fact("sequence_overhead_s", trace.sequence_overhead_s, "tau_seq")
    # power
    busy_floor = cls.busy_power_fraction * float(writer.a.tdp_W)  # as throughput_sentences has it
    fact("energy_per_flop_J", trace.energy_per_flop_J, "e_flop")
    fact("energy_per_link_byte_J", trace.energy_per_link_byte_J, "e_link")
    fact("idle_W", trace.idle_W, "P_idle")
    fact("tdp_W", trace.tdp_W, "TDP")
    fact("busy_floor_W", trace.busy_floor_W, text=busy_floor)

    for suffix, phase, written in (("pre", trace.prefill, writer.prefill), ("dec", trace.decode, writer.decode)):
        label = f"{'prefill' if suffix == 'pre' else 'decode'}."
        fact(label + "passes", phase.passes, "n_ch" if suffix == "pre" else "m", text=written.passes)
        fact(label + "tokens_per_pass", phase.tokens_per_pass, "T" if suffix == "pre" else "b", text=written.tokens)
        fact(label + "sequences_per_pass", phase.sequences_per_pass, "b" if suffix == "dec" else "",
             text=written.sequences)
        fact(label + "pipeline_passes", phase.pipeline_passes, text=written.pipeline_passes)
        fact(label + "attention_flops_per_pass", phase.attention_flops_per_pass, f"F_att_{suffix}")
        fact(label + "kv_bytes_per_pass", phase.kv_bytes_per_pass, f"KV_{suffix}", text=written.kv_bytes)
        fact(label + "activation_traffic_bytes_per_pass", phase.activation_traffic_bytes_per_pass, f"Q_act_{suffix}")
        fact(label + "far bytes per pass", phase.bytes_by_tier_per_pass[-1], f"Q_far_{suffix}",
             text=written.weight_bytes * writer.offload + written.kv_bytes * writer.kv_offload)
        if writer.far is not None:
            fact(label + "far_time_s", phase.far_time_s,
                 text=(written.weight_bytes * writer.offload + written.kv_bytes * writer.kv_offload)
                 / writer.far_rate(writer.far))
        if m.moe is not None:
            touch = 1.0 - (1.0 - m.moe.experts_per_token / m.moe.n_routed_experts) ** written.tokens
            fact(label + "expert_touch_probability", phase.expert_touch_probability, f"q_{suffix}", text=touch)
            fact(label + "mean_experts_touched", phase.mean_experts_touched, text=m.moe.n_routed_experts * touch)
            fact(label + "experts_touched", phase.experts_touched, f"E_read_{suffix}")
            fact(label + "token_imbalance", phase.token_imbalance, f"iota_{suffix}")
            fact(label + "expert_read_bytes_per_pass", phase.expert_read_bytes_per_pass, f"W_e_{suffix}")
        if s.tp > 1:
            message = written.tokens * m.hidden_size * p_a
            net = writer.network(s.tp)
            each, _, algorithm = all_reduce(message, s.tp, net.group_bandwidth_Bps(s.tp - 1) * cls.interconnect_efficiency,
                                            float(net.latency_s))
            fact(label + "all_reduce.message_bytes", phase.all_reduce.message_bytes, f"msg_{suffix}", text=message)
            fact(label + "all_reduce.algorithm", phase.all_reduce.algorithm, text=algorithm)
            fact(label + "all_reduce.time_s", phase.all_reduce.time_s, f"t_ar_{suffix}",
                 text=each + cls.collective_overhead_s)
            fact(label + "all_reduce.sent_bytes", phase.all_reduce.sent_bytes, f"AR_{suffix}")
        if phase.all_to_all is not None:
            fact(label + "all_to_all.sent_bytes", phase.all_to_all.sent_bytes, f"D_a2a_{suffix}")
            fact(label + "all_to_all.time_s", phase.all_to_all.time_s, f"t_a2a_{suffix}")
        fact(label + "link_bytes_per_pass", phase.link_bytes_per_pass, f"D_{suffix}")
        fact(label + "transfer_s", phase.transfer_s, f"t_p2p_{suffix}")
        fact(label + "host_s", phase.host_s, f"t_host_{suffix}", text=written.phase.host_time_s)
        steps = written.passes if suffix == "pre" else 1  # as explain's host sentence counts them
        fact(label + "host_steps", phase.host_steps, text=steps)
        fact(label + "host parts", phase.host_steps * trace.step_overhead_s
             + writer.resident * trace.sequence_overhead_s, text=written.phase.host_time_s)
        fact(label + "power", min(trace.tdp_W, max(trace.busy_floor_W, phase.power_demand_W)), f"P_{suffix}")
        if len(writer.near) == 1 and all(k in terms for k in (f"F_{suffix}", f"Q_{suffix}", f"D_{suffix}")):
            memory = terms[f"Q_{suffix}"] * terms["e_mem"]
            if f"Q_far_{suffix}" in terms:
                memory = (terms[f"Q_{suffix}"] - terms[f"Q_far_{suffix}"]) * terms["e_mem"] \
                    + terms[f"Q_far_{suffix}"] * terms["e_far"]
            dynamic = terms[f"F_{suffix}"] * terms["e_flop"] + memory + terms[f"D_{suffix}"] * terms["e_link"]
            fact(label + "dynamic_energy_J", phase.dynamic_energy_J, text=phase.passes * dynamic)
    return listed


def test_the_trace_holds_what_the_text_layer_computes(engine):
    cases = 0
    checked: set[str] = set()
    for preset, with_model, scenario in preset_cases(engine):
        trace, writer, builder, terms, result = text_facts(with_model, scenario)
        for name, value, text in facts(trace, writer, builder, terms, result):
            assert same(text, value), f"{preset} on {scenario.accelerator}: {name}: trace {value!r}, text {text!r}"
            checked.add(name.split(" ~ ")[0])
        cases += 1
    assert cases >= 14 * 30
    # Every field is compared somewhere (the shares are checked below, against the bytes).
    assert len(checked) > 80


def test_the_tier_shares_place_the_bytes_of_a_pass(engine):
    """The weights' and KV cache's tier shares are those the pass's bytes were read by."""
    for _, with_model, scenario in preset_cases(engine):
        model = with_model.model(scenario.model)
        accelerator = with_model.catalog.accelerator(scenario.accelerator)
        result, trace = ReferenceModel(model, accelerator, with_model.constants).evaluate_traced(scenario)
        assert same(1.0, sum(trace.weight_tier_shares)) and same(1.0, sum(trace.kv_tier_shares))
        for phase, totals in ((trace.prefill, result.prefill), (trace.decode, result.decode)):
            weights = totals.weight_bytes_per_device / phase.passes
            kv = totals.kv_bytes_per_device / phase.passes
            expected = [weights * w + kv * k for w, k in zip(trace.weight_tier_shares, trace.kv_tier_shares,
                                                             strict=True)]
            expected[len(trace.near_rates_Bps) - 1] += phase.activation_traffic_bytes_per_pass
            for want, got in zip(expected, phase.bytes_by_tier_per_pass, strict=True):
                assert abs(want - got) <= 1e-9 * max(sum(expected), 1.0), (scenario, expected, phase.bytes_by_tier_per_pass)


def test_evaluate_traced_gives_the_result_evaluate_gives(engine):
    for _, with_model, scenario in list(preset_cases(engine))[::25]:
        model = with_model.model(scenario.model)
        reference = ReferenceModel(model, with_model.catalog.accelerator(scenario.accelerator), with_model.constants)
        assert reference.evaluate_traced(scenario)[0] == reference.evaluate(scenario)


@pytest.mark.parametrize("field", ["prefill", "decode", "tp_network"])
def test_the_trace_is_frozen(engine, field):
    scenario = next(preset_cases(engine))[2]
    model = engine.model(scenario.model)
    _, trace = ReferenceModel(model, engine.catalog.accelerator(scenario.accelerator), engine.constants
                              ).evaluate_traced(scenario)
    with pytest.raises(AttributeError):
        setattr(trace, field, None)
