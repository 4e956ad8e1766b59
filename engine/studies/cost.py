"""Cost: dollars per hour of a system, per million tokens and per year, from the engine's results.

Arithmetic on what the engine computed (devices, mean power, tokens per second), the prices of
:class:`~accelscope.engine.core.cost.Pricing` and the site; no physics. Two ways of paying, side
by side:

- **rental**: devices × the price per device-hour. It is rented for the hours it serves (on
  demand), so the utilisation does not change its cost per token; the rent includes the
  provider's energy, cooling and hosting.
- **ownership**: the purchase written off over ``amortisation_years``, spread over the hours the
  system serves in a year (8,760 h × ``utilisation``); the energy, at the mean power of the
  modelled run while it serves plus every device's idle power while it does not, × PUE × the
  electricity price; and hosting per device-year, spread like the purchase.

Then, for either: per million tokens = cost per serving hour ÷ (3,600 s × tokens/s) × 10⁶, and
TCO per year = cost per serving hour × 8,760 h × utilisation. A price that is not known makes
every number that needs it unknown (NaN in the arrays, ``None`` in the records, with the
reason), never 0.

The same function (:func:`cost_arrays`) prices one scenario, the shown accelerators (a
:class:`Frame`'s outputs), every point of the batch sweep, and served runs (their achieved
rate, or their capacity under an SLO); :func:`cheapest_at_slo` ranks accelerators that meet one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..catalog.catalog import Catalog
from ..core.cost import Pricing
from ..core.prices import Price, Site
from ..physics.frame import Frame
from ..physics.results import Outputs, Result
from .serving.capacity import CapacityResult

HOURS_PER_YEAR = 8760.0
SECONDS_PER_HOUR = 3600.0
TOKENS_PER_MILLION = 1e6
WATTS_PER_KILOWATT = 1e3
VIEWS: tuple[str, ...] = ("rental", "ownership")
VIEW_LABELS: dict[str, str] = {"rental": "rented", "ownership": "owned"}


# ---- the arithmetic, over arrays ----------------------------------------------------------------


@dataclass(frozen=True)
class ViewCosts:
    """One way of paying, over whatever axes the inputs had (NaN: unknown). Per hour means per
    hour the system serves at the modelled rate."""

    usd_per_hour: np.ndarray
    capital_usd_per_hour: np.ndarray  # rental: the rent; ownership: the purchase written off
    energy_usd_per_hour: np.ndarray  # ownership only (a rent includes it): NaN for rental
    hosting_usd_per_hour: np.ndarray  # ownership only
    usd_per_mtok_output: np.ndarray
    usd_per_mtok_total: np.ndarray  # per million input + output tokens
    energy_share: np.ndarray  # of usd_per_hour, ownership only
    tco_usd_per_year: np.ndarray


@dataclass(frozen=True)
class Costs:
    rental: ViewCosts
    ownership: ViewCosts
    # The mean power an owner pays for per hour served: the run's, plus the idle devices' over
    # the hours the system does not serve (all devices, W).
    charged_power_W: np.ndarray

    def view(self, name: str) -> ViewCosts:
        return self.rental if name == "rental" else self.ownership


def cost_arrays(
    devices: np.ndarray | float,
    power_W: np.ndarray | float,
    output_tokens_per_s: np.ndarray | float,
    total_tokens_per_s: np.ndarray | float,
    idle_power_per_device_W: np.ndarray | float,
    rental_usd_per_device_hour: np.ndarray | float,
    purchase_usd_per_device: np.ndarray | float,
    site: Site,
) -> Costs:
    """Both views for systems of ``devices`` drawing ``power_W`` (all devices, mean over the
    modelled run) while emitting the tokens per second given (whole system). Arrays broadcast;
    a price of NaN (not known) gives NaN wherever it is needed."""
    devices = np.asarray(devices, dtype=float)
    power = np.asarray(power_W, dtype=float)
    output_rate = np.asarray(output_tokens_per_s, dtype=float)
    total_rate = np.asarray(total_tokens_per_s, dtype=float)
    idle = np.asarray(idle_power_per_device_W, dtype=float)
    rent = np.asarray(rental_usd_per_device_hour, dtype=float)
    purchase = np.asarray(purchase_usd_per_device, dtype=float)
    electricity, pue = float(site.electricity_usd_per_kwh), float(site.pue)
    years, utilisation = float(site.amortisation_years), float(site.utilisation)
    hosting = float(site.hosting_usd_per_device_year)
    serving_hours_per_year = HOURS_PER_YEAR * utilisation

    shape = np.broadcast(devices, power, output_rate, total_rate, idle, rent, purchase).shape
    nothing = np.full(shape, np.nan)
    rental_per_hour = devices * rent
    rental = _view(rental_per_hour, rental_per_hour, nothing, nothing, output_rate, total_rate, nothing,
                   serving_hours_per_year)

    capital = devices * purchase / (years * serving_hours_per_year)
    # Idle devices still draw power in the hours the system does not serve, charged to the hours it does.
    idle_hours_per_serving_hour = (1.0 - utilisation) / utilisation
    energy_W = power + (devices * idle * idle_hours_per_serving_hour if idle_hours_per_serving_hour > 0 else 0.0)
    energy = energy_W / WATTS_PER_KILOWATT * pue * electricity
    hosting_per_hour = devices * hosting / serving_hours_per_year
    owned_per_hour = capital + energy + hosting_per_hour
    with np.errstate(divide="ignore", invalid="ignore"):
        share = energy / owned_per_hour
    ownership = _view(owned_per_hour, capital, energy, hosting_per_hour, output_rate, total_rate, share,
                      serving_hours_per_year)
    return Costs(rental, ownership, np.broadcast_to(energy_W, shape).copy())


def _view(per_hour, capital, energy, hosting, output_rate, total_rate, share, serving_hours_per_year) -> ViewCosts:
    def per_million(rate: np.ndarray) -> np.ndarray:
        tokens_per_hour = np.where(rate > 0, rate * SECONDS_PER_HOUR, np.nan)  # no tokens: no cost per token
        return per_hour / tokens_per_hour * TOKENS_PER_MILLION

    return ViewCosts(
        usd_per_hour=per_hour,
        capital_usd_per_hour=capital,
        energy_usd_per_hour=energy,
        hosting_usd_per_hour=hosting,
        usd_per_mtok_output=per_million(output_rate),
        usd_per_mtok_total=per_million(total_rate),
        energy_share=share,
        tco_usd_per_year=per_hour * serving_hours_per_year,
    )


# ---- one system, as a record ------------------------------------------------------------------


@dataclass(frozen=True)
class ViewCost:
    """One way of paying for one system; a number is ``None`` when it cannot be known, and
    ``unknown`` says why (empty when everything is known)."""

    view: str  # "rental" or "ownership"
    price: Price | None  # per device-hour (rental) or per device (ownership)
    usd_per_hour: float | None
    capital_usd_per_hour: float | None
    energy_usd_per_hour: float | None
    hosting_usd_per_hour: float | None
    usd_per_mtok_output: float | None
    usd_per_mtok_total: float | None
    energy_share: float | None
    tco_usd_per_year: float | None
    unknown: str = ""

    @property
    def known(self) -> bool:
        return self.usd_per_mtok_output is not None


@dataclass(frozen=True)
class SystemCost:
    """What one system (``devices`` of one accelerator) costs, rented and owned."""

    accelerator: str
    devices: int
    site: Site
    rental: ViewCost
    ownership: ViewCost
    power_W: float  # all devices, at the modelled rate
    charged_power_W: float  # what an owner pays for per hour served (idle hours included)
    output_tokens_per_s: float
    total_tokens_per_s: float
    idle_power_per_device_W: float

    def view(self, name: str) -> ViewCost:
        return self.rental if name == "rental" else self.ownership


def system_cost(accelerator_id: str, devices: int, power_W: float, output_tokens_per_s: float,
                total_tokens_per_s: float, idle_power_per_device_W: float, pricing: Pricing, *,
                no_tokens: str = "the system emits no tokens") -> SystemCost:
    """One system's cost in both views; ``no_tokens`` is the reason given when its tokens per
    second are not above zero."""
    rent, purchase = pricing.rental(accelerator_id), pricing.purchase(accelerator_id)
    costs = cost_arrays(devices, power_W, output_tokens_per_s, total_tokens_per_s, idle_power_per_device_W,
                        _value(rent), _value(purchase), pricing.site)
    emits = math.isfinite(output_tokens_per_s) and output_tokens_per_s > 0

    def record(view: str, price: Price | None, missing: str) -> ViewCost:
        arrays = costs.view(view)
        reason = missing if price is None else ("" if emits else no_tokens)
        return ViewCost(view, price, *(_known(getattr(arrays, name)) for name in (
            "usd_per_hour", "capital_usd_per_hour", "energy_usd_per_hour", "hosting_usd_per_hour",
            "usd_per_mtok_output", "usd_per_mtok_total", "energy_share", "tco_usd_per_year")), unknown=reason)

    return SystemCost(
        accelerator=accelerator_id,
        devices=int(devices),
        site=pricing.site,
        rental=record("rental", rent, f"no rental price is known for {accelerator_id}: give one per device-hour"),
        ownership=record("ownership", purchase, f"no purchase price is known for {accelerator_id}: give one per "
                                                 "device"),
        power_W=float(power_W),
        charged_power_W=float(costs.charged_power_W),
        output_tokens_per_s=float(output_tokens_per_s),
        total_tokens_per_s=float(total_tokens_per_s),
        idle_power_per_device_W=float(idle_power_per_device_W),
    )


def result_cost(result: Result, pricing: Pricing, catalog: Catalog) -> SystemCost:
    """The static scenario's cost (at the tokens per second and power the engine computed)."""
    accelerator = catalog.accelerator(result.scenario.accelerator)
    return system_cost(accelerator.id, result.devices, result.power_W, result.throughput_output_tok_s,
                       result.throughput_total_tok_s, float(accelerator.idle_W), pricing)


