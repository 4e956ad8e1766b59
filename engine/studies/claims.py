"""The first paper's claims (Sharma 2025), each computed and put beside the paper's number.

- :func:`claims_check`: expert parallelism's "8.4x parameter-to-compute ratio" and its "2.1x
  latency variance" against tensor parallelism, on a 1T MoE (``scaling.compare_strategies``);
- :func:`moe_like_dense_check`: a 700B MoE with 10% of its experts active "similar" to a 70B
  dense model;
- :func:`architecture_spread_check`: "up to 3.7x" between architectures, on the regimes of
  Fig. 8 (``regimes.regime_scores``);
- :func:`heterogeneous_claim_check`: "5-10x larger models at 15-30% slowdown" with a far memory
  tier, through every far tier (``tiering.sweep_offload``).

The first three give a :class:`ClaimCheck` (paper value, computed value, setup, definition,
note), as the measurement table's "computed by a study" claims expect (``validation/``); the
fourth a :class:`HeterogeneousMemoryClaim`, the claim worked through per tier for the memory
tiers tab. :func:`scaling_claims` computes what the scaling tab shows beside its numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..catalog.far_tiers import FarTierOption, load_far_tiers
from ..catalog.regimes import load_regimes
from ..catalog.synthetic import moe_1t, synthetic_model
from ..core.errors import AccelscopeError
from ..core.model import ModelArch
from ..core.scenario import Scenario, Workload
from ..physics.engine import Engine
from ..physics.reference import expert_touch_probability
from ..physics.results import Outputs
from .regimes import RegimeGrid, architecture_spreads, regime_scores, times_text
from .scaling import compare_strategies
from .tiering import (
    engine_with_far_tier,
    far_bandwidth_share_needed,
    largest_fraction_within,
    slowdown_closed_form,
    sweep_offload,
)

# The first paper's heterogeneous-memory claim (measurements.toml, s25-heterogeneous-memory-5-10x-at-15-30pct).
CLAIM_CAPACITY_MULTIPLES: tuple[float, float] = (5.0, 10.0)
CLAIM_SLOWDOWNS: tuple[float, float] = (1.15, 1.30)


# ---- expert parallelism on a 1T MoE, and a 700B MoE like a 70B dense model --------------------


@dataclass(frozen=True)
class ClaimCheck:
    """A paper's claim beside the number computed for it."""

    claim_id: str  # as in resources/measurements.toml
    statement: str
    paper_value: float
    computed_value: float
    unit: str
    setup: str
    definition: str  # what was computed, since the paper does not define it
    note: str


# The setup assumed for both claims; Sharma (Sec. V, VIII-A) states none. A trillion-parameter
# MoE of Kimi K2's shape (synthetic.moe_1t), on B200s (the accelerator the paper's scaling
# section names first), FP8 weights and activations (Kimi K2's released format), the paper's
# 1,024-token prompt with 256 generated tokens (measurements.toml workload sharma-1024) and a
# moderate serving batch of 64.
CLAIM_ACCELERATOR = "b200"
CLAIM_WORKLOAD = Workload(
    batch=64, input_len=1024, output_len=256, weight_precision="fp8", activation_precision="fp8", kv_precision="fp8"
)


