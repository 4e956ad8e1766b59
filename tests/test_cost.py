"""Cost: hand-worked rental and ownership cases, unknown prices that stay unknown (never 0),
the user's settings over the price book, the frame's and the sweep's costs equal to one
system's, served runs, and the cheapest accelerator that meets an SLO."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from accelscope.engine.catalog import Catalog
from accelscope.engine.core.cost import CostSettings, Pricing
from accelscope.engine.core.errors import ScenarioError
from accelscope.engine.core.prices import OWN_GRADE, SITE_FIELDS, Price, PriceBook, Site
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.serving import ServingSpec
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.frame import compute_frame
from accelscope.engine.studies.cost import (
    SloCapacity,
    capacity_cost,
    cheapest_at_slo,
    cheapest_frontier,
    cost_arrays,
    frame_costs,
    result_cost,
    served_cost,
    system_cost,
)
from accelscope.engine.studies.serving.capacity import CapacityResult


def sourced(value: float) -> Price:
    return Price(value, "a test source", "2026-01", "estimate")


def site(electricity=0.10, pue=1.5, years=4.0, utilisation=0.5, hosting=1000.0) -> Site:
    return Site(sourced(electricity), sourced(pue), sourced(years), sourced(utilisation), sourced(hosting))


@pytest.fixture(scope="module")
def engine():
    return Engine()


# ---- hand-worked ------------------------------------------------------------------------------


def test_rental_by_hand():
    # 2 devices at $2.00 per device-hour, 1,000 output and 5,000 input+output tokens/s:
    # $4.00 per hour; $4 / 3.6 M output tokens = $1.111 per million; $4 / 18 M = $0.2222;
    # rented for the hours it serves, half the year: 4 x 8,760 x 0.5 = $17,520.
    costs = cost_arrays(2, 1000.0, 1000.0, 5000.0, 100.0, 2.0, math.nan, site())
    rental = costs.rental
    assert float(rental.usd_per_hour) == pytest.approx(4.0)
    assert float(rental.usd_per_mtok_output) == pytest.approx(4.0 / 3.6)
    assert float(rental.usd_per_mtok_total) == pytest.approx(4.0 / 18.0)
    assert float(rental.tco_usd_per_year) == pytest.approx(17_520.0)
    assert math.isnan(float(rental.energy_share))  # the rent includes the provider's energy


def test_ownership_by_hand():
    # 2 devices at $10,000, written off over 4 years, in use half the year (4,380 h a year):
    #   capital  20,000 / (4 x 4,380)                    = $1.141553 per hour served
    #   energy   (1,000 W + 2 x 100 W idle x 0.5/0.5) = 1.2 kW x PUE 1.5 x $0.10 = $0.18
    #   hosting  2 x $1,000 / 4,380                      = $0.456621
    #   together $1.778174 per hour; / 3.6 M output tokens = $0.493937 per million
    #   a year: 20,000/4 + 2,000 + 0.18 x 4,380           = $7,788.40
    costs = cost_arrays(2, 1000.0, 1000.0, 4000.0, 100.0, math.nan, 10_000.0, site())
    owned = costs.ownership
    assert float(owned.capital_usd_per_hour) == pytest.approx(20_000 / 17_520)
    assert float(owned.energy_usd_per_hour) == pytest.approx(0.18)
    assert float(owned.hosting_usd_per_hour) == pytest.approx(2_000 / 4_380)
    assert float(owned.usd_per_hour) == pytest.approx(1.778174, rel=1e-6)
    assert float(owned.usd_per_mtok_output) == pytest.approx(1.778174 / 3.6, rel=1e-6)
    assert float(owned.usd_per_mtok_total) == pytest.approx(1.778174 / 14.4, rel=1e-6)
    assert float(owned.energy_share) == pytest.approx(0.18 / 1.778174, rel=1e-6)
    assert float(owned.tco_usd_per_year) == pytest.approx(7_788.40)
    assert float(costs.charged_power_W) == pytest.approx(1200.0)


def test_a_system_in_use_all_year_pays_no_idle_hours():
    costs = cost_arrays(1, 500.0, 100.0, 200.0, 80.0, math.nan, 1000.0, site(utilisation=1.0, hosting=0.0))
    assert float(costs.charged_power_W) == 500.0
    assert float(costs.ownership.energy_usd_per_hour) == pytest.approx(0.5 * 1.5 * 0.10)
    assert float(costs.ownership.capital_usd_per_hour) == pytest.approx(1000 / (4 * 8760))


# ---- unknown, never zero ------------------------------------------------------------------------


def test_missing_prices_are_unknown_not_zero():
    book = PriceBook(site(), {})
    cost = system_cost("h100-sxm", 1, 700.0, 1000.0, 2000.0, 100.0, Pricing(book))
    for view in (cost.rental, cost.ownership):
        assert view.price is None and not view.known
        assert view.usd_per_mtok_output is None and view.usd_per_mtok_total is None and view.tco_usd_per_year is None
        assert "no " in view.unknown and "h100-sxm" in view.unknown
    assert cost.rental.usd_per_hour is None and cost.ownership.usd_per_hour is None
    # What does not need the missing price is still known: the energy an owner would pay for.
    assert cost.ownership.energy_usd_per_hour == pytest.approx(0.7 * 1.5 * 0.10 + 0.1 * 1.5 * 0.10)
    arrays = cost_arrays(np.array([1, 1]), np.array([700.0, 700.0]), np.array([1e3, 1e3]), np.array([2e3, 2e3]),
                         100.0, np.array([2.0, np.nan]), np.array([np.nan, 5e3]), site())
    assert np.isfinite(arrays.rental.usd_per_mtok_output[0]) and np.isnan(arrays.rental.usd_per_mtok_output[1])
    assert np.isnan(arrays.ownership.usd_per_mtok_output[0]) and np.isfinite(arrays.ownership.usd_per_mtok_output[1])


def test_no_tokens_leaves_the_cost_per_token_unknown():
    book = PriceBook(site(), {})
    pricing = Pricing(book, CostSettings().with_price("h100-sxm", rental_usd_per_hour=2.0))
    cost = system_cost("h100-sxm", 1, 700.0, 0.0, 0.0, 100.0, pricing)
    assert cost.rental.usd_per_hour == 2.0 and cost.rental.usd_per_mtok_output is None
    assert cost.rental.unknown == "the system emits no tokens"


# ---- the user's settings over the book ------------------------------------------------------------


def test_the_users_settings_replace_the_books_values():
    catalog = Catalog.load(include_user=False)
    settings = (CostSettings(pue=1.2, utilisation=0.7)
                .with_price("h100-sxm", purchase_usd=25_000.0)
                .with_price("l40s", rental_usd_per_hour=1.0))
    pricing = Pricing(catalog.prices, settings)
    assert pricing.rental("h100-sxm") == catalog.prices.of("h100-sxm").rental  # not set: the book's
    assert pricing.purchase("h100-sxm").value == 25_000.0 and pricing.purchase("h100-sxm").grade == OWN_GRADE
    assert pricing.rental("l40s").value == 1.0 and pricing.purchase("l40s") == catalog.prices.of("l40s").purchase
    assert pricing.site.pue.value == 1.2 and pricing.site.pue.own
    assert pricing.site.electricity_usd_per_kwh == catalog.prices.site.electricity_usd_per_kwh
    assert pricing.rental("m4-max") is None and pricing.purchase("m4-max") is None
    cleared = settings.with_price("l40s", rental_usd_per_hour=None)
    assert [a for a, _ in cleared.prices] == ["h100-sxm"]  # an accelerator with nothing set is dropped
    assert cleared.with_price("h100-sxm", purchase_usd=None) == CostSettings(pue=1.2, utilisation=0.7)


def test_settings_list_the_site_values_of_the_book():
    assert tuple(name for name in CostSettings.__dataclass_fields__ if name != "prices") == SITE_FIELDS


@pytest.mark.parametrize(("settings", "message"), [
    (CostSettings(pue=0.9), "pue must be at least 1"),
    (CostSettings(utilisation=0.0), "utilisation must be above 0"),
    (CostSettings(utilisation=1.5), "utilisation must be above 0 and at most 1"),
    (CostSettings(amortisation_years=math.inf), "amortisation_years must be above 0"),
    (CostSettings(electricity_usd_per_kwh=math.nan), "electricity_usd_per_kwh must be above 0"),
    (CostSettings(hosting_usd_per_device_year=-1.0), "hosting_usd_per_device_year must be at least 0"),
    (CostSettings().with_price("h100-sxm", rental_usd_per_hour=0.0), "prices.h100-sxm.rental_usd_per_hour must be "
                                                                     "above 0"),
    (CostSettings().with_price("h100-sxm", purchase_usd=-5.0), "prices.h100-sxm.purchase_usd must be above 0"),
])
def test_bad_settings_are_refused_naming_the_field(settings, message):
    with pytest.raises(ScenarioError, match=message.replace(".", r"\.")):
        settings.validate()


# ---- the frame, the sweep, the static scenario -------------------------------------------------------


def test_the_frame_and_its_sweep_cost_what_each_system_costs(engine):
    settings = CostSettings(utilisation=0.6).with_price("h100-sxm", purchase_usd=30_000.0)
    workspace = Workspace(Scenario("llama-3.1-8b", "h100-sxm", batch=16, tp=2), ("h100-sxm", "l40s", "m4-max"),
                          cost=settings)
    frame = compute_frame(engine, workspace)
    pricing = Pricing(engine.catalog.prices, settings)
    costs = frame_costs(frame, pricing)
    for j, accelerator_id in enumerate(frame.accelerators):
        one = result_cost(frame.result(accelerator_id), pricing, engine.catalog)
        for view in ("rental", "ownership"):
            expected = one.view(view).usd_per_mtok_output
            got = float(costs.current.view(view).usd_per_mtok_output[j])
            assert (expected is None and math.isnan(got)) or got == pytest.approx(expected)
        sweep = frame.sweep_output(accelerator_id)
        for index in (0, len(frame.sweep_batches) // 2, len(frame.sweep_batches) - 1):
            point = system_cost(accelerator_id, int(sweep.devices[index]), float(sweep.power_W[index]),
                                float(sweep.throughput_output_tok_s[index]), float(sweep.throughput_total_tok_s[index]),
                                float(engine.catalog.accelerator(accelerator_id).idle_W), pricing)
            got = float(costs.sweep.ownership.usd_per_mtok_output[j, index])
            expected = point.ownership.usd_per_mtok_output
            assert (expected is None and math.isnan(got)) or got == pytest.approx(expected)
    # The H100 is rented at the book's price and owned at the user's; the M4 Max has no price at all.
    h100, m4 = frame.index("h100-sxm"), frame.index("m4-max")
    result = frame.result("h100-sxm")
    assert costs.current.rental.usd_per_mtok_output[h100] == pytest.approx(
        2 * engine.catalog.prices.of("h100-sxm").rental.value / (3600 * result.throughput_output_tok_s) * 1e6)
    assert np.all(np.isnan(costs.sweep.rental.usd_per_mtok_output[m4]))
    assert np.all(np.isnan(costs.sweep.ownership.usd_per_mtok_output[m4]))
    # A larger batch spreads the same hourly rent over more tokens while it fits.
    rented = costs.sweep.rental.usd_per_mtok_output[h100]
    fits = frame.sweep_output("h100-sxm").fits
    assert np.all(np.diff(rented[fits][:8]) < 0)


# ---- served runs -----------------------------------------------------------------------------------


def test_served_run_and_capacity_costs(engine):
    from accelscope.engine.studies.serving.study import simulate_served

    scenario = Scenario("llama-3.1-8b", "h100-sxm", input_len=512, output_len=64)
    spec = ServingSpec(rate_rps=4.0, requests=60)
    served = simulate_served(engine, scenario, spec)
    pricing = Pricing(engine.catalog.prices)
    cost = served_cost("h100-sxm", served.devices, served.metrics, pricing, engine.catalog)
    rent = engine.catalog.prices.of("h100-sxm").rental.value
    assert cost.rental.usd_per_mtok_output == pytest.approx(rent / (3600 * served.metrics.output_tokens_per_s) * 1e6)
    assert cost.power_W == served.metrics.average_power_w and cost.ownership.usd_per_mtok_output is None

    met = CapacityResult(3.0, None, SimpleNamespace(output_tokens_per_s=500.0, total_tokens_per_s=4500.0,
                                                    average_power_w=400.0), runs=5)
    at_capacity = capacity_cost("h100-sxm", 1, met, pricing, engine.catalog)
    assert at_capacity.rental.usd_per_mtok_output == pytest.approx(rent / (3600 * 500.0) * 1e6)
    failed = capacity_cost("h100-sxm", 1, CapacityResult(0.0, None, None, runs=2), pricing, engine.catalog)
    assert failed.rental.usd_per_hour == rent and failed.rental.usd_per_mtok_output is None
    assert failed.rental.unknown == "no request rate meets the SLO"


# ---- the cheapest accelerator at an SLO ---------------------------------------------------------------


def test_cheapest_at_slo_ranks_priced_options_and_lists_the_rest(engine):
    pricing = Pricing(engine.catalog.prices, CostSettings().with_price("b200", rental_usd_per_hour=6.0))
    options = [
        SloCapacity("h100-sxm", 1, 2.0, 1000.0, 9000.0, 600.0),  # $2.49 / 3.6 M = $0.6917 per million
        SloCapacity("b200", 1, 5.0, 3000.0, 27000.0, 900.0),  # the user's $6.00 / 10.8 M = $0.5556
        SloCapacity("l4", 2, 0.0, 0.0, 0.0, math.nan),  # meets no rate
        SloCapacity("m4-max", 1, 0.5, 200.0, 1800.0, 90.0),  # meets it, but has no rental price
    ]
    cheapest = cheapest_at_slo(options, pricing, engine.catalog)
    assert cheapest.accelerator == "b200"
    assert cheapest.usd_per_mtok_output == pytest.approx(6.0 / 3.6 / 3.0)
    assert [cost.accelerator for cost in cheapest.ranked] == ["b200", "h100-sxm"]
    assert cheapest.ranked[1].rental.usd_per_mtok_output == pytest.approx(2.49 / 3.6)
    assert cheapest.unpriced == ("m4-max",) and cheapest.failing == ("l4",)
    owned = cheapest_at_slo(options, pricing, engine.catalog, view="ownership")
    assert owned.best is None and owned.accelerator is None and owned.usd_per_mtok_output is None
    assert set(owned.unpriced) == {"h100-sxm", "b200", "m4-max"}
    with pytest.raises(ValueError, match="view must be one of"):
        cheapest_at_slo(options, pricing, engine.catalog, view="leasing")


def test_slo_capacity_of_a_capacity_search():
    metrics = SimpleNamespace(output_tokens_per_s=800.0, total_tokens_per_s=7000.0, average_power_w=650.0)
    option = SloCapacity.of("h200", 2, CapacityResult(4.5, None, metrics, runs=9))
    assert option == SloCapacity("h200", 2, 4.5, 800.0, 7000.0, 650.0)
    assert SloCapacity.of("h200", 2, CapacityResult(0.0, None, metrics, runs=2)).capacity_rps == 0.0


# ---- the explanation and the tables ------------------------------------------------------------------


def test_the_explanation_shows_the_arithmetic_with_sources_and_dates(engine):
    from accelscope.engine.core.units import format_usd
    from accelscope.engine.text.explain import explain

    scenario = Scenario("llama-3.1-8b", "h100-sxm", batch=16, tp=2)
    settings = CostSettings(utilisation=0.5).with_price("h100-sxm", purchase_usd=30_000.0)
    lines = explain(engine, scenario, settings).section("Cost")
    cost = result_cost(engine.predict(scenario), Pricing(engine.catalog.prices, settings), engine.catalog)
    rented, owned = lines[0], next(line for line in lines if line.startswith("Together"))
    assert rented.startswith("Rented: $2.49 per NVIDIA H100 SXM5 80GB device-hour (Lambda, CoreWeave, Crusoe, "
                             "RunPod (the low end of their range), early 2026; on-demand) × 2 devices = $4.98 per hour")
    assert "÷ 3,600 s ÷" in rented and f"= {format_usd(cost.rental.usd_per_mtok_output)} per million output" in rented
    assert any(line.startswith("Owned: $30,000 per device (your own value) × 2 devices, written off over 4 years")
               for line in lines)
    assert f"= {format_usd(cost.ownership.usd_per_mtok_output)} per million output tokens" in owned
    assert "PUE 1.58 (Uptime Institute" in " ".join(lines) and "2024-01" in " ".join(lines)
    unpriced = explain(engine, scenario.with_changes(accelerator="m4-max")).section("Cost")
    assert unpriced[0].startswith("Rented: no rental price is known for Apple M4 Max")
    assert unpriced[1].startswith("Owned: no purchase price is known")
    assert not any("$0 per million" in line for line in unpriced)


def test_the_cost_tables_hold_the_costs_and_leave_unknowns_empty(engine):
    from accelscope.engine.text.tables import cost_comments, cost_tables

    workspace = Workspace(Scenario("llama-3.1-8b", "h100-sxm", batch=8), ("h100-sxm", "l40s", "m4-max"))
    frame = compute_frame(engine, workspace)
    tables = cost_tables(frame)
    costs = frame_costs(frame, Pricing(engine.catalog.prices))
    rows = {row[0]: dict(zip(tables["cost"].headers, row, strict=True)) for row in tables["cost"].rows}
    assert rows["h100-sxm"]["rental_price [USD per device-hour]"] == 2.49
    assert rows["h100-sxm"]["rental_price_date"] == "early 2026"
    assert rows["h100-sxm"]["rental [USD per million output tokens]"] == pytest.approx(
        float(costs.current.rental.usd_per_mtok_output[0]))
    assert rows["h100-sxm"]["ownership [USD per million output tokens]"] == ""  # no purchase price: unknown
    assert rows["l40s"]["purchase_price [USD per device]"] == 8500
    owned_tco = float(costs.current.ownership.tco_usd_per_year[1])
    assert rows["l40s"]["ownership_tco [USD per year]"] == pytest.approx(owned_tco)
    assert all(rows["m4-max"][h] == "" for h in rows["m4-max"] if "million" in h)
    sweep = tables["cost_sweep"]
    assert len(sweep.rows) == 3 * len(frame.sweep_batches)
    first = dict(zip(sweep.headers, sweep.rows[0], strict=True))
    assert first["batch [sequences]"] == 1
    assert first["rental [USD per million output tokens]"] == pytest.approx(
        float(costs.sweep.rental.usd_per_mtok_output[0, 0]))
    comments = cost_comments(frame, "p")
    assert any(line.startswith("pue: 1.58 (Uptime Institute") for line in comments)


# ---- the frontier and the disaggregation claim ------------------------------------------------------


def test_the_cheapest_frontier_keeps_what_nothing_beats():
    latency = np.array([[1.0, 2.0, 3.0], [1.5, 2.5, 4.0]])
    usd = np.array([[5.0, 3.0, 4.0], [4.0, np.nan, 1.0]])
    # (1, 5), (1.5, 4), (2, 3) and (4, 1) each beat everything as fast or faster; (3, 4) is beaten
    # by (2, 3); the unknown cost is left out.
    assert list(cheapest_frontier(latency, usd)) == [0, 3, 1, 5]
    assert cheapest_frontier(np.array([1.0]), np.array([np.nan])).size == 0


def test_the_pool_price_that_disaggregation_could_afford():
    from accelscope.engine.core.scenario import Workload
    from accelscope.engine.studies.claims import Deployment, DisaggregationCase

    # Fixed: 4 devices, 8,000 tokens/s. Pooled: 2 devices, 6,000 tokens/s, 100 GB in the pool.
    # Devices at $2/h: the fixed layout costs 8/8,000 = $0.001 per token-second; 22% less on
    # 6,000 tokens/s allows $4.68 an hour, $4 of it the devices: the pool may cost $0.68 an hour
    # for 100 GB, $4.964 per GB-month (730 h). Per device-second: 2,000 against 3,000 tokens.
    fixed = Deployment(4, 0.0, 0.0, 4, 8000.0, 0.0, 1)
    pooled = Deployment(2, 0.5, 1.0, 2, 6000.0, 100e9, 1)
    case = DisaggregationCase("test", Workload(), fixed, pooled, 2.0)
    assert case.cost_ratio == pytest.approx(2 / 3)
    assert case.saving_percent == pytest.approx(100 / 3)
    assert case.pool_break_even_usd_per_gb_month() == pytest.approx(0.68 / 100 * 730)
    slower = DisaggregationCase("test", Workload(), fixed, Deployment(2, 0.5, 1.0, 2, 5000.0, 100e9, 1), 2.0)
    assert slower.pool_break_even_usd_per_gb_month() < 0  # 22% less would leave less than the devices cost


def test_the_disaggregation_claim_is_the_best_saving_of_the_engines_layouts(engine):
    from accelscope.engine.core.scenario import Scenario as S
    from accelscope.engine.studies.claims import (
        DISAGGREGATION_ACCELERATOR,
        DISAGGREGATION_MODEL,
        DISAGGREGATION_WORKLOADS,
        FIXED_TP,
        disaggregation_cases,
        disaggregation_tco_check,
    )

    cases = disaggregation_cases(engine)
    check = disaggregation_tco_check(engine)
    assert check.paper_value == 22.0 and check.unit == "%"
    assert check.computed_value == pytest.approx(max(case.saving_percent for case in cases))
    # The fixed layouts, worked out one by one: the most input+output tokens per device-second
    # among those whose weights fit.
    for (_, workload), case in zip(DISAGGREGATION_WORKLOADS, cases, strict=True):
        per_device = {}
        for tp in FIXED_TP:
            result = engine.predict(S.from_workload(DISAGGREGATION_MODEL, DISAGGREGATION_ACCELERATOR, workload, tp=tp))
            if result.fits:
                per_device[tp] = result.throughput_total_tok_s / result.devices
        assert case.fixed.tp == max(per_device, key=per_device.get)
        assert case.fixed.tokens_per_device_s == pytest.approx(max(per_device.values()))
        assert case.pooled.waves == 1 and case.pooled.pool_bytes > 0
    # Decode reads every pooled byte each step: pooling costs more where decode dominates.
    assert cases[0].saving_percent < 0 and cases[1].saving_percent < 0
    assert check.computed_value < 22.0 and "cluster scheduling" in check.note
