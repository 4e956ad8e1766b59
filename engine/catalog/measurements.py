"""The papers' numbers (``resources/measurements.toml``): every measurement and claim of the two
source papers, with its setup, what the metric counts and where it is printed, read and checked
into a :class:`MeasurementTable` under the catalog's hostile-input policy (``reading.py``).

``resources/measurements.md`` explains the table. A row may describe one configuration, a
ratio between two (two engine runs), or a statement over several configurations (a sweep,
reduced by its median, maximum or minimum): :class:`Spec` holds how. Running the engine on it is
``validation/``'s.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ..core.errors import AccelscopeError, CatalogError
from ..core.precision import PRECISIONS
from ..core.scenario import MAX_BATCH, MAX_PARALLEL, MAX_TOKENS, Scenario
from ..core.serving import MAX_REQUESTS, MAX_SLO_MS
from ..core.units import format_number
from .catalog import Catalog
from .reading import PathLike, TableReader, as_path, check_int, describe, quoted, read_toml_file

# ---- vocabulary --------------------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    """A metric a row may state: its unit, which way is better and what it counts. How the
    engine's result gives it is validation's (``validation/report.py``, METRIC_VALUES)."""

    unit: str
    higher_is_better: bool
    description: str
    label: str  # what a table shows for it


METRICS: dict[str, Metric] = {
    "throughput_total_tok_s": Metric("tokens/s", True, "input + output tokens per second, whole system",
                                     "throughput, input + output"),
    "throughput_output_tok_s": Metric("tokens/s", True, "output tokens per second, whole system", "output throughput"),
    "ttft_ms": Metric("ms", False, "time to first token", "time to first token"),
    "itl_ms": Metric("ms", False, "inter-token latency", "inter-token latency"),
    "e2e_latency_s": Metric("s", False, "time until the batch's last token", "end-to-end latency"),
    "power_w": Metric("W", False, "mean power over the run, all devices", "power"),
    "tokens_per_joule": Metric("tokens/J", True, "input + output tokens per joule", "tokens per joule"),
    "output_tokens_per_joule": Metric("tokens/J", True, "output tokens per joule", "output tokens per joule"),
}
RATIO_PREFIX = "ratio_"
# Recorded because the papers print them, but no scenario output corresponds.
UNCOMPUTABLE_METRICS: dict[str, str] = {
    "latency_cov": "ratio",
    "scaling_efficiency": "ratio",
}
UNCOMPUTABLE_LABELS: dict[str, str] = {
    "latency_cov": "latency variation (CoV)",
    "scaling_efficiency": "scaling efficiency",
}


def metric_label(metric: str) -> str:
    """A row's metric as a reader names it ("throughput, input + output"; a ratio of two runs
    as "... ratio"); an unknown name as it is."""
    if metric.startswith(RATIO_PREFIX) and metric[len(RATIO_PREFIX):] in METRICS:
        return f"{METRICS[metric[len(RATIO_PREFIX):]].label} ratio"
    if metric in METRICS:
        return METRICS[metric].label
    return UNCOMPUTABLE_LABELS.get(metric, metric)

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
# A server scenario's rows give the run's totals at its capacity: its latencies are the SLO's
# limits by construction, not predictions, so rows of these metrics cannot name one.
SERVER_LATENCY_METRICS: tuple[str, ...] = ("ttft_ms", "itl_ms", "e2e_latency_s")
# "computed by a study": the number comes from a study module rather than scenario runs
# (validation/report.py runs them); the reason then names the study.
CLAIM_STATUSES: tuple[str, ...] = ("computed", "computed by a study", "not computed yet", "not computable")

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
# The precision table's keys and the Scenario fields they set.
PRECISION_FIELDS = {"weights": "weight_precision", "activations": "activation_precision", "kv": "kv_precision"}
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
class ServerObjective:
    """A server scenario's service-level objective (MLPerf Inference's Server scenario): the
    largest Poisson arrival rate whose run keeps p99 time to first token and p99 time per output
    token within these limits (ms) is the deployment's capacity."""

    ttft_p99_ms: float
    tpot_p99_ms: float


@dataclass(frozen=True)
class PublishedWorkload:
    """A ``[workload.NAME]`` of the table: the prompt and reply lengths a paper's runs used (or
    that were assumed for them, ``basis`` says which) and how the requests were served. Rows
    that name it take its lengths; their batch and precisions are their own."""

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
    # A server scenario: each run of ``requests`` arrives as a Poisson stream, and the prediction
    # is the run at the largest rate meeting this objective; None for every other workload.
    server: ServerObjective | None = None
    server_basis: str | None = None


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
            return f"{format_number(self.low)}-{format_number(self.high)}"
        return format_number(self.value)


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
    server: ServerObjective | None = None  # a server scenario's objective (see server_runs)

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
    workloads: dict[str, PublishedWorkload]
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

    papers = _papers(top.sub("papers"))
    workloads = _workloads(top.sub("workload"), catalog)
    context = _Context(source, papers, workloads, catalog)
    measurements = tuple(
        _measurement(context, TableReader(source, _table(top, "measurement", i, entry), f"measurement[{i}]."), i)
        for i, entry in enumerate(top.array("measurement"))
    )
    claims = tuple(
        _claim(context, TableReader(source, _table(top, "claim", i, entry), f"claim[{i}]."), i)
        for i, entry in enumerate(top.array("claim", []))
    )

    _check_ids(source, measurements, claims)
    return MeasurementTable(str(source), papers, workloads, measurements, claims)


