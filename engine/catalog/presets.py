"""Presets: a workspace saved as a small JSON file, to replay a paper's figure or share a lesson.

A preset stores values, never widget positions: the model (a catalog id, or the whole
architecture embedded in the model-file format), the workload, the precisions, the parallel
layout, the accelerators shown and the one selected, and the active view. Bundled presets live
in the ``accelscope.presets`` package; the user's own in ``presets/`` of the user data folder
(``ACCELSCOPE_DATA_DIR`` points elsewhere).

Preset files are untrusted input (students pass them around): the reader refuses a file over
1 MB unread, checks every field and every id against the catalog, and reports the first
problem as a :class:`PresetError` naming the file and the dotted field. Files written by an
older version of the format are migrated step by step (``MIGRATIONS``); a newer one is
refused. Saving is atomic: the file is either the old one or the complete new one.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, replace
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, TextIO

from ..core.cost import DEVICE_PRICE_FIELDS, CostSettings
from ..core.errors import CatalogError, ScenarioError
from ..core.model import ModelArch
from ..core.precision import PRECISIONS
from ..core.prices import SITE_FIELDS
from ..core.fields import SCENARIO_FIELDS, ScenarioField
from ..core.scenario import Scenario
from ..core.serving import SERVING_FIELDS, ServingSpec, check_simulated_size
from ..core.workspace import DEVICE_BUDGETS, MAX_ROUTING_SKEW, VIEW_OPTION_DEFAULTS, VIEWS, Workspace
from .catalog import Catalog, user_data_dir
from .far_tiers import load_far_tiers
from .models import load_bundled_models, model_from_table, model_to_table
from .reading import TableReader, decode_text, describe, read_limited
from .writing import sync_folder

SCHEMA_PREFIX = "accelscope.preset/"
SCHEMA_VERSION = 1
PRESET_SCHEMA = f"{SCHEMA_PREFIX}{SCHEMA_VERSION}"

# A preset is a few kilobytes, an embedded model with per-layer lists included.
MAX_PRESET_BYTES = 1024 * 1024
MAX_NAME_CHARS = 120
MAX_DESCRIPTION_CHARS = 4000
MAX_SHOWN = 64

# The bundled presets in the order the app lists them: first lessons, then the figures of the
# second paper (Brunetta et al. 2025), the tables of the first (Sharma 2025), then long context,
# and last the lessons on newer designs (hybrid layers, block-scaled FP4).
BUNDLED_ORDER: tuple[str, ...] = (
    "teach-roofline-basics",
    "teach-why-decode-is-memory-bound",
    "brunetta-fig2-batch-sweep",
    "brunetta-fig3-fp8-vs-bf16",
    "brunetta-fig4-tp-vs-dp-4gpu",
    "brunetta-fig6-ep-vs-tp-moe",
    "brunetta-fig7-dataflow-vs-gpu",
    "brunetta-fig8-ttft-vs-itl",
    "sharma-table3-llama2-70b-single-stream",
    "sharma-table4-llama2-70b-batch-throughput",
    "long-context-128k",
    "sharma-scaling-1t-moe",
    "sharma-fig8-regimes",
    "sharma-heterogeneous-memory",
    "teach-hybrid-long-context",
    "teach-fp4-weights",
    "serving-chat-few-requests",
    "serving-chat-many-requests",
    "serving-offline-mlperf-like",
    "serving-mlperf-server-llama2-70b",
    "serving-dataflow-vs-gpu-8-users",
    "serving-aggregated-vs-disaggregated",
)

_TOP_KEYS = ("schema", "name", "description", "model", "workload", "precision", "parallel", "accelerators", "view")
_TOP_OPTIONAL_KEYS = ("view_options", "serving", "cost")
# The scenario's tables (workload, precision, parallel) and their keys, from the fields' own
# ``preset_key``. Optional keys are absent in files written before they existed, which load
# unchanged (the field takes its default), so adding one needs no schema version.
_SCENARIO_TABLES: tuple[str, ...] = tuple(dict.fromkeys(f.preset_key[0] for f in SCENARIO_FIELDS if f.preset_key))


def _table_keys(table: str, *, optional: bool) -> tuple[str, ...]:
    return tuple(f.preset_key[1] for f in SCENARIO_FIELDS
                 if f.preset_key and f.preset_key[0] == table and f.preset_optional == optional)
_ACCELERATOR_KEYS = ("shown", "selected")

_SCHEMA_PATTERN = re.compile(r"accelscope\.preset/([1-9][0-9]{0,5})")


class PresetError(CatalogError):
    """A preset file is unreadable, malformed, or names something the catalog lacks.

    Reads ``file: field: problem``, like every catalog error.
    """


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    workspace: Workspace
    model: ModelArch | None = None  # embedded when the workspace's model is not a catalog id
    source: Path | None = None  # the file it was read from
    bundled: bool = False


@dataclass(frozen=True)
class PresetEntry:
    """One line of the presets list; ``problem`` says why a broken file cannot be loaded."""

    name: str
    description: str
    path: Path
    bundled: bool
    problem: str | None = None


# ---- migrations ----------------------------------------------------------------------

# MIGRATIONS[n] turns a version-n document into a version-(n + 1) one. A change to the format
# bumps SCHEMA_VERSION, adds the step here, and keeps a file of the old version as a test
# fixture (tests/fixtures/presets/).
Migration = Callable[[dict[str, Any]], dict[str, Any]]
MIGRATIONS: dict[int, Migration] = {}


def schema_version(document: Mapping[str, Any], path: object) -> int:
    if "schema" not in document:
        raise PresetError(path, "schema", f"required field is missing; expected {PRESET_SCHEMA!r}")
    schema = document["schema"]
    if not isinstance(schema, str):
        raise PresetError(path, "schema", f"must be a string like {PRESET_SCHEMA!r}, got {describe(schema)}")
    match = _SCHEMA_PATTERN.fullmatch(schema)
    if not match:
        problem = f"not an accelscope preset schema: {schema[:60]!r}; expected {PRESET_SCHEMA!r}"
        raise PresetError(path, "schema", problem)
    return int(match.group(1))


def migrate(
    document: dict[str, Any],
    path: object,
    *,
    current: int = SCHEMA_VERSION,
    migrations: Mapping[int, Migration] | None = None,
) -> dict[str, Any]:
    """The document in the current schema, migrated step by step from an older one."""
    steps = MIGRATIONS if migrations is None else migrations
    version = schema_version(document, path)
    if version > current:
        raise PresetError(
            path,
            "schema",
            f"version {version} is newer than this accelscope reads (up to {current}); update accelscope to open it",
        )
    while version < current:
        step = steps.get(version)
        if step is None:
            problem = f"version {version} is no longer supported (no migration to {version + 1})"
            raise PresetError(path, "schema", problem)
        document = step(dict(document))
        version += 1
        document["schema"] = f"{SCHEMA_PREFIX}{version}"
    return document


# ---- JSON -> Preset ------------------------------------------------------------------


def load_preset(path: str | os.PathLike[str] | Traversable, catalog: Catalog, *, bundled: bool = False) -> Preset:
    """Read, migrate and check one preset file."""
    source = Path(path) if isinstance(path, (str, os.PathLike)) else path
    try:
        text = decode_text(source, read_limited(source, MAX_PRESET_BYTES))
    except CatalogError as error:
        raise PresetError(error.path, error.field, error.problem) from error
    document = parse_json(text, source)
    preset = preset_from_json(document, source, catalog)
    return replace(preset, source=Path(str(source)), bundled=bundled)


def parse_json(text: str, path: object) -> dict[str, Any]:
    """One JSON object. NaN and Infinity are left to the field checks, which name the field."""
    try:
        document = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise PresetError(path, None, f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from exc
    except RecursionError as exc:
        raise PresetError(path, None, "not valid JSON: nested too deeply") from exc
    except ValueError as exc:  # a duplicate key, or an integer too long to convert
        raise PresetError(path, None, f"not valid JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise PresetError(path, None, f"must be a JSON object (an accelscope preset), got {describe(document)}")
    return document


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for key, value in pairs:
        if key in table:
            raise ValueError(f"key {key[:60]!r} appears twice in one object")
        table[key] = value
    return table


def preset_from_json(data: Any, path: object, catalog: Catalog | None) -> Preset:
    """Check a parsed preset document completely and build the Preset; registers nothing.

    With ``catalog`` None only the form is checked (the ids are not looked up).
    """
    if not isinstance(data, Mapping):
        raise PresetError(path, None, f"must be a JSON object (an accelscope preset), got {describe(data)}")
    try:
        return _preset_from_document(migrate(dict(data), path), path, catalog)
    except PresetError:
        raise
    except CatalogError as error:  # raised by the shared readers (TableReader, the model reader)
        raise PresetError(error.path, error.field, error.problem) from error


def _preset_from_document(document: dict[str, Any], path: object, catalog: Catalog | None) -> Preset:
    root = TableReader(path, document)
    root.reject_unknown(_TOP_KEYS + _TOP_OPTIONAL_KEYS)
    _require(root, _TOP_KEYS)
    name = _text(root, "name", MAX_NAME_CHARS, one_line=True)
    description = _text(root, "description", MAX_DESCRIPTION_CHARS, one_line=False)

    model_id, model = _model(root, path, catalog)
    tables = {name: _table(root, name, _table_keys(name, optional=False), optional=_table_keys(name, optional=True))
              for name in _SCENARIO_TABLES}
    shown, selected = _accelerators(root, catalog)
    view = root.string("view")
    if view not in VIEWS:
        raise root.error("view", f"must be one of {', '.join(VIEWS)}, got {view[:40]!r}")

    scenario = Scenario(model=model_id, accelerator=selected,
                        **{f.name: _field_value(tables[f.preset_key[0]], f) for f in SCENARIO_FIELDS if f.preset_key})
    try:
        scenario.validate()  # the engine's own limits; the checks above should already hold them
    except ScenarioError as error:
        raise PresetError(path, None, str(error)) from error
    workspace = Workspace(scenario=scenario, shown=shown, view=view)
    if "view_options" in root.table:
        workspace = workspace.with_options(**_view_options(root, catalog))
    if "serving" in root.table:
        workspace = workspace.with_changes(serving=_serving(root, path))
        try:
            check_simulated_size(scenario.dp, workspace.serving)
        except ScenarioError as error:
            raise PresetError(path, "serving", str(error)) from error
    if "cost" in root.table:
        workspace = workspace.with_changes(cost=_cost(root, catalog))
    return Preset(name=name, description=description, workspace=workspace, model=model)


def _view_options(root: TableReader, catalog: Catalog | None) -> dict[str, object]:
    if root.table["view_options"] is None:
        raise root.error("view_options", "must not be null")
    table = root.sub("view_options")
    table.reject_unknown(tuple(VIEW_OPTION_DEFAULTS))
    options: dict[str, object] = {}
    if "far_tier" in table.table:
        tier = table.string("far_tier")
        known = ("own", *load_far_tiers())  # the far-tier table is read only when a preset names one
        if tier not in known:
            raise table.error("far_tier", f"must be one of {', '.join(known)}, got {tier[:40]!r}")
        options["far_tier"] = tier
    if "device_budget" in table.table:
        budget = table.integer("device_budget", maximum=max(DEVICE_BUDGETS))
        if budget not in DEVICE_BUDGETS:
            raise table.error("device_budget", f"must be one of {', '.join(map(str, DEVICE_BUDGETS))}, got {budget}")
        options["device_budget"] = budget
    if "routing_skew" in table.table:
        value = table.table["routing_skew"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= MAX_ROUTING_SKEW:
            raise table.error("routing_skew", f"must be a number between 0 and {MAX_ROUTING_SKEW:g}, "
                                              f"got {describe(value)}")
        options["routing_skew"] = float(value)
    if "run_here_device" in table.table:
        device = table.string("run_here_device")
        if device:  # "" is the selected accelerator
            _check_accelerator(table, "run_here_device", device, catalog)
        options["run_here_device"] = device
    return options


_SERVING_DEFAULTS = ServingSpec()


def _serving(root: TableReader, path: object) -> ServingSpec:
    """The Serving tab's settings: only those that differ from the defaults are written; null
    is allowed where a limit can be absent (a policy default, no SLO)."""
    if root.table["serving"] is None:
        raise root.error("serving", "must not be null")
    table = root.sub("serving")
    table.reject_unknown(SERVING_FIELDS)
    values: dict[str, object] = {}
    for name, value in table.table.items():
        default = getattr(_SERVING_DEFAULTS, name)
        optional = name in _OPTIONAL_SERVING_FIELDS
        if value is None and not optional:
            raise table.error(name, "must not be null")
        if value is not None and isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)  # JSON writes 2.0 as 2 when another tool saves the file
        values[name] = value
    try:
        return replace(_SERVING_DEFAULTS, **values).validate()
    except ScenarioError as error:
        field = str(error).split(" ", 1)[0]  # the spec's messages start with the field's name
        if field in SERVING_FIELDS:
            raise table.error(field, str(error).removeprefix(f"{field} ")) from error
        raise PresetError(path, "serving", str(error)) from error


def _cost(root: TableReader, catalog: Catalog | None) -> CostSettings:
    """The user's prices and site values: only those set are written (absent: the price book's)."""
    if root.table["cost"] is None:
        raise root.error("cost", "must not be null")
    table = root.sub("cost")
    table.reject_unknown((*SITE_FIELDS, "prices"))
    settings = CostSettings()
    for name in SITE_FIELDS:
        if name in table.table:
            settings = settings.with_site(**{name: _cost_number(table, name)})
    if "prices" in table.table:
        if table.table["prices"] is None:
            raise table.error("prices", "must not be null")
        prices = table.sub("prices")
        if len(prices.table) > MAX_SHOWN * 4:
            raise table.error("prices", f"prices {len(prices.table)} accelerators; at most {MAX_SHOWN * 4}")
        for accelerator_id in prices.table:
            _check_accelerator(prices, accelerator_id, accelerator_id, catalog)
            if prices.table[accelerator_id] is None:
                raise prices.error(accelerator_id, "must not be null")
            entry = prices.sub(accelerator_id)
            entry.reject_unknown(DEVICE_PRICE_FIELDS)
            values = {name: _cost_number(entry, name) for name in DEVICE_PRICE_FIELDS if name in entry.table}
            if not values:
                raise entry.error("rental_usd_per_hour", "give a rental_usd_per_hour or a purchase_usd (or leave the "
                                                         "accelerator out)")
            settings = settings.with_price(accelerator_id, **values)
    try:
        return settings.validate()
    except ScenarioError as error:
        field, _, problem = str(error).partition(" ")
        raise table.error(field, problem) from error


def _cost_number(table: TableReader, key: str) -> float:
    value = table.table[key]
    if value is None:
        raise table.error(key, "must not be null (leave it out to use the price book's value)")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise table.error(key, f"must be a number, got {describe(value)}")
    return float(value)


def _cost_document(settings: CostSettings) -> dict[str, Any]:
    """The cost settings that are set (absent means the price book's value, so presets written
    before cost existed read unchanged)."""
    document: dict[str, Any] = {name: value for name in SITE_FIELDS if (value := getattr(settings, name)) is not None}
    prices = {
        accelerator_id: {name: value for name in DEVICE_PRICE_FIELDS if (value := getattr(setting, name)) is not None}
        for accelerator_id, setting in settings.prices
    }
    if prices:
        document["prices"] = prices
    return document


# Fields a null may set: limits that fall back to the policy's default, objectives that can be off.
_OPTIONAL_SERVING_FIELDS = ("requests", "max_num_seqs", "max_batched_tokens", "memory_fraction", "block_size",
                            "slo_ttft_ms", "slo_tpot_ms")


def _require(reader: TableReader, keys: tuple[str, ...]) -> None:
    for key in keys:
        if key not in reader.table:
            raise reader.error(key, "required field is missing")
        if reader.table[key] is None:
            raise reader.error(key, "must not be null")


def _table(root: TableReader, key: str, keys: tuple[str, ...], optional: tuple[str, ...] = ()) -> TableReader:
    table = root.sub(key)
    table.reject_unknown(keys + optional)
    _require(table, keys)
    for name in optional:
        if name in table.table and table.table[name] is None:
            raise table.error(name, "must not be null")
    return table


def _text(root: TableReader, key: str, limit: int, *, one_line: bool) -> str:
    value = root.string(key)
    if one_line and not value.strip():
        raise root.error(key, "must not be empty")
    if len(value) > limit:
        raise root.error(key, f"must be at most {limit:,} characters, got {len(value):,}")
    allowed = "" if one_line else "\n\t"
    if any(ord(char) < 32 and char not in allowed for char in value):
        raise root.error(key, "must not contain control characters" + (" or line breaks" if one_line else ""))
    return value


def _field_value(table: TableReader, field: ScenarioField) -> Any:
    """The field's value in its table (its default where an optional key is absent)."""
    key = field.preset_key[1]
    if field.preset_optional and key not in table.table:
        return field.default
    if field.kind == "count":
        return table.integer(key, minimum=field.low, maximum=field.high)
    if field.kind == "precision":
        return _precision(table, key)
    if field.kind == "fraction":
        return _fraction(table, key)
    raise ValueError(f"a preset cannot hold a {field.kind} field ({field.name})")


