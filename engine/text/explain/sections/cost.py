"""Cost: what the system costs rented and owned, each number worked from its price, with the
price's source and date (``studies.cost`` computed them; this only says how)."""

from __future__ import annotations

from ....core.prices import Price
from ....core.units import format_power, format_price, format_usd, significant
from ....studies.cost import HOURS_PER_YEAR, SECONDS_PER_HOUR, SystemCost, ViewCost
from ..context import ExplainContext
from ..words import count, sentence


def sentences(ctx: ExplainContext) -> list[str]:
    cost = ctx.cost
    if cost is None:
        return []
    name = ctx.accelerator.name
    return [*_rental(cost, name), *_ownership(cost, name)]


def _cited(price: Price) -> str:
    """Where a price is from: '(provider, date; on-demand)', or '(your own value)'."""
    detail = price.kind or price.includes
    return f"({price.citation}{'; ' + detail if detail else ''})"


def _per_token(view: ViewCost, cost: SystemCost, per_hour: str) -> str:
    """'{per hour} ÷ 3,600 s ÷ {tokens/s} = {per million}', or why it is unknown."""
    if view.usd_per_mtok_output is None:
        return f"per token it is unknown: {view.unknown}"
    return (f"{per_hour} ÷ {SECONDS_PER_HOUR:,.0f} s ÷ {significant(cost.output_tokens_per_s)} output tokens/s "
            f"= {format_usd(view.usd_per_mtok_output)} per million output tokens "
            f"({format_usd(view.usd_per_mtok_total)} per million input+output tokens)")


def _rental(cost: SystemCost, name: str) -> list[str]:
    rent = cost.rental
    if rent.price is None:
        return [sentence(f"rented: no rental price is known for {name}; give one per device-hour (the Cost group, "
                         "or --price-per-hour) to see what renting it costs")]
    devices = (f" × {count(cost.devices, 'device')} = {format_usd(rent.usd_per_hour)} per hour"
               if cost.devices > 1 else "")
    utilisation = float(cost.site.utilisation.value)
    return [
        sentence(f"rented: {format_price(rent.price.value)} per {name} device-hour {_cited(rent.price)}{devices}; "
                 + _per_token(rent, cost, format_usd(rent.usd_per_hour))),
        sentence(f"rented for the hours it serves, the share of the year in use does not change that; "
                 f"at {utilisation:.0%} of the year in use, a year's rent is {format_usd(rent.tco_usd_per_year)}"),
    ]


def _ownership(cost: SystemCost, name: str) -> list[str]:
    own, site = cost.ownership, cost.site
    utilisation = float(site.utilisation.value)
    idle = ""
    if utilisation < 1.0:
        idle_W = cost.idle_power_per_device_W * cost.devices
        idle = (f" (the run's {format_power(cost.power_W)}, and {format_power(idle_W)} idle over the "
                f"{1.0 - utilisation:.0%} of the year it waits, charged to the hours it serves)")
    energy = sentence(
        f"energy: {format_power(cost.charged_power_W)}{idle} × PUE {site.pue.value:g} "
        f"{_cited(site.pue)} × {format_price(site.electricity_usd_per_kwh.value)} per kWh "
        f"{_cited(site.electricity_usd_per_kwh)} = {format_usd(own.energy_usd_per_hour)} per hour"
    )
    if own.price is None:
        return [
            sentence(f"owned: no purchase price is known for {name}; give one per device (the Cost group, or "
                     "--purchase-price) to see what owning it costs"),
            energy,
        ]
    years = float(site.amortisation_years.value)
    hosting = float(site.hosting_usd_per_device_year.value)
    lines = [
        sentence(f"owned: {format_price(own.price.value)} per device {_cited(own.price)} × "
                 f"{count(cost.devices, 'device')}, written off over {years:g} years "
                 f"{_cited(site.amortisation_years)} of {HOURS_PER_YEAR:,.0f} h at {utilisation:.0%} in use "
                 f"{_cited(site.utilisation)} = {format_usd(own.capital_usd_per_hour)} per hour served"),
        energy,
    ]
    if hosting > 0.0:
        lines.append(sentence(f"hosting: {format_price(hosting)} per device-year "
                              f"{_cited(site.hosting_usd_per_device_year)} = {format_usd(own.hosting_usd_per_hour)} "
                              "per hour served"))
    else:
        lines.append(sentence("hosting (rack space, network, staff) is not counted: give a cost per device-year to "
                              "include it"))
    share = f"; energy is {own.energy_share:.0%} of it" if own.energy_share is not None else ""
    lines.append(sentence(
        f"together {format_usd(own.usd_per_hour)} per hour: " + _per_token(own, cost, format_usd(own.usd_per_hour))
        + share
    ))
    lines.append(sentence(
        "a year of ownership (the purchase written off, energy × PUE, hosting) costs "
        f"{format_usd(own.tco_usd_per_year)}"
    ))
    return lines
