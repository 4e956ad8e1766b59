"""The reference model: the physics in plain, readable Python.

This is the oracle. The numba kernels (``physics/kernels``) compute the same numbers over
arrays of scenarios and the tests hold them equal to 1e-9. Everything is per device unless a
name says otherwise, and in SI units: bytes, seconds, FLOP, W, J.

How a scenario is computed, one module per step (``model.ReferenceModel`` calls them in turn):

1. ``parallel``: how tensor (tp), pipeline (pp) and expert (ep) parallelism split weights, KV
   heads and experts; the busiest device sets the pace where a split is uneven.
2. ``memory``: weights, KV cache, activation workspace and runtime overhead per device, placed
   in the device's tiers fastest first (offloaded weights and offloaded KV cache in the far
   tier, whose capacity they share); the largest batch that fits; whether it fits at all and
   what would make it fit.
3. ``network`` and ``stage``: the time of one pipeline stage for a micro-batch: compute and
   memory time (the roofline of the whole pass where the class overlaps its operators, else the
   linear layers' and attention's each) + communication + per-layer overhead (communication is
   not overlapped with compute, a conservative choice). All-reduces take the fastest of the ring
   and, for a power-of-two group, recursive halving-doubling and recursive doubling; every
   communication operation also pays the class's fixed cost of launching and synchronising it.
4. ``phases``: prefill chunks of at most ``prefill_chunk_tokens`` flow through the pipeline.
   Decode: one step at the mean context of the generation, min(batch, pp) micro-batches in
   flight. Each forward step adds the serving stack's host time (a fixed part and a part per
   sequence), during which the devices wait.
5. ``energy``: idle power plus the dynamic energy of the FLOPs, bytes per memory tier and link
   bytes, at least the class's busy floor (a share of TDP) and capped at TDP; summed over
   devices and replicas.

``closed_forms`` holds the small formulas the steps use; ``trace`` records what the steps found
(``ReferenceModel.evaluate_traced``), for the text layer; ``iteration`` applies steps 3-5 to
one iteration of a continuous-batching server (``ReferenceModel.iteration_cost_model``).
"""

from .closed_forms import (
    all_reduce,
    all_to_all_time,
    attended_positions,
    causal_positions,
    chunk_reread_positions,
    chunked_causal_positions,
    expected_max_standard_normal,
    expert_touch_probability,
    experts_touched_busiest_device,
    layer_overhead_s,
    ring_all_reduce_time,
    stored_positions,
    token_imbalance,
)
from .iteration import IterationCostModel
from .model import ReferenceModel, evaluate
from .network import tensor_parallel_all_reduce
from .stage import bound_of, execution_time
from .trace import GroupTrace, NetworkTrace, PhaseTrace, Trace

__all__ = [
    "GroupTrace",
    "IterationCostModel",
    "NetworkTrace",
    "PhaseTrace",
    "ReferenceModel",
    "Trace",
    "all_reduce",
    "all_to_all_time",
    "attended_positions",
    "bound_of",
    "causal_positions",
    "chunk_reread_positions",
    "chunked_causal_positions",
    "evaluate",
    "execution_time",
    "expected_max_standard_normal",
    "expert_touch_probability",
    "experts_touched_busiest_device",
    "layer_overhead_s",
    "ring_all_reduce_time",
    "stored_positions",
    "tensor_parallel_all_reduce",
    "token_imbalance",
]
