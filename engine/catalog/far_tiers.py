"""The far memory tiers a study can attach to an accelerator (``resources/far_tiers.toml``):
host DDR5 over PCIe Gen5, Grace LPDDR5X over NVLink-C2C, CXL 2.0/3.0 memory, NVMe SSDs.

Read under the catalog's hostile-input policy (``reading.py``); every value carries its source.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..core.accelerator import MemoryTier
from ..core.errors import CatalogError
from ..core.sourced import Sourced
from .reading import TableReader, read_toml_file


@dataclass(frozen=True)
class FarTierOption:
    """A far memory tier with sourced capacity and bandwidths (SI units, per direction)."""

    id: str
    name: str
    kind: str  # a memory kind: its energy per byte comes from efficiency.toml unless given here
    capacity_bytes: Sourced
    bandwidth_Bps: Sourced
    link_bandwidth_Bps: Sourced
    energy_J_per_byte: float | None = None
    energy_basis: str = ""

    @property
    def effective_bandwidth_Bps(self) -> float:
        """What a device can stream from the tier: the memory or its link, whichever is slower."""
        return min(float(self.bandwidth_Bps), float(self.link_bandwidth_Bps))

    def memory_tier(self) -> MemoryTier:
        return MemoryTier(
            kind=self.kind,
            level="far",
            capacity_bytes=self.capacity_bytes,
            bandwidth_Bps=self.bandwidth_Bps,
            placement=True,
            link_bandwidth_Bps=self.link_bandwidth_Bps,
            name=self.name,
        )


def default_far_tiers_path() -> Path:
    return Path(str(resources.files("accelscope.resources") / "far_tiers.toml"))


def load_far_tiers(path: Path | None = None) -> dict[str, FarTierOption]:
    """The far-tier table by id; a bad field raises CatalogError naming it."""
    path = path or default_far_tiers_path()
    data = read_toml_file(Path(path))  # size-limited, special files refused, errors name the file
    entries = data.get("tier")
    if not isinstance(entries, list) or not entries:
        raise CatalogError(path, "tier", "expected at least one [[tier]] table")
    tiers: dict[str, FarTierOption] = {}
    for index, entry in enumerate(entries):
        where = f"tier[{index}]"
        if not isinstance(entry, dict):
            raise CatalogError(path, where, "expected a table")
        reader = TableReader(path, entry, where)
        reader.reject_unknown(
            ("id", "name", "kind", "capacity_bytes", "bandwidth_Bps", "link_bandwidth_Bps", "energy_J_per_byte")
        )
        texts = {}
        for key in ("id", "name", "kind"):
            value = entry.get(key)
            if not isinstance(value, str) or not value.strip():
                raise CatalogError(path, f"{where}.{key}", "must be a non-empty string")
            texts[key] = value
        if texts["id"] in tiers:
            raise CatalogError(path, f"{where}.id", f"{texts['id']!r} appears twice")
        numbers = {key: _positive_sourced(path, f"{where}.{key}", entry.get(key))
                   for key in ("capacity_bytes", "bandwidth_Bps", "link_bandwidth_Bps")}
        energy, basis = None, ""
        if "energy_J_per_byte" in entry:
            raw = entry["energy_J_per_byte"]
            if not isinstance(raw, dict) or not isinstance(raw.get("basis"), str) or not raw["basis"].strip():
                raise CatalogError(path, f"{where}.energy_J_per_byte", "expected a table with 'value' and 'basis'")
            value = raw.get("value")
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 < value < 1e-6:
                raise CatalogError(path, f"{where}.energy_J_per_byte.value", f"must be in (0, 1e-6) J, got {value!r}")
            energy, basis = float(value), raw["basis"]
        tiers[texts["id"]] = FarTierOption(**texts, **numbers, energy_J_per_byte=energy, energy_basis=basis)
    return tiers


def _positive_sourced(path: Path, field: str, raw: object) -> Sourced:
    if not isinstance(raw, dict):
        raise CatalogError(path, field, 'must be a table like { value = ..., source = "..." }')
    value, source = raw.get("value"), raw.get("source")
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 < value < 1e18:
        raise CatalogError(path, f"{field}.value", f"must be a positive number, got {value!r}")
    if not isinstance(source, str) or not source.strip():
        raise CatalogError(path, f"{field}.source", "missing: every value needs its source (datasheet or spec)")
    note = raw.get("note", "")
    return Sourced(value=float(value), source=source, note=note if isinstance(note, str) else "")
