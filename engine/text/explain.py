"""Why a scenario performs as it does, in plain sentences with the engine's numbers plugged in.

For one scenario on one accelerator this says what bounds prefill and decode and why, e.g.
"each decode step reads 15.0 GB of weights ...; at 3.35 TB/s × 0.85 that takes 5.33 ms, while
its 15.6 GFLOP would take 22.5 µs at 989 TFLOP/s × 0.7 — memory-bound". Every time, size and
rate quoted is one the engine computed (``Engine.predict``, and ``Engine.evaluate`` over a batch
sweep for the crossover batch) or a catalog figure and class constant it used; this module
only divides totals into per-pass shares, names the factors and formats the numbers. A
formula is shown with its factors only where it reproduces the engine's time exactly.

Presentation only: no Qt here (the explain panel shows an :class:`Explanation`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..catalog.constants import ClassConstants, Constants
from ..core import codes
from ..core.accelerator import Accelerator, Interconnect, MemoryTier
from ..core.model import ModelArch
from ..core.precision import bytes_per_element
from ..core.scenario import Scenario
from ..core.units import (
    format_bandwidth,
    format_bytes,
    format_energy,
    format_factor,
    format_flop_rate,
    format_flops,
    format_power,
    format_time,
    significant,
)
from ..physics.engine import Engine
from ..physics.reference import all_reduce, layer_overhead_s
from ..physics.results import PhaseResult, Result
from ..studies.crossover import (
    CROSSOVER_MAX_BATCH,
    Crossover,
    crossovers,
    decode_crossover_batch,
    linear_layers_crossover_batch,
)

# The crossover search is a study; its names stay importable from here.
__all__ = ["CROSSOVER_MAX_BATCH", "Explanation", "decode_crossover_batch", "explain", "linear_layers_crossover_batch"]

_SAME = 1e-6  # relative tolerance for "this formula reproduces the engine's number"


@dataclass(frozen=True)
class Explanation:
    """A title and sections of sentences, e.g. ("Decode", ("Each decode step reads ...", ...))."""

    title: str
    sections: tuple[tuple[str, tuple[str, ...]], ...]

    def section(self, heading: str) -> tuple[str, ...]:
        """The sentences of one section; empty if there is no such section."""
        return next((sentences for name, sentences in self.sections if name == heading), ())

    def plain_text(self) -> str:
        parts = [self.title]
        for heading, sentences in self.sections:
            parts.append("")
            parts.append(heading)
            parts.extend(sentences)
        return "\n".join(parts) + "\n"


def _count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def _tokens(value: float) -> str:
    return f"{_amount(value)} token{'' if value == 1 else 's'}"


def _amount(value: float) -> str:
    """A count that may be fractional (tokens or sequences per pass): whole numbers exactly."""
    if abs(value - round(value)) < 1e-9:
        return f"{round(value):,}"
    return significant(value)


def _percent_up(fraction: float) -> str:
    """A fraction as a whole percent, rounded up (an offload share rounded down would not fit)."""
    return f"{math.ceil(fraction * 100 - 1e-9)}%"


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= _SAME * max(abs(a), abs(b), 1e-300)


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")


# ---- the explanation ---------------------------------------------------------------------


def explain(engine: Engine, scenario: Scenario) -> Explanation:
    """Sentences saying what bounds prefill and decode of ``scenario`` and why."""
    scenario = engine.resolve(scenario)
    result = engine.predict(scenario)
    accelerator = engine.catalog.accelerator(scenario.accelerator)
    found = crossovers(engine, scenario, result)
    writer = _Writer(
        result, engine.model(scenario.model), accelerator, engine.constants, found.whole_pass, found.linear_layers
    )
    return writer.explanation()


@dataclass(frozen=True)
class _Pass:
    """One stage pass of a phase (a prefill chunk, a decode micro-batch) on the busiest device,
    as shares of the engine's per-device totals."""

    phase: PhaseResult
    passes: int  # per device: chunks, or decode micro-batches
    sequences: float  # sequences in one pass
    tokens: float  # tokens in one pass
    pipeline_passes: int  # stage passes in a row: chunks + pp − 1 for prefill, pp for decode

    @property
    def flops(self) -> float:
        return self.phase.flops_per_device / self.passes

    @property
    def bytes(self) -> float:
        return self.phase.bytes_per_device / self.passes

    @property
    def weight_bytes(self) -> float:
        return self.phase.weight_bytes_per_device / self.passes

    @property
    def kv_bytes(self) -> float:
        return self.phase.kv_bytes_per_device / self.passes

    @property
    def activation_bytes(self) -> float:
        return max(0.0, self.bytes - self.weight_bytes - self.kv_bytes)

    @property
    def time(self) -> float:
        p = self.phase
        return p.execution_time_s + p.communication_time_s + p.overhead_time_s

    @property
    def host_per_pass(self) -> float:
        """The phase's host time spread over its stage passes, as the engine's bound counts it."""
        return self.phase.host_time_s / self.pipeline_passes


