"""The axes' lean layout of ticks and labels (``plotkit.axes.lean_draw_specs``) is held equal to
pyqtgraph's own (``AxisItem.generateDrawSpecs``, the reference it was written from), for every
kind of axis the plots use, each orientation, with and without a grid, over many ranges and
sizes: the same tick lines with the same pens, the same axis line, and the same labels in the
same boxes."""

from __future__ import annotations

import random

import pytest

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def point(p) -> tuple[float, float]:
    return (p.x(), p.y())


def pen_key(pen) -> tuple:
    return (pen.color().rgba(), pen.widthF(), pen.style(), pen.isCosmetic())


def flatten(specs) -> tuple:
    axis_spec, tick_specs, text_specs = specs
    return ((pen_key(axis_spec[0]), point(axis_spec[1]), point(axis_spec[2])),
            [(pen_key(pen), point(a), point(b)) for pen, a, b in tick_specs],
            [(rect.getRect(), int(flags), text) for rect, flags, text in text_specs])


def both_specs(axis, opaque=None):
    """(lean layout, pyqtgraph's) of ``axis``; ``opaque``: the grid's pen maker (the axis' own
    by default; a row axis has no grid)."""
    from PySide6.QtGui import QPainter, QPicture

    from accelscope.gui.plotkit.axes import _MeasuringPainter, lean_draw_specs

    results = []
    opaque = axis._opaque if opaque is None else opaque
    for layout in (lambda painter: lean_draw_specs(axis, _MeasuringPainter(painter, {}), opaque),
                   axis.reference_draw_specs):
        picture = QPicture()
        painter = QPainter(picture)
        try:
            painter.setFont(axis.style["tickFont"])
            results.append(layout(painter))
        finally:
            painter.end()
    return results


def axis_kinds():
    from accelscope.gui.plotkit.axes import GridAxis, LogAxis, LogValueAxis

    return {
        "log values, bottom": lambda: {"bottom": LogValueAxis("bottom")},
        "log values, left": lambda: {"left": LogValueAxis("left")},
        "log plot": lambda: {"bottom": LogAxis("bottom"), "left": LogAxis("left")},
        "linear grid": lambda: {"bottom": GridAxis("bottom"), "left": GridAxis("left")},
    }


@pytest.mark.parametrize("kind", list(axis_kinds()))
@pytest.mark.parametrize("grid", [True, False], ids=["grid", "no grid"])
def test_the_lean_axis_layout_equals_pyqtgraphs(qtbot, kind, grid):
    import pyqtgraph as pg

    from accelscope.gui.look.style import configure_pyqtgraph, plot_font
    from accelscope.gui.plotkit.axes import lean_specs_apply

    configure_pyqtgraph()
    graphics = pg.GraphicsLayoutWidget()
    qtbot.addWidget(graphics)
    axes = axis_kinds()[kind]()
    plot = graphics.addPlot(axisItems=axes)
    if kind == "log plot":
        plot.setLogMode(True, True)
    plot.showGrid(x=grid, y=grid, alpha=0.25)
    for axis in axes.values():
        axis.setTickFont(plot_font())
    graphics.show()
    qtbot.waitExposed(graphics)
    rng = random.Random(7)
    compared = 0
    for _ in range(25):
        graphics.resize(rng.randint(160, 1200), rng.randint(140, 900))
        low = rng.uniform(-3, 5)
        plot.setRange(xRange=(low, low + rng.choice((0.05, 0.3, 1.0, 2.5, 7.0))),
                      yRange=(low / 2, low / 2 + rng.uniform(0.2, 9.0)), padding=0)
        qtbot.wait(5)
        for name, axis in axes.items():
            assert lean_specs_apply(axis)
            lean, reference = both_specs(axis)
            assert (lean is None) == (reference is None)
            if reference is not None:
                assert flatten(lean) == flatten(reference), (kind, name, axis.range)
                compared += 1
    assert compared == 25 * len(axes)


@pytest.mark.parametrize("orientation", ["left", "right"])
def test_the_lean_layout_of_row_labels_equals_pyqtgraphs(qtbot, orientation):
    """A row axis' ticks are set by hand (one per row, each with its label): the lean layout
    takes them as pyqtgraph does, over many row counts, labels, sizes and ranges."""
    import pyqtgraph as pg

    from accelscope.gui.look.style import configure_pyqtgraph
    from accelscope.gui.plotkit.axes import RowAxis, lean_specs_apply

    configure_pyqtgraph()
    graphics = pg.GraphicsLayoutWidget()
    qtbot.addWidget(graphics)
    axis = RowAxis(orientation)
    plot = graphics.addPlot(axisItems={orientation: axis})
    plot.showAxis(orientation)
    plot.invertY(True)
    graphics.show()
    qtbot.waitExposed(graphics)
    rng = random.Random(11)
    words = ["H100 SXM", "fits", "needs TP=2 or 2% of the KV cache", "runs in 4 waves", "Gaudi 3", "×408 k", ""]
    compared = 0
    for _ in range(20):
        rows = rng.randint(1, 40)
        axis.set_rows([rng.choice(words) or "TPU v5e" for _ in range(rows)],
                      notes=[rng.choice(words) for _ in range(rows)] if rng.random() < 0.5 else None,
                      max_width=rng.choice((None, 110.0)))
        graphics.resize(rng.randint(200, 1200), rng.randint(150, 1000))
        plot.setYRange(-0.5 - rng.uniform(0, 1), rows - 0.5 + rng.uniform(0, 1), padding=0)
        qtbot.wait(5)
        assert lean_specs_apply(axis)
        lean, reference = both_specs(axis, opaque=lambda pen: pen)
        assert (lean is None) == (reference is None)
        if reference is not None:
            assert flatten(lean) == flatten(reference), (rows, axis.range)
            assert reference[2]  # labels were laid out
            compared += 1
    assert compared >= 15
