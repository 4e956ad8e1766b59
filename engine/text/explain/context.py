"""What the explanation reads: the shared :class:`~accelscope.engine.text.context.Context` (the
result, the trace, the catalog records), the crossover study's answer, and each phase as the
engine's totals beside the trace of its stage passes. Built once; the sections only read it and
format what they find."""

from __future__ import annotations

from dataclasses import dataclass

from ...core.accelerator import MemoryTier
from ...core.units import format_bandwidth, format_factor, format_flop_rate, significant
from ...physics.reference import PhaseTrace
from ...physics.results import PhaseResult
from ...studies.cost import SystemCost
from ...studies.crossover import Crossovers
from ..context import Context
from .words import count


@dataclass(frozen=True)
class Phase:
    """Prefill (its chunks) or decode (one step of micro-batches) on the busiest device."""

    result: PhaseResult  # the engine's numbers for the phase
    trace: PhaseTrace  # its stage passes, as the steps found them


@dataclass(frozen=True)
class ExplainContext(Context):
    crossovers: Crossovers
    prefill: Phase
    decode: Phase
    cost: SystemCost | None = None  # what the system costs, rented and owned (studies.cost)

    @staticmethod
    def of(context: Context, crossovers: Crossovers, cost: SystemCost | None = None) -> ExplainContext:
        r, t = context.result, context.trace
        return ExplainContext(context.result, context.trace, context.model, context.accelerator, context.constants,
                              context.cls, crossovers, Phase(r.prefill, t.prefill), Phase(r.decode, t.decode), cost)

    # -- words for the scenario's facts ------------------------------------------------------

    @property
    def hypothetical(self) -> bool:
        """The scenario does not fit: its numbers are what it would take as laid out."""
        return not self.result.fits

    def device(self) -> str:
        """Who the per-device numbers are for: with TP or PP the busiest device sets the pace."""
        return "the busiest device" if self.scenario.tp * self.scenario.pp > 1 else "the device"

    def layers_per_stage(self) -> str:
        layers, pp = self.model.n_layers, self.scenario.pp
        if pp == 1:
            return count(layers, "layer")
        if layers % pp == 0:
            return f"{round(self.trace.layers_per_stage)} layers per stage"
        return f"{layers}/{pp} = {significant(self.trace.layers_per_stage)} layers per stage"

    def tier_names(self) -> str:
        return " and ".join(t.name or t.kind for t in self.trace.near_tiers)

    def sustained(self, figure: str, efficiency: float) -> str:
        """A datasheet rate times its efficiency factors: '3.35 TB/s × 0.85' (× the stack factor)."""
        stack = f" × {format_factor(self.stack)}" if self.stack != 1.0 else ""
        return f"{figure} × {format_factor(efficiency)}{stack}"

    def compute_rate_text(self) -> str:
        return self.sustained(format_flop_rate(self.trace.peak_flops, trim=True), self.cls.compute_efficiency)

    def near_rate_text(self, tier: MemoryTier) -> str:
        return self.sustained(format_bandwidth(tier.effective_bandwidth_Bps, trim=True), self.cls.memory_efficiency)

    def far_rate_text(self, far: MemoryTier) -> str:
        return self.sustained(format_bandwidth(far.effective_bandwidth_Bps, trim=True), self.cls.link_efficiency)