def _papers(papers_reader: TableReader) -> dict[str, Paper]:
    papers: dict[str, Paper] = {}
    for key in papers_reader.table:
        reader = papers_reader.sub(key)
        reader.reject_unknown(("short", "citation"))
        papers[key] = Paper(key, _text(reader, "short"), _text(reader, "citation"))
    return papers


def _workloads(workload_reader: TableReader, catalog: Catalog | None) -> dict[str, PublishedWorkload]:
    workloads: dict[str, PublishedWorkload] = {}
    for name in workload_reader.table:
        reader = workload_reader.sub(name)
        reader.reject_unknown((
            "input_len", "output_len", "basis", "requests", "requests_basis", "fixed_batch", "fixed_batch_basis",
            "server", "server_basis",
        ))
        requests = reader.integer("requests", minimum=1, maximum=MAX_BATCH) if reader.has("requests") else None
        if requests is not None and not reader.has("requests_basis"):
            raise reader.error("requests_basis", "a served run's request count needs its basis")
        fixed_batch = _fixed_batch(reader, catalog, requests)
        server = _server(reader, requests, fixed_batch)
        workloads[name] = PublishedWorkload(
            name,
            reader.integer("input_len", maximum=MAX_TOKENS),
            reader.integer("output_len", maximum=MAX_TOKENS),
            _text(reader, "basis"),
            requests,
            _text(reader, "requests_basis") if requests is not None else None,
            fixed_batch,
            _text(reader, "fixed_batch_basis") if fixed_batch else None,
            server,
            _text(reader, "server_basis") if server is not None else None,
        )
    return workloads


def _server(reader: TableReader, requests: int | None, fixed_batch: tuple[str, ...]) -> ServerObjective | None:
    """The workload's server scenario: both p99 limits, its basis, and the requests of each run."""
    if not reader.has("server"):
        if reader.has("server_basis"):
            raise reader.error("server_basis", "a basis for a server scenario the workload does not have (no server)")
        return None
    objective = reader.sub("server")
    objective.reject_unknown(("ttft_p99_ms", "tpot_p99_ms"))
    ttft = objective.number("ttft_p99_ms", maximum=MAX_SLO_MS)
    tpot = objective.number("tpot_p99_ms", maximum=MAX_SLO_MS)
    if not reader.has("server_basis"):
        raise reader.error("server_basis", "a server scenario needs its basis (whose objective, which lengths)")
    if requests is None:
        raise reader.error("requests", "a server scenario needs the number of requests of each simulated run")
    if requests > MAX_REQUESTS:
        raise reader.error(
            "requests", f"a server scenario's runs hold at most {MAX_REQUESTS:,} requests, got {requests:,}"
        )
    if fixed_batch:
        raise reader.error("fixed_batch", "a server scenario is served by vLLM's scheduler, not fixed-batch images")
    return ServerObjective(ttft, tpot)


def _check_ids(source: object, measurements: Sequence[Measurement], claims: Sequence[Claim]) -> None:
    """Ids are unique, and every derived_from and duplicate_of names another row."""
    ids: dict[str, int] = {}
    for entry in measurements:
        if entry.id in ids:
            raise CatalogError(source, f"measurement[{entry.index}].id", f"duplicate id {quoted(entry.id)}")
        ids[entry.id] = entry.index
    for entry in measurements:
        for position, other in enumerate(entry.derived_from):
            if other not in ids or other == entry.id:
                raise CatalogError(
                    source, f"measurement[{entry.index}].derived_from[{position}]",
                    f"no other row has id {quoted(other)}",
                )
        if entry.duplicate_of is not None and (entry.duplicate_of not in ids or entry.duplicate_of == entry.id):
            raise CatalogError(
                source, f"measurement[{entry.index}].duplicate_of", f"no other row has id {quoted(entry.duplicate_of)}"
            )
    claim_ids: set[str] = set()
    for claim in claims:
        if claim.id in claim_ids:
            raise CatalogError(source, f"claim[{claim.index}].id", f"duplicate id {quoted(claim.id)}")
        claim_ids.add(claim.id)


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
            raise reader.error(f"fixed_batch[{i}]", f"unknown accelerator id {quoted(value)} (not in the catalog)")
    return tuple(values)


