"""The model against the papers: published measurements and claims, and how far the engine is
from each.

``resources/measurements.toml`` holds every number the two source papers state (with its
setup, what the metric counts and where it is printed) and the first paper's claims;
``resources/measurements.md`` explains it. :func:`validate` runs the engine on every setup,
twice — with the calibrated constants and with a *pure roofline* whose efficiencies are all 1,
whose per-layer overhead is 0 and whose serving stacks are all at 1.0 (usable memory fraction
and runtime overhead stay as calibrated: they decide what fits, not how fast it runs) — and
returns the predicted/published ratio of every row with summary statistics.

A row may describe one configuration, a ratio between two (two engine runs), or a statement
over several configurations (a sweep, reduced by its median, maximum or minimum). Nothing
here changes a constant: this module only measures.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any

from ..catalog.catalog import Catalog
from ..catalog.reading import PathLike, TableReader, as_path, check_int, describe, read_toml_file
from ..core.accelerator import Accelerator
from ..core.constants import Constants
from ..core.errors import AccelscopeError, CatalogError
from ..core.precision import PRECISIONS
from ..core.scenario import MAX_BATCH, MAX_PARALLEL, MAX_TOKENS, Scenario
from ..core.sourced import Sourced
from ..physics.engine import Engine
from ..physics.results import Outputs, Result, result_from_column

# ---- vocabulary --------------------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    unit: str
    higher_is_better: bool
    get: Callable[[Result], float]
    description: str


METRICS: dict[str, Metric] = {
    "throughput_total_tok_s": Metric(
        "tokens/s", True, lambda r: r.throughput_total_tok_s, "input + output tokens per second, whole system"
    ),
    "throughput_output_tok_s": Metric(
        "tokens/s", True, lambda r: r.throughput_output_tok_s, "output tokens per second, whole system"
    ),
    "ttft_ms": Metric("ms", False, lambda r: r.ttft_s * 1e3, "time to first token"),
    "itl_ms": Metric("ms", False, lambda r: r.itl_s * 1e3, "inter-token latency"),
    "e2e_latency_s": Metric("s", False, lambda r: r.e2e_latency_s, "time until the batch's last token"),
    "power_w": Metric("W", False, lambda r: r.power_W, "mean power over the run, all devices"),
    "tokens_per_joule": Metric("tokens/J", True, lambda r: r.tokens_per_joule, "input + output tokens per joule"),
    "output_tokens_per_joule": Metric(
        "tokens/J", True, lambda r: r.output_tokens_per_joule, "output tokens per joule"
    ),
}
RATIO_PREFIX = "ratio_"
# Recorded because the papers print them, but no scenario output corresponds.
UNCOMPUTABLE_METRICS: dict[str, str] = {
    "latency_cov": "ratio",
    "scaling_efficiency": "ratio",
}

KINDS: tuple[str, ...] = (
    "measured",  # the authors measured it on the stated setup
    "third-party benchmark",  # a public benchmark of a service (e.g. LLMPerf)
    "vendor claim",  # a vendor's slide, keynote, press release or marketing figure
    "projection",  # extrapolated or projected, not measured
    "specification",  # a rating (TDP) used where a measurement would belong
    "benchmark limit",  # a benchmark's constraint printed as if it were a result
    "unattributed",  # stated without a source, and in conflict with the paper's own table
)
MEASURED = "measured"
AGGREGATES: tuple[str, ...] = ("median", "max", "min")
SWEEP_KEYS: tuple[str, ...] = ("accelerator", "model", "batch", "offload")
# "computed by a study": the number comes from a study module rather than scenario runs
# (STUDY_CLAIMS says which); the reason then names the study.
CLAIM_STATUSES: tuple[str, ...] = ("computed", "computed by a study", "not computed yet", "not computable")

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

IDEAL_DESCRIPTION = (
    "pure roofline: compute, memory, host-link and interconnect efficiency 1.0, per-layer overhead 0, "
    "no busy power floor, every serving stack at 1.0; usable memory fraction and runtime overhead kept as calibrated "
    "(they decide what fits, not how fast it runs); energy per FLOP then follows from TDP at full peak"
)

_ROW_KEYS = (
    "id", "paper", "where", "quote", "kind", "flags", "accelerator", "devices", "model", "precision",
    "layout", "batch", "workload", "input_len", "output_len", "assumed", "metric", "value", "low",
    "high", "unit", "counts", "numerator", "denominator", "sweep", "aggregate", "best_of",
    "derived_from", "duplicate_of", "not_computed", "explanation", "note",
)
_CLAIM_KEYS = (
    "id", "paper", "where", "quote", "statement", "value", "low", "high", "unit", "setup", "status",
    "reason", "metric", "accelerator", "model", "precision", "layout", "batch", "workload",
    "input_len", "output_len", "numerator", "denominator", "sweep", "aggregate", "best_of", "note",
)
_OVERRIDE_KEYS = ("accelerator", "model", "precision", "layout", "batch", "workload", "input_len", "output_len")
_SIDE_KEYS = (*_OVERRIDE_KEYS, "best_of")
_PRECISION_KEYS = {"weights": "weight_precision", "activations": "activation_precision", "kv": "kv_precision"}
_LAYOUT_KEYS = ("tp", "pp", "ep", "dp", "offload")
_ASSUMABLE = ("accelerator", "model", "precision", "layout", "batch", "input_len", "output_len")
_MAX_VALUE = 1e12


# ---- the table ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Paper:
    key: str
    short: str
    citation: str


@dataclass(frozen=True)
class Workload:
    name: str
    input_len: int
    output_len: int
    basis: str
    # A served run of this many requests (each its own output length, exponentially
    # distributed about output_len) rather than one static batch; None for a static batch.
    requests: int | None = None
    requests_basis: str | None = None
    # Accelerators whose runs of this workload were served from fixed-batch images: each batch
    # of requests runs until its longest reply finishes before the next batch starts.
    fixed_batch: tuple[str, ...] = ()
    fixed_batch_basis: str | None = None


@dataclass(frozen=True)
class Published:
    """A stated number, or a stated range (compared at its midpoint)."""

    value: float
    low: float | None = None
    high: float | None = None

    @property
    def is_range(self) -> bool:
        return self.low is not None

    def text(self) -> str:
        if self.is_range:
            return f"{_num(self.low)}-{_num(self.high)}"
        return _num(self.value)


@dataclass(frozen=True)
class Side:
    overrides: dict[str, Any]
    best_of: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Spec:
    """How the engine computes a row: a base scenario, the cases of a sweep, and one side (a
    plain metric) or two (a ratio, numerator over denominator)."""

    base: dict[str, Any]
    metric: str  # a key of METRICS
    ratio: bool
    sides: tuple[Side, ...]  # (single,) or (numerator, denominator)
    cases: tuple[dict[str, Any], ...]
    aggregate: str
    best_of: tuple[dict[str, Any], ...] = ()
    requests: int | None = None  # a served run of this many requests (see served_runs)
    fixed_batch: tuple[str, ...] = ()  # accelerators served from fixed-batch images (see served_runs)

    def scenario(self, case: Mapping[str, Any], side: Side, candidate: Mapping[str, Any]) -> Scenario:
        fields = dict(self.base)
        for layer in (case, side.overrides, candidate):
            fields.update(layer)
        return Scenario(**fields)

    def candidates(self, side: Side) -> tuple[dict[str, Any], ...]:
        return side.best_of or self.best_of or ({},)

    def scenarios(self) -> list[Scenario]:
        return [
            self.scenario(case, side, candidate)
            for case in self.cases
            for side in self.sides
            for candidate in self.candidates(side)
        ]

    def accelerators(self) -> list[str]:
        """Every accelerator the row runs, in order of first use."""
        seen: dict[str, None] = {}
        for scenario in self.scenarios():
            seen.setdefault(scenario.accelerator, None)
        return list(seen)


@dataclass(frozen=True)
class Measurement:
    index: int
    id: str
    paper: str
    where: str
    quote: str
    kind: str
    flags: str
    accelerator: str
    devices: str
    model: str
    metric: str
    published: Published
    unit: str
    counts: str
    spec: Spec | None  # None for metrics no scenario output corresponds to
    assumed: tuple[str, ...] = ()
    derived_from: tuple[str, ...] = ()
    duplicate_of: str | None = None
    not_computed: str | None = None
    explanation: str | None = None
    note: str | None = None

    @property
    def in_statistics(self) -> bool:
        """Counted in the summaries: computable, and neither a quotient of other rows nor a
        restatement of their measurements."""
        return self.not_computed is None and not self.derived_from and self.duplicate_of is None


@dataclass(frozen=True)
class Claim:
    index: int
    id: str
    paper: str
    where: str
    quote: str
    statement: str
    published: Published
    unit: str
    setup: str
    status: str
    reason: str | None
    metric: str | None
    spec: Spec | None
    note: str | None = None


@dataclass(frozen=True)
class MeasurementTable:
    path: str
    papers: dict[str, Paper]
    workloads: dict[str, Workload]
    measurements: tuple[Measurement, ...]
    claims: tuple[Claim, ...]


def default_path() -> PathLike:
    return resources.files("accelscope.resources") / "measurements.toml"


def load_measurements(path: PathLike | None = None, catalog: Catalog | None = None) -> MeasurementTable:
    """Read and check the table. Every problem is a CatalogError naming the file and the field;
    with a catalog, ids are checked against it and every setup must be a valid scenario."""
    source = as_path(path if path is not None else default_path())
    top = TableReader(source, read_toml_file(source))
    top.reject_unknown(("papers", "workload", "measurement", "claim"))

    papers: dict[str, Paper] = {}
    papers_reader = top.sub("papers")
    for key in papers_reader.table:
        reader = papers_reader.sub(key)
        reader.reject_unknown(("short", "citation"))
        papers[key] = Paper(key, _text(reader, "short"), _text(reader, "citation"))

    workloads: dict[str, Workload] = {}
    workload_reader = top.sub("workload")
    for name in workload_reader.table:
        reader = workload_reader.sub(name)
        reader.reject_unknown(
            ("input_len", "output_len", "basis", "requests", "requests_basis", "fixed_batch", "fixed_batch_basis")
        )
        requests = reader.integer("requests", minimum=1, maximum=MAX_BATCH) if reader.has("requests") else None
        if requests is not None and not reader.has("requests_basis"):
            raise reader.error("requests_basis", "a served run's request count needs its basis")
        fixed_batch = _fixed_batch(reader, catalog, requests)
        workloads[name] = Workload(
            name,
            reader.integer("input_len", maximum=MAX_TOKENS),
            reader.integer("output_len", maximum=MAX_TOKENS),
            _text(reader, "basis"),
            requests,
            _text(reader, "requests_basis") if requests is not None else None,
            fixed_batch,
            _text(reader, "fixed_batch_basis") if fixed_batch else None,
        )

    context = _Context(source, papers, workloads, catalog)
    measurements = tuple(
        _measurement(context, TableReader(source, _table(top, "measurement", i, entry), f"measurement[{i}]."), i)
        for i, entry in enumerate(top.array("measurement"))
    )
    claims = tuple(
        _claim(context, TableReader(source, _table(top, "claim", i, entry), f"claim[{i}]."), i)
        for i, entry in enumerate(top.array("claim", []))
    )

    ids: dict[str, int] = {}
    for entry in measurements:
        if entry.id in ids:
            raise CatalogError(source, f"measurement[{entry.index}].id", f"duplicate id {entry.id!r}")
        ids[entry.id] = entry.index
    for entry in measurements:
        for position, other in enumerate(entry.derived_from):
            if other not in ids or other == entry.id:
                raise CatalogError(
                    source, f"measurement[{entry.index}].derived_from[{position}]", f"no other row has id {other!r}"
                )
        if entry.duplicate_of is not None and (entry.duplicate_of not in ids or entry.duplicate_of == entry.id):
            raise CatalogError(
                source, f"measurement[{entry.index}].duplicate_of", f"no other row has id {entry.duplicate_of!r}"
            )
    claim_ids: set[str] = set()
    for claim in claims:
        if claim.id in claim_ids:
            raise CatalogError(source, f"claim[{claim.index}].id", f"duplicate id {claim.id!r}")
        claim_ids.add(claim.id)
    return MeasurementTable(str(source), papers, workloads, measurements, claims)


def _fixed_batch(reader: TableReader, catalog: Catalog | None, requests: int | None) -> tuple[str, ...]:
    """The workload's accelerators served from fixed-batch images, checked against the catalog."""
    if not reader.has("fixed_batch"):
        return ()
    if requests is None:
        raise reader.error("fixed_batch", "only a served run (one with requests) has a batching policy")
    if not reader.has("fixed_batch_basis"):
        raise reader.error("fixed_batch_basis", "a batching policy needs its basis")
    values = reader.table["fixed_batch"]
    if not isinstance(values, list) or not values:
        raise reader.error("fixed_batch", f"must be a non-empty list of accelerator ids, got {describe(values)}")
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise reader.error(f"fixed_batch[{i}]", f"must be an accelerator id, got {describe(value)}")
        if catalog is not None and value not in catalog.accelerators:
            raise reader.error(f"fixed_batch[{i}]", f"unknown accelerator id {value!r} (not in the catalog)")
    return tuple(values)


