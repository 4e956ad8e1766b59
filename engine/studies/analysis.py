"""The analysis tabs' studies, each a function of an engine and a :class:`Workspace`.

A tab of the app (scaling, parallelism, regimes, tiers) asks one study of the workspace it
shows. Here each study reads the workspace itself, declares which Scenario fields and view
options it reads (``depends_on``; a test holds every study to its declaration), and gives its
CSV tables. So the tabs only draw, recompute only when a declared input changes, and the
analysis CSVs can be written without Qt (:func:`analysis_tables`).

The studies compose the question-level functions of ``scaling``, ``parallelism``,
``regimes``, ``tiering`` and ``claims``, which take explicit arguments rather than a
workspace and are what tests and other callers use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from ..catalog.far_tiers import load_far_tiers
from ..catalog.regimes import load_regimes
from ..core.errors import AccelscopeError
from ..core.scenario import Scenario
from ..core.table import Table
from ..core.workspace import Workspace
from ..physics.engine import Engine
from .claims import HeterogeneousMemoryClaim, heterogeneous_claim_check
from .moe_routing import RoutingResult
from .parallelism import (
    EP_TP_BATCHES,
    FIG4_MODELS,
    EpTpComparison,
    TpDpGrid,
    ep_devices,
    ep_model,
    ep_tp_table,
    ep_vs_tp,
    tp_dp_grid,
    tp_dp_table,
)
from .regimes import RegimeGrid, regime_scores, regimes_table, row_order
from .scaling import ScalingComparison, compare_strategies, ep_routing, scaling_table
from .serving.view import Capacity, RateCurve, capacities, rate_curves
from .tiering import (
    OFFLOAD_CURVES,
    OWN_TIER,
    OffloadSweep,
    nearest_index,
    offload_curves,
    resolve_far_tier,
    sweep_offload,
)

SCENARIO_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Scenario))
WORKLOAD_INPUTS: tuple[str, ...] = ("batch", "input_len", "output_len", "weight_precision", "activation_precision",
                                    "kv_precision")


@dataclass(frozen=True)
class AnalysisStudy:
    """One tab's study: ``run(engine, workspace)`` gives its result, which depends on the
    engine and on the workspace only through ``depends_on`` (Scenario fields and view
    options); ``tables(result)`` gives its CSV tables by name."""

    view: str
    run: Callable[[Engine, Workspace], Any]
    depends_on: tuple[str, ...]
    tables: Callable[[Any], dict[str, Table]]


# Inputs a study may read besides Scenario fields and view options.
WORKSPACE_INPUTS: tuple[str, ...] = ("shown", "serving")


def study_inputs(depends_on: tuple[str, ...], workspace: Workspace) -> tuple[object, ...]:
    """The values a study reads from ``workspace``: each name a Scenario field, a view option,
    the shown accelerators or the serving settings."""
    return tuple(
        getattr(workspace.scenario, name) if name in SCENARIO_FIELDS
        else getattr(workspace, name) if name in WORKSPACE_INPUTS
        else workspace.option(name)
        for name in depends_on
    )


# ---- scaling: every strategy at the fewest devices that hold the model --------------------------


@dataclass(frozen=True)
class ScalingStudy:
    comparison: ScalingComparison | None  # None when the engine refused the inputs
    problem: str  # why there is no comparison
    routing: RoutingResult | None  # the expert-parallel layout's routing simulation (MoE, EP fits)
    is_moe: bool
    model_name: str


SCALING_DEPENDS_ON: tuple[str, ...] = ("model", "accelerator", *WORKLOAD_INPUTS, "routing_skew")


def scaling_study(engine: Engine, workspace: Workspace) -> ScalingStudy:
    """The workspace's model and workload under each strategy; skewed routing where the
    ``routing_skew`` option is above 0."""
    s = workspace.scenario
    skew = float(workspace.option("routing_skew"))
    routing = "skewed" if skew > 0 else "uniform"
    try:
        model = engine.model(s.model)
        comparison = compare_strategies(engine, s.model, s.accelerator, s.workload, routing=routing, skew=skew)
    except (ValueError, AccelscopeError) as error:
        return ScalingStudy(None, str(error), None, False, s.model)
    return ScalingStudy(comparison, "", ep_routing(model, comparison), model.is_moe, model.name)


def scaling_tables(study: ScalingStudy) -> dict[str, Table]:
    return {} if study.comparison is None else {"scaling": scaling_table(study.comparison)}


# ---- parallelism: TP x DP on a node, EP against TP ------------------------------------------------


@dataclass(frozen=True)
class ParallelismStudy:
    grid: TpDpGrid | None
    grid_problem: str
    ep_tp: EpTpComparison | None
    ep_tp_problem: str
    ep_tp_note: str  # which model and devices the EP/TP side shows, and why
    model_names: dict[str, str]


# Not the batch: the grid sets its own (128 sequences per device) and EP/TP sweeps it.
PARALLELISM_DEPENDS_ON: tuple[str, ...] = (
    "model", "accelerator", *(name for name in WORKLOAD_INPUTS if name != "batch"), "device_budget",
)


def parallelism_study(engine: Engine, workspace: Workspace) -> ParallelismStudy:
    """Fig. 4's TP x DP grid on the ``device_budget`` option for the workspace's model (first)
    and the figure's three, and Fig. 6's EP against TP for the model, or for
    :data:`~parallelism.DEFAULT_MOE` where it is dense."""
    s = workspace.scenario
    budget = int(workspace.option("device_budget"))
    workload = replace(s.workload, batch=1)  # neither study reads it; a batch of 1 says so
    models = [s.model, *(m for m in FIG4_MODELS if m != s.model)]
    names = {}
    for model_id in models:
        try:
            names[model_id] = engine.model(model_id).name
        except AccelscopeError:
            names[model_id] = model_id
    grid, grid_problem = None, ""
    try:
        grid = tp_dp_grid(engine, models, s.accelerator, budget, workload)
    except (ValueError, AccelscopeError) as error:
        grid_problem = str(error)

    current = engine.model(s.model)
    moe = ep_model(engine, s.model)
    names.setdefault(moe.id, moe.name)
    devices = ep_devices(moe, budget)
    note = f"{moe.name} on {devices} devices"
    if not current.is_moe:
        note += f" ({names[s.model]} is dense: expert parallelism needs a mixture-of-experts model)"
    if devices < budget:
        note += f"; {devices}, not {budget}: the model has {moe.moe.n_routed_experts} routed experts"
    comparison, ep_problem = None, ""
    try:
        comparison = ep_vs_tp(engine, moe.id, s.accelerator, devices, EP_TP_BATCHES, workload)
    except (ValueError, AccelscopeError) as error:
        ep_problem = str(error)
    return ParallelismStudy(grid, grid_problem, comparison, ep_problem, note, names)


def parallelism_tables(study: ParallelismStudy) -> dict[str, Table]:
    """``tp_dp`` and ``ep_tp``, each where it was computed."""
    found: dict[str, Table] = {}
    if study.grid is not None:
        found["tp_dp"] = tp_dp_table(study.grid)
    if study.ep_tp is not None:
        found["ep_tp"] = ep_tp_table(study.ep_tp)
    return found


# ---- regimes: every accelerator of the catalog on the paper's regimes ----------------------------

# The regimes fix their own models and workloads: the grid depends on the engine's catalog only.
REGIMES_DEPENDS_ON: tuple[str, ...] = ()


def regimes_study(engine: Engine, workspace: Workspace) -> RegimeGrid:
    """Every accelerator of the engine's catalog, the paper's graded ones first."""
    definitions = load_regimes()
    return regime_scores(engine, row_order(engine, definitions), definitions=definitions)


def regimes_tables(grid: RegimeGrid) -> dict[str, Table]:
    return {"regimes": regimes_table(grid)}


# ---- memory tiers: the scenario with a far tier ---------------------------------------------------


# 0, 5, ..., 100 % of the weights, the KV cache, or both offloaded (with the scenario's own shares).
SWEEP_FRACTIONS: tuple[float, ...] = tuple(i / 20 for i in range(21))


@dataclass(frozen=True)
class TierStudy:
    """The offload sweep and the claim check for one scenario and far tier."""

    tier_id: str  # OWN_TIER or a far_tiers.toml id
    sweep: OffloadSweep
    claim: HeterogeneousMemoryClaim
    current_offload: float  # the scenario's own shares, marked on the curves
    current_kv_offload: float
    current_slowdown: float  # at both shares together, with this tier
    current_fits: bool
    model_params: float  # the current model's parameters, for the capacity plot


# The sweep runs the scenario as it is (its layout too) with the shares replaced.
TIERS_DEPENDS_ON: tuple[str, ...] = (*SCENARIO_FIELDS, "far_tier")


def tiers_study(engine: Engine, workspace: Workspace) -> TierStudy:
    """The scenario with the ``far_tier`` option as its far tier (its own: the device's, or the
    fallback where it has none): the offload sweep, and the first paper's claim at its batch."""
    scenario = workspace.scenario
    far_tiers = load_far_tiers()
    tier_id, tier = resolve_far_tier(engine, scenario.accelerator, str(workspace.option("far_tier")), far_tiers)
    fractions = tuple(sorted({*SWEEP_FRACTIONS, float(scenario.offload), float(scenario.kv_offload)}))
    sweep = sweep_offload(engine, scenario, tier, weight_fractions=fractions, kv_fractions=fractions)
    listed = tuple(far_tiers.values())
    claim = heterogeneous_claim_check(
        engine, scenario.model, scenario.accelerator,
        tiers=listed if tier_id != OWN_TIER else (tier, *listed),
        batches=(scenario.batch,), input_len=scenario.input_len, output_len=scenario.output_len,
    )
    w = nearest_index(sweep.weight_fractions, scenario.offload)
    v = nearest_index(sweep.kv_fractions, scenario.kv_offload)
    return TierStudy(
        tier_id=tier_id, sweep=sweep, claim=claim,
        current_offload=float(scenario.offload), current_kv_offload=float(scenario.kv_offload),
        current_slowdown=float(sweep.itl_slowdown[w, v]), current_fits=bool(sweep.fits[w, v]),
        model_params=float(engine.model(scenario.model).total_params),
    )


