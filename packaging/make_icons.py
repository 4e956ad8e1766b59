"""Render resources/icons/accelscope.svg into the PNG sizes desktops ask for.

    .venv/bin/python packaging/make_icons.py

Qt's SVG renderer draws the PNGs, so they can be regenerated after an edit to the SVG without
any other tool.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
SOURCE = ICONS / "accelscope.svg"
SIZES_PX = (48, 128, 256)  # freedesktop hicolor sizes: menus and panels, launchers, large views


def png_path(size_px: int) -> Path:
    return ICONS / f"accelscope-{size_px}.png"


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841  (Qt needs one for fonts)
    renderer = QSvgRenderer(str(SOURCE))
    if not renderer.isValid():
        print(f"make_icons: {SOURCE} is not a valid SVG", file=sys.stderr)
        return 1
    for size_px in SIZES_PX:
        image = QImage(size_px, size_px, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        if not image.save(str(png_path(size_px)), "PNG"):
            print(f"make_icons: could not write {png_path(size_px)}", file=sys.stderr)
            return 1
        print(png_path(size_px))
    return 0


if __name__ == "__main__":
    sys.exit(main())