@dataclass(frozen=True)
class _Context:
    path: object
    papers: dict[str, Paper]
    workloads: dict[str, Workload]
    catalog: Catalog | None


def _table(top: TableReader, key: str, index: int, entry: object) -> Mapping[str, Any]:
    if not isinstance(entry, Mapping):
        raise CatalogError(top.path, f"{key}[{index}]", f"must be a table, got {describe(entry)}")
    return entry


def _text(reader: TableReader, key: str, default: Any = ...) -> Any:
    if default is ... or reader.has(key):
        value = reader.string(key)
        if not value.strip():
            raise reader.error(key, "must not be empty")
        return value
    return default


def _optional_text(reader: TableReader, key: str) -> str | None:
    return _text(reader, key, None)


def _published(reader: TableReader, *, allow_zero: bool = False) -> Published:
    def number(key: str) -> float:
        value = reader.table[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise reader.error(key, f"must be a number, got {describe(value)}")
        if not (0 <= value if allow_zero else 0 < value) or value > _MAX_VALUE:
            raise reader.error(key, f"must be > 0 and at most {_MAX_VALUE:g}, got {value!r}")
        return float(value)

    if reader.has("value"):
        if reader.has("low") or reader.has("high"):
            raise reader.error("value", "give either value or low and high, not both")
        return Published(number("value"))
    if reader.has("low") and reader.has("high"):
        low, high = number("low"), number("high")
        if not low < high:
            raise reader.error("high", f"must be above low ({low:g}), got {high:g}")
        return Published((low + high) / 2.0, low, high)
    raise reader.error("value", "required field is missing (or give low and high for a range)")


def _base_metric(reader: TableReader, metric: str) -> tuple[str | None, bool]:
    """(scenario metric or None when uncomputable, is a ratio)."""
    if metric in METRICS:
        return metric, False
    if metric.startswith(RATIO_PREFIX) and metric[len(RATIO_PREFIX):] in METRICS:
        return metric[len(RATIO_PREFIX):], True
    if metric in UNCOMPUTABLE_METRICS:
        return None, False
    known = [*METRICS, *(RATIO_PREFIX + m for m in METRICS), *UNCOMPUTABLE_METRICS]
    raise reader.error("metric", f"unknown metric {metric!r}; expected one of: {', '.join(known)}")


def _metric_unit(metric: str) -> str:
    if metric.startswith(RATIO_PREFIX):
        return "ratio"
    return METRICS[metric].unit if metric in METRICS else UNCOMPUTABLE_METRICS[metric]


def _overrides(context: _Context, reader: TableReader, allowed: Sequence[str]) -> dict[str, Any]:
    """Scenario fields a setup table gives (all of them optional here)."""
    reader.reject_unknown(allowed)
    fields: dict[str, Any] = {}
    if reader.has("accelerator"):
        value = _text(reader, "accelerator")
        _check_id(context, reader, "accelerator", value)
        fields["accelerator"] = value
    if reader.has("model"):
        value = _text(reader, "model")
        _check_id(context, reader, "model", value)
        fields["model"] = value
    if reader.has("precision"):
        precision = reader.sub("precision")
        precision.reject_unknown(tuple(_PRECISION_KEYS))
        for key, name in _PRECISION_KEYS.items():
            if precision.has(key):
                value = precision.string(key)
                if value not in PRECISIONS:
                    raise precision.error(key, f"must be one of {', '.join(PRECISIONS)}, got {value!r}")
                fields[name] = value
    if reader.has("layout"):
        layout = reader.sub("layout")
        layout.reject_unknown(_LAYOUT_KEYS)
        for key in ("tp", "pp", "ep", "dp"):
            if layout.has(key):
                fields[key] = layout.integer(key, maximum=MAX_PARALLEL)
        if layout.has("offload"):
            fields["offload"] = _fraction(layout, "offload", layout.table["offload"])
    if reader.has("batch"):
        fields["batch"] = reader.integer("batch", maximum=MAX_BATCH)
    if reader.has("workload"):
        if reader.has("input_len") or reader.has("output_len"):
            raise reader.error("workload", "give a workload or input_len and output_len, not both")
        name = reader.string("workload")
        if name not in context.workloads:
            raise reader.error("workload", f"unknown workload {name!r}; known: {', '.join(context.workloads)}")
        fields["input_len"] = context.workloads[name].input_len
        fields["output_len"] = context.workloads[name].output_len
    for key in ("input_len", "output_len"):
        if reader.has(key):
            fields[key] = reader.integer(key, maximum=MAX_TOKENS)
    return fields


def _fraction(reader: TableReader, key: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
        math.isfinite(value) and 0.0 <= value <= 1.0
    ):
        raise reader.error(key, f"must be a fraction between 0 and 1, got {describe(value)}")
    return float(value)


def _check_id(context: _Context, reader: TableReader, key: str, value: str, kind: str | None = None) -> None:
    kind = kind or key
    if context.catalog is None:
        return
    known = context.catalog.accelerators if kind == "accelerator" else context.catalog.models
    if value not in known:
        raise reader.error(key, f"unknown {kind} id {value!r} (not in the catalog)")


def _side(context: _Context, reader: TableReader) -> Side:
    overrides = _overrides(context, reader, _SIDE_KEYS)
    return Side(overrides, _best_of(context, reader))


def _best_of(context: _Context, reader: TableReader) -> tuple[dict[str, Any], ...]:
    if not reader.has("best_of"):
        return ()
    entries = reader.array("best_of")
    if not entries:
        raise reader.error("best_of", "must list at least one candidate setup")
    candidates = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise CatalogError(reader.path, f"{reader.field('best_of')}[{i}]", f"must be a table, got {describe(entry)}")
        candidates.append(_overrides(context, TableReader(reader.path, entry, f"{reader.field('best_of')}[{i}]."), _OVERRIDE_KEYS))
    return tuple(candidates)


def _spec(context: _Context, reader: TableReader, metric: str, ratio: bool) -> Spec:
    """The base setup (row fields), the sweep and the sides; every scenario is checked."""
    base = _overrides(context, TableReader(reader.path, {k: v for k, v in reader.table.items() if k in _OVERRIDE_KEYS}, reader.prefix), _OVERRIDE_KEYS)
    for key in ("accelerator", "model", "batch"):
        if key not in base:
            raise reader.error(key, "required field is missing")
    for name in _PRECISION_KEYS.values():
        if name not in base:
            raise reader.error("precision", "required: weights, activations and kv")
    if "input_len" not in base or "output_len" not in base:
        raise reader.error("workload", "required: a workload, or input_len and output_len")
    base = {"tp": 1, "pp": 1, "ep": 1, "dp": 1, "offload": 0.0, **base}

    if ratio:
        for key in ("numerator", "denominator"):
            if not reader.has(key):
                raise reader.error(key, f"a ratio metric needs a {key} (the setup changes of that side)")
        sides: tuple[Side, ...] = (_side(context, reader.sub("numerator")), _side(context, reader.sub("denominator")))
    else:
        for key in ("numerator", "denominator"):
            if reader.has(key):
                raise reader.error(key, "only a ratio_* metric has a numerator and denominator")
        sides = (Side({}),)

    cases: tuple[dict[str, Any], ...] = ({},)
    if reader.has("sweep"):
        sweep = reader.sub("sweep")
        sweep.reject_unknown(SWEEP_KEYS)
        if not sweep.table:
            raise reader.error("sweep", "must list at least one field")
        axes: list[list[tuple[str, Any]]] = []
        for key, values in sweep.table.items():
            if not isinstance(values, list) or not values:
                raise sweep.error(key, f"must be a non-empty list, got {describe(values)}")
            axis = []
            for i, value in enumerate(values):
                item = f"{key}[{i}]"
                if key == "offload":
                    axis.append((key, _fraction(sweep, item, value)))
                elif key == "batch":
                    axis.append((key, check_int(sweep, item, value, minimum=1, maximum=MAX_BATCH)))
                else:
                    if not isinstance(value, str):
                        raise sweep.error(item, f"must be a string, got {describe(value)}")
                    _check_id(context, sweep, item, value, kind=key)
                    axis.append((key, value))
            axes.append(axis)
        cases = tuple(dict(combination) for combination in itertools.product(*axes))

    aggregate = "median"
    if reader.has("aggregate"):
        aggregate = reader.string("aggregate")
        if aggregate not in AGGREGATES:
            raise reader.error("aggregate", f"must be one of {', '.join(AGGREGATES)}, got {aggregate!r}")

    requests = None
    fixed_batch: tuple[str, ...] = ()
    if reader.has("workload"):
        workload = context.workloads[reader.string("workload")]
        requests, fixed_batch = workload.requests, workload.fixed_batch
    spec = Spec(base, metric, ratio, sides, cases, aggregate, _best_of(context, reader), requests, fixed_batch)
    for scenario in spec.scenarios():
        try:
            scenario.validate()
            problem = _impossible_layout(scenario, context.catalog)
        except AccelscopeError as error:
            problem = str(error)
        if problem:
            raise CatalogError(reader.path, reader.prefix.rstrip("."), f"a setup is not a valid scenario: {problem}")
    return spec


def _impossible_layout(scenario: Scenario, catalog: Catalog | None) -> str | None:
    """A layout that cannot exist (not one that merely does not fit): the table has a mistake."""
    if scenario.tp % scenario.ep:
        return f"ep={scenario.ep} must divide tp={scenario.tp}"
    if catalog is None:
        return None
    model = catalog.model(scenario.model)
    accelerator = catalog.accelerator(scenario.accelerator)
    if scenario.ep > 1 and model.moe is None:
        return f"ep={scenario.ep} on {model.id}, which is dense"
    if model.moe is not None and scenario.ep > model.moe.n_routed_experts:
        return f"ep={scenario.ep} exceeds the {model.moe.n_routed_experts} experts of {model.id}"
    if scenario.pp > model.n_layers:
        return f"pp={scenario.pp} exceeds the {model.n_layers} layers of {model.id}"
    if (scenario.offload > 0 or scenario.kv_offload > 0) and accelerator.tier("far") is None:
        return f"offload on {accelerator.id}, which has no far memory tier"
    return None


def _common(context: _Context, reader: TableReader) -> tuple[str, str, str, str]:
    identifier = _text(reader, "id")
    if not all(c.islower() or c.isdigit() or c in "-." for c in identifier):
        raise reader.error("id", f"use lowercase letters, digits, dots and dashes, got {identifier!r}")
    paper = _text(reader, "paper")
    if paper not in context.papers:
        raise reader.error("paper", f"unknown paper {paper!r}; known: {', '.join(context.papers)}")
    return identifier, paper, _text(reader, "where"), _text(reader, "quote")


def _measurement(context: _Context, reader: TableReader, index: int) -> Measurement:
    reader.reject_unknown(_ROW_KEYS)
    identifier, paper, where, quote = _common(context, reader)
    kind = _text(reader, "kind")
    if kind not in KINDS:
        raise reader.error("kind", f"must be one of: {', '.join(KINDS)}; got {kind!r}")
    metric_name = _text(reader, "metric")
    base_metric, ratio = _base_metric(reader, metric_name)
    unit = _text(reader, "unit")
    if unit != _metric_unit(metric_name):
        raise reader.error("unit", f"{metric_name} is in {_metric_unit(metric_name)!r}, got {unit!r}")
    published = _published(reader)
    not_computed = _optional_text(reader, "not_computed")
    if base_metric is None and not_computed is None:
        raise reader.error("not_computed", f"{metric_name} has no scenario output: say why it is not computed")
    spec = _spec(context, reader, base_metric or "throughput_total_tok_s", ratio)
    assumed = tuple(reader.array("assumed", []))
    for i, value in enumerate(assumed):
        if value not in _ASSUMABLE:
            raise CatalogError(
                reader.path, f"{reader.field('assumed')}[{i}]",
                f"must be one of {', '.join(_ASSUMABLE)}, got {describe(value)}",
            )
    derived = tuple(reader.array("derived_from", []))
    for i, value in enumerate(derived):
        if not isinstance(value, str):
            raise CatalogError(reader.path, f"{reader.field('derived_from')}[{i}]", "must be a row id")
    return Measurement(
        index=index,
        id=identifier,
        paper=paper,
        where=where,
        quote=quote,
        kind=kind,
        flags=_text(reader, "flags", ""),
        accelerator=spec.base["accelerator"],
        devices=_text(reader, "devices"),
        model=spec.base["model"],
        metric=metric_name,
        published=published,
        unit=unit,
        counts=_text(reader, "counts"),
        spec=spec if base_metric is not None else None,
        assumed=assumed,
        derived_from=derived,
        duplicate_of=_optional_text(reader, "duplicate_of"),
        not_computed=not_computed,
        explanation=_optional_text(reader, "explanation"),
        note=_optional_text(reader, "note"),
    )


def _claim(context: _Context, reader: TableReader, index: int) -> Claim:
    reader.reject_unknown(_CLAIM_KEYS)
    identifier, paper, where, quote = _common(context, reader)
    status = _text(reader, "status")
    if status not in CLAIM_STATUSES:
        raise reader.error("status", f"must be one of: {', '.join(CLAIM_STATUSES)}; got {status!r}")
    published = _published(reader, allow_zero=False)
    metric = None
    spec = None
    reason = _optional_text(reader, "reason")
    if status == "computed":
        metric = _text(reader, "metric")
        base_metric, ratio = _base_metric(reader, metric)
        if base_metric is None:
            raise reader.error("metric", f"{metric} cannot be computed")
        spec = _spec(context, reader, base_metric, ratio)
    elif reason is None:
        raise reader.error("reason", "a claim that is not computed needs a reason")
    return Claim(
        index=index,
        id=identifier,
        paper=paper,
        where=where,
        quote=quote,
        statement=_text(reader, "statement"),
        published=published,
        unit=_text(reader, "unit"),
        setup=_text(reader, "setup"),
        status=status,
        reason=reason,
        metric=metric,
        spec=spec,
        note=_optional_text(reader, "note"),
    )


# ---- the two engines -----------------------------------------------------------------------


def ideal_constants(constants: Constants) -> Constants:
    """The calibrated constants with every efficiency at 1, no per-layer, host or collective
    overhead, the roofline of the whole pass (operators overlapped) and no busy power floor
    (power is idle plus the energy of the work)."""
    classes = {
        name: replace(
            values,
            compute_efficiency=1.0,
            memory_efficiency=1.0,
            link_efficiency=1.0,
            interconnect_efficiency=1.0,
            per_layer_overhead_s=0.0,
            busy_power_fraction=0.0,
            step_overhead_s=0.0,
            sequence_overhead_s=0.0,
            operator_overlap=1.0,
            collective_overhead_s=0.0,
            activation_quantization_overhead_s=0.0,
        )
        for name, values in constants.classes.items()
    }
    return replace(constants, classes=classes)


def ideal_catalog(catalog: Catalog) -> Catalog:
    """The catalog with every serving stack at the reference maturity (1.0)."""
    accelerators: dict[str, Accelerator] = {
        key: replace(
            accelerator,
            software_efficiency=Sourced(1.0, "Ideal model: no serving-stack lag"),
        )
        for key, accelerator in catalog.accelerators.items()
    }
    return Catalog(accelerators, dict(catalog.models), list(catalog.problems))


def ideal_engine(engine: Engine) -> Engine:
    return Engine(ideal_catalog(engine.catalog), ideal_constants(engine.constants))


# ---- evaluation ----------------------------------------------------------------------------


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


@dataclass(frozen=True)
class ServedRun:
    """A served run of ``requests`` requests per instance (dp replicas), worked out from the
    engine's static-batch steps; see :func:`served_runs`."""

    concurrency: int  # requests in flight while the queue lasts
    time_s: float  # one instance, first prompt to last token
    energy_J: float  # all devices of all replicas
    drain_time_s: float  # of time_s: after the queue is empty


def served_runs(
    engine: Engine,
    results: Mapping[Scenario, Result],
    requests: Mapping[Scenario, int],
    fixed_batch: Collection[Scenario] = (),
) -> dict[Scenario, Result]:
    """Each scenario as one instance of a served run of ``requests[scenario]`` requests, all
    queued at the start, at most ``batch`` (and at most what memory holds) in flight: the
    second paper's offline runs of its 1,000-conversation dataset (vLLM continuous batching on
    GPUs; as many clients as the batch on the dataflow machines).

    Each request's prompt is prefilled when it joins; its decode steps are exponentially
    distributed about the workload's mean (output_len - 1). While the queue lasts, C requests
    run and each finished one is replaced at once; the queue empties after N - C completions,
    having produced (N - C)·m of the N·m decode tokens (m the mean), in (N - C)·m/C steps at
    the batch-C step time. By memorylessness the C requests left then each still need m steps
    on average, and with k left the next one finishes after m/k steps at the batch-k step time:
    the drain takes Σ_{k=1..C} (m/k)·ITL(k). Energy adds each phase's per-device power x time.
    With C = 1 this is N times the static batch of one; with a constant step time it is the
    static total plus m·ITL·(H_C − 1), the price of the tail.

    A scenario in ``fixed_batch`` is served from a fixed-batch image instead (the CS-3's and
    SN40L's pre-compiled artifacts): C requests start together, the batch runs at the batch-C
    step time until its longest reply finishes, and only then do the next C start. The longest
    of C exponential replies takes m·H_C steps on average (H_C the C-th harmonic number), so the
    run takes (N/C)·(prefill of C + m·H_C·ITL(C)). With C = 1 both policies are the same.

    Returns each scenario's static result with run time, throughput, power and energy (and
    tokens per joule) replaced by the served run's; TTFT and ITL stay those of the static
    batch."""
    if not requests:
        return {}
    plans: list[tuple[Scenario, int, int, bool]] = []  # scenario, concurrency, first column, fixed batch
    batches: list[Scenario] = []
    for scenario, result in results.items():
        if scenario not in requests or not result.fits:
            continue
        concurrency = max(1, min(result.memory.resident_batch, requests[scenario]))
        fixed = scenario in fixed_batch
        # A fixed-batch run only ever steps at batch C; a continuous one drains through every batch below.
        sizes = (concurrency,) if fixed else range(1, concurrency + 1)
        plans.append((scenario, concurrency, len(batches), fixed))
        batches.extend(scenario.with_changes(batch=k) for k in sizes)
    table = engine.evaluate(batches)
    served: dict[Scenario, Result] = {}
    for scenario, concurrency, first, fixed in plans:
        static = results[scenario]
        n = requests[scenario]
        m = max(scenario.output_len - 1, 0)
        last = first if fixed else first + concurrency - 1  # the batch-C column
        itl = float(Outputs(table).itl_s[last])
        decode_power = float(Outputs(table).decode.power_per_device_W[last])
        prefill_time = float(Outputs(table).prefill.time_s[last])
        prefill_power = float(Outputs(table).prefill.power_per_device_W[last])
        prefills = n / concurrency
        if fixed:
            # Every batch decodes for as long as its longest reply, all of it at batch C.
            full_steps = prefills * m * sum(1.0 / k for k in range(1, concurrency + 1))
            drain_time = drain_energy = 0.0
        else:
            full_steps = (n - concurrency) * m / concurrency
            columns = slice(first, first + concurrency)
            drain_steps = [m / k for k in range(1, concurrency + 1)]
            drain_itl = Outputs(table).itl_s[columns]
            drain_power = Outputs(table).decode.power_per_device_W[columns]
            drain_time = float(sum(steps * t for steps, t in zip(drain_steps, drain_itl, strict=True)))
            drain_energy = float(sum(
                steps * t * p for steps, t, p in zip(drain_steps, drain_itl, drain_power, strict=True)
            ))
        time = prefills * prefill_time + full_steps * itl + drain_time
        energy_per_device = (
            prefills * prefill_time * prefill_power
            + full_steps * itl * decode_power
            + drain_energy
        )
        energy = energy_per_device * static.devices
        dp = scenario.dp
        total_tokens = dp * n * (scenario.input_len + scenario.output_len)
        output_tokens = dp * n * scenario.output_len
        served[scenario] = replace(
            static,
            e2e_latency_s=time,
            throughput_output_tok_s=output_tokens / time,
            throughput_total_tok_s=total_tokens / time,
            power_W=energy / time,
            energy_J=energy,
            tokens_per_joule=total_tokens / energy,
            output_tokens_per_joule=output_tokens / energy,
        )
    return served


def setup_text(spec: Spec) -> str:
    """The setup a row's prediction runs, in words: batch, lengths, layout, precision, and how a
    served run schedules its requests."""
    base = spec.base
    layout = ", ".join(f"{key.upper()} {base[key]}" for key in ("tp", "pp", "ep", "dp") if base.get(key, 1) > 1)
    precision = "/".join(str(base[key]).upper() for key in _PRECISION_KEYS.values())
    parts = [f"batch {base['batch']:,}", f"{base['input_len']:,} input / {base['output_len']:,} output tokens"]
    if layout:
        parts.append(layout)
    parts.append(f"weights/activations/KV {precision}")
    text = ", ".join(parts)
    if spec.ratio:
        def changes(side: Side) -> str:
            return ", ".join(f"{key} {value}" for key, value in side.overrides.items()) or "the setup as is"
        numerator, denominator = spec.sides
        text += f"; ratio of ({changes(numerator)}) over ({changes(denominator)})"
    if len(spec.cases) > 1:
        text += f"; {spec.aggregate} over {len(spec.cases)} configurations"
    # A served run changes the run's totals; TTFT and ITL stay the static batch's (served_runs).
    if spec.requests is not None and not any(step in spec.metric for step in ("ttft", "itl")):
        fixed = [a for a in spec.accelerators() if a in spec.fixed_batch]
        text += f"; a served run of {spec.requests:,} requests"
        if fixed:
            text += (f" ({', '.join(fixed)} from fixed-batch images: each batch runs until its longest reply "
                     "finishes)")
        else:
            text += " (finished requests replaced at once, then the drain)"
    return text


def _predict(spec: Spec, results: Mapping[Scenario, Result]) -> Prediction:
    metric = METRICS[spec.metric]
    failures: list[str] = []
    waves = False

    def side_value(case: Mapping[str, Any], side: Side) -> float | None:
        nonlocal waves
        values = []
        for candidate in spec.candidates(side):
            scenario = spec.scenario(case, side, candidate)
            result = results[scenario]
            if not result.fits:
                failures.append(_does_not_fit(scenario, result))
                continue
            waves = waves or result.waves > 1
            values.append(metric.get(result))
        if not values:
            return None
        return max(values) if metric.higher_is_better else min(values)

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
            "median_abs_pct_error": _finite(self.median_abs_pct_error),
            "worst_abs_pct_error": _finite(self.worst_abs_pct_error),
            "worst_id": self.worst_id,
            "median_ratio": _finite(self.median_ratio),
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

    def to_dict(self) -> dict[str, Any]:
        table = self.table
        return {
            "source": table.path,
            "papers": {k: {"short": p.short, "citation": p.citation} for k, p in table.papers.items()},
            "workloads": {
                k: {
                    "input_len": w.input_len,
                    "output_len": w.output_len,
                    "basis": w.basis,
                    "requests": w.requests,
                    "requests_basis": w.requests_basis,
                    "fixed_batch": list(w.fixed_batch),
                    "fixed_batch_basis": w.fixed_batch_basis,
                }
                for k, w in table.workloads.items()
            },
            "ideal_model": IDEAL_DESCRIPTION,
            "measurements": [_row_dict(r) for r in self.rows],
            "summaries": self.summaries,
            "targets": [t.to_dict() for t in self.targets],
            "claims": [_claim_dict(c) for c in self.claims],
        }


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

    def both(spec: Spec | None) -> tuple[Prediction | None, Prediction | None]:
        if spec is None:
            return None, None
        if spec.requests is not None:
            return (
                _predict(spec, {**calibrated_results, **calibrated_served}),
                _predict(spec, {**ideal_results, **ideal_served}),
            )
        return _predict(spec, calibrated_results), _predict(spec, ideal_results)

    rows = []
    for row in table.measurements:
        calibrated, ideal_prediction = both(row.spec if row.not_computed is None else None)
        accelerators = row.spec.accelerators() if row.spec is not None and "accelerator" in _sweep_keys(row.spec) else [row.accelerator]
        architecture = engine.catalog.accelerator(row.accelerator).architecture_class
        rows.append(RowReport(
            row=row,
            accelerator_key="+".join(accelerators),
            group=GROUPS.get(architecture, OTHER_GROUP),
            calibrated=calibrated,
            ideal=ideal_prediction,
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


def _study_claims(engine: Engine, claims: Sequence[Claim]) -> dict[str, tuple[Prediction, str]]:
    """Values of the claims a study computes (the scaling study's 8.4x and 2.1x and its 700B
    MoE against a 70B dense model, the regime study's 3.7x), with what each computed, by claim
    id."""
    wanted = {claim.id for claim in claims if claim.status == "computed by a study"}
    if not wanted:
        return {}
    # Only run when asked: the scaling studies register synthetic models, the regimes cost ~30 ms.
    from ..studies.regimes import architecture_spread_check
    from ..studies.scaling import claims_check, moe_like_dense_check

    checks = []
    if wanted & {"s25-ep-parameter-to-compute-8.4x", "s25-ep-latency-variance-2.1x"}:
        checks += claims_check(engine)
    if "s25-architecture-spread-3.7x" in wanted:
        checks.append(architecture_spread_check(engine))
    if "s25-ep-moe-700b-like-70b" in wanted:
        checks.append(moe_like_dense_check(engine))
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


# ---- output ----------------------------------------------------------------------------------


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _prediction_dict(prediction: Prediction | None, published: Published) -> dict[str, Any] | None:
    if prediction is None:
        return None
    ratio = prediction.ratio_to(published)
    return {
        "predicted": _finite(prediction.value),
        "predicted_low": _finite(prediction.low),
        "predicted_high": _finite(prediction.high),
        "ratio": _finite(ratio),
        "abs_pct_error": None if ratio is None else _finite(abs_pct_error(ratio)),
        "off_by_2x": ratio is not None and not (1.0 / OFF_FACTOR <= ratio <= OFF_FACTOR),
        "configurations": prediction.cases,
        "configurations_computed": prediction.computed_cases,
        "status": prediction.status,
        "kv_waves": prediction.waves,
    }


def _published_dict(published: Published) -> dict[str, Any]:
    return {"value": published.value, "low": published.low, "high": published.high}


def _spec_dict(spec: Spec | None) -> dict[str, Any] | None:
    if spec is None:
        return None
    return {
        "base": dict(spec.base),
        "sweep": [dict(case) for case in spec.cases] if spec.cases != ({},) else [],
        "aggregate": spec.aggregate,
        "numerator": None if not spec.ratio else {"changes": spec.sides[0].overrides, "best_of": list(spec.sides[0].best_of)},
        "denominator": None if not spec.ratio else {"changes": spec.sides[1].overrides, "best_of": list(spec.sides[1].best_of)},
        "best_of": list(spec.best_of),
    }


def _row_dict(report: RowReport) -> dict[str, Any]:
    row = report.row
    return {
        "id": row.id,
        "paper": row.paper,
        "where": row.where,
        "quote": row.quote,
        "kind": row.kind,
        "flags": row.flags or None,
        "accelerator": row.accelerator,
        "accelerators": report.accelerator_key,
        "group": report.group,
        "devices": row.devices,
        "model": row.model,
        "metric": row.metric,
        "unit": row.unit,
        "counts": row.counts,
        "published": _published_dict(row.published),
        "calibrated": _prediction_dict(report.calibrated, row.published),
        "ideal": _prediction_dict(report.ideal, row.published),
        "in_statistics": row.in_statistics,
        "derived_from": list(row.derived_from),
        "duplicate_of": row.duplicate_of,
        "not_computed": row.not_computed,
        "explanation": row.explanation,
        "assumed": list(row.assumed),
        "note": row.note,
        "setup": _spec_dict(row.spec),
    }


def _claim_dict(report: ClaimReport) -> dict[str, Any]:
    claim = report.claim
    return {
        "id": claim.id,
        "paper": claim.paper,
        "where": claim.where,
        "quote": claim.quote,
        "statement": claim.statement,
        "claimed": _published_dict(claim.published),
        "unit": claim.unit,
        "setup": claim.setup,
        "status": claim.status,
        "reason": claim.reason,
        "metric": claim.metric,
        "calibrated": _prediction_dict(report.calibrated, claim.published),
        "ideal": _prediction_dict(report.ideal, claim.published),
        "verdict": report.verdict(report.calibrated),
        "computed_as": report.computed_as,
        "note": claim.note,
    }


def format_number(value: float | None, missing: str = "-") -> str:
    """A measured or predicted number at the precision the table shows it."""
    if value is None or not math.isfinite(value):
        return missing
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def _num(value: float | None) -> str:
    return format_number(value)


def _ratio_text(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.2f}"


_KIND_SHORT = {
    "measured": "meas",
    "third-party benchmark": "3rd",
    "vendor claim": "vend",
    "projection": "proj",
    "specification": "spec",
    "benchmark limit": "limit",
    "unattributed": "unatt",
}


def format_report(report: Report) -> str:
    """The report as text: one line per row, the summaries, the targets, then the claims."""
    table = report.table
    lines: list[str] = []
    add = lines.append
    papers = ", ".join(f"{p.short} = {p.citation}" for p in table.papers.values())
    add(f"Published measurements against the model ({len(table.measurements)} rows, {len(table.claims)} claims)")
    add(f"Papers: {papers}")
    for workload in table.workloads.values():
        served = (
            f"; a served run of {workload.requests:,} requests per instance (output lengths exponential about "
            "the mean, at most the batch in flight; throughput, power and energy include the run's drain"
            + (f"; {', '.join(workload.fixed_batch)} from fixed-batch images, each batch running until its "
               "longest reply finishes" if workload.fixed_batch else "")
            + ")"
            if workload.requests is not None else ""
        )
        add(f"Workload '{workload.name}': {workload.input_len} input, {workload.output_len} output tokens "
            f"(assumed; see resources/measurements.md){served}")
    add(f"ratio = predicted / published; 'ideal' = {IDEAL_DESCRIPTION}.")
    add("kind: meas = measured, 3rd = third-party benchmark, vend = vendor claim, proj = projection, "
        "spec = specification, limit = benchmark limit, unatt = unattributed. (d) derived from other rows "
        "and (r) restating another row: shown, not counted.")
    add("")
    header = (f"{'source':<28} {'kind':<5} {'accelerator':<24} {'model':<22} {'metric':<30} "
              f"{'published':>11} {'predicted':>10} {'ratio':>6} {'ideal':>6}")
    add(header)
    add("-" * len(header))
    for r in report.rows:
        row = r.row
        source = f"{table.papers[row.paper].short} {row.where}"
        mark = " (d)" if row.derived_from else " (r)" if row.duplicate_of else ""
        kind = _KIND_SHORT[row.kind] + ("" if not row.flags else row.flags)
        predicted = "-" if r.calibrated is None else _num(r.calibrated.value)
        line = (f"{_cut(source, 28):<28} {_cut(kind, 5):<5} {_cut(r.accelerator_key, 24):<24} {_cut(row.model, 22):<22} "
                f"{_cut(row.metric + mark, 30):<30} {row.published.text():>11} {predicted:>10} "
                f"{_ratio_text(r.ratio('calibrated')):>6} {_ratio_text(r.ratio('ideal')):>6}")
        notes = []
        if row.not_computed is not None:
            notes.append(f"not computed: {row.not_computed}")
        elif r.calibrated is not None and r.calibrated.value is None:
            notes.append(f"{r.calibrated.status}")
            if row.explanation:
                notes.append(f"explanation: {row.explanation}")
        else:
            if r.calibrated is not None and r.calibrated.cases > 1:
                notes.append(f"{row.spec.aggregate} over {r.calibrated.computed_cases} "
                             f"configurations, range {_num(r.calibrated.low)}-{_num(r.calibrated.high)}")
            if r.calibrated is not None and r.calibrated.status:
                notes.append(r.calibrated.status)
            if r.off():
                notes.append(f"off by >2x: {row.explanation or 'no explanation'}")
        if notes:
            line += "  | " + "; ".join(n for n in notes if n)
        add(line)

    for population, title in POPULATIONS.items():
        add("")
        add(f"Summary over {title}: median and worst |predicted/published - 1|; "
            "derived, restated and uncomputed rows excluded")
        add(f"{'':<32} {'n':>3}  {'calibrated: median':>18} {'worst':>8} {'ratio':>6} {'>2x':>4}   "
            f"{'ideal: median':>13} {'worst':>8} {'ratio':>6} {'>2x':>4}  worst row (calibrated)")
        calibrated = report.summaries["calibrated"][population]
        ideal = report.summaries["ideal"][population]
        add(_stats_line("all", calibrated["all"], ideal["all"]))
        for section, label in (("by_group", "group"), ("by_accelerator", "accelerator"), ("by_metric", "metric")):
            add(f"  by {label}")
            for name, values in calibrated[section].items():
                add(_stats_line("    " + name, values, ideal[section][name]))

    add("")
    add("Targets")
    for target in report.targets:
        add(f"  {'met    ' if target.met else 'NOT met'}  {target.name}: {target.value} (target {target.limit})")

    add("")
    add("Claims")
    for c in report.claims:
        claim = c.claim
        add(f"  {claim.id}  [{table.papers[claim.paper].short} {claim.where}]")
        add(f"      claim: {claim.statement} ({claim.published.text()} {claim.unit})")
        add(f"      setup: {claim.setup}")
        if c.calibrated is None:
            add(f"      {claim.status}: {claim.reason}")
        else:
            spread = ""
            if c.calibrated.cases > 1 and c.calibrated.value is not None:
                spread = f" (over {c.calibrated.computed_cases} configurations: {_num(c.calibrated.low)}-{_num(c.calibrated.high)})"
            ideal_value = None if c.ideal is None else c.ideal.value
            add(f"      model: {_num(c.calibrated.value)} {claim.unit}{spread}, ideal {_num(ideal_value)}; "
                f"{c.verdict(c.calibrated)}")
        if c.computed_as:
            add(f"      computed as: {c.computed_as}")
        if claim.note:
            add(f"      note: {claim.note}")
    return "\n".join(lines) + "\n"


def _stats_line(name: str, calibrated: Mapping[str, Any], ideal: Mapping[str, Any]) -> str:
    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.0f}%"

    return (f"{_cut(name, 32):<32} {calibrated['n']:>3}  {pct(calibrated['median_abs_pct_error']):>18} "
            f"{pct(calibrated['worst_abs_pct_error']):>8} {_ratio_text(calibrated['median_ratio']):>6} "
            f"{calibrated['off_by_2x']:>4}   {pct(ideal['median_abs_pct_error']):>13} "
            f"{pct(ideal['worst_abs_pct_error']):>8} {_ratio_text(ideal['median_ratio']):>6} {ideal['off_by_2x']:>4}  "
            f"{calibrated['worst_id'] or ''}")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


__all__ = [
    "METRICS",
    "Claim",
    "ClaimReport",
    "Measurement",
    "MeasurementTable",
    "Prediction",
    "Report",
    "RowReport",
    "Stats",
    "default_path",
    "format_report",
    "ideal_catalog",
    "ideal_constants",
    "ideal_engine",
    "load_measurements",
    "summaries",
    "validate",
]