def claims_check(
    engine: Engine, accelerator: str = CLAIM_ACCELERATOR, workload: Workload = CLAIM_WORKLOAD
) -> tuple[ClaimCheck, ...]:
    """Computed numbers beside Sharma 2025's "8.4x parameter-to-compute ratio" of expert
    parallelism and its "2.1x latency variance compared to tensor parallelism"."""
    model = moe_1t()
    engine = engine.with_models(model)
    comparison = compare_strategies(engine, model.id, accelerator, workload)
    ep = comparison.strategy("ep")
    tp = comparison.strategy("tp")
    variance_ratio = ep.spread.variance_s2 / tp.spread.variance_s2 if tp.spread.variance_s2 > 0 else math.inf
    setup = (
        f"{model.name} on {accelerator}, batch {workload.batch}, {workload.input_len}-token prompt, "
        f"{workload.output_len} generated, weights/activations/KV {workload.weight_precision}/"
        f"{workload.activation_precision}/{workload.kv_precision}; EP at tp = ep = {ep.scenario.tp}, "
        f"TP at tp = {tp.scenario.tp} (the fewest devices that hold the weights); uniform routing"
    )
    ratios = sorted(
        (m.total_params / m.active_params, m.id) for m in engine.catalog.models.values() if m.is_moe
    )
    catalog_ratios = ", ".join(f"{model_id} {value:.1f}x" for value, model_id in ratios)
    below = [model_id for value, model_id in ratios if value <= 8.4]
    above = [model_id for value, model_id in ratios if value > 8.4]
    bracket = (
        f"; 8.4x lies between {below[-1]} and {above[0]}" if below and above else ""
    )
    std_ratio = math.sqrt(variance_ratio) if math.isfinite(variance_ratio) else math.inf
    return (
        ClaimCheck(
            claim_id="s25-ep-parameter-to-compute-8.4x",
            statement="Expert parallelism gives the best parameter-to-compute ratio, 8.4x.",
            paper_value=8.4,
            computed_value=ep.parameter_to_compute,
            unit="x",
            setup=setup,
            definition=(
                "total parameters / parameters used per token. Per device under EP the ratio of "
                f"weights held to weights read per decode pass is {ep.held_to_read_per_device:.2f}x "
                f"(TP: {tp.held_to_read_per_device:.2f}x): the MoE's unused experts sit in memory"
            ),
            note=(
                "The paper defines neither the ratio nor the model; the ratio is a property of the MoE "
                "model, not of expert parallelism (TP of the same model has the same ratio). Catalog MoE "
                f"models: {catalog_ratios}{bracket}."
            ),
        ),
        ClaimCheck(
            claim_id="s25-ep-latency-variance-2.1x",
            statement="Expert parallelism has 2.1x the latency variance of tensor parallelism.",
            paper_value=2.1,
            computed_value=variance_ratio,
            unit="x",
            setup=setup,
            definition=(
                "variance of the decode step time under EP over that under TP, both from the routing "
                f"Monte Carlo; standard deviations {std_ratio:.2f}x (EP: CV {ep.spread.coefficient_of_variation:.4f}, p99/p50 "
                f"{ep.spread.p99_s / ep.spread.p50_s:.4f}; TP: CV {tp.spread.coefficient_of_variation:.4f}, "
                f"p99/p50 {tp.spread.p99_s / tp.spread.p50_s:.4f})"
            ),
            note=(
                "TP of a MoE model varies too, with the distinct experts a step reads; EP adds the busiest "
                "device's share. Both spreads are small relative to the mean because a step sums "
                f"{model.n_moe_layers} independently routed layers; the paper's figure states no setup."
            ),
        ),
    )


# Sharma 2025, Sec. V-C: "a 70B dense model can be scaled to a 700B MoE model with similar latency
# and throughput characteristics if only 10% of experts are activated per token". The shape is
# Llama 3 70B's (80 layers, hidden 8192); the MoE routes each token to 8 of 80 experts.
MOE_LIKE_DENSE_LAYERS = 80
MOE_LIKE_DENSE_HIDDEN = 8192
MOE_LIKE_DENSE_EXPERTS = 80
MOE_LIKE_DENSE_EXPERTS_PER_TOKEN = 8


def moe_like_dense_models() -> tuple[ModelArch, ModelArch]:
    """(the 70B dense model, the 700B MoE with 10% of its experts active per token), of one shape.

    The MoE's attention, embeddings and routers are used by every token; of its experts 8 of 80
    are. Its parameters per token are therefore fixed + 10% of the experts (~84B, not 70B)."""
    layers, hidden = MOE_LIKE_DENSE_LAYERS, MOE_LIKE_DENSE_HIDDEN
    experts, per_token = MOE_LIKE_DENSE_EXPERTS, MOE_LIKE_DENSE_EXPERTS_PER_TOKEN
    dense = synthetic_model(70e9, n_layers=layers, hidden_size=hidden)
    # What every token uses whatever the FFN: the dense model less its FFN, plus the MoE's routers.
    fixed = dense.total_params - 3 * hidden * layers * dense.intermediate_size + layers * hidden * experts
    total = 700e9
    active = (fixed * (experts - per_token) + per_token * total) / experts
    moe = synthetic_model(total, active_params=active, n_experts=experts, experts_per_token=per_token,
                          n_layers=layers, hidden_size=hidden)
    return dense, moe