def _precision(table: TableReader, key: str) -> str:
    value = table.string(key)
    if value not in PRECISIONS:
        raise table.error(key, f"must be one of {', '.join(PRECISIONS)}, got {value[:40]!r}")
    return value


def _fraction(table: TableReader, key: str) -> float:
    value = table.table[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise table.error(key, f"must be a number between 0 and 1, got {describe(value)}")
    # Comparing, not math.isfinite(): an integer past 1e308 would raise OverflowError there;
    # NaN, which Python's json accepts, fails the comparison too.
    if not 0.0 <= value <= 1.0:
        raise table.error(key, f"must be a finite number between 0 and 1, got {describe(value)}")
    return float(value)


def _model(root: TableReader, path: object, catalog: Catalog | None) -> tuple[str, ModelArch | None]:
    value = root.table["model"]
    if isinstance(value, str):
        if catalog is None:
            if not value:
                raise root.error("model", "must not be empty")
        elif value not in catalog.models:
            raise root.error(
                "model", _unknown("model id", value, catalog.models) + "; a preset can embed a model the catalog lacks"
            )
        return value, None
    if not isinstance(value, Mapping):
        raise root.error("model", f"must be a catalog model id or a model table, got {describe(value)}")
    model = model_from_table(value, path, prefix="model.", source_file=str(path))
    if catalog is not None and model.id in catalog.models:
        known = catalog.models[model.id]
        if replace(known, source_file="") != replace(model, source_file=""):
            raise PresetError(
                path,
                "model.id",
                f"{model.id!r} is the id of a different catalog model ({known.name}); "
                "give the embedded model an id of its own",
            )
    return model.id, model


def _accelerators(root: TableReader, catalog: Catalog | None) -> tuple[tuple[str, ...], str]:
    table = _table(root, "accelerators", _ACCELERATOR_KEYS)
    shown = table.array("shown")
    if len(shown) > MAX_SHOWN:
        raise table.error("shown", f"lists {len(shown)} accelerators; at most {MAX_SHOWN}")
    for index, accelerator_id in enumerate(shown):
        field = f"shown[{index}]"
        if not isinstance(accelerator_id, str):
            raise table.error(field, f"must be an accelerator id (a string), got {describe(accelerator_id)}")
        _check_accelerator(table, field, accelerator_id, catalog)
        if accelerator_id in shown[:index]:
            raise table.error(field, f"{accelerator_id!r} is listed twice")
    selected = table.string("selected")
    if shown and selected not in shown:
        choices = ", ".join(shown)
        raise table.error("selected", f"must be one of the shown accelerators ({choices}), got {selected[:40]!r}")
    _check_accelerator(table, "selected", selected, catalog)
    return tuple(shown), selected


def _check_accelerator(table: TableReader, field: str, accelerator_id: str, catalog: Catalog | None) -> None:
    if catalog is None:
        if not accelerator_id:
            raise table.error(field, "must not be empty")
    elif accelerator_id not in catalog.accelerators:
        raise table.error(field, _unknown("accelerator id", accelerator_id, catalog.accelerators))


def _unknown(kind: str, name: str, known: Mapping[str, object]) -> str:
    close = difflib.get_close_matches(name, list(known), n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    return f"unknown {kind} {name[:60]!r}{hint}"


# ---- Preset -> JSON ------------------------------------------------------------------


def preset_to_json(preset: Preset) -> dict[str, Any]:
    """The preset as a JSON-ready document in the current schema."""
    s = preset.workspace.scenario
    if preset.model is not None and preset.model.id != s.model:
        raise ValueError(f"the embedded model {preset.model.id!r} is not the workspace's model {s.model!r}")
    return {
        "schema": PRESET_SCHEMA,
        "name": preset.name,
        "description": preset.description,
        "model": s.model if preset.model is None else model_to_table(preset.model),
        **_scenario_tables(s),
        "accelerators": {"shown": list(preset.workspace.shown), "selected": s.accelerator},
        "view": preset.workspace.view,
        **({"view_options": dict(preset.workspace.options)} if preset.workspace.options else {}),
        **({"serving": serving} if (serving := _serving_document(preset.workspace.serving)) else {}),
        **({"cost": cost} if (cost := _cost_document(preset.workspace.cost)) else {}),
    }


def _serving_document(spec: ServingSpec) -> dict[str, Any]:
    """The serving settings that differ from the defaults (absent means default, so presets
    written before the Serving tab read unchanged)."""
    return {name: getattr(spec, name) for name in SERVING_FIELDS if getattr(spec, name) != getattr(_SERVING_DEFAULTS, name)}


def _scenario_tables(s: Scenario) -> dict[str, dict[str, Any]]:
    """The workload, precision and parallel tables; an optional key is written only when set, so
    a preset without it reads as older versions wrote it."""
    tables: dict[str, dict[str, Any]] = {name: {} for name in _SCENARIO_TABLES}
    for f in SCENARIO_FIELDS:
        if f.preset_key is None:
            continue
        value = getattr(s, f.name)
        if f.preset_optional and value == f.default:
            continue
        tables[f.preset_key[0]][f.preset_key[1]] = value
    return tables


def new_preset(name: str, description: str, workspace: Workspace, model: ModelArch) -> Preset:
    """A preset of what the app shows. ``model`` is the workspace's model: it is embedded unless
    it is a bundled model, so a preset made with an imported or user model opens anywhere.

    A model that differs from the bundled model of the same id (a config.json imported as
    ``qwen3-8b``, or a user file replacing a bundled one) is embedded under an id of its own,
    ``<id>-custom``, since a preset cannot redefine a catalog id.
    """
    if model.id != workspace.scenario.model:
        raise ValueError(f"the model {model.id!r} is not the workspace's model {workspace.scenario.model!r}")
    bundled = load_bundled_models()
    known = bundled.get(model.id)
    if known is None:
        return Preset(name=name, description=description, workspace=workspace, model=model)
    if replace(known, source_file="") == replace(model, source_file=""):
        return Preset(name=name, description=description, workspace=workspace)
    own_id = f"{model.id[:120]}-custom"
    number = 2
    while own_id in bundled:
        own_id, number = f"{model.id[:116]}-custom{number}", number + 1
    return Preset(
        name=name,
        description=description,
        workspace=workspace.with_scenario(model=own_id),
        model=replace(model, id=own_id),
    )


def save_preset(preset: Preset, path: str | os.PathLike[str]) -> None:
    """Write the preset atomically (see :func:`write_atomically`): on any failure the previous
    file is left as it was."""
    path = Path(path)
    document = preset_to_json(preset)
    preset_from_json(document, path, None)  # never write a file the reader would refuse

    def write(stream: TextIO) -> None:
        json.dump(document, stream, indent=2, ensure_ascii=False, allow_nan=False)
        stream.write("\n")
        stream.flush()
        if stream.tell() > MAX_PRESET_BYTES:
            limit = MAX_PRESET_BYTES // (1024 * 1024)
            raise PresetError(path, None, f"the preset would be larger than {limit} MB; refusing to save it")

    write_atomically(path, write)


def preset_text(preset: Preset, path: str | os.PathLike[str]) -> str:
    """The preset file's text, as :func:`save_preset` writes it to ``path`` (named in errors), for
    writers that stage a report's files together."""
    document = preset_to_json(preset)
    preset_from_json(document, path, None)  # never write a file the reader would refuse
    text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if len(text.encode("utf-8")) > MAX_PRESET_BYTES:
        limit = MAX_PRESET_BYTES // (1024 * 1024)
        raise PresetError(path, None, f"the preset would be larger than {limit} MB; refusing to save it")
    return text


def write_atomically(path: Path, write: Callable[[TextIO], None]) -> None:
    """Write a text file atomically: ``write`` fills a temporary file in the same folder,
    which is flushed, synced and renamed over ``path``. On any failure the previous file is
    left as it was and the temporary file is removed; writers racing on one path each leave
    a whole file, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.is_file() else 0o644  # mkstemp's 0o600 would hide it from others
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            os.chmod(temporary, mode)
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise
    sync_folder(path.parent)


# ---- where presets live --------------------------------------------------------------


def user_presets_dir() -> Path:
    return user_data_dir() / "presets"


def preset_file_name(name: str) -> str:
    """A file name for a preset called ``name``: lowercase words joined by '-'."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:80].strip("-")
    return f"{slug or 'preset'}.json"


def user_preset_path(name: str) -> Path:
    return user_presets_dir() / preset_file_name(name)


def bundled_preset_files() -> list[Traversable]:
    """The bundled preset files: those in BUNDLED_ORDER first, in that order, then any others."""
    found = {entry.name[: -len(".json")]: entry for entry in files("accelscope.presets").iterdir()
             if entry.name.endswith(".json")}
    ordered = [found.pop(stem) for stem in BUNDLED_ORDER if stem in found]
    return ordered + [found[stem] for stem in sorted(found)]


def user_preset_files() -> list[Path]:
    folder = user_presets_dir()
    if not folder.is_dir():
        return []
    return sorted(path for path in folder.glob("*.json") if path.is_file())


def _all_files() -> list[tuple[Path | Traversable, bool]]:
    return [(entry, True) for entry in bundled_preset_files()] + [(path, False) for path in user_preset_files()]


def list_presets(catalog: Catalog) -> list[PresetEntry]:
    """Bundled presets, then the user's. A file that cannot be loaded is listed with its
    problem (named by its file stem) rather than hiding the others."""
    entries = []
    for entry, bundled in _all_files():
        path = Path(str(entry))
        try:
            preset = load_preset(entry, catalog, bundled=bundled)
        except PresetError as error:
            entries.append(PresetEntry(path.stem, "", path, bundled, str(error)))
            continue
        entries.append(PresetEntry(preset.name, preset.description, path, bundled))
    return entries


def find_preset(name_or_path: str | os.PathLike[str], catalog: Catalog) -> Preset:
    """A preset by path, or a bundled or user preset by file stem or by name.

    A user preset with the same stem or name as a bundled one is found first, as a user model
    replaces a bundled one of the same id.
    """
    text = os.fspath(name_or_path)
    path = Path(text)
    if path.suffix.lower() == ".json" or os.sep in text or (os.altsep and os.altsep in text) or path.is_file():
        if not path.exists():
            raise PresetError(path, None, "no such preset file")
        return load_preset(path, catalog)
    candidates = sorted(_all_files(), key=lambda item: item[1])  # user files before bundled ones
    for entry, bundled in candidates:
        if Path(str(entry)).stem == text:
            return load_preset(entry, catalog, bundled=bundled)
    loaded: list[Preset] = []
    for entry, bundled in candidates:
        with suppress(PresetError):  # a broken file is not the one asked for: it has no name
            loaded.append(load_preset(entry, catalog, bundled=bundled))
    for same in (lambda name: name == text, lambda name: name.casefold() == text.casefold()):
        for preset in loaded:
            if same(preset.name):
                return preset
    known = [preset.name for preset in loaded] + [Path(str(entry)).stem for entry, _ in candidates]
    close = difflib.get_close_matches(text, known, n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(repr(name) for name in close)}?" if close else "see `accelscope presets`"
    raise PresetError(text, None, f"no bundled or user preset has this file name or name; {hint}")
