"""Efficiency, overhead and energy constants, per architecture class, each with its basis.

Plain values: ``catalog/constants.py`` reads them from ``resources/efficiency.toml`` (see that
file for what each constant means and why it has the value it has).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ClassConstants:
    """The constants of one architecture class, each with the sentence that justifies it."""

    architecture_class: str
    compute_efficiency: float
    memory_efficiency: float
    link_efficiency: float
    interconnect_efficiency: float
    per_layer_overhead_s: float
    usable_memory_fraction: float
    runtime_overhead_bytes: float
    # While executing (any phase) the device draws at least this fraction of its TDP: clocks
    # up, memory PHYs and cores powered whatever the arithmetic. 0 = idle plus work only.
    busy_power_fraction: float
    # The serving stack's host work per forward step (scheduling, input preparation, sampling,
    # output processing) during which the devices wait: a fixed part and a part per sequence.
    step_overhead_s: float
    sequence_overhead_s: float
    # 1: a pass's operators overlap (spatial dataflow), so it takes max(compute, memory) of the
    # whole pass; 0: they run one after another and each takes its own roofline.
    operator_overlap: float
    # Each communication operation (all-reduce, all-to-all, stage-to-stage transfer) costs this
    # once, on top of its steps: launching it and synchronising the devices.
    collective_overhead_s: float
    # Extra time per layer per pass when activations are narrower than 16 bits (W8A8, W4A4):
    # the kernels that quantise each linear product's input.
    activation_quantization_overhead_s: float
    basis: dict[str, str]


@dataclass(frozen=True)
class Constants:
    classes: dict[str, ClassConstants]
    prefill_chunk_tokens: int
    logits_bytes_per_element: float
    kv_starvation_weight_fraction: float
    memory_energy_J_per_byte: dict[str, float]
    interconnect_energy_J_per_byte: float
    basis: dict[str, str]

    def for_class(self, architecture_class: str) -> ClassConstants:
        return self.classes[architecture_class]
