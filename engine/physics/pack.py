"""Turn catalogs and scenarios into the plain float64 tables the kernels read.

Tables are struct-of-arrays: one row per field, one column per model, accelerator or
scenario, so a kernel reading one field of many items walks contiguous memory.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.accelerator import Accelerator
from ..core.constants import Constants
from ..core.fields import SCENARIO_FIELDS
from ..core.model import GROUP_KINDS, ModelArch
from ..core.precision import FALLBACK, PEAK_KEY, PRECISIONS
from ..core.scenario import Scenario
from . import layout
from .reference.closed_forms import RecurrentLayers

PRECISION_CODE: dict[str, int] = {name: index for index, name in enumerate(PRECISIONS)}


def pack_models(models: Sequence[ModelArch]) -> np.ndarray:
    table = np.zeros((layout.N_MODEL_ROWS, len(models)))
    for column, m in enumerate(models):
        moe = m.moe
        table[layout.M_LAYERS, column] = m.n_layers
        table[layout.M_HIDDEN, column] = m.hidden_size
        table[layout.M_VOCAB, column] = m.vocab_size
        table[layout.M_HEADS, column] = m.n_heads
        table[layout.M_KV_HEADS, column] = m.n_kv_heads
        table[layout.M_IS_MLA, column] = 1.0 if m.mla is not None else 0.0
        table[layout.M_KV_SHARDS, column] = m.kv_shards
        table[layout.M_KV_ELEMENTS, column] = m.kv_elements_per_token_per_layer
        table[layout.M_ATTN_FLOPS_DECODE, column] = m.attention_flops_per_position_decode
        table[layout.M_ATTN_FLOPS_PREFILL, column] = m.attention_flops_per_position_prefill
        table[layout.M_N_FULL, column] = m.n_full_attention_layers
        table[layout.M_N_WINDOW, column] = m.n_window_attention_layers
        table[layout.M_WINDOW, column] = m.sliding_window
        table[layout.M_BLOCK_FIXED, column] = m.block_params_fixed
        table[layout.M_ROUTER, column] = m.router_params_total
        table[layout.M_EXPERT, column] = m.expert_params
        table[layout.M_N_MOE, column] = m.n_moe_layers
        table[layout.M_EXPERTS, column] = moe.n_routed_experts if moe else 0
        table[layout.M_TOP_K, column] = moe.experts_per_token if moe else 0
        table[layout.M_EMBEDDING, column] = m.embedding_params
        table[layout.M_UNTIED_HEAD, column] = 0 if m.tied_embeddings else m.lm_head_params
        table[layout.M_NORMS, column] = m.norm_params
        table[layout.M_FFN_WIDTH, column] = m.mean_ffn_width_per_token
        table[layout.M_ATTN_ACT_WIDTH, column] = m.attention_activation_width
        table[layout.M_MAX_CONTEXT, column] = m.max_context
        table[layout.M_IS_MOE, column] = 1.0 if moe else 0.0
        table[layout.M_N_CHUNKED, column] = m.n_chunked_attention_layers
        table[layout.M_ATTN_CHUNK, column] = m.attention_chunk
        recurrent = RecurrentLayers.of(m)
        table[layout.M_N_DELTANET, column] = recurrent.n_deltanet
        table[layout.M_DELTANET_SHARDS, column] = recurrent.deltanet_shards
        table[layout.M_DELTANET_STATE_BYTES, column] = recurrent.deltanet_state_bytes
        table[layout.M_DELTANET_DECODE_FLOPS, column] = recurrent.deltanet_decode_flops
        table[layout.M_DELTANET_PREFILL_FLOPS, column] = recurrent.deltanet_prefill_flops
        table[layout.M_N_MAMBA, column] = recurrent.n_mamba
        table[layout.M_MAMBA_SHARDS, column] = recurrent.mamba_shards
        table[layout.M_MAMBA_STATE_BYTES, column] = recurrent.mamba_state_bytes
        table[layout.M_MAMBA_DECODE_FLOPS, column] = recurrent.mamba_decode_flops
        table[layout.M_MAMBA_PREFILL_FLOPS, column] = recurrent.mamba_prefill_flops
        native = m.native_weight_precision
        table[layout.M_NATIVE_WEIGHT_CODE, column] = PRECISION_CODE[native] if native in PRECISION_CODE else -1
        table[layout.M_NATIVE_EXPERTS_ONLY, column] = 1.0 if m.native_precision_scope == "experts" else 0.0
        for group in m.attention_groups:
            base = layout.M_G0_LAYERS + GROUP_KINDS.index(group.kind) * layout.N_GROUP_FIELDS
            for offset, name in enumerate(layout.GROUP_FIELDS):
                table[base + offset, column] = getattr(group, name)
    return table


def pack_accelerators(accelerators: Sequence[Accelerator], constants: Constants) -> tuple[np.ndarray, np.ndarray]:
    """The accelerator table and the peak table (one row per precision code)."""
    table = np.zeros((layout.N_ACCEL_ROWS, len(accelerators)))
    peaks = np.zeros((layout.N_PRECISIONS, len(accelerators)))
    energy = constants.memory_energy_J_per_byte
    for column, a in enumerate(accelerators):
        cls = constants.for_class(a.architecture_class)
        near, far = a.near_tiers, a.far_tier
        if not 1 <= len(near) <= 2:
            raise ValueError(f"{a.id}: the kernels take one or two near memory tiers, not {len(near)}")
        table[layout.A_N_NEAR, column] = len(near)
        table[layout.A_NEAR0_CAPACITY, column] = near[0].accelerator_capacity_bytes
        table[layout.A_NEAR0_BANDWIDTH, column] = near[0].effective_bandwidth_Bps
        table[layout.A_NEAR0_ENERGY, column] = energy[near[0].kind]
        if len(near) > 1:
            table[layout.A_NEAR1_CAPACITY, column] = near[1].accelerator_capacity_bytes
            table[layout.A_NEAR1_BANDWIDTH, column] = near[1].effective_bandwidth_Bps
            table[layout.A_NEAR1_ENERGY, column] = energy[near[1].kind]
        if far is not None:
            table[layout.A_HAS_FAR, column] = 1.0
            table[layout.A_FAR_CAPACITY, column] = float(far.capacity_bytes)
            table[layout.A_FAR_BANDWIDTH, column] = far.effective_bandwidth_Bps
            table[layout.A_FAR_ENERGY, column] = energy[far.kind]
        table[layout.A_IC_BANDWIDTH, column] = float(a.interconnect.bandwidth_per_direction_Bps)
        if a.interconnect.peer_bandwidth_per_direction_Bps is not None:
            table[layout.A_IC_PEER_BANDWIDTH, column] = float(a.interconnect.peer_bandwidth_per_direction_Bps)
        table[layout.A_IC_LATENCY, column] = float(a.interconnect.latency_s)
        table[layout.A_IC_DOMAIN, column] = float(a.interconnect.domain_size)
        if a.scale_out is not None:
            table[layout.A_HAS_SCALE_OUT, column] = 1.0
            table[layout.A_SO_BANDWIDTH, column] = float(a.scale_out.bandwidth_per_direction_Bps)
            table[layout.A_SO_LATENCY, column] = float(a.scale_out.latency_s)
        table[layout.A_TDP, column] = float(a.tdp_W)
        table[layout.A_IDLE, column] = float(a.idle_W)
        table[layout.A_STACK, column] = float(a.software_efficiency)
        table[layout.A_ETA_COMPUTE, column] = cls.compute_efficiency
        table[layout.A_ETA_MEMORY, column] = cls.memory_efficiency
        table[layout.A_ETA_LINK, column] = cls.link_efficiency
        table[layout.A_ETA_INTERCONNECT, column] = cls.interconnect_efficiency
        table[layout.A_LAYER_OVERHEAD, column] = cls.per_layer_overhead_s
        table[layout.A_USABLE_FRACTION, column] = cls.usable_memory_fraction
        table[layout.A_RUNTIME_OVERHEAD, column] = cls.runtime_overhead_bytes
        table[layout.A_BUSY_POWER_FRACTION, column] = cls.busy_power_fraction
        table[layout.A_STEP_OVERHEAD, column] = cls.step_overhead_s
        table[layout.A_SEQUENCE_OVERHEAD, column] = cls.sequence_overhead_s
        table[layout.A_OPERATOR_OVERLAP, column] = cls.operator_overlap
        table[layout.A_COLLECTIVE_OVERHEAD, column] = cls.collective_overhead_s
        table[layout.A_ACTIVATION_QUANT_OVERHEAD, column] = cls.activation_quantization_overhead_s
        device_tier = a.tier("device") or near[-1]
        table[layout.A_RIDGE_BANDWIDTH, column] = device_tier.effective_bandwidth_Bps
        for name, code in PRECISION_CODE.items():
            # No published peak: unbounded (reference.stage.compute_peak), and the kernels say why.
            peaks[code, column] = a.peak(PEAK_KEY[name]) if a.compute_published else np.inf
    return table, peaks


def fallback_table() -> np.ndarray:
    """Row per requested precision code: the codes to try in order, padded with -1."""
    width = max(len(chain) for chain in FALLBACK.values())
    table = np.full((layout.N_PRECISIONS, width), -1, dtype=np.int64)
    for name, chain in FALLBACK.items():
        for position, candidate in enumerate(chain):
            table[PRECISION_CODE[name], position] = PRECISION_CODE[candidate]
    return table


def pack_constants(constants: Constants) -> np.ndarray:
    vector = np.zeros(layout.N_CONSTANTS)
    vector[layout.K_CHUNK] = constants.prefill_chunk_tokens
    vector[layout.K_LOGITS_BYTES] = constants.logits_bytes_per_element
    vector[layout.K_STARVATION] = constants.kv_starvation_weight_fraction
    vector[layout.K_LINK_ENERGY] = constants.interconnect_energy_J_per_byte
    return vector


def pack_scenarios(
    scenarios: Sequence[Scenario], model_index: dict[str, int], accelerator_index: dict[str, int]
) -> np.ndarray:
    """One column per scenario, one row per field (``fields.SCENARIO_FIELDS``' ``physics_row``):
    ids as their index in the packed catalog, precisions as their codes, numbers as they are."""
    table = np.zeros((layout.N_SCENARIO_ROWS, len(scenarios)))
    indices = {"model": model_index, "accelerator": accelerator_index}
    for field in SCENARIO_FIELDS:
        row = table[layout.SCENARIO_ROW[field.physics_row]]
        if field.kind == "id":
            index = indices[field.name]
            row[:] = [index[getattr(s, field.name)] for s in scenarios]
        elif field.kind == "precision":
            row[:] = [PRECISION_CODE[getattr(s, field.name)] for s in scenarios]
        else:
            row[:] = [getattr(s, field.name) for s in scenarios]
    return table
