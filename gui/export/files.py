"""Export plots as PNG (at a chosen scale) and SVG, and their data as CSV, each with the
scenario beside it (a comment header in the CSV, a sidecar preset, a line beneath the title of
a picture), so that any exported plot can be traced back to its inputs.

A picture is the tab's :class:`~.figure.Figure` (its plots, legends, captions and scenario
line, without its controls), drawn through QPainter into a QImage for PNG or a QSvgGenerator
for SVG. Drawing it ourselves, rather than using pyqtgraph's SVGExporter, keeps the text beside
the plot and avoids that exporter's crash with recent PySide6 releases (pyqtgraph issue 3495).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QBuffer, QIODevice, QRect, QSize
from PySide6.QtGui import QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QApplication, QWidget

from accelscope.engine.catalog import Catalog
from accelscope.engine.catalog.presets import Preset, preset_text
from accelscope.engine.catalog.writing import OutputFolder, write_file_atomically
from accelscope.engine.core.table import Table
from accelscope.engine.physics.frame import Frame
from accelscope.engine.text.explain import Explanation
from accelscope.engine.text.tables import cost_comments, cost_tables, frame_tables, scenario_comments

from ..panels import PANELS
from ..panels.analysis import AnalysisPanel
from .figure import Figure, scenario_line
from .svg_flat import flatten_svg

PNG_SCALES: tuple[float, ...] = (1.0, 2.0, 3.0, 4.0)  # × the panel's size on screen
DEFAULT_EXPORT_SIZE = QSize(1400, 900)
# pyqtgraph's axes are recorded into a QPicture at the screen's 96 dpi; replayed on a device of
# another resolution (QSvgGenerator's default is 72) they are scaled by the ratio (0.75), while
# the data is not.
SCREEN_DPI = 96


@contextmanager
def _export_mode(canvases: list[QWidget]) -> Iterator[None]:
    """Tell pyqtgraph's items they are being exported, as its own exporters do: scatter
    markers are then drawn as paths instead of from a cached pixmap atlas, which would be
    blurred when scaled and come out broken in SVG."""
    items = [
        item
        for view in canvases
        if isinstance(view, pg.GraphicsView)
        for item in view.scene().items()
        if hasattr(item, "setExportMode")
    ]
    for item in items:
        item.setExportMode(True, {"antialias": True, "resolutionScale": 1.0})
    try:
        yield
    finally:
        for item in items:
            item.setExportMode(False)


def figure_of(panel: QWidget, frame: Frame, catalog: Catalog) -> Figure:
    """The tab as a figure, for ``frame``'s scenario."""
    return Figure(panel, scenario_line(panel, frame, catalog))


def png_bytes(figure: Figure, scale: float = 2.0) -> bytes:
    """The figure at ``scale`` times its size on screen (vector drawing is re-rasterised at that
    resolution, so lines and text stay sharp), encoded in memory: only the file system can then
    fail the write, and it says why (a full disk, a permission)."""
    image = QImage(round(figure.width * scale), round(figure.height * scale), QImage.Format.Format_ARGB32)
    image.setDevicePixelRatio(scale)
    image.fill(figure.background)  # the window's background, light or dark
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    with _export_mode(figure.canvases()):
        figure.paint(painter)
    painter.end()
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise OSError("the picture could not be encoded as PNG")
    return bytes(buffer.data())


def svg_bytes(figure: Figure) -> bytes:
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    # SVG Tiny 1.2, with no clip paths: Qt's renderer ignores them, and the generator's SVG 1.1
    # clips go stale (a plot's clip left on its legend and title); plots are clipped in the
    # drawing's geometry instead (see svg_flat).
    generator = QSvgGenerator()
    generator.setResolution(SCREEN_DPI)
    generator.setOutputDevice(buffer)
    generator.setSize(QSize(figure.width, figure.height))
    generator.setViewBox(QRect(0, 0, figure.width, figure.height))
    generator.setTitle(figure.title)
    generator.setDescription(f"Exported by accelscope: {figure.scenario}. The sidecar preset holds the scenario.")
    painter = QPainter(generator)
    with _export_mode(figure.canvases()):
        figure.paint(painter)
    if not painter.end():
        raise OSError("the drawing could not be made as SVG")
    return flatten_svg(bytes(buffer.data()), figure.plot_areas())


def render_png(figure: Figure, path: Path, scale: float = 2.0) -> Path:
    return write_file_atomically(path, png_bytes(figure, scale))


def render_svg(figure: Figure, path: Path) -> Path:
    return write_file_atomically(path, svg_bytes(figure))


# Where an export puts a file's bytes: a path the user chose, or a name in a report's folder.
Sink = Callable[[Path, bytes | str], Path]


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "plot"


def export_view(
    view: str,
    panel: QWidget,
    frame: Frame,
    catalog: Catalog,
    base: Path,
    *,
    formats: tuple[str, ...] = ("png", "svg", "csv"),
    scale: float = 2.0,
    preset: Preset | None = None,
    sink: Sink = write_file_atomically,
) -> list[Path]:
    """Write ``base``.png/.svg/.csv for one view (those in ``formats``) through ``sink``."""
    written: list[Path] = []
    title = getattr(panel, "title", view)
    if PANELS[view].analysis:
        bring_up_to_date(panel, frame)
    if "png" in formats or "svg" in formats:
        figure = figure_of(panel, frame, catalog)
    if "png" in formats:
        written.append(sink(base.with_suffix(".png"), png_bytes(figure, scale)))
    if "svg" in formats:
        written.append(sink(base.with_suffix(".svg"), svg_bytes(figure)))
    if "csv" in formats:
        tables = view_tables(view, panel, frame, catalog)
        comments = [f"{title}: the data behind the plot", *scenario_comments(frame, preset.name if preset else None)]
        for name, table in tables.items():
            # One table: the chosen name; several (an analysis tab): each table's own name beside it.
            path = base.with_suffix(".csv") if len(tables) == 1 else base.with_name(f"{base.name}-{name}.csv")
            written.append(sink(path, table.to_csv(comments)))
    return written


