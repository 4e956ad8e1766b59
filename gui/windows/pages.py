"""The tab widget of the main window, whose pages scroll rather than push the window wider.

A tab widget is as large as its largest page needs, and the window as large as its tabs and
docks need together: one page that needs 860 px made the window 1,336 px wide, wider than a
projector's screen. Here each page sits in a scroll area that asks for little (a plot shrinks
to fit; a page that cannot shrink further scrolls instead of being cut, or having its caption
drawn over its plot), so the window's minimum is what its parts need, added up.

The scroll areas are the tab widget's own business: ``widget``, ``currentWidget``,
``setCurrentWidget`` and ``indexOf`` speak of the pages themselves (the panels), as they do for
a plain QTabWidget.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QPoint, QSize, Qt
from PySide6.QtGui import QMoveEvent, QResizeEvent
from PySide6.QtWidgets import QFrame, QScrollArea, QTabWidget, QWidget

from ..plotkit.text import WrappedLabel

# The least a page area asks for: room for a small plot with its axes. A page that needs more
# scrolls; the window's minimum is this plus the docks.
PAGE_MIN_WIDTH_PX = 360
PAGE_MIN_HEIGHT_PX = 260
# A page's text is never wrapped narrower than this, however little of the page shows.
MIN_TEXT_WIDTH_PX = 200
NO_LIMIT_PX = 16_777_215  # Qt's QWIDGETSIZE_MAX: a widget's maximum width when none is set


class PageScroll(QScrollArea):
    """One page of :class:`PageTabs`: the page fills the area when there is room for it, and
    scrolls when there is not.

    QScrollArea's own resizing gives a page whose height depends on its width (wrapped notes
    and captions) its preferred height at least, so such a page scrolled wherever there was
    less room than a plot would like; here the page gets the least height its layout needs at
    that width (the notes' heights and the plots' minimum), and the plots take the rest."""

    def __init__(self, page: QWidget) -> None:
        super().__init__()
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(False)
        self.setWidget(page)
        self.setMinimumSize(PAGE_MIN_WIDTH_PX, PAGE_MIN_HEIGHT_PX)
        page.installEventFilter(self)

    def page(self) -> QWidget:
        return self.widget()

    def minimumSizeHint(self) -> QSize:
        return QSize(PAGE_MIN_WIDTH_PX, PAGE_MIN_HEIGHT_PX)

    def sizeHint(self) -> QSize:
        # As large as the page would like: the window's first size follows the pages, not the scroll area.
        return self.widget().sizeHint() if self.widget() is not None else super().sizeHint()

    def least_size(self, width: int) -> QSize:
        """The least size the page needs when it is ``width`` wide (wider, if it needs more)."""
        page = self.widget()
        minimum = page.minimumSize().expandedTo(page.minimumSizeHint())
        width = max(width, minimum.width())
        layout = page.layout()
        height = minimum.height()
        if layout is not None and layout.hasHeightForWidth():
            height = max(height, layout.minimumHeightForWidth(width))
        return QSize(width, height)

    def fit_page(self) -> None:
        """Size the page to the area, or to the least it needs where that is more (it then scrolls)."""
        page = self.widget()
        if page is None:
            return
        area = self.maximumViewportSize()  # the viewport's size without scroll bars
        bar_width = self.verticalScrollBar().sizeHint().width()
        bar_height = self.horizontalScrollBar().sizeHint().height()
        least = self.least_size(area.width())
        visible = area.width()
        if least.height() > area.height():  # a vertical scroll bar takes some of the width
            visible = area.width() - bar_width
            least = self.least_size(visible)
        if self._wrap_texts_at(visible if least.width() > visible else None):
            least = self.least_size(visible)  # narrower texts are taller...
            if least.height() > area.height() and visible == area.width():
                visible -= bar_width  # ...and may need the vertical scroll bar
                self._wrap_texts_at(visible)
                least = self.least_size(visible)
        room_height = area.height() - (bar_height if least.width() > area.width() else 0)
        size = QSize(least.width(), max(least.height(), room_height))
        if size != page.size():
            page.resize(size)

    def _wrap_texts_at(self, visible: int | None) -> bool:
        """Where the page is wider than the area (its plots need the width and scroll sideways),
        its wrapped texts end at the area's right edge (``visible``; None: the page fits, and
        they take its width): wrapped at the page's width, each line ran past the edge, to be
        scrolled to for every line read. Whether any text's width limit changed."""
        page = self.widget()
        changed = False
        for label in page.findChildren(WrappedLabel):
            limit = NO_LIMIT_PX
            if visible is not None:
                left = label.mapTo(page, QPoint(0, 0)).x() if label.width() > 0 else 0
                limit = max(MIN_TEXT_WIDTH_PX, visible - left)
            if label.maximumWidth() != limit:
                label.setMaximumWidth(limit)
                changed = True
        return changed

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_page()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # The page's layout asks for another size (its text grew, a note appeared): fit it again
        # before the layout lays the page out.
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.fit_page()
        return False


