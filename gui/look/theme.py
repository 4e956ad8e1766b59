"""The colours of the plot canvases, light or dark.

Every panel was designed on a white canvas, and its colours are written as they look there.
A :class:`PlotTheme` maps such a colour to the one that plays the same part on its own canvas:

- greys (black text and outlines, grey notes, white backings) keep their place on the scale
  from the canvas to the text colour, so black text becomes the theme's text colour, a white
  backing becomes the canvas, and a mid grey stays between them;
- pale tints used as bands and backings (a selection band, the low end of a heat ramp) keep their
  hue and move to the dark end the same way;
- any other colour (accelerators, strategies, data series) keeps its hue and saturation and is
  lightened only as far as it needs to stand out from the canvas: a contrast of at least 3:1,
  the WCAG threshold for graphical objects (so black SN40L lines become near-white and indigo
  H200 lines a lighter indigo on a dark canvas).

The light theme changes nothing. The current theme is read when a panel is built: the window
builds its panels anew when the theme changes (a panel makes its pens once, for speed).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import pyqtgraph as pg
from PySide6.QtGui import QColor

GRAPHIC_CONTRAST = 3.0  # WCAG 2.x, non-text contrast (1.4.11): lines, markers, bars
TEXT_CONTRAST = 4.5  # WCAG 2.x, normal text (1.4.3)
GREY_SATURATION = 0.15  # below this HSL saturation a colour is treated as a grey
PALE_LIGHTNESS = 0.85  # above this HSL lightness a tint is a band or backing, not a data colour


def relative_luminance(colour: QColor) -> float:
    """WCAG 2.x relative luminance of an sRGB colour (alpha ignored)."""

    def linear(channel: float) -> float:
        return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(colour.redF()) + 0.7152 * linear(colour.greenF()) + 0.0722 * linear(colour.blueF())


def contrast_ratio(first: QColor, second: QColor) -> float:
    """WCAG 2.x contrast ratio, 1 (none) to 21 (black on white)."""
    lighter, darker = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


@dataclass(frozen=True)
class PlotTheme:
    name: str
    background: str  # the canvas
    foreground: str  # axes, ticks and text

    @property
    def dark(self) -> bool:
        return QColor(self.background).lightnessF() < 0.5

    def colour(self, colour: object) -> QColor:
        """The colour that does on this canvas what ``colour`` (anything pyqtgraph takes as a
        colour: "k", "#RRGGBB", a QColor, an (r, g, b[, a]) tuple) does on white."""
        return QColor(_mapped(self, _key(colour), GRAPHIC_CONTRAST))

    def text_colour(self, colour: object) -> QColor:
        """As :meth:`colour`, for text: a coloured text is lightened to 4.5:1 against the canvas."""
        return QColor(_mapped(self, _key(colour), TEXT_CONTRAST))

    def hex(self, colour: object) -> str:
        """:meth:`colour` as #RRGGBB, for rich text."""
        return self.colour(colour).name()

    def pen(self, colour: object, **options) -> pg.QtGui.QPen:
        return pg.mkPen(self.colour(colour), **options)

    def brush(self, colour: object) -> pg.QtGui.QBrush:
        return pg.mkBrush(self.colour(colour))


def _key(colour: object) -> tuple[int, int, int, int]:
    """A hashable form of a colour (pyqtgraph's spellings and QColor alike)."""
    if isinstance(colour, str):
        return _named_key(colour)
    if isinstance(colour, list):
        colour = tuple(colour)
    qcolour = pg.mkColor(colour)
    return qcolour.red(), qcolour.green(), qcolour.blue(), qcolour.alpha()


@lru_cache(maxsize=1024)
def _named_key(name: str) -> tuple[int, int, int, int]:
    """:func:`_key` of a colour by name ("k", "#RRGGBB"), worked out once a name: pyqtgraph
    parses it anew at every call (~5 us), and a bar tab colours forty rows' texts a change."""
    qcolour = pg.mkColor(name)
    return qcolour.red(), qcolour.green(), qcolour.blue(), qcolour.alpha()


@lru_cache(maxsize=4096)
def _mapped(theme: PlotTheme, rgba: tuple[int, int, int, int], minimum_contrast: float) -> QColor:
    original = QColor(*rgba)
    if not theme.dark:
        return original.toRgb()
    background, foreground = QColor(theme.background), QColor(theme.foreground)
    hue, saturation, lightness, alpha = original.getHslF()
    hue = max(hue, 0.0)  # -1 for a grey
    pale = lightness > PALE_LIGHTNESS
    if saturation < GREY_SATURATION or pale:
        # Keep its place between the text colour (black on white) and the canvas (white).
        lightness = foreground.lightnessF() + (background.lightnessF() - foreground.lightnessF()) * lightness
    greyish = saturation < GREY_SATURATION or pale
    mapped = QColor.fromHslF(hue, saturation, lightness, alpha) if greyish else original
    if pale or contrast_ratio(mapped, background) >= minimum_contrast:
        return mapped.toRgb()  # a band or backing may be faint; anything else must stand out
    low, high = lightness, 1.0  # lighten until it stands out from the canvas
    for _ in range(24):
        middle = (low + high) / 2
        if contrast_ratio(QColor.fromHslF(hue, saturation, middle, alpha), background) >= minimum_contrast:
            high = middle
        else:
            low = middle
    return QColor.fromHslF(hue, saturation, high, alpha).toRgb()


LIGHT = PlotTheme("light", background="#FFFFFF", foreground="#000000")
DARK = PlotTheme("dark", background="#1E1E1E", foreground="#E8E8E8")
# Presentation mode: the most contrast a projector can give.
LIGHT_PRESENTATION = LIGHT
DARK_PRESENTATION = PlotTheme("dark-presentation", background="#000000", foreground="#FFFFFF")

_current = LIGHT


def current() -> PlotTheme:
    """The theme panels are built in."""
    return _current


def set_current(theme: PlotTheme) -> None:
    global _current
    _current = theme
    pg.setConfigOptions(background=theme.background, foreground=theme.foreground)


def for_display(name: str, presentation: bool) -> PlotTheme:
    """The plot theme for the window's theme ("light" or "dark") and presentation mode."""
    if name == "dark":
        return DARK_PRESENTATION if presentation else DARK
    return LIGHT_PRESENTATION if presentation else LIGHT