def moe_like_dense_check(
    engine: Engine, accelerator: str = CLAIM_ACCELERATOR, workload: Workload = CLAIM_WORKLOAD
) -> ClaimCheck:
    """Sharma 2025's 700B MoE "with similar latency and throughput" to a 70B dense model, computed:
    both under tensor parallelism on the fewest devices that hold the MoE (so that each device's
    share is compared, not the device count), at batch 1 and at the workload's batch. The claimed
    1x is compared with the MoE's ITL over the dense model's at the workload's batch."""
    models = moe_like_dense_models()
    engine = engine.with_models(*models)
    dense, moe = models
    b = workload.batch
    tp = compare_strategies(engine, moe.id, accelerator, workload).strategy("tp").scenario.tp
    results = {
        (model.id, batch): engine.predict(Scenario.from_workload(model.id, accelerator, workload, tp=tp).with_changes(batch=batch))
        for model in models
        for batch in sorted({1, b})
    }
    itl_one = results[moe.id, 1].itl_s / results[dense.id, 1].itl_s
    itl_batch = results[moe.id, b].itl_s / results[dense.id, b].itl_s
    throughput = results[moe.id, b].throughput_output_tok_s / results[dense.id, b].throughput_output_tok_s
    read_one = results[moe.id, 1].decode.weight_bytes_per_device / results[dense.id, 1].decode.weight_bytes_per_device
    read_batch = results[moe.id, b].decode.weight_bytes_per_device / results[dense.id, b].decode.weight_bytes_per_device
    touched = expert_touch_probability(MOE_LIKE_DENSE_EXPERTS_PER_TOKEN, MOE_LIKE_DENSE_EXPERTS, b)
    return ClaimCheck(
        claim_id="s25-ep-moe-700b-like-70b",
        statement="A 700B MoE with 10% of experts active has latency and throughput similar to a 70B dense model.",
        paper_value=1.0,
        computed_value=itl_batch,
        unit="x",
        setup=(
            f"{moe.name}, {moe.active_params / 1e9:.0f}B used per token, against {dense.name}, both on {tp} "
            f"{accelerator} with TP={tp} (the fewest that hold the MoE), {workload.input_len}-token prompt, "
            f"{workload.output_len} generated, weights/activations/KV {workload.weight_precision}/"
            f"{workload.activation_precision}/{workload.kv_precision}"
        ),
        definition=f"the MoE's inter-token latency over the dense model's at batch {b}",
        note=(
            f"At batch 1 the ratio is {itl_one:.2f}x: a token reads only its 8 experts, {read_one:.2f}x the "
            f"dense model's weight bytes, and the claim holds. At batch {b} the batch touches {touched:.0%} of "
            f"the experts in every layer, so a step reads {read_batch:.1f}x the dense model's weight bytes: "
            f"{itl_batch:.2f}x its inter-token latency and {throughput:.2f}x its output tokens per second. The "
            "paper states neither device nor batch; its 'similar' holds only while a batch touches few experts."
        ),
    )


# ---- architectures across the regimes ---------------------------------------------------------


