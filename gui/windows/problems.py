"""What could not be loaded (user catalog files, the last session): a banner above the plots,
and Help → Loading problems."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMessageBox, QPushButton, QWidget

from accelscope.engine.catalog import user_data_dir

SHOWN_PROBLEMS = 3  # in the banner; Help → Loading problems lists them all


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class ProblemBanner(QWidget):
    """A visible, dismissable notice above the plots (e.g. user catalog files that did not load)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("problem-banner")
        self.setStyleSheet("#problem-banner { background: #FFF3CD; border-bottom: 1px solid #E0C36A; }"
                           "#problem-banner QLabel { color: #5C4400; }")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QPushButton("Dismiss")
        close.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.addWidget(self.label, 1)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    def show_text(self, text: str) -> None:
        self.label.setText(text)
        self.show()

    def show_problems(self, problems: list[str]) -> None:
        """Say how many files did not load, and the first few reasons."""
        count = len(problems)
        shown = problems[:SHOWN_PROBLEMS] + (
            [f"… and {count - SHOWN_PROBLEMS} more (Help → Loading problems)"] if count > SHOWN_PROBLEMS else [])
        self.show_text(
            f"<b>{count} file{'s' if count != 1 else ''} could not be loaded; the rest loaded as usual.</b><br>"
            + "<br>".join(escape(problem) for problem in shown)
        )


def show_loading_problems(parent: QWidget, problems: list[str]) -> None:
    if problems:
        text = "\n\n".join(problems)
    else:
        text = f"Every catalog file loaded. Your own accelerators and models go in {user_data_dir()}."
    QMessageBox.information(parent, "Loading problems", text)
