"""Step 2, memory: what one device holds (weights, KV cache, activation workspace, runtime),
the largest batch that fits, the waves a larger batch runs in, what would make one sequence
fit (more tensor parallelism, or offloading), and where the weights and KV cache are placed
among the device's tiers, fastest first, which sets where each byte read comes from.

Per device (the busiest one), in bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...core import codes
from ...core.accelerator import Accelerator, MemoryTier
from ...core.constants import ClassConstants, Constants
from ...core.model import ModelArch
from ...core.precision import UNQUANTISED_BYTES, bytes_per_element
from ...core.scenario import Scenario
from ..layout import MAX_BATCH_REPORTED
from .closed_forms import AttentionGroups, AttentionLayers, RecurrentLayers
from .parallel import Layout


class DeviceMemory:
    """An accelerator's placeable memory tiers and how much of them a class may use."""

    def __init__(self, accelerator: Accelerator, cls: ClassConstants) -> None:
        self.near_tiers: list[MemoryTier] = list(accelerator.near_tiers)
        self.far_tier: MemoryTier | None = accelerator.far_tier
        self.runtime_overhead = cls.runtime_overhead_bytes
        self.capacity = sum(t.accelerator_capacity_bytes for t in self.near_tiers)
        self.usable = self.capacity * cls.usable_memory_fraction
        self.usable_by_tier = [t.accelerator_capacity_bytes * cls.usable_memory_fraction for t in self.near_tiers]
        self.far_usable = float(self.far_tier.capacity_bytes) * cls.usable_memory_fraction if self.far_tier else 0.0

    def offload(self, scenario: Scenario) -> float:
        """The share of the weights kept in the far tier: none without one (the fit code then
        says the request cannot be honoured, and the numbers are those of no offload)."""
        return scenario.offload if self.far_tier is not None else 0.0

    def kv_offload(self, scenario: Scenario) -> float:
        """The share of the KV cache kept in the far tier: none without one."""
        return scenario.kv_offload if self.far_tier is not None else 0.0


# ---- sizes ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    weights: float
    dense_read: float  # weights a pass reads besides routed experts
    experts_per_device: int
    expert_bytes_each: float  # one routed expert's shard
    kv_per_token_layer: float  # the busiest device's KV heads
    activation_per_token: float
    logits_per_sequence: float
    state_per_sequence: float  # one sequence's fixed-size state over the stage's DeltaNet and Mamba layers
    room_for_weights: float  # usable memory left for weights beside one full-context sequence


def sizes(model: ModelArch, constants: Constants, memory: DeviceMemory, scenario: Scenario, tp: int, pp: int,
          ep: int) -> Sizes:
    """Per-device sizes for a layout; ``ep`` is 1 for a dense model. Only the near part of one
    sequence's KV cache takes room beside the weights; the fixed-size state of recurrent layers
    stays in device memory (it is not offloaded)."""
    m = model
    s = scenario
    p_w = bytes_per_element(s.weight_precision)
    p_a = bytes_per_element(s.activation_precision)
    p_kv = bytes_per_element(s.kv_precision)
    p_hi = max(p_w, UNQUANTISED_BYTES)
    # Linear layers take the weight format; embeddings, LM head, norms and routers stay in 16 bits,
    # and so do all but the routed experts when the format is the model's own and covers only them
    # (gpt-oss's MXFP4 checkpoint).
    p_fixed = UNQUANTISED_BYTES if m.native_scope_keeps_wide(s.weight_precision) else p_w
    fixed_quantised = m.block_params_fixed - m.router_params_total
    fixed_bytes = (fixed_quantised * p_fixed + m.router_params_total * p_hi) / (tp * pp)
    untied_head = 0 if m.tied_embeddings else m.lm_head_params
    vocab_bytes = (m.embedding_params + untied_head) * p_hi / (tp * pp)
    norm_bytes = m.norm_params * p_hi / pp
    if m.moe is not None:
        experts_per_device = math.ceil(m.moe.n_routed_experts / ep)
        expert_bytes_each = m.expert_params * p_w / (tp / ep)
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
    activation_per_token = p_a * (2 * m.hidden_size + (m.attention_activation_width + 2 * m.mean_ffn_width_per_token) / tp)
    logits_per_sequence = m.vocab_size * constants.logits_bytes_per_element / tp
    context = s.input_len + s.output_len
    state_per_sequence = RecurrentLayers.of(m).state_bytes(tp) / pp
    one_sequence = (
        memory.runtime_overhead
        + min(s.input_len, constants.prefill_chunk_tokens) * activation_per_token
        + logits_per_sequence
        + (kv_per_token_layer * AttentionLayers.of(m).stored(context) + AttentionGroups.of(m).kv_bytes(context, tp, p_kv))
        / pp * (1.0 - memory.kv_offload(s))
        + state_per_sequence
    )
    return Sizes(
        weights=weights,
        dense_read=dense_read,
        experts_per_device=experts_per_device,
        expert_bytes_each=expert_bytes_each,
        kv_per_token_layer=kv_per_token_layer,
        activation_per_token=activation_per_token,
        logits_per_sequence=logits_per_sequence,
        state_per_sequence=state_per_sequence,
        room_for_weights=memory.usable - one_sequence,
    )


