"""Step 4, the phases: forward steps of the serving stack made of stage passes.

- Prefill: the wave's prompt tokens flow through the pipeline in chunks of at most
  ``prefill_chunk_tokens``, one stage pass each; chunks + pp − 1 passes in a row.
- Decode: one step at the mean context of the generation, min(batch, pp) micro-batches in
  flight; a token crosses the pp stages in turn.
Each forward step adds the serving stack's host time (a fixed part per step and a part per
sequence), during which the devices wait. The serving simulator's iterations are forward
steps too (``iteration.py``), computed by the same :func:`forward_step`.

Per device; seconds, J, W.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...core import codes
from ...core.model import ModelArch
from ...core.precision import bytes_per_element
from ...core.scenario import Scenario
from .closed_forms import AttentionGroups, AttentionLayers, RecurrentLayers
from .energy import Power
from .memory import DeviceMemory, MemoryFit
from .network import Communication
from .parallel import Layout
from .stage import Stage, StagePass, bound_of


@dataclass(frozen=True)
class Setup:
    """A scenario made ready for its phases: every step before them, done once."""

    scenario: Scenario
    model: ModelArch
    layout: Layout
    compute_precision: str  # the peak key products run at
    peak: float  # FLOP/s at that precision
    memory: DeviceMemory
    fit: MemoryFit
    communication: Communication
    stage: Stage
    power: Power
    attention: AttentionLayers
    groups: AttentionGroups
    recurrent: RecurrentLayers
    step_overhead: float  # s of host time per forward step
    sequence_overhead: float  # s per sequence in it
    warnings: int  # of the steps so far

    def attention_flops_per_position(self, prefill: bool) -> float:
        """Attention FLOPs per attended position on the busiest device, over one stage."""
        m = self.model
        per_position = m.attention_flops_per_position_prefill if prefill else m.attention_flops_per_position_decode
        return per_position * self.layout.head_fraction / self.layout.pp

    def kv_bytes_per_position(self) -> float:
        """KV-cache bytes per attended position, over one stage."""
        return self.fit.sizes.kv_per_token_layer / self.layout.pp

    def recurrent_flops_per_token(self, prefill: bool) -> float:
        """The recurrent layers' FLOPs per token beyond their projections on the busiest device,
        over one stage: by the chunked algorithm in prefill, the recurrent step in decode."""
        return self.recurrent.flops_per_token(self.layout.tp, prefill) / self.layout.pp

    def state_traffic_per_sequence(self) -> float:
        """Bytes of recurrent state one sequence reads and writes in a forward pass, over one
        stage: its state read once and written once."""
        return 2.0 * self.fit.state_sequence


@dataclass(frozen=True)
class Step:
    """A forward step: ``passes`` stage passes per device, ``pipeline_passes`` of them in a row."""

    stage_pass: StagePass
    passes: int  # per device: prefill chunks, or decode micro-batches
    pipeline_passes: int  # chunks + pp − 1, or pp
    tokens: float  # per pass
    sequences: float  # per pass
    attention_flops: float  # per pass, with the recurrent layers' state work
    kv_read: float  # bytes per pass
    state_bytes: float  # per pass: recurrent state read and written
    transfer_s: float  # one hand-over to the next pipeline stage (0 without PP)
    host_s: float  # the serving stack's, over the step
    time_s: float
    dynamic_J: float  # per device, above idle
    demand_W: float  # idle + dynamic / time, before the floor and the cap
    power_W: float  # per device

    @property
    def bound(self) -> str:
        """What bounds the step (codes.BOUNDS), its host time shared over the passes in a row
        as a phase's is."""
        stage = self.stage_pass
        overhead = stage.overhead_time + self.host_s / self.pipeline_passes
        return codes.BOUNDS[bound_of(stage.compute_time, stage.memory_time, stage.communication_time, overhead)]


