"""The reference's trace holds the facts the text layer states. Each field is checked against a
second derivation from the model, the accelerator, the class constants and the result (the
arithmetic the explain and formulas modules did for themselves before they read the trace), and
against the formula sheet's terms, for every bundled preset's scenario on every accelerator."""

from __future__ import annotations

import math

import pytest

from accelscope.engine.catalog.presets import bundled_preset_files, load_preset
from accelscope.engine.core.accelerator import Interconnect, MemoryTier
from accelscope.engine.core.precision import UNQUANTISED_BYTES, bytes_per_element
from accelscope.engine.physics.reference import (
    ReferenceModel,
    all_reduce,
    causal_positions,
    chunked_causal_positions,
    expected_max_standard_normal,
    layer_overhead_s,
)
from accelscope.engine.text.formulas import sheet_for_result

RELATIVE = 1e-9


def same(expected, actual) -> bool:
    if isinstance(expected, str | bool | MemoryTier | Interconnect) or expected is None:
        return expected == actual
    if isinstance(expected, tuple | list):
        return len(expected) == len(actual) and all(same(e, a) for e, a in zip(expected, actual, strict=True))
    if math.isinf(expected) or math.isinf(actual):  # no roof published: the same infinity
        return expected == actual
    return abs(expected - actual) <= RELATIVE * max(abs(expected), abs(actual), 1e-300)


def preset_cases(engine):
    for path in bundled_preset_files():
        preset = load_preset(path, engine.catalog, bundled=True)
        with_model = engine.with_models(preset.model) if preset.model is not None else engine
        for accelerator in engine.catalog.accelerators:
            yield preset.name, with_model, with_model.resolve(preset.workspace.scenario_on(accelerator))


class Pass:
    """One stage pass of a phase as shares of the result's per-device totals."""

    def __init__(self, phase, passes: int, sequences: float, tokens: float, pipeline_passes: int) -> None:
        self.phase, self.passes, self.sequences, self.tokens = phase, passes, sequences, tokens
        self.pipeline_passes = pipeline_passes
        self.flops = phase.flops_per_device / passes
        self.bytes = phase.bytes_per_device / passes
        self.weight_bytes = phase.weight_bytes_per_device / passes
        self.kv_bytes = phase.kv_bytes_per_device / passes
        self.time = phase.execution_time_s + phase.communication_time_s + phase.overhead_time_s
        self.host_per_pass = phase.host_time_s / pipeline_passes


