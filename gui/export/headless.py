"""Running Qt without a window (the report, the benchmark)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

# Qt's offscreen platform says these on every show() or tooltip; headless they mean nothing.
OFFSCREEN_NOISE = (
    "This plugin does not support propagateSizeHints()",
    "This plugin does not support raise()",
)


def _print_unless_noise(mode, context, message: str) -> None:
    if message not in OFFSCREEN_NOISE:
        print(message, file=sys.stderr)


@contextmanager
def quiet_offscreen() -> Iterator[None]:
    """Pass Qt's messages to stderr, less the offscreen platform's noise."""
    from PySide6.QtCore import qInstallMessageHandler

    previous = qInstallMessageHandler(_print_unless_noise)
    try:
        yield
    finally:
        qInstallMessageHandler(previous)
