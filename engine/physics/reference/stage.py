"""Step 3b, one stage pass: the time a pipeline stage takes for one forward pass over some
tokens (a prefill chunk, a decode micro-batch) on the busiest device.

Compute and memory time (the roofline of the whole pass where the class overlaps its
operators, else the linear layers' and attention's each) + communication + the fixed
per-layer overhead. Weights are read once per pass; a mixture of experts reads only the
distinct experts the pass's tokens touch.

Units: FLOP, bytes, seconds, FLOP/s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...core import codes
from ...core.accelerator import Accelerator
from ...core.constants import ClassConstants
from ...core.model import ModelArch
from ...core.precision import (
    NARROWEST_FALLBACK_BYTES,
    PEAK_KEY,
    bytes_per_element,
    compute_precision,
    requested_compute_format,
)
from ...core.scenario import Scenario
from ..results import PhaseResult
from .closed_forms import AttentionGroups, expert_touch_probability, experts_touched_busiest_device, layer_overhead_s, token_imbalance
from .memory import Sizes, TierReads
from .network import Communication
from .parallel import Layout


def compute_format(accelerator: Accelerator, scenario: Scenario) -> tuple[str, int]:
    """The peak key products run at, and its warning bits: the wider of the weight and
    activation formats, on the device's units for it or, where it has none, in 16 bits."""
    return compute_format_of(accelerator, requested_compute_format(scenario.weight_precision,
                                                                   scenario.activation_precision))


def compute_format_of(accelerator: Accelerator, requested: str) -> tuple[str, int]:
    """As :func:`compute_format`, for the format the products ask for."""
    if not accelerator.compute_published:
        return PEAK_KEY[requested], 0
    key = compute_precision(requested, accelerator.peaks())
    if bytes_per_element(key) < min(bytes_per_element(PEAK_KEY[requested]), NARROWEST_FALLBACK_BYTES):
        return PEAK_KEY[requested], 0  # only narrower units are published: no stated rate (compute_peak)
    return key, (codes.WARN_COMPUTE_FALLBACK if key != PEAK_KEY[requested] else 0)


def compute_peak(accelerator: Accelerator, key: str) -> float:
    """The dense peak products run at, in FLOP/s. Where none is published for this format (or
    none at all) it counts as unbounded: the compute time is then nil, the memory figures stay
    finite, and the fit code (FIT_COMPUTE_UNPUBLISHED) says that no time can be stated."""
    return accelerator.peak(key) or math.inf


@dataclass(frozen=True)
class OperatorTimes:
    """A stage pass's compute and memory time seen by operator: the whole pass's roofline, and
    the linear layers' (weights and activations) and attention's (KV cache) each."""

    whole: float  # max(compute, memory)
    linear_compute: float  # compute outside attention
    linear_memory: float  # memory time outside the KV cache: weight and activation reads
    linear: float  # the linear layers' own roofline
    attention_compute: float  # attention's scores and values
    attention_memory: float  # its KV-cache reads and writes
    attention: float  # attention's own roofline
    by_operator: float  # the two one after another


def operator_times(compute: float, memory: float, attention_compute: float, attention_memory: float) -> OperatorTimes:
    linear_compute = compute - attention_compute
    linear_memory = memory - attention_memory
    linear = max(linear_compute, linear_memory)
    attention = max(attention_compute, attention_memory)
    return OperatorTimes(max(compute, memory), linear_compute, linear_memory, linear, attention_compute,
                         attention_memory, attention, linear + attention)


def execution_time(
    compute: float, memory: float, attention_compute: float, attention_memory: float, overlap: float
) -> float:
    """Compute and memory time of a stage pass together. Operators that overlap (a spatial
    dataflow pipeline streams one into the next) take the roofline of the whole pass,
    max(compute, memory); operators that run one after another (GPU kernels) each take their
    own: the linear layers max(compute, memory) of the weights plus attention max(compute,
    memory) of the KV cache. ``overlap`` (0 to 1) weighs the two."""
    times = operator_times(compute, memory, attention_compute, attention_memory)
    return overlap * times.whole + (1.0 - overlap) * times.by_operator


def bound_of(compute: float, memory: float, communication: float, overhead: float) -> int:
    """Index of the largest term (codes.BOUNDS order); ties go to the earlier one."""
    times = (compute, memory, communication, overhead)
    return max(range(4), key=lambda index: (times[index], -index))


@dataclass(frozen=True)
class StagePass:
    flops: float
    bytes_by_tier: tuple[float, ...]  # near tiers in order, then far
    weight_bytes: float  # of which weights (dense part and routed experts)
    kv_bytes: float  # of which KV cache read and written
    state_bytes: float  # of which the recurrent layers' fixed-size state read and written
    link_bytes: float
    compute_time: float
    memory_time: float
    attention_compute_time: float  # of compute_time: attention scores and values, and the recurrent layers' state work
    attention_memory_time: float  # of memory_time: KV cache and recurrent state read and written
    execution_time: float  # compute and memory together, as the class overlaps its operators
    communication_time: float
    overhead_time: float

    @property
    def bytes(self) -> float:
        return sum(self.bytes_by_tier)

    @property
    def time(self) -> float:
        return self.execution_time + self.communication_time + self.overhead_time