class _Writer:
    def __init__(
        self,
        result: Result,
        model: ModelArch,
        accelerator: Accelerator,
        constants: Constants,
        crossover: Crossover,
        linear_crossover: Crossover | None = None,  # where operators run one after another
    ) -> None:
        self.r = result
        self.s = result.scenario
        self.m = model
        self.a = accelerator
        self.constants = constants
        self.cls: ClassConstants = constants.for_class(accelerator.architecture_class)
        self.crossover = crossover
        self.linear_crossover = linear_crossover
        self.stack = float(accelerator.software_efficiency)
        self.near: list[MemoryTier] = [
            t for t in accelerator.memory if t.placement and t.level in ("on-chip", "device")
        ]
        self.far: MemoryTier | None = next((t for t in accelerator.memory if t.placement and t.level == "far"), None)
        self.offload = self.s.offload if self.far is not None else 0.0
        self.kv_offload = self.s.kv_offload if self.far is not None else 0.0
        self.peak = accelerator.peak(result.compute_precision)
        self.resident = result.memory.resident_batch
        self.effective_ep = self.s.ep if model.moe is not None else 1

        chunk = constants.prefill_chunk_tokens
        prompt_tokens = self.resident * self.s.input_len
        n_chunks = math.ceil(prompt_tokens / chunk)
        self.prefill = _Pass(
            result.prefill, n_chunks, self.resident / n_chunks, prompt_tokens / n_chunks, n_chunks + self.s.pp - 1
        )
        micro_batches = min(self.resident, self.s.pp)
        micro_batch = self.resident / micro_batches
        self.decode = _Pass(result.decode, micro_batches, micro_batch, micro_batch, self.s.pp)

    # -- shared phrases ----------------------------------------------------------------------

    def explanation(self) -> Explanation:
        sections = [
            ("Scenario", self.scenario_sentences()),
            ("Memory", self.memory_sentences()),
            ("Prefill", self.prefill_sentences()),
            ("Decode", self.decode_sentences()),
            ("Throughput and energy", self.throughput_sentences()),
        ]
        warnings = tuple(_sentence(text) for text in self.r.warnings)
        if warnings:
            sections.append(("Warnings", warnings))
        title = f"{self.m.name} on {self.r.devices} × {self.a.name}"
        return Explanation(title, tuple((heading, tuple(lines)) for heading, lines in sections))

    def sustained(self, figure: str, efficiency: float) -> str:
        """A datasheet rate times its efficiency factors: '3.35 TB/s × 0.85' (× the stack factor)."""
        stack = f" × {format_factor(self.stack)}" if self.stack != 1.0 else ""
        return f"{figure} × {format_factor(efficiency)}{stack}"

    def compute_rate(self) -> float:
        return self.peak * self.cls.compute_efficiency * self.stack

    def compute_rate_text(self) -> str:
        return self.sustained(format_flop_rate(self.peak, trim=True), self.cls.compute_efficiency)

    def near_rate(self, tier: MemoryTier) -> float:
        return tier.effective_bandwidth_Bps * self.cls.memory_efficiency * self.stack

    def near_rate_text(self, tier: MemoryTier) -> str:
        return self.sustained(format_bandwidth(tier.effective_bandwidth_Bps, trim=True), self.cls.memory_efficiency)

    def far_rate(self, far: MemoryTier) -> float:
        return far.effective_bandwidth_Bps * self.cls.link_efficiency * self.stack

    def far_rate_text(self, far: MemoryTier) -> str:
        return self.sustained(format_bandwidth(far.effective_bandwidth_Bps, trim=True), self.cls.link_efficiency)

    def tier_names(self) -> str:
        return " and ".join(t.name or t.kind for t in self.near)

    def layers_per_stage(self) -> str:
        layers, pp = self.m.n_layers, self.s.pp
        if pp == 1:
            return _count(layers, "layer")
        if layers % pp == 0:
            return f"{layers // pp} layers per stage"
        return f"{layers}/{pp} = {significant(layers / pp)} layers per stage"

    def device(self) -> str:
        """Who the per-device numbers are for: with TP or PP the busiest device sets the pace."""
        return "the busiest device" if self.s.tp * self.s.pp > 1 else "the device"

    def hypothetical(self) -> bool:
        return not self.r.fits

    # -- scenario ------------------------------------------------------------------------------

    def scenario_sentences(self) -> list[str]:
        s, m = self.s, self.m
        size = f"{significant(m.total_params / 1e9)}B parameters"
        if m.moe is not None:
            size += f", {significant(m.active_params / 1e9)}B active per token"
        layout = f"TP {s.tp} × PP {s.pp} × DP {s.dp} = {_count(self.r.devices, 'device')}"
        if self.effective_ep > 1:
            layout += f", experts spread over EP {s.ep}"
        if s.offload:
            layout += f", {_percent_up(s.offload)} of the weights offloaded"
        if s.kv_offload:
            layout += f", {_percent_up(s.kv_offload)} of the KV cache offloaded"
        precision = (
            f"weights {s.weight_precision}, activations {s.activation_precision}, KV cache {s.kv_precision}; "
            f"matrix products run on the {self.r.compute_precision} units"
        )
        workload = (
            f"one prompt of {s.input_len:,} tokens, generating {_count(s.output_len, 'token')}" if s.batch == 1
            else f"a static batch of {s.batch:,} prompts of {s.input_len:,} tokens, each generating "
            f"{_count(s.output_len, 'token')}"
        )
        lines = [
            _sentence(f"{m.name} ({size}) on {self.a.name}: {workload}"),
            _sentence(f"{precision}; {layout}"),
        ]
        if self.stack != 1.0:
            lines.append(
                _sentence(
                    f"the serving stack of {self.a.name} is taken at {format_factor(self.stack)} of the reference "
                    "(vLLM on CUDA): every compute and memory rate below carries that last factor"
                )
            )
        return lines

    # -- memory --------------------------------------------------------------------------------

    def memory_sentences(self) -> list[str]:
        r, s, mem = self.r, self.s, self.r.memory
        context = s.input_len + s.output_len
        kv_sequence = mem.kv_cache_bytes / s.batch
        near_weights = mem.weights_bytes - mem.weights_far_bytes
        usable = (
            f"{format_bytes(mem.usable_bytes)} usable ({self.cls.usable_memory_fraction * 100:g}% of the "
            f"{format_bytes(mem.capacity_bytes)} of {self.tier_names()})"
        )
        share = f" (its 1/{s.tp * s.pp} share)" if s.tp * s.pp > 1 else ""
        weights = f"weights {format_bytes(near_weights)}{share}"
        if mem.weights_far_bytes > 0:
            weights += f" on the device (another {format_bytes(mem.weights_far_bytes)} offloaded to {self.far.name})"
        runtime = f" + runtime {format_bytes(mem.overhead_bytes)}" if mem.overhead_bytes > 0 else ""
        per_token = f"{format_bytes(kv_sequence / context)} per token per device"
        lines: list[str] = []
        kv_near = mem.kv_cache_bytes - mem.kv_cache_far_bytes
        if self.kv_offload > 0 and r.fits:
            beside = (
                f", beside {format_bytes(mem.weights_far_bytes)} of offloaded weights," if mem.weights_far_bytes > 0
                else ""
            )
            lines.append(
                _sentence(
                    f"{_percent_up(self.kv_offload)} of the KV cache ({format_bytes(mem.kv_cache_far_bytes)}) "
                    f"is kept in {self.far.name}{beside} of the {format_bytes(mem.far_usable_bytes)} usable there; "
                    f"only the other {format_bytes(kv_near)} counts against device memory"
                )
            )
        if not r.fits:
            lines.extend(self.not_fitting_sentences(near_weights, kv_sequence, context))
        elif r.waves > 1:
            left = mem.usable_bytes - near_weights - mem.overhead_bytes
            lines.append(
                _sentence(
                    f"the weights fit, the whole batch does not: per device, {weights}{runtime} leave "
                    f"{format_bytes(left)} of {usable} for the KV cache and activations, but the KV cache of all "
                    f"{s.batch:,} sequences at the full context of {context:,} tokens would need "
                    f"{format_bytes(mem.kv_cache_bytes)} ({per_token})"
                )
            )
            lines.append(
                _sentence(
                    f"the largest batch that fits is {mem.max_batch:,}, so the batch runs in {r.waves} waves of up to "
                    f"{self.resident:,} sequences, one after the other, as serving stacks do with preemption: "
                    f"{r.waves}× the time of one wave — this cliff is where real systems lose 5–10×"
                )
            )
        else:
            used = near_weights + kv_near + mem.activation_bytes + mem.overhead_bytes
            kv_where = " on the device" if mem.kv_cache_far_bytes > 0 else ""
            lines.append(
                _sentence(
                    f"fits: per device, {weights} + KV cache {format_bytes(kv_near)}{kv_where} "
                    f"({_count(s.batch, 'sequence')} at the full context of {context:,} tokens, {per_token}) + "
                    f"activations {format_bytes(mem.activation_bytes)}{runtime} = {format_bytes(used)} of {usable}"
                )
            )
            lines.append(
                _sentence(
                    f"the largest batch that fits is {mem.max_batch:,}: each further sequence needs "
                    f"{format_bytes(kv_sequence)} of KV cache at full context"
                )
            )
        if self.m.mla is not None:
            lines.append(
                _sentence(
                    f"{self.m.name} uses multi-head latent attention: its KV cache keeps one compressed latent of "
                    f"{self.m.kv_elements_per_token_per_layer} elements per token per layer, shared by all heads, "
                    "so every tensor-parallel device keeps all of it"
                )
            )
        elif s.tp > 1 and s.tp <= self.m.n_kv_heads:
            lines.append(
                _sentence(
                    f"tensor parallelism splits the KV cache by its {self.m.n_kv_heads} KV heads over the "
                    f"{s.tp} devices"
                )
            )
        return lines

    def not_fitting_sentences(self, near_weights: float, kv_sequence: float, context: float) -> list[str]:
        r, s, mem = self.r, self.s, self.r.memory
        code = r.fit_code
        usable = (
            f"{format_bytes(mem.usable_bytes)} usable ({self.cls.usable_memory_fraction * 100:g}% of "
            f"{format_bytes(mem.capacity_bytes)})"
        )
        share = f" per device (its 1/{s.tp * s.pp} share)" if s.tp * s.pp > 1 else ""
        if code == codes.FIT_WEIGHTS_DO_NOT_FIT:
            runtime = f", of which the runtime takes {format_bytes(mem.overhead_bytes)}" if mem.overhead_bytes else ""
            reason = (
                f"does not fit: the weights need {format_bytes(near_weights)}{share} but one {self.a.name} has "
                f"{usable}{runtime}"
            )
        elif code == codes.FIT_KV_DOES_NOT_FIT_ONE_SEQUENCE:
            reason = (
                f"does not fit: the weights fit ({format_bytes(near_weights)}{share} of "
                f"{format_bytes(mem.usable_bytes)} usable), but the KV cache "
                f"of even one sequence at its full context of {context:,} tokens needs {format_bytes(kv_sequence)}, "
                "more than is left beside them"
            )
        elif code == codes.FIT_FAR_TIER_TOO_SMALL:
            parts = []
            if mem.weights_far_bytes > 0:
                parts.append(f"the {format_bytes(mem.weights_far_bytes)} of offloaded weights")
            if self.kv_offload > 0:
                parts.append(f"the {format_bytes(kv_sequence * self.kv_offload)} of offloaded KV cache of one sequence")
            offloaded = " and ".join(parts)
            reason = (
                f"does not fit: {offloaded} exceed the "
                f"{format_bytes(mem.far_usable_bytes)} usable in {self.far.name if self.far else 'the far tier'}"
            )
        else:
            reason = f"does not run as laid out: {codes.FIT_REASONS[code]}"
        lines = [_sentence(reason)]
        if code in (codes.FIT_WEIGHTS_DO_NOT_FIT, codes.FIT_KV_DOES_NOT_FIT_ONE_SEQUENCE, codes.FIT_FAR_TIER_TOO_SMALL):
            options = []
            if r.tp_needed and r.tp_needed != s.tp:
                options.append(f"TP={r.tp_needed} ({_count(r.tp_needed * s.pp * s.dp, 'device')})")
            if r.offload_needed > 0.0 and self.far is not None:
                options.append(f"offloading {_percent_up(r.offload_needed)} of the weights to {self.far.name}")
            if options:
                lines.append(_sentence(f"{' or '.join(options)} would fit one sequence at full context"))
            else:
                lines.append(_sentence("neither more tensor parallelism nor offloading makes one sequence fit"))
        lines.append(
            _sentence(
                "every number below is hypothetical: what the model computes as if the scenario ran as given"
            )
        )
        return lines

    # -- reading memory ------------------------------------------------------------------------

    def memory_clause(self, p: _Pass) -> tuple[str, bool]:
        """How the pass's bytes are read and how long that takes; and whether the clause is a
        sentence of its own (offloaded or multi-tier reads) rather than a short 'at ...' phrase.

        Offloaded weights and KV cache are read from the far tier at its link rate; the rest from
        the near tiers. With one near tier the near time is bytes / (bandwidth × η_m × stack) exactly;
        with two (SRAM beside HBM) the engine's time is quoted with its effective rate."""
        memory_time = p.phase.memory_time_s
        far = self.far if self.offload > 0 or self.kv_offload > 0 else None
        far_weight_bytes = p.weight_bytes * self.offload if far is not None else 0.0
        far_kv_bytes = p.kv_bytes * self.kv_offload if far is not None else 0.0
        far_bytes = far_weight_bytes + far_kv_bytes
        far_time = far_bytes / self.far_rate(far) if far is not None and far_bytes > 0 else 0.0
        near_bytes, near_time = p.bytes - far_bytes, memory_time - far_time
        tier = self.near[0] if len(self.near) == 1 else None
        if tier is not None and not _same(near_bytes / self.near_rate(tier), near_time):
            tier = None  # the formula would not reproduce the engine's time: quote the time only
        if far_bytes <= 0 and tier is not None:
            return f"at {self.near_rate_text(tier)} that takes {format_time(memory_time)}", False
        other = "the other " if far_bytes > 0 else ""
        if tier is not None:
            near = (
                f"{other}{format_bytes(near_bytes)} come from {tier.name} at {self.near_rate_text(tier)} in "
                f"{format_time(near_time)}"
            )
        else:
            slowest = self.near[-1]
            near = (
                f"{other}{format_bytes(near_bytes)} come from {self.tier_names()} (weights fill the fastest tier "
                f"first, then the KV cache) in {format_time(near_time)}, an effective "
                f"{format_bandwidth(near_bytes / near_time)} ({slowest.name} alone: {self.near_rate_text(slowest)})"
            )
        if far is None or far_bytes <= 0:
            return near, True
        parts = []
        if far_weight_bytes > 0:
            parts.append(f"{format_bytes(far_weight_bytes)} of the weights (the {_percent_up(self.offload)} offloaded)")
        if far_kv_bytes > 0:
            parts.append(f"{format_bytes(far_kv_bytes)} of the KV cache (the {_percent_up(self.kv_offload)} offloaded)")
        return (
            f"{' and '.join(parts)} stream from "
            f"{far.name} at {self.far_rate_text(far)}, which takes {format_time(far_time)}; {near}: "
            f"{format_time(memory_time)} of memory time"
        ), True

    def verdict(self, p: _Pass) -> str:
        phase = p.phase
        if phase.bound in ("compute", "memory"):
            return f"{phase.bound}-bound"
        larger = "compute" if phase.compute_time_s >= phase.memory_time_s else "memory"
        if phase.bound == "communication":
            what = "communication exceeds"
        elif phase.host_time_s > 0:
            # The engine's bound counts the host time spread over the phase's stage passes.
            what = (
                f"the fixed overheads ({format_time(phase.overhead_time_s)} of per-layer overhead and "
                f"{format_time(p.host_per_pass)} of host time per pass) exceed"
            )
        else:
            what = "the fixed per-layer overhead exceeds"
        return f"{larger} is the larger of the two, but {what} both: {phase.bound}-bound"

    def rates_and_verdict(self, p: _Pass, reads: str, work: str) -> list[str]:
        """'<reads>; at <bw> × η that takes T, while <work> would take T' at <peak> × η — bound'."""
        phase = p.phase
        clause, long_form = self.memory_clause(p)
        compute = format_time(phase.compute_time_s)
        rate_formula = _same(p.flops / self.compute_rate(), phase.compute_time_s)
        at_peak = f" at {self.compute_rate_text()}" if rate_formula else ""
        if long_form:
            return [
                _sentence(reads),
                _sentence(clause),
                _sentence(f"{work} would take {compute}{at_peak} — {self.verdict(p)}"),
            ]
        return [_sentence(f"{reads}; {clause}, while {work} would take {compute}{at_peak} — {self.verdict(p)}")]

    def execution_sentence(self, p: _Pass, unit: str) -> str:
        """How the pass's compute and memory time make its execution time, as the class overlaps
        its operators (reference.execution_time): the whole pass's roofline, or the linear
        layers' and attention's each, added."""
        phase = p.phase
        overlap = self.cls.operator_overlap
        device = self.a.name
        kind = f"({self.a.architecture_class} class)"
        execution = format_time(phase.execution_time_s)
        whole = max(phase.compute_time_s, phase.memory_time_s)
        if overlap >= 1.0:
            return _sentence(
                f"{device} overlaps a pass's operators {kind}, each streaming into the next, so the pass takes "
                f"the roofline of the whole: max({format_time(phase.compute_time_s)}, {format_time(phase.memory_time_s)}) = "
                f"{execution} per {unit}"
            )
        linear_compute = phase.compute_time_s - phase.attention_compute_time_s
        linear_memory = phase.memory_time_s - phase.attention_memory_time_s
        linear = max(linear_compute, linear_memory)
        attention = max(phase.attention_compute_time_s, phase.attention_memory_time_s)
        operators = (
            f"the linear layers take max({format_time(linear_compute)} of compute, {format_time(linear_memory)} of "
            f"weight and activation reads) = {format_time(linear)} and attention max("
            f"{format_time(phase.attention_compute_time_s)} of compute, "
            f"{format_time(phase.attention_memory_time_s)} of KV-cache reads) = {format_time(attention)}"
        )
        if overlap <= 0.0:
            return _sentence(
                f"{device} runs a pass's operators one after another {kind}, so each takes its own roofline and their "
                f"times add: {operators}; {format_time(linear)} + {format_time(attention)} = {execution} per {unit}"
            )
        weight = format_factor(overlap)
        return _sentence(
            f"{device} overlaps a pass's operators in part {kind}, operator overlap {weight}: {operators}, "
            f"{format_time(linear + attention)} one after another, against {format_time(whole)} for the whole "
            f"pass's roofline; {weight} × {format_time(whole)} + (1 − {weight}) × {format_time(linear + attention)} = "
            f"{execution} per {unit}"
        )

    def host_sentence(self, p: _Pass, prefill: bool) -> str | None:
        """The serving stack's host time of the phase: per forward step (a prefill chunk is one)
        and per sequence in it, as the engine charges it."""
        host = p.phase.host_time_s
        if host <= 0:
            return None
        step, per_sequence = self.cls.step_overhead_s, self.cls.sequence_overhead_s
        steps = p.passes if prefill else 1
        parts = []
        if step > 0:
            parts.append(f"{steps:,} × {format_time(step, trim=True)}" if steps > 1 else format_time(step, trim=True))
        if per_sequence > 0:
            parts.append(f"{self.resident:,} × {format_time(per_sequence, trim=True)}")
        formula = " + ".join(parts)
        if _same(steps * step + self.resident * per_sequence, host) and (len(parts) > 1 or "×" in formula):
            amount = f"{formula} = {format_time(host)}"
        else:
            amount = format_time(host)
        work = "the serving stack's host work (scheduling, input preparation, sampling, output processing)"
        if prefill:
            return _sentence(
                f"{work} adds {amount} to the prefill, once per forward step (a chunk) and once per prompt, "
                "during which the devices wait"
            )
        return _sentence(f"{work} adds {amount} per step, during which the devices wait")

    def communication_sentence(self, p: _Pass, unit: str) -> str | None:
        phase, s, m = p.phase, self.s, self.m
        if phase.communication_time_s <= 0:
            return None
        parts = []
        p_a = bytes_per_element(s.activation_precision)
        if s.tp > 1:
            message = p.tokens * m.hidden_size * p_a
            net = self.network(s.tp)
            bandwidth = net.group_bandwidth_Bps(s.tp - 1) * self.cls.interconnect_efficiency
            latency = float(net.latency_s)
            each, _, algorithm = all_reduce(message, s.tp, bandwidth, latency)
            collective = self.cls.collective_overhead_s
            launch = (
                f" and {format_time(collective, trim=True)} to launch and synchronise it" if collective > 0 else ""
            )
            if self.effective_ep == 1:
                per_layer = "twice per layer"
            elif m.n_moe_layers == m.n_layers:
                per_layer = "once per layer"
            else:
                per_layer = "twice per dense layer and once per MoE layer"
            link = self.group_link_phrase(net, s.tp - 1)
            parts.append(
                f"tensor parallelism over {s.tp} devices all-reduces the activations {per_layer} "
                f"({self.layers_per_stage()}), each of {_tokens(p.tokens)} × {m.hidden_size:,} × "
                f"{format_factor(p_a)} B = {format_bytes(message)}, {self.all_reduce_phrase(algorithm, s.tp)} over "
                f"{net.name} at {link} × {format_factor(self.cls.interconnect_efficiency)} with "
                f"{format_time(latency, trim=True)} of latency per step{launch}, taking "
                f"{format_time(each + collective)} each"
            )
        if self.effective_ep > 1:
            net = self.network(self.effective_ep)
            parts.append(
                f"expert parallelism over {self.effective_ep} devices adds two all-to-alls per MoE layer "
                f"(dispatch and combine, {self.m.n_moe_layers} MoE layers) over {net.name}; the busiest device "
                "receives more than its share of the routed tokens"
            )
        return _sentence(
            f"{'; '.join(parts)}: {format_time(phase.communication_time_s)} of communication per {unit}, "
            "not overlapped with compute"
        )

    @staticmethod
    def all_reduce_phrase(algorithm: str, group: int) -> str:
        """How the all-reduce runs, in how many steps, and why that algorithm (reference.all_reduce)."""
        if algorithm == "ring":
            how = f"as a ring in 2 × ({group} − 1) = {_count(2 * (group - 1), 'step')}"
        elif algorithm == "recursive halving and doubling":
            steps = round(math.log2(group))
            how = f"by recursive halving and doubling in 2 × log₂ {group} = {_count(2 * steps, 'step')}"
        else:
            steps = round(math.log2(group))
            how = (
                f"by recursive doubling in log₂ {group} = {_count(steps, 'step')}, each device sending the whole "
                "message every step"
            )
        if group & (group - 1):
            why = "recursive halving and doubling need a power-of-two group"
        else:
            why = "the fastest of ring, recursive halving and doubling, and recursive doubling for this message"
        return f"{how} ({why})"

    @staticmethod
    def group_link_phrase(net: Interconnect, peers: int) -> str:
        """The bandwidth a device of the group sends at, and why it is less than the network's
        on a switchless mesh."""
        bandwidth = net.group_bandwidth_Bps(peers)
        text = format_bandwidth(bandwidth, trim=True)
        if bandwidth < float(net.bandwidth_per_direction_Bps):
            peer = format_bandwidth(float(net.peer_bandwidth_per_direction_Bps), trim=True)
            links = "one direct link to the other device" if peers == 1 else f"{peers} direct links of {peer} to the group"
            total = format_bandwidth(float(net.bandwidth_per_direction_Bps), trim=True)
            text += f" ({links}: without a switch, the rest of its {total} leads outside the group)"
        return text

    def network(self, group: int) -> Interconnect:
        scale_up = self.a.interconnect
        if group <= float(scale_up.domain_size) or self.a.scale_out is None:
            return scale_up
        return self.a.scale_out

    def overhead_phrase(self, p: _Pass) -> str:
        host = p.phase.host_time_s
        per_layer = format_time(self.cls.per_layer_overhead_s, trim=True)
        quantize = layer_overhead_s(self.cls, bytes_per_element(self.s.activation_precision)) - self.cls.per_layer_overhead_s
        if quantize > 0:
            # 8-bit (or narrower) activations: the quantisation kernels before each linear product.
            per_layer = f"({per_layer} + {format_time(quantize, trim=True)} quantising the activations)"
        return (
            f"{self.layers_per_stage()} × {per_layer} = "
            f"{format_time(p.phase.overhead_time_s)} of fixed per-layer overhead"
            + (f" and {format_time(host)} of host time" if host > 0 and self.s.pp == 1 else "")
        )

    def pass_sum(self, p: _Pass) -> str:
        """The terms of one stage pass: execution (compute and memory), communication, overhead."""
        phase = p.phase
        terms = [format_time(phase.execution_time_s)]
        if phase.communication_time_s > 0:
            terms.append(format_time(phase.communication_time_s))
        terms.append(format_time(phase.overhead_time_s))
        return " + ".join(terms)

    def pipeline_transfer(self, p: _Pass) -> float:
        """Time of one activation transfer between pipeline stages, from the phase's total."""
        phase = p.phase
        return (phase.time_s - p.pipeline_passes * p.time - phase.host_time_s) / (self.s.pp - 1)

    def pipeline_sum(self, p: _Pass) -> str:
        """'passes × pass + transfers × transfer (+ host) = total' of a pipelined phase."""
        transfers = self.s.pp - 1
        transfer = format_time(self.pipeline_transfer(p))
        terms = [
            f"{p.pipeline_passes:,} × {format_time(p.time)}",
            f"{transfers} × {transfer}" if transfers > 1 else transfer,
        ]
        if p.phase.host_time_s > 0:
            terms.append(format_time(p.phase.host_time_s))
        return f"{' + '.join(terms)} = {format_time(p.phase.time_s)}"

    # -- prefill -------------------------------------------------------------------------------

    def prefill_sentences(self) -> list[str]:
        p, s = self.prefill, self.s
        chunk = self.constants.prefill_chunk_tokens
        prompts = _count(self.resident, "prompt")
        tokens = self.resident * s.input_len
        if p.passes == 1:
            lines = [_sentence(f"prefill of {prompts} × {s.input_len:,} tokens runs as one chunk of {tokens:,} tokens")]
        else:
            lines = [
                _sentence(
                    f"prefill of {prompts} × {s.input_len:,} tokens = {tokens:,} tokens runs as {p.passes:,} chunks of "
                    f"{_amount(p.tokens)} tokens (at most {chunk:,} per chunk; the weights are read once per chunk)"
                )
            ]
        kv = f", {format_bytes(p.kv_bytes)} of KV cache" if p.kv_bytes > 0 else ""
        lines += self.rates_and_verdict(
            p,
            f"per chunk, {self.device()} reads {format_bytes(p.bytes)}: "
            f"{format_bytes(p.weight_bytes)} of weights{kv} and {format_bytes(p.activation_bytes)} of activations",
            f"its {format_flops(p.flops)}",
        )
        lines.append(self.execution_sentence(p, "chunk"))
        comm = self.communication_sentence(p, "chunk")
        if comm:
            lines.append(comm)
        host_line = self.host_sentence(p, prefill=True)
        if host_line:
            lines.append(host_line)
        phase = p.phase
        host = f" + {format_time(phase.host_time_s)}" if phase.host_time_s > 0 else ""
        if s.pp == 1:
            total = (
                f"{p.passes:,} × ({self.pass_sum(p)}){host} = {format_time(phase.time_s)}" if p.passes > 1
                else f"{self.pass_sum(p)}{host} = {format_time(phase.time_s)}"
            )
            what = "prefill of one wave" if self.r.waves > 1 else "prefill — the time to first token (TTFT) —"
            lines.append(_sentence(f"with {self.overhead_phrase(p)}, {what} takes {total}"))
        else:
            take = "take" if p.passes > 1 else "takes"
            host_wait = f" and the host's {format_time(phase.host_time_s)}" if phase.host_time_s > 0 else ""
            lines.append(
                _sentence(
                    f"with {self.overhead_phrase(p)}, a stage pass takes {self.pass_sum(p)} = {format_time(p.time)}; "
                    f"{_count(p.passes, 'chunk')} through {s.pp} stages {take} {p.passes:,} + {s.pp - 1} = "
                    f"{p.pipeline_passes:,} passes in a row, plus {_count(s.pp - 1, 'activation transfer')} of "
                    f"{format_time(self.pipeline_transfer(p))}{host_wait}: "
                    f"prefill{' of one wave' if self.r.waves > 1 else ''} takes {self.pipeline_sum(p)}"
                )
            )
        if self.r.waves > 1:
            lines.append(
                _sentence(
                    f"that is one wave; over {self.r.waves} waves a request waits {format_time(self.r.ttft_s)} on "
                    "average for its first token"
                )
            )
        return lines

    # -- decode --------------------------------------------------------------------------------

    def decode_sentences(self) -> list[str]:
        p, s, r = self.decode, self.s, self.r
        mean_context = s.input_len + s.output_len / 2.0
        sequences = _count(self.resident, "sequence")
        if p.passes > 1:
            lines = [
                _sentence(
                    f"each decode step moves {p.passes} micro-batches of {_amount(p.sequences)} sequences "
                    f"through the {s.pp} pipeline stages (one token each, at the mean context of "
                    f"{significant(mean_context)} tokens)"
                )
            ]
            subject = f"per micro-batch, {self.device()}"
        else:
            lines = []
            subject = "each decode step" + (" on the busiest device" if s.tp * s.pp > 1 else "")
        reads = (
            f"{subject} reads {format_bytes(p.weight_bytes)} of weights and {format_bytes(p.kv_bytes)} of KV cache"
        )
        if p.passes == 1:
            reads += f" ({sequences} at the mean context of {significant(mean_context)} tokens)"
        reads += f", {format_bytes(p.bytes)} in all with activations"
        lines += self.rates_and_verdict(p, reads, f"its {format_flops(p.flops)}")
        unit = "step" if p.passes == 1 else "micro-batch"
        lines.append(self.execution_sentence(p, unit))
        lines.append(
            _sentence(
                f"its operational intensity is {significant(r.decode.operational_intensity)} FLOP/byte; the roofline's "
                f"ridge point is {significant(r.ridge_point)} FLOP/byte ({format_flop_rate(self.peak, trim=True)} ÷ "
                f"{format_bandwidth(self.peak / r.ridge_point, trim=True)})"
            )
        )
        lines.extend(self.moe_sentences())
        lines.extend(self.crossover_sentences())
        comm = self.communication_sentence(p, unit)
        if comm:
            lines.append(comm)
        host_line = self.host_sentence(p, prefill=False)
        if host_line:
            lines.append(host_line)
        phase = p.phase
        if s.pp == 1:
            host = f" + {format_time(phase.host_time_s)}" if phase.host_time_s > 0 else ""
            lines.append(
                _sentence(
                    f"with {self.overhead_phrase(p)}, one decode step — the inter-token latency (ITL) — takes "
                    f"{self.pass_sum(p)}{host} = {format_time(r.itl_s)}"
                )
            )
        else:
            transfers = f"{_count(s.pp - 1, 'activation transfer')} of {format_time(self.pipeline_transfer(p))}"
            host_wait = f", and the host adds {format_time(phase.host_time_s)}" if phase.host_time_s > 0 else ""
            lines.append(
                _sentence(
                    f"with {self.overhead_phrase(p)}, a stage pass takes {self.pass_sum(p)} = {format_time(p.time)}; "
                    f"a token crosses {s.pp} stages and {transfers}{host_wait}, so the inter-token latency (ITL) is "
                    f"{self.pipeline_sum(p)}"
                )
            )
        return lines

    def moe_sentences(self) -> list[str]:
        m, p = self.m, self.decode
        if m.moe is None:
            return []
        experts, top_k = m.moe.n_routed_experts, m.moe.experts_per_token
        shared = f" (plus {_count(m.moe.n_shared_experts, 'shared expert')})" if m.moe.n_shared_experts else ""
        tokens = p.tokens
        layers = (
            f"all {m.n_layers} of its layers" if m.n_moe_layers == m.n_layers
            else f"{m.n_moe_layers} of its {m.n_layers} layers"
        )
        touched = experts * (1.0 - (1.0 - top_k / experts) ** tokens)
        if self.effective_ep > 1:
            spread = (
                f"; with EP {self.effective_ep} each device holds {math.ceil(experts / self.effective_ep)} of them and "
                "the busiest reads a few more than its share"
            )
        else:
            spread = ""
        return [
            _sentence(
                f"{m.name} is a mixture of experts: {layers} send each token to "
                f"{top_k} of {experts} routed experts{shared}"
            ),
            _sentence(
                f"a pass of {_tokens(tokens)} touches about {experts} × (1 − (1 − {top_k}/{experts})^"
                f"{_amount(tokens)}) ≈ {significant(touched)} distinct experts per MoE layer, and only those are "
                f"read{spread}: weight traffic grows with the batch until every expert is read, while the FLOPs "
                f"count only the {top_k} experts each token uses"
            ),
        ]

    def crossover_sentences(self) -> list[str]:
        lines = [self.whole_pass_crossover_sentence()]
        if self.linear_crossover is not None:
            lines.append(self.linear_crossover_sentence())
        return lines

    def linear_crossover_sentence(self) -> str:
        """Where operators run one after another, the batch at which the linear layers' compute
        reaches their reads: batching amortises the weight reads up to there."""
        r, c, phase = self.r, self.linear_crossover, self.r.decode
        hypothetical = " (hypothetical, as the scenario does not fit)" if self.hypothetical() else ""
        largest = r.memory.max_batch
        reads = "the time of their weight and activation reads"
        if c.batch is None:
            where = f"at every batch that fits (at most {largest:,})" if r.fits else (
                f"up to batch {CROSSOVER_MAX_BATCH:,}{hypothetical}"
            )
            return _sentence(
                f"the linear layers' compute time stays below {reads} {where}, so batching keeps amortising the "
                "weight reads"
            )
        if c.batch == 1:
            return _sentence(f"the linear layers' compute time exceeds {reads} even at batch 1{hypothetical}")
        linear_compute = phase.compute_time_s - phase.attention_compute_time_s
        if linear_compute >= phase.memory_time_s - phase.attention_memory_time_s:
            return _sentence(
                f"the linear layers' compute time overtook {reads} at batch ≈ {c.batch:,}{hypothetical}: from there, "
                "each further sequence adds its whole share of linear-layer compute to the step"
            )
        fits_at = f"; the largest batch that fits is {largest:,}" if r.fits else ""
        return _sentence(
            f"batching amortises the weight reads until batch ≈ {c.batch:,}, where the linear layers' compute time "
            f"reaches {reads}{hypothetical}{fits_at}"
        )

    def whole_pass_crossover_sentence(self) -> str:
        r, c = self.r, self.crossover
        hypothetical = " (hypothetical, as the scenario does not fit)" if self.hypothetical() else ""
        largest = r.memory.max_batch
        if c.batch is not None:
            if c.batch == 1:
                text = f"decode compute time exceeds memory time even at batch 1 on {self.a.name}{hypothetical}"
            elif r.decode.compute_time_s >= r.decode.memory_time_s:
                turned = "turned compute-bound" if r.decode.bound == "compute" else "compute time overtook memory time"
                text = (
                    f"decode {turned} at batch ≈ {c.batch:,}{hypothetical}: from there, each further sequence adds "
                    "more compute time than memory time"
                )
            elif self.linear_crossover is not None:
                # Operators one after another: the linear layers' own crossover (the next sentence)
                # is where weight reads stop being amortised; this one decides the bound.
                text = (
                    f"summed over the pass, decode compute time reaches memory time at batch ≈ {c.batch:,}"
                    f"{hypothetical}"
                )
            else:
                fits_at = f"; the largest batch that fits is {largest:,}" if r.fits else ""
                text = (
                    f"batching amortises the weight reads until batch ≈ {c.batch:,}, where decode compute time "
                    f"reaches memory time{hypothetical}{fits_at}"
                )
            return _sentence(text)
        # No crossover: say what one more sequence adds to each, at the largest batch swept.
        stays = "decode stays memory-bound" if r.decode.bound == "memory" else "memory time stays ahead of compute"
        marginal = self.crossover.marginal(self.s.pp)
        if marginal is None:
            return _sentence(
                f"{stays} at every batch that fits (at most {largest:,}): the batch stops fitting before "
                "compute catches up with memory"
            )
        compute_step, memory_step, at_batch = marginal.compute_s, marginal.memory_s, marginal.at_batch
        if not r.fits:
            reach = f"up to batch {CROSSOVER_MAX_BATCH:,}{hypothetical}"
        elif compute_step >= memory_step:
            reach = f"at every batch that fits (at most {largest:,})"
        elif self.m.moe is None:
            reach = f"at any batch, and memory caps the batch at {largest:,} anyway"
        else:  # expert reads saturate at larger batches: say nothing beyond what was computed
            reach = f"up to the largest batch that fits ({largest:,})"
        if compute_step < memory_step:
            kv_per_sequence = r.decode.kv_bytes_per_device / self.resident
            text = (
                f"batching does not make decode compute-bound here: each further sequence adds "
                f"{format_time(compute_step)} of compute but {format_time(memory_step)} of memory time per step, "
                f"as it reads its own KV cache ({format_bytes(kv_per_sequence)} per step at the mean context), so "
                f"{stays} {reach}"
            )
        else:
            text = (
                f"{stays} {reach}: each further sequence adds {format_time(compute_step)} of compute and "
                f"{format_time(memory_step)} of memory time per step (at batch {at_batch:,}), so compute would "
                "catch up only at a larger batch"
            )
        return _sentence(text)

    # -- throughput and energy -----------------------------------------------------------------

    def throughput_sentences(self) -> list[str]:
        r, s, a = self.r, self.s, self.a
        waves = f" in {r.waves} waves" if r.waves > 1 else ""
        arrival = "one prompt" if s.batch == 1 else f"a static batch: all {s.batch:,} prompts arrive together"
        first = f"{'on average ' if r.waves > 1 else ''}after {format_time(r.ttft_s)}"
        lines = [
            _sentence(
                f"{arrival}; the first token comes {first}, then one every {format_time(r.itl_s)} "
                f"({significant(1.0 / r.itl_s)} tokens/s per sequence), and the last of the {s.output_len:,} tokens "
                f"after {format_time(r.e2e_latency_s)}{waves}"
            ),
            _sentence(
                f"throughput: {significant(r.throughput_output_tok_s)} output tokens/s, or "
                f"{significant(r.throughput_total_tok_s)} input+output tokens/s (as the second paper counts), over "
                f"{_count(r.devices, 'device')}" + (f" ({s.dp} data-parallel replicas)" if s.dp > 1 else "")
            ),
        ]
        tdp = float(a.tdp_W)
        busy_floor = self.cls.busy_power_fraction * tdp

        def limit(power: float) -> str:
            if power >= tdp:
                return " (capped at TDP)"
            if busy_floor > 0.0 and power <= busy_floor * (1.0 + 1e-12):
                return " (the busy floor)"
            return ""

        floor = (
            f", busy floor {format_power(busy_floor)}: a {a.architecture_class} device executing draws at least "
            f"{self.cls.busy_power_fraction:g} of its TDP whatever the work"
            if busy_floor > 0.0 else ""
        )
        lines.append(
            _sentence(
                f"power: {format_power(r.power_W)} on average over the run for all devices; per device, prefill "
                f"draws {format_power(r.prefill.power_per_device_W)}{limit(r.prefill.power_per_device_W)} and decode "
                f"{format_power(r.decode.power_per_device_W)}{limit(r.decode.power_per_device_W)} "
                f"(TDP {format_power(tdp, trim=True)}, idle {format_power(float(a.idle_W), trim=True)}{floor})"
            )
        )
        if a.power_scope == "system":
            lines.append(
                _sentence(
                    f"these are system-level figures: the power of {a.name} is known only for the system around it "
                    "(host, fans and power delivery included), so they do not compare one-to-one with device-level "
                    "board power"
                )
            )
        else:
            lines.append(
                _sentence(
                    f"these are device-level figures: the board power of each {a.name}, without host, fans or "
                    "power delivery"
                )
            )
        lines.append(
            _sentence(
                f"energy for the run: {format_energy(r.energy_J)}, so {significant(r.tokens_per_joule)} input+output "
                f"tokens per joule ({significant(r.output_tokens_per_joule)} output tokens per joule)"
            )
        )
        return lines
