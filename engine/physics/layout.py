"""The layouts of the plain float64 tables the kernels read and write, declared once by name.

Each table is struct-of-arrays: a row per field, a column per model, accelerator or scenario.
The rows are named here (and the output rows by the fields of ``results.Result``); the
integer row numbers the kernels use are generated from the names: row ``"layers"`` of
``MODEL_ROWS`` is ``M_LAYERS``, output field ``"prefill.time_s"`` is ``O_PREFILL_TIME_S``.
numba freezes these integers into the kernels when it compiles them; the kernel cache is
keyed by the source of the modules they import (``jit.py``), so a change here recompiles them.

Only the physics layer reads this module.
"""

from __future__ import annotations

import numpy as np

from ..core.precision import PEAK_KEY, PRECISIONS, UNQUANTISED_BYTES, bytes_per_element
from .results import N_OUTPUT_ROWS, OUTPUT_FIELDS

# The model table, one column per model (pack.pack_models): (row name, what it holds).
MODEL_ROWS: tuple[tuple[str, str], ...] = (
    ("layers", ""),
    ("hidden", ""),
    ("vocab", ""),
    ("heads", ""),
    ("kv_heads", ""),
    ("is_mla", ""),
    ("kv_shards", ""),
    ("kv_elements", "per token per attention layer"),
    ("attn_flops_decode", "per token per layer per context position"),
    ("attn_flops_prefill", ""),
    ("n_full", ""),
    ("n_window", ""),
    ("window", ""),
    ("block_fixed", "block linear params every token uses (incl. routers, shared experts)"),
    ("router", ""),
    ("expert", "params of one routed expert"),
    ("n_moe", ""),
    ("experts", "routed experts (0 for dense)"),
    ("top_k", ""),
    ("embedding", ""),
    ("untied_head", "LM head params stored apart from the embedding (0 if tied)"),
    ("norms", ""),
    ("ffn_width", "mean FFN width a token passes through"),
    ("attn_act_width", ""),
    ("max_context", ""),
    ("is_moe", ""),
    ("n_chunked", ""),
    ("attn_chunk", ""),
    # layers with a fixed-size state (closed_forms.RecurrentLayers): one layer, all its heads
    ("n_deltanet", "Gated DeltaNet layers"),
    ("deltanet_shards", "what TP splits them by: value heads"),
    ("deltanet_state_bytes", "one sequence's state in one layer"),
    ("deltanet_decode_flops", "per decoding token per layer, beyond the projections"),
    ("deltanet_prefill_flops", "per prompt token per layer (chunked algorithm)"),
    ("n_mamba", "Mamba-2 layers"),
    ("mamba_shards", "what TP splits them by: heads"),
    ("mamba_state_bytes", "one sequence's state in one layer"),
    ("mamba_decode_flops", "per decoding token per layer, beyond the projections"),
    ("mamba_prefill_flops", "per prompt token per layer (chunked algorithm)"),
    ("native_weight_code", "precision code of the published weight format, -1 if none"),
    ("native_experts_only", "1 when that format covers only the routed experts"),
    # the attention groups (core.model.AttentionGroup, closed_forms.AttentionGroups), a slot
    # per kind of core.model.GROUP_KINDS, GROUP_FIELDS each: row M_G0_LAYERS + slot x N_GROUP_FIELDS + field
    *((f"g{slot}_{name}", what) for slot in range(4) for name, what in (
        ("layers", "layers of the group's kind, 0: none"),
        ("elements", "one cached entry, elements at the KV precision"),
        ("shards", "KV heads tensor parallelism splits entries by"),
        ("ratio", "tokens per cached entry"),
        ("window", "tokens kept uncompressed besides, 0: none"),
        ("top_k", "entries attended, 0: all"),
        ("index_stride", "tokens per indexer key, 0: no indexer"),
        ("index_key_bytes", "one indexer key"),
        ("index_flops", "scoring one indexer key"),
        ("flops_decode", "attention FLOPs per attended entry, decode"),
        ("flops_prefill", "and prefill"),
    )),
)
GROUP_FIELDS: tuple[str, ...] = ("layers", "elements", "shards", "ratio", "window", "top_k", "index_stride",
                                 "index_key_bytes", "index_flops", "flops_decode", "flops_prefill")
MAX_ATTENTION_GROUPS = 4  # len(core.model.GROUP_KINDS)
COST_GROUP_FIELDS: tuple[str, ...] = ("layers", "ratio", "window", "top_k", "index_stride", "entry_decode_flops",
                                      "entry_prefill_flops", "entry_bytes", "key_decode_flops", "key_prefill_flops",
                                      "key_bytes")