def served_cost(accelerator_id: str, devices: int, metrics: object, pricing: Pricing, catalog: Catalog) -> SystemCost:
    """A served run's cost at the rate it achieved: its tokens per second and its mean power
    (idle gaps between iterations included), from ``serving.Metrics``."""
    return system_cost(accelerator_id, devices, metrics.average_power_w, metrics.output_tokens_per_s,
                       metrics.total_tokens_per_s, float(catalog.accelerator(accelerator_id).idle_W), pricing,
                       no_tokens="the run finished no requests")


def capacity_cost(accelerator_id: str, devices: int, capacity: CapacityResult, pricing: Pricing,
                  catalog: Catalog) -> SystemCost:
    """The cost at the largest rate that meets the SLO (the run at that rate); unknown per
    token where no rate meets it."""
    idle = float(catalog.accelerator(accelerator_id).idle_W)
    if capacity.rate_per_s <= 0.0:
        return system_cost(accelerator_id, devices, math.nan, 0.0, 0.0, idle, pricing,
                           no_tokens="no request rate meets the SLO")
    metrics = capacity.metrics
    return system_cost(accelerator_id, devices, metrics.average_power_w, metrics.output_tokens_per_s,
                       metrics.total_tokens_per_s, idle, pricing, no_tokens="no request rate meets the SLO")