def bring_up_to_date(panel: AnalysisPanel, frame: Frame) -> None:
    """An analysis tab computes when shown and at rest; an export needs its study for ``frame`` now."""
    if panel.frame is not frame:
        panel.update_frame(frame)
    if panel.study is None or panel.study_frame is not frame or panel.pending():
        panel.refresh_now()
        # Let the new study's layout settle before it is drawn: an axis sized to its new row labels
        # posts a layout request, whose layout posts another; rendered at once, labels are cut.
        for _ in range(3):
            QApplication.processEvents()


def view_tables(view: str, panel: QWidget, frame: Frame, catalog: Catalog) -> dict[str, Table]:
    """The data behind a tab, by table name: a plot tab's table from the frame (the cost tables
    while the energy tab shows its cost page); an analysis tab's study tables, brought up to
    date with the frame first."""
    if getattr(panel, "page", None) == "cost":
        return cost_tables(frame)
    if not PANELS[view].analysis:
        return {view: frame_tables(frame, catalog)[view]}
    bring_up_to_date(panel, frame)
    if hasattr(panel, "tables"):
        return dict(panel.tables())
    table = panel.table()
    return {} if table is None else {table.view: table}


def export_all(
    panels: dict[str, QWidget],
    frame: Frame,
    catalog: Catalog,
    folder: str | Path,
    preset: Preset,
    explanation: Explanation | None,
    *,
    scale: float = 2.0,
    force: bool = False,
) -> list[Path]:
    """Every plot as PNG and SVG, every table as CSV, the explanation as text and the
    scenario as a sidecar preset, into the new or empty ``folder`` (or, with ``force``, over an
    earlier report's files there; see :class:`~accelscope.engine.catalog.writing.OutputFolder`).
    Panels must already show ``frame``."""
    with OutputFolder(folder, force=force) as out:

        def sink(path: Path, data: bytes | str) -> Path:
            return out.add(path.name, data)

        root = out.folder
        for index, (view, panel) in enumerate(panels.items(), start=1):
            extra_pages = getattr(panel, "extra_pages", ())  # the energy tab's cost page, the serving tab's run
            with _showing(panel, getattr(panel, "main_page", None)):
                if PANELS[view].analysis:
                    # The analysis tables go by their own names (regimes.csv, tp_dp.csv, ...).
                    export_view(view, panel, frame, catalog, root / f"{index}-{view}", formats=("png", "svg"),
                                scale=scale, preset=preset, sink=sink)
                    _analysis_csvs(view, panel, frame, catalog, root, preset, sink)
                else:
                    export_view(view, panel, frame, catalog, root / f"{index}-{view}", scale=scale, preset=preset,
                                sink=sink)
            for page in extra_pages:
                _export_page(panel, page, frame, catalog, root / f"{index}-{view}-{page}", scale, sink)
        for name, table in cost_tables(frame).items():  # cost.csv and cost_sweep.csv, beside the energy tab's
            out.add(f"{name}.csv", table.to_csv(cost_comments(frame, preset.name)))
        if explanation is not None:
            out.add("explain.txt", explanation.plain_text() + "\n")
        out.add("scenario.preset.json", preset_text(preset, root / "scenario.preset.json"))
        return out.commit()


@contextmanager
def _showing(panel, page: str | None) -> Iterator[None]:
    """The tab showing ``page`` (None: as it is), its layout settled as a shown tab's would be,
    and the page it showed restored after."""
    shown = getattr(panel, "page", None)
    if page is None or page == shown:
        yield
        return
    panel.show_page(page)
    for _ in range(3):
        QApplication.processEvents()
    try:
        yield
    finally:
        panel.show_page(shown)


def _export_page(panel, page: str, frame: Frame, catalog: Catalog, base: Path, scale: float, sink: Sink) -> None:
    """A tab's other page as PNG and SVG (its data is in the report's own CSVs)."""
    with _showing(panel, page):
        figure = figure_of(panel, frame, catalog)
        sink(base.with_suffix(".png"), png_bytes(figure, scale))
        sink(base.with_suffix(".svg"), svg_bytes(figure))


def _analysis_csvs(view: str, panel: AnalysisPanel, frame: Frame, catalog: Catalog, folder: Path,
                   preset: Preset, sink: Sink) -> None:
    comments = [f"{getattr(panel, 'title', view)}: the data behind the plot", *scenario_comments(frame, preset.name)]
    for name, table in view_tables(view, panel, frame, catalog).items():
        sink(folder / f"{name}.csv", table.to_csv(comments))


def write_sidecar(preset: Preset, exported: Path) -> Path:
    """``plot.png`` → ``plot.preset.json`` beside it."""
    path = exported.with_name(exported.stem + ".preset.json")
    return write_file_atomically(path, preset_text(preset, path))
