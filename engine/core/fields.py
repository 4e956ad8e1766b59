"""Every scenario input, declared once: what it is, its range and default, how people and files
name it, and which layer consumes it.

Each place that lists a scenario's inputs is made from ``SCENARIO_FIELDS``: the scenario's
validation, the preset file's keys, the command line's flags and JSON, the summary line and the
exported tables' comment lines, the physics' scenario table (``physics/pack.py``), the GUI's
control rows and the tests' scenario generator. ``tests/test_fields.py`` changes each field in
turn and fails when any of those places does not show the change. A new scalar input is one entry
here, a dataclass field on ``Scenario`` (and on ``Workload`` if it describes what is served) and
the physics that reads it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .precision import PRECISIONS

# Limits of what the engine accepts at all (the app's controls use narrower ranges).
MAX_BATCH = 10_000_000
MAX_TOKENS = 100_000_000
MAX_PARALLEL = 1_000_000

# What a field holds: a catalog id; a whole number of at least ``low``; one of the precision
# formats; a fraction between 0 and 1.
KINDS = ("id", "count", "precision", "fraction")

# What a field describes: which model on which accelerator; what is served, whatever the model,
# the device and the layout (a ``Workload``, carried by the studies that try other layouts); how
# the model is laid out over devices and memory tiers.
ROLES = ("identity", "workload", "layout")


@dataclass(frozen=True)
class SummaryPiece:
    """A field's words in the one-line summary: ``text`` of its value, in ``group`` (pieces of a
    group are joined by the group's separator, groups by " · "), left out at the default when
    ``only_if_set``."""

    group: str
    text: Callable[[Any], str]
    only_if_set: bool = False


@dataclass(frozen=True)
class CommentPiece:
    """A field's words in an exported table's comment lines: ``text`` of its value on the line
    named ``line`` (pieces of a line are joined by ``COMMENT_LINES``' separator)."""

    line: str
    text: Callable[[Any], str]


@dataclass(frozen=True)
class ScenarioField:
    name: str  # the Scenario attribute, the JSON and JSONL key
    kind: str  # one of KINDS
    role: str  # one of ROLES
    default: Any  # None: required (no default)
    low: int = 0  # a count's least value
    high: int = 0  # a count's greatest value the engine accepts
    label: str = ""  # a control's label, & before its access key
    unit: str = ""
    help: str = ""  # the command line's one-line help
    tooltip: str = ""  # the control's longer description
    flag: str = ""  # the command-line flag
    preset_key: tuple[str, str] | None = None  # (table, key) in a preset file; None: read by the preset itself
    preset_optional: bool = False  # written only when set; absent in files older than the field
    physics_row: str = ""  # its row of the physics' scenario table (layout.SCENARIO_ROWS)
    summary: SummaryPiece | None = None
    comment: CommentPiece | None = None

    @property
    def control_name(self) -> str:
        """The label without its access-key mark, as screen readers say it."""
        return self.label.replace("&", "")


def _upper(value: str) -> str:
    return value.upper()


SCENARIO_FIELDS: tuple[ScenarioField, ...] = (
    ScenarioField(
        "model", "id", "identity", None, label="&Model", flag="--model",
        help="catalog model id, or a path to a config.json or model .toml",
        tooltip="The model whose architecture is evaluated (weights are never loaded). "
        "Import config.json… adds a model from a Hugging Face config file on disk.",
        physics_row="model",
        comment=CommentPiece("model", lambda v: f"model: {v}"),
    ),
    ScenarioField(
        "accelerator", "id", "identity", None, label="Accelerator", flag="--accelerator",
        help="catalog accelerator id", physics_row="accel",
    ),
    ScenarioField(
        "batch", "count", "workload", 1, 1, MAX_BATCH, "&Batch", "sequences", flag="--batch",
        help="concurrent sequences per replica",
        tooltip="Batch: sequences processed together per replica (concurrent requests), 1 to 1024 on "
        "the slider, more when typed. Larger batches amortise weight reads over more tokens.",
        preset_key=("workload", "batch"), physics_row="batch",
        summary=SummaryPiece("batch", lambda v: f"batch {v:,}"),
        comment=CommentPiece("model", lambda v: f"batch {v}"),
    ),
    ScenarioField(
        "input_len", "count", "workload", 1024, 1, MAX_TOKENS, "&Input tokens", "tokens", flag="--input-len",
        help="prompt tokens per sequence",
        tooltip="Input length: prompt tokens per sequence, prefilled at once (tokens), 128 to "
        "1,048,576 on the slider. Sets the prefill work and the KV cache.",
        preset_key=("workload", "input_len"), physics_row="input",
        summary=SummaryPiece("tokens", lambda v: f"{v:,} in"),
        comment=CommentPiece("model", lambda v: f"input {v} tokens"),
    ),
    ScenarioField(
        "output_len", "count", "workload", 256, 1, MAX_TOKENS, "&Output tokens", "tokens", flag="--output-len",
        help="generated tokens per sequence",
        tooltip="Output length: tokens generated per sequence (tokens). Decode steps read the "
        "KV cache of the whole context, which grows by one token per step.",
        preset_key=("workload", "output_len"), physics_row="output",
        summary=SummaryPiece("tokens", lambda v: f"{v:,} out"),
        comment=CommentPiece("model", lambda v: f"output {v} tokens"),
    ),
    ScenarioField(
        "weight_precision", "precision", "workload", "bf16", label="&Weights", flag="--weight-precision",
        help="weight precision (default: --precision if given, else the format the model's "
        "weights are published in, e.g. MXFP4 for gpt-oss, else bf16)",
        tooltip="Weight precision: the format the linear layers' weights are stored in "
        "(bytes per parameter: FP32 4, BF16/FP16 2, FP8/INT8 1, INT4/FP4 0.5). Embeddings, LM head "
        "and norms stay in 16 bits.",
        preset_key=("precision", "weights"), physics_row="p_weight",
        summary=SummaryPiece("precision", lambda v: f"W {_upper(v)}"),
        comment=CommentPiece("precision", lambda v: f"weights {v}"),
    ),
    ScenarioField(
        "activation_precision", "precision", "workload", "bf16", label="&Activations", flag="--precision",
        help="activation (compute) precision, default bf16; also weights and KV cache unless given",
        tooltip="Activation precision: the format matrix products run in, where the "
        "device has units for it (W8A8 uses FP8/INT8 units; without them products run in 16 bits).",
        preset_key=("precision", "activations"), physics_row="p_act",
        summary=SummaryPiece("precision", lambda v: f"A {_upper(v)}"),
        comment=CommentPiece("precision", lambda v: f"activations {v}"),
    ),
    ScenarioField(
        "kv_precision", "precision", "workload", "bf16", label="&KV cache", flag="--kv-precision",
        help="KV-cache precision (default: --precision)",
        tooltip="KV-cache precision: the format keys and values are stored in (bytes per element).",
        preset_key=("precision", "kv_cache"), physics_row="p_kv",
        summary=SummaryPiece("precision", lambda v: f"KV {_upper(v)}"),
        comment=CommentPiece("precision", lambda v: f"KV cache {v}"),
    ),
    ScenarioField(
        "tp", "count", "layout", 1, 1, MAX_PARALLEL, "&TP", "devices", flag="--tp",
        help="tensor-parallel devices per stage",
        tooltip="Tensor parallelism (TP): devices that split every layer's weights and heads, joined "
        "by two all-reduces per layer (devices).",
        preset_key=("parallel", "tp"), physics_row="tp",
        summary=SummaryPiece("layout", lambda v: f"TP {v}"),
        comment=CommentPiece("layout", lambda v: f"TP {v}"),
    ),
    ScenarioField(
        "pp", "count", "layout", 1, 1, MAX_PARALLEL, "P&P", "stages", flag="--pp",
        help="pipeline stages",
        tooltip="Pipeline parallelism (PP): stages holding consecutive layers, joined by point-to-point "
        "transfers; a token passes every stage (stages).",
        preset_key=("parallel", "pp"), physics_row="pp",
        summary=SummaryPiece("layout", lambda v: f"PP {v}"),
        comment=CommentPiece("layout", lambda v: f"PP {v}"),
    ),
    ScenarioField(
        "ep", "count", "layout", 1, 1, MAX_PARALLEL, "&EP", "devices", flag="--ep",
        help="expert-parallel degree (divides --tp)",
        tooltip="Expert parallelism (EP): devices over which a MoE model's routed experts are spread, "
        "joined by two all-to-alls per MoE layer. Spread over the TP devices of a stage, so it divides TP.",
        preset_key=("parallel", "ep"), physics_row="ep",
        summary=SummaryPiece("layout", lambda v: f"EP {v}"),
        comment=CommentPiece("layout", lambda v: f"EP {v}"),
    ),
    ScenarioField(
        "dp", "count", "layout", 1, 1, MAX_PARALLEL, "&DP", "replicas", flag="--dp",
        help="data-parallel replicas",
        tooltip="Data parallelism (DP): independent replicas, each serving its own batch (replicas). "
        "Throughput and devices multiply; latency does not change.",
        preset_key=("parallel", "dp"), physics_row="dp",
        summary=SummaryPiece("layout", lambda v: f"DP {v}"),
        comment=CommentPiece("layout", lambda v: f"DP {v}"),
    ),
    ScenarioField(
        "offload", "fraction", "layout", 0.0, label="Off&load", unit="%", flag="--offload",
        help="fraction of weights kept in far memory",
        tooltip="Offload: share of the weights kept in the far memory tier (host memory, CXL, "
        "DDR) and streamed over its link every step (%).",
        preset_key=("parallel", "offload"), physics_row="offload",
        summary=SummaryPiece("offload", lambda v: f"offload {v:.0%}", only_if_set=True),
        comment=CommentPiece("layout", lambda v: f"offload {v:g}"),
    ),
    ScenarioField(
        "kv_offload", "fraction", "layout", 0.0, label="KV-&cache offload", unit="%", flag="--kv-offload",
        help="fraction of the KV cache kept in far memory",
        tooltip="KV-cache offload: share of the KV cache kept in the far memory tier (host memory, "
        "CXL, DDR) and read over its link every decode step (%). Only the rest counts against device memory.",
        preset_key=("parallel", "kv_offload"), preset_optional=True, physics_row="kv_offload",
        summary=SummaryPiece("kv_offload", lambda v: f"KV offload {v:.0%}", only_if_set=True),
        comment=CommentPiece("layout", lambda v: f"KV offload {v:g}"),
    ),
)

FIELDS_BY_NAME: dict[str, ScenarioField] = {f.name: f for f in SCENARIO_FIELDS}

# The summary line's groups, in order, and how the pieces of each are joined.
SUMMARY_GROUPS: dict[str, str] = {
    "batch": " ", "tokens": " / ", "precision": " ", "layout": " ", "offload": " ", "kv_offload": " ",
}

# The comment lines of an exported table, in order, and how the pieces of each are joined.
COMMENT_LINES: dict[str, tuple[str, str]] = {
    "model": ("", "; "), "precision": ("precision: ", ", "), "layout": ("layout: ", ", "),
}


def fields_of(role: str) -> tuple[ScenarioField, ...]:
    return tuple(f for f in SCENARIO_FIELDS if f.role == role)


def field_value_error(field: ScenarioField, value: object) -> str | None:
    """Why ``value`` cannot be ``field``'s (one line), or None when it can."""
    import math

    if field.kind == "id":
        return None if isinstance(value, str) else f"{field.name} must be a name, got {value!r}"
    if field.kind == "count":
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{field.name} must be a whole number, got {value!r}"
        if not field.low <= value <= field.high:
            return f"{field.name} must be between {field.low:,} and {field.high:,}, got {value:,}"
        return None
    if field.kind == "precision":
        return None if value in PRECISIONS else f"{field.name} must be one of {', '.join(PRECISIONS)}, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{field.name} must be a fraction between 0 and 1, got {value!r}"
    # The range first: math.isfinite overflows on an integer beyond the float range.
    if not (0.0 <= value <= 1.0 and math.isfinite(value)):
        return f"{field.name} must be a fraction between 0 and 1, got {value!r}"
    return None


def scenario_document(scenario: Any, *, leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
    """The scenario's fields by name, as JSON writes them (``leave_out``: names not to write)."""
    return {f.name: getattr(scenario, f.name) for f in SCENARIO_FIELDS if f.name not in leave_out}


def summary_text(scenario: Any) -> str:
    """The fields' summary pieces, grouped and joined (without the model's name)."""
    groups: dict[str, list[str]] = {}
    for f in SCENARIO_FIELDS:
        piece = f.summary
        if piece is None:
            continue
        value = getattr(scenario, f.name)
        if piece.only_if_set and value == f.default:
            continue
        groups.setdefault(piece.group, []).append(piece.text(value))
    return " · ".join(SUMMARY_GROUPS[group].join(groups[group]) for group in SUMMARY_GROUPS if group in groups)


def comment_lines(scenario: Any) -> list[str]:
    """The fields' comment pieces, one line per ``COMMENT_LINES`` entry."""
    lines: dict[str, list[str]] = {}
    for f in SCENARIO_FIELDS:
        if f.comment is not None:
            lines.setdefault(f.comment.line, []).append(f.comment.text(getattr(scenario, f.name)))
    return [prefix + separator.join(lines[line]) for line, (prefix, separator) in COMMENT_LINES.items() if line in lines]
