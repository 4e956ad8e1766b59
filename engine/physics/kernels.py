"""numba kernels: the reference model (reference.py) over struct-of-arrays inputs.

One call evaluates many scenarios: each scenario picks a model column and an accelerator
column from tables packed by ``pack.py`` and writes one column of outputs. What decides a
discrete output (the fit, the largest batch, the waves, the TP needed) follows reference.py
step by step, in the same order, so it comes out the same to the bit; the stage passes and
what follows them reassociate products and multiply by reciprocals, which moves those
continuous outputs by a few units in the last place. The tests hold the two equal to 1e-9.
Kernels do no validation, no I/O and read no globals but the row numbers of ``layout.py``
(numba freezes them at compile time; the cache is keyed to the engine's source, see ``jit.py``).

Units: bytes, seconds, FLOP, B/s, FLOP/s, W, J.
"""

# ruff: noqa: B023  (the closures in evaluate_many's loop run only in the iteration that defines
# them, and numba inlines them, so late binding of loop variables cannot bite)

from __future__ import annotations

import math

import numpy as np

from ..core import codes
from .jit import jit
from .layout import *  # noqa: F403  (the table row numbers, generated from their names)

# ---- small formulas (as in reference.py) -------------------------------------------------


@jit
def inverse_normal_cdf(p):
    """Φ⁻¹(p): Acklam's rational approximation refined by one Halley step (~1e-15)."""
    a1, a2, a3 = -3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02
    a4, a5, a6 = 1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00
    b1, b2, b3 = -5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02
    b4, b5 = 6.680131188771972e01, -1.328068155288572e01
    c1, c2, c3 = -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00
    c4, c5, c6 = -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00
    d1, d2, d3, d4 = 7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00
    low = 0.02425
    if p < low:
        q = math.sqrt(-2.0 * math.log(p))
        x = (((((c1 * q + c2) * q + c3) * q + c4) * q + c5) * q + c6) / ((((d1 * q + d2) * q + d3) * q + d4) * q + 1.0)
    elif p <= 1.0 - low:
        q = p - 0.5
        r = q * q
        x = (((((a1 * r + a2) * r + a3) * r + a4) * r + a5) * r + a6) * q / (
            ((((b1 * r + b2) * r + b3) * r + b4) * r + b5) * r + 1.0
        )
    else:
        q = math.sqrt(-2.0 * math.log(1.0 - p))
        x = -(((((c1 * q + c2) * q + c3) * q + c4) * q + c5) * q + c6) / ((((d1 * q + d2) * q + d3) * q + d4) * q + 1.0)
    error = 0.5 * math.erfc(-x / math.sqrt(2.0)) - p
    u = error * math.sqrt(2.0 * math.pi) * math.exp(x * x / 2.0)
    return x - u / (1.0 + x * u / 2.0)


@jit
def expected_max_standard_normal(n):
    if n <= 1:
        return 0.0
    return inverse_normal_cdf((n - 0.375) / (n + 0.25))


@jit
def token_imbalance(assignments, ep, z_ep):
    """As reference.token_imbalance; ``z_ep`` = expected_max_standard_normal(ep), computed
    once per scenario."""
    if ep <= 1 or assignments <= 0.0:
        return 1.0
    imbalance = 1.0 + z_ep * math.sqrt((ep - 1) / assignments)
    return min(imbalance, float(ep))


@jit
def experts_touched_busiest_device(experts_per_device, touch_probability, ep, z_ep):
    mean = experts_per_device * touch_probability
    if ep <= 1:
        return mean
    spread = math.sqrt(experts_per_device * touch_probability * (1.0 - touch_probability))
    return min(float(experts_per_device), mean + z_ep * spread)


@jit
def causal_positions(tokens, window):
    if window <= 0 or tokens <= window:
        return tokens * (tokens + 1) / 2.0
    return window * (window + 1) / 2.0 + (tokens - window) * float(window)


@jit
def chunk_reread_positions(n_chunks, chunk, window):
    """As reference.chunk_reread_positions, given the prompt's chunk count ⌈tokens/chunk⌉."""
    if n_chunks <= 1:
        return 0.0
    if window <= 0:
        return chunk * n_chunks * (n_chunks - 1) / 2.0
    below_window = min(n_chunks, math.ceil(window / chunk))
    return chunk * below_window * (below_window - 1) / 2.0 + (n_chunks - below_window) * float(window)


