"""The app's cost: the Energy tab's cost page draws the engine's costs (bars per accelerator,
the batch sweep in dollars, the cheapest at each latency) and nothing where a price is unknown;
the Cost group edits the workspace's settings both ways, refuses bad values with the reason and
loses nothing; the explanation follows the settings."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pictures import assert_picture_file

from accelscope.engine.core.cost import CostSettings, Pricing
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.units import format_usd
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.frame import compute_frame
from accelscope.engine.studies.cost import cheapest_frontier, frame_costs
from accelscope.gui.look.style import configure_pyqtgraph
from accelscope.gui.panels.energy import EnergyPanel

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support raise")
SHOWN = ("h100-sxm", "l40s", "rtx-pro-6000", "m4-max")


@pytest.fixture(autouse=True)
def _pyqtgraph_options():
    configure_pyqtgraph()


def cost_panel(qtbot, catalog, frame):
    panel = EnergyPanel(catalog)
    qtbot.addWidget(panel)
    panel.resize(1300, 800)
    panel.update_frame(frame)
    panel.show_page("cost")
    panel.grab()
    return panel


def a_frame(engine, cost=None, **scenario):
    values = {"model": "llama-3.1-8b", "accelerator": "h100-sxm", "batch": 16, **scenario}
    return compute_frame(engine, Workspace(Scenario(**values), SHOWN, cost=cost or CostSettings()))


def test_the_cost_page_draws_the_engines_costs_and_nothing_unknown(qtbot, engine, catalog):
    frame = a_frame(engine, CostSettings(utilisation=0.5).with_price("h100-sxm", purchase_usd=30_000.0))
    panel = cost_panel(qtbot, catalog, frame)
    costs = frame_costs(frame, Pricing(catalog.prices, frame.workspace.cost))
    drawn = panel.cost_page.plotted()
    assert list(drawn["accelerators"]) == list(SHOWN)
    for name, view in (("rental_usd_per_mtok", "rental"), ("ownership_usd_per_mtok", "ownership")):
        expected = costs.current.view(view).usd_per_mtok_output
        assert np.allclose(drawn[name], np.nan_to_num(expected), rtol=1e-9)  # 0: no bar
    m4 = SHOWN.index("m4-max")
    assert drawn["rental_usd_per_mtok"][m4] == 0 and drawn["ownership_usd_per_mtok"][m4] == 0
    assert drawn["texts"][m4] == "no price"
    h100 = SHOWN.index("h100-sxm")
    rent, own = costs.current.rental.usd_per_mtok_output[h100], costs.current.ownership.usd_per_mtok_output[h100]
    assert drawn["texts"][h100] == f"{format_usd(rent)} · {format_usd(own)}"
    # The sweep in dollars: the rented cost at every batch that fits; none for the unpriced M4 Max.
    fits = frame.sweep_outputs.fits
    expected = np.where(fits, costs.sweep.rental.usd_per_mtok_output, np.nan)
    assert np.allclose(drawn["y"], expected, equal_nan=True, rtol=1e-9)
    assert np.allclose(drawn["x"][~np.isnan(expected)], frame.sweep_outputs.e2e_latency_s[~np.isnan(expected)])
    assert np.all(np.isnan(drawn["y"][m4]))
    best = cheapest_frontier(frame.sweep_outputs.e2e_latency_s, expected)
    assert np.allclose(drawn["cheapest_y"], expected.ravel()[best])
    assert "M4 Max" in str(drawn["note"]) and "H100" not in str(drawn["note"])  # by name, as the legends
    # Owned: the sweep follows the view chosen.
    panel.cost_page.set_view("ownership")
    drawn = panel.cost_page.plotted()
    expected = np.where(fits, costs.sweep.ownership.usd_per_mtok_output, np.nan)
    assert np.allclose(drawn["y"], expected, equal_nan=True, rtol=1e-9)
    assert "A100" not in str(drawn["note"]) and "M4 Max" in str(drawn["note"])


def test_hovering_a_row_shows_each_price_with_its_source_and_date(qtbot, engine, catalog):
    frame = a_frame(engine)
    panel = cost_panel(qtbot, catalog, frame)
    page = panel.cost_page
    text = page._tooltip(SHOWN.index("h100-sxm"))
    assert "$2.49 per device-hour (Lambda, CoreWeave, Crusoe, RunPod (the low end of their range), early 2026; " \
           "third-party; on-demand)" in text
    assert "no purchase price known" in text
    text = page._tooltip(SHOWN.index("l40s"))
    assert "$8,500 per device (Hugging Face hardware page, n.d.; third-party; the card alone (MSRP))" in text
    assert "PUE 1.58 (Uptime Institute" in text and "per kWh (EIA" in text
    spot = page.points.shown_spots()[2][0]
    assert "batch 1" in page.tip_for(spot)


def test_a_hidden_page_catches_up_when_shown(qtbot, engine, catalog):
    panel = EnergyPanel(catalog)
    qtbot.addWidget(panel)
    panel.update_frame(a_frame(engine))
    assert panel.page == "energy" and panel.cost_page.frame is None  # not drawn while hidden
    later = a_frame(engine, batch=64)
    panel.update_frame(later)
    panel.show_page("cost")
    assert panel.cost_page.frame is later
    panel.show_page("energy")
    assert panel.plotted()["power_W"][0] == pytest.approx(later.outputs.power_W[0])


# ---- the Cost group ------------------------------------------------------------------------------


def type_into(edit, text: str) -> None:
    edit.setText(text)
    edit.editingFinished.emit()


def test_the_cost_group_edits_the_workspace_both_ways(open_window):
    window = open_window()
    group = window.controls.cost_group
    controller = window.controller
    rent = group.price_bindings["rental_usd_per_hour"].edit
    purchase = group.price_bindings["purchase_usd"].edit
    assert controller.workspace.selected == "h100-sxm"
    assert rent.text() == "" and rent.placeholderText() == "2.49 (book)"
    assert "early 2026" in rent.toolTip() and "graded third-party" in rent.toolTip()
    assert purchase.placeholderText() == "unknown: type one" and "never 0" in purchase.toolTip()
    type_into(purchase, "30,000")
    type_into(group.site_bindings["utilisation"].edit, "60")
    assert controller.workspace.cost == CostSettings(utilisation=0.6).with_price("h100-sxm", purchase_usd=30_000.0)
    controller.throttle.flush()
    assert controller.last_frame.workspace.cost == controller.workspace.cost  # the frame is costed with them
    # Another accelerator: its own prices; the H100's stay set.
    controller.select("l40s")
    assert purchase.text() == "" and purchase.placeholderText() == "8,500 (book)"
    controller.select("h100-sxm")
    assert purchase.text() == "30000"
    # Cleared: the book's again.
    type_into(purchase, "")
    assert controller.workspace.cost == CostSettings(utilisation=0.6)
    # A workspace set elsewhere (a preset) shows in the fields.
    controller.set_workspace(controller.workspace.with_changes(cost=CostSettings(pue=1.2)))
    assert group.site_bindings["pue"].edit.text() == "1.2" and group.site_bindings["utilisation"].edit.text() == ""
    group.book_button.click()
    assert controller.workspace.cost == CostSettings()


@pytest.mark.parametrize(("field", "typed", "message"), [
    ("pue", "0.5", "PUE must be at least 1 and at most 5, got 0.5"),
    ("utilisation", "150", "In use % must be above 0 and at most 100, got 150"),
    ("electricity_usd_per_kwh", "cheap", "Electricity $/kWh: 'cheap' is not a number"),
    ("amortisation_years", "0", "Write-off years must be above 0"),
])
def test_bad_values_are_refused_with_the_reason_and_kept_as_typed(open_window, field, typed, message):
    window = open_window()
    group = window.controls.cost_group
    before = window.controller.workspace
    edit = group.site_bindings[field].edit
    type_into(edit, typed)
    assert window.controller.workspace == before  # nothing changed
    assert edit.text() == typed and edit.styleSheet()  # kept, and marked
    assert message in group.message.text() and not group.message.isHidden()
    type_into(edit, "")  # fixed: the mark and the message go
    assert not edit.styleSheet() and group.message.isHidden()


def test_a_bad_rental_price_is_refused(open_window):
    window = open_window()
    group = window.controls.cost_group
    edit = group.price_bindings["rental_usd_per_hour"].edit
    type_into(edit, "-2")
    assert window.controller.workspace.cost == CostSettings()
    assert "Rent $/h must be above 0" in group.message.text()


def test_the_explanation_follows_the_cost_settings(open_window):
    window = open_window()
    controller = window.controller
    controller.set_workspace(controller.workspace.with_changes(
        cost=CostSettings().with_price("h100-sxm", purchase_usd=30_000.0)))
    controller.throttle.flush()
    window.flush_explanation()
    text = window.explain_panel.text()
    assert "Owned: $30,000 per device (your own value)" in text
    assert not math.isnan(controller.last_frame.outputs.power_W[0])


def test_the_price_book_button_also_clears_what_was_refused(open_window):
    window = open_window()
    group = window.controls.cost_group
    edit = group.site_bindings["pue"].edit
    type_into(edit, "0.2")
    assert edit.styleSheet() and not group.message.isHidden()
    group.book_button.click()
    assert edit.text() == "" and not edit.styleSheet() and group.message.isHidden()
    assert window.controller.workspace.cost == CostSettings()


def test_exporting_the_cost_page_writes_its_picture_and_the_cost_tables(qtbot, engine, catalog, tmp_path):
    from accelscope.gui.export.files import export_view

    frame = a_frame(engine)
    panel = cost_panel(qtbot, catalog, frame)
    written = export_view("energy", panel, frame, catalog, tmp_path / "energy")
    assert sorted(path.name for path in written) == ["energy-cost.csv", "energy-cost_sweep.csv", "energy.png",
                                                     "energy.svg"]
    assert_picture_file(tmp_path / "energy.png")
    header = next(line for line in (tmp_path / "energy-cost.csv").read_text().splitlines() if not line.startswith("#"))
    assert header.startswith("accelerator,devices,fits") and "rental [USD per million output tokens]" in header
