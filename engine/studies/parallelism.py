"""Parallel layouts on a node, the second paper's Figs. 4 and 6 (Brunetta et al. 2025):

- :func:`tp_dp_grid`: a fixed device budget split into tensor-parallel groups of TP devices
  and DP = budget / TP replicas, for several models, marking where TP beats DP because the DP
  layout's memory is too small;
- :func:`ep_vs_tp`: a MoE model on a few devices under expert parallelism and under tensor
  parallelism across batch sizes, with the numbers behind the gap; :func:`ep_model` and
  :func:`ep_devices` choose which MoE model and how many devices, for a model and a budget.

Every number is the engine's; the step-time spreads come from the scaling study's
:class:`~accelscope.engine.studies.scaling.SpreadModel`. :func:`tp_dp_table` and
:func:`ep_tp_table` give ``tp_dp.csv`` and ``ep_tp.csv``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..core import codes
from ..core.model import ModelArch
from ..core.precision import bytes_per_element
from ..core.scenario import Scenario, Workload
from ..core.table import Table
from ..physics.engine import Engine
from ..physics.reference import tensor_parallel_all_reduce, token_imbalance
from ..physics.results import Outputs, Result, result_from_column
from .scaling import (
    DEFAULT_WORKLOAD,
    LatencySpread,
    SpreadModel,
    check_workload,
    decode_micro_batch,
    powers_of_two,
    with_twin,
)

# Brunetta et al. 2025, Sec. III-B2: "To maintain a constant sequences-per-GPU ratio, we set
# the batch size to T x 128" for the TP/DP study (Fig. 4).
FIG4_SEQUENCES_PER_DEVICE = 128
# Fig. 4 compares these (small, medium and large dense models).
FIG4_MODELS: tuple[str, ...] = ("llama-3.1-8b", "qwen3-32b", "llama-3.3-70b")
# Fig. 6 uses a MoE; for a dense model the EP/TP comparison shows this one.
DEFAULT_MOE = "mixtral-8x22b"
EP_TP_BATCHES: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256)


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
    workload = workload or DEFAULT_WORKLOAD
    check_workload(workload, device_budget)
    if device_budget & (device_budget - 1):
        raise ValueError(f"device_budget must be a power of two (1, 2, 4, 8, ...), got {device_budget}")
    if isinstance(sequences_per_device, bool) or not isinstance(sequences_per_device, int) or sequences_per_device < 1:
        raise ValueError(f"sequences_per_device must be a whole number of at least 1, got {sequences_per_device!r}")
    if not model_ids:
        raise ValueError("tp_dp_grid needs at least one model id")
    splits = powers_of_two(device_budget)
    scenarios: list[Scenario] = []
    for model_id in model_ids:
        base = engine.resolve(Scenario.from_workload(model_id, accelerator, workload))
        for tp in splits:
            scenarios.append(base.with_changes(tp=tp, dp=device_budget // tp, batch=sequences_per_device * tp))
    out = engine.evaluate(scenarios)
    cells: list[TpDpCell] = []
    for m in range(len(model_ids)):
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
    tokens, micro_batches = decode_micro_batch(result)
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
    workload = workload or DEFAULT_WORKLOAD
    check_workload(workload, devices)
    if not batches:
        raise ValueError("ep_vs_tp needs at least one batch size")
    base = engine.resolve(Scenario.from_workload(model_id, accelerator, workload))
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
    twin_engine, twin_id = with_twin(engine, model)
    twin_out = twin_engine.evaluate(
        [r.scenario.with_changes(model=twin_id, batch=max(1, r.memory.resident_batch)) for r in results]
    )
    twin = Outputs(twin_out)
    spread_model = SpreadModel(model, routing, skew, seed)
    points = tuple(
        _ep_tp_point(engine, model, devices, batch, results[2 * index], results[2 * index + 1], twin, 2 * index,
                     spread_model)
        for index, batch in enumerate(batches)
    )
    return EpTpComparison(model.id, accelerator, devices, workload, points)


def _ep_tp_point(
    engine: Engine,
    model: ModelArch,
    devices: int,
    batch: int,
    tp_result: Result,
    ep_result: Result,
    twin: Outputs,
    twin_column: int,
    spread_model: SpreadModel,
) -> EpTpPoint:
    """One batch size from its TP and EP results and their routed-expert-free twins (``twin``,
    TP's at ``twin_column`` and EP's after it): the expert time and the expert bytes read."""
    tp_twin, ep_twin = twin_column, twin_column + 1
    # EP first: its simulation also answers TP's one-device routing of the same tokens.
    ep_spread, simulated = spread_model.spread(ep_result, float(twin.itl_s[ep_twin]))
    tp_spread, _ = spread_model.spread(tp_result, float(twin.itl_s[tp_twin]))
    tokens, _ = decode_micro_batch(ep_result)
    imbalance = token_imbalance(float(tokens * model.moe.experts_per_token), devices)
    reduce_tp, _ = _sent_bytes_per_step(engine, model, tp_result, 1.0)
    reduce_ep, a2a_ep = _sent_bytes_per_step(engine, model, ep_result, imbalance)
    experts = model.moe.n_routed_experts
    return EpTpPoint(
        batch=batch,
        tp=tp_result,
        ep=ep_result,
        tp_spread=tp_spread,
        ep_spread=ep_spread,
        experts_per_device_tp=experts,
        experts_per_device_ep=math.ceil(experts / devices),
        expert_weight_bytes_read_tp=tp_result.decode.weight_bytes_per_device
        - float(twin.decode.weight_bytes_per_device[tp_twin]),
        expert_weight_bytes_read_ep=ep_result.decode.weight_bytes_per_device
        - float(twin.decode.weight_bytes_per_device[ep_twin]),
        all_reduce_bytes_tp=reduce_tp,
        all_reduce_bytes_ep=reduce_ep,
        all_to_all_bytes_ep=a2a_ep,
        imbalance_engine=imbalance,
        imbalance_simulated=simulated.imbalance_mean,
    )


# ---- which MoE model, on how many devices ------------------------------------------------------


def ep_model(engine: Engine, model_id: str) -> ModelArch:
    """The model an EP/TP comparison runs for ``model_id``: itself when it is a MoE, else
    :data:`DEFAULT_MOE` (expert parallelism needs routed experts)."""
    model = engine.model(model_id)
    return model if model.is_moe else engine.model(DEFAULT_MOE)


def ep_devices(model: ModelArch, device_budget: int) -> int:
    """Devices for EP against TP on a budget: EP places whole experts, so no more devices than
    routed experts, and a power of two like the budget."""
    return min(device_budget, 1 << math.floor(math.log2(model.moe.n_routed_experts)))


# ---- tables ---------------------------------------------------------------------------------------


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


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
            r.memory.weights_fraction_of_usable,
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
