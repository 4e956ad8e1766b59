"""The kernels' helpers: each the twin of a reference function of the same name (in
``reference/closed_forms.py`` or the step module its docstring names), with the same
arguments in the same order where the reference allows; where it does not (a value the kernel
computes once per scenario, such as z_ep, or numbers in place of an object), the docstring
says so. The tests hold each pair equal (tests/test_twins.py).

Every helper takes and returns numbers only: a jitted call that takes an array pays for
reference counting on every call (see evaluate.py).

Units: bytes, seconds, FLOP, B/s, FLOP/s, W, J.
"""

from __future__ import annotations

import math

from ...core import codes
from ..jit import jit
from ..layout import MAX_TP_SEARCH, MAX_TP_SEARCH_DOUBLINGS

# ---- the busiest of several devices (reference.closed_forms) ---------------------------------


@jit
def inverse_normal_cdf(p):
    """reference.closed_forms.inverse_normal_cdf, Φ⁻¹(p): Acklam's rational approximation refined by one Halley step (~1e-15)."""
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
    """As reference.closed_forms.expected_max_standard_normal."""
    if n <= 1:
        return 0.0
    return inverse_normal_cdf((n - 0.375) / (n + 0.25))


@jit
def token_imbalance(assignments, ep, z_ep):
    """As reference.closed_forms.token_imbalance; ``z_ep`` = expected_max_standard_normal(ep), computed
    once per scenario."""
    if ep <= 1 or assignments <= 0.0:
        return 1.0
    imbalance = 1.0 + z_ep * math.sqrt((ep - 1) / assignments)
    return min(imbalance, float(ep))


@jit
def experts_touched_busiest_device(experts_per_device, touch_probability, ep, z_ep):
    """As reference.closed_forms.experts_touched_busiest_device, given z_ep."""
    mean = experts_per_device * touch_probability
    if ep <= 1:
        return mean
    spread = math.sqrt(experts_per_device * touch_probability * (1.0 - touch_probability))
    return min(float(experts_per_device), mean + z_ep * spread)


# ---- attention positions (reference.closed_forms) ----------------------------------------------


@jit
def causal_positions(tokens, window):
    """As reference.closed_forms.causal_positions."""
    if window <= 0 or tokens <= window:
        return tokens * (tokens + 1) / 2.0
    return window * (window + 1) / 2.0 + (tokens - window) * float(window)


@jit
def chunk_reread_positions(n_chunks, chunk, window):
    """As reference.closed_forms.chunk_reread_positions, given the prompt's chunk count ⌈tokens/chunk⌉."""
    if n_chunks <= 1:
        return 0.0
    if window <= 0:
        return chunk * n_chunks * (n_chunks - 1) / 2.0
    below_window = min(n_chunks, math.ceil(window / chunk))
    return chunk * below_window * (below_window - 1) / 2.0 + (n_chunks - below_window) * float(window)


@jit
def chunked_causal_positions(tokens, chunk):
    """As reference.closed_forms.chunked_causal_positions."""
    full_chunks = tokens // chunk
    rest = tokens - full_chunks * chunk
    return full_chunks * chunk * (chunk + 1) / 2.0 + rest * (rest + 1) / 2.0


@jit
def stored_positions(n_full, n_window, window, n_chunked, attention_chunk, context):
    """KV entries a sequence keeps, summed over layers (reference.closed_forms.stored_positions)."""
    positions = n_full * context
    if n_window != 0.0:
        positions += n_window * min(context, window)
    if n_chunked != 0.0:
        positions += n_chunked * min(context, attention_chunk)
    return positions


@jit
def attended_positions(n_full, n_window, window, n_chunked, attention_chunk, context):
    """KV entries a new token reads, summed over layers (reference.closed_forms.attended_positions)."""
    positions = n_full * context
    if n_window != 0.0:
        positions += n_window * min(context, window)
    if n_chunked != 0.0:
        positions += n_chunked * (context if context <= attention_chunk else (attention_chunk + 1) / 2.0)
    return positions


# ---- attention groups (reference.closed_forms) ------------------------------------------------


