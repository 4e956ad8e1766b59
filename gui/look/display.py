"""How the window looks: presentation mode and the light or dark theme.

Presentation mode is for the back of a lecture room: every plot is drawn at a larger scale
(fonts, lines and markers together, by zooming each plot's view, so no panel has to know about
it), the window's text is larger, and colours are at their highest contrast (black on white, or
white on black in the dark theme). Where the docks go meanwhile is the window's business
(gui/windows/arrangement.py).
The dark theme darkens the window and the plot canvases alike; the plots' colours for each
theme come from :mod:`gui.theme`, and the window builds its tabs anew in them (see
``MainWindow._apply_plot_theme``). Exports draw what the window shows.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QObject, QRectF
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication, QComboBox, QStyleFactory, QWidget

from . import theme as plot_themes

PRESENTATION_PLOT_ZOOM = 1.5  # plot fonts 11 pt -> ~16 pt, lines 2 px -> 3 px (on a reference screen)
PRESENTATION_FONT_SCALE = 1.4  # the window's own text (on a reference screen)
# What reads from the back of a room is letters a large enough share of the projected picture's
# height, whatever its pixels. The scales above are for a screen this tall (plot text ~2.2 % of
# its height); a 768 px projector gives the same share at 1.15×, and it is room it lacks.
REFERENCE_SCREEN_HEIGHT_PX = 1000
THEMES: tuple[str, ...] = ("light", "dark")


def presentation_scale(full: float, screen_height_px: int) -> float:
    """The scale giving text the share of a ``screen_height_px`` tall picture that ``full`` gives
    on the reference screen: never below 1 (presentation never shrinks) nor above ``full``."""
    return max(1.0, min(full, full * screen_height_px / REFERENCE_SCREEN_HEIGHT_PX))


class _PlotZoom(QObject):
    """Keeps a pyqtgraph view's scene ``zoom`` times smaller than the widget, so it is drawn
    ``zoom`` times larger, through every resize."""

    def __init__(self, zoom: float) -> None:
        super().__init__()
        self.zoom = zoom

    def eventFilter(self, view: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and isinstance(view, pg.GraphicsView):
            size = event.size()
            # Set before the view's own resizeEvent, which fits this range into the new size.
            view.range = QRectF(0, 0, size.width() / self.zoom, size.height() / self.zoom)
        return False


class Display:
    """Applies presentation mode and the theme to one main window (and puts them back)."""

    def __init__(self, window: QWidget) -> None:
        self.window = window
        self.presentation = False
        self.theme = "light"
        # Presentation's scales for the screen the window is on, set as it starts.
        self.plot_zoom = PRESENTATION_PLOT_ZOOM
        self.font_scale = PRESENTATION_FONT_SCALE
        self._zoom = _PlotZoom(PRESENTATION_PLOT_ZOOM)
        app = QApplication.instance()
        self._base_font = QFont(app.font())
        self._base_palette = QPalette(app.palette())
        self._base_style = app.style().name()

    def page_font(self) -> QFont:
        """The application's font without presentation mode's enlargement (for exported pages)."""
        return QFont(self._base_font)

    def page_palette(self) -> QPalette:
        """The application's light palette, whatever the window's theme (for exported pages),
        every colour set explicitly: a widget's palette otherwise takes the application's
        (the dark theme's) for the roles it does not set."""
        palette = QPalette()
        for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive, QPalette.ColorGroup.Disabled):
            for role in QPalette.ColorRole:
                if role not in (QPalette.ColorRole.NColorRoles, QPalette.ColorRole.NoRole):
                    palette.setColor(group, role, self._base_palette.color(group, role))
        return palette

    # -- presentation mode -------------------------------------------------------------------

    def set_presentation(self, on: bool) -> None:
        """Presentation's type, plots and colours on or off; the window's widgets have their new
        fonts when this returns (so their new sizes can be asked for at once)."""
        if on == self.presentation:
            return
        self.presentation = on
        app = QApplication.instance()
        if on:
            screen_height = (self.window.screen() or app.primaryScreen()).geometry().height()
            self.plot_zoom = presentation_scale(PRESENTATION_PLOT_ZOOM, screen_height)
            self.font_scale = presentation_scale(PRESENTATION_FONT_SCALE, screen_height)
            self._zoom.zoom = self.plot_zoom
        font = QFont(self._base_font)
        if on:
            font.setPointSizeF(self._base_font.pointSizeF() * self.font_scale)
        app.setFont(font)
        # Qt posts the font change to each widget; deliver it now.
        QCoreApplication.sendPostedEvents(None, QEvent.Type.ApplicationFontChange.value)
        for combo in self.window.findChildren(QComboBox):
            # A combo box keeps the least size it first worked out through font changes (it would
            # keep presentation's width after it); a style change makes it work it out again.
            QCoreApplication.sendEvent(combo, QEvent(QEvent.Type.StyleChange))
        for widget in self.window.findChildren(QWidget):
            # Widgets given a font of their own (the explain text, plot notes) scale with it.
            if widget.testAttribute(_OWN_FONT) and not isinstance(widget, pg.GraphicsView):
                own = widget.font()
                factor = self.font_scale if on else 1 / self.font_scale
                own.setPointSizeF(max(own.pointSizeF() * factor, 1.0))
                widget.setFont(own)
        self.zoom_plots()
        self._apply_palette()

    def zoom_plots(self) -> None:
        """Zoom every plot of the window (call again after adding a panel)."""
        for view in self.window.findChildren(pg.GraphicsView):
            view.removeEventFilter(self._zoom)
            width, height = view.width(), view.height()
            if self.presentation:
                view.installEventFilter(self._zoom)
                zoom = self.plot_zoom
                pg.GraphicsView.setRange(view, QRectF(0, 0, width / zoom, height / zoom), padding=0,
                                         disableAutoPixel=True)
            else:
                view.autoPixelRange = True
                pg.GraphicsView.setRange(view, QRectF(0, 0, width, height), padding=0, disableAutoPixel=False)
                view.updateMatrix()

    # -- theme ----------------------------------------------------------------------------------

    def plot_theme(self) -> plot_themes.PlotTheme:
        """The plots' colours for the theme and presentation mode (see gui.theme)."""
        return plot_themes.for_display(self.theme, self.presentation)

    def set_theme(self, theme: str) -> None:
        if theme not in THEMES:
            raise ValueError(f"theme must be one of {', '.join(THEMES)}, got {theme!r}")
        self.theme = theme
        self._apply_palette()

    def _apply_palette(self) -> None:
        app = QApplication.instance()
        if self.theme == "dark":
            app.setStyle(QStyleFactory.create("Fusion"))
            app.setPalette(dark_palette(high_contrast=self.presentation))
        else:
            app.setStyle(QStyleFactory.create(self._base_style) or QStyleFactory.create("Fusion"))
            app.setPalette(light_palette() if self.presentation else self._base_palette)


