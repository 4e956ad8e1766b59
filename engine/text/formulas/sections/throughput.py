"""Throughput: the end-to-end latency and the tokens per second of all replicas."""

from __future__ import annotations

from ....core.units import format_time
from ...context import Context
from ..build import Builder, section
from ..numbers import tokens_per_s


@section("throughput", "Throughput", needs=("step", "prefill"))
def throughput(sh: Builder, ctx: Context) -> tuple[str, ...]:
    r = ctx.result
    wave = "{t_prefill} + ({s_out} − 1)·{ITL}"
    sh.derive("End-to-end latency", "T_e2e", "T<sub>e2e</sub>", "until the last sequence's last token",
              f"{{waves}}·({wave})" if r.waves > 1 else wave, format_time, r.e2e_latency_s)
    sh.derive("Output throughput", "thr_out", "Θ<sub>out</sub>", "output tokens per second, all replicas",
              "{DP}·{B}·{s_out}/{T_e2e}", tokens_per_s, r.throughput_output_tok_s)
    sh.derive("Input + output throughput", "thr_all", "Θ<sub>all</sub>", "input and output tokens per second, as "
              "the second paper counts", "{DP}·{B}·({s_in} + {s_out})/{T_e2e}", tokens_per_s,
              r.throughput_total_tok_s)
    return ("A static batch: all prompts arrive together and the first token of each comes from the prefill.",)
