"""Prices as the engine sees them: sourced, dated, graded values, and the site they run on.

A price is never invented: a device without one has none (``None``), and whatever shows a cost
says "unknown" rather than 0. Units: US dollars; rentals per device-hour, purchases per device,
electricity per kWh.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

RENTAL_KINDS: tuple[str, ...] = ("on-demand", "reserved", "capacity-block", "spot")
# The grade of a price the user gave (in the app, a preset or on the command line): their own.
OWN_GRADE = "own"
OWN_SOURCE = "your own value"

# What a price or site value may be: (lowest, highest, whether the lowest itself is allowed).
MAX_PRICE_USD = 1e9
SITE_LIMITS: dict[str, tuple[float, float, bool]] = {
    "electricity_usd_per_kwh": (0.0, 10.0, False),
    "pue": (1.0, 5.0, True),
    "amortisation_years": (0.0, 50.0, False),
    "utilisation": (0.0, 1.0, False),
    "hosting_usd_per_device_year": (0.0, 1e7, True),
}
SITE_FIELDS: tuple[str, ...] = tuple(SITE_LIMITS)
_LINK = re.compile(r"\s*\(https?://[^)]*\)")  # a source's address, left out of its short citation


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
    def own(self) -> bool:
        """Whether the user gave this value (rather than a sourced book)."""
        return self.grade == OWN_GRADE

    @property
    def citation(self) -> str:
        """Where the price is from, in a few words: provider or source, and date."""
        if self.own:
            return OWN_SOURCE
        who = _LINK.sub("", self.provider or self.source)
        return f"{who}, {self.date}"

    @staticmethod
    def own_value(value: float) -> Price:
        """A value the user gave: no source but theirs."""
        return Price(float(value), OWN_SOURCE, "", OWN_GRADE)


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