def architecture_spread_check(engine: Engine, grid: RegimeGrid | None = None) -> ClaimCheck:
    """Sharma 2025's "performance variations of up to 3.7x between architectures depending on
    workload characteristics" (Abstract, Sec. VIII-A), computed on its Fig. 8: the seven
    accelerators it grades, on the regimes of ``resources/regimes.toml``. The paper defines
    neither the measure nor the workloads; here the measure is, per regime, the best
    accelerator's value over the worst's, and the claim's "up to" the largest over the regimes."""
    definitions = load_regimes()
    graded = tuple(definitions.paper_ratings)
    if grid is None or not set(graded) <= set(grid.accelerators):
        grid = regime_scores(engine, graded, definitions)
    spreads = architecture_spreads(grid, graded)
    largest = max(spreads, key=lambda spread: spread.ratio)
    smallest = min(spreads, key=lambda spread: spread.ratio)
    names = {regime.id: regime.name for regime in grid.regimes}
    listed = "; ".join(f"{names[s.regime]} {times_text(s.ratio)} ({s.best} over {s.worst})" for s in spreads)
    median = float(np.median([s.ratio for s in spreads]))
    return ClaimCheck(
        claim_id="s25-architecture-spread-3.7x",
        statement="Performance varies by up to 3.7x between architectures across the operational regimes.",
        paper_value=3.7,
        computed_value=largest.ratio,
        unit="x",
        setup=(
            f"Fig. 8's {len(graded)} graded accelerators ({', '.join(graded)}) on the {len(spreads)} regimes "
            "of resources/regimes.toml that at least two of them run, each regime's model, workload, layout "
            "and metric as stated there"
        ),
        definition=(
            "per regime, the best accelerator's value over the worst's in the regime's own metric (per device "
            "where the metric is per device), among those that run it; the largest over the regimes"
        ),
        note=(
            f"Per regime: {listed}. Median over the regimes {times_text(median)}, smallest "
            f"{times_text(smallest.ratio)} ({names[smallest.regime]}). Per-device metrics set one chip (a 230 MB Groq LPU) against a whole "
            "wafer-scale system, so the spreads they give run to hundreds and thousands; the per-system, "
            "latency-bound regime comes nearest the paper's 3.7x, which names neither its measure nor its "
            "workloads."
        ),
    )


# ---- heterogeneous memory ---------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimTier:
    """One far tier against the claim."""

    tier: FarTierOption
    bandwidth_ratio: float  # sustained near / far
    far_bandwidth_Bps: float  # sustained
    engine_slowdown: np.ndarray  # ITL slowdown [claim fraction, batch], from the engine
    closed_form_slowdown: np.ndarray  # [claim fraction]
    largest_fraction: float  # offloaded share within the claim's upper slowdown (closed form)
    capacity_multiple_within: float  # 1 / (1 − largest_fraction): model size the slowdown allows
    capacity_multiple_with_tier: float  # what the tier's capacity allows, slowdown aside
    holds: bool  # the engine's slowdown stays within the claim at a claimed fraction


@dataclass(frozen=True)
class HeterogeneousMemoryClaim:
    """The claim worked through every far tier: what the engine and the closed form give at
    the claimed fractions, and what each tier would need."""

    model: str
    accelerator: str
    batches: tuple[int, ...]
    capacity_multiples: tuple[float, ...]  # the claim's 5x and 10x
    fractions: tuple[float, ...]  # 1 − 1/multiple: 0.8 and 0.9
    slowdowns: tuple[float, ...]  # the claim's 1.15 and 1.30
    near_bandwidth_Bps: float  # sustained
    far_share_needed: np.ndarray  # B_far / B_near needed [fraction, slowdown]
    tiers: tuple[ClaimTier, ...]
    sentence: str


