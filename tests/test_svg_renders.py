"""An exported SVG draws what the PNG of the same figure shows, in Qt's own SVG renderer and in
librsvg (``rsvg-convert``: what Inkscape, GNOME and most Linux viewers use).

Each rendering and the PNG are cut into 8 × 8-pixel cells; a cell is "ink" where any pixel
differs clearly from the page's background. The two masks must agree on nearly every inked
cell: fonts are rasterised a little differently by each renderer, but axes drawn at another
scale than the data, lines running past the plot's frame or strokes drawn as blobs (what Qt's
SVG gave before it was flattened, see gui/export/svg_flat.py) change a fifth of the cells or more
(0.19 for Qt's renderer, 0.70 for librsvg, against 0.01 to 0.02 now).

A person looking at the files should see the same roofline three times: the axes' frame holding
the lines, the dashed lines cut at the frame, thin lines, and the legend at the right.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from accelscope.engine.catalog.presets import find_preset
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.frame import compute_frame

CELL = 8
# Share of the inked cells (of either image) allowed to differ: a renderer's own text rasterising.
TOLERANCE = 0.05


@pytest.fixture(scope="module")
def roofline(qapp):
    """A roofline figure of a bundled preset (three accelerators, dashed far-memory ceilings that
    leave the frame), its PNG and its SVG."""
    from PySide6.QtCore import Qt

    from accelscope.gui.export.figure import Figure
    from accelscope.gui.export.files import png_bytes, svg_bytes
    from accelscope.gui.look.style import configure_pyqtgraph
    from accelscope.gui.panels import PANELS

    configure_pyqtgraph()
    engine = Engine()
    preset = find_preset("teach-roofline-basics", engine.catalog)
    workspace = preset.workspace.with_changes(scenario=engine.resolve(preset.workspace.scenario))
    frame = compute_frame(engine, workspace)
    panel = PANELS["roofline"].make(engine.catalog, engine)
    panel.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
    panel.resize(1400, 900)
    panel.show()
    panel.update_frame(frame)
    panel.set_selected(workspace.selected)
    for _ in range(3):
        qapp.processEvents()
    figure = Figure(panel, "a scenario")
    yield figure, png_bytes(figure, 1.0), svg_bytes(figure)
    panel.close()
    panel.deleteLater()


def ink_cells(image, background) -> np.ndarray:
    """Which CELL × CELL cells of ``image`` hold a pixel far from ``background`` (faint grid
    lines, whose shade each renderer anti-aliases its own way, are not ink)."""
    from PySide6.QtGui import QColor, QImage

    image = image.convertToFormat(QImage.Format.Format_RGB32)
    height, width = image.height(), image.width()
    pixels = np.frombuffer(image.constBits(), np.uint8).reshape(height, image.bytesPerLine() // 4, 4)[:, :width, :3]
    back = QColor(background)
    distance = np.abs(pixels.astype(np.int16) - np.array([back.blue(), back.green(), back.red()])).sum(axis=2)
    ink = distance > 160
    rows, columns = -(-height // CELL), -(-width // CELL)
    padded = np.zeros((rows * CELL, columns * CELL), bool)
    padded[:height, :width] = ink
    return padded.reshape(rows, CELL, columns, CELL).any(axis=(1, 3))


def _unmatched(cells: np.ndarray, other: np.ndarray) -> int:
    """Cells of ``cells`` with no ink of ``other`` in or beside them (a pixel's shift is no change)."""
    near = np.zeros((other.shape[0] + 2, other.shape[1] + 2), bool)
    for dy in range(3):
        for dx in range(3):
            near[dy:dy + other.shape[0], dx:dx + other.shape[1]] |= other
    return int((cells & ~near[1:-1, 1:-1]).sum())


def differing_share(png, rendered, background) -> float:
    expected, got = ink_cells(png, background), ink_cells(rendered, background)
    return (_unmatched(expected, got) + _unmatched(got, expected)) / max(1, int((expected | got).sum()))


def qt_rendering(svg: bytes, width: int, height: int):
    from PySide6.QtCore import QByteArray
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(QByteArray(svg))
    assert renderer.isValid()
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(0xFFFFFF)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    return image


def test_the_svg_has_one_coordinate_system(roofline):
    """No scaling transform is left: the data, the axes and the marks are in the figure's pixels."""
    import re

    _, _, svg = roofline
    scales = {match for match in re.findall(rb'transform="matrix\(([^,]+),[^,]+,[^,]+,([^,]+),', svg)}
    assert scales <= {(b"1", b"1"), (b"0", b"0")}, scales  # translations and quarter turns only
    assert b"vector-effect" not in svg or b"matrix(1" in svg


def test_qt_renders_the_svg_as_the_png(roofline):
    from PySide6.QtGui import QImage

    figure, png, svg = roofline
    expected = QImage.fromData(png)
    rendered = qt_rendering(svg, expected.width(), expected.height())
    assert differing_share(expected, rendered, figure.background) < TOLERANCE


@pytest.mark.skipif(shutil.which("rsvg-convert") is None,
                    reason="rsvg-convert (Debian package librsvg2-bin) is not installed")
def test_librsvg_renders_the_svg_as_the_png(roofline, tmp_path):
    from PySide6.QtGui import QImage

    figure, png, svg = roofline
    expected = QImage.fromData(png)
    (tmp_path / "figure.svg").write_bytes(svg)
    subprocess.run(["rsvg-convert", "--width", str(expected.width()), "--height", str(expected.height()),
                    "--background-color", "white", "-o", str(tmp_path / "rsvg.png"), str(tmp_path / "figure.svg")],
                   check=True, capture_output=True, timeout=60)
    rendered = QImage(str(tmp_path / "rsvg.png"))
    assert differing_share(expected, rendered, figure.background) < TOLERANCE


def test_flattening_bakes_transforms_and_cuts_data_at_the_plot():
    """The flattener alone: a data group's scaling transform goes into its coordinates (its
    non-scaling stroke stays as wide), its lines are cut at the plot's rectangle, a filled
    shape is clipped as a polygon, and a text keeps its translation."""
    from accelscope.gui.export.svg_flat import flatten_svg

    data = (b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 100">'
            b'<g fill="none" stroke="#000" stroke-width="2" transform="matrix(10,0,0,-10,50,90)">'
            b'<polyline vector-effect="non-scaling-stroke" points="0,0 20,0"/>'
            b'<path vector-effect="non-scaling-stroke" d="M0,0 L0,20 Z"/></g>'
            b'<g fill="#f00" stroke="none" transform="matrix(10,0,0,-10,50,90)">'
            b'<rect x="-1" y="-1" width="2" height="2"/></g>'
            b'<g transform="matrix(1,0,0,1,5,6)"><text x="0" y="0">label</text></g></svg>')
    area = ((10.0, 0.0, 0.0, -10.0, 50.0, 90.0), (40.0, 10.0, 150.0, 95.0))
    out = flatten_svg(data, [area]).decode()
    assert "matrix(10" not in out and 'stroke-width="2"' in out
    assert 'd="M50,90 L150,90"' in out  # the 0..20 line (50..250 px) cut at x = 150
    assert "M50,90 L50,10" in out  # the closing segment back from (0, 20) is kept, cut at y = 10
    assert 'd="M40,95 L60,95 L60,80 L40,80 Z"' in out  # the square (40..60, 80..100 px) cut at y = 95
    assert 'transform="matrix(1,0,0,1,5,6)"' in out  # texts keep their place