@jit
def capped_floor_sum(tokens, ratio, cap):
    """As reference.closed_forms.capped_floor_sum."""
    q = tokens // ratio
    if 0 < cap < q:
        q = cap
    return ratio * q * (q - 1) / 2.0 + q * float(tokens - q * ratio + 1)


@jit
def group_entries(context, ratio):
    """As reference.closed_forms.group_entries."""
    return context if ratio <= 1 else float(math.floor(context / ratio))


@jit
def group_stored(context, ratio, window):
    """As reference.closed_forms.group_stored."""
    stored = group_entries(context, ratio)
    if window > 0:
        stored += min(context, window)
    return stored


@jit
def group_attended(context, ratio, window, top_k):
    """As reference.closed_forms.group_attended."""
    attended = group_entries(context, ratio)
    if top_k > 0:
        attended = min(attended, top_k)
    if window > 0:
        attended += min(context, window)
    return attended


@jit
def group_index_keys(context, stride):
    """As reference.closed_forms.group_index_keys."""
    if stride <= 0:
        return 0.0
    return group_entries(context, stride)


@jit
def group_prompt_attended(tokens, ratio, window, top_k):
    """As reference.closed_forms.group_prompt_attended."""
    positions = capped_floor_sum(tokens, ratio, top_k)
    if window > 0:
        positions += causal_positions(tokens, window)
    return positions


# ---- layers with a fixed-size state (reference.closed_forms) -----------------------------------


@jit
def shard_share(shards, shards_per_tp):
    """reference.closed_forms.shard_share, given shards / tp in place of tp (the TP-needed search
    scales it by powers of two, exactly): ⌈shards/tp⌉/shards, 0 for a kind the model lacks."""
    if shards <= 0.0:
        return 0.0
    return math.ceil(shards_per_tp) / shards


@jit
def recurrent_per_device(n_deltanet, deltanet_value, deltanet_shards, deltanet_shards_per_tp, n_mamba, mamba_value,
                         mamba_shards, mamba_shards_per_tp):
    """reference.closed_forms.RecurrentLayers.per_device, given each kind's shards / tp: a
    per-layer figure summed over the DeltaNet and Mamba layers, the busiest device's share of
    each kind's heads."""
    return (n_deltanet * deltanet_value * shard_share(deltanet_shards, deltanet_shards_per_tp)
            + n_mamba * mamba_value * shard_share(mamba_shards, mamba_shards_per_tp))


# ---- networks and memory (reference.network, reference.memory) --------------------------------


@jit
def network(group, domain, has_scale_out, scale_up_bandwidth, scale_up_latency, scale_out_bandwidth,
            scale_out_latency, efficiency, peer_bandwidth, peers):
    """reference.network.network: (bandwidth, latency, crosses the scale-up domain) for a group of devices, each exchanging
    with ``peers`` others at once; on a switchless mesh (peer_bandwidth > 0) only over those links."""
    if group <= domain or not has_scale_out:
        bandwidth = scale_up_bandwidth
        if peer_bandwidth > 0.0:
            bandwidth = min(bandwidth, max(peers, 1) * peer_bandwidth)
        return bandwidth * efficiency, scale_up_latency, group > domain
    return scale_out_bandwidth * efficiency, scale_out_latency, True