def _value(price: Price | None) -> float:
    return math.nan if price is None else float(price.value)


def _known(value: np.ndarray) -> float | None:
    number = float(value)
    return number if math.isfinite(number) else None


# ---- the shown accelerators and the batch sweep ------------------------------------------------


@dataclass(frozen=True)
class FrameCosts:
    """A frame's costs: ``current`` over the shown accelerators (the frame's order), ``sweep``
    over [accelerator, batch] (the frame's sweep batches)."""

    accelerators: tuple[str, ...]
    current: Costs
    sweep: Costs
    rentals: tuple[Price | None, ...]  # per device-hour, one per accelerator
    purchases: tuple[Price | None, ...]  # per device
    site: Site

    def index(self, accelerator_id: str) -> int:
        return self.accelerators.index(accelerator_id)

    def price(self, view: str, accelerator_id: str) -> Price | None:
        prices = self.rentals if view == "rental" else self.purchases
        return prices[self.index(accelerator_id)]


def frame_costs(frame: Frame, pricing: Pricing) -> FrameCosts:
    """Both views for the frame's scenario on every shown accelerator, and for every point of
    its batch sweep, in two vectorised evaluations."""
    ids = frame.accelerators
    catalog = frame.engine.catalog if frame.engine is not None else None
    rentals = tuple(pricing.rental(a) for a in ids)
    purchases = tuple(pricing.purchase(a) for a in ids)
    rent = np.array([_value(p) for p in rentals])
    purchase = np.array([_value(p) for p in purchases])
    idle = np.array([float(catalog.accelerator(a).idle_W) if catalog is not None else math.nan for a in ids])

    def priced(outputs: Outputs, column: tuple[slice, ...]) -> Costs:
        return cost_arrays(outputs.devices, outputs.power_W, outputs.throughput_output_tok_s,
                           outputs.throughput_total_tok_s, idle[column], rent[column], purchase[column], pricing.site)

    current = priced(frame.outputs, (slice(None),))
    sweep = priced(frame.sweep_outputs, (slice(None), None))
    return FrameCosts(ids, current, sweep, rentals, purchases, pricing.site)


