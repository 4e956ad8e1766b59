"""The base of every plot panel: a view of the latest Frame that can select an accelerator."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from accelscope.engine.catalog import Catalog
from accelscope.engine.frame import Frame


class Panel(QWidget):
    """A tab of the main window.

    Subclasses create their plot items once and update them with ``setData`` in
    :meth:`update_frame`; they emit :attr:`accelerator_selected` when the user clicks an
    accelerator's bar or point, and highlight the selected one in :meth:`set_selected`.
    :meth:`plotted` returns what is currently drawn (read back from the plot items, in display
    units), so tests can compare it with the engine.
    """

    title: str = ""
    accelerator_selected = Signal(str)

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.catalog = catalog
        # Opaque: repainting the panel (every frame) then does not repaint the tab widget's
        # frame beneath it first.
        self.setAutoFillBackground(True)
        self.frame: Frame | None = None
        self.selected: str | None = None

    def update_frame(self, frame: Frame) -> None:
        raise NotImplementedError

    def set_selected(self, accelerator_id: str | None) -> None:
        self.selected = accelerator_id
        self._apply_selection()

    def _apply_selection(self) -> None:
        """Restyle the items for ``self.selected``; panels that highlight it override this."""

    def plotted(self) -> dict[str, np.ndarray]:
        raise NotImplementedError

    # -- rows: one per shown accelerator, in the frame's order ------------------------------

    def _rows(self) -> int:
        return len(self.frame.accelerators) if self.frame is not None else 0

    def _selected_row(self) -> int | None:
        if self.frame is None or self.selected not in self.frame.accelerators:
            return None
        return self.frame.index(self.selected)

    def _row(self, row: int) -> tuple[str, np.ndarray, str]:
        """(accelerator id, its column of kernel outputs, its display name) for a row."""
        accelerator_id = self.frame.accelerators[row]
        accelerator = self.catalog.accelerators.get(accelerator_id)
        name = accelerator.name if accelerator is not None else accelerator_id
        return accelerator_id, self.frame.current[:, row], name

    def _clicked(self, row: int) -> None:
        if self.frame is not None:
            self.accelerator_selected.emit(self.frame.accelerators[row])