# The accelerator table, one column per accelerator (pack.pack_accelerators).
ACCEL_ROWS: tuple[tuple[str, str], ...] = (
    ("n_near", "placeable on-chip/device tiers, 1 or 2, fastest first"),
    ("near0_capacity", ""),
    ("near0_bandwidth", "effective (memory or link, whichever is slower)"),
    ("near0_energy", "J/byte"),
    ("near1_capacity", ""),
    ("near1_bandwidth", ""),
    ("near1_energy", ""),
    ("has_far", ""),
    ("far_capacity", ""),
    ("far_bandwidth", ""),
    ("far_energy", ""),
    ("ic_bandwidth", "scale-up, per direction"),
    ("ic_latency", ""),
    ("ic_domain", ""),
    ("has_scale_out", ""),
    ("so_bandwidth", ""),
    ("so_latency", ""),
    ("tdp", ""),
    ("idle", ""),
    ("stack", "software efficiency"),
    ("eta_compute", ""),
    ("eta_memory", ""),
    ("eta_link", ""),
    ("eta_interconnect", ""),
    ("layer_overhead", ""),
    ("usable_fraction", ""),
    ("runtime_overhead", ""),
    ("ridge_bandwidth", "device-tier bandwidth for the ridge point"),
    ("busy_power_fraction", "share of TDP drawn at least while executing"),
    ("step_overhead", "serving stack's host time per forward step"),
    ("sequence_overhead", "and per sequence in the step"),
    ("operator_overlap", "1: a pass takes the whole pass's roofline; 0: each operator its own"),
    ("collective_overhead", "fixed cost of each communication operation"),
    ("activation_quant_overhead", "per layer, when activations are narrower than 16 bits"),
    ("ic_peer_bandwidth", "one direct link of a switchless mesh; 0 for a switched fabric"),
)

# The scenario table, one column per scenario (pack.pack_scenarios).
SCENARIO_ROWS: tuple[tuple[str, str], ...] = (
    ("model", ""),
    ("accel", ""),
    ("batch", ""),
    ("input", ""),
    ("output", ""),
    ("p_weight", ""),
    ("p_act", ""),
    ("p_kv", ""),
    ("tp", ""),
    ("pp", ""),
    ("ep", ""),
    ("dp", ""),
    ("offload", "fraction of weights in the far tier"),
    ("kv_offload", "fraction of the KV cache in the far tier"),
)

# The constants vector (pack.pack_constants).
CONSTANT_ROWS: tuple[tuple[str, str], ...] = (
    ("chunk", ""),
    ("logits_bytes", ""),
    ("starvation", ""),
    ("link_energy", ""),
)