@jit
def chunked_causal_positions(tokens, chunk):
    full_chunks = tokens // chunk
    rest = tokens - full_chunks * chunk
    return full_chunks * chunk * (chunk + 1) / 2.0 + rest * (rest + 1) / 2.0


@jit
def stored_positions(n_full, n_window, window, n_chunked, attention_chunk, context):
    """KV entries a sequence keeps, summed over layers (reference._sizes.stored_positions)."""
    positions = n_full * context
    if n_window != 0.0:
        positions += n_window * min(context, window)
    if n_chunked != 0.0:
        positions += n_chunked * min(context, attention_chunk)
    return positions


@jit
def attended_positions(n_full, n_window, window, n_chunked, attention_chunk, context):
    """KV entries a new token reads, summed over layers (reference._sizes.attended_positions)."""
    positions = n_full * context
    if n_window != 0.0:
        positions += n_window * min(context, window)
    if n_chunked != 0.0:
        positions += n_chunked * (context if context <= attention_chunk else (attention_chunk + 1) / 2.0)
    return positions


@jit
def network(group, domain, has_scale_out, scale_up_bandwidth, scale_up_latency, scale_out_bandwidth,
            scale_out_latency, efficiency, peer_bandwidth, peers):
    """(bandwidth, latency, crosses the scale-up domain) for a group of devices, each exchanging
    with ``peers`` others at once; on a switchless mesh (peer_bandwidth > 0) only over those links."""
    if group <= domain or not has_scale_out:
        bandwidth = scale_up_bandwidth
        if peer_bandwidth > 0.0:
            bandwidth = min(bandwidth, max(peers, 1) * peer_bandwidth)
        return bandwidth * efficiency, scale_up_latency, group > domain
    return scale_out_bandwidth * efficiency, scale_out_latency, True


@jit
def fill_tiers(free0, free1, n_near, amount):
    """Place ``amount`` fastest first; (share0, share1, free0, free1) as reference._fill."""
    share0 = 0.0
    share1 = 0.0
    if amount <= 0.0:
        if n_near > 1:
            share1 = 1.0
        else:
            share0 = 1.0
        return share0, share1, free0, free1
    left = amount
    taken = min(max(free0, 0.0), left)
    share0 = taken / amount
    free0 = free0 - taken
    left = left - taken
    if n_near > 1:
        taken = min(max(free1, 0.0), left)
        share1 = taken / amount
        free1 = free1 - taken
        left = left - taken
        if left > 0.0:
            share1 = share1 + left / amount
    elif left > 0.0:
        share0 = share0 + left / amount
    return share0, share1, free0, free1


@jit
def smallest_fitting_tp(
    tp, usable, offload, fixed_and_vocab_bytes, norm_bytes, expert_bytes, kv_shards_per_tp, kv_shards,
    kv_bytes_all_heads, p_a, d, split_width, logits_per_sequence, overhead, prompt_workspace_tokens,
    full_context_positions, pp, kv_offload,
):
    """reference._tp_needed: the smallest tp·2^j (up to MAX_TP_SEARCH) whose memory holds the
    weights (less the offloaded part) and one full-context sequence; 0 if none does.

    The arguments are the sizes at ``tp``, split into the parts that shrink as 1/tp and those
    that do not. A part divided by tp·2^j equals the part divided by tp, times 2^-j, to the
    bit (scaling by a power of two is exact and commutes with rounding), so a trial costs two
    divisions instead of recomputing every size and answers what the reference answers.

    Every weight term but the norms shrinks as 1/tp and everything else needs room, so tp·2^j
    cannot fit while (weights − norms)·2^-j·(1 − offload) exceeds usable − runtime overhead:
    the search starts one doubling below that bound, a margin for rounding.
    """
    room = usable - overhead
    if room <= 0.0:
        return 0
    weights = fixed_and_vocab_bytes + norm_bytes + expert_bytes
    scaled = (weights - norm_bytes) * (1.0 - offload)
    first_doubling = 0
    if scaled > room:
        mantissa, exponent = math.frexp(scaled / room)  # ⌈log2⌉ is exponent, less 1 at exactly 0.5
        first_doubling = max(exponent - (2 if mantissa == 0.5 else 1), 0)
        if first_doubling > MAX_TP_SEARCH_DOUBLINGS:
            return 0
    trial_tp = tp * (1 << first_doubling)
    scale = 1.0 / (1 << first_doubling)
    kept = 1.0 - kv_offload
    while trial_tp <= MAX_TP_SEARCH:
        trial_weights = fixed_and_vocab_bytes * scale + norm_bytes + expert_bytes * scale
        kv_per_token_layer = kv_bytes_all_heads * (math.ceil(kv_shards_per_tp * scale) / kv_shards)
        activation_per_token = p_a * (2 * d + split_width * scale)
        one_sequence = (
            overhead
            + prompt_workspace_tokens * activation_per_token
            + logits_per_sequence * scale
            + kv_per_token_layer * full_context_positions / pp * kept
        )
        if trial_weights * (1.0 - offload) <= usable - one_sequence:
            return trial_tp
        trial_tp *= 2
        scale *= 0.5
    return 0


