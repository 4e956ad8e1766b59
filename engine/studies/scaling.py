"""Scaling strategies for large models: which layout fits on how many devices, and what it gives.

Three comparisons, all computed by the engine (``Engine.evaluate``; the physics of DESIGN.md
§4), with the MoE routing Monte Carlo (``moe_routing``) supplying the spread of step times:

- :func:`compare_strategies`: for one model, accelerator and workload, each strategy of
  :data:`STRATEGIES` at the fewest devices (a power of two up to ``max_devices``) at which its
  weights fit: devices, throughput, TTFT, ITL and its spread, pipeline idle share and the
  parameter-to-compute ratio (the first paper's Sec. V, Sharma 2025).
- :func:`tp_dp_grid`: a fixed device budget split into tensor-parallel groups of TP devices
  and DP = budget / TP replicas, for several models (the second paper's Fig. 4, Brunetta et
  al. 2025), marking where TP beats DP because the DP layout's memory is too small.
- :func:`ep_vs_tp`: a MoE model on a few devices under expert parallelism and under tensor
  parallelism across batch sizes, with the numbers behind the gap (Brunetta Fig. 6).

:func:`claims_check` puts computed numbers beside the first paper's "8.4x parameter-to-compute
ratio" and "2.1x latency variance" claims, and the ``*_table`` functions turn each result into
a :class:`~accelscope.engine.core.table.Table` (``scaling.csv``, ``tp_dp.csv``, ``ep_tp.csv``).

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
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..catalog.synthetic import moe_1t, synthetic_model
from ..core import codes
from ..core.model import ModelArch
from ..core.precision import bytes_per_element
from ..core.scenario import Scenario
from ..core.table import Table
from ..physics.engine import Engine
from ..physics.reference import tensor_parallel_all_reduce, token_imbalance
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
# Brunetta et al. 2025, Sec. III-B2: "To maintain a constant sequences-per-GPU ratio, we set
# the batch size to T x 128" for the TP/DP study (Fig. 4).
FIG4_SEQUENCES_PER_DEVICE = 128
TWIN_SUFFIX = "~no-routed-experts"
# Ep x TP hybrid: each expert is tensor-split over this many devices.
EXPERT_TENSOR_SPLIT = 2


@dataclass(frozen=True)
class Workload:
    """What is served: a static batch of prompts and the three precisions (scenario.py)."""

    batch: int = 64
    input_len: int = 1024
    output_len: int = 256
    weight_precision: str = "bf16"
    activation_precision: str = "bf16"
    kv_precision: str = "bf16"

    def scenario(self, model: str, accelerator: str, **layout: object) -> Scenario:
        return Scenario(
            model=model,
            accelerator=accelerator,
            batch=self.batch,
            input_len=self.input_len,
            output_len=self.output_len,
            weight_precision=self.weight_precision,
            activation_precision=self.activation_precision,
            kv_precision=self.kv_precision,
            **layout,
        )


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


def _powers_of_two(limit: int) -> list[int]:
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
    weights = float(Outputs(out).memory.weights_bytes[column])
    needed = float(Outputs(out).offload_needed[column])
    if needed < 0.0 or needed > limit or weights <= 0.0:
        return 0.0
    room = float(Outputs(out).memory.usable_bytes[column] - Outputs(out).memory.kv_cache_bytes[column] - Outputs(out).memory.activation_bytes[column] - Outputs(out).memory.overhead_bytes[column])
    whole_batch = 1.0 - room / weights
    return min(limit, max(needed, whole_batch))


def _check_common(workload: Workload, max_devices: int) -> None:
    if not isinstance(workload, Workload):
        raise TypeError(f"workload must be a scaling.Workload, got {type(workload).__name__}")
    if isinstance(max_devices, bool) or not isinstance(max_devices, int) or not 1 <= max_devices <= 65536:
        raise ValueError(f"max_devices must be a whole number between 1 and 65,536, got {max_devices!r}")


# ---- the routed-expert twin and the spread --------------------------------------------------


def routed_expert_free_twin(model: ModelArch) -> ModelArch:
    """The model with zero-width routed experts: everything else (routers, shared experts,
    attention, the all-to-all traffic) unchanged."""
    return replace(model, id=model.id + TWIN_SUFFIX, moe=replace(model.moe, expert_intermediate_size=0))


def _with_twin(engine: Engine, model: ModelArch) -> tuple[Engine, str]:
    """An engine that also knows the model's routed-expert-free twin, and the twin's id."""
    twin = routed_expert_free_twin(model)
    return engine.with_models(twin), twin.id


def _decode_micro_batch(result: Result) -> tuple[int, int]:
    """(sequences per decode micro-batch, micro-batches in flight), as the engine schedules a
    decode step: min(resident batch, pp) micro-batches."""
    resident = result.memory.resident_batch
    micro_batches = max(1, min(resident, result.scenario.pp))
    return max(1, round(resident / micro_batches)), micro_batches


NO_ROUTING_SPREAD = "none modelled: every decode step does the same work (no routing)"


def _flat_spread(itl_s: float, source: str) -> LatencySpread:
    return LatencySpread(itl_s, itl_s, 0.0, 0.0, False, source)


class _SpreadModel:
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
        tokens, _ = _decode_micro_batch(result)
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
    workload = workload or Workload()
    _check_common(workload, max_devices)
    if isinstance(hybrid_max_offload, bool) or not isinstance(hybrid_max_offload, int | float) or not (
        0.0 <= hybrid_max_offload <= 1.0
    ):
        raise ValueError(f"hybrid_max_offload must be a fraction between 0 and 1, got {hybrid_max_offload!r}")
    base = engine.resolve(workload.scenario(model_id, accelerator))
    model = engine.model(base.model)
    device = engine.catalog.accelerator(accelerator)
    domain = _largest_power_of_two_at_most(float(device.interconnect.domain_size))
    names = [name for name in STRATEGIES if model.is_moe or name not in MOE_ONLY]
    counts = _powers_of_two(max_devices)

    # Pass 1: every layout without offload (offload rows carry the engine's offload_needed).
    candidates: list[tuple[str, int, Scenario]] = []
    for name in names:
        for n in counts:
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

    # Pass 3 (MoE): the routed-expert-free twin of each picked layout, for the expert time.
    twin_itl: list[float] = []
    if model.is_moe:
        twin_engine, twin_id = _with_twin(engine, model)
        twins = [
            result.scenario.with_changes(model=twin_id, batch=max(1, result.memory.resident_batch))
            for _, result, _ in picked
        ]
        twin_out = twin_engine.evaluate(twins)
        twin_itl = [float(Outputs(twin_out).itl_s[j]) for j in range(len(twins))]

    spreads: dict[int, LatencySpread] = {}
    if model.is_moe:
        spread_model = _SpreadModel(model, routing, skew, seed)
        # Expert-parallel layouts first: their simulations also answer one-device routing of
        # the same tokens (moe_routing.simulate_routing), which the other layouts ask for.
        fitting = [index for index, (_, result, _) in enumerate(picked) if result.fits]
        for index in sorted(fitting, key=lambda i: -picked[i][1].scenario.ep):
            spreads[index], _ = spread_model.spread(picked[index][1], twin_itl[index])
    rows: list[StrategyResult] = []
    for index, (name, result, found) in enumerate(picked):
        _, micro_batches = _decode_micro_batch(result)
        pp = result.scenario.pp
        idle = 1.0 - micro_batches / pp
        if index in spreads:
            spread = spreads[index]
        else:
            source = NO_ROUTING_SPREAD if not model.is_moe else "not computed: the layout does not fit"
            if pp > 1:
                source += (
                    f"; the pipeline is not random but idles each stage {idle:.0%} of a decode step "
                    f"({micro_batches} micro-batches over {pp} stages)"
                )
            spread = _flat_spread(result.itl_s, source)
        read_per_pass = result.decode.weight_bytes_per_device / micro_batches
        rows.append(
            StrategyResult(
                strategy=name,
                label=STRATEGY_LABELS[name],
                result=result,
                spread=spread,
                pipeline_idle_fraction=idle,
                parameter_to_compute=model.total_params / model.active_params,
                held_to_read_per_device=result.memory.weights_bytes / read_per_pass if read_per_pass > 0 else 0.0,
                found=found,
            )
        )
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


# ---- TP vs DP on a device budget ---------------------------------------------------------------


@dataclass(frozen=True)
class TpDpCell:
    model_id: str
    tp: int
    dp: int
    batch_per_replica: int
    result: Result
    output_tok_s_per_device: float  # 0 where the layout does not fit
    total_tok_s_per_device: float  # input + output tokens, as the second paper counts
    memory_limit: str  # "" or why this layout's memory limits it (weights, KV waves, KV starved)
    tp_beats_dp: bool  # beats the layout with half the TP (twice the replicas) on tokens/s per device
    because_of_memory: bool  # ... and that layout was memory-limited (the paper's exception)
    why: str  # the reason, when tp_beats_dp


@dataclass(frozen=True)
class TpDpGrid:
    accelerator: str
    device_budget: int
    workload: Workload
    sequences_per_device: int
    cells: tuple[TpDpCell, ...]

    def cell(self, model_id: str, tp: int) -> TpDpCell:
        for entry in self.cells:
            if entry.model_id == model_id and entry.tp == tp:
                return entry
        raise KeyError(f"no cell for {model_id!r} at TP = {tp}")


def _memory_limit(result: Result) -> str:
    if not result.fits:
        return "weights do not fit" if result.fit_code == codes.FIT_WEIGHTS_DO_NOT_FIT else result.fit_reason
    if result.waves > 1:
        return f"KV cache holds {result.memory.resident_batch} of {result.scenario.batch} sequences: {result.waves} waves"
    if result.warning_bits & codes.WARN_KV_STARVED:
        return "weights take over 80% of usable memory (KV starved)"
    return ""


def tp_dp_grid(
    engine: Engine,
    model_ids: Sequence[str],
    accelerator: str,
    device_budget: int = 4,
    workload: Workload | None = None,
    *,
    sequences_per_device: int = FIG4_SEQUENCES_PER_DEVICE,
) -> TpDpGrid:
    """Every split of ``device_budget`` (a power of two) into TP x DP, for each model.

    Batch per replica: ``sequences_per_device`` x TP (the second paper's Fig. 4 sets it to
    128 x T, so each device serves the same number of sequences whatever the split); the
    workload's batch is not used, its lengths and precisions are. Throughput per device is the
    system's throughput over the budget. A cell is marked ``tp_beats_dp`` when it beats the
    split with half its TP and twice its replicas; ``because_of_memory`` when that split was
    memory-limited (weights that do not fit, a KV cache that runs in waves, or starved KV), the
    exception the paper's guideline names, and ``why`` says which.
    """
    workload = workload or Workload()
    _check_common(workload, device_budget)
    if device_budget & (device_budget - 1):
        raise ValueError(f"device_budget must be a power of two (1, 2, 4, 8, ...), got {device_budget}")
    if isinstance(sequences_per_device, bool) or not isinstance(sequences_per_device, int) or sequences_per_device < 1:
        raise ValueError(f"sequences_per_device must be a whole number of at least 1, got {sequences_per_device!r}")
    if not model_ids:
        raise ValueError("tp_dp_grid needs at least one model id")
    splits = _powers_of_two(device_budget)
    scenarios: list[Scenario] = []
    for model_id in model_ids:
        base = engine.resolve(workload.scenario(model_id, accelerator))
        for tp in splits:
            scenarios.append(base.with_changes(tp=tp, dp=device_budget // tp, batch=sequences_per_device * tp))
    out = engine.evaluate(scenarios)
    cells: list[TpDpCell] = []
    for m, model_id in enumerate(model_ids):
        previous: TpDpCell | None = None
        for s, tp in enumerate(splits):
            column = m * len(splits) + s
            result = result_from_column(out, column, scenarios[column])
            output_rate = result.throughput_output_tok_s / device_budget if result.fits else 0.0
            total_rate = result.throughput_total_tok_s / device_budget if result.fits else 0.0
            beats = previous is not None and result.fits and total_rate > previous.total_tok_s_per_device
            why = ""
            if beats:
                limit = previous.memory_limit or (
                    "no memory limit; TP's decode step per sequence is shorter here (each device reads "
                    "a 1/TP share of the weights)"
                )
                why = f"TP {previous.tp} x DP {previous.dp}: {limit}"
            cell = TpDpCell(
                model_id=scenarios[column].model,
                tp=tp,
                dp=device_budget // tp,
                batch_per_replica=sequences_per_device * tp,
                result=result,
                output_tok_s_per_device=output_rate,
                total_tok_s_per_device=total_rate,
                memory_limit=_memory_limit(result),
                tp_beats_dp=beats,
                because_of_memory=beats and bool(previous.memory_limit),
                why=why,
            )
            cells.append(cell)
            previous = cell
    return TpDpGrid(accelerator, device_budget, workload, sequences_per_device, tuple(cells))


# ---- EP vs TP for MoE ---------------------------------------------------------------------------


@dataclass(frozen=True)
class EpTpPoint:
    """One batch size: the same MoE model on ``devices`` devices under TP and under EP."""

    batch: int
    tp: Result  # tp = devices, ep = 1
    ep: Result  # tp = devices, ep = devices (experts whole, attention tensor-split)
    tp_spread: LatencySpread
    ep_spread: LatencySpread
    experts_per_device_tp: int  # every expert, as a 1/tp slice
    experts_per_device_ep: int
    expert_weight_bytes_read_tp: float  # per device per decode step (engine)
    expert_weight_bytes_read_ep: float
    all_reduce_bytes_tp: float  # sent per device per decode step (the fastest all-reduce algorithm)
    all_reduce_bytes_ep: float  # EP keeps one all-reduce per MoE layer (attention)
    all_to_all_bytes_ep: float  # dispatch + combine, per device per decode step
    imbalance_engine: float  # expected busiest device over mean (reference.token_imbalance)
    imbalance_simulated: float  # Monte Carlo mean of the same

    @property
    def tp_over_ep_throughput(self) -> float:
        """TP output tokens/s over EP's: above 1 where TP wins."""
        return self.tp.throughput_output_tok_s / self.ep.throughput_output_tok_s


