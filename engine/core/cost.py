"""The user's cost settings, and the prices they resolve to over the price book.

:class:`CostSettings` is what the app's Cost group, a preset's ``cost`` section and the command
line's price flags set: a price per accelerator (rental per device-hour, purchase per device)
and the site's values (electricity, PUE, amortisation, utilisation, hosting). Each is optional:
``None`` takes the price book's sourced value, and where the book has none the price stays
unknown. :class:`Pricing` lays the settings over a :class:`~.prices.PriceBook`: what the cost
arithmetic (``engine.studies.cost``) reads, each value with where it came from.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace

from .errors import ScenarioError
from .prices import MAX_PRICE_USD, SITE_FIELDS, SITE_LIMITS, Price, PriceBook, Site

MAX_RENTAL_USD_PER_HOUR = 1e6
DEVICE_PRICE_FIELDS: tuple[str, ...] = ("rental_usd_per_hour", "purchase_usd")


@dataclass(frozen=True)
class DevicePriceSetting:
    """The user's prices for one accelerator; ``None`` keeps the book's."""

    rental_usd_per_hour: float | None = None  # per device-hour
    purchase_usd: float | None = None  # per device

    @property
    def empty(self) -> bool:
        return self.rental_usd_per_hour is None and self.purchase_usd is None


@dataclass(frozen=True)
class CostSettings:
    """Prices and site values the user set; ``None`` (and an accelerator not listed) takes the
    price book's. Units: US dollars, per device-hour, per device, per kWh, per device-year."""

    electricity_usd_per_kwh: float | None = None
    pue: float | None = None  # facility power over IT power
    amortisation_years: float | None = None
    utilisation: float | None = None  # share of the year the system serves at the modelled rate
    hosting_usd_per_device_year: float | None = None
    # (accelerator id, its prices), sorted by id, with only accelerators that have a price set.
    prices: tuple[tuple[str, DevicePriceSetting], ...] = field(default=())

    def price(self, accelerator_id: str) -> DevicePriceSetting:
        return dict(self.prices).get(accelerator_id, DevicePriceSetting())

    def with_price(self, accelerator_id: str, **changes: float | None) -> CostSettings:
        """Set (or clear, with None) an accelerator's ``rental_usd_per_hour`` or ``purchase_usd``."""
        unknown = set(changes) - set(DEVICE_PRICE_FIELDS)
        if unknown:
            raise KeyError(f"unknown price {min(unknown)!r}")
        setting = replace(self.price(accelerator_id), **changes)
        kept = {**dict(self.prices), accelerator_id: setting}
        return replace(self, prices=tuple(sorted((a, p) for a, p in kept.items() if not p.empty)))

    def with_site(self, **changes: float | None) -> CostSettings:
        unknown = set(changes) - set(SITE_FIELDS)
        if unknown:
            raise KeyError(f"unknown site value {min(unknown)!r}")
        return replace(self, **changes)

    def validate(self) -> CostSettings:
        """Refuse values no cost can be computed from, naming the field (``prices.<id>.<field>``
        for an accelerator's)."""
        for name in SITE_FIELDS:
            value = getattr(self, name)
            if value is not None:
                low, high, inclusive = SITE_LIMITS[name]
                check_number(name, value, low, high, low_allowed=inclusive)
        for accelerator_id, setting in self.prices:
            if not isinstance(accelerator_id, str) or not accelerator_id:
                raise ScenarioError(f"prices: an accelerator id must be a non-empty string, got {accelerator_id!r}")
            if setting.rental_usd_per_hour is not None:
                check_number(f"prices.{accelerator_id}.rental_usd_per_hour", setting.rental_usd_per_hour, 0.0,
                             MAX_RENTAL_USD_PER_HOUR)
            if setting.purchase_usd is not None:
                check_number(f"prices.{accelerator_id}.purchase_usd", setting.purchase_usd, 0.0, MAX_PRICE_USD)
        return self


def check_number(name: str, value: object, low: float, high: float, *, low_allowed: bool = False) -> None:
    """A number in its range, or a ScenarioError that starts with the field's name."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScenarioError(f"{name} must be a number, got {value!r}")
    # The range first: math.isfinite overflows on an integer beyond the float range.
    below = value < low if low_allowed else value <= low
    if below or value > high or not math.isfinite(value):
        bound = f"at least {low:g}" if low_allowed else f"above {low:g}"
        raise ScenarioError(f"{name} must be {bound} and at most {high:g}, got {value!r}")


@dataclass(frozen=True)
class Pricing:
    """The price book with the user's settings laid over it: each price a :class:`Price` (the
    user's own are graded ``own``), ``None`` where neither gives one."""

    book: PriceBook
    settings: CostSettings = CostSettings()

    @functools.cached_property
    def site(self) -> Site:
        book = self.book.site
        changes = {name: Price.own_value(value) for name in SITE_FIELDS
                   if (value := getattr(self.settings, name)) is not None}
        return replace(book, **changes)

    def rental(self, accelerator_id: str) -> Price | None:
        """Per device-hour."""
        own = self.settings.price(accelerator_id).rental_usd_per_hour
        return Price.own_value(own) if own is not None else self.book.of(accelerator_id).rental

    def purchase(self, accelerator_id: str) -> Price | None:
        """Per device."""
        own = self.settings.price(accelerator_id).purchase_usd
        return Price.own_value(own) if own is not None else self.book.of(accelerator_id).purchase