def forward_step(setup: Setup, passes: int, pipeline_passes: int, tokens: float, sequences: float,
                 attention_flops: float, kv_read: float, state_bytes: float, host: float) -> Step:
    """A step of ``passes`` equal stage passes over ``tokens`` tokens and ``sequences``
    sequences each, with ``attention_flops``, ``kv_read`` bytes and ``state_bytes`` each."""
    stage_pass = setup.stage.stage_pass(tokens, sequences, attention_flops, kv_read, state_bytes)
    transfer = setup.communication.point_to_point(tokens)
    time = pipeline_passes * stage_pass.time + (setup.layout.pp - 1) * transfer + host
    dynamic = passes * setup.power.dynamic_energy(stage_pass)
    return Step(
        stage_pass=stage_pass,
        passes=passes,
        pipeline_passes=pipeline_passes,
        tokens=tokens,
        sequences=sequences,
        attention_flops=attention_flops,
        kv_read=kv_read,
        state_bytes=state_bytes,
        transfer_s=transfer,
        host_s=host,
        time_s=time,
        dynamic_J=dynamic,
        demand_W=setup.power.demand(dynamic, time),
        power_W=setup.power.power(dynamic, time),
    )


def prefill(setup: Setup) -> Step:
    """The prefill of one wave: its prompts in chunks through the pipeline. Recurrent layers
    run their chunked algorithm over every prompt token, and each sequence's state is read and
    written once per piece its prompt is cut into, ⌈input/chunk⌉ of them."""
    s, pp = setup.scenario, setup.layout.pp
    resident = setup.fit.resident
    chunk = setup.fit.chunk
    prompt_tokens = resident * s.input_len
    n_chunks = math.ceil(prompt_tokens / chunk)
    tp, p_kv = setup.layout.tp, bytes_per_element(s.kv_precision)
    attention = (resident * setup.model.attention_flops_per_position_prefill * setup.layout.head_fraction / pp
                 * setup.attention.prompt(s.input_len)) + prompt_tokens * setup.recurrent_flops_per_token(True)
    reread = resident * setup.fit.sizes.kv_per_token_layer / pp * setup.attention.reread(s.input_len, chunk)
    if setup.groups.groups:
        attention += resident * setup.groups.prompt_flops(s.input_len, setup.layout.head_fraction) / pp
        reread += resident * setup.groups.reread_bytes(s.input_len, chunk, tp, p_kv) / pp
    state = resident * math.ceil(s.input_len / chunk) * setup.state_traffic_per_sequence()
    # The serving stack's host work: once per forward step (a chunk is one step) and once per
    # sequence in it.
    host = n_chunks * setup.step_overhead + resident * setup.sequence_overhead
    return forward_step(setup, n_chunks, n_chunks + pp - 1, prompt_tokens / n_chunks, resident / n_chunks,
                        attention / n_chunks, reread / n_chunks, state / n_chunks, host)


def mean_decode_context(scenario: Scenario) -> float:
    """Context of the average decode step: halfway through the generation."""
    return scenario.input_len + scenario.output_len / 2.0


def decode(setup: Setup) -> Step:
    """One decode step at the mean context, min(batch, pp) micro-batches in flight. Recurrent
    layers take one step of their recurrence per sequence, reading and writing its state:
    work that does not grow with the context."""
    pp = setup.layout.pp
    resident = setup.fit.resident
    micro_batches = min(resident, pp)
    micro_batch = resident / micro_batches
    attended = setup.attention.attended(mean_decode_context(setup.scenario))
    attention = (micro_batch * setup.model.attention_flops_per_position_decode * setup.layout.head_fraction / pp
                 * attended) + micro_batch * setup.recurrent_flops_per_token(False)
    kv_read = micro_batch * (setup.fit.sizes.kv_per_token_layer * attended / pp)
    if setup.groups.groups:
        context = mean_decode_context(setup.scenario)
        p_kv = bytes_per_element(setup.scenario.kv_precision)
        attention += micro_batch * setup.groups.flops(context, setup.layout.head_fraction) / pp
        kv_read += micro_batch * setup.groups.read_bytes(context, setup.layout.tp, p_kv) / pp
    state = micro_batch * setup.state_traffic_per_sequence()
    host = setup.step_overhead + resident * setup.sequence_overhead
    return forward_step(setup, micro_batches, pp, micro_batch, micro_batch, attention, kv_read, state, host)