@dataclass(frozen=True)
class EpTpComparison:
    model_id: str
    accelerator: str
    devices: int
    workload: Workload
    points: tuple[EpTpPoint, ...]


def _sent_bytes_per_step(
    engine: Engine, model: ModelArch, result: Result, imbalance: float
) -> tuple[float, float]:
    """(all-reduce bytes, all-to-all bytes) one device sends per decode step, as the engine
    charges them (reference.py, communication): per layer two all-reduces of the activations
    (B·d·p_a each, by the fastest algorithm: 2(t−1)/t of it for a ring, log2(t) times it for
    recursive doubling); a MoE layer under EP keeps one and adds a dispatch and a combine
    all-to-all of B·k·d·p_a·(ep−1)/ep, stretched by the busiest device's load."""
    s = result.scenario
    tokens, micro_batches = _decode_micro_batch(result)
    message = tokens * model.hidden_size * bytes_per_element(s.activation_precision)
    accelerator = engine.catalog.accelerator(s.accelerator)
    all_reduce = tensor_parallel_all_reduce(accelerator, engine.constants, s.tp, message)[1]
    layers = model.n_layers
    moe_layers = model.n_moe_layers if s.ep > 1 else 0
    reduce_total = (2 * (layers - moe_layers) + moe_layers) * all_reduce
    a2a_total = 0.0
    if moe_layers:
        dispatched = model.moe.experts_per_token * message * (s.ep - 1) / s.ep * imbalance
        a2a_total = moe_layers * 2.0 * dispatched
    return reduce_total * micro_batches, a2a_total * micro_batches


