"""Prices as the engine sees them: sourced, dated, graded values, and the site they run on.

A price is never invented: a device without one has none (``None``), and whatever shows a cost
says "unknown" rather than 0. Units: US dollars; rentals per device-hour, purchases per device,
electricity per kWh.
"""

from __future__ import annotations

from dataclasses import dataclass, field

RENTAL_KINDS: tuple[str, ...] = ("on-demand", "reserved", "capacity-block", "spot")


@dataclass(frozen=True)
class Price:
    """One price with where it came from. ``kind`` and ``provider`` describe a rental,
    ``includes`` a purchase (what the money buys)."""

    value: float
    source: str
    date: str
    grade: str
    note: str = ""
    kind: str = ""
    provider: str = ""
    includes: str = ""
    alternatives: tuple[Price, ...] = ()

    def __float__(self) -> float:
        return float(self.value)

    @property
    def citation(self) -> str:
        """Where the price is from, in a few words: provider or source, and date."""
        who = self.provider or self.source
        return f"{who}, {self.date}"


@dataclass(frozen=True)
class DevicePrices:
    rental: Price | None = None  # per device-hour
    purchase: Price | None = None  # per device


@dataclass(frozen=True)
class Site:
    """Where owned devices run: what energy costs and how the purchase is spread."""

    electricity_usd_per_kwh: Price
    pue: Price  # facility power over IT power
    amortisation_years: Price
    utilisation: Price  # share of the year serving at the modelled rate
    hosting_usd_per_device_year: Price


@dataclass(frozen=True)
class PriceBook:
    site: Site
    devices: dict[str, DevicePrices] = field(default_factory=dict)

    def of(self, accelerator_id: str) -> DevicePrices:
        return self.devices.get(accelerator_id, DevicePrices())
