"""The operational regimes of the first paper (``resources/regimes.toml``): for each, a model,
workload, layout rule and metric, and the paper's own grades of seven accelerators on them.

Read under the catalog's hostile-input policy (``reading.py``); the scoring is
``studies/regimes.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..core.errors import CatalogError
from ..core.precision import PRECISIONS
from ..core.scenario import MAX_BATCH, MAX_TOKENS, Scenario
from .reading import read_toml_file

# The metric kinds a regime can name, and what each computes from the kernel outputs.
METRICS: dict[str, str] = {
    "ttft": "time to first token of the regime's batch, in ms",
    "requests_within_itl": "output throughput / output length / devices, at the best batch whose ITL meets the "
    "target and which runs in one wave",
    "peak_output_tokens": "highest output tokens/s per device over the batch sweep",
    "long_context_tokens": "output tokens/s per device at the long prompt (the share kept of the short-prompt rate "
    "is given beside)",
    "models_resident": "floor((usable memory - runtime) / (weights + KV cache + workspace of one copy)) on one "
    "device",
    "peak_prefill_tokens": "highest prompt tokens/s per device over the batch sweep, prefill only",
    "decode_tokens": "1 / inter-token latency",
}
LAYOUTS: tuple[str, ...] = ("smallest", "one-device")
DIRECTIONS: tuple[str, ...] = ("lower", "higher")


@dataclass(frozen=True)
class Regime:
    id: str
    name: str
    paper_column: str
    model: str
    weight_precision: str
    activation_precision: str
    kv_precision: str
    input_len: int
    output_len: int
    batches: tuple[int, ...]
    layout: str  # one of LAYOUTS
    metric: str  # one of METRICS
    metric_text: str
    unit: str
    direction: str  # "lower" or "higher" is better
    reason: str
    itl_target_s: float | None = None  # requests_within_itl only
    short_input_len: int | None = None  # long_context_tokens only

    def scenario(self, accelerator: str, batch: int, tp: int = 1, pp: int = 1, input_len: int | None = None) -> Scenario:
        return Scenario(
            model=self.model,
            accelerator=accelerator,
            batch=batch,
            input_len=self.input_len if input_len is None else input_len,
            output_len=self.output_len,
            weight_precision=self.weight_precision,
            activation_precision=self.activation_precision,
            kv_precision=self.kv_precision,
            tp=tp,
            pp=pp,
        )


@dataclass(frozen=True)
class LayoutRule:
    """How the "smallest" layout splits n devices: TP up to ``max_tp``, pipeline stages for
    the rest; at most ``max_devices`` in all."""

    max_tp: int
    max_devices: int
    basis: dict[str, str]


@dataclass(frozen=True)
class RegimeDefinitions:
    regimes: tuple[Regime, ...]
    layout: LayoutRule
    paper_source: str
    paper_grades: tuple[str, ...]  # best first
    paper_ratings: dict[str, dict[str, str]]  # accelerator id -> regime id -> grade


# ---- loading ---------------------------------------------------------------------------------


def default_regimes_path() -> Path:
    return Path(str(resources.files("accelscope.resources") / "regimes.toml"))


def load_regimes(path: Path | None = None) -> RegimeDefinitions:
    """Read and check ``regimes.toml``; a bad field raises CatalogError naming it."""
    path = path or default_regimes_path()
    data = read_toml_file(Path(path))  # size-limited, special files refused, errors name the file

    layout_table = data.get("layout")
    if not isinstance(layout_table, dict):
        raise CatalogError(path, "layout", "missing table")
    layout_values: dict[str, int] = {}
    layout_basis: dict[str, str] = {}
    for name in ("max_tp", "max_devices"):
        entry = layout_table.get(name)
        if not isinstance(entry, dict) or not isinstance(entry.get("basis"), str) or not entry["basis"].strip():
            raise CatalogError(path, f"layout.{name}", "expected a table with 'value' and a non-empty 'basis'")
        value = entry.get("value")
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65536:
            raise CatalogError(path, f"layout.{name}.value", f"must be a whole number from 1 to 65,536, got {value!r}")
        layout_values[name], layout_basis[name] = value, entry["basis"]
    layout = LayoutRule(layout_values["max_tp"], layout_values["max_devices"], layout_basis)

    entries = data.get("regime")
    if not isinstance(entries, list) or not entries:
        raise CatalogError(path, "regime", "expected at least one [[regime]] table")
    regimes = tuple(_regime(path, index, entry) for index, entry in enumerate(entries))
    ids = [r.id for r in regimes]
    for index, regime_id in enumerate(ids):
        if regime_id in ids[:index]:
            raise CatalogError(path, f"regime[{index}].id", f"{regime_id!r} appears twice")

    paper = data.get("paper", {})
    if not isinstance(paper, dict) or not isinstance(paper.get("source"), str):
        raise CatalogError(path, "paper.source", "the paper's grades need a source")
    grades = paper.get("grades")
    if not isinstance(grades, list) or not all(isinstance(g, str) for g in grades) or not grades:
        raise CatalogError(path, "paper.grades", "expected a list of grade names, best first")
    ratings: dict[str, dict[str, str]] = {}
    rating_tables = paper.get("ratings", {})
    if not isinstance(rating_tables, dict):
        raise CatalogError(path, "paper.ratings", "expected a table of accelerator = { regime = grade }")
    for accelerator, table in rating_tables.items():
        if not isinstance(table, dict):
            raise CatalogError(path, f"paper.ratings.{accelerator}", "expected a table of regime = grade")
        for regime_id, grade in table.items():
            if regime_id not in ids:
                raise CatalogError(path, f"paper.ratings.{accelerator}.{regime_id}", "not a regime id")
            if grade not in grades:
                raise CatalogError(
                    path, f"paper.ratings.{accelerator}.{regime_id}", f"{grade!r} is not one of {', '.join(grades)}"
                )
        ratings[accelerator] = dict(table)
    return RegimeDefinitions(regimes, layout, paper["source"], tuple(grades), ratings)


def _regime(path: Path, index: int, entry: object) -> Regime:
    where = f"regime[{index}]"
    if not isinstance(entry, dict):
        raise CatalogError(path, where, "expected a table")

    def text(key: str) -> str:
        value = entry.get(key)
        if not isinstance(value, str) or not value.strip():
            raise CatalogError(path, f"{where}.{key}", "must be a non-empty string")
        return value

    def whole(key: str, value: object, high: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
            raise CatalogError(path, f"{where}.{key}", f"must be a whole number from 1 to {high:,}, got {value!r}")
        return value

    for key in ("weights", "activations", "kv_cache"):
        if entry.get(key) not in PRECISIONS:
            raise CatalogError(path, f"{where}.{key}", f"must be one of {', '.join(PRECISIONS)}")
    batches = entry.get("batches")
    if not isinstance(batches, list) or not batches:
        raise CatalogError(path, f"{where}.batches", "expected a list of batch sizes")
    metric, layout, direction = text("metric"), text("layout"), text("direction")
    if metric not in METRICS:
        raise CatalogError(path, f"{where}.metric", f"must be one of {', '.join(METRICS)}, got {metric!r}")
    if layout not in LAYOUTS:
        raise CatalogError(path, f"{where}.layout", f"must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    if direction not in DIRECTIONS:
        raise CatalogError(path, f"{where}.direction", f"must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    itl_target_s = None
    if metric == "requests_within_itl":
        target = entry.get("itl_target_ms")
        if isinstance(target, bool) or not isinstance(target, int | float) or not 0.0 < target < 1e6:
            raise CatalogError(path, f"{where}.itl_target_ms", "a positive time in ms is needed for this metric")
        itl_target_s = float(target) / 1e3
    short_input_len = None
    if metric == "long_context_tokens":
        short_input_len = whole("short_input_len", entry.get("short_input_len"), MAX_TOKENS)
    return Regime(
        id=text("id"),
        name=text("name"),
        paper_column=text("paper_column"),
        model=text("model"),
        weight_precision=entry["weights"],
        activation_precision=entry["activations"],
        kv_precision=entry["kv_cache"],
        input_len=whole("input_len", entry.get("input_len"), MAX_TOKENS),
        output_len=whole("output_len", entry.get("output_len"), MAX_TOKENS),
        batches=tuple(whole(f"batches[{i}]", b, MAX_BATCH) for i, b in enumerate(batches)),
        layout=layout,
        metric=metric,
        metric_text=text("metric_text"),
        unit=text("unit"),
        direction=direction,
        reason=text("reason"),
        itl_target_s=itl_target_s,
        short_input_len=short_input_len,
    )