def heterogeneous_claim_check(
    engine: Engine,
    model: str = "llama-3.1-8b",
    accelerator: str = "h100-sxm",
    tiers: Sequence[FarTierOption] | None = None,
    batches: Sequence[int] = (1, 64),
    capacity_multiples: Sequence[float] = CLAIM_CAPACITY_MULTIPLES,
    slowdowns: Sequence[float] = CLAIM_SLOWDOWNS,
    input_len: int = 1024,
    output_len: int = 256,
) -> HeterogeneousMemoryClaim:
    """Sharma 2025, Sec. VII-A: "5-10x larger models ... with only 15-30% performance
    degradation". A model m times larger than device memory holds keeps f = 1 − 1/m of its
    weights in the far tier (80% at 5x, 90% at 10x). For every far tier, the decode slowdown
    at those fractions (engine, BF16 by default as in measurements.toml's setup) against the same
    model all in device memory, the closed form (1 − f) + f·r, the far/near bandwidth share the
    claim needs, and the largest fraction (and model-size multiple) each tier allows within it."""
    tiers = tuple(tiers) if tiers is not None else tuple(load_far_tiers().values())
    multiples = tuple(float(m) for m in capacity_multiples)
    if not multiples or any(m <= 1.0 for m in multiples):
        raise ValueError("capacity_multiples must be larger than 1 (a model larger than device memory holds)")
    fractions = tuple(1.0 - 1.0 / m for m in multiples)
    slowdowns = tuple(float(s) for s in slowdowns)
    if not slowdowns or any(s <= 1.0 for s in slowdowns):
        raise ValueError("slowdowns must be larger than 1 (1.3 = 30% slower)")
    scenarios = [Scenario(model, accelerator, batch=batch, input_len=input_len, output_len=output_len)
                 for batch in batches]
    near = 0.0
    rows = []
    for tier in tiers:
        row, near = _claim_tier(engine, scenarios, tier, fractions, max(slowdowns))
        rows.append(row)
    needed = np.array([[far_bandwidth_share_needed(f, s) for s in slowdowns] for f in fractions])
    check = HeterogeneousMemoryClaim(
        model=model,
        accelerator=accelerator,
        batches=tuple(batches),
        capacity_multiples=multiples,
        fractions=fractions,
        slowdowns=slowdowns,
        near_bandwidth_Bps=near,
        far_share_needed=needed,
        tiers=tuple(rows),
        sentence="",
    )
    return replace(check, sentence=_claim_sentence(check, engine.catalog.accelerator(accelerator).name))


def _claim_tier(
    engine: Engine, scenarios: list[Scenario], tier: FarTierOption, fractions: tuple[float, ...], high: float
) -> tuple[ClaimTier, float]:
    """One far tier against the claim, at each scenario's batch; and the sustained near
    bandwidth the slowdowns are against."""
    per_batch = []
    sweep = None
    for scenario in scenarios:
        sweep = sweep_offload(engine, scenario, tier, weight_fractions=fractions, kv_fractions=(0.0,))
        per_batch.append(sweep.itl_slowdown[:, 0])
    assert sweep is not None
    ratio = sweep.bandwidth_ratio
    engine_slowdown = np.stack(per_batch, axis=1)
    largest = largest_fraction_within(high, ratio)
    row = ClaimTier(
        tier=tier,
        bandwidth_ratio=ratio,
        far_bandwidth_Bps=sweep.far_bandwidth_Bps,
        engine_slowdown=engine_slowdown,
        closed_form_slowdown=np.array([slowdown_closed_form(f, ratio) for f in fractions]),
        largest_fraction=largest,
        capacity_multiple_within=1.0 / (1.0 - largest) if largest < 1.0 else math.inf,
        capacity_multiple_with_tier=sweep.largest.capacity_multiple,
        holds=bool(np.any(engine_slowdown <= high)),
    )
    return row, sweep.near_bandwidth_Bps


