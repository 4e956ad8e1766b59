"""Scaling strategies for large models: which layout fits on how many devices, and what it gives.

:func:`compare_strategies`: for one model, accelerator and workload, each strategy of
:data:`STRATEGIES` at the fewest devices (a power of two up to ``max_devices``) at which its
weights fit: devices, throughput, TTFT, ITL and its spread, pipeline idle share and the
parameter-to-compute ratio (the first paper's Sec. V, Sharma 2025). Every number is the
engine's (``Engine.evaluate``; the physics of engine/physics/reference/), with the MoE routing Monte Carlo
(``moe_routing``) supplying the spread of step times (:class:`SpreadModel`, which the EP/TP
comparison of ``parallelism.py`` uses too). :func:`scaling_table` turns the result into a
:class:`~accelscope.engine.core.table.Table` (``scaling.csv``); the paper's claims about these
layouts are checked in ``claims.py``.

How the engine sees the layouts (reference.py): tensor parallelism (tp) splits every weight
matrix and the attention heads; pipeline parallelism (pp) splits the layers into stages;
expert parallelism (ep) places whole routed experts on the tensor-parallel devices of a stage
(so ep divides tp: with ep = tp each device holds E/ep whole experts and a 1/tp slice of
attention; with ep < tp each expert is split over tp/ep devices); offloading keeps a fraction
of each device's weights in its far memory tier (host, CXL, DDR) and streams it from there.
Synthetic models (``catalog/synthetic.py``) must be known to the engine: ``Engine.with_models``.

For MoE models the step-time spread needs the routed experts' share of the step. It is taken
from the engine itself: the same scenario is evaluated on a twin of the model whose routed
experts have zero width (``<model id>~no-routed-experts``, in an engine made for the study);
the difference of the two ITLs is the expert time. Every other number is the engine's.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from ..core.model import ModelArch
from ..core.scenario import Scenario, Workload
from ..core.table import Table
from ..physics.engine import Engine
from ..physics.results import Outputs, Result, result_from_column
from .moe_routing import RoutingResult, RoutingSetup, simulate_routing, step_time_summary

STRATEGIES: tuple[str, ...] = ("tp", "pp", "ep", "offload", "tp-pp", "ep-tp", "pp-offload")
STRATEGY_LABELS: dict[str, str] = {
    "tp": "tensor parallel",
    "pp": "pipeline parallel",
    "ep": "expert parallel (experts whole, attention tensor-split)",
    "offload": "weight offload (one device, the rest in far memory)",
    "tp-pp": "tensor x pipeline (TP inside the scale-up domain, PP across)",
    "ep-tp": "expert x tensor (each expert split over 2 devices)",
    "pp-offload": "pipeline + offload",
}
MOE_ONLY: frozenset[str] = frozenset({"ep", "ep-tp"})
DEFAULT_MAX_DEVICES = 1024
# The pipeline + offload hybrid offloads what its stages cannot hold, but at most this share
# of the weights: beyond it, streaming from the far tier dominates every step and the layout
# is plain offloading on more devices.
DEFAULT_HYBRID_MAX_OFFLOAD = 0.5
TWIN_SUFFIX = "~no-routed-experts"
# Ep x TP hybrid: each expert is tensor-split over this many devices.
EXPERT_TENSOR_SPLIT = 2
# The workload when none is given: a moderate serving batch.
DEFAULT_WORKLOAD = Workload(batch=64)



@dataclass(frozen=True)
class LatencySpread:
    """Distribution of the decode step time (ITL): p50, p99, coefficient of variation and
    variance. ``modelled`` is false where the engine's schedule has no random part, and
    ``source`` says which case applies."""

    p50_s: float
    p99_s: float
    coefficient_of_variation: float
    variance_s2: float
    modelled: bool
    source: str


@dataclass(frozen=True)
class StrategyResult:
    strategy: str
    label: str
    result: Result  # the engine's typed result at the chosen layout
    spread: LatencySpread
    pipeline_idle_fraction: float  # share of decode time each stage waits: 1 − min(batch, pp)/pp
    parameter_to_compute: float  # total / active parameters per token (the model's, any layout)
    held_to_read_per_device: float  # weights held per device / weights it reads per decode pass
    found: bool  # false when no device count up to the cap fits (result is then at the cap)

    @property
    def scenario(self) -> Scenario:
        return self.result.scenario

    @property
    def devices(self) -> int:
        return self.result.devices

    @property
    def fits(self) -> bool:
        return self.result.fits

    @property
    def output_tok_s(self) -> float:
        return self.result.throughput_output_tok_s

    @property
    def output_tok_s_per_device(self) -> float:
        return self.result.throughput_output_tok_s / self.result.devices

    @property
    def ttft_s(self) -> float:
        return self.result.ttft_s

    @property
    def itl_s(self) -> float:
        return self.result.itl_s


@dataclass(frozen=True)
class ScalingComparison:
    model_id: str
    accelerator: str
    workload: Workload
    max_devices: int
    routing: str
    skew: float
    strategies: tuple[StrategyResult, ...]
    compute_seconds: float  # wall time of the comparison (kernels, packing, Monte Carlo)

    def strategy(self, name: str) -> StrategyResult:
        for entry in self.strategies:
            if entry.strategy == name:
                return entry
        raise KeyError(f"no strategy {name!r} in this comparison (have {', '.join(self.names)})")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(entry.strategy for entry in self.strategies)


# ---- device counts and layouts ---------------------------------------------------------------


def powers_of_two(limit: int) -> list[int]:
    counts = []
    n = 1
    while n <= limit:
        counts.append(n)
        n *= 2
    return counts


def _largest_power_of_two_at_most(value: float) -> int:
    return 1 << math.floor(math.log2(value)) if value >= 1 else 1


def _layout(strategy: str, n: int, model: ModelArch, domain: int) -> dict[str, int] | None:
    """The layout of ``strategy`` on ``n`` devices (offload fractions come later), or None
    where the strategy has no layout of that size."""
    if strategy in ("tp", "offload"):
        return {"tp": n} if strategy == "tp" or n == 1 else None
    if strategy == "pp":
        return {"pp": n}
    if strategy == "pp-offload":
        return {"pp": n} if n >= 2 else None  # one stage would be plain offloading
    if strategy == "ep":
        return {"tp": n, "ep": n}
    if strategy == "tp-pp":
        if n < 4:
            return None
        tp = min(n // 2, domain)
        return {"tp": tp, "pp": n // tp}
    if strategy == "ep-tp":
        if n < 2 * EXPERT_TENSOR_SPLIT:
            return None
        ep = min(n // EXPERT_TENSOR_SPLIT, _largest_power_of_two_at_most(model.moe.n_routed_experts))
        return {"tp": n, "ep": ep}
    raise ValueError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")


def _offload_fraction(out: np.ndarray, column: int, limit: float) -> float:
    """Share of weights to offload for an evaluated layout without offload: the least with
    which weights, the whole batch's KV cache, activations and runtime overhead fit the usable
    memory, no less than the engine's ``offload_needed`` (one sequence), no more than
    ``limit``; 0 where even ``limit`` cannot make one sequence fit (the layout then fails)."""
    memory = Outputs(out).memory
    weights = float(memory.weights_bytes[column])
    needed = float(Outputs(out).offload_needed[column])
    if needed < 0.0 or needed > limit or weights <= 0.0:
        return 0.0
    room = float(memory.weights_room_bytes[column])
    whole_batch = 1.0 - room / weights
    return min(limit, max(needed, whole_batch))


def check_workload(workload: Workload, max_devices: int) -> None:
    """Refuse what is not a Workload and a device count outside 1 ... 65,536."""
    if not isinstance(workload, Workload):
        raise TypeError(f"workload must be a Workload (core/scenario.py), got {type(workload).__name__}")
    if isinstance(max_devices, bool) or not isinstance(max_devices, int) or not 1 <= max_devices <= 65536:
        raise ValueError(f"max_devices must be a whole number between 1 and 65,536, got {max_devices!r}")


# ---- the routed-expert twin and the spread --------------------------------------------------


def routed_expert_free_twin(model: ModelArch) -> ModelArch:
    """The model with zero-width routed experts: everything else (routers, shared experts,
    attention, the all-to-all traffic) unchanged."""
    return replace(model, id=model.id + TWIN_SUFFIX, moe=replace(model.moe, expert_intermediate_size=0))


def with_twin(engine: Engine, model: ModelArch) -> tuple[Engine, str]:
    """An engine that also knows the model's routed-expert-free twin, and the twin's id."""
    twin = routed_expert_free_twin(model)
    return engine.with_models(twin), twin.id


def decode_micro_batch(result: Result) -> tuple[int, int]:
    """(sequences per decode micro-batch, micro-batches in flight), as the engine schedules a
    decode step: min(resident batch, pp) micro-batches."""
    resident = result.memory.resident_batch
    micro_batches = max(1, min(resident, result.scenario.pp))
    return max(1, round(resident / micro_batches)), micro_batches


NO_ROUTING_SPREAD = "none modelled: every decode step does the same work (no routing)"


def flat_spread(itl_s: float, source: str) -> LatencySpread:
    return LatencySpread(itl_s, itl_s, 0.0, 0.0, False, source)


class SpreadModel:
    """Step-time spread of MoE layouts from the routing Monte Carlo, with simulations shared
    between layouts that route the same tokens over the same devices."""

    def __init__(self, model: ModelArch, routing: str, skew: float, seed: int) -> None:
        self.model = model
        self.routing = routing
        self.skew = skew
        self.seed = seed
        self._cache: dict[tuple[int, int], RoutingResult] = {}

    def routing_result(self, tokens: int, ep: int) -> RoutingResult:
        key = (tokens, ep)
        if key not in self._cache:
            moe = self.model.moe
            self._cache[key] = simulate_routing(
                RoutingSetup(
                    n_experts=moe.n_routed_experts,
                    experts_per_token=moe.experts_per_token,
                    tokens=tokens,
                    ep=ep,
                    routing=self.routing,
                    skew=self.skew,
                    moe_layers=self.model.n_moe_layers,
                    seed=self.seed,
                )
            )
        return self._cache[key]

    def spread(self, result: Result, twin_itl_s: float) -> tuple[LatencySpread, RoutingResult]:
        tokens, _ = decode_micro_batch(result)
        ep = result.scenario.ep
        simulated = self.routing_result(tokens, ep)
        expert_time = max(0.0, result.itl_s - twin_itl_s)
        load = "tokens" if result.decode.bound == "compute" else "experts"
        steps = step_time_summary(simulated, expert_time, result.itl_s - expert_time, load=load)
        what = "assignments (compute-bound)" if load == "tokens" else "distinct experts read (memory-bound)"
        source = (
            f"routing Monte Carlo ({self.routing}{f', s = {self.skew:g}' if self.routing == 'skewed' else ''}): "
            f"{tokens} tokens per layer pass over ep = {ep}, {self.model.n_moe_layers} MoE layers per step; "
            f"the expert part ({expert_time * 1e3:.3g} ms of {result.itl_s * 1e3:.3g} ms) scales with the "
            f"busiest device's {what}"
        )
        spread = LatencySpread(
            steps.p50_s, steps.p99_s, steps.coefficient_of_variation, steps.variance_s2, True, source
        )
        return spread, simulated


# ---- strategies ------------------------------------------------------------------------------


def compare_strategies(
    engine: Engine,
    model_id: str,
    accelerator: str,
    workload: Workload | None = None,
    *,
    max_devices: int = DEFAULT_MAX_DEVICES,
    routing: str = "uniform",
    skew: float = 0.0,
    hybrid_max_offload: float = DEFAULT_HYBRID_MAX_OFFLOAD,
    seed: int = 0,
) -> ScalingComparison:
    """Each strategy at the fewest devices (1, 2, 4, ... ``max_devices``) where its weights fit.

    Strategies (:data:`STRATEGIES`; ``ep`` and ``ep-tp`` for MoE models only):
    ``tp`` tp = n; ``pp`` pp = n; ``ep`` tp = ep = n; ``offload`` one device, the least
    fraction of its weights in the far tier that lets it fit; ``tp-pp`` tp = min(n/2, the
    scale-up domain), pp = n/tp; ``ep-tp`` tp = n, ep = n/2 (at most the experts); and
    ``pp-offload`` pp = n with the least offload that fits, at most ``hybrid_max_offload``.
    A strategy that fits nowhere up to the cap is reported at its largest layout, unfitted.
    """
    started = time.perf_counter()
    workload = workload or DEFAULT_WORKLOAD
    check_workload(workload, max_devices)
    if isinstance(hybrid_max_offload, bool) or not isinstance(hybrid_max_offload, int | float) or not (
        0.0 <= hybrid_max_offload <= 1.0
    ):
        raise ValueError(f"hybrid_max_offload must be a fraction between 0 and 1, got {hybrid_max_offload!r}")
    base = engine.resolve(Scenario.from_workload(model_id, accelerator, workload))
    model = engine.model(base.model)
    names = [name for name in STRATEGIES if model.is_moe or name not in MOE_ONLY]
    picked = _pick_layouts(engine, base, model, names, max_devices, hybrid_max_offload)
    spreads: dict[int, LatencySpread] = {}
    if model.is_moe:
        results = [result for _, result, _ in picked]
        spreads = _routing_spreads(engine, model, results, SpreadModel(model, routing, skew, seed))
    rows = [_strategy_result(name, result, found, spreads.get(index), model)
            for index, (name, result, found) in enumerate(picked)]
    return ScalingComparison(
        model_id=model.id,
        accelerator=accelerator,
        workload=workload,
        max_devices=max_devices,
        routing=routing,
        skew=float(skew),
        strategies=tuple(rows),
        compute_seconds=time.perf_counter() - started,
    )


def _pick_layouts(
    engine: Engine, base: Scenario, model: ModelArch, names: list[str], max_devices: int, hybrid_max_offload: float
) -> list[tuple[str, Result, bool]]:
    """(strategy, result, found) for each strategy: its layout on the fewest devices that fits,
    or its largest layout (found false) when none up to ``max_devices`` does. Two kernel calls."""
    device = engine.catalog.accelerator(base.accelerator)
    domain = _largest_power_of_two_at_most(float(device.interconnect.domain_size))

    # Pass 1: every layout without offload (offload rows carry the engine's offload_needed).
    candidates: list[tuple[str, int, Scenario]] = []
    for name in names:
        for n in powers_of_two(max_devices):
            layout = _layout(name, n, model, domain)
            if layout is not None:
                candidates.append((name, n, base.with_changes(**layout)))
    first = engine.evaluate([scenario for _, _, scenario in candidates])

    # Pass 2: the offload layouts. The fraction offloaded is the least that holds the whole
    # batch's KV cache beside the weights (so the batch runs in one wave), at least what one
    # sequence needs (the engine's offload_needed) and at most the strategy's limit.
    second_candidates: list[tuple[str, int, Scenario]] = []
    chosen: dict[str, tuple[np.ndarray, int, Scenario]] = {}
    largest: dict[str, tuple[np.ndarray, int, Scenario]] = {}
    for column, (name, n, scenario) in enumerate(candidates):
        if name in ("offload", "pp-offload"):
            limit = 1.0 if name == "offload" else hybrid_max_offload
            fraction = _offload_fraction(first, column, limit)
            second_candidates.append((name, n, scenario.with_changes(offload=fraction)))
            continue
        largest[name] = (first, column, scenario)
        if name not in chosen and Outputs(first).fits[column]:
            chosen[name] = (first, column, scenario)
    if second_candidates:
        second = engine.evaluate([scenario for _, _, scenario in second_candidates])
        for column, (name, _, scenario) in enumerate(second_candidates):
            largest[name] = (second, column, scenario)
            if name not in chosen and Outputs(second).fits[column]:
                chosen[name] = (second, column, scenario)

    picked: list[tuple[str, Result, bool]] = []
    for name in names:
        found = name in chosen
        out, column, scenario = chosen[name] if found else largest[name]
        picked.append((name, result_from_column(out, column, scenario), found))
    return picked


def _routing_spreads(
    engine: Engine, model: ModelArch, results: list[Result], spread_model: SpreadModel
) -> dict[int, LatencySpread]:
    """The step-time spread of each fitting layout of a MoE model, by index into ``results``:
    one kernel call for the routed-expert-free twins (the expert time), then the Monte Carlo."""
    twin_engine, twin_id = with_twin(engine, model)
    twins = [result.scenario.with_changes(model=twin_id, batch=max(1, result.memory.resident_batch))
             for result in results]
    twin_itl = Outputs(twin_engine.evaluate(twins)).itl_s
    spreads: dict[int, LatencySpread] = {}
    # Expert-parallel layouts first: their simulations also answer one-device routing of the
    # same tokens (moe_routing.simulate_routing), which the other layouts ask for.
    fitting = [index for index, result in enumerate(results) if result.fits]
    for index in sorted(fitting, key=lambda i: -results[i].scenario.ep):
        spreads[index], _ = spread_model.spread(results[index], float(twin_itl[index]))
    return spreads


def _strategy_result(
    name: str, result: Result, found: bool, spread: LatencySpread | None, model: ModelArch
) -> StrategyResult:
    """One row of the comparison; without a routing spread, a flat one that says why."""
    _, micro_batches = decode_micro_batch(result)
    pp = result.scenario.pp
    idle = 1.0 - micro_batches / pp
    if spread is None:
        source = NO_ROUTING_SPREAD if not model.is_moe else "not computed: the layout does not fit"
        if pp > 1:
            source += (
                f"; the pipeline is not random but idles each stage {idle:.0%} of a decode step "
                f"({micro_batches} micro-batches over {pp} stages)"
            )
        spread = flat_spread(result.itl_s, source)
    read_per_pass = result.decode.weight_bytes_per_device / micro_batches
    return StrategyResult(
        strategy=name,
        label=STRATEGY_LABELS[name],
        result=result,
        spread=spread,
        pipeline_idle_fraction=idle,
        parameter_to_compute=model.total_params / model.active_params,
        held_to_read_per_device=result.memory.weights_bytes / read_per_pass if read_per_pass > 0 else 0.0,
        found=found,
    )


def ep_routing(model: ModelArch, comparison: ScalingComparison) -> RoutingResult | None:
    """The simulation behind the expert-parallel row's spread (None for a dense model or where
    EP does not fit). Expert parallelism runs one pipeline stage, so a decode step routes the
    resident batch at once (the engine's micro-batch); the same setup returns the cached
    simulation the spread was drawn from."""
    if not model.is_moe or "ep" not in comparison.names:
        return None
    ep = comparison.strategy("ep")
    if not (ep.found and ep.fits):
        return None
    return simulate_routing(RoutingSetup(
        n_experts=model.moe.n_routed_experts,
        experts_per_token=model.moe.experts_per_token,
        tokens=max(1, ep.result.memory.resident_batch),
        ep=ep.scenario.ep,
        routing=comparison.routing,
        skew=comparison.skew,
        moe_layers=model.n_moe_layers,
    ))


# ---- table ----------------------------------------------------------------------------------------


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def scaling_table(comparison: ScalingComparison) -> Table:
    """One row per strategy (``scaling.csv``). Performance cells are empty where the layout
    does not fit (the ``fit`` column says why)."""
    rows = []
    for entry in comparison.strategies:
        r = entry.result
        s = r.scenario
        if entry.found:
            fit = "fits" if r.waves == 1 else f"fits, KV cache in {r.waves} waves"
            performance: tuple[object, ...] = (
                r.throughput_output_tok_s,
                entry.output_tok_s_per_device,
                r.ttft_s * 1e3,
                r.itl_s * 1e3,
                entry.spread.p50_s * 1e3,
                entry.spread.p99_s * 1e3,
                entry.spread.coefficient_of_variation,
                _yes(entry.spread.modelled),
                entry.pipeline_idle_fraction,
                entry.held_to_read_per_device,
            )
        else:
            fit = f"not up to {comparison.max_devices} devices: {r.fit_reason}"
            performance = ("",) * 10
        rows.append((
            entry.strategy,
            entry.label,
            s.tp,
            s.pp,
            s.ep,
            s.offload,
            r.devices,
            _yes(entry.found),
            fit,
            *performance,
            entry.parameter_to_compute,
            entry.spread.source,
            "; ".join(r.warnings),
        ))
    headers = (
        "strategy", "description", "tp", "pp", "ep", "offload [fraction of weights]", "devices", "fits", "fit",
        "output_throughput [tokens/s, system]", "output_throughput [tokens/s per device]", "ttft [ms]", "itl [ms]",
        "itl_p50 [ms]", "itl_p99 [ms]", "itl_coefficient_of_variation [ratio]", "spread_modelled",
        "pipeline_idle [fraction of decode step]", "weights_held_over_read [ratio per device per decode pass]",
        "parameter_to_compute [total/active params]", "spread_source", "warnings",
    )
    return Table("scaling", headers, tuple(rows))
