"""The cost settings kept with a scenario: presets (and so the session) round-trip them and write
only what is set; bad values are refused naming the field; the user's own prices.toml reaches
the catalog, and a bad one is reported, not fatal."""

from __future__ import annotations

import json

import pytest

from accelscope.engine.catalog import Catalog
from accelscope.engine.catalog.presets import (
    Preset,
    PresetError,
    load_preset,
    preset_from_json,
    preset_to_json,
    save_preset,
)
from accelscope.engine.core.cost import CostSettings
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.workspace import Workspace

SETTINGS = (CostSettings(electricity_usd_per_kwh=0.08, pue=1.25, amortisation_years=5.0, utilisation=0.6,
                         hosting_usd_per_device_year=1500.0)
            .with_price("h100-sxm", purchase_usd=27_500.0)
            .with_price("m4-max", rental_usd_per_hour=0.9, purchase_usd=3_999.0))


def workspace(cost: CostSettings | None = None) -> Workspace:
    return Workspace(Scenario("llama-3.1-8b", "h100-sxm"), ("h100-sxm", "m4-max"), cost=cost or CostSettings())


def test_cost_settings_round_trip_through_a_preset(catalog, tmp_path):
    preset = Preset("Costed", "", workspace(SETTINGS))
    document = preset_to_json(preset)
    assert document["cost"] == {
        "electricity_usd_per_kwh": 0.08, "pue": 1.25, "amortisation_years": 5.0, "utilisation": 0.6,
        "hosting_usd_per_device_year": 1500.0,
        "prices": {"h100-sxm": {"purchase_usd": 27_500.0},
                   "m4-max": {"rental_usd_per_hour": 0.9, "purchase_usd": 3_999.0}},
    }
    save_preset(preset, tmp_path / "p.json")
    assert load_preset(tmp_path / "p.json", catalog).workspace == preset.workspace


def test_only_what_is_set_is_written(catalog):
    document = preset_to_json(Preset("Plain", "", workspace()))
    assert "cost" not in document  # the price book's values: nothing to keep
    assert preset_from_json(document, "p.json", catalog).workspace.cost == CostSettings()
    document = preset_to_json(Preset("One", "", workspace(CostSettings(pue=1.1))))
    assert document["cost"] == {"pue": 1.1}
    # Whole numbers written by another tool read as the same settings.
    document["cost"] = {"pue": 2, "prices": {"h100-sxm": {"rental_usd_per_hour": 3}}}
    read = preset_from_json(document, "p.json", catalog).workspace.cost
    assert read == CostSettings(pue=2.0).with_price("h100-sxm", rental_usd_per_hour=3.0)


@pytest.mark.parametrize(
    ("cost", "message"),
    [
        (None, "p.json: cost: must not be null"),
        ({"pue": 0.5}, "p.json: cost.pue: must be at least 1"),
        ({"utilisation": 0}, "p.json: cost.utilisation: must be above 0"),
        ({"utilisation": 2}, "p.json: cost.utilisation: must be above 0 and at most 1"),
        ({"pue": "low"}, "p.json: cost.pue: must be a number"),
        ({"pue": None}, "p.json: cost.pue: must not be null"),
        ({"pue": True}, "p.json: cost.pue: must be a number"),
        ({"interest": 0.05}, "p.json: cost.interest: unknown key"),
        ({"prices": {"h900": {"purchase_usd": 1}}}, "p.json: cost.prices.h900: unknown accelerator id 'h900'"),
        ({"prices": {"h100-sxm": {"rental_usd_per_hour": 0}}}, "p.json: cost.prices.h100-sxm.rental_usd_per_hour: "
                                                               "must be above 0"),
        ({"prices": {"h100-sxm": {"purchase_usd": -1}}}, "p.json: cost.prices.h100-sxm.purchase_usd: must be above 0"),
        ({"prices": {"h100-sxm": {"price": 3}}}, "p.json: cost.prices.h100-sxm.price: unknown key"),
        ({"prices": {"h100-sxm": {}}}, "p.json: cost.prices.h100-sxm.rental_usd_per_hour: give a"),
        ({"prices": [1]}, "p.json: cost.prices"),
    ],
)
def test_bad_cost_settings_in_a_preset_name_the_field(catalog, cost, message):
    document = preset_to_json(Preset("P", "", workspace()))
    document["cost"] = cost
    with pytest.raises(PresetError) as raised:
        preset_from_json(json.loads(json.dumps(document)), "p.json", catalog)
    assert message in str(raised.value)


def test_the_session_keeps_the_cost_settings(engine, tmp_path, monkeypatch):
    from accelscope.gui.state.session import load_session, save_session

    monkeypatch.setenv("ACCELSCOPE_DATA_DIR", str(tmp_path))
    assert save_session(Preset("Last session", "", workspace(SETTINGS))) is None
    restored, problem = load_session(engine.catalog)
    assert problem is None and restored.workspace.cost == SETTINGS


def test_the_users_prices_reach_the_catalog_and_a_bad_file_is_reported(tmp_path):
    (tmp_path / "prices.toml").write_text(
        '[accelerators.m4-max]\npurchase = { value = 3499, source = "receipt", date = "2026-09", grade = "vendor", '
        'includes = "the whole machine" }\n')
    catalog = Catalog.load(user_dir=tmp_path)
    assert catalog.prices.of("m4-max").purchase.value == 3499 and not catalog.problems
    (tmp_path / "prices.toml").write_text('[accelerators.m4-max]\npurchase = { value = 3499, date = "2026-09", '
                                          'grade = "vendor", includes = "the whole machine" }\n')
    catalog = Catalog.load(user_dir=tmp_path)
    assert catalog.prices.of("m4-max").purchase is None  # the bundled book alone
    assert catalog.prices.of("h100-sxm").rental.value == 2.49
    assert len(catalog.problems) == 1 and "accelerators.m4-max.purchase.source: missing" in catalog.problems[0]