class ByHand:
    """The facts of one scenario worked out from the catalog records, the constants and the
    result's totals, without the trace."""

    def __init__(self, result, model, accelerator, constants) -> None:
        s = self.s = result.scenario
        self.m, self.a, self.r = model, accelerator, result
        self.cls = constants.for_class(accelerator.architecture_class)
        self.stack = float(accelerator.software_efficiency)
        self.near = [t for t in accelerator.memory if t.placement and t.level in ("on-chip", "device")]
        self.far = accelerator.far_tier
        self.offload = s.offload if self.far is not None else 0.0
        self.kv_offload = s.kv_offload if self.far is not None else 0.0
        # A part with no compute peak published for the format has no roof: unbounded, as the
        # engine takes it (its result then says the times cannot be computed).
        self.peak = accelerator.peak(result.compute_precision) or math.inf
        self.resident = result.memory.resident_batch
        self.effective_ep = s.ep if model.moe is not None else 1
        self.context = s.input_len + s.output_len
        prompt_tokens = self.resident * s.input_len
        self.chunk = constants.prefill_chunk_tokens
        n_chunks = math.ceil(prompt_tokens / self.chunk)
        self.prefill = Pass(result.prefill, n_chunks, self.resident / n_chunks, prompt_tokens / n_chunks,
                            n_chunks + s.pp - 1)
        micro_batches = min(self.resident, s.pp)
        micro_batch = self.resident / micro_batches
        self.decode = Pass(result.decode, micro_batches, micro_batch, micro_batch, s.pp)

    def near_rate(self, tier) -> float:
        return tier.effective_bandwidth_Bps * self.cls.memory_efficiency * self.stack

    def far_rate(self) -> float:
        return self.far.effective_bandwidth_Bps * self.cls.link_efficiency * self.stack

    def network(self, group: int):
        scale_up = self.a.interconnect
        if group <= float(scale_up.domain_size) or self.a.scale_out is None:
            return scale_up
        return self.a.scale_out

    def stored_positions(self, context: float) -> float:
        m = self.m
        return (m.n_full_attention_layers * context + m.n_window_attention_layers * min(context, m.sliding_window)
                + m.n_chunked_attention_layers * min(context, m.attention_chunk))

    def attended_positions(self, context: float) -> float:
        m = self.m
        chunk = m.attention_chunk
        return (m.n_full_attention_layers * context + m.n_window_attention_layers * min(context, m.sliding_window)
                + m.n_chunked_attention_layers * (context if context <= chunk else (chunk + 1) / 2.0))

    def prompt_positions(self) -> float:
        m, tokens = self.m, self.s.input_len
        positions = m.n_full_attention_layers * causal_positions(tokens, 0)
        if m.n_window_attention_layers:
            positions += m.n_window_attention_layers * causal_positions(tokens, m.sliding_window)
        if m.n_chunked_attention_layers:
            positions += m.n_chunked_attention_layers * chunked_causal_positions(tokens, m.attention_chunk)
        return positions

    def far_bytes(self, p: Pass, state_bytes: float = 0.0) -> tuple[float, float]:
        # The recurrent state is never offloaded: only the KV cache's share goes far.
        return p.weight_bytes * self.offload, (p.kv_bytes - state_bytes) * self.kv_offload


def sheet_terms(result, model, accelerator, constants) -> tuple[dict[str, float], dict[str, str]]:
    """The formula sheet's terms by key, and its templates by result key."""
    sheet = sheet_for_result(result, model, accelerator, constants)
    terms: dict[str, float] = {}
    for formula in sheet.formulas():
        for term in (formula.result, *formula.terms):
            terms[term.key] = term.value
    # P_pre and P_dec name both a phase's attention positions and its power: the positions as
    # the prefill and decode sections use them, the power as the energy section derives it.
    for section_key, key in (("prefill", "P_pre"), ("decode", "P_dec")):
        used = [term for f in sheet.section(section_key).formulas for term in (f.result, *f.terms) if term.key == key]
        terms[f"{key}_positions"] = used[0].value
    templates = {f.result.key: f.template for f in sheet.formulas()}
    return terms, templates