def ep_vs_tp(
    engine: Engine,
    model_id: str,
    accelerator: str,
    devices: int = 4,
    batches: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128, 256),
    workload: Workload | None = None,
    *,
    routing: str = "uniform",
    skew: float = 0.0,
    seed: int = 0,
) -> EpTpComparison:
    """The second paper's Fig. 6: TP = ``devices`` against EP = ``devices`` (one replica) for
    a MoE model, across ``batches``; the workload's lengths and precisions are used (the paper
    ran FP8)."""
    workload = workload or Workload()
    _check_common(workload, devices)
    if not batches:
        raise ValueError("ep_vs_tp needs at least one batch size")
    base = engine.resolve(workload.scenario(model_id, accelerator))
    model = engine.model(base.model)
    if not model.is_moe:
        raise ValueError(f"{model.id} is dense: expert parallelism needs a mixture-of-experts model")
    if devices > model.moe.n_routed_experts:
        raise ValueError(f"{devices} devices exceed the {model.moe.n_routed_experts} routed experts of {model.id}")
    scenarios: list[Scenario] = []
    for batch in batches:
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise ValueError(f"batch sizes must be whole numbers of at least 1, got {batch!r}")
        scenarios.append(base.with_changes(batch=batch, tp=devices, ep=1))
        scenarios.append(base.with_changes(batch=batch, tp=devices, ep=devices))
    out = engine.evaluate(scenarios)
    results = [result_from_column(out, j, s) for j, s in enumerate(scenarios)]
    twin_engine, twin_id = _with_twin(engine, model)
    twin_out = twin_engine.evaluate(
        [r.scenario.with_changes(model=twin_id, batch=max(1, r.memory.resident_batch)) for r in results]
    )
    spread_model = _SpreadModel(model, routing, skew, seed)
    points = []
    experts = model.moe.n_routed_experts
    for index, batch in enumerate(batches):
        tp_result, ep_result = results[2 * index], results[2 * index + 1]
        # EP first: its simulation also answers TP's one-device routing of the same tokens.
        ep_spread, simulated = spread_model.spread(ep_result, float(Outputs(twin_out).itl_s[2 * index + 1]))
        tp_spread, _ = spread_model.spread(tp_result, float(Outputs(twin_out).itl_s[2 * index]))
        tokens, _ = _decode_micro_batch(ep_result)
        imbalance = token_imbalance(float(tokens * model.moe.experts_per_token), devices)
        reduce_tp, _ = _sent_bytes_per_step(engine, model, tp_result, 1.0)
        reduce_ep, a2a_ep = _sent_bytes_per_step(engine, model, ep_result, imbalance)
        twin_tp = float(Outputs(twin_out).decode.weight_bytes_per_device[2 * index])
        twin_ep = float(Outputs(twin_out).decode.weight_bytes_per_device[2 * index + 1])
        points.append(
            EpTpPoint(
                batch=batch,
                tp=tp_result,
                ep=ep_result,
                tp_spread=tp_spread,
                ep_spread=ep_spread,
                experts_per_device_tp=experts,
                experts_per_device_ep=math.ceil(experts / devices),
                expert_weight_bytes_read_tp=tp_result.decode.weight_bytes_per_device - twin_tp,
                expert_weight_bytes_read_ep=ep_result.decode.weight_bytes_per_device - twin_ep,
                all_reduce_bytes_tp=reduce_tp,
                all_reduce_bytes_ep=reduce_ep,
                all_to_all_bytes_ep=a2a_ep,
                imbalance_engine=imbalance,
                imbalance_simulated=simulated.imbalance_mean,
            )
        )
    return EpTpComparison(model.id, accelerator, devices, workload, tuple(points))


