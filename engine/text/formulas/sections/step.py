"""The decode step's time: memory and compute time of a pass, execution, overhead, host time,
and the inter-token latency."""

from __future__ import annotations

from html import escape

from ....core import codes
from ....core.units import format_time
from ...context import Context
from ..build import Builder, section
from .stage import memory_time, pass_time

# The terms of the decode bound, as the engine weighs them: the host time spread over the PP
# stage passes of a step.
_BOUND_TERMS = {"compute": "{t_c_dec}", "memory": "{t_m_dec}", "communication": "{t_comm_dec}",
                "overhead": "{t_oh_dec} + {t_host_dec}/{PP}"}


@section("step", "Decode step time", needs=("decode", "communication"))
def step(sh: Builder, ctx: Context) -> tuple[str, ...]:
    r, cls, a = ctx.result, ctx.cls, ctx.accelerator
    dec = r.decode
    memory_time(sh, ctx, "dec", "dec", "W_dec", "KV_dec")
    pass_time(sh, ctx, "dec", "dec", "KV_dec", "S_dec" if ctx.trace.recurrent_layers else "")
    sh.derive("Host time per step", "t_host_dec", "t<sub>host,dec</sub>", "the serving stack's host work of one "
              "decode step, during which the devices wait", "{tau_step} + {B_w}·{tau_seq}", format_time,
              dec.host_time_s)
    if ctx.scenario.pp > 1:
        template = "{PP}·{t_pass_dec} + ({PP} − 1)·{t_p2p_dec} + {t_host_dec}"
    else:
        template = "{t_pass_dec} + {t_host_dec}"
    sh.derive("Inter-token latency", "ITL", "ITL", "time of one decode step: every stage in turn, then the host's "
              "work", template, format_time, r.itl_s)
    notes = [(f"The largest of t<sub>c</sub>, t<sub>m</sub>, t<sub>comm</sub> and t<sub>oh</sub> + "
              f"t<sub>host</sub>/PP is {dec.bound} ({format_time(sh.evaluate(_BOUND_TERMS[dec.bound]))}): decode is "
              f"{dec.bound}-bound.")]
    if cls.operator_overlap >= 1.0:
        notes.append(f"ω = 1: the {a.architecture_class} class overlaps a pass's operators, so a pass takes "
                     "the roofline of the whole, max(t<sub>c</sub>, t<sub>m</sub>).")
    elif cls.operator_overlap <= 0.0:
        notes.append(f"ω = 0: the {a.architecture_class} class runs a pass's operators one after another, so "
                     "the linear layers (bound by weight reads or by compute) and attention (bound by the KV "
                     "cache) each take their own roofline, and their times add.")
    if dec.host_time_s <= 0.0:
        notes.append(f"The {a.architecture_class} class has no host time on the critical path "
                     "(τ<sub>step</sub> = τ<sub>seq</sub> = 0).")
    if r.warning_bits & codes.WARN_COMPUTE_FALLBACK:
        notes.append(f"{escape(a.name)} has no units for the requested format: products run at "
                     f"{r.compute_precision.upper()} (π above).")
    return tuple(notes)