# ---- the fit ----------------------------------------------------------------------------------


def _batch_sides(available: float, per_sequence: float, input_len: int, chunk: int,
                 activation_per_token: float) -> tuple[float, int, int]:
    """The kink of memory against the batch and the largest batch on each side of it:
    (batch above which the workspace stops growing, largest batch with every prompt token in
    the workspace, largest batch with one chunk's)."""
    switch = chunk / input_len
    unchunked = math.floor(available / (per_sequence + input_len * activation_per_token))
    chunked = math.floor((available - chunk * activation_per_token) / per_sequence)
    return switch, unchunked, chunked


def largest_batch(available: float, per_sequence: float, input_len: int, chunk: int,
                  activation_per_token: float) -> int:
    """Largest batch whose full-context KV cache and workspace fit in ``available`` bytes.
    Memory grows linearly in the batch, with a kink where the prompt tokens fill one prefill
    chunk (the workspace stops growing there)."""
    if available <= 0.0:
        return 0
    switch, unchunked, chunked = _batch_sides(available, per_sequence, input_len, chunk, activation_per_token)
    max_batch = min(unchunked, math.floor(switch))
    if chunked >= switch:
        max_batch = max(max_batch, chunked)
    return int(min(max(max_batch, 0), MAX_BATCH_REPORTED))


def largest_batch_term(available: float, per_sequence: float, input_len: int, chunk: int,
                       activation_per_token: float) -> str:
    """Which side of the kink sets :func:`largest_batch`: "chunked" where the batch's prompt
    tokens fill more than one prefill chunk (the workspace stays one chunk's), else "prompts"
    (the workspace holds every prompt token), or "chunk" where that batch would overflow one
    chunk and the largest batch is the ⌊chunk/input_len⌋ prompts that fill it."""
    switch, unchunked, chunked = _batch_sides(available, per_sequence, input_len, chunk, activation_per_token)
    if chunked >= switch:
        return "chunked"
    return "chunk" if unchunked > math.floor(switch) else "prompts"


def far_largest_batch(far_room: float, kv_sequence_far: float) -> float:
    """Sequences whose offloaded KV cache fits in ``far_room``; capped before rounding, as a
    tiny offloaded share would otherwise allow ~1e300 sequences."""
    return math.floor(min(far_room / kv_sequence_far, MAX_BATCH_REPORTED)) if far_room > 0.0 else 0


def waves(batch: int, max_batch: int, fits: bool) -> tuple[int, int]:
    """(waves, sequences per wave): a batch larger than fits runs in waves of the largest
    batch that does, as serving stacks do with preemption."""
    if fits and batch > max_batch:
        count = math.ceil(batch / max_batch)
        return count, math.ceil(batch / count)
    return 1, batch


def tp_needed(model: ModelArch, constants: Constants, memory: DeviceMemory, scenario: Scenario, ep: int,
              offload: float) -> int:
    """Smallest tp·2^j (j ≥ 0, up to 2^16 devices per stage) whose memory holds the weights
    (less any offloaded) and one sequence at full context; 0 if none does."""
    tp = scenario.tp
    while tp <= 65536:
        trial = sizes(model, constants, memory, scenario, tp, scenario.pp, ep)
        if trial.weights * (1.0 - offload) <= trial.room_for_weights:
            return tp
        tp *= 2
    return 0


def offload_needed(memory: DeviceMemory, weights: float, room_for_weights: float, kv_sequence_far: float) -> float:
    """Smallest fraction of weights to keep in the far tier so one sequence fits; -1 if the
    device has no far tier, the rest does not fit even with all weights offloaded, or the far
    tier cannot hold what must go there (beside one sequence's offloaded KV cache)."""
    if memory.far_tier is None or room_for_weights <= 0.0:
        return -1.0
    needed = max(0.0, 1.0 - room_for_weights / weights)
    if needed * weights + kv_sequence_far > memory.far_usable:
        return -1.0
    return needed


