"""The roofline of an accelerator: its compute ceiling at a precision and one bandwidth slope
per memory tier, with the ridge points where they meet (FLOP/byte)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.accelerator import Accelerator
from ..core.constants import Constants
from ..core.precision import requested_compute_format
from .reference.stage import compute_format_of, compute_peak


@dataclass(frozen=True)
class RooflineSlope:
    tier_name: str  # e.g. "HBM3", "SRAM", "Host DDR5 over PCIe Gen5 x16"
    level: str  # on-chip, device, far
    bandwidth_Bps: float  # what the device can stream from the tier (memory or link, the slower)
    sustained_bandwidth_Bps: float  # x memory (or link) efficiency x software efficiency

    def ridge_point(self, peak_flops: float) -> float:
        """Operational intensity (FLOP/byte) above which this tier no longer binds."""
        return peak_flops / self.bandwidth_Bps


@dataclass(frozen=True)
class Roofline:
    accelerator_id: str
    compute_precision: str  # the catalog peak key the products run on
    peak_flops: float
    sustained_flops: float  # x compute efficiency x software efficiency
    slopes: tuple[RooflineSlope, ...]  # fastest tier first; the device tier is the main one

    @property
    def main_slope(self) -> RooflineSlope:
        """The tier that holds the model: device memory (HBM, LPDDR), or on an SRAM machine
        the on-chip SRAM (never a far tier such as host memory or MemoryX)."""
        device = [s for s in self.slopes if s.level == "device"]
        near = device or [s for s in self.slopes if s.level == "on-chip"]
        return near[-1]

    @property
    def has_ceiling(self) -> bool:
        """False for a part whose maker published no compute peak: it has slopes, no roof."""
        return math.isfinite(self.peak_flops)

    @property
    def ridge_point(self) -> float:
        return self.main_slope.ridge_point(self.peak_flops)

    def attainable(self, intensity: float, slope: RooflineSlope | None = None) -> float:
        """min(peak, bandwidth x intensity): the roofline itself, in FLOP/s."""
        slope = slope or self.main_slope
        return min(self.peak_flops, slope.bandwidth_Bps * intensity)


def roofline(
    accelerator: Accelerator, weight_precision: str, activation_precision: str, constants: Constants
) -> Roofline:
    cls = constants.for_class(accelerator.architecture_class)
    stack = float(accelerator.software_efficiency)
    # As the engine runs it (reference.stage): without a published peak for this format (or a
    # wider one) the roofline has slopes only, no ceiling (``has_ceiling`` is false).
    key, _ = compute_format_of(accelerator, requested_compute_format(weight_precision, activation_precision))
    peak = compute_peak(accelerator, key)
    slopes = []
    for tier in accelerator.memory:
        if tier.bandwidth_Bps is None:
            continue  # a cache whose bandwidth is not published
        efficiency = cls.link_efficiency if tier.level == "far" else cls.memory_efficiency
        bandwidth = tier.effective_bandwidth_Bps
        slopes.append(RooflineSlope(tier.name or tier.kind, tier.level, bandwidth, bandwidth * efficiency * stack))
    return Roofline(accelerator.id, key, peak, peak * cls.compute_efficiency * stack, tuple(slopes))
