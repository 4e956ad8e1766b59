"""Operational intensity of decode and prefill, the ridge point, and the attainable rate."""

from __future__ import annotations

from ....core.units import format_flop_rate, significant
from ...context import Context
from ..build import Builder, section
from ..numbers import intensity

_WEIGHT_BOUND_INTENSITY = "2·{b}/{p_w}"  # decode's intensity where weights are all the bytes


@section("roofline", "Operational intensity and ridge point", needs=("decode", "prefill"))
def roofline(sh: Builder, ctx: Context) -> tuple[str, ...]:
    r, s = ctx.result, ctx.scenario
    sh.derive("Decode operational intensity", "I_dec", "I<sub>dec</sub>", "FLOPs per byte moved in decode",
              "{F_dec}/{Q_dec}", intensity, r.decode.operational_intensity)
    sh.derive("Prefill operational intensity", "I_pre", "I<sub>pre</sub>", "FLOPs per byte moved in prefill",
              "{F_pre}/{Q_pre}", intensity, r.prefill.operational_intensity)
    sh.derive("Ridge point", "I_ridge", "I<sub>ridge</sub>", "intensity above which compute, not memory, binds",
              "{pi}/{beta}", intensity, r.ridge_point)
    sh.derive("Attainable decode rate", "P_roof", "π<sub>roof</sub>", "the roofline at the decode intensity",
              "min({pi}, {beta}·{I_dec})", format_flop_rate)
    notes = [(f"With weights dominating the bytes, decode intensity is about 2·b/p<sub>w</sub> = "
              f"{significant(sh.evaluate(_WEIGHT_BOUND_INTENSITY))} FLOP/B (b sequences per pass); KV-cache reads "
              "pull it lower as the context grows.")]
    if s.tp * s.pp > 1:
        notes.append("FLOPs and bytes are the busiest device's share.")
    return tuple(notes)
