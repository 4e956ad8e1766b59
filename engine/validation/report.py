"""The model against the papers: the engine run on every setup of the measurement table
(``catalog/measurements.py``), twice — with the calibrated constants and as a pure roofline
(``ideal.py``) — and each predicted/published ratio with summary statistics and the accuracy
targets. Nothing here changes a constant: this module only measures.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..catalog.measurements import (
    MEASURED,
    METRICS,
    Claim,
    Measurement,
    MeasurementTable,
    Published,
    Side,
    Spec,
    load_measurements,
)
from ..core.scenario import Scenario
from ..physics.engine import Engine
from ..physics.results import Result, result_from_column
from ..studies.claims import (
    architecture_spread_check,
    claims_check,
    disaggregation_tco_check,
    moe_like_dense_check,
)
from .ideal import ideal_engine
from .served import ServerCapacity, ServerKey, served_runs, server_runs

# How the engine's result gives each metric of the table (catalog.measurements.METRICS).
METRIC_VALUES: dict[str, Callable[[Result], float]] = {
    "throughput_total_tok_s": lambda r: r.throughput_total_tok_s,
    "throughput_output_tok_s": lambda r: r.throughput_output_tok_s,
    "ttft_ms": lambda r: r.ttft_s * 1e3,
    "itl_ms": lambda r: r.itl_s * 1e3,
    "e2e_latency_s": lambda r: r.e2e_latency_s,
    "power_w": lambda r: r.power_W,
    "tokens_per_joule": lambda r: r.tokens_per_joule,
    "output_tokens_per_joule": lambda r: r.output_tokens_per_joule,
}

# Architecture classes of the two groups the accuracy targets are set for.
GROUPS: dict[str, str] = {
    "gpu-simt": "GPUs",
    "wafer-scale": "dataflow",
    "dataflow-rdu": "dataflow",
}
OTHER_GROUP = "other"
# Targets on the papers' measurements (median |error| in %, calibrated model).
TARGETS: dict[str, float] = {"GPUs": 20.0, "dataflow": 35.0}
OFF_FACTOR = 2.0


def finite_or_none(value: float | None) -> float | None:
    """A number for JSON: None in place of an infinity or NaN."""
    return value if value is not None and math.isfinite(value) else None


@dataclass(frozen=True)
class Prediction:
    """What one engine computes for one row or claim."""

    value: float | None  # the aggregate over the cases; None when nothing could be computed
    low: float | None  # smallest and largest over the cases
    high: float | None
    cases: int
    computed_cases: int
    status: str | None  # why there is no value, or a warning (some cases do not fit)
    waves: bool  # some scenario's batch runs in waves (KV cache does not fit at once)

    def ratio_to(self, published: Published) -> float | None:
        if self.value is None:
            return None
        return self.value / published.value


def _evaluate_all(engine: Engine, scenarios: Iterable[Scenario]) -> dict[Scenario, Result]:
    unique = list(dict.fromkeys(engine.resolve(s) for s in scenarios))
    if not unique:
        return {}
    table = engine.evaluate(unique)
    return {scenario: result_from_column(table, j, scenario) for j, scenario in enumerate(unique)}


def _predict(spec: Spec, results: Mapping[Scenario, Result], unavailable: Mapping[Scenario, str] | None = None
             ) -> Prediction:
    """The row's value over its cases; a scenario in ``unavailable`` (a run that could not be
    computed, and why) counts as one that does not fit."""
    unavailable = unavailable or {}
    value_of = METRIC_VALUES[spec.metric]
    higher_is_better = METRICS[spec.metric].higher_is_better
    failures: list[str] = []
    waves = False

    def side_value(case: Mapping[str, Any], side: Side) -> float | None:
        nonlocal waves
        values = []
        for candidate in spec.candidates(side):
            scenario = spec.scenario(case, side, candidate)
            if scenario in unavailable:
                failures.append(unavailable[scenario])
                continue
            result = results[scenario]
            if not result.fits:
                failures.append(_does_not_fit(scenario, result))
                continue
            waves = waves or result.waves > 1
            values.append(value_of(result))
        if not values:
            return None
        return max(values) if higher_is_better else min(values)

    values: list[float] = []
    for case in spec.cases:
        sides = [side_value(case, side) for side in spec.sides]
        if any(v is None for v in sides):
            continue
        if spec.ratio:
            numerator, denominator = sides
            if not denominator or not math.isfinite(numerator / denominator):
                continue
            values.append(numerator / denominator)
        elif sides[0] is not None and math.isfinite(sides[0]):
            values.append(sides[0])
    cases = len(spec.cases)
    if not values:
        return Prediction(None, None, None, cases, 0, failures[0] if failures else "no finite prediction", waves)
    value = {"median": statistics.median, "max": max, "min": min}[spec.aggregate](values)
    status = None
    if len(values) < cases:
        status = f"{cases - len(values)} of {cases} configurations do not fit: {failures[0]}"
    return Prediction(value, min(values), max(values), cases, len(values), status, waves)


def _does_not_fit(scenario: Scenario, result: Result) -> str:
    text = f"does not fit on {scenario.accelerator} (tp={scenario.tp}, pp={scenario.pp}): {result.fit_reason}"
    if result.tp_needed:
        text += f"; needs tp={result.tp_needed}"
    elif result.offload_needed < 0:
        text += "; no tensor parallelism up to 65,536 or offload makes it fit"
    return text


@dataclass(frozen=True)
class RowReport:
    row: Measurement
    accelerator_key: str  # the accelerator, or several joined by '+' for a sweep over them
    group: str
    calibrated: Prediction | None
    ideal: Prediction | None
    # A server-scenario row: what each of its scenarios' capacity searches found, per model.
    server: tuple[ServerCapacity, ...] = ()
    ideal_server: tuple[ServerCapacity, ...] = ()

    def ratio(self, which: str) -> float | None:
        prediction = self.calibrated if which == "calibrated" else self.ideal
        return None if prediction is None else prediction.ratio_to(self.row.published)

    def off(self, which: str = "calibrated") -> bool:
        ratio = self.ratio(which)
        return ratio is not None and not (1.0 / OFF_FACTOR <= ratio <= OFF_FACTOR)


@dataclass(frozen=True)
class ClaimReport:
    claim: Claim
    calibrated: Prediction | None
    ideal: Prediction | None
    computed_as: str | None = None  # a study's definition of what it computed, and its notes

    def verdict(self, prediction: Prediction | None) -> str:
        if prediction is None or prediction.value is None:
            return self.claim.status if prediction is None else f"cannot compute: {prediction.status}"
        published = self.claim.published
        value = prediction.value
        if published.is_range:
            if published.low <= value <= published.high:
                return "inside the claimed range"
            side = "below" if value < published.low else "above"
            return f"{side} the claimed range ({value / published.value:.3g}x its midpoint)"
        return f"{value / published.value:.3g}x the claim ({value - published.value:+.3g} {self.claim.unit})"


@dataclass(frozen=True)
class Stats:
    n: int
    median_abs_pct_error: float | None
    worst_abs_pct_error: float | None
    worst_id: str | None
    median_ratio: float | None  # below 1: the model under-predicts
    off_by_2x: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "median_abs_pct_error": finite_or_none(self.median_abs_pct_error),
            "worst_abs_pct_error": finite_or_none(self.worst_abs_pct_error),
            "worst_id": self.worst_id,
            "median_ratio": finite_or_none(self.median_ratio),
            "off_by_2x": self.off_by_2x,
        }


def abs_pct_error(ratio: float) -> float:
    return abs(ratio - 1.0) * 100.0


def stats(rows: Sequence[RowReport], which: str) -> Stats:
    pairs = [(row.row.id, row.ratio(which)) for row in rows]
    pairs = [(identifier, ratio) for identifier, ratio in pairs if ratio is not None]
    if not pairs:
        return Stats(0, None, None, None, None, 0)
    errors = [(abs_pct_error(ratio), identifier) for identifier, ratio in pairs]
    worst, worst_id = max(errors)
    return Stats(
        n=len(pairs),
        median_abs_pct_error=statistics.median(e for e, _ in errors),
        worst_abs_pct_error=worst,
        worst_id=worst_id,
        median_ratio=statistics.median(r for _, r in pairs),
        off_by_2x=sum(1 for _, r in pairs if not (1.0 / OFF_FACTOR <= r <= OFF_FACTOR)),
    )


POPULATIONS: dict[str, str] = {
    "measured": "the papers' measurements (kind = measured)",
    "other": "other published figures (vendor claims, projections, specifications, third-party benchmarks, limits)",
}


def _population(row: RowReport) -> str:
    return "measured" if row.row.kind == MEASURED else "other"


def summaries(rows: Sequence[RowReport], which: str) -> dict[str, dict[str, Any]]:
    """Per population: overall, by group (GPUs / dataflow / other), by accelerator, by metric.
    Only rows counted in statistics with a prediction take part."""
    out: dict[str, dict[str, Any]] = {}
    for population in POPULATIONS:
        members = [r for r in rows if r.row.in_statistics and _population(r) == population]

        def by(key: Callable[[RowReport], str], members: list[RowReport] = members) -> dict[str, dict[str, Any]]:
            buckets: dict[str, list[RowReport]] = {}
            for row in members:
                buckets.setdefault(key(row), []).append(row)
            return {name: stats(bucket, which).to_dict() for name, bucket in sorted(buckets.items())}

        out[population] = {
            "all": stats(members, which).to_dict(),
            "by_group": by(lambda r: r.group),
            "by_accelerator": by(lambda r: r.accelerator_key),
            "by_metric": by(lambda r: r.row.metric),
        }
    return out


@dataclass(frozen=True)
class Target:
    name: str
    limit: str
    value: str
    met: bool

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "limit": self.limit, "value": self.value, "met": self.met}


def targets(rows: Sequence[RowReport]) -> list[Target]:
    out = []
    measured = [r for r in rows if r.row.in_statistics and _population(r) == "measured"]
    for group, limit in TARGETS.items():
        bucket = stats([r for r in measured if r.group == group], "calibrated")
        value = bucket.median_abs_pct_error
        out.append(Target(
            f"median |error| on {group} (papers' measurements, calibrated model)",
            f"<= {limit:g}%",
            "no rows" if value is None else f"{value:.1f}% over {bucket.n} rows",
            value is not None and value <= limit,
        ))
    unexplained = [r.row.id for r in rows if r.off() and r.row.explanation is None]
    out.append(Target(
        "predictions off by more than 2x without an explanation (all rows, calibrated model)",
        "0",
        f"{len(unexplained)}" + (f" ({', '.join(unexplained)})" if unexplained else ""),
        not unexplained,
    ))
    return out


@dataclass(frozen=True)
class Report:
    table: MeasurementTable
    rows: tuple[RowReport, ...]
    claims: tuple[ClaimReport, ...]
    summaries: dict[str, dict[str, dict[str, Any]]]  # "calibrated" / "ideal" -> population -> ...
    targets: tuple[Target, ...]


def validate(engine: Engine | None = None, table: MeasurementTable | None = None) -> Report:
    """Run the calibrated and the ideal engine on every row and claim of the table."""
    engine = engine or Engine()
    table = table or load_measurements(catalog=engine.catalog)
    ideal = ideal_engine(engine)
    specs = [row.spec for row in table.measurements if row.spec is not None and row.not_computed is None]
    specs += [claim.spec for claim in table.claims if claim.spec is not None]
    scenarios = [scenario for spec in specs for scenario in spec.scenarios()]
    calibrated_results = _evaluate_all(engine, scenarios)
    ideal_results = _evaluate_all(ideal, scenarios)
    requests = {
        engine.resolve(scenario): spec.requests
        for spec in specs
        if spec.requests is not None
        for scenario in spec.scenarios()
    }
    fixed_batch = {
        engine.resolve(scenario)
        for spec in specs
        if spec.requests is not None
        for scenario in spec.scenarios()
        if scenario.accelerator in spec.fixed_batch
    }
    calibrated_served = served_runs(engine, calibrated_results, requests, fixed_batch)
    ideal_served = served_runs(ideal, ideal_results, requests, fixed_batch)
    # Server scenarios are kept apart from the served runs: the same setup may be both.
    server_keys = {key for spec in specs if spec.server is not None for key in _server_keys(engine, spec)}
    calibrated_server = server_runs(engine, calibrated_results, server_keys)
    ideal_server = server_runs(ideal, ideal_results, server_keys)

    def both(spec: Spec | None) -> tuple[Prediction | None, Prediction | None]:
        if spec is None:
            return None, None
        if spec.server is not None:
            return (
                _predict(spec, *_server_results(engine, spec, calibrated_results, calibrated_server)),
                _predict(spec, *_server_results(engine, spec, ideal_results, ideal_server)),
            )
        if spec.requests is not None:
            return (
                _predict(spec, {**calibrated_results, **calibrated_served}),
                _predict(spec, {**ideal_results, **ideal_served}),
            )
        return _predict(spec, calibrated_results), _predict(spec, ideal_results)

    rows = []
    for row in table.measurements:
        calibrated, ideal_prediction = both(row.spec if row.not_computed is None else None)
        swept = row.spec is not None and "accelerator" in _sweep_keys(row.spec)
        accelerators = row.spec.accelerators() if swept else [row.accelerator]
        architecture = engine.catalog.accelerator(row.accelerator).architecture_class
        server_spec = row.spec if row.not_computed is None and row.spec is not None and row.spec.server else None
        rows.append(RowReport(
            row=row,
            accelerator_key="+".join(accelerators),
            group=GROUPS.get(architecture, OTHER_GROUP),
            calibrated=calibrated,
            ideal=ideal_prediction,
            server=_server_found(engine, server_spec, calibrated_server),
            ideal_server=_server_found(engine, server_spec, ideal_server),
        ))
    studied = _study_claims(engine, table.claims)
    claims = tuple(
        ClaimReport(claim, studied[claim.id][0], None, studied[claim.id][1]) if claim.id in studied
        else ClaimReport(claim, *both(claim.spec))
        for claim in table.claims
    )
    return Report(
        table=table,
        rows=tuple(rows),
        claims=claims,
        summaries={which: summaries(rows, which) for which in ("calibrated", "ideal")},
        targets=tuple(targets(rows)),
    )


def _server_keys(engine: Engine, spec: Spec) -> list[ServerKey]:
    return [(engine.resolve(scenario), spec.requests, spec.server) for scenario in spec.scenarios()]


def _server_results(
    engine: Engine, spec: Spec, static: Mapping[Scenario, Result], found: Mapping[ServerKey, ServerCapacity]
) -> tuple[dict[Scenario, Result], dict[Scenario, str]]:
    """A server row's results (its scenarios' runs at capacity, the static result where the
    static batch does not fit) and the scenarios with no capacity, and why."""
    results = dict(static)
    unavailable: dict[Scenario, str] = {}
    for scenario, key in zip(spec.scenarios(), _server_keys(engine, spec), strict=True):
        capacity = found.get(key)
        if capacity is None:
            continue
        if capacity.result is None:
            unavailable[scenario] = capacity.reason
        else:
            results[scenario] = capacity.result
    return results, unavailable


def _server_found(
    engine: Engine, spec: Spec | None, found: Mapping[ServerKey, ServerCapacity]
) -> tuple[ServerCapacity, ...]:
    if spec is None:
        return ()
    return tuple(found[key] for key in dict.fromkeys(_server_keys(engine, spec)) if key in found)


def _study_claims(engine: Engine, claims: Sequence[Claim]) -> dict[str, tuple[Prediction, str]]:
    """Values of the claims a study computes (the scaling study's 8.4x and 2.1x and its 700B
    MoE against a 70B dense model, the regime study's 3.7x, the cost of a memory pool against
    its 22% lower TCO), with what each computed, by claim id."""
    wanted = {claim.id for claim in claims if claim.status == "computed by a study"}
    if not wanted:
        return {}
    checks = []
    if wanted & {"s25-ep-parameter-to-compute-8.4x", "s25-ep-latency-variance-2.1x"}:
        checks += claims_check(engine)
    if "s25-architecture-spread-3.7x" in wanted:
        checks.append(architecture_spread_check(engine))
    if "s25-ep-moe-700b-like-70b" in wanted:
        checks.append(moe_like_dense_check(engine))
    if "s25-disaggregation-tco-22pct" in wanted:
        checks.append(disaggregation_tco_check(engine))
    out = {}
    for check in checks:
        if check.claim_id in wanted:
            value = check.computed_value
            prediction = Prediction(value=value, low=value, high=value, cases=1, computed_cases=1,
                                    status=None, waves=False)
            out[check.claim_id] = (prediction, f"{check.definition}. Setup: {check.setup}. {check.note}")
    return out


def _sweep_keys(spec: Spec) -> set[str]:
    return {key for case in spec.cases for key in case}