def tiers_tables(study: TierStudy) -> dict[str, Table]:
    """memory_tiers.csv: the three curves, one row per share offloaded."""
    sweep = study.sweep
    shares, series = offload_curves(sweep)
    headers = ["far_tier", "share_offloaded [%]"]
    for key in OFFLOAD_CURVES:
        headers += [f"{key}_offloaded: itl [ms]", f"{key}_offloaded: itl_slowdown [x]", f"{key}_offloaded: fits"]
    rows = []
    for i, share in enumerate(shares):
        row: list[object] = [sweep.tier.name, 100.0 * share]
        for key in OFFLOAD_CURVES:
            itl, slowdown, fits = series[key]
            row += [1e3 * itl[i], slowdown[i], "yes" if fits[i] else "no"]
        rows.append(tuple(row))
    return {"memory_tiers": Table("memory_tiers", tuple(headers), tuple(rows))}


# ---- serving: every shown accelerator under traffic -------------------------------------------------


@dataclass(frozen=True)
class ServingStudy:
    curves: tuple[RateCurve, ...]  # one per shown accelerator: served runs over the rate
    capacities: tuple[Capacity, ...]  # the largest rate each meets the SLO at


# Every scenario field but the accelerator (each shown one is taken in turn), the shown list, the
# serving settings.
SERVING_DEPENDS_ON: tuple[str, ...] = (*(name for name in SCENARIO_FIELDS if name != "accelerator"), "shown", "serving")


