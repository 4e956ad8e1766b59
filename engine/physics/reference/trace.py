"""What the steps found on the way to a result: the facts the text layer quotes (chunks and
micro-batches, tier shares, the networks and the all-reduce algorithm chosen, the parts of the
fixed costs, the power model's figures), recorded as the reference computes them so that
nothing downstream needs to work them out again.

``ReferenceModel.evaluate_traced(scenario)`` returns a :class:`Trace` beside the ``Result``.
Per device (the busiest one) unless a name says otherwise; SI units (bytes, s, FLOP, B/s, W, J).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...core.accelerator import Accelerator, Interconnect, MemoryTier
from ...core.constants import ClassConstants
from ...core.precision import UNQUANTISED_BYTES, bytes_per_element
from ...core.model import KIND_LABELS
from .closed_forms import (
    AttentionGroups,
    capped_floor_sum,
    expected_max_standard_normal,
    group_attended,
    group_index_keys,
    group_prompt_attended,
    group_stored,
)
from .network import AllReduce, AllToAll, Network
from .phases import Setup, Step, mean_decode_context
from .stage import OperatorTimes, operator_times


@dataclass(frozen=True)
class NetworkTrace:
    """The network a parallel group uses."""

    name: str  # of the interconnect (scale-up, or scale-out beyond its domain)
    group: int  # devices in the group
    link_bandwidth_Bps: float  # what one device sends at, per direction, to its peers in the group
    bandwidth_Bps: float  # the same times the class's interconnect efficiency: what the engine charges
    latency_s: float  # per step
    crosses_domain: bool  # the group is larger than the scale-up domain
    peers: int  # devices each one exchanges with at once: the rest of the group, or 1 for a hand-over
    interconnect: Interconnect  # the catalog's record of the network

    @classmethod
    def of(cls, network: Network, group: int, peers: int) -> NetworkTrace:
        return cls(network.name, group, network.link_bandwidth, network.bandwidth, network.latency,
                   network.crosses_domain, peers, network.interconnect)


@dataclass(frozen=True)
class PhaseTrace:
    """One phase (the prefill of a wave, or one decode step) as stage passes."""

    passes: int  # stage passes per device: prefill chunks, or decode micro-batches
    tokens_per_pass: float
    sequences_per_pass: float
    pipeline_passes: int  # in a row: chunks + pp − 1, or pp
    flops_per_pass: float
    attention_flops_per_pass: float
    bytes_per_pass: float  # moved: weights, KV cache and activation traffic
    weight_bytes_per_pass: float  # dense part and routed experts
    kv_read_bytes_per_pass: float  # the KV cache attention reads (prefill: earlier chunks re-read)
    kv_bytes_per_pass: float  # read and written
    kv_bytes_per_sequence: float  # of a pass's KV cache bytes, one sequence's
    state_bytes_per_pass: float  # the recurrent layers' state read and written (0 without such layers)
    recurrent_flops_per_pass: float  # of attention_flops_per_pass: the recurrent layers' state work
    activation_traffic_bytes_per_pass: float
    bytes_by_tier_per_pass: tuple[float, ...]  # near tiers in order, then the far tier
    near_bytes_per_pass: float  # from the near tiers
    far_weight_bytes_per_pass: float  # offloaded weights streamed from the far tier
    far_kv_bytes_per_pass: float  # offloaded KV cache read from and written to the far tier
    near_time_s: float  # of the memory time: the near tiers' bytes, each at its own rate
    far_time_s: float  # of the memory time: the far tier's bytes over its link (0 without one)
    operators: OperatorTimes  # compute and memory time by operator: the whole pass, linear layers, attention
    pass_time_s: float  # one stage pass: execution + communication + per-layer overhead
    expert_touch_probability: float  # that one routed expert gets a token of the pass (0 if dense)
    mean_experts_touched: float  # distinct experts per MoE layer the pass touches, E·q (uniform routing)
    experts_touched: float  # of them, on the busiest device
    token_imbalance: float  # the busiest expert-parallel device's routed tokens over the mean
    expert_flops_per_pass: float
    expert_read_bytes_per_pass: float
    all_reduce: AllReduce  # one of the pass's all-reduces: message, algorithm, time, bytes sent
    all_to_all: AllToAll | None  # one of its all-to-alls, with expert parallelism
    link_bytes_per_pass: float  # sent by a device over all its collectives
    transfer_s: float  # one hand-over to the next pipeline stage (0 without PP)
    host_steps: int  # forward steps whose fixed host time the phase pays: chunks, or 1
    host_s: float  # the serving stack's host time over the phase
    host_per_pipeline_pass_s: float  # spread over the passes in a row, as the phase's bound counts it
    dynamic_energy_J: float  # over the phase, above idle
    power_demand_W: float  # idle + dynamic energy / time, before the busy floor and the TDP cap


@dataclass(frozen=True)
class GroupTrace:
    """One attention group (``ModelArch.attention_groups``: the model's "global", "sparse",
    "compressed" or "compressed_sparse" layers) at this scenario, on the busiest device. Entry
    and key counts are per layer; bytes and FLOPs are over all the model's layers of the kind
    for one sequence (or one decoding token), before the pipeline stages share them."""

    kind: str
    label: str  # what the kind is called where a person reads it
    layers: int
    ratio: int  # tokens per cached entry (1: every token)
    window: int  # tokens kept uncompressed besides (0: none)
    top_k: int  # entries a token attends (0: all)
    index_stride: int  # tokens per indexer key (0: no indexer)
    entry_bytes: float  # one cached entry of one layer on the busiest device
    index_key_bytes: float  # one indexer key (every device keeps all of them)
    stored_entries: float  # entries one layer keeps at full context
    stored_index_keys: float  # indexer keys one layer keeps at full context
    kv_sequence_bytes: float  # one sequence's entries and keys at full context
    index_sequence_bytes: float  # of which the indexer's keys
    context_entries: float  # entries one layer keeps at the mean decode context
    attended_entries: float  # a decoding token reads per layer at the mean decode context
    index_keys_read: float  # keys the indexer scores per layer at the mean decode context
    decode_read_bytes: float  # what a decoding token reads: the entries it attends and every key
    entry_read_bytes: float  # of which the entries it attends
    index_read_bytes: float  # and the indexer's keys
    write_bytes: float  # what a token writes: its share of an entry, its window entry, its share of a key
    decode_flops: float  # a decoding token's attention over the entries it attends and the keys scored
    index_flops: float  # of which the indexer's scoring
    prompt_entries: float  # Σ over a prompt's positions of the entries each attends, per layer
    prompt_index_keys: float  # Σ over a prompt's positions of the keys each scores, per layer
    prompt_flops: float  # a prompt's attention and scoring


def group_traces(setup: Setup) -> tuple[GroupTrace, ...]:
    """Each attention group's cache, reads and FLOPs at the scenario's contexts."""
    s, layout = setup.scenario, setup.layout
    p_kv = bytes_per_element(s.kv_precision)
    full, mean = s.input_len + s.output_len, mean_decode_context(s)
    traces = []
    for g in setup.groups.groups:
        one = AttentionGroups((g,))
        index_keys = group_index_keys(full, g.index_stride)
        keys_read = group_index_keys(mean, g.index_stride)
        traces.append(GroupTrace(
            kind=g.kind,
            label=KIND_LABELS[g.kind],
            layers=g.layers,
            ratio=g.ratio,
            window=g.window,
            top_k=g.top_k,
            index_stride=g.index_stride,
            entry_bytes=AttentionGroups.entry_bytes(g, layout.tp, p_kv),
            index_key_bytes=g.index_key_bytes,
            stored_entries=group_stored(full, g.ratio, g.window),
            stored_index_keys=index_keys,
            kv_sequence_bytes=one.kv_bytes(full, layout.tp, p_kv),
            index_sequence_bytes=g.layers * g.index_key_bytes * index_keys,
            context_entries=group_stored(mean, g.ratio, g.window),
            attended_entries=group_attended(mean, g.ratio, g.window, g.top_k),
            index_keys_read=keys_read,
            decode_read_bytes=one.read_bytes(mean, layout.tp, p_kv),
            entry_read_bytes=g.layers * AttentionGroups.entry_bytes(g, layout.tp, p_kv)
            * group_attended(mean, g.ratio, g.window, g.top_k),
            index_read_bytes=g.layers * g.index_key_bytes * keys_read,
            write_bytes=one.write_bytes(layout.tp, p_kv),
            decode_flops=one.flops(mean, layout.head_fraction),
            index_flops=g.layers * g.index_flops * keys_read,
            prompt_entries=group_prompt_attended(s.input_len, g.ratio, g.window, g.top_k),
            prompt_index_keys=capped_floor_sum(s.input_len, g.index_stride, 0) if g.index_stride > 0 else 0.0,
            prompt_flops=one.prompt_flops(s.input_len, layout.head_fraction),
        ))
    return tuple(traces)


@dataclass(frozen=True)
class Trace:
    # compute
    compute_precision: str  # the peak key products run at
    peak_flops: float  # FLOP/s at that precision
    compute_rate_flops: float  # sustained: peak × compute efficiency × serving-stack factor
    # layout
    effective_ep: int  # ep for a mixture of experts, 1 for a dense model
    layers_per_stage: float
    heads_per_device: int  # ⌈h/tp⌉
    kv_heads_per_device: int  # ⌈KV shards/tp⌉ (an MLA latent is one shard, on every device)
    experts_per_device: int  # ⌈E/ep⌉ routed experts per MoE layer (0 if dense)
    # memory
    near_tiers: tuple[MemoryTier, ...]  # where weights and KV cache are placed, fastest first
    far_tier: MemoryTier | None  # where offloaded weights and KV cache are kept
    ridge_tier: MemoryTier  # the tier the ridge point is taken at: device memory, else the slowest near tier
    wide_bytes_per_element: float  # embeddings, LM head, norms and routers: 16 bits unless the weights are wider
    offload: float  # share of the weights in the far tier (0 without one)
    kv_offload: float  # share of the KV cache in the far tier (0 without one)
    weights_near_bytes: float  # the weights left in the near tiers
    full_context: int  # tokens of context at the last step: input + output
    kv_layers: int  # layers that keep a KV cache
    kv_bytes_per_token_layer: float
    kv_sequence_bytes: float  # one sequence's KV cache at full context
    kv_sequence_near_bytes: float  # of which in the near tiers
    kv_sequence_far_bytes: float  # of which offloaded
    kv_cache_near_bytes: float  # the whole batch's KV cache at full context left in the near tiers
    kv_room_bytes: float  # usable memory the near weights and the runtime leave for KV cache, state and workspace
    recurrent_layers: int  # layers that keep a fixed-size state (DeltaNet, Mamba-2) instead of a KV cache
    state_sequence_bytes: float  # one sequence's recurrent state, whatever its context
    recurrent_state_bytes: float  # the whole batch's
    recurrent_flops_per_token_prefill: float  # the recurrent layers' state work per prompt token (chunked algorithm)
    recurrent_flops_per_token_decode: float  # and per decoding token (the recurrent step)
    device_bytes: float  # what the near tiers hold at the whole batch: weights, KV cache, state, workspace, runtime
    max_batch_term: str  # of memory.largest_batch_term: which side of the workspace's kink sets the largest batch
    activation_bytes_per_token: float
    logits_bytes_per_sequence: float
    dense_read_bytes: float  # weights every pass reads besides routed experts
    weight_tier_shares: tuple[float, ...]  # of all weights: near tiers in order, then the far tier
    kv_tier_shares: tuple[float, ...]  # of the KV cache, the same way
    near_rates_Bps: tuple[float, ...]  # sustained read rate of each near tier (× η_m × stack)
    far_rate_Bps: float  # of the far tier over its link (× η_link × stack); 0 without one
    # attention positions, summed over layers
    stored_positions: float  # KV entries a sequence keeps at full context
    mean_decode_context: float  # input + output/2
    decode_attended_positions: float  # a decode token reads at the mean context
    prompt_positions: float  # Σ over a prompt's tokens of those each attends to
    prompt_reread_positions: float  # a prompt's later chunks re-read from its earlier ones
    prompt_tokens: int  # of the wave's prompts, all prefilled together
    attention_groups: tuple[GroupTrace, ...]  # the sparse, compressed and global layers, one per kind (else empty)
    # experts
    ep_spread_z: float  # expected maximum of EP standard normal draws (Blom): the busiest device's spread
    # networks
    tp_network: NetworkTrace
    ep_network: NetworkTrace
    pp_network: NetworkTrace  # a hand-over: each device to its counterpart in the next stage
    collective_overhead_s: float  # launching and synchronising each communication operation
    # fixed costs
    layer_overhead_floor_s: float  # per layer per pass
    activation_quantization_s: float  # per layer per pass, activations below 16 bits (else 0)
    layer_overhead_s: float  # the two together
    overhead_per_pass_s: float  # over the stage's layers
    step_overhead_s: float  # host time per forward step
    sequence_overhead_s: float  # and per sequence in it
    # power
    energy_per_flop_J: float
    energy_per_link_byte_J: float
    idle_W: float
    tdp_W: float
    busy_floor_W: float  # drawn at least while executing
    # the phases
    prefill: PhaseTrace
    decode: PhaseTrace


def _phase(setup: Setup, step: Step, host_steps: int, prefill: bool) -> PhaseTrace:
    stage, communication, tiers = setup.stage, setup.communication, setup.stage.tiers
    moe = setup.model.moe
    experts = stage.experts(step.tokens)
    stage_pass = step.stage_pass
    by_tier = stage_pass.bytes_by_tier
    far_tier = setup.memory.far_tier
    far_time = by_tier[-1] / tiers.far_bandwidth if far_tier is not None else 0.0
    return PhaseTrace(
        passes=step.passes,
        tokens_per_pass=step.tokens,
        sequences_per_pass=step.sequences,
        pipeline_passes=step.pipeline_passes,
        flops_per_pass=stage_pass.flops,
        attention_flops_per_pass=step.attention_flops,
        bytes_per_pass=stage_pass.bytes,
        weight_bytes_per_pass=stage_pass.weight_bytes,
        kv_read_bytes_per_pass=step.kv_read,
        kv_bytes_per_pass=stage_pass.kv_bytes,
        kv_bytes_per_sequence=stage_pass.kv_bytes / step.sequences,
        state_bytes_per_pass=stage_pass.state_bytes,
        recurrent_flops_per_pass=step.tokens * setup.recurrent_flops_per_token(prefill),
        activation_traffic_bytes_per_pass=stage.activation_traffic(step.tokens),
        bytes_by_tier_per_pass=by_tier,
        near_bytes_per_pass=sum(by_tier[:-1]),
        far_weight_bytes_per_pass=stage_pass.weight_bytes * tiers.offload,
        far_kv_bytes_per_pass=stage_pass.kv_bytes * tiers.kv_offload,
        near_time_s=tiers.time((*by_tier[:-1], 0.0)),
        far_time_s=far_time,
        operators=operator_times(stage_pass.compute_time, stage_pass.memory_time, stage_pass.attention_compute_time,
                                 stage_pass.attention_memory_time),
        pass_time_s=stage_pass.time,
        expert_touch_probability=experts.touch_probability,
        mean_experts_touched=moe.n_routed_experts * experts.touch_probability if moe else 0.0,
        experts_touched=experts.touched,
        token_imbalance=experts.imbalance,
        expert_flops_per_pass=experts.flops,
        expert_read_bytes_per_pass=experts.read_bytes,
        all_reduce=communication.all_reduce(step.tokens),
        all_to_all=communication.all_to_all(step.tokens) if setup.layout.effective_ep > 1 else None,
        link_bytes_per_pass=step.stage_pass.link_bytes,
        transfer_s=step.transfer_s,
        host_steps=host_steps,
        host_s=step.host_s,
        host_per_pipeline_pass_s=step.host_s / step.pipeline_passes,
        dynamic_energy_J=step.dynamic_J,
        power_demand_W=step.demand_W,
    )


def trace_of(accelerator: Accelerator, cls: ClassConstants, setup: Setup, prefill: Step, decode: Step) -> Trace:
    s, m, layout, fit, memory = setup.scenario, setup.model, setup.layout, setup.fit, setup.memory
    stage, tiers, power, communication = setup.stage, setup.stage.tiers, setup.power, setup.communication
    kv_layers = setup.attention.count
    return Trace(
        compute_precision=setup.compute_precision,
        peak_flops=setup.peak,
        compute_rate_flops=stage.compute_rate,
        effective_ep=layout.effective_ep,
        layers_per_stage=layout.layers_per_stage,
        heads_per_device=math.ceil(m.n_heads / layout.tp),
        kv_heads_per_device=math.ceil(m.kv_shards / layout.tp),
        experts_per_device=fit.sizes.experts_per_device,
        near_tiers=tuple(memory.near_tiers),
        far_tier=memory.far_tier,
        ridge_tier=accelerator.tier("device") or memory.near_tiers[-1],
        wide_bytes_per_element=max(bytes_per_element(s.weight_precision), UNQUANTISED_BYTES),
        offload=fit.offload,
        kv_offload=fit.kv_offload,
        weights_near_bytes=fit.weights_near,
        full_context=s.input_len + s.output_len,
        kv_layers=kv_layers,
        kv_bytes_per_token_layer=fit.sizes.kv_per_token_layer,
        kv_sequence_bytes=fit.kv_sequence,
        kv_sequence_near_bytes=fit.kv_sequence_near,
        kv_sequence_far_bytes=fit.kv_sequence_far,
        kv_cache_near_bytes=s.batch * fit.kv_sequence_near,
        kv_room_bytes=fit.kv_room,
        recurrent_layers=setup.recurrent.count,
        state_sequence_bytes=fit.state_sequence,
        recurrent_state_bytes=s.batch * fit.state_sequence,
        recurrent_flops_per_token_prefill=setup.recurrent_flops_per_token(True),
        recurrent_flops_per_token_decode=setup.recurrent_flops_per_token(False),
        device_bytes=fit.weights_near + s.batch * fit.kv_sequence_near + fit.activation_bytes(s.batch)
        + memory.runtime_overhead + s.batch * fit.state_sequence,
        max_batch_term=fit.max_batch_term,
        activation_bytes_per_token=fit.sizes.activation_per_token,
        logits_bytes_per_sequence=fit.sizes.logits_per_sequence,
        dense_read_bytes=fit.sizes.dense_read,
        weight_tier_shares=(*((1.0 - fit.offload) * share for share in tiers.weight_share), fit.offload),
        kv_tier_shares=(*((1.0 - fit.kv_offload) * share for share in tiers.kv_share), fit.kv_offload),
        near_rates_Bps=tuple(tiers.near_bandwidth),
        far_rate_Bps=tiers.far_bandwidth if setup.memory.far_tier is not None else 0.0,
        stored_positions=setup.attention.stored(s.input_len + s.output_len),
        mean_decode_context=mean_decode_context(s),
        decode_attended_positions=setup.attention.attended(mean_decode_context(s)),
        prompt_positions=setup.attention.prompt(s.input_len),
        prompt_reread_positions=setup.attention.reread(s.input_len, fit.chunk),
        prompt_tokens=fit.resident * s.input_len,
        attention_groups=group_traces(setup),
        ep_spread_z=expected_max_standard_normal(layout.effective_ep),
        tp_network=NetworkTrace.of(communication.tp_network, layout.tp, layout.tp - 1),
        ep_network=NetworkTrace.of(communication.ep_network, layout.effective_ep, layout.effective_ep - 1),
        pp_network=NetworkTrace.of(communication.pp_network, layout.tp * layout.pp, 1),
        collective_overhead_s=communication.collective,
        layer_overhead_floor_s=cls.per_layer_overhead_s,
        activation_quantization_s=stage.layer_overhead - cls.per_layer_overhead_s,
        layer_overhead_s=stage.layer_overhead,
        overhead_per_pass_s=stage.overhead_time,
        step_overhead_s=setup.step_overhead,
        sequence_overhead_s=setup.sequence_overhead,
        energy_per_flop_J=power.energy_per_flop,
        energy_per_link_byte_J=power.energy_per_link_byte,
        idle_W=power.idle,
        tdp_W=power.tdp,
        busy_floor_W=power.busy_floor,
        prefill=_phase(setup, prefill, prefill.passes, True),
        decode=_phase(setup, decode, 1, False),
    )
