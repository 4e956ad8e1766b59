"""The numba kernel: the reference model (``physics/reference``) over struct-of-arrays inputs.

One call evaluates many scenarios: each scenario picks a model column and an accelerator
column from tables packed by ``pack.py`` and writes one column of outputs. What decides a
discrete output (the fit, the largest batch, the waves, the TP needed) follows the reference
step by step, in the same order, so it comes out the same to the bit; the stage passes and
what follows them reassociate products and multiply by reciprocals, which moves those
continuous outputs by a few units in the last place. The tests hold the two equal to 1e-9.
Each block of the loop starts with a marker naming the reference function it mirrors
(``# ── reference.memory.largest_batch``), so a mismatch points to one block.

Kernels do no validation, no I/O and read no globals but the row numbers of ``layout.py``
(numba freezes them at compile time; the cache is keyed by the source of every module they import, see ``jit.py``).

Units: bytes, seconds, FLOP, B/s, FLOP/s, W, J.
"""

# ruff: noqa: B023  (the closure in evaluate_many's loop runs only in the iteration that defines
# it, and numba inlines it, so late binding of loop variables cannot bite)

from __future__ import annotations

import math

import numpy as np

from ...core import codes
from ...core.precision import NARROWEST_FALLBACK_BYTES
from ..jit import jit
from ..layout import *  # noqa: F403  (the table row numbers, generated from their names)
from .helpers import (
    attended_positions,
    bound_of,
    capped_floor_sum,
    causal_positions,
    chunk_reread_positions,
    chunked_causal_positions,
    expected_max_standard_normal,
    fill_tiers,
    group_attended,
    group_index_keys,
    group_prompt_attended,
    group_stored,
    layer_overhead_s,
    network,
    point_to_point,
    power,
    recurrent_per_device,
    smallest_fitting_tp,
    stage_pass,
    stored_positions,
)

# ---- every scenario --------------------------------------------------------------------------


