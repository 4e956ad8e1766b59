"""What an accelerator is, as the engine sees it. Values are SI (bytes, B/s, FLOP/s, W, s)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .sourced import Sourced

# The first paper's five classes (Sharma, Sec. III) plus the reconfigurable dataflow unit
# of the second paper (Brunetta et al., Sec. II-B), which fits none of the five.
ARCHITECTURE_CLASSES: tuple[str, ...] = (
    "gpu-simt",
    "systolic",
    "many-core-sram",
    "wafer-scale",
    "deterministic-pipeline",
    "dataflow-rdu",
)

# Memory levels, fastest first. A device has at most one tier per level.
#   on-chip: SRAM or cache on the die or wafer
#   device:  HBM / LPDDR attached to the package
#   far:     host DRAM, CXL or SambaNova's DDR, reached over a link (PCIe, C2C, ...)
MEMORY_LEVELS: tuple[str, ...] = ("on-chip", "device", "far")
MEMORY_KINDS: tuple[str, ...] = ("sram", "cache", "hbm", "lpddr", "ddr", "host", "cxl")

POWER_SCOPES: tuple[str, ...] = ("device", "system")


@dataclass(frozen=True)
class MemoryTier:
    """One level of memory.

    ``placement`` says whether weights and KV cache can be placed there by software: true for
    the SRAM of Groq, Cerebras or Graphcore and for HBM, false for a hardware-managed cache
    such as a GPU's L2 (it speeds up re-use but holds no model).
    """

    kind: str
    level: str
    capacity_bytes: Sourced
    bandwidth_Bps: Sourced | None  # may be unpublished for a hardware cache (placement false)
    placement: bool
    link_bandwidth_Bps: Sourced | None = None  # far tiers: the link that reaches them
    name: str = ""
    # Unified memory shared with the host (Apple, DGX Spark, Strix Halo): the fraction of this
    # device tier the OS lets the accelerator use.
    host_shared: Sourced | None = None

    @property
    def accelerator_capacity_bytes(self) -> float:
        """What the accelerator may hold here: all of it, or of unified memory the share the
        OS grants it (the rest stays with the host's own programs)."""
        capacity = float(self.capacity_bytes)
        return capacity * float(self.host_shared) if self.host_shared is not None else capacity

    @property
    def effective_bandwidth_Bps(self) -> float:
        """What a device can stream from this tier: the memory or the link, whichever is slower."""
        if self.bandwidth_Bps is None:
            return 0.0
        bandwidth = float(self.bandwidth_Bps)
        if self.link_bandwidth_Bps is not None:
            bandwidth = min(bandwidth, float(self.link_bandwidth_Bps))
        return bandwidth


@dataclass(frozen=True)
class Interconnect:
    """A device-to-device network: per device, per direction, with one hop's latency."""

    name: str
    bandwidth_per_direction_Bps: Sourced
    latency_s: Sourced
    domain_size: Sourced  # devices reachable at this bandwidth (NVLink domain, pod, ...)
    # A switchless mesh (Infinity Fabric, Gaudi's RoCE ports) links each pair of devices
    # directly at this bandwidth; None for a switched fabric, where any group gets it all.
    peer_bandwidth_per_direction_Bps: Sourced | None = None

    def group_bandwidth_Bps(self, peers: int) -> float:
        """What one device can send at once to ``peers`` others: all of it through a switch;
        on a mesh only over its direct links to those peers."""
        total = float(self.bandwidth_per_direction_Bps)
        if self.peer_bandwidth_per_direction_Bps is None:
            return total
        return min(total, max(peers, 1) * float(self.peer_bandwidth_per_direction_Bps))


@dataclass(frozen=True)
class Accelerator:
    id: str
    name: str
    vendor: str
    architecture_class: str
    year: Sourced
    process_node: Sourced
    peak_flops: dict[str, Sourced]  # dense FLOP/s (OP/s for integer) by precision key
    memory: tuple[MemoryTier, ...]  # fastest first
    interconnect: Interconnect
    tdp_W: Sourced
    idle_W: Sourced
    power_scope: str  # "device": one chip or board; "system": a whole chassis (CS-3)
    software_efficiency: Sourced  # maturity of the serving stack, 1.0 = the reference stack
    scale_out: Interconnect | None = None  # network beyond the scale-up domain
    notes: str = ""
    source_file: str = ""
    extra: dict[str, Sourced] = field(default_factory=dict)
    # The group the app lists it under where the file states one ("" = derived from the other
    # fields: ``catalog.groups.accelerator_group``).
    group: str = ""
    # For a part whose maker has published no compute peak (peak_flops empty): what is missing,
    # in words. The model then answers memory questions only and says why it gives no times.
    compute_unpublished: str = ""

    @property
    def compute_published(self) -> bool:
        """Whether any dense peak is known; without one no time, throughput or energy is stated."""
        return bool(self.peak_flops)

    def peak(self, key: str) -> float:
        """Dense peak for a catalog precision key, 0.0 where the device has none."""
        value = self.peak_flops.get(key)
        return float(value) if value is not None else 0.0

    def peaks(self) -> dict[str, float]:
        return {key: float(value) for key, value in self.peak_flops.items()}

    @property
    def near_tiers(self) -> tuple[MemoryTier, ...]:
        """The tiers weights and KV cache are placed in on the device (on-chip and device
        memory, fastest first): the one rule every model of the device's memory uses."""
        return tuple(t for t in self.memory if t.placement and t.level in ("on-chip", "device"))

    @property
    def far_tier(self) -> MemoryTier | None:
        """The far tier (host, CXL, DDR) offloaded weights and KV cache are placed in, if any."""
        return next((t for t in self.memory if t.placement and t.level == "far"), None)

    def tier(self, level: str) -> MemoryTier | None:
        for tier in self.memory:
            if tier.level == level:
                return tier
        return None