def _claim_sentence(check: HeterogeneousMemoryClaim, accelerator_name: str) -> str:
    low_f, high_f = min(check.fractions), max(check.fractions)
    high_s = max(check.slowdowns)
    share_low = far_bandwidth_share_needed(low_f, high_s)
    share_high = far_bandwidth_share_needed(high_f, high_s)
    best = max(check.tiers, key=lambda row: row.far_bandwidth_Bps)
    worst_engine = [float(row.engine_slowdown.min()) for row in check.tiers]
    multiples = "-".join(f"{m:g}" for m in check.capacity_multiples)
    holding = [row.tier.name for row in check.tiers if row.holds]
    if holding:
        verdict = f"The claim holds with {', '.join(holding)}."
    else:
        verdict = (
            "The claim does not hold for any listed tier; it can hold only where the offloaded bytes are rarely "
            "read (cold experts of a mixture-of-experts model, prefetch hidden behind compute at large batch)."
        )
    return (
        f"A model {multiples}x larger than the {accelerator_name}'s memory holds keeps {low_f:.0%}-{high_f:.0%} of its "
        f"weights in the far tier; dense decode reads them all every token, so the step is (1 - f) + f x "
        f"(near/far bandwidth) times longer. Within {high_s - 1:.0%} that needs a far tier sustaining "
        f"{share_low:.0%}-{share_high:.0%} of device-memory bandwidth "
        f"({share_low * check.near_bandwidth_Bps / 1e12:.2f}-{share_high * check.near_bandwidth_Bps / 1e12:.2f} TB/s "
        f"here). The fastest listed tier, {best.tier.name}, sustains {best.far_bandwidth_Bps / 1e9:.0f} GB/s "
        f"(1/{best.bandwidth_ratio:.1f} of it): the engine computes at least a {min(worst_engine):.2f}x slowdown "
        f"at {low_f:.0%}-{high_f:.0%}, and {high_s - 1:.0%} allows {best.largest_fraction:.1%} of the weights offloaded "
        f"({best.capacity_multiple_within:.2f}x the model size). {verdict}"
    )


# ---- what the scaling tab shows -------------------------------------------------------------------


@dataclass(frozen=True)
class ScalingClaims:
    """The claims beside the scaling tab's numbers; each computed on its own, so that one
    failing does not hide the other (its problem says why)."""

    expert_parallel: tuple[ClaimCheck, ...]  # claims_check; () when it failed
    expert_parallel_problem: str
    moe_like_dense: ClaimCheck | None  # moe_like_dense_check; None when it failed
    moe_like_dense_problem: str


def scaling_claims(engine: Engine) -> ScalingClaims:
    """:func:`claims_check` and :func:`moe_like_dense_check`, on their fixed setups."""
    expert_parallel, expert_parallel_problem = (), ""
    moe_like_dense, moe_like_dense_problem = None, ""
    try:
        expert_parallel = claims_check(engine)
    except (ValueError, AccelscopeError) as error:
        expert_parallel_problem = str(error)
    try:
        moe_like_dense = moe_like_dense_check(engine)
    except (ValueError, AccelscopeError) as error:
        moe_like_dense_problem = str(error)
    return ScalingClaims(expert_parallel, expert_parallel_problem, moe_like_dense, moe_like_dense_problem)


# ---- memory-compute disaggregation: 22% lower TCO ------------------------------------------------

# Sharma 2025, Sec. VII-E: "ROI analysis indicates a 22% lower TCO despite higher initial
# implementation costs", for memory pooled over CXL against fixed compute-to-memory ratios. The
# paper states no workload, device or prices. Here: Llama 3.3 70B in BF16 on H100s (the price
# book's rental prices them), the memory pool a CXL 2.0 x16 expander (far_tiers.toml), and three
# workloads that load memory differently.
DISAGGREGATION_CLAIM_PERCENT = 22.0
DISAGGREGATION_MODEL = "llama-3.3-70b"
DISAGGREGATION_ACCELERATOR = "h100-sxm"
DISAGGREGATION_TIER = "cxl2-expander-x16"
DISAGGREGATION_WORKLOADS: tuple[tuple[str, Workload], ...] = (
    ("chat (64 x 2,048 in, 512 out)", Workload(batch=64, input_len=2048, output_len=512)),
    ("long context (32 x 8,192 in, 1,024 out)", Workload(batch=32, input_len=8192, output_len=1024)),
    ("prefill only (32 x 8,192 in, 1 out)", Workload(batch=32, input_len=8192, output_len=1)),
)
FIXED_TP: tuple[int, ...] = (1, 2, 4, 8)  # the fixed-ratio deployments: more devices for more memory
POOLED_TP: tuple[int, ...] = (1, 2, 4)  # the pooled ones: fewer devices, the rest of the bytes in the pool
POOL_SHARES: tuple[float, ...] = tuple(i / 10 for i in range(11))  # weights and KV cache in the pool
HOURS_PER_MONTH = 730.0