@dataclass(frozen=True)
class MemoryFit:
    """What one device holds for a scenario, whether it fits, and the waves it runs in."""

    sizes: Sizes
    offload: float  # share of the weights in the far tier (0 without one)
    kv_offload: float  # share of the KV cache in the far tier (0 without one)
    weights_near: float
    weights_far: float
    kv_sequence: float  # one sequence's KV cache at full context
    kv_sequence_near: float
    kv_sequence_far: float
    state_sequence: float  # one sequence's fixed-size recurrent state, all in the near tiers
    kv_room: float  # usable memory the near weights and the runtime leave for KV cache, state and workspace
    max_batch: int
    max_batch_term: str  # of largest_batch_term: the side of the kink the near largest batch is on
    fit_code: int
    waves: int
    resident: int  # sequences in memory at once (the wave size)
    tp_needed: int
    offload_needed: float
    warnings: int
    input_len: int
    chunk: int

    @property
    def fits(self) -> bool:
        return self.fit_code == codes.FIT_OK

    def activation_bytes(self, batch: int) -> float:
        """Workspace of a batch's prefill pass: its prompt tokens up to one chunk, and logits."""
        return (min(batch * self.input_len, self.chunk) * self.sizes.activation_per_token
                + batch * self.sizes.logits_per_sequence)


def fit_memory(model: ModelArch, constants: Constants, memory: DeviceMemory, scenario: Scenario,
               layout: Layout, peak: float) -> MemoryFit:
    """How the scenario sits in memory. ``peak`` is the compute peak (infinite where none is
    published: only the memory questions then have answers)."""
    s = scenario
    warnings = 0
    size = sizes(model, constants, memory, s, layout.tp, layout.pp, layout.effective_ep)
    max_context = s.input_len + s.output_len
    if max_context > model.max_context:
        warnings |= codes.WARN_CONTEXT_EXCEEDS_MODEL
    # The layers of the model's own heads, then its attention groups (sparse, compressed, global).
    groups_kv = AttentionGroups.of(model).kv_bytes(max_context, layout.tp, bytes_per_element(s.kv_precision))
    kv_sequence = (size.kv_per_token_layer * AttentionLayers.of(model).stored(max_context) + groups_kv) / layout.pp
    offload = memory.offload(s)
    kv_offload = memory.kv_offload(s)
    weights_far = size.weights * offload
    weights_near = size.weights - weights_far
    # A sequence's KV cache splits the same way at every position: near and far parts.
    kv_sequence_near = kv_sequence * (1.0 - kv_offload)
    kv_sequence_far = kv_sequence * kv_offload
    chunk = constants.prefill_chunk_tokens

    # Only the near part of the KV cache counts against device memory; the far part is bounded
    # by what the offloaded weights leave of the far tier.
    kv_room = memory.usable - weights_near - memory.runtime_overhead
    per_sequence = kv_sequence_near + size.logits_per_sequence + size.state_per_sequence
    near_max_batch = largest_batch(kv_room, per_sequence, s.input_len, chunk, size.activation_per_token)
    max_batch = near_max_batch
    if kv_sequence_far > 0.0:
        max_batch = int(min(max_batch, far_largest_batch(memory.far_usable - weights_far, kv_sequence_far)))

    fit_code = layout.fit_code
    one_sequence_workspace = min(s.input_len, chunk) * size.activation_per_token + size.logits_per_sequence
    if fit_code == codes.FIT_OK:
        if weights_near + memory.runtime_overhead + one_sequence_workspace > memory.usable:
            fit_code = codes.FIT_WEIGHTS_DO_NOT_FIT
        elif near_max_batch < 1:
            fit_code = codes.FIT_KV_DOES_NOT_FIT_ONE_SEQUENCE
        elif weights_far + kv_sequence_far > memory.far_usable:
            fit_code = codes.FIT_FAR_TIER_TOO_SMALL
        elif math.isinf(peak):
            fit_code = codes.FIT_COMPUTE_UNPUBLISHED
    if weights_near > constants.kv_starvation_weight_fraction * memory.usable:
        warnings |= codes.WARN_KV_STARVED

    wave_count, resident = waves(s.batch, max_batch, fit_code == codes.FIT_OK)
    if wave_count > 1:
        warnings |= codes.WARN_KV_WAVES
    return MemoryFit(
        sizes=size,
        offload=offload,
        kv_offload=kv_offload,
        weights_near=weights_near,
        weights_far=weights_far,
        kv_sequence=kv_sequence,
        kv_sequence_near=kv_sequence_near,
        kv_sequence_far=kv_sequence_far,
        state_sequence=size.state_per_sequence,
        kv_room=kv_room,
        max_batch=max_batch,
        max_batch_term=largest_batch_term(kv_room, per_sequence, s.input_len, chunk, size.activation_per_token),
        fit_code=fit_code,
        waves=wave_count,
        resident=resident,
        # What would fit one sequence: more tensor parallelism, or offloading.
        tp_needed=tp_needed(model, constants, memory, s, layout.effective_ep, offload),
        offload_needed=offload_needed(memory, size.weights, size.room_for_weights, kv_sequence_far),
        warnings=warnings,
        input_len=s.input_len,
        chunk=chunk,
    )


