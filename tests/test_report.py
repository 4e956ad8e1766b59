"""The headless report of the bundled presets: non-empty files, PNGs that are not blank, SVGs
that Qt can render, CSVs that parse and hold the engine's numbers, and a sidecar preset that
loads back to the same workspace.

Every bundled preset gets the checks that need no drawing, on the files of ``report
--tables-only`` (``cli.tables.write_tables``): the CSVs, the explanation and the sidecar
preset are there and not empty, the CSVs hold the engine's numbers, and the sidecar loads
back. Drawing a report (every tab as PNG and SVG) takes 3 to 8 s a preset, so the default
suite draws those of ``DRAWN`` and checks their pages and that the report's CSVs are the
headless ones byte for byte; with ``-m slow`` the others too, among them two that have pages
of their own kinds (the last two below):

- ``teach-hybrid-long-context``: a hybrid model (12 of its 48 layers attention with a KV cache,
  the others linear attention with a state) at a 128K context, the workload the long-context
  preset gives a dense model;
- ``serving-aggregated-vs-disaggregated``: the Serving tab's run page of a disaggregated
  deployment (prefill and decode replicas, the KV cache carried between them);
- ``sharma-fig8-regimes``: nine accelerators of every kind (GPUs, TPU, wafer-scale, dataflow);
- ``sharma-scaling-1t-moe`` (slow): a preset's own synthetic model, a 1T mixture of experts on
  TP, PP and EP;
- ``sharma-heterogeneous-memory`` (slow): half the weights in a far memory tier of the preset's
  own choosing (its view options).

No bundled preset compares two scenarios or asks for the dark theme (tests/test_gui_theme.py
draws a report in it). The other presets' reports are drawn and checked the same way under
``pytest -m slow tests/test_report.py``.
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

from accelscope.cli.main import main
from accelscope.engine.catalog.presets import bundled_preset_files, load_preset
from accelscope.engine.catalog.writing import MANIFEST_NAME
from accelscope.engine.core.workspace import ANALYSIS_VIEWS, PLOT_VIEWS
from accelscope.engine.physics.engine import Engine

VIEWS = PLOT_VIEWS
# The analysis tabs' tables go by their own names.
ANALYSIS_TABLES = {
    "serving": ("serving.csv",),
    "scaling": ("scaling.csv",),
    "parallelism": ("tp_dp.csv", "ep_tp.csv"),
    "regimes": ("regimes.csv",),
    "tiers": ("memory_tiers.csv",),
    "run_here": ("run_here.csv",),
}
# Beside the energy tab's: what a million tokens cost, at the scenario and over the batch sweep;
# the report also draws the energy tab's cost page.
COST_TABLES = ("cost.csv", "cost_sweep.csv")
COST_PAGE = ("5-energy-cost.png", "5-energy-cost.svg")
# And the Serving tab's second page: the selected accelerator's run over time.
SERVING_RUN = f"{len(VIEWS) + 1 + ANALYSIS_VIEWS.index('serving')}-serving-run"


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    comments = [line for line in lines if line.startswith("# ")]
    rows = list(csv.DictReader(io.StringIO("\n".join(line for line in lines if not line.startswith("#")))))
    return comments, rows


def distinct_colours(path: Path) -> int:
    from PySide6.QtGui import QImage

    image = QImage(str(path))
    assert not image.isNull(), path
    step = max(1, image.width() // 200)
    return len({image.pixel(x, y) for x in range(0, image.width(), step) for y in range(0, image.height(), step)})


def preset_name(preset_file) -> str:
    return Path(str(preset_file)).stem


# Presets whose report the default suite draws (the module's notes say why these).
DRAWN = ("teach-hybrid-long-context", "serving-aggregated-vs-disaggregated", "sharma-fig8-regimes")
REGIMES_PRESET = "sharma-fig8-regimes"
BUNDLED = bundled_preset_files()
assert set(DRAWN) <= {preset_name(preset_file) for preset_file in BUNDLED}
# The reports of the others are drawn in the long run only.
DRAWN_PRESETS = [preset_file if preset_name(preset_file) in DRAWN else pytest.param(preset_file, marks=pytest.mark.slow)
                 for preset_file in BUNDLED]
# What the report writes beside its pictures, and --tables-only alone.
TABLE_FILES = {*(f"{index}-{view}.csv" for index, view in enumerate(VIEWS, start=1)),
               *(name for tables in ANALYSIS_TABLES.values() for name in tables), *COST_TABLES,
               "explain.txt", "scenario.preset.json"}


@pytest.fixture(scope="module")
def report_engine():
    return Engine()


@pytest.fixture(scope="module")
def drawn_report(qapp, report_engine, tmp_path_factory):
    """``drawn_report(preset_file)``: the preset and the files of its report, drawn once for the module."""
    from accelscope.gui.export.report import write_report

    made: dict[str, tuple] = {}

    def draw(preset_file):
        name = preset_name(preset_file)
        if name not in made:
            preset = load_preset(preset_file, report_engine.catalog, bundled=True)
            folder = tmp_path_factory.mktemp(name)
            made[name] = preset, folder, write_report(preset, folder, report_engine, scale=1.0)
        return made[name]

    return draw


def check_tables(preset, folder: Path, written: list[Path], report_engine) -> None:
    """The files of a report that are not pictures: all there and not empty, the CSVs carrying
    the scenario and the engine's numbers, the sidecar preset loading back to the workspace."""
    assert TABLE_FILES <= {path.name for path in written}
    for path in written:
        assert path.stat().st_size > 100, path
    # The report leaves the engine it was given as it was: a preset's own model is known to an
    # engine made for the report.
    assert preset.model is None or preset.model.id not in report_engine.model_index
    engine = report_engine.with_models(preset.model) if preset.model is not None else report_engine
    workspace = preset.workspace
    comments, rows = read_csv(folder / "3-latency.csv")
    assert any(f"model: {workspace.scenario.model}" in line for line in comments)
    assert [row["accelerator"] for row in rows] == list(workspace.shown)
    for row in rows:
        result = engine.predict(workspace.scenario_on(row["accelerator"]))
        assert float(row["itl [ms]"]) == pytest.approx(result.itl_s * 1e3, rel=1e-12)
        assert float(row["itl_of_which_host [ms]"]) == pytest.approx(result.decode.host_time_s * 1e3, rel=1e-12)
        assert float(row["ttft [ms]"]) == pytest.approx(result.ttft_s * 1e3, rel=1e-12)
    _, memory = read_csv(folder / "2-memory.csv")
    for row in memory:
        result = engine.predict(workspace.scenario_on(row["accelerator"]))
        assert int(row["max_batch [sequences]"]) == result.memory.max_batch
        assert row["fits"] == ("yes" if result.fits else "no")
    _, sweep = read_csv(folder / "4-sweep.csv")
    assert len(sweep) == len(workspace.shown) * 28

    sidecar = load_preset(folder / "scenario.preset.json", report_engine.catalog)
    assert sidecar.workspace == workspace