@jit
def evaluate_many(scenarios, model, accel, peaks, fallback, constants, out, cost):
    """Evaluate every column of ``scenarios`` into the same column of ``out`` and, when ``cost``
    has columns (it may have none: shape (N_COST_ROWS, 0)), the coefficients of one forward
    step of the scenario's replica into the same column of ``cost`` (rows: ``COST_ROWS``, read
    by kernels/iteration.py): the figures the scenario's own stage passes are made of.

    One scenario is the body of this loop rather than a function of its own: a jitted call
    that takes arrays increments and decrements each array's reference count (atomically) on
    every call, which took about half the time of an evaluation. The helpers it calls take
    numbers (or tuples of numbers) only, for the same reason.
    """
    z_by_group = np.full(Z_REMEMBERED_GROUPS, -1.0)  # negative: not computed yet (z >= 0)
    # per attention-group slot: entries at full context over all KV heads, KV heads, indexer keys' bytes
    group_cache = np.zeros(3 * MAX_ATTENTION_GROUPS)
    with_costs = cost.shape[1] > 0
    for j in range(scenarios.shape[1]):
        mi = int(scenarios[S_MODEL, j])
        a = int(scenarios[S_ACCEL, j])
        batch = int(scenarios[S_BATCH, j])
        input_len = int(scenarios[S_INPUT, j])
        output_len = int(scenarios[S_OUTPUT, j])
        w_code = int(scenarios[S_P_WEIGHT, j])
        a_code = int(scenarios[S_P_ACT, j])
        kv_code = int(scenarios[S_P_KV, j])
        tp = int(scenarios[S_TP, j])
        pp = int(scenarios[S_PP, j])
        ep = int(scenarios[S_EP, j])
        dp = int(scenarios[S_DP, j])
        requested_offload = scenarios[S_OFFLOAD, j]
        requested_kv_offload = scenarios[S_KV_OFFLOAD, j]
        warnings = 0

        # ── reference.stage.compute_format
        p_w = BYTES[w_code]
        p_a = BYTES[a_code]
        p_kv = BYTES[kv_code]

        requested = a_code if p_a >= p_w else w_code
        # The first format in the fallback chain the device has units for.
        compute_code = P_FP32
        for position in range(fallback.shape[1]):
            candidate = fallback[requested, position]
            if candidate < 0:
                break
            if peaks[candidate, a] > 0.0:
                compute_code = candidate
                break
        peak = peaks[compute_code, a]
        if BYTES[compute_code] < min(BYTES[PEAK_CODE[requested]], NARROWEST_FALLBACK_BYTES):
            # ── reference.stage.compute_format: only narrower units are published
            compute_code = PEAK_CODE[requested]
            peak = np.inf
        if compute_code != PEAK_CODE[requested]:
            warnings |= codes.WARN_COMPUTE_FALLBACK

        # ── reference.parallel.lay_out
        d = model[M_HIDDEN, mi]
        vocab = model[M_VOCAB, mi]
        layers = model[M_LAYERS, mi]
        layers_per_stage = layers / pp
        n_moe = model[M_N_MOE, mi]
        moe_fraction = n_moe / layers
        is_moe = model[M_IS_MOE, mi] != 0.0
        experts = int(model[M_EXPERTS, mi])
        top_k = model[M_TOP_K, mi]
        n_full = model[M_N_FULL, mi]
        n_window = model[M_N_WINDOW, mi]
        n_chunked = model[M_N_CHUNKED, mi]
        window_size = model[M_WINDOW, mi]
        attention_chunk_size = model[M_ATTN_CHUNK, mi]
        window = int(window_size)
        attention_chunk = int(attention_chunk_size)
        n_kv_layers = n_full + n_window + n_chunked
        n_heads = int(model[M_HEADS, mi])

        head_fraction = math.ceil(n_heads / tp) / n_heads
        if n_heads % tp:
            warnings |= codes.WARN_TP_UNEVEN_HEADS
        if model[M_IS_MLA, mi] == 0.0 and tp > model[M_KV_HEADS, mi]:
            warnings |= codes.WARN_KV_HEADS_REPLICATED

        has_far = accel[A_HAS_FAR, a] != 0.0
        fit_code = codes.FIT_OK
        if not is_moe and ep > 1:
            fit_code = codes.FIT_EP_ON_DENSE_MODEL
        elif tp % ep:
            fit_code = codes.FIT_EP_NOT_DIVIDING_TP
        elif is_moe and ep > experts:
            fit_code = codes.FIT_EP_EXCEEDS_EXPERTS
        elif pp > layers:
            fit_code = codes.FIT_PP_EXCEEDS_LAYERS
        elif (requested_offload > 0.0 or requested_kv_offload > 0.0) and not has_far:
            fit_code = codes.FIT_OFFLOAD_WITHOUT_FAR_TIER
        effective_ep = ep if is_moe else 1
        # expected_max_standard_normal costs a log, an erfc and an exp: it is kept per group
        # size for the call, as the same few sizes recur.
        z_ep = 0.0
        if effective_ep > 1:
            if effective_ep < z_by_group.shape[0]:
                z_ep = z_by_group[effective_ep]
                if z_ep < 0.0:
                    z_ep = expected_max_standard_normal(effective_ep)
                    z_by_group[effective_ep] = z_ep
            else:
                z_ep = expected_max_standard_normal(effective_ep)
        if is_moe and experts % effective_ep:
            warnings |= codes.WARN_EP_UNEVEN_EXPERTS

        # ── reference.memory.sizes, in the reference's operation order: they decide
        #    the fit, the largest batch and the waves, which must come out the same to the bit.
        #    The factors that do not shrink with tp are kept for the TP-needed search.
        kv_offload = requested_kv_offload if has_far else 0.0
        chunk = constants[K_CHUNK]
        overhead = accel[A_RUNTIME_OVERHEAD, a]
        tp_pp = tp * pp
        p_hi = max(p_w, UNQUANTISED_BYTES)
        router = model[M_ROUTER, mi]
        # The model's own format covering only its routed experts (gpt-oss's MXFP4) leaves the
        # other linear layers in 16 bits.
        p_fixed = p_w
        if model[M_NATIVE_EXPERTS_ONLY, mi] != 0.0 and model[M_NATIVE_WEIGHT_CODE, mi] == w_code:
            p_fixed = UNQUANTISED_BYTES
        fixed_bytes = ((model[M_BLOCK_FIXED, mi] - router) * p_fixed + router * p_hi) / tp_pp
        vocab_bytes = (model[M_EMBEDDING, mi] + model[M_UNTIED_HEAD, mi]) * p_hi / tp_pp
        norm_bytes = model[M_NORMS, mi] * p_hi / pp
        if is_moe:
            experts_per_device = math.ceil(model[M_EXPERTS, mi] / effective_ep)
            expert_bytes_each = model[M_EXPERT, mi] * p_w / (tp / effective_ep)
        else:
            experts_per_device = 0
            expert_bytes_each = 0.0
        expert_bytes = n_moe / pp * experts_per_device * expert_bytes_each
        fixed_and_vocab_bytes = fixed_bytes + vocab_bytes
        weights = fixed_and_vocab_bytes + norm_bytes + expert_bytes
        dense_read = fixed_bytes + norm_bytes + vocab * d * p_hi / tp_pp

        kv_shards = model[M_KV_SHARDS, mi]
        kv_shards_per_tp = kv_shards / tp
        kv_bytes_all_heads = p_kv * model[M_KV_ELEMENTS, mi]
        kv_per_token_layer = kv_bytes_all_heads * (math.ceil(kv_shards_per_tp) / kv_shards)
        split_width = (model[M_ATTN_ACT_WIDTH, mi] + 2 * model[M_FFN_WIDTH, mi]) / tp
        activation_per_token = p_a * (2 * d + split_width)
        logits_per_sequence = vocab * constants[K_LOGITS_BYTES] / tp
        max_context = input_len + output_len
        full_context_positions = stored_positions(n_full, n_window, window_size, n_chunked, attention_chunk_size, max_context)
        prompt_workspace_tokens = min(input_len, chunk)
        # ── reference.closed_forms.AttentionGroups.kv_bytes: the attention groups' cache at full context
        groups_kv = 0.0
        has_groups = False
        for slot in range(MAX_ATTENTION_GROUPS):
            base = M_G0_LAYERS + slot * N_GROUP_FIELDS
            group_layers = model[base, mi]
            group_cache[3 * slot] = 0.0
            group_cache[3 * slot + 1] = 0.0
            group_cache[3 * slot + 2] = 0.0
            if group_layers == 0.0:
                continue
            has_groups = True
            all_heads = group_layers * p_kv * model[base + 1, mi] * group_stored(
                max_context, model[base + 3, mi], model[base + 4, mi])
            group_shards = model[base + 2, mi]
            index_bytes = group_layers * model[base + 7, mi] * group_index_keys(max_context, model[base + 6, mi])
            groups_kv += all_heads * (math.ceil(group_shards / tp) / group_shards) + index_bytes
            group_cache[3 * slot] = all_heads
            group_cache[3 * slot + 1] = group_shards
            group_cache[3 * slot + 2] = index_bytes
        # ── reference.closed_forms.RecurrentLayers: the fixed-size state, split by heads
        n_deltanet = model[M_N_DELTANET, mi]
        deltanet_shards = model[M_DELTANET_SHARDS, mi]
        deltanet_shards_per_tp = deltanet_shards / tp
        n_mamba = model[M_N_MAMBA, mi]
        mamba_shards = model[M_MAMBA_SHARDS, mi]
        mamba_shards_per_tp = mamba_shards / tp
        state_per_sequence = recurrent_per_device(
            n_deltanet, model[M_DELTANET_STATE_BYTES, mi], deltanet_shards, deltanet_shards_per_tp,
            n_mamba, model[M_MAMBA_STATE_BYTES, mi], mamba_shards, mamba_shards_per_tp,
        ) / pp
        one_sequence = (
            overhead
            + prompt_workspace_tokens * activation_per_token
            + logits_per_sequence
            + (kv_per_token_layer * full_context_positions + groups_kv) / pp * (1.0 - kv_offload)
            + state_per_sequence
        )
        ffn_width = model[M_FFN_WIDTH, mi]

        n_near = int(accel[A_N_NEAR, a])
        usable_fraction = accel[A_USABLE_FRACTION, a]
        usable0 = accel[A_NEAR0_CAPACITY, a] * usable_fraction
        usable1 = accel[A_NEAR1_CAPACITY, a] * usable_fraction if n_near > 1 else 0.0
        capacity = accel[A_NEAR0_CAPACITY, a]
        if n_near > 1:
            capacity = capacity + accel[A_NEAR1_CAPACITY, a]
        usable = capacity * usable_fraction
        far_usable = accel[A_FAR_CAPACITY, a] * usable_fraction if has_far else 0.0

        # ── reference.memory.fit_memory
        if max_context > model[M_MAX_CONTEXT, mi]:
            warnings |= codes.WARN_CONTEXT_EXCEEDS_MODEL
        kv_sequence = (kv_per_token_layer * full_context_positions + groups_kv) / pp

        offload = requested_offload if has_far else 0.0
        weights_far = weights * offload
        weights_near = weights - weights_far
        kv_sequence_near = kv_sequence * (1.0 - kv_offload)
        kv_sequence_far = kv_sequence * kv_offload

        # ── reference.memory.largest_batch
        available = usable - weights_near - overhead
        max_batch = 0.0
        if available > 0.0:
            per_sequence = kv_sequence_near + logits_per_sequence + state_per_sequence
            switch = chunk / input_len
            unchunked = math.floor(available / (per_sequence + input_len * activation_per_token))
            max_batch = min(unchunked, math.floor(switch))
            chunked = math.floor((available - chunk * activation_per_token) / per_sequence)
            if chunked >= switch:
                max_batch = max(max_batch, chunked)
            max_batch = min(max(max_batch, 0.0), MAX_BATCH_REPORTED)
        near_max_batch = max_batch
        # ── reference.memory.far_largest_batch
        if kv_sequence_far > 0.0:
            far_room = far_usable - weights_far
            far_max_batch = math.floor(min(far_room / kv_sequence_far, MAX_BATCH_REPORTED)) if far_room > 0.0 else 0.0
            max_batch = min(max_batch, far_max_batch)

        def activation_bytes(count):
            return min(count * input_len, chunk) * activation_per_token + count * logits_per_sequence

        # ── reference.memory.fit_memory (the fit code)
        if fit_code == codes.FIT_OK:
            if weights_near + overhead + activation_bytes(1) > usable:
                fit_code = codes.FIT_WEIGHTS_DO_NOT_FIT
            elif near_max_batch < 1:
                fit_code = codes.FIT_KV_DOES_NOT_FIT_ONE_SEQUENCE
            elif weights_far + kv_sequence_far > far_usable:
                fit_code = codes.FIT_FAR_TIER_TOO_SMALL
            elif peak == np.inf:
                fit_code = codes.FIT_COMPUTE_UNPUBLISHED
        fits = fit_code == codes.FIT_OK
        if weights_near > constants[K_STARVATION] * usable:
            warnings |= codes.WARN_KV_STARVED

        # ── reference.memory.waves
        waves = 1
        resident = batch
        if fits and batch > max_batch:
            waves = int(math.ceil(batch / max_batch))
            resident = int(math.ceil(batch / waves))
            warnings |= codes.WARN_KV_WAVES

        # ── reference.memory.tp_needed, reference.memory.offload_needed
        tp_needed = smallest_fitting_tp(
            tp, usable, offload, fixed_and_vocab_bytes, norm_bytes, expert_bytes, kv_shards_per_tp, kv_shards,
            kv_bytes_all_heads, p_a, d, split_width, logits_per_sequence, overhead, prompt_workspace_tokens,
            full_context_positions, pp, kv_offload,
            (n_deltanet, model[M_DELTANET_STATE_BYTES, mi], deltanet_shards, n_mamba, model[M_MAMBA_STATE_BYTES, mi],
             mamba_shards),
            (group_cache[0], group_cache[1], group_cache[2], group_cache[3], group_cache[4], group_cache[5],
             group_cache[6], group_cache[7], group_cache[8], group_cache[9], group_cache[10], group_cache[11]),
        )
        room_for_weights = usable - one_sequence
        offload_needed = -1.0
        if has_far and room_for_weights > 0.0:
            offload_needed = max(0.0, 1.0 - room_for_weights / weights)
            if offload_needed * weights + kv_sequence_far > far_usable:
                offload_needed = -1.0

        # ── reference.memory.place: workspace in the slowest near tier, then weights and KV
        #    fastest first.
        free0 = usable0
        free1 = usable1
        reserve = overhead + activation_bytes(resident)
        if n_near > 1:
            taken = min(free1, reserve)
            free1 = free1 - taken
            reserve = reserve - taken
        taken = min(free0, reserve)
        free0 = free0 - taken
        reserve = reserve - taken
        w_share0, w_share1, free0, free1 = fill_tiers(free0, free1, n_near, weights_near)
        kv_share0, kv_share1, free0, free1 = fill_tiers(free0, free1, n_near,
                                                        resident * (kv_sequence_near + state_per_sequence))

        # From here on every figure is a continuous output: the stage passes below reassociate the
        # reference's products and multiply by reciprocals worked out once per scenario, which
        # moves results by a few units in the last place (the tests hold them to 1e-9).
        # ── reference.memory.TierReads
        stack = accel[A_STACK, a]
        eta_memory = accel[A_ETA_MEMORY, a]
        seconds_per_byte0 = 1.0 / (accel[A_NEAR0_BANDWIDTH, a] * eta_memory * stack)
        seconds_per_byte1 = 1.0 / (accel[A_NEAR1_BANDWIDTH, a] * eta_memory * stack) if n_near > 1 else 0.0
        seconds_per_far_byte = 1.0 / (accel[A_FAR_BANDWIDTH, a] * accel[A_ETA_LINK, a] * stack) if has_far else 1.0
        energy0 = accel[A_NEAR0_ENERGY, a]
        energy1 = accel[A_NEAR1_ENERGY, a]
        far_energy = accel[A_FAR_ENERGY, a] if has_far else 0.0

        # ── reference.network.Communication
        ic_eff = accel[A_ETA_INTERCONNECT, a]
        domain = accel[A_IC_DOMAIN, a]
        has_scale_out = accel[A_HAS_SCALE_OUT, a] != 0.0
        scale_up_bandwidth = accel[A_IC_BANDWIDTH, a]
        scale_up_latency = accel[A_IC_LATENCY, a]
        scale_out_bandwidth = accel[A_SO_BANDWIDTH, a]
        scale_out_latency = accel[A_SO_LATENCY, a]
        peer_bandwidth = accel[A_IC_PEER_BANDWIDTH, a]
        tp_bandwidth, tp_latency, tp_crosses = network(
            tp, domain, has_scale_out, scale_up_bandwidth, scale_up_latency, scale_out_bandwidth,
            scale_out_latency, ic_eff, peer_bandwidth, tp - 1,
        )
        ep_bandwidth, ep_latency, _ = network(
            effective_ep, domain, has_scale_out, scale_up_bandwidth, scale_up_latency, scale_out_bandwidth,
            scale_out_latency, ic_eff, peer_bandwidth, effective_ep - 1,
        )
        # A pipeline hand-over goes from each device to its counterpart in the next stage.
        pp_bandwidth, pp_latency, pp_crosses = network(
            tp_pp, domain, has_scale_out, scale_up_bandwidth, scale_up_latency, scale_out_bandwidth,
            scale_out_latency, ic_eff, peer_bandwidth, 1,
        )
        if (tp > 1 and tp_crosses) or (pp > 1 and pp_crosses):
            warnings |= codes.WARN_CROSSES_SCALE_UP_DOMAIN

        # ── reference.stage.Stage, reference.energy.Power
        compute_rate = peak * accel[A_ETA_COMPUTE, a] * stack
        seconds_per_flop = 1.0 / compute_rate
        layer_overhead = layer_overhead_s(accel[A_LAYER_OVERHEAD, a], accel[A_ACTIVATION_QUANT_OVERHEAD, a], p_a)
        overhead_time = layers_per_stage * layer_overhead
        step_overhead = accel[A_STEP_OVERHEAD, a]
        sequence_overhead = accel[A_SEQUENCE_OVERHEAD, a]
        overlap = accel[A_OPERATOR_OVERLAP, a]
        collective_overhead = accel[A_COLLECTIVE_OVERHEAD, a]
        tdp = accel[A_TDP, a]
        idle = accel[A_IDLE, a]
        busy_floor = accel[A_BUSY_POWER_FRACTION, a] * tdp
        e_flop = (tdp - idle) / (accel[A_ETA_COMPUTE, a] * peak)
        e_link = constants[K_LINK_ENERGY]

        # ── reference.stage.Stage.stage_pass: its coefficients, per token (or sequence) of a pass.
        #    Everything in a pass is linear in its tokens but the routed experts' load and the
        #    all-reduce algorithm, which the helper works out per pass.
        per_tp_pp = 1.0 / tp_pp
        per_pp = 1.0 / pp
        dense_flops_per_token = 2.0 * model[M_BLOCK_FIXED, mi] * per_tp_pp
        head_flops_per_sequence = 2.0 * vocab * d * per_tp_pp
        kv_written = kv_per_token_layer * n_kv_layers
        # ── reference.closed_forms.AttentionGroups.write_bytes
        if has_groups:
            groups_write = 0.0
            for slot in range(MAX_ATTENTION_GROUPS):
                base = M_G0_LAYERS + slot * N_GROUP_FIELDS
                group_layers = model[base, mi]
                if group_layers == 0.0:
                    continue
                entry = p_kv * model[base + 1, mi] * (math.ceil(model[base + 2, mi] / tp) / model[base + 2, mi])
                entries = 1.0 / model[base + 3, mi] + (1.0 if model[base + 4, mi] > 0.0 else 0.0)
                stride = model[base + 6, mi]
                keys = model[base + 7, mi] / stride if stride > 0.0 else 0.0
                groups_write += group_layers * (entry * entries + keys)
            kv_written = kv_written + groups_write
        kv_write_per_token = kv_written * per_pp
        traffic_per_token = layers_per_stage * p_a * (4.0 * d + 2.0 * ffn_width / tp)
        weight_kept = 1.0 - offload
        kv_kept = 1.0 - kv_offload
        weight_near0 = weight_kept * w_share0
        weight_near1 = weight_kept * w_share1
        kv_near0 = kv_kept * kv_share0
        kv_near1 = kv_kept * kv_share1
        kv_seconds_per_byte = kv_near0 * seconds_per_byte0 + kv_offload * seconds_per_far_byte
        state_seconds_per_byte = kv_share0 * seconds_per_byte0
        if n_near > 1:
            kv_seconds_per_byte = kv_seconds_per_byte + kv_near1 * seconds_per_byte1
            state_seconds_per_byte = state_seconds_per_byte + kv_share1 * seconds_per_byte1
        # ── reference.phases.Setup.recurrent_flops_per_token, .state_traffic_per_sequence
        prefill_recurrent_flops_per_token = recurrent_per_device(
            n_deltanet, model[M_DELTANET_PREFILL_FLOPS, mi], deltanet_shards, deltanet_shards_per_tp,
            n_mamba, model[M_MAMBA_PREFILL_FLOPS, mi], mamba_shards, mamba_shards_per_tp,
        ) / pp
        decode_recurrent_flops_per_token = recurrent_per_device(
            n_deltanet, model[M_DELTANET_DECODE_FLOPS, mi], deltanet_shards, deltanet_shards_per_tp,
            n_mamba, model[M_MAMBA_DECODE_FLOPS, mi], mamba_shards, mamba_shards_per_tp,
        ) / pp
        state_traffic_per_sequence = 2.0 * state_per_sequence
        message_per_token = d * p_a
        # All-reduce algorithms (reference.closed_forms.all_reduce): the ring for any group; for a power-of-two
        # group also recursive halving-doubling (the ring's bytes in fewer steps) and recursive
        # doubling (log2(tp) whole messages in log2(tp) steps). The fastest is taken per pass.
        all_reduce_sent_per_token = 2.0 * (tp - 1) / tp * message_per_token
        all_reduce_per_token = 0.0
        all_reduce_latency = 0.0
        halving_latency = 0.0
        doubling_steps = 0.0
        doubling_sent_per_token = 0.0
        doubling_per_token = 0.0
        if tp > 1:
            all_reduce_per_token = all_reduce_sent_per_token / tp_bandwidth
            all_reduce_latency = 2.0 * (tp - 1) * tp_latency
            if tp & (tp - 1) == 0:
                # log2 of a power of two by counting halvings: a libm call per scenario cost ~3%.
                group = tp
                while group > 1:
                    group >>= 1
                    doubling_steps += 1.0
                halving_latency = 2.0 * doubling_steps * tp_latency
                doubling_sent_per_token = doubling_steps * message_per_token
                doubling_per_token = doubling_sent_per_token / tp_bandwidth
        expert_flops_per_token = 2.0 * top_k * n_moe * model[M_EXPERT, mi] * per_tp_pp
        expert_read_per_touched = n_moe * per_pp * expert_bytes_each
        expert_miss = 1.0 - top_k / experts if is_moe else 1.0
        dispatched_per_token = top_k * message_per_token * (effective_ep - 1) / effective_ep
        a2a_latency = (effective_ep - 1) * ep_latency
        compute = (dense_flops_per_token, head_flops_per_sequence, seconds_per_flop, e_flop, overlap)
        experts = (is_moe, expert_miss, experts_per_device, expert_flops_per_token, expert_read_per_touched, top_k,
                   effective_ep, z_ep)
        memory = (dense_read, kv_write_per_token, traffic_per_token, n_near, weight_near0, weight_near1, kv_near0,
                  kv_near1, offload, kv_offload, seconds_per_byte0, seconds_per_byte1, seconds_per_far_byte,
                  kv_seconds_per_byte, energy0, energy1, far_energy, kv_share0, kv_share1, state_seconds_per_byte)
        communication = (tp, all_reduce_per_token, all_reduce_sent_per_token, all_reduce_latency, halving_latency,
                         doubling_steps, doubling_per_token, doubling_sent_per_token, tp_latency, collective_overhead,
                         dispatched_per_token, ep_bandwidth, a2a_latency, layers_per_stage, moe_fraction, e_link)
        pp_seconds_per_token = message_per_token / pp_bandwidth

        # ── reference.phases.prefill
        prompt_tokens = resident * input_len
        n_chunks = math.ceil(prompt_tokens / chunk)
        per_chunk = 1.0 / n_chunks
        chunk_tokens = prompt_tokens * per_chunk
        window_causal = n_window * causal_positions(input_len, window) if n_window != 0.0 else 0.0
        chunked_causal = n_chunked * chunked_causal_positions(input_len, attention_chunk) if n_chunked != 0.0 else 0.0
        attention_prefill = (
            resident * model[M_ATTN_FLOPS_PREFILL, mi] * head_fraction * per_pp
            * (n_full * causal_positions(input_len, 0) + window_causal + chunked_causal)
        ) + prompt_tokens * prefill_recurrent_flops_per_token
        prompt_chunks = math.ceil(input_len / chunk)
        window_reread = n_window * chunk_reread_positions(prompt_chunks, chunk, window) if n_window != 0.0 else 0.0
        chunked_reread = (
            n_chunked * chunk_reread_positions(prompt_chunks, chunk, attention_chunk) if n_chunked != 0.0 else 0.0
        )
        reread_prefill = (
            resident * kv_per_token_layer * per_pp
            * (n_full * chunk_reread_positions(prompt_chunks, chunk, 0) + window_reread + chunked_reread)
        )
        # ── reference.closed_forms.AttentionGroups.prompt_flops, .reread_bytes
        if has_groups:
            groups_prompt = 0.0
            groups_reread = 0.0
            pairs = prompt_chunks * (prompt_chunks - 1) / 2.0
            for slot in range(MAX_ATTENTION_GROUPS):
                base = M_G0_LAYERS + slot * N_GROUP_FIELDS
                group_layers = model[base, mi]
                if group_layers == 0.0:
                    continue
                ratio = model[base + 3, mi]
                group_window = model[base + 4, mi]
                stride = model[base + 6, mi]
                index = capped_floor_sum(input_len, stride, 0.0) if stride > 0.0 else 0.0
                groups_prompt += group_layers * (
                    head_fraction * model[base + 10, mi] * group_prompt_attended(input_len, ratio, group_window,
                                                                                 model[base + 5, mi])
                    + model[base + 8, mi] * index)
                entry = p_kv * model[base + 1, mi] * (math.ceil(model[base + 2, mi] / tp) / model[base + 2, mi])
                entries = chunk / ratio * pairs
                if group_window > 0.0:
                    entries += chunk_reread_positions(prompt_chunks, chunk, group_window)
                keys = chunk / stride * pairs if stride > 0.0 else 0.0
                groups_reread += group_layers * (entry * entries + model[base + 7, mi] * keys)
            attention_prefill += resident * groups_prompt * per_pp
            reread_prefill += resident * groups_reread * per_pp
        state_prefill = resident * prompt_chunks * state_traffic_per_sequence
        (pre_flops, pre_bytes, pre_weights, pre_kv, pre_tc, pre_tm, pre_tcomm, pre_energy, pre_attn_c,
         pre_attn_m, pre_exec) = stage_pass(
            chunk_tokens, resident * per_chunk, attention_prefill * per_chunk, reread_prefill * per_chunk,
            state_prefill * per_chunk, compute, experts, memory, communication,
        )
        pre_time = pre_exec + pre_tcomm + overhead_time
        pre_host = n_chunks * step_overhead + resident * sequence_overhead
        pre_passes = n_chunks + pp - 1
        pre_transfer = point_to_point(chunk_tokens, pp, pp_seconds_per_token, pp_latency, collective_overhead)
        ttft_wave = pre_passes * pre_time + (pp - 1) * pre_transfer + pre_host
        prefill_dynamic = n_chunks * pre_energy
        prefill_power, prefill_demand = power(idle, busy_floor, tdp, prefill_dynamic, ttft_wave)
        if prefill_demand > POWER_CAP_WARNING_RATIO * tdp:
            warnings |= codes.WARN_POWER_CAPPED

        # ── reference.phases.decode
        micro_batches = min(resident, pp)
        micro_batch = resident / micro_batches
        mean_context = input_len + output_len / 2.0
        attended = attended_positions(
            n_full, n_window, window_size, n_chunked, attention_chunk_size, mean_context
        )
        attention_decode = (micro_batch * model[M_ATTN_FLOPS_DECODE, mi] * head_fraction * per_pp * attended
                            + micro_batch * decode_recurrent_flops_per_token)
        kv_read_decode = micro_batch * (kv_per_token_layer * attended * per_pp)
        # ── reference.closed_forms.AttentionGroups.flops, .read_bytes
        if has_groups:
            groups_flops = 0.0
            groups_read = 0.0
            for slot in range(MAX_ATTENTION_GROUPS):
                base = M_G0_LAYERS + slot * N_GROUP_FIELDS
                group_layers = model[base, mi]
                if group_layers == 0.0:
                    continue
                entry = p_kv * model[base + 1, mi] * (math.ceil(model[base + 2, mi] / tp) / model[base + 2, mi])
                group_attended_entries = group_attended(mean_context, model[base + 3, mi], model[base + 4, mi],
                                                        model[base + 5, mi])
                keys = group_index_keys(mean_context, model[base + 6, mi])
                groups_read += group_layers * (entry * group_attended_entries + model[base + 7, mi] * keys)
                groups_flops += group_layers * (head_fraction * model[base + 9, mi] * group_attended_entries
                                                + model[base + 8, mi] * keys)
            attention_decode += micro_batch * groups_flops * per_pp
            kv_read_decode += micro_batch * groups_read * per_pp
        (dec_flops, dec_bytes, dec_weights, dec_kv, dec_tc, dec_tm, dec_tcomm, dec_energy, dec_attn_c,
         dec_attn_m, dec_exec) = stage_pass(
            micro_batch, micro_batch, attention_decode, kv_read_decode, micro_batch * state_traffic_per_sequence,
            compute, experts, memory, communication,
        )
        dec_time = dec_exec + dec_tcomm + overhead_time
        dec_host = step_overhead + resident * sequence_overhead
        dec_transfer = point_to_point(micro_batch, pp, pp_seconds_per_token, pp_latency, collective_overhead)
        itl = pp * dec_time + (pp - 1) * dec_transfer + dec_host
        decode_dynamic = micro_batches * dec_energy
        decode_power, decode_demand = power(idle, busy_floor, tdp, decode_dynamic, itl)
        decode_steps = output_len - 1
        if decode_steps > 0 and decode_demand > POWER_CAP_WARNING_RATIO * tdp:
            warnings |= codes.WARN_POWER_CAPPED

        # ── reference.model.ReferenceModel._result
        wave_time = ttft_wave + decode_steps * itl
        makespan = waves * wave_time
        per_makespan = 1.0 / makespan
        ttft = ttft_wave + (waves - 1) / 2.0 * wave_time
        devices = tp_pp * dp
        energy_per_device = waves * (prefill_power * ttft_wave + decode_power * decode_steps * itl)
        energy = energy_per_device * devices
        per_energy = 1.0 / energy
        # In floating point: dp·batch·tokens can pass 2**63 at the engine's limits.
        total_tokens = float(dp) * batch * (input_len + output_len)
        output_tokens = float(dp) * batch * output_len

        out[O_FITS, j] = 1.0 if fits else 0.0
        out[O_FIT_CODE, j] = fit_code
        out[O_WARNING_BITS, j] = warnings
        out[O_COMPUTE_PRECISION, j] = compute_code
        out[O_WAVES, j] = waves
        out[O_DEVICES, j] = devices
        out[O_TTFT_S, j] = ttft
        out[O_ITL_S, j] = itl
        out[O_E2E_LATENCY_S, j] = makespan
        out[O_THROUGHPUT_OUTPUT_TOK_S, j] = output_tokens * per_makespan
        out[O_THROUGHPUT_TOTAL_TOK_S, j] = total_tokens * per_makespan
        out[O_POWER_W, j] = energy * per_makespan
        out[O_ENERGY_J, j] = energy
        out[O_TOKENS_PER_JOULE, j] = total_tokens * per_energy
        out[O_OUTPUT_TOKENS_PER_JOULE, j] = output_tokens * per_energy
        out[O_TP_NEEDED, j] = tp_needed
        out[O_OFFLOAD_NEEDED, j] = offload_needed
        out[O_RIDGE_POINT, j] = peak / accel[A_RIDGE_BANDWIDTH, a]
        out[O_MEMORY_WEIGHTS_BYTES, j] = weights
        out[O_MEMORY_WEIGHTS_FAR_BYTES, j] = weights_far
        out[O_MEMORY_KV_CACHE_BYTES, j] = batch * kv_sequence
        out[O_MEMORY_RECURRENT_STATE_BYTES, j] = batch * state_per_sequence
        out[O_MEMORY_ACTIVATION_BYTES, j] = activation_bytes(batch)
        out[O_MEMORY_OVERHEAD_BYTES, j] = overhead
        out[O_MEMORY_USABLE_BYTES, j] = usable
        out[O_MEMORY_CAPACITY_BYTES, j] = capacity
        out[O_MEMORY_FAR_USABLE_BYTES, j] = far_usable
        out[O_MEMORY_MAX_BATCH, j] = max_batch
        out[O_MEMORY_RESIDENT_BATCH, j] = resident
        out[O_PREFILL_FLOPS_PER_DEVICE, j] = n_chunks * pre_flops
        out[O_PREFILL_BYTES_PER_DEVICE, j] = n_chunks * pre_bytes
        out[O_PREFILL_TIME_S, j] = ttft_wave
        out[O_PREFILL_COMPUTE_TIME_S, j] = pre_tc
        out[O_PREFILL_MEMORY_TIME_S, j] = pre_tm
        out[O_PREFILL_COMMUNICATION_TIME_S, j] = pre_tcomm
        out[O_PREFILL_OVERHEAD_TIME_S, j] = overhead_time
        out[O_PREFILL_BOUND, j] = bound_of(pre_tc, pre_tm, pre_tcomm, overhead_time + pre_host / pre_passes)
        out[O_PREFILL_POWER_PER_DEVICE_W, j] = prefill_power
        out[O_DECODE_FLOPS_PER_DEVICE, j] = micro_batches * dec_flops
        out[O_DECODE_BYTES_PER_DEVICE, j] = micro_batches * dec_bytes
        out[O_DECODE_TIME_S, j] = itl
        out[O_DECODE_COMPUTE_TIME_S, j] = dec_tc
        out[O_DECODE_MEMORY_TIME_S, j] = dec_tm
        out[O_DECODE_COMMUNICATION_TIME_S, j] = dec_tcomm
        out[O_DECODE_OVERHEAD_TIME_S, j] = overhead_time
        out[O_DECODE_BOUND, j] = bound_of(dec_tc, dec_tm, dec_tcomm, overhead_time + dec_host / pp)
        out[O_DECODE_POWER_PER_DEVICE_W, j] = decode_power
        out[O_PREFILL_WEIGHT_BYTES_PER_DEVICE, j] = n_chunks * pre_weights
        out[O_PREFILL_KV_BYTES_PER_DEVICE, j] = n_chunks * pre_kv
        out[O_DECODE_WEIGHT_BYTES_PER_DEVICE, j] = micro_batches * dec_weights
        out[O_DECODE_KV_BYTES_PER_DEVICE, j] = micro_batches * dec_kv
        out[O_MEMORY_KV_CACHE_FAR_BYTES, j] = batch * kv_sequence * kv_offload
        out[O_PREFILL_HOST_TIME_S, j] = pre_host
        out[O_DECODE_HOST_TIME_S, j] = dec_host
        out[O_PREFILL_ATTENTION_COMPUTE_TIME_S, j] = pre_attn_c
        out[O_PREFILL_ATTENTION_MEMORY_TIME_S, j] = pre_attn_m
        out[O_DECODE_ATTENTION_COMPUTE_TIME_S, j] = dec_attn_c
        out[O_DECODE_ATTENTION_MEMORY_TIME_S, j] = dec_attn_m
        out[O_PREFILL_EXECUTION_TIME_S, j] = pre_exec
        out[O_DECODE_EXECUTION_TIME_S, j] = dec_exec

        # ── reference.iteration.IterationCostModel: a forward step's coefficients
        if with_costs:
            cost[C_DENSE_FLOPS_PER_TOKEN, j] = dense_flops_per_token
            cost[C_HEAD_FLOPS_PER_SEQUENCE, j] = head_flops_per_sequence
            cost[C_SECONDS_PER_FLOP, j] = seconds_per_flop
            cost[C_ENERGY_PER_FLOP, j] = e_flop
            cost[C_OPERATOR_OVERLAP, j] = overlap
            cost[C_IS_MOE, j] = 1.0 if is_moe else 0.0
            cost[C_EXPERT_MISS, j] = expert_miss
            cost[C_EXPERTS_PER_DEVICE, j] = experts_per_device
            cost[C_EXPERT_FLOPS_PER_TOKEN, j] = expert_flops_per_token
            cost[C_EXPERT_READ_PER_TOUCHED, j] = expert_read_per_touched
            cost[C_TOP_K, j] = top_k
            cost[C_EFFECTIVE_EP, j] = effective_ep
            cost[C_Z_EP, j] = z_ep
            cost[C_DENSE_READ, j] = dense_read
            cost[C_KV_WRITE_PER_TOKEN, j] = kv_write_per_token
            cost[C_TRAFFIC_PER_TOKEN, j] = traffic_per_token
            cost[C_N_NEAR, j] = n_near
            cost[C_WEIGHT_NEAR0, j] = weight_near0
            cost[C_WEIGHT_NEAR1, j] = weight_near1
            cost[C_KV_NEAR0, j] = kv_near0
            cost[C_KV_NEAR1, j] = kv_near1
            cost[C_OFFLOAD, j] = offload
            cost[C_KV_OFFLOAD, j] = kv_offload
            cost[C_SECONDS_PER_BYTE0, j] = seconds_per_byte0
            cost[C_SECONDS_PER_BYTE1, j] = seconds_per_byte1
            cost[C_SECONDS_PER_FAR_BYTE, j] = seconds_per_far_byte
            cost[C_KV_SECONDS_PER_BYTE, j] = kv_seconds_per_byte
            cost[C_ENERGY0, j] = energy0
            cost[C_ENERGY1, j] = energy1
            cost[C_FAR_ENERGY, j] = far_energy
            cost[C_STATE_NEAR0, j] = kv_share0
            cost[C_STATE_NEAR1, j] = kv_share1
            cost[C_STATE_SECONDS_PER_BYTE, j] = state_seconds_per_byte
            cost[C_TP, j] = tp
            cost[C_ALL_REDUCE_PER_TOKEN, j] = all_reduce_per_token
            cost[C_ALL_REDUCE_SENT_PER_TOKEN, j] = all_reduce_sent_per_token
            cost[C_ALL_REDUCE_LATENCY, j] = all_reduce_latency
            cost[C_HALVING_LATENCY, j] = halving_latency
            cost[C_DOUBLING_STEPS, j] = doubling_steps
            cost[C_DOUBLING_PER_TOKEN, j] = doubling_per_token
            cost[C_DOUBLING_SENT_PER_TOKEN, j] = doubling_sent_per_token
            cost[C_TP_LATENCY, j] = tp_latency
            cost[C_COLLECTIVE_OVERHEAD, j] = collective_overhead
            cost[C_DISPATCHED_PER_TOKEN, j] = dispatched_per_token
            cost[C_EP_BANDWIDTH, j] = ep_bandwidth
            cost[C_A2A_LATENCY, j] = a2a_latency
            cost[C_LAYERS_PER_STAGE, j] = layers_per_stage
            cost[C_MOE_FRACTION, j] = moe_fraction
            cost[C_LINK_ENERGY, j] = e_link
            cost[C_OVERHEAD_TIME, j] = overhead_time
            cost[C_PP, j] = pp
            cost[C_PP_SECONDS_PER_TOKEN, j] = pp_seconds_per_token
            cost[C_PP_LATENCY, j] = pp_latency
            cost[C_STEP_OVERHEAD, j] = step_overhead
            cost[C_SEQUENCE_OVERHEAD, j] = sequence_overhead
            cost[C_IDLE, j] = idle
            cost[C_BUSY_FLOOR, j] = busy_floor
            cost[C_TDP, j] = tdp
            cost[C_PREFILL_ATTENTION_FLOPS_PER_POSITION, j] = model[M_ATTN_FLOPS_PREFILL, mi] * head_fraction * per_pp
            cost[C_DECODE_ATTENTION_FLOPS_PER_POSITION, j] = model[M_ATTN_FLOPS_DECODE, mi] * head_fraction * per_pp
            cost[C_KV_BYTES_PER_POSITION, j] = kv_per_token_layer * per_pp
            cost[C_PREFILL_RECURRENT_FLOPS_PER_TOKEN, j] = prefill_recurrent_flops_per_token
            cost[C_DECODE_RECURRENT_FLOPS_PER_TOKEN, j] = decode_recurrent_flops_per_token
            cost[C_STATE_TRAFFIC_PER_SEQUENCE, j] = state_traffic_per_sequence
            cost[C_N_FULL, j] = n_full
            cost[C_N_WINDOW, j] = n_window
            cost[C_WINDOW, j] = window_size
            cost[C_N_CHUNKED, j] = n_chunked
            cost[C_ATTENTION_CHUNK, j] = attention_chunk_size
            # ── reference.iteration.IterationCostModel's group weights: an attended entry and an
            # indexer key in positions of the model's own layers (their FLOPs and bytes over one
            # own position's), times the group's layers. The ratios are x / x = 1 exactly for a
            # group of the model's own shape (sparse, compressed), so its entries stay whole.
            group_layers_total = 0.0
            for slot in range(MAX_ATTENTION_GROUPS):
                base = M_G0_LAYERS + slot * N_GROUP_FIELDS
                row = C_G0_LAYERS + slot * N_COST_GROUP_FIELDS
                group_layers = model[base, mi]
                for field in range(N_COST_GROUP_FIELDS):
                    cost[row + field, j] = 0.0
                if group_layers == 0.0:
                    continue
                group_layers_total += group_layers
                own_decode = model[M_ATTN_FLOPS_DECODE, mi]
                own_prefill = model[M_ATTN_FLOPS_PREFILL, mi]
                entry = p_kv * model[base + 1, mi] * (math.ceil(model[base + 2, mi] / tp) / model[base + 2, mi])
                cost[row, j] = group_layers
                cost[row + 1, j] = model[base + 3, mi]
                cost[row + 2, j] = model[base + 4, mi]
                cost[row + 3, j] = model[base + 5, mi]
                cost[row + 4, j] = model[base + 6, mi]
                cost[row + 5, j] = group_layers * (model[base + 9, mi] / own_decode)
                cost[row + 6, j] = group_layers * (model[base + 10, mi] / own_prefill)
                cost[row + 7, j] = group_layers * (entry / kv_per_token_layer)
                cost[row + 8, j] = group_layers * (model[base + 8, mi] / (own_decode * head_fraction))
                cost[row + 9, j] = group_layers * (model[base + 8, mi] / (own_prefill * head_fraction))
                cost[row + 10, j] = group_layers * (model[base + 7, mi] / kv_per_token_layer)
            cost[C_GROUP_LAYERS, j] = group_layers_total
            cost[C_KV_BYTES_PER_TOKEN, j] = kv_write_per_token
            cost[C_STATE_BYTES_PER_SEQUENCE, j] = state_per_sequence
            cost[C_WEIGHTS_BYTES, j] = weights
            cost[C_USABLE_BYTES, j] = usable
            cost[C_RUNTIME_OVERHEAD_BYTES, j] = overhead
            cost[C_DEVICES_PER_REPLICA, j] = tp_pp
            cost[C_REPLICA_IDLE_W, j] = idle * tp_pp
            cost[C_PREFILL_CHUNK_TOKENS, j] = chunk
