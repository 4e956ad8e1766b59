"""The reference model: the physics of DESIGN.md §4 in plain, readable Python.

This is the oracle. The numba kernels compute the same numbers over arrays of scenarios and
the tests hold them equal to 1e-9. Everything is per device unless a name says otherwise,
and in SI units: bytes, seconds, FLOP, W, J.

How a scenario is computed:

1. Layout: how tensor (tp), pipeline (pp) and expert (ep) parallelism split weights, KV heads
   and experts; the busiest device sets the pace where a split is uneven.
2. Memory: weights, KV cache, activation workspace and runtime overhead per device, placed
   in the device's tiers fastest first (offloaded weights and offloaded KV cache in the far
   tier, whose capacity they share); the largest batch that fits; whether it fits at all and
   what would make it fit.
3. Time of one pipeline stage for a micro-batch: compute and memory time (the roofline of the
   whole pass where the class overlaps its operators, else the linear layers' and attention's
   each) + communication + per-layer overhead (communication is not overlapped with compute, a
   conservative choice). All-reduces take the fastest of the ring and, for a power-of-two
   group, recursive halving-doubling and recursive doubling; every communication operation
   also pays the class's fixed cost of launching and synchronising it.
4. Prefill: chunks of at most ``prefill_chunk_tokens`` flow through the pipeline. Decode:
   one step at the mean context of the generation, min(batch, pp) micro-batches in flight.
   Each forward step adds the serving stack's host time (a fixed part and a part per
   sequence), during which the devices wait.
5. Energy: idle power plus the dynamic energy of the FLOPs, bytes per memory tier and link
   bytes, at least the class's busy floor (a share of TDP) and capped at TDP; summed over
   devices and replicas.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

from ..core import codes
from ..core.accelerator import Accelerator, MemoryTier
from ..core.constants import ClassConstants, Constants
from ..core.model import ModelArch
from ..core.precision import (
    PEAK_KEY,
    UNQUANTISED_BYTES,
    bytes_per_element,
    compute_precision,
    requested_compute_format,
)
from ..core.scenario import Scenario
from .layout import MAX_BATCH_REPORTED, POWER_CAP_WARNING_RATIO
from .results import MemoryResult, PhaseResult, Result

_STANDARD_NORMAL = NormalDist()


# ---- small formulas ----------------------------------------------------------------------


def expected_max_standard_normal(n: int) -> float:
    """Expected maximum of n independent standard normal draws: Blom's approximation
    Φ⁻¹((n − 0.375)/(n + 0.25)), 4.5% high at n = 2, 2% at n = 4, under 1% from n = 8; 0 for
    n ≤ 1."""
    if n <= 1:
        return 0.0
    return _STANDARD_NORMAL.inv_cdf((n - 0.375) / (n + 0.25))


def token_imbalance(assignments: float, ep: int) -> float:
    """Load of the busiest of ``ep`` devices over the mean when ``assignments`` token-to-expert
    assignments are routed uniformly: each device's load is Binomial(n, 1/ep), whose
    expected maximum is about mean + z·sd, i.e. 1 + z·sqrt((ep − 1)/n). At most ep."""
    if ep <= 1 or assignments <= 0.0:
        return 1.0
    imbalance = 1.0 + expected_max_standard_normal(ep) * math.sqrt((ep - 1) / assignments)
    return min(imbalance, float(ep))


def experts_touched_busiest_device(experts_per_device: int, touch_probability: float, ep: int) -> float:
    """Distinct experts the busiest device reads in one forward pass. Each of its experts is
    touched with probability q = 1 − (1 − k/E)^tokens; the count is Binomial(m, q), and the
    busiest of ep devices reads about mean + z·sd of them (never more than it holds). With
    ep = 1 this is DESIGN.md's E·(1 − (1 − k/E)^B)."""
    mean = experts_per_device * touch_probability
    if ep <= 1:
        return mean
    spread = math.sqrt(experts_per_device * touch_probability * (1.0 - touch_probability))
    return min(float(experts_per_device), mean + expected_max_standard_normal(ep) * spread)


def causal_positions(tokens: int, window: int) -> float:
    """Σ over a prompt's positions i = 1..s of the positions each attends to: s(s+1)/2 for
    full causal attention, capped at the window for sliding-window layers."""
    if window <= 0 or tokens <= window:
        return tokens * (tokens + 1) / 2.0
    return window * (window + 1) / 2.0 + (tokens - window) * float(window)


def chunked_causal_positions(tokens: int, chunk: int) -> float:
    """As causal_positions for a chunked-attention layer: position i attends to the
    ((i − 1) mod chunk) + 1 positions of its own chunk so far."""
    full_chunks, rest = divmod(tokens, chunk)
    return full_chunks * chunk * (chunk + 1) / 2.0 + rest * (rest + 1) / 2.0