@dataclass(frozen=True)
class ExpertLoad:
    """The routed experts of one pass on the busiest device."""

    touch_probability: float  # that one expert gets at least one of the pass's tokens
    touched: float  # distinct experts per MoE layer the busiest device reads
    imbalance: float  # its routed tokens over the mean
    flops: float
    read_bytes: float


class Stage:
    """One pipeline stage of a scenario on the busiest device: a stage pass as a function of
    its tokens, sequences (for the LM head), attention FLOPs (with the recurrent layers' state
    work: sequence mixing, whatever the layer kind), KV-cache reads and recurrent-state traffic."""

    def __init__(self, model: ModelArch, accelerator: Accelerator, cls: ClassConstants, scenario: Scenario,
                 layout: Layout, sizes: Sizes, tiers: TierReads, communication: Communication, peak: float) -> None:
        self.model = model
        self.layout = layout
        self.sizes = sizes
        self.tiers = tiers
        self.communication = communication
        self.activation_bytes = bytes_per_element(scenario.activation_precision)
        self.kv_bytes = bytes_per_element(scenario.kv_precision)
        self.compute_rate = peak * cls.compute_efficiency * float(accelerator.software_efficiency)
        self.layer_overhead = layer_overhead_s(cls, self.activation_bytes)
        self.overhead_time = layout.layers_per_stage * self.layer_overhead
        self.overlap = cls.operator_overlap

    def activation_traffic(self, tokens: float) -> float:
        """Activations written and read between the kernels of the stage's layers."""
        m = self.model
        return (tokens * self.layout.layers_per_stage * self.activation_bytes
                * (4.0 * m.hidden_size + 2.0 * m.mean_ffn_width_per_token / self.layout.tp))

    def experts(self, tokens: float) -> ExpertLoad:
        m, layout = self.model, self.layout
        if m.moe is None:
            return ExpertLoad(0.0, 0.0, 1.0, 0.0, 0.0)
        top_k = m.moe.experts_per_token
        touch = expert_touch_probability(top_k, m.moe.n_routed_experts, tokens)
        touched = experts_touched_busiest_device(self.sizes.experts_per_device, touch, layout.effective_ep)
        imbalance = token_imbalance(tokens * top_k, layout.effective_ep)
        flops = 2.0 * tokens * top_k * m.n_moe_layers * m.expert_params / (layout.tp * layout.pp) * imbalance
        read = m.n_moe_layers / layout.pp * touched * self.sizes.expert_bytes_each
        return ExpertLoad(touch, touched, imbalance, flops, read)

    def kv_write(self, tokens: float) -> float:
        """KV-cache entries the pass's tokens write, over the stage's layers."""
        m = self.model
        n_kv_layers = m.n_full_attention_layers + m.n_window_attention_layers + m.n_chunked_attention_layers
        written = self.sizes.kv_per_token_layer * n_kv_layers
        if m.attention_groups:
            written += AttentionGroups.of(m).write_bytes(self.layout.tp, self.kv_bytes)
        return tokens * written / self.layout.pp

    def stage_pass(self, tokens: float, sequences: float, attention_flops: float, kv_read: float,
                   state_bytes: float) -> StagePass:
        m, layout = self.model, self.layout
        tp_pp = layout.tp * layout.pp
        experts = self.experts(tokens)
        flops = (
            2.0 * tokens * m.block_params_fixed / tp_pp
            + 2.0 * sequences * m.vocab_size * m.hidden_size / tp_pp
            + experts.flops
            + attention_flops
        )
        weight_bytes = self.sizes.dense_read + experts.read_bytes
        kv_bytes = kv_read + self.kv_write(tokens)
        by_tier = self.tiers.split(weight_bytes, kv_bytes, self.activation_traffic(tokens), state_bytes)
        communication_time, sent = self.communication.per_pass(tokens)
        compute = flops / self.compute_rate
        memory = self.tiers.time(by_tier)
        attention_compute = attention_flops / self.compute_rate
        attention_memory = self.tiers.time(self.tiers.split(0.0, kv_bytes, 0.0, state_bytes))
        return StagePass(
            flops=flops,
            bytes_by_tier=by_tier,
            weight_bytes=weight_bytes,
            kv_bytes=kv_bytes,
            state_bytes=state_bytes,
            link_bytes=sent,
            compute_time=compute,
            memory_time=memory,
            attention_compute_time=attention_compute,
            attention_memory_time=attention_memory,
            execution_time=execution_time(compute, memory, attention_compute, attention_memory, self.overlap),
            communication_time=communication_time,
            overhead_time=self.overhead_time,
        )


def phase_result(stage: StagePass, count: int, time: float, host: float, passes: int, power: float) -> PhaseResult:
    """A phase made of ``count`` stage passes per device (prefill chunks, decode micro-batches)
    that takes ``time`` in all, ``host`` of it the serving stack's, with ``passes`` stage passes
    in a row over which the bound spreads that host time."""
    return PhaseResult(
        flops_per_device=count * stage.flops,
        bytes_per_device=count * stage.bytes,
        weight_bytes_per_device=count * stage.weight_bytes,
        kv_bytes_per_device=count * (stage.kv_bytes + stage.state_bytes),
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
            bound_of(stage.compute_time, stage.memory_time, stage.communication_time, stage.overhead_time + host / passes)
        ],
        power_per_device_W=power,
    )
