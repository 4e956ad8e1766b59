"""A mixture of experts: the distinct experts a pass reads, and the busiest expert-parallel
device's share of the routed tokens. The decode pass's expert formulas are built with the
decode step (its FLOPs and weights need them) and shown here; the prefill's stay with it."""

from __future__ import annotations

from ....core.units import format_bytes, significant
from ...context import Context
from ..build import Builder, section
from .stage import phase_of


def expert_formulas(sh: Builder, ctx: Context, suffix: str, tokens_key: str, label: str) -> str:
    """Distinct experts a pass reads and the busiest device's token imbalance; returns the
    template of the pass's expert FLOPs."""
    t, (_, phase) = ctx.trace, phase_of(ctx, suffix)
    sh.derive(f"Chance an expert is touched ({label})", f"q_{suffix}", f"q<sub>{label}</sub>",
              f"probability that one expert gets at least one of the {label} pass's tokens (uniform routing)",
              f"1 − (1 − {{k}}/{{E}})<sup>{{{tokens_key}}}</sup>", significant, phase.expert_touch_probability)
    if t.effective_ep > 1:
        sh.leaf("z_ep", "z<sub>EP</sub>", "expected maximum of EP standard normal draws (Blom's approximation)",
                t.ep_spread_z, significant(t.ep_spread_z), "ep")
        template = (f"min({{E_dev}}, {{E_dev}}·{{q_{suffix}}} + {{z_ep}}·√({{E_dev}}·{{q_{suffix}}}·(1 − "
                    f"{{q_{suffix}}})))")
    else:
        template = f"{{E_dev}}·{{q_{suffix}}}"
    sh.derive(f"Distinct experts read ({label})", f"E_read_{suffix}", f"E<sub>read,{label}</sub>",
              f"routed experts per MoE layer the busiest device reads in one {label} pass", template, significant,
              phase.experts_touched)
    sh.derive(f"Expert weights read ({label})", f"W_e_{suffix}", f"W<sub>e,{label}</sub>",
              f"routed-expert bytes the busiest device reads per {label} pass",
              f"{{L_moe}}·{{E_read_{suffix}}}·{{N_e}}·{{p_w}}·{{EP}}/({{TP}}·{{PP}})", format_bytes,
              phase.expert_read_bytes_per_pass)
    if t.effective_ep > 1:
        sh.derive(f"Token imbalance ({label})", f"iota_{suffix}", f"ι<sub>{label}</sub>",
                  "load of the busiest expert-parallel device over the mean",
                  f"min({{EP}}, 1 + {{z_ep}}·√(({{EP}} − 1)/({{{tokens_key}}}·{{k}})))", significant,
                  phase.token_imbalance)
        return f"2·{{{tokens_key}}}·{{k}}·{{L_moe}}·{{N_e}}/({{TP}}·{{PP}})·{{iota_{suffix}}}"
    return f"2·{{{tokens_key}}}·{{k}}·{{L_moe}}·{{N_e}}/({{TP}}·{{PP}})"


@section("moe", "Mixture of experts: distinct experts read", needs=("decode",))
def moe(sh: Builder, ctx: Context) -> tuple[str, ...] | None:
    if ctx.model.moe is None:
        return None
    notes = [("FLOPs count only the k experts each token uses; weight traffic counts every expert the pass "
              "touches, so it grows with the batch until all experts are read.")]
    if ctx.trace.effective_ep > 1:
        notes.append("With EP > 1 the busiest device receives more than its share of tokens and experts: the "
                     "engine uses Blom's approximation of the expected maximum of EP draws (z<sub>EP</sub>).")
    return tuple(notes)