def chunk_reread_positions(tokens: int, chunk: int, window: int) -> float:
    """KV positions a sequence's later chunks re-read from its earlier ones when a prompt of
    ``tokens`` is prefilled in chunks of ``chunk``: chunk j reads j·chunk earlier positions
    (at most ``window`` of them on a sliding-window layer)."""
    n_chunks = math.ceil(tokens / chunk)
    if n_chunks <= 1:
        return 0.0
    if window <= 0:
        return chunk * n_chunks * (n_chunks - 1) / 2.0
    below_window = min(n_chunks, math.ceil(window / chunk))
    return chunk * below_window * (below_window - 1) / 2.0 + (n_chunks - below_window) * float(window)


def ring_all_reduce_time(message_bytes: float, group: int, bandwidth: float, latency: float) -> float:
    """Ring all-reduce: 2(n−1)/n of the message crosses each link, in 2(n−1) steps."""
    if group <= 1:
        return 0.0
    return 2.0 * (group - 1) / group * message_bytes / bandwidth + 2.0 * (group - 1) * latency


def layer_overhead_s(cls: ClassConstants, activation_bytes: float) -> float:
    """Fixed time per layer per pass: the class's floor, plus the kernels that quantise each
    linear product's input when activations are narrower than 16 bits."""
    if activation_bytes < 2.0:
        return cls.per_layer_overhead_s + cls.activation_quantization_overhead_s
    return cls.per_layer_overhead_s


def all_reduce(message_bytes: float, group: int, bandwidth: float, latency: float) -> tuple[float, float, str]:
    """The fastest of the all-reduce algorithms collective libraries choose between (Thakur,
    Rabenseifner and Gropp 2005): (time, bytes each device sends, algorithm).

    - ring: 2(n−1)/n of the message in 2(n−1) steps, for any n;
    - recursive halving then doubling (a power-of-two n): the ring's bytes in 2·log2(n) steps;
    - recursive doubling (a power-of-two n): the whole message log2(n) times in log2(n) steps,
      which wins for small messages (at n = 2: one exchange and a local sum).
    Ties go to the earlier one."""
    if group <= 1:
        return 0.0, 0.0, "none"
    ring_sent = 2.0 * (group - 1) / group * message_bytes
    best = (ring_sent / bandwidth + 2.0 * (group - 1) * latency, ring_sent, "ring")
    if group & (group - 1) == 0:
        steps = math.log2(group)
        halving = ring_sent / bandwidth + 2.0 * steps * latency
        if halving < best[0]:
            best = (halving, ring_sent, "recursive halving and doubling")
        doubling_sent = steps * message_bytes
        doubling = doubling_sent / bandwidth + steps * latency
        if doubling < best[0]:
            best = (doubling, doubling_sent, "recursive doubling")
    return best


def all_to_all_time(sent_bytes: float, group: int, bandwidth: float, latency: float) -> float:
    """All-to-all where each device sends ``sent_bytes`` in total, in n−1 pairwise exchanges."""
    if group <= 1:
        return 0.0
    return sent_bytes / bandwidth + (group - 1) * latency


# ---- the model ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Network:
    bandwidth: float  # effective, B/s per direction
    latency: float
    crosses_domain: bool


def _network(accelerator: Accelerator, group: int, efficiency: float, peers: int | None = None) -> _Network:
    """The network a group of ``group`` devices uses, each exchanging with ``peers`` others at
    once (all the rest of the group by default; one for a pipeline hand-over)."""
    scale_up = accelerator.interconnect
    if group <= float(scale_up.domain_size) or accelerator.scale_out is None:
        crosses = group > float(scale_up.domain_size)
        bandwidth = scale_up.group_bandwidth_Bps(group - 1 if peers is None else peers)
        return _Network(bandwidth * efficiency, float(scale_up.latency_s), crosses)
    scale_out = accelerator.scale_out
    return _Network(float(scale_out.bandwidth_per_direction_Bps) * efficiency, float(scale_out.latency_s), True)


def tensor_parallel_all_reduce(
    accelerator: Accelerator, constants: Constants, tp: int, message_bytes: float
) -> tuple[float, float, str]:
    """One all-reduce of ``message_bytes`` over ``tp`` devices as the engine charges it: over
    the scale-up network (or scale-out beyond its domain) at the class's collective efficiency,
    by the fastest algorithm (:func:`all_reduce`), plus the class's fixed cost of a collective:
    (time, bytes each device sends, algorithm)."""
    cls = constants.for_class(accelerator.architecture_class)
    net = _network(accelerator, tp, cls.interconnect_efficiency)
    time, sent, algorithm = all_reduce(message_bytes, tp, net.bandwidth, net.latency)
    return (time + cls.collective_overhead_s if tp > 1 else 0.0), sent, algorithm