@dataclass(frozen=True)
class _Context:
    path: object
    papers: dict[str, Paper]
    workloads: dict[str, PublishedWorkload]
    catalog: Catalog | None


def _names(names: Mapping[str, object], limit: int = 20) -> str:
    """The file's own names (papers, workloads) for an error message, each cut, at most ``limit``."""
    shown = [quoted(name) for name in itertools.islice(names, limit)]
    return ", ".join(shown) + (", ..." if len(names) > limit else "")


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
            raise reader.error(key, f"must be > 0 and at most {_MAX_VALUE:g}, got {describe(value)}")
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
    raise reader.error("metric", f"unknown metric {quoted(metric)}; expected one of: {', '.join(known)}")


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
        precision.reject_unknown(tuple(PRECISION_FIELDS))
        for key, name in PRECISION_FIELDS.items():
            if precision.has(key):
                value = precision.string(key)
                if value not in PRECISIONS:
                    raise precision.error(key, f"must be one of {', '.join(PRECISIONS)}, got {quoted(value)}")
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
            raise reader.error("workload", f"unknown workload {quoted(name)}; known: {_names(context.workloads)}")
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
        raise reader.error(key, f"unknown {kind} id {quoted(value)} (not in the catalog)")


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
        where = f"{reader.field('best_of')}[{i}]"
        if not isinstance(entry, Mapping):
            raise CatalogError(reader.path, where, f"must be a table, got {describe(entry)}")
        candidates.append(_overrides(context, TableReader(reader.path, entry, f"{where}."), _OVERRIDE_KEYS))
    return tuple(candidates)


def _spec(context: _Context, reader: TableReader, metric: str, ratio: bool) -> Spec:
    """The base setup (row fields), the sweep and the sides; every scenario is checked."""
    row_setup = {k: v for k, v in reader.table.items() if k in _OVERRIDE_KEYS}
    base = _overrides(context, TableReader(reader.path, row_setup, reader.prefix), _OVERRIDE_KEYS)
    for key in ("accelerator", "model", "batch"):
        if key not in base:
            raise reader.error(key, "required field is missing")
    for name in PRECISION_FIELDS.values():
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

    cases = _cases(context, reader) if reader.has("sweep") else ({},)
    aggregate = "median"
    if reader.has("aggregate"):
        aggregate = reader.string("aggregate")
        if aggregate not in AGGREGATES:
            raise reader.error("aggregate", f"must be one of {', '.join(AGGREGATES)}, got {quoted(aggregate)}")

    requests = None
    fixed_batch: tuple[str, ...] = ()
    server = None
    if reader.has("workload"):
        workload = context.workloads[reader.string("workload")]
        requests, fixed_batch, server = workload.requests, workload.fixed_batch, workload.server
    if server is not None and metric in SERVER_LATENCY_METRICS:
        raise reader.error(
            "metric", f"workload {quoted(workload.name)} is a server scenario: its {metric} is the objective's limit, "
            "not a prediction (it gives throughput, power and energy)",
        )
    spec = Spec(base, metric, ratio, sides, cases, aggregate, _best_of(context, reader), requests, fixed_batch, server)
    for scenario in spec.scenarios():
        try:
            scenario.validate()
            problem = _impossible_layout(scenario, context.catalog)
        except AccelscopeError as error:
            problem = str(error)
        if problem:
            raise CatalogError(reader.path, reader.prefix.rstrip("."), f"a setup is not a valid scenario: {problem}")
    return spec


def _cases(context: _Context, reader: TableReader) -> tuple[dict[str, Any], ...]:
    """The configurations of a sweep: every combination of the values it lists per field."""
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
    return tuple(dict(combination) for combination in itertools.product(*axes))


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
        raise reader.error("id", f"use lowercase letters, digits, dots and dashes, got {quoted(identifier)}")
    paper = _text(reader, "paper")
    if paper not in context.papers:
        raise reader.error("paper", f"unknown paper {quoted(paper)}; known: {_names(context.papers)}")
    return identifier, paper, _text(reader, "where"), _text(reader, "quote")


def _measurement(context: _Context, reader: TableReader, index: int) -> Measurement:
    reader.reject_unknown(_ROW_KEYS)
    identifier, paper, where, quote = _common(context, reader)
    kind = _text(reader, "kind")
    if kind not in KINDS:
        raise reader.error("kind", f"must be one of: {', '.join(KINDS)}; got {quoted(kind)}")
    metric_name = _text(reader, "metric")
    base_metric, ratio = _base_metric(reader, metric_name)
    unit = _text(reader, "unit")
    if unit != _metric_unit(metric_name):
        raise reader.error("unit", f"{metric_name} is in {_metric_unit(metric_name)!r}, got {quoted(unit)}")
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
        raise reader.error("status", f"must be one of: {', '.join(CLAIM_STATUSES)}; got {quoted(status)}")
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