@jit
def fill_tiers(free0, free1, n_near, amount):
    """Place ``amount`` fastest first; (share0, share1, free0, free1) as reference.memory.fill."""
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
    full_context_positions, pp, kv_offload, recurrent, groups,
):
    """reference.memory.tp_needed: the smallest tp·2^j (up to MAX_TP_SEARCH) whose memory holds the
    weights (less the offloaded part) and one full-context sequence; 0 if none does.
    ``recurrent`` is (DeltaNet layers, their state bytes per layer, their shards, Mamba layers,
    theirs, theirs): the fixed-size state one sequence keeps, split by heads as the KV cache is.
    ``groups`` is, per attention-group slot, (its entries at full context over all KV heads,
    its KV heads, its indexer keys' bytes): reference.closed_forms.AttentionGroups.kv_bytes.

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
    n_deltanet, deltanet_state, deltanet_shards, n_mamba, mamba_state, mamba_shards = recurrent
    deltanet_shards_per_tp = deltanet_shards / tp
    mamba_shards_per_tp = mamba_shards / tp
    while trial_tp <= MAX_TP_SEARCH:
        trial_weights = fixed_and_vocab_bytes * scale + norm_bytes + expert_bytes * scale
        kv_per_token_layer = kv_bytes_all_heads * (math.ceil(kv_shards_per_tp * scale) / kv_shards)
        activation_per_token = p_a * (2 * d + split_width * scale)
        groups_kv = 0.0
        for slot in range(len(groups) // 3):
            group_shards = groups[3 * slot + 1]
            if group_shards > 0.0:
                groups_kv += (groups[3 * slot] * (math.ceil(group_shards / tp * scale) / group_shards)
                              + groups[3 * slot + 2])
        one_sequence = (
            overhead
            + prompt_workspace_tokens * activation_per_token
            + logits_per_sequence * scale
            + (kv_per_token_layer * full_context_positions + groups_kv) / pp * kept
            + recurrent_per_device(n_deltanet, deltanet_state, deltanet_shards, deltanet_shards_per_tp * scale,
                                   n_mamba, mamba_state, mamba_shards, mamba_shards_per_tp * scale) / pp
        )
        if trial_weights * (1.0 - offload) <= usable - one_sequence:
            return trial_tp
        trial_tp *= 2
        scale *= 0.5
    return 0


# ---- a pass's times (reference.stage, reference.closed_forms) ---------------------------------


@jit
def execution_time(compute, memory, attention_compute, attention_memory, overlap):
    """reference.stage.execution_time: the whole pass's roofline where operators overlap, each
    operator's own (linear layers, attention) where they run one after another."""
    whole = max(compute, memory)
    by_operator = max(compute - attention_compute, memory - attention_memory) + max(attention_compute, attention_memory)
    return overlap * whole + (1.0 - overlap) * by_operator


@jit
def bound_of(compute_time, memory_time, communication_time, overhead_time):
    """reference.stage.bound_of: index of the largest term; ties go to the earlier one (compute,
    memory, communication, overhead)."""
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


@jit
def layer_overhead_s(per_layer_overhead, activation_quantization_overhead, activation_bytes):
    """reference.closed_forms.layer_overhead_s, given the class's two figures in place of the
    class: the floor per layer per pass, plus the kernels that quantise each linear product's
    input when activations are narrower than 16 bits."""
    if activation_bytes < 2.0:
        return per_layer_overhead + activation_quantization_overhead
    return per_layer_overhead


# ---- one stage pass (reference.stage, reference.network) -------------------------------------


