"""Throughput and energy: latencies of a request, tokens per second, power and energy."""

from __future__ import annotations

from ....core.units import format_energy, format_power, format_time, significant
from ..context import ExplainContext
from ..words import count, sentence


def sentences(ctx: ExplainContext) -> list[str]:
    r, s, a = ctx.result, ctx.scenario, ctx.accelerator
    waves = f" in {r.waves} waves" if r.waves > 1 else ""
    arrival = "one prompt" if s.batch == 1 else f"a static batch: all {s.batch:,} prompts arrive together"
    first = f"{'on average ' if r.waves > 1 else ''}after {format_time(r.ttft_s)}"
    lines = [
        sentence(
            f"{arrival}; the first token comes {first}, then one every {format_time(r.itl_s)} "
            f"({significant(1.0 / r.itl_s)} tokens/s per sequence), and the last of the {s.output_len:,} tokens "
            f"after {format_time(r.e2e_latency_s)}{waves}"
        ),
        sentence(
            f"throughput: {significant(r.throughput_output_tok_s)} output tokens/s, or "
            f"{significant(r.throughput_total_tok_s)} input+output tokens/s (as the second paper counts), over "
            f"{count(r.devices, 'device')}" + (f" ({s.dp} data-parallel replicas)" if s.dp > 1 else "")
        ),
    ]

    lines.append(_power(ctx))
    if a.power_scope == "system":
        lines.append(
            sentence(
                f"these are system-level figures: the power of {a.name} is known only for the system around it "
                "(host, fans and power delivery included), so they do not compare one-to-one with device-level "
                "board power"
            )
        )
    else:
        lines.append(
            sentence(
                f"these are device-level figures: the board power of each {a.name}, without host, fans or "
                "power delivery"
            )
        )
    lines.append(
        sentence(
            f"energy for the run: {format_energy(r.energy_J)}, so {significant(r.tokens_per_joule)} input+output "
            f"tokens per joule ({significant(r.output_tokens_per_joule)} output tokens per joule)"
        )
    )
    return lines


def _power(ctx: ExplainContext) -> str:
    """Mean power over the run, and each phase's per device with the limit it sits at."""
    r, t = ctx.result, ctx.trace

    def limit(power: float) -> str:
        if power >= t.tdp_W:
            return " (capped at TDP)"
        if t.busy_floor_W > 0.0 and power <= t.busy_floor_W * (1.0 + 1e-12):
            return " (the busy floor)"
        return ""

    floor = (
        f", busy floor {format_power(t.busy_floor_W)}: a {ctx.accelerator.architecture_class} device executing draws "
        f"at least {ctx.cls.busy_power_fraction:g} of its TDP whatever the work"
        if t.busy_floor_W > 0.0 else ""
    )
    return sentence(
        f"power: {format_power(r.power_W)} on average over the run for all devices; per device, prefill "
        f"draws {format_power(r.prefill.power_per_device_W)}{limit(r.prefill.power_per_device_W)} and decode "
        f"{format_power(r.decode.power_per_device_W)}{limit(r.decode.power_per_device_W)} "
        f"(TDP {format_power(t.tdp_W, trim=True)}, idle {format_power(t.idle_W, trim=True)}{floor})"
    )