@dataclass(frozen=True)
class Deployment:
    """One layout of one workload: its devices and what they sustain (input + output tokens)."""

    tp: int
    offload: float  # share of the weights in the pool
    kv_offload: float  # share of the KV cache in the pool
    devices: int
    tokens_per_s: float  # input + output, whole deployment
    pool_bytes: float  # held in the pool, all devices
    waves: int

    @property
    def tokens_per_device_s(self) -> float:
        return self.tokens_per_s / self.devices


@dataclass(frozen=True)
class DisaggregationCase:
    """A workload's cheapest fixed-ratio deployment against its cheapest pooled one."""

    name: str
    workload: Workload
    fixed: Deployment | None  # None: no layout holds the weights
    pooled: Deployment | None  # None: no layout with the pool holds the batch at once
    device_usd_per_hour: float  # the price used for the break-even (the book's rent)

    @property
    def cost_ratio(self) -> float:
        """Pooled over fixed cost per token with the pool free: device-hours per token, since
        both run on the same device at the same price."""
        if self.fixed is None or self.pooled is None:
            return math.nan
        return self.fixed.tokens_per_device_s / self.pooled.tokens_per_device_s

    @property
    def saving_percent(self) -> float:
        return 100.0 * (1.0 - self.cost_ratio)

    def pool_break_even_usd_per_gb_month(self, saving_percent: float = DISAGGREGATION_CLAIM_PERCENT) -> float:
        """The most the pool may cost (per GB it holds, per month) for the pooled deployment to
        cost ``saving_percent`` less per token than the fixed one; negative: no price can."""
        if self.fixed is None or self.pooled is None or self.pooled.pool_bytes <= 0:
            return math.nan
        fixed_per_token = self.device_usd_per_hour * self.fixed.devices / self.fixed.tokens_per_s
        allowed_per_hour = (1.0 - saving_percent / 100.0) * fixed_per_token * self.pooled.tokens_per_s
        pool_per_hour = allowed_per_hour - self.device_usd_per_hour * self.pooled.devices
        return pool_per_hour / (self.pooled.pool_bytes / 1e9) * HOURS_PER_MONTH


def disaggregation_cases(engine: Engine) -> tuple[DisaggregationCase, ...]:
    """Each workload's cheapest fixed-ratio deployment (TP 1-8, all in device memory, in waves
    where its KV cache does not fit at once) against its cheapest pooled one (TP 1-4, any share
    of the weights and KV cache in the CXL pool, the whole batch at once), by device-hours per
    token. Both are static batches, as ``predict`` runs them."""
    tier = load_far_tiers()[DISAGGREGATION_TIER]
    pooled_engine, pooled_id = engine_with_far_tier(engine, DISAGGREGATION_ACCELERATOR, tier)
    rent = engine.catalog.prices.of(DISAGGREGATION_ACCELERATOR).rental
    cases = []
    for name, workload in DISAGGREGATION_WORKLOADS:
        fixed = [Scenario.from_workload(DISAGGREGATION_MODEL, DISAGGREGATION_ACCELERATOR, workload, tp=tp)
                 for tp in FIXED_TP]
        pooled = [Scenario.from_workload(DISAGGREGATION_MODEL, pooled_id, workload, tp=tp, offload=weights,
                                         kv_offload=kv)
                  for tp in POOLED_TP for weights in POOL_SHARES for kv in POOL_SHARES if weights or kv]
        cases.append(DisaggregationCase(
            name=name,
            workload=workload,
            fixed=_cheapest(engine, fixed, all_at_once=False),
            pooled=_cheapest(pooled_engine, pooled, all_at_once=True),
            device_usd_per_hour=float(rent.value) if rent is not None else math.nan,
        ))
    return tuple(cases)