@pytest.mark.parametrize("preset_file", BUNDLED, ids=preset_name)
def test_the_tables_of_every_bundled_preset(report_engine, tmp_path, preset_file):
    from accelscope.cli.tables import write_tables

    preset = load_preset(preset_file, report_engine.catalog, bundled=True)
    written = write_tables(preset, tmp_path, report_engine)
    assert {path.name for path in written} == TABLE_FILES
    check_tables(preset, tmp_path, written, report_engine)


@pytest.mark.parametrize("preset_file", DRAWN_PRESETS, ids=preset_name)
def test_the_drawn_report_of_a_bundled_preset(drawn_report, report_engine, tmp_path, preset_file):
    preset, folder, written = drawn_report(preset_file)
    names = {path.name for path in written}
    for index, view in enumerate(VIEWS, start=1):
        assert {f"{index}-{view}.png", f"{index}-{view}.svg", f"{index}-{view}.csv"} <= names
    for index, view in enumerate(ANALYSIS_VIEWS, start=len(VIEWS) + 1):
        assert {f"{index}-{view}.png", f"{index}-{view}.svg", *ANALYSIS_TABLES[view]} <= names
    assert {"explain.txt", "scenario.preset.json", *COST_TABLES, *COST_PAGE, f"{SERVING_RUN}.png",
            f"{SERVING_RUN}.svg"} <= names
    check_tables(preset, folder, written, report_engine)

    pages = [f"{index}-{view}" for index, view in enumerate(VIEWS + ANALYSIS_VIEWS, start=1)]
    for page in [*pages, COST_PAGE[0].removesuffix(".png"), SERVING_RUN]:
        assert distinct_colours(folder / f"{page}.png") > 20  # a real plot, not a blank page
        from PySide6.QtSvg import QSvgRenderer

        svg = folder / f"{page}.svg"
        text = svg.read_text()
        assert QSvgRenderer(str(svg)).isValid() and ("<path" in text or "<rect" in text or "<polygon" in text)
        assert text.count("<text") > 5  # axis labels, notes

    # Without Qt, the same tables, explanation and preset: the same files, byte for byte.
    from accelscope.cli.tables import write_tables

    headless = write_tables(preset, tmp_path / "tables-only", report_engine)
    assert {path.name for path in headless} == {path.name for path in written if path.suffix not in (".png", ".svg")}
    for path in headless:
        assert path.read_bytes() == (folder / path.name).read_bytes(), path.name


