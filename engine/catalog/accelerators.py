"""The accelerator catalog: one TOML file per accelerator, bundled or in a user's own folder.

Every quantity in a file is a *sourced value*: the number in SI units, where it came from, an
optional note and the values other sources give. The format is documented for users in
``resources/accelerators/README.md``.

Accelerator files are untrusted input (users write and share them), so the loader checks every
field and reports the first problem as a :class:`CatalogError` naming the file and the dotted
field, e.g. ``h100-sxm.toml: memory[1].bandwidth_Bps.value: must be > 0, got -3.35e+12``.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Any

from ..core.accelerator import (
    ARCHITECTURE_CLASSES,
    MEMORY_KINDS,
    MEMORY_LEVELS,
    POWER_SCOPES,
    Accelerator,
    Interconnect,
    MemoryTier,
)
from ..core.errors import CatalogError
from ..core.precision import PEAK_KEY
from ..core.sourced import GRADES, Alternative, Sourced, derived_grade
from .groups import GROUPS
from .reading import PathLike, TableReader, as_path, describe, quoted, read_toml_file

# The bundled accelerators, in the order the app lists them: NVIDIA, AMD, Apple and Intel GPUs
# by generation (each maker's unified-memory machines after its data-centre and PCIe GPUs), then
# the other architecture classes of the first paper (Sharma 2025, Sec. III).
BUNDLED_ORDER: tuple[str, ...] = (
    "a100-40gb",
    "a100-80gb",
    "h100-sxm",
    "h200",
    "h200-nvl",
    "h20",
    "gh200",
    "l4",
    "l40s",
    "rtx-4090",
    "b200",
    "b300",
    "gb200",
    "gb300",
    "vr200",
    "rtx-5090",
    "rtx-pro-6000",
    "dgx-spark",
    "mi250",
    "mi300x",
    "mi325x",
    "mi350x",
    "mi355x",
    "mi455x",
    "ryzen-ai-max-395",
    "m4-max",
    "m3-ultra",
    "m5-max",
    "max-1550",
    "arc-pro-b60",
    "crescent-island",
    "gaudi2",
    "gaudi3",
    "tpu-v5e",
    "tpu-v6e",
    "tpu-v7",
    "wse-3",
    "gc200",
    "groq-lpu",
    "groq-lp30",
    "mtia-v2",
    "cloud-ai-100-ultra",
    "ai200",
    "blackhole-p150",
    "inferentia2",
    "trainium2",
    "trainium3",
    "sn40l",
)

ACCELERATOR_ID_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

# Catalog keys of dense peak compute: fp32, bf16 (stands for bf16/fp16), fp8, int8, int4, fp4.
PEAK_FLOPS_KEYS: tuple[str, ...] = tuple(dict.fromkeys(PEAK_KEY.values()))

# The serving-stack factor is relative to vLLM on CUDA; above 1.5 would claim a stack far
# better than the reference, which no source supports.
MAX_SOFTWARE_EFFICIENCY = 1.5

# Devices in one network domain: far beyond any pod; a larger count is a typo (and past 2**1024
# no longer converts to a float for the engine).
MAX_DOMAIN_SIZE = 1_000_000_000
MAX_FLOAT = sys.float_info.max

_TOP_KEYS = (
    "id",
    "name",
    "vendor",
    "architecture_class",
    "power_scope",
    "group",
    "notes",
    "year",
    "process_node",
    "tdp_W",
    "idle_W",
    "software_efficiency",
    "peak_flops",
    "compute_unpublished",
    "memory",
    "interconnect",
    "scale_out",
)
_SOURCED_KEYS = ("value", "source", "grade", "note", "alternatives")
_ALTERNATIVE_KEYS = ("value", "source", "grade", "note")
_TIER_KEYS = (
    "kind", "level", "name", "placement", "capacity_bytes", "bandwidth_Bps", "link_bandwidth_Bps", "host_shared"
)
_INTERCONNECT_KEYS = ("name", "bandwidth_per_direction_Bps", "latency_s", "domain_size", "peer_bandwidth_per_direction_Bps")

# Checks a raw value and returns it in catalog form; raises through the reader on a problem.
ValueCheck = Callable[[TableReader, str, Any], float | int | str]


# ---- value checks --------------------------------------------------------------------


def _real(reader: TableReader, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise reader.error(key, f"must be a number, got {describe(value)}")
    if isinstance(value, int) and abs(value) > MAX_FLOAT:  # TOML integers have no size limit
        raise reader.error(key, f"must be a finite number, got {describe(value)}")
    if not math.isfinite(value):
        raise reader.error(key, f"must be a finite number, got {value}")
    return float(value)


# Generous physical bounds: a value outside is a typo or a hostile file, and would overflow
# the physics (a bandwidth of 1e-300 B/s makes every step infinite).
POWER_RANGE_W = (1.0, 1e7)  # a chip to a whole multi-rack system
FLOPS_RANGE = (1e9, 1e19)  # 1 GFLOP/s to 10 EFLOP/s
BANDWIDTH_RANGE_BPS = (1e6, 1e18)  # 1 MB/s to 1 EB/s (the WSE-3's SRAM: 2.1e16)
CAPACITY_RANGE_BYTES = (1e6, 1e16)  # 1 MB to 10 PB
LATENCY_RANGE_S = (1e-12, 1.0)


def _within(low: float, high: float, unit: str) -> ValueCheck:
    def check(reader: TableReader, key: str, value: Any) -> float:
        number = _real(reader, key, value)
        if not low <= number <= high:
            raise reader.error(key, f"must be between {low:g} and {high:g} {unit}, got {number:g}")
        return number

    return check


_power = _within(*POWER_RANGE_W, "W")
_flops = _within(*FLOPS_RANGE, "FLOP/s")
_bandwidth = _within(*BANDWIDTH_RANGE_BPS, "B/s")
_capacity = _within(*CAPACITY_RANGE_BYTES, "bytes")
_latency = _within(*LATENCY_RANGE_S, "s")
_idle_power = _within(0.0, POWER_RANGE_W[1], "W")


def _share(reader: TableReader, key: str, value: Any) -> float:
    number = _real(reader, key, value)
    if not 0 < number <= 1:
        raise reader.error(key, f"must be a fraction in (0, 1] of the memory, got {number:g}")
    return number


def _stack_factor(reader: TableReader, key: str, value: Any) -> float:
    number = _real(reader, key, value)
    if not 0 < number <= MAX_SOFTWARE_EFFICIENCY:
        raise reader.error(key, f"must be in (0, {MAX_SOFTWARE_EFFICIENCY}] (1.0 = vLLM on CUDA), got {number:g}")
    return number


def _year(reader: TableReader, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise reader.error(key, f"must be a whole year such as 2024, got {describe(value)}")
    if not 1950 <= value <= 2100:
        raise reader.error(key, f"must be a year between 1950 and 2100, got {describe(value)}")
    return value


def _device_count(reader: TableReader, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise reader.error(key, f"must be a whole number of devices, got {describe(value)}")
    if not 1 <= value <= MAX_DOMAIN_SIZE:
        raise reader.error(key, f"must be between 1 and {MAX_DOMAIN_SIZE:,}, got {describe(value)}")
    return value


def _text(reader: TableReader, key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise reader.error(key, f"must be a string, got {describe(value)}")
    if not value.strip():
        raise reader.error(key, "must not be empty")
    return value


def _required_text(reader: TableReader, key: str) -> str:
    if not reader.has(key):
        raise reader.error(key, "required field is missing")
    return _text(reader, key, reader.table[key])


# ---- sourced values ------------------------------------------------------------------


def _sourced(parent: TableReader, key: str, check: ValueCheck, required: bool = True) -> Sourced | None:
    """The sourced value ``key`` of ``parent``: {value, source, note?, alternatives?}."""
    if not parent.has(key):
        if required:
            raise parent.error(key, 'required field is missing; write it as { value = ..., source = "..." }')
        return None
    if not isinstance(parent.table[key], dict):
        raise parent.error(
            key,
            f'must be a table with a value and its source, e.g. {key} = {{ value = ..., source = "..." }}; '
            f"got {describe(parent.table[key])}",
        )
    entry = parent.sub(key)
    entry.reject_unknown(_SOURCED_KEYS)
    value = _sourced_value(entry, check)
    source = _source(entry)
    grade = _grade(entry, source)
    note = _note(entry)
    alternatives = tuple(
        _alternative(entry, f"alternatives[{index}]", raw, check)
        for index, raw in enumerate(entry.array("alternatives", []))
    )
    return Sourced(value=value, source=source, note=note, alternatives=alternatives, grade=grade)


def _alternative(parent: TableReader, key: str, raw: Any, check: ValueCheck) -> Alternative:
    if not isinstance(raw, dict):
        raise parent.error(key, f'must be a table {{ value = ..., source = "...", note = "..." }}, got {describe(raw)}')
    entry = TableReader(parent.path, raw, f"{parent.field(key)}.")
    entry.reject_unknown(_ALTERNATIVE_KEYS)
    value = _sourced_value(entry, check)
    source = _source(entry)
    return Alternative(value=value, source=source, note=_note(entry), grade=_grade(entry, source))


def _sourced_value(entry: TableReader, check: ValueCheck) -> float | int | str:
    if not entry.has("value"):
        raise entry.error("value", "required field is missing")
    return check(entry, "value", entry.table["value"])


def _source(entry: TableReader) -> str:
    if not entry.has("source"):
        raise entry.error(
            "source", "missing: every value needs its source (paper with table or section, or a datasheet)"
        )
    return _text(entry, "source", entry.table["source"])


def _grade(entry: TableReader, source: str) -> str:
    """The stated grade of the source; files without one get it derived from the source."""
    if not entry.has("grade"):
        return derived_grade(source)
    grade = _text(entry, "grade", entry.table["grade"])
    if grade not in GRADES:
        raise entry.error("grade", f"must be one of {', '.join(GRADES)}; got {quoted(grade)}")
    return grade


def _note(entry: TableReader) -> str:
    return entry.string("note", "")


# ---- the accelerator file format -----------------------------------------------------


def load_accelerator_file(path: PathLike) -> Accelerator:
    """Read and check one accelerator TOML file."""
    path = as_path(path)
    document = read_toml_file(path)

    root = TableReader(path, document)
    root.reject_unknown(_TOP_KEYS)
    accelerator_id = _required_text(root, "id")
    if not ACCELERATOR_ID_PATTERN.fullmatch(accelerator_id):
        raise root.error(
            "id", f"must be lowercase letters, digits and single '-' (e.g. 'h100-sxm'), got {quoted(accelerator_id)}"
        )
    architecture_class = _choice(root, "architecture_class", ARCHITECTURE_CLASSES)
    power_scope = _choice(root, "power_scope", POWER_SCOPES)

    tdp = _sourced(root, "tdp_W", _power)
    idle = _sourced(root, "idle_W", _idle_power)
    if float(idle) >= float(tdp):
        raise root.error("idle_W.value", f"must be below tdp_W ({float(tdp):g} W), got {float(idle):g} W")

    peak_flops, compute_unpublished = _compute(root)
    return Accelerator(
        id=accelerator_id,
        name=_required_text(root, "name"),
        vendor=_required_text(root, "vendor"),
        architecture_class=architecture_class,
        year=_sourced(root, "year", _year),
        process_node=_sourced(root, "process_node", _text),
        peak_flops=peak_flops,
        memory=_memory(root),
        interconnect=_interconnect(root, "interconnect"),
        tdp_W=tdp,
        idle_W=idle,
        power_scope=power_scope,
        software_efficiency=_sourced(root, "software_efficiency", _stack_factor),
        scale_out=_interconnect(root, "scale_out", required=False),
        notes=root.string("notes", ""),
        source_file=str(path),
        group=_choice(root, "group", GROUPS) if root.has("group") else "",
        compute_unpublished=compute_unpublished,
    )


def _choice(reader: TableReader, key: str, allowed: tuple[str, ...]) -> str:
    value = _required_text(reader, key)
    if value not in allowed:
        raise reader.error(key, f"must be one of {', '.join(allowed)}; got {quoted(value)}")
    return value


def _compute(root: TableReader) -> tuple[dict[str, Sourced], str]:
    """The dense peaks, or, for a part whose maker has published none, no peaks and the
    ``compute_unpublished`` text saying so (the model then answers memory questions only)."""
    if not root.has("compute_unpublished"):
        return _peak_flops(root), ""
    why = _required_text(root, "compute_unpublished")
    if root.has("peak_flops"):
        raise root.error(
            "compute_unpublished", "says no compute peak is published, but [peak_flops] gives some: keep one of the two"
        )
    return {}, why


def _peak_flops(root: TableReader) -> dict[str, Sourced]:
    table = root.sub("peak_flops")
    table.reject_unknown(PEAK_FLOPS_KEYS)
    peaks = {key: _sourced(table, key, _flops) for key in PEAK_FLOPS_KEYS if table.has(key)}
    if not peaks:
        raise root.error("peak_flops", f"needs at least one dense peak ({', '.join(PEAK_FLOPS_KEYS)})")
    return peaks


def _memory(root: TableReader) -> tuple[MemoryTier, ...]:
    if root.has("memory") and isinstance(root.table["memory"], dict):
        raise root.error("memory", "must be a list of tiers: write each one under its own [[memory]] header")
    raw_tiers = root.array("memory")
    if not raw_tiers:
        raise root.error("memory", "needs at least one memory tier ([[memory]])")
    tiers: list[MemoryTier] = []
    for index, raw in enumerate(raw_tiers):
        if not isinstance(raw, dict):
            raise root.error(f"memory[{index}]", f"must be a table ([[memory]]), got {describe(raw)}")
        tier = _memory_tier(TableReader(root.path, raw, f"memory[{index}]."))
        if tiers and MEMORY_LEVELS.index(tier.level) <= MEMORY_LEVELS.index(tiers[-1].level):
            raise root.error(
                f"memory[{index}].level",
                f"tiers go fastest first, one per level ({', '.join(MEMORY_LEVELS)}); "
                f"{tier.level!r} comes after {tiers[-1].level!r}",
            )
        tiers.append(tier)
    if not any(tier.placement for tier in tiers):
        raise root.error("memory", "needs at least one tier with placement = true to hold weights and KV cache")
    if not any(tier.placement and tier.level != "far" for tier in tiers):
        raise root.error("memory", "needs an on-chip or device tier with placement = true; far memory alone cannot")
    return tuple(tiers)


def _memory_tier(tier: TableReader) -> MemoryTier:
    tier.reject_unknown(_TIER_KEYS)
    kind = _choice(tier, "kind", MEMORY_KINDS)
    level = _choice(tier, "level", MEMORY_LEVELS)
    placement = tier.boolean("placement")
    bandwidth = _sourced(tier, "bandwidth_Bps", _bandwidth, required=False)
    if bandwidth is None and placement:
        raise tier.error("bandwidth_Bps", "required where placement = true (only a hardware cache may omit it)")
    link = _sourced(tier, "link_bandwidth_Bps", _bandwidth, required=False)
    if level == "far" and link is None:
        raise tier.error("link_bandwidth_Bps", "required for a far tier: the bandwidth of the link that reaches it")
    if level != "far" and link is not None:
        raise tier.error("link_bandwidth_Bps", f"only far tiers are reached over a link; this tier is {level!r}")
    host_shared = _sourced(tier, "host_shared", _share, required=False)
    if host_shared is not None and level != "device":
        raise tier.error(
            "host_shared", f"only a device tier (unified memory shared with the host) has it; this tier is {level!r}"
        )
    return MemoryTier(
        kind=kind,
        level=level,
        capacity_bytes=_sourced(tier, "capacity_bytes", _capacity),
        bandwidth_Bps=bandwidth,
        placement=placement,
        link_bandwidth_Bps=link,
        name=_required_text(tier, "name"),
        host_shared=host_shared,
    )


def _interconnect(root: TableReader, key: str, required: bool = True) -> Interconnect | None:
    if not required and not root.has(key):
        return None
    network = root.sub(key)
    network.reject_unknown(_INTERCONNECT_KEYS)
    bandwidth = _sourced(network, "bandwidth_per_direction_Bps", _bandwidth)
    peer = None
    if network.has("peer_bandwidth_per_direction_Bps"):
        peer = _sourced(network, "peer_bandwidth_per_direction_Bps", _bandwidth)
        if float(peer) > float(bandwidth):
            raise network.error(
                "peer_bandwidth_per_direction_Bps.value",
                f"one peer's link cannot exceed the device's total ({float(bandwidth):g} B/s), got {float(peer):g}",
            )
    return Interconnect(
        name=_required_text(network, "name"),
        bandwidth_per_direction_Bps=bandwidth,
        latency_s=_sourced(network, "latency_s", _latency),
        domain_size=_sourced(network, "domain_size", _device_count),
        peer_bandwidth_per_direction_Bps=peer,
    )


# ---- the bundled catalog -------------------------------------------------------------


def bundled_accelerator_files() -> list[Path]:
    """The bundled accelerator files, sorted by file name."""
    folder = files("accelscope.resources") / "accelerators"
    # The resources ship as plain files (wheel or desktop bundle), so each entry is a real path.
    return sorted(Path(str(entry)) for entry in folder.iterdir() if entry.name.endswith(".toml"))


def load_bundled_accelerators() -> dict[str, Accelerator]:
    """Every bundled accelerator by id: those in BUNDLED_ORDER in that order, then any others by id
    (a new dict each call, of the same frozen values: the files are read again only when they
    change, so that every Engine does not parse the catalog anew)."""
    files_now = bundled_accelerator_files()
    key = tuple((str(path), path.stat().st_mtime_ns, path.stat().st_size) for path in files_now)
    if _BUNDLED_CACHE.get("key") != key:
        _BUNDLED_CACHE.update(key=key, accelerators=_read_bundled_accelerators(files_now))
    return dict(_BUNDLED_CACHE["accelerators"])


_BUNDLED_CACHE: dict[str, Any] = {}


def _read_bundled_accelerators(paths: list[Path]) -> dict[str, Accelerator]:
    loaded: dict[str, Accelerator] = {}
    for path in paths:
        accelerator = load_accelerator_file(path)
        if accelerator.id in loaded:
            raise CatalogError(
                path, "id", f"{accelerator.id!r} is already used by {loaded[accelerator.id].source_file}"
            )
        loaded[accelerator.id] = accelerator
    ordered = [loaded.pop(accelerator_id) for accelerator_id in BUNDLED_ORDER if accelerator_id in loaded]
    return {accelerator.id: accelerator for accelerator in ordered + sorted(loaded.values(), key=lambda a: a.id)}
