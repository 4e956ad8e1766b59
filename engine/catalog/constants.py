"""The efficiency constants file (``resources/efficiency.toml``) read into
:class:`~accelscope.engine.core.constants.Constants`, under the catalog's hostile-input policy
(``reading.py``: size limit, regular files only, errors that name the file and the field).
"""

from __future__ import annotations

import math
from dataclasses import fields
from importlib import resources
from pathlib import Path

from ..core.accelerator import ARCHITECTURE_CLASSES, MEMORY_KINDS
from ..core.constants import ClassConstants, Constants
from ..core.errors import CatalogError
from .reading import read_toml_file

# Every number of a class, in the order of ClassConstants.
CLASS_FIELDS: tuple[str, ...] = tuple(
    f.name for f in fields(ClassConstants) if f.name not in ("architecture_class", "basis")
)
_FRACTIONS = {
    "compute_efficiency",
    "memory_efficiency",
    "link_efficiency",
    "interconnect_efficiency",
    "usable_memory_fraction",
    "busy_power_fraction",
    "operator_overlap",
}
# 0 is meaningful: no floor above idle; operators run one after another.
_MAY_BE_ZERO = {"busy_power_fraction", "operator_overlap"}


def _number(path: Path, field: str, entry: object, low: float, high: float) -> tuple[float, str]:
    if not isinstance(entry, dict) or "value" not in entry or "basis" not in entry:
        raise CatalogError(path, field, "expected a table with 'value' and 'basis'")
    value, basis = entry["value"], entry["basis"]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise CatalogError(path, f"{field}.value", f"expected a finite number, got {value!r}")
    if not low <= value <= high:
        raise CatalogError(path, f"{field}.value", f"{value} is outside [{low}, {high}]")
    if not isinstance(basis, str) or not basis.strip():
        raise CatalogError(path, f"{field}.basis", "every constant needs a non-empty basis")
    return float(value), basis


def _section(path: Path, data: dict, key: str) -> dict:
    """A top-level table of the file ({} where absent, so each missing value is named)."""
    table = data.get(key, {})
    if not isinstance(table, dict):
        raise CatalogError(path, key, "expected a table")
    return table


def load_constants(path: Path | None = None) -> Constants:
    """The constants; a bad or missing value raises CatalogError naming the file and the field."""
    path = Path(path or str(resources.files("accelscope.resources") / "efficiency.toml"))
    data = read_toml_file(path)

    basis: dict[str, str] = {}
    classes: dict[str, ClassConstants] = {}
    for architecture_class in ARCHITECTURE_CLASSES:
        table = _section(path, data, "classes").get(architecture_class)
        if not isinstance(table, dict):
            raise CatalogError(path, f"classes.{architecture_class}", "missing")
        values: dict[str, float] = {}
        class_basis: dict[str, str] = {}
        for name in CLASS_FIELDS:
            high = 1.0 if name in _FRACTIONS or name.endswith("_s") else 1e12  # times: at most 1 s
            low = 1e-3 if name in _FRACTIONS and name not in _MAY_BE_ZERO else 0.0
            values[name], class_basis[name] = _number(
                path, f"classes.{architecture_class}.{name}", table.get(name), low, high
            )
        classes[architecture_class] = ClassConstants(architecture_class, **values, basis=class_basis)

    workload = _section(path, data, "workload")
    chunk, basis["prefill_chunk_tokens"] = _number(
        path, "workload.prefill_chunk_tokens", workload.get("prefill_chunk_tokens"), 1, 1e9
    )
    logits, basis["logits_bytes_per_element"] = _number(
        path, "workload.logits_bytes_per_element", workload.get("logits_bytes_per_element"), 1, 8
    )
    starvation, basis["kv_starvation_weight_fraction"] = _number(
        path,
        "workload.kv_starvation_weight_fraction",
        workload.get("kv_starvation_weight_fraction"),
        0,
        1,
    )
    memory_energy: dict[str, float] = {}
    for kind in MEMORY_KINDS:
        memory_energy[kind], basis[f"memory_energy.{kind}"] = _number(
            path,
            f"memory_energy_J_per_byte.{kind}",
            _section(path, data, "memory_energy_J_per_byte").get(kind),
            0,
            1e-6,
        )
    link, basis["interconnect_energy"] = _number(
        path,
        "link_energy.interconnect_J_per_byte",
        _section(path, data, "link_energy").get("interconnect_J_per_byte"),
        0,
        1e-6,
    )
    return Constants(
        classes=classes,
        prefill_chunk_tokens=int(chunk),
        logits_bytes_per_element=logits,
        kv_starvation_weight_fraction=starvation,
        memory_energy_J_per_byte=memory_energy,
        interconnect_energy_J_per_byte=link,
        basis=basis,
    )