@dataclass(frozen=True)
class _StagePass:
    flops: float
    bytes_by_tier: tuple[float, ...]  # near tiers in order, then far
    weight_bytes: float  # of which weights (dense part and routed experts)
    kv_bytes: float  # of which KV cache read and written
    link_bytes: float
    compute_time: float
    memory_time: float
    attention_compute_time: float  # of compute_time: attention scores and values
    attention_memory_time: float  # of memory_time: KV cache read and written
    execution_time: float  # compute and memory together, as the class overlaps its operators
    communication_time: float
    overhead_time: float

    @property
    def bytes(self) -> float:
        return sum(self.bytes_by_tier)

    @property
    def time(self) -> float:
        return self.execution_time + self.communication_time + self.overhead_time


def execution_time(
    compute: float, memory: float, attention_compute: float, attention_memory: float, overlap: float
) -> float:
    """Compute and memory time of a stage pass together. Operators that overlap (a spatial
    dataflow pipeline streams one into the next) take the roofline of the whole pass,
    max(compute, memory); operators that run one after another (GPU kernels) each take their
    own: the linear layers max(compute, memory) of the weights plus attention max(compute,
    memory) of the KV cache. ``overlap`` (0 to 1) weighs the two."""
    whole = max(compute, memory)
    by_operator = max(compute - attention_compute, memory - attention_memory) + max(attention_compute, attention_memory)
    return overlap * whole + (1.0 - overlap) * by_operator


def bound_of(compute: float, memory: float, communication: float, overhead: float) -> int:
    """Index of the largest term (codes.BOUNDS order); ties go to the earlier one."""
    times = (compute, memory, communication, overhead)
    return max(range(4), key=lambda index: (times[index], -index))


@dataclass(frozen=True)
class _Sizes:
    weights: float
    dense_read: float
    experts_per_device: int
    expert_bytes_each: float
    kv_per_token_layer: float
    stored_positions: Callable[[float], float]
    attended_positions: Callable[[float], float]
    activation_per_token: float
    logits_per_sequence: float
    room_for_weights: float  # usable memory left for weights beside one full-context sequence


