"""Step 1, the layout: how tensor (tp), pipeline (pp) and expert (ep) parallelism split a
model's heads, layers and experts, and which layouts cannot run at all.

Where a split is uneven the busiest device sets the pace: it holds ⌈h/tp⌉ of the h heads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...core import codes
from ...core.model import ModelArch
from ...core.scenario import Scenario


def head_fraction(n_heads: int, tp: int) -> float:
    """The busiest device's share of the attention heads: ⌈h/tp⌉/h."""
    return math.ceil(n_heads / tp) / n_heads


def effective_ep(model: ModelArch, ep: int) -> int:
    """Expert parallelism as it applies: a dense model has no experts to spread."""
    return ep if model.moe is not None else 1


def layout_fit_code(model: ModelArch, scenario: Scenario, has_far_tier: bool) -> int:
    """The fit code of a layout that cannot run as laid out (codes.FIT_OK if it can)."""
    s = scenario
    experts = model.moe.n_routed_experts if model.moe else 0
    if model.moe is None and s.ep > 1:
        return codes.FIT_EP_ON_DENSE_MODEL
    if s.tp % s.ep:
        return codes.FIT_EP_NOT_DIVIDING_TP
    if model.moe is not None and s.ep > experts:
        return codes.FIT_EP_EXCEEDS_EXPERTS
    if s.pp > model.n_layers:
        return codes.FIT_PP_EXCEEDS_LAYERS
    if (s.offload > 0.0 or s.kv_offload > 0.0) and not has_far_tier:
        return codes.FIT_OFFLOAD_WITHOUT_FAR_TIER
    return codes.FIT_OK


def layout_warnings(model: ModelArch, tp: int, expert_parallel: int) -> int:
    """Warning bits of an uneven split: heads over tp, KV heads fewer than tp, experts over ep."""
    warnings = 0
    if model.n_heads % tp:
        warnings |= codes.WARN_TP_UNEVEN_HEADS
    if model.mla is None and tp > model.n_kv_heads:
        warnings |= codes.WARN_KV_HEADS_REPLICATED
    if model.moe is not None and model.moe.n_routed_experts % expert_parallel:
        warnings |= codes.WARN_EP_UNEVEN_EXPERTS
    return warnings


@dataclass(frozen=True)
class Layout:
    """A scenario's parallel layout, per replica."""

    tp: int
    pp: int
    ep: int  # as requested
    dp: int
    effective_ep: int  # ep for a mixture of experts, 1 for a dense model
    layers_per_stage: float  # L/pp (a fraction where pp does not divide L)
    moe_fraction: float  # share of the layers with routed experts
    head_fraction: float  # the busiest device's share of the attention heads
    fit_code: int  # codes.FIT_OK, or why the layout cannot run
    warnings: int

    @property
    def devices_per_replica(self) -> int:
        return self.tp * self.pp

    @property
    def devices(self) -> int:
        return self.tp * self.pp * self.dp


def lay_out(model: ModelArch, scenario: Scenario, has_far_tier: bool) -> Layout:
    s = scenario
    expert_parallel = effective_ep(model, s.ep)
    return Layout(
        tp=s.tp,
        pp=s.pp,
        ep=s.ep,
        dp=s.dp,
        effective_ep=expert_parallel,
        layers_per_stage=model.n_layers / s.pp,
        moe_fraction=model.n_moe_layers / model.n_layers,
        head_fraction=head_fraction(model.n_heads, s.tp),
        fit_code=layout_fit_code(model, s, has_far_tier),
        warnings=layout_warnings(model, s.tp, expert_parallel),
    )