# The iteration-cost table, one column per scenario (Engine.iteration_costs): what one forward
# step of the scenario's replica costs, as coefficients of the tokens, sequences and attention
# positions the step carries. evaluate_many writes them from the figures it works out for the
# scenario's own passes; kernels/iteration.py reads them. The first four groups are the
# arguments of kernels.helpers.stage_pass, in its order.
COST_ROWS: tuple[tuple[str, str], ...] = (
    # stage_pass: compute
    ("dense_flops_per_token", "FLOP per token of the block weights every token uses, busiest device"),
    ("head_flops_per_sequence", "FLOP per sequence of the LM head"),
    ("seconds_per_flop", "1 / (peak x compute efficiency x stack)"),
    ("energy_per_flop", "J per FLOP"),
    ("operator_overlap", "1: a pass takes the whole pass's roofline; 0: each operator its own"),
    # stage_pass: routed experts
    ("is_moe", "1 for a mixture of experts"),
    ("expert_miss", "1 - k/E: chance a token does not route to a given expert"),
    ("experts_per_device", "routed experts per MoE layer on one device"),
    ("expert_flops_per_token", "FLOP per token of its k routed experts, busiest device"),
    ("expert_read_per_touched", "bytes per distinct expert touched, over the stage's MoE layers"),
    ("top_k", "routed experts per token"),
    ("effective_ep", "expert parallelism (1 for a dense model)"),
    ("z_ep", "expected maximum of effective_ep standard normal draws"),
    # stage_pass: bytes and where they are read from
    ("dense_read", "bytes of weights every pass reads besides routed experts"),
    ("kv_write_per_token", "KV-cache bytes a token writes, over the stage's layers"),
    ("traffic_per_token", "activation bytes per token between the stage's kernels"),
    ("n_near", "placeable near tiers, 1 or 2"),
    ("weight_near0", "share of weights read from near tier 0"),
    ("weight_near1", "and from near tier 1"),
    ("kv_near0", "share of the KV cache read from near tier 0"),
    ("kv_near1", "and from near tier 1"),
    ("offload", "share of weights read from the far tier"),
    ("kv_offload", "share of the KV cache read from the far tier"),
    ("seconds_per_byte0", "s per byte of near tier 0, sustained"),
    ("seconds_per_byte1", "of near tier 1"),
    ("seconds_per_far_byte", "of the far tier, over its link"),
    ("kv_seconds_per_byte", "s per KV-cache byte, over its tiers"),
    ("energy0", "J per byte of near tier 0"),
    ("energy1", "of near tier 1"),
    ("far_energy", "of the far tier"),
    ("state_near0", "share of the recurrent state read from near tier 0 (never offloaded)"),
    ("state_near1", "and from near tier 1"),
    ("state_seconds_per_byte", "s per recurrent-state byte, over its tiers"),
    # stage_pass: communication
    ("tp", "tensor parallelism"),
    ("all_reduce_per_token", "s per token of a ring (or halving-doubling) all-reduce"),
    ("all_reduce_sent_per_token", "bytes a device sends per token in it"),
    ("all_reduce_latency", "s of the ring's 2(tp - 1) steps"),
    ("halving_latency", "s of halving-doubling's 2 log2(tp) steps (power-of-two tp)"),
    ("doubling_steps", "log2(tp) for a power-of-two tp, else 0"),
    ("doubling_per_token", "s per token of recursive doubling"),
    ("doubling_sent_per_token", "bytes a device sends per token in it"),
    ("tp_latency", "s per step of the TP network"),
    ("collective_overhead", "s to launch and synchronise each communication operation"),
    ("dispatched_per_token", "bytes per token one all-to-all sends, before imbalance"),
    ("ep_bandwidth", "B/s of the EP network, effective"),
    ("a2a_latency", "s of an all-to-all's ep - 1 steps"),
    ("layers_per_stage", "layers / pp"),
    ("moe_fraction", "share of layers with routed experts"),
    ("link_energy", "J per byte sent over links"),
    # a forward step
    ("overhead_time", "s of per-layer overhead in one stage pass"),
    ("pp", "pipeline stages"),
    ("pp_seconds_per_token", "s per token of a hand-over to the next stage"),
    ("pp_latency", "s of one hand-over's latency"),
    ("step_overhead", "s of the serving stack's host time per forward step"),
    ("sequence_overhead", "and per sequence in it"),
    ("idle", "W of one device, idle"),
    ("busy_floor", "W one device draws at least while executing"),
    ("tdp", "W, the cap of one device"),
    # attention work per position, summed over the stage's layers, busiest device
    ("prefill_attention_flops_per_position", "FLOP per causal position of a prompt token"),
    ("decode_attention_flops_per_position", "FLOP per position a decoding token attends to"),
    ("kv_bytes_per_position", "KV-cache bytes read per attended position"),
    # the recurrent layers' work, over the stage's layers, busiest device
    ("prefill_recurrent_flops_per_token", "FLOP per prompt token of the recurrent layers' chunked algorithm"),
    ("decode_recurrent_flops_per_token", "FLOP per decoding token of their recurrent step"),
    ("state_traffic_per_sequence", "recurrent-state bytes a scheduled sequence reads and writes"),
    # the model's attention layers, for request_positions
    ("n_full", "full-attention layers"),
    ("n_window", "sliding-window layers"),
    ("window", "their window, tokens"),
    ("n_chunked", "chunked-attention layers"),
    ("attention_chunk", "their chunk, tokens"),
    # the model's attention groups (core.model.AttentionGroup), for request_positions: a slot per
    # kind of core.model.GROUP_KINDS, COST_GROUP_FIELDS each, row C_G0_LAYERS + slot x
    # N_COST_GROUP_FIELDS + field. A group's entries and indexer keys count as positions of the
    # model's own attention layers, weighted by what one costs beside one such position (its FLOPs
    # over the own FLOPs per position, its bytes over the own KV bytes per position), the group's
    # layers included: so iteration_cost charges them through the coefficients above.
    ("group_layers", "layers in attention groups, 0: none (the simulator runs no stretches over them)"),
    *((f"g{slot}_{name}", what) for slot in range(4) for name, what in (
        ("layers", "layers of the slot's kind, 0: none"),
        ("ratio", "tokens per cached entry"),
        ("window", "tokens kept uncompressed besides, 0: none"),
        ("top_k", "entries attended, 0: all"),
        ("index_stride", "tokens per indexer key, 0: no indexer"),
        ("entry_decode_flops", "an attended entry's decode FLOPs, in own positions, x layers"),
        ("entry_prefill_flops", "its prefill FLOPs, in own prefill positions, x layers"),
        ("entry_bytes", "an entry's KV bytes, in own positions, x layers"),
        ("key_decode_flops", "scoring one indexer key, in own decode positions, x layers"),
        ("key_prefill_flops", "in own prefill positions, x layers"),
        ("key_bytes", "one indexer key's bytes, in own positions, x layers"),
    )),
    # for the serving simulator's KV-cache and power bookkeeping
    ("kv_bytes_per_token", "KV-cache bytes one token keeps on a device, all the stage's attention layers"),
    ("state_bytes_per_sequence", "recurrent-state bytes one running sequence keeps on a device"),
    ("weights_bytes", "weights per device, offloaded ones included"),
    ("usable_bytes", "near memory per device the weights, KV cache and workspace may use"),
    ("runtime_overhead_bytes", "the runtime's own memory per device"),
    ("devices_per_replica", "tp x pp"),
    ("replica_idle_W", "idle power of the replica's devices"),
    ("prefill_chunk_tokens", "most tokens per forward pass"),
)