_OWN_FONT = pg.QtCore.Qt.WidgetAttribute.WA_SetFont


def light_palette() -> QPalette:
    """Pure black on white: the most contrast a projector can give."""
    palette = QPalette()
    for role, colour in (
        (QPalette.ColorRole.Window, "#FFFFFF"), (QPalette.ColorRole.WindowText, "#000000"),
        (QPalette.ColorRole.Base, "#FFFFFF"), (QPalette.ColorRole.AlternateBase, "#F0F0F0"),
        (QPalette.ColorRole.Text, "#000000"), (QPalette.ColorRole.Button, "#F0F0F0"),
        (QPalette.ColorRole.ButtonText, "#000000"), (QPalette.ColorRole.Highlight, "#0046AD"),
        (QPalette.ColorRole.HighlightedText, "#FFFFFF"), (QPalette.ColorRole.ToolTipBase, "#FFFFFF"),
        (QPalette.ColorRole.ToolTipText, "#000000"),
    ):
        palette.setColor(role, QColor(colour))
    return palette


def dark_palette(*, high_contrast: bool = False) -> QPalette:
    window, text = ("#000000", "#FFFFFF") if high_contrast else ("#2B2B2B", "#E8E8E8")
    palette = QPalette()
    for role, colour in (
        (QPalette.ColorRole.Window, window), (QPalette.ColorRole.WindowText, text),
        (QPalette.ColorRole.Base, "#1E1E1E" if not high_contrast else "#000000"),
        (QPalette.ColorRole.AlternateBase, "#333333"), (QPalette.ColorRole.Text, text),
        (QPalette.ColorRole.Button, "#3A3A3A"), (QPalette.ColorRole.ButtonText, text),
        (QPalette.ColorRole.BrightText, "#FF6B6B"), (QPalette.ColorRole.Highlight, "#4C8DFF"),
        (QPalette.ColorRole.HighlightedText, "#000000"), (QPalette.ColorRole.ToolTipBase, "#FFFFE0"),
        (QPalette.ColorRole.ToolTipText, "#000000"), (QPalette.ColorRole.PlaceholderText, "#9A9A9A"),
        (QPalette.ColorRole.Link, "#7FB2FF"),
    ):
        palette.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#7A7A7A"))
    return palette
