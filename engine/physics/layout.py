"""The layouts of the plain float64 tables the kernels read and write, declared once by name.

Each table is struct-of-arrays: a row per field, a column per model, accelerator or scenario.
The rows are named here (and the output rows by the fields of ``results.Result``); the
integer row numbers the kernels use are generated from the names: row ``"layers"`` of
``MODEL_ROWS`` is ``M_LAYERS``, output field ``"prefill.time_s"`` is ``O_PREFILL_TIME_S``.
numba freezes these integers into the kernels when it compiles them; the kernel cache is
keyed to the engine's source (``jit.py``), so a change here recompiles them.

Only the physics layer reads this module.
"""

from __future__ import annotations

import numpy as np

from ..core.precision import PRECISIONS, UNQUANTISED_BYTES, bytes_per_element
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
)

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


def _number(prefix: str, rows: tuple[tuple[str, str], ...]) -> dict[str, int]:
    return {f"{prefix}{name.upper()}": index for index, (name, _) in enumerate(rows)}


_ROW_NUMBERS: dict[str, int] = {
    **_number("M_", MODEL_ROWS),
    **_number("A_", ACCEL_ROWS),
    **_number("S_", SCENARIO_ROWS),
    **_number("K_", CONSTANT_ROWS),
    **{f"O_{name.upper().replace('.', '_')}": row for row, name in enumerate(OUTPUT_FIELDS)},
    # precision codes: positions in PRECISIONS, the rows of the peak table
    **{f"P_{name.upper()}": code for code, name in enumerate(PRECISIONS)},
}
globals().update(_ROW_NUMBERS)

N_MODEL_ROWS = len(MODEL_ROWS)
N_ACCEL_ROWS = len(ACCEL_ROWS)
N_SCENARIO_ROWS = len(SCENARIO_ROWS)
N_CONSTANTS = len(CONSTANT_ROWS)
N_PRECISIONS = len(PRECISIONS)

BYTES = np.array([bytes_per_element(name) for name in PRECISIONS])  # by precision code
MAX_BATCH_REPORTED = 1e15  # a "largest batch" beyond this is reported as this
# Energy per FLOP is set so that sustained dense products alone reach TDP; any memory traffic
# on top asks for a little more. Warn only when the demand is clearly above the cap.
POWER_CAP_WARNING_RATIO = 1.05
MAX_TP_SEARCH = 65536
MAX_TP_SEARCH_DOUBLINGS = 16  # log2(MAX_TP_SEARCH)
Z_REMEMBERED_GROUPS = 1024  # expert-parallel group sizes whose z is kept during one call

__all__ = [
    *_ROW_NUMBERS,
    "N_MODEL_ROWS", "N_ACCEL_ROWS", "N_SCENARIO_ROWS", "N_CONSTANTS", "N_OUTPUT_ROWS", "N_PRECISIONS",
    "BYTES", "UNQUANTISED_BYTES", "MAX_BATCH_REPORTED", "POWER_CAP_WARNING_RATIO", "MAX_TP_SEARCH",
    "MAX_TP_SEARCH_DOUBLINGS", "Z_REMEMBERED_GROUPS",
]
