"""The price book: every price sourced, dated and graded; a price without a source is refused;
a device without a price has none (never 0)."""

from __future__ import annotations

import pytest

from accelscope.engine.catalog import Catalog
from accelscope.engine.catalog.prices import load_price_book
from accelscope.engine.core.errors import CatalogError
from accelscope.engine.core.sourced import GRADES


@pytest.fixture(scope="module")
def catalog():
    return Catalog.load(include_user=False)


def test_bundled_prices_are_sourced_dated_graded_and_for_catalog_devices(catalog):
    book = load_price_book(include_user=False, accelerator_ids=catalog.accelerators)
    prices = [p for d in book.devices.values() for p in (d.rental, d.purchase) if p is not None]
    prices += [book.site.electricity_usd_per_kwh, book.site.pue, book.site.amortisation_years, book.site.utilisation,
               book.site.hosting_usd_per_device_year]
    everything = prices + [a for p in prices for a in p.alternatives]
    assert len(everything) > 20
    for price in everything:
        assert price.source and price.date and price.grade in GRADES
    for device in book.devices.values():
        if device.rental is not None:
            assert device.rental.kind and device.rental.provider
        if device.purchase is not None:
            assert device.purchase.includes
    assert book.devices["h100-sxm"].rental.value == 2.49
    assert book.of("m4-max").purchase is None and book.of("m4-max").rental is None  # none found: none given


def write(tmp_path, text):
    path = tmp_path / "prices.toml"
    path.write_text(text)
    return path


SITE = """
[site]
electricity_usd_per_kwh = { value = 0.1, source = "s", date = "2024", grade = "third-party" }
pue = { value = 1.5, source = "s", date = "2024", grade = "third-party" }
amortisation_years = { value = 4, source = "s", date = "2024", grade = "estimate" }
utilisation = { value = 1.0, source = "s", date = "2024", grade = "estimate" }
hosting_usd_per_device_year = { value = 0, source = "s", date = "2024", grade = "estimate" }
"""


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('rental = { value = 2.0, date = "2026", grade = "third-party", kind = "on-demand", provider = "p" }',
         "accelerators.h100-sxm.rental.source: missing: every price needs its source"),
        ('rental = { value = 2.0, source = "s", grade = "third-party", kind = "on-demand", provider = "p" }',
         "accelerators.h100-sxm.rental.date: missing: every price needs its date"),
        ('rental = { value = 0, source = "s", date = "d", grade = "third-party", kind = "on-demand", provider = "p" }',
         "accelerators.h100-sxm.rental.value: must be above 0"),
        ('rental = { value = 2, source = "s", date = "d", grade = "guess", kind = "on-demand", provider = "p" }',
         "accelerators.h100-sxm.rental.grade: must be one of vendor"),
        ('rental = { value = 2, source = "s", date = "d", grade = "estimate", kind = "daily", provider = "p" }',
         "accelerators.h100-sxm.rental.kind: must be one of on-demand"),
        ('purchase = { value = 2, source = "s", date = "d", grade = "estimate" }',
         "accelerators.h100-sxm.purchase.includes: missing"),
        ('price = 3', "accelerators.h100-sxm.price: unknown key"),
    ],
)
def test_bad_prices_are_refused_naming_the_field(tmp_path, catalog, entry, message):
    path = write(tmp_path, SITE + "\n[accelerators.h100-sxm]\n" + entry + "\n")
    with pytest.raises(CatalogError) as raised:
        load_price_book(path, accelerator_ids=catalog.accelerators)
    assert message in str(raised.value)


def test_an_unknown_device_and_a_bad_site_value_are_refused(tmp_path, catalog):
    path = write(tmp_path, SITE + '\n[accelerators.h900]\npurchase = { value = 1, source = "s", date = "d", '
                                  'grade = "estimate", includes = "x" }\n')
    with pytest.raises(CatalogError, match="accelerators.h900: not an accelerator of the catalog"):
        load_price_book(path, accelerator_ids=catalog.accelerators)
    path = write(tmp_path, SITE.replace("value = 1.5", "value = 0.9"))
    with pytest.raises(CatalogError, match="site.pue.value: must be at least 1"):
        load_price_book(path)


def test_the_users_file_replaces_and_adds_prices(tmp_path, monkeypatch, catalog):
    monkeypatch.setenv("ACCELSCOPE_DATA_DIR", str(tmp_path))
    (tmp_path / "prices.toml").write_text(
        '[site]\npue = { value = 1.2, source = "our facility", date = "2026-10", grade = "vendor" }\n'
        '[accelerators.m4-max]\npurchase = { value = 3499, source = "receipt", date = "2026-09", grade = "vendor", '
        'includes = "the whole machine" }\n'
    )
    book = load_price_book(accelerator_ids=catalog.accelerators)
    assert book.site.pue.value == 1.2 and book.site.electricity_usd_per_kwh.value == 0.1146
    assert book.of("m4-max").purchase.value == 3499 and book.of("h100-sxm").rental.value == 2.49