# ---- placement --------------------------------------------------------------------------------


def fill(free: list[float], amount: float) -> list[float]:
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


def place(usable_by_tier: list[float], workspace: float, weights_near: float,
          kv_near: float) -> tuple[list[float], list[float]]:
    """Each near tier's share of the weights and of the KV cache: the workspace is reserved in
    the slowest tier, then weights and KV cache fill the tiers fastest first."""
    free = list(usable_by_tier)
    reserve = workspace
    for index in range(len(free) - 1, -1, -1):
        taken = min(free[index], reserve)
        free[index] -= taken
        reserve -= taken
    weight_share = fill(free, weights_near)
    kv_share = fill(free, kv_near)
    return weight_share, kv_share


class TierReads:
    """Where a pass's bytes are read from, and what that costs in time and energy: weights and
    KV cache by their placed shares, offloaded parts from the far tier over its link,
    activation traffic in the workspace's (slowest near) tier."""

    def __init__(self, accelerator: Accelerator, cls: ClassConstants, constants: Constants, memory: DeviceMemory,
                 fit: MemoryFit) -> None:
        stack = float(accelerator.software_efficiency)  # serving-stack maturity, 1 = reference
        near, far = memory.near_tiers, memory.far_tier
        self.offload = fit.offload
        self.kv_offload = fit.kv_offload
        # The recurrent state is placed with the near KV cache (and read from the same tiers).
        self.weight_share, self.kv_share = place(
            memory.usable_by_tier, memory.runtime_overhead + fit.activation_bytes(fit.resident), fit.weights_near,
            fit.resident * (fit.kv_sequence_near + fit.state_sequence),
        )
        self.workspace_tier = len(near) - 1
        self.near_bandwidth = [t.effective_bandwidth_Bps * cls.memory_efficiency * stack for t in near]
        self.far_bandwidth = far.effective_bandwidth_Bps * cls.link_efficiency * stack if far else 1.0
        self.near_energy = [constants.memory_energy_J_per_byte[t.kind] for t in near]
        self.far_energy = constants.memory_energy_J_per_byte[far.kind] if far else 0.0

    def split(self, weight_bytes: float, kv_bytes: float, activation_traffic: float,
              state_bytes: float = 0.0) -> tuple[float, ...]:
        """Bytes read from each near tier in order, then from the far tier. ``state_bytes`` (the
        recurrent state read and written) is read where the near KV cache is, never offloaded."""
        near = [
            weight_bytes * (1.0 - self.offload) * self.weight_share[i]
            + kv_bytes * (1.0 - self.kv_offload) * self.kv_share[i]
            + state_bytes * self.kv_share[i]
            for i in range(len(self.near_bandwidth))
        ]
        near[self.workspace_tier] += activation_traffic
        # Offloaded weights and KV cache are read from (and new KV entries written to) the far
        # tier over its link.
        return (*near, weight_bytes * self.offload + kv_bytes * self.kv_offload)

    def time(self, bytes_by_tier: tuple[float, ...]) -> float:
        near = sum(b / bw for b, bw in zip(bytes_by_tier[:-1], self.near_bandwidth, strict=True))
        return near + bytes_by_tier[-1] / self.far_bandwidth

    def energy(self, bytes_by_tier: tuple[float, ...]) -> float:
        near = sum(b * e for b, e in zip(bytes_by_tier[:-1], self.near_energy, strict=True))
        return near + bytes_by_tier[-1] * self.far_energy