@jit(inline=True)
def stage_pass(tokens, sequences, attention_flops, kv_read, state_bytes, compute, experts, memory, communication):
    """reference.stage.Stage.stage_pass over the coefficients evaluate_many works out once per
    scenario (the rows of ``layout.COST_ROWS`` hold them by these names): everything in a pass
    is linear in its tokens but the routed experts' load and the all-reduce algorithm, which
    are worked out per pass.

    numba inlines it into its callers: called as a function of its own it cost evaluate_many
    about 10% (measured against the loop with the pass written in place). The coefficients come
    in four tuples, as a call of more than 30 arguments is made with *args, which numba cannot
    inline:

    - compute: (dense FLOPs per token, LM-head FLOPs per sequence, s per FLOP, J per FLOP,
      operator overlap);
    - experts: (is a mixture of experts, 1 − k/E, experts per device, expert FLOPs per token,
      expert bytes per touched expert, k, effective EP, z_EP);
    - memory: (dense weights read, KV bytes written per token, activation traffic per token,
      near tiers, the weights' and the KV cache's shares of near tiers 0 and 1, their shares of
      the far tier, s per byte of near tiers 0 and 1 and of the far tier, s per KV byte, J per
      byte of near tiers 0 and 1 and of the far tier, the recurrent state's shares of near
      tiers 0 and 1 and s per state byte);
    - communication: (tp, all-reduce s and bytes per token and its latency for the ring, the
      halving-doubling latency, doubling steps, s and bytes per token of recursive doubling,
      TP latency, the fixed cost of an operation, dispatched bytes per token, EP bandwidth,
      all-to-all latency, layers per stage, share of MoE layers, J per link byte).

    ``state_bytes`` is the recurrent state the pass reads and writes (read where the near KV
    cache is, never offloaded).

    Returns (FLOPs, bytes, weight bytes, KV and state bytes, compute time, memory time,
    communication time, dynamic energy, attention compute time, attention memory time,
    execution time)."""
    dense_flops_per_token, head_flops_per_sequence, seconds_per_flop, e_flop, overlap = compute
    (is_moe, expert_miss, experts_per_device, expert_flops_per_token, expert_read_per_touched, top_k, effective_ep,
     z_ep) = experts
    (dense_read, kv_write_per_token, traffic_per_token, n_near, weight_near0, weight_near1, kv_near0, kv_near1,
     offload, kv_offload, seconds_per_byte0, seconds_per_byte1, seconds_per_far_byte, kv_seconds_per_byte,
     energy0, energy1, far_energy, state_near0, state_near1, state_seconds_per_byte) = memory
    (tp, all_reduce_per_token, all_reduce_sent_per_token, all_reduce_latency, halving_latency, doubling_steps,
     doubling_per_token, doubling_sent_per_token, tp_latency, collective_overhead, dispatched_per_token,
     ep_bandwidth, a2a_latency, layers_per_stage, moe_fraction, e_link) = communication
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
    near0 = weight_bytes * weight_near0 + kv_bytes * kv_near0 + state_bytes * state_near0
    far = weight_bytes * offload + kv_bytes * kv_offload
    if n_near > 1:
        near1 = weight_bytes * weight_near1 + kv_bytes * kv_near1 + traffic + state_bytes * state_near1
        memory_time = near0 * seconds_per_byte0 + near1 * seconds_per_byte1 + far * seconds_per_far_byte
        memory_energy = near0 * energy0 + near1 * energy1 + far * far_energy
        total_bytes = near0 + near1 + far
    else:
        near0 = near0 + traffic
        memory_time = near0 * seconds_per_byte0 + far * seconds_per_far_byte
        memory_energy = near0 * energy0 + far * far_energy
        total_bytes = near0 + far

    # All-reduce algorithms (reference.closed_forms.all_reduce): the ring for any group; for a
    # power-of-two group (doubling_steps > 0) also recursive halving-doubling and recursive doubling.
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
    dense_fraction = 1.0 - moe_fraction
    comm_time = layers_per_stage * (dense_fraction * dense_layer_time + moe_fraction * moe_layer_time)
    comm_sent = layers_per_stage * (dense_fraction * dense_layer_sent + moe_fraction * moe_layer_sent)

    compute_time = flops * seconds_per_flop
    energy = flops * e_flop + memory_energy + comm_sent * e_link
    attention_compute = attention_flops * seconds_per_flop
    attention_memory = kv_bytes * kv_seconds_per_byte + state_bytes * state_seconds_per_byte
    execution = execution_time(compute_time, memory_time, attention_compute, attention_memory, overlap)
    return (flops, total_bytes, weight_bytes, kv_bytes + state_bytes, compute_time, memory_time, comm_time, energy,
            attention_compute, attention_memory, execution)


@jit
def point_to_point(tokens, pp, seconds_per_token, latency, collective_overhead):
    """reference.network.Communication.point_to_point: one hand-over of the tokens'
    activations to the next pipeline stage, over the PP network's per-token time and latency."""
    if pp <= 1:
        return 0.0
    return tokens * seconds_per_token + latency + collective_overhead


# ---- power (reference.energy) ----------------------------------------------------------------


@jit
def power(idle, busy_floor, tdp, dynamic, time):
    """reference.energy.Power.power and .demand: (mean power of one device over a phase, the
    demand it comes from, idle + dynamic / time)."""
    demand = idle + dynamic / time
    return min(tdp, max(busy_floor, demand)), demand