class ReferenceModel:
    """Evaluates one scenario. Construct with the model, accelerator and constants it uses."""

    def __init__(self, model: ModelArch, accelerator: Accelerator, constants: Constants) -> None:
        self.model = model
        self.accelerator = accelerator
        self.constants = constants
        self.cls = constants.for_class(accelerator.architecture_class)
        self.near_tiers: list[MemoryTier] = [
            tier for tier in accelerator.memory if tier.placement and tier.level in ("on-chip", "device")
        ]
        self.far_tier: MemoryTier | None = next(
            (tier for tier in accelerator.memory if tier.placement and tier.level == "far"), None
        )
        self.stack = float(accelerator.software_efficiency)  # serving-stack maturity, 1 = reference
        self.usable = sum(t.accelerator_capacity_bytes for t in self.near_tiers) * self.cls.usable_memory_fraction

    # -- layout and sizes ------------------------------------------------------------------

    def evaluate(self, scenario: Scenario) -> Result:
        s = scenario
        m = self.model
        a = self.accelerator
        cls = self.cls
        k = self.constants
        tp, pp, ep, dp = s.tp, s.pp, s.ep, s.dp
        warnings = 0

        p_a = bytes_per_element(s.activation_precision)

        # Products run in the wider of the weight and activation formats, on the device's
        # units for it or, where it has none, in 16 bits.
        requested = requested_compute_format(s.weight_precision, s.activation_precision)
        compute_key = compute_precision(requested, a.peaks())
        if compute_key != PEAK_KEY[requested]:
            warnings |= codes.WARN_COMPUTE_FALLBACK
        peak = a.peak(compute_key)

        d = m.hidden_size
        vocab = m.vocab_size
        layers = m.n_layers
        layers_per_stage = layers / pp
        n_moe = m.n_moe_layers
        moe_fraction = n_moe / layers
        experts = m.moe.n_routed_experts if m.moe else 0
        top_k = m.moe.experts_per_token if m.moe else 0
        n_full = m.n_full_attention_layers
        n_window = m.n_window_attention_layers
        n_chunked = m.n_chunked_attention_layers
        window = m.sliding_window
        attention_chunk = m.attention_chunk
        n_kv_layers = n_full + n_window + n_chunked

        # The busiest device's share of attention heads.
        head_fraction = math.ceil(m.n_heads / tp) / m.n_heads
        if m.n_heads % tp:
            warnings |= codes.WARN_TP_UNEVEN_HEADS
        if m.mla is None and tp > m.n_kv_heads:
            warnings |= codes.WARN_KV_HEADS_REPLICATED

        fit_code = codes.FIT_OK
        if m.moe is None and ep > 1:
            fit_code = codes.FIT_EP_ON_DENSE_MODEL
        elif tp % ep:
            fit_code = codes.FIT_EP_NOT_DIVIDING_TP
        elif m.moe is not None and ep > experts:
            fit_code = codes.FIT_EP_EXCEEDS_EXPERTS
        elif pp > layers:
            fit_code = codes.FIT_PP_EXCEEDS_LAYERS
        elif (s.offload > 0.0 or s.kv_offload > 0.0) and self.far_tier is None:
            fit_code = codes.FIT_OFFLOAD_WITHOUT_FAR_TIER
        effective_ep = ep if m.moe is not None else 1
        if m.moe is not None and experts % effective_ep:
            warnings |= codes.WARN_EP_UNEVEN_EXPERTS

        sizes = self._sizes(s, tp, pp, effective_ep)
        weights = sizes.weights
        dense_read = sizes.dense_read
        experts_per_device = sizes.experts_per_device
        expert_bytes_each = sizes.expert_bytes_each
        kv_per_token_layer = sizes.kv_per_token_layer
        attended_positions = sizes.attended_positions
        activation_per_token = sizes.activation_per_token
        logits_per_sequence = sizes.logits_per_sequence
        ffn_width = m.mean_ffn_width_per_token
        chunk = k.prefill_chunk_tokens

        def activation_bytes(batch: int) -> float:
            return min(batch * s.input_len, chunk) * activation_per_token + batch * logits_per_sequence

        overhead = cls.runtime_overhead_bytes
        usable_by_tier = [t.accelerator_capacity_bytes * cls.usable_memory_fraction for t in self.near_tiers]
        usable = self.usable
        capacity = sum(t.accelerator_capacity_bytes for t in self.near_tiers)
        far_usable = float(self.far_tier.capacity_bytes) * cls.usable_memory_fraction if self.far_tier else 0.0

        max_context = s.input_len + s.output_len
        if max_context > m.max_context:
            warnings |= codes.WARN_CONTEXT_EXCEEDS_MODEL
        kv_sequence = kv_per_token_layer * sizes.stored_positions(max_context) / pp

        # Without a far tier an offload request cannot be honoured (the fit code says so);
        # the numbers are then those of no offload.
        offload = s.offload if self.far_tier is not None else 0.0
        kv_offload = self._kv_offload(s)
        weights_far = weights * offload
        weights_near = weights - weights_far
        # A sequence's KV cache splits the same way at every position: near and far parts.
        kv_sequence_near = kv_sequence * (1.0 - kv_offload)
        kv_sequence_far = kv_sequence * kv_offload

        # Largest batch whose weights, workspace and full-context KV cache fit. Memory grows
        # linearly in the batch, with a kink where the prompt tokens fill one prefill chunk.
        # Only the near part of the KV cache counts against device memory; the far part is
        # bounded by what the offloaded weights leave of the far tier.
        available = usable - weights_near - overhead
        max_batch = 0
        if available > 0.0:
            per_sequence = kv_sequence_near + logits_per_sequence
            switch = chunk / s.input_len  # batch above which the workspace stops growing
            unchunked = math.floor(available / (per_sequence + s.input_len * activation_per_token))
            max_batch = min(unchunked, math.floor(switch))
            chunked = math.floor((available - chunk * activation_per_token) / per_sequence)
            if chunked >= switch:
                max_batch = max(max_batch, chunked)
            max_batch = int(min(max(max_batch, 0), MAX_BATCH_REPORTED))
        near_max_batch = max_batch
        if kv_sequence_far > 0.0:
            far_room = far_usable - weights_far
            # Capped before rounding: a tiny offloaded share would otherwise allow ~1e300 sequences.
            far_max_batch = math.floor(min(far_room / kv_sequence_far, MAX_BATCH_REPORTED)) if far_room > 0.0 else 0
            max_batch = int(min(max_batch, far_max_batch))
        if fit_code == codes.FIT_OK:
            if weights_near + overhead + activation_bytes(1) > usable:
                fit_code = codes.FIT_WEIGHTS_DO_NOT_FIT
            elif near_max_batch < 1:
                fit_code = codes.FIT_KV_DOES_NOT_FIT_ONE_SEQUENCE
            elif weights_far + kv_sequence_far > far_usable:
                fit_code = codes.FIT_FAR_TIER_TOO_SMALL
        fits = fit_code == codes.FIT_OK
        if weights_near > k.kv_starvation_weight_fraction * usable:
            warnings |= codes.WARN_KV_STARVED

        waves = 1
        resident = s.batch
        if fits and s.batch > max_batch:
            waves = math.ceil(s.batch / max_batch)
            resident = math.ceil(s.batch / waves)
            warnings |= codes.WARN_KV_WAVES

        # What would fit one sequence: more tensor parallelism, or offloading.
        tp_needed = self._tp_needed(s, effective_ep, offload)
        offload_needed = self._offload_needed(weights, sizes.room_for_weights, far_usable, kv_sequence_far)

        # -- placement: reserve workspace in the slowest near tier, then weights and KV
        #    fastest first; the shares of each tier set where reads come from.
        free = list(usable_by_tier)
        reserve = overhead + activation_bytes(resident)
        for index in range(len(free) - 1, -1, -1):
            taken = min(free[index], reserve)
            free[index] -= taken
            reserve -= taken
        weight_share = _fill(free, weights_near)
        kv_share = _fill(free, resident * kv_sequence_near)
        workspace_tier = len(self.near_tiers) - 1
        near_bandwidth = [t.effective_bandwidth_Bps * cls.memory_efficiency * self.stack for t in self.near_tiers]
        far_bandwidth = (
            self.far_tier.effective_bandwidth_Bps * cls.link_efficiency * self.stack if self.far_tier else 1.0
        )
        near_energy = [k.memory_energy_J_per_byte[t.kind] for t in self.near_tiers]
        far_energy = k.memory_energy_J_per_byte[self.far_tier.kind] if self.far_tier else 0.0

        def split_reads(weight_bytes: float, kv_bytes: float, activation_traffic: float) -> tuple[float, ...]:
            near = [
                weight_bytes * (1.0 - offload) * weight_share[i] + kv_bytes * (1.0 - kv_offload) * kv_share[i]
                for i in range(len(self.near_tiers))
            ]
            near[workspace_tier] += activation_traffic
            # Offloaded weights and KV cache are read from (and new KV entries written to) the
            # far tier over its link.
            return (*near, weight_bytes * offload + kv_bytes * kv_offload)

        def memory_time(bytes_by_tier: tuple[float, ...]) -> float:
            near = sum(b / bw for b, bw in zip(bytes_by_tier[:-1], near_bandwidth, strict=True))
            return near + bytes_by_tier[-1] / far_bandwidth

        def memory_energy(bytes_by_tier: tuple[float, ...]) -> float:
            near = sum(b * e for b, e in zip(bytes_by_tier[:-1], near_energy, strict=True))
            return near + bytes_by_tier[-1] * far_energy

        # -- communication -------------------------------------------------------------------
        ic_eff = cls.interconnect_efficiency
        tp_net = _network(a, tp, ic_eff)
        ep_net = _network(a, effective_ep, ic_eff)
        pp_net = _network(a, tp * pp, ic_eff, peers=1)  # each device hands over to its counterpart
        if (tp > 1 and tp_net.crosses_domain) or (pp > 1 and pp_net.crosses_domain):
            warnings |= codes.WARN_CROSSES_SCALE_UP_DOMAIN

        collective = cls.collective_overhead_s  # launch and synchronisation of each operation

        def communication(tokens: float) -> tuple[float, float]:
            """Time and bytes sent per device for one stage pass over ``tokens`` tokens."""
            message = tokens * d * p_a
            all_reduce_time, all_reduce_sent, _ = all_reduce(message, tp, tp_net.bandwidth, tp_net.latency)
            if tp > 1:
                all_reduce_time += collective
            dense_layer_time = 2.0 * all_reduce_time
            dense_layer_sent = 2.0 * all_reduce_sent
            if effective_ep > 1:
                dispatched = (
                    tokens * top_k * d * p_a * (effective_ep - 1) / effective_ep
                    * token_imbalance(tokens * top_k, effective_ep)
                )
                a2a = all_to_all_time(dispatched, effective_ep, ep_net.bandwidth, ep_net.latency) + collective
                moe_layer_time = all_reduce_time + 2.0 * a2a
                moe_layer_sent = all_reduce_sent + 2.0 * dispatched
            else:
                moe_layer_time = dense_layer_time
                moe_layer_sent = dense_layer_sent
            time = layers_per_stage * ((1.0 - moe_fraction) * dense_layer_time + moe_fraction * moe_layer_time)
            sent = layers_per_stage * ((1.0 - moe_fraction) * dense_layer_sent + moe_fraction * moe_layer_sent)
            return time, sent

        def point_to_point(tokens: float) -> float:
            if pp <= 1:
                return 0.0
            return tokens * d * p_a / pp_net.bandwidth + pp_net.latency + collective

        # -- one stage pass ------------------------------------------------------------------
        compute_rate = peak * cls.compute_efficiency * self.stack
        overhead_time = layers_per_stage * layer_overhead_s(cls, p_a)

        def activation_traffic(tokens: float) -> float:
            return tokens * layers_per_stage * p_a * (4.0 * d + 2.0 * ffn_width / tp)

        def expert_terms(tokens: float) -> tuple[float, float]:
            """(FLOPs, bytes) of routed experts on the busiest device for ``tokens`` tokens."""
            if m.moe is None:
                return 0.0, 0.0
            touch = 1.0 - (1.0 - top_k / experts) ** tokens
            touched = experts_touched_busiest_device(experts_per_device, touch, effective_ep)
            flops = (
                2.0 * tokens * top_k * n_moe * m.expert_params / (tp * pp)
                * token_imbalance(tokens * top_k, effective_ep)
            )
            return flops, n_moe / pp * touched * expert_bytes_each

        def stage_pass(tokens: float, sequences: float, attention_flops: float, kv_read: float) -> _StagePass:
            expert_flops, expert_read = expert_terms(tokens)
            flops = (
                2.0 * tokens * m.block_params_fixed / (tp * pp)
                + 2.0 * sequences * vocab * d / (tp * pp)
                + expert_flops
                + attention_flops
            )
            kv_write = tokens * kv_per_token_layer * n_kv_layers / pp
            weight_bytes = dense_read + expert_read
            kv_bytes = kv_read + kv_write
            by_tier = split_reads(weight_bytes, kv_bytes, activation_traffic(tokens))
            comm_time, comm_sent = communication(tokens)
            compute = flops / compute_rate
            memory = memory_time(by_tier)
            attention_compute = attention_flops / compute_rate
            attention_memory = memory_time(split_reads(0.0, kv_bytes, 0.0))
            return _StagePass(
                flops=flops,
                bytes_by_tier=by_tier,
                weight_bytes=weight_bytes,
                kv_bytes=kv_bytes,
                link_bytes=comm_sent,
                compute_time=compute,
                memory_time=memory,
                attention_compute_time=attention_compute,
                attention_memory_time=attention_memory,
                execution_time=execution_time(
                    compute, memory, attention_compute, attention_memory, cls.operator_overlap
                ),
                communication_time=comm_time,
                overhead_time=overhead_time,
            )

        e_flop = (float(a.tdp_W) - float(a.idle_W)) / (cls.compute_efficiency * peak)
        e_link = k.interconnect_energy_J_per_byte
        tdp = float(a.tdp_W)
        idle = float(a.idle_W)
        # A device executing any phase draws at least this, whatever the work (clocks up,
        # memory PHYs and cores powered); 0 for classes without a published figure.
        busy_floor = cls.busy_power_fraction * tdp

        def dynamic_energy(p: _StagePass) -> float:
            return p.flops * e_flop + memory_energy(p.bytes_by_tier) + p.link_bytes * e_link

        # -- prefill ---------------------------------------------------------------------------
        prompt_tokens = resident * s.input_len
        n_chunks = math.ceil(prompt_tokens / chunk)
        chunk_tokens = prompt_tokens / n_chunks
        attention_prefill = (
            resident * m.attention_flops_per_position_prefill * head_fraction / pp
            * (
                n_full * causal_positions(s.input_len, 0)
                + (n_window * causal_positions(s.input_len, window) if n_window else 0.0)
                + (n_chunked * chunked_causal_positions(s.input_len, attention_chunk) if n_chunked else 0.0)
            )
        )
        reread_prefill = (
            resident * kv_per_token_layer / pp
            * (
                n_full * chunk_reread_positions(s.input_len, chunk, 0)
                + (n_window * chunk_reread_positions(s.input_len, chunk, window) if n_window else 0.0)
                # A chunked layer re-reads at most one attention chunk (an upper bound).
                + (n_chunked * chunk_reread_positions(s.input_len, chunk, attention_chunk) if n_chunked else 0.0)
            )
        )
        prefill_pass = stage_pass(
            chunk_tokens, resident / n_chunks, attention_prefill / n_chunks, reread_prefill / n_chunks
        )
        # The serving stack's host work: once per forward step (a chunk is one step) and once per
        # sequence in it; the devices wait meanwhile.
        prefill_host = n_chunks * cls.step_overhead_s + resident * cls.sequence_overhead_s
        prefill_passes = n_chunks + pp - 1
        ttft_wave = prefill_passes * prefill_pass.time + (pp - 1) * point_to_point(chunk_tokens) + prefill_host
        prefill_dynamic = n_chunks * dynamic_energy(prefill_pass)
        prefill_power = min(tdp, max(busy_floor, idle + prefill_dynamic / ttft_wave))
        if idle + prefill_dynamic / ttft_wave > POWER_CAP_WARNING_RATIO * tdp:
            warnings |= codes.WARN_POWER_CAPPED

        # -- decode: one step at the mean context of the generation --------------------------
        micro_batches = min(resident, pp)
        micro_batch = resident / micro_batches
        mean_context = s.input_len + s.output_len / 2.0
        attention_decode = (
            micro_batch * m.attention_flops_per_position_decode * head_fraction / pp * attended_positions(mean_context)
        )
        kv_read_decode = micro_batch * (kv_per_token_layer * attended_positions(mean_context) / pp)
        decode_pass = stage_pass(micro_batch, micro_batch, attention_decode, kv_read_decode)
        decode_host = cls.step_overhead_s + resident * cls.sequence_overhead_s
        itl = pp * decode_pass.time + (pp - 1) * point_to_point(micro_batch) + decode_host
        decode_dynamic = micro_batches * dynamic_energy(decode_pass)
        decode_power = min(tdp, max(busy_floor, idle + decode_dynamic / itl))
        decode_steps = s.output_len - 1
        if decode_steps > 0 and idle + decode_dynamic / itl > POWER_CAP_WARNING_RATIO * tdp:
            warnings |= codes.WARN_POWER_CAPPED

        # -- whole run -------------------------------------------------------------------------
        wave_time = ttft_wave + decode_steps * itl
        makespan = waves * wave_time
        ttft = ttft_wave + (waves - 1) / 2.0 * wave_time
        devices = tp * pp * dp
        energy_per_device = waves * (prefill_power * ttft_wave + decode_power * decode_steps * itl)
        energy = energy_per_device * devices
        total_tokens = dp * s.batch * (s.input_len + s.output_len)
        output_tokens = dp * s.batch * s.output_len

        prefill = _phase_result(prefill_pass, n_chunks, ttft_wave, prefill_host, prefill_passes, prefill_power)
        decode = _phase_result(decode_pass, micro_batches, itl, decode_host, pp, decode_power)
        memory = MemoryResult(
            weights_bytes=weights,
            weights_far_bytes=weights_far,
            kv_cache_bytes=s.batch * kv_sequence,
            kv_cache_far_bytes=s.batch * kv_sequence * kv_offload,
            activation_bytes=activation_bytes(s.batch),
            overhead_bytes=overhead,
            usable_bytes=usable,
            capacity_bytes=capacity,
            far_usable_bytes=far_usable,
            max_batch=max_batch,
            resident_batch=resident,
        )
        device_tier = a.tier("device") or self.near_tiers[-1]
        return Result(
            scenario=s,
            devices=devices,
            fits=fits,
            fit_code=fit_code,
            warning_bits=warnings,
            compute_precision=compute_key,
            waves=waves,
            prefill=prefill,
            decode=decode,
            memory=memory,
            ttft_s=ttft,
            itl_s=itl,
            e2e_latency_s=makespan,
            throughput_output_tok_s=output_tokens / makespan,
            throughput_total_tok_s=total_tokens / makespan,
            power_W=energy / makespan,
            energy_J=energy,
            tokens_per_joule=total_tokens / energy,
            output_tokens_per_joule=output_tokens / energy,
            tp_needed=tp_needed,
            offload_needed=offload_needed,
            ridge_point=peak / device_tier.effective_bandwidth_Bps,
        )

    # -- what would fit ----------------------------------------------------------------------

    def _kv_offload(self, s: Scenario) -> float:
        """The share of the KV cache kept in the far tier: none without one."""
        return s.kv_offload if self.far_tier is not None else 0.0

    def _sizes(self, s: Scenario, tp: int, pp: int, ep: int) -> _Sizes:
        """Per-device sizes for a layout; ``ep`` is 1 for a dense model. Only the near part of
        one sequence's KV cache takes room beside the weights."""
        m = self.model
        k = self.constants
        p_w = bytes_per_element(s.weight_precision)
        p_a = bytes_per_element(s.activation_precision)
        p_kv = bytes_per_element(s.kv_precision)
        p_hi = max(p_w, UNQUANTISED_BYTES)
        # Linear layers take the weight format; embeddings, LM head, norms and routers stay
        # in 16 bits.
        fixed_quantised = m.block_params_fixed - m.router_params_total
        fixed_bytes = (fixed_quantised * p_w + m.router_params_total * p_hi) / (tp * pp)
        untied_head = 0 if m.tied_embeddings else m.lm_head_params
        vocab_bytes = (m.embedding_params + untied_head) * p_hi / (tp * pp)
        norm_bytes = m.norm_params * p_hi / pp
        if m.moe is not None:
            experts_per_device = math.ceil(m.moe.n_routed_experts / ep)
            expert_bytes_each = m.expert_params * p_w / (tp / ep)  # one expert's shard
        else:
            experts_per_device = 0
            expert_bytes_each = 0.0
        expert_bytes = m.n_moe_layers / pp * experts_per_device * expert_bytes_each
        weights = fixed_bytes + vocab_bytes + norm_bytes + expert_bytes
        # A forward pass reads block weights, norms and the LM head; the input embedding is
        # gathered (a few rows), not read in full. Routed experts are added per pass.
        dense_read = fixed_bytes + norm_bytes + m.vocab_size * m.hidden_size * p_hi / (tp * pp)

        kv_fraction = math.ceil(m.kv_shards / tp) / m.kv_shards  # busiest device's KV heads
        kv_per_token_layer = p_kv * m.kv_elements_per_token_per_layer * kv_fraction
        n_full = m.n_full_attention_layers
        n_window = m.n_window_attention_layers
        n_chunked = m.n_chunked_attention_layers
        window = m.sliding_window
        attention_chunk = m.attention_chunk

        def stored_positions(context: float) -> float:
            """KV entries a sequence keeps, summed over layers, at this context."""
            positions = n_full * context
            if n_window:
                positions += n_window * min(context, window)
            if n_chunked:
                positions += n_chunked * min(context, attention_chunk)
            return positions

        def attended_positions(context: float) -> float:
            """KV entries a new token reads, summed over layers, at this context. A chunked
            layer past its first chunk attends to half a chunk on average."""
            positions = n_full * context
            if n_window:
                positions += n_window * min(context, window)
            if n_chunked:
                positions += n_chunked * (context if context <= attention_chunk else (attention_chunk + 1) / 2.0)
            return positions

        activation_per_token = p_a * (
            2 * m.hidden_size + (m.attention_activation_width + 2 * m.mean_ffn_width_per_token) / tp
        )
        logits_per_sequence = m.vocab_size * k.logits_bytes_per_element / tp
        context = s.input_len + s.output_len
        one_sequence = (
            self.cls.runtime_overhead_bytes
            + min(s.input_len, k.prefill_chunk_tokens) * activation_per_token
            + logits_per_sequence
            + kv_per_token_layer * stored_positions(context) / pp * (1.0 - self._kv_offload(s))
        )
        return _Sizes(
            weights=weights,
            dense_read=dense_read,
            experts_per_device=experts_per_device,
            expert_bytes_each=expert_bytes_each,
            kv_per_token_layer=kv_per_token_layer,
            stored_positions=stored_positions,
            attended_positions=attended_positions,
            activation_per_token=activation_per_token,
            logits_per_sequence=logits_per_sequence,
            room_for_weights=self.usable - one_sequence,
        )

    def _tp_needed(self, s: Scenario, ep: int, offload: float) -> int:
        """Smallest tp·2^j (j ≥ 0, up to 2^16 devices per stage) whose memory holds the weights
        (less any offloaded) and one sequence at full context; 0 if none does."""
        tp = s.tp
        while tp <= 65536:
            sizes = self._sizes(s, tp, s.pp, ep)
            if sizes.weights * (1.0 - offload) <= sizes.room_for_weights:
                return tp
            tp *= 2
        return 0

    def _offload_needed(
        self, weights: float, room_for_weights: float, far_usable: float, kv_sequence_far: float
    ) -> float:
        """Smallest fraction of weights to keep in the far tier so one sequence fits; -1 if the
        device has no far tier, the rest does not fit even with all weights offloaded, or the
        far tier cannot hold what must go there (beside one sequence's offloaded KV cache)."""
        if self.far_tier is None or room_for_weights <= 0.0:
            return -1.0
        needed = max(0.0, 1.0 - room_for_weights / weights)
        if needed * weights + kv_sequence_far > far_usable:
            return -1.0
        return needed