class PageTabs(QTabWidget):
    """A QTabWidget whose pages each sit in a :class:`PageScroll`."""

    def insertTab(self, index: int, page: QWidget, label: str) -> int:  # type: ignore[override]
        return super().insertTab(index, PageScroll(page), label)

    def addTab(self, page: QWidget, label: str) -> int:  # type: ignore[override]
        return super().addTab(PageScroll(page), label)

    def removeTab(self, index: int) -> None:
        """Remove the tab; its page is given back its own parent-less life (the caller deletes it)."""
        scroll = super().widget(index)
        super().removeTab(index)
        if isinstance(scroll, PageScroll):
            scroll.takeWidget()
            scroll.deleteLater()

    def scroll_area(self, index: int) -> PageScroll | None:
        scroll = super().widget(index)
        return scroll if isinstance(scroll, PageScroll) else None

    def widget(self, index: int) -> QWidget | None:  # type: ignore[override]
        scroll = super().widget(index)
        return scroll.page() if isinstance(scroll, PageScroll) else scroll

    def currentWidget(self) -> QWidget | None:  # type: ignore[override]
        return self.widget(self.currentIndex())

    def indexOf(self, page: QWidget) -> int:  # type: ignore[override]
        for index in range(self.count()):
            if self.widget(index) is page:
                return index
        return -1

    def setCurrentWidget(self, page: QWidget) -> None:  # type: ignore[override]
        index = self.indexOf(page)
        if index >= 0:
            self.setCurrentIndex(index)

    def hidden_page_out_of_size(self, skip: set[int] = frozenset()) -> int | None:
        """The index of a hidden page not laid out at the size the shown page has, if any.

        The tab widget's stacked layout sizes only the page it shows: a page never shown kept
        its first 640x480, and every hidden page the size it last had, so a hidden tab brought
        up to date or drawn ahead was drawn at that size, and laid out and drawn again when
        shown (the first switch to a tab, or the first after the window was resized, took
        ~22-45 ms where the next took ~4-7). ``skip``: indexes not to give.

        The page's own size and pending resize are looked at, not its widgets': handling the
        events that laying a page out posts, its scroll area sets its viewport's geometry
        again, at the same size, and Qt marks a hidden widget so set as pending a resize; every
        page laid out once was laid out again at every rest."""
        shown = super().currentWidget()
        if shown is None:
            return None
        for index in range(self.count()):
            scroll = super().widget(index)
            if index not in skip and scroll is not shown and (
                    scroll.geometry() != shown.geometry() or _resize_pending(scroll)):
                return index
        return None

    def lay_out_hidden_page(self, index: int) -> None:
        """Size the hidden page at ``index`` as the shown one and lay it out now, as showing it
        would (its layouts activated, its widgets told their new sizes), without showing it."""
        shown, scroll = super().currentWidget(), super().widget(index)
        if shown is None or scroll is None or scroll is shown:
            return
        if scroll.geometry() != shown.geometry():
            scroll.setGeometry(shown.geometry())
        lay_out_hidden(scroll)


def _resize_pending(widget: QWidget) -> bool:
    return widget.testAttribute(Qt.WidgetAttribute.WA_PendingResizeEvent)


def _shown_with(widget: QWidget):
    """``widget`` and the widgets showing it would show with it, parents before children: not
    a child hidden on purpose, nor a window of its own."""
    yield widget
    for child in widget.children():
        if (isinstance(child, QWidget) and not child.isWindow()
                and not (child.testAttribute(Qt.WidgetAttribute.WA_WState_ExplicitShowHide)
                         and child.testAttribute(Qt.WidgetAttribute.WA_WState_Hidden))):
            yield from _shown_with(child)


def lay_out_hidden(widget: QWidget) -> None:
    """What showing ``widget`` does to lay it out, done while it stays hidden: parents before
    their children, each widget's layout activated, then the move and resize Qt holds back
    from a hidden widget delivered (pyqtgraph's views fit their scenes in their resize event)."""
    for each in _shown_with(widget):
        layout = each.layout()
        if layout is not None:
            layout.activate()
        if each.testAttribute(Qt.WidgetAttribute.WA_PendingMoveEvent):
            each.setAttribute(Qt.WidgetAttribute.WA_PendingMoveEvent, False)
            QCoreApplication.sendEvent(each, QMoveEvent(each.pos(), QPoint()))
        if _resize_pending(each):
            each.setAttribute(Qt.WidgetAttribute.WA_PendingResizeEvent, False)
            QCoreApplication.sendEvent(each, QResizeEvent(each.size(), QSize()))