# ---- the first paper's claims --------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimCheck:
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
        (model.id, batch): engine.predict(workload.scenario(model.id, accelerator, tp=tp).with_changes(batch=batch))
        for model in models
        for batch in sorted({1, b})
    }
    itl_one = results[moe.id, 1].itl_s / results[dense.id, 1].itl_s
    itl_batch = results[moe.id, b].itl_s / results[dense.id, b].itl_s
    throughput = results[moe.id, b].throughput_output_tok_s / results[dense.id, b].throughput_output_tok_s
    read_one = results[moe.id, 1].decode.weight_bytes_per_device / results[dense.id, 1].decode.weight_bytes_per_device
    read_batch = results[moe.id, b].decode.weight_bytes_per_device / results[dense.id, b].decode.weight_bytes_per_device
    touched = 1.0 - (1.0 - MOE_LIKE_DENSE_EXPERTS_PER_TOKEN / MOE_LIKE_DENSE_EXPERTS) ** b
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


# ---- tables ---------------------------------------------------------------------------------------


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


def tp_dp_table(grid: TpDpGrid) -> Table:
    """One row per (model, TP) split of the budget (``tp_dp.csv``)."""
    rows = []
    for cell in grid.cells:
        r = cell.result
        rows.append((
            cell.model_id,
            grid.accelerator,
            grid.device_budget,
            cell.tp,
            cell.dp,
            cell.batch_per_replica,
            _yes(r.fits),
            cell.output_tok_s_per_device,
            cell.total_tok_s_per_device,
            r.itl_s * 1e3 if r.fits else "",
            r.waves if r.fits else "",
            r.memory.weights_bytes / r.memory.usable_bytes,
            cell.memory_limit,
            _yes(cell.tp_beats_dp),
            _yes(cell.because_of_memory),
            cell.why,
        ))
    headers = (
        "model", "accelerator", "device_budget [devices]", "tp", "dp", "batch_per_replica [sequences]", "fits",
        "output_throughput [tokens/s per device]", "input_plus_output_throughput [tokens/s per device]",
        "itl [ms]", "kv_waves", "weights_share_of_usable_memory [fraction]", "memory_limit", "tp_beats_dp",
        "because_dp_memory_limited", "why",
    )
    return Table("tp_dp", headers, tuple(rows))