def facts(trace, hand: ByHand, terms, templates, result):
    """(field, the trace's value, a second derivation of it) for every fact the text states."""
    s, m, cls, mem = hand.s, hand.m, hand.cls, result.memory
    p_a = bytes_per_element(s.activation_precision)
    listed = []

    def fact(name, value, *term_keys, text=None):
        for key in term_keys:
            if key in terms:
                listed.append((f"{name} ~ formulas {key}", value, terms[key]))
        if text is not None:
            listed.append((f"{name} ~ by hand", value, text))

    # compute, layout
    fact("peak_flops", trace.peak_flops, "pi", text=hand.peak)
    fact("compute_rate_flops", trace.compute_rate_flops, text=hand.peak * cls.compute_efficiency * hand.stack)
    fact("compute_precision", trace.compute_precision, text=result.compute_precision)
    fact("effective_ep", trace.effective_ep, "EP", text=hand.effective_ep)
    fact("layers_per_stage", trace.layers_per_stage, text=m.n_layers / s.pp)
    fact("heads_per_device", trace.heads_per_device, "h_dev", text=math.ceil(m.n_heads / s.tp))
    fact("kv_heads_per_device", trace.kv_heads_per_device, "h_kv_dev", text=math.ceil(m.kv_shards / s.tp))
    if m.moe is not None:
        fact("experts_per_device", trace.experts_per_device, "E_dev",
             text=math.ceil(m.moe.n_routed_experts / hand.effective_ep))
    # memory
    fact("near_tiers", trace.near_tiers, text=tuple(hand.near))
    fact("far_tier", trace.far_tier, text=hand.far)
    fact("ridge_tier", trace.ridge_tier, text=hand.a.tier("device") or hand.near[-1])
    fact("wide_bytes_per_element", trace.wide_bytes_per_element, "p_16",
         text=max(bytes_per_element(s.weight_precision), UNQUANTISED_BYTES))
    fact("offload", trace.offload, "phi_w", text=hand.offload)
    fact("kv_offload", trace.kv_offload, "phi_kv", text=hand.kv_offload)
    fact("weights_near_bytes", trace.weights_near_bytes, "W_near", text=mem.weights_bytes - mem.weights_far_bytes)
    fact("full_context", trace.full_context, "c", text=hand.context)
    fact("kv_layers", trace.kv_layers, "L_kv")
    fact("kv_bytes_per_token_layer", trace.kv_bytes_per_token_layer, "kv_layer")
    fact("kv_sequence_bytes", trace.kv_sequence_bytes, text=mem.kv_cache_bytes / s.batch)
    fact("kv_sequence_near_bytes", trace.kv_sequence_near_bytes, "kv_seq",
         text=mem.kv_cache_bytes / s.batch * (1 - hand.kv_offload))
    fact("kv_sequence_far_bytes", trace.kv_sequence_far_bytes, "kv_seq_far",
         text=mem.kv_cache_bytes / s.batch * hand.kv_offload)
    fact("kv_cache_near_bytes", trace.kv_cache_near_bytes, "KV_near",
         text=mem.kv_cache_bytes - mem.kv_cache_far_bytes)
    fact("kv_room_bytes", trace.kv_room_bytes,
         text=mem.usable_bytes - (mem.weights_bytes - mem.weights_far_bytes) - mem.overhead_bytes)
    fact("device_bytes", trace.device_bytes, "M",
         text=mem.weights_bytes - mem.weights_far_bytes + mem.kv_cache_bytes - mem.kv_cache_far_bytes
         + mem.recurrent_state_bytes + mem.activation_bytes + mem.overhead_bytes)
    if "B_max" in templates:
        chunked, chunk = "{C}·{a_tok})/" in templates["B_max"], "⌊{C}/{s_in}⌋" in templates["B_max"]
        fact("max_batch_term", trace.max_batch_term,
             text="chunked" if chunked else "chunk" if chunk else "prompts")
    fact("activation_bytes_per_token", trace.activation_bytes_per_token, "a_tok")
    fact("logits_bytes_per_sequence", trace.logits_bytes_per_sequence, "l_seq")
    fact("dense_read_bytes", trace.dense_read_bytes, "W_read")
    fact("near_rates_Bps", trace.near_rates_Bps, text=[hand.near_rate(tier) for tier in hand.near])
    fact("far_rate_Bps", trace.far_rate_Bps, text=hand.far_rate() if hand.far else 0.0)
    # positions
    fact("stored_positions", trace.stored_positions, "P_kv", text=hand.stored_positions(hand.context))
    fact("mean_decode_context", trace.mean_decode_context, "c_mean", text=s.input_len + s.output_len / 2.0)
    fact("decode_attended_positions", trace.decode_attended_positions, "P_dec_positions",
         text=hand.attended_positions(s.input_len + s.output_len / 2.0))
    fact("prompt_positions", trace.prompt_positions, "P_pre_positions", text=hand.prompt_positions())
    fact("prompt_reread_positions", trace.prefill.kv_read_bytes_per_pass * trace.prefill.passes,
         text=hand.resident * trace.kv_bytes_per_token_layer / s.pp * trace.prompt_reread_positions)
    fact("prompt_tokens", trace.prompt_tokens, text=hand.resident * s.input_len)
    fact("ep_spread_z", trace.ep_spread_z, "z_ep", text=expected_max_standard_normal(hand.effective_ep))
    # networks
    for key, network, group, peers in (("TP", trace.tp_network, s.tp, s.tp - 1),
                                       ("EP", trace.ep_network, hand.effective_ep, hand.effective_ep - 1),
                                       ("PP", trace.pp_network, s.tp * s.pp, 1)):
        net = hand.network(group)
        fact(f"{key} network name", network.name, text=net.name)
        fact(f"{key} network record", network.interconnect, text=net)
        fact(f"{key} network peers", network.peers, text=peers)
        fact(f"{key} network link bandwidth", network.link_bandwidth_Bps, f"beta_{key}",
             text=net.group_bandwidth_Bps(peers))
        fact(f"{key} network bandwidth", network.bandwidth_Bps,
             text=net.group_bandwidth_Bps(peers) * cls.interconnect_efficiency)
        fact(f"{key} network latency", network.latency_s, f"lambda_{key}", text=float(net.latency_s))
        fact(f"{key} network crosses the domain", network.crosses_domain,
             text=group > float(hand.a.interconnect.domain_size))
    fact("collective_overhead_s", trace.collective_overhead_s, "kappa", text=cls.collective_overhead_s)
    # fixed costs
    fact("layer_overhead_floor_s", trace.layer_overhead_floor_s, "tau", text=cls.per_layer_overhead_s)
    fact("activation_quantization_s", trace.activation_quantization_s, "tau_q",
         text=layer_overhead_s(cls, p_a) - cls.per_layer_overhead_s)
    fact("layer_overhead_s", trace.layer_overhead_s, text=layer_overhead_s(cls, p_a))
    fact("overhead_per_pass_s", trace.overhead_per_pass_s, "t_oh_dec", "t_oh_pre",
         text=result.decode.overhead_time_s)
    fact("step_overhead_s", trace.step_overhead_s, "tau_step", text=cls.step_overhead_s)
    fact("sequence_overhead_s", trace.sequence_overhead_s, "tau_seq", text=cls.sequence_overhead_s)
    # power
    fact("energy_per_flop_J", trace.energy_per_flop_J, "e_flop",
         text=(float(hand.a.tdp_W) - float(hand.a.idle_W)) / (cls.compute_efficiency * hand.peak))
    fact("energy_per_link_byte_J", trace.energy_per_link_byte_J, "e_link")
    fact("idle_W", trace.idle_W, "P_idle", text=float(hand.a.idle_W))
    fact("tdp_W", trace.tdp_W, "TDP", text=float(hand.a.tdp_W))
    fact("busy_floor_W", trace.busy_floor_W, text=cls.busy_power_fraction * float(hand.a.tdp_W))

    for suffix, phase, written in (("pre", trace.prefill, hand.prefill), ("dec", trace.decode, hand.decode)):
        label = f"{'prefill' if suffix == 'pre' else 'decode'}."
        totals = written.phase
        fact(label + "passes", phase.passes, "n_ch" if suffix == "pre" else "m", text=written.passes)
        fact(label + "tokens_per_pass", phase.tokens_per_pass, "T" if suffix == "pre" else "b", text=written.tokens)
        fact(label + "sequences_per_pass", phase.sequences_per_pass, "b" if suffix == "dec" else "",
             text=written.sequences)
        fact(label + "pipeline_passes", phase.pipeline_passes, text=written.pipeline_passes)
        fact(label + "flops_per_pass", phase.flops_per_pass, f"F_{suffix}", text=written.flops)
        fact(label + "attention_flops_per_pass", phase.attention_flops_per_pass, f"F_att_{suffix}")
        fact(label + "bytes_per_pass", phase.bytes_per_pass, f"Q_{suffix}", text=written.bytes)
        fact(label + "weight_bytes_per_pass", phase.weight_bytes_per_pass, f"W_{suffix}", text=written.weight_bytes)
        # The result's KV traffic holds the recurrent layers' state: read and written once per
        # sequence in a decode step, once per piece of its prompt (of the prefill chunk) in prefill.
        state_reads = (hand.resident * math.ceil(s.input_len / hand.chunk) / written.passes
                       if suffix == "pre" else written.sequences)
        state = state_reads * 2.0 * trace.state_sequence_bytes
        fact(label + "state_bytes_per_pass", phase.state_bytes_per_pass, text=state)
        fact(label + "kv_bytes_per_pass", phase.kv_bytes_per_pass, f"KV_{suffix}", text=written.kv_bytes - state)
        fact(label + "kv_bytes_per_sequence", phase.kv_bytes_per_sequence,
             text=(totals.kv_bytes_per_device / written.passes - state) / written.sequences)
        fact(label + "activation_traffic_bytes_per_pass", phase.activation_traffic_bytes_per_pass, f"Q_act_{suffix}",
             text=written.bytes - written.weight_bytes - written.kv_bytes)
        far_weights, far_kv = hand.far_bytes(written, state)
        fact(label + "far bytes per pass", phase.bytes_by_tier_per_pass[-1], f"Q_far_{suffix}",
             text=far_weights + far_kv)
        fact(label + "far_weight_bytes_per_pass", phase.far_weight_bytes_per_pass, text=far_weights)
        fact(label + "far_kv_bytes_per_pass", phase.far_kv_bytes_per_pass, text=far_kv)
        fact(label + "near_bytes_per_pass", phase.near_bytes_per_pass, text=written.bytes - far_weights - far_kv)
        far_time = (far_weights + far_kv) / hand.far_rate() if hand.far is not None else 0.0
        fact(label + "far_time_s", phase.far_time_s, text=far_time)
        fact(label + "near_time_s", phase.near_time_s, text=totals.memory_time_s - far_time)
        operators = phase.operators
        fact(label + "operators.whole", operators.whole, text=max(totals.compute_time_s, totals.memory_time_s))
        linear_compute = totals.compute_time_s - totals.attention_compute_time_s
        linear_memory = totals.memory_time_s - totals.attention_memory_time_s
        fact(label + "operators.linear_compute", operators.linear_compute, text=linear_compute)
        fact(label + "operators.linear_memory", operators.linear_memory, text=linear_memory)
        fact(label + "operators.linear", operators.linear, f"t_lin_{suffix}", text=max(linear_compute, linear_memory))
        fact(label + "operators.attention_compute", operators.attention_compute,
             text=totals.attention_compute_time_s)
        fact(label + "operators.attention_memory", operators.attention_memory, text=totals.attention_memory_time_s)
        fact(label + "operators.attention", operators.attention, f"t_att_{suffix}",
             text=max(totals.attention_compute_time_s, totals.attention_memory_time_s))
        fact(label + "operators.by_operator", operators.by_operator,
             text=max(linear_compute, linear_memory) + max(totals.attention_compute_time_s,
                                                           totals.attention_memory_time_s))
        fact(label + "pass_time_s", phase.pass_time_s, f"t_pass_{suffix}", text=written.time)
        if m.moe is not None:
            touch = 1.0 - (1.0 - m.moe.experts_per_token / m.moe.n_routed_experts) ** written.tokens
            fact(label + "expert_touch_probability", phase.expert_touch_probability, f"q_{suffix}", text=touch)
            fact(label + "mean_experts_touched", phase.mean_experts_touched, text=m.moe.n_routed_experts * touch)
            fact(label + "experts_touched", phase.experts_touched, f"E_read_{suffix}")
            fact(label + "token_imbalance", phase.token_imbalance, f"iota_{suffix}")
            fact(label + "expert_read_bytes_per_pass", phase.expert_read_bytes_per_pass, f"W_e_{suffix}")
        if s.tp > 1:
            message = written.tokens * m.hidden_size * p_a
            net = hand.network(s.tp)
            bandwidth = net.group_bandwidth_Bps(s.tp - 1) * cls.interconnect_efficiency
            latency = float(net.latency_s)
            each, _, algorithm = all_reduce(message, s.tp, bandwidth, latency)
            fact(label + "all_reduce.message_bytes", phase.all_reduce.message_bytes, f"msg_{suffix}", text=message)
            fact(label + "all_reduce.algorithm", phase.all_reduce.algorithm, text=algorithm)
            fact(label + "all_reduce.time_s", phase.all_reduce.time_s, f"t_ar_{suffix}",
                 text=each + cls.collective_overhead_s)
            fact(label + "all_reduce.sent_bytes", phase.all_reduce.sent_bytes, f"AR_{suffix}")
            steps = math.log2(s.tp)
            ring_sent = 2 * (s.tp - 1) / s.tp * message
            options = [("ring", ring_sent / bandwidth + 2 * (s.tp - 1) * latency, 2 * (s.tp - 1))]
            if not s.tp & (s.tp - 1):
                options += [("recursive halving and doubling", ring_sent / bandwidth + 2 * steps * latency,
                             2 * round(steps)),
                            ("recursive doubling", steps * message / bandwidth + steps * latency, round(steps))]
            fact(label + "all_reduce.options", phase.all_reduce.options, text=[option[:2] for option in options])
            fact(label + "all_reduce.steps", phase.all_reduce.steps,
                 text=next(option[2] for option in options if option[0] == algorithm))
        if phase.all_to_all is not None:
            fact(label + "all_to_all.sent_bytes", phase.all_to_all.sent_bytes, f"D_a2a_{suffix}")
            fact(label + "all_to_all.time_s", phase.all_to_all.time_s, f"t_a2a_{suffix}")
        fact(label + "link_bytes_per_pass", phase.link_bytes_per_pass, f"D_{suffix}")
        fact(label + "transfer_s", phase.transfer_s, f"t_p2p_{suffix}")
        if s.pp > 1:
            fact(label + "transfer_s from the totals", phase.transfer_s,
                 text=(totals.time_s - written.pipeline_passes * written.time - totals.host_time_s) / (s.pp - 1))
        fact(label + "host_s", phase.host_s, f"t_host_{suffix}", text=totals.host_time_s)
        fact(label + "host_per_pipeline_pass_s", phase.host_per_pipeline_pass_s, text=written.host_per_pass)
        steps = written.passes if suffix == "pre" else 1  # forward steps: a prefill chunk is one
        fact(label + "host_steps", phase.host_steps, text=steps)
        fact(label + "host parts", phase.host_steps * trace.step_overhead_s
             + hand.resident * trace.sequence_overhead_s, text=totals.host_time_s)
        fact(label + "power", min(trace.tdp_W, max(trace.busy_floor_W, phase.power_demand_W)), f"P_{suffix}",
             text=totals.power_per_device_W)
        if len(hand.near) == 1 and all(k in terms for k in (f"F_{suffix}", f"Q_{suffix}", f"D_{suffix}")):
            memory = terms[f"Q_{suffix}"] * terms["e_mem"]
            if f"Q_far_{suffix}" in terms:
                memory = (terms[f"Q_{suffix}"] - terms[f"Q_far_{suffix}"]) * terms["e_mem"] \
                    + terms[f"Q_far_{suffix}"] * terms["e_far"]
            dynamic = terms[f"F_{suffix}"] * terms["e_flop"] + memory + terms[f"D_{suffix}"] * terms["e_link"]
            fact(label + "dynamic_energy_J", phase.dynamic_energy_J, text=phase.passes * dynamic)
    return listed


def test_the_trace_holds_what_the_text_layer_states(engine):
    cases = 0
    checked: set[str] = set()
    for preset, with_model, scenario in preset_cases(engine):
        model = with_model.model(scenario.model)
        accelerator = with_model.catalog.accelerator(scenario.accelerator)
        result, trace = ReferenceModel(model, accelerator, with_model.constants).evaluate_traced(scenario)
        hand = ByHand(result, model, accelerator, with_model.constants)
        terms, templates = sheet_terms(result, model, accelerator, with_model.constants)
        for name, value, derived in facts(trace, hand, terms, templates, result):
            assert same(derived, value), f"{preset} on {scenario.accelerator}: {name}: trace {value!r}, {derived!r}"
            checked.add(name.split(" ~ ")[0])
        cases += 1
    assert cases >= 14 * 30
    # Every field is compared somewhere (the shares are checked below, against the bytes).
    assert len(checked) > 120


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
