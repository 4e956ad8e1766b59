"""The Model vs paper window: the papers' numbers beside the model's, and loading a row."""

from __future__ import annotations

import math

import pytest

from accelscope.engine.physics.engine import Engine
from accelscope.engine.validation.report import RowReport
from accelscope.gui.main_window import MainWindow
from accelscope.gui.windows.validation import COLUMNS, row_workspace


@pytest.fixture(scope="module")
def report(validation_report):
    return validation_report


# The window validates the catalog on its own worker, as the app does, in one long run (~30 s on
# two cores; pytest -m slow); otherwise the tests check what the window does with a report and
# share the module's (each validation took ~5 s).
OWN_VALIDATION = pytest.param("own", marks=pytest.mark.slow)


@pytest.fixture(autouse=True)
def _one_validation_for_the_module(request, monkeypatch):
    callspec = getattr(request.node, "callspec", None)
    if (callspec is not None and callspec.params.get("validation") == "own") or "report" not in request.fixturenames:
        return
    report = request.getfixturevalue("report")
    monkeypatch.setattr("accelscope.gui.windows.validation.validate", lambda engine: report)


def _window(qtbot) -> MainWindow:
    window = MainWindow(Engine())
    qtbot.addWidget(window)
    window.start(synchronous=True)
    return window


@pytest.mark.parametrize("validation", [OWN_VALIDATION, "shared"])
def test_table_lists_every_measurement_and_claim_with_the_engines_numbers(qtbot, report, validation):
    window = _window(qtbot)
    validation = window.side.show_validation()
    qtbot.waitUntil(lambda: validation.report is not None, timeout=60_000)
    table = validation.table
    assert table.rowCount() == len(report.rows) + len(report.claims)
    column = COLUMNS.index("Ratio")
    for row, entry in enumerate(report.rows):
        assert table.item(row, 0).text().startswith(entry.row.paper)
        ratio = entry.ratio("calibrated")
        text = table.item(row, column).text()
        if ratio is None:
            assert text == "—"
        else:
            assert float(text.rstrip("×")) == pytest.approx(ratio, rel=6e-3, abs=6e-3)
    assert "median |error|" in validation.summary.text()
    validation.stop()


def test_the_summary_shows_every_target_with_its_limit_and_verdict(qtbot, report):
    """The targets' limits read "<= 20%": shown as rich text unescaped, '<=' opened a tag that
    swallowed the rest of the summary after the first target's "(limit"."""
    from PySide6.QtGui import QTextDocument

    window = _window(qtbot)
    validation = window.side.show_validation()
    qtbot.waitUntil(lambda: validation.report is not None, timeout=60_000)
    document = QTextDocument()
    document.setHtml(validation.summary.text())
    shown = document.toPlainText()
    for target in report.targets:
        verdict = "met" if target.met else "not met"
        assert f"{target.name}: {target.value} (limit {target.limit}, {verdict})" in shown
    assert "Select a row to load its configuration" in shown
    # The workloads the rows assume, with the served run, the fixed-batch machines and the server scenario.
    assert ("Workloads assumed (resources/measurements.md) — chat: 350 input, 190 output tokens, a served run "
            "of 1,000 requests (wse-3, sn40l from fixed-batch images); sharma-1024: 1,024 input, 256 output "
            "tokens; sharma-1024-server: 1,024 input, 256 output tokens, MLPerf server scenario at its capacity "
            "under p99 TTFT ≤ 2,000 ms and p99 TPOT ≤ 200 ms (Poisson runs of 1,000 requests).") in shown
    validation.stop()


def test_a_models_tooltip_gives_the_setup_the_engine_computed(qtbot, report):
    from accelscope.engine.validation.text import setup_text

    window = _window(qtbot)
    validation = window.side.show_validation()
    qtbot.waitUntil(lambda: validation.report is not None, timeout=60_000)
    rows = [i for i, entry in enumerate(validation._entries)
            if getattr(entry, "row", None) is not None and entry.row.id == "b25-sn40l-llama8b-peak-throughput"]
    assert len(rows) == 1
    tip = validation.table.item(rows[0], 2).toolTip()
    entry = validation._entries[rows[0]]
    assert tip == f"Computed for: {setup_text(entry.row.spec)}"
    assert "TP 16" in tip and "sn40l from fixed-batch images" in tip
    validation.stop()


def test_filter_by_accelerator_keeps_only_its_rows(qtbot, report):
    window = _window(qtbot)
    validation = window.side.show_validation()
    qtbot.waitUntil(lambda: validation.report is not None, timeout=60_000)
    index = validation.filter.findData("h100-sxm")
    assert index > 0
    validation.kind.setCurrentIndex(1)  # measurements only
    validation.filter.setCurrentIndex(index)
    expected = [r for r in report.rows if "h100-sxm" in r.accelerator_key.split("+")]
    assert 0 < validation.table.rowCount() == len(expected)
    accelerator_column = COLUMNS.index("Accelerator")
    name = window.engine.catalog.accelerators["h100-sxm"].name
    for row in range(validation.table.rowCount()):
        assert name in validation.table.item(row, accelerator_column).text()
    validation.stop()