# ---- the cheapest accelerator that meets an SLO -------------------------------------------------


@dataclass(frozen=True)
class SloCapacity:
    """One accelerator's deployment at its capacity under an SLO: ``capacity_rps`` 0 when no
    rate meets it; the rest is the run at that rate."""

    accelerator: str
    devices: int
    capacity_rps: float
    output_tokens_per_s: float
    total_tokens_per_s: float
    power_W: float

    @staticmethod
    def of(accelerator_id: str, devices: int, capacity: CapacityResult) -> SloCapacity:
        metrics = capacity.metrics
        if capacity.rate_per_s <= 0.0:
            return SloCapacity(accelerator_id, devices, 0.0, 0.0, 0.0, math.nan)
        return SloCapacity(accelerator_id, devices, capacity.rate_per_s, metrics.output_tokens_per_s,
                           metrics.total_tokens_per_s, metrics.average_power_w)


@dataclass(frozen=True)
class CheapestAtSlo:
    """Accelerators meeting an SLO, ranked by what a million output tokens cost at their
    capacity in one view; the first is the cheapest."""

    view: str
    ranked: tuple[SystemCost, ...]  # priced and meeting the SLO, cheapest first
    unpriced: tuple[str, ...]  # meet the SLO, but no price is known in this view
    failing: tuple[str, ...]  # no rate meets the SLO

    @property
    def best(self) -> SystemCost | None:
        return self.ranked[0] if self.ranked else None

    @property
    def accelerator(self) -> str | None:
        return self.best.accelerator if self.best is not None else None

    @property
    def usd_per_mtok_output(self) -> float | None:
        return self.best.view(self.view).usd_per_mtok_output if self.best is not None else None


def cheapest_at_slo(capacities: Sequence[SloCapacity], pricing: Pricing, catalog: Catalog,
                    view: str = "rental") -> CheapestAtSlo:
    """The accelerators whose deployments meet the SLO (capacity above 0), each priced at its
    capacity, cheapest per million output tokens first (ties: the order given). Those without
    a price in ``view`` are listed apart, never ranked as free."""
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(VIEWS)}, got {view!r}")
    priced: list[SystemCost] = []
    unpriced: list[str] = []
    failing: list[str] = []
    for option in capacities:
        if option.capacity_rps <= 0.0:
            failing.append(option.accelerator)
            continue
        cost = system_cost(option.accelerator, option.devices, option.power_W, option.output_tokens_per_s,
                           option.total_tokens_per_s, float(catalog.accelerator(option.accelerator).idle_W), pricing)
        if cost.view(view).usd_per_mtok_output is None:
            unpriced.append(option.accelerator)
        else:
            priced.append(cost)
    priced.sort(key=lambda cost: cost.view(view).usd_per_mtok_output)  # stable: ties keep the order given
    return CheapestAtSlo(view, tuple(priced), tuple(unpriced), tuple(failing))


# ---- the frontier: the cheapest at each latency ---------------------------------------------------


def cheapest_frontier(latency_s: np.ndarray, usd_per_mtok: np.ndarray) -> np.ndarray:
    """Indices (into the flattened arrays) of the points no other point beats on both counts:
    each is cheaper than every point of lower or equal latency. In order of latency, so the
    cost falls along them; a latency budget's cheapest option is the last one within it.
    Points with an unknown (NaN) or non-positive value on either count are left out."""
    latency = np.asarray(latency_s, dtype=float).ravel()
    cost = np.asarray(usd_per_mtok, dtype=float).ravel()
    candidates = np.flatnonzero(np.isfinite(latency) & np.isfinite(cost) & (latency > 0) & (cost > 0))
    order = candidates[np.lexsort((cost[candidates], latency[candidates]))]  # by latency, then cost
    kept = []
    cheapest = math.inf
    for index in order:
        if cost[index] < cheapest:
            kept.append(index)
            cheapest = cost[index]
    return np.array(kept, dtype=np.int64)
