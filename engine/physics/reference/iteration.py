"""The cost of one serving iteration: the static engine's physics applied to the mixed batch a
continuous-batching scheduler forms (SERVING.md §4). Twin of ``kernels/iteration.py``.

An iteration is one forward step of a replica over the requests scheduled in it, some decode
steps (one token each) and some prefill chunks. What it costs depends only on sums over those
requests: the new tokens (and how many of them are prompt tokens), the sequences, and the
attention positions of :meth:`IterationCostModel.request_positions`. Recurrent layers
(DeltaNet, Mamba-2) cost per token (their chunked algorithm for prompt tokens, their recurrent
step for decoding ones) and per sequence (each scheduled request reads and writes its state
once), whatever the context. The step itself is :func:`phases.forward_step`,
the same function the static prefill and decode are made of: weights read once per pass, the
distinct experts the pass's tokens touch, TP/EP/PP communication, per-layer overhead, the
serving stack's host time, and the power model.

Units: seconds, J, bytes; positions and tokens are counts.
"""

from __future__ import annotations

import math

from ...core.precision import bytes_per_element
from .closed_forms import (
    capped_floor_sum,
    causal_positions,
    chunked_causal_positions,
    group_attended,
    group_index_keys,
    group_prompt_attended,
    group_stored,
)
from .phases import Setup, Step, forward_step

# decode_positions' step count when no layer's window or attention chunk lies ahead.
UNBOUNDED_STEPS = 1 << 62