def _cheapest(engine: Engine, scenarios: list[Scenario], *, all_at_once: bool) -> Deployment | None:
    """The deployment with the most tokens per device-second among those that fit (and, with
    ``all_at_once``, hold the whole batch in one wave)."""
    outputs = Outputs(engine.evaluate(scenarios))
    usable = outputs.fits & ((outputs.waves == 1) if all_at_once else True)
    per_device = np.where(usable, outputs.throughput_total_tok_s / outputs.devices, -np.inf)
    best = int(np.argmax(per_device))
    if not np.isfinite(per_device[best]):
        return None
    s, column = scenarios[best], outputs[best]
    pool = float(column.memory.far_bytes) * float(column.devices)
    return Deployment(s.tp, s.offload, s.kv_offload, int(column.devices), float(column.throughput_total_tok_s),
                      pool if s.offload or s.kv_offload else 0.0, int(column.waves))


def disaggregation_tco_check(engine: Engine) -> ClaimCheck:
    """Sharma 2025's "22% lower TCO" of memory-compute disaggregation, computed where the engine
    can: the most a CXL memory pool saves per token on any of three workloads, with the pool
    itself free (so the saving is an upper bound), and what the pool could cost for the saving
    to reach 22%."""
    cases = disaggregation_cases(engine)
    best = max((case for case in cases if math.isfinite(case.cost_ratio)), key=lambda case: case.saving_percent)

    def layout(deployment: Deployment | None) -> str:
        if deployment is None:
            return "none fits"
        pool = ""
        if deployment.pool_bytes:
            pool = (f", {deployment.offload:.0%} of the weights and {deployment.kv_offload:.0%} of the KV cache in "
                    f"the pool ({deployment.pool_bytes / 1e9:,.0f} GB)")
        waves = f", {deployment.waves} waves" if deployment.waves > 1 else ""
        return f"TP {deployment.tp}{pool}{waves}: {deployment.tokens_per_device_s:,.0f} tokens/s per device"

    def break_even(case: DisaggregationCase) -> str:
        price = case.pool_break_even_usd_per_gb_month()
        if not math.isfinite(price):
            return ""
        if price <= 0:
            return "; no pool price reaches 22%"
        return f"; 22% needs the pool at most ${price:.3g} per GB-month"

    def saving(case: DisaggregationCase) -> str:
        if not math.isfinite(case.cost_ratio):
            return "not comparable"
        return (f"the pool saves {case.saving_percent:.0f}% per token" if case.saving_percent >= 0
                else f"the pool costs {-case.saving_percent:.0f}% more per token")

    per_case = "; ".join(
        f"{case.name}: fixed {layout(case.fixed)}, pooled {layout(case.pooled)}, {saving(case)}{break_even(case)}"
        for case in cases
    )
    return ClaimCheck(
        claim_id="s25-disaggregation-tco-22pct",
        statement="Memory-compute disaggregation lowers the total cost of ownership by 22%.",
        paper_value=DISAGGREGATION_CLAIM_PERCENT,
        computed_value=best.saving_percent,
        unit="%",
        setup=(
            f"{DISAGGREGATION_MODEL} in BF16 on {DISAGGREGATION_ACCELERATOR}: the cheapest fixed-ratio layout "
            f"(TP {', '.join(map(str, FIXED_TP))}, everything in device memory, in waves where the KV cache does not "
            f"fit) against the cheapest with a {DISAGGREGATION_TIER} memory pool (TP {', '.join(map(str, POOLED_TP))}, "
            "0-100% of the weights and of the KV cache in the pool, the batch at once), by device-hours per "
            "million input+output tokens, the pool free"
        ),
        definition=(
            "the largest saving over the workloads: (1 - pooled / fixed cost per token) x 100, the same device "
            "at the same price in both, so that the ratio is the device-hours per token; the break-even pool "
            f"price takes the price book's ${best.device_usd_per_hour:g} per H100-hour"
        ),
        note=(
            f"Per workload: {per_case}. The engine reads every byte placed in the pool at every step, as decode "
            "does: a pool pays only where compute hides its reads (long prefills). The paper's figure is about "
            "a cluster whose memory is pooled across mixed workloads, so that capacity stranded on one machine "
            "serves another; that needs a model of cluster scheduling, and prices for CXL memory, switches and "
            "software, none of which the engine or the price book has."
        ),
    )