def test_report_command_and_a_bad_preset(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "accelscope.preset/9"}')
    assert main(["report", "--preset", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.json" in err and "newer" in err
    assert not (tmp_path / "out").exists()

    assert main(["report", "--preset", "no-such-preset", "--out", str(tmp_path / "out")]) == 2
    assert "no-such-preset" in capsys.readouterr().err

    assert main(["report", "--preset", "teach-roofline-basics", "--out", str(tmp_path / "ok"), "--scale", "1"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert sorted(printed) == sorted(str(path) for path in (tmp_path / "ok").iterdir() if path.name != MANIFEST_NAME)
    assert len(printed) == (3 * len(VIEWS) + 2 * len(ANALYSIS_VIEWS) + sum(map(len, ANALYSIS_TABLES.values()))
                            + len(COST_TABLES) + len(COST_PAGE) + 2 + 2)  # the serving run page's PNG and SVG


def test_tables_only_imports_no_qt(tmp_path):
    """``report --tables-only`` runs where Qt's libraries are missing: it loads no Qt module."""
    code = (
        "import sys\n"
        "from accelscope.cli.main import main\n"
        f"status = main(['report', '--preset', 'sharma-heterogeneous-memory', '--out', {str(tmp_path)!r}, "
        "'--tables-only'])\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6', 'PyQt5', "
        "'PyQt6') or m.startswith('accelscope.gui')]\n"
        "assert status == 0 and not loaded, (status, loaded)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    assert {path.name for path in tmp_path.iterdir()} == TABLE_FILES | {MANIFEST_NAME}


def test_the_headless_tables_carry_each_tabs_title():
    from accelscope.cli.tables import TITLES
    from accelscope.gui.panels import PANELS

    assert {view: entry.panel.title for view, entry in PANELS.items()} == TITLES


def test_report_analysis_tables_hold_the_engines_numbers(drawn_report, report_engine):
    from accelscope.engine.studies.regimes import regime_scores, regimes_table

    # A report the module draws anyway (its scenario offloads nothing, as the check below needs).
    preset, folder, _ = drawn_report(next(f for f in BUNDLED if preset_name(f) == REGIMES_PRESET))
    assert preset.workspace.scenario.offload == 0.0
    comments, rows = read_csv(folder / "regimes.csv")
    assert any("model:" in line for line in comments)
    expected = regimes_table(regime_scores(report_engine))
    # Same cells, whatever the row order the tab uses (the paper's accelerators first).
    assert sorted(tuple(row.values()) for row in rows) == sorted(tuple(str(v) for v in r) for r in expected.rows)
    assert len(rows) == len(report_engine.catalog.accelerators)
    _, tiers = read_csv(folder / "memory_tiers.csv")
    assert {"share_offloaded [%]", "weights_offloaded: itl [ms]", "kv_offloaded: itl [ms]"} <= set(tiers[0])
    nothing_offloaded = next(row for row in tiers if float(row["share_offloaded [%]"]) == 0.0)
    expected_itl = report_engine.predict(preset.workspace.scenario).itl_s * 1e3
    assert float(nothing_offloaded["weights_offloaded: itl [ms]"]) == pytest.approx(expected_itl, rel=1e-9)


def test_png_scale_sets_the_resolution(qtbot, tmp_path):
    from PySide6.QtGui import QImage

    from accelscope.gui.export.figure import Figure
    from accelscope.gui.export.files import render_png
    from accelscope.gui.look.style import configure_pyqtgraph
    from accelscope.gui.panels.memory import MemoryPanel

    configure_pyqtgraph()
    panel = MemoryPanel(Engine().catalog)
    qtbot.addWidget(panel)
    panel.resize(700, 500)
    figure = Figure(panel, "a scenario")
    one = QImage(str(render_png(figure, tmp_path / "one.png", 1.0)))
    three = QImage(str(render_png(figure, tmp_path / "three.png", 3.0)))
    assert (one.width(), one.height()) == (figure.width, figure.height)
    assert (three.width(), three.height()) == (3 * figure.width, 3 * figure.height)


def test_a_picture_that_cannot_be_written_names_the_file_and_the_reason(qtbot, tmp_path, monkeypatch):
    """A full disk is said as the file system says it (the PNG is encoded in memory first, so no
    encoder error speaks before), and the earlier picture stays whole."""
    import errno
    import os

    from accelscope.engine.catalog import writing
    from accelscope.engine.catalog.writing import OutputError
    from accelscope.gui.export.figure import Figure
    from accelscope.gui.export.files import render_png
    from accelscope.gui.look.style import configure_pyqtgraph
    from accelscope.gui.panels.memory import MemoryPanel

    configure_pyqtgraph()
    panel = MemoryPanel(Engine().catalog)
    qtbot.addWidget(panel)
    panel.resize(700, 500)
    figure = Figure(panel, "a scenario")
    earlier = render_png(figure, tmp_path / "plot.png", 1.0).read_bytes()

    def full(descriptor, data):
        os.write(descriptor, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writing, "_write_all", full)
    with pytest.raises(OutputError) as refused:
        render_png(figure, tmp_path / "plot.png", 2.0)
    assert str(refused.value) == f"cannot write {tmp_path / 'plot.png'}: No space left on device"
    assert (tmp_path / "plot.png").read_bytes() == earlier
    assert [path.name for path in tmp_path.iterdir()] == ["plot.png"]


def test_report_command_takes_a_theme(capsys, monkeypatch, tmp_path):
    from accelscope.gui.export import report

    themes = []

    def write_report(*args, theme_name="light", **kwargs):
        themes.append(theme_name)
        return []

    monkeypatch.setattr(report, "write_report", write_report)
    for extra, expected in (([], "light"), (["--theme", "dark"], "dark")):
        assert main(["report", "--preset", "teach-roofline-basics", "--out", str(tmp_path), *extra]) == 0
        assert themes[-1] == expected
    capsys.readouterr()
    assert main(["report", "--preset", "teach-roofline-basics", "--out", str(tmp_path), "--theme", "sepia"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sepia" in err


def test_phase_breakdown_adds_up_to_the_phase_time(report_engine):
    """The per-phase breakdown the CLI reports (ms): a stage pass is execution + communication +
    overhead, and the phase adds the serving stack's host time to its passes."""
    import math

    from accelscope.cli.serialize import result_to_dict
    from accelscope.engine.core.scenario import Scenario

    scenario = report_engine.resolve(Scenario("llama-3.3-70b", "h100-sxm", batch=16, tp=4))
    result = report_engine.predict(scenario)
    data = result_to_dict(result, report_engine.model(scenario.model),
                          report_engine.catalog.accelerator(scenario.accelerator), report_engine.constants)
    for name, phase, passes in (("decode", result.decode, 1),
                                ("prefill", result.prefill, math.ceil(16 * 1024 / 8192))):
        reported = data[name]
        stage = reported["stage_pass_ms"]
        assert reported["host_ms"] == pytest.approx(phase.host_time_s * 1e3, rel=1e-12)
        assert stage["execution"] == pytest.approx(phase.execution_time_s * 1e3, rel=1e-12)
        assert reported["host_ms"] > 0  # gpu-simt: 1 ms per forward step + 25 µs per sequence
        one_pass = stage["execution"] + stage["communication"] + stage["overhead"]
        assert passes * one_pass + reported["host_ms"] == pytest.approx(reported["time_ms"], rel=1e-12)
    assert data["assumptions"]["step_overhead_s"] == 1.0e-3
    assert data["assumptions"]["operator_overlap"] == 0.0


def test_without_qt_the_report_says_to_ask_for_the_tables_only(capsys, monkeypatch, tmp_path):
    from accelscope.gui.export import report

    def write_report(*args, **kwargs):
        raise ImportError("libEGL.so.1: cannot open shared object file: No such file or directory")

    monkeypatch.setattr(report, "write_report", write_report)
    assert main(["report", "--preset", "teach-roofline-basics", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "libEGL" in err and "--tables-only" in err
