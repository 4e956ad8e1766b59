"""Efficiency, overhead and energy constants, per architecture class, with their bases.

Loaded from ``resources/efficiency.toml``; see that file for what each constant means and
why it has the value it has.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..core.accelerator import ARCHITECTURE_CLASSES, MEMORY_KINDS
from ..core.errors import CatalogError

CLASS_FIELDS: tuple[str, ...] = (
    "compute_efficiency",
    "memory_efficiency",
    "link_efficiency",
    "interconnect_efficiency",
    "per_layer_overhead_s",
    "usable_memory_fraction",
    "runtime_overhead_bytes",
    "busy_power_fraction",
    "step_overhead_s",
    "sequence_overhead_s",
    "operator_overlap",
    "collective_overhead_s",
    "activation_quantization_overhead_s",
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


@dataclass(frozen=True)
class ClassConstants:
    """The constants of one architecture class, each with the sentence that justifies it."""

    architecture_class: str
    compute_efficiency: float
    memory_efficiency: float
    link_efficiency: float
    interconnect_efficiency: float
    per_layer_overhead_s: float
    usable_memory_fraction: float
    runtime_overhead_bytes: float
    # While executing (any phase) the device draws at least this fraction of its TDP: clocks
    # up, memory PHYs and cores powered whatever the arithmetic. 0 = idle plus work only.
    busy_power_fraction: float
    # The serving stack's host work per forward step (scheduling, input preparation, sampling,
    # output processing) during which the devices wait: a fixed part and a part per sequence.
    step_overhead_s: float
    sequence_overhead_s: float
    # 1: a pass's operators overlap (spatial dataflow), so it takes max(compute, memory) of the
    # whole pass; 0: they run one after another and each takes its own roofline.
    operator_overlap: float
    # Each communication operation (all-reduce, all-to-all, stage-to-stage transfer) costs this
    # once, on top of its steps: launching it and synchronising the devices.
    collective_overhead_s: float
    # Extra time per layer per pass when activations are narrower than 16 bits (W8A8, W4A4):
    # the kernels that quantise each linear product's input.
    activation_quantization_overhead_s: float
    basis: dict[str, str]


@dataclass(frozen=True)
class Constants:
    classes: dict[str, ClassConstants]
    prefill_chunk_tokens: int
    logits_bytes_per_element: float
    kv_starvation_weight_fraction: float
    memory_energy_J_per_byte: dict[str, float]
    interconnect_energy_J_per_byte: float
    basis: dict[str, str]

    def for_class(self, architecture_class: str) -> ClassConstants:
        return self.classes[architecture_class]


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


def load_constants(path: Path | None = None) -> Constants:
    path = path or Path(str(resources.files("accelscope.resources") / "efficiency.toml"))
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise CatalogError(path, None, f"cannot read constants: {error}") from None

    basis: dict[str, str] = {}
    classes: dict[str, ClassConstants] = {}
    for architecture_class in ARCHITECTURE_CLASSES:
        table = data.get("classes", {}).get(architecture_class)
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

    workload = data.get("workload", {})
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
            data.get("memory_energy_J_per_byte", {}).get(kind),
            0,
            1e-6,
        )
    link, basis["interconnect_energy"] = _number(
        path,
        "link_energy.interconnect_J_per_byte",
        data.get("link_energy", {}).get("interconnect_J_per_byte"),
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
