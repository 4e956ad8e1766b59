"""The price book: ``resources/prices.toml`` (and the user's own ``prices.toml``) read under the
catalog's hostile-input rules.

Every price needs its value, source, date and grade; a rental its kind and provider, a purchase
what it includes. A price with no source is refused, naming the file and the field, like any
catalog value. The user's file (in the user data folder) may replace the site's values and any
device's rental or purchase, and price devices the bundled book leaves out.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any

from ..core.prices import MAX_PRICE_USD, RENTAL_KINDS, SITE_LIMITS, DevicePrices, Price, PriceBook, Site
from ..core.sourced import GRADES
from .folders import user_data_dir
from .reading import PathLike, TableReader, as_path, describe, read_toml_file

PRICES_FILE = "prices.toml"
_PRICE_KEYS = ("value", "source", "date", "grade", "note", "alternatives")
_RENTAL_KEYS = (*_PRICE_KEYS, "kind", "provider")
_PURCHASE_KEYS = (*_PRICE_KEYS, "includes")


def bundled_prices_path() -> PathLike:
    return files("accelscope.resources") / PRICES_FILE


@functools.cache
def bundled_price_book() -> PriceBook:
    """The bundled book alone (read once: it does not change while the app runs)."""
    return load_price_book(include_user=False)


def load_price_book(path: PathLike | None = None, *, include_user: bool = True, user_dir: Path | None = None,
                    accelerator_ids: Mapping[str, object] | None = None) -> PriceBook:
    """The bundled book (or the one at ``path``), with the user's own file (in ``user_dir``, by
    default the user data folder) laid over the bundled one when there is one. Devices named
    must be among ``accelerator_ids`` when it is given."""
    site, devices = _read(path if path is not None else bundled_prices_path(), accelerator_ids, require_site=True)
    if include_user and path is None:
        user = (user_dir or user_data_dir()) / PRICES_FILE
        if user.exists():
            user_site, user_devices = _read(user, accelerator_ids, require_site=False)
            site = {**site, **user_site}
            for device, prices in user_devices.items():
                known = devices.get(device, {})
                devices[device] = {**known, **prices}
    book_site = Site(**site)
    return PriceBook(book_site, {device: DevicePrices(**prices) for device, prices in devices.items()})


def _read(path: PathLike, accelerator_ids: Mapping[str, object] | None, *, require_site: bool):
    path = as_path(path)
    root = TableReader(path, read_toml_file(path))
    root.reject_unknown(("site", "accelerators"))
    site: dict[str, Price] = {}
    table = root.sub("site") if require_site else root.sub("site", None)
    if table is not None:
        table.reject_unknown(tuple(SITE_LIMITS))
        for name, (low, high, inclusive) in SITE_LIMITS.items():
            if table.has(name):
                site[name] = _price(table, name, _PRICE_KEYS, low, high, inclusive)
            elif require_site:
                raise table.error(name, "required field is missing")
    devices: dict[str, dict[str, Price]] = {}
    accelerators = root.sub("accelerators", None)
    if accelerators is not None:
        for device in accelerators.table:
            if accelerator_ids is not None and device not in accelerator_ids:
                raise accelerators.error(device, "not an accelerator of the catalog")
            entry = accelerators.sub(device)
            entry.reject_unknown(("rental", "purchase"))
            prices: dict[str, Price] = {}
            if entry.has("rental"):
                prices["rental"] = _price(entry, "rental", _RENTAL_KEYS, 0.0, MAX_PRICE_USD, False)
            if entry.has("purchase"):
                prices["purchase"] = _price(entry, "purchase", _PURCHASE_KEYS, 0.0, MAX_PRICE_USD, False)
            if not prices:
                raise entry.error("rental", "an accelerator's entry needs a rental or a purchase price")
            devices[device] = prices
    return site, devices


def _price(parent: TableReader, key: str, keys: tuple[str, ...], low: float, high: float, inclusive: bool,
           *, raw: Any = None) -> Price:
    if raw is None:
        if not isinstance(parent.table[key], Mapping):
            raise parent.error(key, f'must be a table {{ value = ..., source = "...", date = "...", grade = "..." }}, '
                                    f"got {describe(parent.table[key])}")
        entry = parent.sub(key)
    else:
        if not isinstance(raw, Mapping):
            raise parent.error(key, f"must be a table, got {describe(raw)}")
        entry = TableReader(parent.path, raw, f"{parent.field(key)}.")
    entry.reject_unknown(keys)
    value = entry.table.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise entry.error("value", f"must be a number, got {describe(value)}")
    too_low = value < low if inclusive else value <= low
    if too_low or value > high or not math.isfinite(value):
        bound = f"at least {low:g}" if inclusive else f"above {low:g}"
        raise entry.error("value", f"must be {bound} and at most {high:g}, got {describe(value)}")
    source = _required_text(entry, "source", "every price needs its source (provider page, report, datasheet)")
    date = _required_text(entry, "date",
                          'every price needs its date (e.g. "2026-06", or "n.d." when the source has none)')
    grade = _required_text(entry, "grade", f"one of {', '.join(GRADES)}")
    if grade not in GRADES:
        raise entry.error("grade", f"must be one of {', '.join(GRADES)}, got {grade[:40]!r}")
    kind = provider = includes = ""
    if "kind" in keys:
        kind = _required_text(entry, "kind", f"one of {', '.join(RENTAL_KINDS)}")
        if kind not in RENTAL_KINDS:
            raise entry.error("kind", f"must be one of {', '.join(RENTAL_KINDS)}, got {kind[:40]!r}")
        provider = _required_text(entry, "provider", "who rents it out")
    if "includes" in keys:
        includes = _required_text(entry, "includes", "what the price buys (the card, the machine, a rack's share)")
    alternatives = tuple(
        _price(entry, f"alternatives[{index}]", keys, low, high, inclusive, raw=item)
        for index, item in enumerate(entry.array("alternatives", []))
    )
    return Price(float(value), source, date, grade, entry.string("note", ""), kind, provider, includes, alternatives)


def _required_text(entry: TableReader, key: str, what: str) -> str:
    if not entry.has(key):
        raise entry.error(key, f"missing: {what}")
    text = entry.string(key)
    if not text.strip():
        raise entry.error(key, f"must not be empty: {what}")
    if len(text) > 600 or any(ord(char) < 32 for char in text):
        raise entry.error(key, "must be one line of at most 600 characters")
    return text


def user_prices_path() -> Path:
    return user_data_dir() / PRICES_FILE