def test_the_table_names_accelerators_models_and_metrics_as_people_do(qtbot, report):
    """Not by catalog id ("h100-sxm", "llama-3.1-8b") or field name ("ratio_throughput_total_tok_s")."""
    window = _window(qtbot)
    validation = window.side.show_validation()
    qtbot.waitUntil(lambda: validation.report is not None, timeout=60_000)
    catalog = window.engine.catalog
    ids = set(catalog.accelerators) | set(catalog.models)
    table = validation.table
    columns = [COLUMNS.index(name) for name in ("Accelerator", "Model", "Metric")]
    seen = set()
    for row in range(len(report.rows)):
        for column in columns:
            text = table.item(row, column).text()
            seen.add(text)
            assert not {part.strip() for part in text.split("+")} & ids, text
            assert "_" not in text, text
    assert catalog.accelerators["h100-sxm"].name in {part.strip() for text in seen for part in text.split("+")}
    assert "throughput, input + output ratio" in seen
    validation.stop()


def test_selecting_a_row_loads_its_configuration(qtbot, report):
    window = _window(qtbot)
    validation = window.side.show_validation()
    qtbot.waitUntil(lambda: validation.report is not None, timeout=60_000)
    validation.kind.setCurrentIndex(1)
    row = next(i for i, r in enumerate(report.rows) if r.row.spec is not None and r.row.not_computed is None
               and not r.row.spec.ratio)
    entry = report.rows[row]
    validation.select_row(row)
    window.controller.throttle.flush()
    expected = row_workspace(entry, ())
    scenario = window.controller.workspace.scenario
    assert scenario == expected.scenario
    assert window.controls.batch_spin.value() == scenario.batch
    assert set(expected.shown) <= set(window.controller.workspace.shown)
    validation.stop()


def test_row_workspace_is_the_rows_first_configuration(report):
    for entry in report.rows:
        if entry.row.spec is None:
            assert row_workspace(entry, ()) is None
            continue
        workspace = row_workspace(entry, ("h100-sxm",))
        spec = entry.row.spec
        assert workspace.scenario.model == {**spec.base, **spec.cases[0]}.get("model", spec.base.get("model"))
        assert workspace.selected in workspace.shown
        assert all(math.isfinite(x) for x in (workspace.scenario.batch, workspace.scenario.input_len))
        assert isinstance(entry, RowReport)


def test_the_accelerator_filter_is_wide_enough_for_every_name(qtbot, report):
    window = _window(qtbot)
    validation = window.side.show_validation()
    qtbot.waitUntil(lambda: validation.report is not None, timeout=60_000)
    validation.show()
    qtbot.waitExposed(validation)
    combo = validation.filter
    metrics = combo.fontMetrics()
    widest = max(metrics.horizontalAdvance(combo.itemText(i)) for i in range(combo.count()))
    assert combo.width() >= widest  # the name itself fits, before the arrow and margins
    validation.stop()


@pytest.mark.parametrize("presentation", [False, True], ids=["normal", "presentation"])
@pytest.mark.parametrize("theme_name", ["light", "dark"])
def test_every_cell_reads_in_light_and_dark(qtbot, catalog, report, theme_name, presentation):
    """Each cell's text against its own background, the green and red ones included, at the
    WCAG contrast for body text (4.5:1), in every theme the window can be shown in."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QBrush, QPalette
    from PySide6.QtWidgets import QWidget

    from accelscope.gui.look.display import Display
    from accelscope.gui.look.theme import TEXT_CONTRAST, contrast_ratio
    from accelscope.gui.windows.validation import ValidationWindow

    host = QWidget()
    qtbot.addWidget(host)
    display = Display(host)
    display.set_theme(theme_name)
    display.set_presentation(presentation)
    try:
        validation = ValidationWindow(catalog)
        qtbot.addWidget(validation)
        validation._finished(report)
        table = validation.table
        palette = table.palette()
        marked: set[str] = set()
        for row in range(table.rowCount()):
            for column in range(table.columnCount()):
                item = table.item(row, column)
                background = item.data(Qt.ItemDataRole.BackgroundRole)
                foreground = item.data(Qt.ItemDataRole.ForegroundRole)
                paper = background.color() if isinstance(background, QBrush) else palette.color(QPalette.ColorRole.Base)
                ink = foreground.color() if isinstance(foreground, QBrush) else palette.color(QPalette.ColorRole.Text)
                if isinstance(background, QBrush):
                    marked.add(paper.name())
                assert contrast_ratio(ink, paper) >= TEXT_CONTRAST, (row, COLUMNS[column], ink.name(), paper.name())
        assert len(marked) == 2  # both the green and the red cells were checked
    finally:
        display.set_presentation(False)
        display.set_theme("light")