class IterationCostModel:
    """One scenario's replica (its tp x pp devices), as a serving simulator's iterations see it.
    The tiers' shares of weights and KV cache are those placed for the scenario's batch."""

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.prefill_chunk_tokens = setup.fit.chunk  # most tokens per forward pass
        self.group_weights = tuple(self._weights(group) for group in setup.groups.groups)

    def _weights(self, group) -> tuple[float, float, float, float, float, float]:
        """A group's attended entry and indexer key in positions of the model's own attention
        layers, times its layers: (entry decode FLOPs, entry prefill FLOPs, entry bytes, key
        decode FLOPs, key prefill FLOPs, key bytes), each over what one own position costs on the
        busiest device. An entry's FLOPs split with the query heads as the own ones do (so the
        head fraction cancels); the indexer's do not (closed_forms.AttentionGroups). The ratios
        are 1 exactly for a group of the model's own shape (sparse, compressed): its entries
        count as whole positions."""
        setup = self.setup
        m = setup.model
        own_decode = m.attention_flops_per_position_decode
        own_prefill = m.attention_flops_per_position_prefill
        own_bytes = setup.fit.sizes.kv_per_token_layer
        head_fraction = setup.layout.head_fraction
        entry = setup.groups.entry_bytes(group, setup.layout.tp, bytes_per_element(setup.scenario.kv_precision))
        layers = group.layers
        return (layers * (group.flops_decode / own_decode), layers * (group.flops_prefill / own_prefill),
                layers * (entry / own_bytes), layers * (group.index_flops / (own_decode * head_fraction)),
                layers * (group.index_flops / (own_prefill * head_fraction)), layers * (group.index_key_bytes / own_bytes))

    @property
    def has_groups(self) -> bool:
        """Whether the model has attention groups: its decode steps' cost is then no line in the
        context (min(context, top-k) bends, a compressed layer's entries step every ratio
        tokens, and an entry or indexer key costs FLOPs and bytes in another proportion than a
        position of the model's own layers), so the simulator runs no stretches over it."""
        return bool(self.group_weights)

    def group_decode_positions(self, position: float) -> tuple[float, float]:
        """The attention groups' part of a decode step whose token sits at ``position``, in
        positions of the model's own layers: (FLOP positions, KV-read positions). A token reads
        the entries it attends (the top-k on a sparse layer, plus the window) and its indexer
        scores every key, as the static decode (closed_forms.AttentionGroups.flops, .read_bytes)."""
        flops = 0.0
        read = 0.0
        for g, w in zip(self.setup.groups.groups, self.group_weights, strict=True):
            entries = group_attended(position, g.ratio, g.window, g.top_k)
            keys = group_index_keys(position, g.index_stride)
            flops += entries * w[0] + keys * w[3]
            read += entries * w[2] + keys * w[5]
        return flops, read

    def group_prefill_positions(self, context_before: int, end: int) -> tuple[float, float]:
        """The attention groups' part of a prefill chunk of the tokens after ``context_before``
        up to ``end``, in positions of the model's own layers: (FLOP positions, KV-read
        positions). The chunk's tokens attend what group_prompt_attended sums and score every
        indexer key before them; the chunk re-reads the entries and keys the earlier tokens keep
        (the static prefill's AttentionGroups.prompt_flops and .reread_bytes, chunk by chunk)."""
        flops = 0.0
        read = 0.0
        for g, w in zip(self.setup.groups.groups, self.group_weights, strict=True):
            attended = (group_prompt_attended(end, g.ratio, g.window, g.top_k)
                        - group_prompt_attended(context_before, g.ratio, g.window, g.top_k))
            scored = 0.0
            if g.index_stride > 0:
                scored = capped_floor_sum(end, g.index_stride, 0) - capped_floor_sum(context_before, g.index_stride, 0)
            flops += attended * w[1] + scored * w[4]
            read += (group_stored(context_before, g.ratio, g.window) * w[2]
                     + group_index_keys(context_before, g.index_stride) * w[5])
        return flops, read

    # -- what the simulator's bookkeeping needs ------------------------------------------------

    @property
    def kv_bytes_per_token(self) -> float:
        """KV-cache bytes one token keeps on a device, over all the stage's attention layers."""
        return self.setup.stage.kv_write(1.0)

    @property
    def state_bytes_per_sequence(self) -> float:
        """Recurrent-state bytes one running sequence keeps on a device, whatever its context."""
        return self.setup.fit.state_sequence

    @property
    def weights_bytes(self) -> float:
        """Weights per device, offloaded ones included."""
        return self.setup.fit.sizes.weights

    @property
    def usable_bytes(self) -> float:
        """Near memory per device the weights, KV cache and workspace may use."""
        return self.setup.memory.usable

    @property
    def runtime_overhead_bytes(self) -> float:
        """The runtime's own memory per device."""
        return self.setup.memory.runtime_overhead

    @property
    def devices(self) -> int:
        return self.setup.layout.devices_per_replica

    @property
    def idle_W(self) -> float:
        """Idle power of the replica's devices."""
        return self.devices * self.setup.power.idle

    # -- the two functions -----------------------------------------------------------------------

    def request_positions(self, context_before: int, new_tokens: int, is_decode: bool) -> tuple[float, float, float]:
        """(prefill attention positions, decode attention positions, KV positions read) of one
        request in an iteration, summed over the model's layers.

        A prefill chunk of n tokens after c cached ones attends causally from position c+1 to
        c+n on each layer kind, and re-reads the KV cache of the c earlier positions as far as
        each layer keeps them; a decode step at context c attends to the positions of its token
        at c+1 and reads their KV cache (n is 1)."""
        layers = self.setup.attention
        c = context_before
        if is_decode:
            attended = layers.attended(c + 1)
            if not self.group_weights:
                return 0.0, attended, attended
            group_flops, group_bytes = self.group_decode_positions(c + 1)
            return 0.0, attended + group_flops, attended + group_bytes
        end = c + new_tokens
        positions = layers.n_full * (causal_positions(end, 0) - causal_positions(c, 0))
        if layers.n_window:
            positions += layers.n_window * (causal_positions(end, layers.window) - causal_positions(c, layers.window))
        if layers.n_chunked:
            chunk = layers.attention_chunk
            positions += layers.n_chunked * (chunked_causal_positions(end, chunk) - chunked_causal_positions(c, chunk))
        if not self.group_weights:
            return positions, 0.0, layers.stored(c)
        group_flops, group_bytes = self.group_prefill_positions(c, end)
        return positions + group_flops, 0.0, layers.stored(c) + group_bytes

    def decode_positions(self, context_before: int) -> tuple[float, float, int]:
        """A run of decode steps of one request from context c: (positions, increment, steps).

        The step at context c + k attends to positions + k x increment positions (and reads
        their KV cache), summed over the layers, for 0 <= k <= steps: exactly what
        :meth:`request_positions` gives for (c + k, 1, decode), as every term is a whole or
        half-whole number. Each further step adds one position per full-attention layer, one per
        window layer while the token's position stays within the window, one per chunked layer
        while it stays within the first attention chunk; a chunked layer's step past the first
        chunk drops it to the half-chunk mean once, after which it adds nothing. ``steps`` is
        UNBOUNDED_STEPS when no such bound lies ahead.
        Only for a model without attention groups (cost row GROUP_LAYERS 0): theirs bend and
        step with the context, so the simulator runs no stretches over them."""
        layers = self.setup.attention
        position = context_before + 1
        increment = layers.n_full
        steps = UNBOUNDED_STEPS
        if layers.n_window and position < layers.window:
            increment += layers.n_window
            steps = min(steps, layers.window - position)
        if layers.n_chunked:
            chunk = layers.attention_chunk
            if position < chunk:
                increment += layers.n_chunked
                steps = min(steps, chunk - position)
            elif position == chunk:
                # From attending to the whole first chunk to the mean over the later ones.
                increment += layers.n_chunked * ((chunk + 1) / 2.0 - chunk)
                steps = 1
        return layers.attended(position), increment, steps

    def step(self, tokens: float, sequences: float, prefill_attention_positions: float,
             decode_attention_positions: float, kv_read_positions: float, prefill_tokens: float) -> Step:
        """The forward step of one iteration, per device; ``prefill_tokens`` of the ``tokens``
        are prompt tokens (the rest decode)."""
        setup = self.setup
        pp = setup.layout.pp
        attention = (prefill_attention_positions * setup.attention_flops_per_position(prefill=True)
                     + decode_attention_positions * setup.attention_flops_per_position(prefill=False)) + (
            prefill_tokens * setup.recurrent_flops_per_token(True)
            + (tokens - prefill_tokens) * setup.recurrent_flops_per_token(False))
        kv_read = kv_read_positions * setup.kv_bytes_per_position()
        state = sequences * setup.state_traffic_per_sequence()
        if prefill_attention_positions > 0.0 or tokens > sequences:
            # As the static prefill: the tokens in chunks, one after another through the pipeline.
            passes = math.ceil(tokens / self.prefill_chunk_tokens)
            pipeline_passes = passes + pp - 1
            host = passes * setup.step_overhead + sequences * setup.sequence_overhead
        else:
            # As the static decode step: the sequences in min(sequences, pp) micro-batches.
            passes = min(sequences, pp)
            pipeline_passes = pp
            host = setup.step_overhead + sequences * setup.sequence_overhead
        return forward_step(setup, passes, pipeline_passes, tokens / passes, sequences / passes, attention / passes,
                            kv_read / passes, state / passes, host)

    def iteration_cost(self, tokens: float, sequences: float, prefill_attention_positions: float,
                       decode_attention_positions: float, kv_read_positions: float,
                       prefill_tokens: float) -> tuple[float, float]:
        """(duration in s, energy in J of all the replica's devices) of one iteration carrying
        ``tokens`` new tokens of ``sequences`` requests, ``prefill_tokens`` of them prompt
        tokens, with the sums of their :meth:`request_positions`. An iteration of no tokens
        costs nothing."""
        if tokens <= 0:
            return 0.0, 0.0
        step = self.step(tokens, sequences, prefill_attention_positions, decode_attention_positions,
                         kv_read_positions, prefill_tokens)
        return step.time_s, self.devices * step.power_W * step.time_s