@jit
def execution_time(compute, memory, attention_compute, attention_memory, overlap):
    """reference.execution_time: the whole pass's roofline where operators overlap, each
    operator's own (linear layers, attention) where they run one after another."""
    whole = max(compute, memory)
    by_operator = max(compute - attention_compute, memory - attention_memory) + max(attention_compute, attention_memory)
    return overlap * whole + (1.0 - overlap) * by_operator


@jit
def bound_of(compute_time, memory_time, communication_time, overhead_time):
    """Index of the largest term; ties go to the earlier one (compute, memory, comm, overhead)."""
    best = codes.BOUND_COMPUTE
    largest = compute_time
    if memory_time > largest:
        best = codes.BOUND_MEMORY
        largest = memory_time
    if communication_time > largest:
        best = codes.BOUND_COMMUNICATION
        largest = communication_time
    if overhead_time > largest:
        best = codes.BOUND_OVERHEAD
    return best


# ---- every scenario --------------------------------------------------------------------------


@jit
def evaluate_many(scenarios, model, accel, peaks, fallback, constants, out):
    """Evaluate every column of ``scenarios`` into the same column of ``out``.

    One scenario is the body of this loop rather than a function of its own: a jitted call
    that takes arrays increments and decrements each array's reference count (atomically) on
    every call, which took about half the time of an evaluation. The helpers it calls take
    numbers only, for the same reason.
    """
    z_by_group = np.full(Z_REMEMBERED_GROUPS, -1.0)  # negative: not computed yet (z >= 0)
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
        natural = P_BF16 if requested == P_FP16 else requested
        if compute_code != natural:
            warnings |= codes.WARN_COMPUTE_FALLBACK
        peak = peaks[compute_code, a]

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

        # -- sizes per device (reference._sizes), in the reference's operation order: they decide
        #    the fit, the largest batch and the waves, which must come out the same to the bit.
        #    The factors that do not shrink with tp are kept for the TP-needed search.
        kv_offload = requested_kv_offload if has_far else 0.0
        chunk = constants[K_CHUNK]
        overhead = accel[A_RUNTIME_OVERHEAD, a]
        tp_pp = tp * pp
        p_hi = max(p_w, UNQUANTISED_BYTES)
        router = model[M_ROUTER, mi]
        fixed_bytes = ((model[M_BLOCK_FIXED, mi] - router) * p_w + router * p_hi) / tp_pp
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
        one_sequence = (
            overhead
            + prompt_workspace_tokens * activation_per_token
            + logits_per_sequence
            + kv_per_token_layer * full_context_positions / pp * (1.0 - kv_offload)
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

        if max_context > model[M_MAX_CONTEXT, mi]:
            warnings |= codes.WARN_CONTEXT_EXCEEDS_MODEL
        kv_sequence = kv_per_token_layer * full_context_positions / pp

        offload = requested_offload if has_far else 0.0
        weights_far = weights * offload
        weights_near = weights - weights_far
        kv_sequence_near = kv_sequence * (1.0 - kv_offload)
        kv_sequence_far = kv_sequence * kv_offload

        available = usable - weights_near - overhead
        max_batch = 0.0
        if available > 0.0:
            per_sequence = kv_sequence_near + logits_per_sequence
            switch = chunk / input_len
            unchunked = math.floor(available / (per_sequence + input_len * activation_per_token))
            max_batch = min(unchunked, math.floor(switch))
            chunked = math.floor((available - chunk * activation_per_token) / per_sequence)
            if chunked >= switch:
                max_batch = max(max_batch, chunked)
            max_batch = min(max(max_batch, 0.0), MAX_BATCH_REPORTED)
        near_max_batch = max_batch
        if kv_sequence_far > 0.0:
            far_room = far_usable - weights_far
            far_max_batch = math.floor(min(far_room / kv_sequence_far, MAX_BATCH_REPORTED)) if far_room > 0.0 else 0.0
            max_batch = min(max_batch, far_max_batch)

        def activation_bytes(count):
            return min(count * input_len, chunk) * activation_per_token + count * logits_per_sequence

        if fit_code == codes.FIT_OK:
            if weights_near + overhead + activation_bytes(1) > usable:
                fit_code = codes.FIT_WEIGHTS_DO_NOT_FIT
            elif near_max_batch < 1:
                fit_code = codes.FIT_KV_DOES_NOT_FIT_ONE_SEQUENCE
            elif weights_far + kv_sequence_far > far_usable:
                fit_code = codes.FIT_FAR_TIER_TOO_SMALL
        fits = fit_code == codes.FIT_OK
        if weights_near > constants[K_STARVATION] * usable:
            warnings |= codes.WARN_KV_STARVED

        waves = 1
        resident = batch
        if fits and batch > max_batch:
            waves = int(math.ceil(batch / max_batch))
            resident = int(math.ceil(batch / waves))
            warnings |= codes.WARN_KV_WAVES

        tp_needed = smallest_fitting_tp(
            tp, usable, offload, fixed_and_vocab_bytes, norm_bytes, expert_bytes, kv_shards_per_tp, kv_shards,
            kv_bytes_all_heads, p_a, d, split_width, logits_per_sequence, overhead, prompt_workspace_tokens,
            full_context_positions, pp, kv_offload,
        )
        room_for_weights = usable - one_sequence
        offload_needed = -1.0
        if has_far and room_for_weights > 0.0:
            offload_needed = max(0.0, 1.0 - room_for_weights / weights)
            if offload_needed * weights + kv_sequence_far > far_usable:
                offload_needed = -1.0

        # Placement: workspace in the slowest near tier, then weights and KV fastest first.
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
        kv_share0, kv_share1, free0, free1 = fill_tiers(free0, free1, n_near, resident * kv_sequence_near)

        # From here on every figure is a continuous output: the stage passes below reassociate the
        # reference's products and multiply by reciprocals worked out once per scenario, which
        # moves results by a few units in the last place (the tests hold them to 1e-9).
        stack = accel[A_STACK, a]
        eta_memory = accel[A_ETA_MEMORY, a]
        seconds_per_byte0 = 1.0 / (accel[A_NEAR0_BANDWIDTH, a] * eta_memory * stack)
        seconds_per_byte1 = 1.0 / (accel[A_NEAR1_BANDWIDTH, a] * eta_memory * stack) if n_near > 1 else 0.0
        seconds_per_far_byte = 1.0 / (accel[A_FAR_BANDWIDTH, a] * accel[A_ETA_LINK, a] * stack) if has_far else 1.0
        energy0 = accel[A_NEAR0_ENERGY, a]
        energy1 = accel[A_NEAR1_ENERGY, a]
        far_energy = accel[A_FAR_ENERGY, a] if has_far else 0.0

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

        compute_rate = peak * accel[A_ETA_COMPUTE, a] * stack
        seconds_per_flop = 1.0 / compute_rate
        layer_overhead = accel[A_LAYER_OVERHEAD, a]
        if p_a < 2.0:
            layer_overhead = layer_overhead + accel[A_ACTIVATION_QUANT_OVERHEAD, a]
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

        # Per token (or sequence) of a stage pass: everything in it is linear in the tokens but
        # the routed experts' load, which is recomputed per pass.
        per_tp_pp = 1.0 / tp_pp
        per_pp = 1.0 / pp
        dense_flops_per_token = 2.0 * model[M_BLOCK_FIXED, mi] * per_tp_pp
        head_flops_per_sequence = 2.0 * vocab * d * per_tp_pp
        kv_write_per_token = kv_per_token_layer * n_kv_layers * per_pp
        traffic_per_token = layers_per_stage * p_a * (4.0 * d + 2.0 * ffn_width / tp)
        weight_kept = 1.0 - offload
        kv_kept = 1.0 - kv_offload
        weight_near0 = weight_kept * w_share0
        weight_near1 = weight_kept * w_share1
        kv_near0 = kv_kept * kv_share0
        kv_near1 = kv_kept * kv_share1
        kv_seconds_per_byte = kv_near0 * seconds_per_byte0 + kv_offload * seconds_per_far_byte
        if n_near > 1:
            kv_seconds_per_byte = kv_seconds_per_byte + kv_near1 * seconds_per_byte1
        message_per_token = d * p_a
        # All-reduce algorithms (reference.all_reduce): the ring for any group; for a power-of-two
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
        dense_fraction = 1.0 - moe_fraction

        def stage_pass(tokens, sequences, attention_flops, kv_read):
            """(flops, bytes, weight bytes, KV bytes, compute, memory, communication times,
            dynamic energy)."""
            expert_flops = 0.0
            expert_read = 0.0
            imbalance = 1.0
            if effective_ep > 1:
                imbalance = token_imbalance(tokens * top_k, effective_ep, z_ep)
            if is_moe:
                touch = 1.0 - expert_miss**tokens
                touched = experts_touched_busiest_device(experts_per_device, touch, effective_ep, z_ep)
                expert_flops = tokens * expert_flops_per_token * imbalance
                expert_read = expert_read_per_touched * touched
            flops = tokens * dense_flops_per_token + sequences * head_flops_per_sequence + expert_flops + attention_flops
            weight_bytes = dense_read + expert_read
            kv_bytes = kv_read + tokens * kv_write_per_token
            traffic = tokens * traffic_per_token
            near0 = weight_bytes * weight_near0 + kv_bytes * kv_near0
            far = weight_bytes * offload + kv_bytes * kv_offload
            if n_near > 1:
                near1 = weight_bytes * weight_near1 + kv_bytes * kv_near1 + traffic
                memory_time = near0 * seconds_per_byte0 + near1 * seconds_per_byte1 + far * seconds_per_far_byte
                memory_energy = near0 * energy0 + near1 * energy1 + far * far_energy
                total_bytes = near0 + near1 + far
            else:
                near0 = near0 + traffic
                memory_time = near0 * seconds_per_byte0 + far * seconds_per_far_byte
                memory_energy = near0 * energy0 + far * far_energy
                total_bytes = near0 + far

            all_reduce = tokens * all_reduce_per_token + all_reduce_latency
            all_reduce_sent = tokens * all_reduce_sent_per_token
            if doubling_steps > 0.0:
                all_reduce = min(all_reduce, tokens * all_reduce_per_token + halving_latency)
                doubling = tokens * doubling_per_token + doubling_steps * tp_latency
                if doubling < all_reduce:
                    all_reduce = doubling
                    all_reduce_sent = tokens * doubling_sent_per_token
            if tp > 1:
                all_reduce = all_reduce + collective_overhead
            dense_layer_time = 2.0 * all_reduce
            dense_layer_sent = 2.0 * all_reduce_sent
            if effective_ep > 1:
                dispatched = tokens * dispatched_per_token * imbalance
                a2a = dispatched / ep_bandwidth + a2a_latency + collective_overhead
                moe_layer_time = all_reduce + 2.0 * a2a
                moe_layer_sent = all_reduce_sent + 2.0 * dispatched
            else:
                moe_layer_time = dense_layer_time
                moe_layer_sent = dense_layer_sent
            comm_time = layers_per_stage * (dense_fraction * dense_layer_time + moe_fraction * moe_layer_time)
            comm_sent = layers_per_stage * (dense_fraction * dense_layer_sent + moe_fraction * moe_layer_sent)

            compute_time = flops * seconds_per_flop
            energy = flops * e_flop + memory_energy + comm_sent * e_link
            attention_compute = attention_flops * seconds_per_flop
            attention_memory = kv_bytes * kv_seconds_per_byte
            execution = execution_time(compute_time, memory_time, attention_compute, attention_memory, overlap)
            return (flops, total_bytes, weight_bytes, kv_bytes, compute_time, memory_time, comm_time, energy,
                    attention_compute, attention_memory, execution)

        pp_seconds_per_token = message_per_token / pp_bandwidth

        def point_to_point(tokens):
            if pp <= 1:
                return 0.0
            return tokens * pp_seconds_per_token + pp_latency + collective_overhead

        # -- prefill
        prompt_tokens = resident * input_len
        n_chunks = math.ceil(prompt_tokens / chunk)
        per_chunk = 1.0 / n_chunks
        chunk_tokens = prompt_tokens * per_chunk
        window_causal = n_window * causal_positions(input_len, window) if n_window != 0.0 else 0.0
        chunked_causal = n_chunked * chunked_causal_positions(input_len, attention_chunk) if n_chunked != 0.0 else 0.0
        attention_prefill = (
            resident * model[M_ATTN_FLOPS_PREFILL, mi] * head_fraction * per_pp
            * (n_full * causal_positions(input_len, 0) + window_causal + chunked_causal)
        )
        prompt_chunks = math.ceil(input_len / chunk)
        window_reread = n_window * chunk_reread_positions(prompt_chunks, chunk, window) if n_window != 0.0 else 0.0
        chunked_reread = (
            n_chunked * chunk_reread_positions(prompt_chunks, chunk, attention_chunk) if n_chunked != 0.0 else 0.0
        )
        reread_prefill = (
            resident * kv_per_token_layer * per_pp
            * (n_full * chunk_reread_positions(prompt_chunks, chunk, 0) + window_reread + chunked_reread)
        )
        (pre_flops, pre_bytes, pre_weights, pre_kv, pre_tc, pre_tm, pre_tcomm, pre_energy, pre_attn_c,
         pre_attn_m, pre_exec) = stage_pass(
            chunk_tokens, resident * per_chunk, attention_prefill * per_chunk, reread_prefill * per_chunk
        )
        pre_time = pre_exec + pre_tcomm + overhead_time
        pre_host = n_chunks * step_overhead + resident * sequence_overhead
        pre_passes = n_chunks + pp - 1
        ttft_wave = pre_passes * pre_time + (pp - 1) * point_to_point(chunk_tokens) + pre_host
        prefill_dynamic = n_chunks * pre_energy
        prefill_demand = idle + prefill_dynamic / ttft_wave
        prefill_power = min(tdp, max(busy_floor, prefill_demand))
        if prefill_demand > POWER_CAP_WARNING_RATIO * tdp:
            warnings |= codes.WARN_POWER_CAPPED

        # -- decode
        micro_batches = min(resident, pp)
        micro_batch = resident / micro_batches
        mean_context = input_len + output_len / 2.0
        attended = attended_positions(
            n_full, n_window, window_size, n_chunked, attention_chunk_size, mean_context
        )
        attention_decode = micro_batch * model[M_ATTN_FLOPS_DECODE, mi] * head_fraction * per_pp * attended
        kv_read_decode = micro_batch * (kv_per_token_layer * attended * per_pp)
        (dec_flops, dec_bytes, dec_weights, dec_kv, dec_tc, dec_tm, dec_tcomm, dec_energy, dec_attn_c,
         dec_attn_m, dec_exec) = stage_pass(micro_batch, micro_batch, attention_decode, kv_read_decode)
        dec_time = dec_exec + dec_tcomm + overhead_time
        dec_host = step_overhead + resident * sequence_overhead
        itl = pp * dec_time + (pp - 1) * point_to_point(micro_batch) + dec_host
        decode_dynamic = micro_batches * dec_energy
        decode_demand = idle + decode_dynamic / itl
        decode_power = min(tdp, max(busy_floor, decode_demand))
        decode_steps = output_len - 1
        if decode_steps > 0 and decode_demand > POWER_CAP_WARNING_RATIO * tdp:
            warnings |= codes.WARN_POWER_CAPPED

        # -- whole run
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