def _number(prefix: str, rows: tuple[tuple[str, str], ...]) -> dict[str, int]:
    return {f"{prefix}{name.upper()}": index for index, (name, _) in enumerate(rows)}


_ROW_NUMBERS: dict[str, int] = {
    **_number("M_", MODEL_ROWS),
    **_number("A_", ACCEL_ROWS),
    **_number("S_", SCENARIO_ROWS),
    **_number("K_", CONSTANT_ROWS),
    **_number("C_", COST_ROWS),
    **{f"O_{name.upper().replace('.', '_')}": row for row, name in enumerate(OUTPUT_FIELDS)},
    # precision codes: positions in PRECISIONS, the rows of the peak table
    **{f"P_{name.upper()}": code for code, name in enumerate(PRECISIONS)},
}
globals().update(_ROW_NUMBERS)

N_MODEL_ROWS = len(MODEL_ROWS)
N_GROUP_FIELDS = len(GROUP_FIELDS)
N_COST_GROUP_FIELDS = len(COST_GROUP_FIELDS)
N_ACCEL_ROWS = len(ACCEL_ROWS)
N_SCENARIO_ROWS = len(SCENARIO_ROWS)
SCENARIO_ROW: dict[str, int] = {name: row for row, (name, _) in enumerate(SCENARIO_ROWS)}  # by field's physics_row
N_CONSTANTS = len(CONSTANT_ROWS)
N_COST_ROWS = len(COST_ROWS)
N_PRECISIONS = len(PRECISIONS)

BYTES = np.array([bytes_per_element(name) for name in PRECISIONS])  # by precision code
# By precision code, the code of the peak it runs at on units made for it (FP16 at BF16's,
# MXFP4 and NVFP4 at FP4's): a compute format other than this one is a fallback.
PEAK_CODE = np.array([PRECISIONS.index(PEAK_KEY[name]) for name in PRECISIONS], dtype=np.int64)
MAX_BATCH_REPORTED = 1e15  # a "largest batch" beyond this is reported as this
# Energy per FLOP is set so that sustained dense products alone reach TDP; any memory traffic
# on top asks for a little more. Warn only when the demand is clearly above the cap.
POWER_CAP_WARNING_RATIO = 1.05
MAX_TP_SEARCH = 65536
MAX_TP_SEARCH_DOUBLINGS = 16  # log2(MAX_TP_SEARCH)
Z_REMEMBERED_GROUPS = 1024  # expert-parallel group sizes whose z is kept during one call

__all__ = [
    *_ROW_NUMBERS,
    "N_MODEL_ROWS", "N_ACCEL_ROWS", "N_SCENARIO_ROWS", "N_CONSTANTS", "N_OUTPUT_ROWS", "N_PRECISIONS", "N_COST_ROWS",
    "BYTES", "PEAK_CODE", "UNQUANTISED_BYTES", "MAX_BATCH_REPORTED", "POWER_CAP_WARNING_RATIO", "MAX_TP_SEARCH",
    "MAX_TP_SEARCH_DOUBLINGS", "Z_REMEMBERED_GROUPS", "N_GROUP_FIELDS", "MAX_ATTENTION_GROUPS", "GROUP_FIELDS",
    "COST_GROUP_FIELDS", "N_COST_GROUP_FIELDS",
]