def _fill(free: list[float], amount: float) -> list[float]:
    """Place ``amount`` into tiers fastest first; returns each tier's share of it and takes the
    space from ``free``. What does not fit is charged to the slowest near tier (it is only
    read from there in a scenario that does not fit)."""
    shares = [0.0] * len(free)
    if amount <= 0.0:
        shares[-1] = 1.0
        return shares
    left = amount
    for index, room in enumerate(free):
        taken = min(max(room, 0.0), left)
        shares[index] = taken / amount
        free[index] -= taken
        left -= taken
    if left > 0.0:
        shares[-1] += left / amount
    return shares


def _phase_result(
    stage: _StagePass, count: int, time: float, host: float, passes: int, power: float
) -> PhaseResult:
    """A phase made of ``count`` stage passes per device (prefill chunks, decode micro-batches)
    that takes ``time`` in all, ``host`` of it the serving stack's, with ``passes`` stage passes
    in a row over which the bound spreads that host time."""
    return PhaseResult(
        flops_per_device=count * stage.flops,
        bytes_per_device=count * stage.bytes,
        weight_bytes_per_device=count * stage.weight_bytes,
        kv_bytes_per_device=count * stage.kv_bytes,
        time_s=time,
        compute_time_s=stage.compute_time,
        memory_time_s=stage.memory_time,
        attention_compute_time_s=stage.attention_compute_time,
        attention_memory_time_s=stage.attention_memory_time,
        execution_time_s=stage.execution_time,
        communication_time_s=stage.communication_time,
        overhead_time_s=stage.overhead_time,
        host_time_s=host,
        bound=codes.BOUNDS[
            bound_of(stage.compute_time, stage.memory_time, stage.communication_time,
                     stage.overhead_time + host / passes)
        ],
        power_per_device_W=power,
    )


def evaluate(scenario: Scenario, model: ModelArch, accelerator: Accelerator, constants: Constants) -> Result:
    return ReferenceModel(model, accelerator, constants).evaluate(scenario)