def serving_study(engine: Engine, workspace: Workspace) -> ServingStudy:
    return ServingStudy(rate_curves(engine, workspace), capacities(engine, workspace))


def serving_tables(study: ServingStudy) -> dict[str, Table]:
    capacity = {c.accelerator: c for c in study.capacities}
    headers = ("accelerator", "rate [requests/s]", "output_throughput [tokens/s]", "goodput [requests/s]",
               "ttft_p99 [ms]", "tpot_p99 [ms]", "unstable", "capacity_at_slo [requests/s]")
    rows = []
    for curve in study.curves:
        at_slo = capacity.get(curve.accelerator)
        rate = at_slo.rate_rps if at_slo is not None else float("nan")
        if curve.problem is not None:
            rows.append((curve.accelerator, "", "", "", "", "", "", f"cannot serve: {curve.problem}"))
            continue
        for index, offered in enumerate(curve.rates_rps):
            rows.append((curve.accelerator, float(offered), float(curve.throughput_output_tok_s[index]),
                         float(curve.goodput_rps[index]), float(curve.ttft_p99_s[index]) * 1e3,
                         float(curve.tpot_p99_s[index]) * 1e3, "yes" if curve.unstable[index] else "no", rate))
    return {"serving": Table("serving", headers, tuple(rows))}


# ---- all of them ------------------------------------------------------------------------------------


ANALYSIS_STUDIES: Mapping[str, AnalysisStudy] = {
    study.view: study
    for study in (
        AnalysisStudy("serving", serving_study, SERVING_DEPENDS_ON, serving_tables),
        AnalysisStudy("scaling", scaling_study, SCALING_DEPENDS_ON, scaling_tables),
        AnalysisStudy("parallelism", parallelism_study, PARALLELISM_DEPENDS_ON, parallelism_tables),
        AnalysisStudy("regimes", regimes_study, REGIMES_DEPENDS_ON, regimes_tables),
        AnalysisStudy("tiers", tiers_study, TIERS_DEPENDS_ON, tiers_tables),
    )
}


def study_tables(view: str, study: object | None) -> dict[str, Table]:
    """The tables of an analysis view's computed study, by name ({} before it is computed)."""
    return {} if study is None else ANALYSIS_STUDIES[view].tables(study)


def analysis_tables(engine: Engine, workspace: Workspace) -> dict[str, Table]:
    """Every analysis view's tables for ``workspace`` (its scenario resolved by ``engine``), by
    table name (``Table.view``: serving, scaling, tp_dp, ep_tp, regimes, memory_tiers), in the views'
    order: the CSVs the app's tabs export, computed without them."""
    return {
        name: table
        for study in ANALYSIS_STUDIES.values()
        for name, table in study.tables(study.run(engine, workspace)).items()
    }
