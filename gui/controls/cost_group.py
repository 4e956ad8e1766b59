"""The Cost group of the Scenario controls: the selected accelerator's prices and the site's values.

Each field is empty while it takes the price book's value, which its placeholder shows; typing
a number sets the user's own (kept in the workspace, so presets and the session keep it), and
clearing it returns to the book. Hovering a field shows the book's price with its source, date
and grade, and the other prices found. A value the engine refuses is kept as typed, marked, and
the reason is shown under the group; nothing is changed until it is fixed.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from PySide6.QtCore import QObject, QSignalBlocker, Signal
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QLineEdit, QPushButton, QWidget

from accelscope.engine.catalog import Catalog
from accelscope.engine.core.cost import CostSettings
from accelscope.engine.core.errors import ScenarioError
from accelscope.engine.core.prices import Price
from accelscope.engine.core.workspace import Workspace

from .bindings import WorkspaceSource
from .labels import BuddyLabel

INVALID_STYLE = "QLineEdit { border: 2px solid #C62828; }"

# The site's values: (field, label, what it is, its unit as typed, the factor from typed to stored).
SITE_ROWS: tuple[tuple[str, str, str, str, float], ...] = (
    ("electricity_usd_per_kwh", "Electricity $/kWh", "Electricity price for owned devices", "US dollars per kWh", 1.0),
    ("pue", "PUE", "Power usage effectiveness: the site's facility power over its IT power (1 or more); owned "
                   "devices' energy is charged × PUE", "ratio", 1.0),
    ("amortisation_years", "Write-off years", "Years over which a purchase is written off", "years", 1.0),
    ("utilisation", "In use %", "Share of the year the system serves at the modelled rate: an owner's yearly "
                                "costs are spread over the hours it serves (a rental is paid only for those)",
     "% of the year", 100.0),
    ("hosting_usd_per_device_year", "Hosting $/yr", "Rack space, network and staff per device and year, for owned "
                                                     "devices", "US dollars per device-year", 1.0),
)
PRICE_ROWS: tuple[tuple[str, str, str, str], ...] = (
    ("rental_usd_per_hour", "Rent $/h", "Rental price per device-hour", "US dollars per device-hour"),
    ("purchase_usd", "Purchase $", "Purchase price per device", "US dollars per device"),
)


def price_tooltip(what: str, unit: str, price: Price | None, own: float | None, factor: float = 1.0) -> str:
    """What a field is, the price book's value with its source, date and grade (and the other
    prices found), and what leaving it empty means."""
    lines = [f"{what} ({unit})."]
    if own is not None:
        lines.append(f"Yours: {_number(own * factor)}. Clear the field to use the price book's.")
    if price is None:
        lines.append("The price book has none: no source was found. Type one to see this cost; until then it "
                     "is unknown, never 0.")
        return "\n".join(lines)
    book = f"Price book: {_number(price.value * factor)}"
    detail = ", ".join(part for part in (price.kind, price.provider, price.includes) if part)
    lines.append(f"{book}{' (' + detail + ')' if detail else ''}.")
    lines.append(f"Source: {price.source}; {price.date}; graded {price.grade}.")
    if price.note:
        lines.append(price.note)
    for other in price.alternatives:
        kind = f" {other.kind}" if other.kind else ""
        lines.append(f"Also found: {_number(other.value * factor)}{kind} ({other.citation}).")
    return "\n".join(lines)


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


class OptionalNumberBinding(QObject):
    """A line edit holding a number or nothing (the price book's value, shown as the
    placeholder). ``changed`` carries the stored value (typed ÷ ``factor``) or None, once the
    user finishes editing; text that is not a number is marked and not sent."""

    changed = Signal(object)
    problem = Signal(str)

    def __init__(self, edit: QLineEdit, name: str, factor: float = 1.0, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.edit, self.name, self.factor = edit, name, factor
        self._value: float | None = None
        edit.editingFinished.connect(self._finished)

    @property
    def value(self) -> float | None:
        return self._value

    def _finished(self) -> None:
        text = self.edit.text().strip().replace(",", "").removeprefix("$").removesuffix("%").strip()
        if not text:
            value = None
        else:
            try:
                value = float(text) / self.factor
            except ValueError:
                self.mark(f"{self.name}: '{self.edit.text()[:30]}' is not a number")
                return
        if value == self._value and self.valid:
            return
        self.changed.emit(value)

    @property
    def valid(self) -> bool:
        return not self.edit.styleSheet()

    def mark(self, message: str) -> None:
        """Keep the text as typed, mark the field and say why."""
        self.edit.setStyleSheet(INVALID_STYLE)
        self.problem.emit(message)

    def set_value(self, value: float | None) -> None:
        """Show ``value`` (None: empty, the placeholder shows the book's), clearing any mark."""
        self._value = value
        self.edit.setStyleSheet("")
        text = "" if value is None else _number(value * self.factor).replace(",", "")
        if self.edit.text() != text:
            with QSignalBlocker(self.edit):
                self.edit.setText(text)


class CostGroup(QGroupBox):
    """Prices of the selected accelerator and the site's values, bound to the workspace's cost
    settings through the controller."""

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__("Cost", parent)
        self.catalog = catalog
        form = QFormLayout(self)
        self.device_label = QLabel()
        self.device_label.setWordWrap(True)
        form.addRow(self.device_label)
        self.price_bindings: dict[str, OptionalNumberBinding] = {}
        self.site_bindings: dict[str, OptionalNumberBinding] = {}
        for field, label, _what, _unit in PRICE_ROWS:
            self.price_bindings[field] = self._row(form, label, 1.0)
        for field, label, _what, _unit, factor in SITE_ROWS:
            self.site_bindings[field] = self._row(form, label, factor)
        self.book_button = QPushButton("Use the price book")
        self.book_button.setToolTip("Clear every price and site value you set: the bundled price book's apply "
                                    "(and your own prices.toml in the data folder, if you keep one).")
        form.addRow(self.book_button)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet("QLabel { color: #C62828; }")
        self.message.hide()
        form.addRow(self.message)
        self._selected: str | None = None
        self._followed: tuple[str, CostSettings] | None = None  # (selected, settings) last shown

    def _row(self, form: QFormLayout, label: str, factor: float) -> OptionalNumberBinding:
        edit = QLineEdit()
        edit.setAccessibleName(label)
        edit.setClearButtonEnabled(True)
        binding = OptionalNumberBinding(edit, label, factor, parent=self)
        binding.problem.connect(self._show_problem)
        form.addRow(BuddyLabel(label, edit), edit)
        return binding

    # -- the controller ⇄ the fields ---------------------------------------------------------------

    def bind_to(self, controller: WorkspaceSource) -> None:
        """Show the workspace's cost settings, now and whenever it changes, and send the user's."""

        def apply(binding: OptionalNumberBinding, change: Callable[[CostSettings, float | None], CostSettings]):
            def changed(value: float | None) -> None:
                settings = change(controller.workspace.cost, value)
                try:
                    settings.validate()
                except ScenarioError as error:
                    binding.mark(self._message(str(error)))
                    return
                self._show_problem("")
                controller.set_workspace(controller.workspace.with_changes(cost=settings))
                binding.set_value(value)  # clears the mark even when the settings did not change

            binding.changed.connect(changed)

        for field, binding in self.price_bindings.items():
            apply(binding, lambda settings, value, field=field: settings.with_price(self._selected or "",
                                                                                   **{field: value}))
        for field, binding in self.site_bindings.items():
            apply(binding, lambda settings, value, field=field: settings.with_site(**{field: value}))
        def use_the_book() -> None:
            controller.set_workspace(controller.workspace.with_changes(cost=CostSettings()))
            for binding in (*self.price_bindings.values(), *self.site_bindings.values()):
                binding.set_value(None)  # clears what was typed and refused, too
            self._show_problem("")

        self.book_button.clicked.connect(use_the_book)
        controller.workspace_changed.connect(self.follow)
        self.follow(controller.workspace)

    def follow(self, workspace: Workspace) -> None:
        """Show ``workspace``'s settings, and the selected accelerator's prices beside the book's."""
        settings, book = workspace.cost, self.catalog.prices
        selected = workspace.selected
        if (selected, settings) == self._followed:
            return  # most changes (a slider drag) leave the prices alone
        self._followed = (selected, settings)
        if selected != self._selected:
            self._selected = selected
            accelerator = self.catalog.accelerators.get(selected)
            self.device_label.setText(f"Prices of <b>{accelerator.name if accelerator else selected}</b> "
                                      "(select another to price it):")
        own = settings.price(selected)
        prices = book.of(selected)
        for field, _label, what, unit in PRICE_ROWS:
            binding = self.price_bindings[field]
            price = prices.rental if field == "rental_usd_per_hour" else prices.purchase
            value = getattr(own, field)
            binding.set_value(value)
            binding.edit.setPlaceholderText(f"{_number(price.value)} (book)" if price else "unknown: type one")
            binding.edit.setToolTip(price_tooltip(what, unit, price, value))
        for field, _label, what, unit, factor in SITE_ROWS:
            binding = self.site_bindings[field]
            price = getattr(book.site, field)
            value = getattr(settings, field)
            binding.set_value(value)
            binding.edit.setPlaceholderText(f"{_number(price.value * factor)} (book)")
            binding.edit.setToolTip(price_tooltip(what, unit, price, value, factor))
        if all(binding.valid for binding in (*self.price_bindings.values(), *self.site_bindings.values())):
            self._show_problem("")

    # -- messages --------------------------------------------------------------------------------

    def _message(self, error: str) -> str:
        """The engine's refusal in the words of the group: the field's label, not its name."""
        field, _, problem = error.partition(" ")
        labels = {name: label for name, label, *_ in SITE_ROWS}
        labels |= {f"prices.{self._selected}.{name}": label for name, label, *_ in PRICE_ROWS}
        if field == "utilisation":
            problem = problem.replace("above 0 and at most 1", "above 0 and at most 100")
            problem = _percent_of_value(problem)
        return f"{labels.get(field, field)} {problem}"

    def _show_problem(self, message: str) -> None:
        self.message.setText(message)
        self.message.setVisible(bool(message))


def _percent_of_value(problem: str) -> str:
    """'..., got 1.5' (a fraction) as '..., got 150' (the percent typed)."""
    head, _, value = problem.rpartition("got ")
    try:
        number = float(value)
    except ValueError:
        return problem
    return f"{head}got {number * 100:g}" if math.isfinite(number) else problem
