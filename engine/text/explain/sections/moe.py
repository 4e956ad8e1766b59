"""A mixture of experts in decode: how many distinct experts a pass reads."""

from __future__ import annotations

from ....core.units import significant
from ..context import ExplainContext
from ..words import amount, count, sentence, tokens


def sentences(ctx: ExplainContext) -> list[str]:
    m, t = ctx.model, ctx.trace
    if m.moe is None:
        return []
    experts, top_k = m.moe.n_routed_experts, m.moe.experts_per_token
    shared = f" (plus {count(m.moe.n_shared_experts, 'shared expert')})" if m.moe.n_shared_experts else ""
    per_pass = t.decode.tokens_per_pass
    layers = (
        f"all {m.n_layers} of its layers" if m.n_moe_layers == m.n_layers
        else f"{m.n_moe_layers} of its {m.n_layers} layers"
    )
    if t.effective_ep > 1:
        spread = (
            f"; with EP {t.effective_ep} each device holds {t.experts_per_device} of them and "
            "the busiest reads a few more than its share"
        )
    else:
        spread = ""
    return [
        sentence(
            f"{m.name} is a mixture of experts: {layers} send each token to "
            f"{top_k} of {experts} routed experts{shared}"
        ),
        sentence(
            f"a pass of {tokens(per_pass)} touches about {experts} × (1 − (1 − {top_k}/{experts})^"
            f"{amount(per_pass)}) ≈ {significant(t.decode.mean_experts_touched)} distinct experts per MoE layer, and "
            f"only those are read{spread}: weight traffic grows with the batch until every expert is read, while the "
            f"FLOPs count only the {top_k} experts each token uses"
        ),
    ]