def ep_tp_table(comparison: EpTpComparison) -> Table:
    """One row per batch size (``ep_tp.csv``). Where a layout does not fit (``tp_fits``,
    ``ep_fits``) its numbers are the engine's for a layout that could not run."""
    rows = []
    for p in comparison.points:
        rows.append((
            comparison.model_id,
            comparison.accelerator,
            comparison.devices,
            p.batch,
            _yes(p.tp.fits),
            _yes(p.ep.fits),
            p.tp.throughput_output_tok_s,
            p.ep.throughput_output_tok_s,
            p.tp_over_ep_throughput,
            p.tp.itl_s * 1e3,
            p.ep.itl_s * 1e3,
            p.tp_spread.p99_s * 1e3,
            p.ep_spread.p99_s * 1e3,
            p.experts_per_device_tp,
            p.experts_per_device_ep,
            p.expert_weight_bytes_read_tp / 1e9,
            p.expert_weight_bytes_read_ep / 1e9,
            p.all_reduce_bytes_tp / 1e6,
            (p.all_reduce_bytes_ep + p.all_to_all_bytes_ep) / 1e6,
            p.all_to_all_bytes_ep / 1e6,
            p.tp.decode.communication_time_s * 1e3,
            p.ep.decode.communication_time_s * 1e3,
            p.imbalance_engine,
            p.imbalance_simulated,
        ))
    headers = (
        "model", "accelerator", "devices", "batch [sequences]", "tp_fits", "ep_fits", "tp_output_throughput [tokens/s, system]",
        "ep_output_throughput [tokens/s, system]", "tp_over_ep_throughput [ratio]", "tp_itl [ms]", "ep_itl [ms]",
        "tp_itl_p99 [ms]", "ep_itl_p99 [ms]", "tp_experts_per_device [experts, as 1/tp slices]",
        "ep_experts_per_device [whole experts]", "tp_expert_weights_read [GB per device per step]",
        "ep_expert_weights_read [GB per device per step]", "tp_sent [MB per device per step]",
        "ep_sent [MB per device per step]", "ep_all_to_all_sent [MB per device per step]",
        "tp_communication [ms per stage pass]", "ep_communication [ms per stage pass]",
        "imbalance_engine [busiest/mean]", "imbalance_simulated [busiest/mean]",
    )
    return Table("ep_tp", headers, tuple(rows))
